//! Shell analysis: from the text (or argv) an agent asked to run to the simple commands that
//! would run, in canonical form. normalize → parse → walk (expand words, unwrap wrappers, analyse
//! nested scripts) → `Analysis`. What cannot be read statically is reported as an `Issue`, and
//! the decision asks instead of passing.

mod analyze;
mod ast;
mod compound;
mod expand;
mod interp;
mod nested;
mod normalize;
mod parse;
mod redirect;
mod unwrap;
mod word;

#[cfg(test)]
mod tests;

pub use normalize::normalize;

/// Longest command text analysed; longer input is asked about, never passed.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// Deepest chain of nested scripts (`bash -c "eval '…'"`) followed.
pub const MAX_NESTING: usize = 12;
/// Most simple commands one command line may hold.
pub const MAX_SEGMENTS: usize = 2_000;

/// One word after expansion: its text, and whether part of it could not be known statically.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Field {
    pub text: String,
    pub dynamic: bool,
}

impl Field {
    pub fn lit(text: impl Into<String>) -> Field {
        Field { text: text.into(), dynamic: false }
    }
}

/// One simple command as rules see it.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// Canonical text: words (program reduced to its basename, quoted only where needed), then
    /// redirections.
    pub text: String,
    pub words: Vec<String>,
    pub redirects: Vec<String>,
    /// Wrappers removed to reach the program, outermost first (`sudo`, `env`, `timeout`).
    pub wrappers: Vec<String>,
    /// Where this command came from: empty at top level, else the chain of nested scripts.
    pub origin: String,
    /// What the analysis resolved or removed, for `explain`.
    pub notes: Vec<String>,
    /// Every word was known statically.
    pub is_static: bool,
    /// Text fed to its standard input by a here-document or here-string, if known.
    pub stdin_text: Option<String>,
}

impl Segment {
    /// The words after the program that are not options (everything after `--`).
    pub fn operands(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut after_dashes = false;
        for w in self.words.iter().skip(1) {
            if after_dashes {
                out.push(w.as_str());
            } else if w == "--" {
                after_dashes = true;
            } else if !(w.starts_with('-') && w.len() > 1) {
                out.push(w.as_str());
            }
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueKind {
    /// The text is not valid shell (or not shell cmdguard can read).
    Unparseable,
    /// Over a length, nesting or size limit.
    TooComplex,
    /// The program or a nested script is only known at run time (`$CMD`, `bash -c "$X"`).
    Dynamic,
}

#[derive(Debug, Clone)]
pub struct Issue {
    pub kind: IssueKind,
    pub detail: String,
}

/// Everything the decision needs to know about one command.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The whole normalized command, then the text of each nested script.
    pub lines: Vec<String>,
    pub segments: Vec<Segment>,
    /// Each pipeline of two or more commands, its segments joined by ` | `.
    pub pipelines: Vec<String>,
    pub issues: Vec<Issue>,
}

/// Analyses a command given as shell text (`-c STRING`).
pub fn analyze_script(text: &str) -> Analysis {
    let mut a = analyze::Analyzer::default();
    a.top_script(text);
    a.finish()
}

/// Analyses a command given as argv (`-- PROG ARGS…`): no shell parses it, but wrappers and
/// nested scripts are followed all the same.
pub fn analyze_argv(argv: &[String]) -> Analysis {
    let mut a = analyze::Analyzer::default();
    a.top_argv(argv);
    a.finish()
}

/// Quotes a word for canonical text: plain words stay as they are.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\' | ';' | '&' | '|' | '<' | '>' | '(' | ')'));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// Joins words into canonical text.
pub fn join(words: &[String]) -> String {
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The last path component of a program name (`/usr/bin/rm` → `rm`).
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().filter(|b| !b.is_empty()).unwrap_or(word)
}
