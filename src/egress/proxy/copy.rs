//! Moving bytes: reads, writes, splice(2) through a pipe, bounded copies.

use super::*;

/// Appends what `s` has to `buf` (at least one byte, or 0 at the end).
pub(super) async fn read_some(s: &TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.reserve(16 * 1024);
    loop {
        s.readable().await?;
        match s.try_read_buf(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

pub(super) async fn write_all(s: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        s.writable().await?;
        match s.try_write(data) {
            Ok(n) => data = &data[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends the writing direction of `s` (the peer reads the end of the stream).
pub(super) fn shutdown_write(s: &TcpStream) {
    let _ = nix::sys::socket::shutdown(s.as_raw_fd(), nix::sys::socket::Shutdown::Write);
}

/// One direction of a connection: `first`, then everything `src` sends, to `dst`, then
/// the end of the stream. The bytes go through a pipe with splice(2), so the proxy moves
/// page references instead of copying every byte through its own memory; where no pipe
/// can be had, through a buffer.
pub(super) async fn half(
    src: &TcpStream,
    dst: &TcpStream,
    first: Vec<u8>,
    grown: &AtomicUsize,
) -> io::Result<()> {
    half_through(src, dst, first, Pipe::new().as_ref(), grown).await
}

/// [`half`] with the pipe the caller has (an HTTP session's, once it carries a switched
/// protocol or a body that lasts until the end).
pub(super) async fn half_through(
    src: &TcpStream,
    dst: &TcpStream,
    first: Vec<u8>,
    pipe: Option<&Pipe>,
    grown: &AtomicUsize,
) -> io::Result<()> {
    write_all(dst, &first).await?;
    drop(first);
    match pipe {
        Some(pipe) => splice_half(src, dst, pipe).await,
        None => copy_half(src, dst, grown).await,
    }
}

/// A non-blocking pipe, closed when dropped.
pub(super) struct Pipe {
    read: std::os::fd::OwnedFd,
    write: std::os::fd::OwnedFd,
}

impl Pipe {
    pub(super) fn new() -> Option<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array we pass.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
            return None;
        }
        use std::os::fd::FromRawFd;
        // SAFETY: both descriptors were just created and are owned by nothing else.
        let pipe = unsafe {
            Pipe {
                read: std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                write: std::os::fd::OwnedFd::from_raw_fd(fds[1]),
            }
        };
        // A larger pipe moves a bulk transfer in fewer wake-ups; it holds page references
        // only while data is in flight. Where the kernel refuses (its per-user pipe
        // budget), the default size does.
        // SAFETY: F_SETPIPE_SZ on a pipe we own.
        unsafe {
            libc::fcntl(
                pipe.write.as_raw_fd(),
                libc::F_SETPIPE_SZ,
                PIPE_SIZE as libc::c_int,
            )
        };
        Some(pipe)
    }
}

/// Moves up to `len` bytes from `from` to `to` without blocking.
pub(super) fn splice(from: i32, to: i32, len: usize) -> io::Result<usize> {
    // SAFETY: splice between two descriptors we hold, no offsets; the kernel checks both.
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// The size asked for each splice pipe.
pub(super) const PIPE_SIZE: usize = 1024 * 1024;

pub(super) async fn splice_half(src: &TcpStream, dst: &TcpStream, pipe: &Pipe) -> io::Result<()> {
    while splice_some(src, dst, pipe, PIPE_SIZE).await? > 0 {}
    shutdown_write(dst);
    Ok(())
}

/// Moves what `src` has, at least one byte and at most `max`, to `dst` through `pipe`
/// (empty before and after): the number moved, 0 at the end of the stream.
pub(super) async fn splice_some(
    src: &TcpStream,
    dst: &TcpStream,
    pipe: &Pipe,
    max: usize,
) -> io::Result<usize> {
    let (pipe_in, pipe_out) = (pipe.write.as_raw_fd(), pipe.read.as_raw_fd());
    // The pipe is empty here, so EAGAIN means the socket has nothing yet.
    let n = loop {
        src.readable().await?;
        match src.try_io(tokio::io::Interest::READABLE, || {
            splice(src.as_raw_fd(), pipe_in, max)
        }) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    };
    let mut left = n;
    while left > 0 {
        dst.writable().await?;
        match dst.try_io(tokio::io::Interest::WRITABLE, || {
            splice(pipe_out, dst.as_raw_fd(), left)
        }) {
            Ok(m) => left -= m,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The buffered fallback of [`relay_exact`]: exactly `n` bytes through a buffer (searched
/// with `scan`).
pub(super) async fn copy_exact(
    src: &TcpStream,
    dst: &TcpStream,
    mut n: u64,
    mut scan: Option<&mut Scan<'_>>,
) -> io::Result<()> {
    let mut buf = vec![0u8; MIN_BUFFER];
    while n > 0 {
        let want = n.min(buf.len() as u64) as usize;
        src.readable().await?;
        let got = match src.try_read(&mut buf[..want]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(got) => got,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        if let Some(scan) = scan.as_deref_mut() {
            scan.feed(&buf[..got])?;
        }
        write_all(dst, &buf[..got]).await?;
        n -= got as u64;
    }
    Ok(())
}

/// The buffered fallback of [`splice_half`]. The buffer doubles while reads fill it (a
/// bulk transfer), within the shared `grown` budget.
pub(super) async fn copy_half(
    src: &TcpStream,
    dst: &TcpStream,
    grown: &AtomicUsize,
) -> io::Result<()> {
    /// Gives the growth back to the budget however the copy ends (a dropped future too).
    struct Granted<'a>(&'a AtomicUsize, usize);
    impl Drop for Granted<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(self.1, Ordering::Relaxed);
        }
    }
    let mut granted = Granted(grown, 0);
    let mut buf = vec![0u8; MIN_BUFFER];
    loop {
        src.readable().await?;
        let n = match src.try_read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            shutdown_write(dst);
            return Ok(());
        }
        write_all(dst, &buf[..n]).await?;
        if n == buf.len() && buf.len() < MAX_BUFFER {
            let more = buf.len();
            if grown.fetch_add(more, Ordering::Relaxed) + more <= GROWTH_BUDGET {
                granted.1 += more;
                buf.resize(buf.len() * 2, 0);
            } else {
                grown.fetch_sub(more, Ordering::Relaxed);
            }
        }
    }
}

/// Reads into `buf` until `parse` finds a complete message (or the peer closes: `None`).
pub(super) async fn read_parsed<T>(
    s: &mut TcpStream,
    buf: &mut Vec<u8>,
    limit: usize,
    parse: impl Fn(&[u8]) -> Result<Option<T>, wire::WireError>,
) -> Result<Option<T>, wire::WireError> {
    loop {
        if !buf.is_empty() {
            if let Some(v) = parse(buf)? {
                return Ok(Some(v));
            }
        }
        if buf.len() >= limit {
            return Err(wire::WireError::TooLarge);
        }
        buf.reserve(4096.min(limit - buf.len()));
        match s.read_buf(buf).await {
            Ok(0) | Err(_) => return Ok(None),
            Ok(_) => {}
        }
    }
}
