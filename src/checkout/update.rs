//! An update in its steps (1 to 6 of the module header): the index locked with the marker, prepared, finished and checked.

use super::*;

/// Locks the index with our marker. A lock file already there: a dead git-loop's marker is
/// removed; another lock is removed in the workspace's checkouts (a dead command's) and
/// named in the user's repository.
pub(super) fn lock_index(
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
pub(super) fn copy_index(files: &Files) -> Result<(), CheckoutError> {
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

/// Paths the dry run says would be overwritten: git lists them indented by a tab, or names
/// one in quotes (`Untracked working tree file 'a.c' would be overwritten`).
pub(super) fn overwritten_paths(stderr: &str) -> Vec<String> {
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

pub(super) fn write_journal(path: &Path, journal: &Journal) -> Result<(), CheckoutError> {
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
pub(super) fn unproven(
    journal: &Journal,
    journal_path: &Path,
    reasons: Vec<String>,
) -> CheckoutError {
    CheckoutError::Unproven {
        worktree: journal.worktree.to_path(),
        branch: journal.branch.clone(),
        new: journal.new.clone(),
        journal: journal_path.to_path_buf(),
        lock: Files::of(&journal.index.to_path()).marker,
        reasons,
    }
}

pub(super) fn target_of(journal: &Journal) -> Target {
    Target {
        origin: journal.origin.to_path(),
        branch: journal.branch.clone(),
        worktree: journal.worktree.to_path(),
        owner: journal.owner,
    }
}

/// The scratch index becomes the index: one rename, then the folder synced.
pub(super) fn replace_index(files: &Files) -> Result<(), CheckoutError> {
    fs::rename(&files.scratch, &files.index).map_err(io_err("replace", &files.index))?;
    if let Some(dir) = files.index.parent() {
        let _ = fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}

/// Step 6: the index `index_file` equals NEW's tree, and the working tree equals it but
/// for exactly the recorded changes, each still as it was.
pub(super) fn verify(
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

pub(super) fn shown_paths(paths: &[BString]) -> String {
    paths
        .iter()
        .map(|p| p.to_str_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}
