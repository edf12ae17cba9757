#!/usr/bin/env bash
# Sandbox start-up: median wall time of `git loop run -q ID --net none -- true` against
# raw `bwrap` with the same namespaces and binds (the argv `git loop run --print-argv`
# prints, minus the seccomp descriptors only git-loop can hand over), as a ratio (goal:
# at most 1.3x); the CPU time of each (user + system of the whole process tree, from the
# shell's children's times, in blocks of RUNS runs, since a tick of 10 ms is too coarse
# for one run), which the machine's load stretches less than the wall time; the proxy
# network mode against the same raw bwrap (goal: at most 1.5x); and sandbox-runtime's
# `srt true` side by side (goal: git loop at least 30x faster; skipped, and said, when
# `srt` is not installed: `npm install -g @anthropic-ai/sandbox-runtime`, which needs
# `rg` and `socat`). Then git loop against raw bwrap with the same mounts: the binds
# git-loop makes by descriptor made by path instead (bwrap's work grows with each mount:
# it reads the whole mount table after each bind), which leaves out only the seccomp
# programs. `--print-argv` prints every mount as one bwrap command line would make it;
# a run lays the binds below a folder bound by path itself once bwrap has made its own (the same
# view, see src/sandbox/bwrap.rs), so both raw lines are what bwrap alone would do. Then the same once sandbox-home-skel/ holds a dotfile, which makes
# $HOME an overlay. Also the resident memory of the supervising git-loop while a command
# runs (goal: under 16 MiB). The load average is printed with the figures.
#
#   benches/spawn.sh [RUNS]     (default 51 runs each, alternating, after warm-up)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-51}

source benches/lib.sh
bench_build
bench_workspace
bench_loop
# A fresh loop's files are younger than the plan cache's racy window (two seconds): a
# first run, then the wait, so that what a start keeps (the plan, the walk of the git
# folders) is used from the first measured run on, as it is for a loop in use.
"$bin" run -q "$id" --net none -- true
sleep 2.1

# Sets $l and $r: the medians of `git loop run -q ID -- true` and of the raw baseline,
# the same bwrap command line, alternating. `--net none` throughout: this measures the
# sandbox itself; benches/proxy.sh measures the proxy network mode. Descriptors only
# git-loop can hand over (the seccomp programs, init's refusal report pipe, the sandbox's resolv.conf, and the binds it
# makes by descriptor: a loop repository's pinned .git, its config, commondir and hooks,
# the personal config, grants) are left out of the raw command line, so the baseline does
# less than the sandbox and the ratio errs against git-loop.
measure() {
  local id=$1 raw
  raw=$(bench_raw_line "$bin" "$id")
  for _ in 1 2 3; do "$bin" run -q "$id" --net none -- true; eval "$raw"; done
  local loop_t=() raw_t=() t0 t1 t2
  for _ in $(seq "$runs"); do
    t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" --net none -- true; t1=${EPOCHREALTIME/./}000
    eval "$raw"; t2=${EPOCHREALTIME/./}000
    loop_t+=($(( (t1 - t0) / 1000 ))); raw_t+=($(( (t2 - t1) / 1000 )))
  done
  l=$(printf '%s\n' "${loop_t[@]}" | median)
  r=$(printf '%s\n' "${raw_t[@]}" | median)
}

# The children's CPU time of this shell so far, in clock ticks (user + system).
child_ticks() {
  local st
  read -r -a st </proc/$$/stat
  echo $((st[15] + st[16]))
}

# Sets $cpu: the CPU time per run, in microseconds, of RUNS runs of the command "$@",
# in one block.
cpu_of() {
  local t0 t1
  t0=$(child_ticks)
  for _ in $(seq "$runs"); do "$@"; done
  t1=$(child_ticks)
  cpu=$(( (t1 - t0) * 1000000 / $(getconf CLK_TCK) / runs ))
}
run_raw() { eval "$raw"; }

# The same command line with every bind by descriptor made by path (the loop's own
# folders and files where git-loop opens them; the sandbox's resolv.conf from the host's),
# each `--ro-bind-try`/`--bind-try` so that a source the run leaves out (absent) is left
# out here too. Only the seccomp programs are missing.
same_mounts() {
  local id=$1 user
  user=$(id -un)
  "$bin" run "$id" --net none --print-argv -- true | sed -E \
    -e 's/ --add-seccomp-fd [0-9]+//g' -e 's/ --report-fd [0-9]+//g' \
    -e 's# --ro-bind-data [0-9]+ (/etc/resolv.conf)# --ro-bind \1 \1#g' \
    -e "s#--(ro-)?bind-fd [0-9]+ /loopat/loop/$id/([^ ]*)#--\1bind-try $GIT_LOOP_HOME/loops/$id/\2 /loopat/loop/$id/\2#g" \
    -e "s#--(ro-)?bind-fd [0-9]+ /loopat/context/notes/([^ ]*)#--\1bind-try $GIT_LOOP_HOME/loops/$id/context/notes/\2 /loopat/context/notes/\2#g" \
    -e "s#--(ro-)?bind-fd [0-9]+ /loopat/context/personal/([^ ]*)#--\1bind-try $GIT_LOOP_HOME/personal/$user/\2 /loopat/context/personal/\2#g"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
measure "$id"
l1=$l r1=$r

# CPU time: git loop and raw bwrap in blocks, twice each, alternating (the median of
# two is their mean).
raw=$(bench_raw_line "$bin" "$id")
cl=() cr=()
for _ in 1 2; do
  cpu_of "$bin" run -q "$id" --net none -- true; cl+=("$cpu")
  cpu_of run_raw; cr+=("$cpu")
done
cpu_l=$(printf '%s\n' "${cl[@]}" | median)
cpu_r=$(printf '%s\n' "${cr[@]}" | median)

# Against raw bwrap with the same mounts, alternating, and its CPU time in blocks.
same=$(same_mounts "$id")
if printf '%s' "$same" | grep -q -- '-fd '; then
  echo "spawn.sh: a descriptor of the command line has no path here: $same" >&2
  exit 1
fi
eval "$same"
same_t=() sl_t2=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" --net none -- true; t1=${EPOCHREALTIME/./}000
  eval "$same"; t2=${EPOCHREALTIME/./}000
  sl_t2+=($(( (t1 - t0) / 1000 ))); same_t+=($(( (t2 - t1) / 1000 )))
done
lm=$(printf '%s\n' "${sl_t2[@]}" | median)
rm_=$(printf '%s\n' "${same_t[@]}" | median)
run_same() { eval "$same"; }
cs=()
for _ in 1 2; do cpu_of run_same; cs+=("$cpu"); done
cpu_s=$(printf '%s\n' "${cs[@]}" | median)

# The proxy network mode (its proxy started and stopped with every run) against the
# same raw bwrap without a network, alternating.
for _ in 1 2 3; do "$bin" run -q "$id" --net proxy -- true; eval "$raw"; done
proxy_t=() praw_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" --net proxy -- true; t1=${EPOCHREALTIME/./}000
  eval "$raw"; t2=${EPOCHREALTIME/./}000
  proxy_t+=($(( (t1 - t0) / 1000 ))); praw_t+=($(( (t2 - t1) / 1000 )))
done
lp=$(printf '%s\n' "${proxy_t[@]}" | median)
rp=$(printf '%s\n' "${praw_t[@]}" | median)

# sandbox-runtime's `srt true`, alternating with `git loop run`; fewer runs, since each
# takes the better part of a second.
srt_runs=$(( runs < 21 ? runs : 21 ))
if command -v srt >/dev/null && srt true >/dev/null 2>&1; then
  srt_t=() sl_t=()
  for _ in $(seq "$srt_runs"); do
    t0=${EPOCHREALTIME/./}000; srt true; t1=${EPOCHREALTIME/./}000
    "$bin" run -q "$id" --net none -- true; t2=${EPOCHREALTIME/./}000
    srt_t+=($(( (t1 - t0) / 1000 ))); sl_t+=($(( (t2 - t1) / 1000 )))
  done
  ls_=$(printf '%s\n' "${srt_t[@]}" | median)
  ll_=$(printf '%s\n' "${sl_t[@]}" | median)
else
  ls_=""
fi
# The same with dotfiles in sandbox-home-skel/, where $HOME is an overlay git-loop mounts
# in a namespace of its own (a fresh loop, so its own $HOME starts as an empty layer).
echo 'export EDITOR=vi' >"$GIT_LOOP_HOME/sandbox-home-skel/.profile"
measure "$(cd "$tmp/repo" && "$bin" new -q bench-skel)"
l2=$l r2=$r
l=$l1 r=$r1

# A command joined into the loop's live session (`git loop up`), against the same raw
# bwrap (goal: at most 0.5x), alternating; and the session's supervisor's resident memory
# while the session is idle (goal: under 8 MiB).
raw=$(bench_raw_line "$bin" "$id")
"$bin" up -q "$id" --net none
for _ in 1 2 3; do "$bin" run -q "$id" -- true; eval "$raw"; done
join_t=() jraw_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" -- true; t1=${EPOCHREALTIME/./}000
  eval "$raw"; t2=${EPOCHREALTIME/./}000
  join_t+=($(( (t1 - t0) / 1000 ))); jraw_t+=($(( (t2 - t1) / 1000 )))
done
lj=$(printf '%s\n' "${join_t[@]}" | median)
rj=$(printf '%s\n' "${jraw_t[@]}" | median)
sleep 1
sup_pid=$(cat "$GIT_LOOP_HOME/locks/live/$id.pid")
sup_rss=$(awk '/VmRSS/ {print $2}' "/proc/$sup_pid/status")
"$bin" down -q "$id"

# Resident memory of the supervising git-loop while the sandboxed command runs.
"$bin" run -q "$id" --net none -- sleep 2 &
sup=$!
sleep 1
rss=$(awk '/VmRSS/ {print $2}' "/proc/$sup/status")
wait "$sup"

echo "load average:              $load0 (start), $(cut -d' ' -f1-3 /proc/loadavg) (end)"
echo "runs:                      $runs each"
echo "raw bwrap:                 $(awk -v v="$r" 'BEGIN{printf "%.1f ms", v/1000}') (median)"
echo "git loop run -q -- true:   $(awk -v v="$l" 'BEGIN{printf "%.1f ms", v/1000}') (median)"
echo "ratio run/raw:             $(awk -v a="$l" -v b="$r" 'BEGIN{printf "%.2fx", a/b}') (goal: at most 1.3x)"
echo "CPU per run:               git loop $(awk -v v="$cpu_l" 'BEGIN{printf "%.2f ms", v/1000}'), raw bwrap $(awk -v v="$cpu_r" 'BEGIN{printf "%.2f ms", v/1000}'): $(awk -v a="$cpu_l" -v b="$cpu_r" 'BEGIN{printf "%.2fx", a/b}')"
echo "same mounts (by path):     raw bwrap $(awk -v v="$rm_" 'BEGIN{printf "%.1f ms", v/1000}') against git loop $(awk -v v="$lm" 'BEGIN{printf "%.1f ms", v/1000}'): $(awk -v a="$lm" -v b="$rm_" 'BEGIN{printf "%.2fx", a/b}'); CPU $(awk -v v="$cpu_s" 'BEGIN{printf "%.2f ms", v/1000}') (git loop's over it: $(awk -v a="$cpu_l" -v b="$cpu_s" 'BEGIN{printf "%.2f ms", (a-b)/1000}'))"
echo "proxy mode:                $(awk -v v="$lp" 'BEGIN{printf "%.1f ms", v/1000}') against raw (no network) $(awk -v v="$rp" 'BEGIN{printf "%.1f ms", v/1000}'): $(awk -v a="$lp" -v b="$rp" 'BEGIN{printf "%.2fx", a/b}') (goal: at most 1.5x)"
if [ -n "$ls_" ]; then
  echo "srt true:                  $(awk -v v="$ls_" 'BEGIN{printf "%.1f ms", v/1000}') against git loop $(awk -v v="$ll_" 'BEGIN{printf "%.1f ms", v/1000}') ($srt_runs alternating): git loop $(awk -v a="$ls_" -v b="$ll_" 'BEGIN{printf "%.1fx", a/b}') faster (goal: at least 30x)"
else
  echo "srt true:                  not measured: srt is not installed or cannot run (npm install -g @anthropic-ai/sandbox-runtime; it needs rg and socat)"
fi
echo "with a skeleton (overlay):  $(awk -v v="$l2" 'BEGIN{printf "%.1f ms", v/1000}') against raw $(awk -v v="$r2" 'BEGIN{printf "%.1f ms", v/1000}'): $(awk -v a="$l2" -v b="$r2" 'BEGIN{printf "%.2fx", a/b}')"
echo "supervisor resident:       $(awk -v v="$rss" 'BEGIN{printf "%.1f MiB", v/1024}') (goal: under 16 MiB)"
echo "with a vault:              see benches/vault.sh (what a vault adds to this)"
echo "joined (session up):       $(awk -v v="$lj" 'BEGIN{printf "%.2f ms", v/1000}') against raw $(awk -v v="$rj" 'BEGIN{printf "%.1f ms", v/1000}'): $(awk -v a="$lj" -v b="$rj" 'BEGIN{printf "%.2fx", a/b}') (goal: at most 0.5x)"
echo "idle session's supervisor: $(awk -v v="$sup_rss" 'BEGIN{printf "%.1f MiB", v/1024}') resident (goal: under 8 MiB)"
