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
}

struct PackedRemoves {
    option: Span,
    operands: Span,
    under: Span,
    value_has: Span,
    value_keys: Span,
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
static USER: std::sync::OnceLock<Vec<&'static Program>> = std::sync::OnceLock::new();

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

/// Installs the user's entries, each as `[[program]]` TOML text with the file it is from. The
/// first policy loaded in a process sets them.
pub fn add_user(entries: &[(String, String)]) {
    if entries.is_empty() {
        return;
    }
    let programs = entries.iter().filter_map(|(text, file)| parse_user(text, file).ok()).collect();
    let _ = USER.set(programs);
}

/// Checks one user entry (`[[program]]` as TOML text) and makes it a catalogue entry.
pub fn parse_user(text: &str, file: &str) -> Result<&'static Program, String> {
    use super::programs::RawProgram;
    let raw: RawProgram = toml::from_str(text).map_err(|e| e.message().trim_end().to_string())?;
    if raw.names.is_empty() || raw.names.iter().any(|n| n.trim().is_empty()) {
        return Err("`names` lists the programs it is about; none is empty".into());
    }
    if raw.role == Role::Analysed {
        return Err("role \"analysed\" is for programs cmdguard reads in code; use wrapper, carrier or data".into());
    }
    let removed = raw.removes.iter().map(|r| &r.option);
    let options = raw.long_value.iter().chain(&raw.long_value2).chain(&raw.long).chain(&raw.script).chain(removed);
    if let Some(r) =
        raw.removes.iter().find(|r| !matches!(r.operands.as_str(), "" | "all" | "last" | "but_last" | "after_first"))
    {
        return Err(format!("removes.operands {:?} is not all, last, but_last or after_first", r.operands));
    }
    if let Some([_, lang]) = raw.code.iter().chain(&raw.code_keys).find(|[_, l]| !super::lang::is_language(l)) {
        return Err(format!("language {lang:?} is not one cmdguard reads"));
    }
    if let Some(bad) = options.chain(&raw.command_after).chain(&raw.stdin_script).find(|o| !o.starts_with('-')) {
        return Err(format!("option {bad:?} does not start with `-`"));
    }
    if let Some(bad) = raw.short_value.chars().find(|c| !c.is_ascii_alphanumeric()) {
        return Err(format!("short_value holds {bad:?}; list the letters of short options that take a value"));
    }
    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }
    fn all(v: Vec<String>) -> &'static [&'static str] {
        Box::leak(v.into_iter().map(leak).collect::<Vec<_>>().into_boxed_slice())
    }
    let keyed = raw.keyed.into_iter().map(|k| (leak(k.option), all(k.keys))).collect::<Vec<_>>();
    let aliases = raw.aliases.into_iter().map(|[a, b]| (leak(a), leak(b))).collect::<Vec<_>>();
    let two = |v: Vec<[String; 2]>| -> &'static [(&'static str, &'static str)] {
        Box::leak(v.into_iter().map(|[a, b]| (leak(a), leak(b))).collect::<Vec<_>>().into_boxed_slice())
    };
    let removes = raw
        .removes
        .into_iter()
        .map(|r| Removes {
            option: leak(r.option),
            operands: leak(r.operands),
            under: all(r.under),
            value_has: leak(r.value_has),
            value_keys: all(r.value_keys),
        })
        .collect::<Vec<_>>();
    Ok(Box::leak(Box::new(Program {
        names: all(raw.names),
        role: raw.role,
        about: leak(raw.about),
        file: leak(file.to_string()),
        short_value: leak(raw.short_value),
        long_value: all(raw.long_value),
        long_value2: all(raw.long_value2),
        long: all(raw.long),
        abbreviate: raw.abbreviate,
        guess: raw.guess,
        script: all(raw.script),
        keyed: Box::leak(keyed.into_boxed_slice()),
        subcommands: all(raw.subcommands),
        subcommand_optional: raw.subcommand_optional,
        skip: raw.skip,
        operands_script: raw.operands_script,
        command_after: all(raw.command_after),
        reads_stdin: raw.reads_stdin,
        stdin_script: all(raw.stdin_script),
        informs: all(raw.informs),
        command_keys: all(raw.command_keys),
        aliases: Box::leak(aliases.into_boxed_slice()),
        same_as: leak(raw.same_as),
        removes: Box::leak(removes.into_boxed_slice()),
        optional_value: all(raw.optional_value),
        runs_files: all(raw.runs_files),
        code: two(raw.code),
        code_keys: two(raw.code_keys),
        quoted_after: all(raw.quoted_after),
        test_then: raw.test_then,
        keystrokes: raw.keystrokes,
        each_found: raw.each_found,
        examples: all(raw.examples),
    })))
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

/// The shell commands lines of `text` run through one of `keys` (`\! rm -rf ~` in psql).
pub fn keyed_lines(text: &str, keys: &[&'static str]) -> Vec<(&'static str, String)> {
    text.lines().filter_map(|line| keyed_command(line, keys)).map(|(k, c)| (k, c.to_string())).collect()
}

/// The shell commands quoted after one of `phrases` in `text` (`COPY t FROM PROGRAM 'CMD'`):
/// a `'…'` literal (`''` is a quote) or a `"…"` one; phrases compare without case, words
/// separated by any blanks.
pub fn quoted_after(text: &str, phrases: &[&'static str]) -> Vec<(&'static str, String)> {
    if phrases.is_empty() {
        return Vec::new();
    }
    let words: Vec<(usize, &str)> =
        text.split_whitespace().map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w)).collect();
    let mut out = Vec::new();
    for &phrase in phrases {
        let want: Vec<&str> = phrase.split_whitespace().collect();
        for at in 0..words.len().saturating_sub(want.len() - 1) {
            if !want.iter().zip(&words[at..]).all(|(p, (_, w))| w.eq_ignore_ascii_case(p)) {
                continue;
            }
            let (start, last) = words[at + want.len() - 1];
            let rest = text[start + last.len()..].trim_start();
            let Some(q) = rest.chars().next().filter(|c| matches!(c, '\'' | '"')) else { continue };
            let mut cmd = String::new();
            let mut chars = rest[1..].chars().peekable();
            while let Some(c) = chars.next() {
                if c == q && chars.peek() == Some(&q) {
                    chars.next();
                } else if c == q {
                    break;
                }
                cmd.push(c);
            }
            out.push((phrase, cmd));
        }
    }
    out
}

/// A script an option carries, as the shell receives it: keys typed into a shell (`screen
/// -X stuff 'CMD\n'`) end a line at `\n`, `\r` or `^M`.
pub fn typed(p: &Program, script: Field) -> Field {
    if !p.keystrokes {
        return script;
    }
    let text = script.text.replace("\\n", "\n").replace("\\r", "\n").replace("^M", "\n").replace("\\015", "\n");
    Field { text, dynamic: script.dynamic }
}

/// The command of `KEY=COMMAND` or `KEY COMMAND` when KEY is one of `keys` (without case); a
/// key ending in punctuation (`!`, `\\!`, `silent !`) needs no separator.
fn keyed_command<'a>(value: &'a str, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
    let value = value.trim_start();
    keys.iter().find_map(|&key| {
        let head = value.get(..key.len())?;
        if !head.eq_ignore_ascii_case(key) {
            return None;
        }
        let rest = &value[key.len()..];
        if key.ends_with(|c: char| c.is_ascii_punctuation()) {
            return Some((key, rest.trim_start()));
        }
        let rest = rest.strip_prefix(|c: char| c == '=' || c.is_whitespace())?;
        Some((key, rest.trim_start_matches(|c: char| c == '=' || c.is_whitespace())))
    })
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
