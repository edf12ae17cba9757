//! The sandbox (DESIGN section 4): policy and mechanism kept apart.
//!
//! - [`spec`] computes a [`spec::SandboxSpec`] — pure data — from the loop, the profile and
//!   the config layers;
//! - [`bwrap`] turns a spec into bwrap's argv (pure), [`seccomp`] compiles the filter,
//!   [`limits`] picks how the caps are enforced, [`spawn`] starts it all;
//! - [`probe`] says what the machine can do; [`select_backend`] refuses (exit 3) rather
//!   than fall back to running on the host, which only `--backend none` does, loudly.
//!
//! [`run`] is the one path every sandboxed command (`run`, `shell`, `agent`, `demo`) takes.

pub mod bwrap;
pub mod events;
pub mod limits;
pub mod probe;
pub mod seccomp;
pub mod spawn;
pub mod spec;
pub mod task;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

use crate::config::schema::{Enforce, MountMode};
use crate::config::{Config, SandboxProfile, Settings};
use crate::error::{Error, ErrorKind, Result};
use crate::loops::{self, LoopRecord};
use crate::ui::Ui;
use crate::workspace::Workspace;
use spec::{Limits, NetMode, RunMode, RunOptions, SandboxSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// bwrap when the probe passes; otherwise refuse.
    Auto,
    /// bwrap, or refuse with exit 3.
    Bwrap,
    /// No sandbox: run on the host (with a warning every time).
    None,
}

/// What a sandboxed command asks for.
#[derive(Debug, Clone)]
pub struct Request {
    pub mode: Option<RunMode>,
    pub net: Option<NetMode>,
    pub backend: Option<Backend>,
    pub print_argv: bool,
    pub command: Vec<String>,
    /// Attached to a terminal the user types into (`shell`, `agent`): keep the caller's
    /// session so job control and resizing work; TIOCSTI is refused by seccomp instead.
    pub interactive: bool,
    pub ro_same_path: Vec<PathBuf>,
    /// `--allow-domain`: patterns the proxy admits for this run, on top of the allowlist.
    pub allow_domains: Vec<String>,
    /// What a known agent's profile adds to the environment (`git loop agent`).
    pub agent_env: Vec<(String, String)>,
}

/// The backend to use, or the refusal (exit 3) with the probe's findings and fixes.
pub fn select_backend(requested: Backend, findings: &[probe::Finding]) -> Result<Backend> {
    let failed: Vec<&probe::Finding> = findings.iter().filter(|f| !f.ok).collect();
    match requested {
        Backend::None => Ok(Backend::None),
        _ if failed.is_empty() => Ok(Backend::Bwrap),
        _ => {
            let first = failed[0];
            let mut err = Error::new(
                ErrorKind::SandboxUnavailable,
                format!(
                    "the sandbox is unavailable: {}: {}",
                    first.check, first.detail
                ),
            );
            for f in &failed {
                if let Some(fix) = &f.fix {
                    err = err.hint(format!("{}: {fix}", f.check));
                }
            }
            if requested == Backend::Auto {
                err = err.hint("`git loop doctor` checks everything; `--backend none` runs on the host with no sandbox at all");
            }
            Err(err)
        }
    }
}

/// The limits of a run: the profile's pids and memory over the defaults; best effort
/// only where the operator config allows it and the profile does not narrow it back.
pub fn limits_for(profile: &SandboxProfile, settings: &Settings) -> Limits {
    let mut limits = Limits::defaults();
    if let Some(p) = profile.pids {
        limits.pids = p.max(1);
    }
    if let Some(m) = profile.memory {
        limits.memory_bytes = m.max(1 << 20);
    }
    // /tmp is memory: never larger than what the run may use.
    limits.tmp_bytes = limits.tmp_bytes.min(limits.memory_bytes);
    limits.best_effort =
        settings.limits.enforce == Enforce::BestEffort && profile.enforce != Some(Enforce::Strict);
    limits
}

/// The spec for a loop and request, from its record, profile and the config layers.
pub fn spec_for(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
    vault_files: Vec<PathBuf>,
) -> Result<SandboxSpec> {
    spec_and_policy(ws, rec, config, req, vault_files, None).map(|(spec, _)| spec)
}

/// [`spec_for`], and the egress policy the proxy enforces when the network mode is `proxy`.
fn spec_and_policy(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
    vault_files: Vec<PathBuf>,
    trust: Option<spec::Trust>,
) -> Result<(SandboxSpec, Option<crate::egress::policy::Policy>)> {
    let mode = match req.mode {
        Some(m) => m,
        None => RunMode::parse(&rec.mode).ok_or_else(|| {
            Error::failure(format!(
                "loop {} has an unknown mode '{}'",
                rec.id, rec.mode
            ))
            .hint("use --mode work or --mode review")
        })?,
    };
    let net = match req.net {
        Some(n) => n,
        None => NetMode::parse(&rec.network).ok_or_else(|| {
            Error::new(
                ErrorKind::SandboxUnavailable,
                format!(
                    "network mode '{}' of loop {} is not available",
                    rec.network, rec.id
                ),
            )
            .hint("run with --net proxy, --net none (loopback only) or --net host")
        })?,
    };
    let profile = config.profile();
    let (egress, policy) = match net {
        NetMode::Proxy => {
            let policy = crate::egress::policy_for(profile, config, &req.allow_domains)?;
            let egress = spec::Egress {
                exe: relay_exe()?,
                domains: policy.allowed().len(),
                token: new_token(),
            };
            (Some(egress), Some(policy))
        }
        _ => (None, None),
    };
    let operator_mounts = operator_mounts(config.settings());
    let opts = RunOptions {
        mode,
        net,
        limits: limits_for(profile, config.settings()),
        command: req.command.clone(),
        ro_same_path: req.ro_same_path.clone(),
        operator_mounts,
        vault_files,
        chat_seeded: ws.loop_chat_dir(&rec.id).is_dir(),
        new_session: !req.interactive,
        egress,
        home_overlay: home_needs_overlay(ws, &rec.id),
        identity: crate::agent::git_identity(ws, rec, config.settings()),
        agent_env: req.agent_env.clone(),
        toolchains: crate::toolchains::for_run(
            ws,
            config,
            &std::path::Path::new("/home").join(ws.user()),
        ),
        trust,
    };
    let spec = SandboxSpec::for_loop(ws, rec, &spec::HostView::read(), &opts);
    Ok((spec, policy))
}

/// The refusal of a run with unbound entries under `vault.require_binding`.
fn unbound_refused(vault: &str, unbound: &[String]) -> Error {
    let mut err = Error::failure(format!(
        "vault {vault} has entries bound to no host ({}), and vault.require_binding is set",
        unbound.join(", ")
    ));
    for label in unbound {
        let (kind, name) = label.split_once(':').unwrap_or(("env", label));
        let hosts = crate::vault::binding::suggested(name, None).unwrap_or("HOST");
        err = err.hint(format!(
            "bind it to the hosts that may receive it: git loop vault bind {vault} {kind}:{name} {hosts}"
        ));
    }
    err
}

/// The run's CA, trusting the operator's `network.upstream_ca` upstream besides the
/// host's store.
fn run_ca(rec: &LoopRecord, settings: &Settings) -> Result<crate::egress::intercept::Tls> {
    let extra = match &settings.network.upstream_ca {
        Some(path) => crate::egress::intercept::read_ca_file(path).map_err(|why| {
            Error::failure(format!("network.upstream_ca: {why}"))
                .hint("point it at a PEM file of CA certificates, or set it to \"\" in the operator config")
        })?,
        None => Vec::new(),
    };
    crate::egress::intercept::Tls::new(&rec.id, extra).map_err(|why| {
        Error::new(ErrorKind::SandboxUnavailable, why).hint(
            "run again; if it persists, report it (the proxy could not make its certificates)",
        )
    })
}

/// The largest system bundle read (a full bundle is about 200 KiB).
const MAX_BUNDLE: u64 = 4 << 20;

/// How the sandbox trusts the run's CA: the host's system bundle (the first of
/// [`spec::SYSTEM_BUNDLES`] there is) with the CA appended, laid over each of them that is
/// a regular file.
fn trust_of(ca_pem: &str) -> spec::Trust {
    use std::io::Read;
    let mut bundle = String::new();
    let mut system_files = Vec::new();
    for path in spec::SYSTEM_BUNDLES {
        let p = std::path::Path::new(path);
        if bundle.is_empty() {
            if let Ok(f) = std::fs::File::open(p) {
                let mut text = String::new();
                if f.take(MAX_BUNDLE).read_to_string(&mut text).is_ok() {
                    bundle = text;
                }
            }
        }
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) {
            system_files.push(p.to_path_buf());
        }
    }
    if !bundle.is_empty() && !bundle.ends_with('\n') {
        bundle.push('\n');
    }
    bundle.push_str("# git-loop: this run's CA, for the hosts vault entries are bound to\n");
    bundle.push_str(ca_pem);
    spec::Trust {
        ca_pem: ca_pem.to_string(),
        bundle,
        system_files,
    }
}

/// Could a host admitted by `allowed` be one `bound` names? (For a warning only.)
fn patterns_meet(
    allowed: &crate::egress::policy::Pattern,
    bound: &crate::egress::policy::Pattern,
) -> bool {
    use crate::egress::policy::Pattern;
    match bound {
        Pattern::Exact(name) => allowed.matches(name),
        Pattern::Subdomains(suffix) => allowed.matches(&format!("x.{suffix}")) || allowed == bound,
        Pattern::OneLabel { prefix, suffix } => allowed.matches(&format!("{prefix}.x.{suffix}")),
    }
}

/// Whether the loop's `$HOME` must be an overlay (see [`spec::Home`]): `sandbox-home-skel/`
/// has something in it, or the loop's `$HOME` has been an overlay before. A skeleton that
/// cannot be read counts as not empty, so the overlay mount reports what is wrong with it.
pub fn home_needs_overlay(ws: &Workspace, id: &str) -> bool {
    let skel_empty = match std::fs::read_dir(ws.home_skel()) {
        Ok(mut entries) => entries.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    };
    !skel_empty || std::fs::symlink_metadata(ws.loop_home_overlay_work(id)).is_ok()
}

/// This very binary, which the `proxy` mode binds into the sandbox for ssh's ProxyCommand.
fn relay_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot find the git-loop binary for the proxy mode",
        )
        .with_source(e)
    })?;
    if !exe.is_file() {
        return Err(Error::new(
            ErrorKind::SandboxUnavailable,
            format!(
                "the git-loop binary {} was replaced while it ran",
                exe.display()
            ),
        )
        .hint("run the command again"));
    }
    Ok(exe)
}

/// A run's proxy token: 256 random bits, hex.
fn new_token() -> String {
    let bytes: [u8; 32] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file entries of a loop's vault, by name only (nothing is decrypted), for views.
pub fn vault_file_names(ws: &Workspace, vault: &str) -> Vec<PathBuf> {
    crate::vault::store::Vault::open(ws, vault)
        .and_then(|v| {
            if v.exists() {
                v.entries()
            } else {
                Ok(Vec::new())
            }
        })
        .map(|entries| {
            entries
                .into_iter()
                .filter(|e| e.entry.kind == crate::vault::store::EntryKind::File)
                .map(|e| PathBuf::from(e.entry.name))
                .collect()
        })
        .unwrap_or_default()
}

/// `[[mounts]]` of the operator config (the only layer allowed to add host mounts): host
/// path, path inside, writable.
fn operator_mounts(settings: &Settings) -> Vec<(PathBuf, PathBuf, bool)> {
    settings
        .mounts
        .iter()
        .map(|m| {
            let inside = m.inside.clone().unwrap_or_else(|| m.path.clone());
            (m.path.clone(), inside, m.mode == MountMode::Rw)
        })
        .collect()
}

/// Folders a run needs on the host (they may be missing in loops made by older versions).
fn ensure_dirs(ws: &Workspace, id: &str) -> Result<()> {
    let mkdir = |dir: &std::path::Path| {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))
    };
    for dir in [
        ws.loop_home_upper(id),
        ws.loop_home_work(id),
        ws.loop_home_merged(id),
        ws.loop_claude_dir(id),
        ws.home_skel(),
    ] {
        mkdir(&dir)?;
    }
    // In folders the agent can write, a planted symlink must never make us create (or
    // bind) something elsewhere on the host: real folders only, one level at a time.
    let real = |dir: &std::path::Path| {
        crate::fsutil::ensure_real_dir(dir)
            .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))
    };
    real(&ws.personal().join(".loopat"))?;
    // The mount point of the team's skills, made here because bwrap cannot make it in a
    // read-only `.claude` (review mode). Looked at without following a link: knowledge
    // holds what teammates pushed.
    let team_skills = crate::confined::Tree::open(&ws.knowledge())
        .ok()
        .flatten()
        .and_then(|t| t.kind(spec::TEAM_SKILLS).ok().flatten());
    if team_skills == Some(crate::confined::Kind::Dir) {
        real(&ws.loop_claude_dir(id).join("skills"))?;
    }
    Ok(())
}

/// Runs `req.command` in the loop's sandbox; returns the command's exit code.
pub fn run(
    ui: &mut Ui,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
) -> Result<u8> {
    let requested = req.backend.unwrap_or(config.settings().sandbox.backend);
    let inputs = probe::Inputs::read();
    let backend = select_backend(requested, &probe::quick(&inputs))?;
    // Held for the whole run: the git lock files in the loop's repositories are this
    // run's to own while it lives (see `loops::stale_git_locks`).
    let _run_lock = crate::fsutil::Lock::acquire_shared(&ws.loop_run_lock(&rec.id))?;
    // Vaults still in the personal tree (where they lived before) would be in view.
    crate::vault::migrate_and_say(ui, ws)?;
    // The vault is decrypted in memory; its files go to bwrap by descriptor, its variables
    // by environment (see spawn.rs), and neither is written anywhere.
    let mut delivery = crate::vault::open_for_run(ws, &rec.vault)?;
    if config.settings().vault.require_binding && !delivery.plaintext.is_empty() {
        return Err(unbound_refused(&rec.vault, &delivery.plaintext));
    }
    let vault_files: Vec<PathBuf> = delivery.files.iter().map(|(rel, _)| rel.clone()).collect();
    crate::toolchains::make_shared_caches(ws, config);
    let net = req
        .net
        .or_else(|| NetMode::parse(&rec.network))
        .unwrap_or(NetMode::None);
    // Bound entries: the proxy ends TLS toward their hosts with a CA of this run's, made
    // here (its key stays in this process) and trusted inside.
    let tls = if delivery.sentinels.is_empty() || net != NetMode::Proxy || backend == Backend::None
    {
        None
    } else {
        Some(std::sync::Arc::new(run_ca(rec, config.settings())?))
    };
    let trust = tls.as_ref().map(|t| trust_of(t.ca_pem()));
    let (spec, policy) = spec_and_policy(ws, rec, config, req, vault_files, trust)?;
    for warning in &spec.warnings {
        ui.warn(warning)?;
    }
    if !delivery.sentinels.is_empty() && tls.is_none() {
        ui.warn(format!(
            "vault {}'s bound entries ({}) get their placeholders only: their values go out through the proxy alone, which this run does not have (--net proxy)",
            rec.vault,
            delivery.bound.join(", ")
        ))?;
    }
    if let Some(policy) = &policy {
        for s in &delivery.sentinels {
            if !s.hosts.iter().any(|h| {
                policy
                    .allowed()
                    .iter()
                    .any(|a| patterns_meet(&a.pattern, h))
            }) {
                ui.warn(format!(
                    "{} is bound to {}, which this run's allowlist does not admit",
                    s.entry,
                    s.hosts_text()
                ))?;
            }
        }
    }
    let vault_label = if delivery.is_empty() {
        "no vault".to_string()
    } else if delivery.bound.is_empty() {
        format!(
            "vault {} ({} plaintext)",
            rec.vault,
            delivery.plaintext.len()
        )
    } else {
        format!(
            "vault {} ({} plaintext, {} bound)",
            rec.vault,
            delivery.plaintext.len(),
            delivery.bound.len()
        )
    };
    if backend == Backend::None {
        if !delivery.files.is_empty() {
            return Err(Error::failure(format!(
                "vault {} has files, which only the sandbox can deliver without writing them to disk",
                rec.vault
            ))
            .hint("run with the sandbox (drop --backend none), or use a vault without file entries"));
        }
        return run_on_host(ui, ws, rec, &spec, req, &delivery.env);
    }
    let bwrap_path = inputs.bwrap.clone().expect("the probe found bwrap");
    let seccomp_fds = seccomp::fds().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot build the seccomp filter",
        )
        .with_source(e)
    })?;
    let mut keep: Vec<std::os::fd::OwnedFd> = seccomp_fds;
    let mut fds = bwrap::Fds {
        seccomp: keep.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect(),
        ..Default::default()
    };
    // Bind sources below trees a sandbox can write are opened here, following no link,
    // and bwrap binds the descriptors (DESIGN 4.0); git-loop's own files there are
    // written first.
    ensure_dirs(ws, &rec.id)?;
    prepare_repos(ui, ws, rec)?;
    let mut left_out = Vec::new();
    for m in &spec.mounts {
        if let Some(fd) = confined_fd(m, &mut left_out)? {
            fds.files.insert(
                m.inside().to_path_buf(),
                std::os::fd::AsRawFd::as_raw_fd(&fd),
            );
            keep.push(fd);
        }
    }
    for m in &spec.mounts {
        if let spec::Mount::Data { inside, content } = m {
            // Over a regular file only (see `Mount::Data`); the view has the host's /etc.
            // Below /loopat/ it is a file of git-loop's own on the sandbox's fresh root,
            // where nothing of the host is.
            let over_file = std::fs::symlink_metadata(inside).is_ok_and(|m| m.is_file());
            if over_file || inside.starts_with(spec::LOOPAT) {
                let fd = data_fd(content).map_err(|e| {
                    Error::failure(format!("cannot hand {} to the sandbox", inside.display()))
                        .with_source(e)
                })?;
                fds.files
                    .insert(inside.clone(), std::os::fd::AsRawFd::as_raw_fd(&fd));
                keep.push(fd);
            }
        }
    }
    // The proxy's channel: the spawner hands the proxy ports it made in the sandbox's
    // network namespace over it (its end never reaches the sandbox).
    let mut channel = None;
    let mut spawner_end = None;
    if spec.net == NetMode::Proxy {
        let (host_end, sandbox_end) = std::os::unix::net::UnixStream::pair().map_err(|e| {
            Error::new(
                ErrorKind::SandboxUnavailable,
                "cannot set up the network proxy",
            )
            .with_source(e)
        })?;
        spawner_end = Some(std::os::fd::OwnedFd::from(sandbox_end));
        channel = Some(host_end);
    }
    for (rel, contents) in &delivery.files {
        let fd = seccomp::memfd("git-loop-vault")
            .and_then(|fd| {
                let mut f = std::fs::File::from(fd);
                use std::io::{Seek, Write};
                f.write_all(contents)?;
                f.seek(std::io::SeekFrom::Start(0))?;
                Ok(std::os::fd::OwnedFd::from(f))
            })
            .map_err(|e| {
                Error::failure("cannot hand a vault file to the sandbox").with_source(e)
            })?;
        fds.files.insert(
            spec.home_inside.join(rel),
            std::os::fd::AsRawFd::as_raw_fd(&fd),
        );
        keep.push(fd);
    }
    let argv = bwrap::argv(&bwrap_path.to_string_lossy(), &spec, &fds);
    if req.print_argv {
        writeln!(ui.out(), "{}", bwrap::display(&argv))?;
        return Ok(0);
    }
    // Ready before the sandbox starts; dropped (and so stopped) on every early return.
    let proxy = match (channel, &spec.egress, policy) {
        (Some(channel), Some(egress), Some(policy)) => {
            let sentinels = match &tls {
                Some(_) => {
                    crate::egress::sentinel::Sentinels::new(std::mem::take(&mut delivery.sentinels))
                }
                None => Default::default(),
            };
            let setup = crate::egress::proxy::Setup {
                policy,
                token: egress.token.clone(),
                events: ws.loop_events(&rec.id),
                sentinels,
                tls: tls.clone(),
            };
            Some(
                crate::egress::proxy::Proxy::start(channel, setup).map_err(|e| {
                    Error::new(
                        ErrorKind::SandboxUnavailable,
                        "cannot start the network proxy",
                    )
                    .with_source(e)
                })?,
            )
        }
        _ => None,
    };
    let cgroup_name = limits::run_cgroup_name(&rec.id);
    let applied = limits::apply(&spec.limits, &cgroup_name, &limits::CgroupHost::read(), inputs.is_root).map_err(|e| {
        Error::new(ErrorKind::SandboxUnavailable, "the sandbox's limits cannot be enforced here")
            .with_source(e)
            .hint("run as a user with a delegated cgroup (systemd-run --user --scope -p Delegate=yes git loop ...)")
            .hint("or set `[limits] enforce = \"best-effort\"` in the operator config to run without caps")
    })?;
    let net_label = match &spec.egress {
        Some(e) => format!("proxy ({} domains)", e.domains),
        None => spec.net.as_str().to_string(),
    };
    let mut status = format!(
        "git-loop: sandbox bwrap · net {} · {} · mode {}",
        net_label,
        vault_label,
        spec.mode.as_str()
    );
    if !spec.toolchains.is_empty() {
        status.push_str(&format!(" · toolchains {}", spec.toolchains.join(", ")));
    }
    if applied.enforcement == limits::Enforcement::None {
        status.push_str(" · NO LIMITS (best-effort)");
    }
    ui.status(status)?;
    let events = ws.loop_events(&rec.id);
    let mut start = json!({"backend": "bwrap", "mode": spec.mode.as_str(), "net": spec.net.as_str(),
               "limits": applied.enforcement.as_str(), "command": spec.command});
    if let Some(e) = &spec.egress {
        start["domains"] = json!(e.domains);
    }
    if !spec.toolchains.is_empty() {
        start["toolchains"] = json!(spec.toolchains);
    }
    let _ = events::append(&events, "start", start);
    let started = Instant::now();
    let result = spawn::run(
        &spec,
        &argv,
        &keep,
        spawner_end.as_ref(),
        &applied,
        ws.root(),
        &delivery.env,
        // The sandbox takes milliseconds to set itself up, which this process would spend
        // waiting: the sweep of killed runs' cgroups is done then.
        || applied.sweep_killed(),
    );
    drop(spawner_end);
    // Nothing of the sandbox runs past this point; the kernel's teardown of its
    // namespaces overlaps with the work below, and `cleanup` waits for its end, so no
    // process of the run is left when `run` returns.
    applied.kill();
    // Letting the spawner's mount namespace go now tears it down alongside the sandbox's.
    let result = result.map(|ended| {
        drop(ended.namespace);
        (ended.status, ended.signal)
    });
    drop(delivery);
    let refused = proxy.map(|p| p.stop().refusals.load(std::sync::atomic::Ordering::Relaxed));
    drop(keep);
    let outcome = (|| {
        if let Some(n @ 1..) = refused {
            ui.status(format!(
                "git-loop: the network policy refused {n} connection{} (`git loop log {}` lists them)",
                if n == 1 { "" } else { "s" },
                rec.id
            ))?;
        }
        let (status, signal) = result.map_err(|e| {
            Error::new(ErrorKind::SandboxUnavailable, "the sandbox failed to start").with_source(e)
        })?;
        if let Some(sig) = signal {
            ui.status(format!("git-loop: SIG{} ended the run", signal_name(sig)))?;
        }
        finish(ui, ws, rec, status, signal, started, "bwrap")
    })();
    applied.cleanup();
    outcome
}

/// The descriptor of a `Confined` or `OwnFile` mount (writing an `OwnFile` first); `None`
/// for other mounts and for an optional one that is absent, or that is something it may
/// not be (a link, a FIFO: then why goes to `left_out`).
fn confined_fd(
    m: &spec::Mount,
    left_out: &mut Vec<String>,
) -> Result<Option<std::os::fd::OwnedFd>> {
    use crate::confined::Tree;
    let cannot = |root: &std::path::Path,
                  rel: &std::path::Path,
                  e: crate::confined::ConfinedError| {
        Error::new(
            ErrorKind::Failure,
            format!("cannot give the sandbox {}", root.join(rel).display()),
        )
        .with_source(e)
        .hint("a sandbox may have put a link or something else there: `git loop doctor` checks the workspace")
    };
    match m {
        spec::Mount::Confined {
            root,
            rel,
            optional,
            expect,
            ..
        } => {
            let fd = Tree::open(root).and_then(|t| match t {
                Some(t) => t.path_fd(rel),
                None => Ok(None),
            });
            let fd = match fd {
                Err(e) if *optional => {
                    left_out.push(format!(
                        "{} is left out of the sandbox: {e}",
                        root.join(rel).display()
                    ));
                    None
                }
                other => other.map_err(|e| cannot(root, rel, e))?,
            };
            match fd {
                Some(fd) => {
                    if let Some(expect) = expect {
                        check_grant_source(&fd, expect, &root.join(rel))?;
                    }
                    Ok(Some(fd))
                }
                None if *optional => Ok(None),
                None => Err(
                    Error::failure(format!("{} is missing", root.join(rel).display()))
                        .hint("`git loop doctor` checks the workspace"),
                ),
            }
        }
        spec::Mount::OwnFile {
            root, rel, content, ..
        } => {
            let tree = Tree::open(root)
                .map_err(|e| cannot(root, rel, e))?
                .ok_or_else(|| Error::failure(format!("{} is missing", root.display())))?;
            if let Some(fd) = already_own(&tree, rel, content.as_bytes()) {
                return Ok(Some(fd));
            }
            tree.write_atomic(rel, content.as_bytes(), 0o644)
                .and_then(|()| tree.path_fd(rel))
                .map_err(|e| cannot(root, rel, e))
        }
        _ => Ok(None),
    }
}

/// The file `rel` when it already is exactly what an `OwnFile` mount writes: a regular
/// file (never through a link), with one name (no other name a sandbox could write it
/// through), mode 0644 and `content`. It is bound as it is, by the descriptor that read
/// it; anything else is written anew. Rewriting it on every start cost a write, an fsync
/// and a rename per file, four files per loop.
fn already_own(
    tree: &crate::confined::Tree,
    rel: &std::path::Path,
    content: &[u8],
) -> Option<std::os::fd::OwnedFd> {
    use std::io::Read;
    let file = tree.open_file(rel).ok()??;
    let stat = nix::sys::stat::fstat(&file).ok()?;
    if stat.st_nlink != 1
        || stat.st_mode & 0o7777 != 0o644
        || stat.st_size as usize != content.len()
    {
        return None;
    }
    let mut read = Vec::with_capacity(content.len());
    (&file)
        .take(content.len() as u64 + 1)
        .read_to_end(&mut read)
        .ok()?;
    (read == content).then(|| std::os::fd::OwnedFd::from(file))
}

/// A grant binds what was granted or nothing: a source that is now another folder or file
/// (moved, replaced, swapped for a decoy) refuses the run.
fn check_grant_source(
    fd: &std::os::fd::OwnedFd,
    expect: &loops::GrantSource,
    path: &std::path::Path,
) -> Result<()> {
    let stat = nix::sys::stat::fstat(fd).map_err(|e| {
        Error::failure(format!("cannot look at the grant {}", path.display()))
            .with_source(std::io::Error::from(e))
    })?;
    let dir = nix::sys::stat::SFlag::from_bits_truncate(stat.st_mode)
        .contains(nix::sys::stat::SFlag::S_IFDIR);
    if dir != expect.dir || stat.st_dev != expect.dev || stat.st_ino != expect.ino {
        return Err(Error::failure(format!(
            "the grant {} is not what was granted any more (it was moved or replaced)",
            path.display()
        ))
        .hint(format!(
            "look at what is there now; if it is right, grant it again: git loop grant ID --ro|--rw {}",
            path.display()
        )));
    }
    Ok(())
}

/// Readies the loop's repositories for a run: each git folder a real folder with its
/// `hooks/` (empty: hooks an agent left there before they were read-only are removed,
/// and said so) and `info/`.
fn prepare_repos(ui: &mut Ui, ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    use crate::confined::{Kind, Tree};
    let loop_dir = ws.loop_dir(&rec.id);
    let tree = Tree::open(&loop_dir)
        .map_err(|e| Error::failure(format!("cannot open {}", loop_dir.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", loop_dir.display())))?;
    for pair in loops::repo_pairs(ws, rec) {
        let git = pair
            .clone
            .strip_prefix(&loop_dir)
            .expect("a loop's repositories are in its folder")
            .join(".git");
        let bad = |e: crate::confined::ConfinedError| {
            Error::failure(format!(
                "the {} repository of loop {} cannot be used",
                pair.role, rec.id
            ))
            .with_source(e)
            .hint(format!(
                "look at {} (a sandbox may have replaced it)",
                pair.clone_git_dir().display()
            ))
        };
        match tree.kind(&git).map_err(bad)? {
            Some(Kind::Dir) => {}
            _ => {
                return Err(bad(crate::confined::ConfinedError::NotDir {
                    path: pair.clone_git_dir(),
                }))
            }
        }
        for folder in ["hooks", "info"] {
            tree.ensure_dir(git.join(folder)).map_err(bad)?;
        }
        let hooks = git.join("hooks");
        for name in tree.list(&hooks).map_err(bad)?.unwrap_or_default() {
            if name.as_encoded_bytes().ends_with(b".sample") {
                continue;
            }
            let path = hooks.join(&name);
            let removed = match tree.kind(&path).map_err(bad)? {
                Some(Kind::Dir) => crate::fsutil::remove_tree(&loop_dir.join(&path)).is_ok(),
                _ => tree.remove_file(&path).is_ok(),
            };
            if removed {
                ui.warn(format!(
                    "removed {} from loop {}: a loop's hooks are git-loop's, and none runs",
                    loop_dir.join(&path).display(),
                    rec.id
                ))?;
            }
        }
    }
    Ok(())
}

/// A descriptor bwrap reads `content` from (`--ro-bind-data`).
fn data_fd(content: &str) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::{Seek, Write};
    let mut f = std::fs::File::from(seccomp::memfd("git-loop-data")?);
    f.write_all(content.as_bytes())?;
    f.seek(std::io::SeekFrom::Start(0))?;
    Ok(std::os::fd::OwnedFd::from(f))
}

fn finish(
    ui: &mut Ui,
    ws: &Workspace,
    rec: &LoopRecord,
    status: std::process::ExitStatus,
    signal: Option<i32>,
    started: Instant,
    backend: &str,
) -> Result<u8> {
    // A signal to git-loop that ended the run is the run's end, as for a shell's child.
    let code = match (signal, status.code(), status.signal()) {
        (Some(sig), _, _) | (None, None, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
        (None, Some(c), _) => c.clamp(0, 255) as u8,
        _ => 1,
    };
    let mut exit = json!({"backend": backend, "code": code, "duration_ms": started.elapsed().as_millis() as u64});
    if let Some(sig) = signal {
        exit["signal"] = json!(signal_name(sig));
    }
    let _ = events::append(&ws.loop_events(&rec.id), "exit", exit);
    // Grants for one run are spent. (No workspace lock: `autocommit` holds it while its
    // sandboxed commits run, and the record is replaced atomically.)
    if rec.grants.iter().any(|g| g.once) {
        if let Ok(mut fresh) = loops::load(ws, &rec.id) {
            fresh.grants.retain(|g| !g.once);
            let _ = fresh.write(&ws.loop_record(&rec.id));
        }
    }
    // What the run committed reaches the origins now; a failure here is reported but
    // does not hide the command's own exit code.
    if let Err(e) = loops::import(ws, rec) {
        ui.warn(e.one_line())?;
        for h in &e.hints {
            writeln!(ui.err(), "hint: {h}")?;
        }
    }
    Ok(code)
}

/// `TERM` for SIGTERM and so on, as `kill -l` names them.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().trim_start_matches("SIG").to_string())
        .unwrap_or_else(|_| sig.to_string())
}

/// `--backend none`: the loop's folders and a sanitized environment, no isolation.
fn run_on_host(
    ui: &mut Ui,
    ws: &Workspace,
    rec: &LoopRecord,
    spec: &SandboxSpec,
    req: &Request,
    secret_env: &[(String, secrecy::SecretString)],
) -> Result<u8> {
    // Never silenced, not even by --quiet: the user must always see that nothing isolates this run.
    writeln!(
        ui.err(),
        "git-loop: NO SANDBOX (--backend none) · running on the host · mode {}",
        spec.mode.as_str()
    )?;
    if req.print_argv {
        writeln!(
            ui.out(),
            "{}",
            bwrap::display(&spec.command.iter().map(Into::into).collect::<Vec<_>>())
        )?;
        return Ok(0);
    }
    ensure_dirs(ws, &rec.id)?;
    let mut env = spec.env.clone();
    // On the host there is no proxy (and whatever listens on its 127.0.0.1:3128 must not
    // get the token): the proxy variables go.
    for (name, _) in crate::egress::relay::environment("") {
        env.remove(&name);
    }
    // Paths below the sandbox's `$HOME` (a toolchain's cache, PATH entries) are the
    // loop's `$HOME` layer on the host.
    let upper = ws.loop_home_upper(&rec.id);
    // Files that exist only on the sandbox's own root (a toolchain's config of
    // git-loop's making) are not on the host.
    env.retain(|_, value| !value.starts_with(spec::LOOPAT));
    for value in env.values_mut() {
        let parts: Vec<String> = value
            .split(':')
            .map(
                |part| match std::path::Path::new(part).strip_prefix(&spec.home_inside) {
                    Ok(rest) => upper.join(rest).display().to_string(),
                    Err(_) => part.to_string(),
                },
            )
            .collect();
        *value = parts.join(":");
    }
    env.insert("HOME".into(), upper.display().to_string());
    env.insert(
        "CLAUDE_CONFIG_DIR".into(),
        ws.loop_claude_dir(&rec.id).display().to_string(),
    );
    let cwd = if rec.kind == loops::Kind::Distill {
        ws.loop_knowledge(&rec.id)
    } else {
        ws.loop_workdir(&rec.id)
    };
    let _ = events::append(
        &ws.loop_events(&rec.id),
        "start",
        json!({"backend": "none", "mode": spec.mode.as_str(), "net": "host", "command": spec.command}),
    );
    let started = Instant::now();
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| Error::usage("no command to run"))?;
    let status = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(&env)
        .envs(secret_env.iter().map(|(k, v)| {
            use secrecy::ExposeSecret;
            (k.as_str(), v.expose_secret())
        }))
        .current_dir(&cwd)
        .status()
        .map_err(|e| {
            Error::failure(format!("cannot run {program}"))
                .with_source(e)
                .hint("check the command's name and that it is installed")
        })?;
    finish(ui, ws, rec, status, None, started, "none")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(ok: bool) -> probe::Finding {
        probe::Finding {
            check: "user namespaces",
            ok,
            detail: if ok { "usable".into() } else { "off".into() },
            fix: (!ok).then(|| "sudo sysctl -w kernel.unprivileged_userns_clone=1".into()),
        }
    }

    #[test]
    fn a_probe_that_passes_gives_bwrap_for_auto_and_bwrap() {
        for asked in [Backend::Auto, Backend::Bwrap] {
            assert_eq!(
                select_backend(asked, &[finding(true)]).unwrap(),
                Backend::Bwrap
            );
        }
    }

    #[test]
    fn a_probe_that_fails_refuses_with_exit_3_and_never_falls_back() {
        for asked in [Backend::Auto, Backend::Bwrap] {
            let err = select_backend(asked, &[finding(true), finding(false)]).unwrap_err();
            assert_eq!(err.kind, ErrorKind::SandboxUnavailable);
            assert_eq!(err.kind.exit_code(), 3);
            assert!(err
                .one_line()
                .contains("the sandbox is unavailable: user namespaces: off"));
            assert!(err.hints.iter().any(|h| h.contains("sysctl")));
            // Only auto mentions running without a sandbox, and only as the person's choice.
            let mentions_none = err.hints.iter().any(|h| h.contains("--backend none"));
            assert_eq!(mentions_none, asked == Backend::Auto);
        }
    }

    #[test]
    fn none_is_only_ever_what_was_asked_for() {
        assert_eq!(
            select_backend(Backend::None, &[finding(false)]).unwrap(),
            Backend::None
        );
        assert_eq!(
            select_backend(Backend::None, &[finding(true)]).unwrap(),
            Backend::None
        );
    }

    #[test]
    fn signal_names_are_as_kill_names_them() {
        assert_eq!(signal_name(libc::SIGTERM), "TERM");
        assert_eq!(signal_name(libc::SIGHUP), "HUP");
        assert_eq!(signal_name(libc::SIGINT), "INT");
        assert_eq!(signal_name(99), "99");
    }
}
