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
//! Here: the backend, the spec and the egress policy of a run; `setup.rs` prepares the
//! host side (folders, files bound by descriptor, grants, repositories), `run.rs` runs it.

pub mod bwrap;
pub mod events;
pub mod fspolicy;
pub mod init;
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
use crate::report::Report;
use crate::workspace::Workspace;
use spec::{Limits, NetMode, RunMode, RunOptions, SandboxSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// bwrap when the probe passes; otherwise refuse.
    Auto,
    /// bwrap, or refuse with exit 3.
    Bwrap,
    /// No sandbox: run on the host (with a warning every time).
    None,
}

impl crate::choice::Choice for Backend {
    const ALL: &'static [Self] = &[Backend::Auto, Backend::Bwrap, Backend::None];
    fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Bwrap => "bwrap",
            Backend::None => "none",
        }
    }
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

/// Why a sandbox cannot be had for a run (the command layer adds what to do).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The probe's first failed check, then every failed check with its fix; `auto`: the
    /// backend was chosen, not asked for.
    #[error("the sandbox is unavailable: {check}: {detail}")]
    Unavailable {
        check: String,
        detail: String,
        fixes: Vec<(String, String)>,
        auto: bool,
    },
    #[error("loop {id} has an unknown mode '{mode}'")]
    UnknownMode { id: String, mode: String },
    #[error("network mode '{net}' of loop {id} is not available")]
    UnknownNet { id: String, net: String },
    /// Entries bound to no host under `vault.require_binding`: each as (kind, name, the
    /// hosts suggested for it).
    #[error("vault {vault} has entries bound to no host ({}), and vault.require_binding is set", labels.join(", "))]
    Unbound {
        vault: String,
        labels: Vec<String>,
        suggested: Vec<(String, String, String)>,
    },
    #[error("network.upstream_ca: {0}")]
    UpstreamCa(String),
    /// The run's certificate authority could not be made.
    #[error("{0}")]
    Certificates(String),
    #[error("the git-loop binary {} was replaced while it ran", .0.display())]
    Replaced(PathBuf),
    /// A folder or file of the loop that cannot be handed to the sandbox as it should be.
    #[error("cannot give the sandbox {}", path.display())]
    Confined {
        path: PathBuf,
        #[source]
        source: crate::confined::ConfinedError,
    },
    #[error("{} is missing", .0.display())]
    Missing(PathBuf),
    /// The profile (`profile`, its file) asks what this backend cannot enforce (`why`).
    #[error("{why}")]
    FsUnsupported { why: String, profile: String },
    /// A rule of the profile's `[filesystem]` that cannot be applied.
    #[error("{message}")]
    FsPolicy { message: String, profile: String },
    /// `[filesystem]` rules with `--backend none`.
    #[error("the profile's [filesystem] rules need a sandbox; --backend none enforces none")]
    FsWithoutSandbox,
    #[error("the grant {} is not what was granted any more (it was moved or replaced)", .0.display())]
    GrantMoved(PathBuf),
    /// A loop repository's git folder (`git_dir`) that is not a plain folder any more.
    #[error("the {role} repository of loop {id} cannot be used")]
    LoopRepository {
        role: &'static str,
        id: String,
        git_dir: PathBuf,
        #[source]
        source: crate::confined::ConfinedError,
    },
    #[error(
        "vault {0} has files, which only the sandbox can deliver without writing them to disk"
    )]
    FilesOnHost(String),
    #[error("the sandbox's limits cannot be enforced here")]
    Limits(#[source] limits::LimitError),
    /// git run in a loop's folder (`what`) that outlived its time bound.
    #[error("{what} did not finish within {seconds} s and was stopped")]
    TaskTimedOut { what: String, seconds: u64 },
    #[error("bwrap is needed to run git in a folder a sandbox can write")]
    NoBwrapForGit,
    #[error("cannot run {program}")]
    HostCommand {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// The backend to use, or the refusal (exit 3) with the probe's findings and fixes.
pub fn select_backend(requested: Backend, findings: &[probe::Finding]) -> Result<Backend> {
    let failed: Vec<&probe::Finding> = findings.iter().filter(|f| !f.ok).collect();
    match requested {
        Backend::None => Ok(Backend::None),
        _ if failed.is_empty() => Ok(Backend::Bwrap),
        _ => {
            let first = failed[0];
            Err(SandboxError::Unavailable {
                check: first.check.to_string(),
                detail: first.detail.clone(),
                fixes: failed
                    .iter()
                    .filter_map(|f| Some((f.check.to_string(), f.fix.clone()?)))
                    .collect(),
                auto: requested == Backend::Auto,
            }
            .into())
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
        None => RunMode::parse(&rec.mode).ok_or_else(|| SandboxError::UnknownMode {
            id: rec.id.clone(),
            mode: rec.mode.clone(),
        })?,
    };
    let net = match req.net {
        Some(n) => n,
        None => NetMode::parse(&rec.network).ok_or_else(|| SandboxError::UnknownNet {
            id: rec.id.clone(),
            net: rec.network.clone(),
        })?,
    };
    let profile = config.profile();
    let fs_cover = fs_cover(ws, rec, profile)?;
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
        init_exe: Some(relay_exe()?),
        fs_cover,
    };
    let spec = SandboxSpec::for_loop(ws, rec, &spec::HostView::read(), &opts);
    Ok((spec, policy))
}

/// The paths the profile's `[filesystem]` and the built-in list cover in this run (see
/// `fspolicy.rs`); a profile asking what this backend cannot enforce is refused.
fn fs_cover(
    ws: &Workspace,
    rec: &LoopRecord,
    profile: &SandboxProfile,
) -> Result<Vec<fspolicy::Covered>> {
    let at = || {
        profile
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "the profile".into())
    };
    if let Some(why) = fspolicy::unsupported(&profile.filesystem) {
        return Err(SandboxError::FsUnsupported { why, profile: at() }.into());
    }
    let work = fspolicy::Tree {
        host: ws.loop_workdir(&rec.id),
        inside: spec::repo_inside(&rec.id, "code"),
    };
    let home = fspolicy::Tree {
        host: ws.loop_home_upper(&rec.id),
        inside: std::path::Path::new("/home").join(ws.user()),
    };
    fspolicy::cover(&profile.filesystem, &work, &home).map_err(|e| {
        SandboxError::FsPolicy {
            message: e.to_string(),
            profile: at(),
        }
        .into()
    })
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
fn run_ca(rec: &LoopRecord, settings: &Settings) -> Result<crate::egress::intercept::Tls> {
    let extra = match &settings.network.upstream_ca {
        Some(path) => {
            crate::egress::intercept::read_ca_file(path).map_err(SandboxError::UpstreamCa)?
        }
        None => Vec::new(),
    };
    Ok(crate::egress::intercept::Tls::new(&rec.id, extra).map_err(SandboxError::Certificates)?)
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

mod run;
mod setup;

pub use run::*;
use setup::*;

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
