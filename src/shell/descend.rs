//! Descending into nested scripts: command substitutions (with their output when it is
//! trivially known), and the scripts carriers run (`bash -c`, `ssh host`, interpreter code,
//! argv tails), each read in the dialect of the shell that runs it, to the nesting limit.

use super::Field;
use super::analyze::Analyzer;
use super::ast::{Command, Script};
use super::dialect::Dialect;
use super::nested::{FileUse, Nested, NestedKind};
use super::output::decodes;
use super::{IssueKind, MAX_NESTING};

/// Deepest chain of guesses read: what an unknown program's operand may carry, inside what
/// another's may carry.
const MAX_GUESSES: usize = 2;

impl Analyzer {
    /// Walks a substitution; returns its output when it is trivially known (`$(echo rm)`) and the
    /// canonical text of its commands.
    /// Walks a command substitution; returns its output when trivially known, how it reads, and
    /// whether it decodes hidden text.
    pub(super) fn walk_subst(&mut self, script: &Script) -> (Option<String>, String, bool) {
        let before = self.out.segments.len();
        self.walk_nested_script(script, "$(…)");
        let single =
            matches!(script.0.as_slice(), [a] if matches!(&*a.0, [p] if matches!(&*p.0, [Command::Simple(_)])));
        let out = if single && self.out.segments.len() == before + 1 {
            self.trivial_output(before).map(|o| o.trim_end_matches('\n').to_string())
        } else {
            None
        };
        let added = &self.out.segments[before.min(self.out.segments.len())..];
        let shown = added.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join("; ");
        let decodes = out.is_none() && added.iter().any(decodes);
        (out, shown, decodes)
    }

    pub(super) fn walk_nested_script(&mut self, script: &Script, label: &str) {
        if !self.descend(label) {
            return;
        }
        // A substitution runs in a subshell: its assignments do not reach the command.
        let vars = self.env.clone();
        self.walk_script(script);
        self.env = vars;
        self.ascend();
    }

    pub(super) fn descend(&mut self, label: &str) -> bool {
        if self.depth >= MAX_NESTING {
            self.issue(IssueKind::TooComplex, format!("scripts are nested more than {MAX_NESTING} deep"));
            return false;
        }
        self.depth += 1;
        self.origin.push(label.to_string());
        true
    }

    pub(super) fn ascend(&mut self) {
        self.depth -= 1;
        self.origin.pop();
    }

    pub(super) fn nested(&mut self, n: Nested) {
        if let NestedKind::Possible(inner) = n.kind {
            // Two levels of guessing (`mytool "othertool 'rm -rf ~'"`); deeper ones are not
            // read, so that text nested in data does not pay for more parsing.
            if self.guesses >= MAX_GUESSES {
                return;
            }
            self.guesses += 1;
            let outer = self.possible.replace(n.origin.clone());
            let issues = self.out.issues.len();
            self.nested(Nested { origin: n.origin, kind: *inner });
            // The operand may be plain data: what cannot be read in it asks nothing, but a budget
            // that ran out still does.
            let found = self.out.issues.split_off(issues);
            self.out.issues.extend(found.into_iter().filter(|i| i.kind == IssueKind::TooComplex));
            self.possible = outer;
            self.guesses -= 1;
            return;
        }
        if !self.descend(&n.origin) {
            return;
        }
        match n.kind {
            NestedKind::Script(f) if f.dynamic && super::generators::is_setup_output(&n.origin, &f.text) => {
                // `eval "$(pyenv init -)"`: a known tool's own setup code (generators.rs).
            }
            NestedKind::Script(f) if f.dynamic => {
                self.issue(
                    IssueKind::Dynamic,
                    format!("{} runs a script only known when the command runs: {}", n.origin, f.text),
                );
            }
            NestedKind::Script(f) if runs_in_this_shell(&n.origin) => {
                self.script_in(&f.text, self.dialect);
            }
            NestedKind::Script(f) => {
                // Another process: it sees the variables assigned here only if they were
                // exported, which is not tracked, so they are unknown there.
                let vars = self.env.clone();
                for value in self.env.values_mut() {
                    *value = None;
                }
                let dialect = Dialect::of_nested(&n.origin, self.dialect);
                self.script_in(&f.text, dialect);
                self.env = vars;
            }
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
            NestedKind::Possible(_) => unreachable!("read above"),
            NestedKind::File(path, reading) => {
                // Only a file this command wrote is known; one on disk is like a script file.
                if let Some(text) = self.written.get(super::without_dot_slash(&path)).cloned() {
                    let origin = format!("{path}, written earlier in this command");
                    let script = NestedKind::Script(Field::lit(text.clone()));
                    let kinds = match reading {
                        FileUse::Shell => vec![script],
                        FileUse::Guess => vec![NestedKind::Possible(Box::new(script))],
                        FileUse::Sed => super::sed::commands(&text),
                        FileUse::Code(lang) => vec![NestedKind::Code(lang, Field::lit(text.clone()))],
                    };
                    for kind in kinds {
                        self.nested(Nested { origin: origin.clone(), kind });
                    }
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

/// Nested scripts the shell itself runs (`eval`, an alias, a trap body, `source`): they share
/// its variables, and its dialect.
fn runs_in_this_shell(origin: &str) -> bool {
    matches!(origin.split(' ').next(), Some("eval" | "alias" | "trap" | "PROMPT_COMMAND" | "source" | "."))
}
