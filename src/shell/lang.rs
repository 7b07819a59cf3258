//! What cmdguard knows of each interpreter: its names, the options that take its code or
//! another value, and the calls in its code that run a shell or a program. `interp` scans code
//! with it.

use super::Field;
use super::nested::NestedKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Perl,
    Ruby,
    Node,
    Php,
    Awk,
    Lua,
    R,
    Julia,
    PowerShell,
    AppleScript,
    Tcl,
    /// Vim script (`vim -c 'call system(…)'`); read through the editor's entry, not a program.
    Vim,
    /// Emacs Lisp (`emacs --eval '(shell-command …)'`), read by `shell::editors`.
    Elisp,
}

impl Lang {
    pub fn of(program: &str) -> Option<Lang> {
        let p = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match p {
            "python" | "pypy" => Lang::Python,
            "perl" => Lang::Perl,
            "ruby" | "jruby" => Lang::Ruby,
            "node" | "nodejs" | "deno" | "bun" => Lang::Node,
            "php" => Lang::Php,
            "awk" | "gawk" | "mawk" | "nawk" => Lang::Awk,
            "ipython" => Lang::Python,
            "lua" | "luajit" => Lang::Lua,
            "Rscript" | "R" => Lang::R,
            "julia" => Lang::Julia,
            "pwsh" | "powershell" | "powershell.exe" | "pwsh.exe" => Lang::PowerShell,
            "osascript" => Lang::AppleScript,
            "tclsh" | "wish" => Lang::Tcl,
            _ => return None,
        })
    }

    /// A language the catalogue names (`code = [["--eval", "elisp"]]`): an interpreter's
    /// program name or `vim`, `elisp`.
    pub fn named(name: &str) -> Option<Lang> {
        match name {
            "vim" => Some(Lang::Vim),
            "elisp" => Some(Lang::Elisp),
            other => Lang::of(other),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Perl => "perl",
            Lang::Ruby => "ruby",
            Lang::Node => "node",
            Lang::Php => "php",
            Lang::Awk => "awk",
            Lang::Lua => "lua",
            Lang::R => "R",
            Lang::Julia => "julia",
            Lang::PowerShell => "pwsh",
            Lang::AppleScript => "osascript",
            Lang::Tcl => "tclsh",
            Lang::Vim => "vim",
            Lang::Elisp => "elisp",
        }
    }

    /// Short options that take the code to run.
    pub fn code_flags(self) -> &'static str {
        match self {
            Lang::Python => "c",
            Lang::Perl => "eE",
            Lang::Ruby => "e",
            Lang::Node => "ep",
            Lang::Php => "r",
            Lang::Awk => "e",
            Lang::Lua => "e",
            Lang::R => "e",
            Lang::Julia => "eE",
            Lang::PowerShell => "c",
            Lang::AppleScript => "e",
            Lang::Tcl | Lang::Vim | Lang::Elisp => "",
        }
    }

    /// Short options that take a value which is not code (`python -W ignore`, `ruby -r lib`):
    /// the value is skipped, so that the code option after it is found.
    pub fn value_flags(self) -> &'static str {
        match self {
            Lang::Python => "WXQ",
            Lang::Perl => "IMm",
            Lang::Ruby => "rICEF",
            Lang::Node => "rC",
            Lang::Php => "cdzf",
            Lang::Awk | Lang::Tcl | Lang::PowerShell | Lang::Vim | Lang::Elisp => "",
            Lang::Lua => "l",
            Lang::R => "",
            Lang::Julia => "JCLtp",
            Lang::AppleScript => "sl",
        }
    }

    /// Long options that take a value which is not code (`node --require x`).
    pub fn value_options(self) -> &'static [&'static str] {
        match self {
            Lang::Node => &[
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--input-type",
                "--title",
                "--conditions",
                "--env-file",
                "--inspect-port",
                "--max-old-space-size",
                "--stack-size",
                "--localstorage-file",
            ],
            Lang::Python => &["--check-hash-based-pycs"],
            Lang::Ruby => {
                &["--encoding", "--external-encoding", "--internal-encoding", "--enable", "--disable", "--dump"]
            }
            _ => &[],
        }
    }

    /// An option after which no inline code follows (`python -m module`).
    pub fn stops_at(self, cluster: &str) -> bool {
        matches!(self, Lang::Python) && cluster.contains('m')
    }

    /// Calls that run a shell command or program (last name component).
    pub(super) fn runs_shell(self, name: &str) -> bool {
        const COMMON: &[&str] =
            &["system", "popen", "spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync"];
        let specific: &[&str] = match self {
            Lang::Python => &[
                "run",
                "call",
                "check_call",
                "check_output",
                "Popen",
                "getoutput",
                "getstatusoutput",
                "execv",
                "execvp",
                "execve",
                "execl",
                "execlp",
                "spawnv",
                "spawnvp",
                "spawnl",
                "spawnlp",
            ],
            Lang::Perl => &["qx", "open"],
            Lang::Ruby => &["capture2", "capture2e", "capture3", "popen3", "pipeline"],
            Lang::Node => &["execa", "execaSync", "$"],
            Lang::Php => &["shell_exec", "passthru", "proc_open", "pcntl_exec"],
            Lang::Awk | Lang::Tcl | Lang::PowerShell | Lang::Elisp => &[],
            Lang::Vim => &["systemlist", "jobstart", "termopen", "job_start", "term_start"],
            Lang::Lua => &["execute"],
            Lang::R => &["system2", "shell"],
            Lang::Julia => &["run", "read", "pipeline"],
            Lang::AppleScript => &["script"],
        };
        (COMMON.contains(&name) && !(self == Lang::Python && name == "exec")) || specific.contains(&name)
    }

    /// Calls that evaluate code of the same language.
    pub(super) fn evals_code(self, name: &str) -> bool {
        name == "eval" || (self == Lang::Python && name == "exec") || (self == Lang::Vim && name == "execute")
    }
}

/// Whether the catalogue may name this language (checked when a user entry loads).
pub fn is_language(name: &str) -> bool {
    Lang::named(name).is_some()
}

/// PowerShell code, statement by statement: `Remove-Item` and its aliases read as the `rm` of
/// the same effect (`-Recurse` is `-r`), `Invoke-Expression` of anything as code only known when
/// it runs, and other statements as shell commands (`git reset --hard` is the same in both).
pub fn powershell(code: &str) -> Vec<NestedKind> {
    let mut out = Vec::new();
    for statement in code.split(['\n', ';', '|']).map(str::trim).filter(|s| !s.is_empty()) {
        let words: Vec<&str> = statement.split_whitespace().collect();
        let verb = words[0].to_ascii_lowercase();
        match verb.as_str() {
            "remove-item" | "ri" | "rm" | "del" | "erase" | "rd" | "rmdir" => {
                let recurse = words[1..].iter().any(|w| w.to_ascii_lowercase().starts_with("-r"));
                let mut argv = vec![Field::lit("rm"), Field::lit(if recurse { "-rf" } else { "-f" })];
                for w in words[1..].iter().filter(|w| !w.starts_with('-')) {
                    let path = w.trim_matches(['"', '\'']);
                    // `$HOME`, `$env:USERPROFILE`, `~`: the home directory.
                    let path = match path.to_ascii_lowercase().as_str() {
                        "$home" | "$env:home" | "$env:userprofile" => "~".to_string(),
                        _ => path.to_string(),
                    };
                    argv.push(Field { dynamic: path.starts_with('$'), text: path });
                }
                out.push(NestedKind::Argv(argv));
            }
            "invoke-expression" | "iex" => {
                out.push(NestedKind::Dynamic("pwsh Invoke-Expression runs code only known when it runs".into()));
            }
            _ => out.push(NestedKind::Script(Field::lit(statement))),
        }
    }
    out
}
