//! The syntax tree the parser produces. It keeps only what analysis needs: which simple commands
//! run, with which words and redirections, and which nested scripts hide inside words.

#[derive(Debug, Clone, Default)]
pub struct Script(pub Vec<AndOr>);

/// Pipelines joined by `&&` / `||` (the operators do not change what may run).
#[derive(Debug, Clone)]
pub struct AndOr(pub Vec<Pipeline>);

#[derive(Debug, Clone)]
pub struct Pipeline(pub Vec<Command>);

#[derive(Debug, Clone)]
pub enum Command {
    Simple(Simple),
    /// Subshells, groups, if/while/until/for/case, `[[ ]]`, `(( ))` and function bodies: their
    /// bodies run, and their header words (for lists, case subjects) may hold substitutions.
    Compound {
        kind: &'static str,
        bodies: Vec<Script>,
        words: Vec<Word>,
        redirects: Vec<Redirect>,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

#[derive(Debug, Clone)]
pub struct Assign {
    pub name: String,
    pub value: Word,
    /// `NAME+=value`: the value is appended to what the variable held.
    pub append: bool,
}

#[derive(Debug, Clone)]
pub struct Redirect {
    /// The file descriptor or `{var}` written before the operator, if any.
    pub fd: String,
    pub op: &'static str,
    /// The target word; for `<<` / `<<-` the here-document body, for `<<<` the here-string.
    pub target: Word,
}

impl Redirect {
    pub fn feeds_stdin(&self) -> bool {
        matches!(self.op, "<<" | "<<-" | "<<<")
    }
}

#[derive(Debug, Clone, Default)]
pub struct Word(pub Vec<Part>);

#[derive(Debug, Clone)]
pub enum Part {
    Lit {
        text: String,
        quoted: bool,
    },
    /// `$name`, `${name}`; `raw` holds the inside of a `${…}` with operators (`${x:-y}`).
    Param {
        name: String,
        quoted: bool,
        raw: Option<String>,
        nested: Vec<Script>,
    },
    /// `$(…)` or backticks.
    Subst {
        script: Script,
        quoted: bool,
    },
    /// `<(…)` or `>(…)`.
    Proc {
        dir: char,
        script: Script,
    },
    /// `$((…))`.
    Arith {
        raw: String,
        nested: Vec<Script>,
    },
    /// `name=(a b c)`.
    Array(Vec<Word>),
}
