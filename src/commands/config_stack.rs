//! The configuration a command reads, with the hints a missing profile gets at the
//! command boundary, and the warnings for what a layer may not set.

use crate::config::{Config, ConfigError, Layer};
use crate::error::{Error, Result};
use crate::loops::LoopRecord;
use crate::ui::Ui;
use crate::workspace::{HostPaths, Workspace};

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
    let config = read_sandbox_config(ws, rec)?;
    warn_ignored(ui, &config)?;
    Ok(config)
}

/// [`load_sandbox_config`] without saying what the layers may not set: for a command
/// whose sandbox is made by another process that says it (`up` and its supervisor).
pub fn read_sandbox_config(ws: &Workspace, rec: &LoopRecord) -> Result<Config> {
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
    use crate::report::Report;
    for ignored in &config.ignored {
        ui.warn(ignored.warning())?;
        if let Some(hint) = ignored.hint() {
            Report::hint(ui, &hint)?;
        }
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

/// What a sync takes from the configuration: the notes files merged as a union and the
/// bounds on what it fetches from a remote (`import.max_object_size` and
/// `import.max_pack_size`, the operator's).
pub fn sync_options(ui: &mut Ui, ws: &Workspace) -> Result<crate::sync::Options> {
    let config = load_config(ui, ws, None)?;
    let settings = config.settings();
    Ok(crate::sync::Options {
        union: settings.publish.union.clone(),
        max_object_size: settings.import.max_object_size.0,
        max_pack_size: settings.import.max_pack_size.0,
        ..Default::default()
    })
}

/// The notes files merged as the union of both sides' lines (`publish.union`).
pub fn union_patterns(ui: &mut Ui, ws: &Workspace) -> Result<Vec<String>> {
    // Checked where the configuration is read (`config::schema`).
    Ok(load_config(ui, ws, None)?.settings().publish.union.clone())
}
