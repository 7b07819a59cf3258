//! The walk over the syntax tree: every simple command that may run becomes a `Segment`, nested
//! scripts (substitutions, `bash -c`, `eval`, `ssh host cmd`, interpreter one-liners, here-docs
//! fed to a shell) are walked recursively, and pipelines are recorded for pipeline rules.

use std::collections::HashMap;

use super::ast::{Command, Pipeline, Script, Simple};
use super::nested::{Nested, NestedKind, StdinUse};
use super::{Analysis, Field, Issue, IssueKind, MAX_INPUT_BYTES, MAX_NESTING, MAX_SEGMENTS, Segment};

#[derive(Default)]
pub struct Analyzer {
    /// Variables assigned literally earlier in this command; `None` once assigned something
    /// that cannot be known.
    pub(super) env: HashMap<String, Option<String>>,
    out: Analysis,
    depth: usize,
    origin: Vec<String>,
    /// What a command at the start of a pipeline reads on standard input: cmdguard's own input
    /// at top level (the agent's, so unknown), or what a compound command is fed.
    stdin: Option<Field>,
    /// Set while expanding when a word takes text decoded at run time (`$(… | base64 -d)`, or a
    /// variable assigned such text); read and cleared by the command that owns the words.
    pub(super) decoded: bool,
    /// Variables assigned decoded text earlier in this command.
    pub(super) decoded_vars: std::collections::HashSet<String>,
}

/// A redirection after expansion: `2>` and its target.
struct Redir {
    op: String,
    target: Field,
    feeds_stdin: bool,
}

impl Redir {
    /// `< file` (or `0< file`): standard input is read from a file.
    fn reads_file(&self) -> bool {
        self.op.trim_start_matches(|c: char| c.is_ascii_digit()) == "<"
    }
}

/// What standard input holds after `redirs`, given what it held before: a here-document or
/// here-string body, nothing known for a file (it is read like a script file operand), or the
/// inherited input.
fn input_after(redirs: &[Redir], inherited: Option<Field>) -> Option<Field> {
    match redirs.iter().rev().find(|r| r.feeds_stdin || r.reads_file()) {
        Some(r) if r.feeds_stdin => Some(r.target.clone()),
        Some(_) => None,
        None => inherited,
    }
}

/// The input cmdguard itself was given: the agent controls it, so it is never known.
fn own_input() -> Option<Field> {
    Some(Field { text: "cmdguard's standard input".into(), dynamic: true })
}

impl Analyzer {
    pub fn finish(self) -> Analysis {
        self.out
    }

    pub(super) fn issue(&mut self, kind: IssueKind, detail: String) {
        if !self.out.issues.iter().any(|i| i.kind == kind && i.detail == detail) {
            self.out.issues.push(Issue { kind, detail });
        }
    }

    pub fn top_script(&mut self, text: &str) {
        if text.len() > MAX_INPUT_BYTES {
            self.issue(
                IssueKind::TooComplex,
                format!("the command is {} bytes long, over the limit of {MAX_INPUT_BYTES}", text.len()),
            );
            return;
        }
        let normalized = super::normalize(text);
        self.stdin = own_input();
        self.script_text(&normalized);
    }

    pub fn top_argv(&mut self, argv: &[String]) {
        let total: usize = argv.iter().map(|a| a.len() + 1).sum();
        if total > MAX_INPUT_BYTES {
            self.issue(
                IssueKind::TooComplex,
                format!("the command is {total} bytes long, over the limit of {MAX_INPUT_BYTES}"),
            );
            return;
        }
        let fields: Vec<Field> = argv.iter().map(|a| Field::lit(super::normalize(a))).collect();
        let words: Vec<String> = fields.iter().map(|f| f.text.clone()).collect();
        self.out.lines.push(super::join(&words));
        self.command_fields(fields, Vec::new(), own_input());
    }

    /// Parses and walks script text (top level or nested).
    fn script_text(&mut self, text: &str) {
        self.out.lines.push(text.to_string());
        match super::parse::parse(text) {
            Ok(script) => self.walk_script(&script),
            Err(e) => {
                let at = match self.origin.last() {
                    Some(o) => format!(" (in {o})"),
                    None => String::new(),
                };
                self.issue(
                    IssueKind::Unparseable,
                    format!("cannot parse the command{at}: {} at character {}", e.message, e.offset + 1),
                );
            }
        }
    }

    fn walk_script(&mut self, script: &Script) {
        for and_or in &script.0 {
            for pipeline in &and_or.0 {
                self.walk_pipeline(pipeline);
            }
        }
    }

    fn walk_pipeline(&mut self, pipeline: &Pipeline) {
        let mut texts = Vec::new();
        let mut piped = self.stdin.clone();
        for (i, cmd) in pipeline.0.iter().enumerate() {
            let before = self.out.segments.len();
            let text = self.walk_command(cmd, piped.take());
            if let Some(t) = text {
                texts.push(t);
            }
            if i + 1 == pipeline.0.len() {
                break;
            }
            // What the next command reads: known for `echo`/`printf`/`cat <<EOF`, else unknown.
            let added = &self.out.segments[before..];
            let known = match (cmd, added) {
                (Command::Simple(_), [seg]) => trivial_output(seg),
                _ => None,
            };
            piped = Some(known.map_or_else(
                || {
                    let shown = added.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("; ");
                    Field { text: format!("the output of `{shown}`"), dynamic: true }
                },
                Field::lit,
            ));
        }
        if texts.len() > 1 {
            self.out.pipelines.push(texts.join(" | "));
        }
    }

    fn walk_command(&mut self, cmd: &Command, piped: Option<Field>) -> Option<String> {
        match cmd {
            Command::Simple(simple) => self.walk_simple(simple, piped),
            Command::Compound { kind, bodies, words, redirects } => {
                let before = self.out.segments.len();
                for w in words {
                    self.expand(w);
                }
                let (input, redirs): (Vec<Redir>, Vec<Redir>) = redirects
                    .iter()
                    .map(|r| Redir {
                        op: format!("{}{}", r.fd, r.op),
                        target: self.expand_joined(&r.target),
                        feeds_stdin: r.feeds_stdin(),
                    })
                    .partition(|r| r.feeds_stdin || r.reads_file());
                // The body's commands read what the compound is fed (`curl … | (sh)`).
                let outer = std::mem::replace(&mut self.stdin, input_after(&input, piped));
                for body in bodies {
                    self.walk_script(body);
                }
                self.stdin = outer;
                // `{ …; } > file` writes the file whatever the body does: rules see `: > file`.
                if !redirs.is_empty() {
                    self.command_fields(vec![Field::lit(":")], redirs, None);
                }
                let inner: Vec<String> = self.out.segments[before..].iter().map(|s| s.text.clone()).collect();
                let (open, close) = if *kind == "(" { ("(", ")") } else { ("{", "}") };
                Some(format!("{open} {} {close}", inner.join("; ")))
            }
        }
    }

    fn walk_simple(&mut self, cmd: &Simple, piped: Option<Field>) -> Option<String> {
        let values: Vec<(String, Field, bool)> = cmd
            .assigns
            .iter()
            .map(|a| {
                self.decoded = false;
                let value = self.expand_joined(&a.value);
                (a.name.clone(), value, std::mem::take(&mut self.decoded))
            })
            .collect();
        let redirs: Vec<Redir> = cmd
            .redirects
            .iter()
            .map(|r| Redir {
                op: format!("{}{}", r.fd, r.op),
                target: self.expand_joined(&r.target),
                feeds_stdin: r.feeds_stdin(),
            })
            .collect();
        let mut fields: Vec<Field> = cmd.words.iter().flat_map(|w| self.expand(w)).collect();
        let words_decoded = std::mem::take(&mut self.decoded);
        if cmd.words.is_empty() {
            for (name, value, decoded) in values {
                if decoded {
                    self.decoded_vars.insert(name.clone());
                } else {
                    self.decoded_vars.remove(&name);
                }
                self.env.insert(name, (!value.dynamic).then_some(value.text));
            }
            // `> file` alone truncates the file, as `: > file` does: rules see it that way.
            return if redirs.is_empty() { None } else { self.command_fields(vec![Field::lit(":")], redirs, None) };
        }
        if fields.is_empty() {
            // Every word expanded to nothing (`$EMPTY`): nothing runs, unless it is unknown.
            fields.push(Field::lit(""));
        }
        if words_decoded {
            if is_declaration(&fields[0].text) {
                // `export TOKEN=$(… | base64 -d)` only stores it; using it later is what asks.
                for f in &fields[1..] {
                    if let Some((name, _)) = f.text.split_once('=') {
                        self.decoded_vars.insert(name.to_string());
                    }
                }
            } else {
                // `git reset $(echo LS1oYXJk | base64 -d)`: words that exist only after decoding
                // are hidden from every rule on purpose.
                let shown = fields.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" ");
                self.issue(IssueKind::Dynamic, format!("words are decoded at run time: {shown}"));
            }
        }
        self.track_declarations(&fields);
        self.command_fields(fields, redirs, piped)
    }

    /// `export X=rm`, `local X=…`, `unset X`: keep the variable table current.
    fn track_declarations(&mut self, fields: &[Field]) {
        let program = super::basename(&fields[0].text);
        if is_declaration(program) {
            for f in &fields[1..] {
                if let Some((name, value)) = f.text.split_once('=') {
                    self.env.insert(name.to_string(), (!f.dynamic).then(|| value.to_string()));
                }
            }
        } else if program == "unset" {
            for f in &fields[1..] {
                self.env.insert(f.text.clone(), Some(String::new()));
            }
        }
    }

    /// One simple command from its expanded words: unwrap, record, follow nested scripts.
    fn command_fields(&mut self, fields: Vec<Field>, redirs: Vec<Redir>, piped: Option<Field>) -> Option<String> {
        if self.out.segments.len() >= MAX_SEGMENTS {
            self.issue(IssueKind::TooComplex, format!("the command holds more than {MAX_SEGMENTS} simple commands"));
            return None;
        }
        let u = super::unwrap::unwrap(fields);
        if let Some(limit) = &u.limit {
            self.issue(IssueKind::TooComplex, limit.clone());
        }
        let mut words: Vec<String> = u.words.iter().map(|f| f.text.clone()).collect();
        let program = &u.words[0];
        // An npm package (`@scope/cli`, run by npx) is a name, not a path.
        let base = if program.text.starts_with('@') {
            program.text.clone()
        } else {
            super::basename(&program.text).to_string()
        };
        if program.dynamic && !is_known_program(&program.text) {
            self.issue(
                IssueKind::Dynamic,
                format!("the program `{}` is only known when the command runs", program.text),
            );
        }
        let mut notes = u.notes;
        let mut dynamic: Vec<bool> = u.words.iter().map(|f| f.dynamic).collect();
        if ["/etc/init.d/", "/etc/rc.d/init.d/", "/etc/rc.d/"].iter().any(|dir| words[0].starts_with(dir)) {
            // An init script is a service: `/etc/init.d/ssh stop` reads `service ssh stop`.
            notes.push(format!("init script {} read as `service {base}`", words[0]));
            words.splice(0..1, ["service".to_string(), base]);
            dynamic.insert(0, false);
        } else if base != words[0] {
            notes.push(format!("program {} reduced to {base}", words[0]));
            words[0] = base;
        }
        // Substitution placeholders (`<(curl …)`) read as the single words they are.
        let shown: Vec<String> =
            words.iter().zip(&dynamic).map(|(w, d)| if *d { w.clone() } else { super::quote(w) }).collect();
        let mut text = shown.join(" ");
        for r in &redirs {
            // A here-document's body reads as one quoted word, its lines joined by spaces, so rules
            // on the program can see what it is fed (`psql << 'DROP TABLE users;'`).
            let shown = match (r.op.ends_with("<<") || r.op.ends_with("<<-"), r.target.dynamic) {
                (true, false) => super::quote(r.target.text.split_whitespace().collect::<Vec<_>>().join(" ").as_str()),
                (true, true) => "…".to_string(),
                (false, _) => super::quote(&r.target.text),
            };
            text.push_str(&format!(" {} {shown}", r.op));
        }
        let here = redirs.iter().rev().find(|r| r.feeds_stdin).map(|r| r.target.clone());
        let input = input_after(&redirs, piped);
        let seg = Segment {
            text: text.clone(),
            redirects: redirs.iter().map(|r| format!("{} {}", r.op, r.target.text)).collect(),
            wrappers: u.wrappers,
            origin: self.origin.join(" › "),
            notes,
            is_static: u.words.iter().all(|f| !f.dynamic),
            stdin_text: here.as_ref().filter(|h| !h.dynamic).map(|h| h.text.clone()),
            words,
        };
        self.out.segments.push(seg);
        for n in u.nested {
            self.nested(n);
        }
        if let Some(reader) = u.stdin
            && let Some(body) = input
        {
            let kind = match reader {
                StdinUse::Shell => NestedKind::Script(body),
                StdinUse::Code(lang) => NestedKind::Code(lang, body),
            };
            self.nested(Nested { origin: format!("{} reading its input", u.words[0].text), kind });
        }
        Some(text)
    }

    /// Walks a substitution; returns its output when it is trivially known (`$(echo rm)`) and the
    /// canonical text of its commands.
    /// Walks a command substitution; returns its output when trivially known, how it reads, and
    /// whether it decodes hidden text.
    pub(super) fn walk_subst(&mut self, script: &Script) -> (Option<String>, String, bool) {
        let before = self.out.segments.len();
        self.walk_nested_script(script, "$(…)");
        let added = &self.out.segments[before.min(self.out.segments.len())..];
        let shown = added.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("; ");
        let single = matches!(script.0.as_slice(), [a] if matches!(a.0.as_slice(), [p] if matches!(p.0.as_slice(), [Command::Simple(_)])));
        let out = match added {
            [seg] if single => trivial_output(seg).map(|o| o.trim_end_matches('\n').to_string()),
            _ => None,
        };
        let decodes = out.is_none() && added.iter().any(decodes);
        (out, shown, decodes)
    }

    pub(super) fn walk_nested_script(&mut self, script: &Script, label: &str) {
        if !self.descend(label) {
            return;
        }
        self.walk_script(script);
        self.ascend();
    }

    fn descend(&mut self, label: &str) -> bool {
        if self.depth >= MAX_NESTING {
            self.issue(IssueKind::TooComplex, format!("scripts are nested more than {MAX_NESTING} deep"));
            return false;
        }
        self.depth += 1;
        self.origin.push(label.to_string());
        true
    }

    fn ascend(&mut self) {
        self.depth -= 1;
        self.origin.pop();
    }

    fn nested(&mut self, n: Nested) {
        if !self.descend(&n.origin) {
            return;
        }
        match n.kind {
            NestedKind::Script(f) if f.dynamic => {
                self.issue(
                    IssueKind::Dynamic,
                    format!("{} runs a script only known when the command runs: {}", n.origin, f.text),
                );
            }
            NestedKind::Script(f) => self.script_text(&f.text),
            NestedKind::Argv(fields) => {
                // `docker exec -i c sh`, `find … -exec sh`: the command reads the same input.
                self.command_fields(fields, Vec::new(), self.stdin.clone());
            }
            NestedKind::Code(lang, f) if f.dynamic => {
                self.issue(
                    IssueKind::Dynamic,
                    format!("{} runs {lang:?} code only known when the command runs: {}", n.origin, f.text),
                );
            }
            NestedKind::Code(lang, f) => {
                for found in super::interp::extract(lang, &f.text) {
                    self.nested(Nested { origin: format!("{lang:?} code").to_lowercase(), kind: found });
                }
            }
            NestedKind::Dynamic(what) => {
                let origin = self.origin[..self.origin.len() - 1].join(" › ");
                let place = if origin.is_empty() { String::new() } else { format!(" (in {origin})") };
                self.issue(IssueKind::Dynamic, format!("{what}{place}"));
            }
        }
        self.ascend();
    }
}

/// A dynamic program word whose basename is still plain text: `$HOME/bin/tool`, `${DIR}/x`.
fn is_known_program(text: &str) -> bool {
    let Some((dir, base)) = text.split_once('/') else { return false };
    let name = dir.trim_start_matches('$').trim_start_matches('{').trim_end_matches('}');
    let plain_var =
        dir.starts_with('$') && !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    plain_var && !base.is_empty() && !base.ends_with('/') && !base.contains(['$', '`', '(', ')', '{', '}'])
}

/// What a simple command writes to standard output, when that is plain from its words:
/// `echo`, `printf` and `cat` of a here-document.
fn is_declaration(program: &str) -> bool {
    matches!(super::basename(program), "export" | "declare" | "typeset" | "local" | "readonly")
}

/// Whether a simple command decodes hidden text (base64, hex, reversed, compressed).
fn decodes(seg: &Segment) -> bool {
    let Some(program) = seg.words.first() else { return false };
    let args = &seg.words[1..];
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    match program.as_str() {
        "base64" | "base32" | "basenc" => has(&["-d", "--decode", "-D"]),
        "xxd" => has(&["-r", "-revert"]),
        "openssl" => has(&["-d", "base64", "-base64", "enc"]),
        "rev" | "uudecode" | "zcat" | "gunzip" | "bzcat" | "xzcat" | "zstdcat" => true,
        "gzip" | "bzip2" | "xz" | "zstd" => has(&["-d", "--decompress", "-dc", "-cd"]),
        _ => false,
    }
}

pub fn trivial_output(seg: &Segment) -> Option<String> {
    if !seg.is_static || seg.redirects.iter().any(|r| r.starts_with('>') || r.starts_with("1>") || r.starts_with("&>"))
    {
        return None;
    }
    let args = &seg.words[1..];
    match seg.words[0].as_str() {
        "echo" => {
            let mut i = 0;
            let mut escapes = false;
            let mut newline = true;
            while let Some(flag) =
                args.get(i).filter(|a| a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c)))
            {
                newline &= !flag.contains('n');
                escapes = flag.contains('e') || (escapes && !flag.contains('E'));
                i += 1;
            }
            let joined = args[i..].join(" ");
            let mut out = if escapes { super::nested::unescape(&joined) } else { joined };
            if newline {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => {
            let format = args.first()?;
            Some(super::nested::printf(format, &args[1..]))
        }
        "cat" if seg.words.len() == 1 => seg.stdin_text.clone(),
        _ => None,
    }
}
