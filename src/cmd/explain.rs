//! `cmdguard explain`: the whole analysis, step by step: the normalized text, each segment with
//! its unwrapped wrappers and origin, pipelines, every rule hit with the part that matched, and
//! the verdict, and for a command that asks or is denied, what it would destroy here.

use std::fmt::Write as _;

use anyhow::Result;
use serde_json::json;

use crate::cli::{CommandArgs, Global};
use crate::decide::{Decision, Unit, decide, unit_text};
use crate::exec::Job;
use crate::rules::Policy;
use crate::shell::Analysis;
use crate::term::escape;

pub fn run(global: &Global, args: &CommandArgs) -> Result<u8> {
    let job = super::job(args)?;
    let policy = super::policy(global)?;
    let analysis = job.analyze(&super::shell(global, &policy)?);
    let decision = decide(&policy, &analysis);
    if global.json {
        super::print(&format!("{}\n", trace_json(&policy, &job, &analysis, &decision)))?;
    } else {
        super::print(&trace(&policy, &job, &analysis, &decision))?;
        if let Some(stake) = crate::blast::stake(&policy, &analysis, &decision, &super::cwd()?) {
            super::print(&format!("at stake:    {}\n", escape(&stake)))?;
        }
    }
    Ok(0)
}

/// The same facts as `trace`, as one JSON object; a hit's `span` is the byte range of `text`
/// that its rule matched.
pub fn trace_json(policy: &Policy, job: &Job, analysis: &Analysis, decision: &Decision) -> serde_json::Value {
    let places = crate::decide::place::segment_places(analysis);
    let segments: Vec<_> = analysis
        .segments
        .iter()
        .zip(&places)
        .map(|(s, place)| json!({"text": s.text, "place": place, "from": s.origin, "wrappers": s.wrappers, "notes": s.notes}))
        .collect();
    let hits: Vec<_> = decision
        .hits
        .iter()
        .map(|h| {
            let r = &policy.rules[h.rule];
            let text = unit_text(analysis, h.unit);
            let (start, end) = r.span(text).unwrap_or((0, 0));
            json!({
                "rule": r.id, "action": crate::report::action_name(r.action), "unit": unit_name(h.unit),
                "text": text, "span": [start, end], "matched": String::from_utf8_lossy(&text.as_bytes()[start..end]),
                "allowed_by": h.allowed_by.map(|a| policy.allows[a].describe()),
            })
        })
        .collect();
    let concerns: Vec<_> = decision.concerns.iter().map(|c| json!({"id": c.id, "detail": c.detail})).collect();
    json!({
        "command": job.text(), "normalized": analysis.lines.first(), "segments": segments,
        "pipelines": analysis.pipelines, "nested": analysis.lines.get(1..).unwrap_or_default(),
        "hits": hits, "concerns": concerns, "notices": policy.notices, "verdict": decision.verdict.name(),
    })
}

fn unit_name(unit: Unit) -> String {
    match unit {
        Unit::Segment(i) => format!("segment [{}]", i + 1),
        Unit::Pipeline(i) => format!("pipeline [{}]", i + 1),
        Unit::Line(0) => "the whole line".to_string(),
        Unit::Line(i) => format!("nested script {i}"),
    }
}

/// The analysis trace, as `explain` prints it and the prompt's `e` shows it.
pub fn trace(policy: &Policy, job: &Job, analysis: &Analysis, decision: &Decision) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "command:     {}", escape(&job.text()));
    if let Some(line) = analysis.lines.first() {
        let _ = writeln!(out, "normalized:  {}", escape(line));
    }
    let _ = writeln!(out, "\nsegments (simple commands that would run):");
    let places = crate::decide::place::segment_places(analysis);
    for (i, s) in analysis.segments.iter().enumerate() {
        let _ = writeln!(out, "  [{}] {}", i + 1, escape(&s.text));
        // What an allow entry's `context` names to cover this segment.
        if !places[i].is_empty() {
            let _ = writeln!(out, "      place:    {}", escape(&places[i]));
        }
        if !s.origin.is_empty() {
            let _ = writeln!(out, "      from:     {}", escape(&s.origin));
        }
        if !s.wrappers.is_empty() {
            let _ = writeln!(out, "      wrappers: {}", s.wrappers.join(", "));
        }
        if let Some(from) = &s.possible {
            let _ = writeln!(
                out,
                "      guessed:  a command inside {} (a program on no list in cmdguard's catalogue): a hit here asks, never denies",
                escape(from)
            );
        }
        if let Some(list) = crate::shell::program_list(&s.words[0]) {
            let _ = writeln!(out, "      program:  {}", escape(&list));
        }
        for n in &s.notes {
            let _ = writeln!(out, "      note:     {}", escape(n));
        }
    }
    if !analysis.pipelines.is_empty() {
        let _ = writeln!(out, "\npipelines:");
        for (i, p) in analysis.pipelines.iter().enumerate() {
            let _ = writeln!(out, "  [{}] {}", i + 1, escape(p));
        }
    }
    if analysis.lines.len() > 1 {
        let _ = writeln!(out, "\nnested scripts:");
        for l in &analysis.lines[1..] {
            let _ = writeln!(out, "  {}", escape(l));
        }
    }
    let _ = writeln!(out, "\nrule hits:");
    if decision.hits.is_empty() && decision.concerns.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for h in &decision.hits {
        let r = &policy.rules[h.rule];
        let text = unit_text(analysis, h.unit);
        let unit = unit_name(h.unit);
        let (start, end) = r.span(text).unwrap_or((0, 0));
        let matched = String::from_utf8_lossy(&text.as_bytes()[start..end]);
        let _ = writeln!(
            out,
            "  {} ({}) on {unit}: matched `{}`",
            r.id,
            crate::report::action_name(r.action),
            escape(&matched)
        );
        let _ = writeln!(out, "      rule at {}: {}", escape(&r.origin.to_string()), escape(&r.reason));
        if let Some(a) = h.allowed_by {
            let (allow, at) = (&policy.allows[a], policy.allows[a].origin.to_string());
            let _ = writeln!(out, "      allowed by {} at {}", escape(&allow.describe()), escape(&at));
        }
    }
    for c in &decision.concerns {
        let _ = writeln!(out, "  {}: {}", c.id, escape(&c.detail));
    }
    for n in &policy.notices {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = writeln!(out, "\nverdict: {}", decision.verdict.name());
    out
}
