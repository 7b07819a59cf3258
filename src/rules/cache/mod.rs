//! The rules cache: what `compile::parse_file` made of a rules file's exact bytes, kept in the
//! state directory (`rules-cache/`, 0700, each entry 0600) so that the next start reads it back
//! instead of parsing the TOML and every pattern again; the patterns compile when first matched.
//!
//! An entry is named by a SHA-256 of the file's bytes, cmdguard's version, the cache format and
//! the binary's build id, so a rebuilt cmdguard never trusts what another build checked. It holds
//! that key and a SHA-256 of its payload; an entry that is not the user's own and private, or
//! that does not verify or decode, is ignored, and the full load writes it again. Only a file
//! that loaded without error is written. Writers rename a private temporary file into place, so
//! concurrent writers of one entry leave one whole copy. A cache that cannot be read or written
//! costs a full load, never a command.

mod build_id;
mod codec;

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

use super::Layer;
use super::compile::{self, FileItems};
use crate::config::ConfigError;

/// The cache's directory in the state directory.
pub const DIR: &str = "rules-cache";

/// The first bytes of every entry.
const MAGIC: [u8; 8] = *b"cgrules\0";
/// The payload's layout (`codec`); a change that is not a new build of cmdguard bumps it.
const FORMAT: u32 = 3;
/// Magic, format, key, payload checksum.
const HEADER: usize = 8 + 4 + 32 + 32;
/// Largest entry read or written: a payload holds the file's strings and its patterns' literals,
/// which may be several times the pattern (`[ab][cd][ef]` has eight).
const MAX_ENTRY_BYTES: usize = 16 * compile::MAX_FILE_BYTES;
/// Entries kept: one per rules file in use (the user's, projects', versions of them being
/// edited), with room to spare. Each write removes the least recently used beyond it.
const MAX_ENTRIES: usize = 32;
/// An entry last used longer ago than this is marked used again when read (a write to the file's
/// metadata, so not on every command).
const REFRESH: Duration = Duration::from_secs(3600);
/// A temporary file older than this belongs to a writer that died.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// Where entries are read and written; `None` when there is no state directory.
pub struct Cache {
    dir: Option<PathBuf>,
}

impl Cache {
    /// The cache in cmdguard's state directory (created only when an entry is written).
    pub fn open() -> Cache {
        Cache { dir: crate::state::dir_path().ok().map(|d| d.join(DIR)) }
    }

    pub fn at(dir: PathBuf) -> Cache {
        Cache { dir: Some(dir) }
    }

    /// `compile::parse_file` of `text`, from the cache when it holds these bytes. Errors are
    /// `parse_file`'s own: a file that fails is checked in full every time and never cached.
    pub fn load(&self, file: &str, text: &str, layer: Layer) -> Result<FileItems, ConfigError> {
        let Some((dir, key)) = self.dir.as_deref().zip(key(text)) else {
            return compile::parse_file(file, text, layer);
        };
        let path = dir.join(format!("{}.bin", crate::state::hex(&key)));
        if let Some(items) = read(&path, &key).and_then(|entry| codec::decode(&entry[HEADER..], file, layer)) {
            return Ok(items);
        }
        let items = compile::parse_file(file, text, layer)?;
        // Best effort: the next start checks the file in full again.
        let _ = write(dir, &path, &key, &codec::encode(&items));
        Ok(items)
    }
}

/// The entry's key for a file holding `text`; `None` when this binary has no build id to tell
/// it from other builds (then nothing is cached).
fn key(text: &str) -> Option<[u8; 32]> {
    let build = build_id::get()?;
    let mut h = Sha256::new();
    h.update(b"cmdguard rules cache\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(b"\0");
    h.update(FORMAT.to_le_bytes());
    h.update((build.len() as u64).to_le_bytes());
    h.update(build);
    h.update(text.as_bytes());
    Some(h.finalize().into())
}

/// The entry at `path` if it is the user's own, private, and verifies for `key`.
fn read(path: &Path, key: &[u8; 32]) -> Option<Vec<u8>> {
    let mut file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC).open(path).ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: geteuid has no preconditions.
    let mine = meta.uid() == unsafe { libc::geteuid() };
    if !meta.is_file() || !mine || meta.mode() & 0o077 != 0 {
        return None;
    }
    if meta.len() > MAX_ENTRY_BYTES as u64 {
        return None;
    }
    let mut entry = Vec::with_capacity(meta.len() as usize);
    (&mut file).take(MAX_ENTRY_BYTES as u64).read_to_end(&mut entry).ok()?;
    verify(&entry, key)?;
    refresh(&file, &meta);
    Some(entry)
}

/// Whether `entry` is whole and made for `key`.
fn verify(entry: &[u8], key: &[u8; 32]) -> Option<()> {
    let (head, payload) = entry.split_at_checked(HEADER)?;
    let checksum = Sha256::digest(payload);
    (head[..8] == MAGIC && head[8..12] == FORMAT.to_le_bytes() && head[12..44] == key[..] && head[44..] == checksum[..])
        .then_some(())
}

/// Marks an entry not used for a while as used, so pruning keeps it.
fn refresh(file: &File, meta: &std::fs::Metadata) {
    let now = SystemTime::now();
    if meta.modified().ok().and_then(|m| now.duration_since(m).ok()).is_some_and(|age| age > REFRESH) {
        let _ = file.set_modified(now);
    }
}

/// Writes the entry for `key` and prunes the directory.
fn write(dir: &Path, path: &Path, key: &[u8; 32], payload: &[u8]) -> anyhow::Result<()> {
    anyhow::ensure!(HEADER + payload.len() <= MAX_ENTRY_BYTES, "a rules cache entry would be too large");
    if let Some(state) = dir.parent() {
        crate::state::private_dir(state)?;
    }
    crate::state::private_dir(dir)?;
    let mut entry = Vec::with_capacity(HEADER + payload.len());
    entry.extend_from_slice(&MAGIC);
    entry.extend_from_slice(&FORMAT.to_le_bytes());
    entry.extend_from_slice(key);
    entry.extend_from_slice(&Sha256::digest(payload));
    entry.extend_from_slice(payload);
    crate::state::write_replaceable(path, &entry)?;
    prune(dir, path);
    Ok(())
}

/// Keeps the `MAX_ENTRIES` most recently used entries, `written` among them (times may tie on a
/// file system with coarse clocks), and removes dead writers' temporary files.
fn prune(dir: &Path, written: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    let mut entries = Vec::new();
    for e in listing.flatten() {
        let Ok(meta) = e.metadata() else { continue };
        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".tmp") && now.duration_since(modified).is_ok_and(|age| age > STALE_TEMP) {
            let _ = std::fs::remove_file(e.path());
        } else if name.ends_with(".bin") && e.path() != written {
            entries.push((modified, e.path()));
        }
    }
    if entries.len() >= MAX_ENTRIES {
        entries.sort();
        for (_, path) in &entries[..=entries.len() - MAX_ENTRIES] {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests;
