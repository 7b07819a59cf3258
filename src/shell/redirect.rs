//! Redirections and here-documents. A here-document body is read when its line ends; with an
//! unquoted delimiter it is parsed as double-quoted text, so its substitutions are found.

use super::ast::{Part, Redirect, Word};
use super::parse::{PResult, ParseError, Parser};

impl Parser<'_> {
    /// A redirection at the cursor, if there is one.
    pub(super) fn redirect(&mut self) -> PResult<Option<Redirect>> {
        if !self.peek().is_some_and(|c| c.is_ascii_digit() || matches!(c, '<' | '>' | '&' | '{')) {
            return Ok(None);
        }
        let start = self.pos;
        let mut fd = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            fd.push(c);
            self.pos += 1;
        }
        if fd.is_empty() && self.peek() == Some('{') {
            let close = self.src.position(self.pos, (self.pos + 64).min(self.src.len()), |c| c == '}');
            if let Some(n) = close.map(|at| at - self.pos) {
                let name = self.src.string(self.pos + 1, self.pos + n);
                let next = self.src.get(self.pos + n + 1);
                if !name.is_empty()
                    && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                    && matches!(next, Some('<' | '>'))
                {
                    fd = format!("{{{name}}}");
                    self.pos += n + 1;
                }
            }
        }
        const OPS: &[&str] = &["<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "<&", ">&", "&>", "<", ">"];
        let op = OPS.iter().copied().find(|op| self.starts_with(op));
        let op = match op {
            Some(op) if !(op == "<" || op == ">") || self.peek_at(1) != Some('(') => op,
            _ => {
                self.pos = start;
                return Ok(None);
            }
        };
        if op.starts_with('&') && (!fd.is_empty() || !self.bash()) {
            // dash has no `&>`: `a &> f` is `a &` then `> f`.
            self.pos = start;
            return Ok(None);
        }
        if op == "<<<" && !self.bash() {
            return self.err("here-strings (`<<<`) are not dash syntax");
        }
        self.pos += op.len();
        self.blanks();
        let target = self.word()?.ok_or_else(|| ParseError::at(format!("`{op}` needs a target"), self.pos))?;
        let target = if op == "<<" || op == "<<-" { self.heredoc(&target, op == "<<-")? } else { target };
        Ok(Some(Redirect { fd, op, target }))
    }

    /// Reads the body of a here-document whose delimiter word is `delim`; the body starts after
    /// the end of the current line (or after the previous body on this line).
    pub(super) fn heredoc(&mut self, delim: &Word, strip_tabs: bool) -> PResult<Word> {
        let quoted = delim.0.iter().any(|p| matches!(p, Part::Lit { quoted: true, .. }));
        let tag: String = delim
            .0
            .iter()
            .map(|p| match p {
                Part::Lit { text, .. } => text.clone(),
                _ => String::new(),
            })
            .collect();
        let (newline, mut at) = match self.heredoc_jump {
            Some(j) => j,
            None => match self.src.find(self.pos, |c| c == '\n') {
                Some(n) => (n, n + 1),
                None => return self.err(format!("here-document `{tag}` has no body")),
            },
        };
        // Lines are compared and copied in place, not collected into a `String` each: a body
        // of thousands of lines is read once per nesting level it sits in.
        let mut body = String::new();
        while at < self.src.len() {
            let end = self.src.find(at, |c| c == '\n').unwrap_or(self.src.len());
            let mut line = at;
            if strip_tabs {
                line = self.src.position(at, end, |c| c != '\t').unwrap_or(end);
            }
            at = (end + 1).min(self.src.len());
            if self.src.is(line, end, &tag) {
                break;
            }
            self.src.push_to(&mut body, line, end);
            body.push('\n');
        }
        self.heredoc_jump = Some((newline, at));
        if quoted {
            return Ok(Word::one(Part::Lit { text: body, quoted: true }));
        }
        let mut sub = self.sub(&body);
        let word = sub.dquoted_until(None)?;
        self.sensitive |= sub.sensitive;
        Ok(word)
    }
}
