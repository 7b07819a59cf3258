//! Keys pushed into the terminal by another process (`ioctl(TIOCSTI)`) reach cmdguard exactly as
//! typed keys do. They may answer `once` — one key, by design — but never `always`, `trust` or
//! `approve`: those ask for a code that only the screen shows.

use std::time::Duration;

use crate::approval::{Asking, env_with_rules};
use crate::env::code;
use crate::pty::Pty;

/// Injects `text`; `false` when this kernel forbids TIOCSTI to this process (then the attack
/// these tests guard against cannot happen here either).
fn inject(pty: &Pty, text: &str) -> bool {
    match pty.inject(text) {
        Ok(()) => true,
        Err(e) if matches!(e.raw_os_error(), Some(libc::EIO | libc::EPERM)) => {
            let sysctl = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").unwrap_or_default();
            assert_eq!(sysctl.trim(), "0", "TIOCSTI refused ({e}) although the kernel allows it");
            eprintln!("note: this kernel forbids TIOCSTI ({e}); injection tests have nothing to inject");
            false
        }
        Err(e) => panic!("the injector could not run: {e}"),
    }
}

#[test]
fn injected_keys_reach_the_prompt_but_cannot_answer_always() {
    let t = env_with_rules();
    // The injector is real: an injected `o` answers the prompt (once needs no code).
    let mut a = Asking::start(&t, &["-c", "touch once"]);
    a.wait_prompt();
    if !inject(&a.pty, "o") {
        a.answer("d");
        return;
    }
    assert_eq!(a.finish().code, 0);
    assert!(t.exists("once"), "the injected `o` did not reach the prompt");

    // An injected `a` asks for the code; the injector, which cannot see it, guesses wrong.
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    assert!(inject(&a.pty, "a"));
    a.pty.expect("type the code ");
    assert!(inject(&a.pty, "y\r"));
    a.pty.expect("`always` is no longer offered here");
    // Withdrawn for the rest of this prompt: more injected `a`s and codes do nothing.
    assert!(inject(&a.pty, "aaKTX"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.child.try_wait().unwrap().is_none(), "an injected key answered the prompt");
    let f = a.answer("d");
    assert_eq!(f.code, 77, "{}", f.stderr);
    assert!(!t.exists("ran") && !t.exists(".cmdguard.toml"), "an allow entry was written");

    // A burst typed ahead of the code (`a` and a guess at once) is flushed, never read as it.
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    assert!(inject(&a.pty, "aAAAA\r"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(a.child.try_wait().unwrap().is_none(), "injected keys answered the prompt");
    assert_eq!(a.answer("\x03").code, 77);
    assert!(!t.exists(".cmdguard.toml"), "an allow entry was written");

    // The person at the terminal, reading the code, can answer always.
    let mut a = Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    assert_eq!(a.answer_always().code, 0);
    assert_eq!(code(&t.run(["-c", "touch ran"])), 0);
}

#[test]
fn injected_keys_cannot_trust_a_file() {
    let t = env_with_rules();
    t.write(".cmdguard.toml", "[[allow]]\ncommand = \"touch ran\"\n");
    let mut a = Asking::start(&t, &["trust"]);
    a.pty.expect("type the code ");
    if !inject(&a.pty, "y\r") {
        a.answer("\x03");
        return;
    }
    let f = a.finish();
    assert_eq!(f.code, 1, "{}", f.screen);
    assert!(f.stdout.contains("not trusted"), "{}", f.stdout);
    assert_eq!(code(&t.run(["-c", "touch ran"])), 77, "the injected answer trusted the file");
}

#[test]
fn injected_keys_cannot_approve_a_waiting_command() {
    let t = env_with_rules();
    let w = crate::queue::waiter(&t, Some("s-A"), "touch a");
    crate::queue::wait_pending(&t, 1);
    let mut a = Asking::at_terminal(&t, &["approve", "--session-key", "s-A", "--scope", "once"], &[]);
    a.pty.expect("type the code ");
    if !inject(&a.pty, "y\r") {
        a.answer("\x03");
        let _ = w.wait_with_output();
        return;
    }
    let f = a.finish();
    assert_eq!(f.code, 1, "{}", f.screen);
    assert!(f.screen.contains("cancelled: nothing was decided"), "{}", f.screen);
    // Still waiting for a person; a real approval then runs it.
    assert_eq!(crate::queue::wait_pending(&t, 1).len(), 1);
    let a = Asking::at_terminal(&t, &["approve", "--session-key", "s-A", "--scope", "once"], &[]);
    assert_eq!(a.confirm().code, 0);
    let o = w.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(t.exists("a"));
}

#[test]
fn injected_keys_cannot_approve_from_watch() {
    let t = env_with_rules();
    let w = crate::queue::waiter(&t, Some("s-A"), "touch a");
    crate::queue::wait_pending(&t, 1);
    let mut watch = Asking::at_terminal(&t, &["watch"], &[]);
    watch.pty.expect("touch a");
    // `o`, pushed in by another process, asks for the code; the injector, which cannot see the
    // screen, guesses wrong, and that cancels.
    if !inject(&watch.pty, "o") {
        watch.answer("q");
        let _ = w.wait_with_output();
        return;
    }
    let code = watch.shown_code();
    assert!(inject(&watch.pty, if code.starts_with('A') { "C" } else { "A" }));
    watch.pty.expect("not the code: cancelled");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(crate::queue::wait_pending(&t, 1).len(), 1, "an injected key approved the request");
    // A person reading the new code approves it.
    let shown = watch.pty.screen().matches("type the code ").count();
    watch.key("o");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while watch.pty.screen().matches("type the code ").count() == shown {
        assert!(std::time::Instant::now() < deadline, "watch never drew a new code");
        std::thread::sleep(Duration::from_millis(20));
    }
    watch.type_code();
    let o = w.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(t.exists("a"));
    assert_eq!(watch.answer("q").code, 0);
}
