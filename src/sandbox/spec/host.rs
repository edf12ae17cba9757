//! What the host looks like, as far as the spec depends on it, and the system folders every sandbox sees.

use super::*;

/// What the host looks like, as far as the spec depends on it: which of the system
/// folders exist, and which are symlinks (merged /usr). Gathered once; a fake in tests.
#[derive(Debug, Clone, Default)]
pub struct HostView {
    pub system: Vec<(PathBuf, SystemEntry)>,
    /// Which of [`ETC_SECRETS`] exist on the host.
    pub etc_secrets: Vec<PathBuf>,
    /// Variables of the host environment (only the allowlisted ones are read).
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemEntry {
    Dir,
    Symlink(PathBuf),
}

/// Parts of the sandbox's own /proc that are bound read-only over it.
pub const PROC_READ_ONLY: &[&str] = &["/proc/sys", "/proc/sysrq-trigger"];

/// Files of the host's /etc that hold secrets of the machine; where they exist and the
/// user running git-loop may read them they are covered with /dev/null (a sandbox whose
/// user maps to root could read them otherwise). One the kernel refuses this user needs
/// no cover: a sandbox's user maps to this one and to no other uid or gid, so the kernel
/// refuses the sandbox the same (the default for anyone but root: `/etc/shadow` is
/// `root:shadow 0640`, the host keys `root 0600`), and each cover is a mount more that
/// bwrap reads back after every bind it makes.
pub const ETC_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_rsa_key",
    "/etc/ssh/ssh_host_ecdsa_key",
    "/etc/ssh/ssh_host_ed25519_key",
];

/// The host folders the sandbox sees read-only (DESIGN 4.1).
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
];

/// What a system path is on the host: a folder, a symlink (and where it points), or
/// nothing the sandbox binds (missing, or anything else: a file, a socket).
fn system_entry(p: &Path) -> Option<SystemEntry> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => std::fs::read_link(p).ok().map(SystemEntry::Symlink),
        Ok(m) if m.is_dir() => Some(SystemEntry::Dir),
        _ => None,
    }
}

impl HostView {
    pub fn read() -> HostView {
        let mut system = Vec::new();
        for dir in SYSTEM_DIRS {
            let p = Path::new(dir);
            if let Some(entry) = system_entry(p) {
                system.push((p.to_path_buf(), entry));
            }
        }
        let mut env = BTreeMap::new();
        for (k, v) in std::env::vars_os() {
            let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
                continue;
            };
            if passes_in(k) {
                env.insert(k.to_string(), v.to_string());
            }
        }
        let etc_secrets = ETC_SECRETS
            .iter()
            .map(PathBuf::from)
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .filter(|p| {
                use std::os::unix::ffi::OsStrExt;
                !std::ffi::CString::new(p.as_os_str().as_bytes()).is_ok_and(|c| read_refused(&c))
            })
            .collect();
        HostView {
            system,
            etc_secrets,
            env,
        }
    }
}

/// Whether the kernel refuses this process's user reading `path` (`EACCES` from
/// `faccessat(R_OK)` with the effective ids, the ones a sandbox's user maps to). Any other
/// answer (readable, or an error that says nothing of the permission) is no refusal. No
/// allocation: a test calls it in a forked child.
fn read_refused(path: &std::ffi::CStr) -> bool {
    // SAFETY: a plain system call on a NUL-terminated string.
    let r = unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::R_OK, libc::AT_EACCESS) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
}

/// The system part of every sandbox's view: the host's system folders read-only on
/// bwrap's fresh tmpfs root (merged-/usr symlinks recreated as symlinks rather than bound,
/// so the view matches the host's), the machine's secrets in /etc covered, the sandbox's
/// own /proc with its tunables read-only, a minimal /dev and a fresh /tmp.
pub fn system_mounts(host: &HostView, tmp_bytes: u64) -> Vec<Mount> {
    let mut m = Vec::new();
    for (path, entry) in &host.system {
        match entry {
            SystemEntry::Dir => m.push(Mount::ro(path, path)),
            SystemEntry::Symlink(target) => m.push(Mount::Symlink {
                target: target.clone(),
                inside: path.clone(),
            }),
        }
    }
    for secret in &host.etc_secrets {
        m.push(Mount::ro("/dev/null", secret));
    }
    m.push(Mount::Proc {
        inside: "/proc".into(),
    });
    // Kernel tunables and the sysrq trigger, read-only: bwrap covers them only when it
    // can tell they are writable, and a sandbox whose user maps to host root (when root
    // runs git-loop) could otherwise set core_pattern and run code on the host.
    for tunable in PROC_READ_ONLY {
        m.push(Mount::Bind {
            host: tunable.into(),
            inside: tunable.into(),
            rw: false,
            optional: true,
        });
    }
    m.push(Mount::Dev {
        inside: "/dev".into(),
    });
    m.push(Mount::Tmpfs {
        inside: "/tmp".into(),
        size: Some(tmp_bytes),
        ro: false,
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_system_path_is_bound_as_a_folder_or_a_link_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir(dir.join("usr")).unwrap();
        std::os::unix::fs::symlink("usr/lib", dir.join("lib")).unwrap();
        std::fs::write(dir.join("opt"), "a file").unwrap();
        assert_eq!(system_entry(&dir.join("usr")), Some(SystemEntry::Dir));
        assert_eq!(
            system_entry(&dir.join("lib")),
            Some(SystemEntry::Symlink("usr/lib".into()))
        );
        assert_eq!(system_entry(&dir.join("opt")), None);
        assert_eq!(system_entry(&dir.join("lib32")), None);
    }

    /// A file only its owner may read is refused to another user and read by its owner (or
    /// root); one anyone may read is refused to no one. Run as root, the other user is
    /// `nobody` in a forked child (which makes only system calls).
    #[test]
    fn a_file_the_user_may_not_read_is_refused_and_one_it_may_is_not() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (secret, open) = (tmp.path().join("secret"), tmp.path().join("open"));
        std::fs::write(&secret, "s").unwrap();
        std::fs::write(&open, "o").unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = |p: &Path| {
            use std::os::unix::ffi::OsStrExt;
            std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap()
        };
        let (secret_c, open_c) = (c(&secret), c(&open));
        assert!(!read_refused(&open_c));
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            // No permission bits at all: the owner is refused too (root would not be).
            std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
            assert!(read_refused(&secret_c));
            return;
        }
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(!read_refused(&secret_c), "root reads what it owns");
        // SAFETY: the child makes only system calls (async-signal-safe) and exits.
        let status = unsafe {
            let pid = libc::fork();
            assert!(pid >= 0);
            if pid == 0 {
                let dropped = libc::setgroups(0, std::ptr::null()) == 0
                    && libc::setgid(65534) == 0
                    && libc::setuid(65534) == 0;
                let code = if !dropped {
                    9
                } else {
                    i32::from(read_refused(&secret_c)) * 2 + i32::from(read_refused(&open_c))
                };
                libc::_exit(code);
            }
            let mut status = 0;
            assert_eq!(libc::waitpid(pid, &mut status, 0), pid);
            status
        };
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            2,
            "nobody: secret refused (2), open file read (0)"
        );
    }
}
