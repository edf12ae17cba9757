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

/// Files of the host's /etc that hold secrets of the machine; where they exist they are
/// covered with /dev/null (a sandbox whose user maps to root could read them otherwise).
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
            .collect();
        HostView {
            system,
            etc_secrets,
            env,
        }
    }
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
}
