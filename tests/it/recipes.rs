//! The recipes in docs/integrations.md marked `<!-- recipe: NAME -->` run here, as written,
//! against the built binary. A recipe whose interpreter is missing is skipped with a note.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::env::{TestEnv, code, stderr, stdout};

/// The code block that follows `<!-- recipe: NAME -->` in docs/integrations.md.
fn recipe(name: &str) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/integrations.md")).unwrap();
    let marker = format!("<!-- recipe: {name} -->\n");
    let start = doc.find(&marker).unwrap_or_else(|| panic!("no recipe {name} in docs/integrations.md"));
    let block = &doc[start + marker.len()..];
    let body = &block[block.find('\n').expect("a code fence") + 1..];
    body[..body.find("\n```").expect("a closing fence") + 1].to_string()
}

fn has(interpreter: &str) -> bool {
    let found = Command::new(interpreter).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status();
    if found.is_err() {
        eprintln!("note: {interpreter} is not installed; its recipe in docs/integrations.md was not run");
    }
    found.is_ok()
}

/// The directory holding the built cmdguard, for recipes that find it on PATH.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_cmdguard")).parent().unwrap().to_path_buf()
}

/// Runs `program args…` in the test's project with its private HOME and cmdguard on PATH.
fn run(t: &TestEnv, program: &str, args: &[&str]) -> Output {
    let path = format!("{}:{}", bin_dir().display(), std::env::var("PATH").unwrap_or_default());
    t.program(program, args).env("PATH", path).output().unwrap()
}

#[test]
fn python_prefix_recipe_runs_and_refuses() {
    if !has("python3") {
        return;
    }
    let t = TestEnv::new();
    t.write("harness/recipe.py", &recipe("python-prefix"));
    let driver = format!(
        r#"import sys
sys.path.insert(0, "harness")
import recipe
recipe.CMDGUARD = {bin:?}
key = recipe.new_session_key()
assert key.startswith("cg-") and len(key) == 35, key
r = recipe.run_agent_command("echo hello", key, ".")
assert (r.returncode, r.stdout) == (0, "hello\n"), r
r = recipe.run_agent_command("touch ran; git reset --hard", key, ".")
assert r.returncode == 77 and "NOT RUN" in r.stderr, r
print("ok")
"#,
        bin = env!("CARGO_BIN_EXE_cmdguard"),
    );
    t.write("driver.py", &driver);
    let o = run(&t, "python3", &["driver.py"]);
    assert_eq!(stdout(&o), "ok\n", "{}", stderr(&o));
    assert!(!t.exists("ran"));
}

#[test]
fn node_prefix_recipe_runs_and_refuses() {
    if !has("node") {
        return;
    }
    let t = TestEnv::new();
    t.write("harness/recipe.js", &recipe("node-prefix"));
    let driver = format!(
        r#"const assert = require("node:assert");
const recipe = require("./harness/recipe.js");
recipe.cmdguard.path = {bin:?};
const key = recipe.newSessionKey();
assert.match(key, /^cg-[0-9a-f]{{32}}$/);
let r = recipe.runAgentCommand("echo hello", key, ".");
assert.deepStrictEqual([r.status, r.stdout], [0, "hello\n"]);
r = recipe.runAgentCommand("touch ran; git reset --hard", key, ".");
assert.strictEqual(r.status, 77);
assert.ok(r.stderr.includes("NOT RUN"), r.stderr);
console.log("ok");
"#,
        bin = env!("CARGO_BIN_EXE_cmdguard"),
    );
    t.write("driver.js", &driver);
    let o = run(&t, "node", &["driver.js"]);
    assert_eq!(stdout(&o), "ok\n", "{}", stderr(&o));
    assert!(!t.exists("ran"));
}

#[test]
fn node_shim_recipe_runs_and_refuses() {
    if !has("node") {
        return;
    }
    // Both recipes as written, on a fresh HOME (no ~/.local/bin yet): the link, then the harness.
    let t = TestEnv::new();
    let o = run(&t, "sh", &["-c", &recipe("shim-link")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let link = t.home.join(".local/bin/cmdguard-sh");
    assert!(link.exists(), "the link recipe made no link");
    t.write("harness/shim.js", &recipe("node-shim"));
    let driver = format!(
        r#"const assert = require("node:assert");
const recipe = require("./harness/shim.js");
assert.strictEqual(recipe.shim.path, {link:?});
recipe.runWithShim("echo \"$1\" via shim; exit 3", ".", (status, stdout) => {{
  assert.deepStrictEqual([status, stdout], [3, " via shim\n"]);
  recipe.runWithShim("touch ran; git reset --hard", ".", (status, stdout, stderr) => {{
    assert.strictEqual(status, 77);
    assert.ok(stderr.includes("git.reset-hard"), stderr);
    console.log("ok");
  }});
}});
"#,
        link = link.display().to_string(),
    );
    t.write("driver.js", &driver);
    let o = run(&t, "node", &["driver.js"]);
    assert_eq!(stdout(&o), "ok\n", "{}", stderr(&o));
    assert!(!t.exists("ran"));
}

#[test]
fn ci_script_scan_recipe_flags_only_the_dangerous_script() {
    let t = TestEnv::new();
    t.write("ci/scan-scripts.sh", &recipe("ci-scripts"));
    t.write("scripts/build.sh", "#!/bin/sh\nset -e\nif [ -d target ]; then\n  cargo build --locked\nfi\n");
    assert_eq!(code(&run(&t, "bash", &["ci/scan-scripts.sh"])), 0);
    t.write("scripts/reset.sh", "#!/bin/sh\ngit fetch origin\ngit reset --hard origin/main\n");
    let o = run(&t, "bash", &["ci/scan-scripts.sh"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stdout(&o).starts_with("./scripts/reset.sh:\nask: "), "{}", stdout(&o));
    assert!(stdout(&o).contains("git.reset-hard") && !stdout(&o).contains("build.sh"), "{}", stdout(&o));
}

#[test]
fn ci_batch_recipe_fails_on_a_stopped_command() {
    let t = TestEnv::new();
    t.write("scan.sh", &recipe("ci-batch"));
    t.write("commands.txt", "cargo test --locked\nls -la\n");
    assert_eq!(code(&run(&t, "bash", &["scan.sh"])), 0);
    t.write("commands.txt", "cargo test --locked\nrm -rf ~\nls -la\n");
    let o = run(&t, "bash", &["scan.sh"]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).contains(r#""verdict":"deny""#) && !stdout(&o).contains("cargo test"), "{}", stdout(&o));
}
