//! A rule's pattern, compiled: a built-in one from the DFAs `build.rs` embedded, a user one into
//! a lazy DFA within the size limits. Both only answer "does it match"; the span `explain` shows
//! comes from a full regex built when asked.

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, WhichCaptures};

use super::{builtin, literals};

/// Most memory one user rule's lazy DFA may use: command texts are short, and hundreds of rules
/// must fit in a few MiB in batch runs. A pattern whose automaton cannot work within it fails to
/// load (docs/rules.md, "Limits").
pub const DFA_CACHE_BYTES: usize = 256 * 1024;

/// Largest NFA a user rule's pattern may compile to (regex-automata's measure of its heap size).
/// `(?:a{100}){100}` and its like would otherwise take gigabytes and abort the process.
pub const NFA_SIZE_BYTES: usize = 1024 * 1024;

/// A compiled rule pattern. Rules match canonical command text (NFKC-normalized, mostly ASCII),
/// so patterns are compiled over bytes with ASCII classes: `\s`, `\w`, `\d`, `\b` and `(?i)` are
/// ASCII, `.` is any byte but `\n`. Unicode tables would make every compiled rule several times
/// larger, and hundreds of rules must fit in a few MiB.
///
/// Deciding needs only "does it match": one forward DFA search with no capture states, stopping
/// at the first match state (earliest). The match span, which `explain` shows, comes from a full
/// `regex` built only when asked.
pub struct Pattern {
    source: Cow<'static, str>,
    engine: Engine,
    full: OnceLock<regex::bytes::Regex>,
}

enum Engine {
    /// A built-in pattern's DFAs, determinized by `build.rs` and read in place from the binary:
    /// a hit costs a scan, not a compile.
    Embedded(super::embedded::Embedded),
    /// A user pattern's lazy DFA, built from its NFA when its file is checked (so size limits
    /// fail there, naming the rule), or on first use for a file read from the rules cache; its
    /// cache of states is made on the first search.
    Lazy(Box<LazyDfa>),
}

/// A lazy DFA and its cache (boxed in `Engine`: it is a kilobyte, a built-in entry 24 bytes).
struct LazyDfa {
    dfa: hybrid::dfa::DFA,
    cache: OnceLock<Mutex<hybrid::dfa::Cache>>,
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

impl Pattern {
    /// Parses and compiles a user pattern.
    pub fn new(source: &str) -> Result<Pattern, String> {
        let hir = literals::check_syntax(source)?;
        Pattern::from_hir(source, &hir)
    }

    /// Compiles a user pattern from its parsed syntax, within the size limits.
    pub fn from_hir(source: &str, hir: &regex_syntax::hir::Hir) -> Result<Pattern, String> {
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(WhichCaptures::None)
                    .nfa_size_limit(Some(NFA_SIZE_BYTES)),
            )
            .build_from_hir(hir)
            .map_err(|e| match e.size_limit() {
                Some(_) => format!(
                    "its automaton is larger than the {} KiB a pattern may use; simplify the pattern or split the rule",
                    NFA_SIZE_BYTES >> 10
                ),
                None => e.to_string(),
            })?;
        let dfa = hybrid::dfa::DFA::builder()
            .configure(
                hybrid::dfa::DFA::config()
                    .cache_capacity(DFA_CACHE_BYTES)
                    // Never give up on a search: when the cache fills, clear it and go on.
                    .minimum_cache_clear_count(None),
            )
            .build_from_nfa(nfa)
            .map_err(|_| {
                format!(
                    "its automaton needs more than the {} KiB of matching memory a pattern may use; simplify the pattern or split the rule",
                    DFA_CACHE_BYTES >> 10
                )
            })?;
        let engine = Engine::Lazy(Box::new(LazyDfa { dfa, cache: OnceLock::new() }));
        Ok(Pattern { source: Cow::Owned(source.to_string()), engine, full: OnceLock::new() })
    }

    /// A built-in pattern from its DFAs in the binary.
    fn embedded(source: &'static str, pieces: builtin::DfaSpans) -> Pattern {
        let engine = Engine::Embedded(super::embedded::Embedded::new(source, pieces));
        Pattern { source: Cow::Borrowed(source), engine, full: OnceLock::new() }
    }

    /// The embedded DFAs of a built-in pattern, for tests of their search.
    #[cfg(test)]
    pub(super) fn embedded_dfas(&self) -> Option<&super::embedded::Embedded> {
        match &self.engine {
            Engine::Embedded(e) => Some(e),
            Engine::Lazy(_) => None,
        }
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.is_match_in(&super::Haystack::new(text))
    }

    /// `is_match`, on a text whose byte pairs are summed up (`Haystack`).
    pub fn is_match_in(&self, hay: &super::Haystack<'_>) -> bool {
        let text = hay.text();
        let input = regex_automata::Input::new(text.as_bytes()).earliest(true);
        let found = match &self.engine {
            Engine::Embedded(embedded) => embedded.is_match(hay),
            Engine::Lazy(lazy) => {
                let cache = lazy.cache.get_or_init(|| Mutex::new(lazy.dfa.create_cache()));
                let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
                lazy.dfa.try_search_fwd(&mut cache, &input).map(|m| m.is_some())
            }
        };
        // An error is not expected (no quit bytes, never gives up); the full regex answers the
        // same question.
        found.unwrap_or_else(|_| self.full().is_match(text.as_bytes()))
    }

    fn full(&self) -> &regex::bytes::Regex {
        self.full.get_or_init(|| {
            regex::bytes::RegexBuilder::new(&self.source)
                .unicode(false)
                .dfa_size_limit(DFA_CACHE_BYTES)
                .build()
                .unwrap_or_else(|e| panic!("rule pattern {:?} compiled once but not now: {e}", self.source))
        })
    }

    /// The byte range of the first match (it may end inside a multi-byte character).
    pub fn find(&self, text: &str) -> Option<(usize, usize)> {
        self.full().find(text.as_bytes()).map(|m| (m.start(), m.end()))
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }
}

/// A rule's pattern, made ready on first use (when the prefilter chooses the rule, so start-up
/// touches no automaton): a built-in one is read from its embedded DFAs; a user one is compiled
/// from its source. A user pattern is checked in full when its file loads (`compile::parse_file`,
/// which keeps what it compiled); one held uncompiled (`user`) comes from the rules cache, made
/// from the same bytes by the same binary, so it passed that check.
#[derive(Debug)]
pub struct LazyRegex {
    pub source: Cow<'static, str>,
    /// The built-in pattern's serialized DFAs.
    embedded: Option<builtin::DfaSpans>,
    /// Boxed: hundreds of built-in rules are set up on every start with their patterns unread.
    compiled: OnceLock<Box<Pattern>>,
}

impl LazyRegex {
    /// A built-in pattern, with its DFA from `build.rs`.
    pub fn builtin(source: &'static str, dfas: builtin::DfaSpans) -> LazyRegex {
        let embedded = Some(dfas).filter(|d| !d.is_empty());
        LazyRegex { source: Cow::Borrowed(source), embedded, compiled: OnceLock::new() }
    }

    pub fn compiled(regex: Pattern) -> LazyRegex {
        let source = Cow::Owned(regex.as_str().to_string());
        LazyRegex { source, embedded: None, compiled: OnceLock::from(Box::new(regex)) }
    }

    /// A user pattern that passed `compile::parse_file`'s checks, compiled on first use.
    pub fn user(source: String) -> LazyRegex {
        LazyRegex { source: Cow::Owned(source), embedded: None, compiled: OnceLock::new() }
    }

    /// Whether its automaton has been made (a pattern the prefilter never chose has none).
    pub fn is_ready(&self) -> bool {
        self.compiled.get().is_some()
    }

    pub fn get(&self) -> &Pattern {
        self.compiled.get_or_init(|| {
            Box::new(match (&self.source, self.embedded) {
                (Cow::Borrowed(source), Some(spans)) => Pattern::embedded(source, spans),
                // A user pattern from the rules cache: the same bytes passed the checks of
                // `compile::parse_file` in this binary, with the same limits, so it compiles. A
                // failure is an internal error (see main's panic hook).
                _ => Pattern::new(&self.source)
                    .unwrap_or_else(|e| panic!("rule pattern {:?} does not compile: {e}", self.source)),
            })
        })
    }
}
