//! What a project deploys and publishes with, found in its files: Makefile targets, package.json
//! scripts, a publishable crate or Python package, Dockerfiles, Terraform, and the deploy tools'
//! own files (fly.toml, vercel.json, netlify.toml, serverless.yml, Chart.yaml). Each finding is a
//! draft `ask` rule over canonical segment text (docs/rules.md), with examples and
//! counterexamples that `cmdguard rules test` checks.
//!
//! Names read from the project (targets, scripts, crates) end up in patterns, TOML strings and
//! the terminal, and the project may be hostile: only names of plain characters are used.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
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
/// How deep the scan for Dockerfiles, Terraform and deploy tool files goes, and how much it reads.
const MAX_DEPTH: usize = 3;
const MAX_ENTRIES: usize = 5000;
/// Directories that hold dependencies or build output, never the project's own deploy files.
const SKIP_DIRS: &[&str] = &["node_modules", "target", "vendor", "venv", "__pycache__", "dist", "build"];

/// Everything found in the project at `root`, in a fixed order.
pub fn detect(root: &Path) -> Vec<Finding> {
    let tree = Tree::scan(root);
    let mut out = Vec::new();
    out.extend(make(root));
    out.extend(npm_scripts(root));
    out.extend(npm_publish(root));
    out.extend(cargo(root));
    out.extend(python(root));
    out.extend(docker(&tree));
    out.extend(terraform(&tree));
    out.extend(tool_files(&tree, root));
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
        r"\b(npm|pnpm|yarn|bun)\s+(\S+\s+)*publish\b|\b(vercel|netlify|firebase|wrangler|flyctl|fly|serverless|sls|cdk)\b.*\b(deploy|publish|--prod)\b|\bdocker\s+push\b|\b(terraform|tofu)\s+apply\b|\btwine\s+upload\b|\bgh-pages\b|\baws\s+s3\s+sync\b",
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
        let runs_shipping = body.as_str().is_some_and(|b| SHIPPING_SCRIPT.is_match(b));
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

/// The project's files, a few levels deep, skipping hidden directories and dependencies.
struct Tree {
    files: Vec<PathBuf>,
}

impl Tree {
    fn scan(root: &Path) -> Tree {
        let mut files = Vec::new();
        let mut dirs = vec![(PathBuf::new(), 0)];
        let mut seen = 0;
        while let Some((rel, depth)) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(root.join(&rel)) else { continue };
            for entry in entries.flatten() {
                seen += 1;
                if seen > MAX_ENTRIES {
                    return Tree { files };
                }
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                // file_type does not follow symbolic links: a linked directory is not entered.
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_dir() {
                    if depth < MAX_DEPTH && !name.starts_with('.') && !SKIP_DIRS.contains(&name) {
                        dirs.push((rel.join(name), depth + 1));
                    }
                } else if kind.is_file() {
                    files.push(rel.join(name));
                }
            }
        }
        files.sort();
        Tree { files }
    }

    /// Files whose name satisfies `pred`, as relative paths.
    fn named(&self, pred: impl Fn(&str) -> bool) -> Vec<&Path> {
        self.files
            .iter()
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&pred))
            .map(PathBuf::as_path)
            .collect()
    }
}

/// "a, b, c and 4 more" for relative paths.
fn listed(paths: &[&Path]) -> String {
    let mut shown: Vec<String> = paths.iter().take(3).map(|p| p.display().to_string()).collect();
    if paths.len() > 3 {
        shown.push(format!("{} more", paths.len() - 3));
    }
    shown.join(", ")
}

fn docker(tree: &Tree) -> Option<Finding> {
    let files = tree.named(|n| {
        matches!(n, "Dockerfile" | "Containerfile") || n.starts_with("Dockerfile.") || n.ends_with(".Dockerfile")
    });
    if files.is_empty() {
        return None;
    }
    Some(Finding {
        found: listed(&files),
        rule: Draft {
            id: "project.publish-image".into(),
            pattern: r"^(docker|podman)(\s+-\S+(\s+[^-\s]\S*)?)*\s+((image\s+)?push|(buildx\s+)?build\s+(.*\s)?--push|compose\s+(.*\s)?push)(\s|$)".into(),
            unless: None,
            reason: "Pushes an image of this project to a registry, where whoever deploys or pulls that tag gets it.".into(),
            tip: Some("docker image inspect IMAGE shows what you would push."),
            examples: vec![
                "docker push registry.example.com/app:1.0".into(),
                "docker image push app".into(),
                "docker buildx build --push -t app .".into(),
                "podman push app".into(),
            ],
            counterexamples: vec!["docker build -t app .".into(), "docker pull app".into(), "docker run --rm app".into()],
        },
    })
}

fn terraform(tree: &Tree) -> Option<Finding> {
    let mut dirs: Vec<&Path> = tree.named(|n| n.ends_with(".tf")).into_iter().filter_map(Path::parent).collect();
    dirs.dedup();
    if dirs.is_empty() {
        return None;
    }
    let shown: Vec<String> = dirs
        .iter()
        .take(3)
        .map(|d| if d.as_os_str().is_empty() { ".".into() } else { format!("{}/", d.display()) })
        .collect();
    Some(Finding {
        found: format!("Terraform in {}", shown.join(", ")),
        rule: Draft {
            id: "project.deploy-terraform".into(),
            pattern: r"^((terraform|tofu)\s+(-\S+\s+)*|terragrunt\s+(.*\s)?)(apply|destroy)(\s|$)".into(),
            unless: None,
            reason: "Changes this project's infrastructure (terraform apply or destroy).".into(),
            tip: Some("terraform plan shows what would change."),
            examples: vec![
                "terraform apply".into(),
                "terraform -chdir=infra apply -var env=prod".into(),
                "tofu destroy".into(),
                "terragrunt run-all apply".into(),
            ],
            counterexamples: vec!["terraform plan".into(), "terraform init".into(), "terraform fmt -check".into()],
        },
    })
}

/// A deploy tool recognised by its own file.
struct Tool {
    files: &'static [&'static str],
    id: &'static str,
    what: &'static str,
    pattern: &'static str,
    unless: Option<&'static str>,
    examples: &'static [&'static str],
    counterexamples: &'static [&'static str],
}

const TOOLS: &[Tool] = &[
    Tool {
        files: &["fly.toml"],
        id: "project.deploy-fly",
        what: "Fly.io",
        pattern: r"^(fly|flyctl)\s+(.*\s)?deploy(\s|$)",
        unless: None,
        examples: &["fly deploy", "flyctl deploy --remote-only", "fly -a my-app deploy"],
        counterexamples: &["fly status", "fly logs", "flyctl ssh console"],
    },
    Tool {
        files: &["vercel.json"],
        id: "project.deploy-vercel",
        what: "Vercel",
        // Plain `vercel` (or `vercel PATH`) deploys; only the subcommands listed here do not.
        pattern: r"^vercel(\s|$)",
        unless: Some(
            r"^vercel\s+(-\S+\s+)*(dev|env|ls|list|logs|inspect|link|pull|build|login|logout|whoami|help|--help|-h|--version|-v)(\s|$)",
        ),
        examples: &[
            "vercel",
            "vercel --prod",
            "npx vercel deploy --prebuilt",
            "vercel promote https://app-abc.vercel.app",
        ],
        counterexamples: &["vercel dev", "vercel env pull .env.local", "vercel build", "echo vercel"],
    },
    Tool {
        files: &["netlify.toml"],
        id: "project.deploy-netlify",
        what: "Netlify",
        pattern: r"^(netlify|ntl)\s+(.*\s)?deploy(\s|$)",
        unless: None,
        examples: &["netlify deploy --prod", "ntl deploy --dir dist", "npx netlify deploy"],
        counterexamples: &["netlify dev", "netlify status", "netlify build"],
    },
    Tool {
        files: &["serverless.yml", "serverless.yaml", "serverless.ts", "serverless.js", "serverless.json"],
        id: "project.deploy-serverless",
        what: "the Serverless Framework",
        pattern: r"^(serverless|sls)\s+(.*\s)?deploy(\s|$)",
        unless: None,
        examples: &["serverless deploy --stage prod", "sls deploy function -f api", "npx sls deploy"],
        counterexamples: &["sls package", "serverless offline start", "sls info --stage prod"],
    },
    Tool {
        files: &["Chart.yaml"],
        id: "project.deploy-helm",
        what: "Helm",
        pattern: r"^helm(\s+-\S+(\s+[^-\s]\S*)?)*\s+(install|upgrade|uninstall|delete|rollback)(\s|$)",
        unless: Some(r"\s--dry-run(=\S+)?(\s|$)"),
        examples: &[
            "helm upgrade --install api ./chart -n prod",
            "helm install api ./chart",
            "helm -n prod rollback api 3",
        ],
        counterexamples: &[
            "helm upgrade --install api ./chart --dry-run",
            "helm template api ./chart",
            "helm lint ./chart",
        ],
    },
];

fn tool_files(tree: &Tree, root: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    for tool in TOOLS {
        let mut files = tree.named(|n| tool.files.contains(&n));
        let vercel_dir = root.join(".vercel");
        if tool.id == "project.deploy-vercel" && vercel_dir.is_dir() {
            files.insert(0, Path::new(".vercel/"));
        }
        if files.is_empty() {
            continue;
        }
        out.push(Finding {
            found: listed(&files),
            rule: Draft {
                id: tool.id.into(),
                pattern: tool.pattern.into(),
                unless: tool.unless,
                reason: format!("Deploys this project with {}.", tool.what),
                tip: None,
                examples: tool.examples.iter().map(|e| e.to_string()).collect(),
                counterexamples: tool.counterexamples.iter().map(|e| e.to_string()).collect(),
            },
        });
    }
    out
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
