//! Undoing a recovery point: first a plan against what stands there now (what would be
//! written, deleted or moved, and what would overwrite newer work), then, once confirmed, the
//! plan carried out, the last part of the command undone first. Newer work is a file changed
//! after the command ran or created where it deleted one, a HEAD that moved on, a branch name
//! taken again; without `--force` any of it stops the undo before anything is touched.
//! Nothing remote is changed: for a force push the commit is kept and the push that puts it
//! back is shown.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::git::{Tree, commit_of, run, text};
use super::{NotKept, Part, files};

/// What an undo would do.
#[derive(Default)]
pub struct Plan {
    /// Newer work that restoring would overwrite.
    pub conflicts: Vec<String>,
    /// What the undo cannot do or leaves as it is.
    pub notes: Vec<String>,
    steps: Vec<Step>,
}

enum Step {
    Tree {
        top: PathBuf,
        index_tree: String,
        writes: Vec<(String, String, String)>,
        deletes: Vec<String>,
        head: Option<(String, String, String)>,
    },
    Worktree {
        main: PathBuf,
        tree: Tree,
    },
    Branch {
        repo: PathBuf,
        name: String,
        commit: String,
        old: Option<String>,
    },
    Stash {
        repo: PathBuf,
        stashes: Vec<(String, String)>,
    },
    Files {
        dir: PathBuf,
        entries: Vec<files::Kept>,
    },
}

pub fn plan(dir: &Path, point: &super::Point, force: bool) -> Result<Plan, NotKept> {
    let mut p = Plan::default();
    for part in point.parts.iter().rev() {
        match part {
            Part::GitTree(t) => match &t.worktree_of {
                Some(main) if !Path::new(&t.repo).exists() => {
                    p.steps.push(Step::Worktree { main: PathBuf::from(main), tree: t.clone() })
                }
                _ => plan_tree(&mut p, t, force)?,
            },
            Part::GitBranch { repo, name, commit, .. } => {
                let old = commit_of(Path::new(repo), &format!("refs/heads/{name}"));
                match &old {
                    Some(c) if c == commit => {
                        p.notes.push(format!("branch {} is already at {}", esc(name), super::short(commit)));
                        continue;
                    }
                    Some(c) => p.conflicts.push(format!("branch {} exists again, at {}", esc(name), super::short(c))),
                    None => {}
                }
                p.steps.push(Step::Branch { repo: repo.into(), name: name.clone(), commit: commit.clone(), old });
            }
            Part::GitStash { repo, stashes, .. } => {
                p.steps.push(Step::Stash { repo: repo.into(), stashes: stashes.clone() })
            }
            Part::GitRemote { tracking, commit, reference, .. } => {
                let rest = tracking.trim_start_matches("refs/remotes/");
                let (remote, branch) = rest.split_once('/').unwrap_or((rest, rest));
                p.notes.push(format!(
                    "cmdguard changes nothing on a remote: {} had {} before the push (kept at {reference}); to put it back, run `git push --force-with-lease=refs/heads/{branch} {remote} {}:refs/heads/{branch}`",
                    esc(rest),
                    super::short(commit),
                    commit
                ));
            }
            Part::Files { entries } => {
                p.conflicts.extend(files::conflicts(dir, point.created, entries));
                p.steps.push(Step::Files { dir: dir.to_path_buf(), entries: entries.clone() });
            }
        }
    }
    Ok(p)
}

fn esc(s: &str) -> String {
    crate::term::escape(s)
}

/// `path → (mode, blob)` of a git listing whose lines are `FIELDS\tPATH`, NUL-separated;
/// `pick` reads the mode and blob from the fields (or skips the line).
fn listing(out: &[u8], pick: impl Fn(&[&str]) -> Option<(String, String)>) -> HashMap<String, (String, String)> {
    let mut map = HashMap::new();
    for e in out.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let e = String::from_utf8_lossy(e);
        let Some((meta, path)) = e.split_once('\t') else { continue };
        if let Some(entry) = pick(&meta.split(' ').collect::<Vec<_>>()) {
            map.insert(path.to_string(), entry);
        }
    }
    map
}

/// The files of a tree (`ls-tree -r`: `mode type sha`; submodules left out).
fn tree_entries(top: &Path, tree: &str) -> Result<HashMap<String, (String, String)>, NotKept> {
    let out = run(top, None, &["ls-tree", "-r", "-z", "--full-tree", tree], None)?;
    Ok(listing(&out, |f| match f {
        [mode, kind, sha] if *kind != "commit" => Some((mode.to_string(), sha.to_string())),
        _ => None,
    }))
}

/// The entries of the index (`ls-files -s`: `mode sha stage`).
fn index_entries(top: &Path) -> Result<HashMap<String, (String, String)>, NotKept> {
    let out = run(top, None, &["ls-files", "-s", "-z"], None)?;
    Ok(listing(&out, |f| match f {
        [mode, sha, _stage] => Some((mode.to_string(), sha.to_string())),
        _ => None,
    }))
}

/// The mode and blob id of what stands at `abs` now (`None`: nothing, or a directory).
fn current(top: &Path, abs: &Path, scratch: &Path) -> Result<Option<(String, String)>, NotKept> {
    let Ok(m) = std::fs::symlink_metadata(abs) else { return Ok(None) };
    let (mode, path) = if m.file_type().is_symlink() {
        let link = std::fs::read_link(abs)?;
        std::fs::write(scratch, std::os::unix::ffi::OsStrExt::as_bytes(link.as_os_str()))?;
        ("120000", scratch.to_path_buf())
    } else if m.is_file() {
        (if m.permissions().mode() & 0o111 != 0 { "100755" } else { "100644" }, abs.to_path_buf())
    } else {
        return Ok(Some(("040000".into(), String::new())));
    };
    let sha = text(top, None, &["hash-object", "--no-filters", "--", &path.display().to_string()])?;
    Ok(Some((mode.to_string(), sha)))
}

fn plan_tree(p: &mut Plan, t: &Tree, force: bool) -> Result<(), NotKept> {
    let top = PathBuf::from(&t.repo);
    if commit_of(&top, &t.commit).is_none() {
        return Err(NotKept(format!("its commit {} is gone from {}", super::short(&t.commit), esc(&t.repo))));
    }
    let want = tree_entries(&top, &format!("{}^{{tree}}", t.commit))?;
    let before = tree_entries(&top, &t.index_tree)?;
    let index = index_entries(&top)?;
    let dirty: HashSet<String> = run(&top, None, &["diff-files", "-z", "--name-only", "--ignore-submodules"], None)?
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect();
    let scratch = std::env::temp_dir().join(format!("cmdguard-undo-{}", std::process::id()));
    let (mut writes, mut deletes) = (Vec::new(), Vec::new());
    let mut paths: Vec<&String> = want.keys().collect();
    paths.sort();
    for path in paths {
        let (mode, sha) = &want[path];
        let abs = top.join(path);
        let clean = !dirty.contains(path) && index.contains_key(path);
        if clean && index.get(path) == Some(&(mode.clone(), sha.clone())) && abs.symlink_metadata().is_ok() {
            continue;
        }
        if abs.symlink_metadata().is_err() || clean {
            writes.push((path.clone(), mode.clone(), sha.clone()));
            continue;
        }
        match current(&top, &abs, &scratch)? {
            Some((m, s)) if m == *mode && s == *sha => {}
            _ => {
                p.conflicts.push(format!("{} changed after the command ran", esc(&abs.display().to_string())));
                writes.push((path.clone(), mode.clone(), sha.clone()));
            }
        }
    }
    let _ = std::fs::remove_file(&scratch);
    let mut gone: Vec<&String> = index
        .keys()
        .chain(before.keys())
        .filter(|k| !want.contains_key(*k))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    gone.sort();
    for path in gone {
        if top.join(path).symlink_metadata().is_err() {
            continue;
        }
        if !index.contains_key(path) || dirty.contains(path) {
            p.conflicts.push(format!("{} was created or changed after the command ran", esc(path)));
        }
        deletes.push(path.clone());
    }
    let head_now = commit_of(&top, "HEAD");
    let branch_now = text(&top, None, &["symbolic-ref", "--quiet", "HEAD"]).ok();
    let mut head = None;
    if let Some(h) = &t.head
        && head_now.as_ref() != Some(h)
    {
        let now = head_now.clone().unwrap_or_default();
        if branch_now == t.branch && head_now == t.target {
            let name = t.branch.clone().unwrap_or_else(|| "HEAD".into());
            head = Some((name, h.clone(), now));
        } else if force {
            p.notes.push(format!("HEAD stays at {} (it moved on after the command)", super::short(&now)));
        } else {
            p.conflicts.push(format!("HEAD moved on after the command (it is at {} now)", super::short(&now)));
        }
    }
    p.steps.push(Step::Tree { top, index_tree: t.index_tree.clone(), writes, deletes, head });
    Ok(())
}

impl Plan {
    /// Lines saying what carrying the plan out does.
    pub fn summary(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in &self.steps {
            out.push(match s {
                Step::Tree { top, writes, deletes, head, .. } => format!(
                    "in {}: writes {}, deletes {}, restores the index{}",
                    esc(&top.display().to_string()),
                    crate::blast::many(writes.len() as u64, "file", "files"),
                    crate::blast::many(deletes.len() as u64, "file", "files"),
                    head.as_ref()
                        .map(|(b, h, _)| format!(", moves {} back to {}", esc(b), super::short(h)))
                        .unwrap_or_default()
                ),
                Step::Worktree { tree, .. } => format!("recreates the work tree {}", esc(&tree.repo)),
                Step::Branch { name, commit, .. } => {
                    format!("puts branch {} back at {}", esc(name), super::short(commit))
                }
                Step::Stash { stashes, .. } => {
                    format!("puts {} back", crate::blast::many(stashes.len() as u64, "stash", "stashes"))
                }
                Step::Files { entries, .. } => format!("puts back {}", files::describe(entries)),
            });
        }
        out
    }

    /// Carries the plan out.
    pub fn apply(self) -> Result<(), NotKept> {
        for s in self.steps {
            match s {
                Step::Tree { top, index_tree, writes, deletes, head } => {
                    apply_tree(&top, &index_tree, &writes, &deletes, head.as_ref())?
                }
                Step::Worktree { main, tree } => {
                    let path = tree.repo.as_str();
                    let head = tree.head.clone().ok_or_else(|| NotKept("the work tree had no commit".into()))?;
                    let branch = tree.branch.as_deref().and_then(|b| b.strip_prefix("refs/heads/"));
                    let on_branch =
                        branch.filter(|b| commit_of(&main, &format!("refs/heads/{b}")).as_ref() == Some(&head));
                    match on_branch {
                        Some(b) => run(&main, None, &["worktree", "add", "--", path, b], None)?,
                        None => run(&main, None, &["worktree", "add", "--detach", "--", path, &head], None)?,
                    };
                    let mut again = Plan::default();
                    plan_tree(&mut again, &tree, true)?;
                    again.apply()?;
                }
                Step::Branch { repo, name, commit, old } => {
                    let r = format!("refs/heads/{name}");
                    run(
                        &repo,
                        None,
                        &["update-ref", "-m", "cmdguard undo", &r, &commit, old.as_deref().unwrap_or("")],
                        None,
                    )?;
                }
                Step::Stash { repo, stashes } => {
                    let there = text(&repo, None, &["stash", "list", "--format=%H"]).unwrap_or_default();
                    let there: HashSet<&str> = there.lines().collect();
                    for (commit, message) in stashes.iter().rev() {
                        if !there.contains(commit.as_str()) {
                            run(&repo, None, &["stash", "store", "-m", message, commit], None)?;
                        }
                    }
                }
                Step::Files { dir, entries } => files::restore(&dir, &entries)?,
            }
        }
        Ok(())
    }
}

fn apply_tree(
    top: &Path,
    index_tree: &str,
    writes: &[(String, String, String)],
    deletes: &[String],
    head: Option<&(String, String, String)>,
) -> Result<(), NotKept> {
    if let Some((name, to, from)) = head {
        let deref = if name == "HEAD" { vec!["--no-deref"] } else { vec![] };
        let mut args = vec!["update-ref"];
        args.extend(deref);
        args.extend(["-m", "cmdguard undo", name.as_str(), to.as_str(), from.as_str()]);
        run(top, None, &args, None)?;
    }
    if !writes.is_empty() {
        let list: String = writes.iter().map(|(_, _, sha)| format!("{sha}\n")).collect();
        let out = run(top, None, &["cat-file", "--batch"], Some(list.as_bytes()))?;
        let mut rest = &out[..];
        for (path, mode, _) in writes {
            let nl =
                rest.iter().position(|b| *b == b'\n').ok_or_else(|| NotKept("git cat-file answered oddly".into()))?;
            let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| NotKept(format!("git has no blob for {path}")))?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(|| NotKept("git cat-file was cut short".into()))?;
            rest = rest.get(nl + 2 + size..).unwrap_or(&[]);
            write_one(&top.join(path), mode, body)?;
        }
    }
    for path in deletes {
        let _ = std::fs::remove_file(top.join(path));
    }
    run(top, None, &["read-tree", index_tree], None)?;
    let _ = run(top, None, &["update-index", "-q", "--refresh"], None);
    Ok(())
}

/// Writes one file (or link) whole: a fresh file renamed over whatever stands there.
fn write_one(path: &Path, mode: &str, body: &[u8]) -> Result<(), NotKept> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.cmdguard-undo.{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    if mode == "120000" {
        let target: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(body);
        std::os::unix::fs::symlink(target, &tmp)?;
    } else {
        std::fs::write(&tmp, body)?;
        // As git checks files out: 0666 or 0777 less the umask.
        // SAFETY: umask has no preconditions; it is set back at once.
        let mask = unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        } as u32;
        let bits = if mode == "100755" { 0o777 } else { 0o666 } & !mask;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(bits))?;
    }
    std::fs::rename(&tmp, path)?;
    Ok(())
}
