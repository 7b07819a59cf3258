//! Recovery points inside a git repository, made with git's own plumbing and never touching
//! the user's branches, stash or index: the index is copied to a private file, the changed and
//! doomed files are hashed into it raw (`hash-object --no-filters`, so no filter driver runs
//! and the exact bytes are kept), and two commits (the index, then the work tree, like a
//! stash) are stored under `refs/cmdguard/ID/N`. A dropped branch, stash or remote-tracking
//! commit is kept by pointing such a ref at it. Every git process runs with hooks, fsmonitor
//! and filters off.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use super::store::Building;
use super::{NotKept, Part, Point};
use crate::blast::Budget;
use crate::blast::git::Git;
use crate::blast::target::Stake;

const ZERO: &str = "0000000000000000000000000000000000000000";

/// A work tree and index kept as two commits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tree {
    /// The work tree's top directory.
    pub repo: String,
    /// HEAD's commit and branch (`refs/heads/…`) when the point was made.
    pub head: Option<String>,
    pub branch: Option<String>,
    /// Where `reset --hard COMMIT` moves HEAD.
    pub target: Option<String>,
    pub index_tree: String,
    pub commit: String,
    pub reference: String,
    pub changed: u64,
    pub untracked: u64,
    /// For `worktree remove`: the work tree the command ran in (which recreates this one).
    #[serde(default)]
    pub worktree_of: Option<String>,
}

impl Tree {
    pub fn describe(&self) -> String {
        format!(
            "{} and {} in {} (kept at {})",
            crate::blast::many(self.changed, "changed file", "changed files"),
            crate::blast::many(self.untracked, "untracked file", "untracked files"),
            crate::term::escape(&self.repo),
            self.reference
        )
    }
}

/// Runs git (hardened as the blast radius runs it) in `dir`, with `index` as its index file
/// if given and `input` on stdin; its stdout, or why it failed.
pub fn run(dir: &Path, index: Option<&Path>, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, NotKept> {
    thread_local! {
        /// The hardening for each directory, read once (it costs two git processes).
        static BASES: std::cell::RefCell<Vec<(PathBuf, std::rc::Rc<Git>)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let base = BASES.with(|b| {
        let mut b = b.borrow_mut();
        if let Some((_, g)) = b.iter().find(|(d, _)| d == dir) {
            return g.clone();
        }
        let g = std::rc::Rc::new(Git::new(dir, &Budget::new(std::time::Duration::from_secs(30))));
        b.push((dir.to_path_buf(), g.clone()));
        g
    });
    run_with(&base, dir, index, args, input)
}

fn run_with(
    base: &Git,
    dir: &Path,
    index: Option<&Path>,
    args: &[&str],
    input: Option<&[u8]>,
) -> Result<Vec<u8>, NotKept> {
    let mut cmd: Command = base.command(dir);
    cmd.args(args)
        .env("GIT_AUTHOR_NAME", "cmdguard")
        .env("GIT_AUTHOR_EMAIL", "cmdguard@localhost")
        .env("GIT_COMMITTER_NAME", "cmdguard")
        .env("GIT_COMMITTER_EMAIL", "cmdguard@localhost")
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(i) = index {
        cmd.env("GIT_INDEX_FILE", i);
    }
    let mut child = cmd.spawn().map_err(|e| NotKept(format!("cannot run git: {e}")))?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => {
            let bytes = bytes.to_vec();
            Some(std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &bytes)))
        }
        _ => None,
    };
    let out = child.wait_with_output().map_err(|e| NotKept(format!("git failed: {e}")))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("").trim();
        return Err(NotKept(format!("`git {}` failed: {}", args.first().unwrap_or(&""), crate::term::escape(first))));
    }
    Ok(out.stdout)
}

pub fn text(dir: &Path, index: Option<&Path>, args: &[&str]) -> Result<String, NotKept> {
    let out = run(dir, index, args, None)?;
    Ok(String::from_utf8_lossy(&out).trim_end_matches('\n').to_string())
}

/// A commit id, or `None` if `rev` names none.
pub fn commit_of(dir: &Path, rev: &str) -> Option<String> {
    text(dir, None, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{rev}^{{commit}}")]).ok()
}

fn nul_list(bytes: &[u8]) -> Vec<String> {
    bytes.split(|b| *b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

/// The parts that keep what a git stake destroys.
pub fn keep(b: &mut Building, stake: &Stake, dir: &Path, id: &str, left: &mut u64) -> Result<Vec<Part>, NotKept> {
    let top = PathBuf::from(
        text(dir, None, &["rev-parse", "--show-toplevel"]).map_err(|_| NotKept("not inside a git work tree".into()))?,
    );
    let repo = top.display().to_string();
    sweep(&top);
    let reference = |b: &mut Building| format!("refs/cmdguard/{id}/{}", b.number());
    let point_ref = |r: &str, commit: &str| -> Result<(), NotKept> {
        run(&top, None, &["update-ref", "--no-deref", "-m", "cmdguard recovery point", r, commit, ""], None).map(|_| ())
    };
    match stake {
        Stake::ResetHard { to } => {
            let target = match to {
                Some(t) => Some(
                    commit_of(dir, t)
                        .ok_or_else(|| NotKept(format!("`{}` names no commit", crate::term::escape(t))))?,
                ),
                None => None,
            };
            let r = reference(b);
            Ok(vec![Part::GitTree(snapshot(b, &top, &[], left, &r, target, None)?)])
        }
        Stake::Discard { .. } => {
            let r = reference(b);
            Ok(vec![Part::GitTree(snapshot(b, &top, &[], left, &r, None, None)?)])
        }
        Stake::Clean { args } => {
            let base = Git::new(dir, &Budget::new(std::time::Duration::from_secs(30)));
            let listed =
                crate::blast::git::clean_would_remove(&base, args, &Budget::new(std::time::Duration::from_secs(60)))
                    .map_err(|_| NotKept("git clean could not list what it would remove".into()))?;
            let files = expand(&listed);
            let r = reference(b);
            Ok(vec![Part::GitTree(snapshot(b, &top, &files, left, &r, None, None)?)])
        }
        Stake::WorktreeRemove { path } => {
            let wt = dir.join(path);
            let wt_top = PathBuf::from(text(&wt, None, &["rev-parse", "--show-toplevel"])?);
            let others = run(&wt_top, None, &["ls-files", "-z", "--others"], None)?;
            let files: Vec<PathBuf> = nul_list(&others).iter().map(|p| wt_top.join(p)).collect();
            let r = reference(b);
            Ok(vec![Part::GitTree(snapshot(b, &wt_top, &files, left, &r, None, Some(repo))?)])
        }
        Stake::BranchDelete { names } => {
            let mut parts = Vec::new();
            for name in names {
                let Some(commit) = commit_of(dir, &format!("refs/heads/{name}")) else { continue };
                let r = reference(b);
                point_ref(&r, &commit)?;
                parts.push(Part::GitBranch { repo: repo.clone(), name: name.clone(), commit, reference: r });
            }
            Ok(parts)
        }
        Stake::StashDrop { stash, all } => {
            let list = text(dir, None, &["stash", "list", "--format=%gd%x00%H%x00%gs"])?;
            let mut stashes = Vec::new();
            for (i, line) in list.lines().enumerate() {
                let f: Vec<&str> = line.split('\0').collect();
                let [name, commit, message] = f[..] else { continue };
                let chosen = *all
                    || match stash.as_deref() {
                        None => i == 0,
                        Some(s) => s == name || s == i.to_string() || *s == format!("stash@{{{i}}}"),
                    };
                if chosen {
                    stashes.push((commit.to_string(), message.to_string()));
                }
            }
            if stashes.is_empty() {
                return Ok(Vec::new());
            }
            let r = reference(b);
            for (k, (commit, _)) in stashes.iter().enumerate() {
                point_ref(&format!("{r}/{k}"), commit)?;
            }
            Ok(vec![Part::GitStash { repo, stashes, reference: r }])
        }
        Stake::ForcePush { remote, refspecs } => {
            let budget = Budget::new(std::time::Duration::from_secs(30));
            let base = Git::new(dir, &budget);
            let tracking = crate::blast::git::push_tracking(&base, remote.as_deref(), refspecs, &budget)
                .map_err(|_| NotKept("git could not say what the push overwrites".into()))?
                .unwrap_or_default();
            let mut parts = Vec::new();
            for (tracking, _) in tracking {
                let Some(commit) = commit_of(dir, &tracking) else { continue };
                let r = reference(b);
                point_ref(&r, &commit)?;
                parts.push(Part::GitRemote { repo: repo.clone(), tracking, commit, reference: r });
            }
            Ok(parts)
        }
        _ => Ok(Vec::new()),
    }
}

/// Files and links under the listed paths (directories walked), links never followed.
fn expand(listed: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = listed.to_vec();
    while let Some(p) = stack.pop() {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {
                if let Ok(entries) = std::fs::read_dir(&p) {
                    stack.extend(entries.flatten().map(|e| e.path()));
                }
            }
            Ok(_) => out.push(p),
            Err(_) => {}
        }
    }
    out.sort();
    out
}

/// Commits the index and the work tree (changed tracked files, and `untracked`, absolute) of
/// the work tree at `top`, and points `reference` at the work tree's commit.
fn snapshot(
    b: &mut Building,
    top: &Path,
    untracked: &[PathBuf],
    left: &mut u64,
    reference: &str,
    target: Option<String>,
    worktree_of: Option<String>,
) -> Result<Tree, NotKept> {
    let git_dir = PathBuf::from(text(top, None, &["rev-parse", "--absolute-git-dir"])?);
    let index = b.scratch("index");
    let _ = std::fs::remove_file(&index);
    match std::fs::copy(git_dir.join("index"), &index) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(NotKept(format!("cannot copy the index: {e}"))),
    }
    let ix = Some(index.as_path());
    let index_tree =
        text(top, ix, &["write-tree"]).map_err(|_| NotKept("the index has unresolved conflicts".into()))?;
    let changed = nul_list(&run(top, ix, &["diff-files", "-z", "--name-only", "--ignore-submodules"], None)?);
    let mut rels: Vec<String> = changed.clone();
    let mut n_untracked = 0;
    for f in untracked {
        let rel = f.strip_prefix(top).map_err(|_| NotKept(format!("{} is outside the work tree", f.display())))?;
        rels.push(rel.display().to_string());
        n_untracked += 1;
    }
    let blobs = b.scratch("blobs");
    let _ = std::fs::create_dir(&blobs);
    let (mut paths, mut modes, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0u64;
    for rel in &rels {
        if rel.contains('\n') {
            return Err(NotKept(format!("{} has a newline in its name", crate::term::escape(rel))));
        }
        let abs = top.join(rel);
        match std::fs::symlink_metadata(&abs) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&abs)?;
                let stored = blobs.join(paths.len().to_string());
                std::fs::write(&stored, std::os::unix::ffi::OsStrExt::as_bytes(link.as_os_str()))?;
                paths.push(stored);
                modes.push(("120000", rel));
            }
            Ok(m) if m.is_file() => {
                total = total.saturating_add(m.len());
                paths.push(abs);
                modes.push((if m.permissions().mode() & 0o111 != 0 { "100755" } else { "100644" }, rel));
            }
            Ok(_) => {}
            Err(_) => removed.push(rel),
        }
        if total > *left {
            return Err(NotKept(format!(
                "its files come to more than the {} recovery limit (setting recovery_limit)",
                crate::state::human_size(*left)
            )));
        }
    }
    if b.over() {
        return Err(NotKept("keeping it would take longer than a hook may wait".into()));
    }
    let mut input = Vec::new();
    if !paths.is_empty() {
        let list: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
        let out = run(top, ix, &["hash-object", "-w", "--no-filters", "--stdin-paths"], Some(list.as_bytes()))?;
        let ids: Vec<&str> =
            std::str::from_utf8(&out).map_err(|_| NotKept("git answered oddly".into()))?.lines().collect();
        if ids.len() != modes.len() {
            return Err(NotKept("git did not hash every file".into()));
        }
        for ((mode, rel), id) in modes.iter().zip(ids) {
            input.extend_from_slice(format!("{mode} {id}\t{rel}\0").as_bytes());
        }
    }
    for rel in &removed {
        input.extend_from_slice(format!("0 {ZERO}\t{rel}\0").as_bytes());
    }
    if !input.is_empty() {
        run(top, ix, &["update-index", "-z", "--index-info"], Some(&input))?;
    }
    let work_tree = text(top, ix, &["write-tree"])?;
    let head = commit_of(top, "HEAD");
    let branch = text(top, None, &["symbolic-ref", "--quiet", "HEAD"]).ok();
    let mut parents: Vec<String> = head.iter().flat_map(|h| ["-p".to_string(), h.clone()]).collect();
    let mut args = vec!["commit-tree".to_string(), index_tree.clone(), "-m".into(), "cmdguard: the index".into()];
    args.extend(parents.iter().cloned());
    let ic = text(top, None, &args.iter().map(String::as_str).collect::<Vec<_>>())?;
    parents.extend(["-p".to_string(), ic]);
    let mut args =
        vec!["commit-tree".to_string(), work_tree, "-m".into(), format!("cmdguard recovery point {reference}")];
    args.extend(parents);
    let commit = text(top, None, &args.iter().map(String::as_str).collect::<Vec<_>>())?;
    run(top, None, &["update-ref", "--no-deref", "-m", "cmdguard recovery point", reference, &commit, ""], None)?;
    let _ = std::fs::remove_file(&index);
    *left -= total;
    Ok(Tree {
        repo: top.display().to_string(),
        head,
        branch,
        target,
        index_tree,
        commit,
        reference: reference.to_string(),
        changed: changed.len() as u64,
        untracked: n_untracked,
        worktree_of,
    })
}

/// Deletes this repository's `refs/cmdguard/ID/…` refs that no point holds any more (a crash
/// between the ref and the point, an hour or more ago).
fn sweep(top: &Path) {
    let Ok(list) = text(top, None, &["for-each-ref", "--format=%(refname)", "refs/cmdguard/"]) else { return };
    let Ok(root) = super::store::root() else { return };
    let now = crate::state::now();
    for r in list.lines() {
        let Some(id) = r.strip_prefix("refs/cmdguard/").and_then(|s| s.split('/').next()) else { continue };
        let old = super::store::id_time(id).is_none_or(|t| now.saturating_sub(t) > super::store::ABANDONED_AFTER);
        if old && !root.join(id).exists() && !root.join(format!(".new-{id}")).exists() {
            let _ = run(top, None, &["update-ref", "-d", r], None);
        }
    }
}

/// Deletes the git refs a point holds (when it expires).
pub fn drop_refs(point: &Point) {
    for part in &point.parts {
        let (repo, reference) = match part {
            Part::GitTree(t) => (t.worktree_of.as_ref().unwrap_or(&t.repo), &t.reference),
            Part::GitBranch { repo, reference, .. } | Part::GitRemote { repo, reference, .. } => (repo, reference),
            Part::GitStash { repo, reference, .. } => {
                let refs = text(Path::new(repo), None, &["for-each-ref", "--format=%(refname)", reference]);
                for r in refs.unwrap_or_default().lines() {
                    let _ = run(Path::new(repo), None, &["update-ref", "-d", r], None);
                }
                continue;
            }
            Part::Files { .. } => continue,
        };
        let _ = run(Path::new(repo), None, &["update-ref", "-d", reference], None);
    }
}
