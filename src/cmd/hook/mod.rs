//! `cmdguard hook <host>`: an agent host's pre-tool-use hook. The host writes the tool call as
//! JSON on stdin; a shell call is judged by the same engine as `cmdguard -c`, and the answer is
//! written in the host's format. docs/integrations.md records each host's documented format.
//!
//! Every answer is one the host reads: a command that passes leaves the host's own permission
//! system in charge ("no opinion"), never a blanket allow. Anything cmdguard cannot read — not
//! JSON, a missing command, a broken configuration, an internal error — blocks with a reason.
//! The analysis runs supervised (`supervise.rs`): if it crashes, runs out of memory or hangs,
//! the supervising process blocks the call in the host's format.

mod approve;
mod call;
mod hosts;
mod install;
mod plugin;
mod settings;
mod settings_toml;
mod supervise;

use std::path::Path;

use anyhow::Result;
use serde_json::{Value, json};

use self::call::{read_call, read_stdin};
use self::supervise::{Failure, Fallback};
use crate::approval::audit::DecidedBy;
use crate::cli::{Global, HookArgs, Host};
use crate::cmd::UsageError;
use crate::decide::{Decision, Verdict, decide};
use crate::report::NotRun;
use crate::rules::Policy;
use crate::shell::analyze_script_in;
use crate::term::escape;

/// Largest call read from stdin; a bigger one is blocked, not truncated.
const MAX_CALL_BYTES: u64 = 4 << 20;
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
    /// Reads the call where the fields above do not describe it (`hosts.rs`).
    read: Option<hosts::Reader>,
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
        read: None,
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
            read: None,
        },
        Host::Gemini => Dialect {
            event: Some("BeforeTool"),
            tool: "tool_name",
            shell_tool: "run_shell_command",
            input: "tool_input",
            input_as_text: false,
            session: "session_id",
            can_ask: false,
            read: None,
        },
        other => hosts::dialect(other),
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

pub fn run(global: &Global, args: &HookArgs) -> Result<u8> {
    let host = match (&args.setup, args.host) {
        (Some(setup), _) => return install::run(setup),
        (None, Some(host)) => host,
        (None, None) => return Err(UsageError("name the agent host: `cmdguard hook HOST`".into()).into()),
    };
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
        |answer| hosts::deliver(host, answer),
    ))
}

/// The host's block when the analysis itself failed, said on every channel the host might
/// read: the deny JSON on stdout, the reason on stderr, and exit 2 where that blocks (Claude
/// Code, Codex, Gemini CLI, Windsurf read only stderr then); Copilot and Cline skip failed
/// hooks, so exit 0 (`hosts::failure_code`).
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
        stdout: if host == Host::Windsurf { Vec::new() } else { render(host, Answer::Block(reason)).into_bytes() },
        code: hosts::failure_code(host),
    }
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
    let (analysis, decision) = decide_for_host(&policy, &call.command, call.session_key.as_deref(), &cwd);
    if global.is_audit(&policy) {
        crate::approval::trial::record_hook(&policy, &call.command, &decision, call.session_key.as_deref(), &cwd);
        return Answer::NoOpinion;
    }
    if decision.verdict == Verdict::Ask {
        let asked = approve::Asked {
            host,
            can_ask: d.can_ask,
            policy: &policy,
            command: &call.command,
            session_key: call.session_key.as_deref(),
            cwd: &cwd,
            decision: &decision,
            analysis: &analysis,
            stake: Default::default(),
            no_tty: global.no_tty.unwrap_or(policy.settings.no_tty),
        };
        if let Some(answer) = approve::on_ask(&asked) {
            return answer;
        }
    }
    let stake = crate::blast::stake(&policy, &analysis, &decision, &cwd);
    answer(&d, &policy, &call.command, &decision, stake.as_deref())
}

/// The host's answer to a call under `policy`, without session grants or a working directory:
/// the entry of the `hook_payload` fuzz target, which checks that every input gets an answer.
pub fn answer_for(host: Host, input: &[u8], policy: &Policy) -> String {
    let d = dialect(host);
    let answer = match read_call(&d, input) {
        Ok(Some(call)) => {
            let analysis = analyze_script_in(&call.command, crate::shell::Dialect::Both);
            answer(&d, policy, &call.command, &decide(policy, &analysis), None)
        }
        Ok(None) => Answer::NoOpinion,
        Err(why) => blocked(&why),
    };
    render(host, answer)
}

/// What the host is told about a command given the decision on it.
fn answer(d: &Dialect, policy: &Policy, command: &str, decision: &Decision, stake: Option<&str>) -> Answer {
    // Cut around the part a rule matched, so a long command's reason keeps what matters.
    let shown = crate::report::bounded_command(command, policy, decision);
    match decision.verdict {
        Verdict::Pass | Verdict::Allow => Answer::NoOpinion,
        Verdict::Ask if d.can_ask => Answer::Ask(bounded(approval(&shown, policy, decision, stake))),
        Verdict::Ask => {
            let not_run = NotRun {
                by: DecidedBy::NoTerminal,
                detail: Some("this agent host's hook has no way to ask the user"),
                reason: None,
                hint: None,
            };
            Answer::Block(bounded(crate::report::refusal(&shown, policy, decision, false, &not_run, stake)))
        }
        Verdict::Deny => Answer::Block(bounded(crate::report::refusal(
            &shown,
            policy,
            decision,
            false,
            &NotRun::by(DecidedBy::Rule),
            stake,
        ))),
    }
}

/// The decision on one command of a host's call. The session key (from the call, never the
/// environment) and the directory are what session grants are looked up by.
fn decide_for_host(
    policy: &Policy,
    command: &str,
    session_key: Option<&str>,
    cwd: &Path,
) -> (crate::shell::Analysis, Decision) {
    // The hosts run their shell tool's commands with the user's shell (bash, zsh, sometimes
    // sh): text that bash and dash read differently is judged both ways.
    let analysis = analyze_script_in(command, crate::shell::Dialect::Both);
    let mut decision = decide(policy, &analysis);
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
    (analysis, decision)
}

fn blocked(why: &str) -> Answer {
    Answer::Block(format!(
        "cmdguard: NOT RUN: cmdguard could not check this tool call, so it was blocked: {why}. \
         Do not try to run the command another way; tell the user, whose cmdguard hook setup may need fixing."
    ))
}

/// What the user reads in the host's confirmation prompt.
fn approval(command: &str, policy: &Policy, decision: &Decision, stake: Option<&str>) -> String {
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
    if let Some(s) = stake {
        out.push_str(&format!("\n  at stake: {}", escape(s)));
    }
    out
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
        (Host::Cursor | Host::Windsurf | Host::Opencode | Host::Cline, answer) => {
            return hosts::render(host, answer).unwrap_or_default();
        }
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
        if hosts::failure_code(host) == 0 {
            print!("{}", render(host, Answer::Block(reason)));
            std::process::exit(0);
        }
        eprintln!("{reason}");
        std::process::exit(i32::from(crate::exit::HOOK_BLOCK));
    }));
}

#[cfg(test)]
mod tests {
    use super::{MAX_REASON, answer_for, bounded};
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
        let text = format!("start {} end", "é".repeat(10_000));
        let cut = bounded(text);
        assert!(cut.len() <= MAX_REASON + 20 && cut.starts_with("start ") && cut.ends_with(" end"));
        assert!(cut.contains("… (cut)"));
    }
}
