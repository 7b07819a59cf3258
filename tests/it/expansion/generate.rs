//! Cases for the expansion test: a seeded generator of prefixes (assignments and the builtins
//! that set variables) and words (quoting, parameter operators, arrays, braces, tildes,
//! substitutions, globs), and a fixed list of tricky cases. Each fragment says whether dash
//! reads it too; a case goes to dash only when all of its fragments do.

/// One case: commands run first, then the words given to `printf`.
#[derive(Debug, Clone)]
pub struct Case {
    pub prefix: String,
    pub words: Vec<String>,
    /// Every fragment is POSIX shell: dash runs the case too.
    pub posix: bool,
}

/// splitmix64: small and good enough to spread choices; the same seed gives the same cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A fragment, with each `«V»` replaced by a value, `«N»` by a variable name and `«W»` by
    /// a word.
    fn pick(&mut self, items: &[(&str, bool)], posix: &mut bool) -> String {
        let (text, is_posix) = items[self.below(items.len())];
        *posix &= is_posix;
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find('«') {
            out.push_str(&rest[..at]);
            let hole = &rest[at..];
            let end = hole.find('»').expect("a hole ends with »") + '»'.len_utf8();
            let items = match &hole[..end] {
                "«V»" => VALUES,
                "«N»" => NAMES,
                "«W»" => PLAIN,
                other => panic!("unknown hole {other}"),
            };
            out.push_str(&self.pick(items, posix));
            rest = &hole[end..];
        }
        out.push_str(rest);
        out
    }
}

/// Variables: `x` and `y` are assigned by prefixes, `CG_ENV` and `CG_EMPTY` come from the
/// environment (cmdguard cannot know them), `u` is never set.
const NAMES: &[(&str, bool)] =
    &[("x", true), ("x", true), ("x", true), ("y", true), ("CG_ENV", true), ("CG_EMPTY", true), ("u", true)];

/// Operator words inside `${x…}`.
const PLAIN: &[(&str, bool)] = &[("d", true), ("-rf", true), ("a.txt", true), ("'q r'", true), ("", true)];

/// Values assigned, as shell text.
const VALUES: &[(&str, bool)] = &[
    ("a", true),
    ("'a b'", true),
    ("'  lead trail  '", true),
    ("x:y::z", true),
    ("'*.txt'", true),
    ("'*.none'", true),
    ("''", true),
    ("-rf", true),
    ("'{p,q}'", true),
    ("'~'", true),
    ("~", true),
    ("~/d", true),
    ("'$y'", true),
    ("$(echo sub)", true),
    ("\"$(echo 'two  words')\"", true),
    ("`echo bq`", true),
    ("ＡＢ", true),
    ("$'t\\tab'", false),
    ("$'c\\rr'", false),
    ("$'v\\vt'", false),
    ("$'n\\nl'", false),
    ("\"$x\"", true),
    ("$x", true),
    ("\"$CG_ENV\"", true),
    ("y", true),
    ("1+2", true),
    ("'a,b'", true),
];

const PREFIXES: &[(&str, bool)] = &[
    ("x=«V»", true),
    ("x=«V»", true),
    ("y=«V»", true),
    ("x+=«V»", false),
    ("IFS=:", true),
    ("IFS=' :'", true),
    ("IFS=", true),
    ("IFS=,", true),
    ("IFS=$'\\n'", false),
    ("unset IFS", true),
    ("export x=«V»", true),
    ("export x+=«V»", false),
    ("declare x=«V»", false),
    ("declare -u x=«V»", false),
    ("declare -l x=«V»", false),
    ("declare -i x=«V»", false),
    ("typeset y=«V»", false),
    ("local x=«V»", false),
    ("readonly y=«V»", true),
    ("unset x", true),
    ("unset -v x", true),
    ("printf -v x '%s' «V»", false),
    ("read x <<< «V»", false),
    ("read -r x y <<< «V»", false),
    ("f() { x=«V»; }; f", true),
    ("f() { x=«V»; }", true),
    ("f() { local x=«V»; }; f", false),
    ("for x in «V»; do :; done", true),
    ("x=«V» true", true),
    ("x=«V» :", true),
    (": ${x:=«V»}", true),
    (": ${x=«V»}", true),
    ("true && x=«V»", true),
    ("false || x=«V»", true),
    ("false && x=«V»", true),
    ("(x=«V»)", true),
    ("{ x=«V»; }", true),
    ("x=«V» | true", true),
    ("a=(p 'q r' s)", false),
    ("a=(p 'q r' s); a[1]=z", false),
    ("set -- p 'q r'", true),
    ("set -f", true),
    ("x=y; y=«V»", true),
    ("declare -n x=y", false),
    ("x=$'\\x41'", false),
    ("eval x=«V»", true),
    ("let x=2+3", false),
    ("((x=4))", false),
    ("x=5; ((x++))", false),
    ("mapfile -t x <<< «V»", false),
    ("getopts ab: x -a", true),
    ("cd dir", true),
    ("shift", true),
];

const WORDS: &[(&str, bool)] = &[
    ("$«N»", true),
    ("$«N»", true),
    ("\"$«N»\"", true),
    ("${«N»}", true),
    ("\"${«N»}\"", true),
    ("${«N»:-«W»}", true),
    ("\"${«N»:-d e}\"", true),
    ("${«N»-«W»}", true),
    ("${«N»:=«W»}", true),
    ("${«N»=«W»}", true),
    ("${«N»:+«W»}", true),
    ("${«N»+«W»}", true),
    ("${#«N»}", true),
    ("${«N»#?}", true),
    ("${«N»%?}", true),
    ("${«N»##*:}", true),
    ("${«N»//a/b}", false),
    ("${«N»:1:2}", false),
    ("${«N»^^}", false),
    ("${«N»,,}", false),
    ("${!«N»}", false),
    ("$«N»$«N»", true),
    ("\"$«N»\"$«N»", true),
    ("pre$«N»", true),
    ("$«N».suf", true),
    ("'$«N»'", true),
    ("\\$«N»", true),
    ("${«N»}{a,b}", false),
    ("$«N»{a,b}", false),
    ("{a,b}c", false),
    ("{a,\"b c\"}", false),
    ("'{a,b}'", true),
    ("{a,'b}'", false),
    ("\"{\"a,b}", false),
    ("{1..3}", false),
    ("{a..c}", false),
    ("x{,}", false),
    ("{a,b}{c,d}", false),
    ("\\{a,b}", false),
    ("{a,$«N»}", false),
    ("$'a\\x41'", false),
    ("$'\\u00e9'", false),
    ("$'\\101\\0'", false),
    ("$'\\cA'", false),
    ("$'\\q'", false),
    ("$\"s\"", false),
    ("~", true),
    ("~/x", true),
    ("a=~", true),
    ("a=~/x:~/y", true),
    ("'~'", true),
    ("~+", true),
    ("~-", true),
    ("~root", true),
    ("\"~\"", true),
    ("$(echo a b)", true),
    ("\"$(echo a  b)\"", true),
    ("$(echo -n x)", true),
    ("$(echo -e 'a\\tb')", false),
    ("$(echo 'a\\tb')", true),
    ("$(printf '%s-' a b)", true),
    ("$(printf '%d' 010)", true),
    ("`echo q`", true),
    ("\"`echo q  r`\"", true),
    ("$(echo \"$«N»\")", true),
    ("$(echo)", true),
    ("$(printf 'a\\n\\n')", true),
    ("*.txt", true),
    ("*.none", true),
    ("?.log", true),
    ("[ab].txt", true),
    ("\"*.txt\"", true),
    ("dir/*", true),
    ("$HOME", true),
    ("${HOME:-/tmp}", true),
    ("$PWD", true),
    ("${PWD}/z", true),
    ("$1", true),
    ("\"$@\"", true),
    ("$@", true),
    ("$#", true),
    ("$((1+2))", true),
    ("a\\ b", true),
    ("\"a\"'b'c", true),
    ("ｒｍ", true),
    ("${a[@]}", false),
    ("\"${a[@]}\"", false),
    ("${a[1]}", false),
    ("\"${a[*]}\"", false),
    ("${#a[@]}", false),
    ("$a", false),
];

/// The case for `seed`: up to three prefixes and one to three words.
pub fn case(seed: u64) -> Case {
    let mut rng = Rng(seed);
    let mut posix = true;
    let prefixes: Vec<String> = (0..rng.below(4)).map(|_| rng.pick(PREFIXES, &mut posix)).collect();
    // Mostly one word: a word cmdguard marks unknown hides the others of its command.
    let n = [1, 1, 1, 1, 2, 2, 2, 3][rng.below(8)];
    let words: Vec<String> = (0..n).map(|_| rng.pick(WORDS, &mut posix)).collect();
    Case { prefix: prefixes.join("; "), words, posix }
}

/// Hand-written cases, each a known trap for a static reader.
pub fn tricky() -> Vec<Case> {
    let bash = |prefix: &str, words: &[&str]| Case {
        prefix: prefix.to_string(),
        words: words.iter().map(|w| w.to_string()).collect(),
        posix: false,
    };
    let both = |prefix: &str, words: &[&str]| Case { posix: true, ..bash(prefix, words) };
    vec![
        both("x='a  b'", &["$x", "\"$x\""]),
        both("x=' a '", &["<$x>"]),
        both("IFS=:; x=a::b", &["$x"]),
        both("IFS=' :'; x='a : b'", &["$x"]),
        both("x=a; unset x", &["${x-d}", "${x:-e}", "${x+w}"]),
        both("x=", &["${x-d}", "${x:-e}", "${x+w}", "${x:+v}"]),
        both("x=", &["$x", "${x:=d}", "$x"]),
        both("x=a; f() { x=b; }; f", &["$x"]),
        both("f() { x=b; }; x=a; f", &["$x"]),
        both("x=a; for x in b; do :; done", &["$x"]),
        bash("x=a; printf -v x %s b", &["$x"]),
        bash("x=a; read x <<< b", &["$x"]),
        bash("x=a; export x+=b", &["$x"]),
        bash("declare -u x=abc", &["$x"]),
        bash("declare -i x=1+2", &["$x"]),
        bash("x=a; local x=b", &["$x"]),
        both("x=$(printf 'a\\rb')", &["$x"]),
        bash("x=$'a\\rb'", &["$x"]),
        bash("x=$'a\\vb\\fc'", &["$x"]),
        bash("", &["{a,b}\"{c,d}\""]),
        bash("", &["{a,'b}'", "{1..3}", "{a..c}", "{01..3}"]),
        bash("x=/tmp", &["$x{a,b}", "${x}{a,b}"]),
        both("", &["~+", "~-", "~root"]),
        both("x=a", &["${CG_ENV:-d}", "${CG_ENV+w}", "${CG_EMPTY:-d}", "${CG_EMPTY-d}"]),
        both("x=b a=1 true", &["$x", "$a"]),
        both("x=b :", &["$x"]),
        both("readonly x=a; x=b", &["$x"]),
        bash("x=y; y=z", &["${!x}"]),
        bash("a=(p 'q r')", &["${a[@]}", "$a"]),
        both("set -- p 'q r'", &["$1", "$@", "\"$@\"", "$#"]),
        both("x='*.txt'", &["$x", "\"$x\""]),
        both("", &["$(echo '  a  ')", "\"$(echo '  a  ')\""]),
        both("", &["$(echo a\\\\tb)", "`echo a\\\\\\\\b`"]),
        bash("", &["$(echo -e 'a\\x41')", "$(echo -E 'a\\tb')"]),
        both("", &["$(printf '%s\\n' a b)", "$(printf '%5s' a)", "$(printf '%b' 'a\\tb')"]),
        both("x=-n", &["$(echo $x a)"]),
        both("x=a; x=b | true", &["$x"]),
        both("x=a; (x=b)", &["$x"]),
        both("eval 'x=b'", &["$x"]),
        bash("x=a; ((x=4))", &["$x"]),
        bash("x=a; let x=4", &["$x"]),
        bash("x=a; mapfile -t x <<< b", &["$x"]),
        both("x=a; getopts b x -b", &["$x"]),
        both("x=a; cd dir", &["$x", "$PWD", "${PWD}"]),
    ]
}
