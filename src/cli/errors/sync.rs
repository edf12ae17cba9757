//! What the person reads when a sync cannot be done, or refuses a conflict.

use crate::error::Error;
use crate::sync::{Report, SyncError, REMOTE};

/// A sync that could not be done, with what to do.
impl From<SyncError> for Error {
    fn from(e: SyncError) -> Error {
        let hint = match &e {
            SyncError::Busy { .. } => "nothing was lost; run `git loop sync` again in a moment",
            SyncError::Refused { .. } => {
                "the remote's rules refuse this push; ask its owner, or keep working locally"
            }
            SyncError::TooLarge { found, .. } => {
                let raise = crate::checkout::bound::raise_to(found.size);
                return Error::failure(e.to_string())
                    .hint(format!(
                        "if the object is meant to be there, raise the limit: git loop config set --operator import.max_object_size {raise}"
                    ))
                    .hint("otherwise ask whoever pushed it to take it out of the remote's history");
            }
            SyncError::Bounded {
                exceeded, bounds, ..
            } => {
                return Error::failure(e.to_string())
                    .hint(crate::sync::bounded_hint(exceeded, bounds))
                    .hint("otherwise ask whoever pushed it to take it out of the remote's history");
            }
            SyncError::Interrupted { .. } => {
                "look at `git status` in that checkout; `git loop doctor --fix` finishes what it can prove"
            }
            _ => "`git loop doctor` checks the workspace",
        };
        Error::failure(e.to_string()).hint(hint)
    }
}

/// How to resolve a conflict `sync` refused: by hand, in the repository, with git.
pub fn conflict_hints(r: &Report) -> Vec<String> {
    let dir = r.path.display();
    vec![
        "nothing was changed; merge by hand, then sync again:".to_string(),
        format!(
            "cd {dir} && git merge {REMOTE}/{}   (fix the files, `git add` them, `git commit`)",
            r.trunk
        ),
        "git loop sync".to_string(),
    ]
}
