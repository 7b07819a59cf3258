//! Deploy tools recognised by their files anywhere in the project, a few directories deep:
//! Dockerfiles, Terraform, fly.toml, vercel.json, netlify.toml, serverless.yml, Chart.yaml.

use std::path::{Path, PathBuf};

use super::detect::{Draft, Finding};

/// How deep the scan goes, and how many entries it reads at most.
const MAX_DEPTH: usize = 3;
const MAX_ENTRIES: usize = 5000;
/// Directories that hold dependencies or build output, never the project's own deploy files.
const SKIP_DIRS: &[&str] = &["node_modules", "target", "vendor", "venv", "__pycache__", "dist", "build"];

/// Everything found under `root`, in a fixed order.
pub fn detect(root: &Path) -> Vec<Finding> {
    let tree = Tree::scan(root);
    let mut out = Vec::new();
    out.extend(docker(&tree));
    out.extend(terraform(&tree));
    out.extend(tool_files(&tree, root));
    out
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
