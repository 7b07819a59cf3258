//! The program catalogue (`programs/*.toml`, compiled in by `build.rs`): what cmdguard knows of
//! each program, the built-in entries decoded on first use, and finding an entry by name.
//! `options.rs` reads a command's options with an entry, `wrapper.rs` a wrapper's command.

pub use super::options::Reading;
pub use super::programs::Role;

/// One catalogue entry, as `build.rs` compiled it.
#[derive(Debug)]
pub struct Program {
    /// The names a user entry is found by (built-in ones are found through `PROGRAM_NAMES`).
    pub names: &'static [&'static str],
    pub role: Role,
    pub about: &'static str,
    pub file: &'static str,
    pub short_value: &'static str,
    pub long_value: &'static [&'static str],
    pub long_value2: &'static [&'static str],
    pub long: &'static [&'static str],
    pub abbreviate: bool,
    pub guess: bool,
    pub script: &'static [&'static str],
    pub keyed: &'static [(&'static str, &'static [&'static str])],
    pub subcommands: &'static [&'static str],
    pub subcommand_optional: bool,
    pub subcommand_levels: usize,
    pub skip: usize,
    pub operands_script: bool,
    pub command_after: &'static [&'static str],
    pub reads_stdin: bool,
    pub stdin_script: &'static [&'static str],
    pub informs: &'static [&'static str],
    pub command_keys: &'static [&'static str],
    pub aliases: &'static [(&'static str, &'static str)],
    pub same_as: &'static str,
    pub removes: &'static [Removes],
    pub optional_value: &'static [&'static str],
    pub runs_files: &'static [&'static str],
    pub code: &'static [(&'static str, &'static str)],
    pub code_keys: &'static [(&'static str, &'static str)],
    pub quoted_after: &'static [&'static str],
    pub test_then: bool,
    pub keystrokes: bool,
    pub each_found: bool,
    pub assignments: bool,
    pub skip_then_command: bool,
    pub shell_without_command: &'static [&'static str],
    pub script_with_operands: bool,
    pub operands_argv: &'static [&'static str],
    pub default_command: &'static str,
    pub options_inform: bool,
    pub always_unwrap: bool,
    pub arguments_after: &'static str,
    /// Commands that must reach a command through this entry (run by a test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub examples: &'static [&'static str],
}

/// An option with which a program deletes operands or a path its value names
/// (`programs::RawRemoves`).
#[derive(Debug)]
pub struct Removes {
    pub option: &'static str,
    pub operands: &'static str,
    pub under: &'static [&'static str],
    pub value_has: &'static str,
    pub value_keys: &'static [&'static str],
    pub unless_given: &'static [&'static str],
}

struct PackedRemoves {
    option: Span,
    operands: Span,
    under: Span,
    value_has: Span,
    value_keys: Span,
    unless_given: Span,
}

/// Where a string sits in `CATALOGUE` (or a run of items in `LISTS`, `KEYED`, `ALIASES`).
type Span = (u32, u32);

/// A built-in entry as the binary holds it: offsets, no pointers (`build/programs.rs`).
struct Packed {
    role: Role,
    about: Span,
    file: Span,
    short_value: Span,
    long_value: Span,
    long_value2: Span,
    long: Span,
    abbreviate: bool,
    guess: bool,
    script: Span,
    keyed: Span,
    subcommands: Span,
    subcommand_optional: bool,
    subcommand_levels: usize,
    skip: usize,
    operands_script: bool,
    command_after: Span,
    reads_stdin: bool,
    stdin_script: Span,
    informs: Span,
    command_keys: Span,
    aliases: Span,
    same_as: Span,
    removes: Span,
    optional_value: Span,
    runs_files: Span,
    code: Span,
    code_keys: Span,
    quoted_after: Span,
    test_then: bool,
    keystrokes: bool,
    each_found: bool,
    assignments: bool,
    skip_then_command: bool,
    shell_without_command: Span,
    script_with_operands: bool,
    operands_argv: Span,
    default_command: Span,
    options_inform: bool,
    always_unwrap: bool,
    arguments_after: Span,
    examples: Span,
}

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

pub use super::keyed::{keyed_lines, quoted_after, typed};
pub use super::user_programs::{add_user, parse_user};

fn text(s: Span) -> &'static str {
    &CATALOGUE[s.0 as usize..s.1 as usize]
}

fn leak<T>(v: Vec<T>) -> &'static [T] {
    if v.is_empty() { &[] } else { Box::leak(v.into_boxed_slice()) }
}

fn pairs(run: Span) -> &'static [(&'static str, &'static str)] {
    leak(PAIRS[run.0 as usize..run.1 as usize].iter().map(|&(a, b)| (text(a), text(b))).collect())
}

fn strings(run: Span) -> &'static [&'static str] {
    leak(LISTS[run.0 as usize..run.1 as usize].iter().map(|&s| text(s)).collect())
}

/// Built-in entries decoded so far, by index: a command decodes only the entries it meets.
static DECODED: [std::sync::OnceLock<&'static Program>; PROGRAM_COUNT] =
    [const { std::sync::OnceLock::new() }; PROGRAM_COUNT];

fn decoded(i: usize) -> &'static Program {
    DECODED[i].get_or_init(|| {
        let p = &PACKED[i];
        let keyed = KEYED[p.keyed.0 as usize..p.keyed.1 as usize].iter().map(|&(o, keys)| (text(o), strings(keys)));
        let aliases = ALIASES[p.aliases.0 as usize..p.aliases.1 as usize].iter().map(|&(a, b)| (text(a), text(b)));
        Box::leak(Box::new(Program {
            // Names are looked up in `PROGRAM_NAMES`; a built-in entry does not list them again.
            names: &[],
            role: p.role,
            about: text(p.about),
            file: text(p.file),
            short_value: text(p.short_value),
            long_value: strings(p.long_value),
            long_value2: strings(p.long_value2),
            long: strings(p.long),
            abbreviate: p.abbreviate,
            guess: p.guess,
            script: strings(p.script),
            keyed: leak(keyed.collect()),
            subcommands: strings(p.subcommands),
            subcommand_optional: p.subcommand_optional,
            subcommand_levels: p.subcommand_levels,
            skip: p.skip,
            operands_script: p.operands_script,
            command_after: strings(p.command_after),
            reads_stdin: p.reads_stdin,
            stdin_script: strings(p.stdin_script),
            informs: strings(p.informs),
            command_keys: strings(p.command_keys),
            aliases: leak(aliases.collect()),
            same_as: text(p.same_as),
            removes: leak(
                REMOVES[p.removes.0 as usize..p.removes.1 as usize]
                    .iter()
                    .map(|r| Removes {
                        option: text(r.option),
                        operands: text(r.operands),
                        under: strings(r.under),
                        value_has: text(r.value_has),
                        value_keys: strings(r.value_keys),
                        unless_given: strings(r.unless_given),
                    })
                    .collect(),
            ),
            optional_value: strings(p.optional_value),
            runs_files: strings(p.runs_files),
            code: pairs(p.code),
            code_keys: pairs(p.code_keys),
            quoted_after: strings(p.quoted_after),
            test_then: p.test_then,
            keystrokes: p.keystrokes,
            each_found: p.each_found,
            assignments: p.assignments,
            skip_then_command: p.skip_then_command,
            shell_without_command: strings(p.shell_without_command),
            script_with_operands: p.script_with_operands,
            operands_argv: strings(p.operands_argv),
            default_command: text(p.default_command),
            options_inform: p.options_inform,
            always_unwrap: p.always_unwrap,
            arguments_after: text(p.arguments_after),
            examples: strings(p.examples),
        }))
    })
}

/// Entries from the user's rules files (`[[program]]`), which come before the built-in ones.
pub(super) static USER: std::sync::OnceLock<Vec<&'static Program>> = std::sync::OnceLock::new();

/// The entry for a program name (a basename, or `git reset` for a subcommand's options).
pub fn find(name: &str) -> Option<&'static Program> {
    find_name(Name(name, None))
}

/// The entry for a program's subcommand (`git`, `reset`), found as `find("git reset")` finds it
/// without the two words being joined first.
pub fn find_sub(program: &str, sub: &str) -> Option<&'static Program> {
    find_name(Name(program, Some(sub)))
}

fn find_name(name: Name<'_>) -> Option<&'static Program> {
    if let Some(p) = USER.get().and_then(|user| user.iter().find(|p| p.names.iter().any(|n| name.is(n)))) {
        return Some(p);
    }
    let at = lookup(PROGRAM_INDEX, name, |i| text(PROGRAM_NAMES[i].0))?;
    Some(decoded(PROGRAM_NAMES[at].1 as usize))
}

/// A name looked up: one word, or a program and a subcommand that stand for the two joined by
/// a space.
#[derive(Clone, Copy)]
struct Name<'a>(&'a str, Option<&'a str>);

impl Name<'_> {
    /// Whether `key` is this name.
    fn is(self, key: &str) -> bool {
        match self.1 {
            None => key == self.0,
            Some(sub) => {
                key.len() == self.0.len() + 1 + sub.len()
                    && key.starts_with(self.0)
                    && key.as_bytes()[self.0.len()] == b' '
                    && key.ends_with(sub)
            }
        }
    }

    /// FNV-1a of the name's bytes, as `build/programs.rs` hashes the names into the index tables.
    fn hash(self) -> u64 {
        let fold =
            |h: u64, bytes: &[u8]| bytes.iter().fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        let h = fold(0xcbf2_9ce4_8422_2325, self.0.as_bytes());
        match self.1 {
            Some(sub) => fold(fold(h, b" "), sub.as_bytes()),
            None => h,
        }
    }
}

/// Where `name` is in a sorted list, through its hashed index (`build/programs.rs`): one hash
/// and about one comparison, where a binary search made ten.
fn lookup(index: &[u16], name: Name<'_>, key: impl Fn(usize) -> &'static str) -> Option<usize> {
    let mask = index.len() - 1;
    let mut slot = name.hash() as usize & mask;
    loop {
        let i = usize::from(index[slot]).checked_sub(1)?;
        if name.is(key(i)) {
            return Some(i);
        }
        slot = (slot + 1) & mask;
    }
}

/// Whether some entry names a subcommand of `program` (`git reset`): only then is a command's
/// second word looked up with it.
pub fn has_subcommand_entries(program: &str) -> bool {
    let user = USER.get().is_some_and(|u| {
        u.iter().any(|p| p.names.iter().any(|n| n.split_once(' ').is_some_and(|(a, _)| a == program)))
    });
    user || lookup(SUB_INDEX, Name(program, None), |i| text(SUB_PROGRAMS[i])).is_some()
}

/// A program some built-in rule is written for (the first word of an anchored rule): known to
/// the rules, so its operands are not read as unknown text.
pub fn named_by_rules(name: &str) -> bool {
    lookup(RULE_INDEX, Name(name, None), |i| text(RULE_PROGRAMS[i])).is_some()
}

/// Whether the wrapper `p` (named `name`) keeps its words, its command read as a nested one:
/// when the rules judge it themselves (`sshpass -p`), unless its entry says otherwise.
pub fn in_view(p: &Program, name: &str) -> bool {
    !p.always_unwrap && named_by_rules(name)
}

/// The canonical spelling of a subcommand alias (`npm pub` → `publish`).
pub fn alias(p: &Program, sub: &str) -> Option<&'static str> {
    p.aliases.iter().find(|(a, _)| *a == sub).map(|(_, full)| *full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::{Verdict, decide};
    use crate::rules::compile::builtin_rules;
    use crate::rules::{Policy, Settings};

    fn verdict(policy: &Policy, text: &str) -> Verdict {
        decide(policy, &crate::shell::analyze_script(text)).verdict
    }

    #[test]
    fn every_catalogue_example_reaches_its_command() {
        let policy = Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new());
        let mut missed = Vec::new();
        for p in (0..PROGRAM_COUNT).map(decoded) {
            for example in p.examples {
                if verdict(&policy, example) == Verdict::Pass {
                    missed.push(format!("{}: {example}", p.file));
                }
            }
        }
        assert!(missed.is_empty(), "catalogue examples that pass:\n{}", missed.join("\n"));
    }

    #[test]
    fn names_are_sorted_and_found() {
        assert!(PROGRAM_NAMES.windows(2).all(|w| text(w[0].0) < text(w[1].0)));
        assert!(RULE_PROGRAMS.windows(2).all(|w| text(w[0]) < text(w[1])));
        for &(name, i) in PROGRAM_NAMES {
            assert!(find(text(name)).is_some_and(|p| std::ptr::eq(p, decoded(i as usize))), "{}", text(name));
        }
        assert_eq!(text(PACKED[PROGRAM_NAMES[0].1 as usize].file).split('/').next(), Some("programs"));
        assert!(find("no-such-program").is_none());
        for &sub in SUB_PROGRAMS {
            assert!(has_subcommand_entries(text(sub)), "{}", text(sub));
        }
        for &name in RULE_PROGRAMS {
            assert!(named_by_rules(text(name)), "{}", text(name));
        }
        assert!(!has_subcommand_entries("no-such-program") && !named_by_rules("no-such-program"));
        assert!(named_by_rules("rm") && named_by_rules("terraform"));
    }
}
