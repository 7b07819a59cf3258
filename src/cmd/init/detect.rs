//! What a project deploys and publishes with, found in its files: Makefile targets, package.json
//! scripts, a publishable crate or Python package here; deploy tools known by their own files
//! (Dockerfiles, Terraform, fly.toml, …) in tools.rs. Each finding is a draft `ask` rule over
//! canonical segment text (docs/rules.md), with examples and counterexamples that
//! `cmdguard rules test` checks.
//!
//! Names read from the project (targets, scripts, crates) end up in patterns, TOML strings and
//! the terminal, and the project may be hostile: only names of plain characters are used.

use std::path::Path;
use std::sync::LazyLock;

use regex::bytes::Regex;
use serde_json::Value;

/// A draft rule for one kind of deploy or publish command.
pub struct Draft {
    pub id: String,
    pub pattern: String,
    pub unless: Option<&'static str>,
    pub reason: String,
    pub tip: Option<&'static str>,
    pub examples: Vec<String>,
    pub counterexamples: Vec<String>,
}

/// One thing found in the project, and the rule written for it.
pub struct Finding {
    /// What was found where, for the file's comments and the summary.
    pub found: String,
    pub rule: Draft,
}

/// Name parts that mark a target or script as one that ships something.
const SHIP_WORDS: &[&str] = &[
    "deploy",
    "deployment",
    "release",
    "publish",
    "upload",
    "prod",
    "production",
    "ship",
    "rollout",
    "push",
    "promote",
];
/// Most names one rule lists; more make the pattern unreadable, and the user can add them.
const MAX_NAMES: usize = 12;

/// Everything found in the project at `root`, in a fixed order.
pub fn detect(root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(make(root));
    out.extend(npm_scripts(root));
    out.extend(npm_publish(root));
    out.extend(cargo(root));
    out.extend(python(root));
    out.extend(super::tools::detect(root));
    out
}

/// Whether a name is one cmdguard may copy into a pattern, a TOML string and the terminal.
fn plain(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '@')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_.-:/@".contains(c))
}

fn ships(name: &str) -> bool {
    name.split(['-', '_', '.', ':', '/']).any(|part| SHIP_WORDS.contains(&part.to_ascii_lowercase().as_str()))
}

/// `(a|b\.c)`: plain names as regex alternatives. Of a plain name's characters only `.` means
/// something in a pattern (outside a class), so only it is escaped, keeping patterns readable.
fn alternatives(names: &[String]) -> String {
    format!("({})", names.iter().map(|n| n.replace('.', r"\.")).collect::<Vec<_>>().join("|"))
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The first of `preferred` that is among `names`, else the first of `names`, else `fallback`.
fn pick_other(names: &[String], preferred: &[&str], fallback: &str) -> String {
    preferred
        .iter()
        .find(|p| names.iter().any(|n| n == *p))
        .map(|p| p.to_string())
        .or_else(|| names.first().cloned())
        .unwrap_or_else(|| fallback.to_string())
}

/// Rule targets of a Makefile: (targets that ship, the other targets).
pub fn make_targets(text: &str) -> (Vec<String>, Vec<String>) {
    let (mut ship, mut other) = (Vec::new(), Vec::new());
    let mut in_define = false;
    for line in text.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        if in_define {
            in_define = word != "endef";
            continue;
        }
        if word == "define" {
            in_define = true;
            continue;
        }
        // Recipes, comments, directives and assignments name no targets.
        if line.starts_with(['\t', ' ', '#'])
            || matches!(word, "ifeq" | "ifneq" | "ifdef" | "ifndef" | "else" | "endif")
        {
            continue;
        }
        let Some(colon) = line.find(':') else { continue };
        let (before, after) = line.split_at(colon);
        if before.contains('=') || after.starts_with(":=") || after.starts_with("::=") {
            continue;
        }
        for name in before.split_whitespace().filter(|n| plain(n)) {
            let list = if ships(name) { &mut ship } else { &mut other };
            if !list.iter().any(|n| n == name) {
                list.push(name.to_string());
            }
        }
    }
    (ship, other)
}

fn make(root: &Path) -> Option<Finding> {
    // make reads the first of these that exists.
    let file = ["GNUmakefile", "makefile", "Makefile"].into_iter().find(|f| root.join(f).is_file())?;
    let (mut ship, other) = make_targets(&read(&root.join(file))?);
    ship.truncate(MAX_NAMES);
    let first = ship.first()?.clone();
    let quiet = pick_other(&other, &["test", "build", "check", "all", "lint"], "test");
    let mut examples: Vec<String> = ship.iter().map(|t| format!("make {t}")).collect();
    examples.push(format!("make -j4 {first}"));
    examples.push(format!("sudo make -C . {first}"));
    Some(Finding {
        found: format!("{file}: targets {}", ship.join(", ")),
        rule: Draft {
            id: "project.deploy-make".into(),
            pattern: format!(r"^(make|gmake)\s+(.*\s)?{}(\s|$)", alternatives(&ship)),
            unless: None,
            reason: format!("Runs a make target that deploys or publishes ({}).", ship.join(", ")),
            tip: Some("make -n TARGET prints the recipe without running it."),
            examples,
            counterexamples: vec![format!("make {quiet}"), format!("echo make {first}")],
        },
    })
}

fn package_json(root: &Path) -> Option<Value> {
    serde_json::from_str(&read(&root.join("package.json"))?).ok()
}

/// Script bodies that run a publish or deploy tool, whatever the script is called.
static SHIPPING_SCRIPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u)\b(npm|pnpm|yarn|bun)\s+(\S+\s+)*publish\b|\b(vercel|netlify|firebase|wrangler|flyctl|fly|serverless|sls|cdk)\b.*\b(deploy|publish|--prod)\b|\bdocker\s+push\b|\b(terraform|tofu)\s+apply\b|\btwine\s+upload\b|\bgh-pages\b|\baws\s+s3\s+sync\b",
    )
    .expect("a valid regex")
});

/// package.json scripts: (scripts that ship, by name or by what they run; the other scripts).
pub fn npm_script_names(package: &Value) -> (Vec<String>, Vec<String>) {
    let (mut ship, mut other) = (Vec::new(), Vec::new());
    for (name, body) in package.get("scripts").and_then(Value::as_object).into_iter().flatten() {
        if !plain(name) {
            continue;
        }
        let runs_shipping = body.as_str().is_some_and(|b| SHIPPING_SCRIPT.is_match(b.as_bytes()));
        if ships(name) || runs_shipping { ship.push(name.clone()) } else { other.push(name.clone()) }
    }
    (ship, other)
}

fn npm_scripts(root: &Path) -> Option<Finding> {
    let (mut ship, other) = npm_script_names(&package_json(root)?);
    ship.truncate(MAX_NAMES);
    let first = ship.first()?.clone();
    let quiet = pick_other(&other, &["test", "build", "lint", "dev", "start"], "build");
    let mut examples: Vec<String> = ship.iter().map(|s| format!("npm run {s}")).collect();
    examples.extend([format!("yarn {first}"), format!("pnpm run {first}"), format!("npm --prefix . run {first}")]);
    Some(Finding {
        found: format!("package.json: scripts {}", ship.join(", ")),
        rule: Draft {
            id: "project.deploy-npm".into(),
            // `npm` needs `run` for a script; yarn, pnpm and bun run a script by its name too.
            pattern: format!(
                r"^(npm\s+(.*\s)?(run|run-script)|(pnpm|yarn|bun)(\s+(.*\s)?run)?)\s+{}(\s|$)",
                alternatives(&ship)
            ),
            unless: None,
            reason: format!("Runs a package.json script that deploys or publishes ({}).", ship.join(", ")),
            tip: Some("npm run shows each script's command; run its steps one by one."),
            examples,
            counterexamples: vec![format!("npm run {quiet}"), "npm test".into(), format!("echo npm run {first}")],
        },
    })
}

fn npm_publish(root: &Path) -> Option<Finding> {
    let package = package_json(root)?;
    if package.get("private").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let name = package.get("name").and_then(Value::as_str).filter(|n| plain(n))?;
    Some(Finding {
        found: format!("package.json: package {name} is not private"),
        rule: Draft {
            id: "project.publish-npm".into(),
            pattern: r"^(npm|pnpm|yarn|bun)\s+(.*\s)?publish(\s|$)".into(),
            unless: Some(r"\s(--dry-run(=true)?|help|view|info|install|add)(\s|$)"),
            reason: format!("Publishes {name} to the npm registry; a published version can never be reused."),
            tip: Some("npm publish --dry-run shows exactly what would be uploaded."),
            examples: vec![
                "npm publish".into(),
                "npm publish --access public".into(),
                "pnpm publish".into(),
                "yarn npm publish".into(),
            ],
            counterexamples: vec!["npm publish --dry-run".into(), "npm pack".into(), "npm install".into()],
        },
    })
}

fn cargo(root: &Path) -> Option<Finding> {
    let manifest: toml::Table = toml::from_str(&read(&root.join("Cargo.toml"))?).ok()?;
    let package = manifest.get("package")?.as_table()?;
    // `publish = false` (or an empty registry list) keeps a crate off every registry.
    match package.get("publish") {
        Some(toml::Value::Boolean(false)) => return None,
        Some(toml::Value::Array(registries)) if registries.is_empty() => return None,
        _ => {}
    }
    let name = package.get("name").and_then(toml::Value::as_str).filter(|n| plain(n))?;
    Some(Finding {
        found: format!("Cargo.toml: crate {name} can be published"),
        rule: Draft {
            id: "project.publish-cargo".into(),
            pattern: r"^cargo\s+(\+\S+\s+)?(-\S+\s+)*publish(\s|$)".into(),
            unless: Some(r"\s(--dry-run|-n)(\s|$)"),
            reason: format!("Publishes {name} to crates.io; a published version can never be deleted or replaced."),
            tip: Some("cargo publish --dry-run builds and checks the package without uploading it."),
            examples: vec![
                "cargo publish".into(),
                format!("cargo publish -p {name}"),
                "cargo +stable publish --locked".into(),
            ],
            counterexamples: vec!["cargo publish --dry-run".into(), "cargo package".into(), "cargo test".into()],
        },
    })
}

fn python(root: &Path) -> Option<Finding> {
    let pyproject = read(&root.join("pyproject.toml"));
    let setup = ["setup.py", "setup.cfg"].into_iter().find(|f| root.join(f).is_file());
    let found = if pyproject.is_some() { "pyproject.toml" } else { setup? };
    let table: toml::Table = pyproject.as_deref().and_then(|t| toml::from_str(t).ok()).unwrap_or_default();
    let text = pyproject.unwrap_or_default();
    if text.contains("Private :: Do Not Upload") {
        return None;
    }
    let backend = table.get("build-system").and_then(|b| b.get("build-backend")).and_then(toml::Value::as_str);
    let tool = |name: &str| table.get("tool").and_then(|t| t.get(name)).is_some();
    let mut tools = Vec::new();
    let mut examples = vec!["twine upload dist/*".to_string(), "python3 -m twine upload dist/*".to_string()];
    for (name, used) in [
        ("poetry", tool("poetry") || root.join("poetry.lock").is_file()),
        ("uv", root.join("uv.lock").is_file()),
        ("flit", tool("flit") || backend.is_some_and(|b| b.starts_with("flit"))),
        ("hatch", tool("hatch") || backend == Some("hatchling.build")),
        ("pdm", tool("pdm") || root.join("pdm.lock").is_file()),
    ] {
        if used {
            tools.push(name);
            examples.push(format!("{name} publish"));
        }
    }
    let with = if tools.is_empty() { String::new() } else { format!(" ({})", tools.join(", ")) };
    Some(Finding {
        found: format!("{found}: a Python package{with}"),
        rule: Draft {
            id: "project.publish-python".into(),
            pattern: r"^((uv|poetry|pipenv|pdm|hatch)\s+run\s+(-\S+\s+)*)?(twine\s+(.*\s)?upload|python[0-9.]*\s+-m\s+twine\s+(.*\s)?upload|(poetry|flit|hatch|pdm|uv|maturin)\s+(.*\s)?publish)(\s|$)".into(),
            unless: Some(r"\s--dry-run(\s|$)"),
            reason: "Uploads this package to PyPI (or another index); an uploaded file can never be replaced.".into(),
            tip: Some("twine check dist/* validates the files; try TestPyPI with --repository testpypi first."),
            examples,
            counterexamples: vec!["twine check dist/*".into(), "python -m build".into(), "pip install -e .".into()],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makefile_targets_that_ship_are_told_apart() {
        let text = "\
X := a:b
Y = c:d
.PHONY: deploy test
all: build
build test: src
deploy-prod deploy_staging: build
\t@echo release: not a target
release:: all
%.o: %.c
$(OUT): x
define RECIPE
upload: inside a define
endef
ifeq ($(X),y)
publish: ; twine upload
endif
";
        let (ship, other) = make_targets(text);
        assert_eq!(ship, ["deploy-prod", "deploy_staging", "release", "publish"]);
        assert_eq!(other, ["all", "build", "test"]);
    }

    #[test]
    fn names_with_odd_characters_are_left_out() {
        assert!(plain("deploy:prod") && plain("release-1.2") && plain("@scope/pkg"));
        for bad in ["deploy'x", "de ploy", "a\"b", "-rf", "x\u{202e}", "x\\y", "", &"a".repeat(65)] {
            assert!(!plain(bad), "{bad:?}");
        }
        let package = serde_json::json!({"scripts": {
            "deploy": "x", "ship it": "x", "gh": "gh-pages -d dist", "docs": "vitepress build",
            "rel'ease": "x", "up": "npm run build && npm publish --access public"
        }});
        let (ship, other) = npm_script_names(&package);
        assert_eq!(ship, ["deploy", "gh", "up"]);
        assert_eq!(other, ["docs"]);
    }

    #[test]
    fn ship_words_are_whole_name_parts() {
        assert!(ships("deploy") && ships("deploy:prod") && ships("gh-release") && ships("Publish"));
        assert!(!ships("product") && !ships("predeployment"));
        assert!(!ships("test") && !ships("pushd") && !ships("releases"));
    }
}
