//! A short random code the user types back before an answer that outlasts the command: `a`
//! (always), the confirmation of `cmdguard trust` and of `cmdguard approve`. Keys can be pushed
//! into a terminal's input by another process (`ioctl(TIOCSTI)`, where the kernel still allows
//! it), and such keys look exactly like typed ones. What an injector cannot do is read the
//! screen: the code is drawn after the input was flushed, so only someone who sees it can type
//! it. One wrong key ends the attempt; a new attempt draws a new code.

use std::time::Instant;

use super::{Event, Key, Tty, keys};

/// Letters and digits that do not look like one another (no 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B).
const ALPHABET: &[u8] = b"ACDEFHJKMNPRTUVWXY3479";
const LEN: usize = 4;

/// A fresh code from the kernel's random source.
pub fn new_code() -> String {
    random_code(LEN)
}

/// `len` characters of `ALPHABET` from the kernel's random source (also the approval codes of
/// hook mode, `approval::codes`).
pub fn random_code(len: usize) -> String {
    // Rejection sampling keeps every character equally likely.
    let limit = 256 - 256 % ALPHABET.len();
    let mut code = String::new();
    while code.len() < len {
        let bytes = crate::state::random_hex(16);
        for pair in bytes.as_bytes().chunks(2) {
            let b = std::str::from_utf8(pair).ok().and_then(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(255);
            if usize::from(b) < limit && code.len() < len {
                code.push(char::from(ALPHABET[usize::from(b) % ALPHABET.len()]));
            }
        }
    }
    code
}

/// How typing a code ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    Matched,
    /// A key that is not the code's next character.
    Wrong,
    /// Esc: the user went back.
    Back,
    /// Ctrl-C.
    Cancelled,
    Timeout,
    Interrupted(String),
}

/// Flushes the input, shows `text` (which should end by asking for the code), and reads the
/// code. Case does not matter; the first key that is not the code's next character ends it.
pub(super) fn read_code(tty: &mut Tty, text: &str, code: &str, deadline: Instant) -> Typed {
    // Whatever arrived before the code was on the screen cannot be an answer to it.
    tty.flush_input();
    tty.write(text);
    let mut typed = String::new();
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Typed::Timeout;
        }
        let wait = if pending.is_empty() { deadline - now } else { std::time::Duration::from_millis(30) };
        match tty.wait(wait) {
            Event::Signal(sig) => return Typed::Interrupted(crate::signals::describe(sig)),
            Event::Gone => return Typed::Interrupted("the terminal went away".into()),
            Event::Nothing if pending == [0x1b] => return Typed::Back,
            Event::Nothing => pending.clear(),
            Event::Input(bytes) => {
                pending.extend(bytes);
                let (ks, rest) = keys(&pending);
                pending = pending.split_off(pending.len() - rest);
                for k in ks {
                    let next = code.chars().nth(typed.chars().count());
                    match k {
                        Key::CtrlC => return Typed::Cancelled,
                        // Case does not matter; any other key is a wrong code, at once.
                        Key::Char(c) if Some(c.to_ascii_uppercase()) == next => {
                            typed.push(c.to_ascii_uppercase());
                            tty.write(&c.to_ascii_uppercase().to_string());
                        }
                        _ => return Typed::Wrong,
                    }
                    if typed == code {
                        return Typed::Matched;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_short_unambiguous_and_vary() {
        let codes: Vec<String> = (0..64).map(|_| new_code()).collect();
        for c in &codes {
            assert_eq!(c.len(), LEN);
            assert!(c.bytes().all(|b| ALPHABET.contains(&b)), "{c}");
        }
        // 64 draws from 22^4 codes: a repeat of all of them would mean no randomness at all.
        assert!(codes.iter().any(|c| *c != codes[0]), "{codes:?}");
    }
}
