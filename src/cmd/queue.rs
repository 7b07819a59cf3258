//! `cmdguard pending`, `approve` and `deny`: the human side of the approval queue. `approve` and
//! `deny` need a person at an interactive terminal: they show the escaped command on `/dev/tty`
//! and act only on a key typed there. They act on one request by id, on the oldest request of one
//! session, or on all requests of one session — never on another session's.

use std::io::IsTerminal;
use std::path::Path;
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::json;

use crate::approval::queue::{self, Decision, Pending, Resolver};
use crate::approval::session;
use crate::cli::{ApproveArgs, DenyArgs, Global, Scope};
use crate::exit;
use crate::state::{self, human_duration};
use crate::term::escape;

pub fn pending(global: &Global) -> Result<u8> {
    let mut all = queue::all(true)?;
    let mut codes = crate::approval::codes::all()?;
    if let Some(key) = global.session_key.as_deref() {
        let hash = state::key_hash(key);
        all.retain(|p| p.request.session.as_deref() == Some(hash.as_str()));
        codes.retain(|c| c.session.as_deref() == Some(hash.as_str()));
    }
    let now = state::now();
    if global.json {
        for p in &all {
            let mut v = serde_json::to_value(&p.request)?;
            v["stale"] = json!(p.stale);
            v["age"] = json!(now.saturating_sub(p.request.created()));
            println!("{v}");
        }
        for c in &codes {
            let mut v = serde_json::to_value(c)?;
            v["kind"] = json!("code");
            println!("{v}");
        }
        return Ok(0);
    }
    if all.is_empty() && codes.is_empty() {
        println!("no commands are waiting for approval");
        return Ok(0);
    }
    if !all.is_empty() {
        println!("{:<14}{:<11}{:<7}PROJECT", "ID", "SESSION", "AGE");
    }
    for p in &all {
        print!("{}", describe(p, now));
    }
    if all.iter().any(|p| p.stale) {
        println!("(stale requests belonged to a cmdguard that is gone; they were removed)");
    }
    if !codes.is_empty() {
        // Hook mode's approval codes: the agent was blocked and told to ask you.
        println!("{}{:<14}{:<11}{:<7}PROJECT", if all.is_empty() { "" } else { "\n" }, "CODE", "SESSION", "LEFT");
        for c in &codes {
            print!("{}", super::code::describe(c, now));
        }
        println!("(approve one with `cmdguard approve CODE`; the agent's retry then runs)");
    }
    Ok(0)
}

/// One request, as `pending` and the confirmations show it.
pub fn describe(p: &Pending, now: u64) -> String {
    let r = &p.request;
    let session = r.session.as_deref().map_or("-".to_string(), |h| h[..8].to_string());
    let age = human_duration(now.saturating_sub(r.created()));
    let mut out = format!("{:<14}{session:<11}{age:<7}{}\n", r.id, escape(&r.project));
    out.push_str(&format!("    command: {}\n", escape(&r.command)));
    if r.cwd != r.project {
        out.push_str(&format!("    in:      {}\n", escape(&r.cwd)));
    }
    out.push_str(&format!("    rules:   {}\n", r.rules.join(", ")));
    if let Some(s) = &r.stake {
        out.push_str(&format!("    at stake: {}\n", escape(s)));
    }
    if p.stale {
        out.push_str("    stale:   its cmdguard is gone\n");
    }
    out
}

/// The requests `approve`/`deny` act on: by id, else one session's oldest, or all of it.
fn targets(global: &Global, id: Option<&str>, all: bool) -> Result<Vec<Pending>> {
    let hash = global.session_key.as_deref().map(state::key_hash);
    let found = match (id, &hash) {
        (Some(id), _) if all => bail!(super::UsageError(format!("give a request id ({id}) or --all, not both"))),
        (Some(id), _) => {
            let p = queue::find(id)?;
            if hash.is_some() && p.request.session != hash {
                bail!("request {} does not belong to that session", p.request.id);
            }
            if p.stale {
                queue::remove(&p.dir, &p.request.id);
                bail!("request {} is stale: the cmdguard that asked is gone (removed)", p.request.id);
            }
            vec![p]
        }
        (None, Some(h)) => {
            let mut list = queue::of_session(h)?;
            if !all {
                list.truncate(1);
            }
            list
        }
        (None, None) => bail!(super::UsageError(
            "name the request: an id from `cmdguard pending`, or --session-key KEY (its oldest request; with --all, every one)".into()
        )),
    };
    if found.is_empty() {
        bail!("that session has no commands waiting for approval");
    }
    Ok(found)
}

/// `approve` and `deny` act only for a person at an interactive terminal.
pub fn require_terminal(what: &str) -> Result<()> {
    if !std::io::stdin().is_terminal() {
        bail!(
            "`cmdguard {what}` needs you at an interactive terminal, and its input is not one (a pipe or a file); run it yourself in a terminal"
        );
    }
    Ok(())
}

pub fn approve(global: &Global, args: &ApproveArgs) -> Result<u8> {
    declined(approve_inner(global, args))
}

pub fn deny(global: &Global, args: &DenyArgs) -> Result<u8> {
    declined(deny_inner(global, args))
}

/// A request that cannot be acted on is not an internal error: say why and exit 1.
fn declined(result: Result<u8>) -> Result<u8> {
    match result {
        Err(e) if e.downcast_ref::<super::UsageError>().is_none() => {
            eprintln!("cmdguard: {e:#}");
            Ok(exit::DECLINED)
        }
        other => other,
    }
}

/// The requests `verb` acts on, after checking a person is at the terminal, and the text that
/// shows them before the confirmation.
fn prepare(global: &Global, verb: &str, id: Option<&str>, all: bool) -> Result<(Vec<Pending>, String)> {
    require_terminal(verb)?;
    let list = targets(global, id, all)?;
    let now = state::now();
    let mut text = format!("\ncmdguard {verb}: {} request{}\n", list.len(), if list.len() == 1 { "" } else { "s" });
    for p in &list {
        text.push_str(&describe(p, now));
    }
    Ok((list, text))
}

fn approve_inner(global: &Global, args: &ApproveArgs) -> Result<u8> {
    if let Some(code) =
        args.id.as_deref().map(|id| super::code::approve(id, args.all, args.scope)).transpose()?.flatten()
    {
        return Ok(code);
    }
    let (list, mut text) = prepare(global, "approve", args.id.as_deref(), args.all)?;
    let can_session = list.iter().all(|p| p.request.session.is_some());
    let can_always = list.iter().all(|p| !p.request.always.is_empty());
    let scope = match args.scope {
        Some(Scope::Session) if !can_session => bail!("--scope session needs requests made with a --session-key"),
        Some(Scope::Always) if !can_always => {
            bail!(
                "--scope always cannot cover this command: cmdguard could not read all of it, or a hook asked (approve it once or for the session)"
            )
        }
        Some(scope) => scope,
        None => {
            let mut keys = vec!['o'];
            text.push_str("Approve how? [o] once");
            if can_session {
                keys.push('s');
                text.push_str("  [s] for the session");
            }
            if can_always {
                keys.push('a');
                text.push_str("  [a] always");
            }
            text.push_str("  (any other key cancels) ");
            let scope = match ask(&text, &keys)? {
                Some('s') => Scope::Session,
                Some('a') => Scope::Always,
                Some(_) => Scope::Once,
                None => return cancelled(),
            };
            text = String::new();
            scope
        }
    };
    // Approving runs a command an agent asked for: a key pushed into this terminal by another
    // process must not do it, so the person types back a code only the screen shows.
    text.push_str(&format!("Approve ({})? ", scope.name()));
    let confirmed = match crate::approval::prompt::confirm_with_code(&text, Duration::from_secs(120)) {
        Ok(c) => c,
        Err(crate::approval::prompt::NoTerminal(why)) => bail!("cannot confirm on the terminal: {why}"),
    };
    if !confirmed {
        return cancelled();
    }
    finish(list.iter().map(|p| resolve(p, true, Some(scope), None, "approve")))
}

fn deny_inner(global: &Global, args: &DenyArgs) -> Result<u8> {
    if let Some(code) = args.id.as_deref().map(super::code::deny).transpose()?.flatten() {
        return Ok(code);
    }
    let (list, mut text) = prepare(global, "deny", args.id.as_deref(), args.all)?;
    if let Some(r) = &args.reason {
        text.push_str(&format!("reason for the agent: {}\n", escape(r)));
    }
    text.push_str("Deny? [y confirms, any other key cancels] ");
    if ask(&text, &['y'])?.is_none() {
        return cancelled();
    }
    finish(list.iter().map(|p| resolve(p, false, None, args.reason.clone(), "deny")))
}

fn finish(results: impl Iterator<Item = Result<(bool, String)>>) -> Result<u8> {
    let mut all_ours = true;
    for r in results {
        let (ours, said) = r?;
        println!("{said}");
        all_ours &= ours;
    }
    Ok(if all_ours { 0 } else { exit::DECLINED })
}

fn ask(text: &str, keys: &[char]) -> Result<Option<char>> {
    match crate::approval::prompt::choose(text, keys, Duration::from_secs(120)) {
        Ok(k) => Ok(k),
        Err(crate::approval::prompt::NoTerminal(why)) => bail!("cannot confirm on the terminal: {why}"),
    }
}

fn cancelled() -> Result<u8> {
    println!("cancelled: nothing was decided");
    Ok(exit::DECLINED)
}

/// Records the decision for one request (exactly once) and applies its scope. Returns whether
/// this call decided it, and what happened in words.
pub fn resolve(
    p: &Pending,
    approved: bool,
    scope: Option<Scope>,
    reason: Option<String>,
    via: &str,
) -> Result<(bool, String)> {
    let r = &p.request;
    let decision = Decision { approved, scope, reason, by: Resolver::Human, via: via.to_string(), at: state::now() };
    let (ours, in_force) = queue::decide(&p.dir, &r.id, &decision)?;
    if !ours {
        return Ok((false, format!("request {} was already decided ({}); nothing changed", r.id, summary(&in_force))));
    }
    let said = match scope {
        Some(Scope::Session) => {
            let hash = r.session.as_deref().expect("session scope is offered only for requests with a session");
            let ttl = crate::config::load(Path::new(&r.cwd), &[]).map_or(8 * 3600, |p| p.settings.session_ttl);
            match session::grant_hash(hash, Path::new(&r.project), &r.need, ttl) {
                Ok(()) => format!("approved {} for its session: {}", r.id, escape(&r.command)),
                Err(e) => format!("approved {} once; the session grant could not be saved: {e:#}", r.id),
            }
        }
        Some(Scope::Always) => {
            let note =
                format!("Added by cmdguard on {}: \"always\" from `cmdguard {via}`.", state::rfc3339(state::now()));
            match crate::approval::always::add(Path::new(&r.cwd), &r.always, &note) {
                Ok(a) if a.trusted => {
                    format!("approved {} always: allow entry in {}", r.id, escape(&a.file.display().to_string()))
                }
                Ok(a) => format!(
                    "approved {}; the allow entry was written to {}, which holds loosening you have not trusted: review it with `cmdguard trust`",
                    r.id,
                    escape(&a.file.display().to_string())
                ),
                Err(e) => format!("approved {} once; the allow entry could not be written: {e:#}", r.id),
            }
        }
        Some(Scope::Once) | None if approved => format!("approved {} once: {}", r.id, escape(&r.command)),
        _ => format!("denied {}: {}", r.id, escape(&r.command)),
    };
    Ok((true, said))
}

fn summary(d: &Decision) -> String {
    match (d.by, d.approved) {
        (Resolver::Human, true) => format!("approved {} by `cmdguard {}`", d.scope.map_or("once", Scope::name), d.via),
        (Resolver::Human, false) => format!("denied by `cmdguard {}`", d.via),
        (Resolver::Timeout, _) => "timed out".into(),
        (Resolver::Withdrawn, _) => "withdrawn: its cmdguard was stopped".into(),
    }
}
