//! The approval prompt on a real pseudo-terminal: every key, Esc, Ctrl-C, the timeout, signals,
//! escaping, type-ahead, piped stdin, narrow terminals, and the terminal's modes put back.

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::env::TestEnv;
use crate::pty::Pty;

/// A user rule that asks about `touch` and `tee`: safe commands with visible effects.
const RULES: &str = r#"
[[rule]]
id = "test.touch"
action = "ask"
pattern = '^touch '
reason = "creates files"
tip = "write the file with your editor"

[[rule]]
id = "test.tee"
action = "ask"
pattern = '^tee '
reason = "writes what it reads"
"#;

pub fn env_with_rules() -> TestEnv {
    let t = TestEnv::new();
    t.user_rules(RULES);
    t
}

/// A cmdguard process waiting at the prompt.
pub struct Asking {
    pub child: Child,
    pub pty: Pty,
    modes: (u32, u32, u32, Vec<u8>),
}

pub struct Finished {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub screen: String,
}

impl Asking {
    pub fn start(t: &TestEnv, args: &[&str]) -> Asking {
        Asking::start_with(t, args, 100, Stdio::null(), None)
    }

    pub fn start_with(t: &TestEnv, args: &[&str], cols: u16, stdin: Stdio, typed_early: Option<&str>) -> Asking {
        let mut pty = Pty::new(cols);
        if let Some(text) = typed_early {
            pty.send(text);
        }
        let modes = pty.modes();
        let mut cmd = t.command(args);
        cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
        pty.attach(&mut cmd);
        let child = cmd.spawn().expect("start cmdguard");
        Asking { child, pty, modes }
    }

    /// A command a person runs at the terminal: stdin, stdout and /dev/tty are the terminal.
    pub fn at_terminal(t: &TestEnv, args: &[&str], env: &[(&str, &str)]) -> Asking {
        let pty = Pty::new(100);
        let modes = pty.modes();
        let mut cmd = t.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(pty.stdio()).stdout(pty.stdio()).stderr(Stdio::piped());
        pty.attach(&mut cmd);
        let child = cmd.spawn().expect("start cmdguard");
        Asking { child, pty, modes }
    }

    /// Waits for the choices line of the prompt.
    pub fn wait_prompt(&mut self) -> String {
        self.pty.expect("left, then deny")
    }

    pub fn key(&mut self, k: &str) -> &mut Asking {
        self.pty.send(k);
        self
    }

    /// Waits for a code to type back (`always`, `trust`, `approve`) and types it, as a person
    /// reading the screen does.
    pub fn type_code(&mut self) -> &mut Asking {
        let code = self.shown_code();
        self.pty.send(&code);
        self
    }

    /// Waits for a code and types a wrong one (a character of the code's alphabet that is not
    /// the code's first).
    pub fn type_wrong_code(&mut self) -> &mut Asking {
        let code = self.shown_code();
        self.pty.send(if code.starts_with('A') { "C" } else { "A" });
        self
    }

    /// The code the terminal shows now (waiting for it).
    pub fn shown_code(&mut self) -> String {
        let screen = self.pty.expect("type the code ");
        let at = screen.rfind("type the code ").unwrap() + "type the code ".len();
        screen[at..at + 4].to_string()
    }

    /// Types the code shown, and waits for the process.
    pub fn confirm(mut self) -> Finished {
        self.type_code();
        self.finish()
    }

    /// Answers `a` and types the code back.
    pub fn answer_always(mut self) -> Finished {
        self.key("a");
        self.confirm()
    }

    pub fn answer(mut self, k: &str) -> Finished {
        self.pty.send(k);
        self.finish()
    }

    /// Waits for the process, checks that the terminal's modes were put back, and returns
    /// what the agent saw.
    pub fn finish(mut self) -> Finished {
        drop(self.child.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        let screen = self.pty.screen();
        assert_eq!(self.pty.modes(), self.modes, "terminal modes not restored; screen:\n{screen}");
        Finished {
            code: out.status.code().unwrap_or_else(|| panic!("killed: {:?}", out.status)),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            screen,
        }
    }
}

#[test]
fn once_runs_the_command_in_place() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "touch ran; echo out; exit 3"]);
    let screen = a.wait_prompt();
    for want in
        ["touch ran; echo out; exit 3", "test.touch: creates files", "write the file with your editor", "[o] once"]
    {
        assert!(screen.contains(want), "{want:?} missing:\n{screen}");
    }
    // Without a session key the session choice is not offered.
    assert!(!screen.contains("[s]"), "{screen}");
    let f = a.answer("o");
    assert_eq!(f.code, 3, "{}", f.stderr);
    assert_eq!(f.stdout, "out\n");
    assert!(t.exists("ran"));
    let audit = t.audit();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["decided_by"], "prompt");
    assert_eq!(audit[0]["choice"], "once");
    assert_eq!(audit[0]["ran"], true);
    assert_eq!(audit[0]["rules"][0], "test.touch");
}

#[test]
fn deny_keys_refuse_with_exit_77() {
    for (keys, by) in [("d", "key d"), ("\x1b", "Esc"), ("\x03", "Ctrl-C")] {
        let t = env_with_rules();
        let mut a = Asking::start(&t, &["-c", "touch ran"]);
        a.wait_prompt();
        let f = a.answer(keys);
        assert_eq!(f.code, 77, "{keys:?}: {}", f.stderr);
        assert!(!t.exists("ran"));
        assert!(f.stderr.contains("decided by: the user, at the prompt: they denied it"), "{keys:?}: {}", f.stderr);
        assert!(f.stderr.contains("Do not run this command again"), "{}", f.stderr);
        assert_eq!(t.audit()[0]["decided_by"], "prompt", "{by}");
        assert_eq!(t.audit()[0]["ran"], false);
    }
}

#[test]
fn unknown_keys_and_arrow_keys_are_ignored() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    a.key("x").key("\x1b[A").key("\r").key("9");
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.child.try_wait().unwrap().is_none(), "an unknown key decided");
    let f = a.answer("o");
    assert_eq!(f.code, 0, "{}", f.stderr);
}

#[test]
fn deny_with_a_reason_reaches_the_agent() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["--json", "-c", "touch ran"]);
    a.wait_prompt();
    a.key("r");
    a.pty.expect("reason for the agent");
    let f = a.answer("use the build dir\x7fr instead\r");
    assert_eq!(f.code, 77);
    let v: serde_json::Value = serde_json::from_str(f.stderr.trim()).expect(&f.stderr);
    assert_eq!(v["user_reason"], "use the build dir instead");
    assert_eq!(v["decided_by"], "prompt");
    assert_eq!(t.audit()[0]["reason"], "use the build dir instead");
}

#[test]
fn explain_shows_the_trace_then_asks_again() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "nice touch ran"]);
    a.wait_prompt();
    a.key("e");
    let screen = a.pty.expect("verdict: ask");
    assert!(screen.contains("wrappers: nice"), "{screen}");
    let f = a.answer("o");
    assert_eq!(f.code, 0, "{}", f.stderr);
}

#[test]
fn timeout_denies() {
    let t = TestEnv::new();
    t.user_rules(&format!("[settings]\ntimeout = 2\n{RULES}"));
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.pty.expect("2s left");
    let f = a.finish();
    assert_eq!(f.code, 77);
    assert!(f.stderr.contains("nobody answered the approval prompt in time"), "{}", f.stderr);
    assert!(f.screen.contains("1s left"), "no countdown:\n{}", f.screen);
    assert_eq!(t.audit()[0]["decided_by"], "timeout");
}

#[test]
fn sigterm_while_asking_denies_and_restores_the_terminal() {
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        let t = env_with_rules();
        let mut a = Asking::start(&t, &["-c", "touch ran"]);
        a.wait_prompt();
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(a.child.id() as i32, sig) };
        let f = a.finish();
        assert_eq!(f.code, 77, "{}", f.stderr);
        assert!(f.stderr.contains("stopped while waiting for approval"), "{}", f.stderr);
        assert!(!t.exists("ran"));
        assert_eq!(t.audit()[0]["decided_by"], "signal");
    }
}

#[test]
fn control_characters_from_the_agent_are_shown_escaped() {
    let t = env_with_rules();
    let mut a = Asking::start(&t, &["-c", "touch 'a\x1b[2Jb' \u{202e}x"]);
    let screen = a.wait_prompt();
    assert!(screen.contains("touch 'a\\x1b[2Jb' \\u{202e}x"), "{screen}");
    assert!(!screen.contains("\x1b[2J") && !screen.contains('\u{202e}'), "raw control text reached the terminal");
    a.answer("d");
}

#[test]
fn type_ahead_is_discarded() {
    let t = env_with_rules();
    // Typed before the question was asked: must not answer it.
    let mut a = Asking::start_with(&t, &["-c", "touch ran"], 100, Stdio::null(), Some("o"));
    a.wait_prompt();
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.child.try_wait().unwrap().is_none(), "type-ahead answered the prompt");
    let f = a.answer("d");
    assert_eq!(f.code, 77);
    assert!(!t.exists("ran"));
}

#[test]
fn piped_stdin_is_left_to_the_command() {
    let t = env_with_rules();
    let mut a = Asking::start_with(&t, &["-c", "tee got >/dev/null"], 100, Stdio::piped(), None);
    // The agent's stdin carries an "o": the prompt must not read it.
    a.child.stdin.as_mut().unwrap().write_all(b"o\nhello from the agent\n").unwrap();
    a.wait_prompt();
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.child.try_wait().unwrap().is_none(), "the prompt read stdin");
    let f = a.answer("o");
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert_eq!(std::fs::read_to_string(t.project.join("got")).unwrap(), "o\nhello from the agent\n");
}

#[test]
fn narrow_terminals_wrap_long_commands_without_losing_text() {
    let t = env_with_rules();
    let long = "touch first-file second-file /tmp/a/very/long/path/name/that/cannot/fit/in/thirty/columns";
    let mut a = Asking::start_with(&t, &["-c", long], 30, Stdio::null(), None);
    let screen = a.wait_prompt();
    let lines: Vec<&str> = screen.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let joined: String = lines.iter().map(|l| l.trim_start()).collect();
    for part in ["first-file", "second-file", "/tmp/a/very/long/pa", "thirty/columns"] {
        assert!(joined.contains(part), "{part:?} lost:\n{screen}");
    }
    for line in lines.iter().filter(|l| !l.contains('\x1b')) {
        assert!(line.chars().count() <= 30, "line wider than the terminal: {line:?}");
    }
    a.answer("d");
}

#[test]
fn no_terminal_denies_and_says_how_to_approve() {
    let t = env_with_rules();
    let o = t.run(["--session-key", "s-1", "-c", "touch ran"]);
    assert_eq!(crate::env::code(&o), 77);
    let err = crate::env::stderr(&o);
    assert!(err.contains("nobody could be asked"), "{err}");
    assert!(err.contains("cmdguard --session-key s-1 -c 'touch ran'"), "{err}");
    assert_eq!(t.audit()[0]["decided_by"], "no-terminal");
    assert!(!t.exists("ran"));
}

#[test]
fn deny_rules_never_prompt() {
    let t = TestEnv::new();
    let a = Asking::start(&t, &["-c", "rm -rf ~"]);
    let f = a.answer("o");
    assert_eq!(f.code, 77);
    assert!(f.stderr.contains("a deny rule"), "{}", f.stderr);
    assert!(!f.screen.contains("approval needed"), "{}", f.screen);
    assert_eq!(t.audit()[0]["decided_by"], "rule");
}

#[test]
fn prompts_on_one_terminal_take_turns() {
    let t = env_with_rules();
    let bin = env!("CARGO_BIN_EXE_cmdguard");
    let mut pty = Pty::new(100);
    // Two cmdguard processes of one terminal session, as an agent running commands in parallel.
    let script = format!("'{bin}' -c 'touch a' & '{bin}' -c 'touch b'; wait");
    let mut cmd = t.program("/bin/sh", ["-c", &script]);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    pty.attach(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    pty.expect("left, then deny");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(pty.screen().matches("approval needed").count(), 1, "two prompts at once:\n{}", pty.screen());
    pty.send("o");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while pty.screen().matches("approval needed").count() < 2 {
        assert!(std::time::Instant::now() < deadline, "the second prompt never came:\n{}", pty.screen());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    pty.send("o");
    assert!(child.wait().unwrap().success());
    assert!(t.exists("a") && t.exists("b"));
}
