//! Word expansion as a reader can do it statically: quotes removed, variables assigned literally
//! earlier in the same command substituted, trivial command substitutions (`$(echo rm)`)
//! replaced by their output, unquoted results split into fields, brace expansion. Everything
//! else stays visible as `$NAME`, `$(…)`, `<(…)` and marks the field dynamic. Substitutions are
//! walked as they are met, so their commands are analysed too.

use super::analyze::Analyzer;
use super::ast::{Part, Word};
use super::{Field, MAX_EXPANDED_BYTES, MAX_WORD_BYTES};

/// Most fields one word may brace-expand into.
const MAX_BRACE_FIELDS: usize = 64;

#[derive(Default)]
struct Builder {
    fields: Vec<Field>,
    cur: Field,
    started: bool,
    /// The current field holds an unquoted wildcard before any `=` (it is globbed by the shell).
    cur_glob: bool,
    cur_eq: bool,
    /// Fields that are options whose text a wildcard can change: `-r[f]`, `--h?rd`.
    option_globs: Vec<String>,
    /// A field grew past `MAX_WORD_BYTES`; the rest of it was not kept.
    overflow: bool,
    /// `IFS` as assigned earlier in the command: `None` for the default (blanks), `Some(None)`
    /// when assigned something unknown.
    ifs: Option<Option<String>>,
}

impl Builder {
    fn push_text(&mut self, text: &str, dynamic: bool) {
        if self.cur.text.len() + text.len() > MAX_WORD_BYTES {
            self.overflow = true;
            self.cur.dynamic = true;
            self.started = true;
            return;
        }
        self.cur.text.push_str(text);
        self.cur.dynamic |= dynamic;
        self.started = true;
    }

    /// Text the shell globs: literal text outside quotes, or an unquoted expansion's value.
    fn push_unquoted(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '=' => self.cur_eq = true,
                '*' | '?' | '[' if !self.cur_eq => self.cur_glob = true,
                _ => {}
            }
        }
        self.push_text(text, false);
    }

    fn end_field(&mut self) {
        if self.started {
            let field = std::mem::replace(&mut self.cur, Field::lit(""));
            // `-r[f]`, `--h*d`: the shell replaces the word with matching file names, and a file
            // named `-rf` or `--hard` turns it into that option. (`--exclude=*.o` is safe: the
            // option is fixed before the wildcard.)
            if self.cur_glob && field.text.starts_with('-') {
                self.option_globs.push(field.text.clone());
            }
            self.fields.push(field);
        }
        self.started = false;
        self.cur_glob = false;
        self.cur_eq = false;
    }

    /// Inserts an expansion's value: verbatim when quoted, else split on `IFS` (blanks unless
    /// assigned otherwise).
    fn push_value(&mut self, value: &str, quoted: bool) {
        if quoted {
            self.push_text(value, false);
            return;
        }
        match self.ifs.clone() {
            None => {}
            Some(None) => return self.push_text(value, true),
            Some(Some(ifs)) => return self.push_split(value, &ifs),
        }
        if value.starts_with(char::is_whitespace) {
            self.end_field();
        }
        let mut pieces = value.split_whitespace().peekable();
        while let Some(piece) = pieces.next() {
            self.push_unquoted(piece);
            if pieces.peek().is_some() {
                self.end_field();
            }
        }
        if value.ends_with(char::is_whitespace) {
            self.end_field();
        }
    }
}

impl Builder {
    /// Field splitting on an assigned `IFS`. Runs of IFS blanks count as one separator; a
    /// field left empty between other separators (`a::b` with `IFS=:`) is not followed, so the
    /// word is marked unknown.
    fn push_split(&mut self, value: &str, ifs: &str) {
        if ifs.is_empty() {
            return self.push_unquoted(value);
        }
        let pieces: Vec<&str> = value.split(|c| ifs.contains(c)).collect();
        let inner_empty = pieces.len() > 2 && pieces[1..pieces.len() - 1].iter().any(|p| p.is_empty());
        let blank_only = ifs.chars().all(char::is_whitespace);
        if inner_empty && !blank_only {
            self.cur.dynamic = true;
        }
        if value.starts_with(|c| ifs.contains(c)) {
            self.end_field();
        }
        let kept: Vec<&str> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        for (i, piece) in kept.iter().enumerate() {
            self.push_unquoted(piece);
            if i + 1 < kept.len() {
                self.end_field();
            }
        }
        if value.ends_with(|c| ifs.contains(c)) {
            self.end_field();
        }
    }
}

impl Analyzer {
    /// Expands a word into fields (usually one; none for an unquoted empty expansion).
    pub(super) fn expand(&mut self, word: &Word) -> Vec<Field> {
        let mut b = Builder { ifs: self.env.get("IFS").cloned(), ..Builder::default() };
        let mut brace = false;
        for part in &word.0 {
            match part {
                Part::Lit { text, quoted: true } => {
                    b.cur_eq |= text.contains('=');
                    b.push_text(text, false);
                }
                Part::Lit { text, quoted: false } => {
                    brace |= text.contains('{') && text.contains(',');
                    b.push_unquoted(text);
                }
                Part::Param { name, quoted, raw, nested } => {
                    for script in nested {
                        self.walk_nested_script(script, "${…}");
                    }
                    self.decoded |= self.decoded_vars.contains(name);
                    match self.param_value(name, raw.as_deref()) {
                        Some(v) => b.push_value(&v, *quoted),
                        None => {
                            let shown = match raw {
                                // `${HOME:-/tmp}`: HOME is always set, so the shell uses HOME.
                                Some(_) if always_set(name) && !self.env.contains_key(name.as_str()) => {
                                    format!("${name}")
                                }
                                Some(r) => format!("${{{r}}}"),
                                None => format!("${name}"),
                            };
                            b.push_text(&shown, true);
                        }
                    }
                }
                Part::Subst { script, quoted } => match self.walk_subst(script) {
                    (Some(out), _, _) => b.push_value(&out, *quoted),
                    (None, shown, decodes) => {
                        self.decoded |= decodes;
                        b.push_text(&format!("$({shown})"), true);
                    }
                },
                Part::Proc { dir, script } => {
                    let (_, shown, _) = self.walk_subst(script);
                    b.push_text(&format!("{dir}({shown})"), true);
                }
                Part::Arith { raw, nested } => {
                    for script in nested {
                        self.walk_nested_script(script, "$((…))");
                    }
                    // bash evaluates the values of the variables named, subscripts and all (dash
                    // refuses such values, so reading them the bash way costs nothing).
                    if !self.code_values(raw).is_empty() {
                        self.arith(raw, 0, false);
                    }
                    b.push_text(&format!("$(({raw}))"), true);
                }
                Part::Array(items) => {
                    let inner: Vec<String> = items.iter().flat_map(|w| self.expand(w)).map(|f| f.text).collect();
                    b.push_text(&format!("({})", inner.join(" ")), true);
                }
            }
        }
        b.end_field();
        if b.overflow {
            self.issue(
                super::IssueKind::TooComplex,
                format!("a word expands to more than {MAX_WORD_BYTES} bytes; the rest of it is not read"),
            );
        }
        self.expanded += b.fields.iter().map(|f| f.text.len()).sum::<usize>();
        if self.expanded > MAX_EXPANDED_BYTES && !self.exhausted {
            self.exhaust(format!("the command's words expand to more than {MAX_EXPANDED_BYTES} bytes"));
        }
        for shown in std::mem::take(&mut b.option_globs) {
            self.issue(
                super::IssueKind::Dynamic,
                format!("the option `{shown}` holds a wildcard: a file named like an option would replace it"),
            );
        }
        // Brace expansion is bash's; dash leaves `{a,b}` as it is.
        if brace && b.fields.len() == 1 && !b.fields[0].dynamic && self.bash() {
            match brace_expand(&b.fields[0].text) {
                Some(expanded) if expanded.len() > 1 => return expanded.into_iter().map(Field::lit).collect(),
                Some(_) => {}
                // Too many alternatives to follow: keep the word, marked as not known.
                None => b.fields[0].dynamic = true,
            }
        }
        b.fields
    }

    /// Expands a word into one field without splitting (assignment values, redirect targets).
    pub(super) fn expand_joined(&mut self, word: &Word) -> Field {
        let fields = self.expand(word);
        let dynamic = fields.iter().any(|f| f.dynamic);
        Field { text: fields.into_iter().map(|f| f.text).collect::<Vec<_>>().join(" "), dynamic }
    }

    fn param_value(&self, name: &str, raw: Option<&str>) -> Option<String> {
        // A reference (`declare -n`) names another variable, which is not followed.
        let known = if self.namerefs.contains(name) { None } else { self.env.get(name).cloned().flatten() };
        let Some(r) = raw else { return known };
        let ops = r.strip_prefix(name).unwrap_or("");
        // The word after the operator, when it is plain text (no expansion or quoting in it).
        let word = |op: &str| ops.strip_prefix(op).filter(|w| !w.contains(['$', '`', '"', '\'', '\\']));
        for op in [":-", "-", ":=", "="] {
            if let Some(w) = word(op) {
                // HOME, PWD, USER and the like are always set: the value is the variable's, not
                // the default word, though it is not known here.
                if always_set(name) && !self.env.contains_key(name) {
                    return None;
                }
                // `${X:-word}`: X's value if the reader knows it (with `:`, an empty value counts
                // as unset); else the word is judged, since the command as written says what it
                // means to run (`git reset ${X:---hard}`).
                return match known {
                    Some(v) if !(v.is_empty() && op.starts_with(':')) => Some(v),
                    _ => Some(w.to_string()),
                };
            }
        }
        for op in [":+", "+"] {
            if let Some(w) = word(op) {
                // `${X:+word}`: the word when X is set. Unknown X: the word, the stricter reading.
                return match &known {
                    Some(v) if v.is_empty() && op == ":+" => Some(String::new()),
                    _ => Some(w.to_string()),
                };
            }
        }
        None
    }
}

/// Variables the shell always has set when a command runs (login and bash set them): a default
/// given for one of them (`${HOME:-/tmp}`) is not what the shell uses.
fn always_set(name: &str) -> bool {
    matches!(
        name,
        "HOME"
            | "PWD"
            | "PATH"
            | "USER"
            | "LOGNAME"
            | "SHELL"
            | "UID"
            | "EUID"
            | "PPID"
            | "HOSTNAME"
            | "RANDOM"
            | "SECONDS"
            | "LINENO"
            | "BASHPID"
    )
}

/// Bash brace expansion of `a{b,c}d` forms (sequences like `{1..3}` are left alone); `None`
/// when the word expands to more than `MAX_BRACE_FIELDS` words.
pub fn brace_expand(word: &str) -> Option<Vec<String>> {
    let mut out = vec![word.to_string()];
    let mut i = 0;
    while i < out.len() {
        if out.len() > MAX_BRACE_FIELDS {
            return None;
        }
        match expand_first(&out[i]) {
            Some(parts) => {
                out.splice(i..=i, parts);
            }
            None => i += 1,
        }
    }
    Some(out)
}

fn expand_first(word: &str) -> Option<Vec<String>> {
    let bytes = word.as_bytes();
    for (open, _) in word.match_indices('{') {
        let mut depth = 0;
        let mut commas = Vec::new();
        for (j, &c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let (pre, post) = (&word[..open], &word[j + 1..]);
                        let mut bounds = vec![open];
                        bounds.extend(&commas);
                        bounds.push(j);
                        let alts = bounds.windows(2).map(|w| format!("{pre}{}{post}", &word[w[0] + 1..w[1]]));
                        return Some(alts.collect());
                    }
                }
                b',' if depth == 1 => commas.push(j),
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::brace_expand;

    #[test]
    fn brace_expansion() {
        assert_eq!(brace_expand("{src,.git}").unwrap(), ["src", ".git"]);
        assert_eq!(brace_expand("r{m,}").unwrap(), ["rm", "r"]);
        assert_eq!(brace_expand("a{b,{c,d}}e").unwrap(), ["abe", "ace", "ade"]);
        assert_eq!(brace_expand("{1..3}").unwrap(), ["{1..3}"]);
        assert_eq!(brace_expand("x{a}").unwrap(), ["x{a}"]);
        let many = format!("{{{}}}", vec!["a"; 100].join(","));
        assert!(brace_expand(&many).is_none());
    }
}
