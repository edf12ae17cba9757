#!/usr/bin/env bash
# Agent state to `watch`: the time from an agent's hook writing its state inside a live
# session's sandbox (the moment just before the write, taken inside) to the line `git loop
# watch --json` prints for it (the moment a reader on the host gets the line), as medians
# over alternating `working` and `needs-input` writes (goal: within 1 s).
#
#   benches/watch.sh [RUNS]     (default 41 changes)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-41}

source benches/lib.sh
bench_build
bench_workspace
bench_loop
"$bin" up -q "$id" --net none
file="/loopat/loop/$id/.claude/.git-loop-agent-state"

# Each line `watch` prints, stamped (microseconds) as the reader gets it.
watched="$tmp/watched"
# `watch` started on its own (its pid known, so that it is ended with the script: it
# would otherwise wait for its next line, holding the script's output open).
exec {watch_out}< <(exec "$bin" watch --json "$id")
watcher=$!
while IFS= read -r line <&"$watch_out"; do
  echo "${EPOCHREALTIME/./} $line"
done >"$watched" &
reader=$!
trap 'kill $watcher $reader 2>/dev/null; "$bin" down -q "$id" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
sleep 1

lat=()
for i in $(seq "$runs"); do
  word=$([ $((i % 2)) = 1 ] && echo working || echo needs-input)
  seen=$(grep -c "\"state\":\"$word\"" "$watched" || true)
  # The hook, as the agent's runs it: one write of the word; its moment taken inside.
  t0=$("$bin" run -q "$id" -- sh -c "date +%s%6N; printf '%s\n' $word > $file")
  until [ "$(grep -c "\"state\":\"$word\"" "$watched" || true)" -gt "$seen" ]; do
    sleep 0.01
  done
  t1=$(grep "\"state\":\"$word\"" "$watched" | tail -1 | cut -d' ' -f1)
  lat+=($(( (t1 - t0) / 1000 )))
done
m=$(printf '%s\n' "${lat[@]}" | median)
max=$(printf '%s\n' "${lat[@]}" | sort -n | tail -1)
echo "hook -> watch line: median ${m} ms, max ${max} ms over $runs changes (goal: 1000 ms)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
