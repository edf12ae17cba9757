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
