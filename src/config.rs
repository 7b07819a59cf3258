//! Where rules files live and how they layer: built-in packs ⊕ `/etc/cmdguard/rules.toml` ⊕ the
//! user's `rules.toml` ⊕ every `.cmdguard.toml` from the outermost directory above the working
//! directory down to it ⊕ `--rules FILE`. The result is one `Policy`. Any error here is a
//! configuration error: the command does not run (exit 78).

use std::path::{Path, PathBuf};

use crate::approval::trust::TrustState;
use crate::rules::cache::Cache;
use crate::rules::compile::{self, FileItems};
use crate::rules::{AllowContext, Layer, Policy, Rule, Settings, Source};
use crate::state::human_duration;

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

/// The nearest `.cmdguard.toml` in `cwd` or a parent: the file `trust` and "always" act on.
pub fn find_project_file(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors().map(|d| d.join(PROJECT_FILE)).find(|p| p.is_file())
}

/// Every `.cmdguard.toml` in `cwd` and the directories above it, outermost first: each adds its
/// restrictions, so a file nearer the working directory can add rules but never hide the ones
/// above it. Anything by that name counts, whatever it is (a directory, a FIFO, a dangling link):
/// loading then fails on it rather than skipping it.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        cwd.ancestors().map(|d| d.join(PROJECT_FILE)).filter(|p| std::fs::symlink_metadata(p).is_ok()).collect();
    files.reverse();
    files
}

/// The project a working directory belongs to: the nearest directory, walking up, that holds a
/// `.cmdguard.toml` or a `.git`; else the working directory itself. Session grants are bound to
/// it, and "always" creates its `.cmdguard.toml` there.
pub fn project_root(cwd: &Path) -> PathBuf {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    cwd.ancestors()
        .find(|d| d.join(PROJECT_FILE).is_file() || d.join(".git").exists())
        .map_or_else(|| cwd.clone(), Path::to_path_buf)
}

/// Shells whose language cmdguard's analysis reads (POSIX sh and its close relatives).
pub const POSIX_SHELLS: &[&str] =
    &["sh", "bash", "dash", "ash", "ksh", "ksh93", "mksh", "pdksh", "zsh", "yash", "posh"];

/// Whether `path` is a shell cmdguard can analyse for: its name, and the name of the file it
/// resolves to, must both be a POSIX-family shell (a link named `bash` that points to an
/// interpreter of another language is refused).
pub fn check_shell(path: &Path) -> Result<(), String> {
    let named = |p: &Path| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| POSIX_SHELLS.contains(&n));
    let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    // /bin/sh is commonly a link to busybox, which runs as sh under that name.
    let busybox_sh = resolved.file_name().is_some_and(|n| n == "busybox") && named(path);
    if named(path) && (named(&resolved) || busybox_sh) {
        Ok(())
    } else {
        Err(format!("cmdguard reads commands as POSIX shell, so the shell must be one of {}", POSIX_SHELLS.join(", ")))
    }
}

/// The rules files to read, lowest layer first.
pub fn source_paths(cwd: &Path, extra: &[PathBuf]) -> Vec<(Layer, PathBuf)> {
    let mut out = vec![(Layer::System, PathBuf::from(SYSTEM_FILE))];
    if let Some(dir) = user_config_dir() {
        out.push((Layer::User, dir.join("rules.toml")));
    }
    match project_files(cwd) {
        files if files.is_empty() => out.push((Layer::Project, cwd.join(PROJECT_FILE))),
        files => out.extend(files.into_iter().map(|p| (Layer::Project, p))),
    }
    out.extend(extra.iter().map(|p| (Layer::Cli, p.clone())));
    out
}

/// Loads every layer into one policy. A file whose exact bytes loaded before comes from the
/// rules cache (`rules::cache`), checked then; the checks across files run on every load.
pub fn load(cwd: &Path, extra: &[PathBuf]) -> Result<Policy, ConfigError> {
    let mut rules = compile::builtin_rules();
    let mut allows = Vec::new();
    let mut contexts_in_force = Vec::new();
    let mut settings = Settings::default();
    let mut sources = vec![Source::new(Layer::Builtin, "rules/*.toml (compiled in)".into(), true)];
    let mut disables = Vec::new();
    let mut notices = Vec::new();
    let mut cache = None;
    let mut programs = Vec::new();
    for (layer, path) in source_paths(cwd, extra) {
        let shown = path.display().to_string();
        let text = match read_rules_file(&path)? {
            Some(t) => t,
            None if layer != Layer::Cli => {
                sources.push(Source::new(layer, shown, false));
                continue;
            }
            None => return Err(ConfigError::new(format!("rules file {shown}: cannot read it: it does not exist"))),
        };
        if layer == Layer::Project && text.trim().is_empty() {
            // An empty file is a mistake or a placeholder someone meant to fill: say so, rather
            // than let it stand for rules that are not there.
            return Err(ConfigError::new(format!(
                "rules file {shown}: the file is empty; write rules in it (see `cmdguard init`) or delete it"
            )));
        }
        let mut items: FileItems = cache.get_or_insert_with(Cache::open).load(&shown, &text, layer)?;
        let mut contexts = std::mem::take(&mut items.contexts);
        if let Some(sh) = &items.settings.shell {
            // The shell decides what `-c STRING` means; cmdguard analyses the text as POSIX shell.
            // A project file or a --rules file (which an agent can write or name) must not swap
            // in another interpreter, and no file may name one outside the shell family.
            if layer.needs_trust() {
                return Err(ConfigError::new(format!(
                    "rules file {shown}: `shell` may be set only in your own rules.toml or {SYSTEM_FILE}, not in a project's {PROJECT_FILE} or a --rules file; move it there"
                )));
            }
            if let Err(why) = check_shell(Path::new(sh)) {
                return Err(ConfigError::new(format!("rules file {shown}: `shell = {sh:?}`: {why}")));
            }
        }
        // Trial mode stops enforcing everything: a file an agent can write or name must not.
        if items.settings.mode == Some(crate::rules::compile::Mode::Audit) && layer.needs_trust() {
            return Err(ConfigError::new(format!(
                "rules file {shown}: `mode = \"audit\"` may be set only in your own rules.toml or {SYSTEM_FILE}, not in a project's {PROJECT_FILE} or a --rules file; move it there, or use --audit for one call"
            )));
        }
        // Disable names are checked whether or not they apply: a typo is a broken file.
        check_disables(&rules, &items.rules, &items.disable, &shown)?;
        let mut source = Source::new(layer, shown.clone(), true);
        let loosens = if layer.needs_trust() { loosening(&items, &settings) } else { Vec::new() };
        if !loosens.is_empty() {
            // Records that cannot be read trust nothing (fail closed), and say so once.
            let state = crate::approval::trust::lookup(&path, text.as_bytes()).unwrap_or_else(|e| {
                let damaged = format!("{e:#}");
                if !notices.contains(&damaged) {
                    notices.push(damaged);
                }
                TrustState::Never
            });
            source.trust = Some(state);
            if state != TrustState::Trusted {
                notices.push(untrusted_notice(&path, state, loosens.len()));
                items.allows.clear();
                contexts.clear();
                items.disable.clear();
                items.programs.clear();
                items.settings.timeout = items.settings.timeout.map(|t| t.min(settings.timeout));
                items.settings.session_ttl = items.settings.session_ttl.map(|t| t.min(settings.session_ttl));
                items.settings.code_ttl = items.settings.code_ttl.map(|t| t.min(settings.code_ttl));
                items.settings.notify_command = None;
                // Less kept for undo is less safety: an untrusted file may raise these only.
                items.settings.recovery_limit = items.settings.recovery_limit.map(|n| n.max(settings.recovery_limit));
                items.settings.recovery_ttl = items.settings.recovery_ttl.map(|t| t.max(settings.recovery_ttl));
            }
        }
        settings.apply(&items.settings);
        for d in items.disable {
            disables.push((d, shown.clone()));
        }
        programs.extend(items.programs.into_iter().map(|(text, _)| (text, shown.clone())));
        rules.extend(items.rules);
        contexts.resize(items.allows.len(), AllowContext::Top);
        contexts_in_force.extend(contexts);
        allows.extend(items.allows);
        sources.push(source);
    }
    check_unique(&rules)?;
    apply_disables(&mut rules, &disables);
    crate::shell::add_programs(&programs);
    let mut policy = Policy::new(rules, allows, settings, sources);
    policy.notices = notices;
    policy.allow_contexts = contexts_in_force;
    Ok(policy)
}

/// A rules file's text, or `None` if there is none. It is opened without blocking and must be a
/// regular file: a FIFO, a directory or a device named like a rules file is a broken
/// configuration, not a hang or a skip; so is a symbolic link to nothing. (One open and one
/// fstat on every start; a stat only when the open finds nothing.)
pub fn read_rules_file(path: &Path) -> Result<Option<String>, ConfigError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let shown = || path.display().to_string();
    let cannot = |e: std::io::Error| ConfigError::new(format!("rules file {}: cannot read it: {e}", shown()));
    let file = match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match std::fs::read_link(path) {
                Ok(to) => Err(ConfigError::new(format!(
                    "rules file {}: it is a symbolic link to {}, which does not exist; fix the link or delete it",
                    shown(),
                    to.display()
                ))),
                Err(_) => Ok(None),
            };
        }
        Err(e) => return Err(cannot(e)),
    };
    if !file.metadata().map_err(cannot)?.is_file() {
        return Err(ConfigError::new(format!(
            "rules file {}: not a regular file (a directory, FIFO or device); remove it or put rules in a file there",
            shown()
        )));
    }
    // Read at most one byte past the limit, so that parsing reports an oversized file.
    let mut text = String::new();
    file.take(compile::MAX_FILE_BYTES as u64 + 1).read_to_string(&mut text).map_err(cannot)?;
    Ok(Some(text))
}

/// The settings of the layers trusted by location (built-in defaults, the admin's file, the
/// user's): what a project file's settings are measured against.
pub fn trusted_settings() -> Result<Settings, ConfigError> {
    let mut settings = Settings::default();
    let mut paths = vec![PathBuf::from(SYSTEM_FILE)];
    paths.extend(user_config_dir().map(|d| d.join("rules.toml")));
    for path in paths {
        if let Some(text) = read_rules_file(&path)? {
            settings.apply(&compile::parse_file(&path.display().to_string(), &text, Layer::User)?.settings);
        }
    }
    Ok(settings)
}

/// What a file loosens, one line per item, given the settings of the layers below it.
pub fn loosening(items: &FileItems, below: &Settings) -> Vec<String> {
    loosening_at(items, &[], below)
}

/// `loosening`, with where each allow entry applies (`contexts`, by index) shown for review.
pub fn loosening_at(items: &FileItems, contexts: &[AllowContext], below: &Settings) -> Vec<String> {
    let mut out = Vec::new();
    for (i, a) in items.allows.iter().enumerate() {
        let context = contexts.get(i).and_then(AllowContext::written).map(|c| format!(" (context = {c:?})"));
        out.push(format!("line {}: allow {}{}", a.origin.line, a.describe(), context.unwrap_or_default()));
    }
    for (name, line, _) in &items.disable {
        out.push(format!("line {line}: disable {name:?}"));
    }
    // An entry can make a program's words data, or move where a wrapper's command starts.
    for (text, line) in &items.programs {
        let names = crate::shell::program_names(text);
        out.push(format!("line {line}: [[program]] {names}"));
    }
    if let Some(t) = items.settings.timeout.filter(|t| *t > below.timeout) {
        out.push(format!(
            "timeout = {} (longer than the {} in force)",
            human_duration(t),
            human_duration(below.timeout)
        ));
    }
    if let Some(t) = items.settings.session_ttl.filter(|t| *t > below.session_ttl) {
        out.push(format!(
            "session_ttl = {} (longer than the {} in force)",
            human_duration(t),
            human_duration(below.session_ttl)
        ));
    }
    if let Some(t) = items.settings.code_ttl.filter(|t| *t > below.code_ttl) {
        out.push(format!(
            "approval_code_ttl = {} (longer than the {} in force)",
            human_duration(t),
            human_duration(below.code_ttl)
        ));
    }
    if let Some(n) = items.settings.recovery_limit.filter(|n| *n < below.recovery_limit) {
        out.push(match n {
            0 => "recovery_limit = 0 (no recovery points)".to_string(),
            n => format!(
                "recovery_limit = {} (less than the {} in force)",
                crate::state::human_size(n),
                crate::state::human_size(below.recovery_limit)
            ),
        });
    }
    if let Some(t) = items.settings.recovery_ttl.filter(|t| *t < below.recovery_ttl) {
        out.push(format!(
            "recovery_ttl = {} (shorter than the {} in force)",
            human_duration(t),
            human_duration(below.recovery_ttl)
        ));
    }
    // A program cmdguard itself runs, outside any guard.
    if let Some(c) = &items.settings.notify_command {
        out.push(format!("notify_command = {:?} (a program cmdguard runs unguarded)", crate::term::escape(c)));
    }
    out
}

/// The one line every prompt and `check` shows for a file whose loosening is ignored.
fn untrusted_notice(path: &Path, state: TrustState, entries: usize) -> String {
    let shown = crate::term::escape(&path.display().to_string());
    let what = match entries {
        1 => "1 entry".to_string(),
        n => format!("{n} entries"),
    };
    let why = if state == TrustState::Changed { "changed since you trusted it" } else { "is not trusted" };
    format!("{shown} {why}, so its loosening ({what}) is ignored; review it with `cmdguard trust {shown}`")
}

fn check_unique(rules: &[Rule]) -> Result<(), ConfigError> {
    // Built-in ids are unique (build.rs checks); only rules from files can clash. One map of ids
    // seen so far: a scan of the earlier rules per rule made loading quadratic.
    // Most starts have no file rules: then there is nothing to check, and no map is built.
    if rules.iter().all(|r| r.origin.layer == Layer::Builtin) {
        return Ok(());
    }
    let mut first_of = std::collections::HashMap::with_capacity(rules.len());
    for r in rules {
        let first = *first_of.entry(r.id.as_ref()).or_insert(r);
        if !std::ptr::eq(first, r) && r.origin.layer != Layer::Builtin {
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

fn check_disables(
    below: &[Rule],
    own: &[Rule],
    entries: &[(String, usize, usize)],
    file: &str,
) -> Result<(), ConfigError> {
    for (name, line, col) in entries {
        if !below.iter().chain(own).any(|r| disables(r, name, file)) {
            return Err(ConfigError::new(format!(
                "rules file {file}, line {line}, column {col}: `disable` names {name:?}, which is no built-in rule or pack; see `cmdguard rules list`"
            )));
        }
    }
    Ok(())
}

fn apply_disables(rules: &mut Vec<Rule>, entries: &[((String, usize, usize), String)]) {
    if !entries.is_empty() {
        rules.retain(|r| !entries.iter().any(|((name, ..), file)| disables(r, name, file)));
    }
}
