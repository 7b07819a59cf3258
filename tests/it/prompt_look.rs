//! The prompt read in one glance, on a real pseudo-terminal: colour where the terminal has it
//! and not with `NO_COLOR`, the matched part highlighted, a long command's matched part first
//! and in view, and a reason being typed kept when the time runs out, with the countdown shown.

use std::process::{Child, Stdio};

use crate::env::TestEnv;
use crate::pty::Pty;

const RULES: &str = "[settings]\ntimeout = 3\n\n[[rule]]\nid = \"test.touch\"\naction = \"ask\"\npattern = '^touch '\nreason = \"creates files\"\n";

/// cmdguard asking on a fresh terminal, with `colour` or with `NO_COLOR` set.
fn asking(t: &TestEnv, command: &str, colour: bool) -> (Child, Pty) {
    let pty = Pty::new(100);
    let mut cmd = t.command(["-c", command]);
    cmd.env("TERM", "xterm-256color");
    if colour {
        cmd.env_remove("NO_COLOR");
    } else {
        cmd.env("NO_COLOR", "1");
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    pty.attach(&mut cmd);
    (cmd.spawn().unwrap(), pty)
}

fn env() -> TestEnv {
    let t = TestEnv::new();
    t.user_rules(RULES);
    t
}

#[test]
fn colour_marks_the_ask_the_matched_part_and_the_answer() {
    let t = env();
    let (child, mut pty) = asking(&t, "echo ok && touch file-x", true);
    let screen = pty.expect("then deny");
    assert!(screen.contains("\x1b[1;33mcmdguard: approval needed\x1b[0m"), "{screen:?}");
    assert!(screen.contains("echo ok && \x1b[7mtouch \x1b[27mfile-x"), "{screen:?}");
    pty.send("d");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(77));
    assert!(pty.screen().contains("\x1b[1;31mdenied\x1b[0m"), "deny looks unlike the ask: {:?}", pty.screen());
}

#[test]
fn no_color_means_no_colour() {
    let t = env();
    let (child, mut pty) = asking(&t, "touch file-y", false);
    let screen = pty.expect("then deny");
    assert!(screen.contains("cmdguard: approval needed"));
    for sgr in ["\x1b[1;33m", "\x1b[7m", "\x1b[1;31m", "\x1b[32m"] {
        assert!(!screen.contains(sgr), "{sgr:?} with NO_COLOR: {screen:?}");
    }
    pty.send("o");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(t.exists("file-y"));
}

#[test]
fn a_long_command_shows_its_matched_part_first_and_stays_on_one_screen() {
    let t = env();
    let command = format!("echo {}; touch deep-inside; echo {}", "a".repeat(20_000), "b".repeat(20_000));
    let (child, mut pty) = asking(&t, &command, false);
    let screen = pty.expect("then deny");
    let prompt = &screen[screen.find("cmdguard: approval needed").unwrap()..];
    let matched = prompt.find("matched  touch").expect(prompt);
    let whole = prompt.find("command  echo aaa").expect(prompt);
    assert!(matched < whole, "the matched part comes first: {prompt}");
    assert!(prompt[whole..].contains("touch deep-inside"), "{prompt}");
    assert!(prompt.lines().count() < 20, "{} lines: {prompt}", prompt.lines().count());
    pty.send("d");
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(77));
}

#[test]
fn a_reason_being_typed_survives_the_timeout_with_the_countdown_in_view() {
    let t = env();
    let (child, mut pty) = asking(&t, "touch file-z", false);
    pty.expect("then deny");
    pty.send("r");
    pty.send("use the build dir");
    let screen = pty.expect("> use the build dir");
    assert!(screen.contains("s] > "), "the countdown stays on the reason line: {screen:?}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(77));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the user's reason: use the build dir"), "{err}");
    assert!(!t.exists("file-z"));
}
