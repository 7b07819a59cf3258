//! The shell call in a host's JSON on stdin: read where the host's `Dialect` says, or by the
//! host's own reader (`hosts.rs`); anything missing or mistyped is said in words for the block.

use std::io::Read;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::{Dialect, MAX_CALL_BYTES};

/// A shell call as the host described it.
pub struct Call {
    pub command: String,
    pub session_key: Option<String>,
    pub cwd: Option<PathBuf>,
}

pub fn read_stdin() -> Result<Vec<u8>, String> {
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

/// The shell call in `input`; `None` for another tool; `Err` says what is wrong with the call.
pub fn read_call(d: &Dialect, input: &[u8]) -> Result<Option<Call>, String> {
    if input.iter().all(u8::is_ascii_whitespace) {
        return Err("standard input was empty: the host sent no tool call".into());
    }
    let value: Value = serde_json::from_slice(input).map_err(|e| format!("standard input is not JSON ({e})"))?;
    let call = value.as_object().ok_or("the call on standard input is not a JSON object")?;
    if let Some(read) = d.read {
        return read(call);
    }
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
pub fn string_field(call: &Map<String, Value>, name: &str) -> Result<Option<String>, String> {
    match call.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("the call's {name:?} is not a string")),
    }
}
