//! The user-facing error: what failed, why (a cause chain), what to do (`hint:` lines),
//! and which exit code that means.
//!
//! Domain modules return their own `thiserror` enums naming the path or object at fault;
//! the command layer's conversions (`cli/errors/`) turn them into an [`Error`] and add
//! the hints, because only the command layer knows which next step makes sense for the
//! person at the terminal. A domain error without a hint may be an [`Error`] directly
//! (a message and its cause).

use std::fmt;

/// Which exit code an error maps to (DESIGN.md section 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Something failed: exit 1.
    Failure,
    /// The command line was wrong: exit 2.
    Usage,
    /// The sandbox cannot be had on this machine: exit 3.
    SandboxUnavailable,
}

impl ErrorKind {
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Failure => 1,
            ErrorKind::Usage => 2,
            ErrorKind::SandboxUnavailable => 3,
        }
    }
}

#[derive(Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub hints: Vec<String>,
    pub source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            hints: Vec::new(),
            source: None,
        }
    }

    /// A failure (exit 1).
    pub fn failure(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Failure, message)
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Usage, message)
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The message, then `: cause` for each link of the cause chain, on one line.
    pub fn one_line(&self) -> String {
        let mut line = self.message.clone();
        let mut next: Option<&(dyn std::error::Error + 'static)> = self
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static));
        while let Some(cause) = next {
            let text = cause.to_string();
            if !text.is_empty() && !line.contains(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            next = cause.source();
        }
        line
    }
}

/// What a full or read-only file system looks like in an error's cause chain: the
/// system's error number, or its text in a git command's message.
const STORAGE: [(i32, &str, &str); 3] = [
    (
        libc::ENOSPC,
        "No space left on device",
        "the file system is full: free some space there, then run the command again",
    ),
    (
        libc::EDQUOT,
        "Disk quota exceeded",
        "your disk quota is used up: free some space there, then run the command again",
    ),
    (
        libc::EROFS,
        "Read-only file system",
        "the file system is mounted read-only: remount it read-write (or set GIT_LOOP_HOME to a writable copy of the workspace), then run the command again",
    ),
];

impl Error {
    /// The hint for a full or read-only file system when the cause chain shows one, or
    /// (git often says only "failed to write") when the workspace's file system is in
    /// that state now; none if the error has it already. The error's message names the
    /// file.
    pub fn storage_hint(&self) -> Option<String> {
        let text = self.one_line();
        let mut next: Option<&(dyn std::error::Error + 'static)> = self
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static));
        let mut errno = None;
        while let Some(cause) = next {
            if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                errno = errno.or(io.raw_os_error());
            }
            next = cause.source();
        }
        let from_chain = STORAGE
            .iter()
            .find(|(code, words, _)| errno == Some(*code) || text.contains(words))
            .map(|(_, _, hint)| hint.to_string());
        let hint = from_chain.or_else(|| {
            let root = crate::workspace::default_root().ok()?;
            let stat = nix::sys::statvfs::statvfs(&root).ok()?;
            if stat
                .flags()
                .contains(nix::sys::statvfs::FsFlags::ST_RDONLY)
            {
                Some(format!("the workspace {} is on a read-only file system: remount it read-write (or set GIT_LOOP_HOME to a writable copy of the workspace), then run the command again", root.display()))
            } else if stat.blocks_available() == 0 {
                Some(format!("the file system holding the workspace {} is full: free some space there, then run the command again", root.display()))
            } else {
                None
            }
        })?;
        (!self.hints.contains(&hint)).then_some(hint)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.one_line())
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::failure("i/o error").with_source(err)
    }
}

/// Adds context to a fallible call: `fs::read(p).context(|| format!("cannot read {}", p.display()))?`.
pub trait Context<T> {
    fn context<M: Into<String>>(self, message: impl FnOnce() -> M) -> Result<T>;
}

impl<T, E> Context<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn context<M: Into<String>>(self, message: impl FnOnce() -> M) -> Result<T> {
        self.map_err(|e| Error::failure(message()).with_source(e))
    }
}
