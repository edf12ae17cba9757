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

#[cfg(test)]
mod tests {
    //! The engine against real origins in temporary folders: which outcome each shape of
    //! history gives, what the target and its checkout hold afterwards, and what is refused
    //! with nothing moved.
    use super::*;
    use std::process::Command;

    /// `git ARGS` in `dir` with a fixed, isolated environment.
    fn run(dir: &Path, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .current_dir(dir)
            .args(args)
            .output()
            .unwrap()
    }

    /// `git ARGS`, which must succeed; stdout trimmed.
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = run(dir, args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

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
            journal: None,
            gated: None,
        }
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
        let journal = dir.parent().unwrap().join("journal");
        let req = MergeRequest {
            journal: Some(journal.clone()),
            ..request(&dir)
        };
        assert_eq!(merge(&req).unwrap(), Outcome::FastForward { old, new });
        assert_eq!(rev(&dir, "main"), new);
        assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "b\n");
        assert!(clean(&dir));
        assert!(!journal.exists(), "the journal is removed once done");
        // Again: nothing to do.
        assert_eq!(merge(&req).unwrap(), Outcome::UpToDate);
    }

    #[test]
    fn a_target_that_moved_on_gets_a_merge_commit_of_both() {
        let (_tmp, dir) = origin();
        let source = commit(&dir, "loop/x", "b.txt", "b\n");
        let old = commit(&dir, "main", "c.txt", "c\n");
        let Outcome::Merged { old: o, new } = merge(&request(&dir)).unwrap() else {
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
        let Outcome::Merged { old: o, new } = merge(&req).unwrap() else {
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
        let Outcome::Merged { old: o, new } = merge(&req).unwrap() else {
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
            merge(&req).unwrap(),
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
        assert!(matches!(merge(&req).unwrap(), Outcome::Merged { old, .. } if old == forward));
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
            Err(MergeError::DirtyCheckout { target, worktree }) => {
                assert_eq!(
                    (target.as_str(), worktree.as_path()),
                    ("main", dir.as_path())
                );
            }
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
        assert!(matches!(
            merge(&request(&dir)),
            Err(MergeError::DirtyCheckout { .. })
        ));
        assert_eq!(rev(&dir, "main"), old);
        assert_eq!(git(&dir, &["diff", "--cached", "--name-only"]), "d.txt");
    }

    #[test]
    fn an_unstaged_change_the_merge_does_not_touch_survives() {
        let (_tmp, dir) = origin();
        commit(&dir, "main", "c.txt", "c\n");
        let new = commit(&dir, "loop/x", "b.txt", "b\n");
        std::fs::write(dir.join("c.txt"), "local\n").unwrap();
        assert!(
            matches!(merge(&request(&dir)).unwrap(), Outcome::FastForward { new: n, .. } if n == new)
        );
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
    fn recovery_brings_a_checkout_left_behind_to_its_branch() {
        let (tmp, dir) = origin();
        let journal = tmp.path().join("journal");
        // No journal: nothing to recover.
        assert!(!recover(&journal).unwrap());
        // Killed after the branch moved, before its checkout followed (and holding the
        // index lock).
        let old = rev(&dir, "main");
        let new = commit(&dir, "loop/x", "b.txt", "b\n");
        git(&dir, &["update-ref", "refs/heads/main", &new.to_string()]);
        std::fs::write(dir.join(".git/index.lock"), "").unwrap();
        std::fs::write(&journal, format!("{}\n{old}\n{new}\n", dir.display())).unwrap();
        assert!(recover(&journal).unwrap());
        assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "b\n");
        assert!(clean(&dir) && !journal.exists());
        assert!(!dir.join(".git/index.lock").exists());
    }

    #[test]
    fn recovery_leaves_a_checkout_whose_branch_never_moved() {
        let (tmp, dir) = origin();
        let journal = tmp.path().join("journal");
        let old = rev(&dir, "main");
        let new = commit(&dir, "loop/x", "b.txt", "b\n");
        // Killed before the swap: the branch and the checkout are both at `old`.
        std::fs::write(&journal, format!("{}\n{old}\n{new}\n", dir.display())).unwrap();
        assert!(recover(&journal).unwrap());
        assert_eq!(rev(&dir, "main"), old);
        assert!(!dir.join("b.txt").exists() && clean(&dir) && !journal.exists());
        // A journal cut short is dropped.
        std::fs::write(&journal, format!("{}\n", dir.display())).unwrap();
        assert!(!recover(&journal).unwrap());
        assert!(!journal.exists());
    }

    #[test]
    fn a_changed_checkout_is_seen_and_repaired_to_its_head() {
        let (_tmp, dir) = origin();
        assert!(checkout_is_clean(&dir));
        std::fs::write(dir.join("a.txt"), "changed\n").unwrap();
        assert!(!checkout_is_clean(&dir));
        std::fs::write(dir.join(".git/index.lock"), "").unwrap();
        repair_checkout(&dir).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
        assert!(checkout_is_clean(&dir));
        // Not a checkout at all: not clean.
        assert!(!checkout_is_clean(&dir.join("no-such-folder")));
    }

    #[test]
    fn every_refusal_says_what_to_do() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let hints = |e: MergeError| {
            let err = to_error(e, "fix-1", "publish");
            assert_eq!(err.message, "cannot publish loop fix-1");
            err.hints.join("\n")
        };
        let conflict = hints(MergeError::Conflict {
            source_branch: "loop/fix-1".into(),
            target: "main".into(),
            paths: vec!["a".into()],
        });
        assert!(conflict.contains("git loop shell fix-1"), "{conflict}");
        assert!(conflict.contains("git rebase origin/main"), "{conflict}");
        assert!(conflict.contains("and publish again"), "{conflict}");
        let dirty = hints(MergeError::DirtyCheckout {
            target: "main".into(),
            worktree: "/w".into(),
        });
        assert!(
            dirty.contains("commit or stash the changes in /w"),
            "{dirty}"
        );
        assert!(hints(MergeError::NoBranch("main".into())).contains("git loop doctor"));
        assert!(hints(MergeError::Busy {
            target: "main".into(),
            tries: TRIES
        })
        .contains("try again"));
        assert!(hints(MergeError::TargetMoved {
            target: "main".into(),
            judged: id,
            now: id
        })
        .contains("publish again"));
    }
}
