//! Temporary directories the command makes or enters. A variable assigned the output of
//! `mktemp -d` holds a directory that did not exist before, under the temporary directory: it
//! reads `$TMPDIR/tmp.XXXXXXXXXX` (the one value in the table that stands for a name only known
//! when the command runs), so `d=$(mktemp -d) && rm -rf "$d"` is judged as deleting a
//! temporary directory; only as a whole word, since a failed mktemp leaves it empty and
//! `"$d"/*` would be `/*` (the differential test runs exactly that). After `cd /tmp` or
//! `cd /var/tmp`, which cannot fail, the command's relative operands are judged against it
//! (`Segment::cwd`): `cd /tmp && rm -rf x` deletes `/tmp/x`. Any other `cd` makes the directory
//! unknown again.

use super::Field;
use super::analyze::Analyzer;

/// The variable-table key of the known working directory.
const CWD_KEY: &str = "cmdguard:cwd";

/// What a `mktemp -d` directory reads as.
pub(super) const MKTEMP_DIR: &str = "$TMPDIR/tmp.XXXXXXXXXX";

/// Directories that always exist, so `cd` into them cannot fail and leave the old one.
/// Not a `mktemp -d` directory: if mktemp failed, `cd "$d"` (`cd ""`) stays where it was, and
/// `; rm -rf ./*` deletes the project.
const TEMP_ROOTS: &[&str] = &["/tmp", "/tmp/", "/var/tmp", "/var/tmp/"];

/// The value an assignment stores for `$(mktemp -d …)`, when the directory is made under the
/// temporary directory (no `-p DIR` elsewhere, no template with a path, not `-u`).
pub(super) fn assigned_value(name: &str, value: &Field) -> Option<Field> {
    // The shell's own variables keep their meaning: `HOME=$(mktemp -d)` moves `~`.
    let special = matches!(name, "HOME" | "PWD" | "OLDPWD" | "PATH" | "IFS" | "CDPATH" | "TMPDIR" | "ENV" | "BASH_ENV");
    (value.dynamic && !special && is_mktemp_dir(&value.text)).then(|| Field::lit(MKTEMP_DIR))
}

fn is_mktemp_dir(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("$(").and_then(|t| t.strip_suffix(')')) else { return false };
    if inner.contains(['$', '`', ';', '|', '&', '<', '>', '(', ')', '\'', '"', '\n']) {
        return false;
    }
    let mut words = inner.split(' ');
    if words.next() != Some("mktemp") {
        return false;
    }
    let (mut directory, mut words) = (false, words.peekable());
    while let Some(w) = words.next() {
        match w {
            "--directory" => directory = true,
            "--quiet" | "--tmpdir" => {}
            "--tmpdir=/tmp" | "--tmpdir=/var/tmp" => {}
            "-p" | "--tmpdir=" => {
                let dir = words.next();
                if !matches!(dir, Some("/tmp" | "/var/tmp")) {
                    return false;
                }
            }
            "-t" => {
                let template = words.next();
                if template.is_none_or(|t| t.contains('/')) {
                    return false;
                }
            }
            s if s.starts_with("--") => return false,
            s if s.starts_with('-') => {
                // Clustered short options: `-d`, `-qd`, `-dt TEMPLATE` (t last takes nothing
                // here: GNU reads the template as the operand).
                if !s[1..].chars().all(|c| matches!(c, 'd' | 'q' | 't')) {
                    return false;
                }
                directory |= s.contains('d');
            }
            // A template operand names a file in the temporary directory only without a path.
            t if t.contains('/') => return false,
            _ => {}
        }
    }
    directory
}

impl Analyzer {
    /// After a `cd` segment: the directory it enters if that is a temporary one, else unknown.
    pub(super) fn changed_directory(&mut self, words: &[Field]) {
        let target = match words {
            [_, dir] if !dir.dynamic => Some(dir.text.as_str()),
            _ => None,
        };
        let known = target
            .filter(|t| !self.cd_redefined && TEMP_ROOTS.contains(t))
            .map(|t| t.trim_end_matches('/').to_string());
        self.set_var("PWD", None);
        // Kept in the variable table under a name no shell variable can have, so subshells,
        // `&&` branches and other processes restore or forget it as they do variables.
        self.env.insert(CWD_KEY.to_string(), known);
    }

    /// An alias or `enable` that names `cd` (or a name not known): from here on `cd` may not
    /// change the directory. (Any function definition does the same, in the walk.)
    pub(super) fn note_cd_redefined(&mut self, fields: &[Field]) {
        let names_cd = |f: &Field| f.dynamic || f.text == "cd" || f.text.starts_with("cd=");
        if fields.iter().any(names_cd) {
            self.cd_redefined = true;
        }
    }

    /// The temporary directory the command is known to be in, if any.
    pub(super) fn temp_cwd(&self) -> Option<String> {
        self.env.get(CWD_KEY).cloned().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::is_mktemp_dir;

    #[test]
    fn mktemp_forms() {
        for t in [
            "$(mktemp -d)",
            "$(mktemp -d -t build.XXXXXX)",
            "$(mktemp -qd)",
            "$(mktemp --directory)",
            "$(mktemp -d -p /tmp)",
        ] {
            assert!(is_mktemp_dir(t), "{t}");
        }
        for t in [
            "$(mktemp)",
            "$(mktemp -d -p ~)",
            "$(mktemp -d ./x.XXXX)",
            "$(mktemp -u -d)",
            "$(pwd)",
            "$(mktemp -d; rm -rf ~)",
        ] {
            assert!(!is_mktemp_dir(t), "{t}");
        }
    }
}
