//! Creating the workspace (DESIGN.md section 2): the context repositories with their trunk,
//! the user's personal repository, and the folders of the layout. Idempotent: what exists
//! is left alone; every repository is assembled under a temporary name and renamed into
//! place, so an interrupted `init` never leaves a half-made repository behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::fsutil::{self, Lock};
use crate::git::cmd::Git;
use crate::workspace::{Workspace, TRUNK};

/// Where the context repositories come from.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    pub knowledge: Option<String>,
    pub notes: Option<String>,
    /// The person's own repository (memory and config), shared between their machines.
    pub personal: Option<String>,
    /// The person's vaults (encrypted; the identity never travels with them).
    pub vaults: Option<String>,
}

/// What `init` did, for its report.
#[derive(Debug, Default)]
pub struct Report {
    pub created: Vec<PathBuf>,
    /// Cloned from a remote.
    pub cloned: Vec<(PathBuf, String)>,
    /// An existing repository given the remote it lacked.
    pub remote_set: Vec<(PathBuf, String)>,
    /// An existing repository that has this remote already.
    pub existing: Vec<PathBuf>,
}

/// Makes sure the workspace exists; creates it quietly on first use.
pub fn ensure(ws: &Workspace) -> Result<()> {
    if ws.is_initialized() {
        return Ok(());
    }
    init(ws, &Sources::default()).map(|_| ())
}

/// Why the workspace cannot be made or a context repository cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// `path` has another remote than the one asked for (`url`).
    #[error("{} has the remote {have} already", path.display())]
    OtherRemote {
        path: PathBuf,
        have: String,
        url: String,
    },
    #[error("cannot create {}: permission denied", .0.display())]
    NoPermission(PathBuf),
    #[error("{} is not writable", .0.display())]
    NotWritable(PathBuf),
    #[error("{} exists and is not a git repository", .0.display())]
    NotARepository(PathBuf),
    #[error("cannot clone {url}")]
    Clone {
        url: String,
        #[source]
        source: crate::git::cmd::GitError,
    },
    #[error("cannot reach {url}")]
    Unreachable {
        url: String,
        #[source]
        source: crate::git::cmd::GitError,
    },
    /// The trunk of a team remote holds an object over `import.max_object_size`, which the
    /// checkout would inflate; nothing was cloned.
    #[error("the remote {} holds {} {} of {} bytes{}, over the limit of {limit} bytes (import.max_object_size); nothing was cloned", crate::terminal::shown(url), found.kind, found.id, found.size, if found.path.is_empty() { String::new() } else { format!(" ({})", crate::terminal::shown(&found.path)) })]
    TooLarge {
        url: String,
        found: crate::checkout::bound::Oversized,
        limit: u64,
    },
    /// The clone stopped at its memory or disk bound (`sync::quarantine`); nothing was
    /// cloned.
    #[error("{}", crate::sync::bounded_message(url, exceeded, bounds))]
    Bounded {
        url: String,
        exceeded: crate::sync::Exceeded,
        bounds: crate::sync::Bounds,
    },
}

pub fn init(ws: &Workspace, sources: &Sources) -> Result<Report> {
    let mut report = Report::default();
    for dir in ws.layout_dirs() {
        create_dir(&dir)?;
    }
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    type Scaffold<'a> = (
        PathBuf,
        Option<&'a String>,
        &'a [(&'a str, &'a str)],
        &'a str,
    );
    let scaffolds: [Scaffold; 3] = [
        (
            ws.knowledge(),
            sources.knowledge.as_ref(),
            &[(
                "README.md",
                "# Knowledge\n\nThe team's curated knowledge. Agents read it; people publish to it.\n",
            )],
            "knowledge: start",
        ),
        (
            ws.notes(),
            sources.notes.as_ref(),
            &[
                ("inbox.md", "# Inbox\n"),
                ("focus/.gitkeep", ""),
                ("memory/MEMORY.md", "# Memory\n\nOne line per topic file in this folder.\n"),
            ],
            "notes: start",
        ),
        (
            ws.personal(),
            sources.personal.as_ref(),
            &[("memory/MEMORY.md", "# Memory\n")],
            "personal: start",
        ),
    ];
    // Every remote given is checked against what exists before anything is made: a
    // repository with another remote is refused, and nothing changes.
    let vaults = (ws.vaults_dir(), sources.vaults.as_ref());
    for (path, url) in scaffolds
        .iter()
        .map(|(p, u, _, _)| (p.clone(), *u))
        .chain([(vaults.0.clone(), vaults.1)])
    {
        if let (Some(url), Some(have)) = (url, crate::sync::remote_url(&path)) {
            if &have != url {
                return Err(InitError::OtherRemote {
                    path: path.clone(),
                    have,
                    url: url.clone(),
                }
                .into());
            }
        }
    }
    for (path, url, files, message) in scaffolds {
        let jailed = path == ws.personal();
        if path.join(".git").exists() {
            if let Some(url) = url {
                adopt_remote(&path, url, files, message, jailed, &mut report)?;
            }
            continue;
        }
        refuse_non_repo(&path)?;
        match url {
            Some(url) => {
                clone_into(url, &path, files, message, jailed)?;
                report.cloned.push((path, url.clone()));
            }
            None => {
                scaffold_repo(&path, files, message)?;
                report.created.push(path);
            }
        }
    }
    if let (path, Some(url)) = vaults {
        let files: &[(&str, &str)] = &[];
        if path.join(".git").exists() {
            adopt_remote(&path, url, files, "vaults: start", false, &mut report)?;
        } else {
            refuse_non_repo(&path)?;
            clone_into(url, &path, files, "vaults: start", false)?;
            report.cloned.push((path, url.clone()));
        }
        crate::vault::adopt_clone(ws)?;
    }
    // The personal config layer's folder (`.loopat/config.toml`), read-only in sandboxes.
    create_dir(&ws.personal().join(".loopat"))?;
    Ok(report)
}

fn create_dir(dir: &Path) -> Result<()> {
    match fs::create_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(30) => {
            Err(InitError::NoPermission(dir.to_path_buf()).into())
        }
        Err(e) => Err(Error::failure(format!("cannot create {}", dir.display())).with_source(e)),
    }
    .and_then(|()| {
        // A folder that exists but is not writable fails later and half-way; find out now.
        let probe = dir.join(format!(".write-test-{}", std::process::id()));
        match fs::write(&probe, b"") {
            Ok(()) => {
                let _ = fs::remove_file(&probe);
                Ok(())
            }
            Err(_) => Err(InitError::NotWritable(dir.to_path_buf()).into()),
        }
    })
}

fn staging_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.init-{}", std::process::id()))
}

/// A folder in the way of a repository: refused unless empty.
fn refuse_non_repo(path: &Path) -> Result<()> {
    if path.exists()
        && fs::read_dir(path)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return Err(InitError::NotARepository(path.to_path_buf()).into());
    }
    Ok(())
}

/// git for a clone: no hook of a template, no submodule entered.
fn clone_git() -> Git {
    Git::bare().args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "submodule.recurse=false",
        "-c",
        "core.fsmonitor=false",
        // Large blobs are streamed as they arrive, never held whole in memory (see
        // `sync::remote::git`).
        "-c",
        "core.bigFileThreshold=16m",
    ])
}

/// Clones a remote; the clone's checked-out branch is its trunk. An empty remote gets the
/// scaffold (`files`, `message`) as its first commit, which the next `sync` pushes.
/// `jailed`: the files are checked out in a jail rather than by the host's git (the
/// personal repository: its files were written by sandboxes on another machine, and the
/// user's own filters and hooks are for their own repositories).
fn clone_into(
    url: &str,
    path: &Path,
    files: &[(&str, &str)],
    message: &str,
    jailed: bool,
) -> Result<()> {
    let tmp = staging_path(path);
    let _ = fsutil::remove_tree(&tmp);
    let result = (|| -> Result<()> {
        // Never checked out by the clone itself: what it would write is judged first.
        let git = clone_git().args([
            "clone",
            "--quiet",
            "--template=",
            "--no-recurse-submodules",
            "--no-checkout",
        ]);
        // Under the bounds of a sync's fetch: what the team's remote sends is a
        // teammate's, and the staging folder is its quarantine.
        let limits = crate::loops::read_limits()?;
        let bounds = crate::sync::Bounds {
            max_object_size: limits.max_object_size,
            max_pack_size: limits.max_pack_size,
        };
        let out = crate::sync::bounded(git, &bounds)
            .arg("--")
            .arg(url)
            .arg(&tmp)
            .output_any()?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if let Some(exceeded) =
                crate::sync::stopped_at_bounds(&stderr, &tmp.join(".git/objects"), &bounds)
            {
                return Err(InitError::Bounded {
                    url: url.to_string(),
                    exceeded,
                    bounds,
                }
                .into());
            }
            return Err(InitError::Clone {
                url: url.to_string(),
                source: crate::git::cmd::GitError::Failed {
                    argv: format!("git clone -- {url}"),
                    stderr: stderr.trim().to_string(),
                },
            }
            .into());
        }
        let empty = crate::sync::trunk_of(&tmp).is_none()
            || Git::in_dir(&tmp)
                .args(["rev-parse", "--verify", "--quiet", "HEAD"])
                .run()
                .is_err();
        if empty {
            Git::in_dir(&tmp)
                .args(["symbolic-ref", "HEAD"])
                .arg(format!("refs/heads/{TRUNK}"))
                .run()?;
            commit_files(&tmp, files, message)?;
        } else {
            refuse_oversized(url, &tmp, &bounds)?;
            if jailed {
                checkout_in_jail(&tmp)?;
            } else {
                Git::in_dir(&tmp)
                    .args(["read-tree", "-u", "--reset", "HEAD"])
                    .run()?;
            }
        }
        fs::rename(&tmp, path).context(|| format!("cannot move the clone to {}", path.display()))
    })();
    if result.is_err() {
        let _ = fsutil::remove_tree(&tmp);
    }
    result
}

/// Refuses a clone that holds an object over `import.max_object_size` (of the operator
/// config) anywhere in its history, judged by the objects' headers before the checkout
/// would inflate it (ATTACKS 43): a teammate's push reaches a new machine this way.
fn refuse_oversized(url: &str, dir: &Path, bounds: &crate::sync::Bounds) -> Result<()> {
    let limit = bounds.max_object_size;
    let read = |e: crate::git::objects::GitReadError| {
        Error::failure(format!("cannot read the clone in {}", dir.display())).with_source(e)
    };
    // Every object of the clone, by its header: one over the limit anywhere in the
    // history is refused as in the tree (an object over the limit never enters the
    // workspace's store). A blob is named by its path below, when the tree has it.
    if let Some(found) =
        crate::checkout::bound::oversized_in_store(&dir.join(".git/objects"), limit)
            .map_err(read)?
    {
        if found.kind != "blob" {
            return Err(InitError::TooLarge {
                url: url.to_string(),
                found,
                limit,
            }
            .into());
        }
        let repo = crate::git::objects::open_trusted(dir).map_err(read)?;
        let tip = crate::git::objects::resolve_rev(&repo, "HEAD").map_err(read)?;
        let named = tip.and_then(|tip| {
            crate::checkout::bound::oversized_in_tree(&repo, tip, limit)
                .ok()
                .flatten()
        });
        return Err(InitError::TooLarge {
            url: url.to_string(),
            found: named.unwrap_or(found),
            limit,
        }
        .into());
    }
    Ok(())
}

/// Checks out a fresh clone's trunk in a jail that sees only the clone.
fn checkout_in_jail(dir: &Path) -> Result<()> {
    use crate::sandbox::task;
    let out = task::jail(&task::Jail {
        tree: dir.to_path_buf(),
        inside: task::inside("personal"),
        command: task::git_argv(&["read-tree", "-u", "--reset", "HEAD"]),
        env: task::git_env(("git loop", "git-loop@localhost")),
        bound: task::Bound::DEFAULT,
    })?;
    if !out.success() {
        return Err(Error::failure(format!(
            "cannot check out the clone in {}: {}",
            dir.display(),
            crate::terminal::shown(out.stderr_text().trim())
        )));
    }
    Ok(())
}

/// Gives an existing repository the remote `url` it lacks (one with another remote was
/// refused before anything was done). A repository that is still only its scaffold's
/// first commit, untouched, is replaced by the clone when the remote has commits: a
/// second machine that ran a command before `init` gets the team's history, not two
/// unrelated ones.
fn adopt_remote(
    path: &Path,
    url: &str,
    files: &[(&str, &str)],
    message: &str,
    jailed: bool,
    report: &mut Report,
) -> Result<()> {
    if crate::sync::remote_url(path).is_some() {
        report.existing.push(path.to_path_buf());
        return Ok(());
    }
    let remote_has_commits = Git::bare()
        .args(["ls-remote", "--heads", "--", url])
        .read()
        .map_err(|source| InitError::Unreachable {
            url: url.to_string(),
            source,
        })?
        .lines()
        .any(|l| !l.trim().is_empty());
    if remote_has_commits && is_pristine(path, message) {
        let old = path.with_file_name(format!(
            ".{}.replaced-{}",
            path.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        fs::rename(path, &old).context(|| format!("cannot move {} aside", path.display()))?;
        if let Err(e) = clone_into(url, path, files, message, jailed) {
            let _ = fs::rename(&old, path);
            return Err(e);
        }
        let _ = fsutil::remove_tree(&old);
        report.cloned.push((path.to_path_buf(), url.to_string()));
        return Ok(());
    }
    Git::in_dir(path)
        .args(["remote", "add", crate::sync::REMOTE, url])
        .run()?;
    report
        .remote_set
        .push((path.to_path_buf(), url.to_string()));
    Ok(())
}

/// Is the repository still exactly what `init` made: one branch with one commit of
/// git-loop's with `message`, nothing changed since?
fn is_pristine(path: &Path, message: &str) -> bool {
    let Ok(repo) = crate::git::objects::open_trusted(path) else {
        return false;
    };
    let Ok(mut head) = repo.head() else {
        return false;
    };
    let Ok(Some(id)) = head.try_peel_to_id() else {
        return false;
    };
    let Ok(commit) = repo.find_commit(id) else {
        return false;
    };
    let ours = commit.parent_ids().next().is_none()
        && commit
            .author()
            .map(|a| a.name == "git loop")
            .unwrap_or(false)
        && commit
            .message_raw()
            .map(|m| m.to_string().trim() == message)
            .unwrap_or(false);
    // Loops' branches, or any other, are work the clone would not have.
    let only_trunk = crate::git::objects::branches(&repo)
        .map(|b| b.len() == 1)
        .unwrap_or(false);
    ours && only_trunk && {
        // Read as data: the personal tree is written by sandboxes.
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        crate::git::objects::worktree_changes(
            path,
            &repo,
            &crate::git::objects::Limits::default(),
            &interrupt,
        )
        .map(|c| c.is_empty())
        .unwrap_or(false)
    }
}

/// A new repository on trunk with one commit holding `files`.
fn scaffold_repo(path: &Path, files: &[(&str, &str)], message: &str) -> Result<()> {
    let tmp = staging_path(path);
    let _ = fsutil::remove_tree(&tmp);
    let result = (|| -> Result<()> {
        Git::bare()
            .args(["init", "--quiet", "--template=", "--initial-branch", TRUNK])
            .arg(&tmp)
            .run()?;
        commit_files(&tmp, files, message)?;
        fs::rename(&tmp, path).context(|| format!("cannot move {} into place", path.display()))
    })();
    if result.is_err() {
        let _ = fsutil::remove_tree(&tmp);
    }
    result
}

/// Writes `files` into the repository at `dir` and commits them as git-loop's.
fn commit_files(dir: &Path, files: &[(&str, &str)], message: &str) -> Result<()> {
    for (rel, text) in files {
        let file = dir.join(rel);
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent).context(|| format!("cannot create {}", parent.display()))?;
        }
        fs::write(&file, text).context(|| format!("cannot write {}", file.display()))?;
    }
    Git::in_dir(dir).args(["add", "--all"]).run()?;
    scaffold_identity(Git::in_dir(dir))
        .args(["commit", "--quiet", "--allow-empty", "--message", message])
        .run()?;
    Ok(())
}

/// Commits that `git-loop` makes of its own scaffolding carry its name, not the user's.
pub fn scaffold_identity(git: Git) -> Git {
    git.env("GIT_AUTHOR_NAME", "git loop")
        .env("GIT_AUTHOR_EMAIL", "git-loop@localhost")
        .env("GIT_COMMITTER_NAME", "git loop")
        .env("GIT_COMMITTER_EMAIL", "git-loop@localhost")
}
