//! Reading script text, the top-level command or a nested script: the work budget, the check
//! that normalization would not change its syntax, and one parse and walk per dialect (two when
//! the shell may be bash or dash and the text holds a construct they read differently, the
//! findings of both kept).

use super::analyze::Analyzer;
use super::dialect::Dialect;
use super::{IssueKind, MAX_PARSED_BYTES};

impl Analyzer {
    /// Parses and walks script text (top level or nested) in `dialect`; with `Both`, as bash
    /// reads it and, if any construct in it reads differently in dash, as dash reads it too.
    pub(super) fn script_in(&mut self, text: &str, dialect: Dialect) {
        if self.exhausted {
            return;
        }
        if self.parsed + text.len() > MAX_PARSED_BYTES {
            self.exhaust(format!(
                "the command and its nested scripts hold more than {MAX_PARSED_BYTES} bytes of shell text to read"
            ));
            return;
        }
        self.parsed += text.len();
        if let Some(hazard) = super::normalize::syntax_hazard(text) {
            self.issue(IssueKind::Unparseable, format!("{hazard}{}", self.place()));
        }
        if self.possible.is_some() {
            self.out.possible_lines.push(self.out.lines.len());
        }
        let mut line = self.out.spare.texts.pop().unwrap_or_default();
        line.push_str(&super::normalized(text));
        self.out.lines.push(line);
        let (outer, outer_sensitive) = (self.dialect, std::mem::take(&mut self.sensitive));
        match dialect {
            Dialect::Both => {
                self.dialect = Dialect::Bash;
                let before = (self.out.segments.len(), self.out.pipelines.len());
                self.read(text, false);
                if self.sensitive && !self.exhausted {
                    self.dialect = Dialect::Dash;
                    let between = (self.out.segments.len(), self.out.pipelines.len());
                    let outer_second = std::mem::replace(&mut self.second, true);
                    self.read(text, true);
                    self.second = outer_second;
                    self.drop_repeats(before, between);
                }
            }
            d => {
                self.dialect = d;
                self.read(text, false);
            }
        }
        self.dialect = outer;
        self.sensitive |= outer_sensitive;
    }

    /// After a second reading, drops what it found that the first already had.
    fn drop_repeats(&mut self, first: (usize, usize), second: (usize, usize)) {
        let seen: std::collections::HashSet<(String, String)> =
            self.out.segments[first.0..second.0].iter().map(|s| (s.text.clone(), s.origin.clone())).collect();
        let mut i = second.0;
        while i < self.out.segments.len() {
            let s = &self.out.segments[i];
            if seen.contains(&(s.text.clone(), s.origin.clone())) {
                self.out.segments.remove(i);
            } else {
                self.out.segments[i].notes.push("as dash reads the text (bash reads it otherwise)".into());
                i += 1;
            }
        }
        let pipes: std::collections::HashSet<String> = self.out.pipelines[first.1..second.1].iter().cloned().collect();
        let mut j = second.1;
        while j < self.out.pipelines.len() {
            if pipes.contains(&self.out.pipelines[j]) {
                self.out.pipelines.remove(j);
            } else {
                j += 1;
            }
        }
    }

    /// ` (in bash -c)` when inside a nested script, for messages.
    fn place(&self) -> String {
        match self.origin.last() {
            Some(o) => format!(" (in {o})"),
            None => String::new(),
        }
    }

    /// One reading of script text in the current dialect. `second`: bash has read it already,
    /// and this is dash's reading.
    fn read(&mut self, text: &str, second: bool) {
        match super::parse::parse_reusing(text, self.dialect, &mut self.out.spare) {
            Ok((script, sensitive)) => {
                self.sensitive |= sensitive;
                self.walk_script(&script);
                script.recycle(&mut self.out.spare);
            }
            Err(e) => {
                // Both shells run each complete line before they parse the next: the lines
                // before the one that does not parse run (`rm -rf /` then an open quote), and
                // are judged. In dash's second reading (of this text, or of a script nested in
                // it), a line only bash reads (`diff <(a) <(b)`) runs nothing, so only those
                // lines count; an error in both readings was reported by bash's.
                // Over a limit (depth, commands) too: the lines before it still run.
                self.walk_lines_before(text, e.complete);
                if !second && !self.second {
                    self.unparseable(&e);
                }
            }
        }
    }

    /// Walks the complete lines before the one that does not parse (up to char offset `upto`).
    /// Cut there, a here-document can lose its end: then the lines before that are tried.
    fn walk_lines_before(&mut self, text: &str, mut upto: usize) {
        let mut text = text;
        for _ in 0..8 {
            let end = text.char_indices().nth(upto).map_or(text.len(), |(i, _)| i);
            let prefix = &text[..end];
            if prefix.trim().is_empty() || self.parsed + prefix.len() > MAX_PARSED_BYTES {
                return;
            }
            self.parsed += prefix.len();
            match super::parse::parse_in(prefix, self.dialect) {
                Ok((script, _)) => return self.walk_script(&script),
                Err(e) if e.complete < upto => (text, upto) = (prefix, e.complete),
                Err(_) => return,
            }
        }
    }

    fn unparseable(&mut self, e: &super::parse::ParseError) {
        if e.limit {
            return self.exhaust(format!("the command{} holds {}", self.place(), e.message));
        }
        let dialect = if self.sensitive { format!(" as {} reads it", self.dialect.name()) } else { String::new() };
        self.issue(
            IssueKind::Unparseable,
            format!("cannot parse the command{}{dialect}: {} at character {}", self.place(), e.message, e.offset + 1),
        );
    }
}
