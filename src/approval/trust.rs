//! Trust records for rules files that can loosen the rules: a project's `.cmdguard.toml` and
//! files given with `--rules`. Restrictions in any file always apply; a file's loosening parts
//! (`[[allow]]`, `disable`, a longer `timeout` or `session_ttl`) apply only while the file's exact
//! bytes are trusted. A record is sha256(path, NUL, content), kept in `trust.json` in the state
//! directory, so any edit — by an agent or anyone — suspends the loosening until the user looks
//! at the file again with `cmdguard trust`.
//!
//! A record binds the path it was made for. The directory part is resolved (the same project
//! reached two ways is one project), the file's own name is not: a `.cmdguard.toml` that is a
//! symbolic link to a file trusted elsewhere is a different path, with no trust of its own, so a
//! project cannot borrow another project's trust by linking to its file.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::state;

const RECORDS: &str = "trust.json";
const LOCK: &str = "trust.lock";

/// Whether a file's current bytes are trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    Trusted,
    /// Trusted once, but the bytes changed since.
    Changed,
    /// Never trusted.
    Never,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    version: u32,
    files: BTreeMap<String, Entry>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Entry {
    /// Digests of trusted contents. Normally one; two only for the instant in which cmdguard
    /// itself rewrites the file (see `Store::replace_file`).
    sha256: Vec<String>,
    trusted_at: u64,
}

/// The name a file is recorded under: its directory's canonical path and its own name, as given
/// (a link is recorded as the link, never as what it points to).
pub fn record_path(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()).join(name),
        _ => absolute,
    }
}

fn digest(path: &Path, content: &[u8]) -> String {
    state::sha256_hex(&[path.as_os_str().as_encoded_bytes(), b"\0", content])
}

fn read_records(dir: &Path) -> Result<Records> {
    let path = dir.join(RECORDS);
    match state::read_optional(&path)? {
        None => Ok(Records { version: 1, ..Records::default() }),
        Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            anyhow::anyhow!(
                "the trust records {shown} are damaged ({e}), so no rules file counts as trusted and their loosening is ignored; move the file away (mv {shown} {shown}.damaged) and trust your project files again with `cmdguard trust`",
                shown = path.display()
            )
        }),
    }
}

/// The trust state of `path` holding `content`. Reads without locking: records are replaced by
/// atomic rename, so a reader sees the old set or the new one.
pub fn lookup(path: &Path, content: &[u8]) -> Result<TrustState> {
    let key = record_path(path);
    let records = read_records(&state::dir()?)?;
    Ok(state_of(&records, &key, content))
}

fn state_of(records: &Records, key: &Path, content: &[u8]) -> TrustState {
    match records.files.get(&key.display().to_string()) {
        None => TrustState::Never,
        Some(e) if e.sha256.contains(&digest(key, content)) => TrustState::Trusted,
        Some(_) => TrustState::Changed,
    }
}

/// The trust records, locked for writing until dropped.
pub struct Store {
    _lock: File,
    dir: PathBuf,
    records: Records,
}

impl Store {
    pub fn open() -> Result<Store> {
        let dir = state::dir()?;
        let lock = state::lock(&dir.join(LOCK))?;
        let records = read_records(&dir)?;
        Ok(Store { _lock: lock, dir, records })
    }

    fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec_pretty(&self.records)?;
        state::write_atomic(&self.dir.join(RECORDS), &bytes, 0o600)
    }

    pub fn state(&self, path: &Path, content: &[u8]) -> TrustState {
        state_of(&self.records, &record_path(path), content)
    }

    /// Trusts exactly `content` at `path` (replacing any earlier record for that path).
    pub fn trust(&mut self, path: &Path, content: &[u8]) -> Result<()> {
        let key = record_path(path);
        let new = digest(&key, content);
        super::trusted_copy::keep(&self.dir, &new, content)?;
        let entry = Entry { sha256: vec![new.clone()], trusted_at: state::now() };
        let old = self.records.files.insert(key.display().to_string(), entry);
        self.save()?;
        for d in old.into_iter().flat_map(|e| e.sha256).filter(|d| *d != new) {
            super::trusted_copy::drop_copy(&self.dir, &d);
        }
        Ok(())
    }

    /// The bytes last trusted at `path`, if a copy was kept (files trusted by cmdguard 0.1's
    /// earlier builds have none).
    pub fn trusted_content(&self, path: &Path) -> Option<String> {
        let entry = self.records.files.get(&record_path(path).display().to_string())?;
        entry.sha256.iter().rev().find_map(|d| super::trusted_copy::read(&self.dir, d))
    }

    /// Forgets `path`. Returns whether there was a record.
    pub fn untrust(&mut self, path: &Path) -> Result<bool> {
        let removed = self.records.files.remove(&record_path(path).display().to_string());
        if removed.is_some() {
            self.save()?;
        }
        for d in removed.iter().flat_map(|e| &e.sha256) {
            super::trusted_copy::drop_copy(&self.dir, d);
        }
        Ok(removed.is_some())
    }

    /// Replaces the file at `path` with `new`, atomically. When
    /// `carry_trust` is set the new bytes are trusted with no moment at which the file on disk
    /// is untrusted: the new digest is recorded first, then the file is renamed into place, then
    /// the old digest is dropped.
    pub fn replace_file(&mut self, path: &Path, new: &[u8], carry_trust: bool) -> Result<()> {
        let mode = std::fs::metadata(path).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777);
        if !carry_trust {
            return state::write_atomic(path, new, mode.unwrap_or(0o644));
        }
        let key = record_path(path);
        let name = key.display().to_string();
        let new_digest = digest(&key, new);
        super::trusted_copy::keep(&self.dir, &new_digest, new)?;
        let entry = self.records.files.entry(name.clone()).or_default();
        entry.sha256.push(new_digest.clone());
        entry.trusted_at = state::now();
        self.save()?;
        state::write_atomic(path, new, mode.unwrap_or(0o644))?;
        let entry = self.records.files.entry(name).or_default();
        let old: Vec<String> = entry.sha256.iter().filter(|d| **d != new_digest).cloned().collect();
        entry.sha256.retain(|d| *d == new_digest);
        self.save()?;
        for d in old {
            super::trusted_copy::drop_copy(&self.dir, &d);
        }
        Ok(())
    }
}
