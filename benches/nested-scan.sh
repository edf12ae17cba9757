#!/usr/bin/env bash
# What a start pays for keeping nested repositories read-only in a large repository:
# `git loop run -q ID --net none -- true` in a loop of a repository of FILES files (its
# index about 80 bytes a file) under the default profile, which scans the loop's index for
# gitlinks at every start and has pid 1 refuse `.git` below the trees, against the same
# repository under a profile with `allow_write = ["**/.git"]`, which does neither.
# Alternating, RUNS pairs; prints each side's median and the median of the paired
# differences (the cost of the scan and the rule).
#
#   benches/nested-scan.sh [RUNS] [FILES]     (default 101 pairs, 60000 files)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-101}
files=${2:-60000}

source benches/lib.sh
bench_build
bench_workspace
git init -q -b main "$tmp/repo"
python3 - "$tmp/repo" "$files" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 200))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%03d.txt" % (i % 200)), "w") as f:
        f.write("%d\n" % i)
EOF
git -C "$tmp/repo" add -A && git -C "$tmp/repo" commit -q -m files
"$bin" init >/dev/null 2>&1 || true
"$bin" config set --operator sandbox.allow_nested_git true >/dev/null
profiles="$GIT_LOOP_HOME/context/knowledge/.loopat/sandboxes"
mkdir -p "$profiles/scan" "$profiles/noscan"
: > "$profiles/scan/sandbox.toml"
printf '[filesystem]\nallow_write = ["**/.git"]\n' > "$profiles/noscan/sandbox.toml"
a=$(cd "$tmp/repo" && "$bin" new -q --sandbox scan scan)
b=$(cd "$tmp/repo" && "$bin" new -q --sandbox noscan noscan)
# Past the plan cache's racy window, as a loop in use is.
"$bin" run -q "$a" --net none -- true
"$bin" run -q "$b" --net none -- true
sleep 2.1
echo "index: $(stat -c %s "$GIT_LOOP_HOME/loops/$a/workdir/.git/index") bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}
  "$bin" run -q "$a" --net none -- true
  t1=${EPOCHREALTIME/./}
  "$bin" run -q "$b" --net none -- true
  t2=${EPOCHREALTIME/./}
  echo "$((t1 - t0)) $((t2 - t1))"
done >"$tmp/times"
scan=$(awk '{print $1}' "$tmp/times" | median)
noscan=$(awk '{print $2}' "$tmp/times" | median)
diff=$(awk '{print $1 - $2}' "$tmp/times" | median)
awk -v s="$scan" -v n="$noscan" -v d="$diff" 'BEGIN {
  printf "default profile (scan and rule): %.2f ms\n", s / 1000
  printf "allow_write = [\"**/.git\"] (neither): %.2f ms\n", n / 1000
  printf "paired difference: %.2f ms\n", d / 1000
}'
