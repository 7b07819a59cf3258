//! Arbitrary bytes as the JSON a host writes to `cmdguard hook <host>`, for every host: the
//! answer is the host's "no opinion" or a JSON object the host reads, never a panic; input that
//! is not JSON is always blocked.
#![no_main]

use std::sync::OnceLock;

use cmdguard::cli::Host;
use cmdguard::cmd::hook::answer_for;
use cmdguard::rules::compile::builtin_rules;
use cmdguard::rules::{Policy, Settings};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    let policy = POLICY.get_or_init(|| Policy::new(builtin_rules(), Vec::new(), Settings::default(), Vec::new()));
    let is_json = serde_json::from_slice::<serde_json::Value>(data).is_ok();
    for host in [Host::ClaudeCode, Host::Codex, Host::Copilot, Host::Gemini] {
        let out = answer_for(host, data, policy);
        if out.is_empty() {
            assert!(is_json, "{host:?}: no answer to input that is not JSON");
            continue;
        }
        let answer: serde_json::Value = serde_json::from_str(&out).expect("the answer is JSON");
        let text = answer.to_string();
        if !is_json {
            assert!(text.contains("\"deny\""), "{host:?}: input that is not JSON was not blocked: {text}");
        }
    }
});
