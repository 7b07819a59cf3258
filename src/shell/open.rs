//! After wrappers are peeled: the commands a program's options carry, as the catalogue says
//! (`tar --to-command`, `ssh -o ProxyCommand`, `git rebase --exec`), long options spelled out
//! (`rm --recurs` is `rm --recursive`), and the open-world default: a program on no list is
//! read for the commands its operands may carry (`sometool 'rm -rf ~'`, `sometool rm -rf ~`).
//! What such a guess finds asks, and never denies: the text may be plain data to it.

use super::catalog::{self, Program, Role};
use super::nested::{FileUse, Nested, NestedKind, StdinUse};
use super::unwrap::{Entries, Unwrapped};
use super::{Field, basename};

/// Longest operand of an unknown program read as a possible script.
const MAX_GUESSED_BYTES: usize = 4096;
/// Most argv tails of one unknown program's operands read as possible commands.
const MAX_GUESSED_TAILS: usize = 4;

/// Applies the catalogue to the command `words` (wrappers already removed).
/// `entries`: the program's, when unwrapping looked them up for these words.
pub fn carried(words: &mut [Field], u: &mut Unwrapped, entries: Option<Entries>) {
    if words[0].dynamic {
        return;
    }
    let prog = basename(&words[0].text).to_string();
    let entries = entries.unwrap_or_else(|| Entries::of(&prog, words));
    u.entry = Some(entries.main);
    if matches!(prog.as_str(), "sed" | "gsed") {
        super::sed::read(words, u);
        return;
    }
    if prog == "crontab" {
        super::cron::read(words, u);
        return;
    }
    // A subcommand's own entry (`git rebase`), read from the subcommand on.
    if let Some(p) = entries.sub {
        // A wrapper's (`tmux if-shell`) command was read when it was unwrapped.
        if p.role != Role::Wrapper || catalog::in_view(p, &prog) {
            let origin = [prog.as_str(), " ", &words[1].text].concat();
            apply(p, &origin, &mut words[1..], u, false);
        }
        return;
    }
    match entries.main {
        Some(p) => {
            if let Some(full) = words.get(1).and_then(|f| catalog::alias(p, &f.text)) {
                u.notes.push(format!("`{prog} {}` read as `{prog} {full}`", words[1].text));
                words[1].text = full.to_string();
            }
            if p.role != Role::Wrapper || catalog::in_view(p, &prog) {
                apply(p, &prog, words, u, true);
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
/// `main`: `p` is the entry of the program itself, read from the second word (what the
/// subcommand check reads too: `Unwrapped::first_operand`).
fn apply(p: &'static Program, origin: &str, words: &mut [Field], u: &mut Unwrapped, main: bool) {
    let first = read(p, words);
    // The reading borrows the words: where a long option was written as a prefix, it is
    // spelled out, and the words are read again as spelled (which reads the same).
    let (r, run) = if first.0.expanded.is_empty() {
        first
    } else {
        let expanded = first.0.expanded;
        for &(i, full) in &expanded {
            let inline = words[i].text.split_once('=').map(|(_, v)| v.to_string());
            let text = match inline {
                Some(v) => format!("{full}={v}"),
                None => full.to_string(),
            };
            u.notes.push(format!("`{}` read as `{text}` ({origin} accepts an abbreviated option)", words[i].text));
            words[i].text = text;
        }
        read(p, words)
    };
    if main && p.role != Role::Wrapper {
        let at = r.operands.iter().copied().find(|&k| !words[k].text.starts_with('+'));
        u.first_operand = Some((r.informs, at));
    }
    if let Some(at) = run {
        let kind = if p.operands_script {
            NestedKind::Script(super::nested::script_of(&words[at..]))
        } else {
            NestedKind::Argv(words[at..].to_vec())
        };
        u.nested.push(Nested { origin: origin.to_string(), kind });
    }
    for (opt, script) in &r.scripts {
        let kind = NestedKind::Script(catalog::typed(p, script.clone()));
        let kind = if p.guess { NestedKind::Possible(Box::new(kind)) } else { kind };
        u.nested.push(Nested { origin: format!("{origin} {opt}"), kind });
    }
    if let Some(at) = r.command_at.filter(|&at| at < words.len()) {
        let origin = format!("{origin} {}", words[at - 1].text);
        let mut argv = words[at..].to_vec();
        if p.each_found {
            found_paths(&mut argv, &r.operands.iter().filter(|&&i| i < at).map(|&i| &words[i]).collect::<Vec<_>>());
        }
        u.nested.push(Nested { origin, kind: NestedKind::Argv(argv) });
    }
    for (opt, lang, code) in &r.code {
        u.nested.push(Nested { origin: format!("{origin} {opt}"), kind: code_kind(lang, code.clone()) });
    }
    // `psql -c '\! CMD'`, `sqlite3 db '.shell CMD'`, `vim -c '!CMD'`, `vim -c 'lua …'`.
    if has_own_language(p) {
        for f in words.iter().skip(1) {
            u.nested.extend(own_language(p, origin, option_value(&f.text), f.dynamic));
        }
    }
    removed(p, origin, words, &r, u);
    if !p.same_as.is_empty() {
        // `rimraf X` does what `rm -rf X` does.
        let mut argv: Vec<Field> = p.same_as.split(' ').map(Field::lit).collect();
        argv.extend(r.operands.iter().map(|&i| words[i].clone()));
        u.notes.push(format!("`{}` read as `{}`", words[0].text, p.same_as));
        u.nested.push(Nested { origin: origin.to_string(), kind: NestedKind::Argv(argv) });
    }
    // `make` reads ./Makefile (or `-f FILE`), `git commit` runs .git/hooks/pre-commit.
    let named: Vec<&str> =
        r.given.iter().filter(|(o, _)| p.stdin_script.contains(&o.as_str())).filter_map(|&(_, v)| v).collect();
    let files = if named.is_empty() { p.runs_files.to_vec() } else { named };
    let reading = if p.guess { FileUse::Guess } else { FileUse::Shell };
    for file in files {
        u.nested.push(Nested { origin: format!("{origin} {file}"), kind: NestedKind::File(file.to_string(), reading) });
    }
    if !r.informs && ((p.reads_stdin && r.script_file != Some(false)) || r.script_file == Some(true)) {
        u.stdin = Some(StdinUse::Shell);
    }
}

/// Reads `p`'s options in `words`; for a wrapper, also where the command it runs begins.
fn read<'a>(p: &Program, words: &'a [Field]) -> (catalog::Reading<'a>, Option<usize>) {
    if p.role == Role::Wrapper { super::wrapper::read_wrapper(p, words) } else { (p.read(words, 1), None) }
}

/// Code in a language the catalogue names (`lua`, `elisp`): an interpreter's, or a dynamic
/// note for a language cmdguard does not read.
fn code_kind(lang: &str, code: Field) -> NestedKind {
    match super::lang::Lang::named(lang) {
        Some(l) => NestedKind::Code(l, code),
        None => NestedKind::Dynamic(format!("{lang} code cmdguard does not read: {}", code.text)),
    }
}

/// What text in a program's own command language runs (`psql`'s `\!` and `COPY … FROM
/// PROGRAM`, `vim`'s `:!` and `:lua`), for words and for the input it is fed.
pub fn own_language(p: &Program, origin: &str, text: &str, dynamic: bool) -> Vec<Nested> {
    let mut out = Vec::new();
    if !has_own_language(p) {
        return out;
    }
    for (key, cmd) in catalog::keyed_lines(text, p.command_keys) {
        let kind = NestedKind::Script(Field { text: cmd, dynamic });
        out.push(Nested { origin: format!("{origin} {key}"), kind });
    }
    let keys: Vec<&'static str> = p.code_keys.iter().map(|(k, _)| *k).collect();
    for (key, code) in catalog::keyed_lines(text, &keys) {
        let lang = p.code_keys.iter().find(|(k, _)| *k == key).map_or("", |(_, l)| *l);
        out.push(Nested { origin: format!("{origin} {key}"), kind: code_kind(lang, Field { text: code, dynamic }) });
    }
    for (phrase, cmd) in catalog::quoted_after(text, p.quoted_after) {
        let kind = NestedKind::Script(Field { text: cmd, dynamic });
        out.push(Nested { origin: format!("{origin} {phrase}"), kind });
    }
    out
}

/// Whether `p` has a command language: most programs have none, and nothing is looked for in
/// their words or input.
fn has_own_language(p: &Program) -> bool {
    !(p.command_keys.is_empty() && p.code_keys.is_empty() && p.quoted_after.is_empty())
}

/// `tar --remove-files`, `rsync --remove-source-files`, `ansible -m file -a 'path=X
/// state=absent'`: the paths deleted, read as `rm -rf` of them.
fn removed(p: &Program, origin: &str, words: &[Field], r: &catalog::Reading<'_>, u: &mut Unwrapped) {
    for rm in p.removes {
        let Some((_, value)) = r.given.iter().find(|(o, _)| o.as_str() == rm.option) else { continue };
        if r.given.iter().any(|(o, _)| rm.unless_given.contains(&o.as_str())) {
            continue;
        }
        let value = value.unwrap_or("");
        if !value.contains(rm.value_has) {
            continue;
        }
        let ops = &r.operands;
        let paths: Vec<Field> = if rm.value_keys.is_empty() {
            let chosen: &[usize] = match rm.operands {
                "last" => ops.last().map_or(&[], std::slice::from_ref),
                "but_last" => &ops[..ops.len().saturating_sub(1)],
                "after_first" => ops.get(1..).unwrap_or(&[]),
                _ => ops,
            };
            chosen.iter().map(|&i| words[i].clone()).collect()
        } else {
            let pairs = value.split_whitespace().filter_map(|kv| kv.split_once('='));
            pairs
                .filter(|(k, _)| rm.value_keys.contains(k))
                .map(|(_, v)| Field::lit(v.trim_matches(['"', '\''])))
                .collect()
        };
        // A remote operand (`host:dir`) is deleted on another host; `under` narrows the rest.
        let remote = |f: &Field| f.text.split_once(':').is_some_and(|(h, _)| !h.is_empty() && !h.contains('/'));
        let under = |f: &Field| {
            let below = |u: &&str| f.text.len() > u.len() && f.text.starts_with(u);
            rm.under.is_empty() || rm.under.iter().any(below)
        };
        let paths: Vec<Field> = paths.into_iter().filter(|f| !remote(f) && under(f)).collect();
        if !paths.is_empty() {
            let mut argv = vec![Field::lit("rm"), Field::lit("-rf")];
            argv.extend(paths);
            u.nested.push(Nested { origin: format!("{origin} {}", rm.option), kind: NestedKind::Argv(argv) });
        }
    }
}

/// `fd node_modules -x rm -rf`: what each run is given, from the pattern and the search
/// directory (`operands`), in place of `{}` (or appended when there is none). A pattern that is
/// not a plain name (a regex) leaves `{}`, which the rules cannot clear.
fn found_paths(argv: &mut Vec<Field>, operands: &[&Field]) {
    let plain = |f: &Field| {
        !f.dynamic
            && f.text.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
            && f.text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let root = operands.get(1).map(|d| d.text.trim_end_matches('/').to_string());
    let path = match (operands.first().filter(|p| plain(p)), root) {
        (Some(name), Some(dir)) => format!("{dir}/**/{}", name.text),
        (Some(name), None) => format!("**/{}", name.text),
        (None, Some(dir)) => format!("{dir}/**"),
        (None, None) => "{}".to_string(),
    };
    const HOLDERS: &[&str] = &["{}", "{/}", "{//}", "{.}", "{/.}"];
    let mut held = false;
    for w in argv.iter_mut().skip(1) {
        if let Some(h) = HOLDERS.iter().find(|h| w.text.contains(**h)) {
            w.text = w.text.replace(h, &path);
            held = true;
        }
    }
    if !held {
        argv.push(Field::lit(path));
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
