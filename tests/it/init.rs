//! `cmdguard init`: sample projects get a `.cmdguard.toml` at their root whose rules ask before
//! the deploy and publish commands found there, pass `cmdguard rules test`, and are trusted as
//! written. init never overwrites a rules file.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::env::{TestEnv, code, stderr, stdout};

/// Runs `cmdguard ARGS` in `dir`.
fn run_in(t: &TestEnv, dir: &Path, args: &[&str]) -> Output {
    t.command(args).current_dir(dir).output().unwrap()
}

/// Runs `init` in the project directory, checks it succeeded, and returns (stdout, file text).
fn init(t: &TestEnv) -> (String, String) {
    let o = t.run(["init"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let text = std::fs::read_to_string(t.project.join(".cmdguard.toml")).expect("init wrote .cmdguard.toml");
    (stdout(&o), text)
}

/// `cmdguard rules test FILE` must pass on what init wrote, and have checked `rules` rules.
fn rules_test_passes(t: &TestEnv, file: &Path, rules: usize) {
    let o = t.run(["rules", "test", file.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).starts_with(&format!("{rules} rules, ")), "{}", stdout(&o));
    assert!(stdout(&o).contains(" 0 failed"), "{}", stdout(&o));
}

/// `check --json`: (exit code, rule ids that matched).
fn check(t: &TestEnv, command: &str) -> (i32, Vec<String>) {
    let o = t.run(["check", "--json", "-c", command]);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    let rules = v["rules"].as_array().unwrap().iter().map(|r| r.as_str().unwrap().to_string()).collect();
    (code(&o), rules)
}

fn asks_by(t: &TestEnv, command: &str, rule: &str) {
    let (c, rules) = check(t, command);
    assert!(c == 1 && rules.iter().any(|r| r == rule), "{command}: exit {c}, rules {rules:?}, expected {rule}");
}

fn passes(t: &TestEnv, command: &str) {
    let (c, rules) = check(t, command);
    assert!(c == 0, "{command}: exit {c}, rules {rules:?}");
}

const MAKEFILE: &str = "\
.PHONY: all test deploy release
all: test
test:
\tcargo test
deploy: all
\t./scripts/deploy.sh production
release:
\t./scripts/release.sh
";

#[test]
fn makefile_deploy_targets_ask_and_the_file_lands_at_the_git_root() {
    let t = TestEnv::new();
    std::fs::create_dir_all(t.project.join(".git")).unwrap();
    t.write("Makefile", MAKEFILE);
    let deep = t.project.join("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let o = run_in(&t, &deep, &["init"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let file = t.project.join(".cmdguard.toml");
    assert!(file.is_file() && !deep.join(".cmdguard.toml").exists(), "not written at the git root");
    let out = stdout(&o);
    assert!(out.contains(&format!("wrote {}", file.display())), "{out}");
    assert!(out.contains("Makefile: targets deploy, release") && out.contains("project.deploy-make"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("id = \"project.deploy-make\""), "{text}");
    assert!(text.contains("cmdguard trust") && text.contains("docs/rules.md"), "the header explains trust:\n{text}");
    assert!(
        text.contains("# [[allow]]") && !text.contains("\n[[allow]]"),
        "the allow example stays commented:\n{text}"
    );
    rules_test_passes(&t, &file, 1);

    asks_by(&t, "make deploy", "project.deploy-make");
    asks_by(&t, "sudo make -j4 release", "project.deploy-make");
    passes(&t, "make test");
    passes(&t, "make");
    // From the subdirectory the same rules apply.
    assert_eq!(code(&run_in(&t, &deep, &["check", "-c", "make deploy"])), 1);
    // The headless wrapper refuses it.
    assert_eq!(code(&t.run(["-c", "make deploy"])), 77);
}

#[test]
fn init_never_overwrites_a_rules_file() {
    let t = TestEnv::new();
    t.write("Makefile", MAKEFILE);
    let mine = "# my own rules\n[[rule]]\nid = \"mine.x\"\naction = \"ask\"\npattern = '^x '\nreason = \"mine\"\n";
    let file = t.write(".cmdguard.toml", mine);
    let o = t.run(["init"]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains(&format!("{} already exists", file.display())), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);
    // Not even a broken one, which is the user's to fix.
    std::fs::write(&file, "[[rule\n").unwrap();
    let o = t.run(["init"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "[[rule\n");
    std::fs::write(&file, mine).unwrap();

    // Nor a file further up, above a nested repository: it is in force there, so init says where.
    let nested = t.project.join("vendor/lib");
    std::fs::create_dir_all(nested.join(".git")).unwrap();
    let o = run_in(&t, &nested, &["init"]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains(&file.display().to_string()), "{}", stderr(&o));
    assert!(!nested.join(".cmdguard.toml").exists());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), mine);
}

#[test]
fn package_json_scripts_and_npm_publish_ask() {
    let t = TestEnv::new();
    t.write(
        "package.json",
        r#"{"name": "web-app", "version": "1.0.0", "scripts": {
            "test": "vitest", "build": "vite build",
            "publish": "npm publish --access public",
            "deploy:prod": "npm run build && vercel --prod", "ship": "./ship.sh"
        }}"#,
    );
    let (out, text) = init(&t);
    assert!(out.contains("package.json: scripts deploy:prod, publish, ship"), "{out}");
    assert!(out.contains("package.json: package web-app is not private"), "{out}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 2);
    assert!(text.contains("project.publish-npm"), "{text}");
    asks_by(&t, "npm run deploy:prod", "project.deploy-npm");
    asks_by(&t, "yarn ship", "project.deploy-npm");
    asks_by(&t, "npm run publish", "project.deploy-npm");
    asks_by(&t, "npm publish", "project.publish-npm");
    passes(&t, "npm test");
    passes(&t, "npm run build");
    passes(&t, "npm publish --dry-run");

    // A private package is never published: no publish rule for it.
    let t = TestEnv::new();
    t.write("package.json", r#"{"name": "app", "private": true, "scripts": {"deploy": "fly deploy"}}"#);
    let (_, text) = init(&t);
    assert!(text.contains("project.deploy-npm") && !text.contains("project.publish-npm"), "{text}");
}

#[test]
fn a_publishable_crate_asks_before_cargo_publish() {
    let t = TestEnv::new();
    t.write("Cargo.toml", "[package]\nname = \"demo-lib\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    let (out, _) = init(&t);
    assert!(out.contains("Cargo.toml: crate demo-lib can be published"), "{out}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 1);
    asks_by(&t, "cargo publish", "project.publish-cargo");
    asks_by(&t, "cargo publish -p demo-lib", "project.publish-cargo");
    passes(&t, "cargo publish --dry-run");
    passes(&t, "cargo test");

    let t = TestEnv::new();
    t.write("Cargo.toml", "[package]\nname = \"internal\"\nversion = \"0.1.0\"\npublish = false\n");
    let (out, text) = init(&t);
    assert!(!text.contains("project.publish-cargo"), "{text}");
    assert!(out.contains("found no deploy or publish commands"), "{out}");
}

#[test]
fn a_python_project_asks_before_uploads() {
    let t = TestEnv::new();
    t.write(
        "pyproject.toml",
        "[project]\nname = \"tool\"\nversion = \"1\"\n\n[tool.poetry]\nname = \"tool\"\n\n[build-system]\nbuild-backend = \"poetry.core.masonry.api\"\n",
    );
    let (out, text) = init(&t);
    assert!(out.contains("pyproject.toml: a Python package (poetry)"), "{out}");
    assert!(text.contains("\"poetry publish\""), "{text}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 1);
    asks_by(&t, "poetry publish --build", "project.publish-python");
    asks_by(&t, "python3 -m twine upload dist/*", "project.publish-python");
    passes(&t, "poetry install");
    passes(&t, "twine check dist/*");
}

#[test]
fn deploy_tool_files_each_get_a_rule() {
    let t = TestEnv::new();
    t.write("Dockerfile", "FROM scratch\n");
    t.write("infra/prod/main.tf", "terraform {}\n");
    t.write("fly.toml", "app = \"x\"\n");
    t.write("web/vercel.json", "{}\n");
    t.write("netlify.toml", "");
    t.write("serverless.yml", "service: x\n");
    t.write("deploy/charts/api/Chart.yaml", "name: api\n");
    // Dependencies are not the project's: nothing is read from them.
    t.write("node_modules/pkg/Dockerfile", "FROM x\n");
    let (out, _) = init(&t);
    for want in
        ["Dockerfile", "Terraform in infra/prod/", "fly.toml", "web/vercel.json", "deploy/charts/api/Chart.yaml"]
    {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
    assert!(!out.contains("node_modules"), "{out}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 7);
    asks_by(&t, "docker push registry.example.com/app:2", "project.publish-image");
    asks_by(&t, "terraform -chdir=infra/prod apply", "project.deploy-terraform");
    asks_by(&t, "fly deploy", "project.deploy-fly");
    asks_by(&t, "npx vercel --prod", "project.deploy-vercel");
    asks_by(&t, "netlify deploy --prod", "project.deploy-netlify");
    asks_by(&t, "sls deploy --stage prod", "project.deploy-serverless");
    asks_by(&t, "helm upgrade --install api deploy/charts/api", "project.deploy-helm");
    passes(&t, "terraform plan");
    passes(&t, "vercel dev");
    passes(&t, "docker build -t app .");
}

#[test]
fn an_empty_project_gets_a_commented_template() {
    let t = TestEnv::new();
    let (out, text) = init(&t);
    assert!(out.contains("found no deploy or publish commands"), "{out}");
    assert!(text.contains("# [[rule]]") && !text.contains("\n[[rule]]"), "{text}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 0);
    passes(&t, "make deploy");
}

/// The trust check of `cmdguard doctor` in `dir`.
fn trust_report(t: &TestEnv, dir: &Path) -> String {
    let o = run_in(t, dir, &["doctor", "--json"]);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let trust = checks.iter().find(|c| c["name"] == "trust").unwrap();
    format!("{}: {}", trust["status"].as_str().unwrap(), trust["message"].as_str().unwrap())
}

#[test]
fn init_trusts_exactly_what_it_wrote() {
    let t = TestEnv::new();
    t.write("Makefile", MAKEFILE);
    let (_, text) = init(&t);
    let file = t.project.join(".cmdguard.toml");
    assert_eq!(trust_report(&t, &t.project), format!("ok: {} is trusted as it is", file.display()));

    // The same bytes written by hand elsewhere are not trusted: the record is init's.
    let copy: PathBuf = t.project.join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::write(copy.join(".cmdguard.toml"), &text).unwrap();
    let report = trust_report(&t, &copy);
    assert!(report.contains("is not trusted, but it loosens nothing"), "{report}");

    // An allow entry added by hand suspends itself until the user trusts the edit.
    std::fs::write(&file, text.clone() + "\n[[allow]]\ncommand = \"make deploy\"\n").unwrap();
    assert_eq!(check(&t, "make deploy").0, 1);
    let report = trust_report(&t, &t.project);
    assert!(report.starts_with("warn: ") && report.contains("changed since you trusted it"), "{report}");
}

#[test]
fn an_allow_entry_added_at_the_prompt_keeps_the_file_trusted_and_works() {
    let t = crate::approval::env_with_rules();
    t.write("Makefile", MAKEFILE);
    init(&t);
    let mut a = crate::approval::Asking::start(&t, &["-c", "touch ran"]);
    a.wait_prompt();
    let f = a.answer_always();
    assert_eq!(f.code, 0, "{}", f.stderr);
    assert!(!f.screen.contains("takes effect only after"), "{}", f.screen);
    // The entry applies at once, and the init-written rules still ask.
    assert_eq!(code(&t.run(["-c", "touch ran"])), 0);
    assert_eq!(check(&t, "make deploy").0, 1);
    let file = t.project.join(".cmdguard.toml");
    assert_eq!(trust_report(&t, &t.project), format!("ok: {} is trusted as it is", file.display()));
    rules_test_passes(&t, &file, 1);
}

#[test]
fn print_shows_the_file_and_writes_nothing() {
    let t = TestEnv::new();
    t.write("Makefile", MAKEFILE);
    let o = t.run(["init", "--dry-run"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!t.exists(".cmdguard.toml"));
    assert!(stderr(&o).contains("Makefile: targets deploy, release"), "{}", stderr(&o));
    // What it printed is the file init would write: a rules file that passes its own tests.
    let printed = t.write("printed.toml", &stdout(&o));
    rules_test_passes(&t, &printed, 1);
}

#[test]
fn names_from_the_project_cannot_write_toml_into_the_trusted_file() {
    let t = TestEnv::new();
    // A directory name that ends the comment and adds an allow-everything entry.
    t.write("evil\n[[allow]]\npattern = '.*'\n#/Dockerfile", "FROM scratch\n");
    t.write("Makefile", "deploy\"x: a\ndeploy-ok: b\n");
    let (out, text) = init(&t);
    assert!(out.contains("evil\\n[[allow]]"), "shown escaped: {out}");
    assert!(!text.contains("\n[[allow]]"), "{text}");
    assert!(text.contains("targets deploy-ok\n") && !text.contains("deploy\"x"), "{text}");
    rules_test_passes(&t, &t.project.join(".cmdguard.toml"), 2);
    // Nothing was loosened: a built-in ask still asks.
    assert_eq!(check(&t, "git reset --hard").0, 1);

    // Escape sequences in a name reach neither the terminal nor the file.
    let t = TestEnv::new();
    t.write("a\u{1b}[2Jb/main.tf", "");
    let (out, text) = init(&t);
    assert!(!out.contains('\u{1b}') && !text.contains('\u{1b}'), "{out}\n{text}");
    assert!(out.contains("a\\x1b[2Jb/"), "{out}");
}
