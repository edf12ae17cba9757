//! git toward the remote: the settings every git of a sync runs with, and the push with the trunk just fetched as the expected old value.

use super::*;

/// The URL of `dir`'s remote, read from its config (a repository of the workspace, so
/// its config is the workspace's own).
pub fn remote_url(dir: &Path) -> Option<String> {
    let repo = objects::open_trusted(dir).ok()?;
    let url = repo
        .config_snapshot()
        .string(format!("remote.{REMOTE}.url").as_str())
        .map(|v| v.to_string())?;
    (!url.is_empty()).then_some(url)
}

/// git for a shared repository's `.git` alone: no working tree is read (the personal
/// one's files are a sandbox's), no hook, fsmonitor or submodule runs, no prompt.
pub(super) fn git(dir: &Path) -> Git {
    // Run inside `.git`: git then finds the repository there and sets no working tree.
    let mut git = Git::in_dir(&dir.join(".git")).env("LC_ALL", "C");
    for setting in [
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "submodule.recurse=false",
        "fetch.recurseSubmodules=false",
        "fetch.writeCommitGraph=false",
        // What a remote sends is a teammate's (or anyone's with push rights): malformed
        // objects are refused on the way in, as a careful server refuses them.
        "transfer.fsckObjects=true",
        // Blobs larger than this are streamed by index-pack as they arrive, never held
        // whole in memory: a teammate's blob that inflates to gigabytes costs a pack on
        // disk, and is refused by its header before anything inflates it (`quarantine`).
        "core.bigFileThreshold=16m",
        "gc.auto=0",
        "maintenance.auto=false",
    ] {
        git = git.arg("-c").arg(setting);
    }
    git
}

pub(super) fn git_err(role: Role) -> impl Fn(GitError) -> SyncError {
    move |source| SyncError::Git {
        role: role.name(),
        source,
    }
}

pub(super) fn tracking_ref(trunk: &str) -> String {
    format!("refs/remotes/{REMOTE}/{trunk}")
}

/// The trunk of a shared repository: the branch its checkout has.
pub fn trunk_of(dir: &Path) -> Option<String> {
    let repo = objects::open_trusted(dir).ok()?;
    objects::head_branch(&repo).ok().flatten()
}

pub(super) fn resolve(dir: &Path, spec: &str) -> Result<Option<ObjectId>, objects::GitReadError> {
    let repo = objects::open_trusted(dir)?;
    objects::resolve_rev(&repo, spec)
}

pub(super) fn ancestor(
    dir: &Path,
    a: ObjectId,
    b: ObjectId,
) -> Result<bool, objects::GitReadError> {
    let repo = objects::open_trusted(dir)?;
    objects::is_ancestor(&repo, a, b)
}

pub(super) fn read_err(role: Role) -> impl Fn(objects::GitReadError) -> SyncError {
    move |e| SyncError::Other {
        role: role.name(),
        message: e.to_string(),
    }
}

/// Where a dry run fetches the remote's trunk: a ref of its own, removed afterwards, so
/// that a dry run moves no ref, not even the remote-tracking one.
pub(super) fn dry_run_ref(trunk: &str) -> String {
    format!("refs/git-loop/dry-run/{trunk}")
}

pub(super) enum FetchFailure {
    Offline(String),
    Error(SyncError),
}

pub(super) fn last_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no answer")
        .trim_start_matches("fatal: ")
        .trim_start_matches("error: ")
        .to_string();
    shown(&line).to_string()
}

/// How a push went.
pub(super) enum Pushed {
    Done,
    /// The remote's trunk is no longer what was fetched: someone else pushed.
    Stale,
    Offline(String),
}

/// Pushes `new` to the remote's trunk, only if the remote's trunk is still `expected`.
pub(super) fn push(
    role: Role,
    dir: &Path,
    trunk: &str,
    new: ObjectId,
    expected: Option<ObjectId>,
) -> Result<Pushed, SyncError> {
    let lease = format!(
        "--force-with-lease=refs/heads/{trunk}:{}",
        expected.map(|e| e.to_string()).unwrap_or_default()
    );
    let out = git(dir)
        .args(["push", "--porcelain", "--no-verify"])
        .arg(lease)
        .arg(REMOTE)
        .arg(format!("{new}:refs/heads/{trunk}"))
        .output_any()
        .map_err(git_err(role))?;
    if out.status.success() {
        // The remote-tracking ref follows what the remote now has.
        let _ = git(dir)
            .args(["update-ref"])
            .arg(tracking_ref(trunk))
            .arg(new.to_string())
            .run();
        return Ok(Pushed::Done);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let rejected: Vec<&str> = stdout.lines().filter(|l| l.starts_with('!')).collect();
    if rejected.is_empty() {
        return Ok(Pushed::Offline(last_line(&stderr)));
    }
    // `[rejected] (stale info)`: the lease failed; `(fetch first)`: the same race seen
    // by the remote; `(failed to update ref)`: another push held the remote's ref lock
    // at that moment. Anything else (a protected branch, a hook) is the remote's answer.
    if rejected.iter().all(|l| {
        l.contains("stale info")
            || l.contains("fetch first")
            || l.contains("non-fast-forward")
            || l.contains("failed to update ref")
            || l.contains("failed to lock")
    }) {
        return Ok(Pushed::Stale);
    }
    Err(SyncError::Refused {
        role: role.name(),
        why: shown(rejected.join("; ").trim_start_matches('!').trim()).to_string(),
    })
}
