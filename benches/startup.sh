#!/usr/bin/env bash
# The start-up optimisations (issue 17), each measured alone: the sandbox start of this
# checkout's HEAD against the same tree with one optimisation taken out, alternating on one
# loop (benches/spawn-compare.sh: ratio of medians, median of paired differences, and the
# build against itself for the noise). An optimisation stays only while its gain is above
# that noise; BENCHMARKS.md ("Sandbox start") records the figures.
#
#   runtime-start  std's runtime start instead of the C `main` (src/main.rs, `runtime_start`)
#   libm           libm.so loaded instead of `pow` defined in src/main.rs (`no_libm`)
#   clap-run       every `run` command line read by clap (src/cli/fast_run.rs unused)
#   plan-cache     the git identity read afresh by every run (src/sandbox/cache.rs: a kept
#                  plan never used)
#   lock-walk      every folder of the loop's git folders listed at every start
#                  (src/sandbox/execute.rs: no walk kept, so none used)
#
#   benches/startup.sh [RUNS]     (default 101 rounds per comparison, three comparisons each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-101}
work=$(mktemp -d /tmp/git-loop-startup.XXXXXX)
trap 'rm -rf "$work"; git worktree prune' EXIT
target=${CARGO_TARGET_DIR:-$PWD/target}

# HEAD built with EDIT applied (shell code run in the tree's root), into $work/NAME.
build() {
  local name=$1 edit=$2 wt="$work/src-$1"
  git worktree add -q --detach "$wt" HEAD
  (
    cd "$wt"
    eval "$edit"
    if [ -n "$edit" ] && git diff --quiet; then
      echo "startup.sh: the edit for $name no longer applies to HEAD" >&2
      exit 1
    fi
    CARGO_TARGET_DIR="$target" cargo build --release --quiet
  )
  cp "$target/release/git-loop" "$work/$name"
  git worktree remove --force "$wt"
}

build head ""
build runtime-start 'perl -0pi -e '\''s/#!\[no_main\]\n//; s/#\[no_mangle\]\n(\s*pub extern "C" fn main)/$1/'\'' src/main.rs &&
  printf "\nfn main() -> std::process::ExitCode {\n    (runtime_start::main(0, std::ptr::null()) as u8).into()\n}\n" >>src/main.rs'
build libm 'perl -0pi -e '\''s/#\[no_mangle\]\n(\s*pub extern "C" fn pow)/#[allow(dead_code)]\n$1/'\'' src/main.rs'
build clap-run 'sed -i "s/fast_run::parse(&args) {/fast_run::parse(\&args).filter(|_| false) {/" src/cli/mod.rs'
build plan-cache 'sed -i "s/load(&path, secret, &key) {/load(\&path, secret, \&key).filter(|_| false) {/" src/sandbox/cache.rs'
build lock-walk 'sed -i "s/Some(super::cache::RACY))?/None)?/" src/sandbox/execute.rs'

for round in 1 2 3; do
  for name in runtime-start libm clap-run plan-cache lock-walk; do
    mkdir -p "$work/pair-$name"
    cp "$work/head" "$work/pair-$name/git-loop-a"
    cp "$work/$name" "$work/pair-$name/git-loop-b"
    echo "== without $name, round $round (load average $(cut -d' ' -f1 /proc/loadavg))"
    SPAWN_COMPARE_KEEP="$work/pair-$name" benches/spawn-compare.sh HEAD "$name" "$runs" |
      grep -E '^(A|B)'
  done
done
