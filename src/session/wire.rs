//! The session's messages: one JSON object per `SOCK_SEQPACKET` datagram, with descriptors
//! (a joined command's stdin, stdout and stderr) as `SCM_RIGHTS`. Datagrams keep each
//! message whole, so neither side frames or buffers; the same code speaks on the host's
//! socket (joiner and supervisor) and on the socketpair into the sandbox (supervisor and
//! the session's init).

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nix::sys::socket::{self, ControlMessage, ControlMessageOwned, MsgFlags};
use serde::{Deserialize, Serialize};

/// The largest message: a command line and its environment additions.
pub const MAX_MESSAGE: usize = 256 << 10;
/// The most descriptors one message carries.
const MAX_FDS: usize = 3;

/// What goes over the session's sockets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Message {
    /// Joiner → supervisor: run `argv` in the session, with the three descriptors sent
    /// along as its stdin, stdout and stderr.
    Exec(Exec),
    /// Supervisor → init: the same, under the supervisor's number for it.
    Spawn {
        id: u64,
        exec: Exec,
    },
    /// Init → supervisor: the command `id` started as `pid` (in the sandbox's pid
    /// namespace), or could not start.
    Started {
        id: u64,
        pid: Option<i32>,
        error: Option<String>,
    },
    /// Init → supervisor → joiner: the command ended.
    Exit {
        id: u64,
        code: u8,
        signal: Option<i32>,
        cause: Option<String>,
    },
    /// Joiner → supervisor → init: deliver a signal to the command's process group.
    Signal {
        id: u64,
        signal: i32,
    },
    /// Supervisor → init: deliver a signal to the command itself (not its group): a
    /// service's own shutdown, which its children are left to (PostgreSQL's postmaster
    /// ends its backends in order; a TERM to each of them would be a crash).
    Stop {
        id: u64,
        signal: i32,
    },
    /// Supervisor → init: is anything listening on this TCP port of the session's
    /// loopback? The answer is an `Exit` under `id` (code 0: yes).
    Probe {
        id: u64,
        port: u16,
    },
    /// Init → supervisor: the session's init is running and listening.
    Ready,
    /// Any → supervisor: end the session.
    Down,
    /// Joiner → supervisor: the session's facts (`Facts` comes back).
    Query,
    Facts(Facts),
    /// Supervisor → init: a TCP connection to `127.0.0.1:port` of the sandbox's network
    /// namespace, for a forwarded port (`crate::ports`).
    Dial {
        id: u64,
        port: u16,
    },
    /// Init → supervisor: the socket of dial `id` (its connect under way) as the one
    /// descriptor sent along, or why there is none.
    Dialed {
        id: u64,
        error: Option<String>,
    },
    /// `port` → supervisor: forward the host listener sent along (`host`) to `inside`.
    Forward {
        inside: u16,
        host: u16,
    },
    /// `port --remove` → supervisor: stop forwarding `inside`.
    Unforward {
        inside: u16,
    },
    /// Supervisor → `port`: done, or why not.
    Forwarded {
        error: Option<String>,
    },
}

/// A command to run in the session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Exec {
    /// `run`, `shell`, `agent`, `attach`: for events and for what the supervisor adds.
    pub kind: String,
    pub argv: Vec<String>,
    /// Variables set on top of the session's environment (an agent's profile).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Interactive: the command keeps the terminal it is given (no new session is made
    /// for it beyond its own process group).
    #[serde(default)]
    pub interactive: bool,
    /// Seconds after which the command is ended (`run --timeout`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `TERM` of the joiner's terminal.
    #[serde(default)]
    pub term: Option<String>,
}

/// What the supervisor says of its session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Facts {
    pub supervisor_pid: u32,
    pub started: String,
    pub net: String,
    pub mode: String,
}

#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the session's socket: {0}")]
    Io(#[from] std::io::Error),
    #[error("the session's socket: {0}")]
    Sys(#[from] nix::Error),
    #[error("a message of the session that is not one: {0}")]
    Malformed(String),
}

/// Sends `msg` with `fds` on `sock`.
pub fn send(sock: RawFd, msg: &Message, fds: &[RawFd]) -> Result<(), WireError> {
    let bytes = serde_json::to_vec(msg).map_err(|e| WireError::Malformed(e.to_string()))?;
    if bytes.len() > MAX_MESSAGE {
        return Err(WireError::Malformed(format!(
            "{} bytes, more than {MAX_MESSAGE}",
            bytes.len()
        )));
    }
    let iov = [IoSlice::new(&bytes)];
    let cmsgs: Vec<ControlMessage> = if fds.is_empty() {
        Vec::new()
    } else {
        vec![ControlMessage::ScmRights(fds)]
    };
    socket::sendmsg::<()>(sock, &iov, &cmsgs, MsgFlags::MSG_NOSIGNAL, None)?;
    Ok(())
}

/// Receives one message and the descriptors that came with it (close-on-exec); `None` at
/// the end of the connection. A message that does not parse, or is cut short, is an error.
pub fn recv(sock: RawFd) -> Result<Option<(Message, Vec<OwnedFd>)>, WireError> {
    let mut buf = vec![0u8; MAX_MESSAGE + 1];
    let mut cmsg = nix::cmsg_space!([RawFd; MAX_FDS]);
    let (len, fds, truncated) = loop {
        let mut iov = [IoSliceMut::new(&mut buf)];
        match socket::recvmsg::<()>(sock, &mut iov, Some(&mut cmsg), MsgFlags::MSG_CMSG_CLOEXEC) {
            Ok(r) => {
                let mut fds = Vec::new();
                for c in r.cmsgs()? {
                    if let ControlMessageOwned::ScmRights(got) = c {
                        // SAFETY: the kernel just installed these descriptors for us.
                        fds.extend(
                            got.into_iter()
                                .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                        );
                    }
                }
                let truncated = r
                    .flags
                    .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
                break (r.bytes, fds, truncated);
            }
            Err(nix::Error::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    if len == 0 && fds.is_empty() {
        return Ok(None);
    }
    if truncated || len > MAX_MESSAGE || fds.len() > MAX_FDS {
        return Err(WireError::Malformed("too large".into()));
    }
    let msg =
        serde_json::from_slice(&buf[..len]).map_err(|e| WireError::Malformed(e.to_string()))?;
    Ok(Some((msg, fds)))
}

/// A connected pair of datagram sockets, both close-on-exec.
pub fn pair() -> Result<(OwnedFd, OwnedFd), WireError> {
    Ok(socket::socketpair(
        socket::AddressFamily::Unix,
        socket::SockType::SeqPacket,
        None,
        socket::SockFlag::SOCK_CLOEXEC,
    )?)
}

/// The uid of the process at the other end of `sock`.
pub fn peer_uid(sock: &impl AsRawFd) -> Option<u32> {
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(sock.as_raw_fd()) };
    socket::getsockopt(&fd, socket::sockopt::PeerCredentials)
        .ok()
        .map(|c| c.uid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_and_its_descriptors_arrive_whole() {
        let (a, b) = pair().unwrap();
        let exec = Exec {
            kind: "run".into(),
            argv: vec!["true".into()],
            ..Default::default()
        };
        let devnull = std::fs::File::open("/dev/null").unwrap();
        send(
            a.as_raw_fd(),
            &Message::Spawn {
                id: 7,
                exec: exec.clone(),
            },
            &[devnull.as_raw_fd()],
        )
        .unwrap();
        let (msg, fds) = recv(b.as_raw_fd()).unwrap().unwrap();
        assert_eq!(msg, Message::Spawn { id: 7, exec });
        assert_eq!(fds.len(), 1);
        drop(a);
        assert!(recv(b.as_raw_fd()).unwrap().is_none());
    }

    #[test]
    fn what_is_not_a_message_is_refused() {
        let (a, b) = pair().unwrap();
        nix::unistd::write(&a, b"{\"op\":\"exec\"").unwrap();
        assert!(matches!(recv(b.as_raw_fd()), Err(WireError::Malformed(_))));
        nix::unistd::write(&a, b"{\"op\":\"launch-missiles\"}").unwrap();
        assert!(matches!(recv(b.as_raw_fd()), Err(WireError::Malformed(_))));
    }
}
