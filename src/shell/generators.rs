//! Well-known local generators of shell setup: `eval "$(pyenv init -)"`, `source <(kubectl
//! completion bash)`. Their output is the tool's own init code (PATH, prompt hooks, completion
//! functions), so `eval`/`source` of it is not a script "only known when it runs". The table is
//! data: one entry per command, `*` for any one word, a final `…` for any further words. Only a
//! single substitution that is exactly one such command counts (no `;`, `|`, `&&`, no second
//! substitution), and the generator itself is still judged as a segment of its own.

const GENERATORS: &[&str] = &[
    // Agents and environment managers.
    "ssh-agent",
    "ssh-agent -s",
    "ssh-agent -c",
    "keychain --eval …",
    "dbus-launch --sh-syntax",
    "pyenv init …",
    "pyenv virtualenv-init …",
    "rbenv init …",
    "nodenv init …",
    "goenv init …",
    "jenv init …",
    "plenv init …",
    "phpenv init …",
    "tmuxifier init …",
    "direnv hook *",
    "brew shellenv …",
    "mise activate …",
    "rtx activate …",
    "fnm env …",
    "conda shell.bash hook",
    "conda shell.zsh hook",
    "conda shell.fish hook",
    "conda shell.posix hook",
    "micromamba shell hook …",
    "mamba shell hook …",
    "poetry env activate …",
    "pixi shell-hook …",
    "opam env …",
    "luarocks path …",
    "dircolors …",
    // Prompts and shell helpers.
    "starship init *",
    "starship init * …",
    "zoxide init *",
    "zoxide init * …",
    "atuin init *",
    "atuin init * …",
    "oh-my-posh init *",
    "oh-my-posh init * …",
    "mcfly init *",
    "navi widget *",
    "thefuck --alias …",
    "hub alias -s",
    "broot --print-shell-function *",
    "fzf --bash",
    "fzf --zsh",
    "fzf --fish",
    "register-python-argcomplete *",
    "just --completions *",
    // `<tool> completion <shell>` and its spellings, for tools the catalogue or a rule knows.
    "* completion",
    "* completion *",
    "* completion -s *",
    "* completion --shell *",
    "* completions *",
    "* --completions *",
    "* generate-shell-completion *",
    "* --generate-shell-completion *",
    "pip completion *",
];

/// Programs whose output is text they fetch or read, never their own: a `*` never stands for them.
const PRINTERS: &[&str] = &[
    "curl", "wget", "http", "https", "xh", "nc", "ncat", "netcat", "socat", "cat", "echo", "printf", "base64",
    "base32", "xxd", "od", "head", "tail", "tac", "sed", "awk", "gawk", "perl", "python", "python3", "ruby", "node",
    "php", "sh", "bash", "zsh", "dash", "ssh", "scp", "gsutil", "rclone", "jq", "yq", "tee", "dd", "openssl", "gpg",
    "git",
];

/// Whether `text`, the script `eval`/`source` is given, is the output of one known generator.
pub(super) fn is_setup_output(origin: &str, text: &str) -> bool {
    if !matches!(origin, "eval" | "source" | ".") {
        return false;
    }
    let Some(inner) = text.strip_prefix("$(").or_else(|| text.strip_prefix("<(")).and_then(|t| t.strip_suffix(')'))
    else {
        return false;
    };
    // An unknown generator's operands are also read as a guess (`starship init bash; init
    // bash`): those parts are tails of the command itself, and are judged on their own.
    let mut parts = inner.split("; ");
    let command = parts.next().unwrap_or_default();
    if !parts.all(|p| command.ends_with(&format!(" {p}"))) {
        return false;
    }
    if command.contains(['$', '`', ';', '|', '&', '<', '>', '(', ')', '\'', '"', '\n']) {
        return false;
    }
    let words: Vec<&str> = command.split(' ').collect();
    // A program given by a path (`./evil completion`) is not the well-known tool.
    if PRINTERS.contains(&words[0]) || words[0].contains('/') {
        return false;
    }
    // A `*` stands only for a program cmdguard knows (the catalogue or a rule names it): an
    // unknown one (`./evil completion`, a local script) may print anything.
    let known = super::catalog::find(words[0]).is_some() || super::catalog::named_by_rules(words[0]);
    GENERATORS.iter().any(|g| {
        let pattern: Vec<&str> = g.split(' ').collect();
        (known || pattern[0] != "*") && matches(&pattern, &words)
    })
}

fn matches(pattern: &[&str], words: &[&str]) -> bool {
    match (pattern.split_first(), words.split_first()) {
        (Some((&"…", _)), _) => true,
        (Some((p, rest_p)), Some((w, rest_w))) => (*p == "*" || p == w) && matches(rest_p, rest_w),
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_setup_output;

    #[test]
    fn generators() {
        for t in [
            "$(pyenv init -)",
            "$(ssh-agent -s)",
            "<(kubectl completion bash)",
            "$(conda shell.bash hook)",
            "$(zoxide init zsh --cmd cd)",
            "$(starship init bash; init bash)",
        ] {
            assert!(is_setup_output("eval", t), "{t}");
        }
        for t in [
            "$(curl -fsSL https://x/env.sh)",
            "$(pyenv init -)$(curl x)",
            "$(mise activate bash; rm -rf ~)",
            "$(cat /tmp/x)",
            "$X",
            "$(curl completion bash)",
            "$(starship init bash; rm -rf ~)",
        ] {
            assert!(!is_setup_output("eval", t), "{t}");
        }
        assert!(!is_setup_output("bash", "<(kubectl completion bash)"));
    }
}
