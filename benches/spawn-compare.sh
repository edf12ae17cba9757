#!/usr/bin/env bash
# Sandbox start of two builds against each other: median wall time of
# `git loop run -q ID --net NET -- true` for the build of revision A and of revision B,
# alternating, each on a loop of its own (a build keeps its own plan: one loop shared by
# two builds would make every start plan anew, since the plan is stamped with the
# binary), as a ratio B/A, and each against raw bwrap with its own command line (as
# benches/spawn.sh makes it), alternating with them. For changes that should not change
# the start (moving code): the two agree when the ratio is within the run-to-run noise,
# which the script shows by also comparing A with itself.
#
#   benches/spawn-compare.sh REV_A REV_B [RUNS [NET]]   (default 51 runs each, after
#                                    warm-up; NET is the runs' network mode, none or
#                                    proxy: the raw lines are without a network, as in
#                                    benches/spawn.sh, and the goal named is the mode's)
#
# It prints the ratio of the medians and the median of each round's paired difference; the
# second resolves smaller differences (a start-up optimisation's tenth of a millisecond).
set -euo pipefail
cd "$(dirname "$0")/.."
a_rev=${1:?REV_A}
b_rev=${2:?REV_B}
runs=${3:-51}
net=${4:-none}
case $net in
  none) goal=1.3x ;;
  proxy) goal=1.5x ;;
  *)
    echo "spawn-compare.sh: unknown network mode '$net'" >&2
    echo "hint: benches/spawn-compare.sh REV_A REV_B 51 none, or ... 51 proxy" >&2
    exit 2
    ;;
esac

source benches/lib.sh
bench_workspace

# Each revision built in a worktree of its own, sharing one target folder (this checkout's,
# or $CARGO_TARGET_DIR; the dependencies are built once); the binary copied out before the
# next build replaces it.
build_rev() {
  local rev=$1 out=$2 wt="$tmp/src-$3" target=${CARGO_TARGET_DIR:-$PWD/target}
  git worktree add -q --detach "$wt" "$rev"
  (cd "$wt" && CARGO_TARGET_DIR="$target" cargo build --release --quiet)
  cp "$target/release/git-loop" "$out"
  git worktree remove --force "$wt"
}
# With SPAWN_COMPARE_KEEP=DIR the two binaries are kept there and, when there already,
# reused (a second measurement of the same pair without building again).
keep=${SPAWN_COMPARE_KEEP:-}
if [ -n "$keep" ] && [ -x "$keep/git-loop-a" ] && [ -x "$keep/git-loop-b" ]; then
  cp "$keep/git-loop-a" "$keep/git-loop-b" "$tmp/"
else
  build_rev "$a_rev" "$tmp/git-loop-a" a
  build_rev "$b_rev" "$tmp/git-loop-b" b
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp "$tmp/git-loop-a" "$tmp/git-loop-b" "$keep/"; fi
fi

git init -q -b main "$tmp/repo"
echo hi > "$tmp/repo/README"
git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
id_a=$(cd "$tmp/repo" && "$tmp/git-loop-a" new -q bench-a)
id_b=$(cd "$tmp/repo" && "$tmp/git-loop-b" new -q bench-b)
# Raw bwrap with a build's own command line, minus what only git-loop can hand over.
raw_a=$(bench_raw_line "$tmp/git-loop-a" "$id_a")
raw_b=$(bench_raw_line "$tmp/git-loop-b" "$id_b")

for _ in 1 2 3; do
  "$tmp/git-loop-a" run -q "$id_a" --net "$net" -- true
  "$tmp/git-loop-b" run -q "$id_b" --net "$net" -- true
  eval "$raw_a"
  eval "$raw_b"
done
# A fresh loop's files are younger than the plan cache's racy window (two seconds): after
# the wait, what a start keeps is used from the first measured run on.
sleep 2.1
"$tmp/git-loop-a" run -q "$id_a" --net "$net" -- true
"$tmp/git-loop-b" run -q "$id_b" --net "$net" -- true
a_t=() b_t=() a2_t=() ra_t=() rb_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}
  "$tmp/git-loop-a" run -q "$id_a" --net "$net" -- true
  t1=${EPOCHREALTIME/./}
  "$tmp/git-loop-b" run -q "$id_b" --net "$net" -- true
  t2=${EPOCHREALTIME/./}
  "$tmp/git-loop-a" run -q "$id_a" --net "$net" -- true
  t3=${EPOCHREALTIME/./}
  eval "$raw_a"
  t4=${EPOCHREALTIME/./}
  eval "$raw_b"
  t5=${EPOCHREALTIME/./}
  a_t+=($((t1 - t0))) b_t+=($((t2 - t1))) a2_t+=($((t3 - t2)))
  ra_t+=($((t4 - t3))) rb_t+=($((t5 - t4)))
done
a=$(printf '%s\n' "${a_t[@]}" | median)
b=$(printf '%s\n' "${b_t[@]}" | median)
a2=$(printf '%s\n' "${a2_t[@]}" | median)
ra=$(printf '%s\n' "${ra_t[@]}" | median)
rb=$(printf '%s\n' "${rb_t[@]}" | median)

echo "runs:                $runs each, alternating A, B, A"
echo "A ($a_rev):  $(awk -v v="$a" 'BEGIN{printf "%.2f ms", v/1000}') (median; again: $(awk -v v="$a2" 'BEGIN{printf "%.2f ms", v/1000}'))"
echo "B ($b_rev):  $(awk -v v="$b" 'BEGIN{printf "%.2f ms", v/1000}') (median)"
echo "raw bwrap, A's line: $(awk -v v="$ra" 'BEGIN{printf "%.2f ms", v/1000}'); B's line: $(awk -v v="$rb" 'BEGIN{printf "%.2f ms", v/1000}') (medians)"
echo "A / its raw line:    $(awk -v x="$a" -v y="$ra" 'BEGIN{printf "%.2fx", x/y}'); B / its raw line: $(awk -v x="$b" -v y="$rb" 'BEGIN{printf "%.2fx", x/y}') (issue 30's goal, $net: $goal)"
echo "B/A:                 $(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.3f", x/y}')"
echo "A/A (the noise):     $(awk -v x="$a2" -v y="$a" 'BEGIN{printf "%.3f", x/y}')"
# The same as differences of each round's own pair (a round's three runs are next to each
# other in time, so what the machine's other tenants do cancels out better than across
# whole medians): the median over rounds of B - A, and of the second A - A.
d_ba=$(for i in "${!a_t[@]}"; do echo $((b_t[i] - a_t[i])); done | median)
d_aa=$(for i in "${!a_t[@]}"; do echo $((a2_t[i] - a_t[i])); done | median)
echo "B - A, paired:       $(awk -v v="$d_ba" 'BEGIN{printf "%+.3f ms", v/1000}') (median of each round's difference)"
echo "A - A, paired:       $(awk -v v="$d_aa" 'BEGIN{printf "%+.3f ms", v/1000}') (the noise)"
