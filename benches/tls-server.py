# The HTTPS server of benches/ended-tls.sh: keep-alive HTTP/1.1 on 127.0.0.1, /big is
# 1 GiB in 1 MiB writes, anything else a two-byte answer. Prints its port.
#   tls-server.py DIR TOKEN
# Every request is checked, so that a run measures what it says: toward ended.* the
# Authorization header must carry TOKEN (the proxy put the value in), toward tunnel.* it
# must not (the tunnel carried the placeholder as it was); otherwise the answer is 403.
import socket
import ssl
import sys
import threading

d, token = sys.argv[1], sys.argv[2].encode()
size = 1 << 30
chunk = b"x" * (1 << 20)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/server.pem", d + "/server.key")
ctx.set_alpn_protocols(["http/1.1"])


def handle(c):
    try:
        s = ctx.wrap_socket(c, server_side=True)
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                got = s.recv(65536)
                if not got:
                    return
                buf += got
            head, buf = buf.split(b"\r\n\r\n", 1)
            path = head.split(b" ", 2)[1]
            fields = dict(
                (k.strip().lower(), v.strip())
                for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
            )
            auth = fields.get(b"authorization", b"")
            host = fields.get(b"host", b"")
            if (host.startswith(b"ended.") and auth != b"Bearer " + token) or (
                host.startswith(b"tunnel.") and token in auth
            ):
                s.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 5\r\n\r\nwrong")
                continue
            if path == b"/big":
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size)
                for _ in range(size // len(chunk)):
                    s.sendall(chunk)
            else:
                s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except (OSError, ssl.SSLError):
        pass
    finally:
        c.close()


srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(256)
print(srv.getsockname()[1], flush=True)
while True:
    c, _ = srv.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=handle, args=(c,), daemon=True).start()
