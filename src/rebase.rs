//! `git loop rebase`: a loop's code branch replayed onto the current base (or another
//! commit) inside the loop's own sandbox, where its repository's config and hooks are the
//! agent's to have (DESIGN 4.1). Nothing of the user's moves: the rebase happens in the
//! loop's clone, and only the import afterwards moves `loop/<id>` in the origin.
//!
//! A rebase that stops on conflicts stays in progress in the loop's working folder, so
//! that `git loop shell ID` (a person) or `git loop rebase ID --agent` (the loop's agent,
//! given both sides' intent) can finish it; the command layer does the latter.
//!
//! Host code never runs git in the loop's repository: what it needs of the stopped rebase
//! is read as data (whether `.git/rebase-merge` or `.git/rebase-apply` exists, confined),
//! or asked of git inside the sandbox (the conflicted files), or read in the origin (the
//! commits' messages).

use std::path::PathBuf;

use gix::ObjectId;

use crate::confined::{Kind as FileKind, Tree};
use crate::error::Result;
use crate::git::cmd::Git;
use crate::git::objects;
use crate::loops::{self, Kind, LoopRecord};
use crate::sandbox::task::{self, Bound};
use crate::workspace::Workspace;

#[derive(Debug, thiserror::Error)]
pub enum RebaseError {
    #[error("loop {0} has no code branch to rebase")]
    NoCode(String),
    #[error("loop {id} started from a detached commit; onto which commit should it be rebased?")]
    NoBase { id: String },
    #[error("--onto {spec} names no commit in {}", origin.display())]
    NoSuchCommit { spec: String, origin: PathBuf },
    #[error("loop {id} has uncommitted changes ({})", paths.join(", "))]
    Dirty { id: String, paths: Vec<String> },
    #[error("a rebase is already in progress in loop {id}'s working folder")]
    InProgress { id: String },
    #[error("the rebase of loop {id} onto {onto} failed: {why}")]
    Failed {
        id: String,
        onto: String,
        why: String,
    },
    /// Conflicts: the rebase stopped and is left in progress.
    #[error("the rebase of loop {id} onto {onto} stopped on conflicts in {}", files.join(", "))]
    Conflicts {
        id: String,
        onto: String,
        files: Vec<String>,
    },
    #[error("{what} left the rebase of loop {id} unfinished")]
    Unfinished { id: String, what: &'static str },
}

/// Where a rebase goes: a commit of the origin and the name it was asked by.
#[derive(Debug, Clone)]
pub struct Onto {
    pub commit: ObjectId,
    pub name: String,
}

/// How a rebase ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rebased {
    /// The branch already has `onto` in its history.
    UpToDate,
    /// Replayed: the branch's tip before and after.
    Moved { old: ObjectId, new: ObjectId },
}

fn origin(ws: &Workspace, rec: &LoopRecord) -> Result<PathBuf> {
    match (rec.kind, &rec.repo) {
        (Kind::Code, Some(name)) => Ok(ws.repo_link(name)),
        _ => Err(RebaseError::NoCode(rec.id.clone()).into()),
    }
}

/// The commit `onto` names in the loop's origin (default: the loop's base branch).
pub fn onto(ws: &Workspace, rec: &LoopRecord, spec: Option<&str>) -> Result<Onto> {
    let origin = origin(ws, rec)?;
    let name = match spec.map(str::to_string).or_else(|| rec.base_branch.clone()) {
        Some(n) => n,
        None => return Err(RebaseError::NoBase { id: rec.id.clone() }.into()),
    };
    let repo = objects::open_trusted(&origin).map_err(|e| {
        crate::Error::failure(format!("cannot read {}", origin.display())).with_source(e)
    })?;
    let commit = objects::resolve_rev(&repo, &name)
        .ok()
        .flatten()
        .ok_or_else(|| RebaseError::NoSuchCommit {
            spec: name.clone(),
            origin: origin.clone(),
        })?;
    Ok(Onto { commit, name })
}

/// Whether a rebase is in progress in the loop's working folder (read as data).
pub fn in_progress(ws: &Workspace, id: &str) -> bool {
    let Ok(Some(git)) = Tree::open(&ws.loop_workdir(id).join(".git")) else {
        return false;
    };
    ["rebase-merge", "rebase-apply"]
        .iter()
        .any(|d| matches!(git.kind(d), Ok(Some(FileKind::Dir))))
}

/// The commit a rebase in progress replays onto, as its state file says, if that is a
/// commit the origin has.
pub fn in_progress_onto(ws: &Workspace, rec: &LoopRecord) -> Option<ObjectId> {
    let git = Tree::open(&ws.loop_workdir(&rec.id).join(".git")).ok()??;
    let text = ["rebase-merge/onto", "rebase-apply/onto"]
        .iter()
        .find_map(|f| git.read_text(f, 200).ok().flatten())?;
    let id = ObjectId::from_hex(text.trim().as_bytes()).ok()?;
    let repo = objects::open_trusted(&origin(ws, rec).ok()?).ok()?;
    repo.has_object(id).then_some(id)
}

/// The files a stopped rebase left in conflict, asked of git in the loop's sandbox.
pub fn conflicted(id: &str) -> Result<Vec<String>> {
    let out = task::in_loop(
        id,
        "review",
        &[
            "git",
            "-c",
            "core.quotePath=false",
            "diff",
            "--name-only",
            "--diff-filter=U",
            "-z",
        ],
        Bound::DEFAULT,
    )?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .take(1000)
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .collect())
}

/// Rebases loop `rec`'s code branch onto `onto` in its sandbox. Refused with a rebase
/// already in progress or uncommitted changes; conflicts leave the rebase in progress and
/// are an error naming the files. On success the branch is imported and the record's
/// base becomes `onto`.
pub fn rebase(ws: &Workspace, rec: &LoopRecord, onto: &Onto) -> Result<Rebased> {
    let origin = origin(ws, rec)?;
    loops::check_repo(ws, rec)?;
    loops::import(ws, rec)?;
    if in_progress(ws, &rec.id) {
        return Err(RebaseError::InProgress { id: rec.id.clone() }.into());
    }
    let pair = loops::repo_pairs(ws, rec)
        .into_iter()
        .find(|p| p.role == "code")
        .expect("a code loop has its code pair");
    let dirty = loops::worktree_changes(&pair)?;
    if !dirty.is_empty() {
        return Err(RebaseError::Dirty {
            id: rec.id.clone(),
            paths: dirty.into_iter().take(5).collect(),
        }
        .into());
    }
    let repo = objects::open_trusted(&origin).map_err(|e| {
        crate::Error::failure(format!("cannot read {}", origin.display())).with_source(e)
    })?;
    let old = objects::resolve_branch(&repo, &rec.branch)
        .ok()
        .flatten()
        .ok_or_else(|| {
            crate::Error::failure(format!("{} is gone from {}", rec.branch, origin.display()))
        })?;
    if objects::is_ancestor(&repo, onto.commit, old).unwrap_or(false) {
        record_base(ws, rec, onto.commit)?;
        return Ok(Rebased::UpToDate);
    }
    // The origin's objects are the clone's alternates: `onto` is there already.
    let out = task::in_loop(
        &rec.id,
        "work",
        &[
            "git".to_string(),
            "-c".into(),
            "core.editor=true".into(),
            "-c".into(),
            "rebase.autoStash=false".into(),
            "rebase".into(),
            onto.commit.to_string(),
            rec.branch.clone(),
        ],
        Bound::DEFAULT,
    )?;
    if !out.success() {
        if in_progress(ws, &rec.id) {
            return Err(RebaseError::Conflicts {
                id: rec.id.clone(),
                onto: onto.name.clone(),
                files: conflicted(&rec.id)?,
            }
            .into());
        }
        return Err(RebaseError::Failed {
            id: rec.id.clone(),
            onto: onto.name.clone(),
            why: crate::terminal::visible(&out.stderr_text()).into_owned(),
        }
        .into());
    }
    finish(ws, rec, onto.commit).map(|new| Rebased::Moved { old, new })
}

/// After a rebase finished (here, in a shell, or by the agent): the branch imported and
/// the record's base set to `onto`; the new tip.
pub fn finish(ws: &Workspace, rec: &LoopRecord, onto: ObjectId) -> Result<ObjectId> {
    if in_progress(ws, &rec.id) {
        return Err(RebaseError::Unfinished {
            id: rec.id.clone(),
            what: "the agent",
        }
        .into());
    }
    loops::import(ws, rec)?;
    record_base(ws, rec, onto)?;
    let origin = origin(ws, rec)?;
    let repo = objects::open_trusted(&origin).map_err(|e| {
        crate::Error::failure(format!("cannot read {}", origin.display())).with_source(e)
    })?;
    objects::resolve_branch(&repo, &rec.branch)
        .ok()
        .flatten()
        .ok_or_else(|| {
            crate::Error::failure(format!("{} is gone from {}", rec.branch, origin.display()))
        })
}

/// The loop now starts from `onto`, when its branch has it.
fn record_base(ws: &Workspace, rec: &LoopRecord, onto: ObjectId) -> Result<()> {
    let onto = onto.to_string();
    if rec.base.as_deref() == Some(onto.as_str()) {
        return Ok(());
    }
    let mut fresh = loops::load(ws, &rec.id)?;
    fresh.base = Some(onto);
    fresh.write(&ws.loop_record(&rec.id))
}

/// Both sides' intent, from the origin: the loop's commits being replayed (those of its
/// branch that `onto` lacks) and what `onto` gained since the loop began (its commits the
/// branch lacks), each `short subject` then its body, at most `max` each.
pub fn intents(
    ws: &Workspace,
    rec: &LoopRecord,
    onto: ObjectId,
    max: usize,
) -> Result<(Vec<String>, Vec<String>)> {
    let origin = origin(ws, rec)?;
    let messages = |range: String| -> Result<Vec<String>> {
        let out = Git::in_dir(&origin)
            .args(["log", "--no-color", "--format=%h %B%x1e"])
            .arg(format!("-n{max}"))
            .arg(range)
            .output()?;
        Ok(String::from_utf8_lossy(&out.stdout)
            .split('\x1e')
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .collect())
    };
    let ours = messages(format!("{onto}..{}", rec.branch))?;
    let theirs = messages(format!("{}..{onto}", rec.branch))?;
    Ok((ours, theirs))
}
