//! Ending TLS toward the hosts a vault entry is bound to (issue 16), so that the proxy can
//! put the entry's value where the sandbox wrote its placeholder (sentinel.rs).
//!
//! The pieces, in the order a connection meets them:
//!
//! 1. [`Tls`] is made once per run, before the sandbox starts: a CA (rcgen, ECDSA P-256)
//!    whose key is only ever in this process's memory, and one key for the certificates
//!    it signs, one per bound host, made when a host is first met. The CA's certificate
//!    is what the sandbox trusts (spec.rs appends it to the system bundle inside).
//! 2. A tunnel (CONNECT or SOCKS) whose first bytes are a TLS ClientHello naming a host
//!    that some entry's binding names (on any port) is not joined to its server as it is
//!    (proxy.rs): the proxy answers the handshake itself, with that host's certificate,
//!    offering HTTP/2 and HTTP/1.1 (ALPN), and serves the connection with hyper.
//! 3. Every request on it is checked (`:authority` and Host must name the tunnel's host
//!    and port, which must still pass the allowlist: no domain fronting), then rewritten:
//!    hop-by-hop headers dropped, placeholders of entries bound to this host *and port*
//!    replaced in the fields that carry credentials (sentinel/binding.rs: credential
//!    parameters of the query, Authorization, inside `Basic` credentials too, the token
//!    headers, credential fields of bounded form or JSON bodies); a placeholder of an
//!    entry not bound there, anywhere the proxy reads, refuses the request with 403 and a
//!    violation naming the entry and the `vault bind` command that would allow it.
//!    `Accept-Encoding` is narrowed to the codings the proxy can read (masked.rs).
//! 4. The request goes on over TLS to the server (rustls, verified against the host's
//!    trust store plus the operator's `network.upstream_ca`), HTTP/2 where the server
//!    offers it, else HTTP/1.1 over as many connections as requests run at once (each
//!    dialed through the same checks as any other).
//! 5. The answer comes back with every form of every value of the run masked in its
//!    headers, its body (as it streams, decoded from gzip or deflate) and its trailers;
//!    an answer whose `Location` carries a value is refused (masked.rs).
//!
//! TLS toward any host no entry's binding names is never ended: the tunnel carries it as
//! it is, so no value can reach such a host by construction.
//!
//! Here: steps 2 and 3. `tls.rs` holds step 1, `upstream.rs` step 4, `masked.rs` step 5.

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{self, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::net::TcpStream;

use super::policy::{canonical_host, Fix, Refusal, Rule};
use super::proxy::{self, Dial, Shared};
use super::sentinel::{Encoding, Misplaced, StreamSearch, MAX_BODY};
use super::wire;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ProxyBody = UnsyncBoxBody<Bytes, BoxError>;

mod masked;
mod reads;
mod tls;
mod upstream;

use masked::{answer, ask_readable_coding, Answer};
use reads::*;
pub use tls::*;
use upstream::*;

/// Where the requests of one ended connection go.
struct Route {
    host: String,
    port: u16,
    via: &'static str,
    /// `host:port`, for events and messages.
    target: String,
}

/// Serves a tunnel to `host:port` whose client opened TLS (its first bytes in `early`),
/// ending TLS with a certificate of the run's CA and carrying each request, checked and
/// with its placeholders replaced, to the server (`upstream`, already dialed).
pub(super) async fn serve(
    client: TcpStream,
    early: Vec<u8>,
    upstream: TcpStream,
    host: &str,
    port: u16,
    via: &'static str,
    sh: Arc<Shared>,
) {
    let Some(tls) = sh.tls.clone() else { return };
    let route = Arc::new(Route {
        host: host.to_string(),
        port,
        via,
        target: format!("{host}:{port}"),
    });
    let config = match tls.server_config(host) {
        Ok(c) => c,
        Err(e) => {
            sh.upstream_failed(&route.target, &e);
            return;
        }
    };
    let accepted = tokio::time::timeout(
        proxy::HEAD_TIMEOUT,
        tokio_rustls::TlsAcceptor::from(config).accept(ReadAhead::with_early(client, early)),
    )
    .await;
    // A client that does not trust the run's CA ends here (an unknown CA alert); its
    // tool reads its own trust store rather than the variables the sandbox sets.
    let Ok(Ok(stream)) = accepted else { return };
    let upstream = Arc::new(Upstream::new(route.clone(), sh.clone(), tls, upstream));
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (sh, route, upstream) = (sh.clone(), route.clone(), upstream.clone());
        async move { Ok::<_, Infallible>(handle(&sh, &route, &upstream, req).await) }
    });
    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    let _ = builder
        .serve_connection(TokioIo::new(Gather::new(stream)), service)
        .await;
}

/// The answer to a refused request (a 403, 400 or 426 with the policy's words).
fn refused(sh: &Shared, status: u16, target: &str, refusal: &Refusal) -> Response<ProxyBody> {
    let (head, body) = proxy::refusal_parts(sh, status, target, refusal);
    let mut resp = Response::new(full(body));
    *resp.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN);
    for (name, value) in head {
        if let Ok(v) = HeaderValue::from_str(&value) {
            resp.headers_mut().insert(name, v);
        }
    }
    resp
}

fn bad_gateway(target: &str, why: &str) -> Response<ProxyBody> {
    let mut resp = Response::new(full(format!(
        "git-loop proxy: cannot reach {target:?}: {why}\n"
    )));
    *resp.status_mut() = StatusCode::BAD_GATEWAY;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

fn full(body: impl Into<Bytes>) -> ProxyBody {
    Full::new(body.into())
        .map_err(|never: Infallible| match never {})
        .boxed_unsync()
}

/// The refusal of a placeholder met where its value may not go.
pub(super) fn misplaced(m: &Misplaced, toward: &str) -> Refusal {
    let mut r = Refusal::new(
        Rule::Credential,
        format!(
            "the request carries the placeholder of the vault entry {} toward {toward}; it stands for a credential bound to {} only",
            m.entry, m.hosts
        ),
    );
    r.entry = Some(m.entry.clone());
    if let Some(fix) = &m.fix {
        r = r.with_fix(Fix::Command(fix.clone()));
    }
    r
}

/// Headers that describe one hop, not the request: never sent on.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "http2-settings",
];

fn hop_by_hop(headers: &http::HeaderMap) -> Vec<HeaderName> {
    let mut names: Vec<HeaderName> = HOP_BY_HOP
        .iter()
        .map(|n| HeaderName::from_static(n))
        .collect();
    for v in headers.get_all(header::CONNECTION) {
        for token in v.to_str().unwrap_or("").split(',') {
            if let Ok(n) = HeaderName::from_bytes(token.trim().as_bytes()) {
                names.push(n);
            }
        }
    }
    names
}

/// The request's own name for its host (`:authority`, the absolute target, or Host)
/// must be the tunnel's; the host must still be on the allowlist.
fn check_authority(sh: &Shared, route: &Route, req: &Request<Incoming>) -> Result<(), Refusal> {
    let mut named: Vec<String> = Vec::new();
    if let Some(a) = req.uri().authority() {
        named.push(a.as_str().to_string());
    }
    let hosts: Vec<&HeaderValue> = req.headers().get_all(header::HOST).iter().collect();
    if hosts.len() > 1 {
        return Err(Refusal::new(Rule::Mismatch, "more than one Host header"));
    }
    if let Some(h) = hosts.first() {
        named.push(
            h.to_str()
                .map_err(|_| Refusal::new(Rule::Mismatch, "the Host header is not text"))?
                .to_string(),
        );
    }
    for a in &named {
        let (h, p) = wire::authority(a.trim(), Some(443))
            .map_err(|_| Refusal::new(Rule::Mismatch, format!("{a:?} is not a host")))?;
        let h = canonical_host(&h).map_err(|r| {
            Refusal::new(
                Rule::Mismatch,
                format!("the request names {a}: {}", r.reason),
            )
        })?;
        if h != route.host || p != Some(route.port) {
            return Err(Refusal::new(
                Rule::Mismatch,
                format!("the request names {a}, the tunnel {}", route.target),
            ));
        }
    }
    sh.policy.check_host(&route.host).map(|_| ())
}

/// How a body of this content type carries tokens, if it does (form and JSON bodies, where
/// OAuth exchanges and API logins put them).
fn token_body(headers: &http::HeaderMap) -> Option<Encoding> {
    let ct = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = ct.split(';').next()?.trim().to_ascii_lowercase();
    if essence == "application/x-www-form-urlencoded" {
        Some(Encoding::Percent)
    } else if essence == "application/json" || essence.ends_with("+json") {
        Some(Encoding::Json)
    } else {
        None
    }
}

async fn handle(
    sh: &Arc<Shared>,
    route: &Route,
    upstream: &Upstream,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    let refuse = |status: u16, r: Refusal| {
        sh.violation(route.via, &route.target, &r);
        refused(sh, status, &route.target, &r)
    };
    if let Err(r) = check_authority(sh, route, &req) {
        return refuse(403, r);
    }
    if req.method() == http::Method::CONNECT {
        return refuse(
            400,
            Refusal::new(
                Rule::Unsupported,
                "a CONNECT inside a tunnel: open a new connection to the proxy",
            ),
        );
    }
    if req.headers().contains_key(header::UPGRADE) {
        // 426: what clients that try a WebSocket first take as "use HTTP here" (Codex's
        // Responses API falls back to HTTP for the session), where a 400 ends their turn.
        return refuse(
            426,
            Refusal::new(
                Rule::Unsupported,
                "a switch of protocols (Upgrade) on a connection whose TLS the proxy ends, to carry a bound credential",
            ),
        );
    }
    let sentinels = &sh.sentinels;
    let (host, port) = (route.host.as_str(), route.port);
    let toward = Some((host, port));
    let (parts, body) = req.into_parts();
    // The target: a value goes into a credential parameter of its query, never its path.
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    if let Some(m) = sentinels.misplaced_in(toward, path.as_bytes()) {
        return refuse(403, misplaced(&m, &route.target));
    }
    let path = match path.split_once('?') {
        Some((p, q)) => match sentinels.substitute(host, port, q.as_bytes(), Encoding::Percent) {
            Err(m) => return refuse(403, misplaced(&m, &route.target)),
            Ok(Some(new)) => format!("{p}?{}", String::from_utf8_lossy(&new)),
            Ok(None) => path.to_string(),
        },
        None => path.to_string(),
    };
    // The headers: a value goes into those that carry credentials (binding.rs).
    let drop = hop_by_hop(&parts.headers);
    let mut headers = http::HeaderMap::with_capacity(parts.headers.len());
    for (name, value) in &parts.headers {
        if drop.contains(name) {
            continue;
        }
        let value = match sentinels.substitute_header(host, port, name.as_str(), value.as_bytes()) {
            Err(m) => return refuse(403, misplaced(&m, &route.target)),
            Ok(Some(new)) => HeaderValue::from_bytes(&new).unwrap_or_else(|_| value.clone()),
            Ok(None) => value.clone(),
        };
        headers.append(name.clone(), value);
    }
    // What comes back is searched for every value of the run: only in codings the
    // proxy can read (masked.rs).
    ask_readable_coding(&mut headers);
    // The body: up to MAX_BODY read whole before anything goes on (rewritten when it is
    // of a kind tokens travel in); a larger one searched as it streams, and stopped
    // before a misplaced placeholder is sent on.
    let found = Arc::new(Mutex::new(None::<Misplaced>));
    let body: ProxyBody = match read_bounded(body).await {
        Ok(Bounded::Whole(bytes)) => {
            let rewritten = match token_body(&headers) {
                Some(encoding) => sentinels.substitute(host, port, &bytes, encoding),
                None => match sentinels.misplaced_in(toward, &bytes) {
                    Some(m) => Err(m),
                    None => Ok(None),
                },
            };
            match rewritten {
                Err(m) => return refuse(403, misplaced(&m, &route.target)),
                Ok(Some(new)) => {
                    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(new.len()));
                    full(new)
                }
                Ok(None) => full(bytes),
            }
        }
        Ok(Bounded::Started(prefix, rest)) => {
            let mut search = StreamSearch::default();
            if let Some(m) = search.feed(sentinels, toward, &prefix) {
                return refuse(403, misplaced(&m, &route.target));
            }
            let mut rest = Searched::new(rest, sh.clone(), host, port, search, found.clone());
            rest.prefix = (!prefix.is_empty()).then_some(prefix);
            rest.boxed_unsync()
        }
        Err(e) => return bad_gateway(&route.target, &format!("the request's body: {e}")),
    };
    let head = parts.method == http::Method::HEAD;
    let mut out = Request::new(body);
    *out.method_mut() = parts.method;
    *out.headers_mut() = headers;
    let authority = if route.port == 443 {
        route.host.clone()
    } else {
        route.target.clone()
    };
    match upstream.send(out, &authority, &path).await {
        Ok(resp) => match answer(sh, route, resp, head) {
            Ok(resp) => resp,
            Err(Answer::Refused(r)) => refuse(403, r),
            Err(Answer::Unreadable(why)) => {
                sh.upstream_failed(&route.target, &why);
                bad_gateway(&route.target, &why)
            }
        },
        Err(e) => {
            if let Some(m) = found.lock().expect("not poisoned").take() {
                return refuse(403, misplaced(&m, &route.target));
            }
            bad_gateway(&route.target, &e)
        }
    }
}

enum Bounded {
    /// The whole body, at most [`MAX_BODY`].
    Whole(Bytes),
    /// More than [`MAX_BODY`]: what was read, and the rest.
    Started(Bytes, Incoming),
}

async fn read_bounded(mut body: Incoming) -> Result<Bounded, hyper::Error> {
    if body.size_hint().lower() > MAX_BODY as u64 {
        return Ok(Bounded::Started(Bytes::new(), body));
    }
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame?.into_data() {
            buf.extend_from_slice(&data);
            if buf.len() > MAX_BODY {
                return Ok(Bounded::Started(buf.freeze(), body));
            }
        }
    }
    Ok(Bounded::Whole(buf.freeze()))
}

/// A request body passed on as it streams, searched for placeholders that may not go
/// where it goes: one found ends the body with an error (the server never receives the
/// whole request) and is kept in `found` for the refusal.
struct Searched {
    /// Read already (and searched), sent first.
    prefix: Option<Bytes>,
    inner: Incoming,
    sh: Arc<Shared>,
    host: String,
    port: u16,
    search: StreamSearch,
    found: Arc<Mutex<Option<Misplaced>>>,
}

impl Searched {
    fn new(
        inner: Incoming,
        sh: Arc<Shared>,
        host: &str,
        port: u16,
        search: StreamSearch,
        found: Arc<Mutex<Option<Misplaced>>>,
    ) -> Searched {
        Searched {
            prefix: None,
            inner,
            sh,
            host: host.to_string(),
            port,
            search,
            found,
        }
    }
}

impl Body for Searched {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(p) = this.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(p))));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    if let Some(m) =
                        this.search
                            .feed(&this.sh.sentinels, Some((&this.host, this.port)), data)
                    {
                        *this.found.lock().expect("not poisoned") = Some(m);
                        return Poll::Ready(Some(Err("a misplaced placeholder".into())));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Box::new(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let extra = self.prefix.as_ref().map_or(0, |p| p.len() as u64);
        let inner = self.inner.size_hint();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + extra);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + extra);
        }
        hint
    }
}

// ---------------------------------------------------------------------------------------
// Upstream
// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_signs_a_certificate_per_host_that_rustls_accepts() {
        let tls = Tls::new("t-000000", Vec::new()).unwrap();
        assert!(tls.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let a = tls.server_config("api.example.test").unwrap();
        let again = tls.server_config("api.example.test").unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert_eq!(a.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        // Two runs, two CAs.
        let other = Tls::new("t-000000", Vec::new()).unwrap();
        assert_ne!(other.ca_pem(), tls.ca_pem());
    }

    #[test]
    fn a_ca_file_must_hold_certificates() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        assert!(read_ca_file(&empty).is_err());
        let tls = Tls::new("t", Vec::new()).unwrap();
        let good = dir.path().join("ca.pem");
        std::fs::write(&good, tls.ca_pem()).unwrap();
        assert_eq!(read_ca_file(&good).unwrap().len(), 1);
        assert!(read_ca_file(&dir.path().join("missing.pem")).is_err());
    }

    #[test]
    fn token_bodies_are_form_and_json() {
        let mut h = http::HeaderMap::new();
        let mut ct = |v: &'static str| {
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(v));
            token_body(&h)
        };
        assert_eq!(ct("application/json; charset=utf-8"), Some(Encoding::Json));
        assert_eq!(ct("application/vnd.api+json"), Some(Encoding::Json));
        assert_eq!(
            ct("application/x-www-form-urlencoded"),
            Some(Encoding::Percent)
        );
        assert_eq!(ct("application/x-git-upload-pack-request"), None);
        assert_eq!(ct("application/octet-stream"), None);
    }
}
