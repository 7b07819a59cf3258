//! Properties of the decision over generated shell text S (a grammar of words, quotes,
//! operators and compound commands, and arbitrary strings): a known deny command before or
//! after S stays deny, and `bash -c 'S'` is never judged laxer than S itself.

use cmdguard::decide::{Verdict, decide};
use cmdguard::rules::compile::builtin_rules;
use cmdguard::rules::{Policy, Settings};
use cmdguard::shell::analyze_script;
use proptest::prelude::*;

const DENY: &str = "rm -rf /";

fn verdict(text: &str) -> Verdict {
    thread_local! {
        static POLICY: Policy = Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new());
    }
    POLICY.with(|p| decide(p, &analyze_script(text)).verdict)
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn word() -> impl Strategy<Value = String> {
    let fixed = [
        "ls",
        "git",
        "status",
        "-rf",
        "build",
        "--force",
        "/tmp/x",
        "${x:-y}",
        "\"$x\"",
        "$(ls)",
        "`ls`",
        "\\;",
        "{a,b}",
        "*.o",
        "~",
        "2>/dev/null",
        ">out",
        "<<<'s'",
        "x=1",
    ];
    prop_oneof![
        prop::sample::select(fixed.to_vec()).prop_map(String::from),
        "[a-z]{1,6}",
        "[a-z ;|&]{0,6}".prop_map(|s| format!("'{s}'")),
        "[a-z $;]{0,6}".prop_map(|s| format!("\"{s}\"")),
        "[a-z;]{0,4}".prop_map(|s| format!("$'{s}\\n'")),
    ]
}

fn simple() -> impl Strategy<Value = String> {
    let program = prop::sample::select(vec!["ls", "git", "cat", "echo", "touch", "true", "printf", "mkdir"]);
    (program, prop::collection::vec(word(), 0..4)).prop_map(|(p, w)| {
        let mut s = p.to_string();
        w.iter().for_each(|w| s.push_str(&format!(" {w}")));
        s
    })
}

/// A complete command: every construct closed, no here-document, comment or trailing operator,
/// so text placed after it on the next line or after `;` is a command of its own.
fn command() -> impl Strategy<Value = String> {
    simple().prop_recursive(3, 24, 3, |inner| {
        let op = prop::sample::select(vec!["; ", " && ", " || ", " | ", " & ", "\n"]);
        prop_oneof![
            (inner.clone(), op, inner.clone()).prop_map(|(a, o, b)| format!("{a}{o}{b}")),
            inner.clone().prop_map(|s| format!("( {s} )")),
            inner.clone().prop_map(|s| format!("{{ {s}; }}")),
            (inner.clone(), inner.clone()).prop_map(|(c, b)| format!("if {c}; then {b}; fi")),
            inner.clone().prop_map(|b| format!("for i in a b; do {b}; done")),
            inner.clone().prop_map(|b| format!("f() {{ {b}; }}; f")),
            inner.clone().prop_map(|b| format!("case x in x) {b} ;; esac")),
            inner.clone().prop_map(|b| format!("x=$({b})")),
            inner.clone().prop_map(|b| format!("bash -c {}", single_quoted(&b))),
            inner.prop_map(|b| format!("eval {}", single_quoted(&b))),
        ]
    })
}

/// Arbitrary text: printable ASCII with newlines, and any string at all.
fn anything() -> impl Strategy<Value = String> {
    prop_oneof!["[ -~\n]{0,40}", any::<String>()]
}

/// 256 cases each in the suite; `PROPTEST_CASES=N` for a longer run.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_deny_command_beside_a_complete_command_stays_deny(s in command()) {
        for text in [format!("{DENY} ; {s}"), format!("{s} ; {DENY}"), format!("{s}\n{DENY}")] {
            prop_assert_eq!(verdict(&text), Verdict::Deny, "{:?}", text);
        }
    }

    /// The shells run a first line before they read the next, so a deny command there runs
    /// whatever follows. (Before arbitrary text, or after it, it may not: an open quote, a
    /// comment or a here-document swallows it.) The lines before one that does not parse are
    /// judged, so this stays deny.
    #[test]
    fn a_deny_command_before_any_text_stays_deny(s in anything()) {
        let text = format!("{DENY}\n{s}");
        prop_assert_eq!(verdict(&text), Verdict::Deny, "{:?}", text);
    }

    #[test]
    fn bash_c_is_never_laxer_than_its_script(s in prop_oneof![command(), anything()]) {
        // bash reads options after -c before the script: `bash -c '-x'` runs nothing.
        prop_assume!(!s.starts_with(['-', '+']));
        let nested = format!("bash -c {}", single_quoted(&s));
        let (outer, inner) = (verdict(&nested), verdict(&s));
        prop_assert!(outer >= inner, "{:?} is {:?} but {:?} is {:?}", nested, outer, s, inner);
    }
}
