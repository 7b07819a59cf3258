//! The chain search against the full regex: built-in patterns on texts made from their examples,
//! and small patterns cut at every gap on random texts, where every way a gap can fail shows.

use super::super::builtin::{Gap, Piece};
use super::Embedded;
use crate::rules::compile::builtin_rules;
use crate::rules::literals;

// What build.rs determinizes with; the tests use only its cutting, not its pack-level limits.
#[path = "../../../build/blob.rs"]
#[allow(dead_code)]
mod blob;

/// A small deterministic generator (xorshift), so a failure repeats.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn full(pattern: &str) -> regex::bytes::Regex {
    regex::bytes::RegexBuilder::new(pattern).unicode(false).build().unwrap()
}

/// `pattern` cut into alternatives and chains whatever its size, as embedded pieces.
fn cut(pattern: &str, sparse_only: bool) -> Embedded {
    let mut b = blob::Blob::default();
    b.sparse_only = sparse_only;
    let pieces: Vec<Piece> = b
        .add_cut(pattern)
        .unwrap()
        .into_iter()
        .map(|blob::Piece { span, dense, gap, .. }| Piece {
            span,
            dense,
            gate: (0, 0),
            gap: match gap {
                blob::Gap::Start => Gap::Start,
                blob::Gap::Star(c) => Gap::Star(c),
                blob::Gap::OptStar(c, s) => Gap::OptStar(c, s),
            },
        })
        .collect();
    assert!(pieces.iter().any(|p| !matches!(p.gap, Gap::Start)), "{pattern:?} has no gap to cut at");
    // 8-aligned, as the binary embeds its blob (a dense DFA is read in place as `u32`s).
    let mut words = vec![0u64; b.bytes.len().div_ceil(8)];
    for (w, chunk) in words.iter_mut().zip(b.bytes.chunks(8)) {
        let mut le = [0u8; 8];
        le[..chunk.len()].copy_from_slice(chunk);
        *w = u64::from_ne_bytes(le);
    }
    let words: &'static [u64] = Box::leak(words.into_boxed_slice());
    // SAFETY: any initialized `u64`s are valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(words.as_ptr().cast::<u8>(), b.bytes.len()) };
    let pieces = Box::leak(pieces.into_boxed_slice());
    // SAFETY: the bytes are what `add_cut` serialized for this machine, at these spans.
    unsafe { Embedded::in_blob(pattern, pieces, bytes) }
}

#[test]
fn chains_match_as_the_full_regex_does_on_random_texts() {
    let patterns = [
        r"a.*b",
        r"a\s.*b\sc",
        r"^a\s+(.*\s)?b\s+(.*\s)?c(\s|$)",
        r"a(.*\s)?b",
        r"(?s)a.*b.*c",
        r"\ba[^|]*b[^;]*c\b",
        r"(^|\s)a.*\sb.*c$",
        r"(a|b\n).*(c|\nd).*a",
        r"x[^\n;]*\n[\s\S]*y\s",
        r"ab.*ba.*ab",
        r"(a.*b|c.*d)",
        r"^(a|b)\s.*(\b|-e)c",
        r"a\s*.*\s*b.*(\s|$)",
        r"(a|ab)(.*\s)?(b|\nb)(.*\s)?(c|\sc)",
    ];
    let alphabet = b"ab cd\n\t|;-exy";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for p in patterns {
        let (dense, sparse, full) = (cut(p, false), cut(p, true), full(p));
        let copied = cut(p, true);
        assert!(copied.copy_every_sparse_dfa() > 0);
        for _ in 0..4000 {
            let len = rng.below(24);
            let text: Vec<u8> = (0..len).map(|_| alphabet[rng.below(alphabet.len())]).collect();
            let want = full.is_match(&text);
            let shown = text.escape_ascii().to_string();
            let hay = crate::rules::Haystack::new(std::str::from_utf8(&text).unwrap());
            assert_eq!(dense.is_match(&hay).unwrap(), want, "{p:?} (dense) on {shown:?}");
            assert_eq!(sparse.is_match(&hay).unwrap(), want, "{p:?} (sparse) on {shown:?}");
            assert_eq!(copied.is_match(&hay).unwrap(), want, "{p:?} (sparse, copied dense) on {shown:?}");
        }
    }
}

#[test]
fn gaps_are_found_where_the_pattern_has_them() {
    let gaps = |p: &str| {
        let mut b = blob::Blob::default();
        b.add_cut(p).unwrap().iter().filter(|p| !matches!(p.gap, blob::Gap::Start)).count()
    };
    assert_eq!(gaps(r"^a\s.*b\s(.*\s)?c[^|]*d"), 3);
    // Leading and trailing gaps are no cuts; nor are gaps inside a group that is repeated.
    assert_eq!(gaps(r".*a.*b.*"), 1);
    assert_eq!(gaps(r"a(b.*c)+d.*e"), 1);
}

/// Texts made from a rule's examples: as written, joined, with spaces turned into newlines and
/// tabs, words repeated or dropped, cut short.
fn texts(examples: &[String], rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    for t in examples {
        out.extend([t.clone(), format!("x {t}"), format!("{t} x"), t.replace(' ', "\n"), t.replace(' ', "  ")]);
    }
    for _ in 0..60 {
        let a = &examples[rng.below(examples.len())];
        let b = &examples[rng.below(examples.len())];
        let joined = [" ", "\n", " | ", "; ", " && "][rng.below(5)];
        let mut words: Vec<&str> = a.split(' ').collect();
        let at = rng.below(words.len());
        match rng.below(4) {
            0 => words.insert(at, words[at]),
            1 if words.len() > 1 => drop(words.remove(at)),
            _ => {}
        }
        let sep = [" ", "\n", "\t", " \n "][rng.below(4)];
        let mut text = words.join(sep);
        if rng.below(2) == 0 {
            text = format!("{text}{joined}{b}");
        }
        if rng.below(4) == 0 {
            let cut = text.char_indices().map(|(i, _)| i).nth(rng.below(text.chars().count().max(1)));
            text.truncate(cut.unwrap_or(text.len()));
        }
        out.push(text);
    }
    out
}

#[test]
fn builtin_patterns_match_as_the_full_regex_does_on_texts_made_from_their_examples() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for r in builtin_rules() {
        let examples: Vec<String> = r.examples.iter().chain(r.counterexamples.iter()).map(|t| t.to_string()).collect();
        if examples.is_empty() {
            continue;
        }
        let texts = texts(&examples, &mut rng);
        for p in
            [Some(&r.pattern), r.unless.as_ref(), r.operand.as_ref(), r.unless_operand.as_ref()].into_iter().flatten()
        {
            let full = full(&p.source);
            for t in &texts {
                assert_eq!(p.get().is_match(t), full.is_match(t.as_bytes()), "{} {:?} on {t:?}", r.id, p.source);
            }
        }
    }
}

#[test]
fn dense_copies_of_builtin_sparse_dfas_match_as_the_full_regex_does() {
    // The copies a long batch run makes (`dense.rs`), of every built-in pattern's sparse DFAs
    // small enough to copy, on the same texts as above.
    let mut rng = Rng(0x1405_7b7e_f767_814f);
    let mut copied = 0;
    for r in builtin_rules() {
        let examples: Vec<String> = r.examples.iter().chain(r.counterexamples.iter()).map(|t| t.to_string()).collect();
        if examples.is_empty() {
            continue;
        }
        let texts = texts(&examples, &mut rng);
        for p in
            [Some(&r.pattern), r.unless.as_ref(), r.operand.as_ref(), r.unless_operand.as_ref()].into_iter().flatten()
        {
            let Some(embedded) = p.get().embedded_dfas() else { continue };
            copied += embedded.copy_every_sparse_dfa();
            let full = full(&p.source);
            for t in &texts {
                let hay = crate::rules::Haystack::new(t);
                assert_eq!(
                    embedded.is_match(&hay).unwrap(),
                    full.is_match(t.as_bytes()),
                    "{} {:?} on {t:?}",
                    r.id,
                    p.source
                );
            }
        }
    }
    assert!(copied > 100, "only {copied} sparse DFAs were copied");
}
