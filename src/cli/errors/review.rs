//! What the person reads when a review comment cannot be made, found or answered.

use crate::error::Error;
use crate::review::store::StoreError;
use crate::review::ReviewError;

impl From<ReviewError> for Error {
    fn from(e: ReviewError) -> Error {
        let message = e.to_string();
        match e {
            ReviewError::NoSuchFile { branch, .. } => Error::usage(message).hint(format!(
                "comment on a file the branch has: `git loop review {} --name-only` lists what it changes",
                branch.trim_start_matches("loop/")
            )),
            ReviewError::NotText { .. } => Error::usage(message)
                .hint("comment on the whole file: give its path without a line"),
            ReviewError::NoSuchLine { path, lines, .. } => Error::usage(message).hint(format!(
                "give a line from 1 to {lines}: {path}:LINE or {path}:FIRST-LAST"
            )),
            ReviewError::TooManyLines { .. } => Error::usage(message)
                .hint("comment on the lines that matter, or on the whole file (its path alone)"),
            ReviewError::TooLong(_) => Error::usage(message)
                .hint("say it in fewer words, or in several comments"),
            ReviewError::Empty => Error::usage(message)
                .hint("give it with -m TEXT or -F FILE, or write it in the editor ($VISUAL, $EDITOR)")
                .hint("nothing was recorded"),
            ReviewError::NoBranch { branch, .. } => Error::failure(message).hint(format!(
                "the loop's branch is gone: `git loop doctor` checks the workspace ({branch})"
            )),
            ReviewError::NoComment { loop_id, known, .. } => {
                let e = Error::usage(message);
                if known.is_empty() {
                    e.hint(format!(
                        "it has no comments yet: git loop comment {loop_id} PATH:LINE -m TEXT"
                    ))
                } else {
                    e.hint(format!("its comments: {}", known.join(", ")))
                        .hint(format!("git loop comment {loop_id} --list shows them"))
                }
            }
            ReviewError::Ambiguous { ids, .. } => Error::usage(message)
                .hint(format!("give more of its id: {}", ids.join(", "))),
            ReviewError::Already { id, state } => {
                let e = Error::usage(message);
                if state == "resolved" {
                    e.hint(format!("reopen it with --reopen {id}"))
                } else {
                    e.hint(format!("resolve it with --resolve {id}"))
                }
            }
            ReviewError::Store(source) => store_error(source),
        }
    }
}

fn store_error(e: StoreError) -> Error {
    let hint = match &e {
        StoreError::Busy(_) => "nothing was lost; run the command again in a moment",
        _ => "`git loop doctor` checks the workspace",
    };
    Error::failure(e.to_string()).with_source(e).hint(hint)
}

impl From<crate::review::address::NothingOpen> for Error {
    fn from(e: crate::review::address::NothingOpen) -> Error {
        let id = e.id.clone();
        Error::failure(e.to_string())
            .hint(format!(
                "comment first: git loop comment {id} PATH:LINE -m TEXT"
            ))
            .hint(format!(
                "git loop review {id} shows the comments and their state"
            ))
    }
}

impl From<crate::rebase::RebaseError> for Error {
    fn from(e: crate::rebase::RebaseError) -> Error {
        use crate::rebase::RebaseError as R;
        let message = e.to_string();
        match e {
            R::NoCode(_) => Error::usage(message)
                .hint("only a loop on a repository's code has a branch to rebase"),
            R::NoBase { id } => Error::usage(message)
                .hint(format!("name it: git loop rebase {id} --onto BRANCH")),
            R::NoSuchCommit { .. } => Error::usage(message)
                .hint("give a branch, tag or commit of the repository the loop came from"),
            R::Dirty { id, .. } => Error::failure(message)
                .hint("nothing was changed")
                .hint(format!(
                    "commit them first: git loop autocommit {id} (or in git loop shell {id})"
                )),
            R::InProgress { id } => Error::failure(message)
                .hint(format!(
                    "finish it in the loop: git loop shell {id}, then resolve, `git add` and `git rebase --continue` (or `git rebase --abort`)"
                ))
                .hint(format!(
                    "or let its agent finish it: git loop rebase {id} --agent"
                )),
            R::Failed { id, .. } => Error::failure(message)
                .hint("nothing of your repository changed")
                .hint(format!("look at the loop's repository in git loop shell {id}")),
            R::Conflicts { id, .. } => Error::failure(message)
                .hint("nothing of your repository changed; the rebase waits in the loop's working folder")
                .hint(format!(
                    "finish it by hand: git loop shell {id}, fix the files, `git add` them, `git rebase --continue` (or `git rebase --abort`)"
                ))
                .hint(format!(
                    "or give the conflicts to the loop's agent: git loop rebase {id} --agent"
                )),
            R::Unfinished { id, .. } => Error::failure(message)
                .hint(format!(
                    "finish it by hand: git loop shell {id}, then `git status` says where it stands"
                ))
                .hint(format!("or run the agent on it again: git loop rebase {id} --agent")),
        }
    }
}

impl From<crate::fanout::FanOutError> for Error {
    fn from(e: crate::fanout::FanOutError) -> Error {
        use crate::fanout::FanOutError as F;
        let message = e.to_string();
        match e {
            F::Unknown(_) => Error::usage(message).hint("`git loop list` shows the loops"),
            F::Ambiguous { groups, .. } => {
                Error::usage(message).hint(format!("give more of its name: {}", groups.join(", ")))
            }
            F::NoGroup(_) => Error::usage(message)
                .hint("`git loop new --fan-out N TITLE` makes loops that compare on one task"),
        }
    }
}
