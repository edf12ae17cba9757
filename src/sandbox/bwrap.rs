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

use super::spec::{Mount, NetNamespace, SandboxSpec};

/// File descriptors the spawner hands to bwrap.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fds {
    /// The compiled seccomp filters.
    pub seccomp: Vec<i32>,
    /// Descriptors of the mounts that bwrap gets by descriptor (`Confined`, `OwnFile`,
    /// `Data`, `Secret`), by their path inside; an optional one that is absent is left out
    /// of the view.
    pub files: std::collections::BTreeMap<std::path::PathBuf, i32>,
    /// The write end of the pipe on which the creation supervisor reports refusals.
    pub report: Option<i32>,
    /// The mounts the spawner lays itself ([`laid`]), by their path inside: bwrap is not
    /// asked to bind them.
    pub laid: std::collections::BTreeSet<std::path::PathBuf>,
    /// Where there are any: the descriptor on which the sandbox's init asks for them once
    /// bwrap has made its own mounts, and waits until they are laid (spawn.rs), with each
    /// one's path inside and whether it is writable, which init checks before anything
    /// else runs.
    pub layer: Option<super::creation::Laying>,
}

/// A mount the spawner makes itself instead of bwrap, in the mount namespace it makes for
/// bwrap (spawn.rs), where it stands below a folder the spec binds by path (its carrier):
/// a descriptor mount (`Confined`, `OwnFile`), the descriptor's file or folder bound onto
/// itself, or a bind by path (`/dev/null` over `/etc/shadow`). bwrap reads the whole mount
/// table back after every bind it makes, and each mount there costs every one of those
/// reads: a mount bwrap is spared is one bind and one read less, and one laid only once
/// bwrap has made all of its own is in none of the tables it reads (BENCHMARKS.md). So
/// the spawner makes each carrier a mount of its own that propagates what is mounted on it
/// (a shared mount; bwrap makes its copies slaves of it, and so its bind of the carrier
/// too), bwrap makes the sandbox, and its init, before anything else runs, asks for the
/// laid mounts and waits: they are laid on the carriers then, reach the sandbox's copies
/// by propagation, and the carriers are made private again. Nothing is weaker: a
/// descriptor's mount is of the file or folder the host opened, found again below the
/// carrier without a link and compared by device and inode (as bwrap's `--bind-fd` does),
/// and a bind by path resolves its source as bwrap's would; each is read-only where the
/// spec says so or its carrier is bound read-only (bwrap's read-only bind of a folder makes
/// what it carries read-only, which a mount that comes after it would not be), `nosuid`
/// and `nodev` as bwrap makes its own; and init checks that each stands at its path
/// inside, without a link, the root of a mount of the file or folder the host laid (device
/// and inode), read-only where it should be, before the command starts (init.rs). A run
/// whose mounts cannot be laid runs nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Laid {
    pub inside: std::path::PathBuf,
    /// Writable: where the spec says so and its carrier is bound writable.
    pub rw: bool,
    /// The host folder bwrap binds by path that carries the mount, and the path below it.
    pub carrier: std::path::PathBuf,
    pub rel: std::path::PathBuf,
    /// A bind by path: its source (followed through links, as bwrap's `mount` follows
    /// them), and whether it may be absent (`--ro-bind-try`). `None` for a descriptor
    /// mount, whose source is what stands at `rel`.
    pub source: Option<(std::path::PathBuf, bool)>,
}

/// The mounts of `mounts` the spawner can lay itself with the same view as bwrap would
/// build ([`Laid`]), in the spec's order, among those `usable` accepts with their
/// carrier's folder on the host and the path below it (a descriptor mount whose descriptor the run holds; a bind by path whose
/// place below its carrier is there, without a link). One is laid where:
/// - the last mount before it whose inside holds its path, descriptor mounts and
///   remounts aside, is a `Bind` of the host folder that holds its place at the same
///   relative path (the carrier), and no other bind by path has a source holding that
///   place (that view would carry it too); a bind by path that carries another is not laid;
/// - no mount bwrap makes after the carrier lies on the way to it (it would hide the laid
///   mount, or be hidden by it in bwrap's order: one before it below its path), nor one
///   at its path after it (a `--remount-ro` of another path is no mount of its own);
/// - its path inside is no other laid mount's.
///
/// Laid mounts of one carrier keep the spec's order among themselves: the spawner lays
/// them in that order, each found through those laid before it, so one laid later below
/// an earlier one stands on the earlier one's mount, as in bwrap, and nothing is left
/// hidden below (every mount is read back by bwrap after each of its binds).
pub fn laid(
    mounts: &[Mount],
    usable: impl Fn(&Mount, &std::path::Path, &std::path::Path) -> bool,
) -> Vec<Laid> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Component, Path};
    // Each path as bytes, `/a/b`, compared byte-wise: this runs on every start, and
    // comparing `Path`s component by component over every pair of mounts cost more than
    // what laying saved. `None` for a path with `.`, `..` or no root: nothing is laid then.
    let key = |p: &Path| -> Option<Vec<u8>> {
        let mut k = Vec::new();
        for c in p.components() {
            match c {
                Component::RootDir => {}
                Component::Normal(n) => {
                    k.push(b'/');
                    k.extend_from_slice(n.as_bytes());
                }
                _ => return None,
            }
        }
        p.has_root()
            .then(|| if k.is_empty() { b"/".to_vec() } else { k })
    };
    // `a` is `b` or below it.
    let under = |a: &[u8], b: &[u8]| {
        a == b || b == b"/" || (a.len() > b.len() && a.starts_with(b) && a[b.len()] == b'/')
    };
    let Some(at): Option<Vec<Vec<u8>>> = mounts.iter().map(|m| key(m.inside())).collect() else {
        return Vec::new();
    };
    // Descriptor mounts on the way are looked through: laid too, with this carrier, or
    // they are bwrap's and meet this one (below).
    let carrier: Vec<Option<usize>> = (0..mounts.len())
        .map(|i| {
            (0..i).rev().find(|&j| {
                at[j] != at[i]
                    && under(&at[i], &at[j])
                    && !matches!(
                        mounts[j],
                        Mount::Confined { .. } | Mount::OwnFile { .. } | Mount::RemountRo { .. }
                    )
            })
        })
        .collect();
    // The source of each bind by path.
    let sources: Vec<Option<Option<Vec<u8>>>> = mounts
        .iter()
        .map(|m| match m {
            Mount::Bind { host, .. } => Some(key(host)),
            _ => None,
        })
        .collect();
    // Each one that could be laid, by index: its carrier's index.
    let mut found: Vec<Option<usize>> = vec![None; mounts.len()];
    let mut laid: Vec<Option<Laid>> = vec![None; mounts.len()];
    for (i, m) in mounts.iter().enumerate() {
        let (place, inside, rw, source) = match m {
            Mount::Confined {
                root,
                rel,
                inside,
                rw,
                ..
            } => (Some(root.join(rel)), inside, *rw, None),
            Mount::OwnFile {
                root, rel, inside, ..
            } => (Some(root.join(rel)), inside, false, None),
            Mount::Bind {
                host,
                inside,
                rw,
                optional,
            } if !carrier.contains(&Some(i)) => {
                (None, inside, *rw, Some((host.clone(), *optional)))
            }
            _ => continue,
        };
        let Some(j) = carrier[i] else { continue };
        let Mount::Bind {
            host,
            inside: outer,
            optional: false,
            rw: carrier_rw,
        } = &mounts[j]
        else {
            continue;
        };
        let below = inside.strip_prefix(outer).expect("the carrier holds it");
        let target = host.join(below);
        let Some(target_key) = key(&target) else {
            continue;
        };
        if place.is_some_and(|p| key(&p).as_ref() != Some(&target_key)) {
            continue;
        }
        let elsewhere = sources.iter().enumerate().any(|(k, h)| {
            k != j
                && match h {
                    Some(Some(h)) => under(&target_key, h),
                    Some(None) => true,
                    None => false,
                }
        });
        if elsewhere || !usable(m, host, below) {
            continue;
        }
        found[i] = Some(j);
        laid[i] = Some(Laid {
            inside: inside.clone(),
            rw: rw && *carrier_rw,
            carrier: host.clone(),
            rel: below.to_path_buf(),
            source,
        });
    }
    // What bwrap still makes after each one's carrier must not meet it (see above); a
    // mount laid with another carrier, or not laid, counts as bwrap's. Two laid with one
    // carrier may meet only as the spawner can keep them: the later one below the earlier
    // (laid after it, on its mount). The other way round the earlier one, already laid,
    // would be carried by the later one's recursive copy of its own place and stay on
    // top of it, where bwrap's later bind would hide it.
    let meets = |i: usize, j: usize, found: &[Option<usize>]| {
        let d = &at[i];
        (j + 1..mounts.len()).any(|k| {
            let a = &at[k];
            let strictly_below = |x: &[u8], y: &[u8]| x != y && under(x, y);
            if k == i {
                return false;
            }
            if found[k] == Some(j) {
                let apart = !under(a, d) && !under(d, a);
                return !(apart
                    || (k > i && strictly_below(a, d))
                    || (k < i && strictly_below(d, a)));
            }
            match mounts[k] {
                Mount::RemountRo { .. } => a == d,
                _ => under(d, a) || (k < i && under(a, d)),
            }
        })
    };
    loop {
        let out: Vec<usize> = (0..mounts.len())
            .filter(|&i| found[i].is_some_and(|j| meets(i, j, &found)))
            .collect();
        if out.is_empty() {
            break;
        }
        for i in out {
            found[i] = None;
        }
    }
    laid.into_iter()
        .zip(&found)
        .filter_map(|(l, f)| f.and(l))
        .collect()
}

pub fn argv(bwrap: &str, spec: &SandboxSpec, fds: &Fds) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![bwrap.into()];
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    // Every namespace, the user namespace included; the network too unless the spec keeps
    // the caller's, or the spawner has made it already (the proxy mode's, with the
    // loopback up and the proxy ports listening: see spawn.rs).
    push(&["--unshare-all", "--unshare-user"]);
    if let Some(uid) = spec.uid {
        let uid = uid.to_string();
        push(&["--uid", &uid, "--gid", &uid]);
    }
    if spec.netns != NetNamespace::Bwrap {
        push(&["--share-net"]);
    }
    // No user namespace can be made inside: no way back out through a nested one.
    push(&["--disable-userns"]);
    push(&["--die-with-parent"]);
    if spec.init.is_some() {
        push(&["--as-pid-1"]);
    }
    if spec.new_session {
        push(&["--new-session"]);
    }
    push(&["--cap-drop", "ALL"]);
    if spec.init.is_some() && !setuid(bwrap) {
        // For git-loop's init alone, which keeps CAP_SYS_PTRACE permitted only, raises it
        // only to open a non-dumpable caller's /proc entries, and drops both from every
        // set before anything else runs (caps.rs): the command gets neither. A setuid
        // bwrap refuses --cap-add; init then holds nothing.
        push(&["--cap-add", "CAP_SYS_PTRACE", "--cap-add", "CAP_SETPCAP"]);
    }
    push(&["--hostname", &spec.hostname]);
    for m in &spec.mounts {
        mount_args(&mut a, m, fds);
    }
    for fd in &fds.seccomp {
        a.push("--add-seccomp-fd".into());
        a.push(fd.to_string().into());
    }
    a.push("--chdir".into());
    a.push(spec.cwd.clone().into());
    a.push("--".into());
    if let Some(init) = &spec.init {
        a.push(init.into());
        a.push(super::init::ARG.into());
        a.extend(super::creation::init_args(
            &spec.deny_create,
            &spec.watch,
            fds.report,
            fds.layer.as_ref(),
        ));
        a.push("--".into());
    }
    a.extend(spec.command.iter().map(OsString::from));
    a
}

/// Whether `bwrap` is installed setuid (it then takes no `--cap-add` from anyone but root).
fn setuid(bwrap: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = if bwrap.contains('/') {
        Some(std::path::PathBuf::from(bwrap))
    } else {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(bwrap))
                .find(|f| f.is_file())
        })
    };
    path.and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.permissions().mode() & 0o4000 != 0)
}

/// The argv of a jail (see `task.rs`): every namespace, the network's too; the system
/// read-only; the tree `tree_fd` read-write at `inside`, which is also the working
/// folder; the root read-only; the filters; `command`.
pub fn jail_argv(
    bwrap: &str,
    host: &super::spec::HostView,
    tree_fd: i32,
    inside: &std::path::Path,
    seccomp: &[i32],
    command: &[OsString],
) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![bwrap.into()];
    for opt in [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "git-loop",
    ] {
        a.push(opt.into());
    }
    let fds = Fds::default();
    for m in super::spec::system_mounts(host, 64 << 20) {
        mount_args(&mut a, &m, &fds);
    }
    a.push("--bind-fd".into());
    a.push(tree_fd.to_string().into());
    a.push(inside.into());
    a.push("--remount-ro".into());
    a.push("/".into());
    for fd in seccomp {
        a.push("--add-seccomp-fd".into());
        a.push(fd.to_string().into());
    }
    a.push("--chdir".into());
    a.push(inside.into());
    a.push("--".into());
    a.extend(command.iter().cloned());
    a
}

fn mount_args(a: &mut Vec<OsString>, m: &Mount, fds: &Fds) {
    match m {
        Mount::Secret { inside } => {
            if let Some(fd) = fds.files.get(inside) {
                a.push("--perms".into());
                a.push("0600".into());
                a.push("--ro-bind-data".into());
                a.push(fd.to_string().into());
                a.push(inside.clone().into());
            }
        }
        Mount::Data { inside, .. } => {
            if let Some(fd) = fds.files.get(inside) {
                a.push("--ro-bind-data".into());
                a.push(fd.to_string().into());
                a.push(inside.clone().into());
            }
        }
        Mount::Confined { inside, .. } | Mount::OwnFile { inside, .. }
            if fds.laid.contains(inside) => {}
        Mount::Confined { inside, rw, .. } => {
            if let Some(fd) = fds.files.get(inside) {
                a.push(if *rw { "--bind-fd" } else { "--ro-bind-fd" }.into());
                a.push(fd.to_string().into());
                a.push(inside.clone().into());
            }
        }
        Mount::OwnFile { inside, .. } => {
            if let Some(fd) = fds.files.get(inside) {
                a.push("--ro-bind-fd".into());
                a.push(fd.to_string().into());
                a.push(inside.clone().into());
            }
        }
        Mount::Bind { inside, .. } if fds.laid.contains(inside) => {}
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
        Mount::Unreadable { inside } => {
            a.extend(["--perms", "0000", "--size", "4096", "--tmpfs"].map(OsString::from));
            a.push(inside.clone().into());
            a.push("--remount-ro".into());
            a.push(inside.clone().into());
        }
        Mount::RemountRo { inside } => {
            a.push("--remount-ro".into());
            a.push(inside.clone().into());
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::loops::{Kind, LoopRecord, State};
    use crate::sandbox::spec::{HostView, Limits, RunOptions, SystemEntry};
    use crate::values::{NetMode, RunMode};
    use crate::workspace::Workspace;

    fn record() -> LoopRecord {
        LoopRecord {
            id: "fix-abc123".into(),
            title: "fix".into(),
            kind: Kind::Code,
            repo: Some("app".into()),
            base: Some("0".repeat(40)),
            base_branch: Some("main".into()),
            branch: "loop/fix-abc123".into(),
            notes_base: "1".repeat(40),
            knowledge_base: None,
            vault: "default".into(),
            sandbox: "default".into(),
            mode: RunMode::Work,
            network: NetMode::None,
            created_by: "alice".into(),
            created_at: crate::values::Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            state: State::Active,
            grants: Vec::new(),
            config: toml::Table::new(),
            group: None,
            included: Vec::new(),
        }
    }

    fn host() -> HostView {
        let mut env = BTreeMap::new();
        env.insert("TERM".to_string(), "xterm".to_string());
        env.insert("LC_ALL".to_string(), "C".to_string());
        env.insert("GITHUB_TOKEN".to_string(), "ghp_secret".to_string());
        env.insert("AWS_SECRET_ACCESS_KEY".to_string(), "secret".to_string());
        env.insert("SSH_AUTH_SOCK".to_string(), "/run/ssh.sock".to_string());
        HostView {
            etc_secrets: vec![PathBuf::from("/etc/shadow")],
            system: vec![
                (PathBuf::from("/usr"), SystemEntry::Dir),
                (
                    PathBuf::from("/bin"),
                    SystemEntry::Symlink("usr/bin".into()),
                ),
                (PathBuf::from("/etc"), SystemEntry::Dir),
            ],
            env,
        }
    }

    fn options(mode: RunMode, net: NetMode) -> RunOptions {
        RunOptions {
            mode,
            net,
            limits: Limits {
                pids: 64,
                memory_bytes: 1 << 30,
                nofile: 1024,
                tmp_bytes: 1 << 20,
                best_effort: false,
            },
            command: vec!["make".into(), "test".into()],
            ro_same_path: Vec::new(),
            operator_mounts: Vec::new(),
            vault_files: Vec::new(),
            chat_seeded: false,
            new_session: true,
            home_overlay: true,
            identity: None,
            agent_env: Vec::new(),
            toolchains: Default::default(),
            trust: None,
            init_exe: Some("/opt/git-loop/bin/git-loop".into()),
            fs_cover: Vec::new(),
            deny_create: Vec::new(),
            supervisor: false,
            nested_git: false,
            egress: (net == NetMode::Proxy).then(|| crate::sandbox::spec::Egress {
                exe: "/opt/git-loop/bin/git-loop".into(),
                domains: 3,
                token: "t0k".into(),
            }),
        }
    }

    fn spec(mode: RunMode, net: NetMode) -> SandboxSpec {
        let ws = Workspace::at("/ws".into(), "alice".into());
        SandboxSpec::for_loop(&ws, &record(), &host(), &options(mode, net))
    }

    #[test]
    fn a_profiles_uid_names_the_user_inside_and_nothing_else() {
        let plain = spec(RunMode::Work, NetMode::None);
        let mut named = plain.clone();
        named.uid = Some(1000);
        let fds = Fds {
            seccomp: vec![3],
            ..Fds::default()
        };
        let (plain, named) = (
            strings(argv("bwrap", &plain, &fds)),
            strings(argv("bwrap", &named, &fds)),
        );
        assert_eq!(
            &named[..7],
            &[
                "bwrap",
                "--unshare-all",
                "--unshare-user",
                "--uid",
                "1000",
                "--gid",
                "1000"
            ]
        );
        // Every other argument is the same: no mount, namespace or filter changes.
        let mut rest = named.clone();
        rest.drain(3..7);
        assert_eq!(rest, plain);
    }

    /// The `--bind` (read-write) pairs of an argv.
    fn rw_binds(argv: &[String]) -> Vec<(&str, &str)> {
        argv.windows(3)
            .filter(|w| w[0] == "--bind")
            .map(|w| (w[1].as_str(), w[2].as_str()))
            .collect()
    }

    fn strings(v: Vec<OsString>) -> Vec<String> {
        v.into_iter().map(|s| s.into_string().unwrap()).collect()
    }

    #[test]
    fn work_mode_argv_exactly() {
        let w = "/loopat/loop/fix-abc123/workdir";
        let n = "/loopat/context/notes";
        let files: std::collections::BTreeMap<PathBuf, i32> = [
            "/loopat/loop/fix-abc123/.claude/CLAUDE.md".to_string(),
            format!("{w}/.git"),
            format!("{w}/.git/config"),
            format!("{w}/.git/commondir"),
            format!("{w}/.git/hooks"),
            format!("{n}/.git"),
            format!("{n}/.git/config"),
            format!("{n}/.git/commondir"),
            format!("{n}/.git/hooks"),
            "/loopat/context/personal/.loopat".to_string(),
            "/loopat/loop/fix-abc123/.claude/skills".to_string(),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, p)| (PathBuf::from(p), i as i32 + 5))
        .collect();
        let argv = strings(argv(
            "/usr/bin/bwrap",
            &spec(RunMode::Work, NetMode::None),
            &Fds {
                seccomp: vec![3, 4],
                files,
                ..Fds::default()
            },
        ));
        let expected: Vec<&str> = vec![
            "/usr/bin/bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            // The sandbox's pid 1 is git-loop's, non-dumpable (see init.rs).
            "--as-pid-1",
            "--new-session",
            "--cap-drop",
            "ALL",
            // init's, dropped by it from the command's sets (caps.rs).
            "--cap-add",
            "CAP_SYS_PTRACE",
            "--cap-add",
            "CAP_SETPCAP",
            "--hostname",
            "loop",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/bin",
            "/bin",
            "--ro-bind",
            "/etc",
            "/etc",
            "--ro-bind",
            "/dev/null",
            "/etc/shadow",
            "--proc",
            "/proc",
            "--ro-bind-try",
            "/proc/sys",
            "/proc/sys",
            "--ro-bind-try",
            "/proc/sysrq-trigger",
            "/proc/sysrq-trigger",
            "--dev",
            "/dev",
            "--size",
            "1048576",
            "--tmpfs",
            "/tmp",
            "--ro-bind",
            "/opt/git-loop/bin/git-loop",
            "/loopat/.git-loop/git-loop",
            "--ro-bind",
            "/ws/context/knowledge",
            "/loopat/context/knowledge",
            "--bind",
            "/ws/loops/fix-abc123/context/notes",
            "/loopat/context/notes",
            "--ro-bind",
            "/ws/context/notes",
            "/loopat/context/.origins/notes",
            // Only the origin's git folder, not its working tree.
            "--ro-bind",
            "/ws/context/repos/app/.git",
            "/loopat/context/repos/app/.git",
            "--bind",
            "/ws/personal/alice",
            "/loopat/context/personal",
            // The personal history hidden; the personal config read-only, by descriptor.
            "--size",
            "4096",
            "--tmpfs",
            "/loopat/context/personal/.git",
            "--remount-ro",
            "/loopat/context/personal/.git",
            "--ro-bind-fd",
            "14",
            "/loopat/context/personal/.loopat",
            "--bind",
            "/ws/loops/fix-abc123/workdir",
            "/loopat/loop/fix-abc123/workdir",
            // Each of the loop's repositories: its git folder pinned, its config,
            // commondir and hooks git-loop's and read-only.
            "--bind-fd",
            "6",
            "/loopat/loop/fix-abc123/workdir/.git",
            "--ro-bind-fd",
            "7",
            "/loopat/loop/fix-abc123/workdir/.git/config",
            "--ro-bind-fd",
            "8",
            "/loopat/loop/fix-abc123/workdir/.git/commondir",
            "--ro-bind-fd",
            "9",
            "/loopat/loop/fix-abc123/workdir/.git/hooks",
            "--bind-fd",
            "10",
            "/loopat/context/notes/.git",
            "--ro-bind-fd",
            "11",
            "/loopat/context/notes/.git/config",
            "--ro-bind-fd",
            "12",
            "/loopat/context/notes/.git/commondir",
            "--ro-bind-fd",
            "13",
            "/loopat/context/notes/.git/hooks",
            "--bind",
            "/ws/loops/fix-abc123/.claude",
            "/loopat/loop/fix-abc123/.claude",
            "--ro-bind-fd",
            "5",
            "/loopat/loop/fix-abc123/.claude/CLAUDE.md",
            "--ro-bind-fd",
            "15",
            "/loopat/loop/fix-abc123/.claude/skills",
            "--bind",
            "/ws/loops/fix-abc123/home/merged",
            "/home/alice",
            "--remount-ro",
            "/",
            "--add-seccomp-fd",
            "3",
            "--add-seccomp-fd",
            "4",
            "--chdir",
            "/loopat/loop/fix-abc123/workdir",
            "--",
            "/loopat/.git-loop/git-loop",
            "__init",
            "--",
            "make",
            "test",
        ];
        assert_eq!(argv, expected);
    }

    #[test]
    fn what_git_reads_as_instructions_in_a_loops_repositories_is_read_only() {
        let s = spec(RunMode::Work, NetMode::None);
        for (role, inside) in [
            ("code", "/loopat/loop/fix-abc123/workdir"),
            ("notes", "/loopat/context/notes"),
        ] {
            let config = s
                .mounts
                .iter()
                .find_map(|m| match m {
                    Mount::OwnFile {
                        inside: i, content, ..
                    } if i == &PathBuf::from(format!("{inside}/.git/config")) => Some(content),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{role}: no config of git-loop's"));
            assert!(config.contains("fsmonitor = false"), "{config}");
            assert!(config.contains("ignoreSubmodules = dirty"), "{config}");
            assert!(config.contains("[branch \"loop/fix-abc123\"]"), "{config}");
            for part in ["hooks", "commondir"] {
                assert!(
                    s.mounts.iter().any(|m| match m {
                        Mount::Confined { inside: i, rw, .. } => {
                            i == &PathBuf::from(format!("{inside}/.git/{part}")) && !rw
                        }
                        Mount::OwnFile { inside: i, .. } => {
                            i == &PathBuf::from(format!("{inside}/.git/{part}"))
                        }
                        _ => false,
                    }),
                    "{role}: {part} is not read-only"
                );
            }
        }
        // In review mode the git folders are read-only too.
        let review = spec(RunMode::Review, NetMode::None);
        assert!(!review
            .mounts
            .iter()
            .any(|m| matches!(m, Mount::Confined { rw: true, .. })));
    }

    #[test]
    fn creation_rules_reach_the_sandboxs_pid_1_with_its_report_pipe() {
        let mut spec = spec(RunMode::Work, NetMode::None);
        spec.deny_create = vec!["*.pem".into(), ".env*".into()];
        let fds = Fds {
            seccomp: vec![3],
            report: Some(9),
            ..Fds::default()
        };
        let argv = strings(argv("bwrap", &spec, &fds));
        let end = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(
            &argv[end + 1..],
            &[
                "/loopat/.git-loop/git-loop",
                "__init",
                "--deny-create",
                "*.pem",
                "--deny-create",
                ".env*",
                "--report-fd",
                "9",
                "--",
                "make",
                "test"
            ]
        );
    }

    #[test]
    fn review_mode_makes_every_bind_read_only_but_home() {
        let argv = strings(argv(
            "bwrap",
            &spec(RunMode::Review, NetMode::None),
            &Fds {
                seccomp: vec![3],
                ..Default::default()
            },
        ));
        assert_eq!(
            rw_binds(&argv),
            vec![("/ws/loops/fix-abc123/home/merged", "/home/alice")]
        );
        assert!(argv.windows(2).any(|w| w[0] == "--tmpfs" && w[1] == "/tmp"));
    }

    #[test]
    fn home_without_an_overlay_binds_the_loops_own_layer() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let opts = RunOptions {
            home_overlay: false,
            ..options(RunMode::Review, NetMode::None)
        };
        let s = SandboxSpec::for_loop(&ws, &record(), &host(), &opts);
        let argv = strings(argv("bwrap", &s, &Fds::default()));
        assert_eq!(
            rw_binds(&argv),
            vec![("/ws/loops/fix-abc123/home/upper", "/home/alice")]
        );
    }

    #[test]
    fn proxy_mode_runs_the_command_in_the_spawners_network() {
        let s = spec(RunMode::Work, NetMode::Proxy);
        assert_eq!(s.netns, NetNamespace::Spawner);
        assert_eq!(s.landlock, crate::sandbox::spec::LandlockScopes::ALL);
        let argv = strings(argv(
            "bwrap",
            &s,
            &Fds {
                seccomp: vec![3],
                files: [(PathBuf::from("/etc/resolv.conf"), 6)].into(),
                ..Fds::default()
            },
        ));
        // The network namespace is the one the spawner made (loopback and proxy ports
        // only), not the host's: bwrap keeps it rather than making another.
        let pos = argv.iter().position(|a| a == "--share-net").unwrap();
        assert_eq!(&argv[..pos], &["bwrap", "--unshare-all", "--unshare-user"]);
        let dash = argv.iter().position(|a| a == "--").unwrap();
        assert_eq!(
            &argv[dash..],
            &[
                "--",
                "/loopat/.git-loop/git-loop",
                "__init",
                "--",
                "make",
                "test"
            ]
        );
        // The binary read-only, after the system folders; no name server inside.
        let bind = argv
            .windows(3)
            .position(|w| {
                w == [
                    "--ro-bind",
                    "/opt/git-loop/bin/git-loop",
                    "/loopat/.git-loop/git-loop",
                ]
            })
            .expect("the binary is bound, once, for pid 1 and ssh's ProxyCommand");
        let etc = argv
            .windows(3)
            .position(|w| w[0] == "--ro-bind" && w[2] == "/etc")
            .unwrap();
        let resolv = argv
            .windows(3)
            .position(|w| w == ["--ro-bind-data", "6", "/etc/resolv.conf"])
            .expect("resolv.conf is replaced");
        assert!(etc < resolv && etc < bind);
        // The token reaches the environment, never the argv.
        assert_eq!(s.env["HTTPS_PROXY"], "http://gitloop:t0k@127.0.0.1:3128");
        assert_eq!(s.env["no_proxy"], "localhost,127.0.0.1");
        assert!(!argv.iter().any(|a| a.contains("t0k")));
        // No proxy variables without the proxy mode.
        let none = spec(RunMode::Work, NetMode::None);
        assert!(none.egress.is_none() && !none.env.contains_key("HTTPS_PROXY"));
        let host = spec(RunMode::Work, NetMode::Host);
        assert!(!host
            .mounts
            .iter()
            .any(|m| m.inside() == std::path::Path::new("/etc/resolv.conf")));
    }

    #[test]
    fn host_network_is_shared_only_when_asked() {
        let none = strings(argv(
            "bwrap",
            &spec(RunMode::Work, NetMode::None),
            &Fds::default(),
        ));
        assert!(!none.contains(&"--share-net".to_string()));
        let host = strings(argv(
            "bwrap",
            &spec(RunMode::Work, NetMode::Host),
            &Fds::default(),
        ));
        let pos = host.iter().position(|a| a == "--share-net").unwrap();
        assert_eq!(&host[..pos], &["bwrap", "--unshare-all", "--unshare-user"]);
    }

    #[test]
    fn the_environment_is_an_allowlist_and_never_in_the_argv() {
        let s = spec(RunMode::Work, NetMode::None);
        let keys: Vec<&str> = s.env.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![
                "CLAUDE_CONFIG_DIR",
                "GIT_LOOP_ID",
                "GIT_LOOP_MODE",
                "HOME",
                "LC_ALL",
                "LOGNAME",
                "PATH",
                "TERM",
                "TMPDIR",
                "USER"
            ]
        );
        assert_eq!(s.env["HOME"], "/home/alice");
        let argv = strings(argv(
            "bwrap",
            &s,
            &Fds {
                seccomp: vec![3],
                ..Default::default()
            },
        ));
        assert!(!argv.iter().any(|a| a == "--setenv" || a.contains("secret")));
    }

    #[test]
    fn interactive_runs_keep_the_session() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let opts = RunOptions {
            new_session: false,
            ..options(RunMode::Work, NetMode::None)
        };
        let s = SandboxSpec::for_loop(&ws, &record(), &host(), &opts);
        let argv = strings(argv(
            "bwrap",
            &s,
            &Fds {
                seccomp: vec![3],
                ..Default::default()
            },
        ));
        assert!(!argv.contains(&"--new-session".to_string()));
    }

    #[test]
    fn a_distill_loop_writes_knowledge_and_reads_notes() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let rec = LoopRecord {
            kind: Kind::Distill,
            repo: None,
            ..record()
        };
        let s = SandboxSpec::for_loop(&ws, &rec, &host(), &options(RunMode::Work, NetMode::None));
        let argv = strings(argv("bwrap", &s, &Fds::default()));
        let find =
            |flag: &str, inside: &str| argv.windows(3).any(|w| w[0] == flag && w[2] == inside);
        assert!(find("--bind", "/loopat/context/knowledge"));
        assert!(find("--ro-bind", "/loopat/context/notes"));
        assert_eq!(s.cwd, PathBuf::from("/loopat/context/knowledge"));
    }

    /// rustup in a host home that has the sandbox's `$HOME` path, with a shared cargo
    /// registry and a file of git-loop's own.
    fn toolchains() -> crate::toolchains::Plan {
        let bind = |host: &str, inside: &str, rw: bool| Mount::Bind {
            host: host.into(),
            inside: inside.into(),
            rw,
            optional: false,
        };
        crate::toolchains::Plan {
            enabled: vec![crate::toolchains::Toolchain::Rustup],
            mounts: vec![
                bind("/home/alice/.rustup", "/home/alice/.rustup", false),
                bind("/home/alice/.cargo/bin", "/home/alice/.cargo/bin", false),
                Mount::Data {
                    inside: "/loopat/.git-loop/toolchains/mise/config.toml".into(),
                    content: "[tools]\n".into(),
                },
                bind(
                    "/home/alice/.cargo/registry",
                    "/home/alice/.cache/cargo/registry",
                    true,
                ),
                bind("/dev/null", "/home/alice/.rustup/credentials.toml", false),
            ],
            path: vec![
                "/home/alice/.cargo/bin".into(),
                "/home/alice/.cache/cargo/bin".into(),
            ],
            env: vec![
                ("RUSTUP_HOME".into(), "/home/alice/.rustup".into()),
                ("CARGO_HOME".into(), "/home/alice/.cache/cargo".into()),
            ],
            warnings: Vec::new(),
        }
    }

    #[test]
    fn toolchains_lie_over_home_and_under_what_wins() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let opts = RunOptions {
            toolchains: toolchains(),
            ro_same_path: vec!["/home/alice/.cargo/bin/agent".into()],
            vault_files: vec![".netrc".into()],
            ..options(RunMode::Work, NetMode::None)
        };
        let s = SandboxSpec::for_loop(&ws, &record(), &host(), &opts);
        let data = PathBuf::from("/loopat/.git-loop/toolchains/mise/config.toml");
        let argv = strings(argv(
            "bwrap",
            &s,
            &Fds {
                seccomp: vec![3],
                files: [(data, 7), (PathBuf::from("/home/alice/.netrc"), 8)].into(),
                ..Fds::default()
            },
        ));
        let at = |w: &[&str]| {
            argv.windows(w.len())
                .position(|x| x == w)
                .unwrap_or_else(|| panic!("{w:?} not in {argv:?}"))
        };
        let home = at(&["--bind", "/ws/loops/fix-abc123/home/merged", "/home/alice"]);
        let secret = at(&["--ro-bind-data", "8", "/home/alice/.netrc"]);
        let rustup = at(&["--ro-bind", "/home/alice/.rustup", "/home/alice/.rustup"]);
        let bin = at(&[
            "--ro-bind",
            "/home/alice/.cargo/bin",
            "/home/alice/.cargo/bin",
        ]);
        let own = at(&[
            "--ro-bind-data",
            "7",
            "/loopat/.git-loop/toolchains/mise/config.toml",
        ]);
        let registry = at(&[
            "--bind",
            "/home/alice/.cargo/registry",
            "/home/alice/.cache/cargo/registry",
        ]);
        let cover = at(&[
            "--ro-bind",
            "/dev/null",
            "/home/alice/.rustup/credentials.toml",
        ]);
        let agent = at(&[
            "--ro-bind",
            "/home/alice/.cargo/bin/agent",
            "/home/alice/.cargo/bin/agent",
        ]);
        let root = at(&["--remount-ro", "/"]);
        assert!(home < secret && secret < rustup);
        assert!(rustup < bin && bin < own && own < registry && registry < cover);
        assert!(cover < agent && agent < root);
        assert_eq!(
            s.env["PATH"],
            format!(
                "/home/alice/.cargo/bin:/home/alice/.cache/cargo/bin:{}",
                crate::sandbox::spec::SANDBOX_PATH
            )
        );
        assert_eq!(s.env["CARGO_HOME"], "/home/alice/.cache/cargo");
        assert_eq!(s.env["RUSTUP_HOME"], "/home/alice/.rustup");
        assert_eq!(s.toolchains, vec!["rustup"]);
        // `show --mounts` lists them.
        let view = s.view();
        assert!(view.contains(&(
            "/home/alice/.rustup".into(),
            "/home/alice/.rustup".into(),
            "ro".into()
        )));
        // In review mode the shared cache is read-only too.
        let review = RunOptions {
            toolchains: toolchains(),
            ..options(RunMode::Review, NetMode::None)
        };
        let s = SandboxSpec::for_loop(&ws, &record(), &host(), &review);
        let review_argv = strings(super::argv("bwrap", &s, &Fds::default()));
        assert_eq!(
            rw_binds(&review_argv),
            vec![("/ws/loops/fix-abc123/home/merged", "/home/alice")]
        );
        // Without toolchains, none of it.
        let plain = spec(RunMode::Work, NetMode::None);
        assert_eq!(plain.env["PATH"], crate::sandbox::spec::SANDBOX_PATH);
        assert!(plain.toolchains.is_empty() && !plain.env.contains_key("CARGO_HOME"));
    }

    #[test]
    fn a_jail_sees_the_system_read_only_and_one_tree_by_descriptor() {
        let argv = strings(jail_argv(
            "/usr/bin/bwrap",
            &host(),
            7,
            std::path::Path::new("/loopat/loop/x/workdir"),
            &[3, 4],
            &["git".into(), "status".into()],
        ));
        let expected: Vec<&str> = vec![
            "/usr/bin/bwrap",
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--hostname",
            "git-loop",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/bin",
            "/bin",
            "--ro-bind",
            "/etc",
            "/etc",
            "--ro-bind",
            "/dev/null",
            "/etc/shadow",
            "--proc",
            "/proc",
            "--ro-bind-try",
            "/proc/sys",
            "/proc/sys",
            "--ro-bind-try",
            "/proc/sysrq-trigger",
            "/proc/sysrq-trigger",
            "--dev",
            "/dev",
            // A jail's /tmp: 64 MiB.
            "--size",
            "67108864",
            "--tmpfs",
            "/tmp",
            "--bind-fd",
            "7",
            "/loopat/loop/x/workdir",
            "--remount-ro",
            "/",
            "--add-seccomp-fd",
            "3",
            "--add-seccomp-fd",
            "4",
            "--chdir",
            "/loopat/loop/x/workdir",
            "--",
            "git",
            "status",
        ];
        assert_eq!(argv, expected);
    }

    fn confined(root: &str, rel: &str, inside: &str, rw: bool) -> Mount {
        Mount::Confined {
            root: root.into(),
            rel: rel.into(),
            inside: inside.into(),
            rw,
            optional: false,
            expect: None,
        }
    }

    fn laid_all(m: &[Mount]) -> Vec<Laid> {
        laid(m, |_, _, _| true)
    }

    fn insides(laid: &[Laid]) -> Vec<&str> {
        laid.iter().map(|l| l.inside.to_str().unwrap()).collect()
    }

    #[test]
    fn descriptors_below_a_folder_bound_by_path_are_laid_in_order_with_their_carrier() {
        let m = vec![
            Mount::bind("/ws/loops/x/workdir", "/in/w", true),
            confined("/ws/loops/x", "workdir/.git", "/in/w/.git", true),
            Mount::OwnFile {
                root: "/ws/loops/x".into(),
                rel: "workdir/.git/config".into(),
                inside: "/in/w/.git/config".into(),
                content: String::new(),
            },
            confined("/ws/loops/x", "workdir/.vscode", "/in/w/.vscode", false),
            // Not below the carrier's source at the same path: bwrap binds it.
            confined("/elsewhere", "grant", "/in/w/grant", false),
            // No carrier at all: bwrap binds it.
            confined("/", "home/me/grant", "/home/me/grant", true),
            Mount::RemountRo { inside: "/".into() },
        ];
        let laid = laid(&m, |_, _, _| true);
        assert_eq!(
            insides(&laid),
            ["/in/w/.git", "/in/w/.git/config", "/in/w/.vscode"]
        );
        assert_eq!(
            laid[1],
            Laid {
                inside: "/in/w/.git/config".into(),
                rw: false,
                carrier: "/ws/loops/x/workdir".into(),
                rel: ".git/config".into(),
                source: None,
            }
        );
        assert!(laid[0].rw && !laid[2].rw);
        // bwrap is not asked to bind what is laid; it still binds the rest by descriptor.
        let fds = Fds {
            files: [
                ("/in/w/.git", 5),
                ("/in/w/.git/config", 6),
                ("/in/w/.vscode", 7),
                ("/in/w/grant", 8),
                ("/home/me/grant", 9),
            ]
            .into_iter()
            .map(|(p, fd)| (PathBuf::from(p), fd))
            .collect(),
            laid: laid.iter().map(|l| l.inside.clone()).collect(),
            ..Default::default()
        };
        let mut a = Vec::new();
        for mount in &m {
            mount_args(&mut a, mount, &fds);
        }
        assert_eq!(
            strings(a).join(" "),
            "--bind /ws/loops/x/workdir /in/w --ro-bind-fd 8 /in/w/grant \
             --bind-fd 9 /home/me/grant --remount-ro /"
        );
        // Below a folder bound read-only, a writable one is laid read-only: bwrap's bind
        // of the carrier makes what it carries read-only, which a mount laid after it
        // would not be.
        let mut review = m.clone();
        review[0] = Mount::bind("/ws/loops/x/workdir", "/in/w", false);
        assert!(laid_all(&review).iter().all(|l| !l.rw));
        // init is told what to check: each laid one's path and whether it is writable.
        let with_layer = Fds {
            layer: Some((
                4,
                laid.iter()
                    .enumerate()
                    .map(|(i, l)| super::super::creation::LaidCheck {
                        inside: l.inside.clone(),
                        rw: l.rw,
                        dev: (254, 1),
                        ino: i as u64 + 10,
                    })
                    .collect(),
            )),
            ..fds
        };
        let s = SandboxSpec {
            mounts: m.clone(),
            ..spec(RunMode::Work, NetMode::None)
        };
        let argv = strings(argv("bwrap", &s, &with_layer)).join(" ");
        assert!(
            argv.contains(
                " --laid-fd 4 --laid /in/w/.git rw 254:1:10 --laid /in/w/.git/config ro 254:1:11 \
                 --laid /in/w/.vscode ro 254:1:12 -- "
            ),
            "{argv}"
        );
    }

    #[test]
    fn nothing_is_laid_where_bwraps_own_mounts_would_meet_it() {
        let carrier = Mount::bind("/ws/w", "/in/w", true);
        let cover = confined("/ws", "w/a/b", "/in/w/a/b", false);
        // A mount on the way after the carrier: it would hide what was laid.
        let on_the_way = Mount::Tmpfs {
            inside: "/in/w/a".into(),
            size: None,
            ro: false,
        };
        assert!(laid_all(&[carrier.clone(), on_the_way.clone(), cover.clone()]).is_empty());
        assert!(laid_all(&[carrier.clone(), cover.clone(), on_the_way]).is_empty());
        // One below it before it: bwrap's order hides that one under the cover.
        let below = Mount::ro("/x", "/in/w/a/b/c");
        assert!(laid_all(&[carrier.clone(), below.clone(), cover.clone()]).is_empty());
        // ...but after it, it is laid on top of the cover, as bwrap would.
        let both = laid_all(&[carrier.clone(), cover.clone(), below]);
        assert_eq!(insides(&both), ["/in/w/a/b", "/in/w/a/b/c"]);
        assert_eq!(both[1].source, Some(("/x".into(), false)));
        // A bind by path that carries another is bwrap's.
        let inner = Mount::ro("/y", "/in/w/a/b/c/d");
        let with_inner = laid_all(&[carrier.clone(), Mount::ro("/x", "/in/w/a/b/c"), inner]);
        assert_eq!(insides(&with_inner), ["/in/w/a/b/c/d"]);
        // A remount of another path makes no mount of its own.
        let remount = Mount::RemountRo {
            inside: "/in/w".into(),
        };
        assert_eq!(
            laid_all(&[carrier.clone(), remount, cover.clone()]).len(),
            1
        );
        // Another bind by path whose source holds it would carry it there too.
        let also = Mount::ro("/ws", "/in/all");
        assert!(laid_all(&[carrier.clone(), cover.clone(), also]).is_empty());
        // An optional carrier may be absent.
        let maybe = Mount::Bind {
            host: "/ws/w".into(),
            inside: "/in/w".into(),
            rw: true,
            optional: true,
        };
        assert!(laid_all(&[maybe, cover.clone()]).is_empty());
        // Two at one path: bwrap's later one wins, which laying cannot keep apart.
        assert!(laid_all(&[carrier.clone(), cover.clone(), cover.clone()]).is_empty());
        // A path with `..` is never laid.
        assert!(laid_all(&[carrier, confined("/ws", "w/../w/a", "/in/w/a", false)]).is_empty());
    }

    #[test]
    fn a_bind_by_path_below_another_is_laid_unless_its_place_is_not_usable() {
        let m = vec![
            Mount::ro("/etc", "/etc"),
            Mount::ro("/dev/null", "/etc/shadow"),
            Mount::Bind {
                host: "/dev/null".into(),
                inside: "/etc/ssh/key".into(),
                rw: false,
                optional: true,
            },
        ];
        let all = laid_all(&m);
        assert_eq!(insides(&all), ["/etc/shadow", "/etc/ssh/key"]);
        assert_eq!(all[1].source, Some(("/dev/null".into(), true)));
        assert_eq!(
            (all[1].carrier.to_str(), all[1].rel.to_str()),
            (Some("/etc"), Some("ssh/key"))
        );
        let some = laid(&m, |_, _, rel| rel != std::path::Path::new("shadow"));
        assert_eq!(insides(&some), ["/etc/ssh/key"]);
    }

    #[test]
    fn a_loops_own_files_and_the_built_in_list_are_laid_the_rest_bound_by_bwrap() {
        let s = spec(RunMode::Work, NetMode::None);
        let laid = laid_all(&s.mounts);
        let laid = insides(&laid);
        for inside in [
            "/loopat/loop/fix-abc123/workdir/.git",
            "/loopat/loop/fix-abc123/workdir/.git/config",
            "/loopat/loop/fix-abc123/workdir/.git/commondir",
            "/loopat/loop/fix-abc123/workdir/.git/hooks",
            "/loopat/context/notes/.git/hooks",
            "/loopat/context/personal/.loopat",
        ] {
            assert!(laid.contains(&inside), "{inside} not laid: {laid:?}");
        }
        // Every one laid is a descriptor mount or a bind of the spec.
        for inside in &laid {
            assert!(s.mounts.iter().any(|m| matches!(
                m,
                Mount::Confined { .. } | Mount::OwnFile { .. } | Mount::Bind { .. }
            ) && m.inside() == std::path::Path::new(inside)));
        }
    }

    #[test]
    fn display_quotes_what_a_shell_would_split() {
        let line = display(&[
            "bwrap".into(),
            "--chdir".into(),
            "/a b".into(),
            "it's".into(),
        ]);
        assert_eq!(line, "bwrap --chdir '/a b' 'it'\\''s'");
        // An empty argument stays one argument.
        assert_eq!(display(&["a".into(), "".into()]), "a ''");
    }
}
