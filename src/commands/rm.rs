use crate::error::{Error, Result};
use crate::fsutil::{self, Lock};
use crate::git::objects;
use crate::loops::{self, LoopRecord};
use crate::ui::Ui;
use crate::workspace::Workspace;

/// Remove a loop's folder and working trees.
///
/// Refuses while the loop holds work that is neither merged nor published (commits, or
/// uncommitted changes), unless --force. The branches `loop/<id>` stay in the origins
/// unless --delete-branches.
#[derive(Debug, clap::Args)]
pub struct RmArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Remove even though work would be lost.
    #[arg(long, short = 'f')]
    pub force: bool,
    /// Also delete the branches loop/<id> from the origins.
    #[arg(long)]
    pub delete_branches: bool,
}

pub fn run(ui: &mut Ui, args: RmArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    // Held until the folder is gone: no run of the loop is live, and none starts. What
    // the loop wrote is read without the workspace lock, so a loop that makes reading
    // slow never holds up other loops' publishes.
    let _run = hold_loop(&ws, &id)?;
    let record = loops::load(&ws, &id);
    let rec = match record {
        Ok(rec) => Some(rec),
        Err(e) if args.force => {
            ui.warn(format!("{}; removing it anyway (--force)", e.one_line()))?;
            None
        }
        Err(e) => return Err(e),
    };
    if let Some(rec) = &rec {
        let checked = loops::check_repo(&ws, rec)
            .and_then(|()| loops::import(&ws, rec))
            .and_then(|()| loops::status(&ws, rec))
            .and_then(|status| loops::unfinished_work(&ws, rec, &status));
        match checked {
            Ok(reasons) if reasons.is_empty() => {}
            Ok(reasons) if args.force => {
                for r in reasons {
                    ui.warn(format!("discarding {r}"))?;
                }
            }
            Ok(reasons) => {
                let mut err = Error::failure(format!(
                    "loop {id} holds work that is neither merged nor published"
                ));
                for r in reasons {
                    err = err.hint(r);
                }
                return Err(err.hint(
                    "merge or publish it first, or remove anyway with `git loop rm --force`",
                ));
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
    remove(ui, &ws, &id, rec.as_ref(), args.delete_branches)?;
    Ok(0)
}

/// The loop's run lock, held exclusively: a loop with a live run is not removed.
pub fn hold_loop(ws: &Workspace, id: &str) -> Result<Lock> {
    Lock::try_acquire(&ws.loop_run_lock(id))?.ok_or_else(|| {
        Error::failure(format!(
            "loop {id} is running (a run, shell, agent or autocommit of it is live)"
        ))
        .hint("wait for it to end, or end it; then remove the loop")
    })
}

/// Removes the loop folder, then (if asked) the loop's branches in the origins. A branch
/// is deleted only if it still points where it pointed when read, so a concurrent import
/// is never lost silently.
pub fn remove(
    ui: &mut Ui,
    ws: &Workspace,
    id: &str,
    rec: Option<&LoopRecord>,
    delete_branches: bool,
) -> Result<()> {
    let dir = ws.loop_dir(id);
    fsutil::remove_tree(&dir)
        .map_err(|e| Error::failure(format!("cannot remove {}", dir.display())).with_source(e))?;
    let _ = std::fs::remove_file(ws.loop_run_lock(id));
    ui.status(format!("removed loop {id}"))?;
    if delete_branches {
        let branch = LoopRecord::branch_name(id);
        let mut origins = vec![ws.notes(), ws.knowledge()];
        if let Some(name) = rec.and_then(|r| r.repo.as_ref()) {
            origins.insert(0, ws.repo_link(name));
        }
        for origin in origins {
            let Ok(repo) = objects::open_trusted(&origin) else {
                continue;
            };
            if let Ok(Some(tip)) = objects::resolve_branch(&repo, &branch) {
                objects::delete_branch(&repo, &branch, tip).map_err(|e| {
                    Error::failure(format!("cannot delete {branch} in {}", origin.display()))
                        .with_source(e)
                })?;
                ui.status(format!(
                    "deleted {branch} in {} (was {tip})",
                    origin.display()
                ))?;
            }
        }
    }
    Ok(())
}
