//! Hook mode's approval settings, per agent host: `[hook.codex] approval = "wait"` and
//! `wait = "25s"`, checked at load time, layered key by key like `[settings]`, and the defaults
//! each host gets when a file says nothing (docs/integrations.md, "Approval from hook mode").

use super::schema::{DurationSetting, RawHooks};
use crate::config::ConfigError;

/// How a hook gets a human's approval for a command that asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookApproval {
    /// The host's own confirmation (Claude Code's `ask`).
    Native,
    /// A block whose reason carries an approval code for `cmdguard approve CODE`.
    Code,
    /// The request waits in the session's queue for `cmdguard approve` or `watch`.
    Wait,
}

impl HookApproval {
    pub fn name(self) -> &'static str {
        match self {
            HookApproval::Native => "native",
            HookApproval::Code => "code",
            HookApproval::Wait => "wait",
        }
    }
}

/// One host's settings as one file writes them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HookSettings {
    pub approval: Option<HookApproval>,
    /// Seconds a hook waits in the queue.
    pub wait: Option<u64>,
}

/// The longest wait a file may set: no host documents a hook timeout beyond 10 minutes.
pub const MAX_WAIT: u64 = 600;

/// Checks the `[hook.HOST]` tables; `err` makes an error at a byte offset of the file.
pub fn parse(
    raw: RawHooks,
    err: &dyn Fn(usize, String) -> ConfigError,
) -> Result<Vec<(String, HookSettings)>, ConfigError> {
    let mut out = Vec::new();
    for (host, table) in raw {
        let at = table.span().start;
        if <crate::cli::Host as clap::ValueEnum>::from_str(&host, false).is_err() {
            let known: Vec<String> = <crate::cli::Host as clap::ValueEnum>::value_variants()
                .iter()
                .filter_map(|h| clap::ValueEnum::to_possible_value(h).map(|v| v.get_name().to_string()))
                .collect();
            return Err(err(at, format!("[hook.{host}]: unknown agent host; known hosts: {}", known.join(", "))));
        }
        let table = table.into_inner();
        let approval = match table.approval {
            None => None,
            Some(v) => Some(match v.get_ref().as_str() {
                "native" => HookApproval::Native,
                "code" => HookApproval::Code,
                "wait" => HookApproval::Wait,
                other => {
                    return Err(err(
                        v.span().start,
                        format!("[hook.{host}] approval: {other:?} is not \"native\", \"code\" or \"wait\""),
                    ));
                }
            }),
        };
        let wait = match table.wait {
            None => None,
            Some(v) => {
                let secs = match v.get_ref() {
                    DurationSetting::Seconds(n) => Some(*n),
                    DurationSetting::Text(t) => crate::state::parse_duration(t),
                };
                match secs {
                    Some(n) if (1..=MAX_WAIT).contains(&n) => Some(n),
                    _ => {
                        return Err(err(
                            v.span().start,
                            format!(
                                "[hook.{host}] wait: write a duration from 1s to 10m, below the host's hook timeout"
                            ),
                        ));
                    }
                }
            }
        };
        out.push((host, HookSettings { approval, wait }));
    }
    Ok(out)
}

/// How long a host's hook waits in the queue when no file says: below the hook timeout that
/// `cmdguard hook install` writes or the host fixes (docs/integrations.md, "Approval from hook
/// mode"): 600 s for Claude Code; 30 s for Codex, Copilot, Gemini CLI and Cursor; 30 s fixed by
/// Cline; 30 s in OpenCode's plugin. Windsurf documents no hook timeout: it gets the 25 s too.
pub fn default_wait(host: &str) -> u64 {
    match host {
        "claude-code" => 540,
        _ => 25,
    }
}

/// `over`'s keys layered onto `base`, host by host and key by key.
pub fn layer(base: &mut Vec<(String, HookSettings)>, over: &[(String, HookSettings)]) {
    for (host, s) in over {
        match base.iter_mut().find(|(h, _)| h == host) {
            Some((_, b)) => {
                b.approval = s.approval.or(b.approval);
                b.wait = s.wait.or(b.wait);
            }
            None => base.push((host.clone(), *s)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{HookApproval, HookSettings, default_wait, layer};

    #[test]
    fn hook_settings_layer_key_by_key_and_waits_stay_below_the_snippets_timeouts() {
        let wait = |approval, wait| HookSettings { approval, wait };
        let mut base = vec![("codex".to_string(), wait(Some(HookApproval::Wait), Some(40)))];
        layer(
            &mut base,
            &[("codex".into(), wait(None, Some(20))), ("gemini".into(), wait(Some(HookApproval::Code), None))],
        );
        assert_eq!(base[0].1, wait(Some(HookApproval::Wait), Some(20)));
        assert_eq!(base[1], ("gemini".to_string(), wait(Some(HookApproval::Code), None)));
        for host in ["codex", "copilot", "gemini", "cursor", "opencode"] {
            assert!(default_wait(host) < 30, "{host}: the install snippets set 30 s");
        }
        assert!(default_wait("cline") < 30, "Cline kills a hook after 30 s");
        assert!(default_wait("claude-code") < 600, "the install snippet sets 600 s");
    }
}
