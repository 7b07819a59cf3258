//! Where recovery points live: `recovery/ID/` in the state directory (0700), each with its
//! `point.json` and the copies it keeps under `data/`. A point is built in a hidden
//! `.new-ID` directory and renamed into place only once complete, so a crash (even kill -9)
//! while it is made never leaves a partial point to offer for undo; what such a crash leaves
//! (the hidden directory, a git ref with no point) is removed by the next prune. Ids sort by
//! time: `20261202-151233-a3f1`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::Point;
use crate::state;

pub const DIR: &str = "recovery";
const POINT: &str = "point.json";
const UNDONE: &str = "undone";
/// A hidden directory or an orphan ref older than this was left by a crash.
pub const ABANDONED_AFTER: u64 = 3600;

pub fn root() -> Result<PathBuf> {
    state::subdir(DIR)
}

/// A fresh id: the time (UTC) and four random hex digits.
pub fn new_id() -> String {
    let t = state::rfc3339(state::now());
    let digits: String = t.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}-{}", &digits[..8], &digits[8..14], state::random_hex(2))
}

/// The time an id was made, from the id itself (`None` if it is not one).
pub fn id_time(id: &str) -> Option<u64> {
    let (date, rest) = id.split_once('-')?;
    let time = rest.split('-').next()?;
    if date.len() != 8 || time.len() != 6 {
        return None;
    }
    let text = format!("{}-{}-{}T{}:{}:{}Z", &date[..4], &date[4..6], &date[6..], &time[..2], &time[2..4], &time[4..]);
    state::parse_rfc3339(&text)
}

/// A point being made.
pub struct Building {
    pub dir: PathBuf,
    pub parts: Vec<super::Part>,
    next: usize,
    /// When keeping must stop (hook mode, before the host's limit), if ever.
    pub deadline: Option<std::time::Instant>,
}

impl Building {
    pub fn start(id: &str) -> Result<Building> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = root()?.join(format!(".new-{id}"));
        // Created, never reused: two processes can never build into one directory.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Building { dir, parts: Vec::new(), next: 0, deadline: None })
    }

    /// A fresh place under `data/` for one kept target, as its path relative to the point.
    pub fn slot(&mut self) -> Result<(String, PathBuf)> {
        let data = self.dir.join("data");
        state::private_dir(&data)?;
        let rel = format!("data/{}", self.next);
        self.next += 1;
        Ok((rel.clone(), self.dir.join(rel)))
    }

    /// Whether the deadline has come.
    pub fn over(&self) -> bool {
        self.deadline.is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// A fresh number for a git ref of this point (`refs/cmdguard/ID/N`).
    pub fn number(&mut self) -> usize {
        self.next += 1;
        self.next - 1
    }

    /// A scratch file inside the point (a temporary git index).
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn abandon(self) {
        remove_tree(&self.dir);
    }

    /// Writes `point.json`, flushed, then renames the whole directory into place.
    pub fn finish(self, point: &Point) -> Result<()> {
        let json = serde_json::to_vec_pretty(point)?;
        state::write_atomic(&self.dir.join(POINT), &json, 0o600)?;
        for scratch in ["index", "blobs"] {
            let p = self.dir.join(scratch);
            let _ = std::fs::remove_file(&p);
            let _ = std::fs::remove_dir_all(&p);
        }
        let target = self.dir.with_file_name(&point.id);
        std::fs::rename(&self.dir, &target).with_context(|| format!("cannot move {} into place", target.display()))?;
        if let Ok(d) = std::fs::File::open(target.parent().unwrap_or(&target)) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// One point found in the store.
pub struct Found {
    pub point: Point,
    pub dir: PathBuf,
    /// When it was undone, if it was.
    pub undone: Option<u64>,
}

/// Every complete point that has not expired, oldest first.
pub fn list(ttl: u64) -> Result<Vec<Found>> {
    let root = root()?;
    let mut out = Vec::new();
    let now = state::now();
    for e in std::fs::read_dir(&root).with_context(|| format!("cannot read {}", root.display()))? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(t) = id_time(&name) else { continue };
        if name.starts_with('.') || now.saturating_sub(t) > ttl {
            continue;
        }
        let Ok(Some(bytes)) = state::read_optional(&e.path().join(POINT)) else { continue };
        let Ok(point) = serde_json::from_slice::<Point>(&bytes) else { continue };
        if point.id != name {
            continue;
        }
        let undone = state::read_optional(&e.path().join(UNDONE))
            .ok()
            .flatten()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.trim().parse().ok());
        out.push(Found { point, dir: e.path(), undone });
    }
    out.sort_by(|a, b| a.point.id.cmp(&b.point.id));
    Ok(out)
}

/// The point an id (or its first characters) names; without one, the newest not yet undone
/// in `project` (a point of another project is undone only by its id).
pub fn find(id: Option<&str>, project: &Path, ttl: u64) -> Result<Found> {
    let mut all = list(ttl)?;
    match id {
        None => {
            let here = project.display().to_string();
            match all.iter().rposition(|f| f.undone.is_none() && f.point.project == here) {
                Some(i) => Ok(all.swap_remove(i)),
                None if all.iter().any(|f| f.undone.is_none()) => bail!(
                    "no recovery point to undo in {}; `cmdguard undo --list` shows the others, and `cmdguard undo ID` undoes one",
                    crate::term::escape(&here)
                ),
                None => bail!("no recovery point to undo (`cmdguard undo --list` shows them)"),
            }
        }
        Some(id) => {
            let mut hits: Vec<usize> = (0..all.len()).filter(|i| all[*i].point.id.starts_with(id)).collect();
            match hits.len() {
                1 => Ok(all.swap_remove(hits.remove(0))),
                0 => bail!("no recovery point {id:?} (it may have expired; `cmdguard undo --list` shows them)"),
                _ => bail!("{id:?} names {} recovery points; give more of the id", hits.len()),
            }
        }
    }
}

pub fn mark_undone(dir: &Path) -> Result<()> {
    state::write_atomic(&dir.join(UNDONE), state::now().to_string().as_bytes(), 0o600)
}

/// Starts `cmdguard undo --prune` in the background when some point has expired or a crash
/// left one half made, so the command that is about to run never waits for it.
pub fn prune_later(ttl: u64) {
    if due(ttl).is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["undo", "--prune"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe; the child leaves our process group, so a Ctrl-C
    // meant for the command does not stop the prune half way.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let _ = cmd.spawn();
}

/// Point directories (and half-made ones) past their time.
fn due(ttl: u64) -> Vec<PathBuf> {
    let Ok(root) = state::dir_path().map(|d| d.join(DIR)) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(&root) else { return Vec::new() };
    let now = state::now();
    entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            match name.strip_prefix(".new-") {
                Some(id) => id_time(id).is_some_and(|t| now.saturating_sub(t) > ABANDONED_AFTER),
                None => id_time(&name).is_some_and(|t| now.saturating_sub(t) > ttl),
            }
        })
        .map(|e| e.path())
        .collect()
}

/// Removes expired points (their git refs first) and what crashes left; returns how many.
pub fn prune(ttl: u64) -> usize {
    let mut n = 0;
    for dir in due(ttl) {
        if let Ok(Some(bytes)) = state::read_optional(&dir.join(POINT))
            && let Ok(point) = serde_json::from_slice::<Point>(&bytes)
        {
            super::git::drop_refs(&point);
        }
        remove_tree(&dir);
        n += 1;
    }
    n
}

/// Removes a directory tree, first making every directory in it writable (a kept copy of a
/// read-only directory could not be emptied otherwise).
pub fn remove_tree(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700));
        if let Ok(entries) = std::fs::read_dir(&d) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(e.path());
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_their_time() {
        let id = new_id();
        let t = id_time(&id).expect("an id reads back");
        assert!(state::now().abs_diff(t) <= 2, "{id}");
        assert_eq!(id_time("20261202-151233-a3f1"), state::parse_rfc3339("2026-12-02T15:12:33Z"));
        assert_eq!(id_time("notes"), None);
        assert_eq!(id_time(".new-20261202-151233-a3f1"), None);
    }
}
