//! `cmdguard check`: decide only, never run. Exit 0 pass/allow, 1 ask, 2 deny; `--batch` reads
//! one command per line and writes one JSON object per line. A reader that goes away early
//! (`check … | head -c0`) is no error: the exit status still carries the verdict.

use std::io::{BufRead, BufWriter, Write};

use anyhow::Result;
use serde::Serialize;

use crate::cli::{CheckArgs, Global};
use crate::decide::{Decision, Verdict, decide};
use crate::rules::Policy;
use crate::shell::{Dialect, analyze_script_in};
use crate::term::escape;

pub fn run(global: &Global, args: &CheckArgs) -> Result<u8> {
    if args.batch {
        let policy = super::policy(global)?;
        notices(&policy);
        let dialect = crate::shell::Dialect::of_path(&super::shell(global, &policy)?);
        return batch(&policy, dialect);
    }
    let job = super::job(&args.command)?;
    let policy = super::policy(global)?;
    let decision = decide(&policy, &job.analyze(&super::shell(global, &policy)?));
    let command = job.text();
    let text = if global.json {
        let mut rec = serde_json::to_value(record(&command, &policy, &decision))?;
        if !policy.notices.is_empty() {
            rec["notices"] = serde_json::json!(policy.notices);
        }
        format!("{rec}\n")
    } else {
        notices(&policy);
        human(&command, &policy, &decision)
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written?,
    }
    Ok(match decision.verdict {
        Verdict::Pass | Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    })
}

/// Files whose loosening is ignored, one line each, on stderr (stdout keeps its format).
fn notices(policy: &Policy) {
    for n in &policy.notices {
        eprintln!("cmdguard: note: {n}");
    }
}

/// One verdict as JSON: the command, the verdict, and the ids of the rules that decided it.
#[derive(Serialize)]
struct Record<'a> {
    command: &'a str,
    verdict: &'static str,
    rules: Vec<&'a str>,
}

fn record<'a>(command: &'a str, policy: &'a Policy, decision: &Decision) -> Record<'a> {
    Record { command, verdict: decision.verdict.name(), rules: decision.rule_ids(policy) }
}

fn human(command: &str, policy: &Policy, decision: &Decision) -> String {
    let mut out = format!("{}: {}\n", decision.verdict.name(), escape(command));
    let mut seen = Vec::new();
    for h in &decision.hits {
        if seen.contains(&h.rule) {
            continue;
        }
        seen.push(h.rule);
        let r = &policy.rules[h.rule];
        match h.allowed_by {
            Some(a) => out.push_str(&format!(
                "  {} ({}) allowed by {} at {}\n",
                r.id,
                crate::report::action_name(r.action),
                escape(&policy.allows[a].describe()),
                escape(&policy.allows[a].origin.to_string())
            )),
            None => {
                out.push_str(&format!("  {} ({}): {}\n", r.id, crate::report::action_name(r.action), escape(&r.reason)))
            }
        }
    }
    for c in &decision.concerns {
        out.push_str(&format!("  {}: {}\n", c.id, escape(&c.detail)));
    }
    out
}

fn batch(policy: &Policy, dialect: Dialect) -> Result<u8> {
    match write_batch(policy, dialect) {
        // The reader went away (`check --batch | head`): it wanted no more lines.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => Ok(other.map(|()| 0)?),
    }
}

fn write_batch(policy: &Policy, dialect: Dialect) -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    for line in stdin.split(b'\n') {
        let line = line?;
        let command = String::from_utf8_lossy(&line);
        let command = command.strip_suffix('\r').unwrap_or(&command);
        let decision = decide(policy, &analyze_script_in(command, dialect));
        serde_json::to_writer(&mut out, &record(command, policy, &decision))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
