//! Help forms: a segment that asks its program for help (`--help`, `-h` or `-?` after the
//! subcommand words, `help SUB`) prints text and changes nothing, so the rules' asks do not
//! apply to it (docs/rules.md, "Help forms"). Deny rules still do.

use super::Field;
use super::Segment;

/// Programs that read a last word `help` after their subcommands as a request for help.
const TRAILING_HELP: &[&str] = &["aws"];

/// Programs for which `-h` does something other than print help: `shutdown -h` halts.
const DASH_H_ACTS: &[&str] = &["shutdown", "halt", "poweroff", "reboot", "sort", "ls", "df", "du", "free"];

impl Segment {
    /// Whether the segment only asks its program for help. A program given by a path or named
    /// like a script (`./deploy.sh`, `bin/x`) is not trusted to read `--help` first: a
    /// hand-written script may ignore it and do its work.
    pub fn is_help(&self) -> bool {
        let Some(program) = self.words.first() else { return false };
        if program.contains('/') || program.ends_with(".sh") || self.possible.is_some() {
            return false;
        }
        let args = &self.words[1..];
        let before_dashes = args.iter().take_while(|w| *w != "--");
        if before_dashes.clone().any(|w| w == "--help") {
            return true;
        }
        if args.first().is_some_and(|w| w == "help") {
            return true;
        }
        let Some((last, rest)) = args.split_last() else { return false };
        let only_words = rest.iter().all(|w| !w.starts_with('-'));
        match last.as_str() {
            "-h" => only_words && !DASH_H_ACTS.contains(&program.as_str()),
            "-?" => only_words,
            // `aws s3 rm help`: help after the subcommand words, nothing else, for the programs
            // that read a trailing `help` so (most take it as one more operand:
            // `kubectl delete ns prod help` deletes prod).
            "help" => only_words && args.len() <= 4 && TRAILING_HELP.contains(&program.as_str()),
            _ => false,
        }
    }
}

/// `prog [SUB…] -?` with nothing else: the question mark is a help option, not a pattern.
pub(super) fn is_question_help(fields: &[Field]) -> bool {
    let Some((last, rest)) = fields.split_last() else { return false };
    last.text == "-?"
        && !rest.is_empty()
        && !rest[0].text.contains('/')
        && rest.iter().all(|f| !f.dynamic && !f.text.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(text: &str) -> Segment {
        Segment { words: text.split(' ').map(String::from).collect(), text: text.into(), ..Segment::default() }
    }

    #[test]
    fn help_forms() {
        for t in [
            "kubectl delete --help",
            "pg_dump -?",
            "zfs destroy -h",
            "git help reset",
            "aws s3 rm help",
            "rm -rf / --help",
        ] {
            assert!(seg(t).is_help(), "{t}");
        }
        for t in [
            "shutdown -h",
            "rm -rf src -h",
            "kubectl delete ns prod --helpful",
            "npm run x -- --help",
            "./deploy.sh --help",
            "zfs destroy pool/x a b help",
        ] {
            assert!(!seg(t).is_help(), "{t}");
        }
    }
}
