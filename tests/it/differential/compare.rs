//! What the oracle's record is compared with: cmdguard's analysis of the same text in the
//! dialect of the shell that ran it (`analyze`), and the
//! rule that every program a shell started must appear among the segments with the same words,
//! unless the analysis asked.

use cmdguard::shell::{Analysis, Dialect, Segment, analyze_script_in, basename};

use super::sandbox::Shell;

/// cmdguard's analysis of `text` as `shell` would run it.
pub fn analyze(text: &str, shell: Shell) -> Analysis {
    let dialect = match shell {
        Shell::Bash => Dialect::Bash,
        Shell::Dash => Dialect::Dash,
    };
    analyze_script_in(text, dialect)
}

/// How one case came out.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The analysis had an issue, so cmdguard asks whatever the shell did.
    Asked,
    /// Every program the shell started is among the segments.
    Covered,
    /// These programs ran and no segment has their words.
    Missed(Vec<Vec<String>>),
}

/// Compares what `shell` started with `analysis`; `home` is the HOME the shell was given.
pub fn outcome(analysis: &Analysis, started: &[Vec<String>], home: &str) -> Outcome {
    if !analysis.issues.is_empty() {
        return Outcome::Asked;
    }
    let missed: Vec<Vec<String>> =
        started.iter().filter(|argv| !analysis.segments.iter().any(|s| covers(s, argv, home))).cloned().collect();
    if missed.is_empty() { Outcome::Covered } else { Outcome::Missed(missed) }
}

/// The replacement string of xargs options `opts` (`-I R`, `-IR`, `-i[R]`, `--replace[=R]`).
fn replace_string(opts: &[String]) -> Option<String> {
    let mut found = None;
    for (k, o) in opts.iter().enumerate() {
        if o == "-I" {
            found = opts.get(k + 1).cloned();
        } else if let Some(r) = o.strip_prefix("-I") {
            found = Some(r.to_string());
        } else if let Some(r) = o.strip_prefix("--replace=") {
            found = Some(r.to_string());
        } else if o == "--replace" || o == "-i" {
            found = Some("{}".to_string());
        } else if let Some(r) = o.strip_prefix("-i") {
            found = Some(r.to_string());
        }
    }
    found
}

/// Whether `seg` stands for the program run with `argv`: the same words (program by basename),
/// or, for a wrapper the analysis removed (`env X=1 rm d`), its words at the end of `argv`.
fn covers(seg: &Segment, argv: &[String], home: &str) -> bool {
    let Some((program, args)) = argv.split_first() else { return false };
    let prog = basename(program);
    let ctx = Words { home, is_static: seg.is_static };
    if let Some((first, rest)) = seg.words.split_first()
        && basename(first) == prog
        && ctx.matches(rest, args)
    {
        return true;
    }
    // xargs (or parallel) with known input: the analysis reads the commands it builds, the
    // template and then the input's words, in place of the xargs line itself.
    if matches!(prog, "xargs" | "parallel")
        && seg.origin.contains(prog)
        && (0..args.len()).any(|i| {
            let template = &args[i..];
            // With -I R (or --replace[=R], -i[R]; R is `{}` by default) a word holding R takes
            // the input.
            let repl = replace_string(&args[..i]);
            let replaced: Vec<String> = template
                .iter()
                .zip(&seg.words)
                .map(|(t, w)| if repl.as_ref().is_some_and(|r| t.contains(r.as_str())) { w.clone() } else { t.clone() })
                .collect();
            template.len() <= seg.words.len()
                && basename(&template[0]) == basename(&seg.words[0])
                && ctx.matches(&seg.words[1..template.len()], &replaced[1..])
        })
    {
        return true;
    }
    // A wrapper given no command runs its default one, which the analysis reads in its place:
    // `sudo -i`, `sudo -s`, `doas -s` a login shell reading standard input (`sh`), `xargs` echo.
    if seg.wrappers.iter().any(|w| basename(w) == prog) && (seg.words == ["sh"] || seg.words == ["echo"]) {
        return true;
    }
    seg.wrappers.iter().any(|w| basename(w) == prog)
        && (0..argv.len()).any(|i| {
            let tail = &argv[i..];
            !seg.words.is_empty()
                && basename(&tail[0]) == basename(&seg.words[0])
                && ctx.matches(&seg.words[1..], &tail[1..])
        })
}

/// How a segment's words may stand for the words a program got.
struct Words<'a> {
    home: &'a str,
    is_static: bool,
}

impl Words<'_> {
    /// Whether the segment words `pat` account for the argument words `got`: equal words, a
    /// `~` the shell replaced by HOME, a wildcard the shell expanded to one or more file names,
    /// and in a segment that is not static a word with `$` or a backquote, standing for any
    /// number of words (its value was not known to the analysis).
    fn matches(&self, pat: &[String], got: &[String]) -> bool {
        let Some((p, rest)) = pat.split_first() else { return got.is_empty() };
        if !self.is_static && (p.contains('$') || p.contains('`')) {
            return (0..=got.len()).any(|n| self.matches(rest, &got[n..]));
        }
        if let Some((g, more)) = got.split_first()
            && self.same(p, g)
            && self.matches(rest, more)
        {
            return true;
        }
        if p.contains(['*', '?', '[']) {
            return (1..=got.len())
                .any(|n| got[..n].iter().all(|g| glob(p.as_bytes(), g.as_bytes())) && self.matches(rest, &got[n..]));
        }
        false
    }

    fn same(&self, p: &str, g: &str) -> bool {
        // A process substitution is replaced by the path of a pipe to it.
        if p == g || (p.starts_with("<(") || p.starts_with(">(")) && g.starts_with("/dev/fd/") {
            return true;
        }
        // A long option the program accepts abbreviated is spelled out in the segment
        // (`--forc` is `--force`, `--to-com=x` is `--to-command=x`).
        let name =
            |w: &str| w.split_once('=').map_or((w.to_string(), None), |(n, v)| (n.to_string(), Some(v.to_string())));
        let ((pn, pv), (gn, gv)) = (name(p), name(g));
        if g.starts_with("--") && gn.len() > 3 && pn.starts_with(&gn) && pv == gv {
            return true;
        }
        let Some(tilde) = p.strip_prefix('~') else { return false };
        let (user, rest) = tilde.split_at(tilde.find('/').unwrap_or(tilde.len()));
        let home = if user.is_empty() { Some(self.home.to_string()) } else { user_home(user) };
        home.is_some_and(|h| g == format!("{h}{rest}"))
    }
}

/// The home directory /etc/passwd gives `user`, as the shell's `~user` reads it.
fn user_home(user: &str) -> Option<String> {
    static PASSWD: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let passwd = PASSWD.get_or_init(|| std::fs::read_to_string("/etc/passwd").unwrap_or_default());
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f[0] == user && f.len() > 5)
        .map(|f| f[5].to_string())
}

/// Shell pattern matching of one word (`*`, `?`, `[…]`), enough to tell an expanded wildcard.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob(rest, &s[i..])),
        Some((b'?', rest)) => !s.is_empty() && glob(rest, &s[1..]),
        Some((b'[', rest)) if rest.contains(&b']') => {
            let end = rest.iter().skip(1).position(|&b| b == b']').map_or(0, |i| i + 1);
            let (set, after) = (&rest[..end], &rest[end + 1..]);
            let (negate, set) = match set.split_first() {
                Some((b'!' | b'^', s)) => (true, s),
                _ => (false, set),
            };
            !s.is_empty() && (set.contains(&s[0]) != negate) && glob(after, &s[1..])
        }
        Some((c, rest)) => s.first() == Some(c) && glob(rest, &s[1..]),
    }
}

#[test]
fn words_match_as_the_shell_would_expand_them() {
    let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ctx = Words { home: "/h", is_static: true };
    assert!(ctx.matches(&w(&["-rf", "~/x"]), &w(&["-rf", "/h/x"])));
    assert!(ctx.matches(&w(&["/*"]), &w(&["/bin", "/etc"])));
    assert!(ctx.matches(&w(&["<(rm x)"]), &w(&["/dev/fd/63"])));
    assert!(ctx.matches(&w(&["~root/x"]), &w(&["/root/x"])) && !ctx.matches(&w(&["~root"]), &w(&["/h"])));
    assert!(!ctx.matches(&w(&["/*"]), &w(&[])));
    assert!(!ctx.matches(&w(&["-rf", "a"]), &w(&["-rf", "b"])));
    assert!(!ctx.matches(&w(&["$X"]), &w(&["anything"])), "a static segment's `$` is a literal dollar");
    let dynamic = Words { home: "/h", is_static: false };
    assert!(dynamic.matches(&w(&["$X", "a"]), &w(&["p", "q", "a"])));
    assert!(glob(b"[!a]b", b"cb") && !glob(b"[!a]b", b"ab") && glob(b"*.o", b"x.o"));
}
