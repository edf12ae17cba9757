# Sourced by benches/proxy.sh (needs $bin, $tmp, $id, $wd, $XDG_CONFIG_HOME): credential
# sentinels (issue 16). An HTTPS server (Python's ssl, keep-alive, 1 MiB writes), a test CA
# the proxy trusts through the operator's upstream_ca, two names for the same server, and
# a vault entry bound to one of them. Through `ended.bench.test` the proxy ends TLS, puts
# the value in every request's Authorization header, masks every form of it in the answer
# (searched as the body streams) and speaks TLS again to the server;
# through `tunnel.bench.test` the same client's TLS goes through a CONNECT tunnel as it is.
# The client and the server are the same on both sides; the server answers 403 (and the
# client stops the benchmark) unless the value arrived through the ended side and only
# the placeholder through the tunnel.

tls_server_pid=""

ended_tls() {
  local d="$tmp/tls"
  mkdir -p "$d"
  (cd "$d" &&
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key \
      -out ca.pem -days 2 -subj "/CN=bench CA" -addext basicConstraints=critical,CA:TRUE \
      -addext keyUsage=critical,keyCertSign 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key \
      -out server.csr -subj "/CN=bench" 2>/dev/null &&
    printf 'subjectAltName=DNS:ended.bench.test,DNS:tunnel.bench.test\nextendedKeyUsage=serverAuth\n' >ext.cnf &&
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
      -days 2 -extfile ext.cnf 2>/dev/null)
  {
    echo '[network]'
    echo 'allow_cidrs = ["127.0.0.0/8"]'
    echo 'allow_domains = ["ended.bench.test", "tunnel.bench.test"]'
    echo "upstream_ca = \"$d/ca.pem\""
    echo
    echo '[network.hosts]'
    echo '"bench.test" = "127.0.0.1"'
    echo '"ended.bench.test" = "127.0.0.1"'
    echo '"tunnel.bench.test" = "127.0.0.1"'
  } >"$XDG_CONFIG_HOME/git-loop/config.toml"
  local token="bench-token-0123456789abcdefghijklmnopqrstuv"
  cp "$d/ca.pem" "$wd/.bench-ca.pem"
  cp benches/tls-server.py "$d/server.py"
  cp benches/tls-client.py "$wd/.bench-tls.py"
  python3 "$d/server.py" "$d" "$token" >"$d/port" &
  tls_server_pid=$!
  while [ ! -s "$d/port" ]; do
    kill -0 "$tls_server_pid" 2>/dev/null || { echo "the TLS server did not start"; return 1; }
    sleep 0.05
  done
  local tport ended="" tunneled=""
  tport=$(cat "$d/port")
  # Bound to the server's port: a binding without one is port 443 alone.
  printf %s "$token" |
    "$bin" vault set -q default env BENCH_TOKEN --for "ended.bench.test:$tport"
  inside_tls() { "$bin" run -q "$id" --net proxy -- python3 .bench-tls.py "$@"; }
  for _ in 1 2 3 4 5 6 7; do
    tunneled+=$(inside_tls get tunnel.bench.test "$tport")$'\n'
    ended+=$(inside_tls get ended.bench.test "$tport")$'\n'
  done
  for _ in 1 2 3 4 5; do
    tunneled+=$(inside_tls latency tunnel.bench.test "$tport")$'\n'
    ended+=$(inside_tls latency ended.bench.test "$tport")$'\n'
  done
  kill "$tls_server_pid" 2>/dev/null || true
  tls_server_pid=""
  local t_rate e_rate t_kept e_kept t_fresh e_fresh
  t_rate=$(echo "$tunneled" | awk '/THROUGHPUT/ {print $3}' | median)
  e_rate=$(echo "$ended" | awk '/THROUGHPUT/ {print $3}' | median)
  t_kept=$(echo "$tunneled" | awk '/KEPT/ {print $2}' | median)
  e_kept=$(echo "$ended" | awk '/KEPT/ {print $2}' | median)
  t_fresh=$(echo "$tunneled" | awk '/FRESH/ {print $2}' | median)
  e_fresh=$(echo "$ended" | awk '/FRESH/ {print $2}' | median)
  echo "HTTPS 1 GiB, CONNECT tunnel:  $t_rate MB/s (median of 7)"
  echo "HTTPS 1 GiB, TLS ended:       $e_rate MB/s (median of 7; the placeholder replaced)"
  echo "throughput ratio:             $(awk -v a="$e_rate" -v b="$t_rate" 'BEGIN{printf "%.2fx", a/b}') (goal: at least 0.7x)"
  echo "request, kept-alive:          tunnel $t_kept ms, ended $e_kept ms: $(awk -v a="$e_kept" -v b="$t_kept" 'BEGIN{printf "%.3f ms", a-b}') added (medians of 5 medians of 200; goal: at most 2 ms)"
  echo "request, new connection:      tunnel $t_fresh ms, ended $e_fresh ms: $(awk -v a="$e_fresh" -v b="$t_fresh" 'BEGIN{printf "%.3f ms", a-b}') added (CONNECT, TLS, one request; medians of 5 medians of 100)"
}
