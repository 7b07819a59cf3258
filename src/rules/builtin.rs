//! The built-in packs, compiled into the binary by `build.rs` from `rules/*.toml`, with every
//! pattern's DFA built there too and embedded as one blob that is read in place.

use super::literals::Sides;
use super::schema::{Action, Target};

/// A built-in pattern's DFAs (`rules::embedded` says how they are searched): one, or, for a
/// pattern too large for one, chains of pieces, one chain per alternative.
pub type DfaSpans = &'static [Piece];

/// Where something sits in one of the tables, as `(start, end)`.
pub type Span = (u32, u32);

/// One DFA of a built-in pattern: where its serialized DFA sits in `DFAS`, as `(start, len)`,
/// whether it is dense (else sparse), and how it follows the piece before it.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub span: (u32, u32),
    pub dense: bool,
    pub gap: Gap,
    /// On the first piece of an alternative's chain: a range of `SETS`, literal sets every text
    /// the alternative matches holds a literal of each of (empty: none known).
    pub gate: Span,
}

/// A set of bytes, one bit each.
pub type ByteSet = [u64; 4];

/// How a piece follows the one before it in a chain. The gap is part of the piece's own DFA;
/// it is written here too for the search to know which match ends of the piece before need not
/// be tried.
#[derive(Debug, Clone, Copy)]
pub enum Gap {
    /// The first piece of a chain, searched from the start of the text.
    Start,
    /// `C*`: this piece is `C*` and the rest of the pattern up to the next gap.
    Star(ByteSet),
    /// `(C*S)?`.
    OptStar(ByteSet, ByteSet),
}

/// A built-in rule as `build.rs` wrote it: syntax already checked, prefilter literals already
/// extracted. Strings are spans of one text (`text`), lists ranges of span tables, so the table
/// holds no pointer the loader would relocate at every start; a `Rule` borrows from them, with
/// no allocation.
pub struct BuiltinRule {
    pub id: Span,
    pub action: Action,
    pub target: Target,
    pub pattern: Span,
    pub unless: Option<Span>,
    pub operand: Option<Span>,
    pub unless_operand: Option<Span>,
    pub reason: Span,
    pub tip: Option<Span>,
    /// Ranges of `TEXTS`.
    pub examples: Span,
    pub counterexamples: Span,
    pub file: Span,
    pub line: usize,
    /// A range of `LITERALS`.
    pub literals: Option<Span>,
    /// The literals start the text (the pattern is anchored with `^`).
    pub anchored: bool,
    /// Literal sets every match satisfies at once (`literals::conjuncts`): a range of `SETS`.
    pub conjuncts: Span,
    /// First words that exempt a text (`exempt`): a range of `EXEMPT_WORDS`, sorted.
    pub exempt: Span,
    /// The DFAs of `pattern`, `unless`, `operand` and `unless_operand`: ranges of `PIECES`.
    pub dfas: [Span; 4],
}

include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

/// Every string of the built-in rules, back to back.
static TEXT: &str = include_str!(concat!(env!("OUT_DIR"), "/builtin_text.txt"));
/// Every prefilter literal of the built-in rules, back to back.
static LITERAL_BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/builtin_literals.bin"));

fn range(span: Span) -> std::ops::Range<usize> {
    span.0 as usize..span.1 as usize
}

/// The built-in rules.
pub fn rules() -> &'static [BuiltinRule] {
    &BUILTIN_RULES
}

/// A string of the built-in rules.
pub fn text(span: Span) -> &'static str {
    &TEXT[range(span)]
}

/// `text`, as bytes (no character boundary to check).
pub fn text_bytes(span: Span) -> &'static [u8] {
    &TEXT.as_bytes()[range(span)]
}

/// A prefilter literal of the built-in rules.
pub fn literal(span: Span) -> &'static [u8] {
    &LITERAL_BYTES[range(span)]
}

/// A list of texts (a range of `TEXTS`): spans for `text`.
pub fn texts(list: Span) -> &'static [Span] {
    &TEXTS[range(list)]
}

/// A literal set (a range of `LITERALS`): spans for `literal`.
pub fn literals(set: Span) -> &'static [Span] {
    &LITERALS[range(set)]
}

/// What may stand on the sides of the literal at `index` of the literal table (the range
/// `literals` takes counts in it); `None`: anything.
pub fn literal_sides(index: usize) -> Option<&'static Sides> {
    match LITERAL_SIDES.get(index) {
        Some(&0) | None => None,
        Some(&s) => SIDE_TABLE.get(usize::from(s)),
    }
}

/// Whether `hay` holds a literal of the set `set` (a range of `LITERALS`) with what may stand
/// on its sides.
pub fn set_in(set: Span, hay: &super::Haystack<'_>) -> bool {
    let range = set.0 as usize..set.1 as usize;
    LITERAL_PAIRS[range.clone()]
        .iter()
        .zip(range)
        .any(|(&pairs, at)| hay.contains_sided(pairs, || literal(LITERALS[at]), || literal_sides(at)))
}

/// Exempt first words (a range of `EXEMPT_WORDS`): spans of `text`, sorted by their bytes.
pub fn exempt_words(list: Span) -> &'static [Span] {
    &EXEMPT_WORDS[range(list)]
}

/// A list of literal sets (a range of `SETS`): ranges for `literals`.
pub fn sets(list: Span) -> &'static [Span] {
    &SETS[range(list)]
}

/// A pattern's DFAs (a range of `PIECES`).
pub fn pieces(list: Span) -> DfaSpans {
    &PIECES[range(list)]
}

/// The blob's bytes, 8-aligned so that any DFA in it could be read in place (sparse DFAs need no
/// alignment; dense ones need 4).
#[repr(C)]
struct Aligned<B: ?Sized> {
    _align: [u64; 0],
    bytes: B,
}

static DFAS: &Aligned<[u8]> =
    &Aligned { _align: [], bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/builtin_dfas.bin")) };

/// All the serialized DFAs.
pub fn blob() -> &'static [u8] {
    &DFAS.bytes
}

/// The serialized DFA at `span` (a `Piece`'s).
pub fn dfa_bytes(span: (u32, u32)) -> &'static [u8] {
    &DFAS.bytes[span.0 as usize..(span.0 + span.1) as usize]
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_literal_keeps_its_own_end_pairs() {
        assert_eq!(super::LITERALS.len(), super::LITERAL_PAIRS.len());
        for (&span, &pairs) in super::LITERALS.iter().zip(&super::LITERAL_PAIRS) {
            assert_eq!(pairs, super::super::prefilter::index::end_pairs(super::literal(span)));
        }
    }
}
