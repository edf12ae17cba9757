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
//! would be overwritten make the whole operation refuse before anything moved. How that
//! update survives a kill, and proves its result, is `crate::checkout`'s.
//!
//! git's lock files are judged by who can own them: in the workspace's own repositories
//! only git-loop runs git, under the workspace lock that the caller holds, so one met there
//! is a killed command's, removed and said; in the user's repository it may be the user's
//! own git, so the merge refuses and names the file.

pub mod code;
pub mod gated;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::ObjectId;

pub use crate::checkout::Owner;
use crate::checkout::{self, CheckoutError, Target};
use crate::failpoint;
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
    /// Where to note a checkout update in progress (see [`crate::checkout`]).
    pub journal: PathBuf,
    /// Whose repository this is: the workspace's own (notes, knowledge), where git's lock
    /// files belong to git-loop's commands (`crate::gitlocks`), or the user's.
    pub owner: Owner,
    /// The workspace, whose locks tell who can own a lock file.
    pub workspace: &'a crate::workspace::Workspace,
    /// gitattributes patterns of files that only ever get lines appended (notes'
    /// `inbox.md`, `memory/MEMORY.md`): merged as the union of both sides' lines rather
    /// than as a conflict. The repository's own attributes for them win.
    pub union: Vec<String>,
    /// The source commit the gate judged (`crate::gate`), and the target it was judged
    /// against: what lands is exactly that commit, whatever the branch says by now (an
    /// import may move it at any time), and the merge refuses if the target moved
    /// somewhere that would make the branch carry more than was judged.
    pub gated: Option<(ObjectId, ObjectId)>,
}

/// A merge's outcome, with what was repaired on the way (stale lock files removed, an
/// interrupted checkout update finished), to be said.
#[derive(Debug)]
pub struct Merged {
    pub outcome: Outcome,
    pub notices: Vec<String>,
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
    #[error("{target} kept moving while the merge was computed ({tries} tries)")]
    Busy { target: String, tries: usize },
    #[error("{target} moved to {now} since the branch was checked against {judged}")]
    TargetMoved {
        target: String,
        judged: ObjectId,
        now: ObjectId,
    },
    #[error("{path} exists: a git command is running in {repo}, or one was killed there")]
    Locked { path: PathBuf, repo: PathBuf },
    /// The checkout could not follow. `landed`: the branch had moved already.
    #[error("{}", checkout_message(.landed, .target, .source))]
    Checkout {
        target: String,
        landed: Option<ObjectId>,
        #[source]
        source: Box<CheckoutError>,
    },
    /// An earlier update of this checkout, interrupted, could not be finished.
    #[error("an earlier update of a checkout was interrupted and cannot be finished")]
    Interrupted(#[source] Box<CheckoutError>),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: objects::GitReadError,
    },
}

fn checkout_message(landed: &Option<ObjectId>, target: &str, _source: &CheckoutError) -> String {
    match landed {
        Some(new) => format!("{target} moved to {new}, but its checkout did not follow"),
        None => format!("the checkout of {target} cannot follow the merge"),
    }
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

/// Merges `source_branch` into `target_branch` of `origin` (see the module header). Called
/// with the workspace lock held.
pub fn merge(req: &MergeRequest) -> Result<Merged, MergeError> {
    let mut notices = Vec::new();
    if !req.dry_run {
        if req.owner == Owner::Workspace {
            notices.extend(crate::gitlocks::remove_stale_in_workspace_repo(
                req.workspace,
                &req.origin.join(".git"),
            ));
        }
        let recovered = checkout::recover(&req.journal, &mut notices).map_err(|e| match e {
            CheckoutError::Locked { path, repo } => MergeError::Locked { path, repo },
            e => MergeError::Interrupted(Box::new(e)),
        })?;
        if let Some(r) = recovered {
            notices.push(r.to_string());
        }
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
            return Ok(Merged {
                outcome: Outcome::UpToDate,
                notices,
            });
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
            return Ok(Merged { outcome, notices });
        }
        let checkout = checkout_of(req.origin, req.target_branch)?;
        if req.owner == Owner::User {
            // git's own locks on the branch: a lock file may be the user's git at work, so it
            // is named rather than removed, and never retried as a lost race.
            refuse_ref_locks(req.origin, req.target_branch, checkout.as_deref())?;
        }
        // Refuses before anything moves if the checkout cannot follow; from here on a kill
        // is finished or undone by the next merge or `doctor --fix` (see crate::checkout).
        let update = match &checkout {
            Some(wt) => Some(
                checkout::prepare(
                    &Target {
                        origin: req.origin.to_path_buf(),
                        branch: req.target_branch.to_string(),
                        worktree: wt.clone(),
                        owner: req.owner,
                    },
                    old,
                    new,
                    &req.journal,
                    &mut notices,
                )
                .map_err(|e| match e {
                    CheckoutError::Locked { path, repo } => MergeError::Locked { path, repo },
                    e => MergeError::Checkout {
                        target: req.target_branch.to_string(),
                        landed: None,
                        source: Box::new(e),
                    },
                })?,
            ),
            None => None,
        };
        failpoint::hit("merge:before-update-ref");
        // Left to finish if git-loop is killed meanwhile (a process group of its own): its
        // lock files, left half-way, could not be told from the user's own git at work.
        let moved = Git::in_dir(req.origin)
            .outlive_parent()
            .args(["update-ref", "-m"])
            .arg(format!("git loop: merge {}", req.source_branch))
            .arg(format!("refs/heads/{}", req.target_branch))
            .arg(new.to_string())
            .arg(old.to_string())
            .run();
        if moved.is_err() {
            if let Some(update) = update {
                update.abandon();
            }
            // A lock file, rather than a lost race, is said at once.
            match req.owner {
                Owner::User => {
                    refuse_ref_locks(req.origin, req.target_branch, checkout.as_deref())?
                }
                Owner::Workspace => {
                    notices.extend(crate::gitlocks::remove_stale_in_workspace_repo(
                        req.workspace,
                        &req.origin.join(".git"),
                    ))
                }
            }
            // Someone else moved the target between our read and our swap: compute again.
            continue;
        }
        failpoint::hit("merge:after-update-ref");
        if let Some(update) = update {
            update.finish().map_err(|e| MergeError::Checkout {
                target: req.target_branch.to_string(),
                landed: Some(new),
                source: Box::new(e),
            })?;
        }
        failpoint::hit("merge:done");
        return Ok(Merged { outcome, notices });
    }
    Err(MergeError::Busy {
        target: req.target_branch.to_string(),
        tries: TRIES,
    })
}

/// The lock files of the user's repository that an update of `branch` would meet: the
/// branch's own, and HEAD's of the worktree that has it checked out.
fn refuse_ref_locks(
    origin: &Path,
    branch: &str,
    checkout: Option<&Path>,
) -> Result<(), MergeError> {
    let mut locks = vec![git_path(origin, &format!("refs/heads/{branch}.lock"))?];
    if let Some(wt) = checkout {
        locks.push(git_path(wt, "HEAD.lock")?);
    }
    for lock in locks {
        if lock.symlink_metadata().is_ok() {
            return Err(MergeError::Locked {
                path: lock,
                repo: checkout.unwrap_or(origin).to_path_buf(),
            });
        }
    }
    Ok(())
}

/// `git rev-parse --git-path`: where git keeps `rel` for the repository or worktree `dir`.
fn git_path(dir: &Path, rel: &str) -> Result<PathBuf, MergeError> {
    // Named by the real path: the user knows the repository, not the workspace's link.
    let dir = &std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let out = Git::in_dir(dir)
        .args(["rev-parse", "--git-path", rel])
        .output()?;
    let text = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
    Ok(dir.join(std::ffi::OsStr::from_bytes(text)))
}

/// The tree of merging `source` into `old`, or the conflict.
fn merged_tree(
    origin: &Path,
    old: ObjectId,
    source: ObjectId,
    req: &MergeRequest,
) -> Result<String, MergeError> {
    let mut git = Git::in_dir(origin);
    if !req.union.is_empty() {
        // The lowest layer of attributes, so the repository's own say for the same files
        // wins; git's built-in `union` driver keeps both sides' lines. merge-tree (git
        // 2.47) honours all three ways to hand it attributes: `$GIT_DIR/info/attributes`
        // would be a lasting change to the repository and win over the team's own
        // `.gitattributes`; `--attr-source=TREE` would replace the worktree's attributes
        // entirely; `core.attributesFile` for this one command is neither.
        let file = req.journal.with_extension("gitattributes");
        let text: String = req
            .union
            .iter()
            .map(|pattern| format!("{pattern} merge=union\n"))
            .collect();
        crate::fsutil::write_atomic(&file, text.as_bytes()).map_err(|e| GitError::Failed {
            argv: format!("writing {}", file.display()),
            stderr: e.one_line(),
        })?;
        git = git.arg("-c").arg({
            let mut v = std::ffi::OsString::from("core.attributesFile=");
            v.push(&file);
            v
        });
    }
    let out = git
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

/// The worktree of `origin` that has `branch` checked out, if any. Read NUL-separated: a
/// repository's path may hold a newline.
pub fn checkout_of(origin: &Path, branch: &str) -> Result<Option<PathBuf>, MergeError> {
    let list = Git::in_dir(origin)
        .args(["worktree", "list", "--porcelain", "-z"])
        .output()?;
    let want = format!("branch refs/heads/{branch}");
    let mut current: Option<PathBuf> = None;
    for field in list.stdout.split(|b| *b == 0) {
        if let Some(p) = field.strip_prefix(b"worktree ") {
            current = Some(PathBuf::from(std::ffi::OsStr::from_bytes(p)));
        } else if field == want.as_bytes() {
            return Ok(current);
        }
    }
    Ok(None)
}

/// A merge or publish of loop `id` (`what`: "merge", "publish") that failed: the command
/// layer says what to do about each way it can.
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} loop {id}")]
pub struct MergeFailed {
    pub id: String,
    pub what: &'static str,
    #[source]
    pub source: MergeError,
}

#[cfg(test)]
mod tests {
    //! The engine against real origins in temporary folders: which outcome each shape of
    //! history gives, what the target and its checkout hold afterwards, and what is refused
    //! with nothing moved.
    use super::*;

    use crate::testutil::{git, git_output as run};

    fn rev(dir: &Path, what: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", what]).as_bytes()).unwrap()
    }

    /// Commits `file` with `text` on `branch` (made from `main` if new), then comes back
    /// to `main`; the checkout ends clean at `main`.
    fn commit(dir: &Path, branch: &str, file: &str, text: &str) -> ObjectId {
        if branch != "main" {
            let exists = run(
                dir,
                &[
                    "rev-parse",
                    "-q",
                    "--verify",
                    &format!("refs/heads/{branch}"),
                ],
            )
            .status
            .success();
            let mut args = vec!["switch", "-q"];
            if !exists {
                args.push("-c");
            }
            args.push(branch);
            git(dir, &args);
        }
        std::fs::write(dir.join(file), text).unwrap();
        git(dir, &["add", file]);
        git(dir, &["commit", "-q", "--no-verify", "-m", file]);
        let id = rev(dir, "HEAD");
        git(dir, &["switch", "-q", "main"]);
        id
    }

    /// An origin with `main` (a.txt) checked out and the identity commit-tree needs.
    fn origin() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("origin");
        std::fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["config", "user.name", "A"]);
        git(&dir, &["config", "user.email", "a@example.com"]);
        commit(&dir, "main", "a.txt", "a\n");
        (tmp, dir)
    }

    fn request(origin: &Path) -> MergeRequest<'_> {
        MergeRequest {
            origin,
            source_branch: "loop/x",
            target_branch: "main",
            message: "merge loop/x".into(),
            squash: false,
            dry_run: false,
            journal: origin.parent().unwrap().join("journal"),
            owner: Owner::User,
            // Only read for the workspace's own repositories, which these are not.
            workspace: Box::leak(Box::new(crate::workspace::Workspace::at(
                "/nonexistent-workspace".into(),
                "alice".into(),
            ))),
            union: vec![],
            gated: None,
        }
    }

    /// The outcome of a merge that must succeed.
    fn outcome(req: &MergeRequest) -> Outcome {
        merge(req).unwrap().outcome
    }

    fn parents(dir: &Path, commit: ObjectId) -> Vec<ObjectId> {
        git(dir, &["rev-list", "--parents", "-1", &commit.to_string()])
            .split_whitespace()
            .skip(1)
            .map(|p| ObjectId::from_hex(p.as_bytes()).unwrap())
            .collect()
    }

    fn clean(dir: &Path) -> bool {
        git(dir, &["status", "--porcelain"]).is_empty()
    }

    #[test]
    fn a_branch_ahead_fast_forwards_the_target_and_its_checkout() {
        let (_tmp, dir) = origin();
        let old = rev(&dir, "main");
        let new = commit(&dir, "loop/x", "b.txt", "b\n");
        assert!(!dir.join("b.txt").exists());
        let req = request(&dir);
        let journal = req.journal.clone();
        assert_eq!(outcome(&req), Outcome::FastForward { old, new });
        assert_eq!(rev(&dir, "main"), new);
        assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "b\n");
        assert!(clean(&dir));
        assert!(!journal.exists(), "the journal is removed once done");
        // Again: nothing to do.
        assert_eq!(outcome(&req), Outcome::UpToDate);
    }

    #[test]
    fn a_target_that_moved_on_gets_a_merge_commit_of_both() {
        let (_tmp, dir) = origin();
        let source = commit(&dir, "loop/x", "b.txt", "b\n");
        let old = commit(&dir, "main", "c.txt", "c\n");
        let Outcome::Merged { old: o, new } = outcome(&request(&dir)) else {
            panic!("not a merge")
        };
        assert_eq!(o, old);
        assert_eq!(rev(&dir, "main"), new);
        assert_eq!(parents(&dir, new), vec![old, source]);
        assert_eq!(
            git(&dir, &["log", "-1", "--format=%s", "main"]),
            "merge loop/x"
        );
        assert!(dir.join("b.txt").is_file() && dir.join("c.txt").is_file());
        assert!(clean(&dir));
    }

    #[test]
    fn squash_makes_one_commit_of_one_parent_even_where_a_fast_forward_would_do() {
        let (_tmp, dir) = origin();
        let old = rev(&dir, "main");
        let source = commit(&dir, "loop/x", "b.txt", "b\n");
        let req = MergeRequest {
            squash: true,
            ..request(&dir)
        };
        let Outcome::Merged { old: o, new } = outcome(&req) else {
            panic!("not a squash commit")
        };
        assert_eq!(o, old);
        assert_eq!(parents(&dir, new), vec![old]);
        assert_eq!(
            git(&dir, &["rev-parse", &format!("{new}^{{tree}}")]),
            git(&dir, &["rev-parse", &format!("{source}^{{tree}}")])
        );
        assert!(dir.join("b.txt").is_file() && clean(&dir));
    }

    #[test]
    fn a_conflict_names_its_paths_and_moves_nothing() {
        let (_tmp, dir) = origin();
        commit(&dir, "loop/x", "a.txt", "from the loop\n");
        let old = commit(&dir, "main", "a.txt", "from main\n");
        match merge(&request(&dir)) {
            Err(MergeError::Conflict {
                source_branch,
                target,
                paths,
            }) => {
                assert_eq!(
                    (source_branch.as_str(), target.as_str()),
                    ("loop/x", "main")
                );
                assert_eq!(paths, vec!["a.txt".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rev(&dir, "main"), old);
        assert!(clean(&dir));
    }

    #[test]
    fn a_dry_run_reports_and_moves_nothing() {
        let (_tmp, dir) = origin();
        let source = commit(&dir, "loop/x", "b.txt", "b\n");
        let old = commit(&dir, "main", "c.txt", "c\n");
        let req = MergeRequest {
            dry_run: true,
            ..request(&dir)
        };
        let Outcome::Merged { old: o, new } = outcome(&req) else {
            panic!("not a merge")
        };
        assert_eq!(o, old);
        assert_eq!(parents(&dir, new), vec![old, source]);
        assert_eq!(rev(&dir, "main"), old);
        assert!(!dir.join("b.txt").exists() && clean(&dir));
    }

    #[test]
    fn a_missing_branch_is_named() {
        let (_tmp, dir) = origin();
        match merge(&request(&dir)) {
            Err(MergeError::NoBranch(b)) => assert_eq!(b, "loop/x"),
            other => panic!("{other:?}"),
        }
        commit(&dir, "loop/x", "b.txt", "b\n");
        let req = MergeRequest {
            target_branch: "trunk",
            ..request(&dir)
        };
        match merge(&req) {
            Err(MergeError::NoBranch(b)) => assert_eq!(b, "trunk"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_lands_is_the_judged_commit_whatever_the_branch_says_by_now() {
        let (_tmp, dir) = origin();
        let judged_target = rev(&dir, "main");
        let judged = commit(&dir, "loop/x", "b.txt", "b\n");
        // The loop pushed more after the gate looked.
        commit(&dir, "loop/x", "later.txt", "unjudged\n");
        let req = MergeRequest {
            gated: Some((judged, judged_target)),
            ..request(&dir)
        };
        assert_eq!(
            outcome(&req),
            Outcome::FastForward {
                old: judged_target,
                new: judged
            }
        );
        assert!(!dir.join("later.txt").exists());
    }

    #[test]
    fn a_target_moved_forward_since_judging_still_merges_one_moved_back_refuses() {
        let (_tmp, dir) = origin();
        let base = rev(&dir, "main");
        let judged = commit(&dir, "loop/x", "b.txt", "b\n");
        // Forward: the target only gained commits, the branch carries no more.
        let forward = commit(&dir, "main", "c.txt", "c\n");
        let req = MergeRequest {
            gated: Some((judged, base)),
            dry_run: true,
            ..request(&dir)
        };
        assert!(matches!(outcome(&req), Outcome::Merged { old, .. } if old == forward));
        // Back: judged against `forward`, the target is at `base` now, where the branch
        // would bring what `forward` hid.
        git(&dir, &["reset", "-q", "--hard", &base.to_string()]);
        let req = MergeRequest {
            gated: Some((judged, forward)),
            ..request(&dir)
        };
        match merge(&req) {
            Err(MergeError::TargetMoved {
                target,
                judged: j,
                now,
            }) => {
                assert_eq!((target.as_str(), j, now), ("main", forward, base));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rev(&dir, "main"), base);
    }

    #[test]
    fn a_checkout_that_cannot_follow_refuses_before_anything_moves() {
        let (_tmp, dir) = origin();
        commit(&dir, "loop/x", "a.txt", "from the loop\n");
        let old = rev(&dir, "main");
        // A local change the merge would overwrite.
        std::fs::write(dir.join("a.txt"), "local\n").unwrap();
        match merge(&request(&dir)) {
            Err(MergeError::Checkout {
                target,
                landed: None,
                source,
            }) => match *source {
                CheckoutError::WouldOverwrite { worktree, paths } => {
                    assert_eq!(target, "main");
                    assert_eq!(worktree, dir);
                    assert_eq!(paths, vec!["a.txt".to_string()]);
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        assert_eq!(rev(&dir, "main"), old);
        assert_eq!(
            std::fs::read_to_string(dir.join("a.txt")).unwrap(),
            "local\n"
        );
        // A staged change, even one the merge does not touch: read-tree would drop it.
        git(&dir, &["checkout", "a.txt"]);
        std::fs::write(dir.join("d.txt"), "staged\n").unwrap();
        git(&dir, &["add", "d.txt"]);
        match merge(&request(&dir)) {
            Err(MergeError::Checkout {
                landed: None,
                source,
                ..
            }) => assert!(
                matches!(*source, CheckoutError::Staged { ref branch, .. } if branch == "main"),
                "{source:?}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(rev(&dir, "main"), old);
        assert_eq!(git(&dir, &["diff", "--cached", "--name-only"]), "d.txt");
    }

    #[test]
    fn an_unstaged_change_the_merge_does_not_touch_survives() {
        let (_tmp, dir) = origin();
        commit(&dir, "main", "c.txt", "c\n");
        let new = commit(&dir, "loop/x", "b.txt", "b\n");
        std::fs::write(dir.join("c.txt"), "local\n").unwrap();
        assert!(matches!(outcome(&request(&dir)), Outcome::FastForward { new: n, .. } if n == new));
        assert_eq!(
            std::fs::read_to_string(dir.join("c.txt")).unwrap(),
            "local\n"
        );
        assert!(dir.join("b.txt").is_file());
    }

    #[test]
    fn the_checkout_of_a_branch_is_found_in_any_worktree() {
        let (tmp, dir) = origin();
        commit(&dir, "trunk", "t.txt", "t\n");
        assert_eq!(checkout_of(&dir, "main").unwrap(), Some(dir.clone()));
        assert_eq!(checkout_of(&dir, "trunk").unwrap(), None);
        let linked = tmp.path().canonicalize().unwrap().join("linked");
        git(
            &dir,
            &["worktree", "add", "-q", linked.to_str().unwrap(), "trunk"],
        );
        assert_eq!(checkout_of(&dir, "trunk").unwrap(), Some(linked));
        assert_eq!(checkout_of(&dir, "nowhere").unwrap(), None);
    }

    #[test]
    fn a_lock_file_on_the_users_branch_is_named_and_nothing_moves() {
        let (_tmp, dir) = origin();
        let old = rev(&dir, "main");
        commit(&dir, "loop/x", "b.txt", "b\n");
        let lock = dir.join(".git/refs/heads/main.lock");
        std::fs::write(&lock, "").unwrap();
        match merge(&request(&dir)) {
            Err(MergeError::Locked { path, repo }) => {
                assert_eq!(
                    (path.as_path(), repo.as_path()),
                    (lock.as_path(), dir.as_path())
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(lock.exists(), "the user's lock file is left alone");
        assert_eq!(rev(&dir, "main"), old);
        assert!(!dir.join("b.txt").exists() && clean(&dir));
    }

    #[test]
    fn append_only_files_merge_as_the_union_of_both_sides() {
        let (_tmp, dir) = origin();
        commit(&dir, "main", "inbox.md", "a\n");
        let source = commit(&dir, "loop/x", "inbox.md", "a\nfrom the loop\n");
        let old = commit(&dir, "main", "inbox.md", "a\nfrom main\n");
        // Without the union rule, the same histories conflict.
        assert!(matches!(
            merge(&MergeRequest {
                dry_run: true,
                ..request(&dir)
            }),
            Err(MergeError::Conflict { .. })
        ));
        let req = MergeRequest {
            union: vec!["inbox.md".into()],
            ..request(&dir)
        };
        let Outcome::Merged { old: o, new } = outcome(&req) else {
            panic!("not a merge")
        };
        assert_eq!(o, old);
        assert_eq!(parents(&dir, new), vec![old, source]);
        let text = std::fs::read_to_string(dir.join("inbox.md")).unwrap();
        assert!(
            text.contains("from the loop\n") && text.contains("from main\n"),
            "{text}"
        );
    }

    #[test]
    fn a_checkout_that_did_not_follow_says_whether_the_branch_moved() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let error = |landed| MergeError::Checkout {
            target: "main".into(),
            landed,
            source: Box::new(CheckoutError::Staged {
                worktree: "/w".into(),
                branch: "main".into(),
            }),
        };
        assert_eq!(
            error(None).to_string(),
            "the checkout of main cannot follow the merge"
        );
        assert_eq!(
            error(Some(id)).to_string(),
            format!("main moved to {id}, but its checkout did not follow")
        );
    }

    /// A merge killed after it prepared its checkout update, before the branch moved: a
    /// dry run leaves what it left alone; the next real merge undoes it first, says so,
    /// and merges.
    #[test]
    fn an_interrupted_checkout_update_is_recovered_by_a_merge_not_by_a_dry_run() {
        let (_tmp, dir) = origin();
        let old = rev(&dir, "main");
        let source = commit(&dir, "loop/x", "b.txt", "b\n");
        let req = request(&dir);
        let target = Target {
            origin: dir.clone(),
            branch: "main".into(),
            worktree: dir.clone(),
            owner: Owner::User,
        };
        let update =
            checkout::prepare(&target, old, source, &req.journal, &mut Vec::new()).unwrap();
        std::mem::forget(update); // killed here
        assert!(req.journal.exists());

        let dry = MergeRequest {
            dry_run: true,
            ..request(&dir)
        };
        let merged = merge(&dry).unwrap();
        assert!(merged.notices.is_empty(), "{:?}", merged.notices);
        assert!(req.journal.exists(), "a dry run recovers nothing");
        assert_eq!(rev(&dir, "main"), old);

        let merged = merge(&req).unwrap();
        assert!(
            merged.notices[0].starts_with("undid the interrupted checkout update of "),
            "{:?}",
            merged.notices
        );
        assert!(!req.journal.exists());
        assert_eq!(merged.outcome, Outcome::FastForward { old, new: source });
        assert_eq!(rev(&dir, "main"), source);
        assert!(clean(&dir) && dir.join("b.txt").exists());
    }
}
