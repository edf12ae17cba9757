//! The `bwrap` backend's translator: [`argv`] turns a [`SandboxSpec`] into bwrap's argument
//! list. Pure — no process is started, no file is read — so tests compare its output
//! argument by argument.
//!
//! Ordering rules: namespace and process options first; then the mounts in the spec's
//! order (parents before children, protections after what they protect, see spec.rs);
//! then `--add-seccomp-fd`, which bwrap applies last, right before exec, so its own setup is not
//! subject to the filter; then `--chdir` and the command after `--`.
//! The environment is not in the argv: bwrap passes on the environment it is started
//! with, and the spawner starts it with exactly the spec's, so no value (a vault secret
//! among them) is ever visible in `/proc/<pid>/cmdline`.

use std::ffi::OsString;

use super::spec::{Mount, NetMode, SandboxSpec};

/// File descriptors the spawner hands to bwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fds {
    /// The compiled seccomp filters.
    pub seccomp: Vec<i32>,
}

pub fn argv(bwrap: &str, spec: &SandboxSpec, fds: &Fds) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![bwrap.into()];
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    // Every namespace, the user namespace included; the network too unless `host`.
    push(&["--unshare-all", "--unshare-user"]);
    if spec.net == NetMode::Host {
        push(&["--share-net"]);
    }
    // No user namespace can be made inside: no way back out through a nested one.
    push(&["--disable-userns"]);
    push(&["--die-with-parent"]);
    if spec.new_session {
        push(&["--new-session"]);
    }
    push(&["--cap-drop", "ALL"]);
    push(&["--hostname", &spec.hostname]);
    for m in &spec.mounts {
        mount_args(&mut a, m);
    }
    for fd in &fds.seccomp {
        a.push("--add-seccomp-fd".into());
        a.push(fd.to_string().into());
    }
    a.push("--chdir".into());
    a.push(spec.cwd.clone().into());
    a.push("--".into());
    a.extend(spec.command.iter().map(OsString::from));
    a
}

fn mount_args(a: &mut Vec<OsString>, m: &Mount) {
    match m {
        Mount::Bind {
            host,
            inside,
            rw,
            optional,
        } => {
            let flag = match (rw, optional) {
                (true, false) => "--bind",
                (true, true) => "--bind-try",
                (false, false) => "--ro-bind",
                (false, true) => "--ro-bind-try",
            };
            a.push(flag.into());
            a.push(host.clone().into());
            a.push(inside.clone().into());
        }
        Mount::Symlink { target, inside } => {
            a.push("--symlink".into());
            a.push(target.clone().into());
            a.push(inside.clone().into());
        }
        Mount::Tmpfs { inside, size, ro } => {
            if let Some(size) = size {
                a.push("--size".into());
                a.push(size.to_string().into());
            }
            a.push("--tmpfs".into());
            a.push(inside.clone().into());
            if *ro {
                a.push("--remount-ro".into());
                a.push(inside.clone().into());
            }
        }
        Mount::Proc { inside } => {
            a.push("--proc".into());
            a.push(inside.clone().into());
        }
        Mount::Dev { inside } => {
            a.push("--dev".into());
            a.push(inside.clone().into());
        }
    }
}

/// The argv as one line a person can read (and paste), for `run --print-argv`.
pub fn display(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
            {
                s.into_owned()
            } else {
                format!("'{}'", s.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
