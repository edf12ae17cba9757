#!/usr/bin/env bash
# The crash harness of tests/it/crash.rs at full size: every step boundary of new, publish,
# merge, autocommit, rm, run, sync (a teammate's notes) and vault set killed with kill -9
# of the process group, plus random kills of each command (of its process group, of its
# front end `git` alone, or of one of its processes at random and then the front end), of
# the commits made inside a run's sandbox, of vault set's commit and of 2000-file
# checkouts, each trial judged from outside (git fsck, nothing lost, every branch's
# commits as the kill left them still reachable, the user's checkout its HEAD plus its own
# changes, every leftover repaired by the next command or by `doctor --fix`, no process of
# the command alive 10 s after the kill). The in-suite test runs one round; this runs
# ROUNDS of them (default 4) and prints the figures recorded in BENCHMARKS.md.
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
rounds=${1:-4}
start=${EPOCHREALTIME/./}
echo "machine: $(nproc) cores; load average at the start: $(cut -d" " -f1-3 /proc/loadavg)"
GIT_LOOP_CRASH_ROUNDS=$rounds \
  cargo nextest run --no-capture --no-fail-fast \
    -E 'test(/crash::killed_at_every_step/)' > "${CRASH_LOG:=/tmp/git-loop-crash.log}" 2>&1 || true
grep -E '^crash harness|^  [a-z]|PASS|FAIL' "$CRASH_LOG" || true
sed -n '/panicked/,/stack backtrace/p' "$CRASH_LOG"
end=${EPOCHREALTIME/./}
echo "rounds: $rounds, wall time: $(( (end - start) / 1000000 )) s, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
