//! The hosts whose hook is a file of cmdguard's own rather than an entry in a settings file:
//! OpenCode's plugin and Cline's `PreToolUse` script, as `cmdguard hook install` writes them.
//! Hooked means the file runs `cmdguard hook HOST` with a program that exists (and, for Cline,
//! the script is executable).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::hosts::tilde;
use super::{Check, Status};

pub fn opencode(project: &Path, home: &Path) -> Check {
    let config = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => home.join(".config"),
    };
    let (user, proj) = (config.join("opencode"), project.join(".opencode"));
    let files = [user.join("plugins/cmdguard.js"), proj.join("plugins/cmdguard.js")];
    check("opencode", &files, &[user, proj, project.join("opencode.json")], home)
}

pub fn cline(project: &Path, home: &Path) -> Check {
    let (user, proj) = (home.join("Documents/Cline"), project.join(".clinerules"));
    let files = [user.join("Hooks/PreToolUse"), proj.join("hooks/PreToolUse")];
    check("cline", &files, &[user, proj], home)
}

fn check(name: &'static str, files: &[PathBuf], signs: &[PathBuf], home: &Path) -> Check {
    let (mut hooked, mut problems) = (Vec::new(), Vec::new());
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else { continue };
        let shown = tilde(file, home);
        match judge(name, file, &text, home) {
            Ok(()) => hooked.push(shown),
            Err(why) => problems.push(format!("{shown}: {why}")),
        }
    }
    let install = format!("run `cmdguard hook install {name}` (see docs/integrations.md)");
    if !problems.is_empty() {
        return Check::new(name, Status::Warn, problems.join("; ")).hint(install);
    }
    if !hooked.is_empty() {
        return Check::new(name, Status::Ok, format!("hooked in {}", hooked.join(", ")));
    }
    let looked = files.iter().map(|f| tilde(f, home)).collect::<Vec<_>>().join(", ");
    match signs.iter().find(|s| s.exists()) {
        Some(sign) => {
            Check::new(name, Status::Warn, format!("present ({}) but not hooked: no {looked}", tilde(sign, home)))
                .hint(install)
        }
        None => Check::new(name, Status::Info, format!("not found (looked for {looked})")),
    }
}

/// Whether the file runs `cmdguard hook NAME` through a program that exists.
fn judge(name: &str, file: &Path, text: &str, home: &Path) -> Result<(), String> {
    let words: Vec<&str> =
        text.split(|c: char| c.is_whitespace() || c == ';' || c == '"').map(|w| w.trim_matches('\'')).collect();
    let program = words
        .iter()
        .position(|w| w.starts_with('/') && Path::new(w).file_name().is_some_and(|n| n == "cmdguard"))
        .map(|at| words[at]);
    let runs = text.contains(&format!("\"hook\", \"{name}\"")) || text.contains(&format!("hook {name}"));
    if !runs {
        return Err(format!("does not run `cmdguard hook {name}`"));
    }
    if let Some(program) = program.filter(|p| !super::hosts::expand(p, home).is_file()) {
        return Err(format!("runs {program}, which does not exist"));
    }
    if name == "cline" && std::fs::metadata(file).is_ok_and(|m| m.permissions().mode() & 0o111 == 0) {
        return Err("is not executable, so Cline does not run it".into());
    }
    Ok(())
}
