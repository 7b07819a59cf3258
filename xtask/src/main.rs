//! Project tasks, run as `cargo xtask TASK` (the alias is in .cargo/config.toml).
//!
//! `man`: writes docs/cmdguard.1 from the clap definition, so the man page never drifts from
//! the command line. The integration test `man_page_is_current` renders the page the same way
//! and fails when the committed file is stale.

use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("man") => match man() {
            Ok(path) => {
                println!("wrote {path}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("xtask man: {e}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: cargo xtask man    (writes docs/cmdguard.1 from the command line definition)");
            ExitCode::from(64)
        }
    }
}

fn man() -> std::io::Result<String> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmdguard::cli::Cli::command()).render(&mut page)?;
    // clap_mangen names a page per subcommand (`cmdguard-log(1)`); cmdguard ships one page, so
    // the commands are named as typed, with `--help` for each one's options (as the test does).
    let mut page = String::from_utf8_lossy(&page).into_owned();
    for sub in cmdguard::cli::Cli::command().get_subcommands().map(|s| s.get_name().to_string()).chain(["help".into()])
    {
        page = page.replace(&format!("cmdguard\\-{}(1)", sub.replace('-', "\\-")), &format!("cmdguard {sub}"));
    }
    let page = page.replacen(
        ".SH SUBCOMMANDS\n",
        ".SH SUBCOMMANDS\nEach command's options: \\fBcmdguard COMMAND \\-\\-help\\fR.\n",
        1,
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cmdguard.1");
    std::fs::write(&path, page)?;
    Ok("docs/cmdguard.1".into())
}
