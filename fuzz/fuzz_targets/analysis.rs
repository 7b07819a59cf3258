//! Arbitrary text through the analysis and the decision under the built-in rules. Besides not
//! panicking: a deny command on the first line (which the shell runs before it reads the rest)
//! stays deny whatever follows, and `bash -c 'TEXT'` is never judged laxer than TEXT read as
//! bash reads it (for TEXT that bash does not read as options). Read for an unknown shell, TEXT
//! counts dash's reading too, which bash -c does not: `{a,-e}` is two words in bash, one in dash.
#![no_main]

use std::sync::OnceLock;

use cmdguard::decide::{Verdict, decide};
use cmdguard::rules::compile::builtin_rules;
use cmdguard::rules::{Policy, Settings};
use cmdguard::shell::{Analysis, Dialect, analyze_script, analyze_script_in};
use libfuzzer_sys::fuzz_target;

fn judged(analysis: &Analysis) -> Verdict {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    let policy = POLICY.get_or_init(|| Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new()));
    decide(policy, analysis).verdict
}

fn verdict(text: &str) -> Verdict {
    judged(&analyze_script(text))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let after_deny = format!("rm -rf /\n{text}");
    assert_eq!(verdict(&after_deny), Verdict::Deny, "fail-open: {after_deny:?} is not deny");
    // bash reads options after -c before the script (`bash -c '-x'` runs nothing).
    if text.starts_with(['-', '+']) {
        return;
    }
    let own = judged(&analyze_script_in(&text, Dialect::Bash));
    let nested = format!("bash -c '{}'", text.replace('\'', r"'\''"));
    let outer = verdict(&nested);
    assert!(outer >= own, "fail-open: {nested:?} is {outer:?}, laxer than {own:?} for the script itself");
});
