//! The corpus: every case in tests/corpus/*.txt (`pass|ask|deny COMMAND`) is checked through
//! `check --batch` with bash as the shell, or with dash for a case marked `VERDICT@dash`;
//! recall and false-alarm rate are printed per pack (one file per pack, plus engine.txt and
//! soundness.txt for the analysis itself). See them with `cargo test corpus -- --nocapture`.

use crate::env::{TestEnv, stdout};

struct Case {
    file: String,
    line: usize,
    expect: String,
    /// The shell that runs it: bash, or dash (`/bin/sh` on Debian and Ubuntu).
    shell: &'static str,
    command: String,
}

fn cases() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "txt")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (expect, command) = line.split_once(' ').unwrap_or_else(|| panic!("{file}:{}: no command", i + 1));
            let (expect, shell) = match expect.split_once('@') {
                Some((v, "dash")) => (v, "dash"),
                Some((_, other)) => panic!("{file}:{}: unknown shell {other:?}", i + 1),
                None => (expect, "bash"),
            };
            assert!(matches!(expect, "pass" | "ask" | "deny"), "{file}:{}: bad verdict {expect:?}", i + 1);
            out.push(Case { file: file.clone(), line: i + 1, expect: expect.into(), shell, command: command.into() });
        }
    }
    out
}

#[test]
fn corpus_verdicts() {
    let cases = cases();
    let stop = cases.iter().filter(|c| c.expect != "pass").count();
    assert!(
        stop >= 1_500 && cases.len() - stop >= 1_500,
        "corpus too small: {stop} to stop, {} to pass",
        cases.len() - stop
    );
    let t = TestEnv::new();
    let mut results: Vec<serde_json::Value> = vec![serde_json::Value::Null; cases.len()];
    for shell in ["bash", "dash"] {
        let path = which(shell);
        let mine: Vec<usize> = (0..cases.len()).filter(|&i| cases[i].shell == shell).collect();
        let input: String = mine.iter().map(|&i| format!("{}\n", cases[i].command)).collect();
        let out = stdout(&t.run_with_input(&["--shell", &path, "check", "--batch"], &input));
        let got: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(got.len(), mine.len(), "{shell}");
        for (i, r) in mine.into_iter().zip(got) {
            results[i] = r;
        }
    }
    let mut failures = Vec::new();
    let mut stats: std::collections::BTreeMap<&str, [usize; 4]> = Default::default();
    for (case, result) in cases.iter().zip(&results) {
        let got = match result["verdict"].as_str().unwrap() {
            "allow" => "pass",
            v => v,
        };
        // [stop cases, stopped, pass cases, false alarms]
        let s = stats.entry(&case.file).or_default();
        if case.expect == "pass" {
            s[2] += 1;
            s[3] += usize::from(got != "pass");
        } else {
            s[0] += 1;
            s[1] += usize::from(got != "pass");
        }
        if got != case.expect {
            failures.push(format!(
                "{}:{}: expected {}, got {} {}: {}",
                case.file, case.line, case.expect, got, result["rules"], case.command
            ));
        }
    }
    let pct = |n: usize, d: usize| if d == 0 { 100.0 } else { 100.0 * n as f64 / d as f64 };
    for (file, [stop, stopped, pass, alarms]) in &stats {
        let pack = file.trim_end_matches(".txt");
        println!(
            "{pack:15} recall {:5.1}% ({stopped}/{stop})   false alarms {:4.1}% ({alarms}/{pass})",
            pct(*stopped, *stop),
            pct(*alarms, *pass)
        );
    }
    let total = stats.values().fold([0; 4], |a, s| [a[0] + s[0], a[1] + s[1], a[2] + s[2], a[3] + s[3]]);
    println!(
        "{:15} recall {:5.1}% ({}/{})   false alarms {:4.1}% ({}/{})",
        "total",
        pct(total[1], total[0]),
        total[1],
        total[0],
        pct(total[3], total[2]),
        total[3],
        total[2]
    );
    // By pack: the stop cases a pack's rules matched, and the pass cases they matched (a match
    // on a pass case is a false alarm when nothing else lets the command through).
    let mut packs: std::collections::BTreeMap<String, [usize; 2]> = Default::default();
    for (case, result) in cases.iter().zip(&results) {
        let ids = result["rules"].as_array().cloned().unwrap_or_default();
        let hit: std::collections::BTreeSet<String> =
            ids.iter().filter_map(|id| id.as_str()?.split_once('.').map(|(p, _)| p.to_string())).collect();
        for pack in hit {
            packs.entry(pack).or_default()[usize::from(case.expect == "pass")] += 1;
        }
    }
    for (pack, [stopped, on_pass]) in &packs {
        println!("pack {pack:14} matched {stopped:5} stop cases, {on_pass:3} pass cases");
    }
    assert!(failures.is_empty(), "{} corpus failures:\n{}", failures.len(), failures.join("\n"));
}

/// The absolute path of a shell on PATH; the corpus needs both bash and dash.
fn which(shell: &str) -> String {
    let found = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join(shell)).find(|p| p.is_file()))
        .unwrap_or_else(|| panic!("the corpus needs {shell} on PATH (apt-get install {shell})"));
    found.to_string_lossy().into_owned()
}
