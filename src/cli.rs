//! The command line as the user writes it (clap derive types only).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::approval::queue::Scope;
pub use crate::rules::compile::NoTty;

/// Guard an AI agent's shell commands: ordinary commands run at once, dangerous ones stop.
#[derive(Debug, Parser)]
#[command(name = "cmdguard", version, max_term_width = 100)]
#[command(
    override_usage = "cmdguard [OPTIONS] -c STRING\n       cmdguard [OPTIONS] -- PROG [ARGS]...\n       cmdguard [OPTIONS] <COMMAND>"
)]
#[command(after_long_help = "\
Exit status: the command's own when it runs (128+N if signal N ended it); 77 when it was not run \
(denied, or it needs the user's approval); 78 when the configuration is broken; 64 for a usage \
error; 126 or 127 when the program cannot be executed or is not found.

Run through a link named cmdguard-sh, cmdguard takes sh's arguments (see `cmdguard shell`).
Documentation: README.md, docs/rules.md and docs/integrations.md in the source tree.")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(flatten)]
    pub command: CommandArgs,
    #[command(subcommand)]
    pub sub: Option<Sub>,
}

#[derive(Debug, Default, Args)]
pub struct Global {
    /// The agent session this command belongs to (never read from the environment)
    #[arg(long, global = true, value_name = "KEY")]
    pub session_key: Option<String>,
    /// An extra rules file, layered last (repeatable)
    #[arg(long = "rules", global = true, value_name = "FILE")]
    pub rules: Vec<PathBuf>,
    /// The shell that runs `-c STRING` (default: the `shell` setting, else /bin/sh)
    #[arg(long, global = true, value_name = "PATH")]
    pub shell: Option<PathBuf>,
    /// Report decisions as JSON
    #[arg(long, global = true)]
    pub json: bool,
    /// With no terminal to ask on: refuse (deny), or wait in the approval queue (wait)
    #[arg(long, global = true, value_name = "POLICY")]
    pub no_tty: Option<NoTty>,
    /// Trial mode for this call: block and ask nothing, record what would have been asked or denied
    #[arg(long, global = true)]
    pub audit: bool,
}

impl Global {
    /// Whether this call only records verdicts (`--audit`, or the setting `mode = "audit"`).
    pub fn is_audit(&self, policy: &crate::rules::Policy) -> bool {
        self.audit || policy.settings.mode == crate::rules::compile::Mode::Audit
    }
}

/// A command to run or judge: shell text, or argv after `--`.
#[derive(Debug, Default, Args, Clone)]
pub struct CommandArgs {
    /// A shell command string, run as `SHELL -c STRING`
    #[arg(short = 'c', value_name = "STRING", allow_hyphen_values = true)]
    pub script: Option<OsString>,
    /// A program and its arguments, run directly with no shell in between
    #[arg(last = true, value_name = "PROG [ARGS]...")]
    pub argv: Vec<OsString>,
}

#[derive(Debug, Subcommand)]
pub enum Sub {
    /// Decide only, never run: print the verdict and the rules that matched
    Check(CheckArgs),
    /// Show the whole analysis of a command, step by step
    Explain(CommandArgs),
    /// List, lint and test rules
    #[command(subcommand)]
    Rules(RulesCmd),
    /// Session keys and the grants given to them ("approve for this session")
    #[command(subcommand)]
    Session(SessionCmd),
    /// Review a rules file's loosening and trust its exact content (asks on the terminal)
    Trust {
        /// The file (default: the project's .cmdguard.toml, found walking up)
        file: Option<PathBuf>,
    },
    /// Stop trusting a rules file: its allow entries and disables no longer apply
    Untrust {
        /// The file (default: the project's .cmdguard.toml, found walking up)
        file: Option<PathBuf>,
    },
    /// Write a commented .cmdguard.toml for this project, asking before the deploy and publish commands it finds
    Init(InitArgs),
    /// Check the installation end to end: PATH, rules, trust, state directory, terminal, agent hooks
    Doctor,
    /// Commands waiting for approval (no terminal, no_tty = "wait") and hook approval codes, across sessions
    Pending,
    /// Approve a waiting command (by id, or the oldest or --all of one --session-key) or a hook's approval code
    Approve(ApproveArgs),
    /// Deny a waiting command (by id, or the oldest or --all of one --session-key) or withdraw an approval code
    Deny(DenyArgs),
    /// A live full-screen view of the approval queue; decide with keys
    Watch,
    /// What was decided, by whom and why (from the audit log)
    Log(LogArgs),
    /// What a trial (`mode = "audit"`, `--audit`) found: would-be asks and denials, top rules and commands, allow entries to paste
    Report(ReportArgs),
    /// Undo an approved command from its recovery point (the last by default), after confirming on the terminal
    Undo(UndoArgs),
    /// Answer an agent host's pre-tool-use hook: the tool call as JSON on stdin, the verdict in the host's format
    Hook(HookArgs),
    /// Print a completion script for a shell, generated from this command line
    Completions {
        /// The shell the script is for
        #[arg(value_enum, value_name = "SHELL")]
        target: clap_complete::Shell,
    },
    /// Run like `sh ARGS...` after guarding what the shell will run (also as a link named cmdguard-sh)
    #[command(disable_help_flag = true)]
    Shell(ShellArgs),
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The request id or its first characters, or an approval code (see `cmdguard pending`)
    pub id: Option<String>,
    /// Every waiting request of the session named by --session-key
    #[arg(long)]
    pub all: bool,
    /// How far the approval reaches (asked on the terminal if not given)
    #[arg(long, value_enum)]
    pub scope: Option<Scope>,
}

#[derive(Debug, Args)]
pub struct DenyArgs {
    /// The request id or its first characters, or an approval code (see `cmdguard pending`)
    pub id: Option<String>,
    /// Every waiting request of the session named by --session-key
    #[arg(long)]
    pub all: bool,
    /// A reason passed to the agent
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only records newer than this: a duration (`90m`, `1h`, `2d`) or an RFC 3339 time
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only records with this engine verdict
    #[arg(long, value_enum)]
    pub verdict: Option<LogVerdict>,
    /// Only trial mode's would-be decisions: what would have been asked or denied, but ran
    #[arg(long)]
    pub would: bool,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The recovery point's id or its first characters (default: the last one not undone)
    pub id: Option<String>,
    /// List recent recovery points: time, session, command, project, size
    #[arg(long, conflicts_with_all = ["id", "force"])]
    pub list: bool,
    /// Restore even over newer work (files changed after the command, a branch name taken again)
    #[arg(long)]
    pub force: bool,
    /// Remove expired recovery points (cmdguard runs this in the background)
    #[arg(long, hide = true, conflicts_with_all = ["id", "force", "list"])]
    pub prune: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Only what was recorded since: a duration (`7d`, `12h`) or an RFC 3339 time
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogVerdict {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Subcommand)]
pub enum SessionCmd {
    /// Print a fresh random session key (128 bits) for a harness to pass with --session-key
    New,
    /// Every live session grant: session (hashed), project, rules, last use
    List,
    /// Remove every grant of one session
    Revoke {
        /// The session key as given to --session-key, or its hash as `session list` shows it
        key: String,
    },
    /// Remove every grant of every session
    Clear,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct HookArgs {
    /// The agent host whose hook format is read and answered
    #[arg(value_enum, required = true)]
    pub host: Option<Host>,
    /// Write (or remove) cmdguard's hook in a host's own settings
    #[command(subcommand)]
    pub setup: Option<HookSetup>,
}

#[derive(Debug, Subcommand)]
pub enum HookSetup {
    /// Add `cmdguard hook HOST` to the host's settings file (a backup of the old file is kept)
    Install(HookPlace),
    /// Remove cmdguard's own hook entry from the host's settings file
    Uninstall(HookPlace),
}

#[derive(Debug, Args)]
pub struct HookPlace {
    /// The agent host
    #[arg(value_enum)]
    pub host: Host,
    /// The host's settings for all your projects (the default)
    #[arg(long, conflicts_with = "project")]
    pub user: bool,
    /// The settings of the project in the working directory
    #[arg(long)]
    pub project: bool,
}

/// Agent hosts with a pre-tool-use hook (docs/integrations.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Host {
    /// Claude Code, PreToolUse
    ClaudeCode,
    /// OpenAI Codex CLI, PreToolUse
    Codex,
    /// GitHub Copilot CLI and coding agent, preToolUse
    Copilot,
    /// Gemini CLI, BeforeTool
    Gemini,
    /// Cursor, beforeShellExecution
    Cursor,
    /// Windsurf (Cascade), pre_run_command
    Windsurf,
    /// OpenCode, through a generated plugin on tool.execute.before
    Opencode,
    /// Cline, a PreToolUse hook script
    Cline,
}

#[derive(Debug, Args)]
pub struct ShellArgs {
    /// What sh would be given: -c STRING [ARG0 [ARGS...]], a script file and its arguments, or options
    #[arg(allow_hyphen_values = true, trailing_var_arg = true, value_name = "SH_ARGS")]
    pub args: Vec<OsString>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub command: CommandArgs,
    /// Read one command per line from stdin; print one JSON object per line
    #[arg(long, conflicts_with_all = ["script", "argv"])]
    pub batch: bool,
}

#[derive(Debug, Subcommand)]
pub enum RulesCmd {
    /// Every rule in force: id, action, pack and where it was written
    List,
    /// Check a rules file (or every loaded layer) for errors and weak spots
    Lint { file: Option<PathBuf> },
    /// Check rules against their examples and counterexamples
    Test { file: Option<PathBuf> },
    /// Which rules files are read, in order
    Path,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Print the file instead of writing it (what was found goes to stderr)
    #[arg(long, visible_alias = "dry-run")]
    pub print: bool,
}

/// The command lines agents run on every command — global options, then `-c STRING` or
/// `-- PROG ARGS…`, either alone or after `check`, or `check --batch`, or `hook HOST` — read
/// without building clap's full command tree, which costs more than the rest of cmdguard's
/// start-up for a command that matches no rule (250,000 instructions: building and dropping
/// every subcommand's arguments). Anything else (another subcommand, `--help`, a repeated or
/// unknown option, an option value that is not valid) returns `None`, and clap parses the line
/// as usual; for every line this accepts, the result is exactly what clap would produce (tested).
pub fn fast_parse(args: &[OsString]) -> Option<Cli> {
    let mut global = Global::default();
    let mut check = false;
    // What `-c` or `--` read: alone, the wrapper's command; after `check`, check's.
    let done = |global: Global, check: bool, command: CommandArgs| {
        Some(match check {
            false => Cli { global, command, sub: None },
            true => Cli {
                global,
                command: CommandArgs::default(),
                sub: Some(Sub::Check(CheckArgs { command, batch: false })),
            },
        })
    };
    let mut i = 1;
    while i < args.len() {
        let arg = args[i].to_str()?;
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(OsString::from(v))),
            _ => (arg, None),
        };
        let (last, next_is_last, next) = (i + 1 == args.len(), i + 2 == args.len(), args.get(i + 1));
        let mut value = || -> Option<OsString> {
            match &inline {
                Some(v) => Some(v.clone()),
                None => {
                    i += 1;
                    let v = args.get(i)?;
                    // clap reads a following option as a missing value, not as the value.
                    (!v.to_str().is_some_and(|s| s.starts_with('-'))).then(|| v.clone())
                }
            }
        };
        match name {
            "-c" if inline.is_none() => {
                let script = args.get(i + 1)?.clone();
                if i + 2 != args.len() {
                    return None;
                }
                return done(global, check, CommandArgs { script: Some(script), argv: Vec::new() });
            }
            "--" if inline.is_none() => {
                let argv = args[i + 1..].to_vec();
                if argv.is_empty() {
                    return None;
                }
                return done(global, check, CommandArgs { script: None, argv });
            }
            "check" if !check => check = true,
            "--batch" if check && inline.is_none() && last => {
                let batch = CheckArgs { command: CommandArgs::default(), batch: true };
                return Some(Cli { global, command: CommandArgs::default(), sub: Some(Sub::Check(batch)) });
            }
            "hook" if !check && next_is_last => {
                let host = <Host as ValueEnum>::from_str(next?.to_str()?, false).ok()?;
                return Some(Cli {
                    global,
                    command: CommandArgs::default(),
                    sub: Some(Sub::Hook(HookArgs { host: Some(host), setup: None })),
                });
            }
            "--json" if inline.is_none() && !global.json => global.json = true,
            "--audit" if inline.is_none() && !global.audit => global.audit = true,
            "--session-key" if global.session_key.is_none() => {
                global.session_key = Some(value()?.into_string().ok()?);
            }
            // An empty path is clap's error to report.
            "--shell" if global.shell.is_none() => {
                global.shell = Some(PathBuf::from(value().filter(|v| !v.is_empty())?))
            }
            "--rules" => global.rules.push(PathBuf::from(value().filter(|v| !v.is_empty())?)),
            "--no-tty" if global.no_tty.is_none() => {
                global.no_tty = match value()?.to_str()? {
                    "deny" => Some(NoTty::Deny),
                    "wait" => Some(NoTty::Wait),
                    _ => return None,
                };
            }
            _ => return None,
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn fast_parse_agrees_with_clap() {
        let accepted: &[&[&str]] = &[
            &["cmdguard", "-c", "git status"],
            &["cmdguard", "-c", "-x"],
            &["cmdguard", "--session-key", "s-1", "-c", "rm -rf build"],
            &["cmdguard", "--session-key=s 1", "--json", "--no-tty", "wait", "-c", "ls"],
            &["cmdguard", "--rules", "a.toml", "--rules=b.toml", "--shell", "/bin/bash", "-c", "ls"],
            &["cmdguard", "--no-tty=deny", "--", "git", "push", "--force"],
            &["cmdguard", "--", "-c", "x"],
            &["cmdguard", "--session-key", "", "-c", ""],
            &["cmdguard", "check", "-c", "rm -rf ~"],
            &["cmdguard", "--session-key", "k", "check", "--json", "-c", "ls"],
            &["cmdguard", "check", "--rules", "x.toml", "--", "git", "status"],
            &["cmdguard", "check", "--batch"],
            &["cmdguard", "--json", "check", "--batch"],
            &["cmdguard", "hook", "claude-code"],
            &["cmdguard", "--session-key", "k", "hook", "gemini"],
            &["cmdguard", "hook", "cursor"],
            &["cmdguard", "hook", "windsurf"],
            &["cmdguard", "hook", "opencode"],
            &["cmdguard", "hook", "cline"],
            &["cmdguard", "--audit", "-c", "rm -rf build"],
            &["cmdguard", "--audit", "hook", "codex"],
            &["cmdguard", "check", "--audit", "-c", "ls"],
        ];
        for args in accepted {
            let fast = fast_parse(&os(args)).unwrap_or_else(|| panic!("{args:?} should take the fast path"));
            let clap = Cli::try_parse_from(os(args)).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{args:?}");
        }
        let declined: &[&[&str]] = &[
            &["cmdguard"],
            &["cmdguard", "-c"],
            &["cmdguard", "check"],
            &["cmdguard", "check", "check", "-c", "ls"],
            &["cmdguard", "check", "-c", "ls", "extra"],
            &["cmdguard", "check", "--batch", "-c", "ls"],
            &["cmdguard", "check", "-c", "ls", "--batch"],
            &["cmdguard", "--batch"],
            &["cmdguard", "check", "--help"],
            &["cmdguard", "hook"],
            &["cmdguard", "hook", "nosuchhost"],
            &["cmdguard", "hook", "codex", "extra"],
            &["cmdguard", "hook", "Codex"],
            &["cmdguard", "check", "hook", "codex"],
            &["cmdguard", "hook", "install", "codex"],
            &["cmdguard", "hook", "install"],
            &["cmdguard", "-c", "ls", "extra"],
            &["cmdguard", "--"],
            &["cmdguard", "--json", "--json", "-c", "ls"],
            &["cmdguard", "--audit", "--audit", "-c", "ls"],
            &["cmdguard", "--audit=yes", "-c", "ls"],
            &["cmdguard", "--session-key", "a", "--session-key", "b", "-c", "ls"],
            &["cmdguard", "--session-key", "-c", "ls"],
            &["cmdguard", "--no-tty", "maybe", "-c", "ls"],
            &["cmdguard", "--help"],
            &["cmdguard", "-V"],
            &["cmdguard", "--sesion-key", "a", "-c", "ls"],
            &["cmdguard", "-cls"],
            &["cmdguard", "--rules", "", "-c", "ls"],
            &["cmdguard", "--shell=", "-c", "ls"],
        ];
        for args in declined {
            assert!(fast_parse(&os(args)).is_none(), "{args:?} should go to clap");
        }
    }
}
