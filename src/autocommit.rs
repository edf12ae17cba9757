//! Committing what loops and the person left uncommitted: each loop's repositories,
//! committed by git inside the loop's sandbox, and the personal repository, committed in a
//! jail; files the secret guard rejects are never committed.
//!
//! What a loop's repository commits is decided first, as a [`Plan`] a test compares: every
//! changed path but new untracked files larger than `autocommit.max_file_size` and the new
//! files of a folder holding more than `autocommit.max_new_files_per_folder` of them (an
//! unignored `node_modules/`), which are left out with a notice naming them and the
//! setting. The paths reach git on its standard input (`--pathspec-from-file`), never on a
//! command line: a tree's paths are unbounded, a command line is not.

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

/// The commit message: how many paths, then each (at most 200, each at most 200
/// characters: it goes to git on a command line, which bounds one argument to 128 KiB).
fn message(paths: &[String]) -> String {
    let mut m = format!(
        "autocommit: {} changed path{}\n\n",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" }
    );
    for p in paths.iter().take(200) {
        if p.chars().count() > 200 {
            let cut: String = p.chars().take(199).collect();
            m.push_str(&format!("- {cut}…\n"));
        } else {
            m.push_str(&format!("- {p}\n"));
        }
    }
    if paths.len() > 200 {
        m.push_str(&format!("- ... and {} more\n", paths.len() - 200));
    }
    m
}

/// How much new, untracked content autocommit takes into a loop's commit
/// (`[autocommit]` of the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// A new untracked file larger than this is left out.
    pub max_file_size: u64,
    /// A folder with more new untracked files than this is left out whole.
    pub max_new_files_per_folder: usize,
}

impl Bounds {
    pub fn of(settings: &crate::config::Settings) -> Bounds {
        Bounds {
            max_file_size: settings.autocommit.max_file_size.0,
            max_new_files_per_folder: settings.autocommit.max_new_files_per_folder,
        }
    }
}

/// What is left out of a commit, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// A new untracked file of `size` bytes, over `autocommit.max_file_size`.
    Large { path: String, size: u64 },
    /// A folder (`""`: the top) with `count` new untracked files, over
    /// `autocommit.max_new_files_per_folder`.
    Crowded { folder: String, count: usize },
}

/// What autocommit does with one repository's changes (pure: [`plan`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The paths to commit, sorted.
    pub commit: Vec<String>,
    pub left_out: Vec<LeftOut>,
}

/// Decides what of `status` is committed under `bounds`: every changed path, but the new
/// untracked files of a folder with more of them than the bound (the whole folder), and
/// new untracked files larger than the bound. Changes to tracked files are always taken.
pub fn plan(status: &crate::git::objects::WorktreeStatus, bounds: &Bounds) -> Plan {
    use std::collections::{BTreeMap, BTreeSet};
    let mut per_folder: BTreeMap<&str, usize> = BTreeMap::new();
    for u in &status.untracked {
        *per_folder.entry(u.folder.as_str()).or_default() += 1;
    }
    let mut out = Plan::default();
    let crowded: BTreeSet<&str> = per_folder
        .iter()
        .filter(|(_, count)| **count > bounds.max_new_files_per_folder)
        .map(|(folder, count)| {
            out.left_out.push(LeftOut::Crowded {
                folder: folder.to_string(),
                count: *count,
            });
            *folder
        })
        .collect();
    let mut skip: BTreeSet<&str> = BTreeSet::new();
    for u in &status.untracked {
        if crowded.contains(u.folder.as_str()) {
            skip.insert(&u.path);
        } else if u.size > bounds.max_file_size {
            skip.insert(&u.path);
            out.left_out.push(LeftOut::Large {
                path: u.path.clone(),
                size: u.size,
            });
        }
    }
    out.commit = status
        .changed
        .iter()
        .filter(|p| !skip.contains(p.as_str()))
        .cloned()
        .collect();
    out
}

/// The notice for what `plan` left out of loop `id`'s `role` repository: one line per
/// crowded folder, the large files (the first ten, then how many more), each with the
/// setting that decided it.
fn left_out_lines(id: &str, role: &str, left: &[LeftOut], bounds: &Bounds) -> Vec<String> {
    const SHOWN: usize = 10;
    let mut lines = Vec::new();
    let mut large = 0;
    for l in left {
        match l {
            LeftOut::Crowded { folder, count } => lines.push(format!(
                "{id} {role}: left out {} ({count} new files, more than autocommit.max_new_files_per_folder = {}): add it to .gitignore, or commit it inside the loop",
                if folder.is_empty() {
                    "the top folder's new files".to_string()
                } else {
                    format!("{}/", terminal::shown(folder))
                },
                bounds.max_new_files_per_folder
            )),
            LeftOut::Large { path, size } => {
                large += 1;
                if large <= SHOWN {
                    lines.push(format!(
                        "{id} {role}: left out {} ({}, larger than autocommit.max_file_size = {}): commit it inside the loop if it belongs in the repository",
                        terminal::shown(path),
                        human_size(*size),
                        human_size(bounds.max_file_size)
                    ));
                }
            }
        }
    }
    if large > SHOWN {
        lines.push(format!(
            "{id} {role}: left out {} more new files larger than autocommit.max_file_size",
            large - SHOWN
        ));
    }
    lines
}

/// `12.5 MiB`, `200 MiB`, `512 B`.
fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
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

/// What an autocommit round did and left undone: the loops whose commit failed, whether
/// the personal repository's did, and how many repositories were committed (or, with
/// `dry_run`, would be).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Round {
    pub failed_loops: usize,
    pub personal_failed: bool,
    pub committed: usize,
}

/// One autocommit round: the loops `ids` committed (each inside its sandbox), then the
/// personal repository, then with `publish_notes` the loops' notes branches published that
/// merge cleanly (`union` and `allow` as for publish). Each failure is reported as a
/// warning and the round goes on; what failed is the outcome.
pub fn round(
    report: &mut dyn Report,
    ws: &Workspace,
    ids: &[String],
    opts: &Options,
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
        match commit_loop(report, ws, &rec, opts) {
            Ok(n) => outcome.committed += n,
            Err(e) => {
                outcome.failed_loops += 1;
                report.warn(&format!("{id}: {}", e.one_line()))?;
            }
        }
    }
    match commit_personal(report, ws, opts) {
        Ok(n) => outcome.committed += n,
        Err(e) => {
            outcome.personal_failed = true;
            report.problem("personal: ", &e)?;
        }
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

/// git's commit of `paths` in the repository at `inside` (a path inside the loop's
/// sandbox), run by `sh` there: its command line, fixed whatever the paths, and its
/// standard input, the paths as NUL-separated literal pathspecs (any number of them, any
/// name). The repository's hooks and config are the agent's, so this runs inside the
/// loop's sandbox; the message is an argument, never part of a shell string.
fn commit_task(inside: &str, paths: &[String]) -> (Vec<std::ffi::OsString>, Vec<u8>) {
    let script = "d=$1; m=$2; t=$(mktemp) && cat >\"$t\" && \
                  git -C \"$d\" add -A --pathspec-from-file=\"$t\" --pathspec-file-nul && \
                  GIT_AUTHOR_NAME='git loop' GIT_AUTHOR_EMAIL=git-loop@localhost GIT_COMMITTER_NAME='git loop' GIT_COMMITTER_EMAIL=git-loop@localhost \
                  git -C \"$d\" commit -q -m \"$m\" --pathspec-from-file=\"$t\" --pathspec-file-nul";
    let command = ["sh", "-c", script, "autocommit", inside, &message(paths)]
        .iter()
        .map(Into::into)
        .collect();
    (command, literal_pathspecs(paths))
}

/// `paths` as NUL-separated literal pathspecs (git's `--pathspec-file-nul`).
fn literal_pathspecs(paths: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in paths {
        out.extend_from_slice(b":(literal)");
        out.extend_from_slice(p.as_bytes());
        out.push(0);
    }
    out
}

/// How an autocommit round runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub bounds: Bounds,
    /// Say what would be committed, and change nothing.
    pub dry_run: bool,
}

/// Commits what loop `rec`'s repositories hold uncommitted, as [`plan`] decides, inside
/// the loop's sandbox, then imports its branches. Returns how many repositories were
/// committed (with `dry_run`, how many would be).
pub fn commit_loop(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    opts: &Options,
) -> Result<usize> {
    loops::check_repo(ws, rec)?;
    // A git lock file that no live run of the loop can own is a leftover of a killed git
    // (a run or an earlier autocommit killed mid-commit): removed, and said so.
    if !opts.dry_run {
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
    }
    let mut skipped = Vec::new();
    let mut committed = 0;
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
        let status = loops::worktree_status(&pair)?;
        if status.changed.is_empty() {
            continue;
        }
        let planned = plan(&status, &opts.bounds);
        for line in left_out_lines(&rec.id, pair.role, &planned.left_out, &opts.bounds) {
            report.warn(&line)?;
        }
        let refused = rejected(&pair.clone, &planned.commit);
        for (path, why) in &refused {
            report.warn(&format!(
                "{} {}: not committing {}: {why}",
                rec.id,
                pair.role,
                terminal::shown(path)
            ))?;
        }
        let paths: Vec<String> = planned
            .commit
            .into_iter()
            .filter(|p| !refused.iter().any(|(r, _)| r == p))
            .collect();
        if paths.is_empty() {
            continue;
        }
        let counted = format!(
            "{} path{}",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        );
        if opts.dry_run {
            report.result(&format!(
                "{} {}: would commit {counted}:",
                rec.id, pair.role
            ))?;
            for path in &paths {
                report.result(&format!("  {}", terminal::shown(path)))?;
            }
            committed += 1;
            continue;
        }
        let inside = crate::sandbox::spec::repo_inside(&rec.id, pair.role)
            .display()
            .to_string();
        let (command, pathspecs) = commit_task(&inside, &paths);
        crate::failpoint::hit("autocommit:before-commit");
        let out =
            task::in_loop_with_input(&rec.id, "work", &command, pathspecs, task::Bound::DEFAULT)?;
        crate::failpoint::hit("autocommit:committed");
        if !out.success() {
            return Err(CommitError::InLoop {
                role: pair.role,
                id: rec.id.clone(),
                stderr: terminal::shown(&out.stderr_text()).to_string(),
            }
            .into());
        }
        committed += 1;
        report.status(&format!("{} {}: committed {counted}", rec.id, pair.role))?;
    }
    if opts.dry_run {
        return Ok(committed);
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
    Ok(committed)
}

/// The personal repository's files are written by every loop's sandbox (DESIGN 4.0), so
/// git never runs there on the host: what changed is read through gix, a nested
/// repository or gitlink is refused (git entering one would run its config), the secret
/// guard checks every file here, and `git add` and `git commit` run in a jail that sees
/// only this repository, within a time bound. The repository's own hooks do not run in
/// the jail: the guard they would run has run here already.
///
/// Its new files are bounded as a loop's are ([`plan`]). Returns 1 when it was committed
/// (with `dry_run`: would be), else 0.
pub fn commit_personal(report: &mut dyn Report, ws: &Workspace, opts: &Options) -> Result<usize> {
    let dir = ws.personal();
    let git_dir = dir.join(".git");
    if !git_dir.is_dir() {
        return Ok(0);
    }
    if !opts.dry_run {
        // A sync killed half-way left the files merged and the branch behind: a commit
        // now would undo the merge, so the sync's two steps are finished first.
        for note in crate::sync::finish_personal(ws)? {
            report.status(&note)?;
        }
        // Only an autocommit commits here, and this one holds the autocommit lock: a git
        // lock file left here belongs to a killed one.
        for stale in loops::git_lock_files(&git_dir) {
            if std::fs::remove_file(&stale).is_ok() {
                report.status(&format!(
                    "personal: removed the stale {} (no autocommit is alive to own it)",
                    stale.display()
                ))?;
            }
        }
    }
    if let Some(why) = busy(&git_dir) {
        return Err(CommitError::PersonalBusy {
            why: why.to_string(),
            dir: dir.clone(),
        }
        .into());
    }
    let (status, gitlinks) = loops::personal_status(&dir)?;
    if status.changed.is_empty() && gitlinks.is_empty() {
        return Ok(0);
    }
    let planned = plan(&status, &opts.bounds);
    for line in left_out_lines("personal", "repository", &planned.left_out, &opts.bounds) {
        report.warn(
            line.trim_start_matches("personal repository: ")
                .trim_start(),
        )?;
    }
    let tree = crate::confined::Tree::open(&dir)
        .map_err(|e| Error::failure(format!("cannot open {}", dir.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", dir.display())))?;
    let mut paths = Vec::new();
    // A gitlink leaves the index below, whatever its folder holds (or whether it is
    // still there): it is not also a change to add.
    for path in planned.commit.into_iter().filter(|p| !gitlinks.contains(p)) {
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
            "personal: {} the gitlink {} from the index (a nested repository's config would run in any git that enters it); its files stay",
            if opts.dry_run { "would remove" } else { "removing" },
            terminal::shown(link)
        ))?;
    }
    if paths.is_empty() && gitlinks.is_empty() {
        return Ok(0);
    }
    let mut all: Vec<String> = paths.clone();
    all.extend(gitlinks.iter().cloned());
    let counted = format!(
        "{} path{}",
        all.len(),
        if all.len() == 1 { "" } else { "s" }
    );
    if opts.dry_run {
        report.result(&format!("personal: would commit {counted}:"))?;
        for path in &all {
            report.result(&format!("  {}", terminal::shown(path)))?;
        }
        return Ok(1);
    }
    // Each step is git with its settings, run in the jail; the paths come on its standard
    // input (NUL-separated pathspecs), never on its command line.
    let from_stdin = ["--pathspec-from-file=-", "--pathspec-file-nul"];
    let mut jobs: Vec<(Vec<std::ffi::OsString>, Vec<u8>)> = Vec::new();
    if !gitlinks.is_empty() {
        // update-index takes the paths as they are (no pathspec), NUL-separated, and drops
        // each entry whether or not its folder is still there (`rm --cached` fails on one
        // that is not).
        let mut input = Vec::new();
        for link in &gitlinks {
            input.extend_from_slice(link.as_bytes());
            input.push(0);
        }
        jobs.push((
            task::git_argv(&["update-index", "--force-remove", "-z", "--stdin"]),
            input,
        ));
    }
    if !paths.is_empty() {
        let mut args = vec!["add", "-A"];
        args.extend(from_stdin);
        jobs.push((task::git_argv(&args), literal_pathspecs(&paths)));
    }
    // The index holds exactly what was staged above (only autocommit commits here); a
    // pathspec would have `commit` take gitlinks back from the working tree.
    jobs.push((
        task::git_argv(&["commit", "-q", "-m", &message(&all)]),
        Vec::new(),
    ));
    let inside = task::inside("personal");
    for (job, input) in jobs {
        let out = task::jail_with_input(
            &task::Jail {
                tree: dir.clone(),
                inside: inside.clone(),
                command: job,
                env: task::git_env(("git loop", "git-loop@localhost")),
                bound: task::Bound::DEFAULT,
            },
            input,
        )?;
        if !out.success() {
            return Err(
                CommitError::Personal(terminal::shown(&out.stderr_text()).to_string()).into(),
            );
        }
    }
    report.status(&format!("personal: committed {counted}"))?;
    Ok(1)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::objects::{Untracked, WorktreeStatus};

    fn untracked(path: &str, size: u64, folder: &str) -> Untracked {
        Untracked {
            path: path.into(),
            size,
            folder: folder.into(),
        }
    }

    const BOUNDS: Bounds = Bounds {
        max_file_size: 1000,
        max_new_files_per_folder: 3,
    };

    #[test]
    fn the_plan_leaves_out_crowded_new_folders_and_large_new_files_only() {
        let mut status = WorktreeStatus {
            changed: vec![
                "big.bin".into(),
                "huge-tracked.bin".into(),
                "node_modules/a/1.js".into(),
                "node_modules/a/2.js".into(),
                "node_modules/b/3.js".into(),
                "node_modules/b/4.js".into(),
                "src/lib.rs".into(),
                "src/new.rs".into(),
                "vendor/x.c".into(),
            ],
            untracked: vec![
                untracked("big.bin", 1001, ""),
                untracked("node_modules/a/1.js", 1, "node_modules"),
                untracked("node_modules/a/2.js", 1, "node_modules"),
                untracked("node_modules/b/3.js", 1, "node_modules"),
                untracked("node_modules/b/4.js", 5000, "node_modules"),
                untracked("src/new.rs", 1000, "src"),
                untracked("vendor/x.c", 10, "vendor"),
            ],
        };
        let planned = plan(&status, &BOUNDS);
        assert_eq!(
            planned,
            Plan {
                commit: vec![
                    "huge-tracked.bin".into(),
                    "src/lib.rs".into(),
                    "src/new.rs".into(),
                    "vendor/x.c".into()
                ],
                left_out: vec![
                    LeftOut::Crowded {
                        folder: "node_modules".into(),
                        count: 4
                    },
                    LeftOut::Large {
                        path: "big.bin".into(),
                        size: 1001
                    },
                ],
            }
        );
        // At the bound, everything is taken.
        status.untracked.retain(|u| u.path != "node_modules/b/4.js");
        status.changed.retain(|p| p != "node_modules/b/4.js");
        let planned = plan(&status, &BOUNDS);
        assert!(planned.commit.contains(&"node_modules/a/1.js".to_string()));
        assert_eq!(
            planned.left_out,
            [LeftOut::Large {
                path: "big.bin".into(),
                size: 1001
            }]
        );
    }

    #[test]
    fn the_notice_names_what_was_left_out_and_the_setting() {
        let mut left = vec![
            LeftOut::Crowded {
                folder: "node_modules".into(),
                count: 20000,
            },
            LeftOut::Crowded {
                folder: "".into(),
                count: 5,
            },
        ];
        for i in 0..12 {
            left.push(LeftOut::Large {
                path: format!("big{i}.bin"),
                size: 200 << 20,
            });
        }
        let lines = left_out_lines("fix-1a2b3c", "code", &left, &BOUNDS);
        assert_eq!(lines.len(), 2 + 10 + 1);
        assert_eq!(
            lines[0],
            "fix-1a2b3c code: left out node_modules/ (20000 new files, more than autocommit.max_new_files_per_folder = 3): add it to .gitignore, or commit it inside the loop"
        );
        assert!(lines[1].contains("left out the top folder's new files (5 new files"));
        assert_eq!(
            lines[2],
            "fix-1a2b3c code: left out big0.bin (200 MiB, larger than autocommit.max_file_size = 1000 B): commit it inside the loop if it belongs in the repository"
        );
        assert_eq!(
            lines[12],
            "fix-1a2b3c code: left out 2 more new files larger than autocommit.max_file_size"
        );
    }

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(human_size(512), "512 B");
        assert_eq!(human_size(10 << 20), "10 MiB");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(200 << 20), "200 MiB");
        assert_eq!(human_size(3 << 30), "3 GiB");
    }

    #[test]
    fn paths_never_reach_a_command_line() {
        let paths: Vec<String> = (0..20_000)
            .map(|i| format!("node_modules/p{i}/index.js"))
            .chain(["odd\nname -- $(x)".to_string()])
            .collect();
        let (command, input) = commit_task("/loopat/loop/x-1/workdir", &paths);
        assert_eq!(command.len(), 6);
        assert!(command.iter().map(|a| a.len()).sum::<usize>() < 128 << 10);
        let specs: Vec<&[u8]> = input.split(|b| *b == 0).filter(|s| !s.is_empty()).collect();
        assert_eq!(specs.len(), paths.len());
        assert_eq!(specs[0], b":(literal)node_modules/p0/index.js");
        assert_eq!(specs[20_000], b":(literal)odd\nname -- $(x)");
    }

    #[test]
    fn the_message_stays_a_bounded_argument() {
        let paths: Vec<String> = (0..5000)
            .map(|i| format!("{i}-{}", "x".repeat(4000)))
            .collect();
        let m = message(&paths);
        assert!(m.len() < 128 << 10, "{}", m.len());
        assert!(m.starts_with("autocommit: 5000 changed paths\n\n"));
        assert!(m.ends_with("- ... and 4800 more\n"));
    }
}
