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

fn parse_loose_ref(content: &[u8], hash_kind: gix::hash::Kind) -> Option<RefValue> {
    let content = content.trim_end();
    if let Some(target) = content.strip_prefix(b"ref:") {
        return gix::refs::FullName::try_from(target.trim().as_bstr())
            .ok()
            .map(RefValue::Symbolic);
    }
    ObjectId::from_hex(content)
        .ok()
        .filter(|id| id.kind() == hash_kind)
        .map(RefValue::Object)
}

/// The id `refname` names in the git folder `git_dir`, read the way the import reads refs
/// (its loose file, else its line in `packed-refs`; confined to the folder, bounded), or
/// None when it is anything else: symbolic, missing, unreadable or malformed, which the
/// full import then looks at and names. For a quick check, before any repository is
/// opened, that a loop's branch and its origin's agree.
pub fn peek_branch(git_dir: &Path, refname: &str, hash_kind: gix::hash::Kind) -> Option<ObjectId> {
    let git = Tree::open(git_dir).ok()??;
    let name = gix::refs::FullName::try_from(refname).ok()?;
    match (Refs {
        git: &git,
        hash_kind,
    })
    .read(&name)
    .ok()??
    {
        RefValue::Object(id) => Some(id),
        RefValue::Symbolic(_) => None,
    }
}

/// The refs of a git folder, read through its [`Tree`].
struct Refs<'a> {
    git: &'a Tree,
    hash_kind: gix::hash::Kind,
}

impl Refs<'_> {
    fn corrupt(&self, rel: &Path, reason: String) -> ImportError {
        ImportError::Corrupt {
            path: self.git.path().join(rel),
            reason,
            source: None,
        }
    }

    /// A ref's tip, following symbolic refs within the repository only.
    fn resolve(&self, name: &gix::refs::FullName) -> Result<Option<ObjectId>, ImportError> {
        let mut current = name.clone();
        for _ in 0..MAX_SYMREF_DEPTH {
            match self.read(&current)? {
                None => return Ok(None),
                Some(RefValue::Object(id)) => return Ok(Some(id)),
                Some(RefValue::Symbolic(target)) => current = target,
            }
        }
        let rel = gix::path::from_bstr(name.as_bstr())
            .map(|p| p.into_owned())
            .unwrap_or_default();
        Err(self.corrupt(
            &rel,
            format!("more than {MAX_SYMREF_DEPTH} levels of symbolic references"),
        ))
    }

    /// `HEAD`'s commit; `None` when it names a branch that does not exist yet.
    fn head(&self) -> Result<Option<ObjectId>, ImportError> {
        let rel = Path::new("HEAD");
        let Some(content) = self
            .git
            .read(rel, MAX_REF_FILE_SIZE)
            .map_err(import_unsafe)?
        else {
            return Err(self.corrupt(rel, "it is missing".into()));
        };
        match parse_loose_ref(&content, self.hash_kind) {
            Some(RefValue::Object(id)) => Ok(Some(id)),
            Some(RefValue::Symbolic(target)) => self.resolve(&target),
            None => Err(self.corrupt(rel, "not a valid reference".into())),
        }
    }

    fn read(&self, name: &gix::refs::FullName) -> Result<Option<RefValue>, ImportError> {
        let relative =
            gix::path::from_bstr(name.as_bstr()).map_err(|_| ImportError::InvalidBranchName {
                name: name.as_bstr().to_string(),
                reason: "not representable as a path".into(),
            })?;
        if let Some(content) = self
            .git
            .read(&relative, MAX_REF_FILE_SIZE)
            .map_err(import_unsafe)?
        {
            return parse_loose_ref(&content, self.hash_kind)
                .map(Some)
                .ok_or_else(|| self.corrupt(&relative, "not a valid reference".into()));
        }
        Ok(self
            .packed()?
            .into_iter()
            .find(|(refname, _)| refname.as_bstr() == name.as_bstr())
            .map(|(_, id)| RefValue::Object(id)))
    }

    /// The entries of `packed-refs` (peeled lines and comments left out).
    fn packed(&self) -> Result<Vec<(BString, ObjectId)>, ImportError> {
        let rel = Path::new("packed-refs");
        let Some(packed) = self
            .git
            .read(rel, MAX_PACKED_REFS_SIZE)
            .map_err(import_unsafe)?
        else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for line in packed.lines() {
            if line.starts_with(b"#") || line.starts_with(b"^") || line.is_empty() {
                continue;
            }
            let Some((hex, refname)) = line.split_once_str(b" ") else {
                continue;
            };
            let refname = refname.trim_end_with(|c| c == '\r');
            let id = ObjectId::from_hex(hex)
                .ok()
                .filter(|id| id.kind() == self.hash_kind)
                .ok_or_else(|| self.corrupt(rel, format!("invalid object id for {refname:?}")))?;
            out.push((refname.into(), id));
        }
        Ok(out)
    }

    /// Every branch (`refs/heads/**`) with its tip, loose refs over packed ones.
    fn local_branches(&self) -> Result<Vec<(String, ObjectId)>, ImportError> {
        let mut found: Vec<(BString, ObjectId)> = Vec::new();
        let mut pending = vec![PathBuf::from("refs/heads")];
        let mut entries = 0;
        while let Some(dir) = pending.pop() {
            let listing = match self.git.entries(&dir) {
                Ok(Some(listing)) => listing,
                Ok(None) | Err(ConfinedError::NotDir { .. }) => continue,
                Err(e) => return Err(import_unsafe(e)),
            };
            for (name, kind) in listing {
                entries += 1;
                if entries > MAX_REF_ENTRIES {
                    return Err(self.corrupt(
                        Path::new("refs/heads"),
                        format!("more than {MAX_REF_ENTRIES} entries"),
                    ));
                }
                let rel = dir.join(&name);
                match kind {
                    PathKind::Dir => pending.push(rel),
                    // A link or a FIFO where a branch should be: refused by the read, with its name.
                    _ => {
                        let full = gix::path::into_bstr(rel.as_path())
                            .map(|p| p.into_owned())
                            .unwrap_or_else(|_| rel.as_os_str().as_encoded_bytes().into());
                        let Ok(full_name) = gix::refs::FullName::try_from(full.clone()) else {
                            // Not a name git would accept as a branch; it still holds
                            // work only if it names something, which is looked at below.
                            let content = self
                                .git
                                .read(&rel, MAX_REF_FILE_SIZE)
                                .map_err(import_unsafe)?
                                .unwrap_or_default();
                            if let Some(RefValue::Object(id)) =
                                parse_loose_ref(&content, self.hash_kind)
                            {
                                found.push((full, id));
                            }
                            continue;
                        };
                        if let Some(id) = self.resolve(&full_name)? {
                            found.push((full, id));
                        }
                    }
                }
            }
        }
        for (name, id) in self.packed()? {
            if name.starts_with(b"refs/heads/") && !found.iter().any(|(n, _)| *n == name) {
                found.push((name, id));
            }
        }
        found.sort();
        Ok(found
            .into_iter()
            .map(|(name, id)| {
                let short = name.strip_prefix(b"refs/heads/").unwrap_or(name.as_slice());
                (short.to_str_lossy().into_owned(), id)
            })
            .collect())
    }
}

/// A loop's repository: its refs and its *own* objects (loose files and packs below its
/// `objects/`), read through a confined [`Tree`] of its git folder. Alternates, `commondir`
/// and config have no say in what is read.
pub(crate) struct LoopRepo {
    /// As given by the caller, for messages.
    pub(crate) repo: PathBuf,
    git: Tree,
    hash_kind: gix::hash::Kind,
    limits: Limits,
    /// Loaded on the first object that isn't loose.
    packs: Option<Vec<UntrustedPack>>,
}

struct UntrustedPack {
    index: gix::odb::pack::index::File<Vec<u8>>,
    data: gix::odb::pack::data::File<Vec<u8>>,
}

impl LoopRepo {
    pub(crate) fn open(
        git_dir: &Path,
        hash_kind: gix::hash::Kind,
        limits: Limits,
    ) -> Result<Self, ImportError> {
        let git = Tree::open(git_dir)
            .map_err(import_unsafe)?
            .ok_or_else(|| ImportError::Io {
                path: git_dir.to_owned(),
                source: io::Error::from(io::ErrorKind::NotFound),
            })?;
        match git.kind("objects").map_err(import_unsafe)? {
            Some(PathKind::Dir) => {}
            _ => {
                return Err(ImportError::UnsafePath {
                    path: git_dir.join("objects"),
                    reason: "the object folder must be a real folder (not a symlink), and there"
                        .into(),
                })
            }
        }
        Ok(LoopRepo {
            repo: git_dir.to_owned(),
            git,
            hash_kind,
            limits,
            packs: None,
        })
    }

    /// The git folder, opened.
    pub(crate) fn git(&self) -> &Tree {
        &self.git
    }

    fn refs(&self) -> Refs<'_> {
        Refs {
            git: &self.git,
            hash_kind: self.hash_kind,
        }
    }

    /// A small file of the git folder (`objects/info/alternates`, `info/exclude`).
    pub(crate) fn read(&self, rel: &str, limit: u64) -> Result<Option<Vec<u8>>, ImportError> {
        self.git.read(rel, limit).map_err(import_unsafe)
    }

    /// The branch tip as the loop's files state it, following symbolic refs within the loop only.
    pub(crate) fn read_branch(
        &self,
        name: &gix::refs::FullName,
    ) -> Result<Option<ObjectId>, ImportError> {
        self.refs().resolve(name)
    }

    pub(crate) fn head(&self) -> Result<Option<ObjectId>, ImportError> {
        self.refs().head()
    }

    pub(crate) fn local_branches(&self) -> Result<Vec<(String, ObjectId)>, ImportError> {
        self.refs().local_branches()
    }

    pub(crate) fn malformed(&self, id: ObjectId, reason: String) -> ImportError {
        ImportError::MalformedObject {
            repo: self.repo.clone(),
            id,
            reason,
            source: None,
        }
    }

    pub(crate) fn malformed_with(
        &self,
        id: ObjectId,
        reason: &str,
        source: gix::Error,
    ) -> ImportError {
        ImportError::MalformedObject {
            repo: self.repo.clone(),
            id,
            reason: reason.into(),
            source: Some(source),
        }
    }

    fn loose_rel(id: &gix::oid) -> PathBuf {
        let hex = id.to_hex().to_string();
        Path::new("objects").join(&hex[..2]).join(&hex[2..])
    }

    /// Whether the loop's own store holds `id` (without reading it).
    pub(crate) fn contains(&mut self, id: &gix::oid) -> Result<bool, ImportError> {
        match self.git.kind(Self::loose_rel(id)).map_err(import_unsafe)? {
            Some(PathKind::File) => return Ok(true),
            // Refused with its name when read.
            Some(_) => return Ok(true),
            None => {}
        }
        Ok(self
            .packs()?
            .iter()
            .any(|pack| pack.index.lookup(id).is_some()))
    }

    /// The object as stored, after its header said it fits [`Limits::max_object_size`];
    /// not yet checked to hash to `id`.
    pub(crate) fn read_object(
        &mut self,
        id: &gix::oid,
    ) -> Result<Option<(gix::objs::Kind, Vec<u8>)>, ImportError> {
        let rel = Self::loose_rel(id);
        if let Some(file) = self.git.open_file(&rel).map_err(import_unsafe)? {
            let path = self.git.path().join(&rel);
            return decode_loose_object(file, &path, id, &self.repo, self.limits.max_object_size)
                .map(Some);
        }
        let limit = self.limits.max_object_size;
        let repo = self.repo.clone();
        for pack in self.packs()? {
            let found =
                catch_decoder_panic(|| pack.find(id, &repo, limit)).map_err(|err| match err {
                    ImportError::Corrupt {
                        path,
                        reason,
                        source,
                    } if path.as_os_str().is_empty() => ImportError::Corrupt {
                        path: pack.data.path().to_owned(),
                        reason,
                        source,
                    },
                    other => other,
                })?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// [`LoopRepo::read_object`], checked to hash to `id`.
    pub(crate) fn read_verified(
        &mut self,
        id: &gix::oid,
    ) -> Result<Option<(gix::objs::Kind, Vec<u8>)>, ImportError> {
        let Some((kind, data)) = self.read_object(id)? else {
            return Ok(None);
        };
        let actual = gix::objs::compute_hash(self.hash_kind, kind, &data)
            .map_err(|source| self.malformed_with(id.to_owned(), "could not be hashed", source))?;
        if actual != id {
            return Err(ImportError::HashMismatch {
                repo: self.repo.clone(),
                expected: id.to_owned(),
                actual,
            });
        }
        Ok(Some((kind, data)))
    }

    fn packs(&mut self) -> Result<&[UntrustedPack], ImportError> {
        if self.packs.is_none() {
            self.packs = Some(self.load_packs()?);
        }
        Ok(self.packs.as_deref().unwrap_or_default())
    }

    /// The loop's packs, read into memory (mapping a file the agent can truncate would let it
    /// crash the host with SIGBUS) up to [`Limits::max_pack_size`] in all.
    fn load_packs(&self) -> Result<Vec<UntrustedPack>, ImportError> {
        let pack_dir = Path::new("objects/pack");
        let names = match self.git.list(pack_dir) {
            Ok(Some(names)) => names,
            Ok(None) => return Ok(Vec::new()),
            Err(e) => return Err(import_unsafe(e)),
        };
        let limit = self.limits.max_pack_size;
        let mut total = 0u64;
        let mut packs = Vec::new();
        for name in names {
            let index_rel = pack_dir.join(&name);
            if index_rel.extension().is_none_or(|ext| ext != "idx") {
                continue;
            }
            let data_rel = index_rel.with_extension("pack");
            let index_path = self.git.path().join(&index_rel);
            let data_path = self.git.path().join(&data_rel);
            let Some(index_file) = self.git.open_file(&index_rel).map_err(import_unsafe)? else {
                continue;
            };
            // git ignores an index without its pack too; the objects then count as missing.
            let Some(data_file) = self.git.open_file(&data_rel).map_err(import_unsafe)? else {
                continue;
            };
            for file in [&index_file, &data_file] {
                total = total.saturating_add(file.metadata().map(|m| m.len()).unwrap_or(0));
            }
            if total > limit {
                return Err(ImportError::PacksTooLarge {
                    repo: self.repo.clone(),
                    size: total,
                    limit,
                });
            }
            let index_bytes =
                confined::read_bounded(index_file, &index_path, limit).map_err(import_unsafe)?;
            let data_bytes =
                confined::read_bounded(data_file, &data_path, limit).map_err(import_unsafe)?;
            let hash_kind = self.hash_kind;
            let object_limit = usize_limit(self.limits.max_object_size);
            let pack = catch_decoder_panic(|| {
                let index = gix::odb::pack::index::File::from_data(
                    index_bytes,
                    index_path.clone(),
                    hash_kind,
                )
                .map_err(|source| ImportError::Corrupt {
                    path: index_path.clone(),
                    reason: "not a valid pack index".into(),
                    source: Some(source),
                })?;
                let data =
                    gix::odb::pack::data::File::from_data(data_bytes, data_path.clone(), hash_kind)
                        .map_err(|source| ImportError::Corrupt {
                            path: data_path.clone(),
                            reason: "not a valid pack".into(),
                            source: Some(source),
                        })?
                        .with_alloc_limit_bytes(Some(object_limit));
                Ok(UntrustedPack { index, data })
            })
            .map_err(|err| match err {
                ImportError::Corrupt {
                    path,
                    reason,
                    source,
                } if path.as_os_str().is_empty() => ImportError::Corrupt {
                    path: index_path.clone(),
                    reason,
                    source,
                },
                other => other,
            })?;
            packs.push(pack);
        }
        Ok(packs)
    }
}

impl UntrustedPack {
    fn find(
        &self,
        id: &gix::oid,
        repo: &Path,
        limit: u64,
    ) -> Result<Option<(gix::objs::Kind, Vec<u8>)>, ImportError> {
        use gix::odb::pack::data::decode::entry::ResolvedBase;
        use gix::odb::pack::data::decode::header::ResolvedBase as HeaderBase;
        let corrupt = |source: gix::Error| ImportError::Corrupt {
            path: self.data.path().to_owned(),
            reason: format!("object {id} could not be decoded"),
            source: Some(source),
        };
        let Some(position) = self.index.lookup(id) else {
            return Ok(None);
        };
        let entry = self
            .data
            .entry(self.index.pack_offset_at_index(position))
            .map_err(corrupt)?;
        let mut inflate = gix::zlib::Inflate::default();
        // The size first, from the entry's header and its deltas' headers: an object over the
        // limit is refused with its size before anything of it is inflated.
        let header_base = |base: &gix::oid| -> gix::Result<Option<HeaderBase>> {
            match self.index.lookup(base) {
                Some(position) => Ok(Some(HeaderBase::InPack(
                    self.data.entry(self.index.pack_offset_at_index(position))?,
                ))),
                None => Ok(None),
            }
        };
        let header = self
            .data
            .decode_header(entry.clone(), &mut inflate, &header_base)
            .map_err(corrupt)?;
        if header.object_size > limit {
            return Err(ImportError::ObjectTooLarge {
                repo: repo.to_owned(),
                id: id.to_owned(),
                size: header.object_size,
                limit,
            });
        }
        // Bases referenced by id are resolved within this pack only; a loop's packs must be
        // self-contained, just like git's local packs.
        let resolve = |base: &gix::oid, _out: &mut Vec<u8>| -> gix::Result<Option<ResolvedBase>> {
            match self.index.lookup(base) {
                Some(position) => Ok(Some(ResolvedBase::InPack(
                    self.data.entry(self.index.pack_offset_at_index(position))?,
                ))),
                None => Ok(None),
            }
        };
        let mut out = Vec::new();
        let outcome = self
            .data
            .decode_entry(
                entry,
                &mut out,
                &mut inflate,
                &resolve,
                &mut gix::odb::pack::cache::Never,
            )
            .map_err(corrupt)?;
        Ok(Some((outcome.kind, out)))
    }
}

/// gix's pack decoders are hardened against hostile input, but an index that lies about its own
/// layout is exactly the input where a missed bounds check would panic; a malicious loop must not
/// be able to crash the host process. The path is filled in by the caller.
fn catch_decoder_panic<T>(f: impl FnOnce() -> Result<T, ImportError>) -> Result<T, ImportError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ImportError::Corrupt {
            path: PathBuf::new(),
            reason: "the pack decoder panicked on malformed data".into(),
            source: None,
        })
    })
}

/// Inflate a loose object file, `<kind> <size>\0<data>`, streaming from `file`: the header
/// comes first, and an object larger than `limit` is refused by it, having cost a 64-byte
/// inflation. Otherwise exactly `size` bytes are allocated and filled.
fn decode_loose_object(
    file: std::fs::File,
    path: &Path,
    id: &gix::oid,
    repo: &Path,
    limit: u64,
) -> Result<(gix::objs::Kind, Vec<u8>), ImportError> {
    use gix::zlib::stream::inflate::read;
    let corrupt = |reason: &str, source: Option<gix::Error>| ImportError::Corrupt {
        path: path.to_owned(),
        reason: reason.to_owned(),
        source,
    };
    let damaged = |e: io::Error| ImportError::Corrupt {
        path: path.to_owned(),
        reason: format!("the zlib stream is damaged: {e}"),
        source: None,
    };
    let mut input = BufReader::with_capacity(64 << 10, file);
    let mut inflate = gix::zlib::Decompress::new();
    let mut header = [0u8; 64];
    let got = read(&mut input, &mut inflate, &mut header).map_err(damaged)?;
    let (kind, size, header_len) = gix::objs::decode::loose_header(&header[..got])
        .map_err(|source| corrupt("no valid object header", Some(source)))?;
    if size > limit {
        return Err(ImportError::ObjectTooLarge {
            repo: repo.to_owned(),
            id: id.to_owned(),
            size,
            limit,
        });
    }
    let size = usize::try_from(size).map_err(|_| corrupt("object size not addressable", None))?;
    let held = got - header_len;
    if held > size {
        return Err(corrupt("the object is longer than its header says", None));
    }
    let mut data = vec![0u8; size];
    data[..held].copy_from_slice(&header[header_len..got]);
    let written = read(&mut input, &mut inflate, &mut data[held..]).map_err(damaged)?;
    if held + written != size {
        return Err(corrupt("the object is shorter than its header says", None));
    }
    let mut more = [0u8; 1];
    if read(&mut input, &mut inflate, &mut more).map_err(damaged)? != 0 {
        return Err(corrupt("the object is longer than its header says", None));
    }
    Ok((kind, data))
}

/// Objects as a loop's worktree sees them: from the origin (trusted; the loop borrows most
/// of its objects from there), else from the loop's own store, verified.
struct Objects<'a> {
    origin: &'a gix::Repository,
    store: LoopRepo,
}

impl Objects<'_> {
    fn find(&mut self, id: ObjectId, want: gix::objs::Kind) -> Result<Vec<u8>, ImportError> {
        let mut buf = Vec::new();
        let in_origin = self
            .origin
            .objects
            .try_find(&id, &mut buf)
            .map_err(|source| ImportError::Git {
                repo: self.origin.git_dir().to_owned(),
                action: format!("could not read object {id}"),
                source,
            })?
            .map(|data| (data.kind, data.data.to_vec()));
        let (kind, data) = match in_origin {
            Some(found) => found,
            None => self
                .store
                .read_verified(&id)?
                .ok_or_else(|| ImportError::MissingObject {
                    repo: self.store.repo.clone(),
                    id,
                })?,
        };
        if kind != want {
            return Err(self
                .store
                .malformed(id, format!("is referenced as a {want} but is a {kind}")));
        }
        Ok(data)
    }
}

/// The local branches of the loop repository `git_dir` with their tips (as stored: a branch
/// naming a tag reports the tag), read without gix's repository machinery.
pub fn loop_branches(
    git_dir: &Path,
    hash_kind: gix::hash::Kind,
    limits: &Limits,
) -> Result<Vec<(String, ObjectId)>, GitReadError> {
    let repo = LoopRepo::open(git_dir, hash_kind, *limits)?;
    Ok(repo.local_branches()?)
}

/// The changed paths of a worktree, with a ceiling: a hostile repository can name more
/// paths than a host should hold.
struct Changes {
    paths: BTreeSet<BString>,
    repo: PathBuf,
}

impl Changes {
    fn insert(&mut self, path: BString) -> Result<(), GitReadError> {
        self.paths.insert(path);
        if self.paths.len() > MAX_CHANGES {
            return Err(GitReadError::Unsupported {
                repo: self.repo.clone(),
                what: format!("a worktree with more than {MAX_CHANGES} changed paths"),
            });
        }
        Ok(())
    }
}

/// Paths (relative, '/'-separated) of a loop's worktree that differ from its index or its index
/// from `HEAD`, WITHOUT executing anything and without gix's repository machinery: deleted,
/// type-changed or modified tracked files, staged changes, unmerged paths and untracked files
/// that are not ignored. Returns sorted, deduplicated paths.
///
/// `origin` is the repository the loop borrows objects from (opened trusted by the caller);
/// objects it lacks are read from the loop's own store and verified. Every file of the
/// worktree and its git folder is read confined (see the module documentation); a FIFO, a
/// link or an oversized file where git would read one is an error naming it.
///
/// Content is compared as git would without any filters: a file whose stat data matches its index
/// entry (and isn't racily clean) is unchanged, otherwise its raw bytes are hashed as a blob. A
/// repository relying on clean filters or end-of-line conversion therefore shows such files as
/// modified — the safe direction for a caller asking whether removing the worktree would lose
/// work. For the same reason the executable bit always counts (as with `core.fileMode=true`),
/// `assume-unchanged` is disregarded, and a submodule counts as changed when its checked-out commit
/// differs from the recorded one or can't be read. Untracked files are listed individually, except
/// that an untracked nested repository is listed as its folder; a folder of `HEAD` of which the
/// index holds nothing (removed with `git rm -r`) is listed as the folder, not file by file, so
/// that a tree repeating itself can't make the list explode.
///
/// Ignore rules come from `.gitignore` files (a symlinked one is skipped, as git does) and
/// `info/exclude`; the repository's `core.excludesFile` and the user's global excludes are not
/// consulted, so a file ignored only there is reported. Symlinks are never followed: a tracked
/// symlink is compared by its target string, and a path below a symlinked folder counts as deleted.
///
/// `interrupt` stops the work early (see [`within`]).
pub fn worktree_changes(
    worktree: &Path,
    origin: &gix::Repository,
    limits: &Limits,
    interrupt: &AtomicBool,
) -> Result<Vec<String>, GitReadError> {
    let hash_kind = origin.object_hash();
    let (root, git_dir, store) = open_worktree(worktree, hash_kind, limits)?;
    let index = read_index(store.git(), &git_dir, hash_kind, limits)?;
    if index.is_sparse() {
        return Err(GitReadError::Unsupported {
            repo: git_dir,
            what: "a sparse index".into(),
        });
    }
    let info_exclude = store.read("info/exclude", MAX_IGNORE_FILE_SIZE)?;
    let head = store.head()?;
    let mut objects = Objects { origin, store };
    let head_tree = match head {
        Some(commit) => {
            let data = objects.find(commit, gix::objs::Kind::Commit)?;
            let commit = gix::objs::CommitRef::from_bytes(&data, hash_kind).map_err(|source| {
                objects
                    .store
                    .malformed_with(commit, "is not a valid commit", source)
            })?;
            Some(commit.tree())
        }
        None => None,
    };

    let mut changes = Changes {
        paths: BTreeSet::new(),
        repo: git_dir.clone(),
    };
    staged_changes(&mut objects, head_tree, &index, &mut changes, interrupt)?;

    let mut walk = WorktreeWalk {
        root: &root,
        index: &index,
        ignores: Ignores::new(info_exclude),
        seen: vec![false; index.entries().len()],
        changes: &mut changes,
        hash_kind,
        interrupt,
        repo: &git_dir,
    };
    walk.run()?;
    let seen = std::mem::take(&mut walk.seen);
    drop(walk);

    for (entry, seen) in index.entries().iter().zip(seen) {
        let skipped = entry
            .flags
            .contains(gix::index::entry::Flags::SKIP_WORKTREE);
        if !seen && !skipped {
            changes.insert(entry.path(&index).to_owned())?;
        }
    }
    Ok(changes
        .paths
        .into_iter()
        .map(|path| path.to_str_lossy().into_owned())
        .collect())
}

/// A worktree of a repository whose files a sandbox writes, its git folder, and the
/// repository's own store, each opened confined.
fn open_worktree(
    worktree: &Path,
    hash_kind: gix::hash::Kind,
    limits: &Limits,
) -> Result<(Tree, PathBuf, LoopRepo), GitReadError> {
    let root = Tree::open(worktree)
        .map_err(read_unsafe)?
        .ok_or_else(|| GitReadError::Io {
            path: worktree.to_owned(),
            source: io::Error::from(io::ErrorKind::NotFound),
        })?;
    let git_dir = worktree.join(".git");
    // A `.git` file would name a git folder elsewhere; a loop's is always a real folder.
    match root.kind(".git").map_err(read_unsafe)? {
        Some(PathKind::Dir) => {}
        Some(_) => {
            return Err(GitReadError::Unsafe {
                source: ConfinedError::NotDir { path: git_dir },
            })
        }
        None => {
            return Err(GitReadError::NoWorktree {
                repo: git_dir,
                expected: worktree.to_owned(),
            })
        }
    }
    let store = LoopRepo::open(&git_dir, hash_kind, *limits)?;
    Ok((root, git_dir, store))
}

/// Paths that are gitlinks (submodule entries) in the index of the repository at `worktree`
/// or in its `HEAD`'s tree, read as [`worktree_changes`] reads (objects from `origin`,
/// else from the repository's own store): a gitlink makes git enter the nested repository,
/// whose config it then reads. `HEAD`'s tree is walked whole, up to a ceiling of entries.
pub fn gitlinks(
    worktree: &Path,
    origin: &gix::Repository,
    limits: &Limits,
    interrupt: &AtomicBool,
) -> Result<Vec<String>, GitReadError> {
    use gix::objs::tree::EntryKind;
    const MAX_ENTRIES: usize = 10_000_000;
    let hash_kind = origin.object_hash();
    let (_root, git_dir, store) = open_worktree(worktree, hash_kind, limits)?;
    let index = read_index(store.git(), &git_dir, hash_kind, limits)?;
    let mut out = BTreeSet::new();
    for entry in index.entries() {
        if entry.mode == gix::index::entry::Mode::COMMIT {
            out.insert(entry.path(&index).to_owned());
        }
    }
    let head = store.head()?;
    let mut objects = Objects { origin, store };
    let mut pending = Vec::new();
    if let Some(commit) = head {
        let data = objects.find(commit, gix::objs::Kind::Commit)?;
        let commit = gix::objs::CommitRef::from_bytes(&data, hash_kind).map_err(|source| {
            objects
                .store
                .malformed_with(commit, "is not a valid commit", source)
        })?;
        pending.push((BString::default(), commit.tree()));
    }
    let mut seen = 0;
    while let Some((prefix, tree_id)) = pending.pop() {
        check_interrupt(interrupt, &git_dir)?;
        let data = objects.find(tree_id, gix::objs::Kind::Tree)?;
        let tree = gix::objs::TreeRef::from_bytes(&data, hash_kind).map_err(|source| {
            objects
                .store
                .malformed_with(tree_id, "is not a valid tree", source)
        })?;
        seen += tree.entries.len();
        if seen > MAX_ENTRIES {
            return Err(GitReadError::Unsupported {
                repo: git_dir,
                what: format!("a HEAD of more than {MAX_ENTRIES} entries"),
            });
        }
        for entry in &tree.entries {
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push_byte(b'/');
            }
            path.push_str(entry.filename);
            match entry.mode.kind() {
                EntryKind::Tree => pending.push((path, entry.oid.to_owned())),
                EntryKind::Commit => {
                    out.insert(path);
                }
                _ => {}
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|path| path.to_str_lossy().into_owned())
        .collect())
}

/// The index, read whole through the confined git folder and decoded from memory: opened
/// by path, a FIFO would block; mapped, a file the agent truncates would crash the host.
fn read_index(
    git: &Tree,
    git_dir: &Path,
    hash_kind: gix::hash::Kind,
    limits: &Limits,
) -> Result<gix::index::File, GitReadError> {
    let path = git_dir.join("index");
    let Some(file) = git.open_file("index").map_err(read_unsafe)? else {
        return Ok(gix::index::File::from_state(
            gix::index::State::new(hash_kind),
            path,
        ));
    };
    let meta = file.metadata().map_err(|source| GitReadError::Io {
        path: path.clone(),
        source,
    })?;
    let mtime = filetime::FileTime::from_last_modification_time(&meta);
    let data = confined::read_bounded(file, &path, MAX_INDEX_SIZE).map_err(read_unsafe)?;
    let corrupt = |what: &str| GitReadError::Unsupported {
        repo: git_dir.to_owned(),
        what: format!("an index that is {what} ({})", path.display()),
    };
    let hash_len = hash_kind.len_in_bytes();
    if data.len() < hash_len {
        return Err(corrupt("truncated"));
    }
    let (content, trailer) = data.split_at(data.len() - hash_len);
    let expected = ObjectId::from_bytes_or_panic(trailer);
    if !expected.is_null() {
        let mut hasher = gix::hash::hasher(hash_kind);
        hasher.update(content);
        if hasher.try_finalize().ok() != Some(expected) {
            return Err(corrupt("corrupt (its checksum does not match)"));
        }
    }
    let (state, _checksum) = gix::index::State::from_bytes(
        &data,
        mtime,
        hash_kind,
        gix::index::decode::Options {
            alloc_limit_bytes: Some(usize_limit(limits.max_object_size)),
            thread_limit: Some(1),
            ..Default::default()
        },
    )
    .map_err(|source| GitReadError::Git {
        repo: git_dir.to_owned(),
        action: format!("could not decode the index at {}", path.display()),
        source,
    })?;
    if state.link().is_some() {
        return Err(GitReadError::Unsupported {
            repo: git_dir.to_owned(),
            what: "a split index (`git update-index --no-split-index` inside the loop undoes it)"
                .into(),
        });
    }
    Ok(gix::index::File::from_state(state, path))
}

/// Index entries that differ from `HEAD^{tree}`, plus unmerged and intent-to-add entries.
///
/// `HEAD`'s tree is walked together with the index, descending only into folders the index
/// has entries below: what the walk does is bounded by the index, never by how often the
/// agent's trees repeat themselves.
fn staged_changes(
    objects: &mut Objects<'_>,
    head_tree: Option<ObjectId>,
    index: &gix::index::File,
    changes: &mut Changes,
    interrupt: &AtomicBool,
) -> Result<(), GitReadError> {
    use gix::index::entry::Stage;
    use gix::objs::tree::EntryKind;
    let hash_kind = objects.origin.object_hash();
    let entries = index.entries();
    let mut matched = vec![false; entries.len()];
    for (position, entry) in entries.iter().enumerate() {
        let intent_to_add = entry
            .flags
            .contains(gix::index::entry::Flags::INTENT_TO_ADD);
        if entry.stage_raw() != 0 || intent_to_add {
            changes.insert(entry.path(index).to_owned())?;
            matched[position] = true;
        }
    }
    let mut pending: Vec<(BString, ObjectId)> = head_tree
        .map(|tree| (BString::default(), tree))
        .into_iter()
        .collect();
    while let Some((prefix, tree_id)) = pending.pop() {
        check_interrupt(interrupt, &changes.repo)?;
        let data = objects.find(tree_id, gix::objs::Kind::Tree)?;
        let tree = gix::objs::TreeRef::from_bytes(&data, hash_kind).map_err(|source| {
            objects
                .store
                .malformed_with(tree_id, "is not a valid tree", source)
        })?;
        for entry in &tree.entries {
            let mut path = prefix.clone();
            if !path.is_empty() {
                path.push_byte(b'/');
            }
            path.push_str(entry.filename);
            let kind = entry.mode.kind();
            if kind == EntryKind::Tree {
                let mut below = path.clone();
                below.push_byte(b'/');
                if index.prefixed_entries_range(below.as_bstr()).is_some() {
                    pending.push((path, entry.oid.to_owned()));
                } else {
                    changes.insert(path)?;
                }
                continue;
            }
            match index.entry_index_by_path_and_stage(path.as_bstr(), Stage::Unconflicted) {
                Some(position) => {
                    matched[position] = true;
                    let indexed = &entries[position];
                    let indexed_kind = indexed.mode.to_tree_entry_mode().map(|mode| mode.kind());
                    if indexed_kind != Some(kind) || indexed.id != entry.oid {
                        changes.insert(path)?;
                    }
                }
                // Removed from the index (an unmerged path was reported above).
                None => changes.insert(path)?,
            }
        }
    }
    for (entry, matched) in entries.iter().zip(matched) {
        if !matched {
            changes.insert(entry.path(index).to_owned())?;
        }
    }
    Ok(())
}

/// The ignore rules of a worktree, gathered while walking it: `info/exclude` first, then
/// each folder's `.gitignore` as the walk enters it. A list applies below its own folder
/// only, and later lists (deeper folders) win, which is git's order of precedence.
struct Ignores {
    search: gix::ignore::Search,
    read: u64,
}

impl Ignores {
    fn new(info_exclude: Option<Vec<u8>>) -> Self {
        let mut search = gix::ignore::Search::default();
        if let Some(bytes) = info_exclude {
            // Cannot fail without a root to strip.
            let _ = search.add_patterns_buffer(
                &bytes,
                "info/exclude",
                None,
                gix::ignore::search::Ignore::default(),
            );
        }
        Ignores { search, read: 0 }
    }

    /// Adds the `.gitignore` of `dir`, the folder at `prefix`.
    fn load(&mut self, dir: &Tree, prefix: &BStr) -> Result<(), GitReadError> {
        let bytes = match dir.read(".gitignore", MAX_IGNORE_FILE_SIZE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(()),
            // git does not follow a symlinked .gitignore in the worktree, nor read a folder.
            Err(ConfinedError::Symlink(_)) => return Ok(()),
            Err(ConfinedError::NotRegular {
                kind: "a folder", ..
            }) => return Ok(()),
            Err(e) => return Err(read_unsafe(e)),
        };
        self.read += bytes.len() as u64;
        if self.read > MAX_IGNORE_TOTAL {
            return Err(read_unsafe(ConfinedError::TooLarge {
                path: dir.path().join(".gitignore"),
                size: self.read,
                limit: MAX_IGNORE_TOTAL,
            }));
        }
        let mut source = prefix.to_owned();
        if !source.is_empty() {
            source.push_byte(b'/');
        }
        source.push_str(".gitignore");
        let source = gix::path::from_bstring(source).map_err(|_| GitReadError::Unsupported {
            repo: dir.path().to_owned(),
            what: "a folder name that is not a path here".into(),
        })?;
        self.search
            .add_patterns_buffer(
                &bytes,
                source,
                Some(Path::new("")),
                gix::ignore::search::Ignore::default(),
            )
            .map_err(|source| GitReadError::Io {
                path: dir.path().join(".gitignore"),
                source,
            })
    }

    fn is_excluded(&self, rela_path: &BStr, is_dir: bool) -> bool {
        self.search
            .pattern_matching_relative_path(
                rela_path,
                Some(is_dir),
                gix::glob::pattern::Case::Sensitive,
            )
            .is_some_and(|m| !m.pattern.is_negative())
    }
}

struct WorktreeWalk<'a> {
    root: &'a Tree,
    index: &'a gix::index::File,
    ignores: Ignores,
    /// Index entries found in the worktree; the others were deleted.
    seen: Vec<bool>,
    changes: &'a mut Changes,
    hash_kind: gix::hash::Kind,
    interrupt: &'a AtomicBool,
    repo: &'a Path,
}

impl WorktreeWalk<'_> {
    fn run(&mut self) -> Result<(), GitReadError> {
        // (folder below the root, its path in the index's spelling, whether it is ignored)
        let mut pending = vec![(PathBuf::new(), BString::default(), false)];
        while let Some((rel, prefix, excluded)) = pending.pop() {
            check_interrupt(self.interrupt, self.repo)?;
            // Opened again from the root, without following links: a folder swapped for a
            // link since it was listed is not entered (what was tracked below counts as
            // deleted), and no descriptor is held per pending folder.
            let dir = match self.root.subtree(&rel) {
                Ok(Some(dir)) => dir,
                Ok(None) | Err(ConfinedError::Symlink(_)) | Err(ConfinedError::NotDir { .. }) => {
                    continue
                }
                Err(e) => return Err(read_unsafe(e)),
            };
            if !excluded {
                self.ignores.load(&dir, prefix.as_bstr())?;
            }
            let entries = dir.entries("").map_err(read_unsafe)?.unwrap_or_default();
            for (name, kind) in entries {
                // git never tracks anything called .git; a nested one marks a repository, handled
                // where its parent folder is looked at.
                if name == ".git" {
                    continue;
                }
                let Ok(name_bytes) = gix::path::os_str_into_bstr(&name) else {
                    // Not representable in the index, so necessarily untracked.
                    let mut path = prefix.clone();
                    path.push_str(
                        gix::path::into_bstr(Path::new(&name))
                            .unwrap_or_default()
                            .as_ref(),
                    );
                    self.changes.insert(path)?;
                    continue;
                };
                let mut rela_path = prefix.clone();
                if !rela_path.is_empty() {
                    rela_path.push_byte(b'/');
                }
                rela_path.push_str(name_bytes);
                if kind == PathKind::Dir {
                    if let Some((below, below_excluded)) =
                        self.directory(&dir, &name, rela_path, excluded)?
                    {
                        pending.push((rel.join(&name), below, below_excluded));
                    }
                } else {
                    self.file(&dir, &name, rela_path, kind, excluded)?;
                }
            }
        }
        Ok(())
    }

    /// Decide about a real folder; returns its path to descend with, and whether it is
    /// ignored, if it is to be entered.
    fn directory(
        &mut self,
        dir: &Tree,
        name: &OsStr,
        rela_path: BString,
        parent_excluded: bool,
    ) -> Result<Option<(BString, bool)>, GitReadError> {
        if let Some(range) = self.index.entry_range(rela_path.as_bstr()) {
            for position in range.clone() {
                self.seen[position] = true;
            }
            let entry = &self.index.entries()[range.start];
            if entry.mode == gix::index::entry::Mode::COMMIT && entry.stage_raw() == 0 {
                if submodule_changed(dir, name, entry.id, self.hash_kind) {
                    self.changes.insert(rela_path)?;
                }
                return Ok(None);
            }
            // A tracked file became a folder: report it and still look inside.
            self.changes.insert(rela_path.clone())?;
        }
        // git reads no rule inside an ignored folder, and nothing below it is reported.
        let excluded = parent_excluded || self.ignores.is_excluded(rela_path.as_bstr(), true);
        let mut below = rela_path.clone();
        below.push_byte(b'/');
        let has_tracked_content = self.index.prefixed_entries_range(below.as_bstr()).is_some();
        if !has_tracked_content {
            if excluded {
                return Ok(None);
            }
            let nested_git = Path::new(name).join(".git");
            if dir.kind(&nested_git).map_err(read_unsafe)?.is_some() {
                self.changes.insert(rela_path)?;
                return Ok(None);
            }
        }
        Ok(Some((rela_path, excluded)))
    }

    fn file(
        &mut self,
        dir: &Tree,
        name: &OsStr,
        rela_path: BString,
        kind: PathKind,
        excluded: bool,
    ) -> Result<(), GitReadError> {
        let Some(range) = self.index.entry_range(rela_path.as_bstr()) else {
            // Sockets, FIFOs and devices can't be added, so no work is lost with them.
            if matches!(kind, PathKind::File | PathKind::Symlink)
                && !excluded
                && !self.ignores.is_excluded(rela_path.as_bstr(), false)
            {
                self.changes.insert(rela_path)?;
            }
            return Ok(());
        };
        for position in range.clone() {
            self.seen[position] = true;
        }
        let entry = &self.index.entries()[range.start];
        let unmerged = entry.stage_raw() != 0;
        let skipped = entry
            .flags
            .contains(gix::index::entry::Flags::SKIP_WORKTREE);
        if !unmerged && !skipped && self.file_changed(dir, name, entry)? {
            self.changes.insert(rela_path)?;
        }
        Ok(())
    }

    fn file_changed(
        &self,
        dir: &Tree,
        name: &OsStr,
        entry: &gix::index::Entry,
    ) -> Result<bool, GitReadError> {
        use gix::index::entry::Mode;
        use nix::sys::stat::SFlag;
        let path = || dir.path().join(name);
        // One name below an open folder, not followed: nothing to resolve, nothing to follow.
        let stat =
            match nix::sys::stat::fstatat(dir.fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
            {
                Ok(stat) => stat,
                Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => return Ok(true),
                Err(e) => {
                    return Err(GitReadError::Io {
                        path: path(),
                        source: e.into(),
                    })
                }
            };
        let format = SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits());
        let executable = stat.st_mode & 0o100 != 0;
        let type_matches = match entry.mode {
            Mode::FILE => format == SFlag::S_IFREG && !executable,
            Mode::FILE_EXECUTABLE => format == SFlag::S_IFREG && executable,
            Mode::SYMLINK => format == SFlag::S_IFLNK,
            _ => false,
        };
        if !type_matches {
            return Ok(true);
        }
        let time = |secs: i64, nsecs: i64| gix::index::entry::stat::Time {
            secs: u32::try_from(secs).unwrap_or_default(),
            nsecs: u32::try_from(nsecs).unwrap_or_default(),
        };
        // The fields git keeps, truncated to 32 bits as git does.
        let current = gix::index::entry::Stat {
            mtime: time(stat.st_mtime, stat.st_mtime_nsec),
            ctime: time(stat.st_ctime, stat.st_ctime_nsec),
            dev: stat.st_dev as u32,
            ino: stat.st_ino as u32,
            uid: stat.st_uid,
            gid: stat.st_gid,
            size: stat.st_size as u32,
        };
        let options = gix::index::entry::stat::Options::default();
        if entry.stat.matches(&current, options)
            && !entry.stat.is_racy(self.index.timestamp(), options)
        {
            return Ok(false);
        }
        // git stores a size of 0 for entries it found racily clean, so only a recorded size can
        // prove a change without reading the file.
        if entry.mode != Mode::SYMLINK && entry.stat.size != 0 && entry.stat.size != current.size {
            return Ok(true);
        }
        let actual = if entry.mode == Mode::SYMLINK {
            let target = match nix::fcntl::readlinkat(dir.fd(), name) {
                Ok(target) => target,
                Err(_) => return Ok(true),
            };
            gix::objs::compute_hash(
                self.hash_kind,
                gix::objs::Kind::Blob,
                target.as_encoded_bytes(),
            )
        } else {
            let mut file = match dir.open_file(name) {
                Ok(Some(file)) => file,
                // Gone, or replaced by something that is not a regular file.
                Ok(None) | Err(ConfinedError::Symlink(_) | ConfinedError::NotRegular { .. }) => {
                    return Ok(true)
                }
                Err(e) => return Err(read_unsafe(e)),
            };
            let opened = file.metadata().map_err(|source| GitReadError::Io {
                path: path(),
                source,
            })?;
            {
                use std::os::unix::fs::MetadataExt;
                if (opened.dev(), opened.ino()) != (stat.st_dev, stat.st_ino) {
                    return Ok(true);
                }
            }
            gix::objs::compute_stream_hash(
                self.hash_kind,
                gix::objs::Kind::Blob,
                &mut file,
                opened.len(),
                &mut gix::progress::Discard,
                self.interrupt,
            )
        };
        check_interrupt(self.interrupt, self.repo)?;
        // A file that changes while being hashed, or can't be hashed, is reported as changed:
        // nobody should delete a worktree that is being written to.
        Ok(actual.map_or(true, |actual| actual != entry.id))
    }
}

/// Whether the repository nested at `name` in `dir` has another commit checked out than
/// `recorded`. An uninitialized submodule (no `.git` inside) is clean, as for git; a `.git`
/// file (it would name a git folder elsewhere) and anything unreadable count as changed.
fn submodule_changed(
    dir: &Tree,
    name: &OsStr,
    recorded: ObjectId,
    hash_kind: gix::hash::Kind,
) -> bool {
    let Ok(Some(nested)) = dir.subtree(name) else {
        return true;
    };
    match nested.kind(".git") {
        Ok(None) => return false,
        Ok(Some(PathKind::Dir)) => {}
        _ => return true,
    }
    let Ok(Some(git)) = nested.subtree(".git") else {
        return true;
    };
    let refs = Refs {
        git: &git,
        hash_kind,
    };
    refs.head().map_or(true, |head| head != Some(recorded))
}

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
