//! Hook mode fails closed: an analysis that panics, aborts, runs out of memory, hangs or writes
//! no proper answer still leaves every host with its blocking answer. The failures are provoked
//! with `CMDGUARD_TEST_CRASH` (src/cmd/hook/supervise.rs) and with a real `ulimit -v`.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::env::{TestEnv, code, stderr, stdout};
use crate::hook::decision;

const HOSTS: &[&str] = &["claude-code", "codex", "copilot", "gemini"];

/// A shell call in `host`'s format, with `padding` beside it to make the call big.
fn call(host: &str, command: &str, padding: usize) -> String {
    let mut v = match host {
        "copilot" => json!({"toolName": "bash", "toolArgs": json!({"command": command}).to_string()}),
        "gemini" => {
            json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command", "tool_input": {"command": command}})
        }
        _ => json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}),
    };
    if padding > 0 {
        // Three bytes of JSON each, tens of bytes each once parsed.
        v["padding"] = json!(vec![json!([]); padding]);
    }
    v.to_string()
}

pub fn feed(mut cmd: Command, input: &str) -> Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    match child.stdin.take().unwrap().write_all(input.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    child.wait_with_output().unwrap()
}

/// The answer to a harmless call is the host's block, with the host's blocking exit status.
fn assert_blocked(host: &str, o: &Output, why: &str) {
    let (d, reason) = decision(host, &stdout(o)).unwrap_or_else(|| panic!("{host}: no opinion: {}", stderr(o)));
    assert_eq!(d, "deny", "{host}");
    assert!(reason.starts_with("cmdguard: NOT RUN: cmdguard failed internally") && reason.contains(why), "{reason}");
    assert!(reason.contains("Do not try") && reason.contains("tell the user"), "{reason}");
    // Exit 2 blocks in Claude Code, Codex and Gemini CLI, which then read the reason on stderr;
    // Copilot skips a hook that exits non-zero, so it gets its deny JSON with exit 0.
    let want = if host == "copilot" { 0 } else { 2 };
    assert_eq!(code(o), want, "{host}: {}", stderr(o));
    assert!(stderr(o).contains(&reason), "{host}: {}", stderr(o));
}

#[test]
fn a_failed_analysis_blocks_in_every_host() {
    let t = TestEnv::new();
    let crashes = [
        ("panic", "crashed"),
        ("abort", "crashed"),
        // Passes only if the child's address space is capped: uncapped, the 64 GiB it reserves
        // fit, and the harmless call gets its usual no opinion.
        ("oom", "ran out of memory"),
        ("silent", "no valid answer"),
        ("torn", "no valid answer"),
        ("stray", "no valid answer"),
    ];
    for host in HOSTS {
        let input = call(host, "ls", 0);
        let o = t.run_with_input(&["hook", host], &input);
        assert_eq!((code(&o), decision(host, &stdout(&o))), (0, None), "{host}: ls passes: {}", stderr(&o));
        for (mode, why) in crashes {
            let mut cmd = t.command(["hook", host]);
            cmd.env("CMDGUARD_TEST_CRASH", mode);
            assert_blocked(host, &feed(cmd, &input), why);
        }
    }
}

#[test]
fn a_host_that_ignores_sigchld_still_gets_answers() {
    // SIGCHLD ignored is inherited through exec; children are then reaped by the kernel, and a
    // supervisor that relied on waitpid would take every answer for a crash.
    use std::os::unix::process::CommandExt;
    let t = TestEnv::new();
    for (command, want) in [("ls", None), ("rm -rf ~", Some("deny"))] {
        let mut cmd = t.command(["hook", "codex"]);
        // SAFETY: signal(2) is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGCHLD, libc::SIG_IGN);
                Ok(())
            });
        }
        let o = feed(cmd, &call("codex", command, 0));
        assert_eq!(code(&o), 0, "{command}: {}", stderr(&o));
        let got = decision("codex", &stdout(&o));
        assert_eq!(got.as_ref().map(|(d, _)| d.as_str()), want, "{command}: {got:?}");
        assert!(!stdout(&o).contains("failed internally"), "{}", stdout(&o));
    }
}

#[test]
fn a_hung_analysis_is_blocked_within_the_limit() {
    let t = TestEnv::new();
    let start = Instant::now();
    let hung: Vec<_> = HOSTS
        .iter()
        .map(|host| {
            let mut cmd = t.command(["hook", host]);
            cmd.env("CMDGUARD_TEST_CRASH", "hang").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            child.stdin.take().unwrap().write_all(call(host, "ls", 0).as_bytes()).unwrap();
            (host, child)
        })
        .collect();
    for (host, child) in hung {
        assert_blocked(host, &child.wait_with_output().unwrap(), "took longer than 10 s");
    }
    let took = start.elapsed();
    assert!(took >= Duration::from_secs(10) && took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn an_analysis_out_of_memory_under_ulimit_blocks() {
    // 60 MB of address space: enough to start and answer a small call, not to parse a 4 MB
    // call of 1.3 million empty arrays (about 45 MB as parsed values). Under about 40 MB the
    // debug binary, which grows with the packs' DFAs, cannot even read the call; at 120 MB it
    // parses it.
    let t = TestEnv::new();
    let limited = |host: &str| {
        let script = "ulimit -v 60000 && exec \"$0\" hook \"$1\"";
        t.program("bash", ["-c", script, env!("CARGO_BIN_EXE_cmdguard"), host])
    };
    for host in HOSTS {
        let o = feed(limited(host), &call(host, "ls", 0));
        assert_eq!((code(&o), decision(host, &stdout(&o))), (0, None), "{host}: small call: {}", stderr(&o));
        let big = call(host, "ls", 1_300_000);
        assert!(big.len() > 3 << 20 && big.len() < 4 << 20, "{}", big.len());
        let o = feed(limited(host), &big);
        assert!(stderr(&o).contains("memory allocation"), "{host}: not out of memory: {}", stderr(&o));
        assert_blocked(host, &o, "ran out of memory");
    }
}

#[test]
fn a_wrapper_that_dies_runs_nothing() {
    // `cmdguard -c` is not supervised: it replaces itself with the command only after deciding,
    // so dying before that (here: too little memory to start or to decide) runs nothing.
    let t = TestEnv::new();
    let mut died = 0;
    for kib in (2000..=40_000).step_by(2000) {
        let marker = t.project.join("ran");
        let script = format!("ulimit -v {kib} && exec \"$0\" -c 'touch ran'");
        let o = t.program("bash", ["-c", &script, env!("CARGO_BIN_EXE_cmdguard")]).output().unwrap();
        let ran = marker.exists();
        assert_eq!(ran, o.status.success(), "{kib} KiB: {:?} {}", o.status, stderr(&o));
        died += usize::from(std::os::unix::process::ExitStatusExt::signal(&o.status).is_some());
        let _ = std::fs::remove_file(marker);
    }
    assert!(died > 0, "no limit made cmdguard die: the test proves nothing");
}
