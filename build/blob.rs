//! The built-in patterns' DFAs, for `build.rs`: each pattern is determinized into one sparse DFA,
//! or, where that DFA would be too large, cut into pieces that together match exactly the same
//! texts (`rules::embedded` runs them): a chain cut at the pattern's gaps (`.*`, `[^|]*`,
//! `(.*\s)?`), where most of the states of a big DFA come from, or its alternatives, one DFA
//! each. Every piece is serialized for the target's byte order into one blob the binary embeds.

use std::fmt::Write as _;

use regex_syntax::hir::{Class, Hir, HirKind};

/// Largest DFA one piece of a built-in pattern may determinize to (dense, before it is made
/// sparse), tried in order: a pattern over the first is cut into a chain or split into
/// alternatives; one that does not fit that way either is built again with the larger limit
/// (a few patterns whose alternatives overlap heavily), so that most DFAs stay small.
const DFA_SIZE_LIMITS: [usize; 2] = [256 << 10, 2 << 20];
/// How many times a pattern may be split into alternatives on the way down.
const MAX_SPLITS: usize = 6;
/// Most DFAs and bytes one pattern may embed; a pattern over either is left to a lazy DFA.
/// Every built-in pattern fits (a test holds them to it): a hit scans, it never compiles. Alternatives are gated by their own literals, so a
/// text is scanned only by the few whose literals it holds.
const MAX_DFAS: usize = 96;
const MAX_PATTERN_BYTES: usize = 4 << 20;

/// A set of bytes, as `rules::builtin::ByteSet`.
type ByteSet = [u64; 4];

/// One embedded DFA, as `rules::builtin::Piece`.
pub struct Piece {
    pub span: (u32, u32),
    pub dense: bool,
    pub gap: Gap,
    /// For the first piece of an alternative's chain: literal sets every text the alternative
    /// matches holds a literal of each of (its prefilter literals and conjuncts, as a rule's),
    /// each literal with what may stand on its sides, so that the search skips alternatives
    /// whose literals a text lacks.
    pub gate: Vec<Vec<(Vec<u8>, super::literals::Sides)>>,
}

/// How a piece follows the one before it, as `rules::builtin::Gap`.
#[derive(Clone, Copy)]
pub enum Gap {
    Start,
    Star(ByteSet),
    OptStar(ByteSet, ByteSet),
}

/// The serialized DFAs of every built-in pattern, back to back, each starting at a multiple of
/// 8 bytes (the blob itself is embedded 8-aligned; a sparse DFA needs no alignment, a dense one
/// needs 4).
#[derive(Default)]
pub struct Blob {
    pub bytes: Vec<u8>,
    patterns: usize,
    count: usize,
    /// Patterns cut into several DFAs: how many, how many of them in chains, and the pattern.
    split: Vec<(usize, usize, usize, String)>,
    lazy: Vec<String>,
    /// How many of the DFAs are dense.
    dense: usize,
    /// What the DFAs would take all sparse.
    sparse_bytes: usize,
    /// Embed every DFA sparse (for tests of the sparse search).
    pub sparse_only: bool,
    /// Every pattern's pieces, in order.
    pub pieces: Vec<Piece>,
    /// Embed the pattern being added sparse (it is cut into many DFAs).
    force_sparse: bool,
}

/// Most DFAs a pattern may be cut into and still have dense ones.
const DENSE_MAX_PIECES: usize = 8;

impl Blob {
    /// Determinizes `pattern` as rules match at run time (`rules::Pattern`: bytes, ASCII classes,
    /// no captures, earliest match) and appends its DFAs. Returns the range of `pieces` that
    /// holds its pieces (empty for a pattern left to a lazy DFA), or why it does not fit.
    pub fn add(&mut self, pattern: &str) -> Result<(usize, usize), String> {
        let hir = super::literals::check_syntax(pattern)?;
        let mut pieces = Vec::new();
        let (len, count, dense, sparse) = (self.bytes.len(), self.count, self.dense, self.sparse_bytes);
        self.patterns += 1;
        let mut result = Err(String::new());
        // A pattern cut into many DFAs is embedded sparse: dense DFAs are larger, and speed
        // matters most for the patterns whose one DFA is searched on many texts.
        let attempts = DFA_SIZE_LIMITS.iter().flat_map(|&l| [(l, false), (l, true)]);
        for (limit, sparse_many) in attempts {
            if sparse_many && !result.as_ref().is_ok_and(|_| pieces.len() > DENSE_MAX_PIECES) {
                if result.is_ok() {
                    break;
                }
                continue;
            }
            self.force_sparse = sparse_many;
            pieces.clear();
            self.bytes.truncate(len);
            (self.count, self.dense, self.sparse_bytes) = (count, dense, sparse);
            result = self.add_hir(&hir, MAX_SPLITS, limit, &mut pieces).and_then(|()| {
                // Measured sparse: a DFA embedded dense costs more bytes, and buys speed.
                let size = self.sparse_bytes - sparse;
                if pieces.len() > MAX_DFAS || size > MAX_PATTERN_BYTES {
                    return Err(format!("{} DFAs, {} KiB", pieces.len(), size >> 10));
                }
                Ok(())
            });
            if result.is_ok() && (sparse_many || pieces.len() <= DENSE_MAX_PIECES) {
                break;
            }
        }
        self.force_sparse = false;
        if let Err(e) = result {
            // Left to a lazy DFA at run time, as user rules are (a test fails on it).
            self.bytes.truncate(len);
            (self.count, self.dense, self.sparse_bytes) = (count, dense, sparse);
            self.lazy.push(format!("{e}: {pattern}"));
            return Ok((self.pieces.len(), self.pieces.len()));
        }
        let size = self.bytes.len() - len;
        if pieces.len() > 1 {
            let chained = pieces.iter().filter(|p| !matches!(p.gap, Gap::Start)).count();
            self.split.push((pieces.len(), chained, size, pattern.to_string()));
        }
        let first = self.pieces.len();
        self.pieces.extend(pieces);
        Ok((first, self.pieces.len()))
    }

    /// Appends `hir` as whichever is smallest of one DFA, a chain cut at its gaps, or its
    /// alternatives (each of them built the same way).
    fn add_hir(&mut self, hir: &Hir, splits: usize, limit: usize, pieces: &mut Vec<Piece>) -> Result<(), String> {
        for (dfa, gap, gate) in build(hir, splits, limit)? {
            self.push(dfa, gap, pieces);
            pieces.last_mut().expect("pushed").gate = gate;
        }
        Ok(())
    }

    /// `pattern` cut into its alternatives, each cut into a chain at its gaps where it has
    /// any, whatever their sizes: for tests of the chain search on small patterns.
    #[allow(dead_code)]
    pub fn add_cut(&mut self, pattern: &str) -> Result<Vec<Piece>, String> {
        let hir = super::literals::check_syntax(pattern)?;
        let mut pieces = Vec::new();
        for alt in alternatives(&hir).unwrap_or_else(|| vec![hir]) {
            let chain = chain(&alt).unwrap_or_else(|| vec![(Gap::Start, alt)]);
            let last = chain.len() - 1;
            for (i, (gap, part)) in chain.iter().enumerate() {
                self.push(determinize(part, i > 0, i == last, DFA_SIZE_LIMITS[0])?, *gap, &mut pieces);
            }
        }
        Ok(pieces)
    }

    fn push(&mut self, dfa: Dfa, gap: Gap, pieces: &mut Vec<Piece>) {
        while !self.bytes.len().is_multiple_of(8) {
            self.bytes.push(0);
        }
        self.sparse_bytes += dfa.sparse.len();
        let dense = dfa.dense.is_some() && !self.sparse_only && !self.force_sparse;
        let bytes = if dense { dfa.dense.unwrap_or_default() } else { dfa.sparse };
        pieces.push(Piece { span: (self.bytes.len() as u32, bytes.len() as u32), dense, gap, gate: Vec::new() });
        self.bytes.extend_from_slice(&bytes);
        self.count += 1;
        self.dense += usize::from(dense);
    }

    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} patterns, {} DFAs ({} dense), {} bytes ({} if all were sparse); {} patterns left to a lazy DFA\n",
            self.patterns,
            self.count,
            self.dense,
            self.bytes.len(),
            self.sparse_bytes,
            self.lazy.len()
        );
        for p in &self.lazy {
            let _ = writeln!(out, "lazy: {p}");
        }
        for (n, chained, size, p) in &self.split {
            let _ = writeln!(out, "cut into {n} DFAs ({chained} chained), {} KiB: {p}", size >> 10);
        }
        out
    }
}

/// A DFA, or DFAs with the gaps before them (and an alternative's literals on its first), in
/// the order they are embedded.
type Built = Vec<(Dfa, Gap, Vec<Vec<(Vec<u8>, super::literals::Sides)>>)>;

/// One piece's DFA, serialized: sparse, and dense too where that is small enough to embed.
#[derive(Clone)]
pub struct Dfa {
    sparse: Vec<u8>,
    dense: Option<Vec<u8>>,
}

/// Largest dense DFA embedded. A dense DFA's transition is one table lookup; a sparse one's is
/// a search through the state's byte ranges, several times the instructions per byte. Dense
/// DFAs are larger, so only the small ones are embedded dense.
const DENSE_LIMIT: usize = 32 << 10;

/// The smallest way found to embed `hir` (see `Blob::add_hir`): one DFA where it fits in
/// `MAX_PATTERN_BYTES`; else a chain cut at its gaps, if smaller; alternatives only where the
/// pattern does not determinize at all (exploring more made the build script take minutes).
fn build(hir: &Hir, splits: usize, limit: usize) -> Result<Built, String> {
    let size = |b: &Built| b.iter().map(|(dfa, _, _)| dfa.sparse.len()).sum::<usize>();
    let whole = determinize(hir, false, true, limit).map(|bytes| vec![(bytes, Gap::Start, Vec::new())]);
    if whole.as_ref().is_ok_and(|w| size(w) <= MAX_PATTERN_BYTES) {
        return whole;
    }
    if let Some(chain) = chain(hir) {
        let last = chain.len() - 1;
        let built: Result<Built, String> = chain
            .iter()
            .enumerate()
            .map(|(i, (gap, part))| Ok((determinize(part, i > 0, i == last, limit)?, *gap, Vec::new())))
            .collect();
        if let Ok(built) = built
            && !whole.as_ref().is_ok_and(|w| size(w) <= size(&built))
        {
            return Ok(built);
        }
    }
    let Err(e) = whole else { return whole };
    let parts = (splits > 0).then(|| alternatives(hir)).flatten().ok_or(e)?;
    let mut all = Vec::new();
    for part in &parts {
        let mut built = build(part, splits - 1, limit)?;
        // A chain that an alternative split further down did not gate is gated by this one.
        let pre = super::literals::prefilter_with_sides(part);
        let plain = pre.as_ref().map(|(anchored, lits, _)| (*anchored, lits.clone()));
        let mut sets = super::literals::conjuncts_with_sides(plain.as_ref(), part);
        sets.extend(pre.map(|(_, lits, sides)| lits.into_iter().zip(sides).collect()));
        for (_, gap, gate) in &mut built {
            if matches!(gap, Gap::Start) && gate.is_empty() {
                gate.clone_from(&sets);
            }
        }
        all.extend(built);
    }
    Ok(all)
}

/// A sparse DFA for `hir`, serialized for the target's byte order, if it fits the limit.
/// A piece after the first of a chain is searched anchored where the piece before it ended; a
/// piece other than the last reports every match end (`MatchKind::All`), the last only whether
/// there is one.
fn determinize(hir: &Hir, anchored: bool, last: bool, limit: usize) -> Result<Dfa, String> {
    use regex_automata::MatchKind;
    use regex_automata::dfa::{StartKind, dense};
    use regex_automata::nfa::thompson::{self, WhichCaptures};
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().utf8(false).which_captures(WhichCaptures::None))
        .build_from_hir(hir)
        .map_err(|e| e.to_string())?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .start_kind(if anchored { StartKind::Anchored } else { StartKind::Unanchored })
                .match_kind(if last { MatchKind::LeftmostFirst } else { MatchKind::All })
                .minimize(true)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(16 * limit)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| format!("does not determinize within {} KiB: {e}", limit >> 10))?;
    let sparse = dfa.to_sparse().map_err(|e| e.to_string())?;
    // The target's byte order (a build script may run on another machine); outside a build
    // script (tests), this machine's.
    let big = std::env::var("CARGO_CFG_TARGET_ENDIAN").map_or(cfg!(target_endian = "big"), |e| e == "big");
    let (dense, _) = if big { dfa.to_bytes_big_endian() } else { dfa.to_bytes_little_endian() };
    Ok(Dfa {
        sparse: if big { sparse.to_bytes_big_endian() } else { sparse.to_bytes_little_endian() },
        dense: Some(dense).filter(|d| d.len() <= DENSE_LIMIT),
    })
}

/// `hir` cut at the gaps of its top-level concatenation into a chain: the part before the first
/// gap, then each gap with the part after it (the gap is determinized with its part, and says at
/// run time which match ends of the part before need not be tried). `None` without a gap
/// between two non-empty parts.
fn chain(hir: &Hir) -> Option<Vec<(Gap, Hir)>> {
    let mut items = Vec::new();
    flatten(hir, &mut items);
    let mut cuts: Vec<(usize, Gap)> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        // A leading gap adds nothing to an unanchored search and a trailing one matches the
        // empty text: neither is a cut.
        if let Some(gap) = gap(item).filter(|_| i > 0 && i + 1 < items.len())
            && cuts.last().is_none_or(|(at, _)| at + 1 < i)
        {
            cuts.push((i, gap));
        }
    }
    if cuts.is_empty() {
        return None;
    }
    let mut chain = vec![(Gap::Start, Hir::concat(items[..cuts[0].0].to_vec()))];
    for (k, &(at, gap)) in cuts.iter().enumerate() {
        let end = cuts.get(k + 1).map_or(items.len(), |c| c.0);
        chain.push((gap, Hir::concat(items[at..end].to_vec())));
    }
    Some(chain)
}

/// The items of a concatenation, through groups.
fn flatten(hir: &Hir, items: &mut Vec<Hir>) {
    match hir.kind() {
        HirKind::Concat(subs) => subs.iter().for_each(|s| flatten(s, items)),
        HirKind::Capture(c) if matches!(c.sub.kind(), HirKind::Concat(_)) => flatten(&c.sub, items),
        _ => items.push(hir.clone()),
    }
}

/// Whether `hir` is a gap: `C*` for a class `C`, or `(C*S)?` for classes `C` and `S`.
fn gap(hir: &Hir) -> Option<Gap> {
    match hir.kind() {
        HirKind::Capture(c) => gap(&c.sub),
        HirKind::Repetition(r) if r.min == 0 && r.max.is_none() => Some(Gap::Star(class(&r.sub)?)),
        HirKind::Repetition(r) if r.min == 0 && r.max == Some(1) => {
            let mut items = Vec::new();
            flatten(&r.sub, &mut items);
            match (items.as_slice(), items.first().and_then(gap)) {
                ([_, s], Some(Gap::Star(c))) => Some(Gap::OptStar(c, class(s)?)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The bytes of a one-byte class.
fn class(hir: &Hir) -> Option<ByteSet> {
    let mut set = [0u64; 4];
    let mut add = |lo: u32, hi: u32| {
        (lo..=hi).for_each(|b| set[b as usize >> 6] |= 1 << (b & 63));
    };
    match hir.kind() {
        HirKind::Capture(c) => return class(&c.sub),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().for_each(|r| add(r.start().into(), r.end().into())),
        HirKind::Class(Class::Unicode(c)) if c.ranges().iter().all(|r| (r.end() as u32) < 0x80) => {
            c.ranges().iter().for_each(|r| add(r.start() as u32, r.end() as u32))
        }
        _ => return None,
    }
    Some(set)
}

/// The alternatives of `hir`, for a pattern too large for one DFA: of a top-level alternation,
/// or of a concatenation distributed over its largest part that is one (`a(b|c)d` is
/// `abd|acd`). Their union matches exactly the texts `hir` matches.
fn alternatives(hir: &Hir) -> Option<Vec<Hir>> {
    match hir.kind() {
        HirKind::Alternation(subs) => Some(subs.clone()),
        HirKind::Capture(c) => alternatives(&c.sub),
        HirKind::Concat(subs) => {
            let (i, alts) = subs
                .iter()
                .enumerate()
                .filter_map(|(i, sub)| Some((i, alternatives(sub)?)))
                .max_by_key(|(i, _)| nodes(&subs[*i]))?;
            let distributed = alts.into_iter().map(|alt| {
                let mut parts = subs.clone();
                parts[i] = alt;
                Hir::concat(parts)
            });
            Some(distributed.collect())
        }
        _ => None,
    }
}

/// How many nodes a syntax tree has: its size, to choose what to split.
fn nodes(hir: &Hir) -> usize {
    1 + match hir.kind() {
        HirKind::Alternation(subs) | HirKind::Concat(subs) => subs.iter().map(nodes).sum(),
        HirKind::Capture(c) => nodes(&c.sub),
        HirKind::Repetition(r) => nodes(&r.sub),
        _ => 0,
    }
}
