//! Compiles the program catalogue (`programs/*.toml`) into static tables for
//! `shell::catalog`: the entries, a sorted name index, and the programs the built-in rules are
//! written for (the first word of each anchored rule's literals). A malformed file, an unknown
//! field or a name listed twice fails the build with the file and entry.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::programs::{ProgramFile, RawProgram};

pub fn emit(out_dir: &Path) {
    println!("cargo:rerun-if-changed=programs");
    let mut files: Vec<_> = std::fs::read_dir("programs")
        .expect("programs/ folder")
        .map(|e| e.expect("programs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub static PROGRAMS: &[Program] = &[\n");
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = 0;
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(path).expect("read programs file");
        let file: ProgramFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let shown = format!("programs/{}", path.file_name().unwrap().to_str().unwrap());
        for p in &file.programs {
            for n in &p.names {
                if names.insert(n.clone(), count).is_some() {
                    panic!("{shown}: program {n:?} is listed twice in the catalogue");
                }
            }
            out.push_str(&entry(p, &shown));
            count += 1;
        }
    }
    out.push_str("];\n\npub static PROGRAM_NAMES: &[(&str, u16)] = &[\n");
    for (n, i) in &names {
        let _ = writeln!(out, "    ({n:?}, {i}),");
    }
    out.push_str("];\n\npub static RULE_PROGRAMS: &[&str] = &[\n");
    for n in rule_programs() {
        let _ = writeln!(out, "    {n:?},");
    }
    out.push_str("];\n");
    std::fs::write(out_dir.join("programs.rs"), out).expect("write programs.rs");
}

fn strs(items: &[String]) -> String {
    format!("&[{}]", items.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", "))
}

fn entry(p: &RawProgram, file: &str) -> String {
    for o in p.script.iter().chain(&p.long_value).chain(&p.long).chain(&p.long_value2) {
        if !o.starts_with('-') {
            panic!("{file}: program {:?}: option {o:?} does not start with `-`", p.names[0]);
        }
    }
    let keyed: Vec<String> = p.keyed.iter().map(|k| format!("({:?}, {})", k.option, strs(&k.keys))).collect();
    let aliases: Vec<String> = p.aliases.iter().map(|[a, b]| format!("({a:?}, {b:?})")).collect();
    format!(
        "    Program {{ names: {}, role: Role::{:?}, about: {:?}, file: {file:?}, short_value: {:?}, long_value: {}, \
         long_value2: {}, long: {}, abbreviate: {}, guess: {}, script: {}, keyed: &[{}], subcommands: {}, \
         subcommand_optional: {}, skip: {}, operands_script: {}, command_after: {}, reads_stdin: {}, \
         stdin_script: {}, informs: {}, command_keys: {}, aliases: &[{}], examples: {} }},\n",
        strs(&p.names),
        p.role,
        p.about,
        p.short_value,
        strs(&p.long_value),
        strs(&p.long_value2),
        strs(&p.long),
        p.abbreviate,
        p.guess,
        strs(&p.script),
        keyed.join(", "),
        strs(&p.subcommands),
        p.subcommand_optional,
        p.skip,
        p.operands_script,
        strs(&p.command_after),
        p.reads_stdin,
        strs(&p.stdin_script),
        strs(&p.informs),
        strs(&p.command_keys),
        aliases.join(", "),
        strs(&p.examples),
    )
}

/// The first word of every anchored built-in rule's prefix literals (`^(sudo\s+)?rm\s` → `rm`,
/// `sudo`), sorted: programs the rules are written for.
fn rule_programs() -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut files: Vec<_> = std::fs::read_dir("rules").expect("rules/").map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "toml")) {
        let text = std::fs::read_to_string(path).expect("read rule pack");
        let file: crate::schema::RuleFile = toml::from_str(&text).expect("rule pack parses");
        for rule in &file.rules {
            let Some((true, lits)) = crate::literals::prefilter(rule.pattern.get_ref()) else { continue };
            for lit in lits {
                let word: String = lit
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'))
                    .map(|&b| b as char)
                    .collect();
                if word.len() >= 2 {
                    out.insert(word);
                }
            }
        }
    }
    out.into_iter().collect()
}
