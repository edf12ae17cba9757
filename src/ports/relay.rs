//! Moving a forwarded connection's bytes: the host's client on one side, the socket the
//! session's init made inside on the other.
//!
//! Two threads per connection, each a blocking splice(2) loop through a pipe of its own
//! (the bytes move as page references, never through this process's memory), each ending
//! its direction with a shutdown so a half-closed connection stays half-closed. Threads,
//! not the proxy's tokio runtime: a forwarded port carries a handful of connections (a
//! browser's six, a test client's one), and a thread pair each needs no event loop in a
//! supervisor that is otherwise all blocking threads.

use std::io;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The size asked for each direction's pipe (more moves a bulk transfer in fewer
/// wake-ups; where the kernel refuses, the default size does).
const PIPE_SIZE: libc::c_int = 1 << 20;
/// The stack of a relay thread: it holds nothing but a few descriptors.
pub const THREAD_STACK: usize = 64 * 1024;

/// A socket the init made inside, connected to `127.0.0.1:inside`: checked to be exactly
/// that (a TCP stream connected to that address, nothing else the init could have been
/// made to hand over), and returned.
pub fn checked_dial(fd: OwnedFd, inside: u16) -> io::Result<TcpStream> {
    use nix::sys::socket::{getsockopt, sockopt};
    if getsockopt(&fd, sockopt::SockType)? != nix::sys::socket::SockType::Stream {
        return Err(io::Error::other("not a stream socket"));
    }
    let stream = TcpStream::from(fd);
    let peer = stream.peer_addr()?;
    if peer != SocketAddr::from((Ipv4Addr::LOCALHOST, inside)) {
        return Err(io::Error::other(format!(
            "connected to {peer}, not the port"
        )));
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Carries `a` ⇄ `b` until both directions have ended.
pub fn carry(a: TcpStream, b: TcpStream) {
    let _ = a.set_nodelay(true);
    let _ = b.set_nodelay(true);
    let (a2, b2) = match (a.try_clone(), b.try_clone()) {
        (Ok(a2), Ok(b2)) => (a2, b2),
        _ => return,
    };
    let other = std::thread::Builder::new()
        .stack_size(THREAD_STACK)
        .spawn(move || half(&b2, &a2));
    half(&a, &b);
    if let Ok(t) = other {
        let _ = t.join();
    }
}

/// One direction: everything `src` sends, to `dst`, then the end of the stream.
fn half(src: &TcpStream, dst: &TcpStream) {
    let _ = match Pipe::new() {
        Some(pipe) => splice_all(src.as_raw_fd(), dst.as_raw_fd(), &pipe),
        None => copy_all(src, dst),
    };
    let _ = dst.shutdown(Shutdown::Write);
    // The other side will send nothing more that anyone reads.
    let _ = src.shutdown(Shutdown::Read);
}

fn copy_all(mut src: &TcpStream, mut dst: &TcpStream) -> io::Result<()> {
    io::copy(&mut src, &mut dst).map(drop)
}

fn splice_all(src: RawFd, dst: RawFd, pipe: &Pipe) -> io::Result<()> {
    loop {
        let n = splice(src, pipe.write.as_raw_fd(), PIPE_SIZE as usize)?;
        if n == 0 {
            return Ok(());
        }
        let mut left = n;
        while left > 0 {
            let m = splice(pipe.read.as_raw_fd(), dst, left)?;
            if m == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            left -= m;
        }
    }
}

fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    loop {
        // SAFETY: splice between two descriptors we hold, no offsets; the kernel checks both.
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A blocking pipe, closed when dropped.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    fn new() -> Option<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into the array we pass.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: both descriptors were just made and are owned by nothing else.
        let pipe = unsafe {
            Pipe {
                read: OwnedFd::from_raw_fd(fds[0]),
                write: OwnedFd::from_raw_fd(fds[1]),
            }
        };
        // SAFETY: F_SETPIPE_SZ on a pipe we own; a refusal leaves the default size.
        unsafe { libc::fcntl(pipe.write.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE) };
        Some(pipe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn bytes_cross_both_ways_and_half_closes_carry_over() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let front = TcpListener::bind("127.0.0.1:0").unwrap();
        let (sa, fa) = (server.local_addr().unwrap(), front.local_addr().unwrap());
        let relay = std::thread::spawn(move || {
            let (client_side, _) = front.accept().unwrap();
            let inside = TcpStream::connect(sa).unwrap();
            carry(client_side, inside);
        });
        let echo = std::thread::spawn(move || {
            let (mut s, _) = server.accept().unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).unwrap();
            s.write_all(&got).unwrap();
            s.write_all(b"!").unwrap();
        });
        let mut c = TcpStream::connect(fa).unwrap();
        let body = vec![7u8; 3 << 20];
        c.write_all(&body).unwrap();
        c.shutdown(Shutdown::Write).unwrap();
        let mut back = Vec::new();
        c.read_to_end(&mut back).unwrap();
        assert_eq!(back.len(), body.len() + 1);
        assert_eq!(back.last(), Some(&b'!'));
        echo.join().unwrap();
        relay.join().unwrap();
    }

    #[test]
    fn a_dial_is_checked_for_its_address() {
        let server = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        assert!(checked_dial(OwnedFd::from(s), port).is_ok());
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let wrong = port.wrapping_add(1).max(1);
        assert!(checked_dial(OwnedFd::from(s), wrong).is_err());
        let (unix, _) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(checked_dial(OwnedFd::from(unix), port).is_err());
    }
}
