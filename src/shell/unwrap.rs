//! Wrappers: programs that run another program (`sudo`, `env X=1`, `timeout 10`, `xargs`, …),
//! peeled off one after another so that rules see the real program. Which programs wrap and
//! how they read their words is the catalogue's (`programs/*.toml`, read by `wrapper.rs`).
//! Wrappers that run a script string (`env -S`, `flock -c`, `watch`) hand it on as a nested
//! script. Also `skip_options`, the plain option skipper the code-read programs use.

use super::catalog::{self, Role};
use super::nested::{self, Nested, NestedKind, StdinUse};
use super::wrapper::{self, Step};
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
    /// The catalogue entry of the program `words` run, when it was looked up for them.
    pub entry: Option<Option<&'static catalog::Program>>,
    /// What reading `words`' options with that entry from the second word found, when they
    /// were read so: whether an option informs, and the first operand not a `+toolchain`.
    pub first_operand: Option<(bool, Option<usize>)>,
}

/// The catalogue entries of a command's program and of its second word as a subcommand
/// (`git rebase`): looked up once, for unwrapping and then for the options it reads.
#[derive(Clone, Copy)]
pub struct Entries {
    pub main: Option<&'static catalog::Program>,
    pub sub: Option<&'static catalog::Program>,
}

impl Entries {
    pub fn of(prog: &str, words: &[Field]) -> Entries {
        let sub = words.get(1).filter(|f| !f.dynamic && catalog::has_subcommand_entries(prog));
        Entries { main: catalog::find(prog), sub: sub.and_then(|f| catalog::find_sub(prog, &f.text)) }
    }
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

/// The step the wrapper `prog` takes, as its catalogue entry says. A wrapper the rules judge
/// themselves (`sshpass -p`) stays in view: `shell::open` reads the command it runs as a nested
/// one. A subcommand's own entry (`tmux if-shell`) comes first, after the program's options; it
/// reads from the subcommand.
fn step(prog: &str, w: &[Field], entries: Entries) -> Option<Step> {
    let main = entries.main;
    let at = main.filter(|p| p.role == Role::Wrapper && !p.subcommands.is_empty()).map_or(1, |p| p.read(w, 1).end);
    let sub = if at == 1 {
        entries.sub
    } else {
        let sub = w.get(at).filter(|f| !f.dynamic && catalog::has_subcommand_entries(prog));
        sub.and_then(|f| catalog::find_sub(prog, &f.text))
    };
    let sub = sub.filter(|p| p.role == Role::Wrapper);
    let (entry, w, offset) = match sub {
        Some(p) => (p, &w[at..], at),
        None => (main?, w, 0),
    };
    if entry.role != Role::Wrapper || catalog::in_view(entry, prog) {
        return None;
    }
    match wrapper::step(entry, prog, w)? {
        Step::Run(i) => Some(Step::Run(i + offset)),
        other => Some(other),
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
        entry: None,
        first_operand: None,
    };
    // The entries of `words` as they are now, while no step has changed them.
    let mut entries = None;
    for round in 0..=MAX_WRAPPERS {
        if words[0].dynamic {
            break;
        }
        let prog = basename(&words[0].text);
        let looked_up = Entries::of(prog, &words);
        entries = Some(looked_up);
        let next = step(prog, &words, looked_up);
        if next.is_none() {
            break;
        }
        let prog = basename(&words[0].text).to_string();
        if round == MAX_WRAPPERS && next.is_some() {
            u.limit = Some(format!("more than {MAX_WRAPPERS} wrappers around one command"));
            break;
        }
        match next {
            Some(Step::Run(i)) if i < words.len() => {
                let removed = words.drain(..i).map(|f| f.text).collect::<Vec<_>>().join(" ");
                u.notes.push(format!("unwrapped `{removed}`"));
                u.wrappers.push(prog);
                entries = None;
            }
            Some(Step::Replace(new)) => {
                u.notes.push(format!("unwrapped `{prog}`"));
                u.wrappers.push(prog);
                words = new;
                entries = None;
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
    if nested::carriers(&mut words, &mut u) {
        entries = None;
    }
    super::open::carried(&mut words, &mut u, entries);
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
