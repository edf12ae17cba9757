//! What stands in a checkout: a commit's tree, the index, the working tree read without following links.

use super::*;

/// Every non-tree entry of a commit's tree by path: (kind, id).
pub(super) fn tree_entries(
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

pub(super) type Entries = BTreeMap<BString, (gix::objs::tree::EntryKind, ObjectId)>;

pub(super) fn read_index(path: &Path) -> Result<gix::index::File, CheckoutError> {
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
pub(super) fn index_differences(
    index: &gix::index::File,
    tree: &Entries,
    limit: usize,
) -> Vec<BString> {
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
pub(super) fn fingerprint(tree: &Tree, path: &BStr) -> Result<Fingerprint, CheckoutError> {
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

pub(super) fn read_link(tree: &Tree, rel: &Path) -> Result<Vec<u8>, CheckoutError> {
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

pub(super) fn open_tree(worktree: &Path) -> Result<Tree, CheckoutError> {
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
pub(super) fn changed_paths(
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
pub(super) fn entry_matches_disk(
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
