//! Which agent hosts run cmdguard as their pre-tool-use hook. For each host, the settings files
//! docs/integrations.md names are read for a hook entry that runs `cmdguard hook <host>` on the
//! host's event and shell tool: "hooked", "present but not hooked" (with the snippet to add), or
//! "not found", which is no failure — the host may simply not be installed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Check, Status};

struct Host {
    name: &'static str,
    /// The event the hook must be installed under.
    event: &'static str,
    /// The tool the entry's matcher must cover; `None` where entries have no matcher.
    shell_tool: Option<&'static str>,
    /// The settings to add, from docs/integrations.md.
    snippet: &'static str,
    /// Said when the host is hooked.
    note: &'static str,
}

const CLAUDE_CODE: Host = Host {
    name: "claude-code",
    event: "PreToolUse",
    shell_tool: Some("Bash"),
    snippet: r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cmdguard hook claude-code","timeout":600}]}]}}"#,
    note: "",
};
const CODEX: Host = Host {
    name: "codex",
    event: "PreToolUse",
    shell_tool: Some("Bash"),
    snippet: r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"cmdguard hook codex","timeout":30}]}]}}"#,
    note: " (Codex runs a new or changed hook only after you trust it under /hooks)",
};
const COPILOT: Host = Host {
    name: "copilot",
    event: "preToolUse",
    shell_tool: None,
    snippet: r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"cmdguard hook copilot","timeoutSec":30}]}}"#,
    note: "",
};
const GEMINI: Host = Host {
    name: "gemini",
    event: "BeforeTool",
    shell_tool: Some("run_shell_command"),
    snippet: r#"{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"name":"cmdguard","type":"command","command":"cmdguard hook gemini","timeout":30000}]}]}}"#,
    note: "",
};

const CURSOR: Host = Host {
    name: "cursor",
    event: "beforeShellExecution",
    shell_tool: None,
    snippet: r#"{"version":1,"hooks":{"beforeShellExecution":[{"command":"cmdguard hook cursor","timeout":30,"failClosed":true}]}}"#,
    note: "",
};
const WINDSURF: Host = Host {
    name: "windsurf",
    event: "pre_run_command",
    shell_tool: None,
    snippet: r#"{"hooks":{"pre_run_command":[{"command":"cmdguard hook windsurf","show_output":true}]}}"#,
    note: "",
};

/// One check per host, for the project at `project`.
pub fn checks(project: &Path) -> Vec<Check> {
    // Without a home directory only the project's files are looked at.
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf());
    let env_dir = |var: &str, default: &str| match std::env::var_os(var) {
        Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
        _ => home.as_ref().map(|h| h.join(default)),
    };
    let codex = env_dir("CODEX_HOME", ".codex");
    let copilot = env_dir("COPILOT_HOME", ".copilot");
    let claude = home.as_ref().map(|h| h.join(".claude"));
    let gemini = home.as_ref().map(|h| h.join(".gemini"));
    let files = |list: Vec<Option<PathBuf>>| Places { files: list.into_iter().flatten().collect(), dirs: Vec::new() };
    let home = home.unwrap_or_default();
    vec![
        check(
            &CLAUDE_CODE,
            &files(vec![
                claude.map(|d| d.join("settings.json")),
                Some(project.join(".claude/settings.json")),
                Some(project.join(".claude/settings.local.json")),
            ]),
            &home,
        ),
        check(
            &CODEX,
            &files(vec![
                codex.as_ref().map(|d| d.join("hooks.json")),
                codex.as_ref().map(|d| d.join("config.toml")),
                Some(project.join(".codex/hooks.json")),
                Some(project.join(".codex/config.toml")),
            ]),
            &home,
        ),
        check(
            &COPILOT,
            &Places {
                files: Vec::new(),
                dirs: [Some(project.join(".github/hooks")), copilot.map(|d| d.join("hooks"))]
                    .into_iter()
                    .flatten()
                    .collect(),
            },
            &home,
        ),
        check(
            &GEMINI,
            &files(vec![gemini.map(|d| d.join("settings.json")), Some(project.join(".gemini/settings.json"))]),
            &home,
        ),
        check(
            &CURSOR,
            &files(vec![Some(home.join(".cursor/hooks.json")), Some(project.join(".cursor/hooks.json"))]),
            &home,
        ),
        check(
            &WINDSURF,
            &files(vec![Some(home.join(".codeium/windsurf/hooks.json")), Some(project.join(".windsurf/hooks.json"))]),
            &home,
        ),
        super::hook_files::opencode(project, &home),
        super::hook_files::cline(project, &home),
    ]
}

/// Where a host's settings may be: files, and directories of `*.json` files.
struct Places {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Places {
    fn candidates(&self) -> Vec<PathBuf> {
        let mut out = self.files.clone();
        for dir in &self.dirs {
            let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            found.sort();
            out.extend(found);
        }
        out
    }

    fn looked(&self, home: &Path) -> String {
        let files = self.files.iter().map(|f| tilde(f, home));
        let dirs = self.dirs.iter().map(|d| format!("{}/*.json", tilde(d, home)));
        files.chain(dirs).collect::<Vec<_>>().join(", ")
    }
}

/// `path` with the home directory shown as `~`.
pub(super) fn tilde(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if !home.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

fn check(host: &Host, places: &Places, home: &Path) -> Check {
    let (mut hooked, mut present, mut problems) = (Vec::new(), Vec::new(), Vec::new());
    for file in places.candidates() {
        let shown = tilde(&file, home);
        let entries = match read(&file) {
            Ok(None) => continue,
            Ok(Some(entries)) => entries,
            Err(why) => {
                problems.push(format!("{shown} {why}"));
                continue;
            }
        };
        present.push(shown.clone());
        for entry in entries {
            match judge(host, &entry, home) {
                Some(Ok(())) => hooked.push(shown.clone()),
                Some(Err(why)) => problems.push(format!("{shown}: {why}")),
                None => {}
            }
        }
    }
    hooked.dedup();
    let into = present.first().map_or_else(|| "its settings".to_string(), Clone::clone);
    let add = format!("add to {into} (or run `cmdguard hook install {}`): {}", host.name, host.snippet);
    match (hooked.is_empty(), problems.is_empty(), present.is_empty()) {
        (false, true, _) => Check::new(host.name, Status::Ok, format!("hooked in {}{}", hooked.join(", "), host.note)),
        (false, false, _) => {
            Check::new(host.name, Status::Warn, format!("hooked in {}, but {}", hooked.join(", "), problems.join("; ")))
                .hint("remove or correct the entries named")
        }
        (true, false, _) => Check::new(host.name, Status::Warn, problems.join("; ")).hint(add),
        (true, true, false) => Check::new(
            host.name,
            Status::Warn,
            format!("present but not hooked: no hook in {} runs `cmdguard hook {}`", present.join(", "), host.name),
        )
        .hint(add),
        (true, true, true) => {
            Check::new(host.name, Status::Info, format!("not found (looked for {})", places.looked(home)))
        }
    }
}

/// One hook command as a settings file installs it.
#[derive(Debug)]
struct Entry {
    event: String,
    matcher: Option<String>,
    command: String,
}

/// The hook entries of a settings file; `None` if there is no file; `Err` says why it cannot be read.
fn read(path: &Path) -> Result<Option<Vec<Entry>>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be read: {e}")),
    };
    let value: Value = if path.extension().is_some_and(|x| x == "toml") {
        // Codex also takes its hooks as [hooks] tables in config.toml.
        let table: toml::Table = toml::from_str(&text).map_err(|e| format!("is not valid TOML: {}", e.message()))?;
        serde_json::to_value(table).map_err(|e| format!("cannot be read: {e}"))?
    } else {
        serde_json::from_str(&text).map_err(|e| format!("is not valid JSON: {e}"))?
    };
    Ok(Some(entries(&value)))
}

/// `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"command": C}]}]}}`, or Copilot's
/// `{"hooks": {EVENT: [{"bash": C}]}}`.
fn entries(settings: &Value) -> Vec<Entry> {
    let mut out = Vec::new();
    let command = |h: &Value| h.get("command").or_else(|| h.get("bash")).and_then(Value::as_str).map(String::from);
    for (event, groups) in settings.get("hooks").and_then(Value::as_object).into_iter().flatten() {
        for group in groups.as_array().into_iter().flatten() {
            let matcher = group.get("matcher").and_then(Value::as_str).map(String::from);
            let hooks = match group.get("hooks").and_then(Value::as_array) {
                Some(hooks) => hooks.iter().collect(),
                None => vec![group],
            };
            for h in hooks {
                if let Some(command) = command(h) {
                    out.push(Entry { event: event.clone(), matcher: matcher.clone(), command });
                }
            }
        }
    }
    out
}

/// `None` if the entry does not run `cmdguard hook`; else whether it guards this host's shell
/// calls, or why not.
fn judge(host: &Host, entry: &Entry, home: &Path) -> Option<Result<(), String>> {
    let words: Vec<&str> = entry.command.split_whitespace().map(|w| w.trim_matches(['"', '\''])).collect();
    let at = words.iter().position(|w| Path::new(w).file_name().is_some_and(|n| n == "cmdguard"))?;
    let hook = at + words[at..].iter().position(|w| *w == "hook")?;
    let named = words.get(hook + 1).copied().unwrap_or("");
    let program = words[at];
    Some(if named != host.name {
        Err(format!(
            "a hook runs `cmdguard hook {named}`, which reads another host's calls; use `cmdguard hook {}`",
            host.name
        ))
    } else if entry.event != host.event {
        Err(format!("`cmdguard hook {}` is installed under {}, not {}", host.name, entry.event, host.event))
    } else if let Some(tool) = host.shell_tool.filter(|t| !covers(entry.matcher.as_deref(), t)) {
        Err(format!(
            "the matcher {:?} of `cmdguard hook {}` does not cover the {tool} tool",
            entry.matcher.as_deref().unwrap_or(""),
            host.name
        ))
    } else if program.contains('/') && !expand(program, home).is_file() {
        Err(format!("the hook runs {program}, which does not exist"))
    } else {
        Ok(())
    })
}

/// Whether a hook matcher selects `tool`: no matcher, `""` and `*` select every tool; otherwise
/// the matcher is a regular expression for the whole tool name (or the name itself).
fn covers(matcher: Option<&str>, tool: &str) -> bool {
    match matcher {
        None | Some("" | "*") => true,
        Some(m) => regex::bytes::RegexBuilder::new(&format!("^(?:{m})$"))
            .unicode(false)
            .build()
            .map_or(m == tool, |r| r.is_match(tool.as_bytes())),
    }
}

/// A program path as the host's shell would read `~/` and `$HOME/` in it.
pub(super) fn expand(program: &str, home: &Path) -> PathBuf {
    match program.strip_prefix("~/").or_else(|| program.strip_prefix("$HOME/")) {
        Some(rest) => home.join(rest),
        None => PathBuf::from(program),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(host: &Host, settings: Value) -> Vec<Option<Result<(), String>>> {
        entries(&settings).iter().map(|e| judge(host, e, Path::new("/home/u"))).collect()
    }

    #[test]
    fn hook_entries_are_judged_by_host_event_and_matcher() {
        let claude = serde_json::json!({"hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "cmdguard hook claude-code"}]},
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "cmdguard hook claude-code"}]},
                {"hooks": [{"type": "command", "command": "'/nowhere/cmdguard' --rules x.toml hook claude-code"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "cmdguard hook codex"}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "prettier --write"}]}
            ],
            "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "cmdguard hook claude-code"}]}]
        }});
        // Events come in name order: PostToolUse, then PreToolUse's entries as written.
        let got = judged(&CLAUDE_CODE, claude);
        let why = |i: usize| got[i].clone().unwrap().unwrap_err();
        assert_eq!(got.len(), 6, "{got:?}");
        assert!(why(0).contains("under PostToolUse, not PreToolUse"), "{got:?}");
        assert_eq!(got[1], Some(Ok(())));
        assert!(why(2).contains("does not cover the Bash tool"), "{got:?}");
        assert!(why(3).contains("/nowhere/cmdguard, which does not exist"), "{got:?}");
        assert!(why(4).contains("another host's calls"), "{got:?}");
        assert_eq!(got[5], None);

        let copilot = serde_json::json!({"version": 1, "hooks": {
            "preToolUse": [{"type": "command", "bash": "cmdguard hook copilot", "timeoutSec": 30}],
            "PreToolUse": [{"type": "command", "bash": "cmdguard hook copilot"}]
        }});
        let got = judged(&COPILOT, copilot);
        assert!(got.contains(&Some(Ok(()))), "{got:?}");
        assert!(
            got.iter().any(|g| g.as_ref().is_some_and(|r| r.as_ref().is_err_and(|e| e.contains("under PreToolUse"))))
        );
    }

    #[test]
    fn matchers_select_whole_tool_names() {
        assert!(covers(None, "Bash") && covers(Some(""), "Bash") && covers(Some("*"), "Bash"));
        assert!(covers(Some("Bash|Edit"), "Bash") && covers(Some(".*"), "Bash"));
        assert!(!covers(Some("Bas"), "Bash") && !covers(Some("Edit"), "Bash") && !covers(Some("(("), "Bash"));
    }
}
