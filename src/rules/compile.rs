//! Raw rule files → checked `Rule`s and `Allow`s. Every error names the file, line, column and
//! rule id; nothing that fails here reaches matching.

use std::borrow::Cow;
use std::collections::HashSet;

use regex_syntax::hir::Hir;
use toml::Spanned;

use super::builtin::{self, Span};
use super::schema::{self, RuleFile, Target};
pub use super::settings::{FileSettings, Mode, NoTty};
use super::{Allow, AllowContext, Conjuncts, Layer, LazyRegex, LiteralSet, LiteralSides, Origin, Pattern, Rule, Texts};
use crate::config::ConfigError;

/// What one rules file contributes.
#[derive(Default)]
pub struct FileItems {
    pub rules: Vec<Rule>,
    pub allows: Vec<Allow>,
    /// Where each of `allows` applies, by index.
    pub contexts: Vec<AllowContext>,
    /// Rule ids or pack names to switch off, with the line they were written on.
    pub disable: Vec<(String, usize, usize)>,
    pub settings: FileSettings,
    /// `[[program]]` entries, checked, as TOML text with the line each starts on.
    pub programs: Vec<(String, usize)>,
}

/// The built-in packs as rules.
pub fn builtin_rules() -> Vec<Rule> {
    use super::builtin::{pieces, sets, text, texts};
    builtin::rules()
        .iter()
        .map(|b| {
            let regex = |p: Span, dfas: Span| LazyRegex::builtin(text(p), pieces(dfas));
            Rule {
                id: Cow::Borrowed(text(b.id)),
                action: b.action,
                target: b.target,
                pattern: regex(b.pattern, b.dfas[0]),
                unless: b.unless.map(|p| regex(p, b.dfas[1])),
                operand: b.operand.map(|p| regex(p, b.dfas[2])),
                unless_operand: b.unless_operand.map(|p| regex(p, b.dfas[3])),
                reason: Cow::Borrowed(text(b.reason)),
                tip: b.tip.map(|t| Cow::Borrowed(text(t))),
                examples: Texts::Builtin(texts(b.examples)),
                counterexamples: Texts::Builtin(texts(b.counterexamples)),
                origin: Origin { layer: Layer::Builtin, file: Cow::Borrowed(text(b.file)), line: b.line },
                literals: b.literals.map(|l| LiteralSet::Builtin(builtin::literals(l))),
                anchored: b.anchored,
                sides: LiteralSides::Builtin(b.literals.unwrap_or((0, 0))),
                conjuncts: Conjuncts::Builtin(sets(b.conjuncts)),
                exempt: builtin::exempt_words(b.exempt),
            }
        })
        .collect()
}

/// Largest rules file cmdguard reads, and most `[[rule]]` and `[[allow]]` entries one file may
/// hold (docs/rules.md, "Limits"): far beyond hand-written files, small enough that a runaway
/// generator fails with a message instead of slowing every command.
pub const MAX_FILE_BYTES: usize = 4 << 20;
pub const MAX_ENTRIES: usize = 20_000;

struct Ctx<'a> {
    file: &'a str,
    lines: schema::LineIndex<'a>,
}

impl Ctx<'_> {
    fn err(&self, offset: usize, message: String) -> ConfigError {
        let (line, col) = self.lines.line_col(offset);
        ConfigError::new(format!("rules file {}, line {line}, column {col}: {message}", self.file))
    }

    fn line(&self, offset: usize) -> usize {
        self.lines.line_col(offset).0
    }

    /// Parses and compiles one pattern, with its parsed syntax (for the prefilter).
    fn regex(&self, id: &str, field: &str, p: &Spanned<String>) -> Result<(Pattern, Hir), ConfigError> {
        let hir = super::literals::check_syntax(p.get_ref())
            .map_err(|e| self.err(p.span().start, format!("rule {id:?}: invalid regex in `{field}`: {e}")))?;
        let pattern = Pattern::from_hir(p.get_ref(), &hir)
            .map_err(|e| self.err(p.span().start, format!("rule {id:?}: regex in `{field}` does not compile: {e}")))?;
        Ok((pattern, hir))
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .split('.')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
}

/// Parses and checks one rules file.
pub fn parse_file(file: &str, text: &str, layer: Layer) -> Result<FileItems, ConfigError> {
    if text.len() > MAX_FILE_BYTES {
        return Err(ConfigError::new(format!(
            "rules file {file}: {} KiB is more than the {} KiB a rules file may hold; split it or remove unused rules",
            text.len() >> 10,
            MAX_FILE_BYTES >> 10
        )));
    }
    let cx = Ctx { file, lines: schema::LineIndex::new(text) };
    let mut raw: RuleFile = toml::from_str(text)
        .map_err(|e| cx.err(e.span().map_or(0, |s| s.start), e.message().trim_end().to_string()))?;
    if raw.rules.len() + raw.allows.len() > MAX_ENTRIES {
        return Err(ConfigError::new(format!(
            "rules file {file}: {} rules and allow entries is more than the {MAX_ENTRIES} one file may hold; split it or remove unused rules",
            raw.rules.len() + raw.allows.len()
        )));
    }
    let mut items = FileItems {
        settings: FileSettings::from_raw(
            &|at, message| cx.err(at, message),
            raw.settings,
            std::mem::take(&mut raw.hook),
        )?,
        ..FileItems::default()
    };
    let mut seen = HashSet::new();
    for r in raw.rules {
        let id = r.id.get_ref().clone();
        let at = r.id.span().start;
        if !valid_id(&id) {
            return Err(cx.err(
                at,
                format!(
                    "rule {id:?}: an id is words of letters, digits, `-` and `_` joined by dots, like \"deploy.prod\""
                ),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(cx.err(at, format!("rule {id:?}: duplicate id in this file")));
        }
        if r.reason.trim().is_empty() {
            return Err(cx.err(at, format!("rule {id:?}: `reason` is empty; say what the command destroys")));
        }
        if r.target != Target::Segment && (r.operand.is_some() || r.unless_operand.is_some()) {
            return Err(
                cx.err(at, format!("rule {id:?}: `operand` and `unless_operand` apply only to target = \"segment\""))
            );
        }
        let (pattern, hir) = cx.regex(&id, "pattern", &r.pattern)?;
        let (prefilter, sides) = match super::literals::prefilter_with_sides(&hir) {
            Some((anchored, lits, sides)) => (Some((anchored, lits)), sides),
            None => (None, Vec::new()),
        };
        let optional = |field: &str, p: &Option<Spanned<String>>| -> Result<Option<LazyRegex>, ConfigError> {
            p.as_ref().map(|p| cx.regex(&id, field, p).map(|(p, _)| LazyRegex::compiled(p))).transpose()
        };
        let rule = Rule {
            unless: optional("unless", &r.unless)?,
            operand: optional("operand", &r.operand)?,
            unless_operand: optional("unless_operand", &r.unless_operand)?,
            literals: prefilter.as_ref().map(|(_, ls)| LiteralSet::Owned(ls.clone())),
            anchored: prefilter.as_ref().is_some_and(|(anchored, _)| *anchored),
            sides: LiteralSides::Owned(sides),
            conjuncts: super::literals::conjuncts_after_of(prefilter.as_ref(), &hir)
                .into_iter()
                .map(LiteralSet::Owned)
                .collect::<Vec<_>>()
                .into(),
            pattern: LazyRegex::compiled(pattern),
            exempt: &[],
            id: Cow::Owned(id),
            action: r.action,
            target: r.target,
            reason: Cow::Owned(r.reason),
            tip: r.tip.map(Cow::Owned),
            examples: r.examples.into(),
            counterexamples: r.counterexamples.into(),
            origin: Origin { layer, file: Cow::Owned(file.to_string()), line: cx.line(at) },
        };
        items.rules.push(rule);
    }
    // Contexts are checked after every pattern, each error naming its own line.
    let contexts: Vec<_> = raw.allows.iter_mut().map(|a| a.context.take()).collect();
    for a in raw.allows {
        let (command, pattern, at) = match (a.command, a.pattern) {
            (Some(c), None) => (Some(c.get_ref().clone()), None, c.span().start),
            (None, Some(p)) => (None, Some(LazyRegex::compiled(cx.regex("allow", "pattern", &p)?.0)), p.span().start),
            _ => {
                return Err(cx.err(0, "an [[allow]] entry needs exactly one of `command` or `pattern`".into()));
            }
        };
        let origin = Origin { layer, file: Cow::Owned(file.to_string()), line: cx.line(at) };
        items.allows.push(Allow { command, pattern, reason: a.reason, origin });
    }
    // Each entry's own text, as a table of its own (toml_edit keeps it as written).
    let bodies: Vec<String> = if raw.programs.is_empty() {
        Vec::new()
    } else {
        let doc: toml_edit::DocumentMut = text.parse().map_err(|_| cx.err(0, "[[program]]: not TOML".into()))?;
        doc.get("program")
            .and_then(|p| p.as_array_of_tables())
            .map(|a| a.iter().map(|t| t.to_string()).collect())
            .unwrap_or_default()
    };
    for (p, text) in raw.programs.iter().zip(bodies) {
        let line = cx.line(p.span().start);
        crate::shell::check_program(&text)
            .map_err(|e| ConfigError::new(format!("rules file {file}, line {line}: [[program]] entry: {e}")))?;
        items.programs.push((text, line));
    }
    for d in raw.disable {
        let (line, col) = cx.lines.line_col(d.span().start);
        items.disable.push((d.into_inner(), line, col));
    }
    items.contexts = contexts
        .into_iter()
        .map(|c| match c {
            None => Ok(AllowContext::Top),
            Some(c) => AllowContext::parse(c.get_ref()).map_err(|why| cx.err(c.span().start, why)),
        })
        .collect::<Result<_, _>>()?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        match parse_file("t.toml", text, Layer::Project) {
            Ok(_) => panic!("{text:?} should not load"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_name_file_line_and_rule() {
        let bad_regex = "[[rule]]\nid = \"deploy\"\naction = \"ask\"\npattern = '(unclosed'\nreason = \"x\"\n";
        let e = error(bad_regex);
        assert!(e.contains("t.toml, line 4") && e.contains("\"deploy\"") && e.contains("unclosed"), "{e}");

        let unknown_key = "[[rule]]\nid = \"a\"\naction = \"ask\"\npattern = 'x'\nreason = \"x\"\npatern = 'y'\n";
        let e = error(unknown_key);
        assert!(e.contains("line 6") && e.contains("patern"), "{e}");

        let bad_target = "[[rule]]\nid = \"a\"\naction = \"ask\"\npattern = 'x'\nreason = \"x\"\ntarget = \"word\"\n";
        assert!(error(bad_target).contains("line 6"));

        let dup = "[[rule]]\nid = \"a\"\naction = \"ask\"\npattern = 'x'\nreason = \"x\"\n[[rule]]\nid = \"a\"\naction = \"deny\"\npattern = 'y'\nreason = \"y\"\n";
        let e = error(dup);
        assert!(e.contains("line 7") && e.contains("duplicate"), "{e}");

        assert!(error("[[rule]]\nid = \"a\"\naction = \"maybe\"\npattern = 'x'\nreason = \"x\"\n").contains("line 3"));
        assert!(error("[[allow]]\nreason = \"nothing\"\n").contains("exactly one"));
        assert!(error("this is not toml").contains("line 1"));
    }

    #[test]
    fn every_builtin_rule_has_prefilter_literals() {
        // A rule without literals compiles its regex on every invocation; keep start-up cheap.
        let without: Vec<_> = builtin_rules().into_iter().filter(|r| r.literals.is_none()).map(|r| r.id).collect();
        assert!(without.is_empty(), "rules without prefilter literals: {without:?}");
    }

    #[test]
    fn oversized_patterns_and_files_fail_naming_the_rule() {
        let bomb = "[[rule]]\nid = \"bomb\"\naction = \"ask\"\npattern = '(?:(?:(?:a{100}){100}){100}){100}'\nreason = \"x\"\n";
        let e = error(bomb);
        assert!(e.contains("t.toml, line 4") && e.contains("\"bomb\"") && e.contains("KiB"), "{e}");
        let rule =
            |i: usize| format!("[[rule]]\nid = \"r{i}\"\naction = \"ask\"\npattern = 'tool{i}'\nreason = \"x\"\n");
        let many: String = (0..=MAX_ENTRIES).map(rule).collect();
        assert!(error(&many).contains("20000"), "{}", error(&many));
        let big = format!("# {}\n", "x".repeat(MAX_FILE_BYTES));
        assert!(error(&big).contains("KiB"));
    }

    #[test]
    fn every_builtin_pattern_is_embedded() {
        // A hit scans DFAs determinized at build time; none is compiled at run time. A pattern
        // build/blob.rs cannot fit is listed in OUT_DIR/builtin_dfas.txt: rewrite it.
        let lazy: Vec<&str> = builtin::rules()
            .iter()
            .flat_map(|b| {
                let present = [Some(b.pattern), b.unless, b.operand, b.unless_operand];
                present.into_iter().zip(b.dfas).filter_map(|(p, d)| p.filter(|_| d.0 == d.1))
            })
            .map(builtin::text)
            .collect();
        assert!(lazy.is_empty(), "built-in patterns left to a lazy DFA: {lazy:#?}");
    }

    #[test]
    fn embedded_dfas_pass_the_checked_deserializer() {
        // Run time reads them unchecked (rules::Pattern::embedded); this is the check.
        for b in builtin::rules() {
            for piece in b.dfas.iter().flat_map(|&d| builtin::pieces(d)) {
                let bytes = super::super::builtin::dfa_bytes(piece.span);
                let checked = match piece.dense {
                    true => regex_automata::dfa::dense::DFA::from_bytes(bytes).map(drop),
                    false => regex_automata::dfa::sparse::DFA::from_bytes(bytes).map(drop),
                };
                if let Err(e) = checked {
                    panic!("{}: embedded DFA does not deserialize: {e}", builtin::text(b.id));
                }
            }
        }
    }

    #[test]
    fn embedded_dfas_match_as_the_full_regex_does() {
        // Verdicts read the DFAs build.rs embedded (or split into alternatives); `explain` reads
        // the full regex. Both must say the same of every text.
        for r in builtin_rules() {
            let texts: Vec<String> = r
                .examples
                .iter()
                .chain(r.counterexamples.iter())
                .flat_map(|t| [t.to_string(), format!("x {t}"), format!("{t} x"), t.replace(' ', "  ")])
                .collect();
            for p in [Some(&r.pattern), r.unless.as_ref(), r.operand.as_ref(), r.unless_operand.as_ref()]
                .into_iter()
                .flatten()
            {
                let full = regex::bytes::RegexBuilder::new(&p.source).unicode(false).build().unwrap();
                for t in &texts {
                    assert_eq!(p.get().is_match(t), full.is_match(t.as_bytes()), "{} {:?} on {t:?}", r.id, p.source);
                }
            }
        }
    }

    #[test]
    fn every_builtin_pattern_compiles() {
        for r in builtin_rules() {
            let _ = r.pattern.get();
            for p in [&r.unless, &r.operand, &r.unless_operand].into_iter().flatten() {
                let _ = p.get();
            }
        }
    }
}
