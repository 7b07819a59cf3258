//! Where a unit of a command runs, for allow entries (`context`): the chain of nested scripts
//! it came from (`ssh prod`, `kubectl exec`, `bash -c`, `$(…)`), the wrappers around it and
//! around the command that carried it that change user, host, environment or directory
//! (`sudo -u root`, `env GIT_DIR=/x`, `conda run -n base`), and `git -C` / `--git-dir` /
//! `--work-tree`. Steps are joined by ` › `; top level is the empty place. Anything cmdguard
//! cannot place is `None`, which only `context = "any"` covers.

use crate::shell::{Analysis, Segment, basename};

use super::Unit;

const SEP: &str = " › ";

/// Wrappers that change only scheduling, timing, buffering or how arguments are passed: the
/// command runs as the same user, on the same host, in the same directory. Every other wrapper
/// is a step of the place (an unknown one included, so an entry covers less, never more).
const NEUTRAL: &[&str] = &[
    "command",
    "builtin",
    "nohup",
    "setsid",
    "caffeinate",
    "unbuffer",
    "coproc",
    "exec",
    "nice",
    "time",
    "timeout",
    "stdbuf",
    "ionice",
    "chrt",
    "taskset",
    "flock",
    "xargs",
    "parallel",
    "watch",
    "busybox",
    "toybox",
];

/// Git options that point a command at another repository or work tree.
const GIT_PLACE: &[&str] = &["-C", "--git-dir", "--work-tree"];

/// The place of every segment, by index.
pub fn segment_places(a: &Analysis) -> Vec<String> {
    let chains: Vec<Vec<&str>> = a
        .segments
        .iter()
        .map(|s| if s.origin.is_empty() { Vec::new() } else { s.origin.split(SEP).collect() })
        .collect();
    let mut places: Vec<Vec<String>> = Vec::with_capacity(chains.len());
    for (i, seg) in a.segments.iter().enumerate() {
        let mut place = script_place(i, chains[i].len(), &chains, &places);
        place.extend(own_steps(seg));
        places.push(place);
    }
    places.into_iter().map(|p| p.join(SEP)).collect()
}

/// The place of a unit: a segment's own; a pipeline's when all its commands share one; the
/// whole command line is top level (its text shows every wrapper); a nested script's line is
/// not placed.
pub fn unit_place(a: &Analysis, places: &[String], unit: Unit) -> Option<String> {
    match unit {
        Unit::Segment(i) => places.get(i).cloned(),
        Unit::Line(0) => Some(String::new()),
        Unit::Line(_) => None,
        Unit::Pipeline(i) => {
            // Every segment with a member's text counts, so a pipeline repeated at two places
            // is placed at neither.
            let mut found: Option<&String> = None;
            for member in a.pipelines[i].split(" | ") {
                let mut any = false;
                for (j, _) in a.segments.iter().enumerate().filter(|(_, s)| s.text == member) {
                    any = true;
                    match found {
                        Some(p) if *p != places[j] => return None,
                        _ => found = Some(&places[j]),
                    }
                }
                if !any {
                    return None;
                }
            }
            found.cloned()
        }
    }
}

/// The place of the script segment `i` is in, at nesting depth `k` of its chain.
fn script_place(i: usize, k: usize, chains: &[Vec<&str>], places: &[Vec<String>]) -> Vec<String> {
    if k == 0 {
        return Vec::new();
    }
    let label = chains[i][k - 1];
    // A substitution runs in the shell of the script around it, not under the wrappers of the
    // command it is written in (`sudo echo $(id)` runs `id` as you).
    if ["$(", "${", "$((", "`", "<(", ">("].iter().any(|p| label.starts_with(p)) {
        let mut place = script_place(i, k - 1, chains, places);
        place.push(label.to_string());
        return place;
    }
    // A carried script runs under its carrier's place: the carrier is the nearest earlier
    // segment one level up (its nested segments follow it).
    let prefix = &chains[i][..k - 1];
    match (0..i).rev().find(|&j| chains[j] == prefix) {
        Some(j) => {
            let mut place = places[j].clone();
            place.push(label.to_string());
            place
        }
        None => {
            let mut place = script_place(i, k - 1, chains, places);
            place.push(format!("{label} (carrier not found)"));
            place
        }
    }
}

/// Whether removed wrapper text holds an assignment (`NAME=value`, not an `--option=value`).
fn sets_variables(text: &str) -> bool {
    text.split(' ').skip(1).any(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

/// The steps a segment's own wrappers and git options add.
fn own_steps(seg: &Segment) -> Vec<String> {
    let mut steps = Vec::new();
    // One "unwrapped `…`" note per wrapper, in the same order (shell::unwrap).
    let mut removed = seg.notes.iter().filter_map(|n| n.strip_prefix("unwrapped `")?.strip_suffix('`'));
    for w in &seg.wrappers {
        let text = removed.next();
        // A neutral wrapper that sets variables (`time GIT_DIR=/x …`) changes the environment.
        if NEUTRAL.contains(&w.as_str()) && !text.is_some_and(sets_variables) {
            continue;
        }
        let step = match text.and_then(|t| t.split_once(' ').map(|(p, rest)| (p, Some(rest))).or(Some((t, None)))) {
            Some((prog, rest)) if basename(prog) == w => {
                format!("{w}{}", rest.map(|r| format!(" {r}")).unwrap_or_default())
            }
            _ => w.clone(),
        };
        steps.push(step);
    }
    for options in seg.notes.iter().filter_map(|n| n.strip_prefix("removed git options `")?.strip_suffix('`')) {
        let words: Vec<&str> = options.split(' ').collect();
        let mut place = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            if GIT_PLACE.contains(&w) {
                place.extend(words.get(i..i + 2).unwrap_or(&words[i..]));
                i += 2;
                continue;
            }
            if GIT_PLACE.iter().any(|o| o.starts_with("--") && w.starts_with(&format!("{o}="))) {
                place.push(w);
            }
            i += 1;
        }
        if !place.is_empty() {
            steps.push(format!("git {}", place.join(" ")));
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::analyze_script;

    /// The place of the segment whose text is `text` in `command`.
    fn place(command: &str, text: &str) -> String {
        let a = analyze_script(command);
        let places = segment_places(&a);
        let i = a.segments.iter().position(|s| s.text == text).unwrap_or_else(|| panic!("{command}: no {text:?}"));
        places[i].clone()
    }

    #[test]
    fn places_name_what_changes_where_a_command_runs() {
        let push = "git push --force origin main";
        let cases = [
            ("git push --force origin main", ""),
            ("nice timeout 5 git push --force origin main", ""),
            ("ssh prod git push --force origin main", "ssh prod"),
            ("kubectl exec pod -- git push --force origin main", "kubectl exec"),
            ("sudo git push --force origin main", "sudo"),
            ("sudo -u deploy git push --force origin main", "sudo -u deploy"),
            ("/usr/bin/sudo -u deploy git push --force origin main", "sudo -u deploy"),
            ("git -C /elsewhere push --force origin main", "git -C /elsewhere"),
            ("git --git-dir=/x --no-pager push --force origin main", "git --git-dir=/x"),
            ("git --no-pager push --force origin main", ""),
            ("env GIT_DIR=/x git push --force origin main", "env GIT_DIR=/x"),
            ("time GIT_DIR=/x git push --force origin main", "time GIT_DIR=/x"),
            ("timeout --signal=KILL 5 git push --force origin main", ""),
            ("bash -c 'git push --force origin main'", "bash -c"),
            // The carrier's wrappers reach what it carries; a substitution's do not.
            ("sudo bash -c 'git push --force origin main'", "sudo › bash -c"),
            ("ssh prod sudo -u root git push --force origin main", "ssh prod › sudo -u root"),
            ("sudo echo $(git push --force origin main)", "$(…)"),
            ("true; bash -c 'git push --force origin main'", "bash -c"),
        ];
        for (command, want) in cases {
            assert_eq!(place(command, push), want, "{command}");
        }
    }

    #[test]
    fn a_pipeline_is_placed_only_where_all_its_commands_are() {
        let placed = |command: &str| {
            let a = analyze_script(command);
            let places = segment_places(&a);
            unit_place(&a, &places, Unit::Pipeline(0))
        };
        assert_eq!(placed("curl x | sh"), Some(String::new()));
        assert_eq!(placed("ssh prod 'curl x | sh'"), Some("ssh prod".into()));
        assert_eq!(placed("curl x | sudo sh"), None);
    }
}
