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
pub struct Word(pub Parts);

impl Word {
    /// A word of one part.
    pub fn one(part: Part) -> Word {
        Word(Parts::One(part))
    }
}

/// A word's parts. Most words are one part, kept in place: a vector of its own was an
/// allocation for every word parsed.
#[derive(Debug, Clone)]
pub enum Parts {
    One(Part),
    Many(Vec<Part>),
}

impl Default for Parts {
    fn default() -> Parts {
        Parts::Many(Vec::new())
    }
}

impl Parts {
    pub fn push(&mut self, part: Part) {
        match self {
            Parts::Many(parts) if parts.is_empty() => *self = Parts::One(part),
            Parts::Many(parts) => parts.push(part),
            Parts::One(_) => {
                if let Parts::One(first) = std::mem::take(self) {
                    *self = Parts::Many(vec![first, part]);
                }
            }
        }
    }
}

impl std::ops::Deref for Parts {
    type Target = [Part];

    fn deref(&self) -> &[Part] {
        match self {
            Parts::One(part) => std::slice::from_ref(part),
            Parts::Many(parts) => parts,
        }
    }
}

impl std::ops::DerefMut for Parts {
    fn deref_mut(&mut self) -> &mut [Part] {
        match self {
            Parts::One(part) => std::slice::from_mut(part),
            Parts::Many(parts) => parts,
        }
    }
}

impl IntoIterator for Parts {
    type Item = Part;
    type IntoIter = std::iter::Chain<std::option::IntoIter<Part>, std::vec::IntoIter<Part>>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            Parts::One(part) => Some(part).into_iter().chain(Vec::new()),
            Parts::Many(parts) => None.into_iter().chain(parts),
        }
    }
}

impl<'a> IntoIterator for &'a Parts {
    type Item = &'a Part;
    type IntoIter = std::slice::Iter<'a, Part>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Extend<Part> for Parts {
    fn extend<I: IntoIterator<Item = Part>>(&mut self, parts: I) {
        parts.into_iter().for_each(|part| self.push(part));
    }
}

/// Kept at 32 bytes (the rarer parameter and arithmetic parts are boxed): a word holds one in
/// place, and a command's vector of words grows by them.
#[derive(Debug, Clone)]
pub enum Part {
    Lit {
        text: String,
        quoted: bool,
    },
    /// `$name`, `${name}`, `${x:-y}`.
    Param(Box<Param>),
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
    Arith(Box<Arith>),
    /// `name=(a b c)`.
    Array(Vec<Word>),
}

const _: () = assert!(std::mem::size_of::<Part>() <= 32 && std::mem::size_of::<Word>() <= 32);

/// A parameter expansion.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub quoted: bool,
    /// The inside of a `${…}` with operators (`${x:-y}`).
    pub raw: Option<String>,
    pub nested: Vec<Script>,
}

/// An arithmetic expansion: its text and the substitutions in it.
#[derive(Debug, Clone)]
pub struct Arith {
    pub raw: String,
    pub nested: Vec<Script>,
}
