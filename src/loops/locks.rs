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
    use crate::confined::{Kind, Tree};
    const MAX_ENTRIES: usize = 100_000;
    let Ok(Some(tree)) = Tree::open(git_dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut seen = 0;
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let Ok(Some(entries)) = tree.entries(&dir) else {
            continue;
        };
        for (name, kind) in entries {
            seen += 1;
            if seen > MAX_ENTRIES {
                found.sort();
                return found;
            }
            let rel = dir.join(&name);
            match kind {
                Kind::Dir if rel != Path::new("objects") => pending.push(rel),
                Kind::File if name.as_encoded_bytes().ends_with(b".lock") => {
                    found.push(git_dir.join(rel))
                }
                _ => {}
            }
        }
    }
    found.sort();
    found
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
    let Some(hold) = fsutil::Lock::try_acquire(&ws.loop_run_lock(&rec.id))? else {
        return Ok(None);
    };
    let files = repo_pairs(ws, rec)
        .iter()
        .flat_map(|pair| git_lock_files(&pair.clone_git_dir()))
        .collect();
    Ok(Some(StaleLocks { hold, files }))
}
