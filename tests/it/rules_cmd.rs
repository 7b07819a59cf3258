//! `rules list | lint | test | path`.

use crate::env::{TestEnv, code, stdout};

const GOOD: &str = r#"
[[rule]]
id = "deploy.prod"
action = "ask"
pattern = '^make\s+deploy\b'
reason = "Deploys to production."
examples = ["make deploy"]
counterexamples = ["make test"]
"#;

#[test]
fn list_shows_builtin_and_project_rules_with_origin() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", GOOD);
    let out = stdout(&t.run(["rules", "list"]));
    assert!(out.lines().any(|l| l.starts_with("git.reset-hard") && l.contains("rules/git.toml:")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("deploy.prod") && l.contains(".cmdguard.toml:3")), "{out}");
}

#[test]
fn path_lists_layers_in_order() {
    let t = TestEnv::new();
    t.write(".cmdguard.toml", GOOD);
    t.user_rules("");
    let out = stdout(&t.run(["rules", "path"]));
    let layers: Vec<&str> = out.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(layers, ["built-in", "system", "user", "project", "state"]);
    assert!(out.contains("user       loaded"), "{out}");
}

#[test]
fn lint_reports_errors_with_exit_78() {
    let t = TestEnv::new();
    let bad = t.write(
        "bad.toml",
        "[[rule]]\nid = \"x\"\naction = \"ask\"\npattern = 'a'\nreason = \"r\"\ntarget = \"words\"\n",
    );
    let o = t.run(["rules".as_ref(), "lint".as_ref(), bad.as_os_str()]);
    assert_eq!(code(&o), 78);
    let good = t.write("good.toml", GOOD);
    let o = t.run(["rules".as_ref(), "lint".as_ref(), good.as_os_str()]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("1 rules checked, no errors"));
    assert_eq!(code(&t.run(["rules", "lint", "missing.toml"])), 78);
}

#[test]
fn test_checks_examples_and_counterexamples() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["rules", "test"])), 0);
    let wrong = GOOD.replace("[\"make test\"]", "[\"make deploy --now\"]");
    let f = t.write("wrong.toml", &wrong);
    let o = t.run(["rules".as_ref(), "test".as_ref(), f.as_os_str()]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains("counterexample caught: make deploy --now"), "{}", stdout(&o));
    // The project's own file is tested where it is loaded, not loaded twice.
    t.write(".cmdguard.toml", GOOD);
    assert_eq!(code(&t.run(["rules", "test", ".cmdguard.toml"])), 0);
}
