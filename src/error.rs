//! The user-facing error: what failed, why (a cause chain), what to do (`hint:` lines),
//! and which exit code that means.
//!
//! Domain modules return their own `thiserror` enums naming the path or object at fault;
//! commands turn them into an [`Error`] and add the hint, because only the command knows
//! which next step makes sense for the person at the terminal.

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
