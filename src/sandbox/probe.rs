//! What this machine can do for the sandbox (DESIGN 4.3). The quick probe reads a few
//! files (no process is started) and runs before every sandboxed command; `doctor` adds
//! the slow checks (bwrap's version, a real overlay mount in a user namespace, cgroups).
//! Each finding carries the exact fix.

use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub ok: bool,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// The inputs of the quick probe, read from the machine (or made up in tests).
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub bwrap: Option<PathBuf>,
    pub is_root: bool,
    /// /proc/sys/user/max_user_namespaces
    pub max_user_namespaces: Option<u64>,
    /// /proc/sys/kernel/unprivileged_userns_clone (Debian and older Ubuntu kernels)
    pub unprivileged_userns_clone: Option<u64>,
    /// /proc/sys/kernel/apparmor_restrict_unprivileged_userns (Ubuntu 23.10 and later)
    pub apparmor_restrict: Option<u64>,
    /// /proc/filesystems
    pub filesystems: String,
    /// uname -r
    pub kernel: String,
}

fn read_u64(path: &str) -> Option<u64> {
    read_proc(path)?.trim().parse().ok()
}

/// A file the kernel composes, read whole ([`crate::fsutil::read_proc`]); `None` when it
/// cannot be.
fn read_proc(path: &str) -> Option<String> {
    crate::fsutil::read_proc(path).ok()
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The first executable `name` on `path`.
pub fn which(name: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| {
            std::fs::metadata(p)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

impl Inputs {
    pub fn read() -> Inputs {
        let path = std::env::var("PATH").unwrap_or_default();
        let is_root = is_root();
        Inputs {
            bwrap: which("bwrap", &path),
            is_root,
            max_user_namespaces: read_u64("/proc/sys/user/max_user_namespaces"),
            // Both bind only unprivileged users (see `quick`).
            unprivileged_userns_clone: (!is_root)
                .then(|| read_u64("/proc/sys/kernel/unprivileged_userns_clone"))
                .flatten(),
            apparmor_restrict: (!is_root)
                .then(|| read_u64("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
                .flatten(),
            filesystems: read_proc("/proc/filesystems").unwrap_or_default(),
            kernel: nix::sys::utsname::uname()
                .map(|u| u.release().to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }
}

/// The quick probe: every finding, passing or not.
pub fn quick(i: &Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    out.push(match &i.bwrap {
        Some(p) => Finding { check: "bwrap", ok: true, detail: format!("found at {}", p.display()), fix: None },
        None => Finding {
            check: "bwrap",
            ok: false,
            detail: "bubblewrap (bwrap) is not on PATH".into(),
            fix: Some("sudo apt-get install bubblewrap   (Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)".into()),
        },
    });
    let userns_ok = i.max_user_namespaces.unwrap_or(1) > 0;
    out.push(if userns_ok {
        Finding { check: "user namespaces", ok: true, detail: format!("user.max_user_namespaces = {}", i.max_user_namespaces.unwrap_or(0)), fix: None }
    } else {
        Finding {
            check: "user namespaces",
            ok: false,
            detail: "user.max_user_namespaces is 0: user namespaces are disabled".into(),
            fix: Some("sudo sysctl -w user.max_user_namespaces=15000 (and set it in /etc/sysctl.d/ to keep it)".into()),
        }
    });
    if !i.is_root && i.unprivileged_userns_clone == Some(0) {
        out.push(Finding {
            check: "unprivileged user namespaces",
            ok: false,
            detail: "kernel.unprivileged_userns_clone is 0".into(),
            fix: Some(
                "sudo sysctl -w kernel.unprivileged_userns_clone=1 (and set it in /etc/sysctl.d/)"
                    .into(),
            ),
        });
    }
    if !i.is_root && i.apparmor_restrict == Some(1) {
        out.push(Finding {
            check: "apparmor",
            ok: false,
            detail: "kernel.apparmor_restrict_unprivileged_userns is 1: AppArmor blocks unprivileged user namespaces".into(),
            fix: Some("add an AppArmor profile allowing userns for /usr/bin/bwrap and git-loop, or sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0".into()),
        });
    }
    let overlay = i
        .filesystems
        .lines()
        .any(|l| l.split_whitespace().last() == Some("overlay"));
    let (major, minor) = kernel_version(&i.kernel);
    // Overlayfs can be mounted inside a user namespace since Linux 5.11.
    let new_enough = (major, minor) >= (5, 11);
    out.push(if overlay && new_enough {
        Finding {
            check: "overlayfs",
            ok: true,
            detail: format!("available (kernel {})", i.kernel),
            fix: None,
        }
    } else if !new_enough {
        Finding {
            check: "overlayfs",
            ok: false,
            detail: format!(
                "kernel {} cannot mount overlayfs in a user namespace (needs 5.11)",
                i.kernel
            ),
            fix: Some("upgrade the kernel to 5.11 or later".into()),
        }
    } else {
        Finding {
            check: "overlayfs",
            ok: false,
            detail: "overlayfs is not in /proc/filesystems".into(),
            fix: Some("sudo modprobe overlay (and add `overlay` to /etc/modules-load.d/)".into()),
        }
    });
    out
}

fn kernel_version(release: &str) -> (u32, u32) {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Inputs {
        Inputs {
            bwrap: Some("/usr/bin/bwrap".into()),
            is_root: false,
            max_user_namespaces: Some(1000),
            unprivileged_userns_clone: Some(1),
            apparmor_restrict: Some(0),
            filesystems: "nodev\tproc\nnodev\toverlay\n".into(),
            kernel: "6.1.0-18-amd64".into(),
        }
    }

    fn failing(i: &Inputs) -> Vec<&'static str> {
        quick(i)
            .into_iter()
            .filter(|f| !f.ok)
            .map(|f| f.check)
            .collect()
    }

    #[test]
    fn a_kernel_file_is_read_whole_and_a_number_from_it() {
        // /proc files give their size as 0: read whole, as the kernel composes them.
        let filesystems = read_proc("/proc/filesystems").unwrap();
        assert_eq!(
            filesystems,
            std::fs::read_to_string("/proc/filesystems").unwrap()
        );
        assert!(filesystems.contains("\tproc\n"), "{filesystems}");
        let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap();
        assert_eq!(
            read_u64("/proc/sys/kernel/pid_max"),
            Some(pid_max.trim().parse().unwrap())
        );
        // Missing, or a folder (a read that fails): nothing, and no second try for ever.
        assert_eq!(read_proc("/proc/sys/no-such-file"), None);
        assert_eq!(read_u64("/proc/sys/no-such-file"), None);
        assert_eq!(read_proc("/proc/sys"), None);
    }

    #[test]
    fn a_good_machine_passes() {
        assert!(failing(&good()).is_empty());
    }

    #[test]
    fn each_finding_has_its_fix() {
        let i = Inputs {
            bwrap: None,
            ..good()
        };
        let f = quick(&i);
        assert!(f[0]
            .fix
            .as_deref()
            .unwrap()
            .contains("apt-get install bubblewrap"));
        let i = Inputs {
            apparmor_restrict: Some(1),
            ..good()
        };
        assert_eq!(failing(&i), vec!["apparmor"]);
        assert!(quick(&i).iter().any(|f| f
            .fix
            .as_deref()
            .is_some_and(|x| x.contains("apparmor_restrict_unprivileged_userns=0"))));
        let i = Inputs {
            unprivileged_userns_clone: Some(0),
            ..good()
        };
        assert_eq!(failing(&i), vec!["unprivileged user namespaces"]);
        let i = Inputs {
            max_user_namespaces: Some(0),
            ..good()
        };
        assert_eq!(failing(&i), vec!["user namespaces"]);
        let i = Inputs {
            kernel: "5.4.0-150-generic".into(),
            ..good()
        };
        assert_eq!(failing(&i), vec!["overlayfs"]);
        let i = Inputs {
            filesystems: "nodev\tproc\n".into(),
            ..good()
        };
        assert!(quick(&i).iter().any(|f| f.fix.as_deref()
            == Some("sudo modprobe overlay (and add `overlay` to /etc/modules-load.d/)")));
        // root is not subject to the unprivileged switches.
        let i = Inputs {
            is_root: true,
            unprivileged_userns_clone: Some(0),
            apparmor_restrict: Some(1),
            ..good()
        };
        assert!(failing(&i).is_empty());
    }
}
