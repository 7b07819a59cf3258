//! Text normalization for matching: terminal escape sequences and NUL bytes removed, Unicode
//! NFKC-normalized (fullwidth `ｒｍ` reads as `rm`). It applies to the words rules see, after
//! parsing; the parser reads the exact text the shell reads. Text where normalization would
//! change shell syntax (a fullwidth `＃` that would read as a comment sign, an escape sequence
//! that swallows a quote) is a hazard the analysis reports, and the command asks.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// Whether `text` holds anything normalization changes. One plain pass: the first call into the
/// `memchr` crate probes the CPU's features (`cpuid`, which traps to the hypervisor on a virtual
/// machine), and on the wrapper's path for a command no rule could match this was the only one.
pub fn needs_normalizing(text: &str) -> bool {
    // No early exit: the loop vectorizes, and nearly every text is read to its end anyway.
    text.bytes().fold(false, |found, b| found | (b >= 0x80) | (b == 0) | (b == 0x1b))
}

pub fn normalize(text: &str) -> String {
    normalized(text).into_owned()
}

/// `normalize` without a copy of text that needs none (nearly all of it).
pub fn normalized(text: &str) -> Cow<'_, str> {
    if !needs_normalizing(text) {
        return Cow::Borrowed(text);
    }
    let stripped = strip_escapes(text);
    Cow::Owned(if stripped.is_ascii() { stripped } else { stripped.nfkc().collect() })
}

fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\0' => {}
            '\x1b' | '\u{9b}' => swallow(c, &mut chars, |_| {}),
            c => out.push(c),
        }
    }
    out
}

/// Consumes the rest of the escape sequence that `intro` (ESC or CSI) starts, as a terminal
/// reads it, handing each character it swallows to `eaten`.
fn swallow(intro: char, chars: &mut std::iter::Peekable<std::str::Chars<'_>>, mut eaten: impl FnMut(char)) {
    let mut csi = intro == '\u{9b}';
    if !csi {
        match chars.next() {
            None => return,
            // The introducer `[` is not counted: glob syntax that a terminal hides matters less
            // than a quote or separator, and colour codes (`ESC[0m`) would all ask.
            Some('[') => csi = true,
            Some(k @ (']' | 'P' | '_' | '^')) => {
                eaten(k);
                // OSC/DCS/APC/PM: up to BEL or ESC \.
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.peek() == Some(&'\\')) {
                        if c == '\x1b' {
                            chars.next();
                        }
                        return;
                    }
                    eaten(c);
                }
                return;
            }
            Some(k) => {
                eaten(k);
                return;
            }
        }
    }
    if csi {
        for c in chars.by_ref() {
            eaten(c);
            if ('\x40'..='\x7e').contains(&c) {
                break;
            }
        }
    }
}

/// Characters that are shell syntax outside quotes.
const SYNTAX: &str = " \t\n;&|<>()'\"\\$`#{}[]*?!~=";

/// Where normalization would alter shell syntax: a NUL byte (the shell never sees what follows
/// it), an escape sequence that swallows a quote or separator, or a character whose normalized
/// form is one (`＃`, `；`, a no-break space). Quoting is tracked roughly, so a character inside
/// quotes counts only if it could end them. `None` when there is no such place.
pub fn syntax_hazard(text: &str) -> Option<String> {
    if !needs_normalizing(text) {
        return None;
    }
    #[derive(PartialEq)]
    enum Q {
        None,
        Single,
        Double,
    }
    let matters = |q: &Q, c: char| match q {
        Q::None => SYNTAX.contains(c),
        Q::Single => c == '\'',
        Q::Double => matches!(c, '"' | '$' | '`' | '\\'),
    };
    let mut q = Q::None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\0' => return Some("the command holds a NUL byte".into()),
            '\x1b' | '\u{9b}' => {
                let mut hidden = None;
                swallow(c, &mut chars, |e| {
                    if hidden.is_none() && matters(&q, e) {
                        hidden = Some(e);
                    }
                });
                if let Some(e) = hidden {
                    return Some(format!("a terminal escape sequence hides the shell syntax `{}`", e.escape_default()));
                }
            }
            '\\' if q != Q::Single => {
                chars.next();
            }
            '\'' if q == Q::None => q = Q::Single,
            '\'' if q == Q::Single => q = Q::None,
            '"' if q == Q::None => q = Q::Double,
            '"' if q == Q::Double => q = Q::None,
            c if !c.is_ascii() => {
                let n: String = std::iter::once(c).nfkc().collect();
                if let Some(s) = n.chars().find(|&s| matters(&q, s)) {
                    return Some(format!(
                        "`{}` (U+{:04X}) reads as the shell syntax `{}` once normalized",
                        c.escape_default(),
                        c as u32,
                        s.escape_default()
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{normalize, syntax_hazard};

    #[test]
    fn finds_normalization_that_alters_syntax() {
        for bad in ["echo ＃; rm -rf ~", "echo 'a\x1b' ; rm -rf ~", "rm\u{a0}-rf ~", "a\0b", "echo \x1b[1;31m"] {
            assert!(syntax_hazard(bad).is_some(), "{bad:?}");
        }
        for ok in ["ｒｍ -rf ~", "git commit -m 'a\u{a0}b'", "echo \x1b[0m", "ls", "echo 'é ü'"] {
            assert_eq!(syntax_hazard(ok), None, "{ok:?}");
        }
    }

    #[test]
    fn normalizes_for_matching() {
        let cases = [
            ("rm -rf ~", "rm -rf ~"),
            ("r\x1b[0mm -rf ~", "rm -rf ~"),
            ("r\x1b]0;title\x07m", "rm"),
            ("r\0m", "rm"),
            ("ｒｍ　-rf ~", "rm -rf ~"),
            ("git\u{9b}31m push", "git push"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input), want, "{input:?}");
        }
    }
}
