//! The approval prompt, drawn on `/dev/tty` and read from it — never from stdin or stdout,
//! which belong to the agent. The terminal is put in a raw mode for single keys, type-ahead is
//! discarded before the first read, and the saved modes are put back on every path: a normal
//! answer, a signal (SIGTERM, SIGHUP, SIGINT, SIGQUIT arrive through a self-pipe and deny), and
//! a panic (main's panic hook calls `restore_terminal`). Everything that came from the agent is
//! escaped before it is drawn.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::signals::{Trap, Woke};
use crate::term::escape;

pub mod code;
mod keys;
mod show;
use code::Typed;
use keys::{Key, keys};
pub use show::wrap;
use show::{choices, countdown, render};

/// One rule as the prompt shows it.
pub struct RuleLine {
    pub id: String,
    pub reason: String,
    pub tip: Option<String>,
}

/// What the prompt shows and offers.
pub struct Request<'a> {
    pub command: &'a str,
    /// Byte ranges of `command` that the rules matched, highlighted.
    pub matched: Vec<(usize, usize)>,
    pub cwd: &'a str,
    pub session_key: Option<&'a str>,
    pub rules: Vec<RuleLine>,
    /// Parts of the command the analysis could not read: (id, detail).
    pub concerns: Vec<(String, String)>,
    /// One-line notices (rules files whose loosening is ignored).
    pub notices: &'a [String],
    /// Why `always` is not offered, if it is not.
    pub no_always: Option<&'a str>,
    /// Where the allow entries of `always` would apply, when not at top level (`ssh prod`).
    pub always_at: Option<&'a str>,
    pub timeout: Duration,
    /// What the command would destroy (`blast`), shown just above the choices.
    pub stake: Option<&'a str>,
    /// The engine's analysis trace, for `e`.
    pub explain: &'a dyn Fn() -> String,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Once,
    Session,
    Always,
    /// `d`, `r` with a reason, Esc or Ctrl-C.
    Deny {
        reason: Option<String>,
    },
    Timeout,
    /// A signal stopped the wait (or the terminal went away).
    Interrupted(String),
}

/// Why no prompt could be shown.
#[derive(Debug)]
pub struct NoTerminal(pub String);

// The terminal's saved modes, for the panic hook and for `Tty`'s drop.
static SAVED: Mutex<Option<(i32, libc::termios)>> = Mutex::new(None);
/// Puts the terminal back as it was, if a prompt changed it. Safe to call from a panic hook.
pub fn restore_terminal() {
    let saved = match SAVED.lock() {
        Ok(mut g) => g.take(),
        Err(p) => p.into_inner().take(),
    };
    if let Some((fd, modes)) = saved {
        // SAFETY: fd is the open terminal (or tcsetattr fails harmlessly); modes came from tcgetattr.
        unsafe {
            libc::tcsetattr(fd, libc::TCSANOW, &modes);
        }
    }
}

/// The open terminal in prompt mode; dropping it restores the modes and signal handlers.
struct Tty {
    file: File,
    trap: Trap,
}

/// The controlling terminal, if a prompt could be shown on it now: it opens, is a terminal, and
/// this process is in its foreground. Returned with its current modes, unchanged.
fn open_terminal() -> Result<(File, libc::termios), NoTerminal> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
        .open("/dev/tty")
        .map_err(|e| NoTerminal(format!("no terminal to ask on (/dev/tty: {e})")))?;
    let fd = file.as_raw_fd();
    // SAFETY: fd is open; these calls only query it.
    let (foreground, ours) = unsafe { (libc::tcgetpgrp(fd), libc::getpgrp()) };
    if foreground != ours {
        return Err(NoTerminal("cmdguard runs in a background job of the terminal, where it cannot ask".into()));
    }
    // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; saved is a valid termios.
    if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
        return Err(NoTerminal(format!("/dev/tty is not a terminal: {}", std::io::Error::last_os_error())));
    }
    Ok((file, saved))
}

/// Whether a prompt could be shown now, without touching the terminal (`cmdguard doctor`).
pub fn check_terminal() -> Result<(), NoTerminal> {
    open_terminal().map(drop)
}

impl Tty {
    /// The terminal in prompt mode, waiting its turn: `open_terminal` first (so a missing
    /// terminal is reported at once), then the terminal's prompt lock, then raw mode. `None`
    /// when the lock is still held at `deadline`. The lock is released with the returned file.
    fn start(deadline: Instant) -> Result<Option<(Option<File>, Tty)>, NoTerminal> {
        let (file, saved) = open_terminal()?;
        let Ok(lock) = lock_terminal(deadline) else { return Ok(None) };
        // (lock, tty): bound in this order, the terminal is restored before the lock is released.
        Ok(Some((lock, Tty::enter(file, saved)?)))
    }

    fn enter(file: File, saved: libc::termios) -> Result<Tty, NoTerminal> {
        let fd = file.as_raw_fd();
        let trap = Trap::install().map_err(|e| NoTerminal(format!("cannot set up the prompt: {e}")))?;
        *SAVED.lock().unwrap_or_else(|p| p.into_inner()) = Some((fd, saved));
        let mut raw = saved;
        raw.c_lflag &= !(libc::ICANON | libc::ECHO | libc::ISIG | libc::IEXTEN);
        raw.c_iflag &= !(libc::IXON | libc::ICRNL | libc::INLCR | libc::IGNCR | libc::ISTRIP);
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        let tty = Tty { file, trap };
        // SAFETY: fd is open; raw is a valid termios.
        if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
            return Err(NoTerminal(format!("cannot prepare the terminal: {}", std::io::Error::last_os_error())));
        }
        Ok(tty)
    }

    fn fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    fn width(&self) -> usize {
        // SAFETY: a zeroed winsize is a valid out-parameter for TIOCGWINSZ.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: fd is open; ws is valid.
        let ok = unsafe { libc::ioctl(self.fd(), libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col >= 20 {
            usize::from(ws.ws_col)
        } else if ok && ws.ws_col > 0 {
            20
        } else {
            80
        }
    }

    /// Discards whatever was typed before the question was asked.
    fn flush_input(&self) {
        // SAFETY: fd is open.
        unsafe {
            libc::tcflush(self.fd(), libc::TCIFLUSH);
        }
    }

    fn write(&mut self, text: &str) {
        let _ = self.file.write_all(text.as_bytes());
        let _ = self.file.flush();
    }

    /// Waits up to `timeout` for input or a signal.
    fn wait(&self, timeout: Duration) -> Event {
        match self.trap.wait(Some(self.fd()), timeout) {
            Woke::Signal(sig) => Event::Signal(sig),
            Woke::Timeout => Event::Nothing,
            Woke::Ready => {
                let mut buf = [0u8; 256];
                // SAFETY: reading into a valid buffer of its own length.
                let got = unsafe { libc::read(self.fd(), buf.as_mut_ptr().cast(), buf.len()) };
                match usize::try_from(got) {
                    Ok(0) | Err(_) => Event::Gone,
                    Ok(n) => Event::Input(buf[..n].to_vec()),
                }
            }
        }
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        // The trap is dropped after this, so a signal during restore still only wakes the pipe.
        restore_terminal();
    }
}

enum Event {
    Input(Vec<u8>),
    Signal(i32),
    Gone,
    Nothing,
}

/// Holds the prompt lock for one terminal, so two cmdguard processes sharing a terminal ask
/// one after the other instead of drawing over each other. A terminal is the controlling
/// terminal of exactly one session, so the session id names it.
fn lock_terminal(deadline: Instant) -> Result<Option<File>, ()> {
    // SAFETY: getsid(0) has no preconditions.
    let sid = unsafe { libc::getsid(0) };
    let Ok(dir) = crate::state::dir() else { return Ok(None) };
    let Ok(lock) = crate::state::open_private(&dir.join(format!("prompt-{sid}.lock")), false) else {
        return Ok(None);
    };
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(Some(lock)),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(()),
            Err(std::fs::TryLockError::Error(_)) => return Ok(None),
        }
    }
}

/// Asks the user on the terminal. Blocks until a key decides, the timeout passes, or a signal
/// arrives.
pub fn ask(req: &Request<'_>) -> Result<Answer, NoTerminal> {
    let deadline = Instant::now() + req.timeout;
    let Some((_lock, mut tty)) = Tty::start(deadline)? else { return Ok(Answer::Timeout) };
    let width = tty.width();
    // Keys typed before the question exists are discarded; the question is drawn after that,
    // so an answer to what is on the screen is never thrown away.
    tty.flush_input();
    let style = show::Style { colour: crate::term::has_colour() };
    tty.write(&render(req, width, style));
    let answer = read_answer(&mut tty, req, deadline);
    let said = match &answer {
        Answer::Once => "approved once: running it".to_string(),
        Answer::Session => "approved for this session: running it".to_string(),
        Answer::Always => "approved always: running it".to_string(),
        Answer::Deny { reason: Some(r), .. } => format!("denied: {}", escape(r)),
        Answer::Deny { .. } => "denied".to_string(),
        Answer::Timeout => "no answer in time: denied".to_string(),
        Answer::Interrupted(why) => format!("{why}: denied"),
    };
    let said = match answer {
        Answer::Once | Answer::Session | Answer::Always => style.approved(&said),
        _ => style.denied(&said),
    };
    tty.write(&format!("\r\x1b[K  -> {said}\r\n"));
    Ok(answer)
}

fn read_answer(tty: &mut Tty, req: &Request<'_>, deadline: Instant) -> Answer {
    let mut reason: Option<String> = None;
    let mut always_withdrawn = false;
    let mut shown_secs = u64::MAX;
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            // The user pressed `r` to deny: what they typed so far goes to the agent.
            return match reason.map(|r| r.trim().to_string()) {
                Some(r) if !r.is_empty() => Answer::Deny { reason: Some(r) },
                _ => Answer::Timeout,
            };
        }
        let left = deadline - now;
        if left.as_secs() != shown_secs {
            shown_secs = left.as_secs();
            match &reason {
                None => tty.write(&countdown(left, tty.width())),
                Some(text) => redraw_reason(tty, text, left),
            }
        }
        let tick = Duration::from_nanos(u64::from(left.subsec_nanos())).max(Duration::from_millis(10));
        let wait = if pending.is_empty() { tick.min(left) } else { Duration::from_millis(30) };
        let input = match tty.wait(wait) {
            Event::Signal(sig) => return Answer::Interrupted(crate::signals::describe(sig)),
            Event::Gone => return Answer::Interrupted("the terminal went away".into()),
            Event::Input(bytes) => bytes,
            Event::Nothing if pending == [0x1b] => {
                // A lone ESC with nothing after it: the Esc key.
                return Answer::Deny { reason: None };
            }
            Event::Nothing if !pending.is_empty() => {
                // The rest of a sequence never came: it was not a key.
                pending.clear();
                continue;
            }
            Event::Nothing => continue,
        };
        pending.extend(input);
        let (keys, rest) = keys(&pending);
        pending = pending.split_off(pending.len() - rest);
        if pending.len() > 4096 {
            pending.clear(); // an unterminated terminal string: not keys
        }
        for key in keys {
            match (&mut reason, key) {
                (_, Key::CtrlC) => return Answer::Deny { reason: None },
                (None, Key::Char('o' | 'O')) => return Answer::Once,
                (None, Key::Char('s' | 'S')) if req.session_key.is_some() => return Answer::Session,
                (None, Key::Char('a' | 'A')) if req.no_always.is_none() && !always_withdrawn => {
                    // An allow entry outlasts this command: the answer must come from someone
                    // who can read the screen, not from keys pushed into the terminal.
                    let code = code::new_code();
                    let text = format!("\r\x1b[K  always: type the code {code} to confirm (Esc goes back): ");
                    match code::read_code(tty, &text, &code, deadline) {
                        Typed::Matched => return Answer::Always,
                        Typed::Cancelled => return Answer::Deny { reason: None },
                        Typed::Timeout => return Answer::Timeout,
                        Typed::Interrupted(why) => return Answer::Interrupted(why),
                        Typed::Wrong => {
                            always_withdrawn = true;
                            tty.write("\r\x1b[K  the code did not match, so `always` is no longer offered here\r\n");
                        }
                        Typed::Back => tty.write("\r\x1b[K\r\n"),
                    }
                    tty.write(&choices(req, tty.width(), !always_withdrawn));
                    shown_secs = u64::MAX;
                    // Whatever came with or after the code is not an answer to the choices.
                    break;
                }
                (None, Key::Char('d' | 'D')) => return Answer::Deny { reason: None },
                (None, Key::Char('r' | 'R')) => {
                    reason = Some(String::new());
                    tty.write("\r\x1b[K  reason for the agent (Enter sends, Esc denies without one):\r\n");
                    redraw_reason(tty, "", deadline.saturating_duration_since(Instant::now()));
                }
                (None, Key::Char('e' | 'E')) => {
                    let trace = (req.explain)().replace('\n', "\r\n");
                    tty.write(&format!("\r\x1b[K\r\n{trace}\r\n"));
                    tty.write(&choices(req, tty.width(), !always_withdrawn));
                    shown_secs = u64::MAX;
                }
                (None, _) => {}
                (Some(text), Key::Enter) => {
                    let text = text.trim().to_string();
                    return Answer::Deny { reason: (!text.is_empty()).then_some(text) };
                }
                (Some(text), Key::Backspace) => {
                    text.pop();
                    redraw_reason(tty, text, deadline.saturating_duration_since(Instant::now()));
                }
                (Some(text), Key::CtrlU) => {
                    text.clear();
                    redraw_reason(tty, text, deadline.saturating_duration_since(Instant::now()));
                }
                (Some(text), Key::Char(c)) if text.chars().count() < 300 && !c.is_control() => {
                    text.push(c);
                    redraw_reason(tty, text, deadline.saturating_duration_since(Instant::now()));
                }
                (Some(_), _) => {}
            }
        }
    }
}

/// The reason line: the seconds left (the countdown stays in view while typing), then the end
/// of what was typed that fits.
fn redraw_reason(tty: &mut Tty, text: &str, left: Duration) {
    let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    let head = format!("  [{secs}s] > ");
    let width = tty.width().saturating_sub(head.len() + 1);
    let shown = escape(text);
    let tail: String = {
        let n = shown.chars().count();
        shown.chars().skip(n.saturating_sub(width)).collect()
    };
    tty.write(&format!("\r\x1b[K{head}{tail}"));
}

/// Shows `text` on the terminal and waits for one key. Returns the key if it is one of `keys`,
/// `None` for any other key, Esc, Ctrl-C, a signal or the timeout: every doubt cancels.
pub fn choose(text: &str, accept: &[char], timeout: Duration) -> Result<Option<char>, NoTerminal> {
    let deadline = Instant::now() + timeout;
    let Some((_lock, mut tty)) = Tty::start(deadline)? else { return Ok(None) };
    tty.flush_input();
    tty.write(&text.replace('\n', "\r\n"));
    let mut pending = false;
    let chosen = loop {
        let now = Instant::now();
        if now >= deadline {
            break None;
        }
        let wait = if pending { Duration::from_millis(30) } else { deadline - now };
        match tty.wait(wait) {
            Event::Input(bytes) => {
                let (ks, rest) = keys(&bytes);
                match ks.first() {
                    Some(Key::Char(c)) => break keys_match(*c, accept),
                    Some(_) => break None,
                    // An ESC or a sequence still arriving: whatever it is, it cancels.
                    None if rest > 0 => pending = true,
                    None => {}
                }
            }
            Event::Nothing if pending => break None,
            Event::Nothing => {}
            Event::Signal(_) | Event::Gone => break None,
        }
    };
    tty.write(
        match chosen {
            Some(c) => format!("{c}\r\n"),
            None => "cancelled\r\n".to_string(),
        }
        .as_str(),
    );
    Ok(chosen)
}

/// Shows `text` on the terminal and asks for a fresh random code to be typed back: the
/// confirmation for decisions that outlast the command (`trust`, `approve`). Returns whether
/// the code matched; any other key, Esc, Ctrl-C, a signal or the timeout cancels.
pub fn confirm_with_code(text: &str, timeout: std::time::Duration) -> Result<bool, NoTerminal> {
    let deadline = Instant::now() + timeout;
    let Some((_lock, mut tty)) = Tty::start(deadline)? else { return Ok(false) };
    let code = code::new_code();
    let text = format!("{}type the code {code} to confirm (anything else cancels): ", text.replace('\n', "\r\n"));
    let typed = code::read_code(&mut tty, &text, &code, deadline);
    tty.write(if typed == Typed::Matched { "\r\n" } else { "\r\ncancelled\r\n" });
    Ok(typed == Typed::Matched)
}

fn keys_match(c: char, keys: &[char]) -> Option<char> {
    let lower = c.to_ascii_lowercase();
    keys.contains(&lower).then_some(lower)
}

/// Writes a line for the user on the terminal (after the prompt has closed): what became of a
/// `session` or `always` answer. Silently does nothing without a terminal.
pub fn tell(text: &str) {
    if let Ok(mut f) = OpenOptions::new().write(true).custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC).open("/dev/tty") {
        let _ = writeln!(f, "  {}", text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_character() {
        let cmd = "git push --force origin main && rm -rf /very/long/path/that/does/not/fit/anywhere/at/all";
        for width in [8, 13, 20, 40, 200] {
            let lines = wrap(cmd, width);
            assert!(lines.iter().all(|l| l.chars().count() <= width.max(8)), "{width}: {lines:?}");
            assert_eq!(lines.join(" ").replace(' ', ""), cmd.replace(' ', ""));
        }
    }
}
