//! cmdguard: a guard in front of every shell command an AI agent runs. main parses the command
//! line, dispatches once, and maps the outcome to an exit code in one place.

// cmdguard starts on every shell command an agent runs, so its start-up is on everyone's
// critical path. std's runtime start-up reads /proc/self/maps to set up a stack-overflow guard
// (about 60 µs per start on the reference machine); cmdguard has its own entry point instead
// and does the parts of that start-up it needs itself (`main` below).
#![cfg_attr(not(test), no_main)]

use std::ffi::{OsStr, OsString};
use std::path::Path;

use clap::Parser;
use cmdguard::cli::{Cli, CommandArgs, Global, ShellArgs, Sub};
use cmdguard::{cmd, config, exit};

/// The process entry point (C `main`). It does what cmdguard needs of std's runtime start-up:
/// file descriptors 0, 1 and 2 are open (else the next file cmdguard opens would become its
/// "stdout"), and SIGPIPE is ignored, so a closed pipe is an error to report, not a silent death
/// (the command cmdguard runs gets the default back: std's `exec` restores it). It then exits
/// through `std::process::exit`, which flushes stdout.
#[cfg(not(test))]
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: std::ffi::c_int, _argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    for fd in 0..3 {
        // SAFETY: fcntl on a small integer only queries; open gets a valid C string.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1 && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) == -1 {
                libc::abort();
            }
        }
    }
    // SAFETY: setting a signal's disposition to ignore has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    std::process::exit(i32::from(guarded_main()))
}

#[cfg_attr(test, allow(dead_code))]
fn guarded_main() -> u8 {
    // An internal error must never let a command through: report it and exit "not run".
    std::panic::set_hook(Box::new(|info| {
        // A reader that went away (`cmdguard rules list | head -1`) took what it wanted: a quiet
        // exit. std's print macros report it only by this panic. A hook's host that closed its
        // pipe reads no answer, and gets the blocking exit status.
        let text = info.payload().downcast_ref::<String>().map(String::as_str).unwrap_or("");
        if text.starts_with("failed printing to stdout") && text.contains("Broken pipe") {
            let hook = std::env::args_os().any(|a| a == "hook");
            std::process::exit(if hook { i32::from(exit::HOOK_BLOCK) } else { 0 });
        }
        cmdguard::approval::prompt::restore_terminal();
        cmd::watch::restore_terminal();
        eprintln!("cmdguard: internal error, the command was not run: {info}");
        std::process::exit(i32::from(exit::NOT_RUN));
    }));
    let args: Vec<OsString> = std::env::args_os().collect();
    let parsed = if args.first().and_then(|a| Path::new(a).file_name()) == Some(OsStr::new(cmd::shell::LINK_NAME)) {
        // Installed as a link named cmdguard-sh, the binary is the shell shim: its arguments are sh's.
        Ok(Cli {
            global: Global::default(),
            command: CommandArgs::default(),
            sub: Some(Sub::Shell(ShellArgs { args: args[1..].to_vec() })),
        })
    } else if let Some(cli) = cmdguard::cli::fast_parse(&args) {
        Ok(cli)
    } else {
        Cli::try_parse_from(&args)
    };
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // A host reads exit 2 as a block; `hook install` is run by a person.
            let setup = args.iter().any(|a| a == "install" || a == "uninstall");
            let usage = if args.iter().any(|a| a == "hook") && !setup { exit::HOOK_BLOCK } else { exit::USAGE };
            return if e.use_stderr() { usage } else { 0 };
        }
    };
    match run(&cli) {
        Ok(code) => code,
        Err(e) if reader_went_away(&cli, &e) => 0,
        Err(e) => {
            eprintln!("cmdguard: {e:#}");
            if e.downcast_ref::<config::ConfigError>().is_some() {
                eprintln!("cmdguard: the configuration is broken, so nothing was run; fix the file named above");
                exit::CONFIG
            } else if e.downcast_ref::<cmd::UsageError>().is_some() {
                exit::USAGE
            } else {
                exit::NOT_RUN
            }
        }
    }
}

/// A subcommand whose reader went away (`cmdguard log | head -1`) exits quietly; the wrapper and
/// a hook never take this way out, so nothing passes for want of a reader.
#[cfg_attr(test, allow(dead_code))]
fn reader_went_away(cli: &Cli, e: &anyhow::Error) -> bool {
    !matches!(cli.sub, None | Some(Sub::Hook(_)) | Some(Sub::Shell(_)))
        && e.chain()
            .any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

#[cfg_attr(test, allow(dead_code))]
fn run(cli: &Cli) -> anyhow::Result<u8> {
    if cli.global.session_key.as_deref() == Some("") {
        // An unset variable in a harness (`--session-key "$SID"`) must not merge every
        // conversation into one session.
        return Err(cmd::UsageError(
            "--session-key is empty: give each agent conversation its own key (`cmdguard session new` prints one)"
                .into(),
        )
        .into());
    }
    if cli.sub.is_some() && (cli.command.script.is_some() || !cli.command.argv.is_empty()) {
        return Err(
            cmd::UsageError("give the command after the subcommand, as in `cmdguard check -c STRING`".into()).into()
        );
    }
    if cli.global.json {
        let without = match &cli.sub {
            Some(Sub::Trust { .. }) => Some("trust"),
            Some(Sub::Untrust { .. }) => Some("untrust"),
            Some(Sub::Watch) => Some("watch"),
            Some(Sub::Completions { .. }) => Some("completions"),
            _ => None,
        };
        if let Some(name) = without {
            return Err(cmd::UsageError(format!(
                "`cmdguard {name}` has no JSON form (it talks to a person on the terminal); leave out --json"
            ))
            .into());
        }
    }
    match &cli.sub {
        Some(Sub::Check(args)) => cmd::check::run(&cli.global, args),
        Some(Sub::Explain(args)) => cmd::explain::run(&cli.global, args),
        Some(Sub::Rules(r)) => cmd::rules::run(&cli.global, r),
        Some(Sub::Session(s)) => cmd::session::run(&cli.global, s),
        Some(Sub::Trust { file }) => cmd::trust::trust(&cli.global, file.as_deref()),
        Some(Sub::Untrust { file }) => cmd::trust::untrust(&cli.global, file.as_deref()),
        Some(Sub::Init(args)) => cmd::init::run(&cli.global, args),
        Some(Sub::Doctor) => cmd::doctor::run(&cli.global),
        Some(Sub::Pending) => cmd::queue::pending(&cli.global),
        Some(Sub::Approve(a)) => cmd::queue::approve(&cli.global, a),
        Some(Sub::Deny(a)) => cmd::queue::deny(&cli.global, a),
        Some(Sub::Watch) => cmd::watch::run(&cli.global),
        Some(Sub::Log(a)) => cmd::log::run(&cli.global, a),
        Some(Sub::Report(a)) => cmd::report::run(&cli.global, a),
        Some(Sub::Undo(a)) => cmd::undo::run(&cli.global, a),
        Some(Sub::Completions { target }) => cmd::completions::run(*target),
        Some(Sub::Hook(args)) => cmd::hook::run(&cli.global, args),
        Some(Sub::Shell(args)) => cmd::shell::run(&cli.global, &args.args),
        None => cmd::run::run(&cli.global, cmd::job(&cli.command)?),
    }
}
