//! The program catalogue (`programs/*.toml`, compiled in by `build.rs`): what cmdguard knows of
//! each program, and the engine that reads a command's words with it: options as the program
//! parses them (values, bundles, `--opt=value`, long-option prefixes), the scripts its options
//! carry, and where the command a wrapper runs begins.

use super::Field;
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
    examples: Span,
}

include!(concat!(env!("OUT_DIR"), "/programs.rs"));

use super::keyed::keyed_command;
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
            examples: strings(p.examples),
        }))
    })
}

/// Entries from the user's rules files (`[[program]]`), which come before the built-in ones.
pub(super) static USER: std::sync::OnceLock<Vec<&'static Program>> = std::sync::OnceLock::new();

/// The entry for a program name (a basename, or `git reset` for a subcommand's options).
pub fn find(name: &str) -> Option<&'static Program> {
    if let Some(p) = USER.get().and_then(|user| user.iter().find(|p| p.names.contains(&name))) {
        return Some(p);
    }
    let at = PROGRAM_NAMES.binary_search_by(|&(n, _)| text(n).cmp(name)).ok()?;
    Some(decoded(PROGRAM_NAMES[at].1 as usize))
}

/// Whether some entry names a subcommand of `program` (`git reset`): only then is a command's
/// second word looked up with it.
pub fn has_subcommand_entries(program: &str) -> bool {
    let user = USER.get().is_some_and(|u| {
        u.iter().any(|p| p.names.iter().any(|n| n.split_once(' ').is_some_and(|(a, _)| a == program)))
    });
    user || SUB_PROGRAMS.binary_search_by(|&n| text(n).cmp(program)).is_ok()
}

/// A program some built-in rule is written for (the first word of an anchored rule): known to
/// the rules, so its operands are not read as unknown text.
pub fn named_by_rules(name: &str) -> bool {
    RULE_PROGRAMS.binary_search_by(|&n| text(n).cmp(name)).is_ok()
}

/// What reading a command's options with its entry found.
#[derive(Debug, Default)]
pub struct Reading {
    /// Index of the first operand (past `--`), where options stopped.
    pub end: usize,
    /// Scripts option values carry, with the option that carried each.
    pub scripts: Vec<(String, Field)>,
    /// Index where the words after a `command_after` option begin.
    pub command_at: Option<usize>,
    /// An option with which it runs nothing was given.
    pub informs: bool,
    /// A script file option was given: `Some(true)` when it names standard input.
    pub script_file: Option<bool>,
    /// Long options written as prefixes, with their full names: (word index, full name).
    pub expanded: Vec<(usize, &'static str)>,
    /// Indices of the operands (words that are neither options nor their values).
    pub operands: Vec<usize>,
    /// The options given, with their values.
    pub given: Vec<(String, Option<String>)>,
    /// Code in another language option values carry: (option, language, code).
    pub code: Vec<(String, &'static str, Field)>,
    /// A keyed option's value was the key alone (`screen -X stuff CMD`): the next word is the
    /// command.
    key_alone: Option<String>,
}

impl Program {
    fn long_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.long_value
            .iter()
            .chain(self.long_value2)
            .chain(self.long)
            .chain(self.script)
            .chain(self.command_after)
            .chain(self.stdin_script)
            .chain(self.informs)
            .chain(self.keyed.iter().map(|(o, _)| o))
            .chain(self.optional_value)
            .chain(self.removes.iter().map(|r| &r.option))
            .chain(self.code.iter().map(|(o, _)| o))
            .copied()
    }

    /// The full name of a long option as written (`--recurs` → `--recursive` where the program
    /// accepts prefixes and one name has it), or the name as written.
    fn resolve<'a>(&self, name: &'a str) -> (&'a str, Option<&'static str>) {
        if let Some(full) = self.long_names().find(|n| *n == name) {
            return (full, None);
        }
        if self.abbreviate && name.starts_with("--") && name.len() > 3 {
            // One name may be on two lists (`--use-compress-program` takes a value and is a
            // script): ambiguous means two different names.
            let mut matching = self.long_names().filter(|n| n.starts_with(name));
            if let Some(one) = matching.next()
                && matching.all(|n| n == one)
            {
                return (one, Some(one));
            }
        }
        (name, None)
    }

    fn takes_value(&self, name: &str) -> usize {
        let one = |l: &[&str]| l.contains(&name);
        if one(self.optional_value) {
            0
        } else if one(self.long_value2) {
            2
        } else if one(self.long_value)
            || one(self.script)
            || one(self.stdin_script)
            || self.code.iter().any(|(o, _)| *o == name)
            || self.keyed.iter().any(|(o, _)| *o == name)
            || (name.len() == 2 && name.starts_with('-') && self.short_value.contains(&name[1..]))
        {
            1
        } else {
            0
        }
    }

    /// Reads options from `start`. A carrier's options may follow its operands (GNU getopt
    /// permutes them), so it reads to the end; a wrapper's stop at its first operand.
    pub fn read(&self, words: &[Field], start: usize) -> Reading {
        let mut r = Reading { end: words.len(), ..Reading::default() };
        let permute = self.role != Role::Wrapper;
        let mut i = start;
        let mut first_operand = None;
        while i < words.len() {
            let w = words[i].text.as_str();
            if w == "--" {
                first_operand.get_or_insert(i + 1);
                r.operands.extend(i + 1..words.len());
                break;
            }
            if !w.starts_with('-') || w.len() < 2 {
                first_operand.get_or_insert(i);
                r.operands.push(i);
                if !permute {
                    break;
                }
                i += 1;
                continue;
            }
            let (written, inline) = match w.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (w, None),
            };
            let (name, expanded) = self.resolve(written);
            let listed = self.long_names().any(|n| n == name);
            if listed || w.starts_with("--") {
                if let Some(full) = expanded {
                    r.expanded.push((i, full));
                }
                if self.command_after.contains(&name) {
                    r.command_at = Some(i + 1);
                    first_operand.get_or_insert(i + 1);
                    break;
                }
                let n =
                    if inline.is_some() { self.takes_value(name).saturating_sub(1) } else { self.takes_value(name) };
                let value = inline
                    .map(str::to_string)
                    .or_else(|| (n > 0).then(|| words.get(i + 1)).flatten().map(|f| f.text.clone()));
                let dynamic = inline.is_none() && n > 0 && words.get(i + 1).is_some_and(|f| f.dynamic);
                self.option(name, value, dynamic || words[i].dynamic, &mut r);
                i += 1 + n;
                i += self.command_after_key(words, i, &mut r);
                continue;
            }
            // A bundle of short options (`-qfc CMD`): one that takes a value ends it.
            let cluster = &w[1..];
            let mut step = 1;
            for (j, ch) in cluster.char_indices() {
                let opt = format!("-{ch}");
                let rest = &cluster[j + ch.len_utf8()..];
                if self.optional_value.contains(&opt.as_str()) && !rest.is_empty() {
                    self.option(&opt, Some(rest.to_string()), words[i].dynamic, &mut r);
                    break;
                }
                if self.takes_value(&opt) > 0 {
                    let (value, dynamic) = if rest.is_empty() {
                        step = 2;
                        (words.get(i + 1).map(|f| f.text.clone()), words.get(i + 1).is_some_and(|f| f.dynamic))
                    } else {
                        (Some(rest.to_string()), words[i].dynamic)
                    };
                    self.option(&opt, value, dynamic, &mut r);
                    break;
                }
                self.option(&opt, None, false, &mut r);
            }
            i += step;
            i += self.command_after_key(words, i, &mut r);
        }
        r.end = first_operand.unwrap_or(i.min(words.len()));
        r
    }

    /// After a keyed option whose value was the key alone: the command is the word at `i`.
    fn command_after_key(&self, words: &[Field], i: usize, r: &mut Reading) -> usize {
        let Some(origin) = r.key_alone.take() else { return 0 };
        let Some(f) = words.get(i) else { return 0 };
        r.scripts.push((origin, f.clone()));
        1
    }

    fn option(&self, name: &str, value: Option<String>, dynamic: bool, r: &mut Reading) {
        if self.informs.contains(&name) {
            r.informs = true;
        }
        r.given.push((name.to_string(), value.clone()));
        let Some(value) = value else { return };
        for (_, lang) in self.code.iter().filter(|(o, _)| *o == name) {
            r.code.push((name.to_string(), lang, Field { text: value.clone(), dynamic }));
        }
        if self.script.contains(&name) {
            r.scripts.push((name.to_string(), Field { text: value.clone(), dynamic }));
        }
        if self.stdin_script.contains(&name) {
            let stdin = matches!(value.as_str(), "-" | "/dev/stdin");
            r.script_file = Some(r.script_file.unwrap_or(false) || stdin);
        }
        for (_, keys) in self.keyed.iter().filter(|(o, _)| *o == name) {
            if let Some(key) = keys.iter().find(|k| k.eq_ignore_ascii_case(value.trim())) {
                r.key_alone = Some(format!("{name} {key}"));
            } else if let Some((key, command)) = keyed_command(&value, keys) {
                r.scripts.push((format!("{name} {key}"), Field { text: command.to_string(), dynamic }));
            }
        }
    }
}

/// Reads a wrapper's words: its options (and its subcommand's), and where the command it runs
/// begins, after skipped operands; `None` when it runs none (no subcommand, `--help`).
pub fn read_wrapper(p: &Program, words: &[Field]) -> (Reading, Option<usize>) {
    let mut r = p.read(words, 1);
    let mut at = r.end;
    if !p.subcommands.is_empty() && !r.informs {
        match words.get(at) {
            Some(sub) if p.subcommands.contains(&sub.text.as_str()) => {
                let more = p.read(words, at + 1);
                at = more.end;
                r.informs |= more.informs;
                r.scripts.extend(more.scripts);
                r.expanded.extend(more.expanded);
                r.command_at = r.command_at.or(more.command_at);
            }
            _ if p.subcommand_optional => {}
            _ => return (r, None),
        }
    }
    if r.informs {
        return (r, None);
    }
    let mut at = at + p.skip;
    if p.skip > 0 && at < words.len() {
        // `sg GROUP -c CMD`: options may follow the skipped operands.
        let more = p.read(words, at);
        at = more.end;
        r.scripts.extend(more.scripts);
    }
    let run = (r.scripts.is_empty() && r.command_at.is_none() && at < words.len()).then_some(at);
    (r, run)
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
        assert!(named_by_rules("rm") && named_by_rules("terraform"));
    }

    fn fields(s: &str) -> Vec<Field> {
        s.split(' ').map(Field::lit).collect()
    }

    #[test]
    fn options_read_as_the_program_reads_them() {
        let script = find("script").unwrap();
        // A bundle whose last option takes the next word; a long prefix; `--opt=value`.
        for (text, want) in [
            ("script -qfc CMD out", "CMD"),
            ("script --comm=CMD out", "CMD"),
            ("script --command CMD", "CMD"),
            ("script out -c CMD", "CMD"),
        ] {
            let r = script.read(&fields(text), 1);
            assert_eq!(r.scripts.iter().map(|(_, f)| f.text.as_str()).collect::<Vec<_>>(), [want], "{text}");
        }
        let rm = find("rm").unwrap();
        let r = rm.read(&fields("rm --recurs --forc --ver x"), 1);
        assert_eq!(r.expanded, [(1, "--recursive"), (2, "--force")], "`--ver` is ambiguous");
        let ssh = find("ssh").unwrap();
        let r = ssh.read(&fields("ssh -oProxyCommand=CMD host"), 1);
        assert_eq!(r.scripts[0].1.text, "CMD");
        let r = ssh.read(&[Field::lit("ssh"), Field::lit("-o"), Field::lit("proxycommand nc %h %p")], 1);
        assert_eq!(r.scripts[0].1.text, "nc %h %p", "keys compare without case");
        let tar = find("tar").unwrap();
        let r = tar.read(&fields("tar -cf x.tar --checkpoint-action=exec=CMD ."), 1);
        assert_eq!(r.scripts[0].1.text, "CMD");
        assert!(tar.read(&fields("tar -cf x.tar --checkpoint-action=echo ."), 1).scripts.is_empty());
    }

    #[test]
    fn wrappers_find_their_command() {
        for (text, at) in [
            ("systemd-run --user --scope -p X=1 rm x", Some(5)),
            ("nvm exec 20 rm x", Some(3)),
            ("rbenv version", None),
            ("dotenv -e .env -- rm x", Some(4)),
            ("dotenv run rm x", Some(2)),
            ("chroot --userspec=a:b /jail rm x", Some(3)),
            ("bwrap --bind / / --dev /dev rm x", Some(6)),
            ("valgrind --help", None),
        ] {
            let words = fields(text);
            let p = find(&words[0].text).unwrap();
            assert_eq!(read_wrapper(p, &words).1, at, "{text}");
        }
    }
}
