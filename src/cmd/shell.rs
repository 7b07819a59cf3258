//! `cmdguard shell ARGS…`, and the same through a link named `cmdguard-sh`: behaves like
//! `sh ARGS…` for the agent (arguments, standard input, exit status) after guarding what the
//! shell will run. `-c STRING`, alone or in an option cluster (`-ec`, `-lc`), is judged exactly
//! like `cmdguard -c STRING`; a script file is read and judged as a script; a shell that would
//! read its commands from a pipe asks, since cmdguard cannot see them. An interactive shell on a
//! terminal is a person typing: it runs unguarded.

use std::ffi::{OsStr, OsString};
use std::io::{IsTerminal, Read};

use anyhow::Result;

use crate::cli::Global;
use crate::exec::{self, Job};

/// The file name that makes the binary behave as the shim.
pub const LINK_NAME: &str = "cmdguard-sh";

/// What the `sh` arguments ask the shell to run.
#[derive(Debug, PartialEq, Eq)]
enum Mode {
    /// `-c`: the command string is `args[i]` (none: the shell reports the usage error itself).
    Command(Option<usize>),
    /// A script file named by `args[i]`.
    File(usize),
    /// Commands read from standard input, which is not a terminal.
    Stdin,
    /// A person at a terminal, or a shell that runs nothing (`--version`, `--help`).
    Interactive,
}

/// Reads `sh [-abCefhimnsuvx] [-o opt]… [+…] [--long]… [-c STRING | FILE] [ARGS…]` the way
/// sh and bash do: options up to the first operand, `--` or `-`; `o`/`O` take the next argument.
fn mode(args: &[OsString], stdin_is_terminal: bool) -> Mode {
    let (mut command, mut stdin, mut runs_nothing) = (false, false, false);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let a = arg.as_encoded_bytes();
        i += 1;
        match a {
            b"--" | b"-" => break,
            b"--rcfile" | b"--init-file" => i += 1,
            b"--version" | b"--help" => runs_nothing = true,
            _ if a.starts_with(b"--") => {}
            [sign @ (b'-' | b'+'), letters @ ..] if !letters.is_empty() => {
                for &letter in letters {
                    match (sign, letter) {
                        (b'-', b'c') => command = true,
                        (b'-', b's') => stdin = true,
                        (_, b'o' | b'O') => i += 1,
                        _ => {}
                    }
                }
            }
            _ => {
                i -= 1;
                break;
            }
        }
    }
    let operand = (i < args.len()).then_some(i);
    if command {
        Mode::Command(operand)
    } else if runs_nothing {
        Mode::Interactive
    } else if let (false, Some(i)) = (stdin, operand) {
        Mode::File(i)
    } else if stdin_is_terminal {
        // `sh`, `sh -i`, `sh -s` on a terminal: a person types the commands.
        Mode::Interactive
    } else {
        // `sh`, `sh -i`, `sh -s` reading a pipe: a program (the agent) writes the commands.
        Mode::Stdin
    }
}

/// The contents of a script file, or why they cannot be read.
fn read_script(path: &OsStr) -> Result<String, String> {
    let shown = path.to_string_lossy();
    let unreadable =
        |e: std::io::Error| format!("the script file {shown} cannot be read ({e}), so what it runs is unknown");
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut text = Vec::new();
    // One byte over the analysis limit is enough for the analysis to ask.
    file.take(crate::shell::MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut text).map_err(unreadable)?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

pub fn run(global: &Global, args: &[OsString]) -> Result<u8> {
    let script = match mode(args, std::io::stdin().is_terminal()) {
        Mode::Command(Some(i)) => Ok(args[i].to_string_lossy().into_owned()),
        Mode::Command(None) => Ok(String::new()),
        Mode::File(i) => read_script(&args[i]),
        Mode::Stdin => Err("the shell would read its commands from standard input, which cmdguard cannot see; pass them with -c STRING instead".to_string()),
        Mode::Interactive => return unguarded(global, args),
    };
    super::run::run(global, Job::Shell { script, args: args.to_vec() })
}

/// Replaces cmdguard with the shell as is, choosing the shell as the wrapper does.
fn unguarded(global: &Global, args: &[OsString]) -> Result<u8> {
    let policy = super::policy(global)?;
    let shell = super::shell(global, &policy)?;
    Ok(exec::exec(&Job::Shell { script: Ok(String::new()), args: args.to_vec() }, &shell))
}

#[cfg(test)]
mod tests {
    use super::{Mode, mode};

    fn m(args: &[&str], terminal: bool) -> Mode {
        mode(&args.iter().map(Into::into).collect::<Vec<_>>(), terminal)
    }

    #[test]
    fn reads_sh_arguments_like_sh() {
        assert_eq!(m(&["-c", "ls", "a0", "a1"], false), Mode::Command(Some(1)));
        assert_eq!(m(&["-ec", "ls"], false), Mode::Command(Some(1)));
        assert_eq!(m(&["-lc", "ls"], true), Mode::Command(Some(1)));
        assert_eq!(m(&["-eo", "pipefail", "-c", "ls"], false), Mode::Command(Some(3)));
        assert_eq!(m(&["+o", "posix", "-xc", "ls"], false), Mode::Command(Some(3)));
        assert_eq!(m(&["-c", "-e", "ls"], false), Mode::Command(Some(2)));
        assert_eq!(m(&["-c", "--", "-ls"], false), Mode::Command(Some(2)));
        assert_eq!(m(&["--norc", "--rcfile", "f", "-c", "ls"], false), Mode::Command(Some(4)));
        assert_eq!(m(&["-c"], false), Mode::Command(None));
        // `-i` with `-c` is still a command string: it is guarded.
        assert_eq!(m(&["-ic", "ls"], true), Mode::Command(Some(1)));
        assert_eq!(m(&["-e", "script.sh", "x"], false), Mode::File(1));
        assert_eq!(m(&["--", "-script.sh"], false), Mode::File(1));
        assert_eq!(m(&["-s", "a", "b"], false), Mode::Stdin);
        assert_eq!(m(&[], false), Mode::Stdin);
        assert_eq!(m(&["-i"], false), Mode::Stdin);
        assert_eq!(m(&[], true), Mode::Interactive);
        assert_eq!(m(&["-i"], true), Mode::Interactive);
        assert_eq!(m(&["-s"], true), Mode::Interactive);
        assert_eq!(m(&["--version"], false), Mode::Interactive);
    }
}
