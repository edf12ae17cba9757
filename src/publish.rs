//! Proposals become merges (DESIGN.md section 5): a loop's branch, already imported into
//! its origin, is merged into a target branch of that origin (notes or knowledge trunk for
//! `publish`, the code's base branch for `merge`).
//!
//! Everything here runs in origins, which are the user's own repositories or the
//! workspace's: never in a loop's repository. The merge is computed without touching any
//! checkout (`git merge-tree --write-tree`, then `git commit-tree`), and the target moves
//! only by a compare-and-swap (`git update-ref NEW OLD`); a lost race computes again. Only
//! then is a checkout of the target brought up to date, from the old tree to the new one
//! (`git read-tree -m -u`), so local changes that do not conflict survive and ones that
//! would be overwritten make the whole operation refuse before anything moved.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::error::{Error, Result};
use crate::git::cmd::{Git, GitError};
use crate::git::objects;

/// How a merge went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The target already contains the source.
    UpToDate,
    /// The target moved forward to the source.
    FastForward { old: ObjectId, new: ObjectId },
    /// A merge (or squash) commit was made on the target.
    Merged { old: ObjectId, new: ObjectId },
}

/// What to merge where.
#[derive(Debug, Clone)]
pub struct MergeRequest<'a> {
    /// The origin's top-level folder.
    pub origin: &'a Path,
    /// `loop/<id>`.
    pub source_branch: &'a str,
    /// The branch that receives it.
    pub target_branch: &'a str,
    pub message: String,
    pub squash: bool,
    /// Compute and report, change nothing.
    pub dry_run: bool,
    /// Where to note a checkout update in progress (see [`recover`]).
    pub journal: Option<PathBuf>,
    /// The source commit the gate judged (`crate::gate`), and the target it was judged
    /// against: what lands is exactly that commit, whatever the branch says by now (an
    /// import may move it at any time), and the merge refuses if the target moved
    /// somewhere that would make the branch carry more than was judged.
    pub gated: Option<(ObjectId, ObjectId)>,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{source_branch} does not merge cleanly into {target}: conflicts in {}", paths.join(", "))]
    Conflict {
        source_branch: String,
        target: String,
        paths: Vec<String>,
    },
    #[error("branch {0} does not exist")]
    NoBranch(String),
    #[error("{target} is checked out in {worktree} with local changes the merge would overwrite")]
    DirtyCheckout { target: String, worktree: PathBuf },
    #[error("{target} kept moving while the merge was computed ({tries} tries)")]
    Busy { target: String, tries: usize },
    #[error("{target} moved to {now} since the branch was checked against {judged}")]
    TargetMoved {
        target: String,
        judged: ObjectId,
        now: ObjectId,
    },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: objects::GitReadError,
    },
}

const TRIES: usize = 20;

fn tip(origin: &Path, branch: &str) -> Result<Option<ObjectId>, MergeError> {
    let repo = objects::open_trusted(origin).map_err(|source| MergeError::Read {
        path: origin.to_path_buf(),
        source,
    })?;
    objects::resolve_branch(&repo, branch).map_err(|source| MergeError::Read {
        path: origin.to_path_buf(),
        source,
    })
}

fn is_ancestor(origin: &Path, a: ObjectId, b: ObjectId) -> Result<bool, MergeError> {
    let repo = objects::open_trusted(origin).map_err(|source| MergeError::Read {
        path: origin.to_path_buf(),
        source,
    })?;
    objects::is_ancestor(&repo, a, b).map_err(|source| MergeError::Read {
        path: origin.to_path_buf(),
        source,
    })
}

/// Merges `source_branch` into `target_branch` of `origin` (see the module header).
pub fn merge(req: &MergeRequest) -> Result<Outcome, MergeError> {
    if let Some(j) = &req.journal {
        recover(j)?;
    }
    for _ in 0..TRIES {
        let source = match req.gated {
            Some((source, _)) => source,
            None => tip(req.origin, req.source_branch)?
                .ok_or_else(|| MergeError::NoBranch(req.source_branch.to_string()))?,
        };
        let old = tip(req.origin, req.target_branch)?
            .ok_or_else(|| MergeError::NoBranch(req.target_branch.to_string()))?;
        if let Some((_, judged)) = req.gated {
            // A target that moved forward only hides more of the branch; one moved
            // anywhere else could make it carry commits nobody checked.
            if old != judged && !is_ancestor(req.origin, judged, old)? {
                return Err(MergeError::TargetMoved {
                    target: req.target_branch.to_string(),
                    judged,
                    now: old,
                });
            }
        }
        if is_ancestor(req.origin, source, old)? {
            return Ok(Outcome::UpToDate);
        }
        let fast_forward = !req.squash && is_ancestor(req.origin, old, source)?;
        let new = if fast_forward {
            source
        } else {
            let tree = merged_tree(req.origin, old, source, req)?;
            let mut git = Git::in_dir(req.origin)
                .arg("commit-tree")
                .arg(&tree)
                .arg("-p")
                .arg(old.to_string());
            if !req.squash {
                git = git.arg("-p").arg(source.to_string());
            }
            let out = git.arg("-m").arg(&req.message).read()?;
            ObjectId::from_hex(out.trim().as_bytes()).map_err(|_| GitError::Failed {
                argv: "git commit-tree".into(),
                stderr: format!("unexpected output {out:?}"),
            })?
        };
        let outcome = if fast_forward {
            Outcome::FastForward { old, new }
        } else {
            Outcome::Merged { old, new }
        };
        if req.dry_run {
            return Ok(outcome);
        }
        let checkout = checkout_of(req.origin, req.target_branch)?;
        if let Some(wt) = &checkout {
            // Refuse before anything moves if the checkout cannot follow.
            let dry = Git::in_dir(wt)
                .args(["read-tree", "-m", "-u", "-n"])
                .arg(old.to_string())
                .arg(new.to_string())
                .run();
            if dry.is_err() || !index_matches_head(wt) {
                return Err(MergeError::DirtyCheckout {
                    target: req.target_branch.to_string(),
                    worktree: wt.clone(),
                });
            }
        }
        // Written before the branch moves and removed once its checkout followed: if this
        // process dies in between, the next merge (or `doctor --fix`) finishes the job.
        if let (Some(j), Some(wt)) = (&req.journal, &checkout) {
            let text = format!("{}\n{old}\n{new}\n", wt.display());
            let _ = crate::fsutil::write_atomic(j, text.as_bytes());
        }
        let moved = Git::in_dir(req.origin)
            .args(["update-ref", "-m"])
            .arg(format!("git loop: merge {}", req.source_branch))
            .arg(format!("refs/heads/{}", req.target_branch))
            .arg(new.to_string())
            .arg(old.to_string())
            .run();
        if moved.is_err() {
            // Someone else moved the target between our read and our swap: compute again.
            continue;
        }
        if let Some(wt) = checkout {
            sync_checkout(&wt, old, new)?;
        }
        if let Some(j) = &req.journal {
            let _ = std::fs::remove_file(j);
        }
        return Ok(outcome);
    }
    Err(MergeError::Busy {
        target: req.target_branch.to_string(),
        tries: TRIES,
    })
}

/// The tree of merging `source` into `old`, or the conflict.
fn merged_tree(
    origin: &Path,
    old: ObjectId,
    source: ObjectId,
    req: &MergeRequest,
) -> Result<String, MergeError> {
    let out = Git::in_dir(origin)
        .args(["merge-tree", "--write-tree", "--name-only", "--no-messages"])
        .arg(old.to_string())
        .arg(source.to_string())
        .output_any()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let tree = lines.next().unwrap_or_default().trim().to_string();
    match out.status.code() {
        Some(0) => Ok(tree),
        Some(1) => Err(MergeError::Conflict {
            source_branch: req.source_branch.to_string(),
            target: req.target_branch.to_string(),
            paths: lines
                .map(str::to_string)
                .filter(|l| !l.is_empty())
                .collect(),
        }),
        _ => Err(MergeError::Git(GitError::Failed {
            argv: format!("git -C {} merge-tree --write-tree", origin.display()),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })),
    }
}

/// The worktree of `origin` that has `branch` checked out, if any.
pub fn checkout_of(origin: &Path, branch: &str) -> Result<Option<PathBuf>, MergeError> {
    let list = Git::in_dir(origin)
        .args(["worktree", "list", "--porcelain"])
        .read()?;
    let want = format!("branch refs/heads/{branch}");
    let mut current: Option<PathBuf> = None;
    for line in list.lines() {
        if let Some(p) = line.strip_prefix("worktree ") {
            current = Some(PathBuf::from(p));
        } else if line == want {
            return Ok(current);
        }
    }
    Ok(None)
}

/// Staged changes would be lost by `read-tree -m -u`, which only keeps worktree changes.
fn index_matches_head(wt: &Path) -> bool {
    Git::in_dir(wt)
        .args(["diff", "--cached", "--quiet"])
        .run()
        .is_ok()
}

/// Brings a checkout of the moved branch from `old` to `new`.
fn sync_checkout(wt: &Path, old: ObjectId, new: ObjectId) -> Result<(), MergeError> {
    Git::in_dir(wt)
        .args(["read-tree", "-m", "-u"])
        .arg(old.to_string())
        .arg(new.to_string())
        .run()?;
    Ok(())
}

/// Finishes a checkout update that a killed merge left behind: the journal names the
/// worktree and the old and new commits of its branch. Called with the workspace lock
/// held, so no other `git-loop` is mid-merge; an `index.lock` there is the dead one's.
pub fn recover(journal: &Path) -> Result<bool, MergeError> {
    let Ok(text) = std::fs::read_to_string(journal) else {
        return Ok(false);
    };
    let mut lines = text.lines();
    let (Some(wt), Some(old), Some(new)) = (lines.next(), lines.next(), lines.next()) else {
        let _ = std::fs::remove_file(journal);
        return Ok(false);
    };
    let wt = PathBuf::from(wt);
    let _ = std::fs::remove_file(wt.join(".git/index.lock"));
    let head = Git::in_dir(&wt).args(["rev-parse", "HEAD"]).read()?;
    if head.trim() == new {
        // The branch moved; bring the checkout from old to new (keeps local changes).
        let done = Git::in_dir(&wt)
            .args(["read-tree", "-m", "-u", old, new])
            .run();
        if done.is_err() {
            // The index may already be at `new` (killed after read-tree wrote it).
            Git::in_dir(&wt)
                .args(["read-tree", "-m", "-u", new, new])
                .run()?;
        }
    }
    let _ = std::fs::remove_file(journal);
    Ok(true)
}

/// Is the checkout clean (no staged or unstaged changes to tracked files)? Used by `doctor`
/// to find a checkout left half-updated by a killed command.
pub fn checkout_is_clean(wt: &Path) -> bool {
    Git::in_dir(wt)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .read()
        .map(|s| s.trim().is_empty())
        .unwrap_or(false)
}

/// Restores a managed checkout (the workspace's notes or knowledge origin) to its HEAD.
pub fn repair_checkout(wt: &Path) -> Result<()> {
    let _ = std::fs::remove_file(wt.join(".git/index.lock"));
    Git::in_dir(wt)
        .args(["read-tree", "--reset", "-u", "HEAD"])
        .run()?;
    Ok(())
}

/// The user-facing error for a failed merge, with what to do.
pub fn to_error(e: MergeError, id: &str, what: &str) -> Error {
    let hints: Vec<String> = match &e {
        MergeError::Conflict { target, .. } => vec![
            format!("nothing was changed; resolve it in the loop: `git loop shell {id}`,"),
            format!("then `git fetch origin && git rebase origin/{target}` (fix, `git rebase --continue`), exit,"),
            format!("and {what} again"),
        ],
        MergeError::DirtyCheckout { worktree, .. } => vec![
            format!("nothing was changed; commit or stash the changes in {} first", worktree.display()),
        ],
        MergeError::NoBranch(_) => vec!["`git loop doctor` checks the workspace".into()],
        MergeError::Busy { .. } => vec!["try again in a moment".into()],
        MergeError::TargetMoved { .. } => vec![format!("nothing was changed; {what} again")],
        _ => vec![],
    };
    let mut err = Error::failure(format!("cannot {what} loop {id}")).with_source(e);
    for h in hints {
        err = err.hint(h);
    }
    err
}
