//! Settings: one file's `[settings]` and `[hook.HOST]` tables as checked (`FileSettings`), and
//! the settings in force after layering (`Settings`), key by key, later files over earlier ones.

use toml::Spanned;

use super::hooks;
use super::schema::{DurationSetting, RawHooks, RawSettings, SizeSetting};
use crate::config::ConfigError;

/// The settings one file writes, checked.
#[derive(Debug, Default, Clone)]
pub struct FileSettings {
    pub shell: Option<String>,
    /// Prompt timeout in seconds.
    pub timeout: Option<u64>,
    /// Session grant lifetime without use, in seconds.
    pub session_ttl: Option<u64>,
    pub no_tty: Option<NoTty>,
    pub mode: Option<Mode>,
    /// Approval code lifetime, in seconds.
    pub code_ttl: Option<u64>,
    pub notify_command: Option<String>,
    pub bell: Option<bool>,
    /// `[hook.HOST]` tables, by host name.
    pub hooks: Vec<(String, super::hooks::HookSettings)>,
    /// Milliseconds for the blast radius.
    pub blast_radius_ms: Option<u64>,
    /// Bytes a recovery point may copy (0: off).
    pub recovery_limit: Option<u64>,
    /// Seconds recovery points are kept.
    pub recovery_ttl: Option<u64>,
}

/// Whether verdicts are carried out (`enforce`) or only recorded (`audit`, the trial mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Enforce,
    /// Nothing is blocked or asked: a would-be ask or deny runs and is written to the audit log.
    Audit,
}

/// What happens to a command that needs approval when there is no terminal to ask on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum NoTty {
    /// Refuse it (exit 77) and tell the agent how a human can approve it.
    #[default]
    Deny,
    /// Park it in the session's approval queue and wait for a human (`cmdguard approve`).
    Wait,
}

/// A setting that is one of two words.
fn choice<T: Copy>(
    err: &dyn Fn(usize, String) -> ConfigError,
    name: &str,
    v: Option<Spanned<String>>,
    [(w1, c1), (w2, c2)]: [(&str, T); 2],
) -> Result<Option<T>, ConfigError> {
    match v {
        None => Ok(None),
        Some(v) if v.get_ref() == w1 => Ok(Some(c1)),
        Some(v) if v.get_ref() == w2 => Ok(Some(c2)),
        Some(v) => Err(err(v.span().start, format!("setting `{name}`: {:?} is not \"{w1}\" or \"{w2}\"", v.get_ref()))),
    }
}

impl FileSettings {
    /// Checks one file's `[settings]` and `[hook.HOST]` tables; `err` makes an error at a byte
    /// offset of the file.
    pub(super) fn from_raw(
        err: &dyn Fn(usize, String) -> ConfigError,
        raw: Option<RawSettings>,
        hooks: RawHooks,
    ) -> Result<FileSettings, ConfigError> {
        let hooks = super::hooks::parse(hooks, err)?;
        let Some(raw) = raw else { return Ok(FileSettings { hooks, ..FileSettings::default() }) };
        let duration = |name: &str,
                        max: u64,
                        v: Option<Spanned<DurationSetting>>|
         -> Result<Option<u64>, ConfigError> {
            let Some(v) = v else { return Ok(None) };
            let secs = match v.get_ref() {
                DurationSetting::Seconds(n) => Some(*n),
                DurationSetting::Text(t) => crate::state::parse_duration(t),
            };
            match secs {
                Some(n) if n > max => {
                    Err(err(v.span().start, format!("setting `{name}`: at most {}", crate::state::human_duration(max))))
                }
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(err(
                    v.span().start,
                    format!(
                        "setting `{name}`: write a positive number of seconds or a duration like \"90s\", \"2m\", \"8h\""
                    ),
                )),
            }
        };
        let no_tty = choice(err, "no_tty", raw.no_tty, [("deny", NoTty::Deny), ("wait", NoTty::Wait)])?;
        let mode = choice(err, "mode", raw.mode, [("enforce", Mode::Enforce), ("audit", Mode::Audit)])?;
        Ok(FileSettings {
            no_tty,
            mode,
            shell: raw.shell,
            timeout: duration("timeout", 30 * 86_400, raw.timeout)?,
            session_ttl: duration("session_ttl", 365 * 86_400, raw.session_ttl)?,
            code_ttl: duration("approval_code_ttl", 7 * 86_400, raw.approval_code_ttl)?,
            notify_command: raw.notify_command,
            bell: raw.bell,
            blast_radius_ms: match raw.blast_radius_ms {
                Some(v) if *v.get_ref() > 5000 => {
                    return Err(err(v.span().start, "setting `blast_radius_ms`: at most 5000 (5 seconds)".to_string()));
                }
                v => v.map(|v| v.into_inner()),
            },
            recovery_limit: match raw.recovery_limit {
                None => None,
                Some(v) => Some(
                    match v.get_ref() {
                        SizeSetting::Bytes(n) => Some(*n),
                        SizeSetting::Text(t) => crate::state::parse_size(t),
                    }
                    .ok_or_else(|| {
                        err(
                            v.span().start,
                            "setting `recovery_limit`: write a number of bytes or a size like \"512MiB\", \"2GiB\" (0 turns recovery points off)".to_string(),
                        )
                    })?,
                ),
            },
            recovery_ttl: duration("recovery_ttl", 365 * 86_400, raw.recovery_ttl)?,
            hooks,
        })
    }
}

/// Settings after layering.
#[derive(Debug, Clone)]
pub struct Settings {
    pub shell: Option<String>,
    /// Seconds the prompt waits before it denies.
    pub timeout: u64,
    /// Seconds a session grant lasts without use.
    pub session_ttl: u64,
    pub no_tty: NoTty,
    pub mode: Mode,
    /// Seconds an approval code of hook mode lives.
    pub code_ttl: u64,
    /// Run when a request waits for a human (from a trusted layer only).
    pub notify_command: Option<String>,
    /// Ring the bell and send a notification escape when a request waits.
    pub bell: bool,
    /// `[hook.HOST]` settings, layered.
    pub hooks: Vec<(String, hooks::HookSettings)>,
    /// Milliseconds for measuring the blast radius; 0 turns it off.
    pub blast_radius_ms: u64,
    /// Bytes of file copies one recovery point may hold; 0 turns recovery points off.
    pub recovery_limit: u64,
    /// Seconds a recovery point is kept.
    pub recovery_ttl: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            shell: None,
            timeout: 120,
            session_ttl: 8 * 3600,
            no_tty: NoTty::Deny,
            mode: Mode::Enforce,
            code_ttl: 600,
            notify_command: None,
            bell: true,
            blast_radius_ms: crate::blast::BUDGET.as_millis() as u64,
            recovery_limit: 512 << 20,
            recovery_ttl: 7 * 86_400,
            hooks: Vec::new(),
        }
    }
}

impl Settings {
    /// Layers one file's settings over these, key by key.
    pub fn apply(&mut self, file: &FileSettings) {
        if let Some(s) = &file.shell {
            self.shell = Some(s.clone());
        }
        if let Some(t) = file.timeout {
            self.timeout = t;
        }
        if let Some(t) = file.session_ttl {
            self.session_ttl = t;
        }
        if let Some(n) = file.no_tty {
            self.no_tty = n;
        }
        if let Some(m) = file.mode {
            self.mode = m;
        }
        if let Some(t) = file.code_ttl {
            self.code_ttl = t;
        }
        if let Some(c) = &file.notify_command {
            self.notify_command = Some(c.clone()).filter(|c| !c.trim().is_empty());
        }
        if let Some(b) = file.bell {
            self.bell = b;
        }
        if let Some(n) = file.blast_radius_ms {
            self.blast_radius_ms = n;
        }
        if let Some(n) = file.recovery_limit {
            self.recovery_limit = n;
        }
        if let Some(t) = file.recovery_ttl {
            self.recovery_ttl = t;
        }
        hooks::layer(&mut self.hooks, &file.hooks);
    }

    /// One host's hook settings after layering.
    pub fn hook(&self, host: &str) -> hooks::HookSettings {
        self.hooks.iter().find(|(h, _)| h == host).map(|(_, s)| *s).unwrap_or_default()
    }
}
