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
//!
//! Here: the run's proxy, its listeners and the state every connection shares. The steps
//! live in `http.rs` (CONNECT and absolute-URI requests), `socks.rs` (SOCKS5),
//! `tunnel.rs` (dialing a checked address; what a tunnel carries), `session.rs` (HTTP
//! sessions, request by request) and `copy.rs` (moving bytes: splice, bounded copies).

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
use super::policy::{canonical_host, Fix, Policy, Refusal, Rule};
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
    /// The loop's id, for the commands refusals name (fix.rs).
    pub loop_id: String,
    /// Says a line on the run's terminal at once, from the proxy's thread: the first
    /// failure to reach each host (none: the log alone has them).
    pub notice: Option<Notice>,
}

/// A line for the run's terminal, said from the proxy's thread while the run goes on.
pub type Notice = crate::report::LiveWarnings;

/// Hosts whose first failure is said on the terminal; later ones are in the log only.
const MAX_NOTICED: usize = 16;

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
    loop_id: String,
    notice: Option<Notice>,
    /// The hosts whose failure was said on the terminal.
    noticed: std::sync::Mutex<std::collections::HashSet<String>>,
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
            loop_id: setup.loop_id,
            notice: setup.notice,
            noticed: Default::default(),
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
        if let Some(fix) = self.fix_command(refusal) {
            event["fix"] = json!(fix);
        }
        let _ = crate::sandbox::events::append(&self.events, "violation", event);
    }

    /// An allowed target whose server could not be reached: an `upstream` event, so that
    /// a run that waited on a server that never answered says why in `git loop log`, and,
    /// the first time for each host, a line on the run's terminal at once (an agent whose
    /// API cannot be reached would otherwise wait in silence for its own timeout).
    pub(super) fn upstream_failed(&self, target: &str, error: &str) {
        let target: String = target.chars().take(300).collect();
        let error: String = error.chars().take(300).collect();
        if let Some(notice) = &self.notice {
            let host = target.rsplit_once(':').map_or(target.as_str(), |(h, _)| h);
            let first = {
                let mut noticed = self.noticed.lock().expect("not poisoned");
                noticed.len() < MAX_NOTICED && noticed.insert(host.to_string())
            };
            if first {
                notice(&format!(
                    "the network proxy cannot reach {target}: {error} (requests to it fail; `git loop log {}` lists every failure)",
                    self.loop_label()
                ));
            }
        }
        let n = self.stats.upstream_failures.fetch_add(1, Ordering::Relaxed);
        if n >= MAX_RECORDED {
            return;
        }
        let _ = crate::sandbox::events::append(
            &self.events,
            "upstream",
            json!({"target": target, "error": error}),
        );
    }

    /// The command that would allow `refusal`, worded for this run; `None` where no
    /// setting can.
    pub(in crate::egress) fn fix_command(&self, refusal: &Refusal) -> Option<String> {
        let fix = refusal.fix.as_ref()?;
        Some(super::fix::command(fix, &self.policy, &self.loop_id))
    }

    /// The loop's id, or `ID` where the proxy was not told it.
    pub(super) fn loop_label(&self) -> &str {
        if self.loop_id.is_empty() {
            "ID"
        } else {
            &self.loop_id
        }
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

mod copy;
mod http;
mod session;
mod socks;
mod tunnel;

use super::fix::note;
use copy::*;
pub(super) use http::refusal_parts;
use http::*;
use session::*;
use socks::*;
use tunnel::*;
pub(super) use tunnel::{dial, Dial};

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
        shared_with(policy)
    }

    fn shared_with(policy: Policy) -> Shared {
        Shared {
            policy,
            token: "t0k".into(),
            events: PathBuf::from("/nonexistent/events.jsonl"),
            stats: Arc::new(Stats::default()),
            permits: Arc::new(Semaphore::new(1)),
            grown: AtomicUsize::new(0),
            sentinels: Sentinels::default(),
            tls: None,
            loop_id: String::new(),
            notice: None,
            noticed: Default::default(),
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
