//! Recovery points: before an approved local destructive command runs, cmdguard keeps what it
//! would destroy, so the approval can be undone (`cmdguard undo`). Inside a git repository the
//! point is a commit of the index and the work tree (with the untracked files `git clean` would
//! remove) under a private ref `refs/cmdguard/ID`, or the branch, stash or remote-tracking
//! commit a command drops; for `rm`, `shred`, `truncate` and `>` it is a copy of the files in
//! the state directory, up to `recovery_limit`. Only what the blast radius can read exactly is
//! kept; a command that passes without asking pays nothing. Points expire after `recovery_ttl`
//! and are pruned in the background.

pub mod files;
pub mod git;
pub mod restore;
pub mod store;

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::blast::target::Stake;
use crate::decide::Decision;
use crate::rules::Policy;
use crate::shell::Analysis;

/// One recovery point, as its `point.json` holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub id: String,
    /// Seconds since the epoch.
    pub created: u64,
    /// Hash of the session key, if one was given.
    pub session: Option<String>,
    pub command: String,
    pub project: String,
    pub cwd: String,
    /// Bytes kept: file copies in the state directory and new content written into git.
    pub size: u64,
    pub parts: Vec<Part>,
}

/// What one part of the command destroys, and where it is kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Part {
    /// A git work tree and index (`reset --hard`, `checkout .`, `restore`, `clean -f`,
    /// `worktree remove --force`).
    GitTree(git::Tree),
    /// A branch deleted with `branch -D`: its last commit.
    GitBranch { repo: String, name: String, commit: String, reference: String },
    /// Stashes dropped: their commits and messages, newest first.
    GitStash { repo: String, stashes: Vec<(String, String)>, reference: String },
    /// A force push: the commit the remote-tracking branch had (the remote's, as last fetched).
    GitRemote { repo: String, tracking: String, commit: String, reference: String },
    /// Files deleted or changed in place, copied into the point.
    Files { entries: Vec<files::Kept> },
}

impl Part {
    /// One line for `undo --list` and the confirmation.
    pub fn describe(&self) -> String {
        let esc = |s: &str| crate::term::escape(s);
        match self {
            Part::GitTree(t) => t.describe(),
            Part::GitBranch { name, commit, .. } => format!("branch {} at {}", esc(name), short(commit)),
            Part::GitStash { stashes, .. } => crate::blast::many(stashes.len() as u64, "stash", "stashes") + " dropped",
            Part::GitRemote { tracking, commit, .. } => {
                format!(
                    "{} was at {} before the push",
                    esc(tracking.trim_start_matches("refs/remotes/")),
                    short(commit)
                )
            }
            Part::Files { entries } => files::describe(entries),
        }
    }
}

pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Who approved what, for the point's record.
pub struct Approved<'a> {
    pub policy: &'a Policy,
    pub analysis: &'a Analysis,
    pub decision: &'a Decision,
    pub cwd: &'a Path,
    pub project: &'a Path,
    pub session: Option<String>,
    pub command: &'a str,
    /// At most this long for keeping (hook mode: the host runs the call after cmdguard answers,
    /// and the answer must come before the hook's limit); `None` for no limit.
    pub limit: Option<Duration>,
}

/// Why no point could be kept for one part.
#[derive(Debug)]
pub struct NotKept(pub String);

impl<T: std::fmt::Display> From<T> for NotKept {
    fn from(e: T) -> NotKept {
        NotKept(e.to_string())
    }
}

/// Records a recovery point for an approved command, just before it runs; returns its id.
/// Says on stderr what could not be kept (the command runs anyway: the human approved it, and
/// the prompt said when it would not be recoverable), and how long keeping took past 100 ms.
pub fn before_run(a: &Approved<'_>) -> Option<String> {
    let limit = a.policy.settings.recovery_limit;
    if limit == 0 {
        return None;
    }
    let local = crate::blast::local(a.analysis, a.decision, a.cwd);
    let stakes: Vec<(&Path, &Stake, &str)> = local
        .iter()
        .filter_map(|l| l.dir.as_ref().ok().map(|d| (d.as_path(), l)))
        .flat_map(|(d, l)| l.stakes.iter().map(move |s| (d, s, l.shown.as_str())))
        .collect();
    if stakes.is_empty() {
        return None;
    }
    let started = Instant::now();
    let id = store::new_id();
    // A point of many files takes a while: say what is happening once it has taken 300 ms.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let told = {
        let done = done.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            if !done.load(std::sync::atomic::Ordering::SeqCst) {
                eprintln!("cmdguard: keeping a recovery point before the command runs…");
            }
        })
    };
    let made = store::Building::start(&id).and_then(|mut b| {
        b.deadline = a.limit.map(|l| started + l);
        let mut left = limit;
        for (dir, stake, shown) in &stakes {
            match keep(&mut b, stake, dir, &id, &mut left) {
                Ok(parts) => b.parts.extend(parts),
                Err(NotKept(why)) => {
                    eprintln!("cmdguard: no recovery point for `{shown}`: {why}; it runs without one")
                }
            }
        }
        if b.parts.is_empty() {
            b.abandon();
            return Ok(None);
        }
        let point = Point {
            id: id.clone(),
            created: crate::state::now(),
            session: a.session.clone(),
            command: a.command.to_string(),
            project: a.project.display().to_string(),
            cwd: a.cwd.display().to_string(),
            size: limit - left,
            parts: std::mem::take(&mut b.parts),
        };
        b.finish(&point).map(Some)
    });
    let took = started.elapsed();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    drop(told);
    store::prune_later(a.policy.settings.recovery_ttl);
    match made {
        Ok(Some(())) => {
            if took > Duration::from_millis(100) {
                eprintln!(
                    "cmdguard: recovery point {id} kept in {:.1} s (`cmdguard undo` restores it)",
                    took.as_secs_f64()
                );
            }
            Some(id)
        }
        Ok(None) => None,
        Err(e) => {
            eprintln!("cmdguard: warning: no recovery point ({e:#}); the command runs without one");
            None
        }
    }
}

/// The parts that keep what one stake destroys; `left` is what the size limit still allows.
fn keep(b: &mut store::Building, stake: &Stake, dir: &Path, id: &str, left: &mut u64) -> Result<Vec<Part>, NotKept> {
    match stake {
        Stake::Files { how, paths, recursive } => {
            let home = crate::blast::home();
            let targets = crate::blast::files::resolve_all(paths, dir, home.as_deref())
                .map_err(|p| NotKept(format!("`{}` is not known before it runs", crate::term::escape(p))))?;
            files::keep(b, *how, &targets, *recursive, false, left).map(|p| p.into_iter().collect())
        }
        Stake::FindDelete { roots, expression } => {
            let budget = crate::blast::Budget::new(Duration::from_secs(60));
            let targets = crate::blast::find_listed(roots, expression, dir, &budget)
                .map_err(|_| NotKept("find could not list what it would delete".into()))?;
            files::keep(b, crate::blast::target::FileOp::Remove, &targets, false, true, left)
                .map(|p| p.into_iter().collect())
        }
        Stake::Unknown => Err(NotKept("part of it is known only when it runs".into())),
        _ => git::keep(b, stake, dir, id, left),
    }
}
