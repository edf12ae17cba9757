//! Reading a loop's repository as data (DESIGN 4.0).
//!
//! A loop's repository is written by a sandboxed agent, so any file of it may be a symlink
//! to a host secret, a FIFO that blocks whoever opens it, a sparse file of terabytes, a
//! loose object of a few megabytes that inflates to gigabytes, a pack whose index lies, or
//! a tree that names itself under a thousand names until its full expansion holds
//! billions of paths. gix's repository machinery opens such files by path (a FIFO there
//! blocks the host forever), reads refs and `packed-refs` whole and maps the index, so it
//! is never pointed at a loop's repository. What the host needs from one is read here:
//!
//! - every file through a [`Tree`] of the repository's git folder or worktree: no symlink
//!   followed at any component, non-blocking opens of regular files only (a FIFO, socket or
//!   device is refused with an error naming it, never waited on), reads bounded by size;
//! - objects only from the loop's *own* store (loose files and packs below its `objects/`),
//!   never through its alternates; what it borrows from its origin is read from the origin,
//!   which the caller opened as trusted;
//! - an object is inflated only after its header says it fits [`Limits::max_object_size`],
//!   streaming from the file, so a small file can never become a large allocation; packs are
//!   held in memory only up to [`Limits::max_pack_size`] in total;
//! - trees are never expanded: the comparison of `HEAD` with the index descends only where
//!   the index has entries, and the list of changes has a ceiling;
//! - [`within`] runs a whole read on a thread of its own and gives up after
//!   [`Limits::read_timeout`], so even a case nobody foresaw cannot hang a host command.
//!
//! Nothing here runs a program: no hooks, no filters, no fsmonitor, no configuration of the
//! loop's is consulted at all.
//!
//! Here: the bounds and the time limit. `refs.rs` reads refs, `store.rs` objects,
//! `worktree.rs` the working tree against the index.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::objs::Find as _;
use gix::ObjectId;

use super::objects::{GitReadError, ImportError};
use crate::confined::{self, ConfinedError, Kind as PathKind, Tree};

/// A loose ref is one line; anything bigger isn't one.
const MAX_REF_FILE_SIZE: u64 = 64 << 10;
/// `packed-refs` of a repository with a million refs is about 60 MiB.
const MAX_PACKED_REFS_SIZE: u64 = 64 << 20;
pub(crate) const MAX_ALTERNATES_FILE_SIZE: u64 = 64 << 10;
/// The index of a repository with half a million files is about 60 MiB.
const MAX_INDEX_SIZE: u64 = 128 << 20;
/// One `.gitignore`, and all of them together.
const MAX_IGNORE_FILE_SIZE: u64 = 1 << 20;
const MAX_IGNORE_TOTAL: u64 = 32 << 20;
/// Branches listed below `refs/heads` (files and folders counted).
const MAX_REF_ENTRIES: usize = 100_000;
/// Changed paths reported for one worktree; more is refused rather than listed.
const MAX_CHANGES: usize = 1_000_000;
/// git itself gives up after 5 levels of symbolic refs.
const MAX_SYMREF_DEPTH: usize = 5;

/// Bounds on what host-side code reads from a loop's repository. From the operator config
/// (`[import]`): the team and personal layers are writable from sandboxes, and raising
/// these is exactly what an agent that wants to exhaust the host would do.
///
/// What they bound: an import holds at most `max_pack_size` of packs, one object of at
/// most `max_object_size` being decoded (with its delta base: at most three times that),
/// and up to 64 MiB of verified objects waiting to be written children-first, plus a few
/// dozen bytes per object of the loop's own store still to be visited. A loop holding an
/// object over the limit costs a few MiB to refuse: the object's header is all that is
/// inflated. [`worktree_changes`] holds the index (at most 128 MiB on disk), the ignore
/// rules (at most 32 MiB) and one tree at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest object inflated from a loop's store; a larger one is refused by its header.
    pub max_object_size: u64,
    /// Largest total of a loop's pack files held in memory at once (`.pack` and `.idx`).
    pub max_pack_size: u64,
    /// How long one read of a loop's worktree and repository may take.
    pub read_timeout: Duration,
}

impl Limits {
    /// GitHub refuses files over 100 MiB, so an object over that could not be pushed to
    /// most forges anyway; a person who wants one raises the limit.
    pub const DEFAULT_MAX_OBJECT_SIZE: u64 = 100 << 20;
    pub const DEFAULT_MAX_PACK_SIZE: u64 = 256 << 20;
    pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_object_size: Limits::DEFAULT_MAX_OBJECT_SIZE,
            max_pack_size: Limits::DEFAULT_MAX_PACK_SIZE,
            read_timeout: Limits::DEFAULT_READ_TIMEOUT,
        }
    }
}

fn usize_limit(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

fn import_unsafe(source: ConfinedError) -> ImportError {
    match source {
        ConfinedError::TooLarge { path, size, limit } => {
            ImportError::TooLarge { path, size, limit }
        }
        source => ImportError::Unsafe { source },
    }
}

fn read_unsafe(source: ConfinedError) -> GitReadError {
    GitReadError::Unsafe { source }
}

/// Runs `job` on a thread of its own and waits at most `limit` for its answer. Every read
/// here is non-blocking and bounded; this is the bound on everything else (a huge worktree,
/// a case nobody foresaw), so that no host command, and no lock it holds, waits on a loop
/// forever. On time-out the job is told to stop (`interrupt`) and left to finish alone.
pub fn within<T: Send + 'static>(
    limit: Duration,
    what: &Path,
    job: impl FnOnce(&AtomicBool) -> Result<T, GitReadError> + Send + 'static,
) -> Result<T, GitReadError> {
    let interrupt = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let flag = Arc::clone(&interrupt);
    std::thread::Builder::new()
        .name("git-loop-read".into())
        .spawn(move || {
            let _ = tx.send(job(&flag));
        })
        .map_err(|source| GitReadError::Io {
            path: what.to_owned(),
            source,
        })?;
    match rx.recv_timeout(limit) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            interrupt.store(true, Ordering::Relaxed);
            Err(GitReadError::TimedOut {
                repo: what.to_owned(),
                after: limit,
            })
        }
        // The job panicked (its message is on stderr).
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(GitReadError::Unsupported {
            repo: what.to_owned(),
            what: "what is there (reading it failed unexpectedly)".into(),
        }),
    }
}

fn check_interrupt(interrupt: &AtomicBool, repo: &Path) -> Result<(), GitReadError> {
    if interrupt.load(Ordering::Relaxed) {
        return Err(GitReadError::Interrupted {
            repo: repo.to_owned(),
        });
    }
    Ok(())
}

pub(crate) enum RefValue {
    Object(ObjectId),
    Symbolic(gix::refs::FullName),
}

mod refs;
mod store;
mod worktree;

pub use refs::*;
pub use store::*;
pub use worktree::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_gives_up_after_its_bound_and_interrupts_the_job() {
        let (tx, rx) = std::sync::mpsc::channel();
        let err = within(Duration::from_millis(50), Path::new("/loop"), move |stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = tx.send(());
            Ok(())
        })
        .unwrap_err();
        assert!(matches!(err, GitReadError::TimedOut { .. }), "{err:?}");
        rx.recv_timeout(Duration::from_secs(5))
            .expect("the job was told to stop");
        assert_eq!(
            within(Duration::from_secs(5), Path::new("/loop"), |_| Ok(7)).unwrap(),
            7
        );
    }

    #[test]
    fn a_read_told_to_stop_stops() {
        let stop = AtomicBool::new(false);
        assert!(check_interrupt(&stop, Path::new("/loop")).is_ok());
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(
            check_interrupt(&stop, Path::new("/loop")),
            Err(GitReadError::Interrupted { repo }) if repo == Path::new("/loop")
        ));
        // A job that panics is an error of its own, not a hang or a crash.
        let err = within(
            Duration::from_secs(5),
            Path::new("/loop"),
            |_| -> Result<(), _> { panic!("unforeseen") },
        )
        .unwrap_err();
        assert!(matches!(err, GitReadError::Unsupported { .. }), "{err:?}");
    }

    #[test]
    fn bounds_are_the_documented_defaults() {
        let l = Limits::default();
        assert_eq!(l.max_object_size, 100 << 20);
        assert_eq!(l.max_pack_size, 256 << 20);
        assert_eq!(l.read_timeout, Duration::from_secs(60));
        assert_eq!(usize_limit(7), 7);
        assert_eq!(usize_limit(u64::MAX), usize::MAX);
    }

    #[test]
    fn a_branch_is_peeked_from_its_loose_file_or_packed_refs_and_nothing_odd() {
        use std::fs;
        let sha1 = gix::hash::Kind::Sha1;
        let a = "1111111111111111111111111111111111111111";
        let b = "2222222222222222222222222222222222222222";
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join("git");
        fs::create_dir_all(git.join("refs/heads/loop")).unwrap();
        fs::write(git.join("refs/heads/loose"), format!("{a}\n")).unwrap();
        fs::write(
            git.join("packed-refs"),
            format!(
                "# pack-refs with: peeled\n{b} refs/heads/packed\r\n^{a}\n{a} refs/heads/loose\n"
            ),
        )
        .unwrap();
        let peek = |name: &str| peek_branch(&git, name, sha1).map(|id| id.to_string());
        assert_eq!(
            peek("refs/heads/loose").as_deref(),
            Some(a),
            "the loose file wins"
        );
        assert_eq!(peek("refs/heads/packed").as_deref(), Some(b));
        assert_eq!(peek("refs/heads/missing"), None);
        fs::write(git.join("refs/heads/sym"), "ref: refs/heads/loose\n").unwrap();
        assert_eq!(
            peek("refs/heads/sym"),
            None,
            "symbolic: the full path names it"
        );
        fs::write(git.join("refs/heads/junk"), "not an id\n").unwrap();
        assert_eq!(peek("refs/heads/junk"), None);
        let long = "3".repeat(64);
        fs::write(git.join("refs/heads/long"), format!("{long}\n")).unwrap();
        assert_eq!(peek("refs/heads/long"), None, "not a SHA-1 id");
        // A link is never followed, to a file or to a folder.
        let elsewhere = tmp.path().join("elsewhere");
        fs::write(&elsewhere, format!("{a}\n")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, git.join("refs/heads/link")).unwrap();
        assert_eq!(peek("refs/heads/link"), None);
        std::os::unix::fs::symlink(tmp.path(), git.join("refs/heads/loop/dir")).unwrap();
        assert_eq!(peek("refs/heads/loop/dir/elsewhere"), None);
        assert_eq!(peek("not a ref name"), None);
        assert_eq!(
            peek_branch(&tmp.path().join("none"), "refs/heads/loose", sha1),
            None
        );
    }
}
