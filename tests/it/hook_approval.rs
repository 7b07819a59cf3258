//! Approval from hook mode, with each host's real payload (the `ask` fixtures of
//! tests/fixtures/hooks/): a call that asks is blocked with an approval code; a person runs
//! `cmdguard approve CODE` at a real terminal; the agent's retry passes — once, or for the
//! session — and never from another session, directory or command. With `approval = "wait"` the
//! hook waits in the queue for a real `cmdguard approve` or `deny` from another terminal.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::approval::Asking;
use crate::env::{TestEnv, code, stderr, stdout};
use crate::hook::{code_in, decision};

const COMMAND: &str = "git reset --hard HEAD~1";

/// The host's `ask` fixture with the session, directory and command of this call.
fn payload(host: &str, session: &str, cwd: &Path, command: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks").join(host).join("ask.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cwd"] = cwd.to_str().unwrap().into();
    match host {
        "copilot" => {
            v["sessionId"] = session.into();
            v["toolArgs"] = serde_json::json!({"command": command, "description": "Run a command"}).to_string().into();
        }
        _ => {
            v["session_id"] = session.into();
            v["tool_input"]["command"] = command.into();
        }
    }
    v.to_string()
}

/// The hook's answer: `None` for no opinion, else (decision, reason).
pub fn call(t: &TestEnv, host: &str, session: &str, cwd: &Path, command: &str) -> Option<(String, String)> {
    let o = t.run_with_input(&["hook", host], &payload(host, session, cwd, command));
    assert_eq!(code(&o), 0, "{host}: {}", stderr(&o));
    decision(host, &stdout(&o))
}

pub fn blocked_code(t: &TestEnv, host: &str, session: &str, cwd: &Path, command: &str) -> String {
    let (d, reason) = call(t, host, session, cwd, command).unwrap_or_else(|| panic!("{host}: passed"));
    assert_eq!(d, "deny", "{host}: {reason}");
    assert!(reason.contains("git.reset-hard") && reason.contains("run exactly the same command again"), "{reason}");
    code_in(&reason)
}

/// `cmdguard approve ARGS…` at a real terminal, confirmed with the code the screen shows.
pub fn approve(t: &TestEnv, args: &[&str]) -> (i32, String) {
    let mut all = vec!["approve"];
    all.extend(args);
    let f = Asking::at_terminal(t, &all, &[]).confirm();
    (f.code, f.screen + &f.stderr)
}

fn env_for(host: &str) -> TestEnv {
    let t = TestEnv::new();
    if host == "claude-code" {
        // Claude Code keeps its own `ask` unless told to use cmdguard's approval.
        t.user_rules("[hook.claude-code]\napproval = \"code\"\n");
    }
    t
}

#[test]
fn every_host_approves_a_code_and_the_retry_passes_once() {
    for host in ["codex", "copilot", "gemini", "claude-code"] {
        let t = env_for(host);
        let c = blocked_code(&t, host, "s-1", &t.project, COMMAND);
        // Retrying before approval changes nothing and gives the same code.
        assert_eq!(blocked_code(&t, host, "s-1", &t.project, COMMAND), c, "{host}");
        let pending = stdout(&t.run(["pending"]));
        assert!(pending.contains(&c) && pending.contains(COMMAND), "{host}: {pending}");
        let (status, screen) = approve(&t, &[&c, "--scope", "once"]);
        assert_eq!(status, 0, "{host}: {screen}");
        assert!(screen.contains(COMMAND) && screen.contains("approved"), "{host}: {screen}");
        assert_eq!(call(&t, host, "s-1", &t.project, COMMAND), None, "{host}: the retry should pass");
        // Once means once: the next retry is blocked again, with a new code.
        let again = blocked_code(&t, host, "s-1", &t.project, COMMAND);
        assert_ne!(again, c, "{host}");
        let audit = t.audit();
        assert!(audit.iter().any(|r| r["decided_by"] == "approval-code" && r["ran"] == true), "{host}: {audit:?}");
    }
}

#[test]
fn a_code_covers_only_its_session_directory_and_command() {
    let t = TestEnv::new();
    let sub = t.project.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let c = blocked_code(&t, "codex", "s-A", &t.project, COMMAND);
    let (status, screen) = approve(&t, &[&c, "--scope", "session"]);
    assert_eq!(status, 0, "{screen}");
    // Another session, another directory, another command: each still blocked.
    blocked_code(&t, "codex", "s-B", &t.project, COMMAND);
    blocked_code(&t, "codex", "s-A", &sub, COMMAND);
    blocked_code(&t, "codex", "s-A", &t.project, "git reset --hard HEAD~2");
    // The approved session may retry as often as it likes; white space around it is the same.
    for command in [COMMAND, "  git reset --hard HEAD~1\n"] {
        assert_eq!(call(&t, "codex", "s-A", &t.project, command), None, "{command:?}");
    }
    // Denying a code withdraws it.
    let other = blocked_code(&t, "codex", "s-C", &t.project, COMMAND);
    let mut a = Asking::at_terminal(&t, &["deny", &other], &[]);
    a.pty.expect("cancels");
    let f = a.answer("y");
    assert_eq!(f.code, 0, "{}{}", f.screen, f.stderr);
    assert!(!stdout(&t.run(["pending"])).contains(&other));
}

#[test]
fn approving_needs_a_person_and_a_live_code() {
    let t = TestEnv::new();
    let c = blocked_code(&t, "gemini", "s-1", &t.project, COMMAND);
    // From a pipe (an agent running it), nothing is approved.
    let o = t.run_with_input(&["approve", &c, "--scope", "once"], "y\n");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("interactive terminal"), "{}", stderr(&o));
    assert!(call(&t, "gemini", "s-1", &t.project, COMMAND).is_some());
    // A wrong code typed back cancels.
    let mut a = Asking::at_terminal(&t, &["approve", &c, "--scope", "once"], &[]);
    a.type_wrong_code();
    assert_eq!(a.finish().code, 1);
    assert!(call(&t, "gemini", "s-1", &t.project, COMMAND).is_some());
    // An expired code is gone.
    let t = TestEnv::new();
    t.user_rules("[settings]\napproval_code_ttl = \"1s\"\n");
    let c = blocked_code(&t, "copilot", "s-1", &t.project, COMMAND);
    std::thread::sleep(Duration::from_millis(2100));
    let f = Asking::at_terminal(&t, &["approve", &c, "--scope", "once"], &[]).finish();
    assert_eq!(f.code, 1, "{}", f.screen);
    assert!(f.stderr.contains("no pending request"), "{}", f.stderr);
}

#[test]
fn racing_retries_take_a_once_code_once() {
    let t = TestEnv::new();
    let c = blocked_code(&t, "codex", "s-1", &t.project, COMMAND);
    assert_eq!(approve(&t, &[&c, "--scope", "once"]).0, 0);
    let input = payload("codex", "s-1", &t.project, COMMAND);
    let children: Vec<Child> = (0..8)
        .map(|_| {
            let mut c = t
                .command(["hook", "codex"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            c
        })
        .collect();
    let passed = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .filter(|o| decision("codex", &stdout(o)).is_none())
        .count();
    assert_eq!(passed, 1, "exactly one retry may use a once-code");
}

/// A hook waiting in the queue (its stdin written and closed).
fn waiting_hook(t: &TestEnv, host: &str, session: &str) -> Child {
    let mut c =
        t.command(["hook", host]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(payload(host, session, &t.project, COMMAND).as_bytes()).unwrap();
    c
}

fn wait_rules(t: &TestEnv, host: &str, wait: &str) {
    t.user_rules(&format!("[hook.{host}]\napproval = \"wait\"\nwait = \"{wait}\"\n"));
}

#[test]
fn a_waiting_hook_is_let_through_from_another_terminal() {
    // Claude Code too, when its approval is sent through cmdguard's queue.
    for host in ["codex", "claude-code"] {
        let t = TestEnv::new();
        wait_rules(&t, host, "30s");
        let hook = waiting_hook(&t, host, "s-1");
        let p = crate::queue::wait_pending(&t, 1);
        assert_eq!(p[0]["command"], COMMAND);
        assert_eq!(p[0]["session"], cmdguard::state::key_hash("s-1").as_str());
        let id = p[0]["id"].as_str().unwrap().to_string();
        let (status, screen) = approve(&t, &[&id, "--scope", "session"]);
        assert_eq!(status, 0, "{screen}");
        let o = hook.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert_eq!(decision(host, &stdout(&o)), None, "{host}: approved: no opinion");
        let audit = t.audit();
        assert!(audit.iter().any(|r| r["decided_by"] == "queue" && r["ran"] == true), "{host}: {audit:?}");
        // Approved for the session: the retry passes at once, another session waits again.
        assert_eq!(call(&t, host, "s-1", &t.project, COMMAND), None, "{host}");
        let mut other = waiting_hook(&t, host, "s-2");
        crate::queue::wait_pending(&t, 1);
        other.kill().unwrap();
        let _ = other.wait();
    }
}

#[test]
fn a_waiting_hook_denied_from_another_terminal_is_blocked() {
    let t = TestEnv::new();
    wait_rules(&t, "copilot", "30s");
    let hook = waiting_hook(&t, "copilot", "s-1");
    let id = crate::queue::wait_pending(&t, 1)[0]["id"].as_str().unwrap().to_string();
    let mut a = Asking::at_terminal(&t, &["deny", &id, "--reason", "not on main"], &[]);
    a.pty.expect("cancels");
    assert_eq!(a.answer("y").code, 0);
    let o = hook.wait_with_output().unwrap();
    let (d, reason) = decision("copilot", &stdout(&o)).expect("blocked");
    assert_eq!(d, "deny");
    assert!(reason.contains("the user's reason: not on main") && reason.contains("from another terminal"), "{reason}");
}

#[test]
fn a_hook_nobody_answers_is_blocked_with_a_code_after_its_wait() {
    // 11 s: longer than the analysis limit of the supervising process, which must wait too.
    let t = TestEnv::new();
    wait_rules(&t, "gemini", "11s");
    let started = Instant::now();
    let hook = waiting_hook(&t, "gemini", "s-1");
    let o = hook.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(11) && took < Duration::from_secs(20), "{took:?}");
    let (d, reason) = decision("gemini", &stdout(&o)).expect("blocked");
    assert_eq!(d, "deny");
    assert!(reason.contains("nobody approved it from another terminal within 11s"), "{reason}");
    let c = code_in(&reason);
    assert_eq!(approve(&t, &[&c, "--scope", "once"]).0, 0);
    assert_eq!(call(&t, "gemini", "s-1", &t.project, COMMAND), None);
}

#[test]
fn notify_command_gets_the_request_and_cannot_change_the_verdict() {
    let t = TestEnv::new();
    t.user_rules("[settings]\nnotify_command = 'cat > \"$HOME/notified.json\"; echo LEAK; echo LEAK >&2; exit 3'\n");
    let o = t.run_with_input(&["hook", "codex"], &payload("codex", "s-1", &t.project, COMMAND));
    assert!(!stdout(&o).contains("LEAK") && !stderr(&o).contains("LEAK"), "the agent saw notify_command's output");
    let (d, reason) = decision("codex", &stdout(&o)).expect("blocked");
    assert_eq!(d, "deny");
    let file = t.home.join("notified.json");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !file.exists() || std::fs::read_to_string(&file).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "notify_command never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["kind"], "code");
    assert_eq!(v["command"], COMMAND);
    assert_eq!(v["host"], "codex");
    assert_eq!(v["code"], code_in(&reason).as_str());
    assert_eq!(v["session"], cmdguard::state::key_hash("s-1").as_str());
    assert_eq!(v["rules"][0], "git.reset-hard");
    // A slow notify_command does not hold the hook up.
    let t = TestEnv::new();
    t.user_rules("[settings]\nnotify_command = 'sleep 5'\n");
    let started = Instant::now();
    assert!(call(&t, "copilot", "s-1", &t.project, COMMAND).is_some());
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

#[test]
fn a_project_file_cannot_set_notify_command() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", "[settings]\nnotify_command = 'touch \"$HOME/ran\"'\n");
    assert!(call(&t, "codex", "s-1", &t.project, COMMAND).is_some());
    std::thread::sleep(Duration::from_millis(500));
    assert!(!t.home.join("ran").exists(), "an untrusted project file ran a program");
}

#[test]
fn a_hook_on_a_terminal_rings_it_and_never_writes_escapes_to_the_agent() {
    let t = TestEnv::new();
    let mut pty = crate::pty::Pty::new(100);
    let mut cmd = t.command(["hook", "codex"]);
    cmd.env("TERM", "foot").env_remove("TERM_PROGRAM");
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    pty.attach(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload("codex", "s-1", &t.project, COMMAND).as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let screen = pty.expect("\x1b]777;notify;");
    assert!(screen.contains(&format!("\x07\x1b]777;notify;cmdguard: approval needed;{COMMAND}\x07")), "{screen:?}");
    assert!(!stdout(&o).contains('\x07') && !stderr(&o).contains('\x07'));
    assert!(decision("codex", &stdout(&o)).is_some());
}

#[test]
fn watch_rings_for_a_new_request_and_the_prompt_rings_when_it_asks() {
    let t = crate::approval::env_with_rules();
    let mut w = Asking::at_terminal(&t, &["watch"], &[("TERM_PROGRAM", "WezTerm")]);
    w.pty.expect("waiting for requests");
    let mut a = crate::queue::waiter(&t, Some("s-A"), "touch a");
    let screen = w.pty.expect("touch a");
    assert!(screen.contains("\x07\x1b]9;cmdguard: approval needed: touch a\x07"), "{screen:?}");
    a.kill().unwrap();
    let _ = a.wait();
    assert_eq!(w.answer("q").code, 0);
    // With `bell = false`, the prompt stays silent; by default it rings before it asks.
    for (rules, rings) in [("", true), ("[settings]\nbell = false\n", false)] {
        let t = crate::approval::env_with_rules();
        let user = t.home.join(".config/cmdguard/rules.toml");
        let text = std::fs::read_to_string(&user).unwrap();
        std::fs::write(&user, format!("{rules}{text}")).unwrap();
        let mut p = Asking::start(&t, &["-c", "touch ran"]);
        let screen = p.wait_prompt();
        assert_eq!(screen.contains('\x07'), rings, "{screen:?}");
        assert_eq!(p.answer("d").code, 77);
    }
}

#[test]
fn a_mistyped_hook_setting_is_a_broken_configuration_and_blocks() {
    for (text, says) in [
        ("[hook.codex]\napproval = \"maybe\"\n", "approval: \"maybe\" is not"),
        ("[hook.codexx]\napproval = \"wait\"\n", "unknown agent host"),
        ("[hook.codex]\nwait = \"20m\"\n", "from 1s to 10m"),
        ("[hook.codex]\nwiat = \"20s\"\n", "unknown field"),
    ] {
        let t = TestEnv::new();
        t.user_rules(text);
        let o = t.run(["check", "-c", "ls"]);
        assert_eq!(code(&o), 78, "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{text}: {}", stderr(&o));
        let (d, reason) = call(&t, "codex", "s-1", &t.project, "ls").expect("blocked");
        assert_eq!(d, "deny");
        assert!(reason.contains("configuration is broken"), "{reason}");
    }
}
