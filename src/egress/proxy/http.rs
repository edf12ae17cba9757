//! HTTP: CONNECT and absolute-URI requests.

use super::*;

pub(super) async fn http_connection(mut client: TcpStream, sh: &Arc<Shared>) {
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
            respond(sh, &mut client, 400, "?", &refusal, false).await;
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
        respond(sh, &mut client, 407, &target, &refusal, true).await;
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

pub(super) async fn http_connect(
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
            return respond(sh, &mut client, 400, target, &r, false).await;
        }
        Err(e) => {
            let r = Refusal::new(Rule::Malformed, e.to_string());
            sh.violation("connect", target, &r);
            return respond(sh, &mut client, 400, target, &r, false).await;
        }
    };
    let checked = misplaced_in_target(sh, target)
        .and_then(|()| sh.policy.check_host(&raw_host))
        .and_then(|host| host_header_agrees(head, &host, port).map(|()| host));
    let host = match checked {
        Ok(h) => h,
        Err(r) => {
            sh.violation("connect", target, &r);
            return respond(sh, &mut client, 403, target, &r, false).await;
        }
    };
    let upstream = match dial(sh, &host, port).await {
        Ok(s) => s,
        Err(Dial::Refused(r)) => {
            sh.violation("connect", target, &r);
            return respond(sh, &mut client, 403, target, &r, false).await;
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
pub(super) fn target_of(head: &wire::RequestHead) -> String {
    if head.method.eq_ignore_ascii_case("CONNECT") {
        return head.target.clone();
    }
    match wire::absolute_uri(&head.target) {
        Ok(uri) => format!("{}:{}", uri.host, uri.port),
        Err(_) => head.target.clone(),
    }
}

/// The Host header, if any, must name the request's host (and port, when it names one).
pub(super) fn host_header_agrees(
    head: &wire::RequestHead,
    host: &str,
    port: u16,
) -> Result<(), Refusal> {
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
pub(super) fn refusal_answer(
    sh: &Shared,
    status: u16,
    target: &str,
    refusal: &Refusal,
    ask_credentials: bool,
) -> Vec<u8> {
    let text = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        407 => "Proxy Authentication Required",
        _ => "Error",
    };
    let (headers, body) = refusal_parts(sh, status, target, refusal);
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
/// here and the ones on connections the proxy ends (intercept.rs): the rule, the reason,
/// the exact command that would allow it where one can (fix.rs), and what it means for
/// the agent that meets it.
pub(in crate::egress) fn refusal_parts(
    sh: &Shared,
    _status: u16,
    target: &str,
    refusal: &Refusal,
) -> (Vec<(&'static str, String)>, String) {
    let target: String = target.chars().take(300).collect();
    let fix = match sh.fix_command(refusal) {
        Some(command) => format!("fix: {command}\n"),
        None => String::new(),
    };
    let body = format!(
        "git-loop sandbox policy: {target:?} refused.\nrule: {}\nreason: {}\n{fix}\n{}\n",
        refusal.rule.as_str(),
        refusal.reason,
        note(refusal),
    );
    let headers = vec![
        ("Content-Type", "text/plain; charset=utf-8".to_string()),
        ("X-Git-Loop-Policy", refusal.rule.as_str().to_string()),
    ];
    (headers, body)
}

pub(super) fn bad_gateway_answer(target: &str, why: &str) -> Vec<u8> {
    let body = format!("git-loop proxy: cannot reach {target:?}: {why}\n");
    format!(
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

pub(super) async fn respond(
    sh: &Shared,
    client: &mut TcpStream,
    status: u16,
    target: &str,
    refusal: &Refusal,
    ask_credentials: bool,
) {
    let _ = client
        .write_all(&refusal_answer(
            sh,
            status,
            target,
            refusal,
            ask_credentials,
        ))
        .await;
    let _ = client.shutdown().await;
}

pub(super) async fn bad_gateway(client: &mut TcpStream, target: &str, why: &str) {
    let _ = client.write_all(&bad_gateway_answer(target, why)).await;
    let _ = client.shutdown().await;
}
