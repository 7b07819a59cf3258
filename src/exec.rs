//! Replacing cmdguard with the approved command (Unix `exec`): stdio, signals and the exit
//! status are then the command's own.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use crate::exit;

/// What to run: shell text for the configured shell, or argv with no shell in between.
#[derive(Debug, Clone)]
pub enum Job {
    Script(OsString),
    Argv(Vec<OsString>),
    /// The shell run with an agent's own `sh` arguments (`cmdguard shell`, `cmdguard-sh`):
    /// `script` is the text the shell will run as far as cmdguard can read it, or why it cannot
    /// (then the command asks); `args` go to the shell unchanged.
    Shell {
        script: Result<String, String>,
        args: Vec<OsString>,
    },
}

/// `text` as UTF-8, invalid sequences shown as U+FFFD. Valid text (nearly all) is checked with
/// `str::from_utf8`, which goes a word at a time; `to_string_lossy` alone walks byte by byte,
/// and a 60 KB command is read this way three times.
fn lossy(text: &OsStr) -> Cow<'_, str> {
    text.to_str().map_or_else(|| text.to_string_lossy(), Cow::Borrowed)
}

impl Job {
    /// The command as text, for analysis and messages (invalid UTF-8 shown as U+FFFD).
    pub fn text(&self) -> String {
        match self {
            Job::Script(s) => lossy(s).into_owned(),
            Job::Argv(v) => crate::shell::join(&self.argv_lossy(v)),
            Job::Shell { script: Ok(s), .. } => s.clone(),
            Job::Shell { script: Err(_), args } => {
                let words =
                    std::iter::once("sh".to_string()).chain(args.iter().map(|a| a.to_string_lossy().into_owned()));
                crate::shell::join(&words.collect::<Vec<_>>())
            }
        }
    }

    fn argv_lossy(&self, v: &[OsString]) -> Vec<String> {
        v.iter().map(|a| a.to_string_lossy().into_owned()).collect()
    }

    /// The analysis of what would run, shell text read in the dialect of `shell`, the shell
    /// that runs it (`/bin/sh` is dash on Debian and Ubuntu).
    pub fn analyze(&self, shell: &Path) -> crate::shell::Analysis {
        let dialect = crate::shell::Dialect::of_path(shell);
        match self {
            Job::Script(s) => crate::shell::analyze_script_in(&lossy(s), dialect),
            Job::Argv(v) => crate::shell::analyze_argv(&self.argv_lossy(v)),
            Job::Shell { script: Ok(s), .. } => crate::shell::analyze_script_in(s, dialect),
            Job::Shell { script: Err(why), .. } => crate::shell::Analysis {
                lines: vec![self.text()],
                issues: vec![crate::shell::Issue { kind: crate::shell::IssueKind::Dynamic, detail: why.clone() }],
                ..Default::default()
            },
        }
    }
}

/// Runs `job` in place of this process. Returns only if the exec failed.
pub fn exec(job: &Job, shell: &Path) -> u8 {
    let (program, err) = match job {
        Job::Script(s) => (shell.as_os_str().to_os_string(), Command::new(shell).arg("-c").arg(s).exec()),
        Job::Argv(v) => (v[0].clone(), Command::new(&v[0]).args(&v[1..]).exec()),
        Job::Shell { args, .. } => (shell.as_os_str().to_os_string(), Command::new(shell).args(args).exec()),
    };
    let shown = crate::term::escape(&program.to_string_lossy());
    eprintln!("cmdguard: cannot run {shown}: {err}");
    match err.kind() {
        std::io::ErrorKind::NotFound => exit::NOT_FOUND,
        _ => exit::CANNOT_EXECUTE,
    }
}
