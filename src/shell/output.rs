//! What a simple command prints when that is plain from its words (`echo`, in the dialect's
//! reading of escapes, `printf`, `cat` of a here-document), and whether it decodes hidden text:
//! what the next command of a pipeline, or a substitution, is known to read.

use super::Segment;
use super::analyze::Analyzer;
use super::dialect::Dialect;

/// `export`, `declare` and their kind: builtins that assign the variables named in their words.
pub(super) fn is_declaration(program: &str) -> bool {
    matches!(super::basename(program), "export" | "declare" | "typeset" | "local" | "readonly")
}

/// Whether a simple command decodes hidden text (base64, hex, reversed, compressed).
pub(super) fn decodes(seg: &Segment) -> bool {
    let Some(program) = seg.words.first() else { return false };
    let args = &seg.words[1..];
    let has = |flags: &[&str]| args.iter().any(|a| flags.contains(&a.as_str()));
    match program.as_str() {
        "base64" | "base32" | "basenc" => has(&["-d", "--decode", "-D"]),
        "xxd" => has(&["-r", "-revert"]),
        "openssl" => has(&["-d", "base64", "-base64", "enc"]),
        "rev" | "uudecode" | "zcat" | "gunzip" | "bzcat" | "xzcat" | "zstdcat" => true,
        "gzip" | "bzip2" | "xz" | "zstd" => has(&["-d", "--decompress", "-dc", "-cd"]),
        _ => false,
    }
}

impl Analyzer {
    /// What a simple command writes to standard output, when that is plain from its words:
    /// `echo` (as the dialect's `echo` reads escapes), `printf` and `cat` of a here-document.
    pub(super) fn trivial_output(&mut self, index: usize) -> Option<String> {
        let seg = &self.out.segments[index];
        if seg.redirects.iter().any(|r| r.starts_with('>') || r.starts_with("1>") || r.starts_with("&>")) {
            return None;
        }
        self.printed(index)
    }

    /// What segment `index` prints, wherever that goes; the dialect decides only for an `echo`
    /// whose words bash and dash read differently.
    fn printed(&mut self, index: usize) -> Option<String> {
        let seg = &self.out.segments[index];
        let differs = seg.words[0] == "echo" && seg.words[1..].iter().any(|a| a.contains('\\') || a.starts_with('-'));
        let dialect = if differs && !self.bash() { Dialect::Dash } else { Dialect::Bash };
        printed_in(&self.out.segments[index], dialect)
    }

    /// What the commands recorded from segment `from` on print together, when each one's output
    /// is trivially known (`{ echo a; printf b; } > f`).
    pub(super) fn group_output(&mut self, from: usize) -> Option<String> {
        let origin = self.origin.join(" › ");
        let mut out = String::new();
        for i in from..self.out.segments.len() {
            if self.out.segments[i].origin != origin {
                return None;
            }
            out.push_str(&self.trivial_output(i)?);
        }
        (from < self.out.segments.len()).then_some(out)
    }

    /// What segment `index` writes through its `>`/`>>` redirection when its output is trivially
    /// known (`echo 'rm -rf ~' > x.sh`): (the file, the text).
    pub(super) fn written_file(&mut self, index: usize) -> Option<(String, String)> {
        let target = self.out.segments[index].redirects.iter().rev().find_map(|r| {
            let (op, file) = r.split_once(' ')?;
            matches!(op, ">" | ">>" | ">|" | "1>" | "1>>").then(|| file.to_string())
        })?;
        Some((target, self.printed(index)?))
    }
}

fn printed_in(seg: &Segment, dialect: Dialect) -> Option<String> {
    if !seg.is_static {
        return None;
    }
    let args = &seg.words[1..];
    match seg.words[0].as_str() {
        "echo" if dialect == Dialect::Dash => {
            // dash's echo takes only `-n`, and always reads escapes (`\0155` is `m`; `\c` ends it).
            let newline = args.first().is_none_or(|a| a != "-n");
            let joined = args[usize::from(!newline)..].join(" ");
            let (mut out, stopped) = super::escapes::dash_echo(&joined);
            if newline && !stopped {
                out.push('\n');
            }
            Some(out)
        }
        "echo" => {
            let mut i = 0;
            let mut escapes = false;
            let mut newline = true;
            while let Some(flag) =
                args.get(i).filter(|a| a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c)))
            {
                newline &= !flag.contains('n');
                escapes = flag.contains('e') || (escapes && !flag.contains('E'));
                i += 1;
            }
            let joined = args[i..].join(" ");
            let mut out = if escapes { super::escapes::unescape(&joined) } else { joined };
            if newline {
                out.push('\n');
            }
            Some(out)
        }
        "printf" => {
            let format = args.first()?;
            super::escapes::printf(format, &args[1..])
        }
        "cat" if seg.words.len() == 1 => seg.stdin_text.clone(),
        _ => None,
    }
}
