//! `[filesystem] deny_create`: names (`*.pem`, `.env*`, `id_*`) refused when a process
//! inside makes them, wherever it makes them, by a seccomp user-notification supervisor in
//! the sandbox's pid 1 (`git-loop __init`, see init.rs); and every filesystem refusal an
//! event, seen by the same supervisor.
//!
//! Names of the built-in list (fspolicy.rs) not in the working tree when the run starts
//! (`.envrc`, `.bashrc`) are refused in their folder only ([`Watch::places`]): the
//! folder a call names is opened and known by its device and inode, whatever path
//! reaches it ([`Supervisor::placed`]); only a name cheaply matching one of them costs that.
//!
//! Refusals as events. The kernel refuses a write to a read-only place (the system's
//! folders, the origin's store, `.git/config`, a `deny_write` cover) without telling
//! anyone, and a filter never sees a call's result. So where the kernel has the
//! supervisor, every run's filter also sends it the opens whose flags may write
//! (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`: the filter reads the flags argument, so
//! a read-only open never leaves the kernel) and the calls that change a file
//! ([`changing_calls`]). init does each for the caller, as it does a creation, and what
//! the kernel answers init is what the caller gets and what is reported
//! ([`Supervisor::kernel_refused`]): nothing is judged anew, the kernel's checks are the
//! whole policy, and the caller cannot make the report differ from what was done. The
//! host names the rule from its own record of the view (refusals.rs) and keeps at most
//! 200 per run, then one line with how many more.
//!
//! Pinned folders. A folder above a covered path must not be renamed away with its cover
//! and made again without it. Bound onto itself it cannot be, but then it is a mount of
//! its own and every move into or out of it fails with EXDEV (`git mv`). Since every
//! rename comes here, the supervisor refuses renaming a pinned folder instead (EBUSY, as
//! its mount point did), knowing it by path and by device and inode, and renames by the
//! folders it held open while judging ([`Supervisor::rename_pinned`]).
//!
//! Reads of `deny_read` paths. A filter cannot tell which path an open names (the path is
//! behind a pointer), so it cannot send only the opens of denied paths. What else was
//! weighed: a watch (inotify, fanotify) on the covers sees only opens that succeed, and a
//! cover must make the open fail; fanotify's permission events, which could fail it and
//! report it, need `CAP_SYS_ADMIN` on the host, which git-loop does not have; a cover
//! that opens (an empty file, watched) would report, but a denied file would then read as
//! empty rather than fail, which a program takes for content. For the same reason a
//! covered folder is no empty folder but one no one may list or look into (mode 000 on a
//! read-only tmpfs: EACCES, where an empty listing would have `git add -A` record its
//! files as deleted). So in a run whose rules deny reading, and only there, every open
//! goes to the supervisor, and where a folder is covered so do the calls that look a path
//! up ([`looking_calls`]: `stat`, `access`, `readlink`, `getxattr`, `chdir`, `execve`); a refused
//! read (`EACCES` on a covered file, on a covered folder or a name in it) is reported as
//! `filesystem-read`, once per call and path a run (git looks again at each command);
//! BENCHMARKS.md has what that costs.
//!
//! How the pieces fit:
//!
//! - [`program`] is a classic BPF filter whose action for the calls that make a name
//!   (`open`/`openat` with `O_CREAT`, `creat`, `mkdir*`, `mknod*`, `rename*`, `link*`,
//!   `symlink*`) is `SECCOMP_RET_USER_NOTIF`, and `ALLOW` for everything else. It is
//!   hand-assembled (a few dozen instructions) because seccompiler has no notify action.
//!   `openat2` needs no rule here: the base filter (seccomp.rs) fails it with ENOSYS, and
//!   the kernel applies the most restrictive action of all filters (ERRNO before NOTIF).
//! - init forks the command; the child, between fork and exec, installs [`program`] with
//!   `SECCOMP_FILTER_FLAG_NEW_LISTENER` ([`install_and_send`]) and hands the listener to
//!   init over a socketpair, then execs: the command and everything it starts run under
//!   the filter from their first instruction; init itself does not (it must make the
//!   names it allows). That code is hand-written with libc: it runs in a forked child,
//!   where only system calls on memory prepared before the fork are sound.
//! - init's [`serve`] answers each notification. It reads the caller's path arguments once,
//!   from `/proc/TID/mem`, and checks that the notification is still alive
//!   (`SECCOMP_IOCTL_NOTIF_ID_VALID`) after reading, so the pid it read was the caller's.
//!   It then judges the final component of each name the call makes ([`refused`]) and
//!   either refuses (EPERM, and one line on the report descriptor for the host's
//!   `events.jsonl`) or makes the name *itself*, from the very bytes it judged, and hands
//!   the result back: the file descriptor with `SECCOMP_IOCTL_NOTIF_ADDFD` (`open`), or the
//!   return value. It never answers `CONTINUE`: the kernel would read the path again from
//!   the caller's memory, which another thread (or a shared mapping, or another process
//!   writing `/proc/PID/mem`) can change after the decision. Doing the call on the
//!   caller's behalf leaves no such gap, and init has the caller's credentials, mount
//!   namespace, root, seccomp filters and Landlock domain, so it can do nothing the caller
//!   could not — except through its own `/proc/self`, which is why the rules below exist.
//! - Fail closed: if init's supervisor ends, init aborts (and with pid 1 the whole sandbox
//!   ends); if the listener is closed while the command runs, every notifying call fails
//!   with ENOSYS (the kernel's rule for a filter whose listener is gone).
//! - A caller that made itself non-dumpable (ssh-agent, gpg-agent) fails the ptrace check
//!   that opening its `/proc/TID/mem`, `cwd` and `fd/N` makes. init keeps `CAP_SYS_PTRACE`
//!   permitted only and raises it in this thread around exactly those opens, where they
//!   failed without it (the path is the caller's own entry, nothing after it:
//!   [`caps::tracing_if_refused`], `Caller::open_own`, which then checks the call is still
//!   pending, so the pid was the caller's), so such a caller is read, judged and acted for
//!   as any other, and what init then does for it runs with no effective capability.
//!   Where init holds none (a setuid bwrap, see caps.rs), such a caller's judged calls are
//!   refused (`not dumpable, ...`, [`Supervisor::unreadable`]) and its other calls left to
//!   the kernel, unreported. Paths through its own `/proc/self/cwd/...` or `/root/...`
//!   are opened by init as itself (the capability is never raised for a path the caller
//!   chose), so they fail for such a caller where a name is judged, and are left to the
//!   kernel where none is.
//!
//! What init does on a caller's behalf, so that the result is the one the kernel would
//! have given the caller:
//!
//! - paths are resolved against the caller's root (the same as init's: `chroot` is
//!   refused inside) and its working folder or `dirfd` (`/proc/TID/cwd`, `/proc/TID/fd/N`);
//! - the names that mean "the calling process" in the caller's view (`/dev/stdin`,
//!   `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`, `/proc/thread-self/fd/N`)
//!   are read as the caller's; any other path through `/proc/self` would be init's, so what
//!   init opens must not be on procfs, pipefs or the anonymous-inode file system (init's
//!   own listener, report pipe and memory are there) unless it is one of those forms;
//! - a descriptor is never opened again for more than it gives: one open for reading only
//!   (a file handed to the command, `< notes.txt`, outside its view) is refused for
//!   writing or `O_TRUNC` by those forms (EACCES, an event), as the kernel checks only the
//!   file's mode there; init's own standard input is /dev/null once the command runs, so
//!   the paths that reach init's descriptors (`/proc/1/fd/0`, a link to `/proc/self/fd/0`)
//!   find nothing to write;
//! - `open` with `O_CREAT` first opens without it (an existing file, following links as
//!   the caller asked); only where nothing is there does it create, with `O_EXCL`, so the
//!   name created is exactly the final component judged (a dangling link at the end is
//!   followed by hand, its target's name judged in turn);
//! - the caller's umask applies (read from `/proc/TID/status`);
//! - an existing FIFO (opened without `O_NONBLOCK`, so its open waits for the other end)
//!   is opened in a thread of its own, so that wait does not stop every other call.
//!
//! - what init would open for the caller through its own `/proc` (a `/proc` file reached
//!   by `/proc/self`, which is init's there) and `/dev/tty` (the caller's terminal, which
//!   may not be init's) are left to the kernel (`CONTINUE`), but only where the call makes
//!   no name, so no rule is judged on a path the kernel reads again.
//!
//! What the kernel refuses unreported, because init cannot do the call with the caller's
//! rights and no more (it never acts through its own `/proc/self`):
//!
//! - a file of `/proc` that is pid 1's own or another process's, reached by a path
//!   (`/proc/1/mem`, `/proc/1/comm`, a link to `/proc/self/...`, which is init's there),
//!   and a pipe, socket or anonymous inode reached so: init could only open or change it
//!   as itself, so the kernel does it for the caller (`CONTINUE`) and its refusal
//!   (`EACCES` opening `/proc/1/mem` for writing, `EPERM` on `chmod /proc/1/comm`) is not
//!   seen. Where a name is judged, such an `O_CREAT` open is refused by init instead, with
//!   an event. A file of the caller's own process or of none (`/proc/self/...` named so,
//!   `/proc/sys/...`, read-only) is changed by init, and opened by it first: a refusal
//!   there is init's answer and reported (`/proc/self/environ` for writing: `EACCES`;
//!   `/proc/sys/...`: `EROFS`); one it may open is opened again by the kernel for the
//!   caller (`CONTINUE`, so that a file of procfs is the caller's own as it would be),
//!   which cannot refuse what the same credentials were just given on the caller's own
//!   file;
//! - `/dev/tty`, and a terminal reopened through the caller's own descriptor: the only
//!   failure there is `ENXIO` (no controlling terminal), no refusal of a rule;
//! - a refusal by `write` itself after an open that succeeded (`/proc/self/attr/current`
//!   `EINVAL`, `/proc/self/uid_map` `EPERM`): a call on an open descriptor is not sent;
//! - the calls of a process whose memory init cannot read (non-dumpable, where init
//!   holds no `CAP_SYS_PTRACE`: a setuid bwrap) where no rule judges them;
//! - a lookup given `AT_EMPTY_PATH` and a path (the filter passes that form as the
//!   `fstat` it usually is), and one whose path the caller changes between init's look
//!   and the kernel's: refused by the kernel all the same.
//!
//! Not judged: the name a Unix socket's `bind` makes (its address is the caller's socket's,
//! which init cannot bind for it; a socket file carries no content).

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::caps;
use super::fspolicy::component_matches;
use super::refusals::{Refusal, MAX_REPORTED};

/// The final component of `path`: what a call that makes a name there makes. Trailing
/// `/` are ignored (`mkdir("key.pem/")` makes `key.pem`).
pub fn final_name(path: &[u8]) -> &[u8] {
    let mut end = path.len();
    while end > 0 && path[end - 1] == b'/' {
        end -= 1;
    }
    let start = path[..end]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |i| i + 1);
    &path[start..end]
}

/// The supervisor's decision: the pattern that refuses making `path` (its final
/// component), if any. `.` and `..` and the root make no new name.
pub fn refused<'a>(patterns: &'a [String], path: &[u8]) -> Option<&'a str> {
    let name = final_name(path);
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    patterns
        .iter()
        .find(|p| component_matches(p.as_bytes(), name))
        .map(String::as_str)
}

/// Why a `deny_create` pattern is not one: it names one component (`*.pem`, not
/// `certs/*.pem`), never empty, `.` or `..`.
pub fn check_name_pattern(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("an empty name".into());
    }
    if p.contains('\0') {
        return Err(format!("{p:?} has a NUL byte"));
    }
    if p.contains('/') {
        return Err(format!(
            "{p:?} has a '/': deny_create names a file's name (\"*.pem\"), refused in every folder"
        ));
    }
    if p == "." || p == ".." {
        return Err(format!("{p:?} is not a name a file can have"));
    }
    Ok(())
}

/// Whether this kernel has what the supervisor needs: the notify action, and
/// `SECCOMP_ADDFD_FLAG_SEND` (Linux 5.14), `None` if so, else why not.
pub fn unavailable() -> Option<String> {
    let action: u32 = libc::SECCOMP_RET_USER_NOTIF;
    // SAFETY: SECCOMP_GET_ACTION_AVAIL reads the u32 it is pointed at.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    if r != 0 {
        return Some(format!(
            "this kernel has no seccomp user notification ({})",
            std::io::Error::last_os_error()
        ));
    }
    too_old(&running_release())
}

/// Why a kernel of this release (`uname -r`) cannot run the supervisor, `None` if it can.
fn too_old(release: &str) -> Option<String> {
    if kernel_version(release) < (5, 14) {
        return Some(format!(
            "Linux {release} cannot hand a file to a process whose call it answers (SECCOMP_ADDFD_FLAG_SEND needs 5.14)"
        ));
    }
    None
}

/// The (major, minor) version of a kernel release (`6.1.0-28-amd64`); (0, 0) if it names
/// none.
fn kernel_version(release: &str) -> (u32, u32) {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// Whether a process whose call the supervisor has received waits for the answer
/// killable only (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, Linux 5.19): no other signal
/// can then interrupt the call between the file the supervisor installs in it and the
/// answer, so the two can be separate steps (see [`send`]). The price: a call that blocks
/// while the supervisor makes it (opening a FIFO no one reads yet) holds the caller's
/// other signals until it returns; a fatal one still ends it at once. Asked once per
/// process.
pub fn killable_wait() -> bool {
    static KILLABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KILLABLE.get_or_init(|| kernel_version(&running_release()) >= (5, 19))
}

/// The running kernel's release (`uname -r`), empty if it cannot be read.
fn running_release() -> String {
    nix::sys::utsname::uname()
        .map(|u| u.release().to_string_lossy().into_owned())
        .unwrap_or_default()
}

// Classic BPF, as the kernel's uapi spells it (linux/filter.h, linux/bpf_common.h).
// BPF_LD | BPF_W | BPF_ABS (BPF_LD and BPF_W are 0).
const LD_W_ABS: u16 = 0x20;
// BPF_JMP (5) with BPF_JEQ (0x10), BPF_JGE (0x30), BPF_JSET (0x40); BPF_K is 0.
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
/// `struct seccomp_data`: nr, arch, instruction pointer, then the six arguments.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
fn off_arg_low(i: u8) -> u32 {
    // The low 32 bits of argument i, on a little-endian machine (every one built for).
    16 + 8 * i as u32
}
/// x32 calls on x86_64 carry this bit; refused outright (ENOSYS) so that no second
/// numbering of the same calls passes by.
const X32_BIT: u32 = 0x4000_0000;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The calls that make a name and always go to the supervisor.
pub fn naming_calls() -> Vec<(&'static str, i64)> {
    #[allow(unused_mut)]
    let mut v = vec![
        ("mkdirat", libc::SYS_mkdirat),
        ("mknodat", libc::SYS_mknodat),
        ("renameat", libc::SYS_renameat),
        ("renameat2", libc::SYS_renameat2),
        ("linkat", libc::SYS_linkat),
        ("symlinkat", libc::SYS_symlinkat),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        ("creat", libc::SYS_creat),
        ("mkdir", libc::SYS_mkdir),
        ("mknod", libc::SYS_mknod),
        ("rename", libc::SYS_rename),
        ("link", libc::SYS_link),
        ("symlink", libc::SYS_symlink),
    ]);
    v
}

/// The calls that change a file without making a name, sent to the supervisor when it
/// watches writes: `unlink`, `rmdir`, `truncate`, `chmod`, `chown`, the same on a
/// descriptor (`fchmod`, `fchown`: done on the file it is open on, reached through the
/// caller's /proc), the extended attributes (`setxattr`, `removexattr` and their `l`/`f`
/// forms) and a file's times (`utimensat`, `utimes`, `utime`, `futimesat`), each done by
/// init as the caller would have, so a refusal (`EROFS`, `EACCES`, `EPERM`) is seen and
/// reported. `ftruncate` is not sent: it needs a descriptor open for writing, whose open
/// was sent, and a read-only place gives none.
///
/// A time refused is reported only where a per-path rule covers the file, once per
/// file a run ([`Watch::covers`]): git sets the time of every object it finds in the
/// origin's read-only store on each commit (`freshen`), expects the refusal and writes
/// its own copy, so reporting what a read-only mount refuses would fill the log (and
/// its bound) with ordinary work; a time carries no content. `setxattrat` and
/// `removexattrat` (Linux 6.13) are sent as their path forms are: a path from a folder
/// descriptor (`AT_SYMLINK_NOFOLLOW` as `lsetxattr`), or the descriptor itself
/// (`AT_EMPTY_PATH`), the value behind `struct xattr_args` read once ([`xattr_args`]).
pub fn changing_calls() -> Vec<(&'static str, i64)> {
    #[allow(unused_mut)]
    let mut v = vec![
        ("unlinkat", libc::SYS_unlinkat),
        ("truncate", libc::SYS_truncate),
        ("fchmodat", libc::SYS_fchmodat),
        ("fchmodat2", SYS_FCHMODAT2),
        ("fchownat", libc::SYS_fchownat),
        ("fchmod", libc::SYS_fchmod),
        ("fchown", libc::SYS_fchown),
        ("setxattr", libc::SYS_setxattr),
        ("lsetxattr", libc::SYS_lsetxattr),
        ("fsetxattr", libc::SYS_fsetxattr),
        ("removexattr", libc::SYS_removexattr),
        ("lremovexattr", libc::SYS_lremovexattr),
        ("fremovexattr", libc::SYS_fremovexattr),
        ("setxattrat", SYS_SETXATTRAT),
        ("removexattrat", SYS_REMOVEXATTRAT),
        ("utimensat", libc::SYS_utimensat),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        ("unlink", libc::SYS_unlink),
        ("rmdir", libc::SYS_rmdir),
        ("chmod", libc::SYS_chmod),
        ("chown", libc::SYS_chown),
        ("lchown", libc::SYS_lchown),
        ("utime", libc::SYS_utime),
        ("utimes", libc::SYS_utimes),
        ("futimesat", libc::SYS_futimesat),
    ]);
    v
}

/// fchmodat2 (Linux 6.6; the same number on every architecture), not in every libc
/// crate release.
const SYS_FCHMODAT2: i64 = 452;
/// setxattrat and removexattrat (Linux 6.13; the same numbers on every architecture).
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;
/// getxattrat and listxattrat (Linux 6.13), which only read.
const SYS_GETXATTRAT: i64 = 464;
const SYS_LISTXATTRAT: i64 = 465;

/// The size of `struct xattr_args` as Linux 6.13 first defined it (`value`, `size`,
/// `flags`): `setxattrat` refuses a smaller one (EINVAL).
const XATTR_ARGS_SIZE: u64 = 16;

/// What `setxattrat`'s `struct xattr_args` says, from its `usize` bytes as read from the
/// caller: (the value's address, its size, the `XATTR_CREATE`/`XATTR_REPLACE` flags).
/// Refused as the kernel refuses it (`copy_struct_from_user`): fewer than 16 bytes is
/// EINVAL, more than a page or a byte past the known fields that is not zero is E2BIG.
fn xattr_args(raw: &[u8]) -> Result<(u64, u64, i32), i32> {
    if (raw.len() as u64) < XATTR_ARGS_SIZE {
        return Err(libc::EINVAL);
    }
    if raw.len() > 4096 || raw[XATTR_ARGS_SIZE as usize..].iter().any(|&b| b != 0) {
        return Err(libc::E2BIG);
    }
    let value = u64::from_ne_bytes(raw[0..8].try_into().expect("8 bytes"));
    let size = u32::from_ne_bytes(raw[8..12].try_into().expect("4 bytes"));
    let flags = u32::from_ne_bytes(raw[12..16].try_into().expect("4 bytes"));
    Ok((value, u64::from(size), flags as i32))
}

/// The calls that open a path, with the argument holding their flags.
pub fn opening_calls() -> Vec<(&'static str, i64, u8)> {
    #[allow(unused_mut)]
    let mut v = vec![("openat", libc::SYS_openat, 2)];
    #[cfg(target_arch = "x86_64")]
    v.push(("open", libc::SYS_open, 1));
    v
}

/// The calls that look a path up without opening or changing it (running a program
/// looks its file up), sent to the supervisor
/// where a `deny_read` rule covers a folder (see [`Watch::read_dirs`]): a lookup refused
/// there is reported as a read. With the argument holding their `AT_*` flags where a
/// call on a descriptor itself (`AT_EMPTY_PATH`: glibc's `fstat`) is not sent, as it
/// looks nothing up; the same flag on a path only loses the report of a refusal (the
/// kernel still refuses it).
pub fn looking_calls() -> Vec<(&'static str, i64, Option<u8>)> {
    #[allow(unused_mut)]
    let mut v = vec![
        ("newfstatat", libc::SYS_newfstatat, Some(3)),
        ("statx", libc::SYS_statx, Some(2)),
        ("faccessat", libc::SYS_faccessat, None),
        ("faccessat2", libc::SYS_faccessat2, None),
        ("readlinkat", libc::SYS_readlinkat, None),
        ("getxattr", libc::SYS_getxattr, None),
        ("lgetxattr", libc::SYS_lgetxattr, None),
        ("listxattr", libc::SYS_listxattr, None),
        ("llistxattr", libc::SYS_llistxattr, None),
        ("getxattrat", SYS_GETXATTRAT, None),
        ("listxattrat", SYS_LISTXATTRAT, None),
        ("chdir", libc::SYS_chdir, None),
        ("statfs", libc::SYS_statfs, None),
        ("execve", libc::SYS_execve, None),
        ("execveat", libc::SYS_execveat, None),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        ("stat", libc::SYS_stat, None),
        ("lstat", libc::SYS_lstat, None),
        ("access", libc::SYS_access, None),
        ("readlink", libc::SYS_readlink, None),
    ]);
    v
}

/// What the supervisor is sent: the calls that make a name always; the rest by what it
/// watches (see [`Watch`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    /// Opens that may write, and the calls that change a file ([`changing_calls`]).
    pub writes: bool,
    /// Every open.
    pub reads: bool,
    /// The calls that look a path up ([`looking_calls`]).
    pub lookups: bool,
}

/// The open flags that make an open the supervisor's.
fn open_mask(sent: Sent) -> Option<u32> {
    if sent.reads {
        return None; // every open
    }
    let mut mask = libc::O_CREAT as u32;
    if sent.writes {
        mask |= (libc::O_WRONLY | libc::O_RDWR | libc::O_TRUNC) as u32;
    }
    Some(mask)
}

/// The filter: every call `sent` names to the supervisor, everything else allowed;
/// another architecture's calls kill the process (as the base filter's do), x32's fail.
pub fn program(sent: Sent) -> Vec<libc::sock_filter> {
    let ins = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    let mut always: Vec<i64> = naming_calls().into_iter().map(|(_, nr)| nr).collect();
    if sent.writes || sent.reads {
        always.extend(changing_calls().into_iter().map(|(_, nr)| nr));
    }
    let opening = opening_calls();
    let mask = open_mask(sent);
    if mask.is_none() {
        always.extend(opening.iter().map(|(_, nr, _)| *nr));
    }
    // (call, the argument holding its flags, the flags looked at, whether one of them set
    // sends the call (else: whether none is)).
    let mut flagged: Vec<(i64, u8, u32, bool)> = match mask {
        Some(mask) => opening
            .iter()
            .map(|(_, nr, arg)| (*nr, *arg, mask, true))
            .collect(),
        None => Vec::new(),
    };
    // Lookups: sent unless they name a descriptor itself (`AT_EMPTY_PATH`).
    if sent.lookups {
        for (_, nr, arg) in looking_calls() {
            match arg {
                Some(arg) => flagged.push((nr, arg, libc::AT_EMPTY_PATH as u32, false)),
                None => always.push(nr),
            }
        }
    }
    // Layout: header (5), one JEQ per call always sent, three per flagged call, then the
    // returns ALLOW, NOTIFY, ENOSYS; jumps are relative to the next instruction.
    let header = 5usize;
    let body = always.len() + 3 * flagged.len();
    let allow = header + body;
    let notify = allow + 1;
    let enosys = allow + 2;
    let rel = |from: usize, to: usize| u8::try_from(to - from - 1).expect("a short program");
    let mut p = vec![
        ins(LD_W_ABS, 0, 0, OFF_ARCH),
        ins(JEQ_K, 1, 0, AUDIT_ARCH),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, OFF_NR),
    ];
    p.push(ins(JGE_K, rel(4, enosys), 0, X32_BIT));
    for nr in &always {
        let at = p.len();
        p.push(ins(JEQ_K, rel(at, notify), 0, *nr as u32));
    }
    for &(nr, arg, flags, set_sends) in &flagged {
        let at = p.len();
        let (set, unset) = if set_sends {
            (notify, allow)
        } else {
            (allow, notify)
        };
        p.push(ins(JEQ_K, 0, 2, nr as u32));
        p.push(ins(LD_W_ABS, 0, 0, off_arg_low(arg)));
        p.push(ins(JSET_K, rel(at + 2, set), rel(at + 2, unset), flags));
    }
    debug_assert_eq!(p.len(), allow);
    p.push(ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    p.push(ins(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF));
    p.push(ins(
        RET_K,
        0,
        0,
        libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
    ));
    p
}

/// Between fork and exec, in the command's process: installs `prog` with a new listener
/// (its calls waiting killable only once the supervisor has them when `killable`, which
/// is [`killable_wait`], asked before the fork) and sends the listener over `sock`, then
/// closes both. Returns 0, or the errno.
///
/// # Safety
/// Only system calls on memory the caller prepared; sound in a forked child.
pub unsafe fn install_and_send(prog: &libc::sock_fprog, sock: RawFd, killable: bool) -> i32 {
    // bwrap set no_new_privs already; asking again costs nothing and makes the filter's
    // installation independent of that.
    libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    let mut flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if killable {
        flags |= libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    }
    let listener = libc::syscall(
        libc::SYS_seccomp,
        libc::SECCOMP_SET_MODE_FILTER,
        flags,
        prog as *const libc::sock_fprog,
    ) as i32;
    if listener < 0 {
        return *libc::__errno_location();
    }
    // One descriptor in an SCM_RIGHTS message, laid out in a buffer on the stack.
    #[repr(C, align(8))]
    struct Control([u8; 64]);
    let mut control = Control([0; 64]);
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), listener);
    let sent = libc::sendmsg(sock, &msg, 0);
    let errno = *libc::__errno_location();
    libc::close(listener);
    libc::close(sock);
    if sent != 1 {
        return errno;
    }
    0
}

/// init's side: the listener the command's process sent over `sock`.
pub fn receive_listener(sock: &OwnedFd) -> std::io::Result<OwnedFd> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!(RawFd);
    let msg = recvmsg::<()>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    for c in msg.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(fds) = c {
            if let Some(&fd) = fds.first() {
                // SAFETY: the kernel just made this descriptor ours.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    Err(std::io::Error::other("no listener was sent"))
}

/// What the supervisor watches besides `deny_create`, as the host asks it (see the
/// module's header): writes wherever the kernel has the supervisor, reads where a rule
/// denies reading.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Watch {
    pub writes: bool,
    pub reads: bool,
    /// The folders `deny_read` covers, as the sandbox names them: an empty tmpfs no one
    /// may list or look into (`Mount::Unreadable`), so listing one, opening a file in
    /// it or looking one up there (`stat`, `access`, `chdir`: [`looking_calls`]) is
    /// refused by the kernel (EACCES) and reported as a read.
    pub read_dirs: Vec<std::path::PathBuf>,
    /// The folders above a covered path, with the rule that covers it: renamed by
    /// nothing (as a mount point would not be), so none can be moved away with what is
    /// covered below it and made again without it (`fspolicy::Deny::Pin`).
    pub pins: Vec<(std::path::PathBuf, String)>,
    /// Names refused when made, in every folder, with the rule that refuses each (the
    /// target of a link of the built-in list that points at nothing, `fspolicy::Deny::Made`).
    pub names: Vec<(String, String)>,
    /// Names refused when made in one folder, as the sandbox names the name's place, with
    /// the rule that refuses each: a file of the built-in list not in the working tree
    /// when the run starts (`fspolicy::Deny::Absent`). Judged by the folder's device and
    /// inode, whatever path reaches it.
    pub places: Vec<(std::path::PathBuf, String)>,
    /// The roots of the trees a person works in with git (the working tree, notes, the
    /// personal tree), as the sandbox names them: the name `.git` (a folder, a file, a
    /// link) is refused when made at or below one ([`crate::sandbox::fspolicy::NESTED_GIT`]),
    /// judged by the path of the folder it is made in as init's view names that folder
    /// (the sandbox's own, whatever path the caller took to reach it).
    pub repos: Vec<std::path::PathBuf>,
    /// The paths a per-path rule covers (`deny_write`, `deny_read`, the built-in list),
    /// as the sandbox names them: a time change refused at or below one is reported
    /// (see [`changing_calls`]).
    pub covers: Vec<std::path::PathBuf>,
}

impl Watch {
    pub fn sent(&self) -> Sent {
        Sent {
            writes: self.writes,
            reads: self.reads,
            lookups: self.reads && !self.read_dirs.is_empty(),
        }
    }
}

/// What the supervisor knows: the patterns, and where refusals are reported.
pub struct Supervisor {
    pub listener: OwnedFd,
    pub patterns: Vec<String>,
    pub watch: Watch,
    /// Whether the call being answered was reported already (by its rule).
    reported_now: bool,
    /// Whether the caller of the call being answered is non-dumpable (its memory opened
    /// only with CAP_SYS_PTRACE).
    non_dumpable: bool,
    /// The name of the call being answered (`chmod`), for its report.
    answering: &'static str,
    /// The pinned folders as files (device, inode) with their rules, found when the
    /// supervisor starts: a pinned folder is known by what it is, whatever path reaches it.
    pin_ids: Vec<((u64, u64), String)>,
    /// [`Watch::places`] as (the folder as a file (device, inode), the name, the rule),
    /// found when the supervisor starts (a place whose folder is not there then is not
    /// kept: `fspolicy::cover` names only places in folders that are).
    place_ids: Vec<((u64, u64), Vec<u8>, String)>,
    /// A pipe to the host (non-blocking: a full pipe loses lines, never stops a call).
    pub report: Option<std::fs::File>,
    /// Lines written so far; at most [`MAX_REPORTED`].
    reported: usize,
    /// The files whose refused time change was reported (once each).
    times_reported: std::collections::HashSet<String>,
    /// The reads refused in a `deny_read` cover that were reported, as (call, path): once
    /// each a run, so that a tool going over the tree again and again (git refreshing its
    /// index at each command) neither fills the log nor uses up its bound.
    reads_reported: std::collections::HashSet<(&'static str, String)>,
    /// The ids of the sandbox's mounts (`/proc/self/mountinfo`: init's mount namespace is
    /// the sandbox's), read when first needed and again when an id is not among them.
    mounts: Vec<u64>,
}

/// What the supervisor answers a notification with.
enum Answer {
    Value(i64),
    Errno(i32),
    /// A file opened for the caller, installed in it as the call's result.
    Fd {
        fd: OwnedFd,
        cloexec: bool,
    },
    /// The caller is gone (or the notification is): nothing to answer.
    Gone,
    /// Answered from a thread of its own.
    Deferred,
    /// Done by the kernel as the caller asked: only for a call on which the supervisor
    /// decides nothing (no name made, so no `deny_create`), where the kernel's own checks
    /// are the whole policy and only the report of a refusal is lost.
    Continue,
}

/// The largest path read from a caller's memory.
const PATH_MAX: usize = 4096;
/// Links followed by hand at the end of an `O_CREAT` path, as the kernel's bound.
const MAX_LINKS: usize = 40;

/// One notification's caller.
struct Caller {
    /// Listener and notification id.
    listener: RawFd,
    id: u64,
    /// The calling thread, as init's /proc names it.
    tid: u32,
}

impl Caller {
    /// Whether the notification is still pending (its caller alive, waiting).
    fn valid(&self) -> bool {
        let mut id = self.id;
        // SAFETY: NOTIF_ID_VALID reads the u64 it is pointed at.
        unsafe {
            libc::ioctl(
                self.listener,
                libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _,
                &mut id as *mut u64,
            ) == 0
        }
    }

    fn proc(&self, rest: &str) -> CString {
        CString::new(format!("/proc/{}/{rest}", self.tid)).expect("no NUL")
    }

    /// The caller's own /proc entry `rest` (`fd/N`), opened `O_PATH` ([`Self::open_own`]).
    fn entry(&self, rest: &str) -> Result<OwnedFd, i32> {
        self.open_own(&self.proc(rest), 0)
    }

    /// The caller's own /proc entry `link` (`/proc/TID/cwd`, `/proc/TGID/fd/N`: one magic
    /// link, nothing after it) opened `O_PATH`, as the caller may always open its own.
    /// Where the caller is non-dumpable that takes CAP_SYS_PTRACE
    /// ([`caps::tracing_if_refused`]), and the entry is then checked to be still the
    /// caller's: its call still pending after the open, so its pid named no other process
    /// meanwhile (the capability must never open another process's entry).
    fn open_own(&self, link: &CString, flags: i32) -> Result<OwnedFd, i32> {
        use caps::Refusal;
        let open = || {
            open_raw(
                libc::AT_FDCWD,
                link,
                flags | libc::O_PATH | libc::O_CLOEXEC,
                0,
            )
        };
        match open() {
            Err(e) if e.refused() && caps::held() => {
                let fd = caps::as_tracer(open)?;
                if self.valid() {
                    Ok(fd)
                } else {
                    Err(libc::ESRCH)
                }
            }
            done => done,
        }
    }

    /// The caller's own descriptor `own` ([`own_descriptor`]'s form), held ([`Own`]).
    fn own(&self, own: &CString) -> Result<Own, i32> {
        self.open_own(own, 0).map(Own)
    }

    /// A NUL-terminated string at `addr` in the caller's memory, read page by page (the
    /// string may end just before an unmapped page). Errno as the kernel would give it.
    fn string(&self, mem: &std::fs::File, addr: u64) -> Result<Vec<u8>, i32> {
        use std::os::unix::fs::FileExt;
        if addr == 0 {
            return Err(libc::EFAULT);
        }
        let mut out = Vec::new();
        let mut at = addr;
        while out.len() < PATH_MAX {
            let to_page = 4096 - (at % 4096) as usize;
            let mut buf = vec![0u8; to_page.min(PATH_MAX - out.len())];
            let n = mem.read_at(&mut buf, at).map_err(|_| libc::EFAULT)?;
            if n == 0 {
                return Err(libc::EFAULT);
            }
            if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&buf[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        Err(libc::ENAMETOOLONG)
    }

    /// `len` bytes at `addr` in the caller's memory (an attribute's value: at most
    /// 64 KiB, as the kernel's bound).
    fn bytes(&self, mem: &std::fs::File, addr: u64, len: u64) -> Result<Vec<u8>, i32> {
        use std::os::unix::fs::FileExt;
        if len > 65536 {
            return Err(libc::E2BIG);
        }
        if len == 0 {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; len as usize];
        mem.read_exact_at(&mut buf, addr)
            .map_err(|_| libc::EFAULT)?;
        Ok(buf)
    }

    /// The folder a relative path of the caller starts from: its working folder, or the
    /// folder `dirfd` is open on. `None` for an absolute path (init's root is the
    /// caller's).
    fn base(&self, dirfd: i32, path: &[u8]) -> Result<Option<OwnedFd>, i32> {
        if path.first() == Some(&b'/') {
            return Ok(None);
        }
        let link = if dirfd == libc::AT_FDCWD {
            self.proc("cwd")
        } else {
            self.proc(&format!("fd/{dirfd}"))
        };
        self.open_own(&link, libc::O_DIRECTORY)
            .map(Some)
            .map_err(|e| match e {
                libc::ENOENT if dirfd != libc::AT_FDCWD => libc::EBADF,
                // A caller init may not look at (non-dumpable, where init holds no
                // CAP_SYS_PTRACE): refused.
                libc::EACCES | libc::EPERM => libc::EPERM,
                e => e,
            })
    }

    /// The folder `path` (relative to `dirfd`) names its last component in, opened
    /// (`O_PATH`), and that last component with any trailing `/` (`.` for a path that
    /// has none, as `/`).
    fn folder_of(&self, dirfd: i32, path: &[u8]) -> Result<(OwnedFd, Vec<u8>), i32> {
        let name = final_name(path);
        let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let start = trimmed.saturating_sub(name.len());
        let (folder, last): (&[u8], &[u8]) = match (&path[..start], &path[start..]) {
            (_, b"") => (path, b"."),
            (b"", last) => (b".", last),
            (folder, last) => (folder, last),
        };
        let base = self.base(dirfd, folder)?;
        let cfolder = CString::new(folder).map_err(|_| libc::EINVAL)?;
        let fd = open_raw(
            dir_fd(&base),
            &cfolder,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        )?;
        Ok((fd, last.to_vec()))
    }

    /// Whether the caller's descriptor `fd` is open `O_PATH` (its `/proc/TID/fdinfo`
    /// says): a call on the descriptor itself (`fchmod`, `fsetxattr`, `futimens`) gets
    /// EBADF for one from the kernel, while the file it names, reached through /proc,
    /// could be changed.
    fn path_only(&self, fd: i32) -> bool {
        self.flags_of(self.tid, fd)
            .is_some_and(|flags| flags & libc::O_PATH as u32 != 0)
    }

    /// Whether the caller's descriptor `fd` (of process or thread `pid`, as the caller's
    /// path named it) is open for reading only: opening it again through /proc for
    /// writing would write a file the caller was only given to read (`cmd < notes.txt`:
    /// the kernel checks the file's mode, not the descriptor's). `O_PATH` is not: it was
    /// opened by a path the caller could open anyway.
    fn reads_only(&self, pid: u32, fd: i32) -> bool {
        self.flags_of(pid, fd).is_some_and(reads_only)
    }

    /// The open flags of the caller's descriptor `fd` (of process or thread `pid`), from
    /// its `/proc/PID/fdinfo`.
    fn flags_of(&self, pid: u32, fd: i32) -> Option<u32> {
        use caps::Refusal;
        let read = || crate::fsutil::read_proc(format!("/proc/{pid}/fdinfo/{fd}"));
        let info = match read() {
            // A non-dumpable caller's, read as its other entries are ([`Self::open_own`]),
            // and only if its call is still pending (its pid named no other process).
            Err(e) if e.refused() && caps::held() => {
                caps::as_tracer(read).and_then(|text| match self.valid() {
                    true => Ok(text),
                    false => Err(std::io::Error::from_raw_os_error(libc::ESRCH)),
                })
            }
            info => info,
        };
        info.ok().and_then(|text| fdinfo_flags(&text))
    }

    /// The caller's umask and thread group id, from `/proc/TID/status`.
    fn status(&self) -> Option<(u32, u32)> {
        let text = crate::fsutil::read_proc(format!("/proc/{}/status", self.tid)).ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        let umask = u32::from_str_radix(&field("Umask:")?, 8).ok()?;
        let tgid = field("Tgid:")?.parse().ok()?;
        Some((umask, tgid))
    }
}

/// `openat`, returning the errno.
fn open_raw(dir: RawFd, path: &CString, flags: i32, mode: u32) -> Result<OwnedFd, i32> {
    // SAFETY: openat reads the NUL-terminated path.
    let fd = unsafe { libc::openat(dir, path.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a descriptor the kernel just gave us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether no process is left under the listener's filter, waiting until one sends a
/// call or the last one ends: `poll` reports `POLLIN` for a call to read and `POLLHUP`
/// once the filter has no process (Linux 5.8+; an older kernel blocks on RECV instead
/// and never gets here for that reason).
fn orphaned(listener: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd: listener,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one struct it is given.
    let r = unsafe { libc::poll(&mut p, 1, -1) };
    r == 1 && hung_up(p.revents)
}

/// `poll`'s answer on a listener says no call can come any more: hung up, nothing to read.
fn hung_up(revents: libc::c_short) -> bool {
    revents & libc::POLLHUP != 0 && revents & libc::POLLIN == 0
}

/// The kernel's words for `e` (`Read-only file system`).
fn strerror(e: i32) -> String {
    let text = std::io::Error::from_raw_os_error(e).to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn result(r: libc::c_int) -> Answer {
    if r < 0 {
        Answer::Errno(errno())
    } else {
        Answer::Value(r as i64)
    }
}

fn dir_fd(base: &Option<OwnedFd>) -> RawFd {
    base.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd)
}

/// The caller's own descriptor a path names in the caller's view (`/dev/stdout`,
/// `/proc/self/fd/3`, ...), as init's /proc names it: the form init opens for it.
fn own_descriptor(path: &[u8], tgid: u32, tid: u32) -> Option<CString> {
    let num = |s: &[u8]| -> Option<u32> {
        (!s.is_empty() && s.iter().all(u8::is_ascii_digit))
            .then(|| std::str::from_utf8(s).ok()?.parse().ok())
            .flatten()
    };
    let (pid, fd) = match path {
        b"/dev/stdin" => (tgid, 0),
        b"/dev/stdout" => (tgid, 1),
        b"/dev/stderr" => (tgid, 2),
        _ => {
            if let Some(n) = path.strip_prefix(b"/dev/fd/").and_then(num) {
                (tgid, n)
            } else if let Some(n) = path.strip_prefix(b"/proc/self/fd/").and_then(num) {
                (tgid, n)
            } else if let Some(n) = path.strip_prefix(b"/proc/thread-self/fd/").and_then(num) {
                (tid, n)
            } else {
                return None;
            }
        }
    };
    CString::new(format!("/proc/{pid}/fd/{fd}")).ok()
}

/// The open flags a `/proc/PID/fdinfo/N` text gives (octal on its `flags:` line).
fn fdinfo_flags(text: &str) -> Option<u32> {
    let flags = text.lines().find_map(|l| l.strip_prefix("flags:"))?;
    u32::from_str_radix(flags.trim(), 8).ok()
}

/// Whether a descriptor of these open flags reads only (not `O_PATH`, which gives no
/// access of its own).
fn reads_only(flags: u32) -> bool {
    flags & libc::O_PATH as u32 == 0 && flags & libc::O_ACCMODE as u32 == libc::O_RDONLY as u32
}

/// Whether an open of these flags may change the file: open for writing, or truncating.
fn asks_to_write(flags: i32) -> bool {
    flags & libc::O_ACCMODE != libc::O_RDONLY || flags & libc::O_TRUNC != 0
}

/// The process (or thread) and descriptor number of [`own_descriptor`]'s form.
fn descriptor_of(own: &CString) -> Option<(u32, i32)> {
    let s = own.to_str().ok()?.strip_prefix("/proc/")?;
    let (pid, fd) = s.split_once("/fd/")?;
    Some((pid.parse().ok()?, fd.parse().ok()?))
}

/// A caller's own descriptor, `/proc/TGID/fd/N` as [`own_descriptor`] spells it, held
/// open (`O_PATH`) by init: opened by `Caller::open_own` (as a tracer where the caller is
/// non-dumpable: the caller may always open its own, and the path is that one magic link,
/// nothing after it), then reached through init's own `/proc/self/fd` for what is done
/// with it, with no capability effective.
struct Own(OwnedFd);

impl Own {
    fn path(&self) -> CString {
        CString::new(format!("/proc/self/fd/{}", self.0.as_raw_fd())).expect("no NUL")
    }
}

/// The device and inode of the folder `name` in the folder `fd` is open on (not
/// following a link), if it is a folder.
fn dir_id(fd: &OwnedFd, name: &[u8]) -> Option<(u64, u64)> {
    let cname = CString::new(final_name(name)).ok()?;
    // SAFETY: fstatat fills the struct it is given; a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::fstatat(
            fd.as_raw_fd(),
            cname.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (r == 0 && st.st_mode & libc::S_IFMT == libc::S_IFDIR).then_some((st.st_dev, st.st_ino))
}

/// Whether anything (a link included, not followed) is called `name` in the folder `fd`
/// is open on.
fn exists(fd: &OwnedFd, name: &[u8]) -> bool {
    let Ok(cname) = CString::new(name) else {
        return false;
    };
    // SAFETY: fstatat fills the struct it is given; a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstatat(
            fd.as_raw_fd(),
            cname.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

/// What `name` in the folder `fd` is open on is called in init's view (the caller's):
/// `None` for `.` and `..`, which no rename moves.
fn named(fd: &OwnedFd, name: &[u8]) -> Option<String> {
    let name = final_name(name);
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    let folder = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()?;
    let mut out = folder.into_os_string().into_encoded_bytes();
    if out != b"/" {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `path` with the forms that name the calling process (`/proc/self/...`,
/// `/proc/thread-self/...`, `/dev/stdout`, ...) spelled as init's /proc names the caller.
fn callers_path(path: &[u8], tgid: u32, tid: u32) -> Vec<u8> {
    if let Some(own) = own_descriptor(path, tgid, tid) {
        return own.into_bytes();
    }
    for (prefix, pid) in [(&b"/proc/self"[..], tgid), (&b"/proc/thread-self"[..], tid)] {
        if let Some(rest) = path.strip_prefix(prefix) {
            if rest.is_empty() || rest[0] == b'/' {
                let mut out = format!("/proc/{pid}").into_bytes();
                out.extend_from_slice(rest);
                return out;
            }
        }
    }
    path.to_vec()
}

/// Where the caller's descriptor `fd` is open, as its /proc names it (empty where that
/// cannot be read).
fn caller_fd_path(caller: &Caller, fd: i32) -> String {
    caps::tracing_if_refused(|| std::fs::read_link(format!("/proc/{}/fd/{fd}", caller.tid)))
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn is_tty(fd: &OwnedFd) -> bool {
    // SAFETY: isatty on our descriptor.
    unsafe { libc::isatty(fd.as_raw_fd()) == 1 }
}

/// Whether `fd` (opened `O_PATH | O_NOFOLLOW`) is a symbolic link.
fn is_link(fd: &OwnedFd) -> bool {
    // SAFETY: fstat fills the struct it is given.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFLNK
    }
}

/// The id of the mount the file `fd` is open on (`STATX_MNT_ID`, Linux 5.8), as
/// `/proc/PID/mountinfo` numbers mounts.
fn mount_id(fd: &OwnedFd) -> Option<u64> {
    // SAFETY: statx fills the struct it is given; an empty, NUL-terminated path with
    // AT_EMPTY_PATH names the descriptor itself.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            fd.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_MNT_ID,
            &mut stx,
        )
    };
    (r == 0 && stx.stx_mask & libc::STATX_MNT_ID != 0).then_some(stx.stx_mnt_id)
}

/// The mount ids of a `mountinfo` text (the first field of each line).
fn mount_ids(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect()
}

/// Whether a file init opened is on a file system where init's own files live (procfs:
/// its memory; pipefs: its report pipe; anonymous inodes: its listener), which a path
/// through `/proc/self` would reach as init's, never the caller's.
fn on_private_fs(fd: &OwnedFd) -> bool {
    const PROC: i64 = 0x9fa0;
    const PIPEFS: i64 = 0x5049_5045;
    const ANON_INODE: i64 = 0x0904_1934;
    const SOCKFS: i64 = 0x534F_434B;
    // SAFETY: fstatfs fills the struct it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 {
        return true;
    }
    matches!(st.f_type as i64, PROC | PIPEFS | ANON_INODE | SOCKFS)
}

/// Whether a file init opened on one of [`on_private_fs`]'s file systems is a file of
/// procfs below the caller's own process (`/proc/TGID/...`: its thread group is the
/// caller's) or below none (`/proc/meminfo`), which the caller may have as the kernel
/// would open it. Not any other process's: init, as every process's ancestor, passes
/// ptrace checks (Yama) a caller would not. A pipe, socket or anonymous inode cannot be
/// told apart from init's own (reached through `/proc/1/fd/N`): never.
fn callers_proc(fd: &OwnedFd, tgid: u32) -> bool {
    const PROC: i64 = 0x9fa0;
    // SAFETY: fstatfs fills the struct it is given.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(fd.as_raw_fd(), &mut st) } != 0 || st.f_type as i64 != PROC {
        return false;
    }
    let Ok(at) = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) else {
        return false;
    };
    let Some(first) = at
        .strip_prefix("/proc")
        .ok()
        .and_then(|rest| rest.components().next())
    else {
        return false;
    };
    let Some(pid) = first
        .as_os_str()
        .to_str()
        .and_then(|p| p.parse::<u32>().ok())
    else {
        // Not below a process (`/proc/meminfo`, `/proc/sys/...`): no one's own.
        return true;
    };
    // The thread group of `pid`, as /proc names it (a thread is a folder of its own too).
    let status = crate::fsutil::read_proc(format!("/proc/{pid}/status")).unwrap_or_default();
    let group = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse::<u32>().ok());
    group == Some(tgid) && tgid != 1
}

fn is_fifo(fd: &OwnedFd) -> bool {
    // SAFETY: fstat fills the struct it is given.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstat(fd.as_raw_fd(), &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFIFO
    }
}

/// The rule a `.git` made in the tree at `root` is refused by (what the event shows).
fn nested_rule(root: &std::path::Path) -> String {
    format!(
        "nested repository: {} in {} (a person's git would run its config; allow_write = [\"{}\"] lets the loop make one)",
        ".git",
        root.display(),
        crate::sandbox::fspolicy::NESTED_GIT
    )
}

impl Supervisor {
    pub fn new(
        listener: OwnedFd,
        patterns: Vec<String>,
        watch: Watch,
        report: Option<std::fs::File>,
    ) -> Self {
        use std::os::unix::fs::MetadataExt;
        let pin_ids = watch
            .pins
            .iter()
            .filter_map(|(p, rule)| {
                let m = std::fs::symlink_metadata(p).ok()?;
                m.is_dir().then(|| ((m.dev(), m.ino()), rule.clone()))
            })
            .collect();
        let place_ids = watch
            .places
            .iter()
            .filter_map(|(p, rule)| {
                let name = p.file_name()?.as_bytes().to_vec();
                let m = std::fs::metadata(p.parent()?).ok()?;
                m.is_dir().then(|| ((m.dev(), m.ino()), name, rule.clone()))
            })
            .collect();
        Supervisor {
            listener,
            patterns,
            watch,
            reported_now: false,
            non_dumpable: false,
            answering: "",
            pin_ids,
            place_ids,
            report,
            reported: 0,
            times_reported: Default::default(),
            reads_reported: Default::default(),
            mounts: Vec::new(),
        }
    }

    /// Answers notifications until the listener fails; returns why it stopped.
    pub fn serve(mut self) -> std::io::Error {
        // Wake the supervisor on the caller's CPU (Linux 6.6): a creation costs a switch
        // to this thread and back, not a wake-up through the scheduler. Optional.
        // SAFETY: SET_FLAGS takes its flags by value.
        unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS as _,
                1u64, /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */
            )
        };
        loop {
            // SAFETY: RECV fills the zeroed struct it is given.
            let mut n: libc::seccomp_notif = unsafe { std::mem::zeroed() };
            let r = unsafe {
                libc::ioctl(
                    self.listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_RECV as _,
                    &mut n as *mut libc::seccomp_notif,
                )
            };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // A caller that went away before it was read, or no process left
                    // under the filter: the kernel then answers RECV at once, and a
                    // retry would spin until init ends (a millisecond and a core).
                    Some(libc::ENOENT) => {
                        if orphaned(self.listener.as_raw_fd()) {
                            // No process can come under the filter again (only a
                            // process under it forks one that is): nothing is left to
                            // answer. Init's exit ends this thread.
                            loop {
                                std::thread::park();
                            }
                        }
                        continue;
                    }
                    _ => return e,
                }
            }
            let answer = self.answer(&n);
            send(self.listener.as_raw_fd(), n.id, answer);
        }
    }

    fn answer(&mut self, n: &libc::seccomp_notif) -> Answer {
        self.reported_now = false;
        let caller = Caller {
            listener: self.listener.as_raw_fd(),
            id: n.id,
            tid: n.pid,
        };
        let a = n.data.args;
        let Some(call) = Call::decode(n.data.nr as i64, &a) else {
            // The filter sends nothing else.
            return Answer::Errno(libc::ENOSYS);
        };
        self.answering = call.name;
        // Read-only; where the ptrace check refuses it (a process that made itself
        // non-dumpable: ssh-agent, gpg-agent), opened again with CAP_SYS_PTRACE raised in
        // this thread where init holds it (caps.rs), so that process is read, judged and
        // acted for as any other.
        let open_mem = || std::fs::File::open(format!("/proc/{}/mem", caller.tid));
        let plain = open_mem();
        self.non_dumpable = plain
            .as_ref()
            .is_err_and(|e| caps::Refusal::refused(e) && caps::held());
        let mem = match plain.or_else(|e| {
            if self.non_dumpable {
                caps::as_tracer(open_mem)
            } else {
                Err(e)
            }
        }) {
            Ok(m) => m,
            Err(_) if !caller.valid() => return Answer::Gone,
            // Where init holds no CAP_SYS_PTRACE (a setuid bwrap): where no rule is judged
            // on its call, the kernel does it (only the report of a refusal is lost);
            // where one would be, it is refused.
            Err(_) if !self.judges(&call) => return Answer::Continue,
            Err(_) => {
                let rule = self.unreadable(&call);
                self.report(&call, b"", rule);
                return Answer::Errno(libc::EPERM);
            }
        };
        let read = call.read(&caller, &mem);
        drop(mem);
        // The strings were read from the process whose call this is only if the
        // notification is still pending now (a pid can be reused after its end).
        if !caller.valid() {
            return Answer::Gone;
        }
        let strings = match read {
            Ok(s) => s,
            Err(e) => return Answer::Errno(e),
        };
        if let Kind::Lookup { .. } = call.kind {
            return self.look(&caller, &call, &strings[0]);
        }
        for (path, base) in call.made(&strings) {
            if let Some(rule) = self.judged(path) {
                let shown = self.shown(&caller, call.dirfd(base), path);
                self.report(&call, shown.as_bytes(), &rule);
                return Answer::Errno(libc::EPERM);
            }
        }
        let Some((umask, tgid)) = caller.status() else {
            return if caller.valid() {
                Answer::Errno(libc::EPERM)
            } else {
                Answer::Gone
            };
        };
        // A name of the list refused in its folder (`open` is judged where it makes its
        // file, in `open`): the folder as the caller's path reaches it.
        let replaces = matches!(call.kind, Kind::Rename { .. });
        for (path, which) in call.made(&strings) {
            if self.place_ids.is_empty() && self.watch.repos.is_empty() {
                break;
            }
            let path = callers_path(path, tgid, caller.tid);
            let base = match caller.base(call.dirfd(which), &path) {
                Ok(b) => b,
                Err(e) => return Answer::Errno(e),
            };
            if let Some(rule) = self.placed(dir_fd(&base), &path, replaces) {
                let at = self.located(&caller, call.dirfd(which), &path);
                self.report(&call, at.as_bytes(), &rule);
                return Answer::Errno(libc::EPERM);
            }
        }
        let answer = self.act(&caller, &call, &strings, umask, tgid);
        if let Answer::Errno(e) = answer {
            if !self.reported_now {
                self.kernel_refused(&caller, &call, &strings, e);
            }
        }
        answer
    }

    /// Reports what the kernel refused to a call done for the caller: a write to a
    /// read-only place (`EROFS`), a path denied by its mode or a `deny_read` cover
    /// (`EACCES`, `EPERM`: a file or folder there, or a name in such a folder, where
    /// reads are watched), a mount point moved or removed (`EBUSY`). The rule is named
    /// by the host from the path (it knows the view); the path is where the caller's
    /// call landed, its folder resolved as the caller sees it.
    fn kernel_refused(&mut self, caller: &Caller, call: &Call, s: &[Vec<u8>], e: i32) {
        let read = call.reads();
        let refusal = match e {
            libc::EROFS | libc::EACCES | libc::EPERM => true,
            libc::EBUSY => matches!(call.kind, Kind::Rename { .. } | Kind::Unlink { .. }),
            // Across a pinned folder (a mount point of its own) or out of a read-only
            // place: the host keeps it only where a rule is on either side (a move between
            // /tmp and the tree, which `mv` copies instead, is ordinary work).
            libc::EXDEV => matches!(call.kind, Kind::Rename { .. } | Kind::Link { .. }),
            _ => false,
        };
        if !refusal || (read && !self.watch.reads) {
            return;
        }
        // Paths through `/proc/self` as the caller's, not init's (`/proc/self/environ`
        // is the caller's file, not `/proc/1/environ`).
        let tgid = caller.status().map_or(caller.tid, |(_, tgid)| tgid);
        let own = |which: usize| callers_path(&s[which], tgid, caller.tid);
        // The name a call makes is its second path (rename, link, symlink).
        let which = match call.kind {
            Kind::Rename { .. } | Kind::Link { .. } | Kind::Symlink { .. } => 1,
            _ => 0,
        };
        let at = match call.kind {
            // A descriptor of the caller's: where it is open, as the caller's /proc says.
            Kind::OnFd { fd, .. } => caller_fd_path(caller, fd),
            Kind::Times { dirfd, path, .. } if path == 0 || s[0].is_empty() => {
                caller_fd_path(caller, dirfd)
            }
            Kind::XattrAt { dirfd, .. } if s[0].is_empty() && dirfd != libc::AT_FDCWD => {
                caller_fd_path(caller, dirfd)
            }
            Kind::XattrAt { dirfd, .. } if s[0].is_empty() => self.located(caller, dirfd, b"."),
            _ => self.located(caller, call.dirfd(which), &own(which)),
        };
        if matches!(call.kind, Kind::Times { .. }) {
            // A time: only where a rule covers the file, once a run (see changing_calls).
            let covered = self
                .watch
                .covers
                .iter()
                .any(|c| std::path::Path::new(&at).starts_with(c));
            if !covered || !self.times_reported.insert(at.clone()) {
                return;
            }
        }
        if read && !self.first_read(call.name, &at) {
            return;
        }
        let access = if read { "read" } else { "write" };
        let from = match call.kind {
            Kind::Rename { .. } | Kind::Link { .. } => self.located(caller, call.dirfd(0), &own(0)),
            _ => String::new(),
        };
        self.report_refusal(
            call.name,
            at.as_bytes(),
            from.as_bytes(),
            "",
            access,
            Some(e),
        );
    }

    /// A lookup ([`looking_calls`]): done by the kernel for the caller (`CONTINUE`: it
    /// writes what it finds into the caller's memory), unless the same lookup done here,
    /// in the caller's view with the caller's credentials, is refused in a folder
    /// `deny_read` covers: then that refusal is the answer, and reported. No rule is
    /// judged here, so the kernel reading the path again decides nothing new; a caller
    /// changing it meanwhile can only lose the report of its own refusal.
    fn look(&mut self, caller: &Caller, call: &Call, path: &[u8]) -> Answer {
        let Kind::Lookup {
            dirfd,
            flags,
            access,
            ..
        } = call.kind
        else {
            return Answer::Continue;
        };
        if path.is_empty() {
            return Answer::Continue; // the descriptor itself: nothing looked up
        }
        let Ok(base) = caller.base(dirfd, path) else {
            return Answer::Continue;
        };
        let cpath = CString::new(path).expect("read up to a NUL");
        let follow = flags & libc::AT_SYMLINK_NOFOLLOW;
        // SAFETY: a NUL-terminated path; fstatat fills the struct it is given.
        let r = unsafe {
            match access {
                None => {
                    let mut st: libc::stat = std::mem::zeroed();
                    libc::fstatat(dir_fd(&base), cpath.as_ptr(), &mut st, follow)
                }
                Some(mode) => {
                    let how = follow | (flags & libc::AT_EACCESS);
                    libc::faccessat(dir_fd(&base), cpath.as_ptr(), mode, how)
                }
            }
        };
        if r == 0 || errno() != libc::EACCES {
            return Answer::Continue;
        }
        let at = self.located(caller, dirfd, path);
        let covered = self
            .watch
            .read_dirs
            .iter()
            .any(|d| std::path::Path::new(&at).starts_with(d));
        if !covered {
            return Answer::Continue;
        }
        if !self.first_read(call.name, &at) {
            return Answer::Errno(libc::EACCES);
        }
        self.report_refusal(
            call.name,
            at.as_bytes(),
            b"",
            "",
            "read",
            Some(libc::EACCES),
        );
        Answer::Errno(libc::EACCES)
    }

    /// Whether a read refused at `at` by `call` is to be reported: the first time a run,
    /// while the bound leaves room (so what is kept to know that is bounded too).
    fn first_read(&mut self, call: &'static str, at: &str) -> bool {
        self.reported < MAX_REPORTED && self.reads_reported.insert((call, at.to_string()))
    }

    /// Whether a rule may refuse `call`: it makes a name, and names are judged; or it is
    /// a rename, and folders are pinned.
    fn judges(&self, call: &Call) -> bool {
        (self.names_judged() && call.makes_names())
            || (!self.watch.pins.is_empty() && matches!(call.kind, Kind::Rename { .. }))
    }

    /// The rule of a refusal of [`Self::judges`]'s call by a process whose memory pid 1
    /// cannot read (it made itself non-dumpable, as ssh-agent does, and pid 1 holds no
    /// CAP_SYS_PTRACE: a setuid bwrap, see caps.rs): why its call is judged, and what
    /// lifts it.
    fn unreadable(&self, call: &Call) -> &'static str {
        if !self.patterns.is_empty() {
            "not dumpable, and pid 1 holds no CAP_SYS_PTRACE (a setuid bwrap): the name it makes cannot be read, and deny_create judges every name"
        } else if self.names_judged() && call.makes_names() {
            "not dumpable, and pid 1 holds no CAP_SYS_PTRACE (a setuid bwrap): the name it makes cannot be read, and files of the built-in list not in the working tree and `.git` in the loop's trees are refused by name (allow_write naming them lifts it)"
        } else {
            "not dumpable, and pid 1 holds no CAP_SYS_PTRACE (a setuid bwrap): the names of its rename cannot be read, and pinned folders are kept by judging renames"
        }
    }

    /// Whether any name is refused when made.
    fn names_judged(&self) -> bool {
        !self.patterns.is_empty()
            || !self.watch.names.is_empty()
            || !self.place_ids.is_empty()
            || !self.watch.repos.is_empty()
    }

    /// The rule refusing to make the final name of `path` (relative to `base`) in the
    /// folder it names ([`Watch::places`]), if one does. Only a name not there is made
    /// (a call that would replace it, `rename`, is refused as well): an existing name's
    /// `mkdir` gets EEXIST from the kernel, as `mkdir -p` expects. Nothing changes the
    /// folder's entries meanwhile: every call that could comes to this thread.
    ///
    /// And the name `.git` made in a folder at or below the root of one of
    /// [`Watch::repos`] (the folder's path in init's view, which is the sandbox's: read
    /// from the descriptor, so no link or `..` the caller used changes it).
    fn placed(&self, base: RawFd, path: &[u8], replaces: bool) -> Option<String> {
        let name = final_name(path);
        let nested = name == b".git" && !self.watch.repos.is_empty();
        if !nested && !self.place_ids.iter().any(|(_, n, _)| n == name) {
            return None; // the common case: no folder opened
        }
        let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let folder = &path[..trimmed - name.len()];
        let folder = CString::new(if folder.is_empty() { b"." } else { folder }).ok()?;
        let fd = open_raw(
            base,
            &folder,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            0,
        )
        .ok()?;
        // SAFETY: fstat fills the struct it is given.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
            return None;
        }
        if !replaces && exists(&fd, name) {
            return None;
        }
        if nested {
            let folder = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok();
            // A folder whose path cannot be read is judged as if in a tree: refused.
            let root = match &folder {
                Some(f) => self.watch.repos.iter().find(|r| f.starts_with(r)),
                None => self.watch.repos.first(),
            };
            if let Some(root) = root {
                return Some(nested_rule(root));
            }
        }
        let id = (st.st_dev, st.st_ino);
        let (_, _, rule) = self
            .place_ids
            .iter()
            .find(|(at, n, _)| *at == id && n == name)?;
        Some(rule.clone())
    }

    /// The rule refusing to make the final name of `path`, if one does: a `deny_create`
    /// pattern, or a name of the built-in list's ([`Watch::names`]).
    fn judged(&self, path: &[u8]) -> Option<String> {
        if let Some(p) = refused(&self.patterns, path) {
            return Some(format!("deny_create: {p}"));
        }
        let name = final_name(path);
        self.watch
            .names
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|(_, rule)| format!("{rule} (its target, refused when made)"))
    }

    /// Where `path` of the caller is, its folder resolved in the caller's view (links
    /// followed, `..` gone): what the event shows and the host names the rule from.
    /// The path as the caller gave it where its folder cannot be opened.
    fn located(&self, caller: &Caller, dirfd: i32, path: &[u8]) -> String {
        use std::os::unix::ffi::OsStringExt;
        let name = final_name(path);
        let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
        let parent = &path[..trimmed.saturating_sub(name.len())];
        let parent: &[u8] = if parent.is_empty() { b"." } else { parent };
        let folder = caller.base(dirfd, parent).ok().and_then(|base| {
            let cparent = CString::new(parent).ok()?;
            let fd = open_raw(
                dir_fd(&base),
                &cparent,
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                0,
            )
            .ok()?;
            std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).ok()
        });
        match folder {
            Some(dir) => {
                let mut out = dir.into_os_string().into_vec();
                if !name.is_empty() && name != b"." {
                    if out != b"/" {
                        out.push(b'/');
                    }
                    out.extend_from_slice(name);
                }
                String::from_utf8_lossy(&out).into_owned()
            }
            None => self.shown(caller, dirfd, path),
        }
    }

    /// The path as the caller named it, made absolute from its folder where that can be
    /// read: what the event shows.
    fn shown(&self, caller: &Caller, dirfd: i32, path: &[u8]) -> String {
        let path = String::from_utf8_lossy(path);
        if path.starts_with('/') {
            return path.into_owned();
        }
        let link = if dirfd == libc::AT_FDCWD {
            format!("/proc/{}/cwd", caller.tid)
        } else {
            format!("/proc/{}/fd/{dirfd}", caller.tid)
        };
        match caps::tracing_if_refused(|| std::fs::read_link(&link)) {
            Ok(dir) => format!("{}/{path}", dir.display()),
            Err(_) => path.into_owned(),
        }
    }

    fn report(&mut self, call: &Call, path: &[u8], rule: &str) {
        self.report_name(call.name, path, rule)
    }

    fn report_name(&mut self, call: &str, path: &[u8], rule: &str) {
        self.report_refusal(call, path, b"", rule, "write", None)
    }

    fn report_refusal(
        &mut self,
        call: &str,
        path: &[u8],
        from: &[u8],
        rule: &str,
        access: &str,
        error: Option<i32>,
    ) {
        self.reported_now = true;
        if self.reported >= MAX_REPORTED {
            return;
        }
        self.reported += 1;
        let Some(out) = self.report.as_mut() else {
            return;
        };
        self.reported_now = true;
        let refusal = Refusal {
            call: call.to_string(),
            path: String::from_utf8_lossy(&path[..path.len().min(PATH_MAX)]).into_owned(),
            rule: rule.to_string(),
            access: access.to_string(),
            error: error.map(strerror).unwrap_or_default(),
            errno: error.unwrap_or(0),
            from: String::from_utf8_lossy(&from[..from.len().min(PATH_MAX)]).into_owned(),
        };
        if let Ok(mut line) = serde_json::to_vec(&refusal) {
            line.push(b'\n');
            // Below PIPE_BUF, one write is all or nothing; a full pipe loses the line.
            let _ = out.write(&line);
        }
    }

    /// Makes what the call asks, as the caller would have: see the module's header.
    fn act(
        &mut self,
        caller: &Caller,
        call: &Call,
        s: &[Vec<u8>],
        umask: u32,
        tgid: u32,
    ) -> Answer {
        let c = |b: &[u8]| CString::new(b).expect("read up to a NUL");
        // The caller's umask for what init makes now (init's own is of no other use: its
        // other thread only waits for processes).
        // SAFETY: umask cannot fail.
        unsafe { libc::umask(umask as libc::mode_t) };
        match call.kind {
            Kind::Open {
                dirfd, flags, mode, ..
            } => self.open(caller, call.name, dirfd, &s[0], flags, mode, tgid),
            Kind::Lookup { .. } => self.look(caller, call, &s[0]),
            Kind::Mkdir { dirfd, mode, .. } => match caller.base(dirfd, &s[0]) {
                Ok(base) => result(unsafe {
                    // SAFETY: a NUL-terminated path.
                    libc::mkdirat(dir_fd(&base), c(&s[0]).as_ptr(), mode as libc::mode_t)
                }),
                Err(e) => Answer::Errno(e),
            },
            Kind::Mknod {
                dirfd, mode, dev, ..
            } => match caller.base(dirfd, &s[0]) {
                Ok(base) => result(unsafe {
                    // SAFETY: a NUL-terminated path.
                    libc::mknodat(
                        dir_fd(&base),
                        c(&s[0]).as_ptr(),
                        mode as libc::mode_t,
                        dev as libc::dev_t,
                    )
                }),
                Err(e) => Answer::Errno(e),
            },
            Kind::Rename {
                olddir,
                newdir,
                flags,
                ..
            } if !self.watch.pins.is_empty() => {
                self.rename_pinned(caller, call, s, olddir, newdir, flags, tgid)
            }
            Kind::Rename {
                olddir,
                newdir,
                flags,
                ..
            } => match (caller.base(olddir, &s[0]), caller.base(newdir, &s[1])) {
                (Ok(ob), Ok(nb)) => result(unsafe {
                    // SAFETY: NUL-terminated paths.
                    libc::syscall(
                        libc::SYS_renameat2,
                        dir_fd(&ob),
                        c(&s[0]).as_ptr(),
                        dir_fd(&nb),
                        c(&s[1]).as_ptr(),
                        flags,
                    ) as libc::c_int
                }),
                (Err(e), _) | (_, Err(e)) => Answer::Errno(e),
            },
            Kind::Link {
                olddir,
                newdir,
                flags,
                ..
            } => {
                let nb = match caller.base(newdir, &s[1]) {
                    Ok(b) => b,
                    Err(e) => return Answer::Errno(e),
                };
                if s[0].is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
                    // The caller's descriptor itself (an O_TMPFILE file given a name):
                    // linked through the caller's own /proc entry, as `open(2)` documents.
                    let held = match caller.own(&c(format!("/proc/{tgid}/fd/{olddir}").as_bytes()))
                    {
                        Ok(held) => held,
                        Err(e) => return Answer::Errno(e),
                    };
                    let own = held.path();
                    return result(unsafe {
                        // SAFETY: NUL-terminated paths.
                        libc::linkat(
                            libc::AT_FDCWD,
                            own.as_ptr(),
                            dir_fd(&nb),
                            c(&s[1]).as_ptr(),
                            libc::AT_SYMLINK_FOLLOW,
                        )
                    });
                }
                if flags & libc::AT_SYMLINK_FOLLOW != 0 {
                    // `/proc/self/fd/N`, the way `open(2)` gives an O_TMPFILE file a
                    // name without privileges: the caller's descriptor, not init's.
                    if let Some(own) = own_descriptor(&s[0], tgid, caller.tid) {
                        let held = match caller.own(&own) {
                            Ok(held) => held,
                            Err(e) => return Answer::Errno(e),
                        };
                        let own = held.path();
                        return result(unsafe {
                            // SAFETY: NUL-terminated paths.
                            libc::linkat(
                                libc::AT_FDCWD,
                                own.as_ptr(),
                                dir_fd(&nb),
                                c(&s[1]).as_ptr(),
                                libc::AT_SYMLINK_FOLLOW,
                            )
                        });
                    }
                }
                let ob = match caller.base(olddir, &s[0]) {
                    Ok(b) => b,
                    Err(e) => return Answer::Errno(e),
                };
                result(unsafe {
                    // SAFETY: NUL-terminated paths.
                    libc::linkat(
                        dir_fd(&ob),
                        c(&s[0]).as_ptr(),
                        dir_fd(&nb),
                        c(&s[1]).as_ptr(),
                        flags & libc::AT_SYMLINK_FOLLOW,
                    )
                })
            }
            Kind::Symlink { newdir, .. } => match caller.base(newdir, &s[1]) {
                Ok(nb) => result(unsafe {
                    // SAFETY: NUL-terminated paths.
                    libc::symlinkat(c(&s[0]).as_ptr(), dir_fd(&nb), c(&s[1]).as_ptr())
                }),
                Err(e) => Answer::Errno(e),
            },
            Kind::Unlink { dirfd, flags, .. } => {
                let p = callers_path(&s[0], tgid, caller.tid);
                match caller.base(dirfd, &p) {
                    Ok(b) => result(unsafe {
                        // SAFETY: a NUL-terminated path.
                        libc::unlinkat(dir_fd(&b), c(&p).as_ptr(), flags)
                    }),
                    Err(e) => Answer::Errno(e),
                }
            }
            Kind::Truncate { len, .. } => {
                self.on_file(caller, libc::AT_FDCWD, &s[0], 0, tgid, |at, _| unsafe {
                    // SAFETY: a NUL-terminated path.
                    libc::truncate(at.as_ptr(), len)
                })
            }
            Kind::Chmod {
                dirfd, mode, flags, ..
            } => self.on_file(caller, dirfd, &s[0], flags, tgid, |at, fd| unsafe {
                // SAFETY: a NUL-terminated path. A link itself has no mode to change.
                if is_link(fd) {
                    *libc::__errno_location() = libc::EOPNOTSUPP;
                    return -1;
                }
                libc::chmod(at.as_ptr(), mode as libc::mode_t)
            }),
            Kind::Chown {
                dirfd,
                uid,
                gid,
                flags,
                ..
            } => self.on_file(caller, dirfd, &s[0], flags, tgid, |_, fd| unsafe {
                // SAFETY: the file itself, by its descriptor.
                libc::fchownat(fd.as_raw_fd(), c"".as_ptr(), uid, gid, libc::AT_EMPTY_PATH)
            }),
            // On the file the caller's descriptor is open on, reached through the caller's
            // /proc (the same file; what these calls may do depends on the file and the
            // caller's credentials, which are init's, not on how the descriptor was opened).
            Kind::OnFd { fd, .. } if caller.path_only(fd) => Answer::Errno(libc::EBADF),
            Kind::OnFd { fd, op } => {
                self.on_file(caller, fd, b"", libc::AT_EMPTY_PATH, tgid, |at, f| unsafe {
                    // SAFETY: the file itself, by its descriptor; the name NUL-terminated,
                    // the value as long as given.
                    match op {
                        FdOp::Chmod(mode) => libc::chmod(at.as_ptr(), mode as libc::mode_t),
                        FdOp::Chown(uid, gid) => libc::fchownat(
                            f.as_raw_fd(),
                            c"".as_ptr(),
                            uid,
                            gid,
                            libc::AT_EMPTY_PATH,
                        ),
                        FdOp::SetXattr { flags, .. } => libc::setxattr(
                            at.as_ptr(),
                            c(&s[0]).as_ptr(),
                            s[1].as_ptr().cast(),
                            s[1].len(),
                            flags,
                        ),
                        FdOp::RemoveXattr { .. } => {
                            libc::removexattr(at.as_ptr(), c(&s[0]).as_ptr())
                        }
                    }
                })
            }
            Kind::Xattr {
                flags,
                follow,
                remove,
                ..
            } => {
                let nofollow = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
                let value = if remove {
                    None
                } else {
                    Some((&s[2][..], flags))
                };
                self.xattr(caller, libc::AT_FDCWD, &s[0], nofollow, tgid, &s[1], value)
            }
            Kind::XattrAt {
                dirfd,
                at_flags,
                remove,
                ..
            } => {
                let at_flags = at_flags as i32;
                // No path with AT_EMPTY_PATH: the descriptor itself, or the working
                // folder for AT_FDCWD (as the kernel resolves it).
                let path: &[u8] = match &s[0][..] {
                    b"" if at_flags & libc::AT_EMPTY_PATH != 0 && dirfd == libc::AT_FDCWD => b".",
                    p => p,
                };
                let value = if remove {
                    None
                } else {
                    let flags = i32::from_ne_bytes(s[3][..4].try_into().expect("4 bytes"));
                    Some((&s[2][..], flags))
                };
                if path.is_empty() && caller.path_only(dirfd) {
                    return Answer::Errno(libc::EBADF);
                }
                self.xattr(caller, dirfd, path, at_flags, tgid, &s[1], value)
            }
            Kind::Times {
                dirfd,
                path,
                flags,
                form,
                ..
            } => {
                let times = (!s[1].is_empty()).then(|| form.spec(&s[1]));
                let ptr = times.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
                // No path: the descriptor `dirfd` itself (`futimens`).
                if path == 0 && caller.path_only(dirfd) {
                    return Answer::Errno(libc::EBADF);
                }
                let flags = if path == 0 {
                    libc::AT_EMPTY_PATH
                } else {
                    flags
                };
                self.on_file(caller, dirfd, &s[0], flags, tgid, |_, fd| unsafe {
                    // SAFETY: the file itself, by its descriptor; `ptr` null or two times.
                    libc::utimensat(fd.as_raw_fd(), c"".as_ptr(), ptr, libc::AT_EMPTY_PATH)
                })
            }
        }
    }

    /// An extended attribute set (`value`: its bytes and `XATTR_CREATE`/`XATTR_REPLACE`)
    /// or removed (`None`) on the file `path` from `dirfd` names (`flags`:
    /// `AT_SYMLINK_NOFOLLOW`, `AT_EMPTY_PATH`), on that very file ([`Self::on_file`]).
    #[allow(clippy::too_many_arguments)]
    fn xattr(
        &mut self,
        caller: &Caller,
        dirfd: i32,
        path: &[u8],
        flags: i32,
        tgid: u32,
        name: &[u8],
        value: Option<(&[u8], i32)>,
    ) -> Answer {
        let name = CString::new(name).expect("read up to a NUL");
        self.on_file(caller, dirfd, path, flags, tgid, |at, fd| unsafe {
            // SAFETY: NUL-terminated names, the value as long as given.
            if is_link(fd) {
                // On a link itself (not followed): a user attribute is not allowed on
                // one, the others need privileges the sandbox has not.
                *libc::__errno_location() = libc::EPERM;
                return -1;
            }
            match value {
                None => libc::removexattr(at.as_ptr(), name.as_ptr()),
                Some((v, flags)) => libc::setxattr(
                    at.as_ptr(),
                    name.as_ptr(),
                    v.as_ptr().cast(),
                    v.len(),
                    flags,
                ),
            }
        })
    }

    /// A rename where folders are pinned ([`Watch::pins`]): each side's folder opened
    /// once and named (`/proc/self/fd/N`), a pinned folder refused as its mount point
    /// would be (EBUSY: the one moved, or either one exchanged), then renamed by those
    /// very descriptors and the final names, so no rename meanwhile changes which entries
    /// they are (every rename inside comes here, one at a time, and a pinned folder's
    /// folders are pinned too).
    #[allow(clippy::too_many_arguments)]
    fn rename_pinned(
        &mut self,
        caller: &Caller,
        call: &Call,
        s: &[Vec<u8>],
        olddir: i32,
        newdir: i32,
        flags: u32,
        tgid: u32,
    ) -> Answer {
        let old = callers_path(&s[0], tgid, caller.tid);
        let new = callers_path(&s[1], tgid, caller.tid);
        let (op, oname) = match caller.folder_of(olddir, &old) {
            Ok(f) => f,
            Err(e) => return Answer::Errno(e),
        };
        let (np, nname) = match caller.folder_of(newdir, &new) {
            Ok(f) => f,
            Err(e) => return Answer::Errno(e),
        };
        let old_at = named(&op, &oname);
        let exchange = flags & libc::RENAME_EXCHANGE != 0;
        let new_at = named(&np, &nname);
        // Known by its path in the view and by what it is (device and inode, for a path
        // that reaches it otherwise). What `name` is in its folder cannot change before
        // the rename below: every call that could change it comes to this thread.
        let pinned = |at: &Option<String>, folder: &OwnedFd, name: &[u8]| {
            let by_path = at.as_deref().and_then(|at| {
                self.watch
                    .pins
                    .iter()
                    .find(|(p, _)| p.as_os_str() == at)
                    .map(|(_, rule)| rule.clone())
            });
            by_path.or_else(|| {
                let id = dir_id(folder, name)?;
                self.pin_ids
                    .iter()
                    .find(|(pin, _)| *pin == id)
                    .map(|(_, rule)| rule.clone())
            })
        };
        let refused = pinned(&old_at, &op, &oname)
            .or_else(|| exchange.then(|| pinned(&new_at, &np, &nname)).flatten());
        if let Some(rule) = refused {
            let (to, from) = (new_at.unwrap_or_default(), old_at.unwrap_or_default());
            self.report_refusal(
                call.name,
                to.as_bytes(),
                from.as_bytes(),
                &format!("{rule} (a folder above it, pinned)"),
                "write",
                Some(libc::EBUSY),
            );
            return Answer::Errno(libc::EBUSY);
        }
        let c = |b: &[u8]| CString::new(b).expect("read up to a NUL");
        result(unsafe {
            // SAFETY: NUL-terminated names in folders held open.
            libc::syscall(
                libc::SYS_renameat2,
                op.as_raw_fd(),
                c(&oname).as_ptr(),
                np.as_raw_fd(),
                c(&nname).as_ptr(),
                flags,
            ) as libc::c_int
        })
    }

    /// Whether the file `fd` is open on lies on one of the sandbox's mounts (its mount id,
    /// `statx`'s `STATX_MNT_ID`, among those of init's `/proc/self/mountinfo`). A file
    /// whose id cannot be read is taken as outside.
    fn in_view(&mut self, fd: &OwnedFd) -> bool {
        let Some(id) = mount_id(fd) else {
            return false;
        };
        if !self.mounts.contains(&id) {
            self.mounts = crate::fsutil::read_proc("/proc/self/mountinfo")
                .map(|text| mount_ids(&text))
                .unwrap_or_default();
        }
        self.mounts.contains(&id)
    }

    /// A call that changes the file `path` names, done on that very file: opened first
    /// (`O_PATH`, following a link unless `flags` say not to), then changed through
    /// init's own descriptor for it (`/proc/self/fd/N`, which names that file and
    /// nothing else), so nothing renamed meanwhile changes which file it is. A file of
    /// /proc that is not the caller's own or no process's is left to the kernel (see
    /// below): no rule is judged here.
    fn on_file(
        &mut self,
        caller: &Caller,
        dirfd: i32,
        path: &[u8],
        flags: i32,
        tgid: u32,
        op: impl FnOnce(&CString, &OwnedFd) -> libc::c_int,
    ) -> Answer {
        let fd = if path.is_empty() {
            if flags & libc::AT_EMPTY_PATH == 0 || dirfd == libc::AT_FDCWD {
                return Answer::Errno(libc::ENOENT);
            }
            // The caller's descriptor itself.
            caller.entry(&format!("fd/{dirfd}")).map_err(|e| {
                if e == libc::ENOENT {
                    libc::EBADF
                } else {
                    e
                }
            })
        } else {
            let p = callers_path(path, tgid, caller.tid);
            let nofollow = if flags & libc::AT_SYMLINK_NOFOLLOW != 0 {
                libc::O_NOFOLLOW
            } else {
                0
            };
            caller.base(dirfd, &p).and_then(|base| {
                open_raw(
                    dir_fd(&base),
                    &CString::new(p).expect("read up to a NUL"),
                    libc::O_PATH | libc::O_CLOEXEC | nofollow,
                    0,
                )
            })
        };
        let fd = match fd {
            Ok(fd) => fd,
            Err(e) => return Answer::Errno(e),
        };
        // A file of /proc of the caller's own or of no process (`chmod` of
        // `/proc/sys/...`) is changed here as any file is, so a refusal is seen: procfs
        // decides by the credentials alone, and the caller's are init's. Any other (pid 1's
        // own, another process's; a pipe, socket or anonymous inode, which cannot be told
        // from init's own) is the kernel's to change for the caller: its refusal
        // (`EPERM`) is not reported.
        let private = on_private_fs(&fd);
        if private && !callers_proc(&fd, tgid) {
            return Answer::Continue;
        }
        // A file on none of the sandbox's mounts was handed to the command on a
        // descriptor (`cmd < notes.txt`, `>> ~/runs.log`), or reached through one of its
        // /proc forms: it is the host's, outside the view, and the descriptor gives
        // reading or writing its content, nothing else. Its mode, owner, times,
        // attributes and length are not changed for the caller (init, whose credentials
        // are the file owner's, would change them, as the kernel does for a process that
        // holds the descriptor outside any sandbox).
        if !private && !self.in_view(&fd) {
            let shown = match path {
                b"" => format!("/proc/self/fd/{dirfd}").into_bytes(),
                p => p.to_vec(),
            };
            self.report_name(
                self.answering,
                &shown,
                "a file outside the sandbox, handed to the command on a descriptor, is only read or written through it (its mode, owner, times, attributes and length are not changed)",
            );
            return Answer::Errno(libc::EACCES);
        }
        let at = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).expect("no NUL");
        let r = op(&at, &fd);
        drop(fd);
        result(r)
    }

    /// `open` with `O_CREAT` on the caller's behalf; see the module's header.
    #[allow(clippy::too_many_arguments)]
    fn open(
        &mut self,
        caller: &Caller,
        name: &str,
        dirfd: i32,
        path: &[u8],
        flags: i32,
        mode: u32,
        tgid: u32,
    ) -> Answer {
        let cloexec = flags & libc::O_CLOEXEC != 0;
        let judged = flags & libc::O_CREAT != 0 && self.names_judged();
        if path == b"/dev/tty" && !judged {
            // The caller's controlling terminal, which may not be init's (a process that
            // made a session of its own on a terminal it opened): the kernel's to open.
            return Answer::Continue;
        }
        if let Some(own) = own_descriptor(path, tgid, caller.tid) {
            // Never more than the descriptor gives: a file handed to the command for
            // reading (`< notes.txt`, outside its view) is not written through it.
            if asks_to_write(flags) {
                if let Some((pid, fd)) = descriptor_of(&own) {
                    if caller.reads_only(pid, fd) {
                        self.report_name(
                            "open",
                            path,
                            "a descriptor open for reading only is never opened again for writing (open the file by its path)",
                        );
                        return Answer::Errno(libc::EACCES);
                    }
                }
            }
            // The caller's own open file, opened again as the kernel would for it.
            return match caller.own(&own).and_then(|held| {
                open_raw(
                    libc::AT_FDCWD,
                    &held.path(),
                    (flags & !libc::O_CREAT) | libc::O_NOCTTY,
                    0,
                )
            }) {
                Ok(fd) if !judged && is_tty(&fd) => Answer::Continue,
                Ok(fd) => Answer::Fd { fd, cloexec },
                Err(e) => Answer::Errno(e),
            };
        }
        // `/proc/self/cwd/...` is the caller's working folder, not init's.
        let given = path;
        let mut path = callers_path(path, tgid, caller.tid);
        let mut base = match caller.base(dirfd, &path) {
            Ok(b) => b,
            Err(e) => return Answer::Errno(e),
        };
        let creating = flags & libc::O_CREAT != 0;
        let excl = creating && flags & libc::O_EXCL != 0;
        for _ in 0..MAX_LINKS {
            let cpath = CString::new(path.clone()).expect("no NUL in a path read to its NUL");
            if !excl {
                // Something there already: opened as it is, following a link as the
                // caller asked, without waiting on a FIFO (see below).
                // Never a terminal made init's own (see `opened`).
                let plain = (flags & !libc::O_CREAT) | libc::O_NONBLOCK | libc::O_NOCTTY;
                match open_raw(dir_fd(&base), &cpath, plain, 0) {
                    Ok(fd)
                        if flags & libc::O_NONBLOCK == 0
                            && flags & libc::O_ACCMODE == libc::O_RDONLY
                            && is_fifo(&fd) =>
                    {
                        // A reader's open of a FIFO waits for a writer: done as the
                        // caller asked, in a thread of its own. This reader is held until
                        // then: a writer that opened against it must never be left
                        // without one (closing it would end what that writer writes).
                        return self.fifo(caller, base, cpath, flags, Some(fd));
                    }
                    // A writer that found its reader already there (or any other file):
                    // this descriptor is the caller's, its O_NONBLOCK put back as asked.
                    // Opening again would wake the waiting reader with this open and
                    // leave the second waiting for a reader that is gone.
                    Ok(fd) => return self.opened(fd, flags, &path, tgid),
                    Err(libc::ENXIO) if flags & libc::O_NONBLOCK == 0 => {
                        // A FIFO without a reader, which the caller waits for.
                        return self.fifo(caller, base, cpath, flags, None);
                    }
                    Err(libc::ENOENT) if creating => {}
                    // A /proc entry of the caller's own below its /proc/self (`mem`), which
                    // init opens only as itself: a non-dumpable caller's is then refused
                    // to init where the caller may open it. Where no name is judged, the
                    // kernel opens it as the caller (as `opened` leaves /proc files).
                    Err(libc::EACCES | libc::EPERM)
                        if self.non_dumpable && path != given && !judged =>
                    {
                        return Answer::Continue
                    }
                    Err(e) => return Answer::Errno(e),
                }
            }
            // Nothing there: made here, exactly this final name (O_EXCL follows no link).
            if let Some(rule) = self.judged(&path) {
                let shown = self.shown(caller, dirfd, &path);
                self.report_name(name, shown.as_bytes(), &rule);
                return Answer::Errno(libc::EPERM);
            }
            if let Some(rule) = self.placed(dir_fd(&base), &path, false) {
                let at = self.located(caller, dirfd, &path);
                self.report_name(name, at.as_bytes(), &rule);
                return Answer::Errno(libc::EPERM);
            }
            match open_raw(dir_fd(&base), &cpath, flags | libc::O_EXCL, mode) {
                Ok(fd) => return self.opened(fd, flags, &path, tgid),
                Err(libc::EEXIST) if !excl => {}
                Err(e) => return Answer::Errno(e),
            }
            // There now, yet not there a moment ago: made meanwhile, or a link pointing
            // nowhere, which the kernel would follow to make its target.
            let mut target = vec![0u8; PATH_MAX];
            // SAFETY: readlinkat writes at most the buffer's length.
            let n = unsafe {
                libc::readlinkat(
                    dir_fd(&base),
                    cpath.as_ptr(),
                    target.as_mut_ptr().cast(),
                    target.len(),
                )
            };
            if n < 0 {
                continue; // not a link: made meanwhile; opened on the next turn
            }
            if flags & libc::O_NOFOLLOW != 0 {
                return Answer::Errno(libc::ELOOP);
            }
            target.truncate(n as usize);
            if target.first() != Some(&b'/') {
                // Relative to the link's folder.
                let name = final_name(&path).len();
                let trimmed = path.len() - path.iter().rev().take_while(|&&b| b == b'/').count();
                let mut joined = path[..trimmed - name].to_vec();
                joined.extend_from_slice(&target);
                target = joined;
                if target.is_empty() {
                    target = b".".to_vec();
                }
            } else {
                base = None;
            }
            path = target;
        }
        Answer::Errno(libc::ELOOP)
    }

    /// A file opened for the caller: checked, its `O_NONBLOCK` put back as asked.
    fn opened(&mut self, fd: OwnedFd, flags: i32, path: &[u8], tgid: u32) -> Answer {
        let judged = flags & libc::O_CREAT != 0 && self.names_judged();
        if on_private_fs(&fd) && !judged {
            // A file of /proc, reached through init's /proc/self or as the caller's own
            // (/proc/self/status): opened again by the kernel, in the caller's view. Sound,
            // as no rule is judged on a call that makes no name.
            return Answer::Continue;
        }
        if is_tty(&fd) && !judged {
            // A terminal: opened by the kernel for the caller, so that a session leader
            // without one gets it as its controlling terminal, as it would have (init's
            // opens never take one: O_NOCTTY).
            return Answer::Continue;
        }
        if on_private_fs(&fd) && callers_proc(&fd, tgid) {
            // A file of /proc of the caller's own (`echo 500 > /proc/self/oom_score_adj`)
            // or of no process: opened as the kernel would for the caller, which has
            // init's credentials and domain.
            return Answer::Fd {
                fd,
                cloexec: flags & libc::O_CLOEXEC != 0,
            };
        }
        if on_private_fs(&fd) {
            let shown = String::from_utf8_lossy(path).into_owned();
            self.report_name(
                "open",
                shown.as_bytes(),
                "not the caller's own: a file of /proc of pid 1 or another process (by /proc/N, or a link to /proc/self), or a pipe or socket reached through /proc, never opened for a process while names are judged",
            );
            return Answer::Errno(libc::EPERM);
        }
        if flags & libc::O_NONBLOCK == 0 {
            // SAFETY: fcntl on our descriptor.
            unsafe {
                let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
                libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
            }
        }
        Answer::Fd {
            fd,
            cloexec: flags & libc::O_CLOEXEC != 0,
        }
    }

    /// A FIFO opened for writing, which waits for its reader: in a thread of its own,
    /// which answers the notification itself.
    fn fifo(
        &mut self,
        caller: &Caller,
        base: Option<OwnedFd>,
        path: CString,
        flags: i32,
        hold: Option<OwnedFd>,
    ) -> Answer {
        let listener = caller.listener;
        let id = caller.id;
        let spawned = std::thread::Builder::new()
            .name("fifo".into())
            .spawn(move || {
                let opened = open_raw(dir_fd(&base), &path, flags & !libc::O_CREAT, 0);
                drop(hold);
                let answer = match opened {
                    Ok(fd) if on_private_fs(&fd) => Answer::Errno(libc::EPERM),
                    Ok(fd) => Answer::Fd {
                        fd,
                        cloexec: flags & libc::O_CLOEXEC != 0,
                    },
                    Err(e) => Answer::Errno(e),
                };
                send(listener, id, answer);
            });
        match spawned {
            Ok(_) => Answer::Deferred,
            Err(_) => Answer::Errno(libc::EAGAIN),
        }
    }
}

/// Answers notification `id`.
fn send(listener: RawFd, id: u64, answer: Answer) {
    let (val, error) = match answer {
        Answer::Gone | Answer::Deferred => return,
        Answer::Continue => {
            let mut resp = libc::seccomp_notif_resp {
                id,
                val: 0,
                error: 0,
                flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            };
            // SAFETY: SEND reads the struct it is pointed at.
            unsafe {
                libc::ioctl(
                    listener,
                    libc::SECCOMP_IOCTL_NOTIF_SEND as _,
                    &mut resp as *mut libc::seccomp_notif_resp,
                )
            };
            return;
        }
        Answer::Value(v) => (v, 0),
        Answer::Errno(e) => (0, -e),
        Answer::Fd { fd, cloexec } => {
            // Where the caller waits for the answer killable only (see [`killable_wait`]),
            // the file is installed in it first and the answer sent once this process let
            // go of its own copy: a copy kept past the answer holds the file open for
            // writing while the caller goes on, and a file it writes, closes and runs at
            // once would be "Text file busy". Elsewhere the answer goes with the file
            // (FLAG_SEND), since a caller interrupted between the two would keep a file
            // it never asked for.
            let send = !killable_wait();
            let add = libc::seccomp_notif_addfd {
                id,
                flags: if send {
                    libc::SECCOMP_ADDFD_FLAG_SEND as u32
                } else {
                    0
                },
                srcfd: fd.as_raw_fd() as u32,
                newfd: 0,
                newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
            };
            // SAFETY: ADDFD reads the struct it is pointed at; with FLAG_SEND it also
            // answers the notification with the new descriptor's number.
            let r = unsafe {
                libc::ioctl(
                    listener,
                    libc::SECCOMP_IOCTL_NOTIF_ADDFD as _,
                    &add as *const libc::seccomp_notif_addfd,
                )
            };
            drop(fd);
            match (r, send) {
                (r, false) if r >= 0 => (i64::from(r), 0),
                (r, true) if r >= 0 => return,
                _ => match errno() {
                    libc::ENOENT => return, // the caller is gone
                    e => (0, -e),           // EMFILE and the like: the caller's error
                },
            }
        }
    };
    let mut resp = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: SEND reads the struct it is pointed at. ENOENT (the caller is gone) needs
    // nothing more.
    unsafe {
        libc::ioctl(
            listener,
            libc::SECCOMP_IOCTL_NOTIF_SEND as _,
            &mut resp as *mut libc::seccomp_notif_resp,
        )
    };
}

/// The x86_64 calls older than the `*at` family, each rewritten as its `*at` twin from the
/// caller's working folder (`AT_FDCWD`) with the flags its name implies: `creat` is an
/// `openat` that creates and truncates, `rmdir` an `unlinkat` with `AT_REMOVEDIR`,
/// `lchown` a `fchownat` that does not follow a link. Decoded through the twin, each kind
/// of call is read from its arguments in one place.
#[cfg(target_arch = "x86_64")]
fn legacy(nr: i64, a: &[u64; 6]) -> Option<(&'static str, i64, [u64; 6])> {
    let cwd = libc::AT_FDCWD as u64;
    let flag = |f: i32| f as u64;
    Some(match nr {
        libc::SYS_open => ("open", libc::SYS_openat, [cwd, a[0], a[1], a[2], 0, 0]),
        libc::SYS_creat => {
            let flags = flag(libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC);
            ("creat", libc::SYS_openat, [cwd, a[0], flags, a[1], 0, 0])
        }
        libc::SYS_mkdir => ("mkdir", libc::SYS_mkdirat, [cwd, a[0], a[1], 0, 0, 0]),
        libc::SYS_mknod => ("mknod", libc::SYS_mknodat, [cwd, a[0], a[1], a[2], 0, 0]),
        libc::SYS_rename => ("rename", libc::SYS_renameat, [cwd, a[0], cwd, a[1], 0, 0]),
        libc::SYS_link => ("link", libc::SYS_linkat, [cwd, a[0], cwd, a[1], 0, 0]),
        libc::SYS_symlink => ("symlink", libc::SYS_symlinkat, [a[0], cwd, a[1], 0, 0, 0]),
        libc::SYS_unlink => ("unlink", libc::SYS_unlinkat, [cwd, a[0], 0, 0, 0, 0]),
        libc::SYS_rmdir => {
            let flags = flag(libc::AT_REMOVEDIR);
            ("rmdir", libc::SYS_unlinkat, [cwd, a[0], flags, 0, 0, 0])
        }
        libc::SYS_chmod => ("chmod", libc::SYS_fchmodat, [cwd, a[0], a[1], 0, 0, 0]),
        libc::SYS_stat => ("stat", libc::SYS_newfstatat, [cwd, a[0], a[1], 0, 0, 0]),
        libc::SYS_lstat => {
            let flags = flag(libc::AT_SYMLINK_NOFOLLOW);
            (
                "lstat",
                libc::SYS_newfstatat,
                [cwd, a[0], a[1], flags, 0, 0],
            )
        }
        libc::SYS_access => ("access", libc::SYS_faccessat, [cwd, a[0], a[1], 0, 0, 0]),
        libc::SYS_readlink => (
            "readlink",
            libc::SYS_readlinkat,
            [cwd, a[0], a[1], a[2], 0, 0],
        ),
        libc::SYS_chown => ("chown", libc::SYS_fchownat, [cwd, a[0], a[1], a[2], 0, 0]),
        libc::SYS_lchown => {
            let flags = flag(libc::AT_SYMLINK_NOFOLLOW);
            (
                "lchown",
                libc::SYS_fchownat,
                [cwd, a[0], a[1], a[2], flags, 0],
            )
        }
        _ => return None,
    })
}

/// A naming call, decoded from its number and arguments.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    name: &'static str,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open {
        dirfd: i32,
        path: u64,
        flags: i32,
        mode: u32,
    },
    Mkdir {
        dirfd: i32,
        path: u64,
        mode: u32,
    },
    Mknod {
        dirfd: i32,
        path: u64,
        mode: u32,
        dev: u64,
    },
    Rename {
        olddir: i32,
        old: u64,
        newdir: i32,
        new: u64,
        flags: u32,
    },
    Link {
        olddir: i32,
        old: u64,
        newdir: i32,
        new: u64,
        flags: i32,
    },
    Symlink {
        target: u64,
        newdir: i32,
        new: u64,
    },
    /// `unlinkat` (`AT_REMOVEDIR`: `rmdir`).
    Unlink {
        dirfd: i32,
        path: u64,
        flags: i32,
    },
    Truncate {
        path: u64,
        len: i64,
    },
    Chmod {
        dirfd: i32,
        path: u64,
        mode: u32,
        flags: i32,
    },
    Chown {
        dirfd: i32,
        path: u64,
        uid: u32,
        gid: u32,
        flags: i32,
    },
    /// A call on a descriptor of the caller's.
    OnFd {
        fd: i32,
        op: FdOp,
    },
    /// `setxattr`, `lsetxattr` (`follow` false), `removexattr`, `lremovexattr`.
    Xattr {
        path: u64,
        name: u64,
        value: u64,
        size: u64,
        flags: i32,
        follow: bool,
        remove: bool,
    },
    /// `setxattrat` and `removexattrat`: `path` from `dirfd` (the descriptor itself
    /// with `AT_EMPTY_PATH` and an empty or null path), the value behind `args`.
    XattrAt {
        dirfd: i32,
        path: u64,
        at_flags: u32,
        name: u64,
        args: u64,
        usize: u64,
        remove: bool,
    },
    /// A call that looks `path` up and changes nothing ([`looking_calls`]): `flags` as
    /// `fstatat` takes them (`AT_SYMLINK_NOFOLLOW`, `AT_EMPTY_PATH`), and for the calls
    /// that check the file itself (`faccessat`, `chdir`) the access asked.
    Lookup {
        dirfd: i32,
        path: u64,
        flags: i32,
        access: Option<i32>,
    },
    /// A file's times: `utimensat` (`timespec[2]`), `futimesat` and `utimes`
    /// (`timeval[2]`), `utime` (`utimbuf`); a null path is the descriptor `dirfd` itself.
    Times {
        dirfd: i32,
        path: u64,
        times: u64,
        flags: i32,
        form: TimeForm,
    },
}

/// What a call on a descriptor does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FdOp {
    Chmod(u32),
    Chown(u32, u32),
    SetXattr {
        name: u64,
        value: u64,
        size: u64,
        flags: i32,
    },
    RemoveXattr {
        name: u64,
    },
}

/// How a call spells the times it sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeForm {
    Spec,
    Val,
    Buf,
}

impl TimeForm {
    /// The size of the times argument.
    fn size(self) -> usize {
        match self {
            TimeForm::Spec | TimeForm::Val => 32,
            TimeForm::Buf => 16,
        }
    }

    /// The times as `utimensat` takes them (`raw` as read from the caller).
    fn spec(self, raw: &[u8]) -> [libc::timespec; 2] {
        let word =
            |i: usize| i64::from_ne_bytes(raw[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let at = |sec: i64, nsec: i64| libc::timespec {
            tv_sec: sec,
            tv_nsec: nsec,
        };
        match self {
            TimeForm::Spec => [at(word(0), word(1)), at(word(2), word(3))],
            TimeForm::Val => [at(word(0), word(1) * 1000), at(word(2), word(3) * 1000)],
            TimeForm::Buf => [at(word(0), 0), at(word(1), 0)],
        }
    }
}

impl Call {
    fn decode(nr: i64, a: &[u64; 6]) -> Option<Call> {
        #[cfg(target_arch = "x86_64")]
        if let Some((name, at, args)) = legacy(nr, a) {
            return Call::decode(at, &args).map(|c| Call { name, ..c });
        }
        let fd = |v: u64| v as i32;
        let lookup = |dirfd, path, flags, access| Kind::Lookup {
            dirfd,
            path,
            flags,
            access,
        };
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
        let cwd = libc::AT_FDCWD;
        let (name, kind) = match nr {
            libc::SYS_openat => (
                "openat",
                Kind::Open {
                    dirfd: fd(a[0]),
                    path: a[1],
                    flags: a[2] as i32,
                    mode: a[3] as u32,
                },
            ),
            libc::SYS_mkdirat => (
                "mkdirat",
                Kind::Mkdir {
                    dirfd: fd(a[0]),
                    path: a[1],
                    mode: a[2] as u32,
                },
            ),
            libc::SYS_mknodat => (
                "mknodat",
                Kind::Mknod {
                    dirfd: fd(a[0]),
                    path: a[1],
                    mode: a[2] as u32,
                    dev: a[3],
                },
            ),
            libc::SYS_renameat | libc::SYS_renameat2 => (
                if nr == libc::SYS_renameat {
                    "renameat"
                } else {
                    "renameat2"
                },
                Kind::Rename {
                    olddir: fd(a[0]),
                    old: a[1],
                    newdir: fd(a[2]),
                    new: a[3],
                    flags: if nr == libc::SYS_renameat2 {
                        a[4] as u32
                    } else {
                        0
                    },
                },
            ),
            libc::SYS_linkat => (
                "linkat",
                Kind::Link {
                    olddir: fd(a[0]),
                    old: a[1],
                    newdir: fd(a[2]),
                    new: a[3],
                    flags: a[4] as i32,
                },
            ),
            libc::SYS_symlinkat => (
                "symlinkat",
                Kind::Symlink {
                    target: a[0],
                    newdir: fd(a[1]),
                    new: a[2],
                },
            ),
            libc::SYS_unlinkat => (
                "unlinkat",
                Kind::Unlink {
                    dirfd: fd(a[0]),
                    path: a[1],
                    flags: a[2] as i32,
                },
            ),
            libc::SYS_truncate => (
                "truncate",
                Kind::Truncate {
                    path: a[0],
                    len: a[1] as i64,
                },
            ),
            libc::SYS_fchmodat | SYS_FCHMODAT2 => (
                if nr == SYS_FCHMODAT2 {
                    "fchmodat2"
                } else {
                    "fchmodat"
                },
                Kind::Chmod {
                    dirfd: fd(a[0]),
                    path: a[1],
                    mode: a[2] as u32,
                    flags: if nr == SYS_FCHMODAT2 { a[3] as i32 } else { 0 },
                },
            ),
            libc::SYS_fchownat => (
                "fchownat",
                Kind::Chown {
                    dirfd: fd(a[0]),
                    path: a[1],
                    uid: a[2] as u32,
                    gid: a[3] as u32,
                    flags: a[4] as i32,
                },
            ),
            libc::SYS_fchmod => (
                "fchmod",
                Kind::OnFd {
                    fd: fd(a[0]),
                    op: FdOp::Chmod(a[1] as u32),
                },
            ),
            libc::SYS_fchown => (
                "fchown",
                Kind::OnFd {
                    fd: fd(a[0]),
                    op: FdOp::Chown(a[1] as u32, a[2] as u32),
                },
            ),
            libc::SYS_fsetxattr => (
                "fsetxattr",
                Kind::OnFd {
                    fd: fd(a[0]),
                    op: FdOp::SetXattr {
                        name: a[1],
                        value: a[2],
                        size: a[3],
                        flags: a[4] as i32,
                    },
                },
            ),
            libc::SYS_fremovexattr => (
                "fremovexattr",
                Kind::OnFd {
                    fd: fd(a[0]),
                    op: FdOp::RemoveXattr { name: a[1] },
                },
            ),
            libc::SYS_setxattr | libc::SYS_lsetxattr => (
                if nr == libc::SYS_setxattr {
                    "setxattr"
                } else {
                    "lsetxattr"
                },
                Kind::Xattr {
                    path: a[0],
                    name: a[1],
                    value: a[2],
                    size: a[3],
                    flags: a[4] as i32,
                    follow: nr == libc::SYS_setxattr,
                    remove: false,
                },
            ),
            libc::SYS_removexattr | libc::SYS_lremovexattr => (
                if nr == libc::SYS_removexattr {
                    "removexattr"
                } else {
                    "lremovexattr"
                },
                Kind::Xattr {
                    path: a[0],
                    name: a[1],
                    value: 0,
                    size: 0,
                    flags: 0,
                    follow: nr == libc::SYS_removexattr,
                    remove: true,
                },
            ),
            libc::SYS_newfstatat | libc::SYS_statx => {
                let stat = nr == libc::SYS_newfstatat;
                let flags = if stat { a[3] } else { a[2] };
                (
                    if stat { "newfstatat" } else { "statx" },
                    lookup(fd(a[0]), a[1], flags as i32, None),
                )
            }
            libc::SYS_faccessat | libc::SYS_faccessat2 => {
                let two = nr == libc::SYS_faccessat2;
                let flags = if two { a[3] as i32 } else { 0 };
                (
                    if two { "faccessat2" } else { "faccessat" },
                    lookup(fd(a[0]), a[1], flags, Some(a[2] as i32)),
                )
            }
            libc::SYS_readlinkat => (
                "readlinkat",
                lookup(fd(a[0]), a[1], libc::AT_SYMLINK_NOFOLLOW, None),
            ),
            libc::SYS_getxattr | libc::SYS_listxattr => (
                if nr == libc::SYS_getxattr {
                    "getxattr"
                } else {
                    "listxattr"
                },
                lookup(libc::AT_FDCWD, a[0], 0, None),
            ),
            libc::SYS_lgetxattr | libc::SYS_llistxattr => (
                if nr == libc::SYS_lgetxattr {
                    "lgetxattr"
                } else {
                    "llistxattr"
                },
                lookup(libc::AT_FDCWD, a[0], libc::AT_SYMLINK_NOFOLLOW, None),
            ),
            SYS_GETXATTRAT | SYS_LISTXATTRAT => (
                if nr == SYS_GETXATTRAT {
                    "getxattrat"
                } else {
                    "listxattrat"
                },
                lookup(fd(a[0]), a[1], a[2] as i32, None),
            ),
            libc::SYS_chdir => ("chdir", lookup(libc::AT_FDCWD, a[0], 0, Some(libc::X_OK))),
            libc::SYS_statfs => ("statfs", lookup(libc::AT_FDCWD, a[0], 0, None)),
            // A program run: its file looked up and checked for running; the kernel runs
            // it (or refuses) as it would have.
            libc::SYS_execve => ("execve", lookup(libc::AT_FDCWD, a[0], 0, Some(libc::X_OK))),
            libc::SYS_execveat => (
                "execveat",
                lookup(fd(a[0]), a[1], a[4] as i32, Some(libc::X_OK)),
            ),
            SYS_SETXATTRAT | SYS_REMOVEXATTRAT => {
                let remove = nr == SYS_REMOVEXATTRAT;
                (
                    if remove {
                        "removexattrat"
                    } else {
                        "setxattrat"
                    },
                    Kind::XattrAt {
                        dirfd: fd(a[0]),
                        path: a[1],
                        at_flags: a[2] as u32,
                        name: a[3],
                        args: if remove { 0 } else { a[4] },
                        usize: if remove { 0 } else { a[5] },
                        remove,
                    },
                )
            }
            libc::SYS_utimensat => (
                "utimensat",
                Kind::Times {
                    dirfd: fd(a[0]),
                    path: a[1],
                    times: a[2],
                    flags: a[3] as i32,
                    form: TimeForm::Spec,
                },
            ),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_futimesat => (
                "futimesat",
                Kind::Times {
                    dirfd: fd(a[0]),
                    path: a[1],
                    times: a[2],
                    flags: 0,
                    form: TimeForm::Val,
                },
            ),
            #[cfg(target_arch = "x86_64")]
            libc::SYS_utimes | libc::SYS_utime => (
                if nr == libc::SYS_utimes {
                    "utimes"
                } else {
                    "utime"
                },
                Kind::Times {
                    dirfd: cwd,
                    path: a[0],
                    times: a[1],
                    flags: 0,
                    form: if nr == libc::SYS_utimes {
                        TimeForm::Val
                    } else {
                        TimeForm::Buf
                    },
                },
            ),
            _ => return None,
        };
        Some(Call { name, kind })
    }

    /// The call's path arguments, read from the caller's memory: the path, or (old, new),
    /// or (target, new).
    fn read(&self, caller: &Caller, mem: &std::fs::File) -> Result<Vec<Vec<u8>>, i32> {
        // The calls with more than paths: a name, then a value's bytes (an attribute),
        // or the path (empty where none), then the times' bytes (empty: now).
        let bytes = |addr: u64, len: u64| caller.bytes(mem, addr, len);
        match self.kind {
            Kind::OnFd {
                op: FdOp::SetXattr {
                    name, value, size, ..
                },
                ..
            } => return Ok(vec![caller.string(mem, name)?, bytes(value, size)?]),
            Kind::OnFd {
                op: FdOp::RemoveXattr { name },
                ..
            } => return Ok(vec![caller.string(mem, name)?]),
            Kind::OnFd { .. } => return Ok(vec![]),
            Kind::Xattr {
                path,
                name,
                value,
                size,
                ..
            } => {
                return Ok(vec![
                    caller.string(mem, path)?,
                    caller.string(mem, name)?,
                    bytes(value, size)?,
                ])
            }
            Kind::XattrAt {
                path,
                at_flags,
                name,
                args,
                usize,
                remove,
                ..
            } => {
                // Each error as the kernel gives it, in its order: the flags, the
                // arguments' struct, the name, the value, the path.
                if at_flags & !((libc::AT_SYMLINK_NOFOLLOW | libc::AT_EMPTY_PATH) as u32) != 0 {
                    return Err(libc::EINVAL);
                }
                let path = || {
                    if path == 0 && at_flags & libc::AT_EMPTY_PATH as u32 != 0 {
                        Ok(Vec::new()) // the descriptor itself
                    } else {
                        caller.string(mem, path)
                    }
                };
                if remove {
                    let name = caller.string(mem, name)?;
                    return Ok(vec![path()?, name]);
                }
                if usize < XATTR_ARGS_SIZE {
                    return Err(libc::EINVAL);
                }
                if usize > 4096 {
                    return Err(libc::E2BIG);
                }
                let (value, size, flags) = xattr_args(&bytes(args, usize)?)?;
                let name = caller.string(mem, name)?;
                let value = bytes(value, size)?;
                return Ok(vec![path()?, name, value, flags.to_ne_bytes().to_vec()]);
            }
            Kind::Lookup { path, flags, .. } => {
                return Ok(vec![if path == 0 && flags & libc::AT_EMPTY_PATH != 0 {
                    Vec::new() // a descriptor itself
                } else {
                    caller.string(mem, path)?
                }]);
            }
            Kind::Times {
                path, times, form, ..
            } => {
                let path = if path == 0 {
                    Vec::new()
                } else {
                    caller.string(mem, path)?
                };
                let times = if times == 0 {
                    Vec::new()
                } else {
                    bytes(times, form.size() as u64)?
                };
                return Ok(vec![path, times]);
            }
            _ => {}
        }
        let addrs: Vec<u64> = match self.kind {
            Kind::OnFd { .. }
            | Kind::Xattr { .. }
            | Kind::XattrAt { .. }
            | Kind::Lookup { .. }
            | Kind::Times { .. } => vec![],
            Kind::Open { path, .. }
            | Kind::Mkdir { path, .. }
            | Kind::Mknod { path, .. }
            | Kind::Unlink { path, .. }
            | Kind::Truncate { path, .. }
            | Kind::Chmod { path, .. }
            | Kind::Chown { path, .. } => vec![path],
            Kind::Rename { old, new, .. } | Kind::Link { old, new, .. } => vec![old, new],
            Kind::Symlink { target, new, .. } => vec![target, new],
        };
        addrs.into_iter().map(|a| caller.string(mem, a)).collect()
    }

    /// The names the call makes, with the index of the folder argument they are relative
    /// to (`0`: the first dirfd, `1`: the second). `open` is judged where it makes its
    /// file (see [`Supervisor::open`]); an exchange makes both names anew.
    fn made<'s>(&self, s: &'s [Vec<u8>]) -> Vec<(&'s [u8], usize)> {
        match self.kind {
            Kind::OnFd { .. }
            | Kind::Xattr { .. }
            | Kind::XattrAt { .. }
            | Kind::Lookup { .. }
            | Kind::Times { .. } => vec![],
            Kind::Open { .. }
            | Kind::Unlink { .. }
            | Kind::Truncate { .. }
            | Kind::Chmod { .. }
            | Kind::Chown { .. } => vec![],
            Kind::Mkdir { .. } | Kind::Mknod { .. } => vec![(&s[0], 0)],
            Kind::Rename { flags, .. } if flags & libc::RENAME_EXCHANGE != 0 => {
                vec![(&s[0], 0), (&s[1], 1)]
            }
            Kind::Rename { .. } | Kind::Link { .. } | Kind::Symlink { .. } => vec![(&s[1], 1)],
        }
    }

    /// Whether the call makes a name (the calls [`Supervisor::judged`] is for).
    fn makes_names(&self) -> bool {
        match self.kind {
            Kind::Open { flags, .. } => flags & libc::O_CREAT != 0,
            Kind::Mkdir { .. }
            | Kind::Mknod { .. }
            | Kind::Rename { .. }
            | Kind::Link { .. }
            | Kind::Symlink { .. } => true,
            Kind::Unlink { .. }
            | Kind::Truncate { .. }
            | Kind::Chmod { .. }
            | Kind::Chown { .. }
            | Kind::OnFd { .. }
            | Kind::Xattr { .. }
            | Kind::XattrAt { .. }
            | Kind::Lookup { .. }
            | Kind::Times { .. } => false,
        }
    }

    /// Whether the call only reads: an open without a flag that writes, a lookup.
    fn reads(&self) -> bool {
        match self.kind {
            Kind::Lookup { .. } => true,
            Kind::Open { flags, .. } => {
                flags & (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) == 0
            }
            _ => false,
        }
    }

    /// The folder descriptor argument `which` (see [`Call::made`]).
    fn dirfd(&self, which: usize) -> i32 {
        match (self.kind, which) {
            (Kind::Open { dirfd, .. }, _)
            | (Kind::Mkdir { dirfd, .. }, _)
            | (Kind::Mknod { dirfd, .. }, _)
            | (Kind::Unlink { dirfd, .. }, _)
            | (Kind::Chmod { dirfd, .. }, _)
            | (Kind::Chown { dirfd, .. }, _) => dirfd,
            (Kind::Truncate { .. }, _) | (Kind::Xattr { .. }, _) => libc::AT_FDCWD,
            (Kind::OnFd { fd, .. }, _) => fd,
            (Kind::Times { dirfd, .. }, _)
            | (Kind::XattrAt { dirfd, .. }, _)
            | (Kind::Lookup { dirfd, .. }, _) => dirfd,
            (Kind::Rename { olddir, .. }, 0) | (Kind::Link { olddir, .. }, 0) => olddir,
            (Kind::Rename { newdir, .. }, _)
            | (Kind::Link { newdir, .. }, _)
            | (Kind::Symlink { newdir, .. }, _) => newdir,
        }
    }
}

/// The mounts laid once bwrap has made its own (bwrap.rs, `Laid`): the descriptor init
/// asks for them on, and what init checks of each before the command starts.
pub type Laying = (i32, Vec<LaidCheck>);

/// One laid mount as init finds it: at `inside`, the root of a mount of the file or folder
/// the host laid there (its device and inode), read-only unless `rw`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaidCheck {
    pub inside: std::path::PathBuf,
    pub rw: bool,
    pub dev: (u32, u32),
    pub ino: u64,
}

/// The command line init gets for `patterns`, what it watches, the report descriptor and
/// the laid mounts: what init.rs parses back with [`parse_init_args`].
pub fn init_args(
    patterns: &[String],
    watch: &Watch,
    report_fd: Option<i32>,
    laying: Option<&Laying>,
) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    for p in patterns {
        out.push("--deny-create".into());
        out.push(p.into());
    }
    if watch.writes {
        out.push("--watch-writes".into());
    }
    if watch.reads {
        out.push("--watch-reads".into());
    }
    for d in &watch.read_dirs {
        out.push("--deny-read-dir".into());
        out.push(d.into());
    }
    for (pin, rule) in &watch.pins {
        out.push("--pin".into());
        out.push(pin.into());
        out.push(rule.into());
    }
    for (name, rule) in &watch.names {
        out.push("--deny-name".into());
        out.push(name.into());
        out.push(rule.into());
    }
    for (place, rule) in &watch.places {
        out.push("--deny-place".into());
        out.push(place.into());
        out.push(rule.into());
    }
    for root in &watch.repos {
        out.push("--deny-git-below".into());
        out.push(root.into());
    }
    for cover in &watch.covers {
        out.push("--cover".into());
        out.push(cover.into());
    }
    if let Some(fd) = report_fd {
        out.push("--report-fd".into());
        out.push(fd.to_string().into());
    }
    if let Some((fd, laid)) = laying {
        out.push("--laid-fd".into());
        out.push(fd.to_string().into());
        for l in laid {
            out.push("--laid".into());
            out.push(l.inside.clone().into());
            out.push(if l.rw { "rw" } else { "ro" }.into());
            out.push(format!("{}:{}:{}", l.dev.0, l.dev.1, l.ino).into());
        }
    }
    out
}

/// init's options before `--`: the patterns, what it watches, the report descriptor and
/// the laid mounts (a `--laid` of neither `ro` nor `rw` is taken as `ro`, checked the
/// stricter way; one whose identity does not parse is kept with none, which no file has,
/// so init refuses to start the command).
pub fn parse_init_args(
    args: &[std::ffi::OsString],
) -> (Vec<String>, Watch, Option<i32>, Option<Laying>) {
    let mut patterns = Vec::new();
    let mut watch = Watch::default();
    let mut report = None;
    let mut laying: Option<Laying> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_bytes() {
            b"--" => break,
            b"--deny-create" => {
                if let Some(p) = it.next() {
                    patterns.push(p.to_string_lossy().into_owned());
                }
            }
            b"--report-fd" => report = it.next().and_then(|v| v.to_str()?.parse().ok()),
            b"--laid-fd" => {
                if let Some(fd) = it.next().and_then(|v| v.to_str()?.parse().ok()) {
                    laying.get_or_insert_with(|| (fd, Vec::new())).0 = fd;
                }
            }
            b"--laid" => {
                if let (Some(p), Some(rw), Some(id)) = (it.next(), it.next(), it.next()) {
                    let mut parts = id.to_str().unwrap_or_default().split(':');
                    let mut num = || parts.next().and_then(|n| n.parse::<u64>().ok());
                    let (major, minor, ino) = (num(), num(), num());
                    let check = match (major, minor, ino) {
                        (Some(major), Some(minor), Some(ino)) => LaidCheck {
                            inside: p.into(),
                            rw: rw.as_bytes() == b"rw",
                            dev: (
                                u32::try_from(major).unwrap_or(u32::MAX),
                                u32::try_from(minor).unwrap_or(u32::MAX),
                            ),
                            ino,
                        },
                        _ => LaidCheck {
                            inside: p.into(),
                            rw: false,
                            dev: (u32::MAX, u32::MAX),
                            ino: 0,
                        },
                    };
                    laying.get_or_insert_with(|| (-1, Vec::new())).1.push(check);
                }
            }
            b"--watch-writes" => watch.writes = true,
            b"--watch-reads" => watch.reads = true,
            b"--deny-read-dir" => {
                if let Some(d) = it.next() {
                    watch.read_dirs.push(d.into());
                }
            }
            b"--pin" => {
                if let (Some(p), Some(r)) = (it.next(), it.next()) {
                    watch
                        .pins
                        .push((p.into(), r.to_string_lossy().into_owned()));
                }
            }
            b"--cover" => {
                if let Some(c) = it.next() {
                    watch.covers.push(c.into());
                }
            }
            b"--deny-git-below" => {
                if let Some(r) = it.next() {
                    watch.repos.push(r.into());
                }
            }
            b"--deny-place" => {
                if let (Some(p), Some(r)) = (it.next(), it.next()) {
                    watch
                        .places
                        .push((p.into(), r.to_string_lossy().into_owned()));
                }
            }
            b"--deny-name" => {
                if let (Some(n), Some(r)) = (it.next(), it.next()) {
                    let s = |v: &std::ffi::OsString| v.to_string_lossy().into_owned();
                    watch.names.push((s(n), s(r)));
                }
            }
            _ => {}
        }
    }
    (patterns, watch, report, laying)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_is_orphaned_only_when_hung_up_with_nothing_to_read() {
        assert!(hung_up(libc::POLLHUP));
        assert!(!hung_up(libc::POLLHUP | libc::POLLIN));
        assert!(!hung_up(libc::POLLIN));
        assert!(!hung_up(0));
        assert!(!hung_up(libc::POLLERR));
    }

    /// A kernel's release names its version; the supervisor needs 5.14, and a release
    /// that names no version is taken as too old, never as new enough.
    #[test]
    fn the_supervisor_needs_linux_5_14_by_the_release() {
        assert_eq!(kernel_version("6.1.0-28-amd64"), (6, 1));
        assert_eq!(kernel_version("5.14.21-150400.24-default"), (5, 14));
        assert_eq!(kernel_version("4.19"), (4, 19));
        assert_eq!(kernel_version("unknown"), (0, 0));
        assert_eq!(too_old("5.14.0"), None);
        assert_eq!(too_old("6.18.3"), None);
        assert_eq!(too_old("10.0"), None);
        let old = too_old("5.13.19-arch1").expect("5.13 is refused");
        assert!(
            old.contains("Linux 5.13.19-arch1") && old.contains("5.14"),
            "{old}"
        );
        assert!(too_old("4.19.0").is_some());
        assert!(too_old("").is_some());
    }

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    /// Each call older than the `*at` family decodes as the kernel runs it: its `*at`
    /// twin from the working folder, with the flags its name implies, under its own name.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_calls_without_a_folder_argument_decode_as_their_at_twins() {
        let cwd = libc::AT_FDCWD;
        let a = [11, 22, 33, 44, 55, 66];
        let call = |nr| Call::decode(nr, &a).unwrap();
        let is = |nr, name, kind| assert_eq!(call(nr), Call { name, kind }, "{name}");
        is(
            libc::SYS_open,
            "open",
            Kind::Open {
                dirfd: cwd,
                path: 11,
                flags: 22,
                mode: 33,
            },
        );
        let creating = libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC;
        is(
            libc::SYS_creat,
            "creat",
            Kind::Open {
                dirfd: cwd,
                path: 11,
                flags: creating,
                mode: 22,
            },
        );
        is(
            libc::SYS_mkdir,
            "mkdir",
            Kind::Mkdir {
                dirfd: cwd,
                path: 11,
                mode: 22,
            },
        );
        is(
            libc::SYS_mknod,
            "mknod",
            Kind::Mknod {
                dirfd: cwd,
                path: 11,
                mode: 22,
                dev: 33,
            },
        );
        is(
            libc::SYS_rename,
            "rename",
            Kind::Rename {
                olddir: cwd,
                old: 11,
                newdir: cwd,
                new: 22,
                flags: 0,
            },
        );
        is(
            libc::SYS_link,
            "link",
            Kind::Link {
                olddir: cwd,
                old: 11,
                newdir: cwd,
                new: 22,
                flags: 0,
            },
        );
        is(
            libc::SYS_symlink,
            "symlink",
            Kind::Symlink {
                target: 11,
                newdir: cwd,
                new: 22,
            },
        );
        is(
            libc::SYS_unlink,
            "unlink",
            Kind::Unlink {
                dirfd: cwd,
                path: 11,
                flags: 0,
            },
        );
        let rmdir = libc::AT_REMOVEDIR;
        is(
            libc::SYS_rmdir,
            "rmdir",
            Kind::Unlink {
                dirfd: cwd,
                path: 11,
                flags: rmdir,
            },
        );
        is(
            libc::SYS_chmod,
            "chmod",
            Kind::Chmod {
                dirfd: cwd,
                path: 11,
                mode: 22,
                flags: 0,
            },
        );
        let chown = |flags| Kind::Chown {
            dirfd: cwd,
            path: 11,
            uid: 22,
            gid: 33,
            flags,
        };
        is(libc::SYS_chown, "chown", chown(0));
        is(libc::SYS_lchown, "lchown", chown(libc::AT_SYMLINK_NOFOLLOW));
        // The twins themselves, with a folder argument and flags of their own.
        is(
            libc::SYS_renameat2,
            "renameat2",
            Kind::Rename {
                olddir: 11,
                old: 22,
                newdir: 33,
                new: 44,
                flags: 55,
            },
        );
        is(
            libc::SYS_fchownat,
            "fchownat",
            Kind::Chown {
                dirfd: 11,
                path: 22,
                uid: 33,
                gid: 44,
                flags: 55,
            },
        );
        assert_eq!(Call::decode(libc::SYS_read, &a), None);
    }

    /// `setxattrat` and `removexattrat` decode with their folder, `at_flags` and name,
    /// `setxattrat` with its arguments' struct and its size (`removexattrat` has none);
    /// the same numbers on every architecture.
    #[test]
    fn the_attribute_calls_from_a_folder_decode_with_their_flags() {
        let a = [11, 22, 33, 44, 55, 66];
        let call = |nr| Call::decode(nr, &a).unwrap();
        let at = |remove, args, usize| Kind::XattrAt {
            dirfd: 11,
            path: 22,
            at_flags: 33,
            name: 44,
            args,
            usize,
            remove,
        };
        assert_eq!(
            call(463),
            Call {
                name: "setxattrat",
                kind: at(false, 55, 66)
            }
        );
        assert_eq!(
            call(466),
            Call {
                name: "removexattrat",
                kind: at(true, 0, 0)
            }
        );
        // A descriptor and the working folder as the folder argument.
        let cwd = Call::decode(463, &[libc::AT_FDCWD as u64, 0, 0x1000, 1, 2, 16]).unwrap();
        assert_eq!(cwd.dirfd(0), libc::AT_FDCWD);
        assert_eq!(call(466).dirfd(0), 11);
        for c in [call(463), call(466)] {
            assert!(!c.makes_names() && !c.reads());
            assert!(c.made(&[b"a".to_vec(), b"user.x".to_vec()]).is_empty());
        }
    }

    /// Each call that looks a path up decodes as the lookup it does: its folder, its
    /// path, whether it follows a final link or names a descriptor itself (as `fstatat`
    /// takes those), and for `access` and `chdir` what is checked of the file itself.
    #[test]
    fn the_calls_that_look_a_path_up_decode_as_lookups() {
        let cwd = libc::AT_FDCWD;
        let nofollow = libc::AT_SYMLINK_NOFOLLOW;
        let a = [11, 22, 33, 44, 55, 66];
        let is = |nr, name, dirfd, path, flags, access| {
            let want = Call {
                name,
                kind: Kind::Lookup {
                    dirfd,
                    path,
                    flags,
                    access,
                },
            };
            let got = Call::decode(nr, &a).unwrap();
            assert_eq!(got, want, "{name}");
            assert!(got.reads() && !got.makes_names(), "{name}");
            assert_eq!(got.dirfd(0), dirfd, "{name}");
        };
        is(libc::SYS_newfstatat, "newfstatat", 11, 22, 44, None);
        is(libc::SYS_statx, "statx", 11, 22, 33, None);
        is(libc::SYS_faccessat, "faccessat", 11, 22, 0, Some(33));
        is(libc::SYS_faccessat2, "faccessat2", 11, 22, 44, Some(33));
        is(libc::SYS_readlinkat, "readlinkat", 11, 22, nofollow, None);
        is(libc::SYS_getxattr, "getxattr", cwd, 11, 0, None);
        is(libc::SYS_lgetxattr, "lgetxattr", cwd, 11, nofollow, None);
        is(libc::SYS_listxattr, "listxattr", cwd, 11, 0, None);
        is(libc::SYS_llistxattr, "llistxattr", cwd, 11, nofollow, None);
        is(464, "getxattrat", 11, 22, 33, None);
        is(465, "listxattrat", 11, 22, 33, None);
        is(libc::SYS_chdir, "chdir", cwd, 11, 0, Some(libc::X_OK));
        is(libc::SYS_statfs, "statfs", cwd, 11, 0, None);
        is(libc::SYS_execve, "execve", cwd, 11, 0, Some(libc::X_OK));
        is(libc::SYS_execveat, "execveat", 11, 22, 55, Some(libc::X_OK));
        #[cfg(target_arch = "x86_64")]
        {
            is(libc::SYS_stat, "stat", cwd, 11, 0, None);
            is(libc::SYS_lstat, "lstat", cwd, 11, nofollow, None);
            is(libc::SYS_access, "access", cwd, 11, 0, Some(22));
            is(libc::SYS_readlink, "readlink", cwd, 11, nofollow, None);
        }
        // Every call of the list decodes.
        for (name, nr, _) in looking_calls() {
            assert!(Call::decode(nr, &a).is_some(), "{name}");
        }
    }

    /// `struct xattr_args` as the kernel reads it: value address, size and flags; a
    /// struct shorter than the first one is EINVAL, a longer one passes only with zeros
    /// past the known fields, and never past a page.
    #[test]
    fn an_attributes_struct_is_read_as_the_kernel_reads_it() {
        let raw = |value: u64, size: u32, flags: u32, tail: &[u8]| {
            let mut v = value.to_ne_bytes().to_vec();
            v.extend(size.to_ne_bytes());
            v.extend(flags.to_ne_bytes());
            v.extend_from_slice(tail);
            v
        };
        assert_eq!(
            xattr_args(&raw(0x7f00_1000, 5, 1, &[])),
            Ok((0x7f00_1000, 5, 1))
        );
        assert_eq!(
            xattr_args(&raw(u64::MAX, u32::MAX, 2, &[0; 8])),
            Ok((u64::MAX, u64::from(u32::MAX), 2))
        );
        assert_eq!(xattr_args(&raw(1, 2, 3, &[0, 0, 1])), Err(libc::E2BIG));
        assert_eq!(xattr_args(&raw(1, 2, 3, &[0; 4080])), Ok((1, 2, 3)));
        assert_eq!(xattr_args(&raw(1, 2, 3, &[0; 4081])), Err(libc::E2BIG));
        assert_eq!(xattr_args(&raw(1, 2, 3, &[])[..15]), Err(libc::EINVAL));
        assert_eq!(xattr_args(&[]), Err(libc::EINVAL));
    }

    #[test]
    fn the_final_name_is_judged_wherever_it_is() {
        let p = pats(&["*.pem", ".env*", "id_*"]);
        for path in [
            "key.pem",
            "/tmp/key.pem",
            "a/b/c/key.pem",
            "key.pem/",
            "./.env",
            ".env.local",
            "../../id_rsa",
            "/home/u/.ssh/id_ed25519",
        ] {
            assert!(refused(&p, path.as_bytes()).is_some(), "{path}");
        }
        for path in [
            "cert.txt",
            "key.pem.txt",
            "pem/cert.txt",
            "a.pem/cert.txt",
            "my.env",
            "xid_rsa",
            "/",
            ".",
            "..",
            "a/..",
            "",
        ] {
            assert!(refused(&p, path.as_bytes()).is_none(), "{path}");
        }
        assert_eq!(refused(&p, b"x/.envrc"), Some(".env*"));
    }

    #[test]
    fn a_pattern_names_one_component() {
        assert!(check_name_pattern("*.pem").is_ok());
        assert!(check_name_pattern("certs/*.pem").is_err());
        assert!(check_name_pattern("").is_err());
        assert!(check_name_pattern("..").is_err());
    }

    #[test]
    fn the_callers_own_descriptors_are_read_as_its_own() {
        let own = |p: &str| own_descriptor(p.as_bytes(), 7, 9).map(|c| c.into_string().unwrap());
        assert_eq!(own("/dev/stdout").as_deref(), Some("/proc/7/fd/1"));
        assert_eq!(own("/dev/fd/12").as_deref(), Some("/proc/7/fd/12"));
        assert_eq!(own("/proc/self/fd/3").as_deref(), Some("/proc/7/fd/3"));
        assert_eq!(
            own("/proc/thread-self/fd/3").as_deref(),
            Some("/proc/9/fd/3")
        );
        assert_eq!(own("/proc/self/fd/3/x"), None);
        assert_eq!(own("/proc/self/mem"), None);
        assert_eq!(own("/dev/fd/"), None);
        // The process and descriptor whose flags are read before opening it again.
        let of = |p: &str| descriptor_of(&own_descriptor(p.as_bytes(), 7, 9).unwrap());
        assert_eq!(of("/dev/stdin"), Some((7, 0)));
        assert_eq!(of("/proc/thread-self/fd/12"), Some((9, 12)));
        assert_eq!(descriptor_of(&CString::new("/proc/7/cwd").unwrap()), None);
    }

    #[test]
    fn a_descriptor_reading_only_is_not_opened_again_to_write() {
        use libc::{O_APPEND, O_CLOEXEC, O_PATH, O_RDONLY, O_RDWR, O_TRUNC, O_WRONLY};
        let text = "pos:\t0\nflags:\t02000000\nmnt_id:\t30\nino:\t12\n";
        assert_eq!(fdinfo_flags(text), Some((O_CLOEXEC | O_RDONLY) as u32));
        assert_eq!(fdinfo_flags("pos:\t0\n"), None);
        assert_eq!(fdinfo_flags("flags:\t9\n"), None);
        assert!(reads_only((O_RDONLY | O_CLOEXEC) as u32));
        assert!(!reads_only(O_WRONLY as u32));
        assert!(!reads_only((O_RDWR | O_APPEND) as u32));
        assert!(!reads_only((O_PATH | O_RDONLY) as u32));
        assert!(!asks_to_write(O_RDONLY | O_CLOEXEC));
        assert!(asks_to_write(O_WRONLY));
        assert!(asks_to_write(O_RDWR));
        assert!(asks_to_write(O_RDONLY | O_TRUNC));
        assert!(asks_to_write(O_WRONLY | O_APPEND));
    }

    /// `.git` is refused when made at or below a tree's root, wherever the path the
    /// caller took leads (a link to a folder in the tree), not where it exists already
    /// (`mkdir -p .git/info`) unless a rename would replace it; nowhere else.
    #[test]
    fn a_git_folder_is_refused_in_a_tree_by_where_its_folder_is() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path().canonicalize().unwrap();
        let w = t.join("w");
        for d in ["w/sub", "w/.git", "w-sibling", "other"] {
            std::fs::create_dir_all(t.join(d)).unwrap();
        }
        std::os::unix::fs::symlink(w.join("sub"), t.join("link")).unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let sup = Supervisor::new(
            null.into(),
            Vec::new(),
            Watch {
                repos: vec![w.clone()],
                ..Watch::default()
            },
            None,
        );
        assert!(sup.names_judged());
        let judge = |p: &std::path::Path, replaces: bool| {
            sup.placed(libc::AT_FDCWD, p.as_os_str().as_bytes(), replaces)
        };
        let rule = judge(&w.join("sub/.git"), false).expect("refused below the root");
        assert!(
            rule.starts_with("nested repository: .git in ") && rule.contains("\"**/.git\""),
            "{rule}"
        );
        assert!(judge(&w.join("sub/.git/"), false).is_some());
        assert!(
            judge(&t.join("link/.git"), false).is_some(),
            "through a link"
        );
        assert!(judge(&w.join("sub/../sub/.git"), false).is_some());
        assert_eq!(judge(&w.join(".git"), false), None, "there already");
        assert!(
            judge(&w.join(".git"), true).is_some(),
            "replaced by a rename"
        );
        assert_eq!(judge(&t.join("other/.git"), false), None);
        assert_eq!(judge(&t.join("w-sibling/.git"), false), None);
        assert_eq!(judge(&w.join("sub/.gitignore"), false), None);
        assert_eq!(judge(&w.join("absent/.git"), false), None, "no such folder");
        let free = Supervisor::new(
            std::fs::File::open("/dev/null").unwrap().into(),
            Vec::new(),
            Watch::default(),
            None,
        );
        assert!(!free.names_judged());
        assert_eq!(
            free.placed(
                libc::AT_FDCWD,
                w.join("sub/.git").as_os_str().as_bytes(),
                false
            ),
            None
        );
    }

    #[test]
    fn the_sandboxs_mounts_are_known_by_their_ids() {
        let text = "22 1 0:21 / / rw,relatime - overlay overlay rw\n\
                    131 22 259:1 /home/u/w /loopat/w rw - ext4 /dev/vda rw\n\
                    x 22 0:5 / /dev rw - tmpfs tmpfs rw\n";
        assert_eq!(mount_ids(text), vec![22, 131]);
        assert!(mount_ids("").is_empty());
        // This process's own working folder lies on one of its own mounts.
        let here = std::fs::File::open(".").unwrap();
        let id = mount_id(&here.into()).expect("statx gives a mount id");
        let mine = mount_ids(&std::fs::read_to_string("/proc/self/mountinfo").unwrap());
        assert!(mine.contains(&id), "{id} in {mine:?}");
    }

    #[test]
    fn init_gets_back_what_it_was_given() {
        let watch = Watch {
            writes: true,
            reads: true,
            read_dirs: vec!["/loopat/x/secrets".into()],
            pins: vec![(
                "/loopat/x/.github".into(),
                "mandatory: .github/workflows/".into(),
            )],
            names: vec![(
                ".envrc.local".into(),
                "mandatory: .envrc through a link".into(),
            )],
            places: vec![("/loopat/x/.bashrc".into(), "mandatory: .bashrc".into())],
            covers: vec!["/loopat/x/.vscode".into(), "/loopat/x/locked.txt".into()],
            repos: vec!["/loopat/x".into(), "/loopat/context/notes".into()],
        };
        let laying: Laying = (
            11,
            vec![
                LaidCheck {
                    inside: "/loopat/x/.git".into(),
                    rw: true,
                    dev: (254, 0),
                    ino: 7,
                },
                LaidCheck {
                    inside: "/loopat/x/.git/config".into(),
                    rw: false,
                    dev: (254, 1),
                    ino: 1 << 40,
                },
            ],
        );
        let args = init_args(&pats(&["*.pem", "id_*"]), &watch, Some(9), Some(&laying));
        let mut with_rest = args.clone();
        with_rest.extend([
            "--".into(),
            "--deny-create".into(),
            "--watch-reads".into(),
            "--laid-fd".into(),
            "4".into(),
        ]);
        assert_eq!(
            parse_init_args(&with_rest),
            (
                pats(&["*.pem", "id_*"]),
                watch.clone(),
                Some(9),
                Some(laying)
            )
        );
        let none = init_args(&[], &Watch::default(), None, None);
        assert!(none.is_empty());
        // A laid mount whose identity does not parse is checked against none any file has.
        let odd: Vec<std::ffi::OsString> = ["--laid-fd", "3", "--laid", "/x", "rw", "1:2"]
            .into_iter()
            .map(Into::into)
            .collect();
        let (.., laying) = parse_init_args(&odd);
        assert_eq!(
            laying,
            Some((
                3,
                vec![LaidCheck {
                    inside: "/x".into(),
                    rw: false,
                    dev: (u32::MAX, u32::MAX),
                    ino: 0
                }]
            ))
        );
        // What the filter sends follows what is watched.
        assert_eq!(
            watch.sent(),
            Sent {
                writes: true,
                reads: true,
                lookups: true,
            }
        );
        // Lookups only where a folder is unreadable.
        let files_only = Watch {
            read_dirs: vec![],
            ..watch.clone()
        };
        assert!(!files_only.sent().lookups && files_only.sent().reads);
        let writes = Watch {
            writes: true,
            ..Watch::default()
        };
        assert_eq!(
            writes.sent(),
            Sent {
                writes: true,
                reads: false,
                lookups: false,
            }
        );
    }

    /// The filter's verdict for a call, by the interpreter the base filter's tests use,
    /// and the kernel's verdict over both (the most restrictive action wins).
    fn notify_verdict(nr: i64, args: [u64; 6], arch: u32) -> (u32, u32) {
        sent_verdict(Sent::default(), nr, args, arch)
    }

    fn sent_verdict(sent: Sent, nr: i64, args: [u64; 6], arch: u32) -> (u32, u32) {
        let prog: Vec<seccompiler::sock_filter> = program(sent)
            .iter()
            .map(|i| seccompiler::sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect();
        let ours = crate::sandbox::seccomp::tests::run(&prog, nr, args, arch);
        let base = crate::sandbox::seccomp::tests::verdict(nr, args, arch);
        let rank = |a: u32| (a & libc::SECCOMP_RET_ACTION_FULL) as i32;
        (ours, if rank(ours) < rank(base) { ours } else { base })
    }

    #[test]
    fn the_filter_sends_every_naming_call_and_nothing_else() {
        const X86_64: u32 = 0xC000_003E;
        const I386: u32 = 0x4000_0003;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let on = |nr: i64, args: [u64; 6]| notify_verdict(nr, args, X86_64).0;
        let creat = libc::O_CREAT as u64;
        for (_, nr) in naming_calls() {
            assert_eq!(on(nr, [0; 6]), notify, "{nr}");
        }
        for (_, nr, arg) in opening_calls() {
            let mut args = [0u64; 6];
            args[arg as usize] = creat | libc::O_WRONLY as u64;
            assert_eq!(on(nr, args), notify);
            args[arg as usize] = (libc::O_RDWR | libc::O_APPEND | libc::O_CLOEXEC) as u64;
            assert_eq!(on(nr, args), allow, "{nr} without O_CREAT");
            // Only the low 32 bits are the flags: a high bit set changes nothing.
            args[arg as usize] = (1 << 40) | creat;
            assert_eq!(on(nr, args), notify);
        }
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_unlinkat,
            libc::SYS_close,
            libc::SYS_execve,
        ] {
            assert_eq!(on(nr, [0; 6]), allow, "{nr}");
        }
        // x32's numbering of the same calls fails; another architecture is killed.
        assert_eq!(
            on(libc::SYS_openat | X32_BIT as i64, [0, 0, creat, 0, 0, 0]),
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        assert_eq!(
            notify_verdict(5, [0; 6], I386).0,
            libc::SECCOMP_RET_KILL_PROCESS
        );
        // openat2 needs no rule here: the base filter's ENOSYS wins over any notification.
        assert_eq!(
            notify_verdict(libc::SYS_openat2, [0; 6], X86_64).1,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32
        );
        // A setuid mode is refused by the base filter before the supervisor sees it.
        assert_eq!(
            notify_verdict(libc::SYS_mknodat, [0, 0, 0o4755, 0, 0, 0], X86_64).1,
            libc::SECCOMP_RET_ERRNO | libc::EPERM as u32
        );
    }

    /// Watching writes sends every open that may write and every call that changes a
    /// file, and no read-only open; watching reads sends every open.
    #[test]
    fn the_filter_sends_writes_when_watching_writes_and_every_open_when_watching_reads() {
        const X86_64: u32 = 0xC000_003E;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let writes = Sent {
            writes: true,
            ..Sent::default()
        };
        let reads = Sent {
            writes: true,
            reads: true,
            lookups: false,
        };
        let on = |sent, nr: i64, args: [u64; 6]| sent_verdict(sent, nr, args, X86_64).0;
        for (_, nr, arg) in opening_calls() {
            let mut args = [0u64; 6];
            for (flags, sent_when_writes) in [
                (libc::O_RDONLY, false),
                (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECTORY, false),
                (libc::O_PATH, false),
                (libc::O_WRONLY, true),
                (libc::O_RDWR, true),
                (libc::O_RDONLY | libc::O_TRUNC, true),
                (libc::O_WRONLY | libc::O_APPEND, true),
                (libc::O_TMPFILE | libc::O_WRONLY, true),
            ] {
                args[arg as usize] = flags as u64;
                let want = if sent_when_writes { notify } else { allow };
                assert_eq!(on(writes, nr, args), want, "{nr} {flags:o}");
                assert_eq!(on(reads, nr, args), notify, "{nr} {flags:o}");
                // Nothing but creations without a watch.
                assert_eq!(on(Sent::default(), nr, args), allow, "{nr} {flags:o}");
            }
        }
        for (_, nr) in changing_calls() {
            assert_eq!(on(writes, nr, [0; 6]), notify, "{nr}");
            assert_eq!(on(Sent::default(), nr, [0; 6]), allow, "{nr}");
        }
        // The calls that change a file are named, not only whatever the list holds.
        for nr in [
            libc::SYS_unlinkat,
            libc::SYS_truncate,
            libc::SYS_fchmodat,
            libc::SYS_fchownat,
            SYS_FCHMODAT2,
            libc::SYS_fchmod,
            libc::SYS_fchown,
            libc::SYS_setxattr,
            libc::SYS_lsetxattr,
            libc::SYS_fsetxattr,
            libc::SYS_removexattr,
            libc::SYS_lremovexattr,
            libc::SYS_fremovexattr,
            463, // setxattrat
            466, // removexattrat
            libc::SYS_utimensat,
            libc::SYS_utime,
            libc::SYS_utimes,
            libc::SYS_futimesat,
        ] {
            assert_eq!(on(writes, nr, [0; 6]), notify, "{nr}");
        }
        // A descriptor open for writing was an open sent already.
        assert_eq!(on(writes, libc::SYS_ftruncate, [0; 6]), allow);
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_close,
            libc::SYS_fstat,
            libc::SYS_getxattr,
            464, // getxattrat
            465, // listxattrat
        ] {
            assert_eq!(on(reads, nr, [0; 6]), allow, "{nr}");
        }
    }

    /// Where a folder is unreadable every lookup goes to the supervisor, but not one on a
    /// descriptor itself (`fstat` is `newfstatat(fd, "", AT_EMPTY_PATH)` in glibc); and
    /// none elsewhere.
    #[test]
    fn the_filter_sends_lookups_only_where_a_folder_is_unreadable() {
        const X86_64: u32 = 0xC000_003E;
        let notify = libc::SECCOMP_RET_USER_NOTIF;
        let allow = libc::SECCOMP_RET_ALLOW;
        let lookups = Sent {
            writes: true,
            reads: true,
            lookups: true,
        };
        let reads = Sent {
            lookups: false,
            ..lookups
        };
        let on = |sent, nr: i64, args: [u64; 6]| sent_verdict(sent, nr, args, X86_64).0;
        for (name, nr, flags_arg) in looking_calls() {
            assert_eq!(on(lookups, nr, [0; 6]), notify, "{name}");
            assert_eq!(on(reads, nr, [0; 6]), allow, "{name}");
            let Some(arg) = flags_arg else { continue };
            let mut args = [0u64; 6];
            for (flags, sent) in [
                (libc::AT_SYMLINK_NOFOLLOW, true),
                (libc::AT_EMPTY_PATH, false),
                (libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW, false),
                (libc::AT_NO_AUTOMOUNT, true),
            ] {
                args[arg as usize] = flags as u64;
                let want = if sent { notify } else { allow };
                assert_eq!(on(lookups, nr, args), want, "{name} {flags:x}");
            }
        }
        // The calls named, not only whatever the list holds.
        for nr in [
            libc::SYS_newfstatat,
            libc::SYS_statx,
            libc::SYS_faccessat,
            libc::SYS_faccessat2,
            libc::SYS_readlinkat,
            libc::SYS_getxattr,
            libc::SYS_lgetxattr,
            libc::SYS_listxattr,
            libc::SYS_llistxattr,
            464, // getxattrat
            465, // listxattrat
            libc::SYS_chdir,
            libc::SYS_statfs,
            libc::SYS_execve,
            libc::SYS_execveat,
            libc::SYS_stat,
            libc::SYS_lstat,
            libc::SYS_access,
            libc::SYS_readlink,
        ] {
            assert_eq!(on(lookups, nr, [0; 6]), notify, "{nr}");
        }
        assert_eq!(
            on(lookups, libc::SYS_newfstatat, [3, 0, 0, 0x1000, 0, 0]),
            allow
        );
        assert_eq!(on(lookups, libc::SYS_statx, [3, 0, 0x1000, 0, 0, 0]), allow);
        // The rest of the program is as without lookups.
        assert_eq!(on(lookups, libc::SYS_read, [0; 6]), allow);
        assert_eq!(on(lookups, libc::SYS_fstat, [0; 6]), allow);
        assert_eq!(on(lookups, libc::SYS_unlinkat, [0; 6]), notify);
        assert_eq!(on(lookups, libc::SYS_openat, [0; 6]), notify);
    }

    /// What a call's arguments point at is read as the kernel reads it, here from a file
    /// standing for the caller's memory (an address is an offset): `setxattrat`'s path,
    /// name, `struct xattr_args` and value, with the kernel's errors for a bad size, bad
    /// flags, a struct with bytes past its fields and a null path; a lookup's path, none
    /// for a descriptor itself.
    #[test]
    fn the_arguments_behind_pointers_are_read_as_the_kernel_reads_them() {
        use std::os::unix::fs::FileExt;
        let mem = tempfile::tempfile().unwrap();
        mem.write_all_at(&[0u8; 0x1000], 0).unwrap();
        mem.write_all_at(b"a.txt\0", 0x100).unwrap();
        mem.write_all_at(b"user.x\0", 0x200).unwrap();
        let mut args = 0x400u64.to_ne_bytes().to_vec();
        args.extend(3u32.to_ne_bytes());
        args.extend(1u32.to_ne_bytes());
        mem.write_all_at(&args, 0x300).unwrap();
        mem.write_all_at(b"abc", 0x400).unwrap();
        mem.write_all_at(&[7], 0x31f).unwrap(); // past a 24-byte struct: not zero
                                                // The same struct where a whole page of it can be read, zeros past its fields.
        mem.write_all_at(&[0u8; 0x1100], 0x1000).unwrap();
        mem.write_all_at(&args, 0x1000).unwrap();
        let me = Caller {
            listener: -1,
            id: 0,
            tid: std::process::id(),
        };
        let empty = libc::AT_EMPTY_PATH as u64;
        let read = |nr: i64, a: [u64; 6]| Call::decode(nr, &a).unwrap().read(&me, &mem);
        let set = |path, flags, usize| read(463, [3, path, flags, 0x200, 0x300, usize]);
        let v = |b: &[&[u8]]| Ok(b.iter().map(|x| x.to_vec()).collect::<Vec<_>>());
        let flags = 1i32.to_ne_bytes();
        assert_eq!(set(0x100, 0, 16), v(&[b"a.txt", b"user.x", b"abc", &flags]));
        assert_eq!(set(0x100, 0, 24), v(&[b"a.txt", b"user.x", b"abc", &flags]));
        assert_eq!(set(0x100, 0, 32), Err(libc::E2BIG));
        assert_eq!(set(0x100, 0, 15), Err(libc::EINVAL));
        assert_eq!(set(0x100, 0, 4097), Err(libc::E2BIG));
        let page = read(463, [3, 0x100, 0, 0x200, 0x1000, 4096]);
        assert_eq!(page, v(&[b"a.txt", b"user.x", b"abc", &flags]));
        assert_eq!(
            read(463, [3, 0x100, 0, 0x200, 0x1000, 4097]),
            Err(libc::E2BIG)
        );
        assert_eq!(set(0x100, 1, 16), Err(libc::EINVAL));
        let nofollow = libc::AT_SYMLINK_NOFOLLOW as u64;
        assert_eq!(set(0x100, nofollow | empty, 16).unwrap()[0], b"a.txt");
        assert_eq!(set(0, empty, 16).unwrap()[0], b"");
        assert_eq!(set(0, 0, 16), Err(libc::EFAULT));
        assert_eq!(
            read(466, [3, 0x100, 0, 0x200, 0, 0]),
            v(&[b"a.txt", b"user.x"])
        );
        assert_eq!(read(466, [3, 0, empty, 0x200, 0, 0]), v(&[b"", b"user.x"]));
        assert_eq!(read(466, [3, 0, 0, 0x200, 0, 0]), Err(libc::EFAULT));
        assert_eq!(read(466, [3, 0x100, 4, 0x200, 0, 0]), Err(libc::EINVAL));
        // Lookups: the path, none for a descriptor itself.
        let stat = libc::SYS_newfstatat;
        assert_eq!(read(stat, [3, 0x100, 0, 0, 0, 0]), v(&[b"a.txt"]));
        assert_eq!(read(stat, [3, 0, 0, empty, 0, 0]), v(&[b""]));
        assert_eq!(read(stat, [3, 0, 0, 0, 0, 0]), Err(libc::EFAULT));
        assert_eq!(
            read(libc::SYS_chdir, [0x200, 0, 0, 0, 0, 0]),
            v(&[b"user.x"])
        );
    }

    /// The calls that make a name say so and which; the others make none.
    #[test]
    fn the_calls_that_make_names_are_known_by_their_kind() {
        let a = [11, 22, 33, 44, 55, 66];
        let s = [b"old".to_vec(), b"new".to_vec()];
        let call = |nr| Call::decode(nr, &a).unwrap();
        assert!(call(libc::SYS_mkdirat).makes_names());
        assert_eq!(call(libc::SYS_mkdirat).made(&s), vec![(&b"old"[..], 0)]);
        assert_eq!(call(libc::SYS_linkat).made(&s), vec![(&b"new"[..], 1)]);
        for nr in [libc::SYS_unlinkat, libc::SYS_statx, 463] {
            assert!(
                !call(nr).makes_names() && call(nr).made(&s).is_empty(),
                "{nr}"
            );
        }
    }

    /// A descriptor open `O_PATH` is told from one open for reading or writing by the
    /// caller's fdinfo (here this process's own): a call on it itself gets EBADF.
    #[test]
    fn a_descriptor_open_only_as_a_path_is_known_by_its_flags() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let cfile = CString::new(file.as_os_str().as_bytes()).unwrap();
        let open = |flags| open_raw(libc::AT_FDCWD, &cfile, flags | libc::O_CLOEXEC, 0).unwrap();
        let me = Caller {
            listener: -1,
            id: 0,
            tid: std::process::id(),
        };
        let path = open(libc::O_PATH);
        let read = open(libc::O_RDONLY);
        let write = open(libc::O_WRONLY);
        assert!(me.path_only(path.as_raw_fd()));
        assert!(!me.path_only(read.as_raw_fd()));
        assert!(!me.path_only(write.as_raw_fd()));
        // A descriptor that is not open: not one (the call then fails as it would).
        assert!(!me.path_only(-5));
    }

    #[test]
    fn the_callers_own_paths_are_spelled_as_its_own() {
        let p = |s: &str| String::from_utf8(callers_path(s.as_bytes(), 7, 9)).unwrap();
        assert_eq!(p("/proc/self/cwd/x"), "/proc/7/cwd/x");
        assert_eq!(p("/proc/self"), "/proc/7");
        assert_eq!(p("/proc/thread-self/root/y"), "/proc/9/root/y");
        assert_eq!(p("/proc/selfish"), "/proc/selfish");
        assert_eq!(p("/dev/stdout"), "/proc/7/fd/1");
        assert_eq!(p("a/b"), "a/b");
    }

    /// In a child process: the filter installed with a listener nobody holds makes every
    /// naming call fail with ENOSYS (the fail-closed rule), and leaves the rest alone.
    #[test]
    fn without_a_listener_every_naming_call_fails() {
        let dir = tempfile::tempdir().unwrap();
        let made = dir.path().join("cert.txt");
        let cmade = CString::new(made.as_os_str().as_bytes()).unwrap();
        let prog = program(Sent::default());
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let (go_read, go_write) = nix::unistd::pipe().unwrap();
        // SAFETY: the child makes system calls on data prepared before the fork, then
        // _exits with what it saw.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            unsafe {
                if install_and_send(&fprog, theirs.as_raw_fd(), false) != 0 {
                    libc::_exit(10);
                }
                // Wait until the parent has closed the listener: then nobody listens.
                libc::close(go_write.as_raw_fd());
                let mut buf = [0u8; 1];
                libc::read(go_read.as_raw_fd(), buf.as_mut_ptr().cast(), 1);
                let fd = libc::open(cmade.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o644);
                let e = *libc::__errno_location();
                if fd >= 0 || e != libc::ENOSYS {
                    libc::_exit(11);
                }
                let r = libc::mkdir(cmade.as_ptr(), 0o755);
                if r == 0 || *libc::__errno_location() != libc::ENOSYS {
                    libc::_exit(12);
                }
                // Opening without O_CREAT is not the supervisor's.
                let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
                libc::_exit(if fd >= 0 { 0 } else { 13 });
            }
        }
        drop(theirs);
        drop(go_read);
        let listener = receive_listener(&OwnedFd::from(ours)).unwrap();
        drop(listener);
        drop(go_write);
        let mut status = 0;
        // SAFETY: waitpid writes the status it is given.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "{status}");
        assert_eq!(libc::WEXITSTATUS(status), 0);
        assert!(!made.exists());
    }

    #[test]
    fn times_are_read_as_each_call_spells_them() {
        let words = |w: &[i64]| w.iter().flat_map(|v| v.to_ne_bytes()).collect::<Vec<u8>>();
        let pair =
            |t: [libc::timespec; 2]| [(t[0].tv_sec, t[0].tv_nsec), (t[1].tv_sec, t[1].tv_nsec)];
        assert_eq!(
            pair(TimeForm::Spec.spec(&words(&[1, 2, 3, libc::UTIME_OMIT]))),
            [(1, 2), (3, libc::UTIME_OMIT)]
        );
        assert_eq!(
            pair(TimeForm::Val.spec(&words(&[1, 2, 3, 4]))),
            [(1, 2000), (3, 4000)]
        );
        assert_eq!(pair(TimeForm::Buf.spec(&words(&[5, 6]))), [(5, 0), (6, 0)]);
        assert_eq!(
            (
                TimeForm::Spec.size(),
                TimeForm::Val.size(),
                TimeForm::Buf.size()
            ),
            (32, 32, 16)
        );
    }
}
