//! The loops' repositories: the pairs of a loop repository and its origin, and the import of their branches.

use super::*;

/// One of a loop's repositories and its origin.
#[derive(Debug, Clone)]
pub struct RepoPair {
    /// `code`, `notes` or `knowledge`.
    pub role: &'static str,
    /// The loop's own clone (its worktree folder).
    pub clone: PathBuf,
    /// The origin's top-level folder as the workspace names it.
    pub origin: PathBuf,
    /// The objects folder the clone's alternates must name, spelled the way git-loop
    /// wrote it (through `context/repos/<name>` or `context/.origins/<role>`).
    pub alternate: PathBuf,
    /// The clone's `remote.origin.url`, relative to its worktree (see workspace.rs).
    pub remote_url: String,
}

/// A loop clone's whole `.git/config`: git-loop's, rewritten before every run and
/// read-only inside (DESIGN 4.0), so nothing the agent could configure (hooks path,
/// fsmonitor, pager, filters, includes) is read by the user's own git in the loop's
/// folder. Submodules are not entered: a gitlink and a nested repository the agent made
/// would otherwise have the user's `git status` read the nested repository's config and
/// run its `core.fsmonitor`. Each key is set here, not left to git's default, so that a
/// person's own global config (`status.submoduleSummary = true`, `diff.submodule = diff`,
/// `submodule.recurse = true`, `push.recurseSubmodules = on-demand`) cannot turn it back
/// on: with them `git status`, `git diff` and `git log -p` start git in the submodule.
/// `dirty` rather than `all`: a submodule whose commit moved still shows in `status` and
/// `diff`, and for that git reads only the submodule's `HEAD`, refs and repository format,
/// starting nothing there (tests/it/attacks_files.rs tries each command a person runs).
/// What no key here can stop: `git add` of a populated submodule's path (`git add -A`)
/// runs `git status` inside it, which is why no `.git` can be made below a tree's root
/// during a run (sandbox/creation.rs, [`crate::sandbox::fspolicy::NESTED_GIT`]).
pub fn clone_config(remote_url: &str, branch: &str) -> String {
    format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tfsmonitor = false\n\
         [remote \"origin\"]\n\turl = {remote_url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
         [branch \"{branch}\"]\n\tremote = origin\n\
         [diff]\n\tignoreSubmodules = dirty\n\tsubmodule = short\n\
         [status]\n\tsubmoduleSummary = false\n\
         [submodule]\n\trecurse = false\n\
         [fetch]\n\trecurseSubmodules = false\n\
         [push]\n\trecurseSubmodules = no\n"
    )
}

impl RepoPair {
    /// This clone's `.git/config` (see [`clone_config`]).
    pub fn clone_config(&self, branch: &str) -> String {
        clone_config(&self.remote_url, branch)
    }

    pub fn clone_git_dir(&self) -> PathBuf {
        self.clone.join(".git")
    }
    pub fn origin_git_dir(&self) -> PathBuf {
        self.origin.join(".git")
    }
}

/// The repositories a loop writes to, each with its origin.
pub fn repo_pairs(ws: &Workspace, rec: &LoopRecord) -> Vec<RepoPair> {
    let mut pairs = Vec::new();
    if let (Kind::Code, Some(name)) = (rec.kind, &rec.repo) {
        pairs.push(RepoPair {
            role: "code",
            clone: ws.loop_workdir(&rec.id),
            origin: ws.repo_link(name),
            alternate: ws.repo_link(name).join(".git/objects"),
            remote_url: Workspace::rel_repo_from_workdir(name),
        });
    }
    pairs.push(RepoPair {
        role: "notes",
        clone: ws.loop_notes(&rec.id),
        origin: ws.notes(),
        alternate: ws.loop_origin_link(&rec.id, "notes").join(".git/objects"),
        remote_url: Workspace::rel_origin_from_context_clone("notes"),
    });
    if rec.kind == Kind::Distill {
        pairs.push(RepoPair {
            role: "knowledge",
            clone: ws.loop_knowledge(&rec.id),
            origin: ws.knowledge(),
            alternate: ws
                .loop_origin_link(&rec.id, "knowledge")
                .join(".git/objects"),
            remote_url: Workspace::rel_origin_from_context_clone("knowledge"),
        });
    }
    pairs
}

/// Brings every branch `loop/<id>` of the loop's repositories into their origins
/// (DESIGN 4.1). Done before anything reads a loop's branch state.
pub fn import(ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    import_with(ws, rec, &mut Origins::default())
}

/// Origin repositories opened once per command, however many loops it reads.
#[derive(Default)]
pub struct Origins {
    repos: std::collections::HashMap<PathBuf, Origin>,
}

pub(super) struct Origin {
    repo: gix::Repository,
    /// Whether walks should load the repository's commit-graph: looked up once here
    /// rather than by every walk.
    commit_graph: bool,
}

impl Origins {
    pub fn get(&mut self, path: &Path) -> Result<&gix::Repository, objects::GitReadError> {
        self.origin(path).map(|o| &o.repo)
    }

    /// The repository at `path` and whether its walks use a commit-graph.
    pub fn get_with_graph(
        &mut self,
        path: &Path,
    ) -> Result<(&gix::Repository, bool), objects::GitReadError> {
        self.origin(path).map(|o| (&o.repo, o.commit_graph))
    }

    fn origin(&mut self, path: &Path) -> Result<&Origin, objects::GitReadError> {
        if !self.repos.contains_key(path) {
            let mut repo = objects::open_trusted(path)?;
            // Loops share their bases (every loop of a repository walks to the same trunk
            // commits): keep what was read. Each loose object read otherwise maps and
            // unmaps its file, and an unmap in a threaded survey costs every core a TLB
            // flush.
            repo.object_cache_size_if_unset(4 << 20);
            let commit_graph = repo.commit_graph_if_enabled().is_ok_and(|g| g.is_some());
            self.repos
                .insert(path.to_path_buf(), Origin { repo, commit_graph });
        }
        Ok(&self.repos[path])
    }
}

/// [`import`] with origins shared across calls.
pub fn import_with(ws: &Workspace, rec: &LoopRecord, origins: &mut Origins) -> Result<()> {
    let limits = read_limits()?;
    // One import of a loop at a time (the end of a run, autocommit, publish and review
    // may meet): each moves the origin's `loop/<id>` by compare-and-swap.
    let _one = fsutil::Lock::acquire(&ws.loop_import_lock(&rec.id))?;
    for pair in repo_pairs(ws, rec) {
        // A killed import's lock on the branch would fail this one and every later one:
        // removed when nothing of the loop that could hold it runs (its owner is then
        // provably gone, as for every lock file gitlocks.rs judges).
        let _ = crate::gitlocks::remove_stale_loop_ref_lock(ws, &pair.origin_git_dir(), &rec.id);
        import_pair(&pair, &rec.branch, origins, &limits).map_err(|source| ReadError::Import {
            branch: rec.branch.clone(),
            id: rec.id.clone(),
            origin: pair.origin.clone(),
            git_dir: pair.clone_git_dir(),
            source,
        })?;
    }
    Ok(())
}

/// What to do about a loop repository that holds something git-loop refuses to read.
/// Why a loop's repositories, or the personal repository's files, could not be read or
/// imported. Every one of them is in a tree a sandbox can write.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A branch of loop `id` that could not be brought into its origin; `git_dir` is the
    /// loop repository's git folder.
    #[error("cannot import {branch} of loop {id} into {}", origin.display())]
    Import {
        branch: String,
        id: String,
        origin: PathBuf,
        git_dir: PathBuf,
        #[source]
        source: ImportError,
    },
    /// A loop's worktree.
    #[error("cannot read {}", .0.display())]
    Worktree(PathBuf, #[source] objects::GitReadError),
    /// The personal repository's files.
    #[error("cannot read {}", .0.display())]
    Personal(PathBuf, #[source] objects::GitReadError),
    /// An origin repository (git-loop's own).
    #[error("cannot read {}", .0.display())]
    Origin(PathBuf, #[source] objects::GitReadError),
    /// The branches of loop `id`'s repository at `path`.
    #[error("cannot read {}", path.display())]
    Branches {
        path: PathBuf,
        id: String,
        #[source]
        source: objects::GitReadError,
    },
}

/// The operator config's path as the user would type it.
pub fn operator_config_shown() -> String {
    crate::workspace::HostPaths::from_env()
        .map(|h| h.operator_config.display().to_string())
        .unwrap_or_else(|_| "$XDG_CONFIG_HOME/git-loop/config.toml".into())
}

/// The bounds of host-side reads of loops' repositories: `[import]` of the operator config,
/// and of it alone (the team and personal layers are writable from sandboxes, and raising a
/// bound is what an agent that wants to exhaust the host would do). Read once per process.
pub fn read_limits() -> Result<objects::Limits> {
    if let Some(limits) = LIMITS.get() {
        return Ok(*limits);
    }
    use crate::config::{Config, Layer};
    let host = crate::workspace::HostPaths::from_env()?;
    let config = Config::load(&[(Layer::Operator, host.operator_config)], None)?;
    Ok(*LIMITS.get_or_init(|| limits_from(&config)))
}

static LIMITS: std::sync::OnceLock<objects::Limits> = std::sync::OnceLock::new();

/// What [`read_limits`] gives, taken from a configuration this process has loaded anyway
/// (a run's): its `[import]` is the operator layer's alone (config/policy.rs refuses it in
/// every other), so the operator's file is not read and checked a second time when the
/// run ends and its branches are imported.
pub fn know_limits(config: &crate::config::Config) {
    let _ = LIMITS.set(limits_from(config));
}

/// [`read_limits`] from a loaded configuration (other layers' `[import]` is dropped there).
pub(super) fn limits_from(config: &crate::config::Config) -> objects::Limits {
    let import = &config.settings().import;
    objects::Limits {
        max_object_size: import.max_object_size.0,
        max_pack_size: import.max_pack_size.0,
        read_timeout: std::time::Duration::from_secs(import.read_timeout.get()),
    }
}

pub(super) fn import_pair(
    pair: &RepoPair,
    branch: &str,
    origins: &mut Origins,
    limits: &objects::Limits,
) -> Result<objects::ImportOutcome, ImportError> {
    // Nothing to import when both sides name the same commit: read the two ref files
    // directly (no repository opened, nothing followed through a link), which is what most
    // runs end with. Anything unusual takes the full path.
    let refname = format!("refs/heads/{branch}");
    if let (Some(a), Some(b)) = (
        quick_ref(&pair.clone_git_dir(), &refname),
        quick_ref(&pair.origin_git_dir(), &refname),
    ) {
        if a == b {
            return Ok(objects::ImportOutcome {
                old: Some(a),
                new: Some(b),
                objects_copied: 0,
            });
        }
    }
    let origin = origins.get(&pair.origin)?;
    objects::import_branch_into(
        &pair.clone_git_dir(),
        origin,
        &pair.alternate,
        branch,
        limits,
    )
}

/// The id a branch names in a git folder, read by the untrusted store's reader of refs;
/// None when it is anything unusual.
pub(super) fn quick_ref(git_dir: &Path, refname: &str) -> Option<ObjectId> {
    crate::git::untrusted::peek_branch(git_dir, refname, gix::hash::Kind::Sha1)
}

/// Changed and untracked paths of one of a loop's worktrees (see
/// [`objects::worktree_changes`]), read on a thread of its own within the operator's time
/// bound, so that no host command waits on what a sandbox planted there.
pub fn worktree_changes(pair: &RepoPair) -> Result<Vec<String>> {
    let limits = read_limits()?;
    let worktree = pair.clone.clone();
    let origin = pair.origin.clone();
    objects::within(limits.read_timeout, &pair.clone, move |interrupt| {
        let origin = shared_origin(&origin)?;
        objects::worktree_changes(&worktree, &origin, &limits, interrupt)
    })
    .map_err(|e| ReadError::Worktree(pair.clone.clone(), e).into())
}

/// [`worktree_changes`], the untracked files told apart (see [`objects::worktree_status`]).
pub fn worktree_status(pair: &RepoPair) -> Result<objects::WorktreeStatus> {
    let limits = read_limits()?;
    let worktree = pair.clone.clone();
    let origin = pair.origin.clone();
    objects::within(limits.read_timeout, &pair.clone, move |interrupt| {
        let origin = shared_origin(&origin)?;
        objects::worktree_status(&worktree, &origin, &limits, interrupt)
    })
    .map_err(|e| ReadError::Worktree(pair.clone.clone(), e).into())
}

/// [`personal_changes`], the untracked files told apart (see [`objects::worktree_status`]).
pub fn personal_status(dir: &Path) -> Result<(objects::WorktreeStatus, Vec<String>)> {
    let limits = read_limits()?;
    let worktree = dir.to_path_buf();
    objects::within(limits.read_timeout, dir, move |interrupt| {
        let repo = shared_origin(&worktree)?;
        let status = objects::worktree_status(&worktree, &repo, &limits, interrupt)?;
        let gitlinks = objects::gitlinks(&worktree, &repo, &limits, interrupt)?;
        Ok((status, gitlinks))
    })
    .map_err(|e| ReadError::Personal(dir.to_path_buf(), e).into())
}

/// The personal repository's changed paths and its gitlinks (see [`objects::gitlinks`]).
/// Its files are the agents' and are read as a loop's worktree is, on a thread of its own
/// within the time bound; its git folder is git-loop's (read-only in every sandbox), so its
/// objects are read from it as from an origin.
pub fn personal_changes(dir: &Path) -> Result<(Vec<String>, Vec<String>)> {
    let limits = read_limits()?;
    let worktree = dir.to_path_buf();
    objects::within(limits.read_timeout, dir, move |interrupt| {
        let repo = shared_origin(&worktree)?;
        let changes = objects::worktree_changes(&worktree, &repo, &limits, interrupt)?;
        let gitlinks = objects::gitlinks(&worktree, &repo, &limits, interrupt)?;
        Ok((changes, gitlinks))
    })
    .map_err(|e| ReadError::Personal(dir.to_path_buf(), e).into())
}

/// An origin opened once per process for the reads of loops' worktrees, which run on
/// threads of their own: `autocommit` and `review` read many loops of a few origins.
pub(super) fn shared_origin(path: &Path) -> Result<gix::Repository, objects::GitReadError> {
    use std::sync::Mutex;
    static OPENED: Mutex<std::collections::BTreeMap<PathBuf, gix::ThreadSafeRepository>> =
        Mutex::new(std::collections::BTreeMap::new());
    let mut opened = OPENED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(repo) = opened.get(path) {
        return Ok(repo.to_thread_local());
    }
    let repo = objects::open_trusted(path)?;
    opened.insert(path.to_path_buf(), repo.clone().into_sync());
    Ok(repo)
}
