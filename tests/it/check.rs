//! `check` and `explain`: decide without running.

use crate::env::{TestEnv, code, stderr, stdout};

#[test]
fn check_exit_codes_follow_the_verdict() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["check", "-c", "cargo test"])), 0);
    assert_eq!(code(&t.run(["check", "-c", "git reset --hard"])), 1);
    assert_eq!(code(&t.run(["check", "-c", "rm -rf ~"])), 2);
    assert_eq!(code(&t.run(["check", "--", "rm", "-rf", "/"])), 2);
    let o = t.run(["check", "-c", "touch ran; rm -rf ~"]);
    assert_eq!(code(&o), 2);
    assert!(!t.exists("ran"), "check never runs anything");
    assert!(stdout(&o).contains("filesystem.rm-root-or-home"));
}

#[test]
fn check_json_and_batch() {
    let t = TestEnv::new();
    let o = t.run(["--json", "check", "-c", "git push -f"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["verdict"], "ask");
    assert_eq!(v["rules"][0], "git.push-force");

    let o = t.run_with_input(&["check", "--batch"], "ls\ngit reset --hard\nrm -rf /\necho 'unterminated\n");
    assert_eq!(code(&o), 0);
    let lines: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let verdicts: Vec<&str> = lines.iter().map(|v| v["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["pass", "ask", "deny", "ask"]);
    assert_eq!(lines[1]["command"], "git reset --hard");
    assert_eq!(lines[3]["rules"][0], "core.unparseable");
}

#[test]
fn allow_shows_in_check() {
    let t = TestEnv::new();
    t.user_rules("[[allow]]\ncommand = \"git push --force origin wip\"\nreason = \"my branch\"\n");
    let o = t.run(["check", "-c", "git push --force origin wip"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).starts_with("allow:"), "{}", stdout(&o));
}

#[test]
fn explain_shows_every_step() {
    let t = TestEnv::new();
    let o = t.run(["explain", "-c", "sudo env X=1 bash -c \"r\\m -rf ~\""]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    for want in [
        "normalized:",
        "wrappers: sudo, env",
        "from:     bash -c",
        "[2] rm -rf ~",
        "filesystem.rm-root-or-home (deny) on segment [2]",
        "verdict: deny",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
}

#[test]
fn per_operand_exceptions() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["check", "-c", "rm -rf target dist"])), 0);
    assert_eq!(code(&t.run(["check", "-c", "rm -rf target src"])), 1);
}

#[test]
fn heredoc_fed_to_a_shell_is_checked() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["check", "-c", "bash <<'EOF'\nrm -rf ~\nEOF"])), 2);
    assert_eq!(code(&t.run(["check", "-c", "cat <<'EOF'\nrm -rf ~\nEOF"])), 0);
}

#[test]
fn batch_stops_quietly_when_the_reader_goes_away() {
    use std::io::{BufRead, BufReader, Write};
    let t = TestEnv::new();
    let mut child = t
        .command(["check", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all("git status\n".repeat(50_000).as_bytes());
    });
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.contains("\"verdict\":\"pass\""), "{first}");
    // The reader is dropped here, as `| head -1` would.
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn a_shell_in_argv_form_reads_the_agents_input() {
    let t = TestEnv::new();
    // `echo 'rm -rf ~' | cmdguard -- bash -c sh`: the inner sh reads what the agent piped in.
    let o = t.run_with_input(&["check", "--", "bash", "-c", "sh"], "rm -rf ~\n");
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(stdout(&o).contains("core.dynamic"), "{}", stdout(&o));
}

#[test]
fn the_dialect_follows_the_shell_that_runs_the_text() {
    let t = TestEnv::new();
    assert_eq!(code(&t.run(["--shell", "/usr/bin/dash", "check", "-c", "((rm -rf ~))"])), 2);
    assert_eq!(code(&t.run(["--shell", "/usr/bin/bash", "check", "-c", "((rm -rf ~))"])), 0);
    assert_eq!(code(&t.run(["--shell", "/usr/bin/bash", "check", "-c", "let 'a[$(rm -rf ~)]'"])), 2);
}

#[test]
fn a_closed_stdout_still_gets_the_verdict_code() {
    // `cmdguard check -c X | head -c0`: the reader is gone before cmdguard writes. A pipe with
    // no reader makes every write fail (EPIPE), deterministically.
    let t = TestEnv::new();
    for (command, verdict) in [("cargo test", 0), ("git reset --hard", 1), ("rm -rf ~", 2)] {
        for json in [false, true] {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let args: &[&str] = if json { &["--json", "check", "-c", command] } else { &["check", "-c", command] };
            let o = t.command(args).stdout(writer).output().unwrap();
            assert_eq!(code(&o), verdict, "{command} (json: {json}): {}", stderr(&o));
            assert_eq!(stderr(&o), "", "{command}: quiet");
        }
    }
}
