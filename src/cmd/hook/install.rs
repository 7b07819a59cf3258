//! `cmdguard hook install HOST` and `cmdguard hook uninstall HOST`: cmdguard's hook entry
//! written into (or removed from) the host's own settings file, `--user` (the default) or
//! `--project`. JSON files are edited in place (`settings.rs`: other keys, their order and
//! entries untouched); OpenCode gets a plugin file and Cline a hook script, both cmdguard's own.
//! A second install changes nothing; a changed file's previous content is kept beside it as
//! `FILE.cmdguard-backup`; every write is atomic; a file that cannot be read is left alone.
//!
//! The installed command is this binary's absolute path (`std::env::current_exe`), not
//! `cmdguard` on PATH: editors started from a desktop (Cursor, Windsurf, VS Code for Cline)
//! often have a shorter PATH than a shell, and a hook that cannot start runs the call.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::settings::{self, Json};
use crate::cli::{HookPlace, HookSetup, Host};
use crate::config::ConfigError;

/// Where cmdguard's entry goes in a host's hook list.
enum Shape {
    /// `hooks.EVENT: [{"matcher": M, "hooks": [ENTRY]}]` (Claude Code, Codex, Gemini CLI).
    Grouped(&'static str),
    /// `hooks.EVENT: [ENTRY]` (Copilot, Cursor, Windsurf).
    Flat,
}

/// What is written where.
enum Target {
    /// An entry in a JSON settings file, created from `base` if the file does not exist.
    Json { event: &'static str, shape: Shape, entry: Json, base: Json },
    /// A whole file of cmdguard's own (the OpenCode plugin, the Cline hook script).
    Own { text: String, mode: u32 },
}

pub fn run(setup: &HookSetup) -> Result<u8> {
    let (place, installing) = match setup {
        HookSetup::Install(p) => (p, true),
        HookSetup::Uninstall(p) => (p, false),
    };
    let home = directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()).context("no home directory")?;
    let cwd = super::super::cwd()?;
    let path = file(place, &home, &crate::config::project_root(&cwd));
    // A settings file kept elsewhere and linked in (dotfiles) is edited where it is; renaming
    // over the link would replace it with a copy.
    let path = match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or(path),
        _ => path,
    };
    let program = std::env::current_exe().context("cannot tell where this cmdguard binary is")?;
    let program = program.canonicalize().unwrap_or(program);
    let target = target(place.host, &program);
    let name = host_name(place.host);
    let old = crate::state::read_optional(&path)?;
    let shown = path.display();
    let change = match (&target, installing) {
        (Target::Json { .. }, _) if path.extension().is_some_and(|x| x == "toml") => {
            codex_toml(&path, old.as_deref(), &command(&program, place.host), installing)?
        }
        (Target::Json { .. }, _) => edit_json(&target, &path, old.as_deref(), name, installing)?,
        (Target::Own { text, .. }, true) => own_install(&path, old.as_deref(), text, name)?,
        (Target::Own { .. }, false) => own_uninstall(&path, old.as_deref(), name)?,
    };
    let Some(change) = change else {
        match installing {
            true => println!("cmdguard: the {name} hook is already installed in {shown}; nothing changed"),
            false => println!("cmdguard: {shown} has no cmdguard hook for {name}; nothing changed"),
        }
        return Ok(0);
    };
    let mode = match &target {
        Target::Own { mode, .. } => *mode,
        Target::Json { .. } => 0o644,
    };
    write(&path, old.as_deref(), change.text.as_deref(), mode)?;
    let verb = if installing { "installed the {name} hook in" } else { "removed the {name} hook from" };
    println!("cmdguard: {} {shown}", verb.replace("{name}", name));
    for line in &change.lines {
        println!("  {line}");
    }
    if old.is_some() {
        println!("  the previous file is kept as {}", backup(&path).display());
    }
    if installing && place.host == Host::Codex {
        println!("  Codex runs a new or changed hook only after you trust it: open /hooks in Codex");
    }
    Ok(0)
}

/// The file a host reads its hooks from, for the place chosen.
fn file(place: &HookPlace, home: &Path, project: &Path) -> PathBuf {
    let env_dir = |var: &str, default: &str| match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => home.join(default),
    };
    let (user, in_project) = match place.host {
        Host::ClaudeCode => (home.join(".claude/settings.json"), ".claude/settings.json"),
        Host::Codex => (env_dir("CODEX_HOME", ".codex").join("hooks.json"), ".codex/hooks.json"),
        Host::Copilot => {
            (env_dir("COPILOT_HOME", ".copilot").join("hooks/cmdguard.json"), ".github/hooks/cmdguard.json")
        }
        Host::Gemini => (home.join(".gemini/settings.json"), ".gemini/settings.json"),
        Host::Cursor => (home.join(".cursor/hooks.json"), ".cursor/hooks.json"),
        Host::Windsurf => (home.join(".codeium/windsurf/hooks.json"), ".windsurf/hooks.json"),
        Host::Opencode => (
            env_dir("XDG_CONFIG_HOME", ".config").join("opencode/plugins/cmdguard.js"),
            ".opencode/plugins/cmdguard.js",
        ),
        Host::Cline => (home.join("Documents/Cline/Hooks/PreToolUse"), ".clinerules/hooks/PreToolUse"),
    };
    let path = if place.project { project.join(in_project) } else { user };
    // Codex also reads `[hooks]` tables from config.toml: where the user keeps them there (and
    // has no hooks.json), that is the file to edit.
    let toml = path.with_file_name("config.toml");
    let keeps_hooks = |t: String| t.parse::<toml_edit::DocumentMut>().is_ok_and(|d| d.contains_key("hooks"));
    if place.host == Host::Codex && !path.exists() && std::fs::read_to_string(&toml).is_ok_and(keeps_hooks) {
        return toml;
    }
    path
}

pub fn host_name(host: Host) -> &'static str {
    match host {
        Host::ClaudeCode => "claude-code",
        Host::Codex => "codex",
        Host::Copilot => "copilot",
        Host::Gemini => "gemini",
        Host::Cursor => "cursor",
        Host::Windsurf => "windsurf",
        Host::Opencode => "opencode",
        Host::Cline => "cline",
    }
}

/// The hook command as a shell reads it: the program quoted if it needs to be.
fn command(program: &Path, host: Host) -> String {
    format!("{} hook {}", quoted(program), host_name(host))
}

fn quoted(program: &Path) -> String {
    let p = program.to_string_lossy();
    let plain = p.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain { p.into_owned() } else { format!("'{}'", p.replace('\'', r"'\''")) }
}

fn target(host: Host, program: &Path) -> Target {
    let cmd = command(program, host);
    let obj = |v: serde_json::Value| Json::from_value(v);
    let version = || obj(serde_json::json!({"version": 1}));
    let (event, shape, entry, base) = match host {
        // Claude Code's own default is 600 s today but was 60 s in older releases, below the
        // wait cmdguard gives it (`rules::hooks::default_wait`): written out, it is certain.
        Host::ClaudeCode => (
            "PreToolUse",
            Shape::Grouped("Bash"),
            serde_json::json!({"type": "command", "command": cmd, "timeout": 600}),
            Json::Obj(vec![]),
        ),
        Host::Codex => (
            "PreToolUse",
            Shape::Grouped("Bash"),
            serde_json::json!({"type": "command", "command": cmd, "timeout": 30}),
            Json::Obj(vec![]),
        ),
        Host::Gemini => (
            "BeforeTool",
            Shape::Grouped("run_shell_command"),
            serde_json::json!({"name": "cmdguard", "type": "command", "command": cmd, "timeout": 30000}),
            Json::Obj(vec![]),
        ),
        Host::Copilot => (
            "preToolUse",
            Shape::Flat,
            serde_json::json!({"type": "command", "bash": cmd, "timeoutSec": 30}),
            version(),
        ),
        Host::Cursor => (
            "beforeShellExecution",
            Shape::Flat,
            serde_json::json!({"command": cmd, "timeout": 30, "failClosed": true}),
            version(),
        ),
        Host::Windsurf => (
            "pre_run_command",
            Shape::Flat,
            serde_json::json!({"command": cmd, "show_output": true}),
            Json::Obj(vec![]),
        ),
        Host::Opencode => return Target::Own { text: super::plugin::opencode(program), mode: 0o644 },
        Host::Cline => return Target::Own { text: super::plugin::cline(&quoted(program)), mode: 0o755 },
    };
    // `json!` sorts keys; the entry is written in the order the hosts' documentation shows.
    let entry = match (obj(entry), host) {
        (Json::Obj(mut f), _) => {
            let order = ["name", "type", "command", "bash", "timeout", "timeoutSec", "failClosed", "show_output"];
            f.sort_by_key(|(k, _)| order.iter().position(|o| o == k));
            Json::Obj(f)
        }
        (other, _) => other,
    };
    Target::Json { event, shape, entry, base }
}

/// The new file text (`None`: remove the file) and what to say about it.
struct Change {
    text: Option<String>,
    lines: Vec<String>,
}

/// Whether a hook entry (`command`, or Copilot's `bash`) runs `cmdguard … hook HOST`.
fn is_ours(hook: &Json, host: &str) -> bool {
    let command = hook.get("command").or_else(|| hook.get("bash")).and_then(Json::as_str);
    command.is_some_and(|c| runs_cmdguard_hook(c, host))
}

/// Whether a hook command line runs `cmdguard … hook HOST` (any path to cmdguard, any options).
pub fn runs_cmdguard_hook(command: &str, host: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().map(|w| w.trim_matches(['"', '\''])).collect();
    let Some(at) = words.iter().position(|w| Path::new(w).file_name().is_some_and(|n| n == "cmdguard")) else {
        return false;
    };
    let rest = &words[at..];
    rest.iter().position(|w| *w == "hook").is_some_and(|h| rest.get(h + 1) == Some(&host))
}

fn edit_json(target: &Target, path: &Path, old: Option<&[u8]>, host: &str, installing: bool) -> Result<Option<Change>> {
    let Target::Json { event, shape, entry, base } = target else { unreachable!() };
    let mut doc = match old {
        None if !installing => return Ok(None),
        None => base.clone(),
        Some(bytes) => {
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ConfigError::new(format!("{}: is not UTF-8 text; nothing was changed", path.display())))?;
            settings::parse(text).map_err(|e| {
                ConfigError::new(format!(
                    "{}:{}:{}: is not valid JSON ({e}); nothing was changed, fix the file first",
                    path.display(),
                    e.line(),
                    e.column()
                ))
            })?
        }
    };
    let bad = |what: &str| ConfigError::new(format!("{}: {what}; nothing was changed", path.display()));
    let hooks = doc.entry("hooks", Json::Obj(vec![])).ok_or_else(|| bad("the file is not a JSON object"))?;
    if !matches!(hooks, Json::Obj(_)) {
        return Err(bad("\"hooks\" is not an object").into());
    }
    let list = hooks.entry(event, Json::Arr(vec![])).unwrap();
    let Json::Arr(items) = list else { return Err(bad(&format!("\"hooks\".\"{event}\" is not a list")).into()) };
    // cmdguard's entries for this host: (item, hook within the item's group) positions.
    let mut found = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match (shape, item.get("hooks")) {
            (Shape::Grouped(_), Some(Json::Arr(inner))) => found.extend(
                inner.iter().enumerate().filter(|(_, h)| is_ours(h, host)).map(|(j, h)| (i, Some(j), h.clone())),
            ),
            (Shape::Flat, _) if is_ours(item, host) => found.push((i, None, item.clone())),
            _ => {}
        }
    }
    let element = match shape {
        Shape::Grouped(m) => Json::Obj(vec![
            ("matcher".into(), Json::Str((*m).into())),
            ("hooks".into(), Json::Arr(vec![entry.clone()])),
        ]),
        Shape::Flat => entry.clone(),
    };
    if installing && found.len() == 1 && found[0].2 == *entry {
        return Ok(None);
    }
    if !installing && found.is_empty() {
        return Ok(None);
    }
    let mut lines: Vec<String> =
        found.iter().map(|(_, _, h)| format!("removed from hooks.{event}: {}", h.compact())).collect();
    // Remove from the back so earlier positions stay valid; a group or list left empty by the
    // removal goes too.
    for (i, j, _) in found.iter().rev() {
        match j {
            Some(j) => {
                if let Some(Json::Arr(inner)) = items[*i].entry("hooks", Json::Arr(vec![])) {
                    inner.remove(*j);
                }
                if items[*i].get("hooks").is_some_and(Json::is_empty_container) {
                    items.remove(*i);
                }
            }
            None => drop(items.remove(*i)),
        }
    }
    if installing {
        lines.push(format!("added to hooks.{event}: {}", element.compact()));
        items.push(element);
    }
    let hooks = doc.entry("hooks", Json::Obj(vec![])).unwrap();
    if hooks.get(event).is_some_and(Json::is_empty_container) {
        hooks.remove(event);
    }
    if doc.get("hooks").is_some_and(Json::is_empty_container) {
        doc.remove("hooks");
    }
    Ok(Some(Change { text: Some(doc.pretty()), lines }))
}

fn codex_toml(path: &Path, old: Option<&[u8]>, command: &str, installing: bool) -> Result<Option<Change>> {
    let text = String::from_utf8_lossy(old.unwrap_or_default());
    let entry = super::settings_toml::Entry { event: "PreToolUse", matcher: "Bash", command, timeout: 30 };
    let edited = super::settings_toml::edit(path, &text, &entry, "codex", installing)?;
    Ok(edited.map(|(text, lines)| Change { text: Some(text), lines }))
}

/// The line every file of cmdguard's own carries, so it is told from a file someone wrote.
fn marks_ours(text: &[u8], host: &str) -> bool {
    String::from_utf8_lossy(text).contains(&format!("written by `cmdguard hook install {host}`"))
}

fn own_install(path: &Path, old: Option<&[u8]>, text: &str, host: &str) -> Result<Option<Change>> {
    match old {
        Some(bytes) if bytes == text.as_bytes() => Ok(None),
        Some(bytes) if !marks_ours(bytes, host) => Err(ConfigError::new(format!(
            "{} exists and was not written by cmdguard; nothing was changed. Move it away, or make it run `cmdguard hook {host}` yourself",
            path.display()
        ))
        .into()),
        _ => Ok(Some(Change { text: Some(text.to_string()), lines: vec![format!("wrote {}", path.display())] })),
    }
}

fn own_uninstall(path: &Path, old: Option<&[u8]>, host: &str) -> Result<Option<Change>> {
    match old {
        None => Ok(None),
        Some(bytes) if !marks_ours(bytes, host) => {
            Err(ConfigError::new(format!("{} was not written by cmdguard; nothing was changed", path.display())).into())
        }
        Some(_) => Ok(Some(Change { text: None, lines: vec![format!("deleted {}", path.display())] })),
    }
}

fn backup(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".cmdguard-backup");
    path.with_file_name(name)
}

/// Keeps `old` as the backup, then puts `new` in place atomically (or removes the file). An
/// existing file keeps its permissions.
fn write(path: &Path, old: Option<&[u8]>, new: Option<&str>, mode: u32) -> Result<()> {
    let dir = path.parent().context("a settings file needs a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => mode,
    };
    if let Some(old) = old {
        crate::state::write_atomic(&backup(path), old, mode & 0o777)?;
    }
    match new {
        Some(text) => crate::state::write_atomic(path, text.as_bytes(), mode),
        None => std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display())),
    }
}
