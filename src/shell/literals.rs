//! Literals in interpreter code, as the calls there are given them: string literals (with
//! prefixes, escapes and triple quotes), lists of them, perl's `qw()` and `qx{}`, the arguments
//! of a call (parenthesized or bare), a method call's receiver, and expressions that name the
//! home directory. `interp` reads calls with them.

/// One argument literal: a string, or a list of strings.
pub(super) enum Arg {
    Str(String),
    List(Vec<String>),
    Other(String),
}

impl Arg {
    /// A keyword argument or an options object (`shell=True`, `exception: true`, `{cwd}`):
    /// not a word of the command.
    pub(super) fn is_keyword(&self) -> bool {
        let Arg::Other(t) = self else { return false };
        let t = t.trim_start();
        let name = t.chars().take_while(|c| c.is_alphanumeric() || *c == '_').count();
        let after = t[name..].trim_start();
        t.starts_with('{')
            || (name > 0
                && !t.starts_with(|c: char| c.is_ascii_digit())
                && ((after.starts_with('=') && !after.starts_with("=="))
                    || (after.starts_with(':') && !after.starts_with("::"))))
    }
}

/// An expression for the home directory (`$ENV{HOME}`, `os.path.expanduser('~')`,
/// `Path.home()`, `os.homedir()`): a deletion of it is `rm -rf ~`.
pub(super) fn home_expr(text: &str) -> bool {
    let t: String = text.chars().filter(|c| !c.is_whitespace() && !matches!(c, '\'' | '"' | ')')).collect();
    const HOME: &[&str] = &[
        "$ENV{HOME}",
        "os.environ[HOME]",
        "os.path.expanduser(~",
        "Path.home(",
        "pathlib.Path.home(",
        "str(Path.home(",
        "os.homedir(",
        "require(os).homedir(",
        "process.env.HOME",
        "Dir.home",
        "ENV[HOME]",
        "getenv(HOME",
        "os.getenv(HOME",
        "Sys.getenv(HOME",
        "File.expand_path(~",
        "path.expand(~",
    ];
    HOME.contains(&t.as_str())
}

/// The receiver of a method call whose `.` is at `dot` (`Path('x')` of `Path('x').unlink()`):
/// a path literal given to a path constructor, else computed.
pub(super) fn receiver(chars: &[char], dot: usize) -> Arg {
    if dot > 0 && chars[dot - 1] == ')' {
        let mut depth = 0;
        let open = (0..dot).rev().find(|&j| {
            match chars[j] {
                ')' => depth += 1,
                '(' => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        if let Some(open) = open {
            let ctor: String =
                chars[..open].iter().rev().take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '.').collect();
            let ctor: String = ctor.chars().rev().collect();
            let path_class = ["Path", "PurePath", "PosixPath", "pathlib.Path"].iter().any(|c| ctor.ends_with(c));
            if path_class
                && let (args, _) = read_args(chars, open)
                && let [Arg::Str(p)] = args.as_slice()
            {
                return Arg::Str(p.clone());
            }
            let text: String = chars[open.saturating_sub(ctor.len())..dot].iter().collect();
            return Arg::Other(text);
        }
    }
    let name: String =
        chars[..dot].iter().rev().take_while(|c| c.is_alphanumeric() || **c == '_' || **c == '.').collect();
    Arg::Other(name.chars().rev().collect())
}

/// Reads call arguments at `i`: `(a, b)` or, for perl/ruby, a bare `system "…"`.
pub(super) fn read_args(chars: &[char], mut i: usize) -> (Vec<Arg>, usize) {
    while chars.get(i).is_some_and(|c| *c == ' ') {
        i += 1;
    }
    if chars.get(i) == Some(&'{')
        && let Some(close) = chars[i..].iter().position(|c| *c == '}')
    {
        // perl's indirect object: `exec {"rm"} "rm", "-rf", …` runs the list.
        i += close + 1;
        while chars.get(i).is_some_and(|c| *c == ' ') {
            i += 1;
        }
    }
    let paren = chars.get(i) == Some(&'(');
    if paren {
        i += 1;
    } else if !matches!(chars.get(i), Some('"' | '\'' | '`' | '[')) && qw(chars, i).is_none() {
        return (Vec::new(), i);
    }
    let mut args = Vec::new();
    loop {
        while chars.get(i).is_some_and(|c| c.is_whitespace()) {
            i += 1;
        }
        match chars.get(i) {
            None | Some(')' | ';') => break,
            Some(',') => {
                i += 1;
                continue;
            }
            Some('[') => {
                let mut items = Vec::new();
                i += 1;
                loop {
                    while chars.get(i).is_some_and(|c| c.is_whitespace() || *c == ',') {
                        i += 1;
                    }
                    match chars.get(i) {
                        Some(']') => {
                            i += 1;
                            break;
                        }
                        Some(_) => match read_string(chars, i) {
                            Some((s, end)) => {
                                items.push(s);
                                i = end;
                            }
                            None => return (vec![Arg::Other(snippet(chars, i))], i),
                        },
                        None => break,
                    }
                }
                args.push(Arg::List(items));
            }
            Some(_) if qw(chars, i).is_some() => {
                let (words, end) = qw(chars, i).unwrap_or_default();
                args.push(Arg::List(words));
                i = end;
            }
            Some(_) => match read_string(chars, i) {
                Some((s, end)) => {
                    args.push(Arg::Str(s));
                    i = end;
                }
                None => {
                    args.push(Arg::Other(snippet(chars, i)));
                    break;
                }
            },
        }
        if !paren && args.len() == 1 && chars.get(i) != Some(&',') {
            break;
        }
    }
    (args, i)
}

/// perl's `qw(rm -rf x)` at `i`: its words and the index after it.
pub(super) fn qw(chars: &[char], i: usize) -> Option<(Vec<String>, usize)> {
    if chars.get(i) != Some(&'q') || chars.get(i + 1) != Some(&'w') {
        return None;
    }
    let (text, end) = read_delimited(chars, i + 2)?;
    Some((text.split_whitespace().map(str::to_string).collect(), end))
}

pub(super) fn snippet(chars: &[char], i: usize) -> String {
    chars[i..].iter().take_while(|c| !matches!(c, ')' | ',' | ';' | '\n')).take(40).collect()
}

/// A string literal at `i` (optionally prefixed `r`, `b`, `f`): its value and the index after it.
pub(super) fn read_string(chars: &[char], mut i: usize) -> Option<(String, usize)> {
    while chars.get(i).is_some_and(|c| "rbfuRBFU".contains(*c))
        && matches!(chars.get(i + 1), Some('"' | '\'' | 'r' | 'b' | 'f'))
    {
        i += 1;
    }
    let q = *chars.get(i)?;
    if !matches!(q, '"' | '\'' | '`') {
        return None;
    }
    let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    let mut s = String::new();
    while j < chars.len() {
        let c = chars[j];
        if c == q && (!triple || (chars.get(j + 1) == Some(&q) && chars.get(j + 2) == Some(&q))) {
            return Some((s, if triple { j + 3 } else { j + 1 }));
        }
        if c == '\\' && j + 1 < chars.len() {
            let e = chars[j + 1];
            match e {
                'n' => s.push('\n'),
                't' => s.push('\t'),
                _ => s.push(e),
            }
            j += 2;
            continue;
        }
        s.push(c);
        j += 1;
    }
    None
}

/// `qx(…)`, `qx{…}`, `%x(…)` and similar: text up to the matching delimiter.
pub(super) fn read_delimited(chars: &[char], i: usize) -> Option<(String, usize)> {
    let open = *chars.get(i)?;
    let close = match open {
        '(' => ')',
        '{' => '}',
        '[' => ']',
        '<' => '>',
        c if c.is_ascii_punctuation() => c,
        _ => return None,
    };
    let end = chars[i + 1..].iter().position(|&c| c == close)? + i + 1;
    Some((chars[i + 1..end].iter().collect(), end + 1))
}
