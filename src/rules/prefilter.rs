//! Which rules could match a text, by their literals: a rule is tried only on texts that hold
//! one of its literals, or, for a pattern anchored with `^`, that start with one. The literals
//! are indexed by their first two bytes in small hash tables (`index`); a text is scanned once,
//! looking up each position's two bytes (anchored literals only at the start). The built-in
//! rules' index is built by `build.rs` and read from the binary; only the literals of rules
//! added by rules files are indexed at start-up (an Aho-Corasick automaton over the same
//! literals took twenty times longer to build than this index).

pub mod index;

use std::borrow::Cow;

use index::{Entry, Slot, key, mask, word};

use super::Rule;

/// The built-in rules' index, written by `build.rs` with `index::to_rust`.
mod builtin_index {
    include!(concat!(env!("OUT_DIR"), "/builtin_prefilter.rs"));
}

/// The literals of `rule` with their sides, as the index takes them.
fn rule_literals(r: &Rule) -> index::RuleLiterals<'_> {
    index::RuleLiterals {
        target: r.target as u8,
        anchored: r.anchored,
        literals: r.literals.as_ref().map(|l| l.iter().enumerate().map(|(i, l)| (l, r.sides.get(i))).collect()),
    }
}

/// The index of a run of rules that starts at `offset` in the policy's list.
struct Part {
    offset: usize,
    /// One bit per two-byte key that starts some floating literal: most positions of a text
    /// start none, and are passed over with one bit test instead of a table probe. The keys of
    /// all rules, of segment rules only, and of pipeline and line rules only.
    keys: [Cow<'static, [u64]>; 3],
    /// Literals that may occur anywhere, and that must start the text.
    floating: (Cow<'static, [Entry]>, Cow<'static, [Slot]>),
    anchored: (Cow<'static, [Entry]>, Cow<'static, [Slot]>),
    arena: Cow<'static, [u8]>,
    /// Rules without literals, tried on every text.
    always: Cow<'static, [(u32, u8)]>,
    /// What may stand around literals, by `Entry::sides`.
    sides: Cow<'static, [index::Sides]>,
}

pub struct Prefilter {
    /// The built-in rules' part where the policy starts with all of them in order (no
    /// `disable`), and the part of the rules after them.
    parts: Vec<Part>,
}

impl Prefilter {
    pub fn new(rules: &[Rule]) -> Prefilter {
        let builtins = super::builtin::rules().len();
        let intact = rules.len() >= builtins && rules.iter().take(builtins).enumerate().all(|(i, r)| r.is_builtin(i));
        let mut parts = Vec::with_capacity(2);
        let rest = if intact {
            parts.push(Part {
                offset: 0,
                keys: [
                    Cow::Borrowed(&builtin_index::KEYS),
                    Cow::Borrowed(&builtin_index::KEYS_SEGMENT),
                    Cow::Borrowed(&builtin_index::KEYS_OTHER),
                ],
                floating: (Cow::Borrowed(&builtin_index::FLOATING), Cow::Borrowed(&builtin_index::FLOATING_SLOTS)),
                anchored: (Cow::Borrowed(&builtin_index::ANCHORED), Cow::Borrowed(&builtin_index::ANCHORED_SLOTS)),
                arena: Cow::Borrowed(&builtin_index::ARENA),
                always: Cow::Borrowed(&builtin_index::ALWAYS),
                sides: Cow::Borrowed(&builtin_index::SIDES),
            });
            builtins
        } else {
            0
        };
        if rest < rules.len() || parts.is_empty() {
            let built = index::build(rules[rest..].iter().map(rule_literals));
            parts.push(Part {
                offset: rest,
                keys: [Cow::Owned(built.keys), Cow::Owned(built.keys_segment), Cow::Owned(built.keys_other)],
                floating: (Cow::Owned(built.floating.0), Cow::Owned(built.floating.1)),
                anchored: (Cow::Owned(built.anchored.0), Cow::Owned(built.anchored.1)),
                arena: Cow::Owned(built.arena),
                always: Cow::Owned(built.always),
                sides: Cow::Owned(built.sides),
            });
        }
        Prefilter { parts }
    }

    /// Pushes the rules of the targets in `targets` (bit `1 << target`) that could match `text`,
    /// for each target into `out[target]` (unsorted, may repeat): one scan serves the three,
    /// where a command's segment, pipeline and line are often the same text.
    pub fn candidates(&self, text: &str, targets: u8, out: &mut [Vec<usize>; 3]) {
        for part in &self.parts {
            part.candidates(text.as_bytes(), targets, out);
        }
    }
}

impl Part {
    fn candidates(&self, bytes: &[u8], targets: u8, out: &mut [Vec<usize>; 3]) {
        for &(i, t) in self.always.iter() {
            if targets >> t & 1 != 0 {
                out[usize::from(t)].push(self.offset + i as usize);
            }
        }
        if bytes.len() >= 2 {
            self.probe(&self.anchored, key(bytes[0], bytes[1]), bytes, 0, targets, out);
        }
        let keys = match targets {
            1 => &self.keys[1],
            t if t & 1 == 0 => &self.keys[2],
            _ => &self.keys[0],
        };
        for at in 0..bytes.len().saturating_sub(1) {
            let k = key(bytes[at], bytes[at + 1]);
            if keys[usize::from(k >> 6)] & (1 << (k & 63)) != 0 {
                self.probe(&self.floating, k, bytes, at, targets, out);
            }
        }
    }

    /// Pushes the rules of `table` whose literal for key `k` starts `bytes[at..]` with what its
    /// sides admit around it.
    fn probe(
        &self,
        table: &(Cow<'static, [Entry]>, Cow<'static, [Slot]>),
        k: u16,
        bytes: &[u8],
        at: usize,
        targets: u8,
        out: &mut [Vec<usize>; 3],
    ) {
        let run = index::run(&table.0, &table.1, k);
        if run.is_empty() {
            return;
        }
        let rest = &bytes[at..];
        let w = word(rest);
        for e in run {
            let len = e.len as usize;
            if rest.len() >= len
                && w & mask(len) == e.prefix
                && (len <= 8 || rest[8..len] == self.arena[e.start as usize + 8..e.start as usize + len])
                && targets >> e.target & 1 != 0
                && (e.sides == 0 || index::admits(&self.sides[usize::from(e.sides)], bytes, at, len))
            {
                out[usize::from(e.target)].push(self.offset + e.rule as usize);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::index::{self, Entry};
    use crate::rules::compile::builtin_rules;

    #[test]
    fn radix_sort_is_a_stable_sort_by_key() {
        let keys = [0x6d72u16, 0x6769, 0x0000, 0xffff, 0x6769, 0x6d72, 0x0100, 0x0001];
        let entries: Vec<Entry> = keys
            .iter()
            .enumerate()
            .map(|(i, &key)| Entry { key, target: 0, rule: i as u32, start: 0, len: 2, prefix: 0, sides: 0 })
            .collect();
        let sorted = index::radix_sort_by_key(entries.clone());
        let mut expected = entries;
        expected.sort_by_key(|e| e.key); // std's sort_by_key is stable
        let pairs = |v: &[Entry]| v.iter().map(|e| (e.key, e.rule)).collect::<Vec<_>>();
        assert_eq!(pairs(&sorted), pairs(&expected));
    }

    #[test]
    fn the_built_in_index_is_the_one_the_built_in_rules_make() {
        // build.rs indexes the packs as it reads them; the binary's built-in rules, indexed at
        // run time, must give the very same tables (same rules, order, literals and targets).
        let rules = builtin_rules();
        let built = index::build(rules.iter().map(super::rule_literals));
        let b = &super::builtin_index::KEYS;
        assert_eq!(built.keys, b.to_vec());
        assert_eq!(built.keys_segment, super::builtin_index::KEYS_SEGMENT.to_vec());
        assert_eq!(built.keys_other, super::builtin_index::KEYS_OTHER.to_vec());
        assert_eq!(
            built.floating,
            (super::builtin_index::FLOATING.to_vec(), super::builtin_index::FLOATING_SLOTS.to_vec())
        );
        assert_eq!(
            built.anchored,
            (super::builtin_index::ANCHORED.to_vec(), super::builtin_index::ANCHORED_SLOTS.to_vec())
        );
        assert_eq!(built.arena, super::builtin_index::ARENA.to_vec());
        assert_eq!(built.always, super::builtin_index::ALWAYS.to_vec());
        assert_eq!(built.sides, super::builtin_index::SIDES.to_vec());
    }

    #[test]
    fn a_policy_with_a_built_in_rule_disabled_indexes_every_rule_itself() {
        let mut rules = builtin_rules();
        let gone = rules.remove(3);
        let p = super::Prefilter::new(&rules);
        assert_eq!(p.parts.len(), 1);
        assert_eq!(p.parts[0].offset, 0);
        // Every rule keeps its own index: the rule that moved into place 3 is found as 3.
        let mut out: [Vec<usize>; 3] = Default::default();
        let text = rules[3].examples.iter().next().expect("an example").to_string();
        p.candidates(&text, 0b111, &mut out);
        assert!(out[rules[3].target as usize].contains(&3), "{} not picked for {text:?} ({})", rules[3].id, gone.id);
    }
}
