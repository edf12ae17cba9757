# Shared by the benchmark scripts (sourced, not run): the release build, a throwaway
# workspace with a fixed git identity, and the timing helpers.

# Builds the release binary; sets $bin. GIT_LOOP_BENCH_BIN names another binary to
# measure instead (a build of an earlier commit, to compare two builds run after run).
bench_build() {
  if [ -n "${GIT_LOOP_BENCH_BIN:-}" ]; then
    bin=$GIT_LOOP_BENCH_BIN
    return
  fi
  cargo build --release --quiet
  bin="$PWD/target/release/git-loop"
}

# A workspace under a fresh folder removed on exit; sets $tmp.
bench_workspace() {
  tmp=$(mktemp -d /tmp/git-loop-bench.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  export GIT_LOOP_HOME="$tmp/ws" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost
  export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
}

# A repository of one commit at $tmp/repo and a loop of it made by $bin; sets $id.
bench_loop() {
  git init -q -b main "$tmp/repo"
  echo hi > "$tmp/repo/README"
  git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
  id=$(cd "$tmp/repo" && "$bin" new -q bench)
}

# The raw bwrap command line of `BIN run ID --net none -- true`: the argv `--print-argv`
# prints, minus what only git-loop can hand over (the seccomp programs, init's refusal
# report, the data and binds it passes by descriptor), so the baseline does less than the
# sandbox and a ratio errs against git-loop.
bench_raw_line() {
  "$1" run "$2" --net none --print-argv -- true | sed -E 's/ --add-seccomp-fd [0-9]+//g; s/ --report-fd [0-9]+//g; s/ --ro-bind-data [0-9]+ [^ ]+//g; s/ --(ro-)?bind-fd [0-9]+ [^ ]+//g'
}

# Timestamps are taken inline as ${EPOCHREALTIME/./}000 (nanoseconds since the epoch,
# microsecond resolution): `$(date +%s%N)` would fork and exec inside every measured
# interval and add about a millisecond to each side of a ratio.

# The median of the numbers on stdin, one per line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
