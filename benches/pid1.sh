#!/usr/bin/env bash
# What git-loop's own pid 1 (`git-loop __init`, non-dumpable, in place of bwrap's init)
# costs a sandbox start: `git loop run -q ID --net none -- true` of this build against a
# build without it (BASELINE, a git-loop binary), alternating on one workspace, with the
# medians and the median of the paired differences.
#
#   benches/pid1.sh BASELINE [RUNS]     (default 41 runs each, after warm-up)
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(realpath "$1")
runs=${2:-41}

source benches/lib.sh
bench_build
bench_workspace
bench_loop

for _ in 1 2 3; do "$bin" run -q "$id" --net none -- true; "$base" run -q "$id" --net none -- true; done
new_t=() old_t=() diff_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" --net none -- true; t1=${EPOCHREALTIME/./}000
  "$base" run -q "$id" --net none -- true; t2=${EPOCHREALTIME/./}000
  a=$(( (t1 - t0) / 1000 )); b=$(( (t2 - t1) / 1000 ))
  new_t+=("$a"); old_t+=("$b"); diff_t+=($(( a - b )))
done
n=$(printf '%s\n' "${new_t[@]}" | median)
o=$(printf '%s\n' "${old_t[@]}" | median)
d=$(printf '%s\n' "${diff_t[@]}" | median)
echo "runs:                  $runs each, alternating; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "baseline (bwrap init): $(awk -v v="$o" 'BEGIN{printf "%.2f ms", v/1000}') (median)"
echo "git-loop's pid 1:      $(awk -v v="$n" 'BEGIN{printf "%.2f ms", v/1000}') (median)"
echo "ratio:                 $(awk -v a="$n" -v b="$o" 'BEGIN{printf "%.3fx", a/b}')"
echo "paired difference:     $(awk -v v="$d" 'BEGIN{printf "%+.2f ms", v/1000}') (median)"
