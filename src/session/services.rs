//! A live session's services (profile `[services.NAME]`, DESIGN 10) and its `start` hook.
//!
//! The supervisor starts them once the session's init says it is ready and before it tells
//! `up` so: each service in the order the profile writes them, as a command of the session
//! (forked by the init, so confined exactly like the agent, which reaches it on the loop's
//! loopback and its unix sockets in the session's `/tmp`), then waits for its readiness (a
//! TCP port of the session's loopback, asked of the init; or a command run in the session
//! until it exits 0) within its timeout, and at last runs `start` to its end. What one of
//! them fails is `up`'s error, with the tail of its log, and the session goes down whole:
//! nothing of it is left running. `down` stops the services in the reverse order (TERM to
//! each service's own process, then KILL after [`STOP_GRACE`]) before the sandbox ends.
//!
//! Each one's output goes to `loops/<id>/logs/<name>.log` on the host, opened by the
//! supervisor (never through a link) and handed to the command as its stdout and stderr.
//! What is in a log was written by the sandbox: `git loop logs` reads its tail bounded and
//! shows it with control characters made visible (DESIGN 4.0).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// Where a service of a live session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Started, its readiness not yet seen.
    Starting,
    /// Its readiness was seen, and it runs.
    Ready,
    /// It ended by itself (with its code).
    Exited,
    /// `down` asked it to end.
    Stopping,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Starting => "starting",
            Phase::Ready => "ready",
            Phase::Exited => "exited",
            Phase::Stopping => "stopping",
        }
    }
}

/// One service of a live session, as `list` and `show` give it (`--json`:
/// `services: [{name, state, ready, code, since, log}]`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceState {
    pub name: String,
    pub state: Phase,
    /// Whether it is ready now: its readiness was seen and it has not ended.
    pub ready: bool,
    /// The exit code, with `exited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u8>,
    /// When the state last changed (RFC 3339).
    pub since: String,
    /// Its log on the host (`git loop logs ID NAME` shows its end).
    #[serde(default)]
    pub log: PathBuf,
}

impl ServiceState {
    /// `ready`, `exited 3`: as a person reads it.
    pub fn label(&self) -> String {
        match (self.state, self.code) {
            (Phase::Exited, Some(code)) => format!("exited {code}"),
            (p, _) => p.as_str().to_string(),
        }
    }
}

/// The host-only file in which the supervisor of loop `id`'s session keeps its services'
/// states, `locks/live/<id>.services`.
pub fn states_path(ws: &Workspace, id: &str) -> PathBuf {
    super::live_dir(ws).join(format!("{id}.services"))
}

/// Writes the services' states (the supervisor only).
pub fn write_states(ws: &Workspace, id: &str, states: &[ServiceState]) {
    if let Ok(text) = serde_json::to_vec(states) {
        let _ = crate::fsutil::write_atomic(&states_path(ws, id), &text);
    }
}

/// The services of loop `id`'s session while it is up, in the order they started (none
/// when no session is up). The log paths are the host's own, never what a file says.
pub fn listed(ws: &Workspace, id: &str) -> Vec<ServiceState> {
    if !super::is_up(ws, id) {
        return Vec::new();
    }
    let Some(bytes) = crate::fsutil::read_regular(&states_path(ws, id), 1 << 20)
        .ok()
        .flatten()
    else {
        return Vec::new();
    };
    let mut states: Vec<ServiceState> = serde_json::from_slice(&bytes).unwrap_or_default();
    for s in &mut states {
        s.log = log_path(ws, id, &s.name);
    }
    states
}

/// How long a service has to end after TERM at `down`, before it is killed.
pub const STOP_GRACE: Duration = Duration::from_secs(10);
/// The most of a log's end that is read to show it.
pub const TAIL_BYTES: u64 = 64 << 10;
/// The lines of a log's end an error shows.
pub const ERROR_LINES: usize = 15;
/// The name of the `start` hook's log.
pub const START: &str = "start";

/// The folder of a loop's service logs, `loops/<id>/logs/`.
pub fn logs_dir(ws: &Workspace, id: &str) -> PathBuf {
    ws.loop_dir(id).join("logs")
}

/// The log of service (or hook) `name` of loop `id`.
pub fn log_path(ws: &Workspace, id: &str, name: &str) -> PathBuf {
    logs_dir(ws, id).join(format!("{name}.log"))
}

/// Opens the log of `name` for a new start: emptied, appended to, never through a link.
pub fn open_log(ws: &Workspace, id: &str, name: &str) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = logs_dir(ws, id);
    crate::fsutil::ensure_real_dir(&dir)
        .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))?;
    let path = log_path(ws, id, name);
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .and_then(|f| {
            // A regular file only (a FIFO planted there would block or feed a reader).
            if !f.metadata()?.is_file() {
                return Err(std::io::Error::other("not a regular file"));
            }
            f.set_len(0)?;
            Ok(f)
        })
        .map_err(|e| Error::failure(format!("cannot write {}", path.display())).with_source(e))
}

/// The most a service's log holds: past it the log starts again from empty with a line
/// saying so, so that a service (whatever runs inside) cannot fill the host's disk
/// through its log.
pub const LOG_MAX: u64 = 16 << 20;

/// The log of `name` for a new start, as the write end of a pipe the service gets as its
/// output: a thread of the supervisor copies what comes through into the log, bounded by
/// [`LOG_MAX`] (see [`copy_bounded`]), until every writer has closed it; the receiver
/// hears when it has (so that what a failed service wrote last is in the log before its
/// tail is shown).
pub fn open_bounded_log(
    ws: &Workspace,
    id: &str,
    name: &str,
) -> Result<(std::os::fd::OwnedFd, std::sync::mpsc::Receiver<()>)> {
    let file = open_log(ws, id, name)?;
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| Error::failure("cannot make a pipe for a service's log").with_source(e))?;
    let (done, copied) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = copy_bounded(File::from(read), file, LOG_MAX);
        let _ = done.send(());
    });
    Ok((write, copied))
}

/// Waits a moment for a log's copy to end once its writer is gone (`write` is closed
/// here); a process the service left behind may keep it open, so never longer.
pub fn settle(write: std::os::fd::OwnedFd, copied: &std::sync::mpsc::Receiver<()>) {
    drop(write);
    let _ = copied.recv_timeout(std::time::Duration::from_secs(1));
}

/// Copies `from` into `log` (opened to append) until `from` ends; whenever the log would
/// pass `max` bytes it is emptied first and starts with a line saying it was.
pub fn copy_bounded(mut from: impl std::io::Read, mut log: File, max: u64) -> std::io::Result<()> {
    use std::io::Write;
    let mut size = log.metadata()?.len();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if size + n as u64 > max {
            log.set_len(0)?;
            let mark = format!("git-loop: this log passed {max} bytes and started again here\n");
            log.write_all(mark.as_bytes())?;
            size = mark.len() as u64;
        }
        // A single read is at most the buffer, which is far under any useful bound.
        let keep = n.min(max.saturating_sub(size) as usize);
        log.write_all(&buf[..keep])?;
        size += keep as u64;
    }
}

/// The last `lines` lines of the log at `path`, from at most its last [`TAIL_BYTES`],
/// with control characters made visible; `None` when there is no log. Never follows a
/// link, never blocks on a FIFO, never reads more than the bound.
pub fn tail(path: &Path, lines: usize) -> std::io::Result<Option<String>> {
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let from = meta.len().saturating_sub(TAIL_BYTES);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes)?;
    // A cut first line is dropped, unless it is all there is.
    if from > 0 {
        if let Some(nl) = bytes.iter().position(|b| *b == b'\n') {
            bytes.drain(..=nl);
        }
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.lines().collect();
    let shown = &all[all.len().saturating_sub(lines)..];
    Ok(Some(
        shown
            .iter()
            .map(|l| crate::terminal::visible(l).into_owned())
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

/// The error of `what` (a service or the start hook) of loop `id`, with the tail of its
/// log and where the whole log is.
pub fn failure(ws: &Workspace, id: &str, name: &str, what: &str) -> String {
    let path = log_path(ws, id, name);
    let tail = match tail(&path, ERROR_LINES) {
        Ok(Some(t)) if !t.trim().is_empty() => t,
        Ok(_) => "(its log is empty)".to_string(),
        Err(e) => format!("(its log cannot be read: {e})"),
    };
    let indented: Vec<String> = tail.lines().map(|l| format!("  {l}")).collect();
    format!(
        "{what}; the end of its log:\n{}\nhint: the whole log: git loop logs {id} {name}",
        indented.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_is_bounded_while_it_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("svc.log");
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .unwrap();
        let input = "x".repeat(1000) + "\n";
        let many = input.repeat(100);
        copy_bounded(many.as_bytes(), log, 4096).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.len() <= 4096, "{}", text.len());
        assert!(
            text.starts_with("git-loop: this log passed 4096 bytes"),
            "{}",
            &text[..80]
        );
        // Under the bound, everything is kept as it came.
        let small = dir.path().join("small.log");
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&small)
            .unwrap();
        copy_bounded(&b"ready\n"[..], log, 4096).unwrap();
        assert_eq!(std::fs::read_to_string(&small).unwrap(), "ready\n");
    }

    #[test]
    fn a_tail_is_bounded_escaped_and_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("db.log");
        let mut text = String::new();
        for i in 0..20_000 {
            text.push_str(&format!("line {i}\n"));
        }
        text.push_str("evil \x1b[2Jcleared\n");
        std::fs::write(&log, &text).unwrap();
        let t = tail(&log, 3).unwrap().unwrap();
        assert_eq!(t, "line 19998\nline 19999\nevil \\x1b[2Jcleared");
        let link = dir.path().join("link.log");
        std::os::unix::fs::symlink(&log, &link).unwrap();
        assert!(tail(&link, 3).is_err());
        assert_eq!(tail(&dir.path().join("none.log"), 3).unwrap(), None);
        nix::unistd::mkfifo(&dir.path().join("fifo.log"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(tail(&dir.path().join("fifo.log"), 3).is_err());
    }
}
