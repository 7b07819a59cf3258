//! Rules, compiled: the `Policy` every decision reads. Rule files are read as written
//! (`schema`), checked and turned into `Rule`s (`compile`); the built-in packs come precompiled
//! (`builtin`). Regexes compile on first use, chosen by a literal prefilter, so a command that
//! mentions no rule's keywords costs no regex compilation at all.

pub mod builtin;
pub mod compile;
pub mod literals;
mod prefilter;
pub mod schema;

use std::borrow::Cow;
use std::sync::OnceLock;

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
    pub file: String,
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Most memory one rule's lazy DFA may use: command texts are short, and hundreds of rules must
/// fit in a few MiB in batch runs.
const DFA_CACHE_BYTES: usize = 256 * 1024;

/// A compiled rule pattern. Rules match canonical command text (NFKC-normalized, mostly ASCII),
/// so patterns are compiled over bytes with ASCII classes: `\s`, `\w`, `\d`, `\b` and `(?i)` are
/// ASCII, `.` is any byte but `\n`. Unicode tables would make every compiled rule several times
/// larger, and hundreds of rules must fit in a few MiB.
#[derive(Debug, Clone)]
pub struct Pattern(regex::bytes::Regex);

impl Pattern {
    pub fn new(source: &str) -> Result<Pattern, regex::Error> {
        regex::bytes::RegexBuilder::new(source).unicode(false).dfa_size_limit(DFA_CACHE_BYTES).build().map(Pattern)
    }

    pub fn is_match(&self, text: &str) -> bool {
        self.0.is_match(text.as_bytes())
    }

    /// The byte range of the first match (it may end inside a multi-byte character).
    pub fn find(&self, text: &str) -> Option<(usize, usize)> {
        self.0.find(text.as_bytes()).map(|m| (m.start(), m.end()))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// A pattern compiled on first use. Syntax is checked when the rule loads.
#[derive(Debug)]
pub struct LazyRegex {
    pub source: Cow<'static, str>,
    compiled: OnceLock<Pattern>,
}

impl LazyRegex {
    pub fn new(source: Cow<'static, str>) -> LazyRegex {
        LazyRegex { source, compiled: OnceLock::new() }
    }

    pub fn compiled(regex: Pattern) -> LazyRegex {
        let lazy = LazyRegex::new(Cow::Owned(regex.as_str().to_string()));
        let _ = lazy.compiled.set(regex);
        lazy
    }

    pub fn get(&self) -> &Pattern {
        // Built-in patterns were checked by build.rs and `rules test`; a failure here is an
        // internal error, which stops the command (see main's panic hook).
        self.compiled.get_or_init(|| {
            Pattern::new(&self.source)
                .unwrap_or_else(|e| panic!("rule pattern {:?} does not compile: {e}", self.source))
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
    pub examples: Vec<Cow<'static, str>>,
    pub counterexamples: Vec<Cow<'static, str>>,
    pub origin: Origin,
    /// Prefilter literals; `None` means the rule is tried on every text.
    pub literals: Option<Vec<Cow<'static, [u8]>>>,
    /// The literals must start the text, not only occur in it.
    pub anchored: bool,
    /// Literal sets every match satisfies at once, checked before the regex runs.
    pub conjuncts: Vec<Vec<Cow<'static, [u8]>>>,
}

impl Rule {
    /// The pack: the id up to its first dot (`git.reset-hard` → `git`).
    pub fn pack(&self) -> &str {
        self.id.split_once('.').map_or(&self.id, |(p, _)| p)
    }

    /// Where in `text` the rule matches, if it fires on it. `segment` supplies the operands
    /// for per-operand conditions.
    pub fn find(&self, text: &str, segment: Option<&Segment>) -> Option<(usize, usize)> {
        // Near misses are rejected by byte searches before the regex runs (or is compiled).
        let bytes = text.as_bytes();
        if !self.conjuncts.iter().all(|set| set.iter().any(|l| contains(bytes, l))) {
            return None;
        }
        let span = self.pattern.get().find(text)?;
        if self.unless.as_ref().is_some_and(|u| u.get().is_match(text)) {
            return None;
        }
        if let Some(seg) = segment
            && (self.operand.is_some() || self.unless_operand.is_some())
        {
            let operands = seg.operands();
            if let Some(o) = &self.operand
                && !operands.iter().any(|w| o.get().is_match(w))
            {
                return None;
            }
            if let Some(u) = &self.unless_operand
                && !operands.is_empty()
                && operands.iter().all(|w| u.get().is_match(w))
            {
                return None;
            }
        }
        Some(span)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// An `[[allow]]` entry: lets a segment (or pipeline, or line) through that would otherwise ask.
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
    /// What the file loosens (allow entries, disables, longer timeouts), one line each.
    pub loosening: Vec<String>,
    /// For files that need trust and loosen something: whether their bytes are trusted.
    pub trust: Option<crate::trust::TrustState>,
}

impl Source {
    pub fn new(layer: Layer, path: String, loaded: bool) -> Source {
        Source { layer, path, loaded, loosening: Vec::new(), trust: None }
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
    prefilter: Prefilter,
}

impl Policy {
    pub fn new(rules: Vec<Rule>, allows: Vec<Allow>, settings: Settings, sources: Vec<Source>) -> Policy {
        let prefilter = Prefilter::new(&rules);
        Policy { rules, allows, settings, sources, notices: Vec::new(), prefilter }
    }

    /// Indexes of the rules for `target` that could match `text`, in rule order.
    pub fn candidates(&self, target: Target, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        self.prefilter.candidates(target, text, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }
}
