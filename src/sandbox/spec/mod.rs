//! `SandboxSpec`: everything a sandboxed run is, as plain data — the mounts with their
//! modes, the environment, the working folder, the network and run modes, the limits. It
//! is computed from the loop, the config layers and the command line by
//! [`SandboxSpec::for_loop`], with no side effects, so tests can compare it; a backend
//! turns it into a running process.
//!
//! Mount order matters and is the order of `mounts`: bwrap applies them one after another,
//! so a later mount covers an earlier one at the same or a deeper path. The builder adds
//! parents before children and protections last: the personal repository rw, then its
//! `.git` ro over it, then an empty tmpfs over its vaults; `.claude` rw, then its
//! `CLAUDE.md` and `skills/` ro over it. In review mode every bind is read-only except
//! `$HOME` and `/tmp`.
//!
//! The toolchains of the user's home (`crate::toolchains`) come right after `$HOME` and
//! the vault's files: where the host's home has the sandbox's `$HOME` path
//! (`/home/<user>`), a toolchain folder such as `/home/<user>/.cargo/bin` is then laid over
//! the loop's `$HOME` rather than hidden under it. The agent's install folder, the
//! operator's mounts and the grants come after them and win.
//!
//! Here: the modes and the spec value itself. `build.rs` makes it ([`SandboxSpec::for_loop`]),
//! `mount.rs` holds what a mount is, `host.rs` what the host looks like and the system
//! folders, `limits.rs` the resource limits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::loops::{Kind, LoopRecord, RepoPair};
use crate::values::{NetMode, RunMode};
use crate::workspace::Workspace;

/// Where the loop's world is mounted inside.
pub const LOOPAT: &str = "/loopat";

/// The fixed PATH inside: the host's PATH could name folders that do not exist inside.
pub const SANDBOX_PATH: &str = "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin";

/// Host variables that pass into the sandbox unchanged (DESIGN 4.2), with the locale's
/// `LC_*`; everything else of the host environment is dropped.
pub const PASSED_ENV: &[&str] = &["TERM", "LANG", "TZ", "COLORTERM"];

/// Does the host variable `key` pass into the sandbox?
pub fn passes_in(key: &str) -> bool {
    PASSED_ENV.contains(&key) || key.starts_with("LC_")
}

/// The network namespace a sandbox runs in, and who makes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NetNamespace {
    /// The caller's own (`--net host`).
    Host,
    /// A new, empty one that bwrap makes (`--unshare-net`): loopback only.
    Bwrap,
    /// A new one the spawner makes before bwrap starts (bwrap then `--share-net`s it):
    /// it brings the loopback up there and listens on the proxy's ports, handing the
    /// listeners to the host-side proxy, so the sandbox's only way out is that proxy.
    Spawner,
}

impl NetNamespace {
    /// The namespace a network mode needs.
    pub fn of(net: NetMode) -> NetNamespace {
        match net {
            NetMode::Host => NetNamespace::Host,
            NetMode::None => NetNamespace::Bwrap,
            NetMode::Proxy => NetNamespace::Spawner,
        }
    }
}

/// The Landlock scopes (ABI 6, kernel 6.12+) the spawner asks for on the whole sandbox
/// tree. Best effort: an older kernel has none, and the rest of the sandbox stands as it
/// is; abstract unix sockets are per network namespace, so only `--net host` relies on
/// the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LandlockScopes {
    /// No connect to an abstract unix socket made outside the sandbox.
    pub abstract_unix_sockets: bool,
    /// No signal to a process outside the sandbox.
    pub signals: bool,
}

impl LandlockScopes {
    /// Every sandbox gets both.
    pub const ALL: LandlockScopes = LandlockScopes {
        abstract_unix_sockets: true,
        signals: true,
    };
}

/// The sandbox's `/etc/resolv.conf` when it has no network of its own: no name server, so
/// a lookup inside goes to the sandbox's own loopback and nowhere else (ATTACKS 27).
pub const RESOLV_CONF: &str =
    "# git loop: this sandbox has no name server. Names are resolved by git-loop's\n\
# proxy, for the allowed domains only: use HTTP_PROXY, HTTPS_PROXY or ALL_PROXY.\n\
options attempts:1 timeout:1\n";

/// Where the run's CA (issue 16) is inside: the system bundle with it appended, and the CA
/// alone (for `NODE_EXTRA_CA_CERTS`, which adds to Node's own list).
pub const CA_BUNDLE: &str = "/loopat/.git-loop/ca-bundle.pem";
pub const CA_CERT: &str = "/loopat/.git-loop/ca.pem";

/// Where systems keep their bundle of trusted certificates; those that are files in the
/// host's view are laid over with the bundle that has the run's CA appended, so programs
/// that read none of the variables trust it too.
pub const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The variables that point TLS clients at a bundle of trusted certificates.
pub const CA_VARIABLES: &[&str] = &[
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
    "CARGO_HTTP_CAINFO",
];

/// The run's CA as the sandbox trusts it, when vault entries are bound to hosts and the
/// proxy ends TLS toward them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trust {
    /// The CA's certificate, PEM.
    pub ca_pem: String,
    /// The host's system bundle with the CA appended.
    pub bundle: String,
    /// The system bundles of the host's view that are regular files (see
    /// [`SYSTEM_BUNDLES`]).
    pub system_files: Vec<PathBuf>,
}

/// What the `proxy` network mode adds to a sandbox (DESIGN 4.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Egress {
    /// The `git-loop` binary, bound read-only at [`crate::egress::relay::RELAY_EXE`]:
    /// ssh's ProxyCommand inside (`git-loop __connect`).
    pub exe: PathBuf,
    /// How many patterns the allowlist has (the status line says it).
    pub domains: usize,
    /// This run's proxy token, in the proxy variables of `env`; never printed.
    #[serde(skip)]
    pub token: String,
}

mod build;
mod host;
mod limits;
mod mount;

pub use build::*;
pub use host::*;
pub use limits::*;
pub use mount::*;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxSpec {
    pub loop_id: String,
    pub mounts: Vec<Mount>,
    pub home: Home,
    pub home_inside: PathBuf,
    /// The whole environment inside, sorted.
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    pub net: NetMode,
    /// The network namespace `net` needs, and who makes it.
    pub netns: NetNamespace,
    /// The Landlock scopes asked for on the whole tree.
    pub landlock: LandlockScopes,
    pub mode: RunMode,
    pub limits: Limits,
    pub hostname: String,
    /// The user and group id inside (a profile's `uid`); `None`: the host user's own. Only
    /// a name inside: the rights on the host stay those of the user who runs git-loop.
    pub uid: Option<u32>,
    pub new_session: bool,
    pub command: Vec<String>,
    /// The paths the per-path policy covers, with their rules (see `fspolicy.rs`).
    pub fs_policy: Vec<crate::sandbox::fspolicy::Covered>,
    /// `[filesystem] deny_create`: names refused when a process inside makes them, by
    /// the supervisor in the sandbox's pid 1 (see `sandbox/creation.rs`).
    pub deny_create: Vec<String>,
    /// What that supervisor watches to report refusals: writes wherever the kernel has
    /// it, reads where a rule denies reading (`sandbox/creation.rs`).
    pub watch: crate::sandbox::creation::Watch,
    /// The sandbox's pid 1, `git-loop __init` at this path inside (see `sandbox/init.rs`);
    /// `None`: bwrap's own init.
    pub init: Option<PathBuf>,
    /// What the `proxy` network mode adds; `Some` exactly when `net` is `Proxy`.
    pub egress: Option<Egress>,
    /// The toolchains of the user's home in view, by name.
    pub toolchains: Vec<String>,
    /// What the run should say before it starts (toolchains left out, and why).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Where one of a loop's repositories (`code`, `notes`, `knowledge`) is inside its
/// sandbox: the paths the agent works in, and where host-side commands point git that they
/// run inside the sandbox.
pub fn repo_inside(id: &str, role: &str) -> PathBuf {
    match role {
        "code" => Path::new(LOOPAT).join("loop").join(id).join("workdir"),
        other => Path::new(LOOPAT).join("context").join(other),
    }
}

/// Where a loop's `.claude/` (its agent's config folder) is inside its sandbox.
pub fn claude_inside(id: &str) -> PathBuf {
    Path::new(LOOPAT).join("loop").join(id).join(".claude")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loops::{Grant, GrantSource};

    fn grant(path: &str, mode: &str) -> Grant {
        Grant {
            path: path.into(),
            mode: mode.into(),
            once: false,
            source: Some(GrantSource {
                dir: true,
                dev: 1,
                ino: path.len() as u64,
                born_ns: None,
            }),
        }
    }

    /// (inside, rw) of the grant mounts, in order.
    fn grants(list: &[Grant], writable: bool) -> Vec<(String, bool, bool)> {
        let mut m = Vec::new();
        grant_mounts(&mut m, list, writable);
        m.iter()
            .map(|m| match m {
                Mount::Confined {
                    root,
                    rel,
                    inside,
                    rw,
                    expect,
                    ..
                } => {
                    // Found again from `/`, below it by the same path.
                    assert_eq!(root, Path::new("/"));
                    assert_eq!(Path::new("/").join(rel), *inside);
                    assert!(rel.is_relative(), "{rel:?}");
                    (inside.display().to_string(), *rw, expect.is_some())
                }
                other => panic!("a grant is bound by descriptor, not {other:?}"),
            })
            .collect()
    }

    #[test]
    fn grants_are_bound_parents_first_whatever_order_they_were_given() {
        let inner_first = [
            grant("/g/proj/cfg/settings.json", "ro"),
            grant("/g/proj", "rw"),
        ];
        assert_eq!(
            grants(&inner_first, true),
            vec![
                ("/g/proj".into(), true, true),
                // The folder between is pinned (a mount point: no rename inside).
                ("/g/proj/cfg".into(), true, false),
                ("/g/proj/cfg/settings.json".into(), false, true),
            ]
        );
    }

    #[test]
    fn every_folder_between_a_grant_and_one_nested_in_it_is_pinned_once() {
        let list = [
            grant("/g", "rw"),
            grant("/g/a/b/c/one", "ro"),
            grant("/g/a/b/two", "ro"),
        ];
        let got: Vec<String> = grants(&list, true).into_iter().map(|(p, ..)| p).collect();
        assert_eq!(
            got,
            [
                "/g",
                "/g/a",
                "/g/a/b",
                "/g/a/b/two",
                "/g/a/b/c",
                "/g/a/b/c/one"
            ]
        );
        // Grants that do not nest pin nothing.
        let apart = [grant("/x", "ro"), grant("/y/z", "rw")];
        assert_eq!(grants(&apart, true).len(), 2);
    }

    #[test]
    fn review_mode_makes_every_grant_read_only() {
        let list = [grant("/g", "rw"), grant("/g/sub/file", "ro")];
        assert!(grants(&list, false).iter().all(|(_, rw, _)| !rw));
    }

    #[test]
    fn the_system_part_of_the_view_covers_the_machines_secrets_and_tunables() {
        let host = HostView {
            system: vec![
                ("/usr".into(), SystemEntry::Dir),
                ("/bin".into(), SystemEntry::Symlink("usr/bin".into())),
            ],
            etc_secrets: vec!["/etc/shadow".into()],
            env: BTreeMap::new(),
        };
        let m = system_mounts(&host, 1 << 20);
        assert!(m.contains(&Mount::ro("/usr", "/usr")));
        assert!(m.contains(&Mount::Symlink {
            target: "usr/bin".into(),
            inside: "/bin".into()
        }));
        assert!(m.contains(&Mount::ro("/dev/null", "/etc/shadow")));
        for t in PROC_READ_ONLY {
            assert!(m.iter().any(
                |x| matches!(x, Mount::Bind { inside, rw: false, .. } if inside == Path::new(t))
            ));
        }
        // /proc before its read-only parts, so they cover it.
        let proc_at = m
            .iter()
            .position(|x| matches!(x, Mount::Proc { .. }))
            .unwrap();
        let sys_at = m
            .iter()
            .position(|x| x.inside() == Path::new("/proc/sys"))
            .unwrap();
        assert!(proc_at < sys_at);
        assert!(m.contains(&Mount::Tmpfs {
            inside: "/tmp".into(),
            size: Some(1 << 20),
            ro: false
        }));
    }

    fn record() -> LoopRecord {
        LoopRecord::read_str_for_tests()
    }

    fn options() -> RunOptions {
        RunOptions {
            mode: RunMode::Work,
            net: NetMode::None,
            limits: Limits {
                pids: 64,
                memory_bytes: 1 << 30,
                nofile: 1024,
                tmp_bytes: 1 << 20,
                best_effort: false,
            },
            command: vec!["true".into()],
            ro_same_path: Vec::new(),
            operator_mounts: Vec::new(),
            chat_seeded: false,
            vault_files: Vec::new(),
            new_session: true,
            egress: None,
            home_overlay: false,
            identity: None,
            agent_env: Vec::new(),
            toolchains: Default::default(),
            trust: None,
            init_exe: None,
            fs_cover: Vec::new(),
            deny_create: Vec::new(),
            supervisor: false,
            nested_git: false,
        }
    }

    #[test]
    fn commits_inside_carry_the_identity_given_and_the_agent_its_profile() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &options());
        assert!(!spec.env.keys().any(|k| k.starts_with("GIT_AUTHOR")));
        let opts = RunOptions {
            identity: Some(crate::agent::GitIdentity {
                author: ("Robo".into(), "robo@x".into()),
                committer: ("Alice".into(), "alice@x".into()),
            }),
            agent_env: vec![("IS_SANDBOX".into(), "1".into())],
            ..options()
        };
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &opts);
        assert_eq!(spec.env["GIT_AUTHOR_NAME"], "Robo");
        assert_eq!(spec.env["GIT_AUTHOR_EMAIL"], "robo@x");
        assert_eq!(spec.env["GIT_COMMITTER_NAME"], "Alice");
        assert_eq!(spec.env["GIT_COMMITTER_EMAIL"], "alice@x");
        assert_eq!(spec.env["IS_SANDBOX"], "1");
    }

    #[test]
    fn the_root_is_made_read_only_after_every_mount() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &options());
        assert_eq!(
            spec.mounts.last(),
            Some(&Mount::RemountRo {
                inside: PathBuf::from("/")
            })
        );
    }

    #[test]
    fn the_personal_history_is_hidden_and_its_config_read_only() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &options());
        let git = spec
            .mounts
            .iter()
            .position(|m| matches!(m, Mount::Tmpfs { inside, ro: true, .. } if inside == Path::new("/loopat/context/personal/.git")))
            .expect("the personal .git is hidden");
        let personal = spec
            .mounts
            .iter()
            .position(|m| m.inside() == Path::new("/loopat/context/personal"))
            .unwrap();
        assert!(personal < git);
        assert!(spec.mounts.iter().any(|m| matches!(m,
            Mount::Confined { inside, rw: false, .. } if inside == Path::new("/loopat/context/personal/.loopat"))));
        // The vaults are nowhere in the view.
        assert!(!spec
            .mounts
            .iter()
            .any(|m| m.inside().to_string_lossy().contains("vaults")));
    }

    #[test]
    fn each_network_mode_has_its_namespace() {
        // Which network namespace each mode needs, and who makes it.
        assert_eq!(
            [NetMode::Host, NetMode::None, NetMode::Proxy].map(NetNamespace::of),
            [
                NetNamespace::Host,
                NetNamespace::Bwrap,
                NetNamespace::Spawner
            ]
        );
    }

    #[test]
    fn the_default_limits_take_half_the_memory_and_at_most_4_gib_of_tmp() {
        let gib = 1u64 << 30;
        let big = Limits::for_memory(Some(64 * gib));
        assert_eq!((big.pids, big.nofile), (4096, 4096));
        assert_eq!((big.memory_bytes, big.tmp_bytes), (32 * gib, 4 * gib));
        assert!(!big.best_effort);
        let small = Limits::for_memory(Some(3 * gib));
        assert_eq!(
            (small.memory_bytes, small.tmp_bytes),
            (3 * gib / 2, 3 * gib / 2)
        );
        // Unknown: as if the machine had 4 GiB.
        let unknown = Limits::for_memory(None);
        assert_eq!(
            (unknown.memory_bytes, unknown.tmp_bytes),
            (2 * gib, 2 * gib)
        );
        assert_eq!(Limits::defaults(), Limits::for_memory(total_memory()));
    }

    #[test]
    fn the_machines_memory_is_counted_in_bytes() {
        assert_eq!(bytes_of(1000, 4096), 4_096_000);
        assert_eq!(bytes_of(1000, 1), 1000);
        assert_eq!(bytes_of(1000, 0), 1000);
        // This machine: more than a MiB, in whole pages.
        let total = total_memory().expect("sysinfo answers");
        assert!(total > 1 << 20, "{total}");
        assert_eq!(total % 4096, 0, "{total}");
    }

    #[test]
    fn only_the_terminal_and_the_locale_pass_from_the_host_environment() {
        for key in ["TERM", "LANG", "TZ", "COLORTERM", "LC_ALL", "LC_CTYPE"] {
            assert!(passes_in(key), "{key}");
        }
        for key in [
            "PATH",
            "HOME",
            "GITHUB_TOKEN",
            "SSH_AUTH_SOCK",
            "LD_PRELOAD",
            "XLC_X",
        ] {
            assert!(!passes_in(key), "{key}");
        }
        let host = HostView::read();
        assert!(host.env.keys().all(|k| passes_in(k)));
        for (k, v) in std::env::vars() {
            if passes_in(&k) {
                assert_eq!(host.env.get(&k), Some(&v), "{k}");
            }
        }
    }

    #[test]
    fn the_host_view_has_each_system_folder_as_it_is_on_the_host() {
        let host = HostView::read();
        for dir in SYSTEM_DIRS {
            let p = Path::new(dir);
            let entry = host.system.iter().find(|(q, _)| q == p).map(|(_, e)| e);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => assert_eq!(
                    entry,
                    Some(&SystemEntry::Symlink(std::fs::read_link(p).unwrap())),
                    "{dir}"
                ),
                Ok(m) if m.is_dir() => assert_eq!(entry, Some(&SystemEntry::Dir), "{dir}"),
                _ => assert_eq!(entry, None, "{dir}"),
            }
        }
        // Every machine has /usr and /etc as folders.
        assert!(host.system.contains(&("/usr".into(), SystemEntry::Dir)));
        assert!(host.system.contains(&("/etc".into(), SystemEntry::Dir)));
        for secret in &host.etc_secrets {
            assert!(ETC_SECRETS.contains(&secret.to_str().unwrap()));
            assert!(std::fs::symlink_metadata(secret).is_ok());
        }
        // Covered where this user may read it (root: always; anyone else: when the
        // kernel would let them, see ETC_SECRETS).
        let shadow = Path::new("/etc/shadow");
        match std::fs::File::open(shadow) {
            Ok(_) => assert!(host.etc_secrets.contains(&shadow.to_path_buf())),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                assert!(!host.etc_secrets.contains(&shadow.to_path_buf()))
            }
            Err(_) => {}
        }
    }

    /// (inside, rw) of the binds and the confined mounts of a spec.
    fn modes(spec: &SandboxSpec) -> Vec<(String, bool)> {
        spec.mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Bind { inside, rw, .. } | Mount::Confined { inside, rw, .. } => {
                    Some((inside.display().to_string(), *rw))
                }
                _ => None,
            })
            .collect()
    }

    fn mode_of(spec: &SandboxSpec, inside: &str) -> bool {
        modes(spec)
            .into_iter()
            .find(|(i, _)| i == inside)
            .unwrap_or_else(|| panic!("{inside} is not in {:?}", modes(spec)))
            .1
    }

    #[test]
    fn a_distill_loop_writes_its_knowledge_repository_and_only_reads_its_notes() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let rec = LoopRecord {
            kind: Kind::Distill,
            repo: None,
            ..record()
        };
        let spec = SandboxSpec::for_loop(&ws, &rec, &HostView::default(), &options());
        assert!(mode_of(&spec, "/loopat/context/knowledge"));
        assert!(mode_of(&spec, "/loopat/context/knowledge/.git"));
        assert!(!mode_of(&spec, "/loopat/context/.origins/knowledge"));
        assert!(!mode_of(&spec, "/loopat/context/notes"));
        assert!(!mode_of(&spec, "/loopat/context/notes/.git"));
        assert_eq!(spec.cwd, Path::new("/loopat/context/knowledge"));
        // A code loop writes its notes and its code, and sees no knowledge clone.
        let code = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &options());
        assert!(mode_of(&code, "/loopat/context/notes/.git"));
        assert!(mode_of(&code, "/loopat/loop/fix-abc123/workdir/.git"));
        assert!(!mode_of(&code, "/loopat/context/knowledge"));
        assert!(!modes(&code)
            .iter()
            .any(|(i, _)| i == "/loopat/context/knowledge/.git"));
    }

    #[test]
    fn an_operator_mount_is_writable_only_when_asked_and_in_work_mode() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let opts = |mode| RunOptions {
            mode,
            operator_mounts: vec![
                ("/srv/data".into(), "/data".into(), true),
                ("/srv/ref".into(), "/ref".into(), false),
            ],
            ..options()
        };
        let work =
            SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &opts(RunMode::Work));
        assert!(mode_of(&work, "/data"));
        assert!(!mode_of(&work, "/ref"));
        let review =
            SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &opts(RunMode::Review));
        assert!(!mode_of(&review, "/data"));
        assert!(!mode_of(&review, "/ref"));
    }

    #[test]
    fn a_chat_seeded_loop_sees_its_chat_read_only() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let plain = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &options());
        assert!(!modes(&plain).iter().any(|(i, _)| i.contains("/chat/")));
        let opts = RunOptions {
            chat_seeded: true,
            ..options()
        };
        let seeded = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &opts);
        assert!(!mode_of(&seeded, "/loopat/context/chat/fix-abc123"));
    }

    #[test]
    fn the_view_says_what_each_mount_is() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let opts = RunOptions {
            toolchains: crate::toolchains::Plan {
                mounts: vec![
                    Mount::Data {
                        inside: "/home/alice/.npmrc".into(),
                        content: String::new(),
                    },
                    Mount::Data {
                        inside: "/loopat/.git-loop/toolchains/mise/config.toml".into(),
                        content: "[tools]\n".into(),
                    },
                ],
                ..Default::default()
            },
            vault_files: vec![".netrc".into()],
            ..options()
        };
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &opts);
        let view = spec.view();
        let row = |inside: &str| -> (String, String) {
            let (_, source, mode) = view
                .iter()
                .find(|(i, ..)| i == inside)
                .unwrap_or_else(|| panic!("{inside} is not in {view:?}"));
            (source.clone(), mode.clone())
        };
        let own = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(view[0], ("/".into(), "fresh tmpfs".into(), "ro".into()));
        assert_eq!(
            row("/loopat/context/personal/.git"),
            own("empty tmpfs (the personal history is git-loop's)", "ro")
        );
        assert_eq!(row("/tmp"), own("fresh tmpfs", "rw"));
        assert_eq!(
            row("/etc/resolv.conf"),
            own(
                "git-loop: no name server (the proxy resolves)",
                "ro (over a file)"
            )
        );
        assert_eq!(
            row("/home/alice/.npmrc"),
            own("empty (a credential file, kept out)", "ro (over a file)")
        );
        assert_eq!(
            row("/loopat/.git-loop/toolchains/mise/config.toml"),
            own("git-loop", "ro (over a file)")
        );
        assert_eq!(
            row("/home/alice/.netrc"),
            own("vault file, decrypted in memory", "ro 0600")
        );
        assert_eq!(
            row("/home/alice"),
            own(
                "/ws/loops/fix-abc123/home/upper (/ws/sandbox-home-skel is empty)",
                "rw"
            )
        );
        assert_eq!(
            row("/loopat/context/notes"),
            own("/ws/loops/fix-abc123/context/notes", "rw")
        );
        assert_eq!(row("/proc/sys"), own("/proc/sys", "ro (if present)"));
        assert_eq!(row("/proc"), own("new proc (own pid namespace)", "rw"));
        assert_eq!(row("/dev"), own("minimal /dev", "rw"));
        assert_eq!(
            row("/loopat/loop/fix-abc123/.claude/CLAUDE.md"),
            own(
                "/ws/loops/fix-abc123/.claude/CLAUDE.md",
                "ro (if present), no links followed"
            )
        );
        assert_eq!(
            row("/loopat/loop/fix-abc123/workdir/.git"),
            own("/ws/loops/fix-abc123/workdir/.git", "rw, no links followed")
        );
        assert_eq!(
            row("/loopat/loop/fix-abc123/workdir/.git/config"),
            own(
                "/ws/loops/fix-abc123/workdir/.git/config (git-loop's)",
                "ro"
            )
        );
        // The root's remount is the first row, not a row of its own.
        assert_eq!(view.iter().filter(|(i, ..)| i == "/").count(), 1);
        // With an overlay, `$HOME` says so.
        let overlay = RunOptions {
            home_overlay: true,
            ..options()
        };
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &overlay);
        let home = spec
            .view()
            .into_iter()
            .find(|(i, ..)| i == "/home/alice")
            .unwrap();
        assert_eq!(
            home.1,
            "overlay: /ws/loops/fix-abc123/home/upper over /ws/sandbox-home-skel"
        );
        assert_eq!(
            spec.home.bound(),
            Path::new("/ws/loops/fix-abc123/home/merged")
        );

        // With bound vault entries, the run's CA and the bundles that carry it.
        let trusted = RunOptions {
            net: NetMode::Proxy,
            egress: Some(Egress {
                exe: "/opt/git-loop".into(),
                domains: 1,
                token: "t".into(),
            }),
            trust: Some(Trust {
                ca_pem: "CA".into(),
                bundle: "SYSTEM\nCA".into(),
                system_files: vec![SYSTEM_BUNDLES[0].into()],
            }),
            ..options()
        };
        let spec = SandboxSpec::for_loop(&ws, &record(), &HostView::default(), &trusted);
        let view = spec.view();
        let ca = "git-loop: trusted certificates with this run's CA (bound vault entries)";
        for inside in [CA_CERT, CA_BUNDLE, SYSTEM_BUNDLES[0]] {
            let (_, source, mode) = view.iter().find(|(i, ..)| i == inside).unwrap();
            assert_eq!((source.as_str(), mode.as_str()), (ca, "ro"), "{inside}");
        }
        assert_eq!(view.iter().filter(|(_, s, _)| s == ca).count(), 3);
    }
}
