//! Terminal input taken apart into keys: characters, Enter, Backspace, Ctrl-C, and escape
//! sequences as single keys, so nothing inside an arrow key or a terminal report is read as an
//! answer.

/// A key, after escape sequences (arrows and the like) are taken apart.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Key {
    Char(char),
    Byte(u8),
    Enter,
    Backspace,
    CtrlC,
    CtrlU,
    /// An escape sequence or an Alt chord: ignored.
    Other,
}

/// Splits input into keys. Escape sequences — arrows and function keys (CSI, SS3), terminal
/// reports and strings (OSC, DCS, APC, PM, SOS, up to BEL or ST) — and Alt chords are one `Other`
/// key each, so nothing inside them is read as an answer. Returns the keys, and how many bytes at
/// the end belong to a sequence or character not complete yet: the caller keeps them and reads on.
pub(super) fn keys(input: &[u8]) -> (Vec<Key>, usize) {
    let mut out = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if b == 0x1b {
            match escape_len(&input[i..]) {
                Some(n) => {
                    out.push(Key::Other);
                    i += n;
                    continue;
                }
                None => return (out, input.len() - i),
            }
        }
        let key = match b {
            b'\r' | b'\n' => Key::Enter,
            0x7f | 0x08 => Key::Backspace,
            0x03 => Key::CtrlC,
            0x15 => Key::CtrlU,
            0x00..=0x1f => Key::Byte(b),
            _ => {
                let width = utf8_width(b);
                if i + width > input.len() {
                    return (out, input.len() - i);
                }
                let key = match std::str::from_utf8(&input[i..i + width]) {
                    Ok(s) => s.chars().next().map_or(Key::Other, Key::Char),
                    Err(_) => Key::Other,
                };
                out.push(key);
                i += width;
                continue;
            }
        };
        out.push(key);
        i += 1;
    }
    (out, 0)
}

/// The length of a UTF-8 character from its first byte (1 for a byte that cannot start one).
fn utf8_width(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

/// The length of the escape sequence `s` starts with (at ESC), or `None` while it is incomplete.
fn escape_len(s: &[u8]) -> Option<usize> {
    let next = *s.get(1)?;
    match next {
        b'[' => s[2..].iter().position(|b| (0x40..=0x7e).contains(b)).map(|p| p + 3),
        b'O' => {
            let n = 2 + utf8_width(*s.get(2)?);
            (s.len() >= n).then_some(n)
        }
        b']' | b'P' | b'_' | b'^' | b'X' => {
            let mut j = 2;
            while j < s.len() {
                match s[j] {
                    0x07 => return Some(j + 1),
                    0x1b if s.get(j + 1) == Some(&b'\\') => return Some(j + 2),
                    _ => j += 1,
                }
            }
            None
        }
        // Alt and a key: one character after the ESC.
        _ => {
            let n = 1 + utf8_width(next);
            (s.len() >= n).then_some(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_take_escape_sequences_apart() {
        assert_eq!(keys(b"o").0, vec![Key::Char('o')]);
        assert_eq!(keys(b"\x1b[A\x1b[1;5Cd").0, vec![Key::Other, Key::Other, Key::Char('d')]);
        assert_eq!(keys(b"\x1bOPx").0, vec![Key::Other, Key::Char('x')]);
        assert_eq!(keys(b"\x1b"), (vec![], 1));
        assert_eq!(keys(b"\x03").0, vec![Key::CtrlC]);
        assert_eq!(keys("é\r".as_bytes()).0, vec![Key::Char('é'), Key::Enter]);
        // Alt chords and escapes before multi-byte characters are whole keys, never a panic.
        assert_eq!(keys("\x1bé".as_bytes()), (vec![Key::Other], 0));
        assert_eq!(keys("\x1bOéd".as_bytes()), (vec![Key::Other, Key::Char('d')], 0));
        // A terminal report (OSC title, DCS) is not typed keys, whatever it holds.
        assert_eq!(keys(b"\x1b]0;once\x07d").0, vec![Key::Other, Key::Char('d')]);
        assert_eq!(keys(b"\x1bPoooo\x1b\\").0, vec![Key::Other]);
        assert_eq!(keys(b"\x1b]2;oops"), (vec![], 8));
        // A character split across reads waits for its other bytes.
        assert_eq!(keys(&"é".as_bytes()[..1]), (vec![], 1));
    }
}
