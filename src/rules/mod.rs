//! Rules, compiled: the `Policy` every decision reads. Rule files are read as written
//! (`schema`), checked and turned into `Rule`s (`compile`); the built-in packs come precompiled
//! (`builtin`, with their DFAs built at build time). A literal prefilter picks the rules a text
//! could match, so a command that mentions no rule's keywords touches no automaton at all.

pub mod builtin;
pub mod compile;
pub mod literals;
mod prefilter;
pub mod schema;

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

use regex_automata::dfa::{Automaton, sparse};
use regex_automata::hybrid;
use regex_automata::nfa::thompson::{self, WhichCaptures};

pub use schema::{Action, Target};

use prefilter::Prefilter;

use crate::shell::Segment;

/// Where a rules file sits in the layering, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Builtin,
    System,
    User,
    Project,
    Cli,
}

impl Layer {
    /// Whether a file of this layer loosens the rules only while trusted. The user's own file
    /// and the admin's are trusted by where they live; a project file can be written by anyone
    /// with access to the repository (an agent included), and `--rules` by whoever writes argv.
    pub fn needs_trust(self) -> bool {
        matches!(self, Layer::Project | Layer::Cli)
    }

    pub fn name(self) -> &'static str {
        match self {
            Layer::Builtin => "built-in",
            Layer::System => "system",
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Cli => "--rules",
        }
    }
}

/// Where a rule or allow entry was written.
#[derive(Debug, Clone)]
pub struct Origin {
    pub layer: Layer,
    pub file: Cow<'static, str>,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

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
    /// A built-in pattern's sparse DFAs (one, or one per alternative), determinized by
    /// `build.rs` and read in place from the binary: a hit costs a scan, not a compile.
    Embedded(Vec<sparse::DFA<&'static [u8]>>),
    /// A user pattern's lazy DFA, built from its NFA when the file loads (so size limits fail
    /// there, naming the rule); its cache of states is made on the first search.
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
    fn embedded(source: &'static str, spans: builtin::DfaSpans) -> Pattern {
        // Checking the bytes (`from_bytes`) walks every state of the DFA and cost more than the
        // search itself (1.8 M instructions for `rm -rf ~`), on every hit.
        let dfas = spans
            .iter()
            // SAFETY: the bytes are exactly what build.rs's `to_bytes_*` wrote for this target's
            // byte order, with the same regex-automata (one Cargo.lock serves the build script and
            // the binary), so they are a valid serialized sparse DFA. A test deserializes every
            // one of them checked (`compile::tests::embedded_dfas_pass_the_checked_deserializer`).
            .map(|&span| match unsafe { sparse::DFA::from_bytes_unchecked(builtin::dfa_bytes(span)) } {
                Ok((dfa, _)) => dfa,
                Err(e) => panic!("built-in DFA of {source:?} does not deserialize: {e}"),
            })
            .collect();
        Pattern { source: Cow::Borrowed(source), engine: Engine::Embedded(dfas), full: OnceLock::new() }
    }

    pub fn is_match(&self, text: &str) -> bool {
        let input = regex_automata::Input::new(text.as_bytes()).earliest(true);
        let found = match &self.engine {
            Engine::Embedded(dfas) => {
                dfas.iter().try_fold(false, |found, dfa| Ok(found || dfa.try_search_fwd(&input)?.is_some()))
            }
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

/// Literals one of which a text must contain; built-in rules borrow theirs from the binary.
pub type LiteralSet = Cow<'static, [Cow<'static, [u8]>]>;

/// A rule's pattern: a built-in one is read from its embedded DFA on first use (chosen by the
/// prefilter, so start-up touches no DFA); a user one is compiled when its file loads.
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

    pub fn get(&self) -> &Pattern {
        self.compiled.get_or_init(|| {
            Box::new(match (&self.source, self.embedded) {
                (Cow::Borrowed(source), Some(spans)) => Pattern::embedded(source, spans),
                // Not reached: every built-in pattern has its DFA and every user pattern is
                // compiled at load. A failure here is an internal error (see main's panic hook).
                _ => Pattern::new(&self.source)
                    .unwrap_or_else(|e| panic!("rule pattern {:?} does not compile: {e}", self.source)),
            })
        })
    }
}

#[derive(Debug)]
pub struct Rule {
    pub id: Cow<'static, str>,
    pub action: Action,
    pub target: Target,
    pub pattern: LazyRegex,
    pub unless: Option<LazyRegex>,
    pub operand: Option<LazyRegex>,
    pub unless_operand: Option<LazyRegex>,
    pub reason: Cow<'static, str>,
    pub tip: Option<Cow<'static, str>>,
    pub examples: Cow<'static, [Cow<'static, str>]>,
    pub counterexamples: Cow<'static, [Cow<'static, str>]>,
    pub origin: Origin,
    /// Prefilter literals; `None` means the rule is tried on every text.
    pub literals: Option<LiteralSet>,
    /// The literals must start the text, not only occur in it.
    pub anchored: bool,
    /// Literal sets every match satisfies at once, checked before the regex runs.
    pub conjuncts: Cow<'static, [LiteralSet]>,
}

impl Rule {
    /// The pack: the id up to its first dot (`git.reset-hard` → `git`).
    pub fn pack(&self) -> &str {
        self.id.split_once('.').map_or(&self.id, |(p, _)| p)
    }

    /// Whether the rule fires on `text`. `segment` supplies the operands for per-operand
    /// conditions. Only a forward search runs (no match span): `explain` asks for the span
    /// separately, with `span`.
    pub fn fires(&self, text: &str, segment: Option<&Segment>) -> bool {
        // Near misses are rejected by byte searches before the regex runs (or is compiled).
        let bytes = text.as_bytes();
        if !self.conjuncts.iter().all(|set| set.iter().any(|l| contains(bytes, l)))
            || !self.pattern.get().is_match(text)
            || self.unless.as_ref().is_some_and(|u| u.get().is_match(text))
        {
            return false;
        }
        let Some(seg) = segment.filter(|_| self.operand.is_some() || self.unless_operand.is_some()) else {
            return true;
        };
        let operands = seg.operands();
        let some_operand = self.operand.as_ref().is_none_or(|o| operands.iter().any(|w| o.get().is_match(w)));
        let all_excepted = self
            .unless_operand
            .as_ref()
            .is_some_and(|u| !operands.is_empty() && operands.iter().all(|w| u.get().is_match(w)));
        some_operand && !all_excepted
    }

    /// Where the pattern matches `text` (for showing what a hit matched).
    pub fn span(&self, text: &str) -> Option<(usize, usize)> {
        self.pattern.get().find(text)
    }
}

/// Whether `needle` occurs in `haystack`. Command texts are short, where `memmem`'s Rabin-Karp
/// path costs a multiply per byte; finding the needle's last byte with SIMD `memchr` and comparing
/// there is several times faster (the last byte of a literal is rarely a space or a dash).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&last, _)) = needle.split_last() else { return true };
    let n = needle.len();
    if haystack.len() >= 256 {
        return memchr::memmem::find(haystack, needle).is_some();
    }
    memchr::memchr_iter(last, haystack).any(|end| end + 1 >= n && &haystack[end + 1 - n..=end] == needle)
}

/// An `[[allow]]` entry: lets a segment (or pipeline, or line) through that would otherwise ask.
#[cfg(test)]
mod tests {
    use super::contains;

    #[test]
    fn contains_finds_needles_anywhere() {
        assert!(contains(b"git push --force", b"--force"));
        assert!(contains(b"git push --force", b"git"));
        assert!(contains(b"ab", b"b") && contains(b"x", b"") && !contains(b"", b"a"));
        assert!(!contains(b"git push --forc", b"--force"));
        assert!(!contains(b"e", b"ee"));
        let long = "x".repeat(300) + "needle";
        assert!(contains(long.as_bytes(), b"needle") && !contains(long.as_bytes(), b"needles"));
    }
}

#[derive(Debug)]
pub struct Allow {
    pub command: Option<String>,
    pub pattern: Option<Pattern>,
    pub reason: Option<String>,
    pub origin: Origin,
}

impl Allow {
    pub fn covers(&self, text: &str) -> bool {
        self.command.as_deref() == Some(text) || self.pattern.as_ref().is_some_and(|p| p.is_match(text))
    }

    pub fn describe(&self) -> String {
        let what = match (&self.command, &self.pattern) {
            (Some(c), _) => format!("command = {c:?}"),
            (None, Some(p)) => format!("pattern = {:?}", p.as_str()),
            (None, None) => String::new(),
        };
        what + &self.reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default()
    }
}

/// Where an allow entry applies: a place is the chain of nested scripts and of wrappers that
/// change user, host, environment or directory a command runs under (see `decide::place`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum AllowContext {
    /// At top level only (an entry that says nothing).
    #[default]
    Top,
    /// Anywhere.
    Any,
    /// Exactly this place (`ssh prod`, `sudo -u root › bash -c`).
    At(String),
}

impl AllowContext {
    pub fn parse(text: &str) -> Result<AllowContext, String> {
        match text {
            "top" => Ok(AllowContext::Top),
            "any" => Ok(AllowContext::Any),
            t if t.trim().is_empty() || t.trim() != t => Err(format!(
                "`context = {t:?}`: write \"top\", \"any\", or a place as `cmdguard explain` shows it, like \"ssh prod\""
            )),
            t => Ok(AllowContext::At(t.to_string())),
        }
    }

    /// Whether an entry with this context covers a unit at `place` (`None`: a place cmdguard
    /// cannot tell, which only `any` covers).
    pub fn covers(&self, place: Option<&str>) -> bool {
        match self {
            AllowContext::Any => true,
            AllowContext::Top => place == Some(""),
            AllowContext::At(at) => place == Some(at.as_str()),
        }
    }

    /// The context as an entry writes it; `None` for top level, which an entry need not write.
    pub fn written(&self) -> Option<&str> {
        match self {
            AllowContext::Top => None,
            AllowContext::Any => Some("any"),
            AllowContext::At(at) => Some(at),
        }
    }
}

/// Settings after layering.
#[derive(Debug, Clone)]
pub struct Settings {
    pub shell: Option<String>,
    /// Seconds the prompt waits before it denies.
    pub timeout: u64,
    /// Seconds a session grant lasts without use.
    pub session_ttl: u64,
    pub no_tty: compile::NoTty,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings { shell: None, timeout: 120, session_ttl: 8 * 3600, no_tty: compile::NoTty::Deny }
    }
}

impl Settings {
    /// Layers one file's settings over these, key by key.
    pub fn apply(&mut self, file: &compile::FileSettings) {
        if let Some(s) = &file.shell {
            self.shell = Some(s.clone());
        }
        if let Some(t) = file.timeout {
            self.timeout = t;
        }
        if let Some(t) = file.session_ttl {
            self.session_ttl = t;
        }
        if let Some(n) = file.no_tty {
            self.no_tty = n;
        }
    }
}

/// One rules file that was looked for.
#[derive(Debug, Clone)]
pub struct Source {
    pub layer: Layer,
    pub path: String,
    pub loaded: bool,
    /// For files that need trust and loosen something: whether their bytes are trusted.
    pub trust: Option<crate::trust::TrustState>,
}

impl Source {
    pub fn new(layer: Layer, path: String, loaded: bool) -> Source {
        Source { layer, path, loaded, trust: None }
    }
}

/// Every rule and allow entry in force, with the prefilter that picks candidates.
pub struct Policy {
    pub rules: Vec<Rule>,
    pub allows: Vec<Allow>,
    pub settings: Settings,
    pub sources: Vec<Source>,
    /// One line each about files whose loosening is ignored (not trusted, or changed since).
    pub notices: Vec<String>,
    /// Where each of `allows` applies, by index; an entry with none here applies at top level.
    pub allow_contexts: Vec<AllowContext>,
    prefilter: Prefilter,
}

impl Policy {
    pub fn new(rules: Vec<Rule>, allows: Vec<Allow>, settings: Settings, sources: Vec<Source>) -> Policy {
        let prefilter = Prefilter::new(&rules);
        Policy { rules, allows, settings, sources, notices: Vec::new(), allow_contexts: Vec::new(), prefilter }
    }

    /// Where allow entry `i` applies.
    pub fn allow_context(&self, i: usize) -> &AllowContext {
        self.allow_contexts.get(i).unwrap_or(&AllowContext::Top)
    }

    /// Indexes of the rules for `target` that could match `text`, in rule order, into `out`
    /// (cleared first; a buffer kept across calls saves an allocation per text).
    pub fn candidates_into(&self, target: Target, text: &str, out: &mut Vec<usize>) {
        out.clear();
        self.prefilter.candidates(target, text, out);
        out.sort_unstable();
        out.dedup();
    }
}
