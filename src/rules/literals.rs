//! Required literals of a rule pattern, for the prefilter: a finite set of byte strings such that
//! any match of the pattern contains at least one of them. Rules whose literals do not occur in a
//! text are never compiled or run on it, which keeps start-up cheap (regexes compile on first
//! use). Shared with `build.rs`, which computes the built-in packs' sets at build time.

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

/// Parses `pattern` as the `regex` crate would, returning a message on error.
pub fn check_syntax(pattern: &str) -> Result<regex_syntax::hir::Hir, String> {
    regex_syntax::ParserBuilder::new().build().parse(pattern).map_err(|e| one_line(&e.to_string()))
}

fn one_line(message: &str) -> String {
    // regex-syntax errors are multi-line drawings; keep the final "error: …" sentence.
    message
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("error:"))
        .map(|l| l.trim_start().trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| message.lines().next().unwrap_or("").to_string())
}

/// Shortest literal worth filtering on; shorter ones (`>`, `~`) occur in too many commands.
const MIN_LITERAL: usize = 2;
/// Most alternatives a required set may hold.
const MAX_ALTERNATIVES: usize = 64;

/// Literals one of which every match of `hir` contains, found anywhere in the pattern (not only at
/// its start or end): `(^|\s)>\s+/dev/sd[a-z]` requires `/dev/sd`.
fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(lit) => (lit.0.len() >= MIN_LITERAL).then(|| vec![lit.0.to_vec()]),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Concat(subs) => {
            // The best requirement of any part: the one whose shortest literal is longest.
            subs.iter()
                .filter_map(required)
                .max_by_key(|set| (set.iter().map(Vec::len).min().unwrap_or(0), usize::MAX - set.len()))
        }
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for sub in subs {
                all.extend(required(sub)?);
            }
            (all.len() <= MAX_ALTERNATIVES).then_some(all)
        }
        _ => None,
    }
}

/// The literals one of which every match contains, or `None` when no useful finite set exists
/// (the rule is then checked against every text).
pub fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = check_syntax(pattern).ok()?;
    if let Some(mut lits) = required(&hir) {
        lits.sort();
        lits.dedup();
        return Some(lits);
    }
    for prefix in [true, false] {
        let kind = if prefix { ExtractKind::Prefix } else { ExtractKind::Suffix };
        let mut seq = Extractor::new().kind(kind).extract(&hir);
        if prefix {
            seq.optimize_for_prefix_by_preference();
        } else {
            seq.optimize_for_suffix_by_preference();
        }
        if let Some(lits) = seq.literals() {
            let useful = !lits.is_empty() && lits.iter().all(|l| l.as_bytes().len() >= 2);
            if useful {
                let mut out: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
                out.sort();
                out.dedup();
                return Some(out);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_literals_of_anchored_program() {
        assert_eq!(required_literals(r"^git\s+(-\S+\s+)*reset\b").unwrap(), vec![b"reset".to_vec()]);
        assert_eq!(required_literals(r"^git\s").unwrap(), vec![b"git".to_vec()]);
    }

    #[test]
    fn leading_wildcard_falls_back_to_suffix() {
        let lits = required_literals(r".*--force").unwrap();
        assert_eq!(lits, vec![b"--force".to_vec()]);
    }

    #[test]
    fn inner_literals_are_found() {
        let lits = required_literals(r"(\s[0-9&]*>[>|]?\s+|^tee\s+(.*\s)?)/dev/(sd[a-z]|nvme[0-9])").unwrap();
        assert_eq!(lits, vec![b"/dev/".to_vec()]);
        let lits = required_literals(r"^(shred|srm|wipe)\s").unwrap();
        assert_eq!(lits, vec![b"shred".to_vec(), b"srm".to_vec(), b"wipe".to_vec()]);
    }

    #[test]
    fn unbounded_pattern_has_no_literals() {
        assert!(required_literals(r"\w+").is_none());
    }

    #[test]
    fn syntax_error_is_one_line() {
        let e = check_syntax("(unclosed").unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("unclosed"), "{e}");
    }
}
