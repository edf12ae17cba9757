//! Dialing exactly a checked address, and tunnels: what their first bytes say they carry.

use super::*;

pub(in crate::egress) enum Dial {
    /// The policy refused an address.
    Refused(Refusal),
    /// Not the policy: the name does not resolve, the server does not answer.
    Failed(String),
}

/// Resolves `host` (or takes its pin), checks every address, and connects to a checked
/// one: the address dialed is always one that was checked. A server that cannot be
/// reached is recorded as an `upstream` event.
pub(in crate::egress) async fn dial(sh: &Shared, host: &str, port: u16) -> Result<TcpStream, Dial> {
    let result = dial_checked(sh, host, port).await;
    if let Err(Dial::Failed(why)) = &result {
        sh.upstream_failed(&format!("{host}:{port}"), why);
    }
    result
}

pub(super) async fn dial_checked(sh: &Shared, host: &str, port: u16) -> Result<TcpStream, Dial> {
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
    sh.policy.check_addrs(&addrs).map_err(Dial::Refused)?;
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
pub(super) enum Opening {
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
pub(super) async fn tunnel(
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
pub(super) async fn opening(
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
            Err(Some(
                Refusal::new(
                    Rule::RawTcp,
                    format!(
                        "{what}: the tunnel carries TLS or HTTP, and other protocols only to hosts \
                         and ports the operator allows (allow_raw_tcp); {host}:{port} is not one"
                    ),
                )
                .with_fix(Fix::AllowRaw(format!("{host}:{port}"))),
            ))
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
pub(super) fn peek_one(s: &TcpStream) -> io::Result<usize> {
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
pub(super) async fn has_data(s: &TcpStream) -> bool {
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
