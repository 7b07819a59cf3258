//! What a git command would throw away, asked of git itself without changing anything: no
//! optional locks (so `status` never rewrites the index), no fsmonitor hook, no external diff
//! or textconv drivers, no clean or process filters (a repository's config could name any
//! program there, and comparing the work tree would run it), no pager, no prompt, never the
//! network. Each git process is killed at
//! the deadline, and then the figure is "not measured".

use std::path::{Path, PathBuf};
use std::process::Command;

use super::target::Stake;
use super::{Budget, Cut, many};

pub struct Git {
    cwd: PathBuf,
    top: Option<PathBuf>,
    /// `-c filter.NAME.clean=` (and `.process=`, `.smudge=`) for every filter the config
    /// defines: an empty command is no filter.
    no_filters: Vec<String>,
}

impl Git {
    pub fn new(cwd: &Path, budget: &Budget) -> Git {
        let mut g = Git { cwd: cwd.to_path_buf(), top: None, no_filters: Vec::new() };
        // Listing the config runs nothing; a repository whose filters cannot be listed is not
        // asked anything that compares the work tree (its `top` stays unknown).
        let Ok(names) = g.run(&["config", "--name-only", "-z", "--list"], budget) else { return g };
        for name in names.split(|b| *b == 0).filter_map(|n| std::str::from_utf8(n).ok()) {
            // Names are `filter.DRIVER.KEY` (the driver may hold dots; keys are lower case).
            if let Some((driver, _key)) = name.strip_prefix("filter.").and_then(|n| n.rsplit_once('.')) {
                if driver.contains(['=', '\n']) {
                    return g; // `-c` could not name it: measure nothing here
                }
                for key in ["clean", "smudge", "process"] {
                    g.no_filters.push(format!("filter.{driver}.{key}="));
                }
            }
        }
        g.no_filters.sort();
        g.no_filters.dedup();
        g.top = g
            .run(&["rev-parse", "--show-toplevel"], budget)
            .ok()
            .and_then(|o| String::from_utf8(o).ok())
            .map(|s| PathBuf::from(s.trim_end_matches('\n')))
            .filter(|p| p.is_absolute());
        g
    }

    pub fn toplevel(&self) -> Option<&Path> {
        self.top.as_deref()
    }

    pub fn run(&self, args: &[&str], budget: &Budget) -> Result<Vec<u8>, Cut> {
        self.run_in(&self.cwd, args, budget)
    }

    /// Runs git read-only in `dir`; its standard output, or `Cut` if it failed or ran past the
    /// deadline.
    pub fn run_in(&self, dir: &Path, args: &[&str], budget: &Budget) -> Result<Vec<u8>, Cut> {
        let mut cmd = self.command(dir);
        cmd.args(args);
        super::run_until(cmd, budget)
    }

    /// A git command in `dir` that runs nothing a repository's config names: no optional locks,
    /// no fsmonitor, no external diff, no filter drivers, no pager, no prompt.
    pub fn command(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        cmd.args(["--no-pager", "--literal-pathspecs", "-c", "core.fsmonitor=false", "-c", "diff.external="]);
        // Ref updates would run the repository's reference-transaction hook.
        cmd.args(["-c", "core.hooksPath=/dev/null"]);
        for f in &self.no_filters {
            cmd.args(["-c", f]);
        }
        cmd.current_dir(dir)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env_remove("GIT_EXTERNAL_DIFF")
            .env_remove("GIT_INDEX_FILE");
        cmd
    }

    /// Whether git could list this repository's config (and so knows which filters to turn off).
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn text(&self, args: &[&str], budget: &Budget) -> Result<String, Cut> {
        String::from_utf8(self.run(args, budget)?).map_err(|_| Cut)
    }

    fn rev_count(&self, args: &[&str], budget: &Budget) -> Result<u64, Cut> {
        let mut all = vec!["rev-list", "--count"];
        all.extend(args);
        self.text(&all, budget)?.trim().parse().map_err(|_| Cut)
    }

    /// Files and changed lines of a `diff --numstat` (binary files count as a file, no lines).
    fn numstat(&self, args: &[&str], budget: &Budget) -> Result<(u64, u64), Cut> {
        let mut all = vec!["diff", "--numstat", "--no-ext-diff", "--no-textconv", "--ignore-submodules"];
        all.extend(args);
        let out = self.text(&all, budget)?;
        let mut files = 0;
        let mut lines = 0;
        for l in out.lines() {
            let mut f = l.split('\t');
            let (a, d) = (f.next().unwrap_or("-"), f.next().unwrap_or("-"));
            files += 1;
            lines += a.parse::<u64>().unwrap_or(0) + d.parse::<u64>().unwrap_or(0);
        }
        Ok((files, lines))
    }

    fn current_branch(&self, budget: &Budget) -> Option<String> {
        self.text(&["symbolic-ref", "--quiet", "--short", "HEAD"], budget).ok().map(|s| s.trim().to_string())
    }

    /// Commits reachable from `tip` that no ref other than `except` (a branch name) reaches.
    fn only_from(&self, tip: &str, except: Option<&str>, budget: &Budget) -> Result<u64, Cut> {
        let exclude = except.map(|b| format!("--exclude={b}"));
        let mut args = vec![tip, "--not"];
        if tip != "HEAD" {
            args.push("HEAD");
        }
        args.extend(exclude.as_deref());
        args.extend(["--branches", "--tags", "--remotes"]);
        self.rev_count(&args, budget)
    }
}

fn changes(files: u64, lines: u64) -> String {
    format!(
        "{} with uncommitted changes ({})",
        many(files, "file", "files"),
        many(lines, "changed line", "changed lines")
    )
}

/// One line for what a git stake destroys; `None` where git cannot tell (say nothing).
pub fn describe(git: &Git, stake: &Stake, budget: &Budget) -> Result<Option<String>, Cut> {
    if git.toplevel().is_none() {
        return Ok(None);
    }
    Ok(Some(match stake {
        Stake::ResetHard { to } => {
            let (files, lines) = git.numstat(&["HEAD"], budget)?;
            let mut out = format!("loses {}", changes(files, lines));
            if let Some(to) = to {
                let target = format!("{to}^{{commit}}");
                git.run(&["rev-parse", "--verify", "--quiet", &target], budget)?;
                let branch = git.current_branch(budget);
                let exclude = branch.map(|b| format!("--exclude={b}"));
                let mut args = vec!["HEAD", "--not", to.as_str()];
                args.extend(exclude.as_deref());
                args.extend(["--branches", "--tags", "--remotes"]);
                let dropped = git.rev_count(&args, budget)?;
                if dropped > 0 {
                    out += &format!(", and {} that no other branch or tag holds", many(dropped, "commit", "commits"));
                }
            }
            out
        }
        Stake::Discard { paths, staged_too } => {
            let mut args: Vec<&str> = if *staged_too { vec!["HEAD", "--"] } else { vec!["--"] };
            args.extend(paths.iter().map(String::as_str));
            let (files, lines) = git.numstat(&args, budget)?;
            format!("loses {}", changes(files, lines))
        }
        Stake::StashDrop { stash, all } => {
            let list = git.text(&["stash", "list", "--format=%gd"], budget)?;
            let names: Vec<&str> = list.lines().collect();
            let dropped: Vec<&str> = match (all, stash) {
                (true, _) => names,
                (false, Some(s)) => vec![s.as_str()],
                (false, None) => names.into_iter().take(1).collect(),
            };
            let (mut files, mut lines) = (0, 0);
            for s in &dropped {
                let (f, l) = git.numstat(&[&format!("{s}^1"), s], budget)?;
                files += f;
                lines += l;
                // Untracked files stashed with `-u` are in a third parent.
                let third = format!("{s}^3");
                if git.run(&["rev-parse", "--verify", "--quiet", &third], budget).is_ok() {
                    let names = git.run(&["ls-tree", "-r", "-z", "--name-only", &third], budget)?;
                    files += names.split(|b| *b == 0).filter(|n| !n.is_empty()).count() as u64;
                }
            }
            format!(
                "drops {} ({}, {})",
                many(dropped.len() as u64, "stash", "stashes"),
                many(files, "file", "files"),
                many(lines, "changed line", "changed lines")
            )
        }
        Stake::Clean { args } => {
            let listed = clean_would_remove(git, args, budget)?;
            let top = git.toplevel().unwrap_or(&git.cwd);
            let t = super::files::tally(&listed, true, top, budget);
            super::files::describe("deletes", &t, Some((0, 0)))
        }
        Stake::BranchDelete { names } => {
            let mut lost = 0;
            for n in names {
                let r = format!("refs/heads/{n}");
                git.run(&["rev-parse", "--verify", "--quiet", &r], budget)?;
                lost += git.only_from(&r, Some(n), budget)?;
            }
            format!("loses {} that no other branch or tag holds", many(lost, "commit", "commits"))
        }
        Stake::WorktreeRemove { path } => {
            let dir = git.cwd.join(path);
            let sub = Git::new(&dir, budget);
            if sub.top.is_none() {
                return Err(Cut);
            }
            let (files, lines) = sub.numstat(&["HEAD"], budget)?;
            let untracked = sub.run(&["ls-files", "-z", "--others", "--exclude-standard"], budget)?;
            let untracked = untracked.split(|b| *b == 0).filter(|s| !s.is_empty()).count() as u64;
            format!("loses {} and {}", changes(files, lines), many(untracked, "untracked file", "untracked files"))
        }
        Stake::ForcePush { remote, refspecs } => return force_push(git, remote.as_deref(), refspecs, budget),
        _ => return Ok(None),
    }))
}

/// What `git clean ARGS` would remove, asked of `git clean -n` with the same options (`-f`
/// left out), as absolute paths (directories end in `/` in git's listing and stay directories).
pub fn clean_would_remove(git: &Git, args: &[String], budget: &Budget) -> Result<Vec<PathBuf>, Cut> {
    let mut dry: Vec<String> = vec!["-c".into(), "core.quotePath=false".into(), "clean".into(), "-n".into()];
    for a in args {
        if a.starts_with('-') && !a.starts_with("--") && a.contains('f') {
            let rest: String = a.chars().filter(|c| *c != 'f').collect();
            if rest != "-" {
                dry.push(rest);
            }
        } else if a != "--force" {
            dry.push(a.clone());
        }
    }
    let dry: Vec<&str> = dry.iter().map(String::as_str).collect();
    let out = git.text(&dry, budget)?;
    let mut listed = Vec::new();
    for l in out.lines().filter_map(|l| l.strip_prefix("Would remove ")) {
        // A name git had to quote (a newline, a quote, a control character) is not read here.
        if l.starts_with('"') {
            return Err(Cut);
        }
        listed.push(git.cwd.join(l));
    }
    Ok(listed)
}

/// Commits on the remote-tracking branch (as last fetched) that the push would drop.
fn force_push(git: &Git, remote: Option<&str>, refspecs: &[String], budget: &Budget) -> Result<Option<String>, Cut> {
    let Some(tracking) = push_tracking(git, remote, refspecs, budget)? else { return Ok(None) };
    let mut dropped = 0;
    let mut named = Vec::new();
    for (tracking, src) in tracking {
        dropped += git.rev_count(&[&tracking, "--not", &src], budget)?;
        named.push(tracking.trim_start_matches("refs/remotes/").to_string());
    }
    Ok(Some(format!(
        "drops {} on {} (as last fetched) that the pushed branch does not have",
        many(dropped, "commit", "commits"),
        named.join(", ")
    )))
}

/// The remote-tracking refs (`refs/remotes/R/B`, as last fetched) a force push would overwrite,
/// each with the local source pushed there; `None` where the push's targets cannot be read.
pub fn push_tracking(
    git: &Git,
    remote: Option<&str>,
    refspecs: &[String],
    budget: &Budget,
) -> Result<Option<Vec<(String, String)>>, Cut> {
    let branch = git.current_branch(budget);
    let config = |key: String| git.text(&["config", "--get", &key], budget).ok().map(|s| s.trim().to_string());
    let remote = match remote {
        Some(r) => r.to_string(),
        None => branch
            .as_ref()
            .and_then(|b| config(format!("branch.{b}.pushRemote")))
            .or_else(|| config("remote.pushDefault".into()))
            .or_else(|| branch.as_ref().and_then(|b| config(format!("branch.{b}.remote"))))
            .unwrap_or_else(|| "origin".into()),
    };
    let pairs: Vec<(String, String)> = if refspecs.is_empty() {
        let Some(b) = branch.clone() else { return Ok(None) };
        let dst = config(format!("branch.{b}.merge")).map(|m| m.trim_start_matches("refs/heads/").to_string());
        vec![(b.clone(), dst.unwrap_or(b))]
    } else {
        let mut v = Vec::new();
        for r in refspecs {
            let r = r.trim_start_matches('+');
            let (src, dst) = r.split_once(':').unwrap_or((r, r));
            // A source read as an option of `rev-list` would change what is asked.
            if src.is_empty() || dst.is_empty() || src.contains('*') || src.starts_with('-') || dst.starts_with('-') {
                return Ok(None);
            }
            let src = if src == "HEAD" { branch.clone().unwrap_or_else(|| "HEAD".into()) } else { src.to_string() };
            v.push((src, dst.trim_start_matches("refs/heads/").to_string()));
        }
        v
    };
    let mut out = Vec::new();
    for (src, dst) in pairs {
        let tracking = format!("refs/remotes/{remote}/{dst}");
        if git.run(&["rev-parse", "--verify", "--quiet", &tracking], budget).is_err() {
            continue;
        }
        out.push((tracking, src));
    }
    Ok((!out.is_empty()).then_some(out))
}
