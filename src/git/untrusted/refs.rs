//! A loop's refs, read from its loose files and `packed-refs` through the confined view: the one reader of a loop's refs.

use super::*;

pub(super) fn parse_loose_ref(content: &[u8], hash_kind: gix::hash::Kind) -> Option<RefValue> {
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
pub(super) struct Refs<'a> {
    pub(super) git: &'a Tree,
    pub(super) hash_kind: gix::hash::Kind,
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
    pub(super) fn resolve(
        &self,
        name: &gix::refs::FullName,
    ) -> Result<Option<ObjectId>, ImportError> {
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
    pub(super) fn head(&self) -> Result<Option<ObjectId>, ImportError> {
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
            let refname = refname.trim_end_with(|c| c == '\r').as_bstr();
            let id = ObjectId::from_hex(hex)
                .ok()
                .filter(|id| id.kind() == self.hash_kind)
                .ok_or_else(|| self.corrupt(rel, format!("invalid object id for {refname:?}")))?;
            out.push((refname.into(), id));
        }
        Ok(out)
    }

    /// Every branch (`refs/heads/**`) with its tip, loose refs over packed ones.
    pub(super) fn local_branches(&self) -> Result<Vec<(String, ObjectId)>, ImportError> {
        self.local_branches_within(MAX_REF_ENTRIES)
    }

    /// [`Refs::local_branches`], refused when `refs/heads` holds more than `max_entries`
    /// files and folders.
    fn local_branches_within(
        &self,
        max_entries: usize,
    ) -> Result<Vec<(String, ObjectId)>, ImportError> {
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
                if entries > max_entries {
                    return Err(self.corrupt(
                        Path::new("refs/heads"),
                        format!("more than {max_entries} entries"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const C: &str = "3333333333333333333333333333333333333333";

    fn id(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.as_bytes()).unwrap()
    }

    fn name(n: &str) -> gix::refs::FullName {
        gix::refs::FullName::try_from(n).unwrap()
    }

    /// A git folder with `files` (relative path, content).
    fn git_dir(files: &[(&str, String)]) -> (tempfile::TempDir, Tree) {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join("git");
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        for (rel, content) in files {
            let path = git.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }
        let tree = Tree::open(&git).unwrap().unwrap();
        (tmp, tree)
    }

    fn reason(e: ImportError) -> (String, String) {
        match e {
            ImportError::Corrupt { path, reason, .. } => (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                reason,
            ),
            other => panic!("not corrupt: {other:?}"),
        }
    }

    #[test]
    fn a_loose_ref_is_an_id_of_the_repositorys_kind_or_a_full_ref_name() {
        let sha1 = gix::hash::Kind::Sha1;
        assert!(matches!(
            parse_loose_ref(format!("{A}\n").as_bytes(), sha1),
            Some(RefValue::Object(i)) if i == id(A)
        ));
        assert!(matches!(
            parse_loose_ref(b"ref:  refs/heads/x \n", sha1),
            Some(RefValue::Symbolic(n)) if n == name("refs/heads/x")
        ));
        assert!(parse_loose_ref(b"ref: not a name", sha1).is_none());
        assert!(parse_loose_ref("4".repeat(64).as_bytes(), sha1).is_none());
        assert!(parse_loose_ref(b"", sha1).is_none());
    }

    #[test]
    fn symbolic_refs_are_followed_five_levels_and_no_more() {
        let mut files: Vec<(&str, String)> = vec![("refs/heads/b", format!("{A}\n"))];
        let chain = ["s1", "s2", "s3", "s4", "s5"];
        for pair in chain.windows(2) {
            files.push((
                Box::leak(format!("refs/heads/{}", pair[0]).into_boxed_str()),
                format!("ref: refs/heads/{}\n", pair[1]),
            ));
        }
        files.push(("refs/heads/s5", "ref: refs/heads/b\n".into()));
        let (_tmp, git) = git_dir(&files);
        let refs = Refs {
            git: &git,
            hash_kind: gix::hash::Kind::Sha1,
        };
        // s2 -> s3 -> s4 -> s5 -> b: four symbolic, the fifth read is the id.
        assert_eq!(refs.resolve(&name("refs/heads/s2")).unwrap(), Some(id(A)));
        // s1 adds a fifth symbolic level.
        let (file, why) = reason(refs.resolve(&name("refs/heads/s1")).unwrap_err());
        assert_eq!(file, "s1");
        assert_eq!(why, "more than 5 levels of symbolic references");
        assert_eq!(refs.resolve(&name("refs/heads/none")).unwrap(), None);
    }

    #[test]
    fn head_names_a_commit_or_a_branch_and_anything_else_is_corrupt() {
        let sha1 = gix::hash::Kind::Sha1;
        let head = |content: Option<&str>| {
            let mut files = vec![("refs/heads/main", format!("{B}\n"))];
            if let Some(c) = content {
                files.push(("HEAD", c.to_string()));
            }
            let (_tmp, git) = git_dir(&files);
            Refs {
                git: &git,
                hash_kind: sha1,
            }
            .head()
        };
        assert_eq!(head(Some(&format!("{A}\n"))).unwrap(), Some(id(A)));
        assert_eq!(head(Some("ref: refs/heads/main\n")).unwrap(), Some(id(B)));
        assert_eq!(head(Some("ref: refs/heads/unborn\n")).unwrap(), None);
        assert_eq!(
            reason(head(None).unwrap_err()),
            ("HEAD".into(), "it is missing".into())
        );
        assert_eq!(
            reason(head(Some("garbage\n")).unwrap_err()),
            ("HEAD".into(), "not a valid reference".into())
        );
    }

    #[test]
    fn packed_refs_are_read_line_by_line_and_a_bad_id_is_corrupt() {
        let sha1 = gix::hash::Kind::Sha1;
        let packed = format!(
            "# pack-refs with: peeled fully-peeled\n\n{A} refs/heads/a\r\n^{C}\n^{C} peeled, whatever follows\nno-space-line\n{B} refs/tags/t\n"
        );
        let (_tmp, git) = git_dir(&[("packed-refs", packed)]);
        let refs = Refs {
            git: &git,
            hash_kind: sha1,
        };
        assert_eq!(
            refs.packed().unwrap(),
            vec![
                (BString::from("refs/heads/a"), id(A)),
                (BString::from("refs/tags/t"), id(B))
            ]
        );
        assert!(matches!(
            refs.read(&name("refs/heads/a")).unwrap(),
            Some(RefValue::Object(i)) if i == id(A)
        ));
        let (_tmp, git) = git_dir(&[("packed-refs", format!("{} refs/heads/x\n", "5".repeat(64)))]);
        let refs = Refs {
            git: &git,
            hash_kind: sha1,
        };
        assert_eq!(
            reason(refs.packed().unwrap_err()),
            (
                "packed-refs".into(),
                "invalid object id for \"refs/heads/x\"".into()
            )
        );
        // A loose file that is no ref is corrupt, not passed over for packed-refs.
        let (_tmp, git) = git_dir(&[
            ("refs/heads/a", "junk\n".into()),
            ("packed-refs", format!("{A} refs/heads/a\n")),
        ]);
        let refs = Refs {
            git: &git,
            hash_kind: sha1,
        };
        assert_eq!(
            reason(refs.read(&name("refs/heads/a")).err().unwrap()),
            ("a".into(), "not a valid reference".into())
        );
    }

    #[test]
    fn every_branch_is_listed_once_loose_over_packed_and_sorted() {
        let (_tmp, git) = git_dir(&[
            ("refs/heads/z", format!("{A}\n")),
            ("refs/heads/loop/x", format!("{B}\n")),
            ("refs/heads/sym", "ref: refs/heads/z\n".into()),
            ("refs/heads/dangling", "ref: refs/heads/nothing\n".into()),
            // git would not take this name for a branch; it still names work.
            ("refs/heads/bad..name", format!("{C}\n")),
            ("refs/heads/bad..junk", "junk\n".into()),
            (
                "packed-refs",
                format!("{C} refs/heads/z\n{C} refs/heads/p\n{C} refs/tags/t\n"),
            ),
        ]);
        let refs = Refs {
            git: &git,
            hash_kind: gix::hash::Kind::Sha1,
        };
        assert_eq!(
            refs.local_branches().unwrap(),
            vec![
                ("bad..name".to_string(), id(C)),
                ("loop/x".to_string(), id(B)),
                ("p".to_string(), id(C)),
                ("sym".to_string(), id(A)),
                ("z".to_string(), id(A)),
            ]
        );
        // Six files and one folder below refs/heads: seven entries are enough, six are
        // not.
        assert_eq!(refs.local_branches_within(7).unwrap().len(), 5);
        assert_eq!(
            reason(refs.local_branches_within(6).unwrap_err()),
            ("heads".into(), "more than 6 entries".into())
        );
        assert_eq!(MAX_REF_ENTRIES, 100_000);
    }
}
