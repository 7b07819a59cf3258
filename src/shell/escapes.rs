//! What `echo` and `printf` print: backslash escapes as bash's `echo -e` and `printf` read
//! them, dash's `echo` (which always reads them), and `printf` formats.

/// What dash's `echo` prints for `s`: `\b \c \f \n \r \t \v \\` and `\0NNN`; anything else
/// stays as written. Also says whether `\c` stopped the output.
pub fn dash_echo(s: &str) -> (String, bool) {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('c') => return (out, true),
            Some('f') => out.push('\x0c'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\x0b'),
            Some('\\') => out.push('\\'),
            Some('0') => {
                let mut v = 0u32;
                for _ in 0..3 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v & 0xff));
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    (out, false)
}

/// Backslash escapes as `echo -e` and `printf` read them.
pub fn unescape(s: &str) -> String {
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
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            'x' => out.extend(code(16, 2, 0)),
            '0' => out.extend(code(8, 3, 0)),
            '1'..='7' => out.extend(code(8, 2, e.to_digit(8).unwrap_or(0))),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

/// The output of `printf FORMAT ARGS…` for `%s`, `%b`, `%c`, `%d` and `%%`.
pub fn printf(format: &str, args: &[String]) -> String {
    let format = unescape(format);
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
            let mut conv = chars.next();
            while conv.is_some_and(|c| c.is_ascii_digit() || "-+ #.".contains(c)) {
                conv = chars.next();
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
                Some(_) => {
                    used = true;
                    out.push_str(args.next().map_or("", |s| s));
                }
                None => out.push('%'),
            }
        }
        if !used || args.len() == 0 || round == 63 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_and_echo_escapes() {
        assert_eq!(printf(r"\x72\x6d", &[]), "rm");
        assert_eq!(printf("%s", &["rm".into()]), "rm");
        assert_eq!(printf("%s-", &["a".into(), "b".into()]), "a-b-");
        assert_eq!(printf(r"\162\155", &[]), "rm");
        assert_eq!(unescape(r"\0162m"), "rm");
        assert_eq!(printf("100%%", &[]), "100%");
    }
}
