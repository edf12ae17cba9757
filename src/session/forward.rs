//! The supervisor's side of a loop's forwarded ports (see `crate::ports` for the whole
//! picture): the host listeners it holds, a thread accepting on each, and for every
//! connection a dial through the session's init and a relay.
//!
//! The listeners live only in this process, so they close with the session: while it is
//! down, nothing listens on the loop's host ports and a connection is refused.

use std::collections::HashMap;
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::wire::{self, Message};
use crate::ports::{self, relay, Listed, Live};
use crate::workspace::Workspace;

/// At most this many forwarded connections at once per session; more are closed.
const MAX_CONNECTIONS: usize = 512;
/// How long a dial may take (the init's own wait is 10 s).
const DIAL_WAIT: Duration = Duration::from_secs(12);

/// What a dial comes back with: why not, or the socket.
type Dialed = (Option<String>, Option<OwnedFd>);

/// One forwarded port: inside, host, and the listener (kept to shut its accept down).
struct Open {
    inside: u16,
    host: u16,
    listener: OwnedFd,
}

/// The forwarded ports of one session.
pub struct Forwarding {
    ws: Workspace,
    id: String,
    address: IpAddr,
    /// The supervisor's end of the socketpair with the init (it outlives this).
    init: RawFd,
    next: AtomicU64,
    dials: Mutex<HashMap<u64, Sender<Dialed>>>,
    open: Mutex<Vec<Open>>,
    failed: Mutex<Vec<(u16, String)>>,
    connections: AtomicUsize,
}

impl Forwarding {
    pub fn new(ws: &Workspace, id: &str, address: IpAddr, init: RawFd) -> Arc<Forwarding> {
        Arc::new(Forwarding {
            ws: ws.clone(),
            id: id.to_string(),
            address,
            init,
            next: AtomicU64::new(1),
            dials: Mutex::default(),
            open: Mutex::default(),
            failed: Mutex::default(),
            connections: AtomicUsize::new(0),
        })
    }

    /// Listens on the host port of each port the session forwards from its start (the
    /// profile's, then those `port` added), each remembered or derived and moved where
    /// taken, and remembers where each went. A port that cannot be had is reported in the
    /// live file (and by `up`); the session comes up without it.
    pub fn start(self: &Arc<Self>, profile: &[u16]) {
        let lock = crate::fsutil::Lock::acquire(&self.ws.workspace_lock());
        let mut remembered = match ports::load(&self.ws, &self.id) {
            Ok(r) => r,
            Err(e) => {
                self.fail(0, e.one_line());
                self.write_live();
                return;
            }
        };
        for inside in remembered.wanted(profile) {
            match ports::listen(&self.ws, &self.id, &remembered, inside, None, self.address) {
                Ok((listener, f)) => {
                    self.serve(inside, f.host, listener);
                    remembered.put(f);
                }
                Err(e) => self.fail(inside, e.to_string()),
            }
        }
        if let Err(e) = ports::save(&self.ws, &self.id, &remembered) {
            eprintln!("git-loop: {}", e.one_line());
        }
        drop(lock);
        self.write_live();
    }

    fn fail(&self, inside: u16, why: String) {
        eprintln!("git-loop: port {inside}: {why}");
        self.failed
            .lock()
            .expect("not poisoned")
            .push((inside, why));
    }

    /// `port ID INSIDE`: forwards `inside` from the listener `port` made (on `host`).
    pub fn add(self: &Arc<Self>, inside: u16, host: u16, fd: OwnedFd) -> Result<(), String> {
        use nix::sys::socket::{getsockopt, sockopt};
        // Only a listening TCP socket on this session's address and the port named.
        let listening = getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false);
        let listener = TcpListener::from(fd);
        let at = listener.local_addr().map_err(|e| e.to_string())?;
        if !listening || at.ip() != self.address || at.port() != host {
            return Err(format!("not a listener on {}:{host}", self.address));
        }
        self.stop(inside);
        self.failed
            .lock()
            .expect("not poisoned")
            .retain(|(i, _)| *i != inside);
        self.serve(inside, host, listener);
        self.write_live();
        Ok(())
    }

    /// `port ID INSIDE --remove`: no more new connections to `inside` (those made go on).
    pub fn remove(&self, inside: u16) {
        self.stop(inside);
        self.failed
            .lock()
            .expect("not poisoned")
            .retain(|(i, _)| *i != inside);
        self.write_live();
    }

    /// Closes every listener (the session is ending).
    pub fn close_all(&self) {
        for o in self.open.lock().expect("not poisoned").drain(..) {
            let _ = nix::sys::socket::shutdown(
                o.listener.as_raw_fd(),
                nix::sys::socket::Shutdown::Both,
            );
        }
        let _ = std::fs::remove_file(ports::live_path(&self.ws, &self.id));
    }

    fn stop(&self, inside: u16) {
        let mut open = self.open.lock().expect("not poisoned");
        open.retain(|o| {
            if o.inside != inside {
                return true;
            }
            // Wakes the accepting thread (accept fails on a shut-down listener), which
            // then drops its listener: the port closes.
            let _ = nix::sys::socket::shutdown(
                o.listener.as_raw_fd(),
                nix::sys::socket::Shutdown::Both,
            );
            false
        });
    }

    /// Accepts on `listener` for `inside`, on a thread of its own.
    fn serve(self: &Arc<Self>, inside: u16, host: u16, listener: TcpListener) {
        let Ok(dup) = listener.try_clone() else {
            self.fail(inside, "cannot keep the listener".into());
            return;
        };
        self.open.lock().expect("not poisoned").push(Open {
            inside,
            host,
            listener: OwnedFd::from(dup),
        });
        let me = Arc::clone(self);
        let _ = std::thread::Builder::new()
            .stack_size(relay::THREAD_STACK)
            .spawn(move || me.accept(inside, listener));
    }

    fn accept(self: Arc<Self>, inside: u16, listener: TcpListener) {
        loop {
            let conn = match listener.accept() {
                Ok((conn, _)) => conn,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionAborted
                    ) =>
                {
                    continue
                }
                Err(_) => return,
            };
            if self.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                self.connections.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            let me = Arc::clone(&self);
            let spawned = std::thread::Builder::new()
                .stack_size(relay::THREAD_STACK)
                .spawn(move || {
                    if let Some(there) = me.dial(inside) {
                        relay::carry(conn, there);
                    }
                    me.connections.fetch_sub(1, Ordering::SeqCst);
                });
            if spawned.is_err() {
                self.connections.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// A connection to `127.0.0.1:inside` in the sandbox, made by the init.
    fn dial(&self, inside: u16) -> Option<TcpStream> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = channel();
        self.dials.lock().expect("not poisoned").insert(id, tx);
        let sent = wire::send(self.init, &Message::Dial { id, port: inside }, &[]);
        let answer = sent.ok().and_then(|_| rx.recv_timeout(DIAL_WAIT).ok());
        self.dials.lock().expect("not poisoned").remove(&id);
        let (_, Some(fd)) = answer? else {
            return None;
        };
        relay::checked_dial(fd, inside).ok()
    }

    /// The init's answer to dial `id` (from the supervisor's reader of the init).
    pub fn dialed(&self, id: u64, error: Option<String>, mut fds: Vec<OwnedFd>) {
        let fd = if error.is_none() && fds.len() == 1 {
            fds.pop()
        } else {
            None
        };
        if let Some(to) = self.dials.lock().expect("not poisoned").remove(&id) {
            let _ = to.send((error, fd));
        }
    }

    fn write_live(&self) {
        let ports = self
            .open
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|o| Listed {
                inside: o.inside,
                host: o.host,
                url: ports::url(self.address, o.host),
            })
            .collect();
        let failed = self.failed.lock().expect("not poisoned").clone();
        ports::write_live(&self.ws, &self.id, &Live { ports, failed });
    }
}
