//! One file per subcommand; `run` is the wrapper itself (`-c STRING` / `-- PROG ARGS…`).

pub mod check;
pub mod code;
pub mod completions;
pub mod deletes;
pub mod doctor;
pub mod explain;
pub mod hook;
pub mod init;
pub mod log;
pub mod queue;
pub mod report;
pub mod rules;
pub mod run;
pub mod session;
pub mod shell;
pub mod trust;
pub mod undo;
pub mod watch;

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::{CommandArgs, Global};
use crate::exec::Job;
use crate::rules::Policy;

/// A usage error (exit 64), raised when the command line is incomplete.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The job named by `-c` or `--`, or a usage error.
pub fn job(args: &CommandArgs) -> Result<Job> {
    match (&args.script, args.argv.is_empty()) {
        (Some(s), true) => Ok(Job::Script(s.clone())),
        (None, false) => Ok(Job::Argv(args.argv.clone())),
        (Some(_), false) => Err(UsageError("give either -c STRING or -- PROG [ARGS]..., not both".into()).into()),
        (None, true) => {
            Err(UsageError("no command given: use -c STRING or -- PROG [ARGS]... (see cmdguard --help)".into()).into())
        }
    }
}

/// Writes `text` to stdout. A reader that went away (`cmdguard rules list | head -1`) is no
/// error: what it wanted was read, and the rest has nobody to go to.
pub fn print(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => Ok(written?),
    }
}

pub fn cwd() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the working directory")
}

/// Loads the layered policy for the working directory.
pub fn policy(global: &Global) -> Result<Policy> {
    Ok(crate::config::load(&cwd()?, &global.rules)?)
}

/// The shell that runs `-c STRING`: `--shell`, else the `shell` setting, else `/bin/sh`. cmdguard
/// reads the text as POSIX shell, so `--shell` must name a shell of that family (the setting is
/// checked when its file loads); anything else is a usage error, not a way to run other code.
pub fn shell(global: &Global, policy: &Policy) -> Result<PathBuf> {
    if let Some(s) = &global.shell {
        crate::config::check_shell(s).map_err(|why| UsageError(format!("--shell {}: {why}", s.display())))?;
        return Ok(s.clone());
    }
    Ok(policy.settings.shell.as_ref().map_or_else(|| PathBuf::from("/bin/sh"), PathBuf::from))
}
