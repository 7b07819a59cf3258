//! A dense copy of a hot embedded sparse DFA, for long runs (`check --batch`). A sparse DFA's
//! transition searches the state's byte ranges (about 130 instructions a byte); the copy's is one
//! table lookup. The copy is the same automaton laid out again: its states are those reachable
//! from the sparse DFA's start states, each with one transition per byte class, and everything
//! a search asks of a state besides its transitions (matches, accelerator bytes, start states) is
//! answered by the sparse DFA it was copied from. Nothing is compiled: no regex is read.
//!
//! Only a DFA given much text to search in one process is copied (`HOT_AFTER`), only while copies stay
//! within `BUDGET` bytes, and only where one was asked for (`enable`): a single `check` or
//! wrapper run never pays for a copy.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use regex_automata::Anchored;
use regex_automata::dfa::{Automaton, StartError, sparse};
use regex_automata::util::alphabet::ByteClasses;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::util::primitives::{PatternID, StateID};
use regex_automata::util::start;

/// Bytes of text a sparse DFA is given to search before it is copied: at least this many, and
/// at least the sparse DFA's own size (a copy costs about 20 instructions per byte of the sparse
/// table, a sparse transition over 100 more than a dense one).
pub const HOT_AFTER: u32 = 32 << 10;

/// When a sparse DFA of `size` bytes is hot enough to copy.
pub fn hot_after(size: usize) -> u32 {
    HOT_AFTER.max(u32::try_from(size).unwrap_or(u32::MAX))
}
/// Most bytes all copies in one process may take, and one copy may.
const BUDGET: usize = 6 << 20;
const ONE_MAX: usize = 1 << 20;

static ENABLED: AtomicBool = AtomicBool::new(false);
static USED: AtomicUsize = AtomicUsize::new(0);

/// Lets hot sparse DFAs be copied dense from now on (a long run of many searches).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

const DEAD: u8 = 1;
const QUIT: u8 = 2;
const MATCH: u8 = 4;
const START: u8 = 8;
const ACCEL: u8 = 16;

/// The dense copy. State ids are premultiplied: a state's id is its index shifted by `stride2`,
/// so a transition is `table[id + class]` (an index, 2 bytes, shifted back to an id). The sparse DFA's special states come first, so "is
/// special" is one comparison, as in regex-automata's own dense DFAs.
pub struct Dense {
    /// Per state, one entry per byte class and EOI: the next state's index.
    table: Vec<u16>,
    classes: [u8; 256],
    eoi: usize,
    stride2: u32,
    /// Ids below this are the special states.
    specials_end: usize,
    /// Per state index: what kind of special state it is (`DEAD`, `QUIT`, …).
    flags: Vec<u8>,
    /// Per state index: the sparse DFA's id of the state.
    back: Vec<StateID>,
    /// The sparse DFA's start states and their ids here.
    starts: Vec<(StateID, StateID)>,
    sparse: sparse::DFA<&'static [u8]>,
}

/// The dense copy of `dfa`, or `None` where it would pass the budget.
pub fn copy(dfa: &sparse::DFA<&'static [u8]>) -> Option<Box<Dense>> {
    let copy = build(dfa)?;
    let size = copy.table.len() * std::mem::size_of::<u16>();
    if USED.fetch_add(size, Ordering::Relaxed) + size > BUDGET {
        USED.fetch_sub(size, Ordering::Relaxed);
        return None;
    }
    Some(Box::new(copy))
}

/// The dense copy of `dfa`, whatever the other copies take; `None` for one over `ONE_MAX`.
pub fn build(dfa: &sparse::DFA<&'static [u8]>) -> Option<Dense> {
    let classes: &ByteClasses = dfa.byte_classes();
    let stride2 = classes.stride2() as u32;
    let alphabet = classes.alphabet_len();
    let mut rep = vec![0u8; alphabet - 1];
    let mut class_of = [0u8; 256];
    for b in (0..=255u8).rev() {
        class_of[usize::from(b)] = classes.get(b);
        rep[usize::from(classes.get(b))] = b;
    }
    // Every state reachable from a start state, breadth first, with its row of transitions
    // (the sparse DFA's ids, EOI last).
    let mut index: HashMap<StateID, usize, Fx> = HashMap::default();
    let mut order: Vec<StateID> = Vec::new();
    let mut starts: Vec<(StateID, StateID)> = Vec::new();
    for anchored in [Anchored::No, Anchored::Yes] {
        for look_behind in std::iter::once(None).chain((0..=255u8).map(Some)) {
            let config = start::Config::new().anchored(anchored).look_behind(look_behind);
            if let Ok(sid) = dfa.start_state(&config) {
                if !starts.iter().any(|&(s, _)| s == sid) {
                    starts.push((sid, sid));
                }
                index.entry(sid).or_insert_with(|| {
                    order.push(sid);
                    order.len() - 1
                });
            }
        }
    }
    let per_state = (1usize << stride2) * std::mem::size_of::<u16>();
    let mut rows: Vec<StateID> = Vec::new();
    let mut at = 0;
    while at < order.len() {
        let sid = order[at];
        at += 1;
        rows.extend(rep.iter().map(|&b| dfa.next_state(sid, b)));
        rows.push(dfa.next_eoi_state(sid));
        for &t in &rows[rows.len() - alphabet..] {
            index.entry(t).or_insert_with(|| {
                order.push(t);
                order.len() - 1
            });
        }
        if order.len() * per_state > ONE_MAX || order.len() > usize::from(u16::MAX) {
            return None;
        }
    }
    // Special states first: the new index of each state, and the states in their new order.
    let mut new_order: Vec<usize> = (0..order.len()).collect();
    new_order.sort_by_key(|&i| !dfa.is_special_state(order[i]));
    let specials = new_order.iter().take_while(|&&i| dfa.is_special_state(order[i])).count();
    let mut new_index = vec![0usize; order.len()];
    for (new, &old) in new_order.iter().enumerate() {
        new_index[old] = new;
    }
    let id = |s: StateID| StateID::new_unchecked(new_index[index[&s]] << stride2);
    let mut table = vec![0u16; order.len() << stride2];
    let mut flags = Vec::with_capacity(order.len());
    let mut back = Vec::with_capacity(order.len());
    for &old in &new_order {
        let s = order[old];
        let new = new_index[old];
        for (slot, &t) in table[new << stride2..].iter_mut().zip(&rows[old * alphabet..(old + 1) * alphabet]) {
            *slot = new_index[index[&t]] as u16;
        }
        let kinds = [
            (dfa.is_dead_state(s), DEAD),
            (dfa.is_quit_state(s), QUIT),
            (dfa.is_match_state(s), MATCH),
            (dfa.is_start_state(s), START),
            (dfa.is_accel_state(s), ACCEL),
        ];
        flags.push(kinds.iter().filter(|(yes, _)| *yes).fold(0, |f, (_, k)| f | k));
        back.push(s);
    }
    for (sparse_id, mine) in &mut starts {
        *mine = id(*sparse_id);
    }
    Some(Dense {
        table,
        classes: class_of,
        eoi: alphabet - 1,
        stride2,
        specials_end: specials << stride2,
        flags,
        back,
        starts,
        sparse: dfa.clone(),
    })
}

/// A multiplicative hash for state ids: the map is built once per copy, from small integers,
/// where SipHash's cost showed in profiles.
#[derive(Default, Clone, Copy)]
struct Fx;

struct FxHasher(u64);

impl std::hash::BuildHasher for Fx {
    type Hasher = FxHasher;
    fn build_hasher(&self) -> FxHasher {
        FxHasher(0)
    }
}

impl std::hash::Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

impl Dense {
    /// The id of the state at `index`: its row's start.
    #[inline]
    fn id(&self, index: u16) -> StateID {
        StateID::new_unchecked(usize::from(index) << self.stride2)
    }

    fn index(&self, id: StateID) -> usize {
        id.as_usize() >> self.stride2
    }

    fn has(&self, id: StateID, flag: u8) -> bool {
        self.flags[self.index(id)] & flag != 0
    }

    fn back(&self, id: StateID) -> StateID {
        self.back[self.index(id)]
    }

    /// This copy's id of one of the sparse DFA's start states.
    fn start_of(&self, sparse_id: StateID) -> StateID {
        match self.starts.iter().find(|&&(s, _)| s == sparse_id) {
            Some(&(_, mine)) => mine,
            // Every start state of the sparse DFA was copied (`copy` asks for each kind of
            // start, anchored and not); a search anchored at a pattern is never run here.
            None => unreachable!("a start state the copy does not hold"),
        }
    }
}

// SAFETY: every id this automaton returns is a premultiplied index of a row of `table` (the
// rows are written from the states found reachable, and every transition of every row leads to
// one of them), and every other answer is the sparse DFA's own for the same state.
unsafe impl Automaton for Dense {
    #[inline]
    fn next_state(&self, current: StateID, input: u8) -> StateID {
        self.id(self.table[current.as_usize() + usize::from(self.classes[usize::from(input)])])
    }

    #[inline]
    unsafe fn next_state_unchecked(&self, current: StateID, input: u8) -> StateID {
        let class = usize::from(self.classes[usize::from(input)]);
        // SAFETY: the caller passes an id this automaton returned: a row start, and a class
        // is less than the row's length.
        self.id(unsafe { *self.table.get_unchecked(current.as_usize() + class) })
    }

    fn next_eoi_state(&self, current: StateID) -> StateID {
        self.id(self.table[current.as_usize() + self.eoi])
    }

    fn start_state(&self, config: &start::Config) -> Result<StateID, StartError> {
        self.sparse.start_state(config).map(|s| self.start_of(s))
    }

    fn universal_start_state(&self, mode: Anchored) -> Option<StateID> {
        self.sparse.universal_start_state(mode).map(|s| self.start_of(s))
    }

    #[inline]
    fn is_special_state(&self, id: StateID) -> bool {
        id.as_usize() < self.specials_end
    }

    fn is_dead_state(&self, id: StateID) -> bool {
        self.has(id, DEAD)
    }

    fn is_quit_state(&self, id: StateID) -> bool {
        self.has(id, QUIT)
    }

    fn is_match_state(&self, id: StateID) -> bool {
        self.has(id, MATCH)
    }

    fn is_start_state(&self, id: StateID) -> bool {
        self.has(id, START)
    }

    fn is_accel_state(&self, id: StateID) -> bool {
        self.has(id, ACCEL)
    }

    fn pattern_len(&self) -> usize {
        self.sparse.pattern_len()
    }

    fn match_len(&self, id: StateID) -> usize {
        self.sparse.match_len(self.back(id))
    }

    fn match_pattern(&self, id: StateID, index: usize) -> PatternID {
        self.sparse.match_pattern(self.back(id), index)
    }

    fn has_empty(&self) -> bool {
        self.sparse.has_empty()
    }

    fn is_utf8(&self) -> bool {
        self.sparse.is_utf8()
    }

    fn is_always_start_anchored(&self) -> bool {
        self.sparse.is_always_start_anchored()
    }

    fn accelerator(&self, id: StateID) -> &[u8] {
        self.sparse.accelerator(self.back(id))
    }

    fn get_prefilter(&self) -> Option<&Prefilter> {
        self.sparse.get_prefilter()
    }
}
