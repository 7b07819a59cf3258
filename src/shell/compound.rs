//! Compound commands: `if`, `while`/`until`, `for`/`select`, `case`, function bodies and
//! `[[ … ]]`. Their bodies are lists parsed by `parse.rs`; analysis walks every body.

use super::ast::{Command, Part, Script, Simple, Word};
use super::parse::{PResult, ParseError, Parser, Stop};

impl Parser<'_> {
    pub(super) fn do_group(&mut self) -> PResult<Script> {
        self.expect_reserved("do")?;
        let body = self.list(Stop { words: &["done"], ..Stop::default() })?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    pub(super) fn if_clause(&mut self) -> PResult<Command> {
        self.pos += 2;
        let mut bodies = Vec::new();
        loop {
            bodies.push(self.list(Stop { words: &["then"], ..Stop::default() })?);
            self.expect_reserved("then")?;
            bodies.push(self.list(Stop { words: &["elif", "else", "fi"], ..Stop::default() })?);
            match self.reserved(&["elif", "else", "fi"]) {
                Some("elif") => self.pos += 4,
                Some("else") => {
                    self.pos += 4;
                    bodies.push(self.list(Stop { words: &["fi"], ..Stop::default() })?);
                    self.expect_reserved("fi")?;
                    break;
                }
                Some(_) => {
                    self.pos += 2;
                    break;
                }
                None => return self.err("expected `fi`"),
            }
        }
        self.compound("if", bodies, vec![], vec![])
    }

    pub(super) fn for_clause(&mut self, kw: &'static str) -> PResult<Command> {
        self.pos += kw.len();
        self.blanks();
        if self.starts_with("((") && self.bash() {
            let raw = self.balanced_parens(2)?;
            let nested = self.scan_nested(&raw)?;
            self.blanks();
            if self.peek() == Some(';') {
                self.pos += 1;
            }
            let body = self.do_group()?;
            return self.compound(kw, vec![body], vec![], nested);
        }
        let name = self.word()?.ok_or_else(|| ParseError::at(format!("`{kw}` needs a variable name"), self.pos))?;
        // The loop variable comes first: the walk marks it unknown after the loop.
        let mut words = vec![name];
        self.blanks_and_newlines();
        if self.reserved(&["in"]).is_some() {
            self.pos += 2;
            loop {
                self.blanks();
                match self.word()? {
                    Some(w) => words.push(w),
                    None => break,
                }
            }
        }
        self.blanks();
        if self.peek() == Some(';') {
            self.pos += 1;
        }
        let body = self.do_group()?;
        self.compound(kw, vec![body], words, vec![])
    }

    pub(super) fn case_clause(&mut self) -> PResult<Command> {
        self.pos += 4;
        self.blanks();
        let subject = self.word()?.ok_or_else(|| ParseError::at("`case` needs a word", self.pos))?;
        let mut words = vec![subject];
        self.expect_reserved("in")?;
        let mut bodies = Vec::new();
        loop {
            self.blanks_and_newlines();
            if self.reserved(&["esac"]).is_some() {
                self.pos += 4;
                break;
            }
            if self.peek() == Some('(') {
                self.pos += 1;
            }
            loop {
                self.blanks();
                let w = self.word()?.ok_or_else(|| ParseError::at("case pattern expected", self.pos))?;
                words.push(w);
                self.blanks();
                match self.peek() {
                    Some('|') => self.pos += 1,
                    Some(')') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return self.err("expected `)` after case pattern"),
                }
            }
            bodies.push(self.list(Stop { words: &["esac"], case_arm: true, paren: false })?);
            self.blanks_and_newlines();
            for end in [";;&", ";;", ";&"] {
                if self.starts_with(end) {
                    self.pos += end.len();
                    break;
                }
            }
        }
        self.compound("case", bodies, words, vec![])
    }

    /// A function's body; its first header word is the function's name.
    pub(super) fn function_body(&mut self, name: Word) -> PResult<Command> {
        self.blanks_and_newlines();
        match self.command()? {
            Command::Compound { bodies, words, redirects, .. } => {
                let words = std::iter::once(name).chain(words).collect();
                Ok(Command::Compound { kind: "function", bodies, words, redirects })
            }
            Command::Simple(_) => self.err("function body must be a compound command"),
        }
    }

    /// Words of `[[ … ]]`, where `&&`, `||`, `<`, `>`, `(` and `)` are plain words.
    pub(super) fn cond_words(&mut self) -> PResult<Vec<Word>> {
        let mut words = Vec::new();
        loop {
            self.blanks_and_newlines();
            if self.starts_with("]]") {
                self.pos += 2;
                return Ok(words);
            }
            let op = ["&&", "||", "(", ")", "<", ">", "!"].into_iter().find(|op| self.starts_with(op));
            if let Some(op) = op {
                self.pos += op.len();
                words.push(Word::one(Part::Lit { text: op.into(), quoted: false }));
                continue;
            }
            match self.word()? {
                Some(w) => words.push(w),
                None => return self.err("expected `]]`"),
            }
        }
    }

    pub(super) fn compound(
        &mut self,
        kind: &'static str,
        bodies: Vec<Script>,
        words: Vec<Word>,
        extra: Vec<Script>,
    ) -> PResult<Command> {
        let mut bodies = bodies;
        bodies.extend(extra);
        let mut redirects = Vec::new();
        loop {
            self.blanks();
            match self.redirect()? {
                Some(r) => redirects.push(r),
                None => break,
            }
        }
        Ok(Command::Compound { kind, bodies, words, redirects })
    }

    pub(super) fn simple_or_function(&mut self) -> PResult<Command> {
        self.commands += 1;
        if self.commands > super::MAX_SEGMENTS {
            return self.limit(format!("more than {} simple commands", super::MAX_SEGMENTS));
        }
        let mut cmd = Simple { words: self.spare_words.pop().unwrap_or_default(), ..Simple::default() };
        loop {
            self.blanks();
            if let Some(r) = self.redirect()? {
                cmd.redirects.push(r);
                continue;
            }
            // `name ()` starts a function definition.
            if cmd.words.len() == 1 && cmd.assigns.is_empty() && self.peek() == Some('(') {
                let save = self.pos;
                self.pos += 1;
                self.blanks();
                if self.peek() == Some(')') {
                    self.pos += 1;
                    let name = cmd.words.pop().unwrap_or_default();
                    return self.function_body(name);
                }
                self.pos = save;
            }
            let Some(word) = self.word()? else { break };
            if cmd.words.is_empty()
                && let Some(assign) = super::word::as_assignment(&word)
            {
                cmd.assigns.push(assign);
                continue;
            }
            cmd.words.push(word);
        }
        if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
            return match self.peek() {
                Some(c) => self.err(format!("unexpected {c:?}")),
                None => self.err("unexpected end of input"),
            };
        }
        Ok(Command::Simple(cmd))
    }
}
