# The client of benches/ended-tls.sh, inside the sandbox: Python's http.client through the
# proxy's CONNECT, trusting the sandbox's bundle (with the run's CA) and the bench CA, an
# Authorization header with the bound entry's placeholder on every request.
#   get HOST PORT       1 GiB, prints THROUGHPUT bytes MB/s
#   latency HOST PORT   prints KEPT ms (median of 200 requests on one connection) and
#                       FRESH ms (median of 100 new connections with one request each)
import base64
import http.client
import os
import ssl
import statistics
import sys
import time
import urllib.parse

mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
auth = {
    "Proxy-Authorization": "Basic "
    + base64.b64encode(("%s:%s" % (proxy.username, proxy.password)).encode()).decode()
}
ctx = ssl.create_default_context()
ctx.load_verify_locations(".bench-ca.pem")
ctx.set_alpn_protocols(["http/1.1"])
headers = {"Authorization": "Bearer " + os.environ["BENCH_TOKEN"]}


def conn():
    c = http.client.HTTPSConnection(proxy.hostname, proxy.port, context=ctx)
    c.set_tunnel(host, port, headers=auth)
    return c


def get(c, path):
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    if r.status != 200:
        raise SystemExit("status %d: %s" % (r.status, r.read()[:300]))
    return r


if mode == "get":
    c = conn()
    t0 = time.perf_counter()
    r = get(c, "/big")
    n = 0
    buf = bytearray(1 << 20)
    while True:
        k = r.readinto(buf)
        if not k:
            break
        n += k
    dt = time.perf_counter() - t0
    print("THROUGHPUT %d %.1f" % (n, n / dt / 1e6), flush=True)
else:
    c = conn()
    for _ in range(20):
        get(c, "/small").read()
    kept = []
    for _ in range(200):
        t0 = time.perf_counter()
        get(c, "/small").read()
        kept.append(time.perf_counter() - t0)
    fresh = []
    for _ in range(100):
        t0 = time.perf_counter()
        c = conn()
        get(c, "/small").read()
        c.close()
        fresh.append(time.perf_counter() - t0)
    print("KEPT %.4f" % (statistics.median(kept) * 1000))
    print("FRESH %.4f" % (statistics.median(fresh) * 1000), flush=True)
