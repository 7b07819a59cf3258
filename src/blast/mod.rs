//! Blast radius: what an asking or denied command would destroy, measured locally and cheaply
//! so the person deciding sees the stake (`git reset --hard` loses 14 files with uncommitted
//! changes; `rm -rf data` deletes 2,113 files). Never touches the network and never changes
//! anything; stops at a deadline (default 200 ms) and then says "not measured" or "at least",
//! never a total it did not finish. Only commands the shell surely runs at the top level, in
//! the directory cmdguard was started in, are measured; remote effects (databases, clouds) say
//! nothing rather than guess. Computed only after the verdict is ask or deny: a command that
//! passes pays nothing.

pub mod files;
pub mod git;
pub mod target;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::decide::{Decision, Unit};
use crate::shell::Analysis;
use target::Stake;

/// The default time limit for measuring.
pub const BUDGET: Duration = Duration::from_millis(200);

pub struct Budget {
    deadline: Instant,
}

impl Budget {
    pub fn new(limit: Duration) -> Budget {
        Budget { deadline: Instant::now() + limit }
    }

    pub fn over(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

/// A figure that could not be had: git failed, or the deadline came.
#[derive(Debug)]
pub struct Cut;

/// What the command would destroy: one line per stake, joined into the one line shown.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blast {
    pub lines: Vec<String>,
}

impl Blast {
    pub fn summary(&self) -> String {
        self.lines.join("; ")
    }
}

/// Programs that change the directory later commands run in.
const CHANGES_DIRECTORY: &[&str] = &["cd", "pushd", "popd", "chdir"];

/// The one "at stake" line for a command that asks or is denied, measured from `cwd` within
/// the `blast_radius_ms` setting; `None` for any other verdict, with the setting at 0, or when
/// no part of the command is a form whose stake is known here.
pub fn stake(policy: &crate::rules::Policy, analysis: &Analysis, decision: &Decision, cwd: &Path) -> Option<String> {
    let limit = Duration::from_millis(policy.settings.blast_radius_ms);
    let stops = matches!(decision.verdict, crate::decide::Verdict::Ask | crate::decide::Verdict::Deny);
    if !stops || limit.is_zero() {
        return None;
    }
    measure(analysis, decision, cwd, limit, policy.settings.recovery_limit).map(|b| b.summary())
}

/// A part of a command whose stake may be known here: its text (escaped for the terminal), the
/// directory it runs in (or why it is not measured), and what it would destroy.
pub struct Local {
    pub shown: String,
    pub dir: Result<PathBuf, String>,
    pub stakes: Vec<Stake>,
}

/// The segments with hits that were not allowed, whose stake is a form known here: what the
/// blast radius measures and what a recovery point keeps. Only commands the shell surely runs
/// at the top level, as this user, here or in the directory a segment names, have a directory.
pub fn local(analysis: &Analysis, decision: &Decision, cwd: &Path) -> Vec<Local> {
    let mut segments: Vec<usize> = decision
        .hits
        .iter()
        .filter(|h| h.allowed_by.is_none())
        .filter_map(|h| match h.unit {
            Unit::Segment(i) => Some(i),
            _ => None,
        })
        .collect();
    segments.sort_unstable();
    segments.dedup();
    // Where each command runs (wrappers that change user, host or directory, `git -C`), as
    // allow entries see it: only what runs here, as this user, is measured.
    let places = crate::decide::place::segment_places(analysis);
    let mut out = Vec::new();
    for i in segments {
        let seg = &analysis.segments[i];
        // What a nested script or an unknown program's operand runs is not measured here.
        if !seg.origin.is_empty() || seg.possible.is_some() {
            continue;
        }
        let stakes = target::stakes(seg);
        if stakes.is_empty() {
            continue;
        }
        let shown = crate::term::escape(&seg.text);
        let moved = analysis.segments[..i]
            .iter()
            .any(|s| s.words.first().is_some_and(|p| CHANGES_DIRECTORY.contains(&p.as_str())));
        let dir = if !places[i].is_empty() {
            Err(format!("it runs at `{}`", crate::term::escape(&places[i])))
        } else if moved && seg.cwd.is_none() {
            Err("it runs in another directory".to_string())
        } else {
            Ok(seg.cwd.as_deref().map(Path::new).unwrap_or(cwd).to_path_buf())
        };
        out.push(Local { shown, dir, stakes });
    }
    out
}

/// Measures the stakes of the segments with hits that were not allowed; `None` when none of
/// them is a form whose stake is known here.
fn measure(analysis: &Analysis, decision: &Decision, cwd: &Path, limit: Duration, keep_limit: u64) -> Option<Blast> {
    let budget = Budget::new(limit);
    let home = home();
    let mut git: Option<(PathBuf, git::Git)> = None;
    let mut lines = Vec::new();
    for part in local(analysis, decision, cwd) {
        let dir = match &part.dir {
            Ok(d) => d,
            Err(why) => {
                lines.push(format!("`{}`: not measured ({why})", part.shown));
                continue;
            }
        };
        if git.as_ref().is_none_or(|(d, _)| d != dir) {
            git = Some((dir.clone(), git::Git::new(dir, &budget)));
        }
        let git = &git.as_ref().expect("just set").1;
        for stake in &part.stakes {
            if let Some(line) = one(git, stake, dir, home.as_deref(), &budget, keep_limit) {
                lines.push(line);
            }
        }
    }
    (!lines.is_empty()).then_some(Blast { lines })
}

/// `$HOME`, when it is an absolute path (`~` expands to it).
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_absolute())
}

fn one(
    git: &git::Git,
    stake: &Stake,
    cwd: &Path,
    home: Option<&Path>,
    budget: &Budget,
    keep_limit: u64,
) -> Option<String> {
    let root = git.toplevel().unwrap_or(cwd);
    match stake {
        Stake::Files { how, paths, recursive } => {
            let targets = match files::resolve_all(paths, cwd, home) {
                Ok(t) => t,
                Err(p) => {
                    return Some(format!(
                        "{}: not measured (`{}` is not known here)",
                        how.verb(),
                        crate::term::escape(p)
                    ));
                }
            };
            let t = files::tally(&targets, *recursive, root, budget);
            let in_git =
                if t.found.is_empty() || t.cut { None } else { files::in_git(git, &t.found, budget).ok().flatten() };
            Some(files::describe(how.verb(), &t, in_git) + &unkept(&t, keep_limit))
        }
        Stake::Unknown => Some("not measured (part of it is known only when it runs)".into()),
        Stake::FindDelete { roots, expression } => find_delete(git, roots, expression, cwd, root, budget, keep_limit),
        _ => Some(match git::describe(git, stake, budget) {
            Ok(line) => line?,
            Err(Cut) => "not measured (git did not answer in time)".to_string(),
        }),
    }
}

/// Counts what `find` would delete (`find_listed`).
fn find_delete(
    git: &git::Git,
    roots: &[String],
    expression: &[String],
    cwd: &Path,
    root: &Path,
    budget: &Budget,
    keep_limit: u64,
) -> Option<String> {
    let Ok(targets) = find_listed(roots, expression, cwd, budget) else {
        return Some("deletes: not measured (find did not finish in time)".into());
    };
    let t = files::tally(&targets, false, root, budget);
    let in_git = if t.cut { None } else { files::in_git(git, &t.found, budget).ok().flatten() };
    Some(files::describe("deletes", &t, in_git) + &unkept(&t, keep_limit))
}

/// What the prompt says when a recovery point could not keep these files: more bytes than the
/// `recovery_limit` setting (0: recovery points are off, and nothing is said).
fn unkept(t: &files::Tally, keep_limit: u64) -> String {
    if keep_limit == 0 || t.bytes <= keep_limit {
        return String::new();
    }
    format!(", not recoverable (over the {} recovery limit)", crate::state::human_size(keep_limit))
}

/// What `find ROOTS EXPRESSION -delete` would delete, deepest first: the same `find` run
/// without `-delete` (its expression holds only tests without side effects), from `cwd`.
pub fn find_listed(roots: &[String], expression: &[String], cwd: &Path, budget: &Budget) -> Result<Vec<PathBuf>, Cut> {
    let mut args: Vec<&str> = roots.iter().map(String::as_str).collect();
    args.push("-depth");
    args.extend(expression.iter().map(String::as_str));
    args.push("-print0");
    Ok(run_find(&args, cwd, budget)?.into_iter().map(|p| cwd.join(p)).collect())
}

fn run_find(args: &[&str], cwd: &Path, budget: &Budget) -> Result<Vec<String>, Cut> {
    let mut cmd = std::process::Command::new("find");
    cmd.args(args).current_dir(cwd);
    let buf = run_until(cmd, budget)?;
    Ok(buf.split(|b| *b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect())
}

/// Runs a read-only helper process (stdin empty, stderr dropped) and returns its standard
/// output if it succeeded before the deadline; one still running then is killed.
pub fn run_until(mut cmd: std::process::Command, budget: &Budget) -> Result<Vec<u8>, Cut> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().map_err(|_| Cut)?;
    let mut out = child.stdout.take().ok_or(Cut)?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        out.read_to_end(&mut buf).map(|_| buf)
    });
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let buf = reader.join().map_err(|_| Cut)?.map_err(|_| Cut)?;
                return if status.success() { Ok(buf) } else { Err(Cut) };
            }
            Ok(None) if budget.over() => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(Cut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => return Err(Cut),
        }
    }
}

/// `1 file`, `2,113 files`.
pub fn many(n: u64, one: &str, more: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { more })
}

/// `1,234`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1.4 GB`, `380 KB`, `12 bytes` (powers of 1,000, like the figures people compare).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut v = bytes as f64 / 1000.0;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if v < 10.0 { format!("{v:.1} {}", UNITS[unit]) } else { format!("{v:.0} {}", UNITS[unit]) }
}
