//! What the prompt draws: the request's fields wrapped to the terminal, the choices, the
//! countdown. A command is shown escaped, wrapped to the terminal, with the part a rule
//! matched highlighted; a long command is cut in the middle around that part, and the part
//! itself is shown first, so the reason to stop never scrolls out of view.

use std::time::Duration;

use super::Request;
use crate::term::{escape, paint};

/// Commands longer than this (in characters) are shown cut, with the matched part first.
pub const LONG: usize = 300;

/// The prompt's style: colour or not, decided once per prompt.
#[derive(Clone, Copy)]
pub struct Style {
    pub colour: bool,
}

impl Style {
    pub fn header(self, text: &str) -> String {
        paint("1;33", text, self.colour) // ask: bold yellow
    }
    pub fn approved(self, text: &str) -> String {
        paint("32", text, self.colour)
    }
    pub fn denied(self, text: &str) -> String {
        paint("1;31", text, self.colour)
    }
    fn matched(self, text: &str) -> String {
        // Reverse video reads as "this part" on every palette; without colour, brackets do.
        if self.colour { format!("\x1b[7m{text}\x1b[27m") } else { text.to_string() }
    }
}

/// Characters of `raw` (escaped one by one), each marked if it lies in one of `spans` (byte
/// ranges of `raw`).
fn marked(raw: &str, spans: &[(usize, usize)]) -> Vec<(char, bool)> {
    let mut out = Vec::with_capacity(raw.len());
    for (at, c) in raw.char_indices() {
        let hit = spans.iter().any(|&(s, e)| at >= s && at < e);
        out.extend(escape(c.encode_utf8(&mut [0; 4])).chars().map(|e| (e, hit)));
    }
    out
}

/// `raw`, escaped and wrapped to `width` columns, the characters in `spans` highlighted.
pub fn command_lines(raw: &str, spans: &[(usize, usize)], width: usize, style: Style) -> Vec<String> {
    let chars = marked(raw, spans);
    let plain: String = chars.iter().map(|(c, _)| *c).collect();
    let mut next = 0;
    let mut out = Vec::new();
    for line in wrap(&plain, width) {
        let mut shown = String::new();
        let mut run = String::new();
        let mut in_hit = false;
        for c in line.chars() {
            // `wrap` drops only the spaces it breaks at: step over them.
            while next < chars.len() && chars[next].0 != c {
                next += 1;
            }
            let hit = chars.get(next).is_some_and(|(_, h)| *h);
            next += 1;
            if hit != in_hit {
                shown.push_str(&if in_hit { style.matched(&run) } else { std::mem::take(&mut run) });
                run.clear();
                in_hit = hit;
            }
            run.push(c);
        }
        shown.push_str(&if in_hit { style.matched(&run) } else { run });
        out.push(shown);
    }
    out
}

/// What the prompt shows of `command`: the text (cut in the middle if long) and the byte spans
/// in it to highlight; and, for a long command, the matched parts to show first.
pub fn shown(command: &str, matched: &[(usize, usize)]) -> (String, Vec<(usize, usize)>, Vec<String>) {
    let parts: Vec<String> = matched.iter().map(|&(s, e)| command[s..e].to_string()).collect();
    if command.chars().count() <= LONG {
        return (command.to_string(), matched.to_vec(), Vec::new());
    }
    let cut = crate::report::bounded_around(command, matched.first().copied(), LONG);
    let spans = parts.iter().filter_map(|p| cut.find(p.as_str()).map(|s| (s, s + p.len()))).collect();
    (cut, spans, parts)
}

/// Breaks `text` into lines of at most `width` characters, at spaces where it can, and never
/// drops a character: a long command is wrapped, not truncated.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let wlen = word.chars().count();
        if len > 0 && len + 1 + wlen > width {
            lines.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        for c in word.chars() {
            if len == width {
                lines.push(std::mem::take(&mut line));
                len = 0;
            }
            line.push(c);
            len += 1;
        }
    }
    lines.push(line);
    lines
}

pub(super) fn field(out: &mut String, label: &str, value: &str, width: usize) {
    const INDENT: usize = 11;
    let lines = wrap(value, width.saturating_sub(INDENT + 1));
    for (i, l) in lines.iter().enumerate() {
        let head = if i == 0 { format!("  {label:<8} ") } else { " ".repeat(INDENT) };
        out.push_str(&head);
        out.push_str(l);
        out.push_str("\r\n");
    }
}

fn field_width(width: usize) -> usize {
    width.saturating_sub(12)
}

/// A field whose value is already wrapped (and styled).
fn lines_field(out: &mut String, label: &str, lines: &[String]) {
    for (i, l) in lines.iter().enumerate() {
        let head = if i == 0 { format!("  {label:<8} ") } else { " ".repeat(11) };
        out.push_str(&head);
        out.push_str(l);
        out.push_str("\r\n");
    }
}

pub(super) fn render(req: &Request<'_>, width: usize, style: Style) -> String {
    let mut out = format!("\r\n{}\r\n", style.header("cmdguard: approval needed"));
    let (text, spans, first) = shown(req.command, &req.matched);
    // A long command's matched part comes first, so it stays on the screen.
    for part in &first {
        lines_field(&mut out, "matched", &command_lines(part, &[(0, part.len())], field_width(width), style));
    }
    lines_field(&mut out, "command", &command_lines(&text, &spans, field_width(width), style));
    field(&mut out, "in", &escape(req.cwd), width);
    let session = match req.session_key {
        Some(k) => escape(k),
        None => "none given (--session-key), so `s` is not offered".into(),
    };
    field(&mut out, "session", &session, width);
    for r in &req.rules {
        field(&mut out, "rule", &format!("{}: {}", escape(&r.id), escape(&r.reason)), width);
        if let Some(tip) = &r.tip {
            field(&mut out, "safer", &escape(tip), width);
        }
    }
    for (id, detail) in &req.concerns {
        field(&mut out, "unclear", &format!("{id}: {}", escape(detail)), width);
    }
    for n in req.notices {
        field(&mut out, "note", n, width);
    }
    if let Some(why) = req.no_always {
        field(&mut out, "always", &format!("not offered: {why}"), width);
    } else if let Some(at) = req.always_at {
        field(&mut out, "always", &format!("covers this command only where it runs: {}", escape(at)), width);
    }
    if let Some(stake) = req.stake {
        field(&mut out, "at stake", &escape(stake), width);
    }
    out.push_str(&choices(req, width, true));
    out
}

pub(super) fn choices(req: &Request<'_>, width: usize, always: bool) -> String {
    let mut items = vec!["[o] once"];
    if req.session_key.is_some() {
        items.push("[s] this session");
    }
    if req.no_always.is_none() && always {
        items.push("[a] always (asks for a code)");
    }
    items.extend(["[d] deny", "[r] deny with a reason", "[e] explain"]);
    let mut out = String::new();
    for l in wrap(&items.join("  "), width.saturating_sub(3)) {
        out.push_str("  ");
        out.push_str(&l);
        out.push_str("\r\n");
    }
    out
}

pub(super) fn countdown(left: Duration, width: usize) -> String {
    let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    let mut line = format!("  {secs}s left, then deny: press a key");
    line.truncate(width.saturating_sub(1));
    format!("\r\x1b[K{line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlighting_follows_the_match_across_wrapped_lines_and_escapes() {
        let on = Style { colour: true };
        let lines = command_lines("echo a; git push --force origin", &[(8, 24)], 16, on);
        let joined = lines.join("|");
        assert!(joined.contains("\x1b[7mgit push\x1b[27m"), "{joined:?}");
        assert!(joined.contains("\x1b[7m--force\x1b[27m"), "{joined:?}");
        assert!(!joined.contains("\x1b[7mecho"), "{joined:?}");
        let escaped = command_lines("rm \x1b[2J -rf", &[(0, 2)], 80, on).join("");
        assert_eq!(escaped, "\x1b[7mrm\x1b[27m \\x1b[2J -rf");
        let off = command_lines("git push --force", &[(0, 16)], 80, Style { colour: false });
        assert_eq!(off, ["git push --force"]);
    }

    #[test]
    fn a_long_command_keeps_its_matched_part() {
        let cmd = format!("echo {}; git push --force; echo {}", "a".repeat(2000), "b".repeat(2000));
        let at = cmd.find("git push").unwrap();
        let (cut, spans, first) = shown(&cmd, &[(at, at + 16)]);
        assert!(cut.chars().count() < LONG + 60, "{}", cut.len());
        assert_eq!(&cut[spans[0].0..spans[0].1], "git push --force");
        assert_eq!(first, ["git push --force"]);
    }
}
