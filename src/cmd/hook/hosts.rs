//! The hosts whose calls do not follow Claude Code's shape: Cursor (`beforeShellExecution`),
//! Windsurf (Cascade's `pre_run_command`), OpenCode (the plugin `cmdguard hook install opencode`
//! writes) and Cline (`PreToolUse`). Each reads the shell command from where its host puts it
//! and answers in the host's blocking form; none of them can ask the user from a hook, so an
//! ask is a block whose reason tells the agent to ask. docs/integrations.md cites the formats.

use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::call::{Call, string_field};
use super::{Answer, Dialect};
use crate::cli::Host;

/// The dialect of a host this file reads.
pub(super) fn dialect(host: Host) -> Dialect {
    let read: Reader = match host {
        Host::Cursor => cursor,
        Host::Windsurf => windsurf,
        Host::Opencode => opencode,
        _ => cline,
    };
    Dialect {
        event: None,
        tool: "",
        shell_tool: "",
        input: "",
        input_as_text: false,
        session: "",
        can_ask: false,
        read: Some(read),
    }
}

/// Reads a call (already known to be a JSON object): `None` for a call that is not a shell command.
pub(super) type Reader = fn(&Map<String, Value>) -> Result<Option<Call>, String>;

/// `{"hook_event_name":"beforeShellExecution","conversation_id":…,"command":…,"cwd":…,"workspace_roots":[…]}`
fn cursor(call: &Map<String, Value>) -> Result<Option<Call>, String> {
    event(call, "hook_event_name", "beforeShellExecution")?;
    let command = string_field(call, "command")?.ok_or("the call has no \"command\" string")?;
    let cwd = string_field(call, "cwd")?.filter(|c| !c.is_empty()).map(PathBuf::from).or_else(|| first_root(call));
    Ok(Some(Call { command, session_key: key(call, "conversation_id")?, cwd }))
}

/// `{"agent_action_name":"pre_run_command","trajectory_id":…,"tool_info":{"command_line":…,"cwd":…}}`
fn windsurf(call: &Map<String, Value>) -> Result<Option<Call>, String> {
    event(call, "agent_action_name", "pre_run_command")?;
    let info = object(call, "tool_info")?;
    let command =
        string_field(info, "command_line")?.ok_or("the call has no \"command_line\" string in its \"tool_info\"")?;
    let cwd = string_field(info, "cwd")?.filter(|c| !c.is_empty()).map(PathBuf::from);
    Ok(Some(Call { command, session_key: key(call, "trajectory_id")?, cwd }))
}

/// What the generated plugin sends: `{"tool":…,"sessionID":…,"args":{"command":…},"cwd":…}`.
fn opencode(call: &Map<String, Value>) -> Result<Option<Call>, String> {
    let tool = string_field(call, "tool")?.ok_or("the call has no \"tool\" string")?;
    if tool != "bash" {
        return Ok(None);
    }
    let args = object(call, "args")?;
    let command = string_field(args, "command")?.ok_or("the bash call has no \"command\" string in its \"args\"")?;
    let cwd = string_field(call, "cwd")?.filter(|c| !c.is_empty()).map(PathBuf::from);
    Ok(Some(Call { command, session_key: key(call, "sessionID")?, cwd }))
}

/// `{"hookName":"PreToolUse","taskId":…,"workspaceRoots":[…],"preToolUse":{"toolName":…,"parameters":{…}}}`
fn cline(call: &Map<String, Value>) -> Result<Option<Call>, String> {
    event(call, "hookName", "PreToolUse")?;
    let pre = object(call, "preToolUse")?;
    let tool = string_field(pre, "toolName")?.ok_or("the call has no \"toolName\" string in its \"preToolUse\"")?;
    if tool != "execute_command" {
        return Ok(None);
    }
    let parameters = object(pre, "parameters")?;
    let command = string_field(parameters, "command")?
        .ok_or("the execute_command call has no \"command\" string in its \"parameters\"")?;
    Ok(Some(Call { command, session_key: key(call, "taskId")?, cwd: first_root(call) }))
}

fn event(call: &Map<String, Value>, field: &str, want: &str) -> Result<(), String> {
    match string_field(call, field)? {
        Some(e) if e == want => Ok(()),
        Some(e) => Err(format!("the hook ran for the {e:?} event; install `cmdguard hook` under {want}")),
        None => Err(format!("the call has no {field:?} string (expected {want:?})")),
    }
}

fn object<'a>(call: &'a Map<String, Value>, field: &str) -> Result<&'a Map<String, Value>, String> {
    match call.get(field) {
        Some(Value::Object(o)) => Ok(o),
        Some(_) => Err(format!("the call's {field:?} is not an object")),
        None => Err(format!("the call has no {field:?}")),
    }
}

fn key(call: &Map<String, Value>, field: &str) -> Result<Option<String>, String> {
    Ok(string_field(call, field)?.filter(|k| !k.is_empty()))
}

/// The first workspace root, where a host gives no working directory of its own.
fn first_root(call: &Map<String, Value>) -> Option<PathBuf> {
    let roots = call.get("workspace_roots").or_else(|| call.get("workspaceRoots"))?;
    roots.as_array()?.first()?.as_str().filter(|r| !r.is_empty()).map(PathBuf::from)
}

/// The host's JSON for an answer (one line), or `None` for a host `super::render` handles.
pub(super) fn render(host: Host, answer: Answer) -> Option<String> {
    let value = match (host, answer) {
        // Valid JSON without a decision: Cursor's own permission settings decide.
        (Host::Cursor, Answer::NoOpinion) => json!({}),
        (Host::Cursor, Answer::Ask(r) | Answer::Block(r)) => {
            json!({"permission": "deny", "user_message": r, "agent_message": r})
        }
        (Host::Windsurf | Host::Opencode, Answer::NoOpinion) => return Some(String::new()),
        // For Windsurf this is what `deliver` turns into exit 2 and the reason on stderr.
        (Host::Windsurf | Host::Opencode, Answer::Ask(r) | Answer::Block(r)) => {
            json!({"decision": "deny", "reason": r})
        }
        (Host::Cline, Answer::NoOpinion) => json!({"cancel": false}),
        (Host::Cline, Answer::Ask(r) | Answer::Block(r)) => json!({"cancel": true, "errorMessage": r}),
        _ => return None,
    };
    Some(format!("{value}\n"))
}

/// The exit status of a block when cmdguard itself failed: 0 where the host reads only a JSON
/// answer and skips a failed hook (Copilot, Cline), else 2, which blocks in the others (Cursor
/// with `failClosed`, as installed; the OpenCode plugin throws on any other status).
pub(super) fn failure_code(host: Host) -> u8 {
    match host {
        Host::Copilot | Host::Cline => 0,
        _ => crate::exit::HOOK_BLOCK,
    }
}

/// Writes the analysis's answer for the host; returns the exit status. Windsurf blocks only by
/// exit status 2 and shows stderr, so its block is turned into that. (The child that did the
/// analysis has exited by now: parsing here cannot meet the child's memory trouble.)
pub(super) fn deliver(host: Host, answer: &[u8]) -> u8 {
    if host == Host::Windsurf && !answer.is_empty() {
        let reason = serde_json::from_slice::<Value>(answer).ok().and_then(|v| v["reason"].as_str().map(String::from));
        let reason = reason.unwrap_or_else(|| "cmdguard: NOT RUN: cmdguard gave no readable answer".into());
        super::supervise::write_out(2, format!("{reason}\n").as_bytes());
        return crate::exit::HOOK_BLOCK;
    }
    super::supervise::write_out(1, answer);
    0
}

#[cfg(test)]
mod tests {
    use crate::cli::Host;
    use crate::cmd::hook::answer_for;
    use crate::rules::{Policy, Settings, compile::builtin_rules};

    #[test]
    fn each_host_blocks_in_its_own_form() {
        let policy = Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new());
        let cases = [
            (
                Host::Cursor,
                r#"{"hook_event_name":"beforeShellExecution","command":"rm -rf /"}"#,
                r#""permission":"deny""#,
            ),
            (
                Host::Windsurf,
                r#"{"agent_action_name":"pre_run_command","tool_info":{"command_line":"rm -rf /"}}"#,
                r#""decision":"deny""#,
            ),
            (Host::Opencode, r#"{"tool":"bash","args":{"command":"rm -rf /"}}"#, r#""decision":"deny""#),
            (
                Host::Cline,
                r#"{"hookName":"PreToolUse","preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf /"}}}"#,
                r#""cancel":true"#,
            ),
        ];
        for (host, call, block) in cases {
            let out = answer_for(host, call.as_bytes(), &policy);
            assert!(out.contains(block) && out.contains("rm-root"), "{host:?}: {out}");
            let out = answer_for(host, b"{not json", &policy);
            assert!(out.contains(block) && out.contains("not JSON"), "{host:?}: {out}");
        }
    }
}
