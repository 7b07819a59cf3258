//! `cmdguard undo`: list recovery points (`--list`) or restore one, the last by default, after
//! confirming on the terminal. Restoring over newer work is refused unless `--force`, which
//! asks for a typed code instead of a key. The undo is written to the audit log with the
//! point's id.

use std::io::Write;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::approval::audit::{self, DecidedBy};
use crate::approval::prompt::{self, NoTerminal};
use crate::approval::recovery::{restore, store};
use crate::cli::{Global, UndoArgs};
use crate::exit;
use crate::state;
use crate::term::escape;

pub fn run(global: &Global, args: &UndoArgs) -> Result<u8> {
    let cwd = super::cwd()?;
    let ttl = match crate::config::load(&cwd, &global.rules) {
        Ok(policy) => policy.settings.recovery_ttl,
        // A broken rules file must not keep a person from getting their files back.
        Err(_) => crate::rules::Settings::default().recovery_ttl,
    };
    if args.prune {
        store::prune(ttl);
        return Ok(0);
    }
    store::prune(ttl);
    if args.list {
        return list(ttl);
    }
    let found = match store::find(args.id.as_deref(), &crate::config::project_root(&cwd), ttl) {
        Ok(f) => f,
        Err(e) => return declined(&format!("{e:#}")),
    };
    let point = &found.point;
    let mut text = format!(
        "Recovery point {} ({}, {} ago)\n  command: {}\n  in: {}\n",
        point.id,
        state::rfc3339(point.created),
        state::human_duration(state::now().saturating_sub(point.created)),
        escape(&point.command),
        escape(&point.cwd)
    );
    if let Some(t) = found.undone {
        if !args.force {
            return declined(&format!(
                "recovery point {} was undone already, {} ago; `cmdguard undo --force {}` restores it again",
                point.id,
                state::human_duration(state::now().saturating_sub(t)),
                point.id
            ));
        }
        text.push_str("  (undone once already)\n");
    }
    let plan = restore::plan(&found.dir, point, args.force)
        .map_err(|e| anyhow::anyhow!("cannot undo {}: {}", point.id, e.0))?;
    for line in plan.summary() {
        text.push_str(&format!("  undo {line}\n"));
    }
    for n in &plan.notes {
        text.push_str(&format!("  note: {n}\n"));
    }
    if !plan.conflicts.is_empty() {
        let list: String = plan.conflicts.iter().map(|c| format!("  newer work: {c}\n")).collect();
        if !args.force {
            eprint!("{text}{list}");
            eprintln!(
                "cmdguard: not undone: restoring would overwrite the newer work above; `cmdguard undo --force {}` overwrites it",
                point.id
            );
            return Ok(exit::DECLINED);
        }
        text.push_str(&list);
        text.push_str("  --force: the newer work above is overwritten\n");
    }
    let confirmed = if args.force {
        text.push_str("Undo? ");
        prompt::confirm_with_code(&text, Duration::from_secs(120))
    } else {
        text.push_str("Undo? [y confirms, any other key cancels] ");
        prompt::choose(&text, &['y'], Duration::from_secs(120)).map(|k| k.is_some())
    };
    match confirmed {
        Ok(true) => {}
        Ok(false) => {
            println!("cancelled: nothing was restored");
            return Ok(exit::DECLINED);
        }
        Err(NoTerminal(why)) => {
            return declined(&format!("not undone: undo confirms on the terminal, and there is none ({why})"));
        }
    }
    let notes = plan.notes.clone();
    let result = plan.apply();
    let mut record = audit::Record {
        session: point.session.clone(),
        project: point.project.clone(),
        cwd: point.cwd.clone(),
        recovery: Some(point.id.clone()),
        ran: result.is_ok(),
        choice: Some(if args.force { "undo --force" } else { "undo" }.to_string()),
        ..audit::Record::new(DecidedBy::Undo, point.command.clone(), "undo", Vec::new())
    };
    if let Err(e) = &result {
        record.reason = Some(e.0.clone());
    }
    audit::record(&record);
    match result {
        Ok(()) => {
            store::mark_undone(&found.dir)?;
            println!("undone: {} (`{}`)", point.id, escape(&point.command));
            for n in notes {
                println!("note: {n}");
            }
            Ok(0)
        }
        Err(e) => bail!(
            "undo of {} stopped part way: {} (the recovery point is kept; fix that and run `cmdguard undo --force {}`)",
            point.id,
            e.0,
            point.id
        ),
    }
}

/// Nothing was restored: says why, exit 1.
fn declined(why: &str) -> Result<u8> {
    eprintln!("cmdguard: {why}");
    Ok(exit::DECLINED)
}

fn list(ttl: u64) -> Result<u8> {
    let all = store::list(ttl)?;
    let mut out = std::io::stdout().lock();
    if all.is_empty() {
        writeln!(
            out,
            "no recovery points (they are kept {} after an approved destructive command)",
            state::human_duration(ttl)
        )?;
        return Ok(0);
    }
    writeln!(out, "{:<22}{:<21}{:<10}{:<10}{:<28}COMMAND", "ID", "TIME", "SESSION", "SIZE", "PROJECT")?;
    for f in all.iter().rev() {
        let p = &f.point;
        let session = p.session.as_deref().map_or("-", |h| &h[..8.min(h.len())]);
        let mut command = escape(&p.command);
        if command.chars().count() > 60 {
            command = command.chars().take(59).collect::<String>() + "…";
        }
        let undone = if f.undone.is_some() { " (undone)" } else { "" };
        writeln!(
            out,
            "{:<22}{:<21}{session:<10}{:<10}{:<28}{command}{undone}",
            p.id,
            state::rfc3339(p.created),
            crate::blast::size(p.size),
            escape(&p.project)
        )?;
        for part in &p.parts {
            writeln!(out, "    {}", part.describe())?;
        }
    }
    Ok(0)
}
