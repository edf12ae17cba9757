#!/usr/bin/env bash
# Where a sandbox start's time goes: the phases of `git loop run -q ID --net NET -- true`
# and of raw bwrap with the same command line (as benches/spawn.sh makes it), alternating,
# from the kernel's process events (exec, fork, exit) recorded with `perf record` across
# the machine, as medians over the runs:
#
#   git-loop's exec to bwrap's exec     the supervisor's start and plan (raw: none)
#   bwrap's exec to init's exec         bwrap building the sandbox
#   init's exec to the command's exec   init's setup (a run: and the laid mounts)
#   the command's exit to bwrap's exit  the sandbox ending
#   bwrap's exit to git-loop's exit     the supervisor's teardown and import (raw: none)
#
# A whole-run ratio (benches/spawn.sh) says how far a start is from its goal; this says
# which phase holds the difference, and moves by less than the whole when the machine is
# shared (each phase is a median of its own). Needs `perf` and the right to record
# tracepoints (root, or kernel.perf_event_paranoid at most -1), and python3 to read them.
#
#   benches/phases.sh [RUNS [NET]]   (default 41 runs each, alternating, after warm-up;
#                                    NET is the run's network mode, none or proxy: the
#                                    raw line is the same, without a network, as in
#                                    benches/spawn.sh; in the proxy mode the spawner
#                                    makes the sandbox's network namespace before
#                                    bwrap's exec, so that cost moves from the second
#                                    phase to the first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-41}
net=${2:-none}
case $net in
  none | proxy) ;;
  *)
    echo "phases.sh: unknown network mode '$net'" >&2
    echo "hint: benches/phases.sh 41 none, or benches/phases.sh 41 proxy" >&2
    exit 2
    ;;
esac

if ! command -v perf >/dev/null || ! command -v python3 >/dev/null; then
  echo "phases.sh: needs perf and python3" >&2
  echo "hint: apt-get install linux-perf python3" >&2
  exit 2
fi

source benches/lib.sh
bench_build
bench_workspace
bench_loop
"$bin" run -q "$id" --net "$net" -- true
# Past the plan cache's racy window (see spawn.sh).
sleep 2.1
raw=$(bench_raw_line "$bin" "$id")
for _ in 1 2 3; do "$bin" run -q "$id" --net "$net" -- true; eval "$raw"; done

# The runs, alternating; each side marked by the program it execs first.
cat > "$tmp/runs.sh" <<EOF
for _ in \$(seq $runs); do
  "$bin" run -q "$id" --net $net -- true
  $raw
done
EOF
if ! perf record -q -a -o "$tmp/perf.data" \
  -e sched:sched_process_exec,sched:sched_process_exit,sched:sched_process_fork \
  -- bash "$tmp/runs.sh" 2>"$tmp/perf.err"; then
  echo "phases.sh: perf cannot record the process events here: $(head -1 "$tmp/perf.err")" >&2
  echo "hint: run as root, or lower kernel.perf_event_paranoid (sysctl kernel.perf_event_paranoid=-1)" >&2
  exit 2
fi
perf script -i "$tmp/perf.data" -F comm,pid,tid,time,event,trace 2>/dev/null > "$tmp/events.txt"

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp/events.txt" "$bin" "$runs" "$load" "$net" <<'EOF'
import re, statistics, sys
path, binary, runs, load, net = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
line = re.compile(r'\s*(\S+)\s+(\d+)/(\d+)\s+([\d.]+):\s+sched:(\S+):\s*(.*)')
starts = []  # each start: its side and the times of its events, in ms
cur = None
for text in open(path):
    m = line.match(text)
    if not m:
        continue
    comm, pid, tid, t, event, rest = m.groups()
    pid, tid, t = int(pid), int(tid), float(t) * 1000
    if event == 'sched_process_exec' and f'filename={binary} ' in rest + ' ':
        cur = {'side': 'run', 'start': t, 'sup': pid}
        starts.append(cur)
        continue
    if event == 'sched_process_exec' and comm == 'bwrap' and (cur is None or 'bwrap_exit' in cur):
        # bash exec'd bwrap itself: the raw line.
        cur = {'side': 'raw', 'start': t, 'bwrap_exec': t, 'bwrap': pid}
        starts.append(cur)
        continue
    if cur is None:
        continue
    if event == 'sched_process_exec' and comm == 'bwrap' and 'bwrap' not in cur:
        cur['bwrap_exec'], cur['bwrap'] = t, pid
    elif event == 'sched_process_exec' and 'init_exec' not in cur and 'bwrap' in cur and comm != 'bwrap':
        cur['init_exec'] = t
    elif event == 'sched_process_exec' and 'init_exec' in cur and 'cmd_exec' not in cur:
        cur['cmd_exec'], cur['cmd'] = t, pid
    elif event == 'sched_process_exit' and pid == cur.get('cmd') and pid == tid:
        cur['cmd_exit'] = t
    elif event == 'sched_process_exit' and pid == cur.get('bwrap') and pid == tid:
        cur['bwrap_exit'] = t
    elif event == 'sched_process_exit' and pid == cur.get('sup') and pid == tid:
        cur['exit'] = t

phases = [
    ("git-loop's exec to bwrap's exec", 'start', 'bwrap_exec'),
    ("bwrap's exec to init's exec", 'bwrap_exec', 'init_exec'),
    ("init's exec to the command's exec", 'init_exec', 'cmd_exec'),
    ("the command's exec to its exit", 'cmd_exec', 'cmd_exit'),
    ("the command's exit to bwrap's exit", 'cmd_exit', 'bwrap_exit'),
    ("bwrap's exit to git-loop's exit", 'bwrap_exit', 'exit'),
]
def complete(s):
    need = ['bwrap_exec', 'init_exec', 'cmd_exec', 'cmd_exit', 'bwrap_exit'] + (['exit'] if s['side'] == 'run' else [])
    return all(k in s for k in need)
side = {k: [s for s in starts if s['side'] == k and complete(s)] for k in ('run', 'raw')}
if len(side['run']) < runs // 2 or len(side['raw']) < runs // 2:
    sys.exit(f"phases.sh: only {len(side['run'])} runs and {len(side['raw'])} raw starts could be read of {runs} each")
def med(ss, a, b):
    v = [s[b] - s[a] for s in ss if a in s and b in s]
    return statistics.median(v) if v else None
print(f"load average:  {load} (end); the run's network: {net}")
print(f"starts read:   {len(side['run'])} git loop, {len(side['raw'])} raw, of {runs} each")
print(f"{'phase (medians, ms)':38s} {'git loop':>9s} {'raw':>9s} {'over raw':>9s}")
for name, a, b in phases:
    r = med(side['run'], a, b)
    # The raw line starts at bwrap's exec: it has no first phase.
    w = None if a == 'start' else med(side['raw'], a, b)
    fmt = lambda x: f"{x:9.3f}" if x is not None else f"{'-':>9s}"
    over = (r or 0) - (w or 0)
    print(f"{name:38s} {fmt(r)} {fmt(w)} {over:+9.3f}")
end = lambda s: s['exit'] if s['side'] == 'run' else s['bwrap_exit']
tr = statistics.median([end(s) - s['start'] for s in side['run']])
tw = statistics.median([end(s) - s['start'] for s in side['raw']])
print(f"{'whole (exec to exit)':38s} {tr:9.3f} {tw:9.3f} {tr - tw:+9.3f}   ({tr / tw:.2f}x; the shell's fork and wait not included)")
EOF
