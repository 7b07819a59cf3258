//! Analysis × policy → verdict. Each unit (segment, pipeline, line) is judged on its own:
//! deny > allow > ask > pass; the whole command takes the strictest unit. An allow entry covers
//! only the unit it matches, at the place it was written for (`context`, see `place`), and never
//! a deny. What the analysis could not read asks.

pub mod place;

use crate::rules::{Action, Policy, Target};
use crate::shell::{Analysis, IssueKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Pass,
    Allow,
    Ask,
    Deny,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        }
    }
}

/// Which text of the analysis a hit is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Segment(usize),
    Pipeline(usize),
    Line(usize),
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub rule: usize,
    pub unit: Unit,
    /// Index of the allow entry that let this hit through, if any (never for deny rules).
    pub allowed_by: Option<usize>,
}

/// Something the analysis could not read, turned into an ask with a pseudo-rule id.
#[derive(Debug, Clone)]
pub struct Concern {
    pub id: &'static str,
    pub detail: String,
}

#[derive(Debug, Clone)]
pub struct Decision {
    pub verdict: Verdict,
    pub hits: Vec<Hit>,
    pub concerns: Vec<Concern>,
}

impl Decision {
    /// Ids of the rules that decide the verdict (allowed hits left out), concerns included.
    pub fn rule_ids<'p>(&self, policy: &'p Policy) -> Vec<&'p str> {
        let mut ids = self.hit_ids(policy);
        for id in self.concerns.iter().map(|c| c.id) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// Ids of the rules whose hits decide the verdict (allowed hits left out), without concerns.
    pub fn hit_ids<'p>(&self, policy: &'p Policy) -> Vec<&'p str> {
        self.ids_where(policy, false)
    }

    /// Ids of the rules whose hits an allow entry let through.
    pub fn allowed_ids<'p>(&self, policy: &'p Policy) -> Vec<&'p str> {
        self.ids_where(policy, true)
    }

    fn ids_where<'p>(&self, policy: &'p Policy, allowed: bool) -> Vec<&'p str> {
        let mut ids: Vec<&str> = Vec::new();
        for h in self.hits.iter().filter(|h| h.allowed_by.is_some() == allowed) {
            let id = policy.rules[h.rule].id.as_ref();
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }
}

pub fn unit_text(analysis: &Analysis, unit: Unit) -> &str {
    match unit {
        Unit::Segment(i) => &analysis.segments[i].text,
        Unit::Pipeline(i) => &analysis.pipelines[i],
        Unit::Line(i) => &analysis.lines[i],
    }
}

pub fn decide(policy: &Policy, analysis: &Analysis) -> Decision {
    decide_with(policy, analysis, &mut Scratch::default())
}

/// Buffers `decide` fills on every call, kept across calls by a long run (`check --batch`).
#[derive(Default)]
pub struct Scratch {
    /// Per distinct text of the command's units: the rules the prefilter picks, by target.
    candidates: Vec<[Vec<usize>; 3]>,
    /// Per distinct text: the first unit that has it, and the targets of the units that have it
    /// (bit `1 << Target as u8`).
    texts: Vec<(Unit, u8)>,
    /// Per unit, in order: its distinct text (an index of `texts`).
    slots: Vec<usize>,
}

/// Units with more texts than this find repeated texts by hashing, not by comparing.
const FEW_TEXTS: usize = 16;

impl Scratch {
    /// Groups the units by text, so that each distinct text is scanned once, for the targets of
    /// the units that have it (a command's segment, pipeline and line are often one text).
    fn group<'a>(&mut self, analysis: &'a Analysis, units: impl Iterator<Item = (Unit, Target)>) {
        self.texts.clear();
        self.slots.clear();
        let mut many: Option<std::collections::HashMap<&'a str, usize>> = None;
        for (unit, target) in units {
            let text = unit_text(analysis, unit);
            let found = match &mut many {
                Some(map) => map.get(text).copied(),
                None => self.texts.iter().position(|&(u, _)| unit_text(analysis, u) == text),
            };
            let slot = found.unwrap_or_else(|| {
                self.texts.push((unit, 0));
                if let Some(map) = &mut many {
                    map.insert(text, self.texts.len() - 1);
                }
                self.texts.len() - 1
            });
            self.texts[slot].1 |= 1 << target as u8;
            self.slots.push(slot);
            if many.is_none() && self.texts.len() > FEW_TEXTS {
                many = Some(self.texts.iter().enumerate().map(|(i, &(u, _))| (unit_text(analysis, u), i)).collect());
            }
        }
    }
}

/// `decide`, with buffers kept from an earlier call.
pub fn decide_with(policy: &Policy, analysis: &Analysis, scratch: &mut Scratch) -> Decision {
    let mut hits = Vec::new();
    let mut verdict = Verdict::Pass;
    let places = if policy.allows.is_empty() { Vec::new() } else { place::segment_places(analysis) };
    let units = || {
        (0..analysis.segments.len())
            .map(|i| (Unit::Segment(i), Target::Segment))
            .chain((0..analysis.pipelines.len()).map(|i| (Unit::Pipeline(i), Target::Pipeline)))
            .chain((0..analysis.lines.len()).map(|i| (Unit::Line(i), Target::Line)))
    };
    scratch.group(analysis, units());
    if scratch.candidates.len() < scratch.texts.len() {
        scratch.candidates.resize_with(scratch.texts.len(), Default::default);
    }
    for (&(unit, targets), out) in scratch.texts.iter().zip(&mut scratch.candidates) {
        policy.candidates_into(unit_text(analysis, unit), targets, out);
    }
    // The byte-pair summary of the text last tried: it serves every rule tried on that text.
    let mut summarized = usize::MAX;
    let mut hay = crate::rules::Haystack::new("");
    for ((unit, target), &slot) in units().zip(&scratch.slots) {
        let text = unit_text(analysis, unit);
        let segment = match unit {
            Unit::Segment(i) => Some(&analysis.segments[i]),
            _ => None,
        };
        let first = hits.len();
        let candidates = &scratch.candidates[slot];
        if summarized != slot && !candidates[target as usize].is_empty() {
            hay = crate::rules::Haystack::new(text);
            summarized = slot;
        }
        for &i in &candidates[target as usize] {
            if policy.rules[i].fires_in(&hay, segment) {
                hits.push(Hit { rule: i, unit, allowed_by: None });
            }
        }
        // A word not known statically may be `--`, after which `--help` is one more operand
        // (`kubectl delete ns prod "$x" --help` with `x=--` deletes prod).
        if hits.len() > first && segment.is_some_and(|s| s.is_static && s.is_help()) {
            // `kubectl delete --help` prints text: only a deny still applies (docs/rules.md).
            let mut i = 0;
            hits.retain(|h| {
                i += 1;
                i <= first || policy.rules[h.rule].action == Action::Deny
            });
        }
        let unit_hits = &mut hits[first..];
        if unit_hits.is_empty() {
            continue;
        }
        let possible = match unit {
            Unit::Segment(i) => analysis.is_possible(Some(i), None, None),
            Unit::Pipeline(i) => analysis.is_possible(None, Some(i), None),
            Unit::Line(i) => analysis.is_possible(None, None, Some(i)),
        };
        // What an unknown program's operand may carry asks: it may be plain data to it.
        let unit_verdict = if possible {
            Verdict::Ask
        } else if unit_hits.iter().any(|h| policy.rules[h.rule].action == Action::Deny) {
            Verdict::Deny
        } else if let Some(a) = policy.allows.iter().enumerate().position(|(i, a)| {
            a.covers(text) && policy.allow_context(i).covers(place::unit_place(analysis, &places, unit).as_deref())
        }) {
            unit_hits.iter_mut().for_each(|h| h.allowed_by = Some(a));
            Verdict::Allow
        } else {
            Verdict::Ask
        };
        verdict = verdict.max(unit_verdict);
    }
    let concerns: Vec<Concern> = analysis
        .issues
        .iter()
        .map(|i| Concern {
            id: match i.kind {
                IssueKind::Unparseable => "core.unparseable",
                IssueKind::TooComplex => "core.too-complex",
                IssueKind::Dynamic => "core.dynamic",
            },
            detail: i.detail.clone(),
        })
        .collect();
    if !concerns.is_empty() {
        verdict = verdict.max(Verdict::Ask);
    }
    Decision { verdict, hits, concerns }
}
