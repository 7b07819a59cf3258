//! The built-in packs, compiled into the binary by `build.rs` from `rules/*.toml`.

use std::borrow::Cow;

use super::schema::{Action, Target};

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
}

include!(concat!(env!("OUT_DIR"), "/builtin_rules.rs"));
