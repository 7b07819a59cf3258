//! Required literals of a rule pattern, for the prefilter: a finite set of byte strings such that
//! any match of the pattern contains at least one of them. Rules whose literals do not occur in a
//! text are never compiled or run on it, which keeps start-up cheap (regexes compile on first
//! use). Shared with `build.rs`, which computes the built-in packs' sets at build time.

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind, Look};

/// Parses `pattern` as rules are compiled (bytes, ASCII classes), returning a message on error.
pub fn check_syntax(pattern: &str) -> Result<regex_syntax::hir::Hir, String> {
    // As rules are compiled (rules::Pattern): over bytes, with ASCII classes.
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .map_err(|e| one_line(&e.to_string()))
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

/// Most literal sets a rule's conjunction keeps.
const MAX_CONJUNCTS: usize = 8;

/// Literal sets that every match satisfies all at once: each set is one a match contains at least
/// one literal of (`^docker\s+(.*\s)?system\s+prune` needs `docker`, `system` and `prune`). Checked
/// before a candidate's regex runs, so near misses cost a few byte searches instead of a regex.
pub fn conjuncts(pattern: &str) -> Vec<Vec<Vec<u8>>> {
    check_syntax(pattern).map(|hir| conjuncts_of(&hir)).unwrap_or_default()
}

/// `conjuncts` of a parsed pattern.
pub fn conjuncts_of(hir: &Hir) -> Vec<Vec<Vec<u8>>> {
    fn walk(hir: &Hir, out: &mut Vec<Vec<Vec<u8>>>) {
        match hir.kind() {
            HirKind::Literal(lit) if lit.0.len() >= MIN_LITERAL => out.push(vec![lit.0.to_vec()]),
            HirKind::Capture(c) => walk(&c.sub, out),
            HirKind::Repetition(r) if r.min >= 1 => walk(&r.sub, out),
            HirKind::Concat(subs) => subs.iter().for_each(|s| walk(s, out)),
            HirKind::Alternation(_) => out.extend(required(hir)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(hir, &mut out);
    out.iter_mut().for_each(|set| set.sort());
    // Longest literals first: they reject most.
    out.sort_by_key(|set| std::cmp::Reverse(set.iter().map(Vec::len).min().unwrap_or(0)));
    out.truncate(MAX_CONJUNCTS);
    out
}

/// The conjunct sets worth checking once the prefilter has chosen the rule: a set is dropped when
/// every prefilter literal contains one of its literals, since the text then holds it already.
pub fn conjuncts_after(prefilter: Option<&(bool, Vec<Vec<u8>>)>, pattern: &str) -> Vec<Vec<Vec<u8>>> {
    check_syntax(pattern).map(|hir| conjuncts_after_of(prefilter, &hir)).unwrap_or_default()
}

/// `conjuncts_after` of a parsed pattern.
pub fn conjuncts_after_of(prefilter: Option<&(bool, Vec<Vec<u8>>)>, hir: &Hir) -> Vec<Vec<Vec<u8>>> {
    let mut sets = conjuncts_of(hir);
    if let Some((_, lits)) = prefilter {
        let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        sets.retain(|set| !lits.iter().all(|l| set.iter().any(|s| contains(l, s))));
    }
    sets
}

/// Prefilter literals of a pattern and whether they are anchored: for a pattern that matches only
/// at the start of the text (`^rm\s`), literals one of which the text must start with; else
/// literals one of which it must contain. `None` when no useful finite set exists.
pub fn prefilter(pattern: &str) -> Option<(bool, Vec<Vec<u8>>)> {
    prefilter_of(&check_syntax(pattern).ok()?)
}

/// `prefilter` of a parsed pattern (a rules file parses each pattern once).
pub fn prefilter_of(hir: &Hir) -> Option<(bool, Vec<Vec<u8>>)> {
    if hir.properties().look_set_prefix().contains(Look::Start) {
        let seq = Extractor::new().limit_class(2).kind(ExtractKind::Prefix).extract(hir);
        if let Some(lits) =
            seq.literals().filter(|l| !l.is_empty() && l.iter().all(|l| l.as_bytes().len() >= MIN_LITERAL))
        {
            let mut out: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
            out.sort();
            out.dedup();
            return Some((true, out));
        }
    }
    required_literals_of(hir).map(|l| (false, l))
}

/// The literals one of which every match contains, or `None` when no useful finite set exists
/// (the rule is then checked against every text).
pub fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    required_literals_of(&check_syntax(pattern).ok()?)
}

fn required_literals_of(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    if let Some(mut lits) = required(hir) {
        lits.sort();
        lits.dedup();
        return Some(lits);
    }
    for prefix in [true, false] {
        let kind = if prefix { ExtractKind::Prefix } else { ExtractKind::Suffix };
        let mut seq = Extractor::new().limit_class(2).kind(kind).extract(hir);
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
mod conjunct_tests {
    use super::*;

    #[test]
    fn sets_the_prefilter_implies_are_dropped() {
        let p = r"^aws\s+(.*\s)?s3\s+(.*\s)?(rb|rm)(\s|$)";
        let pre = prefilter(p);
        assert_eq!(pre.as_ref().map(|(a, l)| (*a, l.clone())), Some((true, vec![b"aws".to_vec()])));
        let sets = conjuncts_after(pre.as_ref(), p);
        assert!(!sets.iter().any(|s| s == &vec![b"aws".to_vec()]), "{sets:?}");
        assert!(sets.iter().any(|s| s.contains(&b"s3".to_vec())), "{sets:?}");
    }
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
    fn anchored_patterns_give_start_literals() {
        let (anchored, lits) = prefilter(r"^(shred|srm|wipe)\s").unwrap();
        assert!(anchored);
        assert_eq!(lits, vec![b"shred".to_vec(), b"srm".to_vec(), b"wipe".to_vec()]);
        let (anchored, lits) = prefilter(r"^git reset\s+(.*\s)?--hard").unwrap();
        assert!(anchored);
        assert_eq!(lits, vec![b"git reset".to_vec()]);
        let (anchored, _) = prefilter(r"(^|\s)>\s+/dev/sd").unwrap();
        assert!(!anchored);
    }

    #[test]
    fn conjuncts_are_all_required_literals() {
        let c = conjuncts(r"^docker\s+(.*\s)?system\s+prune(\s|$)");
        assert_eq!(c, vec![vec![b"docker".to_vec()], vec![b"system".to_vec()], vec![b"prune".to_vec()]]);
        let c = conjuncts(r"^git (push|pull)\s+(-f|--force)");
        let want = [
            vec![b"git ".to_vec()],
            vec![b"pull".to_vec(), b"push".to_vec()],
            vec![b"--force".to_vec(), b"-f".to_vec()],
        ];
        assert_eq!(c, want);
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
