//! `cmdguard completions SHELL`: a script for each shell, covering every subcommand.

use crate::env::{TestEnv, code, stderr, stdout};

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    let t = TestEnv::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = t.run(["completions", shell]);
        assert_eq!(code(&o), 0, "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.len() > 1000, "{shell}: {} bytes", script.len());
        for word in ["check", "explain", "rules", "lint", "hook", "shell", "completions", "session-key"] {
            assert!(script.contains(word), "{shell}: no {word:?} in the script");
        }
    }
    // Values of the hook's host argument complete in bash and zsh.
    for shell in ["bash", "zsh"] {
        assert!(stdout(&t.run(["completions", shell])).contains("claude-code"), "{shell}");
    }
    assert_eq!(code(&t.run(["completions", "tcsh"])), 64);
}
