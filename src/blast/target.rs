//! What a destructive command would destroy, read from its words: the git forms whose loss can
//! be counted locally (`reset --hard`, `checkout .`, `restore`, `stash drop/clear`, `clean -f`,
//! `branch -D`, `worktree remove --force`, `push --force`) and the file forms (`rm -r`,
//! `find … -delete`, `shred`, `truncate`, `>` onto a file). A command is only read when all its
//! words are known; anything this cannot read exactly is `None`, and nothing is said about it.

use crate::shell::Segment;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stake {
    /// `git reset --hard [COMMIT]`: uncommitted changes, and the commits only HEAD reaches.
    ResetHard { to: Option<String> },
    /// `git checkout [--] PATHS` / `git restore PATHS`: unstaged changes under the paths.
    Discard { paths: Vec<String>, staged_too: bool },
    /// `git stash drop [STASH]` (`None`: the latest) or `git stash clear` (`all`).
    StashDrop { stash: Option<String>, all: bool },
    /// `git clean` with these options, `-f` left out (run again as `-n`).
    Clean { args: Vec<String> },
    /// `git branch -D NAMES`: commits no other ref reaches.
    BranchDelete { names: Vec<String> },
    /// `git worktree remove --force PATH`: its uncommitted and untracked files.
    WorktreeRemove { path: String },
    /// `git push --force [REMOTE [REFSPECS]]`: commits on the remote-tracking branch dropped.
    ForcePush { remote: Option<String>, refspecs: Vec<String> },
    /// Files deleted, overwritten or emptied; directories only when `recursive`.
    Files { how: FileOp, paths: Vec<String>, recursive: bool },
    /// `find ROOTS EXPRESSION -delete`, the expression without `-delete`.
    FindDelete { roots: Vec<String>, expression: Vec<String> },
    /// One of these forms with a word known only when it runs (`rm -rf "$d"`).
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Remove,
    Shred,
    Truncate,
    Clobber,
}

impl FileOp {
    pub fn verb(self) -> &'static str {
        match self {
            FileOp::Remove => "deletes",
            FileOp::Shred => "shreds",
            FileOp::Truncate => "truncates",
            FileOp::Clobber => "overwrites",
        }
    }
}

/// The stakes of one simple command (a redirection onto a file is one more).
pub fn stakes(seg: &Segment) -> Vec<Stake> {
    let mut out = Vec::new();
    let words: Vec<&str> = seg.words.iter().map(String::as_str).collect();
    if let Some(s) = words.split_first().and_then(|(p, args)| program_stake(p, args)) {
        out.push(s);
    }
    // `> FILE`, `2> FILE`, `>| FILE`, `&> FILE` empty the file first; `>>` and `>&N` do not.
    let clobbered: Vec<String> = seg
        .redirects
        .iter()
        .filter_map(|r| r.split_once(' '))
        .filter(|(op, _)| matches!(op.trim_start_matches(|c: char| c.is_ascii_digit()), ">" | ">|" | "&>"))
        .map(|(_, t)| t)
        .filter(|t| !t.starts_with("/dev/") && !t.is_empty())
        .map(String::from)
        .collect();
    if !clobbered.is_empty() {
        out.push(Stake::Files { how: FileOp::Clobber, paths: clobbered, recursive: false });
    }
    if !seg.is_static && !out.is_empty() {
        return vec![Stake::Unknown];
    }
    out
}

fn program_stake(program: &str, args: &[&str]) -> Option<Stake> {
    match program {
        "git" => git_stake(args),
        "rm" => {
            let (opts, paths) = split(args);
            let recursive = opts.iter().any(|o| {
                matches!(*o, "--recursive" | "--dir") || (!o.starts_with("--") && o.contains(['r', 'R', 'd']))
            });
            Some(Stake::Files { how: FileOp::Remove, paths, recursive })
        }
        "shred" => {
            let (_, paths) = split(args);
            Some(Stake::Files { how: FileOp::Shred, paths, recursive: false })
        }
        "truncate" => truncate_stake(args),
        "find" => find_stake(args),
        _ => None,
    }
}

/// Options and operands (everything after `--` is an operand).
fn split<'a>(args: &[&'a str]) -> (Vec<&'a str>, Vec<String>) {
    let (mut opts, mut paths) = (Vec::new(), Vec::new());
    let mut dashes = false;
    for a in args {
        if dashes || !a.starts_with('-') || *a == "-" {
            paths.push((*a).to_string());
        } else if *a == "--" {
            dashes = true;
        } else {
            opts.push(*a);
        }
    }
    (opts, paths)
}

fn truncate_stake(args: &[&str]) -> Option<Stake> {
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-s" | "--size" | "-r" | "--reference" => {
                it.next();
            }
            a if a.starts_with("--size=") || a.starts_with("--reference=") || a.starts_with('-') => {}
            a => paths.push(a.to_string()),
        }
    }
    Some(Stake::Files { how: FileOp::Truncate, paths, recursive: false })
}

/// Tests and operators `find` evaluates without side effects and that take no argument; with
/// `FIND_ARG`, the only words run again (to list what `-delete` would remove). Any other word
/// (`-exec`, `-fprint`, an unknown test) says nothing.
const FIND_PURE: &[&str] = &[
    "-empty",
    "-depth",
    "-xdev",
    "-mount",
    "-not",
    "!",
    "-a",
    "-and",
    "-o",
    "-or",
    "(",
    ")",
    "-true",
    "-false",
    "-readable",
    "-writable",
    "-executable",
    "-nouser",
    "-nogroup",
    "-prune",
    "-print",
    "-daystart",
    "-noleaf",
];

/// Side-effect-free tests that take one argument.
const FIND_ARG: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-type",
    "-xtype",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-maxdepth",
    "-mindepth",
    "-samefile",
    "-inum",
    "-lname",
    "-ilname",
];

fn find_stake(args: &[&str]) -> Option<Stake> {
    // Leading options (-H, -L, -P) change what is followed: leave those alone.
    let start = args.iter().position(|a| a.starts_with('-') || *a == "!" || *a == "(").unwrap_or(args.len());
    let roots: Vec<String> = args[..start].iter().map(|s| s.to_string()).collect();
    if roots.iter().any(|r| matches!(r.as_str(), "-H" | "-L" | "-P")) {
        return None;
    }
    let mut expression = Vec::new();
    let mut deletes = false;
    let mut it = args[start..].iter();
    while let Some(&a) = it.next() {
        if a == "-delete" {
            deletes = true;
            continue;
        }
        if !FIND_PURE.contains(&a) && !FIND_ARG.contains(&a) {
            return None;
        }
        expression.push(a.to_string());
        if FIND_ARG.contains(&a) {
            expression.push(it.next()?.to_string());
        }
    }
    deletes.then_some(Stake::FindDelete { roots: if roots.is_empty() { vec![".".into()] } else { roots }, expression })
}

fn git_stake(args: &[&str]) -> Option<Stake> {
    let (sub, rest) = args.split_first()?;
    let (opts, operands) = split(rest);
    let has = |o: &str| opts.contains(&o);
    match *sub {
        "reset" if has("--hard") => {
            Some(Stake::ResetHard { to: operands.first().cloned() }).filter(|_| operands.len() <= 1)
        }
        "checkout" => {
            // `checkout -- PATHS` or `checkout .`; `checkout BRANCH` switches and keeps changes.
            let dashes = rest.contains(&"--");
            let paths: Vec<String> = if dashes {
                rest.iter().skip_while(|a| **a != "--").skip(1).map(|s| s.to_string()).collect()
            } else if operands.iter().all(|p| p == "." || p.starts_with("./") || p.starts_with(":/")) {
                operands
            } else {
                return None;
            };
            let tree_ish = dashes && rest.iter().take_while(|a| **a != "--").any(|a| !a.starts_with('-'));
            (!paths.is_empty() && !tree_ish && opts.iter().all(|o| matches!(*o, "-f" | "--force" | "--")))
                .then_some(Stake::Discard { paths, staged_too: false })
        }
        "restore" => {
            let staged = has("--staged") || has("-S");
            let worktree = has("--worktree") || has("-W") || !staged;
            let plain = opts.iter().all(|o| matches!(*o, "--staged" | "-S" | "--worktree" | "-W" | "-SW" | "-WS"));
            (worktree && plain && !operands.is_empty())
                .then_some(Stake::Discard { paths: operands, staged_too: staged })
        }
        "stash" => match operands.first().map(String::as_str) {
            Some("drop") => Some(Stake::StashDrop { stash: operands.get(1).cloned(), all: false }),
            Some("clear") => Some(Stake::StashDrop { stash: None, all: true }),
            _ => None,
        },
        "clean" => {
            let force = opts.iter().any(|o| *o == "--force" || (!o.starts_with("--") && o.contains('f')));
            force.then(|| Stake::Clean { args: rest.iter().map(|s| s.to_string()).collect() })
        }
        "branch" => {
            let force_delete =
                has("-D") || (has("-d") || has("--delete")) && (has("-f") || has("--force")) || has("-df");
            (force_delete && !operands.is_empty()).then_some(Stake::BranchDelete { names: operands })
        }
        "worktree" => {
            let force = has("--force") || has("-f");
            match operands.as_slice() {
                [verb, path] if verb == "remove" && force => Some(Stake::WorktreeRemove { path: path.clone() }),
                _ => None,
            }
        }
        "push" => {
            let force = opts.iter().any(|o| {
                matches!(*o, "-f" | "--force" | "--force-with-lease" | "--force-if-includes")
                    || o.starts_with("--force-with-lease=")
            }) || operands.iter().skip(1).any(|r| r.starts_with('+'));
            let wide = opts.iter().any(|o| matches!(*o, "--mirror" | "--all" | "--tags" | "--delete" | "-d"));
            let valued = opts.iter().any(|o| matches!(*o, "-o" | "--push-option" | "--repo" | "--receive-pack"));
            (force && !wide && !valued).then(|| Stake::ForcePush {
                remote: operands.first().cloned(),
                refspecs: operands.iter().skip(1).cloned().collect(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Vec<Stake> {
        let a = crate::shell::analyze_script(text);
        a.segments.iter().filter(|s| s.origin.is_empty()).flat_map(stakes).collect()
    }

    #[test]
    fn git_forms_are_read() {
        assert_eq!(of("git reset --hard"), vec![Stake::ResetHard { to: None }]);
        assert_eq!(of("git reset --hard HEAD~2"), vec![Stake::ResetHard { to: Some("HEAD~2".into()) }]);
        assert_eq!(of("git checkout -- ."), vec![Stake::Discard { paths: vec![".".into()], staged_too: false }]);
        assert_eq!(of("git checkout ."), vec![Stake::Discard { paths: vec![".".into()], staged_too: false }]);
        assert_eq!(of("git checkout main"), vec![]);
        assert_eq!(of("git checkout HEAD~1 -- src"), vec![]);
        assert_eq!(
            of("git restore --staged --worktree src"),
            vec![Stake::Discard { paths: vec!["src".into()], staged_too: true }]
        );
        assert_eq!(of("git restore --staged src"), vec![]);
        assert_eq!(of("git stash drop"), vec![Stake::StashDrop { stash: None, all: false }]);
        assert_eq!(of("git stash clear"), vec![Stake::StashDrop { stash: None, all: true }]);
        assert_eq!(of("git clean -fdx"), vec![Stake::Clean { args: vec!["-fdx".into()] }]);
        assert_eq!(of("git clean -n"), vec![]);
        assert_eq!(of("git branch -D old"), vec![Stake::BranchDelete { names: vec!["old".into()] }]);
        assert_eq!(of("git branch -d old"), vec![]);
        assert_eq!(of("git worktree remove --force ../wt"), vec![Stake::WorktreeRemove { path: "../wt".into() }]);
        assert_eq!(of("git push -f"), vec![Stake::ForcePush { remote: None, refspecs: vec![] }]);
        assert_eq!(
            of("git push origin +main"),
            vec![Stake::ForcePush { remote: Some("origin".into()), refspecs: vec!["+main".into()] }]
        );
        assert_eq!(of("git push --mirror -f"), vec![]);
        assert_eq!(of("git push origin main"), vec![]);
    }

    #[test]
    fn file_forms_are_read() {
        let files =
            |how, p: &[&str]| Stake::Files { how, paths: p.iter().map(|s| s.to_string()).collect(), recursive: false };
        let tree = |p: &[&str]| Stake::Files {
            how: FileOp::Remove,
            paths: p.iter().map(|s| s.to_string()).collect(),
            recursive: true,
        };
        assert_eq!(of("rm -rf data build"), vec![tree(&["data", "build"])]);
        assert_eq!(of("rm -rf -- -x"), vec![tree(&["-x"])]);
        assert_eq!(of("rm notes.txt"), vec![files(FileOp::Remove, &["notes.txt"])]);
        assert_eq!(of("shred -u key.pem"), vec![files(FileOp::Shred, &["key.pem"])]);
        assert_eq!(of("truncate -s 0 app.log"), vec![files(FileOp::Truncate, &["app.log"])]);
        assert_eq!(of("echo x > notes.txt"), vec![files(FileOp::Clobber, &["notes.txt"])]);
        assert_eq!(of("echo x > /dev/null"), vec![]);
        assert_eq!(
            of("find ./logs -name '*.log' -mtime +7 -delete"),
            vec![Stake::FindDelete {
                roots: vec!["./logs".into()],
                expression: ["-name", "*.log", "-mtime", "+7"].iter().map(|s| s.to_string()).collect()
            }]
        );
        assert_eq!(of("find . -name x -exec rm {} + -delete"), vec![]);
        assert_eq!(of("rm -rf \"$d\""), vec![Stake::Unknown], "a word known only when it runs");
    }
}
