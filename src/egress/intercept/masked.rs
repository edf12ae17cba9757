//! The server's answer as the client gets it, on a connection the proxy ends (step 5 of
//! mod.rs): no form of any value of the run comes back (issue 27).
//!
//! - Headers: hop-by-hop ones dropped, every value masked (sentinel/mask.rs), `Location`
//!   and `Set-Cookie` included; an answer whose `Location` carries a value in any form is
//!   refused with a violation instead, so that no client follows it anywhere.
//! - Body: masked as it streams, each piece passed on at once less a tail of at most the
//!   longest form's length (bounded memory, no wait on a server that pauses). HTTP/1.1 and
//!   HTTP/2 are the same here: hyper hands both over as frames.
//! - Compression: a compressed body cannot be searched as it is. The request's
//!   `Accept-Encoding` is narrowed to gzip and deflate ([`ask_readable_coding`]), the
//!   codings flate2 decodes as they stream, and the answer is decoded, masked and passed
//!   on uncompressed (the client asked for a coding; none is always acceptable). The leg
//!   to the server keeps its compression; the leg to the sandbox is on this machine, where
//!   size costs nothing. A server that answers in another coding anyway (br, zstd) is
//!   answered 502 and recorded: nothing unread goes through.
//! - Trailers: masked like headers.

use std::io::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};

use super::{hop_by_hop, BoxError, ProxyBody, Route};
use crate::egress::policy::{Refusal, Rule};
use crate::egress::proxy::Shared;
use crate::egress::sentinel::mask::StreamMask;
use crate::egress::sentinel::Sentinels;

/// Decoded output handed on per frame, at most: what one piece of a compressed body may
/// grow to before it is passed on (a small piece can inflate a thousandfold).
const DECODED_PIECE: usize = 256 * 1024;
/// Compressed input fed to the decoder at once.
const FEED: usize = 4096;

/// Why an answer does not go to the client as it came.
pub(super) enum Answer {
    /// The policy's: a value in a redirect.
    Refused(Refusal),
    /// The proxy cannot read it to mask it.
    Unreadable(String),
}

/// The codings a request may ask the server for: gzip or deflate where the client accepts
/// them, else none (`identity`); none for a range request (ranges of a compressed body
/// cannot be decoded on their own).
pub(super) fn ask_readable_coding(headers: &mut HeaderMap) {
    let asked: Vec<String> = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|item| {
            let mut parts = item.split(';');
            let coding = parts.next()?.trim().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (!refused).then_some(coding)
        })
        .collect();
    let accepts = |c: &str| asked.iter().any(|a| a == c || a == "*");
    let coding = if headers.contains_key(header::RANGE) {
        "identity"
    } else if accepts("gzip") || asked.iter().any(|a| a == "x-gzip") {
        "gzip"
    } else if accepts("deflate") {
        "deflate"
    } else {
        "identity"
    };
    headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(coding));
}

/// What the body of an answer is coded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Identity,
    Gzip,
    Deflate,
}

fn coding(headers: &HeaderMap) -> Result<Coding, String> {
    let all: Vec<String> = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).to_string())
        .flat_map(|v| {
            v.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty() && c != "identity")
                .collect::<Vec<_>>()
        })
        .collect();
    match all.as_slice() {
        [] => Ok(Coding::Identity),
        [one] if one == "gzip" || one == "x-gzip" => Ok(Coding::Gzip),
        [one] if one == "deflate" => Ok(Coding::Deflate),
        _ => Err(format!(
            "the server answered in the coding {:?}, which the proxy cannot read to keep bound credentials out of the answer (it asked for gzip, deflate or none)",
            all.join(", ")
        )),
    }
}

/// The refusal of an answer whose `Location` carries the value of `entry`.
fn redirect_refusal(entry: &str, route: &Route) -> Refusal {
    let mut r = Refusal::new(
        Rule::Credential,
        format!(
            "the answer of {} sends the client on (Location) with the value of the vault entry {entry} in it; it goes nowhere",
            route.target
        ),
    );
    r.entry = Some(entry.to_string());
    r
}

/// Every value of `headers` masked.
fn mask_headers(sentinels: &Sentinels, headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let value = match sentinels.mask(value.as_bytes()) {
            Some(masked) => HeaderValue::from_bytes(&masked).unwrap_or_else(|_| value.clone()),
            None => value.clone(),
        };
        out.append(name.clone(), value);
    }
    out
}

/// The server's answer as the client gets it (see the module's header). `head`: the
/// request was a HEAD, so the answer has no body whatever it says.
pub(super) fn answer(
    sh: &Arc<Shared>,
    route: &Route,
    resp: Response<Incoming>,
    head: bool,
) -> Result<Response<ProxyBody>, Answer> {
    let sentinels = &sh.sentinels;
    let (parts, body) = resp.into_parts();
    for location in parts.headers.get_all(header::LOCATION) {
        if let Some(s) = sentinels.value_in(location.as_bytes()) {
            return Err(Answer::Refused(redirect_refusal(&s.entry, route)));
        }
    }
    let status = parts.status;
    let no_body = head
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED;
    let coding = match coding(&parts.headers) {
        Ok(c) => c,
        // Nothing to read: the headers alone, as they are (masked).
        Err(_) if no_body => Coding::Identity,
        Err(why) => return Err(Answer::Unreadable(why)),
    };
    let forms = sentinels.forms();
    let drop = hop_by_hop(&parts.headers);
    let mut headers = mask_headers(sentinels, &parts.headers);
    for name in &drop {
        headers.remove(name);
    }
    // A body decoded or masked to another length has no length to announce; hyper frames
    // it (chunked, or HTTP/2's own frames).
    let decode = coding != Coding::Identity;
    if decode {
        headers.remove(header::CONTENT_ENCODING);
        headers.remove(header::CONTENT_LENGTH);
    } else if !forms.keeps_length() {
        headers.remove(header::CONTENT_LENGTH);
    }
    let body: ProxyBody = if no_body || forms.is_empty() {
        body.map_err(|e| Box::new(e) as BoxError).boxed_unsync()
    } else {
        Masked {
            inner: body,
            decoder: decode.then(|| Decoder::new(coding)),
            mask: StreamMask::new(forms.clone()),
            sh: sh.clone(),
            pending: None,
            trailers: None,
            ended: false,
            flushed: false,
            done: false,
            exact: !decode && forms.keeps_length(),
        }
        .boxed_unsync()
    };
    let mut out = Response::new(body);
    *out.status_mut() = status;
    *out.headers_mut() = headers;
    Ok(out)
}

type Polled = Poll<Option<Result<Frame<Bytes>, BoxError>>>;

/// A body decoded (if it is coded) and masked as it streams.
struct Masked {
    inner: Incoming,
    decoder: Option<Decoder>,
    mask: StreamMask,
    sh: Arc<Shared>,
    /// Masked bytes to send before anything else.
    pending: Option<Bytes>,
    /// The server's trailers, masked, sent after the rest.
    trailers: Option<HeaderMap>,
    /// The server's body has ended.
    ended: bool,
    /// What the mask held has gone on.
    flushed: bool,
    done: bool,
    /// The body keeps its length (no decoding, and every form's replacement as long as
    /// the form): the server's size hint holds.
    exact: bool,
}

impl Masked {
    /// The next frame of `bytes` masked, the rest of it kept for the next poll.
    fn data(&mut self, bytes: Bytes) -> Option<Polled> {
        let (first, second) = self.mask.feed(bytes);
        let (now, later) = if first.is_empty() {
            (second, Bytes::new())
        } else {
            (first, second)
        };
        if !later.is_empty() {
            self.pending = Some(later);
        }
        (!now.is_empty()).then(|| Poll::Ready(Some(Ok(Frame::data(now)))))
    }
}

impl Body for Masked {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        loop {
            if let Some(p) = this.pending.take() {
                return Poll::Ready(Some(Ok(Frame::data(p))));
            }
            if this.done {
                return Poll::Ready(None);
            }
            // Decoded output of input already received goes first.
            if let Some(d) = this.decoder.as_mut() {
                match d.step(DECODED_PIECE, this.ended) {
                    Ok(Some(bytes)) => match this.data(bytes) {
                        Some(frame) => return frame,
                        None => continue,
                    },
                    Ok(None) => {}
                    Err(e) => {
                        this.done = true;
                        return Poll::Ready(Some(Err(Box::new(e))));
                    }
                }
            }
            if this.ended {
                if !this.flushed {
                    this.flushed = true;
                    let out = this.mask.finish();
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(out))));
                    }
                }
                this.done = true;
                return match this.trailers.take() {
                    Some(t) => Poll::Ready(Some(Ok(Frame::trailers(t)))),
                    None => Poll::Ready(None),
                };
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => match this.decoder.as_mut() {
                        Some(d) => d.push(data),
                        None => {
                            if let Some(frame) = this.data(data) {
                                return frame;
                            }
                        }
                    },
                    Err(frame) => {
                        if let Ok(t) = frame.into_trailers() {
                            this.trailers = Some(mask_headers(&this.sh.sentinels, &t));
                        }
                    }
                },
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Box::new(e))));
                }
                Poll::Ready(None) => this.ended = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done && self.pending.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        if !self.exact || self.done {
            return SizeHint::default();
        }
        // What the server has still to send, and what the mask holds of what it sent.
        let inner = self.inner.size_hint();
        let held = (self.mask.held() + self.pending.as_ref().map_or(0, Bytes::len)) as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower() + held);
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper + held);
        }
        hint
    }
}

/// A gzip or deflate body decoded as it streams, in pieces of bounded size.
struct Decoder {
    state: State,
    /// Received and not yet fed to the decoder.
    input: Bytes,
    finished: bool,
}

enum State {
    Gzip(flate2::write::MultiGzDecoder<Vec<u8>>),
    /// `deflate` is zlib-wrapped (RFC 9110), but some servers send it raw: which it is
    /// shows in its first two bytes.
    DeflateUndecided,
    Zlib(flate2::write::ZlibDecoder<Vec<u8>>),
    Raw(flate2::write::DeflateDecoder<Vec<u8>>),
}

impl Decoder {
    fn new(coding: Coding) -> Decoder {
        Decoder {
            state: match coding {
                Coding::Deflate => State::DeflateUndecided,
                _ => State::Gzip(flate2::write::MultiGzDecoder::new(Vec::new())),
            },
            input: Bytes::new(),
            finished: false,
        }
    }

    fn push(&mut self, data: Bytes) {
        if self.input.is_empty() {
            self.input = data;
        } else {
            let mut joined = Vec::with_capacity(self.input.len() + data.len());
            joined.extend_from_slice(&self.input);
            joined.extend_from_slice(&data);
            self.input = Bytes::from(joined);
        }
    }

    /// Decoded bytes of the input received, at most about `max` (`None`: none now). At
    /// the `end` of the input, the decoder is finished (its checksum checked) once all of
    /// it is decoded.
    fn step(&mut self, max: usize, end: bool) -> std::io::Result<Option<Bytes>> {
        if matches!(self.state, State::DeflateUndecided) {
            if self.input.len() < 2 && !end {
                return Ok(None);
            }
            let b = &self.input[..];
            let zlib = b.len() >= 2
                && b[0] & 0x0f == 8
                && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0;
            self.state = if zlib {
                State::Zlib(flate2::write::ZlibDecoder::new(Vec::new()))
            } else {
                State::Raw(flate2::write::DeflateDecoder::new(Vec::new()))
            };
        }
        let mut produced = 0;
        while !self.input.is_empty() && produced < max {
            let n = self.input.len().min(FEED);
            let used = match &mut self.state {
                State::Gzip(d) => d.write(&self.input[..n])?,
                State::Zlib(d) => d.write(&self.input[..n])?,
                State::Raw(d) => d.write(&self.input[..n])?,
                State::DeflateUndecided => unreachable!("decided above"),
            };
            if used == 0 {
                // The coded stream ended; what follows it is not the body.
                self.input.clear();
                break;
            }
            self.input.advance(used);
            produced = self.output_len();
        }
        if self.input.is_empty() && !self.finished {
            // What the decoder holds goes out now: a server that streams (events) is not
            // kept waiting on its next piece.
            match &mut self.state {
                State::Gzip(d) if end => d.try_finish()?,
                State::Zlib(d) if end => d.try_finish()?,
                State::Raw(d) if end => d.try_finish()?,
                State::Gzip(d) => d.flush()?,
                State::Zlib(d) => d.flush()?,
                State::Raw(d) => d.flush()?,
                State::DeflateUndecided => {}
            }
            self.finished = end;
        }
        let out = match &mut self.state {
            State::Gzip(d) => std::mem::take(d.get_mut()),
            State::Zlib(d) => std::mem::take(d.get_mut()),
            State::Raw(d) => std::mem::take(d.get_mut()),
            State::DeflateUndecided => Vec::new(),
        };
        Ok((!out.is_empty()).then(|| Bytes::from(out)))
    }

    fn output_len(&mut self) -> usize {
        match &mut self.state {
            State::Gzip(d) => d.get_mut().len(),
            State::Zlib(d) => d.get_mut().len(),
            State::Raw(d) => d.get_mut().len(),
            State::DeflateUndecided => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn coded(coding: Coding, data: &[u8]) -> Vec<u8> {
        match coding {
            Coding::Gzip => {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Coding::Deflate => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Coding::Identity => data.to_vec(),
        }
    }

    fn decoded(coding: Coding, data: &[u8], cut: usize) -> (Vec<u8>, usize) {
        let mut d = Decoder::new(coding);
        let mut out = Vec::new();
        let mut largest = 0;
        for piece in data.chunks(cut) {
            d.push(Bytes::copy_from_slice(piece));
            while let Some(b) = d.step(DECODED_PIECE, false).unwrap() {
                largest = largest.max(b.len());
                out.extend_from_slice(&b);
            }
        }
        while let Some(b) = d.step(DECODED_PIECE, true).unwrap() {
            largest = largest.max(b.len());
            out.extend_from_slice(&b);
        }
        (out, largest)
    }

    #[test]
    fn gzip_and_deflate_bodies_are_decoded_in_bounded_pieces() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        for coding in [Coding::Gzip, Coding::Deflate] {
            let data = coded(coding, &text);
            for cut in [1, 100, 4096, data.len()] {
                assert_eq!(decoded(coding, &data, cut).0, text, "{coding:?} {cut}");
            }
        }
        // Raw deflate, as some servers send it.
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&text).unwrap();
        assert_eq!(decoded(Coding::Deflate, &e.finish().unwrap(), 999).0, text);
        // 64 MiB of zeros in 64 KiB: handed on in pieces of bounded size.
        let bomb = coded(Coding::Gzip, &vec![0u8; 64 << 20]);
        assert!(bomb.len() < 100_000, "{}", bomb.len());
        let (out, largest) = decoded(Coding::Gzip, &bomb, bomb.len());
        assert_eq!(out.len(), 64 << 20);
        assert!(largest <= DECODED_PIECE + 64 * 1024, "{largest}");
        // A corrupt stream is an error, not a body.
        let mut bad = coded(Coding::Gzip, b"hello hello hello");
        let at = bad.len() - 6;
        bad[at] ^= 0xff;
        let mut d = Decoder::new(Coding::Gzip);
        d.push(Bytes::from(bad));
        assert!(d.step(DECODED_PIECE, true).is_err());
    }

    #[test]
    fn requests_ask_only_for_codings_the_proxy_reads() {
        let ask = |given: Option<&str>, range: bool| {
            let mut h = HeaderMap::new();
            if let Some(v) = given {
                h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            }
            if range {
                h.insert(header::RANGE, HeaderValue::from_static("bytes=0-9"));
            }
            ask_readable_coding(&mut h);
            h.get(header::ACCEPT_ENCODING)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string()
        };
        assert_eq!(ask(Some("gzip, deflate, br, zstd"), false), "gzip");
        assert_eq!(ask(Some("br;q=1.0, deflate;q=0.5"), false), "deflate");
        assert_eq!(ask(Some("br, zstd"), false), "identity");
        assert_eq!(ask(Some("gzip;q=0, br"), false), "identity");
        assert_eq!(ask(Some("*"), false), "gzip");
        assert_eq!(ask(None, false), "identity");
        assert_eq!(ask(Some("gzip"), true), "identity");
    }

    #[test]
    fn only_codings_the_proxy_decodes_are_read() {
        let of = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_str(v).unwrap());
            coding(&h)
        };
        assert_eq!(coding(&HeaderMap::new()), Ok(Coding::Identity));
        assert_eq!(of("identity"), Ok(Coding::Identity));
        assert_eq!(of("GZIP"), Ok(Coding::Gzip));
        assert_eq!(of("x-gzip"), Ok(Coding::Gzip));
        assert_eq!(of("deflate"), Ok(Coding::Deflate));
        for bad in ["br", "zstd", "gzip, gzip", "compress"] {
            assert!(of(bad).is_err(), "{bad}");
        }
    }
}
