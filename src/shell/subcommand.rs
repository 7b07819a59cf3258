//! A subcommand only known when the command runs. For a program whose catalogue entry says its
//! first operands name a subcommand (`subcommand_levels`: `kubectl delete`, `aws s3 rm`), that
//! word decides what the command does; one the analysis cannot read there (`git $x --hard`,
//! `kubectl "$verb" ns prod`, `docker $(cat verb) prune -af`, a wildcard, xargs's input) hides
//! it from every rule, so it is a `Dynamic` issue. Option values and later operands are not
//! subcommands (`git -C "$d" status`, `kubectl get pods -n "$ns"`).

use super::analyze::Analyzer;
use super::catalog::{self, Program};
use super::{Field, IssueKind, Segment, basename};

/// Wrappers that build the rest of their command from their input.
const FROM_INPUT: &[&str] = &["xargs", "parallel"];

impl Analyzer {
    /// Asks when the subcommand of the command `words` (wrappers removed; `seg` is its segment)
    /// is only known when it runs.
    /// `entry`: the program's catalogue entry, when it was looked up already.
    /// `first`: what reading its options with that entry found (`Unwrapped::first_operand`).
    /// `splits`: an unquoted expansion in the words had a value not known (`split_unknown`).
    pub(super) fn check_subcommand(
        &mut self,
        words: &[Field],
        seg: &Segment,
        entry: Option<Option<&'static Program>>,
        first: Option<(bool, Option<usize>)>,
        splits: bool,
    ) {
        let place = Place {
            // A function's body walked where it is defined: its calls are walked again with the
            // words they pass (`g() { git "$@"; }; g status`), so `$@` asks only there.
            in_definition: self.in_function > 0 && self.positional_words().is_none(),
            input_of: seg.wrappers.iter().rev().map(String::as_str).find(|w| FROM_INPUT.contains(w)),
        };
        let Some(detail) = unknown_subcommand(words, &place, entry, first) else { return };
        // `git "$x" --help` prints help whatever `$x` is; an unquoted `$x` may split into a
        // subcommand and `--`, after which `--help` is an operand.
        if splits || !seg.is_help() {
            self.issue(IssueKind::Dynamic, detail);
        }
    }
}

/// Where a command's words came from, which decides what an unknown word in them means.
struct Place<'a> {
    /// Walking a function's body where it is defined, its arguments not known.
    in_definition: bool,
    /// The wrapper (`xargs`) that appends its input to the command, if one does.
    input_of: Option<&'a str>,
}

/// What to say when a word naming the subcommand of the command `words` is only known when it
/// runs; `None` when each is known (or the program names none).
fn unknown_subcommand(
    words: &[Field],
    place: &Place,
    entry: Option<Option<&'static Program>>,
    mut first: Option<(bool, Option<usize>)>,
) -> Option<String> {
    // Read for the program's entry only: `first` goes with `entry`.
    if entry.is_none() {
        first = None;
    }
    let program = words.first().filter(|f| !f.dynamic)?;
    let base = basename(&program.text);
    let mut entry = entry.unwrap_or_else(|| catalog::find(base)).filter(|p| p.subcommand_levels > 0)?;
    let mut name = String::with_capacity(32);
    name.push_str(base);
    let mut left = entry.subcommand_levels;
    let mut i = 1;
    while left > 0 {
        // `cargo +nightly build`: a toolchain, which rustup's proxy reads before the subcommand.
        let (informs, at) = first.take().unwrap_or_else(|| {
            let r = entry.read(words, i);
            (r.informs, r.operands.iter().copied().find(|&k| !words[k].text.starts_with('+')))
        });
        if informs {
            return None;
        }
        let Some(at) = at else {
            // `… | xargs git`: the subcommand is what the input holds.
            return place.input_of.as_ref().map(|w| {
                format!("the subcommand of `{name}` comes from the input of {w}, only known when the command runs")
            });
        };
        let word = &words[at];
        if let Some(why) = unknown(word, place) {
            return Some(format!("the subcommand of `{name}` {why}: `{}`", word.text));
        }
        name.push(' ');
        name.push_str(&word.text);
        left -= 1;
        i = at + 1;
        // A subcommand with subcommands of its own (`git stash drop`, `docker volume prune`).
        if let Some(sub) = catalog::find(&name).filter(|p| p.subcommand_levels > 0) {
            entry = sub;
            left = sub.subcommand_levels;
        }
    }
    None
}

/// Why a word in a subcommand's place is not known, if it is not.
fn unknown(word: &Field, place: &Place) -> Option<String> {
    if word.dynamic {
        if place.in_definition && is_positional(&word.text) {
            return None;
        }
        return Some("is only known when the command runs".into());
    }
    if let Some(w) = &place.input_of
        && word.text.contains("{}")
    {
        return Some(format!("is replaced by the input of {w}, only known when the command runs"));
    }
    if super::is_glob_pattern(&word.text) {
        return Some("is a pattern the shell matches against file names when the command runs".into());
    }
    None
}

/// `$@`, `$*`, `$1`, `${2}`: the arguments of the function or script.
fn is_positional(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('$') else { return false };
    let rest = rest.strip_prefix('{').unwrap_or(rest);
    rest.starts_with(|c: char| c == '@' || c == '*' || c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use crate::shell::{IssueKind, analyze_script};

    /// The `core.dynamic` details about a subcommand that `text` raises.
    fn concerns(text: &str) -> Vec<String> {
        let a = analyze_script(text);
        let about = |d: &str| d.starts_with("the subcommand of");
        a.issues.into_iter().filter(|i| i.kind == IssueKind::Dynamic && about(&i.detail)).map(|i| i.detail).collect()
    }

    #[test]
    fn a_subcommand_only_known_when_it_runs_asks() {
        for (text, detail) in [
            ("git $x --hard", "the subcommand of `git` is only known when the command runs: `$x`"),
            ("git -C /srv/app \"$sub\" -D main", "the subcommand of `git` is only known when the command runs: `$sub`"),
            (
                "kubectl -n prod \"$verb\" ns prod",
                "the subcommand of `kubectl` is only known when the command runs: `$verb`",
            ),
            (
                "aws --profile prod s3 $op s3://b --recursive",
                "the subcommand of `aws s3` is only known when the command runs: `$op`",
            ),
            (
                "docker volume $(cat verb) -f",
                "the subcommand of `docker volume` is only known when the command runs: `$(cat verb)`",
            ),
            ("cargo +nightly $c", "the subcommand of `cargo` is only known when the command runs: `$c`"),
            (
                "git re*",
                "the subcommand of `git` is a pattern the shell matches against file names when the command runs: `re*`",
            ),
            (
                "ls | xargs git",
                "the subcommand of `git` comes from the input of xargs, only known when the command runs",
            ),
            ("g() { git \"$@\"; }; g \"$x\"", "the subcommand of `git` is only known when the command runs: `$x`"),
        ] {
            assert_eq!(concerns(text), [detail], "{text}");
        }
    }

    #[test]
    fn option_values_and_later_operands_are_not_subcommands() {
        for text in [
            "git -C \"$d\" status",
            "git commit -m \"$msg\"",
            "kubectl get pods -n \"$ns\"",
            "kubectl --namespace \"$ns\" get pods",
            "aws --region \"$r\" s3 ls \"$bucket\"",
            "docker run --rm \"$image\"",
            "cargo build --features \"$f\"",
            "npm run \"$script\"",
            "terraform -chdir=\"$dir\" plan",
            "g() { git \"$@\"; }; g status",
            "g() { git \"$@\"; }",
            "git \"$x\" --help",
            "psql \"$URL\"",
            "kill $(cat pid)",
            "printf '%s\\n' status log | xargs -n1 git",
        ] {
            assert_eq!(concerns(text), Vec::<String>::new(), "{text}");
        }
    }
}
