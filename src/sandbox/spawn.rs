//! The thin spawner of the bwrap backend: starts bwrap for a spec and waits for it.
//!
//! In the child, between fork and exec, in this order:
//! 1. join the run's cgroups and set the rlimits (before any namespace, so the whole
//!    tree is inside from the start);
//! 2. where the spec needs one, enter a new user namespace and map our own uid and gid:
//!    with a `$HOME` overlay also a new mount namespace, and in the `proxy` network mode
//!    a new network namespace, whose loopback it brings up and in which it listens on the
//!    proxy ports, handing the listeners to the host-side proxy. Without either, bwrap
//!    starts from the caller's namespaces, as it would on its own;
//! 3. with an overlay: make every mount private, then mount the loop's `$HOME` overlay
//!    (lower `sandbox-home-skel/`, upper `home/upper`, `volatile`: see [`mount_home`]) on
//!    `home/merged` — visible only in this private namespace, which bwrap inherits and
//!    binds at `$HOME`; with mounts to lay ([`super::bwrap::Laid`]), make each folder
//!    that carries them a shared mount of its own (see [`share`]), in this namespace too,
//!    so that what the [`Layer`] lays there once bwrap has made its own mounts reaches
//!    bwrap's binds of them;
//! 4. mark every inherited descriptor above 2 close-on-exec except the ones bwrap is
//!    meant to read (the seccomp programs), so nothing of `git-loop` leaks inside;
//! 5. where the kernel has Landlock scopes (6.12+), confine the whole tree so it can
//!    neither connect to abstract unix sockets nor signal processes outside it (the
//!    former matters with `--net host`, where the network namespace is the host's);
//! 6. exec bwrap with exactly the spec's environment.
//!
//! Everything the child needs is prepared before the fork (C strings, map contents), so
//! the child only makes system calls: no allocation between fork and exec.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicI32, Ordering};

use super::limits::Applied;
use super::spec::{LandlockScopes, NetNamespace, SandboxSpec};

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("cannot start {bwrap}")]
    Start {
        bwrap: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot wait for the sandbox")]
    Wait(#[source] std::io::Error),
}

/// What the child does before exec, prepared in the parent.
struct ChildPlan {
    procs: Vec<CString>,
    rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// The `$HOME` overlay, where the spec has one.
    overlay: Option<Overlay>,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    keep_fds: Vec<i32>,
    /// With the `proxy` network mode: the channel to the host-side proxy. The child then
    /// makes the sandbox's network namespace itself, brings its loopback up, listens on
    /// the proxy ports and hands the listeners over this channel (see [`proxy_network`]).
    proxy_channel: Option<i32>,
    /// The Landlock scopes, as the kernel's bits (see [`landlock_bits`]).
    landlock: u64,
    /// The mounts laid once bwrap has made its own, in the spec's order (see [`prepare`]
    /// and [`lay`]),
    /// by a process of the child's namespaces ([`Layer`]).
    laid: Vec<LaidChild>,
    /// Their carriers, each once: the child makes each a shared mount of its own (see
    /// [`share`]).
    carriers: Vec<CString>,
}

/// One mount the child lays, prepared in the parent (see [`lay`]).
struct LaidChild {
    /// The folder bwrap binds by path that carries it, and the path below it.
    carrier: CString,
    rel: CString,
    /// The mount's attributes (`MOUNT_ATTR_*`).
    attr: u64,
    /// A descriptor mount: what the host's descriptor holds, which the file or folder
    /// found at `rel` must be. `None` for a bind by path.
    held: Option<((u32, u32), u64)>,
    /// A bind by path: its source, and whether it may be absent.
    source: Option<(CString, bool)>,
    /// Its place is at or below one laid before it on the same carrier: found through that
    /// one's mount, so only once it is laid (see [`prepare`]).
    below_laid: bool,
}

/// Whether the place of `laid[i]` is at or below one laid before it on the same carrier
/// (by components: `.git/config` is below `.git`, `.github` is not), so that it is found
/// only once that one is laid ([`LaidChild::below_laid`]).
fn below_laid(laid: &[(Option<OwnedFd>, super::bwrap::Laid)], i: usize) -> bool {
    let (_, l) = &laid[i];
    laid[..i]
        .iter()
        .any(|(_, e)| e.carrier == l.carrier && l.rel.starts_with(&e.rel))
}

/// The `$HOME` overlay the child mounts on `merged` in its `home/` folder.
struct Overlay {
    home_dir: CString,
    opts: CString,
    /// The same options with `volatile` (see [`mount_home`]), if this overlay takes it.
    volatile_opts: Option<CString>,
}

impl ChildPlan {
    /// Whether the child makes namespaces of its own before bwrap.
    fn unshares(&self) -> libc::c_int {
        let mut flags = 0;
        if self.overlay.is_some() || !self.laid.is_empty() {
            flags |= libc::CLONE_NEWNS;
        }
        if self.proxy_channel.is_some() {
            flags |= libc::CLONE_NEWNET;
        }
        if flags != 0 {
            flags |= libc::CLONE_NEWUSER;
        }
        flags
    }
}

/// How the sandbox ended.
pub struct Ended {
    pub status: ExitStatus,
    /// A hold on the mount namespace the child made (where the `$HOME` overlay is
    /// mounted), taken while bwrap ran; `None` without an overlay. Tearing a mount namespace down waits for an RCU
    /// grace period; held here, that teardown is not part of bwrap's exit, and dropping
    /// this once the sandbox is killed runs it alongside the teardown of the sandbox's own
    /// namespaces, which `run` waits for anyway.
    pub namespace: Option<std::fs::File>,
    /// The signal sent to `git-loop` that ended the run (see [`EndOnSignals`]).
    pub by: Option<EndedBy>,
}

/// A signal to `git-loop` that ended a run, as its handler saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndedBy {
    pub signal: i32,
    /// Who sent it, where the kernel says (a process's pid; none for the kernel's own).
    pub from: Option<i32>,
    /// The parent `git-loop` started under, when the signal came because it ended (its
    /// parent-death signal, or a parent found gone when the run started).
    pub parent_ended: Option<i32>,
}

/// Starts bwrap with `argv` for `spec`, does `meanwhile` while the sandbox starts, and
/// waits for it to end.
#[allow(clippy::too_many_arguments)]
pub fn run(
    spec: &SandboxSpec,
    argv: &[OsString],
    keep: &[OwnedFd],
    inherit: &[i32],
    proxy_channel: Option<&OwnedFd>,
    limits: &Applied,
    workspace_root: &Path,
    secret_env: &[(String, secrecy::SecretString)],
    laid: &[(Option<OwnedFd>, super::bwrap::Laid)],
    layer: Option<OwnedFd>,
    meanwhile: impl FnOnce(),
) -> Result<Ended, SpawnError> {
    let bwrap = argv[0].to_string_lossy().into_owned();
    // bwrap keeps the network namespace in the proxy mode (`--share-net`, see bwrap.rs):
    // that must be the one the child makes, never ours.
    if (spec.netns == NetNamespace::Spawner) != proxy_channel.is_some() {
        return Err(SpawnError::Start {
            bwrap,
            source: std::io::Error::other(
                "the proxy network mode and the proxy's channel go together",
            ),
        });
    }
    // SAFETY: getuid/getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let overlay = spec.home.overlay.then(|| {
        let home_dir = spec.home.merged.parent().unwrap_or(Path::new("/"));
        // The overlay's options name its folders relative to `home/` (the child chdirs
        // there), so no workspace path with a comma or colon can break the option string.
        let lower = relative_to(&spec.home.lower, home_dir, workspace_root);
        let opts = format!("lowerdir={lower},upperdir=upper,workdir=work");
        Overlay {
            home_dir: cstr(home_dir.as_os_str()),
            volatile_opts: Some(
                CString::new(format!("{opts},volatile")).expect("no NUL in overlay options"),
            ),
            opts: CString::new(opts).expect("no NUL in overlay options"),
        }
    });
    let plan = ChildPlan {
        procs: limits.procs.clone(),
        rlimits: limits.rlimits.clone(),
        overlay,
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        // A live session's socketpair end reaches the session's init (bwrap passes on
        // what it inherits).
        keep_fds: keep
            .iter()
            .map(AsRawFd::as_raw_fd)
            .chain(inherit.iter().copied())
            .collect(),
        proxy_channel: proxy_channel.map(AsRawFd::as_raw_fd),
        landlock: landlock_bits(spec.landlock),
        laid: laid
            .iter()
            .enumerate()
            .map(|(i, (fd, l))| {
                let held = match fd {
                    Some(fd) => {
                        Some(
                            identity(fd.as_raw_fd()).map_err(|source| SpawnError::Start {
                                bwrap: bwrap.clone(),
                                source,
                            })?,
                        )
                    }
                    None => None,
                };
                Ok(LaidChild {
                    below_laid: below_laid(laid, i),
                    carrier: cstr(l.carrier.as_os_str()),
                    rel: cstr(l.rel.as_os_str()),
                    attr: libc::MOUNT_ATTR_NOSUID
                        | libc::MOUNT_ATTR_NODEV
                        | if l.rw { 0 } else { libc::MOUNT_ATTR_RDONLY },
                    held,
                    source: l
                        .source
                        .as_ref()
                        .map(|(path, optional)| (cstr(path.as_os_str()), *optional)),
                })
            })
            .collect::<Result<_, SpawnError>>()?,
        carriers: laid.iter().fold(Vec::new(), |mut all, (_, l)| {
            let c = cstr(l.carrier.as_os_str());
            if !all.contains(&c) {
                all.push(c);
            }
            all
        }),
    };
    if !plan.laid.is_empty() && layer.is_none() {
        return Err(SpawnError::Start {
            bwrap,
            source: std::io::Error::other("mounts to lay and no channel to the sandbox's init"),
        });
    }

    // A relative bwrap path would be resolved after the child's chdir: fix it first.
    let program = std::path::absolute(&argv[0]).map_err(|source| SpawnError::Start {
        bwrap: bwrap.clone(),
        source,
    })?;
    let mut env: std::collections::BTreeMap<&str, &str> = spec
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // Vault variables reach bwrap (and through it the sandbox) only as environment: never
    // an argument, which any host user could read in /proc/<pid>/cmdline.
    for (name, value) in secret_env {
        use secrecy::ExposeSecret;
        env.insert(name, value.expose_secret());
    }
    let exec = Exec::new(
        cstr(program.as_os_str()),
        argv.iter().map(|a| cstr(a)).collect(),
        env.into_iter()
            .map(|(k, v)| CString::new(format!("{k}={v}")).expect("no NUL in the environment"))
            .collect(),
    );
    let start_here = StartHere::pin();
    let mask = start_here.as_ref().map(|s| s.mask);
    let own_mounts = spec.home.overlay || !laid.is_empty();
    let signals = EndOnSignals::install();
    let child = exec.spawn(|| {
        if let Some(mask) = &mask {
            StartHere::unpin(mask);
        }
        child_setup(&plan)
    });
    drop(start_here);
    let child = child.map_err(|source| SpawnError::Start {
        bwrap: bwrap.clone(),
        source,
    })?;
    signals.watch(child.id());
    // bwrap has exec'd in the child's namespaces and takes milliseconds to set the
    // sandbox up: taking the hold and starting the layer now costs the run nothing. A
    // bwrap already gone leaves no hold, and the teardown happens as it always would.
    let namespace = own_mounts
        .then(|| std::fs::File::open(format!("/proc/{}/ns/mnt", child.id())).ok())
        .flatten();
    let layer = match layer.filter(|_| !plan.laid.is_empty()) {
        // The layer's end of the channel is the layer's alone once it is forked: should the
        // layer end before it answers, init reads the channel's end and runs nothing, where
        // a copy held here would have it wait for ever.
        Some(end) => match Layer::start(child.id(), namespace.as_ref(), &plan, &end) {
            Ok(layer) => Some(layer),
            Err(source) => {
                // The sandbox's init waits for its mounts, which will not come: it ends
                // once bwrap is gone, having run nothing.
                // SAFETY: a signal to the child this process started and has not reaped.
                unsafe { libc::kill(child.pid, libc::SIGKILL) };
                let _ = child.wait();
                return Err(SpawnError::Start { bwrap, source });
            }
        },
        None => None,
    };
    meanwhile();
    let status = child.wait().map_err(SpawnError::Wait)?;
    if let Some(layer) = layer {
        layer
            .finish()
            .map_err(|source| SpawnError::Start { bwrap, source })?;
    }
    Ok(Ended {
        status,
        namespace,
        by: signals.ended_by(),
    })
}

/// The process that lays the mounts of [`super::bwrap::Laid`] once bwrap has made its
/// own: forked from this one once bwrap has exec'd (it starts while bwrap sets the
/// sandbox up, on no run's critical path), it enters the child's user and mount
/// namespaces (bwrap's outer process stays in them), prepares each mount ([`prepare`]),
/// waits for the sandbox's init to ask on its channel ([`super::init::LAY`]), lays them
/// on their carriers ([`lay`]), which
/// the child made shared mounts (so they reach bwrap's copies of them, its binds at the
/// sandbox's paths, by propagation), makes the carriers private again (nothing mounted
/// there later reaches the sandbox), answers [`super::init::LAID`] and ends. Its exit
/// status is the result: 0 laid, [`NOT_ASKED`] when the channel closed first (bwrap
/// failed before init ran), otherwise the error number of what failed.
///
/// Hand-written from `fork` to `_exit`, as the child's setup is: it is forked from a
/// process with other threads, so it only makes system calls on memory prepared before
/// the fork (no allocation, no lock). Every signal stays blocked in it; it ends with its
/// parent (`PR_SET_PDEATHSIG`) and is killed once bwrap has ended if it has not.
struct Layer {
    pid: libc::pid_t,
}

/// The layer's exit status when init never asked.
const NOT_ASKED: i32 = 200;

impl Layer {
    /// `mnt`: the child's mount namespace where the run holds it already.
    fn start(
        bwrap: u32,
        mnt: Option<&std::fs::File>,
        plan: &ChildPlan,
        end: &OwnedFd,
    ) -> std::io::Result<Layer> {
        let user = std::fs::File::open(format!("/proc/{bwrap}/ns/user"))?;
        let opened;
        let mnt = match mnt {
            Some(mnt) => mnt,
            None => {
                opened = std::fs::File::open(format!("/proc/{bwrap}/ns/mnt"))?;
                &opened
            }
        };
        let mut keep = [user.as_raw_fd(), mnt.as_raw_fd(), end.as_raw_fd()];
        keep.sort_unstable();
        // What the layer prepares while it waits for the word, one entry per mount: made
        // here, since the layer allocates nothing.
        let mut prepared = vec![Prepared::NONE; plan.laid.len()];
        let bwrap_stat = CString::new(format!("/proc/{bwrap}/stat")).expect("no NUL in a path");
        // A test's way to have the layer end before it lays anything (see `failpoint`).
        let gone = crate::failpoint::named("layer:gone");
        // SAFETY: getpid cannot fail.
        let parent = unsafe { libc::getpid() };
        // The child keeps every signal blocked (it inherits the mask); this thread gets its
        // own back once the fork is done.
        let blocked = AllSignalsBlocked::new();
        // SAFETY: the forked child makes only system calls on memory prepared here and
        // `_exit`s.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                if gone {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                let code = match lay_when_asked(
                    parent,
                    &keep,
                    (user.as_raw_fd(), mnt.as_raw_fd()),
                    end.as_raw_fd(),
                    plan,
                    &mut prepared,
                    &bwrap_stat,
                ) {
                    Ok(code) => code,
                    Err(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
                };
                libc::_exit(code);
            }
            let forked = std::io::Error::last_os_error();
            drop(blocked);
            if pid < 0 {
                return Err(forked);
            }
            Ok(Layer { pid })
        }
    }

    /// Once bwrap has ended: the layer's result, the layer killed first if it is still
    /// waiting (init never asked).
    fn finish(self) -> std::io::Result<()> {
        let mut status = 0;
        let mut killed_here = false;
        // SAFETY: waitpid writes the local status; kill signals the layer, this process's
        // child, not yet reaped.
        unsafe {
            if libc::waitpid(self.pid, &mut status, libc::WNOHANG) == 0 {
                libc::kill(self.pid, libc::SIGKILL);
                killed_here = true;
                while libc::waitpid(self.pid, &mut status, 0) < 0 {
                    if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                        return Ok(());
                    }
                }
            }
        }
        if libc::WIFSIGNALED(status) && !killed_here {
            // Killed by another: init found the channel closed and ran nothing.
            return Err(std::io::Error::other(format!(
                "the process laying its mounts was killed ({})",
                super::run::signal_name(libc::WTERMSIG(status))
            )));
        }
        if !libc::WIFEXITED(status) {
            return Ok(());
        }
        match libc::WEXITSTATUS(status) {
            0 | NOT_ASKED => Ok(()),
            code => Err(std::io::Error::from_raw_os_error(code)),
        }
    }
}

/// In the layer (see [`Layer`]): only system calls from here to its `_exit`.
fn lay_when_asked(
    parent: libc::pid_t,
    keep: &[i32; 3],
    (user, mnt): (i32, i32),
    end: i32,
    plan: &ChildPlan,
    prepared: &mut [Prepared],
    bwrap_stat: &std::ffi::CStr,
) -> std::io::Result<i32> {
    // SAFETY: system calls on descriptors this process holds and local buffers.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
        if libc::getppid() != parent {
            return Ok(NOT_ASKED);
        }
        // Nothing of this process's but the three it needs: no copy of another pipe's end
        // held open here.
        let mut from = 3u32;
        for &fd in keep {
            let fd = fd as u32;
            if fd > from {
                libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32);
            }
            from = from.max(fd + 1);
        }
        libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32);
        check(libc::setns(user, libc::CLONE_NEWUSER))?;
        check(libc::setns(mnt, libc::CLONE_NEWNS))?;
        libc::close(user);
        libc::close(mnt);
        // Nothing of this namespace changes until init asks (bwrap works in a copy of it):
        // what can be made of each mount before it is made now, on no run's critical path.
        // A failure is said only if init asks (bwrap may have failed on its own first).
        let ready = prepare(&plan.laid, prepared);
        wait_beside(bwrap_stat);
        let mut word = [0u8; 1];
        let n = loop {
            let n = libc::read(end, word.as_mut_ptr().cast(), 1);
            if n >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n != 1 || word != *super::init::LAY {
            return Ok(NOT_ASKED);
        }
        ready?;
        lay(&plan.laid, prepared)?;
        for carrier in &plan.carriers {
            check(libc::mount(
                c"none".as_ptr(),
                carrier.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
        }
        let laid = super::init::LAID;
        if libc::write(end, laid.as_ptr().cast(), 1) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(0)
}

/// In the child: each carrier of the mounts to lay bound onto itself, recursively, and
/// made a shared mount, whose mounts propagate to its copies: bwrap's copy of the child's
/// namespace holds it as a slave (bwrap makes every mount there one), and so does bwrap's
/// bind of it at its path inside; what [`Layer`] lays on it later reaches that bind.
fn share(carriers: &[CString]) -> std::io::Result<()> {
    for carrier in carriers {
        // SAFETY: plain system calls on NUL-terminated strings prepared before the fork.
        unsafe {
            check(libc::mount(
                carrier.as_ptr(),
                carrier.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                c"none".as_ptr(),
                carrier.as_ptr(),
                std::ptr::null(),
                libc::MS_SHARED,
                std::ptr::null(),
            ))?;
        }
    }
    Ok(())
}

/// bwrap's command line and environment, ready for `execve`, and the start of the child
/// that becomes it.
///
/// Hand-written rather than `std::process::Command`: with a `pre_exec` step (the child's
/// setup above) std forks, which copies this process's page tables and leaves both sides
/// faulting on copy-on-write pages until the exec; without one it would use `posix_spawn`,
/// which cannot run the setup. Here the child is made with `clone(CLONE_VM |
/// CLONE_VFORK)` (nix's `clone`, on a stack of its own): it runs in this process's memory
/// while this thread is suspended, until it execs or exits, as `posix_spawn` does it.
struct Exec {
    program: CString,
    /// Kept for the pointers below.
    _strings: (Vec<CString>, Vec<CString>),
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

/// A started bwrap, reaped by [`Child::wait`].
struct Child {
    pid: libc::pid_t,
}

/// The child's stack: what the setup in [`child_setup`] needs is a few KiB; the rest is
/// never touched (the pages are made as they are first used).
const CHILD_STACK: usize = 256 << 10;

impl Exec {
    fn new(program: CString, args: Vec<CString>, env: Vec<CString>) -> Exec {
        let nul_ended = |v: &[CString]| {
            v.iter()
                .map(|c| c.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect()
        };
        Exec {
            program,
            argv: nul_ended(&args),
            envp: nul_ended(&env),
            _strings: (args, env),
        }
    }

    /// Starts the child: `setup`, then `execve`. Its error, or the exec's, is the
    /// error returned; the child has then been reaped.
    ///
    /// Only memory is shared: the child has its own descriptor table, working folder,
    /// credentials, limits, namespaces and signal dispositions (no `CLONE_FILES`,
    /// `CLONE_FS`, `CLONE_SIGHAND` or `CLONE_THREAD`), so what the setup changes there
    /// (the cgroups joined, rlimits, `unshare`, `chdir`, close-on-exec marks, Landlock,
    /// `no_new_privs`) is the child's alone, as after a fork.
    ///
    /// Between the clone and the exec the child shares this process's memory, so:
    /// - it allocates nothing and takes no lock: `setup` (as `pre_exec` requires) and
    ///   everything here only make system calls on memory prepared before the clone;
    /// - it runs no signal handler of this process: every signal is blocked across the
    ///   clone (the child inherits the mask), the child sets every disposition that is a
    ///   handler back to the default (and `SIGPIPE`, which `main` ignores, as std does),
    ///   and only then unblocks them, just before the exec. A handler run in the child
    ///   would write this process's state (the run's end, [`EndOnSignals`]) as if the
    ///   signal were this process's. Signals for this process that come meanwhile wait,
    ///   blocked, and are delivered when this thread restores its mask; none is lost;
    /// - it shares this thread's `errno` (the thread pointer is the same): it writes it,
    ///   this thread reads nothing of it across the clone, and the child's own error
    ///   comes back through `failed`, written by the child before it exits, read here
    ///   once the clone has returned (the child has then exec'd or exited).
    fn spawn(&self, setup: impl Fn() -> std::io::Result<()>) -> std::io::Result<Child> {
        let failed = AtomicI32::new(0);
        let mut stack = ChildStack::new()?;
        let child = || -> isize {
            let code = (|| -> std::io::Result<()> {
                default_signals();
                setup()?;
                // SAFETY: an empty set, then the mask the exec keeps.
                unsafe {
                    let mut none: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut none);
                    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                    libc::execve(
                        self.program.as_ptr(),
                        self.argv.as_ptr(),
                        self.envp.as_ptr(),
                    );
                }
                Err(std::io::Error::last_os_error())
            })()
            .err()
            .and_then(|e| e.raw_os_error())
            .unwrap_or(libc::EINVAL);
            failed.store(code, Ordering::SeqCst);
            // SAFETY: ends the child alone (its own thread group); nothing of this
            // process's exit handlers runs in it.
            unsafe { libc::_exit(127) }
        };
        let blocked = AllSignalsBlocked::new();
        // SAFETY: the child runs `child` on its own stack in this memory until it execs
        // or exits, with the care listed above; this thread is suspended meanwhile, so
        // `failed`, the strings and the stack outlive it.
        let started = unsafe {
            nix::sched::clone(
                Box::new(child),
                stack.as_mut(),
                nix::sched::CloneFlags::CLONE_VM | nix::sched::CloneFlags::CLONE_VFORK,
                Some(libc::SIGCHLD),
            )
        };
        drop(blocked);
        let pid = started.map_err(std::io::Error::from)?.as_raw();
        match failed.load(Ordering::SeqCst) {
            0 => Ok(Child { pid }),
            code => {
                let _ = (Child { pid }).wait();
                Err(std::io::Error::from_raw_os_error(code))
            }
        }
    }
}

/// Every signal blocked in this thread until dropped, when the mask before is restored:
/// across a clone or fork whose child must run no handler of this process's (it inherits
/// the mask). A child that `_exit`s never drops its copy.
struct AllSignalsBlocked {
    before: libc::sigset_t,
}

impl AllSignalsBlocked {
    fn new() -> AllSignalsBlocked {
        // SAFETY: sigfillset and pthread_sigmask write the local sets they are given.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
            AllSignalsBlocked { before }
        }
    }
}

impl Drop for AllSignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.before, std::ptr::null_mut()) };
    }
}

/// In the child: every signal whose disposition is a handler back to the default, and
/// `SIGPIPE` too; ignored ones stay ignored across the exec, as with std's `Command`.
fn default_signals() {
    // SAFETY: sigaction reads and writes the local structs it is given; numbers the
    // kernel or glibc keep to themselves answer EINVAL and are left.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..libc::SIGRTMAX() + 1 {
            let mut now: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut now) != 0 {
                continue;
            }
            if handled(sig, now.sa_sigaction) {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// Whether the child must set `sig`'s disposition back to the default before it runs
/// anything a signal could interrupt: a handler of this process, or `SIGPIPE`.
fn handled(sig: libc::c_int, disposition: libc::sighandler_t) -> bool {
    sig == libc::SIGPIPE || (disposition != libc::SIG_DFL && disposition != libc::SIG_IGN)
}

/// The child's stack, with a page below it that faults (an overflow stops the child
/// rather than writing this process's memory).
struct ChildStack {
    base: *mut libc::c_void,
    len: usize,
}

impl ChildStack {
    fn new() -> std::io::Result<ChildStack> {
        let guard = 4096;
        let len = CHILD_STACK + guard;
        // SAFETY: a fresh private mapping, its lowest page made inaccessible.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let stack = ChildStack { base, len };
            check(libc::mprotect(base, guard, libc::PROT_NONE))?;
            Ok(stack)
        }
    }

    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping above the guard page is this value's, readable and
        // writable, for as long as it lives.
        unsafe { std::slice::from_raw_parts_mut(self.base.cast::<u8>().add(4096), CHILD_STACK) }
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping this value made.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

impl Child {
    fn id(&self) -> u32 {
        self.pid as u32
    }

    fn wait(&self) -> std::io::Result<ExitStatus> {
        use std::os::unix::process::ExitStatusExt;
        let mut status = 0;
        loop {
            // SAFETY: waitpid writes the local status.
            if unsafe { libc::waitpid(self.pid, &mut status, 0) } >= 0 {
                return Ok(ExitStatus::from_raw(status));
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// The bwrap child starts on the CPU this process is on, which this process leaves to it
/// at once (it waits for the exec). Left to itself, the scheduler puts a new process on
/// the least loaded CPU, and on a busy machine it waited there behind another program's
/// time slice: 2-3 ms of every start with one core busy. The child takes back the whole
/// mask first thing, and this process as soon as the child has exec'd (on drop), so
/// neither bwrap nor the sandbox is pinned. Nothing is pinned where the mask cannot be
/// read or allows one CPU only.
struct StartHere {
    mask: libc::cpu_set_t,
}

impl StartHere {
    fn pin() -> Option<StartHere> {
        // SAFETY: sched_getcpu has no memory effects.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        onto_cpu(cpu).map(|mask| StartHere { mask })
    }

    /// Back to `mask`; also called in the child, where only a system call may run.
    fn unpin(mask: &libc::cpu_set_t) {
        // SAFETY: sched_setaffinity reads the set whose size it is given.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask) };
    }
}

impl Drop for StartHere {
    fn drop(&mut self) {
        StartHere::unpin(&self.mask);
    }
}

/// Moves the calling thread onto `cpu` alone and returns the mask it had, to go back to
/// ([`StartHere::unpin`]); moves nothing (`None`) where the mask cannot be read, allows one
/// CPU only or not `cpu`. System calls on local sets only: the layer calls it between its
/// fork and `_exit`.
fn onto_cpu(cpu: usize) -> Option<libc::cpu_set_t> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: the calls read and write the local sets whose size they are given.
    unsafe {
        let mut mask: libc::cpu_set_t = std::mem::zeroed();
        if cpu >= libc::CPU_SETSIZE as usize
            || libc::sched_getaffinity(0, size, &mut mask) != 0
            || libc::CPU_COUNT(&mask) < 2
            || !libc::CPU_ISSET(cpu, &mask)
        {
            return None;
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        (libc::sched_setaffinity(0, size, &one) == 0).then_some(mask)
    }
}

fn relative_to(target: &Path, from: &Path, root: &Path) -> String {
    // home/ is loops/<id>/home: three levels below the workspace root.
    match target.strip_prefix(root) {
        Ok(rel) if from.starts_with(root) => format!("../../../{}", rel.display()),
        _ => target.display().to_string(),
    }
}

fn cstr(s: &std::ffi::OsStr) -> CString {
    CString::new(s.as_encoded_bytes()).expect("no NUL in paths")
}

fn check(ret: libc::c_int) -> std::io::Result<()> {
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn write_file(path: &[u8], data: &[u8]) -> std::io::Result<()> {
    // SAFETY: `path` is NUL-terminated by the callers; open/write/close on a local fd.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if n < 0 {
            return Err(err);
        }
    }
    Ok(())
}

fn child_setup(plan: &ChildPlan) -> std::io::Result<()> {
    for procs in &plan.procs {
        write_file(procs.as_bytes_with_nul(), b"0")?;
    }
    for (resource, value) in &plan.rlimits {
        let lim = libc::rlimit {
            rlim_cur: *value,
            rlim_max: *value,
        };
        // SAFETY: setrlimit reads the struct we pass.
        check(unsafe { libc::setrlimit(*resource, &lim) })?;
    }
    let unshares = plan.unshares();
    if unshares != 0 {
        // SAFETY: a plain system call.
        check(unsafe { libc::unshare(unshares) })?;
        write_file(b"/proc/self/setgroups\0", b"deny")?;
        write_file(b"/proc/self/uid_map\0", &plan.uid_map)?;
        write_file(b"/proc/self/gid_map\0", &plan.gid_map)?;
    }
    if let Some(channel) = plan.proxy_channel {
        proxy_network(channel)?;
    }
    if plan.unshares() & libc::CLONE_NEWNS != 0 {
        // SAFETY: a plain system call on NUL-terminated strings.
        check(unsafe {
            libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        })?;
    }
    share(&plan.carriers)?;
    if let Some(overlay) = &plan.overlay {
        // SAFETY: chdir with a NUL-terminated string prepared before the fork.
        check(unsafe { libc::chdir(overlay.home_dir.as_ptr()) })?;
        mount_home(overlay)?;
    }
    // SAFETY: plain system calls on data prepared before the fork.
    unsafe {
        // Nothing inherited from our own parent reaches the sandbox...
        check(libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) as libc::c_int)?;
        // ...but the descriptors bwrap is meant to read.
        for fd in &plan.keep_fds {
            check(libc::fcntl(*fd, libc::F_SETFD, 0))?;
        }
        scope_with_landlock(plan.landlock);
        // The parent ignores SIGINT while it waits; the sandbox must not inherit that.
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGQUIT, libc::SIG_DFL);
    }
    Ok(())
}

/// The device and inode of what `fd` holds.
fn identity(fd: i32) -> std::io::Result<((u32, u32), u64)> {
    let st = statx(fd, c"", libc::AT_EMPTY_PATH)?;
    Ok(((st.stx_dev_major, st.stx_dev_minor), st.stx_ino))
}

/// `statx` of `path` from `dir` for its inode (no allocation: the child calls it).
fn statx(dir: i32, path: &std::ffi::CStr, flags: libc::c_int) -> std::io::Result<libc::statx> {
    // SAFETY: statx writes the struct it is given; a zeroed statx is a valid value.
    unsafe {
        let mut st: libc::statx = std::mem::zeroed();
        check(libc::statx(
            dir,
            path.as_ptr(),
            flags,
            libc::STATX_INO,
            &mut st,
        ))?;
        Ok(st)
    }
}

/// What stands at `l.rel` below its carrier, opened without following a link (`O_PATH`).
/// For a descriptor mount it must be what the host's descriptor holds: the descriptor
/// itself cannot be bound here, in a mount namespace other than the one it was opened in
/// (the kernel refuses to clone a mount of another namespace; bwrap's `--bind-fd` resolves
/// and compares the same way), and anything else there (another file put in its place
/// since the host opened it) fails the run (`ESTALE`).
fn open_place(l: &LaidChild, carrier: i32) -> std::io::Result<i32> {
    // SAFETY: system calls on NUL-terminated strings prepared before the fork and on a
    // local, correctly laid out struct; the descriptor opened here is closed here or
    // returned.
    unsafe {
        let mut how: libc::open_how = std::mem::zeroed();
        how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        let fd = libc::syscall(
            libc::SYS_openat2,
            carrier,
            l.rel.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        ) as libc::c_int;
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        match (l.held, identity(fd)) {
            (None, Ok(_)) => Ok(fd),
            (Some(held), Ok(found)) if held == found => Ok(fd),
            (_, found) => {
                libc::close(fd);
                Err(found
                    .err()
                    .unwrap_or_else(|| std::io::Error::from_raw_os_error(libc::ESTALE)))
            }
        }
    }
}

/// The carrier folder of the laid mounts being handled, opened once for all of its own
/// (they come grouped by carrier); closed when dropped.
struct Carrier<'a> {
    open: Option<(&'a std::ffi::CStr, i32)>,
}

impl<'a> Carrier<'a> {
    fn of(&mut self, l: &'a LaidChild) -> std::io::Result<i32> {
        match self.open {
            Some((name, fd)) if name == l.carrier.as_c_str() => return Ok(fd),
            _ => self.close(),
        }
        // SAFETY: open of a NUL-terminated string prepared before the fork.
        let fd = unsafe {
            libc::open(
                l.carrier.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        check(fd)?;
        self.open = Some((l.carrier.as_c_str(), fd));
        Ok(fd)
    }

    fn close(&mut self) {
        if let Some((_, fd)) = self.open.take() {
            // SAFETY: closes a descriptor this value opened.
            unsafe { libc::close(fd) };
        }
    }
}

impl Drop for Carrier<'_> {
    fn drop(&mut self) {
        self.close();
    }
}

/// A bind by path's source, opened as bwrap's `mount` would find it (links followed);
/// `Ok(None)` where an optional one is absent.
fn open_source(l: &LaidChild) -> std::io::Result<Option<i32>> {
    let Some((source, optional)) = &l.source else {
        return Ok(None);
    };
    // SAFETY: open of a NUL-terminated string prepared before the fork.
    let fd = unsafe { libc::open(source.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    match check(fd) {
        Ok(()) => Ok(Some(fd)),
        Err(e) if *optional && e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// In the layer, before it waits for init's word: moved to the CPU bwrap's outer process
/// runs on (`bwrap_stat`, its `/proc/PID/stat`), every CPU allowed again at once.
///
/// The word wakes the layer where it last ran, or on init's own CPU, where it waits until
/// init blocks for the answer: the mounts would be laid after init has set itself up
/// instead of while it does. bwrap's outer process forks the sandbox's init onto another
/// CPU than its own (the idlest) and then waits for it, so its CPU is the one likely idle
/// when init asks. A guess about the scheduler, never a constraint: where the CPU cannot
/// be read or set, nothing moves, and nothing stays pinned.
fn wait_beside(bwrap_stat: &std::ffi::CStr) {
    // SAFETY: open, read and close on a NUL-terminated path prepared before the fork and a
    // local buffer.
    let cpu = unsafe {
        let fd = libc::open(bwrap_stat.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let mut buf = [0u8; 1024];
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        usize::try_from(n).ok().and_then(|n| stat_cpu(&buf[..n]))
    };
    // On that CPU and off it again at once: the wake-up finds the layer where it last ran.
    if let Some(all) = cpu.and_then(onto_cpu) {
        StartHere::unpin(&all);
    }
}

/// The CPU a process last ran on: field 39 of its `/proc/PID/stat`.
fn stat_cpu(stat: &[u8]) -> Option<usize> {
    let field = crate::fsutil::proc_stat_field(stat, 39)?;
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// A laid mount as [`prepare`] leaves it: its detached tree, and the place it goes to
/// where that could be found before anything was laid.
#[derive(Clone, Copy)]
struct Prepared {
    /// The tree `open_tree` cloned, its attributes set; -1 where it is cloned only once
    /// the mounts before it are laid; [`Prepared::ABSENT`] for an optional source that is
    /// absent, as `--ro-bind-try` leaves it.
    tree: i32,
    /// The place, or -1 where it is found only once the mounts before it are laid.
    at: i32,
}

impl Prepared {
    const NONE: Prepared = Prepared { tree: -1, at: -1 };
    const ABSENT: i32 = -2;
}

/// The first half of laying the mounts of [`super::bwrap::Laid`], in the [`Layer`] (in the
/// child's mount namespace) before the sandbox's init asks for them: what can be made of
/// each before any is laid. A bind by path's source (opened as bwrap's `mount` would find
/// it) is cloned into a detached tree; a descriptor mount's source is its place, the file
/// or folder found at its path below the carrier without a link and compared with the
/// host's descriptor (`ESTALE` otherwise), cloned the same way ([`clone_tree`]); and the
/// place is opened. A mount at or below one laid before it ([`LaidChild::below_laid`])
/// has its place found through that one's mount, so only its bind-by-path source is
/// cloned here. Nothing in the namespace changes: a detached tree is in no namespace until
/// it is moved. Descriptors are left to the layer's `_exit`.
fn prepare(laid: &[LaidChild], prepared: &mut [Prepared]) -> std::io::Result<()> {
    let mut carrier = Carrier { open: None };
    for (l, p) in laid.iter().zip(prepared.iter_mut()) {
        let source = open_source(l)?;
        if l.source.is_some() && source.is_none() {
            p.tree = Prepared::ABSENT;
            continue;
        }
        if !l.below_laid {
            p.at = carrier.of(l).and_then(|c| open_place(l, c))?;
        }
        if let Some(from) = source.or((p.at >= 0).then_some(p.at)) {
            p.tree = clone_tree(from, l.attr)?;
        }
        if let Some(fd) = source {
            // SAFETY: closes this function's descriptor.
            unsafe { libc::close(fd) };
        }
    }
    Ok(())
}

/// A detached, recursive clone of the mount at `from` (`open_tree`), with the attributes
/// the spec gives (`nosuid`, `nodev`, read-only), as bwrap would bind it.
fn clone_tree(from: i32, attr: u64) -> std::io::Result<i32> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    // SAFETY: system calls on a descriptor the caller holds and a local struct.
    unsafe {
        let tree = libc::syscall(
            libc::SYS_open_tree,
            from,
            c"".as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_EMPTY_PATH as libc::c_uint
                | libc::AT_RECURSIVE as libc::c_uint,
        ) as libc::c_int;
        check(tree)?;
        let mut set: libc::mount_attr = std::mem::zeroed();
        set.attr_set = attr;
        // A clone of a shared mount is a peer of it: this one, moved onto its carrier,
        // would have what is laid on it later propagate to the carrier as well (a second
        // mount, hidden below). Private, it joins a peer group of its own as it is moved
        // onto the shared carrier, whose copies alone are its slaves.
        set.propagation = libc::MS_PRIVATE;
        check(libc::syscall(
            libc::SYS_mount_setattr,
            tree,
            c"".as_ptr(),
            (libc::AT_EMPTY_PATH | libc::AT_RECURSIVE) as libc::c_uint,
            &set as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        ) as libc::c_int)?;
        Ok(tree)
    }
}

/// The second half, once init has asked ([`prepare`] the first): each mount moved onto
/// its place, in the spec's order. Where two meet, the later is below the earlier
/// ([`super::bwrap::laid`]), so its place is found (without a link, and compared, as
/// [`prepare`] finds one) through the earlier one's mount and it is laid on that mount
/// (laid the other way round, the earlier one's recursive copy would carry the later one
/// and leave its first mount hidden below); a descriptor mount found so is cloned from
/// there. The sandbox's init checks each where the sandbox sees it (init.rs,
/// `wait_for_laid`) before the command starts. Descriptors are left to the layer's
/// `_exit`, after its answer.
fn lay(laid: &[LaidChild], prepared: &[Prepared]) -> std::io::Result<()> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
    let mut carrier = Carrier { open: None };
    for (l, p) in laid.iter().zip(prepared) {
        if p.tree == Prepared::ABSENT {
            continue;
        }
        let at = match p.at {
            -1 => carrier.of(l).and_then(|c| open_place(l, c))?,
            at => at,
        };
        let tree = match p.tree {
            -1 => clone_tree(at, l.attr)?,
            tree => tree,
        };
        // SAFETY: a system call on descriptors this process holds.
        check(unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                tree,
                c"".as_ptr(),
                at,
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            ) as libc::c_int
        })?;
    }
    Ok(())
}

/// Whether the child can lay descriptor mounts itself ([`prepare`], [`lay`]): the kernel has the mount
/// API's `open_tree`, `mount_setattr` (5.12) and `move_mount`, and bwrap is not setuid (a
/// setuid bwrap is where a user namespace of the child's own cannot be made).
pub fn can_lay(bwrap: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: mount_setattr on no descriptor touches nothing: EBADF where the kernel
    // has it, ENOSYS where not.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            c"".as_ptr(),
            0,
            std::ptr::null::<libc::mount_attr>(),
            0,
        )
    };
    let has_api = ret == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS);
    has_api && std::fs::metadata(bwrap).is_ok_and(|m| m.permissions().mode() & 0o4000 == 0)
}

/// In the child, in the sandbox's new network namespace: brings the loopback up (which
/// gives it 127.0.0.1 and ::1 and nothing else), listens on the proxy's HTTP and SOCKS5
/// ports on 127.0.0.1, and hands both listeners to the host-side proxy over `channel`.
/// The listeners are ready before bwrap starts, so connections the command makes before
/// the proxy's first `accept` wait in their backlog; the child's copies close at exec.
fn proxy_network(channel: i32) -> std::io::Result<()> {
    use crate::egress::relay::{HANDOVER, HTTP_PORT, SOCKS_PORT};
    // SAFETY: system calls on local, correctly laid out structs; every descriptor made
    // here is close-on-exec.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(s)?;
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        let up = check(libc::ioctl(s, libc::SIOCGIFFLAGS, &mut req)).and_then(|()| {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            check(libc::ioctl(s, libc::SIOCSIFFLAGS, &req))
        });
        libc::close(s);
        up?;
        // Every connection in this namespace runs over its loopback, where pacing only
        // costs: the host's default may be BBR, whose pacing caps a loopback transfer at
        // a fraction of what the loopback moves (the proxy's own hop included). Reno
        // does not pace. A kernel that refuses leaves the default, which works as well.
        let _ = write_file(b"/proc/sys/net/ipv4/tcp_congestion_control\0", b"reno");
        let mut listeners = [0i32; 2];
        for (slot, port) in listeners.iter_mut().zip([HTTP_PORT, SOCKS_PORT]) {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            check(fd)?;
            *slot = fd;
            let addr = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: port.to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
                },
                sin_zero: [0; 8],
            };
            check(libc::bind(
                fd,
                (&addr as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            ))?;
            check(libc::listen(fd, 1024))?;
        }
        // One message: the handover byte with both listeners.
        let mut byte = *HANDOVER;
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 8];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        let payload = std::mem::size_of_val(&listeners) as libc::c_uint;
        msg.msg_controllen = libc::CMSG_SPACE(payload) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(payload) as _;
        std::ptr::copy_nonoverlapping(
            listeners.as_ptr(),
            libc::CMSG_DATA(cmsg).cast::<i32>(),
            listeners.len(),
        );
        let sent = libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL);
        if sent != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// In the child, in `home/`: mounts the loop's `$HOME` overlay on `merged`.
///
/// `volatile` where the kernel has it (5.10+): the overlay is then not synced when its
/// last mount goes, which happens as the sandbox's pid 1 exits, while `run` waits for the
/// sandbox to be gone. A sync there costs a journal commit and a disk flush on every run
/// (about 1 ms here), and after a run that wrote much to `$HOME`, the whole write-out. So
/// `$HOME` behaves like the loop's other folders, whose writes the kernel's writeback takes
/// to disk in its own time (fsync inside `$HOME` does not force it either). A volatile
/// overlay leaves `work/work/incompat/volatile` behind, and refuses to mount over it until
/// it is removed: its upper layer is a plain folder tree (no index, no redirects, no
/// metacopy in a user namespace), so it is removed here before each mount.
fn mount_home(overlay: &Overlay) -> std::io::Result<()> {
    let mount = |opts: &CString| {
        // SAFETY: mount with NUL-terminated strings prepared before the fork.
        check(unsafe {
            libc::mount(
                c"overlay".as_ptr(),
                c"merged".as_ptr(),
                c"overlay".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                opts.as_ptr().cast(),
            )
        })
    };
    // SAFETY: unlink/rmdir of fixed relative paths; a missing one is no error here.
    unsafe {
        libc::unlink(c"work/work/incompat/volatile/dirty".as_ptr());
        libc::rmdir(c"work/work/incompat/volatile".as_ptr());
        libc::rmdir(c"work/work/incompat".as_ptr());
    }
    match &overlay.volatile_opts {
        // An older kernel does not know the option.
        Some(volatile) => mount(volatile).or_else(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                mount(&overlay.opts)
            } else {
                Err(e)
            }
        }),
        None => mount(&overlay.opts),
    }
}

/// The kernel's bits for the spec's Landlock scopes (`LANDLOCK_SCOPE_*`, ABI 6).
fn landlock_bits(scopes: LandlockScopes) -> u64 {
    const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1;
    const SCOPE_SIGNAL: u64 = 2;
    let mut bits = 0;
    if scopes.abstract_unix_sockets {
        bits |= SCOPE_ABSTRACT_UNIX_SOCKET;
    }
    if scopes.signals {
        bits |= SCOPE_SIGNAL;
    }
    bits
}

/// Confines this process tree with the Landlock `scoped` bits (see [`LandlockScopes`]):
/// no connect to abstract unix sockets created outside it, no signals to processes
/// outside it. Best effort: an older kernel returns an error and the rest of the sandbox
/// stands as it is (abstract sockets are per network namespace, so only `--net host`
/// depends on this).
fn scope_with_landlock(scoped: u64) {
    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
        handled_access_net: u64,
        scoped: u64,
    }
    const SYS_LANDLOCK_CREATE_RULESET: libc::c_long = 444;
    const SYS_LANDLOCK_RESTRICT_SELF: libc::c_long = 446;
    if scoped == 0 {
        return;
    }
    let attr = RulesetAttr {
        handled_access_fs: 0,
        handled_access_net: 0,
        scoped,
    };
    // SAFETY: raw system calls with a pointer to a live, correctly laid out struct; the
    // returned descriptor is closed here. no_new_privs is what bwrap sets anyway.
    unsafe {
        let fd = libc::syscall(
            SYS_LANDLOCK_CREATE_RULESET,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        );
        if fd < 0 {
            return;
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 {
            libc::syscall(SYS_LANDLOCK_RESTRICT_SELF, fd as libc::c_int, 0u32);
        }
        libc::close(fd as libc::c_int);
    }
}

/// The parent this process started under (see [`remember_parent`]); 0 if not noted.
static STARTED_UNDER: AtomicI32 = AtomicI32::new(0);

/// Notes the parent process at start: a parent that dies before a run arms
/// `PR_SET_PDEATHSIG` is then still noticed (the process has been re-parented by then).
pub fn remember_parent() {
    // SAFETY: getppid cannot fail.
    STARTED_UNDER.store(unsafe { libc::getppid() }, Ordering::Relaxed);
}

/// The run's bwrap, for the signal handler; 0 before it starts.
static SANDBOX_PID: AtomicI32 = AtomicI32::new(0);
/// The signal that ended the run, 0 while none did.
static ENDED_BY: AtomicI32 = AtomicI32::new(0);
/// Who sent [`ENDED_BY`] (`si_pid`), 0 for the kernel or nobody known.
static SENT_BY: AtomicI32 = AtomicI32::new(0);
/// The parent the run started under, for the handler.
static PARENT: AtomicI32 = AtomicI32::new(0);
/// [`PARENT`], once the run ended because it did; 0 otherwise.
static PARENT_ENDED: AtomicI32 = AtomicI32::new(0);

/// Ends the running sandbox now, as a signal to `git-loop` would (a run's time limit);
/// nothing happens while none runs.
pub fn end_sandbox() {
    let pid = SANDBOX_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: a plain system call.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The signals that end a run when they are sent to `git-loop` itself.
const ENDING_SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP];

/// While a sandbox runs, a signal to `git-loop` ends the sandbox, and `git-loop` stays to
/// import and record what happened: TERM and HUP always (HUP is also what the kernel sends
/// when whatever started `git-loop` dies, through `PR_SET_PDEATHSIG`: a `git` front-end
/// killed with SIGKILL takes the run with it), INT and QUIT when someone sent them to
/// this process. INT and QUIT from the terminal (Ctrl-C) are for the program in the
/// sandbox, as with system(3): the terminal sends them to the whole foreground process
/// group, the sandbox's processes included, or to a shell inside that runs its own job
/// control.
struct EndOnSignals {
    old: Vec<(libc::c_int, libc::sigaction)>,
}

extern "C" fn end_on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    if matches!(sig, libc::SIGINT | libc::SIGQUIT) && code == libc::SI_KERNEL {
        return;
    }
    if ENDED_BY
        .compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        // SAFETY: as above; si_pid reads the siginfo the kernel filled in.
        SENT_BY.store(unsafe { (*info).si_pid() }, Ordering::SeqCst);
        // The parent-death signal comes once the parent is gone and this process has a
        // new one: a HUP with the parent still there is someone else's.
        let parent = PARENT.load(Ordering::SeqCst);
        // SAFETY: getppid is async-signal-safe and cannot fail.
        if sig == libc::SIGHUP && parent > 0 && unsafe { libc::getppid() } != parent {
            PARENT_ENDED.store(parent, Ordering::SeqCst);
        }
    }
    let pid = SANDBOX_PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe. bwrap's death ends the sandbox (its pid 1
        // has bwrap as its parent-death signal's parent, and the pid namespace goes with it).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

impl EndOnSignals {
    fn install() -> Self {
        for cell in [&ENDED_BY, &SENT_BY, &PARENT_ENDED] {
            cell.store(0, Ordering::SeqCst);
        }
        let mut old = Vec::new();
        // SAFETY: installing a handler that only touches atomics and calls kill(2); the
        // previous dispositions are kept to be restored.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = end_on_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            for sig in ENDING_SIGNALS {
                let mut previous: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut previous) == 0 {
                    old.push((sig, previous));
                }
            }
            // Whatever started this process dying must end the run: checked after the
            // prctl, so a parent that died just before is not missed.
            let parent = match STARTED_UNDER.load(Ordering::Relaxed) {
                0 => libc::getppid(),
                noted => noted,
            };
            PARENT.store(parent, Ordering::SeqCst);
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGHUP as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != parent
                && ENDED_BY
                    .compare_exchange(0, libc::SIGHUP, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            {
                PARENT_ENDED.store(parent, Ordering::SeqCst);
            }
        }
        EndOnSignals { old }
    }

    /// Hands the sandbox's pid to the handler; a signal that came before is acted on now.
    fn watch(&self, pid: u32) {
        SANDBOX_PID.store(pid as i32, Ordering::SeqCst);
        if ENDED_BY.load(Ordering::SeqCst) != 0 {
            // SAFETY: a plain system call.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }

    /// The signal that ended the run, if one did.
    fn ended_by(&self) -> Option<EndedBy> {
        let nonzero = |cell: &AtomicI32| Some(cell.load(Ordering::SeqCst)).filter(|v| *v > 0);
        Some(EndedBy {
            signal: nonzero(&ENDED_BY)?,
            from: nonzero(&SENT_BY),
            parent_ended: nonzero(&PARENT_ENDED),
        })
    }
}

impl Drop for EndOnSignals {
    fn drop(&mut self) {
        SANDBOX_PID.store(0, Ordering::SeqCst);
        // SAFETY: restores the dispositions saved in install(); the import and the event
        // that follow the run are not cut short by a parent that dies now.
        unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, 0, 0, 0, 0);
            for (sig, previous) in &self.old {
                libc::sigaction(*sig, previous, std::ptr::null_mut());
            }
        }
    }
}

/// `doctor`'s deep check: mount an overlay in a new user namespace and start bwrap with
/// the sandbox's namespace flags, exactly as a run does, on throwaway folders.
pub fn trial(bwrap: &Path, scratch: &Path) -> Result<(), String> {
    for d in ["skel", "home/upper", "home/work", "home/merged"] {
        std::fs::create_dir_all(scratch.join(d))
            .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    }
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let plan = ChildPlan {
        procs: Vec::new(),
        rlimits: Vec::new(),
        overlay: Some(Overlay {
            home_dir: cstr(scratch.join("home").as_os_str()),
            opts: CString::new("lowerdir=../skel,upperdir=upper,workdir=work").expect("no NUL"),
            volatile_opts: None,
        }),
        uid_map: format!("{uid} {uid} 1\n").into_bytes(),
        gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        keep_fds: Vec::new(),
        proxy_channel: None,
        landlock: landlock_bits(LandlockScopes::ALL),
        laid: Vec::new(),
        carriers: Vec::new(),
    };
    let merged = scratch.join("home/merged");
    let mut cmd = Command::new(bwrap);
    cmd.args([
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ])
    .args(["--ro-bind", "/usr", "/usr"])
    .args([
        "--symlink",
        "usr/bin",
        "/bin",
        "--symlink",
        "usr/lib",
        "/lib",
        "--symlink",
        "usr/lib64",
        "/lib64",
    ])
    .args(["--proc", "/proc", "--dev", "/dev"])
    .arg("--bind")
    .arg(&merged)
    .args(["/home/trial", "--", "/usr/bin/touch", "/home/trial/ok"])
    .env_clear()
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped());
    // SAFETY: as in `run`: only system calls on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || child_setup(&plan));
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {}: {e}", bwrap.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    if !scratch.join("home/upper/ok").exists() {
        return Err("the overlay's upper layer did not receive the write".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(overlay: bool, proxy: bool) -> ChildPlan {
        ChildPlan {
            procs: Vec::new(),
            rlimits: Vec::new(),
            overlay: overlay.then(|| Overlay {
                home_dir: CString::new("/ws/loops/x/home").unwrap(),
                opts: CString::new(
                    "lowerdir=../../../sandbox-home-skel,upperdir=upper,workdir=work",
                )
                .unwrap(),
                volatile_opts: None,
            }),
            uid_map: Vec::new(),
            gid_map: Vec::new(),
            keep_fds: Vec::new(),
            proxy_channel: proxy.then_some(7),
            landlock: 0,
            laid: Vec::new(),
            carriers: Vec::new(),
        }
    }

    fn exec(program: &str, args: &[&str], env: &[&str]) -> Exec {
        let c = |s: &&str| CString::new(*s).unwrap();
        Exec::new(
            CString::new(program).unwrap(),
            args.iter().map(c).collect(),
            env.iter().map(c).collect(),
        )
    }

    #[test]
    fn the_child_execs_with_exactly_its_arguments_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = format!("echo \"$0 $1 $ONLY\" > {}; exit 7", out.display());
        let e = exec(
            "/bin/sh",
            &["/bin/sh", "-c", &script, "zero", "one"],
            &["ONLY=this"],
        );
        let status = e.spawn(|| Ok(())).unwrap().wait().unwrap();
        assert_eq!(status.code(), Some(7));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "zero one this\n");
    }

    #[test]
    fn a_failing_setup_or_exec_is_the_error_and_the_child_is_reaped() {
        let e = exec("/bin/true", &["true"], &[]);
        let err = e
            .spawn(|| Err(std::io::Error::from_raw_os_error(libc::EPERM)))
            .err()
            .unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
        let e = exec("/nonexistent/bwrap", &["bwrap"], &[]);
        let err = e.spawn(|| Ok(())).err().unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
        // Both children were reaped: none is left to wait for.
        // SAFETY: waitpid for any child of this process, without blocking.
        let mut status = 0;
        let left = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
        assert!(left <= 0, "an unreaped child: {left}");
    }

    #[test]
    fn only_handlers_and_sigpipe_go_back_to_the_default() {
        let handler = end_on_signal as *const () as libc::sighandler_t;
        assert!(handled(libc::SIGTERM, handler));
        assert!(handled(libc::SIGPIPE, libc::SIG_IGN));
        assert!(!handled(libc::SIGHUP, libc::SIG_IGN));
        assert!(!handled(libc::SIGTERM, libc::SIG_DFL));
    }

    #[test]
    fn mounts_to_lay_make_a_mount_namespace_of_the_childs_own() {
        let mut p = plan(false, false);
        p.laid.push(LaidChild {
            carrier: CString::new("/ws/loops/x/workdir").unwrap(),
            rel: CString::new(".vscode").unwrap(),
            attr: libc::MOUNT_ATTR_RDONLY,
            held: Some(((0, 0), 0)),
            source: None,
            below_laid: false,
        });
        assert_eq!(p.unshares(), libc::CLONE_NEWNS | libc::CLONE_NEWUSER);
    }

    #[test]
    fn the_block_of_every_signal_ends_with_the_guard() {
        // The thread's mask, as the guard finds and leaves it.
        let mask = || {
            // SAFETY: pthread_sigmask writes the local set it is given.
            unsafe {
                let mut now: libc::sigset_t = std::mem::zeroed();
                libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut now);
                now
            }
        };
        // SAFETY: sigismember reads the set it is given.
        let blocked = |set: &libc::sigset_t, sig| unsafe { libc::sigismember(set, sig) == 1 };
        // On a thread of its own, whose mask nothing else in the test binary touches.
        std::thread::spawn(move || {
            let before = mask();
            assert!(!blocked(&before, libc::SIGTERM));
            let guard = AllSignalsBlocked::new();
            let during = mask();
            assert!(blocked(&during, libc::SIGTERM) && blocked(&during, libc::SIGCHLD));
            drop(guard);
            let after = mask();
            for sig in 1..libc::SIGRTMAX() + 1 {
                assert_eq!(blocked(&after, sig), blocked(&before, sig), "signal {sig}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_cpu_of_a_process_is_read_past_its_name() {
        let stat = std::fs::read(format!("/proc/{}/stat", std::process::id())).unwrap();
        let cpu = stat_cpu(&stat).unwrap();
        assert!(cpu < libc::CPU_SETSIZE as usize);
        // A name with spaces and a parenthesis does not move the count.
        let odd = b"12 (a b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 7 0";
        assert_eq!(stat_cpu(odd), Some(7));
        assert_eq!(stat_cpu(b"12 (short) S 1 2"), None);
    }

    /// `onto_cpu` moves a thread onto one allowed CPU and gives back the mask it had; a CPU
    /// outside the mask moves nothing. In a thread of its own, which it leaves as it found.
    #[test]
    fn a_thread_moved_onto_one_cpu_gets_its_mask_back() {
        std::thread::spawn(|| {
            let size = std::mem::size_of::<libc::cpu_set_t>();
            let mask = || {
                // SAFETY: reads into a local set of the size it is given.
                unsafe {
                    let mut m: libc::cpu_set_t = std::mem::zeroed();
                    assert_eq!(libc::sched_getaffinity(0, size, &mut m), 0);
                    m
                }
            };
            let before = mask();
            let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                // SAFETY: reads a local set.
                .filter(|c| unsafe { libc::CPU_ISSET(*c, &before) })
                .collect();
            let outside = (0..libc::CPU_SETSIZE as usize).find(|c| !allowed.contains(c));
            if let Some(outside) = outside {
                assert!(onto_cpu(outside).is_none());
                assert!(mask() == before, "a CPU outside the mask moved the thread");
            }
            assert!(onto_cpu(libc::CPU_SETSIZE as usize).is_none());
            let last = *allowed.last().expect("some CPU is allowed");
            match onto_cpu(last) {
                // One CPU allowed: nothing to move.
                None => assert_eq!(allowed.len(), 1),
                Some(had) => {
                    assert!(had == before);
                    let now = mask();
                    // SAFETY: reads a local set.
                    assert_eq!(unsafe { libc::CPU_COUNT(&now) }, 1);
                    assert!(unsafe { libc::CPU_ISSET(last, &now) });
                    StartHere::unpin(&had);
                    assert!(mask() == before);
                }
            }
            // A thread allowed one CPU only is not moved, not even onto that CPU.
            let first = allowed[0];
            // SAFETY: an empty set is all zeroes.
            let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            // SAFETY: writes and reads local sets of the size they are given.
            unsafe {
                libc::CPU_SET(first, &mut one);
                assert_eq!(libc::sched_setaffinity(0, size, &one), 0);
            }
            assert!(onto_cpu(first).is_none());
            assert!(mask() == one);
            // Allowed two CPUs of three or more: a third one is not taken, even where the
            // kernel would allow the move (a machine of two CPUs cannot show this).
            if allowed.len() >= 3 {
                // SAFETY: an empty set is all zeroes.
                let mut two: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                // SAFETY: as above.
                unsafe {
                    libc::CPU_SET(allowed[0], &mut two);
                    libc::CPU_SET(allowed[1], &mut two);
                    assert_eq!(libc::sched_setaffinity(0, size, &two), 0);
                }
                assert!(onto_cpu(allowed[2]).is_none());
                assert!(mask() == two);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_place_below_one_laid_before_it_is_found_after_that_one() {
        let laid = |carrier: &str, rel: &str| {
            (
                None,
                super::super::bwrap::Laid {
                    inside: std::path::PathBuf::from("/x").join(rel),
                    rw: false,
                    carrier: std::path::PathBuf::from(carrier),
                    rel: std::path::PathBuf::from(rel),
                    source: None,
                },
            )
        };
        let all = [
            laid("/ws/loops/x", "workdir/.git"),
            laid("/ws/loops/x", "workdir/.git/config"),
            laid("/ws/loops/x", "workdir/.github"),
            laid("/ws/context", "workdir/.git/hooks"),
            laid("/ws/loops/x", "workdir/.git/hooks"),
            laid("/ws/loops/x", "workdir"),
        ];
        let below: Vec<bool> = (0..all.len()).map(|i| below_laid(&all, i)).collect();
        // `.git/config` below `.git`; `.github` only shares its letters; the same path on
        // another carrier is no other's; a folder above ones laid before it is not below.
        assert_eq!(below, [false, true, false, false, true, false]);
    }

    #[test]
    fn the_specs_landlock_scopes_become_the_kernels_bits() {
        assert_eq!(landlock_bits(LandlockScopes::ALL), 1 | 2);
        let only = |abstract_unix_sockets, signals| {
            landlock_bits(LandlockScopes {
                abstract_unix_sockets,
                signals,
            })
        };
        assert_eq!(only(true, false), 1);
        assert_eq!(only(false, true), 2);
        assert_eq!(only(false, false), 0);
    }

    #[test]
    fn the_child_makes_only_the_namespaces_the_spec_needs() {
        // Neither an overlay nor the proxy: bwrap starts from the caller's namespaces.
        assert_eq!(plan(false, false).unshares(), 0);
        assert_eq!(
            plan(true, false).unshares(),
            libc::CLONE_NEWNS | libc::CLONE_NEWUSER
        );
        assert_eq!(
            plan(false, true).unshares(),
            libc::CLONE_NEWNET | libc::CLONE_NEWUSER
        );
        assert_eq!(
            plan(true, true).unshares(),
            libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWUSER
        );
    }

    #[test]
    fn the_overlays_lower_layer_is_named_relative_to_home() {
        let root = Path::new("/ws");
        assert_eq!(
            relative_to(
                Path::new("/ws/sandbox-home-skel"),
                Path::new("/ws/loops/x/home"),
                root
            ),
            "../../../sandbox-home-skel"
        );
        // Outside the workspace: the path as it is.
        assert_eq!(
            relative_to(
                Path::new("/elsewhere/skel"),
                Path::new("/ws/loops/x/home"),
                root
            ),
            "/elsewhere/skel"
        );
    }
}
