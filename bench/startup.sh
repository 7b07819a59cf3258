#!/usr/bin/env bash
# Whole-process timings of cmdguard against baselines measured in the same run:
#   1. `cmdguard -c true` against `sh -c true` (median of N runs each, interleaved);
#   2. `cmdguard check --batch` over a large input (commands per second, one core);
#   3. peak memory (max RSS) of both.
# Usage: bench/startup.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-500}
cargo build --release --locked --quiet
bin=$PWD/target/release/cmdguard
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"   # no project rules file here

python3 - "$bin" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
bin, runs = sys.argv[1], int(sys.argv[2])
def once(argv):
    t = time.perf_counter_ns()
    subprocess.run(argv, check=True)
    return time.perf_counter_ns() - t
cases = {"sh -c true": ["/bin/sh", "-c", "true"], "cmdguard -c true": [bin, "-c", "true"],
         "cmdguard -c 'git status --short'": [bin, "-c", "git status --short >/dev/null 2>&1; true"]}
for argv in cases.values():
    for _ in range(20): once(argv)  # warm caches
samples = {k: [] for k in cases}
for _ in range(runs):
    for k, argv in cases.items():
        samples[k].append(once(argv))
base = statistics.median(samples["sh -c true"])
for k, s in samples.items():
    m = statistics.median(s)
    print(f"{k:40} median {m/1e6:7.3f} ms   {m/base:5.2f}x sh   (+{(m-base)/1e6:.3f} ms)")
PY

corpus=$(cat "$OLDPWD"/tests/corpus/*.txt | grep -v '^#' | grep -v '^$' | cut -d' ' -f2-)
n=200000
yes "$corpus" | head -n "$n" > batch.txt
start=$(date +%s%N)
taskset -c 0 "$bin" check --batch < batch.txt > /dev/null
end=$(date +%s%N)
ns=$((end - start))
echo "check --batch: $n commands in $((ns / 1000000)) ms on one core = $((n * 1000000000 / ns)) commands/s"
start=$(date +%s%N)
taskset -c 0 wc -l < batch.txt > /dev/null
end=$(date +%s%N)
echo "baseline wc -l over the same input: $(((end - start) / 1000000)) ms"

rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n1; }
echo "peak memory: cmdguard -c true $(rss "$bin" -c true) KiB; sh -c true $(rss /bin/sh -c true) KiB; check --batch (200k) $(/usr/bin/time -f %M "$bin" check --batch < batch.txt 2>&1 >/dev/null | tail -n1) KiB"
