//! `cmdguard hook <host>`: every host's answer to every fixture in tests/fixtures/hooks/<host>/,
//! compared byte for byte with the expected `<case>.out` beside it. Fixtures follow the hosts'
//! documented payloads (docs/integrations.md); `{{PROJECT}}` stands for the test's project
//! directory. `<case>.cmdguard.toml` is written as the project's rules file, `<case>.user.toml`
//! as the user's. After a deliberate change: `CMDGUARD_BLESS=1 cargo test hook`, then review
//! the diff of the `.out` files.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{TestEnv, code, stderr, stdout};

const HOSTS: &[&str] = &["claude-code", "codex", "copilot", "gemini"];
/// Cases every host must have a fixture for.
const REQUIRED: &[&str] = &[
    "pass",
    "ask",
    "deny",
    "allowed",
    "other-tool",
    "not-json",
    "empty",
    "missing-command",
    "wrong-type",
    "config-error",
    "bad-cwd",
];

pub fn fixtures(host: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks").join(host);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    cases.sort();
    cases
}

/// Runs one fixture; returns the output as recorded in `.out` files.
pub fn answer(host: &str, fixture: &Path) -> (String, std::process::Output) {
    let t = TestEnv::new();
    let project = t.project.to_str().unwrap().to_string();
    for (suffix, user) in [("cmdguard.toml", false), ("user.toml", true)] {
        if let Ok(text) = std::fs::read_to_string(fixture.with_extension(suffix)) {
            if user { t.user_rules(&text) } else { drop(t.write(".cmdguard.toml", &text)) }
        }
    }
    let input = std::fs::read_to_string(fixture).unwrap().replace("{{PROJECT}}", &project);
    let o = t.run_with_input(&["hook", host], &input);
    let record = format!("exit: {}\n--- stdout\n{}--- stderr\n{}", code(&o), stdout(&o), stderr(&o));
    let home = t.home.to_str().unwrap();
    (mask_codes(&record.replace(&project, "{{PROJECT}}").replace(home, "{{HOME}}")), o)
}

/// `text` with every approval code (random) shown as `{{CODE}}`.
pub fn mask_codes(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("cmdguard approve ") {
        let (head, tail) = rest.split_at(at + "cmdguard approve ".len());
        out.push_str(head);
        rest = tail;
        if rest.len() >= 6 && rest.as_bytes()[..6].iter().all(u8::is_ascii_alphanumeric) {
            out.push_str("{{CODE}}");
            rest = &rest[6..];
        }
    }
    out + rest
}

/// The approval code in a hook's reason.
pub fn code_in(reason: &str) -> String {
    let at = reason.find("cmdguard approve ").unwrap_or_else(|| panic!("no approval code in: {reason}"));
    reason[at + "cmdguard approve ".len()..][..6].to_string()
}

#[test]
fn hook_answers_match_their_snapshots() {
    // Copilot's hook has no event name to get wrong.
    check_snapshots(HOSTS, REQUIRED, |host, case| host == "copilot" && case == "wrong-event");
}

/// Runs every fixture of `hosts` and compares its answer with the `.out` next to it (written
/// instead with `CMDGUARD_BLESS=1`); each host must have a fixture for each `required` case
/// that `exempt` does not excuse.
pub fn check_snapshots(hosts: &[&str], required: &[&str], exempt: impl Fn(&str, &str) -> bool) {
    let bless = std::env::var_os("CMDGUARD_BLESS").is_some();
    let mut failures = Vec::new();
    for host in hosts {
        let cases = fixtures(host);
        for required in required.iter().filter(|r| !exempt(host, r)) {
            assert!(cases.iter().any(|c| c.file_stem().unwrap() == *required), "{host}: no fixture for {required}");
        }
        for fixture in cases {
            let (have, _) = answer(host, &fixture);
            let out = fixture.with_extension("out");
            if bless {
                std::fs::write(&out, &have).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&out).unwrap_or_default();
            if have != want {
                failures.push(format!("{}:\n--- want\n{want}\n--- have\n{have}", out.display()));
            }
        }
    }
    assert!(failures.is_empty(), "hook answers differ (CMDGUARD_BLESS=1 to accept):\n{}", failures.join("\n"));
}

/// How a host reads an answer: `None` for no opinion, else the decision and its reason.
pub fn decision(host: &str, stdout: &str) -> Option<(String, String)> {
    if stdout.is_empty() || (host == "gemini" && stdout == "{}\n") {
        return None;
    }
    assert!(stdout.ends_with('\n') && stdout.matches('\n').count() == 1, "one JSON line: {stdout}");
    let v: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{host}: not JSON ({e}): {stdout}"));
    let (d, r) = match host {
        "claude-code" | "codex" => {
            let out = &v["hookSpecificOutput"];
            assert_eq!(out["hookEventName"], "PreToolUse");
            (&out["permissionDecision"], &out["permissionDecisionReason"])
        }
        "copilot" => (&v["permissionDecision"], &v["permissionDecisionReason"]),
        _ => (&v["decision"], &v["reason"]),
    };
    Some((d.as_str().unwrap().to_string(), r.as_str().unwrap().to_string()))
}

#[test]
fn only_readable_harmless_calls_go_through() {
    for host in HOSTS {
        for fixture in fixtures(host) {
            let case = fixture.file_stem().unwrap().to_str().unwrap().to_string();
            let (_, o) = answer(host, &fixture);
            assert_eq!(code(&o), 0, "{host}/{case}: hosts read answers with exit 0: {}", stderr(&o));
            let got = decision(host, &stdout(&o));
            match (case.as_str(), &got) {
                ("pass" | "allowed" | "other-tool", None) => {}
                ("ask", Some((d, r))) if *host == "claude-code" => {
                    assert_eq!(d, "ask");
                    assert!(r.contains("git.reset-hard"), "{r}");
                }
                (_, Some((d, r))) if d == "deny" => {
                    assert!(r.starts_with("cmdguard: NOT RUN"), "{host}/{case}: {r}");
                    let said = r.to_lowercase();
                    assert!(said.contains("do not") && said.contains("tell the user"), "{host}/{case}: {r}");
                }
                _ => panic!("{host}/{case}: unexpected answer {got:?}"),
            }
        }
    }
}

#[test]
fn a_huge_command_gets_a_short_answer() {
    // Hosts cap what they read from a hook; a cut-off JSON answer would not block.
    let t = TestEnv::new();
    let command = format!("echo {} && git reset --hard", "x".repeat(60_000));
    let call =
        serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}});
    for host in ["claude-code", "codex"] {
        let o = t.run_with_input(&["hook", host], &call.to_string());
        let (d, reason) = decision(host, &stdout(&o)).expect("an answer");
        assert!(d == "ask" || d == "deny");
        assert!(stdout(&o).len() < 10_000, "{} bytes", stdout(&o).len());
        assert!(reason.contains("git.reset-hard") || reason.contains("too-complex"), "{reason}");
    }
}

#[test]
fn a_long_command_is_quoted_around_what_matched() {
    let t = TestEnv::new();
    let command = format!("echo {} && git reset --hard && echo {}", "a".repeat(2_000), "b".repeat(2_000));
    let call =
        serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}});
    for host in ["claude-code", "codex"] {
        let o = t.run_with_input(&["hook", host], &call.to_string());
        let (_, reason) = decision(host, &stdout(&o)).expect("an answer");
        let quoted = reason.lines().next().unwrap_or_default();
        assert!(quoted.contains("git reset --hard"), "{host}: the matched part is kept: {quoted}");
        assert!(quoted.len() < 1_000, "{host}: {} bytes", quoted.len());
    }
}

#[test]
fn a_mistyped_host_blocks() {
    let t = TestEnv::new();
    let o = t.run_with_input(&["hook", "claude"], "{}");
    assert_eq!(code(&o), 2, "exit 2 blocks the call in Claude Code, Codex and Gemini CLI");
    assert!(stderr(&o).contains("claude-code"), "{}", stderr(&o));
}

#[test]
fn text_from_the_call_is_escaped_in_reasons() {
    // Hosts show reasons on a terminal: an escape sequence in the call must not repaint it.
    let t = TestEnv::new();
    for (command, cwd) in [("git reset --hard \u{1b}[2J", None), ("true", Some("/no/such/\u{1b}[2J"))] {
        let mut call = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}});
        if let Some(cwd) = cwd {
            call["cwd"] = cwd.into();
        }
        for host in ["claude-code", "codex"] {
            let o = t.run_with_input(&["hook", host], &call.to_string());
            let (_, reason) = decision(host, &stdout(&o)).expect("an answer");
            assert!(reason.contains("\\x1b[2J") && !reason.contains('\u{1b}'), "{host}: {reason:?}");
        }
    }
}
