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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::loops::{Kind, LoopRecord, RepoPair};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RunMode {
    /// The rw paths of the loop are writable.
    Work,
    /// Everything read-only but $HOME and /tmp.
    Review,
    /// The same as review: read and reason, change nothing.
    Plan,
}

impl RunMode {
    pub fn writable(self) -> bool {
        self == RunMode::Work
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RunMode::Work => "work",
            RunMode::Review => "review",
            RunMode::Plan => "plan",
        }
    }
    pub fn parse(s: &str) -> Option<RunMode> {
        match s {
            "work" => Some(RunMode::Work),
            "review" => Some(RunMode::Review),
            "plan" => Some(RunMode::Plan),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum NetMode {
    /// Share the host's network.
    Host,
    /// A new network namespace with loopback only.
    None,
    /// A new network namespace whose only way out is git-loop's proxy, for the allowlisted
    /// domains (`git loop show ID --net`).
    Proxy,
}

impl NetMode {
    pub fn as_str(self) -> &'static str {
        match self {
            NetMode::Host => "host",
            NetMode::None => "none",
            NetMode::Proxy => "proxy",
        }
    }
    pub fn parse(s: &str) -> Option<NetMode> {
        match s {
            "host" => Some(NetMode::Host),
            "none" => Some(NetMode::None),
            "proxy" => Some(NetMode::Proxy),
            _ => None,
        }
    }
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

/// One entry of the sandbox's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Mount {
    /// A host path bound inside.
    Bind {
        host: PathBuf,
        inside: PathBuf,
        rw: bool,
        /// Skipped when the host path does not exist (`--ro-bind-try`).
        optional: bool,
    },
    /// A symlink (the host's `/bin -> usr/bin` and friends).
    Symlink {
        target: PathBuf,
        inside: PathBuf,
    },
    /// Makes an earlier mount read-only: last of all, the sandbox's root, so the folders
    /// bwrap made there for mount points (`/loopat/...`) take no writes.
    RemountRo {
        inside: PathBuf,
    },
    /// A fresh, empty tmpfs; read-only when it only hides what is below it.
    Tmpfs {
        inside: PathBuf,
        size: Option<u64>,
        ro: bool,
    },
    Proc {
        inside: PathBuf,
    },
    Dev {
        inside: PathBuf,
    },
    /// A folder or file below a tree a sandbox can write (DESIGN 4.0: `root` is the tree's
    /// root, a path of the workspace's layout; `rel` the path below it): the spawner opens
    /// it through [`crate::confined::Tree`], following no link on the way, and binds the
    /// descriptor it opened (`--bind-fd`), so what was checked is what is bound. Skipped
    /// when absent if `optional`, else the run refuses.
    Confined {
        root: PathBuf,
        rel: PathBuf,
        inside: PathBuf,
        rw: bool,
        optional: bool,
        /// What must stand there (a grant's kind and inode); the run refuses anything else.
        #[serde(skip_serializing_if = "Option::is_none")]
        expect: Option<crate::loops::GrantSource>,
    },
    /// A file of git-loop's own in a tree a sandbox can write (a loop repository's
    /// `.git/config`): the spawner writes `content` there, replacing whatever stands there
    /// (a planted link is replaced, never written through), and binds it read-only by
    /// descriptor. The host's copy and the sandbox's view are the same file.
    OwnFile {
        root: PathBuf,
        rel: PathBuf,
        inside: PathBuf,
        content: String,
    },
    /// A read-only file with content of git-loop's own, handed to bwrap by descriptor
    /// (`--ro-bind-data`). Laid only over a regular file of the host's view: bwrap would
    /// follow a symlink there and try to create its target.
    Data {
        inside: PathBuf,
        content: String,
    },
    /// A vault file, decrypted in memory and handed to bwrap by descriptor
    /// (`--perms 0600 --ro-bind-data`): its plaintext lives in the sandbox's own tmpfs,
    /// never on the host's disk, and only for the run.
    Secret {
        inside: PathBuf,
    },
}

impl Mount {
    pub fn inside(&self) -> &Path {
        match self {
            Mount::Bind { inside, .. }
            | Mount::Symlink { inside, .. }
            | Mount::Tmpfs { inside, .. }
            | Mount::RemountRo { inside }
            | Mount::Proc { inside }
            | Mount::Dev { inside }
            | Mount::Confined { inside, .. }
            | Mount::OwnFile { inside, .. }
            | Mount::Data { inside, .. }
            | Mount::Secret { inside } => inside,
        }
    }

    fn ro(host: impl Into<PathBuf>, inside: impl Into<PathBuf>) -> Mount {
        Mount::Bind {
            host: host.into(),
            inside: inside.into(),
            rw: false,
            optional: false,
        }
    }

    fn confined(
        root: impl Into<PathBuf>,
        rel: impl Into<PathBuf>,
        inside: impl Into<PathBuf>,
        rw: bool,
        optional: bool,
    ) -> Mount {
        Mount::Confined {
            root: root.into(),
            rel: rel.into(),
            inside: inside.into(),
            rw,
            optional,
            expect: None,
        }
    }

    fn bind(host: impl Into<PathBuf>, inside: impl Into<PathBuf>, rw: bool) -> Mount {
        Mount::Bind {
            host: host.into(),
            inside: inside.into(),
            rw,
            optional: false,
        }
    }
}

/// The loop's `$HOME`: `upper` seen through an overlay over `lower`
/// (`sandbox-home-skel/`), which `git-loop` mounts on `merged` in a private mount
/// namespace before starting bwrap.
///
/// Where `lower` is empty and `upper` has never been under an overlay, the overlay would
/// show exactly `upper`, and `upper` itself is bound instead: the same view, without a
/// mount namespace of our own and the overlay's work-folder churn on every run. Once an
/// overlay has been mounted on a loop's `$HOME` (`work/work` exists), that `$HOME` stays
/// an overlay: its upper layer may hold whiteouts and opaque folders that only an overlay
/// reads right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Home {
    pub lower: PathBuf,
    pub upper: PathBuf,
    pub work: PathBuf,
    /// The overlay's mount point in `git-loop`'s private mount namespace.
    pub merged: PathBuf,
    pub overlay: bool,
}

impl Home {
    /// What is bound at `$HOME` inside.
    pub fn bound(&self) -> &Path {
        if self.overlay {
            &self.merged
        } else {
            &self.upper
        }
    }
}

/// Process and memory caps of the whole process tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    pub pids: u64,
    pub memory_bytes: u64,
    pub nofile: u64,
    /// Size of the sandbox's `/tmp`.
    pub tmp_bytes: u64,
    /// Run even where pids and memory cannot be capped (operator `[limits] enforce = "best-effort"`).
    pub best_effort: bool,
}

impl Limits {
    /// 4096 processes and half the machine's memory (DESIGN 4.2).
    pub fn defaults() -> Limits {
        Limits::for_memory(total_memory())
    }

    /// The defaults on a machine of `total` bytes of memory (4 GiB where unknown): half
    /// of it for the sandbox, and a `/tmp` of that much but at most 4 GiB.
    fn for_memory(total: Option<u64>) -> Limits {
        let memory = total.unwrap_or(4 << 30) / 2;
        Limits {
            pids: 4096,
            memory_bytes: memory,
            nofile: 4096,
            tmp_bytes: memory.min(4 << 30),
            best_effort: false,
        }
    }
}

fn total_memory() -> Option<u64> {
    // sysinfo(2) rather than /proc/meminfo, which the kernel composes from dozens of
    // counters on every read: this runs before every sandbox start.
    // SAFETY: sysinfo fills the struct we pass.
    let mut info: libc::sysinfo = unsafe { std::mem::zeroed() };
    if unsafe { libc::sysinfo(&mut info) } != 0 {
        return None;
    }
    Some(bytes_of(info.totalram as u64, info.mem_unit))
}

/// sysinfo counts memory in units of `mem_unit` bytes (1 on 64-bit kernels, a page on
/// 32-bit ones with more memory than 32 bits count; 0 from kernels before 2.3.23).
fn bytes_of(count: u64, mem_unit: u32) -> u64 {
    count * u64::from(mem_unit.max(1))
}

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
    pub mode: RunMode,
    pub limits: Limits,
    pub hostname: String,
    pub new_session: bool,
    pub command: Vec<String>,
    /// What the `proxy` network mode adds; `Some` exactly when `net` is `Proxy`.
    pub egress: Option<Egress>,
    /// The toolchains of the user's home in view, by name.
    pub toolchains: Vec<String>,
    /// What the run should say before it starts (toolchains left out, and why).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

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

/// Where one of a loop's repositories (`code`, `notes`, `knowledge`) is inside its
/// sandbox: the paths the agent works in, and where host-side commands point git that they
/// run inside the sandbox.
pub fn repo_inside(id: &str, role: &str) -> PathBuf {
    match role {
        "code" => Path::new(LOOPAT).join("loop").join(id).join("workdir"),
        other => Path::new(LOOPAT).join("context").join(other),
    }
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

impl HostView {
    pub fn read() -> HostView {
        let mut system = Vec::new();
        for dir in SYSTEM_DIRS {
            let p = Path::new(dir);
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(p) {
                        system.push((p.to_path_buf(), SystemEntry::Symlink(target)));
                    }
                }
                Ok(m) if m.is_dir() => system.push((p.to_path_buf(), SystemEntry::Dir)),
                _ => {}
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

/// What the caller chose for this run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub mode: RunMode,
    pub net: NetMode,
    pub limits: Limits,
    pub command: Vec<String>,
    /// Extra read-only folders at the same path inside (the agent's install folder).
    pub ro_same_path: Vec<PathBuf>,
    /// Operator mounts `(host, inside, rw)`.
    pub operator_mounts: Vec<(PathBuf, PathBuf, bool)>,
    /// The loop was seeded with a chat transcript (`loops/<id>/chat/` exists).
    pub chat_seeded: bool,
    /// The files of the loop's vault, relative to `$HOME` (names only: the contents reach
    /// the spawner, never the spec).
    pub vault_files: Vec<PathBuf>,
    /// Put the sandbox in a new session (no controlling terminal, so no TIOCSTI into the
    /// caller's terminal); off for interactive commands, where seccomp refuses TIOCSTI.
    pub new_session: bool,
    /// With `net` `Proxy`: the binary for ssh's ProxyCommand, the run's token and the
    /// allowlist size.
    pub egress: Option<Egress>,
    /// `$HOME` is an overlay (see [`Home`]; [`crate::sandbox::home_needs_overlay`]).
    pub home_overlay: bool,
    /// Whose names commits made inside carry (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`); `None`
    /// when the user has no git identity.
    pub identity: Option<crate::agent::GitIdentity>,
    /// What a known agent's profile adds to the environment (`git loop agent` only).
    pub agent_env: Vec<(String, String)>,
    /// The toolchains of the user's home the run sees (see `crate::toolchains`).
    pub toolchains: crate::toolchains::Plan,
    /// The run's CA, with the proxy mode and bound vault entries.
    pub trust: Option<Trust>,
}

/// The grants of a loop, at the same paths inside: each bound by the descriptor of what
/// was granted, found again without following links (a grant whose source changed kind or
/// inode is refused at run time); parents before children, so a read-only grant inside a
/// read-write one is never covered by it; and every folder between a grant and a grant
/// nested in it pinned as a mount point of its own, so no rename inside can move the
/// nested grant's source away while its path keeps a decoy.
fn grant_mounts(m: &mut Vec<Mount>, grants: &[crate::loops::Grant], writable: bool) {
    let mut sorted: Vec<&crate::loops::Grant> = grants.iter().collect();
    sorted.sort_by_key(|g| (g.path.components().count(), g.path.clone()));
    let mut pinned: Vec<PathBuf> = Vec::new();
    for (i, grant) in sorted.iter().enumerate() {
        let rw = grant.mode == "rw" && writable;
        // The nearest grant this one lies in, if any: pin the folders between.
        if let Some(outer) = sorted[..i]
            .iter()
            .rev()
            .find(|o| grant.path.starts_with(&o.path) && o.path != grant.path)
        {
            let outer_rw = outer.mode == "rw" && writable;
            let mut between = Vec::new();
            let mut dir = grant.path.parent();
            while let Some(d) = dir {
                if d == outer.path {
                    break;
                }
                between.push(d.to_path_buf());
                dir = d.parent();
            }
            for d in between.into_iter().rev() {
                if pinned.contains(&d) {
                    continue;
                }
                m.push(Mount::confined("/", rel_to_root(&d), &d, outer_rw, false));
                pinned.push(d);
            }
        }
        m.push(Mount::Confined {
            root: PathBuf::from("/"),
            rel: rel_to_root(&grant.path),
            inside: grant.path.clone(),
            rw,
            optional: false,
            expect: grant.source,
        });
    }
}

/// An absolute path as a path below `/`.
fn rel_to_root(path: &Path) -> PathBuf {
    path.strip_prefix("/").unwrap_or(path).to_path_buf()
}

/// The team's prompt layer below the knowledge repository's root (DESIGN 4.6).
pub const TEAM_CLAUDE: &str = ".loopat/claude";

/// The team's skills below the knowledge repository's root.
pub const TEAM_SKILLS: &str = ".loopat/claude/skills";

/// What git reads from a repository's git folder as configuration rather than data, held
/// by git-loop in a loop's repositories and read-only inside: `config` (hooks path,
/// fsmonitor, pager, filters, `include`), `hooks/`, and `commondir`, which would otherwise
/// let a planted file point git at a config folder of the agent's making.
fn protect_git(m: &mut Vec<Mount>, ws: &Workspace, rec: &LoopRecord, pair: &RepoPair, rw: bool) {
    let id = &rec.id;
    let inside = repo_inside(id, pair.role).join(".git");
    let rel = pair
        .clone
        .strip_prefix(ws.loop_dir(id))
        .expect("a loop's repositories are in its folder")
        .join(".git");
    m.push(Mount::confined(ws.loop_dir(id), &rel, &inside, rw, false));
    m.push(Mount::OwnFile {
        root: ws.loop_dir(id),
        rel: rel.join("config"),
        inside: inside.join("config"),
        content: pair.clone_config(&rec.branch),
    });
    m.push(Mount::OwnFile {
        root: ws.loop_dir(id),
        rel: rel.join("commondir"),
        inside: inside.join("commondir"),
        content: ".\n".into(),
    });
    m.push(Mount::confined(
        ws.loop_dir(id),
        rel.join("hooks"),
        inside.join("hooks"),
        false,
        false,
    ));
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

impl SandboxSpec {
    /// The sandbox of loop `rec` (DESIGN 4.1). Pure: reads nothing but its arguments.
    pub fn for_loop(
        ws: &Workspace,
        rec: &LoopRecord,
        host: &HostView,
        opts: &RunOptions,
    ) -> SandboxSpec {
        let id = &rec.id;
        let loopat = Path::new(LOOPAT);
        let loop_inside = loopat.join("loop").join(id);
        let workdir_inside = repo_inside(id, "code");
        let ctx = loopat.join("context");
        let w = opts.mode.writable();
        let mut m = Vec::new();

        m.extend(system_mounts(host, opts.limits.tmp_bytes));

        // Without a network of its own the sandbox has no name server either.
        if opts.net != NetMode::Host {
            m.push(Mount::Data {
                inside: "/etc/resolv.conf".into(),
                content: RESOLV_CONF.into(),
            });
        }
        let egress = opts.egress.clone().filter(|_| opts.net == NetMode::Proxy);
        if let Some(e) = &egress {
            m.push(Mount::ro(&e.exe, crate::egress::relay::RELAY_EXE));
        }
        let trust = opts.trust.as_ref().filter(|_| egress.is_some());
        if let Some(t) = trust {
            m.push(Mount::Data {
                inside: CA_BUNDLE.into(),
                content: t.bundle.clone(),
            });
            m.push(Mount::Data {
                inside: CA_CERT.into(),
                content: t.ca_pem.clone(),
            });
            for file in &t.system_files {
                m.push(Mount::Data {
                    inside: file.clone(),
                    content: t.bundle.clone(),
                });
            }
        }

        // Context: the origins are read-only. The code origin sits where the workdir's
        // relative alternates and remote URL point; the context origins under
        // `.origins/`, where the context clones' relative paths point.
        let distill = rec.kind == Kind::Distill;
        if distill {
            m.push(Mount::bind(ws.loop_knowledge(id), ctx.join("knowledge"), w));
            m.push(Mount::ro(ws.knowledge(), ctx.join(".origins/knowledge")));
        } else {
            m.push(Mount::ro(ws.knowledge(), ctx.join("knowledge")));
        }
        // Notes are the distill loop's input: read-only there.
        m.push(Mount::bind(
            ws.loop_notes(id),
            ctx.join("notes"),
            w && !distill,
        ));
        m.push(Mount::ro(ws.notes(), ctx.join(".origins/notes")));
        // Of the registered repository only its git folder: its working tree, with
        // untracked and ignored files such as `.env`, stays out of view.
        if let (Kind::Code, Some(name)) = (rec.kind, &rec.repo) {
            m.push(Mount::ro(
                ws.repo_link(name).join(".git"),
                ctx.join("repos").join(name).join(".git"),
            ));
        }

        // The chat this loop continues, if it was seeded with one.
        if opts.chat_seeded {
            m.push(Mount::ro(ws.loop_chat_dir(id), ctx.join("chat").join(id)));
        }

        // Personal: files rw; its git folder hidden under an empty read-only tmpfs (its
        // history is git-loop's to keep, and held the vaults once), its `.loopat` (config)
        // ro, each a mount point the agent cannot rename away. The vaults live in a
        // repository of their own that no sandbox sees.
        let personal_inside = ctx.join("personal");
        m.push(Mount::bind(ws.personal(), &personal_inside, w));
        m.push(Mount::Tmpfs {
            inside: personal_inside.join(".git"),
            size: Some(4096),
            ro: true,
        });
        m.push(Mount::confined(
            ws.personal(),
            ".loopat",
            personal_inside.join(".loopat"),
            false,
            false,
        ));

        // The loop itself.
        m.push(Mount::bind(ws.loop_workdir(id), &workdir_inside, w));
        // Each of the loop's repositories: its git folder pinned (a mount point cannot be
        // renamed or replaced), and what the user's own git on the host reads from it as
        // instructions is git-loop's and read-only inside (DESIGN 4.0).
        for pair in crate::loops::repo_pairs(ws, rec) {
            let writable = w && !(distill && pair.role == "notes");
            protect_git(&mut m, ws, rec, &pair, writable);
        }
        let claude_inside = loop_inside.join(".claude");
        m.push(Mount::bind(ws.loop_claude_dir(id), &claude_inside, w));
        // The generated doctrine and the team's skills are read-only over the rw folder;
        // both sit in folders a sandbox can write, so neither is reached through a link.
        m.push(Mount::confined(
            ws.loop_dir(id),
            ".claude/CLAUDE.md",
            claude_inside.join("CLAUDE.md"),
            false,
            true,
        ));
        m.push(Mount::confined(
            ws.knowledge(),
            TEAM_SKILLS,
            claude_inside.join("skills"),
            false,
            true,
        ));

        // $HOME: the loop's persistent layer, writable in every mode.
        let home_inside = PathBuf::from("/home").join(ws.user());
        let home = Home {
            lower: ws.home_skel(),
            upper: ws.loop_home_upper(id),
            work: ws.loop_home_work(id),
            merged: ws.loop_home_merged(id),
            overlay: opts.home_overlay,
        };
        m.push(Mount::bind(home.bound(), &home_inside, true));
        for rel in &opts.vault_files {
            m.push(Mount::Secret {
                inside: home_inside.join(rel),
            });
        }
        // The toolchains, over `$HOME` (see the module's header); a shared cache is
        // writable in work mode only.
        for t in &opts.toolchains.mounts {
            m.push(match t {
                Mount::Bind {
                    host,
                    inside,
                    rw,
                    optional,
                } => Mount::Bind {
                    host: host.clone(),
                    inside: inside.clone(),
                    rw: *rw && w,
                    optional: *optional,
                },
                other => other.clone(),
            });
        }

        for dir in &opts.ro_same_path {
            m.push(Mount::ro(dir, dir));
        }
        for (hostp, inside, rw) in &opts.operator_mounts {
            m.push(Mount::bind(hostp, inside, *rw && w));
        }
        grant_mounts(&mut m, &rec.grants, w);

        m.push(Mount::RemountRo {
            inside: PathBuf::from("/"),
        });

        let mut env = BTreeMap::new();
        for (k, v) in &host.env {
            if passes_in(k) {
                env.insert(k.clone(), v.clone());
            }
        }
        env.insert("HOME".into(), home_inside.display().to_string());
        env.insert("USER".into(), ws.user().to_string());
        env.insert("LOGNAME".into(), ws.user().to_string());
        let mut path: Vec<String> = opts
            .toolchains
            .path
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        path.push(SANDBOX_PATH.into());
        env.insert("PATH".into(), path.join(":"));
        env.insert("TMPDIR".into(), "/tmp".into());
        env.insert(
            "CLAUDE_CONFIG_DIR".into(),
            claude_inside.display().to_string(),
        );
        env.insert("GIT_LOOP_ID".into(), id.clone());
        env.insert("GIT_LOOP_MODE".into(), opts.mode.as_str().into());
        env.entry("TERM".into()).or_insert_with(|| "dumb".into());
        if let Some(e) = &egress {
            env.extend(crate::egress::relay::environment(&e.token));
        }
        if trust.is_some() {
            for var in CA_VARIABLES {
                env.insert((*var).into(), CA_BUNDLE.into());
            }
            env.insert("NODE_EXTRA_CA_CERTS".into(), CA_CERT.into());
        }
        env.extend(opts.toolchains.env.iter().cloned());
        // Commits made inside carry the user's identity, kept in step with their git on
        // every run; the environment wins over any config the agent writes.
        if let Some(id) = &opts.identity {
            for (key, value) in [
                ("GIT_AUTHOR_NAME", &id.author.0),
                ("GIT_AUTHOR_EMAIL", &id.author.1),
                ("GIT_COMMITTER_NAME", &id.committer.0),
                ("GIT_COMMITTER_EMAIL", &id.committer.1),
            ] {
                env.insert(key.into(), value.clone());
            }
        }
        env.extend(opts.agent_env.iter().cloned());

        SandboxSpec {
            loop_id: id.clone(),
            mounts: m,
            home,
            home_inside,
            env,
            cwd: if distill {
                ctx.join("knowledge")
            } else {
                workdir_inside
            },
            net: opts.net,
            mode: opts.mode,
            limits: opts.limits,
            hostname: "loop".into(),
            new_session: opts.new_session,
            command: opts.command.clone(),
            egress,
            toolchains: opts
                .toolchains
                .enabled
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
            warnings: opts.toolchains.warnings.clone(),
        }
    }

    /// The view as a table: (inside, host source, mode), for `show --mounts`.
    pub fn view(&self) -> Vec<(String, String, String)> {
        let mut rows = vec![("/".to_string(), "fresh tmpfs".to_string(), "ro".to_string())];
        for m in &self.mounts {
            let row = match m {
                Mount::Bind {
                    host,
                    inside,
                    rw,
                    optional,
                } => {
                    let mut mode = if *rw { "rw" } else { "ro" }.to_string();
                    if *optional {
                        mode.push_str(" (if present)");
                    }
                    if inside == &self.home_inside {
                        let (upper, lower) = (self.home.upper.display(), self.home.lower.display());
                        let source = if self.home.overlay {
                            format!("overlay: {upper} over {lower}")
                        } else {
                            format!("{upper} ({lower} is empty)")
                        };
                        (inside.display().to_string(), source, "rw".into())
                    } else {
                        (
                            inside.display().to_string(),
                            host.display().to_string(),
                            mode,
                        )
                    }
                }
                Mount::Symlink { target, inside } => (
                    inside.display().to_string(),
                    format!("-> {}", target.display()),
                    "symlink".into(),
                ),
                Mount::Tmpfs { inside, .. } if inside.ends_with("personal/.git") => (
                    inside.display().to_string(),
                    "empty tmpfs (the personal history is git-loop's)".into(),
                    "ro".into(),
                ),
                Mount::Tmpfs { inside, .. } => (
                    inside.display().to_string(),
                    "fresh tmpfs".into(),
                    "rw".into(),
                ),
                Mount::RemountRo { .. } => continue,
                Mount::Proc { inside } => (
                    inside.display().to_string(),
                    "new proc (own pid namespace)".into(),
                    "rw".into(),
                ),
                Mount::Dev { inside } => (
                    inside.display().to_string(),
                    "minimal /dev".into(),
                    "rw".into(),
                ),
                Mount::Data { inside, .. } if inside.as_path() == Path::new("/etc/resolv.conf") => {
                    (
                        inside.display().to_string(),
                        "git-loop: no name server (the proxy resolves)".into(),
                        "ro (over a file)".into(),
                    )
                }
                Mount::Data { inside, .. }
                    if inside.as_path() == Path::new(CA_CERT)
                        || inside.as_path() == Path::new(CA_BUNDLE)
                        || SYSTEM_BUNDLES
                            .iter()
                            .any(|b| inside.as_path() == Path::new(b)) =>
                {
                    (
                        inside.display().to_string(),
                        "git-loop: trusted certificates with this run's CA (bound vault entries)"
                            .into(),
                        "ro".into(),
                    )
                }
                Mount::Data { inside, content } if content.is_empty() => (
                    inside.display().to_string(),
                    "empty (a credential file, kept out)".into(),
                    "ro (over a file)".into(),
                ),
                Mount::Data { inside, .. } => (
                    inside.display().to_string(),
                    "git-loop".into(),
                    "ro (over a file)".into(),
                ),
                Mount::Secret { inside } => (
                    inside.display().to_string(),
                    "vault file, decrypted in memory".into(),
                    "ro 0600".into(),
                ),
                Mount::Confined {
                    root,
                    rel,
                    inside,
                    rw,
                    optional,
                    ..
                } => {
                    let mut mode = if *rw { "rw" } else { "ro" }.to_string();
                    if *optional {
                        mode.push_str(" (if present)");
                    }
                    mode.push_str(", no links followed");
                    (
                        inside.display().to_string(),
                        root.join(rel).display().to_string(),
                        mode,
                    )
                }
                Mount::OwnFile {
                    root, rel, inside, ..
                } => (
                    inside.display().to_string(),
                    format!("{} (git-loop's)", root.join(rel).display()),
                    "ro".into(),
                ),
            };
            rows.push(row);
        }
        rows
    }
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
                    inside, rw, expect, ..
                } => (inside.display().to_string(), *rw, expect.is_some()),
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
    fn run_and_network_modes_read_back_what_they_write() {
        for mode in [RunMode::Work, RunMode::Review, RunMode::Plan] {
            assert_eq!(RunMode::parse(mode.as_str()), Some(mode));
            assert_eq!(mode.writable(), mode == RunMode::Work);
        }
        assert_eq!(
            [RunMode::Work, RunMode::Review, RunMode::Plan].map(RunMode::as_str),
            ["work", "review", "plan"]
        );
        for net in [NetMode::Host, NetMode::None, NetMode::Proxy] {
            assert_eq!(NetMode::parse(net.as_str()), Some(net));
        }
        assert_eq!(
            [NetMode::Host, NetMode::None, NetMode::Proxy].map(NetMode::as_str),
            ["host", "none", "proxy"]
        );
        for bad in ["", "Work", "rw", "proxy ", "all"] {
            assert_eq!(RunMode::parse(bad), None, "{bad:?}");
            assert_eq!(NetMode::parse(bad), None, "{bad:?}");
        }
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
        assert!(host.etc_secrets.contains(&PathBuf::from("/etc/shadow")));
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
    }
}
