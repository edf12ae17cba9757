//! What clients send the proxy, read without I/O: HTTP request heads (with `httparse`),
//! request targets and authorities, `Proxy-Authorization`, the SOCKS5 messages, and the
//! server name of a TLS ClientHello. Every parser takes the bytes received so far and
//! answers "complete", "need more" (`Ok(None)`, `Incomplete`) or "invalid"; none allocates
//! more than its input, none panics on any input (the `fuzz/` targets feed them).
//!
//! Where two readings of the same bytes are possible — a header given twice, a second
//! server-name extension — the parser refuses instead of picking one: the proxy must see
//! the same host the server will.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Largest request head (request line and headers) the proxy reads.
pub const MAX_HEAD: usize = 64 * 1024;

/// Largest TLS ClientHello the proxy waits for (a few records).
pub const MAX_HELLO: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("the request head is larger than {MAX_HEAD} bytes")]
    TooLarge,
    #[error("not a valid request: {0}")]
    Invalid(String),
    #[error("the scheme {0} is not carried as an absolute URI; HTTPS goes through CONNECT")]
    Scheme(String),
}

fn invalid(why: impl Into<String>) -> WireError {
    WireError::Invalid(why.into())
}

/// An HTTP/1.x request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub target: String,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    pub headers: Vec<(String, Vec<u8>)>,
    /// Length of the head in the buffer; what follows is body or tunnel data.
    pub len: usize,
}

/// Parses a request head from the start of `buf`: `Ok(None)` until it is complete.
pub fn request_head(buf: &[u8]) -> Result<Option<RequestHead>, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => {
            let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version)
            else {
                return Err(invalid("an incomplete request line"));
            };
            Ok(Some(RequestHead {
                method: method.to_string(),
                target: target.to_string(),
                minor_version: version,
                headers: req
                    .headers
                    .iter()
                    .map(|h| (h.name.to_string(), h.value.to_vec()))
                    .collect(),
                len,
            }))
        }
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => Err(WireError::TooLarge),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(WireError::TooLarge),
        Err(e) => Err(invalid(e.to_string())),
    }
}

impl RequestHead {
    /// The value of a header that may appear at most once; two are an error, since the
    /// proxy and the server could each read a different one.
    pub fn single(&self, name: &str) -> Result<Option<&[u8]>, WireError> {
        let mut found = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name));
        let first = found.next();
        if found.next().is_some() {
            return Err(invalid(format!("more than one {name} header")));
        }
        Ok(first.map(|(_, v)| v.as_slice()))
    }
}

/// `host:port` or `[v6]:port` (the CONNECT target, a Host header). The host is returned as
/// written (brackets kept) for the policy to canonicalise; `default_port` applies when no
/// port is given, and without one a port is required.
pub fn authority(s: &str, default_port: Option<u16>) -> Result<(String, Option<u16>), WireError> {
    if s.is_empty() {
        return Err(invalid("an empty authority"));
    }
    if s.contains('@') {
        return Err(invalid("user information in the authority"));
    }
    let (host, port) = if s.starts_with('[') {
        let close = s
            .find(']')
            .ok_or_else(|| invalid("an unclosed [ in the authority"))?;
        let (host, rest) = s.split_at(close + 1);
        match rest {
            "" => (host, None),
            _ => match rest.strip_prefix(':') {
                Some(p) => (host, Some(p)),
                None => return Err(invalid("text after ] in the authority")),
            },
        }
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err(invalid("an empty host"));
    }
    let port = match port {
        Some(p) => Some(parse_port(p)?),
        None => default_port,
    };
    Ok((host.to_string(), port))
}

fn parse_port(p: &str) -> Result<u16, WireError> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(format!("'{}' is not a port", p.escape_debug())));
    }
    match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(invalid(format!("'{p}' is not a port"))),
        Ok(n) => Ok(n),
    }
}

/// An `http://` absolute URI of a forward-proxy request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbsoluteUri {
    pub host: String,
    pub port: u16,
    /// The origin form sent on: path and query, at least `/`.
    pub path: String,
}

pub fn absolute_uri(target: &str) -> Result<AbsoluteUri, WireError> {
    let Some((scheme, rest)) = target.split_once("://") else {
        return Err(invalid(
            "not an absolute URI: this is a proxy (send absolute URIs, or CONNECT)",
        ));
    };
    if !scheme.eq_ignore_ascii_case("http") {
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        {
            return Err(invalid("not an absolute URI"));
        }
        return Err(WireError::Scheme(scheme.to_ascii_lowercase()));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(end);
    let (host, port) = authority(auth, Some(80))?;
    let path = match path.split('#').next().unwrap_or("") {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    Ok(AbsoluteUri {
        host,
        port: port.unwrap_or(80),
        path,
    })
}

/// The user and password of a `Proxy-Authorization: Basic ...` value.
pub fn basic_credentials(value: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    use base64::Engine;
    let value = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some((decoded[..colon].to_vec(), decoded[colon + 1..].to_vec()))
}

/// The methods a SOCKS5 client offers, and the greeting's length.
pub fn socks_greeting(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, WireError> {
    let Some(&version) = buf.first() else {
        return Ok(None);
    };
    if version != 5 {
        return Err(invalid(format!("SOCKS version {version}, not 5")));
    }
    let Some(&n) = buf.get(1) else {
        return Ok(None);
    };
    let len = 2 + usize::from(n);
    if n == 0 {
        return Err(invalid("a SOCKS5 greeting without methods"));
    }
    Ok(buf.get(2..len).map(|m| (m.to_vec(), len)))
}

/// A SOCKS5 username/password negotiation: user, password, and the message's length.
pub type UserPass = (Vec<u8>, Vec<u8>, usize);

/// User name and password of a SOCKS5 username/password negotiation (RFC 1929).
pub fn socks_userpass(buf: &[u8]) -> Result<Option<UserPass>, WireError> {
    let Some(&version) = buf.first() else {
        return Ok(None);
    };
    if version != 1 {
        return Err(invalid("not a SOCKS5 username/password negotiation"));
    }
    let Some(&ulen) = buf.get(1) else {
        return Ok(None);
    };
    let user_end = 2 + usize::from(ulen);
    let Some(&plen) = buf.get(user_end) else {
        return Ok(None);
    };
    let len = user_end + 1 + usize::from(plen);
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some((
        buf[2..user_end].to_vec(),
        buf[user_end + 1..len].to_vec(),
        len,
    )))
}

/// The target of a SOCKS5 request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocksAddr {
    V4(Ipv4Addr),
    V6(Ipv6Addr),
    Domain(Vec<u8>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocksRequest {
    /// 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE.
    pub command: u8,
    pub addr: SocksAddr,
    pub port: u16,
    pub len: usize,
}

impl SocksRequest {
    /// `host:port` as the client asked, for messages and events.
    pub fn target(&self) -> String {
        match &self.addr {
            SocksAddr::V4(a) => format!("{a}:{}", self.port),
            SocksAddr::V6(a) => format!("[{a}]:{}", self.port),
            SocksAddr::Domain(d) => format!("{}:{}", String::from_utf8_lossy(d), self.port),
        }
    }
}

pub fn socks_request(buf: &[u8]) -> Result<Option<SocksRequest>, WireError> {
    if buf.len() < 5 {
        return match buf.first() {
            Some(&v) if v != 5 => Err(invalid(format!("SOCKS version {v}, not 5"))),
            _ => Ok(None),
        };
    }
    if buf[0] != 5 {
        return Err(invalid(format!("SOCKS version {}, not 5", buf[0])));
    }
    if buf[2] != 0 {
        return Err(invalid("a non-zero reserved byte in a SOCKS5 request"));
    }
    let command = buf[1];
    let (addr, at) = match buf[3] {
        1 => {
            let Some(b) = buf.get(4..8) else {
                return Ok(None);
            };
            (SocksAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])), 8)
        }
        4 => {
            let Some(b) = buf.get(4..20) else {
                return Ok(None);
            };
            let mut octets = [0u8; 16];
            octets.copy_from_slice(b);
            (SocksAddr::V6(Ipv6Addr::from(octets)), 20)
        }
        3 => {
            let n = usize::from(buf[4]);
            if n == 0 {
                return Err(invalid("an empty SOCKS5 domain name"));
            }
            let Some(d) = buf.get(5..5 + n) else {
                return Ok(None);
            };
            (SocksAddr::Domain(d.to_vec()), 5 + n)
        }
        t => return Err(invalid(format!("SOCKS5 address type {t}"))),
    };
    let Some(p) = buf.get(at..at + 2) else {
        return Ok(None);
    };
    Ok(Some(SocksRequest {
        command,
        addr,
        port: u16::from_be_bytes([p[0], p[1]]),
        len: at + 2,
    }))
}

/// What the first bytes of a tunnel say about the server name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientHello {
    /// Not a TLS handshake record.
    NotTls,
    /// A handshake record, not yet complete.
    Incomplete,
    /// A ClientHello without a server name.
    NoSni,
    /// The server name of the ClientHello, as sent.
    Sni(Vec<u8>),
    /// A handshake that is not a ClientHello the proxy can read unambiguously.
    Malformed(&'static str),
}

/// Reads the server name indication of a TLS ClientHello at the start of `buf`, which may
/// span several records.
pub fn client_hello_sni(buf: &[u8]) -> ClientHello {
    if buf.first() != Some(&0x16) {
        return ClientHello::NotTls;
    }
    if buf.len() >= 2 && buf[1] != 3 {
        return ClientHello::NotTls;
    }
    // Gather the handshake message from consecutive handshake records.
    let mut hs = Vec::new();
    let mut pos = 0;
    loop {
        if hs.len() >= 4 {
            if hs[0] != 1 {
                return ClientHello::Malformed("the first handshake message is not a ClientHello");
            }
            let want = 4 + u32::from_be_bytes([0, hs[1], hs[2], hs[3]]) as usize;
            if want > MAX_HELLO {
                return ClientHello::Malformed("an oversized ClientHello");
            }
            if hs.len() >= want {
                hs.truncate(want);
                break;
            }
        }
        let Some(header) = buf.get(pos..pos + 5) else {
            return ClientHello::Incomplete;
        };
        if header[0] != 0x16 {
            return ClientHello::Malformed("the ClientHello is interrupted by another record");
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len == 0 || len > 16384 {
            return ClientHello::Malformed("a handshake record of an invalid length");
        }
        let Some(body) = buf.get(pos + 5..pos + 5 + len) else {
            return ClientHello::Incomplete;
        };
        hs.extend_from_slice(body);
        pos += 5 + len;
    }
    parse_hello(&hs[4..])
}

struct Cursor<'a> {
    buf: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n)
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n)
    }
}

fn parse_hello(body: &[u8]) -> ClientHello {
    const TRUNCATED: ClientHello = ClientHello::Malformed("a truncated ClientHello");
    let mut c = Cursor { buf: body };
    // legacy_version, random, legacy_session_id, cipher_suites, legacy_compression_methods
    if c.take(2 + 32).is_none() || c.vec8().is_none() || c.vec16().is_none() || c.vec8().is_none() {
        return TRUNCATED;
    }
    if c.buf.is_empty() {
        return ClientHello::NoSni;
    }
    let Some(extensions) = c.vec16() else {
        return TRUNCATED;
    };
    if !c.buf.is_empty() {
        return ClientHello::Malformed("bytes after the ClientHello's extensions");
    }
    let mut ext = Cursor { buf: extensions };
    let mut sni = None;
    while !ext.buf.is_empty() {
        let (Some(kind), Some(data)) = (ext.u16(), ext.vec16()) else {
            return TRUNCATED;
        };
        if kind != 0 {
            continue;
        }
        if sni.is_some() {
            return ClientHello::Malformed("two server name extensions");
        }
        let mut list = Cursor { buf: data };
        let Some(names) = list.vec16() else {
            return TRUNCATED;
        };
        if !list.buf.is_empty() {
            return ClientHello::Malformed("bytes after the server name list");
        }
        let mut names = Cursor { buf: names };
        let mut host = None;
        while !names.buf.is_empty() {
            let (Some(kind), Some(name)) = (names.u8(), names.vec16()) else {
                return TRUNCATED;
            };
            if kind == 0 {
                if host.is_some() {
                    return ClientHello::Malformed("two host names in the server name extension");
                }
                host = Some(name.to_vec());
            }
        }
        match host {
            Some(h) => sni = Some(h),
            None => return ClientHello::Malformed("a server name extension without a host name"),
        }
    }
    match sni {
        Some(name) => ClientHello::Sni(name),
        None => ClientHello::NoSni,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ClientHello as a TLS 1.3 client sends it, with the given extensions.
    pub(crate) fn hello(extensions: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut ext = Vec::new();
        for (kind, data) in extensions {
            ext.extend_from_slice(&kind.to_be_bytes());
            ext.extend_from_slice(&(data.len() as u16).to_be_bytes());
            ext.extend_from_slice(data);
        }
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.push(0);
        body.extend_from_slice(&[0, 2, 0x13, 0x01]);
        body.extend_from_slice(&[1, 0]);
        body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
        body.extend_from_slice(&ext);
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(&body);
        let mut record = vec![0x16, 3, 1];
        record.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        record.extend_from_slice(&hs);
        record
    }

    pub(crate) fn sni_ext(names: &[&str]) -> (u16, Vec<u8>) {
        let mut list = Vec::new();
        for n in names {
            list.push(0);
            list.extend_from_slice(&(n.len() as u16).to_be_bytes());
            list.extend_from_slice(n.as_bytes());
        }
        let mut data = (list.len() as u16).to_be_bytes().to_vec();
        data.extend_from_slice(&list);
        (0, data)
    }

    #[test]
    fn request_heads_are_parsed_and_bounded() {
        let req =
            b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n\x16\x03";
        let head = request_head(req).unwrap().unwrap();
        assert_eq!(head.method, "CONNECT");
        assert_eq!(head.target, "api.example.com:443");
        assert_eq!(&req[head.len..], b"\x16\x03");
        assert_eq!(
            head.single("host").unwrap(),
            Some(&b"api.example.com:443"[..])
        );
        assert_eq!(
            request_head(b"GET http://a/ HTTP/1.1\r\nHost: a\r\n").unwrap(),
            None
        );
        assert!(request_head(b"\x16\x03\x01\x00").is_err());
        let mut big = b"GET http://a/ HTTP/1.1\r\nX: ".to_vec();
        big.resize(MAX_HEAD + 1, b'a');
        assert_eq!(request_head(&big), Err(WireError::TooLarge));
        let twice = request_head(b"GET http://a/ HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(twice.single("Host").is_err());
    }

    #[test]
    fn authorities_keep_the_host_as_written() {
        assert_eq!(
            authority("a.example:443", None),
            Ok(("a.example".into(), Some(443)))
        );
        assert_eq!(authority("[::1]:80", None), Ok(("[::1]".into(), Some(80))));
        assert_eq!(
            authority("a.example", Some(80)),
            Ok(("a.example".into(), Some(80)))
        );
        assert_eq!(authority("a.example", None), Ok(("a.example".into(), None)));
        // The host keeps what would smuggle a second name; the policy refuses it.
        assert_eq!(
            authority("allowed.example:443.evil.test:443", None),
            Ok(("allowed.example:443.evil.test".into(), Some(443)))
        );
        for bad in [
            "",
            ":443",
            "a.example:",
            "a.example:0",
            "a.example:65536",
            "a.example:+80",
            "a.example:443.evil.test",
            "user@a.example:443",
            "[::1",
            "[::1]x",
        ] {
            assert!(authority(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn absolute_uris_yield_host_port_and_origin_form() {
        assert_eq!(
            absolute_uri("http://A.example:8080/p?q=1#frag").unwrap(),
            AbsoluteUri {
                host: "A.example".into(),
                port: 8080,
                path: "/p?q=1".into()
            }
        );
        assert_eq!(absolute_uri("HTTP://a.example").unwrap().path, "/");
        assert_eq!(absolute_uri("http://a.example?x").unwrap().path, "/?x");
        assert_eq!(absolute_uri("http://a.example/").unwrap().port, 80);
        assert_eq!(
            absolute_uri("https://a.example/"),
            Err(WireError::Scheme("https".into()))
        );
        for bad in [
            "/index.html",
            "a.example:80",
            "http://allowed.example@evil.test/",
            "http://allowed.example:443.evil.test/",
            "http:///path",
        ] {
            assert!(absolute_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn basic_credentials_are_decoded() {
        assert_eq!(
            basic_credentials(b"Basic Z2l0bG9vcDpzZWNyZXQ="),
            Some((b"gitloop".to_vec(), b"secret".to_vec()))
        );
        assert_eq!(
            basic_credentials(b"basic  Z2l0bG9vcDpzZWNyZXQ= "),
            Some((b"gitloop".to_vec(), b"secret".to_vec()))
        );
        assert_eq!(basic_credentials(b"Bearer Z2l0bG9vcDpzZWNyZXQ="), None);
        assert_eq!(basic_credentials(b"Basic !!!"), None);
        assert_eq!(basic_credentials(b"Basic bm9jb2xvbg=="), None);
    }

    #[test]
    fn socks_messages_are_parsed_incrementally() {
        assert_eq!(socks_greeting(&[5]), Ok(None));
        assert_eq!(socks_greeting(&[5, 2, 0]), Ok(None));
        assert_eq!(socks_greeting(&[5, 2, 0, 2]), Ok(Some((vec![0, 2], 4))));
        assert!(socks_greeting(&[4, 1, 0]).is_err());
        assert_eq!(
            socks_userpass(&[1, 1, b'u', 2, b'p', b'w']),
            Ok(Some((b"u".to_vec(), b"pw".to_vec(), 6)))
        );
        assert_eq!(socks_userpass(&[1, 1, b'u', 2, b'p']), Ok(None));
        let mut req = vec![5, 1, 0, 3, 9];
        req.extend_from_slice(b"a.example");
        req.extend_from_slice(&443u16.to_be_bytes());
        let parsed = socks_request(&req).unwrap().unwrap();
        assert_eq!(parsed.addr, SocksAddr::Domain(b"a.example".to_vec()));
        assert_eq!(parsed.target(), "a.example:443");
        assert_eq!(socks_request(&req[..req.len() - 1]), Ok(None));
        let v4 = socks_request(&[5, 1, 0, 1, 127, 0, 0, 1, 0, 80])
            .unwrap()
            .unwrap();
        assert_eq!(v4.target(), "127.0.0.1:80");
        let mut v6 = vec![5, 3, 0, 4];
        v6.extend_from_slice(&[0; 15]);
        v6.push(1);
        v6.extend_from_slice(&[0, 53]);
        let v6 = socks_request(&v6).unwrap().unwrap();
        assert_eq!((v6.command, v6.target()), (3, "[::1]:53".to_string()));
        assert!(socks_request(&[5, 1, 0, 9, 0, 0]).is_err());
        assert!(socks_request(&[5, 1, 0, 3, 0, 0, 0]).is_err());
    }

    #[test]
    fn the_server_name_of_a_client_hello_is_found() {
        let h = hello(&[(10, vec![0, 2, 0, 29]), sni_ext(&["Allowed.Example"])]);
        assert_eq!(
            client_hello_sni(&h),
            ClientHello::Sni(b"Allowed.Example".to_vec())
        );
        for cut in 1..h.len() {
            assert_eq!(
                client_hello_sni(&h[..cut]),
                ClientHello::Incomplete,
                "{cut}"
            );
        }
        assert_eq!(
            client_hello_sni(&hello(&[(10, vec![0, 2, 0, 29])])),
            ClientHello::NoSni
        );
        assert_eq!(client_hello_sni(b"GET / HTTP/1.1\r\n"), ClientHello::NotTls);
        assert_eq!(
            client_hello_sni(b"SSH-2.0-OpenSSH_9.2\r\n"),
            ClientHello::NotTls
        );
        assert!(matches!(
            client_hello_sni(&hello(&[sni_ext(&["a.example"]), sni_ext(&["b.example"])])),
            ClientHello::Malformed(_)
        ));
        assert!(matches!(
            client_hello_sni(&hello(&[sni_ext(&["a.example", "b.example"])])),
            ClientHello::Malformed(_)
        ));
        // The same ClientHello split over two records.
        let hs = &h[5..];
        let mut split = vec![0x16, 3, 1, 0, 10];
        split.extend_from_slice(&hs[..10]);
        split.extend_from_slice(&[0x16, 3, 1]);
        split.extend_from_slice(&((hs.len() - 10) as u16).to_be_bytes());
        split.extend_from_slice(&hs[10..]);
        assert_eq!(
            client_hello_sni(&split),
            ClientHello::Sni(b"Allowed.Example".to_vec())
        );
    }

    #[test]
    fn a_head_is_refused_at_exactly_its_bound_and_at_a_hundred_and_one_headers() {
        assert_eq!(MAX_HEAD, 65536);
        assert_eq!(MAX_HELLO, 65536);
        let mut partial = b"GET http://a/ HTTP/1.1\r\nX: ".to_vec();
        partial.resize(MAX_HEAD - 1, b'a');
        assert_eq!(request_head(&partial), Ok(None));
        partial.push(b'a');
        assert_eq!(request_head(&partial), Err(WireError::TooLarge));
        let mut many = b"GET http://a/ HTTP/1.1\r\n".to_vec();
        for i in 0..100 {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        let mut more = many.clone();
        many.extend_from_slice(b"\r\n");
        let head = request_head(&many).unwrap().unwrap();
        assert_eq!(
            (head.headers.len(), head.minor_version, head.len),
            (100, 1, many.len())
        );
        assert_eq!(head.single("x-99").unwrap(), Some(&b"v"[..]));
        assert_eq!(head.single("absent").unwrap(), None);
        more.extend_from_slice(b"X-100: v\r\n\r\n");
        assert_eq!(request_head(&more), Err(WireError::TooLarge));
        assert!(matches!(
            request_head(b"GET  / HTTP/1.1\r\n\r\n"),
            Err(WireError::Invalid(_))
        ));
    }

    #[test]
    fn ports_are_one_to_five_digits_up_to_65535() {
        assert_eq!(parse_port("1"), Ok(1));
        assert_eq!(parse_port("65535"), Ok(65535));
        assert_eq!(parse_port("00080"), Ok(80));
        for bad in [
            "", "0", "00000", "65536", "99999", "000080", "8 0", "-1", "８０",
        ] {
            assert!(parse_port(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            authority("[::1]", Some(443)),
            Ok(("[::1]".into(), Some(443)))
        );
        assert_eq!(
            authority("a:b@c", None),
            Err(WireError::Invalid(
                "user information in the authority".into()
            ))
        );
    }

    #[test]
    fn a_scheme_other_than_http_is_named_only_when_it_is_one() {
        assert_eq!(
            absolute_uri("ftp://a/"),
            Err(WireError::Scheme("ftp".into()))
        );
        assert_eq!(
            absolute_uri("Git+SSH.x-1://a/"),
            Err(WireError::Scheme("git+ssh.x-1".into()))
        );
        for bad in ["://a/", "ht tp://a/", "ht/tp://a/", "h_t://a/"] {
            assert!(
                matches!(absolute_uri(bad), Err(WireError::Invalid(_))),
                "{bad}"
            );
        }
        assert_eq!(absolute_uri("http://a#f").unwrap().path, "/");
        assert_eq!(absolute_uri("http://a/x#f?y").unwrap().path, "/x");
        assert_eq!(absolute_uri("http://a:81").unwrap().port, 81);
    }

    #[test]
    fn socks_messages_are_refused_as_soon_as_they_are_wrong() {
        assert_eq!(socks_greeting(&[]), Ok(None));
        assert!(socks_greeting(&[5, 0]).is_err());
        assert_eq!(socks_greeting(&[5, 1, 0, 9]), Ok(Some((vec![0], 3))));
        assert_eq!(socks_userpass(&[]), Ok(None));
        assert_eq!(socks_userpass(&[1]), Ok(None));
        assert_eq!(socks_userpass(&[1, 1, b'u']), Ok(None));
        assert!(socks_userpass(&[5, 1, b'u', 1, b'p']).is_err());
        assert_eq!(
            socks_userpass(&[1, 0, 0, 9, 9]),
            Ok(Some((vec![], vec![], 3)))
        );
        // Short messages: a wrong version is refused at once, the rest waits.
        assert_eq!(socks_request(&[]), Ok(None));
        assert_eq!(socks_request(&[5, 1, 0, 1]), Ok(None));
        assert!(socks_request(&[4]).is_err());
        assert!(socks_request(&[4, 1, 0, 1, 127, 0, 0, 1, 0, 80]).is_err());
        assert!(socks_request(&[5, 1, 1, 1, 127, 0, 0, 1, 0, 80]).is_err());
        // Five bytes are enough to refuse a reserved byte or an address type.
        assert!(socks_request(&[5, 1, 1, 1, 0]).is_err());
        assert!(socks_request(&[5, 1, 0, 9, 0]).is_err());
        // Each address type waits for all of its bytes, then for the port.
        let v4 = [5, 1, 0, 1, 10, 0, 0, 1, 1, 187, 0xff];
        for cut in 5..10 {
            assert_eq!(socks_request(&v4[..cut]), Ok(None), "{cut}");
        }
        let r = socks_request(&v4).unwrap().unwrap();
        assert_eq!(
            r,
            SocksRequest {
                command: 1,
                addr: SocksAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                port: 443,
                len: 10
            }
        );
        let mut v6 = vec![5, 1, 0, 4];
        v6.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0, 80]);
        for cut in 5..v6.len() {
            assert_eq!(socks_request(&v6[..cut]), Ok(None), "{cut}");
        }
        assert_eq!(socks_request(&v6).unwrap().unwrap().len, 22);
        let domain = [5, 1, 0, 3, 1, b'a', 0, 80];
        for cut in 5..domain.len() {
            assert_eq!(socks_request(&domain[..cut]), Ok(None), "{cut}");
        }
        let r = socks_request(&domain).unwrap().unwrap();
        assert_eq!((r.target(), r.len), ("a:80".to_string(), 8));
    }

    /// `hs` (a handshake message) as one record.
    fn record(hs: &[u8]) -> Vec<u8> {
        let mut r = vec![0x16, 3, 1];
        r.extend_from_slice(&(hs.len() as u16).to_be_bytes());
        r.extend_from_slice(hs);
        r
    }

    /// A ClientHello handshake message around `body`.
    fn handshake(body: &[u8]) -> Vec<u8> {
        let mut hs = vec![1];
        hs.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend_from_slice(body);
        hs
    }

    /// A ClientHello body up to its extensions (version, random, session id, one cipher
    /// suite, no compression).
    fn preamble() -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        body.push(0);
        body.extend_from_slice(&[0, 2, 0x13, 0x01]);
        body.extend_from_slice(&[1, 0]);
        body
    }

    #[test]
    fn the_records_of_a_client_hello_are_bounded_and_must_all_be_handshakes() {
        assert_eq!(client_hello_sni(&[0x16]), ClientHello::Incomplete);
        assert_eq!(client_hello_sni(&[0x16, 2]), ClientHello::NotTls);
        assert_eq!(client_hello_sni(&[0x17, 3]), ClientHello::NotTls);
        assert_eq!(client_hello_sni(&[]), ClientHello::NotTls);
        let malformed = |b: &[u8]| matches!(client_hello_sni(b), ClientHello::Malformed(_));
        // Not a ClientHello first.
        let mut server_hello = handshake(&preamble());
        server_hello[0] = 2;
        assert!(malformed(&record(&server_hello)));
        // A record of no bytes, or over 16 KiB; exactly 16 KiB is read.
        assert!(malformed(&[0x16, 3, 1, 0, 0]));
        assert!(malformed(&[0x16, 3, 1, 0x40, 0x01]));
        assert_eq!(
            client_hello_sni(&[0x16, 3, 1, 0x40, 0x00, 1]),
            ClientHello::Incomplete
        );
        // A message over 64 KiB is refused once its length is known; at 64 KiB it waits.
        let len = |n: usize| {
            let n = n - 4;
            record(&[1, (n >> 16) as u8, (n >> 8) as u8, n as u8])
        };
        let oversized = ClientHello::Malformed("an oversized ClientHello");
        assert_eq!(client_hello_sni(&len(MAX_HELLO)), ClientHello::Incomplete);
        assert_eq!(client_hello_sni(&len(MAX_HELLO + 1)), oversized);
        assert_eq!(client_hello_sni(&len(0x01_00_04)), oversized);
        // Every byte of both lengths counts: a ClientHello of over 256 bytes (padded, as
        // browsers pad theirs) is read whole.
        let padded = hello(&[(21, vec![0; 300]), sni_ext(&["a.example"])]);
        assert!(padded[3] > 0 && padded[7] > 0);
        assert_eq!(
            client_hello_sni(&padded),
            ClientHello::Sni(b"a.example".to_vec())
        );
        // Interrupted by a record of another kind.
        let hs = handshake(&preamble());
        let mut split = record(&hs[..10]);
        let mut rest = record(&hs[10..]);
        rest[0] = 0x17;
        split.extend_from_slice(&rest);
        assert!(malformed(&split));
        // A message that fits its first record exactly, with no extensions at all.
        assert_eq!(client_hello_sni(&record(&hs)), ClientHello::NoSni);
    }

    #[test]
    fn a_client_hello_is_read_strictly_to_its_last_byte() {
        let parse = |body: &[u8]| client_hello_sni(&record(&handshake(body)));
        let truncated = ClientHello::Malformed("a truncated ClientHello");
        let with_extensions = |ext: &[u8]| {
            let mut body = preamble();
            body.extend_from_slice(&(ext.len() as u16).to_be_bytes());
            body.extend_from_slice(ext);
            body
        };
        let (_, sni) = sni_ext(&["a.example"]);
        let ext = |kind: u16, data: &[u8]| {
            let mut e = kind.to_be_bytes().to_vec();
            e.extend_from_slice(&(data.len() as u16).to_be_bytes());
            e.extend_from_slice(data);
            e
        };
        // Every cut of the fixed part is truncated.
        let full = preamble();
        for cut in 0..full.len() {
            assert_eq!(parse(&full[..cut]), truncated, "{cut}");
        }
        assert_eq!(
            parse(&with_extensions(&ext(0, &sni))),
            ClientHello::Sni(b"a.example".to_vec())
        );
        // Extensions whose length runs past the end; bytes after them.
        let mut body = with_extensions(&ext(0, &sni));
        body.pop();
        assert_eq!(parse(&body), truncated);
        let mut body = with_extensions(&ext(0, &sni));
        body.push(0);
        assert_eq!(
            parse(&body),
            ClientHello::Malformed("bytes after the ClientHello's extensions")
        );
        // An extension cut inside its header or data.
        assert_eq!(parse(&with_extensions(&[0])), truncated);
        assert_eq!(parse(&with_extensions(&[0, 0, 0, 9, 1])), truncated);
        // A server name list with bytes after it, cut short, or with a name cut short.
        let mut trailing = sni.clone();
        trailing.push(0);
        assert_eq!(
            parse(&with_extensions(&ext(0, &trailing))),
            ClientHello::Malformed("bytes after the server name list")
        );
        assert_eq!(parse(&with_extensions(&ext(0, &[0]))), truncated);
        assert_eq!(
            parse(&with_extensions(&ext(0, &[0, 3, 0, 0, 9]))),
            truncated
        );
        // Names of another type are passed over; only they: no host name.
        let other_then_host = [0, 8, 1, 0, 1, b'x', 0, 0, 1, b'h'];
        assert_eq!(
            parse(&with_extensions(&ext(0, &other_then_host))),
            ClientHello::Sni(b"h".to_vec())
        );
        assert_eq!(
            parse(&with_extensions(&ext(0, &[0, 4, 1, 0, 1, b'x']))),
            ClientHello::Malformed("a server name extension without a host name")
        );
        // Other extensions before and after are passed over.
        let mut exts = ext(10, &[0, 2, 0, 29]);
        exts.extend_from_slice(&ext(0, &sni));
        exts.extend_from_slice(&ext(43, &[2, 3, 4]));
        assert_eq!(
            parse(&with_extensions(&exts)),
            ClientHello::Sni(b"a.example".to_vec())
        );
    }
}
