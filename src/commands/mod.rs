//! One file per command: its clap `Args` and one `run`. Only glue lives here; the work is
//! done by the domain modules.

pub mod agent;
pub mod autocommit;
pub mod completions;
pub mod config;
pub mod cron;
pub mod demo;
pub mod distill;
pub mod doctor;
pub mod gc;
pub mod grant;
pub mod hook;
pub mod hooks;
pub mod init;
pub mod list;
pub mod log;
pub mod merge;
pub mod new;
pub mod pr;
pub mod publish;
pub mod relay;
pub mod review;
pub mod rm;
pub mod run;
pub mod shell;
pub mod show;
pub mod sync;
pub mod vault;

mod flags;
pub use flags::SandboxFlags;

use crate::config::{Config, ConfigError, Layer};
use crate::error::{Error, Result};
use crate::loops::LoopRecord;
use crate::ui::Ui;
use crate::workspace::{HostPaths, Workspace};

/// The workspace named by the environment, created on first use.
pub fn workspace() -> Result<Workspace> {
    let ws = Workspace::from_env()?;
    crate::init::ensure(&ws)?;
    Ok(ws)
}

/// Finishes what killed commands left and whose owner is provably gone: removals of a
/// killed `rm`, the staging folder and branches of a killed `new`, temp files of a killed
/// journal write. Says what it did; returns the ids of the loops whose removal it finished.
pub fn finish_interrupted(ui: &mut Ui, ws: &Workspace) -> Result<Vec<String>> {
    let mut finished = Vec::new();
    for removed in crate::removal::finish(ws)? {
        ui.status(format!(
            "finished removing loop {} (an interrupted `git loop rm`)",
            removed.id
        ))?;
        for line in removed.branches {
            ui.status(line)?;
        }
        finished.push(removed.id);
    }
    for rolled in crate::create::roll_back_interrupted(ws)? {
        if !rolled.removed.is_empty() {
            ui.status(format!(
                "rolled back an interrupted `git loop new` of {}: {}",
                rolled.id,
                rolled.removed.join(", ")
            ))?;
        }
    }
    crate::fsutil::sweep_dead_temp_files(&ws.locks_dir());
    Ok(finished)
}

/// The config stack for this workspace (and loop, when one is named). What a layer may
/// not set is reported once, as one warning line each.
pub fn load_config(ui: &mut Ui, ws: &Workspace, rec: Option<&LoopRecord>) -> Result<Config> {
    let config = read_config(ws, rec)?;
    warn_ignored(ui, &config)?;
    Ok(config)
}

/// [`load_config`] for a command that runs the loop's sandbox or shows it: with the loop's
/// sandbox profile, which must exist.
pub fn load_sandbox_config(ui: &mut Ui, ws: &Workspace, rec: &LoopRecord) -> Result<Config> {
    let mut config = read_config(ws, Some(rec))?;
    config.load_profile(ws, &rec.sandbox).map_err(|e| match e {
        ConfigError::UnknownProfile { name, path, known } => Error::failure(format!(
            "loop {} uses the sandbox profile '{name}', which is gone: {} does not exist",
            rec.id,
            path.display()
        ))
        .hint(format!(
            "restore .loopat/sandboxes/{name}/sandbox.toml in the knowledge repository, or make a new loop with another profile: git loop new --sandbox NAME"
        ))
        .hint(format!("the profiles there now: {}", known.join(", "))),
        other => other.into(),
    })?;
    warn_ignored(ui, &config)?;
    Ok(config)
}

/// [`load_config`] for a command that makes a loop: with the sandbox profile it will use
/// (`--sandbox NAME`, else `sandbox.profile`), which must exist, checked before anything
/// is made.
pub fn load_new_config(ui: &mut Ui, ws: &Workspace, flag: Option<&str>) -> Result<Config> {
    let mut config = read_config(ws, None)?;
    let name = flag.map_or_else(|| config.settings().sandbox.profile.clone(), str::to_string);
    if let Err(e) = config.load_profile(ws, &name) {
        let ConfigError::UnknownProfile { name, path, known } = e else {
            return Err(e.into());
        };
        let mut err = match flag {
            Some(_) => Error::usage(format!(
                "--sandbox {name}: there is no such sandbox profile"
            )),
            None => {
                let origin = config
                    .get("sandbox.profile")
                    .map(|e| match e.path {
                        Some(p) => format!("the {} config, {}", e.layer, p.display()),
                        None => format!("the {} config", e.layer),
                    })
                    .unwrap_or_default();
                Error::failure(format!(
                    "sandbox.profile = \"{name}\" (from {origin}) names no sandbox profile"
                ))
            }
        };
        err = err.hint(format!("{} does not exist", path.display()));
        if let Some(close) =
            crate::config::schema::did_you_mean(&name, known.iter().map(String::as_str))
        {
            err = err.hint(format!("did you mean `{close}`?"));
        }
        return Err(err.hint(format!("the profiles: {}", known.join(", "))));
    }
    warn_ignored(ui, &config)?;
    Ok(config)
}

/// The config stack, what layers may not set kept in it unsaid.
pub(crate) fn read_config(ws: &Workspace, rec: Option<&LoopRecord>) -> Result<Config> {
    let host = HostPaths::from_env()?;
    let files = vec![
        (Layer::Operator, host.operator_config),
        (Layer::Team, ws.team_config()),
        (Layer::Personal, ws.personal_config()),
    ];
    let loop_layer = rec.map(|r| (ws.loop_record(&r.id), r.config.clone()));
    Ok(Config::load(&files, loop_layer)?)
}

fn warn_ignored(ui: &mut Ui, config: &Config) -> Result<()> {
    for ignored in &config.ignored {
        ui.warn(ignored.warning())?;
    }
    Ok(())
}

/// The secret guard's allowlist of false positives: the built-in placeholders and the
/// operator config's `guard.allow` (only the operator layer may set it).
pub fn guard_allowlist(config: &Config) -> crate::guard::Allowlist {
    // Operator-only (config::policy): other layers' values are dropped with a warning.
    crate::guard::Allowlist::with(config.settings().guard.allow.clone())
}

/// [`guard_allowlist`] where there is no workspace to read (a hook in any repository):
/// from the operator config alone.
pub fn operator_guard_allowlist() -> Result<crate::guard::Allowlist> {
    let host = HostPaths::from_env()?;
    let config = Config::load(&[(Layer::Operator, host.operator_config)], None)?;
    Ok(guard_allowlist(&config))
}

/// Warns about each `--accept-policy PATH` that names nothing the branches carry (a typo,
/// or a change that is no longer there).
pub fn warn_unused_acceptance(
    ui: &mut Ui,
    reports: &[(&str, &crate::gate::Report)],
    accepted: &[String],
) -> Result<()> {
    for a in crate::gate::unused_acceptances(reports, accepted) {
        ui.warn(format!(
            "--accept-policy {a}: the branch carries no change to policy there"
        ))?;
    }
    Ok(())
}

/// Prints JSON on stdout, pretty and newline-terminated.
pub fn print_json(ui: &mut Ui, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::Error::failure("cannot write JSON").with_source(e))?;
    writeln!(ui.out(), "{text}")?;
    Ok(())
}

/// The notes files merged as the union of both sides' lines (`publish.union`).
pub fn union_patterns(ui: &mut Ui, ws: &Workspace) -> Result<Vec<String>> {
    // Checked where the configuration is read (`config::schema`).
    Ok(load_config(ui, ws, None)?.settings().publish.union.clone())
}
