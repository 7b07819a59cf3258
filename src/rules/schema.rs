//! The rules file as written: serde types for `rules/*.toml`, `.cmdguard.toml` and the user's
//! and admin's `rules.toml`. Nothing here is compiled or checked beyond what serde does; that is
//! `rules::compile`'s job. This file is also read by `build.rs`, so it depends on serde and toml
//! only.

use serde::Deserialize;
use toml::Spanned;

/// One rules file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Settings; later layers override earlier ones key by key.
    #[serde(default)]
    pub settings: Option<RawSettings>,
    /// Rule ids (`git.reset-hard`) or whole packs (`git`) to switch off.
    #[serde(default)]
    pub disable: Vec<Spanned<String>>,
    #[serde(default, rename = "rule")]
    pub rules: Vec<RawRule>,
    #[serde(default, rename = "allow")]
    pub allows: Vec<RawAllow>,
    /// Program catalogue entries for the user's own tools (`programs/*.toml` format), read by
    /// `shell::catalog` when the file is checked.
    #[serde(default, rename = "program")]
    pub programs: Vec<Spanned<toml::Table>>,
    /// How hook mode gets approval, per agent host: `[hook.codex] approval = "wait"`.
    #[serde(default)]
    pub hook: RawHooks,
}

/// The `[hook.HOST]` tables of one file, by host name.
pub type RawHooks = std::collections::BTreeMap<String, Spanned<RawHook>>;

/// One host's `[hook.HOST]` table.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHook {
    /// `native` (the host asks), `code` (a block with an approval code) or `wait` (the queue).
    pub approval: Option<Spanned<String>>,
    /// How long a hook waits in the queue; must stay below the host's hook timeout.
    pub wait: Option<Spanned<DurationSetting>>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSettings {
    /// The shell that runs `-c STRING` (default `/bin/sh`).
    pub shell: Option<String>,
    /// How long the prompt waits for an answer before it denies (seconds, or `90s`, `2m`).
    pub timeout: Option<Spanned<DurationSetting>>,
    /// How long a session grant lasts without use (seconds, or `8h`, `30m`).
    pub session_ttl: Option<Spanned<DurationSetting>>,
    /// With no terminal to ask on: `deny` (default) or `wait` in the approval queue.
    pub no_tty: Option<Spanned<String>>,
    /// Milliseconds spent measuring what an asking command would destroy (0: not measured).
    pub blast_radius_ms: Option<Spanned<u64>>,
    /// How long an approval code of hook mode lives (default 10 minutes).
    pub approval_code_ttl: Option<Spanned<DurationSetting>>,
    /// A shell command run when a request waits for a human, with the request as JSON on stdin.
    pub notify_command: Option<String>,
    /// Ring the terminal bell (and send a desktop notification escape) when a request waits.
    pub bell: Option<bool>,
    /// The most a recovery point keeps in copies of files before an approved deletion (bytes, or
    /// `512MiB`, `2GiB`); 0 turns recovery points off.
    pub recovery_limit: Option<Spanned<SizeSetting>>,
    /// How long recovery points are kept (default 7 days).
    pub recovery_ttl: Option<Spanned<DurationSetting>>,
    /// `enforce` (default) or `audit`: nothing is blocked or asked, would-be decisions are logged.
    pub mode: Option<Spanned<String>>,
}

/// A size as written: a number of bytes or a string like `"512MiB"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SizeSetting {
    Bytes(u64),
    Text(String),
}

/// A duration as written: a number of seconds or a string like `"8h"` or `"1h30m"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DurationSetting {
    Seconds(u64),
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Ask,
    Deny,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    /// One simple command, wrappers unwrapped, program reduced to its basename.
    #[default]
    Segment,
    /// The segments of one pipeline joined by ` | `.
    Pipeline,
    /// The whole normalized command line.
    Line,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub id: Spanned<String>,
    pub action: Action,
    pub pattern: Spanned<String>,
    #[serde(default)]
    pub target: Target,
    /// The rule does not fire when this also matches the target text.
    #[serde(default)]
    pub unless: Option<Spanned<String>>,
    /// The rule fires only if at least one operand matches (segment rules).
    #[serde(default)]
    pub operand: Option<Spanned<String>>,
    /// The rule does not fire when there is at least one operand and every operand matches.
    #[serde(default)]
    pub unless_operand: Option<Spanned<String>>,
    pub reason: String,
    #[serde(default)]
    pub tip: Option<String>,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub counterexamples: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAllow {
    /// An exact canonical segment (or pipeline) text.
    #[serde(default)]
    pub command: Option<Spanned<String>>,
    /// A regex over the canonical text.
    #[serde(default)]
    pub pattern: Option<Spanned<String>>,
    #[serde(default)]
    pub reason: Option<String>,
    /// Where the entry applies: `"top"` (the default: at top level, under no wrapper that changes
    /// user, host, environment or directory), `"any"`, or one place as `explain` names it
    /// (`"ssh prod"`, `"sudo -u root"`, `"git -C /srv/app"`, joined by ` › ` when nested).
    #[serde(default)]
    pub context: Option<Spanned<String>>,
}

/// Where the lines of a text start, found once per file so that each position asked for costs
/// a binary search, not a count of newlines from the top (which made loading quadratic).
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let newlines = newline_ends(text.as_bytes());
        LineIndex { text, starts: std::iter::once(0).chain(newlines).collect() }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let col = self.text.get(start..offset).map_or(offset - start, |l| l.chars().count()) + 1;
        (line, col)
    }
}

/// Offsets just after each `\n`.
fn newline_ends(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1)
}

/// 1-based line and column of a byte offset in `text` (one lookup; use `LineIndex` for many).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_agrees_with_counting_newlines() {
        let text = "a\nbé\n\nlast";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            let o = offset.min(text.len());
            if !text.is_char_boundary(o) {
                continue;
            }
            let before = &text[..o];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            assert_eq!(index.line_col(offset), (line, col), "offset {offset}");
        }
    }
}
