#!/usr/bin/env bash
# Whole-process timings of cmdguard against baselines measured in the same run:
#   1. `cmdguard -c true` against `sh -c true` and against the floor for any wrapper, a minimal C
#      program that only execs sh (median of N runs each, interleaved);
#   2. `cmdguard check --batch` over a large input (commands per second, one core);
#   3. peak memory (max RSS) of both.
# Usage: bench/startup.sh [RUNS [BASELINE_BINARY]]   (builds the release binaries first)
# With a baseline binary (an earlier release), its `check --batch` throughput is measured in the
# same run, interleaved with this build's.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-500}
baseline=${2:-}
cargo build --release --locked --quiet
target=${CARGO_TARGET_DIR:-$PWD/target}
bin=$target/release/cmdguard
# On Linux with glibc, also a statically linked build, for comparison (it skips the dynamic
# loader; docs/performance.md). Measured in the same run as the default build.
static=""
triple=$(rustc -vV | sed -n 's/^host: //p')
case "$triple" in
  *-linux-gnu)
    RUSTFLAGS="-C target-feature=+crt-static" cargo build --release --locked --quiet --target "$triple"
    static=$target/$triple/release/cmdguard ;;
esac
repo=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"   # no project rules file here

# The floor for any wrapper: a minimal C program that only execs `sh -c true` (one extra exec).
floor=""
if command -v cc >/dev/null 2>&1; then
  printf '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv("/bin/sh", v); return 127; }\n' > floor.c
  cc -O2 -static -o floor floor.c 2>/dev/null || cc -O2 -o floor floor.c
  floor=$work/floor
fi

python3 - "$bin" "$runs" "$floor" "$static" <<'PY'
import os, statistics, subprocess, sys, time
bin, runs, floor, static = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def once(argv):
    t = time.perf_counter_ns()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)])
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) in (0, 1), (argv, status)
    return time.perf_counter_ns() - t
cases = {"sh -c true": ["/bin/sh", "-c", "true"], "cmdguard -c true": [bin, "-c", "true"],
         "cmdguard check (nested, rule hit)": [bin, "check", "-c", "sudo env X=1 bash -c 'git push --force' >/dev/null; true"]}
if static:
    cases["cmdguard -c true (static build)"] = [static, "-c", "true"]
if floor:
    cases["floor: C wrapper that only execs sh"] = [floor, "-c", "true"]
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

n=200000
# The corpus without soundness.txt: its cases are built to be pathological for the analysis
# (an earlier release takes seconds on some), so a throughput over them compares nothing.
python3 - "$repo" "$n" > batch.txt <<'PY'
import glob, sys
lines = [l.split(" ", 1)[1] for f in sorted(glob.glob(sys.argv[1] + "/tests/corpus/*.txt"))
         if not f.endswith("/soundness.txt")
         for l in open(f).read().splitlines() if l and not l.startswith("#")]
out = (lines * (int(sys.argv[2]) // len(lines) + 1))[: int(sys.argv[2])]
sys.stdout.write("\n".join(out) + "\n")
PY
batch() { # batch NAME BINARY: one timed run over batch.txt on one core
  local start end ns
  start=$(date +%s%N)
  taskset -c 0 "$2" check --batch < batch.txt > /dev/null
  end=$(date +%s%N)
  ns=$((end - start))
  echo "check --batch ($1): $n commands in $((ns / 1000000)) ms on one core = $((n * 1000000000 / ns)) commands/s"
}
for _ in 1 2 3; do
  batch "this build" "$bin"
  if [ -n "$baseline" ]; then batch baseline "$baseline"; fi
done
start=$(date +%s%N)
taskset -c 0 wc -l < batch.txt > /dev/null
end=$(date +%s%N)
echo "baseline wc -l over the same input: $(((end - start) / 1000000)) ms"

rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n1; }
echo "peak memory: cmdguard -c true $(rss "$bin" -c true) KiB; sh -c true $(rss /bin/sh -c true) KiB; check --batch (200k) $(/usr/bin/time -f %M "$bin" check --batch < batch.txt 2>&1 >/dev/null | tail -n1) KiB"
