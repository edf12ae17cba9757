//! The session's init: `git-loop __session FD`, the command bwrap starts in a live
//! session's sandbox. It forks every joined command, which so inherits the sandbox's
//! confinement by construction (see the module header of `session`).
//!
//! It listens only on descriptor FD, its end of a socketpair with the host-side
//! supervisor, which bwrap passed down and which no other process of the sandbox has (it
//! is close-on-exec here, so no joined command inherits it). It makes itself
//! non-dumpable first, so no other process inside (same uid, no capabilities) can open
//! its descriptors through /proc/PID/fd, read its memory or ptrace it; a joined command
//! is dumpable again once it execs. (Pid 1's supervisor, which holds CAP_SYS_PTRACE, opens
//! only the /proc entries of the process whose call it answers, checked to be alive: see
//! sandbox/caps.rs.)

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use super::wire::{self, Exec, Message};

/// Runs the init on descriptor `fd` until the supervisor goes. Returns the exit code.
pub fn run(fd: RawFd) -> u8 {
    // SAFETY: prctl and fcntl on our own process and descriptor.
    unsafe {
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            return 125;
        }
        if libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) != 0 {
            return 125;
        }
    }
    // SAFETY: the descriptor was handed to this process for it alone.
    let sock = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
    // Joined commands are ours to reap; their process groups are ours to signal.
    let running: Arc<Mutex<HashMap<u64, i32>>> = Arc::default();
    if wire::send(sock.as_raw_fd(), &Message::Ready, &[]).is_err() {
        return 125;
    }
    loop {
        let (msg, fds) = match wire::recv(sock.as_raw_fd()) {
            Ok(Some(m)) => m,
            // The supervisor is gone: so is the session (bwrap dies with it as well).
            Ok(None) | Err(wire::WireError::Io(_) | wire::WireError::Sys(_)) => return 0,
            // The supervisor is the only peer; a message it did not mean is skipped.
            Err(wire::WireError::Malformed(_)) => continue,
        };
        match msg {
            Message::Spawn { id, exec } => spawn(&sock, &running, id, exec, fds),
            Message::Stop { id, signal } => {
                if let Some(pid) = running.lock().expect("not poisoned").get(&id) {
                    // SAFETY: a plain system call to a child of ours.
                    unsafe { libc::kill(*pid, signal) };
                }
            }
            Message::Probe { id, port } => {
                let code = u8::from(!listening(port));
                let _ = wire::send(
                    sock.as_raw_fd(),
                    &Message::Exit {
                        id,
                        code,
                        signal: None,
                        cause: None,
                    },
                    &[],
                );
            }
            Message::Dial { id, port } => dial(&sock, id, port),
            Message::Signal { id, signal } => {
                if let Some(pid) = running.lock().expect("not poisoned").get(&id) {
                    // SAFETY: a plain system call; the group is the command's own.
                    unsafe { libc::kill(-pid, signal) };
                }
            }
            _ => {}
        }
    }
}

/// Whether a TCP connection to `port` of the session's loopback (IPv4 or IPv6) is
/// accepted: a service's readiness. Connecting to loopback answers at once (accepted or
/// refused); the timeout only bounds a listener whose backlog is full.
fn listening(port: u16) -> bool {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
    let wait = std::time::Duration::from_millis(500);
    [
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        SocketAddr::from((Ipv6Addr::LOCALHOST, port)),
    ]
    .iter()
    .any(|a| TcpStream::connect_timeout(a, wait).is_ok())
}

/// A forwarded port's connection (`crate::ports`): a TCP connection to `127.0.0.1:port`
/// of the sandbox's own namespace, made on a thread of its own (the init never waits on a
/// server inside) and handed to the supervisor. The address is fixed here; the supervisor
/// names only the port.
fn dial(sock: &Arc<OwnedFd>, id: u64, port: u16) {
    let sock = Arc::clone(sock);
    std::thread::spawn(move || {
        let addr = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
        let _ = match std::net::TcpStream::connect_timeout(&addr, DIAL_WAIT) {
            Ok(stream) => wire::send(
                sock.as_raw_fd(),
                &Message::Dialed { id, error: None },
                &[stream.as_raw_fd()],
            ),
            Err(e) => wire::send(
                sock.as_raw_fd(),
                &Message::Dialed {
                    id,
                    error: Some(e.to_string()),
                },
                &[],
            ),
        };
    });
}

/// How long a dial inside may take.
const DIAL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

fn spawn(
    sock: &Arc<OwnedFd>,
    running: &Arc<Mutex<HashMap<u64, i32>>>,
    id: u64,
    exec: Exec,
    fds: Vec<OwnedFd>,
) {
    let started = |pid: Option<i32>, error: Option<String>| {
        let _ = wire::send(sock.as_raw_fd(), &Message::Started { id, pid, error }, &[]);
    };
    let Some((program, args)) = exec.argv.split_first() else {
        return started(None, Some("no command".into()));
    };
    let mut fds = fds.into_iter();
    let mut cmd = Command::new(program);
    cmd.args(args).envs(exec.env.iter().map(|(k, v)| (k, v)));
    if let Some(term) = &exec.term {
        cmd.env("TERM", term);
    }
    for (i, slot) in [0, 1, 2].into_iter().enumerate() {
        let stdio = fds.next().map(Stdio::from).unwrap_or_else(Stdio::null);
        match i {
            0 => cmd.stdin(stdio),
            1 => cmd.stdout(stdio),
            _ => cmd.stderr(stdio),
        };
        let _ = slot;
    }
    // SAFETY: setsid between fork and exec is a plain system call. Each joined command
    // leads a session of its own, as bwrap's `--new-session` gives a fresh run: no
    // terminal is its controlling one, so TIOCSTI has nothing to push into (seccomp
    // refuses it as well), and its process group is what signals are delivered to.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            };
            started(None, Some(format!("cannot run {program}: {e}")));
            let _ = wire::send(
                sock.as_raw_fd(),
                &Message::Exit {
                    id,
                    code,
                    signal: None,
                    cause: None,
                },
                &[],
            );
            return;
        }
    };
    let pid = child.id() as i32;
    running.lock().expect("not poisoned").insert(id, pid);
    started(Some(pid), None);
    let sock = Arc::clone(sock);
    let running = Arc::clone(running);
    std::thread::spawn(move || {
        let status = child.wait();
        running.lock().expect("not poisoned").remove(&id);
        let (code, signal) = match status {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(c), _) => (c.clamp(0, 255) as u8, None),
                (None, Some(sig)) => ((128 + sig).clamp(0, 255) as u8, Some(sig)),
                _ => (1, None),
            },
            Err(_) => (1, None),
        };
        let _ = wire::send(
            sock.as_raw_fd(),
            &Message::Exit {
                id,
                code,
                signal,
                cause: None,
            },
            &[],
        );
    });
}
