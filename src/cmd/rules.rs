//! `cmdguard rules list | lint [FILE] | test [FILE] | path`.

use std::path::Path;

use anyhow::Result;

use crate::cli::{Global, RulesCmd};
use crate::decide::decide;
use crate::rules::{Layer, Policy, Rule, Target};
use crate::shell::analyze_script;

pub fn run(global: &Global, cmd: &RulesCmd) -> Result<u8> {
    match cmd {
        RulesCmd::List => list(&super::policy(global)?),
        RulesCmd::Lint { file } => lint(global, file.as_deref()),
        RulesCmd::Test { file } => test(global, file.as_deref()),
        RulesCmd::Path => path(global),
    }
}

fn list(policy: &Policy) -> Result<u8> {
    let width = policy.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in &policy.rules {
        let target = match r.target {
            Target::Segment => "",
            Target::Pipeline => " [pipeline]",
            Target::Line => " [line]",
        };
        let origin = crate::term::escape(&r.origin.to_string());
        println!("{:width$}  {:4}  {:12}  {origin}{target}", r.id, crate::report::action_name(r.action), r.pack());
    }
    Ok(0)
}

fn path(global: &Global) -> Result<u8> {
    let policy = super::policy(global)?;
    for s in &policy.sources {
        let state = if s.loaded { "loaded" } else { "not found" };
        let trust = match s.trust {
            None => String::new(),
            Some(crate::approval::trust::TrustState::Trusted) => "  (trusted: its loosening applies)".into(),
            Some(crate::approval::trust::TrustState::Changed) => {
                "  (changed since trusted: its loosening is ignored until `cmdguard trust`)".into()
            }
            Some(crate::approval::trust::TrustState::Never) => {
                "  (not trusted: its loosening is ignored until `cmdguard trust`)".into()
            }
        };
        println!("{:9}  {:9}  {}{trust}", s.layer.name(), state, crate::term::escape(&s.path));
    }
    if let Ok(dir) = crate::state::dir() {
        println!(
            "state      {}  (session grants, trust records, audit.jsonl, rules-cache/)",
            crate::term::escape(&dir.display().to_string())
        );
    }
    Ok(0)
}

/// Weak spots that are not errors.
fn warnings(rule: &Rule) -> Vec<String> {
    let mut w = Vec::new();
    if rule.examples.is_empty() {
        w.push("has no examples; add commands it must catch, so `cmdguard rules test` can check it".into());
    }
    if rule.literals.is_none() {
        w.push(
            "has no literal text every match must contain, so it runs on every command; start it with the program name"
                .into(),
        );
    }
    w
}

fn lint(global: &Global, file: Option<&Path>) -> Result<u8> {
    let rules: Vec<Rule> = match file {
        Some(f) => {
            let text = crate::config::read_rules_file(f)?.ok_or_else(|| {
                crate::config::ConfigError::new(format!(
                    "rules file {}: cannot read it: it does not exist",
                    f.display()
                ))
            })?;
            crate::rules::compile::parse_file(&f.display().to_string(), &text, Layer::Cli)?.rules
        }
        None => super::policy(global)?.rules,
    };
    let mut count = 0;
    for r in &rules {
        for w in warnings(r) {
            count += 1;
            println!("warning: {}: rule {:?} {w}", crate::term::escape(&r.origin.to_string()), r.id);
        }
    }
    println!("{} rules checked, no errors, {count} warnings", rules.len());
    Ok(0)
}

fn test(global: &Global, file: Option<&Path>) -> Result<u8> {
    let cwd = super::cwd()?;
    let mut extra = global.rules.clone();
    let loaded = crate::config::source_paths(&cwd, &extra);
    let same = |a: &Path, b: &Path| a.canonicalize().ok().is_some_and(|a| b.canonicalize().ok() == Some(a));
    // The file may already be loaded as a layer (the project's .cmdguard.toml): test it there.
    let shown = match file {
        Some(f) => match loaded.iter().find(|(_, p)| same(f, p)) {
            Some((_, p)) => Some(p.display().to_string()),
            None => {
                extra.push(f.to_path_buf());
                Some(f.display().to_string())
            }
        },
        None => None,
    };
    let policy = crate::config::load(&cwd, &extra)?;
    let (rules, cases, failures) = examples(&policy, shown.as_deref());
    for f in &failures {
        println!("FAIL {f}");
    }
    println!("{rules} rules, {cases} examples and counterexamples");
    println!("examples: {} passed, {} failed", cases - failures.len(), failures.len());
    Ok(if failures.is_empty() { 0 } else { 1 })
}

/// Checks the examples and counterexamples of every rule in `policy` (only those written in
/// `file`, if given): (rules checked, cases checked, one line per failure).
pub fn examples(policy: &Policy, file: Option<&str>) -> (usize, usize, Vec<String>) {
    let mut failures = Vec::new();
    let (mut rules, mut cases) = (0, 0);
    for rule in policy.rules.iter().filter(|r| file.is_none_or(|f| r.origin.file == f)) {
        rules += 1;
        let expectations =
            rule.examples.iter().map(|e| (e, true)).chain(rule.counterexamples.iter().map(|e| (e, false)));
        for (example, want) in expectations {
            cases += 1;
            let decision = decide(policy, &analyze_script(example));
            let hit = decision.hits.iter().any(|h| policy.rules[h.rule].id == rule.id);
            if hit != want {
                let what = if want { "example not caught" } else { "counterexample caught" };
                let at = crate::term::escape(&rule.origin.to_string());
                failures.push(format!("{} ({at}): {what}: {}", rule.id, crate::term::escape(example)));
            }
        }
    }
    (rules, cases, failures)
}
