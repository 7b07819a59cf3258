//! Recovery points and `cmdguard undo` on real repositories and real files: each git form and
//! each file form is approved, run, and undone, and what comes back is compared with what was
//! there (work tree, index, untracked files, stashes, branches; contents, modes, links and
//! times). Most commands are let through by trial mode (`--audit`), which keeps a point exactly
//! as an approval does; one goes through the real prompt. Also: the size limit, expiry, points
//! made by concurrent processes, newer work refused without `--force`, and processes killed
//! with SIGKILL while keeping a point: no partial point is ever offered.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::approval::{Asking, Finished};
use crate::blast::git;
use crate::env::{TestEnv, code, stderr, stdout};

/// A repository with a few commits' worth of files.
fn repo() -> TestEnv {
    let t = TestEnv::new();
    git(&t.project, &["init", "-q", "-b", "main"]);
    t.write("a.txt", "one\n");
    t.write("src/lib.rs", "fn main() {}\n");
    t.write(".gitignore", "target/\n*.log\n");
    git(&t.project, &["add", "."]);
    git(&t.project, &["commit", "-qm", "one"]);
    t
}

/// Runs a command cmdguard asks about, let through by trial mode (which keeps a point).
fn approved(t: &TestEnv, command: &str) -> String {
    let out = t.run(["--audit", "--session-key", "k", "-c", command]);
    assert_eq!(code(&out), 0, "{command}: {}", stderr(&out));
    last_point(t).unwrap_or_else(|| panic!("no recovery point for {command}: {}", stderr(&out)))
}

fn last_point(t: &TestEnv) -> Option<String> {
    let rec = t.audit().into_iter().rev().find(|r| r["decided_by"] != "undo")?;
    rec["recovery"].as_str().map(String::from)
}

/// `cmdguard undo ARGS` at a terminal, confirmed with `y` (or the typed code with --force).
fn undo(t: &TestEnv, args: &[&str]) -> Finished {
    let mut all = vec!["undo"];
    all.extend(args);
    let mut a = Asking::start(t, &all);
    let want = if args.contains(&"--force") { "type the code " } else { "Undo? [y" };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !a.pty.screen().contains(want) {
        // An undo that stops before asking (newer work, no point) is returned as it is.
        if a.child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            return a.finish();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if args.contains(&"--force") { a.confirm() } else { a.answer("y") }
}

/// The files of a tree and their contents, without directory modes (a point keeps those in
/// its record, its copies of directories stay private).
fn contents(dir: &Path) -> String {
    state(dir).lines().filter(|l| !l.contains(": dir ")).map(|l| format!("{l}\n")).collect()
}

/// Everything git and a person would see: the work tree's files (contents, exec bit, links),
/// the index, HEAD, and the stash.
fn state(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            files.push((p, m));
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, m) in files {
        let rel = p.strip_prefix(dir).unwrap().display().to_string();
        let what = if m.file_type().is_symlink() {
            format!("-> {}", std::fs::read_link(&p).unwrap().display())
        } else if m.is_dir() {
            format!("dir {:o}", m.mode() & 0o7777)
        } else {
            format!("{:o} {:?}", m.mode() & 0o7777, std::fs::read_to_string(&p).unwrap_or_default())
        };
        out += &format!("{rel}: {what}\n");
    }
    if dir.join(".git").exists() {
        out += &git(dir, &["ls-files", "-s"]);
        out += &git(dir, &["rev-parse", "HEAD"]);
        out += &git(dir, &["stash", "list", "--format=%H %gs"]);
        out += &git(dir, &["branch", "--format=%(refname) %(objectname)"]);
    }
    out
}

fn modify(t: &TestEnv) {
    t.write("a.txt", "one\ntwo\n");
    t.write("staged.txt", "staged\n");
    git(&t.project, &["add", "staged.txt"]);
    t.write("staged.txt", "staged\nthen changed\n");
    t.write("notes.md", "untracked\n");
    std::fs::remove_file(t.project.join("src/lib.rs")).unwrap();
    std::os::unix::fs::symlink("a.txt", t.project.join("link")).unwrap();
    git(&t.project, &["add", "link"]);
}

#[test]
fn git_reset_hard_and_discards_are_undone_exactly() {
    for command in
        ["git reset --hard", "git checkout -- .", "git restore --staged --worktree .", "git reset --hard HEAD~1"]
    {
        let t = repo();
        t.write("b.txt", "two\n");
        git(&t.project, &["add", "b.txt"]);
        git(&t.project, &["commit", "-qm", "two"]);
        modify(&t);
        let before = state(&t.project);
        let id = approved(&t, command);
        assert_ne!(state(&t.project), before, "{command} changed nothing");
        let f = undo(&t, &[]);
        assert_eq!(f.code, 0, "{command}: {}{}", f.stderr, f.screen);
        assert!(f.stdout.contains(&format!("undone: {id}")), "{}", f.stdout);
        assert_eq!(state(&t.project), before, "{command}: not what was there");
        // The user's refs, stash and index are theirs: only refs/cmdguard/ holds the point.
        let refs = git(&t.project, &["for-each-ref", "--format=%(refname)"]);
        assert!(
            refs.lines().all(|r| r == "refs/heads/main" || r.starts_with(&format!("refs/cmdguard/{id}/"))),
            "{refs}"
        );
    }
}

#[test]
fn git_clean_brings_back_untracked_and_ignored_files() {
    let t = repo();
    t.write("notes.md", "mine\n");
    t.write("target/debug/out.bin", "built\n");
    t.write("logs/run.log", "log\n");
    std::fs::set_permissions(t.project.join("notes.md"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = state(&t.project);
    approved(&t, "git clean -fdx");
    assert!(!t.exists("target") && !t.exists("notes.md"));
    let f = undo(&t, &[]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert_eq!(state(&t.project), before);
}

#[test]
fn stash_drop_and_clear_and_branch_delete_come_back() {
    let t = repo();
    for n in ["first", "second"] {
        t.write("a.txt", &format!("{n}\n"));
        git(&t.project, &["stash", "push", "-qm", n]);
    }
    git(&t.project, &["switch", "-qc", "topic"]);
    t.write("t.txt", "topic work\n");
    git(&t.project, &["add", "t.txt"]);
    git(&t.project, &["commit", "-qm", "topic"]);
    git(&t.project, &["switch", "-q", "main"]);
    let before = state(&t.project);
    for command in ["git stash drop", "git stash clear", "git branch -D topic"] {
        approved(&t, command);
        assert_ne!(state(&t.project), before, "{command}");
        let f = undo(&t, &[]);
        assert_eq!(f.code, 0, "{command}: {}{}", f.stderr, f.screen);
        assert_eq!(state(&t.project), before, "{command}");
    }
}

#[test]
fn a_force_push_keeps_the_overwritten_commit_and_shows_the_push_back() {
    let t = repo();
    let remote = t.home.join("remote.git");
    git(&t.home, &["init", "-q", "--bare", remote.to_str().unwrap()]);
    git(&t.project, &["remote", "add", "origin", remote.to_str().unwrap()]);
    git(&t.project, &["push", "-q", "-u", "origin", "main"]);
    t.write("a.txt", "theirs\n");
    git(&t.project, &["commit", "-qam", "theirs"]);
    git(&t.project, &["push", "-q"]);
    let theirs = git(&t.project, &["rev-parse", "HEAD"]).trim().to_string();
    git(&t.project, &["reset", "-q", "--hard", "HEAD~1"]);
    t.write("a.txt", "mine\n");
    git(&t.project, &["commit", "-qam", "mine"]);
    let id = approved(&t, "git push --force");
    assert_ne!(git(&remote, &["rev-parse", "main"]).trim(), theirs, "the push ran");
    let kept = git(&t.project, &["for-each-ref", "--format=%(objectname)", &format!("refs/cmdguard/{id}/")]);
    assert_eq!(kept.trim(), theirs);
    let f = undo(&t, &[]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert!(
        f.stdout.contains(&format!("git push --force-with-lease=refs/heads/main origin {theirs}:refs/heads/main")),
        "{}",
        f.stdout
    );
}

#[test]
fn worktree_remove_is_undone_with_its_changes() {
    let t = repo();
    let wt = t.home.join("wt");
    git(&t.project, &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    std::fs::write(wt.join("a.txt"), "side change\n").unwrap();
    std::fs::write(wt.join("new.txt"), "untracked in the work tree\n").unwrap();
    let before = state(&wt);
    approved(&t, &format!("git worktree remove --force {}", wt.display()));
    assert!(!wt.exists());
    let f = undo(&t, &[]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert_eq!(state(&wt), before);
}

#[test]
fn rm_of_a_tree_is_undone_with_contents_modes_links_and_times() {
    let t = TestEnv::new();
    t.write("data/a.csv", "1,2\n");
    t.write("data/deep/b.bin", "\u{1}\u{2}");
    t.write("data/deep/run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(t.project.join("data/deep/run.sh"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(t.project.join("data/a.csv"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("../a.csv", t.project.join("data/deep/link")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/target", t.project.join("data/dangling")).unwrap();
    std::fs::set_permissions(t.project.join("data/deep"), std::fs::Permissions::from_mode(0o750)).unwrap();
    let mtime = |p: &str| std::fs::symlink_metadata(t.project.join(p)).unwrap().mtime();
    let before = state(&t.project);
    let times: Vec<i64> = ["data/a.csv", "data/deep/b.bin", "data/deep/link"].iter().map(|p| mtime(p)).collect();
    std::thread::sleep(Duration::from_millis(1100));
    approved(&t, "rm -rf data");
    assert!(!t.exists("data"));
    let f = undo(&t, &[]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert_eq!(state(&t.project), before);
    let after: Vec<i64> = ["data/a.csv", "data/deep/b.bin", "data/deep/link"].iter().map(|p| mtime(p)).collect();
    assert_eq!(after, times, "modification times come back");
}

#[test]
fn files_changed_in_place_come_back() {
    let t = TestEnv::new();
    t.user_rules("[[rule]]\nid = \"test.echo\"\naction = \"ask\"\npattern = '^echo '\nreason = \"test\"\n");
    for (command, file) in
        [("truncate -s 0 app.log", "app.log"), ("echo gone > notes.txt", "notes.txt"), ("shred -u key.pem", "key.pem")]
    {
        t.write(file, "precious\ncontent\n");
        let before = state(&t.project);
        approved(&t, command);
        assert_ne!(state(&t.project), before, "{command}");
        let f = undo(&t, &[]);
        assert_eq!(f.code, 0, "{command}: {}{}", f.stderr, f.screen);
        assert_eq!(state(&t.project), before, "{command}");
    }
    // find -delete: what it lists is kept.
    t.write("logs/old.log", "old\n");
    t.write("logs/keep.txt", "keep\n");
    let before = state(&t.project);
    approved(&t, "find . -name '*.log' -delete");
    assert!(!t.exists("logs/old.log"));
    assert_eq!(undo(&t, &[]).code, 0);
    assert_eq!(state(&t.project), before);
}

#[test]
fn the_prompt_approval_keeps_a_point_and_the_audit_log_links_both() {
    let t = TestEnv::new();
    t.write("data/x.txt", "x\n");
    let mut a = Asking::start(&t, &["-c", "rm -rf data"]);
    let screen = a.wait_prompt();
    assert!(screen.contains("deletes 1 file (2 bytes)"), "{}", &screen[screen.len().saturating_sub(600)..]);
    let f = a.answer("o");
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(!t.exists("data"));
    let id = last_point(&t).expect("the approval names its point");
    let u = undo(&t, &[id.as_str()]);
    assert_eq!(u.code, 0, "{}{}", u.stderr, u.screen);
    assert_eq!(std::fs::read_to_string(t.project.join("data/x.txt")).unwrap(), "x\n");
    let undone = t.audit().into_iter().last().unwrap();
    assert_eq!(undone["decided_by"], "undo");
    assert_eq!(undone["recovery"], id.as_str());
    // Once undone, it is not offered again without --force.
    let again = t.run(["undo", &id]);
    assert_eq!(code(&again), 1, "{}", stderr(&again));
    assert!(stderr(&again).contains("undone already"), "{}", stderr(&again));
}

#[test]
fn newer_work_is_refused_unless_forced() {
    let t = repo();
    t.write("a.txt", "mine\n");
    approved(&t, "git reset --hard");
    t.write("a.txt", "written after the reset\n");
    let out = t.run(["undo"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("newer work:") && stderr(&out).contains("a.txt changed after the command ran"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(t.project.join("a.txt")).unwrap(),
        "written after the reset\n",
        "nothing touched"
    );
    let f = undo(&t, &["--force"]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert_eq!(std::fs::read_to_string(t.project.join("a.txt")).unwrap(), "mine\n");

    // A deleted path that exists again is newer work too.
    t.write("docs/x", "x\n");
    approved(&t, "rm -rf docs");
    t.write("docs/y", "new\n");
    assert_eq!(code(&t.run(["undo"])), 1);
}

#[test]
fn over_the_size_limit_nothing_is_kept_and_the_prompt_says_so() {
    let t = TestEnv::new();
    t.user_rules("[settings]\nrecovery_limit = \"1KiB\"\n");
    t.write("big/blob", &"x".repeat(4000));
    let out = t.run(["explain", "-c", "rm -rf big"]);
    assert!(stdout(&out).contains("not recoverable (over the 1 KiB recovery limit)"), "{}", stdout(&out));
    let ran = t.run(["--audit", "-c", "rm -rf big"]);
    assert!(stderr(&ran).contains("no recovery point for `rm -rf big`"), "{}", stderr(&ran));
    assert!(last_point(&t).is_none());
    assert!(stdout(&t.run(["undo", "--list"])).starts_with("no recovery points"));
}

#[test]
fn expired_points_are_not_offered_and_are_pruned_in_the_background() {
    let t = repo();
    t.user_rules("[settings]\nrecovery_ttl = \"1s\"\n");
    t.write("a.txt", "mine\n");
    let id = approved(&t, "git reset --hard");
    assert!(t.state_dir().join("recovery").join(&id).exists());
    std::thread::sleep(Duration::from_millis(2100));
    assert!(stdout(&t.run(["undo", "--list"])).starts_with("no recovery points"), "expired points are not listed");
    t.write("a.txt", "again\n");
    let newer = approved(&t, "git reset --hard");
    // The next point starts the prune without waiting for it: poll.
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.state_dir().join("recovery").join(&id).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!t.state_dir().join("recovery").join(&id).exists(), "expired point pruned");
    let refs = git(&t.project, &["for-each-ref", "--format=%(refname)", "refs/cmdguard/"]);
    assert!(!refs.contains(&id), "its ref went with it: {refs}");
    assert!(refs.contains(&newer), "{refs}");
}

#[test]
fn concurrent_processes_each_keep_a_whole_point() {
    let t = TestEnv::new();
    let n = 6;
    for i in 0..n {
        for j in 0..20 {
            t.write(&format!("d{i}/f{j}"), &format!("{i}-{j}\n"));
        }
    }
    let before = state(&t.project);
    let children: Vec<_> = (0..n)
        .map(|i| {
            t.command(["--audit", "-c", &format!("rm -rf d{i}")]).stderr(std::process::Stdio::piped()).spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let list = stdout(&t.run(["undo", "--list"]));
    let ids: Vec<String> =
        list.lines().filter(|l| l.starts_with("20")).map(|l| l.split(' ').next().unwrap().to_string()).collect();
    assert_eq!(ids.len(), n, "{list}");
    for id in &ids {
        let f = undo(&t, &[id.as_str()]);
        assert_eq!(f.code, 0, "{id}: {}{}", f.stderr, f.screen);
    }
    assert_eq!(state(&t.project), before);
}

#[test]
fn a_process_killed_while_keeping_a_point_never_leaves_a_partial_one() {
    let t = TestEnv::new();
    let make = || {
        let _ = std::fs::remove_dir_all(t.project.join("tree"));
        for j in 0..400 {
            t.write(&format!("tree/d{}/f{j}", j % 20), &format!("{j}\n").repeat(50));
        }
    };
    make();
    let whole = contents(&t.project.join("tree"));
    let mut checked = std::collections::HashSet::new();
    let mut delay = 1;
    while delay <= 512 {
        make();
        // Run as argv, so SIGKILL reaches cmdguard or the rm it became, never a shell between.
        let mut child =
            t.command(["--audit", "--", "rm", "-rf", "tree"]).stderr(std::process::Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        let _ = child.wait();
        // Every point offered holds the whole tree as it was before the command.
        let list = stdout(&t.run(["undo", "--list"]));
        for l in list.lines().filter(|l| l.starts_with("20")) {
            let id = l.split(' ').next().unwrap().to_string();
            if checked.insert(id.clone()) {
                let kept = contents(&t.state_dir().join("recovery").join(&id).join("data/0"));
                assert!(kept == whole, "a partial point was offered: {id}");
            }
        }
        delay *= 2;
    }
    // Killed part way, a point is never listed: what is left is hidden until pruned.
    let hidden = std::fs::read_dir(t.state_dir().join("recovery"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".new-"))
        .count();
    assert!(checked.len() + hidden >= 1, "no run got as far as keeping a point");
}

#[test]
fn a_hook_call_approved_by_code_keeps_a_point_before_the_host_runs_it() {
    use crate::hook_approval::{approve, blocked_code, call};
    let command = "git reset --hard HEAD~1";
    let t = repo();
    t.write("b.txt", "second\n");
    git(&t.project, &["add", "b.txt"]);
    git(&t.project, &["commit", "-qm", "two"]);
    t.write("a.txt", "uncommitted work\n");
    let before = state(&t.project);
    let c = blocked_code(&t, "codex", "s-1", &t.project, command);
    let (status, screen) = approve(&t, &[&c, "--scope", "once"]);
    assert_eq!(status, 0, "{screen}");
    assert_eq!(call(&t, "codex", "s-1", &t.project, command), None, "the retry passes");
    let rec = t.audit().into_iter().rev().find(|r| r["decided_by"] == "approval-code").unwrap();
    let id = rec["recovery"].as_str().expect("the approved call names its point").to_string();
    // The host runs the command itself; undo brings back the work and the commit.
    git(&t.project, &["reset", "-q", "--hard", "HEAD~1"]);
    assert_ne!(state(&t.project), before);
    let f = undo(&t, &[&id]);
    assert_eq!(f.code, 0, "{}{}", f.stderr, f.screen);
    assert_eq!(state(&t.project), before);
}
