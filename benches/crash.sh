#!/usr/bin/env bash
# The crash harness of tests/it/crash.rs at full size: every step boundary of new, publish,
# merge, autocommit, rm, sync (a teammate's notes) and vault set killed with kill -9 of the
# process group, plus random kills of each command (and of vault set's commit) and of
# 2000-file checkouts, each trial judged from outside (git fsck, nothing lost, the user's
# checkout its HEAD plus its own changes, every leftover repaired by the next command or by
# `doctor --fix`). The in-suite test runs one round; this runs ROUNDS of them (default 6)
# and prints the figures recorded in BENCHMARKS.md.
#
# GIT_LOOP_CRASH_VERBOSE=1 also lists what each kill that landed left behind. The whole
# output is kept in $CRASH_LOG (default /tmp/git-loop-crash.log).
#
# The failpoints exist only in test builds (debug assertions), so this runs the test
# binary, not the release build.
#
#   benches/crash.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6}
start=${EPOCHREALTIME/./}
GIT_LOOP_CRASH_ROUNDS=$rounds \
  cargo nextest run --no-capture --no-fail-fast \
    -E 'test(/crash::killed_at_every_step/)' > "${CRASH_LOG:=/tmp/git-loop-crash.log}" 2>&1 || true
grep -E '^crash harness|^  [a-z]|PASS|FAIL' "$CRASH_LOG" || true
sed -n '/panicked/,/stack backtrace/p' "$CRASH_LOG"
end=${EPOCHREALTIME/./}
echo "rounds: $rounds, wall time: $(( (end - start) / 1000000 )) s"
