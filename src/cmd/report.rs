//! `cmdguard report`: what a trial (`mode = "audit"`) found. Commands seen (counted per day in
//! trial mode only), how many would have been asked about or denied, the rules and commands that
//! would have stopped most often, and `[[allow]]` entries, ready to paste, that would silence the
//! asks that came back again and again. `--json` gives the same as one object.

use std::collections::HashMap;

use anyhow::Result;
use serde::Serialize;

use crate::approval::audit::{self, Record};
use crate::approval::trial;
use crate::cli::{Global, ReportArgs};
use crate::state;
use crate::term::escape;

/// How many rules, commands and suggestions each list shows.
const TOP: usize = 5;
/// An ask seen fewer times than this is not "routine": no allow entry is suggested for it.
const ROUTINE: u64 = 2;

#[derive(Debug, Serialize, PartialEq)]
pub struct Report {
    /// RFC 3339 start of the period, if `--since` was given.
    pub since: Option<String>,
    /// Commands judged in trial mode (passing ones included).
    pub seen: u64,
    pub would_ask: u64,
    pub would_deny: u64,
    pub top_rules: Vec<Count>,
    pub top_commands: Vec<Count>,
    /// Exact commands that would-be asked at least twice, for `[[allow]] command = …`.
    pub suggested_allow: Vec<Count>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Count {
    pub name: String,
    pub count: u64,
    /// For a command or a suggestion: the rules it matched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

pub fn run(global: &Global, args: &ReportArgs) -> Result<u8> {
    let now = state::now();
    let since = args.since.as_deref().map(|s| super::log::parse_since(s, now)).transpose()?;
    let dir = state::dir()?;
    let (records, bad) = audit::read_all(&dir.join(audit::FILE))?;
    let seen = trial::seen_since(&dir.join(trial::DIR), since);
    let report = summarize(&records, since, seen);
    let text = if global.json { format!("{}\n", serde_json::to_string(&report)?) } else { human(&report) };
    if bad > 0 {
        eprintln!("cmdguard: {bad} line{} of the audit log could not be read and were skipped", plural(bad as u64));
    }
    super::print(&text)?;
    Ok(0)
}

/// The report over `records` (the would-be ones newer than `since`).
pub fn summarize(records: &[Record], since: Option<u64>, seen: u64) -> Report {
    let would: Vec<&Record> = records
        .iter()
        .filter(|r| r.would && since.is_none_or(|t| state::parse_rfc3339(&r.time).is_some_and(|at| at >= t)))
        .collect();
    let mut rules = Tally::default();
    let mut commands = Tally::default();
    let mut allows = Tally::default();
    for r in &would {
        for id in &r.rules {
            rules.add(id, &[]);
        }
        commands.add(&r.command, &r.rules);
        for a in &r.allow {
            allows.add(a, &r.rules);
        }
    }
    Report {
        since: since.map(state::rfc3339),
        seen,
        would_ask: would.iter().filter(|r| r.verdict == "ask").count() as u64,
        would_deny: would.iter().filter(|r| r.verdict == "deny").count() as u64,
        top_rules: rules.top(1),
        top_commands: commands.top(1),
        suggested_allow: allows.top(ROUTINE),
    }
}

#[derive(Default)]
struct Tally(HashMap<String, (u64, Vec<String>)>);

impl Tally {
    fn add(&mut self, name: &str, rules: &[String]) {
        let (n, seen) = self.0.entry(name.to_string()).or_default();
        *n += 1;
        for r in rules {
            if !seen.contains(r) {
                seen.push(r.clone());
            }
        }
    }

    /// The most frequent first (ties by name, so the report is stable), at least `min` each.
    fn top(self, min: u64) -> Vec<Count> {
        let mut all: Vec<Count> = self
            .0
            .into_iter()
            .filter(|(_, (n, _))| *n >= min)
            .map(|(name, (count, rules))| Count { name, count, rules })
            .collect();
        all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
        all.truncate(TOP);
        all
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn human(r: &Report) -> String {
    let mut out = String::new();
    let period = r.since.as_deref().map_or("in the audit log".to_string(), |t| format!("since {t}"));
    out.push_str(&format!("cmdguard trial report, {period}\n"));
    out.push_str(&format!("  commands seen in trial mode: {}\n", r.seen));
    out.push_str(&format!("  would have asked:            {}\n", r.would_ask));
    out.push_str(&format!("  would have been denied:      {}\n", r.would_deny));
    if r.would_ask + r.would_deny == 0 {
        out.push_str(
            "\nNothing would have been stopped. Turn trial mode off (remove `mode = \"audit\"`) to enforce.\n",
        );
        return out;
    }
    out.push_str("\nTop rules:\n");
    for c in &r.top_rules {
        out.push_str(&format!("  {:>5}  {}\n", c.count, escape(&c.name)));
    }
    out.push_str("\nTop commands:\n");
    for c in &r.top_commands {
        out.push_str(&format!("  {:>5}  {}  [{}]\n", c.count, escape(&c.name), c.rules.join(", ")));
    }
    if r.suggested_allow.is_empty() {
        out.push_str("\nNo ask came back often enough to suggest an allow entry.\n");
    } else {
        out.push_str(
            "\nAllow entries that would silence the most frequent asks (paste into .cmdguard.toml,\nthen `cmdguard trust`; check each one is routine first):\n\n",
        );
        for c in &r.suggested_allow {
            out.push_str(&allow_entry(c));
            out.push('\n');
        }
    }
    out.push_str("When the report looks right, remove `mode = \"audit\"` to enforce.\n");
    out
}

/// One `[[allow]]` entry as TOML text.
pub fn allow_entry(c: &Count) -> String {
    let reason = format!("asked {} time{} in trial ({})", c.count, plural(c.count), c.rules.join(", "));
    format!("[[allow]]\ncommand = {}\nreason = {}\n", toml_string(&c.name), toml_string(&reason))
}

/// A TOML basic string: quotes, backslashes and control characters escaped, so any command
/// (and nothing from it) lands in the file as the one value.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || crate::term::is_unsafe(c) => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_round_trip_through_the_parser() {
        for s in ["git push", "echo \"hi\" \\ there", "a\tb\u{1b}[31m", "\u{202e}x"] {
            let text = format!("v = {}", toml_string(s));
            let table: toml::Table = toml::from_str(&text).unwrap();
            assert_eq!(table["v"].as_str(), Some(s), "{text}");
            assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
        }
    }
}
