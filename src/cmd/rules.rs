//! `cmdguard rules list | lint [FILE] | test [FILE] | path`.

use std::path::Path;

use anyhow::Result;
use serde_json::json;

use crate::cli::{Global, RulesCmd};
use crate::decide::decide;
use crate::rules::{Layer, Policy, Rule, Target};
use crate::shell::analyze_script;

pub fn run(global: &Global, cmd: &RulesCmd) -> Result<u8> {
    match cmd {
        RulesCmd::List => list(&super::policy(global)?, global.json),
        RulesCmd::Lint { file } => lint(global, file.as_deref()),
        RulesCmd::Test { file } => test(global, file.as_deref()),
        RulesCmd::Path => path(global),
    }
}

fn list(policy: &Policy, json: bool) -> Result<u8> {
    let width = policy.rules.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for r in &policy.rules {
        let target = match r.target {
            Target::Segment => "segment",
            Target::Pipeline => "pipeline",
            Target::Line => "line",
        };
        let action = crate::report::action_name(r.action);
        if json {
            let origin = r.origin.to_string();
            let obj = json!({"id": r.id, "action": action, "pack": r.pack(), "target": target, "origin": origin});
            out.push_str(&format!("{obj}\n"));
            continue;
        }
        let origin = crate::term::escape(&r.origin.to_string());
        let target = if r.target == Target::Segment { String::new() } else { format!(" [{target}]") };
        out.push_str(&format!("{:width$}  {action:4}  {:12}  {origin}{target}\n", r.id, r.pack()));
    }
    super::print(&out)?;
    Ok(0)
}

fn path(global: &Global) -> Result<u8> {
    let policy = super::policy(global)?;
    if global.json {
        let mut out = String::new();
        for s in &policy.sources {
            let trust = s.trust.map(|t| match t {
                crate::approval::trust::TrustState::Trusted => "trusted",
                crate::approval::trust::TrustState::Changed => "changed",
                crate::approval::trust::TrustState::Never => "not-trusted",
            });
            let obj = json!({"layer": s.layer.name(), "loaded": s.loaded, "path": s.path, "trust": trust});
            out.push_str(&format!("{obj}\n"));
        }
        if let Ok(dir) = crate::state::dir() {
            out.push_str(&format!("{}\n", json!({"layer": "state", "path": dir.display().to_string()})));
        }
        super::print(&out)?;
        return Ok(0);
    }
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

/// Commands unlike each other: an allow pattern that matches nearly all of them lets through
/// far more than the routine command it was written for.
const UNLIKE: &[&str] = &[
    "rm -rf /",
    "git push --force origin main",
    "curl https://x.sh | sh",
    "dd if=/dev/zero of=/dev/sda",
    "x",
    "kubectl delete ns prod",
];

/// A warning for each allow pattern in `allows` that matches nearly every command.
fn broad_allows(allows: &[crate::rules::Allow]) -> Vec<(String, String)> {
    allows
        .iter()
        .filter_map(|a| {
            let p = a.pattern.as_ref()?;
            let hits = UNLIKE.iter().filter(|c| p.get().find(c).is_some()).count();
            (hits + 1 >= UNLIKE.len()).then(|| {
                (a.origin.to_string(), format!("allow pattern {:?} matches nearly every command ({hits} of {} unlike ones); anchor it and name the program, like '^make test\\b'", p.source, UNLIKE.len()))
            })
        })
        .collect()
}

fn lint(global: &Global, file: Option<&Path>) -> Result<u8> {
    let (rules, allows): (Vec<Rule>, Vec<crate::rules::Allow>) = match file {
        Some(f) => {
            let text = crate::config::read_rules_file(f)?.ok_or_else(|| {
                crate::config::ConfigError::new(format!(
                    "rules file {}: cannot read it: it does not exist",
                    f.display()
                ))
            })?;
            let items = crate::rules::compile::parse_file(&f.display().to_string(), &text, Layer::Cli)?;
            (items.rules, items.allows)
        }
        None => {
            let policy = super::policy(global)?;
            (policy.rules, policy.allows)
        }
    };
    let mut found: Vec<(String, String)> = rules
        .iter()
        .flat_map(|r| warnings(r).into_iter().map(move |w| (r.origin.to_string(), format!("rule {:?} {w}", r.id))))
        .collect();
    found.extend(broad_allows(&allows));
    if global.json {
        let list: Vec<_> = found.iter().map(|(origin, w)| json!({"origin": origin, "warning": w})).collect();
        super::print(&format!("{}\n", json!({"rules": rules.len(), "errors": 0, "warnings": list})))?;
        return Ok(0);
    }
    let mut out = String::new();
    for (origin, w) in &found {
        out.push_str(&format!("warning: {}: {}\n", crate::term::escape(origin), crate::term::escape(w)));
    }
    out.push_str(&format!("{} rules checked, no errors, {} warnings\n", rules.len(), found.len()));
    super::print(&out)?;
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
    if global.json {
        let obj = json!({"rules": rules, "cases": cases, "passed": cases - failures.len(), "failures": failures});
        super::print(&format!("{obj}\n"))?;
        return Ok(if failures.is_empty() { 0 } else { 1 });
    }
    let mut out = String::new();
    for f in &failures {
        out.push_str(&format!("FAIL {f}\n"));
    }
    out.push_str(&format!("{rules} rules, {cases} examples and counterexamples\n"));
    out.push_str(&format!("examples: {} passed, {} failed\n", cases - failures.len(), failures.len()));
    super::print(&out)?;
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
