//! Word expansion as a reader can do it statically: quotes removed, variables assigned literally
//! earlier in the same command substituted, trivial command substitutions (`$(echo rm)`)
//! replaced by their output, unquoted results split into fields, brace expansion. Everything
//! else stays visible as `$NAME`, `$(…)`, `<(…)` and marks the field dynamic. Substitutions are
//! walked as they are met, so their commands are analysed too.

use super::analyze::Analyzer;
use super::ast::{Arith, Param, Part, Word};
use super::brace::{brace_expand, sequence};
use super::{Field, MAX_EXPANDED_BYTES, MAX_WORD_BYTES};

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
    /// The current field holds a value with a `~` in it: kept as home (canonical) only where
    /// a word reads it so (`~`, `~/x`, `a=~`), else not known (`X=~; $X.suf`).
    cur_value_tilde: bool,
    /// A field grew past `MAX_WORD_BYTES`; the rest of it was not kept.
    overflow: bool,
    /// `IFS` as assigned earlier in the command: `None` for the default (blanks), `Some(None)`
    /// when assigned something unknown.
    ifs: Option<Option<String>>,
    /// Emptied strings of words expanded before (`Spare`): each field is written into one.
    spare: Vec<String>,
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
    /// Says whether it holds a `{`.
    fn push_unquoted(&mut self, text: &str) -> bool {
        let mut brace = false;
        for c in text.bytes() {
            match c {
                b'=' => self.cur_eq = true,
                b'*' | b'?' | b'[' if !self.cur_eq => self.cur_glob = true,
                b'{' => brace = true,
                _ => {}
            }
        }
        self.push_text(text, false);
        brace
    }

    fn end_field(&mut self) {
        if self.started {
            let empty = Field { text: self.spare.pop().unwrap_or_default(), dynamic: false };
            let mut field = std::mem::replace(&mut self.cur, empty);
            field.dynamic |= self.cur_value_tilde && !home_tildes_only(&field.text);
            // `-r[f]`, `--h*d`: the shell replaces the word with matching file names, and a file
            // named `-rf` or `--hard` turns it into that option. (`--exclude=*.o` is safe: the
            // option is fixed before the wildcard.)
            if self.cur_glob && field.text.starts_with('-') {
                self.option_globs.push(field.text.clone());
            }
            self.fields.push(field);
        }
        self.started = false;
        self.cur_value_tilde = false;
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
        if value.starts_with(is_blank) {
            self.end_field();
        }
        let mut pieces = value.split(is_blank).filter(|p| !p.is_empty()).peekable();
        while let Some(piece) = pieces.next() {
            self.push_unquoted(piece);
            if pieces.peek().is_some() {
                self.end_field();
            }
        }
        if value.ends_with(is_blank) {
            self.end_field();
        }
    }

    /// Marks what was pushed since `fields` fields were complete as not known.
    fn mark_dynamic_since(&mut self, fields: usize) {
        let from = fields.min(self.fields.len());
        self.fields[from..].iter_mut().for_each(|f| f.dynamic = true);
        if self.started {
            self.cur.dynamic = true;
        }
    }
}

/// The blanks of the default `IFS` (space, tab, newline; not `\r`, `\v` or other spaces).
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

impl Builder {
    /// Field splitting on an assigned `IFS`. Runs of IFS blanks count as one separator; a
    /// field left empty between other separators (`a::b` with `IFS=:`) is not followed, so the
    /// word is marked unknown.
    fn push_split(&mut self, value: &str, ifs: &str) {
        if ifs.is_empty() {
            // No splitting; an empty value still leaves no field.
            if !value.is_empty() {
                self.push_unquoted(value);
            }
            return;
        }
        let pieces: Vec<&str> = value.split(|c| ifs.contains(c)).collect();
        let inner_empty = pieces.len() > 2 && pieces[1..pieces.len() - 1].iter().any(|p| p.is_empty());
        let blank_only = ifs.chars().all(is_blank);
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
    /// Expands words into fields (usually one a word; none for an unquoted empty expansion),
    /// one vector for all of them.
    pub(super) fn expand_words(&mut self, words: &[Word]) -> Vec<Field> {
        let mut fields = self.out.spare.fields.pop().unwrap_or_default();
        fields.reserve(words.len());
        for w in words {
            self.expand_into(w, true, &mut fields);
        }
        fields
    }

    /// Appends a word's fields to `out`. `braces`: bash brace-expands the word (not an
    /// assignment's value: `X={a,b}` is as is).
    fn expand_into(&mut self, word: &Word, braces: bool, out: &mut Vec<Field>) {
        // The builder appends to `out` itself; this word's fields start at `base`.
        let base = out.len();
        let mut spare = std::mem::take(&mut self.out.spare.texts);
        let cur = Field { text: spare.pop().unwrap_or_default(), dynamic: false };
        let ifs = self.env.get("IFS").cloned();
        let mut b = Builder { fields: std::mem::take(out), cur, ifs, spare, ..Builder::default() };
        let mut brace = false;
        for part in &word.0 {
            match part {
                Part::Lit { text, quoted: true } => {
                    b.cur_eq |= text.as_bytes().contains(&b'=');
                    b.push_text(text, false);
                }
                Part::Lit { text, quoted: false } => {
                    let open = b.push_unquoted(text);
                    brace |= braces && open && (text.contains(',') || text.contains(".."));
                }
                Part::Param(param) => {
                    let Param { name, quoted, raw, nested } = &**param;
                    for script in nested {
                        self.walk_nested_script(script, "${…}");
                    }
                    self.decoded |= self.decoded_vars.contains(name);
                    let whole = raw.as_deref().is_some_and(|r| r.strip_prefix(name.as_str()) == Some("[@]"));
                    if let Some(words) = self.positional_words().map(<[Field]>::to_vec)
                        && let Some(chosen) = positional(name, raw.as_deref(), &words)
                    {
                        // Inside a function called here: `"$@"`, `$1`, `$#`.
                        // `"$*"` joins the words with IFS's first character: a space unless IFS changed.
                        let splits = (*quoted || b.ifs.is_none()) && (name != "*" || b.ifs.is_none());
                        if splits || chosen.len() <= 1 {
                            for (k, w) in chosen.iter().enumerate() {
                                if k > 0 {
                                    if *quoted && name != "*" { b.end_field() } else { b.push_value(" ", *quoted) }
                                }
                                let n = b.fields.len();
                                b.push_value(&w.text, *quoted);
                                if w.dynamic {
                                    b.mark_dynamic_since(n);
                                    self.split_unknown |= !*quoted;
                                }
                            }
                            continue;
                        }
                    }
                    // Unquoted, the elements split again; with IFS changed that is not followed.
                    let splits_plainly = *quoted || b.ifs.is_none();
                    if let Some(items) = (whole && splits_plainly).then(|| self.array_items(name)).flatten() {
                        // `"${a[@]}"`: one word per element (split again when unquoted).
                        for (k, item) in items.iter().enumerate() {
                            if k > 0 {
                                if *quoted {
                                    b.end_field();
                                } else {
                                    b.push_value(" ", false);
                                }
                            }
                            b.cur_value_tilde |= item.contains('~');
                            b.push_value(item, *quoted);
                        }
                        continue;
                    }
                    let value = self.param_value(name, raw.as_deref());
                    // A `mktemp -d` directory is known only as a whole quoted word: if mktemp
                    // failed the variable is empty, and `"$d"/*` is `/*` (tempdir.rs); unquoted,
                    // it would split on the blanks of TMPDIR.
                    let whole_word = word.0.len() == 1 && *quoted;
                    // Shown, but not known: the directory's name is only known when it runs.
                    let value = match value {
                        Some((v, _)) if v == super::tempdir::MKTEMP_DIR => whole_word.then_some((v, true)),
                        other => other,
                    };
                    match value {
                        // An unknown value's default that splits away would leave no word at all.
                        Some((v, false)) => {
                            b.cur_value_tilde |= v.contains('~');
                            b.push_value(&v, *quoted);
                        }
                        Some((v, true)) if !v.trim_matches(is_blank).is_empty() => {
                            let n = b.fields.len();
                            b.push_value(&v, *quoted);
                            b.mark_dynamic_since(n);
                            self.split_unknown |= !*quoted;
                        }
                        _ => {
                            let shown = match raw {
                                // `${HOME:-/tmp}`: HOME is always set, so the shell uses HOME.
                                Some(_) if always_set(name) && !self.env.contains_key(name.as_str()) => {
                                    format!("${name}")
                                }
                                Some(r) => format!("${{{r}}}"),
                                None => format!("${name}"),
                            };
                            self.split_unknown |= !*quoted;
                            b.push_text(&shown, true);
                        }
                    }
                }
                Part::Subst { script, quoted } => match self.walk_subst(script) {
                    (Some(out), _, _) => {
                        b.cur_value_tilde |= out.contains('~');
                        b.push_value(&out, *quoted);
                    }
                    (None, shown, decodes) => {
                        self.decoded |= decodes;
                        self.split_unknown |= !*quoted;
                        b.push_text(&format!("$({shown})"), true);
                    }
                },
                Part::Proc { dir, script } => {
                    let (_, shown, _) = self.walk_subst(script);
                    b.push_text(&format!("{dir}({shown})"), true);
                }
                Part::Arith(arith) => {
                    let Arith { raw, nested } = &**arith;
                    for script in nested {
                        self.walk_nested_script(script, "$((…))");
                    }
                    self.arith_assigns(raw);
                    // bash evaluates the values of the variables named, subscripts and all (dash
                    // refuses such values, so reading them the bash way costs nothing).
                    if !self.code_values(raw).is_empty() {
                        self.arith(raw, 0, false);
                    }
                    b.push_text(&format!("$(({raw}))"), true);
                }
                Part::Array(items) => {
                    let inner: Vec<String> = self.expand_words(items).into_iter().map(|f| f.text).collect();
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
        self.expanded += b.fields[base..].iter().map(|f| f.text.len()).sum::<usize>();
        if self.expanded > MAX_EXPANDED_BYTES && !self.exhausted {
            self.exhaust(format!("the command's words expand to more than {MAX_EXPANDED_BYTES} bytes"));
        }
        for shown in std::mem::take(&mut b.option_globs) {
            self.issue(
                super::IssueKind::Dynamic,
                format!("the option `{shown}` holds a wildcard: a file named like an option would replace it"),
            );
        }
        // The strings not written into go back (a word walked meanwhile may have kept more).
        let mut rest = std::mem::take(&mut b.cur.text);
        // Whatever is taken from the pool is appended to: it must go back empty.
        rest.clear();
        b.spare.push(rest);
        b.spare.append(&mut self.out.spare.texts);
        self.out.spare.texts = std::mem::take(&mut b.spare);
        *out = b.fields;
        let fields = &mut out[base..];
        if tilde_prefix(word) {
            // `~root`, `~+`, `~-`: a user's home or a directory, only known when it runs.
            fields.iter_mut().take(1).for_each(|f| f.dynamic = true);
        } else if matches!(word.0.first(), Some(Part::Lit { text, quoted: false }) if text.starts_with('~'))
            && let Some(home) = self.env.get("HOME")
            && let Some(first) = fields.first_mut()
        {
            // `HOME=/; rm -rf ~`: the `~` is the HOME assigned on this line, not the home.
            match home {
                Some(value) => first.text.replace_range(..1, value),
                // Assigned something not known: the word reads `$HOME/…`, not known either.
                None => {
                    first.text.replace_range(..1, "$HOME");
                    first.dynamic = true;
                }
            }
        }
        if !brace {
            return;
        }
        // Brace expansion is bash's; dash leaves `{a,b}` as it is. bash expands braces before
        // anything else, so only a word of plain unquoted text is expanded here: where quotes
        // or expansions take part (`{a,'b}'`, `$x{a,b}`), or for a sequence (`{1..3}`), the
        // word is marked not known.
        let joined: String = fields.iter().map(|f| f.text.as_str()).collect();
        let mixed = word.0.len() > 1 || sequence(&joined);
        if joined.contains('}') && mixed && self.bash() {
            fields.iter_mut().for_each(|f| f.dynamic = true);
        } else if fields.len() == 1 && !fields[0].dynamic && self.bash() {
            match brace_expand(&fields[0].text) {
                Some(expanded) if expanded.len() > 1 => {
                    out.truncate(base);
                    out.extend(expanded.into_iter().map(Field::lit));
                }
                Some(_) => {}
                // Too many alternatives to follow: keep the word, marked as not known.
                None => fields[0].dynamic = true,
            }
        }
    }

    /// Expands a word into one field without splitting (assignment values, redirect targets).
    pub(super) fn expand_joined(&mut self, word: &Word) -> Field {
        let mut fields = Vec::new();
        self.expand_into(word, false, &mut fields);
        let dynamic = fields.iter().any(|f| f.dynamic);
        let text = match fields.len() {
            1 => fields.pop().map(|f| f.text).unwrap_or_default(),
            _ => fields.into_iter().map(|f| f.text).collect::<Vec<_>>().join(" "),
        };
        Field { text, dynamic }
    }

    /// A parameter's value and whether it is not known for sure (a default or alternative
    /// word used for a variable whose value is unknown); `None` when nothing is known.
    fn param_value(&mut self, name: &str, raw: Option<&str>) -> Option<(String, bool)> {
        // A reference (`declare -n`) names another variable, which is not followed.
        let hidden = self.namerefs.contains(name) || self.opaque.contains(name);
        let known = if hidden { None } else { self.env.get(name).cloned().flatten() };
        let Some(r) = raw else { return known.map(|v| (v, false)) };
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
                let assigns = op.ends_with('=');
                return Some(match known {
                    // With `:`, an empty value counts as unset.
                    Some(v) if !(v.is_empty() && op.starts_with(':')) => (v, false),
                    Some(_) => {
                        if assigns {
                            self.set_var(name, Some(w.to_string()));
                        }
                        (w.to_string(), false)
                    }
                    // Unknown (from the environment, or assigned something unknown): the word is
                    // judged, since the command as written says what it means to run
                    // (`git reset ${X:---hard}`), but it is not known to be the value.
                    None => {
                        if assigns {
                            self.set_var(name, None);
                        }
                        (w.to_string(), true)
                    }
                });
            }
        }
        if ops.starts_with(":=") || ops.starts_with('=') {
            // `${X:='…'}` may assign a value not read here.
            self.set_var(name, None);
        }
        for op in [":+", "+"] {
            if let Some(w) = word(op) {
                // `${X:+word}`: the word when X is set. Unknown X: the word, the stricter
                // reading, not known to be used.
                return Some(match &known {
                    Some(v) if v.is_empty() && op == ":+" => (String::new(), false),
                    Some(_) => (w.to_string(), false),
                    None => (w.to_string(), true),
                });
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

/// Whether a word starts (or, after `=` or `:`, goes on) with a tilde prefix naming a user or
/// a directory stack entry (`~root`, `~+`, `~-`); plain `~` and `~/…` are kept as home.
fn tilde_prefix(word: &Word) -> bool {
    let Some(Part::Lit { text, quoted: false }) = word.0.first() else { return false };
    // `~` is one byte in UTF-8, and no other character's bytes hold it.
    text.bytes().enumerate().any(|(i, c)| {
        c == b'~'
            && (i == 0 || text[..i].ends_with(['=', ':']))
            && text[i + 1..].chars().next().is_some_and(|n| n != '/' && n != ':')
    })
}

/// Whether every `~` in a word is where a word reads it as home: at the start or after `=` or
/// `:`, followed by `/`, `:` or the end.
fn home_tildes_only(text: &str) -> bool {
    text.match_indices('~').all(|(i, _)| {
        (i == 0 || text[..i].ends_with(['=', ':']))
            && (text[i + 1..].is_empty() || text[i + 1..].starts_with(['/', ':']))
    })
}

/// The positional parameters `$NAME` stands for, given the call's words: all for `@`, one for
/// a digit (none past the last), the count for `#`. `None` for other names and for operators
/// (`${1:-x}`), which are not followed.
fn positional(name: &str, raw: Option<&str>, words: &[Field]) -> Option<Vec<Field>> {
    if raw.is_some_and(|r| r != name) {
        return None;
    }
    if super::functions::is_unknown(words)
        && (matches!(name, "@" | "*" | "#") || name.chars().all(|c| c.is_ascii_digit()) && name != "0")
    {
        return Some(vec![Field { text: String::new(), dynamic: true }]);
    }
    match name {
        "@" | "*" => Some(words.to_vec()),
        "#" => Some(vec![Field::lit(words.len().to_string())]),
        n if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && n != "0" => {
            let i: usize = n.parse().ok()?;
            Some(words.get(i - 1).cloned().map_or_else(|| vec![Field::lit("")], |w| vec![w]))
        }
        _ => None,
    }
}
