//! The shell shim: `cmdguard shell ARGS…` and a link named `cmdguard-sh` behave like `sh ARGS…`
//! for the agent, after the same guard as `cmdguard -c`.

use std::process::{Command, Output, Stdio};

use crate::env::{TestEnv, code, stderr, stdout};

/// Runs the shim as `cmdguard shell ARGS…`.
fn shim(t: &TestEnv, args: &[&str]) -> Output {
    t.run(std::iter::once("shell").chain(args.iter().copied()))
}

#[test]
fn exit_status_is_the_shells() {
    let t = TestEnv::new();
    assert_eq!(code(&shim(&t, &["-c", "exit 3"])), 3);
    assert_eq!(code(&shim(&t, &["-c", "true"])), 0);
    let o = shim(&t, &["-c", "kill -TERM $$"]);
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&o.status), Some(15), "{:?}", o.status);
}

#[test]
fn arguments_become_dollar_zero_and_positionals() {
    let t = TestEnv::new();
    let o = shim(&t, &["-c", r#"printf '%s|' "$0" "$1" "$2" "$#""#, "name", "a b", "--json"]);
    assert_eq!(stdout(&o), "name|a b|--json|2|", "{}", stderr(&o));
}

#[test]
fn standard_input_reaches_the_command() {
    let t = TestEnv::new();
    let o = t.run_with_input(&["shell", "-c", "tr a-z A-Z"], "hello\n");
    assert_eq!(stdout(&o), "HELLO\n");
}

#[test]
fn a_dangerous_command_is_refused_and_nothing_runs() {
    let t = TestEnv::new();
    let o = shim(&t, &["-c", "touch ran; git reset --hard"]);
    assert_eq!(code(&o), 77);
    assert!(!t.exists("ran"));
    assert!(stderr(&o).contains("git.reset-hard") && stderr(&o).contains("Do not run this command again"));
    assert_eq!(code(&shim(&t, &["-c", "rm -rf ~"])), 77);
}

#[test]
fn option_clusters_carry_the_command_string() {
    let t = TestEnv::new();
    // `-e` reaches the shell: the script stops at the first failure.
    let o = shim(&t, &["-ec", "false; echo reached"]);
    assert_eq!((code(&o), stdout(&o).as_str()), (1, ""));
    assert_eq!(stdout(&shim(&t, &["-o", "errexit", "-uc", "echo $1", "x", "y"])), "y\n");
    for args in [&["-ec", "git reset --hard"][..], &["-lc", "git reset --hard"], &["-e", "-c", "git reset --hard"]] {
        assert_eq!(code(&shim(&t, args)), 77, "{args:?}");
    }
    // An interactive flag does not unguard a command string.
    assert_eq!(code(&shim(&t, &["-ic", "touch ran; git reset --hard"])), 77);
    assert!(!t.exists("ran"));
}

#[test]
fn a_script_file_is_judged_by_its_contents() {
    let t = TestEnv::new();
    t.write("ok.sh", "echo \"arg=$1\"\n");
    assert_eq!(stdout(&shim(&t, &["ok.sh", "one"])), "arg=one\n");
    t.write("bad.sh", "touch ran\ngit reset --hard\n");
    let o = shim(&t, &["-e", "bad.sh"]);
    assert_eq!(code(&o), 77);
    assert!(stderr(&o).contains("git.reset-hard"), "{}", stderr(&o));
    assert!(!t.exists("ran"));
    let o = shim(&t, &["missing.sh"]);
    assert_eq!(code(&o), 77);
    assert!(stderr(&o).contains("missing.sh cannot be read"), "{}", stderr(&o));
}

#[test]
fn a_shell_reading_a_pipe_is_refused() {
    // The agent writes what the shell would read: cmdguard cannot see it.
    let t = TestEnv::new();
    for args in [&["shell"][..], &["shell", "-s"], &["shell", "-i"], &["shell", "-s", "x"]] {
        let o = t.run_with_input(args, "touch ran\n");
        assert_eq!(code(&o), 77, "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("core.dynamic"), "{}", stderr(&o));
    }
    assert!(!t.exists("ran"));
}

#[test]
fn a_link_named_cmdguard_sh_is_the_shim() {
    let t = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("cmdguard-sh");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cmdguard"), &link).unwrap();
    let run = |args: &[&str]| -> Output { t.program(link.to_str().unwrap(), args).output().unwrap() };
    assert_eq!(code(&run(&["-c", "exit 4"])), 4);
    assert_eq!(stdout(&run(&["-c", "echo \"$0 $1\"", "zero", "one"])), "zero one\n");
    assert_eq!(code(&run(&["-ec", "git reset --hard"])), 77);
    // Its arguments are sh's, never cmdguard's own options.
    assert_eq!(stdout(&run(&["-c", "echo $1", "x", "--rules"])), "--rules\n");
    // Another name is cmdguard itself.
    let other = dir.path().join("guard");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cmdguard"), &other).unwrap();
    let o = t.program(other.to_str().unwrap(), ["-c", "exit 4"]).output().unwrap();
    assert_eq!(code(&o), 4);
    let o = t.program(other.to_str().unwrap(), ["-ec", "exit 4"]).output().unwrap();
    assert_eq!(code(&o), 64, "cmdguard has no -e option: {}", stderr(&o));
}

#[test]
fn a_shell_on_a_terminal_is_a_person_and_runs_unguarded() {
    // `script` gives the shim a pseudo-terminal as its standard input.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("note: util-linux `script` is not installed; the terminal case was not run");
        return;
    }
    let t = TestEnv::new();
    let shim = format!("{} shell", env!("CARGO_BIN_EXE_cmdguard"));
    let mut cmd = t.program("script", ["-qec", &shim, "/dev/null"]);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"echo typed-$((6*7))\nexit 5\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 5);
    assert!(stdout(&o).contains("typed-42"), "{}", stdout(&o));
}
