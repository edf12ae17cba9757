//! What the person reads when a merge or publish fails: what was changed, and how to go
//! on from each way it can fail.

use std::path::Path;

use crate::checkout::CheckoutError;
use crate::error::Error;
use crate::publish::{MergeError, MergeFailed};

/// A merge of a code loop refused before it began.
impl From<crate::publish::code::MergeLoopError> for Error {
    fn from(e: crate::publish::code::MergeLoopError) -> Error {
        use crate::publish::code::MergeLoopError as M;
        let message = e.to_string();
        match e {
            M::NoCode(_) => Error::usage(message).hint("`git loop publish` publishes its notes"),
            M::NoTarget(id) => {
                Error::usage(message).hint(format!("git loop merge {id} --into BRANCH"))
            }
            M::Unchecked {
                target,
                origin,
                source,
                ..
            } => Error::failure(message).with_source(source).hint(format!(
                "is {} a branch of {}?",
                target,
                origin.display()
            )),
        }
    }
}

/// A failed merge or publish, with what to do.
impl From<MergeFailed> for Error {
    fn from(f: MergeFailed) -> Error {
        let MergeFailed {
            id,
            what,
            source: e,
        } = f;
        let id = id.as_str();
        merge_error(e, id, what)
    }
}

fn merge_error(e: MergeError, id: &str, what: &str) -> Error {
    let hints: Vec<String> = match &e {
        MergeError::Conflict { target, .. } if what == "merge" => vec![
            format!("nothing was changed; {target} moved since the loop began: rebase the loop onto it in its sandbox,"),
            format!("`git loop rebase {id}` (or `git loop rebase {id} --agent` to have its agent resolve the conflicts),"),
            format!("review it, and {what} again"),
        ],
        MergeError::Conflict { target, .. } => vec![
            format!("nothing was changed; resolve it in the loop: `git loop shell {id}`,"),
            format!("then `git fetch origin && git rebase origin/{target}` (fix, `git rebase --continue`), exit,"),
            format!("and {what} again"),
        ],
        MergeError::Locked { path, .. } => vec![
            "nothing was changed".into(),
            format!("if no git command is running there, remove it: `rm {}`; then {what} again", shell_quoted(path)),
        ],
        MergeError::Checkout { landed: None, source, .. } => checkout_hints(source, what, false),
        MergeError::Checkout { landed: Some(_), source, .. } => checkout_hints(source, what, true),
        MergeError::Interrupted(source) => checkout_hints(source, what, true),
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

fn checkout_hints(e: &CheckoutError, what: &str, landed: bool) -> Vec<String> {
    match e {
        CheckoutError::WouldOverwrite { worktree, .. } | CheckoutError::Staged { worktree, .. } => vec![
            format!("nothing was changed; commit or stash the changes in {} first", worktree.display()),
        ],
        CheckoutError::Unproven { worktree, journal, lock, .. } => vec![
            format!("look at `git status` in {}: the paths named above are not as the update left them", worktree.display()),
            format!(
                "once the checkout is as it should be, `rm {}`{}; until then `git loop doctor` reports it",
                shell_quoted(journal),
                if lock.exists() { format!(" and `rm {}` (which holds git off it meanwhile)", shell_quoted(lock)) } else { String::new() }
            ),
        ],
        _ if landed => vec![
            "the branch moved; `git loop doctor --fix` (or the next publish or merge) finishes the checkout".into(),
        ],
        _ => vec![format!("nothing was changed; {what} again")],
    }
}

/// A path as the user can paste it into a shell.
fn shell_quoted(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::cmd::GitError;
    use gix::ObjectId;

    #[test]
    fn a_merge_that_conflicts_suggests_the_loops_rebase_and_a_publish_the_shell() {
        let conflict = || MergeError::Conflict {
            source_branch: "loop/fix-1".into(),
            target: "main".into(),
            paths: vec!["a.c".into()],
        };
        let merge = Error::from(MergeFailed {
            id: "fix-1".into(),
            what: "merge",
            source: conflict(),
        })
        .hints
        .join("\n");
        assert!(merge.contains("`git loop rebase fix-1`"), "{merge}");
        assert!(merge.contains("git loop rebase fix-1 --agent"), "{merge}");
        let publish = Error::from(MergeFailed {
            id: "fix-1".into(),
            what: "publish",
            source: conflict(),
        })
        .hints
        .join("\n");
        assert!(publish.contains("git loop shell fix-1"), "{publish}");
        assert!(!publish.contains("git loop rebase"), "{publish}");
    }

    #[test]
    fn every_refusal_says_what_to_do() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let hints = |e: MergeError| {
            let err = Error::from(MergeFailed {
                id: "fix-1".into(),
                what: "publish",
                source: e,
            });
            assert_eq!(err.message, "cannot publish loop fix-1");
            err.hints.join("\n")
        };
        let locked = hints(MergeError::Locked {
            path: "/r/.git/index.lock".into(),
            repo: "/r".into(),
        });
        assert!(
            locked.contains("remove it: `rm /r/.git/index.lock`; then publish again"),
            "{locked}"
        );
        let unfinished = || {
            Box::new(CheckoutError::Git(GitError::Failed {
                argv: "git read-tree".into(),
                stderr: String::new(),
            }))
        };
        let moved = hints(MergeError::Checkout {
            target: "main".into(),
            landed: Some(id),
            source: unfinished(),
        });
        assert!(
            moved.contains("the branch moved; `git loop doctor --fix`"),
            "{moved}"
        );
        let interrupted = hints(MergeError::Interrupted(unfinished()));
        assert!(
            interrupted.contains("the branch moved; `git loop doctor --fix`"),
            "{interrupted}"
        );
        let not_moved = hints(MergeError::Checkout {
            target: "main".into(),
            landed: None,
            source: unfinished(),
        });
        assert_eq!(not_moved, "nothing was changed; publish again");
        let unproven = hints(MergeError::Checkout {
            target: "main".into(),
            landed: Some(id),
            source: Box::new(CheckoutError::Unproven {
                worktree: "/w".into(),
                branch: "main".into(),
                new: id.to_string(),
                journal: "/ws/locks/it's.json".into(),
                lock: "/nonexistent/index.lock".into(),
                reasons: vec![],
            }),
        });
        assert!(
            unproven.contains("look at `git status` in /w"),
            "{unproven}"
        );
        assert!(
            unproven.contains("`rm '/ws/locks/it'\\''s.json'`; until then"),
            "{unproven}"
        );
        assert_eq!(
            shell_quoted(Path::new("/a/b_c-1.2+x:y@z")),
            "/a/b_c-1.2+x:y@z"
        );
        assert_eq!(shell_quoted(Path::new("/a b/c")), "'/a b/c'");
        assert_eq!(shell_quoted(Path::new("/a;b")), "'/a;b'");
        let conflict = hints(MergeError::Conflict {
            source_branch: "loop/fix-1".into(),
            target: "main".into(),
            paths: vec!["a".into()],
        });
        assert!(conflict.contains("git loop shell fix-1"), "{conflict}");
        assert!(conflict.contains("git rebase origin/main"), "{conflict}");
        assert!(conflict.contains("and publish again"), "{conflict}");
        let dirty = hints(MergeError::Checkout {
            target: "main".into(),
            landed: None,
            source: Box::new(CheckoutError::WouldOverwrite {
                worktree: "/w".into(),
                paths: vec!["a".into()],
            }),
        });
        assert!(
            dirty.contains("commit or stash the changes in /w"),
            "{dirty}"
        );
        assert!(hints(MergeError::NoBranch("main".into())).contains("git loop doctor"));
        assert!(hints(MergeError::Busy {
            target: "main".into(),
            tries: 20
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
