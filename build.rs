//! Compiles the built-in rule packs (`rules/*.toml`) into a static table, so that start-up parses
//! no TOML and compiles no regex at all: each pattern is determinized here into DFAs
//! (`build/blob.rs`), serialized for the target's byte order into one blob that the binary
//! embeds and reads in place. A malformed pack fails the build with the file, line and rule id, exactly as a
//! malformed user file fails at run time.

#[path = "build/blob.rs"]
mod blob;
#[path = "build/programs.rs"]
mod catalogue;
#[path = "src/rules/exempt.rs"]
mod exempt;
#[path = "src/rules/prefilter/index.rs"]
#[allow(dead_code)]
mod index;
#[path = "src/rules/literals.rs"]
#[allow(dead_code)]
mod literals;
#[path = "src/shell/programs.rs"]
#[allow(dead_code)]
mod programs;
#[path = "src/rules/schema.rs"]
#[allow(dead_code)]
mod schema;

use std::collections::HashSet;
use std::path::Path;

use blob::Blob;

fn main() {
    link_unwinder_statically();
    link_with_build_id();
    let mut tables = Tables::default();
    let mut seen = HashSet::new();
    let mut blob = Blob::default();
    let mut programs = std::collections::BTreeSet::new();
    for path in toml_files("rules") {
        let pack = path.file_stem().unwrap().to_str().unwrap().to_string();
        emit_pack(&path, &pack, &mut seen, &mut blob, &mut programs, &mut tables);
    }
    let out_dir = std::env::var("OUT_DIR").unwrap();
    let dest = Path::new(&out_dir);
    let rust = tables.rust(&blob);
    std::fs::write(dest.join("builtin_rules.rs"), rust).expect("write builtin_rules.rs");
    std::fs::write(dest.join("builtin_text.txt"), &tables.strings.text).expect("write builtin_text.txt");
    std::fs::write(dest.join("builtin_literals.bin"), &tables.bytes).expect("write builtin_literals.bin");
    std::fs::write(dest.join("builtin_dfas.bin"), &blob.bytes).expect("write builtin_dfas.bin");
    std::fs::write(dest.join("builtin_dfas.txt"), blob.summary()).expect("write builtin_dfas.txt");
    // The built-in rules' prefilter index, built as `rules::prefilter` builds one at run time.
    let literals = tables.prefilter.iter().map(|(target, anchored, lits)| index::RuleLiterals {
        target: *target,
        anchored: *anchored,
        literals: lits.as_ref().map(|l| l.iter().map(|(l, s)| (l.as_slice(), *s)).collect()),
    });
    let prefilter = index::to_rust(&index::build(literals), "super::index");
    std::fs::write(dest.join("builtin_prefilter.rs"), prefilter).expect("write builtin_prefilter.rs");
    catalogue::emit(dest, &programs);
}

/// One rule's part of the prefilter index: target, anchored, literals with their sides.
type PrefilterInput = (u8, bool, Option<Vec<(Vec<u8>, index::Sides)>>);

/// The built-in rules as `rules::builtin` reads them: every string in one text, every literal in
/// one byte string, lists as ranges of span tables. Nothing in them is a pointer, so the loader
/// has nothing to relocate (`rules::lists`).
#[derive(Default)]
struct Tables {
    /// Every string, and the example lists as spans of it (the catalogue's packer).
    strings: catalogue::Packer,
    bytes: Vec<u8>,
    rules: Vec<String>,
    /// Spans of `bytes`: literal sets.
    literals: Vec<String>,
    /// Ranges of `literals`: conjunct lists.
    sets: Vec<String>,
    /// Spans of the text: the rules' exempt first words, each rule's sorted.
    exempt: Vec<String>,
    /// Per rule, in order: its target, whether its literals start the text, and its literals.
    prefilter: Vec<PrefilterInput>,
    /// Per entry of `literals`: its range of `bytes`.
    literals_bytes: Vec<(usize, usize)>,
    /// Per entry of `literals`: what may stand on its sides, as an index into `sides`.
    literal_sides: Vec<usize>,
    /// Every distinct `Sides`, anything first, and where each is in it.
    sides: Vec<literals::Sides>,
    side_ids: std::collections::HashMap<literals::Sides, usize>,
}

impl Tables {
    fn s(&mut self, v: &str) -> String {
        self.strings.s(v)
    }

    fn opt(&mut self, v: Option<&str>) -> String {
        v.map_or("None".to_string(), |v| format!("Some({})", self.s(v)))
    }

    fn texts(&mut self, items: &[String]) -> String {
        self.strings.list(items)
    }

    fn piece(&mut self, p: &blob::Piece) -> String {
        let gap = match p.gap {
            blob::Gap::Start => "Gap::Start".to_string(),
            blob::Gap::Star(c) => format!("Gap::Star({c:?})"),
            blob::Gap::OptStar(c, s) => format!("Gap::OptStar({c:?}, {s:?})"),
        };
        let sets: Vec<String> = p.gate.iter().map(|set| self.literals(set)).collect();
        let gate = format!("({}, {})", self.sets.len(), self.sets.len() + sets.len());
        self.sets.extend(sets);
        let (start, len) = p.span;
        format!("Piece {{ span: ({start}, {len}), dense: {}, gap: {gap}, gate: {gate} }}", p.dense)
    }

    /// Literals, each with its sides, as a range of `LITERALS`.
    fn literals(&mut self, items: &[(Vec<u8>, literals::Sides)]) -> String {
        if self.sides.is_empty() {
            self.sides.push(literals::ANY_SIDES);
            self.side_ids.insert(literals::ANY_SIDES, 0);
        }
        let first = self.literals.len();
        for (l, s) in items {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(l);
            self.literals.push(format!("({start}, {})", self.bytes.len()));
            self.literals_bytes.push((start, self.bytes.len()));
            let sides = &mut self.sides;
            let at = *self.side_ids.entry(*s).or_insert_with(|| {
                sides.push(*s);
                sides.len() - 1
            });
            self.literal_sides.push(at);
        }
        format!("({first}, {})", self.literals.len())
    }

    fn rust(&mut self, blob: &Blob) -> String {
        let pieces: Vec<String> = blob.pieces.iter().map(|p| self.piece(p)).collect();
        let table = |name: &str, ty: &str, items: &[String]| {
            format!("static {name}: [{ty}; {}] = [{}];\n", items.len(), items.join(", "))
        };
        let mut out = table("BUILTIN_RULES", "BuiltinRule", &self.rules);
        out += &table("TEXTS", "Span", &self.strings.lists);
        out += &table("LITERALS", "Span", &self.literals);
        let pairs: Vec<String> =
            self.literals_bytes.iter().map(|&(a, b)| format!("{:?}", index::end_pairs(&self.bytes[a..b]))).collect();
        out += &table("LITERAL_PAIRS", "(u16, u16)", &pairs);
        let ids: Vec<String> = self.literal_sides.iter().map(usize::to_string).collect();
        out += &table("LITERAL_SIDES", "u16", &ids);
        let sides: Vec<String> =
            self.sides.iter().map(|s| format!("({:?}, {}, {:?}, {})", s.0, s.1, s.2, s.3)).collect();
        out += &table("SIDE_TABLE", "Sides", &sides);
        out += &table("SETS", "Span", &self.sets);
        out += &table("EXEMPT_WORDS", "Span", &self.exempt);
        out += &table("PIECES", "Piece", &pieces);
        out
    }
}

/// The `*.toml` files of a folder, sorted, each a rerun trigger.
fn toml_files(dir: &str) -> Vec<std::path::PathBuf> {
    println!("cargo:rerun-if-changed={dir}");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}/ folder: {e}"))
        .map(|e| e.expect("folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    files
}

/// On Linux with glibc, links the unwinder (libgcc_eh) into the binary instead of loading
/// libgcc_s.so at every start. cmdguard aborts on panic and never unwinds, and loading libgcc_s
/// costs more than all of cmdguard's own start-up work: the library runs a CPU feature probe
/// (`cpuid`, a trap to the hypervisor on virtual machines) in its constructor. With the archive
/// first on the link line, `--as-needed` drops libgcc_s. A static build links it anyway.
fn link_unwinder_statically() {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" && !static_crt {
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
}

/// On Linux, has the linker write a build id (a hash over the whole binary) into the binary: the
/// rules cache keys its entries by it, so that no build reads what another build checked. Most
/// distributions' compilers ask for one already; this makes it so everywhere.
fn link_with_build_id() {
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-link-arg=-Wl,--build-id=sha1");
    }
}

fn fail(path: &Path, text: &str, offset: usize, what: &str) -> ! {
    let (line, col) = schema::line_col(text, offset);
    panic!("{}:{line}:{col}: {what}", path.display());
}

fn emit_pack(
    path: &Path,
    pack: &str,
    seen: &mut HashSet<String>,
    blob: &mut Blob,
    programs: &mut std::collections::BTreeSet<String>,
    t: &mut Tables,
) {
    let text = std::fs::read_to_string(path).expect("read rule pack");
    let file: schema::RuleFile = match toml::from_str(&text) {
        Ok(f) => f,
        Err(e) => fail(path, &text, e.span().map_or(0, |s| s.start), e.message()),
    };
    let lines = schema::LineIndex::new(&text);
    if file.settings.is_some() || !file.disable.is_empty() || !file.allows.is_empty() || !file.programs.is_empty() {
        fail(path, &text, 0, "a built-in pack holds only [[rule]] entries");
    }
    for rule in &file.rules {
        let id = rule.id.get_ref();
        let at = rule.id.span().start;
        if !id.starts_with(&format!("{pack}.")) {
            fail(path, &text, at, &format!("rule {id:?}: ids in this pack start with \"{pack}.\""));
        }
        if !seen.insert(id.clone()) {
            fail(path, &text, at, &format!("rule {id:?}: duplicate id"));
        }
        let patterns = [Some(&rule.pattern), rule.unless.as_ref(), rule.operand.as_ref(), rule.unless_operand.as_ref()];
        for p in patterns.into_iter().flatten() {
            if let Err(e) = literals::check_syntax(p.get_ref()) {
                fail(path, &text, p.span().start, &format!("rule {id:?}: invalid regex: {e}"));
            }
        }
        let mut dfa = |p: Option<&toml::Spanned<String>>| match p {
            None => "(0, 0)".to_string(),
            Some(p) => match blob.add(p.get_ref()) {
                Ok((first, end)) => format!("({first}, {end})"),
                Err(e) => fail(path, &text, p.span().start, &format!("rule {id:?}: {e}")),
            },
        };
        let dfas = format!(
            "[{}, {}, {}, {}]",
            dfa(Some(&rule.pattern)),
            dfa(rule.unless.as_ref()),
            dfa(rule.operand.as_ref()),
            dfa(rule.unless_operand.as_ref())
        );
        let (line, _) = lines.line_col(rule.id.span().start);
        let hir = literals::check_syntax(rule.pattern.get_ref()).expect("checked above");
        let with_sides = literals::prefilter_with_sides(&hir);
        let pre = with_sides.as_ref().map(|(anchored, lits, _)| (*anchored, lits.clone()));
        if let Some((true, lits)) = &pre {
            programs.extend(lits.iter().filter_map(|l| catalogue::program_word(l)));
        }
        let conjunct_sets = literals::conjuncts_with_sides(pre.as_ref(), &hir);
        let lits_sides = with_sides.map(|(_, lits, sides)| lits.into_iter().zip(sides).collect::<Vec<_>>());
        let (anchored, lits) = match (&pre, &lits_sides) {
            (Some((anchored, _)), Some(l)) => (*anchored, format!("Some({})", t.literals(l))),
            _ => (false, "None".to_string()),
        };
        t.prefilter.push((rule.target as u8, anchored, lits_sides));
        let sets: Vec<String> = conjunct_sets.iter().map(|set| t.literals(set)).collect();
        let conjuncts = format!("({}, {})", t.sets.len(), t.sets.len() + sets.len());
        t.sets.extend(sets);
        let words = rule.unless.as_ref().map_or_else(Vec::new, |u| {
            exempt::exempt_words(&literals::check_syntax(u.get_ref()).expect("checked above"))
        });
        let first = t.exempt.len();
        for w in words.iter().filter_map(|w| std::str::from_utf8(w).ok()) {
            let span = t.s(w);
            t.exempt.push(span);
        }
        let exempt = format!("({first}, {})", t.exempt.len());
        let opt = |t: &mut Tables, o: &Option<toml::Spanned<String>>| t.opt(o.as_ref().map(|s| s.get_ref().as_str()));
        let fields = [
            format!("id: {}", t.s(id)),
            format!("action: Action::{:?}", rule.action),
            format!("target: Target::{:?}", rule.target),
            format!("pattern: {}", t.s(rule.pattern.get_ref())),
            format!("unless: {}", opt(t, &rule.unless)),
            format!("operand: {}", opt(t, &rule.operand)),
            format!("unless_operand: {}", opt(t, &rule.unless_operand)),
            format!("reason: {}", t.s(&rule.reason)),
            format!("tip: {}", t.opt(rule.tip.as_deref())),
            format!("examples: {}", t.texts(&rule.examples)),
            format!("counterexamples: {}", t.texts(&rule.counterexamples)),
            format!("file: {}", t.s(&format!("rules/{pack}.toml"))),
            format!("line: {line}"),
            format!("literals: {lits}"),
            format!("anchored: {anchored}"),
            format!("conjuncts: {conjuncts}"),
            format!("exempt: {exempt}"),
            format!("dfas: {dfas}"),
        ];
        t.rules.push(format!("\n    BuiltinRule {{ {} }}", fields.join(", ")));
    }
}
