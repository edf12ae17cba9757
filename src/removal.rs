//! Removing a loop (`rm`, `gc`) so that a kill at any moment leaves nothing half-removed.
//!
//! The loop folder is first renamed to its removal name (`loops/.rm-<id>`), one atomic
//! step: from then on the loop is gone from every listing, and nothing of it can be taken
//! for a live loop. Then the folder is deleted, and last the branches, when asked, each only
//! if it still points where it pointed when read. The branches to delete are written to a
//! journal before the rename. The remover holds the loop's run lock throughout, so whoever
//! takes that lock and still finds a removal folder or journal knows its remover is dead:
//! the next `rm`, `new`, `list` or `doctor --fix` finishes the removal ([`finish`]).

use std::fs;
use std::path::PathBuf;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::failpoint;
use crate::fsutil::{self, Lock};
use crate::git::objects;
use crate::loops::LoopRecord;
use crate::workspace::Workspace;

/// A branch an `rm --delete-branches` deletes.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Doomed {
    origin: PathBuf,
    branch: String,
    tip: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    id: String,
    branches: Vec<Doomed>,
}

/// What a removal did, to be said.
pub struct Removed {
    pub id: String,
    /// `deleted loop/<id> in <origin> (was <tip>)`, one per branch.
    pub branches: Vec<String>,
}

/// Why a loop could not be removed, or its removal finished.
#[derive(Debug, thiserror::Error)]
pub enum RemovalError {
    /// Its folder could not be moved aside: nothing was removed.
    #[error("cannot remove {}", .0.display())]
    NotRemoved(std::path::PathBuf, #[source] std::io::Error),
    /// The journal of loop `id`'s removal (`path`) cannot be read.
    /// A run, shell, agent or autocommit of loop `.0` is live.
    #[error("loop {0} is running (a run, shell, agent or autocommit of it is live)")]
    Running(String),
    #[error("{} is not a removal journal", path.display())]
    Journal {
        path: std::path::PathBuf,
        id: String,
        #[source]
        source: serde_json::Error,
    },
}

/// The loop's run lock, held exclusively: a loop with a live run is not removed.
pub fn hold(ws: &Workspace, id: &str) -> Result<Lock> {
    Ok(Lock::try_acquire(&ws.loop_run_lock(id))?
        .ok_or_else(|| RemovalError::Running(id.to_string()))?)
}

/// [`remove`], and says so: the loop, then each branch line.
pub fn remove_and_say(
    report: &mut dyn crate::report::Report,
    ws: &Workspace,
    id: &str,
    rec: Option<&LoopRecord>,
    delete_branches: bool,
) -> Result<()> {
    let removed = remove(ws, id, rec, delete_branches)?;
    report.status(&format!("removed loop {id}"))?;
    for line in removed.branches {
        report.status(&line)?;
    }
    Ok(())
}

/// Removes loop `id` (its run lock held by the caller, exclusively): the folder renamed to
/// its removal name, deleted, then the loop's branches in the origins if asked.
pub fn remove(
    ws: &Workspace,
    id: &str,
    rec: Option<&LoopRecord>,
    delete_branches: bool,
) -> Result<Removed> {
    if delete_branches {
        let branch = LoopRecord::branch_name(id);
        let mut origins = vec![ws.notes(), ws.knowledge()];
        if let Some(name) = rec.and_then(|r| r.repo.as_ref()) {
            origins.insert(0, ws.repo_link(name));
        }
        let mut branches = Vec::new();
        for origin in origins {
            let Ok(repo) = objects::open_trusted(&origin) else {
                continue;
            };
            if let Ok(Some(tip)) = objects::resolve_branch(&repo, &branch) {
                branches.push(Doomed {
                    origin,
                    branch: branch.clone(),
                    tip: tip.to_string(),
                });
            }
        }
        let journal = Journal {
            id: id.to_string(),
            branches,
        };
        let text = serde_json::to_vec_pretty(&journal).unwrap_or_default();
        fsutil::write_atomic(&ws.removal_journal(id), &text)?;
        failpoint::hit("rm:journal-written");
    }
    let dir = ws.loop_dir(id);
    let doomed = ws.loop_removal_dir(id);
    // A removal folder of this id can only be a finished loop's leftover.
    fsutil::remove_tree(&doomed).map_err(|e| {
        Error::failure(format!("cannot remove {}", doomed.display())).with_source(e)
    })?;
    fs::rename(&dir, &doomed).map_err(|e| {
        let _ = fs::remove_file(ws.removal_journal(id));
        RemovalError::NotRemoved(dir.clone(), e)
    })?;
    failpoint::hit("rm:renamed");
    finish_one(ws, id)
}

/// Deletes the removal folder of `id`, then the branches its journal names, then the
/// journal.
fn finish_one(ws: &Workspace, id: &str) -> Result<Removed> {
    let doomed = ws.loop_removal_dir(id);
    fsutil::remove_tree(&doomed).map_err(|e| {
        Error::failure(format!("cannot remove {}", doomed.display())).with_source(e)
    })?;
    failpoint::hit("rm:deleted");
    // Its kept plan (`sandbox::cache`): stale without the loop, and a new loop of the
    // same id would not use it anyway (its inputs' stamps differ).
    let _ = fs::remove_file(ws.loop_plan(id));
    let _ = fs::remove_file(ws.loop_lock_walk(id));
    let _ = fs::remove_file(ws.loop_gitlinks(id));
    let mut said = Vec::new();
    let journal_path = ws.removal_journal(id);
    if let Ok(text) = fs::read(&journal_path) {
        // Branches are deleted under the workspace lock: a packed-refs lock that a deletion
        // takes then has the same owner as every other lock of the workspace's origins.
        let _workspace = Lock::acquire(&ws.workspace_lock())?;
        let journal: Journal =
            serde_json::from_slice(&text).map_err(|source| RemovalError::Journal {
                path: journal_path.clone(),
                id: id.to_string(),
                source,
            })?;
        for doomed in &journal.branches {
            let Ok(tip) = ObjectId::from_hex(doomed.tip.as_bytes()) else {
                continue;
            };
            let repo = objects::open_trusted(&doomed.origin).map_err(|e| {
                Error::failure(format!("cannot read {}", doomed.origin.display())).with_source(e)
            })?;
            // Deleted only where it still is what was read: an import since is never lost.
            if objects::resolve_branch(&repo, &doomed.branch)
                .ok()
                .flatten()
                == Some(tip)
            {
                objects::delete_branch(&repo, &doomed.branch, tip).map_err(|e| {
                    Error::failure(format!(
                        "cannot delete {} in {}",
                        doomed.branch,
                        doomed.origin.display()
                    ))
                    .with_source(e)
                })?;
                said.push(format!(
                    "deleted {} in {} (was {tip})",
                    doomed.branch,
                    doomed.origin.display()
                ));
            }
            failpoint::hit("rm:branch-deleted");
        }
        fs::remove_file(&journal_path).map_err(|e| {
            Error::failure(format!("cannot remove {}", journal_path.display())).with_source(e)
        })?;
    }
    let _ = fs::remove_file(ws.loop_run_lock(id));
    // The loop's import lock goes with it (one was left for every loop ever made), taken
    // first so that no import of it is between its open and its lock.
    let import = ws.loop_import_lock(id);
    if import.exists() {
        if let Ok(Some(_held)) = Lock::try_acquire(&import) {
            let _ = fs::remove_file(&import);
        }
    }
    Ok(Removed {
        id: id.to_string(),
        branches: said,
    })
}

/// Removals a killed `rm` left (a removal folder, or a journal of branches still to
/// delete), whose remover is provably dead (the loop's run lock is free): finished.
/// Removals in progress are left to their remover.
pub fn finish(ws: &Workspace) -> Result<Vec<Removed>> {
    let mut ids: Vec<String> = ws
        .removal_leftovers()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.extend(pending_journals(ws));
    ids.sort();
    ids.dedup();
    let mut done = Vec::new();
    for id in ids {
        let Some(_hold) = Lock::try_acquire(&ws.loop_run_lock(&id))? else {
            continue;
        };
        if ws.loop_dir(&id).exists() && !ws.loop_removal_dir(&id).exists() {
            // Killed before the rename: the loop is whole and nothing was removed.
            let _ = fs::remove_file(ws.removal_journal(&id));
            continue;
        }
        done.push(finish_one(ws, &id)?);
    }
    Ok(done)
}

/// Loop ids with an `rm-<id>.pending` journal under `locks/`.
fn pending_journals(ws: &Workspace) -> Vec<String> {
    let Ok(entries) = fs::read_dir(ws.locks_dir()) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let id = name
                .to_str()?
                .strip_prefix("rm-")?
                .strip_suffix(".pending")?;
            crate::loops::is_id_like(id).then(|| id.to_string())
        })
        .collect()
}

/// Removals in progress or left by a killed `rm` (for `doctor`): the ids, and whether a
/// live `rm` still holds each.
pub fn unfinished(ws: &Workspace) -> Vec<(String, bool)> {
    let mut ids: Vec<String> = ws
        .removal_leftovers()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.extend(pending_journals(ws));
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let live = matches!(Lock::try_acquire(&ws.loop_run_lock(&id)), Ok(None));
            (id, live)
        })
        .collect()
}
