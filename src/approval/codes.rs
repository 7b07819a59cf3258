//! Approval codes: how a hook whose host cannot ask lets a person approve one stopped command.
//! The hook blocks the call with a reason carrying a short code; the person runs
//! `cmdguard approve CODE` in any terminal; the agent's retry of the same command, in the same
//! host session and working directory, passes. A code names exactly one command text (with
//! surrounding white space ignored), one session key hash and one directory, and nothing else.
//!
//! Codes live in one file of the private state directory (`codes.json`), changed only under the
//! lock of `codes.lock` and replaced by atomic rename, so of two retries racing for a once-code
//! exactly one takes it. Each code expires (`approval_code_ttl`, default 10 minutes, from when it
//! was made or approved); a code approved for the session lasts like a session grant, renewed by
//! each use. Expired codes are dropped whenever the file is changed.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::state;

const FILE: &str = "codes.json";
const LOCK: &str = "codes.lock";
/// Six characters of 22: about 113 million codes, and short enough to read out and type.
pub const LEN: usize = 6;
/// Most live codes kept; the oldest go first (a runaway agent cannot grow the file forever).
const MAX_CODES: usize = 200;

/// How far an approved code reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reach {
    /// The next retry passes, and uses the code up.
    Once,
    /// Every retry of the command in that session and directory passes until the code expires.
    Session,
}

/// One code and what it covers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Code {
    pub code: String,
    /// Hash of the host's session id; `None` when the call carried none.
    pub session: Option<String>,
    pub cwd: String,
    pub project: String,
    /// The command text, normalized (`normalize`).
    pub command: String,
    pub rules: Vec<String>,
    /// The host whose hook made it (`codex`, `copilot`, …).
    pub host: String,
    pub created: u64,
    /// Seconds since the epoch after which the code is void.
    pub expires: u64,
    /// `None` until a person approves it.
    pub approved: Option<Reach>,
}

impl Code {
    fn covers(&self, session: Option<&str>, cwd: &str, command: &str) -> bool {
        self.session.as_deref() == session && self.cwd == cwd && self.command == normalize(command)
    }
}

/// The command text a code is bound to: the text as the host sent it, less white space around
/// it (a retry that only adds a trailing newline is the same command).
pub fn normalize(command: &str) -> &str {
    command.trim()
}

/// Whether `text` could be a code (`approve` tells codes from queue ids with it).
pub fn looks_like_code(text: &str) -> bool {
    text.len() == LEN && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

fn path() -> Result<PathBuf> {
    Ok(state::dir()?.join(FILE))
}

fn load(path: &std::path::Path) -> Result<Vec<Code>> {
    match state::read_optional(path)? {
        None => Ok(Vec::new()),
        Some(bytes) => serde_json::from_slice(&bytes).with_context(|| {
            format!("{} is damaged; delete it (approval codes given out so far are then void)", path.display())
        }),
    }
}

/// Runs `change` on the live codes under the lock and saves the result if it says so.
fn update<T>(change: impl FnOnce(&mut Vec<Code>) -> (bool, T)) -> Result<T> {
    let path = path()?;
    let _lock = state::lock(&path.with_file_name(LOCK))?;
    let mut codes = load(&path)?;
    let before = codes.len();
    let now = state::now();
    codes.retain(|c| c.expires > now);
    let (changed, out) = change(&mut codes);
    if changed || codes.len() != before {
        if codes.len() > MAX_CODES {
            codes.drain(..codes.len() - MAX_CODES);
        }
        state::write_atomic(&path, &serde_json::to_vec_pretty(&codes)?, 0o600)?;
    }
    Ok(out)
}

/// The code for `template`'s command: the one already given out for the same command, session
/// and directory if it is still waiting for approval, else a new one lasting `ttl` seconds.
pub fn issue(template: Code, ttl: u64) -> Result<Code> {
    update(|codes| {
        if let Some(c) = codes
            .iter()
            .find(|c| c.approved.is_none() && c.covers(template.session.as_deref(), &template.cwd, &template.command))
        {
            return (false, c.clone());
        }
        let code = loop {
            let code = crate::approval::prompt::code::random_code(LEN);
            if !codes.iter().any(|c| c.code == code) {
                break code;
            }
        };
        let now = state::now();
        let made = Code {
            code,
            command: normalize(&template.command).to_string(),
            created: now,
            expires: now + ttl,
            approved: None,
            ..template
        };
        codes.push(made.clone());
        (true, made)
    })
}

/// Uses an approved code covering this call, if there is one: a once-code is removed (of two
/// racing callers, one gets it), a session code is renewed for `session_ttl` seconds.
pub fn take(session: Option<&str>, cwd: &str, command: &str, session_ttl: u64) -> Result<Option<Reach>> {
    // Nothing to look at, nothing to lock: no code was ever given out here.
    if !path()?.exists() {
        return Ok(None);
    }
    update(|codes| {
        let Some(i) = codes.iter().position(|c| c.approved.is_some() && c.covers(session, cwd, command)) else {
            return (false, None);
        };
        let reach = codes[i].approved;
        match reach {
            Some(Reach::Session) => codes[i].expires = state::now() + session_ttl,
            _ => drop(codes.remove(i)),
        }
        (true, reach)
    })
}

/// The live code `text` names (case does not matter), if any.
pub fn find(text: &str) -> Result<Option<Code>> {
    let wanted = text.trim().to_ascii_uppercase();
    if !looks_like_code(&wanted) {
        return Ok(None);
    }
    let now = state::now();
    Ok(load(&path()?)?.into_iter().find(|c| c.code == wanted && c.expires > now))
}

/// Every live code, oldest first.
pub fn all() -> Result<Vec<Code>> {
    let now = state::now();
    let mut codes: Vec<Code> = load(&path()?)?.into_iter().filter(|c| c.expires > now).collect();
    codes.sort_by_key(|c| c.created);
    Ok(codes)
}

/// Approves `code` for `reach`; a once-approval lasts `ttl` seconds from now, a session one
/// `session_ttl`. Fails if the code is gone or was approved already.
pub fn approve(code: &str, reach: Reach, ttl: u64, session_ttl: u64) -> Result<Code> {
    update(|codes| {
        let Some(c) = codes.iter_mut().find(|c| c.code == code) else {
            return (false, Err(anyhow::anyhow!("approval code {code} has expired or was used")));
        };
        if let Some(r) = c.approved {
            return (false, Err(anyhow::anyhow!("approval code {code} is already approved ({})", reach_name(r))));
        }
        c.approved = Some(reach);
        c.expires = state::now() + if reach == Reach::Session { session_ttl } else { ttl };
        (true, Ok(c.clone()))
    })?
}

/// Withdraws `code` (`cmdguard deny CODE`): the retry stays blocked and gets a new code.
pub fn void(code: &str) -> Result<()> {
    let removed = update(|codes| {
        let before = codes.len();
        codes.retain(|c| c.code != code);
        (codes.len() != before, codes.len() != before)
    })?;
    if !removed {
        bail!("approval code {code} has expired or was used");
    }
    Ok(())
}

pub fn reach_name(r: Reach) -> &'static str {
    match r {
        Reach::Once => "once",
        Reach::Session => "session",
    }
}

#[cfg(test)]
mod tests {
    use super::{LEN, looks_like_code, normalize};

    #[test]
    fn codes_are_short_and_bound_to_the_trimmed_text() {
        let code = crate::approval::prompt::code::random_code(LEN);
        assert!(looks_like_code(&code), "{code}");
        assert!(!looks_like_code("7f3c"));
        assert_eq!(normalize("  git push --force\n"), "git push --force");
        assert_ne!(normalize("rm -rf 'a b'"), normalize("rm -rf a b"));
    }
}
