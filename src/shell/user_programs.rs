//! The user's own catalogue entries (`[[program]]` in a rules file): checked when the file
//! loads, and installed before the built-in entries of the same name.

use super::catalog::{Program, Removes, Role, USER};
use super::programs::MAX_SUBCOMMAND_LEVELS;

/// Installs the user's entries, each as `[[program]]` TOML text with the file it is from. The
/// first policy loaded in a process sets them.
pub fn add_user(entries: &[(String, String)]) {
    if entries.is_empty() {
        return;
    }
    let programs = entries.iter().filter_map(|(text, file)| parse_user(text, file).ok()).collect();
    let _ = USER.set(programs);
}

/// Checks one user entry (`[[program]]` as TOML text) and makes it a catalogue entry.
pub fn parse_user(text: &str, file: &str) -> Result<&'static Program, String> {
    use super::programs::RawProgram;
    let raw: RawProgram = toml::from_str(text).map_err(|e| e.message().trim_end().to_string())?;
    if raw.names.is_empty() || raw.names.iter().any(|n| n.trim().is_empty()) {
        return Err("`names` lists the programs it is about; none is empty".into());
    }
    if raw.role == Role::Analysed {
        return Err("role \"analysed\" is for programs cmdguard reads in code; use wrapper, carrier or data".into());
    }
    let removed = raw.removes.iter().map(|r| &r.option);
    let options = raw.long_value.iter().chain(&raw.long_value2).chain(&raw.long).chain(&raw.script).chain(removed);
    if let Some(r) =
        raw.removes.iter().find(|r| !matches!(r.operands.as_str(), "" | "all" | "last" | "but_last" | "after_first"))
    {
        return Err(format!("removes.operands {:?} is not all, last, but_last or after_first", r.operands));
    }
    if let Some([_, lang]) = raw.code.iter().chain(&raw.code_keys).find(|[_, l]| !super::lang::is_language(l)) {
        return Err(format!("language {lang:?} is not one cmdguard reads"));
    }
    let options = options.chain(&raw.command_after).chain(&raw.stdin_script);
    let mut options = options.chain(&raw.shell_without_command).chain(&raw.operands_argv);
    if let Some(bad) = options.find(|o| !o.starts_with('-')) {
        return Err(format!("option {bad:?} does not start with `-`"));
    }
    if raw.subcommand_levels > MAX_SUBCOMMAND_LEVELS {
        return Err(format!(
            "subcommand_levels is {}; a program's subcommand is named by at most {MAX_SUBCOMMAND_LEVELS} words",
            raw.subcommand_levels
        ));
    }
    if let Some(bad) = raw.short_value.chars().find(|c| !c.is_ascii_alphanumeric()) {
        return Err(format!("short_value holds {bad:?}; list the letters of short options that take a value"));
    }
    fn leak(s: String) -> &'static str {
        Box::leak(s.into_boxed_str())
    }
    fn all(v: Vec<String>) -> &'static [&'static str] {
        Box::leak(v.into_iter().map(leak).collect::<Vec<_>>().into_boxed_slice())
    }
    let keyed = raw.keyed.into_iter().map(|k| (leak(k.option), all(k.keys))).collect::<Vec<_>>();
    let aliases = raw.aliases.into_iter().map(|[a, b]| (leak(a), leak(b))).collect::<Vec<_>>();
    let two = |v: Vec<[String; 2]>| -> &'static [(&'static str, &'static str)] {
        Box::leak(v.into_iter().map(|[a, b]| (leak(a), leak(b))).collect::<Vec<_>>().into_boxed_slice())
    };
    let removes = raw
        .removes
        .into_iter()
        .map(|r| Removes {
            option: leak(r.option),
            operands: leak(r.operands),
            under: all(r.under),
            value_has: leak(r.value_has),
            value_keys: all(r.value_keys),
            unless_given: all(r.unless_given),
        })
        .collect::<Vec<_>>();
    Ok(Box::leak(Box::new(Program {
        names: all(raw.names),
        role: raw.role,
        about: leak(raw.about),
        file: leak(file.to_string()),
        short_value: leak(raw.short_value),
        long_value: all(raw.long_value),
        long_value2: all(raw.long_value2),
        long: all(raw.long),
        abbreviate: raw.abbreviate,
        guess: raw.guess,
        script: all(raw.script),
        keyed: Box::leak(keyed.into_boxed_slice()),
        subcommands: all(raw.subcommands),
        subcommand_optional: raw.subcommand_optional,
        subcommand_levels: raw.subcommand_levels,
        skip: raw.skip,
        operands_script: raw.operands_script,
        command_after: all(raw.command_after),
        reads_stdin: raw.reads_stdin,
        stdin_script: all(raw.stdin_script),
        informs: all(raw.informs),
        command_keys: all(raw.command_keys),
        aliases: Box::leak(aliases.into_boxed_slice()),
        same_as: leak(raw.same_as),
        removes: Box::leak(removes.into_boxed_slice()),
        optional_value: all(raw.optional_value),
        runs_files: all(raw.runs_files),
        code: two(raw.code),
        code_keys: two(raw.code_keys),
        quoted_after: all(raw.quoted_after),
        test_then: raw.test_then,
        keystrokes: raw.keystrokes,
        each_found: raw.each_found,
        assignments: raw.assignments,
        skip_then_command: raw.skip_then_command,
        shell_without_command: all(raw.shell_without_command),
        script_with_operands: raw.script_with_operands,
        operands_argv: all(raw.operands_argv),
        default_command: leak(raw.default_command),
        options_inform: raw.options_inform,
        always_unwrap: raw.always_unwrap,
        arguments_after: leak(raw.arguments_after),
        examples: all(raw.examples),
    })))
}
