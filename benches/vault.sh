#!/usr/bin/env bash
# Sandbox start with a 50-entry vault (40 variables, 10 files) against the same loop with
# no vault: the median added time (goal: at most 10 ms).
#
#   benches/vault.sh [RUNS]     (default 31 runs each, alternating, after warm-up)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-31}

source benches/lib.sh
bench_build
bench_workspace
export XDG_CONFIG_HOME="$tmp/config"
git init -q -b main "$tmp/repo"
echo hi > "$tmp/repo/README"
git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
plain=$(cd "$tmp/repo" && "$bin" new -q plain)
vaulted=$(cd "$tmp/repo" && "$bin" new -q --vault bench vaulted)

"$bin" vault init -q bench
for i in $(seq 40); do printf 'value-%s-%s' "$i" "$RANDOM" | "$bin" vault set -q bench env "VAR_$i"; done
for i in $(seq 10); do
  head -c 2048 /dev/urandom | base64 > "$tmp/f$i"
  "$bin" vault set -q bench file ".config/bench/file$i" "$tmp/f$i"
  rm "$tmp/f$i"
done


for _ in 1 2 3; do "$bin" run -q "$plain" --net none -- true; "$bin" run -q "$vaulted" --net none -- true; done
p_t=(); v_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$plain" --net none -- true; t1=${EPOCHREALTIME/./}000
  "$bin" run -q "$vaulted" --net none -- true; t2=${EPOCHREALTIME/./}000
  p_t+=($(( (t1 - t0) / 1000 ))); v_t+=($(( (t2 - t1) / 1000 )))
done
p=$(printf '%s\n' "${p_t[@]}" | median)
v=$(printf '%s\n' "${v_t[@]}" | median)
echo "runs:                       $runs each"
echo "run, no vault:              $(awk -v x="$p" 'BEGIN{printf "%.1f ms", x/1000}') (median)"
echo "run, 50-entry vault:        $(awk -v x="$v" 'BEGIN{printf "%.1f ms", x/1000}') (median)"
echo "added by the vault:         $(awk -v a="$v" -v b="$p" 'BEGIN{printf "%.1f ms", (a-b)/1000}') (goal: at most 10 ms)"
