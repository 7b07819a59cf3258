//! Words that exempt a text from a rule before its pattern runs. A rule's `unless` pattern often
//! lists programs it never applies to (`^(git|npm|pip|…)\s`): a text whose first word is one of
//! them, followed by a space, is exempt whatever the rest says, so the rule's own (larger) pattern
//! need not run on it. The words are what such a branch of `unless` matches exactly, computed from
//! the regex syntax (by `build.rs` for the built-in packs); a text is exempt only where that branch
//! surely matches, so no verdict changes.

// The words are computed by build.rs (which includes this file) and by the tests; the binary
// only looks them up.
#![cfg_attr(not(test), allow(dead_code))]

use regex_syntax::hir::{Hir, HirKind, Look};

use super::literals::class_bytes;

/// Most words one branch may spell: a larger language is left to the regex.
const MAX_WORDS: usize = 4096;

/// The bytes `\s` matches over ASCII, as rules are compiled.
pub fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The words `w` such that every text starting with `w` and then a byte `\s` matches `unless`:
/// the words of its branches `^(w1|w2|…)\s`, sorted (regex-syntax may have moved the `^` of
/// several branches in front of their alternation). Empty when it has none.
pub fn exempt_words(unless: &Hir) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    at_start(unless, &mut out);
    // A word with a space in it would not be a text's first word.
    out.retain(|w| !w.is_empty() && !w.iter().any(|&b| is_space(b)));
    out.sort();
    out.dedup();
    out
}

/// Adds the words `w` such that `hir` matches at the start of every text that starts with `w`
/// and then a byte `\s` matches.
fn at_start(hir: &Hir, out: &mut Vec<Vec<u8>>) {
    match hir.kind() {
        HirKind::Alternation(subs) => subs.iter().for_each(|s| at_start(s, out)),
        HirKind::Capture(c) => at_start(&c.sub, out),
        HirKind::Concat(parts) => {
            // `^` holds at the start: what follows it must match there.
            let rest = match parts.iter().position(|p| !matches!(p.kind(), HirKind::Look(Look::Start))) {
                Some(i) => &parts[i..],
                None => return,
            };
            match rest {
                [one] => at_start(one, out),
                [words @ .., space] if takes_every_space(space) => out.extend(spelled(words).unwrap_or_default()),
                _ => {}
            }
        }
        _ => {}
    }
}

/// Whether `hir` is a class that matches every byte `\s` does.
fn takes_every_space(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Class(c) => {
            class_bytes(c).is_some_and(|bytes| (0..=255u8).filter(|&b| is_space(b)).all(|b| bytes.contains(&b)))
        }
        _ => false,
    }
}

/// Every string `hir` matches, where that is a finite set of at most `MAX_WORDS`.
fn language(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let out = match hir.kind() {
        HirKind::Empty => vec![Vec::new()],
        HirKind::Literal(lit) => vec![lit.0.to_vec()],
        HirKind::Class(c) => class_bytes(c)?.into_iter().map(|b| vec![b]).collect(),
        HirKind::Capture(c) => language(&c.sub)?,
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for s in subs {
                all.extend(language(s)?);
                if all.len() > MAX_WORDS {
                    return None;
                }
            }
            all
        }
        HirKind::Concat(parts) => spelled(parts)?,
        HirKind::Repetition(r) if r.min == 0 && r.max == Some(1) => {
            let mut all = language(&r.sub)?;
            all.push(Vec::new());
            all
        }
        _ => return None,
    };
    Some(out)
}

/// Every string the parts of a concatenation match one after another (`language`).
fn spelled(parts: &[Hir]) -> Option<Vec<Vec<u8>>> {
    let mut all = vec![Vec::new()];
    for p in parts {
        let next = language(p)?;
        if all.len() * next.len() > MAX_WORDS {
            return None;
        }
        all = all.iter().flat_map(|pre| next.iter().map(move |w| [pre.as_slice(), w].concat())).collect();
    }
    Some(all)
}

/// The text's first word, where a byte `\s` matches follows it: a text that starts with an
/// exempt word is exempt when this is that word.
pub fn first_word(text: &[u8]) -> Option<&[u8]> {
    text.iter().position(|&b| is_space(b)).map(|end| &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(unless: &str) -> Vec<Vec<u8>> {
        exempt_words(&super::super::literals::check_syntax(unless).unwrap())
    }

    #[test]
    fn branches_of_programs_then_a_space_give_their_words() {
        let w = words(r"^(git|npm|pip3?|k(ubectl|9s))\s|\s--help(\s|$)|^(echo)\s");
        let want: Vec<&[u8]> = vec![b"echo", b"git", b"k9s", b"kubectl", b"npm", b"pip", b"pip3"];
        assert_eq!(w, want.iter().map(|w| w.to_vec()).collect::<Vec<_>>());
        // `^` moved in front of several branches.
        assert_eq!(words(r"^(rm|del)\s|^r(m|x)?\s|^zfs\s+-n"), [&b"del"[..], b"r", b"rm", b"rx"]);
        // Multi-line, no space after, or an open-ended word: none.
        assert!(words(r"(?m)^(git|npm)\s").is_empty());
        assert!(words(r"^(git|npm) ").is_empty());
        assert!(words(r"^git\S*\s").is_empty());
        assert!(words(r"^(zfs|zpool)\s+\S+\s+-[a-zA-Z]*n").is_empty());
    }

    /// Every text the words exempt is one the `unless` pattern matches: over random texts made
    /// of the patterns' own words.
    #[test]
    fn every_exempt_text_matches_the_pattern() {
        let patterns = [
            r"^(git|npm|pip3?|k(ubectl|9s)|x[yz]|a(b)?)\s|\s--help",
            r"^(rm|del)\s|^r(m|x)?\s",
            r"^(git|g\s)\s",
            r"^(git|npm)[a-z\t]|^xy[ab]?\n",
        ];
        let pieces: [&[u8]; 14] =
            [b"git", b"npm", b"pip", b"3", b"kubectl", b"k9s", b"xy", b"a", b"b", b" ", b"\t", b"rm", b"x", b"\n"];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut exempt = 0;
        for p in patterns {
            let re = regex::bytes::RegexBuilder::new(p).unicode(false).build().unwrap();
            let w = words(p);
            let w: Vec<&[u8]> = w.iter().map(Vec::as_slice).collect();
            for _ in 0..4000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let n = 1 + seed % 5;
                let text: Vec<u8> = (0..n).flat_map(|i| pieces[((seed >> (8 * i)) % 14) as usize].to_vec()).collect();
                if first_word(&text).is_some_and(|f| w.binary_search(&f).is_ok()) {
                    exempt += 1;
                    assert!(re.is_match(&text), "{p:?}: {:?} exempt but not matched", String::from_utf8_lossy(&text));
                }
            }
        }
        assert!(exempt > 100, "only {exempt} texts were exempt: the check checked little");
    }
}
