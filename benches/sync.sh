#!/usr/bin/env bash
# `git loop sync` of a workspace with 100 loops and three remotes (notes, knowledge,
# personal; bare repositories on this machine) against `git fetch` plus `git push` of the
# same three repositories, as a ratio (goal: at most 1.5x). Three cases: nothing to do,
# one new commit in each repository to push, and one new commit of a teammate's in notes
# and knowledge to take (the baseline adds `git merge --ff-only`). Medians, alternating.
#
#   benches/sync.sh [RUNS]     (default 21; GIT_LOOP_BIN=PATH measures that binary)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-21}

source benches/lib.sh
if [ -n "${GIT_LOOP_BIN:-}" ]; then bin=$GIT_LOOP_BIN; else bench_build; fi
bench_workspace
git init -q -b main "$tmp/repo"
echo hi > "$tmp/repo/README"
git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
echo "making 100 loops..." >&2
(cd "$tmp/repo" && for i in $(seq 100); do "$bin" new -q "loop $i" >/dev/null; done)
for r in notes knowledge personal; do git init -q --bare -b main "$tmp/$r.git"; done
"$bin" init -q --notes "$tmp/notes.git" --knowledge "$tmp/knowledge.git" --personal "$tmp/personal.git" >/dev/null
"$bin" sync -q >/dev/null
repos=("$GIT_LOOP_HOME/context/notes" "$GIT_LOOP_HOME/context/knowledge" "$GIT_LOOP_HOME/personal/$(id -un)")

baseline() {
  for d in "${repos[@]}"; do
    git -C "$d" fetch -q origin && git -C "$d" merge -q --ff-only origin/main && git -C "$d" push -q origin main
  done
}

# A teammate's clones of notes and knowledge, each pushing one commit.
for r in notes knowledge; do git clone -q "$tmp/$r.git" "$tmp/mate-$r"; done
teammate() {
  for r in notes knowledge; do
    echo "$1" >>"$tmp/mate-$r/team.md"
    git -C "$tmp/mate-$r" add team.md && git -C "$tmp/mate-$r" commit -q -m "team $1"
    git -C "$tmp/mate-$r" pull -q --rebase origin main && git -C "$tmp/mate-$r" push -q origin HEAD:main
  done
}

# One commit in each repository, made as git-loop's publish or autocommit would leave it.
change() {
  for d in "${repos[@]}"; do
    echo "$1" >>"$d/bench.md"
    git -C "$d" add bench.md && git -C "$d" commit -q -m "bench $1"
  done
}

measure() { # $1: "idle" or "push"
  local s_t=() b_t=() t0 t1 i=0
  for _ in $(seq "$runs"); do
    i=$((i + 1))
    [ "$1" = push ] && change "s$i"
    [ "$1" = pull ] && teammate "s$i"
    t0=${EPOCHREALTIME/./}000; "$bin" sync -q >/dev/null; t1=${EPOCHREALTIME/./}000
    s_t+=($(( (t1 - t0) / 1000 )))
    [ "$1" = push ] && change "b$i"
    [ "$1" = pull ] && teammate "b$i"
    t0=${EPOCHREALTIME/./}000; baseline; t1=${EPOCHREALTIME/./}000
    b_t+=($(( (t1 - t0) / 1000 )))
  done
  s=$(printf '%s\n' "${s_t[@]}" | median)
  b=$(printf '%s\n' "${b_t[@]}" | median)
}

measure idle
si=$s bi=$b
measure push
sp=$s bp=$b
measure pull
sl=$s bl=$b
ms() { awk -v v="$1" 'BEGIN{printf "%.1f ms", v/1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2fx", a/b}'; }
echo "runs:                          $runs each, alternating"
echo "nothing to do:   git loop sync $(ms "$si"), git fetch + push $(ms "$bi"): $(ratio "$si" "$bi") (goal: at most 1.5x)"
echo "one commit each: git loop sync $(ms "$sp"), git fetch + push $(ms "$bp"): $(ratio "$sp" "$bp") (goal: at most 1.5x)"
echo "a teammate's:    git loop sync $(ms "$sl"), git fetch + merge + push $(ms "$bl"): $(ratio "$sl" "$bl")"
