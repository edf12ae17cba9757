//! The sandbox (DESIGN section 4): policy and mechanism kept apart.
//!
//! - [`spec`] computes a [`spec::SandboxSpec`] — pure data — from the loop, the profile and
//!   the config layers;
//! - [`bwrap`] turns a spec into bwrap's argv (pure), [`seccomp`] compiles the filter,
//!   [`limits`] picks how the caps are enforced, [`spawn`] starts it all;
//! - [`probe`] says what the machine can do; [`select_backend`] refuses (exit 3) rather
//!   than fall back to running on the host, which only `--backend none` does, loudly.
//!
//! [`run`] is the one path every sandboxed command (`run`, `shell`, `agent`, `demo`) takes:
//! what it needs is read once, [`plan`] makes a [`plan::RunPlan`] of it (pure data, compared
//! whole in tests), and [`execute`] does what the plan says, in the order its header
//! gives; `setup.rs` holds the host-side steps (folders, files bound by descriptor, grants,
//! repositories), [`record`] how a run's start and exit are recorded, whatever ends it.
//! Here: the request, the refusals, the backend's selection and the limits.

pub mod bwrap;
pub mod caps;
pub mod creation;
pub mod events;
pub mod fspolicy;
pub mod init;
pub mod limits;
pub mod probe;
pub mod seccomp;
pub mod spawn;
pub mod spec;
pub mod task;

use std::path::PathBuf;

use crate::config::schema::{Enforce, MountMode};
use crate::config::{Config, SandboxProfile, Settings};
use crate::error::Result;
use crate::loops::LoopRecord;
use crate::values::{Backend, NetMode, RunMode};
use crate::workspace::Workspace;
use spec::{Limits, SandboxSpec};

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
    /// A live session's own: descriptors the sandbox's command inherits (the session's
    /// socketpair), and the `git-loop` binary bound into the view (see `crate::session`).
    pub session: Option<SessionStart>,
    /// `run --timeout`, `[limits] time`: the run is ended after this long.
    pub timeout: Option<std::time::Duration>,
}

/// What a live session's sandbox has beyond a run's (see `crate::session`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionStart {
    /// Descriptors the sandbox's command inherits, at the same numbers.
    pub inherit_fds: Vec<i32>,
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
    /// A profile's `allow_write = ["**/.git"]` where the operator config does not allow
    /// nested repositories (`sandbox.allow_nested_git`).
    #[error("the profile allows nested repositories (allow_write = [\"**/.git\"]), which only the operator config may let a profile do")]
    NestedGitNotAllowed { profile: String },
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

/// The spec of a run of `req` in loop `rec`, as the run's plan would have it, for views
/// of the sandbox (`show --mounts`, the agent's prompt layers): `vault_files` are the
/// vault's files by name; nothing is decrypted, no cache and no CA is made.
pub fn spec_for(
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
    vault_files: Vec<PathBuf>,
) -> Result<SandboxSpec> {
    // A view needs no probe: it shows the sandbox bwrap would make.
    let choices = plan::Choices::with_backend(req, rec, Backend::Bwrap);
    let vault = plan::VaultView::files_only(&rec.vault, vault_files);
    let inputs = plan::Inputs::read_view(ws, rec, config, &choices, vault, None)?;
    plan::spec_and_policy(ws, rec, config, req, &choices, &inputs).map(|(spec, _)| spec)
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

/// The file entries of a loop's vault, by name only (nothing is decrypted), for views.
pub fn vault_file_names(ws: &Workspace, vault: &str) -> Vec<PathBuf> {
    crate::vault::store::Vault::open(ws, vault)
        .and_then(|v| v.entries())
        .map(|listing| {
            listing
                .entries
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

pub mod cache;
pub mod execute;
pub mod plan;
pub mod record;
pub mod refusals;
mod run;
mod setup;

pub use run::{run, signal_name};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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
