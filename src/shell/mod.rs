//! Shell analysis: from the text (or argv) an agent asked to run to the simple commands that
//! would run, in canonical form. normalize → parse → walk (expand words, unwrap wrappers, analyse
//! nested scripts) → `Analysis`. What cannot be read statically is reported as an `Issue`, and
//! the decision asks instead of passing.

mod analyze;
mod ansi_c;
mod ast;
mod brace;
mod catalog;
mod compound;
mod cron;
mod descend;
mod dialect;
mod editors;
mod escapes;
mod expand;
mod few;
mod find;
mod functions;
mod generators;
mod help;
mod interp;
mod keyed;
mod lang;
mod later;
mod literals;
mod nested;
mod normalize;
mod open;
mod options;
mod output;
mod parse;
// The catalogue's file format: `build.rs` reads all of it; the binary uses only `Role`.
#[allow(dead_code)]
mod programs;
mod reading;
mod redirect;
mod sed;
mod source;
mod spare;
mod subcommand;
mod tempdir;
mod unwrap;
mod user_programs;
mod vars;
mod word;
mod wrapper;
mod xargs;

#[cfg(test)]
mod tests;

pub use dialect::Dialect;
pub use normalize::normalize;
use normalize::normalized;
pub use spare::Spare;

/// Longest command text analysed; longer input is asked about, never passed.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// Deepest chain of nested scripts (`bash -c "eval '…'"`) followed.
pub const MAX_NESTING: usize = 12;
/// Most simple commands one command line may hold.
pub const MAX_SEGMENTS: usize = 2_000;
/// Most script text parsed for one command, the command and every nested script counted (each
/// reading of it, when both dialects are read).
pub const MAX_PARSED_BYTES: usize = 96 * 1024;
/// Longest value one word may expand to (`X=$X$X` doubled thirty times is a gigabyte).
pub const MAX_WORD_BYTES: usize = 64 * 1024;
/// Most text all words of one command may expand to, together.
pub const MAX_EXPANDED_BYTES: usize = 1024 * 1024;

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
    /// Set when this command is what an unknown program's operand may carry, not a command
    /// the shell surely runs: its hits ask and never deny. Says where it was read.
    pub possible: Option<String>,
    /// The temporary directory it runs in, when the command entered one (`cd /tmp && …`,
    /// see `tempdir.rs`): relative operands are judged against it.
    pub cwd: Option<String>,
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

    /// The operands as paths from where it runs: a relative one is joined to `cwd` when that
    /// is known (`cd /tmp && rm -rf x` deletes `/tmp/x`).
    pub fn operands_from_cwd(&self) -> Vec<std::borrow::Cow<'_, str>> {
        let relative = |w: &str| !w.is_empty() && !w.starts_with(['/', '~', '$', '-']);
        self.operands()
            .into_iter()
            .map(|w| match &self.cwd {
                Some(dir) if relative(w) => format!("{dir}/{}", without_dot_slash(w)).into(),
                _ => w.into(),
            })
            .collect()
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
    /// Indices of the lines and pipelines read from an unknown program's operands (see
    /// `Segment::possible`).
    pub possible_lines: Vec<usize>,
    pub possible_pipelines: Vec<usize>,
    /// Buffers of the commands analysed before (in a batch), written into again.
    pub spare: Spare,
}

impl Analysis {
    /// Empties it, keeping the vectors' room for the next command.
    pub fn clear(&mut self) {
        // Every field named: a field added later fails to compile here instead of carrying one
        // command's findings into the next of a batch.
        let Analysis { lines, segments, pipelines, issues, possible_lines, possible_pipelines, spare } = self;
        spare.keep_lines(lines);
        spare.segments.append(segments);
        pipelines.clear();
        issues.clear();
        possible_lines.clear();
        possible_pipelines.clear();
    }

    /// Whether a unit was only guessed from an unknown program's operands.
    pub fn is_possible(&self, segment: Option<usize>, pipeline: Option<usize>, line: Option<usize>) -> bool {
        segment.is_some_and(|i| self.segments[i].possible.is_some())
            || pipeline.is_some_and(|i| self.possible_pipelines.contains(&i))
            || line.is_some_and(|i| self.possible_lines.contains(&i))
    }
}

/// Analyses a command given as shell text (`-c STRING`) for a shell that may be bash or dash:
/// where they read it differently, both readings count.
pub fn analyze_script(text: &str) -> Analysis {
    analyze_script_in(text, Dialect::Both)
}

/// Analyses shell text as the shell of `dialect` reads it.
pub fn analyze_script_in(text: &str, dialect: Dialect) -> Analysis {
    let mut out = Analysis::default();
    analyze_script_into(text, dialect, &mut out);
    out
}

/// `analyze_script_in` into `out`, which is cleared first: a batch reuses one `Analysis`, and
/// its vectors, for every command.
pub fn analyze_script_into(text: &str, dialect: Dialect, out: &mut Analysis) {
    out.clear();
    let mut a = out.spare.analyzer.take().unwrap_or_default();
    a.out = std::mem::take(out);
    a.top_script(text, dialect);
    *out = std::mem::take(&mut a.out);
    a.reset();
    out.spare.analyzer = Some(a);
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
    let mut out = String::with_capacity(word.len() + 2);
    quote_into(&mut out, word);
    out
}

/// Appends `word` quoted as `quote` quotes it: canonical text is written into one string, not
/// a string per word.
pub fn quote_into(out: &mut String, word: &str) {
    if is_plain(word) {
        out.push_str(word);
        return;
    }
    out.push('\'');
    for (i, piece) in word.split('\'').enumerate() {
        if i > 0 {
            out.push_str(r"'\''");
        }
        out.push_str(piece);
    }
    out.push('\'');
}

/// Whether a word reads as itself unquoted: not empty, no blanks, quotes or shell operators.
fn is_plain(word: &str) -> bool {
    if word.is_ascii() {
        // One bit test a byte, where `char::is_whitespace` and a `matches!` took a dozen.
        return !word.is_empty() && !word.bytes().any(|b| (QUOTED[usize::from(b >> 6)] >> (b & 63)) & 1 == 1);
    }
    !word.chars().any(|c| c.is_whitespace() || (c.is_ascii() && (QUOTED[c as usize >> 6] >> (c as u32 & 63)) & 1 == 1))
}

/// The ASCII characters a word is quoted for (the blanks `char::is_whitespace` counts, quotes,
/// `\`, `;&|<>()`), as bit `c % 64` of word `c / 64`.
const QUOTED: [u64; 2] = {
    let chars = b" \t\n\x0b\x0c\r'\"\\;&|<>()";
    let mut set = [0u64; 2];
    let mut i = 0;
    while i < chars.len() {
        set[(chars[i] >> 6) as usize] |= 1 << (chars[i] & 63);
        i += 1;
    }
    set
};

/// `bytes` quoted for a person to paste into bash or zsh: as `quote` does when they are UTF-8
/// with no control characters, else as `$'…'`, with every other byte as `\xHH`, so bytes that
/// are not text survive the copy exactly.
pub fn quote_bytes(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.chars().any(char::is_control)
    {
        return quote(text);
    }
    let mut out = String::from("$'");
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

/// Joins words into canonical text.
pub fn join(words: &[String]) -> String {
    let mut out = String::with_capacity(words.iter().map(|w| w.len() + 1).sum());
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        quote_into(&mut out, w);
    }
    out
}

/// Whether the shell would match `word` against file names: it holds `*`, `?` or a `[…]`
/// (`/usr/bin/r? -rf ~`, `git re*`).
pub(super) fn is_glob_pattern(word: &str) -> bool {
    // Bytes: the three are ASCII, and a `char` array pattern costs a searcher a call.
    word.bytes().any(|b| b == b'*' || b == b'?')
        || word.bytes().position(|b| b == b'[').is_some_and(|i| word.as_bytes()[i + 1..].contains(&b']'))
}

/// `path` without its leading `./` (every one of them, as `trim_start_matches("./")` removes
/// them, without building a substring searcher for each call).
fn without_dot_slash(mut path: &str) -> &str {
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path
}

/// The last path component of a program name (`/usr/bin/rm` → `rm`).
/// A byte search: `str::rsplit` with a `char` pattern cost about 150 instructions a call, and
/// the analysis asks for the basename of most words it reads.
pub fn basename(word: &str) -> &str {
    match word.as_bytes().iter().rposition(|&b| b == b'/') {
        Some(slash) if slash + 1 < word.len() => &word[slash + 1..],
        _ => word,
    }
}

/// Which list of the program catalogue a program is on, for `explain`.
pub fn program_list(program: &str) -> Option<String> {
    let role = |r: catalog::Role| match r {
        catalog::Role::Wrapper => "a wrapper: runs the command its operands form",
        catalog::Role::Carrier => "a carrier: some options carry a command it runs",
        catalog::Role::Data => "data: its operands are not read for commands",
        catalog::Role::Analysed => "read in code by the analysis",
    };
    match catalog::find(program) {
        Some(p) => {
            let about = if p.about.is_empty() { String::new() } else { format!(" ({})", p.about) };
            Some(format!("`{program}` is {}{about}, listed in {}", role(p.role), p.file))
        }
        None if catalog::named_by_rules(program) => Some(format!("`{program}` is named by the built-in rules")),
        None => Some(format!("`{program}` is on no list: its operands are read for commands they may carry")),
    }
}

/// Checks a `[[program]]` entry of a rules file (TOML text): the message says what is wrong.
pub fn check_program(text: &str) -> Result<(), String> {
    catalog::parse_user(text, "").map(|_| ())
}

/// The names a `[[program]]` entry is about, for review (`cmdguard trust`).
pub fn program_names(text: &str) -> String {
    match toml::from_str::<programs::RawProgram>(text) {
        Ok(p) => p.names.join(", "),
        Err(_) => "(unreadable)".into(),
    }
}

/// Installs the `[[program]]` entries of the rules files loaded, with the file of each.
pub fn add_programs(entries: &[(String, String)]) {
    catalog::add_user(entries);
}
