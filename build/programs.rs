//! Compiles the program catalogue (`programs/*.toml`) into static tables for
//! `shell::catalog`: the entries, a sorted name index, and the programs the built-in rules are
//! written for (collected by `build.rs` from each anchored rule's literals). A malformed file, an unknown
//! field or a name listed twice fails the build with the file and entry.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::programs::{ProgramFile, RawProgram};

/// The catalogue as the binary holds it: every string in one text (`CATALOGUE`), and tables of
/// `(start, end)` offsets into it. The tables hold no pointers, so the loader has no relocation
/// to apply for them at start-up (a table of `&str` cost ~10 instructions per string on every
/// start); `shell::catalog` decodes the one entry a command needs.
#[derive(Default)]
pub struct Packer {
    pub text: String,
    /// Spans of `text`: lists of strings.
    pub lists: Vec<String>,
    keyed: Vec<String>,
    aliases: Vec<String>,
    pairs: Vec<String>,
    removes: Vec<String>,
}

impl Packer {
    /// `v` appended to the text, as the Rust expression of its span.
    pub fn s(&mut self, v: &str) -> String {
        let start = self.text.len();
        self.text.push_str(v);
        format!("({start}, {})", self.text.len())
    }

    /// `items` appended, as the Rust expression of their range of `lists`.
    pub fn list(&mut self, items: &[String]) -> String {
        let first = self.lists.len();
        for i in items {
            let s = self.s(i);
            self.lists.push(s);
        }
        format!("({first}, {})", self.lists.len())
    }

    fn pairs(&mut self, items: &[[String; 2]]) -> String {
        let first = self.pairs.len();
        for [a, b] in items {
            let (a, b) = (self.s(a), self.s(b));
            self.pairs.push(format!("({a}, {b})"));
        }
        format!("({first}, {})", self.pairs.len())
    }
}

/// Writes `programs.rs`; `rule_programs` are the programs the built-in rules are written for.
pub fn emit(out_dir: &Path, rule_programs: &std::collections::BTreeSet<String>) {
    let files = crate::toml_files("programs");
    let mut pk = Packer::default();
    let mut entries = Vec::new();
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read programs file");
        let file: ProgramFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let shown = format!("programs/{}", path.file_name().unwrap().to_str().unwrap());
        for p in &file.programs {
            for n in &p.names {
                if names.insert(n.clone(), entries.len()).is_some() {
                    panic!("{shown}: program {n:?} is listed twice in the catalogue");
                }
            }
            entries.push(entry(&mut pk, p, &shown));
        }
    }
    let mut out = format!(
        "const PROGRAM_COUNT: usize = {};\nstatic PACKED: [Packed; PROGRAM_COUNT] = [\n{}];\n\n",
        entries.len(),
        entries.join("")
    );
    let index: Vec<String> = names.iter().map(|(n, i)| format!("({}, {i})", pk.s(n))).collect();
    let _ = writeln!(out, "static PROGRAM_NAMES: &[(Span, u16)] = &[{}];", index.join(", "));
    let subs: std::collections::BTreeSet<&str> =
        names.keys().filter_map(|n| n.split_once(' ').map(|(p, _)| p)).collect();
    let subs: Vec<String> = subs.into_iter().map(|n| pk.s(n)).collect();
    let _ = writeln!(out, "static SUB_PROGRAMS: &[Span] = &[{}];", subs.join(", "));
    let rules: Vec<String> = rule_programs.iter().map(|n| pk.s(n)).collect();
    let _ = writeln!(out, "static RULE_PROGRAMS: &[Span] = &[{}];", rules.join(", "));
    // Hashed indexes of the three sorted lists, for lookups without a binary search.
    let program_keys: Vec<&str> = names.keys().map(String::as_str).collect();
    let sub_keys: Vec<&str> = names
        .keys()
        .filter_map(|n| n.split_once(' ').map(|(p, _)| p))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let rule_keys: Vec<&str> = rule_programs.iter().map(String::as_str).collect();
    for (name, keys) in [("PROGRAM_INDEX", &program_keys), ("SUB_INDEX", &sub_keys), ("RULE_INDEX", &rule_keys)] {
        let _ = writeln!(out, "static {name}: &[u16] = &{:?};", hashed(keys));
    }
    let _ = writeln!(out, "static LISTS: &[Span] = &[{}];", pk.lists.join(", "));
    let _ = writeln!(out, "static KEYED: &[(Span, Span)] = &[{}];", pk.keyed.join(", "));
    let _ = writeln!(out, "static ALIASES: &[(Span, Span)] = &[{}];", pk.aliases.join(", "));
    let _ = writeln!(out, "static PAIRS: &[(Span, Span)] = &[{}];", pk.pairs.join(", "));
    let _ = writeln!(out, "static REMOVES: &[PackedRemoves] = &[{}];", pk.removes.join(", "));
    let _ = writeln!(out, "static CATALOGUE: &str = {:?};", pk.text);
    std::fs::write(out_dir.join("programs.rs"), out).expect("write programs.rs");
}

/// An open-addressing table over `keys` (sorted, distinct): slot `name_hash(key) & (len - 1)`,
/// or the next free one after it, holds the key's position plus one; 0 is an empty slot. At most
/// half full, so a lookup of a name that is absent ends at an empty slot soon.
fn hashed(keys: &[&str]) -> Vec<u16> {
    let size = (keys.len() * 2).next_power_of_two().max(16);
    assert!(keys.len() < usize::from(u16::MAX), "too many names for a u16 index");
    let mut table = vec![0u16; size];
    for (i, k) in keys.iter().enumerate() {
        let mut slot = name_hash(k.as_bytes()) as usize & (size - 1);
        while table[slot] != 0 {
            slot = (slot + 1) & (size - 1);
        }
        table[slot] = i as u16 + 1;
    }
    table
}

/// FNV-1a, as `shell::catalog::Name::hash` (a test there finds every name through the tables).
fn name_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn entry(pk: &mut Packer, p: &RawProgram, file: &str) -> String {
    let removes = p.removes.iter().map(|r| &r.option);
    let coded = p.code.iter().map(|[o, _]| o);
    for o in p
        .script
        .iter()
        .chain(&p.long_value)
        .chain(&p.long)
        .chain(&p.long_value2)
        .chain(&p.optional_value)
        .chain(&p.shell_without_command)
        .chain(&p.operands_argv)
        .chain(removes)
        .chain(coded)
    {
        if !o.starts_with('-') {
            panic!("{file}: program {:?}: option {o:?} does not start with `-`", p.names[0]);
        }
    }
    if p.subcommand_levels > crate::programs::MAX_SUBCOMMAND_LEVELS {
        panic!(
            "{file}: program {:?}: subcommand_levels {} is over {}",
            p.names[0],
            p.subcommand_levels,
            crate::programs::MAX_SUBCOMMAND_LEVELS
        );
    }
    let keyed_first = pk.keyed.len();
    for k in &p.keyed {
        let (option, keys) = (pk.s(&k.option), pk.list(&k.keys));
        pk.keyed.push(format!("({option}, {keys})"));
    }
    let keyed = format!("({keyed_first}, {})", pk.keyed.len());
    let aliases_first = pk.aliases.len();
    for [a, b] in &p.aliases {
        let (a, b) = (pk.s(a), pk.s(b));
        pk.aliases.push(format!("({a}, {b})"));
    }
    let aliases = format!("({aliases_first}, {})", pk.aliases.len());
    let removes_first = pk.removes.len();
    for r in &p.removes {
        if !matches!(r.operands.as_str(), "" | "all" | "last" | "but_last" | "after_first") {
            panic!(
                "{file}: program {:?}: removes.operands {:?} is not all, last, but_last or after_first",
                p.names[0], r.operands
            );
        }
        let (option, operands, under, value_has, value_keys) =
            (pk.s(&r.option), pk.s(&r.operands), pk.list(&r.under), pk.s(&r.value_has), pk.list(&r.value_keys));
        let unless_given = pk.list(&r.unless_given);
        pk.removes.push(format!(
            "PackedRemoves {{ option: {option}, operands: {operands}, under: {under}, value_has: {value_has}, value_keys: {value_keys}, unless_given: {unless_given} }}"
        ));
    }
    let removes = format!("({removes_first}, {})", pk.removes.len());
    let (code, code_keys) = (pk.pairs(&p.code), pk.pairs(&p.code_keys));
    format!(
        "    Packed {{ role: Role::{:?}, about: {}, file: {}, short_value: {}, long_value: {}, long_value2: {}, \
         long: {}, abbreviate: {}, guess: {}, script: {}, keyed: {keyed}, subcommands: {}, subcommand_optional: {}, \
         subcommand_levels: {}, skip: {}, operands_script: {}, command_after: {}, reads_stdin: {}, stdin_script: {}, informs: {}, \
         command_keys: {}, aliases: {aliases}, same_as: {}, removes: {removes}, optional_value: {}, runs_files: {}, \
         code: {code}, code_keys: {code_keys}, quoted_after: {}, test_then: {}, keystrokes: {}, each_found: {}, \
         assignments: {}, skip_then_command: {}, shell_without_command: {}, script_with_operands: {}, \
         operands_argv: {}, default_command: {}, options_inform: {}, always_unwrap: {}, arguments_after: {}, \
         examples: {} }},\n",
        p.role,
        pk.s(&p.about),
        pk.s(file),
        pk.s(&p.short_value),
        pk.list(&p.long_value),
        pk.list(&p.long_value2),
        pk.list(&p.long),
        p.abbreviate,
        p.guess,
        pk.list(&p.script),
        pk.list(&p.subcommands),
        p.subcommand_optional,
        p.subcommand_levels,
        p.skip,
        p.operands_script,
        pk.list(&p.command_after),
        p.reads_stdin,
        pk.list(&p.stdin_script),
        pk.list(&p.informs),
        pk.list(&p.command_keys),
        pk.s(&p.same_as),
        pk.list(&p.optional_value),
        pk.list(&p.runs_files),
        pk.list(&p.quoted_after),
        p.test_then,
        p.keystrokes,
        p.each_found,
        p.assignments,
        p.skip_then_command,
        pk.list(&p.shell_without_command),
        p.script_with_operands,
        pk.list(&p.operands_argv),
        pk.s(&p.default_command),
        p.options_inform,
        p.always_unwrap,
        pk.s(&p.arguments_after),
        pk.list(&p.examples),
    )
}

/// The program an anchored rule's prefix literal starts with (`rm` of `^rm\s`), if a word:
/// the programs the built-in rules are written for.
pub fn program_word(lit: &[u8]) -> Option<String> {
    let word: String = lit
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'))
        .map(|&b| b as char)
        .collect();
    (word.len() >= 2).then_some(word)
}
