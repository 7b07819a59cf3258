//! Which rules could match a text, by their literals: a rule is tried only on texts that hold
//! one of its literals, or, for a pattern anchored with `^`, that start with one. The literals
//! are indexed by their first two bytes in small hash tables; a text is scanned once, looking up
//! each position's two bytes (anchored literals only at the start). Built on every start from the
//! rules in force, so building must be cheap: a sort of a few hundred entries (an Aho-Corasick
//! automaton over the same literals took twenty times longer to build).

use super::{Rule, Target};

#[derive(Clone, Copy)]
struct Entry {
    key: u16,
    target: Target,
    rule: u32,
    /// The literal's bytes in `arena`.
    start: u32,
    len: u32,
    /// Its first 8 bytes (little-endian, zeros past its end): most entries are told apart from
    /// the text by one comparison of words, without `memcmp`.
    prefix: u64,
}

/// The mask of a literal's bytes in its `prefix`.
fn mask(len: usize) -> u64 {
    if len >= 8 { u64::MAX } else { (1u64 << (8 * len)) - 1 }
}

/// The 8 bytes of `rest` from its start as a little-endian word, zeros past its end.
fn word(rest: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = rest.len().min(8);
    w[..n].copy_from_slice(&rest[..n]);
    u64::from_le_bytes(w)
}

/// A slot of the open-addressing table: a two-byte key and its run of entries.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u16,
    first: u32,
    count: u32,
}

/// Literals indexed by their first two bytes.
#[derive(Default)]
struct Table {
    entries: Vec<Entry>,
    slots: Vec<Slot>,
}

pub struct Prefilter {
    /// One bit per two-byte key that starts some floating literal: most positions of a text
    /// start none, and are passed over with one bit test instead of a table probe.
    keys: Vec<u64>,
    /// Literals that may occur anywhere.
    floating: Table,
    /// Literals that must start the text.
    anchored: Table,
    arena: Vec<u8>,
    /// Rules without literals, tried on every text.
    always: Vec<(usize, Target)>,
}

fn key(a: u8, b: u8) -> u16 {
    u16::from(a) << 8 | u16::from(b)
}

impl Prefilter {
    pub fn new(rules: &[Rule]) -> Prefilter {
        let (mut floating, mut anchored) = (Vec::new(), Vec::new());
        let mut arena = Vec::new();
        let mut always = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            let Some(lits) = &rule.literals else {
                always.push((i, rule.target));
                continue;
            };
            for l in lits.iter() {
                // Literals are at least two bytes long (literals.rs).
                let entry = Entry {
                    key: key(l[0], l[1]),
                    target: rule.target,
                    rule: i as u32,
                    start: arena.len() as u32,
                    len: l.len() as u32,
                    prefix: word(l),
                };
                arena.extend_from_slice(l);
                if rule.anchored { anchored.push(entry) } else { floating.push(entry) }
            }
        }
        let mut keys = vec![0u64; 1 << 10];
        for e in &floating {
            keys[usize::from(e.key >> 6)] |= 1 << (e.key & 63);
        }
        Prefilter { keys, floating: Table::new(floating), anchored: Table::new(anchored), arena, always }
    }

    /// Pushes the rules that could match `text`, for each target into `out[target]` (unsorted,
    /// may repeat): one scan serves the three, where a command's segment, pipeline and line are
    /// often the same text.
    pub fn candidates(&self, text: &str, out: &mut [Vec<usize>; 3]) {
        for &(i, t) in &self.always {
            out[t as usize].push(i);
        }
        let bytes = text.as_bytes();
        if bytes.len() >= 2 {
            self.probe(&self.anchored, key(bytes[0], bytes[1]), bytes, out);
        }
        for at in 0..bytes.len().saturating_sub(1) {
            let k = key(bytes[at], bytes[at + 1]);
            if self.keys[usize::from(k >> 6)] & (1 << (k & 63)) != 0 {
                self.probe(&self.floating, k, &bytes[at..], out);
            }
        }
    }

    /// Pushes the rules of `table` whose literal for key `k` starts `rest`.
    fn probe(&self, table: &Table, k: u16, rest: &[u8], out: &mut [Vec<usize>; 3]) {
        let run = table.run(k);
        if run.is_empty() {
            return;
        }
        let w = word(rest);
        for e in run {
            let len = e.len as usize;
            if rest.len() >= len
                && w & mask(len) == e.prefix
                && (len <= 8 || rest[8..len] == self.arena[e.start as usize + 8..e.start as usize + len])
            {
                out[e.target as usize].push(e.rule as usize);
            }
        }
    }
}

impl Table {
    fn new(entries: Vec<Entry>) -> Table {
        // Entries arrive in rule order; a stable sort by key keeps that order within a key.
        let entries = radix_sort_by_key(entries);
        let size = (entries.len() * 2).next_power_of_two().max(16);
        let mut slots = vec![Slot::default(); size];
        let mut at = 0;
        while at < entries.len() {
            let k = entries[at].key;
            let run = entries[at..].iter().take_while(|e| e.key == k).count();
            let mut h = slot_of(k, size);
            while slots[h].count != 0 {
                h = (h + 1) & (size - 1);
            }
            slots[h] = Slot { key: k, first: at as u32, count: run as u32 };
            at += run;
        }
        Table { entries, slots }
    }

    /// The entries whose literals start with the two bytes of `k`.
    fn run(&self, k: u16) -> &[Entry] {
        let mask = self.slots.len() - 1;
        let mut h = slot_of(k, self.slots.len());
        loop {
            let s = self.slots[h];
            if s.count == 0 {
                return &[];
            }
            if s.key == k {
                return &self.entries[s.first as usize..(s.first + s.count) as usize];
            }
            h = (h + 1) & mask;
        }
    }
}

/// A stable sort by the two-byte key in two counting passes (low byte, then high byte): a few
/// thousand operations where a comparison sort of the same entries took ten times more, on every
/// start.
fn radix_sort_by_key(mut entries: Vec<Entry>) -> Vec<Entry> {
    let mut scratch: Vec<Entry> = Vec::with_capacity(entries.len());
    for shift in [0u16, 8] {
        let mut counts = [0usize; 257];
        for e in &entries {
            counts[usize::from((e.key >> shift) & 0xff) + 1] += 1;
        }
        for b in 1..257 {
            counts[b] += counts[b - 1];
        }
        scratch.clear();
        scratch.extend_from_slice(&entries);
        for e in &entries {
            let b = usize::from((e.key >> shift) & 0xff);
            scratch[counts[b]] = *e;
            counts[b] += 1;
        }
        std::mem::swap(&mut entries, &mut scratch);
    }
    entries
}

fn slot_of(k: u16, size: usize) -> usize {
    (usize::from(k).wrapping_mul(0x9E37_79B9)) >> 7 & (size - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_is_a_stable_sort_by_key() {
        let keys = [0x6d72u16, 0x6769, 0x0000, 0xffff, 0x6769, 0x6d72, 0x0100, 0x0001];
        let entries: Vec<Entry> = keys
            .iter()
            .enumerate()
            .map(|(i, &key)| Entry { key, target: Target::Segment, rule: i as u32, start: 0, len: 2, prefix: 0 })
            .collect();
        let sorted = radix_sort_by_key(entries.clone());
        let mut expected = entries;
        expected.sort_by_key(|e| e.key); // std's sort_by_key is stable
        let pairs = |v: &[Entry]| v.iter().map(|e| (e.key, e.rule)).collect::<Vec<_>>();
        assert_eq!(pairs(&sorted), pairs(&expected));
    }
}
