//! How an ended connection reads its two sockets: in large reads, and hyper's reads in
//! large pieces.
//!
//! rustls asks its socket for at most one record (about 16 KiB) at a time, and
//! tokio-rustls hands hyper at most the plaintext of that one read. A 1 GiB download
//! through an ended connection was 65 000 reads of the server's socket and as many body
//! pieces handed from the proxy's server side to its client side, each a wake-up of the
//! task on the other side. [`ReadAhead`] reads a socket up to [`READ_AHEAD`] at a time
//! and gives rustls what it asks for from memory (4 100 reads for the same download);
//! [`Gather`] reads the TLS stream until hyper's buffer is full or nothing more is ready,
//! so hyper's body pieces are as large as its buffer. Together they took the proxy's CPU
//! per GiB through an ended connection from 0.71-0.76 s to 0.65-0.72 s, and the ended
//! connection from 0.63x to 0.66-0.68x of the plain tunnel's throughput; with the larger
//! receive buffer toward the server ([`large_receive_buffer`]), 0.69x-0.74x, median 0.73x
//! of seven runs (BENCHMARKS.md).

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most a [`ReadAhead`] reads from its socket at once, and the buffer it keeps for
/// that while its connection lasts (hyper keeps one of up to about 400 KiB as well).
pub(super) const READ_AHEAD: usize = 128 << 10;

/// What the proxy asks for as the receive buffer of an ended connection's socket toward
/// the server (the kernel doubles it, and caps the request at `net.core.rmem_max`).
pub(super) const SERVER_RECEIVE_BUFFER: usize = 4 << 20;

/// Sets the receive buffer of `server`, an ended connection's socket toward its server,
/// to [`SERVER_RECEIVE_BUFFER`]. The kernel sizes a buffer it tunes itself from what the
/// reader takes per round trip, which on a fast path stays small: the server then waits
/// for room far more often than it would behind a reader that decrypts and encrypts every
/// byte in bursts. Measured (BENCHMARKS.md): 1 GiB through an ended connection 6-10%
/// faster; the plain tunnel, which splices, gains nothing from it and is left to the
/// kernel. The cost is kernel memory held only while a server sends faster than the
/// sandbox reads, the same order as the kernel's own limit for a tuned buffer.
pub(super) fn large_receive_buffer(server: &tokio::net::TcpStream) {
    use nix::sys::socket::{setsockopt, sockopt::RcvBuf};
    // A refusal leaves the kernel's own tuning, which works, only slower.
    let _ = setsockopt(server, RcvBuf, &SERVER_RECEIVE_BUFFER);
}

/// A socket read up to [`READ_AHEAD`] at a time, whatever its reader asks for; writes
/// go through as they are.
pub(super) struct ReadAhead<T> {
    inner: T,
    /// Bytes read from `inner` and not yet handed on: `buf[at..end]`.
    buf: Vec<u8>,
    at: usize,
    end: usize,
}

impl<T> ReadAhead<T> {
    pub(super) fn new(inner: T) -> ReadAhead<T> {
        ReadAhead::with_early(inner, Vec::new())
    }

    /// `inner`, with bytes already read from it (`early`: a ClientHello the proxy looked
    /// at) handed on first.
    pub(super) fn with_early(inner: T, early: Vec<u8>) -> ReadAhead<T> {
        let end = early.len();
        ReadAhead {
            inner,
            buf: early,
            at: 0,
            end,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ReadAhead<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if out.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if this.at == this.end {
            // Nothing kept: a reader that asks for as much as a read-ahead reads itself.
            if out.remaining() >= READ_AHEAD {
                return Pin::new(&mut this.inner).poll_read(cx, out);
            }
            if this.buf.len() < READ_AHEAD {
                this.buf = vec![0; READ_AHEAD];
            }
            let mut into = ReadBuf::new(&mut this.buf);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut into))?;
            let n = into.filled().len();
            (this.at, this.end) = (0, n);
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
        }
        let n = (this.end - this.at).min(out.remaining());
        out.put_slice(&this.buf[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// A stream whose reads go on while the stream has bytes ready and the reader's buffer
/// has room.
pub(super) struct Gather<T> {
    inner: T,
    /// An error met after some bytes were handed on: reported by the next read.
    failed: Option<io::Error>,
}

impl<T> Gather<T> {
    pub(super) fn new(inner: T) -> Gather<T> {
        Gather {
            inner,
            failed: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Gather<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(e) = this.failed.take() {
            return Poll::Ready(Err(e));
        }
        let start = out.filled().len();
        while out.remaining() > 0 {
            let before = out.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, out) {
                // The end of the stream: the next read meets it again.
                Poll::Ready(Ok(())) if out.filled().len() == before => break,
                Poll::Ready(Ok(())) => continue,
                Poll::Ready(Err(e)) if out.filled().len() > start => {
                    this.failed = Some(e);
                    break;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                // `inner` will wake the task when it has more; what was read goes now.
                Poll::Pending if out.filled().len() > start => break,
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// Writes go to the inner stream as they are, for both wrappers.
macro_rules! write_through {
    ($t:ident) => {
        impl<T: AsyncWrite + Unpin> AsyncWrite for $t<T> {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write(cx, buf)
            }
            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut self.inner).poll_flush(cx)
            }
            fn poll_shutdown(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.inner).poll_shutdown(cx)
            }
            fn poll_write_vectored(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[io::IoSlice<'_>],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
        }
    };
}
write_through!(ReadAhead);
write_through!(Gather);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::task::Waker;

    /// What a scripted stream answers to each read, in turn.
    enum Step {
        Bytes(Vec<u8>),
        Pending,
        Fail,
        End,
    }

    /// A stream that answers reads from a script and records how much each read could
    /// take.
    #[derive(Default)]
    struct Script {
        steps: VecDeque<Step>,
        asked: Vec<usize>,
    }

    impl Script {
        fn new(steps: Vec<Step>) -> Script {
            Script {
                steps: steps.into(),
                asked: Vec::new(),
            }
        }
    }

    impl AsyncRead for Script {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            out: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            self.asked.push(out.remaining());
            match self.steps.pop_front() {
                Some(Step::Bytes(mut b)) => {
                    let n = b.len().min(out.remaining());
                    out.put_slice(&b[..n]);
                    if n < b.len() {
                        self.steps.push_front(Step::Bytes(b.split_off(n)));
                    }
                    Poll::Ready(Ok(()))
                }
                Some(Step::Pending) => Poll::Pending,
                Some(Step::Fail) => Poll::Ready(Err(io::Error::other("broken"))),
                Some(Step::End) | None => Poll::Ready(Ok(())),
            }
        }
    }

    /// One read of at most `room` bytes: `None` when the stream would wait.
    fn read<R: AsyncRead + Unpin>(r: &mut R, room: usize) -> Option<io::Result<Vec<u8>>> {
        let mut space = vec![0; room];
        let mut out = ReadBuf::new(&mut space);
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(r).poll_read(&mut cx, &mut out) {
            Poll::Ready(Ok(())) => Some(Ok(out.filled().to_vec())),
            Poll::Ready(Err(e)) => Some(Err(e)),
            Poll::Pending => None,
        }
    }

    fn bytes(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn a_read_ahead_reads_its_socket_in_large_reads_and_hands_on_small_ones() {
        let data = bytes(100_000, 1);
        let mut r = ReadAhead::new(Script::new(vec![Step::Bytes(data.clone()), Step::End]));
        let mut got = read(&mut r, 4096).unwrap().unwrap();
        let kept = r.buf.as_ptr();
        while let Some(Ok(piece)) = read(&mut r, 4096) {
            if piece.is_empty() {
                break;
            }
            assert!(piece.len() <= 4096);
            got.extend(piece);
        }
        assert_eq!(got, data);
        // One buffer for the connection's life, not one per read.
        assert_eq!(r.buf.as_ptr(), kept);
        // Two reads of the socket: the data, then its end; each could take a whole
        // read-ahead, whatever the reader asked for.
        assert_eq!(r.inner.asked, vec![READ_AHEAD, READ_AHEAD]);
    }

    #[test]
    fn a_read_ahead_hands_on_the_early_bytes_first() {
        let early = bytes(300, 2);
        let later = bytes(5000, 3);
        let mut r =
            ReadAhead::with_early(Script::new(vec![Step::Bytes(later.clone())]), early.clone());
        assert_eq!(read(&mut r, 100).unwrap().unwrap(), early[..100]);
        assert_eq!(read(&mut r, 4096).unwrap().unwrap(), early[100..]);
        assert!(
            r.inner.asked.is_empty(),
            "the socket is read only once the early bytes are gone"
        );
        assert_eq!(read(&mut r, 8192).unwrap().unwrap(), later);
        assert_eq!(r.inner.asked, vec![READ_AHEAD]);
    }

    #[test]
    fn a_read_ahead_passes_on_waiting_errors_and_large_readers() {
        let mut r = ReadAhead::new(Script::new(vec![
            Step::Pending,
            Step::Fail,
            Step::Bytes(bytes(10, 4)),
        ]));
        assert!(read(&mut r, 10).is_none());
        assert!(read(&mut r, 10).unwrap().is_err());
        // A reader with room for a whole read-ahead reads the socket itself.
        assert_eq!(read(&mut r, READ_AHEAD).unwrap().unwrap(), bytes(10, 4));
        assert_eq!(r.inner.asked, vec![READ_AHEAD, READ_AHEAD, READ_AHEAD]);
        // No room, no read.
        assert_eq!(read(&mut r, 0).unwrap().unwrap(), Vec::<u8>::new());
        assert_eq!(r.inner.asked.len(), 3);
    }

    #[test]
    fn gather_reads_until_the_stream_waits_or_the_buffer_is_full() {
        let (a, b, c) = (bytes(1000, 5), bytes(2000, 6), bytes(3000, 7));
        let mut g = Gather::new(Script::new(vec![
            Step::Bytes(a.clone()),
            Step::Bytes(b.clone()),
            Step::Pending,
            Step::Bytes(c.clone()),
        ]));
        let first = read(&mut g, 10_000).unwrap().unwrap();
        assert_eq!(first, [a, b].concat());
        // Full buffer: no read beyond it.
        assert_eq!(read(&mut g, 1000).unwrap().unwrap(), c[..1000]);
        assert_eq!(read(&mut g, 10_000).unwrap().unwrap(), c[1000..]);
        // Then the end of the stream, which stays the end.
        assert_eq!(read(&mut g, 10).unwrap().unwrap(), Vec::<u8>::new());
        assert!(read(&mut g, 10).unwrap().unwrap().is_empty());
        // The stream was never asked for bytes there was no room for.
        assert!(!g.inner.asked.contains(&0), "{:?}", g.inner.asked);
    }

    #[test]
    fn gather_waits_when_nothing_is_ready_and_keeps_an_error_for_the_next_read() {
        let mut g = Gather::new(Script::new(vec![
            Step::Pending,
            Step::Bytes(bytes(50, 8)),
            Step::Fail,
            Step::Bytes(bytes(20, 9)),
        ]));
        assert!(read(&mut g, 100).is_none());
        // The bytes before the error are handed on; the error comes with the next read,
        // never lost.
        assert_eq!(read(&mut g, 100).unwrap().unwrap(), bytes(50, 8));
        assert!(read(&mut g, 100).unwrap().is_err());
        assert_eq!(read(&mut g, 100).unwrap().unwrap(), bytes(20, 9));
        // An error with nothing read before it is the read's.
        let mut g = Gather::new(Script::new(vec![Step::Fail]));
        assert!(read(&mut g, 100).unwrap().is_err());
    }

    #[test]
    fn writes_go_through_both_wrappers_as_they_are() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let mut w = Gather::new(ReadAhead::new(client));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            w.write_all(b"hello ").await.unwrap();
            let parts = [io::IoSlice::new(b"vectored "), io::IoSlice::new(b"world")];
            let n = w.write_vectored(&parts).await.unwrap();
            w.flush().await.unwrap();
            w.shutdown().await.unwrap();
            let mut got = Vec::new();
            server.read_to_end(&mut got).await.unwrap();
            let expected = b"hello vectored world";
            assert_eq!(got, expected[..6 + n]);
        });
        assert_eq!(w.is_write_vectored(), w.inner.inner.is_write_vectored());
    }
}

#[cfg(test)]
mod buffer_tests {
    use super::*;

    #[test]
    fn the_socket_toward_the_server_gets_the_large_receive_buffer() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let s = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
                .await
                .unwrap();
            use nix::sys::socket::{getsockopt, sockopt::RcvBuf};
            let before = getsockopt(&s, RcvBuf).unwrap();
            large_receive_buffer(&s);
            let after = getsockopt(&s, RcvBuf).unwrap();
            // The kernel doubles what it is asked for, up to twice its cap.
            let cap: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert_eq!(
                after,
                2 * SERVER_RECEIVE_BUFFER.min(cap),
                "before: {before}"
            );
        });
    }
}
