//! Live sessions (DESIGN 10): a loop's sandbox that stays up between commands.
//!
//! `git loop up ID` starts a supervisor on the host (`git-loop __supervise`, detached from
//! the terminal: double fork and `setsid`, its output in `loops/<id>/session.log`). The
//! supervisor starts the loop's sandbox exactly as a run does (`sandbox::run`, same spec,
//! vault, proxy and limits) with one command: the session's init, `git-loop __session FD`
//! (the binary bound read-only into the view, as the proxy mode binds it for ssh). bwrap
//! runs with `--die-with-parent` under the supervisor, so the supervisor's death ends the
//! sandbox, and the supervisor holds an exclusive `flock` on `locks/live/<id>.lock` for its
//! whole life: a session is up exactly while that lock is held (a pid file could name a
//! dead process or a reused pid; a lock cannot outlive its holder).
//!
//! **How a command joins.** `run`, `shell`, `agent` and `attach` of a loop whose session is
//! up connect to the supervisor's socket `locks/live/<id>.sock` (a folder of mode 0700
//! outside every sandbox's view, so no sandbox can reach it or plant a link there), send
//! the command line and their stdin, stdout and stderr (`SCM_RIGHTS`), and wait for its exit
//! code, forwarding the signals they get. The supervisor hands the request over a
//! socketpair that only the init holds to the init, which forks the command.
//!
//! Chosen over the host joining the sandbox's namespaces itself (`setns` through pidfds,
//! then dropping capabilities, no_new_privs, rlimits, cgroup, seccomp and Landlock by hand):
//! a command the init forks *inherits* every part of the sandbox's confinement from a
//! process bwrap confined (its namespaces, seccomp programs, capability sets, no_new_privs,
//! Landlock domain, rlimits, cgroup and environment), so nothing can be forgotten or
//! applied in a different order, and a future layer of the sandbox applies to joined
//! commands without a change here. The host side needs no privilege to join either
//! (`setns` into a user namespace the host did not make needs `CAP_SYS_ADMIN` in it). The
//! init is non-dumpable, so other processes inside cannot take its socket through
//! /proc/PID/fd; tests compare /proc/self/status, the cgroup, `ulimit -a` and `env` of a
//! fresh and a joined command and run the attack battery through a joined one.

pub mod forward;
pub mod init;
pub mod services;
pub mod state;
pub mod supervisor;
pub mod timer;
pub mod wire;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::workspace::Workspace;
use wire::{Exec, Message};

/// The host-only folder of the sessions' locks and sockets (0700).
pub fn live_dir(ws: &Workspace) -> PathBuf {
    ws.locks_dir().join("live")
}

/// Held exclusively by the supervisor of loop `id`'s session for its whole life.
pub fn lock_path(ws: &Workspace, id: &str) -> PathBuf {
    live_dir(ws).join(format!("{id}.lock"))
}

/// The supervisor's socket.
pub fn socket_path(ws: &Workspace, id: &str) -> PathBuf {
    live_dir(ws).join(format!("{id}.sock"))
}

/// The supervisor's pid, for people and `doctor` (never for judging liveness: the lock).
pub fn pid_path(ws: &Workspace, id: &str) -> PathBuf {
    live_dir(ws).join(format!("{id}.pid"))
}

/// The identity (device and inode) of the binary the supervisor runs, which is the one
/// bound into the session: a joiner of another binary is refused (see [`same_binary`]).
pub fn exe_path(ws: &Workspace, id: &str) -> PathBuf {
    live_dir(ws).join(format!("{id}.exe"))
}

/// `DEV:INODE` of the binary this process runs (the file, even if it was replaced or
/// removed since: /proc/self/exe names the one the kernel runs).
pub fn binary_identity() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata("/proc/self/exe").ok()?;
    Some(format!("{}:{}", meta.dev(), meta.ino()))
}

/// Whether loop `id`'s session was started by the very binary this process runs. A
/// session keeps the binary it started with (its supervisor runs it, its bind into the
/// sandbox holds that file even once a new one is installed at the same path); a command
/// of an upgraded binary could speak a different language to it, so it does not join.
pub fn same_binary(ws: &Workspace, id: &str) -> bool {
    let recorded = crate::fsutil::read_regular(&exe_path(ws, id), 256)
        .ok()
        .flatten()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string());
    recorded.is_some() && recorded == binary_identity()
}

/// The supervisor's output: what `up` shows when the session does not come up.
pub fn log_path(ws: &Workspace, id: &str) -> PathBuf {
    ws.loop_dir(id).join("session.log")
}

/// Makes the live folder: a real folder of ours, mode 0700 (checked, not assumed).
pub fn ensure_live_dir(ws: &Workspace) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let dir = live_dir(ws);
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir)
        .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))?;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(Error::failure(format!(
            "{} is not a folder of this user's",
            dir.display()
        )));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| {
            Error::failure(format!("cannot make {} private", dir.display())).with_source(e)
        })?;
    }
    Ok(dir)
}

/// Whether loop `id` has a live session: its supervisor holds the lock. Never judged by a
/// file's presence alone.
pub fn is_up(ws: &Workspace, id: &str) -> bool {
    let path = lock_path(ws, id);
    let Ok(file) = std::fs::OpenOptions::new().read(true).open(&path) else {
        return false;
    };
    matches!(
        file.try_lock_shared(),
        Err(std::fs::TryLockError::WouldBlock)
    )
}

/// A connection to loop `id`'s supervisor, or `None` when no session is up.
pub fn connect(ws: &Workspace, id: &str) -> Result<Option<OwnedFd>> {
    if !is_up(ws, id) {
        return Ok(None);
    }
    let path = socket_path(ws, id);
    match connect_to(&path) {
        Ok(fd) => Ok(Some(fd)),
        // The supervisor ended between the two looks.
        Err(_) if !is_up(ws, id) => Ok(None),
        Err(e) => Err(Error::failure(format!(
            "loop {id}'s session is up but its socket does not answer"
        ))
        .with_source(e)),
    }
}

fn connect_to(path: &Path) -> std::io::Result<OwnedFd> {
    use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, UnixAddr};
    let sock = socket::socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let addr = UnixAddr::new(path)?;
    socket::connect(sock.as_raw_fd(), &addr)?;
    Ok(sock)
}

/// Where the session's tmux server listens, inside the sandbox: its private `/tmp`.
pub const TMUX_SOCKET: &str = "/tmp/.git-loop-tmux";
/// The tmux session the detached agent runs in.
pub const TMUX_TARGET: &str = "agent";

/// The signals a joiner forwards to its joined command.
const FORWARDED: [nix::sys::signal::Signal; 5] = {
    use nix::sys::signal::Signal::*;
    [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH]
};

/// Runs `exec` in loop `id`'s live session over `conn`, with this process's stdin, stdout
/// and stderr; returns the command's exit code. The signals this process gets (Ctrl-C,
/// TERM, HUP, a window's resize) are the command's: they are forwarded.
pub fn join(conn: OwnedFd, exec: Exec) -> Result<u8> {
    join_with(conn, exec, [0, 1, 2])
}

/// [`join`] with `stdio` as the command's stdin, stdout and stderr. How the command
/// ended, when it was not by itself (a signal this process forwarded, its time limit), is
/// said on stderr as a fresh run says it; a command that could not start is said, with
/// its code (127, 126) as the run's.
pub fn join_with(conn: OwnedFd, exec: Exec, stdio: [std::os::fd::RawFd; 3]) -> Result<u8> {
    use nix::sys::signal::{SigSet, SigmaskHow};
    let lost = |e: wire::WireError| {
        Error::failure("lost the connection to the loop's session").with_source(e)
    };
    let limit = exec.timeout_ms.map(std::time::Duration::from_millis);
    let mut set = SigSet::empty();
    for s in FORWARDED {
        set.add(s);
    }
    // Blocked here and in the forwarding thread, which takes them with sigwait.
    nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)
        .map_err(|e| Error::failure("cannot forward signals").with_source(e))?;
    wire::send(conn.as_raw_fd(), &Message::Exec(exec), &stdio).map_err(lost)?;
    let raw = conn.as_raw_fd();
    std::thread::spawn(move || loop {
        let Ok(sig) = set.wait() else { return };
        if wire::send(
            raw,
            &Message::Signal {
                id: 0,
                signal: sig as i32,
            },
            &[],
        )
        .is_err()
        {
            return;
        }
    });
    // The command may change the terminal's modes (a joined shell's terminal puts it in
    // raw mode) and be killed before it can set them back: they are set back here.
    let modes = {
        // SAFETY: the descriptor is open for the whole call.
        let stdin = unsafe { std::os::fd::BorrowedFd::borrow_raw(stdio[0]) };
        nix::sys::termios::tcgetattr(stdin).ok().map(|m| (stdin, m))
    };
    let code = wait_joined(&conn, limit);
    if let Some((stdin, modes)) = modes {
        let _ = nix::sys::termios::tcsetattr(stdin, nix::sys::termios::SetArg::TCSADRAIN, &modes);
    }
    code
}

/// The end of a joined command: its exit code, said as [`join_with`] says.
fn wait_joined(conn: &OwnedFd, limit: Option<std::time::Duration>) -> Result<u8> {
    let lost = |e: wire::WireError| {
        Error::failure("lost the connection to the loop's session").with_source(e)
    };
    let mut not_started = None;
    loop {
        match wire::recv(conn.as_raw_fd()).map_err(lost)? {
            Some((
                Message::Exit {
                    code,
                    signal,
                    cause,
                    ..
                },
                _,
            )) => {
                if let Some(why) = not_started {
                    eprintln!("error: {}", crate::terminal::visible_lines(&why));
                }
                match (cause.as_deref(), signal) {
                    (Some("signal"), Some(sig)) => eprintln!(
                        "git-loop: SIG{} ended the run",
                        crate::sandbox::signal_name(sig)
                    ),
                    (Some("timeout"), _) => eprintln!(
                        "git-loop: the run's time limit ({}) ended it",
                        limit.map(timer::human).unwrap_or_default()
                    ),
                    _ => {}
                }
                return Ok(code);
            }
            // Its exit follows, with the code of a command that could not start.
            Some((
                Message::Started {
                    error: Some(why), ..
                },
                _,
            )) => not_started = Some(why),
            Some(_) => continue,
            None => {
                return Err(Error::failure(not_started.unwrap_or_else(|| {
                    "the loop's session ended before the command did".into()
                })))
            }
        }
    }
}

/// Asks loop `id`'s supervisor to end the session; returns once it is down (its lock is
/// free), or an error after `wait`.
pub fn down(ws: &Workspace, id: &str, wait: std::time::Duration) -> Result<bool> {
    let Some(conn) = connect(ws, id)? else {
        return Ok(false);
    };
    wire::send(conn.as_raw_fd(), &Message::Down, &[])
        .map_err(|e| Error::failure("cannot reach the loop's session").with_source(e))?;
    let until = std::time::Instant::now() + wait;
    while is_up(ws, id) {
        if std::time::Instant::now() > until {
            return Err(Error::failure(format!(
                "loop {id}'s session did not end within {} s",
                wait.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(true)
}
