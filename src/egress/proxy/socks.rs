//! SOCKS5: the greeting, the token, CONNECT to a checked name.

use super::*;

/// SOCKS5 reply codes (RFC 1928).
pub(super) const SOCKS_FAILURE: u8 = 1;
pub(super) const SOCKS_NOT_ALLOWED: u8 = 2;
pub(super) const SOCKS_HOST_UNREACHABLE: u8 = 4;
pub(super) const SOCKS_REFUSED: u8 = 5;
pub(super) const SOCKS_TIMED_OUT: u8 = 6;
pub(super) const SOCKS_COMMAND_UNSUPPORTED: u8 = 7;

pub(super) async fn socks_connection(mut client: TcpStream, sh: &Arc<Shared>) {
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
pub(super) fn socks_target(
    req: &wire::SocksRequest,
    policy: &Policy,
) -> Result<String, (u8, Refusal)> {
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
pub(super) fn complete<T>(
    r: Result<Result<Option<T>, wire::WireError>, tokio::time::error::Elapsed>,
) -> Option<T> {
    match r {
        Ok(Ok(Some(v))) => Some(v),
        _ => None,
    }
}

pub(super) async fn socks_reply(client: &mut TcpStream, code: u8) {
    let _ = client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await;
    let _ = client.shutdown().await;
}
