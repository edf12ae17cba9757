//! A run as a value: [`RunPlan`] holds everything decided for one run of a command in a
//! loop's sandbox — the backend, the spec, which descriptors bwrap is handed and from
//! where, the proxy's policy, what is said before it starts (warnings, the status line)
//! and the start event — and [`plan`] makes it from what was read, without reading or
//! changing anything itself, so tests compare whole plans. `execute.rs` then does what
//! the plan says.
//!
//! What a plan is made from is read once, before: [`Choices`] (the backend, the run mode
//! and the network mode, each decided here and nowhere else) and [`Inputs`] (the host's
//! view, the identity, the toolchains, the vault's entries by name, the run's CA when the
//! proxy ends TLS). What does not change between runs of a loop is in the plan's spec and
//! policy, which compare equal when their inputs do; what each run makes anew (the proxy
//! token, the run's id, the CA) is in [`Inputs::fresh`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::probe;
use super::record::StartEvent;
use super::spec::{self, Egress, HostView, Mount, RunOptions, SandboxSpec, Trust};
use super::{limits_for, select_backend, Request, SandboxError};
use crate::config::{Config, Settings};
use crate::egress::intercept::Tls;
use crate::egress::policy::{Pattern, Policy};
use crate::error::{Error, ErrorKind, Result};
use crate::loops::{self, LoopRecord};
use crate::values::{Backend, NetMode, RunMode};
use crate::workspace::Workspace;

/// The three choices a run starts from, made in one place ([`Choices::make`]): what else
/// is read, and how, depends on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choices {
    /// `Bwrap` or `None`: `Auto` is settled by the probe.
    pub backend: Backend,
    pub mode: RunMode,
    pub net: NetMode,
}

impl Choices {
    /// The request's choices over the loop's record and the configuration; the backend
    /// refused (exit 3) when the probe's findings say the sandbox cannot be had.
    pub fn make(
        req: &Request,
        rec: &LoopRecord,
        config: &Config,
        findings: &[probe::Finding],
    ) -> Result<Choices> {
        let requested = req.backend.unwrap_or(config.settings().sandbox.backend);
        Ok(Choices::with_backend(
            req,
            rec,
            select_backend(requested, findings)?,
        ))
    }

    /// The request's modes over the loop's record, with `backend`.
    pub fn with_backend(req: &Request, rec: &LoopRecord, backend: Backend) -> Choices {
        Choices {
            backend,
            mode: req.mode.unwrap_or(rec.mode),
            net: req.net.unwrap_or(rec.network),
        }
    }

    /// Whether the proxy ends TLS toward the hosts the vault's bound entries name, with a
    /// CA of the run's: only in the proxy mode, in a sandbox, with bound entries.
    pub fn intercepts(&self, vault: &VaultView) -> bool {
        self.net == NetMode::Proxy && self.backend == Backend::Bwrap && !vault.bindings.is_empty()
    }
}

/// A loop's vault as a plan sees it: its entries by name and binding, nothing secret
/// (their values reach `execute` in the vault's delivery, never the plan).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VaultView {
    pub name: String,
    /// The entries delivered in plaintext (unbound), by label (`env:NAME`).
    pub plaintext: Vec<String>,
    /// The entries delivered as placeholders (bound), by label.
    pub bound: Vec<String>,
    /// What the proxy stands in for, each with the hosts that may receive it: one for each
    /// bound variable, one for each credential in a bound file.
    pub bindings: Vec<(String, crate::egress::sentinel::Binding)>,
    /// The files, relative to `$HOME`.
    pub files: Vec<PathBuf>,
}

impl VaultView {
    /// What `delivery` delivers, by name.
    pub fn of(name: &str, delivery: &crate::vault::Delivery) -> VaultView {
        VaultView {
            name: name.to_string(),
            plaintext: delivery.plaintext.clone(),
            bound: delivery.bound.clone(),
            bindings: delivery
                .sentinels
                .iter()
                .map(|s| (s.entry.clone(), s.binding.clone()))
                .collect(),
            files: delivery.files.iter().map(|(rel, _)| rel.clone()).collect(),
        }
    }

    /// Only the file names (for views of the sandbox, which decrypt nothing).
    pub fn files_only(name: &str, files: Vec<PathBuf>) -> VaultView {
        VaultView {
            name: name.to_string(),
            files,
            ..VaultView::default()
        }
    }

    /// `vault NAME (2 plaintext, 1 bound)`, `no vault`: for the status line.
    fn label(&self) -> String {
        match (self.plaintext.len(), self.bound.len()) {
            (0, 0) => "no vault".to_string(),
            (plaintext, 0) => format!("vault {} ({plaintext} plaintext)", self.name),
            (plaintext, bound) => {
                format!("vault {} ({plaintext} plaintext, {bound} bound)", self.name)
            }
        }
    }
}

/// What a plan is made from besides the choices, the record, the configuration and the
/// request: read once by [`Inputs::read`], made by hand in tests.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// bwrap's path, as the probe found it (the bwrap backend only).
    pub bwrap: Option<PathBuf>,
    pub host: HostView,
    /// `$HOME` is an overlay ([`super::home_needs_overlay`]).
    pub home_overlay: bool,
    /// The loop was seeded with a chat transcript.
    pub chat_seeded: bool,
    pub identity: Option<crate::agent::GitIdentity>,
    pub toolchains: crate::toolchains::Plan,
    /// This very binary, bound into every sandbox as its pid 1 (`init.rs`) and, in the
    /// proxy mode, for ssh's ProxyCommand.
    pub relay_exe: Option<PathBuf>,
    /// The paths the profile's `[filesystem]` and the built-in list cover ([`fs_cover`]).
    pub fs_cover: Vec<super::fspolicy::Covered>,
    /// Why this kernel has no pid 1's supervisor of calls (`creation.rs`), if it has none.
    pub no_supervisor: Option<String>,
    pub vault: VaultView,
    /// The run's CA as the sandbox trusts it, when the proxy ends TLS ([`Choices::intercepts`]).
    pub trust: Option<Trust>,
    pub fresh: Fresh,
}

/// What every run makes anew.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fresh {
    /// The run's id in its events (start and exit name it).
    pub run: String,
    /// The proxy's token: 256 random bits, hex.
    pub token: String,
}

impl Fresh {
    /// A new run's id and token.
    pub fn make() -> Fresh {
        Fresh {
            run: hex(&rand::random::<[u8; 8]>()),
            token: hex(&rand::random::<[u8; 32]>()),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// [`Inputs`], and the run's CA itself (its private key stays in this process, with the
/// proxy), which a plan never holds.
pub struct Read {
    pub inputs: Inputs,
    pub tls: Option<Arc<Tls>>,
}

impl Inputs {
    /// Reads what a run of `rec` with `choices` is planned from. The toolchains' shared
    /// caches that are missing are made first (empty folders in the user's home), so the
    /// run shares them from the first download on.
    pub fn read(
        ws: &Workspace,
        rec: &LoopRecord,
        config: &Config,
        choices: &Choices,
        vault: VaultView,
        bwrap: Option<PathBuf>,
    ) -> Result<Read> {
        crate::toolchains::make_shared_caches(ws, config);
        let tls = match choices.intercepts(&vault) {
            true => Some(Arc::new(run_ca(rec, config.settings())?)),
            false => None,
        };
        // The identity as kept from an earlier run while every file it came from is as it
        // was (`cache.rs`), else read afresh.
        let (stable, _) = super::cache::stable(ws, rec, config);
        let inputs = Inputs::assemble(ws, rec, config, stable, vault, bwrap)?;
        let trust = tls.as_ref().map(|t| trust_of(t.ca_pem()));
        Ok(Read {
            inputs: Inputs { trust, ..inputs },
            tls,
        })
    }

    /// [`Inputs::read`] for a view of the sandbox (`show --mounts`, the agent's prompt
    /// layers): no cache is made and no CA.
    pub fn read_view(
        ws: &Workspace,
        rec: &LoopRecord,
        config: &Config,
        _choices: &Choices,
        vault: VaultView,
        bwrap: Option<PathBuf>,
    ) -> Result<Inputs> {
        let stable = super::cache::Stable {
            identity: crate::agent::git_identity(ws, rec, config.settings()),
        };
        Inputs::assemble(ws, rec, config, stable, vault, bwrap)
    }

    /// The inputs with the identity of `stable`, the rest read now.
    fn assemble(
        ws: &Workspace,
        rec: &LoopRecord,
        config: &Config,
        stable: super::cache::Stable,
        vault: VaultView,
        bwrap: Option<PathBuf>,
    ) -> Result<Inputs> {
        Ok(Inputs {
            bwrap,
            host: HostView::read(),
            home_overlay: super::home_needs_overlay(ws, &rec.id),
            chat_seeded: ws.loop_chat_dir(&rec.id).is_dir(),
            identity: stable.identity,
            toolchains: crate::toolchains::for_run(ws, config, &Path::new("/home").join(ws.user())),
            relay_exe: Some(relay_exe()?),
            fs_cover: fs_cover(
                ws,
                rec,
                config.profile(),
                config.settings().sandbox.allow_nested_git,
            )?,
            no_supervisor: super::creation::unavailable(),
            vault,
            trust: None,
            fresh: Fresh::make(),
        })
    }
}

/// One run, decided.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub loop_id: String,
    pub spec: SandboxSpec,
    /// What is said before the run starts (warnings, never silenced).
    pub warnings: Vec<String>,
    /// The start event (its `limits` are filled in when they are applied).
    pub start: StartEvent,
    pub how: How,
    /// A live session's descriptors for its init (see `crate::session`).
    pub inherit_fds: Vec<i32>,
    /// The run's time limit.
    pub timeout: Option<std::time::Duration>,
}

/// How the command runs.
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    Sandbox(Sandboxed),
    /// `--backend none`.
    Host(OnHost),
}

/// A run in a bwrap sandbox.
#[derive(Debug, Clone, PartialEq)]
pub struct Sandboxed {
    pub bwrap: PathBuf,
    /// Handed to bwrap by descriptor, in the order they are opened; after them, the
    /// seccomp programs.
    pub descriptors: Vec<Descriptor>,
    /// The proxy mode's proxy.
    pub proxy: Option<ProxyPlan>,
    /// The status line, but for the limits' enforcement ([`Sandboxed::status`]).
    pub status: String,
}

/// What the proxy of a run enforces.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxyPlan {
    pub policy: Policy,
    pub token: String,
    /// It ends TLS toward the bound entries' hosts with the run's CA.
    pub intercept: bool,
}

/// A descriptor bwrap is handed, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descriptor {
    /// A `Confined` or `OwnFile` mount of the spec: opened below its root without
    /// following a link (an `OwnFile` written first unless it already is exactly that).
    Mount(Mount),
    /// Content of git-loop's own, from memory, at `inside`; `over_file`: laid over a
    /// regular file of the host's view only (bwrap would follow a link there and try to
    /// make its target), so left out where the host has none.
    Data {
        inside: PathBuf,
        content: String,
        over_file: bool,
    },
    /// A file of the loop's vault, from the delivery (never from disk), at `inside`.
    VaultFile { inside: PathBuf, rel: PathBuf },
}

impl Descriptor {
    pub fn inside(&self) -> &Path {
        match self {
            Descriptor::Mount(m) => m.inside(),
            Descriptor::Data { inside, .. } | Descriptor::VaultFile { inside, .. } => inside,
        }
    }
}

/// A run on the host (`--backend none`): the loop's folders, a sanitized environment, no
/// isolation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnHost {
    /// Said before anything else, never silenced, not even by `--quiet`.
    pub notice: String,
    pub command: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
}

impl Sandboxed {
    /// The status line, with how the limits are enforced.
    pub fn status(&self, enforcement: &super::limits::Enforcement) -> String {
        match enforcement {
            super::limits::Enforcement::None => {
                format!("{} · NO LIMITS (best-effort)", self.status)
            }
            _ => self.status.clone(),
        }
    }

    /// The descriptors' numbers as `--print-argv` shows them: each in the order
    /// [`Sandboxed::descriptors`] are opened, from 3, then the seccomp programs. A run
    /// opens them in that order, at the numbers the process has free; an optional one found
    /// absent then is left out.
    pub fn planned_fds(&self) -> super::bwrap::Fds {
        let mut next = 3;
        let mut number = || {
            next += 1;
            next - 1
        };
        let files = self
            .descriptors
            .iter()
            .map(|d| (d.inside().to_path_buf(), number()))
            .collect();
        let seccomp = (0..super::seccomp::PROGRAM_ERRNOS.len())
            .map(|_| number())
            .collect();
        super::bwrap::Fds {
            seccomp,
            files,
            ..Default::default()
        }
    }
}

impl RunPlan {
    /// What `--print-argv` prints: bwrap's command line (descriptors numbered as
    /// [`Sandboxed::planned_fds`] says), or the command a host run starts.
    pub fn printed_argv(&self) -> String {
        match &self.how {
            How::Sandbox(s) => {
                let mut fds = s.planned_fds();
                // The creation supervisor's report pipe comes after the filters.
                if self.spec.supervised() {
                    fds.report = Some(3 + (fds.files.len() + fds.seccomp.len()) as i32);
                }
                super::bwrap::display(&super::bwrap::argv(
                    &s.bwrap.to_string_lossy(),
                    &self.spec,
                    &fds,
                ))
            }
            How::Host(h) => {
                super::bwrap::display(&h.command.iter().map(Into::into).collect::<Vec<_>>())
            }
        }
    }
}

/// The spec's options for `choices` and `inputs`; the egress (binary, allowlist size,
/// token) in the proxy mode.
fn options(
    config: &Config,
    req: &Request,
    choices: &Choices,
    inputs: &Inputs,
    egress: Option<Egress>,
) -> RunOptions {
    RunOptions {
        mode: choices.mode,
        net: choices.net,
        limits: limits_for(config.profile(), config.settings()),
        command: req.command.clone(),
        ro_same_path: req.ro_same_path.clone(),
        operator_mounts: super::operator_mounts(config.settings()),
        vault_files: inputs.vault.files.clone(),
        chat_seeded: inputs.chat_seeded,
        new_session: !req.interactive,
        egress,
        home_overlay: inputs.home_overlay,
        identity: inputs.identity.clone(),
        agent_env: req.agent_env.clone(),
        toolchains: inputs.toolchains.clone(),
        trust: inputs.trust.clone(),
        init_exe: inputs.relay_exe.clone(),
        fs_cover: inputs.fs_cover.clone(),
        deny_create: config.profile().filesystem.deny_create.clone(),
        supervisor: inputs.no_supervisor.is_none(),
        nested_git: !super::fspolicy::nested_git_allowed(&config.profile().filesystem),
    }
}

/// The paths the profile's `[filesystem]` and the built-in list cover in this run (see
/// `fspolicy.rs`); a profile asking what the sandbox cannot enforce is refused.
fn fs_cover(
    ws: &Workspace,
    rec: &LoopRecord,
    profile: &crate::config::SandboxProfile,
    operator_allows_nested_git: bool,
) -> Result<Vec<super::fspolicy::Covered>> {
    use super::fspolicy;
    let at = || {
        profile
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the profile".into())
    };
    for p in &profile.filesystem.deny_create {
        super::creation::check_name_pattern(p).map_err(|message| SandboxError::FsPolicy {
            message: format!("[filesystem] deny_create: {message}"),
            profile: at(),
        })?;
    }
    let no_supervisor = (!profile.filesystem.deny_create.is_empty())
        .then(super::creation::unavailable)
        .flatten();
    if let Some(why) = fspolicy::unsupported(&profile.filesystem, no_supervisor.as_deref()) {
        return Err(SandboxError::FsUnsupported { why, profile: at() }.into());
    }
    let work = fspolicy::Tree {
        host: ws.loop_workdir(&rec.id),
        inside: super::spec::repo_inside(&rec.id, "code"),
    };
    let home = fspolicy::Tree {
        host: ws.loop_home_upper(&rec.id),
        inside: Path::new("/home").join(ws.user()),
    };
    let covered =
        fspolicy::cover(&profile.filesystem, &work, &home).map_err(|e| SandboxError::FsPolicy {
            message: e.to_string(),
            profile: at(),
        })?;
    // The nested repositories behind a gitlink in the loop's repositories: what the
    // person's git at their root would read there is read-only. A profile (the team's,
    // from a synced remote) lifts that only where the operator config lets it.
    if fspolicy::nested_git_allowed(&profile.filesystem) {
        if !operator_allows_nested_git {
            return Err(SandboxError::NestedGitNotAllowed { profile: at() }.into());
        }
        return Ok(covered);
    }
    let notes = fspolicy::Tree {
        host: ws.loop_notes(&rec.id),
        inside: super::spec::repo_inside(&rec.id, "notes"),
    };
    let mut nested = Vec::new();
    // A large index's answer is kept for the next start (`cache::gitlinks`), read only
    // when an index is that large.
    let keeping = crate::git::objects::Keeping {
        min_size: KEEP_GITLINKS_FROM,
        settled: super::cache::RACY,
    };
    let kept = std::cell::OnceCell::new();
    let mut keep = std::collections::BTreeMap::new();
    for tree in [&work, &notes] {
        let kept_here = || {
            kept.get_or_init(|| super::cache::gitlinks(ws, &rec.id))
                .get(&tree.host)
                .cloned()
        };
        let (gitlinks, to_keep) = crate::git::objects::index_gitlinks_kept(
            &tree.host,
            &crate::git::objects::Limits::default(),
            &keeping,
            &kept_here,
        )
        .map_err(|e| SandboxError::FsPolicy {
            message: format!(
                "the gitlinks of {} cannot be read, so what the nested repositories behind them hold cannot be kept read-only: {e}",
                tree.host.display()
            ),
            profile: at(),
        })?;
        if let Some(k) = to_keep {
            keep.insert(tree.host.clone(), k);
        }
        let read_git_file = |rel: &std::path::Path| {
            let root = crate::confined::Tree::open(&tree.host).ok()??;
            root.read_text(rel, fspolicy::MAX_GITDIR_FILE).ok()?
        };
        nested.extend(fspolicy::nested_cover(
            &profile.filesystem,
            tree,
            &gitlinks,
            &read_git_file,
        ));
    }
    super::cache::keep_gitlinks(ws, &rec.id, kept.get(), &keep);
    Ok(fspolicy::with_nested(covered, nested))
}

/// The size from which an index's gitlinks are kept for the next start: below it the scan
/// (a few reads of 64 KiB) costs less than reading and checking a kept answer.
const KEEP_GITLINKS_FROM: u64 = 1 << 20;

/// The spec, and the egress policy the proxy enforces in the proxy mode.
pub fn spec_and_policy(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
    choices: &Choices,
    inputs: &Inputs,
) -> Result<(SandboxSpec, Option<Policy>)> {
    let (egress, policy) = match (choices.net, &inputs.relay_exe) {
        (NetMode::Proxy, Some(exe)) => {
            let policy = crate::egress::policy_for(config.profile(), config, &req.allow_domains)?;
            let egress = Egress {
                exe: exe.clone(),
                domains: policy.allowed().len(),
                token: inputs.fresh.token.clone(),
            };
            (Some(egress), Some(policy))
        }
        _ => (None, None),
    };
    let opts = options(config, req, choices, inputs, egress);
    let mut spec = SandboxSpec::for_loop(ws, rec, &inputs.host, &opts);
    spec.uid = config.profile().uid;
    Ok((spec, policy))
}

/// The plan of a run of `req` in loop `rec`. Pure: reads nothing but its arguments.
/// Refuses a vault with unbound entries under `vault.require_binding`, and a vault with
/// files on the host, which cannot deliver them without writing them to disk.
pub fn plan(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
    choices: &Choices,
    inputs: &Inputs,
) -> Result<RunPlan> {
    let vault = &inputs.vault;
    if config.settings().vault.require_binding && !vault.plaintext.is_empty() {
        return Err(unbound_refused(&vault.name, &vault.plaintext));
    }
    let (spec, policy) = spec_and_policy(ws, rec, config, req, choices, inputs)?;
    let mut warnings = spec.warnings.clone();
    let intercept = choices.intercepts(vault) && inputs.trust.is_some();
    if !vault.bindings.is_empty() && !intercept {
        warnings.push(format!(
            "vault {}'s bound entries ({}) get their placeholders only: their values go out through the proxy alone, which this run does not have (--net proxy)",
            vault.name,
            vault.bound.join(", ")
        ));
    }
    if let Some(policy) = &policy {
        for (entry, binding) in &vault.bindings {
            let admitted = binding.hosts.iter().any(|h| {
                policy
                    .allowed()
                    .iter()
                    .any(|a| patterns_meet(&a.pattern, &h.pattern))
            });
            if !admitted {
                warnings.push(format!(
                    "{entry} is bound to {}, which this run's allowlist does not admit",
                    binding.hosts_text()
                ));
            }
        }
    }
    let start = StartEvent {
        run: inputs.fresh.run.clone(),
        backend: choices.backend,
        mode: spec.mode,
        net: match choices.backend {
            Backend::None => "host".to_string(),
            _ => spec.net.name().to_string(),
        },
        limits: None,
        command: spec.command.clone(),
        domains: spec.egress.as_ref().map(|e| e.domains),
        toolchains: spec.toolchains.clone(),
    };
    let how = match choices.backend {
        Backend::None => {
            if !vault.files.is_empty() {
                return Err(SandboxError::FilesOnHost(vault.name.clone()).into());
            }
            if !config.profile().filesystem.is_empty() {
                return Err(SandboxError::FsWithoutSandbox.into());
            }
            How::Host(on_host(ws, rec, &spec))
        }
        _ => How::Sandbox({
            // What only pid 1's supervisor keeps (a name of the built-in list refused when
            // made) is refused without one, never run uncovered.
            let no_supervisor = match (&inputs.no_supervisor, &inputs.relay_exe) {
                (Some(why), _) => Some(why.as_str()),
                (None, None) => Some("git-loop's pid 1 does not run in this sandbox"),
                (None, Some(_)) => None,
            };
            let nested = super::fspolicy::nested_git_unenforced(
                &config.profile().filesystem,
                spec.mode.writable(),
                no_supervisor,
            );
            if let Some(message) =
                super::fspolicy::unenforced(&spec.fs_policy, no_supervisor).or(nested)
            {
                let profile = config.profile().path.as_ref();
                return Err(SandboxError::FsPolicy {
                    message,
                    profile: profile
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|| "the profile".into()),
                }
                .into());
            }
            Sandboxed {
                bwrap: inputs.bwrap.clone().ok_or_else(|| {
                    Error::new(ErrorKind::SandboxUnavailable, "bwrap is not on PATH")
                })?,
                descriptors: descriptors(&spec),
                proxy: policy.map(|policy| ProxyPlan {
                    policy,
                    token: inputs.fresh.token.clone(),
                    intercept,
                }),
                status: status_line(&spec, vault),
            }
        }),
    };
    Ok(RunPlan {
        loop_id: rec.id.clone(),
        spec,
        warnings,
        start,
        how,
        inherit_fds: req
            .session
            .as_ref()
            .map(|s| s.inherit_fds.clone())
            .unwrap_or_default(),
        timeout: req.timeout,
    })
}

/// The descriptors of `spec`'s mounts, in the spec's order.
fn descriptors(spec: &SandboxSpec) -> Vec<Descriptor> {
    spec.mounts
        .iter()
        .filter_map(|m| match m {
            Mount::Confined { .. } | Mount::OwnFile { .. } => Some(Descriptor::Mount(m.clone())),
            Mount::Data { inside, content } => Some(Descriptor::Data {
                inside: inside.clone(),
                content: content.clone(),
                // Below /loopat/ it is a file of git-loop's own on the sandbox's fresh
                // root, where nothing of the host is.
                over_file: !inside.starts_with(spec::LOOPAT),
            }),
            Mount::Secret { inside } => Some(Descriptor::VaultFile {
                inside: inside.clone(),
                rel: inside
                    .strip_prefix(&spec.home_inside)
                    .unwrap_or(inside)
                    .to_path_buf(),
            }),
            _ => None,
        })
        .collect()
}

/// `git-loop: sandbox bwrap · net none · no vault · mode work`, and the toolchains.
fn status_line(spec: &SandboxSpec, vault: &VaultView) -> String {
    let net = match &spec.egress {
        Some(e) => format!("proxy ({} domains)", e.domains),
        None => spec.net.name().to_string(),
    };
    let mut status = format!(
        "git-loop: sandbox bwrap · net {net} · {} · mode {}",
        vault.label(),
        spec.mode
    );
    if !spec.toolchains.is_empty() {
        status.push_str(&format!(" · toolchains {}", spec.toolchains.join(", ")));
    }
    status
}

/// The command on the host, in the loop's folders, with the spec's environment made to
/// fit the host: no proxy (whatever listens on the host's 127.0.0.1:3128 must not get the
/// token), nothing that exists only on the sandbox's own root, and paths below the
/// sandbox's `$HOME` (a toolchain's cache, PATH entries) moved to the loop's `$HOME` layer.
fn on_host(ws: &Workspace, rec: &LoopRecord, spec: &SandboxSpec) -> OnHost {
    let mut env = spec.env.clone();
    for (name, _) in crate::egress::relay::environment("") {
        env.remove(&name);
    }
    let upper = ws.loop_home_upper(&rec.id);
    env.retain(|_, value| !value.starts_with(spec::LOOPAT));
    for value in env.values_mut() {
        let parts: Vec<String> = value
            .split(':')
            .map(
                |part| match Path::new(part).strip_prefix(&spec.home_inside) {
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
    OnHost {
        notice: format!(
            "git-loop: NO SANDBOX (--backend none) · running on the host · mode {}",
            spec.mode
        ),
        command: spec.command.clone(),
        env,
        cwd: match rec.kind {
            loops::Kind::Distill => ws.loop_knowledge(&rec.id),
            _ => ws.loop_workdir(&rec.id),
        },
    }
}

/// The refusal of a run with unbound entries under `vault.require_binding`.
fn unbound_refused(vault: &str, unbound: &[String]) -> Error {
    SandboxError::Unbound {
        vault: vault.to_string(),
        labels: unbound.to_vec(),
        suggested: unbound
            .iter()
            .map(|label| {
                let (kind, name) = label.split_once(':').unwrap_or(("env", label));
                let hosts = crate::vault::binding::suggested(name, None).unwrap_or("HOST");
                (kind.to_string(), name.to_string(), hosts.to_string())
            })
            .collect(),
    }
    .into()
}

/// The run's CA, trusting the operator's `network.upstream_ca` upstream besides the
/// host's store.
fn run_ca(rec: &LoopRecord, settings: &Settings) -> Result<Tls> {
    let extra = match &settings.network.upstream_ca {
        Some(path) => {
            crate::egress::intercept::read_ca_file(path).map_err(SandboxError::UpstreamCa)?
        }
        None => Vec::new(),
    };
    Ok(Tls::new(&rec.id, extra).map_err(SandboxError::Certificates)?)
}

/// The largest system bundle read (a full bundle is about 200 KiB).
const MAX_BUNDLE: u64 = 4 << 20;

/// How the sandbox trusts the run's CA: the host's system bundle (the first of
/// [`spec::SYSTEM_BUNDLES`] there is) with the CA appended, laid over each of them that is
/// a regular file.
fn trust_of(ca_pem: &str) -> Trust {
    use std::io::Read;
    let mut bundle = String::new();
    let mut system_files = Vec::new();
    for path in spec::SYSTEM_BUNDLES {
        let p = Path::new(path);
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
    Trust {
        ca_pem: ca_pem.to_string(),
        bundle,
        system_files,
    }
}

/// Could a host admitted by `allowed` be one `bound` names? (For a warning only.)
fn patterns_meet(allowed: &Pattern, bound: &Pattern) -> bool {
    match bound {
        Pattern::Exact(name) => allowed.matches(name),
        Pattern::Subdomains(suffix) => allowed.matches(&format!("x.{suffix}")) || allowed == bound,
        Pattern::OneLabel { prefix, suffix } => allowed.matches(&format!("{prefix}.x.{suffix}")),
    }
}

/// This very binary, bound into every sandbox as its pid 1 (`init.rs`) and, in the `proxy`
/// mode, for ssh's ProxyCommand.
fn relay_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot find the git-loop binary, the sandbox's pid 1",
        )
        .with_source(e)
    })?;
    if !exe.is_file() {
        return Err(SandboxError::Replaced(exe).into());
    }
    Ok(exe)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::GitIdentity;
    use crate::config::Layer;
    use crate::sandbox::spec::SystemEntry;

    fn ws() -> Workspace {
        Workspace::at("/ws".into(), "alice".into())
    }

    fn record(network: NetMode) -> LoopRecord {
        LoopRecord {
            network,
            ..LoopRecord::read_str_for_tests()
        }
    }

    fn config_with(operator: &str) -> Config {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("config.toml");
        std::fs::write(&file, operator).unwrap();
        let mut config = Config::load(&[(Layer::Operator, file)], None).unwrap();
        config.load_profile(&ws(), "default").unwrap();
        config
    }

    fn config() -> Config {
        config_with("")
    }

    fn request(net: Option<NetMode>) -> Request {
        Request {
            mode: None,
            net,
            backend: None,
            print_argv: false,
            command: vec!["make".into(), "test".into()],
            interactive: false,
            ro_same_path: Vec::new(),
            allow_domains: Vec::new(),
            agent_env: Vec::new(),
            session: None,
            timeout: None,
        }
    }

    fn inputs(vault: VaultView) -> Inputs {
        Inputs {
            bwrap: Some("/usr/bin/bwrap".into()),
            host: HostView {
                system: vec![
                    ("/usr".into(), SystemEntry::Dir),
                    ("/etc".into(), SystemEntry::Dir),
                ],
                etc_secrets: Vec::new(),
                env: [("TERM".to_string(), "xterm".to_string())].into(),
            },
            home_overlay: false,
            chat_seeded: false,
            identity: Some(GitIdentity {
                author: ("Alice".into(), "alice@example.com".into()),
                committer: ("Alice".into(), "alice@example.com".into()),
            }),
            toolchains: Default::default(),
            relay_exe: Some("/opt/git-loop".into()),
            fs_cover: Vec::new(),
            no_supervisor: None,
            vault,
            trust: None,
            fresh: Fresh {
                run: "0123456789abcdef".into(),
                token: "t0k".into(),
            },
        }
    }

    fn choices(backend: Backend, net: NetMode) -> Choices {
        Choices {
            backend,
            mode: RunMode::Work,
            net,
        }
    }

    fn planned(backend: Backend, net: NetMode, inputs: &Inputs) -> Result<RunPlan> {
        let rec = record(NetMode::Proxy);
        plan(
            &ws(),
            &rec,
            &config(),
            &request(Some(net)),
            &choices(backend, net),
            inputs,
        )
    }

    fn vault_with_binding(hosts: &[&str]) -> VaultView {
        VaultView {
            name: "work".into(),
            plaintext: vec!["env:PLAIN".into()],
            bound: vec!["env:GH_TOKEN".into()],
            bindings: vec![(
                "env:GH_TOKEN".into(),
                crate::egress::sentinel::Binding::parse(&hosts.join(","), &[]).unwrap(),
            )],
            files: Vec::new(),
        }
    }

    /// A file of the built-in list not in the working tree is kept from being made only by
    /// pid 1's supervisor: a sandbox on a kernel without one is refused, naming the file
    /// and both ways out, never run uncovered; with one, pid 1 is told the place; a run on
    /// the host (which enforces no `[filesystem]` rule, loudly) and a review-mode run
    /// (nothing writable) are not refused.
    #[test]
    fn a_name_only_the_supervisor_keeps_is_refused_without_it() {
        use crate::sandbox::fspolicy::{Covered, Deny};
        let mut i = inputs(VaultView::default());
        i.fs_cover = vec![Covered {
            root: "/ws/loops/fix-abc123/workdir".into(),
            rel: ".envrc".into(),
            inside: "/loopat/loop/fix-abc123/workdir/.envrc".into(),
            dir: false,
            deny: Deny::Absent,
            rule: "mandatory: .envrc".into(),
        }];
        let p = planned(Backend::Bwrap, NetMode::None, &i).unwrap();
        assert_eq!(
            p.spec.watch.places,
            vec![(
                "/loopat/loop/fix-abc123/workdir/.envrc".into(),
                "mandatory: .envrc".to_string()
            )]
        );
        i.no_supervisor = Some("this kernel has no seccomp user notification".into());
        let e = planned(Backend::Bwrap, NetMode::None, &i).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains(".envrc of the built-in list is not in the working tree")
                && text.contains("(this kernel has no seccomp user notification)")
                && text.contains("allow_write")
                && text.contains("5.14"),
            "{text}"
        );
        assert!(planned(Backend::None, NetMode::None, &i).is_ok());
        let rec = record(NetMode::Proxy);
        let review = Choices {
            mode: RunMode::Review,
            ..choices(Backend::Bwrap, NetMode::None)
        };
        let req = request(Some(NetMode::None));
        assert!(plan(&ws(), &rec, &config(), &req, &review, &i).is_ok());
    }

    /// A `.git` made in the loop's trees is refused by pid 1's supervisor: it is told the
    /// roots of the trees it may write; without it a run is refused, naming the way out;
    /// a review-mode run (nothing writable) is not.
    #[test]
    fn a_nested_repository_is_refused_in_every_writable_tree_and_never_without_the_supervisor() {
        let mut i = inputs(VaultView::default());
        let p = planned(Backend::Bwrap, NetMode::None, &i).unwrap();
        assert_eq!(
            p.spec.watch.repos,
            vec![
                PathBuf::from("/loopat/loop/fix-abc123/workdir"),
                PathBuf::from("/loopat/context/personal"),
                PathBuf::from("/loopat/context/notes"),
            ]
        );
        assert!(p.spec.supervised());
        let rec = record(NetMode::Proxy);
        let review = Choices {
            mode: RunMode::Review,
            ..choices(Backend::Bwrap, NetMode::None)
        };
        let req = request(Some(NetMode::None));
        let reviewed = plan(&ws(), &rec, &config(), &req, &review, &i).unwrap();
        assert!(reviewed.spec.watch.repos.is_empty());
        i.no_supervisor = Some("this kernel has no seccomp user notification".into());
        let text = planned(Backend::Bwrap, NetMode::None, &i)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("making a repository (a `.git`)")
                && text.contains("(this kernel has no seccomp user notification)")
                && text.contains("\"**/.git\" in [filesystem] allow_write")
                && text.contains("5.14"),
            "{text}"
        );
        assert!(plan(&ws(), &rec, &config(), &req, &review, &i).is_ok());
    }

    /// The plan of a sandboxed run without a network, whole: its start event, its
    /// warnings, and how it runs, with bwrap's command line exactly.
    #[test]
    fn a_sandboxed_run_is_planned_whole() {
        let p = planned(Backend::Bwrap, NetMode::None, &inputs(VaultView::default())).unwrap();
        assert_eq!(p.loop_id, "fix-abc123");
        assert_eq!(
            p.start,
            StartEvent {
                run: "0123456789abcdef".into(),
                backend: Backend::Bwrap,
                mode: RunMode::Work,
                net: "none".into(),
                limits: None,
                command: vec!["make".into(), "test".into()],
                domains: None,
                toolchains: Vec::new(),
            }
        );
        assert_eq!(p.warnings, Vec::<String>::new());
        let How::Sandbox(s) = &p.how else {
            panic!("{:?}", p.how)
        };
        assert_eq!(s.bwrap, Path::new("/usr/bin/bwrap"));
        assert_eq!(s.proxy, None);
        assert_eq!(
            s.status,
            "git-loop: sandbox bwrap · net none · no vault · mode work"
        );
        assert_eq!(
            s.status(&crate::sandbox::limits::Enforcement::None),
            "git-loop: sandbox bwrap · net none · no vault · mode work · NO LIMITS (best-effort)"
        );
        // Which descriptors, from where, in the order they are opened.
        let w = "/loopat/loop/fix-abc123/workdir/.git";
        let n = "/loopat/context/notes/.git";
        let descriptors: Vec<(String, String)> = s
            .descriptors
            .iter()
            .map(|d| {
                let from = match d {
                    Descriptor::Mount(Mount::Confined { root, rel, .. }) => {
                        root.join(rel).display().to_string()
                    }
                    Descriptor::Mount(Mount::OwnFile { root, rel, .. }) => {
                        format!("own {}", root.join(rel).display())
                    }
                    Descriptor::Mount(m) => panic!("not by descriptor: {m:?}"),
                    Descriptor::Data { over_file, .. } => format!("data over_file={over_file}"),
                    Descriptor::VaultFile { rel, .. } => format!("vault {}", rel.display()),
                };
                (d.inside().display().to_string(), from)
            })
            .collect();
        let l = "/ws/loops/fix-abc123";
        let e = |inside: &str, from: &str| (inside.to_string(), from.to_string());
        assert_eq!(
            descriptors,
            [
                e("/etc/resolv.conf", "data over_file=true"),
                e(
                    "/loopat/context/personal/.loopat",
                    "/ws/personal/alice/.loopat"
                ),
                e(w, &format!("{l}/workdir/.git")),
                e(
                    &format!("{w}/config"),
                    &format!("own {l}/workdir/.git/config")
                ),
                e(
                    &format!("{w}/commondir"),
                    &format!("own {l}/workdir/.git/commondir")
                ),
                e(&format!("{w}/hooks"), &format!("{l}/workdir/.git/hooks")),
                e(n, &format!("{l}/context/notes/.git")),
                e(
                    &format!("{n}/config"),
                    &format!("own {l}/context/notes/.git/config")
                ),
                e(
                    &format!("{n}/commondir"),
                    &format!("own {l}/context/notes/.git/commondir")
                ),
                e(
                    &format!("{n}/hooks"),
                    &format!("{l}/context/notes/.git/hooks")
                ),
                e(
                    "/loopat/loop/fix-abc123/.claude/CLAUDE.md",
                    &format!("{l}/.claude/CLAUDE.md")
                ),
                // The team's skills: optional, left out where knowledge has none.
                e(
                    "/loopat/loop/fix-abc123/.claude/skills",
                    "/ws/context/knowledge/.loopat/claude/skills"
                ),
            ]
        );
        // `--print-argv` prints the plan: the descriptors numbered in that order from 3,
        // the seccomp programs after them.
        assert_eq!(p.printed_argv(), PRINTED);
    }

    const PRINTED: &str = "/usr/bin/bwrap --unshare-all --unshare-user --disable-userns \
        --die-with-parent --as-pid-1 --new-session --cap-drop ALL --cap-add CAP_SYS_PTRACE \
        --cap-add CAP_SETPCAP --hostname loop --ro-bind /usr /usr \
        --ro-bind /etc /etc --proc /proc --ro-bind-try /proc/sys /proc/sys \
        --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger --dev /dev \
        --size 4294967296 --tmpfs /tmp --ro-bind-data 3 /etc/resolv.conf \
        --ro-bind /opt/git-loop /loopat/.git-loop/git-loop \
        --ro-bind /ws/context/knowledge /loopat/context/knowledge \
        --bind /ws/loops/fix-abc123/context/notes /loopat/context/notes \
        --ro-bind /ws/context/notes /loopat/context/.origins/notes \
        --ro-bind /ws/context/repos/app/.git /loopat/context/repos/app/.git \
        --bind /ws/personal/alice /loopat/context/personal \
        --size 4096 --tmpfs /loopat/context/personal/.git --remount-ro /loopat/context/personal/.git \
        --ro-bind-fd 4 /loopat/context/personal/.loopat \
        --bind /ws/loops/fix-abc123/workdir /loopat/loop/fix-abc123/workdir \
        --bind-fd 5 /loopat/loop/fix-abc123/workdir/.git \
        --ro-bind-fd 6 /loopat/loop/fix-abc123/workdir/.git/config \
        --ro-bind-fd 7 /loopat/loop/fix-abc123/workdir/.git/commondir \
        --ro-bind-fd 8 /loopat/loop/fix-abc123/workdir/.git/hooks \
        --bind-fd 9 /loopat/context/notes/.git \
        --ro-bind-fd 10 /loopat/context/notes/.git/config \
        --ro-bind-fd 11 /loopat/context/notes/.git/commondir \
        --ro-bind-fd 12 /loopat/context/notes/.git/hooks \
        --bind /ws/loops/fix-abc123/.claude /loopat/loop/fix-abc123/.claude \
        --ro-bind-fd 13 /loopat/loop/fix-abc123/.claude/CLAUDE.md \
        --ro-bind-fd 14 /loopat/loop/fix-abc123/.claude/skills \
        --bind /ws/loops/fix-abc123/home/upper /home/alice --remount-ro / \
        --add-seccomp-fd 15 --add-seccomp-fd 16 --add-seccomp-fd 17 \
        --chdir /loopat/loop/fix-abc123/workdir -- /loopat/.git-loop/git-loop __init --watch-writes --deny-git-below /loopat/loop/fix-abc123/workdir --deny-git-below /loopat/context/personal --deny-git-below /loopat/context/notes --report-fd 18 -- make test";

    /// The network mode is decided once, from the request over the record; a plan
    /// follows it everywhere (spec, namespace, proxy, start event, status line).
    #[test]
    fn the_network_mode_is_decided_once() {
        let rec = record(NetMode::Proxy);
        let cfg = config();
        let ok = [probe::Finding {
            check: "bwrap",
            ok: true,
            detail: String::new(),
            fix: None,
        }];
        let made = |net| Choices::make(&request(net), &rec, &cfg, &ok).unwrap();
        assert_eq!(made(None), choices(Backend::Bwrap, NetMode::Proxy));
        assert_eq!(
            made(Some(NetMode::None)),
            choices(Backend::Bwrap, NetMode::None)
        );
        let none = record(NetMode::None);
        assert_eq!(
            Choices::make(&request(None), &none, &cfg, &ok).unwrap(),
            choices(Backend::Bwrap, NetMode::None)
        );

        let p = planned(
            Backend::Bwrap,
            NetMode::Proxy,
            &inputs(VaultView::default()),
        )
        .unwrap();
        let policy = crate::egress::policy_for(cfg.profile(), &cfg, &[]).unwrap();
        let domains = policy.allowed().len();
        assert_eq!(p.spec.net, NetMode::Proxy);
        assert_eq!(p.spec.netns, spec::NetNamespace::Spawner);
        assert_eq!(
            p.spec.egress,
            Some(Egress {
                exe: "/opt/git-loop".into(),
                domains,
                token: "t0k".into()
            })
        );
        assert_eq!(p.start.net, "proxy");
        assert_eq!(p.start.domains, Some(domains));
        let How::Sandbox(s) = &p.how else {
            panic!("{:?}", p.how)
        };
        assert_eq!(
            s.proxy,
            Some(ProxyPlan {
                policy,
                token: "t0k".into(),
                intercept: false
            })
        );
        assert_eq!(
            s.status,
            format!(
                "git-loop: sandbox bwrap · net proxy ({domains} domains) · no vault · mode work"
            )
        );
    }

    /// Bound entries: the proxy ends TLS toward their hosts with the run's CA in the
    /// proxy mode; elsewhere, and for hosts the allowlist does not admit, the plan warns.
    #[test]
    fn bound_entries_are_planned_with_the_proxy_or_warned_about() {
        let trust = Trust {
            ca_pem: "CA".into(),
            bundle: "BUNDLE".into(),
            system_files: Vec::new(),
        };
        let mut with_ca = inputs(vault_with_binding(&["api.github.com"]));
        with_ca.trust = Some(trust.clone());
        let p = planned(Backend::Bwrap, NetMode::Proxy, &with_ca).unwrap();
        assert_eq!(p.warnings, Vec::<String>::new());
        let How::Sandbox(s) = &p.how else {
            panic!("{:?}", p.how)
        };
        assert!(s.proxy.as_ref().unwrap().intercept);
        assert!(
            s.status.contains(" · vault work (1 plaintext, 1 bound) · "),
            "{}",
            s.status
        );
        assert!(s.descriptors.contains(&Descriptor::Data {
            inside: spec::CA_BUNDLE.into(),
            content: "BUNDLE".into(),
            over_file: false,
        }));

        let p = planned(Backend::Bwrap, NetMode::None, &with_ca).unwrap();
        assert_eq!(
            p.warnings,
            ["vault work's bound entries (env:GH_TOKEN) get their placeholders only: their values go out through the proxy alone, which this run does not have (--net proxy)"]
        );

        let mut elsewhere = inputs(vault_with_binding(&["secrets.example.net"]));
        elsewhere.trust = Some(trust);
        let p = planned(Backend::Bwrap, NetMode::Proxy, &elsewhere).unwrap();
        assert_eq!(
            p.warnings,
            ["env:GH_TOKEN is bound to secrets.example.net, which this run's allowlist does not admit"]
        );
    }

    #[test]
    fn unbound_entries_are_refused_under_require_binding() {
        let rec = record(NetMode::Proxy);
        let cfg = config_with("[vault]\nrequire_binding = true\n");
        let err = plan(
            &ws(),
            &rec,
            &cfg,
            &request(None),
            &choices(Backend::Bwrap, NetMode::Proxy),
            &inputs(vault_with_binding(&["api.github.com"])),
        )
        .unwrap_err();
        assert!(
            err.one_line()
                .starts_with("vault work has entries bound to no host (env:PLAIN)"),
            "{}",
            err.one_line()
        );
    }

    /// `--backend none`: the command on the host in the loop's folders, the environment
    /// made to fit the host; files of a vault cannot be delivered there.
    #[test]
    fn a_host_run_is_planned_whole() {
        let p = planned(Backend::None, NetMode::Proxy, &inputs(VaultView::default())).unwrap();
        assert_eq!(p.start.backend, Backend::None);
        assert_eq!(p.start.net, "host");
        let How::Host(host) = &p.how else {
            panic!("{:?}", p.how)
        };
        let mut env: BTreeMap<String, String> = p.spec.env.clone();
        for (name, _) in crate::egress::relay::environment("") {
            env.remove(&name);
        }
        env.retain(|_, v| !v.starts_with(spec::LOOPAT));
        env.insert("HOME".into(), "/ws/loops/fix-abc123/home/upper".into());
        env.insert(
            "CLAUDE_CONFIG_DIR".into(),
            "/ws/loops/fix-abc123/.claude".into(),
        );
        assert_eq!(
            host,
            &OnHost {
                notice: "git-loop: NO SANDBOX (--backend none) · running on the host · mode work"
                    .into(),
                command: vec!["make".into(), "test".into()],
                env,
                cwd: "/ws/loops/fix-abc123/workdir".into(),
            }
        );
        assert_eq!(host.env["TERM"], "xterm");
        assert!(!host.env.contains_key("HTTPS_PROXY"));
        assert_eq!(p.printed_argv(), "make test");

        let mut files = inputs(VaultView::files_only("work", vec![".netrc".into()]));
        files.vault.plaintext = vec!["file:.netrc".into()];
        let err = planned(Backend::None, NetMode::None, &files).unwrap_err();
        assert!(
            err.one_line().contains("vault work has files"),
            "{}",
            err.one_line()
        );
    }

    /// What does not change between runs plans the same; what each run makes anew is in
    /// the token and the run's id only.
    #[test]
    fn the_same_inputs_make_the_same_plan() {
        let a = inputs(VaultView::default());
        let first = planned(Backend::Bwrap, NetMode::Proxy, &a).unwrap();
        assert_eq!(planned(Backend::Bwrap, NetMode::Proxy, &a).unwrap(), first);
        let mut b = a.clone();
        b.fresh = Fresh {
            run: "fedcba9876543210".into(),
            token: "other".into(),
        };
        let mut second = planned(Backend::Bwrap, NetMode::Proxy, &b).unwrap();
        assert_ne!(second, first);
        second.start.run = first.start.run.clone();
        let How::Sandbox(s) = &mut second.how else {
            panic!()
        };
        s.proxy.as_mut().unwrap().token = "t0k".into();
        second.spec = first.spec.clone();
        assert_eq!(second, first);
    }
}
