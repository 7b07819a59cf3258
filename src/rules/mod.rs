//! Rules, compiled: the `Policy` every decision reads. Rule files are read as written
//! (`schema`), checked and turned into `Rule`s (`compile`); the built-in packs come precompiled
//! (`builtin`, with their DFAs built at build time). A literal prefilter picks the rules a text
//! could match, so a command that mentions no rule's keywords touches no automaton at all.

pub mod builtin;
pub mod cache;
pub mod compile;
mod embedded;
mod exempt;
pub mod hooks;
mod lists;
pub mod literals;
mod pattern;
mod prefilter;
pub mod schema;
mod settings;

use std::borrow::Cow;

pub use embedded::copy_hot_dfas;
pub use pattern::{DFA_CACHE_BYTES, LazyRegex, NFA_SIZE_BYTES, Pattern};
pub use schema::{Action, Target};
pub use settings::Settings;

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

pub use lists::{Conjuncts, LiteralSet, LiteralSides, Texts};

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
    pub examples: Texts,
    pub counterexamples: Texts,
    pub origin: Origin,
    /// Prefilter literals; `None` means the rule is tried on every text.
    pub literals: Option<LiteralSet>,
    /// The literals must start the text, not only occur in it.
    pub anchored: bool,
    /// What may stand on each side of each literal in a match.
    pub sides: LiteralSides,
    /// Literal sets every match satisfies at once, checked before the regex runs.
    pub conjuncts: Conjuncts,
    /// First words (spans of the built-in text, sorted) that make `unless` match whatever
    /// follows (`exempt`): the pattern need not run. Empty for rules from files.
    pub exempt: &'static [builtin::Span],
}

impl Rule {
    /// Whether this is the `i`th built-in rule as the binary holds it (its id is that rule's own
    /// text, not a copy): the built-in prefilter index then serves it.
    pub fn is_builtin(&self, i: usize) -> bool {
        match (&self.id, builtin::rules().get(i)) {
            (Cow::Borrowed(id), Some(b)) => std::ptr::eq(id.as_ptr(), builtin::text(b.id).as_ptr()),
            _ => false,
        }
    }

    /// The pack: the id up to its first dot (`git.reset-hard` → `git`).
    pub fn pack(&self) -> &str {
        self.id.split_once('.').map_or(&self.id, |(p, _)| p)
    }

    /// Whether the rule fires on `text`. `segment` supplies the operands for per-operand
    /// conditions. Only a forward search runs (no match span): `explain` asks for the span
    /// separately, with `span`.
    pub fn fires(&self, text: &str, segment: Option<&Segment>) -> bool {
        self.fires_in(&Haystack::new(text), segment)
    }

    /// `fires`, on a text whose byte pairs are already summed up (one `Haystack` serves every
    /// rule tried on the same text).
    pub fn fires_in(&self, hay: &Haystack<'_>, segment: Option<&Segment>) -> bool {
        // Near misses are rejected by byte searches before the regex runs (or is compiled).
        if !self.conjuncts.all_in(hay)
            || self.is_exempt(hay.text())
            || !self.pattern.get().is_match_in(hay)
            || self.unless.as_ref().is_some_and(|u| u.get().is_match_in(hay))
        {
            return false;
        }
        let Some(seg) = segment.filter(|_| self.operand.is_some() || self.unless_operand.is_some()) else {
            return true;
        };
        let operands = seg.operands_from_cwd();
        let some_operand = self.operand.as_ref().is_none_or(|o| operands.iter().any(|w| o.get().is_match(w)));
        let all_excepted = self
            .unless_operand
            .as_ref()
            .is_some_and(|u| !operands.is_empty() && operands.iter().all(|w| u.get().is_match(w)));
        some_operand && !all_excepted
    }

    /// Whether `text` starts with a word that makes `unless` match, whatever follows.
    fn is_exempt(&self, text: &str) -> bool {
        !self.exempt.is_empty()
            && exempt::first_word(text.as_bytes())
                .is_some_and(|w| self.exempt.binary_search_by(|&s| builtin::text_bytes(s).cmp(w)).is_ok())
    }

    /// Where the pattern matches `text` (for showing what a hit matched).
    pub fn span(&self, text: &str) -> Option<(usize, usize)> {
        self.pattern.get().find(text)
    }
}

/// A text rules are tried on, with a summary of the byte pairs in it: most literal checks fail
/// (they are there to reject near misses), and a literal whose first or last two bytes are not
/// a pair of the text is rejected by two bit tests instead of a search. Built once per text,
/// for all the rules the prefilter picks for it.
pub struct Haystack<'a> {
    text: &'a str,
    pairs: [u64; PAIR_WORDS],
}

const PAIR_WORDS: usize = prefilter::index::PAIR_BITS / 64;

fn pair_bit(a: u8, b: u8) -> usize {
    usize::from(prefilter::index::pair_bit(a, b))
}

impl<'a> Haystack<'a> {
    pub fn new(text: &'a str) -> Haystack<'a> {
        let mut pairs = [0u64; PAIR_WORDS];
        for w in text.as_bytes().windows(2) {
            let bit = pair_bit(w[0], w[1]);
            pairs[bit >> 6] |= 1 << (bit & 63);
        }
        Haystack { text, pairs }
    }

    pub fn text(&self) -> &'a str {
        self.text
    }

    #[inline]
    fn has_pair_bit(&self, bit: usize) -> bool {
        self.pairs[bit >> 6] & (1 << (bit & 63)) != 0
    }

    /// Whether the text may hold a literal whose first and last byte pairs have the bits
    /// `pairs` (`index::end_pairs`): `false` is sure, `true` needs a search.
    #[inline]
    pub fn may_hold(&self, pairs: (u16, u16)) -> bool {
        pairs.0 == u16::MAX || (self.has_pair_bit(usize::from(pairs.0)) && self.has_pair_bit(usize::from(pairs.1)))
    }

    /// Whether `needle` occurs in the text. The byte-pair test is inlined into the callers and
    /// answers most calls; the search itself is out of line (its frame is over a kilobyte, which
    /// every call paid for when it was inlined here).
    #[inline]
    pub fn contains(&self, needle: &[u8]) -> bool {
        self.may_hold(prefilter::index::end_pairs(needle)) && search(self.text.as_bytes(), needle)
    }

    /// Whether `needle`, whose end pairs are `pairs` (`index::end_pairs`), occurs with what
    /// `sides` admits around it (`None`: anything). The needle and its sides are asked for
    /// only when the byte pairs leave the answer open.
    #[inline]
    pub fn contains_sided<'s>(
        &self,
        pairs: (u16, u16),
        needle: impl FnOnce() -> &'s [u8],
        sides: impl FnOnce() -> Option<&'s literals::Sides>,
    ) -> bool {
        if !self.may_hold(pairs) {
            return false;
        }
        let needle = needle();
        match sides() {
            None => search(self.text.as_bytes(), needle),
            Some(sides) => search_sided(self.text.as_bytes(), needle, sides),
        }
    }
}

/// Whether `needle` occurs in `haystack` with what `sides` admits around it.
#[inline(never)]
fn search_sided(haystack: &[u8], needle: &[u8], sides: &literals::Sides) -> bool {
    needle.is_empty()
        || starts_of(haystack, needle).any(|at| prefilter::index::admits(sides, haystack, at, needle.len()))
}

#[inline(never)]
fn search(haystack: &[u8], needle: &[u8]) -> bool {
    contains(haystack, needle)
}

/// Whether `needle` occurs in `haystack`. Command texts are short, where `memmem`'s Rabin-Karp
/// path costs a multiply per byte; finding the needle's last byte with SIMD `memchr` and comparing
/// there is several times faster (the last byte of a literal is rarely a space or a dash).
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    if haystack.len() >= 256 {
        return memchr::memmem::find(haystack, needle).is_some();
    }
    starts_of(haystack, needle).next().is_some()
}

/// Where a non-empty `needle` starts in `haystack`, found at each occurrence of its last byte.
fn starts_of<'h>(haystack: &'h [u8], needle: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
    let n = needle.len();
    memchr::memchr_iter(needle[n - 1], haystack)
        .filter(move |&end| end + 1 >= n && &haystack[end + 1 - n..=end] == needle)
        .map(move |end| end + 1 - n)
}

#[cfg(test)]
mod tests {
    use super::contains;

    #[test]
    fn a_haystack_finds_what_a_search_finds() {
        // Its byte-pair summary only rejects early; it never changes the answer.
        let texts = ["git push --force origin main", "rm -rf ~", "", "x", "aaaaab", &"ab ".repeat(200)];
        let needles: [&[u8]; 9] = [b"--force", b"rm", b"", b"x", b"ab", b"aab", b"b a", b"zz", b"force origin"];
        for t in texts {
            let hay = super::Haystack::new(t);
            for n in needles {
                assert_eq!(hay.contains(n), contains(t.as_bytes(), n), "{t:?} {n:?}");
            }
        }
    }

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

/// An `[[allow]]` entry: lets a segment (or pipeline, or line) through that would otherwise ask.
#[derive(Debug)]
pub struct Allow {
    pub command: Option<String>,
    pub pattern: Option<LazyRegex>,
    pub reason: Option<String>,
    pub origin: Origin,
}

impl Allow {
    pub fn covers(&self, text: &str) -> bool {
        self.command.as_deref() == Some(text) || self.pattern.as_ref().is_some_and(|p| p.get().is_match(text))
    }

    pub fn describe(&self) -> String {
        let what = match (&self.command, &self.pattern) {
            (Some(c), _) => format!("command = {c:?}"),
            (None, Some(p)) => format!("pattern = {:?}", p.source),
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

/// One rules file that was looked for.
#[derive(Debug, Clone)]
pub struct Source {
    pub layer: Layer,
    pub path: String,
    pub loaded: bool,
    /// For files that need trust and loosen something: whether their bytes are trusted.
    pub trust: Option<crate::approval::trust::TrustState>,
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

    /// The rules of the targets in `targets` (bit `1 << Target as usize`) that could match
    /// `text`, by target, each list sorted and without repeats. The lists are cleared first;
    /// buffers kept across calls save allocations.
    pub fn candidates_into(&self, text: &str, targets: u8, out: &mut [Vec<usize>; 3]) {
        out.iter_mut().for_each(Vec::clear);
        self.prefilter.candidates(text, targets, out);
        for list in out.iter_mut() {
            list.sort_unstable();
            list.dedup();
        }
    }
}
