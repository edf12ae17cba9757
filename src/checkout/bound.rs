//! The bound on what a checkout inflates (DESIGN 4.0, ATTACKS 43): a teammate's push can
//! carry a blob that inflates to gigabytes from a few kilobytes on the wire. Before a sync
//! takes a fetched trunk, and before `new` checks out a context repository, every object
//! the checkout would bring is judged by its header (its size, read without inflating it)
//! against `import.max_object_size`, the bound imports of loops already have.
//!
//! Only what is new is judged: each tree entry is compared with the same entry of the
//! commit's parents, and a subtree or blob a parent has already is not descended into, so
//! a sync pays for the paths that changed, not for the whole tree.

use std::collections::HashSet;

use gix::bstr::BString;
use gix::objs::{FindExt as _, FindHeader as _};
use gix::ObjectId;

use crate::git::objects::{self, GitReadError};

/// An object over the bound: which one, where it sits and how large it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized {
    pub id: ObjectId,
    /// Its path in the tree (empty for a commit or a root tree).
    pub path: String,
    pub kind: &'static str,
    pub size: u64,
}

/// The first object reachable from `tip` and not from any of `hidden` whose size is over
/// `limit`; `None` when all fit. Commits and trees are judged by their header before they
/// are read; blobs are never read.
pub fn oversized_since(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
    limit: u64,
) -> Result<Option<Oversized>, GitReadError> {
    let mut judge = Judge {
        repo,
        limit,
        seen: HashSet::new(),
    };
    let walk = repo
        .rev_walk([tip])
        .with_hidden(hidden.iter().copied())
        .all()
        .map_err(|e| walk_err(repo, tip, e))?;
    for info in walk {
        let info = info.map_err(|e| walk_err(repo, tip, e))?;
        if let Some(o) = judge.size(info.id, "", "commit")? {
            return Ok(Some(o));
        }
        let (tree, parents) = {
            let mut buf = Vec::new();
            let commit = repo
                .objects
                .find_commit(&info.id, &mut buf)
                .map_err(|source| GitReadError::Decode {
                    repo: repo.git_dir().to_owned(),
                    id: info.id,
                    source,
                })?;
            (commit.tree(), commit.parents().collect::<Vec<_>>())
        };
        // A parent that is missing (a shallow history) counts as empty: all is judged.
        let parents: Vec<ObjectId> = parents
            .iter()
            .filter_map(|p| objects::commit_tree(repo, *p).ok())
            .collect();
        if let Some(o) = judge.tree(tree, &parents, &BString::default())? {
            return Ok(Some(o));
        }
    }
    Ok(None)
}

/// The first object of commit `tip`'s whole tree (what a fresh checkout writes) over
/// `limit`; `None` when all fit.
pub fn oversized_in_tree(
    repo: &gix::Repository,
    tip: ObjectId,
    limit: u64,
) -> Result<Option<Oversized>, GitReadError> {
    let mut judge = Judge {
        repo,
        limit,
        seen: HashSet::new(),
    };
    if let Some(o) = judge.size(tip, "", "commit")? {
        return Ok(Some(o));
    }
    let tree = objects::commit_tree(repo, tip)?;
    judge.tree(tree, &[], &BString::default())
}

/// The first object of the object folder `objects` itself (its packs and loose objects,
/// never its alternates) whose size is over `limit`, judged by its header alone: a pack
/// entry's header and, for a delta, the result size its delta data starts with; a loose
/// object's first bytes. Commits, trees and tags come before blobs, so that a blob over the
/// limit is reported only when every commit and tree fits, and can then be named by its
/// path ([`oversized_since`]). For the quarantine of a fetch: what it holds is exactly what
/// arrived, and nothing of it is inflated here.
pub fn oversized_in_store(
    objects: &std::path::Path,
    limit: u64,
) -> Result<Option<Oversized>, GitReadError> {
    use gix::odb::pack;
    let hash = gix::hash::Kind::Sha1;
    let decode = |id: ObjectId, source: gix::Error| GitReadError::Decode {
        repo: objects.to_owned(),
        id,
        source,
    };
    let mut found: Vec<Oversized> = Vec::new();
    let mut note = |id: ObjectId, kind: gix::objs::Kind, size: u64| {
        if size > limit {
            found.push(Oversized {
                id,
                path: String::new(),
                kind: kind_name(kind),
                size,
            });
        }
    };
    let mut indices: Vec<std::path::PathBuf> = match std::fs::read_dir(objects.join("pack")) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "idx"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(GitReadError::Io {
                path: objects.join("pack"),
                source,
            })
        }
    };
    indices.sort();
    for idx in indices {
        let bundle = pack::Bundle::at(&idx, hash).map_err(|source| GitReadError::Git {
            repo: objects.to_owned(),
            action: format!("could not open the pack {}", idx.display()),
            source,
        })?;
        let mut inflate = gix::zlib::Inflate::default();
        let base =
            |id: &gix::oid| -> gix::Result<Option<pack::data::decode::header::ResolvedBase>> {
                match bundle.index.lookup(id) {
                    Some(at) => Ok(Some(pack::data::decode::header::ResolvedBase::InPack(
                        bundle.pack.entry(bundle.index.pack_offset_at_index(at))?,
                    ))),
                    None => Ok(None),
                }
            };
        for entry in bundle.index.iter() {
            let id = entry.oid;
            let header = bundle
                .pack
                .entry(entry.pack_offset)
                .and_then(|e| bundle.pack.decode_header(e, &mut inflate, &base))
                .map_err(|source| decode(id, source))?;
            note(id, header.kind, header.object_size);
        }
    }
    let loose = gix::odb::loose::Store::at(objects, hash);
    for id in loose.iter() {
        let id = id.map_err(|e| GitReadError::Git {
            repo: objects.to_owned(),
            action: "could not list the loose objects".into(),
            source: gix::Error::from_error(e),
        })?;
        if let Some((size, kind)) = loose.try_header(&id).map_err(|source| decode(id, source))? {
            note(id, kind, size);
        }
    }
    found.sort_by_key(|o| (o.kind == "blob", o.id));
    Ok(found.into_iter().next())
}

fn kind_name(kind: gix::objs::Kind) -> &'static str {
    match kind {
        gix::objs::Kind::Commit => "commit",
        gix::objs::Kind::Tree => "tree",
        gix::objs::Kind::Blob => "blob",
        gix::objs::Kind::Tag => "tag",
    }
}

/// A value of `import.max_object_size` that lets an object of `size` bytes in: the size
/// rounded up to whole mebibytes ("200M").
pub fn raise_to(size: u64) -> String {
    format!("{}M", size.div_ceil(1 << 20).max(1))
}

struct Judge<'r> {
    repo: &'r gix::Repository,
    limit: u64,
    /// Trees and blobs already judged (a subtree shared by two new commits once).
    seen: HashSet<ObjectId>,
}

impl Judge<'_> {
    fn size(
        &self,
        id: ObjectId,
        path: &str,
        kind: &'static str,
    ) -> Result<Option<Oversized>, GitReadError> {
        let header = self
            .repo
            .objects
            .try_header(&id)
            .map_err(|source| GitReadError::Decode {
                repo: self.repo.git_dir().to_owned(),
                id,
                source,
            })?
            .ok_or_else(|| GitReadError::ObjectMissing {
                repo: self.repo.git_dir().to_owned(),
                id,
            })?;
        Ok((header.size > self.limit).then(|| Oversized {
            id,
            path: path.to_string(),
            kind,
            size: header.size,
        }))
    }

    /// Tree `id` at `path`, against the trees at the same path in the parents.
    fn tree(
        &mut self,
        id: ObjectId,
        parents: &[ObjectId],
        path: &BString,
    ) -> Result<Option<Oversized>, GitReadError> {
        if parents.contains(&id) || !self.seen.insert(id) {
            return Ok(None);
        }
        let shown = path.to_string();
        if let Some(o) = self.size(id, &shown, "tree")? {
            return Ok(Some(o));
        }
        let items = objects::tree_items(self.repo, id)?;
        let parent_items: Vec<Vec<objects::TreeItem>> = parents
            .iter()
            .map(|p| objects::tree_items(self.repo, *p))
            .collect::<Result<_, _>>()?;
        for item in items {
            let in_parent: Vec<&objects::TreeItem> = parent_items
                .iter()
                .filter_map(|list| list.iter().find(|p| p.name == item.name))
                .collect();
            if in_parent.iter().any(|p| p.id == item.id) {
                continue;
            }
            let mut child = path.clone();
            if !child.is_empty() {
                child.push(b'/');
            }
            child.extend_from_slice(&item.name);
            match item.mode {
                0o040000 => {
                    let sub: Vec<ObjectId> = in_parent
                        .iter()
                        .filter(|p| p.mode == 0o040000)
                        .map(|p| p.id)
                        .collect();
                    if let Some(o) = self.tree(item.id, &sub, &child)? {
                        return Ok(Some(o));
                    }
                }
                // A gitlink names a commit of another repository: nothing here to inflate.
                0o160000 => {}
                _ => {
                    if self.seen.insert(item.id) {
                        if let Some(o) = self.size(item.id, &child.to_string(), "blob")? {
                            return Ok(Some(o));
                        }
                    }
                }
            }
        }
        Ok(None)
    }
}

fn walk_err(
    repo: &gix::Repository,
    tip: ObjectId,
    e: impl std::error::Error + Send + Sync + 'static,
) -> GitReadError {
    GitReadError::Git {
        repo: repo.git_dir().to_owned(),
        action: format!("could not walk history from {tip}"),
        source: gix::Error::from_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    #[test]
    fn only_new_objects_are_judged_and_the_first_too_large_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::create_dir(dir.join("memory")).unwrap();
        std::fs::write(dir.join("memory/old.md"), "x".repeat(5000)).unwrap();
        std::fs::write(dir.join("inbox.md"), "small\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "old"]);
        let old = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).as_bytes()).unwrap();
        std::fs::write(dir.join("memory/new.md"), "y".repeat(3000)).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", "new"]);
        let new = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).as_bytes()).unwrap();
        let repo = objects::open_trusted(dir).unwrap();
        // The old 5000-byte file is the local side's: not judged again.
        assert_eq!(oversized_since(&repo, new, &[old], 4000).unwrap(), None);
        let found = oversized_since(&repo, new, &[old], 2000).unwrap().unwrap();
        assert_eq!(
            (found.path.as_str(), found.kind, found.size),
            ("memory/new.md", "blob", 3000)
        );
        // A fresh checkout writes every file: the old one counts there.
        let found = oversized_in_tree(&repo, new, 4000).unwrap().unwrap();
        assert_eq!((found.path.as_str(), found.size), ("memory/old.md", 5000));
        assert_eq!(oversized_in_tree(&repo, new, 5000).unwrap(), None);
    }

    #[test]
    fn a_store_is_judged_by_its_headers_commits_and_trees_before_blobs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("big.md"), "b".repeat(6000)).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", &"m".repeat(5000)]);
        let commit = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD"]).as_bytes()).unwrap();
        let blob = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD:big.md"]).as_bytes()).unwrap();
        let objects = dir.join(".git/objects");
        let judged = |limit| oversized_in_store(&objects, limit).unwrap();
        // Loose: the commit (5000 bytes and its header) comes before the larger blob.
        let found = judged(5000).unwrap();
        assert_eq!((found.kind, found.id), ("commit", commit));
        assert!(found.size > 5000 && found.path.is_empty());
        let found = judged(5500).unwrap();
        assert_eq!((found.kind, found.id, found.size), ("blob", blob, 6000));
        assert_eq!(judged(6000), None);
        // Packed, the same; a delta is judged by the size of what it makes.
        std::fs::write(dir.join("big.md"), format!("{}c", "b".repeat(6000))).unwrap();
        git(dir, &["commit", "-q", "-am", "again"]);
        git(dir, &["repack", "-a", "-d", "-q"]);
        let grown = ObjectId::from_hex(git(dir, &["rev-parse", "HEAD:big.md"]).as_bytes()).unwrap();
        let found = judged(5000).unwrap();
        assert_eq!((found.kind, found.id), ("commit", commit));
        let found = judged(6000).unwrap();
        assert_eq!((found.kind, found.id, found.size), ("blob", grown, 6001));
        assert_eq!(judged(6001), None);
        // A folder with no objects holds nothing over any limit; no folder is an error.
        std::fs::create_dir(dir.join("empty")).unwrap();
        assert_eq!(oversized_in_store(&dir.join("empty"), 0).unwrap(), None);
        assert!(oversized_in_store(&dir.join("none"), 0).is_err());
    }
}
