//! The walk over the syntax tree: every simple command that may run becomes a `Segment`, nested
//! scripts (substitutions, `bash -c`, `eval`, `ssh host cmd`, interpreter one-liners, here-docs
//! fed to a shell) are walked recursively, and pipelines are recorded for pipeline rules.

use std::borrow::Cow;
use std::collections::HashMap;

use super::ast::{Command, Pipeline, Script, Simple};
use super::dialect::Dialect;
use super::nested::{Nested, NestedKind, StdinUse};
use super::output::is_declaration;
use super::{Analysis, Field, Issue, IssueKind, MAX_INPUT_BYTES, MAX_SEGMENTS, Segment};

#[derive(Default)]
pub struct Analyzer {
    /// Variables assigned literally earlier in this command; `None` once assigned something
    /// that cannot be known.
    pub(super) env: HashMap<String, Option<String>>,
    pub(super) out: Analysis,
    pub(super) depth: usize,
    pub(super) origin: Vec<String>,
    /// What a command at the start of a pipeline reads on standard input: cmdguard's own input
    /// at top level (the agent's, so unknown), or what a compound command is fed.
    pub(super) stdin: Input,
    /// Set while expanding when a word takes text decoded at run time (`$(… | base64 -d)`, or a
    /// variable assigned such text); read and cleared by the command that owns the words.
    pub(super) decoded: bool,
    /// Set while expanding when an unquoted expansion's value is not known: it may split into
    /// several words (`kubectl $x --help` may run `kubectl delete ns prod -- --help`). A simple
    /// command's words are expanded with it cleared, and it holds theirs while that command is
    /// judged; commands walked meanwhile (`$(…)`) put back what they found.
    pub(super) split_unknown: bool,
    /// Variables assigned decoded text earlier in this command.
    pub(super) decoded_vars: std::collections::HashSet<String>,
    /// Variables declared integer (`declare -i`): bash evaluates what is assigned to them.
    pub(super) integers: std::collections::HashSet<String>,
    /// The dialect of the text being walked: bash or dash (`Both` only before the first read).
    pub(super) dialect: Dialect,
    /// Walking dash's second reading of text bash read first: its parse errors ask no more.
    pub(super) second: bool,
    /// Set when the text walked holds a construct the two dialects read differently.
    pub(super) sensitive: bool,
    /// Work done so far, against the budgets in `mod.rs`.
    pub(super) parsed: usize,
    pub(super) expanded: usize,
    /// A budget ran out: the command asks, and nothing more is walked.
    pub(super) exhausted: bool,
    /// Set while reading what an unknown program's operand may carry (`shell::open`): where.
    pub(super) possible: Option<String>,
    /// How many guesses deep the walk is (see `descend::MAX_GUESSES`).
    pub(super) guesses: usize,
    /// Names declared references (`declare -n`): their values are never known here.
    pub(super) namerefs: std::collections::HashSet<String>,
    /// Programs given a path with `hash -p PATH NAME`.
    pub(super) hashed: HashMap<String, Option<String>>,
    /// Files this command writes with known text (`echo 'cmd' > x.sh`), by path.
    pub(super) written: HashMap<String, String>,
    /// Names whose value is never known here (see `vars.rs`).
    pub(super) opaque: std::collections::HashSet<String>,
    /// Names declared `readonly`: assigning them fails and keeps the value.
    pub(super) readonly: std::collections::HashSet<String>,
    /// Every name assigned so far, in order (function bodies read what they assign from it).
    pub(super) assigned: Vec<String>,
    /// Function bodies being walked: `local` assigns only inside one.
    pub(super) in_function: usize,
    /// `cd` may not be the builtin here (a function, an alias or `enable -n` named it), so no
    /// `cd` says where the command runs (`tempdir.rs`).
    pub(super) cd_redefined: bool,
    /// Functions defined so far, by name (see `functions.rs`).
    pub(super) functions: HashMap<String, Vec<Script>>,
    /// Functions whose call is being walked.
    pub(super) calling: Vec<String>,
    /// The positional parameters inside a function called here; `None` where unknown.
    pub(super) positional: Option<Vec<Field>>,
}

/// A redirection after expansion: `2>` and its target.
pub(super) struct Redir {
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

/// What a command reads on standard input, if anything is known of it. Every pipeline at top
/// level starts with cmdguard's own input, borrowed rather than copied for each.
pub(super) type Input = Option<Cow<'static, Field>>;

/// What standard input holds after `redirs`, given what it held before: a here-document or
/// here-string body, nothing known for a file (it is read like a script file operand), or the
/// inherited input.
fn input_after(redirs: &[Redir], inherited: Input) -> Input {
    match redirs.iter().rev().find(|r| r.feeds_stdin || r.reads_file()) {
        Some(r) if r.feeds_stdin => Some(Cow::Owned(r.target.clone())),
        Some(_) => None,
        None => inherited,
    }
}

/// The input cmdguard itself was given: the agent controls it, so it is never known.
fn own_input() -> Input {
    static OWN: std::sync::LazyLock<Field> =
        std::sync::LazyLock::new(|| Field { text: "cmdguard's standard input".into(), dynamic: true });
    Some(Cow::Borrowed(&OWN))
}

impl Analyzer {
    pub fn finish(self) -> Analysis {
        self.out
    }

    /// Makes it what `Analyzer::default()` makes (`out` aside), for the next command of a
    /// batch: kept in a box, it is not built and moved again for each.
    pub(super) fn reset(&mut self) {
        // Every field named: one added later fails to compile here instead of carrying one
        // command's state into the next.
        let Analyzer {
            env,
            out: _,
            depth,
            origin,
            stdin,
            decoded,
            split_unknown,
            decoded_vars,
            integers,
            dialect,
            second,
            sensitive,
            parsed,
            expanded,
            exhausted,
            possible,
            guesses,
            namerefs,
            hashed,
            written,
            opaque,
            readonly,
            assigned,
            in_function,
            cd_redefined,
            functions,
            calling,
            positional,
        } = self;
        // Tables are made anew: one kept large would be dear to clone for every pipeline.
        *env = HashMap::default();
        *depth = 0;
        origin.clear();
        *stdin = None;
        *decoded = false;
        *split_unknown = false;
        *decoded_vars = Default::default();
        *integers = Default::default();
        *dialect = Dialect::default();
        *second = false;
        *sensitive = false;
        *parsed = 0;
        *expanded = 0;
        *exhausted = false;
        *possible = None;
        *guesses = 0;
        *namerefs = Default::default();
        *hashed = HashMap::default();
        *written = HashMap::default();
        *opaque = Default::default();
        *readonly = Default::default();
        assigned.clear();
        *in_function = 0;
        *cd_redefined = false;
        *functions = HashMap::default();
        calling.clear();
        *positional = None;
    }

    pub(super) fn issue(&mut self, kind: IssueKind, detail: String) {
        if !self.out.issues.iter().any(|i| i.kind == kind && i.detail == detail) {
            self.out.issues.push(Issue { kind, detail });
        }
    }

    /// Whether bash's reading applies to a construct met here (and notes that the two
    /// dialects differ on this text).
    pub(super) fn bash(&mut self) -> bool {
        self.sensitive = true;
        self.dialect != Dialect::Dash
    }

    /// Stops the walk: a budget ran out, and the command asks.
    pub(super) fn exhaust(&mut self, what: String) {
        self.issue(IssueKind::TooComplex, what);
        self.exhausted = true;
    }

    pub fn top_script(&mut self, text: &str, dialect: Dialect) {
        if text.len() > MAX_INPUT_BYTES {
            self.issue(
                IssueKind::TooComplex,
                format!("the command is {} bytes long, over the limit of {MAX_INPUT_BYTES}", text.len()),
            );
            return;
        }
        self.stdin = own_input();
        self.script_in(text, dialect);
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
        let fields: Vec<Field> = argv.iter().map(|a| Field::lit(a.clone())).collect();
        let words: Vec<String> = fields.iter().map(|f| super::normalize(&f.text)).collect();
        self.out.lines.push(super::join(&words));
        // A shell the command starts reads cmdguard's own input (`bash -c sh`).
        self.stdin = own_input();
        self.command_fields(fields, Vec::new(), own_input());
    }

    pub(super) fn walk_script(&mut self, script: &Script) {
        for and_or in &script.0 {
            for (i, pipeline) in and_or.0.iter().enumerate() {
                if i == 0 {
                    self.walk_pipeline(pipeline);
                } else {
                    // After `&&` or `||` it may not run: what it assigns is not certain.
                    let before = self.env.clone();
                    self.walk_pipeline(pipeline);
                    self.merge_vars(&before);
                }
            }
        }
    }

    /// After a part of the command that may or may not have run (`a && X=1`, a loop or `if`
    /// body, a function): a variable it changed keeps a known value only if both ways agree.
    /// What a file written earlier in this command holds, if `run` runs it: by its path, or,
    /// for a bare name the shell looks up in PATH, any file of that name written earlier (PATH
    /// may name its directory: `echo … > ~/bin/git; chmod +x ~/bin/git; git status`).
    fn written_run(&self, run: &str) -> Option<String> {
        let path = super::without_dot_slash(run);
        if let Some(text) = self.written.get(path) {
            return Some(text.clone());
        }
        if run.contains('/') {
            return None;
        }
        let mut named: Vec<(&String, &String)> =
            self.written.iter().filter(|(file, _)| super::basename(file) == run).collect();
        named.sort();
        named.first().map(|(_, text)| (*text).clone())
    }

    /// The branches of an `if` (conditions and bodies: `c1 t1 c2 t2 … [else]`) or the arms of a
    /// `case`: at most one body runs, so what one assigns is not seen by the others (`if false;
    /// then d=/tmp/x; else rm -rf "$d"; fi` deletes the old `$d`). A condition's assignments
    /// reach its body and the conditions after it. After the compound, whatever any of them
    /// changed is unknown.
    fn walk_branches(&mut self, kind: &str, bodies: &[Script]) {
        let before = self.env.clone();
        let mut changed: Vec<String> = Vec::new();
        let note = |env: &HashMap<String, Option<String>>, changed: &mut Vec<String>| {
            for (k, v) in env {
                if before.get(k) != Some(v) && !changed.contains(k) {
                    changed.push(k.clone());
                }
            }
            for k in before.keys().filter(|k| !env.contains_key(*k)) {
                if !changed.contains(k) {
                    changed.push(k.clone());
                }
            }
        };
        if kind == "case" {
            for arm in bodies {
                self.env.clone_from(&before);
                self.walk_script(arm);
                note(&self.env, &mut changed);
            }
        } else {
            let mut pairs = bodies.chunks(2);
            for pair in &mut pairs {
                self.walk_script(&pair[0]);
                let failed = self.env.clone();
                if let Some(body) = pair.get(1) {
                    self.walk_script(body);
                    note(&self.env, &mut changed);
                }
                note(&failed, &mut changed);
                // The next condition (or `else`) runs only if this one failed.
                self.env = failed;
            }
        }
        self.env = before;
        for k in changed {
            self.env.insert(k, None);
        }
    }

    pub(super) fn merge_vars(&mut self, before: &HashMap<String, Option<String>>) {
        for (name, value) in self.env.iter_mut() {
            if before.get(name) != Some(value) {
                *value = None;
            }
        }
        // One it removed (`unset IFS`) may still hold its old value: unknown too.
        for name in before.keys() {
            self.env.entry(name.clone()).or_insert(None);
        }
    }

    fn walk_pipeline(&mut self, pipeline: &Pipeline) {
        if self.exhausted {
            return;
        }
        let mut texts = Vec::new();
        let mut piped = self.stdin.clone();
        // Only a pipeline of two or more commands is recorded, its commands' texts joined.
        let shown = pipeline.0.len() > 1;
        // Each command of a pipeline runs in a subshell: its assignments stay there.
        let vars = shown.then(|| self.env.clone());
        for (i, cmd) in pipeline.0.iter().enumerate() {
            let before = self.out.segments.len();
            let text = self.walk_command(cmd, piped.take(), shown);
            if let Some(vars) = &vars {
                self.env.clone_from(vars);
            }
            if let Some(t) = text {
                texts.push(t);
            }
            if i + 1 == pipeline.0.len() {
                break;
            }
            // What the next command reads: known for `echo`/`printf`/`cat <<EOF`, else unknown.
            let one = matches!(cmd, Command::Simple(_)) && self.out.segments.len() == before + 1;
            let known = if one { self.trivial_output(before) } else { None };
            let added = &self.out.segments[before.min(self.out.segments.len())..];
            piped = Some(Cow::Owned(known.map_or_else(
                || {
                    let shown = added.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("; ");
                    Field { text: format!("the output of `{shown}`"), dynamic: true }
                },
                Field::lit,
            )));
        }
        if texts.len() > 1 {
            if self.possible.is_some() {
                self.out.possible_pipelines.push(self.out.pipelines.len());
            }
            self.out.pipelines.push(texts.join(" | "));
        }
    }

    /// Walks one command of a pipeline; `shown`: returns how it reads in the pipeline's text.
    fn walk_command(&mut self, cmd: &Command, piped: Input, shown: bool) -> Option<String> {
        match cmd {
            Command::Simple(simple) => self.walk_simple(simple, piped, shown),
            Command::Compound { kind, bodies, words, redirects } => {
                let before = self.out.segments.len();
                let fields: Vec<Field> = self.expand_words(words);
                // The syntax tree does not keep a function's name: any function may be `cd`.
                self.cd_redefined |= *kind == "function";
                self.compound_arith(kind, &fields);
                if *kind == "((" {
                    fields.iter().for_each(|f| self.arith_assigns(&f.text));
                }
                let (input, redirs): (Vec<Redir>, Vec<Redir>) = redirects
                    .iter()
                    .map(|r| Redir {
                        op: [r.fd.as_str(), r.op].concat(),
                        target: self.expand_joined(&r.target),
                        feeds_stdin: r.feeds_stdin(),
                    })
                    .partition(|r| r.feeds_stdin || r.reads_file());
                // The body's commands read what the compound is fed (`curl … | (sh)`).
                let outer = std::mem::replace(&mut self.stdin, input_after(&input, piped));
                let vars = self.env.clone();
                let assigned = self.assigned.len();
                if matches!(*kind, "for" | "select")
                    && let Some(name) = fields.first()
                {
                    self.set_var(&name.text, None);
                }
                self.in_function += usize::from(*kind == "function");
                match *kind {
                    "if" | "case" => self.walk_branches(kind, bodies),
                    _ => bodies.iter().for_each(|body| self.walk_script(body)),
                }
                if *kind == "function" {
                    self.in_function -= 1;
                    self.function_defined(assigned);
                    self.define_function(fields.first(), bodies);
                }
                match *kind {
                    // A subshell's assignments stay in it; a group's are the shell's own.
                    "(" => self.env = vars,
                    "{" => {}
                    // Bodies of `if`, loops, `case` and functions may not run, or run again.
                    _ => self.merge_vars(&vars),
                }
                self.stdin = outer;
                // `{ echo 'rm -rf ~'; } > x.sh`: the file holds what the body prints.
                let target = redirs.iter().rev().find(|r| matches!(r.op.as_str(), ">" | ">>" | ">|" | "1>" | "1>>"));
                if let Some(file) = target.filter(|r| !r.target.dynamic).map(|r| r.target.text.clone())
                    && let Some(text) = self.group_output(before)
                {
                    self.written.insert(super::without_dot_slash(&file).to_string(), text);
                }
                // `{ …; } > file` writes the file whatever the body does: rules see `: > file`.
                if !redirs.is_empty() {
                    self.command_fields(vec![Field::lit(":")], redirs, None);
                }
                if !shown {
                    return None;
                }
                let inner: Vec<String> = self.out.segments[before..].iter().map(|s| s.text.clone()).collect();
                let (open, close) = if *kind == "(" { ("(", ")") } else { ("{", "}") };
                Some(format!("{open} {} {close}", inner.join("; ")))
            }
        }
    }

    fn walk_simple(&mut self, cmd: &Simple, piped: Input, shown: bool) -> Option<String> {
        let values: Vec<(String, Field, bool)> = cmd
            .assigns
            .iter()
            .map(|a| {
                self.decoded = false;
                let mut value = self.expand_joined(&a.value);
                if a.append {
                    // `a+=t` appends: known only if what `a` held is known.
                    match self.env.get(&a.name) {
                        Some(Some(old)) => value.text.insert_str(0, old),
                        _ => value.dynamic = true,
                    }
                }
                self.later_assign(&a.name, &value);
                (a.name.clone(), value, std::mem::take(&mut self.decoded))
            })
            .collect();
        self.git_config_pairs(&values);
        let redirs: Vec<Redir> = cmd
            .redirects
            .iter()
            .map(|r| Redir {
                op: [r.fd.as_str(), r.op].concat(),
                target: self.expand_joined(&r.target),
                feeds_stdin: r.feeds_stdin(),
            })
            .collect();
        let issues_before = self.out.issues.len();
        let outer = std::mem::take(&mut self.split_unknown);
        let mut fields: Vec<Field> = self.expand_words(&cmd.words);
        let splits = std::mem::replace(&mut self.split_unknown, outer);
        if super::help::is_question_help(&fields) {
            // `pg_dump -?`: the pattern could only match a file named like an option, and the
            // command asks for help whichever it is.
            let mut i = 0;
            self.out.issues.retain(|issue| {
                i += 1;
                i <= issues_before || !issue.detail.starts_with("the option `-?` holds a wildcard")
            });
        }
        let words_decoded = std::mem::take(&mut self.decoded);
        if cmd.words.is_empty() {
            for (name, value, decoded) in values {
                if decoded {
                    self.decoded_vars.insert(name.clone());
                } else {
                    self.decoded_vars.remove(&name);
                }
                if self.namerefs.contains(&name) {
                    // Assigning through a reference changes a variable this table cannot name.
                    self.env.values_mut().for_each(|v| *v = None);
                }
                let value = super::tempdir::assigned_value(&name, &value).unwrap_or(value);
                self.set_var(&name, (!value.dynamic).then_some(value.text));
            }
            for a in cmd.assigns.iter().filter(|a| matches!(&*a.value.0, [super::ast::Part::Array(_)])) {
                let super::ast::Part::Array(items) = &a.value.0[0] else { continue };
                let fields: Vec<Field> = self.expand_words(items);
                let known = !a.append && fields.iter().all(|f| !f.dynamic);
                self.set_array(&a.name, known.then(|| fields.into_iter().map(|f| f.text).collect()));
            }
            // `> file` alone truncates the file, as `: > file` does: rules see it that way.
            if !redirs.is_empty() {
                return self.simple_command(vec![Field::lit(":")], redirs, None, shown);
            }
            return None;
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
        self.prefix_assigns(&fields[0], &values);
        self.track_declarations(&fields);
        self.builtin_assigns(&fields);
        self.positional_changed(&fields);
        // bash's `time` is a keyword that times the command after it, a function too (`time g`);
        // dash's is the program, which runs no function.
        let timed = if self.dialect == Dialect::Dash { 0 } else { time_words(&fields) };
        let called =
            fields.get(timed).filter(|f| self.functions.contains_key(&f.text)).map(|_| fields[timed..].to_vec());
        let outer = std::mem::replace(&mut self.split_unknown, splits);
        let text = self.simple_command(fields, redirs, piped, shown);
        self.split_unknown = outer;
        if let Some(fields) = called {
            self.call_function(&fields);
        }
        text
    }

    /// One simple command from its expanded words: unwrap, record, follow nested scripts.
    pub(super) fn command_fields(&mut self, fields: Vec<Field>, redirs: Vec<Redir>, piped: Input) {
        self.simple_command(fields, redirs, piped, false);
    }

    /// `command_fields`; `shown`: returns the command's canonical text, for its pipeline's.
    fn simple_command(&mut self, fields: Vec<Field>, redirs: Vec<Redir>, piped: Input, shown: bool) -> Option<String> {
        if self.exhausted {
            return None;
        }
        if self.out.segments.len() >= MAX_SEGMENTS {
            self.exhaust(format!("the command holds more than {MAX_SEGMENTS} simple commands"));
            return None;
        }
        let splits = self.split_unknown;
        let mut fields = fields;
        let built = matches!(super::basename(&fields[0].text), "xargs" | "parallel")
            && !fields[0].dynamic
            && self.built_commands(&fields, piped.as_deref());
        let run = fields.first().filter(|f| !f.dynamic).map(|f| super::without_dot_slash(&f.text));
        match run.and_then(|f| self.copied_as(f)) {
            // Found in PATH, the name may be the copy or the program it always named: which one
            // depends on PATH when it runs (`cp /bin/rm ~/bin/ls; ls -rf ~`).
            Some(super::later::Copied { program, through_path: true }) => {
                let shown =
                    program.map_or_else(|| "a program known only when it ran".to_string(), |p| format!("`{p}`"));
                self.issue(
                    IssueKind::Dynamic,
                    format!(
                        "`{}` may run a copy of {shown} made earlier in this command, if PATH finds that copy first",
                        fields[0].text
                    ),
                );
            }
            // `hash -p /bin/rm ls` or `cp /bin/rm x` earlier: `ls`, `./x` run /bin/rm.
            Some(super::later::Copied { program: Some(path), .. }) => fields[0].text = path,
            // Copied from a program known only when it ran (`cp "$(command -v rm)" x`).
            Some(super::later::Copied { program: None, .. }) => fields[0].dynamic = true,
            None => {}
        }
        let u = super::unwrap::unwrap(fields);
        if let Some(limit) = &u.limit {
            self.issue(IssueKind::TooComplex, limit.clone());
        }
        self.later_code(&u.words);
        // Rules see words normalized (`ｒｍ` is `rm`); what the shell parsed was the exact text.
        // The segment is written into the buffers of one from an earlier command of the batch.
        let mut seg = self.out.spare.segments.pop().unwrap_or_default();
        let mut words = std::mem::take(&mut seg.words);
        // Whether some word was changed by normalizing (one test of each word's bytes).
        let mut normalized = false;
        super::spare::overwrite(&mut words, u.words.len(), |i, w| {
            let text = super::normalized(&u.words[i].text);
            normalized |= matches!(text, Cow::Owned(_));
            w.push_str(&text);
        });
        let program = &u.words[0];
        // An npm package (`@scope/cli`, run by npx) is a name, not a path.
        let base = if words[0].starts_with('@') { &words[0] } else { super::basename(&words[0]) };
        let base_at = words[0].len() - base.len();
        if !program.dynamic && super::is_glob_pattern(&program.text) {
            // `/usr/bin/r? -rf ~`: the shell matches the pattern against file names.
            self.issue(
                IssueKind::Dynamic,
                format!(
                    "the program `{}` is a pattern the shell matches against file names when it runs",
                    program.text
                ),
            );
        }
        if program.dynamic && !is_known_program(&program.text) {
            self.issue(
                IssueKind::Dynamic,
                format!("the program `{}` is only known when the command runs", program.text),
            );
        }
        let mut notes = u.notes;
        // Words added in front of the program's (`service`) are known.
        let mut added = 0;
        if ["/etc/init.d/", "/etc/rc.d/init.d/", "/etc/rc.d/"].iter().any(|dir| words[0].starts_with(dir)) {
            // An init script is a service: `/etc/init.d/ssh stop` reads `service ssh stop`.
            let base = words[0][base_at..].to_string();
            notes.push(format!("init script {} read as `service {base}`", words[0]));
            words.splice(0..1, ["service".to_string(), base]);
            added = 1;
        } else if base_at > 0 {
            notes.push(["program ", &words[0], " reduced to ", &words[0][base_at..]].concat());
            words[0].drain(..base_at);
        }
        let mut text = std::mem::take(&mut seg.text);
        canonical_text(&mut text, &words, |i| i >= added && u.words[i - added].dynamic, &redirs);
        let here = redirs.iter().rev().find(|r| r.feeds_stdin).map(|r| r.target.clone());
        let input = input_after(&redirs, piped);
        if built {
            // `printf '%s\n' build dist | xargs rm -rf`: the commands built from the known
            // input were read above; the template alone (`rm -rf`) never runs.
            return shown.then_some(text);
        }
        let pipeline_text = shown.then(|| text.clone());
        // Every field named: one added later fails to compile here instead of keeping what an
        // earlier command's segment held.
        let Segment { text: _, words: _, redirects, wrappers, origin, notes: _, is_static, stdin_text, possible, cwd } =
            &mut seg;
        super::spare::overwrite(redirects, redirs.len(), |i, text| {
            text.push_str(&redirs[i].op);
            text.push(' ');
            text.push_str(&super::normalized(&redirs[i].target.text));
        });
        *wrappers = u.wrappers;
        origin.clear();
        for (i, label) in self.origin.iter().enumerate() {
            if i > 0 {
                origin.push_str(" › ");
            }
            origin.push_str(label);
        }
        // Normalized words are not what the program prints (`echo ｒｍ | sh`).
        *is_static = !normalized && u.words.iter().all(|f| !f.dynamic);
        *stdin_text = here.as_ref().filter(|h| !h.dynamic).map(|h| super::normalize(&h.text));
        possible.clone_from(&self.possible);
        *cwd = self.temp_cwd();
        seg.text = text;
        seg.words = words;
        seg.notes = notes;
        if matches!(seg.words[0].as_str(), "alias" | "enable") {
            self.note_cd_redefined(&u.words[1..]);
        }
        // `cd` changes the shell's directory only as a builtin of the shell itself; through a
        // program (`nohup cd /tmp`, `sudo cd`, `env cd`) it runs elsewhere, if at all.
        // dash has no `builtin`, and its `time` is the program.
        let bash = self.dialect != Dialect::Dash;
        let by_shell =
            seg.wrappers.iter().all(|w| w == "command" || (bash && matches!(w.as_str(), "builtin" | "time")));
        if seg.words[0] == "cd" && self.possible.is_none() && by_shell {
            self.changed_directory(&u.words);
        } else if seg.words[0] == "cd" {
            self.changed_directory(&[]);
        } else if matches!(seg.words[0].as_str(), "pushd" | "popd" | "source" | "." | "eval") {
            // They change the directory too, or may (a sourced file or evaluated text can `cd`).
            self.changed_directory(&[]);
        }
        self.check_subcommand(&u.words, &seg, u.entry, u.first_operand, splits);
        self.out.segments.push(seg);
        let index = self.out.segments.len() - 1;
        if let Some((file, text)) = self.written_file(index) {
            self.written.insert(super::without_dot_slash(&file).to_string(), text);
        }
        let out = self.out.segments[index].redirects.iter().rev().find_map(|r| {
            r.strip_prefix("> ").or_else(|| r.strip_prefix(">| ")).or_else(|| r.strip_prefix("1> ")).map(String::from)
        });
        self.copied_program(&u.words, out.as_deref());
        if super::basename(&u.words[0].text) == "tee"
            && let Some(text) = input.as_ref().filter(|t| !t.dynamic)
        {
            // `echo 'rm -rf ~' | tee x.sh`: tee writes what it reads to each file.
            for f in u.words[1..].iter().filter(|f| !f.dynamic && !f.text.starts_with('-')) {
                self.written.insert(super::without_dot_slash(&f.text).to_string(), text.text.clone());
            }
        }
        // A script written earlier in this command and run now (`echo … > x.sh && bash x.sh`).
        let sourced = matches!(u.words[0].text.as_str(), "source" | ".");
        let run_file = if sourced || super::nested::SHELLS.contains(&super::basename(&u.words[0].text)) {
            u.words[1..].iter().find(|f| !f.text.starts_with(['-', '+']))
        } else {
            Some(&u.words[0])
        };
        // A program found in PATH is the file whatever else its name would carry.
        let by_name = run_file.is_some_and(|f| std::ptr::eq(f, &u.words[0]) && !f.text.contains('/'));
        if !self.written.is_empty()
            && ((u.nested.is_empty() && u.stdin.is_none()) || by_name)
            && let Some(f) = run_file.filter(|f| !f.dynamic)
            && let Some(text) = self.written_run(&f.text)
        {
            let origin = format!("{}, written earlier in this command", f.text);
            self.nested(Nested { origin, kind: NestedKind::Script(Field::lit(text)) });
        }
        for n in u.nested {
            self.nested(n);
        }
        // A here-document fed to a program with a shell escape (`psql <<EOF` with `\! CMD`).
        if let Some(body) = input.as_ref().filter(|b| !b.dynamic)
            && let Some(p) = u.entry.unwrap_or_else(|| super::catalog::find(super::basename(&u.words[0].text)))
        {
            let origin = format!("{} in its input:", u.words[0].text);
            for n in super::open::own_language(p, &origin, &body.text, false) {
                self.nested(n);
            }
        }
        if let Some(reader) = u.stdin
            && let Some(body) = input.map(Cow::into_owned)
        {
            let kind = match reader {
                StdinUse::Shell => NestedKind::Script(body),
                StdinUse::Code(lang) => NestedKind::Code(lang, body),
                StdinUse::Cron if body.dynamic => NestedKind::Script(body),
                StdinUse::Cron => NestedKind::Script(Field::lit(super::cron::commands(&body.text))),
            };
            self.nested(Nested { origin: format!("{} reading its input", u.words[0].text), kind });
        }
        self.out.spare.keep_texts(u.words);
        pipeline_text
    }
}

/// A simple command's canonical text: its words, each quoted where needed (substitution
/// placeholders such as `<(curl …)` read as the single words they are), then its redirections.
fn canonical_text(text: &mut String, words: &[String], dynamic: impl Fn(usize) -> bool, redirs: &[Redir]) {
    text.clear();
    text.reserve(words.iter().map(|w| w.len() + 1).sum::<usize>() + 8);
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            text.push(' ');
        }
        if dynamic(i) {
            text.push_str(w);
        } else {
            super::quote_into(text, w);
        }
    }
    for r in redirs {
        // A here-document's body reads as one quoted word, its lines joined by spaces, so rules
        // on the program can see what it is fed (`psql << 'DROP TABLE users;'`).
        let target = super::normalized(&r.target.text);
        text.push(' ');
        text.push_str(&r.op);
        text.push(' ');
        match (r.op.ends_with("<<") || r.op.ends_with("<<-"), r.target.dynamic) {
            (true, false) => super::quote_into(text, &target.split_whitespace().collect::<Vec<_>>().join(" ")),
            (true, true) => text.push('…'),
            (false, _) => super::quote_into(text, &target),
        }
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

/// How many words `time`, its options and the assignments after them take before the command
/// it times (`time -p X=1 g`): 0 without `time`.
fn time_words(fields: &[Field]) -> usize {
    if fields.first().is_none_or(|f| f.dynamic || f.text != "time") {
        return 0;
    }
    let options = fields[1..].iter().take_while(|f| !f.dynamic && matches!(f.text.as_str(), "-p" | "--")).count();
    super::wrapper::skip_assignments(fields, 1 + options)
}
