//! `cmdguard watch`: a full-screen, live view of every session's waiting commands. Arrow keys
//! select; `o`/`s`/`a` approve the selected request (once, for its session, always) once the
//! code shown is typed back, `d` denies,
//! `r` denies with a reason typed for the agent, `e` shows the analysis; each decision is
//! confirmed with `y`. `q` or Esc leaves. The terminal is restored on every exit, panics included.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use crossterm::{cursor, execute, queue, style, terminal};

use crate::approval::queue::{self as q, Pending};
use crate::cli::{Global, Scope};
use crate::state;
use crate::term::escape;

static ACTIVE: AtomicBool = AtomicBool::new(false);
/// How often the queue's directories are looked at (a `stat` of each; measured latency from a
/// request to the screen in docs/integrations.md).
const POLL: Duration = Duration::from_millis(50);
/// How often the queue is read in full even when nothing changed: ages, timeouts, stale requests.
const LIST_EVERY: Duration = Duration::from_secs(1);

/// What the queue's directories looked like last time: a new session's directory changes the
/// root's mtime, a new or removed request its session directory's.
#[derive(Default)]
struct Change(Vec<(std::path::PathBuf, Option<SystemTime>)>);

impl Change {
    /// Whether anything moved since the last call.
    fn moved(&mut self) -> bool {
        let Ok(root) = crate::state::dir().map(|d| d.join("queue")) else { return true };
        let mtime = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let mut now = vec![(root.clone(), mtime(&root))];
        if let Ok(dirs) = std::fs::read_dir(&root) {
            now.extend(dirs.flatten().map(|e| e.path()).map(|p| {
                let t = mtime(&p);
                (p, t)
            }));
        }
        now.sort();
        let moved = now != self.0;
        self.0 = now;
        moved
    }
}

/// Leaves the full-screen view, if it is up. Called on exit and from the panic hook.
pub fn restore_terminal() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(std::io::stdout(), style::ResetColor, cursor::Show, terminal::LeaveAlternateScreen);
    }
}

struct Screen;

impl Screen {
    fn enter() -> Result<Screen> {
        terminal::enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        execute!(std::io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
        Ok(Screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// What the bottom line is doing.
enum Mode {
    Browse,
    /// Waiting for `y` to deny (scope None), or for the code to be typed back to approve
    /// (Some(scope)): keys another process injects into the terminal cannot know the code.
    Confirm {
        id: String,
        scope: Option<Scope>,
        reason: Option<String>,
        code: String,
        typed: String,
    },
    /// Typing a reason for a denial.
    Reason {
        id: String,
        text: String,
    },
    /// Showing a text (the analysis) until a key is pressed.
    Text(Vec<String>),
}

pub fn run(_global: &Global) -> Result<u8> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        // The same status as approve, deny and trust with no terminal: nothing was decided.
        eprintln!("cmdguard: `cmdguard watch` needs you at an interactive terminal; run it yourself in a terminal");
        return Ok(crate::exit::DECLINED);
    }
    // A signal must not leave the terminal in raw mode on the alternate screen: it is caught,
    // and the loop below leaves through `Screen`'s drop.
    let trap = crate::signals::Trap::install()?;
    let _screen = Screen::enter()?;
    let mut selected = 0usize;
    let mut mode = Mode::Browse;
    let mut status = String::from("waiting for requests");
    let bell = crate::config::load(&super::cwd()?, &[]).map_or(true, |p| p.settings.bell);
    let mut seen = q::all(true)?.into_iter().map(|p| p.request.id).collect::<HashSet<String>>();
    let mut change = Change::default();
    let mut list: Vec<Pending> = Vec::new();
    let mut listed = Instant::now();
    let mut drawn = true;
    loop {
        // A new request shows at once: the queue's directories are looked at every `POLL`, and
        // read in full only when they changed (or every `LIST_EVERY`, for ages and stale ones).
        if change.moved() || listed.elapsed() >= LIST_EVERY || drawn {
            list = q::all(true)?.into_iter().filter(|p| !p.stale).collect();
            listed = Instant::now();
            let new: Vec<&Pending> = list.iter().filter(|p| !seen.contains(&p.request.id)).collect();
            if bell && let Some(p) = new.first() {
                crate::approval::notify::ring("cmdguard: approval needed", &p.request.command);
            }
            seen.extend(new.iter().map(|p| p.request.id.clone()));
            selected = selected.min(list.len().saturating_sub(1));
            draw(&list, selected, &mode, &status)?;
        }
        drawn = false;
        if let crate::signals::Woke::Signal(sig) = trap.wait(None, Duration::ZERO) {
            return Ok(u8::try_from(128 + sig).unwrap_or(1));
        }
        // EINTR (a signal arrived) is not an error here: the trap reports it on the next round.
        if !event::poll(POLL).unwrap_or(false) {
            continue;
        }
        drawn = true;
        let Event::Key(key) = event::read()? else { continue };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        let ctrl_c = key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL);
        let current = list.get(selected);
        mode = match mode {
            Mode::Text(_) => Mode::Browse,
            Mode::Confirm { id, scope: Some(scope), reason, code, mut typed } => match key.code {
                KeyCode::Char(c) if !ctrl_c => {
                    typed.push(c.to_ascii_uppercase());
                    if typed == code {
                        status = decide(&list, &id, Some(scope), reason);
                        Mode::Browse
                    } else if code.starts_with(&typed) {
                        Mode::Confirm { id, scope: Some(scope), reason, code, typed }
                    } else {
                        status = "not the code: cancelled".into();
                        Mode::Browse
                    }
                }
                _ => {
                    status = "cancelled".into();
                    Mode::Browse
                }
            },
            Mode::Confirm { id, scope: None, reason, .. } => {
                if key.code == KeyCode::Char('y') {
                    status = decide(&list, &id, None, reason);
                } else {
                    status = "cancelled".into();
                }
                Mode::Browse
            }
            Mode::Reason { id, mut text } => match key.code {
                KeyCode::Enter => {
                    let reason = Some(text.trim().to_string()).filter(|t| !t.is_empty());
                    Mode::Confirm { id, scope: None, reason, code: String::new(), typed: String::new() }
                }
                KeyCode::Esc => {
                    status = "cancelled".into();
                    Mode::Browse
                }
                _ if ctrl_c => {
                    status = "cancelled".into();
                    Mode::Browse
                }
                KeyCode::Backspace => {
                    text.pop();
                    Mode::Reason { id, text }
                }
                KeyCode::Char(c) if !c.is_control() && text.chars().count() < 300 => {
                    text.push(c);
                    Mode::Reason { id, text }
                }
                _ => Mode::Reason { id, text },
            },
            Mode::Browse => match (key.code, current) {
                (KeyCode::Char('q') | KeyCode::Esc, _) => return Ok(0),
                _ if ctrl_c => return Ok(0),
                (KeyCode::Up | KeyCode::Char('k'), _) => {
                    selected = selected.saturating_sub(1);
                    Mode::Browse
                }
                (KeyCode::Down | KeyCode::Char('j'), _) => {
                    selected = (selected + 1).min(list.len().saturating_sub(1));
                    Mode::Browse
                }
                (KeyCode::Char(c @ ('o' | 's' | 'a')), Some(p)) => {
                    let scope = match c {
                        's' => Scope::Session,
                        'a' => Scope::Always,
                        _ => Scope::Once,
                    };
                    if scope == Scope::Session && p.request.session.is_none() {
                        status = "that request has no session key: `s` is not available".into();
                        Mode::Browse
                    } else if scope == Scope::Always && p.request.always.is_empty() {
                        status = "cmdguard could not read all of that command: `a` is not available".into();
                        Mode::Browse
                    } else {
                        // Keys that arrived before the code is drawn cannot be an answer to it.
                        while event::poll(Duration::ZERO).unwrap_or(false) {
                            let _ = event::read();
                        }
                        let (code, typed) = (crate::approval::prompt::code::new_code(), String::new());
                        Mode::Confirm { id: p.request.id.clone(), scope: Some(scope), reason: None, code, typed }
                    }
                }
                (KeyCode::Char('d'), Some(p)) => Mode::Confirm {
                    id: p.request.id.clone(),
                    scope: None,
                    reason: None,
                    code: String::new(),
                    typed: String::new(),
                },
                (KeyCode::Char('r'), Some(p)) => Mode::Reason { id: p.request.id.clone(), text: String::new() },
                (KeyCode::Char('e'), Some(p)) => Mode::Text(explain(p)),
                _ => Mode::Browse,
            },
        };
    }
}

fn decide(list: &[Pending], id: &str, scope: Option<Scope>, reason: Option<String>) -> String {
    let Some(p) = list.iter().find(|p| p.request.id == id) else {
        return format!("request {id} is gone (decided elsewhere, timed out or withdrawn)");
    };
    match super::queue::resolve(p, scope.is_some(), scope, reason, "watch") {
        Ok((_, said)) => said,
        Err(e) => format!("could not decide {id}: {e:#}"),
    }
}

/// The engine's analysis of a request, as `explain` shows it, in the request's directory.
fn explain(p: &Pending) -> Vec<String> {
    let r = &p.request;
    let text = match crate::config::load(Path::new(&r.cwd), &[]) {
        Ok(policy) => {
            let job = crate::exec::Job::Script(r.command.clone().into());
            let shell = policy.settings.shell.clone().map_or_else(|| "/bin/sh".into(), std::path::PathBuf::from);
            let analysis = job.analyze(&shell);
            let decision = crate::decide::decide(&policy, &analysis);
            super::explain::trace(&policy, &job, &analysis, &decision)
        }
        Err(e) => format!("cannot load the rules of {}: {e}", escape(&r.cwd)),
    };
    text.lines().map(String::from).chain(["".into(), "(any key goes back)".into()]).collect()
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    crate::approval::prompt::wrap(text, width.max(10))
}

fn draw(list: &[Pending], selected: usize, mode: &Mode, status: &str) -> Result<()> {
    let (cols, rows) = terminal::size().unwrap_or((80, 24));
    let (w, h) = (usize::from(cols), usize::from(rows));
    let mut lines: Vec<(String, bool)> = Vec::new();
    let head = format!("cmdguard watch: {} waiting", list.len());
    lines.push((head, true));
    // On a narrow terminal the keys wrap onto more lines rather than being cut off.
    let keys = "up/down select  o once  s session  a always  d deny  r deny+reason  e explain  q quit";
    lines.extend(wrap(keys, w.saturating_sub(1)).into_iter().map(|l| (l, false)));
    lines.push((String::new(), false));
    if let Mode::Text(text) = mode {
        lines.extend(text.iter().flat_map(|l| wrap(l, w)).map(|l| (l, false)));
    } else {
        let now = state::now();
        for (i, p) in list.iter().enumerate() {
            let r = &p.request;
            let session = r.session.as_deref().map_or("-".to_string(), |h| h[..8].to_string());
            let age = state::human_duration(now.saturating_sub(r.created()));
            let mark = if i == selected { ">" } else { " " };
            let row = format!("{mark} {}  {session:<8}  {age:>5}  {}", r.id, escape(&r.command));
            let row: String = row.chars().take(w.saturating_sub(1)).collect();
            lines.push((row, i == selected));
        }
        if let Some(p) = list.get(selected) {
            let r = &p.request;
            lines.push((String::new(), false));
            lines.push(("selected request".into(), true));
            for (label, value) in [
                ("command", escape(&r.command)),
                ("project", escape(&r.project)),
                ("in", escape(&r.cwd)),
                ("rules", r.rules.join(", ")),
                ("at stake", r.stake.as_deref().map(escape).unwrap_or_else(|| "not measured".into())),
                ("timeout", state::human_duration((r.created() + r.timeout).saturating_sub(now))),
            ] {
                for (j, l) in wrap(&value, w.saturating_sub(12)).into_iter().enumerate() {
                    let head = if j == 0 { format!("  {label:<9} ") } else { " ".repeat(12) };
                    lines.push((head + &l, false));
                }
            }
        }
    }
    let bottom = match mode {
        Mode::Browse | Mode::Text(_) => status.to_string(),
        Mode::Confirm { id, scope: Some(s), code, typed, .. } => {
            format!("approve {id} ({})? type the code {code} to confirm, any other key cancels: {typed}", s.name())
        }
        Mode::Confirm { id, reason, .. } => format!(
            "deny {id}{}? y confirms, any other key cancels",
            reason.as_deref().map(|r| format!(" with reason {:?}", escape(r))).unwrap_or_default()
        ),
        Mode::Reason { text, .. } => format!("reason for the agent (Enter, Esc cancels): {}", escape(text)),
    };
    let mut out = std::io::stdout().lock();
    queue!(out, terminal::Clear(terminal::ClearType::All), cursor::MoveTo(0, 0))?;
    // The bottom line may hold a code to type back: wrapped, never cut.
    let bottom = wrap(&bottom, w.saturating_sub(1));
    for (i, (line, strong)) in lines.iter().take(h.saturating_sub(bottom.len())).enumerate() {
        queue!(out, cursor::MoveTo(0, i as u16))?;
        if *strong {
            queue!(out, style::SetAttribute(style::Attribute::Reverse))?;
        }
        let line: String = line.chars().take(w).collect();
        queue!(out, style::Print(line), style::SetAttribute(style::Attribute::Reset))?;
    }
    for (i, line) in bottom.iter().enumerate() {
        let row = rows.saturating_sub((bottom.len() - i) as u16);
        queue!(out, cursor::MoveTo(0, row), style::Print(line))?;
    }
    out.flush()?;
    Ok(())
}
