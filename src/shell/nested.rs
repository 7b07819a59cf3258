//! Programs that carry another script: shells with `-c`, `eval`, `su -c`, `ssh HOST CMD`,
//! `docker exec`, `kubectl exec`, `find -exec`, `git -c alias.x=!…`, and interpreters given code
//! (`python -c`). Also the `echo`/`printf` escape rules used to resolve trivial output.

use super::interp::Lang;
use super::unwrap::{Unwrapped, skip_options};
use super::{Field, basename, catalog};

pub struct Nested {
    /// How this script was reached, for explain (`bash -c`, `ssh host`).
    pub origin: String,
    pub kind: NestedKind,
}

pub enum NestedKind {
    /// Shell text to parse.
    Script(Field),
    /// Words to run with no shell in between.
    Argv(Vec<Field>),
    /// Interpreter code whose shell-outs are analysed.
    Code(Lang, Field),
    /// A script that is only known at run time; the text says what.
    Dynamic(String),
    /// A file the program reads as a script (`make` reads `Makefile`, `sed -f F`): read if
    /// this command wrote it earlier with known text, else nothing (like a script on disk).
    File(String, FileUse),
    /// What an unknown program's operand may carry (`shell::open`): read as the inner kind, but
    /// what it finds asks, and what cannot be read there asks nothing.
    Possible(Box<NestedKind>),
}

/// How a file a program runs is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileUse {
    /// A shell script (a git hook).
    Shell,
    /// Another language that holds shell commands (a Makefile): read as a guess.
    Guess,
    /// A sed script.
    Sed,
    /// A program in an interpreter's language (`python3 x.py`, `node a.js`).
    Code(Lang),
}

#[derive(Debug, Clone, Copy)]
pub enum StdinUse {
    Shell,
    Code(Lang),
    /// A crontab: each line's command, after its schedule (`shell::cron`).
    Cron,
}

/// Shells whose `-c` text, script operand or input is read. fish, nu, csh/tcsh and xonsh have
/// their own syntax; their simple commands read the same, and what does not parse as sh asks.
pub(super) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "rbash", "csh", "tcsh", "nu", "xonsh",
    "elvish",
];

/// A script operand that names standard input.
fn reads_stdin(word: &Field) -> bool {
    matches!(word.text.as_str(), "-" | "/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0")
}

/// A script operand that is another command's output (`<(…)`, `$(…)`), known only at run time.
fn is_substituted(word: &Field) -> bool {
    word.dynamic && (word.text.starts_with("<(") || word.text.starts_with("$(") || word.text.starts_with(">("))
}

/// Words joined into script text, as `eval`, `ssh` and `watch` join them.
pub fn script_of(words: &[Field]) -> Field {
    Field {
        text: words.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" "),
        dynamic: words.iter().any(|f| f.dynamic),
    }
}

/// Finds the script a carrier runs; `words` may be rewritten to canonical form (git): says
/// whether they were.
pub fn carriers(words: &mut Vec<Field>, u: &mut Unwrapped) -> bool {
    // Only git's words are rewritten; every other carrier reads them as they are.
    if basename(&words[0].text) == "git" {
        return git_globals(words, u);
    }
    other_carriers(words, u);
    false
}

fn other_carriers(words: &[Field], u: &mut Unwrapped) {
    let prog = basename(&words[0].text);
    let push = |u: &mut Unwrapped, origin: String, kind: NestedKind| u.nested.push(Nested { origin, kind });
    if prog == "cmdguard" {
        cmdguard_job(words, u);
        return;
    }
    // cmdguard's shell shim takes sh's arguments.
    if SHELLS.contains(&prog) || prog == "cmdguard-sh" {
        // `-` and `+` options may mix (`bash +x -e -c …`, `sh +o posix -c …`).
        let (mut i, mut opts) = (1, Vec::new());
        loop {
            let (next, more) = skip_options(words, i, "oO", &["--rcfile", "--init-file"], false);
            opts.extend(more);
            i = next;
            match words.get(i).map(|f| f.text.as_str()) {
                Some("+o" | "+O") => i += 2,
                Some(w) if w.starts_with('+') && w.len() > 1 => i += 1,
                _ => break,
            }
        }
        // nu spells it `--commands` too.
        if opts.iter().any(|(n, _)| n == "-c" || (prog == "nu" && n == "--commands")) {
            match words.get(i) {
                Some(script) => push(u, format!("{prog} -c"), NestedKind::Script(script.clone())),
                None => u.notes.push(format!("{prog} -c without a script")),
            }
        } else if i >= words.len() || opts.iter().any(|(n, _)| n == "-s") || reads_stdin(&words[i]) {
            u.stdin = Some(StdinUse::Shell);
        } else if is_substituted(&words[i]) {
            // `bash <(curl …)`: the script is another command's output.
            push(u, prog.to_string(), NestedKind::Script(words[i].clone()));
        }
        return;
    }
    if matches!(prog, "source" | ".") {
        match words.get(1) {
            Some(f) if reads_stdin(f) => u.stdin = Some(StdinUse::Shell),
            Some(f) if is_substituted(f) => push(u, prog.to_string(), NestedKind::Script(f.clone())),
            _ => {}
        }
        return;
    }
    if let Some(lang) = Lang::of(prog) {
        code_of(lang, words, u);
        return;
    }
    match prog {
        "eval" if words.len() > 1 => push(u, "eval".into(), NestedKind::Script(script_of(&words[1..]))),
        // An alias runs its value wherever its name is used later.
        "alias" => {
            for (_, value) in words[1..].iter().filter_map(|f| f.text.split_once('=')) {
                push(u, "alias".into(), NestedKind::Script(Field::lit(value)));
            }
        }
        "su" | "runuser" => {
            let (short, long) = valued(prog);
            let (i, opts) = skip_options(words, 1, short, long, false);
            if let Some((_, Some(c))) = opts.iter().rev().find(|(n, _)| n == "-c" || n == "--command") {
                push(u, prog.to_string(), NestedKind::Script(Field::lit(c.clone())));
            } else if opts.iter().any(|(n, _)| n == "-u" || n == "--user") && i < words.len() {
                push(u, prog.to_string(), NestedKind::Argv(words[i..].to_vec()));
            } else {
                // `su - root -c CMD`: options may follow `-` and the user name.
                let at = words.iter().skip(i).position(|f| f.text == "-c" || f.text == "--command");
                match at.and_then(|n| words.get(i + n + 1)) {
                    Some(c) => push(u, prog.to_string(), NestedKind::Script(c.clone())),
                    // No command: a shell that reads its commands from standard input.
                    None => u.stdin = Some(StdinUse::Shell),
                }
            }
        }
        "ssh" => {
            let (short, long) = valued("ssh");
            let (i, _) = skip_options(words, 1, short, long, false);
            // OpenSSH reads options after the destination too, up to the command.
            let (j, _) = skip_options(words, i + 1, short, long, false);
            if words.len() > j && i < words.len() {
                let origin = format!("ssh {}", words[i].text);
                push(u, origin, NestedKind::Script(script_of(&words[j..])));
            }
        }
        "docker" | "podman" | "nerdctl" => container_exec(prog, words, u),
        "docker-compose" | "podman-compose" => compose_exec(prog, words, 1, u),
        "kubectl" | "oc" => kubectl_exec(prog, words, u),
        "find" => super::find::find_exec(words, u),
        _ => {}
    }
}

/// `cmdguard [OPTIONS] -c STRING`, `-- ARGV` or `shell ARGS`: the command it would run is
/// analysed here as well, `-c` text in the dialect of its `--shell`. Run with `--rules`, it would
/// judge the command under rules this analysis cannot see, so that asks; subcommands that run
/// nothing (`check`, `explain`, …) carry nothing.
fn cmdguard_job(words: &[Field], u: &mut Unwrapped) {
    let mut origin = "cmdguard".to_string();
    // `--rules`, or a `--shell` that is not a shell cmdguard reads.
    let mut unseen = None;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let (name, inline) = match w.text.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (w.text.as_str(), None),
        };
        let value = || inline.clone().or_else(|| words.get(i + 1).map(|f| f.text.clone()));
        let step = if inline.is_some() { 1 } else { 2 };
        let kind = match name {
            "--rules" => {
                unseen = Some("rules");
                i += step;
                continue;
            }
            "--shell" => {
                // The nested text is read as that shell reads it (`bash -c`, `dash -c`).
                let shell = value().unwrap_or_default();
                if !crate::config::POSIX_SHELLS.contains(&basename(&shell)) {
                    unseen = Some("a shell");
                }
                origin = format!("{shell} -c");
                i += step;
                continue;
            }
            "--session-key" | "--no-tty" => {
                i += step;
                continue;
            }
            // `--audit` runs the command unjudged: what it carries is read like any other.
            "--json" | "--audit" => {
                i += 1;
                continue;
            }
            "-c" => words.get(i + 1).map(|script| NestedKind::Script(script.clone())),
            "--" => (words.len() > i + 1).then(|| NestedKind::Argv(words[i + 1..].to_vec())),
            "shell" => {
                let mut as_sh = vec![Field::lit("sh")];
                as_sh.extend(words[i + 1..].iter().cloned());
                Some(NestedKind::Argv(as_sh))
            }
            // An option this analysis does not know may change what the command runs.
            o if o.starts_with('-') => {
                Some(NestedKind::Dynamic(format!("cmdguard option `{o}` that this check does not know")))
            }
            // Other subcommands (check, explain, rules, …) run no command.
            _ => None,
        };
        let kind = match (kind, unseen) {
            (Some(_), Some(what)) => Some(NestedKind::Dynamic(format!(
                "cmdguard --shell/--rules … would judge its command under {what} this check cannot see"
            ))),
            (other, _) => other,
        };
        if let Some(kind) = kind {
            u.nested.push(Nested { origin, kind });
        }
        return;
    }
}

fn code_of(lang: Lang, words: &[Field], u: &mut Unwrapped) {
    if lang == Lang::Awk {
        // awk's program is its first operand, unless it comes from a file (-f).
        let (i, opts) = skip_options(words, 1, "Ffve", &["--field-separator", "--file", "--assign", "--source"], false);
        let code = opts.iter().find(|(n, _)| n == "-e" || n == "--source").and_then(|(_, v)| v.clone().map(Field::lit));
        let from_file = opts.iter().any(|(n, _)| n == "-f" || n == "--file");
        // `awk -f prog.awk`: the program is the file, read when this command wrote it.
        for (_, file) in opts.iter().filter(|(n, _)| n == "-f" || n == "--file") {
            if let Some(file) = file {
                let kind = NestedKind::File(file.clone(), FileUse::Code(lang));
                u.nested.push(Nested { origin: format!("awk -f {file}"), kind });
            }
        }
        if let Some(code) = code.or_else(|| (!from_file).then(|| words.get(i).cloned()).flatten()) {
            u.nested.push(Nested { origin: format!("{} program", lang.name()), kind: NestedKind::Code(lang, code) });
        }
        return;
    }
    if lang == Lang::PowerShell {
        // `pwsh -NoProfile -Command CODE…`: PowerShell takes any prefix of a parameter name,
        // with any case; what follows -Command is the code, and -EncodedCommand is base64.
        let is = |w: &str, name: &str| w.len() > 1 && name.starts_with(&w.to_ascii_lowercase()[..]);
        for (i, w) in words.iter().enumerate().skip(1) {
            let t = w.text.as_str();
            if t.starts_with('-') && t.len() >= 3 && is(t, "-encodedcommand") || t.eq_ignore_ascii_case("-ec") {
                let kind = NestedKind::Dynamic("pwsh -EncodedCommand runs base64 code".into());
                u.nested.push(Nested { origin: "pwsh -EncodedCommand".into(), kind });
                return;
            }
            if t.starts_with('-') && is(t, "-command") {
                match words.get(i + 1) {
                    // `-Command -`: the commands come from standard input.
                    Some(f) if f.text == "-" => u.stdin = Some(StdinUse::Code(lang)),
                    Some(_) => {
                        let code = script_of(&words[i + 1..]);
                        u.nested.push(Nested { origin: "pwsh -Command".into(), kind: NestedKind::Code(lang, code) });
                    }
                    None => {}
                }
                return;
            }
        }
        // With no -Command and no script file (`-File F`, or a first operand), pwsh runs what
        // it reads on standard input.
        const VALUED: &[&str] = &[
            "-executionpolicy",
            "-workingdirectory",
            "-configurationname",
            "-inputformat",
            "-outputformat",
            "-windowstyle",
            "-settingsfile",
            "-custompipename",
            "-version",
        ];
        let mut i = 1;
        while let Some(w) = words.get(i).map(|f| f.text.as_str()) {
            if !w.starts_with('-') || (w.len() >= 2 && is(w, "-file")) {
                return;
            }
            i += if VALUED.iter().any(|n| w.len() >= 3 && is(w, n)) { 2 } else { 1 };
        }
        u.stdin = Some(StdinUse::Code(lang));
        return;
    }
    let flags = lang.code_flags();
    let mut i = 1;
    while let Some(w) = words.get(i).map(|f| f.text.as_str()) {
        if let Some(long) = w.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            if ["eval", "print"].contains(&name) && matches!(lang, Lang::Node) {
                let code = inline.map(Field::lit).or_else(|| words.get(i + 1).cloned());
                if let Some(code) = code {
                    u.nested
                        .push(Nested { origin: format!("{} {w}", lang.name()), kind: NestedKind::Code(lang, code) });
                }
                return;
            }
            // `node --require ./x.js -e …`: the value is not the script.
            i += if inline.is_none() && lang.value_options().contains(&w) { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        // `python -W ignore -c …`, `ruby -r json -e …`: a value before the code option.
        let valued = cluster.find(|c| lang.value_flags().contains(c));
        let coded = cluster.find(|c| flags.contains(c));
        if let Some(v) = valued.filter(|&v| coded.is_none_or(|c| v < c)) {
            i += if v + 1 == cluster.len() { 2 } else { 1 };
            continue;
        }
        if let Some(pos) = coded {
            let rest = &cluster[pos + 1..];
            let code = if rest.is_empty() { words.get(i + 1).cloned() } else { Some(Field::lit(rest)) };
            if let Some(code) = code {
                u.nested.push(Nested {
                    origin: format!("{} -{}", lang.name(), &cluster[pos..=pos]),
                    kind: NestedKind::Code(lang, code),
                });
            }
            return;
        }
        if lang.stops_at(cluster) {
            return;
        }
        i += 1;
    }
    if matches!(lang, Lang::Node) && words.get(1).is_some_and(|w| w.text == "eval") {
        if let Some(code) = words.get(2) {
            u.nested
                .push(Nested { origin: format!("{} eval", lang.name()), kind: NestedKind::Code(lang, code.clone()) });
        }
        return;
    }
    // `python -V`, `node --version`: the interpreter answers and reads no code.
    let informs = |w: &Field| {
        matches!(w.text.as_str(), "-V" | "--version" | "-h" | "--help") || (w.text == "-v" && lang != Lang::Python)
    };
    if (i >= words.len() || words[i].text == "-") && !words[1..i.min(words.len())].iter().any(informs) {
        u.stdin = Some(StdinUse::Code(lang));
    } else if let Some(file) = words.get(i).filter(|f| !f.dynamic && f.text != "-") {
        // `python3 x.py`: the program is the file, read when this command wrote it.
        let kind = NestedKind::File(file.text.clone(), FileUse::Code(lang));
        u.nested.push(Nested { origin: format!("{} {}", lang.name(), file.text), kind });
    }
}

/// The options of `name` that take a value, short and long, as its catalogue entry lists them
/// (`programs/remote.toml`); none when it has no entry.
fn valued(name: &str) -> (&'static str, &'static [&'static str]) {
    catalog::find(name).map_or(("", &[]), |p| (p.short_value, p.long_value))
}

fn container_exec(prog: &str, words: &[Field], u: &mut Unwrapped) {
    let (short, long) = valued(prog);
    let (mut i, _) = skip_options(words, 1, short, long, false);
    if words.get(i).is_some_and(|f| f.text == "container") {
        i += 1;
    }
    let (short, long) = match words.get(i).map(|f| f.text.as_str()) {
        Some(sub @ ("exec" | "run")) => valued(&format!("{prog} {sub}")),
        Some("compose") => return compose_exec(prog, words, i + 1, u),
        _ => return,
    };
    // CONTAINER (exec) or IMAGE (run), then the command it runs.
    let (j, _) = skip_options(words, i + 1, short, long, false);
    if words.len() > j + 1 {
        let origin = format!("{prog} {} {}", words[i].text, words[j].text);
        u.nested.push(Nested { origin, kind: NestedKind::Argv(words[j + 1..].to_vec()) });
    }
}

fn compose_exec(prog: &str, words: &[Field], at: usize, u: &mut Unwrapped) {
    // `docker compose` takes Compose's options.
    let (short, long) = valued("docker-compose");
    let (i, _) = skip_options(words, at, short, long, false);
    if let Some(sub) = words.get(i).map(|f| f.text.as_str()).filter(|&s| s == "exec" || s == "run") {
        let (short, long) = valued(&format!("docker-compose {sub}"));
        let (j, _) = skip_options(words, i + 1, short, long, false);
        if words.len() > j + 1 {
            let origin = format!("{prog} {} {}", words[i].text, words[j].text);
            u.nested.push(Nested { origin, kind: NestedKind::Argv(words[j + 1..].to_vec()) });
        }
    }
}

fn kubectl_exec(prog: &str, words: &[Field], u: &mut Unwrapped) {
    if words.iter().any(|f| f.text == "run") {
        if let Some(d) = words.iter().position(|f| f.text == "--").filter(|d| d + 1 < words.len()) {
            u.nested.push(Nested { origin: format!("{prog} run"), kind: NestedKind::Argv(words[d + 1..].to_vec()) });
        }
        return;
    }
    if !words.iter().any(|f| f.text == "exec") {
        return;
    }
    let start = match words.iter().position(|f| f.text == "--") {
        Some(d) => d + 1,
        None => {
            let e = words.iter().position(|f| f.text == "exec").unwrap_or(0);
            let (short, long) = valued(&format!("{prog} exec"));
            let (i, _) = skip_options(words, e + 1, short, long, false);
            i + 1
        }
    };
    if start < words.len() {
        u.nested.push(Nested { origin: format!("{prog} exec"), kind: NestedKind::Argv(words[start..].to_vec()) });
    }
}

/// `git -C dir --no-pager -c k=v push …` reads as `git push …`; `-c alias.x=!cmd` runs a shell.
/// Says whether the words were rewritten.
fn git_globals(words: &mut Vec<Field>, u: &mut Unwrapped) -> bool {
    let with_value =
        ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix"];
    let mut i = 1;
    let mut removed = Vec::new();
    let mut aliases = Vec::new();
    while let Some(w) = words.get(i).map(|f| f.text.clone()) {
        if !w.starts_with('-') {
            break;
        }
        let takes_value = with_value.contains(&w.as_str());
        let value = if takes_value { words.get(i + 1).map(|f| f.text.clone()) } else { None };
        let setting = value.as_deref().or_else(|| w.strip_prefix("-c"));
        if w == "-c"
            && let Some((key, cmd)) = setting.and_then(|s| s.split_once('='))
        {
            match (key.strip_prefix("alias."), super::later::git_config_command(key, cmd)) {
                // `-c core.sshCommand=…`, `-c alias.x='!…'`: git runs the value through a shell.
                (_, Some(script)) => {
                    u.nested.push(Nested { origin: format!("git {key}"), kind: NestedKind::Script(Field::lit(script)) })
                }
                (Some(name), None) => aliases.push((name.to_string(), cmd.to_string())),
                _ => {}
            }
        }
        removed.push(w.clone());
        i += 1;
        if takes_value {
            removed.extend(value);
            i += 1;
        }
    }
    let mut rewritten = false;
    if i > 1 {
        u.notes.push(format!("removed git options `{}`", removed.join(" ")));
        words.drain(1..i.min(words.len()));
        rewritten = true;
    }
    // `git -c alias.fp='push --force' fp` runs `git push --force`.
    if let Some((name, value)) = words.get(1).and_then(|sub| aliases.iter().rev().find(|(n, _)| *n == sub.text)) {
        u.notes.push(format!("expanded git alias `{name}`"));
        words.splice(1..2, value.split_whitespace().map(Field::lit));
        rewritten = true;
    }
    // `git submodule foreach CMD` runs CMD through a shell in every submodule.
    if words.get(1).is_some_and(|f| f.text == "submodule")
        && let Some(at) = words.iter().position(|f| f.text == "foreach")
    {
        let (start, _) = skip_options(words, at + 1, "", &[], false);
        if start < words.len() {
            u.nested.push(Nested {
                origin: "git submodule foreach".into(),
                kind: NestedKind::Script(script_of(&words[start..])),
            });
        }
    }
    rewritten
}
