//! `cmdguard log`: the audit log, filtered by session, age and verdict; `--json` passes the
//! records through as they are stored.

use std::io::Write;

use anyhow::{Result, bail};

use crate::approval::audit::{self, Record};
use crate::cli::{Global, LogArgs, LogVerdict};
use crate::state;
use crate::term::escape;

pub fn run(global: &Global, args: &LogArgs) -> Result<u8> {
    let since = match &args.since {
        None => None,
        Some(s) => Some(parse_since(s, state::now())?),
    };
    let session = global.session_key.as_deref().map(state::key_hash);
    let verdict = args.verdict.map(|v| match v {
        LogVerdict::Allow => "allow",
        LogVerdict::Ask => "ask",
        LogVerdict::Deny => "deny",
    });
    let path = state::dir()?.join(audit::FILE);
    let (records, bad) = audit::read_all(&path)?;
    let keep = |r: &Record| {
        since.is_none_or(|t| state::parse_rfc3339(&r.time).is_some_and(|at| at >= t))
            && session.as_ref().is_none_or(|h| r.session.as_ref() == Some(h))
            && verdict.is_none_or(|v| r.verdict == v)
            && (!args.would || r.would)
    };
    let mut out = std::io::stdout().lock();
    let shown: Vec<&Record> = records.iter().filter(|r| keep(r)).collect();
    if global.json {
        for r in shown {
            writeln!(out, "{}", serde_json::to_string(r)?)?;
        }
    } else if shown.is_empty() {
        writeln!(out, "no decisions recorded{}", if records.is_empty() { "" } else { " that match" })?;
    } else {
        writeln!(out, "{:<21}{:<10}{:<15}{:<14}COMMAND", "TIME", "SESSION", "DECIDED BY", "RESULT")?;
        for r in shown {
            let session = r.session.as_deref().map_or("-", |h| &h[..8.min(h.len())]);
            let result = if r.ran {
                r.choice.as_deref().map_or("ran".into(), |c| format!("ran ({c})"))
            } else {
                "not run".into()
            };
            writeln!(out, "{:<21}{session:<10}{:<15}{result:<14}{}", r.time, r.decided_by.name(), escape(&r.command))?;
            let verdict = if r.would { format!("would {}", r.verdict) } else { r.verdict.clone() };
            let mut detail = format!("    {verdict} [{}]", r.rules.join(", "));
            if let Some(reason) = &r.reason {
                detail.push_str(&format!(" reason: {}", escape(reason)));
            }
            if let Some(id) = &r.recovery {
                detail.push_str(&format!(" recovery point: {id}"));
            }
            writeln!(out, "{detail}")?;
        }
    }
    if bad > 0 {
        eprintln!(
            "cmdguard: {bad} line{} of {} could not be read and were skipped",
            if bad == 1 { "" } else { "s" },
            path.display()
        );
    }
    Ok(0)
}

/// `--since`: a duration back from now (`90m`, `1h`, `2d`) or an RFC 3339 UTC time.
pub fn parse_since(text: &str, now: u64) -> Result<u64> {
    if let Some(d) = state::parse_duration(text) {
        return Ok(now.saturating_sub(d));
    }
    if let Some(t) = state::parse_rfc3339(text) {
        return Ok(t);
    }
    bail!(crate::cmd::UsageError(format!(
        "--since {text:?}: give a duration like 90m, 1h or 2d, or a time like 2026-12-01T09:00:00Z"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_and_times() {
        assert_eq!(parse_since("1h", 10_000).unwrap(), 6_400);
        assert_eq!(state::parse_rfc3339("2026-12-01T13:34:56Z"), Some(1_796_132_096));
        assert_eq!(state::parse_rfc3339("1970-01-01"), Some(0));
        for secs in [0, 951_782_400, 1_796_132_096] {
            assert_eq!(state::parse_rfc3339(&state::rfc3339(secs)), Some(secs));
        }
        assert!(parse_since("yesterday", 0).is_err());
        assert_eq!(state::parse_rfc3339("2026-13-01"), None);
    }
}
