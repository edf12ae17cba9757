//! HTTP/1.x message framing for the proxy's per-request checks (DESIGN 4.5), without I/O:
//! where each request and response ends, so that every request on a connection or in a
//! tunnel is found and checked, and what the proxy forwards of each.
//!
//! Heads and chunk-size lines are read with `httparse`, the parser hyper is built on.
//! hyper's own HTTP/1 connection types would also frame messages, but they move every
//! body byte through the proxy's memory twice (read into a buffer, written out again);
//! here the relay (proxy.rs) moves a body of known length with splice(2), exactly the
//! framed number of bytes, which keeps the proxy's throughput (BENCHMARKS.md). The rules
//! are RFC 9112's section 6 and section 7.1, applied strictly:
//!
//! - a request body is delimited by `Transfer-Encoding: chunked` or by one valid
//!   `Content-Length`, never both; any other transfer coding, a list of lengths, or
//!   chunked in HTTP/1.0 is refused, since a server could read such a request
//!   differently and take part of its body for a second request;
//! - what the server receives is rebuilt by the proxy: the request line, the client's
//!   headers minus the proxy's own and the framing ones, then one framing header of the
//!   proxy's; chunked bodies are re-chunked (`{size:x}\r\n` data `\r\n`), extensions
//!   dropped. So the server parses exactly the requests the proxy checked, whatever
//!   spelling the client used;
//! - responses are framed to know where each ends (HEAD, 1xx, 204 and 304 have no body;
//!   chunked; one length; otherwise until the server closes) and are passed on as the
//!   server sent them, re-chunked the same way.
//!
//! [`frame_requests`] runs the same framing over a buffer; the tests and the `http1`
//! fuzz target use it to show that what the proxy forwards frames again to the same
//! requests.

use super::wire::{self, RequestHead, WireError, MAX_HEAD};

/// Longest chunk-size line (with extensions) the proxy reads.
pub const MAX_CHUNK_LINE: usize = 4096;

fn invalid(why: impl Into<String>) -> WireError {
    WireError::Invalid(why.into())
}

/// How a request's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body, and no framing header.
    None,
    /// `Content-Length`.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

/// How a response's body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFraming {
    Length(u64),
    Chunked,
    /// Until the server closes the connection.
    UntilClose,
}

fn values<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Vec<&'a [u8]> {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_slice())
        .collect()
}

fn length(value: &[u8]) -> Result<u64, WireError> {
    let text = std::str::from_utf8(value).unwrap_or("").trim();
    if text.is_empty() || text.len() > 19 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(format!(
            "Content-Length {:?} is not a length",
            String::from_utf8_lossy(value)
        )));
    }
    text.parse()
        .map_err(|_| invalid("an oversized Content-Length"))
}

/// The framing of a request's body, or why the proxy does not carry the request.
pub fn request_framing(head: &RequestHead) -> Result<Framing, WireError> {
    let te = values(&head.headers, "transfer-encoding");
    let cl = values(&head.headers, "content-length");
    if !te.is_empty() {
        if !cl.is_empty() {
            return Err(invalid("both Content-Length and Transfer-Encoding"));
        }
        if head.minor_version == 0 {
            return Err(invalid("Transfer-Encoding in an HTTP/1.0 request"));
        }
        let chunked = te.len() == 1
            && std::str::from_utf8(te[0]).is_ok_and(|v| v.trim().eq_ignore_ascii_case("chunked"));
        if !chunked {
            return Err(invalid(format!(
                "the transfer coding {:?} (the proxy carries chunked alone)",
                String::from_utf8_lossy(te[0])
            )));
        }
        return Ok(Framing::Chunked);
    }
    match cl.as_slice() {
        [] => Ok(Framing::None),
        [one] => length(one).map(Framing::Length),
        _ => Err(invalid("more than one Content-Length")),
    }
}

/// A header's comma-separated tokens, trimmed.
fn tokens<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> impl Iterator<Item = &'a str> {
    values(headers, name)
        .into_iter()
        .filter_map(|v| std::str::from_utf8(v).ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// Does the request ask to switch to the WebSocket protocol? (The only upgrade the proxy
/// carries: after it the server's WebSocket endpoint owns the connection. An upgrade to
/// `h2c` would turn the connection into HTTP/2, whose requests the proxy does not read,
/// so that header is not forwarded.)
pub fn upgrade_websocket(head: &RequestHead) -> bool {
    let mut upgrade = tokens(&head.headers, "upgrade");
    matches!((upgrade.next(), upgrade.next()), (Some(t), None) if t.eq_ignore_ascii_case("websocket"))
}

/// Does the client wait for `100 Continue` before it sends the body? The proxy holds
/// such a body until the server's 100 (or until a server that ignores the expectation
/// has waited a moment). When the server answers without a 100, the body is never sent
/// on (a server that then read it as its next request would serve a request nobody
/// checked) and, since the client may or may not send it anyway, the connection ends
/// after that answer.
pub fn expects_continue(head: &RequestHead) -> bool {
    tokens(&head.headers, "expect").any(|t| t.eq_ignore_ascii_case("100-continue"))
}

/// Does the client end the connection after this request's response?
pub fn closes_after(head: &RequestHead) -> bool {
    let has =
        |token: &str| tokens(&head.headers, "connection").any(|t| t.eq_ignore_ascii_case(token));
    if head.minor_version == 0 {
        !has("keep-alive")
    } else {
        has("close")
    }
}

/// The head the proxy sends the server for `head`: the request line with `target`, the
/// client's headers in their order but the proxy's own (`Proxy-Authorization`, which holds
/// the run's token, and `Proxy-Connection`), the framing headers and any upgrade but
/// WebSocket; `Host: host` first when the client sent none; then the framing header.
pub fn forward_head(
    head: &RequestHead,
    target: &str,
    host: Option<&str>,
    framing: Framing,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len + 64);
    out.extend_from_slice(head.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(if head.minor_version == 0 {
        b" HTTP/1.0\r\n"
    } else {
        b" HTTP/1.1\r\n"
    });
    if let Some(h) = host {
        if !head
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("host"))
        {
            out.extend_from_slice(b"Host: ");
            out.extend_from_slice(h.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    let websocket = upgrade_websocket(head);
    for (name, value) in &head.headers {
        let dropped = [
            "proxy-authorization",
            "proxy-connection",
            "content-length",
            "transfer-encoding",
            "http2-settings",
        ]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
            || (name.eq_ignore_ascii_case("upgrade") && !websocket);
        if !dropped {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
    }
    match framing {
        Framing::None => {}
        Framing::Length(n) => out.extend_from_slice(format!("Content-Length: {n}\r\n").as_bytes()),
        Framing::Chunked => out.extend_from_slice(b"Transfer-Encoding: chunked\r\n"),
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// A response head: its status and headers, and its length in the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub len: usize,
}

/// Parses a response head from the start of `buf`: `Ok(None)` until it is complete.
pub fn response_head(buf: &[u8]) -> Result<Option<ResponseHead>, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(buf) {
        Ok(httparse::Status::Complete(len)) => Ok(Some(ResponseHead {
            status: resp.code.unwrap_or(0),
            headers: resp
                .headers
                .iter()
                .map(|h| (h.name.to_string(), h.value.to_vec()))
                .collect(),
            len,
        })),
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => Err(WireError::TooLarge),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => Err(WireError::TooLarge),
        Err(e) => Err(invalid(format!("a response the proxy cannot read: {e}"))),
    }
}

/// The framing of a final (status 200 and up) response's body; `head_request`: the
/// request was HEAD.
pub fn response_framing(
    resp: &ResponseHead,
    head_request: bool,
) -> Result<ResponseFraming, WireError> {
    if head_request || resp.status < 200 || resp.status == 204 || resp.status == 304 {
        return Ok(ResponseFraming::Length(0));
    }
    if let Some(last) = tokens(&resp.headers, "transfer-encoding").last() {
        return Ok(if last.eq_ignore_ascii_case("chunked") {
            ResponseFraming::Chunked
        } else {
            ResponseFraming::UntilClose
        });
    }
    let mut lengths = tokens(&resp.headers, "content-length").map(|t| length(t.as_bytes()));
    match lengths.next() {
        None => Ok(ResponseFraming::UntilClose),
        Some(first) => {
            let first = first?;
            for other in lengths {
                if other? != first {
                    return Err(invalid("a response with different Content-Lengths"));
                }
            }
            Ok(ResponseFraming::Length(first))
        }
    }
}

/// One step of a chunked body's decoder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The buffer holds part of a chunk-size line or of the trailers: read more.
    More,
    /// `used` bytes of the buffer are framing; the relay sends `bytes` in their place.
    Emit { used: usize, bytes: Vec<u8> },
    /// This many bytes of chunk data come next, to be relayed as they are; then
    /// [`Chunked::advance`].
    Data(u64),
    /// The body is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ChunkState {
    Size,
    Data(u64),
    DataEnd,
    Trailers,
    Done,
}

/// A chunked body's decoder, fed the bytes that follow the head.
#[derive(Debug, Clone)]
pub struct Chunked {
    state: ChunkState,
}

impl Default for Chunked {
    fn default() -> Self {
        Chunked {
            state: ChunkState::Size,
        }
    }
}

impl Chunked {
    /// What to do with the start of `buf` (the body's bytes not yet consumed).
    pub fn step(&mut self, buf: &[u8]) -> Result<Step, WireError> {
        match self.state {
            ChunkState::Size => {
                let Some(&first) = buf.first() else {
                    return Ok(Step::More);
                };
                // httparse reads an empty size as 0, which would end the body early.
                if !first.is_ascii_hexdigit() {
                    return Err(invalid("a chunk size that is not a hexadecimal number"));
                }
                match httparse::parse_chunk_size(buf) {
                    Ok(httparse::Status::Complete((used, 0))) => {
                        self.state = ChunkState::Trailers;
                        Ok(Step::Emit {
                            used,
                            bytes: Vec::new(),
                        })
                    }
                    Ok(httparse::Status::Complete((used, size))) => {
                        self.state = ChunkState::Data(size);
                        Ok(Step::Emit {
                            used,
                            bytes: format!("{size:x}\r\n").into_bytes(),
                        })
                    }
                    Ok(httparse::Status::Partial) if buf.len() >= MAX_CHUNK_LINE => {
                        Err(invalid("an overlong chunk-size line"))
                    }
                    Ok(httparse::Status::Partial) => Ok(Step::More),
                    Err(_) => Err(invalid("an invalid chunk-size line")),
                }
            }
            ChunkState::Data(n) => Ok(Step::Data(n)),
            ChunkState::DataEnd => match buf {
                [b'\r', b'\n', ..] => {
                    self.state = ChunkState::Size;
                    Ok(Step::Emit {
                        used: 2,
                        bytes: b"\r\n".to_vec(),
                    })
                }
                [] | [b'\r'] => Ok(Step::More),
                _ => Err(invalid("chunk data longer than its size")),
            },
            ChunkState::Trailers => {
                let mut headers = [httparse::EMPTY_HEADER; 64];
                match httparse::parse_headers(buf, &mut headers) {
                    Ok(httparse::Status::Complete((used, fields))) => {
                        let mut bytes = b"0\r\n".to_vec();
                        for h in fields {
                            bytes.extend_from_slice(h.name.as_bytes());
                            bytes.extend_from_slice(b": ");
                            bytes.extend_from_slice(h.value);
                            bytes.extend_from_slice(b"\r\n");
                        }
                        bytes.extend_from_slice(b"\r\n");
                        self.state = ChunkState::Done;
                        Ok(Step::Emit { used, bytes })
                    }
                    Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => {
                        Err(WireError::TooLarge)
                    }
                    Ok(httparse::Status::Partial) => Ok(Step::More),
                    Err(e) => Err(invalid(format!("invalid trailers: {e}"))),
                }
            }
            ChunkState::Done => Ok(Step::Done),
        }
    }

    /// `n` bytes of the chunk data announced by [`Step::Data`] were relayed.
    pub fn advance(&mut self, n: u64) {
        if let ChunkState::Data(left) = self.state {
            let left = left.saturating_sub(n);
            self.state = if left == 0 {
                ChunkState::DataEnd
            } else {
                ChunkState::Data(left)
            };
        }
    }
}

/// One request as the proxy frames it: its head, its body (decoded), and the bytes the
/// proxy sends the server for it (target and headers as the client sent them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    pub head: RequestHead,
    pub body: Vec<u8>,
    pub forwarded: Vec<u8>,
}

/// Frames the complete requests at the start of `stream` the way the proxy's relay does,
/// stopping at an incomplete one (no error) or at one the proxy refuses (the error).
pub fn frame_requests(stream: &[u8]) -> (Vec<Framed>, Option<WireError>) {
    let mut out = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let head = match wire::request_head(rest) {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(e) => return (out, Some(e)),
        };
        let framing = match request_framing(&head) {
            Ok(f) => f,
            Err(e) => return (out, Some(e)),
        };
        let mut forwarded = forward_head(&head, &head.target, None, framing);
        let mut body = Vec::new();
        let mut at = head.len;
        match framing {
            Framing::None => {}
            Framing::Length(n) => {
                let Some(data) = usize::try_from(n)
                    .ok()
                    .and_then(|n| rest.get(at..at.checked_add(n)?))
                else {
                    break;
                };
                body.extend_from_slice(data);
                forwarded.extend_from_slice(data);
                at += data.len();
            }
            Framing::Chunked => {
                let mut chunked = Chunked::default();
                loop {
                    match chunked.step(&rest[at..]) {
                        Ok(Step::More) => return (out, None),
                        Ok(Step::Emit { used, bytes }) => {
                            at += used;
                            forwarded.extend_from_slice(&bytes);
                        }
                        Ok(Step::Data(n)) => {
                            let have = (rest.len() - at) as u64;
                            if have == 0 {
                                return (out, None);
                            }
                            let take = n.min(have) as usize;
                            body.extend_from_slice(&rest[at..at + take]);
                            forwarded.extend_from_slice(&rest[at..at + take]);
                            at += take;
                            chunked.advance(take as u64);
                        }
                        Ok(Step::Done) => break,
                        Err(e) => return (out, Some(e)),
                    }
                }
            }
        }
        rest = &rest[at..];
        out.push(Framed {
            head,
            body,
            forwarded,
        });
    }
    (out, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(why: &str) -> WireError {
        WireError::Invalid(why.to_string())
    }

    #[test]
    fn a_chunked_body_cut_short_waits_for_more() {
        let start =
            "POST /a HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabc";
        assert_eq!(framed(start), (vec![], None));
        let (reqs, err) = framed(&format!(
            "{start}de\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: a.test\r\n\r\n"
        ));
        assert_eq!(err, None);
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].body, b"abcde");
        assert_eq!(reqs[1].head.target, "/b");
    }

    #[test]
    fn a_content_length_is_one_to_nineteen_digits() {
        assert_eq!(length(b"0"), Ok(0));
        assert_eq!(length(b" 42 "), Ok(42));
        assert_eq!(length(b"1234567890123456789"), Ok(1234567890123456789));
        // Twenty digits fit a u64, but no body is that long: refused by their number.
        assert_eq!(
            length(b"12345678901234567890"),
            Err(bad(
                "Content-Length \"12345678901234567890\" is not a length"
            ))
        );
        assert_eq!(length(b""), Err(bad("Content-Length \"\" is not a length")));
        assert_eq!(
            length(b"  "),
            Err(bad("Content-Length \"  \" is not a length"))
        );
        assert_eq!(
            length(b"+5"),
            Err(bad("Content-Length \"+5\" is not a length"))
        );
        assert_eq!(
            length(b"5 5"),
            Err(bad("Content-Length \"5 5\" is not a length"))
        );
    }

    #[test]
    fn a_client_expects_continue_only_when_it_says_so() {
        let h = |extra: &str| head(&format!("POST /x HTTP/1.1\r\nHost: a.test\r\n{extra}\r\n"));
        assert!(expects_continue(&h("Expect: 100-continue\r\n")));
        assert!(expects_continue(&h("Expect: 100-Continue\r\n")));
        assert!(!expects_continue(&h("")));
        assert!(!expects_continue(&h("Expect: something-else\r\n")));
        assert!(!expects_continue(&h("X-Expect: 100-continue\r\n")));
    }

    #[test]
    fn a_response_head_is_bounded() {
        let mut buf = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
        buf.resize(wire::MAX_HEAD - 1, b'a');
        assert_eq!(
            response_head(&buf),
            Ok(None),
            "short of the bound: read more"
        );
        buf.push(b'a');
        assert_eq!(response_head(&buf), Err(WireError::TooLarge));
        let done = response_head(b"HTTP/1.1 204 No Content\r\nA: b\r\n\r\nrest")
            .unwrap()
            .unwrap();
        assert_eq!((done.status, done.len), (204, 33));
    }

    #[test]
    fn only_final_responses_with_a_body_have_one() {
        let resp = |status: u16| ResponseHead {
            status,
            headers: vec![("Content-Length".into(), b"5".to_vec())],
            len: 0,
        };
        for status in [100, 101, 199, 204, 304] {
            assert_eq!(
                response_framing(&resp(status), false),
                Ok(ResponseFraming::Length(0)),
                "{status}"
            );
        }
        for status in [200, 201, 404, 500] {
            assert_eq!(
                response_framing(&resp(status), false),
                Ok(ResponseFraming::Length(5)),
                "{status}"
            );
            assert_eq!(
                response_framing(&resp(status), true),
                Ok(ResponseFraming::Length(0)),
                "HEAD"
            );
        }
    }

    #[test]
    fn a_chunk_size_line_is_bounded() {
        let mut line = b"1;".to_vec();
        line.resize(MAX_CHUNK_LINE - 1, b'x');
        assert_eq!(Chunked::default().step(&line), Ok(Step::More));
        line.push(b'x');
        assert_eq!(
            Chunked::default().step(&line),
            Err(bad("an overlong chunk-size line"))
        );
        assert_eq!(
            Chunked::default().step(b"g\r\n"),
            Err(bad("a chunk size that is not a hexadecimal number"))
        );
        assert_eq!(Chunked::default().step(b""), Ok(Step::More));
    }

    #[test]
    fn the_end_of_chunk_data_may_come_in_pieces() {
        let mut c = Chunked::default();
        assert_eq!(
            c.step(b"3\r\nabc"),
            Ok(Step::Emit {
                used: 3,
                bytes: b"3\r\n".to_vec()
            })
        );
        assert_eq!(c.step(b"abc"), Ok(Step::Data(3)));
        c.advance(3);
        assert_eq!(c.step(b""), Ok(Step::More));
        assert_eq!(c.step(b"\r"), Ok(Step::More));
        assert_eq!(c.step(b"x"), Err(bad("chunk data longer than its size")));
        assert_eq!(
            c.step(b"\r\n0\r\n"),
            Ok(Step::Emit {
                used: 2,
                bytes: b"\r\n".to_vec()
            })
        );
        assert_eq!(
            c.step(b"0\r\n"),
            Ok(Step::Emit {
                used: 3,
                bytes: Vec::new()
            })
        );
        // Trailers: bounded like a head.
        let mut trailers = b"X-A: ".to_vec();
        trailers.resize(wire::MAX_HEAD - 1, b'a');
        assert_eq!(c.clone().step(&trailers), Ok(Step::More));
        trailers.push(b'a');
        assert_eq!(c.clone().step(&trailers), Err(WireError::TooLarge));
        assert_eq!(
            c.step(b"X-A: 1\r\n\r\n"),
            Ok(Step::Emit {
                used: 10,
                bytes: b"0\r\nX-A: 1\r\n\r\n".to_vec()
            })
        );
        assert_eq!(c.step(b"more"), Ok(Step::Done));
    }

    fn framed(stream: &str) -> (Vec<Framed>, Option<WireError>) {
        frame_requests(stream.as_bytes())
    }

    fn head(text: &str) -> RequestHead {
        wire::request_head(text.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn pipelined_requests_are_framed_one_by_one() {
        let stream = "GET /a HTTP/1.1\r\nHost: a.test\r\n\r\n\
                      POST /b HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello\
                      POST /c HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: Chunked\r\n\r\n\
                      3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 1\r\n\r\n\
                      GET /d HTTP/1.1\r\nHost: a.te";
        let (reqs, err) = framed(stream);
        assert_eq!(err, None);
        let got: Vec<(&str, &[u8])> = reqs
            .iter()
            .map(|r| (r.head.target.as_str(), r.body.as_slice()))
            .collect();
        assert_eq!(
            got,
            [
                ("/a", &b""[..]),
                ("/b", &b"hello"[..]),
                ("/c", &b"abcde"[..])
            ]
        );
        assert_eq!(
            String::from_utf8_lossy(&reqs[2].forwarded),
            "POST /c HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n\
             3\r\nabc\r\n2\r\nde\r\n0\r\nX-Sum: 1\r\n\r\n"
        );
    }

    #[test]
    fn a_body_never_becomes_a_request() {
        let smuggled = "GET /admin HTTP/1.1\r\nHost: internal-admin.corp\r\n\r\n";
        let cl = format!(
            "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: {}\r\n\r\n{smuggled}",
            smuggled.len()
        );
        let (reqs, err) = framed(&cl);
        assert_eq!((reqs.len(), err), (1, None));
        assert_eq!(reqs[0].body, smuggled.as_bytes());
        let chunked = format!(
            "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{smuggled}\r\n0\r\n\r\n",
            smuggled.len()
        );
        let (reqs, err) = framed(&chunked);
        assert_eq!((reqs.len(), err), (1, None));
        assert_eq!(reqs[0].body, smuggled.as_bytes());
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        for bad in [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 0x3\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: xchunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n",
            "POST / HTTP/1.1\r\n Transfer-Encoding: chunked\r\n\r\n",
        ] {
            let (reqs, err) = framed(bad);
            assert!(reqs.is_empty() && err.is_some(), "{bad:?}: {reqs:?}");
        }
        for bad_body in [
            "\r\n0\r\n\r\n",
            ";x\r\n0\r\n\r\n",
            "3\r\nabcd\r\n0\r\n\r\n",
            "3\r\nabc0\r\n\r\n",
            "-1\r\n",
            "1 2\r\nab\r\n0\r\n\r\n",
            "fffffffffffffffff\r\n",
        ] {
            let req = format!(
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n{bad_body}GET /second HTTP/1.1\r\n\r\n"
            );
            let (reqs, err) = framed(&req);
            assert!(reqs.is_empty() && err.is_some(), "{bad_body:?}: {reqs:?}");
        }
    }

    #[test]
    fn what_is_forwarded_frames_again_to_the_same_requests() {
        let stream = "GET /a HTTP/1.1\r\nHost: a.test\r\nProxy-Authorization: Basic eDp5\r\n\
                      Upgrade: h2c\r\nHTTP2-Settings: AAA\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n\
                      POST /c HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n\
                      A\r\n0123456789\r\n0\r\n\r\n\
                      PUT /d HTTP/1.0\r\nContent-Length: 00002\r\n\r\nok";
        let (reqs, err) = framed(stream);
        assert_eq!((reqs.len(), err), (3, None));
        let first = String::from_utf8_lossy(&reqs[0].forwarded).into_owned();
        for gone in ["Proxy-Authorization", "Upgrade:", "HTTP2-Settings:"] {
            assert!(!first.contains(gone), "{first}");
        }
        assert!(String::from_utf8_lossy(&reqs[2].forwarded).contains("Content-Length: 2\r\n"));
        let forwarded: Vec<u8> = reqs.iter().flat_map(|r| r.forwarded.clone()).collect();
        let (again, err) = frame_requests(&forwarded);
        assert_eq!(err, None);
        assert_eq!(again.len(), reqs.len());
        for (a, b) in again.iter().zip(&reqs) {
            assert_eq!(
                (&a.head.target, &a.body, &a.forwarded),
                (&b.head.target, &b.body, &b.forwarded)
            );
        }
    }

    #[test]
    fn a_missing_host_is_added_and_websocket_upgrades_kept() {
        let h = head("GET / HTTP/1.0\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
        let out =
            String::from_utf8(forward_head(&h, "/", Some("a.test:8080"), Framing::None)).unwrap();
        assert_eq!(
            out,
            "GET / HTTP/1.0\r\nHost: a.test:8080\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        );
        assert!(upgrade_websocket(&h));
        assert!(!upgrade_websocket(&head(
            "GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"
        )));
        assert!(!upgrade_websocket(&head(
            "GET / HTTP/1.1\r\nUpgrade: websocket, h2c\r\n\r\n"
        )));
        let h = head("GET / HTTP/1.1\r\nHost: b.test\r\n\r\n");
        let out = String::from_utf8(forward_head(&h, "/x", Some("a.test"), Framing::None)).unwrap();
        assert_eq!(out, "GET /x HTTP/1.1\r\nHost: b.test\r\n\r\n");
    }

    #[test]
    fn connection_close_is_read_per_version() {
        assert!(closes_after(&head("GET / HTTP/1.0\r\n\r\n")));
        assert!(!closes_after(&head(
            "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"
        )));
        assert!(!closes_after(&head("GET / HTTP/1.1\r\n\r\n")));
        assert!(closes_after(&head(
            "GET / HTTP/1.1\r\nConnection: te, close\r\n\r\n"
        )));
    }

    #[test]
    fn responses_are_framed() {
        let resp = |text: &str| response_head(text.as_bytes()).unwrap().unwrap();
        let f = |text: &str, head_req| response_framing(&resp(text), head_req);
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", false),
            Ok(ResponseFraming::Length(12))
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", true),
            Ok(ResponseFraming::Length(0))
        );
        assert_eq!(
            f("HTTP/1.1 204 No Content\r\n\r\n", false),
            Ok(ResponseFraming::Length(0))
        );
        assert_eq!(
            f(
                "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
                false
            ),
            Ok(ResponseFraming::Length(0))
        );
        assert_eq!(
            f(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
                false
            ),
            Ok(ResponseFraming::Chunked)
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false),
            Ok(ResponseFraming::UntilClose)
        );
        assert_eq!(
            f("HTTP/1.0 200 OK\r\n\r\n", false),
            Ok(ResponseFraming::UntilClose)
        );
        assert_eq!(
            f("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", false),
            Ok(ResponseFraming::Length(5))
        );
        assert!(f("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", false).is_err());
        assert!(f("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false).is_err());
        assert_eq!(response_head(b"HTTP/1.1 200 OK\r\nA: b\r\n"), Ok(None));
        assert!(response_head(b"SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert_eq!(resp("HTTP/1.1 101 Switching Protocols\r\n\r\n").status, 101);
    }
}
