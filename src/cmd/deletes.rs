//! Whether a command would delete the project's own rules file while git does not track it: an
//! "always" entry written there would vanish with the file (and git could not bring it back), so
//! the wrapper writes it to the user's rules instead.

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use crate::shell::Analysis;

/// Whether a segment of `analysis`, run in `cwd`, removes `file` (an existing, untracked file).
pub fn would_delete(analysis: &Analysis, cwd: &Path, file: &Path) -> bool {
    file.is_file() && analysis.segments.iter().any(|s| segment_deletes(&s.words, cwd, file)) && !tracked(file)
}

fn segment_deletes(words: &[String], cwd: &Path, file: &Path) -> bool {
    let Some(program) = words.first() else { return false };
    let (options, operands): (Vec<&String>, Vec<&String>) = words[1..].iter().partition(|w| w.starts_with('-'));
    let recursive = options.iter().any(|o| *o == "--recursive" || (!o.starts_with("--") && o.contains(['r', 'R'])));
    match program.as_str() {
        // git clean removes untracked files under the directory it runs in.
        "git" => operands.first().is_some_and(|w| *w == "clean") && file.starts_with(lexical(cwd)),
        "rm" | "unlink" | "shred" | "mv" | "trash" | "trash-put" | "gio" => operands.iter().any(|op| {
            let target = lexical(&cwd.join(op));
            target == file || (file.starts_with(&target) && (recursive || program == "mv"))
        }),
        _ => false,
    }
}

/// `path` with `.` and `..` taken out without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether git tracks `file` (false where there is no git or no repository).
fn tracked(file: &Path) -> bool {
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else { return false };
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["ls-files", "--error-unmatch", "--"])
        .arg(name)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleting_commands_are_recognized() {
        let cwd = Path::new("/p");
        let file = Path::new("/p/.cmdguard.toml");
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        for yes in [
            "rm .cmdguard.toml",
            "rm -rf .",
            "rm -r ../p",
            "mv .cmdguard.toml /tmp",
            "git clean -fdx",
            "rm -f ./.cmdguard.toml",
        ] {
            assert!(segment_deletes(&w(yes), cwd, file), "{yes}");
        }
        for no in ["rm other.toml", "rm .", "cat .cmdguard.toml", "git status", "rm -rf ../q"] {
            assert!(!segment_deletes(&w(no), cwd, file), "{no}");
        }
    }
}
