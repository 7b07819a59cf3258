#!/usr/bin/env bash
# Instruction counts (valgrind's callgrind) of cmdguard over a fixed set of commands, against
# `sh -c true` counted in the same run. Instruction counts do not move with machine load, so they
# compare builds where timings on a shared machine cannot. With two binaries, both are counted
# side by side (for a change: the build before it, then after).
# Usage: bench/instructions.sh [BINARY [BASELINE_BINARY]]   (default: target/release/cmdguard)
# Also prints the wall time per user rule (median of 15 runs, 5,000 rules vs none). Cases with a
# user rules file are counted twice: "miss" with an empty rules cache (the file is checked in full
# and the entry written), "hit" with the entry in place (a binary without the cache checks the
# file in full both times).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null 2>&1; then
  echo "installing valgrind" >&2
  if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq valgrind >/dev/null
  else sudo apt-get update -qq && sudo apt-get install -y -qq valgrind >/dev/null; fi
fi
bin=${1:-$PWD/${CARGO_TARGET_DIR:-target}/release/cmdguard}
base=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/cwd" "$work/rules1000/cmdguard" "$work/rules5000/cmdguard" "$work/none"

python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
def rules(n):
    return "".join(f'[[rule]]\nid = "local.tool-{i}"\naction = "ask"\npattern = \'^tool{i}\\s+deploy\\b\'\n'
                   f'reason = "Deploys tool {i} to production."\n\n' for i in range(n))
for n in (1000, 5000):
    open(f"{work}/rules{n}/cmdguard/rules.toml", "w").write(rules(n))
# A realistic 2 KB pipeline: a CI-like chain of builds, greps and formatting.
step = ("cargo build --release --locked 2>&1 | grep -v '^warning' | tee -a build.log && "
        "find src -name '*.rs' -print0 | xargs -0 grep -n 'TODO' | sort | uniq -c | head -n 20; ")
open(f"{work}/pipeline.txt", "w").write((step * (2048 // len(step) + 1))[:2048].rsplit(";", 1)[0])
# 60 KB of nested `bash <<EOF` here-documents, 12 deep.
depth, filler = 12, "echo building step && ls -la /tmp\n"
body_per_level = (60 * 1024) // depth // len(filler)
def nest(level):
    if level == depth:
        return filler * body_per_level
    tag = f"EOF{level}"
    return filler * body_per_level + f"bash <<'{tag}'\n" + nest(level + 1) + f"{tag}\n"
open(f"{work}/heredocs.txt", "w").write(nest(1)[: 60 * 1024 - 100].rsplit("\n", 1)[0] + "\n" +
    "".join(f"EOF{l}\n" for l in range(depth - 1, 0, -1)))
PY

# name|config dir|command text (a leading @ reads the text from a file in $work). A name ending
# in "miss" empties the rules cache first; one ending in "hit" fills it first.
cases=(
  "true|none|true"
  "git status|none|git status"
  "rm -rf ~ (deny hit)|none|rm -rf ~"
  "2 KB pipeline|none|@pipeline.txt"
  "git status, 1,000 user rules, miss|rules1000|git status"
  "git status, 1,000 user rules, hit|rules1000|git status"
  "git status, 5,000 user rules, miss|rules5000|git status"
  "git status, 5,000 user rules, hit|rules5000|git status"
  "60 KB nested heredocs, 12 deep|none|@heredocs.txt"
  "deny hit via bash -c|none|bash -c 'rm -rf ~'"
  "deny hit via ssh|none|ssh host 'rm -rf ~'"
  "deny hit via python -c|none|python3 -c 'import os; os.system(\"rm -rf ~\")'"
  "deny hit via here-doc|none|bash <<EOF
rm -rf ~
EOF"
)

count() { # count ARGV...: instructions of one run
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
run_case() { # run_case BINARY CONFIG TEXT [miss|hit]
  case ${4:-} in
    miss) rm -rf "$work/home/state/cmdguard/rules-cache" ;;
    hit) (cd "$work/cwd" && HOME="$work/home" XDG_CONFIG_HOME="$work/$2" XDG_STATE_HOME="$work/home/state" \
      "$1" check -c "$3" >/dev/null 2>&1 || true) ;;
  esac
  (cd "$work/cwd" && HOME="$work/home" XDG_CONFIG_HOME="$work/$2" XDG_STATE_HOME="$work/home/state" \
    count "$1" check -c "$3" || true)
}
sh_base=$(count /bin/sh -c true)
echo "sh -c true: $sh_base instructions (the 1.00x below)"
if [ -n "$base" ]; then
  printf '| %-34s | %14s | %8s | %14s | %8s | %7s |\n' command "before" "vs sh" "after" "vs sh" "after/before"
  printf '|%s|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "----------------" "----------" "----------------" "----------" "---------"
else
  printf '| %-34s | %14s | %8s |\n' command instructions "vs sh"
  printf '|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..36})" "----------------" "----------"
fi
for c in "${cases[@]}"; do
  name=${c%%|*}; rest=${c#*|}; cfg=${rest%%|*}; text=${rest#*|}
  [ "${text:0:1}" = "@" ] && text=$(cat "$work/${text:1}")
  mode=$(case $name in *miss) echo miss ;; *hit) echo hit ;; esac)
  after=$(run_case "$bin" "$cfg" "$text" "$mode")
  if [ -n "$base" ]; then
    before=$(run_case "$base" "$cfg" "$text" "$mode")
    printf '| %-34s | %14s | %7.1fx | %14s | %7.1fx | %7.2fx |\n' "$name" "$before" \
      "$(echo "$before / $sh_base" | bc -l)" "$after" "$(echo "$after / $sh_base" | bc -l)" "$(echo "$after / $before" | bc -l)"
  else
    printf '| %-34s | %14s | %7.1fx |\n' "$name" "$after" "$(echo "$after / $sh_base" | bc -l)"
  fi
done

# Wall time per user rule: `check -c 'git status'` with 5,000 user rules against none.
python3 - "$bin" "$work" <<'PY'
import os, shutil, statistics, subprocess, sys, time
bin, work = sys.argv[1], sys.argv[2]
def median(cfg, miss=False):
    env = dict(os.environ, HOME=f"{work}/home", XDG_CONFIG_HOME=f"{work}/{cfg}", XDG_STATE_HOME=f"{work}/home/state")
    run = lambda: subprocess.run([bin, "check", "-c", "git status"], cwd=f"{work}/cwd", env=env, stdout=subprocess.DEVNULL)
    run()
    ts = []
    for _ in range(15):
        if miss:
            shutil.rmtree(f"{work}/home/state/cmdguard/rules-cache", ignore_errors=True)
        t = time.perf_counter_ns()
        run()
        ts.append(time.perf_counter_ns() - t)
    return statistics.median(ts)
none = median("none")
for what, miss in (("miss", True), ("hit", False)):
    many = median("rules5000", miss)
    print(f"user rules, {what}: {(many - none) / 5000 / 1000:.2f} µs per rule per command (5,000 rules: {many/1e6:.1f} ms, none: {none/1e6:.1f} ms)")
PY
