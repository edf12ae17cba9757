#!/usr/bin/env bash
# `git loop autocommit --all` over 100 clean loops (goal: under 3 s) and `git loop list`
# over 1000 loops (goal: under 200 ms), medians of a few runs.
#
#   benches/autocommit.sh [RUNS]     (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}

source benches/lib.sh
bench_build
bench_workspace
git init -q -b main "$tmp/repo"
for i in $(seq 20); do echo "$i" > "$tmp/repo/f$i.txt"; done
git -C "$tmp/repo" add -A && git -C "$tmp/repo" commit -q -m first


echo "making 1000 loops..." >&2
(cd "$tmp/repo" && for i in $(seq 1000); do "$bin" new -q "loop $i" >/dev/null; done)

list_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" list >/dev/null; t1=${EPOCHREALTIME/./}000
  list_t+=($(( (t1 - t0) / 1000 )))
done

# autocommit over the first 100 loops, all clean.
ids=$("$bin" list --json | python3 -c 'import json,sys; print(" ".join(l["id"] for l in json.load(sys.stdin)[:100]))')
auto_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" autocommit -q $ids; t1=${EPOCHREALTIME/./}000
  auto_t+=($(( (t1 - t0) / 1000 )))
done

l=$(printf '%s\n' "${list_t[@]}" | median)
a=$(printf '%s\n' "${auto_t[@]}" | median)
echo "runs:                              $runs each"
echo "git loop list (1000 loops):        $(awk -v v="$l" 'BEGIN{printf "%.0f ms", v/1000}') (median; goal under 200 ms)"
echo "git loop autocommit (100 clean):   $(awk -v v="$a" 'BEGIN{printf "%.0f ms", v/1000}') (median; goal under 3000 ms)"
