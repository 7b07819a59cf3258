//! Blast radius on real repositories and real files: what `explain`, the refusal, the audit
//! record and the prompt say a command would destroy, checked against counts made here; the
//! time limit reporting "at least" or "not measured", never a total it did not finish.

use std::path::Path;
use std::process::Command;

use crate::approval::Asking;
use crate::env::{TestEnv, code, stderr, stdout};

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository in the project: 10 committed files of 1..=10 lines.
fn repo() -> TestEnv {
    let t = TestEnv::new();
    git(&t.project, &["init", "-q", "-b", "main"]);
    for i in 1..=10 {
        t.write(&format!("f{i}.txt"), &(1..=i).map(|n| format!("{n}\n")).collect::<String>());
    }
    git(&t.project, &["add", "."]);
    git(&t.project, &["commit", "-qm", "one"]);
    t
}

fn stake(t: &TestEnv, command: &str) -> String {
    let out = t.run(["explain", "-c", command]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    text.lines().find_map(|l| l.strip_prefix("at stake:")).map(|s| s.trim().to_string()).unwrap_or_default()
}

#[test]
fn git_reset_hard_counts_the_files_and_lines_it_loses() {
    let t = repo();
    t.write("f1.txt", "changed\n"); // 1 line removed, 1 added
    t.write("f2.txt", "1\n2\n3\n4\n"); // 2 added
    t.write("new.txt", "a\nb\nc\n");
    git(&t.project, &["add", "new.txt"]); // staged new file: reset --hard deletes it
    let numstat = git(&t.project, &["diff", "--numstat", "HEAD"]);
    let lines: u64 =
        numstat.lines().map(|l| l.split('\t').take(2).map(|n| n.parse::<u64>().unwrap()).sum::<u64>()).sum();
    assert_eq!(lines, 7);
    assert_eq!(stake(&t, "git reset --hard"), "loses 3 files with uncommitted changes (7 changed lines)");
    // The analysis's own view of the file is untouched: measuring changed nothing.
    assert_eq!(git(&t.project, &["diff", "--numstat", "HEAD"]), numstat);
    assert_eq!(git(&t.project, &["status", "--porcelain"]).lines().count(), 3);
}

#[test]
fn commits_only_the_deleted_branch_or_the_reset_reaches_are_counted() {
    let t = repo();
    git(&t.project, &["checkout", "-qb", "topic"]);
    for i in 0..3 {
        t.write("topic.txt", &format!("{i}\n"));
        git(&t.project, &["commit", "-qam", "x", "--allow-empty"]);
        if i == 0 {
            git(&t.project, &["add", "topic.txt"]);
            git(&t.project, &["commit", "-qm", "add"]);
        }
    }
    let ahead: u64 = git(&t.project, &["rev-list", "--count", "main..topic"]).trim().parse().unwrap();
    assert_eq!(
        stake(&t, "git reset --hard main"),
        format!(
            "loses 0 files with uncommitted changes (0 changed lines), and {ahead} commits that no other branch or tag holds"
        )
    );
    git(&t.project, &["checkout", "-q", "main"]);
    assert_eq!(stake(&t, "git branch -D topic"), format!("loses {ahead} commits that no other branch or tag holds"));
    git(&t.project, &["tag", "keep", "topic"]);
    assert_eq!(stake(&t, "git branch -D topic"), "loses 0 commits that no other branch or tag holds");
}

#[test]
fn a_force_push_counts_the_remote_commits_it_drops() {
    let t = repo();
    let remote = t.home.join("remote.git");
    git(&t.home, &["init", "-q", "--bare", remote.to_str().unwrap()]);
    git(&t.project, &["remote", "add", "origin", remote.to_str().unwrap()]);
    for _ in 0..2 {
        git(&t.project, &["commit", "-q", "--allow-empty", "-m", "more"]);
    }
    git(&t.project, &["push", "-q", "-u", "origin", "main"]);
    git(&t.project, &["reset", "-q", "--hard", "HEAD~2"]);
    let line = "drops 2 commits on origin/main (as last fetched) that the pushed branch does not have";
    for spelling in ["git push --force", "git push -f origin main", "git push origin +main"] {
        assert_eq!(stake(&t, spelling), line, "{spelling}");
    }
}

#[test]
fn rm_of_a_tree_counts_files_sizes_and_what_git_holds() {
    let t = repo();
    for i in 0..40 {
        t.write(&format!("data/d{}/u{i}.bin", i % 4), &"x".repeat(100 + i));
    }
    t.write("f3.txt", "edited\n");
    let bytes: usize = (0..40).map(|i| 100 + i).sum();
    assert_eq!(bytes, 4780);
    assert_eq!(stake(&t, "rm -rf data"), "deletes 40 files (4.8 KB) in 5 directories, none of them tracked by git");
    let f3 = std::fs::metadata(t.project.join("f3.txt")).unwrap().len()
        + std::fs::metadata(t.project.join("f4.txt")).unwrap().len();
    assert_eq!(
        stake(&t, "rm -rf f3.txt f4.txt missing.txt"),
        format!("deletes 2 files ({f3} bytes), 2 tracked by git, 1 with uncommitted changes")
    );
    assert_eq!(stake(&t, "rm -rf nothing-here"), "deletes nothing that exists now");
    assert_eq!(
        stake(&t, "rm -rf f*.txt"),
        stake(&t, "rm -rf f1.txt f10.txt f2.txt f3.txt f4.txt f5.txt f6.txt f7.txt f8.txt f9.txt")
    );
    assert!(t.exists("data/d0/u0.bin") && t.exists("f3.txt"), "measuring deleted nothing");
}

#[test]
fn what_cannot_be_placed_or_known_says_so() {
    let t = repo();
    t.write("sub/a.txt", "a");
    assert_eq!(stake(&t, "cd sub && rm -rf a.txt"), "`rm -rf a.txt`: not measured (it runs in another directory)");
    assert_eq!(stake(&t, "rm -rf \"$DIR\""), "not measured (part of it is known only when it runs)");
    assert_eq!(stake(&t, "git -C sub reset --hard"), "`git reset --hard`: not measured (it runs at `git -C sub`)");
    assert_eq!(stake(&t, "sudo -u www rm -rf sub"), "`rm -rf sub`: not measured (it runs at `sudo -u www`)");
    assert_eq!(stake(&t, "ssh prod rm -rf /srv/data"), "", "a remote effect says nothing");
    assert!(stake(&t, "rm -rf ~/gone").starts_with("deletes nothing"), "~ is the user's home");
}

#[test]
fn the_time_limit_gives_a_lower_bound_never_a_zero() {
    let t = repo();
    for d in 0..30 {
        for f in 0..100 {
            t.write(&format!("big/d{d}/f{f}"), "x");
        }
    }
    t.user_rules("[settings]\nblast_radius_ms = 1\n");
    let line = stake(&t, "rm -rf big");
    assert!(
        line.contains("at least")
            || line.contains("not measured")
            || line == "deletes 3,000 files (3.0 KB) in 31 directories, none of them tracked by git",
        "{line}"
    );
    assert!(!line.contains(" 0 files"), "{line}");
    t.user_rules("[settings]\nblast_radius_ms = 0\n");
    assert_eq!(stake(&t, "rm -rf big"), "", "0 turns measuring off");
}

#[test]
fn the_refusal_and_the_audit_record_carry_the_stake() {
    let t = repo();
    t.write("f1.txt", "changed\n");
    let out = t.run(["-c", "git reset --hard"]);
    assert_eq!(code(&out), 77);
    let line = "loses 1 file with uncommitted changes (2 changed lines)";
    assert!(stderr(&out).contains(&format!("at stake: {line}")), "{}", stderr(&out));
    let records = t.audit();
    assert_eq!(records.last().unwrap()["stake"], line, "{records:?}");
    let json = t.run(["--json", "-c", "git reset --hard"]);
    let v: serde_json::Value = serde_json::from_str(stderr(&json).trim()).unwrap();
    assert_eq!(v["at_stake"], line);
    assert_eq!(std::fs::read_to_string(t.project.join("f1.txt")).unwrap(), "changed\n", "nothing ran");
}

#[test]
fn the_prompt_shows_the_stake_above_the_choices() {
    let t = repo();
    t.write("f2.txt", "changed\n");
    let mut a = Asking::start(&t, &["-c", "git checkout -- ."]);
    let screen = a.wait_prompt();
    let stake_at = screen.find("at stake loses 1 file with uncommitted changes (3 changed lines)").expect(&screen);
    assert!(stake_at < screen.find("[o] once").unwrap(), "{screen}");
    a.key("d");
    let done = a.finish();
    assert_eq!(done.code, 77);
    assert_eq!(std::fs::read_to_string(t.project.join("f2.txt")).unwrap(), "changed\n");
}

#[test]
fn measuring_never_runs_the_repositorys_filters() {
    // A clean filter names any program; comparing the work tree with HEAD would run it.
    let t = repo();
    let marker = t.home.join("filter-ran");
    git(&t.project, &["config", "filter.evil.clean", &format!("touch {}; cat", marker.display())]);
    git(&t.project, &["config", "filter.a.b.process", &format!("touch {}", marker.display())]);
    t.write(".gitattributes", "* filter=evil\n");
    t.write("f1.txt", "changed\n");
    let line = stake(&t, "git reset --hard");
    assert!(!marker.exists(), "measuring ran the repository's filter");
    assert!(line.starts_with("loses "), "{line}");
    let line = stake(&t, "rm -rf f1.txt");
    assert!(!marker.exists(), "measuring ran the repository's filter");
    assert!(line.contains("tracked by git"), "{line}");
}
