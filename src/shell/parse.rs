//! A recursive-descent parser for the POSIX shell language with the bash extensions agents use:
//! lists, pipelines, compound commands, functions, redirections and here-documents. Words are
//! read in `word.rs`. The parser never guesses: input it cannot read is an error, and the caller
//! asks the user instead of passing the command.

use super::ast::{AndOr, Command, Items, Pipeline, Script, Word};
use super::dialect::Dialect;
use super::source::Source;

/// Deepest nesting of lists, groups and substitutions the parser follows.
pub const MAX_PARSE_DEPTH: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub offset: usize,
    /// Not a syntax error: the text is over a limit (depth, number of commands).
    pub limit: bool,
    /// Where the complete lines before the error end (a char offset): the shell runs those
    /// before it reads the line that fails.
    pub complete: usize,
}

impl ParseError {
    pub fn at(message: impl Into<String>, offset: usize) -> ParseError {
        ParseError { message: message.into(), offset, limit: false, complete: 0 }
    }
}

pub type PResult<T> = Result<T, ParseError>;

pub struct Parser<'a> {
    pub(super) src: Source<'a>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    /// Where the next here-document body starts once the current line ends: (newline, resume).
    pub(super) heredoc_jump: Option<(usize, usize)>,
    /// Bash or dash (never `Both`: that is two parses).
    pub(super) dialect: Dialect,
    /// Set when the text holds a construct the two dialects read differently.
    pub(super) sensitive: bool,
    /// Simple commands read so far: past `MAX_SEGMENTS` the parse stops, as the walk would.
    pub(super) commands: usize,
    /// Where the last complete line of the top-level list ends (char offset).
    complete: usize,
    /// Emptied strings (`Spare`) that words' literal text is written into, and emptied
    /// vectors for simple commands' words.
    pub(super) spare: Vec<String>,
    pub(super) spare_words: Vec<Vec<Word>>,
}

/// What ends a list besides end of input.
#[derive(Clone, Copy, Default)]
pub(super) struct Stop {
    pub(super) paren: bool,
    pub(super) words: &'static [&'static str],
    pub(super) case_arm: bool,
}

const RESERVED_STARTS: &[&str] = &["if", "while", "until", "for", "select", "case", "function", "{", "[["];

/// Parses a whole script as bash reads it.
#[cfg(test)]
pub fn parse(text: &str) -> PResult<Script> {
    parse_in(text, Dialect::Bash).map(|(s, _)| s)
}

/// Parses a whole script in `dialect` (bash or dash); also says whether the text holds a
/// construct the other dialect reads differently.
pub fn parse_in(text: &str, dialect: Dialect) -> PResult<(Script, bool)> {
    parse_reusing(text, dialect, &mut super::Spare::default())
}

/// `parse_in`, writing the words into the emptied strings and vectors of `spare` while it
/// has some.
pub fn parse_reusing(text: &str, dialect: Dialect, spare: &mut super::Spare) -> PResult<(Script, bool)> {
    let mut p = Parser::new(text, dialect);
    p.spare = std::mem::take(&mut spare.texts);
    p.spare_words = std::mem::take(&mut spare.words);
    let parsed = p.list(Stop::default()).and_then(|script| {
        p.blanks();
        if let Some(c) = p.peek() { p.err(format!("unexpected {c:?}")) } else { Ok(script) }
    });
    spare.texts = std::mem::take(&mut p.spare);
    spare.words = std::mem::take(&mut p.spare_words);
    match parsed {
        Ok(script) => Ok((script, p.sensitive)),
        Err(e) => Err(ParseError { complete: p.complete, ..e }),
    }
}

impl Parser<'_> {
    /// bash's `coproc [NAME] COMMAND`: COMMAND runs in a background subshell, read as `( COMMAND )`
    /// (its `cd` and assignments stay there). NAME is given only before a compound command.
    fn coproc(&mut self) -> PResult<Command> {
        self.pos += "coproc".len();
        self.blanks();
        let name_end = self.src.find(self.pos, |c| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(self.src.len());
        let mut after = name_end;
        while self.src.get(after).is_some_and(|c| c == ' ' || c == '\t') {
            after += 1;
        }
        // A reserved word as the parser reads it anywhere (`if`, not `ifconfig`).
        let here = std::mem::replace(&mut self.pos, after);
        let compound_next = self.peek() == Some('(') || self.reserved(RESERVED_STARTS).is_some();
        self.pos = here;
        if name_end > self.pos && after > name_end && compound_next {
            self.pos = after;
        }
        let inner = self.command()?;
        let body = Script(vec![AndOr(Items::One(Pipeline(Items::One(inner))))]);
        self.compound("(", vec![body], vec![], vec![])
    }
}

/// `X &`, read as the subshell `( X )` it runs in.
fn background(item: AndOr) -> AndOr {
    let body = Script(vec![item]);
    AndOr(Items::One(Pipeline(Items::One(Command::Compound {
        kind: "(",
        bodies: vec![body],
        words: Vec::new(),
        redirects: Vec::new(),
    }))))
}

impl<'a> Parser<'a> {
    pub fn new(text: &'a str, dialect: Dialect) -> Parser<'a> {
        Parser {
            src: Source::new(text),
            pos: 0,
            depth: 0,
            heredoc_jump: None,
            dialect,
            sensitive: false,
            commands: 0,
            complete: 0,
            spare: Vec::new(),
            spare_words: Vec::new(),
        }
    }

    /// Whether bash's reading applies to a construct met here (and notes that the dialects
    /// differ on this text).
    pub(super) fn bash(&mut self) -> bool {
        self.sensitive = true;
        self.dialect != Dialect::Dash
    }

    /// A parser for text nested in this one (backticks, `${…}` operands), in the same dialect.
    pub(super) fn sub<'b>(&self, text: &'b str) -> Parser<'b> {
        let mut p = Parser::new(text, self.dialect);
        p.depth = self.depth;
        p
    }

    pub(super) fn err<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError::at(message, self.pos))
    }

    #[inline]
    pub(super) fn peek(&self) -> Option<char> {
        self.src.get(self.pos)
    }

    #[inline]
    pub(super) fn peek_at(&self, n: usize) -> Option<char> {
        self.src.get(self.pos + n)
    }

    #[inline]
    pub(super) fn starts_with(&self, s: &str) -> bool {
        self.src.starts_with_at(self.pos, s)
    }

    pub(super) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return self.limit(format!("nesting deeper than {MAX_PARSE_DEPTH}"));
        }
        Ok(())
    }

    /// Stops parsing: the text is over a limit, which is not a syntax error.
    pub(super) fn limit<T>(&self, message: String) -> PResult<T> {
        Err(ParseError { message, offset: self.pos, limit: true, complete: 0 })
    }

    /// Skips spaces, tabs, line continuations and comments (not newlines).
    #[inline]
    pub(super) fn blanks(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consumes one newline, jumping over here-document bodies read on this line.
    fn newline(&mut self) {
        match self.heredoc_jump.take() {
            Some((nl, resume)) if nl == self.pos => self.pos = resume,
            other => {
                self.heredoc_jump = other;
                self.pos += 1;
            }
        }
    }

    pub(super) fn blanks_and_newlines(&mut self) {
        loop {
            self.blanks();
            if self.peek() == Some('\n') {
                self.newline();
            } else {
                break;
            }
        }
    }

    /// The reserved word at the cursor, if the next word is one of `words` exactly.
    pub(super) fn reserved(&self, words: &[&str]) -> Option<&'static str> {
        const ALL: &[&str] = &[
            "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "select", "case", "esac", "in",
            "function", "{", "}", "!", "[[",
        ];
        // Every reserved word is ASCII: its first byte rules out most words at once.
        let first = self.peek().filter(char::is_ascii)? as u8;
        for w in words {
            if w.as_bytes()[0] == first && self.starts_with(w) {
                let after = self.src.get(self.pos + w.chars().count());
                let ends = match after {
                    None => true,
                    Some(c) => {
                        c.is_whitespace()
                            || (*w != "{" && *w != "}" && matches!(c, ';' | '&' | '|' | ')' | '(' | '<' | '>'))
                            || (*w == "}" && matches!(c, ';' | ')' | '&' | '|'))
                    }
                };
                if ends {
                    return ALL.iter().copied().find(|a| a == w);
                }
            }
        }
        None
    }

    pub(super) fn expect_reserved(&mut self, word: &'static str) -> PResult<()> {
        self.blanks_and_newlines();
        if self.reserved(&[word]).is_some() {
            self.pos += word.chars().count();
            Ok(())
        } else {
            self.err(format!("expected `{word}`"))
        }
    }

    fn at_stop(&self, stop: Stop) -> bool {
        match self.peek() {
            None => true,
            Some(')') if stop.paren || stop.case_arm => true,
            Some(';') if stop.case_arm && matches!(self.peek_at(1), Some(';') | Some('&')) => true,
            _ => self.reserved(stop.words).is_some(),
        }
    }

    /// The list inside `$(…)` or `<(…)`, up to the closing parenthesis.
    pub(super) fn subst_list(&mut self) -> PResult<Script> {
        self.list(Stop { paren: true, ..Stop::default() })
    }

    pub(super) fn list(&mut self, stop: Stop) -> PResult<Script> {
        self.enter()?;
        // Room for one: a line is nearly always one and-or list.
        let mut items = Vec::with_capacity(1);
        loop {
            self.blanks_and_newlines();
            if self.at_stop(stop) {
                break;
            }
            items.push(self.and_or()?);
            self.blanks();
            match self.peek() {
                Some(';') if !matches!(self.peek_at(1), Some(';') | Some('&')) => self.pos += 1,
                Some('&') if self.peek_at(1) != Some('&') && (self.peek_at(1) != Some('>') || !self.bash()) => {
                    self.pos += 1;
                    // `X &` runs X in a subshell: its assignments, `cd` and definitions stay
                    // there, as a subshell's do (`cd /tmp & rm -rf ./*` deletes here).
                    if let Some(last) = items.pop() {
                        items.push(background(last));
                    }
                }
                Some('\n') => {
                    self.newline();
                    if self.depth == 1 {
                        self.complete = self.pos;
                    }
                }
                _ if self.at_stop(stop) => break,
                Some(c) => return self.err(format!("unexpected {c:?}")),
                None => break,
            }
        }
        self.depth -= 1;
        Ok(Script(items))
    }

    fn and_or(&mut self) -> PResult<AndOr> {
        let mut pipelines = Items::One(self.pipeline()?);
        loop {
            self.blanks();
            if self.starts_with("&&") || self.starts_with("||") {
                self.pos += 2;
                self.blanks_and_newlines();
                pipelines.push(self.pipeline()?);
            } else {
                return Ok(AndOr(pipelines));
            }
        }
    }

    fn pipeline(&mut self) -> PResult<Pipeline> {
        self.blanks();
        while self.reserved(&["!"]).is_some() {
            self.pos += 1;
            self.blanks();
        }
        // The `time` keyword before a group; before a simple command it is a wrapper.
        if self.starts_with("time") && matches!(self.peek_at(4), Some(' ' | '\t')) {
            let save = self.pos;
            self.pos += 4;
            self.blanks();
            if self.starts_with("-p ") {
                self.pos += 2;
                self.blanks();
            }
            if !matches!(self.peek(), Some('(' | '{')) {
                self.pos = save;
            }
        }
        let mut cmds = Items::One(self.command()?);
        loop {
            self.blanks();
            if self.starts_with("|&") {
                if !self.bash() {
                    return self.err("`|&` is not dash syntax");
                }
                self.pos += 2;
            } else if self.peek() == Some('|') && self.peek_at(1) != Some('|') {
                self.pos += 1;
            } else {
                return Ok(Pipeline(cmds));
            }
            self.blanks_and_newlines();
            cmds.push(self.command()?);
        }
    }

    pub(super) fn command(&mut self) -> PResult<Command> {
        self.blanks();
        // `((…))` is arithmetic in bash; in dash it is a subshell in a subshell.
        if self.starts_with("((") && self.bash() {
            let raw = self.balanced_parens(2)?;
            let nested = self.scan_nested(&raw)?;
            // The expression itself, for the variables it names (their values are evaluated).
            let expr = Word::one(super::ast::Part::Lit { text: raw, quoted: true });
            return self.compound("((", vec![], vec![expr], nested);
        }
        if self.peek() == Some('(') {
            self.pos += 1;
            let body = self.list(Stop { paren: true, ..Stop::default() })?;
            self.close_paren()?;
            return self.compound("(", vec![body], vec![], vec![]);
        }
        if self.bash() && self.starts_with("coproc") && self.src.get(self.pos + 6).is_some_and(char::is_whitespace) {
            return self.coproc();
        }
        let reserved = match self.reserved(RESERVED_STARTS) {
            Some("[[" | "function" | "select") if !self.bash() => None,
            other => other,
        };
        match reserved {
            Some("{") => {
                self.pos += 1;
                let body = self.list(Stop { words: &["}"], ..Stop::default() })?;
                self.expect_reserved("}")?;
                self.compound("{", vec![body], vec![], vec![])
            }
            Some("[[") => {
                self.pos += 2;
                let words = self.cond_words()?;
                self.compound("[[", vec![], words, vec![])
            }
            Some("if") => self.if_clause(),
            Some(kw @ ("while" | "until")) => {
                self.pos += kw.len();
                let cond = self.list(Stop { words: &["do"], ..Stop::default() })?;
                let body = self.do_group()?;
                self.compound(kw, vec![cond, body], vec![], vec![])
            }
            Some(kw @ ("for" | "select")) => self.for_clause(kw),
            Some("case") => self.case_clause(),
            Some("function") => {
                self.pos += "function".len();
                self.blanks();
                let name = self.word()?.ok_or_else(|| ParseError::at("function name expected", self.pos))?;
                self.blanks();
                if self.starts_with("()") {
                    self.pos += 2;
                }
                self.function_body(name)
            }
            _ => self.simple_or_function(),
        }
    }

    pub(super) fn close_paren(&mut self) -> PResult<()> {
        self.blanks_and_newlines();
        if self.peek() == Some(')') {
            self.pos += 1;
            Ok(())
        } else {
            self.err("expected `)`")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> Script {
        parse(src).unwrap_or_else(|e| panic!("{src:?}: {e:?}"))
    }

    #[test]
    fn parses_the_shell_language() {
        let cases = [
            "a; b && c || d | e |& f & g",
            "a\nb\n\n# comment\nc # trailing",
            "(a; b) | { c; d; }",
            "if a; then b; elif c; then d; else e; fi",
            "while a; do b; done; until a; do b; done",
            "for x in 1 2 3; do echo $x; done",
            "for ((i=0; i<3; i++)); do echo; done",
            "case $x in a|b) one;; (c) two;& *) three;;& esac",
            "f() { rm -rf x; }; function g { h; }",
            "[[ -f x && $y == z ]] && ((n++))",
            "cat <<EOF\nbody $(rm -rf ~)\nEOF\necho after",
            "cat <<'EOF' | sh\nrm -rf ~\nEOF",
            "cat <<-A <<B\n\tone\n\tA\ntwo\nB\n",
            "echo x > /dev/null 2>&1 &>> log <<< here {fd}>&-",
            "diff <(ls a) >(wc -l) ",
            "X=(a b c) Y=1 cmd",
            "echo a\\\nb",
            "! true",
            "time (a; b)",
            "time -p { a; }",
            "case x in\n  a) echo ;;\nesac",
        ];
        for c in cases {
            ok(c);
        }
    }

    #[test]
    fn rejects_what_it_cannot_read() {
        for bad in ["echo 'unterminated", "(a; b", "if a; then b", "a && ", "| a", "echo $(", "cat <<EOF", "for"] {
            assert!(parse(bad).is_err(), "{bad:?} should not parse");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "( ".repeat(500) + &")".repeat(500);
        assert!(parse(&deep).is_err());
        let subst = "$(".repeat(300) + &")".repeat(300);
        assert!(parse(&format!("echo {subst}")).is_err());
    }
}
