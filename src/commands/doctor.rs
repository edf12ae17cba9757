use crate::doctor::{self, Level};
use crate::error::Result;
use crate::ui::{Ui, GREEN, RED, RESET, YELLOW};
use crate::workspace::Workspace;

/// Check the workspace and say how to fix each problem found.
///
/// Looks for registered repositories that moved away, loops whose folder, record or
/// branch is missing, what a killed `new`, `rm`, `publish`, `merge` or `autocommit`
/// left, git lock files nothing can own any more, and a workspace on a full or read-only
/// file system. It resolves every name the sandboxes' allowlist names exactly (and the
/// operator's pins) as the network proxy does, and says which the proxy would refuse
/// and the command that allows them (it connects to none). Exits 1 when a problem was
/// found.
///
/// A workspace copied to another folder or machine works after `--fix`, which relinks
/// the registered repositories it finds in your usual places (the same remote URL, or
/// the same folder name) and says which it could not.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Apply the fixes that lose nothing: finish or undo what killed commands left (each
    /// result checked), remove git lock files whose owner is provably gone, and relink
    /// repositories that moved.
    #[arg(long)]
    pub fix: bool,
}

pub fn run(ui: &mut Ui, args: DoctorArgs) -> Result<u8> {
    let ws = Workspace::from_env()?;
    let config = if ws.is_initialized() {
        Some(super::load_config(ui, &ws, None)?)
    } else {
        None
    };
    let findings = doctor::examine(&ws, args.fix, config.as_ref())?;
    let problems = findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    if args.json {
        let v = serde_json::to_value(&findings).unwrap_or_default();
        super::print_json(ui, &v)?;
    } else {
        for f in &findings {
            let (mark, color) = match f.level {
                Level::Ok => ("ok", GREEN),
                Level::Info => ("info", ""),
                Level::Problem => ("problem", RED),
                Level::Fixed => ("fixed", YELLOW),
            };
            writeln!(
                ui.out(),
                "{color}{mark:<8}{RESET}{}: {}",
                f.check,
                crate::terminal::shown(&f.message)
            )?;
            if let Some(fix) = &f.fix {
                writeln!(ui.out(), "        fix: {}", crate::terminal::shown(fix))?;
            }
        }
        if problems == 0 {
            writeln!(ui.out(), "no problems found")?;
        } else {
            writeln!(
                ui.out(),
                "{problems} problem{} found",
                if problems == 1 { "" } else { "s" }
            )?;
        }
    }
    Ok(if problems == 0 { 0 } else { 1 })
}
