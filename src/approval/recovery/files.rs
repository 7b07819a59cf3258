//! Recovery points for files: a copy, in the point's `data/`, of what `rm`, `find -delete`,
//! `shred`, `truncate` or `>` would destroy: contents, modes, modification times and symbolic
//! links (kept as links, never followed). A file that is only deleted is kept as a hard link
//! where the state directory is on the same file system: the same bytes, none copied. Sizes are summed first; above the `recovery_limit`
//! nothing is copied. Undo puts each target back where it was; a path where something new
//! now stands (after a deletion), or a file changed after the command ran (after an in-place
//! change), is newer work and is not overwritten without `--force`.

use std::collections::HashMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::store::Building;
use super::{NotKept, Part};
use crate::blast::target::FileOp;

/// One target kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Kept {
    /// Where it was (absolute).
    pub path: String,
    /// Where the copy is, relative to the point's directory.
    pub stored: String,
    /// What the command does to it: `remove`, `shred`, `truncate`, `clobber`.
    pub op: String,
    pub files: u64,
    pub bytes: u64,
    /// Directories in the copy and their modes (the copies themselves stay 0700 so the point
    /// can always be read and pruned), relative to the target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dirs: Vec<(String, u32)>,
    /// Sockets, pipes and devices inside the target, which are not kept.
    #[serde(default)]
    pub skipped: u64,
}

fn op_name(op: FileOp) -> &'static str {
    match op {
        FileOp::Remove => "remove",
        FileOp::Shred => "shred",
        FileOp::Truncate => "truncate",
        FileOp::Clobber => "clobber",
    }
}

pub fn describe(entries: &[Kept]) -> String {
    let files: u64 = entries.iter().map(|e| e.files).sum();
    let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
    let first = entries.first().map(|e| crate::term::escape(&e.path)).unwrap_or_default();
    let more = if entries.len() > 1 { format!(" and {} more", entries.len() - 1) } else { String::new() };
    format!("{} ({}) from {first}{more}", crate::blast::many(files, "file", "files"), crate::blast::size(bytes))
}

/// Copies the targets that exist into the point. A directory is kept whole when the command
/// is recursive, as an empty directory with `empty_dirs` (`find -delete` lists each after its
/// contents); otherwise only files are.
pub fn keep(
    b: &mut Building,
    op: FileOp,
    targets: &[PathBuf],
    recursive: bool,
    empty_dirs: bool,
    left: &mut u64,
) -> Result<Option<Part>, NotKept> {
    let mut chosen = Vec::new();
    let mut total = 0u64;
    for t in targets {
        let Ok(meta) = std::fs::symlink_metadata(t) else { continue };
        // `rm` without `-r` deletes no directory; `find -delete` lists the empty ones it removes.
        if meta.is_dir() && (op != FileOp::Remove || !(recursive || empty_dirs)) {
            continue;
        }
        let whole = meta.is_dir() && recursive;
        total = total.saturating_add(if whole { tree_size(t, *left, b.deadline)? } else { meta.len() });
        if total > *left {
            return Err(NotKept(format!(
                "it deletes more than the {} recovery limit (setting recovery_limit)",
                crate::state::human_size(*left)
            )));
        }
        if chosen.iter().any(|(c, _): &(PathBuf, bool)| t.starts_with(c)) {
            continue;
        }
        chosen.push((t.clone(), whole));
    }
    if chosen.is_empty() {
        return Ok(None);
    }
    let mut entries = Vec::new();
    for (t, whole) in chosen {
        let (rel, dest) = b.slot()?;
        let mut kept = Kept {
            path: t.display().to_string(),
            stored: rel,
            op: op_name(op).to_string(),
            files: 0,
            bytes: 0,
            dirs: Vec::new(),
            skipped: 0,
        };
        match copy(&t, &dest, whole, "", &mut kept, b.deadline) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(too_long()),
            Err(e) => return Err(NotKept(format!("cannot copy {}: {e}", t.display()))),
        }
        entries.push(kept);
    }
    *left -= total;
    Ok(Some(Part::Files { entries }))
}

fn too_long() -> NotKept {
    NotKept("keeping it would take longer than a hook may wait".into())
}

fn over(deadline: Option<std::time::Instant>) -> bool {
    deadline.is_some_and(|d| std::time::Instant::now() >= d)
}

/// The bytes under a directory, stopping once past `cap`.
fn tree_size(dir: &Path, cap: u64, deadline: Option<std::time::Instant>) -> Result<u64, NotKept> {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| NotKept(format!("cannot read {}: {e}", d.display())))?;
        for e in entries {
            if over(deadline) {
                return Err(too_long());
            }
            let e = e?;
            let meta = e.metadata()?;
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total = total.saturating_add(meta.len());
                if total > cap {
                    return Ok(total);
                }
            }
        }
    }
    Ok(total)
}

/// Copies `from` to `to`: a file with its mode and times, a link as a link, a directory (when
/// `whole`) with everything in it.
fn copy(
    from: &Path,
    to: &Path,
    whole: bool,
    rel: &str,
    kept: &mut Kept,
    deadline: Option<std::time::Instant>,
) -> std::io::Result<()> {
    if over(deadline) {
        return Err(std::io::ErrorKind::TimedOut.into());
    }
    let meta = std::fs::symlink_metadata(from)?;
    let ft = meta.file_type();
    if ft.is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
        set_times(to, &meta)?;
        kept.files += 1;
    } else if ft.is_file() {
        // A file the command only deletes is kept by a second link to it (no bytes copied, no
        // space taken beyond what the deletion would have freed); one changed in place, or on
        // another file system, is copied.
        let linked = kept.op == "remove" && std::fs::hard_link(from, to).is_ok();
        if !linked {
            std::fs::copy(from, to)?;
            set_times(to, &meta)?;
        }
        kept.files += 1;
        kept.bytes += meta.len();
    } else if ft.is_dir() {
        std::fs::DirBuilder::new().create(to)?;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700))?;
        kept.dirs.push((rel.to_string(), meta.mode() & 0o7777));
        if whole {
            let mut names: Vec<_> =
                std::fs::read_dir(from)?.map(|e| e.map(|e| e.file_name())).collect::<Result<_, _>>()?;
            names.sort();
            for name in names {
                let sub = if rel.is_empty() {
                    name.to_string_lossy().into_owned()
                } else {
                    format!("{rel}/{}", name.to_string_lossy())
                };
                copy(&from.join(&name), &to.join(&name), true, &sub, kept, deadline)?;
            }
        }
        set_times(to, &meta)?;
    } else {
        kept.skipped += 1;
    }
    Ok(())
}

/// Sets a path's access and modification times from `meta` (links themselves, not followed).
fn set_times(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let times = [
        libc::timespec { tv_sec: meta.atime(), tv_nsec: meta.atime_nsec() },
        libc::timespec { tv_sec: meta.mtime(), tv_nsec: meta.mtime_nsec() },
    ];
    // SAFETY: `c` is a valid NUL-terminated path and `times` two initialized timespecs.
    let r = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// What restoring one kept target would overwrite that changed after the point was made.
pub fn conflicts(point_dir: &Path, created: u64, entries: &[Kept]) -> Vec<String> {
    let _ = point_dir;
    let mut out = Vec::new();
    for e in entries {
        let path = Path::new(&e.path);
        let Ok(now) = std::fs::symlink_metadata(path) else { continue };
        let shown = crate::term::escape(&e.path);
        if e.op == "remove" {
            out.push(format!("{shown} exists again (something was put there after the deletion)"));
        } else if now.mtime() > created as i64 + 2 {
            out.push(format!("{shown} changed after the command ran"));
        }
    }
    out
}

/// Puts every kept target back (over what stands there now; `conflicts` says what that is).
pub fn restore(point_dir: &Path, entries: &[Kept]) -> std::io::Result<()> {
    for e in entries {
        let path = Path::new(&e.path);
        let from = point_dir.join(&e.stored);
        let modes: HashMap<&str, u32> = e.dirs.iter().map(|(r, m)| (r.as_str(), *m)).collect();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        if let Ok(meta) = std::fs::symlink_metadata(path)
            && (!meta.is_dir() || !std::fs::symlink_metadata(&from)?.is_dir())
        {
            // A file changed in place is replaced whole (a fresh file renamed over it).
            let tmp = path.with_file_name(format!(
                ".{}.cmdguard-undo.{}",
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                std::process::id()
            ));
            put_back(&from, &tmp, "", &modes, false)?;
            std::fs::rename(&tmp, path)?;
            continue;
        }
        put_back(&from, path, "", &modes, e.op == "remove")?;
    }
    Ok(())
}

fn put_back(from: &Path, to: &Path, rel: &str, modes: &HashMap<&str, u32>, link: bool) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    let ft = meta.file_type();
    if ft.is_symlink() {
        let _ = std::fs::remove_file(to);
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)?;
        set_times(to, &meta)?;
    } else if ft.is_file() {
        if std::fs::symlink_metadata(to).is_ok() {
            std::fs::remove_file(to)?;
        }
        if !(link && std::fs::hard_link(from, to).is_ok()) {
            std::fs::copy(from, to)?;
            set_times(to, &meta)?;
        }
    } else if ft.is_dir() {
        match std::fs::DirBuilder::new().create(to) {
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && to.is_dir() => {}
            other => other?,
        }
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(from)? {
            let name = entry?.file_name();
            let sub = if rel.is_empty() {
                name.to_string_lossy().into_owned()
            } else {
                format!("{rel}/{}", name.to_string_lossy())
            };
            put_back(&from.join(&name), &to.join(&name), &sub, modes, link)?;
        }
        let mode = modes.get(rel).copied().unwrap_or(0o755);
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(mode))?;
        set_times(to, &meta)?;
    }
    Ok(())
}
