use crate::error::Result;
use crate::loops;
use crate::rebase::{self, RebaseError, Rebased};
use crate::review::task;
use crate::terminal::shown;
use crate::ui::Ui;

/// Rebase a loop's code branch onto its base branch as it is now (or --onto REV), inside
/// the loop's sandbox.
///
/// The rebase runs in the loop's own repository, in its sandbox: nothing of your
/// repository moves but `loop/<id>`, which the import afterwards sets to the rebased
/// branch. A loop with uncommitted changes is refused (commit them first).
///
/// On conflicts the rebase stops with the files named and is left in progress in the
/// loop's working folder: finish it in `git loop shell ID` (resolve, `git add`, `git
/// rebase --continue`), or give it to the loop's agent with --agent, which is told what
/// the loop's commits meant and what the base gained, resolves, continues the rebase and
/// runs the sandbox profile's `check`; the check is run again afterwards, and the result
/// is reviewed like any proposal (`git loop review ID`).
#[derive(Debug, clap::Args)]
pub struct RebaseArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// The commit, branch or tag to rebase onto (default: the branch the loop started
    /// from, as it is now).
    #[arg(long, value_name = "REV")]
    pub onto: Option<String>,
    /// When the rebase stops on conflicts (now, or left by an earlier rebase), give them
    /// to the loop's agent (`agent.command`, run once as `agent --address-review` runs it).
    #[arg(long)]
    pub agent: bool,
}

pub fn run(ui: &mut Ui, args: RebaseArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    if args.agent {
        // The conflicts would go to an agent that cannot log in: refused before anything.
        let config = super::load_config(ui, &ws, Some(&rec))?;
        let profile = crate::agent::Profile::of(&config.settings().agent.command);
        crate::agent::check_login(&ws, &rec.vault, Some(&id), profile)?;
    }
    let onto = rebase::onto(&ws, &rec, args.onto.as_deref())?;
    if !(args.agent && rebase::in_progress(&ws, &id)) {
        let spinner = ui.spinner(format!(
            "rebasing loop {id} onto {} in its sandbox",
            shown(&onto.name)
        ));
        let result = rebase::rebase(&ws, &rec, &onto);
        spinner.finish_and_clear();
        match result {
            Ok(Rebased::UpToDate) => {
                ui.status(format!(
                    "loop {id} is already on top of {} ({})",
                    shown(&onto.name),
                    &onto.commit.to_string()[..12]
                ))?;
                return Ok(0);
            }
            Ok(Rebased::Moved { old, new }) => {
                writeln!(
                    ui.out(),
                    "rebased {} onto {} ({}): {} -> {}",
                    rec.branch,
                    shown(&onto.name),
                    &onto.commit.to_string()[..12],
                    &old.to_string()[..12],
                    &new.to_string()[..12]
                )?;
                ui.status(format!("review it: git loop review {id}"))?;
                return Ok(0);
            }
            Err(e) if args.agent && rebase::in_progress(&ws, &id) => {
                ui.status(e.one_line())?;
            }
            Err(e) => return Err(e),
        }
    }
    // The conflicts go to the agent: where the rebase goes is what the stopped rebase
    // says (an earlier `rebase --onto`), else what was asked.
    let onto_commit = rebase::in_progress_onto(&ws, &rec).unwrap_or(onto.commit);
    let onto_name = if onto_commit == onto.commit {
        onto.name.clone()
    } else {
        onto_commit.to_string()
    };
    let files = rebase::conflicted(&id)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    let check = config.profile().check.clone();
    let (ours, theirs) = rebase::intents(&ws, &rec, onto_commit, 50)?;
    let onto_hex = onto_commit.to_string();
    let text = task::resolve_conflicts(
        &rec,
        &task::Conflict {
            onto: &onto_hex,
            onto_name: &onto_name,
            files: &files,
            ours: &ours,
            theirs: &theirs,
            check: check.as_deref(),
        },
    );
    task::write_task(&ws, &id, &text)?;
    ui.status(format!(
        "giving the conflicts to the agent: {}",
        files
            .iter()
            .map(|f| shown(f).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    let command = &config.settings().agent.command;
    let profile = crate::agent::Profile::of(command);
    let req = super::SandboxFlags::default().request(Vec::new(), true, false);
    let code = crate::agent::run(
        ui,
        &ws,
        &rec,
        &config,
        req,
        task::task_args(profile, command, &id, &text),
    )?;
    if rebase::in_progress(&ws, &id) {
        return Err(RebaseError::Unfinished {
            id,
            what: "the agent",
        }
        .into());
    }
    let new = rebase::finish(&ws, &rec, onto_commit)?;
    writeln!(
        ui.out(),
        "rebased {} onto {} ({}): now {}",
        rec.branch,
        shown(&onto_name),
        &onto_hex[..12],
        &new.to_string()[..12]
    )?;
    if code != 0 {
        ui.warn(format!("the agent exited with {code}"))?;
    }
    let Some(check) = check else {
        ui.warn("the sandbox profile names no check: nothing was run to judge the result")?;
        ui.status(format!("review it: git loop review {id}"))?;
        return Ok(0);
    };
    let checked = task::run_check(&id, &check)?;
    if checked.passed {
        ui.status(format!(
            "check `{}` passed",
            shown(&task::command_text(&check))
        ))?;
        ui.status(format!("review it: git loop review {id}"))?;
        Ok(0)
    } else {
        for line in checked.tail.lines() {
            ui.warn(format!("  {}", shown(line)))?;
        }
        Err(crate::Error::failure(format!(
            "the rebase is done, but the check `{}` fails (exit {})",
            shown(&task::command_text(&check)),
            checked.code.map_or("none".to_string(), |c| c.to_string())
        ))
        .hint(format!("see what the agent did: git loop review {id}"))
        .hint(format!(
            "fix it in git loop shell {id}, or with git loop agent {id}"
        )))
    }
}
