//! A checkout brought along when its branch moves (publish into the notes or knowledge
//! trunk, merge into the user's branch), so that a kill at any moment is finished or undone
//! by the next command, and nothing is reported done that is not proven.
//!
//! The steps, each a point where a kill may land:
//!
//! 1. The index is locked the way git locks it, `<index>.lock` created exclusively, but
//!    holding git-loop's marker, so that a leftover is recognisably ours. A lock file that
//!    is there already belongs to a live git command or a dead one: in the workspace's own
//!    checkouts (whose owner is the workspace lock, held by every caller here) to a dead
//!    one, so it is removed and said; in the user's repository it may be the user's own
//!    git, so the operation refuses and names it.
//! 2. The index is copied to a scratch index next to it, and git works on that copy only
//!    (`GIT_INDEX_FILE`): the real index is always the one from before or the finished one,
//!    never half-written.
//! 3. A dry run refuses changes the update would overwrite; the index must equal the old
//!    tree (staged changes would be lost); the user's own changes (tracked paths that differ
//!    from the index, with their content hashes, deletions included) are written with the
//!    old and new commits to the journal, all before the branch moves.
//! 4. The caller moves the branch (compare-and-swap).
//! 5. `git read-tree -m -u OLD NEW` on the scratch index updates the working tree.
//! 6. The scratch index and the working tree are checked against NEW's tree plus the
//!    recorded changes (through gix in the workspace's checkouts; through git in the user's
//!    repository, which is trusted and may use filters), then the scratch index replaces
//!    the index (one rename), the marker goes, and the journal last.
//!
//! [`recover`] reads the journal a dead command left. The branch still at OLD means the
//! checkout was never touched: undone. At NEW with the index from before, the working tree
//! may be half-written: every path that differs between OLD and NEW must hold OLD's
//! content, NEW's, nothing, or the beginning of NEW's (git was killed writing it), else it
//! is someone else's and recovery stops there; then those paths are written from NEW and
//! the index is rebuilt from the old one. At NEW with the index replaced, only the cleanup
//! was left. Either way the result is checked as in step 6 before the journal goes; a result
//! that cannot be proven keeps the journal and says which paths.
//!
//! Here: the journal and the marker. `update.rs` holds the steps, `recover.rs` the
//! recovery, `read.rs` what stands in a checkout (read through gix, following no link),
//! `head.rs` doctor's comparison with HEAD.

// The error names the journal, the lock and the paths a user needs to act on; it is met
// once per failed command, so its size costs nothing worth boxing it for.
#![allow(clippy::result_large_err)]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::confined::{self, ConfinedError, Tree};
use crate::failpoint;
use crate::git::cmd::{Git, GitError};
use crate::git::objects;

/// Who may hold git's lock files in a checkout's repository besides git-loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Owner {
    /// The workspace's own checkouts (notes, knowledge): only git-loop runs git there, under
    /// the workspace lock, so a lock file met while holding it is a dead command's.
    Workspace,
    /// The user's repository: a lock file may be the user's own git at work.
    User,
}

/// The checkout to bring along.
#[derive(Debug, Clone)]
pub struct Target {
    /// The repository whose branch moves (read through gix for the branch's tip).
    pub origin: PathBuf,
    pub branch: String,
    /// The working tree that has `branch` checked out.
    pub worktree: PathBuf,
    pub owner: Owner,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("{path} exists: a git command is running in {repo}, or one was killed there")]
    Locked { path: PathBuf, repo: PathBuf },
    #[error("{worktree} has local changes the merge would overwrite: {}", paths.join(", "))]
    WouldOverwrite {
        worktree: PathBuf,
        paths: Vec<String>,
    },
    #[error("{worktree} has staged changes (its index differs from {branch}); the update would lose them")]
    Staged { worktree: PathBuf, branch: String },
    #[error("the checkout {worktree} cannot be proven to be {branch} at {new} plus the changes it had: {}", reasons.join("; "))]
    Unproven {
        worktree: PathBuf,
        branch: String,
        new: String,
        journal: PathBuf,
        /// The index lock that keeps git off the checkout until it is proven, if there.
        lock: PathBuf,
        reasons: Vec<String>,
    },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: objects::GitReadError,
    },
    #[error("cannot {what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Confined(#[from] ConfinedError),
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> CheckoutError + 'a {
    move |source| CheckoutError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// A path or file name as git stores it: bytes, written as text when they are UTF-8.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
enum Bytes {
    Text(String),
    Raw(Vec<u8>),
}

impl Bytes {
    fn of(bytes: &[u8]) -> Bytes {
        match std::str::from_utf8(bytes) {
            Ok(s) => Bytes::Text(s.to_string()),
            Err(_) => Bytes::Raw(bytes.to_vec()),
        }
    }
    fn of_path(path: &Path) -> Bytes {
        Bytes::of(path.as_os_str().as_bytes())
    }
    fn as_bytes(&self) -> &[u8] {
        match self {
            Bytes::Text(s) => s.as_bytes(),
            Bytes::Raw(b) => b,
        }
    }
    fn to_path(&self) -> PathBuf {
        PathBuf::from(OsStr::from_bytes(self.as_bytes()))
    }
}

/// What stands at a path of the working tree, as far as proving it unchanged needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Fingerprint {
    Missing,
    /// A regular file: its executable bit and the blob id of its bytes as they are (no
    /// filters).
    File {
        exec: bool,
        hash: String,
    },
    /// A symlink: the blob id of its target.
    Link {
        hash: String,
    },
    Dir,
    Other,
}

/// One of the user's changes before the update.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Change {
    path: Bytes,
    state: Fingerprint,
}

/// What a checkout update in progress needs to prove its end state.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    version: u32,
    origin: Bytes,
    branch: String,
    worktree: Bytes,
    /// The index file of `worktree` (`git rev-parse --git-path index`).
    index: Bytes,
    owner: Owner,
    old: String,
    new: String,
    /// The blob id of the index file's bytes before the update: while the index still has
    /// them, the update never replaced it.
    index_before: String,
    /// Written into the index lock, to know the lock as this update's.
    token: String,
    /// The user's changes to tracked paths before the update.
    changes: Vec<Change>,
}

const MARKER: &[u8] = b"git-loop checkout update ";
#[cfg(test)]
pub(crate) const MARKER_FOR_TESTS: &[u8] = MARKER;

/// The files of one checkout update next to its index.
struct Files {
    index: PathBuf,
    /// `<index>.lock`, git's lock of the index, holding our marker.
    marker: PathBuf,
    /// The scratch index git works on.
    scratch: PathBuf,
}

impl Files {
    fn of(index: &Path) -> Files {
        let dir = index.parent().unwrap_or(Path::new("."));
        let mut marker = index.as_os_str().to_owned();
        marker.push(".lock");
        Files {
            index: index.to_path_buf(),
            marker: PathBuf::from(marker),
            scratch: dir.join("git-loop-index"),
        }
    }

    fn scratch_lock(&self) -> PathBuf {
        let mut p = self.scratch.as_os_str().to_owned();
        p.push(".lock");
        PathBuf::from(p)
    }

    /// Removes the scratch index, its lock, markers being written and (when ours) the
    /// marker.
    fn clean(&self) {
        let _ = fs::remove_file(&self.scratch);
        let _ = fs::remove_file(self.scratch_lock());
        if let Some(dir) = self.index.parent() {
            for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
                if entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("git-loop-marker-"))
                {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        if read_marker(&self.marker).is_some_and(|m| m.ours) {
            let _ = fs::remove_file(&self.marker);
        }
    }
}

/// A lock file's first bytes, and whether they are a git-loop marker.
struct Marker {
    ours: bool,
}

fn read_marker(path: &Path) -> Option<Marker> {
    let mut f = fs::File::open(path).ok()?;
    let mut head = vec![0u8; MARKER.len()];
    let n = f.read(&mut head).unwrap_or(0);
    Some(Marker {
        ours: n == MARKER.len() && head == MARKER,
    })
}

/// Is `path` (a git lock file) git-loop's marker of a checkout update? Its owner is the
/// command that holds the workspace lock.
pub fn is_marker(path: &Path) -> bool {
    read_marker(path).is_some_and(|m| m.ours)
}

/// Is `path` git-loop's scratch index, its lock, or a marker being written
/// (`git-loop-index`, `git-loop-index.lock`, `git-loop-marker-<token>`)?
pub fn is_scratch(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n == "git-loop-index" || n == "git-loop-index.lock" || n.starts_with("git-loop-marker-")
    })
}

/// A checkout update prepared before its branch moves ([`prepare`]).
pub struct Update {
    journal: Journal,
    journal_path: PathBuf,
    files: Files,
}

/// How a recovery ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// The branch never moved; nothing of the checkout was touched.
    Undone { worktree: PathBuf },
    /// The checkout was brought to the new commit and checked: its index and working tree
    /// are the new tree plus the `kept` changes the user had.
    Finished {
        worktree: PathBuf,
        new: String,
        kept: usize,
    },
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovered::Undone { worktree } => write!(
                f,
                "undid the interrupted checkout update of {} (its branch had not moved; nothing there was touched)",
                worktree.display()
            ),
            Recovered::Finished {
                worktree,
                new,
                kept,
            } => write!(
                f,
                "finished the interrupted checkout update of {}: its index and working tree were checked to be {} plus the {kept} changed path{} it had",
                worktree.display(),
                &new[..12.min(new.len())],
                if *kept == 1 { "" } else { "s" }
            ),
        }
    }
}

/// The index file of a working tree.
fn index_path(worktree: &Path) -> Result<PathBuf, CheckoutError> {
    // The user's repository may be a linked worktree, whose index is not under `.git/`.
    let out = Git::in_dir(worktree)
        .args(["rev-parse", "--git-path", "index"])
        .output()?;
    let text = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
    Ok(worktree.join(OsStr::from_bytes(text)))
}

fn bytes_hash(bytes: &[u8]) -> String {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .map(|id| id.to_string())
        .unwrap_or_default()
}

fn file_hash(path: &Path) -> Result<String, CheckoutError> {
    match fs::read(path) {
        Ok(bytes) => Ok(bytes_hash(&bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(io_err("read", path)(e)),
    }
}

fn random_token() -> String {
    format!("{:016x}", rand::random::<u64>())
}

pub mod bound;
mod head;
mod read;
mod recover;
mod update;

pub use head::*;
use read::*;
pub use recover::*;
pub use update::*;

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testutil::git;

    fn rev(dir: &Path, what: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", what]).as_bytes()).unwrap()
    }

    /// What NEW writes at `a.txt`: long enough that a prefix of it is not the whole.
    const A_NEW: &str = "a, rewritten by the update, with more than a few bytes\n";

    /// A checkout with `main` at OLD (a.txt, gone.txt, keep.txt, dir/x) and a branch
    /// `side` at NEW (a.txt rewritten, gone.txt deleted, new/n.txt added); the journal
    /// path in a locks folder next to it.
    struct Fixture {
        _tmp: tempfile::TempDir,
        dir: PathBuf,
        journal: PathBuf,
        old: ObjectId,
        new: ObjectId,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap().join("notes");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["config", "user.name", "A"]);
        git(&dir, &["config", "user.email", "a@example.com"]);
        fs::create_dir(dir.join("dir")).unwrap();
        for (f, t) in [
            ("a.txt", "a\n"),
            ("gone.txt", "bye\n"),
            ("keep.txt", "k\n"),
            ("dir/x", "x\n"),
        ] {
            fs::write(dir.join(f), t).unwrap();
        }
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-q", "-m", "old"]);
        git(&dir, &["switch", "-q", "-c", "side"]);
        fs::write(dir.join("a.txt"), A_NEW).unwrap();
        fs::remove_file(dir.join("gone.txt")).unwrap();
        fs::create_dir(dir.join("new")).unwrap();
        fs::write(dir.join("new/n.txt"), "n\n").unwrap();
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "new"]);
        git(&dir, &["switch", "-q", "main"]);
        let locks = tmp.path().canonicalize().unwrap().join("locks");
        fs::create_dir(&locks).unwrap();
        Fixture {
            old: rev(&dir, "main"),
            new: rev(&dir, "side"),
            journal: locks.join("checkout-notes.pending"),
            dir,
            _tmp: tmp,
        }
    }

    impl Fixture {
        fn target(&self, owner: Owner) -> Target {
            Target {
                origin: self.dir.clone(),
                branch: "main".into(),
                worktree: self.dir.clone(),
                owner,
            }
        }
        fn prepare(&self, owner: Owner) -> Result<Update, CheckoutError> {
            prepare(
                &self.target(owner),
                self.old,
                self.new,
                &self.journal,
                &mut Vec::new(),
            )
        }
        /// The compare-and-swap the caller makes between prepare and finish.
        fn move_branch(&self) {
            git(
                &self.dir,
                &[
                    "update-ref",
                    "refs/heads/main",
                    &self.new.to_string(),
                    &self.old.to_string(),
                ],
            );
        }
        fn read(&self, rel: &str) -> Option<String> {
            fs::read_to_string(self.dir.join(rel)).ok()
        }
        fn status(&self) -> String {
            git(&self.dir, &["status", "--porcelain"])
        }
        /// What [`changed_paths`] finds in the checkout for `owner`.
        fn changed(&self, owner: Owner) -> Vec<String> {
            let index = index_path(&self.dir).unwrap();
            let tree = open_tree(&self.dir).unwrap();
            changed_paths(&self.target(owner), &index, &tree)
                .unwrap()
                .into_iter()
                .map(|p| p.to_string())
                .collect()
        }
        /// Nothing of an update is left: no marker, no scratch files, no journal.
        fn nothing_left(&self) -> bool {
            let g = self.dir.join(".git");
            !g.join("index.lock").exists()
                && !g.join("git-loop-index").exists()
                && !g.join("git-loop-index.lock").exists()
                && fs::read_dir(&g).unwrap().flatten().all(|e| {
                    !e.file_name()
                        .to_string_lossy()
                        .starts_with("git-loop-marker-")
                })
                && !self.journal.exists()
        }
        /// The working tree and index are exactly NEW (but for `status`'s lines).
        fn at_new(&self) {
            assert_eq!(rev(&self.dir, "HEAD"), self.new);
            assert_eq!(self.read("a.txt").as_deref(), Some(A_NEW));
            assert_eq!(self.read("new/n.txt").as_deref(), Some("n\n"));
            assert!(!self.dir.join("gone.txt").exists());
            assert_eq!(git(&self.dir, &["diff", "--cached", "--name-only"]), "");
        }
    }

    #[test]
    fn an_update_brings_the_checkout_along_and_keeps_the_users_change() {
        let f = fixture();
        fs::write(f.dir.join("keep.txt"), "the user's edit\n").unwrap();
        let update = f.prepare(Owner::Workspace).unwrap();
        // While prepared: the index is locked with the marker, the journal written.
        assert!(is_marker(&f.dir.join(".git/index.lock")));
        let journal: Journal = serde_json::from_slice(&fs::read(&f.journal).unwrap()).unwrap();
        assert_eq!(
            (journal.old.as_str(), journal.new.as_str()),
            (&*f.old.to_string(), &*f.new.to_string())
        );
        assert_eq!(journal.changes.len(), 1);
        assert_eq!(journal.changes[0].path.as_bytes(), b"keep.txt");
        assert_eq!(
            journal.changes[0].state,
            Fingerprint::File {
                exec: false,
                hash: bytes_hash(b"the user's edit\n")
            }
        );
        assert_eq!(
            journal.index_before,
            file_hash(&f.dir.join(".git/index")).unwrap()
        );
        f.move_branch();
        update.finish().unwrap();
        f.at_new();
        assert_eq!(f.read("keep.txt").as_deref(), Some("the user's edit\n"));
        assert_eq!(f.status(), "M keep.txt");
        assert!(f.nothing_left());
    }

    #[test]
    fn staged_changes_and_changes_the_update_would_overwrite_refuse_and_leave_nothing() {
        let f = fixture();
        fs::write(f.dir.join("keep.txt"), "staged\n").unwrap();
        git(&f.dir, &["add", "keep.txt"]);
        let index = fs::read(f.dir.join(".git/index")).unwrap();
        let err = f.prepare(Owner::Workspace).err().unwrap();
        assert!(
            matches!(&err, CheckoutError::Staged { branch, .. } if branch == "main"),
            "{err}"
        );
        assert!(f.nothing_left());
        assert_eq!(
            fs::read(f.dir.join(".git/index")).unwrap(),
            index,
            "index untouched"
        );

        git(&f.dir, &["reset", "-q"]);
        fs::write(
            f.dir.join("a.txt"),
            "the user's edit of a file NEW changes\n",
        )
        .unwrap();
        let err = f.prepare(Owner::Workspace).err().unwrap();
        assert!(
            matches!(&err, CheckoutError::WouldOverwrite { paths, .. } if paths == &["a.txt"]),
            "{err}"
        );
        assert!(f.nothing_left());
        assert_eq!(rev(&f.dir, "main"), f.old);
    }

    #[test]
    fn a_lock_file_in_the_way_is_removed_in_the_workspace_and_named_in_the_users_repository() {
        let f = fixture();
        let lock = f.dir.join(".git/index.lock");
        fs::write(&lock, b"a git command's\n").unwrap();
        let err = f.prepare(Owner::User).err().unwrap();
        assert!(
            matches!(&err, CheckoutError::Locked { path, .. } if *path == lock),
            "{err}"
        );
        assert_eq!(
            fs::read(&lock).unwrap(),
            b"a git command's\n",
            "the user's lock kept"
        );
        assert!(!f.journal.exists());

        let mut notices = Vec::new();
        let update = prepare(
            &f.target(Owner::Workspace),
            f.old,
            f.new,
            &f.journal,
            &mut notices,
        )
        .unwrap();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(
            notices[0].contains("left by a killed git command"),
            "{notices:?}"
        );
        update.abandon();
        assert!(f.nothing_left());

        // A marker of a killed git-loop is known as such even in the user's repository.
        let mut marker = MARKER.to_vec();
        marker.extend_from_slice(b"0123\njournal /gone\n");
        fs::write(&lock, &marker).unwrap();
        let mut notices = Vec::new();
        let update = prepare(
            &f.target(Owner::User),
            f.old,
            f.new,
            &f.journal,
            &mut notices,
        )
        .unwrap();
        assert!(
            notices[0].contains("left by a killed git-loop"),
            "{notices:?}"
        );
        update.abandon();
        assert!(f.nothing_left());
        assert_eq!(rev(&f.dir, "main"), f.old);
    }

    #[test]
    fn recovery_without_a_journal_does_nothing_and_an_unmoved_branch_is_undone() {
        let f = fixture();
        assert_eq!(recover(&f.journal, &mut Vec::new()).unwrap(), None);
        let update = f.prepare(Owner::Workspace).unwrap();
        std::mem::forget(update); // killed before the branch moved
                                  // The killed update-ref's own lock holds the new commit; another's anything else.
        let ref_lock = f.dir.join(".git/refs/heads/main.lock");
        fs::write(&ref_lock, format!("{}\n", f.new)).unwrap();
        let mut notices = Vec::new();
        let done = recover(&f.journal, &mut notices).unwrap().unwrap();
        assert_eq!(
            done,
            Recovered::Undone {
                worktree: f.dir.clone()
            }
        );
        assert!(done
            .to_string()
            .starts_with("undid the interrupted checkout update of "));
        assert!(
            !ref_lock.exists() && notices.iter().any(|n| n.contains("main.lock")),
            "{notices:?}"
        );
        assert!(f.nothing_left());
        assert_eq!(rev(&f.dir, "main"), f.old);
        assert_eq!(f.status(), "");

        let update = f.prepare(Owner::Workspace).unwrap();
        std::mem::forget(update);
        fs::write(&ref_lock, format!("{}\n", f.old)).unwrap();
        let mut notices = Vec::new();
        recover(&f.journal, &mut notices).unwrap().unwrap();
        assert!(
            ref_lock.exists(),
            "a lock holding anything else is not ours: {notices:?}"
        );
    }

    #[test]
    fn a_checkout_half_written_when_killed_is_finished_and_proven() {
        for owner in [Owner::Workspace, Owner::User] {
            let f = fixture();
            fs::write(f.dir.join("keep.txt"), "the user's edit\n").unwrap();
            let update = f.prepare(owner).unwrap();
            f.move_branch();
            std::mem::forget(update);
            // read-tree was killed writing a.txt; new/n.txt not written yet, gone.txt not
            // removed yet.
            fs::write(f.dir.join("a.txt"), &A_NEW[..10]).unwrap();
            let mut notices = Vec::new();
            let done = recover(&f.journal, &mut notices).unwrap().unwrap();
            assert_eq!(
                done,
                Recovered::Finished {
                    worktree: f.dir.clone(),
                    new: f.new.to_string(),
                    kept: 1
                },
                "{owner:?}"
            );
            assert!(
                done.to_string().contains(" plus the 1 changed path it had"),
                "{done}"
            );
            f.at_new();
            assert_eq!(f.status(), "M keep.txt", "{owner:?}");
            assert!(f.nothing_left(), "{owner:?}");
        }
    }

    #[test]
    fn a_path_holding_what_neither_version_has_stops_recovery_and_keeps_the_journal() {
        type Spoil = fn(&Path);
        let cases: [(&str, Spoil, &str); 3] = [
            (
                "a.txt",
                |d| fs::write(d.join("a.txt"), "someone else's\n").unwrap(),
                "a.txt (content neither version has)",
            ),
            (
                "gone.txt",
                |d| {
                    fs::remove_file(d.join("gone.txt")).unwrap();
                    std::os::unix::fs::symlink("/etc/passwd", d.join("gone.txt")).unwrap();
                },
                "gone.txt (a symlink neither version has)",
            ),
            (
                "new/n.txt",
                |d| fs::create_dir_all(d.join("new/n.txt")).unwrap(),
                "new/n.txt (a folder)",
            ),
        ];
        for (name, spoil, reason) in cases {
            let f = fixture();
            let update = f.prepare(Owner::Workspace).unwrap();
            f.move_branch();
            std::mem::forget(update);
            spoil(&f.dir);
            let err = recover(&f.journal, &mut Vec::new()).err().unwrap();
            let CheckoutError::Unproven {
                reasons,
                journal,
                lock,
                ..
            } = &err
            else {
                panic!("{name}: {err}");
            };
            assert!(reasons[0].contains(reason), "{name}: {reasons:?}");
            assert!(reasons[0].starts_with("paths the update was writing hold something else now"));
            assert!(
                journal.exists() && lock.exists(),
                "{name}: journal and lock kept"
            );
            assert!(is_marker(lock));
        }
    }

    #[test]
    fn after_the_index_was_replaced_only_the_cleanup_is_left_and_it_is_checked() {
        let f = fixture();
        let update = f.prepare(Owner::Workspace).unwrap();
        f.move_branch();
        // Killed after the scratch index became the index, before the marker went.
        let files = Files::of(&f.dir.join(".git/index"));
        Git::in_dir(&f.dir)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["read-tree", "-m", "-u"])
            .arg(f.old.to_string())
            .arg(f.new.to_string())
            .run()
            .unwrap();
        replace_index(&files).unwrap();
        std::mem::forget(update);
        let done = recover(&f.journal, &mut Vec::new()).unwrap().unwrap();
        assert!(
            matches!(done, Recovered::Finished { kept: 0, .. }),
            "{done:?}"
        );
        f.at_new();
        assert_eq!(f.status(), "");
        assert!(f.nothing_left());

        // The same, but the working tree changed after: not proven, the journal stays.
        let f = fixture();
        let update = f.prepare(Owner::Workspace).unwrap();
        f.move_branch();
        Git::in_dir(&f.dir)
            .env("GIT_INDEX_FILE", &files_of(&f).scratch)
            .args(["read-tree", "-m", "-u"])
            .arg(f.old.to_string())
            .arg(f.new.to_string())
            .run()
            .unwrap();
        replace_index(&files_of(&f)).unwrap();
        std::mem::forget(update);
        fs::write(f.dir.join("dir/x"), "changed after\n").unwrap();
        let err = recover(&f.journal, &mut Vec::new()).err().unwrap();
        let CheckoutError::Unproven { reasons, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(
            reasons,
            &[format!(
                "the working tree differs from {} at dir/x",
                &f.new.to_string()[..12]
            )]
        );
        assert!(f.journal.exists());
    }

    fn files_of(f: &Fixture) -> Files {
        Files::of(&f.dir.join(".git/index"))
    }

    #[test]
    fn a_users_change_altered_since_the_journal_is_not_taken_for_proven() {
        let f = fixture();
        fs::write(f.dir.join("keep.txt"), "the user's edit\n").unwrap();
        let update = f.prepare(Owner::Workspace).unwrap();
        f.move_branch();
        std::mem::forget(update);
        fs::write(f.dir.join("keep.txt"), "edited again\n").unwrap();
        let err = recover(&f.journal, &mut Vec::new()).err().unwrap();
        let CheckoutError::Unproven { reasons, .. } = &err else {
            panic!("{err}")
        };
        assert!(
            reasons
                .iter()
                .any(|r| r == "changes that were there before are not as they were at keep.txt"),
            "{reasons:?}"
        );
        assert!(f.journal.exists());
    }

    #[test]
    fn a_branch_moved_elsewhere_since_is_not_recovered() {
        let f = fixture();
        let update = f.prepare(Owner::Workspace).unwrap();
        std::mem::forget(update);
        // Someone else's commit on main, made while the index is locked (commit-tree and
        // update-ref need no index).
        let tree = git(&f.dir, &["rev-parse", "side^{tree}"]);
        let third = git(
            &f.dir,
            &[
                "commit-tree",
                "-p",
                &f.new.to_string(),
                "-m",
                "third",
                &tree,
            ],
        );
        git(&f.dir, &["update-ref", "refs/heads/main", &third]);
        let err = recover(&f.journal, &mut Vec::new()).err().unwrap();
        let CheckoutError::Unproven { reasons, .. } = &err else {
            panic!("{err}")
        };
        assert!(reasons[0].starts_with("main has moved to "), "{reasons:?}");
        assert!(reasons[0].ends_with(&format!(
            "(the update was from {} to {})",
            &f.old.to_string()[..12],
            &f.new.to_string()[..12]
        )));
        assert!(f.journal.exists());
    }

    #[test]
    fn a_journal_of_an_earlier_version_is_undone_only_when_nothing_moved() {
        let f = fixture();
        fs::write(
            &f.journal,
            format!("{}\n{}\n{}\n", f.dir.display(), f.old, f.new),
        )
        .unwrap();
        let done = recover(&f.journal, &mut Vec::new()).unwrap().unwrap();
        assert_eq!(
            done,
            Recovered::Undone {
                worktree: f.dir.clone()
            }
        );
        assert!(!f.journal.exists());

        f.move_branch();
        git(&f.dir, &["reset", "-q", "--hard"]);
        fs::write(
            &f.journal,
            format!("{}\n{}\n{}\n", f.dir.display(), f.old, f.new),
        )
        .unwrap();
        let err = recover(&f.journal, &mut Vec::new()).err().unwrap();
        let CheckoutError::Unproven { reasons, new, .. } = &err else {
            panic!("{err}")
        };
        assert!(reasons[0].contains("earlier version"), "{reasons:?}");
        assert_eq!(*new, f.new.to_string());
        assert!(f.journal.exists());
    }

    #[test]
    fn journals_are_the_pending_checkout_files_and_name_their_indexes() {
        let f = fixture();
        let locks = f.journal.parent().unwrap();
        for name in [
            "checkout-b.pending",
            "checkout-a.pending",
            "checkout-c.tmp",
            "other.pending",
        ] {
            fs::write(locks.join(name), b"{}").unwrap();
        }
        assert_eq!(
            journals(locks),
            [
                locks.join("checkout-a.pending"),
                locks.join("checkout-b.pending")
            ]
        );
        assert!(journals(&locks.join("missing")).is_empty());
        assert!(
            pending_indexes(locks).is_empty(),
            "undecodable journals name nothing"
        );
        let update = f.prepare(Owner::Workspace).unwrap();
        assert_eq!(pending_indexes(locks), [f.dir.join(".git/index")]);
        update.abandon();
    }

    #[test]
    fn a_comparison_with_head_tells_staged_from_edited_and_a_stale_index_is_rebuilt_only_when_safe()
    {
        let f = fixture();
        let cmp = compare_with_head(&f.dir).unwrap();
        assert!(cmp.staged.is_empty() && cmp.edited.is_empty());
        fs::write(f.dir.join("keep.txt"), "edited\n").unwrap();
        fs::write(f.dir.join("dir/x"), "staged\n").unwrap();
        git(&f.dir, &["add", "dir/x"]);
        let cmp = compare_with_head(&f.dir).unwrap();
        assert_eq!(cmp.staged, ["dir/x"]);
        assert_eq!(cmp.edited, ["dir/x", "keep.txt"]);
        let err = rebuild_stale_index(&f.dir).err().unwrap();
        assert!(
            matches!(&err, CheckoutError::WouldOverwrite { paths, .. } if paths == &["dir/x", "keep.txt"])
        );
        assert!(f.nothing_left());

        // Only the index stale (it says dir/x is staged while the file is HEAD's again).
        fs::write(f.dir.join("keep.txt"), "k\n").unwrap();
        fs::write(f.dir.join("dir/x"), "x\n").unwrap();
        let cmp = compare_with_head(&f.dir).unwrap();
        assert_eq!(
            (cmp.staged.as_slice(), cmp.edited.len()),
            (&["dir/x".to_string()][..], 0)
        );
        rebuild_stale_index(&f.dir).unwrap();
        let cmp = compare_with_head(&f.dir).unwrap();
        assert!(cmp.staged.is_empty() && cmp.edited.is_empty());
        assert_eq!(f.status(), "");
        assert!(f.nothing_left());

        // A symlink staged elsewhere and back at HEAD's target on disk: staged, not edited.
        std::os::unix::fs::symlink("a.txt", f.dir.join("l")).unwrap();
        git(&f.dir, &["add", "l"]);
        git(&f.dir, &["commit", "-q", "-m", "link"]);
        fs::remove_file(f.dir.join("l")).unwrap();
        std::os::unix::fs::symlink("keep.txt", f.dir.join("l")).unwrap();
        git(&f.dir, &["add", "l"]);
        fs::remove_file(f.dir.join("l")).unwrap();
        std::os::unix::fs::symlink("a.txt", f.dir.join("l")).unwrap();
        let cmp = compare_with_head(&f.dir).unwrap();
        assert_eq!(cmp.staged, ["l"]);
        assert!(cmp.edited.is_empty(), "{:?}", cmp.edited);
        fs::remove_file(f.dir.join("l")).unwrap();
        std::os::unix::fs::symlink("gone.txt", f.dir.join("l")).unwrap();
        assert_eq!(compare_with_head(&f.dir).unwrap().edited, ["l"]);
    }

    #[test]
    fn index_differences_name_missing_extra_and_different_entries_up_to_the_limit() {
        let f = fixture();
        let repo = objects::open_trusted(&f.dir).unwrap();
        let old = tree_entries(&repo, f.old).unwrap();
        let new = tree_entries(&repo, f.new).unwrap();
        let index = read_index(&f.dir.join(".git/index")).unwrap();
        assert!(index_differences(&index, &old, 10).is_empty());
        let all = index_differences(&index, &new, 10);
        assert_eq!(all, ["a.txt", "gone.txt", "new/n.txt"]);
        assert_eq!(index_differences(&index, &new, 2).len(), 2);
        assert_eq!(index_differences(&index, &new, 1).len(), 1);
        // Intent to add: an entry, but not the tree's.
        git(&f.dir, &["add", "-N", "gone.txt"]);
        fs::write(f.dir.join("extra"), "e\n").unwrap();
        git(&f.dir, &["add", "-N", "extra"]);
        let index = read_index(&f.dir.join(".git/index")).unwrap();
        assert_eq!(index_differences(&index, &old, 10), ["extra"]);
        // No index file: every tree entry is missing from it.
        let none = read_index(&f.dir.join("no-index")).unwrap();
        assert_eq!(index_differences(&none, &old, 10).len(), old.len());
    }

    #[test]
    fn fingerprints_tell_files_links_folders_and_missing_paths_apart() {
        let f = fixture();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(f.dir.join("keep.txt"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("a.txt", f.dir.join("link")).unwrap();
        let tree = open_tree(&f.dir).unwrap();
        let fp = |p: &str| fingerprint(&tree, p.as_bytes().as_bstr()).unwrap();
        assert_eq!(
            fp("a.txt"),
            Fingerprint::File {
                exec: false,
                hash: bytes_hash(b"a\n")
            }
        );
        assert_eq!(
            fp("keep.txt"),
            Fingerprint::File {
                exec: true,
                hash: bytes_hash(b"k\n")
            }
        );
        assert_eq!(
            fp("link"),
            Fingerprint::Link {
                hash: bytes_hash(b"a.txt")
            }
        );
        assert_eq!(fp("dir"), Fingerprint::Dir);
        assert_eq!(fp("nothing"), Fingerprint::Missing);
        assert_eq!(file_hash(&f.dir.join("nothing")).unwrap(), "");
        assert!(
            file_hash(&f.dir.join("dir")).is_err(),
            "a folder is not read as nothing"
        );
        assert_eq!(file_hash(&f.dir.join("a.txt")).unwrap(), bytes_hash(b"a\n"));
        assert_eq!(bytes_hash(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
    }

    #[test]
    fn git_loops_scratch_files_are_known_by_name() {
        for n in [
            "git-loop-index",
            "git-loop-index.lock",
            "git-loop-marker-0a1b",
        ] {
            assert!(is_scratch(Path::new(n)), "{n}");
        }
        for n in [
            "index",
            "index.lock",
            "git-loop-indexx",
            "x-git-loop-marker-",
        ] {
            assert!(!is_scratch(Path::new(n)), "{n}");
        }
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("index.lock");
        fs::write(&p, &MARKER[..MARKER.len() - 1]).unwrap();
        assert!(!is_marker(&p), "a marker's beginning only");
        assert!(!is_marker(&tmp.path().join("missing")));
        // As long as a marker, but not one.
        fs::write(&p, vec![b'x'; MARKER.len()]).unwrap();
        assert!(!is_marker(&p));
        let mut ours = MARKER.to_vec();
        ours.extend_from_slice(b"0123 more");
        fs::write(&p, &ours).unwrap();
        assert!(is_marker(&p));
    }

    /// What an update leaves next to the index is removed, and the index's lock only
    /// when it is git-loop's marker.
    #[test]
    fn cleaning_up_removes_the_scratch_files_and_only_our_marker() {
        let tmp = tempfile::tempdir().unwrap();
        let index = tmp.path().join("index");
        let files = Files::of(&index);
        assert_eq!(files.marker, tmp.path().join("index.lock"));
        assert_eq!(files.scratch, tmp.path().join("git-loop-index"));
        assert_eq!(files.scratch_lock(), tmp.path().join("git-loop-index.lock"));
        let left = [
            "git-loop-index",
            "git-loop-index.lock",
            "git-loop-marker-00ff",
        ];
        for name in left {
            fs::write(tmp.path().join(name), "x").unwrap();
        }
        fs::write(tmp.path().join("index"), "index").unwrap();
        fs::write(&files.marker, MARKER).unwrap();
        files.clean();
        for name in left {
            assert!(!tmp.path().join(name).exists(), "{name}");
        }
        assert!(!files.marker.exists() && index.exists());
        // Someone else's lock of the index stays.
        fs::write(&files.marker, "a git command's lock").unwrap();
        files.clean();
        assert!(files.marker.exists());
    }

    #[test]
    fn tokens_are_sixteen_hex_digits_and_differ() {
        let (a, b) = (random_token(), random_token());
        for t in [&a, &b] {
            assert!(
                t.len() == 16 && t.bytes().all(|c| c.is_ascii_hexdigit()),
                "{t}"
            );
        }
        assert_ne!(a, b);
    }

    #[test]
    fn journal_paths_round_trip_as_bytes() {
        let odd = b"a\nb\xff".to_vec();
        let j = Bytes::of(&odd);
        assert!(matches!(j, Bytes::Raw(_)));
        let text = serde_json::to_string(&j).unwrap();
        let back: Bytes = serde_json::from_str(&text).unwrap();
        assert_eq!(back.as_bytes(), odd.as_slice());
        let plain = Bytes::of(b"x/y z.md");
        assert_eq!(serde_json::to_string(&plain).unwrap(), "\"x/y z.md\"");
    }

    #[test]
    fn overwritten_paths_are_read_from_git_s_message() {
        let stderr = "error: Your local changes to the following files would be overwritten by merge:\n\ta.c\n\tb/c.h\nPlease commit your changes or stash them before you merge.\n";
        assert_eq!(overwritten_paths(stderr), vec!["a.c", "b/c.h"]);
        let stderr =
            "error: Untracked working tree file 'feature.c' would be overwritten by merge.\n";
        assert_eq!(overwritten_paths(stderr), vec!["feature.c"]);
    }

    #[test]
    fn a_trees_entries_have_their_kinds() {
        let f = fixture();
        std::os::unix::fs::symlink("a.txt", f.dir.join("l")).unwrap();
        fs::write(f.dir.join("dir/run"), "echo\n").unwrap();
        fs::set_permissions(
            f.dir.join("dir/run"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        git(&f.dir, &["add", "l", "dir/run"]);
        let head = f.old.to_string();
        git(
            &f.dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{head},sub"),
            ],
        );
        git(&f.dir, &["commit", "-q", "-m", "kinds"]);
        let repo = objects::open_trusted(&f.dir).unwrap();
        use gix::objs::tree::EntryKind;
        let kinds: Vec<(String, EntryKind)> = tree_entries(&repo, rev(&f.dir, "HEAD"))
            .unwrap()
            .into_iter()
            .map(|(p, (k, _))| (p.to_string(), k))
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.txt".to_string(), EntryKind::Blob),
                ("dir/run".to_string(), EntryKind::BlobExecutable),
                ("dir/x".to_string(), EntryKind::Blob),
                ("gone.txt".to_string(), EntryKind::Blob),
                ("keep.txt".to_string(), EntryKind::Blob),
                ("l".to_string(), EntryKind::Link),
                ("sub".to_string(), EntryKind::Commit),
            ]
        );
    }

    /// In the workspace's checkouts the changed paths are read from the bytes on disk:
    /// an edited file is one, a file marked skip-worktree is not.
    #[test]
    fn a_workspace_checkouts_changed_paths_are_read_from_disk() {
        let f = fixture();
        let index = index_path(&f.dir).unwrap();
        let changed = |owner| f.changed(owner);
        assert!(changed(Owner::Workspace).is_empty());
        fs::write(f.dir.join("a.txt"), "edited too\n").unwrap();
        git(&f.dir, &["update-index", "--skip-worktree", "a.txt"]);
        // The index written well after its files: none of its entries is racy, so an
        // unchanged file is known by its stat data, and a changed one by its stat data
        // too, never taken on trust.
        let later = filetime::FileTime::from_unix_time(
            filetime::FileTime::from_last_modification_time(&fs::metadata(&index).unwrap())
                .unix_seconds()
                + 10,
            0,
        );
        filetime::set_file_mtime(&index, later).unwrap();
        assert!(changed(Owner::Workspace).is_empty());
        fs::write(f.dir.join("keep.txt"), "edited\n").unwrap();
        assert_eq!(changed(Owner::Workspace), ["keep.txt"]);
        assert_eq!(changed(Owner::User), ["keep.txt"]);

        // A symlink: at its target, unchanged; re-pointed, changed.
        let f = fixture();
        std::os::unix::fs::symlink("a.txt", f.dir.join("l")).unwrap();
        git(&f.dir, &["add", "l"]);
        git(&f.dir, &["commit", "-q", "-m", "link"]);
        let changed = |owner| f.changed(owner);
        assert!(changed(Owner::Workspace).is_empty());
        fs::remove_file(f.dir.join("l")).unwrap();
        std::os::unix::fs::symlink("keep.txt", f.dir.join("l")).unwrap();
        assert_eq!(changed(Owner::Workspace), ["l"]);
    }

    #[test]
    fn a_journal_that_cannot_be_read_is_an_error_not_an_absence() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(read_journal(&tmp.path().join("none")).unwrap(), None);
        assert!(read_journal(tmp.path()).is_err());
        assert!(recover(tmp.path(), &mut Vec::new()).is_err());
    }

    /// A killed update whose index lock was taken over by a git command since: in the
    /// user's repository it is named and left alone, in the workspace's removed.
    #[test]
    fn a_foreign_index_lock_at_recovery_is_named_for_the_user_and_removed_in_the_workspace() {
        for owner in [Owner::User, Owner::Workspace] {
            let f = fixture();
            std::mem::forget(f.prepare(owner).unwrap());
            let lock = f.dir.join(".git/index.lock");
            fs::write(&lock, "a git command's lock").unwrap();
            let mut notices = Vec::new();
            let result = recover(&f.journal, &mut notices);
            match owner {
                Owner::User => {
                    assert!(
                        matches!(&result, Err(CheckoutError::Locked { path, .. }) if *path == lock),
                        "{result:?}"
                    );
                    assert!(lock.exists() && f.journal.exists());
                }
                Owner::Workspace => {
                    assert!(
                        matches!(result, Ok(Some(Recovered::Undone { .. }))),
                        "{result:?}"
                    );
                    assert!(notices[0].starts_with("removed the stale "), "{notices:?}");
                    assert!(f.nothing_left());
                }
            }
            assert_eq!(rev(&f.dir, "main"), f.old);
        }
    }

    /// What recovery takes for git's own doing at each differing path, and what for
    /// someone else's.
    #[test]
    fn each_path_a_killed_update_touched_is_judged_by_what_stands_there() {
        use gix::objs::tree::EntryKind;
        let f = fixture();
        let blob = |bytes: &[u8]| {
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes).unwrap()
        };
        let d = &f.dir;
        std::os::unix::fs::symlink("to-old", d.join("l-old")).unwrap();
        std::os::unix::fs::symlink("to-new", d.join("l-new")).unwrap();
        std::os::unix::fs::symlink("elsewhere", d.join("l-other")).unwrap();
        fs::create_dir_all(d.join("with-child")).unwrap();
        fs::create_dir_all(d.join("empty")).unwrap();
        fs::write(d.join("f-old"), "old bytes").unwrap();
        fs::write(d.join("f-other"), "someone's bytes").unwrap();
        let mut old = Entries::new();
        let mut new = Entries::new();
        old.insert("l-old".into(), (EntryKind::Link, blob(b"to-old")));
        new.insert("l-new".into(), (EntryKind::Link, blob(b"to-new")));
        // A link whose target a file of the other version has is not that file.
        old.insert("l-other".into(), (EntryKind::Blob, blob(b"elsewhere")));
        new.insert("with-child/x".into(), (EntryKind::Blob, blob(b"x")));
        old.insert("f-old".into(), (EntryKind::Blob, blob(b"old bytes")));
        new.insert("f-other".into(), (EntryKind::Blob, blob(b"new bytes")));
        old.insert("sub".into(), (EntryKind::Commit, f.old));
        let differing: BTreeSet<BString> = [
            "l-old",
            "l-new",
            "l-other",
            "with-child",
            "empty",
            "f-old",
            "f-other",
            "sub",
            "missing",
        ]
        .into_iter()
        .map(BString::from)
        .collect();
        let repo = objects::open_trusted(d).unwrap();
        let tree = open_tree(d).unwrap();
        let seen: Vec<String> = classify(
            &f.target(Owner::Workspace),
            &repo,
            &tree,
            &differing,
            &old,
            &new,
        )
        .unwrap()
        .into_iter()
        .map(|(p, s)| format!("{p}: {s:?}"))
        .collect();
        assert_eq!(
            seen,
            [
                "empty: Foreign(\"a folder\")",
                "l-new: Ours",
                "l-old: Ours",
                "l-other: Foreign(\"a symlink neither version has\")",
                "missing: Ours",
                "sub: Ours",
                "with-child: Ours",
                "f-old: Ours",
                "f-other: Foreign(\"content neither version has\")",
            ]
        );
    }

    /// In the user's repository files are hashed by git, its filters applied; a name with
    /// a newline cannot be a line of git's input and is hashed alone.
    #[test]
    fn the_users_files_are_hashed_by_git_names_with_newlines_too() {
        let f = fixture();
        fs::write(f.dir.join("new\nline"), "odd\n").unwrap();
        let tree = open_tree(&f.dir).unwrap();
        let paths: Vec<BString> = ["a.txt", "new\nline", "keep.txt", "missing"]
            .into_iter()
            .map(BString::from)
            .collect();
        let blob = |bytes: &[u8]| {
            gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes).ok()
        };
        let want = vec![blob(b"a\n"), blob(b"odd\n"), blob(b"k\n")];
        for owner in [Owner::User, Owner::Workspace] {
            let got = hash_files(&f.target(owner), &tree, &paths[..3]).unwrap();
            assert_eq!(got, want, "{owner:?}");
        }
        assert_eq!(
            hash_files(&f.target(Owner::Workspace), &tree, &paths[3..]).unwrap(),
            [None]
        );
    }

    #[test]
    fn the_folders_left_empty_above_a_path_are_removed_up_to_the_first_that_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("a/b/c")).unwrap();
        fs::write(root.join("a/kept"), "").unwrap();
        let tree = open_tree(root).unwrap();
        remove_empty_parents(&tree, Path::new("a/b/c/gone"));
        assert!(!root.join("a/b").exists());
        assert!(root.join("a/kept").exists());
        fs::remove_file(root.join("a/kept")).unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        remove_empty_parents(&tree, Path::new("a/b/gone"));
        assert!(!root.join("a").exists() && root.exists());
    }

    /// The scratch index is the index's copy with its time (git judges racily clean
    /// entries by it); no index, no copy; an index that cannot be read is an error.
    #[test]
    fn the_scratch_index_is_a_copy_with_the_index_time() {
        let tmp = tempfile::tempdir().unwrap();
        let files = Files::of(&tmp.path().join("index"));
        fs::write(&files.scratch, "stale").unwrap();
        fs::write(files.scratch_lock(), "stale").unwrap();
        copy_index(&files).unwrap();
        assert!(!files.scratch.exists() && !files.scratch_lock().exists());
        fs::write(&files.index, "the index").unwrap();
        let then = filetime::FileTime::from_unix_time(1_700_000_000, 0);
        filetime::set_file_mtime(&files.index, then).unwrap();
        copy_index(&files).unwrap();
        assert_eq!(fs::read(&files.scratch).unwrap(), b"the index");
        assert_eq!(
            filetime::FileTime::from_last_modification_time(&fs::metadata(&files.scratch).unwrap()),
            then
        );
        fs::remove_file(&files.index).unwrap();
        fs::create_dir(&files.index).unwrap();
        assert!(copy_index(&files).is_err());
    }
}
