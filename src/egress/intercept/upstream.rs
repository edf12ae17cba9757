//! The server side of an ended connection: HTTP/2 where the server offers it, else HTTP/1.1 connections, each dialed through the proxy's checks.

use super::*;

/// Upstream connections to one host that one client connection may hold at once (HTTP/1.1
/// servers, when the client runs several requests at a time over HTTP/2).
pub(super) const MAX_UPSTREAM: usize = 8;

#[derive(Default)]
pub(super) struct Pool {
    h2: Option<hyper::client::conn::http2::SendRequest<ProxyBody>>,
    h1: Vec<hyper::client::conn::http1::SendRequest<ProxyBody>>,
}

/// The server side of one ended connection: the connection dialed at CONNECT first, then
/// more as requests need them.
pub(super) struct Upstream {
    route: Arc<Route>,
    sh: Arc<Shared>,
    tls: Arc<Tls>,
    first: Mutex<Option<TcpStream>>,
    pool: Mutex<Pool>,
}

impl Upstream {
    /// The server side of one ended connection, starting with the connection dialed at
    /// CONNECT (`first`).
    pub(super) fn new(
        route: Arc<Route>,
        sh: Arc<Shared>,
        tls: Arc<Tls>,
        first: TcpStream,
    ) -> Upstream {
        Upstream {
            route,
            sh,
            tls,
            first: Mutex::new(Some(first)),
            pool: Mutex::new(Pool::default()),
        }
    }
}

pub(super) enum Sender {
    H1(hyper::client::conn::http1::SendRequest<ProxyBody>),
    H2(hyper::client::conn::http2::SendRequest<ProxyBody>),
}

impl Upstream {
    /// Sends `req` (its method, headers and body set) to the server, with the target and
    /// authority in the form the connection's protocol wants.
    pub(super) async fn send(
        &self,
        mut req: Request<ProxyBody>,
        authority: &str,
        path: &str,
    ) -> Result<Response<Incoming>, String> {
        let h2 = self.pool.lock().expect("not poisoned").h2.clone();
        let sender = match h2 {
            Some(s) if !s.is_closed() => Sender::H2(s),
            _ => {
                let idle = {
                    let mut pool = self.pool.lock().expect("not poisoned");
                    pool.h1.retain(|s| !s.is_closed());
                    let ready = pool.h1.iter().position(|s| s.is_ready());
                    match ready {
                        Some(i) => Some(pool.h1.swap_remove(i)),
                        None if pool.h1.len() >= MAX_UPSTREAM => Some(pool.h1.remove(0)),
                        None => None,
                    }
                };
                match idle {
                    Some(s) => Sender::H1(s),
                    None => self.connect().await?,
                }
            }
        };
        match sender {
            Sender::H2(mut s) => {
                *req.uri_mut() = format!("https://{authority}{path}")
                    .parse()
                    .map_err(|e| format!("the request's target: {e}"))?;
                *req.version_mut() = http::Version::HTTP_2;
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await.map_err(|e| e.to_string())
            }
            Sender::H1(mut s) => {
                *req.uri_mut() = path
                    .parse()
                    .map_err(|e| format!("the request's target: {e}"))?;
                *req.version_mut() = http::Version::HTTP_11;
                req.headers_mut().insert(
                    header::HOST,
                    HeaderValue::from_str(authority).map_err(|e| e.to_string())?,
                );
                s.ready().await.map_err(|e| e.to_string())?;
                let resp = s.send_request(req).await.map_err(|e| e.to_string());
                // Ready again once this response's body is read.
                self.pool.lock().expect("not poisoned").h1.push(s);
                resp
            }
        }
    }

    /// A new connection to the server: dialed through the policy's checks (the first
    /// reuses the tunnel's), TLS verified against the host's trust store, HTTP/2 if the
    /// server offers it.
    async fn connect(&self) -> Result<Sender, String> {
        let route = &self.route;
        let first = self.first.lock().expect("not poisoned").take();
        let tcp = match first {
            Some(t) => t,
            None => match proxy::dial(&self.sh, &route.host, route.port).await {
                Ok(t) => t,
                Err(Dial::Refused(r)) => {
                    self.sh.violation(route.via, &route.target, &r);
                    return Err(r.reason);
                }
                Err(Dial::Failed(why)) => return Err(why),
            },
        };
        large_receive_buffer(&tcp);
        let fail = |what: String| {
            self.sh.upstream_failed(&route.target, &what);
            what
        };
        let config = self.tls.client_config().map_err(fail)?;
        let name = ServerName::try_from(route.host.clone())
            .map_err(|e| fail(format!("{}: {e}", route.host)))?;
        let stream = tokio::time::timeout(
            proxy::CONNECT_TIMEOUT,
            tokio_rustls::TlsConnector::from(config).connect(name, ReadAhead::new(tcp)),
        )
        .await
        .map_err(|_| fail("the TLS handshake with the server timed out".into()))?
        .map_err(|e| fail(format!("TLS with the server: {e}")))?;
        let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
        let io = TokioIo::new(Gather::new(stream));
        if h2 {
            let (sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .map_err(|e| fail(format!("HTTP/2 with the server: {e}")))?;
            tokio::spawn(conn);
            self.pool.lock().expect("not poisoned").h2 = Some(sender.clone());
            Ok(Sender::H2(sender))
        } else {
            let (sender, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(|e| fail(format!("HTTP/1.1 with the server: {e}")))?;
            tokio::spawn(conn);
            Ok(Sender::H1(sender))
        }
    }
}
