#!/usr/bin/env bash
# The install's build: `cargo build --release --locked` of HEAD from clean (what
# `cargo install` in scripts/install does), and then the crate alone after a touch of its
# sources (the tail a newcomer watches at N-1/N), for the release profile as committed and
# for each variant given. Wall clock and CPU seconds (user + system, which other builds on
# the machine change less than the wall clock), with the load average around each.
#
#   benches/build.sh [VARIANT...]
#
# A VARIANT is NAME=TOML, the [profile.release] section to use instead of HEAD's, e.g.
#   benches/build.sh 'thin-lto=lto = "thin"
#   codegen-units = 4'
# Each build has a target folder of its own under /tmp; nothing of this checkout changes.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/git-loop-build.XXXXXX)
trap 'rm -rf "$work"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }

# NAME, the section (empty: HEAD's): a clean build, then the tail.
measure() {
  local name=$1 section=$2 src="$work/src-$1"
  mkdir -p "$src"
  git archive HEAD | tar -x -C "$src"
  if [ -n "$section" ]; then
    python3 - "$src/Cargo.toml" "$section" <<'EOF'
import re, sys
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
text = re.sub(r"\[profile\.release\]\n(?:(?!\[)[^\n]*\n)*", "", text)
open(path, "w").write(text.rstrip("\n") + "\n\n[profile.release]\n" + section.strip() + "\n")
EOF
  fi
  local l0 l1 t
  l0=$(load)
  t=$( { /usr/bin/time -f "%e %U %S" env CARGO_TARGET_DIR="$work/target-$name" \
        cargo build --release --locked --quiet --manifest-path "$src/Cargo.toml" >/dev/null; } 2>&1 | tail -1)
  l1=$(load)
  read -r wall user sys <<<"$t"
  printf '%-12s clean: wall %6.0f s  cpu %6.0f s (user %.0f + sys %.0f)  load %s-%s  binary %s bytes\n' \
    "$name" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$l0" "$l1" \
    "$(stat -c %s "$work/target-$name/release/git-loop")"
  touch "$src/src/lib.rs" "$src/src/main.rs"
  l0=$(load)
  t=$( { /usr/bin/time -f "%e %U %S" env CARGO_TARGET_DIR="$work/target-$name" \
        cargo build --release --locked --quiet --manifest-path "$src/Cargo.toml" >/dev/null; } 2>&1 | tail -1)
  l1=$(load)
  read -r wall user sys <<<"$t"
  printf '%-12s tail:  wall %6.0f s  cpu %6.0f s (user %.0f + sys %.0f)  load %s-%s\n' \
    "$name" "$wall" "$(echo "$user + $sys" | bc)" "$user" "$sys" "$l0" "$l1"
  cp "$work/target-$name/release/git-loop" "$work/git-loop-$name"
  rm -rf "$work/target-$name" "$src"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
measure HEAD ""
for v in "$@"; do
  measure "${v%%=*}" "${v#*=}"
done
if [ -n "${BUILD_KEEP:-}" ]; then
  mkdir -p "$BUILD_KEEP" && cp "$work"/git-loop-* "$BUILD_KEEP/"
  echo "binaries kept in $BUILD_KEEP"
fi
