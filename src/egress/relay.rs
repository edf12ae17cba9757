//! The sandbox's side of the `proxy` network mode.
//!
//! The sandbox has a network namespace of its own with nothing but a loopback, made by
//! the spawner (spawn.rs) before bwrap starts: it brings the loopback up, binds the two
//! proxy ports on `127.0.0.1` there, and hands both listening sockets to the host-side
//! proxy over a unix socket pair (`SCM_RIGHTS`), the [`HANDOVER`] byte with them. The
//! proxy accepts each connection itself, in the sandbox's namespace: nothing is relayed
//! byte by byte inside, no process of ours runs in the sandbox before the command, and
//! no host socket is in the sandbox's view (ATTACKS 14b). Connections made before the
//! proxy's first `accept` wait in the listen backlog.
//!
//! `git-loop __connect HOST PORT` (the binary is bound read-only at [`RELAY_EXE`]) is
//! ssh's `ProxyCommand` inside (`GIT_SSH_COMMAND`): it asks the SOCKS5 port for
//! `HOST:PORT` with this run's token (from `ALL_PROXY`) and joins stdin and stdout to the
//! connection.

use std::io::{self, IoSliceMut, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{self, ControlMessageOwned, MsgFlags};

/// Where the git-loop binary is bound inside the sandbox (for [`connect`]).
pub const RELAY_EXE: &str = "/loopat/.git-loop/git-loop";
/// The HTTP/HTTPS proxy port inside the sandbox.
pub const HTTP_PORT: u16 = 3128;
/// The SOCKS5 port inside the sandbox.
pub const SOCKS_PORT: u16 = 1080;
/// The user name in the proxy URLs; the password is the run's token.
pub const PROXY_USER: &str = "gitloop";

/// The byte the spawner sends with the listeners.
pub const HANDOVER: &[u8; 1] = b"L";

/// The proxy variables of the sandbox's environment (DESIGN 4.5). Every client that
/// honours them goes through the proxy with the run's token; ssh (and so git over ssh)
/// goes through the SOCKS port by [`connect`].
pub fn environment(token: &str) -> Vec<(String, String)> {
    let http = format!("http://{PROXY_USER}:{token}@127.0.0.1:{HTTP_PORT}");
    let socks = format!("socks5h://{PROXY_USER}:{token}@127.0.0.1:{SOCKS_PORT}");
    let no_proxy = "localhost,127.0.0.1".to_string();
    let mut env = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &no_proxy),
    ] {
        env.push((name.to_string(), value.clone()));
        env.push((name.to_ascii_lowercase(), value.clone()));
    }
    // Node's own fetch and http read the proxy variables only when told to (Node 24 and
    // later; earlier versions ignore it).
    env.push(("NODE_USE_ENV_PROXY".into(), "1".into()));
    env.push((
        "GIT_SSH_COMMAND".into(),
        format!("ssh -o ProxyCommand='{RELAY_EXE} __connect %h %p'"),
    ));
    env
}

/// The host side of the handover: the listeners the spawner sent on `channel`, if a whole
/// handover is there (`WouldBlock` until then on a non-blocking channel). Each must be
/// a listening TCP socket on 127.0.0.1 of the sandbox.
pub fn recv_listeners(channel: RawFd) -> io::Result<Vec<TcpListener>> {
    let mut byte = [0u8; 1];
    let mut iov = [IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 2]);
    let msg = socket::recvmsg::<()>(
        channel,
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(io::Error::from)?;
    let mut fds = Vec::new();
    for cmsg in msg.cmsgs().map_err(io::Error::from)? {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            // SAFETY: the kernel just installed these descriptors in this process for us.
            fds.extend(
                received
                    .into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if msg.bytes == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the sandbox closed the proxy channel",
        ));
    }
    if &byte != HANDOVER || fds.len() != 2 {
        return Err(io::Error::other(
            "an unexpected message on the proxy channel",
        ));
    }
    let mut listeners = Vec::new();
    for fd in fds {
        let listener = TcpListener::from(fd);
        match listener.local_addr() {
            Ok(addr) if addr.ip().is_loopback() => listeners.push(listener),
            _ => return Err(io::Error::other("the proxy channel carried something else")),
        }
    }
    Ok(listeners)
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "ALL_PROXY does not name this sandbox's SOCKS5 proxy (git-loop sets it in proxy mode)"
    )]
    NoProxy,
    #[error("cannot reach the sandbox's SOCKS5 proxy")]
    Io(#[from] io::Error),
    #[error("the sandbox's network policy refused {0} (see `git loop log` outside the sandbox)")]
    Refused(String),
    #[error("the proxy could not reach {target}: {why}")]
    Failed { target: String, why: &'static str },
}

/// ssh's `ProxyCommand` inside: a SOCKS5 CONNECT to `host:port` through the sandbox's
/// proxy, then stdin and stdout joined to the connection until both ends close.
pub fn connect(host: &str, port: u16) -> Result<(), ConnectError> {
    let url = std::env::var("ALL_PROXY")
        .or_else(|_| std::env::var("all_proxy"))
        .map_err(|_| ConnectError::NoProxy)?;
    let (user, token, addr) = parse_socks_url(&url).ok_or(ConnectError::NoProxy)?;
    let mut s = TcpStream::connect(addr.as_str())?;
    s.set_nodelay(true)?;
    socks_handshake(&mut s, &user, &token, host, port)?;
    let mut upstream = s.try_clone()?;
    let to_server = std::thread::spawn(move || {
        let _ = io::copy(&mut io::stdin().lock(), &mut upstream);
        let _ = upstream.shutdown(Shutdown::Write);
    });
    let mut stdout = io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        stdout.write_all(&buf[..n])?;
        stdout.flush()?;
    }
    drop(to_server);
    Ok(())
}

/// `socks5h://user:token@host:port` → (user, token, "host:port").
fn parse_socks_url(url: &str) -> Option<(String, String, String)> {
    let rest = url
        .strip_prefix("socks5h://")
        .or_else(|| url.strip_prefix("socks5://"))?;
    let (userinfo, addr) = rest.trim_end_matches('/').rsplit_once('@')?;
    let (user, token) = userinfo.split_once(':')?;
    Some((user.to_string(), token.to_string(), addr.to_string()))
}

fn socks_handshake(
    s: &mut TcpStream,
    user: &str,
    token: &str,
    host: &str,
    port: u16,
) -> Result<(), ConnectError> {
    let target = format!("{host}:{port}");
    s.write_all(&[5, 1, 2])?;
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply)?;
    if reply != [5, 2] {
        return Err(ConnectError::Refused(format!(
            "{target} (no authentication accepted)"
        )));
    }
    let mut auth = vec![1, user.len().min(255) as u8];
    auth.extend_from_slice(&user.as_bytes()[..user.len().min(255)]);
    auth.push(token.len().min(255) as u8);
    auth.extend_from_slice(&token.as_bytes()[..token.len().min(255)]);
    s.write_all(&auth)?;
    s.read_exact(&mut reply)?;
    if reply != [1, 0] {
        return Err(ConnectError::Refused(format!(
            "{target} (bad proxy credentials)"
        )));
    }
    if host.is_empty() || host.len() > 255 {
        return Err(ConnectError::Failed {
            target,
            why: "the host name is empty or too long",
        });
    }
    let mut req = vec![5, 1, 0, 3, host.len() as u8];
    req.extend_from_slice(host.as_bytes());
    req.extend_from_slice(&port.to_be_bytes());
    s.write_all(&req)?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head)?;
    // The bound address that follows: its length depends on its type.
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => {
            let mut n = [0u8; 1];
            s.read_exact(&mut n)?;
            usize::from(n[0]) + 2
        }
        _ => 0,
    };
    let mut skip = vec![0u8; rest];
    s.read_exact(&mut skip)?;
    match head[1] {
        0 => Ok(()),
        2 => Err(ConnectError::Refused(target)),
        3 | 4 => Err(ConnectError::Failed {
            target,
            why: "the network or host is unreachable",
        }),
        5 => Err(ConnectError::Failed {
            target,
            why: "the connection was refused",
        }),
        6 => Err(ConnectError::Failed {
            target,
            why: "the connection timed out",
        }),
        _ => Err(ConnectError::Failed {
            target,
            why: "the proxy failed",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    /// What the spawner sends (spawn.rs does it with raw system calls in its child).
    fn send_listeners(channel: &UnixStream, fds: &[RawFd]) -> io::Result<()> {
        let iov = [std::io::IoSlice::new(HANDOVER)];
        let cmsg = [socket::ControlMessage::ScmRights(fds)];
        socket::sendmsg::<()>(channel.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None)
            .map_err(io::Error::from)?;
        Ok(())
    }

    #[test]
    fn the_environment_names_both_ports_and_the_token() {
        let env: std::collections::BTreeMap<_, _> = environment("t0k").into_iter().collect();
        assert_eq!(env["HTTPS_PROXY"], "http://gitloop:t0k@127.0.0.1:3128");
        assert_eq!(env["https_proxy"], env["HTTPS_PROXY"]);
        assert_eq!(env["ALL_PROXY"], "socks5h://gitloop:t0k@127.0.0.1:1080");
        assert_eq!(env["no_proxy"], "localhost,127.0.0.1");
        assert!(env["GIT_SSH_COMMAND"].contains("__connect %h %p"));
        assert_eq!(
            parse_socks_url(&env["ALL_PROXY"]),
            Some(("gitloop".into(), "t0k".into(), "127.0.0.1:1080".into()))
        );
    }

    #[test]
    fn listeners_cross_the_channel_and_nothing_else_does() {
        let (a, b) = UnixStream::pair().unwrap();
        let l1 = TcpListener::bind("127.0.0.1:0").unwrap();
        let l2 = TcpListener::bind("127.0.0.1:0").unwrap();
        send_listeners(&a, &[l1.as_raw_fd(), l2.as_raw_fd()]).unwrap();
        let got = recv_listeners(b.as_raw_fd()).unwrap();
        assert_eq!(got[0].local_addr().unwrap(), l1.local_addr().unwrap());
        assert_eq!(got[1].local_addr().unwrap(), l2.local_addr().unwrap());

        let (a, b) = UnixStream::pair().unwrap();
        (&a).write_all(b"L").unwrap();
        assert!(recv_listeners(b.as_raw_fd()).is_err());
        drop(a);
        assert_eq!(
            recv_listeners(b.as_raw_fd()).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
