//! One file per command: its clap `Args` and one `run`. Only glue lives here; the work is
//! done by the domain modules.

pub mod agent;
pub mod attach;
pub mod autocommit;
pub mod comment;
pub mod compare;
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
pub mod logs;
pub mod merge;
pub mod new;
pub mod pick;
pub mod port;
pub mod pr;
pub mod publish;
pub mod rebase;
pub mod relay;
pub mod review;
pub mod rm;
pub mod run;
pub mod shell;
pub mod show;
pub mod sync;
pub mod up;
pub mod vault;
pub mod watch;

mod config_stack;
mod flags;
pub use config_stack::*;
pub use flags::SandboxFlags;

use crate::error::Result;
use crate::ui::Ui;
use crate::workspace::Workspace;

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
