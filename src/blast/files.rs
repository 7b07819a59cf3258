//! Counting the files a command would delete, shred, truncate or overwrite: how many, their
//! size, how many git tracks and how many have uncommitted changes, and whether a target lies
//! outside the project or is a mount point. Read-only: `lstat` and directory reads, symbolic
//! links never followed (rm deletes the link, not what it points to). The walk stops at the
//! deadline and then reports only "at least" what it counted, never a total it did not finish.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::git::Git;
use super::{Budget, Cut, many, size};

#[derive(Default)]
pub struct Tally {
    pub files: u64,
    pub dirs: u64,
    pub bytes: u64,
    /// A directory could not be read: the figures are a lower bound.
    pub unreadable: bool,
    /// The deadline came first: the figures are a lower bound.
    pub cut: bool,
    pub missing: Vec<String>,
    pub outside: Vec<String>,
    pub mounts: Vec<String>,
    /// The targets that exist, resolved, for git's figures.
    pub found: Vec<PathBuf>,
}

/// Expands `~`, `$HOME` and globs in one operand as the shell would, from `cwd`. `None` for a
/// word it cannot expand exactly (another variable).
pub fn resolve(word: &str, cwd: &Path, home: Option<&Path>) -> Option<Vec<PathBuf>> {
    let rest = ["~/", "$HOME/", "${HOME}/"].iter().find_map(|p| word.strip_prefix(p));
    let path = match (rest, home) {
        (Some(rest), Some(h)) => h.join(rest),
        (None, Some(h)) if matches!(word, "~" | "$HOME" | "${HOME}") => h.to_path_buf(),
        _ if word.contains('$') || word.starts_with('~') => return None,
        _ => cwd.join(word),
    };
    let text = path.to_str()?;
    if !text.contains(['*', '?', '[']) {
        return Some(vec![path]);
    }
    Some(glob(text))
}

/// Every operand resolved (`resolve`); the first one that cannot be, as the error.
pub fn resolve_all<'a>(words: &'a [String], cwd: &Path, home: Option<&Path>) -> Result<Vec<PathBuf>, &'a str> {
    let mut out = Vec::new();
    for w in words {
        out.extend(resolve(w, cwd, home).ok_or(w.as_str())?);
    }
    Ok(out)
}

/// The paths matching a pattern, component by component, sorted like the shell sorts; a
/// pattern that matches nothing stays itself (and is then missing).
fn glob(pattern: &str) -> Vec<PathBuf> {
    let mut current = vec![PathBuf::from("/")];
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        for dir in &current {
            if !part.contains(['*', '?', '[']) {
                next.push(dir.join(part));
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            let mut names: Vec<String> =
                entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| matches(part, n)).collect();
            names.sort();
            next.extend(names.into_iter().map(|n| dir.join(n)));
        }
        current = next;
    }
    if current.is_empty() { vec![PathBuf::from(pattern)] } else { current }
}

/// Shell pattern matching of one name: `*`, `?`, `[...]` (with `!`/`^` and ranges); a leading
/// dot is matched only by a literal dot.
fn matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    fn go(p: &[char], n: &[char]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some('*') => (0..=n.len()).any(|i| go(&p[1..], &n[i..])),
            Some('?') => !n.is_empty() && go(&p[1..], &n[1..]),
            Some('[') => {
                let Some(close) = p.iter().skip(2).position(|c| *c == ']').map(|i| i + 2) else {
                    return n.first() == Some(&'[') && go(&p[1..], &n[1..]);
                };
                let Some(c) = n.first() else { return false };
                let (negate, set) = match p[1] {
                    '!' | '^' => (true, &p[2..close]),
                    _ => (false, &p[1..close]),
                };
                let mut hit = false;
                let mut i = 0;
                while i < set.len() {
                    if i + 2 < set.len() && set[i + 1] == '-' {
                        hit |= set[i] <= *c && *c <= set[i + 2];
                        i += 3;
                    } else {
                        hit |= set[i] == *c;
                        i += 1;
                    }
                }
                hit != negate && go(&p[close + 1..], &n[1..])
            }
            Some(c) => n.first() == Some(c) && go(&p[1..], &n[1..]),
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    go(&p, &n)
}

/// Counts the targets (directories only when `recursive`).
pub fn tally(targets: &[PathBuf], recursive: bool, root: &Path, budget: &Budget) -> Tally {
    let mut t = Tally::default();
    for path in targets {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            t.missing.push(path.display().to_string());
            continue;
        };
        let resolved = canonical_parent(path);
        if !resolved.starts_with(root) {
            t.outside.push(path.display().to_string());
        }
        if meta.is_dir() && is_mount(&resolved, &meta) {
            t.mounts.push(path.display().to_string());
        }
        t.found.push(resolved.clone());
        if meta.is_dir() {
            if recursive {
                t.dirs += 1;
                walk(&resolved, &mut t, budget);
            }
        } else {
            t.files += 1;
            t.bytes += meta.len();
        }
        if t.cut {
            break;
        }
    }
    t
}

/// The path with its parent directories resolved (the last component kept: a link is deleted,
/// not followed).
fn canonical_parent(path: &Path) -> PathBuf {
    match (path.parent().and_then(|p| p.canonicalize().ok()), path.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
    }
}

fn is_mount(path: &Path, meta: &std::fs::Metadata) -> bool {
    match path.parent().and_then(|p| std::fs::symlink_metadata(p).ok()) {
        Some(parent) => parent.dev() != meta.dev() || parent.ino() == meta.ino(),
        None => true, // `/`
    }
}

fn walk(dir: &Path, t: &mut Tally, budget: &Budget) {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0u32;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            t.unreadable = true;
            continue;
        };
        for e in entries {
            seen += 1;
            if seen.is_multiple_of(256) && budget.over() {
                t.cut = true;
                return;
            }
            let Ok(e) = e else {
                t.unreadable = true;
                continue;
            };
            let Ok(meta) = e.metadata() else {
                t.unreadable = true;
                continue;
            };
            if meta.is_dir() {
                t.dirs += 1;
                stack.push(e.path());
            } else {
                t.files += 1;
                t.bytes += meta.len();
            }
        }
    }
}

/// Git's figures for the targets inside the repository at `git`'s root: tracked files and
/// tracked files with uncommitted changes (staged or not).
pub fn in_git(git: &Git, found: &[PathBuf], budget: &Budget) -> Result<Option<(u64, u64)>, Cut> {
    let Some(top) = git.toplevel() else { return Ok(None) };
    let inside: Vec<String> = found
        .iter()
        .filter_map(|p| p.strip_prefix(top).ok())
        .map(|p| if p.as_os_str().is_empty() { ".".to_string() } else { p.display().to_string() })
        .collect();
    if inside.is_empty() {
        return Ok(None);
    }
    let paths: Vec<&str> = inside.iter().map(String::as_str).collect();
    let mut args = vec!["ls-files", "-z", "--"];
    args.extend(&paths);
    let tracked = git.run_in(top, &args, budget)?.split(|b| *b == 0).filter(|s| !s.is_empty()).count() as u64;
    let mut args = vec!["status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules", "--"];
    args.extend(&paths);
    let changed = git.run_in(top, &args, budget)?.split(|b| *b == 0).filter(|s| s.len() > 3).count() as u64;
    Ok(Some((tracked, changed)))
}

/// One line for what a file command destroys.
pub fn describe(verb: &str, t: &Tally, git: Option<(u64, u64)>) -> String {
    let lower = t.cut || t.unreadable;
    if lower && t.files == 0 {
        let why = if t.cut { "counting stopped at the time limit" } else { "a directory could not be read" };
        return format!("{verb}: not measured ({why})");
    }
    let mut out = if t.found.is_empty() {
        format!("{verb} nothing that exists now")
    } else {
        let at_least = if lower { "at least " } else { "" };
        let dirs = if t.dirs > 0 { format!(" in {}", many(t.dirs, "directory", "directories")) } else { String::new() };
        format!("{verb} {at_least}{} ({}){dirs}", many(t.files, "file", "files"), size(t.bytes))
    };
    if let Some((tracked, changed)) = git.filter(|_| !lower) {
        out += &match (tracked, changed) {
            (0, _) => ", none of them tracked by git".to_string(),
            (t, 0) => format!(", {} tracked by git, none with uncommitted changes", super::count(t)),
            (t, c) => format!(", {} tracked by git, {} with uncommitted changes", super::count(t), super::count(c)),
        };
    }
    if t.cut {
        out += " (counting stopped at the time limit)";
    } else if t.unreadable {
        out += " (some directories could not be read)";
    }
    if !t.outside.is_empty() {
        out += &format!("; outside the project: {}", t.outside.join(", "));
    }
    if !t.mounts.is_empty() {
        out += &format!("; a mount point: {}", t.mounts.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_like_the_shell() {
        assert!(matches("*.log", "a.log"));
        assert!(!matches("*.log", ".a.log"));
        assert!(matches(".*", ".env"));
        assert!(matches("a?c", "abc"));
        assert!(matches("[a-c]x", "bx"));
        assert!(!matches("[!a-c]x", "bx"));
        assert!(matches("*", "build"));
        assert!(!matches("*.txt", "a.log"));
    }

    #[test]
    fn words_resolve_from_the_directory_and_home() {
        let home = Path::new("/home/u");
        assert_eq!(resolve("~/x", Path::new("/w"), Some(home)), Some(vec![PathBuf::from("/home/u/x")]));
        assert_eq!(resolve("$HOME", Path::new("/w"), Some(home)), Some(vec![PathBuf::from("/home/u")]));
        assert_eq!(resolve("d", Path::new("/w"), Some(home)), Some(vec![PathBuf::from("/w/d")]));
        assert_eq!(resolve("$X/d", Path::new("/w"), Some(home)), None);
        assert_eq!(resolve("~bob/d", Path::new("/w"), Some(home)), None);
    }
}
