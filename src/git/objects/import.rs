//! The import of a loop's branch into its origin: the steps of the module header of `objects`.

use super::*;

/// Verified objects held in memory between being read and being written children-first;
/// beyond this they are read (and verified) again when their turn comes, so a chain of
/// large commits cannot pile up in memory.
pub(super) const HELD_FOR_WRITE: u64 = 64 << 20;

/// What [`import_branch`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOutcome {
    /// The origin's branch before the import (`None`: it did not exist).
    pub old: Option<ObjectId>,
    /// The loop's branch tip, now also the origin's (`None`: the loop has no such branch, nothing changed).
    pub new: Option<ObjectId>,
    /// Objects written into the origin's object database.
    pub objects_copied: usize,
}

/// Bring `refs/heads/<branch>` of the loop repository `loop_git_dir` into the origin `origin_git_dir`.
///
/// See the module documentation for the steps and why each is there. On any error the origin's
/// branch is unchanged; objects already written may remain, which is harmless: they are
/// content-addressed (their names were verified), complete (written children-first) and
/// unreferenced until a later import or `git gc` deals with them.
pub fn import_branch(
    loop_git_dir: &Path,
    origin_git_dir: &Path,
    expected_alternate: &Path,
    branch: &str,
    limits: &Limits,
) -> Result<ImportOutcome, ImportError> {
    let origin = open_trusted(origin_git_dir)?;
    import_branch_into(loop_git_dir, &origin, expected_alternate, branch, limits)
}

/// [`import_branch`] into an origin the caller has already opened (commands that import
/// many loops open each origin once).
pub fn import_branch_into(
    loop_git_dir: &Path,
    origin: &gix::Repository,
    expected_alternate: &Path,
    branch: &str,
    limits: &Limits,
) -> Result<ImportOutcome, ImportError> {
    let name = branch_ref_name(branch)?;
    let mut store = open_store(loop_git_dir, origin.object_hash(), limits)?;
    check_alternates(&store, loop_git_dir, expected_alternate)?;

    let old = direct_ref_target(origin, &name)?;

    let Some(tip) = store.read_branch(&name)? else {
        return Ok(ImportOutcome {
            old,
            new: None,
            objects_copied: 0,
        });
    };
    if old == Some(tip) {
        return Ok(ImportOutcome {
            old,
            new: Some(tip),
            objects_copied: 0,
        });
    }

    let objects_copied = copy_missing_objects(&mut store, origin, tip)?;
    if !origin.objects.exists(&tip) {
        // Unreachable unless the origin's object database misbehaves; never point a ref at nothing.
        return Err(ImportError::MissingObject {
            repo: origin.git_dir().to_owned(),
            id: tip,
        });
    }
    compare_and_swap(
        origin,
        &name,
        old,
        tip,
        &format!("git-loop: import {branch}"),
    )?;
    Ok(ImportOutcome {
        old,
        new: Some(tip),
        objects_copied,
    })
}

/// `path` with `.` and `..` resolved as text (no file-system access).
pub(super) fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The loop's own store. Its `.git` and `objects` must be real folders where git-loop made
/// them: a symlink there (the agent controls the worktree) would make the import read some
/// other repository of the host and copy its objects where the agent can read them.
pub(super) fn open_store(
    loop_git_dir: &Path,
    hash_kind: gix::hash::Kind,
    limits: &Limits,
) -> Result<LoopRepo, ImportError> {
    LoopRepo::open(loop_git_dir, hash_kind, *limits).map_err(|err| match err {
        ImportError::Unsafe {
            source: ConfinedError::Symlink(path) | ConfinedError::NotDir { path },
        }
        | ImportError::UnsafePath { path, .. } => ImportError::AlternatesTampered {
            repo: loop_git_dir.to_owned(),
            expected: loop_git_dir.join("objects"),
            reason: format!("{} is not a real folder (a symlink?)", path.display()),
        },
        other => other,
    })
}

/// Step 1 of an import: the loop must still borrow objects from the origin and nothing else.
pub(super) fn check_alternates(
    store: &LoopRepo,
    loop_git_dir: &Path,
    expected_alternate: &Path,
) -> Result<(), ImportError> {
    let tampered = |reason: String| ImportError::AlternatesTampered {
        repo: loop_git_dir.to_owned(),
        expected: expected_alternate.to_owned(),
        reason,
    };
    let git_dir = fs::canonicalize(loop_git_dir).map_err(import_io_err(loop_git_dir))?;
    let objects_dir = git_dir.join("objects");
    let file = loop_git_dir.join("objects/info/alternates");
    let content = match store.read("objects/info/alternates", MAX_ALTERNATES_FILE_SIZE) {
        Ok(Some(content)) => content,
        Ok(None) => return Err(tampered(format!("{} does not exist", file.display()))),
        Err(err @ ImportError::Unsafe { .. }) => return Err(tampered(err.to_string())),
        Err(err) => return Err(err),
    };
    let entries: Vec<&[u8]> = content
        .lines()
        .map(|line| line.trim_end_with(|c| c == '\r'))
        .filter(|line| !line.is_empty() && !line.starts_with(b"#"))
        .collect();
    let [entry] = entries.as_slice() else {
        return Err(tampered(format!(
            "expected exactly one entry, found {}",
            entries.len()
        )));
    };
    if entry.starts_with(b"\"") {
        return Err(tampered(
            "quoted entries are never written by git-loop".into(),
        ));
    }
    let entry_path = gix::path::from_byte_slice(entry)
        .map_err(|_| tampered("the entry is not a valid path".into()))?;
    // git resolves relative entries against the objects directory; it is canonical, so `..` in the
    // entry means the same thing here as it does to git.
    // The common case costs no path resolution: the entry is the relative path git-loop
    // wrote, and with `.git` and `objects` real folders (checked above) its `..` steps
    // mean what they say lexically.
    if lexical(&loop_git_dir.join("objects").join(entry_path)) == lexical(expected_alternate) {
        return Ok(());
    }
    let expected =
        fs::canonicalize(expected_alternate).map_err(import_io_err(expected_alternate))?;
    let named = objects_dir.join(entry_path);
    match fs::canonicalize(&named) {
        Ok(actual) if actual == expected => Ok(()),
        Ok(actual) => Err(tampered(format!("it names {}", actual.display()))),
        Err(err) => Err(tampered(format!(
            "it names {}, which can't be resolved: {err}",
            named.display()
        ))),
    }
}

/// The bytes of verified objects held in memory until they are written: at most
/// [`HELD_FOR_WRITE`] in all.
#[derive(Debug, Default)]
struct Held(u64);

impl Held {
    /// Whether an object of `size` bytes is held until it is written; counts it when it is.
    fn hold(&mut self, size: u64) -> bool {
        if self.0 + size <= HELD_FOR_WRITE {
            self.0 += size;
            true
        } else {
            false
        }
    }

    /// A held object of `size` bytes was written.
    fn release(&mut self, size: u64) {
        self.0 -= size;
    }
}

pub(super) enum Work {
    /// `want` is the kind the referrer claims; a branch tip must be a commit, as `git fsck` demands.
    Visit { id: ObjectId, want: gix::objs::Kind },
    /// Pushed below an object's children, so it is written only after all of them are in the origin.
    /// `data` is held only while the objects held stay under [`HELD_FOR_WRITE`]; otherwise the
    /// object is read and verified again when its turn comes.
    Write {
        id: ObjectId,
        kind: gix::objs::Kind,
        data: Option<Vec<u8>>,
    },
}

/// Step 3 of an import: a depth-first walk from `tip` that stops at objects the origin has and
/// writes the rest in post-order. Hash-verified objects can't form cycles, so everything between
/// an object's `Visit` and its `Write` on the stack belongs to its own subgraph.
///
/// What the walk holds stays bounded by what the loop really stores: an object is pushed at
/// most once, only when the origin lacks it and the loop's own store has it (a tree naming a
/// million objects the origin already has, or that exist nowhere, costs nothing), and the data
/// held for writing is capped.
pub(super) fn copy_missing_objects(
    store: &mut LoopRepo,
    origin: &gix::Repository,
    tip: ObjectId,
) -> Result<usize, ImportError> {
    let hash_kind = origin.object_hash();
    let mut stack = Vec::new();
    let mut seen = HashSet::new();
    let mut held = Held::default();
    let mut copied = 0;
    // An object still to be visited, unless already seen or already in the origin.
    let mut push =
        |stack: &mut Vec<Work>, store: &mut LoopRepo, id: ObjectId, want: gix::objs::Kind| {
            if !seen.insert(id) {
                return Ok(());
            }
            let in_origin = origin.objects.try_header(&id).map_err(import_git_err(
                origin,
                format!("could not read object {id}"),
            ))?;
            if let Some(header) = in_origin {
                if header.kind != want {
                    return Err(store.malformed(
                        id,
                        format!(
                            "is referenced as a {want} but the origin has a {}",
                            header.kind
                        ),
                    ));
                }
                return Ok(());
            }
            if !store.contains(&id)? {
                return Err(ImportError::MissingObject {
                    repo: store.repo.clone(),
                    id,
                });
            }
            stack.push(Work::Visit { id, want });
            Ok(())
        };
    push(&mut stack, store, tip, gix::objs::Kind::Commit)?;
    while let Some(work) = stack.pop() {
        match work {
            Work::Visit { id, want } => {
                let Some((kind, data)) = store.read_verified(&id)? else {
                    return Err(ImportError::MissingObject {
                        repo: store.repo.clone(),
                        id,
                    });
                };
                if kind != want {
                    return Err(
                        store.malformed(id, format!("is referenced as a {want} but is a {kind}"))
                    );
                }
                let children = children_of(store, id, kind, &data, hash_kind)?;
                let data = held.hold(data.len() as u64).then_some(data);
                stack.push(Work::Write { id, kind, data });
                for (child, want) in children {
                    push(&mut stack, store, child, want)?;
                }
            }
            Work::Write { id, kind, data } => {
                let data = match data {
                    Some(data) => {
                        held.release(data.len() as u64);
                        data
                    }
                    None => match store.read_verified(&id)? {
                        Some((again, data)) if again == kind => data,
                        _ => return Err(store.malformed(id, "changed while being imported".into())),
                    },
                };
                let written = origin
                    .objects
                    .write_buf(kind, &data)
                    .map_err(import_git_err(
                        origin,
                        format!("could not write object {id}"),
                    ))?;
                if written != id {
                    // Verified before, so only a store that changed its mind gets here; the
                    // object written under its true name is harmless.
                    return Err(ImportError::HashMismatch {
                        repo: store.repo.clone(),
                        expected: id,
                        actual: written,
                    });
                }
                copied += 1;
            }
        }
    }
    Ok(copied)
}

/// Decode `data` strictly and list what it references. Gitlinks are not followed: submodule
/// commits live in other repositories.
pub(super) fn children_of(
    store: &LoopRepo,
    id: ObjectId,
    kind: gix::objs::Kind,
    data: &[u8],
    hash_kind: gix::hash::Kind,
) -> Result<Vec<(ObjectId, gix::objs::Kind)>, ImportError> {
    use gix::objs::Kind;
    match kind {
        Kind::Blob => Ok(Vec::new()),
        Kind::Commit => {
            let commit = gix::objs::CommitRef::from_bytes(data, hash_kind)
                .map_err(|source| store.malformed_with(id, "is not a valid commit", source))?;
            let mut children = vec![(commit.tree(), Kind::Tree)];
            children.extend(commit.parents().map(|parent| (parent, Kind::Commit)));
            Ok(children)
        }
        // Branch tips are commits and commits never reference tags, so this is only reached if
        // tags are ever imported too; decoding them keeps the walk complete for that case.
        Kind::Tag => {
            let tag = gix::objs::TagRef::from_bytes(data, hash_kind)
                .map_err(|source| store.malformed_with(id, "is not a valid tag", source))?;
            Ok(vec![(tag.target(), tag.target_kind)])
        }
        Kind::Tree => {
            let tree = gix::objs::TreeRef::from_bytes(data, hash_kind)
                .map_err(|source| store.malformed_with(id, "is not a valid tree", source))?;
            check_tree_entries(store, id, &tree)?;
            Ok(tree
                .entries
                .iter()
                .filter_map(|entry| {
                    let want = match entry.mode.kind() {
                        gix::objs::tree::EntryKind::Tree => Kind::Tree,
                        gix::objs::tree::EntryKind::Commit => return None,
                        _ => Kind::Blob,
                    };
                    Some((entry.oid.to_owned(), want))
                })
                .collect())
        }
    }
}

/// The tree checks `git fsck` treats as errors: a tree failing them would leave the origin failing
/// fsck, and some (`.git` entries, `..`) are the raw material of checkout exploits.
pub(super) fn check_tree_entries(
    store: &LoopRepo,
    id: ObjectId,
    tree: &gix::objs::TreeRef<'_>,
) -> Result<(), ImportError> {
    const MODES: [&[u8]; 5] = [b"40000", b"100644", b"100755", b"120000", b"160000"];
    let validate = gix::validate::path::component::Options {
        // Backslashes and colons are valid in names on the platforms loops run on.
        protect_windows: false,
        protect_hfs: true,
        protect_ntfs: true,
    };
    let mut names = HashSet::with_capacity(tree.entries.len());
    let mut previous: Option<&gix::objs::tree::EntryRef<'_>> = None;
    for entry in &tree.entries {
        let mut buf = [0u8; 6];
        let mode = entry.mode.as_bytes(&mut buf);
        if !MODES.contains(&mode.as_bytes()) {
            return Err(store.malformed(
                id,
                format!(
                    "entry {:?} has the non-canonical mode {mode}",
                    entry.filename
                ),
            ));
        }
        let leaf = entry
            .mode
            .is_link()
            .then_some(gix::validate::path::component::Mode::Symlink);
        if let Err(err) = gix::validate::path::component(entry.filename, leaf, validate) {
            return Err(store.malformed(
                id,
                format!("entry {:?} is not allowed: {err}", entry.filename),
            ));
        }
        if !names.insert(entry.filename) {
            return Err(store.malformed(id, format!("entry {:?} appears twice", entry.filename)));
        }
        if let Some(previous) = previous {
            let order = gix::objs::tree::name_order(
                previous.filename,
                previous.mode.is_tree(),
                entry.filename,
                entry.mode.is_tree(),
            );
            if order != std::cmp::Ordering::Less {
                return Err(
                    store.malformed(id, format!("entry {:?} is out of order", entry.filename))
                );
            }
        }
        previous = Some(entry);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The raw bytes of a tree with `entries` (mode, name), each naming the same blob.
    fn tree_bytes(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mode, name) in entries {
            out.extend_from_slice(format!("{mode} {name}\0").as_bytes());
            out.extend_from_slice(&[0x11; 20]);
        }
        out
    }

    /// Why `check_tree_entries` refuses a tree of `entries`, or None.
    fn refusal(entries: &[(&str, &str)]) -> Option<String> {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("objects")).unwrap();
        let store = LoopRepo::open(tmp.path(), gix::hash::Kind::Sha1, Limits::default()).unwrap();
        let bytes = tree_bytes(entries);
        let tree = gix::objs::TreeRef::from_bytes(&bytes, gix::hash::Kind::Sha1).unwrap();
        match check_tree_entries(&store, ObjectId::null(gix::hash::Kind::Sha1), &tree) {
            Ok(()) => None,
            Err(ImportError::MalformedObject { reason, .. }) => Some(reason),
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tree_is_refused_for_what_git_fsck_calls_an_error() {
        // Every canonical mode, in git's order (a folder sorts as if its name ended in /).
        assert_eq!(
            refusal(&[
                ("100644", "a"),
                ("40000", "a-dir"),
                ("100755", "b"),
                ("120000", "c"),
                ("160000", "d"),
                ("40000", "e"),
            ]),
            None
        );
        assert_eq!(
            refusal(&[("100664", "a")]).as_deref(),
            Some("entry \"a\" has the non-canonical mode 100664")
        );
        assert_eq!(
            refusal(&[("040000", "a")]).as_deref(),
            Some("entry \"a\" has the non-canonical mode 040000")
        );
        assert!(refusal(&[("40000", ".git")])
            .unwrap()
            .starts_with("entry \".git\" is not allowed"));
        assert!(refusal(&[("100644", "..")]).is_some());
        // A link named .gitmodules is refused; a file of that name is not.
        assert!(refusal(&[("120000", ".gitmodules")]).is_some());
        assert_eq!(refusal(&[("100644", ".gitmodules")]), None);
        assert_eq!(
            refusal(&[("100644", "a"), ("100644", "a")]).as_deref(),
            Some("entry \"a\" appears twice")
        );
        assert_eq!(
            refusal(&[("100644", "b"), ("100644", "a")]).as_deref(),
            Some("entry \"a\" is out of order")
        );
        // `a.txt` sorts before the folder `a` (as `a/`), which sorts before `a0`.
        assert_eq!(
            refusal(&[("100644", "a.txt"), ("40000", "a"), ("100644", "a0")]),
            None
        );
        assert!(refusal(&[("40000", "a"), ("100644", "a.txt")])
            .unwrap()
            .ends_with("is out of order"));
    }

    /// Why `check_alternates` refuses a loop whose alternates file holds `content`, or
    /// None; the origin's objects are at `origin/.git/objects` next to `loop/`.
    fn alternates_refusal(content: Option<&str>) -> Option<String> {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let origin = root.join("origin/.git/objects");
        std::fs::create_dir_all(&origin).unwrap();
        std::os::unix::fs::symlink(root.join("origin"), root.join("link")).unwrap();
        let git = root.join("loop/.git");
        std::fs::create_dir_all(git.join("objects/info")).unwrap();
        if let Some(content) = content {
            let content = content.replace("ROOT", &root.display().to_string());
            std::fs::write(git.join("objects/info/alternates"), content).unwrap();
        }
        let store = LoopRepo::open(&git, gix::hash::Kind::Sha1, Limits::default()).unwrap();
        match check_alternates(&store, &git, &origin) {
            Ok(()) => None,
            Err(ImportError::AlternatesTampered { reason, .. }) => {
                Some(reason.replace(&root.display().to_string(), "ROOT"))
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_alternates_must_name_the_origin_and_nothing_else() {
        // What git-loop writes, with comments and blank lines around it.
        assert_eq!(
            alternates_refusal(Some("../../../origin/.git/objects\n")),
            None
        );
        assert_eq!(
            alternates_refusal(Some("# git-loop\n\n../../../origin/.git/objects\r\n\n")),
            None
        );
        // The origin by another way, resolved: an absolute path through a link.
        assert_eq!(alternates_refusal(Some("ROOT/link/.git/objects\n")), None);
        assert_eq!(
            alternates_refusal(None).as_deref(),
            Some("ROOT/loop/.git/objects/info/alternates does not exist")
        );
        assert_eq!(
            alternates_refusal(Some("../../../origin/.git/objects\n/elsewhere\n")).as_deref(),
            Some("expected exactly one entry, found 2")
        );
        assert_eq!(
            alternates_refusal(Some("# nothing\n")).as_deref(),
            Some("expected exactly one entry, found 0")
        );
        assert_eq!(
            alternates_refusal(Some("\"../../../origin/.git/objects\"\n")).as_deref(),
            Some("quoted entries are never written by git-loop")
        );
        assert_eq!(
            alternates_refusal(Some("ROOT/loop/.git/objects\n")).as_deref(),
            Some("it names ROOT/loop/.git/objects")
        );
        assert!(alternates_refusal(Some("../../../none\n"))
            .unwrap()
            .ends_with("which can't be resolved: No such file or directory (os error 2)"));
    }

    #[test]
    fn objects_are_held_for_writing_up_to_64_mib_in_all() {
        assert_eq!(HELD_FOR_WRITE, 64 << 20);
        let mut held = Held::default();
        assert!(held.hold(HELD_FOR_WRITE - 10));
        assert!(!held.hold(11), "one byte over");
        assert_eq!(held.0, HELD_FOR_WRITE - 10);
        assert!(held.hold(10), "exactly the bound");
        assert_eq!(held.0, HELD_FOR_WRITE);
        assert!(!held.hold(1));
        assert!(held.hold(0));
        // What is written makes room again.
        held.release(HELD_FOR_WRITE - 10);
        assert_eq!(held.0, 10);
        assert!(held.hold(HELD_FOR_WRITE - 10));
        assert!(!held.hold(1));
    }
}
