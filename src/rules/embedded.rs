//! Searching a built-in pattern's embedded DFAs. A pattern is one DFA, or, where that would be
//! too large, chains of pieces (`build/blob.rs`), one chain per alternative: the pattern matches
//! when one chain does. A chain `P0 G1 P1 … Gn Pn` is the pattern cut at its gaps `Gi` (`C*` or
//! `(C*S)?` for byte classes `C`, `S`: `.*`, `[^|]*`, `(.*\s)?`), where most of the states of a
//! big DFA come from. It matches when some match of `P0` ends where `G1 P1 … Pn` matches, and so
//! on down the chain: each piece `Gi Pi` is a DFA searched anchored at the match ends of the
//! piece before, which an overlapping search yields in order.
//!
//! Not every end needs trying. When the rest fails from end `j`, it fails from every later end
//! `e` whose bytes `j..e` the gap could have eaten (for `C*`: all in `C`; for `(C*S)?`: all in
//! `C`, the last also in `S`), since a match from `e` would have been one from `j`. So after a
//! failure only ends past the next byte outside `C` are tried: at most one per line for `.*`,
//! and none after the first for `(?s).*`.

use regex_automata::dfa::{Automaton, OverlappingState, dense, sparse};
use regex_automata::{Anchored, Input, MatchError};

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use super::builtin::{self, ByteSet, DfaSpans, Gap};

#[path = "embedded/dense.rs"]
mod copy;
pub use copy::enable as copy_hot_dfas;

/// A built-in pattern's DFAs, read in place from the binary.
pub struct Embedded {
    pieces: DfaSpans,
    dfas: Vec<Dfa>,
}

/// One piece's DFA: dense where it is small (one table lookup per byte), else sparse, with a
/// dense copy made once it is hot in a long run (`copy`).
enum Dfa {
    Dense(dense::DFA<&'static [u32]>),
    Sparse(Sparse),
}

struct Sparse {
    dfa: sparse::DFA<&'static [u8]>,
    /// Bytes of text it was given to search so far, and how many make it hot.
    scanned: AtomicU32,
    hot_after: u32,
    copy: OnceLock<Option<Box<copy::Dense>>>,
}

impl Sparse {
    /// The dense copy, where one is made or due.
    fn hot(&self, bytes: usize) -> Option<&copy::Dense> {
        if let Some(c) = self.copy.get() {
            return c.as_deref();
        }
        let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
        if !copy::enabled() || self.scanned.fetch_add(bytes, Ordering::Relaxed).saturating_add(bytes) < self.hot_after {
            return None;
        }
        self.copy.get_or_init(|| copy::copy(&self.dfa)).as_deref()
    }
}

impl Dfa {
    /// The automaton to search: one for a whole overlapping search, whose state holds its ids.
    fn pick(&self, bytes: usize) -> Pick<'_> {
        match self {
            Dfa::Dense(d) => Pick::Dense(d),
            Dfa::Sparse(s) => match s.hot(bytes) {
                Some(c) => Pick::Copy(c),
                None => Pick::Sparse(&s.dfa),
            },
        }
    }
}

enum Pick<'a> {
    Dense(&'a dense::DFA<&'static [u32]>),
    Sparse(&'a sparse::DFA<&'static [u8]>),
    Copy(&'a copy::Dense),
}

impl Pick<'_> {
    /// Whether the automaton matches in `input` (searched with `earliest`).
    fn is_match(&self, input: &Input<'_>) -> Result<bool, MatchError> {
        match self {
            Pick::Dense(d) => is_match(*d, input),
            Pick::Sparse(d) => is_match(*d, input),
            Pick::Copy(d) => is_match(*d, input),
        }
    }

    fn search_overlapping(&self, input: &Input<'_>, state: &mut OverlappingState) -> Result<(), MatchError> {
        match self {
            Pick::Dense(d) => d.try_search_overlapping_fwd(input, state),
            Pick::Sparse(d) => d.try_search_overlapping_fwd(input, state),
            Pick::Copy(d) => d.try_search_overlapping_fwd(input, state),
        }
    }
}

impl Embedded {
    pub fn new(source: &str, pieces: DfaSpans) -> Embedded {
        // SAFETY: the blob is exactly what build.rs wrote, 8-aligned, each piece's span a DFA
        // (dense or sparse, as the piece says) serialized by `to_bytes_*` for this target's byte order with the same regex-automata
        // (one Cargo.lock serves the build script and the binary). A test deserializes every one
        // of them checked (`compile::tests::embedded_dfas_pass_the_checked_deserializer`).
        unsafe { Embedded::in_blob(source, pieces, super::builtin::blob()) }
    }

    /// The DFAs of `pieces` in `blob`, read unchecked: checking the bytes (`from_bytes`) walks
    /// every state of a DFA and cost more than the search itself (1.8 M instructions for
    /// `rm -rf ~`), on every hit.
    ///
    /// # Safety
    ///
    /// Each piece's span of `blob` must be a DFA (dense or sparse, as the piece says)
    /// serialized by regex-automata's `to_bytes_*` for this target's byte order, and a dense
    /// one must start 4-aligned.
    unsafe fn in_blob(source: &str, pieces: DfaSpans, blob: &'static [u8]) -> Embedded {
        let dfas = pieces
            .iter()
            .map(|p| {
                let bytes = &blob[p.span.0 as usize..(p.span.0 + p.span.1) as usize];
                // SAFETY: as the caller promises.
                let dfa = match p.dense {
                    true => unsafe { dense::DFA::from_bytes_unchecked(bytes) }.map(|(d, _)| Dfa::Dense(d)),
                    false => unsafe { sparse::DFA::from_bytes_unchecked(bytes) }.map(|(dfa, _)| {
                        Dfa::Sparse(Sparse {
                            dfa,
                            scanned: AtomicU32::new(0),
                            hot_after: copy::hot_after(bytes.len()),
                            copy: OnceLock::new(),
                        })
                    }),
                };
                dfa.unwrap_or_else(|e| panic!("built-in DFA of {source:?} does not deserialize: {e}"))
            })
            .collect();
        Embedded { pieces, dfas }
    }

    /// Whether the pattern matches somewhere in the text.
    pub fn is_match(&self, text: &super::Haystack<'_>) -> Result<bool, MatchError> {
        let hay = text.text().as_bytes();
        let mut first = 0;
        while first < self.pieces.len() {
            let end = first + 1 + self.pieces[first + 1..].iter().take_while(|p| !matches!(p.gap, Gap::Start)).count();
            if self.gate_passes(first, text) && self.chain(first, end, 0, hay)? {
                return Ok(true);
            }
            first = end;
        }
        Ok(false)
    }

    /// Makes the dense copy of every sparse DFA now, for tests of the copies' search.
    /// How many were copied (a sparse DFA over the copies' size limit is not).
    #[cfg(test)]
    pub fn copy_every_sparse_dfa(&self) -> usize {
        let mut copied = 0;
        for d in &self.dfas {
            if let Dfa::Sparse(s) = d {
                let copy = copy::build(&s.dfa).map(Box::new);
                copied += usize::from(copy.is_some());
                let _ = s.copy.set(copy);
            }
        }
        copied
    }

    /// Whether `hay` holds a literal of each of the gate's sets of the alternative whose chain
    /// starts at piece `first` (a text that does not cannot match it: its chain is not searched).
    fn gate_passes(&self, first: usize, text: &super::Haystack<'_>) -> bool {
        builtin::sets(self.pieces[first].gate).iter().all(|&set| builtin::set_in(set, text))
    }

    /// Whether pieces `i..end` of one chain match, piece `i` from `from` (anchored there unless
    /// it starts the chain).
    fn chain(&self, i: usize, end: usize, from: usize, hay: &[u8]) -> Result<bool, MatchError> {
        let dfa = self.dfas[i].pick(hay.len() - from);
        let anchored = if matches!(self.pieces[i].gap, Gap::Start) { Anchored::No } else { Anchored::Yes };
        let input = Input::new(hay).range(from..).anchored(anchored);
        if i + 1 == end {
            return dfa.is_match(&input);
        }
        let gap = self.pieces[i + 1].gap;
        let mut state = OverlappingState::start();
        // The last end tried, and the first byte at or after it that the gap cannot eat.
        let mut failed: Option<(usize, usize)> = None;
        loop {
            dfa.search_overlapping(&input, &mut state)?;
            let Some(m) = state.get_match() else { return Ok(false) };
            let e = m.offset();
            if failed.is_some_and(|(j, stop)| covered(gap, hay, j, stop, e)) {
                continue;
            }
            if self.chain(i + 1, end, e, hay)? {
                return Ok(true);
            }
            let eats = match gap {
                Gap::Star(c) | Gap::OptStar(c, _) => c,
                Gap::Start => unreachable!("a chain's later pieces follow a gap"),
            };
            let stop = hay[e..].iter().position(|&b| !has(&eats, b)).map_or(hay.len(), |n| e + n);
            if stop == hay.len() && matches!(gap, Gap::Star(_)) {
                // Every later end is covered by this one.
                return Ok(false);
            }
            failed = Some((e, stop));
        }
    }
}

/// Whether `dfa` matches somewhere in `input`: a forward scan that stops at the first match
/// state (any match will do), the dead state or the end. It asks only what regex-automata's
/// own search asks of an automaton (start state, transitions, special states), without that
/// search's set-up for spans and prefilters, which cost more than the scan on command-sized
/// texts. A quit state (none of these automata has one) gives the error that search gives.
fn is_match<A: Automaton + ?Sized>(dfa: &A, input: &Input<'_>) -> Result<bool, MatchError> {
    let mut sid = dfa.start_state_forward(input)?;
    let hay = input.haystack();
    let mut at = input.start();
    loop {
        if dfa.is_special_state(sid) {
            if dfa.is_match_state(sid) {
                return Ok(true);
            }
            if dfa.is_dead_state(sid) {
                return Ok(false);
            }
            if dfa.is_quit_state(sid) {
                return Err(MatchError::quit(hay[at.saturating_sub(1)], at.saturating_sub(1)));
            }
        }
        if at == input.end() {
            break;
        }
        // SAFETY: `sid` is a state this automaton returned, as the method requires.
        sid = unsafe { dfa.next_state_unchecked(sid, hay[at]) };
        at += 1;
    }
    sid = if at < hay.len() { dfa.next_state(sid, hay[at]) } else { dfa.next_eoi_state(sid) };
    Ok(dfa.is_match_state(sid))
}

/// Whether a match of the rest of the chain from end `e` would also be one from end `j`, where
/// `stop` is the first byte at or after `j` outside the gap's class `C`: the gap eats `j..e`.
fn covered(gap: Gap, hay: &[u8], j: usize, stop: usize, e: usize) -> bool {
    j < e
        && e <= stop
        && match gap {
            Gap::Star(_) => true,
            // `(C*S)?` eats `j..e` as `C*S` when its last byte is in `S` too.
            Gap::OptStar(_, s) => has(&s, hay[e - 1]),
            Gap::Start => false,
        }
}

fn has(set: &ByteSet, b: u8) -> bool {
    set[usize::from(b >> 6)] & (1 << (b & 63)) != 0
}

#[cfg(test)]
mod tests;
