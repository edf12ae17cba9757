//! A loop's object store: its own loose objects and packs, each object read within its bounds and verified.

use super::*;

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

pub(super) struct UntrustedPack {
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
            let found = catch_decoder_panic(pack.data.path(), || pack.find(id, &repo, limit))?;
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
            let pack = catch_decoder_panic(&index_path, || {
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
            })?;
            packs.push(pack);
        }
        Ok(packs)
    }
}

impl UntrustedPack {
    pub(super) fn find(
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
/// be able to crash the host process. A panic is reported as `path` being corrupt.
pub(super) fn catch_decoder_panic<T>(
    path: &Path,
    f: impl FnOnce() -> Result<T, ImportError>,
) -> Result<T, ImportError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| {
        Err(ImportError::Corrupt {
            path: path.to_owned(),
            reason: "the pack decoder panicked on malformed data".into(),
            source: None,
        })
    })
}

/// Inflate a loose object file, `<kind> <size>\0<data>`, streaming from `file`: the header
/// comes first, and an object larger than `limit` is refused by it, having cost a 64-byte
/// inflation. Otherwise exactly `size` bytes are allocated and filled.
pub(super) fn decode_loose_object(
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
pub(super) struct Objects<'a> {
    pub(super) origin: &'a gix::Repository,
    pub(super) store: LoopRepo,
}

impl Objects<'_> {
    pub(super) fn find(
        &mut self,
        id: ObjectId,
        want: gix::objs::Kind,
    ) -> Result<Vec<u8>, ImportError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// `bytes` deflated, as git writes a loose object.
    fn deflated(bytes: &[u8]) -> Vec<u8> {
        let mut w =
            gix::zlib::stream::deflate::Write::new(Vec::new(), gix::zlib::Compression::DEFAULT);
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
        w.into_inner()
    }

    fn decode(stored: &[u8], limit: u64) -> Result<(gix::objs::Kind, Vec<u8>), ImportError> {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("obj");
        std::fs::write(&path, stored).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        decode_loose_object(
            file,
            &path,
            &ObjectId::null(gix::hash::Kind::Sha1),
            tmp.path(),
            limit,
        )
    }

    fn corrupt(r: Result<(gix::objs::Kind, Vec<u8>), ImportError>) -> String {
        match r {
            Err(ImportError::Corrupt { reason, .. }) => reason,
            other => panic!("not corrupt: {other:?}"),
        }
    }

    #[test]
    fn a_loose_object_is_exactly_as_long_as_its_header_says() {
        assert_eq!(
            decode(&deflated(b"blob 5\0hello"), 5).unwrap(),
            (gix::objs::Kind::Blob, b"hello".to_vec())
        );
        assert_eq!(
            decode(&deflated(b"tree 0\0"), 0).unwrap(),
            (gix::objs::Kind::Tree, Vec::new())
        );
        // Longer: within the header's first read, and beyond it.
        assert_eq!(
            corrupt(decode(&deflated(b"blob 4\0hello"), 100)),
            "the object is longer than its header says"
        );
        let mut long = b"blob 100\0".to_vec();
        long.extend_from_slice(&[b'x'; 101]);
        assert_eq!(
            corrupt(decode(&deflated(&long), 1000)),
            "the object is longer than its header says"
        );
        long.truncate(long.len() - 1);
        assert_eq!(decode(&deflated(&long), 1000).unwrap().1.len(), 100);
        long.truncate(long.len() - 1);
        assert_eq!(
            corrupt(decode(&deflated(&long), 1000)),
            "the object is shorter than its header says"
        );
        assert_eq!(
            corrupt(decode(&deflated(b"blob 6\0hello"), 100)),
            "the object is shorter than its header says"
        );
        assert_eq!(
            corrupt(decode(&deflated(b"blob five\0hello"), 100)),
            "no valid object header"
        );
        assert!(corrupt(decode(b"not zlib at all", 100)).starts_with("the zlib stream is damaged"));
    }

    #[test]
    fn a_loose_object_over_the_limit_is_refused_by_its_header() {
        // Its header claims a gigabyte the file does not hold: refused before any of it.
        match decode(&deflated(b"blob 1000000000\0x"), 999_999_999) {
            Err(ImportError::ObjectTooLarge { size, limit, .. }) => {
                assert_eq!((size, limit), (1_000_000_000, 999_999_999))
            }
            other => panic!("{other:?}"),
        }
        assert!(decode(&deflated(b"blob 5\0hello"), 4).is_err());
        assert!(decode(&deflated(b"blob 5\0hello"), 5).is_ok());
    }

    #[test]
    fn a_panicking_decoder_is_a_corrupt_pack_not_a_crash() {
        let pack = Path::new("/loop/.git/objects/pack/p.idx");
        let r: Result<(), ImportError> = catch_decoder_panic(pack, || panic!("lies"));
        match r {
            Err(ImportError::Corrupt { path, reason, .. }) => {
                assert_eq!(path, pack);
                assert_eq!(reason, "the pack decoder panicked on malformed data");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(catch_decoder_panic(pack, || Ok(3)).unwrap(), 3);
    }

    /// What the loop's own store holds, loose or packed, is found by id without reading it;
    /// anything else is not there, whatever its origin holds.
    #[test]
    fn the_store_holds_its_loose_and_packed_objects_and_nothing_else() {
        use crate::testutil::git;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        crate::testutil::init_repo(dir);
        let hash = |text: &str| {
            let path = dir.join("f");
            std::fs::write(&path, text).unwrap();
            ObjectId::from_hex(git(dir, &["hash-object", "-w", "f"]).as_bytes()).unwrap()
        };
        let packed = hash("packed\n");
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{packed},p"),
            ],
        );
        let tree = git(dir, &["write-tree"]);
        let commit = git(dir, &["commit-tree", &tree, "-m", "c"]);
        git(dir, &["update-ref", "refs/heads/main", &commit]);
        git(dir, &["repack", "-a", "-d", "-q"]);
        let loose = hash("loose\n");
        let absent = ObjectId::from_hex(b"1234567890123456789012345678901234567890").unwrap();
        let mut store =
            LoopRepo::open(&dir.join(".git"), gix::hash::Kind::Sha1, Limits::default()).unwrap();
        assert!(store.contains(&loose).unwrap());
        assert!(store.contains(&packed).unwrap());
        assert!(!store.contains(&absent).unwrap());
        assert_eq!(
            store.read_verified(&packed).unwrap(),
            Some((gix::objs::Kind::Blob, b"packed\n".to_vec()))
        );
        assert_eq!(
            store.read_verified(&loose).unwrap(),
            Some((gix::objs::Kind::Blob, b"loose\n".to_vec()))
        );
        assert_eq!(store.read_verified(&absent).unwrap(), None);
        // An object is read up to its bound, to the byte, packed or loose.
        let with = |limits: Limits| {
            LoopRepo::open(&dir.join(".git"), gix::hash::Kind::Sha1, limits).unwrap()
        };
        let capped = |max_object_size| {
            with(Limits {
                max_object_size,
                ..Limits::default()
            })
        };
        assert!(capped(7).read_verified(&packed).unwrap().is_some());
        assert!(matches!(
            capped(6).read_verified(&packed),
            Err(ImportError::ObjectTooLarge {
                size: 7,
                limit: 6,
                ..
            })
        ));
        assert!(capped(6).read_verified(&loose).unwrap().is_some());
        assert!(matches!(
            capped(5).read_verified(&loose),
            Err(ImportError::ObjectTooLarge {
                size: 6,
                limit: 5,
                ..
            })
        ));
        // Packs are held up to the bound, to the byte.
        let total: u64 = std::fs::read_dir(dir.join(".git/objects/pack"))
            .unwrap()
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".idx") || name.ends_with(".pack")
            })
            .map(|e| e.metadata().unwrap().len())
            .sum();
        let bounded = |max_pack_size| {
            with(Limits {
                max_pack_size,
                ..Limits::default()
            })
        };
        assert!(bounded(total).contains(&packed).unwrap());
        assert!(matches!(
            bounded(total - 1).contains(&absent),
            Err(ImportError::PacksTooLarge { size, limit, .. }) if size == total && limit == total - 1
        ));
    }
}
