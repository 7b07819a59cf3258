//! Required literals of a rule pattern, for the prefilter: a finite set of byte strings such that
//! any match of the pattern contains at least one of them. Rules whose literals do not occur in a
//! text are never compiled or run on it, which keeps start-up cheap (regexes compile on first
//! use). Shared with `build.rs`, which computes the built-in packs' sets at build time.

use regex_syntax::hir::literal::{ExtractKind, Extractor};

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

/// The literals one of which every match contains, or `None` when no useful finite set exists
/// (the rule is then checked against every text).
pub fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = check_syntax(pattern).ok()?;
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
        let lits = required_literals(r"^git\s+(-\S+\s+)*reset\b").unwrap();
        assert_eq!(lits, vec![b"git".to_vec()]);
    }

    #[test]
    fn leading_wildcard_falls_back_to_suffix() {
        let lits = required_literals(r".*--force").unwrap();
        assert_eq!(lits, vec![b"--force".to_vec()]);
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
