//! git's lock files in a loop's repository, judged by the loop's run lock.

use super::*;

/// The loop's registered repository must still be where its link points.
pub fn check_repo(ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    match &rec.repo {
        Some(name) if rec.kind == Kind::Code => crate::repos::check_link(ws, name).map(|_| ()),
        _ => Ok(()),
    }
}

/// git's lock files (`*.lock`) in a repository's git folder: `.git/` and everything below
/// it but the objects (whose own locks git cleans up itself), read without following links
/// (the git folder itself included: one that is a link yields nothing) and bounded, since
/// the folder is the agent's.
pub fn git_lock_files(git_dir: &Path) -> Vec<PathBuf> {
    git_lock_files_since(git_dir, &LockWalk::default(), None).0
}

/// What a walk for lock files saw of one git folder, kept so that the next walk lists only
/// the folders that changed since (see [`git_lock_files_since`]): each folder without a
/// lock file, by its path below the git folder, with its stamp and its subfolders.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockWalk {
    pub folders: std::collections::BTreeMap<String, LockFolder>,
}

/// One folder of a [`LockWalk`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockFolder {
    pub stamp: FolderStamp,
    /// The names of its subfolders (`objects` left out at the top).
    pub folders: Vec<String>,
}

/// Which folder a folder is and when its entries last changed: creating, removing or
/// renaming an entry sets the folder's times (see [`ChangeStamp`]).
pub use crate::fsutil::ChangeStamp as FolderStamp;

/// [`git_lock_files`], listing only the folders whose stamp differs from `before`'s: a
/// folder that is as it was holds no lock file (only folders without one are kept) and the
/// same subfolders, which are looked at in turn. Folders are looked at from the git folder
/// down, so each one is reached through folders shown unchanged (no link can have been put
/// on the way). With `racy`, the walk to keep for next time: the folders without a lock
/// file whose stamp is older than `racy` (see [`FolderStamp::since`]). A stamp that cannot
/// be read means a listing, as before.
pub fn git_lock_files_since(
    git_dir: &Path,
    before: &LockWalk,
    racy: Option<std::time::Duration>,
) -> (Vec<PathBuf>, LockWalk) {
    let now = std::time::SystemTime::now();
    walk_since(git_dir, before, racy.and_then(|r| now.checked_sub(r)))
}

/// [`git_lock_files_since`], keeping the folders whose stamp is older than `keep_before`.
fn walk_since(
    git_dir: &Path,
    before: &LockWalk,
    keep_before: Option<std::time::SystemTime>,
) -> (Vec<PathBuf>, LockWalk) {
    use crate::confined::{Kind, Tree};
    use nix::fcntl::AtFlags;
    const MAX_ENTRIES: usize = 100_000;
    let mut kept = LockWalk::default();
    let Ok(Some(tree)) = Tree::open(git_dir) else {
        return (Vec::new(), kept);
    };
    let mut found = Vec::new();
    let mut seen = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let key = dir.to_string_lossy().into_owned();
        let stat = match dir.as_os_str().is_empty() {
            true => nix::sys::stat::fstat(tree.fd()),
            false => nix::sys::stat::fstatat(tree.fd(), &dir, AtFlags::AT_SYMLINK_NOFOLLOW),
        };
        let stamp = stat
            .ok()
            .filter(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR)
            .map(|s| FolderStamp::of(&s));
        if let (Some(stamp), Some(was)) = (stamp, before.folders.get(&key)) {
            if was.stamp == stamp && keep_before.is_some_and(|t| !stamp.since(t)) {
                pending.extend(was.folders.iter().map(|f| dir.join(f)));
                kept.folders.insert(key, was.clone());
                continue;
            }
        }
        // At most the entries still allowed: a folder the agent filled with millions of
        // names is not read past them.
        let entries = match tree.entries_at_most(&dir, MAX_ENTRIES - seen) {
            Ok(Some(entries)) => entries,
            Err(crate::confined::ConfinedError::TooMany { .. }) => {
                found.sort();
                return (found, LockWalk::default());
            }
            _ => continue,
        };
        let mut folders = Vec::new();
        let mut locks = false;
        seen += entries.len();
        for (name, kind) in entries {
            let rel = dir.join(&name);
            match kind {
                Kind::Dir if rel != Path::new("objects") => {
                    folders.push(name.to_string_lossy().into_owned());
                    pending.push(rel);
                }
                Kind::File if name.as_encoded_bytes().ends_with(b".lock") => {
                    locks = true;
                    found.push(git_dir.join(rel))
                }
                _ => {}
            }
        }
        // Kept only when every name is one the next walk can join again.
        let plain = folders
            .iter()
            .all(|f| !f.contains(['/', char::REPLACEMENT_CHARACTER]));
        if let (Some(stamp), Some(keep_before), false, true) = (stamp, keep_before, locks, plain) {
            if !stamp.since(keep_before) {
                kept.folders.insert(key, LockFolder { stamp, folders });
            }
        }
    }
    found.sort();
    (found, kept)
}

/// The git lock files of a loop's repositories that nothing can own any more, with the
/// loop's run lock held exclusively so that no run starts while they are removed.
pub struct StaleLocks {
    hold: fsutil::Lock,
    pub files: Vec<PathBuf>,
}

impl StaleLocks {
    /// The hold on the loop's run lock, made shared: a run that starts now holds it so.
    pub fn share(self) -> Result<fsutil::Lock> {
        self.hold.share()
    }

    /// The loop's run lock, held exclusively.
    pub fn hold(&self) -> &fsutil::Lock {
        &self.hold
    }

    /// Removes the files; returns those that could not be removed, with why.
    pub fn remove(&self) -> Vec<(PathBuf, io::Error)> {
        self.files
            .iter()
            .filter_map(|f| match fs::remove_file(f) {
                Ok(()) => None,
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => Some((f.clone(), e)),
            })
            .collect()
    }
}

/// git's lock files in the loop's repositories when no run of the loop is alive (the
/// loop's run lock is free, so no git of its sandbox can hold them): `Ok(None)` while a
/// run is live, whose locks are its own. Judged by who could own a lock, never by its age.
pub fn stale_git_locks(ws: &Workspace, rec: &LoopRecord) -> Result<Option<StaleLocks>> {
    Ok(stale_git_locks_since(ws, rec, &LockWalks::new(), None)?.map(|(stale, _)| stale))
}

/// The [`LockWalk`] of each of a loop's git folders, by the folder's path.
pub type LockWalks = std::collections::BTreeMap<PathBuf, LockWalk>;

/// [`stale_git_locks`] with each git folder walked through [`git_lock_files_since`] from
/// `before`; also the walks to keep.
pub fn stale_git_locks_since(
    ws: &Workspace,
    rec: &LoopRecord,
    before: &LockWalks,
    racy: Option<std::time::Duration>,
) -> Result<Option<(StaleLocks, LockWalks)>> {
    let Some(hold) = fsutil::Lock::try_acquire(&ws.loop_run_lock(&rec.id))? else {
        return Ok(None);
    };
    let mut files = Vec::new();
    let mut walks = LockWalks::new();
    let empty = LockWalk::default();
    for pair in repo_pairs(ws, rec) {
        let git_dir = pair.clone_git_dir();
        let was = before.get(&git_dir).unwrap_or(&empty);
        let (found, walk) = git_lock_files_since(&git_dir, was, racy);
        files.extend(found);
        if !walk.folders.is_empty() {
            walks.insert(git_dir, walk);
        }
    }
    Ok(Some((StaleLocks { hold, files }, walks)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::time::{Duration, SystemTime};

    /// A git folder with refs, logs and objects, and no lock file.
    fn git_folder(root: &Path) -> PathBuf {
        let git = root.join(".git");
        for f in [
            "HEAD",
            "config",
            "refs/heads/loop/x",
            "refs/tags/v1",
            "logs/refs/heads/loop/x",
            "objects/pack/p.pack",
        ] {
            let p = git.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        git
    }

    /// Waits until the file system's clock, as a new file in `dir` shows it, has passed
    /// every stamp of `walk`, so that a change made now gets a time of its own.
    fn clock_past(dir: &Path, walk: &LockWalk) {
        let newest = walk
            .folders
            .values()
            .map(|f| f.stamp.mtime.max(f.stamp.ctime))
            .max()
            .unwrap();
        let probe = dir.join("clock-probe");
        loop {
            fs::write(&probe, "").unwrap();
            let m = fs::metadata(&probe).unwrap();
            if (m.ctime(), m.ctime_nsec()) > newest {
                fs::remove_file(&probe).unwrap();
                return;
            }
        }
    }

    /// Every stamp counts as old enough to keep.
    fn all_old() -> Option<SystemTime> {
        Some(SystemTime::now() + Duration::from_secs(3600))
    }

    fn names(git: &Path, found: &[PathBuf]) -> Vec<String> {
        found
            .iter()
            .map(|p| p.strip_prefix(git).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn a_kept_walk_is_used_while_its_folders_are_as_they_were_and_finds_every_new_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let git = git_folder(tmp.path());
        let (found, kept) = walk_since(&git, &LockWalk::default(), all_old());
        assert!(found.is_empty());
        // Every folder but the objects, each with its subfolders.
        let keys: Vec<&str> = kept.folders.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "",
                "logs",
                "logs/refs",
                "logs/refs/heads",
                "logs/refs/heads/loop",
                "refs",
                "refs/heads",
                "refs/heads/loop",
                "refs/tags"
            ]
        );
        assert_eq!(kept.folders[""].folders, ["logs", "refs"]);
        // Nothing changed: the same answer and the same walk, from stamps alone.
        assert_eq!(
            walk_since(&git, &kept, all_old()),
            (Vec::new(), kept.clone())
        );

        // A lock file deep down, in a new folder, and at the top.
        clock_past(tmp.path(), &kept);
        fs::create_dir_all(git.join("refs/heads/loop/new")).unwrap();
        fs::write(git.join("refs/heads/loop/new/y.lock"), "").unwrap();
        fs::write(git.join("index.lock"), "").unwrap();
        let (found, again) = walk_since(&git, &kept, all_old());
        assert_eq!(
            names(&git, &found),
            ["index.lock", "refs/heads/loop/new/y.lock"]
        );
        assert_eq!(found, git_lock_files(&git), "the same as a full walk");
        // Folders holding a lock file are not kept: they are listed until it is gone.
        assert!(!again.folders.contains_key(""));
        assert!(!again.folders.contains_key("refs/heads/loop/new"));
        assert!(again.folders.contains_key("logs/refs"));
        let (found, _) = walk_since(&git, &again, all_old());
        assert_eq!(
            names(&git, &found),
            ["index.lock", "refs/heads/loop/new/y.lock"]
        );

        // A kept folder replaced by a link to a folder holding a lock file: its parent
        // changed, so it is listed again, and the link is not followed.
        let (_, kept) = {
            fs::remove_file(git.join("index.lock")).unwrap();
            fs::remove_file(git.join("refs/heads/loop/new/y.lock")).unwrap();
            walk_since(&git, &LockWalk::default(), all_old())
        };
        clock_past(tmp.path(), &kept);
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        fs::write(elsewhere.join("z.lock"), "").unwrap();
        fs::rename(git.join("refs/tags"), tmp.path().join("tags-moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, git.join("refs/tags")).unwrap();
        let (found, walk) = walk_since(&git, &kept, all_old());
        assert!(found.is_empty());
        assert!(!walk.folders.contains_key("refs/tags"));
        assert_eq!(walk.folders["refs"].folders, ["heads"]);
    }

    #[test]
    fn a_young_folder_is_listed_every_time_and_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let git = git_folder(tmp.path());
        // Made just now: younger than any racy bound.
        let (found, kept) =
            git_lock_files_since(&git, &LockWalk::default(), Some(Duration::from_secs(2)));
        assert!(found.is_empty());
        assert!(kept.folders.is_empty());
        // Without a bound nothing is kept, and a walk kept earlier is not used.
        let (_, old) = walk_since(&git, &LockWalk::default(), all_old());
        clock_past(tmp.path(), &old);
        fs::write(git.join("HEAD.lock"), "").unwrap();
        let (found, kept) = walk_since(&git, &old, None);
        assert_eq!(names(&git, &found), ["HEAD.lock"]);
        assert!(kept.folders.is_empty());
    }

    #[test]
    fn a_kept_stamp_that_does_not_match_means_a_listing() {
        let tmp = tempfile::tempdir().unwrap();
        let git = git_folder(tmp.path());
        let (_, mut kept) = walk_since(&git, &LockWalk::default(), all_old());
        fs::write(git.join("refs/heads/loop/x.lock"), "").unwrap();
        // A walk that says refs/heads/loop holds nothing, with a stamp not its own (as a
        // tampered or outdated file would say): it is listed, and the lock is found.
        let folder = kept.folders.get_mut("refs/heads/loop").unwrap();
        folder.stamp.ino += 1;
        let (found, _) = walk_since(&git, &kept, all_old());
        assert_eq!(names(&git, &found), ["refs/heads/loop/x.lock"]);
    }
}
