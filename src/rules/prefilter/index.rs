//! The prefilter's index as plain data: literals indexed by their first two bytes in
//! open-addressing tables, with a bitmap of the keys in use. `build.rs` builds the built-in
//! rules' index with this same code and writes it into the binary as static tables (no pointers,
//! nothing to relocate); at run time only user rules' literals are indexed. No dependency on the
//! rest of the crate, so that `build.rs` can include this file.

/// One literal of one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The literal's first two bytes.
    pub key: u16,
    /// The rule's target, as `Target as u8`.
    pub target: u8,
    /// The rule's index in the rules the index was built from.
    pub rule: u32,
    /// The literal's bytes in the arena.
    pub start: u32,
    pub len: u32,
    /// Its first 8 bytes (little-endian, zeros past its end): most entries are told apart from
    /// the text by one comparison of words, without `memcmp`.
    pub prefix: u64,
    /// What may stand on each side of it in a match: an index into the index's `sides`, 0 for
    /// anything.
    pub sides: u16,
}

/// What may stand on each side of a literal (`rules::literals::Sides`): the bytes before it and
/// whether it may start the text, the bytes after it and whether it may end the text.
pub type Sides = ([u64; 4], bool, [u64; 4], bool);

/// Sides that admit anything: entry 0 of every index's `sides`.
pub const ANY_SIDES: Sides = ([u64::MAX; 4], true, [u64::MAX; 4], true);

/// Whether `text[at..at + len]`, an occurrence of a literal, has what `sides` admits around it.
#[inline]
pub fn admits(sides: &Sides, text: &[u8], at: usize, len: usize) -> bool {
    let has = |set: &[u64; 4], b: u8| set[usize::from(b >> 6)] & (1 << (b & 63)) != 0;
    let before = match at.checked_sub(1) {
        Some(i) => has(&sides.0, text[i]),
        None => sides.1,
    };
    before
        && match text.get(at + len) {
            Some(&b) => has(&sides.2, b),
            None => sides.3,
        }
}

/// A slot of an open-addressing table: a two-byte key and its run of entries.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Slot {
    pub key: u16,
    pub first: u32,
    pub count: u32,
}

/// What one rule brings to the index.
pub struct RuleLiterals<'a> {
    pub target: u8,
    /// Its literals must start the text (the pattern is anchored with `^`).
    pub anchored: bool,
    /// `None`: the rule has no literals and is tried on every text. Each literal with what may
    /// stand on its sides.
    pub literals: Option<Vec<(&'a [u8], Sides)>>,
}

/// The whole index of a list of rules.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Index {
    /// One bit per two-byte key that starts some floating literal.
    pub keys: Vec<u64>,
    /// The same, of literals of segment rules only, and of the other rules only (target 0,
    /// and targets 1 and 2): a text scanned for one kind of rule passes over the other's keys.
    pub keys_segment: Vec<u64>,
    pub keys_other: Vec<u64>,
    /// Literals that may occur anywhere, and their slots.
    pub floating: (Vec<Entry>, Vec<Slot>),
    /// Literals that must start the text, and their slots.
    pub anchored: (Vec<Entry>, Vec<Slot>),
    pub arena: Vec<u8>,
    /// Rules without literals, with their targets.
    pub always: Vec<(u32, u8)>,
    /// The sides entries name, `ANY_SIDES` first.
    pub sides: Vec<Sides>,
}

/// Words in the keys bitmap (one bit per possible two-byte key).
pub const KEY_WORDS: usize = 1 << 10;

/// Bits in a text's summary of byte pairs (`rules::Haystack`).
pub const PAIR_BITS: usize = 2048;

/// The bit of the byte pair `a b` in a text's summary of byte pairs.
pub fn pair_bit(a: u8, b: u8) -> u16 {
    ((usize::from(a) * 131 + usize::from(b)) % PAIR_BITS) as u16
}

/// The bits of a literal's first and last byte pairs (a literal is at least two bytes long):
/// a text whose summary lacks either cannot hold the literal.
pub fn end_pairs(literal: &[u8]) -> (u16, u16) {
    let n = literal.len();
    if n < 2 {
        return (u16::MAX, u16::MAX);
    }
    (pair_bit(literal[0], literal[1]), pair_bit(literal[n - 2], literal[n - 1]))
}

pub fn key(a: u8, b: u8) -> u16 {
    u16::from(a) << 8 | u16::from(b)
}

/// The mask of a literal's bytes in its `prefix`.
pub fn mask(len: usize) -> u64 {
    const MASKS: [u64; 9] = {
        let mut m = [u64::MAX; 9];
        let mut i = 0;
        while i < 8 {
            m[i] = (1u64 << (8 * i)) - 1;
            i += 1;
        }
        m
    };
    MASKS[len.min(8)]
}

/// The 8 bytes of `rest` from its start as a little-endian word, zeros past its end.
pub fn word(rest: &[u8]) -> u64 {
    if let Some(head) = rest.first_chunk::<8>() {
        return u64::from_le_bytes(*head);
    }
    let mut w = [0u8; 8];
    let n = rest.len().min(8);
    w[..n].copy_from_slice(&rest[..n]);
    u64::from_le_bytes(w)
}

pub fn slot_of(k: u16, size: usize) -> usize {
    (usize::from(k).wrapping_mul(0x9E37_79B9)) >> 7 & (size - 1)
}

/// Indexes `rules` (in order: an entry's `rule` is its position in the iterator).
pub fn build<'a>(rules: impl Iterator<Item = RuleLiterals<'a>>) -> Index {
    let (mut floating, mut anchored) = (Vec::new(), Vec::new());
    let mut arena = Vec::new();
    let mut always = Vec::new();
    let mut sides = vec![ANY_SIDES];
    let mut side_ids = std::collections::HashMap::from([(ANY_SIDES, 0usize)]);
    let mut last: Option<(Sides, usize)> = None;
    for (i, rule) in rules.enumerate() {
        let Some(lits) = rule.literals else {
            always.push((i as u32, rule.target));
            continue;
        };
        for (l, s) in lits {
            // Rules written alike have alike sides: the last entry's are checked before hashing.
            let at = match last {
                Some((prev, at)) if prev == s => at,
                _ => *side_ids.entry(s).or_insert_with(|| {
                    sides.push(s);
                    sides.len() - 1
                }),
            };
            last = Some((s, at));
            // Literals are at least two bytes long (literals.rs).
            let entry = Entry {
                // Past the sides an entry can name, it admits anything (entry 0).
                sides: u16::try_from(at).unwrap_or(0),
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
    let mut keys = vec![0u64; KEY_WORDS];
    let (mut keys_segment, mut keys_other) = (vec![0u64; KEY_WORDS], vec![0u64; KEY_WORDS]);
    for e in &floating {
        let (word, bit) = (usize::from(e.key >> 6), 1 << (e.key & 63));
        keys[word] |= bit;
        if e.target == 0 { keys_segment[word] |= bit } else { keys_other[word] |= bit }
    }
    Index { keys, keys_segment, keys_other, floating: table(floating), anchored: table(anchored), arena, always, sides }
}

/// Entries sorted by key (stable: rule order within a key) and the slots that find each key's run.
pub fn table(entries: Vec<Entry>) -> (Vec<Entry>, Vec<Slot>) {
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
    (entries, slots)
}

/// The entries whose literals start with the two bytes of `k`.
pub fn run<'e>(entries: &'e [Entry], slots: &[Slot], k: u16) -> &'e [Entry] {
    let mask = slots.len() - 1;
    let mut h = slot_of(k, slots.len());
    loop {
        let s = slots[h];
        if s.count == 0 {
            return &[];
        }
        if s.key == k {
            return &entries[s.first as usize..(s.first + s.count) as usize];
        }
        h = (h + 1) & mask;
    }
}

/// A stable sort by the two-byte key in two counting passes (low byte, then high byte): a few
/// thousand operations where a comparison sort of the same entries took ten times more.
pub fn radix_sort_by_key(mut entries: Vec<Entry>) -> Vec<Entry> {
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

/// The index as Rust source: statics of the `Entry` and `Slot` types at `path` (for build.rs).
#[allow(dead_code)] // only build.rs calls it
pub fn to_rust(index: &Index, path: &str) -> String {
    let entries = |name: &str, v: &[Entry]| {
        let items: Vec<String> = v
            .iter()
            .map(|e| {
                format!(
                    "{path}::Entry{{key:{},target:{},rule:{},start:{},len:{},prefix:{},sides:{}}}",
                    e.key, e.target, e.rule, e.start, e.len, e.prefix, e.sides
                )
            })
            .collect();
        format!("pub static {name}: [{path}::Entry; {}] = [{}];\n", v.len(), items.join(",\n"))
    };
    let slots = |name: &str, v: &[Slot]| {
        let items: Vec<String> =
            v.iter().map(|s| format!("{path}::Slot{{key:{},first:{},count:{}}}", s.key, s.first, s.count)).collect();
        format!("pub static {name}: [{path}::Slot; {}] = [{}];\n", v.len(), items.join(",\n"))
    };
    let list = |v: &mut dyn Iterator<Item = String>| v.collect::<Vec<_>>().join(",");
    let mut out = String::new();
    out += &format!(
        "pub static KEYS: [u64; {}] = [{}];\n",
        index.keys.len(),
        list(&mut index.keys.iter().map(u64::to_string))
    );
    for (name, keys) in [("KEYS_SEGMENT", &index.keys_segment), ("KEYS_OTHER", &index.keys_other)] {
        out +=
            &format!("pub static {name}: [u64; {}] = [{}];\n", keys.len(), list(&mut keys.iter().map(u64::to_string)));
    }
    out += &entries("FLOATING", &index.floating.0);
    out += &slots("FLOATING_SLOTS", &index.floating.1);
    out += &entries("ANCHORED", &index.anchored.0);
    out += &slots("ANCHORED_SLOTS", &index.anchored.1);
    out += &format!(
        "pub static ARENA: [u8; {}] = [{}];\n",
        index.arena.len(),
        list(&mut index.arena.iter().map(u8::to_string))
    );
    out += &format!(
        "pub static SIDES: [{path}::Sides; {}] = [{}];\n",
        index.sides.len(),
        list(&mut index.sides.iter().map(|s| format!("({:?},{},{:?},{})", s.0, s.1, s.2, s.3)))
    );
    out += &format!(
        "pub static ALWAYS: [(u32, u8); {}] = [{}];\n",
        index.always.len(),
        list(&mut index.always.iter().map(|(r, t)| format!("({r},{t})")))
    );
    out
}
