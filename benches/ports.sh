#!/usr/bin/env bash
# A loop's forwarded port (issue 32): 1 GiB from a server inside a live session, read on
# the host through the loop's port (the supervisor's relay), against 1 GiB from the same
# server on the host read directly over loopback [at least 0.8x the direct throughput].
#
#   benches/ports.sh [RUNS]     (transfers per side, default 7, alternating)
#
# The server is the same Python program on both sides, sending a 1 GiB file by sendfile
# from the page cache; the client is the same Python program on the host, reading into a
# 1 MiB buffer. The transfers run twice: with the server's connections on the host's
# default congestion control, and on Reno (which never paces), so the relay's own cost
# shows whatever the default is. Everything is on this machine's loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}

source benches/lib.sh
bench_build
bench_workspace
server_pid=""
server2_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$server2_pid" ] && kill "$server2_pid" 2>/dev/null || true
  [ -n "${id:-}" ] && "$bin" down "$id" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$HOME" "$XDG_CONFIG_HOME"

git init -q -b main "$tmp/repo"
echo hi >"$tmp/repo/README"
git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
id=$(cd "$tmp/repo" && "$bin" new -q bench)
wd="$GIT_LOOP_HOME/loops/$id/workdir"
inside_wd="/loopat/loop/$id/workdir"
head -c $((1 << 30)) /dev/zero >"$wd/.big"

cat >"$wd/.server.py" <<'PY'
import os, socket, sys, threading
big, port = sys.argv[1], int(sys.argv[2])
cc = sys.argv[3].encode() if len(sys.argv) > 3 else None
size = os.path.getsize(big)
def handle(c):
    try:
        with open(big, "rb") as f:
            c.sendfile(f)
    except OSError:
        pass
    finally:
        c.close()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
print(srv.getsockname()[1], flush=True)
while True:
    c, _ = srv.accept()
    if cc:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc)
    threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
cat >"$tmp/client.py" <<'PY'
import socket, sys, time
port, want = int(sys.argv[1]), 1 << 30
buf = bytearray(1 << 20)
t = time.perf_counter()
s = socket.create_connection(("127.0.0.1", port))
got = 0
while True:
    n = s.recv_into(buf)
    if not n:
        break
    got += n
s.close()
dt = time.perf_counter() - t
if got != want:
    raise SystemExit("got %d bytes" % got)
print("%.1f" % (got / dt / 1e6))
PY

# Two servers each way: host default and Reno.
"$bin" up "$id" >/dev/null 2>&1
"$bin" run -q "$id" -- sh -c "setsid python3 $inside_wd/.server.py $inside_wd/.big 8080 >/dev/null 2>&1 </dev/null &
setsid python3 $inside_wd/.server.py $inside_wd/.big 8081 reno >/dev/null 2>&1 </dev/null &"
relay=$("$bin" port "$id" 8080 2>/dev/null | sed -E 's#.*:([0-9]+)/$#\1#')
relay_reno=$("$bin" port "$id" 8081 2>/dev/null | sed -E 's#.*:([0-9]+)/$#\1#')
python3 "$wd/.server.py" "$wd/.big" 0 >"$tmp/port-direct" &
server_pid=$!
python3 "$wd/.server.py" "$wd/.big" 0 reno >"$tmp/port-direct-reno" &
server2_pid=$!
for _ in $(seq 100); do
  [ -s "$tmp/port-direct" ] && [ -s "$tmp/port-direct-reno" ] && break
  sleep 0.1
done
direct=$(cat "$tmp/port-direct"); direct_reno=$(cat "$tmp/port-direct-reno")
# The inside servers answer once started.
for _ in $(seq 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $relay)).recv(1) or exit(1)" 2>/dev/null && break
  sleep 0.1
done
# Warm the page cache and both paths.
python3 "$tmp/client.py" "$direct" >/dev/null
python3 "$tmp/client.py" "$relay" >/dev/null

for cc in default reno; do
  if [ $cc = default ]; then d=$direct; r=$relay; else d=$direct_reno; r=$relay_reno; fi
  : >"$tmp/d" ; : >"$tmp/r"
  for _ in $(seq "$runs"); do
    python3 "$tmp/client.py" "$d" >>"$tmp/d"
    python3 "$tmp/client.py" "$r" >>"$tmp/r"
  done
  md=$(median <"$tmp/d"); mr=$(median <"$tmp/r")
  echo "1 GiB, server on $cc: direct $(sort -n "$tmp/d" | tr '\n' ' ')MB/s (median $md)"
  echo "1 GiB, server on $cc: relay  $(sort -n "$tmp/r" | tr '\n' ' ')MB/s (median $mr)"
  echo "relay / direct ($cc): $(awk -v a="$mr" -v b="$md" 'BEGIN {printf "%.2fx", a / b}')"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
