//! git's lock files in the repositories git-loop manages, judged by who can own them, never
//! by their age: a lock file is stale when every command that could hold it is provably not
//! running, which the flocks under `locks/` tell.
//!
//! | lock file | who can hold it |
//! | --- | --- |
//! | `refs/heads/loop/<id>.lock`, in any origin | `new` (`new-<id>.lock`), an import (`import-<id>.lock`), `rm`/`gc` (`run-<id>.lock`) of that loop |
//! | `packed-refs.lock` in notes or knowledge | the workspace lock's holder, or an import |
//! | anything else in notes or knowledge (`index.lock`, `HEAD.lock`, `refs/heads/main.lock`, a checkout's marker) | the workspace lock's holder |
//! | git-loop's checkout marker or scratch index in the user's repository | the workspace lock's holder |
//! | anything else in the user's repository | the user's own git, maybe: stale only if written before the machine last booted |
//!
//! The loops' own repositories are judged by their run lock (`loops::stale_git_locks`).

use std::path::{Path, PathBuf};

use crate::fsutil::Lock;
use crate::loops;
use crate::workspace::Workspace;

/// The id `loop/<id>` of a branch lock file `<git_dir>/refs/heads/loop/<id>.lock`.
fn loop_ref_id(git_dir: &Path, lock: &Path) -> Option<String> {
    let rel = lock.strip_prefix(git_dir).ok()?.to_str()?;
    let id = rel
        .strip_prefix("refs/heads/loop/")?
        .strip_suffix(".lock")?;
    loops::is_id_like(id).then(|| id.to_string())
}

fn free(path: &Path) -> bool {
    matches!(Lock::try_acquire(path), Ok(Some(_)))
}

/// Is no command of loop `id` that writes its branches alive?
fn loop_writers_gone(ws: &Workspace, id: &str) -> bool {
    free(&ws.new_lock(id)) && free(&ws.loop_import_lock(id)) && free(&ws.loop_run_lock(id))
}

/// Is no import of any loop alive?
fn no_import_alive(ws: &Workspace) -> bool {
    let Ok(entries) = std::fs::read_dir(ws.locks_dir()) else {
        return true;
    };
    entries.flatten().all(|e| {
        let name = e.file_name();
        let is_import = name
            .to_str()
            .is_some_and(|n| n.starts_with("import-") && n.ends_with(".lock"));
        !is_import || free(&e.path())
    })
}

/// git's lock files in `git_dir`, and git-loop's own scratch files of a checkout update
/// (the scratch index, a marker being written), which have the same owner.
fn lock_and_scratch_files(git_dir: &Path) -> Vec<PathBuf> {
    let mut files = loops::git_lock_files(git_dir);
    for entry in std::fs::read_dir(git_dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if crate::checkout::is_scratch(&path) && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

/// The lock files of the workspace repository at `git_dir` (notes, knowledge) that no live
/// command can own, with why, for a caller that holds the workspace lock. `keep`: lock
/// files not to judge (the markers of checkout updates still to be recovered).
pub fn stale_in_workspace_repo(
    ws: &Workspace,
    git_dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for lock in lock_and_scratch_files(git_dir) {
        if keep(&lock) {
            continue;
        }
        let why = if let Some(id) = loop_ref_id(git_dir, &lock) {
            if !loop_writers_gone(ws, &id) {
                continue;
            }
            "no git-loop command of that loop is running"
        } else if lock == git_dir.join("packed-refs.lock") {
            if !no_import_alive(ws) {
                continue;
            }
            "no git-loop command holds the workspace, and no import runs"
        } else {
            "no git-loop command holds the workspace"
        };
        out.push((lock, why));
    }
    out
}

/// Removes [`stale_in_workspace_repo`]'s findings; says what was removed.
pub fn remove_stale_in_workspace_repo(ws: &Workspace, git_dir: &Path) -> Vec<String> {
    stale_in_workspace_repo(ws, git_dir, &|_| false)
        .into_iter()
        .filter(|(lock, _)| std::fs::remove_file(lock).is_ok())
        .map(|(lock, why)| {
            format!(
                "removed the stale {} (left by a killed command; {why})",
                lock.display()
            )
        })
        .collect()
}

/// How a lock file of the user's repository is judged.
pub enum UserLock {
    /// git-loop's own, and its owner is gone.
    Stale(PathBuf, &'static str),
    /// git-loop's own, and its owner may be alive.
    Busy(PathBuf),
    /// Not git-loop's: maybe the user's own git at work.
    Foreign(PathBuf),
}

/// The lock files of the user's repository at `git_dir`. `workspace_held`: the caller holds
/// the workspace lock, so no checkout update of git-loop's is running.
pub fn judge_user_repo(
    ws: &Workspace,
    git_dir: &Path,
    workspace_held: bool,
    keep: &dyn Fn(&Path) -> bool,
) -> Vec<UserLock> {
    let mut out = Vec::new();
    for lock in lock_and_scratch_files(git_dir) {
        if keep(&lock) {
            continue;
        }
        if let Some(id) = loop_ref_id(git_dir, &lock) {
            out.push(if loop_writers_gone(ws, &id) {
                UserLock::Stale(
                    lock,
                    "a branch of git-loop's, and no git-loop command of that loop is running",
                )
            } else {
                UserLock::Busy(lock)
            });
        } else if crate::checkout::is_marker(&lock) || crate::checkout::is_scratch(&lock) {
            out.push(if workspace_held {
                UserLock::Stale(
                    lock,
                    "git-loop's own, and no git-loop command holds the workspace",
                )
            } else {
                UserLock::Busy(lock)
            });
        } else if written_before_boot(&lock) {
            out.push(UserLock::Stale(
                lock,
                "written before the machine last booted: no process holds it",
            ));
        } else {
            out.push(UserLock::Foreign(lock));
        }
    }
    out
}

/// Was `path` last written before the machine booted (`btime` of /proc/stat)? No process
/// that could hold it survived the reboot.
fn written_before_boot(path: &Path) -> bool {
    let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|s| s.trim().parse::<u64>().ok())
    });
    let written = std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    matches!((boot, written), (Some(boot), Some(w)) if w.as_secs() < boot)
}
