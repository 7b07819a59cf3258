//! How a wrapper's words form the command it runs, as its catalogue entry says: its options
//! (and its subcommand's), the operands it takes first (`timeout 10`), assignments (`env A=1`),
//! options with which it runs nothing (`sudo -l`), scripts its options carry (`env -S`, `flock
//! -c`), its operands as one script (`watch`), a shell when it is given no command (`sudo -s`),
//! the command it runs when given none (`xargs`), and arguments after a mark (`parallel :::`).

use super::Field;
use super::catalog::{Program, Reading, typed};
use super::nested::script_of;

/// What a wrapper does with the words after it.
pub enum Step {
    /// The wrapped command starts at this index.
    Run(usize),
    /// The wrapped command is these words.
    Replace(Vec<Field>),
    /// The wrapper runs each of these through a shell.
    Scripts(Vec<Field>),
}

/// Reads a wrapper's words: its options (and its subcommand's), and where its operands begin,
/// after skipped operands and assignments (maybe past the last word); `None` when it runs
/// nothing (no subcommand, `--help`, `sudo -l`).
fn operands_at<'a>(p: &Program, words: &'a [Field]) -> (Reading<'a>, Option<usize>) {
    let mut r = p.read(words, 1);
    let mut at = r.end;
    if !p.subcommands.is_empty() && !r.informs {
        match words.get(at) {
            Some(sub) if p.subcommands.contains(&sub.text.as_str()) => {
                let more = p.read(words, at + 1);
                at = more.end;
                r.informs |= more.informs;
                r.scripts.extend(more.scripts);
                r.expanded.extend(more.expanded);
                r.given.extend(more.given.iter().copied());
                r.command_at = r.command_at.or(more.command_at);
            }
            _ if p.subcommand_optional => {}
            _ => return (r, None),
        }
    }
    if r.informs {
        return (r, None);
    }
    let mut at = at + p.skip;
    if p.skip > 0 && !p.skip_then_command && at < words.len() {
        // `sg GROUP -c CMD`, `flock FILE -c CMD`: options may follow the skipped operands.
        let more = p.read(words, at);
        at = more.end;
        r.scripts.extend(more.scripts);
        r.given.extend(more.given.iter().copied());
    }
    if p.assignments {
        at = skip_assignments(words, at);
    }
    (r, Some(at.min(words.len())))
}

/// Reads a wrapper's words: its options (and its subcommand's), and where the command it runs
/// begins; `None` when it runs none as a command (no subcommand, `--help`, a script option).
pub fn read_wrapper<'a>(p: &Program, words: &'a [Field]) -> (Reading<'a>, Option<usize>) {
    let (r, at) = operands_at(p, words);
    let run = at.filter(|&at| r.scripts.is_empty() && r.command_at.is_none() && at < words.len());
    (r, run)
}

/// Skips `NAME=value` words.
pub(super) fn skip_assignments(words: &[Field], mut i: usize) -> usize {
    while words.get(i).is_some_and(|f| {
        f.text
            .split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    }) {
        i += 1;
    }
    i
}

/// What the wrapper `p` (named `prog`) runs of its words `w`, if anything.
pub fn step(p: &Program, prog: &str, w: &[Field]) -> Option<Step> {
    let (r, at) = operands_at(p, w);
    // A script option runs its script even where no command follows (`tmux -c CMD`).
    if !r.scripts.is_empty() {
        let rest = &w[at.unwrap_or(w.len())..];
        let scripts = r.scripts.iter().map(|(_, s)| {
            let s = typed(p, s.clone());
            // `env -S 'rm -rf' ~`: the string is split, and the words after it are appended.
            if p.script_with_operands { script_of(&[&[s][..], rest].concat()) } else { s }
        });
        return Some(Step::Scripts(scripts.collect()));
    }
    let at = at?;
    let given = |names: &[&str]| r.given.iter().any(|(o, _)| names.contains(&o.as_str()));
    if r.command_at.is_some() {
        return None;
    }
    if at >= w.len() {
        if given(p.shell_without_command) {
            // `sudo -s` with no command: a shell reads its commands from standard input.
            return Some(Step::Replace(vec![Field::lit("sh")]));
        }
        let default = p.default_command.split(' ').filter(|s| !s.is_empty()).map(Field::lit);
        let default: Vec<Field> = default.collect();
        return (!default.is_empty()).then_some(Step::Replace(default));
    }
    if !p.arguments_after.is_empty() {
        return arguments(p.arguments_after, &w[at..]);
    }
    if p.test_then {
        // `tmux if-shell TEST 'run-shell CMD'`: a shell command, then commands of tmux.
        let mut scripts = vec![w[at].clone()];
        let own = w[at + 1..].iter().map(|f| Field { text: format!("{prog} {}", f.text), dynamic: f.dynamic });
        scripts.extend(own);
        return Some(Step::Scripts(scripts));
    }
    if p.operands_script && !given(p.operands_argv) {
        return Some(Step::Scripts(vec![script_of(&w[at..])]));
    }
    Some(Step::Run(at))
}

/// `parallel CMD ::: ARGS` runs CMD with the arguments (appended unless CMD holds `{}`); a CMD
/// given as one word holding a blank is a script. `w` starts at the command.
fn arguments(mark: &str, w: &[Field]) -> Option<Step> {
    let end = w.iter().position(|f| f.text.starts_with(mark)).unwrap_or(w.len());
    let cmd = &w[..end];
    let args = w.get(end + 1..).unwrap_or(&[]).iter().filter(|f| !f.text.starts_with(mark)).cloned();
    match cmd {
        [] => None,
        [one] if one.text.contains(' ') => Some(Step::Scripts(vec![one.clone()])),
        _ => {
            let mut words = cmd.to_vec();
            if !cmd.iter().any(|f| f.text.contains("{}")) {
                words.extend(args);
            }
            Some(Step::Replace(words))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::catalog::find;

    fn fields(s: &str) -> Vec<Field> {
        s.split(' ').map(Field::lit).collect()
    }

    #[test]
    fn wrappers_find_their_command() {
        for (text, at) in [
            ("systemd-run --user --scope -p X=1 rm x", Some(5)),
            ("nvm exec 20 rm x", Some(3)),
            ("rbenv version", None),
            ("dotenv -e .env -- rm x", Some(4)),
            ("dotenv run rm x", Some(2)),
            ("chroot --userspec=a:b /jail rm x", Some(3)),
            ("bwrap --bind / / --dev /dev rm x", Some(6)),
            ("valgrind --help", None),
        ] {
            let words = fields(text);
            let p = find(&words[0].text).unwrap();
            assert_eq!(read_wrapper(p, &words).1, at, "{text}");
        }
    }

    /// What `step` makes of `text`: the command's first word, `sh -c`'s script, or nothing.
    fn stepped(text: &str) -> String {
        let words = fields(text);
        let p = find(&words[0].text).unwrap();
        match step(p, &words[0].text, &words) {
            Some(Step::Run(i)) => format!("run {}", words[i].text),
            Some(Step::Replace(w)) => {
                format!("replace {}", w.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join(" "))
            }
            Some(Step::Scripts(s)) => {
                format!("script {}", s.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join("; "))
            }
            None => "none".into(),
        }
    }

    #[test]
    fn each_form_is_read_as_the_manual_says() {
        for (text, want) in [
            // The operand before the command, and no options after it (`timeout` runs `-x`).
            ("timeout 10 -x", "run -x"),
            ("timeout -k5 10 rm", "run rm"),
            ("chrt -f -- 99 rm", "run rm"),
            ("taskset -c 0,1 rm", "run rm"),
            // Options may follow flock's file.
            ("flock /tmp/l -w 5 rm", "run rm"),
            ("flock -n /tmp/l -c CMD", "script CMD"),
            ("env A=1 -i rm", "run -i"),
            ("env -i A=1 B=2 rm", "run rm"),
            ("env -S CMD x", "script CMD x"),
            ("env --block-signal rm", "run rm"),
            ("sudo -l rm", "none"),
            ("sudo -lU bob", "none"),
            ("sudo -s", "replace sh"),
            ("sudo -s rm", "run rm"),
            ("sudo -u root A=1", "none"),
            ("ionice -c3 -p 1", "none"),
            ("xargs -0", "replace echo"),
            ("watch -n 1 rm x", "script rm x"),
            ("watch -xn1 rm x", "run rm"),
            ("parallel -j2 rm ::: a b", "replace rm a b"),
            ("parallel rm {} ::: a", "replace rm {}"),
            ("busybox rm", "run rm"),
            ("busybox -- rm", "none"),
            ("npm exec -c CMD", "script CMD"),
            ("npm run build", "none"),
            ("uv run -p 3.12 rm", "run rm"),
        ] {
            assert_eq!(stepped(text), want, "{text}");
        }
    }
}
