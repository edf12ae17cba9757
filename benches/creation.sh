#!/usr/bin/env bash
# What pid 1's supervisor (src/sandbox/creation.rs) costs a build: a clean
# `cargo build --offline` of a real crate with no dependencies (regex-syntax from the local
# cargo registry, its optional `arbitrary` dependency and its benches dropped so that it
# builds offline) inside a loop, three ways, alternating on one workspace:
#   base   the binary GIT_LOOP_BENCH_BASE_BIN (a build from before refusals were watched:
#          no supervisor at all without a rule), the profile with no rule;
#   watch  this build, the same profile: the supervisor takes every open that may write
#          and every call that changes a file, to report refusals;
#   rules  this build with `deny_create = ["*.pem", ".env*", "id_*"]` and a `deny_read`
#          rule: the supervisor also judges names and takes every open.
# Medians, and the medians of the ratios paired run by run against base.
#
#   benches/creation.sh [RUNS]         (default 7 each, after one warm-up of each)
#   benches/creation.sh RUNS files     a Python loop making, closing and removing 5,000
#                                      files, instead of the build
#   benches/creation.sh RUNS opens     a Python loop opening and closing 20,000 existing
#                                      files for reading, instead of the build
#   benches/creation.sh RUNS stats     a Python loop of 20,000 `stat`s of existing files,
#                                      instead of the build
#
# Needs rustup/cargo in the home folder (the run's operator config enables the detected
# toolchains in a throwaway home). GIT_LOOP_BENCH_BIN measures another binary than the
# release build (a debug build, say: its supervisor is slower than the release one's, so
# the figure is an upper bound). Without GIT_LOOP_BENCH_BASE_BIN the base side is left
# out: watch against rules. GIT_LOOP_BENCH_RULES=create leaves the `deny_read` rule out
# of the rules side: the cost of a creation rule alone; GIT_LOOP_BENCH_RULES=folder
# denies reading a folder (`secret/`) instead of a file, so that the rules side also
# sends every lookup (`stat`, `access`, ...) to pid 1.
# GIT_LOOP_BENCH_CRATE=regex builds `regex` 1.10 with its four dependencies
# (aho-corasick, memchr, regex-automata, regex-syntax; its tests, benches and
# dev-dependencies dropped) instead: a build of some 55 CPU seconds, not 5.
# GIT_LOOP_BENCH_CRATE=self builds this repository as committed (HEAD; every dependency
# vendored from the local registry). With it, `benches/creation.sh RUNS touch` keeps the
# dependencies built (after the warm-up) and times the rebuild of this crate after a
# change to src/lib.rs (a new function appended): the build an agent runs again and
# again while it works. The sandbox runs `cargo build --offline` and its output is not
# shown: a build that fails shows as a run of a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
what=${2:-build}
base_bin=${GIT_LOOP_BENCH_BASE_BIN:-}
case ${GIT_LOOP_BENCH_CRATE:-regex-syntax} in
  self) crate=$PWD ;;
  regex) crate=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/regex-1.10.* 2>/dev/null | head -1) ;;
  *) crate=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/regex-syntax-0.8.* 2>/dev/null | head -1) ;;
esac
[ -n "$crate" ] || { echo "no ${GIT_LOOP_BENCH_CRATE:-regex-syntax} in the cargo registry: run cargo fetch in this repository" >&2; exit 1; }
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}

source benches/lib.sh
bench_build
bench_workspace
export HOME="$tmp/home"
mkdir -p "$HOME"
"$bin" config set --operator toolchains.enable detected >/dev/null

git init -q -b main "$tmp/repo"
if [ "${GIT_LOOP_BENCH_CRATE:-}" = self ]; then
  git archive HEAD | tar -x -C "$tmp/repo"
else
  cp -r "$crate"/. "$tmp/repo/"
python3 - "$tmp/repo/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
out, drop = [], False
# Whole sections at a time (a value's own '[' lines are no section header).
for line in open(p):
    if re.match(r'^\[\[?[^\]]+\]\]?\s*$', line):
        drop = bool(re.match(r'^\[(dev-dependencies|dependencies\.arbitrary\]|\[test\]|\[bench\]|\[example\])', line))
    if not drop and line != 'arbitrary = ["dep:arbitrary"]\n':
        out.append(line)
open(p, 'w').write(''.join(out))
PY
  rm -rf "$tmp/repo/benches" "$tmp/repo/tests" "$tmp/repo/examples"
fi
if [ "${GIT_LOOP_BENCH_CRATE:-}" = regex ] || [ "${GIT_LOOP_BENCH_CRATE:-}" = self ]; then
  # Its dependencies vendored from the local registry, which the sandbox does not see.
  # This repository's lock names crates of other platforms the local registry may not hold:
  # those are fetched from the registry.
  offline=--offline
  [ "${GIT_LOOP_BENCH_CRATE:-}" = self ] && offline=
  (cd "$tmp/repo" && CARGO_TARGET_DIR="$tmp/vendor-target" cargo vendor $offline -q vendor >/dev/null)
  mkdir -p "$tmp/repo/.cargo"
  printf '[source.crates-io]\nreplace-with = "vendored-sources"\n[source.vendored-sources]\ndirectory = "vendor"\n' \
    > "$tmp/repo/.cargo/config.toml"
fi
echo /target > "$tmp/repo/.gitignore"
git -C "$tmp/repo" add -A && git -C "$tmp/repo" commit -q -m crate
id=$(cd "$tmp/repo" && "$bin" new -q bench)
work="$GIT_LOOP_HOME/loops/$id/workdir"

profile="$GIT_LOOP_HOME/context/knowledge/.loopat/sandboxes/default/sandbox.toml"
mkdir -p "$(dirname "$profile")"

build() { # $1: base, watch or rules; prints microseconds
  local b=$bin
  case $1 in
    rules)
      if [ "${GIT_LOOP_BENCH_RULES:-}" = create ]; then
        printf '[filesystem]\ndeny_create = ["*.pem", ".env*", "id_*"]\n' > "$profile"
      elif [ "${GIT_LOOP_BENCH_RULES:-}" = folder ]; then
        printf '[filesystem]\ndeny_create = ["*.pem", ".env*", "id_*"]\ndeny_read = ["secret/"]\n' > "$profile"
      else
        printf '[filesystem]\ndeny_create = ["*.pem", ".env*", "id_*"]\ndeny_read = ["secret.txt"]\n' > "$profile"
      fi ;;
    base) b=$base_bin; printf '[filesystem]\ndeny_create = []\n' > "$profile" ;;
    *) printf '[filesystem]\ndeny_create = []\n' > "$profile" ;;
  esac
  if [ "$what" = touch ]; then
    echo "pub fn bench_$1_$RANDOM() -> u32 { $RANDOM }" >> "$work/src/lib.rs"
  else
    rm -rf "$work/target"
  fi
  local t0=${EPOCHREALTIME/./}
  case $what in
    files) "$b" run -q "$id" --net none -- python3 -c '
import os
for i in range(5000):
    n = "f%d.o" % i
    os.close(os.open(n, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644))
    os.unlink(n)
' ;;
    opens) "$b" run -q "$id" --net none -- python3 -c '
import os
names = [os.path.join(d, f) for d, _, fs in os.walk("src") for f in fs]
for i in range(20000):
    os.close(os.open(names[i % len(names)], os.O_RDONLY))
' ;;
    stats) "$b" run -q "$id" --net none -- python3 -c '
import os
names = [os.path.join(d, f) for d, _, fs in os.walk("src") for f in fs]
for i in range(20000):
    os.stat(names[i % len(names)])
' ;;
    *) "$b" run -q "$id" --net none -- cargo build -q --offline 2>/dev/null ;;
  esac
  local t1=${EPOCHREALTIME/./}
  echo $(( t1 - t0 ))
}

echo hunter2 > "$work/secret.txt"
mkdir -p "$work/secret" && echo hunter2 > "$work/secret/token"
sides="watch rules"
[ -n "$base_bin" ] && sides="base $sides"
for side in $sides; do build $side >/dev/null; done
files=$( (find "$work/target" 2>/dev/null || true) | wc -l)
base_t=() watch_t=() rules_t=() rw=() rr=()
loads=()
for i in $(seq "$runs"); do
  loads+=("$(cut -d' ' -f1 /proc/loadavg)")
  if [ -z "$base_bin" ]; then
    # Two sides: the one without a rule is the base.
    case $(( i % 2 )) in
      1) b=$(build watch); c=$(build rules) ;;
      0) c=$(build rules); b=$(build watch) ;;
    esac
    a=$b
  else
    case $(( i % 3 )) in
      1) a=$(build base); b=$(build watch); c=$(build rules) ;;
      2) b=$(build watch); c=$(build rules); a=$(build base) ;;
      0) c=$(build rules); a=$(build base); b=$(build watch) ;;
    esac
  fi
  base_t+=("$a"); watch_t+=("$b"); rules_t+=("$c")
  rw+=("$(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.4f", x/y}')")
  rr+=("$(awk -v x="$c" -v y="$a" 'BEGIN{printf "%.4f", x/y}')")
done
med() { printf '%s\n' "$@" | median; }
a=$(med "${base_t[@]}"); b=$(med "${watch_t[@]}"); c=$(med "${rules_t[@]}")
case $what in
  files) echo "what:                  5,000 files made, closed and removed" ;;
  touch) echo "crate:                 $(basename "$crate"), rebuilt after a change to src/lib.rs (dependencies built)" ;;
  opens) echo "what:                  20,000 files opened for reading and closed" ;;
  stats) echo "what:                  20,000 stats of existing files" ;;
  *) echo "crate:                 $(basename "$crate") ($files entries in target/ after a build)" ;;
esac
echo "runs:                  $runs each, alternating; load (1 min) at each round: ${loads[*]}"
[ -n "$base_bin" ] && echo "base (no supervisor):  $(awk -v v="$a" 'BEGIN{printf "%.2f s", v/1e6}') (median)"
echo "watch (no rule):       $(awk -v v="$b" 'BEGIN{printf "%.2f s", v/1e6}') (median), ratio of medians $(awk -v x="$b" -v y="$a" 'BEGIN{printf "%.3fx", x/y}'), paired $(med "${rw[@]}")x"
echo "rules:                 $(awk -v v="$c" 'BEGIN{printf "%.2f s", v/1e6}') (median), ratio of medians $(awk -v x="$c" -v y="$a" 'BEGIN{printf "%.3fx", x/y}'), paired $(med "${rr[@]}")x"
echo "all (s, base/watch/rules): $(for i in "${!base_t[@]}"; do awk -v a="${base_t[$i]}" -v b="${watch_t[$i]}" -v c="${rules_t[$i]}" 'BEGIN{printf "%.1f/%.1f/%.1f ", a/1e6, b/1e6, c/1e6}'; done)"
