//! Session grants across real processes: bound to one key and one project, never read from the
//! environment, kept under concurrent writers, expiring without use.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use crate::approval::{Asking, env_with_rules};
use crate::env::{TestEnv, code, stdout};

/// Approves `command` for `key`'s session at a real prompt.
fn grant(t: &TestEnv, key: &str, command: &str) {
    let mut a = Asking::start(t, &["--session-key", key, "-c", command]);
    let screen = a.wait_prompt();
    assert!(screen.contains("[s] this session") && screen.contains(key), "{screen}");
    let f = a.answer("s");
    assert_eq!(f.code, 0, "{}", f.stderr);
}

/// Runs with no terminal: passes only if a grant covers it (else "no terminal" → 77).
fn headless(t: &TestEnv, args: &[&str], env: &[(&str, &str)]) -> i32 {
    let mut cmd = t.command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    code(&cmd.output().unwrap())
}

#[test]
fn a_grant_belongs_to_one_key_and_one_project() {
    let t = env_with_rules();
    grant(&t, "key-A", "touch one");
    assert_eq!(headless(&t, &["--session-key", "key-A", "-c", "touch two"], &[]), 0);
    assert!(t.exists("two"));
    assert_eq!(t.audit().last().unwrap()["decided_by"], "session-grant");
    // Another key, no key, or a key in the environment: still asks (here: no terminal, so 77).
    assert_eq!(headless(&t, &["--session-key", "key-B", "-c", "touch three"], &[]), 77);
    assert_eq!(headless(&t, &["-c", "touch three"], &[]), 77);
    for var in ["HERMES_SESSION_KEY", "CMDGUARD_SESSION_KEY", "SESSION_KEY"] {
        assert_eq!(headless(&t, &["--session-key", "key-B", "-c", "touch three"], &[(var, "key-A")]), 77, "{var}");
        assert_eq!(headless(&t, &["-c", "touch three"], &[(var, "key-A")]), 77, "{var}");
    }
    assert!(!t.exists("three"));
    // Only the granted rule: another rule in the same session still asks.
    assert_eq!(headless(&t, &["--session-key", "key-A", "-c", "echo x | tee out"], &[]), 77);
    // Only this project.
    let elsewhere = t.project.parent().unwrap().join("other");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let o = t.command(["--session-key", "key-A", "-c", "touch four"]).current_dir(&elsewhere).output().unwrap();
    assert_eq!(code(&o), 77);
    // The command's own environment passes through untouched.
    let o = t
        .command(["--session-key", "key-A", "-c", "touch env; echo $HERMES_SESSION_KEY"])
        .env("HERMES_SESSION_KEY", "kept")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "kept\n");
}

#[test]
fn grants_are_private_and_hashed() {
    let t = env_with_rules();
    grant(&t, "secret-key-123", "touch one");
    let state = t.state_dir();
    assert_eq!(std::fs::metadata(&state).unwrap().permissions().mode() & 0o777, 0o700);
    let sessions = state.join("sessions");
    assert_eq!(std::fs::metadata(&sessions).unwrap().permissions().mode() & 0o777, 0o700);
    let files: Vec<_> = std::fs::read_dir(&sessions).unwrap().map(|e| e.unwrap().path()).collect();
    let grant = files.iter().find(|p| p.extension().is_some_and(|e| e == "json")).expect("a grant file");
    assert_eq!(std::fs::metadata(grant).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(!grant.to_string_lossy().contains("secret-key-123"));
    assert!(!std::fs::read_to_string(grant).unwrap().contains("secret-key-123"));
    assert_eq!(std::fs::metadata(state.join("audit.jsonl")).unwrap().permissions().mode() & 0o777, 0o600);
}

/// Two processes (each on its own terminal) prompting at once, both answered `s` together.
fn grant_both_at_once(t: &TestEnv, (key_a, cmd_a): (&str, &str), (key_b, cmd_b): (&str, &str)) {
    let mut a = Asking::start(t, &["--session-key", key_a, "-c", cmd_a]);
    let mut b = Asking::start(t, &["--session-key", key_b, "-c", cmd_b]);
    a.wait_prompt();
    b.wait_prompt();
    a.key("s");
    b.key("s");
    assert_eq!(a.finish().code, 0);
    assert_eq!(b.finish().code, 0);
}

#[test]
fn two_sessions_granting_at_the_same_moment_keep_both_and_leak_neither() {
    let t = env_with_rules();
    grant_both_at_once(&t, ("key-A", "touch a1"), ("key-B", "echo b | tee b1"));
    assert_eq!(headless(&t, &["--session-key", "key-A", "-c", "touch a2"], &[]), 0);
    assert_eq!(headless(&t, &["--session-key", "key-B", "-c", "echo b | tee b2"], &[]), 0);
    // Neither grant leaked into the other session, or to a third.
    assert_eq!(headless(&t, &["--session-key", "key-A", "-c", "echo a | tee a3"], &[]), 77);
    assert_eq!(headless(&t, &["--session-key", "key-B", "-c", "touch b3"], &[]), 77);
    assert_eq!(headless(&t, &["--session-key", "key-C", "-c", "touch c"], &[]), 77);
    let list = stdout(&t.run(["--json", "session", "list"]));
    let grants: Vec<serde_json::Value> = list.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(grants.len(), 2, "{list}");
    assert_ne!(grants[0]["session"], grants[1]["session"]);
}

#[test]
fn one_session_granting_twice_at_once_loses_nothing() {
    let t = env_with_rules();
    grant_both_at_once(&t, ("key-K", "touch a1"), ("key-K", "echo b | tee b1"));
    assert_eq!(headless(&t, &["--session-key", "key-K", "-c", "touch a2 && echo b | tee b2"], &[]), 0);
}

#[test]
fn grants_expire_and_can_be_revoked() {
    let t = TestEnv::new();
    t.user_rules(&format!("[settings]\nsession_ttl = \"1s\"\n{}", std::fs::read_to_string(rules_path()).unwrap()));
    grant(&t, "key-T", "touch one");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert_eq!(headless(&t, &["--session-key", "key-T", "-c", "touch two"], &[]), 77);

    let t = env_with_rules();
    grant(&t, "key-R", "touch one");
    grant(&t, "key-S", "touch one");
    assert!(stdout(&t.run(["session", "revoke", "key-R"])).contains("removed 1 grant"));
    assert_eq!(headless(&t, &["--session-key", "key-R", "-c", "touch two"], &[]), 77);
    assert_eq!(headless(&t, &["--session-key", "key-S", "-c", "touch two"], &[]), 0);
    assert!(stdout(&t.run(["session", "clear"])).contains("removed 1 grant"));
    assert_eq!(headless(&t, &["--session-key", "key-S", "-c", "touch three"], &[]), 77);
}

#[test]
fn a_grant_dated_in_the_future_is_expired() {
    // Counted from a future time, a grant would outlive its ttl: a clock set back, or a file
    // written by hand, must not make it last.
    let t = env_with_rules();
    grant(&t, "key-F", "touch one");
    let sessions = t.state_dir().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a grant file");
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    for (field, ahead) in [("last_used", 365 * 86_400), ("granted_at", 0)] {
        v["grants"][0][field] = (now + 3600 + ahead).into();
        std::fs::write(&file, v.to_string()).unwrap();
        assert_eq!(headless(&t, &["--session-key", "key-F", "-c", "touch two"], &[]), 77, "{field} in the future");
        assert!(!t.exists("two"));
        assert!(!file.exists(), "the expired grant is removed");
        assert_eq!(stdout(&t.run(["--json", "session", "list"])), "");
        v["grants"][0]["last_used"] = now.into();
    }
}

fn rules_path() -> std::path::PathBuf {
    // The approval tests' rules, as the user's file of a throwaway environment holds them.
    let t = env_with_rules();
    let p = t.home.join(".config/cmdguard/rules.toml");
    let copy = std::env::temp_dir().join(format!("cmdguard-rules-{}.toml", std::process::id()));
    std::fs::copy(p, &copy).unwrap();
    copy
}

#[test]
fn session_new_mints_random_keys() {
    let t = TestEnv::new();
    let a = stdout(&t.run(["session", "new"]));
    let b = stdout(&t.run(["session", "new"]));
    let key = a.trim().strip_prefix("cg-").expect(&a);
    assert_eq!(key.len(), 32);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(a, b);
}

#[test]
fn audit_lines_survive_concurrent_writers() {
    let t = TestEnv::new();
    let children: Vec<_> = (0..24)
        .map(|i| {
            t.command(["--session-key", &format!("k{i}"), "-c", "rm -rf ~"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert_eq!(c.wait().unwrap().code(), Some(77));
    }
    let audit = t.audit();
    assert_eq!(audit.len(), 24);
    let mut sessions: Vec<_> = audit.iter().map(|r| r["session"].as_str().unwrap().to_string()).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 24, "a line was lost or duplicated");
    assert!(audit.iter().all(|r| r["decided_by"] == "rule" && r["ran"] == false), "{audit:?}");
}
