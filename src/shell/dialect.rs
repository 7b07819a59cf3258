//! Which shell reads the text, and so which dialect the analysis follows: bash, or dash (the
//! `/bin/sh` of Debian and Ubuntu). The two disagree on `((`, `[[`, `$'…'`, `function`, brace
//! expansion, `echo` escapes and the builtins that evaluate arithmetic (`let 'a[$(…)]'`). A shell
//! of another family, or one that cannot be resolved, is read both ways and the stricter reading
//! decides; text that no construct of either kind touches is read once.

use std::path::Path;
use std::sync::OnceLock;

use super::basename;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    Bash,
    Dash,
    /// Not known which: both readings are analysed.
    #[default]
    Both,
}

impl Dialect {
    /// The dialect of a shell named by a program word (`bash`, `sh`, `/bin/dash`); `sh` is
    /// whatever `/bin/sh` is on this machine.
    pub fn of_program(name: &str) -> Dialect {
        match basename(name) {
            "bash" | "rbash" => Dialect::Bash,
            "dash" | "posh" => Dialect::Dash,
            "sh" => Dialect::bin_sh(),
            _ => Dialect::Both,
        }
    }

    /// The dialect of the shell at `path` (symlinks resolved: `/bin/sh` → `dash`).
    pub fn of_path(path: &Path) -> Dialect {
        if path == Path::new("/bin/sh") {
            return Dialect::bin_sh();
        }
        resolve(path)
    }

    /// `/bin/sh` on this machine, resolved once per process.
    pub fn bin_sh() -> Dialect {
        static SH: OnceLock<Dialect> = OnceLock::new();
        *SH.get_or_init(|| resolve(Path::new("/bin/sh")))
    }

    /// The dialect of a script reached through `origin` (how the analysis labels a nested
    /// script: `bash -c`, `eval`, `ssh host`, `python code`), given the dialect of the text it
    /// was found in.
    pub fn of_nested(origin: &str, outer: Dialect) -> Dialect {
        let first = origin.split([' ', '\u{203a}']).next().unwrap_or("");
        match first {
            "eval" | "alias" | "trap" | "$(…)" | "${…}" | "$((…))" | "PROMPT_COMMAND" | "source" | "." => outer,
            // `os.system`, `system()`, `popen`, `git` aliases and hooks run `/bin/sh -c`.
            "python" | "perl" | "ruby" | "node" | "php" | "awk" | "git" | "find" | "xargs" | "make" => {
                Dialect::bin_sh()
            }
            // A command in a variable (`$GIT_SSH_COMMAND`): programs run it with `sh -c`.
            var if var.starts_with('$') => Dialect::bin_sh(),
            prog => match Dialect::of_program(prog) {
                // A remote or foreign shell (`ssh host`, `docker exec`, `su -c`): not known.
                Dialect::Both if !is_shell(prog) => Dialect::Both,
                d => d,
            },
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Bash => "bash",
            Dialect::Dash => "dash",
            Dialect::Both => "bash and dash",
        }
    }
}

fn is_shell(prog: &str) -> bool {
    matches!(basename(prog), "sh" | "bash" | "rbash" | "dash" | "posh")
}

fn resolve(path: &Path) -> Dialect {
    match std::fs::canonicalize(path) {
        Ok(real) => {
            let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            match name.as_str() {
                // A plain file named `sh` is some shell of the family; which is not known.
                "sh" => Dialect::Both,
                other => Dialect::of_program(other),
            }
        }
        Err(_) => Dialect::Both,
    }
}

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn dialect_of_a_shell() {
        assert_eq!(Dialect::of_program("/usr/bin/bash"), Dialect::Bash);
        assert_eq!(Dialect::of_program("dash"), Dialect::Dash);
        assert_eq!(Dialect::of_program("zsh"), Dialect::Both);
        assert_eq!(Dialect::of_nested("bash -c", Dialect::Dash), Dialect::Bash);
        assert_eq!(Dialect::of_nested("eval", Dialect::Dash), Dialect::Dash);
        assert_eq!(Dialect::of_nested("ssh prod", Dialect::Dash), Dialect::Both);
    }
}
