//! Work done on the host's behalf in trees a sandbox can write (DESIGN 4.0), which host
//! code never does itself: git there would read what the agent planted as instructions.
//!
//! - [`in_loop`] runs a command in a loop's own sandbox (`git loop run`, no network), for
//!   what reads or commits a loop's repositories (`autocommit`, `review`);
//! - [`jail`] runs a command in a sandbox of its own that sees nothing but the system,
//!   read-only, and one tree bound by descriptor: git in the personal repository, which
//!   belongs to no loop.
//!
//! Both are bounded in time ([`Bound`]): a hook that never returns, or a FIFO git waits on,
//! ends with the task killed and an error that says so, never a host command that hangs
//! (and with it whatever waits for its locks). Their output is captured, bounded.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};

/// How long work on the host's behalf may take before it is killed.
#[derive(Debug, Clone, Copy)]
pub struct Bound(pub Duration);

impl Bound {
    /// Five minutes: a commit of a large tree takes seconds; a task still running after
    /// this is waiting on something that will not come.
    pub const DEFAULT: Bound = Bound(Duration::from_secs(300));
}

/// What a task printed and how it ended.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// stderr as one trimmed line of text, for messages.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_string()
    }
}

/// Most of a task's output kept; the rest is read and dropped, so the task never blocks
/// on a full pipe.
const MAX_OUTPUT: usize = 16 << 20;

fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(mut pipe) = pipe {
            let mut buf = [0u8; 64 << 10];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
        kept
    })
}

/// Waits for `child` within `bound`; past it, TERM (a `git loop run` then ends its sandbox
/// and records why), and KILL a few seconds later.
fn wait_bounded(mut child: Child, bound: Bound, what: &str) -> Result<Output> {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    let mut termed: Option<Instant> = None;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let now = Instant::now();
        match termed {
            None if now.duration_since(started) >= bound.0 => {
                // SAFETY: a plain kill of our own child.
                unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                termed = Some(now);
            }
            Some(at) if now.duration_since(at) >= Duration::from_secs(5) => {
                let _ = child.kill();
            }
            _ => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    };
    let out = Output {
        code: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    if termed.is_some() {
        return Err(super::SandboxError::TaskTimedOut {
            what: what.to_string(),
            seconds: bound.0.as_secs(),
        }
        .into());
    }
    Ok(out)
}

/// Runs `command` in loop `id`'s own sandbox, with no network and in `mode` (`work` to
/// commit, `review` to only read), as `git loop run` does, within `bound`.
pub fn in_loop<S: AsRef<std::ffi::OsStr>>(
    id: &str,
    mode: &str,
    command: &[S],
    bound: Bound,
) -> Result<Output> {
    in_loop_with_input(id, mode, command, Vec::new(), bound)
}

/// [`in_loop`] with `input` on the command's standard input: what may be too large for a
/// command line (a tree's paths) goes there.
pub fn in_loop_with_input<S: AsRef<std::ffi::OsStr>>(
    id: &str,
    mode: &str,
    command: &[S],
    input: Vec<u8>,
    bound: Bound,
) -> Result<Output> {
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "run", "-q", "--color", "never", "--mode", mode, "--net", "none", id, "--",
        ])
        .args(command)
        .stdin(if input.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    feed(&mut child, input);
    wait_bounded(child, bound, &format!("the work in loop {id}'s sandbox"))
}

/// Runs `command` in loop `id`'s own sandbox as `git loop run ID -- COMMAND` does, with
/// the loop's own mode and network (a profile's `check`, which may need what the loop's
/// work needs), within `bound`.
pub fn as_run<S: AsRef<std::ffi::OsStr>>(id: &str, command: &[S], bound: Bound) -> Result<Output> {
    let child = Command::new(std::env::current_exe()?)
        .args(["run", "-q", "--color", "never", id, "--"])
        .args(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    wait_bounded(child, bound, &format!("the work in loop {id}'s sandbox"))
}

/// Writes `input` to `child`'s standard input on a thread of its own (a child that reads
/// slowly, or not at all, never blocks the wait for it), then closes it.
fn feed(child: &mut Child, input: Vec<u8>) {
    if let Some(mut stdin) = child.stdin.take() {
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
    }
}

/// A sandbox of its own for work in one tree a sandbox can write (the personal
/// repository): the system read-only, the tree read-write at `inside`, a fresh `/tmp`
/// (also `$HOME`), no network, no other file of the host, the sandboxes' seccomp filter.
#[derive(Debug, Clone)]
pub struct Jail {
    /// The tree's root, a path of the workspace's layout; bound by the descriptor opened
    /// through [`crate::confined::Tree`].
    pub tree: PathBuf,
    pub inside: PathBuf,
    pub command: Vec<OsString>,
    /// The whole environment (nothing of the host's passes).
    pub env: BTreeMap<String, String>,
    pub bound: Bound,
}

/// Runs a [`Jail`].
pub fn jail(j: &Jail) -> Result<Output> {
    jail_with_input(j, Vec::new())
}

/// [`jail`] with `input` on the command's standard input (see [`in_loop_with_input`]).
pub fn jail_with_input(j: &Jail, input: Vec<u8>) -> Result<Output> {
    let inputs = super::probe::Inputs::read();
    let Some(bwrap) = inputs.bwrap.clone() else {
        return Err(super::SandboxError::NoBwrapForGit.into());
    };
    super::select_backend(crate::values::Backend::Auto, &super::probe::quick(&inputs))?;
    let tree = crate::confined::Tree::open(&j.tree)
        .map_err(|e| Error::failure(format!("cannot open {}", j.tree.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", j.tree.display())))?;
    let tree_fd: OwnedFd = tree
        .path_fd("")
        .map_err(|e| Error::failure(format!("cannot open {}", j.tree.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", j.tree.display())))?;
    let filters = super::seccomp::fds().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot build the seccomp filter",
        )
        .with_source(e)
    })?;
    let host = super::spec::HostView::read();
    let argv = super::bwrap::jail_argv(
        &bwrap.to_string_lossy(),
        &host,
        tree_fd.as_raw_fd(),
        &j.inside,
        &filters.iter().map(AsRawFd::as_raw_fd).collect::<Vec<_>>(),
        &j.command,
    );
    let mut keep: Vec<i32> = filters.iter().map(AsRawFd::as_raw_fd).collect();
    keep.push(tree_fd.as_raw_fd());
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(&j.env)
        .stdin(if input.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: only system calls on data prepared before the fork (no allocation).
    unsafe {
        cmd.pre_exec(move || {
            // Nothing of ours but what bwrap is meant to read reaches it.
            if libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            ) < 0
            {
                return Err(std::io::Error::last_os_error());
            }
            for fd in &keep {
                if libc::fcntl(*fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            format!("cannot start {}", bwrap.display()),
        )
        .with_source(e)
    })?;
    feed(&mut child, input);
    let out = wait_bounded(child, j.bound, &format!("the work in {}", j.tree.display()));
    drop(filters);
    drop(tree_fd);
    out
}

/// The environment of git in a [`Jail`]: no system or global config (the user's filters,
/// hooks and fsmonitor are for the user's own repositories), `$HOME` on the jail's tmpfs.
pub fn git_env(identity: (&str, &str)) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for (k, v) in [
        ("PATH", super::spec::SANDBOX_PATH),
        ("HOME", "/tmp"),
        ("LC_ALL", "C"),
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_CONFIG_GLOBAL", "/dev/null"),
        ("GIT_TERMINAL_PROMPT", "0"),
        ("GIT_AUTHOR_NAME", identity.0),
        ("GIT_AUTHOR_EMAIL", identity.1),
        ("GIT_COMMITTER_NAME", identity.0),
        ("GIT_COMMITTER_EMAIL", identity.1),
    ] {
        env.insert(k.to_string(), v.to_string());
    }
    for k in ["GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "TZ"] {
        if let Ok(v) = std::env::var(k) {
            env.insert(k.to_string(), v);
        }
    }
    env
}

/// `git` with the settings that keep it from running anything the tree could name: no
/// fsmonitor, no hooks (the caller has checked what it commits), no submodules entered.
pub fn git_argv(args: &[&str]) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec!["git".into()];
    for setting in [
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.untrackedCache=false",
        "submodule.recurse=false",
        "diff.ignoreSubmodules=all",
        "commit.gpgSign=false",
    ] {
        argv.push("-c".into());
        argv.push(setting.into());
    }
    argv.extend(args.iter().map(OsString::from));
    argv
}

/// Where a jail's tree is inside it.
pub fn inside(name: &str) -> PathBuf {
    Path::new("/work").join(name)
}
