//! `cmdguard approve CODE` and `deny CODE`: the human side of hook mode's approval codes
//! (`approval::codes`). Like the queue's `approve`, it acts only for a person at an interactive
//! terminal, shows the escaped command, and approves only once a code shown on the screen is
//! typed back, so an agent that reads the approval code cannot approve its own command by
//! piping keys.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::approval::codes::{self, Code, Reach};
use crate::cli::Scope;
use crate::state;
use crate::term::escape;

/// A code as `pending` and the confirmation show it.
pub fn describe(c: &Code, now: u64) -> String {
    let session = c.session.as_deref().map_or("-".to_string(), |h| h[..8].to_string());
    let left = state::human_duration(c.expires.saturating_sub(now));
    let status = match c.approved {
        Some(r) => format!("approved ({}), waiting for the retry", codes::reach_name(r)),
        None => "waiting for `cmdguard approve`".into(),
    };
    let mut out = format!("{:<14}{session:<11}{left:<7}{}\n", c.code, escape(&c.project));
    out.push_str(&format!("    command: {}\n", escape(&c.command)));
    if c.cwd != c.project {
        out.push_str(&format!("    in:      {}\n", escape(&c.cwd)));
    }
    out.push_str(&format!("    rules:   {}\n", c.rules.join(", ")));
    out.push_str(&format!("    host:    {}; {status}\n", escape(&c.host)));
    out
}

/// `approve CODE`: returns `None` when `id` is not a live code (then it names a queue request).
pub fn approve(id: &str, all: bool, scope: Option<Scope>) -> Result<Option<u8>> {
    let Some(code) = codes::find(id)? else { return Ok(None) };
    if all {
        bail!(super::UsageError(format!("give an approval code ({}) or --all, not both", code.code)));
    }
    let reach = match scope {
        Some(Scope::Once) => Some(Reach::Once),
        Some(Scope::Session) if code.session.is_none() => {
            bail!("--scope session needs a call that carried a session id; this one did not")
        }
        Some(Scope::Session) => Some(Reach::Session),
        Some(Scope::Always) => bail!(
            "--scope always is not offered for an approval code: approve it once or for the session, or add an [[allow]] entry yourself"
        ),
        None => None,
    };
    super::queue::require_terminal("approve")?;
    if let Some(r) = code.approved {
        bail!(
            "approval code {} is already approved ({}); the agent's retry will pass",
            code.code,
            codes::reach_name(r)
        );
    }
    let mut text = format!("\ncmdguard approve: approval code\n{}", describe(&code, state::now()));
    let reach = match reach {
        Some(r) => r,
        None => {
            let mut keys = vec!['o'];
            text.push_str("Approve how? [o] once");
            if code.session.is_some() {
                keys.push('s');
                text.push_str("  [s] this command for the session");
            }
            text.push_str("  (any other key cancels) ");
            let chosen = match crate::approval::prompt::choose(&text, &keys, Duration::from_secs(120)) {
                Ok(k) => k,
                Err(crate::approval::prompt::NoTerminal(why)) => bail!("cannot confirm on the terminal: {why}"),
            };
            text = String::new();
            match chosen {
                Some('s') => Reach::Session,
                Some(_) => Reach::Once,
                None => return cancelled(),
            }
        }
    };
    text.push_str(&format!("Approve ({})? ", codes::reach_name(reach)));
    match crate::approval::prompt::confirm_with_code(&text, Duration::from_secs(120)) {
        Ok(true) => {}
        Ok(false) => return cancelled(),
        Err(crate::approval::prompt::NoTerminal(why)) => bail!("cannot confirm on the terminal: {why}"),
    }
    let (ttl, session_ttl) = match crate::config::load(Path::new(&code.cwd), &[]) {
        Ok(p) => (p.settings.code_ttl, p.settings.session_ttl),
        Err(_) => (600, 8 * 3600),
    };
    let done = codes::approve(&code.code, reach, ttl, session_ttl)?;
    let reach_text = match reach {
        Reach::Once => format!("once (for {})", state::human_duration(ttl)),
        Reach::Session => "for this session".to_string(),
    };
    println!(
        "approved {} {reach_text}: {}\nthe agent's retry of exactly this command, from {}, will run",
        done.code,
        escape(&done.command),
        escape(&done.cwd)
    );
    Ok(Some(0))
}

/// `deny CODE`: withdraws the code; `None` when `id` is not a live code.
pub fn deny(id: &str) -> Result<Option<u8>> {
    let Some(code) = codes::find(id)? else { return Ok(None) };
    super::queue::require_terminal("deny")?;
    let text = format!(
        "\ncmdguard deny: approval code\n{}Withdraw it? [y confirms, any other key cancels] ",
        describe(&code, state::now())
    );
    match crate::approval::prompt::choose(&text, &['y'], Duration::from_secs(120)) {
        Ok(Some(_)) => {}
        Ok(None) => return cancelled(),
        Err(crate::approval::prompt::NoTerminal(why)) => bail!("cannot confirm on the terminal: {why}"),
    }
    codes::void(&code.code)?;
    println!("withdrew approval code {}: {}", code.code, escape(&code.command));
    Ok(Some(0))
}

fn cancelled() -> Result<Option<u8>> {
    println!("cancelled: nothing was decided");
    Ok(Some(crate::exit::DECLINED))
}
