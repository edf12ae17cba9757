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

/// Locks the index with our marker. A lock file already there: a dead git-loop's marker is
/// removed; another lock is removed in the workspace's checkouts (a dead command's) and
/// named in the user's repository.
fn lock_index(
    target: &Target,
    files: &Files,
    journal_path: &Path,
    token: &str,
    notices: &mut Vec<String>,
) -> Result<(), CheckoutError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = MARKER.to_vec();
    text.extend_from_slice(token.as_bytes());
    text.extend_from_slice(b"\njournal ");
    text.extend_from_slice(journal_path.as_os_str().as_bytes());
    text.push(b'\n');
    // The marker is written whole to a file of its own and then linked into place: a link
    // is created atomically or not at all, so a kill never leaves a lock file that is not
    // recognisably ours (git's way, create-then-write, could leave an empty one).
    let dir = files.index.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!("git-loop-marker-{token}"));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o644)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&text).and_then(|()| f.sync_all()));
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(io_err("write", &tmp)(e));
    }
    let result = (|| {
        for _ in 0..3 {
            match fs::hard_link(&tmp, &files.marker) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let ours = is_marker(&files.marker);
                    if !ours && target.owner == Owner::User {
                        return Err(CheckoutError::Locked {
                            path: files.marker.clone(),
                            repo: target.worktree.clone(),
                        });
                    }
                    fs::remove_file(&files.marker).map_err(io_err("remove", &files.marker))?;
                    notices.push(format!(
                        "removed the stale {} (left by a killed {}; no git-loop command holds the workspace)",
                        files.marker.display(),
                        if ours { "git-loop" } else { "git command" }
                    ));
                }
                Err(e) => return Err(io_err("create", &files.marker)(e)),
            }
        }
        Err(CheckoutError::Locked {
            path: files.marker.clone(),
            repo: target.worktree.clone(),
        })
    })();
    let _ = fs::remove_file(&tmp);
    result
}

/// Copies the index to the scratch index, keeping its modification time: git judges
/// entries written in the same second as the index "racily clean" by that time.
fn copy_index(files: &Files) -> Result<(), CheckoutError> {
    let _ = fs::remove_file(&files.scratch);
    let _ = fs::remove_file(files.scratch_lock());
    match fs::copy(&files.index, &files.scratch) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err("copy", &files.index)(e)),
    }
    if let Ok(mtime) = fs::metadata(&files.index).and_then(|m| m.modified()) {
        let f = fs::File::options()
            .write(true)
            .open(&files.scratch)
            .map_err(io_err("open", &files.scratch))?;
        f.set_modified(mtime)
            .map_err(io_err("set the time of", &files.scratch))?;
    }
    Ok(())
}

/// Every non-tree entry of a commit's tree by path: (kind, id).
fn tree_entries(
    repo: &gix::Repository,
    commit: ObjectId,
) -> Result<BTreeMap<BString, (gix::objs::tree::EntryKind, ObjectId)>, CheckoutError> {
    let read = |source| CheckoutError::Read {
        path: repo.git_dir().to_path_buf(),
        source,
    };
    let root = objects::commit_tree(repo, commit).map_err(read)?;
    let mut out = BTreeMap::new();
    let mut pending = vec![(BString::default(), root)];
    while let Some((prefix, id)) = pending.pop() {
        for item in objects::tree_items(repo, id).map_err(read)? {
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push(b'/');
            }
            path.extend_from_slice(&item.name);
            if item.mode == 0o040000 {
                pending.push((path, item.id));
            } else {
                let kind = match item.mode {
                    0o100755 => gix::objs::tree::EntryKind::BlobExecutable,
                    0o120000 => gix::objs::tree::EntryKind::Link,
                    0o160000 => gix::objs::tree::EntryKind::Commit,
                    _ => gix::objs::tree::EntryKind::Blob,
                };
                out.insert(path, (kind, item.id));
            }
        }
    }
    Ok(out)
}

type Entries = BTreeMap<BString, (gix::objs::tree::EntryKind, ObjectId)>;

fn read_index(path: &Path) -> Result<gix::index::File, CheckoutError> {
    if !path.exists() {
        return Ok(gix::index::File::from_state(
            gix::index::State::new(gix::hash::Kind::Sha1),
            path.to_path_buf(),
        ));
    }
    gix::index::File::at(
        path,
        gix::hash::Kind::Sha1,
        false,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| CheckoutError::Io {
        what: "read the index",
        path: path.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
    })
}

/// Paths where the index differs from `tree` (a missing, extra, unmerged or different
/// entry), at most `limit` of them.
fn index_differences(index: &gix::index::File, tree: &Entries, limit: usize) -> Vec<BString> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for entry in index.entries() {
        let path = entry.path(index);
        seen.insert(path.to_owned());
        let kind = entry.mode.to_tree_entry_mode().map(|m| m.kind());
        let same = entry.stage_raw() == 0
            && !entry
                .flags
                .contains(gix::index::entry::Flags::INTENT_TO_ADD)
            && tree
                .get(path)
                .is_some_and(|(k, id)| Some(*k) == kind && *id == entry.id);
        if !same {
            out.push(path.to_owned());
        }
        if out.len() >= limit {
            return out;
        }
    }
    for path in tree.keys() {
        if !seen.contains(path) {
            out.push(path.clone());
            if out.len() >= limit {
                break;
            }
        }
    }
    out
}

/// What stands at `path` of the working tree, read without following any link.
fn fingerprint(tree: &Tree, path: &BStr) -> Result<Fingerprint, CheckoutError> {
    let rel = Path::new(OsStr::from_bytes(path));
    Ok(match tree.kind(rel)? {
        None => Fingerprint::Missing,
        Some(confined::Kind::Dir) => Fingerprint::Dir,
        Some(confined::Kind::Other) => Fingerprint::Other,
        Some(confined::Kind::Symlink) => Fingerprint::Link {
            hash: bytes_hash(&read_link(tree, rel)?),
        },
        Some(confined::Kind::File) => {
            let Some(mut file) = tree.open_file(rel)? else {
                return Ok(Fingerprint::Missing);
            };
            let meta = file
                .metadata()
                .map_err(io_err("read", &tree.path().join(rel)))?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(io_err("read", &tree.path().join(rel)))?;
            use std::os::unix::fs::PermissionsExt;
            Fingerprint::File {
                exec: meta.permissions().mode() & 0o100 != 0,
                hash: bytes_hash(&bytes),
            }
        }
    })
}

fn read_link(tree: &Tree, rel: &Path) -> Result<Vec<u8>, CheckoutError> {
    let parent = rel.parent().unwrap_or(Path::new(""));
    let name = rel.file_name().unwrap_or_default();
    let shown = tree.path().join(rel);
    let Some(dir) = tree.path_fd(parent)? else {
        return Ok(Vec::new());
    };
    nix::fcntl::readlinkat(&dir, name)
        .map(|t| t.as_bytes().to_vec())
        .map_err(|e| CheckoutError::Io {
            what: "read the link",
            path: shown,
            source: io::Error::from(e),
        })
}

fn open_tree(worktree: &Path) -> Result<Tree, CheckoutError> {
    Tree::open(worktree)?.ok_or_else(|| CheckoutError::Io {
        what: "open",
        path: worktree.to_path_buf(),
        source: io::Error::from(io::ErrorKind::NotFound),
    })
}

/// Tracked paths whose working-tree file differs from the index `index_file`.
///
/// In the user's repository git tells (`update-index --refresh`, `diff-files`): the user's
/// filters and line-ending rules apply. In the workspace's checkouts gix does, from the
/// bytes on disk, read without following links.
fn changed_paths(
    target: &Target,
    index_file: &Path,
    tree: &Tree,
) -> Result<BTreeSet<BString>, CheckoutError> {
    match target.owner {
        Owner::User => {
            let _ = Git::in_dir(&target.worktree)
                .env("GIT_INDEX_FILE", index_file)
                .args(["update-index", "-q", "--refresh"])
                .output_any()?;
            let out = Git::in_dir(&target.worktree)
                .env("GIT_INDEX_FILE", index_file)
                .args(["diff-files", "-z", "--name-only"])
                .output()?;
            Ok(out
                .stdout
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(BString::from)
                .collect())
        }
        Owner::Workspace => {
            let index = read_index(index_file)?;
            let mut out = BTreeSet::new();
            for entry in index.entries() {
                let path = entry.path(&index);
                if entry.stage_raw() != 0 {
                    out.insert(path.to_owned());
                    continue;
                }
                if entry
                    .flags
                    .contains(gix::index::entry::Flags::SKIP_WORKTREE)
                    || entry.mode == gix::index::entry::Mode::COMMIT
                {
                    continue;
                }
                if !entry_matches_disk(tree, &index, entry, path)? {
                    out.insert(path.to_owned());
                }
            }
            Ok(out)
        }
    }
}

/// Does the file at `path` hold what the index entry says (type, executable bit, content)?
/// The stat data recorded in the index answers when it matches and is not racy; otherwise
/// the bytes are hashed.
fn entry_matches_disk(
    tree: &Tree,
    index: &gix::index::File,
    entry: &gix::index::Entry,
    path: &BStr,
) -> Result<bool, CheckoutError> {
    use gix::index::entry::Mode;
    let rel = Path::new(OsStr::from_bytes(path));
    match (entry.mode, tree.kind(rel)?) {
        (Mode::SYMLINK, Some(confined::Kind::Symlink)) => {
            let target = read_link(tree, rel)?;
            Ok(
                gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &target)
                    .is_ok_and(|id| id == entry.id),
            )
        }
        (Mode::FILE | Mode::FILE_EXECUTABLE, Some(confined::Kind::File)) => {
            let Some(mut file) = tree.open_file(rel)? else {
                return Ok(false);
            };
            let shown = tree.path().join(rel);
            let meta =
                gix::index::fs::Metadata::from_file(&file).map_err(io_err("read", &shown))?;
            if meta.is_executable() != (entry.mode == Mode::FILE_EXECUTABLE) {
                return Ok(false);
            }
            let options = gix::index::entry::stat::Options::default();
            if let Ok(stat) = gix::index::entry::Stat::from_fs(&meta) {
                if entry.stat.matches(&stat, options)
                    && !entry.stat.is_racy(index.timestamp(), options)
                {
                    return Ok(true);
                }
            }
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map_err(io_err("read", &shown))?;
            Ok(
                gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
                    .is_ok_and(|id| id == entry.id),
            )
        }
        _ => Ok(false),
    }
}

/// Paths the dry run says would be overwritten: git lists them indented by a tab, or names
/// one in quotes (`Untracked working tree file 'a.c' would be overwritten`).
fn overwritten_paths(stderr: &str) -> Vec<String> {
    let paths: Vec<String> = stderr
        .lines()
        .filter_map(|l| match l.strip_prefix('\t') {
            Some(p) => Some(p.trim().to_string()),
            None => {
                let (_, rest) = l.split_once('\'')?;
                let (name, _) = rest.rsplit_once('\'')?;
                Some(name.to_string())
            }
        })
        .collect();
    if paths.is_empty() {
        vec![stderr.trim().to_string()]
    } else {
        paths
    }
}

/// Step 1 to 3 of the module header: the index locked with our marker, copied, the update
/// checked by a dry run, the user's changes recorded in the journal. The caller then moves
/// the branch and calls [`Update::finish`], or [`Update::abandon`] if it could not.
pub fn prepare(
    target: &Target,
    old: ObjectId,
    new: ObjectId,
    journal_path: &Path,
    notices: &mut Vec<String>,
) -> Result<Update, CheckoutError> {
    let index = index_path(&target.worktree)?;
    let files = Files::of(&index);
    let token = random_token();
    lock_index(target, &files, journal_path, &token, notices)?;
    failpoint::hit("checkout:locked");
    let prepared = (|| -> Result<Journal, CheckoutError> {
        copy_index(&files)?;
        let repo = objects::open_trusted(&target.origin).map_err(|source| CheckoutError::Read {
            path: target.origin.clone(),
            source,
        })?;
        let old_tree = tree_entries(&repo, old)?;
        if !index_differences(&read_index(&files.scratch)?, &old_tree, 1).is_empty() {
            return Err(CheckoutError::Staged {
                worktree: target.worktree.clone(),
                branch: target.branch.clone(),
            });
        }
        let dry = Git::in_dir(&target.worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["read-tree", "-m", "-u", "-n"])
            .arg(old.to_string())
            .arg(new.to_string())
            .output_any()?;
        if !dry.status.success() {
            return Err(CheckoutError::WouldOverwrite {
                worktree: target.worktree.clone(),
                paths: overwritten_paths(&String::from_utf8_lossy(&dry.stderr)),
            });
        }
        let tree = open_tree(&target.worktree)?;
        let mut changes = Vec::new();
        for path in changed_paths(target, &files.scratch, &tree)? {
            changes.push(Change {
                state: fingerprint(&tree, path.as_ref())?,
                path: Bytes::of(&path),
            });
        }
        let journal = Journal {
            version: 1,
            origin: Bytes::of_path(&target.origin),
            branch: target.branch.clone(),
            worktree: Bytes::of_path(&target.worktree),
            index: Bytes::of_path(&index),
            owner: target.owner,
            old: old.to_string(),
            new: new.to_string(),
            index_before: file_hash(&index)?,
            token: token.clone(),
            changes,
        };
        write_journal(journal_path, &journal)?;
        Ok(journal)
    })();
    match prepared {
        Ok(journal) => {
            failpoint::hit("checkout:journal-written");
            Ok(Update {
                journal,
                journal_path: journal_path.to_path_buf(),
                files,
            })
        }
        Err(e) => {
            files.clean();
            Err(e)
        }
    }
}

fn write_journal(path: &Path, journal: &Journal) -> Result<(), CheckoutError> {
    let text = serde_json::to_vec_pretty(journal).unwrap_or_default();
    crate::fsutil::write_atomic(path, &text).map_err(|e| CheckoutError::Io {
        what: "write",
        path: path.to_path_buf(),
        source: io::Error::other(e.one_line()),
    })
}

impl Update {
    /// The branch did not move (a lost race): nothing was touched; the marker, the scratch
    /// index and the journal go.
    pub fn abandon(self) {
        self.files.clean();
        let _ = fs::remove_file(&self.journal_path);
    }

    /// Steps 5 and 6: the working tree brought from OLD to NEW, checked, the index
    /// replaced, the marker and the journal removed.
    pub fn finish(self) -> Result<(), CheckoutError> {
        let target = target_of(&self.journal);
        failpoint::hit("checkout:before-read-tree");
        Git::in_dir(&target.worktree)
            .env("GIT_INDEX_FILE", &self.files.scratch)
            .args(["read-tree", "-m", "-u"])
            .arg(&self.journal.old)
            .arg(&self.journal.new)
            .run()?;
        failpoint::hit("checkout:after-read-tree");
        verify(
            &target,
            &self.journal,
            &self.journal_path,
            &self.files.scratch,
        )?;
        replace_index(&self.files)?;
        failpoint::hit("checkout:index-replaced");
        let _ = fs::remove_file(&self.files.marker);
        failpoint::hit("checkout:unlocked");
        fs::remove_file(&self.journal_path).map_err(io_err("remove", &self.journal_path))?;
        Ok(())
    }
}

/// The error of a result that cannot be proven, naming the journal that is kept and the
/// index lock that holds git off the checkout meanwhile.
fn unproven(journal: &Journal, journal_path: &Path, reasons: Vec<String>) -> CheckoutError {
    CheckoutError::Unproven {
        worktree: journal.worktree.to_path(),
        branch: journal.branch.clone(),
        new: journal.new.clone(),
        journal: journal_path.to_path_buf(),
        lock: Files::of(&journal.index.to_path()).marker,
        reasons,
    }
}

fn target_of(journal: &Journal) -> Target {
    Target {
        origin: journal.origin.to_path(),
        branch: journal.branch.clone(),
        worktree: journal.worktree.to_path(),
        owner: journal.owner,
    }
}

/// The scratch index becomes the index: one rename, then the folder synced.
fn replace_index(files: &Files) -> Result<(), CheckoutError> {
    fs::rename(&files.scratch, &files.index).map_err(io_err("replace", &files.index))?;
    if let Some(dir) = files.index.parent() {
        let _ = fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// Step 6: the index `index_file` equals NEW's tree, and the working tree equals it but
/// for exactly the recorded changes, each still as it was.
fn verify(
    target: &Target,
    journal: &Journal,
    journal_path: &Path,
    index_file: &Path,
) -> Result<(), CheckoutError> {
    const SHOWN: usize = 10;
    let unproven = |reasons: Vec<String>| unproven(journal, journal_path, reasons);
    let repo = objects::open_trusted(&target.origin).map_err(|source| CheckoutError::Read {
        path: target.origin.clone(),
        source,
    })?;
    let new = ObjectId::from_hex(journal.new.as_bytes()).map_err(|_| {
        unproven(vec![format!(
            "the journal names no commit ({})",
            journal.new
        )])
    })?;
    let new_tree = tree_entries(&repo, new)?;
    let mut reasons = Vec::new();
    let differ = index_differences(&read_index(index_file)?, &new_tree, SHOWN);
    if !differ.is_empty() {
        reasons.push(format!(
            "the index differs from {} at {}",
            &journal.new[..12],
            shown_paths(&differ)
        ));
    }
    let tree = open_tree(&target.worktree)?;
    let changed = changed_paths(target, index_file, &tree)?;
    let recorded: BTreeSet<BString> = journal
        .changes
        .iter()
        .map(|c| BString::from(c.path.as_bytes()))
        .collect();
    let extra: Vec<BString> = changed.difference(&recorded).take(SHOWN).cloned().collect();
    if !extra.is_empty() {
        reasons.push(format!(
            "the working tree differs from {} at {}",
            &journal.new[..12],
            shown_paths(&extra)
        ));
    }
    let mut altered = Vec::new();
    for change in &journal.changes {
        let now = fingerprint(&tree, change.path.as_bytes().as_bstr())?;
        if now != change.state {
            altered.push(BString::from(change.path.as_bytes()));
        }
    }
    if !altered.is_empty() {
        reasons.push(format!(
            "changes that were there before are not as they were at {}",
            shown_paths(&altered)
        ));
    }
    if reasons.is_empty() {
        Ok(())
    } else {
        Err(unproven(reasons))
    }
}

fn shown_paths(paths: &[BString]) -> String {
    paths
        .iter()
        .map(|p| p.to_str_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The journal's text, or None when there is none.
fn read_journal(path: &Path) -> Result<Option<Vec<u8>>, CheckoutError> {
    match fs::read(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err("read", path)(e)),
    }
}

/// Finishes or undoes the checkout update a killed command noted in `journal_path` (see the
/// module header), proves the result, and only then removes the journal. `Ok(None)` when
/// there is no journal. Called with the workspace lock held: no other git-loop command is
/// updating a checkout.
pub fn recover(
    journal_path: &Path,
    notices: &mut Vec<String>,
) -> Result<Option<Recovered>, CheckoutError> {
    let Some(text) = read_journal(journal_path)? else {
        return Ok(None);
    };
    let journal: Journal = match serde_json::from_slice(&text) {
        Ok(j) => j,
        Err(_) => return recover_legacy(journal_path, &text).map(Some),
    };
    let target = target_of(&journal);
    let files = Files::of(&journal.index.to_path());
    let unproven = |reasons: Vec<String>| unproven(&journal, journal_path, reasons);
    if files.marker.exists() && !is_marker(&files.marker) {
        if target.owner == Owner::User {
            return Err(CheckoutError::Locked {
                path: files.marker.clone(),
                repo: target.worktree.clone(),
            });
        }
        fs::remove_file(&files.marker).map_err(io_err("remove", &files.marker))?;
        notices.push(format!(
            "removed the stale {} (left by a killed git command; no git-loop command holds the workspace)",
            files.marker.display()
        ));
    }
    let repo = objects::open_trusted(&target.origin).map_err(|source| CheckoutError::Read {
        path: target.origin.clone(),
        source,
    })?;
    let tip =
        objects::resolve_branch(&repo, &target.branch).map_err(|source| CheckoutError::Read {
            path: target.origin.clone(),
            source,
        })?;
    let (Ok(old), Ok(new)) = (
        ObjectId::from_hex(journal.old.as_bytes()),
        ObjectId::from_hex(journal.new.as_bytes()),
    ) else {
        return Err(unproven(vec!["the journal names no commits".into()]));
    };
    if tip == Some(old) {
        // The branch never moved, so the working tree and the index were never touched. A
        // ref lock holding exactly the new commit is the killed `update-ref`'s own.
        remove_own_ref_lock(&repo, &target.branch, new, notices);
        files.clean();
        fs::remove_file(journal_path).map_err(io_err("remove", journal_path))?;
        return Ok(Some(Recovered::Undone {
            worktree: target.worktree.clone(),
        }));
    }
    if tip != Some(new) {
        return Err(unproven(vec![format!(
            "{} has moved to {} since (the update was from {} to {})",
            target.branch,
            tip.map(|t| t.to_string())
                .unwrap_or_else(|| "nothing".into()),
            &journal.old[..12],
            &journal.new[..12]
        )]));
    }
    if file_hash(&files.index)? == journal.index_before {
        // The index is the one from before: the working tree may be anywhere between OLD
        // and NEW.
        finish_half_written(&target, &journal, journal_path, &files, &repo, old, new)?;
        replace_index(&files)?;
    } else {
        // The finished index replaced it already; only the cleanup was left.
        copy_index(&files)?;
        verify(&target, &journal, journal_path, &files.scratch)?;
    }
    files.clean();
    fs::remove_file(journal_path).map_err(io_err("remove", journal_path))?;
    Ok(Some(Recovered::Finished {
        worktree: target.worktree.clone(),
        new: journal.new.clone(),
        kept: journal.changes.len(),
    }))
}

/// A journal of an earlier version (worktree, old, new on three lines) recorded nothing to
/// prove a finished update by; one whose branch never moved is undone.
fn recover_legacy(journal_path: &Path, text: &[u8]) -> Result<Recovered, CheckoutError> {
    let text = String::from_utf8_lossy(text);
    let mut lines = text.lines();
    let (wt, old) = (
        lines.next().unwrap_or_default(),
        lines.next().unwrap_or_default(),
    );
    let head = objects::open_trusted(Path::new(wt))
        .ok()
        .and_then(|r| r.head_id().ok().map(|id| id.detach().to_string()));
    if head.as_deref() == Some(old) {
        fs::remove_file(journal_path).map_err(io_err("remove", journal_path))?;
        return Ok(Recovered::Undone {
            worktree: PathBuf::from(wt),
        });
    }
    Err(CheckoutError::Unproven {
        worktree: PathBuf::from(wt),
        branch: "its branch".into(),
        new: lines.next().unwrap_or_default().to_string(),
        journal: journal_path.to_path_buf(),
        lock: Path::new(wt).join(".git/index.lock"),
        reasons: vec![
            "the journal was written by an earlier version of git-loop, which recorded nothing to prove the result by".into(),
        ],
    })
}

/// Removes `refs/heads/<branch>.lock` when it holds exactly `new`: what a killed
/// `update-ref` of ours wrote there, which no one else would.
fn remove_own_ref_lock(
    repo: &gix::Repository,
    branch: &str,
    new: ObjectId,
    notices: &mut Vec<String>,
) {
    let lock = repo
        .common_dir()
        .join("refs/heads")
        .join(format!("{branch}.lock"));
    if let Ok(text) = fs::read(&lock) {
        if text.trim_ascii() == new.to_string().as_bytes() && fs::remove_file(&lock).is_ok() {
            notices.push(format!(
                "removed the stale {} (left by git-loop's killed update of {branch})",
                lock.display()
            ));
        }
    }
}

/// What stands at a path that differs between OLD and NEW, for [`finish_half_written`].
enum Seen {
    /// Nothing, OLD's content, NEW's, or the beginning of NEW's: git's doing.
    Ours,
    /// Anything else: someone else's.
    Foreign(&'static str),
}

/// Brings a working tree that a killed `read-tree` left anywhere between OLD and NEW to NEW,
/// with a scratch index rebuilt from the index of before, and proves it.
fn finish_half_written(
    target: &Target,
    journal: &Journal,
    journal_path: &Path,
    files: &Files,
    repo: &gix::Repository,
    old: ObjectId,
    new: ObjectId,
) -> Result<(), CheckoutError> {
    let old_tree = tree_entries(repo, old)?;
    let new_tree = tree_entries(repo, new)?;
    let mut differing: BTreeSet<BString> = BTreeSet::new();
    for (path, entry) in &old_tree {
        if new_tree.get(path) != Some(entry) {
            differing.insert(path.clone());
        }
    }
    for path in new_tree.keys() {
        if !old_tree.contains_key(path) {
            differing.insert(path.clone());
        }
    }
    let tree = open_tree(&target.worktree)?;
    let seen = classify(target, repo, &tree, &differing, &old_tree, &new_tree)?;
    let foreign: Vec<String> = seen
        .iter()
        .filter_map(|(path, s)| match s {
            Seen::Foreign(why) => Some(format!("{} ({why})", path.to_str_lossy())),
            Seen::Ours => None,
        })
        .take(10)
        .collect();
    if !foreign.is_empty() {
        return Err(unproven(
            journal,
            journal_path,
            vec![format!(
                "paths the update was writing hold something else now: {}",
                foreign.join(", ")
            )],
        ));
    }
    // The index of before (its stat data still right for every path the update does not
    // touch) moved to NEW without looking at the working tree (`-i`: the half-written
    // files would fail git's up-to-date check, which is what was judged just above).
    copy_index(files)?;
    Git::in_dir(&target.worktree)
        .env("GIT_INDEX_FILE", &files.scratch)
        .args(["read-tree", "-m", "-i"])
        .arg(old.to_string())
        .arg(new.to_string())
        .run()?;
    // What NEW deletes goes first (a file may stand where NEW has a folder)...
    for path in differing.iter().filter(|p| !new_tree.contains_key(*p)) {
        let rel = Path::new(OsStr::from_bytes(path));
        if matches!(
            tree.kind(rel)?,
            Some(confined::Kind::File | confined::Kind::Symlink | confined::Kind::Other)
        ) {
            tree.remove_file(rel)?;
        }
        remove_empty_parents(&tree, rel);
    }
    // ...then what NEW has is written from it, the scratch index taking the files' stat data.
    let mut list = Vec::new();
    for path in differing.iter().filter(|p| {
        new_tree
            .get(*p)
            .is_some_and(|(k, _)| *k != gix::objs::tree::EntryKind::Commit)
    }) {
        list.extend_from_slice(path);
        list.push(0);
    }
    if !list.is_empty() {
        let out = Git::in_dir(&target.worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["checkout-index", "-f", "-u", "-z", "--stdin"])
            .output_with_input(&list)?;
        if !out.status.success() {
            return Err(GitError::Failed {
                argv: format!(
                    "git -C {} checkout-index -f -u -z --stdin",
                    target.worktree.display()
                ),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            }
            .into());
        }
    }
    verify(target, journal, journal_path, &files.scratch)
}

/// Removes the folders above `rel` that are left empty, up to the root.
fn remove_empty_parents(tree: &Tree, rel: &Path) {
    let mut dir = rel.parent();
    while let Some(d) = dir {
        if d.as_os_str().is_empty() {
            break;
        }
        let (Some(parent), Some(name)) = (d.parent(), d.file_name()) else {
            break;
        };
        let Ok(Some(fd)) = tree.path_fd(parent) else {
            break;
        };
        if nix::unistd::unlinkat(&fd, name, nix::unistd::UnlinkatFlags::RemoveDir).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Judges each path that differs between OLD and NEW (see [`Seen`]).
fn classify(
    target: &Target,
    repo: &gix::Repository,
    tree: &Tree,
    differing: &BTreeSet<BString>,
    old_tree: &Entries,
    new_tree: &Entries,
) -> Result<Vec<(BString, Seen)>, CheckoutError> {
    use gix::objs::tree::EntryKind;
    let has_children = |entries: &Entries, path: &BString| {
        let mut prefix = path.clone();
        prefix.push(b'/');
        entries
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(p, _)| p.starts_with(&prefix))
    };
    let mut out = Vec::new();
    // Regular files to hash: through git in the user's repository (its filters apply),
    // from their bytes in the workspace's checkouts.
    let mut files: Vec<BString> = Vec::new();
    for path in differing {
        let rel = Path::new(OsStr::from_bytes(path));
        let old = old_tree.get(path);
        let new = new_tree.get(path);
        if [old, new]
            .iter()
            .any(|e| e.is_some_and(|(k, _)| *k == EntryKind::Commit))
        {
            // A gitlink: read-tree only makes its empty folder.
            out.push((path.clone(), Seen::Ours));
            continue;
        }
        let seen = match tree.kind(rel)? {
            None => Seen::Ours,
            Some(confined::Kind::Dir) => {
                if has_children(old_tree, path) || has_children(new_tree, path) {
                    Seen::Ours
                } else {
                    Seen::Foreign("a folder")
                }
            }
            Some(confined::Kind::Other) => Seen::Foreign("not a file"),
            Some(confined::Kind::Symlink) => {
                let target_bytes = read_link(tree, rel)?;
                let id = gix::objs::compute_hash(
                    gix::hash::Kind::Sha1,
                    gix::objs::Kind::Blob,
                    &target_bytes,
                )
                .ok();
                let is = |e: Option<&(EntryKind, ObjectId)>| {
                    e.is_some_and(|(k, eid)| *k == EntryKind::Link && Some(*eid) == id)
                };
                if is(old) || is(new) {
                    Seen::Ours
                } else {
                    Seen::Foreign("a symlink neither version has")
                }
            }
            Some(confined::Kind::File) => {
                files.push(path.clone());
                continue;
            }
        };
        out.push((path.clone(), seen));
    }
    let hashes = hash_files(target, tree, &files)?;
    for (path, hash) in files.into_iter().zip(hashes) {
        let is = |e: Option<&(EntryKind, ObjectId)>| {
            e.is_some_and(|(k, id)| {
                matches!(k, EntryKind::Blob | EntryKind::BlobExecutable) && Some(*id) == hash
            })
        };
        let seen = if is(old_tree.get(&path))
            || is(new_tree.get(&path))
            || is_prefix_of_new(target, repo, tree, &path, new_tree.get(&path))?
        {
            Seen::Ours
        } else {
            Seen::Foreign("content neither version has")
        };
        out.push((path, seen));
    }
    Ok(out)
}

/// The blob ids the files at `paths` would have if added.
fn hash_files(
    target: &Target,
    tree: &Tree,
    paths: &[BString],
) -> Result<Vec<Option<ObjectId>>, CheckoutError> {
    match target.owner {
        Owner::Workspace => paths
            .iter()
            .map(|p| {
                let rel = Path::new(OsStr::from_bytes(p));
                let Some(mut file) = tree.open_file(rel)? else {
                    return Ok(None);
                };
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)
                    .map_err(io_err("read", &tree.path().join(rel)))?;
                Ok(
                    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes)
                        .ok(),
                )
            })
            .collect(),
        Owner::User => {
            let mut out = vec![None; paths.len()];
            // One git for all paths; a name with a newline cannot be one line of its input.
            let (plain, odd): (Vec<usize>, Vec<usize>) =
                (0..paths.len()).partition(|i| !paths[*i].contains(&b'\n'));
            if !plain.is_empty() {
                let mut input = Vec::new();
                for i in &plain {
                    input.extend_from_slice(&paths[*i]);
                    input.push(b'\n');
                }
                let res = Git::in_dir(&target.worktree)
                    .args(["hash-object", "--stdin-paths"])
                    .output_with_input(&input)?;
                let text = String::from_utf8_lossy(&res.stdout);
                for (i, line) in plain.iter().zip(text.lines()) {
                    out[*i] = ObjectId::from_hex(line.trim().as_bytes()).ok();
                }
            }
            for i in odd {
                let rel = Path::new(OsStr::from_bytes(&paths[i]));
                let bytes = fs::read(target.worktree.join(rel)).unwrap_or_default();
                let res = Git::in_dir(&target.worktree)
                    .args(["hash-object", "--stdin", "--path"])
                    .arg(rel)
                    .output_with_input(&bytes)?;
                out[i] =
                    ObjectId::from_hex(String::from_utf8_lossy(&res.stdout).trim().as_bytes()).ok();
            }
            Ok(out)
        }
    }
}

/// Is the file at `path` the beginning of what NEW has there (git killed while writing it)?
fn is_prefix_of_new(
    target: &Target,
    repo: &gix::Repository,
    tree: &Tree,
    path: &BString,
    new: Option<&(gix::objs::tree::EntryKind, ObjectId)>,
) -> Result<bool, CheckoutError> {
    let Some((_, id)) = new else {
        return Ok(false);
    };
    let rel = Path::new(OsStr::from_bytes(path));
    let Some(mut file) = tree.open_file(rel)? else {
        return Ok(true);
    };
    let mut have = Vec::new();
    file.read_to_end(&mut have)
        .map_err(io_err("read", &tree.path().join(rel)))?;
    let want = match target.owner {
        // As git writes it in the user's repository: smudge filters and line endings.
        Owner::User => {
            Git::in_dir(&target.worktree)
                .args(["cat-file", "--filters", "--path"])
                .arg(rel)
                .arg(id.to_string())
                .output()?
                .stdout
        }
        Owner::Workspace => match repo.find_object(*id) {
            Ok(obj) => obj.detach().data,
            Err(_) => return Ok(false),
        },
    };
    Ok(have.len() < want.len() && want.starts_with(&have))
}

/// Journals of checkout updates in `locks_dir` (`checkout-*.pending`).
pub fn journals(locks_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(locks_dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("checkout-") && n.ends_with(".pending"))
        })
        .collect();
    out.sort();
    out
}

/// The index files that journals in `locks_dir` name: checkout updates not yet finished.
pub fn pending_indexes(locks_dir: &Path) -> Vec<PathBuf> {
    journals(locks_dir)
        .iter()
        .filter_map(|j| fs::read(j).ok())
        .filter_map(|text| serde_json::from_slice::<Journal>(&text).ok())
        .map(|j| j.index.to_path())
        .collect()
}

/// Compares the checkout `worktree` with its HEAD's tree, through gix, changing nothing:
/// paths whose index entry differs from HEAD (`staged`), and tracked paths whose file
/// differs from HEAD's content (`edited`). For doctor, in the workspace's own checkouts.
pub struct Comparison {
    pub staged: Vec<String>,
    pub edited: Vec<String>,
}

pub fn compare_with_head(worktree: &Path) -> Result<Comparison, CheckoutError> {
    let repo = objects::open_trusted(worktree).map_err(|source| CheckoutError::Read {
        path: worktree.to_path_buf(),
        source,
    })?;
    let head = repo
        .head_id()
        .map_err(|e| CheckoutError::Io {
            what: "read HEAD of",
            path: worktree.to_path_buf(),
            source: io::Error::other(e.to_string()),
        })?
        .detach();
    let head_tree = tree_entries(&repo, head)?;
    let index = read_index(&repo.index_path())?;
    let staged = index_differences(&index, &head_tree, usize::MAX);
    let tree = open_tree(worktree)?;
    let mut edited = Vec::new();
    for (path, (kind, id)) in &head_tree {
        use gix::objs::tree::EntryKind;
        if *kind == EntryKind::Commit {
            continue;
        }
        let same = match index.entry_by_path(path.as_ref()) {
            Some(entry) if entry.id == *id && entry.stage_raw() == 0 => {
                entry_matches_disk(&tree, &index, entry, path.as_ref())?
            }
            _ => {
                let want = match kind {
                    EntryKind::Link => Fingerprint::Link {
                        hash: id.to_string(),
                    },
                    _ => Fingerprint::File {
                        exec: *kind == EntryKind::BlobExecutable,
                        hash: id.to_string(),
                    },
                };
                fingerprint(&tree, path.as_ref())? == want
            }
        };
        if !same {
            edited.push(path.to_str_lossy().into_owned());
        }
    }
    Ok(Comparison {
        staged: staged
            .iter()
            .map(|p| p.to_str_lossy().into_owned())
            .collect(),
        edited,
    })
}

/// Rebuilds the index of a workspace checkout from its HEAD when only the index is stale:
/// every tracked file already holds HEAD's content, so nothing in the working tree is lost.
/// Refuses (changing nothing) otherwise.
pub fn rebuild_stale_index(worktree: &Path) -> Result<(), CheckoutError> {
    let cmp = compare_with_head(worktree)?;
    if !cmp.edited.is_empty() {
        return Err(CheckoutError::WouldOverwrite {
            worktree: worktree.to_path_buf(),
            paths: cmp.edited,
        });
    }
    let index = index_path(worktree)?;
    let files = Files::of(&index);
    let target = Target {
        origin: worktree.to_path_buf(),
        branch: String::new(),
        worktree: worktree.to_path_buf(),
        owner: Owner::Workspace,
    };
    let mut notices = Vec::new();
    lock_index(
        &target,
        &files,
        Path::new(""),
        &random_token(),
        &mut notices,
    )?;
    let rebuilt = (|| -> Result<(), CheckoutError> {
        let _ = fs::remove_file(&files.scratch);
        Git::in_dir(worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["read-tree", "HEAD"])
            .run()?;
        let _ = Git::in_dir(worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["update-index", "-q", "--refresh"])
            .output_any()?;
        replace_index(&files)
    })();
    files.clean();
    rebuilt
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

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
}
