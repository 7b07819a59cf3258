//! A rule's lists: its examples and counterexamples, its prefilter literals and the literal sets
//! every match satisfies. A built-in rule's are read in place from the tables `build.rs` wrote,
//! which hold offsets and no pointers, so the loader relocates nothing for them at start-up (a
//! table of `&str`s costs one relocation per string on every start); a user rule's are owned.

use super::builtin::{self, Span};

/// Texts: a rule's examples or counterexamples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Texts {
    /// Spans of the built-in text (`builtin::text`).
    Builtin(&'static [Span]),
    Owned(Vec<String>),
}

impl Texts {
    pub fn len(&self) -> usize {
        match self {
            Texts::Builtin(spans) => spans.len(),
            Texts::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        match self {
            Texts::Builtin(spans) => spans.get(i).map(|&s| builtin::text(s)),
            Texts::Owned(v) => v.get(i).map(String::as_str),
        }
    }

    pub fn first(&self) -> Option<&str> {
        self.get(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

impl From<Vec<String>> for Texts {
    fn from(v: Vec<String>) -> Texts {
        Texts::Owned(v)
    }
}

/// Literals one of which a text must contain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralSet {
    /// Spans of the built-in literal bytes (`builtin::literal`).
    Builtin(&'static [Span]),
    Owned(Vec<Vec<u8>>),
}

impl LiteralSet {
    pub fn len(&self) -> usize {
        match self {
            LiteralSet::Builtin(spans) => spans.len(),
            LiteralSet::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&[u8]> {
        match self {
            LiteralSet::Builtin(spans) => spans.get(i).map(|&s| builtin::literal(s)),
            LiteralSet::Owned(v) => v.get(i).map(Vec::as_slice),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// What may stand on each side of each prefilter literal, in the literals' order
/// (`literals::Sides`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralSides {
    /// The rule's literals' range of the built-in literal table (`builtin::literal_sides`).
    Builtin(Span),
    Owned(Vec<super::literals::Sides>),
}

impl LiteralSides {
    /// The sides of literal `i` (anything, where none were found).
    pub fn get(&self, i: usize) -> super::literals::Sides {
        match self {
            LiteralSides::Builtin(range) => match range.0 as usize + i {
                at if at < range.1 as usize => {
                    builtin::literal_sides(at).copied().unwrap_or(super::literals::ANY_SIDES)
                }
                _ => super::literals::ANY_SIDES,
            },
            LiteralSides::Owned(v) => v.get(i).copied().unwrap_or(super::literals::ANY_SIDES),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            LiteralSides::Builtin(range) => (range.1 - range.0) as usize,
            LiteralSides::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Literal sets every match satisfies at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Conjuncts {
    /// Each set as a range of the built-in literal table (`builtin::literals`).
    Builtin(&'static [Span]),
    Owned(Vec<LiteralSet>),
}

impl Conjuncts {
    pub fn len(&self) -> usize {
        match self {
            Conjuncts::Builtin(sets) => sets.len(),
            Conjuncts::Owned(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`th set (a built-in one is a view of the tables, no copy).
    pub fn get(&self, i: usize) -> Option<LiteralSet> {
        match self {
            Conjuncts::Builtin(sets) => sets.get(i).map(|&range| LiteralSet::Builtin(builtin::literals(range))),
            Conjuncts::Owned(v) => v.get(i).cloned(),
        }
    }

    /// Whether every set has a literal in `hay` (with what may stand on its sides).
    pub fn all_in(&self, hay: &super::Haystack<'_>) -> bool {
        match self {
            Conjuncts::Builtin(sets) => sets.iter().all(|&range| builtin::set_in(range, hay)),
            Conjuncts::Owned(v) => v.iter().all(|set| set.iter().any(|l| hay.contains(l))),
        }
    }
}

impl From<Vec<LiteralSet>> for Conjuncts {
    fn from(v: Vec<LiteralSet>) -> Conjuncts {
        Conjuncts::Owned(v)
    }
}
