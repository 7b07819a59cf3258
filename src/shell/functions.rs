//! Shell functions defined earlier in the command and called later (`g() { git "$@"; }; g
//! reset --hard`): at each call the body is walked again with the call's words as `$1`…, `$@`,
//! so the commands it runs are judged with the arguments they get.

use super::Field;
use super::analyze::Analyzer;
use super::ast::Script;

impl Analyzer {
    /// Records a function's body under its name.
    pub(super) fn define_function(&mut self, name: Option<&Field>, bodies: &[Script]) {
        if let Some(name) = name.filter(|n| !n.dynamic) {
            self.functions.insert(name.text.clone(), bodies.to_vec());
        }
    }

    /// Walks the body of the function `fields[0]` names, if one was defined, as the call runs it.
    /// A function calling itself is walked once.
    pub(super) fn call_function(&mut self, fields: &[Field]) {
        let Some(name) = fields.first().filter(|f| !f.dynamic) else { return };
        // A function calling itself is followed one level down (`g() { rm "$@"; g -rf ~; }; g x`
        // runs `rm -rf ~` there); deeper, a call with other words than the one it is in asks.
        let depth = self.calling.iter().filter(|n| **n == name.text).count();
        if depth >= 2 {
            if self.positional.as_deref() != Some(&fields[1..]) {
                let detail =
                    format!("`{}` calls itself with other words; its deeper calls are not followed", name.text);
                self.issue(super::IssueKind::Dynamic, detail);
            }
            return;
        }
        let Some(bodies) = self.functions.get(&name.text).cloned() else { return };
        if !self.descend(&format!("{}()", name.text)) {
            return;
        }
        self.calling.push(name.text.clone());
        let outer = self.positional.replace(fields[1..].to_vec());
        self.in_function += 1;
        for body in &bodies {
            self.walk_script(body);
        }
        self.in_function -= 1;
        self.positional = outer;
        self.calling.pop();
        self.ascend();
    }

    /// `set -- …` and `shift` change the positional parameters. Inside a function called here,
    /// and at the top once `set` gave them, `shift [N]` and `set [--] WORDS` are followed; any
    /// other change leaves them unknown (every `$1`, `$@` is then dynamic), never the values
    /// from before the change.
    pub(super) fn positional_changed(&mut self, fields: &[Field]) {
        let program = fields.first().map(|f| f.text.as_str());
        let args = fields.get(1..).unwrap_or(&[]);
        let sets = program == Some("set") && set_operands(args).is_some();
        if !sets && program != Some("shift") {
            return;
        }
        let Some(words) = self.positional.as_mut() else {
            // At the top of `sh -c TEXT` the parameters are not known, but `set -- WORDS`
            // makes them these words (`set -- -rf ~; rm "$@"`); `shift` leaves them unknown.
            if program == Some("set") && self.in_function == 0 && args.iter().all(|f| !f.dynamic) {
                let at = set_operands(args).unwrap_or(args.len());
                self.positional = Some(args[at..].to_vec());
            }
            return;
        };
        let known = args.iter().all(|f| !f.dynamic) && !is_unknown(words);
        if program == Some("shift") {
            match args {
                [] if known => drop(words.drain(..words.len().min(1))),
                [n] if known => {
                    // `shift N` past the end, or with N not a number, fails and shifts nothing.
                    if let Ok(n) = n.text.parse::<usize>()
                        && n <= words.len()
                    {
                        words.drain(..n);
                    }
                }
                _ => *words = unknown(),
            }
            return;
        }
        let at = set_operands(args).unwrap_or(args.len());
        *words = if args.iter().all(|f| !f.dynamic) { args[at..].to_vec() } else { unknown() };
    }

    /// The words `$@` (and `$1`…) stand for inside a function called here; `None` elsewhere.
    pub(super) fn positional_words(&self) -> Option<&[Field]> {
        self.positional.as_deref()
    }
}

/// Where `set`'s new positional parameters start: after `--`, or at the first word that is
/// neither an option nor the option name `-o` / `+o` takes (`set -o pipefail` sets none).
/// `None` when it sets none.
fn set_operands(args: &[Field]) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let w = args[i].text.as_str();
        if w == "--" {
            return Some(i + 1);
        }
        if !w.starts_with(['-', '+']) {
            return Some(i);
        }
        // `-o NAME`, `-euo pipefail`: the option's name is the next word.
        if w.len() > 1 && w.ends_with('o') {
            i += 1;
        }
        i += 1;
    }
    None
}

/// Positional parameters that are not known: one dynamic word standing for all of them.
pub(super) fn unknown() -> Vec<Field> {
    vec![Field { text: "\0$@".to_string(), dynamic: true }]
}

pub(super) fn is_unknown(words: &[Field]) -> bool {
    matches!(words, [f] if f.dynamic && f.text == "\0$@")
}
