//! git's lock files in the repositories git-loop manages, judged by who can own them, never
//! by their age: a lock file is stale when every command that could hold it is provably not
//! running, which the flocks under `locks/` tell.
//!
//! | lock file | who can hold it |
//! | --- | --- |
//! | `refs/heads/loop/<id>.lock`, in any origin | `new` (`new-<id>.lock`), an import (`import-<id>.lock`), `rm`/`gc` (`run-<id>.lock`) of that loop |
//! | `packed-refs.lock` in notes or knowledge | the workspace lock's holder, or an import |
//! | anything else in notes or knowledge (`index.lock`, `HEAD.lock`, `refs/heads/main.lock`, a checkout's marker) | the workspace lock's holder |
//! | git-loop's checkout marker or scratch index in the user's repository | the workspace lock's holder |
//! | anything else in the user's repository | the user's own git, maybe: stale only if written before the machine last booted |
//!
//! The loops' own repositories are judged by their run lock (`loops::stale_git_locks`).

use std::path::{Path, PathBuf};

use crate::fsutil::Lock;
use crate::loops;
use crate::workspace::Workspace;

/// The id `loop/<id>` of a branch lock file `<git_dir>/refs/heads/loop/<id>.lock`.
fn loop_ref_id(git_dir: &Path, lock: &Path) -> Option<String> {
    let rel = lock.strip_prefix(git_dir).ok()?.to_str()?;
    let id = rel
        .strip_prefix("refs/heads/loop/")?
        .strip_suffix(".lock")?;
    loops::is_id_like(id).then(|| id.to_string())
}

fn free(path: &Path) -> bool {
    matches!(Lock::try_acquire(path), Ok(Some(_)))
}

/// Is no command of loop `id` that writes its branches alive?
fn loop_writers_gone(ws: &Workspace, id: &str) -> bool {
    free(&ws.new_lock(id)) && free(&ws.loop_import_lock(id)) && free(&ws.loop_run_lock(id))
}

/// Is no import of any loop alive?
fn no_import_alive(ws: &Workspace) -> bool {
    let Ok(entries) = std::fs::read_dir(ws.locks_dir()) else {
        return true;
    };
    entries.flatten().all(|e| {
        let name = e.file_name();
        let is_import = name
            .to_str()
            .is_some_and(|n| n.starts_with("import-") && n.ends_with(".lock"));
        !is_import || free(&e.path())
    })
}

/// git's lock files in `git_dir`, and git-loop's own scratch files of a checkout update
/// (the scratch index, a marker being written), which have the same owner.
fn lock_and_scratch_files(git_dir: &Path) -> Vec<PathBuf> {
    let mut files = loops::git_lock_files(git_dir);
    for entry in std::fs::read_dir(git_dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if crate::checkout::is_scratch(&path) && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

/// The lock files of the workspace repository at `git_dir` (notes, knowledge) that no live
/// command can own, with why, for a caller that holds the workspace lock. `keep`: lock
/// files not to judge (the markers of checkout updates still to be recovered).
pub fn stale_in_workspace_repo(
    ws: &Workspace,
    git_dir: &Path,
    keep: &dyn Fn(&Path) -> bool,
) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    for lock in lock_and_scratch_files(git_dir) {
        if keep(&lock) {
            continue;
        }
        let why = if let Some(id) = loop_ref_id(git_dir, &lock) {
            if !loop_writers_gone(ws, &id) {
                continue;
            }
            "no git-loop command of that loop is running"
        } else if lock == git_dir.join("packed-refs.lock") {
            if !no_import_alive(ws) {
                continue;
            }
            "no git-loop command holds the workspace, and no import runs"
        } else {
            "no git-loop command holds the workspace"
        };
        out.push((lock, why));
    }
    out
}

/// git's lock files and git-loop's checkout scratch files in the vaults' repository at
/// `git_dir`, for a caller that holds `locks/vaults.lock`: every git-loop command that runs
/// git there holds it, so none of them is owned by a live process.
pub fn stale_in_vaults_repo(git_dir: &Path) -> Vec<PathBuf> {
    lock_and_scratch_files(git_dir)
}

/// Removes [`stale_in_workspace_repo`]'s findings; says what was removed.
pub fn remove_stale_in_workspace_repo(ws: &Workspace, git_dir: &Path) -> Vec<String> {
    stale_in_workspace_repo(ws, git_dir, &|_| false)
        .into_iter()
        .filter(|(lock, _)| std::fs::remove_file(lock).is_ok())
        .map(|(lock, why)| {
            format!(
                "removed the stale {} (left by a killed command; {why})",
                lock.display()
            )
        })
        .collect()
}

/// Removes the lock file of loop `id`'s branch (`refs/heads/loop/<id>.lock`) in the
/// repository at `git_dir` when no command that could hold it runs, for a caller that holds
/// that loop's import lock (so no other import of it is alive): what a killed import left,
/// which would make every later import of the loop fail. Says what it removed.
pub fn remove_stale_loop_ref_lock(ws: &Workspace, git_dir: &Path, id: &str) -> Option<String> {
    let lock = git_dir.join(format!("refs/heads/loop/{id}.lock"));
    let is_file = std::fs::symlink_metadata(&lock).is_ok_and(|m| m.file_type().is_file());
    if !is_file || loop_ref_id(git_dir, &lock).as_deref() != Some(id) {
        return None;
    }
    if !(free(&ws.new_lock(id)) && free(&ws.loop_run_lock(id))) {
        return None;
    }
    std::fs::remove_file(&lock).ok()?;
    Some(format!(
        "removed the stale {} (left by a killed import; no git-loop command of that loop is running)",
        lock.display()
    ))
}

/// How a lock file of the user's repository is judged.
pub enum UserLock {
    /// git-loop's own, and its owner is gone.
    Stale(PathBuf, &'static str),
    /// git-loop's own, and its owner may be alive.
    Busy(PathBuf),
    /// Not git-loop's: maybe the user's own git at work.
    Foreign(PathBuf),
}

/// The lock files of the user's repository at `git_dir`. `workspace_held`: the caller holds
/// the workspace lock, so no checkout update of git-loop's is running.
pub fn judge_user_repo(
    ws: &Workspace,
    git_dir: &Path,
    workspace_held: bool,
    keep: &dyn Fn(&Path) -> bool,
) -> Vec<UserLock> {
    let mut out = Vec::new();
    for lock in lock_and_scratch_files(git_dir) {
        if keep(&lock) {
            continue;
        }
        if let Some(id) = loop_ref_id(git_dir, &lock) {
            out.push(if loop_writers_gone(ws, &id) {
                UserLock::Stale(
                    lock,
                    "a branch of git-loop's, and no git-loop command of that loop is running",
                )
            } else {
                UserLock::Busy(lock)
            });
        } else if crate::checkout::is_marker(&lock) || crate::checkout::is_scratch(&lock) {
            out.push(if workspace_held {
                UserLock::Stale(
                    lock,
                    "git-loop's own, and no git-loop command holds the workspace",
                )
            } else {
                UserLock::Busy(lock)
            });
        } else if written_before_boot(&lock) {
            out.push(UserLock::Stale(
                lock,
                "written before the machine last booted: no process holds it",
            ));
        } else {
            out.push(UserLock::Foreign(lock));
        }
    }
    out
}

/// Was `path` last written before the machine booted (`btime` of /proc/stat)? No process
/// that could hold it survived the reboot.
fn written_before_boot(path: &Path) -> bool {
    let boot = crate::fsutil::read_proc("/proc/stat")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("btime "))
                .and_then(|s| s.trim().parse::<u64>().ok())
        });
    let written = std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    matches!((boot, written), (Some(boot), Some(w)) if w.as_secs() < boot)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::{Duration, UNIX_EPOCH};

    /// A workspace in a temporary folder and a git folder in it, with `files` (relative to
    /// the git folder) written as empty files.
    fn fixture(files: &[&str]) -> (tempfile::TempDir, Workspace, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        fs::create_dir_all(ws.locks_dir()).unwrap();
        let git_dir = tmp.path().join("repo.git");
        for f in files {
            let path = git_dir.join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, b"").unwrap();
        }
        (tmp, ws, git_dir)
    }

    fn names(git_dir: &Path, found: &[(PathBuf, &'static str)]) -> Vec<String> {
        found
            .iter()
            .map(|(p, _)| p.strip_prefix(git_dir).unwrap().display().to_string())
            .collect()
    }

    fn why<'a>(found: &'a [(PathBuf, &'static str)], name: &str) -> &'a str {
        found
            .iter()
            .find(|(p, _)| p.ends_with(name))
            .map(|(_, why)| *why)
            .unwrap_or_else(|| panic!("{name} not found in {found:?}"))
    }

    #[test]
    fn a_branch_lock_names_its_loop_only_under_refs_heads_loop() {
        let g = Path::new("/r/.git");
        let id = |rel: &str| loop_ref_id(g, &g.join(rel));
        assert_eq!(id("refs/heads/loop/ab-12.lock").as_deref(), Some("ab-12"));
        assert_eq!(id("refs/heads/loop/ab-12"), None, "not a lock file");
        assert_eq!(id("refs/heads/main.lock"), None);
        assert_eq!(id("refs/heads/loop/.hidden.lock"), None, "not an id");
        assert_eq!(id("refs/heads/loop/a/b.lock"), None, "not an id");
        assert_eq!(id("refs/heads/loop/.lock"), None, "empty id");
        assert_eq!(
            loop_ref_id(g, Path::new("/elsewhere/refs/heads/loop/ab.lock")),
            None
        );
    }

    #[test]
    fn every_lock_of_a_workspace_repo_is_stale_when_nothing_runs_and_says_why() {
        let (_tmp, ws, g) = fixture(&[
            "index.lock",
            "HEAD.lock",
            "packed-refs.lock",
            "refs/heads/main.lock",
            "refs/heads/loop/ab-1.lock",
            "git-loop-index",
            "git-loop-index.lock",
            "git-loop-marker-x1",
            "objects/pack/tmp.lock",
            "refs/heads/loop/ab-1",
        ]);
        let found = stale_in_workspace_repo(&ws, &g, &|_| false);
        let mut got = names(&g, &found);
        got.sort();
        assert_eq!(
            got,
            [
                "HEAD.lock",
                "git-loop-index",
                "git-loop-index.lock",
                "git-loop-marker-x1",
                "index.lock",
                "packed-refs.lock",
                "refs/heads/loop/ab-1.lock",
                "refs/heads/main.lock",
            ],
            "each once; nothing under objects/, no plain ref"
        );
        assert_eq!(
            why(&found, "refs/heads/loop/ab-1.lock"),
            "no git-loop command of that loop is running"
        );
        assert_eq!(
            why(&found, "packed-refs.lock"),
            "no git-loop command holds the workspace, and no import runs"
        );
        assert_eq!(
            why(&found, "index.lock"),
            "no git-loop command holds the workspace"
        );
        assert_eq!(
            why(&found, "git-loop-index"),
            "no git-loop command holds the workspace"
        );
    }

    #[test]
    fn a_branch_lock_is_kept_while_any_writer_of_that_loop_runs() {
        for held in ["new-ab-1.lock", "import-ab-1.lock", "run-ab-1.lock"] {
            let (_tmp, ws, g) =
                fixture(&["refs/heads/loop/ab-1.lock", "refs/heads/loop/cd-2.lock"]);
            let _lock = Lock::acquire(&ws.locks_dir().join(held)).unwrap();
            let found = stale_in_workspace_repo(&ws, &g, &|_| false);
            assert_eq!(
                names(&g, &found),
                ["refs/heads/loop/cd-2.lock"],
                "holding {held}"
            );
            let user = judge_user_repo(&ws, &g, true, &|_| false);
            assert!(
                matches!(&user[..], [UserLock::Busy(a), UserLock::Stale(b, _)]
                    if a.ends_with("loop/ab-1.lock") && b.ends_with("loop/cd-2.lock")),
                "holding {held}"
            );
        }
    }

    #[test]
    fn packed_refs_lock_is_kept_while_any_import_runs_and_only_an_import() {
        let (_tmp, ws, g) = fixture(&["packed-refs.lock"]);
        {
            let _other = Lock::acquire(&ws.locks_dir().join("run-zz-9.lock")).unwrap();
            let _not_a_lock = Lock::acquire(&ws.locks_dir().join("import-zz-9")).unwrap();
            let found = stale_in_workspace_repo(&ws, &g, &|_| false);
            assert_eq!(names(&g, &found), ["packed-refs.lock"]);
        }
        {
            let _import = Lock::acquire(&ws.locks_dir().join("import-zz-9.lock")).unwrap();
            assert!(stale_in_workspace_repo(&ws, &g, &|_| false).is_empty());
        }
        // A released import's lock file stays behind: free, so no longer in the way.
        assert_eq!(
            names(&g, &stale_in_workspace_repo(&ws, &g, &|_| false)),
            ["packed-refs.lock"]
        );
        // No locks folder at all: nothing can be running.
        fs::remove_dir_all(ws.locks_dir()).unwrap();
        assert_eq!(
            names(&g, &stale_in_workspace_repo(&ws, &g, &|_| false)),
            ["packed-refs.lock"]
        );
    }

    #[test]
    fn kept_files_are_not_judged_and_removal_says_what_it_removed() {
        let (_tmp, ws, g) = fixture(&["index.lock", "HEAD.lock"]);
        let keep_index = |p: &Path| p.ends_with("index.lock");
        assert_eq!(
            names(&g, &stale_in_workspace_repo(&ws, &g, &keep_index)),
            ["HEAD.lock"]
        );

        let said = remove_stale_in_workspace_repo(&ws, &g);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said.iter().all(|s| s.starts_with("removed the stale ")
            && s.ends_with("(left by a killed command; no git-loop command holds the workspace)")));
        assert!(
            said[0].contains(&*g.join("HEAD.lock").to_string_lossy()),
            "{said:?}"
        );
        assert!(!g.join("index.lock").exists() && !g.join("HEAD.lock").exists());
        assert!(
            remove_stale_in_workspace_repo(&ws, &g).is_empty(),
            "nothing left"
        );
    }

    #[test]
    fn in_the_users_repository_only_git_loops_own_files_are_judged_by_the_workspace() {
        let (_tmp, ws, g) = fixture(&["HEAD.lock", "git-loop-index"]);
        let mut marker = MARKER_FOR_TESTS.to_vec();
        marker.extend_from_slice(b"rest of the journal\n");
        fs::write(g.join("index.lock"), &marker).unwrap();

        let held = judge_user_repo(&ws, &g, true, &|_| false);
        let free_ = judge_user_repo(&ws, &g, false, &|_| false);
        let kind = |j: &[UserLock], name: &str| {
            j.iter()
                .find_map(|l| match l {
                    UserLock::Stale(p, why) if p.ends_with(name) => Some(format!("stale: {why}")),
                    UserLock::Busy(p) if p.ends_with(name) => Some("busy".into()),
                    UserLock::Foreign(p) if p.ends_with(name) => Some("foreign".into()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name} not judged"))
        };
        for name in ["index.lock", "git-loop-index"] {
            assert_eq!(
                kind(&held, name),
                "stale: git-loop's own, and no git-loop command holds the workspace"
            );
            assert_eq!(kind(&free_, name), "busy");
        }
        // The user's own lock file, written since the machine booted: maybe the user's git.
        assert_eq!(kind(&held, "HEAD.lock"), "foreign");
        assert_eq!(held.len(), 3);

        // Written before the machine booted: no process can hold it.
        let old = fs::File::options()
            .write(true)
            .open(g.join("HEAD.lock"))
            .unwrap();
        old.set_modified(UNIX_EPOCH + Duration::from_secs(1_000_000))
            .unwrap();
        assert_eq!(
            kind(&judge_user_repo(&ws, &g, false, &|_| false), "HEAD.lock"),
            "stale: written before the machine last booted: no process holds it"
        );
        let keep_all = |_: &Path| true;
        assert!(judge_user_repo(&ws, &g, true, &keep_all).is_empty());
    }

    #[test]
    fn a_lock_file_whose_time_cannot_be_read_is_not_taken_for_old() {
        assert!(!written_before_boot(Path::new("/nonexistent/x.lock")));
        let tmp = tempfile::tempdir().unwrap();
        let now = tmp.path().join("now.lock");
        fs::write(&now, b"").unwrap();
        assert!(!written_before_boot(&now));
    }

    const MARKER_FOR_TESTS: &[u8] = crate::checkout::MARKER_FOR_TESTS;

    #[test]
    fn every_lock_and_scratch_file_of_the_vaults_repository_is_its_lock_holders() {
        let (_tmp, _ws, g) = fixture(&[
            "index.lock",
            "HEAD.lock",
            "AUTO_MERGE.lock",
            "refs/heads/main.lock",
            "refs/remotes/origin/main.lock",
            "git-loop-index",
            "objects/pack/tmp.lock",
            "refs/heads/main",
        ]);
        let mut got: Vec<String> = stale_in_vaults_repo(&g)
            .iter()
            .map(|p| p.strip_prefix(&g).unwrap().display().to_string())
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "AUTO_MERGE.lock",
                "HEAD.lock",
                "git-loop-index",
                "index.lock",
                "refs/heads/main.lock",
                "refs/remotes/origin/main.lock"
            ]
        );
    }

    #[test]
    fn a_killed_imports_branch_lock_goes_when_no_new_or_run_of_the_loop_is_alive() {
        let (_tmp, ws, g) = fixture(&["refs/heads/loop/ab-1.lock", "refs/heads/loop/cd-2.lock"]);
        // The caller holds the import lock itself.
        let _import = Lock::acquire(&ws.loop_import_lock("ab-1")).unwrap();
        let said = remove_stale_loop_ref_lock(&ws, &g, "ab-1").unwrap();
        assert!(
            said.starts_with("removed the stale ") && said.contains("killed import"),
            "{said}"
        );
        assert!(!g.join("refs/heads/loop/ab-1.lock").exists());
        assert!(
            g.join("refs/heads/loop/cd-2.lock").exists(),
            "another loop's is not touched"
        );
        assert_eq!(
            remove_stale_loop_ref_lock(&ws, &g, "ab-1"),
            None,
            "nothing left"
        );
        for held in ["new-cd-2.lock", "run-cd-2.lock"] {
            let _alive = Lock::acquire(&ws.locks_dir().join(held)).unwrap();
            assert_eq!(remove_stale_loop_ref_lock(&ws, &g, "cd-2"), None, "{held}");
            assert!(g.join("refs/heads/loop/cd-2.lock").exists());
        }
        assert!(remove_stale_loop_ref_lock(&ws, &g, "cd-2").is_some());
        assert_eq!(remove_stale_loop_ref_lock(&ws, &g, "../x"), None);
    }
}
