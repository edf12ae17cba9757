//! Each domain error as the person reads it: its exit code (DESIGN.md section 8) and the
//! hint that says what to do, one case per way a domain call can fail.

use std::io;
use std::path::PathBuf;

use crate::error::Error;

mod loops;
mod proposals;
mod sandbox;
mod setup;

/// `e` exits with `exit`, its message is `message`, and a hint contains `hint`.
#[track_caller]
pub(super) fn says(e: impl Into<Error>, exit: u8, message: &str, hint: &str) {
    let e: Error = e.into();
    assert_eq!(e.kind.exit_code(), exit, "{}", e.one_line());
    assert_eq!(e.message, message);
    assert!(
        e.hints.iter().any(|h| h.contains(hint)),
        "no hint with {hint:?} in {:?}",
        e.hints
    );
}

pub(super) fn path(p: &str) -> PathBuf {
    PathBuf::from(p)
}

pub(super) fn denied() -> io::Error {
    io::Error::from(io::ErrorKind::PermissionDenied)
}

pub(super) fn read_error() -> crate::git::objects::GitReadError {
    crate::git::objects::GitReadError::RefNotFound {
        repo: path("/r"),
        name: "main".into(),
    }
}

pub(super) fn git_failed() -> crate::git::cmd::GitError {
    crate::git::cmd::GitError::Failed {
        argv: "git clone".into(),
        stderr: "fatal".into(),
    }
}
