//! Commands inside the text a program is given in its own language: lines that start with a
//! key that runs the rest (psql's `\!`, vim's `:!`), `KEY=COMMAND` option values (`ssh -o
//! ProxyCommand=…`), commands quoted after a phrase (`COPY … FROM PROGRAM 'CMD'`), and keys typed
//! into a shell (`screen -X stuff 'CMD\n'`).

use super::Field;
use super::catalog::Program;

/// The shell commands lines of `text` run through one of `keys` (`\! rm -rf ~` in psql).
pub fn keyed_lines(text: &str, keys: &[&'static str]) -> Vec<(&'static str, String)> {
    if keys.is_empty() {
        return Vec::new();
    }
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
pub(super) fn keyed_command<'a>(value: &'a str, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
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
