//! What the agent is told when a command is not run: in plain words it cannot misread, or as
//! one JSON object with `--json`. Written to stderr; stdout belongs to the command.

use serde_json::json;

use crate::approval::audit::DecidedBy;
use crate::decide::Decision;
use crate::rules::Policy;
use crate::term::escape;

pub const INSTRUCTION: &str = "Do not run this command again, or any variation of it, to get around this. Tell the user what you wanted to do and ask them to run it or approve it.";

/// Why a command was not run.
pub struct NotRun<'a> {
    pub by: DecidedBy,
    /// More about what happened (why there was no terminal, which signal).
    pub detail: Option<&'a str>,
    /// The user's own words for the agent.
    pub reason: Option<&'a str>,
    /// How a human can still run it (given when nobody could be asked).
    pub hint: Option<&'a str>,
}

impl NotRun<'_> {
    pub fn by(by: DecidedBy) -> NotRun<'static> {
        NotRun { by, detail: None, reason: None, hint: None }
    }
}

/// Who or what decided not to run the command, in words.
pub fn decided_by(not_run: &NotRun<'_>) -> String {
    let detail = not_run.detail.unwrap_or("");
    match not_run.by {
        DecidedBy::Rule => "a deny rule: this command is never run by cmdguard".into(),
        DecidedBy::Prompt => "the user, at the prompt: they denied it".into(),
        DecidedBy::Timeout => "nobody answered the approval prompt in time, so it was denied".into(),
        DecidedBy::NoTerminal => format!("nobody could be asked ({detail}); this command needs a human's approval"),
        DecidedBy::Signal => format!("cmdguard was stopped while waiting for approval ({detail}), so it was denied"),
        DecidedBy::Queue => format!("the user, from another terminal ({detail}): they denied it"),
        DecidedBy::SessionGrant
        | DecidedBy::AllowEntry
        | DecidedBy::Cleanup
        | DecidedBy::ApprovalCode
        | DecidedBy::Audit
        | DecidedBy::Undo => "an approval (this message should not appear)".into(),
    }
}

/// Characters of a command a refusal shows in full; a longer one is cut in the middle.
pub const MAX_SHOWN: usize = 300;

/// `command` as a refusal shows it: whole if short, else its start, the part a rule matched (the
/// reason it stopped) and its end, each cut marked with how much was left out.
pub fn bounded_command(command: &str, policy: &Policy, decision: &Decision) -> String {
    if command.chars().count() <= MAX_SHOWN {
        return command.to_string();
    }
    bounded_around(command, matched_spans(command, policy, decision).first().copied(), MAX_SHOWN)
}

/// `command` cut to about `max` characters around `span` (byte range), keeping both ends.
pub fn bounded_around(command: &str, span: Option<(usize, usize)>, max: usize) -> String {
    let floor = |mut i: usize| {
        while !command.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    if command.len() <= max {
        return command.to_string();
    }
    let (head, tail) = (floor(max / 4), floor(command.len() - max / 5));
    let cut = |from: usize, to: usize| format!(" …({} bytes)… ", to - from);
    match span {
        Some((s, e)) if s > head && e < tail => {
            let s2 = floor(s.saturating_sub(40).max(head));
            let e2 = ((e + 40).min(tail)..=tail).find(|i| command.is_char_boundary(*i)).unwrap_or(tail);
            let mut out = command[..head].to_string();
            if s2 > head {
                out.push_str(&cut(head, s2));
            }
            out.push_str(&command[s2..e2]);
            if tail > e2 {
                out.push_str(&cut(e2, tail));
            }
            out.push_str(&command[tail..]);
            out
        }
        _ => {
            let keep = floor(max * 2 / 3);
            format!("{}{}{}", &command[..keep], cut(keep, tail), &command[tail..])
        }
    }
}

/// Byte ranges of `command` that the rules which stopped it matched, at most one per rule.
pub fn matched_spans(command: &str, policy: &Policy, decision: &Decision) -> Vec<(usize, usize)> {
    let mut rules: Vec<usize> = decision.hits.iter().filter(|h| h.allowed_by.is_none()).map(|h| h.rule).collect();
    rules.dedup();
    rules.into_iter().filter_map(|r| match_in(policy, r, command)).filter(|(s, e)| e > s).collect()
}

/// Where rule `rule` matches in `command`: at its start or at the start of a command after a
/// separator (rules are written for one simple command, often anchored with `^`).
fn match_in(policy: &Policy, rule: usize, command: &str) -> Option<(usize, usize)> {
    let r = &policy.rules[rule];
    let starts = std::iter::once(0).chain(
        command
            .char_indices()
            .filter(|(_, c)| matches!(c, ';' | '&' | '|' | '(' | '\n' | '`' | '{'))
            .map(|(i, _)| i + 1),
    );
    starts.take(500).find_map(|at| {
        let rest = &command[at..];
        let skip = rest.len() - rest.trim_start().len();
        r.span(&rest[skip..]).map(|(s, e)| (at + skip + s, at + skip + e))
    })
}

/// The refusal message for stderr.
pub fn refusal(
    command: &str,
    policy: &Policy,
    decision: &Decision,
    json: bool,
    not_run: &NotRun<'_>,
    stake: Option<&str>,
) -> String {
    let shown = bounded_command(command, policy, decision);
    let command = shown.as_str();
    let hits: Vec<_> = decision.hits.iter().filter(|h| h.allowed_by.is_none()).collect();
    if json {
        let rules: Vec<_> = hits
            .iter()
            .map(|h| {
                let r = &policy.rules[h.rule];
                json!({"id": r.id, "action": action_name(r.action), "reason": r.reason, "tip": r.tip})
            })
            .collect();
        let concerns: Vec<_> = decision.concerns.iter().map(|c| json!({"id": c.id, "detail": c.detail})).collect();
        let obj = json!({
            "cmdguard": "not-run",
            "command": command,
            "verdict": decision.verdict.name(),
            "decided_by": not_run.by.name(),
            "decided_by_text": decided_by(not_run),
            "user_reason": not_run.reason,
            "how_to_run": not_run.hint,
            "rules": rules,
            "concerns": concerns,
            "at_stake": stake,
            "instruction": INSTRUCTION,
        });
        return obj.to_string();
    }
    let mut out = format!("cmdguard: NOT RUN: {}\n", escape(command));
    let mut seen = Vec::new();
    for h in hits {
        let r = &policy.rules[h.rule];
        if seen.contains(&h.rule) {
            continue;
        }
        seen.push(h.rule);
        out.push_str(&format!("  rule {} ({}): {}\n", r.id, action_name(r.action), escape(&r.reason)));
        if let Some(tip) = &r.tip {
            out.push_str(&format!("    safer: {}\n", escape(tip)));
        }
    }
    for c in &decision.concerns {
        out.push_str(&format!("  {}: {}\n", c.id, escape(&c.detail)));
    }
    if let Some(s) = stake {
        out.push_str(&format!("  at stake: {}\n", escape(s)));
    }
    out.push_str(&format!("  decided by: {}\n", decided_by(not_run)));
    if let Some(r) = not_run.reason {
        out.push_str(&format!("  the user's reason: {}\n", escape(r)));
    }
    if let Some(h) = not_run.hint {
        out.push_str(&format!("  how a human can run it: {}\n", escape(h)));
    }
    out.push_str(INSTRUCTION);
    out
}

pub fn action_name(a: crate::rules::Action) -> &'static str {
    match a {
        crate::rules::Action::Ask => "ask",
        crate::rules::Action::Deny => "deny",
    }
}
