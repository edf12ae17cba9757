#!/usr/bin/env bash
# `git loop new` against `git worktree add` of the same repository of 30,000 small files.
# Prints both medians and their ratio (goal: at most 1.0x; `new` also clones the notes).
#
#   benches/new.sh [RUNS]      (default 9 runs each, alternating, after one warm-up each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-9}
files=${FILES:-30000}

source benches/lib.sh
bench_build
bench_workspace

repo="$tmp/repo"
mkdir -p "$repo"
git -C "$repo" init -q -b main
python3 - "$repo" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 300:03d}", f"s{(i // 30) % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.txt"), "w") as f:
        f.write(f"file {i}\n" * 4)
PY
git -C "$repo" add -A
git -C "$repo" commit -q -m "30k files"
# Packed, as a real repository is.
git -C "$repo" gc -q
"$bin" init >/dev/null


wt_times=() ; new_times=()
for i in $(seq 0 "$runs"); do
  t0=${EPOCHREALTIME/./}000; git -C "$repo" worktree add -q "$tmp/wt$i" -b "wt$i" HEAD; t1=${EPOCHREALTIME/./}000
  git -C "$repo" worktree remove --force "$tmp/wt$i"
  t2=${EPOCHREALTIME/./}000; id=$(cd "$repo" && "$bin" new -q "bench $i"); t3=${EPOCHREALTIME/./}000
  "$bin" rm -q --delete-branches "$id"
  if [ "$i" -gt 0 ]; then   # run 0 warms the caches
    wt_times+=($(( (t1 - t0) / 1000 )))
    new_times+=($(( (t3 - t2) / 1000 )))
  fi
done

wt=$(printf '%s\n' "${wt_times[@]}" | median)
nw=$(printf '%s\n' "${new_times[@]}" | median)
echo "files:                 $files"
echo "runs:                  $runs each"
echo "git worktree add:      $(awk -v v="$wt" 'BEGIN{printf "%.1f ms", v/1000}') (median)"
echo "git loop new:          $(awk -v v="$nw" 'BEGIN{printf "%.1f ms", v/1000}') (median)"
echo "ratio new/worktree:    $(awk -v a="$nw" -v b="$wt" 'BEGIN{printf "%.2fx", a/b}') (goal: at most 1.0x)"
