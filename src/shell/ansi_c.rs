//! ANSI-C quoting (`$'…'`), which bash reads and dash does not: the escapes it decodes.

use super::parse::{PResult, Parser};

impl Parser<'_> {
    /// ANSI-C quoted text, cursor just after `$'`.
    pub(super) fn ansi_c(&mut self) -> PResult<String> {
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated $'");
            };
            self.pos += 1;
            match c {
                '\'' => return Ok(out),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("unterminated $'");
                    };
                    self.pos += 1;
                    match e {
                        'a' => out.push('\x07'),
                        'b' => out.push('\x08'),
                        'e' | 'E' => out.push('\x1b'),
                        'f' => out.push('\x0c'),
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        'v' => out.push('\x0b'),
                        'c' => {
                            if let Some(ctl) = self.peek() {
                                self.pos += 1;
                                out.push(char::from((ctl as u8 & 0x1f) & 0x7f));
                            }
                        }
                        'x' => self.push_code(&mut out, 16, 2),
                        'u' => self.push_code(&mut out, 16, 4),
                        'U' => self.push_code(&mut out, 16, 8),
                        '0'..='7' => {
                            self.pos -= 1;
                            self.push_code(&mut out, 8, 3);
                        }
                        other => {
                            if !matches!(other, '\\' | '\'' | '"' | '?') {
                                out.push('\\');
                            }
                            out.push(other);
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn push_code(&mut self, out: &mut String, radix: u32, max: usize) {
        let mut value = 0u32;
        let mut n = 0;
        while n < max {
            match self.peek().and_then(|c| c.to_digit(radix)) {
                Some(d) => {
                    value = value * radix + d;
                    self.pos += 1;
                    n += 1;
                }
                None => break,
            }
        }
        if n == 0 {
            out.push('\\');
            return;
        }
        if radix == 8 || max == 2 {
            // Octal and \x escapes are bytes; bytes above 0x7f are shown as their code point.
            value &= 0xff;
        }
        out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
    }
}
