//! Reading a command's options with its catalogue entry, as the program parses them: values,
//! bundles (`-qfc CMD`), `--opt=value`, long-option prefixes where its parser accepts them, the
//! scripts and code option values carry, and options with which it runs nothing.

use super::Field;
use super::catalog::{Program, Role};
use super::few::Few;
use super::keyed::keyed_command;

/// What reading a command's options with its entry found. It borrows the words read: the
/// options given and their values are slices of them, not copies.
#[derive(Debug, Default)]
pub struct Reading<'a> {
    /// Index of the first operand (past `--`), where options stopped.
    pub end: usize,
    /// Scripts option values carry, with the option that carried each.
    pub scripts: Vec<(String, Field)>,
    /// Index where the words after a `command_after` option begin.
    pub command_at: Option<usize>,
    /// An option with which it runs nothing was given.
    pub informs: bool,
    /// A script file option was given: `Some(true)` when it names standard input.
    pub script_file: Option<bool>,
    /// Long options written as prefixes, with their full names: (word index, full name).
    pub expanded: Vec<(usize, &'static str)>,
    /// Indices of the operands (words that are neither options nor their values).
    pub operands: Few<usize, 8>,
    /// The options given, with their values.
    pub given: Few<(OptionName<'a>, Option<&'a str>), 4>,
    /// Code in another language option values carry: (option, language, code).
    pub code: Vec<(String, &'static str, Field)>,
    /// A keyed option's value was the key alone (`screen -X stuff CMD`): the next word is the
    /// command.
    key_alone: Option<String>,
}

/// An option's name as given: a word's text (or the catalogue's full name for a prefix), or
/// one letter of a bundle (`-f` of `-qfc`), spelled in place.
#[derive(Debug, Clone, Copy)]
pub enum OptionName<'a> {
    Text(&'a str),
    Short([u8; 5], u8),
}

impl Default for OptionName<'_> {
    fn default() -> Self {
        OptionName::Text("")
    }
}

impl OptionName<'_> {
    pub fn as_str(&self) -> &str {
        match self {
            OptionName::Text(text) => text,
            OptionName::Short(buf, len) => std::str::from_utf8(&buf[..usize::from(*len)]).unwrap_or("-"),
        }
    }
}

impl Program {
    fn long_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.long_value
            .iter()
            .chain(self.long_value2)
            .chain(self.long)
            .chain(self.script)
            .chain(self.command_after)
            .chain(self.stdin_script)
            .chain(self.informs)
            .chain(self.keyed.iter().map(|(o, _)| o))
            .chain(self.optional_value)
            .chain(self.removes.iter().map(|r| &r.option))
            .chain(self.code.iter().map(|(o, _)| o))
            .copied()
    }

    /// Whether `name` is on one of the lists `long_names` reads: each list searched in turn,
    /// where the chained iterator cost several times as much a name.
    fn is_long_name(&self, name: &str) -> bool {
        let on = |list: &[&str]| list.contains(&name);
        on(self.long_value)
            || on(self.long_value2)
            || on(self.long)
            || on(self.script)
            || on(self.command_after)
            || on(self.stdin_script)
            || on(self.informs)
            || self.keyed.iter().any(|(o, _)| *o == name)
            || on(self.optional_value)
            || self.removes.iter().any(|r| r.option == name)
            || self.code.iter().any(|(o, _)| *o == name)
    }

    /// The full name of a long option as written (`--recurs` → `--recursive` where the program
    /// accepts prefixes and one name has it), or the name as written; and whether the name is
    /// on one of the entry's lists.
    fn resolve<'a>(&self, name: &'a str) -> (&'a str, Option<&'static str>, bool) {
        if self.is_long_name(name) {
            return (name, None, true);
        }
        if self.abbreviate && name.starts_with("--") && name.len() > 3 {
            // One name may be on two lists (`--use-compress-program` takes a value and is a
            // script): ambiguous means two different names.
            let mut matching = self.long_names().filter(|n| n.starts_with(name));
            if let Some(one) = matching.next()
                && matching.all(|n| n == one)
            {
                return (one, Some(one), true);
            }
        }
        (name, None, false)
    }

    fn takes_value(&self, name: &str) -> usize {
        let one = |l: &[&str]| l.contains(&name);
        if one(self.optional_value) {
            0
        } else if one(self.long_value2) {
            2
        } else if one(self.long_value)
            || one(self.script)
            || one(self.stdin_script)
            || self.code.iter().any(|(o, _)| *o == name)
            || self.keyed.iter().any(|(o, _)| *o == name)
            // `-x` is two bytes only when `x` is ASCII: a byte search finds it.
            || (name.len() == 2 && name.starts_with('-') && self.short_value.as_bytes().contains(&name.as_bytes()[1]))
        {
            1
        } else {
            0
        }
    }

    /// Reads options from `start`. A carrier's options may follow its operands (GNU getopt
    /// permutes them), so it reads to the end; a wrapper's stop at its first operand.
    pub fn read<'a>(&self, words: &'a [Field], start: usize) -> Reading<'a> {
        let mut r = Reading { end: words.len(), ..Reading::default() };
        let permute = self.role != Role::Wrapper;
        let mut i = start;
        let mut first_operand = None;
        while i < words.len() {
            let w = words[i].text.as_str();
            if self.options_inform && w.starts_with('-') && w.len() > 1 {
                // `busybox --list`: any option, `--` too, and no command runs.
                r.informs = true;
                break;
            }
            if w == "--" {
                first_operand.get_or_insert(i + 1);
                r.operands.extend(i + 1..words.len());
                break;
            }
            if !w.starts_with('-') || w.len() < 2 {
                first_operand.get_or_insert(i);
                r.operands.push(i);
                if !permute {
                    break;
                }
                i += 1;
                continue;
            }
            // A byte search: `split_once` sets up a searcher for each option.
            let (written, inline) = match w.bytes().position(|b| b == b'=') {
                Some(eq) => (&w[..eq], Some(&w[eq + 1..])),
                None => (w, None),
            };
            let (name, expanded, listed) = self.resolve(written);
            if listed || w.starts_with("--") {
                if let Some(full) = expanded {
                    r.expanded.push((i, full));
                }
                if self.command_after.contains(&name) {
                    r.command_at = Some(i + 1);
                    first_operand.get_or_insert(i + 1);
                    break;
                }
                let n =
                    if inline.is_some() { self.takes_value(name).saturating_sub(1) } else { self.takes_value(name) };
                let value = inline.or_else(|| (n > 0).then(|| words.get(i + 1)).flatten().map(|f| f.text.as_str()));
                let dynamic = inline.is_none() && n > 0 && words.get(i + 1).is_some_and(|f| f.dynamic);
                self.option(OptionName::Text(name), value, dynamic || words[i].dynamic, &mut r);
                i += 1 + n;
                i += self.command_after_key(words, i, &mut r);
                continue;
            }
            // A bundle of short options (`-qfc CMD`): one that takes a value ends it.
            let cluster = &w[1..];
            let mut step = 1;
            for (j, ch) in cluster.char_indices() {
                let opt = short_option(ch);
                let rest = &cluster[j + ch.len_utf8()..];
                if self.optional_value.contains(&opt.as_str()) && !rest.is_empty() {
                    self.option(opt, Some(rest), words[i].dynamic, &mut r);
                    break;
                }
                if self.takes_value(opt.as_str()) > 0 {
                    let (value, dynamic) = if rest.is_empty() {
                        step = 2;
                        (words.get(i + 1).map(|f| f.text.as_str()), words.get(i + 1).is_some_and(|f| f.dynamic))
                    } else {
                        (Some(rest), words[i].dynamic)
                    };
                    self.option(opt, value, dynamic, &mut r);
                    break;
                }
                self.option(opt, None, false, &mut r);
            }
            i += step;
            i += self.command_after_key(words, i, &mut r);
        }
        r.end = first_operand.unwrap_or(i.min(words.len()));
        r
    }

    /// After a keyed option whose value was the key alone: the command is the word at `i`.
    fn command_after_key(&self, words: &[Field], i: usize, r: &mut Reading<'_>) -> usize {
        let Some(origin) = r.key_alone.take() else { return 0 };
        let Some(f) = words.get(i) else { return 0 };
        r.scripts.push((origin, f.clone()));
        1
    }

    fn option<'a>(&self, given: OptionName<'a>, value: Option<&'a str>, dynamic: bool, r: &mut Reading<'a>) {
        r.given.push((given, value));
        let name = given.as_str();
        if self.informs.contains(&name) {
            r.informs = true;
        }
        let Some(value) = value else { return };
        for (_, lang) in self.code.iter().filter(|(o, _)| *o == name) {
            r.code.push((name.to_string(), lang, Field { text: value.to_string(), dynamic }));
        }
        if self.script.contains(&name) {
            r.scripts.push((name.to_string(), Field { text: value.to_string(), dynamic }));
        }
        if self.stdin_script.contains(&name) {
            let stdin = matches!(value, "-" | "/dev/stdin");
            r.script_file = Some(r.script_file.unwrap_or(false) || stdin);
        }
        for (_, keys) in self.keyed.iter().filter(|(o, _)| *o == name) {
            if let Some(key) = keys.iter().find(|k| k.eq_ignore_ascii_case(value.trim())) {
                r.key_alone = Some(format!("{name} {key}"));
            } else if let Some((key, command)) = keyed_command(value, keys) {
                r.scripts.push((format!("{name} {key}"), Field { text: command.to_string(), dynamic }));
            }
        }
    }
}

/// `-c` for the character `c` of an option bundle: for ASCII, a slice of `SHORTS`; else
/// spelled in place (no allocation a letter, nor a UTF-8 check each time it is read).
fn short_option<'a>(c: char) -> OptionName<'a> {
    if c.is_ascii() {
        let at = 2 * c as usize;
        return OptionName::Text(&SHORTS[at..at + 2]);
    }
    let mut buf = [b'-'; 5];
    let len = 1 + c.encode_utf8(&mut buf[1..]).len();
    OptionName::Short(buf, len as u8)
}

/// `-` and each ASCII character, in order: `-\0-\x01…-~-\x7f`.
const SHORTS: &str = {
    const BYTES: [u8; 256] = {
        let mut bytes = [b'-'; 256];
        let mut c = 0;
        while c < 128 {
            bytes[2 * c + 1] = c as u8;
            c += 1;
        }
        bytes
    };
    match std::str::from_utf8(&BYTES) {
        Ok(text) => text,
        Err(_) => panic!("ASCII is UTF-8"),
    }
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::catalog::find;

    fn fields(s: &str) -> Vec<Field> {
        s.split(' ').map(Field::lit).collect()
    }

    #[test]
    fn options_read_as_the_program_reads_them() {
        let script = find("script").unwrap();
        // A bundle whose last option takes the next word; a long prefix; `--opt=value`.
        for (text, want) in [
            ("script -qfc CMD out", "CMD"),
            ("script --comm=CMD out", "CMD"),
            ("script --command CMD", "CMD"),
            ("script out -c CMD", "CMD"),
        ] {
            let words = fields(text);
            let r = script.read(&words, 1);
            assert_eq!(r.scripts.iter().map(|(_, f)| f.text.as_str()).collect::<Vec<_>>(), [want], "{text}");
        }
        let rm = find("rm").unwrap();
        let words = fields("rm --recurs --forc --ver x");
        let r = rm.read(&words, 1);
        assert_eq!(r.expanded, [(1, "--recursive"), (2, "--force")], "`--ver` is ambiguous");
        let ssh = find("ssh").unwrap();
        let words = fields("ssh -oProxyCommand=CMD host");
        let r = ssh.read(&words, 1);
        assert_eq!(r.scripts[0].1.text, "CMD");
        let words = [Field::lit("ssh"), Field::lit("-o"), Field::lit("proxycommand nc %h %p")];
        let r = ssh.read(&words, 1);
        assert_eq!(r.scripts[0].1.text, "nc %h %p", "keys compare without case");
        let tar = find("tar").unwrap();
        let words = fields("tar -cf x.tar --checkpoint-action=exec=CMD .");
        let r = tar.read(&words, 1);
        assert_eq!(r.scripts[0].1.text, "CMD");
        assert!(tar.read(&fields("tar -cf x.tar --checkpoint-action=echo ."), 1).scripts.is_empty());
    }
}
