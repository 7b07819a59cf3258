//! Where rules files live and how they layer: built-in packs ⊕ `/etc/cmdguard/rules.toml` ⊕ the
//! user's `rules.toml` ⊕ the nearest `.cmdguard.toml` walking up ⊕ `--rules FILE`. The result is
//! one `Policy`. Any error here is a configuration error: the command does not run (exit 78).

use std::path::{Path, PathBuf};

use crate::rules::compile::{self, FileItems};
use crate::rules::{Layer, Policy, Rule, Settings, Source};

pub const PROJECT_FILE: &str = ".cmdguard.toml";
pub const SYSTEM_FILE: &str = "/etc/cmdguard/rules.toml";

/// A broken configuration; main maps it to exit 78.
#[derive(Debug)]
pub struct ConfigError(String);

impl ConfigError {
    pub fn new(message: impl Into<String>) -> ConfigError {
        ConfigError(message.into())
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The user's config directory (`~/.config/cmdguard` on Linux).
pub fn user_config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "cmdguard").map(|d| d.config_dir().to_path_buf())
}

/// The nearest `.cmdguard.toml` in `cwd` or a parent.
pub fn find_project_file(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().map(|d| d.join(PROJECT_FILE)).find(|p| p.is_file())
}

/// The rules files to read, lowest layer first.
pub fn source_paths(cwd: &Path, extra: &[PathBuf]) -> Vec<(Layer, PathBuf)> {
    let mut out = vec![(Layer::System, PathBuf::from(SYSTEM_FILE))];
    if let Some(dir) = user_config_dir() {
        out.push((Layer::User, dir.join("rules.toml")));
    }
    match find_project_file(cwd) {
        Some(p) => out.push((Layer::Project, p)),
        None => out.push((Layer::Project, cwd.join(PROJECT_FILE))),
    }
    out.extend(extra.iter().map(|p| (Layer::Cli, p.clone())));
    out
}

/// Loads every layer into one policy.
pub fn load(cwd: &Path, extra: &[PathBuf]) -> Result<Policy, ConfigError> {
    let mut rules = compile::builtin_rules();
    let mut allows = Vec::new();
    let mut settings = Settings::default();
    let mut sources = vec![Source { layer: Layer::Builtin, path: "rules/*.toml (compiled in)".into(), loaded: true }];
    let mut disables = Vec::new();
    for (layer, path) in source_paths(cwd, extra) {
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && layer != Layer::Cli => {
                sources.push(Source { layer, path: shown, loaded: false });
                continue;
            }
            Err(e) => {
                return Err(ConfigError::new(format!("rules file {shown}: cannot read it: {e}")));
            }
        };
        let items: FileItems = compile::parse_file(&shown, &text, layer)?;
        if let Some(shell) = items.settings.and_then(|s| s.shell) {
            // The shell decides what `-c STRING` means; cmdguard analyses the text as POSIX shell.
            // A project file (which an agent can edit) must not swap in another interpreter.
            if layer == Layer::Project {
                return Err(ConfigError::new(format!(
                    "rules file {shown}: `shell` may be set only in your own rules.toml or {SYSTEM_FILE}, not in a project's {PROJECT_FILE}; move it there"
                )));
            }
            settings.shell = Some(shell);
        }
        for d in items.disable {
            disables.push((d, shown.clone()));
        }
        rules.extend(items.rules);
        allows.extend(items.allows);
        sources.push(Source { layer, path: shown, loaded: true });
    }
    check_unique(&rules)?;
    apply_disables(&mut rules, &disables)?;
    Ok(Policy::new(rules, allows, settings, sources))
}

fn check_unique(rules: &[Rule]) -> Result<(), ConfigError> {
    // Built-in ids are unique (build.rs checks); only rules from files can clash.
    for (i, r) in rules.iter().enumerate().filter(|(_, r)| r.origin.layer != Layer::Builtin) {
        if let Some(first) = rules[..i].iter().find(|other| other.id == r.id) {
            return Err(ConfigError::new(format!(
                "rules file {}, line {}: rule {:?} is already defined at {}; choose another id, or disable that rule and write your own",
                r.origin.file, r.origin.line, r.id, first.origin
            )));
        }
    }
    Ok(())
}

/// Whether `disable = [name]` in `file` names rule `r`: built-in rules and packs, or rules of
/// the same file. Rules written in other files are restrictions someone chose and always apply.
fn disables(r: &Rule, name: &str, file: &str) -> bool {
    (r.origin.layer == Layer::Builtin || r.origin.file == file) && (r.id == name || r.pack() == name)
}

fn apply_disables(rules: &mut Vec<Rule>, entries: &[((String, usize, usize), String)]) -> Result<(), ConfigError> {
    // Every name is checked against all rules first, so two files may disable the same rule.
    for ((name, line, col), file) in entries {
        if !rules.iter().any(|r| disables(r, name, file)) {
            return Err(ConfigError::new(format!(
                "rules file {file}, line {line}, column {col}: `disable` names {name:?}, which is no built-in rule or pack; see `cmdguard rules list`"
            )));
        }
    }
    if !entries.is_empty() {
        rules.retain(|r| !entries.iter().any(|((name, ..), file)| disables(r, name, file)));
    }
    Ok(())
}
