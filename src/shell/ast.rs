//! The syntax tree the parser produces. It keeps only what analysis needs: which simple commands
//! run, with which words and redirections, and which nested scripts hide inside words.

#[derive(Debug, Clone, Default)]
pub struct Script(pub Vec<AndOr>);

impl Script {
    /// Drops it, keeping the emptied strings of its simple commands' literal words, and their
    /// vectors of words, in `spare` for the next parse. Taken in place: the rest of the tree is
    /// dropped as usual.
    pub fn recycle(mut self, spare: &mut super::Spare) {
        for pipeline in self.0.iter_mut().flat_map(|a| a.0.iter_mut()) {
            for command in pipeline.0.iter_mut() {
                let Command::Simple(simple) = command else { continue };
                for part in simple.words.iter_mut().flat_map(|w| w.0.iter_mut()) {
                    if let Part::Lit { text, .. } = part
                        && text.capacity() > 0
                        && spare.texts.len() < super::spare::MAX_SPARE_TEXTS
                    {
                        text.clear();
                        spare.texts.push(std::mem::take(text));
                    }
                }
                if spare.words.len() < super::spare::MAX_SPARE_LISTS {
                    let mut words = std::mem::take(&mut simple.words);
                    words.clear();
                    spare.words.push(words);
                }
            }
        }
    }
}

/// Pipelines joined by `&&` / `||` (the operators do not change what may run).
#[derive(Debug, Clone)]
pub struct AndOr(pub Items<Pipeline>);

#[derive(Debug, Clone)]
pub struct Pipeline(pub Items<Command>);

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
pub type Parts = Items<Part>;

/// A sequence that is nearly always one item (a word's parts, a pipeline's commands, an and-or
/// list's pipelines): one is kept in place, more spill into a vector. Reads as a slice.
#[derive(Debug, Clone)]
pub enum Items<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> Default for Items<T> {
    fn default() -> Items<T> {
        Items::Many(Vec::new())
    }
}

impl<T> Items<T> {
    pub fn push(&mut self, item: T) {
        match self {
            Items::Many(items) if items.is_empty() => *self = Items::One(item),
            Items::Many(items) => items.push(item),
            Items::One(_) => {
                if let Items::One(first) = std::mem::take(self) {
                    *self = Items::Many(vec![first, item]);
                }
            }
        }
    }
}

impl<T> std::ops::Deref for Items<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Items::One(item) => std::slice::from_ref(item),
            Items::Many(items) => items,
        }
    }
}

impl<T> std::ops::DerefMut for Items<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Items::One(item) => std::slice::from_mut(item),
            Items::Many(items) => items,
        }
    }
}

impl<T> IntoIterator for Items<T> {
    type Item = T;
    type IntoIter = std::iter::Chain<std::option::IntoIter<T>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        match self {
            Items::One(item) => Some(item).into_iter().chain(Vec::new()),
            Items::Many(items) => None.into_iter().chain(items),
        }
    }
}

impl<'a, T> IntoIterator for &'a Items<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T> Extend<T> for Items<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        items.into_iter().for_each(|item| self.push(item));
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
