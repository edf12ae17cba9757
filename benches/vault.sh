#!/usr/bin/env bash
# Sandbox start with a 50-entry vault (40 variables, 10 files) against the same loop with
# no vault: the median added time (goal: at most 10 ms).
#
#   benches/vault.sh [RUNS]     (default 31 runs each, alternating, after warm-up)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-31}

cargo build --release --quiet
bin="$PWD/target/release/git-loop"

tmp=$(mktemp -d /tmp/git-loop-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export GIT_LOOP_HOME="$tmp/ws" GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export XDG_CONFIG_HOME="$tmp/config"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
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

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for _ in 1 2 3; do "$bin" run -q "$plain" --net none -- true; "$bin" run -q "$vaulted" --net none -- true; done
p_t=(); v_t=()
for _ in $(seq "$runs"); do
  t0=$(now); "$bin" run -q "$plain" --net none -- true; t1=$(now)
  "$bin" run -q "$vaulted" --net none -- true; t2=$(now)
  p_t+=($(( (t1 - t0) / 1000 ))); v_t+=($(( (t2 - t1) / 1000 )))
done
p=$(printf '%s\n' "${p_t[@]}" | median)
v=$(printf '%s\n' "${v_t[@]}" | median)
echo "runs:                       $runs each"
echo "run, no vault:              $(awk -v x="$p" 'BEGIN{printf "%.1f ms", x/1000}') (median)"
echo "run, 50-entry vault:        $(awk -v x="$v" 'BEGIN{printf "%.1f ms", x/1000}') (median)"
echo "added by the vault:         $(awk -v a="$v" -v b="$p" 'BEGIN{printf "%.1f ms", (a-b)/1000}') (goal: at most 10 ms)"
