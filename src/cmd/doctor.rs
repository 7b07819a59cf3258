//! `cmdguard doctor`: checks the installation end to end and says what to fix. One line per check
//! (ok, info, warn or fail) with a hint; exit 1 when a check fails, else 0. `--json` gives the
//! same checks as one JSON object. Doctor writes nothing of its own: it reads files and runs this
//! binary's hook on two sample calls. Loading the rules (here and in the probe) may create the
//! state directory or make it 0700, as every cmdguard run does, so that directory is checked first.

mod hook_files;
mod hosts;
mod probe;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use crate::approval::trust::TrustState;
use crate::cli::{Global, NoTty};
use crate::config::{self, PROJECT_FILE};
use crate::rules::{Layer, Policy, compile};
use crate::term::escape;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Worth knowing, nothing to fix.
    Info,
    /// Works, but weaker than it could be.
    Warn,
    /// Broken: cmdguard does not guard what it should.
    Fail,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Info => "info",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub message: String,
    pub hint: Option<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, message: impl Into<String>) -> Check {
        Check { name, status, message: message.into(), hint: None }
    }

    fn hint(mut self, hint: impl Into<String>) -> Check {
        self.hint = Some(hint.into());
        self
    }
}

pub fn run(global: &Global) -> Result<u8> {
    let cwd = super::cwd()?;
    // The state directory first: loading rules or trust records creates it, and makes it 0700.
    let mut checks = vec![binary(), state_dir()];
    let policy = match config::load(&cwd, &global.rules) {
        Ok(policy) => {
            checks.push(rules_loaded(&policy));
            Some(policy)
        }
        Err(e) => {
            checks.push(Check::new("rules", Status::Fail, e.to_string()).hint(
                "fix the file at the line named; until then every command is refused (exit 78) and hooks block every call",
            ));
            None
        }
    };
    checks.push(project_trust(&cwd));
    checks.push(terminal(global, policy.as_ref()));
    checks.extend(hosts::checks(&config::project_root(&cwd)));
    checks.push(probe::run(global, &cwd));
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    if global.json {
        println!("{}", serde_json::json!({"ok": failed == 0, "checks": checks}));
    } else {
        print!("{}", human(&checks));
    }
    Ok(if failed == 0 { 0 } else { 1 })
}

fn human(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        out.push_str(&format!("{:<5} {}: {}\n", c.status.name(), c.name, escape(&c.message)));
        if let Some(h) = &c.hint {
            let label = if matches!(c.status, Status::Warn | Status::Fail) { "fix" } else { "note" };
            out.push_str(&format!("      {label}: {}\n", escape(h)));
        }
    }
    let count = |s| checks.iter().filter(|c| c.status == s).count();
    out.push_str(&match (count(Status::Fail), count(Status::Warn)) {
        (0, 0) => "nothing to fix\n".to_string(),
        (0, w) => format!("nothing failed; {w} warning{}\n", if w == 1 { "" } else { "s" }),
        (f, w) => {
            format!("{f} check{} failed, {w} warning{}\n", if f == 1 { "" } else { "s" }, if w == 1 { "" } else { "s" })
        }
    });
    out
}

/// Which `cmdguard` the PATH finds, and whether it is this binary.
fn binary() -> Check {
    let exe = std::env::current_exe();
    let shown_exe = exe.as_ref().map_or_else(|e| format!("(unknown: {e})"), |p| p.display().to_string());
    match on_path("cmdguard") {
        None => Check::new(
            "binary",
            Status::Fail,
            "no `cmdguard` on PATH: hooks and harnesses that run `cmdguard` cannot start it, and a host whose hook cannot start runs the call",
        )
        .hint(format!("put the directory of {shown_exe} on PATH, or install with `cargo install --locked --path .`")),
        Some(found) if exe.as_ref().is_ok_and(|exe| same_file(&found, exe)) => {
            Check::new("binary", Status::Ok, format!("`cmdguard` on PATH is {}, this binary", found.display()))
        }
        Some(found) => Check::new(
            "binary",
            Status::Warn,
            format!("`cmdguard` on PATH is {}, not this binary ({shown_exe})", found.display()),
        )
        .hint(format!(
            "hooks run the one on PATH: check it with `{} doctor`, or put this one first on PATH",
            found.display()
        )),
    }
}

/// The first executable file `name` in a directory of PATH (an empty entry is the working directory).
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| if d.as_os_str().is_empty() { PathBuf::from(".") } else { d })
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether two paths lead to the same file (links included).
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The state directory: 0700, everything in it private, all of it the user's.
fn state_dir() -> Check {
    let dir = match crate::state::dir_path() {
        Ok(d) => d,
        Err(e) => return Check::new("state", Status::Fail, format!("{e:#}")).hint("set HOME"),
    };
    let shown = dir.display().to_string();
    let meta = match std::fs::metadata(&dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::new("state", Status::Info, format!("{shown} does not exist yet"))
                .hint("cmdguard creates it (0700) the first time it records something");
        }
        Err(e) => return Check::new("state", Status::Fail, format!("cannot read {shown}: {e}")),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !meta.is_dir() {
        return Check::new("state", Status::Fail, format!("{shown} is not a directory"))
            .hint(format!("move it away: cmdguard keeps its state in {shown}/"));
    }
    if meta.uid() != me {
        return Check::new("state", Status::Fail, format!("{shown} belongs to user {}, not you", meta.uid()))
            .hint(format!("remove it, or `chown -R {me} {shown}` as its owner"));
    }
    if meta.mode() & 0o777 != 0o700 {
        return Check::new(
            "state",
            Status::Fail,
            format!(
                "{shown} is {:o}, not 700: other users can read the session grants, trust records and audit log",
                meta.mode() & 0o777
            ),
        )
        .hint(format!("chmod 700 {shown}"));
    }
    let mut bad = Vec::new();
    let mut count = 0;
    inspect(&dir, me, 0, &mut count, &mut bad);
    if !bad.is_empty() {
        let more = if bad.len() > 3 { format!(" and {} more", bad.len() - 3) } else { String::new() };
        bad.truncate(3);
        return Check::new("state", Status::Fail, format!("in {shown}: {}{more}", bad.join(", ")))
            .hint(format!("chmod -R go-rwx {shown} (and remove what is not yours)"));
    }
    Check::new("state", Status::Ok, format!("{shown} is 700 and its {count} entries are private and yours"))
}

/// Entries below `dir` that are not private, not the user's, or links.
fn inspect(dir: &Path, me: u32, depth: usize, count: &mut usize, bad: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        bad.push(format!("{} cannot be read", dir.display()));
        return;
    };
    for entry in entries.flatten() {
        *count += 1;
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if meta.file_type().is_symlink() {
            bad.push(format!("{name} is a symbolic link"));
        } else if meta.uid() != me {
            bad.push(format!("{name} belongs to user {}", meta.uid()));
        } else if meta.mode() & 0o077 != 0 {
            bad.push(format!("{name} is {:o}", meta.mode() & 0o777));
        } else if meta.is_dir() && depth < 4 {
            inspect(&path, me, depth + 1, count, bad);
        }
    }
}

/// Rule counts per layer, and the allow entries in force.
fn rules_loaded(policy: &Policy) -> Check {
    let mut parts = Vec::new();
    for layer in [Layer::Builtin, Layer::System, Layer::User, Layer::Project, Layer::Cli] {
        let sources: Vec<_> = policy.sources.iter().filter(|s| s.layer == layer).collect();
        if sources.is_empty() && layer == Layer::Cli {
            continue;
        }
        let n = policy.rules.iter().filter(|r| r.origin.layer == layer).count();
        parts.push(if sources.iter().any(|s| s.loaded) {
            format!("{} {n}", layer.name())
        } else {
            format!("{} (no file)", layer.name())
        });
    }
    let allows = policy.allows.len();
    let allows = format!("; {allows} allow entr{} in force", if allows == 1 { "y" } else { "ies" });
    Check::new("rules", Status::Ok, format!("loaded: {}{allows}", parts.join(", ")))
}

/// Whether the project's file is trusted, and what that means for its loosening.
fn project_trust(cwd: &Path) -> Check {
    let Some(path) = config::find_project_file(cwd) else {
        return Check::new("trust", Status::Info, format!("no {PROJECT_FILE} in this directory or above"))
            .hint("`cmdguard init` writes one with rules for the project's deploy and publish commands");
    };
    let shown = path.display().to_string();
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) => return Check::new("trust", Status::Warn, format!("cannot read {shown}: {e}")),
    };
    let loosening = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| compile::parse_file(&shown, t, Layer::Project).ok())
        .map(|items| config::loosening(&items, &config::trusted_settings().unwrap_or_default()));
    let Some(loosening) = loosening else {
        return Check::new("trust", Status::Info, format!("{shown} does not load, so its trust was not checked"));
    };
    let state = match crate::approval::trust::lookup(&path, &text) {
        Ok(s) => s,
        Err(e) => return Check::new("trust", Status::Warn, format!("cannot read the trust records: {e:#}")),
    };
    let n = loosening.len();
    let entries = match n {
        1 => "1 loosening entry (allow, disable, longer timeouts) is".to_string(),
        n => format!("{n} loosening entries (allow, disable, longer timeouts) are"),
    };
    let fix = format!("review it, then trust it: cmdguard trust {shown}");
    match (state, n) {
        (TrustState::Trusted, _) => Check::new("trust", Status::Ok, format!("{shown} is trusted as it is")),
        (TrustState::Never, 0) => Check::new(
            "trust",
            Status::Ok,
            format!("{shown} is not trusted, but it loosens nothing, so all of it applies"),
        ),
        (TrustState::Changed, 0) => Check::new(
            "trust",
            Status::Ok,
            format!("{shown} changed since you trusted it, but it loosens nothing, so all of it applies"),
        ),
        (TrustState::Never, _) => {
            Check::new("trust", Status::Warn, format!("{shown} is not trusted: its {entries} ignored")).hint(fix)
        }
        (TrustState::Changed, _) => {
            Check::new("trust", Status::Warn, format!("{shown} changed since you trusted it: its {entries} ignored"))
                .hint(fix)
        }
    }
}

/// Whether a prompt can reach a person from here, and what happens to an ask when it cannot.
fn terminal(global: &Global, policy: Option<&Policy>) -> Check {
    let Err(crate::approval::prompt::NoTerminal(why)) = crate::approval::prompt::check_terminal() else {
        return Check::new("terminal", Status::Ok, "/dev/tty can be opened: asks are prompted there");
    };
    let no_tty = global.no_tty.or(policy.map(|p| p.settings.no_tty)).unwrap_or_default();
    match no_tty {
        NoTty::Wait => Check::new(
            "terminal",
            Status::Info,
            format!("{why}: a command that needs approval waits in the approval queue (no_tty = \"wait\")"),
        )
        .hint("approve or deny it from any terminal: cmdguard pending, cmdguard approve ID, cmdguard watch"),
        NoTty::Deny => Check::new(
            "terminal",
            Status::Warn,
            format!("{why}: a command that needs approval is refused (exit 77), as no_tty = \"deny\""),
        )
        .hint("run the agent from a terminal, or set no_tty = \"wait\" in your rules.toml and approve with `cmdguard approve`"),
    }
}
