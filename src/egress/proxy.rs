//! The host side of the `proxy` network mode: for one run, an HTTP proxy (absolute-URI
//! requests and CONNECT) and a SOCKS5 proxy (CONNECT to a domain name), serving the two
//! listening sockets the spawner makes in the sandbox's network namespace and hands over
//! (see relay.rs), on one thread of the supervising `git-loop` with a current-thread tokio
//! runtime, so the supervisor stays one small process.
//!
//! Every connection goes through the same steps, in this order:
//! 1. the client proves it has this run's token (`Proxy-Authorization: Basic`, or SOCKS5
//!    username/password), before anything about the policy is revealed;
//! 2. the target host, as the client spelled it, passes [`Policy::check_host`], and every
//!    other name the request carries (the Host header) is the same canonical host;
//! 3. the name is resolved (or taken from the operator's pins), every address passes
//!    [`Policy::check_addr`], and exactly a checked address is dialed: nothing resolves
//!    the name a second time;
//! 4. in a tunnel (CONNECT, SOCKS), the client's first bytes are read before they are
//!    sent on, and say what the tunnel carries: TLS, whose ClientHello's server name
//!    must name the tunnel's host; HTTP; or, only to a host and port the baseline or the
//!    operator allow raw TCP (`allow_raw_tcp`: ssh to the git hosts), anything else;
//! 5. on a forward connection and in a tunnel that carries HTTP, every request, not only
//!    the first, is framed (http1.rs) and checked as in step 2, with the tunnel's host
//!    in place of the allowlist, and rebuilt before it goes on (`http_session`):
//!    keep-alive and pipelining work, and no body can smuggle a request past the checks.
//!
//! Bytes whose framing is known move with splice(2) through a pipe per direction (a
//! request or response body of known length, exactly that length; a TLS or raw tunnel
//! as a whole): the proxy hands page references from one socket to the other and copies
//! nothing itself. Heads, chunk-size lines and small chunks pass through its memory.
//!
//! A refusal answers 403 with a body that says it is the sandbox's policy and names the
//! rule (or the SOCKS code 2, "not allowed by ruleset"; or, in a tunnel whose client does
//! not speak HTTP, the end of the tunnel), and appends a violation event to the loop's
//! `events.jsonl`. Failures that are not the policy's (a name that does not
//! resolve, a server that is down) answer 502 or the matching SOCKS code and are not
//! violations.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, Semaphore};

use super::http1;
use super::intercept::{self, Tls};
use super::policy::{canonical_host, Policy, Refusal, Rule};
use super::relay;
use super::sentinel::{Sentinels, StreamSearch, MAX_BODY};
use super::wire::{self, ClientHello, SocksAddr};

/// At most this many connections at once; more wait in the listen backlog.
const MAX_CONNECTIONS: usize = 1024;
/// How long a client may take to send a request head or a SOCKS message.
pub(super) const HEAD_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the first bytes of a tunnel may take to show their host, once they started.
const PEEK_TIMEOUT: Duration = Duration::from_secs(15);
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a request that expects `100 Continue` holds its body for the server's 100
/// (curl's own wait).
const CONTINUE_WAIT: Duration = Duration::from_secs(1);
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// The buffered copy (used where no splice pipe can be had): buffers start small, so idle
/// connections stay cheap, and grow while a transfer fills them, up to `MAX_BUFFER`.
const MIN_BUFFER: usize = 8 * 1024;
const MAX_BUFFER: usize = 256 * 1024;
/// Bytes of copy buffer beyond `MIN_BUFFER`, over all connections: buffers grow only while
/// this lasts, so the supervisor's memory stays bounded however many transfers are busy.
const GROWTH_BUDGET: usize = 24 * 1024 * 1024;
/// Violation events written per run; a sandbox hammering the proxy cannot fill the disk.
const MAX_RECORDED: u64 = 1000;

const POLICY_NOTE: &str =
    "This is a decision of the sandbox's network policy, not a network fault: \
retrying, or reaching the host another way, will not work. If the task needs this host, say so \
and why; a person can allow it (git loop run --allow-domain NAME, or [network] allow_domains in \
the sandbox profile).";

const CREDENTIAL_NOTE: &str =
    "This is a decision of the sandbox's network policy, not a network fault. The credential \
in this sandbox is a placeholder: git-loop's proxy puts the real value in only over HTTPS to \
the hosts the vault entry is bound to, and refuses it everywhere else. Use the credential with \
those hosts; if the task needs it elsewhere, say so and why (a person can bind it: git loop \
vault bind).";

/// What the proxy of one run enforces and where it reports.
pub struct Setup {
    pub policy: Policy,
    /// This run's token: the password of the proxy URLs.
    pub token: String,
    /// The loop's `events.jsonl`.
    pub events: PathBuf,
    /// The bound vault entries of the run (none: the proxy never ends TLS).
    pub sentinels: Sentinels,
    /// The run's CA, when there are bound entries.
    pub tls: Option<Arc<Tls>>,
}

/// Counts of one run, for the closing status line.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections: AtomicU64,
    pub refusals: AtomicU64,
    /// Allowed connections whose server could not be reached (no address, refused,
    /// timed out): not the policy's doing, but worth a line in the log.
    pub upstream_failures: AtomicU64,
}

pub(super) struct Shared {
    pub(super) policy: Policy,
    token: String,
    events: PathBuf,
    stats: Arc<Stats>,
    permits: Arc<Semaphore>,
    /// Copy-buffer bytes granted beyond `MIN_BUFFER` (see `GROWTH_BUDGET`).
    grown: AtomicUsize,
    pub(super) sentinels: Sentinels,
    pub(super) tls: Option<Arc<Tls>>,
}

/// A running proxy; [`Proxy::stop`] ends it.
pub struct Proxy {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    stats: Arc<Stats>,
}

impl Proxy {
    /// Starts the proxy thread. It waits for the spawner's handover on `channel`, then
    /// serves until [`Proxy::stop`].
    pub fn start(channel: std::os::unix::net::UnixStream, setup: Setup) -> io::Result<Proxy> {
        // Built here, so a failure is reported before the sandbox starts.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(4)
            .thread_stack_size(512 * 1024)
            .build()?;
        channel.set_nonblocking(true)?;
        raise_nofile();
        let stats = Arc::new(Stats::default());
        let shared = Arc::new(Shared {
            policy: setup.policy,
            token: setup.token,
            events: setup.events,
            stats: stats.clone(),
            permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            grown: AtomicUsize::new(0),
            sentinels: setup.sentinels,
            tls: setup.tls,
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("git-loop-proxy".into())
            .stack_size(512 * 1024)
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::select! {
                        _ = stopped => {}
                        _ = serve(channel, shared) => {}
                    }
                });
                // Open connections end with the run; a name lookup still running in the
                // blocking pool is not waited for.
                runtime.shutdown_background();
            })?;
        Ok(Proxy {
            stop: Some(stop),
            thread: Some(thread),
            stats,
        })
    }

    /// Ends the proxy (every open connection closes) and returns its counts.
    pub fn stop(mut self) -> Arc<Stats> {
        self.shutdown();
        self.stats.clone()
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A connection holds two sockets and two pipes: the soft descriptor limit goes up to the
/// hard one. (The sandbox gets its own limit, set in the child; see limits.rs.)
fn raise_nofile() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct we pass.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max.min(64 * 1024);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

async fn serve(channel: std::os::unix::net::UnixStream, shared: Arc<Shared>) -> io::Result<()> {
    let channel = tokio::net::UnixStream::from_std(channel)?;
    let listeners = loop {
        channel.readable().await?;
        let fd = channel.as_raw_fd();
        match channel.try_io(tokio::io::Interest::READABLE, || relay::recv_listeners(fd)) {
            Ok(l) => break l,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    let mut listeners = listeners.into_iter();
    let (Some(http), Some(socks)) = (listeners.next(), listeners.next()) else {
        return Err(io::Error::other("no listeners came over the proxy channel"));
    };
    http.set_nonblocking(true)?;
    socks.set_nonblocking(true)?;
    let http = TcpListener::from_std(http)?;
    let socks = TcpListener::from_std(socks)?;
    drop(channel);
    loop {
        let permit = shared
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(io::Error::other)?;
        let (stream, socks_port) = tokio::select! {
            r = http.accept() => (r, false),
            r = socks.accept() => (r, true),
        };
        let stream = match stream {
            Ok((s, _)) => s,
            Err(_) => {
                // Out of descriptors, most likely: let some connections finish.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let shared = shared.clone();
        tokio::spawn(async move {
            if socks_port {
                socks_connection(stream, &shared).await;
            } else {
                http_connection(stream, &shared).await;
            }
            drop(permit);
        });
    }
}

impl Shared {
    pub(super) fn violation(&self, via: &str, target: &str, refusal: &Refusal) {
        let n = self.stats.refusals.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_RECORDED {
            return;
        }
        let reason = if n + 1 == MAX_RECORDED {
            format!(
                "{} (further refusals of this run are not recorded)",
                refusal.reason
            )
        } else {
            refusal.reason.clone()
        };
        let target: String = target.chars().take(300).collect();
        let mut event = json!({"action": "network-outbound", "target": target, "reason": reason,
                   "rule": refusal.rule.as_str(), "via": via});
        if let Some(entry) = &refusal.entry {
            event["entry"] = json!(entry);
        }
        let _ = crate::sandbox::events::append(&self.events, "violation", event);
    }

    /// An allowed target whose server could not be reached: an `upstream` event, so that
    /// a run that waited on a server that never answered says why in `git loop log`.
    pub(super) fn upstream_failed(&self, target: &str, error: &str) {
        let n = self.stats.upstream_failures.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_RECORDED {
            return;
        }
        let target: String = target.chars().take(300).collect();
        let error: String = error.chars().take(300).collect();
        let _ = crate::sandbox::events::append(
            &self.events,
            "upstream",
            json!({"target": target, "error": error}),
        );
    }

    fn token_matches(&self, given: &[u8]) -> bool {
        // Constant time in the token's content: no timing oracle for guessing it.
        let want = self.token.as_bytes();
        given.len() == want.len()
            && given
                .iter()
                .zip(want)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// A CONNECT target or a SOCKS name that carries a placeholder (a name to look up is a
/// way out too).
fn misplaced_in_target(sh: &Shared, target: &str) -> Result<(), Refusal> {
    match sh.sentinels.misplaced_in(None, target.as_bytes()) {
        Some(m) => Err(intercept::misplaced(&m, "a host name")),
        None => Ok(()),
    }
}

fn no_token() -> Refusal {
    Refusal::new(
        Rule::Credentials,
        "the client did not present this run's proxy credentials",
    )
}

// ---------------------------------------------------------------------------------------
// HTTP: CONNECT and absolute-URI requests
// ---------------------------------------------------------------------------------------

async fn http_connection(mut client: TcpStream, sh: &Arc<Shared>) {
    let mut buf = Vec::with_capacity(4096);
    let head = match tokio::time::timeout(
        HEAD_TIMEOUT,
        read_parsed(&mut client, &mut buf, wire::MAX_HEAD, wire::request_head),
    )
    .await
    {
        Ok(Ok(Some(head))) => head,
        Ok(Ok(None)) | Err(_) => return,
        Ok(Err(e)) => {
            let refusal = Refusal::new(Rule::Malformed, e.to_string());
            sh.violation("http", "?", &refusal);
            respond(&mut client, 400, "?", &refusal, false).await;
            return;
        }
    };
    let target = target_of(&head);
    let authorized = match head.single("proxy-authorization") {
        // No credentials at all is how many clients (libcurl, so git) ask which scheme the
        // proxy wants: the 407 is the answer, not yet a violation.
        Ok(None) => None,
        Ok(Some(v)) => {
            Some(wire::basic_credentials(v).is_some_and(|(_, pass)| sh.token_matches(&pass)))
        }
        Err(_) => Some(false),
    };
    if authorized != Some(true) {
        let refusal = no_token();
        if authorized.is_some() {
            sh.violation("http", &target, &refusal);
        }
        respond(&mut client, 407, &target, &refusal, true).await;
        return;
    }
    if head.method.eq_ignore_ascii_case("CONNECT") {
        let early = buf.split_off(head.len);
        http_connect(client, &head, early, sh).await;
    } else {
        // The first request is framed and checked like every later one.
        http_session(client, None, buf, Route::Forward, sh).await;
    }
}

async fn http_connect(
    mut client: TcpStream,
    head: &wire::RequestHead,
    early: Vec<u8>,
    sh: &Arc<Shared>,
) {
    let target = head.target.as_str();
    let (raw_host, port) = match wire::authority(target, None) {
        Ok((h, Some(p))) => (h, p),
        Ok((_, None)) => {
            let r = Refusal::new(Rule::Malformed, "a CONNECT target needs a port");
            return respond(&mut client, 400, target, &r, false).await;
        }
        Err(e) => {
            let r = Refusal::new(Rule::Malformed, e.to_string());
            sh.violation("connect", target, &r);
            return respond(&mut client, 400, target, &r, false).await;
        }
    };
    let checked = misplaced_in_target(sh, target)
        .and_then(|()| sh.policy.check_host(&raw_host))
        .and_then(|host| host_header_agrees(head, &host, port).map(|()| host));
    let host = match checked {
        Ok(h) => h,
        Err(r) => {
            sh.violation("connect", target, &r);
            return respond(&mut client, 403, target, &r, false).await;
        }
    };
    let upstream = match dial(sh, &host, port).await {
        Ok(s) => s,
        Err(Dial::Refused(r)) => {
            sh.violation("connect", target, &r);
            return respond(&mut client, 403, target, &r, false).await;
        }
        Err(Dial::Failed(why)) => return bad_gateway(&mut client, target, &why).await,
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    tunnel(client, upstream, early, &host, port, "connect", sh).await;
}

/// `host:port` of a request as the client wrote it, for events and messages (the raw
/// target when it has no host).
fn target_of(head: &wire::RequestHead) -> String {
    if head.method.eq_ignore_ascii_case("CONNECT") {
        return head.target.clone();
    }
    match wire::absolute_uri(&head.target) {
        Ok(uri) => format!("{}:{}", uri.host, uri.port),
        Err(_) => head.target.clone(),
    }
}

/// The Host header, if any, must name the request's host (and port, when it names one).
fn host_header_agrees(head: &wire::RequestHead, host: &str, port: u16) -> Result<(), Refusal> {
    let value = match head.single("host") {
        Ok(Some(v)) => v,
        Ok(None) => return Ok(()),
        Err(e) => return Err(Refusal::new(Rule::Mismatch, e.to_string())),
    };
    let value = std::str::from_utf8(value)
        .map_err(|_| Refusal::new(Rule::Mismatch, "the Host header is not text"))?;
    let (h, p) = wire::authority(value.trim(), None).map_err(|_| {
        Refusal::new(
            Rule::Mismatch,
            format!("the Host header {value:?} is not a host"),
        )
    })?;
    let named = canonical_host(&h)
        .map_err(|r| Refusal::new(Rule::Mismatch, format!("the Host header: {}", r.reason)))?;
    if named != host || p.is_some_and(|p| p != port) {
        return Err(Refusal::new(
            Rule::Mismatch,
            format!("the Host header names {value}, the request {host}:{port}"),
        ));
    }
    Ok(())
}

/// The answer to a refused request: its status, and a body that says it is the sandbox's
/// policy and names the rule, so an agent stops retrying around it.
fn refusal_answer(status: u16, target: &str, refusal: &Refusal, ask_credentials: bool) -> Vec<u8> {
    let text = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        407 => "Proxy Authentication Required",
        _ => "Error",
    };
    let (headers, body) = refusal_parts(status, target, refusal);
    let mut head = format!("HTTP/1.1 {status} {text}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    ));
    if ask_credentials {
        head.push_str("Proxy-Authenticate: Basic realm=\"git-loop sandbox\"\r\n");
    }
    head.push_str("\r\n");
    head.push_str(&body);
    head.into_bytes()
}

/// The headers (beyond framing) and the body of a refusal, shared by the HTTP/1 answers
/// here and the ones on connections the proxy ends (intercept.rs).
pub(super) fn refusal_parts(
    _status: u16,
    target: &str,
    refusal: &Refusal,
) -> (Vec<(&'static str, String)>, String) {
    let target: String = target.chars().take(300).collect();
    let note = match refusal.rule {
        Rule::Credential => CREDENTIAL_NOTE,
        _ => POLICY_NOTE,
    };
    let body = format!(
        "git-loop sandbox policy: {target:?} refused.\nrule: {}\nreason: {}\n\n{note}\n",
        refusal.rule.as_str(),
        refusal.reason
    );
    let headers = vec![
        ("Content-Type", "text/plain; charset=utf-8".to_string()),
        ("X-Git-Loop-Policy", refusal.rule.as_str().to_string()),
    ];
    (headers, body)
}

fn bad_gateway_answer(target: &str, why: &str) -> Vec<u8> {
    let body = format!("git-loop proxy: cannot reach {target:?}: {why}\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn respond(
    client: &mut TcpStream,
    status: u16,
    target: &str,
    refusal: &Refusal,
    ask_credentials: bool,
) {
    let _ = client
        .write_all(&refusal_answer(status, target, refusal, ask_credentials))
        .await;
    let _ = client.shutdown().await;
}

async fn bad_gateway(client: &mut TcpStream, target: &str, why: &str) {
    let _ = client.write_all(&bad_gateway_answer(target, why)).await;
    let _ = client.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// SOCKS5
// ---------------------------------------------------------------------------------------

/// SOCKS5 reply codes (RFC 1928).
const SOCKS_FAILURE: u8 = 1;
const SOCKS_NOT_ALLOWED: u8 = 2;
const SOCKS_HOST_UNREACHABLE: u8 = 4;
const SOCKS_REFUSED: u8 = 5;
const SOCKS_TIMED_OUT: u8 = 6;
const SOCKS_COMMAND_UNSUPPORTED: u8 = 7;

async fn socks_connection(mut client: TcpStream, sh: &Arc<Shared>) {
    let mut buf = Vec::with_capacity(512);
    let Some((methods, used)) = complete(
        tokio::time::timeout(
            HEAD_TIMEOUT,
            read_parsed(&mut client, &mut buf, 1024, wire::socks_greeting),
        )
        .await,
    ) else {
        return;
    };
    buf.drain(..used);
    if !methods.contains(&2) {
        sh.violation("socks", "?", &no_token());
        let _ = client.write_all(&[5, 0xff]).await;
        return;
    }
    if client.write_all(&[5, 2]).await.is_err() {
        return;
    }
    let Some((_, pass, used)) = complete(
        tokio::time::timeout(
            HEAD_TIMEOUT,
            read_parsed(&mut client, &mut buf, 1024, wire::socks_userpass),
        )
        .await,
    ) else {
        return;
    };
    buf.drain(..used);
    if !sh.token_matches(&pass) {
        sh.violation("socks", "?", &no_token());
        let _ = client.write_all(&[1, 1]).await;
        return;
    }
    if client.write_all(&[1, 0]).await.is_err() {
        return;
    }
    let Some(req) = complete(
        tokio::time::timeout(
            HEAD_TIMEOUT,
            read_parsed(&mut client, &mut buf, 1024, wire::socks_request),
        )
        .await,
    ) else {
        return;
    };
    let early = buf.split_off(req.len);
    let target = req.target();
    let host = match misplaced_in_target(sh, &target)
        .map_err(|r| (SOCKS_NOT_ALLOWED, r))
        .and_then(|()| socks_target(&req, &sh.policy))
    {
        Ok(h) => h,
        Err((code, r)) => {
            sh.violation("socks", &target, &r);
            return socks_reply(&mut client, code).await;
        }
    };
    let upstream = match dial(sh, &host, req.port).await {
        Ok(s) => s,
        Err(Dial::Refused(r)) => {
            sh.violation("socks", &target, &r);
            return socks_reply(&mut client, SOCKS_NOT_ALLOWED).await;
        }
        Err(Dial::Failed(why)) => {
            let code = if why.contains("refused") {
                SOCKS_REFUSED
            } else if why.contains("timed out") {
                SOCKS_TIMED_OUT
            } else if why.contains("resolve") {
                SOCKS_HOST_UNREACHABLE
            } else {
                SOCKS_FAILURE
            };
            return socks_reply(&mut client, code).await;
        }
    };
    if client
        .write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        .await
        .is_err()
    {
        return;
    }
    tunnel(client, upstream, early, &host, req.port, "socks", sh).await;
}

/// The canonical host a SOCKS5 request may reach, or the reply code and the refusal.
fn socks_target(req: &wire::SocksRequest, policy: &Policy) -> Result<String, (u8, Refusal)> {
    if req.command != 1 {
        let what = match req.command {
            2 => "BIND",
            3 => "UDP ASSOCIATE",
            _ => "an unknown command",
        };
        return Err((
            SOCKS_COMMAND_UNSUPPORTED,
            Refusal::new(
                Rule::Unsupported,
                format!("SOCKS5 {what}: the proxy carries CONNECT only (no UDP, no DNS)"),
            ),
        ));
    }
    let numeric = |a: String| {
        Err((
            SOCKS_NOT_ALLOWED,
            Refusal::new(
                Rule::NumericHost,
                format!("the address {a}; the proxy reaches host names only"),
            ),
        ))
    };
    let raw = match &req.addr {
        SocksAddr::V4(a) => return numeric(a.to_string()),
        SocksAddr::V6(a) => return numeric(a.to_string()),
        SocksAddr::Domain(d) => std::str::from_utf8(d).map_err(|_| {
            (
                SOCKS_NOT_ALLOWED,
                Refusal::new(Rule::Malformed, "the SOCKS5 domain name is not text"),
            )
        })?,
    };
    policy.check_host(raw).map_err(|r| (SOCKS_NOT_ALLOWED, r))
}

/// The message of a timed read, when one arrived complete.
fn complete<T>(
    r: Result<Result<Option<T>, wire::WireError>, tokio::time::error::Elapsed>,
) -> Option<T> {
    match r {
        Ok(Ok(Some(v))) => Some(v),
        _ => None,
    }
}

async fn socks_reply(client: &mut TcpStream, code: u8) {
    let _ = client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await;
    let _ = client.shutdown().await;
}

// ---------------------------------------------------------------------------------------
// Dialing, tunnels, copying
// ---------------------------------------------------------------------------------------

pub(super) enum Dial {
    /// The policy refused an address.
    Refused(Refusal),
    /// Not the policy: the name does not resolve, the server does not answer.
    Failed(String),
}

/// Resolves `host` (or takes its pin), checks every address, and connects to a checked
/// one: the address dialed is always one that was checked. A server that cannot be
/// reached is recorded as an `upstream` event.
pub(super) async fn dial(sh: &Shared, host: &str, port: u16) -> Result<TcpStream, Dial> {
    let result = dial_checked(sh, host, port).await;
    if let Err(Dial::Failed(why)) = &result {
        sh.upstream_failed(&format!("{host}:{port}"), why);
    }
    result
}

async fn dial_checked(sh: &Shared, host: &str, port: u16) -> Result<TcpStream, Dial> {
    let addrs: Vec<IpAddr> = match sh.policy.pinned(host) {
        Some(ip) => vec![ip],
        None => match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port)))
            .await
        {
            Ok(Ok(found)) => {
                let mut ips: Vec<IpAddr> = Vec::new();
                for a in found {
                    if !ips.contains(&a.ip()) {
                        ips.push(a.ip());
                    }
                }
                ips
            }
            Ok(Err(e)) => return Err(Dial::Failed(format!("cannot resolve {host}: {e}"))),
            Err(_) => return Err(Dial::Failed(format!("cannot resolve {host}: timed out"))),
        },
    };
    if addrs.is_empty() {
        return Err(Dial::Failed(format!("cannot resolve {host}: no address")));
    }
    // Every address, not only the one dialed: a name that resolves to a local address at
    // all is a rebinding attempt, and is refused as a whole.
    for ip in &addrs {
        sh.policy.check_addr(*ip).map_err(Dial::Refused)?;
    }
    let mut last = String::new();
    for ip in addrs {
        match tokio::time::timeout(
            CONNECT_TIMEOUT,
            TcpStream::connect(SocketAddr::new(ip, port)),
        )
        .await
        {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionRefused => {
                last = format!("{ip}: connection refused")
            }
            Ok(Err(e)) => last = format!("{ip}: {e}"),
            Err(_) => last = format!("{ip}: connection timed out"),
        }
    }
    Err(Dial::Failed(last))
}

/// What the first bytes of a tunnel are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// A TLS ClientHello whose server name (if any) is the tunnel's host.
    Tls,
    /// An HTTP/1.x request: this and every later request is framed and checked.
    Http,
    /// Anything else, to a host and port allowed raw TCP.
    Raw,
}

/// A tunnel once its server is connected: its first bytes say what it carries, and it
/// carries that only. TLS and allowed raw TCP are joined as they are; HTTP goes request
/// by request through [`http_session`].
async fn tunnel(
    client: TcpStream,
    upstream: TcpStream,
    mut early: Vec<u8>,
    host: &str,
    port: u16,
    via: &'static str,
    sh: &Arc<Shared>,
) {
    let opening = match opening(&client, &upstream, &mut early, host, port, sh).await {
        Ok(o) => o,
        Err(refusal) => {
            if let Some(r) = refusal {
                sh.violation(via, &format!("{host}:{port}"), &r);
            }
            return;
        }
    };
    if opening == Opening::Http {
        let route = Route::Tunnel {
            host: host.to_string(),
            port,
            via,
        };
        return http_session(client, Some(upstream), early, route, sh).await;
    }
    // TLS toward a host a vault entry is bound to: ended here, so that the entry's value
    // goes in where its placeholder is (intercept.rs). Toward any other host it is
    // carried as it is, and no value can reach it.
    if opening == Opening::Tls && sh.tls.is_some() && sh.sentinels.any_bound_to(host) {
        return intercept::serve(client, early, upstream, host, port, via, sh.clone()).await;
    }
    let up = half(&client, &upstream, early, &sh.grown);
    let down = half(&upstream, &client, Vec::new(), &sh.grown);
    let _ = tokio::try_join!(up, down);
}

/// Reads the tunnel's first bytes (into `early`) until they show what they are: a TLS
/// ClientHello, whose server name must be `host`; an HTTP request; or, only where the
/// policy allows raw TCP to `host:port`, anything else. A server that speaks first
/// (ssh, SMTP) cannot be speaking TLS or HTTP either. `Err(None)`: the client or the
/// server went away.
async fn opening(
    client: &TcpStream,
    upstream: &TcpStream,
    early: &mut Vec<u8>,
    host: &str,
    port: u16,
    sh: &Shared,
) -> Result<Opening, Option<Refusal>> {
    let raw = |what: &str| {
        if sh.policy.raw_allowed(host, port) {
            Ok(Opening::Raw)
        } else {
            Err(Some(Refusal::new(
                Rule::RawTcp,
                format!(
                    "{what}: the tunnel carries TLS or HTTP, and other protocols only to hosts \
                     and ports the operator allows (allow_raw_tcp); {host}:{port} is not one"
                ),
            )))
        }
    };
    if early.is_empty() {
        tokio::select! {
            biased;
            r = read_some(client, early) => match r {
                Ok(0) | Err(_) => return Err(None),
                Ok(_) => {}
            },
            data = has_data(upstream) => {
                return match data {
                    true => raw("the server spoke first"),
                    false => Err(None),
                };
            }
        }
    }
    let deadline = tokio::time::Instant::now() + PEEK_TIMEOUT;
    loop {
        let verdict = if early[0] == 0x16 && early.get(1).is_none_or(|&b| b == 3) {
            match wire::client_hello_sni(early) {
                ClientHello::NotTls => Some(raw("the first bytes are not a TLS record")),
                ClientHello::NoSni => Some(Ok(Opening::Tls)),
                ClientHello::Incomplete => None,
                ClientHello::Malformed(why) => Some(Err(Some(Refusal::new(
                    Rule::Malformed,
                    format!("an unreadable TLS ClientHello: {why}"),
                )))),
                ClientHello::Sni(name) => Some(
                    same_host("the TLS server name (SNI)", &name, host)
                        .map(|()| Opening::Tls)
                        .map_err(Some),
                ),
            }
        } else {
            match wire::request_head(early) {
                Ok(Some(_)) => Some(Ok(Opening::Http)),
                Ok(None) => None,
                Err(_) => Some(raw("the first bytes are neither TLS nor HTTP")),
            }
        };
        match verdict {
            Some(v) => return v,
            None if early.len() >= wire::MAX_HELLO => {
                return Err(Some(Refusal::new(
                    Rule::Malformed,
                    "the tunnel's first message is too large to read",
                )))
            }
            None => match tokio::time::timeout_at(deadline, read_some(client, early)).await {
                Ok(Ok(n)) if n > 0 => {}
                Ok(_) => return Err(None),
                Err(_) => {
                    return Err(Some(Refusal::new(
                        Rule::Malformed,
                        "the tunnel's first message did not complete",
                    )))
                }
            },
        }
    }
}

/// Peeks at one byte of `s` without waiting: `Ok(0)` at the end of the stream.
fn peek_one(s: &TcpStream) -> io::Result<usize> {
    let mut byte = [0u8; 1];
    // SAFETY: recv into a one-byte buffer we own; MSG_PEEK leaves the data in the socket.
    let n = unsafe {
        libc::recv(
            s.as_raw_fd(),
            byte.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Waits until `s` has something to read (`true`) or has ended (`false`), reading
/// nothing.
async fn has_data(s: &TcpStream) -> bool {
    loop {
        if s.readable().await.is_err() {
            return false;
        }
        match s.try_io(tokio::io::Interest::READABLE, || peek_one(s)) {
            Ok(n) => return n > 0,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => return false,
        }
    }
}

// ---------------------------------------------------------------------------------------
// HTTP sessions: every request framed and checked
// ---------------------------------------------------------------------------------------

/// Where the requests of an HTTP session may go.
enum Route {
    /// A forward-proxy connection: each request names its host in an absolute URI, and
    /// requests for another host go to another server.
    Forward,
    /// A tunnel (CONNECT or SOCKS, `via`) to one host and port: every request must name
    /// it.
    Tunnel {
        host: String,
        port: u16,
        via: &'static str,
    },
}

/// What the request side of a session tells the response side, in request order.
enum Note {
    /// A request went to the server: relay its response.
    Response(Due),
    /// Say when every earlier response is relayed (the server is about to change).
    Drain(oneshot::Sender<()>),
    /// Read responses from this server from now on.
    Upstream(Arc<TcpStream>),
    /// Write this answer (a refusal) after the earlier responses, then close.
    Answer(Vec<u8>),
}

/// What the response side needs to know of a request to relay its response.
struct Due {
    /// The request was HEAD: its response has no body.
    head_request: bool,
    /// The client ends the connection after this response.
    close_after: bool,
    /// The request waits for `100 Continue` before its body is sent on: hears `true`
    /// on a 100, `false` on a final answer (see [`http1::expects_continue`]).
    gate: Option<oneshot::Sender<bool>>,
    /// Hears whether the server switched to WebSocket (the request asked to).
    upgrade: Option<oneshot::Sender<bool>>,
}

/// A request that passed the checks, and what goes to the server for it.
#[derive(Debug, PartialEq, Eq)]
struct Checked {
    host: String,
    port: u16,
    /// The origin-form target sent to the server.
    target: String,
    /// The Host header to add when the client sent none.
    host_header: String,
    framing: http1::Framing,
}

/// Serves an HTTP/1.x connection request by request: each head is read and checked
/// (the host against the route and the allowlist, the Host header against the host,
/// the framing against ambiguity), rebuilt, and sent on with its body framed to the
/// byte, so no body can carry a request past the checks. Responses are relayed in
/// order; keep-alive and pipelining work as the client and server use them. A refused
/// request is answered after the responses before it, and ends the connection.
///
/// `buf` holds what the client has sent that is not yet read (the first request, in a
/// forward connection). A tunnel comes with its server; a forward connection dials the
/// server of each host it names, one at a time.
async fn http_session(
    client: TcpStream,
    upstream: Option<TcpStream>,
    buf: Vec<u8>,
    route: Route,
    sh: &Shared,
) {
    let upstream = upstream.map(Arc::new);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Note>();
    let between = Between::default();
    let up = requests(&client, upstream.clone(), buf, &route, tx, &between, sh);
    let down = responses(&client, upstream, rx, &route, &between, sh);
    // The session ends when the response side does; the request side ending (the client
    // sent its last request) lets the responses still due finish first.
    tokio::select! {
        _ = down => {}
        _ = async { up.await; std::future::pending::<()>().await } => {}
    }
}

/// What the two sides of an [`http_session`] tell each other besides the notes.
#[derive(Default)]
struct Between {
    /// Set by the response side when an idle server closed its connection.
    gone: std::sync::atomic::AtomicBool,
    /// Set by the request side when it stopped a body half-way (a placeholder in it): the
    /// answer the client gets once the server's side is cut.
    stopped: std::sync::Mutex<Option<Vec<u8>>>,
}

/// The request side of [`http_session`].
async fn requests(
    client: &TcpStream,
    mut upstream: Option<Arc<TcpStream>>,
    mut buf: Vec<u8>,
    route: &Route,
    tx: tokio::sync::mpsc::UnboundedSender<Note>,
    between: &Between,
    sh: &Shared,
) {
    let pipe = Pipe::new();
    let mut current: Option<(String, u16)> = match route {
        Route::Tunnel { host, port, .. } => Some((host.clone(), *port)),
        Route::Forward => None,
    };
    loop {
        let head = match read_request_head(client, &mut buf).await {
            Ok(Some(h)) => h,
            Ok(None) => return,
            Err(e) => {
                let r = Refusal::new(Rule::Malformed, e.to_string());
                let target = route_target(route, None);
                sh.violation(route_via(route), &target, &r);
                let _ = tx.send(Note::Answer(refusal_answer(400, &target, &r, false)));
                return;
            }
        };
        let checked = match check_request(sh, route, &head) {
            Ok(c) => c,
            Err((status, r)) => {
                let target = route_target(route, Some(&head));
                sh.violation(route_via(route), &target, &r);
                let answer = refusal_answer(status, &target, &r, status == 407);
                let _ = tx.send(Note::Answer(answer));
                return;
            }
        };
        // A small body is read whole before anything goes on (before a server is even
        // dialed), so that a placeholder in it is refused with an answer; a larger one is
        // searched as it streams, below.
        if let (false, false, http1::Framing::Length(n)) = (
            sh.sentinels.is_empty(),
            http1::expects_continue(&head),
            checked.framing,
        ) {
            if n <= MAX_BODY as u64 {
                let want = head.len + n as usize;
                while buf.len() < want {
                    match tokio::time::timeout(HEAD_TIMEOUT, read_some(client, &mut buf)).await {
                        Ok(Ok(k)) if k > 0 => {}
                        _ => return,
                    }
                }
                if let Some(m) = sh.sentinels.misplaced_in(None, &buf[head.len..want]) {
                    let target = route_target(route, Some(&head));
                    let r = intercept::misplaced(&m, &format!("{target} over plain HTTP"));
                    sh.violation(route_via(route), &target, &r);
                    let _ = tx.send(Note::Answer(refusal_answer(403, &target, &r, false)));
                    return;
                }
            }
        }
        if matches!(route, Route::Forward) {
            let same = current.as_ref() == Some(&(checked.host.clone(), checked.port));
            // The flag is about the server now held, whichever comes next.
            let closed = between.gone.swap(false, Ordering::Relaxed);
            if !same || closed {
                if upstream.take().is_some() {
                    let (ack, drained) = oneshot::channel();
                    if tx.send(Note::Drain(ack)).is_err() || drained.await.is_err() {
                        return;
                    }
                }
                let target = format!("{}:{}", checked.host, checked.port);
                match dial(sh, &checked.host, checked.port).await {
                    Ok(s) => {
                        let s = Arc::new(s);
                        upstream = Some(s.clone());
                        current = Some((checked.host.clone(), checked.port));
                        if tx.send(Note::Upstream(s)).is_err() {
                            return;
                        }
                    }
                    Err(Dial::Refused(r)) => {
                        sh.violation("http", &target, &r);
                        let _ = tx.send(Note::Answer(refusal_answer(403, &target, &r, false)));
                        return;
                    }
                    Err(Dial::Failed(why)) => {
                        let _ = tx.send(Note::Answer(bad_gateway_answer(&target, &why)));
                        return;
                    }
                }
            }
        }
        let Some(server) = upstream.clone() else {
            return;
        };
        let out = http1::forward_head(
            &head,
            &checked.target,
            Some(&checked.host_header),
            checked.framing,
        );
        buf.drain(..head.len);
        if write_all(&server, &out).await.is_err() {
            return;
        }
        let (upgrade, upgraded) = if http1::upgrade_websocket(&head) {
            let (t, r) = oneshot::channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let expect_continue = http1::expects_continue(&head)
            && !matches!(
                checked.framing,
                http1::Framing::None | http1::Framing::Length(0)
            );
        let (gate, gated) = if expect_continue {
            let (t, r) = oneshot::channel();
            (Some(t), Some(r))
        } else {
            (None, None)
        };
        let note = Note::Response(Due {
            head_request: head.method.eq_ignore_ascii_case("HEAD"),
            close_after: http1::closes_after(&head),
            gate,
            upgrade,
        });
        if tx.send(note).is_err() {
            return;
        }
        if let Some(gated) = gated {
            // The body goes on once the server asks for it, and never after it answered
            // without it: a server that then read the body as its next request would
            // take a request the proxy never checked. A server that ignores the
            // expectation is waiting for the body: after CONTINUE_WAIT it is sent.
            match tokio::time::timeout(CONTINUE_WAIT, gated).await {
                Ok(Ok(true)) | Err(_) => {}
                Ok(Ok(false)) | Ok(Err(_)) => return,
            }
        }
        let body = match checked.framing {
            http1::Framing::None => Body::Length(0),
            http1::Framing::Length(n) => Body::Length(n),
            http1::Framing::Chunked => Body::Chunked,
        };
        // With bound entries in the run, a request body is read by the proxy rather than
        // spliced past it, and searched for their placeholders as it goes.
        let mut scan = (!sh.sentinels.is_empty()).then(|| Scan::new(&sh.sentinels));
        let pipe_now = if scan.is_some() { None } else { pipe.as_ref() };
        let relayed = relay_body(client, &server, &mut buf, body, pipe_now, scan.as_mut()).await;
        if let Some(m) = scan.and_then(|s| s.found) {
            let target = route_target(route, Some(&head));
            let r = intercept::misplaced(&m, &format!("{target} over plain HTTP"));
            sh.violation(route_via(route), &target, &r);
            // The server has the head and part of the body, never the rest: its side is
            // cut, and the client is told why.
            *between.stopped.lock().expect("not poisoned") =
                Some(refusal_answer(403, &target, &r, false));
            let _ =
                nix::sys::socket::shutdown(server.as_raw_fd(), nix::sys::socket::Shutdown::Both);
            return;
        }
        if relayed.is_err() {
            return;
        }
        if let Some(upgraded) = upgraded {
            match upgraded.await {
                Ok(true) => {
                    // The server switched to WebSocket: the rest is its protocol.
                    let taken = std::mem::take(&mut buf);
                    let _ = half_through(client, &server, taken, pipe.as_ref(), &sh.grown).await;
                    return;
                }
                Ok(false) => {}
                Err(_) => return,
            }
        }
    }
}

/// The response side of [`http_session`]: relays one response per request, in order.
async fn responses(
    client: &TcpStream,
    mut upstream: Option<Arc<TcpStream>>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Note>,
    route: &Route,
    between: &Between,
    sh: &Shared,
) {
    let pipe = Pipe::new();
    let mut buf = Vec::new();
    loop {
        // While no response is due, a server that closes its end is noticed: a tunnel
        // ends with it; a forward connection dials anew for the next request.
        let note = match upstream.clone() {
            Some(server) if buf.is_empty() => {
                tokio::select! {
                    note = rx.recv() => note,
                    () = closed(&server) => {
                        if matches!(route, Route::Tunnel { .. }) {
                            break;
                        }
                        upstream = None;
                        between.gone.store(true, Ordering::Relaxed);
                        continue;
                    }
                }
            }
            _ => rx.recv().await,
        };
        let Some(note) = note else { break };
        match note {
            Note::Drain(ack) => {
                let _ = ack.send(());
            }
            Note::Upstream(server) => {
                upstream = Some(server);
                buf.clear();
            }
            Note::Answer(answer) => {
                let _ = write_all(client, &answer).await;
                break;
            }
            Note::Response(due) => {
                let Some(server) = upstream.clone() else {
                    break;
                };
                let close_after = due.close_after;
                let keep = relay_response(&server, client, &mut buf, due, pipe.as_ref(), sh).await;
                if keep.is_err() || matches!(keep, Ok(false)) {
                    let answer = between.stopped.lock().expect("not poisoned").take();
                    if let Some(answer) = answer {
                        let _ = write_all(client, &answer).await;
                        break;
                    }
                }
                if !matches!(keep, Ok(true)) || close_after {
                    break;
                }
            }
        }
    }
    shutdown_write(client);
}

/// Resolves when the server has closed its end (or failed); never while it only has
/// data waiting (that is read with the next response).
async fn closed(server: &TcpStream) {
    if has_data(server).await {
        std::future::pending::<()>().await;
    }
}

/// Relays the response to one request (and the interim 1xx before it): `Ok(true)` when
/// the connection can carry the next one.
async fn relay_response(
    server: &TcpStream,
    client: &TcpStream,
    buf: &mut Vec<u8>,
    due: Due,
    pipe: Option<&Pipe>,
    sh: &Shared,
) -> io::Result<bool> {
    let Due {
        head_request,
        mut gate,
        mut upgrade,
        ..
    } = due;
    let expect_continue = gate.is_some();
    let mut continued = false;
    loop {
        let head = loop {
            if !buf.is_empty() {
                if let Some(h) = http1::response_head(buf).map_err(io::Error::other)? {
                    break h;
                }
            }
            if read_some(server, buf).await? == 0 {
                return Ok(false);
            }
        };
        let framing = match head.status {
            101 => {
                let Some(switched) = upgrade.take() else {
                    return Err(io::Error::other("a switch of protocols nobody asked for"));
                };
                write_all(client, &buf[..head.len]).await?;
                buf.drain(..head.len);
                let _ = switched.send(true);
                half_through(server, client, std::mem::take(buf), pipe, &sh.grown).await?;
                return Ok(false);
            }
            100 => {
                continued = true;
                if let Some(g) = gate.take() {
                    let _ = g.send(true);
                }
                None
            }
            102..=199 => None,
            _ => Some(http1::response_framing(&head, head_request).map_err(io::Error::other)?),
        };
        write_all(client, &buf[..head.len]).await?;
        buf.drain(..head.len);
        let Some(framing) = framing else { continue };
        if let Some(switched) = upgrade.take() {
            let _ = switched.send(false);
        }
        if let Some(g) = gate.take() {
            let _ = g.send(false);
        }
        let body = match framing {
            http1::ResponseFraming::Length(n) => Body::Length(n),
            http1::ResponseFraming::Chunked => Body::Chunked,
            http1::ResponseFraming::UntilClose => {
                half_through(server, client, std::mem::take(buf), pipe, &sh.grown).await?;
                return Ok(false);
            }
        };
        relay_body(server, client, buf, body, pipe, None).await?;
        // Answered before the client was told to send its body: whether the body still
        // comes is the client's choice, so the connection ends here.
        return Ok(!expect_continue || continued);
    }
}

/// The checks of one request on `route`, and what goes to the server; or the status to
/// answer and the refusal.
fn check_request(
    sh: &Shared,
    route: &Route,
    head: &wire::RequestHead,
) -> Result<Checked, (u16, Refusal)> {
    let refused = |r: Refusal| (403, r);
    let bad = |rule: Rule, why: String| (400, Refusal::new(rule, why));
    // A forward connection proved the token with its first request; a later request
    // that names credentials must name this run's. (In a tunnel the header is meant for
    // no one here, and is not sent on either way.)
    if matches!(route, Route::Forward) {
        match head.single("proxy-authorization") {
            Ok(None) => {}
            Ok(Some(v))
                if wire::basic_credentials(v).is_some_and(|(_, p)| sh.token_matches(&p)) => {}
            _ => return Err((407, no_token())),
        }
    }
    if head.method.eq_ignore_ascii_case("CONNECT") {
        return Err(bad(
            Rule::Unsupported,
            "a CONNECT after other requests, or inside a tunnel: open a new connection to the proxy"
                .into(),
        ));
    }
    let (host, port, target) = match route {
        Route::Forward => {
            let uri = wire::absolute_uri(&head.target).map_err(|e| match e {
                wire::WireError::Scheme(_) => bad(Rule::Unsupported, e.to_string()),
                _ => bad(Rule::Malformed, e.to_string()),
            })?;
            let host = sh.policy.check_host(&uri.host).map_err(refused)?;
            (host, uri.port, uri.path)
        }
        Route::Tunnel { host, port, .. } => {
            let target = if head.target.starts_with('/') || head.target == "*" {
                head.target.clone()
            } else {
                // The absolute form: a server takes its host over the Host header's.
                let uri = wire::absolute_uri(&head.target)
                    .map_err(|e| bad(Rule::Malformed, e.to_string()))?;
                let named = canonical_host(&uri.host).map_err(|r| {
                    refused(Refusal::new(
                        Rule::Mismatch,
                        format!("the request names {}: {}", uri.host, r.reason),
                    ))
                })?;
                if named != *host || uri.port != *port {
                    return Err(refused(Refusal::new(
                        Rule::Mismatch,
                        format!(
                            "the request names {named}:{}, the tunnel {host}:{port}",
                            uri.port
                        ),
                    )));
                }
                uri.path
            };
            (host.clone(), *port, target)
        }
    };
    host_header_agrees(head, &host, port).map_err(refused)?;
    // Plain HTTP: no value is ever put in, so every placeholder is misplaced here.
    if !sh.sentinels.is_empty() {
        let found = sh
            .sentinels
            .misplaced_in(None, head.target.as_bytes())
            .or_else(|| {
                head.headers
                    .iter()
                    .find_map(|(_, v)| sh.sentinels.misplaced_in_header(None, v))
            });
        if let Some(m) = found {
            return Err(refused(intercept::misplaced(
                &m,
                &format!("{host}:{port} over plain HTTP"),
            )));
        }
    }
    let framing = http1::request_framing(head).map_err(|e| bad(Rule::Malformed, e.to_string()))?;
    let host_header = if port == 80 {
        host.clone()
    } else {
        format!("{host}:{port}")
    };
    Ok(Checked {
        host,
        port,
        target,
        host_header,
        framing,
    })
}

/// The target of a route's violation events: the tunnel's, or the request's own.
fn route_target(route: &Route, head: Option<&wire::RequestHead>) -> String {
    match (route, head) {
        (Route::Tunnel { host, port, .. }, _) => format!("{host}:{port}"),
        (Route::Forward, Some(h)) => target_of(h),
        (Route::Forward, None) => "?".to_string(),
    }
}

fn route_via(route: &Route) -> &'static str {
    match route {
        Route::Tunnel { via, .. } => via,
        Route::Forward => "http",
    }
}

/// Reads the next request head into `buf`: `Ok(None)` when the client ends the
/// connection between requests (or stalls inside a head for [`HEAD_TIMEOUT`]). An idle
/// keep-alive connection may wait as long as it likes.
async fn read_request_head(
    client: &TcpStream,
    buf: &mut Vec<u8>,
) -> Result<Option<wire::RequestHead>, wire::WireError> {
    let mut deadline = None;
    loop {
        if !buf.is_empty() {
            if let Some(head) = wire::request_head(buf)? {
                return Ok(Some(head));
            }
        }
        let read = match deadline {
            None if buf.is_empty() => read_some(client, buf).await,
            _ => {
                let at = *deadline.get_or_insert(tokio::time::Instant::now() + HEAD_TIMEOUT);
                match tokio::time::timeout_at(at, read_some(client, buf)).await {
                    Ok(r) => r,
                    Err(_) => return Ok(None),
                }
            }
        };
        match read {
            Ok(0) | Err(_) => return Ok(None),
            Ok(_) => {}
        }
    }
}

/// A message body as the relay moves it.
enum Body {
    Length(u64),
    Chunked,
}

/// The search of a request body for placeholders (sentinel.rs), and what it found.
struct Scan<'a> {
    sentinels: &'a Sentinels,
    search: StreamSearch,
    found: Option<super::sentinel::Misplaced>,
}

impl<'a> Scan<'a> {
    fn new(sentinels: &'a Sentinels) -> Scan<'a> {
        Scan {
            sentinels,
            search: StreamSearch::default(),
            found: None,
        }
    }

    /// Searches the next bytes of the body (plain HTTP: every placeholder is misplaced);
    /// an error stops the relay before they are sent on.
    fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Some(m) = self.search.feed(self.sentinels, None, bytes) {
            self.found = Some(m);
            return Err(io::Error::other("a placeholder in a plain-HTTP body"));
        }
        Ok(())
    }
}

/// Moves one body from `src` to `dst`: its first bytes may already be in `buf`; what
/// follows the body stays in `buf` (or in the socket). A body of known length moves by
/// splice, exactly that many bytes; a chunked one is re-chunked as it goes. With `scan`,
/// every byte of the body is searched before it is sent on.
async fn relay_body(
    src: &TcpStream,
    dst: &TcpStream,
    buf: &mut Vec<u8>,
    body: Body,
    pipe: Option<&Pipe>,
    mut scan: Option<&mut Scan<'_>>,
) -> io::Result<()> {
    match body {
        Body::Length(n) => relay_exact(src, dst, buf, n, pipe, scan).await,
        Body::Chunked => {
            let mut chunked = http1::Chunked::default();
            // Framing and small chunks gather here and go out in one write.
            let mut out = Vec::new();
            loop {
                match chunked.step(buf).map_err(io::Error::other)? {
                    http1::Step::More => {
                        write_all(dst, &out).await?;
                        out.clear();
                        if read_some(src, buf).await? == 0 {
                            return Err(io::ErrorKind::UnexpectedEof.into());
                        }
                    }
                    http1::Step::Emit { used, bytes } => {
                        buf.drain(..used);
                        out.extend_from_slice(&bytes);
                    }
                    http1::Step::Data(n) => {
                        let have = buf.len() as u64;
                        if n <= have && out.len() < 64 * 1024 {
                            if let Some(scan) = scan.as_deref_mut() {
                                scan.feed(&buf[..n as usize])?;
                            }
                            out.extend(buf.drain(..n as usize));
                        } else {
                            write_all(dst, &out).await?;
                            out.clear();
                            relay_exact(src, dst, buf, n, pipe, scan.as_deref_mut()).await?;
                        }
                        chunked.advance(n);
                    }
                    http1::Step::Done => return write_all(dst, &out).await,
                }
            }
        }
    }
}

/// Moves exactly `n` bytes: first from `buf`, then from `src` by splice (never more
/// than what is left, so the bytes after the body stay in the socket); with `scan`,
/// through a buffer, searched.
async fn relay_exact(
    src: &TcpStream,
    dst: &TcpStream,
    buf: &mut Vec<u8>,
    mut n: u64,
    pipe: Option<&Pipe>,
    mut scan: Option<&mut Scan<'_>>,
) -> io::Result<()> {
    let first = (buf.len() as u64).min(n) as usize;
    if let Some(scan) = scan.as_deref_mut() {
        scan.feed(&buf[..first])?;
    }
    write_all(dst, &buf[..first]).await?;
    buf.drain(..first);
    n -= first as u64;
    if n == 0 {
        return Ok(());
    }
    match (pipe, scan) {
        (Some(pipe), None) => {
            while n > 0 {
                let max = n.min(PIPE_SIZE as u64) as usize;
                match splice_some(src, dst, pipe, max).await? {
                    0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                    moved => n -= moved as u64,
                }
            }
            Ok(())
        }
        (_, scan) => copy_exact(src, dst, n, scan).await,
    }
}

fn same_host(what: &str, named: &[u8], host: &str) -> Result<(), Refusal> {
    let shown = String::from_utf8_lossy(named);
    match std::str::from_utf8(named).ok().map(canonical_host) {
        Some(Ok(n)) if n == host => Ok(()),
        _ => Err(Refusal::new(
            Rule::Mismatch,
            format!("{what} names {shown:?}, the tunnel {host}"),
        )),
    }
}

/// Appends what `s` has to `buf` (at least one byte, or 0 at the end).
async fn read_some(s: &TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.reserve(16 * 1024);
    loop {
        s.readable().await?;
        match s.try_read_buf(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

async fn write_all(s: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        s.writable().await?;
        match s.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends the writing direction of `s` (the peer reads the end of the stream).
fn shutdown_write(s: &TcpStream) {
    let _ = nix::sys::socket::shutdown(s.as_raw_fd(), nix::sys::socket::Shutdown::Write);
}

/// One direction of a connection: `first`, then everything `src` sends, to `dst`, then
/// the end of the stream. The bytes go through a pipe with splice(2), so the proxy moves
/// page references instead of copying every byte through its own memory; where no pipe
/// can be had, through a buffer.
async fn half(
    src: &TcpStream,
    dst: &TcpStream,
    first: Vec<u8>,
    grown: &AtomicUsize,
) -> io::Result<()> {
    half_through(src, dst, first, Pipe::new().as_ref(), grown).await
}

/// [`half`] with the pipe the caller has (an HTTP session's, once it carries a switched
/// protocol or a body that lasts until the end).
async fn half_through(
    src: &TcpStream,
    dst: &TcpStream,
    first: Vec<u8>,
    pipe: Option<&Pipe>,
    grown: &AtomicUsize,
) -> io::Result<()> {
    write_all(dst, &first).await?;
    drop(first);
    match pipe {
        Some(pipe) => splice_half(src, dst, pipe).await,
        None => copy_half(src, dst, grown).await,
    }
}

/// A non-blocking pipe, closed when dropped.
struct Pipe {
    read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
}

impl Pipe {
    fn new() -> Option<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array we pass.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return None;
        }
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors were just created and are owned by nothing else.
        let pipe = unsafe {
            Pipe {
                read: std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                write: std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            }
        };
        // A larger pipe moves a bulk transfer in fewer wake-ups; it holds page references
        // only while data is in flight. Where the kernel refuses (its per-user pipe
        // budget), the default size does.
        // SAFETY: F_SETPIPE_SZ on a pipe we own.
        unsafe {
            libc::fcntl(
                pipe.write.as_raw_fd(),
                libc::F_SETPIPE_SZ,
                PIPE_SIZE as libc::c_int,
            )
        };
        Some(pipe)
    }
}

/// Moves up to `len` bytes from `from` to `to` without blocking.
fn splice(from: i32, to: i32, len: usize) -> io::Result<usize> {
    // SAFETY: splice between two descriptors we hold, no offsets; the kernel checks both.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// The size asked for each splice pipe.
const PIPE_SIZE: usize = 1024 * 1024;

async fn splice_half(src: &TcpStream, dst: &TcpStream, pipe: &Pipe) -> io::Result<()> {
    while splice_some(src, dst, pipe, PIPE_SIZE).await? > 0 {}
    shutdown_write(dst);
    Ok(())
}

/// Moves what `src` has, at least one byte and at most `max`, to `dst` through `pipe`
/// (empty before and after): the number moved, 0 at the end of the stream.
async fn splice_some(
    src: &TcpStream,
    dst: &TcpStream,
    pipe: &Pipe,
    max: usize,
) -> io::Result<usize> {
    let (pipe_in, pipe_out) = (pipe.write.as_raw_fd(), pipe.read.as_raw_fd());
    // The pipe is empty here, so EAGAIN means the socket has nothing yet.
    let n = loop {
        src.readable().await?;
        match src.try_io(tokio::io::Interest::READABLE, || {
            splice(src.as_raw_fd(), pipe_in, max)
        }) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    let mut left = n;
    while left > 0 {
        dst.writable().await?;
        match dst.try_io(tokio::io::Interest::WRITABLE, || {
            splice(pipe_out, dst.as_raw_fd(), left)
        }) {
            Ok(m) => left -= m,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The buffered fallback of [`relay_exact`]: exactly `n` bytes through a buffer (searched
/// with `scan`).
async fn copy_exact(
    src: &TcpStream,
    dst: &TcpStream,
    mut n: u64,
    mut scan: Option<&mut Scan<'_>>,
) -> io::Result<()> {
    let mut buf = vec![0u8; MIN_BUFFER];
    while n > 0 {
        let want = n.min(buf.len() as u64) as usize;
        src.readable().await?;
        let got = match src.try_read(&mut buf[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        if let Some(scan) = scan.as_deref_mut() {
            scan.feed(&buf[..got])?;
        }
        write_all(dst, &buf[..got]).await?;
        n -= got as u64;
    }
    Ok(())
}

/// The buffered fallback of [`splice_half`]. The buffer doubles while reads fill it (a
/// bulk transfer), within the shared `grown` budget.
async fn copy_half(src: &TcpStream, dst: &TcpStream, grown: &AtomicUsize) -> io::Result<()> {
    /// Gives the growth back to the budget however the copy ends (a dropped future too).
    struct Granted<'a>(&'a AtomicUsize, usize);
    impl Drop for Granted<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(self.1, Ordering::Relaxed);
        }
    }
    let mut granted = Granted(grown, 0);
    let mut buf = vec![0u8; MIN_BUFFER];
    loop {
        src.readable().await?;
        let n = match src.try_read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            shutdown_write(dst);
            return Ok(());
        }
        write_all(dst, &buf[..n]).await?;
        if n == buf.len() && buf.len() < MAX_BUFFER {
            let more = buf.len();
            if grown.fetch_add(more, Ordering::Relaxed) + more <= GROWTH_BUDGET {
                granted.1 += more;
                buf.resize(buf.len() * 2, 0);
            } else {
                grown.fetch_sub(more, Ordering::Relaxed);
            }
        }
    }
}

/// Reads into `buf` until `parse` finds a complete message (or the peer closes: `None`).
async fn read_parsed<T>(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
    limit: usize,
    parse: impl Fn(&[u8]) -> Result<Option<T>, wire::WireError>,
) -> Result<Option<T>, wire::WireError> {
    loop {
        if !buf.is_empty() {
            if let Some(v) = parse(buf)? {
                return Ok(Some(v));
            }
        }
        if buf.len() >= limit {
            return Err(wire::WireError::TooLarge);
        }
        buf.reserve(4096.min(limit - buf.len()));
        match s.read_buf(buf).await {
            Ok(0) | Err(_) => return Ok(None),
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(text: &str) -> wire::RequestHead {
        wire::request_head(text.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn the_host_header_must_name_the_request_host() {
        let ok = [
            "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n",
            "GET http://a.example/ HTTP/1.1\r\nHost: A.Example.:80\r\n\r\n",
            "GET http://a.example/ HTTP/1.0\r\n\r\n",
            "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n",
        ];
        for text in ok {
            let h = head(text);
            let port = if h.method == "CONNECT" { 443 } else { 80 };
            assert_eq!(host_header_agrees(&h, "a.example", port), Ok(()), "{text}");
        }
        let bad = [
            "GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n",
            "GET http://a.example/ HTTP/1.1\r\nHost: a.example:8080\r\n\r\n",
            "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
            "GET http://a.example/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET http://a.example/ HTTP/1.1\r\nHost: a.example@b.example\r\n\r\n",
        ];
        for text in bad {
            let got = host_header_agrees(&head(text), "a.example", 80);
            assert_eq!(got.map_err(|r| r.rule), Err(Rule::Mismatch), "{text}");
        }
    }

    #[test]
    fn events_name_host_and_port() {
        assert_eq!(
            target_of(&head("GET http://a.example/x HTTP/1.1\r\n\r\n")),
            "a.example:80"
        );
        assert_eq!(
            target_of(&head("CONNECT a.example:443 HTTP/1.1\r\n\r\n")),
            "a.example:443"
        );
        assert_eq!(target_of(&head("GET /x HTTP/1.1\r\n\r\n")), "/x");
    }

    fn shared(allow: &[&str]) -> Shared {
        let mut policy = Policy::baseline();
        for a in allow {
            policy.add(super::super::policy::Pattern::parse(a).unwrap(), "test");
        }
        Shared {
            policy,
            token: "t0k".into(),
            events: PathBuf::from("/nonexistent/events.jsonl"),
            stats: Arc::new(Stats::default()),
            permits: Arc::new(Semaphore::new(1)),
            grown: AtomicUsize::new(0),
            sentinels: Sentinels::default(),
            tls: None,
        }
    }

    #[test]
    fn every_request_is_checked_against_its_route() {
        let sh = shared(&["allowed.test"]);
        let tunnel = Route::Tunnel {
            host: "allowed.test".into(),
            port: 8080,
            via: "connect",
        };
        let check = |route: &Route, text: &str| check_request(&sh, route, &head(text));
        let ok = check(
            &tunnel,
            "GET /x HTTP/1.1\r\nHost: Allowed.Test:8080\r\nContent-Length: 3\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            ok,
            Checked {
                host: "allowed.test".into(),
                port: 8080,
                target: "/x".into(),
                host_header: "allowed.test:8080".into(),
                framing: http1::Framing::Length(3),
            }
        );
        let absolute = check(
            &tunnel,
            "GET http://allowed.test:8080/y?q HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n",
        )
        .unwrap();
        assert_eq!(absolute.target, "/y?q");
        assert!(check(&tunnel, "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n").is_ok());
        assert!(check(&tunnel, "GET / HTTP/1.0\r\n\r\n").is_ok());
        // In a tunnel, credentials are nobody's business here (and are not sent on).
        assert!(check(
            &tunnel,
            "GET / HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic eDp5\r\n\r\n"
        )
        .is_ok());
        let refused = |route: &Route, text: &str| {
            check(route, text)
                .map(|_| ())
                .map_err(|(status, r)| (status, r.rule))
        };
        for (text, want) in [
            ("GET / HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n", (403, Rule::Mismatch)),
            ("GET / HTTP/1.1\r\nHost: allowed.test:9090\r\n\r\n", (403, Rule::Mismatch)),
            ("GET http://internal-admin.corp:8080/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", (403, Rule::Mismatch)),
            ("GET http://allowed.test:9090/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", (403, Rule::Mismatch)),
            ("GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", (403, Rule::Mismatch)),
            ("CONNECT internal-admin.corp:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n", (400, Rule::Unsupported)),
            ("GET internal-admin.corp HTTP/1.1\r\nHost: allowed.test\r\n\r\n", (400, Rule::Malformed)),
            ("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", (400, Rule::Malformed)),
        ] {
            assert_eq!(refused(&tunnel, text), Err(want), "{text}");
        }
        let forward = Route::Forward;
        let ok = check(
            &forward,
            "GET http://allowed.test/a HTTP/1.1\r\nProxy-Authorization: Basic eDp0MGs=\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (ok.target.as_str(), ok.host_header.as_str()),
            ("/a", "allowed.test")
        );
        for (text, want) in [
            (
                "GET http://internal-admin.corp/ HTTP/1.1\r\n\r\n",
                (403, Rule::Allowlist),
            ),
            (
                "GET http://allowed.test/ HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n",
                (403, Rule::Mismatch),
            ),
            (
                "GET /a HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                (400, Rule::Malformed),
            ),
            (
                "GET https://allowed.test/ HTTP/1.1\r\n\r\n",
                (400, Rule::Unsupported),
            ),
            (
                "GET http://allowed.test/ HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\n\r\n",
                (407, Rule::Credentials),
            ),
        ] {
            assert_eq!(refused(&forward, text), Err(want), "{text}");
        }
    }

    #[test]
    fn tunnels_must_name_their_host() {
        assert!(same_host("SNI", b"A.example.", "a.example").is_ok());
        assert_eq!(
            same_host("SNI", b"b.example", "a.example").map_err(|r| r.rule),
            Err(Rule::Mismatch)
        );
        assert!(same_host("SNI", b"127.0.0.1", "127.0.0.1").is_err());
        assert!(same_host("SNI", b"\xff", "a.example").is_err());
    }
}
