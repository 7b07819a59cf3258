//! What a new user hit on a first afternoon with cmdguard, one regression test each: closed
//! pipes, an empty session key, `session revoke` by what `session list` shows, `pending`
//! filtered by session, `--json` on every subcommand that prints results.

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

use crate::env::{TestEnv, code, stderr, stdout};

/// A pipe whose reading end is already closed: the first write to it fails with EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two new descriptors; each is owned exactly once below.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    drop(unsafe { OwnedFd::from_raw_fd(fds[0]) });
    Stdio::from(unsafe { OwnedFd::from_raw_fd(fds[1]) })
}

#[test]
fn a_closed_pipe_is_a_quiet_exit() {
    let t = TestEnv::new();
    for args in [
        &["rules", "list"][..],
        &["init", "--print"],
        &["doctor"],
        &["explain", "-c", "rm -rf ~"],
        &["--json", "rules", "list"],
        &["rules", "path"],
        &["log"],
    ] {
        let o = t.command(args).stdout(closed_pipe()).stderr(Stdio::piped()).output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("internal error") && !err.contains("Broken pipe"), "{args:?}: {err}");
        assert_eq!(code(&o), 0, "{args:?}: {err}");
    }
}

#[test]
fn an_empty_session_key_is_a_usage_error() {
    let t = TestEnv::new();
    for args in [
        &["--session-key", "", "-c", "true"][..],
        &["--session-key=", "check", "-c", "ls"],
        &["--session-key", "", "pending"],
    ] {
        let o = t.run(args);
        assert_eq!(code(&o), 64, "{args:?}");
        assert!(stderr(&o).contains("--session-key is empty"), "{}", stderr(&o));
    }
    let call = r#"{"session_id":"","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}"#;
    let o = t.run_with_input(&["--session-key", "", "hook", "claude-code"], call);
    assert_ne!(code(&o), 0, "a hook fails closed");
}

#[test]
fn session_revoke_takes_the_hash_that_list_shows() {
    let t = TestEnv::new();
    t.user_rules("[[rule]]\nid = \"t.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"r\"\n");
    write_grant(&t, "k1");
    let list = stdout(&t.run(["session", "list"]));
    let shown = list.lines().nth(1).and_then(|l| l.split_whitespace().next()).expect(&list).to_string();
    assert_eq!(shown.len(), 12, "{list}");
    let o = t.run(["session", "revoke", &shown]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("removed 1 grant"), "{}", stdout(&o));
    assert!(stdout(&t.run(["session", "list"])).contains("no session grants"));
    // The key itself still works.
    write_grant(&t, "k1");
    assert!(stdout(&t.run(["session", "revoke", "k1"])).contains("removed 1 grant"));
}

/// Gives session `key` a grant for `touch` in the project: the prompt's `s`, on a terminal.
fn write_grant(t: &TestEnv, key: &str) {
    let mut a = crate::approval::Asking::start(t, &["--session-key", key, "-c", "touch granted"]);
    a.wait_prompt();
    assert_eq!(a.answer("s").code, 0);
}

#[test]
fn pending_filters_by_session_key() {
    let t = TestEnv::new();
    t.user_rules("[[rule]]\nid = \"t.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"r\"\n");
    let mut waiting = Vec::new();
    for key in ["a", "b"] {
        let child = t
            .command(["--session-key", key, "--no-tty", "wait", "-c", &format!("touch from-{key}")])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        waiting.push(child);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while stdout(&t.run(["--json", "pending"])).lines().count() < 2 {
        assert!(std::time::Instant::now() < deadline, "the requests were never queued");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let only_a = stdout(&t.run(["--session-key", "a", "pending"]));
    assert!(only_a.contains("touch from-a") && !only_a.contains("touch from-b"), "{only_a}");
    assert_eq!(stdout(&t.run(["--session-key", "b", "--json", "pending"])).lines().count(), 1);
    assert!(stdout(&t.run(["--session-key", "c", "pending"])).contains("no commands are waiting"));
    for mut c in waiting {
        // SAFETY: kill sends a signal to a child this test started.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        assert_eq!(c.wait().unwrap().code(), Some(77));
    }
}

#[test]
fn json_works_where_results_are_printed_and_is_refused_elsewhere() {
    let t = TestEnv::new();
    let one = |args: &[&str]| -> serde_json::Value {
        let o = t.run(args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&o)))
    };
    let e = one(&["--json", "explain", "-c", "echo ok && git push --force"]);
    assert_eq!(e["verdict"], "ask");
    assert_eq!(e["segments"].as_array().unwrap().len(), 2);
    let hit = &e["hits"][0];
    let (text, span) = (hit["text"].as_str().unwrap(), &hit["span"]);
    let (s, end) = (span[0].as_u64().unwrap() as usize, span[1].as_u64().unwrap() as usize);
    assert_eq!(&text[s..end], hit["matched"].as_str().unwrap());
    assert!(hit["matched"].as_str().unwrap().contains("--force"), "{hit}");
    assert_eq!(one(&["--json", "rules", "lint"])["errors"], 0);
    assert_eq!(one(&["--json", "rules", "test"])["failures"], serde_json::json!([]));
    let init = one(&["--json", "init", "--print"]);
    assert!(init["text"].as_str().unwrap().starts_with("# cmdguard rules"), "{init}");
    assert!(!t.exists(".cmdguard.toml"));
    for args in [&["--json", "rules", "list"][..], &["--json", "rules", "path"]] {
        let out = stdout(&t.run(args));
        assert!(out.lines().count() > 1, "{args:?}");
        for line in out.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap_or_else(|e| panic!("{args:?}: {e}: {line}"));
        }
    }
    for args in
        [&["--json", "watch"][..], &["--json", "trust"], &["--json", "untrust"], &["--json", "completions", "bash"]]
    {
        let o = t.run(args);
        assert_eq!(code(&o), 64, "{args:?}");
        assert!(stderr(&o).contains("has no JSON form"), "{}", stderr(&o));
    }
    let written = one(&["--json", "init"]);
    assert_eq!(written["written"], true);
    assert!(t.exists(".cmdguard.toml"));
}

const TOUCH_ASKS: &str = "[[rule]]\nid = \"t.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"r\"\n";

#[test]
fn the_refusal_shortens_a_long_command_in_the_middle_and_keeps_the_matched_part() {
    let t = TestEnv::new();
    t.user_rules(TOUCH_ASKS);
    let command = format!("echo {}; touch the-target; echo {}", "a".repeat(3000), "b".repeat(3000));
    let o = t.run(["-c", &command]);
    assert_eq!(code(&o), 77);
    let err = stderr(&o);
    let line = err.lines().find(|l| l.starts_with("cmdguard: NOT RUN:")).expect(&err);
    assert!(line.len() < 500, "{} bytes: {line}", line.len());
    assert!(line.contains("touch the-target"), "{line}");
    assert!(line.contains("bytes)…") && line.ends_with("bbbb"), "{line}");
    let json = t.run(["--json", "-c", &command]);
    let v: serde_json::Value = serde_json::from_str(stderr(&json).trim()).unwrap();
    assert!(v["command"].as_str().unwrap().contains("touch the-target"));
    assert!(v["command"].as_str().unwrap().len() < 500);
}

#[test]
fn bytes_that_are_not_utf8_survive_in_the_line_a_human_can_run() {
    use std::os::unix::ffi::OsStrExt;
    let t = TestEnv::new();
    t.user_rules(TOUCH_ASKS);
    let script = std::ffi::OsStr::from_bytes(b"touch caf\xff'x");
    let o = t.command([std::ffi::OsStr::new("-c"), script]).output().unwrap();
    assert_eq!(code(&o), 77);
    let err = stderr(&o);
    let hint = err.lines().find(|l| l.contains("how a human can run it:")).expect(&err);
    assert!(hint.contains(r"cmdguard -c $'touch caf\xff\'x'"), "{hint}");
    // The quoted text is exactly the bytes again, read by a real shell.
    let quoted = r"$'touch caf\xff\'x'";
    let back = std::process::Command::new("bash").args(["-c", &format!("printf %s {quoted}")]).output().unwrap();
    assert_eq!(back.stdout, b"touch caf\xff'x");
    // Argv too.
    let o = t
        .command([std::ffi::OsStr::new("--"), "touch".as_ref(), std::ffi::OsStr::from_bytes(b"\xfe")])
        .output()
        .unwrap();
    assert!(stderr(&o).contains(r"cmdguard -- touch $'\xfe'"), "{}", stderr(&o));
}

#[test]
fn rules_lint_warns_on_an_allow_pattern_that_matches_nearly_everything() {
    let t = TestEnv::new();
    let file = t.write("wide.toml", "[[allow]]\npattern = '.*'\n\n[[allow]]\npattern = '^make test\\b'\n\n[[allow]]\npattern = '(rm|git|curl|dd|x|kubectl)'\n");
    let o = t.run(["rules", "lint", file.to_str().unwrap()]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert_eq!(out.matches("matches nearly every command").count(), 2, "{out}");
    assert!(out.contains("\".*\"") && !out.contains("make test\\\\b\" matches"), "{out}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&t.run(["--json", "rules", "lint", file.to_str().unwrap()]))).unwrap();
    assert_eq!(json["warnings"].as_array().unwrap().len(), 2, "{json}");
}

#[test]
fn with_no_terminal_watch_approve_deny_and_trust_exit_alike() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", "[[allow]]\ncommand = \"make x\"\n");
    let codes: Vec<(&str, i32)> = [&["watch"][..], &["approve", "abc"], &["deny", "abc"], &["trust"]]
        .iter()
        .map(|args| {
            let o = t.run(*args);
            assert!(stderr(&o).contains("terminal"), "{args:?}: {}", stderr(&o));
            (args[0], code(&o))
        })
        .collect();
    assert!(codes.iter().all(|(_, c)| *c == 1), "{codes:?}");
}

#[test]
fn a_file_created_by_always_starts_with_its_header() {
    let t = TestEnv::new();
    t.user_rules(TOUCH_ASKS);
    std::fs::create_dir(t.project.join(".git")).unwrap();
    let mut a = crate::approval::Asking::start(&t, &["-c", "touch made"]);
    a.wait_prompt();
    assert_eq!(a.answer_always().code, 0);
    let text = std::fs::read_to_string(t.project.join(".cmdguard.toml")).unwrap();
    assert!(text.starts_with("# cmdguard rules for this project"), "{text}");
    assert!(text.contains("[[allow]]\ncommand = \"touch made\""), "{text}");
    assert_eq!(code(&t.run(["-c", "touch made"])), 0, "the entry applies");
}

#[test]
fn watch_at_40_columns_keeps_its_key_line_and_the_code_to_type() {
    let t = TestEnv::new();
    t.user_rules(TOUCH_ASKS);
    let waiter = t
        .command(["--session-key", "k", "--no-tty", "wait", "-c", "touch narrow"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while stdout(&t.run(["--json", "pending"])).lines().count() < 1 {
        assert!(std::time::Instant::now() < deadline, "never queued");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut pty = crate::pty::Pty::new(40);
    let mut cmd = t.command(["watch"]);
    cmd.stdin(pty.stdio()).stdout(pty.stdio()).stderr(Stdio::piped());
    pty.attach(&mut cmd);
    let watch = cmd.spawn().unwrap();
    pty.expect("touch narrow");
    pty.expect("q quit");
    pty.send("o");
    // The code is on the screen whole, though the line is longer than 40 columns.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let code = loop {
        let screen = pty.screen();
        let after = screen.rfind("approve ").map_or("", |at| &screen[at..]);
        let words = after.replace(|c: char| c.is_control() || matches!(c, '[' | ';' | '?' | ','), " ");
        let code = words
            .split_whitespace()
            .find(|w| {
                w.len() == 4
                    && w.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                    && !w.chars().all(|c| c.is_ascii_digit())
            })
            .map(String::from);
        if let Some(code) = code.filter(|_| after.contains("confirm")) {
            break code;
        }
        assert!(std::time::Instant::now() < deadline, "no code to type on the screen: {after:?}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    pty.send(&code);
    assert_eq!(waiter.wait_with_output().unwrap().status.code(), Some(0));
    assert!(t.exists("narrow"));
    pty.send("q");
    assert_eq!(watch.wait_with_output().unwrap().status.code(), Some(0));
}

#[test]
fn always_on_a_command_that_deletes_the_untracked_project_file_writes_to_the_users_rules() {
    let t = TestEnv::new();
    t.user_rules("[[rule]]\nid = \"t.rm\"\naction = \"ask\"\npattern = '^rm '\nreason = \"removes files\"\n");
    std::fs::create_dir(t.project.join(".git")).unwrap();
    t.write(".cmdguard.toml", "# this project's rules\n");
    let mut a = crate::approval::Asking::start(&t, &["-c", "rm -f .cmdguard.toml"]);
    a.wait_prompt();
    let f = a.answer_always();
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(f.screen.contains("would delete"), "{}", f.screen);
    assert!(!t.exists(".cmdguard.toml"), "the command ran");
    let user = std::fs::read_to_string(t.home.join(".config/cmdguard/rules.toml")).unwrap();
    assert!(user.contains("command = \"rm -f .cmdguard.toml\""), "{user}");
    assert!(user.contains("id = \"t.rm\""), "the user's own rules are kept: {user}");
    let o = t.run(["-c", "rm -f .cmdguard.toml"]);
    assert_eq!(code(&o), 0, "the entry outlived the file: {}", crate::env::stderr(&o));
}
