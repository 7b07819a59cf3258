//! What the agent is told when a command is not run: in plain words it cannot misread, or as
//! one JSON object with `--json`. Written to stderr; stdout belongs to the command.

use serde_json::json;

use crate::decide::{Decision, Verdict};
use crate::rules::Policy;
use crate::term::escape;

const INSTRUCTION: &str = "Do not run this command again, or any variation of it, to get around this. Tell the user what you wanted to do and ask them to run it or approve it.";

/// Who or what decided not to run the command.
pub fn decided_by(decision: &Decision) -> &'static str {
    match decision.verdict {
        Verdict::Deny => "a deny rule: this command is never run by cmdguard",
        _ => {
            "the rules: it needs approval by the user, and this cmdguard has no way to ask (interactive approval is not available in this version)"
        }
    }
}

/// The refusal message for stderr.
pub fn refusal(command: &str, policy: &Policy, decision: &Decision, json: bool) -> String {
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
            "decided_by": decided_by(decision),
            "rules": rules,
            "concerns": concerns,
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
    out.push_str(&format!("  decided by: {}\n", decided_by(decision)));
    out.push_str(INSTRUCTION);
    out
}

pub fn action_name(a: crate::rules::Action) -> &'static str {
    match a {
        crate::rules::Action::Ask => "ask",
        crate::rules::Action::Deny => "deny",
    }
}
