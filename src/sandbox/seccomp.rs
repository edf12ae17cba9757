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
use std::os::fd::OwnedFd;

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
    use nix::sys::memfd::{memfd_create, MFdFlags};
    Ok(memfd_create(name, MFdFlags::MFD_CLOEXEC)?)
}

#[cfg(test)]
mod tests {
    //! Each rule of the filter, judged by running the very programs bwrap receives through a
    //! small interpreter of the classic BPF that seccomp runs (loads of the syscall data,
    //! jumps, ANDs, returns), so every rule has a test of its own and none needs a kernel.
    use super::*;

    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;

    /// What seccomp would answer for a call: the action word the programs return, the
    /// most restrictive of them winning as in the kernel.
    fn verdict(nr: i64, args: [u64; 6], arch: u32) -> u32 {
        let mut worst = libc::SECCOMP_RET_ALLOW;
        for prog in programs().unwrap() {
            let action = run(&prog, nr, args, arch);
            // The kernel compares actions as signed numbers, the lowest the most restrictive
            // (KILL_PROCESS, 0x80000000, is the lowest; then KILL, TRAP, ERRNO ... ALLOW).
            let rank = |a: u32| (a & libc::SECCOMP_RET_ACTION_FULL) as i32;
            if rank(action) < rank(worst) {
                worst = action;
            }
        }
        worst
    }

    fn run(prog: &BpfProgram, nr: i64, args: [u64; 6], arch: u32) -> u32 {
        // struct seccomp_data: nr (u32), arch (u32), ip (u64), args[6] (u64 each).
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + i * 8..24 + i * 8].copy_from_slice(&a.to_ne_bytes());
        }
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let ins = &prog[pc];
            let k = ins.k;
            match ins.code {
                0x20 => {
                    // LD | W | ABS
                    acc = u32::from_ne_bytes(data[k as usize..k as usize + 4].try_into().unwrap());
                    pc += 1;
                }
                0x54 => {
                    // ALU | AND | K
                    acc &= k;
                    pc += 1;
                }
                0x05 => pc += 1 + k as usize, // JMP | JA
                0x15 | 0x25 | 0x35 | 0x45 => {
                    let taken = match ins.code {
                        0x15 => acc == k,
                        0x25 => acc > k,
                        0x35 => acc >= k,
                        _ => acc & k != 0,
                    };
                    pc += 1 + if taken { ins.jt } else { ins.jf } as usize;
                }
                0x06 => return k, // RET | K
                other => panic!("an instruction this interpreter does not know: {other:#x}"),
            }
        }
    }

    fn call(nr: i64) -> u32 {
        verdict(nr, [0; 6], AUDIT_ARCH_X86_64)
    }

    fn errno(e: i32) -> u32 {
        libc::SECCOMP_RET_ERRNO | e as u32
    }

    #[test]
    fn every_denied_call_fails_with_eperm() {
        for (name, nr) in denied() {
            assert_eq!(call(nr), errno(libc::EPERM), "{name}");
        }
    }

    #[test]
    fn what_design_4_2_names_is_among_the_denied() {
        let names: Vec<&str> = denied().iter().map(|(n, _)| *n).collect();
        for must in [
            "mount",
            "umount2",
            "pivot_root",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsmount",
            "mount_setattr",
            "setns",
            "unshare",
            "ptrace",
            "io_uring_setup",
            "keyctl",
        ] {
            assert!(names.contains(&must), "{must} is not denied");
        }
    }

    #[test]
    fn ordinary_calls_are_allowed() {
        for nr in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_openat,
            libc::SYS_clone,
            libc::SYS_execve,
            libc::SYS_getpid,
            libc::SYS_connect,
        ] {
            assert_eq!(call(nr), libc::SECCOMP_RET_ALLOW, "syscall {nr}");
        }
    }

    #[test]
    fn clone3_and_openat2_fail_with_enosys() {
        assert_eq!(call(libc::SYS_clone3), errno(libc::ENOSYS));
        assert_eq!(call(libc::SYS_openat2), errno(libc::ENOSYS));
    }

    #[test]
    fn tiocsti_and_tioclinux_are_refused_other_ioctls_pass() {
        let ioctl = |cmd: u64| verdict(libc::SYS_ioctl, [0, cmd, 0, 0, 0, 0], AUDIT_ARCH_X86_64);
        assert_eq!(ioctl(libc::TIOCSTI), errno(libc::EPERM));
        assert_eq!(ioctl(libc::TIOCLINUX), errno(libc::EPERM));
        assert_eq!(ioctl(libc::TIOCGWINSZ), libc::SECCOMP_RET_ALLOW);
        assert_eq!(ioctl(libc::FIONREAD), libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn setuid_and_setgid_bits_are_refused_in_every_call_that_sets_a_mode() {
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
            let with = |mode: u64| {
                let mut args = [0u64; 6];
                args[arg] = mode;
                verdict(nr, args, AUDIT_ARCH_X86_64)
            };
            assert_eq!(with(0o4755), errno(libc::EPERM), "setuid, syscall {nr}");
            assert_eq!(with(0o2755), errno(libc::EPERM), "setgid, syscall {nr}");
            assert_eq!(
                with(0o755),
                libc::SECCOMP_RET_ALLOW,
                "plain mode, syscall {nr}"
            );
            assert_eq!(
                with(0o1777),
                libc::SECCOMP_RET_ALLOW,
                "sticky bit, syscall {nr}"
            );
        }
    }

    #[test]
    fn netlink_and_vsock_sockets_fail_with_eafnosupport() {
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            let family = |f: i32| verdict(nr, [f as u64, 0, 0, 0, 0, 0], AUDIT_ARCH_X86_64);
            for (name, f) in DENIED_SOCKET_FAMILIES {
                assert_eq!(family(f), errno(libc::EAFNOSUPPORT), "{name}, syscall {nr}");
            }
            for f in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
                assert_eq!(
                    family(f),
                    libc::SECCOMP_RET_ALLOW,
                    "family {f}, syscall {nr}"
                );
            }
        }
    }

    #[test]
    fn a_call_from_another_architecture_kills_the_process() {
        // The 32-bit entry (int 0x80) has other numbers for the same calls: none passes.
        assert_eq!(
            verdict(20, [0; 6], AUDIT_ARCH_I386) & libc::SECCOMP_RET_ACTION_FULL,
            libc::SECCOMP_RET_KILL_PROCESS
        );
    }

    #[test]
    fn a_memfd_is_closed_on_exec_and_a_name_the_kernel_refuses_is_an_error() {
        use std::os::fd::AsRawFd;
        let fd = memfd("git-loop-test").unwrap();
        // SAFETY: F_GETFD on a descriptor this test owns.
        let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        // memfd_create takes at most 249 bytes of name.
        let err = memfd(&"x".repeat(300)).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn the_programs_go_to_bwrap_as_descriptors_of_their_exact_bytes() {
        let progs = programs().unwrap();
        let fds = fds().unwrap();
        assert_eq!(progs.len(), fds.len());
        for (prog, fd) in progs.iter().zip(fds) {
            let mut bytes = Vec::new();
            use std::io::Read;
            std::fs::File::from(fd).read_to_end(&mut bytes).unwrap();
            assert_eq!(bytes.len(), prog.len() * 8);
            assert_eq!(&bytes[..2], &prog[0].code.to_ne_bytes());
        }
    }
}
