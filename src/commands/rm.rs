use crate::error::{Error, Result};
use crate::loops;
use crate::removal;
use crate::ui::Ui;

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
    // A removal a killed `rm` left is finished first; if it is the one asked for, that is
    // all there is to do.
    let finished = super::finish_interrupted(ui, &ws)?;
    if finished.contains(&args.id) {
        return Ok(0);
    }
    let id = loops::resolve(&ws, &args.id)?;
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
    removal::remove_and_say(ui, &ws, &id, rec.as_ref(), args.delete_branches)?;
    Ok(0)
}
