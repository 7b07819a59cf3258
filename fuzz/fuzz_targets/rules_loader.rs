//! Arbitrary bytes as a user's or a project's rules file: the loader returns the file's items or
//! a clean error, never panics, and what it accepts compiles into a policy that can decide.
#![no_main]

use cmdguard::decide::decide;
use cmdguard::rules::compile::parse_file;
use cmdguard::rules::{Layer, Policy, Settings};
use cmdguard::shell::analyze_script;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The loader reads a file with `read_to_string`: text that is not UTF-8 never reaches it.
    let Ok(text) = std::str::from_utf8(data) else { return };
    for layer in [Layer::User, Layer::Project] {
        let Ok(items) = parse_file("fuzz.toml", text, layer) else { continue };
        let _ = cmdguard::config::loosening(&items, &Settings::default());
        // The file's own rules alone: the built-in packs compile the same way every time.
        let policy = Policy::new(items.rules, items.allows, Settings::default(), Vec::new());
        for command in ["git push --force", "rm -rf build", "ls"] {
            let _ = decide(&policy, &analyze_script(command));
        }
    }
});
