#!/usr/bin/env bash
# What `[filesystem] deny_create` (the creation supervisor in the sandbox's pid 1) costs a
# build: a clean `cargo build --offline` of a real crate with no dependencies (regex-syntax
# from the local cargo registry, its optional `arbitrary` dependency and its benches
# dropped so that it builds offline) inside a loop, with and without a creation rule,
# alternating on one workspace; medians and the median of the paired ratios.
#
#   benches/creation.sh [RUNS]         (default 7 each, after one warm-up of each)
#   benches/creation.sh RUNS files     the cost of one creation: a Python loop making,
#                                      closing and removing 5,000 files, instead of the build
#
# Needs rustup/cargo in the home folder (the run's operator config enables the detected
# toolchains in a throwaway home). GIT_LOOP_BENCH_BIN measures another binary (a debug
# build, say: its supervisor is slower than the release one's, so the figure is an upper
# bound).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
what=${2:-build}
crate=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/regex-syntax-0.8.* 2>/dev/null | head -1)
[ -n "$crate" ] || { echo "no regex-syntax-0.8 in the cargo registry: run cargo fetch in this repository" >&2; exit 1; }
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}

source benches/lib.sh
bench_build
bench_workspace
export HOME="$tmp/home"
mkdir -p "$HOME"
"$bin" config set --operator toolchains.enable detected >/dev/null

git init -q -b main "$tmp/repo"
cp -r "$crate"/. "$tmp/repo/"
python3 - "$tmp/repo/Cargo.toml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'\[dependencies\.arbitrary\][^\[]*', '', s)
s = s.replace('arbitrary = ["dep:arbitrary"]\n', '')
s = re.sub(r'\[\[bench\]\][^\[]*', '', s)
open(p, 'w').write(s)
PY
rm -rf "$tmp/repo/benches"
echo target > "$tmp/repo/.gitignore"
git -C "$tmp/repo" add -A && git -C "$tmp/repo" commit -q -m crate
id=$(cd "$tmp/repo" && "$bin" new -q bench)
work="$GIT_LOOP_HOME/loops/$id/workdir"

profile="$GIT_LOOP_HOME/context/knowledge/.loopat/sandboxes/default/sandbox.toml"
mkdir -p "$(dirname "$profile")"

build() { # $1: with or without the rule; prints microseconds
  if [ "$1" = with ]; then
    printf '[filesystem]\ndeny_create = ["*.pem", ".env*", "id_*"]\n' > "$profile"
  else
    # The same profile file with no rule: the two sides differ only by the supervisor.
    printf '[filesystem]\ndeny_create = []\n' > "$profile"
  fi
  rm -rf "$work/target"
  local t0=${EPOCHREALTIME/./}
  if [ "$what" = files ]; then
    "$bin" run -q "$id" --net none -- python3 -c '
import os
for i in range(5000):
    n = "f%d.o" % i
    os.close(os.open(n, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644))
    os.unlink(n)
'
  else
    "$bin" run -q "$id" --net none -- cargo build -q --offline 2>/dev/null
  fi
  local t1=${EPOCHREALTIME/./}
  echo $(( t1 - t0 ))
}

build with >/dev/null; build without >/dev/null
files=$( (find "$work/target" 2>/dev/null || true) | wc -l)
with_t=() without_t=() ratio_t=()
for i in $(seq "$runs"); do
  if (( i % 2 )); then a=$(build with); b=$(build without); else b=$(build without); a=$(build with); fi
  with_t+=("$a"); without_t+=("$b")
  ratio_t+=("$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.4f", a/b}')")
done
w=$(printf '%s\n' "${with_t[@]}" | median)
o=$(printf '%s\n' "${without_t[@]}" | median)
r=$(printf '%s\n' "${ratio_t[@]}" | median)
[ "$what" = files ] && echo "what:                  5,000 files made, closed and removed" || \
  echo "crate:                 $(basename "$crate") ($files entries in target/ after a build)"
echo "runs:                  $runs each, alternating; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "without a rule:        $(awk -v v="$o" 'BEGIN{printf "%.2f s", v/1e6}') (median)"
echo "with deny_create:      $(awk -v v="$w" 'BEGIN{printf "%.2f s", v/1e6}') (median)"
echo "ratio of medians:      $(awk -v a="$w" -v b="$o" 'BEGIN{printf "%.3fx", a/b}')"
echo "paired ratio:          ${r}x (median)"
echo "all (s, with/without): $(for i in "${!with_t[@]}"; do awk -v a="${with_t[$i]}" -v b="${without_t[$i]}" 'BEGIN{printf "%.1f/%.1f ", a/1e6, b/1e6}'; done)"
