//! Codex's hooks kept as `[[hooks.PreToolUse]]` tables in `config.toml`, edited with
//! `toml_edit`, so comments, other tables and their order stay as written. Install uses this
//! file only where the user already keeps hooks in it (see `install::file`).

use std::path::Path;

use anyhow::Result;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::config::ConfigError;

/// cmdguard's group: `matcher = MATCHER` and one hook `{type = "command", command, timeout}`.
pub struct Entry<'a> {
    pub event: &'a str,
    pub matcher: &'a str,
    pub command: &'a str,
    pub timeout: i64,
}

/// The new text and what changed, or `None` when nothing needs to change.
pub fn edit(
    path: &Path,
    text: &str,
    entry: &Entry,
    host: &str,
    installing: bool,
) -> Result<Option<(String, Vec<String>)>> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let at = e.span().map_or(0, |s| s.start);
        let line = text[..at.min(text.len())].matches('\n').count() + 1;
        let column = at - text[..at.min(text.len())].rfind('\n').map_or(0, |n| n + 1) + 1;
        ConfigError::new(format!(
            "{}:{line}:{column}: is not valid TOML ({}); nothing was changed, fix the file first",
            path.display(),
            e.message()
        ))
    })?;
    let bad = |what: String| ConfigError::new(format!("{}: {what}; nothing was changed", path.display()));
    let root = doc.as_table_mut();
    if !root.contains_key("hooks") {
        if !installing {
            return Ok(None);
        }
        let mut t = Table::new();
        t.set_implicit(true);
        root.insert("hooks", Item::Table(t));
    }
    let hooks = root["hooks"].as_table_mut().ok_or_else(|| bad("[hooks] is not a table".into()))?;
    if !hooks.contains_key(entry.event) {
        hooks.insert(entry.event, Item::ArrayOfTables(ArrayOfTables::new()));
    }
    let groups = hooks[entry.event].as_array_of_tables_mut().ok_or_else(|| {
        bad(format!("hooks.{} is not written as [[hooks.{}]] tables; edit it by hand", entry.event, entry.event))
    })?;
    // cmdguard's hooks for this host, as (group, hook) positions, and whether one is exactly ours.
    let mut found = Vec::new();
    let mut exact = false;
    for (i, group) in groups.iter().enumerate() {
        let Some(inner) = group.get("hooks").and_then(Item::as_array_of_tables) else { continue };
        for (j, h) in inner.iter().enumerate() {
            let command = h.get("command").and_then(Item::as_str).unwrap_or("");
            if super::install::runs_cmdguard_hook(command, host) {
                exact |= command == entry.command
                    && h.get("timeout").and_then(Item::as_integer) == Some(entry.timeout)
                    && group.get("matcher").and_then(Item::as_str) == Some(entry.matcher);
                found.push((i, j, command.to_string()));
            }
        }
    }
    if (installing && exact && found.len() == 1) || (!installing && found.is_empty()) {
        return Ok(None);
    }
    let mut lines: Vec<String> =
        found.iter().map(|(_, _, c)| format!("removed from [[hooks.{}]]: {c}", entry.event)).collect();
    for (i, j, _) in found.iter().rev() {
        let group = groups.get_mut(*i).unwrap();
        if let Some(inner) = group.get_mut("hooks").and_then(Item::as_array_of_tables_mut) {
            inner.remove(*j);
            if inner.is_empty() {
                groups.remove(*i);
            }
        }
    }
    if installing {
        let mut hook = Table::new();
        hook.insert("type", value("command"));
        hook.insert("command", value(entry.command));
        hook.insert("timeout", value(entry.timeout));
        let mut inner = ArrayOfTables::new();
        inner.push(hook);
        let mut group = Table::new();
        group.insert("matcher", value(entry.matcher));
        group.insert("hooks", Item::ArrayOfTables(inner));
        groups.push(group);
        lines.push(format!(
            "added to [[hooks.{}]]: matcher = \"{}\", command = \"{}\", timeout = {}",
            entry.event, entry.matcher, entry.command, entry.timeout
        ));
    }
    if groups.is_empty() {
        hooks.remove(entry.event);
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(Some((doc.to_string(), lines)))
}

#[cfg(test)]
mod tests {
    use super::{Entry, edit};
    use std::path::Path;

    #[test]
    fn codex_config_keeps_its_comments_and_tables() {
        let text = "# my Codex\nmodel = \"o4\"\n\n[features]\ncodex_hooks = true # on\n";
        let entry = Entry { event: "PreToolUse", matcher: "Bash", command: "/bin/cmdguard hook codex", timeout: 30 };
        let (added, lines) = edit(Path::new("c.toml"), text, &entry, "codex", true).unwrap().unwrap();
        assert!(added.starts_with(text), "{added}");
        assert!(added.contains("[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"/bin/cmdguard hook codex\"\ntimeout = 30\n"), "{added}");
        assert_eq!(lines.len(), 1);
        assert!(edit(Path::new("c.toml"), &added, &entry, "codex", true).unwrap().is_none());
        let (removed, _) = edit(Path::new("c.toml"), &added, &entry, "codex", false).unwrap().unwrap();
        assert_eq!(removed, text);
        let err = edit(Path::new("c.toml"), "a = 1\nb = [\n", &entry, "codex", true).err().unwrap();
        assert!(format!("{err:#}").starts_with("c.toml:2:"), "{err:#}");
    }
}
