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
    pub(super) fn local_branches(&self) -> Result<Vec<(String, ObjectId)>, ImportError> {
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
