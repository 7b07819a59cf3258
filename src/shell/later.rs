//! Code a shell runs later, or evaluates out of data: trap bodies, `PROMPT_COMMAND` and prompt
//! strings, callbacks (`mapfile -C`, `complete -C`, `bind -x`), and bash's arithmetic
//! evaluation, which runs the substitutions in array subscripts (`let 'a[$(…)]'`, `declare -i`,
//! `[[ x -eq y ]]`, `printf -v`, `read`, `test -v`) and in the values of the variables it names.
//! Each is analysed as a nested script where it is defined, since it may run. The bash builtins
//! among them are read the bash way whatever the shell: dash has no such builtin (the name runs
//! a program, usually not found), so reading them costs no routine command anything.

use super::analyze::Analyzer;
use super::nested::{Nested, NestedKind};
use super::unwrap::skip_options;
use super::{Field, basename};

/// Variables whose value a program runs as a shell command (through `sh -c`): git's ssh,
/// editor, pager and helper hooks, the editor and pager every tool honours, less's input
/// filter, askpass helpers.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "LESSOPEN",
    "LESSCLOSE",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "RSYNC_RSH",
    "CVS_RSH",
];

/// git configuration keys whose value is a command git runs (`alias.*` when it starts with `!`).
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.fsmonitor",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "pager.log",
    "pager.diff",
    "pager.show",
];

/// The command in a git configuration value, if `key` is one git runs.
pub(super) fn git_config_command(key: &str, value: &str) -> Option<String> {
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") || key.starts_with("credential.") && key.ends_with("helper") {
        return value.strip_prefix('!').map(str::to_string);
    }
    GIT_COMMAND_KEYS.contains(&key.as_str()).then(|| value.to_string())
}

/// How deep variable values are followed inside arithmetic (`x='y'; y='a[$(…)]'; ((x))`).
const MAX_ARITH_DEPTH: usize = 8;

/// Signal and condition names `trap` accepts as the first operand of a reset (`trap INT`).
fn is_condition(word: &str) -> bool {
    let w = word.trim_start_matches("SIG");
    w.chars().all(|c| c.is_ascii_digit())
        || matches!(w, "EXIT" | "ERR" | "DEBUG" | "RETURN")
        || (w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '+' || c == '-'))
}

/// The program a name runs because of a copy or `hash -p` earlier on the line.
pub(super) struct Copied {
    /// `None`: copied from a program known only when it ran.
    pub program: Option<String>,
    /// The name is bare and the copy was made into some directory: it runs only if PATH finds
    /// that directory first.
    pub through_path: bool,
}

impl Analyzer {
    /// `ln -s /bin/rm x`, `cp /bin/rm ./del`, `install`, `mv`, `rsync`, `dd if=… of=…` and
    /// `cat PROGRAM > x`: running `./x` later runs that program (as `hash -p` does). A copy of
    /// something known only when it runs (`cp "$(command -v rm)" x`) makes `x` unknown too.
    pub(super) fn copied_program(&mut self, words: &[Field], stdout_file: Option<&str>) {
        let program = basename(&words[0].text);
        let pair: Option<(&Field, String)> = match program {
            "ln" | "cp" | "install" | "mv" | "rsync" => {
                let operands: Vec<&Field> = words[1..].iter().filter(|f| !f.text.starts_with('-')).collect();
                match operands.as_slice() {
                    [.., source, target] if !target.dynamic => Some((*source, target.text.clone())),
                    _ => None,
                }
            }
            "dd" => {
                let value = |key: &str| words[1..].iter().find(|f| f.text.starts_with(key));
                match (value("if="), value("of=")) {
                    (Some(i), Some(o)) if !o.dynamic => Some((i, o.text["of=".len()..].to_string())),
                    _ => None,
                }
            }
            "cat" => match (&words[1..], stdout_file) {
                ([source], Some(out)) => Some((source, out.to_string())),
                _ => None,
            },
            _ => None,
        };
        let Some((source, target)) = pair else { return };
        let text = source.text.strip_prefix("if=").unwrap_or(&source.text);
        let resolved = if source.dynamic {
            None
        } else {
            self.hashed.get(super::without_dot_slash(text)).cloned().unwrap_or_else(|| Some(text.to_string()))
        };
        self.hashed.insert(super::without_dot_slash(&target).to_string(), resolved);
    }

    /// The program a name runs after `hash -p` or a copy made earlier: by its path, or, for a
    /// bare name the shell looks up in PATH, a copy of that name in any directory (PATH may
    /// name it: `cp /bin/rm ~/bin/ls; ls -rf ~`).
    pub(super) fn copied_as(&self, run: &str) -> Option<Copied> {
        if let Some(p) = self.hashed.get(run) {
            return Some(Copied { program: p.clone(), through_path: false });
        }
        if run.contains('/') {
            return None;
        }
        let mut named: Vec<(&String, &Option<String>)> =
            self.hashed.iter().filter(|(k, _)| k.contains('/') && basename(k) == run).collect();
        named.sort();
        named.first().map(|(_, p)| Copied { program: (*p).clone(), through_path: true })
    }

    /// Finds code that the builtin in `words` stores to run later, or evaluates now.
    pub(super) fn later_code(&mut self, words: &[Field]) {
        let Some(first) = words.first() else { return };
        let args = &words[1..];
        match basename(&first.text) {
            "trap" => self.trap(words),
            "git" => self.git_config_set(words),
            // `hash -p /bin/rm ls`: `ls` runs /bin/rm from now on.
            // dash's `hash` has no -p.
            "hash" if self.bash() => {
                let (i, opts) = skip_options(words, 1, "p", &[], false);
                if let Some((_, Some(path))) = opts.iter().find(|(n, _)| n == "-p") {
                    for name in &words[i..] {
                        self.hashed.insert(name.text.clone(), Some(path.clone()));
                    }
                }
            }
            "mapfile" | "readarray" => {
                let (i, opts) = skip_options(words, 1, "dnOsuCc", &[], false);
                self.callback(&opts, "-C", "mapfile -C");
                for name in &words[i..] {
                    self.arith(&name.text, 0, true);
                }
            }
            "complete" | "compgen" => {
                let (_, opts) = skip_options(words, 1, "oAGWFCXPSp", &[], false);
                self.callback(&opts, "-C", "complete -C");
            }
            "bind" => {
                let (_, opts) = skip_options(words, 1, "mqurfx", &[], false);
                for (_, value) in opts.iter().filter(|(n, _)| n == "-x") {
                    // `bind -x '"\C-x": command'`: the command after the key sequence.
                    if let Some((_, cmd)) = value.as_deref().and_then(|v| v.split_once(':')) {
                        self.later_script("bind -x", cmd.trim());
                    }
                }
            }
            "let" => {
                for a in args {
                    self.arith(&a.text, 0, !a.dynamic);
                }
            }
            "declare" | "typeset" | "local" | "readonly" | "export"
                if args.iter().any(|a| !a.text.starts_with('-')) =>
            {
                let integer = args.iter().any(|a| a.text.starts_with('-') && a.text.contains('i'));
                // `declare -n r=x`: r is a reference to x, which this table does not follow.
                let nameref = args.iter().any(|a| a.text.starts_with('-') && a.text.contains('n'));
                for a in args.iter().filter(|a| !a.text.starts_with(['-', '+'])) {
                    let (name, value) = a.text.split_once('=').unwrap_or((&a.text, ""));
                    if name.contains('[') {
                        self.arith(name, 0, !a.dynamic);
                    }
                    if integer {
                        self.integers.insert(name.to_string());
                        self.arith(value, 0, !a.dynamic);
                    }
                    self.later_assign(name, &Field { text: value.to_string(), dynamic: a.dynamic });
                    if nameref {
                        self.namerefs.insert(name.to_string());
                    }
                }
            }
            "printf" => {
                let (_, opts) = skip_options(words, 1, "v", &[], false);
                for (_, v) in opts.iter().filter(|(n, _)| n == "-v") {
                    self.arith(v.as_deref().unwrap_or(""), 0, true);
                }
            }
            "read" => {
                let (i, opts) = skip_options(words, 1, "adinNptu", &[], false);
                let names = opts.iter().filter(|(n, _)| n == "-a").filter_map(|(_, v)| v.clone());
                for name in names.chain(words[i..].iter().map(|f| f.text.clone())).collect::<Vec<_>>() {
                    self.arith(&name, 0, true);
                }
            }
            "test" | "[" if args.iter().any(|a| a.text == "-v") => {
                for pair in args.windows(2).filter(|p| p[0].text == "-v") {
                    self.arith(&pair[1].text, 0, !pair[1].dynamic);
                }
            }
            _ => {}
        }
    }

    /// `trap BODY COND…`: the body runs when a condition comes (EXIT, ERR, DEBUG, RETURN, a
    /// signal), so it is analysed now.
    fn trap(&mut self, words: &[Field]) {
        let (i, _) = skip_options(words, 1, "", &[], false);
        let ops = &words[i.min(words.len())..];
        let body = match ops {
            [body, conds @ ..] if !conds.is_empty() => body,
            // `trap BODY` alone: dash reads it as a body for no condition, bash as a reset.
            [body] if !is_condition(&body.text) => body,
            _ => return,
        };
        if body.text == "-" || body.text.is_empty() {
            return;
        }
        let conds: Vec<&str> = ops[1..].iter().map(|f| f.text.as_str()).collect();
        let origin = format!("trap {}", if conds.is_empty() { "body".to_string() } else { conds.join(" ") });
        self.nested(Nested { origin, kind: NestedKind::Script(body.clone()) });
    }

    /// The value of `-C`-style callback options: shell code run later.
    /// bash runs a callback with words of its own appended (the line index and line for
    /// `mapfile -C`; the command, word and previous word for `complete -C`): read as `"$@"`.
    fn callback(&mut self, opts: &[(String, Option<String>)], flag: &str, origin: &str) {
        for (_, value) in opts.iter().filter(|(n, _)| n == flag) {
            self.later_script(origin, &format!("{} \"$@\"", value.as_deref().unwrap_or("")));
        }
    }

    /// `git config alias.wipe '!git reset --hard'` (or `git config set …`): the alias runs
    /// wherever it is used later, so its command is read here; a key git runs
    /// (`core.sshCommand`) likewise.
    fn git_config_set(&mut self, words: &[Field]) {
        let Some(at) = words.iter().position(|f| f.text == "config") else { return };
        let (i, _) = skip_options(words, at + 1, "f", &["--file", "--blob", "--type", "--default", "--comment"], false);
        let operands: Vec<&Field> = words[i..].iter().filter(|f| f.text != "set" && f.text != "--add").collect();
        let [key, value, ..] = operands.as_slice() else { return };
        let origin = format!("git config {}", key.text);
        if let Some(cmd) = git_config_command(&key.text, &value.text) {
            let kind = NestedKind::Script(Field { text: cmd, dynamic: key.dynamic || value.dynamic });
            self.nested(Nested { origin, kind });
        } else if key.text.to_ascii_lowercase().starts_with("alias.") {
            // `git config alias.fp 'push --force'`: `git fp` runs `git push --force`.
            let mut argv = vec![Field::lit("git")];
            argv.extend(value.text.split_whitespace().map(|w| Field { text: w.to_string(), dynamic: value.dynamic }));
            self.nested(Nested { origin, kind: NestedKind::Argv(argv) });
        }
    }

    fn later_script(&mut self, origin: &str, text: &str) {
        let kind = NestedKind::Script(Field::lit(text));
        self.nested(Nested { origin: origin.to_string(), kind });
    }

    /// An assignment to a variable whose value bash runs as code later: `PROMPT_COMMAND`
    /// before each prompt, and the prompt strings `PS0`–`PS4`, whose substitutions run when
    /// they are shown.
    pub(super) fn later_assign(&mut self, name: &str, value: &Field) {
        if self.integers.contains(name) {
            self.arith(&value.text, 0, !value.dynamic);
        }
        match name {
            "PROMPT_COMMAND" if !value.text.is_empty() => {
                let kind = NestedKind::Script(value.clone());
                self.nested(Nested { origin: "PROMPT_COMMAND".into(), kind });
            }
            "PS0" | "PS1" | "PS2" | "PS3" | "PS4" if value.text.contains(['$', '`']) => {
                self.expanded_text(&value.text, name);
            }
            // `ENV=file sh -i`, `BASH_ENV=file bash -c …`: the shell first runs that file.
            "BASH_ENV" if !value.text.is_empty() => {
                let what = format!("BASH_ENV names a file bash runs first: {}", value.text);
                self.nested(Nested { origin: "BASH_ENV".into(), kind: NestedKind::Dynamic(what) });
            }
            _ if COMMAND_VARS.contains(&name) && !value.text.trim().is_empty() => {
                // less's filters start with `|` (or `||`) to say they write to a pipe.
                let text = value.text.trim_start().trim_start_matches('|').to_string();
                let kind = NestedKind::Script(Field { text, dynamic: value.dynamic });
                self.nested(Nested { origin: format!("${name}"), kind });
            }
            _ => {}
        }
    }

    /// `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` pairs among one command's assignments: git
    /// reads them as `-c key=value`, so a key git runs (`alias.x`, `core.sshCommand`) carries
    /// a command.
    pub(super) fn git_config_pairs(&mut self, assigns: &[(String, Field, bool)]) {
        for (name, key, _) in assigns {
            let Some(n) = name.strip_prefix("GIT_CONFIG_KEY_") else { continue };
            let value = assigns.iter().find(|(v, _, _)| v.strip_prefix("GIT_CONFIG_VALUE_") == Some(n));
            if let Some((_, value, _)) = value
                && let Some(cmd) = git_config_command(&key.text, &value.text)
            {
                let kind = NestedKind::Script(Field { text: cmd, dynamic: key.dynamic || value.dynamic });
                self.nested(Nested { origin: format!("git config {}", key.text), kind });
            }
        }
    }

    /// Text bash evaluates as arithmetic: the substitutions in it run (when `substs`, for text
    /// whose quotes kept them from running before), and so do those in the values of the
    /// variables it names.
    pub(super) fn arith(&mut self, text: &str, depth: usize, substs: bool) {
        if depth > MAX_ARITH_DEPTH || self.exhausted {
            return;
        }
        if substs && text.contains(['$', '`']) {
            self.expanded_text(text, "arithmetic");
        }
        for value in self.code_values(text) {
            self.arith(&value, depth + 1, true);
        }
    }

    /// The known values of the variables `text` names that hold code for arithmetic to run
    /// (`a[$(…)]`, or another name to follow).
    pub(super) fn code_values(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let tail = &rest[start..];
            let len = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
            if let Some(Some(value)) = self.env.get(&tail[..len])
                && value.contains(['$', '`', '['])
            {
                out.push(value.clone());
            }
            rest = &tail[len..];
        }
        out
    }

    /// `(( expr ))` and the arithmetic operators of `[[ … ]]` evaluate their operands (bash).
    pub(super) fn compound_arith(&mut self, kind: &str, fields: &[Field]) {
        match kind {
            "((" => {
                if let Some(expr) = fields.first()
                    && !self.code_values(&expr.text).is_empty()
                {
                    self.arith(&expr.text, 0, false);
                }
            }
            "[[" => {
                const OPS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
                let mut operands = Vec::new();
                for (i, f) in fields.iter().enumerate() {
                    if OPS.contains(&f.text.as_str()) {
                        operands.extend(i.checked_sub(1).map(|j| &fields[j]));
                        operands.extend(fields.get(i + 1));
                    } else if f.text == "-v" {
                        operands.extend(fields.get(i + 1));
                    }
                }
                for f in operands.into_iter().cloned().collect::<Vec<_>>() {
                    self.arith(&f.text, 0, !f.dynamic);
                }
            }
            _ => {}
        }
    }

    /// Text the shell expands as if double-quoted (a prompt string, an arithmetic operand):
    /// the substitutions in it are walked.
    fn expanded_text(&mut self, text: &str, label: &str) {
        match super::word::scripts_in(text, self.dialect) {
            Ok(scripts) => {
                for script in scripts {
                    self.walk_nested_script(&script, label);
                }
            }
            Err(e) => self
                .issue(super::IssueKind::Unparseable, format!("cannot read the {label} text `{text}`: {}", e.message)),
        }
    }
}
