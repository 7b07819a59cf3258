//! docs/packs.md lists every built-in pack and rule; it is generated from rules/*.toml, and this
//! test keeps it current. After changing a pack: `CMDGUARD_BLESS=1 cargo test packs_doc`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use cmdguard::rules::compile::builtin_rules;
use cmdguard::rules::{Action, Target};

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn render() -> String {
    let rules = builtin_rules();
    let mut packs: BTreeMap<&str, Vec<_>> = BTreeMap::new();
    for r in &rules {
        packs.entry(r.pack()).or_default().push(r);
    }
    let mut out = String::from(
        "# Built-in packs\n\n\
         <!-- Generated from rules/*.toml by `CMDGUARD_BLESS=1 cargo test packs_doc`; do not edit by hand. -->\n\n\
         Every pack is on by default. `deny` rules never run; `ask` rules need your approval. To switch off \
         a rule or a whole pack, name it in `disable` at the top of your `~/.config/cmdguard/rules.toml` or \
         the project's `.cmdguard.toml`:\n\n\
         ```toml\ndisable = [\"git.stash-drop\", \"packages\"]\n```\n\n\
         `cmdguard rules list` shows what is in force; docs/rules.md describes the format.\n\n",
    );
    let _ = writeln!(out, "| pack | rules | deny | ask |\n|------|-------|------|-----|");
    for (pack, rs) in &packs {
        let deny = rs.iter().filter(|r| r.action == Action::Deny).count();
        let _ = writeln!(out, "| [{pack}](#{pack}) | {} | {deny} | {} |", rs.len(), rs.len() - deny);
    }
    for (pack, rs) in &packs {
        let _ = writeln!(out, "\n## {pack}\n\nFile: `rules/{pack}.toml`\n");
        let _ = writeln!(
            out,
            "| rule | action | stops | safer alternative | example |\n|------|--------|-------|-------------------|---------|"
        );
        for r in rs {
            let action = match (r.action, r.target) {
                (Action::Deny, _) => "deny".to_string(),
                (Action::Ask, Target::Segment) => "ask".to_string(),
                (Action::Ask, Target::Pipeline) => "ask (pipeline)".to_string(),
                (Action::Ask, Target::Line) => "ask (line)".to_string(),
            };
            let example = r.examples.first().map(|e| format!("`{}`", cell(e))).unwrap_or_default();
            let tip = r.tip.as_deref().map(cell).unwrap_or_default();
            let _ = writeln!(out, "| `{}` | {action} | {} | {tip} | {example} |", r.id, cell(&r.reason));
        }
    }
    out
}

#[test]
fn packs_doc_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/packs.md");
    let want = render();
    if std::env::var_os("CMDGUARD_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "docs/packs.md is out of date: run `CMDGUARD_BLESS=1 cargo test packs_doc`");
}
