//! `cmdguard check`: decide only, never run. Exit 0 pass/allow, 1 ask, 2 deny; `--batch` reads
//! one command per line and writes one JSON object per line. A reader that goes away early
//! (`check … | head -c0`) is no error: the exit status still carries the verdict.

use std::io::{BufRead, BufWriter, Write};

use anyhow::Result;
use serde::Serialize;

use crate::cli::{CheckArgs, Global};
use crate::decide::{Decision, Verdict, decide};
use crate::rules::Policy;
use crate::shell::{Dialect, analyze_script_in};
use crate::term::escape;

pub fn run(global: &Global, args: &CheckArgs) -> Result<u8> {
    if args.batch {
        let policy = super::policy(global)?;
        notices(&policy);
        let dialect = crate::shell::Dialect::of_path(&super::shell(global, &policy)?);
        return batch(&policy, dialect);
    }
    let job = super::job(&args.command)?;
    let policy = super::policy(global)?;
    let decision = decide(&policy, &job.analyze(&super::shell(global, &policy)?));
    let command = job.text();
    let text = if global.json {
        let mut rec = serde_json::to_value(record(&command, &policy, &decision))?;
        if !policy.notices.is_empty() {
            rec["notices"] = serde_json::json!(policy.notices);
        }
        if global.is_audit(&policy) {
            rec["audit"] = serde_json::json!(true);
        }
        format!("{rec}\n")
    } else {
        notices(&policy);
        let mut text = human(&command, &policy, &decision);
        if global.is_audit(&policy) && matches!(decision.verdict, Verdict::Ask | Verdict::Deny) {
            text.push_str("  audit: trial mode is on, so this would run and be recorded as a would-be decision\n");
        }
        text
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written?,
    }
    Ok(match decision.verdict {
        Verdict::Pass | Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    })
}

/// Files whose loosening is ignored, one line each, on stderr (stdout keeps its format).
fn notices(policy: &Policy) {
    for n in &policy.notices {
        eprintln!("cmdguard: note: {n}");
    }
}

/// One verdict as JSON: the command, the verdict, and the ids of the rules that decided it.
#[derive(Serialize)]
struct Record<'a> {
    command: &'a str,
    verdict: &'static str,
    rules: Vec<&'a str>,
}

fn record<'a>(command: &'a str, policy: &'a Policy, decision: &Decision) -> Record<'a> {
    Record { command, verdict: decision.verdict.name(), rules: decision.rule_ids(policy) }
}

fn human(command: &str, policy: &Policy, decision: &Decision) -> String {
    let mut out = format!("{}: {}\n", decision.verdict.name(), escape(command));
    let mut seen = Vec::new();
    for h in &decision.hits {
        if seen.contains(&h.rule) {
            continue;
        }
        seen.push(h.rule);
        let r = &policy.rules[h.rule];
        match h.allowed_by {
            Some(a) => out.push_str(&format!(
                "  {} ({}) allowed by {} at {}\n",
                r.id,
                crate::report::action_name(r.action),
                escape(&policy.allows[a].describe()),
                escape(&policy.allows[a].origin.to_string())
            )),
            None => {
                out.push_str(&format!("  {} ({}): {}\n", r.id, crate::report::action_name(r.action), escape(&r.reason)))
            }
        }
    }
    for c in &decision.concerns {
        out.push_str(&format!("  {}: {}\n", c.id, escape(&c.detail)));
    }
    out
}

fn batch(policy: &Policy, dialect: Dialect) -> Result<u8> {
    match write_batch(policy, dialect) {
        // The reader went away (`check --batch | head`): it wanted no more lines.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        other => Ok(other.map(|()| 0)?),
    }
}

/// Longest batch line read: the analysis reads no more than this of one command anyway.
/// A longer line is answered `ask` (too complex) without being kept, and reading goes on
/// at the next line.
pub const MAX_BATCH_LINE: usize = crate::shell::MAX_INPUT_BYTES;

fn write_batch(policy: &Policy, dialect: Dialect) -> std::io::Result<()> {
    // Many searches follow: the rules' hot sparse automata pay for a dense copy.
    crate::rules::copy_hot_dfas();
    let mut stdin = std::io::stdin().lock();
    let mut out = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::new();
    while let Some(fits) = read_line(&mut stdin, &mut line, MAX_BATCH_LINE)? {
        if !fits {
            let command = format!("{}…", String::from_utf8_lossy(&line[..line.len().min(80)]));
            serde_json::to_writer(&mut out, &too_long(&command))?;
            out.write_all(b"\n")?;
            continue;
        }
        let command = String::from_utf8_lossy(&line);
        let command = command.strip_suffix('\r').unwrap_or(&command);
        let decision = decide(policy, &analyze_script_in(command, dialect));
        serde_json::to_writer(&mut out, &record(command, policy, &decision))?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// The record of a line over `MAX_BATCH_LINE`: its first bytes, `ask`, `core.too-complex`.
fn too_long(command: &str) -> Record<'_> {
    Record { command, verdict: Verdict::Ask.name(), rules: vec!["core.too-complex"] }
}

/// Reads one line (without its `\n`) into `line`, keeping at most `max` bytes: `None` at the end
/// of input, else whether the line fitted. An overlong line's remainder is skipped, not stored.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut fits = true;
    let mut read_any = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(read_any.then_some(fits));
        }
        read_any = true;
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let room = (max + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        fits &= line.len() <= max;
        let ended = done > chunk.len();
        input.consume(done);
        if ended {
            return Ok(Some(fits));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_line;

    #[test]
    fn batch_lines_are_bounded_and_reading_goes_on() {
        let input = format!("ls\n{}\ngit status\nlast", "x".repeat(100));
        let mut input = std::io::BufReader::with_capacity(7, input.as_bytes());
        let mut line = Vec::new();
        let mut got = Vec::new();
        while let Some(fits) = read_line(&mut input, &mut line, 10).unwrap() {
            assert!(line.len() <= 11);
            got.push((fits, String::from_utf8_lossy(&line).into_owned()));
        }
        let want = [(true, "ls"), (false, "xxxxxxxxxxx"), (true, "git status"), (true, "last")];
        let want: Vec<_> = want.iter().map(|(f, s)| (*f, s.to_string())).collect();
        assert_eq!(got, want);
    }
}
