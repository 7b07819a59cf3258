//! What a batch keeps of the commands it analysed (`Analysis::spare`): emptied segments,
//! strings and vectors of words, and the analyzer, written into again for the next command
//! instead of allocated and freed for each.

use super::analyze::Analyzer;
use super::ast::Word;
use super::{Field, Segment};

/// What a batch keeps of the commands it analysed, for the room of their buffers: a new
/// segment or word is written into one of these instead of allocating its strings again.
#[derive(Default)]
pub struct Spare {
    pub(super) segments: Vec<Segment>,
    /// Emptied strings, from the expanded words of simple commands, the lines read and the
    /// literal words parsed.
    pub(super) texts: Vec<String>,
    /// Emptied vectors of a simple command's expanded words, and of its parsed words.
    pub(super) fields: Vec<Vec<Field>>,
    pub(super) words: Vec<Vec<Word>>,
    /// The analyzer, reset.
    pub(super) analyzer: Option<Box<Analyzer>>,
}

/// A copy of an analysis needs none of the room kept for the next command.
impl Clone for Spare {
    fn clone(&self) -> Spare {
        Spare::default()
    }
}

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spare")
    }
}

/// Most emptied strings kept: about the words of the longest commands.
pub(super) const MAX_SPARE_TEXTS: usize = 256;
/// Most emptied vectors of words kept, of each kind.
pub(super) const MAX_SPARE_LISTS: usize = 32;

impl Spare {
    /// Keeps the strings of `fields`, emptied, for words expanded later.
    pub(super) fn keep_texts(&mut self, mut fields: Vec<Field>) {
        for mut f in fields.drain(..) {
            if self.texts.len() >= MAX_SPARE_TEXTS {
                break;
            }
            f.text.clear();
            self.texts.push(f.text);
        }
        if self.fields.len() < MAX_SPARE_LISTS {
            fields.clear();
            self.fields.push(fields);
        }
    }

    /// Keeps the strings of the lines read for a command, emptied.
    pub(super) fn keep_lines(&mut self, lines: &mut Vec<String>) {
        for mut line in lines.drain(..) {
            if self.texts.len() >= MAX_SPARE_TEXTS {
                break;
            }
            line.clear();
            self.texts.push(line);
        }
    }
}

/// Makes `buf` hold `n` strings, the `i`th written by `write(i, …)` into a string of `buf`
/// emptied for it: the strings' room is reused.
pub(super) fn overwrite(buf: &mut Vec<String>, n: usize, mut write: impl FnMut(usize, &mut String)) {
    buf.truncate(n);
    for i in 0..n {
        if i == buf.len() {
            buf.push(String::new());
        }
        buf[i].clear();
        write(i, &mut buf[i]);
    }
}
