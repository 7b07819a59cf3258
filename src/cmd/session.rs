//! `cmdguard session new | list | revoke KEY | clear`: mint keys and manage session grants.

use anyhow::Result;
use serde_json::json;

use crate::approval::session;
use crate::cli::{Global, SessionCmd};
use crate::state::{human_duration, now};
use crate::term::escape;

pub fn run(global: &Global, cmd: &SessionCmd) -> Result<u8> {
    match cmd {
        SessionCmd::New => println!("{}", session::new_key()),
        SessionCmd::List => list(global)?,
        SessionCmd::Revoke { key } => {
            let n = session::revoke_shown(key)?;
            println!("removed {n} grant{} of that session", if n == 1 { "" } else { "s" });
        }
        SessionCmd::Clear => {
            let n = session::clear()?;
            println!("removed {n} grant{} of all sessions", if n == 1 { "" } else { "s" });
        }
    }
    Ok(0)
}

fn list(global: &Global) -> Result<()> {
    let ttl = super::policy(global)?.settings.session_ttl;
    let grants = session::list(ttl)?;
    let now = now();
    if global.json {
        for (hash, g) in &grants {
            let obj = json!({
                "session": hash, "project": g.project, "rules": g.rules, "commands": g.commands,
                "granted_at": g.granted_at, "last_used": g.last_used, "expires_at": g.last_used.saturating_add(ttl),
            });
            println!("{obj}");
        }
        return Ok(());
    }
    if grants.is_empty() {
        println!("no session grants");
        return Ok(());
    }
    println!("{:<14} {:<10} {:<10} PROJECT / GRANTED", "SESSION", "USED", "EXPIRES");
    for (hash, g) in &grants {
        let used = format!("{} ago", human_duration(now.saturating_sub(g.last_used)));
        let expires = format!("in {}", human_duration(g.last_used.saturating_add(ttl).saturating_sub(now)));
        println!("{:<14} {used:<10} {expires:<10} {}", &hash[..12], escape(&g.project));
        for r in &g.rules {
            println!("{:<37}rule {r}", "");
        }
        for c in &g.commands {
            println!("{:<37}command {}", "", escape(c));
        }
    }
    println!("(sessions are shown by a hash of their key; `cmdguard session revoke` takes the key or the hash shown)");
    Ok(())
}
