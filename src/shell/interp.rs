//! Shell commands inside interpreter one-liners: `python -c "import os; os.system('rm -rf ~')"`,
//! `perl -e 'system "…"'`, `ruby -e '`…`'`, `node -e "require('child_process').execSync('…')"`,
//! `php -r 'shell_exec("…");'`. A light scanner finds calls that run a shell or a program and
//! reads their literal arguments; an argument that is not a literal is reported as dynamic.

use super::Field;
pub use super::lang::Lang;
use super::literals::{Arg, home_expr, read_args, read_delimited, read_string, receiver, snippet};
use super::nested::NestedKind;

/// Calls that delete files or directories, by last name component, with the shell command of
/// the same effect: the path they are given is judged by the rules for that command, so
/// `shutil.rmtree('build')` passes and `shutil.rmtree('/etc')` is stopped like `rm -rf /etc`.
const DELETES: &[(&str, &[&str])] = &[
    ("rmtree", &["rm", "-rf"]),
    ("remove_tree", &["rm", "-rf"]),
    ("rm_rf", &["rm", "-rf"]),
    ("rm_r", &["rm", "-r"]),
    ("remove_dir", &["rm", "-r"]),
    ("remove_entry", &["rm", "-rf"]),
    ("remove_entry_secure", &["rm", "-rf"]),
    ("rmSync", &["rm", "-rf"]),
    ("rm", &["rm", "-rf"]),
    ("rmdirSync", &["rm", "-r"]),
    ("removedirs", &["rm", "-r"]),
    ("unlinkSync", &["rm", "-f"]),
    ("unlink", &["rm", "-f"]),
    ("remove", &["rm", "-rf"]),
    ("removeSync", &["rm", "-rf"]),
    ("emptyDirSync", &["rm", "-rf"]),
    ("emptyDir", &["rm", "-rf"]),
    ("rimraf", &["rm", "-rf"]),
    ("rimrafSync", &["rm", "-rf"]),
    ("deleteSync", &["rm", "-rf"]),
];

/// Calls that send SQL through a database driver (`cursor.execute`, `client.query`, `db.run`).
const SQL_CALLS: &[&str] = &["execute", "executemany", "executescript", "query", "raw", "sql", "prepare", "run_sql"];

/// SQL statements that change or remove data, whose first word says so.
const SQL_CHANGES: &[&str] = &["drop", "truncate", "delete", "update", "alter", "grant", "revoke", "rename", "replace"];

/// SQL a driver call sends, as the database client command the rules judge
/// (`cur.execute("DROP TABLE users")` reads `psql -c 'DROP TABLE users'`).
fn sql_sent(name: &str, args: &[Arg]) -> Option<NestedKind> {
    if !SQL_CALLS.contains(&name) {
        return None;
    }
    let Some(Arg::Str(sql)) = args.first() else { return None };
    let verb = sql.split_whitespace().next()?.to_ascii_lowercase();
    SQL_CHANGES
        .contains(&verb.as_str())
        .then(|| NestedKind::Argv(vec![Field::lit("psql"), Field::lit("-c"), Field::lit(sql.clone())]))
}

/// The shell command with the effect of a deleting call (`shutil.rmtree("x")` → `rm -rf x`).
fn deletion(lang: Lang, name: &str, args: &[Arg]) -> Option<NestedKind> {
    let (_, argv) = DELETES.iter().find(|(n, _)| *n == name)?;
    // R's `unlink(x, recursive = TRUE)` deletes a tree.
    let recursive = args
        .iter()
        .any(|a| matches!(a, Arg::Other(t) if t.replace(' ', "").to_ascii_lowercase().starts_with("recursive=t")));
    let argv: &[&str] = if recursive { &["rm", "-rf"] } else { argv };
    let words = || argv.iter().map(|w| Field::lit(*w));
    Some(match args.first()? {
        Arg::Str(path) => NestedKind::Argv(words().chain([Field::lit(path.clone())]).collect()),
        Arg::List(_) => return None,
        Arg::Other(what) if home_expr(what) => NestedKind::Argv(words().chain([Field::lit("~")]).collect()),
        Arg::Other(what) => {
            NestedKind::Dynamic(format!("{} {name}({what}) deletes a path only known when it runs", lang.name()))
        }
    })
}

/// The commands and code the interpreter code runs.
pub fn extract(lang: Lang, code: &str) -> Vec<NestedKind> {
    if lang == Lang::PowerShell {
        return super::lang::powershell(code);
    }
    if lang == Lang::Elisp {
        return super::editors::elisp(code);
    }
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    if lang == Lang::Vim {
        out.extend(super::editors::vim_lines(code));
    }
    // IPython runs a line that starts with `!` in a shell.
    if lang == Lang::Python {
        for line in code.lines().filter_map(|l| l.trim_start().strip_prefix('!')) {
            out.push(NestedKind::Script(Field::lit(line.trim())));
        }
    }
    // Read outside string literals and comments: what is found there runs.
    let (read, skipped) = scan(lang, &chars, true);
    // Read again with literals and comments as code: a call found only that way is text
    // (`print("os.system(x)")`), unless a quote the scanner misjudged (a regex literal `/'/`)
    // hid code behind it. Which of the two cannot be told here, so it asks. Where the first
    // reading skipped nothing, the second is the same reading and finds nothing more.
    let hidden: Vec<NestedKind> = if skipped {
        scan(lang, &chars, false)
            .0
            .into_iter()
            .filter(|(at, _)| !read.iter().any(|(seen, _)| seen == at))
            .map(|(_, kind)| NestedKind::Possible(Box::new(kind)))
            .collect()
    } else {
        Vec::new()
    };
    out.extend(read.into_iter().map(|(_, kind)| kind));
    out.extend(hidden);
    out
}

/// Whether `| getline` (blanks allowed around the bar) starts `rest`: read in place, where
/// collecting the rest of the program into a string cost a copy for every awk string.
fn getline_follows(rest: &[char]) -> bool {
    let skip = |s: &[char]| s.iter().position(|c| !c.is_whitespace()).unwrap_or(s.len());
    let rest = &rest[skip(rest)..];
    let Some(('|', rest)) = rest.split_first().map(|(c, r)| (*c, r)) else { return false };
    let rest = &rest[skip(rest)..];
    rest.starts_with(&['g', 'e', 't', 'l', 'i', 'n', 'e'])
}

/// Where a comment that starts at `i` ends, for the languages whose comments are read here.
fn comment_end(lang: Lang, chars: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| chars.get(i + k).copied();
    let line_end = || chars[i..].iter().position(|c| *c == '\n').map_or(chars.len(), |n| i + n);
    let hash = matches!(lang, Lang::Python | Lang::Ruby | Lang::Perl | Lang::Php | Lang::R | Lang::Julia | Lang::Tcl);
    // `$#array` in perl is not a comment.
    if hash && at(0) == Some('#') && !(i > 0 && chars[i - 1] == '$') {
        return Some(line_end());
    }
    let slashes = matches!(lang, Lang::Node | Lang::Php);
    if slashes && at(0) == Some('/') && at(1) == Some('/') {
        return Some(line_end());
    }
    if slashes && at(0) == Some('/') && at(1) == Some('*') {
        let close = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == '*' && chars[j + 1] == '/');
        return Some(close.map_or(chars.len(), |j| j + 2));
    }
    (lang == Lang::Lua && at(0) == Some('-') && at(1) == Some('-')).then(line_end)
}

/// The calls `chars` makes, each with where it starts. With `literals`, string literals and
/// comments are skipped; without, they are read as code. Also says whether any was skipped.
fn scan(lang: Lang, chars: &[char], literals: bool) -> (Vec<(usize, NestedKind)>, bool) {
    let mut out = Vec::new();
    let mut skipped = false;
    // Each identifier is spelled into this one string.
    let mut name = String::new();
    let mut i = 0;
    while i < chars.len() {
        let here = i;
        let c = chars[i];
        if literals && let Some(end) = comment_end(lang, chars, i) {
            skipped = true;
            i = end;
            continue;
        }
        if lang == Lang::Awk {
            // `print … | "cmd"` and `"cmd" | getline` run cmd through a shell.
            let piped_to = c == '|' && chars[i + 1..].iter().find(|c| !c.is_whitespace()) == Some(&'"');
            if piped_to || c == '"' {
                let at = if piped_to { i + 1 + chars[i + 1..].iter().position(|c| *c == '"').unwrap_or(0) } else { i };
                if let Some((s, end)) = read_string(chars, at) {
                    if piped_to || getline_follows(&chars[end..]) {
                        out.push((here, NestedKind::Script(Field::lit(s))));
                    }
                    i = end;
                    continue;
                }
            }
        }
        if matches!(lang, Lang::Perl | Lang::Ruby | Lang::Php | Lang::Julia)
            && c == '`'
            && let Some((s, end)) = read_string(chars, i)
        {
            out.push((here, NestedKind::Script(Field::lit(s))));
            i = end;
            continue;
        }
        if c == '%'
            && lang == Lang::Ruby
            && chars.get(i + 1) == Some(&'x')
            && let Some((s, end)) = read_delimited(chars, i + 2)
        {
            out.push((here, NestedKind::Script(Field::lit(s))));
            i = end;
            continue;
        }
        // A call written inside a string literal is text, not a call (`print("os.system(x)")`);
        // a Python f-string's braces hold code, so it is read.
        let f_string = lang == Lang::Python && i > 0 && matches!(chars[i - 1], 'f' | 'F');
        if literals
            && matches!(c, '"' | '\'')
            && !f_string
            && lang != Lang::Awk
            && let Some((_, end)) = read_string(chars, i)
        {
            skipped = true;
            i = end;
            continue;
        }
        let starts_ident = (c.is_alphabetic() || c == '_' || c == '$')
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'));
        if !starts_ident {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
            i += 1;
        }
        name.clear();
        name.extend(&chars[start..i]);
        if lang == Lang::Tcl && name == "exec" {
            // Tcl: `exec rm -rf ~` runs its words, to the end of the command.
            let end = chars[i..].iter().position(|c| matches!(c, '\n' | ';' | ']')).map_or(chars.len(), |n| i + n);
            let words: String = chars[i..end].iter().collect();
            let argv: Vec<Field> = words.split_whitespace().map(Field::lit).collect();
            if !argv.is_empty() {
                out.push((here, NestedKind::Argv(argv)));
            }
            i = end;
            continue;
        }
        if lang == Lang::Perl && name == "qx" {
            if let Some((s, end)) = read_delimited(chars, i) {
                out.push((here, NestedKind::Script(Field::lit(s))));
                i = end;
            }
            continue;
        }
        if lang == Lang::Node && name == "$" && chars.get(i) == Some(&'{') {
            // `${x}` in a template literal interpolates; zx's `$` is called as `` $`cmd` ``.
            continue;
        }
        let shell = lang.runs_shell(&name);
        if !shell && !lang.evals_code(&name) {
            if SQL_CALLS.contains(&name.as_str()) && chars.get(i) == Some(&'(') {
                let (args, end) = read_args(chars, i);
                i = end;
                out.extend(sql_sent(&name, &args).map(|k| (here, k)));
                continue;
            }
            if lang == Lang::Php
                && matches!(name.as_str(), "array_map" | "array_walk" | "call_user_func" | "call_user_func_array")
            {
                // `array_map('unlink', glob(…))`: a deleting function passed by name, in any
                // argument.
                let (_, end) = read_args(chars, i);
                let close = chars[i..].iter().position(|c| *c == ';').map_or(chars.len(), |n| i + n);
                let call: String = chars[i..close.max(end)].iter().collect();
                let named = |n: &str| call.contains(&format!("'{n}'")) || call.contains(&format!("\"{n}\""));
                if DELETES.iter().any(|(n, _)| named(n)) || named("rmdir") {
                    let what = format!("php {name}() deletes paths only known when it runs");
                    out.push((here, NestedKind::Dynamic(what)));
                }
                i = end;
                continue;
            }
            if lang == Lang::Vim && name == "delete" && chars.get(i) == Some(&'(') {
                // Vim's `delete(PATH, 'rf')` deletes a tree.
                let (args, end) = read_args(chars, i);
                let flags = if matches!(args.get(1), Some(Arg::Str(f)) if f.contains('r')) { "-rf" } else { "-f" };
                let kind = match args.first() {
                    Some(Arg::Str(p)) => {
                        NestedKind::Argv(vec![Field::lit("rm"), Field::lit(flags), Field::lit(p.clone())])
                    }
                    _ => NestedKind::Dynamic("vim delete() deletes a path only known when it runs".into()),
                };
                out.push((here, kind));
                i = end;
                continue;
            }
            if DELETES.iter().any(|(n, _)| *n == name) {
                let method = start > 0 && chars[start - 1] == '.';
                let next = chars[i..].iter().find(|c| **c != ' ');
                let passed = next.is_none_or(|c| matches!(c, ',' | ')' | ']' | ';' | '\n'));
                if method && passed && matches!(lang, Lang::Python | Lang::Node | Lang::Ruby) {
                    // `map(os.remove, files)`, `files.forEach(fs.unlinkSync)`: passed, not called.
                    let what = format!("{} passes {name} to delete paths only known when it runs", lang.name());
                    out.push((here, NestedKind::Dynamic(what)));
                    continue;
                }
                let (mut args, end) = read_args(chars, i);
                if method && args.first().is_none_or(Arg::is_keyword) {
                    // `Path('x').unlink()`, `p.unlink(missing_ok=True)`: the receiver is the path.
                    args.insert(0, receiver(chars, start - 1));
                }
                // perl's and ruby's calls need no parentheses: `unlink glob("…")`, `unlink $f`.
                let bare = chars[i..].iter().find(|c| **c != ' ');
                if args.is_empty()
                    && matches!(lang, Lang::Perl | Lang::Ruby)
                    && chars.get(i) == Some(&' ')
                    && bare.is_some_and(|c| c.is_alphanumeric() || matches!(c, '$' | '@'))
                {
                    let at = i + chars[i..].iter().take_while(|c| **c == ' ').count();
                    args.push(Arg::Other(snippet(chars, at)));
                }
                i = end;
                out.extend(deletion(lang, &name, &args).map(|k| (here, k)));
            }
            continue;
        }
        let (args, end) = read_args(chars, i);
        i = end;
        let found = match args.as_slice() {
            [] => continue,
            _ if !shell => match &args[0] {
                Arg::Str(s) => NestedKind::Code(lang, Field::lit(s.clone())),
                _ => NestedKind::Dynamic(format!("{} {name}() runs code only known when it runs", lang.name())),
            },
            [Arg::Str(s)] if !name.starts_with("exec") || matches!(name.as_str(), "exec" | "execSync" | "execute") => {
                NestedKind::Script(Field::lit(s.clone()))
            }
            [Arg::Str(s), Arg::List(l), ..] => NestedKind::Argv(
                std::iter::once(s).chain(l.iter().skip(usize::from(l.first() == Some(s)))).map(Field::lit).collect(),
            ),
            [Arg::List(l), ..] if !l.is_empty() => NestedKind::Argv(l.iter().map(Field::lit).collect()),
            all if all.iter().all(|a| matches!(a, Arg::Str(_))) => NestedKind::Argv(
                all.iter()
                    .filter_map(|a| if let Arg::Str(s) = a { Some(Field::lit(s.clone())) } else { None })
                    .collect(),
            ),
            // `exec "rm", "-rf", $ENV{HOME}`: a list form with computed words.
            [Arg::Str(_), rest @ ..]
                if matches!(lang, Lang::Perl | Lang::Ruby)
                    && !rest.is_empty()
                    && rest.iter().all(|a| !matches!(a, Arg::List(_)) && !a.is_keyword()) =>
            {
                NestedKind::Argv(
                    args.iter()
                        .map(|a| match a {
                            Arg::Str(s) => Field::lit(s.clone()),
                            Arg::Other(t) if home_expr(t) => Field::lit("~"),
                            Arg::Other(t) => Field { text: t.clone(), dynamic: true },
                            Arg::List(_) => unreachable!("excluded above"),
                        })
                        .collect(),
                )
            }
            [Arg::Str(s), ..] => NestedKind::Script(Field::lit(s.clone())),
            [first, ..] => {
                let what = match first {
                    Arg::Other(t) => t.clone(),
                    _ => "a computed value".into(),
                };
                NestedKind::Dynamic(format!("{} {name}({what}) runs a command only known when it runs", lang.name()))
            }
        };
        out.push((here, found));
    }
    (out, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_in_literals_ask_and_comments_do_not_hide_code() {
        let kinds = |lang, code| {
            extract(lang, code).into_iter().map(|k| matches!(k, NestedKind::Possible(_))).collect::<Vec<_>>()
        };
        // An apostrophe in a comment does not start a string that hides the call after it.
        assert_eq!(kinds(Lang::Python, "# don't\nimport os; os.system('rm -rf ~')"), [false]);
        assert_eq!(kinds(Lang::Node, "// it's\nrequire('child_process').execSync('rm -rf ~')"), [false]);
        // A call inside a string literal, or behind a quote the scanner misjudged, asks.
        assert_eq!(kinds(Lang::Python, "print('os.system(\"rm -rf ~\")')"), [true]);
        assert_eq!(kinds(Lang::Node, "s.replace(/'/g, ''); require('child_process').execSync('rm -rf ~')"), [true]);
    }

    fn scripts(lang: Lang, code: &str) -> Vec<String> {
        extract(lang, code)
            .into_iter()
            .map(|k| match k {
                NestedKind::Script(f) => f.text,
                NestedKind::Argv(v) => v.into_iter().map(|f| f.text).collect::<Vec<_>>().join(" "),
                NestedKind::Code(_, f) => format!("code: {}", f.text),
                NestedKind::Dynamic(d) => format!("dynamic: {d}"),
                NestedKind::Possible(_) => "possible".to_string(),
                NestedKind::File(f, _) => format!("file: {f}"),
            })
            .collect()
    }

    #[test]
    fn finds_shell_outs() {
        assert_eq!(scripts(Lang::Python, "import os; os.system('rm -rf ~')"), ["rm -rf ~"]);
        assert_eq!(scripts(Lang::Python, "import subprocess; subprocess.run(['rm', '-rf', '/'])"), ["rm -rf /"]);
        assert_eq!(
            scripts(Lang::Python, r#"import subprocess as s; s.call("git push -f", shell=True)"#),
            ["git push -f"]
        );
        assert_eq!(scripts(Lang::Python, "exec(\"import os; os.system('x')\")"), ["code: import os; os.system('x')"]);
        assert_eq!(scripts(Lang::Perl, r#"system "rm -rf /tmp/x""#), ["rm -rf /tmp/x"]);
        assert_eq!(scripts(Lang::Perl, "print `git reset --hard`"), ["git reset --hard"]);
        assert_eq!(scripts(Lang::Perl, "qx(ls)"), ["ls"]);
        assert_eq!(scripts(Lang::Ruby, "%x(ls -la)"), ["ls -la"]);
        assert_eq!(scripts(Lang::Node, "require('child_process').execSync('rm -rf ~')"), ["rm -rf ~"]);
        assert_eq!(scripts(Lang::Node, "require('child_process').spawn('rm', ['-rf', '/'])"), ["rm -rf /"]);
        assert_eq!(scripts(Lang::Php, r#"shell_exec("rm -rf ~");"#), ["rm -rf ~"]);
        assert!(scripts(Lang::Python, "import os; os.system(cmd)")[0].starts_with("dynamic"));
        assert!(scripts(Lang::Python, "print('system is fine')").is_empty());
        assert!(scripts(Lang::Node, "console.log(`home ${process.env.HOME}`)").is_empty());
        assert_eq!(
            scripts(Lang::Node, "$`rm -rf ~`; f(`${require('child_process').execSync('ls')}`)"),
            ["rm -rf ~", "ls"]
        );
    }

    #[test]
    fn finds_awk_shell_outs() {
        assert_eq!(scripts(Lang::Awk, r#"BEGIN { system("rm -rf ~") }"#), ["rm -rf ~"]);
        assert_eq!(scripts(Lang::Awk, r#"{ print $0 | "sh" }"#), ["sh"]);
        assert_eq!(scripts(Lang::Awk, r#"BEGIN { "date" | getline d }"#), ["date"]);
        assert!(scripts(Lang::Awk, r#"{ print "system" }"#).is_empty());
    }
}
