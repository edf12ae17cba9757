//! The review comments' branch of the notes repository (`crate::review::store`), synced
//! with the notes remote after its trunk: fetched into a remote-tracking ref of its own,
//! brought together with the local branch (a fast-forward where one side has all of the
//! other's, else a commit whose tree is the union of both sides' files: comments and their
//! events are files written once, so two workspaces never write the same one), and pushed
//! with the fetched tip as the expected old value; someone pushing meanwhile makes it try
//! again, a bounded number of times.
//!
//! What arrives is a teammate's (DESIGN 4.0): before the remote's side is taken (fast-forward
//! or union) every object it brings is judged by its header against
//! `import.max_object_size`, as a fetched trunk is, so no commit or tree of it is inflated
//! past that bound by the union or by any later read of the branch; the union reads tree
//! entries only, at most [`MAX_FILES`] of them, and the comments are read later as data,
//! bounded and escaped.

use super::*;
use crate::review::store::{self, Committer, Store};

/// The most files the comments' branch may hold for a merge of two sides.
pub const MAX_FILES: usize = 200_000;

/// How the comments' branch went, for a notice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommentsSync {
    pub pulled: bool,
    pub pushed: bool,
    pub merged: bool,
    /// Files both sides hold with different contents (kept as this side has them).
    pub kept: Vec<String>,
    /// The remote could not be reached.
    pub offline: Option<String>,
}

impl CommentsSync {
    /// One line for the person, when something moved (or would, in a dry run).
    pub fn line(&self, dry_run: bool) -> Option<String> {
        if let Some(reason) = &self.offline {
            return Some(format!(
                "review comments: the remote cannot be reached ({reason})"
            ));
        }
        let mut parts = Vec::new();
        if self.merged {
            parts.push(if dry_run {
                "would merge both sides"
            } else {
                "merged both sides"
            });
        } else if self.pulled {
            parts.push(if dry_run {
                "would take the remote's"
            } else {
                "took the remote's"
            });
        }
        if self.pushed {
            parts.push(if dry_run { "would push" } else { "pushed" });
        }
        let mut line =
            (!parts.is_empty()).then(|| format!("review comments: {}", parts.join(", ")))?;
        if !self.kept.is_empty() {
            line.push_str(&format!(
                " ({} file{} on the remote differ{}; kept as they are here: {})",
                self.kept.len(),
                if self.kept.len() == 1 { "" } else { "s" },
                if self.kept.len() == 1 { "s" } else { "" },
                shown(&self.kept.join(", "))
            ));
        }
        Some(line)
    }
}

/// Syncs the comments' branch of the notes repository. The caller holds the workspace
/// lock; the comments' lock is taken here.
pub fn sync_comments(ws: &Workspace, opts: &Options) -> Result<CommentsSync, SyncError> {
    let dry_run = opts.dry_run;
    let role = Role::Notes;
    let dir = role.path(ws);
    let mut out = CommentsSync::default();
    if remote_url(&dir).is_none() {
        return Ok(out);
    }
    let other = |e: crate::Error| SyncError::Other {
        role: role.name(),
        message: e.one_line(),
    };
    let _lock = crate::fsutil::Lock::acquire(&ws.comments_lock()).map_err(other)?;
    let store_err = |e: store::StoreError| SyncError::Other {
        role: role.name(),
        message: e.to_string(),
    };
    let st = Store::open(ws).map_err(store_err)?;
    let into = if dry_run {
        dry_run_ref(store::BRANCH)
    } else {
        tracking_ref(store::BRANCH)
    };
    for round in 1..=ROUNDS {
        let remote = match quarantine::fetch(role, &dir, store::BRANCH, &into, &opts.bounds()) {
            Ok(tip) => tip,
            Err(FetchFailure::Offline(reason)) => {
                out.offline = Some(reason);
                return Ok(out);
            }
            Err(FetchFailure::Error(e)) => return Err(e),
        };
        let local = st.tip().map_err(store_err)?;
        if let Some(r) = remote.filter(|r| Some(*r) != local) {
            // What it brings is judged before anything of it is read (ATTACKS 43).
            refuse_oversized(role, &dir, r, local, opts.max_object_size)?;
        }
        let new = match (local, remote) {
            (None, None) => return Ok(out),
            (None, Some(r)) => {
                out.pulled = true;
                r
            }
            (Some(l), None) => l,
            (Some(l), Some(r)) if l == r => return Ok(out),
            (Some(l), Some(r)) => {
                if ancestor(&dir, r, l).map_err(read_err(role))? {
                    l
                } else if ancestor(&dir, l, r).map_err(read_err(role))? {
                    out.pulled = true;
                    r
                } else {
                    out.merged = true;
                    let tree = |c| objects::commit_tree(st.repo(), c).map_err(read_err(role));
                    let (merged, kept) = st
                        .union_tree(tree(l)?, tree(r)?, MAX_FILES)
                        .map_err(store_err)?;
                    out.kept = kept;
                    st.commit(
                        merged,
                        vec![l, r],
                        &format!("Merge {REMOTE}/{} (git loop sync)", store::BRANCH),
                        &Committer::of(ws),
                    )
                    .map_err(store_err)?
                }
            }
        };
        out.pushed = remote != Some(new);
        if dry_run {
            let _ = git(&dir).args(["update-ref", "-d"]).arg(&into).run();
            return Ok(out);
        }
        if local != Some(new)
            && objects::update_branch(st.repo(), store::BRANCH, local, new, "git loop sync")
                .is_err()
        {
            // A comment was written meanwhile: fetch and bring together again.
            out = CommentsSync::default();
            continue;
        }
        if !out.pushed {
            return Ok(out);
        }
        match push(role, &dir, store::BRANCH, new, remote)? {
            Pushed::Done => return Ok(out),
            Pushed::Stale => {
                std::thread::sleep(backoff(round));
                out = CommentsSync::default();
            }
            Pushed::Offline(reason) => {
                out.pushed = false;
                out.offline = Some(reason);
                return Ok(out);
            }
        }
    }
    Err(SyncError::Busy {
        role: role.name(),
        trunk: store::BRANCH.to_string(),
        rounds: ROUNDS,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notice_says_what_moved() {
        let none = CommentsSync::default();
        assert_eq!(none.line(false), None);
        let s = CommentsSync {
            pulled: true,
            pushed: true,
            ..Default::default()
        };
        assert_eq!(
            s.line(false).unwrap(),
            "review comments: took the remote's, pushed"
        );
        assert_eq!(
            s.line(true).unwrap(),
            "review comments: would take the remote's, would push"
        );
        let m = CommentsSync {
            merged: true,
            pulled: true,
            kept: vec!["l/abcdef/comment.toml".into()],
            ..Default::default()
        };
        assert_eq!(
            m.line(false).unwrap(),
            "review comments: merged both sides (1 file on the remote differs; kept as they are here: l/abcdef/comment.toml)"
        );
        let o = CommentsSync {
            offline: Some("no route".into()),
            ..Default::default()
        };
        assert!(o
            .line(false)
            .unwrap()
            .contains("cannot be reached (no route)"));
    }
}
