//! crontab(1) installing a table from standard input (`crontab -`, or no file operand): each
//! line's command, after the five schedule fields or an `@reboot`-style nickname, is a shell
//! command cron runs later, so the table is analysed as a script of those commands. Comments
//! and `NAME=value` settings are not commands.

use super::Field;
use super::nested::StdinUse;
use super::unwrap::{Unwrapped, skip_options};

/// Options with which crontab installs nothing (list, edit, remove, check, version).
const INFORMS: &[&str] = &["-l", "-e", "-r", "-i", "-T", "-V", "--help", "--version"];

/// Marks `crontab …` as reading a table from standard input when it does.
pub fn read(words: &[Field], u: &mut Unwrapped) {
    let (i, opts) = skip_options(words, 1, "un", &[], false);
    if opts.iter().any(|(n, _)| INFORMS.contains(&n.as_str())) {
        return;
    }
    match words.get(i) {
        None => u.stdin = Some(StdinUse::Cron),
        Some(f) if f.text == "-" => u.stdin = Some(StdinUse::Cron),
        Some(_) => {}
    }
}

/// The commands of a crontab's lines, one per line.
pub fn commands(table: &str) -> String {
    let mut out = Vec::new();
    for line in table.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || is_setting(line) {
            continue;
        }
        let fields = if line.starts_with('@') { 1 } else { 5 };
        let mut rest = line;
        for _ in 0..fields {
            rest = rest.trim_start();
            rest = rest.find(char::is_whitespace).map_or("", |n| &rest[n..]);
        }
        // An unescaped `%` ends the command; what follows is its standard input.
        let command = rest.split('%').next().unwrap_or("").trim();
        if !command.is_empty() {
            out.push(command.to_string());
        }
    }
    out.join("\n")
}

/// A `NAME=value` line (SHELL=/bin/bash, MAILTO=x): an environment setting for the jobs.
fn is_setting(line: &str) -> bool {
    line.split_once('=').is_some_and(|(name, _)| {
        let name = name.trim();
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::commands;

    #[test]
    fn each_line_gives_its_command() {
        let table = "# m h dom mon dow\nMAILTO=me\n0 3 * * * /opt/backup.sh --all\n@reboot rm -rf ~/tmp\n*/5 * * * * cd /app && ./sync %stdin\n";
        assert_eq!(commands(table), "/opt/backup.sh --all\nrm -rf ~/tmp\ncd /app && ./sync");
    }

    #[test]
    fn a_line_of_schedule_only_has_no_command() {
        assert_eq!(commands("0 3 * * *\n"), "");
    }
}
