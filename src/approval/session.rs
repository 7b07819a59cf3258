//! Session grants: "approve for this session" remembered per session key and project. One file
//! per key under `sessions/` in the state directory, named by a hash of the key (keys are never
//! stored in clear), changed only under that key's lock and replaced atomically, so concurrent
//! cmdguard processes never lose a grant and one key's grants never touch another's.
//!
//! A grant lists rule ids; a later command in the same session and project passes if every rule
//! that asks about it is granted. A command the analysis could not fully read (`core.*`
//! concerns) is granted by its exact text only, never by the concern's id: granting "too
//! complex" would let any complex command through.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::state;

const DIR: &str = "sessions";

/// What a command needs granted to pass without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Need {
    /// Ids of the ask rules that matched (allowed hits and deny rules excluded).
    pub rules: Vec<String>,
    /// The exact command text, when the analysis raised concerns.
    pub command: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SessionFile {
    version: u32,
    key_sha256: String,
    grants: Vec<Grant>,
}

/// The grants of one session for one project.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Grant {
    pub project: String,
    pub rules: Vec<String>,
    #[serde(default)]
    pub commands: Vec<String>,
    pub granted_at: u64,
    pub last_used: u64,
}

impl Grant {
    fn covers(&self, need: &Need) -> bool {
        need.rules.iter().all(|r| self.rules.contains(r))
            && need.command.as_ref().is_none_or(|c| self.commands.contains(c))
    }

    fn add(&mut self, need: &Need) {
        for r in &need.rules {
            if !self.rules.contains(r) {
                self.rules.push(r.clone());
            }
        }
        if let Some(c) = &need.command
            && !self.commands.contains(c)
        {
            self.commands.push(c.clone());
        }
    }
}

fn paths(dir: &Path, hash: &str) -> (PathBuf, PathBuf) {
    (dir.join(format!("{hash}.json")), dir.join(format!("{hash}.lock")))
}

fn read(path: &Path, hash: &str) -> Result<SessionFile> {
    match state::read_optional(path)? {
        None => Ok(SessionFile { version: 1, key_sha256: hash.to_string(), grants: Vec::new() }),
        Some(b) => serde_json::from_slice(&b)
            .with_context(|| format!("{} is damaged; `cmdguard session clear` removes it", path.display())),
    }
}

fn write(path: &Path, file: &SessionFile) -> Result<()> {
    if file.grants.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        };
    }
    state::write_atomic(path, &serde_json::to_vec_pretty(file)?, 0o600)
}

/// A grant lasts `ttl` from its last use. One dated in the future (a clock set back, a file
/// edited by hand) is expired: counted from a future time, it would outlive its ttl.
fn expired(g: &Grant, ttl: u64, now: u64) -> bool {
    g.granted_at > now || g.last_used > now || g.last_used.saturating_add(ttl) < now
}

/// Whether `key`'s grants for `project` cover `need`; a grant that is used is kept alive.
pub fn covers(key: &str, project: &Path, need: &Need, ttl: u64) -> Result<bool> {
    let dir = state::subdir(DIR)?;
    let hash = state::key_hash(key);
    let (path, lock) = paths(&dir, &hash);
    if !path.exists() {
        return Ok(false);
    }
    let _lock = state::lock(&lock)?;
    let mut file = read(&path, &hash)?;
    let now = state::now();
    let before = file.grants.len();
    file.grants.retain(|g| !expired(g, ttl, now));
    let project = project.display().to_string();
    let found = file.grants.iter_mut().find(|g| g.project == project && g.covers(need));
    let covered = found.is_some();
    if let Some(g) = found {
        g.last_used = now;
    }
    if covered || file.grants.len() != before {
        write(&path, &file)?;
    }
    Ok(covered)
}

/// Records that `key` may, in `project`, run what `need` names without asking.
pub fn grant(key: &str, project: &Path, need: &Need, ttl: u64) -> Result<()> {
    grant_hash(&state::key_hash(key), project, need, ttl)
}

/// `grant` for a session known by its key's hash (an approval from the queue).
pub fn grant_hash(hash: &str, project: &Path, need: &Need, ttl: u64) -> Result<()> {
    anyhow::ensure!(hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "not a session hash: {hash:?}");
    let dir = state::subdir(DIR)?;
    let (path, lock) = paths(&dir, hash);
    let _lock = state::lock(&lock)?;
    let mut file = read(&path, hash)?;
    let now = state::now();
    file.grants.retain(|g| !expired(g, ttl, now));
    let project = project.display().to_string();
    match file.grants.iter_mut().find(|g| g.project == project) {
        Some(g) => {
            g.add(need);
            g.last_used = now;
        }
        None => {
            let mut g = Grant { project, rules: Vec::new(), commands: Vec::new(), granted_at: now, last_used: now };
            g.add(need);
            file.grants.push(g);
        }
    }
    write(&path, &file)
}

/// Every live grant: the key's hash and the grant.
pub fn list(ttl: u64) -> Result<Vec<(String, Grant)>> {
    let dir = state::subdir(DIR)?;
    let now = state::now();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let hash = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let file = read(&path, &hash)?;
        out.extend(file.grants.into_iter().filter(|g| !expired(g, ttl, now)).map(|g| (hash.clone(), g)));
    }
    out.sort_by_key(|g| std::cmp::Reverse(g.1.last_used));
    Ok(out)
}

/// Removes every grant of `key`. Returns how many there were.
pub fn revoke(key: &str) -> Result<usize> {
    revoke_hash(&state::key_hash(key))
}

/// Removes every grant of the session named by `key`, or by the start of its hash as
/// `session list` shows it (at least 8 hex digits, naming one session). `Err` with a usage
/// message when a shown hash is ambiguous.
pub fn revoke_shown(key: &str) -> Result<usize> {
    let dir = state::subdir(DIR)?;
    let own = state::key_hash(key);
    let is_hash = key.len() >= 8 && key.len() <= own.len() && key.bytes().all(|b| b.is_ascii_hexdigit());
    if !is_hash || dir.join(format!("{own}.json")).exists() {
        return revoke_hash(&own);
    }
    let prefix = key.to_ascii_lowercase();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            && stem.starts_with(&prefix)
        {
            found.push(stem.to_string());
        }
    }
    match found.as_slice() {
        [] => revoke_hash(&own),
        [one] => revoke_hash(one),
        _ => Err(crate::cmd::UsageError(format!(
            "{key} is the start of {} sessions' hashes: give more of it, or the key itself",
            found.len()
        ))
        .into()),
    }
}

fn revoke_hash(hash: &str) -> Result<usize> {
    let dir = state::subdir(DIR)?;
    let (path, lock) = paths(&dir, hash);
    let _lock = state::lock(&lock)?;
    // A damaged file is removed all the same: revoking must always work.
    let n = read(&path, hash).map_or(0, |f| f.grants.len());
    write(&path, &SessionFile::default())?;
    Ok(n)
}

/// Removes every grant of every session. Returns how many there were.
pub fn clear() -> Result<usize> {
    let dir = state::subdir(DIR)?;
    let mut n = 0;
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let hash = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            n += revoke_hash(&hash)?;
        }
    }
    Ok(n)
}

/// A fresh session key: 128 random bits.
pub fn new_key() -> String {
    format!("cg-{}", state::random_hex(16))
}

#[cfg(test)]
mod tests {
    use super::{Grant, expired};

    #[test]
    fn a_grant_expires_after_its_ttl_or_if_dated_in_the_future() {
        let grant = |granted_at, last_used| Grant {
            project: String::new(),
            rules: Vec::new(),
            commands: Vec::new(),
            granted_at,
            last_used,
        };
        let (ttl, now) = (60, 10_000);
        assert!(!expired(&grant(9_000, 9_950), ttl, now));
        assert!(!expired(&grant(9_000, 10_000), ttl, now));
        assert!(expired(&grant(9_000, 9_900), ttl, now), "unused for longer than the ttl");
        assert!(expired(&grant(9_000, 10_001), ttl, now), "last used in the future");
        assert!(expired(&grant(10_001, 10_000), ttl, now), "granted in the future");
        assert!(expired(&grant(9_000, u64::MAX), u64::MAX, now));
    }
}
