//! What killed commands left: folders of an interrupted `new` or `rm`, journals of
//! checkout updates, the state of the context repositories' checkouts.

use std::path::Path;

use crate::error::Result;
use crate::fsutil::{self, Lock};
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

/// What a killed `new` or `rm` left, judged by its owner's lock (a `new` holds its id's
/// lock from before its staging folder exists; an `rm` holds the loop's run lock), never
/// by age: a live one's is left alone.
pub(super) fn check_leftovers(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) -> Result<()> {
    if fix {
        for rolled in crate::create::roll_back_interrupted(ws)? {
            let what = if rolled.removed.is_empty() {
                "cleared its journal (the loop had been made)".to_string()
            } else {
                rolled.removed.join(", ")
            };
            out.push(finding(
                "leftovers",
                Level::Fixed,
                format!(
                    "rolled back the interrupted `git loop new` of {}: {what}",
                    rolled.id
                ),
                None,
            ));
        }
        for removed in crate::removal::finish(ws)? {
            let mut message = format!(
                "finished removing loop {} (an interrupted `git loop rm`)",
                removed.id
            );
            for b in &removed.branches {
                message.push_str(&format!("; {b}"));
            }
            out.push(finding("leftovers", Level::Fixed, message, None));
        }
        for temp in fsutil::sweep_dead_temp_files(&ws.locks_dir()) {
            out.push(finding(
                "leftovers",
                Level::Fixed,
                format!(
                    "removed {} (a killed command's unfinished write)",
                    temp.display()
                ),
                None,
            ));
        }
    }
    for (id, live) in crate::create::interrupted(ws) {
        out.push(if live {
            finding(
                "leftovers",
                Level::Info,
                format!("a `git loop new` of {id} is in progress"),
                None,
            )
        } else {
            finding(
                "leftovers",
                Level::Problem,
                format!(
                    "{} was left by an interrupted `git loop new` (with the branches it created)",
                    ws.loop_staging_dir(&id).display()
                ),
                Some("git loop doctor --fix (or the next `git loop new`)".into()),
            )
        });
    }
    for (id, live) in crate::removal::unfinished(ws) {
        out.push(if live {
            finding(
                "leftovers",
                Level::Info,
                format!("a `git loop rm` of {id} is in progress"),
                None,
            )
        } else {
            finding(
                "leftovers",
                Level::Problem,
                format!(
                    "the removal of loop {id} was interrupted ({} is left)",
                    ws.loop_removal_dir(&id).display()
                ),
                Some(format!("git loop doctor --fix (or `git loop rm {id}`)")),
            )
        });
    }
    for temp in fsutil::dead_temp_files(&ws.locks_dir()) {
        out.push(finding(
            "leftovers",
            Level::Problem,
            format!("{} is a killed command's unfinished write", temp.display()),
            Some("git loop doctor --fix".into()),
        ));
    }
    Ok(())
}

/// Leftovers of a `publish`, `merge` or `autocommit` that was killed: journals of checkout
/// updates under `locks/`, finished or undone with `--fix`, each result checked before its
/// journal goes; and the workspace's own trunk checkouts, compared with their trunk.
pub(super) fn check_interrupted(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    // Only while no git-loop command runs: a journal of a live command is not a leftover.
    let Ok(Some(_lock)) = Lock::try_acquire(&ws.workspace_lock()) else {
        if !crate::checkout::journals(&ws.locks_dir()).is_empty() {
            out.push(finding(
                "interrupted",
                Level::Info,
                format!(
                    "{} is held by a running git loop command; the checkout updates noted in {} were not judged",
                    ws.workspace_lock().display(),
                    ws.locks_dir().display()
                ),
                None,
            ));
        }
        return;
    };
    for path in crate::checkout::journals(&ws.locks_dir()) {
        if !fix {
            out.push(finding(
                "interrupted",
                Level::Problem,
                format!(
                    "a publish or merge was interrupted before its checkout was brought along ({})",
                    path.display()
                ),
                Some("git loop doctor --fix (or run the same publish or merge again)".into()),
            ));
            continue;
        }
        let mut notices = Vec::new();
        let result = crate::checkout::recover(&path, &mut notices);
        for n in notices {
            out.push(finding("interrupted", Level::Fixed, n, None));
        }
        match result {
            Ok(Some(done)) => {
                out.push(finding("interrupted", Level::Fixed, done.to_string(), None))
            }
            Ok(None) => {}
            Err(e) => {
                let fix = match &e {
                    crate::checkout::CheckoutError::Locked { path: lock, repo } => format!(
                        "if no git command is running in {}, remove it: `rm {}`; then `git loop doctor --fix`",
                        repo.display(),
                        lock.display()
                    ),
                    crate::checkout::CheckoutError::Unproven { worktree, journal, lock, .. } => format!(
                        "look at `git status` in {}; once it is as it should be, `rm {}`{}",
                        worktree.display(),
                        journal.display(),
                        if lock.exists() { format!(" and `rm {}`", lock.display()) } else { String::new() }
                    ),
                    _ => "look at `git status` in that checkout".into(),
                };
                out.push(finding(
                    "interrupted",
                    Level::Problem,
                    format!(
                        "cannot finish the checkout update noted in {}: {e}",
                        path.display()
                    ),
                    Some(fix),
                ));
            }
        }
    }
    // Legacy: an autocommit of an earlier version noted itself here.
    if let Ok(entries) = std::fs::read_dir(ws.locks_dir()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name
                .strip_prefix("autocommit-")
                .and_then(|r| r.strip_suffix(".pending"))
            else {
                continue;
            };
            if fix {
                let _ = std::fs::remove_file(entry.path());
                out.push(finding(
                    "interrupted",
                    Level::Fixed,
                    format!("cleared the interrupted autocommit {rest}"),
                    None,
                ));
            } else {
                out.push(finding(
                    "interrupted",
                    Level::Problem,
                    format!("an autocommit was interrupted ({})", entry.path().display()),
                    Some("git loop doctor --fix (or run `git loop autocommit` again)".into()),
                ));
            }
        }
    }
    let pending = crate::checkout::pending_indexes(&ws.locks_dir());
    for (role, dir) in [("notes", ws.notes()), ("knowledge", ws.knowledge())] {
        if !dir.join(".git").is_dir() || pending.iter().any(|i| i.starts_with(&dir)) {
            continue;
        }
        check_checkout(role, &dir, fix, out);
    }
}

/// A trunk checkout of the workspace compared with its trunk, through gix, changing
/// nothing: an index that alone is stale is rebuilt with `--fix` (every file already holds
/// trunk's content); files that differ are someone's edits, reported and never discarded.
pub(super) fn check_checkout(role: &str, dir: &Path, fix: bool, out: &mut Vec<Finding>) {
    let shown = |paths: &[String]| {
        let mut s = paths.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        if paths.len() > 5 {
            s.push_str(&format!(" and {} more", paths.len() - 5));
        }
        s
    };
    match crate::checkout::compare_with_head(dir) {
        Err(e) => out.push(finding(
            "checkouts",
            Level::Problem,
            format!("cannot compare the {role} checkout {} with its trunk: {e}", dir.display()),
            Some("`git loop doctor` again once the error above is gone".into()),
        )),
        Ok(cmp) if !cmp.edited.is_empty() => out.push(finding(
            "checkouts",
            Level::Problem,
            format!(
                "the {role} checkout {} has files that differ from its trunk (edits made there by hand?): {}",
                dir.display(),
                shown(&cmp.edited)
            ),
            Some(format!(
                "make such edits in a loop; to drop them: `git -C {} checkout -- PATH` (doctor never discards them)",
                dir.display()
            )),
        )),
        Ok(cmp) if !cmp.staged.is_empty() => {
            if fix {
                match crate::checkout::rebuild_stale_index(dir) {
                    Ok(()) => out.push(finding(
                        "checkouts",
                        Level::Fixed,
                        format!("rebuilt the stale index of the {role} checkout {} from its trunk (every file already held trunk's content)", dir.display()),
                        None,
                    )),
                    Err(e) => out.push(finding(
                        "checkouts",
                        Level::Problem,
                        format!("cannot rebuild the index of the {role} checkout {}: {e}", dir.display()),
                        Some(format!("look at `git -C {} status`", dir.display())),
                    )),
                }
            } else {
                out.push(finding(
                    "checkouts",
                    Level::Problem,
                    format!(
                        "the index of the {role} checkout {} is stale (it differs from trunk at {}; the files themselves are trunk's)",
                        dir.display(),
                        shown(&cmp.staged)
                    ),
                    Some("git loop doctor --fix rebuilds it (no file is changed)".into()),
                ));
            }
        }
        Ok(_) => {}
    }
}
