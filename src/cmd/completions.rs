//! `cmdguard completions SHELL`: a completion script generated from the clap definition, so it
//! always matches the command line.

use std::io::Write;

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

pub fn run(shell: Shell) -> Result<u8> {
    // Generated into memory first: clap_complete panics on a failed write (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "cmdguard", &mut script);
    match std::io::stdout().write_all(&script) {
        // `cmdguard completions bash | head`: the reader has all it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        written => written.context("cannot write the completion script").map(|()| 0),
    }
}
