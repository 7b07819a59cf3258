//! Wrappers: programs that run another program (`sudo`, `env X=1`, `timeout 10`, `xargs`, …).
//! Each is removed with its own options so that rules see the real program. Wrappers that run a
//! script string (`env -S`, `flock -c`, `watch`) hand it on as a nested script.

use super::catalog::{self, Role};
use super::nested::{self, Nested, NestedKind, StdinUse, script_of};
use super::{Field, basename};

/// Most wrappers peeled off one command (`sudo nice timeout 5 env …`).
const MAX_WRAPPERS: usize = 16;

pub struct Unwrapped {
    pub words: Vec<Field>,
    pub wrappers: Vec<String>,
    pub nested: Vec<Nested>,
    /// The program reads a script or code from standard input.
    pub stdin: Option<StdinUse>,
    pub notes: Vec<String>,
    /// Set when unwrapping stopped at a limit; the command is then asked about.
    pub limit: Option<String>,
}

/// What a wrapper does with the words after it.
enum Step {
    /// The wrapped command starts at this index.
    Run(usize),
    /// The wrapped command is these words.
    Replace(Vec<Field>),
    /// The wrapper runs this script string through a shell.
    Script(Field),
    /// The wrapper runs each of these through a shell.
    Scripts(Vec<Field>),
}

/// An option seen while skipping options: its name and value, if it took one.
pub type Opt = (String, Option<String>);

/// Skips options from `start`; returns the index of the first operand and the options seen.
/// `short_arg` lists short options that take a value, `long_arg` long ones.
pub fn skip_options(
    words: &[Field],
    start: usize,
    short_arg: &str,
    long_arg: &[&str],
    numeric: bool,
) -> (usize, Vec<Opt>) {
    let mut opts = Vec::new();
    let mut i = start;
    while let Some(w) = words.get(i).map(|f| f.text.as_str()) {
        if w == "--" {
            i += 1;
            break;
        }
        if let Some(long) = w.strip_prefix("--").filter(|l| !l.is_empty()) {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_string())),
                None => (w.to_string(), None),
            };
            if value.is_none() && long_arg.contains(&name.as_str()) {
                opts.push((name, words.get(i + 1).map(|f| f.text.clone())));
                i += 2;
            } else {
                opts.push((name, value));
                i += 1;
            }
            continue;
        }
        let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        if numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            opts.push((w.to_string(), None));
            i += 1;
            continue;
        }
        for (j, ch) in cluster.char_indices() {
            if short_arg.contains(ch) {
                let rest = &cluster[j + ch.len_utf8()..];
                let value = if rest.is_empty() {
                    i += 1;
                    words.get(i).map(|f| f.text.clone())
                } else {
                    Some(rest.to_string())
                };
                opts.push((format!("-{ch}"), value));
                break;
            }
            opts.push((format!("-{ch}"), None));
        }
        i += 1;
    }
    (i.min(words.len()), opts)
}

fn has(opts: &[Opt], names: &[&str]) -> bool {
    opts.iter().any(|(n, _)| names.contains(&n.as_str()))
}

fn value<'a>(opts: &'a [Opt], names: &[&str]) -> Option<&'a str> {
    opts.iter().rev().find(|(n, _)| names.contains(&n.as_str())).and_then(|(_, v)| v.as_deref())
}

/// Skips `NAME=value` words (after `env` and `sudo`).
fn skip_assignments(words: &[Field], mut i: usize) -> usize {
    while words.get(i).is_some_and(|f| {
        f.text
            .split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    }) {
        i += 1;
    }
    i
}

fn step(prog: &str, w: &[Field]) -> Option<Step> {
    // A wrapper the rules judge themselves (`sshpass -p`) stays in view: `shell::open` reads
    // the command it runs as a nested one.
    // A subcommand's own entry (`tmux if-shell`) comes first, after the program's options; it
    // reads from the subcommand.
    let main = catalog::find(prog);
    let at = main.filter(|p| p.role == Role::Wrapper && !p.subcommands.is_empty()).map_or(1, |p| p.read(w, 1).end);
    let sub = w.get(at).filter(|f| !f.dynamic && catalog::has_subcommand_entries(prog));
    let sub = sub.and_then(|f| catalog::find(&format!("{prog} {}", f.text))).filter(|p| p.role == Role::Wrapper);
    let (entry, w, offset) = match sub {
        Some(p) => (Some(p), &w[at..], at),
        None => (main, w, 0),
    };
    if let Some(p) = entry.filter(|p| p.role == Role::Wrapper && !catalog::named_by_rules(prog)) {
        let (reading, run) = catalog::read_wrapper(p, w);
        if let Some((_, script)) = reading.scripts.into_iter().next() {
            return Some(Step::Script(catalog::typed(p, script)));
        }
        return match run {
            // `tmux if-shell TEST 'run-shell CMD'`: a shell command, then commands of tmux.
            Some(i) if p.test_then => {
                let mut scripts = vec![w[i].clone()];
                scripts.extend(
                    w[i + 1..].iter().map(|f| Field { text: format!("{prog} {}", f.text), dynamic: f.dynamic }),
                );
                Some(Step::Scripts(scripts))
            }
            Some(i) if p.operands_script => Some(Step::Script(script_of(&w[i..]))),
            Some(i) => Some(Step::Run(i + offset)),
            None => None,
        };
    }
    let run = |(i, _): (usize, Vec<Opt>)| Some(Step::Run(i));
    match prog {
        "sudo" => {
            let (i, opts) = skip_options(
                w,
                1,
                "ugpChDrtUTR",
                &[
                    "--user",
                    "--group",
                    "--prompt",
                    "--close-from",
                    "--host",
                    "--chdir",
                    "--role",
                    "--type",
                    "--other-user",
                    "--command-timeout",
                    "--chroot",
                ],
                false,
            );
            if has(&opts, &["-l", "-v", "-V", "-e", "-K", "--list", "--validate", "--version", "--edit"]) {
                return None;
            }
            let i = skip_assignments(w, i);
            Some(login_shell(w, i, &opts, &["-s", "-i", "--shell", "--login"]))
        }
        "doas" => {
            let (i, opts) = skip_options(w, 1, "uC", &[], false);
            Some(login_shell(w, i, &opts, &["-s"]))
        }
        "env" => {
            let (i, opts) = skip_options(
                w,
                1,
                "uCSP",
                &["--unset", "--chdir", "--split-string", "--block-signal", "--default-signal", "--ignore-signal"],
                false,
            );
            let i = skip_assignments(w, i);
            match value(&opts, &["-S", "--split-string"]) {
                Some(s) => {
                    let mut parts = vec![Field::lit(s)];
                    parts.extend(w[i..].iter().cloned());
                    Some(Step::Script(script_of(&parts)))
                }
                None => Some(Step::Run(i)),
            }
        }
        "command" => {
            let (i, opts) = skip_options(w, 1, "", &[], false);
            if has(&opts, &["-v", "-V"]) { None } else { Some(Step::Run(i)) }
        }
        "exec" => run(skip_options(w, 1, "a", &[], false)),
        // After bash's `time` keyword, `NAME=value` words are still assignments.
        "time" => {
            let (i, _) = skip_options(w, 1, "fo", &["--format", "--output"], false);
            Some(Step::Run(skip_assignments(w, i)))
        }
        "timeout" => {
            let (i, _) = skip_options(w, 1, "sk", &["--signal", "--kill-after"], false);
            Some(Step::Run(i + 1))
        }
        "ionice" => {
            let (i, opts) = skip_options(w, 1, "cnpPu", &["--class", "--classdata", "--pid", "--pgid", "--uid"], false);
            if has(&opts, &["-p", "-P", "-u", "--pid", "--pgid", "--uid"]) { None } else { Some(Step::Run(i)) }
        }
        "chrt" => {
            let (i, opts) =
                skip_options(w, 1, "TPD", &["--sched-runtime", "--sched-period", "--sched-deadline"], false);
            if has(&opts, &["-p", "-m", "--pid", "--max"]) { None } else { Some(Step::Run(i + 1)) }
        }
        "taskset" => {
            let (i, opts) = skip_options(w, 1, "", &[], false);
            if has(&opts, &["-p", "--pid"]) { None } else { Some(Step::Run(i + 1)) }
        }
        "flock" => {
            let (i, opts) = skip_options(w, 1, "wEc", &["--timeout", "--conflict-exit-code", "--command"], false);
            match value(&opts, &["-c", "--command"]) {
                Some(c) => Some(Step::Script(Field::lit(c))),
                // `flock FILE -c CMD`: options may follow the lock file.
                None => {
                    let (j, more) =
                        skip_options(w, i + 1, "wEc", &["--timeout", "--conflict-exit-code", "--command"], false);
                    match value(&more, &["-c", "--command"]) {
                        Some(c) => Some(Step::Script(Field::lit(c))),
                        None => Some(Step::Run(j)),
                    }
                }
            }
        }
        "xargs" => {
            let (i, _) = skip_options(w, 1, super::xargs::XARGS_SHORT, super::xargs::XARGS_LONG, false);
            if i >= w.len() { Some(Step::Replace(vec![Field::lit("echo")])) } else { Some(Step::Run(i)) }
        }
        "parallel" => parallel(w),
        "watch" => {
            let (i, opts) = skip_options(w, 1, "nq", &["--interval", "--equexit"], false);
            if i >= w.len() {
                None
            } else if has(&opts, &["-x", "--exec"]) {
                Some(Step::Run(i))
            } else {
                Some(Step::Script(script_of(&w[i..])))
            }
        }
        "busybox" | "toybox" => (w.len() > 1 && !w[1].text.starts_with('-')).then_some(Step::Run(1)),
        // Launchers that run a program from a project's environment.
        "npx" | "bunx" | "pnpx" | "uvx" => {
            let (i, opts) = skip_options(w, 1, "pc", &["--package", "--call", "--from", "--with", "--python"], false);
            match value(&opts, &["-c", "--call"]) {
                Some(c) => Some(Step::Script(Field::lit(c))),
                None => Some(Step::Run(i)),
            }
        }
        "pnpm" | "yarn" => sub_run(w, &["exec", "dlx"], "", &["--package"]),
        "npm" => sub_run(w, &["exec", "x"], "pc", &["--package", "--call"]),
        "uv" => sub_run(
            w,
            &["run"],
            "p",
            &[
                "--with",
                "--python",
                "--directory",
                "--project",
                "--env-file",
                "--package",
                "--extra",
                "--group",
                "--index",
                "--from",
                "--with-requirements",
            ],
        ),
        "nix-shell" => {
            let (_, opts) = skip_options(w, 1, "pIA", &["--run", "--command", "--packages", "--attr"], false);
            value(&opts, &["--run", "--command"]).map(|c| Step::Script(Field::lit(c)))
        }
        _ => None,
    }
}

/// `TOOL SUB [OPTIONS] CMD…` launchers (`bundle exec`, `poetry run`, `uv run`): the command after
/// the subcommand and its options. `npm exec -c STRING` runs a script.
fn sub_run(w: &[Field], subs: &[&str], short_arg: &str, long_arg: &[&str]) -> Option<Step> {
    if !w.get(1).is_some_and(|f| subs.contains(&f.text.as_str())) {
        return None;
    }
    let (i, opts) = skip_options(w, 2, short_arg, long_arg, false);
    match value(&opts, &["-c", "--call"]) {
        Some(c) if short_arg.contains('c') => Some(Step::Script(Field::lit(c))),
        _ => Some(Step::Run(i)),
    }
}

/// `sudo -s` / `sudo -i` / `doas -s` with no command start a shell that reads its commands from
/// standard input; with a command they run it.
fn login_shell(w: &[Field], i: usize, opts: &[Opt], shell_flags: &[&str]) -> Step {
    if i >= w.len() && has(opts, shell_flags) { Step::Replace(vec![Field::lit("sh")]) } else { Step::Run(i) }
}

/// `parallel CMD ::: ARGS` runs CMD with the arguments; a quoted CMD string is a script.
fn parallel(w: &[Field]) -> Option<Step> {
    let (i, _) = skip_options(w, 1, super::xargs::PARALLEL_SHORT, super::xargs::PARALLEL_LONG, false);
    let end = w.iter().skip(i).position(|f| f.text.starts_with(":::")).map_or(w.len(), |n| i + n);
    let cmd = &w[i..end];
    let args: Vec<Field> =
        w.get(end + 1..).unwrap_or(&[]).iter().filter(|f| !f.text.starts_with(":::")).cloned().collect();
    match cmd {
        [] => None,
        [one] if one.text.contains(' ') => Some(Step::Script(one.clone())),
        _ => {
            let mut words = cmd.to_vec();
            if !cmd.iter().any(|f| f.text.contains("{}")) {
                words.extend(args);
            }
            Some(Step::Replace(words))
        }
    }
}

/// Peels wrappers off `words` and finds the nested scripts of what remains.
pub fn unwrap(mut words: Vec<Field>) -> Unwrapped {
    let mut u = Unwrapped {
        words: Vec::new(),
        wrappers: Vec::new(),
        nested: Vec::new(),
        stdin: None,
        notes: Vec::new(),
        limit: None,
    };
    for round in 0..=MAX_WRAPPERS {
        let prog = basename(&words[0].text).to_string();
        if words[0].dynamic {
            break;
        }
        let next = step(&prog, &words);
        if round == MAX_WRAPPERS && next.is_some() {
            u.limit = Some(format!("more than {MAX_WRAPPERS} wrappers around one command"));
            break;
        }
        match next {
            Some(Step::Run(i)) if i < words.len() => {
                let removed = words.drain(..i).map(|f| f.text).collect::<Vec<_>>().join(" ");
                u.notes.push(format!("unwrapped `{removed}`"));
                u.wrappers.push(prog);
            }
            Some(Step::Replace(new)) => {
                u.notes.push(format!("unwrapped `{prog}`"));
                u.wrappers.push(prog);
                words = new;
            }
            Some(Step::Script(script)) => {
                u.nested.push(Nested { origin: prog.clone(), kind: NestedKind::Script(script) });
                break;
            }
            Some(Step::Scripts(scripts)) => {
                for script in scripts {
                    u.nested.push(Nested { origin: prog.clone(), kind: NestedKind::Script(script) });
                }
                break;
            }
            _ => break,
        }
    }
    nested::carriers(&mut words, &mut u);
    super::open::carried(&mut words, &mut u);
    u.words = words;
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(s: &str) -> Vec<Field> {
        s.split(' ').map(Field::lit).collect()
    }

    fn program_after(s: &str) -> String {
        let u = unwrap(fields(s));
        u.words.iter().map(|f| f.text.clone()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn unwraps_wrappers_with_their_options() {
        let cases = [
            ("sudo -u root -E rm -rf /", "rm -rf /"),
            ("sudo -- rm x", "rm x"),
            ("doas -u root rm x", "rm x"),
            ("env -i -u HOME -C /tmp X=1 Y=2 rm x", "rm x"),
            ("command rm x", "rm x"),
            ("command -v rm", "command -v rm"),
            ("builtin exec -a name rm x", "rm x"),
            ("nice -n 10 rm x", "rm x"),
            ("nice -10 rm x", "rm x"),
            ("nohup setsid -f rm x", "rm x"),
            ("time -p rm x", "rm x"),
            ("timeout -s KILL -k 5 10 rm x", "rm x"),
            ("timeout 10s rm x", "rm x"),
            ("stdbuf -oL -e 0 rm x", "rm x"),
            ("ionice -c 3 rm x", "rm x"),
            ("chrt -f 99 rm x", "rm x"),
            ("taskset -c 0,1 rm x", "rm x"),
            ("taskset 0x1 rm x", "rm x"),
            ("flock -w 5 /tmp/lock rm x", "rm x"),
            ("xargs -0 -n 1 -P 4 rm -rf", "rm -rf"),
            ("xargs -I{} rm {}", "rm {}"),
            ("xargs", "echo"),
            ("watch -x -n 1 rm x", "rm x"),
            ("busybox rm -rf /", "rm -rf /"),
            ("parallel -j 4 rm -rf ::: a b", "rm -rf a b"),
            ("/usr/bin/sudo /bin/rm x", "/bin/rm x"),
            ("sudo nice timeout 5 env A=1 rm x", "rm x"),
            ("npx -y rimraf dist", "rimraf dist"),
            ("uv run --with x python -V", "python -V"),
            ("pnpm exec prisma migrate reset", "prisma migrate reset"),
            ("npm exec -- cdk destroy", "cdk destroy"),
            ("conda run -n base python x", "python x"),
            ("direnv exec . terraform destroy", "terraform destroy"),
            ("npm run build", "npm run build"),
        ];
        for (input, want) in cases {
            assert_eq!(program_after(input), want, "{input}");
        }
    }

    #[test]
    fn script_wrappers_hand_on_a_nested_script() {
        for input in ["watch -n 1 rm -rf x", "flock /tmp/l -c rm", "env -S rm"] {
            let u = unwrap(fields(input));
            assert!(matches!(u.nested.first(), Some(Nested { kind: NestedKind::Script(_), .. })), "{input}");
        }
    }
}
