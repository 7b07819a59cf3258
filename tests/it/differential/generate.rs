//! A seeded generator of shell text for the differential harness: quoting of every kind,
//! variables assigned and then used, parameter defaults, substitutions, pipelines and lists,
//! subshells and groups, if/for/while/case, functions, here-documents, redirections, `eval`,
//! nested `bash -c` / `sh -c`, `command` / `env` / `exec`, aliases and brace expansion, over
//! the stub programs. The same seed always gives the same text.

/// splitmix64: small, fast and good enough to spread choices.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

const PROGRAMS: &[&str] = &["rm", "rm", "rm", "git", "git", "touch", "ls", "cat", "mkdir", "cp", "chmod"];
const ARGS: &[&str] = &[
    "-rf",
    "-f",
    "-r",
    "build",
    "src",
    "a.txt",
    "/tmp/x",
    "--force",
    "status",
    "push",
    "--hard",
    "HEAD",
    "reset",
    "-la",
    "--",
    "-",
    "x y",
    "*.o",
    "~",
    "~/proj",
    "/",
    "-n",
    "origin",
    "main",
    "--no-verify",
    "clean",
    "-fdx",
];

/// One command line, built from a seed.
pub fn script(seed: u64) -> String {
    let mut g = Gen { rng: Rng::new(seed), depth: 0, vars: Vec::new() };
    g.list(3)
}

struct Gen {
    rng: Rng,
    depth: usize,
    /// Variables assigned so far, with a value that is a program or an argument.
    vars: Vec<&'static str>,
}

impl Gen {
    fn list(&mut self, max: usize) -> String {
        let n = 1 + self.rng.below(max);
        let mut out = String::new();
        for i in 0..n {
            if i > 0 {
                out.push_str(self.rng.pick(&["; ", " && ", " || ", "\n", " | ", " & "]));
            }
            out.push_str(&self.command());
        }
        out
    }

    fn command(&mut self) -> String {
        if self.depth >= 3 {
            return self.simple();
        }
        self.depth += 1;
        let out = match self.rng.below(26) {
            0 => format!("( {} )", self.list(2)),
            1 => format!("{{ {}; }}", self.list(2)),
            2 => format!("if {}; then {}; else {}; fi", self.simple(), self.list(2), self.simple()),
            3 => format!("for i in a b; do {}; done", self.list(2)),
            4 => format!("while {}; do {}; break; done", self.simple(), self.list(2)),
            5 => {
                let arm = self.list(1);
                format!(
                    "case {} in a*) {arm} ;; *) {} ;; esac",
                    self.rng.pick(&["a", "b", "$1", "\"x\""]),
                    self.simple()
                )
            }
            6 => {
                let name = self.rng.pick(&["f", "clean", "g_1"]);
                format!("{name}() {{ {}; }}; {name}", self.list(2))
            }
            7 => self.assign_then_use(),
            8 => format!("eval {}", self.quoted_script()),
            9 => format!("{} -c {}", self.rng.pick(&["bash", "sh", "/bin/sh", "/bin/bash"]), self.quoted_script()),
            10 => format!(
                "{} {}",
                self.rng.pick(&["command", "env", "env FOO=1", "exec", "command -p", "env -i"]),
                self.simple()
            ),
            11 => format!("{} <<EOF\n{}\nEOF", self.rng.pick(&["cat", "bash", "sh"]), self.list(2)),
            12 => format!("{} <<'EOF'\n{}\nEOF", self.rng.pick(&["cat", "bash", "sh"]), self.list(2)),
            13 => format!("echo $({})", self.list(1)),
            14 => format!("x=`{}`", self.simple()),
            15 => format!("alias {}='{}'; {}", "ll", self.simple(), "ll"),
            16 => format!("! {}", self.simple()),
            17 => format!("{} | {}", self.simple(), self.simple()),
            18 => format!("time {}", self.simple()),
            19 => self.risky(),
            _ => self.simple(),
        };
        self.depth -= 1;
        out
    }

    /// Constructs where the shells are known to part from a plain reading: arithmetic or nested
    /// subshells, trap bodies, `let` subscripts, IFS splitting, dash's echo escapes, look-alike
    /// quotes and an escape byte beside a quote.
    fn risky(&mut self) -> String {
        let cmd = self.simple();
        let p = self.rng.pick(&["rm", "git", "touch"]);
        match self.rng.below(8) {
            0 => format!("(({cmd}))"),
            1 => format!("trap '{}' EXIT", cmd.replace('\'', "")),
            2 => format!("let 'a[$({})]'", cmd.replace('\'', "")),
            3 => format!("IFS=:; x={p}:{}; $x", self.rng.pick(&["-rf:build", "status", "a.txt:-f"])),
            4 => {
                let octal: String = p.bytes().take(1).map(|b| format!("\\0{b:o}")).collect();
                format!("$(echo '{octal}{}') {}", &p[1..], self.arg())
            }
            5 => format!("echo \u{ff07}; {cmd} ; echo \u{ff07}"),
            6 => format!("echo 'a\x1b' ; {cmd} ; echo \\'"),
            _ => format!("( ({cmd}) )"),
        }
    }

    /// A script quoted as one word, in one of the quoting styles.
    fn quoted_script(&mut self) -> String {
        let s = self.list(2).replace('\n', "; ");
        match self.rng.below(3) {
            0 if !s.contains('\'') => format!("'{s}'"),
            1 => {
                format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`"))
            }
            _ => format!("'{}'", s.replace('\'', "'\\''")),
        }
    }

    fn assign_then_use(&mut self) -> String {
        let (name, value) = match self.rng.below(3) {
            0 => ("p", self.rng.pick(&["rm", "git", "touch"])),
            1 => ("a", self.rng.pick(&["-rf", "build", "--hard", "/"])),
            _ => ("d", self.rng.pick(&["/tmp/x", "~", "x y"])),
        };
        self.vars.push(name);
        let quoted = if value.contains(' ') || value == "~" { format!("'{value}'") } else { value.to_string() };
        let assign = format!("{name}={quoted}");
        let sep = self.rng.pick(&["; ", " && ", "\n", " "]);
        if name == "p" {
            format!("{assign}{sep}${name} {}", self.arg())
        } else {
            format!("{assign}{sep}{} ${name}", self.program())
        }
    }

    fn simple(&mut self) -> String {
        let mut words = Vec::new();
        if self.rng.chance(10) {
            words.push(self.rng.pick(&["FOO=1", "LC_ALL=C", "x=$(ls)"]).to_string());
        }
        words.push(self.program());
        for _ in 0..self.rng.below(4) {
            words.push(self.arg());
        }
        if self.rng.chance(15) {
            words.push(self.rng.pick(&[">out", "2>/dev/null", ">>log", "<<<'text'", "2>&1", ">&2"]).to_string());
        }
        words.join(" ")
    }

    fn program(&mut self) -> String {
        let p = self.rng.pick(PROGRAMS);
        match self.rng.below(14) {
            0 => format!("'{p}'"),
            1 => format!("\"{p}\""),
            2 => format!("\\{p}"),
            3 => format!("{}''{}", &p[..1], &p[1..]),
            4 => format!("$'{p}'"),
            5 => format!("$'\\x{:02x}{}'", p.as_bytes()[0], &p[1..]),
            6 => format!("/bin/{p}"),
            7 => format!("/usr/bin/{p}"),
            8 => format!("${{u:-{p}}}"),
            9 => format!("{}\"\"{}", &p[..1], &p[1..]),
            _ => p.to_string(),
        }
    }

    fn arg(&mut self) -> String {
        let a = self.rng.pick(ARGS);
        let quoted_plain =
            if a.contains(' ') || a.contains('*') || a.contains('~') { format!("'{a}'") } else { a.to_string() };
        match self.rng.below(16) {
            0 => format!("'{a}'"),
            1 => format!("\"{a}\""),
            2 if !a.is_empty() => format!("\\{a}"),
            3 => format!("$'{a}'"),
            4 => format!("${{v:-{quoted_plain}}}"),
            5 => format!("{{{a},{}}}", self.rng.pick(ARGS).replace(' ', "")),
            6 => format!("$(echo {quoted_plain})"),
            7 if !self.vars.is_empty() => {
                let v = self.vars[self.rng.below(self.vars.len())];
                format!("\"${v}\"")
            }
            8 => format!("{a}\\\n"),
            _ => quoted_plain,
        }
    }
}
