//! Reading one word: quoting (single, double, backslash, `$'…'`, `$"…"`), parameter expansion,
//! command substitution (`$(…)` and backticks, nested), process substitution and arithmetic.

use super::ast::{Arith, Assign, Param, Part, Parts, Script, Word};
use super::parse::{PResult, ParseError, Parser};
use super::source::Source;

#[inline]
fn is_meta(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')')
}

/// Adds literal text to a word, merging with a previous literal of the same quoting.
/// Appends one character of literal text (no allocation when it extends the last part).
fn push_char(parts: &mut Parts, c: char, quoted: bool) {
    if let Some(Part::Lit { text, quoted: q }) = parts.last_mut()
        && *q == quoted
    {
        text.push(c);
        return;
    }
    let mut text = String::with_capacity(16);
    text.push(c);
    parts.push(Part::Lit { text, quoted });
}

/// Appends the literal characters `from..to` of `src`: a word's plain stretches are copied at
/// once, not a character at a time.
/// A new part's string is an emptied one from `spare` when it has one.
fn push_run(parts: &mut Parts, src: &Source<'_>, from: usize, to: usize, quoted: bool, spare: &mut Vec<String>) {
    if let Some(Part::Lit { text, quoted: q }) = parts.last_mut()
        && *q == quoted
    {
        src.push_to(text, from, to);
        return;
    }
    let mut text = spare.pop().unwrap_or_default();
    text.reserve((to - from).max(16));
    src.push_to(&mut text, from, to);
    parts.push(Part::Lit { text, quoted });
}

/// Characters that end a plain run of an unquoted word (each has an arm in `Parser::word`):
/// one bit test, as the parser tests every character of a word's plain runs.
#[inline]
fn ends_plain(c: char) -> bool {
    (c as u32) < 128 && (ENDS_PLAIN >> (c as u32)) & 1 == 1
}

/// The characters `ends_plain` holds for, as bit `c` (all ASCII).
const ENDS_PLAIN: u128 = {
    let chars = b" \t\r\n;&|<>()\\'\"$`";
    let mut set = 0u128;
    let mut i = 0;
    while i < chars.len() {
        set |= 1 << chars[i];
        i += 1;
    }
    set
};

fn push_lit(parts: &mut Parts, s: &str, quoted: bool) {
    if let Some(Part::Lit { text, quoted: q }) = parts.last_mut()
        && *q == quoted
    {
        text.push_str(s);
        return;
    }
    parts.push(Part::Lit { text: s.to_string(), quoted });
}

/// The substitutions in text the shell expands as if double-quoted (prompt strings, arithmetic
/// operands), parsed in `dialect`.
pub fn scripts_in(text: &str, dialect: super::Dialect) -> PResult<Vec<Script>> {
    Parser::new("", dialect).scan_nested(text)
}

/// `NAME=value` (or `NAME+=value`) at the start of a simple command.
pub fn as_assignment(word: &Word) -> Option<Assign> {
    let Some(Part::Lit { text, quoted: false }) = word.0.first() else {
        return None;
    };
    // A byte loop: `str::find` sets up a memchr search, dear for a word's few bytes.
    let eq = text.bytes().position(|b| b == b'=')?;
    let append = text[..eq].ends_with('+');
    let name = text[..eq].strip_suffix('+').unwrap_or(&text[..eq]);
    let mut chars = name.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let mut value = Parts::default();
    let rest = &text[eq + 1..];
    if !rest.is_empty() {
        value.push(Part::Lit { text: rest.to_string(), quoted: false });
    }
    value.extend(word.0[1..].iter().cloned());
    Some(Assign { name: name.to_string(), value: Word(value), append })
}

impl Parser<'_> {
    /// Reads a word at the cursor; `None` if the cursor is at an operator or end of input.
    pub(super) fn word(&mut self) -> PResult<Option<Word>> {
        let mut parts = Parts::default();
        let start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.peek_at(1) == Some('(') && self.pos == start && self.bash() => {
                    self.pos += 2;
                    let script = self.subst_body()?;
                    parts.push(Part::Proc { dir: c, script });
                }
                '(' if matches!(parts.last(), Some(Part::Lit { text, quoted: false }) if text.ends_with('='))
                    && as_assignment(&Word(parts.clone())).is_some()
                    && self.bash() =>
                {
                    self.pos += 1;
                    parts.push(Part::Array(self.array_items()?));
                }
                c if is_meta(c) => break,
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(n) => {
                        push_char(&mut parts, n, true);
                        self.pos += 2;
                    }
                    None => {
                        push_lit(&mut parts, "\\", false);
                        self.pos += 1;
                    }
                },
                '\'' => {
                    self.pos += 1;
                    let Some(end) = self.src.find(self.pos, |c| c == '\'') else {
                        return self.err("unterminated single quote");
                    };
                    let text = self.src.string(self.pos, end);
                    self.pos = end + 1;
                    parts.push(Part::Lit { text, quoted: true });
                }
                '"' => {
                    self.pos += 1;
                    let inner = self.dquoted_until(Some('"'))?;
                    if inner.0.is_empty() {
                        parts.push(Part::Lit { text: String::new(), quoted: true });
                    }
                    for p in inner.0 {
                        match p {
                            Part::Lit { text, quoted } => push_lit(&mut parts, &text, quoted),
                            other => parts.push(other),
                        }
                    }
                }
                '$' => self.dollar(&mut parts, false)?,
                '`' => {
                    let script = self.backtick()?;
                    parts.push(Part::Subst { script, quoted: false });
                }
                _ => {
                    let end = self.src.find(self.pos, ends_plain).unwrap_or(self.src.len());
                    push_run(&mut parts, &self.src, self.pos, end, false, &mut self.spare);
                    self.pos = end;
                }
            }
        }
        Ok(if self.pos == start { None } else { Some(Word(parts)) })
    }

    fn array_items(&mut self) -> PResult<Vec<Word>> {
        let mut items = Vec::new();
        loop {
            self.blanks();
            while self.peek() == Some('\n') {
                self.pos += 1;
                self.blanks();
            }
            if self.peek() == Some(')') {
                self.pos += 1;
                return Ok(items);
            }
            match self.word()? {
                Some(w) => items.push(w),
                None => return self.err("unterminated array"),
            }
        }
    }

    /// Double-quoted text up to `end` (or to end of input for here-document bodies, where `"`
    /// is an ordinary character).
    pub(super) fn dquoted_until(&mut self, end: Option<char>) -> PResult<Word> {
        let mut parts = Parts::default();
        loop {
            let Some(c) = self.peek() else {
                return match end {
                    Some(_) => self.err("unterminated double quote"),
                    None => Ok(Word(parts)),
                };
            };
            if Some(c) == end {
                self.pos += 1;
                return Ok(Word(parts));
            }
            match c {
                '\\' => {
                    let specials: &[char] = if end.is_some() { &['$', '`', '"', '\\'] } else { &['$', '`', '\\'] };
                    match self.peek_at(1) {
                        Some('\n') => self.pos += 2,
                        Some(n) if specials.contains(&n) => {
                            push_char(&mut parts, n, true);
                            self.pos += 2;
                        }
                        _ => {
                            push_lit(&mut parts, "\\", true);
                            self.pos += 1;
                        }
                    }
                }
                '$' => self.dollar(&mut parts, true)?,
                '`' => {
                    let script = self.backtick()?;
                    parts.push(Part::Subst { script, quoted: true });
                }
                _ => {
                    let stop = self.src.find(self.pos, |c| Some(c) == end || matches!(c, '\\' | '$' | '`'));
                    let stop = stop.unwrap_or(self.src.len());
                    push_run(&mut parts, &self.src, self.pos, stop, true, &mut self.spare);
                    self.pos = stop;
                }
            }
        }
    }

    fn dollar(&mut self, parts: &mut Parts, quoted: bool) -> PResult<()> {
        let next = self.peek_at(1);
        match next {
            // dash reads `$'…'` and `$"…"` as a `$` and a quoted string.
            Some('\'' | '"') if !quoted && !self.bash() => {
                push_lit(parts, "$", false);
                self.pos += 1;
            }
            Some('\'') if !quoted => {
                self.pos += 2;
                let text = self.ansi_c()?;
                parts.push(Part::Lit { text, quoted: true });
            }
            Some('"') if !quoted => {
                self.pos += 2;
                let inner = self.dquoted_until(Some('"'))?;
                parts.extend(inner.0);
            }
            Some('(') if self.peek_at(2) == Some('(') => {
                let save = self.pos;
                self.pos += 1;
                match self.balanced_parens(2) {
                    Ok(raw) => {
                        let nested = self.scan_nested(&raw)?;
                        parts.push(Part::Arith(Box::new(Arith { raw, nested })));
                    }
                    Err(_) => {
                        // `$( (a); b )`: a command substitution starting with a subshell.
                        self.pos = save + 2;
                        let script = self.subst_body()?;
                        parts.push(Part::Subst { script, quoted });
                    }
                }
            }
            Some('(') => {
                self.pos += 2;
                let script = self.subst_body()?;
                parts.push(Part::Subst { script, quoted });
            }
            Some('{') => {
                self.pos += 2;
                let raw = self.brace_param()?;
                let ident_len = raw.chars().take_while(|c| c.is_alphanumeric() || *c == '_').count();
                let simple = ident_len == raw.chars().count() && ident_len > 0;
                let special = raw.chars().count() == 1 && "@*#?$!-0".contains(raw.as_str());
                if simple || special {
                    parts.push(Part::Param(Box::new(Param { name: raw, quoted, raw: None, nested: vec![] })));
                } else {
                    let name: String = raw
                        .trim_start_matches(['#', '!'])
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let nested = self.scan_nested(&raw)?;
                    parts.push(Part::Param(Box::new(Param { name, quoted, raw: Some(raw), nested })));
                }
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                let mut name = String::new();
                while let Some(c) = self.peek().filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    self.pos += 1;
                }
                parts.push(Part::Param(Box::new(Param { name, quoted, raw: None, nested: vec![] })));
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                parts.push(Part::Param(Box::new(Param { name: c.to_string(), quoted, raw: None, nested: vec![] })));
            }
            _ => {
                push_lit(parts, "$", quoted);
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// The script of `$(…)` or `<(…)`, cursor just after the `(`.
    fn subst_body(&mut self) -> PResult<Script> {
        self.enter()?;
        let script = self.subst_list()?;
        self.blanks();
        while self.peek() == Some('\n') {
            self.pos += 1;
            self.blanks();
        }
        if self.peek() != Some(')') {
            return self.err("unterminated `$(`");
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(script)
    }

    /// Text inside balanced parentheses; the cursor is on the first of `open` opening parens.
    pub(super) fn balanced_parens(&mut self, open: usize) -> PResult<String> {
        let start = self.pos;
        self.pos += open;
        let mut depth = open;
        let mut deepest = open;
        let body_start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                '(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ')' => {
                    depth -= 1;
                    if depth < open {
                        if open == 2 && self.peek_at(1) != Some(')') {
                            break;
                        }
                        if self.depth + deepest > super::parse::MAX_PARSE_DEPTH {
                            return self.limit(format!("nesting deeper than {}", super::parse::MAX_PARSE_DEPTH));
                        }
                        let raw = self.src.string(body_start, self.pos);
                        self.pos += open;
                        return Ok(raw);
                    }
                }
                '\\' => self.pos += 1,
                _ => {}
            }
            self.pos += 1;
        }
        self.pos = start;
        Err(ParseError::at("unterminated `((`", start))
    }

    /// Substitutions inside opaque text (arithmetic, `${x:-…}`), parsed as double-quoted text.
    pub(super) fn scan_nested(&mut self, raw: &str) -> PResult<Vec<Script>> {
        if !raw.contains('$') && !raw.contains('`') {
            return Ok(vec![]);
        }
        self.enter()?;
        let mut sub = self.sub(raw);
        let word = sub.dquoted_until(None).map_err(|e| ParseError { offset: self.pos, ..e })?;
        let mut out = Vec::new();
        for part in word.0 {
            match part {
                Part::Subst { script, .. } | Part::Proc { script, .. } => out.push(script),
                Part::Param(p) => out.extend(p.nested),
                Part::Arith(a) => out.extend(a.nested),
                _ => {}
            }
        }
        self.sensitive |= sub.sensitive;
        self.depth -= 1;
        Ok(out)
    }

    /// The inside of `${…}`, cursor just after `${`.
    fn brace_param(&mut self) -> PResult<String> {
        let start = self.pos;
        let mut depth = 1;
        let mut deepest = 1;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('"') | None, '\\') => self.pos += 1,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '{') => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                (None, '}') => {
                    depth -= 1;
                    if depth == 0 {
                        // Each level is read again by `scan_nested`: refuse deep nesting now,
                        // in one pass, rather than reading the text once per level.
                        if self.depth + deepest > super::parse::MAX_PARSE_DEPTH {
                            return self.limit(format!("nesting deeper than {}", super::parse::MAX_PARSE_DEPTH));
                        }
                        let raw = self.src.string(start, self.pos);
                        self.pos += 1;
                        return Ok(raw);
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
        self.err("unterminated `${`")
    }

    /// A backtick substitution, cursor on the opening backtick.
    fn backtick(&mut self) -> PResult<Script> {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return self.err("unterminated backtick"),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    inner.extend(self.peek_at(1));
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        let mut sub = self.sub(&inner);
        sub.depth = self.depth + 1;
        if sub.depth > super::parse::MAX_PARSE_DEPTH {
            return self.limit(format!("nesting deeper than {}", super::parse::MAX_PARSE_DEPTH));
        }
        let script = sub.subst_list().map_err(|e| ParseError { offset: self.pos, ..e })?;
        self.sensitive |= sub.sensitive;
        Ok(script)
    }
}
