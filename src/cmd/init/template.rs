//! The text of the `.cmdguard.toml` that `cmdguard init` writes: a header saying what the file
//! is and how trust works, one `ask` rule per finding, and an `[[allow]]` example left commented
//! out, since a live allow entry would loosen the rules before anyone chose to. With no findings,
//! a commented rule to start from.

use std::fmt::Write as _;

use super::detect::{Draft, Finding};
use crate::term::escape;

const HEADER: &str = "\
# cmdguard rules for this project, written by `cmdguard init`.
#
# cmdguard checks every shell command an AI agent runs here against its built-in rules, your
# own (~/.config/cmdguard/rules.toml) and this file. Rules add restrictions: `ask` stops a
# command until a person approves it, `deny` never runs it. They apply whoever edits the file.
#
# [[allow]] entries and `disable` loosen the rules, so they apply only while you trust this
# exact file. `cmdguard init` trusted it as written; any edit (yours or an agent's) suspends
# them until you review the file with `cmdguard trust`.
#
# Reference: docs/rules.md in cmdguard's repository. Patterns match each simple command in
# canonical form: quotes removed, wrappers such as sudo, env and npx unwrapped, the program
# reduced to its name (/usr/bin/make reads make).
#   cmdguard rules list                  every rule in force here, with its file and line
#   cmdguard explain -c 'make deploy'    what the rules see in a command, and the verdict
#   cmdguard rules test .cmdguard.toml   checks the examples and counterexamples below
";

const NOTHING_FOUND: &str = "
# No deploy or publish commands were found. `cmdguard init` looks at Makefile targets,
# package.json scripts, Cargo.toml, pyproject.toml or setup.py, Dockerfiles, Terraform files,
# fly.toml, vercel.json, netlify.toml, serverless.yml and Chart.yaml. A rule of your own looks
# like this; remove the leading \"# \" to use it:
#
# [[rule]]
# id = \"project.deploy\"
# action = \"ask\"
# pattern = '^make\\s+(.*\\s)?deploy(\\s|$)'
# reason = \"Deploys to production.\"
# examples = [\"make deploy\", \"sudo make -j4 deploy\"]
# counterexamples = [\"make test\", \"echo make deploy\"]
";

/// Words in a command that mark a deploy to somewhere other than production.
const NOT_PRODUCTION: &[&str] = &["staging", "stage", "preview", "dev", "sandbox", "test"];

/// The whole file for these findings.
pub fn render(findings: &[Finding]) -> String {
    let mut out = String::from(HEADER);
    if findings.is_empty() {
        out.push_str(NOTHING_FOUND);
    } else {
        out.push_str("\n# Deploy and publish commands found in this project: each asks before it runs.\n");
    }
    for f in findings {
        // Paths in `found` come from the project's tree: escaped, a newline in a directory name
        // cannot end the comment and write TOML of its own into a file init trusts.
        let _ = write!(out, "\n# {}\n", escape(&f.found));
        rule(&mut out, &f.rule);
    }
    allow_example(&mut out, findings);
    out
}

fn rule(out: &mut String, d: &Draft) {
    out.push_str("[[rule]]\n");
    let _ = writeln!(out, "id = {}", quoted(&d.id));
    out.push_str("action = \"ask\"\n");
    // Literal strings: backslashes stay as written. Patterns never hold a quote (detect.rs
    // lets only plain names into them).
    let _ = writeln!(out, "pattern = '{}'", d.pattern);
    if let Some(u) = d.unless {
        let _ = writeln!(out, "unless = '{u}'");
    }
    let _ = writeln!(out, "reason = {}", quoted(&d.reason));
    if let Some(t) = d.tip {
        let _ = writeln!(out, "tip = {}", quoted(t));
    }
    list(out, "examples", &d.examples);
    list(out, "counterexamples", &d.counterexamples);
}

fn list(out: &mut String, key: &str, items: &[String]) {
    let items: Vec<String> = items.iter().map(|i| quoted(i)).collect();
    let one_line = format!("{key} = [{}]", items.join(", "));
    if one_line.len() <= 100 {
        out.push_str(&one_line);
        out.push('\n');
    } else {
        let _ = writeln!(out, "{key} = [");
        for i in items {
            let _ = writeln!(out, "    {i},");
        }
        out.push_str("]\n");
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    toml_edit::Value::from(s).to_string()
}

/// The commented allow example: a deploy that is not to production if one was found, else the
/// example from docs/rules.md.
fn allow_example(out: &mut String, findings: &[Finding]) {
    let staging = findings.iter().flat_map(|f| &f.rule.examples).find(|e| {
        e.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| NOT_PRODUCTION.contains(&w.to_ascii_lowercase().as_str()))
    });
    let (command, reason) = match staging {
        Some(c) => (c.as_str(), "it deploys to a test environment only"),
        None => ("git push --force origin gh-pages", "the docs branch is rebuilt from scratch on every release"),
    };
    out.push_str(
        "\n# An [[allow]] entry lets one command through that a rule would ask about (a deny rule still\n\
         # wins). It loosens the rules, so it is not switched on for you: uncomment and adapt it, then\n\
         # run `cmdguard trust`.\n#\n# [[allow]]\n",
    );
    let _ = writeln!(out, "# command = {}", quoted(command));
    let _ = writeln!(out, "# reason = {}", quoted(reason));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Layer, Policy, Settings, compile};

    fn load(text: &str) -> Policy {
        let items = compile::parse_file("t.toml", text, Layer::Project).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut rules = compile::builtin_rules();
        rules.extend(items.rules);
        Policy::new(rules, items.allows, Settings::default(), Vec::new())
    }

    /// The file with its commented-out TOML (table headers and `key = value` lines) uncommented.
    fn uncommented(text: &str) -> String {
        let toml = |l: &str| {
            l == "[[rule]]"
                || l == "[[allow]]"
                || l.split_once(" = ").is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_lowercase()))
        };
        text.lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if toml(rest) => format!("{rest}\n"),
                _ => format!("{l}\n"),
            })
            .collect()
    }

    #[test]
    fn the_template_for_an_empty_project_loads_and_its_commented_rule_works() {
        let text = render(&[]);
        assert!(load(&text).rules.iter().all(|r| r.origin.layer == Layer::Builtin), "no live rule:\n{text}");
        let live = uncommented(&text);
        let policy = load(&live);
        assert!(policy.rules.iter().any(|r| r.id == "project.deploy"), "{live}");
        assert_eq!(policy.allows.len(), 1, "the allow example uncomments to a valid entry:\n{live}");
        let (rules, cases, failures) = crate::cmd::rules::examples(&policy, Some("t.toml"));
        assert_eq!((rules, cases), (1, 4));
        assert!(failures.is_empty(), "{failures:?}");
    }

    #[test]
    fn strings_are_quoted_for_toml() {
        for s in ["plain", "a \"quoted\" word", "back\\slash", "tab\tand\nnewline", "é"] {
            let doc: toml::Table = toml::from_str(&format!("k = {}", quoted(s))).unwrap();
            assert_eq!(doc["k"].as_str(), Some(s));
        }
    }
}
