//! Trial mode (`mode = "audit"`, `--audit`): what cmdguard would have asked or denied is not
//! carried out but written to the audit log as a would-be record, and every command judged is
//! counted, so `cmdguard report` can say how much of the real work would have been stopped.
//!
//! The count is cheap on purpose: one byte appended to a per-day file (`trial/seen-DAY`), so a
//! day's count is that file's length. A write of one byte to a file opened for appending is
//! atomic, so concurrent commands never lose a count and need no lock. Nothing of a passing
//! command is kept but that byte, and nothing at all is counted outside trial mode.

use std::io::Write;
use std::path::Path;

use anyhow::Result;

use super::audit::{self, DecidedBy, Record};
use crate::decide::{Decision, Verdict};
use crate::rules::Policy;
use crate::shell::Analysis;
use crate::state;

/// The folder of the per-day counts, inside the state directory.
pub const DIR: &str = "trial";

/// Counts one command judged in trial mode. A count that cannot be kept is no reason to stop
/// the command: the report then says fewer commands were seen.
pub fn count_seen() {
    let _ = state::subdir(DIR).and_then(|dir| count_in(&dir, state::now()));
}

/// Appends today's byte in `dir`.
pub fn count_in(dir: &Path, now: u64) -> Result<()> {
    let mut file = state::open_private(&dir.join(day_file(now)), true)?;
    file.write_all(b".")?;
    Ok(())
}

/// `seen-2026-12-02` for a time on that day (UTC).
pub fn day_file(secs: u64) -> String {
    format!("seen-{}", &state::rfc3339(secs)[..10])
}

/// The commands counted in `dir` on the days from the one holding `since` to today.
pub fn seen_since(dir: &Path, since: Option<u64>) -> u64 {
    let first = since.map(day_file);
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("seen-") && first.as_deref().is_none_or(|f| *name >= *f)
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Writes the would-be record: the command ran, though `verdict` would have stopped it.
/// `allow` holds the exact commands an `[[allow]]` entry would need to let it through.
pub fn record_would(mut record: Record, allow: Vec<String>) {
    record.decided_by = DecidedBy::Audit;
    record.ran = true;
    record.would = true;
    record.allow = allow;
    audit::record(&record);
}

/// The exact commands an `[[allow]]` entry at top level would need to let a would-be ask
/// through; none for a deny, or where an entry could not cover it.
pub fn allow_for(policy: &Policy, analysis: &Analysis, decision: &Decision) -> Vec<String> {
    if decision.verdict != Verdict::Ask || !decision.concerns.is_empty() {
        return Vec::new();
    }
    match crate::cmd::run::always_entries(policy, analysis, decision) {
        Some(entries) if entries.iter().all(|e| e.place.is_empty()) => entries.into_iter().map(|e| e.command).collect(),
        _ => Vec::new(),
    }
}

/// Hook mode in trial: counts the call and records a would-be ask or deny (the host is then
/// told cmdguard has no objection). `decision` already counts this session's grants.
pub fn record_hook(policy: &Policy, command: &str, decision: &Decision, session_key: Option<&str>, cwd: &Path) {
    count_seen();
    if !matches!(decision.verdict, Verdict::Ask | Verdict::Deny) {
        return;
    }
    let analysis = crate::shell::analyze_script_in(command, crate::shell::Dialect::Both);
    let rules = decision.rule_ids(policy).into_iter().map(String::from).collect();
    let record = Record {
        session: session_key.map(state::key_hash),
        project: crate::config::project_root(cwd).display().to_string(),
        cwd: cwd.display().to_string(),
        ..Record::new(DecidedBy::Audit, command.to_string(), decision.verdict.name(), rules)
    };
    record_would(record, allow_for(policy, &analysis, decision));
}
