//! The program catalogue as written: serde types for `programs/*.toml`, the knowledge of which
//! programs run a command, carry a script in an option, or take their operands as plain data.
//! `build.rs` reads this file too (it compiles the catalogue into the binary), so it depends on
//! serde only; `shell::catalog` is the engine that applies it.

use serde::Deserialize;

/// Most words that name one program's subcommand (`subcommand_levels`): `oci os object
/// delete` takes three.
pub const MAX_SUBCOMMAND_LEVELS: usize = 4;

/// One catalogue file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramFile {
    #[serde(default, rename = "program")]
    pub programs: Vec<RawProgram>,
}

/// What a program does with the words after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Runs the command its operands form (`nohup CMD`, `systemd-run --scope CMD`), after its
    /// options and `skip` operands, and after one of `subcommands` when it has them.
    Wrapper,
    /// Runs commands only through the options named in `script` and `keyed`; its operands are
    /// not a command.
    Carrier,
    /// Takes its operands as plain data (`echo`, `grep`, `man`): dangerous text there is quiet.
    Data,
    /// Known to the analysis, which reads it in code (`sudo`, `ssh`, `git`, `find`, the shells
    /// and interpreters); listed so that it is not read as an unknown program.
    Analysed,
}

/// An option with which the program deletes some of its operands (`tar --remove-files`), or
/// the path one key of its value names (`ansible -m file -a 'path=X state=absent'`): read as
/// `rm -rf` of them, so the rules for `rm` judge the paths.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRemoves {
    pub option: String,
    /// Which operands it deletes: `all`, `last`, `but_last` or `after_first`.
    #[serde(default)]
    pub operands: String,
    /// Only operands under one of these prefixes (`~/`): elsewhere the rules judge the command.
    #[serde(default)]
    pub under: Vec<String>,
    /// Only when the option's value holds this text (`state=absent`).
    #[serde(default)]
    pub value_has: String,
    /// The deleted path is the value of one of these keys in the option's value (`path=X`).
    #[serde(default)]
    pub value_keys: Vec<String>,
    /// Options with which nothing is deleted (`--dry-run`, `-n`; a short one also counts inside
    /// a cluster such as `-avn`).
    #[serde(default)]
    pub unless_given: Vec<String>,
}

/// An option whose value is `KEY=COMMAND` or `KEY COMMAND` for some keys (`ssh -o
/// ProxyCommand=…`, `tar --checkpoint-action=exec=…`). Keys compare without case.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKeyed {
    pub option: String,
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProgram {
    /// Program names (basenames). `git reset` names a subcommand, for its long options.
    pub names: Vec<String>,
    pub role: Role,
    /// One line on what it is, for `explain`.
    #[serde(default)]
    pub about: String,
    /// Short options that take a value (`"cEI"`).
    #[serde(default)]
    pub short_value: String,
    /// Long options that take a value (`"--user"`), as `--opt value` or `--opt=value`.
    #[serde(default)]
    pub long_value: Vec<String>,
    /// Long options that take no value, for prefix matching.
    #[serde(default)]
    pub long: Vec<String>,
    /// The option parser accepts an unambiguous prefix of a long option (GNU getopt_long,
    /// git's parse-options): `--recurs` is `--recursive`.
    #[serde(default)]
    pub abbreviate: bool,
    /// Options whose value is a shell command line the program runs (`-c`, `--to-command`).
    #[serde(default)]
    pub script: Vec<String>,
    /// The scripts its options carry are another language that holds shell commands
    /// (Makefile text, `gdb` commands): read as a guess, whose hits ask and whose unreadable
    /// parts ask nothing.
    #[serde(default)]
    pub guess: bool,
    /// Options whose value runs a command for some keys.
    #[serde(default)]
    pub keyed: Vec<RawKeyed>,
    /// A wrapper runs its command only after one of these subcommands (`rbenv exec`).
    #[serde(default)]
    pub subcommands: Vec<String>,
    /// The subcommand may be left out (`dotenv run CMD` and `dotenv CMD`).
    #[serde(default)]
    pub subcommand_optional: bool,
    /// How many operands, after the options the entry lists, name the program's subcommand
    /// (`kubectl delete` 1, `aws s3 rm` 2): such a word only known when the command runs
    /// (`git $x --hard`) asks. An entry for `PROG SUB` with its own count goes on after SUB
    /// (`git stash drop`).
    #[serde(default)]
    pub subcommand_levels: usize,
    /// Operands a wrapper takes before the command (`timeout DURATION CMD`: 1).
    #[serde(default)]
    pub skip: usize,
    /// A wrapper hands its operands to a shell as one script (`tmux new-session 'CMD'`, `sg
    /// group CMD`) instead of running them as a command.
    #[serde(default)]
    pub operands_script: bool,
    /// Long options that take two values (`bwrap --bind SRC DEST`).
    #[serde(default)]
    pub long_value2: Vec<String>,
    /// Options after which the rest of the words is a command it runs (`gdb --args PROG …`).
    #[serde(default)]
    pub command_after: Vec<String>,
    /// Reads commands from standard input (`at`, `batch`, `newgrp`).
    #[serde(default)]
    pub reads_stdin: bool,
    /// Options that name a script file; given `-`, the script is read from standard input
    /// (`make -f -`).
    #[serde(default)]
    pub stdin_script: Vec<String>,
    /// Options with which the program runs nothing (`--help`, `--list`).
    #[serde(default)]
    pub informs: Vec<String>,
    /// In the program's own command language (psql's `\!`, sqlite3's `.shell`, vim's `:!`), the
    /// keys that run the rest of the line as a shell command: every word and line of
    /// here-document input is read for them.
    #[serde(default)]
    pub command_keys: Vec<String>,
    /// Subcommand spellings the program accepts for another (`npm pub` is `npm publish`).
    #[serde(default)]
    pub aliases: Vec<[String; 2]>,
    /// The program does to its operands what this command does (`rimraf X` is `rm -rf X`).
    #[serde(default)]
    pub same_as: String,
    /// Options with which it deletes operands or a path in its value.
    #[serde(default)]
    pub removes: Vec<RawRemoves>,
    /// Options whose value is optional and only given attached (`git grep -Oless`,
    /// `--open-files-in-pager=less`): a separate next word is not their value.
    #[serde(default)]
    pub optional_value: Vec<String>,
    /// Files (in the working directory) the program runs as its script when it runs
    /// (`Makefile` for make, `.git/hooks/pre-commit` for `git commit`): one written earlier in
    /// the same command is read.
    #[serde(default)]
    pub runs_files: Vec<String>,
    /// Options whose value is code in a language, as `[option, language]` (`emacs --eval`).
    #[serde(default)]
    pub code: Vec<[String; 2]>,
    /// In the program's own command language, keys that run the rest of the line as code in a
    /// language, as `[key, language]` (vim's `lua`, `call`).
    #[serde(default)]
    pub code_keys: Vec<[String; 2]>,
    /// In the program's own language, phrases after which a quoted string is a shell command
    /// (PostgreSQL's `COPY … FROM PROGRAM 'CMD'`); compared without case.
    #[serde(default)]
    pub quoted_after: Vec<String>,
    /// A wrapper's first operand is a shell command and each later one a command of the
    /// program itself (`tmux if-shell TEST 'run-shell CMD'`).
    #[serde(default)]
    pub test_then: bool,
    /// The scripts its options carry are keys typed into a shell: `\n`, `\r` and `^M` end a
    /// line (`screen -X stuff 'CMD\n'`).
    #[serde(default)]
    pub keystrokes: bool,
    /// The command after a `command_after` option runs on each path found (`fd PATTERN DIR -x
    /// CMD`): `{}` (or the path appended, when there is no `{}`) is read as `DIR/**/PATTERN`
    /// when the pattern is a plain name, else as `{}`.
    #[serde(default)]
    pub each_found: bool,
    /// A wrapper's `NAME=value` words after its options are assignments it makes, not its
    /// command (`env A=1 CMD`, `sudo A=1 CMD`, `time A=1 CMD`).
    #[serde(default)]
    pub assignments: bool,
    /// A wrapper's command follows its `skip` operands at once: no options are read after them
    /// (`timeout 10 -x` runs `-x`; without this, `sg GROUP -c CMD` reads `-c` after `GROUP`).
    #[serde(default)]
    pub skip_then_command: bool,
    /// Options with which a wrapper given no command starts a shell that reads its commands
    /// from standard input (`sudo -s`, `sudo -i`, `doas -s`).
    #[serde(default)]
    pub shell_without_command: Vec<String>,
    /// The words after a `script` option's value are part of its script (`env -S 'rm -rf' ~`
    /// runs `rm -rf ~`).
    #[serde(default)]
    pub script_with_operands: bool,
    /// Options with which an `operands_script` wrapper runs its operands as a command instead
    /// of joining them into a script (`watch -x CMD ARGS`).
    #[serde(default)]
    pub operands_argv: Vec<String>,
    /// The command a wrapper runs when given none (`xargs` runs `echo`).
    #[serde(default)]
    pub default_command: String,
    /// Every option makes the wrapper run nothing: only a command in first place runs
    /// (`busybox --list`, `toybox --help`).
    #[serde(default)]
    pub options_inform: bool,
    /// The wrapper is removed even though a built-in rule names it (the rules that name `npx`
    /// allow for it as a prefix only): rules see the command it runs in its place. Without
    /// this, a wrapper the rules name (`sshpass`, `heroku run`) keeps its words.
    #[serde(default)]
    pub always_unwrap: bool,
    /// A wrapper's command ends at a word starting with this mark (`parallel CMD ::: ARGS`):
    /// the words after it are arguments, appended to the command unless it holds `{}`, and a
    /// command given as one word holding a blank is a script.
    #[serde(default)]
    pub arguments_after: String,
    /// Commands this entry reads: each must reach a command or script through it (tested).
    #[serde(default)]
    pub examples: Vec<String>,
}
