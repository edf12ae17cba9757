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
pub mod vault;

use crate::config::{Config, Layer};
use crate::error::Result;
use crate::loops::LoopRecord;
use crate::ui::Ui;
use crate::workspace::{HostPaths, Workspace};

/// The workspace named by the environment, created on first use.
pub fn workspace() -> Result<Workspace> {
    let ws = Workspace::from_env()?;
    crate::init::ensure(&ws)?;
    Ok(ws)
}

/// The config stack for this workspace (and loop, when one is named). Keys a layer may
/// not set are reported once as warnings.
pub fn load_config(ui: &mut Ui, ws: &Workspace, rec: Option<&LoopRecord>) -> Result<Config> {
    let host = HostPaths::from_env()?;
    let files = vec![
        (Layer::Operator, host.operator_config),
        (Layer::Team, ws.team_config()),
        (Layer::Personal, ws.personal_config()),
    ];
    let loop_layer = rec.map(|r| (ws.loop_record(&r.id), r.config.clone()));
    let config = Config::load(&files, loop_layer)?;
    for (layer, path, key) in &config.ignored {
        ui.warn(format!(
            "{key} in the {layer} config ({}) is ignored: only the operator config may set it",
            path.display()
        ))?;
    }
    Ok(config)
}

/// Prints JSON on stdout, pretty and newline-terminated.
pub fn print_json(ui: &mut Ui, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::Error::failure("cannot write JSON").with_source(e))?;
    writeln!(ui.out(), "{text}")?;
    Ok(())
}
