//! What can go wrong reading a repository or importing from a loop, said for the user.

use super::*;

/// Reading a repository failed.
#[derive(Debug, thiserror::Error)]
pub enum GitReadError {
    #[error("could not open a git repository at {path}")]
    Open {
        path: PathBuf,
        #[source]
        source: gix::Error,
    },
    #[error("{name:?} is not a valid reference name: {reason}")]
    InvalidRefName { name: String, reason: String },
    #[error("reference {name} does not exist in {repo}")]
    RefNotFound { repo: PathBuf, name: String },
    #[error("object {id} is missing from {repo}")]
    ObjectMissing { repo: PathBuf, id: ObjectId },
    #[error("object {id} in {repo} could not be decoded")]
    Decode {
        repo: PathBuf,
        id: ObjectId,
        #[source]
        source: gix::Error,
    },
    #[error("{repo}: {action}")]
    Git {
        repo: PathBuf,
        action: String,
        #[source]
        source: gix::Error,
    },
    #[error("I/O error at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{repo} has no working tree at {expected}")]
    NoWorktree { repo: PathBuf, expected: PathBuf },
    #[error("{repo}: {what} is not supported")]
    Unsupported { repo: PathBuf, what: String },
    /// A file of a loop's repository is a link, a FIFO, a device or oversized where git keeps
    /// a regular file: the agent made it so.
    #[error("{source} (the repository may have been tampered with)")]
    Unsafe {
        #[source]
        source: ConfinedError,
    },
    #[error(
        "reading {repo} took more than {} s, the limit (import.read_timeout); it is unusually large, or it was tampered with",
        .after.as_secs()
    )]
    TimedOut {
        repo: PathBuf,
        after: std::time::Duration,
    },
    #[error("reading {repo} was stopped")]
    Interrupted { repo: PathBuf },
    #[error(transparent)]
    Store(Box<ImportError>),
}

impl From<ImportError> for GitReadError {
    fn from(err: ImportError) -> Self {
        match err {
            ImportError::Read(err) => err,
            other => GitReadError::Store(Box::new(other)),
        }
    }
}

/// Bringing a loop's branch into its origin, or moving a branch, failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// an object's content does not hash to its name
    #[error("object {expected} in {repo} is corrupt: its content hashes to {actual}")]
    HashMismatch {
        repo: PathBuf,
        expected: ObjectId,
        actual: ObjectId,
    },
    /// the origin's branch moved between read and update (compare-and-swap lost)
    #[error(
        "{name} in {repo} was expected at {} but is at {}; it was moved concurrently",
        show_target(.expected),
        show_target(.actual)
    )]
    RefMoved {
        repo: PathBuf,
        name: String,
        expected: Option<ObjectId>,
        actual: Option<ObjectId>,
    },
    /// the loop repository's alternates file no longer points at the origin (tampered)
    #[error("the alternates of {repo} no longer name only {expected}: {reason}")]
    AlternatesTampered {
        repo: PathBuf,
        expected: PathBuf,
        reason: String,
    },
    /// an object reachable from the branch is neither in the origin nor in the loop's own store
    #[error("object {id} is missing from {repo}")]
    MissingObject { repo: PathBuf, id: ObjectId },
    /// an object hashes correctly but is not something we let into the origin
    #[error("object {id} in {repo} is malformed: {reason}")]
    MalformedObject {
        repo: PathBuf,
        id: ObjectId,
        reason: String,
        #[source]
        source: Option<gix::Error>,
    },
    /// a file of the untrusted store could not be decoded
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        path: PathBuf,
        reason: String,
        #[source]
        source: Option<gix::Error>,
    },
    /// a path inside the untrusted repository is a symlink or resolves outside of it
    #[error("refusing to read {path}: {reason}")]
    UnsafePath { path: PathBuf, reason: String },
    #[error("{path} is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// an object is larger than the host inflates (the operator's `import.max_object_size`)
    #[error(
        "object {id} in {repo} is {} ({size} bytes), more than the limit of {}",
        crate::fsutil::human_size(*.size),
        crate::fsutil::human_size(*.limit)
    )]
    ObjectTooLarge {
        repo: PathBuf,
        id: ObjectId,
        size: u64,
        limit: u64,
    },
    /// the packs of a loop are more than the host holds in memory (`import.max_pack_size`)
    #[error(
        "the packs of {repo} hold {}, more than the limit of {}",
        crate::fsutil::human_size(*.size),
        crate::fsutil::human_size(*.limit)
    )]
    PacksTooLarge {
        repo: PathBuf,
        size: u64,
        limit: u64,
    },
    /// a file of the loop's repository is a link, a FIFO, a device where a file should be
    #[error("{source} (the repository may have been tampered with)")]
    Unsafe {
        #[source]
        source: ConfinedError,
    },
    #[error("{name:?} is not a valid branch name: {reason}")]
    InvalidBranchName { name: String, reason: String },
    #[error("{name} in {repo} is a symbolic reference, refusing to overwrite it")]
    SymbolicRef { repo: PathBuf, name: String },
    #[error("I/O error at {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{repo}: {action}")]
    Git {
        repo: PathBuf,
        action: String,
        #[source]
        source: gix::Error,
    },
    #[error(transparent)]
    Read(#[from] GitReadError),
}

pub(super) fn show_target(id: &Option<ObjectId>) -> String {
    match id {
        Some(id) => id.to_string(),
        None => "<absent>".into(),
    }
}

pub(super) fn git_read_err(
    repo: &gix::Repository,
    action: impl Into<String>,
) -> impl FnOnce(gix::Error) -> GitReadError {
    let repo = repo.git_dir().to_owned();
    let action = action.into();
    move |source| GitReadError::Git {
        repo,
        action,
        source,
    }
}

pub(super) fn import_git_err(
    repo: &gix::Repository,
    action: impl Into<String>,
) -> impl FnOnce(gix::Error) -> ImportError {
    let repo = repo.git_dir().to_owned();
    let action = action.into();
    move |source| ImportError::Git {
        repo,
        action,
        source,
    }
}

pub(super) fn import_io_err(path: &Path) -> impl FnOnce(io::Error) -> ImportError + '_ {
    move |source| ImportError::Io {
        path: path.to_owned(),
        source,
    }
}
