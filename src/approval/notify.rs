//! Someone is waiting: telling the human. When a prompt is drawn, a request is parked in the
//! queue, or a hook hands out an approval code, cmdguard rings the terminal bell and sends a
//! desktop notification escape where the terminal is known to show one, and runs the user's
//! `notify_command` if there is one. Nothing here can change a verdict: every failure is ignored.
//!
//! Escapes go to `/dev/tty` only, never to the agent's stdout or stderr. Which escape a terminal
//! gets is read from `TERM_PROGRAM` and `TERM`: OSC 9 (`ESC ] 9 ; body BEL`) for iTerm2, WezTerm,
//! Ghostty and kitty; OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`) for urxvt and foot; the
//! bell alone elsewhere (including inside tmux and screen, which pass the bell on). The text is
//! escaped by `term::escape` and shortened, so a command cannot end the escape early.

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long cmdguard waits for `notify_command` before it goes on without it.
const COMMAND_WAIT: Duration = Duration::from_millis(300);
/// Longest command text put in a notification.
const MAX_BODY: usize = 120;

/// A desktop notification escape a terminal understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Osc {
    /// `OSC 9 ; body`
    Nine,
    /// `OSC 777 ; notify ; title ; body`
    SevenSevenSeven,
}

/// The escape for the terminal named by `TERM_PROGRAM` and `TERM`, if it has one.
pub fn osc_for(term_program: Option<&str>, term: Option<&str>) -> Option<Osc> {
    let term = term.unwrap_or("");
    match term_program.unwrap_or("") {
        "iTerm.app" | "WezTerm" | "ghostty" => return Some(Osc::Nine),
        "tmux" => return None,
        _ => {}
    }
    if term.starts_with("screen") || term.starts_with("tmux") {
        None
    } else if term == "xterm-kitty" || term == "xterm-ghostty" || term == "wezterm" {
        Some(Osc::Nine)
    } else if term.starts_with("rxvt-unicode") || term.starts_with("foot") {
        Some(Osc::SevenSevenSeven)
    } else {
        None
    }
}

/// Text safe inside an OSC string: escaped, without the separator, at most `MAX_BODY` chars.
fn osc_text(text: &str) -> String {
    let text = crate::term::escape(text).replace(';', ",");
    match text.char_indices().nth(MAX_BODY) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// The bytes written to the terminal: the bell, then the notification escape if any.
pub fn escape_bytes(osc: Option<Osc>, title: &str, body: &str) -> String {
    let mut out = String::from("\x07");
    match osc {
        Some(Osc::Nine) => out.push_str(&format!("\x1b]9;{}: {}\x07", osc_text(title), osc_text(body))),
        Some(Osc::SevenSevenSeven) => {
            out.push_str(&format!("\x1b]777;notify;{};{}\x07", osc_text(title), osc_text(body)));
        }
        None => {}
    }
    out
}

/// Rings the terminal this process belongs to, if it has one.
pub fn ring(title: &str, body: &str) {
    let osc = osc_for(std::env::var("TERM_PROGRAM").ok().as_deref(), std::env::var("TERM").ok().as_deref());
    let bytes = escape_bytes(osc, title, body);
    use std::os::unix::fs::OpenOptionsExt;
    // O_NOCTTY: a process with no controlling terminal must not acquire one by ringing.
    let tty = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/tty");
    if let Ok(mut tty) = tty {
        let _ = tty.write_all(bytes.as_bytes());
    }
}

/// A request that waits for a human, as `notify_command` reads it on stdin.
pub struct Waiting<'a> {
    /// `prompt`, `queue` or `code`.
    pub kind: &'a str,
    pub command: &'a str,
    pub cwd: &'a str,
    /// The session key's hash (never the key).
    pub session: Option<&'a str>,
    pub rules: &'a [String],
    /// The queue request's id, for `cmdguard approve ID`.
    pub id: Option<&'a str>,
    /// The approval code, for `cmdguard approve CODE`.
    pub code: Option<&'a str>,
    /// The agent host, in hook mode.
    pub host: Option<&'a str>,
}

impl Waiting<'_> {
    pub fn to_json(&self) -> Value {
        let approve = self.code.or(self.id).map(|c| format!("cmdguard approve {c}"));
        serde_json::json!({
            "kind": self.kind,
            "command": self.command,
            "cwd": self.cwd,
            "session": self.session,
            "rules": self.rules,
            "id": self.id,
            "code": self.code,
            "host": self.host,
            "approve": approve,
            "time": crate::state::rfc3339(crate::state::now()),
        })
    }
}

/// Tells the human that `w` waits: the bell and escape (if `bell`), and `command` (if set).
pub fn waiting(bell: bool, command: Option<&str>, w: &Waiting<'_>) {
    if bell {
        let title = match w.kind {
            "prompt" => "cmdguard asks",
            _ => "cmdguard: approval needed",
        };
        ring(title, w.command);
    }
    if let Some(c) = command {
        run_command(c, &w.to_json());
    }
}

/// Runs `command` with `/bin/sh -c`, `json` on its stdin and its output discarded (it must never
/// reach the agent). Waits for it at most `COMMAND_WAIT`; one still running is left to finish.
pub fn run_command(command: &str, json: &Value) {
    use std::process::{Command, Stdio};
    let child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return };
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input must not block cmdguard: the JSON is far below
        // a pipe's buffer, and a closed pipe is only an error here.
        let _ = writeln!(stdin, "{json}");
    }
    let deadline = Instant::now() + COMMAND_WAIT;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Osc, escape_bytes, osc_for};

    #[test]
    fn each_terminal_gets_the_escape_it_shows() {
        assert_eq!(osc_for(Some("iTerm.app"), Some("xterm-256color")), Some(Osc::Nine));
        assert_eq!(osc_for(Some("WezTerm"), None), Some(Osc::Nine));
        assert_eq!(osc_for(None, Some("xterm-kitty")), Some(Osc::Nine));
        assert_eq!(osc_for(None, Some("foot")), Some(Osc::SevenSevenSeven));
        assert_eq!(osc_for(None, Some("rxvt-unicode-256color")), Some(Osc::SevenSevenSeven));
        assert_eq!(osc_for(Some("tmux"), Some("tmux-256color")), None);
        assert_eq!(osc_for(None, Some("screen-256color")), None);
        assert_eq!(osc_for(Some("Apple_Terminal"), Some("xterm-256color")), None);
        assert_eq!(osc_for(None, None), None);
    }

    #[test]
    fn a_command_cannot_end_the_escape_early() {
        let out = escape_bytes(Some(Osc::SevenSevenSeven), "t", "rm -rf /\x07\x1b]777;notify;x;y\x1b\\; echo");
        assert!(out.starts_with("\x07\x1b]777;notify;t;rm -rf /\\x07\\x1b]777,notify,x,y"), "{out:?}");
        // Exactly one ESC (the escape's own start) and one BEL after the leading bell.
        assert_eq!(out.matches('\x1b').count(), 1, "{out:?}");
        assert_eq!(out.matches('\x07').count(), 2, "{out:?}");
        assert_eq!(escape_bytes(None, "t", "b"), "\x07");
        let long = escape_bytes(Some(Osc::Nine), "t", &"x".repeat(500));
        assert!(long.len() < 200 && long.ends_with("…\x07"), "{long:?}");
    }
}
