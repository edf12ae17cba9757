//! The seccomp filter every sandboxed process runs under (DESIGN 4.2: no way back out).
//!
//! A denylist compiled with `seccompiler` to a classic BPF program, handed to bwrap by file
//! descriptor (`--seccomp FD`), which installs it right before exec with `no_new_privs` set.
//! Denied calls fail with EPERM, so tools see an ordinary "operation not permitted"
//! instead of dying. `clone3` fails with ENOSYS instead: its flags sit behind a pointer a
//! filter cannot read, and ENOSYS makes libc fall back to `clone`, whose namespace flags the
//! kernel then refuses without capabilities (bwrap drops them all) and `--disable-userns`.
//! `openat2` fails with ENOSYS for the same reason (its mode is behind a pointer), so the
//! setuid/setgid check on `openat`'s mode cannot be sidestepped.
//!
//! Sockets of two families fail with EAFNOSUPPORT, as on a kernel built without them:
//! `AF_VSOCK` (one connect from the hypervisor's services, whatever the network namespace)
//! and `AF_NETLINK` (the kernel's configuration interfaces, audit, uevents). Tools that
//! list or change interfaces over netlink (`ip`, `ss`, `getifaddrs`, Node's
//! `os.networkInterfaces()`) report an error inside; name resolution and connections do
//! not use it.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// fchmodat2 (Linux 6.6), not yet in every libc crate release.
const SYS_FCHMODAT2: i64 = 452;

/// The syscalls refused inside, with why.
pub fn denied() -> Vec<(&'static str, i64)> {
    vec![
        // Undoing or adding mounts, entering other namespaces.
        ("mount", libc::SYS_mount),
        ("umount2", libc::SYS_umount2),
        ("pivot_root", libc::SYS_pivot_root),
        ("open_tree", libc::SYS_open_tree),
        ("move_mount", libc::SYS_move_mount),
        ("fsopen", libc::SYS_fsopen),
        ("fsconfig", libc::SYS_fsconfig),
        ("fsmount", libc::SYS_fsmount),
        ("fspick", libc::SYS_fspick),
        ("mount_setattr", libc::SYS_mount_setattr),
        ("setns", libc::SYS_setns),
        ("unshare", libc::SYS_unshare),
        ("chroot", libc::SYS_chroot),
        // Reading or steering other processes.
        ("ptrace", libc::SYS_ptrace),
        ("process_vm_readv", libc::SYS_process_vm_readv),
        ("process_vm_writev", libc::SYS_process_vm_writev),
        ("kcmp", libc::SYS_kcmp),
        ("pidfd_getfd", libc::SYS_pidfd_getfd),
        // Kernel attack surface no build needs.
        ("io_uring_setup", libc::SYS_io_uring_setup),
        ("io_uring_enter", libc::SYS_io_uring_enter),
        ("io_uring_register", libc::SYS_io_uring_register),
        ("keyctl", libc::SYS_keyctl),
        ("add_key", libc::SYS_add_key),
        ("request_key", libc::SYS_request_key),
        ("bpf", libc::SYS_bpf),
        ("perf_event_open", libc::SYS_perf_event_open),
        ("userfaultfd", libc::SYS_userfaultfd),
        ("kexec_load", libc::SYS_kexec_load),
        ("init_module", libc::SYS_init_module),
        ("finit_module", libc::SYS_finit_module),
        ("delete_module", libc::SYS_delete_module),
        ("acct", libc::SYS_acct),
        ("swapon", libc::SYS_swapon),
        ("swapoff", libc::SYS_swapoff),
        ("reboot", libc::SYS_reboot),
        ("syslog", libc::SYS_syslog),
        ("personality", libc::SYS_personality),
        ("quotactl", libc::SYS_quotactl),
        ("name_to_handle_at", libc::SYS_name_to_handle_at),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ]
}

#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    #[error("cannot build the seccomp filter: {0}")]
    Build(String),
    #[error("cannot hand the seccomp filter to bwrap")]
    Io(#[from] std::io::Error),
}

fn target_arch() -> Result<TargetArch, SeccompError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SeccompError::Build(format!("{e:?}")))
}

/// The filter programs, each in a memfd for bwrap's `--add-seccomp-fd`.
pub fn fds() -> Result<Vec<OwnedFd>, SeccompError> {
    let mut out = Vec::new();
    for prog in programs()? {
        out.push(to_memfd(&prog)?);
    }
    Ok(out)
}

/// Socket families refused inside, with the errno a kernel without them gives.
pub const DENIED_SOCKET_FAMILIES: [(&str, i32); 2] = [
    ("AF_NETLINK", libc::AF_NETLINK),
    ("AF_VSOCK", libc::AF_VSOCK),
];

/// The deny program, the clone3 program and the socket-family program.
pub fn programs() -> Result<Vec<BpfProgram>, SeccompError> {
    let arch = target_arch()?;
    let build = |nrs: Vec<i64>, errno: i32| -> Result<BpfProgram, SeccompError> {
        let rules: BTreeMap<i64, Vec<SeccompRule>> = nrs.into_iter().map(|n| (n, vec![])).collect();
        let f = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )
        .map_err(|e| SeccompError::Build(e.to_string()))?;
        f.try_into()
            .map_err(|e: seccompiler::BackendError| SeccompError::Build(e.to_string()))
    };
    let mut deny: BTreeMap<i64, Vec<SeccompRule>> =
        denied().into_iter().map(|(_, n)| (n, vec![])).collect();
    // Pushing characters into a terminal (TIOCSTI) or poking the console (TIOCLINUX):
    // refused even where the sandbox keeps the caller's terminal (`shell`, `agent`).
    let ioctl_cmd = |cmd: u64| -> Result<SeccompRule, SeccompError> {
        let cond = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, cmd)
            .map_err(|e| SeccompError::Build(e.to_string()))?;
        SeccompRule::new(vec![cond]).map_err(|e| SeccompError::Build(e.to_string()))
    };
    deny.insert(
        libc::SYS_ioctl,
        vec![ioctl_cmd(libc::TIOCSTI)?, ioctl_cmd(libc::TIOCLINUX)?],
    );
    // Setuid and setgid bits: the loop's folders are host folders, and such a file made
    // inside would be a setuid binary of the host user (of root, where root runs loops).
    let mode_bits = |arg: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        [libc::S_ISUID, libc::S_ISGID]
            .into_iter()
            .map(|bit| {
                let cond = SeccompCondition::new(
                    arg,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::MaskedEq(bit as u64),
                    bit as u64,
                )
                .map_err(|e| SeccompError::Build(e.to_string()))?;
                SeccompRule::new(vec![cond]).map_err(|e| SeccompError::Build(e.to_string()))
            })
            .collect()
    };
    for (nr, arg) in [
        (libc::SYS_chmod, 1),
        (libc::SYS_fchmod, 1),
        (libc::SYS_fchmodat, 2),
        (SYS_FCHMODAT2, 2),
        (libc::SYS_open, 2),
        (libc::SYS_openat, 3),
        (libc::SYS_creat, 1),
        (libc::SYS_mknod, 1),
        (libc::SYS_mknodat, 2),
    ] {
        deny.insert(nr, mode_bits(arg)?);
    }
    let deny = SeccompFilter::new(
        deny,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| SeccompError::Build(e.to_string()))?;
    let deny: BpfProgram = deny
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError::Build(e.to_string()))?;
    // openat2's mode sits behind a pointer too; without it, libc and runtimes use openat.
    Ok(vec![
        deny,
        build(vec![libc::SYS_clone3, libc::SYS_openat2], libc::ENOSYS)?,
        socket_families(arch)?,
    ])
}

/// `socket(2)` and `socketpair(2)` with a family of [`DENIED_SOCKET_FAMILIES`] fail with
/// EAFNOSUPPORT; every other family is left to the namespaces.
fn socket_families(arch: TargetArch) -> Result<BpfProgram, SeccompError> {
    fn err(e: impl std::fmt::Display) -> SeccompError {
        SeccompError::Build(e.to_string())
    }
    let rules = || -> Result<Vec<SeccompRule>, SeccompError> {
        DENIED_SOCKET_FAMILIES
            .iter()
            .map(|(_, family)| {
                let cond = SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    *family as u64,
                )
                .map_err(err)?;
                SeccompRule::new(vec![cond]).map_err(err)
            })
            .collect()
    };
    let filter = SeccompFilter::new(
        [
            (libc::SYS_socket, rules()?),
            (libc::SYS_socketpair, rules()?),
        ]
        .into(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EAFNOSUPPORT as u32),
        arch,
    )
    .map_err(err)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError::Build(e.to_string()))
}

fn to_memfd(prog: &BpfProgram) -> Result<OwnedFd, SeccompError> {
    let mut bytes = Vec::with_capacity(prog.len() * 8);
    for ins in prog {
        bytes.extend_from_slice(&ins.code.to_ne_bytes());
        bytes.push(ins.jt);
        bytes.push(ins.jf);
        bytes.extend_from_slice(&ins.k.to_ne_bytes());
    }
    let fd = memfd("git-loop-seccomp")?;
    let mut file = std::fs::File::from(fd);
    file.write_all(&bytes)?;
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0))?;
    Ok(OwnedFd::from(file))
}

/// An anonymous in-memory file, close-on-exec (the spawner clears that flag only on the
/// descriptors bwrap is meant to get).
pub fn memfd(name: &str) -> std::io::Result<OwnedFd> {
    let name = std::ffi::CString::new(name).expect("no NUL in memfd names");
    // SAFETY: memfd_create with a valid NUL-terminated name; the returned descriptor is
    // checked and then owned by OwnedFd.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor this function alone owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
