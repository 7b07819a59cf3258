//! The bytes last trusted for each rules file, kept beside the trust records
//! (`trusted/<digest>` in the state directory, 0600), so `cmdguard trust` can show what changed
//! since the file was last trusted, line by line, not only what the new bytes loosen. A copy is
//! written when a file is trusted and removed when that trust is replaced or withdrawn.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::state;

const DIR: &str = "trusted";

fn copy_path(state_dir: &Path, digest: &str) -> Option<PathBuf> {
    // Digests are hex; anything else never names a file.
    digest.bytes().all(|b| b.is_ascii_hexdigit()).then(|| state_dir.join(DIR).join(digest))
}

/// Keeps `content` as the copy for `digest`.
pub fn keep(state_dir: &Path, digest: &str, content: &[u8]) -> Result<()> {
    let Some(path) = copy_path(state_dir, digest) else { return Ok(()) };
    state::private_dir(&state_dir.join(DIR))?;
    state::write_atomic(&path, content, 0o600)
}

/// Drops the copy for `digest` (missing is fine).
pub fn drop_copy(state_dir: &Path, digest: &str) {
    if let Some(path) = copy_path(state_dir, digest) {
        let _ = std::fs::remove_file(path);
    }
}

/// The bytes trusted under `digest`, if kept.
pub fn read(state_dir: &Path, digest: &str) -> Option<String> {
    std::fs::read_to_string(copy_path(state_dir, digest)?).ok()
}

/// A line diff of `old` → `new`: `- ` and `+ ` lines with up to one line of context around each
/// change, at most `limit` lines (then a count of the rest).
pub fn diff(old: &str, new: &str, limit: usize) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    if a.len() * b.len() > 4_000_000 {
        return vec![format!("(too long to compare line by line: {} lines before, {} now)", a.len(), b.len())];
    }
    // Longest common subsequence table, from the end.
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    let near = |k: usize| {
        (k.saturating_sub(1)..=(k + 1).min(ops.len().saturating_sub(1))).any(|n| ops.get(n).is_some_and(|o| o.0 != ' '))
    };
    let mut out = Vec::new();
    let mut skipped = false;
    let shown: Vec<(char, &str)> = ops.iter().enumerate().filter(|(k, _)| near(*k)).map(|(_, o)| *o).collect();
    let changes = ops.iter().filter(|o| o.0 != ' ').count();
    for (k, (op, line)) in ops.iter().enumerate() {
        if !near(k) {
            skipped = true;
            continue;
        }
        if skipped && !out.is_empty() {
            out.push("  …".to_string());
        }
        skipped = false;
        if out.len() >= limit {
            let left = shown.len().saturating_sub(limit);
            out.push(format!("… and {left} more lines ({changes} changed in all)"));
            break;
        }
        out.push(format!("{op} {line}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn diff_shows_changed_lines_with_context() {
        let old = "a\nb\nc\nd\ne\nf\n";
        let new = "a\nb\nX\nd\ne\nf\ng\n";
        assert_eq!(diff(old, new, 40), vec!["  b", "- c", "+ X", "  d", "  …", "  f", "+ g"]);
        assert!(diff(old, old, 40).is_empty());
    }
}
