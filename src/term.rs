//! The one place that prepares text for a terminal. Text from the agent is hostile: control,
//! escape and bidi characters are shown as escapes (`\x1b`, `\u{202e}`) so a command cannot
//! repaint or reorder what the user reads.

use std::fmt::Write as _;

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{00ad}')
}

/// Whether the terminal gets colour: not when `NO_COLOR` is set (no-color.org), nor when
/// `TERM` is unset or `dumb`.
pub fn has_colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::env::var_os("TERM").is_some_and(|t| !t.is_empty() && t != "dumb")
}

/// `text` in the SGR style `sgr` (`"1;33"`), or as it is when `on` is false. `text` must be
/// escaped already.
pub fn paint(sgr: &str, text: &str, on: bool) -> String {
    if on { format!("\x1b[{sgr}m{text}\x1b[0m") } else { text.to_string() }
}

/// Whether `c` is a bidi or invisible character, which `escape` shows as an escape.
pub fn is_unsafe(c: char) -> bool {
    is_bidi(c) || is_invisible(c)
}

/// `text` with every control, escape, bidi and invisible character escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        // Printable ASCII is copied in runs: a long command (a 60 KB here-document) is mostly
        // that, and going through it a character at a time cost more than analysing it.
        let plain = rest.bytes().position(|b| !(b' '..=b'~').contains(&b)).unwrap_or(rest.len());
        out.push_str(&rest[..plain]);
        rest = &rest[plain..];
        let Some(c) = rest.chars().next() else { break };
        rest = &rest[c.len_utf8()..];
        escape_char(c, &mut out);
    }
    out
}

fn escape_char(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() && (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_bidi(c) || is_invisible(c) || c.is_control() => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_what_could_repaint_the_screen() {
        assert_eq!(escape("rm -rf ~"), "rm -rf ~");
        assert_eq!(escape("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(escape("a\nb\r\u{7}"), "a\\nb\\r\\x07");
        assert_eq!(escape("\u{9b}"), "\\x9b");
        assert_eq!(escape("z\u{200b}w"), "z\\u{200b}w");
    }
}
