//! The built-in packs, compiled into the binary by `build.rs` from `rules/*.toml`, with every
//! pattern's DFA built there too and embedded as one blob that is read in place.

use std::borrow::Cow;

use super::schema::{Action, Target};

/// A built-in pattern's DFAs (`rules::embedded` says how they are searched): one, or, for a
/// pattern too large for one, chains of pieces, one chain per alternative.
pub type DfaSpans = &'static [Piece];

/// One DFA of a built-in pattern: where its serialized DFA sits in `DFAS`, as `(start, len)`,
/// whether it is dense (else sparse), and how it follows the piece before it.
#[derive(Debug, Clone, Copy)]
pub struct Piece {
    pub span: (u32, u32),
    pub dense: bool,
    pub gap: Gap,
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

/// A built-in rule as `build.rs` wrote it: static strings, syntax already checked, prefilter
/// literals already extracted. The lists are slices of `Cow`s so a `Rule` borrows them as they
/// are, with no allocation at start-up.
pub struct BuiltinRule {
    pub id: &'static str,
    pub action: Action,
    pub target: Target,
    pub pattern: &'static str,
    pub unless: Option<&'static str>,
    pub operand: Option<&'static str>,
    pub unless_operand: Option<&'static str>,
    pub reason: &'static str,
    pub tip: Option<&'static str>,
    pub examples: &'static [Cow<'static, str>],
    pub counterexamples: &'static [Cow<'static, str>],
    pub file: &'static str,
    pub line: usize,
    pub literals: Option<&'static [Cow<'static, [u8]>]>,
    /// The literals start the text (the pattern is anchored with `^`).
    pub anchored: bool,
    /// Literal sets every match satisfies at once (`literals::conjuncts`).
    pub conjuncts: &'static [super::LiteralSet],
    /// The DFAs of `pattern`, `unless`, `operand` and `unless_operand`.
    pub dfas: [DfaSpans; 4],
}

include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));

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
