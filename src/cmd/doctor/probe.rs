//! The live probe: this binary's `hook claude-code` given two calls as Claude Code sends them, a
//! harmless one and a dangerous one, in the working directory's configuration. The answers must
//! be "no opinion" and "deny"; anything else means a host would get the wrong answer here.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Check, Status};
use crate::cli::Global;

const HARMLESS: &str = "ls";
const DANGEROUS: &str = "rm -rf ~";
const TIMEOUT: Duration = Duration::from_secs(10);

struct Answer {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

pub fn run(global: &Global, cwd: &Path) -> Check {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Check::new("probe", Status::Fail, format!("cannot find this binary to run its hook: {e}")),
    };
    let (harmless, dangerous) = match (call(&exe, global, cwd, HARMLESS), call(&exe, global, cwd, DANGEROUS)) {
        (Ok(h), Ok(d)) => (h, d),
        (Err(e), _) | (_, Err(e)) => {
            return Check::new("probe", Status::Fail, format!("`{} hook claude-code` {e}", exe.display()));
        }
    };
    let mut wrong = Vec::new();
    if !(harmless.code == Some(0) && harmless.stdout.trim().is_empty()) {
        wrong.push(format!("`{HARMLESS}` got {}, not \"no opinion\"", describe(&harmless)));
    }
    if !(dangerous.code == Some(0) && decision(&dangerous.stdout).as_deref() == Some("deny")) {
        wrong.push(format!("`{DANGEROUS}` got {}, not deny", describe(&dangerous)));
    }
    if wrong.is_empty() {
        Check::new(
            "probe",
            Status::Ok,
            format!("`cmdguard hook claude-code` gave no opinion on `{HARMLESS}` and denied `{DANGEROUS}`"),
        )
    } else {
        Check::new("probe", Status::Fail, format!("`cmdguard hook claude-code` answered wrongly: {}", wrong.join("; ")))
            .hint(format!("see what the rules decide here: cmdguard check -c '{DANGEROUS}', cmdguard rules path"))
    }
}

/// Runs the hook on one Bash call; `Err` says why it gave no answer.
fn call(exe: &Path, global: &Global, cwd: &Path, command: &str) -> Result<Answer, String> {
    let input = json!({
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": cwd.to_string_lossy(),
    });
    let mut cmd = Command::new(exe);
    for file in &global.rules {
        cmd.arg("--rules").arg(file);
    }
    cmd.args(["hook", "claude-code"])
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("could not be started: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that exits without reading its input has answered anyway; its answer is judged.
        let _ = stdin.write_all(input.to_string().as_bytes());
    }
    let deadline = Instant::now() + TIMEOUT;
    // Answers are a few KiB at most, so the child never blocks on a full pipe while we wait.
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("gave no answer within {} seconds", TIMEOUT.as_secs()));
            }
            Err(e) => return Err(format!("could not be waited for: {e}")),
        }
    }
    let out = child.wait_with_output().map_err(|e| format!("could not be read: {e}"))?;
    Ok(Answer {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// `permissionDecision` of a Claude Code hook answer.
fn decision(stdout: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    v.pointer("/hookSpecificOutput/permissionDecision")?.as_str().map(String::from)
}

/// An answer in a few words, for the report.
fn describe(a: &Answer) -> String {
    let cut = |s: &str| -> String {
        let s = s.trim();
        match s.char_indices().nth(200) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_string(),
        }
    };
    if a.code != Some(0) {
        let code = a.code.map_or_else(|| "a signal".to_string(), |c| format!("exit {c}"));
        return format!("{code} ({})", cut(&a.stderr));
    }
    if a.stdout.trim().is_empty() {
        return "no opinion".into();
    }
    let v: Value = serde_json::from_str(a.stdout.trim()).unwrap_or(Value::Null);
    match (decision(&a.stdout), v.pointer("/hookSpecificOutput/permissionDecisionReason").and_then(Value::as_str)) {
        (Some(d), Some(reason)) => format!("{d} ({})", cut(reason)),
        _ => format!("an answer it could not read ({})", cut(&a.stdout)),
    }
}
