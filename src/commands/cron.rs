use clap::Subcommand;

use crate::error::Result;
use crate::schedule::{self, Installed, Scheduler};
use crate::ui::Ui;

/// Run `git loop autocommit --all --quiet` on a schedule (and `git loop sync` with
/// `install --sync`).
///
/// Where systemd runs your user session: a user timer (git-loop-autocommit.timer).
/// Elsewhere: one crontab entry, marked with a comment, so install is idempotent and
/// uninstall removes exactly it, leaving the rest of your crontab alone.
/// GIT_LOOP_CRONTAB and GIT_LOOP_SYSTEMCTL name other commands to use.
#[derive(Debug, clap::Args)]
pub struct CronArgs {
    #[command(subcommand)]
    pub action: CronAction,
}

#[derive(Debug, Subcommand)]
pub enum CronAction {
    /// Add (or update) the entry.
    Install {
        /// How often: 1m to 59m, or 1h to 23h.
        #[arg(long, default_value = "5m", value_parser = schedule::parse_every)]
        every: String,
        /// Then `git loop sync --quiet`: share the workspace through its remotes.
        #[arg(long)]
        sync: bool,
    },
    /// Remove the entry.
    Uninstall,
    /// Show the entry, if installed.
    Status {
        /// Print JSON: {installed, scheduler: "systemd"|"cron", entry, active}.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(ui: &mut Ui, args: CronArgs) -> Result<u8> {
    let scheduler = Scheduler::find();
    match args.action {
        CronAction::Install { every, sync } => {
            let ws = super::workspace()?;
            let exe = std::env::current_exe()?;
            match schedule::install(&scheduler, &every, ws.root(), &exe, sync)? {
                Installed::Timer { path, every } => ui.status(format!(
                    "installed: {}.timer every {every} ({})",
                    schedule::UNIT,
                    path.display()
                ))?,
                Installed::Line(line) => ui.status(format!("installed: {line}"))?,
            }
            Ok(0)
        }
        CronAction::Uninstall => {
            let removed = schedule::uninstall(&scheduler)?;
            ui.status(if removed {
                "uninstalled"
            } else {
                "not installed"
            })?;
            Ok(0)
        }
        CronAction::Status { json } => {
            let status = schedule::status(&scheduler)?;
            let code = if status.installed { 0 } else { 1 };
            if json {
                let value = serde_json::to_value(&status).unwrap_or_default();
                super::print_json(ui, &value)?;
            } else if !status.installed {
                ui.status("not installed: `git loop cron install` adds it")?;
            } else if let (Scheduler::Systemd(_), Some(active)) = (&scheduler, &status.active) {
                writeln!(
                    ui.out(),
                    "{}.timer: {}",
                    schedule::UNIT,
                    active.as_str().unwrap_or_default()
                )?;
            } else {
                writeln!(ui.out(), "{}", status.entry.unwrap_or_default())?;
            }
            Ok(code)
        }
    }
}
