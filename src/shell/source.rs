//! The text the parser reads, indexed by character. ASCII text, nearly every command, is read
//! in place, a byte a character; other text is decoded into its characters once. Offsets (the
//! parser's cursor, error positions) count characters either way.

pub enum Source<'a> {
    Ascii(&'a str),
    Chars(Vec<char>),
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Source<'a> {
        if text.is_ascii() {
            return Source::Ascii(text);
        }
        // Sized once: `collect` grows from a quarter of the length.
        let mut chars = Vec::with_capacity(text.len());
        chars.extend(text.chars());
        Source::Chars(chars)
    }

    /// The number of characters.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Source::Ascii(text) => text.len(),
            Source::Chars(chars) => chars.len(),
        }
    }

    #[inline]
    pub fn get(&self, at: usize) -> Option<char> {
        match self {
            Source::Ascii(text) => text.as_bytes().get(at).map(|&b| char::from(b)),
            Source::Chars(chars) => chars.get(at).copied(),
        }
    }

    /// Where the first character in `from..to` for which `found` holds is.
    pub fn position(&self, from: usize, to: usize, found: impl Fn(char) -> bool) -> Option<usize> {
        let at = match self {
            Source::Ascii(text) => text.as_bytes()[from..to].iter().position(|&b| found(char::from(b))),
            Source::Chars(chars) => chars[from..to].iter().position(|&c| found(c)),
        };
        at.map(|n| from + n)
    }

    /// Where the first character from `from` on for which `found` holds is.
    pub fn find(&self, from: usize, found: impl Fn(char) -> bool) -> Option<usize> {
        self.position(from, self.len(), found)
    }

    /// Whether the text at `at` starts with `s`.
    #[inline]
    pub fn starts_with_at(&self, at: usize, s: &str) -> bool {
        match self {
            Source::Ascii(text) => text.as_bytes().get(at..).is_some_and(|rest| rest.starts_with(s.as_bytes())),
            Source::Chars(chars) => s.chars().enumerate().all(|(i, c)| chars.get(at + i) == Some(&c)),
        }
    }

    /// Whether the characters `from..to` are `s`.
    pub fn is(&self, from: usize, to: usize, s: &str) -> bool {
        match self {
            Source::Ascii(text) => text[from..to] == *s,
            Source::Chars(chars) => chars[from..to].iter().copied().eq(s.chars()),
        }
    }

    /// Appends the characters `from..to` to `out`.
    pub fn push_to(&self, out: &mut String, from: usize, to: usize) {
        match self {
            Source::Ascii(text) => out.push_str(&text[from..to]),
            Source::Chars(chars) => out.extend(&chars[from..to]),
        }
    }

    /// The characters `from..to`.
    pub fn string(&self, from: usize, to: usize) -> String {
        let mut out = String::with_capacity(to - from);
        self.push_to(&mut out, from, to);
        out
    }
}
