//! git's lock files, judged by who can own them, never by their age.

use std::path::Path;

use crate::fsutil::Lock;
use crate::loops;
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

/// git's lock files, judged by who can own them, never by their age.
///
/// - notes and knowledge: only git-loop runs git there, holding the workspace lock; with
///   that lock held here, a lock file is a killed command's;
/// - the personal repository: only autocommit commits there, holding its own lock;
/// - the user's registered repositories: a lock file may be the user's own git at work,
///   so it is named, never removed, unless it is git-loop's own (the marker of a checkout
///   update, or its scratch index) and no git-loop command holds the workspace.
pub(super) fn check_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let workspace = match Lock::try_acquire(&ws.workspace_lock()) {
        Ok(Some(hold)) => Some(hold),
        _ => {
            out.push(finding(
                "locks",
                Level::Info,
                format!(
                    "{} is held by a running git loop command; the lock files it owns were not judged",
                    ws.workspace_lock().display()
                ),
                None,
            ));
            None
        }
    };
    // Checkout updates still noted in a journal keep their marker: it keeps git off a
    // working tree that is not proven.
    let pending = crate::checkout::pending_indexes(&ws.locks_dir());
    let keeps = |lock: &Path| pending.iter().any(|index| index.parent() == lock.parent());
    if workspace.is_some() {
        for dir in [ws.notes(), ws.knowledge()] {
            for (lock, why) in
                crate::gitlocks::stale_in_workspace_repo(ws, &dir.join(".git"), &keeps)
            {
                stale_lock(out, fix, &lock, why);
            }
        }
    }
    if let Ok(Some(_autocommit)) = Lock::try_acquire(&ws.autocommit_lock()) {
        for lock in crate::loops::git_lock_files(&ws.personal().join(".git")) {
            stale_lock(out, fix, &lock, "no autocommit is running");
        }
    }
    for name in ws.repo_names().unwrap_or_default() {
        // Named by its real path: the user knows the repository, not the workspace's link.
        let top =
            std::fs::canonicalize(ws.repo_link(&name)).unwrap_or_else(|_| ws.repo_link(&name));
        let git_dir = top.join(".git");
        if !git_dir.is_dir() {
            continue;
        }
        for judged in crate::gitlocks::judge_user_repo(ws, &git_dir, workspace.is_some(), &keeps) {
            use crate::gitlocks::UserLock;
            match judged {
                UserLock::Stale(lock, why) => stale_lock(out, fix, &lock, why),
                UserLock::Busy(_) => {}
                UserLock::Foreign(lock) => out.push(finding(
                    "locks",
                    Level::Problem,
                    format!(
                        "git lock file {} in your repository {name}: a git command is running there, or one was killed",
                        lock.display()
                    ),
                    Some(format!(
                        "if no git command is running in {}, remove it: `rm {}` (doctor --fix leaves it: it may be your git's)",
                        top.display(),
                        lock.display()
                    )),
                )),
            }
        }
    }
}

pub(super) fn stale_lock(out: &mut Vec<Finding>, fix: bool, lock: &Path, why: &str) {
    if fix {
        match std::fs::remove_file(lock) {
            Ok(()) => out.push(finding(
                "locks",
                Level::Fixed,
                format!("removed stale {} ({why})", lock.display()),
                None,
            )),
            Err(e) => out.push(finding(
                "locks",
                Level::Problem,
                format!("cannot remove stale {}: {e}", lock.display()),
                Some(format!("`rm {}`", lock.display())),
            )),
        }
    } else {
        out.push(finding(
            "locks",
            Level::Problem,
            format!("stale git lock file {} ({why})", lock.display()),
            Some(format!(
                "`git loop doctor --fix`, or `rm {}`",
                lock.display()
            )),
        ));
    }
}

/// git-loop's own lock files under `locks/` of loops that are gone (`import-<id>.lock`,
/// `run-<id>.lock`, `new-<id>.lock`): harmless, but one was left for every loop ever made.
/// One is removed only while it is free and no `new` or `rm` of its loop is noted as under
/// way; they are said as one finding.
pub(super) fn check_orphan_lock_files(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let Ok(entries) = std::fs::read_dir(ws.locks_dir()) else {
        return;
    };
    let mut orphans = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = ["import-", "run-", "new-"]
            .iter()
            .find_map(|p| name.strip_prefix(p))
            .and_then(|rest| rest.strip_suffix(".lock"))
        else {
            continue;
        };
        let gone = !ws.loop_dir(id).exists()
            && !ws.loop_staging_dir(id).exists()
            && !ws.new_journal(id).exists()
            && !ws.removal_journal(id).exists();
        if gone && entry.file_type().is_ok_and(|t| t.is_file()) {
            orphans.push(entry.path());
        }
    }
    if orphans.is_empty() {
        return;
    }
    orphans.sort();
    if !fix {
        out.push(finding(
            "locks",
            Level::Info,
            format!(
                "{} lock file{} of loops that are gone in {}",
                orphans.len(),
                if orphans.len() == 1 { "" } else { "s" },
                ws.locks_dir().display()
            ),
            Some("`git loop doctor --fix` removes them".into()),
        ));
        return;
    }
    let mut removed = 0;
    for lock in &orphans {
        if let Ok(Some(_held)) = Lock::try_acquire(lock) {
            removed += usize::from(std::fs::remove_file(lock).is_ok());
        }
    }
    out.push(finding(
        "locks",
        Level::Fixed,
        format!(
            "removed {removed} lock file{} of loops that are gone from {}",
            if removed == 1 { "" } else { "s" },
            ws.locks_dir().display()
        ),
        None,
    ));
}

/// git's lock files in the loops' own repositories, judged by their owner: while no run
/// of a loop is alive (its run lock is free), no git can hold them, whatever their age.
pub(super) fn check_loop_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    for id in ws.loop_ids().unwrap_or_default() {
        let Ok(rec) = loops::load(ws, &id) else {
            continue;
        };
        let Ok(Some(stale)) = loops::stale_git_locks(ws, &rec) else {
            continue;
        };
        // Runs that started and whose end nobody recorded (no run of the loop is alive).
        let unended = crate::sandbox::record::unended(ws, &id).len();
        if unended > 0 {
            let runs = if unended == 1 { "run" } else { "runs" };
            out.push(if fix {
                crate::sandbox::record::settle_held(ws, &id, stale.hold());
                finding(
                    "locks",
                    Level::Fixed,
                    format!("recorded {unended} {runs} of loop {id} as ended, cause unknown (killed with nobody to record their exit)"),
                    None,
                )
            } else {
                finding(
                    "locks",
                    Level::Problem,
                    format!("{unended} {runs} of loop {id} started and no exit is recorded (no run of the loop is alive)"),
                    Some("git loop doctor --fix".into()),
                )
            });
        }
        let failed = if fix { stale.remove() } else { Vec::new() };
        for lock in &stale.files {
            match failed.iter().find(|(p, _)| p == lock) {
                None if fix => out.push(finding(
                    "locks",
                    Level::Fixed,
                    format!("removed stale {} (no run of loop {id} is alive)", lock.display()),
                    None,
                )),
                found => out.push(finding(
                    "locks",
                    Level::Problem,
                    match found {
                        Some((_, e)) => format!("cannot remove stale {}: {e}", lock.display()),
                        None => format!(
                            "stale git lock file {} (no run of loop {id} is alive to hold it); until it goes, commits in that repository fail and autocommit skips it",
                            lock.display()
                        ),
                    },
                    Some("git loop doctor --fix".into()),
                )),
            }
        }
    }
}
