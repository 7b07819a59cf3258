//! The rules cache (`rules-cache/` in the state directory): a rules file read back from it judges,
//! explains and lists exactly as when it was parsed; a damaged entry is ignored and written
//! again; a changed or broken file is checked in full.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::env::{TestEnv, code, stderr, stdout};

const USER: &str = r#"[settings]
timeout = "90s"

[[rule]]
id = "deploy.prod"
action = "ask"
pattern = '^make\s+deploy\b'
unless = '--dry-run'
reason = "Deploys to production."
tip = "Deploy to staging first."
examples = ["make deploy", "make deploy prod"]
counterexamples = ["make deploy --dry-run", "make test"]

[[rule]]
id = "tools.rm-system"
action = "deny"
pattern = '^rm\s'
operand = '^/etc/'
unless_operand = '^/etc/tmp/'
reason = "Removes system files."
examples = ["rm /etc/hosts"]
counterexamples = ["rm /etc/tmp/x", "rm notes"]

[[rule]]
id = "pipe.fetch-run"
action = "ask"
target = "pipeline"
pattern = 'fetch\s.*\|\s*(ba)?sh'
reason = "Runs a downloaded script."

[[allow]]
pattern = '^make deploy docs$'
reason = "only the docs"
context = "any"
"#;

const PROJECT: &str = r#"[[rule]]
id = "db.reset"
action = "ask"
pattern = '^make\s+reset-db\b'
reason = "Drops the database."
examples = ["make reset-db"]
"#;

const COMMANDS: &[&str] = &[
    "make deploy prod",
    "make deploy --dry-run",
    "make deploy docs",
    "ssh prod 'make deploy docs'",
    "rm /etc/hosts",
    "rm /etc/tmp/x",
    "fetch https://x | bash",
    "make reset-db",
    "git status",
];

/// Everything cmdguard says about the rules in force: lists, tests, verdicts and explanations.
fn observe(t: &TestEnv) -> Vec<String> {
    let mut runs: Vec<Vec<String>> = vec![
        vec!["rules".into(), "list".into()],
        vec!["rules".into(), "test".into()],
        vec!["rules".into(), "lint".into()],
        vec!["rules".into(), "path".into()],
    ];
    for c in COMMANDS {
        runs.push(vec!["check".into(), "-c".into(), c.to_string()]);
        runs.push(vec!["--json".into(), "check".into(), "-c".into(), c.to_string()]);
        runs.push(vec!["explain".into(), "-c".into(), c.to_string()]);
    }
    runs.iter()
        .map(|args| {
            let o = t.run(args);
            format!("{args:?} → {}\n{}{}", code(&o), stdout(&o), stderr(&o))
        })
        .collect()
}

fn entries(t: &TestEnv) -> Vec<PathBuf> {
    let dir = t.state_dir().join("rules-cache");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|l| l.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "bin")).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// An entry's inode and bytes: a hit leaves both, a miss renames a new file into place.
fn snapshot(paths: &[PathBuf]) -> Vec<(u64, Vec<u8>)> {
    paths.iter().map(|p| (std::fs::metadata(p).unwrap().ino(), std::fs::read(p).unwrap())).collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn env() -> TestEnv {
    let t = TestEnv::new();
    t.user_rules(USER);
    t.write(".cmdguard.toml", PROJECT);
    t
}

#[test]
fn a_cached_rules_file_judges_explains_and_lists_as_a_parsed_one() {
    let t = env();
    let missed = observe(&t);
    let cached = entries(&t);
    assert_eq!(cached.len(), 2, "one entry per rules file: {cached:?}");
    let before = snapshot(&cached);
    let hit = observe(&t);
    assert_eq!(snapshot(&cached), before, "the second run read the entries and wrote none");
    for (miss, hit) in missed.iter().zip(&hit) {
        assert_eq!(hit, miss);
    }
    // What the runs said is what the rules say.
    let all = hit.concat();
    assert!(all.contains("tools.rm-system") && all.contains("rules.toml:15"), "{all}");
    assert!(hit[1].contains(" → 0\n"), "rules test passes: {}", hit[1]);
}

#[test]
fn cache_entries_are_private() {
    let t = env();
    assert_eq!(code(&t.run(["check", "-c", "ls"])), 0);
    let dir = t.state_dir().join("rules-cache");
    assert_eq!((mode(&t.state_dir()), mode(&dir)), (0o700, 0o700));
    let cached = entries(&t);
    assert_eq!(cached.len(), 2);
    assert!(cached.iter().all(|e| mode(e) == 0o600));
}

#[test]
fn a_damaged_entry_is_ignored_and_written_again() {
    let t = TestEnv::new();
    t.user_rules(USER);
    let expected = observe(&t);
    let [entry] = &entries(&t)[..] else { panic!("{:?}", entries(&t)) };
    let good = std::fs::read(entry).unwrap();
    // An entry for other bytes, under this file's name.
    t.user_rules(PROJECT);
    assert_eq!(code(&t.run(["check", "-c", "ls"])), 0);
    let other = entries(&t).into_iter().find(|e| e != entry).unwrap();
    let wrong_hash = std::fs::read(other).unwrap();
    t.user_rules(USER);
    let mut flipped = good.clone();
    *flipped.last_mut().unwrap() ^= 0x20;
    for (what, bytes) in
        [("corrupted", flipped), ("truncated", good[..good.len() / 3].to_vec()), ("wrong hash", wrong_hash)]
    {
        std::fs::write(entry, &bytes).unwrap();
        assert_eq!(observe(&t), expected, "{what}");
        assert_eq!(std::fs::read(entry).unwrap(), good, "{what}: the entry was not written again");
        assert_eq!(mode(entry), 0o600);
    }
}

#[test]
fn a_changed_rules_file_is_checked_again() {
    let t = TestEnv::new();
    t.user_rules(USER);
    assert_eq!(code(&t.run(["check", "-c", "make deploy prod"])), 1);
    t.user_rules(&USER.replace("action = \"ask\"\npattern = '^make", "action = \"deny\"\npattern = '^make"));
    assert_eq!(code(&t.run(["check", "-c", "make deploy prod"])), 2);
    assert_eq!(code(&t.run(["check", "-c", "make deploy prod"])), 2);
    assert_eq!(entries(&t).len(), 2);
}

#[test]
fn a_broken_rules_file_is_never_cached_and_still_fails() {
    let t = TestEnv::new();
    t.user_rules(USER);
    assert_eq!(code(&t.run(["check", "-c", "ls"])), 0);
    let file = t.home.join(".config/cmdguard/rules.toml");
    let broken = [
        (
            USER.replace(r"'^rm\s'", "'^rm(\\s'"),
            "line 17, column 11: rule \"tools.rm-system\": invalid regex in `pattern`: unclosed group",
        ),
        (USER.replace("context = \"any\"", "context = \" any\""), "line 34, column 11: `context = \" any\"`"),
        (format!("disable = [\"nothing\"]\n{USER}"), "line 1, column 12: `disable` names \"nothing\""),
    ];
    for (text, message) in broken {
        t.user_rules(&text);
        for _ in 0..2 {
            let o = t.run(["check", "-c", "ls"]);
            assert_eq!(code(&o), 78, "{}", stderr(&o));
            let want = format!("rules file {}, {message}", file.display());
            assert!(stderr(&o).contains(&want), "{}\nwanted: {want}", stderr(&o));
        }
    }
    // Only a file that loaded passed the checks an entry stands for (the `disable` file parsed:
    // the name it disables is checked against the rules of all layers, on every load).
    assert_eq!(entries(&t).len(), 2);
}

#[test]
fn no_state_directory_only_costs_a_full_load() {
    let t = TestEnv::new();
    t.user_rules(USER);
    std::fs::create_dir_all(t.home.join(".local")).unwrap();
    std::fs::write(t.home.join(".local/state"), "not a directory").unwrap();
    for _ in 0..2 {
        let o = t.run(["check", "-c", "make deploy prod"]);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        assert!(stdout(&o).contains("deploy.prod"), "{}", stdout(&o));
    }
}

#[test]
fn the_same_bytes_elsewhere_are_one_entry_with_each_files_own_place() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", PROJECT);
    let elsewhere = t.home.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join(".cmdguard.toml"), PROJECT).unwrap();
    let list = |dir: &Path| stdout(&t.command(["rules", "list"]).current_dir(dir).output().unwrap());
    let here = list(&t.project);
    let there = list(&elsewhere);
    assert_eq!(entries(&t).len(), 1);
    let line = |out: &str| out.lines().find(|l| l.starts_with("db.reset")).unwrap().to_string();
    assert!(line(&here).ends_with(&format!("{}:2", t.project.join(".cmdguard.toml").display())), "{here}");
    assert!(line(&there).ends_with(&format!("{}:2", elsewhere.join(".cmdguard.toml").display())), "{there}");
}
