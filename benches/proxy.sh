#!/usr/bin/env bash
# The costs of the `proxy` network mode, on loopback (goals from issue 6 in brackets):
#   - 1 GiB through the proxy (a CONNECT tunnel, from inside a sandbox) against 1 GiB
#     direct on the host, same server, same client [at least 0.8x the direct throughput];
#     once with a server on the host's default congestion control, once with a server on
#     Reno (which never paces), so the proxy's own cost shows whatever the default is;
#   - the median latency a new connection gains through the proxy (CONNECT, then one small
#     request) [at most 1 ms];
#   - 256 concurrent connections held through the proxy: the supervising git-loop's peak
#     resident memory over the whole run, transfers included [under 64 MiB];
#   - sandbox start with `--net proxy` against raw bwrap [at most 2x];
#   - credential sentinels (issue 16, benches/ended-tls.sh): HTTPS through a connection
#     whose TLS the proxy ends (a vault entry bound to the host, its placeholder replaced
#     in every request) against the same HTTPS through a plain CONNECT tunnel: throughput
#     of 1 GiB [at least 0.7x], and the latency each request gains on a kept-alive
#     connection and on a new one [at most 2 ms].
#
#   benches/proxy.sh [RUNS]     (start-up runs, default 31 each; 7 transfers and 5
#                               latency rounds of 200 connections each, alternating)
#   benches/proxy.sh --ended-tls   (the credential sentinels' part alone)
#
# With BASELINE_BIN set to another build of git-loop (an earlier commit's), it also
# compares the two proxies in 15 pairs (each: 1 GiB from each server and 200 new
# connections, through one binary then the other, on the same workspace and servers).
#
# Every server and client is on this machine: the server listens on 127.0.0.1, and the
# operator config pins the name bench.test to it.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-31}
ended_only=""
if [ "$runs" = "--ended-tls" ]; then ended_only=1; runs=31; fi

source benches/lib.sh
source benches/ended-tls.sh
bench_build

tmp=$(mktemp -d /tmp/git-loop-bench.XXXXXX)
server_pid=""
server2_pid=""
cleanup() {
  [ -n "${tls_server_pid:-}" ] && kill "$tls_server_pid" 2>/dev/null || true
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "$server2_pid" ] && kill "$server2_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
export GIT_LOOP_HOME="$tmp/ws" HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
mkdir -p "$HOME" "$XDG_CONFIG_HOME/git-loop"
cat >"$XDG_CONFIG_HOME/git-loop/config.toml" <<'EOF'
[network]
allow_cidrs = ["127.0.0.0/8"]

[network.hosts]
"bench.test" = "127.0.0.1"
EOF
git init -q -b main "$tmp/repo"
echo hi >"$tmp/repo/README"
git -C "$tmp/repo" add README && git -C "$tmp/repo" commit -q -m first
id=$(cd "$tmp/repo" && "$bin" new -q bench)
wd="$GIT_LOOP_HOME/loops/$id/workdir"

# The server: the 1 GiB body by sendfile from the page cache (so the kernel, not Python,
# sets its pace), small answers, and an echo for held connections. (`--ended-tls` has a
# server of its own and needs no file.)
[ -n "$ended_only" ] || head -c $((1 << 30)) /dev/zero >"$tmp/big"
cat >"$tmp/server.py" <<'PY'
import os, socket, sys, threading
big = sys.argv[1]
# Optional: the congestion control of the server's connections (default: the host's).
cc = sys.argv[2].encode() if len(sys.argv) > 2 else None
size = os.path.getsize(big)
def handle(c):
    try:
        data = b""
        while b"\r\n\r\n" not in data:
            d = c.recv(65536)
            if not d:
                return
            data += d
        path = data.split(b" ", 2)[1]
        if path == b"/big":
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
            with open(big, "rb") as f:
                c.sendfile(f)
        elif path == b"/echo":
            # A switch to WebSocket, then an echo: the proxy frames HTTP requests, and
            # after a 101 carries the connection as it is.
            c.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            while True:
                d = c.recv(65536)
                if not d:
                    break
                c.sendall(d)
        else:
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    except OSError:
        pass
    finally:
        c.close()
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(1024)
print(srv.getsockname()[1], flush=True)
while True:
    c, _ = srv.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if cc:
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc)
    threading.Thread(target=handle, args=(c,), daemon=True).start()
PY
# The client, the same on both sides (the system's python3, the one the sandbox has).
cat >"$wd/.bench.py" <<'PY'
import base64, os, socket, statistics, sys, time, urllib.parse

def auth():
    u = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
    return "Basic " + base64.b64encode(("%s:%s" % (u.username, u.password)).encode()).decode()

def head(s, status=b" 200 "):
    data = b""
    while b"\r\n\r\n" not in data:
        d = s.recv(4096)
        if not d:
            raise SystemExit("closed early")
        data += d
    line, rest = data.split(b"\r\n\r\n", 1)
    if status not in line.split(b"\r\n")[0] + b" ":
        raise SystemExit(line.decode(errors="replace"))
    return rest

def connect(via, host, port):
    if via == "direct":
        s = socket.create_connection((host, port))
    else:
        s = socket.create_connection(("127.0.0.1", 3128))
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: %s\r\n\r\n"
                   % (host, port, host, port, auth())).encode())
        head(s)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def request(s, host, path):
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host)).encode())

def upgrade(s, host, path):
    s.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" % (path, host)).encode())

def throughput(via, host, port):
    s = connect(via, host, port)
    t0 = time.perf_counter()
    request(s, host, "/big")
    n = len(head(s))
    buf = bytearray(1 << 20)
    while True:
        k = s.recv_into(buf)
        if not k:
            break
        n += k
    dt = time.perf_counter() - t0
    return n, n / dt

def latency(via, host, port, count):
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        s = connect(via, host, port)
        request(s, host, "/small")
        while s.recv(4096):
            pass
        s.close()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)

mode, via, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if mode in ("get", "all"):
    n, rate = throughput(via, host, port)
    print("THROUGHPUT %d %.1f" % (n, rate / 1e6), flush=True)
if mode == "latency":
    latency(via, host, port, 20)
    print("LATENCY %.4f" % (latency(via, host, port, 200) * 1000), flush=True)
if mode == "all":
    held = []
    for _ in range(256):
        s = connect(via, host, port)
        upgrade(s, host, "/echo")
        head(s, b" 101 ")
        held.append(s)
    for s in held:
        s.sendall(b"ping")
    assert all(s.recv(4) == b"ping" for s in held)
    print("HELD %d" % len(held), flush=True)
    open(".held", "w").close()
    while not os.path.exists(".release"):
        time.sleep(0.05)
    for s in held:
        s.close()
PY

if [ -n "$ended_only" ]; then
  ended_tls
  exit 0
fi
python3 "$tmp/server.py" "$tmp/big" >"$tmp/port" &
server_pid=$!
# A second server whose connections use Reno, which never paces: with it, neither side's
# figure depends on the host's default congestion control (BBR paces, and caps a loopback
# transfer well below what the loopback moves), and the ratio is the proxy's own cost.
python3 "$tmp/server.py" "$tmp/big" reno >"$tmp/port2" &
server2_pid=$!
while [ ! -s "$tmp/port" ] || [ ! -s "$tmp/port2" ]; do sleep 0.05; done
port=$(cat "$tmp/port")
port2=$(cat "$tmp/port2")
cat "$tmp/big" >/dev/null


# Throughput and latency, alternating direct (on the host), direct from a sandbox that
# shares the host's network (`--net host`: what the sandbox alone costs), and through
# the proxy from a sandbox, so all three see the same noise of a shared machine.
direct=""; sandboxed=""; proxied=""
inside() { "$bin" run -q "$id" "$@"; }
for _ in 1 2 3 4 5 6 7; do
  direct+=$(cd "$wd" && /usr/bin/python3 .bench.py get direct 127.0.0.1 "$port")$'\n'
  sandboxed+=$(inside --net host -- python3 .bench.py get direct 127.0.0.1 "$port")$'\n'
  proxied+=$(inside --net proxy --allow-domain bench.test -- python3 .bench.py get connect bench.test "$port")$'\n'
done
unpaced_direct=""; unpaced_proxied=""
for _ in 1 2 3 4 5 6 7; do
  unpaced_direct+=$(cd "$wd" && /usr/bin/python3 .bench.py get direct 127.0.0.1 "$port2")$'\n'
  unpaced_proxied+=$(inside --net proxy --allow-domain bench.test -- python3 .bench.py get connect bench.test "$port2")$'\n'
done
for _ in 1 2 3 4 5; do
  direct+=$(cd "$wd" && /usr/bin/python3 .bench.py latency direct 127.0.0.1 "$port")$'\n'
  proxied+=$(inside --net proxy --allow-domain bench.test -- python3 .bench.py latency connect bench.test "$port")$'\n'
done

if [ -n "${BASELINE_BIN:-}" ]; then
  b_t=""; a_t=""; b_u=""; a_u=""; b_l=""; a_l=""
  pair() { "$1" run -q "$id" --net proxy --allow-domain bench.test -- python3 .bench.py "$2" connect bench.test "$3"; }
  for _ in $(seq 15); do
    b_t+=$(pair "$BASELINE_BIN" get "$port")$'\n'; a_t+=$(pair "$bin" get "$port")$'\n'
    b_u+=$(pair "$BASELINE_BIN" get "$port2")$'\n'; a_u+=$(pair "$bin" get "$port2")$'\n'
    b_l+=$(pair "$BASELINE_BIN" latency "$port")$'\n'; a_l+=$(pair "$bin" latency "$port")$'\n'
  done
  rate() { echo "$1" | awk '/THROUGHPUT/ {print $3}' | median; }
  lat() { echo "$1" | awk '/LATENCY/ {print $2}' | median; }
  echo "paired, host default:      baseline $(rate "$b_t") MB/s, this build $(rate "$a_t") MB/s (medians of 15)"
  echo "paired, Reno server:       baseline $(rate "$b_u") MB/s, this build $(rate "$a_u") MB/s"
  echo "paired, new connection:    baseline $(lat "$b_l") ms, this build $(lat "$a_l") ms (medians of 15 medians of 200)"
fi

# Memory: one run moves 1 GiB, then holds 256 connections; the supervisor's peak is read
# while they are held.
"$bin" run -q "$id" --net proxy --allow-domain bench.test -- python3 .bench.py all connect bench.test "$port" >"$tmp/inside" 2>&1 &
sup=$!
while [ ! -e "$wd/.held" ]; do
  kill -0 "$sup" 2>/dev/null || { cat "$tmp/inside"; exit 1; }
  sleep 0.05
done
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$sup/status")
rss=$(awk '/VmRSS/ {print $2}' "/proc/$sup/status")
threads=$(awk '/Threads/ {print $2}' "/proc/$sup/status")
touch "$wd/.release"
wait "$sup"
held=$(awk '/HELD/ {print $2}' "$tmp/inside")

d_rate=$(echo "$direct" | awk '/THROUGHPUT/ {print $3}' | median)
s_rate=$(echo "$sandboxed" | awk '/THROUGHPUT/ {print $3}' | median)
p_rate=$(echo "$proxied" | awk '/THROUGHPUT/ {print $3}' | median)
ud_rate=$(echo "$unpaced_direct" | awk '/THROUGHPUT/ {print $3}' | median)
up_rate=$(echo "$unpaced_proxied" | awk '/THROUGHPUT/ {print $3}' | median)
d_lat=$(echo "$direct" | awk '/LATENCY/ {print $2}' | median)
p_lat=$(echo "$proxied" | awk '/LATENCY/ {print $2}' | median)

# Start-up: `--net proxy` against raw bwrap with the same namespaces and binds (the
# `--net none` command line, minus the descriptors only git-loop can hand over).
raw=$("$bin" run "$id" --net none --print-argv -- true | sed -E 's/ --add-seccomp-fd [0-9]+//g; s/ --ro-bind-data [0-9]+ [^ ]+//g; s/ --(ro-)?bind-fd [0-9]+ [^ ]+//g')
for _ in 1 2 3; do "$bin" run -q "$id" --net proxy -- true; "$bin" run -q "$id" --net none -- true; eval "$raw"; done
proxy_t=(); none_t=(); raw_t=()
for _ in $(seq "$runs"); do
  t0=${EPOCHREALTIME/./}000; "$bin" run -q "$id" --net proxy -- true; t1=${EPOCHREALTIME/./}000
  "$bin" run -q "$id" --net none -- true; t2=${EPOCHREALTIME/./}000
  eval "$raw"; t3=${EPOCHREALTIME/./}000
  proxy_t+=($(( (t1 - t0) / 1000 ))); none_t+=($(( (t2 - t1) / 1000 ))); raw_t+=($(( (t3 - t2) / 1000 )))
done
sp=$(printf '%s\n' "${proxy_t[@]}" | median)
sn=$(printf '%s\n' "${none_t[@]}" | median)
sr=$(printf '%s\n' "${raw_t[@]}" | median)

ms() { awk -v v="$1" 'BEGIN{printf "%.1f ms", v/1000}'; }
echo "1 GiB direct, host:        $d_rate MB/s (median of 7)"
echo "1 GiB direct, sandboxed:   $s_rate MB/s (median of 7, --net host)"
echo "1 GiB through the proxy:   $p_rate MB/s (median of 7, CONNECT tunnel from the sandbox)"
echo "throughput ratio:          $(awk -v a="$p_rate" -v b="$d_rate" 'BEGIN{printf "%.2fx", a/b}') of direct on the host (goal: at least 0.8x); $(awk -v a="$p_rate" -v b="$s_rate" 'BEGIN{printf "%.2fx", a/b}') of direct from the sandbox"
echo "host congestion control:   $(cat /proc/sys/net/ipv4/tcp_congestion_control) (the server's connections above use it)"
echo "1 GiB, Reno server:        direct $ud_rate MB/s, through the proxy $up_rate MB/s (medians of 7): $(awk -v a="$up_rate" -v b="$ud_rate" 'BEGIN{printf "%.2fx", a/b}') (no pacing anywhere: the proxy's own cost)"
echo "new connection, direct:    $d_lat ms (median of 5 medians of 200: connect, GET, answer, close)"
echo "new connection, proxied:   $p_lat ms"
echo "added per connection:      $(awk -v a="$p_lat" -v b="$d_lat" 'BEGIN{printf "%.3f ms", a-b}') (goal: at most 1 ms)"
echo "256 connections held:      $held held; supervisor peak $(awk -v v="$hwm" 'BEGIN{printf "%.1f MiB", v/1024}'), now $(awk -v v="$rss" 'BEGIN{printf "%.1f MiB", v/1024}'), $threads threads (goal: under 64 MiB)"
echo "start, raw bwrap:          $(ms "$sr") (median of $runs)"
echo "start, --net none:         $(ms "$sn")"
echo "start, --net proxy:        $(ms "$sp")"
echo "start ratio proxy/raw:     $(awk -v a="$sp" -v b="$sr" 'BEGIN{printf "%.2fx", a/b}') (goal: at most 2x)"

ended_tls
