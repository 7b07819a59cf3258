//! Cursor, Windsurf, OpenCode and Cline: every fixture in tests/fixtures/hooks/<host>/ answered
//! exactly as its `.out` snapshot says (`CMDGUARD_BLESS=1 cargo test hook` to accept a change,
//! as in hook.rs), and read the way each host reads it: a harmless call gets no opinion; an
//! ask, a deny, an unreadable call and cmdguard's own failure all block in the host's form.

use serde_json::Value;

use crate::env::{TestEnv, code, stderr, stdout};
use crate::hook::{answer, fixtures};

const HOSTS: &[&str] = &["cursor", "windsurf", "opencode", "cline"];
const REQUIRED: &[&str] = &[
    "pass",
    "ask",
    "deny",
    "allowed",
    "not-json",
    "empty",
    "missing-command",
    "wrong-type",
    "config-error",
    "bad-cwd",
];

/// What the host does with an answer: `None` lets the call go on to the host's own checks,
/// `Some(reason)` stops it, with the reason the agent reads. Panics on an answer the host
/// would not read as one of the two.
fn verdict(host: &str, o: &std::process::Output) -> Option<String> {
    let (out, err, status) = (stdout(o), stderr(o), code(o));
    let json = || -> Value { serde_json::from_str(&out).unwrap_or_else(|e| panic!("{host}: not JSON ({e}): {out}")) };
    match host {
        // Windsurf blocks by exit status 2 alone and shows stderr.
        "windsurf" => match status {
            0 => {
                assert_eq!((out.as_str(), err.as_str()), ("", ""), "windsurf: a pass says nothing");
                None
            }
            2 => Some(err.trim_end().to_string()),
            other => panic!("windsurf: exit {other} neither passes nor blocks"),
        },
        "cursor" if out == "{}\n" => None,
        "cursor" => {
            let v = json();
            assert_eq!(v["permission"], "deny", "{out}");
            assert_eq!(v["user_message"], v["agent_message"]);
            Some(v["agent_message"].as_str().unwrap().to_string())
        }
        "opencode" if out.is_empty() => None,
        "opencode" => {
            let v = json();
            assert_eq!(v["decision"], "deny", "{out}");
            Some(v["reason"].as_str().unwrap().to_string())
        }
        "cline" => {
            let v = json();
            match v["cancel"].as_bool() {
                Some(false) => None,
                Some(true) => Some(v["errorMessage"].as_str().unwrap().to_string()),
                None => panic!("cline: no \"cancel\": {out}"),
            }
        }
        _ => unreachable!(),
    }
}

#[test]
fn new_hosts_answers_match_their_snapshots() {
    crate::hook::check_snapshots(HOSTS, REQUIRED, |_, _| false);
}

#[test]
fn new_hosts_let_harmless_calls_through_and_block_the_rest() {
    for host in HOSTS {
        for fixture in fixtures(host) {
            let case = fixture.file_stem().unwrap().to_str().unwrap().to_string();
            let (_, o) = answer(host, &fixture);
            let want_status = if *host == "windsurf" && verdict(host, &o).is_some() { 2 } else { 0 };
            assert_eq!(code(&o), want_status, "{host}/{case}: {}", stderr(&o));
            match (case.as_str(), verdict(host, &o)) {
                ("pass" | "allowed" | "other-tool", None) => {}
                ("pass" | "allowed" | "other-tool", Some(r)) => panic!("{host}/{case}: blocked: {r}"),
                (_, None) => panic!("{host}/{case}: let through"),
                (_, Some(r)) => {
                    assert!(r.starts_with("cmdguard: NOT RUN"), "{host}/{case}: {r}");
                    let said = r.to_lowercase();
                    assert!(said.contains("do not") && said.contains("tell the user"), "{host}/{case}: {r}");
                    if case == "ask" {
                        assert!(r.contains("git.reset-hard") && r.contains("approv"), "{host}/{case}: {r}");
                    }
                    if case == "deny" {
                        assert!(r.contains("filesystem.rm-root-or-home"), "{host}/{case}: {r}");
                    }
                }
            }
        }
    }
}

#[test]
fn new_hosts_block_when_cmdguard_itself_fails() {
    // The harmless call, with the analysis made to crash or to answer nothing: each host must
    // get its blocking form, with the status that host blocks on (Cline reads only its JSON).
    for host in HOSTS {
        let pass = fixtures(host).into_iter().find(|f| f.file_stem().unwrap() == "pass").unwrap();
        let t = TestEnv::new();
        let input = std::fs::read_to_string(&pass).unwrap().replace("{{PROJECT}}", t.project.to_str().unwrap());
        for mode in ["abort", "silent", "torn"] {
            let mut cmd = t.command(["hook", host]);
            cmd.env("CMDGUARD_TEST_CRASH", mode);
            let o = crate::hook_failure::feed(cmd, &input);
            let want = if *host == "cline" { 0 } else { 2 };
            assert_eq!(code(&o), want, "{host}/{mode}: {}", stderr(&o));
            let reason = match *host {
                "windsurf" => stderr(&o),
                "cursor" => {
                    serde_json::from_str::<Value>(&stdout(&o)).unwrap()["agent_message"].as_str().unwrap().into()
                }
                "opencode" => serde_json::from_str::<Value>(&stdout(&o)).unwrap()["reason"].as_str().unwrap().into(),
                _ => {
                    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
                    assert_eq!(v["cancel"], true, "{v}");
                    v["errorMessage"].as_str().unwrap().into()
                }
            };
            assert!(reason.contains("cmdguard failed internally"), "{host}/{mode}: {reason}");
        }
    }
}
