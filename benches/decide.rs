//! Analysis + decision per command, over the corpus, with policy loading (what every invocation
//! pays) and a baseline in the same run: normalization alone, the cheapest pass over the text.

use std::path::Path;

use cmdguard::decide::decide;
use cmdguard::shell::{analyze_script, normalize};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        out.extend(
            text.lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .filter_map(|l| l.split_once(' '))
                .map(|(_, c)| c.to_string()),
        );
    }
    out
}

fn bench(c: &mut Criterion) {
    let commands = corpus();
    let cwd = std::env::temp_dir();
    let policy = cmdguard::config::load(&cwd, &[]).unwrap();
    let mut g = c.benchmark_group("per-command");
    g.throughput(Throughput::Elements(commands.len() as u64));
    g.bench_function("baseline: normalize only", |b| {
        b.iter(|| commands.iter().map(|cmd| normalize(black_box(cmd)).len()).sum::<usize>())
    });
    g.bench_function("analyze", |b| {
        b.iter(|| commands.iter().map(|cmd| analyze_script(black_box(cmd)).segments.len()).sum::<usize>())
    });
    g.bench_function("analyze + decide", |b| {
        b.iter(|| {
            commands.iter().filter(|cmd| decide(&policy, &analyze_script(black_box(cmd))).verdict as u8 > 1).count()
        })
    });
    g.finish();
    c.bench_function("load policy (every invocation)", |b| {
        b.iter(|| cmdguard::config::load(black_box(&cwd), &[]).unwrap())
    });
    c.bench_function("load policy, part: built-in rules", |b| b.iter(cmdguard::rules::compile::builtin_rules));
    c.bench_function("load policy, part: prefilter", |b| {
        b.iter_batched(
            cmdguard::rules::compile::builtin_rules,
            |rules| cmdguard::rules::Policy::new(rules, vec![], Default::default(), vec![]),
            criterion::BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
