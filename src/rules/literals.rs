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
#[cfg(test)]
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
#[cfg(test)]
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

/// `conjuncts_after_of`, each literal with its sides (conjunct literals are literal nodes of the
/// pattern: `sides_of` applies).
pub fn conjuncts_with_sides(prefilter: Option<&(bool, Vec<Vec<u8>>)>, hir: &Hir) -> Vec<Vec<(Vec<u8>, Sides)>> {
    conjuncts_after_of(prefilter, hir)
        .into_iter()
        .map(|set| {
            let sides = sides_of(hir, &set);
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

/// What may stand on each side of a prefilter literal where a match holds it: the bytes that may
/// come just before it and whether it may start the text, the bytes that may come just after it
/// and whether it may end the text. `(delete|rm)(\s|$)` after `\s+` admits `rm` only between a
/// space and a space or the end, so `terraform` and `format` hold no `rm` a match could use.
pub type Sides = ([u64; 4], bool, [u64; 4], bool);

/// Sides that admit anything.
pub const ANY_SIDES: Sides = ([u64::MAX; 4], true, [u64::MAX; 4], true);

/// One side: a set of bytes, and whether the text's edge (its start before a literal, its end
/// after one) may stand there instead of a byte.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Side {
    bytes: [u64; 4],
    edge: bool,
}

impl Side {
    const ANY: Side = Side { bytes: [u64::MAX; 4], edge: true };

    fn byte(b: u8) -> Side {
        let mut bytes = [0; 4];
        bytes[usize::from(b >> 6)] |= 1 << (b & 63);
        Side { bytes, edge: false }
    }

    fn union(self, o: Side) -> Side {
        let mut bytes = self.bytes;
        bytes.iter_mut().zip(o.bytes).for_each(|(a, b)| *a |= b);
        Side { bytes, edge: self.edge || o.edge }
    }

    /// This side where only the edge or the bytes of `allowed` may stand.
    fn keep(self, allowed: &[u8]) -> Side {
        let mut bytes = [0; 4];
        for &b in allowed {
            bytes[usize::from(b >> 6)] |= self.bytes[usize::from(b >> 6)] & (1 << (b & 63));
        }
        Side { bytes, edge: self.edge }
    }

    fn class(c: &regex_syntax::hir::Class) -> Side {
        match c {
            regex_syntax::hir::Class::Bytes(b) => {
                let mut bytes = [0u64; 4];
                for r in b.ranges() {
                    for x in r.start()..=r.end() {
                        bytes[usize::from(x >> 6)] |= 1 << (x & 63);
                    }
                }
                Side { bytes, edge: false }
            }
            // Rules are compiled over bytes; a Unicode class may be any byte.
            regex_syntax::hir::Class::Unicode(_) => Side { bytes: [u64::MAX; 4], edge: false },
        }
    }
}

/// Computes each literal node's sides; gives up (every side `ANY`) past a budget of steps, so a
/// pattern of deeply nested repetitions costs little to load.
struct SideWalk {
    steps: usize,
}

/// Most steps `SideWalk` takes for one pattern.
const SIDE_STEPS: usize = 200_000;

impl SideWalk {
    fn spend(&mut self) -> bool {
        self.steps += 1;
        self.steps <= SIDE_STEPS
    }

    /// What may stand before the position after a match of `hir` (`forward`), given what stands
    /// before its start; or, backward, what may stand after the position before its match, given
    /// what stands after its end.
    fn through(&mut self, hir: &Hir, ctx: Side, forward: bool) -> Side {
        if !self.spend() {
            return Side::ANY;
        }
        match hir.kind() {
            HirKind::Empty => ctx,
            HirKind::Literal(lit) => match if forward { lit.0.last() } else { lit.0.first() } {
                Some(&b) => Side::byte(b),
                None => ctx,
            },
            HirKind::Class(c) => Side::class(c),
            // A zero-width assertion keeps what may stand there and what it allows: `^` only the
            // text's start, `(?m)^` that or a newline. Others (`\b`) are left unread: any side.
            HirKind::Look(look) => match (look, forward) {
                (Look::Start, true) | (Look::End, false) => ctx.keep(b""),
                (Look::StartLF, true) | (Look::EndLF, false) => ctx.keep(b"\n"),
                (Look::StartCRLF, true) | (Look::EndCRLF, false) => ctx.keep(b"\r\n"),
                _ => ctx,
            },
            HirKind::Capture(c) => self.through(&c.sub, ctx, forward),
            HirKind::Concat(parts) => {
                let mut ctx = ctx;
                if forward {
                    for p in parts {
                        ctx = self.through(p, ctx, true);
                    }
                } else {
                    for p in parts.iter().rev() {
                        ctx = self.through(p, ctx, false);
                    }
                }
                ctx
            }
            HirKind::Alternation(subs) => {
                let mut out: Option<Side> = None;
                for s in subs {
                    let one = self.through(s, ctx, forward);
                    out = Some(out.map_or(one, |o| o.union(one)));
                }
                out.unwrap_or(ctx)
            }
            HirKind::Repetition(r) => {
                if r.max == Some(0) {
                    return ctx;
                }
                let many = self.iterations(&r.sub, ctx, forward, r.max != Some(1));
                if r.min == 0 { many.union(ctx) } else { many }
            }
        }
    }

    /// `through` one or more matches of `sub` (one only unless `repeat`).
    fn iterations(&mut self, sub: &Hir, ctx: Side, forward: bool, repeat: bool) -> Side {
        let mut acc = self.through(sub, ctx, forward);
        if repeat {
            loop {
                let next = acc.union(self.through(sub, acc, forward));
                if next == acc || self.steps > SIDE_STEPS {
                    break;
                }
                acc = next;
            }
        }
        if self.steps > SIDE_STEPS { Side::ANY } else { acc }
    }

    /// Records each literal node of `hir` with its sides.
    fn visit(&mut self, hir: &Hir, before: Side, after: Side, out: &mut Vec<(Vec<u8>, Side, Side)>) {
        if !self.spend() {
            return;
        }
        match hir.kind() {
            HirKind::Literal(lit) => out.push((lit.0.to_vec(), before, after)),
            HirKind::Capture(c) => self.visit(&c.sub, before, after, out),
            HirKind::Concat(parts) => {
                let mut befores = Vec::with_capacity(parts.len());
                let mut ctx = before;
                for p in parts {
                    befores.push(ctx);
                    ctx = self.through(p, ctx, true);
                }
                let mut ctx = after;
                for (p, &b) in parts.iter().zip(&befores).rev() {
                    self.visit(p, b, ctx, out);
                    ctx = self.through(p, ctx, false);
                }
            }
            HirKind::Alternation(subs) => subs.iter().for_each(|s| self.visit(s, before, after, out)),
            HirKind::Repetition(r) => {
                if r.max == Some(0) {
                    return;
                }
                let repeat = r.max != Some(1);
                let (mut b, mut a) = (before, after);
                if repeat {
                    b = b.union(self.iterations(&r.sub, before, true, true));
                    a = a.union(self.iterations(&r.sub, after, false, true));
                }
                self.visit(&r.sub, b, a, out);
            }
            HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => {}
        }
    }
}

/// The sides of each of `literals`, found where the pattern holds them as whole literal nodes (the
/// union over every node of the same bytes); `ANY_SIDES` for one that is not such a node. Only
/// sound for literals every match holds as a node: `required`'s, a conjunct set's
/// (`conjuncts_of`), and `^` followed by literal nodes (`anchored_nodes`).
fn sides_of(hir: &Hir, literals: &[Vec<u8>]) -> Vec<Sides> {
    let mut walk = SideWalk { steps: 0 };
    let mut nodes = Vec::new();
    walk.visit(hir, Side::ANY, Side::ANY, &mut nodes);
    if walk.steps > SIDE_STEPS {
        return vec![ANY_SIDES; literals.len()];
    }
    literals
        .iter()
        .map(|l| {
            let mut found: Option<(Side, Side)> = None;
            for (bytes, b, a) in &nodes {
                if bytes == l {
                    found = Some(found.map_or((*b, *a), |(fb, fa)| (fb.union(*b), fa.union(*a))));
                }
            }
            found.map_or(ANY_SIDES, |(b, a)| (b.bytes, b.edge, a.bytes, a.edge))
        })
        .collect()
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
    fn syntax_error_is_one_line() {
        let e = check_syntax("(unclosed").unwrap_err();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains("unclosed"), "{e}");
    }
}

#[cfg(test)]
mod side_tests {
    use super::*;

    fn admitted(pattern: &str, text: &[u8]) -> bool {
        let hir = check_syntax(pattern).unwrap();
        let Some((anchored, lits, sides)) = prefilter_with_sides(&hir) else { return true };
        lits.iter().zip(&sides).any(|(l, s)| {
            let starts = if anchored { 0..1 } else { 0..text.len() + 1 };
            starts.into_iter().any(|at| text[at..].starts_with(l) && admits(s, text, at, l.len()))
        })
    }

    /// The prefilter's own test of an occurrence's neighbours.
    fn admits(s: &Sides, text: &[u8], at: usize, len: usize) -> bool {
        crate::rules::prefilter::index::admits(s, text, at, len)
    }

    #[test]
    fn the_prefilter_and_the_extraction_agree_on_anything() {
        // Two spellings of one constant (build.rs includes the two files side by side).
        assert_eq!(ANY_SIDES, crate::rules::prefilter::index::ANY_SIDES);
    }

    #[test]
    fn a_verb_inside_a_word_is_not_admitted() {
        let p = r"^\S+(\s+[^\s']+){0,4}?\s+(delete|rm|remove)(\s|$)";
        assert!(admitted(p, b"git rm x"));
        assert!(admitted(p, b"git rm"));
        assert!(!admitted(p, b"terraform fmt"));
        assert!(!admitted(p, b"rm -rf x"), "a match needs a word before the verb");
        let (_, lits, sides) = prefilter_with_sides(&check_syntax(p).unwrap()).unwrap();
        assert!(sides.iter().all(|s| !s.1), "{lits:?}: nothing may start the text");
    }

    #[test]
    fn anchored_literals_keep_what_follows() {
        let p = r"^(rm|unlink)\s";
        assert!(admitted(p, b"rm -r x"));
        assert!(!admitted(p, b"rmdir x"));
        assert!(!admitted(p, b"rm"));
    }

    #[test]
    fn literals_the_extractor_joined_admit_anything() {
        // `git (push|pull)` gives `git push` and `git pull`, which are no single node.
        let hir = check_syntax(r"^git (push|pull)\s").unwrap();
        let (_, lits, sides) = prefilter_with_sides(&hir).unwrap();
        assert!(lits.len() == 2 && sides.iter().all(|s| *s == ANY_SIDES), "{lits:?}");
    }

    #[test]
    fn deep_nesting_gives_up_to_any() {
        let p = format!("{}ab{}", "(x*".repeat(60), ")*".repeat(60));
        let hir = check_syntax(&p).unwrap();
        if let Some((_, _, sides)) = prefilter_with_sides(&hir) {
            assert!(sides.iter().all(|s| *s == ANY_SIDES));
        }
    }

    /// Every text a pattern matches holds a literal with what its sides admit around it: checked
    /// on patterns with every construct the side walk reads, over random texts made of the
    /// patterns' own pieces.
    #[test]
    fn every_match_is_admitted() {
        let patterns = [
            r"^\S+(\s+[^\s']+){0,4}?\s+(([a-z0-9]+[-_:.])*(db|table)([-_:.][a-z0-9]+)*[-_:.](delete|rm))(\s|$)",
            r"(^|\s)rm\s+(-\w+\s+)*-rf?(\s|$)",
            r"(?m)^drop\s+table\b",
            r"(delete|drop)(table|db)s?$",
            r"\s(--force|-f)(=\S+)?(\s|$)",
            r"x(ab)*cd|(cd)+e",
            r"(a|)rm(|b)",
            r"(rm|del)+-(rm|del)",
            r"\brm\b",
            r"(?:^|[;&|]\s*)rm(\s+\S+)*$",
            r"\$\(rm\)",
            r"(rm(\s|x)){2,3}(y|e)",
        ];
        let pieces: [&[u8]; 21] = [
            b"rm",
            b"del",
            b"delete",
            b"db",
            b"table",
            b"drop",
            b" ",
            b"-",
            b"_",
            b"x",
            b"\n",
            b"ab",
            b"cd",
            b"e",
            b"-f",
            b"$(rm)",
            b"x db_rm",
            b" table.a-delete",
            b"-rf",
            b"rm -rf",
            b"rmxrm ",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for p in patterns {
            let re = regex::bytes::RegexBuilder::new(p).unicode(false).build().unwrap();
            let mut matched = 0;
            for _ in 0..4000 {
                let n = 1 + next() % 8;
                let text: Vec<u8> = (0..n).flat_map(|_| pieces[(next() % 21) as usize].to_vec()).collect();
                if re.is_match(&text) {
                    matched += 1;
                    let hir = check_syntax(p).unwrap();
                    for set in conjuncts_of(&hir) {
                        let sides = sides_of(&hir, &set);
                        let found = set.iter().zip(&sides).any(|(l, s)| {
                            (0..=text.len().saturating_sub(l.len())).any(|at| {
                                text[at..].starts_with(l)
                                    && crate::rules::prefilter::index::admits(s, &text, at, l.len())
                            })
                        });
                        assert!(
                            found,
                            "{p:?} matches {:?} but no literal of {set:?} is admitted",
                            String::from_utf8_lossy(&text)
                        );
                    }
                    assert!(
                        admitted(p, &text),
                        "{p:?} matches {:?} but its literals' sides reject it",
                        String::from_utf8_lossy(&text)
                    );
                }
            }
            assert!(matched > 0, "{p:?} never matched: the check checked nothing");
        }
    }
}
