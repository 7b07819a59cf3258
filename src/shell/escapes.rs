//! What `echo` and `printf` print: backslash escapes as bash's `echo -e` and `printf` read
//! them, dash's `echo` (which always reads them), and `printf` formats.

/// Whose reading of backslash escapes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    /// bash's `echo -e` and `printf`'s `%b`: also `\e`, `\xHH` and `\NNN`.
    Bash,
    /// A `printf` format: as `Bash`, but `\c` is two plain characters.
    Format,
    /// dash's `echo`: `\a \b \c \f \n \r \t \v \\` and `\0NNN` only.
    Dash,
}

/// What dash's `echo` prints for `s`: `\b \c \f \n \r \t \v \\` and `\0NNN`; anything else
/// stays as written. Also says whether `\c` stopped the output.
pub fn dash_echo(s: &str) -> (String, bool) {
    escapes(s, Flavor::Dash)
}

/// Backslash escapes as `echo -e` and `printf` read them (up to a `\c`, which ends the output).
pub fn unescape(s: &str) -> String {
    escapes(s, Flavor::Bash).0
}

fn escapes(s: &str, flavor: Flavor) -> (String, bool) {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut code = |radix: u32, max: usize, init: u32| {
            let mut v = init;
            for _ in 0..max {
                match chars.peek().and_then(|c| c.to_digit(radix)) {
                    Some(d) => {
                        v = v * radix + d;
                        chars.next();
                    }
                    None => break,
                }
            }
            char::from_u32(v & 0xff)
        };
        match (e, flavor) {
            ('n', _) => out.push('\n'),
            ('t', _) => out.push('\t'),
            ('r', _) => out.push('\r'),
            ('a', _) => out.push('\x07'),
            ('b', _) => out.push('\x08'),
            ('f', _) => out.push('\x0c'),
            ('v', _) => out.push('\x0b'),
            ('\\', _) => out.push('\\'),
            ('c', Flavor::Bash | Flavor::Dash) => return (out, true),
            ('0', _) => out.extend(code(8, 3, 0)),
            ('e', Flavor::Bash | Flavor::Format) => out.push('\x1b'),
            ('x', Flavor::Bash | Flavor::Format) => out.extend(code(16, 2, 0)),
            ('1'..='7', Flavor::Bash | Flavor::Format) => out.extend(code(8, 2, e.to_digit(8).unwrap_or(0))),
            (other, _) => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    (out, false)
}

/// The output of `printf FORMAT ARGS…` for `%s`, `%b`, `%c`, `%d` and `%%`.
pub fn printf(format: &str, args: &[String]) -> Option<String> {
    let format = escapes(format, Flavor::Format).0;
    let mut out = String::new();
    let mut args = args.iter();
    for round in 0..64 {
        let mut used = false;
        let mut chars = format.chars();
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            let conv = chars.next();
            if conv.is_some_and(|c| c.is_ascii_digit() || "-+ #.*".contains(c)) {
                // Widths, precisions and flags pad or cut: not followed.
                return None;
            }
            match conv {
                Some('%') => out.push('%'),
                Some('b') => {
                    used = true;
                    out.push_str(&unescape(args.next().map_or("", |s| s)));
                }
                Some('c') => {
                    used = true;
                    out.extend(args.next().and_then(|s| s.chars().next()));
                }
                Some('s') => {
                    used = true;
                    out.push_str(args.next().map_or("", |s| s));
                }
                // Numbers (`%d` reads `010` as octal), `%q` and the rest: not followed.
                Some(_) => return None,
                None => out.push('%'),
            }
        }
        if !used || args.len() == 0 || round == 63 {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_and_echo_escapes() {
        assert_eq!(printf(r"\x72\x6d", &[]).unwrap(), "rm");
        assert_eq!(printf("%s", &["rm".into()]).unwrap(), "rm");
        assert_eq!(printf("%s-", &["a".into(), "b".into()]).unwrap(), "a-b-");
        assert_eq!(printf(r"\162\155", &[]).unwrap(), "rm");
        assert_eq!(unescape(r"\0162m"), "rm");
        assert_eq!(unescape(r"rm\c -rf"), "rm");
        assert_eq!(printf(r"a\cb", &[]).unwrap(), r"a\cb");
        assert_eq!(dash_echo(r"r\0155\x41"), (r"rm\x41".to_string(), false));
        assert_eq!(printf("100%%", &[]).unwrap(), "100%");
        assert_eq!(printf("%d", &["010".into()]), None);
        assert_eq!(printf("%5s", &["a".into()]), None);
    }
}
