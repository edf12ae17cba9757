//! The recovery of an update a killed command left, from its journal, and the journals themselves.

use super::*;

/// The journal's text, or None when there is none.
pub(super) fn read_journal(path: &Path) -> Result<Option<Vec<u8>>, CheckoutError> {
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
pub(super) fn recover_legacy(journal_path: &Path, text: &[u8]) -> Result<Recovered, CheckoutError> {
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
pub(super) fn remove_own_ref_lock(
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
#[derive(Debug)]
pub(super) enum Seen {
    /// Nothing, OLD's content, NEW's, or the beginning of NEW's: git's doing.
    Ours,
    /// Anything else: someone else's.
    Foreign(&'static str),
}

/// Brings a working tree that a killed `read-tree` left anywhere between OLD and NEW to NEW,
/// with a scratch index rebuilt from the index of before, and proves it.
pub(super) fn finish_half_written(
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
pub(super) fn remove_empty_parents(tree: &Tree, rel: &Path) {
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
pub(super) fn classify(
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
pub(super) fn hash_files(
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
pub(super) fn is_prefix_of_new(
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
