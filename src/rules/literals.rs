//! Required literals of a rule pattern, for the prefilter: a finite set of byte strings such that
//! any match of the pattern contains at least one of them. Rules whose literals do not occur in a
//! text are never compiled or run on it, which keeps start-up cheap (regexes compile on first
//! use). Shared with `build.rs`, which computes the built-in packs' sets at build time.

#[path = "literals/sides.rs"]
mod sides;

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use sides::sides_of;
pub use sides::{ANY_SIDES, Sides};

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

/// Single bytes that stand for shell syntax few routine commands hold (a substitution, a glob,
/// a redirection): a set that needs one (`(\$\(|`)`) rejects texts without, where a set of
/// letters or dashes would not. They are tested (a byte search) as conjuncts and gates, never
/// indexed by the prefilter, whose keys are two bytes.
const RARE_BYTES: &[u8] = b"`*<>$(){}[]!\\&;|#?~%^";

/// Whether a literal node is worth requiring: two bytes or more, or one rare byte.
fn worth_requiring(lit: &[u8]) -> bool {
    lit.len() >= MIN_LITERAL || (lit.len() == 1 && RARE_BYTES.contains(&lit[0]))
}

/// Literals one of which every match of `hir` contains, found anywhere in the pattern (not only at
/// its start or end): `(^|\s)>\s+/dev/sd[a-z]` requires `/dev/sd`.
fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(lit) => worth_requiring(&lit.0).then(|| vec![lit.0.to_vec()]),
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
#[cfg(test)]
pub fn conjuncts(pattern: &str) -> Vec<Vec<Vec<u8>>> {
    check_syntax(pattern).map(|hir| conjuncts_of(&hir)).unwrap_or_default()
}

/// `conjuncts` of a parsed pattern.
pub fn conjuncts_of(hir: &Hir) -> Vec<Vec<Vec<u8>>> {
    conjunct_sets(hir).into_iter().map(|(set, _)| set).collect()
}

/// `conjuncts_of`, each set with whether a run of classes spelled it (`runs`): its literals are
/// no literal nodes, and admit any neighbours.
fn conjunct_sets(hir: &Hir) -> Vec<(Vec<Vec<u8>>, bool)> {
    let mut out = sets_of(hir);
    out.iter_mut().for_each(|(set, _)| {
        set.sort();
        set.dedup();
    });
    // One entry per set; spelled by a run anywhere, it admits any neighbours.
    out.sort();
    out.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        kept.1 |= same && later.1;
        same
    });
    // Longest literals first: they reject most.
    out.sort_by_key(|(set, _)| std::cmp::Reverse(set.iter().map(Vec::len).min().unwrap_or(0)));
    out.truncate(MAX_CONJUNCTS);
    out
}

/// Every literal set a match of `hir` holds a literal of (`conjunct_sets`, unsorted).
fn sets_of(hir: &Hir) -> Vec<(Vec<Vec<u8>>, bool)> {
    match hir.kind() {
        HirKind::Literal(lit) if worth_requiring(&lit.0) => vec![(vec![lit.0.to_vec()], false)],
        HirKind::Capture(c) => sets_of(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => sets_of(&r.sub),
        HirKind::Concat(subs) => {
            let mut out: Vec<_> = subs.iter().flat_map(sets_of).collect();
            out.extend(runs(subs).into_iter().map(|set| (set, true)));
            out
        }
        HirKind::Alternation(subs) => {
            let mut out: Vec<_> = required(hir).map(|set| (set, false)).into_iter().collect();
            // A set every branch needs (`(a(\$\(|`)x|b(\$\(|`)y)` needs `$(` or a backtick).
            let mut branches = subs.iter().map(|s| {
                let mut sets = sets_of(s);
                sets.iter_mut().for_each(|(set, _)| set.sort());
                sets
            });
            let mut common = branches.next().unwrap_or_default();
            for sets in branches {
                if common.is_empty() {
                    break;
                }
                common.retain_mut(|(set, spelled)| match sets.iter().find(|(other, _)| other == set) {
                    Some((_, other)) => {
                        *spelled |= other;
                        true
                    }
                    None => false,
                });
            }
            out.extend(common);
            out
        }
        _ => Vec::new(),
    }
}

/// The bytes a class matches as rules are compiled (over bytes): a class of bytes, or of ASCII
/// characters (regex-syntax writes `(m|x)` as one); `None` for a class with other characters.
pub fn class_bytes(c: &Class) -> Option<Vec<u8>> {
    match c {
        Class::Bytes(c) => Some(c.iter().flat_map(|r| r.start()..=r.end()).collect()),
        // In order, so the first character past ASCII ends the walk.
        Class::Unicode(c) => {
            c.iter().flat_map(|r| r.start()..=r.end()).map(|ch| u8::try_from(ch).ok().filter(u8::is_ascii)).collect()
        }
    }
}

/// Most bytes a class may match to stand in a run (`(?i:u)` is `[Uu]`).
const RUN_CLASS: usize = 2;

/// Literal sets spelled by runs of a concatenation's parts that each match one of a few
/// strings, where at least one part is a class: `(?i:update)` is six classes of two bytes, and
/// every match of it spells one of 64 strings. A run with more spellings than a set may hold
/// gives its longest stretch within the limit.
fn runs(subs: &[Hir]) -> Vec<Vec<Vec<u8>>> {
    // Per part: the bytes each of its positions may be (one position per byte of a literal).
    fn positions(hir: &Hir) -> Option<Vec<Vec<u8>>> {
        match hir.kind() {
            HirKind::Literal(lit) => Some(lit.0.iter().map(|&b| vec![b]).collect()),
            HirKind::Class(c) => class_bytes(c).filter(|b| b.len() <= RUN_CLASS).map(|b| vec![b]),
            HirKind::Capture(c) => positions(&c.sub),
            _ => None,
        }
    }
    let mut out = Vec::new();
    let mut run: Vec<Vec<u8>> = Vec::new();
    let mut flush = |run: &mut Vec<Vec<u8>>| {
        out.extend(best_stretch(run));
        run.clear();
    };
    for sub in subs {
        match positions(sub) {
            Some(p) => run.extend(p),
            None => flush(&mut run),
        }
    }
    flush(&mut run);
    out
}

/// The strings of the longest stretch of `run` (bytes per position) with at least one position of
/// several bytes, at least `MIN_LITERAL` long, and at most `MAX_ALTERNATIVES` spellings.
fn best_stretch(run: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    let mut best: Option<(usize, usize)> = None;
    let mut start = 0;
    let mut spellings = 1usize;
    for end in 0..run.len() {
        spellings *= run[end].len();
        while spellings > MAX_ALTERNATIVES {
            spellings /= run[start].len();
            start += 1;
        }
        let len = end + 1 - start;
        let varied = run[start..=end].iter().any(|p| p.len() > 1);
        if varied && len >= MIN_LITERAL && best.is_none_or(|(s, e)| e - s < len) {
            best = Some((start, end + 1));
        }
    }
    let (s, e) = best?;
    let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
    for p in &run[s..e] {
        strings = strings.iter().flat_map(|pre| p.iter().map(move |&b| [pre.as_slice(), &[b]].concat())).collect();
    }
    Some(strings)
}

/// The conjunct sets worth checking once the prefilter has chosen the rule: a set is dropped when
/// every prefilter literal contains one of its literals, since the text then holds it already.
#[cfg(test)]
pub fn conjuncts_after(prefilter: Option<&(bool, Vec<Vec<u8>>)>, pattern: &str) -> Vec<Vec<Vec<u8>>> {
    check_syntax(pattern).map(|hir| conjuncts_after_of(prefilter, &hir)).unwrap_or_default()
}

/// `conjuncts_after` of a parsed pattern.
pub fn conjuncts_after_of(prefilter: Option<&(bool, Vec<Vec<u8>>)>, hir: &Hir) -> Vec<Vec<Vec<u8>>> {
    conjunct_sets_after(prefilter, hir).into_iter().map(|(set, _)| set).collect()
}

/// `conjuncts_after_of`, each set with whether a run of classes spelled it.
fn conjunct_sets_after(prefilter: Option<&(bool, Vec<Vec<u8>>)>, hir: &Hir) -> Vec<(Vec<Vec<u8>>, bool)> {
    let mut sets = conjunct_sets(hir);
    if let Some((_, lits)) = prefilter {
        let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        sets.retain(|(set, _)| !lits.iter().all(|l| set.iter().any(|s| contains(l, s))));
    }
    sets
}

/// `conjuncts_after_of`, each literal with its sides (conjunct literals are literal nodes of the
/// pattern, where `sides_of` applies, or spelled by a run of classes, and admit anything).
pub fn conjuncts_with_sides(prefilter: Option<&(bool, Vec<Vec<u8>>)>, hir: &Hir) -> Vec<Vec<(Vec<u8>, Sides)>> {
    conjunct_sets_after(prefilter, hir)
        .into_iter()
        .map(|(set, spelled)| {
            let sides = if spelled { vec![ANY_SIDES; set.len()] } else { sides_of(hir, &set) };
            set.into_iter().zip(sides).collect()
        })
        .collect()
}

/// Prefilter literals of a pattern and whether they are anchored: for a pattern that matches only
/// at the start of the text (`^rm\s`), literals one of which the text must start with; else
/// literals one of which it must contain. `None` when no useful finite set exists.
#[cfg(test)]
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
#[cfg(test)]
pub fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    required_literals_of(&check_syntax(pattern).ok()?)
}

fn required_literals_of(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    if let Some(mut lits) = required(hir).filter(|lits| lits.iter().all(|l| l.len() >= MIN_LITERAL)) {
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

/// For a pattern `^(L1|L2|…)…` whose every match starts with one of the literal nodes `Li`:
/// those literals.
fn anchored_nodes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    fn literal_nodes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
        match hir.kind() {
            HirKind::Literal(lit) => Some(vec![lit.0.to_vec()]),
            HirKind::Capture(c) => literal_nodes(&c.sub),
            HirKind::Alternation(subs) => {
                let mut all = Vec::new();
                for s in subs {
                    all.extend(literal_nodes(s)?);
                }
                Some(all)
            }
            _ => None,
        }
    }
    let HirKind::Concat(parts) = hir.kind() else { return None };
    match (parts.first().map(Hir::kind), parts.get(1)) {
        (Some(HirKind::Look(Look::Start)), Some(first)) => {
            let mut lits = literal_nodes(first)?;
            lits.sort();
            lits.dedup();
            Some(lits)
        }
        _ => None,
    }
}

/// The prefilter of a parsed pattern with each literal's sides (`Sides`).
pub fn prefilter_with_sides(hir: &Hir) -> Option<(bool, Vec<Vec<u8>>, Vec<Sides>)> {
    let (anchored, lits) = prefilter_of(hir)?;
    let nodes = if anchored {
        anchored_nodes(hir).is_some_and(|n| n == lits)
    } else {
        required(hir).is_some_and(|mut r| {
            r.sort();
            r.dedup();
            r == lits
        })
    };
    let sides = if nodes { sides_of(hir, &lits) } else { vec![ANY_SIDES; lits.len()] };
    Some((anchored, lits, sides))
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
    fn case_insensitive_words_are_conjuncts() {
        let sets = conjuncts(r"^psql\s.*(?i:update)\s+\S+\s+(?i:set)\s");
        let update = sets.iter().find(|s| s.len() == 64).expect("a set for (?i:update)");
        assert!(update.contains(&b"UpDaTe".to_vec()) && update.contains(&b"update".to_vec()));
        assert!(sets.iter().any(|s| s.len() == 8 && s.contains(&b"SET".to_vec())), "{sets:?}");
        // Too many spellings: the longest stretch within the limit.
        let sets = conjuncts(r"(?i:truncate)");
        assert!(sets.iter().all(|s| s.len() <= MAX_ALTERNATIVES && s.iter().all(|l| l.len() == 6)), "{sets:?}");
        // A class of more than two bytes ends a run; a run without a class is a literal already.
        assert!(conjuncts(r"a[xyz]b").is_empty());
        assert_eq!(conjuncts(r"-[rR]\s"), vec![vec![b"-R".to_vec(), b"-r".to_vec()]]);
        // regex-syntax writes `(m|x)` as a class of characters: its bytes stand in a run too.
        assert!(
            conjuncts(r"\sr(m|x)\s").contains(&vec![b"rm".to_vec(), b"rx".to_vec()]),
            "{:?}",
            conjuncts(r"\sr(m|x)\s")
        );
    }

    #[test]
    fn rare_single_bytes_are_conjuncts_and_never_prefilter_literals() {
        let p = r"(eval|sh)\s+(\$\(|`)\s*(base64|xxd)\s";
        assert!(conjuncts(p).contains(&vec![b"$(".to_vec(), b"`".to_vec()]), "{:?}", conjuncts(p));
        assert!(prefilter(r"(\$\(|`)").is_none_or(|(_, lits)| lits.iter().all(|l| l.len() >= 2)));
        // A letter or a dash alone is no conjunct: nearly every command holds one.
        assert!(conjuncts(r"a\s+-\s").is_empty());
    }

    #[test]
    fn a_set_every_branch_needs_is_a_conjunct() {
        let sets = conjuncts(r"(eval\s+|sh\s+-c\s+)(\$\(|`)curl|echo\s.*(\$\(|`)\s*curl\s.*\|\s*sh");
        assert!(sets.contains(&vec![b"$(".to_vec(), b"`".to_vec()]), "{sets:?}");
        assert!(sets.contains(&vec![b"curl".to_vec()]), "{sets:?}");
    }

    #[test]
    fn syntax_error_is_one_line() {
        let e = check_syntax("(unclosed").unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("unclosed"), "{e}");
    }
}
