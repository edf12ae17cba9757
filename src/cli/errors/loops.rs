//! What the person reads when a loop cannot be found, read, imported, committed or removed.

use crate::autocommit::CommitError;
use crate::error::Error;
use crate::git::objects::ImportError;
use crate::loops::{operator_config_shown, LoopError, ReadError};
use crate::removal::RemovalError;

impl From<LoopError> for Error {
    fn from(e: LoopError) -> Error {
        let message = e.to_string();
        match e {
            LoopError::Ambiguous { ids, .. } => ids
                .iter()
                .fold(Error::usage(message), |err, id| {
                    err.hint(format!("did you mean {id}?"))
                })
                .hint("give more of the id"),
            LoopError::NotFound {
                query: _,
                similar,
                any,
            } => similar
                .iter()
                .fold(Error::usage(message), |err, id| {
                    err.hint(format!("did you mean {id}?"))
                })
                .hint(if any {
                    "`git loop list` shows the loops"
                } else {
                    "there are no loops yet: `git loop new TITLE` makes one"
                }),
            LoopError::Removed { query, folder } => Error::usage(message)
                .hint(format!(
                    "its branch loop/{query} still exists, but its folder {} is gone (removed, or deleted by hand)",
                    folder.display()
                ))
                .hint("`git loop list --all` shows it; `git loop doctor` explains"),
            LoopError::Broken { id, source } => {
                let fix = format!("fix the TOML in {} by hand", source.path().display());
                Error::failure(message)
                    .with_source(source)
                    .hint(fix)
                    .hint(format!(
                        "or remove the loop with `git loop rm {id} --force` (its branches stay)"
                    ))
            }
            LoopError::NoRecord { id, .. } => Error::failure(message)
                .hint(format!("remove the folder with `git loop rm {id} --force`")),
            LoopError::Unreadable { source, .. } => {
                let fix = format!(
                    "check that {} is a readable file (`ls -l` it)",
                    source.path().display()
                );
                Error::failure(message).with_source(source).hint(fix)
            }
        }
    }
}

/// A sandbox can write every tree these read: the hints say so.
impl From<ReadError> for Error {
    fn from(e: ReadError) -> Error {
        let message = e.to_string();
        let tampered = |id: &str| {
            format!(
                "a sandbox can write the loop's repositories: look at what is there with `git loop shell {id}`, or remove the loop with `git loop rm --force {id}`"
            )
        };
        match e {
            ReadError::Import {
                branch,
                id,
                git_dir,
                source,
                ..
            } => {
                let hints = match &source {
                    ImportError::HashMismatch { .. } => vec![
                        "the loop's repository holds a corrupt object; nothing of it reached the origin"
                            .to_string(),
                    ],
                    ImportError::AlternatesTampered { .. } => vec![format!(
                        "restore {}/objects/info/alternates or remove the loop",
                        git_dir.display()
                    )],
                    ImportError::ObjectTooLarge { size, .. } => vec![
                        format!(
                            "the host inflates no object larger than import.max_object_size; to let this one in, raise it in the operator config ({}): [import] max_object_size = \"{}M\"",
                            operator_config_shown(),
                            size.div_ceil(1 << 20)
                        ),
                        format!(
                            "or drop the object from {branch} inside the loop (`git loop shell {id}`); nothing of it reached the origin"
                        ),
                    ],
                    ImportError::PacksTooLarge { size, .. } => vec![format!(
                        "the host holds no more than import.max_pack_size of a loop's packs in memory; raise it in the operator config ({}): [import] max_pack_size = \"{}M\"",
                        operator_config_shown(),
                        size.div_ceil(1 << 20)
                    )],
                    ImportError::Unsafe { .. } | ImportError::TooLarge { .. } => vec![tampered(&id)],
                    _ => vec!["`git loop doctor` checks the workspace".to_string()],
                };
                hints
                    .into_iter()
                    .fold(Error::failure(message).with_source(source), Error::hint)
            }
            ReadError::Worktree(path, source) => {
                Error::failure(message).with_source(source).hint(format!(
                    "a sandbox can write {}: look at what is there, or remove the loop with `git loop rm --force`",
                    path.display()
                ))
            }
            ReadError::Personal(path, source) => {
                Error::failure(message).with_source(source).hint(format!(
                    "a sandbox can write the files of {}: look at what is there",
                    path.display()
                ))
            }
            ReadError::Origin(_, source) => Error::failure(message)
                .with_source(source)
                .hint("`git loop doctor` checks the workspace"),
            ReadError::Branches { id, source, .. } => {
                Error::failure(message).with_source(source).hint(tampered(&id))
            }
        }
    }
}

impl From<RemovalError> for Error {
    fn from(e: RemovalError) -> Error {
        let message = e.to_string();
        match e {
            RemovalError::Running(_) => {
                Error::failure(message).hint("wait for it to end, or end it; then remove the loop")
            }
            RemovalError::NotRemoved(_, source) => Error::failure(message)
                .with_source(source)
                .hint("nothing was removed"),
            RemovalError::Journal { id, source, .. } => Error::failure(message)
                .with_source(source)
                .hint(format!(
                    "delete the branches loop/{id} by hand if you want them gone, then remove that file"
                )),
        }
    }
}

impl From<CommitError> for Error {
    fn from(e: CommitError) -> Error {
        let err = Error::failure(e.to_string());
        match e {
            CommitError::InLoop { id, .. } => err.hint(format!("look with `git loop shell {id}`")),
            CommitError::Busy { id, .. } => err.hint(format!(
                "finish or abort what is in progress with `git loop shell {id}`"
            )),
            CommitError::PersonalBusy { dir, .. } => {
                err.hint(format!("finish or abort it in {}", dir.display()))
            }
            CommitError::Personal(_) => {
                err.hint("look with `git status` in the personal repository, or `git loop doctor`")
            }
        }
    }
}
