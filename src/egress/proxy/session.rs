//! HTTP sessions: every request framed and checked, every response relayed.

use super::*;

/// Where the requests of an HTTP session may go.
pub(super) enum Route {
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
pub(super) enum Note {
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
pub(super) struct Due {
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
pub(super) struct Checked {
    pub(super) host: String,
    pub(super) port: u16,
    /// The origin-form target sent to the server.
    pub(super) target: String,
    /// The Host header to add when the client sent none.
    pub(super) host_header: String,
    pub(super) framing: http1::Framing,
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
pub(super) async fn http_session(
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
pub(super) struct Between {
    /// Set by the response side when an idle server closed its connection.
    gone: std::sync::atomic::AtomicBool,
    /// Set by the request side when it stopped a body half-way (a placeholder in it): the
    /// answer the client gets once the server's side is cut.
    stopped: std::sync::Mutex<Option<Vec<u8>>>,
}

/// The request side of [`http_session`].
pub(super) async fn requests(
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
                let _ = tx.send(Note::Answer(refusal_answer(sh, 400, &target, &r, false)));
                return;
            }
        };
        let checked = match check_request(sh, route, &head) {
            Ok(c) => c,
            Err((status, r)) => {
                let target = route_target(route, Some(&head));
                sh.violation(route_via(route), &target, &r);
                let answer = refusal_answer(sh, status, &target, &r, status == 407);
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
                    let _ = tx.send(Note::Answer(refusal_answer(sh, 403, &target, &r, false)));
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
                        let _ = tx.send(Note::Answer(refusal_answer(sh, 403, &target, &r, false)));
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
                Some(refusal_answer(sh, 403, &target, &r, false));
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
pub(super) async fn responses(
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
pub(super) async fn closed(server: &TcpStream) {
    if has_data(server).await {
        std::future::pending::<()>().await;
    }
}

/// Relays the response to one request (and the interim 1xx before it): `Ok(true)` when
/// the connection can carry the next one.
pub(super) async fn relay_response(
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
pub(super) fn check_request(
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
pub(super) fn route_target(route: &Route, head: Option<&wire::RequestHead>) -> String {
    match (route, head) {
        (Route::Tunnel { host, port, .. }, _) => format!("{host}:{port}"),
        (Route::Forward, Some(h)) => target_of(h),
        (Route::Forward, None) => "?".to_string(),
    }
}

pub(super) fn route_via(route: &Route) -> &'static str {
    match route {
        Route::Tunnel { via, .. } => via,
        Route::Forward => "http",
    }
}

/// Reads the next request head into `buf`: `Ok(None)` when the client ends the
/// connection between requests (or stalls inside a head for [`HEAD_TIMEOUT`]). An idle
/// keep-alive connection may wait as long as it likes.
pub(super) async fn read_request_head(
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
pub(super) enum Body {
    Length(u64),
    Chunked,
}

/// The search of a request body for placeholders (sentinel.rs), and what it found.
pub(super) struct Scan<'a> {
    sentinels: &'a Sentinels,
    search: StreamSearch,
    found: Option<crate::egress::sentinel::Misplaced>,
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
    pub(super) fn feed(&mut self, bytes: &[u8]) -> io::Result<()> {
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
pub(super) async fn relay_body(
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
pub(super) async fn relay_exact(
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

pub(super) fn same_host(what: &str, named: &[u8], host: &str) -> Result<(), Refusal> {
    let shown = String::from_utf8_lossy(named);
    match std::str::from_utf8(named).ok().map(canonical_host) {
        Some(Ok(n)) if n == host => Ok(()),
        _ => Err(Refusal::new(
            Rule::Mismatch,
            format!("{what} names {shown:?}, the tunnel {host}"),
        )),
    }
}
