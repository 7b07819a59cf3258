//! `audit.jsonl` in the state directory: one JSON object per decision that something made —
//! a rule, the user at the prompt, a session grant, an allow entry, a timeout, the lack of a
//! terminal. Commands that matched no rule are not recorded. Each record is one `write` to a
//! file opened for appending, under an exclusive lock, so concurrent processes never interleave
//! or lose lines; a write cut short (a full disk) is taken back, and a record always starts on
//! a fresh line, so a torn line from before spoils only itself.

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::state;

pub const FILE: &str = "audit.jsonl";

/// Who or what decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecidedBy {
    /// A deny rule (the command is never run).
    Rule,
    /// The user, at the prompt.
    Prompt,
    /// A grant given earlier for this session.
    SessionGrant,
    /// An `[[allow]]` entry.
    AllowEntry,
    /// Nobody answered in time.
    Timeout,
    /// No terminal to ask on.
    NoTerminal,
    /// A human at another terminal, through the approval queue (`approve`, `deny`, `watch`).
    Queue,
    /// cmdguard was stopped by a signal while asking.
    Signal,
    /// cmdguard removed a file that had no business in its state (`reason` names it).
    Cleanup,
    /// An approval code a human approved with `cmdguard approve CODE` (hook mode).
    ApprovalCode,
    /// Trial mode (`mode = "audit"`, `--audit`): nothing decided; the record is a would-be one.
    Audit,
    /// `cmdguard undo` restored a recovery point (`recovery` names it).
    Undo,
}

impl DecidedBy {
    pub fn name(self) -> &'static str {
        match self {
            DecidedBy::Rule => "rule",
            DecidedBy::Prompt => "prompt",
            DecidedBy::SessionGrant => "session-grant",
            DecidedBy::AllowEntry => "allow-entry",
            DecidedBy::Timeout => "timeout",
            DecidedBy::NoTerminal => "no-terminal",
            DecidedBy::Queue => "queue",
            DecidedBy::Signal => "signal",
            DecidedBy::Cleanup => "cleanup",
            DecidedBy::ApprovalCode => "approval-code",
            DecidedBy::Audit => "audit",
            DecidedBy::Undo => "undo",
        }
    }
}

/// One decision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// RFC 3339 UTC.
    pub time: String,
    /// Hash of the session key, if one was given (never the key itself).
    pub session: Option<String>,
    pub project: String,
    pub cwd: String,
    pub command: String,
    /// The engine's verdict: allow, ask or deny.
    pub verdict: String,
    /// Whether the command ran.
    pub ran: bool,
    pub decided_by: DecidedBy,
    /// The prompt's answer: once, session, always, deny.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choice: Option<String>,
    pub rules: Vec<String>,
    /// The user's reason for a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a queue decision, the command that made it (`approve`, `deny`, `watch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    pub pid: u32,
    /// What the command would destroy, when that was measured (`blast`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stake: Option<String>,
    /// The recovery point kept before the command ran (`cmdguard undo ID`), or the one undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
    /// Trial mode: the verdict would have stopped the command, but it ran (`log --would`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub would: bool,
    /// Trial mode: the exact `[[allow]]` commands that would let a would-be ask through
    /// (empty where no allow entry can, as for a deny or text cmdguard could not read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
}

impl Record {
    /// A record made now by this process; the caller fills in where and for whom.
    pub fn new(decided_by: DecidedBy, command: String, verdict: &str, rules: Vec<String>) -> Record {
        Record {
            time: state::rfc3339(state::now()),
            session: None,
            project: String::new(),
            cwd: String::new(),
            command,
            verdict: verdict.to_string(),
            ran: false,
            decided_by,
            choice: None,
            rules,
            reason: None,
            via: None,
            pid: std::process::id(),
            stake: None,
            recovery: None,
            would: false,
            allow: Vec::new(),
        }
    }
}

/// Appends one record, saying on stderr (one line) when it could not: the decision stands
/// either way, but the user should know the log has a gap.
pub fn record(record: &Record) {
    if let Err(e) = state::dir().and_then(|dir| append(&dir.join(FILE), record)) {
        eprintln!(
            "cmdguard: warning: this decision is not in the audit log ({e:#}); free space on that file system or fix the file's permissions"
        );
    }
}

/// Appends one record to the log at `path`, under its lock.
pub fn append(path: &Path, record: &Record) -> Result<()> {
    let mut file = state::open_private(path, true)?;
    file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    let len = file.metadata().with_context(|| format!("cannot read {}", path.display()))?.len();
    let mut last = [b'\n'];
    if len > 0 {
        file.read_exact_at(&mut last, len - 1).with_context(|| format!("cannot read {}", path.display()))?;
    }
    // A line left without its end (a write cut short by a full disk or a killed process) is
    // ended first, so this record starts a line of its own.
    let mut line = if last[0] == b'\n' { Vec::new() } else { vec![b'\n'] };
    serde_json::to_writer(&mut line, record)?;
    line.push(b'\n');
    if let Err(e) = file.write_all(&line) {
        // Half a record would read as a damaged line: take it back, if the disk lets us.
        let _ = file.set_len(len);
        return Err(e).with_context(|| format!("cannot append to {}", path.display()));
    }
    file.sync_data().with_context(|| format!("cannot flush {} to disk", path.display()))
}

/// Every record in the log, oldest first. Lines that do not parse are skipped and counted.
pub fn read_all(path: &Path) -> Result<(Vec<Record>, usize)> {
    let Some(bytes) = state::read_optional(path)? else { return Ok((Vec::new(), 0)) };
    let mut bad = 0;
    let mut out = Vec::new();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        match serde_json::from_slice(line) {
            Ok(r) => out.push(r),
            Err(_) => bad += 1,
        }
    }
    Ok((out, bad))
}
