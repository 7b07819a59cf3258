//! The rules cache's payload: everything `compile::parse_file` makes of one file (rules with
//! their patterns' sources and prefilter literals, allow entries and where they apply, `disable`,
//! settings, line numbers), in a compact binary form that reads back with no TOML or regex
//! parsing. Numbers are LEB128; a string or list is its length, then its bytes or items. The
//! file's name and layer are not stored: the same bytes may load from several places. Reading
//! checks every length against what is left and gives up on anything malformed, so even a payload
//! forged to pass the checksum cannot panic or allocate more than its own size.

use std::borrow::Cow;

use super::super::compile::{FileItems, FileSettings, Mode, NoTty};
use super::super::hooks::{HookApproval, HookSettings};
use super::super::literals::Sides;
use super::super::{Action, Allow, AllowContext, Layer, LazyRegex, LiteralSet, LiteralSides, Origin, Rule, Target};

/// The payload for `items`. Every field is named (no `..`), so a field added to a rule, an
/// allow entry or the settings does not compile until it is cached too.
pub fn encode(items: &FileItems) -> Vec<u8> {
    let FileItems { rules, allows, contexts, disable, settings, programs } = items;
    let mut w = Writer(Vec::with_capacity(64 + rules.len() * 160));
    let FileSettings {
        shell,
        timeout,
        session_ttl,
        no_tty,
        code_ttl,
        notify_command,
        bell,
        hooks,
        blast_radius_ms,
        mode,
        recovery_limit,
        recovery_ttl,
    } = settings;
    w.opt(shell.as_deref(), Writer::str);
    w.opt(*timeout, Writer::uint);
    w.opt(*session_ttl, Writer::uint);
    w.opt(*blast_radius_ms, Writer::uint);
    w.opt(*recovery_limit, Writer::uint);
    w.opt(*recovery_ttl, Writer::uint);
    w.byte(match no_tty {
        None => 0,
        Some(NoTty::Deny) => 1,
        Some(NoTty::Wait) => 2,
    });
    w.opt(*code_ttl, Writer::uint);
    w.opt(notify_command.as_deref(), Writer::str);
    w.byte(bell.map_or(0, |b| 1 + u8::from(b)));
    w.list(hooks, |w, (host, HookSettings { approval, wait })| {
        w.str(host);
        w.byte(match approval {
            None => 0,
            Some(HookApproval::Native) => 1,
            Some(HookApproval::Code) => 2,
            Some(HookApproval::Wait) => 3,
        });
        w.opt(*wait, Writer::uint);
    });
    w.byte(match mode {
        None => 0,
        Some(Mode::Enforce) => 1,
        Some(Mode::Audit) => 2,
    });
    w.list(disable, |w, (name, line, col)| {
        w.str(name);
        w.uint(*line as u64);
        w.uint(*col as u64);
    });
    w.list(programs, |w, (text, line)| {
        w.str(text);
        w.uint(*line as u64);
    });
    w.list(rules, encode_rule);
    w.list(allows, |w, a| {
        let Allow { command, pattern, reason, origin } = a;
        w.opt(command.as_deref(), Writer::str);
        w.opt(pattern.as_ref().map(|p| &*p.source), Writer::str);
        w.opt(reason.as_deref(), Writer::str);
        w.uint(origin.line as u64);
    });
    w.list(contexts, |w, c| match c {
        AllowContext::Top => w.byte(0),
        AllowContext::Any => w.byte(1),
        AllowContext::At(place) => {
            w.byte(2);
            w.str(place);
        }
    });
    w.0
}

fn encode_rule(w: &mut Writer, r: &Rule) {
    let Rule {
        id,
        action,
        target,
        pattern,
        unless,
        operand,
        unless_operand,
        reason,
        tip,
        examples,
        counterexamples,
        origin,
        literals,
        anchored,
        sides,
        conjuncts,
        // Only built-in rules have exempt words.
        exempt: _,
    } = r;
    w.str(id);
    w.byte(match action {
        Action::Ask => 0,
        Action::Deny => 1,
    });
    w.byte(match target {
        Target::Segment => 0,
        Target::Pipeline => 1,
        Target::Line => 2,
    });
    w.uint(origin.line as u64);
    w.str(&pattern.source);
    for p in [unless, operand, unless_operand] {
        w.opt(p.as_ref().map(|p| &*p.source), Writer::str);
    }
    w.str(reason);
    w.opt(tip.as_deref(), Writer::str);
    for texts in [examples, counterexamples] {
        w.items(texts.len(), texts.iter(), Writer::str);
    }
    w.opt(literals.as_ref(), Writer::literal_set);
    w.byte(u8::from(*anchored));
    w.items(sides.len(), (0..sides.len()).map(|i| sides.get(i)), |w, s| w.sides(&s));
    w.items(conjuncts.len(), (0..conjuncts.len()).filter_map(|i| conjuncts.get(i)), |w, set| w.literal_set(&set));
}

/// What `encode` wrote, as loaded from `file` in `layer`; `None` if the payload is malformed.
/// Patterns come back uncompiled (`LazyRegex::user`).
pub fn decode(payload: &[u8], file: &str, layer: Layer) -> Option<FileItems> {
    let mut r = Reader(payload);
    let shell = r.opt(Reader::string)?;
    let timeout = r.opt(Reader::uint)?;
    let session_ttl = r.opt(Reader::uint)?;
    let blast_radius_ms = r.opt(Reader::uint)?;
    let recovery_limit = r.opt(Reader::uint)?;
    let recovery_ttl = r.opt(Reader::uint)?;
    let no_tty = match r.byte()? {
        0 => None,
        1 => Some(NoTty::Deny),
        2 => Some(NoTty::Wait),
        _ => return None,
    };
    let code_ttl = r.opt(Reader::uint)?;
    let notify_command = r.opt(Reader::string)?;
    let bell = match r.byte()? {
        0 => None,
        1 => Some(false),
        2 => Some(true),
        _ => return None,
    };
    let hooks = r.list(|r| {
        let host = r.string()?;
        let approval = match r.byte()? {
            0 => None,
            1 => Some(HookApproval::Native),
            2 => Some(HookApproval::Code),
            3 => Some(HookApproval::Wait),
            _ => return None,
        };
        Some((host, HookSettings { approval, wait: r.opt(Reader::uint)? }))
    })?;
    let mode = match r.byte()? {
        0 => None,
        1 => Some(Mode::Enforce),
        2 => Some(Mode::Audit),
        _ => return None,
    };
    let disable = r.list(|r| Some((r.string()?, r.usize()?, r.usize()?)))?;
    let programs = r.list(|r| Some((r.string()?, r.usize()?)))?;
    let origin = |line| Origin { layer, file: Cow::Owned(file.to_string()), line };
    let rules = r.list(|r| decode_rule(r, &origin))?;
    let allows = r.list(|r| {
        let command = r.opt(Reader::string)?;
        let pattern = r.opt(|r| r.string().map(LazyRegex::user))?;
        let reason = r.opt(Reader::string)?;
        Some(Allow { command, pattern, reason, origin: origin(r.usize()?) })
    })?;
    let contexts = r.list(|r| match r.byte()? {
        0 => Some(AllowContext::Top),
        1 => Some(AllowContext::Any),
        2 => r.string().map(AllowContext::At),
        _ => None,
    })?;
    let settings = FileSettings {
        shell,
        timeout,
        session_ttl,
        no_tty,
        code_ttl,
        notify_command,
        bell,
        hooks,
        blast_radius_ms,
        mode,
        recovery_limit,
        recovery_ttl,
    };
    (r.0.is_empty() && contexts.len() == allows.len()).then_some(FileItems {
        rules,
        allows,
        contexts,
        disable,
        settings,
        programs,
    })
}

fn decode_rule(r: &mut Reader<'_>, origin: &dyn Fn(usize) -> Origin) -> Option<Rule> {
    let id = r.string()?;
    let action = match r.byte()? {
        0 => Action::Ask,
        1 => Action::Deny,
        _ => return None,
    };
    let target = match r.byte()? {
        0 => Target::Segment,
        1 => Target::Pipeline,
        2 => Target::Line,
        _ => return None,
    };
    let line = r.usize()?;
    let pattern = LazyRegex::user(r.string()?);
    let mut optional = || r.opt(|r| r.string().map(LazyRegex::user));
    let (unless, operand, unless_operand) = (optional()?, optional()?, optional()?);
    let reason = r.string()?;
    let tip = r.opt(Reader::string)?;
    let examples = r.list(Reader::string)?;
    let counterexamples = r.list(Reader::string)?;
    let literals = r.opt(literal_set)?;
    let anchored = match r.byte()? {
        0 => false,
        1 => true,
        _ => return None,
    };
    let sides = r.list(Reader::sides)?;
    let conjuncts = r.list(literal_set)?;
    Some(Rule {
        id: Cow::Owned(id),
        action,
        target,
        pattern,
        unless,
        operand,
        unless_operand,
        reason: Cow::Owned(reason),
        tip: tip.map(Cow::Owned),
        examples: examples.into(),
        counterexamples: counterexamples.into(),
        origin: origin(line),
        literals,
        anchored,
        sides: LiteralSides::Owned(sides),
        conjuncts: conjuncts.into(),
        exempt: &[],
    })
}

fn literal_set(r: &mut Reader<'_>) -> Option<LiteralSet> {
    r.list(|r| r.bytes().map(<[u8]>::to_vec)).map(LiteralSet::Owned)
}

struct Writer(Vec<u8>);

impl Writer {
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    fn uint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push(n as u8 | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.uint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn opt<T>(&mut self, value: Option<T>, write: impl FnOnce(&mut Writer, T)) {
        match value {
            None => self.byte(0),
            Some(v) => {
                self.byte(1);
                write(self, v);
            }
        }
    }

    fn list<T>(&mut self, items: &[T], mut write: impl FnMut(&mut Writer, &T)) {
        self.uint(items.len() as u64);
        items.iter().for_each(|item| write(self, item));
    }

    /// A list of `len` items, as `list` writes it.
    fn items<T>(&mut self, len: usize, items: impl Iterator<Item = T>, mut write: impl FnMut(&mut Writer, T)) {
        self.uint(len as u64);
        items.for_each(|item| write(self, item));
    }

    fn literal_set(&mut self, set: &LiteralSet) {
        self.items(set.len(), set.iter(), Writer::bytes);
    }

    fn sides(&mut self, s: &Sides) {
        s.0.iter().chain(&s.2).for_each(|&w| self.uint(w));
        self.byte(u8::from(s.1) | u8::from(s.3) << 1);
    }
}

/// The payload not read yet.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn uint(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(n);
            }
        }
        None
    }

    fn sides(&mut self) -> Option<Sides> {
        let mut words = [0u64; 8];
        for w in &mut words {
            *w = self.uint()?;
        }
        let edges = self.byte()?;
        if edges > 3 {
            return None;
        }
        let (before, after) = words.split_at(4);
        Some((before.try_into().ok()?, edges & 1 != 0, after.try_into().ok()?, edges & 2 != 0))
    }

    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.uint()?).ok()
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.usize()?;
        let (b, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(b)
    }

    fn string(&mut self) -> Option<String> {
        std::str::from_utf8(self.bytes()?).ok().map(str::to_string)
    }

    fn opt<T>(&mut self, read: impl FnOnce(&mut Reader<'a>) -> Option<T>) -> Option<Option<T>> {
        match self.byte()? {
            0 => Some(None),
            1 => read(self).map(Some),
            _ => None,
        }
    }

    fn list<T>(&mut self, mut read: impl FnMut(&mut Reader<'a>) -> Option<T>) -> Option<Vec<T>> {
        let n = self.usize()?;
        // Every item takes at least a byte: a longer count is malformed, and no count allocates
        // more items than the payload has bytes left.
        if n > self.0.len() {
            return None;
        }
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(read(self)?);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::compile::parse_file;

    /// A file with every kind of entry and field a rules file may hold.
    const EVERYTHING: &str = r#"disable = ["git", "deploy.prod"]

[settings]
shell = "/bin/bash"
timeout = "90s"
session_ttl = 3600
no_tty = "wait"
approval_code_ttl = "5m"
notify_command = "true"
bell = false
mode = "audit"

[hook.codex]
approval = "wait"
wait = "40s"

[hook.claude-code]
approval = "code"

[[rule]]
id = "deploy.prod"
action = "deny"
target = "line"
pattern = '^make\s+deploy\b'
unless = '--dry-run'
reason = "Deploys to production."
tip = "Run `make deploy-staging` first."
examples = ["make deploy", "make  deploy now"]
counterexamples = ["make deploy --dry-run"]

[[rule]]
id = "tools.rm-root"
action = "ask"
pattern = '^(rm|unlink)\s'
operand = '^/'
unless_operand = '^/tmp/'
reason = "Removes files at the root."

[[rule]]
id = "pipe.curl-sh"
action = "ask"
target = "pipeline"
pattern = 'curl\s.*\|\s*(ba)?sh'
reason = "Runs a downloaded script: é ✓."

[[rule]]
id = "any.word"
action = "ask"
pattern = '\w+'
reason = "No literal text."

[[allow]]
command = "make deploy --dry-run"
reason = "harmless"

[[allow]]
pattern = '^rm -rf target/'
context = "any"

[[allow]]
pattern = '^ls\b'
context = "ssh prod"
"#;

    fn describe(items: &FileItems) -> String {
        let source = |p: &Option<LazyRegex>| p.as_ref().map(|p| p.source.to_string());
        let mut out = format!("{:?} {:?} {:?}\n", items.settings, items.disable, items.contexts);
        for r in &items.rules {
            let patterns = (&r.pattern.source, source(&r.unless), source(&r.operand), source(&r.unless_operand));
            let text = (&r.reason, &r.tip, &r.examples, &r.counterexamples);
            let prefilter = (&r.literals, r.anchored, &r.sides, &r.conjuncts);
            out +=
                &format!("{} {:?} {:?} {patterns:?} {text:?} {prefilter:?} {:?}\n", r.id, r.action, r.target, r.origin);
        }
        for a in &items.allows {
            out += &format!("{:?} {:?} {:?} {:?}\n", a.command, source(&a.pattern), a.reason, a.origin);
        }
        out
    }

    #[test]
    fn a_decoded_file_is_the_parsed_file() {
        let items = parse_file("a/rules.toml", EVERYTHING, Layer::User).unwrap();
        let payload = encode(&items);
        let back = decode(&payload, "a/rules.toml", Layer::User).expect("decodes");
        assert_eq!(describe(&back), describe(&items));
        // Nothing is lost that `describe` does not show: encoding again gives the same bytes.
        assert_eq!(encode(&back), payload);
        // The place comes from the load, not the payload.
        let elsewhere = decode(&payload, "b/.cmdguard.toml", Layer::Project).unwrap();
        assert!(
            elsewhere.rules.iter().all(|r| r.origin.file == "b/.cmdguard.toml" && r.origin.layer == Layer::Project)
        );
        assert_eq!(elsewhere.allows[2].origin.line, items.allows[2].origin.line);
        // Decoding compiles nothing; parsing compiled every pattern it checked.
        assert!(back.rules.iter().all(|r| !r.pattern.is_ready()) && items.rules.iter().all(|r| r.pattern.is_ready()));
        assert!(back.allows.iter().filter_map(|a| a.pattern.as_ref()).all(|p| !p.is_ready()));
    }

    #[test]
    fn a_malformed_payload_is_refused_without_panicking() {
        let payload = encode(&parse_file("t", EVERYTHING, Layer::User).unwrap());
        for n in 0..payload.len() {
            assert!(decode(&payload[..n], "t", Layer::User).is_none(), "a payload cut at {n} decoded");
        }
        let mut longer = payload.clone();
        longer.push(0);
        assert!(decode(&longer, "t", Layer::User).is_none());
        for i in 0..payload.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = payload.clone();
                bad[i] ^= flip;
                let _ = decode(&bad, "t", Layer::User);
            }
        }
        // A count far beyond the payload allocates nothing.
        assert!(decode(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f], "t", Layer::User).is_none());
    }
}
