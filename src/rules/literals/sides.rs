//! What may stand on each side of a literal of a rule's pattern, from the pattern's syntax: the
//! prefilter, gate and conjunct literals count an occurrence only where its neighbours are
//! admitted (`\s(rm|delete)(\s|$)` admits no `rm` inside `terraform`).

use regex_syntax::hir::{Hir, HirKind, Look};

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

    /// What both sides admit.
    fn meet(self, o: Side) -> Side {
        let mut bytes = self.bytes;
        bytes.iter_mut().zip(o.bytes).for_each(|(a, b)| *a &= b);
        Side { bytes, edge: self.edge && o.edge }
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
        match super::class_bytes(c) {
            Some(matched) => matched.into_iter().map(Side::byte).fold(Side { bytes: [0; 4], edge: false }, Side::union),
            // A class with characters past ASCII may be any byte of their encodings.
            None => Side { bytes: [u64::MAX; 4], edge: false },
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

    /// Records each literal node of `hir` with its sides. `looks` are the word-boundary
    /// assertions that stand right before and right after `hir`'s match, if any: a literal that
    /// starts or ends there narrows its side by them (`\bage` admits no `image`).
    fn visit(&mut self, hir: &Hir, before: Side, after: Side, looks: Looks, out: &mut Vec<(Vec<u8>, Side, Side)>) {
        if !self.spend() {
            return;
        }
        match hir.kind() {
            HirKind::Literal(lit) => {
                let (b, a) = match (lit.0.first(), lit.0.last()) {
                    (Some(&first), Some(&last)) => (
                        looks.0.map_or(before, |l| before.meet(bound(l, first, true))),
                        looks.1.map_or(after, |l| after.meet(bound(l, last, false))),
                    ),
                    _ => (before, after),
                };
                out.push((lit.0.to_vec(), b, a));
            }
            HirKind::Capture(c) => self.visit(&c.sub, before, after, looks, out),
            HirKind::Concat(parts) => {
                let mut befores = Vec::with_capacity(parts.len());
                let mut ctx = before;
                for p in parts {
                    befores.push(ctx);
                    ctx = self.through(p, ctx, true);
                }
                let look = |i: Option<usize>| i.and_then(|i| parts.get(i)).and_then(word_look);
                let last = parts.len().saturating_sub(1);
                let mut ctx = after;
                for (i, (p, &b)) in parts.iter().zip(&befores).enumerate().rev() {
                    let lb = if i == 0 { looks.0 } else { look(Some(i - 1)) };
                    let la = if i == last { looks.1 } else { look(Some(i + 1)) };
                    self.visit(p, b, ctx, (lb, la), out);
                    ctx = self.through(p, ctx, false);
                }
            }
            HirKind::Alternation(subs) => subs.iter().for_each(|s| self.visit(s, before, after, looks, out)),
            HirKind::Repetition(r) => {
                if r.max == Some(0) {
                    return;
                }
                let repeat = r.max != Some(1);
                let (mut b, mut a) = (before, after);
                // A repeated match's later rounds start and end away from the assertions.
                let mut looks = looks;
                if repeat {
                    b = b.union(self.iterations(&r.sub, before, true, true));
                    a = a.union(self.iterations(&r.sub, after, false, true));
                    looks = (None, None);
                }
                self.visit(&r.sub, b, a, looks, out);
            }
            HirKind::Empty | HirKind::Class(_) | HirKind::Look(_) => {}
        }
    }
}

/// The word-boundary assertions right before and right after a part of a pattern.
type Looks = (Option<Look>, Option<Look>);

/// `hir` as a word-boundary assertion (over ASCII, as rules are compiled).
fn word_look(hir: &Hir) -> Option<Look> {
    match hir.kind() {
        HirKind::Look(
            l @ (Look::WordAscii
            | Look::WordStartAscii
            | Look::WordEndAscii
            | Look::WordStartHalfAscii
            | Look::WordEndHalfAscii),
        ) => Some(*l),
        _ => None,
    }
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Word bytes, or else the other bytes and the text's edge (which counts as no word byte).
fn word_side(word: bool) -> Side {
    let mut bytes = [0u64; 4];
    for b in (0..=255u8).filter(|&b| is_word(b) == word) {
        bytes[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    Side { bytes, edge: !word }
}

/// What may stand on one side of a literal where the assertion `look` stands right there:
/// before it (`before`, the literal starting with `edge`) or after it (ending with `edge`).
/// The text's edge counts as no word byte.
fn bound(look: Look, edge: u8, before: bool) -> Side {
    match (look, before) {
        (Look::WordAscii, _) => word_side(!is_word(edge)),
        (Look::WordStartAscii | Look::WordStartHalfAscii, true)
        | (Look::WordEndAscii | Look::WordEndHalfAscii, false) => word_side(false),
        (Look::WordEndAscii, true) | (Look::WordStartAscii, false) => word_side(true),
        _ => Side::ANY,
    }
}

/// The sides of each of `literals`, found where the pattern holds them as whole literal nodes (the
/// union over every node of the same bytes); `ANY_SIDES` for one that is not such a node. Only
/// sound for literals every match holds as a node: `required`'s, a conjunct set's
/// (`conjuncts_of`), and `^` followed by literal nodes (`anchored_nodes`).
pub(super) fn sides_of(hir: &Hir, literals: &[Vec<u8>]) -> Vec<Sides> {
    let mut walk = SideWalk { steps: 0 };
    let mut nodes = Vec::new();
    walk.visit(hir, Side::ANY, Side::ANY, (None, None), &mut nodes);
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

#[cfg(test)]
mod tests {
    use super::super::{check_syntax, conjuncts_of, prefilter_with_sides};
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
    fn word_boundaries_narrow_the_sides() {
        let p = r"[^)]*\b(gpg|age)\s+-d";
        assert!(admitted(p, b"x age -d"));
        assert!(admitted(p, b"age -d"));
        assert!(!admitted(p, b"hcloud image delete"), "`age` inside a word");
        assert!(!admitted(p, b"docker storage -d"));
        let p = r"x\b-rm\b";
        assert!(admitted(p, b"x-rm"));
        assert!(!admitted(p, b"x-rmdir"));
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
            r"(db|rm)\s.*(?i:drop\s*table)",
            r"(?i:del(ete)?)-[rR]m?",
            r"(^|;)\s*(\$\(|`)\s*(rm|del)\s|x\*$",
            r"\b(gpg|age)\s|x\b-(rm|e)\b",
            r"\b{start}(rm|-e)\b{end}|\b{start-half}del\b{end-half}",
            r"x\b{end}-rm|-e-\b{start}x",
            r"(\bab)+cd\b|\b(-|x)?rm",
            r"(x(\$\(|`)rm|-e\s*(\$\(|`)\s*del|(?i:drop)\s(\$\(|`)(rm|del))",
            r"(\s(?i:drop)|x(?i:drop)\b)",
        ];
        let pieces: [&[u8]; 32] = [
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
            b"DROP",
            b"Table",
            b"-R",
            b"`",
            b"$(",
            b"*",
            b"image",
            b" age",
            b"-rm",
            b"_rm",
            b"gpg",
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
                let text: Vec<u8> = (0..n).flat_map(|_| pieces[(next() % 32) as usize].to_vec()).collect();
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
