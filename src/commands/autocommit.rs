use crate::autocommit;
use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::loops;
use crate::ui::Ui;

/// Commit every dirty repository of the named loops (inside each loop's sandbox) and the
/// personal repository.
///
/// A repository in the middle of a merge or rebase, or with a live index.lock, is skipped
/// and reported. Files the secret guard rejects are never committed. Holds the workspace
/// lock; imports afterwards.
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
    crate::vault::migrate_and_say(ui, &ws)?;
    // Two autocommits never interleave; the workspace lock is not held while what loops
    // wrote is read and committed (a loop that makes git wait must not stop every publish),
    // only around publishing. A loop being removed meanwhile is safe: `rm` refuses a loop
    // with a live run, and each commit here is a run.
    let _lock = Lock::acquire(&ws.autocommit_lock())?;
    let mut failures = 0;
    for id in &ids {
        let rec = match loops::load(&ws, id) {
            Ok(r) => r,
            Err(e) => {
                ui.warn(format!("{id}: skipped: {}", e.one_line()))?;
                continue;
            }
        };
        if let Err(e) = autocommit::commit_loop(ui, &ws, &rec) {
            failures += 1;
            ui.warn(format!("{id}: {}", e.one_line()))?;
        }
    }
    let mut personal_failed = false;
    if let Err(e) = autocommit::commit_personal(ui, &ws) {
        personal_failed = true;
        ui.warn(format!("personal: {}", e.one_line()))?;
        for h in &e.hints {
            writeln!(ui.err(), "hint: {h}")?;
        }
    }
    if args.publish_notes {
        let union = super::union_patterns(ui, &ws)?;
        let allow = super::operator_guard_allowlist()?;
        let _lock = Lock::acquire(&ws.workspace_lock())?;
        for id in &ids {
            let Ok(rec) = loops::load(&ws, id) else {
                continue;
            };
            match crate::publish::gated::publish_one(
                &ws,
                &ws.notes(),
                &rec,
                "notes",
                &union,
                None,
                false,
                &allow,
            ) {
                Ok((trunk, merged)) => {
                    for notice in &merged.notices {
                        ui.status(notice)?;
                    }
                    if merged.outcome != crate::publish::Outcome::UpToDate {
                        let line = crate::publish::gated::outcome_line(
                            &format!("{id} notes"),
                            &trunk,
                            &merged.outcome,
                            false,
                        );
                        writeln!(ui.out(), "{line}")?;
                    }
                }
                Err(e) => ui.warn(format!("{id}: notes not published: {}", e.one_line()))?,
            }
        }
    }
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
        return Err(Error::failure(format!("{what} could not be committed"))
            .hint("the warnings above say why for each; the rest was committed"));
    }
    Ok(0)
}
