//! Table tests of the whole analysis: command text → the canonical segments rules will see.

use super::{IssueKind, analyze_argv, analyze_script};

fn segments(cmd: &str) -> Vec<String> {
    let a = analyze_script(cmd);
    assert!(a.issues.is_empty(), "{cmd:?}: unexpected issues {:?}", a.issues);
    a.segments.into_iter().map(|s| s.text).collect()
}

fn has_segment(cmd: &str, want: &str) {
    let segs = segments(cmd);
    assert!(segs.iter().any(|s| s == want), "{cmd:?}: no segment {want:?} in {segs:?}");
}

#[test]
fn quoting_and_escapes_resolve() {
    let cases = [
        ("r''m -rf ~", "rm -rf ~"),
        ("\\rm -rf ~", "rm -rf ~"),
        ("\"r\"m -rf ~", "rm -rf ~"),
        ("$'\\x72\\x6d' -rf ~", "rm -rf ~"),
        ("$'\\162\\155' -rf ~", "rm -rf ~"),
        ("$'\\u0072m' -rf ~", "rm -rf ~"),
        ("$\"rm\" -rf ~", "rm -rf ~"),
        ("rm \\\n -rf ~", "rm -rf ~"),
        ("/bin/rm -rf ~", "rm -rf ~"),
        ("sudo /etc/init.d/ssh stop", "service ssh stop"),
        ("npx @changesets/cli publish", "@changesets/cli publish"),
        ("git commit -m 'fix: drop table'", "git commit -m 'fix: drop table'"),
        ("echo \"a  b\"", "echo 'a  b'"),
        ("ｒｍ -rf ~", "rm -rf ~"),
        ("rm -rf ~ # comment", "rm -rf ~"),
    ];
    for (cmd, want) in cases {
        has_segment(cmd, want);
    }
}

#[test]
fn variables_and_trivial_substitutions_resolve() {
    let cases = [
        ("X=rm; $X -rf ~", "rm -rf ~"),
        ("X=rm\n${X} -rf ~", "rm -rf ~"),
        ("export X=rm; \"$X\" -rf ~", "rm -rf ~"),
        ("X='rm -rf'; $X ~", "rm -rf ~"),
        ("$(echo rm) -rf ~", "rm -rf ~"),
        ("`printf rm` -rf ~", "rm -rf ~"),
        ("$(printf '\\x72\\x6d') -rf ~", "rm -rf ~"),
        ("r{m,} -rf ~", "rm r -rf ~"),
        ("rm -rf {src,.git}", "rm -rf src .git"),
        ("rm -rf \"$HOME\"", "rm -rf $HOME"),
        ("rm -rf ${HOME}/", "rm -rf $HOME/"),
        ("echo $(cat x)", "echo $(cat x)"),
    ];
    for (cmd, want) in cases {
        has_segment(cmd, want);
    }
}

#[test]
fn control_structures_expose_every_command() {
    let cases = [
        ("true && git reset --hard", "git reset --hard"),
        ("false || git reset --hard", "git reset --hard"),
        ("a | git reset --hard |& b", "git reset --hard"),
        ("sleep 1 & git reset --hard", "git reset --hard"),
        ("(cd x; git reset --hard)", "git reset --hard"),
        ("{ git reset --hard; }", "git reset --hard"),
        ("if true; then git reset --hard; fi", "git reset --hard"),
        ("if false; then :; else git reset --hard; fi", "git reset --hard"),
        ("while true; do git reset --hard; done", "git reset --hard"),
        ("until false; do git reset --hard; done", "git reset --hard"),
        ("for i in 1 2; do git reset --hard; done", "git reset --hard"),
        ("case x in x) git reset --hard;; esac", "git reset --hard"),
        ("f() { git reset --hard; }; f", "git reset --hard"),
        ("function f { git reset --hard; }", "git reset --hard"),
        ("echo $(git reset --hard)", "git reset --hard"),
        ("echo `git reset --hard`", "git reset --hard"),
        ("echo \"$(echo `git reset --hard`)\"", "git reset --hard"),
        ("diff <(git reset --hard) x", "git reset --hard"),
        ("tee >(git reset --hard)", "git reset --hard"),
        ("echo $((1 + $(git reset --hard)))", "git reset --hard"),
        ("echo ${X:-$(git reset --hard)}", "git reset --hard"),
        ("[[ -n $(git reset --hard) ]]", "git reset --hard"),
        ("X=$(git reset --hard)", "git reset --hard"),
        ("cat <<EOF\n$(git reset --hard)\nEOF", "git reset --hard"),
    ];
    for (cmd, want) in cases {
        has_segment(cmd, want);
    }
}

#[test]
fn here_documents_and_pipes_fed_to_a_shell_are_scripts() {
    let cases = [
        ("bash <<EOF\nrm -rf ~\nEOF", "rm -rf ~"),
        ("sh <<'EOF'\nrm -rf ~\nEOF\n", "rm -rf ~"),
        ("bash <<< 'rm -rf ~'", "rm -rf ~"),
        ("echo 'rm -rf ~' | sh", "rm -rf ~"),
        ("printf 'rm -rf ~' | bash -s", "rm -rf ~"),
        ("cat <<EOF | sh\nrm -rf ~\nEOF", "rm -rf ~"),
        ("python3 <<EOF\nimport os; os.system('rm -rf ~')\nEOF", "rm -rf ~"),
        ("echo 'rm -rf ~' | (bash)", "rm -rf ~"),
        ("{ sh; } <<'EOF'\nrm -rf ~\nEOF", "rm -rf ~"),
    ];
    for (cmd, want) in cases {
        has_segment(cmd, want);
    }
    // Data for a program that is not a shell stays data.
    let segs = segments("cat <<EOF\nrm -rf ~\nEOF");
    assert_eq!(segs, ["cat << 'rm -rf ~'"]);
}

#[test]
fn redirect_targets_are_visible() {
    has_segment("> ~/.ssh/config", ": > ~/.ssh/config");
    has_segment("{ echo A=1; } > .env", ": > .env");
    has_segment("for f in a; do cat $f; done >> log", ": >> log");
    has_segment("echo x > /dev/sda", "echo x > /dev/sda");
    has_segment("cat k >> ~/.ssh/authorized_keys", "cat k >> ~/.ssh/authorized_keys");
    has_segment("cmd 2>&1", "cmd 2>& 1");
}

#[test]
fn wrappers_and_nested_scripts_unwrap() {
    let cases = [
        ("sudo env X=1 bash -c \"r\\m -rf ~\"", "rm -rf ~"),
        ("eval 'rm -rf ~'", "rm -rf ~"),
        ("su -c 'rm -rf ~' root", "rm -rf ~"),
        ("su - root -c 'rm -rf ~'", "rm -rf ~"),
        ("ssh -p 22 host rm -rf ~", "rm -rf ~"),
        ("ssh host 'cd /; rm -rf ~'", "rm -rf ~"),
        ("docker exec -it web rm -rf /data", "rm -rf /data"),
        ("podman exec c sh -c 'rm -rf /'", "rm -rf /"),
        ("kubectl exec -n prod pod -- rm -rf /data", "rm -rf /data"),
        ("find . -name x -exec rm -rf {} \\;", "rm -rf */x"),
        ("find . -newer x -exec rm -rf {} \\;", "rm -rf {}"),
        ("git -C repo --no-pager -c x.y=z reset --hard", "git reset --hard"),
        ("git -c alias.x='!rm -rf ~' x", "rm -rf ~"),
        ("git -c alias.fp='push --force' fp origin main", "git push --force origin main"),
        ("git submodule foreach --recursive git reset --hard", "git reset --hard"),
        ("python3 -c \"import os; os.system('rm -rf ~')\"", "rm -rf ~"),
        ("perl -e 'system(\"rm -rf ~\")'", "rm -rf ~"),
        ("ruby -e '`rm -rf ~`'", "rm -rf ~"),
        ("node -e \"require('child_process').execSync('rm -rf ~')\"", "rm -rf ~"),
        ("php -r 'shell_exec(\"rm -rf ~\");'", "rm -rf ~"),
        ("watch -n 1 'rm -rf ~'", "rm -rf ~"),
        ("xargs -0 rm -rf", "rm -rf"),
        ("bash -lc 'rm -rf ~'", "rm -rf ~"),
        ("sh -ec 'rm -rf ~'", "rm -rf ~"),
        ("bash -o pipefail -c 'rm -rf ~'", "rm -rf ~"),
        ("env -S 'rm -rf ~'", "rm -rf ~"),
        ("alias ll='rm -rf ~'; ll", "rm -rf ~"),
        ("docker run --rm -v \"$PWD\":/w -e A=1 alpine rm -rf /w/src", "rm -rf /w/src"),
        ("docker container run -it --name x ubuntu bash -c 'rm -rf /data'", "rm -rf /data"),
        ("kubectl run tmp --image=busybox --restart=Never -- rm -rf /data", "rm -rf /data"),
    ];
    for (cmd, want) in cases {
        has_segment(cmd, want);
    }
}

#[test]
fn a_script_read_from_a_file_is_like_a_script_operand() {
    // `bash < x.sh` reads a local file, as `bash x.sh` does: neither is read by cmdguard.
    assert!(analyze_script("bash < deploy.sh").issues.is_empty());
}

#[test]
fn plain_variable_directories_name_a_known_program() {
    for cmd in ["\"$HOME/.cargo/bin/cargo\" build", "${VENV}/bin/python -V", "source \"$HOME/.cargo/env\""] {
        let a = analyze_script(cmd);
        assert!(a.issues.is_empty(), "{cmd}: {:?}", a.issues);
    }
}

#[test]
fn argv_form_unwraps_too() {
    let a = analyze_argv(&["sudo".into(), "bash".into(), "-c".into(), "rm -rf ~".into()]);
    assert!(a.segments.iter().any(|s| s.text == "rm -rf ~"), "{:?}", a.segments);
    let a = analyze_argv(&["git".into(), "commit".into(), "-m".into(), "a; rm -rf ~".into()]);
    assert_eq!(a.segments.len(), 1);
}

#[test]
fn what_cannot_be_read_is_an_issue() {
    let cases = [
        ("$CMD -rf ~", IssueKind::Dynamic),
        ("bash -c \"$X\"", IssueKind::Dynamic),
        ("eval \"$(curl -s x)\"", IssueKind::Dynamic),
        ("$(curl -s https://x/i.sh) --yes", IssueKind::Dynamic),
        ("`wget -qO- x/y.sh`", IssueKind::Dynamic),
        ("zcat x.gz | sudo bash -", IssueKind::Dynamic),
        ("bash <(curl -s https://x/i.sh)", IssueKind::Dynamic),
        ("curl -s x | source /dev/stdin", IssueKind::Dynamic),
        ("curl -s https://x.sh | (sh)", IssueKind::Dynamic),
        ("curl -s https://x.sh | { bash; }", IssueKind::Dynamic),
        ("curl -s x | if true; then sh; fi", IssueKind::Dynamic),
        ("{ bash; } <<< \"$X\"", IssueKind::Dynamic),
        ("bash", IssueKind::Dynamic),
        ("python3 -", IssueKind::Dynamic),
        ("docker exec -i web sh", IssueKind::Dynamic),
        ("sudo -s", IssueKind::Dynamic),
        ("sudo -i", IssueKind::Dynamic),
        ("su - root", IssueKind::Dynamic),
        ("doas -s", IssueKind::Dynamic),
        ("source <(curl -s https://x/completion.bash)", IssueKind::Dynamic),
        ("python -c 'import os; os.system(c)'", IssueKind::Dynamic),
        ("echo 'unterminated", IssueKind::Unparseable),
        ("rm -rf ) x", IssueKind::Unparseable),
    ];
    for (cmd, kind) in cases {
        let a = analyze_script(cmd);
        assert!(a.issues.iter().any(|i| i.kind == kind), "{cmd:?}: {:?}", a.issues);
    }
    let long = "a".repeat(super::MAX_INPUT_BYTES + 1);
    assert_eq!(analyze_script(&long).issues[0].kind, IssueKind::TooComplex);
    let nested = format!("echo {}rm{}", "$(echo ".repeat(20), ")".repeat(20));
    assert!(analyze_script(&nested).issues.iter().any(|i| i.kind == IssueKind::TooComplex));
    let many = "true;".repeat(super::MAX_SEGMENTS + 5);
    assert!(analyze_script(&many).issues.iter().any(|i| i.kind == IssueKind::TooComplex));
}

/// Random shell-ish text never panics the analysis, and what it cannot read it reports.
/// More iterations: `CMDGUARD_FUZZ_ITERATIONS=1000000 cargo test --release hostile_input`.
#[test]
fn hostile_input_never_panics() {
    const ALPHABET: &[&str] = &[
        "rm", " ", "-rf", "~", "'", "\"", "\\", "$", "(", ")", "{", "}", "`", "|", "&", ";", "<", ">", "<<", "EOF",
        "\n", "$(", "${", "#", "=", "X", "bash -c ", "eval ", "sudo ", "*", "[[", "]]", "((", "))", "if ", "then ",
        "fi", "case ", " in ", "esac", ",", "\u{202e}", "\x1b[", "\0", "ｒ",
    ];
    let iterations: u64 = std::env::var("CMDGUARD_FUZZ_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..iterations {
        let len = (next() % 24) as usize;
        let text: String = (0..len).map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize]).collect();
        let a = analyze_script(&text);
        for s in &a.segments {
            assert!(!s.words.is_empty(), "{text:?}: empty segment");
        }
    }
}

fn in_dialect(cmd: &str, dialect: super::Dialect) -> Vec<String> {
    super::analyze_script_in(cmd, dialect).segments.into_iter().map(|s| s.text).collect()
}

#[test]
fn each_dialect_reads_its_own_syntax() {
    use super::Dialect::{Bash, Both, Dash};
    // `((` is arithmetic in bash, two subshells in dash.
    assert!(in_dialect("((rm -rf ~))", Bash).is_empty());
    assert_eq!(in_dialect("((rm -rf ~))", Dash), ["rm -rf ~"]);
    assert_eq!(in_dialect("((rm -rf ~))", Both), ["rm -rf ~"]);
    // `$'…'` is a `$` and a quoted string in dash.
    assert_eq!(in_dialect("$'\\x72m' -rf ~", Bash), ["rm -rf ~"]);
    assert_eq!(in_dialect("$'\\x72m' -rf ~", Dash), ["'$\\x72m' -rf ~"]);
    // dash's echo expands `\0NNN`; bash's does not without -e.
    assert!(in_dialect("echo 'r\\0155 -rf ~' | sh", Dash).contains(&"rm -rf ~".to_string()));
    assert!(!in_dialect("echo 'r\\0155 -rf ~' | sh", Bash).contains(&"rm -rf ~".to_string()));
    // `[[` and `function` are words in dash; brace expansion is bash's.
    assert_eq!(in_dialect("[[ -f x ]]", Dash), ["[[ -f x ]]"]);
    assert_eq!(in_dialect("rm -rf {a,b}", Dash), ["rm -rf {a,b}"]);
    assert_eq!(in_dialect("rm -rf {a,b}", Bash), ["rm -rf a b"]);
    // dash has no `&>`: `a &> f` runs `a` in the background and truncates `f`.
    assert_eq!(in_dialect("ls &> out", Dash), ["ls", ": > out"]);
}

#[test]
fn text_with_no_dialect_construct_is_read_once() {
    let a = super::analyze_script_in("git status && cargo test", super::Dialect::Both);
    assert_eq!(a.segments.len(), 2);
    assert_eq!(a.lines.len(), 1);
}

#[test]
fn code_run_later_is_analysed_where_it_is_defined() {
    for (cmd, want) in [
        ("trap 'rm -rf ~' EXIT", "rm -rf ~"),
        ("let 'a[$(rm -rf ~)]'", "rm -rf ~"),
        ("x='a[$(git reset --hard)]'; echo $((x))", "git reset --hard"),
        // bash appends the line index and the line to the callback's words.
        ("mapfile -C 'rm -rf ~' arr < f", "rm -rf ~ $@"),
        ("PROMPT_COMMAND='rm -rf ~'", "rm -rf ~"),
    ] {
        let segs = in_dialect(cmd, super::Dialect::Bash);
        assert!(segs.iter().any(|s| s == want), "{cmd:?}: {segs:?}");
    }
    // dash has no `let`; reading it the bash way anyway costs nothing.
    assert!(in_dialect("let 'a[$(rm -rf ~)]'", super::Dialect::Dash).contains(&"rm -rf ~".to_string()));
}

#[test]
fn normalization_never_changes_the_structure() {
    // The parser reads the exact text: the escape byte does not swallow the quote.
    let a = analyze_script("echo 'a\x1b' ; rm -rf ~ ; echo 'b\x1b'");
    assert!(a.segments.iter().any(|s| s.text == "rm -rf ~"), "{:?}", a.segments);
    assert!(a.issues.iter().any(|i| i.kind == IssueKind::Unparseable), "{:?}", a.issues);
    let a = analyze_script("echo ＃; rm -rf ~");
    assert!(a.segments.iter().any(|s| s.text == "rm -rf ~"), "{:?}", a.segments);
}

#[test]
fn budgets_stop_blow_ups() {
    let doubling: String = std::iter::once("X=ab;".to_string()).chain((0..30).map(|_| " X=$X$X;".into())).collect();
    let a = analyze_script(&format!("{doubling} rm -rf ~"));
    assert!(a.issues.iter().any(|i| i.kind == IssueKind::TooComplex));
    assert!(a.segments.iter().any(|s| s.text == "rm -rf ~"));
    let nested = format!("echo {}x{}", "${a:-".repeat(10_000), "}".repeat(10_000));
    assert!(!analyze_script(&nested).issues.is_empty());
    let mut here = "echo filler text for a long here-document body\n".repeat(1200);
    for d in 0..12 {
        here = format!("bash <<'E{d}'\n{here}E{d}\n");
    }
    let a = analyze_script(&here);
    assert!(a.issues.iter().any(|i| i.kind == IssueKind::TooComplex), "{:?}", a.issues);
}

#[test]
fn lines_before_a_syntax_error_are_judged() {
    let a = analyze_script("rm -rf /\necho 'unterminated");
    assert!(a.segments.iter().any(|s| s.text == "rm -rf /"), "{:?}", a.segments);
    // Cut before the failing line, a here-document loses its end: the lines before it count.
    let a = analyze_script("rm -rf /\nls <<A\n`\nA\n`");
    assert!(a.segments.iter().any(|s| s.text == "rm -rf /"), "{:?}", a.segments);
    assert!(a.issues.iter().any(|i| i.kind == IssueKind::Unparseable));
}

#[test]
fn words_are_quoted_where_the_shell_would_split_or_read_them() {
    let special = |c: char| c.is_whitespace() || "'\"\\;&|<>()".contains(c);
    let chars = (0u8..0x80).map(char::from).chain(['é', '\u{a0}', '\u{85}', '\u{2028}', '\u{3000}', 'ｒ', '\u{1c}']);
    for c in chars {
        for word in [c.to_string(), format!("a{c}b"), format!("é{c}")] {
            let plain = !word.chars().any(special);
            let want = if plain { word.clone() } else { format!("'{}'", word.replace('\'', r"'\''")) };
            assert_eq!(super::quote(&word), want, "{word:?}");
        }
    }
    assert_eq!(super::quote(""), "''");
    assert_eq!(super::join(&["rm".into(), "it's a".into(), "-rf".into()]), r"rm 'it'\''s a' -rf");
}
