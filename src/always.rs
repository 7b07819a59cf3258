//! "Always" at the prompt: an `[[allow]]` entry per asking part of the command, appended to the
//! project's `.cmdguard.toml` (the nearest one walking up, else a new one at the project root).
//! Written with `toml_edit`, so the user's comments and layout survive, under the trust lock and
//! by atomic rename. When the file was trusted before (or loosened nothing, or did not exist), the
//! new bytes are trusted in the same step; when it held loosening the user never reviewed, the
//! entry is written but the file stays untrusted — trusting it would also trust what someone else
//! put there.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

use crate::config::{self, PROJECT_FILE};
use crate::rules::Layer;
use crate::rules::compile;
use crate::trust::{Store, TrustState};

/// What `add` did.
pub struct Added {
    pub file: PathBuf,
    /// How many entries were new (an identical entry is not written twice).
    pub new_entries: usize,
    /// Whether the file is trusted after the write (so the entries take effect).
    pub trusted: bool,
}

const HEADER: &str = "# cmdguard rules for this project: see `cmdguard rules path` and docs/rules.md.\n\
# Allow entries (and disables) here apply only while you trust this exact file: `cmdguard trust`.\n";

/// Appends one allow entry per text in `commands` to the project's rules file.
pub fn add(cwd: &Path, commands: &[String], note: &str) -> Result<Added> {
    let file = config::find_project_file(cwd).unwrap_or_else(|| config::project_root(cwd).join(PROJECT_FILE));
    // A link could point anywhere, your own rules.toml included, where an allow entry would be
    // trusted by location and apply to every project.
    if std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink()) {
        bail!(
            "{} is a symbolic link; cmdguard writes allow entries only into a regular file in the project",
            file.display()
        );
    }
    let mut store = Store::open()?;
    let old_text = config::read_rules_file(&file)?;
    let carry = match &old_text {
        None => true,
        Some(text) => {
            // The same test loading applies: does the file loosen what the trusted layers set?
            let items = compile::parse_file(&file.display().to_string(), text, Layer::Project)?;
            let loosens = !config::loosening(&items, &config::trusted_settings()?).is_empty();
            !loosens || store.state(&file, text.as_bytes()) == TrustState::Trusted
        }
    };
    let mut doc: DocumentMut = match &old_text {
        Some(text) => text.parse().with_context(|| format!("cannot edit {}", file.display()))?,
        None => HEADER.parse().expect("the header is valid TOML"),
    };
    let new_entries = append_entries(&mut doc, commands, note)
        .with_context(|| format!("cannot add an allow entry to {}", file.display()))?;
    let new_text = doc.to_string();
    // What is written must load: check it the way every later run will.
    compile::parse_file(&file.display().to_string(), &new_text, Layer::Project)?;
    if new_entries > 0 {
        store.replace_file(&file, new_text.as_bytes(), carry)?;
    }
    let trusted = carry || store.state(&file, new_text.as_bytes()) == TrustState::Trusted;
    Ok(Added { file, new_entries, trusted })
}

fn append_entries(doc: &mut DocumentMut, commands: &[String], note: &str) -> Result<usize> {
    let item = doc.entry("allow").or_insert(Item::ArrayOfTables(ArrayOfTables::new()));
    let existing = |item: &Item, c: &str| -> bool {
        match item {
            Item::ArrayOfTables(a) => a.iter().any(|t| t.get("command").and_then(|v| v.as_str()) == Some(c)),
            Item::Value(v) => v.as_array().is_some_and(|a| {
                a.iter().any(|e| e.as_inline_table().and_then(|t| t.get("command")).and_then(|v| v.as_str()) == Some(c))
            }),
            _ => false,
        }
    };
    let mut n = 0;
    for c in commands {
        if existing(item, c) {
            continue;
        }
        match item {
            Item::ArrayOfTables(a) => {
                let mut t = Table::new();
                t.insert("command", value(c.as_str()));
                t.decor_mut().set_prefix(format!("\n# {}\n", note.replace(['\n', '\r'], " ")));
                a.push(t);
            }
            Item::Value(v) if v.is_array() => {
                let mut t = toml_edit::InlineTable::new();
                t.insert("command", c.as_str().into());
                v.as_array_mut().expect("checked above").push(t);
            }
            _ => bail!("`allow` in this file is not a list of entries"),
        }
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_comments_and_are_not_repeated() {
        let text = "# keep me\ndisable = [] # and me\n\n[[rule]]\nid = \"deploy.prod\" # mine\naction = \"ask\"\npattern = 'make deploy'\nreason = \"deploys\"\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        assert_eq!(append_entries(&mut doc, &["git push --force".into()], "added by a test").unwrap(), 1);
        assert_eq!(append_entries(&mut doc, &["git push --force".into()], "again").unwrap(), 0);
        let out = doc.to_string();
        assert!(out.starts_with(text), "{out}");
        assert!(out.contains("# added by a test\n[[allow]]\ncommand = \"git push --force\"\n"), "{out}");
        compile::parse_file("t", &out, Layer::Project).unwrap();

        let mut inline: DocumentMut = "allow = [{ command = \"a\" }]\n".parse().unwrap();
        append_entries(&mut inline, &["b \"quoted\"".into()], "x").unwrap();
        let items = compile::parse_file("t", &inline.to_string(), Layer::Project).unwrap();
        assert_eq!(items.allows.len(), 2);
        assert_eq!(items.allows[1].command.as_deref(), Some("b \"quoted\""));
    }
}
