//! sed scripts: GNU sed's `e COMMAND` runs a shell command, `e` alone and the `e` flag of `s`
//! run the pattern space as one. The script (first operand, or each `-e`) is read command by
//! command, past addresses, `s` and `y` arguments and text commands, for those.

use super::Field;
use super::nested::{FileUse, Nested, NestedKind};
use super::unwrap::{Unwrapped, skip_options};

/// Finds the commands the sed script in `words` (`sed …`) runs.
pub fn read(words: &[Field], u: &mut Unwrapped) {
    let (i, opts) = skip_options(words, 1, "efl", &["--expression", "--file", "--line-length"], false);
    let mut scripts: Vec<&Field> = Vec::new();
    let given: Vec<Field> = opts
        .iter()
        .filter(|(n, _)| n == "-e" || n == "--expression")
        .filter_map(|(_, v)| v.clone().map(Field::lit))
        .collect();
    scripts.extend(given.iter());
    let from_file = opts.iter().any(|(n, _)| n == "-f" || n == "--file");
    if scripts.is_empty() && !from_file {
        scripts.extend(words.get(i));
    }
    // `sed -f FILE`: read when this command wrote FILE.
    for (_, file) in opts.iter().filter(|(n, _)| n == "-f" || n == "--file") {
        if let Some(file) = file {
            u.nested.push(Nested { origin: "sed -f".into(), kind: NestedKind::File(file.clone(), FileUse::Sed) });
        }
    }
    for script in scripts {
        for kind in commands(&script.text) {
            u.nested.push(Nested { origin: "sed".into(), kind });
        }
    }
}

/// What one sed script runs.
pub(super) fn commands(script: &str) -> Vec<NestedKind> {
    let b: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // Separators, blocks and an address (`1`, `$`, `/re/`, `\%re%`, `1,5`, `3~2`, `!`).
        while i < b.len() && (b[i].is_whitespace() || matches!(b[i], ';' | '{' | '}' | '!')) {
            i += 1;
        }
        loop {
            match b.get(i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '~' | '+' | ' ' | '!') => i += 1,
                Some('/') => i = skip_delimited(&b, i + 1, '/'),
                Some('\\') if i + 1 < b.len() => i = skip_delimited(&b, i + 2, b[i + 1]),
                _ => break,
            }
        }
        let Some(&cmd) = b.get(i) else { break };
        i += 1;
        match cmd {
            'e' => {
                let end = b[i..].iter().position(|c| *c == '\n').map_or(b.len(), |n| i + n);
                let text: String = b[i..end].iter().collect::<String>().trim().to_string();
                out.push(if text.is_empty() {
                    NestedKind::Dynamic("sed's `e` runs each input line as a command".into())
                } else {
                    NestedKind::Script(Field::lit(text))
                });
                i = end;
            }
            's' | 'y' if i < b.len() => {
                let d = b[i];
                let pattern_end = skip_delimited(&b, i + 1, d);
                let replace_end = skip_delimited(&b, pattern_end, d);
                let replacement: String =
                    b[pattern_end..replace_end.saturating_sub(1).max(pattern_end)].iter().collect();
                let flags_end = b[replace_end..]
                    .iter()
                    .position(|c| matches!(c, ';' | '\n' | '}'))
                    .map_or(b.len(), |n| replace_end + n);
                let flags: String = b[replace_end..flags_end].iter().collect();
                if cmd == 's' && flags.contains('e') {
                    out.push(NestedKind::Dynamic(
                        "sed's s///e runs each line after the substitution as a command".into(),
                    ));
                    out.push(NestedKind::Possible(Box::new(NestedKind::Script(Field::lit(replacement)))));
                }
                i = flags_end;
            }
            // Text and file name arguments run to the end of the line; `a\` text goes on
            // while its lines end in a backslash.
            'a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | 'b' | 't' | 'T' | ':' => loop {
                let end = b[i..].iter().position(|c| *c == '\n').map_or(b.len(), |n| i + n);
                let continued = matches!(cmd, 'a' | 'i' | 'c') && end > i && b[end - 1] == '\\';
                i = end;
                if !continued || i >= b.len() {
                    break;
                }
                i += 1;
            },
            _ => {}
        }
    }
    out
}

/// The index after the next unescaped `d` from `i`.
fn skip_delimited(b: &[char], mut i: usize, d: char) -> usize {
    while i < b.len() {
        if b[i] == '\\' {
            i += 2;
            continue;
        }
        if b[i] == d {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(script: &str) -> Vec<String> {
        commands(script)
            .into_iter()
            .map(|k| match k {
                NestedKind::Script(f) => f.text,
                NestedKind::Dynamic(_) => "dynamic".into(),
                NestedKind::Possible(inner) => match *inner {
                    NestedKind::Script(f) => format!("possible {}", f.text),
                    _ => "possible".into(),
                },
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn e_commands_and_flags_are_found() {
        assert_eq!(found("1e rm -rf ~"), ["rm -rf ~"]);
        assert_eq!(found("/x/e git reset --hard\np"), ["git reset --hard"]);
        assert_eq!(found("s/.*/rm -rf ~/e"), ["dynamic", "possible rm -rf ~"]);
        assert_eq!(found("s|a|b|ge;e"), ["dynamic", "possible b", "dynamic"]);
        assert!(found("s/e/E/g; 1d; /end/q").is_empty(), "e inside arguments is not the command");
        assert!(found("a\\\nexecute this\n$!d").is_empty());
        assert!(found("y/abc/efg/").is_empty());
    }
}
