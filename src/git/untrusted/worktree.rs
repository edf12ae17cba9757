//! A loop's working tree against its index and HEAD: changed paths, gitlinks, the ignore rules, all read as data.

use super::*;
use std::collections::BTreeMap;

/// The changed paths of a worktree, with a ceiling: a hostile repository can name more
/// paths than a host should hold.
pub(super) struct Changes {
    paths: BTreeSet<BString>,
    /// The untracked files among `paths` (in no index entry), with what [`Untracked`] says.
    untracked: BTreeMap<BString, (u64, BString)>,
    repo: PathBuf,
    /// At most this many paths ([`MAX_CHANGES`]).
    limit: usize,
}

impl Changes {
    fn new(repo: PathBuf) -> Changes {
        Changes {
            paths: BTreeSet::new(),
            untracked: BTreeMap::new(),
            repo,
            limit: MAX_CHANGES,
        }
    }

    fn insert_untracked(
        &mut self,
        path: BString,
        size: u64,
        folder: BString,
    ) -> Result<(), GitReadError> {
        self.untracked.insert(path.clone(), (size, folder));
        self.insert(path)
    }

    fn insert(&mut self, path: BString) -> Result<(), GitReadError> {
        self.paths.insert(path);
        if self.paths.len() > self.limit {
            return Err(GitReadError::Unsupported {
                repo: self.repo.clone(),
                what: format!("a worktree with more than {} changed paths", self.limit),
            });
        }
        Ok(())
    }
}

/// A file of the worktree that is in no index entry: new, not yet added.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untracked {
    pub path: String,
    /// Its size in bytes (a symlink's: its target's length), as the worktree read it.
    pub size: u64,
    /// The folder it counts in: the outermost folder above it that holds nothing tracked
    /// (which `git status` shows as one entry, `node_modules/`), else its own folder (`""`
    /// for the top).
    pub folder: String,
}

/// What [`worktree_status`] finds: every changed path, and the untracked ones among them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeStatus {
    /// Sorted, as [`worktree_changes`] returns them.
    pub changed: Vec<String>,
    /// Sorted by path.
    pub untracked: Vec<Untracked>,
}

/// [`worktree_changes`], with the untracked files among the paths told apart: their sizes
/// and the folders they count in, for a caller that bounds what it adds (`autocommit`).
pub fn worktree_status(
    worktree: &Path,
    origin: &gix::Repository,
    limits: &Limits,
    interrupt: &AtomicBool,
) -> Result<WorktreeStatus, GitReadError> {
    let changes = read_changes(worktree, origin, limits, interrupt)?;
    Ok(WorktreeStatus {
        changed: changes
            .paths
            .into_iter()
            .map(|path| path.to_str_lossy().into_owned())
            .collect(),
        untracked: changes
            .untracked
            .into_iter()
            .map(|(path, (size, folder))| Untracked {
                path: path.to_str_lossy().into_owned(),
                size,
                folder: folder.to_str_lossy().into_owned(),
            })
            .collect(),
    })
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
    Ok(read_changes(worktree, origin, limits, interrupt)?
        .paths
        .into_iter()
        .map(|path| path.to_str_lossy().into_owned())
        .collect())
}

fn read_changes(
    worktree: &Path,
    origin: &gix::Repository,
    limits: &Limits,
    interrupt: &AtomicBool,
) -> Result<Changes, GitReadError> {
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

    let mut changes = Changes::new(git_dir.clone());
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
    Ok(changes)
}

/// A worktree of a repository whose files a sandbox writes, its git folder, and the
/// repository's own store, each opened confined.
pub(super) fn open_worktree(
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
    gitlinks_within(worktree, origin, limits, interrupt, MAX_HEAD_ENTRIES)
}

/// The paths that are gitlinks in the index of the repository at `worktree` (a loop's
/// clone, SHA-1 as git-loop makes them), read confined and bounded as [`gitlinks`] reads
/// it, without `HEAD`'s trees: where the person's git at the root enters a submodule
/// (`git add -A`), what a run keeps read-only (`sandbox::fspolicy::nested_cover`). None
/// where the worktree or its index is not there.
pub fn index_gitlinks(worktree: &Path, limits: &Limits) -> Result<Vec<String>, GitReadError> {
    let never = Keeping {
        min_size: u64::MAX,
        settled: Duration::ZERO,
    };
    index_gitlinks_kept(worktree, limits, &never, &|| None).map(|(found, _)| found)
}

/// An answer of [`index_gitlinks_kept`] kept for one tree: its index's stamp and gitlinks.
pub type KeptGitlinks = (crate::fsutil::ChangeStamp, Vec<String>);

/// When [`index_gitlinks_kept`] uses and gives kept answers: for an index of `min_size`
/// bytes or more (below, the scan costs less than reading a kept answer), and gives one
/// to keep only when the index's last change is `settled` old.
#[derive(Debug, Clone, Copy)]
pub struct Keeping {
    pub min_size: u64,
    pub settled: Duration,
}

/// [`index_gitlinks`] with an answer kept from an earlier start. For an index of
/// `keeping.min_size` bytes or more, `kept()` is asked for the answer kept for this tree
/// and, where its stamp is the index's own, that answer is the one (the index is not read
/// again); otherwise the index is scanned as [`index_gitlinks`] scans it. Returns the
/// gitlinks and, for such an index whose last change is `keeping.settled` old, the stamp
/// and the gitlinks to keep.
pub fn index_gitlinks_kept(
    worktree: &Path,
    limits: &Limits,
    keeping: &Keeping,
    kept: &dyn Fn() -> Option<KeptGitlinks>,
) -> Result<(Vec<String>, Option<KeptGitlinks>), GitReadError> {
    let Some(root) = Tree::open(worktree).map_err(read_unsafe)? else {
        return Ok((Vec::new(), None));
    };
    if root.kind(".git").map_err(read_unsafe)? != Some(PathKind::Dir) {
        return Ok((Vec::new(), None));
    }
    let Some(git) = root.subtree(".git").map_err(read_unsafe)? else {
        return Ok((Vec::new(), None));
    };
    let Some(file) = git.open_file("index").map_err(read_unsafe)? else {
        return Ok((Vec::new(), None));
    };
    let path = worktree.join(".git/index");
    // The index as the descriptor holds it (`fsutil::ChangeStamp`: a write since changes it).
    let stamp = nix::sys::stat::fstat(&file)
        .map(|st| crate::fsutil::ChangeStamp::of(&st))
        .map_err(|e| {
            read_unsafe(ConfinedError::Io {
                what: "look at",
                path: path.clone(),
                source: e.into(),
            })
        })?;
    let keeps = stamp.size() >= keeping.min_size;
    if keeps {
        if let Some((at, found)) = kept() {
            if at == stamp {
                return Ok((found.clone(), Some((at, found))));
            }
        }
    }
    // Every run's start asks: an index without the gitlink's mode (160000, as the four
    // bytes of an entry's mode field) anywhere has none, told by a scan through a small
    // buffer rather than its checksum and every entry decoded (a 4.8 MB index read whole
    // cost a start about 4 ms, most of it the page faults of its copy).
    let gitlink = 0o160000u32.to_be_bytes();
    let found = if !confined::contains_bounded(file, &path, MAX_INDEX_SIZE, &gitlink)
        .map_err(read_unsafe)?
    {
        Vec::new()
    } else {
        let index = read_index(&git, &worktree.join(".git"), gix::hash::Kind::Sha1, limits)?;
        index
            .entries()
            .iter()
            .filter(|e| e.mode == gix::index::entry::Mode::COMMIT)
            .map(|e| e.path(&index).to_str_lossy().into_owned())
            .collect()
    };
    // Kept only for the index as it was stamped before the scan: one written since (by a
    // live session's command) has another stamp and is scanned next time.
    let settled = std::time::SystemTime::now()
        .checked_sub(keeping.settled)
        .is_some_and(|before| !stamp.since(before));
    let keep = (keeps && settled).then(|| (stamp, found.clone()));
    Ok((found, keep))
}

/// The ceiling on the entries of `HEAD`'s tree [`gitlinks`] walks.
const MAX_HEAD_ENTRIES: usize = 10_000_000;

/// [`gitlinks`], refused when `HEAD`'s trees hold more than `max_entries` entries.
fn gitlinks_within(
    worktree: &Path,
    origin: &gix::Repository,
    limits: &Limits,
    interrupt: &AtomicBool,
    max_entries: usize,
) -> Result<Vec<String>, GitReadError> {
    use gix::objs::tree::EntryKind;
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
        if seen > max_entries {
            return Err(GitReadError::Unsupported {
                repo: git_dir,
                what: format!("a HEAD of more than {max_entries} entries"),
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
pub(super) fn read_index(
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
pub(super) fn staged_changes(
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
pub(super) struct Ignores {
    search: gix::ignore::Search,
    read: u64,
    /// At most this many bytes of `.gitignore` files in all ([`MAX_IGNORE_TOTAL`]).
    budget: u64,
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
        Ignores {
            search,
            read: 0,
            budget: MAX_IGNORE_TOTAL,
        }
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
        if self.read > self.budget {
            return Err(read_unsafe(ConfinedError::TooLarge {
                path: dir.path().join(".gitignore"),
                size: self.read,
                limit: self.budget,
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

/// The size of `name` in `dir`, not followed (0 when it cannot be had: it was just removed).
fn size_of(dir: &Tree, name: &OsStr) -> u64 {
    nix::sys::stat::fstatat(dir.fd(), name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .map(|stat| u64::try_from(stat.st_size).unwrap_or(0))
        .unwrap_or(0)
}

pub(super) struct WorktreeWalk<'a> {
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
        // (folder below the root, its path in the index's spelling, whether it is ignored,
        // the outermost folder from the top down to it that holds nothing tracked)
        let mut pending = vec![(PathBuf::new(), BString::default(), false, None)];
        while let Some((rel, prefix, excluded, untracked_root)) = pending.pop() {
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
                    let folder = untracked_root.clone().unwrap_or_else(|| prefix.clone());
                    self.changes
                        .insert_untracked(path, size_of(&dir, &name), folder)?;
                    continue;
                };
                let mut rela_path = prefix.clone();
                if !rela_path.is_empty() {
                    rela_path.push_byte(b'/');
                }
                rela_path.push_str(name_bytes);
                if kind == PathKind::Dir {
                    if let Some((below, below_excluded, holds_tracked)) =
                        self.directory(&dir, &name, rela_path, excluded)?
                    {
                        let root = match &untracked_root {
                            Some(root) => Some(root.clone()),
                            None if !holds_tracked => Some(below.clone()),
                            None => None,
                        };
                        pending.push((rel.join(&name), below, below_excluded, root));
                    }
                } else {
                    let folder = untracked_root.as_ref().unwrap_or(&prefix);
                    self.file(&dir, &name, rela_path, kind, excluded, folder)?;
                }
            }
        }
        Ok(())
    }

    /// Decide about a real folder; returns its path to descend with, whether it is
    /// ignored and whether the index holds anything below it, if it is to be entered.
    fn directory(
        &mut self,
        dir: &Tree,
        name: &OsStr,
        rela_path: BString,
        parent_excluded: bool,
    ) -> Result<Option<(BString, bool, bool)>, GitReadError> {
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
        Ok(Some((rela_path, excluded, has_tracked_content)))
    }

    /// `folder`: where the file counts if it is untracked (see [`Untracked::folder`]).
    fn file(
        &mut self,
        dir: &Tree,
        name: &OsStr,
        rela_path: BString,
        kind: PathKind,
        excluded: bool,
        folder: &BString,
    ) -> Result<(), GitReadError> {
        let Some(range) = self.index.entry_range(rela_path.as_bstr()) else {
            // Sockets, FIFOs and devices can't be added, so no work is lost with them.
            if matches!(kind, PathKind::File | PathKind::Symlink)
                && !excluded
                && !self.ignores.is_excluded(rela_path.as_bstr(), false)
            {
                self.changes
                    .insert_untracked(rela_path, size_of(dir, name), folder.clone())?;
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
pub(super) fn submodule_changed(
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
    fn changed_paths_are_counted_once_up_to_the_limit() {
        let mut changes = Changes::new("/loop/.git".into());
        assert_eq!(changes.limit, 1_000_000);
        changes.limit = 2;
        changes.insert("a".into()).unwrap();
        changes.insert("a".into()).unwrap();
        changes.insert("b".into()).unwrap();
        let err = changes.insert("c".into()).unwrap_err();
        assert!(
            matches!(&err, GitReadError::Unsupported { what, .. } if what == "a worktree with more than 2 changed paths"),
            "{err:?}"
        );
    }

    /// A repository whose HEAD has a gitlink two folders down (among four entries in
    /// three trees), and whose index adds one more.
    fn with_gitlinks() -> (tempfile::TempDir, PathBuf) {
        use crate::testutil::git;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        crate::testutil::init_repo(&dir);
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        git(&dir, &["add", "a.txt"]);
        git(&dir, &["commit", "-q", "-m", "a"]);
        let head = git(&dir, &["rev-parse", "HEAD"]);
        let link = |path: &str| {
            git(
                &dir,
                &[
                    "update-index",
                    "--add",
                    "--cacheinfo",
                    &format!("160000,{head},{path}"),
                ],
            )
        };
        link("x/y/sub");
        git(&dir, &["commit", "-q", "-m", "sub"]);
        link("staged");
        (tmp, dir)
    }

    #[test]
    fn the_gitlinks_of_an_index_are_read_only_where_it_has_one() {
        let (_tmp, dir) = with_gitlinks();
        let limits = Limits::default();
        assert_eq!(
            index_gitlinks(&dir, &limits).unwrap(),
            ["staged", "x/y/sub"]
        );
        crate::testutil::git(&dir, &["rm", "-q", "--cached", "staged", "x/y/sub"]);
        assert!(index_gitlinks(&dir, &limits).unwrap().is_empty());
        // No index, no git folder, no worktree: none.
        std::fs::remove_file(dir.join(".git/index")).unwrap();
        assert!(index_gitlinks(&dir, &limits).unwrap().is_empty());
        assert!(index_gitlinks(&dir.join("absent"), &limits)
            .unwrap()
            .is_empty());
        // A corrupt one that holds the mode's bytes is refused, never taken as empty.
        let mut forged = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
        forged.extend_from_slice(&0o160000u32.to_be_bytes());
        std::fs::write(dir.join(".git/index"), forged).unwrap();
        assert!(index_gitlinks(&dir, &limits).is_err());
    }

    #[test]
    fn a_kept_answer_is_taken_only_for_the_index_it_was_kept_for() {
        let (_tmp, dir) = with_gitlinks();
        let limits = Limits::default();
        let keeping = Keeping {
            min_size: 0,
            settled: Duration::ZERO,
        };
        // Nothing kept: scanned, and given to keep.
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &keeping, &|| None).unwrap();
        assert_eq!(found, ["staged", "x/y/sub"]);
        let (stamp, kept) = keep.unwrap();
        assert_eq!(kept, found);
        // The answer kept for this very index is taken as it is: a planted one shows the
        // index was not read again.
        let planted = (stamp, vec!["planted".to_string()]);
        let ask = || Some(planted.clone());
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &keeping, &ask).unwrap();
        assert_eq!(found, ["planted"]);
        assert_eq!(keep, Some(planted.clone()));
        // Not once the index changed, though its bytes, length and modification time are
        // the same again: its change time tells.
        let index = dir.join(".git/index");
        let bytes = std::fs::read(&index).unwrap();
        let modified = std::fs::metadata(&index).unwrap().modified().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&index, &bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&index)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &keeping, &ask).unwrap();
        assert_eq!(found, ["staged", "x/y/sub"]);
        assert_ne!(keep.unwrap().0, stamp);
        // Below the size from which answers are kept, none is asked for or given.
        let small = Keeping {
            min_size: u64::MAX,
            settled: Duration::ZERO,
        };
        let never = || -> Option<KeptGitlinks> { panic!("asked for a kept answer") };
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &small, &never).unwrap();
        assert_eq!(found, ["staged", "x/y/sub"]);
        assert!(keep.is_none());
        // The size is the index's own: kept from its very length, not from a byte more.
        let len = std::fs::metadata(&index).unwrap().len();
        let at = Keeping {
            min_size: len,
            settled: Duration::ZERO,
        };
        let (_, keep) = index_gitlinks_kept(&dir, &limits, &at, &|| None).unwrap();
        assert!(keep.is_some(), "an index of {len} bytes is kept from {len}");
        let above = Keeping {
            min_size: len + 1,
            settled: Duration::ZERO,
        };
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &above, &never).unwrap();
        assert_eq!(found, ["staged", "x/y/sub"]);
        assert!(keep.is_none());
        // An index changed less than `settled` ago is scanned and not given to keep.
        let young = Keeping {
            min_size: 0,
            settled: Duration::from_secs(3600),
        };
        let (found, keep) = index_gitlinks_kept(&dir, &limits, &young, &|| None).unwrap();
        assert_eq!(found, ["staged", "x/y/sub"]);
        assert!(keep.is_none());
    }

    #[test]
    fn gitlinks_are_found_in_heads_trees_and_the_index() {
        let (_tmp, dir) = with_gitlinks();
        let origin = crate::git::objects::open_trusted(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let find = |max| gitlinks_within(&dir, &origin, &Limits::default(), &stop, max);
        assert_eq!(
            gitlinks(&dir, &origin, &Limits::default(), &stop).unwrap(),
            ["staged", "x/y/sub"]
        );
        // HEAD: a.txt and x at the top, y in x, sub in y: four entries.
        assert_eq!(find(4).unwrap(), ["staged", "x/y/sub"]);
        let err = find(3).unwrap_err();
        assert!(
            matches!(&err, GitReadError::Unsupported { what, .. } if what == "a HEAD of more than 3 entries"),
            "{err:?}"
        );
        // Out of the index, still in HEAD: still a gitlink git would enter.
        crate::testutil::git(&dir, &["rm", "-q", "--cached", "x/y/sub"]);
        assert_eq!(find(4).unwrap(), ["staged", "x/y/sub"]);
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(find(4), Err(GitReadError::Interrupted { .. })));
    }

    /// A submodule's folder is judged by the commit checked out there, never walked.
    #[test]
    fn a_submodule_is_changed_only_when_another_commit_is_checked_out_there() {
        let (_tmp, dir) = with_gitlinks();
        let origin = crate::git::objects::open_trusted(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let changes = || worktree_changes(&dir, &origin, &Limits::default(), &stop).unwrap();
        // Not checked out: no folder, then an empty one.
        assert_eq!(changes(), ["staged", "x/y/sub"]);
        std::fs::create_dir_all(dir.join("x/y/sub")).unwrap();
        assert_eq!(changes(), ["staged"]);
        // Checked out at the recorded commit, then at another.
        let recorded = crate::testutil::git(&dir, &["rev-parse", "HEAD~1"]);
        let nested = dir.join("x/y/sub/.git");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(nested.join("HEAD"), format!("{recorded}\n")).unwrap();
        std::fs::write(dir.join("x/y/sub/untracked"), "not looked at\n").unwrap();
        assert_eq!(changes(), ["staged"]);
        std::fs::write(nested.join("HEAD"), format!("{}\n", "4".repeat(40))).unwrap();
        assert_eq!(changes(), ["staged", "x/y/sub"]);
        std::fs::write(nested.join("HEAD"), "garbage\n").unwrap();
        assert_eq!(changes(), ["staged", "x/y/sub"]);
    }

    /// The executable bit and the kind count, as with `core.fileMode=true`.
    #[test]
    fn a_tracked_file_changes_with_its_executable_bit_and_its_kind() {
        use crate::testutil::git;
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        crate::testutil::init_repo(&dir);
        std::fs::write(dir.join("run"), "echo\n").unwrap();
        std::fs::set_permissions(dir.join("run"), PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::write(dir.join("plain"), "p\n").unwrap();
        std::os::unix::fs::symlink("plain", dir.join("link")).unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["commit", "-q", "-m", "kinds"]);
        let origin = crate::git::objects::open_trusted(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let changes = || worktree_changes(&dir, &origin, &Limits::default(), &stop).unwrap();
        assert!(changes().is_empty(), "{:?}", changes());
        std::fs::set_permissions(dir.join("run"), PermissionsExt::from_mode(0o644)).unwrap();
        std::fs::set_permissions(dir.join("plain"), PermissionsExt::from_mode(0o755)).unwrap();
        assert_eq!(changes(), ["plain", "run"]);
        std::fs::set_permissions(dir.join("run"), PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::set_permissions(dir.join("plain"), PermissionsExt::from_mode(0o644)).unwrap();
        std::fs::remove_file(dir.join("link")).unwrap();
        std::fs::write(dir.join("link"), "plain").unwrap();
        assert_eq!(changes(), ["link"]);
        // A tracked file become a folder: it is a change, and so is what the folder holds.
        std::fs::remove_file(dir.join("link")).unwrap();
        std::fs::create_dir(dir.join("link")).unwrap();
        std::fs::write(dir.join("link/inner"), "i\n").unwrap();
        assert_eq!(changes(), ["link", "link/inner"]);
    }

    /// Unmerged paths and intent-to-add entries are changes whatever their content.
    #[test]
    fn unmerged_and_intended_paths_are_changes() {
        use crate::testutil::git;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        crate::testutil::init_repo(&dir);
        std::fs::write(dir.join("c.txt"), "base\n").unwrap();
        std::fs::write(dir.join("e.txt"), "").unwrap();
        git(&dir, &["add", "c.txt", "e.txt"]);
        git(&dir, &["commit", "-q", "-m", "base"]);
        git(&dir, &["switch", "-q", "-c", "side"]);
        std::fs::write(dir.join("c.txt"), "side\n").unwrap();
        git(&dir, &["commit", "-q", "-am", "side"]);
        git(&dir, &["switch", "-q", "main"]);
        std::fs::write(dir.join("c.txt"), "main\n").unwrap();
        git(&dir, &["commit", "-q", "-am", "main"]);
        let origin = crate::git::objects::open_trusted(&dir).unwrap();
        let stop = AtomicBool::new(false);
        let changes = || worktree_changes(&dir, &origin, &Limits::default(), &stop).unwrap();
        assert!(changes().is_empty());
        // A conflict, then the file put back as HEAD has it: still unmerged.
        assert!(!crate::testutil::git_output(&dir, &["merge", "-q", "side"])
            .status
            .success());
        std::fs::write(dir.join("c.txt"), "main\n").unwrap();
        assert_eq!(changes(), ["c.txt"]);
        git(&dir, &["merge", "--abort"]);
        assert!(changes().is_empty());
        // A new file intended to be added.
        std::fs::write(dir.join("n.txt"), "").unwrap();
        git(&dir, &["add", "-N", "n.txt"]);
        assert_eq!(changes(), ["n.txt"]);
        git(&dir, &["rm", "-q", "--cached", "n.txt"]);
        std::fs::remove_file(dir.join("n.txt")).unwrap();
        // An empty file HEAD has, taken out of the index and intended again: its entry is
        // HEAD's blob and the file's, and it is still a change (git lists it as new).
        git(&dir, &["rm", "-q", "--cached", "e.txt"]);
        git(&dir, &["add", "-N", "e.txt"]);
        assert_eq!(changes(), ["e.txt"]);
    }

    #[test]
    fn gitignore_files_are_read_up_to_their_total() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("sub")).unwrap();
        std::fs::write(tmp.path().join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(tmp.path().join("sub/.gitignore"), "tmp/\n").unwrap();
        let root = Tree::open(tmp.path()).unwrap().unwrap();
        let sub = Tree::open(&tmp.path().join("sub")).unwrap().unwrap();
        let mut ignores = Ignores::new(Some(b"/secret\n".to_vec()));
        assert_eq!(ignores.budget, 32 << 20);
        // Both files are eleven bytes: exactly the budget.
        ignores.budget = 11;
        ignores.load(&root, "".into()).unwrap();
        ignores.load(&sub, "sub".into()).unwrap();
        assert_eq!(ignores.read, 11);
        assert!(ignores.is_excluded("a.log".into(), false));
        assert!(ignores.is_excluded("sub/tmp".into(), true));
        assert!(!ignores.is_excluded("tmp".into(), true));
        assert!(ignores.is_excluded("secret".into(), false));
        assert!(!ignores.is_excluded("sub/a.txt".into(), false));
        let mut ignores = Ignores::new(None);
        ignores.budget = 10;
        ignores.load(&root, "".into()).unwrap();
        assert!(matches!(
            ignores.load(&sub, "sub".into()),
            Err(GitReadError::Unsupported { .. } | GitReadError::Unsafe { .. })
        ));
    }

    #[test]
    fn an_index_is_read_whole_and_checked() {
        let (_tmp, dir) = with_gitlinks();
        let git_dir = dir.join(".git");
        let tree = Tree::open(&git_dir).unwrap().unwrap();
        let sha1 = gix::hash::Kind::Sha1;
        let read = || read_index(&tree, &git_dir, sha1, &Limits::default());
        assert_eq!(read().unwrap().entries().len(), 3);
        // Decoding allocates no more than an object may hold.
        let tiny = Limits {
            max_object_size: 8,
            ..Limits::default()
        };
        assert!(matches!(
            read_index(&tree, &git_dir, sha1, &tiny),
            Err(GitReadError::Git { .. })
        ));
        let index = git_dir.join("index");
        let good = std::fs::read(&index).unwrap();
        let unsupported = |r: Result<gix::index::File, GitReadError>| match r {
            Err(GitReadError::Unsupported { what, .. }) => what,
            other => panic!("{:?}", other.map(|_| ())),
        };
        std::fs::write(&index, &good[..5]).unwrap();
        assert!(unsupported(read()).starts_with("an index that is truncated"));
        // A checksum alone is long enough to be checked, and then not an index.
        std::fs::write(&index, [0u8; 20]).unwrap();
        assert!(matches!(read(), Err(GitReadError::Git { .. })));
        let mut flipped = good.clone();
        flipped[20] ^= 1;
        std::fs::write(&index, &flipped).unwrap();
        assert!(unsupported(read()).starts_with("an index that is corrupt"));
        // A null checksum is git's index.skipHash: not checked, the content still decoded.
        let mut unhashed = good.clone();
        let n = unhashed.len();
        unhashed[n - 20..].fill(0);
        std::fs::write(&index, &unhashed).unwrap();
        assert_eq!(read().unwrap().entries().len(), 3);
        std::fs::remove_file(&index).unwrap();
        assert_eq!(read().unwrap().entries().len(), 0);
    }
}
