//! After wrappers are peeled: the commands a program's options carry, as the catalogue says
//! (`tar --to-command`, `ssh -o ProxyCommand`, `git rebase --exec`), long options spelled out
//! (`rm --recurs` is `rm --recursive`), and the open-world default: a program on no list is
//! read for the commands its operands may carry (`sometool 'rm -rf ~'`, `sometool rm -rf ~`).
//! What such a guess finds asks, and never denies: the text may be plain data to it.

use super::catalog::{self, Program, Role};
use super::nested::{Nested, NestedKind, StdinUse};
use super::unwrap::Unwrapped;
use super::{Field, basename};

/// Longest operand of an unknown program read as a possible script.
const MAX_GUESSED_BYTES: usize = 4096;
/// Most argv tails of one unknown program's operands read as possible commands.
const MAX_GUESSED_TAILS: usize = 4;

/// Applies the catalogue to the command `words` (wrappers already removed).
pub fn carried(words: &mut [Field], u: &mut Unwrapped) {
    if words[0].dynamic {
        return;
    }
    let prog = basename(&words[0].text).to_string();
    if matches!(prog.as_str(), "sed" | "gsed") {
        super::sed::read(words, u);
        return;
    }
    if prog == "crontab" {
        super::cron::read(words, u);
        return;
    }
    // A subcommand's own entry (`git rebase`), read from the subcommand on.
    if let Some(sub) = words.get(1).filter(|f| !f.dynamic && catalog::has_subcommand_entries(&prog))
        && let Some(p) = catalog::find(&format!("{prog} {}", sub.text))
    {
        let origin = format!("{prog} {}", sub.text);
        apply(p, &origin, &mut words[1..], u);
        return;
    }
    match catalog::find(&prog) {
        Some(p) => {
            if let Some(full) = words.get(1).and_then(|f| catalog::alias(p, &f.text)) {
                u.notes.push(format!("`{prog} {}` read as `{prog} {full}`", words[1].text));
                words[1].text = full.to_string();
            }
            if p.role != Role::Wrapper || catalog::named_by_rules(&prog) {
                apply(p, &prog, words, u);
            }
        }
        None if catalog::named_by_rules(&prog) => {}
        None if u.nested.is_empty() && u.stdin.is_none() => guess(&prog, words, u),
        None => {}
    }
}

/// The scripts and commands `p`'s options carry; long options written as prefixes spelled out.
/// A wrapper read here (a subcommand's, or one the rules judge themselves) keeps its words,
/// and the command it runs is read as a nested one.
fn apply(p: &'static Program, origin: &str, words: &mut [Field], u: &mut Unwrapped) {
    let (r, run) = if p.role == Role::Wrapper { catalog::read_wrapper(p, words) } else { (p.read(words, 1), None) };
    for &(i, full) in &r.expanded {
        let inline = words[i].text.split_once('=').map(|(_, v)| v.to_string());
        let text = match inline {
            Some(v) => format!("{full}={v}"),
            None => full.to_string(),
        };
        u.notes.push(format!("`{}` read as `{text}` ({origin} accepts an abbreviated option)", words[i].text));
        words[i].text = text;
    }
    if let Some(at) = run {
        let kind = if p.operands_script {
            NestedKind::Script(super::nested::script_of(&words[at..]))
        } else {
            NestedKind::Argv(words[at..].to_vec())
        };
        u.nested.push(Nested { origin: origin.to_string(), kind });
    }
    for (opt, script) in r.scripts {
        let kind = NestedKind::Script(script);
        let kind = if p.guess { NestedKind::Possible(Box::new(kind)) } else { kind };
        u.nested.push(Nested { origin: format!("{origin} {opt}"), kind });
    }
    if let Some(at) = r.command_at.filter(|&at| at < words.len()) {
        let origin = format!("{origin} {}", words[at - 1].text);
        u.nested.push(Nested { origin, kind: NestedKind::Argv(words[at..].to_vec()) });
    }
    // `psql -c '\! CMD'`, `sqlite3 db '.shell CMD'`, `vim -c '!CMD'`.
    for f in words.iter().skip(1).filter(|_| !p.command_keys.is_empty()) {
        for (key, cmd) in catalog::keyed_lines(option_value(&f.text), p.command_keys) {
            let kind = NestedKind::Script(Field { text: cmd, dynamic: f.dynamic });
            u.nested.push(Nested { origin: format!("{origin} {key}"), kind });
        }
    }
    if !r.informs && ((p.reads_stdin && r.script_file != Some(false)) || r.script_file == Some(true)) {
        u.stdin = Some(StdinUse::Shell);
    }
}

/// The value of `--opt=value` (`--execute=system …`), or the word itself.
fn option_value(word: &str) -> &str {
    match word.split_once('=') {
        Some((name, value)) if name.starts_with('-') && !name.contains(char::is_whitespace) => value,
        _ => word,
    }
}

/// A word that may be a command line: it holds a blank or a shell operator.
fn may_be_script(f: &Field) -> bool {
    !f.dynamic
        && f.text.len() <= MAX_GUESSED_BYTES
        && f.text.contains(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '`' | '$' | '(' | '>'))
}

/// A word naming a program that runs or destroys something: one the catalogue or the rules know.
fn names_program(f: &Field) -> bool {
    let base = basename(&f.text);
    !f.dynamic
        && !f.text.starts_with('-')
        && (catalog::find(base).is_some_and(|p| p.role != Role::Data) || catalog::named_by_rules(base))
}

/// Reads an unknown program's operands and option values for commands: each word that may be
/// a command line as a possible script, and the words from each operand that names a known
/// program as a possible command (`systemd-run --scope rm -rf ~` under another name).
fn guess(prog: &str, words: &[Field], u: &mut Unwrapped) {
    // `tool --help`, `tool sub -h`: it prints and runs nothing. `-h` elsewhere is often an
    // option with a value (`pssh -h hosts CMD`), so only a last `-h` counts.
    let last_h = words.last().is_some_and(|f| f.text == "-h");
    if last_h || words.iter().skip(1).any(|f| matches!(f.text.as_str(), "--help" | "--version" | "-?")) {
        return;
    }
    let possible = |kind| NestedKind::Possible(Box::new(kind));
    for f in words.iter().skip(1).filter(|f| may_be_script(f)) {
        let script = Field::lit(option_value(&f.text));
        u.nested.push(Nested { origin: format!("an operand of {prog}"), kind: possible(NestedKind::Script(script)) });
    }
    // A tail of one word (`last reboot`, `apt show kill`) is more likely a name than a command.
    let tails = (1..words.len().saturating_sub(1)).filter(|&i| names_program(&words[i])).take(MAX_GUESSED_TAILS);
    for i in tails.collect::<Vec<_>>() {
        let kind = possible(NestedKind::Argv(words[i..].to_vec()));
        u.nested.push(Nested { origin: format!("the operands of {prog}"), kind });
    }
}
