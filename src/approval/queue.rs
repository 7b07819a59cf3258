//! The approval queue for commands with no terminal to ask on (`no_tty = "wait"`). A waiting
//! cmdguard writes a request into its session's own directory under `queue/` in the state
//! directory (`queue/<key hash>/`, or `queue/no-session/` without a key) and waits for a
//! decision file next to it. A human resolves requests from any terminal (`cmdguard approve`,
//! `deny`, `watch`).
//!
//! Exactly once: a decision is a file created with `O_EXCL`. Whoever creates it first — an
//! approver, a second approver at the same moment, or the waiting process itself when it times
//! out or is stopped — decides; everyone else reads that decision. A request whose process is
//! gone is stale: listings show it as such and remove it. So do files that cmdguard did not
//! write whole (a request that does not parse, an unknown name, a temporary file left by a
//! writer that died), each removal recorded in the audit log.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::approval::session::Need;
use crate::signals::{Trap, Woke};
use crate::state;

const DIR: &str = "queue";
const NO_SESSION: &str = "no-session";

/// What the waiting cmdguard asks for.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub id: String,
    /// Hash of the session key, if one was given.
    pub session: Option<String>,
    pub project: String,
    pub cwd: String,
    pub command: String,
    /// Rule ids (and `core.*` concerns) that ask.
    pub rules: Vec<String>,
    /// What a session grant must cover.
    pub need: Need,
    /// Allow entries "always" would write; empty when "always" cannot cover the command.
    pub always: Vec<String>,
    pub pid: u32,
    /// The process's start time (clock ticks after boot), to tell a reused pid from the waiter.
    pub pid_start: Option<u64>,
    /// When the request was made, in milliseconds since the epoch.
    pub created_ms: u64,
    /// Seconds the waiter waits before it denies.
    pub timeout: u64,
    /// What the command would destroy, when measured (`blast`), for `watch` and `pending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stake: Option<String>,
}

impl Request {
    /// When the request was made, in seconds since the epoch.
    pub fn created(&self) -> u64 {
        self.created_ms / 1000
    }
}

/// How far an approval reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Once,
    Session,
    Always,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Once => "once",
            Scope::Session => "session",
            Scope::Always => "always",
        }
    }
}

/// Who ended a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Resolver {
    /// A human, with `cmdguard approve`, `deny` or `watch`.
    Human,
    /// Nobody answered in time.
    Timeout,
    /// The waiting process was stopped.
    Withdrawn,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Decision {
    pub approved: bool,
    pub scope: Option<Scope>,
    pub reason: Option<String>,
    pub by: Resolver,
    /// The command that decided (`approve`, `deny`, `watch`), for the audit log.
    pub via: String,
    pub at: u64,
}

/// A request as a listing sees it.
#[derive(Debug, Clone)]
pub struct Pending {
    pub request: Request,
    pub stale: bool,
    pub dir: PathBuf,
}

fn queue_dir(session: Option<&str>) -> Result<PathBuf> {
    state::subdir(DIR)?;
    state::subdir(&format!("{DIR}/{}", session.unwrap_or(NO_SESSION)))
}

fn request_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.request.json"))
}

fn decision_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.decision.json"))
}

/// The start time of process `pid` (Linux: field 22 of /proc/PID/stat); `None` elsewhere.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn alive(r: &Request) -> bool {
    let Ok(pid) = libc::pid_t::try_from(r.pid) else { return false };
    // SAFETY: signal 0 only checks that the process exists.
    let exists =
        unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    exists && (r.pid_start.is_none() || process_start(r.pid) == r.pid_start)
}

/// Parks a request in its session's queue.
pub fn submit(request: &Request) -> Result<PathBuf> {
    let dir = queue_dir(request.session.as_deref())?;
    state::write_atomic(&request_path(&dir, &request.id), &serde_json::to_vec_pretty(request)?, 0o600)?;
    Ok(dir)
}

/// Records `decision` for the request unless one exists. Returns the decision in force: ours,
/// or the one that was there first.
pub fn decide(dir: &Path, id: &str, decision: &Decision) -> Result<(bool, Decision)> {
    let path = decision_path(dir, id);
    if state::write_new(&path, &serde_json::to_vec(decision)?, 0o600)? {
        Ok((true, decision.clone()))
    } else {
        Ok((false, read_decision(&path)?))
    }
}

fn read_decision(path: &Path) -> Result<Decision> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is damaged", path.display()))
}

/// Removes a request and its decision (a stale request, whose waiter is gone).
pub fn remove(dir: &Path, id: &str) {
    let _ = std::fs::remove_file(request_path(dir, id));
    let _ = std::fs::remove_file(decision_path(dir, id));
}

/// The waiter is done with its request: the request goes, the decision stays behind as a
/// tombstone, so an approver still confirming on a terminal finds the request decided instead
/// of deciding it again (`all` sweeps tombstones later).
pub fn finish(dir: &Path, id: &str) {
    let _ = std::fs::remove_file(request_path(dir, id));
}

/// How long a decision outlives its request before `all` removes it.
const TOMBSTONE_SECS: u64 = 3600;
/// A temporary file older than this was left by a writer that died: writers rename theirs
/// into place within milliseconds.
const TEMP_SECS: u64 = 60;

/// How a wait ended.
pub enum Waited {
    Decided(Decision),
    /// A signal stopped the waiter; the request was withdrawn (unless a human decided first).
    Signal(i32, Decision),
}

/// Waits for a decision on `request`, polling with backoff (first checks within milliseconds,
/// then every 200 ms at most: no busy CPU, and a decision is noticed within 250 ms). On timeout
/// or a signal the waiter tries to decide itself; a human's decision that landed first wins.
pub fn wait(dir: &Path, request: &Request, trap: &Trap) -> Result<Waited> {
    let deadline = Instant::now() + Duration::from_secs(request.timeout);
    let path = decision_path(dir, &request.id);
    let mut interval = Duration::from_millis(10);
    let own = |by: Resolver, reason: &str| Decision {
        approved: false,
        scope: None,
        reason: None,
        by,
        via: reason.to_string(),
        at: state::now(),
    };
    loop {
        if path.exists() {
            return Ok(Waited::Decided(read_decision(&path)?));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(Waited::Decided(decide(dir, &request.id, &own(Resolver::Timeout, "timeout"))?.1));
        }
        if let Woke::Signal(sig) = trap.wait(None, interval.min(deadline - now)) {
            let (_, d) = decide(dir, &request.id, &own(Resolver::Withdrawn, "signal"))?;
            return Ok(Waited::Signal(sig, d));
        }
        interval = (interval * 3 / 2).min(Duration::from_millis(200));
    }
}

/// Every request in every session's queue, oldest first. Stale requests (their process is gone)
/// are returned marked, and removed when `clean` is set.
pub fn all(clean: bool) -> Result<Vec<Pending>> {
    let root = state::subdir(DIR)?;
    let mut out = Vec::new();
    for session in std::fs::read_dir(&root).with_context(|| format!("cannot read {}", root.display()))? {
        let dir = session?.path();
        if !dir.is_dir() {
            if clean {
                discard(&dir, "not a session's queue directory");
            }
            continue;
        }
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if let Some(id) = name.strip_suffix(".decision.json").filter(|id| is_id(id)) {
                if clean && older_than(&path, TOMBSTONE_SECS) && !request_path(&dir, id).exists() {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            if name.starts_with('.') && name.ends_with(".tmp") {
                if clean && older_than(&path, TEMP_SECS) {
                    discard(&path, "a temporary file left by a cmdguard that stopped while writing it");
                }
                continue;
            }
            let Some(id) = name.strip_suffix(".request.json").filter(|id| is_id(id)) else {
                if clean {
                    discard(&path, "not a file cmdguard keeps in its approval queue");
                }
                continue;
            };
            let Ok(bytes) = std::fs::read(&path) else { continue }; // withdrawn meanwhile
            let request = match serde_json::from_slice::<Request>(&bytes) {
                Ok(r) if r.id == id => r,
                _ => {
                    if clean {
                        discard(&path, "a request that cannot be read");
                    }
                    continue;
                }
            };
            if decision_path(&dir, id).exists() {
                continue; // decided; the waiter is about to take it
            }
            let stale = !alive(&request);
            if stale && clean {
                remove(&dir, id);
                record_stale(&request);
            }
            out.push(Pending { request, stale, dir: dir.clone() });
        }
    }
    out.sort_by(|a, b| (a.request.created_ms, &a.request.id).cmp(&(b.request.created_ms, &b.request.id)));
    Ok(out)
}

/// Whether `name` could be a request id (`new_id` makes them).
fn is_id(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Whether `path` was last changed more than `secs` ago.
fn older_than(path: &Path, secs: u64) -> bool {
    let modified = path.symlink_metadata().and_then(|m| m.modified());
    modified.ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age.as_secs() > secs)
}

/// Removes a file that has no business in the queue, and records that in the audit log.
fn discard(path: &Path, why: &str) {
    if std::fs::remove_file(path).is_ok() {
        let record = crate::approval::audit::Record {
            reason: Some(format!("removed {} from the approval queue: {why}", path.display())),
            ..crate::approval::audit::Record::new(
                crate::approval::audit::DecidedBy::Cleanup,
                String::new(),
                "ask",
                Vec::new(),
            )
        };
        crate::approval::audit::record(&record);
    }
}

/// A waiter that was killed outright could not record its end; the cleanup does.
fn record_stale(r: &Request) {
    let record = crate::approval::audit::Record {
        session: r.session.clone(),
        project: r.project.clone(),
        cwd: r.cwd.clone(),
        reason: Some("the waiting cmdguard was gone (killed); its request was removed".into()),
        pid: r.pid,
        ..crate::approval::audit::Record::new(
            crate::approval::audit::DecidedBy::Signal,
            r.command.clone(),
            "ask",
            r.rules.clone(),
        )
    };
    crate::approval::audit::record(&record);
}

/// The live request whose id starts with `prefix`; an error if none or several match.
pub fn find(prefix: &str) -> Result<Pending> {
    let prefix = prefix.trim();
    if prefix.is_empty() {
        bail!("give a request id (or its first characters); `cmdguard pending` lists them");
    }
    let matches: Vec<Pending> = all(false)?.into_iter().filter(|p| p.request.id.starts_with(prefix)).collect();
    match matches.len() {
        0 => bail!("no pending request {prefix:?}; `cmdguard pending` lists them"),
        1 => Ok(matches.into_iter().next().expect("one match")),
        n => bail!("{n} pending requests start with {prefix:?}; give more characters of the id"),
    }
}

/// The live requests of one session (by key hash), oldest first.
pub fn of_session(hash: &str) -> Result<Vec<Pending>> {
    Ok(all(false)?.into_iter().filter(|p| p.request.session.as_deref() == Some(hash) && !p.stale).collect())
}

/// A fresh request id.
pub fn new_id() -> String {
    state::random_hex(6)
}
