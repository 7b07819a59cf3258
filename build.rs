//! Compiles the built-in rule packs (`rules/*.toml`) into a static table, so that start-up parses
//! no TOML and compiles no regex at all: each pattern is determinized here into DFAs
//! (`build/blob.rs`), serialized for the target's byte order into one blob that the binary
//! embeds and reads in place. A malformed pack fails the build with the file, line and rule id, exactly as a
//! malformed user file fails at run time.

#[path = "build/blob.rs"]
mod blob;
#[path = "build/programs.rs"]
mod catalogue;
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
use std::fmt::Write as _;
use std::path::Path;

use blob::Blob;

fn main() {
    link_unwinder_statically();
    link_with_build_id();
    let mut out = String::from("pub static BUILTIN_RULES: &[BuiltinRule] = &[\n");
    let mut seen = HashSet::new();
    let mut blob = Blob::default();
    let mut programs = std::collections::BTreeSet::new();
    for path in toml_files("rules") {
        let pack = path.file_stem().unwrap().to_str().unwrap().to_string();
        emit_pack(&path, &pack, &mut seen, &mut blob, &mut programs, &mut out);
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").unwrap();
    let dest = Path::new(&out_dir);
    std::fs::write(dest.join("builtin_rules.rs"), out).expect("write builtin_rules.rs");
    std::fs::write(dest.join("builtin_dfas.bin"), &blob.bytes).expect("write builtin_dfas.bin");
    std::fs::write(dest.join("builtin_dfas.txt"), blob.summary()).expect("write builtin_dfas.txt");
    catalogue::emit(dest, &programs);
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

/// A byte-string literal as a `Cow<'static, [u8]>` constant.
fn bytes_cow(b: &[u8]) -> String {
    format!("Cow::Borrowed(b\"{}\" as &[u8])", b.escape_ascii())
}

/// A list of strings as a `&'static [Cow<'static, str>]` constant.
fn str_cows(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| format!("Cow::Borrowed({s:?})")).collect();
    format!("&[{}]", items.join(", "))
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
    out: &mut String,
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
            None => "&[]".to_string(),
            Some(p) => match blob.add(p.get_ref()) {
                Ok(pieces) => pieces,
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
        let pre = literals::prefilter(rule.pattern.get_ref());
        if let Some((true, lits)) = &pre {
            programs.extend(lits.iter().filter_map(|l| catalogue::program_word(l)));
        }
        let conjunct_sets = literals::conjuncts_after(pre.as_ref(), rule.pattern.get_ref());
        let (anchored, lits) = match pre {
            Some((anchored, l)) => {
                let items: Vec<String> = l.iter().map(|b| bytes_cow(b)).collect();
                (anchored, format!("Some(&[{}])", items.join(", ")))
            }
            None => (false, "None".to_string()),
        };
        let conjuncts: Vec<String> = conjunct_sets
            .iter()
            .map(|set| format!("Cow::Borrowed(&[{}])", set.iter().map(|b| bytes_cow(b)).collect::<Vec<_>>().join(", ")))
            .collect();
        let conjuncts = format!("&[{}]", conjuncts.join(", "));
        let opt = |o: &Option<toml::Spanned<String>>| match o {
            Some(s) => format!("Some({:?})", s.get_ref()),
            None => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    BuiltinRule {{ id: {id:?}, action: Action::{:?}, target: Target::{:?}, pattern: {:?}, \
             unless: {}, operand: {}, unless_operand: {}, reason: {:?}, tip: {:?}, examples: {}, \
             counterexamples: {}, file: {:?}, line: {line}, literals: {lits}, anchored: {anchored}, conjuncts: {conjuncts}, \
             dfas: {dfas} }},",
            rule.action,
            rule.target,
            rule.pattern.get_ref(),
            opt(&rule.unless),
            opt(&rule.operand),
            opt(&rule.unless_operand),
            rule.reason,
            rule.tip,
            str_cows(&rule.examples),
            str_cows(&rule.counterexamples),
            format!("rules/{pack}.toml"),
        );
    }
}
