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
//!
//! The rules are data ([`rules`]: the call, when it applies, its errno), compiled into one
//! program per errno; the tests judge every rule of the table, and its twin that must pass,
//! by running the very programs through an interpreter of classic BPF.

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

/// What a rule looks at besides the call's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Every call.
    Always,
    /// Argument `arg` (its low 32 bits) is `value`.
    ArgIs { arg: u8, value: u64 },
    /// Argument `arg` has `bit` set.
    ArgHasBit { arg: u8, bit: u64 },
}

/// One rule of the filter: the call, when it applies, the errno the call then fails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub call: &'static str,
    pub nr: i64,
    pub when: When,
    pub errno: i32,
}

/// The calls that set a file's mode, with the argument that holds it.
const MODE_SETTERS: [(&str, i64, u8); 9] = [
    ("chmod", libc::SYS_chmod, 1),
    ("fchmod", libc::SYS_fchmod, 1),
    ("fchmodat", libc::SYS_fchmodat, 2),
    ("fchmodat2", SYS_FCHMODAT2, 2),
    ("open", libc::SYS_open, 2),
    ("openat", libc::SYS_openat, 3),
    ("creat", libc::SYS_creat, 1),
    ("mknod", libc::SYS_mknod, 1),
    ("mknodat", libc::SYS_mknodat, 2),
];

/// Every rule of the filter, as data: the module header says why each group is there.
pub fn rules() -> Vec<Rule> {
    let rule = |call, nr, when, errno| Rule {
        call,
        nr,
        when,
        errno,
    };
    let mut out: Vec<Rule> = denied()
        .into_iter()
        .map(|(call, nr)| rule(call, nr, When::Always, libc::EPERM))
        .collect();
    // Pushing characters into a terminal (TIOCSTI) or poking the console (TIOCLINUX):
    // refused even where the sandbox keeps the caller's terminal (`shell`, `agent`).
    for cmd in [libc::TIOCSTI, libc::TIOCLINUX] {
        let when = When::ArgIs { arg: 1, value: cmd };
        out.push(rule("ioctl", libc::SYS_ioctl, when, libc::EPERM));
    }
    // Setuid and setgid bits: the loop's folders are host folders, and such a file made
    // inside would be a setuid binary of the host user (of root, where root runs loops).
    for (call, nr, arg) in MODE_SETTERS {
        for bit in [libc::S_ISUID, libc::S_ISGID] {
            let when = When::ArgHasBit {
                arg,
                bit: bit as u64,
            };
            out.push(rule(call, nr, when, libc::EPERM));
        }
    }
    // Flags and modes behind a pointer no filter can read: ENOSYS makes libc fall back to
    // clone and openat, whose arguments the rules above see.
    out.push(rule("clone3", libc::SYS_clone3, When::Always, libc::ENOSYS));
    out.push(rule(
        "openat2",
        libc::SYS_openat2,
        When::Always,
        libc::ENOSYS,
    ));
    for (call, nr) in [
        ("socket", libc::SYS_socket),
        ("socketpair", libc::SYS_socketpair),
    ] {
        for (_, family) in DENIED_SOCKET_FAMILIES {
            let when = When::ArgIs {
                arg: 0,
                value: family as u64,
            };
            out.push(rule(call, nr, when, libc::EAFNOSUPPORT));
        }
    }
    out
}

/// The errnos of [`rules`], one program each, in the order bwrap gets them.
pub const PROGRAM_ERRNOS: [i32; 3] = [libc::EPERM, libc::ENOSYS, libc::EAFNOSUPPORT];

/// [`rules`] compiled: one program per errno (a seccompiler filter has one action for what
/// its rules match), each allowing what no rule of its errno matches.
pub fn programs() -> Result<Vec<BpfProgram>, SeccompError> {
    fn err(e: impl std::fmt::Display) -> SeccompError {
        SeccompError::Build(e.to_string())
    }
    let arch = target_arch()?;
    let rules = rules();
    PROGRAM_ERRNOS
        .iter()
        .map(|&errno| {
            // Per call: its conditional rules, any one of which matches (an empty list
            // matches every call).
            let mut by_call: BTreeMap<i64, Option<Vec<SeccompRule>>> = BTreeMap::new();
            for r in rules.iter().filter(|r| r.errno == errno) {
                let cond = match r.when {
                    When::Always => None,
                    When::ArgIs { arg, value } => Some(SeccompCondition::new(
                        arg,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::Eq,
                        value,
                    )),
                    When::ArgHasBit { arg, bit } => Some(SeccompCondition::new(
                        arg,
                        SeccompCmpArgLen::Dword,
                        SeccompCmpOp::MaskedEq(bit),
                        bit,
                    )),
                };
                let entry = by_call.entry(r.nr).or_insert_with(|| Some(Vec::new()));
                match (cond, entry.as_mut()) {
                    // A call refused always: its conditions would say nothing more.
                    (None, _) => *entry = None,
                    (Some(cond), Some(list)) => {
                        list.push(SeccompRule::new(vec![cond.map_err(err)?]).map_err(err)?)
                    }
                    (Some(_), None) => {}
                }
            }
            let map: BTreeMap<i64, Vec<SeccompRule>> = by_call
                .into_iter()
                .map(|(nr, rules)| (nr, rules.unwrap_or_default()))
                .collect();
            let filter = SeccompFilter::new(
                map,
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .map_err(err)?;
            filter
                .try_into()
                .map_err(|e: seccompiler::BackendError| err(e))
        })
        .collect()
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
pub(super) mod tests {
    //! Each rule of the filter, judged by running the very programs bwrap receives through a
    //! small interpreter of the classic BPF that seccomp runs (loads of the syscall data,
    //! jumps, ANDs, returns), so every rule has a test of its own and none needs a kernel.
    use super::*;

    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;

    /// What seccomp would answer for a call: the action word the programs return, the
    /// most restrictive of them winning as in the kernel.
    pub(in crate::sandbox) fn verdict(nr: i64, args: [u64; 6], arch: u32) -> u32 {
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

    pub(in crate::sandbox) fn run(prog: &BpfProgram, nr: i64, args: [u64; 6], arch: u32) -> u32 {
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
    fn every_rule_refuses_what_it_names_with_its_errno_and_no_more() {
        let rules = rules();
        for r in &rules {
            let mut hit = [0u64; 6];
            let mut miss = None;
            match r.when {
                When::Always => {}
                When::ArgIs { arg, value } => {
                    hit[arg as usize] = value;
                    // The next value no rule of this call names.
                    let mut other = value + 1;
                    while rules
                        .iter()
                        .any(|o| o.nr == r.nr && o.when == When::ArgIs { arg, value: other })
                    {
                        other += 1;
                    }
                    let mut args = [0u64; 6];
                    args[arg as usize] = other;
                    miss = Some(args);
                }
                When::ArgHasBit { arg, bit } => {
                    hit[arg as usize] = 0o755 | bit;
                    let mut args = [0u64; 6];
                    args[arg as usize] = 0o1777;
                    miss = Some(args);
                }
            }
            assert_eq!(
                verdict(r.nr, hit, AUDIT_ARCH_X86_64),
                errno(r.errno),
                "{r:?}"
            );
            if let Some(args) = miss {
                assert_eq!(
                    verdict(r.nr, args, AUDIT_ARCH_X86_64),
                    libc::SECCOMP_RET_ALLOW,
                    "{r:?} with {args:?}"
                );
            }
        }
        // Each group of the module header is in the table.
        let count = |errno: i32| rules.iter().filter(|r| r.errno == errno).count();
        assert_eq!(
            count(libc::EPERM),
            denied().len() + 2 + 2 * MODE_SETTERS.len()
        );
        assert_eq!(count(libc::ENOSYS), 2);
        assert_eq!(count(libc::EAFNOSUPPORT), 2 * DENIED_SOCKET_FAMILIES.len());
        assert_eq!(programs().unwrap().len(), PROGRAM_ERRNOS.len());
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
        for (_, nr, arg) in MODE_SETTERS {
            let with = |mode: u64| {
                let mut args = [0u64; 6];
                args[arg as usize] = mode;
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
