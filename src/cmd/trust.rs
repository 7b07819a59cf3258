//! `cmdguard trust [FILE]` and `cmdguard untrust [FILE]`: the user reviews what a project's rules
//! file loosens and trusts its exact bytes, confirming on the terminal; or withdraws that trust.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use crate::approval::trust::{Store, TrustState};
use crate::cli::Global;
use crate::config;
use crate::rules::{Layer, compile};
use crate::term::escape;

use crate::exit::DECLINED;

fn target(file: Option<&Path>) -> Result<PathBuf> {
    match file {
        Some(f) => Ok(f.to_path_buf()),
        None => match config::find_project_file(&super::cwd()?) {
            Some(f) => Ok(f),
            None => Err(super::UsageError(format!(
                "no {} in this directory or above; name the file: cmdguard trust FILE",
                config::PROJECT_FILE
            ))
            .into()),
        },
    }
}

/// Which file `path` names now: the link itself and what it resolves to (device and inode), so a
/// file replaced by another one with the same bytes is noticed too.
fn identity(path: &Path) -> Option<(bool, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let link = std::fs::symlink_metadata(path).ok()?.file_type().is_symlink();
    let m = std::fs::metadata(path).ok()?;
    Some((link, m.dev(), m.ino()))
}

pub fn trust(_global: &Global, file: Option<&Path>) -> Result<u8> {
    let path = target(file)?;
    let shown = escape(&path.display().to_string());
    let seen = identity(&path);
    let Some(text) = config::read_rules_file(&path)? else { bail!("cannot read {shown}: it does not exist") };
    let items = compile::parse_file(&path.display().to_string(), &text, Layer::Project)?;
    let below = config::trusted_settings()?;
    let loosening = config::loosening_at(&items, &items.contexts, &below);
    let mut summary = format!("cmdguard trust: {shown}\n");
    if let Ok(to) = std::fs::read_link(&path) {
        summary.push_str(&format!(
            "  it is a symbolic link to {}; trust applies to it at this path only\n",
            escape(&to.display().to_string())
        ));
    }
    let restrictions = items.rules.len();
    if restrictions > 0 {
        summary.push_str(&format!(
            "  {restrictions} rule{} of its own (restrictions apply whether or not the file is trusted)\n",
            if restrictions == 1 { "" } else { "s" }
        ));
    }
    if loosening.is_empty() {
        summary.push_str("  it loosens nothing, so there is nothing to review; recorded as trusted\n");
        print!("{summary}");
        Store::open()?.trust(&path, text.as_bytes())?;
        return Ok(0);
    }
    let state = Store::open()?.state(&path, text.as_bytes());
    if state == TrustState::Trusted {
        summary.push_str("  already trusted as it is\n");
        print!("{summary}");
        return Ok(0);
    }
    if state == TrustState::Changed {
        match Store::open()?.trusted_content(&path) {
            Some(before) => {
                summary.push_str("  it changed since you trusted it:\n");
                for l in crate::approval::trusted_copy::diff(&before, &text, 40) {
                    summary.push_str(&format!("    {}\n", escape(&l)));
                }
            }
            None => summary.push_str("  it changed since you trusted it (the trusted bytes were not kept, so what changed cannot be shown)\n"),
        }
    }
    summary.push_str(match state {
        TrustState::Changed => "  as it is now, it loosens:\n",
        _ => "  it loosens the rules:\n",
    });
    for l in &loosening {
        summary.push_str(&format!("    {}\n", escape(l)));
    }
    summary.push_str("Trust exactly this content? ");
    // A key pushed into the terminal by another process must not trust a file: the person types
    // back a code only the screen shows.
    match crate::approval::prompt::confirm_with_code(&summary, Duration::from_secs(300)) {
        Ok(true) => {
            let mut store = Store::open()?;
            // The file must be the one just shown, byte for byte: reread it under the lock, the
            // way loading reads it (a FIFO swapped in is refused, not waited on).
            let now = config::read_rules_file(&path)?;
            if now.as_deref() != Some(text.as_str()) || identity(&path) != seen {
                eprintln!(
                    "cmdguard: {shown} was changed or replaced while you were reviewing it, so it was not trusted; run `cmdguard trust` again"
                );
                return Ok(DECLINED);
            }
            store.trust(&path, text.as_bytes())?;
            println!("trusted {shown}");
            Ok(0)
        }
        Ok(false) => {
            println!("not trusted: {shown}");
            Ok(DECLINED)
        }
        Err(crate::approval::prompt::NoTerminal(why)) => {
            eprintln!(
                "cmdguard: trust needs you at a terminal to confirm ({why}); run `cmdguard trust {shown}` in your own terminal"
            );
            Ok(DECLINED)
        }
    }
}

pub fn untrust(_global: &Global, file: Option<&Path>) -> Result<u8> {
    let path = target(file)?;
    let shown = escape(&path.display().to_string());
    if Store::open()?.untrust(&path)? {
        println!("no longer trusted: {shown} (its allow entries and disables are ignored)");
    } else {
        println!("{shown} was not trusted");
    }
    Ok(0)
}
