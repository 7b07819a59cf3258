//! The editors' own languages where they run commands: Emacs Lisp forms (`shell-command`,
//! `call-process`, `delete-directory`) read from `emacs --eval`, and Vim script lines that
//! start a shell (`!CMD`, `:terminal CMD`). Calls with literal arguments become the command
//! of the same effect; other arguments are dynamic.

use super::Field;
use super::nested::NestedKind;

/// One element of a Lisp form as read here.
enum Sexp {
    Str(String),
    Sym(String),
    List(Vec<Sexp>),
}

/// Most forms read from one piece of code (a guard against pathological input).
const MAX_FORMS: usize = 4096;

/// Reads every form in `code`, nested ones included, flattened in reading order.
fn read_all(code: &str) -> Vec<Vec<Sexp>> {
    let chars: Vec<char> = code.chars().collect();
    let mut forms = Vec::new();
    let mut i = 0;
    while i < chars.len() && forms.len() < MAX_FORMS {
        if chars[i] == '(' {
            let (sexp, end) = read(&chars, i, &mut forms);
            if let Sexp::List(items) = sexp {
                forms.push(items);
            }
            i = end;
        } else if chars[i] == ';' {
            i = chars[i..].iter().position(|c| *c == '\n').map_or(chars.len(), |n| i + n);
        } else if chars[i] == '"' {
            i = read_str(&chars, i).1;
        } else {
            i += 1;
        }
    }
    forms
}

/// One form at `i`; the lists inside it are pushed to `inner` as well.
fn read(chars: &[char], i: usize, inner: &mut Vec<Vec<Sexp>>) -> (Sexp, usize) {
    match chars.get(i) {
        Some('(') => {
            let mut items = Vec::new();
            let mut j = i + 1;
            loop {
                while chars.get(j).is_some_and(|c| c.is_whitespace() || *c == '\'' || *c == '`' || *c == ',') {
                    j += 1;
                }
                match chars.get(j) {
                    None => return (Sexp::List(items), j),
                    Some(')') => return (Sexp::List(items), j + 1),
                    Some(_) => {
                        let (item, end) = read(chars, j, inner);
                        if let Sexp::List(l) = &item
                            && inner.len() < MAX_FORMS
                        {
                            inner.push(l.iter().map(shallow).collect());
                        }
                        items.push(item);
                        j = end.max(j + 1);
                    }
                }
            }
        }
        Some('"') => {
            let (s, end) = read_str(chars, i);
            (Sexp::Str(s), end)
        }
        _ => {
            let end = chars[i..]
                .iter()
                .position(|c| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
                .map_or(chars.len(), |n| i + n);
            (Sexp::Sym(chars[i..end].iter().collect()), end)
        }
    }
}

/// A copy of an element for the flattened list (a nested list is kept only as a marker).
fn shallow(s: &Sexp) -> Sexp {
    match s {
        Sexp::Str(t) => Sexp::Str(t.clone()),
        Sexp::Sym(t) => Sexp::Sym(t.clone()),
        Sexp::List(_) => Sexp::List(Vec::new()),
    }
}

fn read_str(chars: &[char], i: usize) -> (String, usize) {
    let mut s = String::new();
    let mut j = i + 1;
    while j < chars.len() {
        match chars[j] {
            '"' => return (s, j + 1),
            '\\' if j + 1 < chars.len() => {
                s.push(match chars[j + 1] {
                    'n' => '\n',
                    't' => '\t',
                    c => c,
                });
                j += 2;
            }
            c => {
                s.push(c);
                j += 1;
            }
        }
    }
    (s, j)
}

/// What Emacs Lisp code runs or deletes.
pub fn elisp(code: &str) -> Vec<NestedKind> {
    let mut out = Vec::new();
    let forms = read_all(code);
    if forms.len() >= MAX_FORMS {
        // The forms past the limit are not read: what they run is not known.
        out.push(NestedKind::Dynamic(format!("elisp code of more than {MAX_FORMS} forms")));
    }
    for form in forms {
        let Some(Sexp::Sym(head)) = form.first() else { continue };
        let args = &form[1..];
        let dynamic = |what: &str| NestedKind::Dynamic(format!("elisp ({head} …) {what} only known when it runs"));
        let kind = match head.as_str() {
            "shell-command"
            | "shell-command-to-string"
            | "async-shell-command"
            | "call-process-shell-command"
            | "process-file-shell-command" => match args.first() {
                Some(Sexp::Str(cmd)) => NestedKind::Script(Field::lit(cmd.clone())),
                _ => dynamic("runs a command"),
            },
            "start-process-shell-command" => match args.get(2) {
                Some(Sexp::Str(cmd)) => NestedKind::Script(Field::lit(cmd.clone())),
                _ => dynamic("runs a command"),
            },
            // (call-process PROGRAM INFILE DESTINATION DISPLAY ARGS…), (start-process NAME
            // BUFFER PROGRAM ARGS…), (process-lines PROGRAM ARGS…).
            "call-process" | "process-file" => {
                argv(args.first(), args.get(4..)).unwrap_or_else(|| dynamic("runs a program"))
            }
            "start-process" | "make-process" => {
                argv(args.get(2), args.get(3..)).unwrap_or_else(|| dynamic("runs a program"))
            }
            "process-lines" => argv(args.first(), args.get(1..)).unwrap_or_else(|| dynamic("runs a program")),
            "delete-directory" | "delete-file" | "f-delete" => {
                let recursive =
                    head != "delete-file" && args.get(1).is_some_and(|a| !matches!(a, Sexp::Sym(s) if s == "nil"));
                let flag = if recursive { "-rf" } else { "-f" };
                match args.first() {
                    Some(Sexp::Str(path)) => {
                        NestedKind::Argv(vec![Field::lit("rm"), Field::lit(flag), Field::lit(path.clone())])
                    }
                    _ => dynamic("deletes a path"),
                }
            }
            _ => continue,
        };
        out.push(kind);
    }
    out
}

/// A program and its literal arguments; `None` when the program is not a literal.
fn argv(program: Option<&Sexp>, args: Option<&[Sexp]>) -> Option<NestedKind> {
    let Some(Sexp::Str(program)) = program else { return None };
    let mut words = vec![Field::lit(program.clone())];
    for a in args.unwrap_or(&[]) {
        words.push(match a {
            Sexp::Str(s) => Field::lit(s.clone()),
            Sexp::Sym(s) => Field { text: s.clone(), dynamic: true },
            Sexp::List(_) => Field { text: "(…)".into(), dynamic: true },
        });
    }
    Some(NestedKind::Argv(words))
}

/// Vim script lines that start a shell: `!CMD`, `:!CMD`, `terminal CMD` (after `:` and
/// `silent`), as the `execute` of a literal writes them.
pub fn vim_lines(code: &str) -> Vec<NestedKind> {
    let mut out = Vec::new();
    for line in code.lines() {
        let mut l = line.trim();
        // `execute "!cmd"`: the string is the Ex command.
        if l.len() >= 2 && (l.starts_with('"') && l.ends_with('"') || l.starts_with('\'') && l.ends_with('\'')) {
            l = &l[1..l.len() - 1];
        }
        let mut l = l.trim_start_matches(':').trim_start();
        for prefix in ["silent!", "silent"] {
            l = l.strip_prefix(prefix).map_or(l, str::trim_start);
        }
        let cmd = l
            .strip_prefix('!')
            .or_else(|| ["terminal", "term"].iter().find_map(|k| l.strip_prefix(k).filter(|r| r.starts_with(' '))));
        if let Some(cmd) = cmd.map(str::trim).filter(|c| !c.is_empty()) {
            out.push(NestedKind::Script(Field::lit(cmd)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(kinds: Vec<NestedKind>) -> Vec<String> {
        kinds
            .into_iter()
            .map(|k| match k {
                NestedKind::Script(f) => f.text,
                NestedKind::Argv(v) => v.into_iter().map(|f| f.text).collect::<Vec<_>>().join(" "),
                NestedKind::Dynamic(d) => format!("dynamic: {d}"),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn elisp_past_the_form_limit_asks() {
        let code = "()".repeat(MAX_FORMS + 4) + "(shell-command \"rm -rf ~\")";
        assert!(elisp(&code).iter().any(|k| matches!(k, NestedKind::Dynamic(_))));
    }

    #[test]
    fn elisp_calls_read_as_commands() {
        assert_eq!(shown(elisp(r#"(shell-command "rm -rf ~")"#)), ["rm -rf ~"]);
        assert_eq!(shown(elisp(r#"(progn (delete-directory "~/src" t) (kill-emacs))"#)), ["rm -rf ~/src"]);
        assert_eq!(shown(elisp(r#"(call-process "git" nil t nil "reset" "--hard")"#)), ["git reset --hard"]);
        assert_eq!(shown(elisp(r#"(delete-file "x.elc")"#)), ["rm -f x.elc"]);
        assert!(shown(elisp(r#"(message "shell-command is fine")"#)).is_empty());
        assert!(shown(elisp("(shell-command cmd)"))[0].starts_with("dynamic"));
        assert!(shown(elisp("(org-babel-tangle-file \"README.org\")")).is_empty());
    }

    #[test]
    fn vim_lines_that_start_a_shell() {
        assert_eq!(shown(vim_lines(":terminal rm -rf ~")), ["rm -rf ~"]);
        assert_eq!(shown(vim_lines("silent !git reset --hard")), ["git reset --hard"]);
        assert_eq!(shown(vim_lines("\"!git push --force\"")), ["git push --force"]);
        assert!(shown(vim_lines("set termguicolors")).is_empty());
    }
}
