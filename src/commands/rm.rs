use crate::error::{Error, Result};
use crate::loops;
use crate::removal;
use crate::ui::Ui;

/// Remove a loop's folder and working trees.
///
/// Refuses only what removal would lose, unless --force: uncommitted changes, and commits
/// not yet imported into the origins (on other branches of the loop's repositories). The
/// branches `loop/<id>` stay in the origins with their commits unless --delete-branches;
/// then their commits that are in neither their target nor on a remote (pushed by `pr`)
/// are refused too.
#[derive(Debug, clap::Args)]
pub struct RmArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Remove even though work would be lost (each piece is named as it goes).
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Also delete the branches loop/<id> from the origins.
    #[arg(long)]
    pub delete_branches: bool,
}

pub fn run(ui: &mut Ui, args: RmArgs) -> Result<u8> {
    let ws = super::workspace()?;
    // A removal a killed `rm` left is finished first; if it is the one asked for, that is
    // all there is to do.
    let finished = super::finish_interrupted(ui, &ws)?;
    if finished.contains(&args.id) {
        return Ok(0);
    }
    let id = loops::resolve(&ws, &args.id)?;
    // Before the loop is held: the teardown is a run of the loop.
    teardown(ui, &ws, &id, args.force)?;
    // Held until the folder is gone: no run of the loop is live, and none starts. What
    // the loop wrote is read without the workspace lock, so a loop that makes reading
    // slow never holds up other loops' publishes.
    let _run = removal::hold(&ws, &id)?;
    let record = loops::load(&ws, &id);
    let rec = match record {
        Ok(rec) => Some(rec),
        Err(e) if args.force => {
            ui.warn(format!("{}; removing it anyway (--force)", e.one_line()))?;
            None
        }
        Err(e) => return Err(e),
    };
    let mut kept = Vec::new();
    if let Some(rec) = &rec {
        let checked = loops::check_repo(&ws, rec)
            .and_then(|()| loops::import(&ws, rec))
            .and_then(|()| loops::status(&ws, rec))
            .and_then(|status| {
                let lost = loops::lost_by_removal(&ws, rec, &status, args.delete_branches)?;
                Ok((lost, status))
            });
        match checked {
            Ok((lost, status)) => {
                if !args.delete_branches {
                    kept = loops::kept_by_removal(&ws, rec, &status);
                }
                if !lost.is_empty() && !args.force {
                    let mut err = Error::failure(format!("removing loop {id} would lose work"));
                    for r in lost {
                        err = err.hint(r);
                    }
                    return Err(err.hint(format!(
                        "commit it first (git loop autocommit {id}), or remove anyway with `git loop rm --force`"
                    )));
                }
                for r in lost {
                    ui.warn(format!("discarding {r}"))?;
                }
            }
            Err(e) if args.force => {
                ui.warn(format!("{}; removing anyway (--force)", e.one_line()))?
            }
            Err(e) => {
                return Err(
                    e.hint("`git loop rm --force` removes the loop without checking its work")
                )
            }
        }
    }
    removal::remove_and_say(ui, &ws, &id, rec.as_ref(), args.delete_branches)?;
    for line in kept {
        ui.status(line)?;
    }
    Ok(0)
}

/// Runs the profile's `teardown` in the loop's sandbox (joining its session when one is
/// up), as `setup` runs at `new`. Its failure stops the removal, unless `--force`, which
/// reports it and goes on.
fn teardown(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str, force: bool) -> Result<()> {
    let Ok(rec) = loops::load(ws, id) else {
        return Ok(());
    };
    let failed = |ui: &mut Ui, why: String| -> Result<()> {
        if force {
            ui.warn(format!("{why}; removing the loop anyway (--force)"))?;
            Ok(())
        } else {
            Err(Error::failure(why).hint(format!(
                "fix it and remove again, or remove anyway: git loop rm --force {id}"
            )))
        }
    };
    let config = match super::load_sandbox_config(ui, ws, &rec) {
        Ok(c) => c,
        Err(e) => {
            return failed(
                ui,
                format!("the profile's teardown cannot run: {}", e.one_line()),
            )
        }
    };
    let Some(argv) = config.profile().teardown.clone() else {
        return Ok(());
    };
    ui.status(format!(
        "teardown: running `{}` in the loop's sandbox...",
        crate::terminal::visible(&argv.join(" "))
    ))?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(["run", "-q", id, "--"])
        .args(&argv)
        .stdin(std::process::Stdio::null())
        // stdout stays clean for what rm prints.
        .stdout(std::io::stderr())
        .status()?;
    if status.success() {
        return Ok(());
    }
    failed(
        ui,
        format!(
            "the profile's teardown failed (exit {})",
            status.code().unwrap_or(-1)
        ),
    )
}
