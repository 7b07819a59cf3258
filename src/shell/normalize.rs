//! Text normalization before matching: terminal escape sequences and NUL bytes removed, Unicode
//! NFKC-normalized (fullwidth `ｒｍ` reads as `rm`). This changes only what rules see; what runs
//! is exactly what was given.

use unicode_normalization::UnicodeNormalization;

pub fn normalize(text: &str) -> String {
    let needs_work = text.chars().any(|c| c == '\0' || c == '\x1b' || c == '\u{9b}' || !c.is_ascii());
    if !needs_work {
        return text.to_string();
    }
    let stripped = strip_escapes(text);
    if stripped.is_ascii() { stripped } else { stripped.nfkc().collect() }
}

fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\0' => {}
            '\x1b' => match chars.peek() {
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                Some(']') | Some('P') | Some('_') | Some('^') => {
                    chars.next();
                    // OSC/DCS/APC/PM: up to BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\x07' || (c == '\x1b' && chars.peek() == Some(&'\\')) {
                            if c == '\x1b' {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            c => out.push(c),
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\x40'..='\x7e').contains(&c) {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

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
