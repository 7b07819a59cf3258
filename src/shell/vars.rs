//! The variable table: what each assignment, declaration and assigning builtin does to it. A
//! value is kept only when it is exactly what the shell holds; whatever changes a variable in a
//! way not computed here (`read`, `printf -v`, arithmetic, a function body, `declare -u`)
//! makes it unknown, never a stale or guessed value.

use super::Field;
use super::analyze::Analyzer;
use super::output::is_declaration;
use super::unwrap::skip_options;

impl Analyzer {
    /// Sets a variable (`None`: to something unknown). A readonly one keeps its value (the
    /// shell refuses the assignment); an opaque one is never known.
    pub(super) fn set_var(&mut self, name: &str, value: Option<String>) {
        if self.readonly.contains(name) {
            return;
        }
        let value = if self.opaque.contains(name) { None } else { value };
        self.assigned.push(name.to_string());
        // Any assignment to `a` or `a[i]` changes the array `a`.
        let base = name.split('[').next().unwrap_or(name);
        if let Some(items) = self.env.get_mut(&array_key(base)) {
            *items = None;
        }
        self.env.insert(name.to_string(), value);
    }

    /// `a=(-rf ~)`: the array's words, when every one is known and there is at least one (an
    /// empty `"${a[@]}"` is no word at all, which is not modelled). Kept in the variable table
    /// under `a[@]`, so that it is forgotten wherever the table forgets values.
    pub(super) fn set_array(&mut self, name: &str, items: Option<Vec<String>>) {
        let items = items.filter(|i| !i.is_empty() && i.iter().all(|w| !w.contains(ARRAY_SEP)));
        self.env.insert(array_key(name), items.map(|i| i.join(&ARRAY_SEP.to_string())));
    }

    /// The words of an array assigned literally, for `"${a[@]}"`.
    pub(super) fn array_items(&self, name: &str) -> Option<Vec<String>> {
        if self.opaque.contains(name) || self.namerefs.contains(name) {
            return None;
        }
        let joined = self.env.get(&array_key(name))?.as_ref()?;
        Some(joined.split(ARRAY_SEP).map(str::to_string).collect())
    }

    /// `X=1 :`: dash keeps assignments made before a special builtin; bash does not.
    pub(super) fn prefix_assigns(&mut self, program: &Field, values: &[(String, Field, bool)]) {
        const SPECIAL: &[&str] = &[
            ":", ".", "break", "continue", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift",
            "times", "trap", "unset",
        ];
        if values.is_empty() || program.dynamic || !SPECIAL.contains(&program.text.as_str()) || self.bash() {
            return;
        }
        for (name, value, _) in values {
            self.set_var(name, (!value.dynamic).then(|| value.text.clone()));
        }
    }

    /// After a function definition: the variables its body assigns may change whenever it is
    /// called, which is not followed, so they are never known again.
    pub(super) fn function_defined(&mut self, assigned_before: usize) {
        let names: Vec<String> = self.assigned.drain(assigned_before..).collect();
        for name in names {
            self.env.insert(name.clone(), None);
            self.opaque.insert(name);
        }
    }

    /// Every variable named in arithmetic text that assigns (`x=4`, `x++`, `x+=1`): unknown.
    pub(super) fn arith_assigns(&mut self, text: &str) {
        if !text.contains('=') && !text.contains("++") && !text.contains("--") {
            return;
        }
        let mut rest = text;
        while let Some(start) = rest.find(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let tail = &rest[start..];
            let len = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
            self.set_var(&tail[..len], None);
            rest = &tail[len..];
        }
    }

    /// `export X=rm`, `local X=…`, `readonly`, `unset X`: keep the variable table current.
    pub(super) fn track_declarations(&mut self, fields: &[Field]) {
        let program = super::basename(&fields[0].text);
        // dash has no `declare` or `typeset`: there they are commands not found, which assign
        // nothing (`d=~; typeset d=/tmp/x; rm -rf "$d"` deletes ~).
        let known_here = self.dialect != super::dialect::Dialect::Dash || !matches!(program, "declare" | "typeset");
        if is_declaration(program) && !known_here {
            return;
        }
        if is_declaration(program) {
            // Outside a function `local` is an error and assigns nothing.
            if program == "local" && self.in_function == 0 {
                return;
            }
            for f in &fields[1..] {
                if let Some((name, value)) = f.text.split_once('=') {
                    let value = (!f.dynamic).then(|| value.to_string());
                    match name.strip_suffix('+') {
                        // `export X+=b` appends, as `X+=b` does.
                        Some(name) => {
                            let old = self.env.get(name).cloned().flatten();
                            self.set_var(name, old.zip(value).map(|(o, v)| o + &v));
                        }
                        None => self.set_var(name, value),
                    }
                }
            }
            // `declare -r` and `typeset -r` (alone or among other flags) make names readonly too.
            let flagged_r = matches!(program, "declare" | "typeset")
                && fields[1..]
                    .iter()
                    .any(|f| f.text.starts_with('-') && !f.text.starts_with("--") && f.text.contains('r'));
            if program == "readonly" || flagged_r {
                for f in fields[1..].iter().filter(|f| !f.text.starts_with('-')) {
                    self.readonly.insert(f.text.split_once('=').map_or(&f.text[..], |(n, _)| n).to_string());
                }
            }
        } else if program == "unset" {
            for f in fields[1..].iter().filter(|f| !f.text.starts_with('-')) {
                if f.text == "IFS" {
                    // Unset, IFS splits on blanks again.
                    self.env.remove("IFS");
                } else {
                    // Unset is not empty (`${X-d}` tells them apart): not followed.
                    self.set_var(&f.text.clone(), None);
                }
            }
        }
    }

    /// Builtins that assign the variables their operands name (`read x`, `printf -v x`,
    /// `mapfile x`, `getopts o x`, `let x=1`): those become unknown.
    pub(super) fn builtin_assigns(&mut self, words: &[Field]) {
        let Some(first) = words.first() else { return };
        let mut names: Vec<String> = Vec::new();
        match super::basename(&first.text) {
            "read" => {
                let (i, opts) = skip_options(words, 1, "adinNptu", &[], false);
                names.extend(opts.iter().filter(|(n, _)| n == "-a").filter_map(|(_, v)| v.clone()));
                names.extend(words[i..].iter().map(|f| f.text.clone()));
                names.push("REPLY".into());
            }
            "printf" => {
                let (_, opts) = skip_options(words, 1, "v", &[], false);
                names.extend(opts.iter().filter(|(n, _)| n == "-v").filter_map(|(_, v)| v.clone()));
            }
            "mapfile" | "readarray" => {
                let (i, _) = skip_options(words, 1, "dnOsucC", &[], false);
                names.extend(words[i..].iter().map(|f| f.text.clone()));
                names.push("MAPFILE".into());
            }
            "getopts" => {
                names.extend(words.get(2).map(|f| f.text.clone()));
                names.extend(["OPTARG".into(), "OPTIND".into()]);
            }
            "let" => {
                for f in &words[1..] {
                    self.arith_assigns(&f.text);
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                // An attribute that changes what is stored (`-i` evaluates, `-u`/`-l`/`-c` change
                // case): the variable's value is not followed from here on.
                let attrs =
                    words[1..].iter().any(|f| f.text.starts_with(['-', '+']) && f.text.contains(['i', 'u', 'l', 'c']));
                if attrs {
                    for f in words[1..].iter().filter(|f| !f.text.starts_with(['-', '+'])) {
                        let name = f.text.split_once('=').map_or(&f.text[..], |(n, _)| n);
                        self.opaque.insert(name.to_string());
                        self.env.insert(name.to_string(), None);
                    }
                }
            }
            _ => {}
        }
        for name in names {
            // `read 'a[1]'`: the array, by its name.
            let name = name.split('[').next().unwrap_or_default().to_string();
            self.set_var(&name, None);
        }
    }
}

/// Separates the words of an array in its entry of the variable table.
const ARRAY_SEP: char = '\u{1}';

fn array_key(name: &str) -> String {
    format!("{name}[@]")
}

#[cfg(test)]
mod tests {
    use crate::shell::{Dialect, analyze_script_in};

    /// The words of the last top-level `echo`, or `None` when cmdguard marked them unknown.
    fn echoed(script: &str, dialect: Dialect) -> Option<Vec<String>> {
        let a = analyze_script_in(script, dialect);
        let seg = a.segments.iter().rev().find(|s| s.origin.is_empty() && s.words[0] == "echo").unwrap();
        seg.is_static.then(|| seg.words[1..].to_vec())
    }

    #[test]
    fn a_changed_variable_is_never_a_stale_known_value() {
        // Each of these was a wrong known value the expansion differential found.
        let unknown = [
            "x=a; for x in b; do :; done; echo $x",
            "x=a; printf -v x %s b; echo $x",
            "x=a; read x <<< b; echo $x",
            "x=a; mapfile -t x <<< b; echo $x",
            "x=a; getopts b x -b; echo $x",
            "x=a; let x=4; echo $x",
            "x=a; ((x=4)); echo $x",
            "x=a; : $((x=4)); echo $x",
            "f() { x=b; }; x=a; f; echo $x",
            "declare -u x=abc; echo $x",
            "declare -i x=1+2; echo $x",
            "x=; : ${x:='~'}; echo $x",
            "x=a; unset x; echo ${x+w} ${x-d}",
            "echo ${CG_UNSET:-d} ${CG_UNSET+w}",
            "x=~; echo $x.suf",
            "echo ~root ~+",
            "echo {1..3}",
            "echo {a,'b}'",
            "x=/tmp; echo $x{a,b}",
            "echo $(printf %d 010)",
        ];
        for script in unknown {
            assert_eq!(echoed(script, Dialect::Bash), None, "{script:?}");
        }
        let known: &[(&str, &[&str])] = &[
            ("x=a; export x+=b; echo $x", &["ab"]),
            ("x=a; local x=b; echo $x", &["a"]),
            ("readonly x=a; x=b; echo $x", &["a"]),
            ("x=; echo $x ${x:=d} $x", &["d", "d"]),
            ("x=$'a\\rb\\vc'; echo $x", &["a\rb\x0bc"]),
            ("IFS=; echo $(echo)", &[]),
            ("eval x='{p,q}'; echo \"$x\"", &["{p,q}"]),
            ("echo r{m,}", &["rm", "r"]),
        ];
        for (script, want) in known {
            let want: Vec<String> = want.iter().map(|w| w.to_string()).collect();
            assert_eq!(echoed(script, Dialect::Bash), Some(want), "{script:?}");
        }
        assert_eq!(echoed("x=b :; echo $x", Dialect::Dash), Some(vec!["b".to_string()]));
        assert_eq!(echoed("x=b :; echo $x", Dialect::Bash), None);
    }
}
