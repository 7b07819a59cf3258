//! `cmdguard hook <host>`: an agent host's pre-tool-use hook. The host writes the tool call as
//! JSON on stdin; a shell call is judged by the same engine as `cmdguard -c`, and the answer is
//! written in the host's format. docs/integrations.md records each host's documented format.
//!
//! Every answer is one the host reads: a command that passes leaves the host's own permission
//! system in charge ("no opinion"), never a blanket allow. Anything cmdguard cannot read — not
//! JSON, a missing command, a broken configuration, an internal error — blocks with a reason.
//! The analysis runs supervised (`supervise.rs`): if it crashes, runs out of memory or hangs,
//! the supervising process blocks the call in the host's format.

mod supervise;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::{Map, Value, json};

use self::supervise::{Failure, Fallback};
use crate::approval::audit::DecidedBy;
use crate::cli::{Global, HookArgs, Host};
use crate::decide::{Decision, Verdict, decide};
use crate::report::NotRun;
use crate::rules::Policy;
use crate::shell::analyze_script_in;
use crate::term::escape;

/// Largest call read from stdin; a bigger one is blocked, not truncated.
const MAX_CALL_BYTES: u64 = 4 << 20;
/// Longest command text quoted back in a reason: hosts cap what they read from a hook.
const MAX_SHOWN_COMMAND: usize = 300;
/// Longest reason written; the end (who decided, what to do) is always kept.
const MAX_REASON: usize = 6000;

/// Where a host puts the facts of a call.
struct Dialect {
    /// `hook_event_name` the call must carry, for hosts that send it.
    event: Option<&'static str>,
    tool: &'static str,
    /// The tool that runs shell text; other tools pass untouched.
    shell_tool: &'static str,
    input: &'static str,
    /// The tool arguments may come as JSON text rather than an object.
    input_as_text: bool,
    session: &'static str,
    /// The host has an answer that asks the user.
    can_ask: bool,
}

fn dialect(host: Host) -> Dialect {
    let claude_like = |can_ask| Dialect {
        event: Some("PreToolUse"),
        tool: "tool_name",
        shell_tool: "Bash",
        input: "tool_input",
        input_as_text: false,
        session: "session_id",
        can_ask,
    };
    match host {
        Host::ClaudeCode => claude_like(true),
        Host::Codex => claude_like(false),
        Host::Copilot => Dialect {
            event: None,
            tool: "toolName",
            shell_tool: "bash",
            input: "toolArgs",
            input_as_text: true,
            session: "sessionId",
            can_ask: false,
        },
        Host::Gemini => Dialect {
            event: Some("BeforeTool"),
            tool: "tool_name",
            shell_tool: "run_shell_command",
            input: "tool_input",
            input_as_text: false,
            session: "session_id",
            can_ask: false,
        },
    }
}

/// What the host is told.
enum Answer {
    /// The host's own permission system decides.
    NoOpinion,
    /// The user is asked to confirm; the text is for the user.
    Ask(String),
    /// The call does not run; the text is for the agent.
    Block(String),
}

/// A shell call as the host described it.
struct Call {
    command: String,
    session_key: Option<String>,
    cwd: Option<PathBuf>,
}

pub fn run(global: &Global, args: &HookArgs) -> Result<u8> {
    let host = args.host;
    answer_panics(host);
    Ok(supervise::run(
        |failure| fallback(host, failure),
        || {
            let answer = match read_stdin() {
                Ok(input) => judge(global, host, &input),
                Err(why) => blocked(&why),
            };
            render(host, answer).into_bytes()
        },
    ))
}

/// The host's block when the analysis itself failed, said on every channel the host might
/// read: the deny JSON on stdout, the reason on stderr, and exit 2 where that blocks (Claude
/// Code, Codex and Gemini CLI read only stderr then); Copilot ignores failed hooks, so exit 0.
fn fallback(host: Host, failure: Failure) -> Fallback {
    let what = match failure {
        Failure::NotStarted => "its analysis could not be started".to_string(),
        Failure::Crashed => "its analysis crashed or ran out of memory".to_string(),
        Failure::TimedOut => format!("its analysis took longer than {} s", supervise::LIMIT.as_secs()),
        Failure::NoAnswer => "its analysis gave no valid answer".to_string(),
    };
    let reason = format!(
        "cmdguard: NOT RUN: cmdguard failed internally ({what}), so this tool call was not checked and was blocked. \
         Do not try to run the command another way; tell the user, who can run it themselves if it is safe."
    );
    Fallback {
        stderr: format!("{reason}\n").into_bytes(),
        stdout: render(host, Answer::Block(reason)).into_bytes(),
        code: if host == Host::Copilot { 0 } else { crate::exit::HOOK_BLOCK },
    }
}

fn read_stdin() -> Result<Vec<u8>, String> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_CALL_BYTES + 1)
        .read_to_end(&mut input)
        .map_err(|e| format!("standard input could not be read: {e}"))?;
    if input.len() as u64 > MAX_CALL_BYTES {
        return Err(format!("the call on standard input is over {} MiB", MAX_CALL_BYTES >> 20));
    }
    Ok(input)
}

fn judge(global: &Global, host: Host, input: &[u8]) -> Answer {
    let d = dialect(host);
    let call = match read_call(&d, input) {
        Ok(Some(call)) => call,
        Ok(None) => return Answer::NoOpinion,
        Err(why) => return blocked(&why),
    };
    let cwd = match call.cwd {
        Some(dir) if dir.is_dir() => dir,
        Some(dir) => {
            let why = format!(
                "the call's working directory {} is not a directory, so cmdguard cannot tell which rules apply",
                escape(&dir.to_string_lossy())
            );
            return blocked(&why);
        }
        None => match super::cwd() {
            Ok(dir) => dir,
            Err(e) => return blocked(&escape(&format!("{e:#}"))),
        },
    };
    let policy = match crate::config::load(&cwd, &global.rules) {
        Ok(policy) => policy,
        Err(e) => {
            return Answer::Block(format!(
                "cmdguard: NOT RUN: cmdguard's configuration is broken, so no command can be checked: {}. \
                 Tell the user to fix that file; do not try to run the command another way.",
                escape(&e.to_string())
            ));
        }
    };
    let decision = decide_for_host(&policy, &call.command, call.session_key.as_deref(), &cwd);
    if global.is_audit(&policy) {
        crate::approval::trial::record_hook(&policy, &call.command, &decision, call.session_key.as_deref(), &cwd);
        return Answer::NoOpinion;
    }
    answer(&d, &policy, &call.command, &decision)
}

/// The host's answer to a call under `policy`, without session grants or a working directory:
/// the entry of the `hook_payload` fuzz target, which checks that every input gets an answer.
pub fn answer_for(host: Host, input: &[u8], policy: &Policy) -> String {
    let d = dialect(host);
    let answer = match read_call(&d, input) {
        Ok(Some(call)) => {
            let analysis = analyze_script_in(&call.command, crate::shell::Dialect::Both);
            answer(&d, policy, &call.command, &decide(policy, &analysis))
        }
        Ok(None) => Answer::NoOpinion,
        Err(why) => blocked(&why),
    };
    render(host, answer)
}

/// What the host is told about a command given the decision on it.
fn answer(d: &Dialect, policy: &Policy, command: &str, decision: &Decision) -> Answer {
    let shown = shorten(command);
    match decision.verdict {
        Verdict::Pass | Verdict::Allow => Answer::NoOpinion,
        Verdict::Ask if d.can_ask => Answer::Ask(bounded(approval(&shown, policy, decision))),
        Verdict::Ask => {
            let not_run = NotRun {
                by: DecidedBy::NoTerminal,
                detail: Some("this agent host's hook has no way to ask the user"),
                reason: None,
                hint: None,
            };
            Answer::Block(bounded(crate::report::refusal(&shown, policy, decision, false, &not_run)))
        }
        Verdict::Deny => Answer::Block(bounded(crate::report::refusal(
            &shown,
            policy,
            decision,
            false,
            &NotRun::by(DecidedBy::Rule),
        ))),
    }
}

/// The decision on one command of a host's call. The session key (from the call, never the
/// environment) and the directory are what session grants are looked up by.
fn decide_for_host(policy: &Policy, command: &str, session_key: Option<&str>, cwd: &Path) -> Decision {
    // The hosts run their shell tool's commands with the user's shell (bash, zsh, sometimes
    // sh): text that bash and dash read differently is judged both ways.
    let mut decision = decide(policy, &analyze_script_in(command, crate::shell::Dialect::Both));
    if decision.verdict == Verdict::Ask
        && let Some(key) = session_key
    {
        let need = super::run::need(policy, &decision, command);
        let project = crate::config::project_root(cwd);
        // A grant this session was given (by `cmdguard approve --scope session`, or at a prompt
        // under the same key) covers the command; a grant file that cannot be read does not.
        if crate::approval::session::covers(key, &project, &need, policy.settings.session_ttl).unwrap_or(false) {
            decision.verdict = Verdict::Allow;
        }
    }
    decision
}

/// The shell call in `input`; `None` for another tool; `Err` says what is wrong with the call.
fn read_call(d: &Dialect, input: &[u8]) -> Result<Option<Call>, String> {
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err("standard input was empty: the host sent no tool call".into());
    }
    let value: Value = serde_json::from_slice(input).map_err(|e| format!("standard input is not JSON ({e})"))?;
    let call = value.as_object().ok_or("the call on standard input is not a JSON object")?;
    if let Some(event) = d.event {
        match call.get("hook_event_name") {
            Some(Value::String(e)) if e == event => {}
            Some(Value::String(e)) => {
                return Err(format!("the hook ran for the {e:?} event; install `cmdguard hook` under {event}"));
            }
            _ => return Err(format!("the call has no \"hook_event_name\" string (expected {event:?})")),
        }
    }
    let tool = string_field(call, d.tool)?.ok_or_else(|| format!("the call has no {:?} string", d.tool))?;
    if tool != d.shell_tool {
        return Ok(None);
    }
    let session_key = string_field(call, d.session)?.filter(|k| !k.is_empty());
    let cwd = string_field(call, "cwd")?.map(PathBuf::from);
    let parsed;
    let arguments = match call.get(d.input) {
        Some(Value::String(text)) if d.input_as_text => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|e| format!("the {:?} of the {tool} call are not JSON ({e})", d.input))?;
            &parsed
        }
        Some(v) => v,
        None => return Err(format!("the {tool} call has no {:?}", d.input)),
    };
    let command = match arguments.get("command") {
        Some(Value::String(c)) => c.clone(),
        Some(_) => return Err(format!("the \"command\" in the {:?} of the {tool} call is not a string", d.input)),
        None => return Err(format!("the {tool} call has no \"command\" string in its {:?}", d.input)),
    };
    Ok(Some(Call { command, session_key, cwd }))
}

/// A field that must be a string when present (`null` counts as absent).
fn string_field(call: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match call.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("the call's {name:?} is not a string")),
    }
}

fn blocked(why: &str) -> Answer {
    Answer::Block(format!(
        "cmdguard: NOT RUN: cmdguard could not check this tool call, so it was blocked: {why}. \
         Do not try to run the command another way; tell the user, whose cmdguard hook setup may need fixing."
    ))
}

/// What the user reads in the host's confirmation prompt.
fn approval(command: &str, policy: &Policy, decision: &Decision) -> String {
    let mut out = format!("cmdguard: this command needs your approval: {}", escape(command));
    for id in decision.rule_ids(policy) {
        match policy.rules.iter().find(|r| r.id == id) {
            Some(r) => out.push_str(&format!("\n  rule {id}: {}", escape(&r.reason))),
            None => {
                for c in decision.concerns.iter().filter(|c| c.id == id) {
                    out.push_str(&format!("\n  {id}: {}", escape(&c.detail)));
                }
            }
        }
    }
    out
}

/// The command as quoted in a reason: at most `MAX_SHOWN_COMMAND` characters.
fn shorten(command: &str) -> String {
    match command.char_indices().nth(MAX_SHOWN_COMMAND) {
        Some((end, _)) => format!("{} … ({} bytes in all)", &command[..end], command.len()),
        None => command.to_string(),
    }
}

/// `text` cut in the middle to at most about `MAX_REASON` bytes, keeping both ends.
fn bounded(text: String) -> String {
    if text.len() <= MAX_REASON {
        return text;
    }
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let head = floor(MAX_REASON * 2 / 3);
    let tail = floor(text.len() - MAX_REASON / 3);
    format!("{}\n  … (cut)\n{}", &text[..head], &text[tail..])
}

/// The host's JSON for an answer, written to stdout with exit status 0.
fn render(host: Host, answer: Answer) -> String {
    let value = match (host, answer) {
        (Host::Gemini, Answer::NoOpinion) => json!({}),
        (_, Answer::NoOpinion) => return String::new(),
        (Host::ClaudeCode | Host::Codex, Answer::Ask(reason)) => claude_output("ask", reason),
        (Host::ClaudeCode | Host::Codex, Answer::Block(reason)) => claude_output("deny", reason),
        (Host::Copilot, Answer::Ask(reason) | Answer::Block(reason)) => {
            json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
        }
        (Host::Gemini, Answer::Ask(reason) | Answer::Block(reason)) => json!({"decision": "deny", "reason": reason}),
    };
    format!("{value}\n")
}

fn claude_output(decision: &str, reason: String) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": decision,
        "permissionDecisionReason": reason,
    }})
}

/// Replaces the "not run, exit 77" panic answer, which hosts read as a failed hook and then
/// run the call, for the supervising process before it forks: exit 2 with the reason on stderr
/// blocks in Claude Code, Codex and Gemini CLI; Copilot skips failed hooks, so it gets its deny
/// JSON. (The analysis, in the child, aborts on a panic; the supervisor answers for it.)
fn answer_panics(host: Host) {
    std::panic::set_hook(Box::new(move |info| {
        let reason = format!("cmdguard: internal error, the tool call was not checked and must not run: {info}");
        if host == Host::Copilot {
            println!("{}", json!({"permissionDecision": "deny", "permissionDecisionReason": reason}));
            std::process::exit(0);
        }
        eprintln!("{reason}");
        std::process::exit(i32::from(crate::exit::HOOK_BLOCK));
    }));
}

#[cfg(test)]
mod tests {
    use super::{MAX_REASON, answer_for, bounded, shorten};
    use crate::cli::Host;
    use crate::rules::{Policy, Settings, compile::builtin_rules};

    #[test]
    fn every_host_blocks_what_is_not_json_and_denies_a_deny_rule() {
        let policy = Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new());
        let claude = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}"#;
        for host in [Host::ClaudeCode, Host::Codex, Host::Copilot, Host::Gemini] {
            let out = answer_for(host, b"{not json", &policy);
            assert!(out.contains("\"deny\"") && out.contains("not JSON"), "{host:?}: {out}");
        }
        let out = answer_for(Host::ClaudeCode, claude.as_bytes(), &policy);
        assert!(out.contains("\"permissionDecision\":\"deny\"") && out.contains("rm-root"), "{out}");
    }

    #[test]
    fn long_text_is_cut_keeping_both_ends() {
        assert_eq!(shorten("git status"), "git status");
        let long = format!("{}é", "x".repeat(400));
        let short = shorten(&long);
        assert!(short.starts_with(&"x".repeat(300)) && short.ends_with("(402 bytes in all)"), "{short}");
        let text = format!("start {} end", "é".repeat(10_000));
        let cut = bounded(text);
        assert!(cut.len() <= MAX_REASON + 20 && cut.starts_with("start ") && cut.ends_with(" end"));
        assert!(cut.contains("… (cut)"));
    }
}
