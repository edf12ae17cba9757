//! Committing what loops and the person left uncommitted: each loop's repositories,
//! committed by git inside the loop's sandbox, and the personal repository, committed in a
//! jail; files the secret guard rejects are never committed.

use std::path::Path;

use crate::error::{Error, Result};
use crate::loops::{self, LoopRecord};
use crate::report::Report;
use crate::sandbox::task;
use crate::terminal;
use crate::workspace::Workspace;

/// Why a repository is left alone this time.
fn busy(git_dir: &Path) -> Option<&'static str> {
    let checks: [(&str, &'static str); 6] = [
        ("MERGE_HEAD", "a merge is in progress"),
        ("rebase-merge", "a rebase is in progress"),
        ("rebase-apply", "a rebase or am is in progress"),
        ("CHERRY_PICK_HEAD", "a cherry-pick is in progress"),
        ("REVERT_HEAD", "a revert is in progress"),
        (
            "index.lock",
            "index.lock exists (a git command of a live run of the loop holds it)",
        ),
    ];
    checks
        .into_iter()
        .find(|(name, _)| git_dir.join(name).symlink_metadata().is_ok())
        .map(|(_, why)| why)
}

/// The commit message: how many paths, then each.
fn message(paths: &[String]) -> String {
    let mut m = format!(
        "autocommit: {} changed path{}\n\n",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" }
    );
    for p in paths.iter().take(200) {
        m.push_str(&format!("- {p}\n"));
    }
    if paths.len() > 200 {
        m.push_str(&format!("- ... and {} more\n", paths.len() - 200));
    }
    m
}

/// Paths whose content the secret guard rejects (read from the host without following
/// links: the files are the agent's).
fn rejected(dir: &Path, paths: &[String]) -> Vec<(String, String)> {
    let Ok(Some(tree)) = crate::confined::Tree::open(dir) else {
        return Vec::new();
    };
    paths
        .iter()
        .filter_map(|p| guard_finding(&tree, p).map(|why| (p.clone(), why)))
        .collect()
}

/// Why a loop's or the personal repository's changes were not committed.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// git's commit inside loop `id` failed (its message, made visible).
    #[error("the commit in the {role} repository failed: {stderr}")]
    InLoop {
        role: &'static str,
        id: String,
        stderr: String,
    },
    /// Repositories of loop `id` with a merge, rebase or the like in progress.
    #[error("the {} repository of loop {id} was not committed", roles.join(" and "))]
    Busy {
        roles: Vec<&'static str>,
        id: String,
    },
    /// The personal repository (`dir`) has an operation in progress (`why`).
    #[error("not committed, {why}")]
    PersonalBusy {
        why: String,
        dir: std::path::PathBuf,
    },
    #[error("the commit failed: {0}")]
    Personal(String),
}

/// What an autocommit round left undone: the loops whose commit failed, and whether the
/// personal repository's did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub failed_loops: usize,
    pub personal_failed: bool,
}

/// One autocommit round: the loops `ids` committed (each inside its sandbox), then the
/// personal repository, then with `publish_notes` the loops' notes branches published that
/// merge cleanly (`union` and `allow` as for publish). Each failure is reported as a
/// warning and the round goes on; what failed is the outcome.
pub fn round(
    report: &mut dyn Report,
    ws: &Workspace,
    ids: &[String],
    publish_notes: Option<(&[String], &crate::guard::Allowlist)>,
) -> Result<Round> {
    crate::vault::prepare(report, ws)?;
    // Two autocommits never interleave; the workspace lock is not held while what loops
    // wrote is read and committed (a loop that makes git wait must not stop every publish),
    // only around publishing. A loop being removed meanwhile is safe: `rm` refuses a loop
    // with a live run, and each commit here is a run.
    let _lock = crate::fsutil::Lock::acquire(&ws.autocommit_lock())?;
    let mut outcome = Round::default();
    for id in ids {
        let rec = match loops::load(ws, id) {
            Ok(r) => r,
            Err(e) => {
                report.warn(&format!("{id}: skipped: {}", e.one_line()))?;
                continue;
            }
        };
        if let Err(e) = commit_loop(report, ws, &rec) {
            outcome.failed_loops += 1;
            report.warn(&format!("{id}: {}", e.one_line()))?;
        }
    }
    if let Err(e) = commit_personal(report, ws) {
        outcome.personal_failed = true;
        report.problem("personal: ", &e)?;
    }
    if let Some((union, allow)) = publish_notes {
        let _lock = crate::fsutil::Lock::acquire(&ws.workspace_lock())?;
        for id in ids {
            let Ok(rec) = loops::load(ws, id) else {
                continue;
            };
            let published = crate::publish::gated::publish_one(
                ws,
                &ws.notes(),
                &rec,
                "notes",
                union,
                None,
                false,
                allow,
            );
            match published {
                Ok((trunk, merged)) => {
                    for notice in &merged.notices {
                        report.status(notice)?;
                    }
                    if merged.outcome != crate::publish::Outcome::UpToDate {
                        report.result(&crate::publish::gated::outcome_line(
                            &format!("{id} notes"),
                            &trunk,
                            &merged.outcome,
                            false,
                        ))?;
                    }
                }
                Err(e) => report.warn(&format!("{id}: notes not published: {}", e.one_line()))?,
            }
        }
    }
    Ok(outcome)
}

pub fn commit_loop(report: &mut dyn Report, ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    loops::check_repo(ws, rec)?;
    // A git lock file that no live run of the loop can own is a leftover of a killed git
    // (a run or an earlier autocommit killed mid-commit): removed, and said so.
    if let Some(stale) = loops::stale_git_locks(ws, rec)? {
        for (path, e) in stale.remove() {
            report.warn(&format!("cannot remove the stale {}: {e}", path.display()))?;
        }
        for path in &stale.files {
            report.status(&format!(
                "{}: removed the stale {} (no run of the loop is alive to own it)",
                rec.id,
                path.display()
            ))?;
        }
    }
    let mut skipped = Vec::new();
    for pair in loops::repo_pairs(ws, rec) {
        let git_dir = pair.clone_git_dir();
        if !git_dir.is_dir() {
            continue;
        }
        if let Some(why) = busy(&git_dir) {
            report.warn(&format!("{} {}: not committed, {why}", rec.id, pair.role))?;
            skipped.push(pair.role);
            continue;
        }
        let changes = loops::worktree_changes(&pair)?;
        if changes.is_empty() {
            continue;
        }
        let refused = rejected(&pair.clone, &changes);
        for (path, why) in &refused {
            report.warn(&format!(
                "{} {}: not committing {path}: {why}",
                rec.id, pair.role
            ))?;
        }
        let paths: Vec<String> = changes
            .iter()
            .filter(|p| !refused.iter().any(|(r, _)| r == *p))
            .cloned()
            .collect();
        if paths.is_empty() {
            continue;
        }
        let inside = crate::sandbox::spec::repo_inside(&rec.id, pair.role)
            .display()
            .to_string();
        // git runs inside the loop's sandbox: the repository's hooks and config are the
        // agent's. Paths and the message are arguments, never part of a shell string.
        let script = "d=$1; m=$2; shift 2; \
                      git -C \"$d\" add -A -- \"$@\" && \
                      GIT_AUTHOR_NAME='git loop' GIT_AUTHOR_EMAIL=git-loop@localhost GIT_COMMITTER_NAME='git loop' GIT_COMMITTER_EMAIL=git-loop@localhost git -C \"$d\" commit -q -m \"$m\" -- \"$@\"";
        let mut command: Vec<std::ffi::OsString> = ["sh", "-c", script, "autocommit"]
            .iter()
            .map(Into::into)
            .collect();
        command.push(inside.into());
        command.push(message(&paths).into());
        command.extend(paths.iter().map(|p| format!(":(literal){p}").into()));
        crate::failpoint::hit("autocommit:before-commit");
        let out = task::in_loop(&rec.id, "work", &command, task::Bound::DEFAULT)?;
        crate::failpoint::hit("autocommit:committed");
        if !out.success() {
            return Err(CommitError::InLoop {
                role: pair.role,
                id: rec.id.clone(),
                stderr: terminal::shown(&out.stderr_text()).to_string(),
            }
            .into());
        }
        report.status(&format!(
            "{} {}: committed {} path{}",
            rec.id,
            pair.role,
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        ))?;
    }
    // Imported whether or not anything was committed now: the agent may have committed
    // itself since the last import.
    loops::import(ws, rec)?;
    crate::failpoint::hit("autocommit:imported");
    if !skipped.is_empty() {
        return Err(CommitError::Busy {
            roles: skipped,
            id: rec.id.clone(),
        }
        .into());
    }
    Ok(())
}

/// The personal repository's files are written by every loop's sandbox (DESIGN 4.0), so
/// git never runs there on the host: what changed is read through gix, a nested
/// repository or gitlink is refused (git entering one would run its config), the secret
/// guard checks every file here, and `git add` and `git commit` run in a jail that sees
/// only this repository, within a time bound. The repository's own hooks do not run in
/// the jail: the guard they would run has run here already.
pub fn commit_personal(report: &mut dyn Report, ws: &Workspace) -> Result<()> {
    let dir = ws.personal();
    let git_dir = dir.join(".git");
    if !git_dir.is_dir() {
        return Ok(());
    }
    // A sync killed half-way left the files merged and the branch behind: a commit now
    // would undo the merge, so the sync's two steps are finished first.
    for note in crate::sync::finish_personal(ws)? {
        report.status(&note)?;
    }
    // Only an autocommit commits here, and this one holds the autocommit lock: a git lock
    // file left here belongs to a killed one.
    for stale in loops::git_lock_files(&git_dir) {
        if std::fs::remove_file(&stale).is_ok() {
            report.status(&format!(
                "personal: removed the stale {} (no autocommit is alive to own it)",
                stale.display()
            ))?;
        }
    }
    if let Some(why) = busy(&git_dir) {
        return Err(CommitError::PersonalBusy {
            why: why.to_string(),
            dir: dir.clone(),
        }
        .into());
    }
    let (changes, gitlinks) = loops::personal_changes(&dir)?;
    if changes.is_empty() && gitlinks.is_empty() {
        return Ok(());
    }
    let tree = crate::confined::Tree::open(&dir)
        .map_err(|e| Error::failure(format!("cannot open {}", dir.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", dir.display())))?;
    let mut paths = Vec::new();
    // A gitlink leaves the index below, whatever its folder holds (or whether it is
    // still there): it is not also a change to add.
    for path in changes.into_iter().filter(|p| !gitlinks.contains(p)) {
        if let Some(why) = refused_in_personal(&tree, &path) {
            report.warn(&format!(
                "personal: not committing {}: {why}",
                terminal::shown(&path)
            ))?;
            continue;
        }
        if let Some(finding) = guard_finding(&tree, &path) {
            report.warn(&format!(
                "personal: not committing {}: {finding}",
                terminal::shown(&path)
            ))?;
            continue;
        }
        paths.push(path);
    }
    for link in &gitlinks {
        report.warn(&format!(
            "personal: removing the gitlink {} from the index (a nested repository's config would run in any git that enters it); its files stay",
            terminal::shown(link)
        ))?;
    }
    if paths.is_empty() && gitlinks.is_empty() {
        return Ok(());
    }
    // Each step is git with its settings and the paths as arguments, run in the jail.
    let literal = |p: &String| format!(":(literal){p}");
    let mut jobs: Vec<Vec<std::ffi::OsString>> = Vec::new();
    if !gitlinks.is_empty() {
        // update-index takes the paths as they are (no pathspec) and drops each entry
        // whether or not its folder is still there (`rm --cached` fails on one that is not).
        let mut step = task::git_argv(&["update-index", "--force-remove", "--"]);
        step.extend(gitlinks.iter().map(Into::into));
        jobs.push(step);
    }
    if !paths.is_empty() {
        let mut step = task::git_argv(&["add", "-A", "--"]);
        step.extend(paths.iter().map(literal).map(Into::into));
        jobs.push(step);
    }
    let mut all: Vec<String> = paths.clone();
    all.extend(gitlinks.iter().cloned());
    // The index holds exactly what was staged above (only autocommit commits here); a
    // pathspec would have `commit` take gitlinks back from the working tree.
    jobs.push(task::git_argv(&["commit", "-q", "-m", &message(&all)]));
    let inside = task::inside("personal");
    for job in jobs {
        let out = task::jail(&task::Jail {
            tree: dir.clone(),
            inside: inside.clone(),
            command: job,
            env: task::git_env(("git loop", "git-loop@localhost")),
            bound: task::Bound::DEFAULT,
        })?;
        if !out.success() {
            return Err(
                CommitError::Personal(terminal::shown(&out.stderr_text()).to_string()).into(),
            );
        }
    }
    report.status(&format!(
        "personal: committed {} path{}",
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    ))?;
    Ok(())
}

/// Why a changed path of the personal tree is never committed: a nested repository (a
/// folder with its own `.git`, which `git add` would make a gitlink), or a path through a
/// `.git` of any spelling.
fn refused_in_personal(tree: &crate::confined::Tree, path: &str) -> Option<&'static str> {
    let nested_name = path
        .split('/')
        .any(|c| c.eq_ignore_ascii_case(".git") || c.eq_ignore_ascii_case(".gitmodules"));
    if nested_name {
        return Some("a .git or .gitmodules path (a nested repository)");
    }
    match tree.kind(path) {
        Ok(Some(crate::confined::Kind::Dir)) => {
            Some("a nested git repository (git entering it would run its config); move its files out or remove its .git")
        }
        _ => None,
    }
}

/// What the secret guard says of a file of the personal tree, read without following a
/// link, bounded.
fn guard_finding(tree: &crate::confined::Tree, path: &str) -> Option<String> {
    const LIMIT: u64 = 64 << 20;
    match tree.read(path, LIMIT) {
        Ok(Some(bytes)) => crate::guard::check(path, 0o100644, &bytes)
            .into_iter()
            .next()
            .map(|f| f.to_string()),
        Ok(None) => None,
        Err(crate::confined::ConfinedError::Symlink(_)) => None,
        Err(e @ crate::confined::ConfinedError::TooLarge { .. }) => Some(e.to_string()),
        Err(e @ crate::confined::ConfinedError::NotRegular { .. }) => Some(e.to_string()),
        Err(e) => Some(e.to_string()),
    }
}
