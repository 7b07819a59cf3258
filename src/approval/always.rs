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

use crate::approval::trust::{Store, TrustState};
use crate::config::{self, PROJECT_FILE};
use crate::rules::Layer;
use crate::rules::compile;

/// One allow entry to write: a unit's text and the place it runs at (empty: top level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub command: String,
    pub place: String,
}

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

/// Appends one top-level allow entry per text in `commands` to the project's rules file.
pub fn add(cwd: &Path, commands: &[String], note: &str) -> Result<Added> {
    let entries: Vec<Entry> = commands.iter().map(|c| Entry { command: c.clone(), place: String::new() }).collect();
    add_entries(cwd, &entries, note)
}

/// Appends `entries` to the project's rules file, each with the `context` it was answered in.
pub fn add_entries(cwd: &Path, commands: &[Entry], note: &str) -> Result<Added> {
    add_entries_in(&project_file(cwd), commands, note)
}

/// The project's rules file "always" writes to: the one in force, else a new one at the root.
pub fn project_file(cwd: &Path) -> std::path::PathBuf {
    config::find_project_file(cwd).unwrap_or_else(|| config::project_root(cwd).join(PROJECT_FILE))
}

/// `add_entries` into `file` (the project's rules file, or the user's own `rules.toml`, which
/// needs no trust: writing it carries trust along harmlessly).
pub fn add_entries_in(file: &Path, commands: &[Entry], note: &str) -> Result<Added> {
    let file = file.to_path_buf();
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
        // toml_edit keeps a comment-only document's comments at its end: the header is put
        // in front of the text instead.
        None => DocumentMut::new(),
    };
    let new_entries = append_entries(&mut doc, commands, note)
        .with_context(|| format!("cannot add an allow entry to {}", file.display()))?;
    let new_text = match old_text {
        Some(_) => doc.to_string(),
        None => with_header(&doc),
    };
    // What is written must load: check it the way every later run will.
    compile::parse_file(&file.display().to_string(), &new_text, Layer::Project)?;
    if new_entries > 0 {
        store.replace_file(&file, new_text.as_bytes(), carry)?;
    }
    let trusted = carry || store.state(&file, new_text.as_bytes()) == TrustState::Trusted;
    Ok(Added { file, new_entries, trusted })
}

/// A new file's text: the header, then the entries.
fn with_header(doc: &DocumentMut) -> String {
    format!("{HEADER}\n{}", doc.to_string().trim_start())
}

fn append_entries(doc: &mut DocumentMut, entries: &[Entry], note: &str) -> Result<usize> {
    let item = doc.entry("allow").or_insert(Item::ArrayOfTables(ArrayOfTables::new()));
    // The same command at the same place is one entry; at another place it is another.
    let same = |command: Option<&str>, context: Option<&str>, e: &Entry| {
        command == Some(e.command.as_str()) && context.unwrap_or("top") == context_of(e).unwrap_or("top")
    };
    let existing = |item: &Item, e: &Entry| -> bool {
        match item {
            Item::ArrayOfTables(a) => a
                .iter()
                .any(|t| same(t.get("command").and_then(|v| v.as_str()), t.get("context").and_then(|v| v.as_str()), e)),
            Item::Value(v) => v.as_array().is_some_and(|a| {
                a.iter().filter_map(|x| x.as_inline_table()).any(|t| {
                    same(t.get("command").and_then(|v| v.as_str()), t.get("context").and_then(|v| v.as_str()), e)
                })
            }),
            _ => false,
        }
    };
    let mut n = 0;
    for e in entries {
        if existing(item, e) {
            continue;
        }
        match item {
            Item::ArrayOfTables(a) => {
                let mut t = Table::new();
                t.insert("command", value(e.command.as_str()));
                if let Some(c) = context_of(e) {
                    t.insert("context", value(c));
                }
                t.decor_mut().set_prefix(format!("\n# {}\n", note.replace(['\n', '\r'], " ")));
                a.push(t);
            }
            Item::Value(v) if v.is_array() => {
                let mut t = toml_edit::InlineTable::new();
                t.insert("command", e.command.as_str().into());
                if let Some(c) = context_of(e) {
                    t.insert("context", c.into());
                }
                v.as_array_mut().expect("checked above").push(t);
            }
            _ => bail!("`allow` in this file is not a list of entries"),
        }
        n += 1;
    }
    Ok(n)
}

/// The `context` an entry is written with: none at top level (the default).
fn context_of(e: &Entry) -> Option<&str> {
    (!e.place.is_empty()).then_some(e.place.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_starts_with_its_header() {
        let mut doc = DocumentMut::new();
        let e = Entry { command: "make deploy".into(), place: String::new() };
        append_entries(&mut doc, &[e], "Added by cmdguard.").unwrap();
        let text = with_header(&doc);
        compile::parse_file("f", &text, Layer::Project).unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert!(text.find("[[allow]]").unwrap() > HEADER.len() - 1, "{text}");
    }

    #[test]
    fn entries_keep_comments_and_are_not_repeated() {
        let text = "# keep me\ndisable = [] # and me\n\n[[rule]]\nid = \"deploy.prod\" # mine\naction = \"ask\"\npattern = 'make deploy'\nreason = \"deploys\"\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        let top = |c: &str| Entry { command: c.into(), place: String::new() };
        assert_eq!(append_entries(&mut doc, &[top("git push --force")], "added by a test").unwrap(), 1);
        assert_eq!(append_entries(&mut doc, &[top("git push --force")], "again").unwrap(), 0);
        let remote = Entry { command: "git push --force".into(), place: "ssh prod".into() };
        assert_eq!(
            append_entries(&mut doc, std::slice::from_ref(&remote), "remote").unwrap(),
            1,
            "another place, another entry"
        );
        assert_eq!(append_entries(&mut doc, &[remote], "again").unwrap(), 0);
        let out = doc.to_string();
        assert!(out.starts_with(text), "{out}");
        assert!(out.contains("# added by a test\n[[allow]]\ncommand = \"git push --force\"\n"), "{out}");
        assert!(out.contains("command = \"git push --force\"\ncontext = \"ssh prod\"\n"), "{out}");
        compile::parse_file("t", &out, Layer::Project).unwrap();

        let mut inline: DocumentMut = "allow = [{ command = \"a\" }]\n".parse().unwrap();
        append_entries(&mut inline, &[top("b \"quoted\"")], "x").unwrap();
        let items = compile::parse_file("t", &inline.to_string(), Layer::Project).unwrap();
        assert_eq!(items.allows.len(), 2);
        assert_eq!(items.allows[1].command.as_deref(), Some("b \"quoted\""));
    }
}
