//! `cmdguard init`: writes a commented `.cmdguard.toml` at the project root (the nearest
//! directory with a `.git`, else the working directory) with `ask` rules for the deploy and
//! publish commands found in the project, and trusts it as written. It never overwrites: if a
//! `.cmdguard.toml` is already in force here, it says where and does nothing.

mod detect;
mod template;
mod tools;

use std::path::Path;

use anyhow::{Result, anyhow, bail};

use crate::approval::trust::Store;
use crate::cli::{Global, InitArgs};
use crate::config::{self, PROJECT_FILE};
use crate::exit::DECLINED;
use crate::rules::{Layer, Policy, compile};
use crate::term::escape;

use detect::Finding;

pub fn run(global: &Global, args: &InitArgs) -> Result<u8> {
    let cwd = super::cwd()?;
    let existing = config::find_project_file(&cwd);
    if let Some(f) = existing.as_ref().filter(|_| !args.print) {
        let f = escape(&f.display().to_string());
        eprintln!(
            "cmdguard init: {f} already exists, and init never overwrites a rules file; edit it, then check it with `cmdguard rules test {f}`"
        );
        return Ok(DECLINED);
    }
    let root = config::project_root(&cwd);
    let path = root.join(PROJECT_FILE);
    let mut findings = detect::detect(&root);
    // Rule ids must be unique across every rules file read here.
    let policy = config::load(&root, &[])?;
    unique_ids(&mut findings, &policy);
    let text = template::render(&findings);
    self_check(&path, &text)?;
    let shown = escape(&path.display().to_string());
    let found = || -> Vec<serde_json::Value> {
        findings.iter().map(|f| serde_json::json!({"found": f.found, "rule": f.rule.id})).collect()
    };
    if args.print && global.json {
        let obj = serde_json::json!({"path": path.display().to_string(), "text": text, "found": found(),
            "in_force": existing.as_ref().map(|f| f.display().to_string())});
        super::print(&format!("{obj}\n"))?;
        return Ok(0);
    }
    if args.print {
        super::print(&text)?;
        eprint!("{}", summary(&findings));
        if let Some(f) = &existing {
            eprintln!(
                "note: {} is already in force here; init would not write this file",
                escape(&f.display().to_string())
            );
        }
        return Ok(0);
    }
    let mut store = Store::open()?;
    if !crate::state::write_new(&path, text.as_bytes(), 0o644)? {
        bail!("{} appeared while init was writing it; it was left as it is", path.display());
    }
    if let Err(e) = store.trust(&path, text.as_bytes()) {
        eprintln!(
            "cmdguard init: wrote {shown}, but could not record that you trust it ({e:#}); its rules apply, and `cmdguard trust` records the trust"
        );
        return Ok(DECLINED);
    }
    if global.json {
        let obj =
            serde_json::json!({"path": path.display().to_string(), "written": true, "trusted": true, "found": found()});
        super::print(&format!("{obj}\n"))?;
        return Ok(0);
    }
    println!("cmdguard init: wrote {shown} and trusted it as written");
    print!("{}", summary(&findings));
    println!("check it: cmdguard rules test {shown}");
    if let Some(example) = findings.first().and_then(|f| f.rule.examples.first()) {
        println!("try it:   cmdguard check -c {}   (asks)", escape(&crate::shell::quote(example)));
    }
    Ok(0)
}

/// What was found, one line per rule.
fn summary(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "found no deploy or publish commands; the file holds a commented rule to start from\n".into();
    }
    let mut out = String::from("found:\n");
    for f in findings {
        out.push_str(&format!("  {}  ->  {} asks\n", escape(&f.found), f.rule.id));
    }
    out
}

/// Renames drafts whose id a rules file already read here defines (`project.deploy-make-2`).
fn unique_ids(findings: &mut [Finding], policy: &Policy) {
    for f in findings {
        let base = f.rule.id.clone();
        let mut n = 1;
        while policy.rules.iter().any(|r| r.id == f.rule.id) {
            n += 1;
            f.rule.id = format!("{base}-{n}");
        }
    }
}

/// The generated file must load, loosen nothing, and its rules must pass their own examples, as
/// `cmdguard rules test` will check; anything else is a bug here, and nothing is written.
fn self_check(path: &Path, text: &str) -> Result<()> {
    let name = path.display().to_string();
    let items = compile::parse_file(&name, text, Layer::Project)
        .map_err(|e| anyhow!("the generated rules file does not load (a bug in cmdguard init): {e}"))?;
    // init trusts what it writes, so what it writes may only restrict.
    let loosening = config::loosening(&items, &Default::default());
    if !loosening.is_empty() {
        bail!("the generated rules file would loosen the rules (a bug in cmdguard init): {}", loosening.join("; "));
    }
    let mut rules = compile::builtin_rules();
    rules.extend(items.rules);
    let policy = Policy::new(rules, items.allows, Default::default(), Vec::new());
    let (_, _, failures) = super::rules::examples(&policy, Some(&name));
    if !failures.is_empty() {
        bail!("the generated rules fail their own examples (a bug in cmdguard init): {}", failures.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::self_check;
    use std::path::Path;

    #[test]
    fn the_self_check_refuses_loosening_and_failing_examples() {
        let path = Path::new("/p/.cmdguard.toml");
        let rule = "[[rule]]\nid = \"project.x\"\naction = \"ask\"\npattern = '^make deploy'\nreason = \"r\"\n";
        self_check(path, &format!("{rule}examples = [\"make deploy\"]\ncounterexamples = [\"make test\"]\n")).unwrap();
        let e = self_check(path, &format!("{rule}examples = [\"make test\"]\n")).unwrap_err();
        assert!(e.to_string().contains("fail their own examples"), "{e}");
        for loosening in ["[[allow]]\ncommand = \"x\"\n", "disable = [\"git\"]\n", "[settings]\ntimeout = 9999\n"] {
            let e = self_check(path, loosening).unwrap_err();
            assert!(e.to_string().contains("would loosen"), "{loosening}: {e}");
        }
        assert!(self_check(path, "[[rule]\n").unwrap_err().to_string().contains("does not load"));
    }
}
