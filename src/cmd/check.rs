//! `cmdguard check`: decide only, never run. Exit 0 pass/allow, 1 ask, 2 deny; `--batch` reads
//! one command per line and writes one JSON object per line. A reader that goes away early
//! (`check … | head -c0`) is no error: the exit status still carries the verdict.

use std::io::{BufRead, BufWriter, Write};

use anyhow::Result;
use serde::Serialize;

use crate::cli::{CheckArgs, Global};
use crate::decide::{Decision, Verdict, decide};
use crate::rules::Policy;
use crate::shell::{Analysis, Dialect, analyze_script_into};
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
    let mut analysis = Analysis::default();
    let mut scratch = crate::decide::Scratch::default();
    while let Some(fits) = read_line(&mut stdin, &mut line, MAX_BATCH_LINE)? {
        if !fits {
            let command = format!("{}…", String::from_utf8_lossy(&line[..line.len().min(80)]));
            write_record(&mut out, &too_long(&command))?;
            continue;
        }
        // Valid UTF-8 (nearly every line) is checked a word at a time; `from_utf8_lossy`
        // walks it byte by byte.
        let command = match std::str::from_utf8(&line) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(&line),
        };
        let command = command.strip_suffix('\r').unwrap_or(&command);
        analyze_script_into(command, dialect, &mut analysis);
        let decision = crate::decide::decide_with(policy, &analysis, &mut scratch);
        write_record(&mut out, &record(command, policy, &decision))?;
    }
    out.flush()
}

/// Writes a record as one line of JSON, byte for byte what `serde_json::to_writer` writes for
/// it (a test holds the two together), without going through serde.
fn write_record(out: &mut impl Write, rec: &Record<'_>) -> std::io::Result<()> {
    out.write_all(b"{\"command\":")?;
    write_json_str(out, rec.command)?;
    out.write_all(b",\"verdict\":")?;
    write_json_str(out, rec.verdict)?;
    out.write_all(b",\"rules\":[")?;
    for (i, id) in rec.rules.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write_json_str(out, id)?;
    }
    out.write_all(b"]}\n")
}

/// A JSON string as serde_json writes it: `"` and `\` escaped, control characters as `\n`,
/// `\t`… or `\u00XX`, everything else (non-ASCII text too) as it is.
fn write_json_str(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.write_all(b"\"")?;
    let bytes = text.as_bytes();
    // One pass without early exit, which the compiler vectorizes: most text needs no escape.
    let plain = !bytes.iter().fold(false, |seen, &b| seen | (b < 0x20) | (b == b'"') | (b == b'\\'));
    if plain {
        out.write_all(bytes)?;
        return out.write_all(b"\"");
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\t' => b't',
            b'\r' => b'r',
            0x08 => b'b',
            0x0c => b'f',
            0..0x20 => b'u',
            _ => continue,
        };
        out.write_all(&bytes[start..i])?;
        start = i + 1;
        if short == b'u' {
            out.write_all(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]])?;
        } else {
            out.write_all(&[b'\\', short])?;
        }
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
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
    use super::{Record, read_line, write_record};

    #[test]
    fn batch_records_are_written_as_serde_json_writes_them() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        let texts = [
            "",
            "git status",
            "echo \"a\\b\" 'c'",
            "printf 'x\\ty' \t\r\n\x0b\x0c\x08\x1b[0m\x7f\0",
            "ｒｍ -rf ~ \u{202e} é \u{2028} \u{fffd}…",
            &every_ascii,
        ];
        for text in texts {
            let rec = Record { command: text, verdict: "ask", rules: vec!["core.too-complex", text] };
            let mut want = serde_json::to_vec(&rec).unwrap();
            want.push(b'\n');
            let mut got = Vec::new();
            write_record(&mut got, &rec).unwrap();
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want), "{text:?}");
        }
        let none = Record { command: "ls", verdict: "pass", rules: Vec::new() };
        let mut got = Vec::new();
        write_record(&mut got, &none).unwrap();
        assert_eq!(got, b"{\"command\":\"ls\",\"verdict\":\"pass\",\"rules\":[]}\n");
    }

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
