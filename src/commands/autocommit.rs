use crate::autocommit;
use crate::error::{Error, Result};
use crate::loops;
use crate::ui::Ui;

/// Commit every dirty repository of the named loops (inside each loop's sandbox) and the
/// personal repository.
///
/// A repository in the middle of a merge or rebase, or with a live index.lock, is skipped
/// and reported. Files the secret guard rejects are never committed, and neither are new
/// untracked files larger than autocommit.max_file_size nor the new files of a folder with
/// more than autocommit.max_new_files_per_folder of them (an unignored node_modules/):
/// each is named in a notice. Holds the workspace lock; imports afterwards.
#[derive(Debug, clap::Args)]
pub struct AutocommitArgs {
    /// Loops to commit (ids or unique prefixes).
    #[arg(conflicts_with = "all")]
    pub ids: Vec<String>,
    /// Every loop.
    #[arg(long)]
    pub all: bool,
    /// Then publish the notes branches that merge cleanly.
    #[arg(long)]
    pub publish_notes: bool,
    /// Say what would be committed and what would be left out; commit nothing.
    #[arg(long, conflicts_with = "publish_notes")]
    pub dry_run: bool,
}

pub fn run(ui: &mut Ui, args: AutocommitArgs) -> Result<u8> {
    let ws = super::workspace()?;
    if !args.all && args.ids.is_empty() {
        return Err(
            Error::usage("name the loops to commit, or --all").hint("git loop autocommit --all")
        );
    }
    let ids = if args.all {
        ws.loop_ids()?
    } else {
        args.ids
            .iter()
            .map(|q| loops::resolve(&ws, q))
            .collect::<Result<Vec<_>>>()?
    };
    let publish = if args.publish_notes {
        Some((
            super::union_patterns(ui, &ws)?,
            super::operator_guard_allowlist()?,
        ))
    } else {
        None
    };
    let config = super::load_config(ui, &ws, None)?;
    let opts = autocommit::Options {
        bounds: autocommit::Bounds::of(config.settings()),
        dry_run: args.dry_run,
    };
    let round = autocommit::round(
        ui,
        &ws,
        &ids,
        &opts,
        publish
            .as_ref()
            .map(|(union, allow)| (union.as_slice(), allow)),
    )?;
    let (failures, personal_failed) = (round.failed_loops, round.personal_failed);
    if failures > 0 || personal_failed {
        // Never a quiet success: cron's log keeps this line, and the exit status tells.
        let loops = match failures {
            0 => String::new(),
            1 => "1 loop".to_string(),
            n => format!("{n} loops"),
        };
        let what = match (loops.is_empty(), personal_failed) {
            (false, true) => format!("{loops} and the personal repository"),
            (true, _) => "the personal repository".to_string(),
            (false, false) => loops,
        };
        // Only what happened: how many other repositories were committed, if any.
        let others = match round.committed {
            0 => "nothing else was committed".to_string(),
            1 => "1 other repository was committed".to_string(),
            n => format!("{n} other repositories were committed"),
        };
        return Err(Error::failure(format!("{what} could not be committed"))
            .hint(format!("the warnings above say why for each; {others}")));
    }
    if args.dry_run && round.committed == 0 {
        ui.status("nothing would be committed")?;
    }
    Ok(0)
}
