//! The loop record (`loops/<id>/loop.toml`) and how a loop is found, imported and judged.
//!
//! The record holds only what git cannot tell: who made the loop, from which base, with
//! which vault and profile. Whether a loop has unpublished notes, unmerged code or is
//! merged is read from the branches every time (after an import), so the record can
//! never disagree with the repositories.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsutil;
use crate::git::objects::{self, ImportError};
use crate::workspace::Workspace;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Code,
    Scratch,
    Distill,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Code => "code",
            Kind::Scratch => "scratch",
            Kind::Distill => "distill",
        })
    }
}

/// What a loop is, as judged from git (plus `Removed` for a loop folder that is gone
/// while its branch remains).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Active,
    Published,
    Merged,
    Removed,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Active => "active",
            State::Published => "published",
            State::Merged => "merged",
            State::Removed => "removed",
        })
    }
}

/// An extra mount granted to one loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub path: PathBuf,
    /// `ro` or `rw`.
    pub mode: String,
    /// For the next run only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// What `path` was when it was granted: every run binds only that (re-resolved
    /// without following links), and refuses when a sandbox or anyone else put something
    /// else there. Absent in grants recorded by earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<GrantSource>,
}

/// A granted path's identity: its kind and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantSource {
    pub dir: bool,
    pub dev: u64,
    pub ino: u64,
}

impl GrantSource {
    pub fn of(meta: &fs::Metadata) -> GrantSource {
        use std::os::unix::fs::MetadataExt;
        GrantSource {
            dir: meta.is_dir(),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// `loop.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopRecord {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    /// The registered repository's name under `context/repos/` (none for scratch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The commit the code branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The branch the loop's work is meant to go back into (`merge`'s default target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_branch: Option<String>,
    pub branch: String,
    /// The notes trunk commit the notes branch started from.
    pub notes_base: String,
    /// The knowledge trunk commit a distill loop's knowledge branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge_base: Option<String>,
    pub vault: String,
    pub sandbox: String,
    pub mode: String,
    pub network: String,
    pub created_by: String,
    pub created_at: String,
    /// Kept for readers of the record; the state shown is always derived from git.
    pub state: State,
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// The loop's own config layer.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub config: toml::Table,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path} is not a valid loop record: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl LoopRecord {
    #[cfg(test)]
    pub(crate) fn read_str_for_tests() -> LoopRecord {
        toml::from_str(
            "id = \"fix-abc123\"\ntitle = \"fix\"\nkind = \"code\"\nrepo = \"app\"\nbranch = \"loop/fix-abc123\"\n\
             notes_base = \"1111111111111111111111111111111111111111\"\nvault = \"default\"\nsandbox = \"default\"\n\
             mode = \"work\"\nnetwork = \"proxy\"\ncreated_by = \"alice\"\ncreated_at = \"2026-01-01T00:00:00Z\"\nstate = \"active\"\n",
        )
        .unwrap()
    }

    pub fn branch_name(id: &str) -> String {
        format!("loop/{id}")
    }

    pub fn read(path: &Path) -> Result<LoopRecord, RecordError> {
        let bytes = fs::read(path).map_err(|source| RecordError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| RecordError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "it is not UTF-8 text (an undecodable byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        })?;
        toml::from_str(&text).map_err(|e| RecordError::Invalid {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string(self)
            .map_err(|e| Error::failure("cannot serialize the loop record").with_source(e))?;
        fsutil::write_atomic(path, text.as_bytes())
    }

    pub fn created_at(&self) -> Option<time::OffsetDateTime> {
        time::OffsetDateTime::parse(
            &self.created_at,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()
    }
}

/// Reads a loop's record, turning each way it can be broken into an error with a fix.
pub fn load(ws: &Workspace, id: &str) -> Result<LoopRecord> {
    let path = ws.loop_record(id);
    LoopRecord::read(&path).map_err(|e| match &e {
        RecordError::Invalid { path, .. } => {
            Error::failure(format!("loop {id} has a broken record"))
                .with_source(e_clone(&e))
                .hint(format!("fix the TOML in {} by hand", path.display()))
                .hint(format!(
                    "or remove the loop with `git loop rm {id} --force` (its branches stay)"
                ))
        }
        RecordError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound => {
            Error::failure(format!(
                "loop {id} has no record ({} is missing)",
                path.display()
            ))
            .hint(format!("remove the folder with `git loop rm {id} --force`"))
        }
        RecordError::Read { path, .. } => {
            Error::failure(format!("cannot read the record of loop {id}"))
                .with_source(e_clone(&e))
                .hint(format!(
                    "check that {} is a readable file (`ls -l` it)",
                    path.display()
                ))
        }
    })
}

fn e_clone(e: &RecordError) -> RecordError {
    match e {
        RecordError::Invalid { path, message } => RecordError::Invalid {
            path: path.clone(),
            message: message.clone(),
        },
        RecordError::Read { path, source } => RecordError::Read {
            path: path.clone(),
            source: io::Error::new(source.kind(), source.to_string()),
        },
    }
}

/// Lowercase ASCII, `-` between words, at most 32 characters; `loop` when nothing is left.
pub fn slugify(title: &str) -> String {
    let mut slug = String::new();
    let mut dash = false;
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !slug.is_empty() {
                slug.push('-');
            }
            dash = false;
            slug.push(c.to_ascii_lowercase());
            if slug.len() >= 32 {
                break;
            }
        } else {
            dash = true;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "loop".to_string()
    } else {
        slug.to_string()
    }
}

/// `<slug>-<6 hex>`.
pub fn new_id(slug: &str) -> String {
    let n: u32 = rand::random::<u32>() & 0x00ff_ffff;
    format!("{slug}-{n:06x}")
}

/// Does `s` look like an id this tool made? Used to refuse path tricks in arguments.
pub fn is_id_like(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('.')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Finds the loop a user means by `query`: an exact id, or a unique prefix of an id or of
/// a slug. Unknown or ambiguous: an error listing candidates.
pub fn resolve(ws: &Workspace, query: &str) -> Result<String> {
    let ids = ws.loop_ids()?;
    if ids.iter().any(|id| id == query) {
        return Ok(query.to_string());
    }
    if !query.is_empty() && is_id_like(query) {
        let matches: Vec<&String> = ids.iter().filter(|id| id.starts_with(query)).collect();
        match matches.as_slice() {
            [one] => return Ok((*one).clone()),
            [] => {}
            many => {
                let mut err = Error::usage(format!("'{query}' names more than one loop"));
                for id in many.iter().take(10) {
                    err = err.hint(format!("did you mean {id}?"));
                }
                return Err(err.hint("give more of the id"));
            }
        }
    }
    let mut err = Error::usage(format!("no loop '{query}'"));
    // A branch without a folder: the loop was removed, or its folder deleted by hand.
    if is_id_like(query) && removed_branch_exists(ws, query) {
        err = err.hint(format!(
            "its branch loop/{query} still exists, but its folder {} is gone (removed, or deleted by hand)",
            ws.loop_dir(query).display()
        ));
        err = err.hint("`git loop list --all` shows it; `git loop doctor` explains");
        return Err(err);
    }
    let close: Vec<&String> = ids
        .iter()
        .filter(|id| query.len() >= 2 && id.contains(query))
        .take(5)
        .collect();
    for id in close {
        err = err.hint(format!("did you mean {id}?"));
    }
    if ids.is_empty() {
        err = err.hint("there are no loops yet: `git loop new TITLE` makes one");
    } else {
        err = err.hint("`git loop list` shows the loops");
    }
    Err(err)
}

fn removed_branch_exists(ws: &Workspace, id: &str) -> bool {
    let branch = LoopRecord::branch_name(id);
    objects::open_trusted(&ws.notes())
        .ok()
        .and_then(|repo| objects::resolve_branch(&repo, &branch).ok().flatten())
        .is_some()
}

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
/// would otherwise have the user's `git status` read the nested repository's config.
pub fn clone_config(remote_url: &str, branch: &str) -> String {
    format!(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tfsmonitor = false\n\
         [remote \"origin\"]\n\turl = {remote_url}\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\
         [branch \"{branch}\"]\n\tremote = origin\n\
         [diff]\n\tignoreSubmodules = all\n\
         [submodule]\n\trecurse = false\n\
         [fetch]\n\trecurseSubmodules = false\n"
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

struct Origin {
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
        import_pair(&pair, &rec.branch, origins, &limits).map_err(|e| {
            let mut hints = Vec::new();
            match &e {
                ImportError::HashMismatch { .. } => hints.push(
                    "the loop's repository holds a corrupt object; nothing of it reached the origin"
                        .to_string(),
                ),
                ImportError::AlternatesTampered { .. } => hints.push(format!(
                    "restore {}/objects/info/alternates or remove the loop",
                    pair.clone_git_dir().display()
                )),
                ImportError::ObjectTooLarge { size, .. } => {
                    hints.push(format!(
                        "the host inflates no object larger than import.max_object_size; to let this one in, raise it in the operator config ({}): [import] max_object_size = \"{}M\"",
                        operator_config_shown(),
                        size.div_ceil(1 << 20)
                    ));
                    hints.push(format!(
                        "or drop the object from {} inside the loop (`git loop shell {}`); nothing of it reached the origin",
                        rec.branch, rec.id
                    ));
                }
                ImportError::PacksTooLarge { size, .. } => hints.push(format!(
                    "the host holds no more than import.max_pack_size of a loop's packs in memory; raise it in the operator config ({}): [import] max_pack_size = \"{}M\"",
                    operator_config_shown(),
                    size.div_ceil(1 << 20)
                )),
                ImportError::Unsafe { .. } | ImportError::TooLarge { .. } => {
                    hints.push(tampered_hint(rec))
                }
                _ => hints.push("`git loop doctor` checks the workspace".to_string()),
            }
            let mut err = Error::failure(format!(
                "cannot import {} of loop {} into {}",
                rec.branch,
                rec.id,
                pair.origin.display()
            ))
            .with_source(e);
            for hint in hints {
                err = err.hint(hint);
            }
            err
        })?;
    }
    Ok(())
}

/// What to do about a loop repository that holds something git-loop refuses to read.
fn tampered_hint(rec: &LoopRecord) -> String {
    format!(
        "a sandbox can write the loop's repositories: look at what is there with `git loop shell {}`, or remove the loop with `git loop rm --force {}`",
        rec.id, rec.id
    )
}

fn operator_config_shown() -> String {
    crate::workspace::HostPaths::from_env()
        .map(|h| h.operator_config.display().to_string())
        .unwrap_or_else(|_| "$XDG_CONFIG_HOME/git-loop/config.toml".into())
}

/// The bounds of host-side reads of loops' repositories: `[import]` of the operator config,
/// and of it alone (the team and personal layers are writable from sandboxes, and raising a
/// bound is what an agent that wants to exhaust the host would do). Read once per process.
pub fn read_limits() -> Result<objects::Limits> {
    static LIMITS: std::sync::OnceLock<objects::Limits> = std::sync::OnceLock::new();
    if let Some(limits) = LIMITS.get() {
        return Ok(*limits);
    }
    use crate::config::{Config, Layer};
    let host = crate::workspace::HostPaths::from_env()?;
    let config = Config::load(&[(Layer::Operator, host.operator_config)], None)?;
    Ok(*LIMITS.get_or_init(|| limits_from(&config)))
}

/// [`read_limits`] from a loaded configuration (other layers' `[import]` is dropped there).
fn limits_from(config: &crate::config::Config) -> objects::Limits {
    let import = &config.settings().import;
    objects::Limits {
        max_object_size: import.max_object_size.0,
        max_pack_size: import.max_pack_size.0,
        read_timeout: std::time::Duration::from_secs(import.read_timeout.get()),
    }
}

fn import_pair(
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

/// The id a ref names, read from its loose file or `packed-refs` confined to the git folder
/// (no link followed, nothing waited on, bounded); None when it is anything else (symbolic,
/// missing, odd), which the full import then looks at and names.
fn quick_ref(git_dir: &Path, refname: &str) -> Option<ObjectId> {
    const MAX_REF: u64 = 4 << 10;
    const MAX_PACKED: u64 = 1 << 20;
    let git = crate::confined::Tree::open(git_dir).ok()??;
    let id = |hex: &[u8]| {
        ObjectId::from_hex(hex)
            .ok()
            .filter(|id| id.kind() == gix::hash::Kind::Sha1)
    };
    if let Some(bytes) = git.read(refname, MAX_REF).ok()? {
        return id(bytes.trim_ascii_end());
    }
    let packed = git.read("packed-refs", MAX_PACKED).ok()??;
    packed.split(|b| *b == b'\n').find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let space = line.iter().position(|b| *b == b' ')?;
        let (hex, name) = (&line[..space], &line[space + 1..]);
        (name == refname.as_bytes()).then(|| id(hex))?
    })
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
    .map_err(|e| {
        Error::failure(format!("cannot read {}", pair.clone.display()))
            .with_source(e)
            .hint(format!(
                "a sandbox can write {}: look at what is there, or remove the loop with `git loop rm --force`",
                pair.clone.display()
            ))
    })
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
    .map_err(|e| {
        Error::failure(format!("cannot read {}", dir.display()))
            .with_source(e)
            .hint(format!(
                "a sandbox can write the files of {}: look at what is there",
                dir.display()
            ))
    })
}

/// An origin opened once per process for the reads of loops' worktrees, which run on
/// threads of their own: `autocommit` and `review` read many loops of a few origins.
fn shared_origin(path: &Path) -> Result<gix::Repository, objects::GitReadError> {
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

/// Where one of a loop's branches stands in its origin.
#[derive(Debug, Clone, Serialize)]
pub struct BranchStatus {
    pub role: &'static str,
    /// The branch's commit in the origin; None if it is gone.
    pub tip: Option<String>,
    /// The branch it is measured against (base branch, or trunk).
    pub against: Option<String>,
    /// Commits on the loop's branch that `against` lacks.
    pub ahead: usize,
    /// Commits on `against` that the loop's branch lacks.
    pub behind: usize,
    /// Has the loop committed anything on this branch since it began?
    pub has_commits: bool,
}

impl BranchStatus {
    /// Work on this branch that its target does not have.
    pub fn pending(&self) -> bool {
        self.ahead > 0
    }
}

/// The judgement of a loop from its branches.
#[derive(Debug, Clone, Serialize)]
pub struct LoopStatus {
    pub state: State,
    pub branches: Vec<BranchStatus>,
}

impl LoopStatus {
    pub fn branch(&self, role: &str) -> Option<&BranchStatus> {
        self.branches.iter().find(|b| b.role == role)
    }
}

/// Reads the loop's branches in their origins (call [`import`] first).
pub fn status(ws: &Workspace, rec: &LoopRecord) -> Result<LoopStatus> {
    status_with(ws, rec, &mut Origins::default())
}

/// [`status`] with origins shared across calls.
pub fn status_with(ws: &Workspace, rec: &LoopRecord, origins: &mut Origins) -> Result<LoopStatus> {
    let mut branches = Vec::new();
    for pair in repo_pairs(ws, rec) {
        let (against, start) = match pair.role {
            "code" => (rec.base_branch.clone(), rec.base.clone()),
            "notes" => (None, Some(rec.notes_base.clone())),
            _ => (None, rec.knowledge_base.clone()),
        };
        branches.push(branch_status(&pair, &rec.branch, against, start, origins)?);
    }
    Ok(LoopStatus {
        state: judge(&branches),
        branches,
    })
}

/// A loop's state from where its branches stand: active while any holds work its target
/// lacks (or none has work yet); else merged when its code branch had commits, all now in
/// the target; else published when its notes or knowledge did.
pub fn judge(branches: &[BranchStatus]) -> State {
    let code = branches.iter().find(|b| b.role == "code");
    let notes = branches.iter().find(|b| b.role == "notes");
    if branches.iter().any(BranchStatus::pending) {
        State::Active
    } else if code.is_some_and(|c| c.has_commits) {
        State::Merged
    } else if notes.is_some_and(|n| n.has_commits)
        || branches
            .iter()
            .any(|b| b.role == "knowledge" && b.has_commits)
    {
        State::Published
    } else {
        State::Active
    }
}

/// The ref where `merge --squash` records the loop commit it squashed into a target.
pub fn squashed_ref(id: &str) -> String {
    format!("refs/git-loop/squashed/{id}")
}

fn branch_status(
    pair: &RepoPair,
    branch: &str,
    against: Option<String>,
    start: Option<String>,
    origins: &mut Origins,
) -> Result<BranchStatus> {
    let err = |e: objects::GitReadError| {
        Error::failure(format!("cannot read {}", pair.origin.display()))
            .with_source(e)
            .hint("`git loop doctor` checks the workspace")
    };
    let (repo, graph) = origins.get_with_graph(&pair.origin).map_err(err)?;
    let against = match against {
        Some(b) => Some(b),
        None => objects::head_branch(repo).map_err(err)?,
    };
    let tip = objects::resolve_branch(repo, branch).map_err(err)?;
    let target = match &against {
        Some(b) => objects::resolve_branch(repo, b).map_err(err)?,
        None => None,
    };
    let start: Option<ObjectId> = start.and_then(|s| ObjectId::from_hex(s.as_bytes()).ok());
    // A code branch squash-merged (`merge --squash`) is merged up to the commit squashed.
    let squashed = match (pair.role, branch.strip_prefix("loop/")) {
        ("code", Some(id)) => objects::resolve_rev(repo, &squashed_ref(id)).map_err(err)?,
        _ => None,
    };
    let (ahead, behind) = match (tip, target) {
        (Some(t), Some(b)) => {
            let mut hide = vec![b];
            hide.extend(squashed);
            (
                objects::count_ahead(repo, t, &hide, graph).map_err(err)?,
                objects::count_ahead(repo, b, &[t], graph).map_err(err)?,
            )
        }
        (Some(t), None) => (
            objects::count_ahead(repo, t, start.as_slice(), graph).map_err(err)?,
            0,
        ),
        _ => (0, 0),
    };
    Ok(BranchStatus {
        role: pair.role,
        tip: tip.map(|t| t.to_string()),
        against,
        ahead,
        behind,
        has_commits: tip.is_some() && tip != start,
    })
}

/// Work that exists only in a loop's own repositories: commits on any of their branches
/// that the origin does not have (after an import, only branches other than `loop/<id>`
/// can hold such commits) and changed or untracked files in their worktrees. Read with
/// gix; nothing the loop repository configures runs.
pub fn local_only_work(ws: &Workspace, rec: &LoopRecord) -> Result<Vec<String>> {
    let limits = read_limits()?;
    let mut found = Vec::new();
    for pair in repo_pairs(ws, rec) {
        if !pair.clone.exists() {
            continue;
        }
        let origin = objects::open_trusted(&pair.origin).map_err(|e| {
            Error::failure(format!("cannot read {}", pair.origin.display())).with_source(e)
        })?;
        let git_dir = pair.clone_git_dir();
        let hash_kind = origin.object_hash();
        let branches = objects::within(limits.read_timeout, &git_dir.clone(), move |_| {
            objects::loop_branches(&git_dir, hash_kind, &limits)
        })
        .map_err(|e| {
            Error::failure(format!("cannot read {}", pair.clone.display()))
                .with_source(e)
                .hint(tampered_hint(rec))
        })?;
        for (name, tip) in branches {
            if !origin.has_object(tip) {
                found.push(format!(
                    "{}: commits on branch {name} not in the origin",
                    pair.role
                ));
            }
        }
        let changes = worktree_changes(&pair)?;
        if !changes.is_empty() {
            let shown: Vec<&str> = changes.iter().take(5).map(String::as_str).collect();
            let more = if changes.len() > 5 {
                format!(" and {} more", changes.len() - 5)
            } else {
                String::new()
            };
            found.push(format!(
                "{}: uncommitted changes ({}{more})",
                pair.role,
                shown.join(", ")
            ));
        }
    }
    Ok(found)
}

/// Why a loop cannot be removed without `--force`: pending branches and local-only work.
pub fn unfinished_work(
    ws: &Workspace,
    rec: &LoopRecord,
    status: &LoopStatus,
) -> Result<Vec<String>> {
    let mut reasons = Vec::new();
    for b in &status.branches {
        if b.pending() {
            let target = b.against.as_deref().unwrap_or("its base");
            let what = match b.role {
                "code" => "unmerged",
                _ => "unpublished",
            };
            reasons.push(format!(
                "{}: {} {what} commit{} on {} (not in {target})",
                b.role,
                b.ahead,
                if b.ahead == 1 { "" } else { "s" },
                rec.branch
            ));
        }
    }
    reasons.extend(local_only_work(ws, rec)?);
    Ok(reasons)
}

/// The JSON form of a loop (DESIGN section 8).
pub fn to_json(ws: &Workspace, rec: &LoopRecord, status: Option<&LoopStatus>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "id": rec.id,
        "title": rec.title,
        "kind": rec.kind,
        "state": status.map(|s| s.state).unwrap_or(rec.state),
        "branch": rec.branch,
        "repo": rec.repo,
        "base": rec.base,
        "base_branch": rec.base_branch,
        "vault": rec.vault,
        "sandbox": rec.sandbox,
        "mode": rec.mode,
        "network": rec.network,
        "created_by": rec.created_by,
        "created_at": rec.created_at,
        "path": ws.loop_dir(&rec.id),
        "workdir": ws.loop_workdir(&rec.id),
        "grants": rec.grants,
    });
    if let Some(status) = status {
        v["branches"] = serde_json::to_value(&status.branches).unwrap_or_default();
    }
    v
}

/// Now, as RFC 3339 in UTC.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// `3d`, `5h`, `12m` ago.
pub fn age(rec: &LoopRecord) -> String {
    let Some(created) = rec.created_at() else {
        return "?".into();
    };
    let secs = (time::OffsetDateTime::now_utc() - created)
        .whole_seconds()
        .max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// One loop as `list` and `gc` see it: its record and its judged state, or why either
/// could not be had (a broken record, a repository moved away).
pub struct Surveyed {
    pub id: String,
    pub record: Result<LoopRecord>,
    pub status: Result<LoopStatus>,
    /// Bytes the loop's folder uses, when asked for.
    pub disk_bytes: Option<u64>,
}

/// Every loop of the workspace, imported and judged.
pub fn survey(ws: &Workspace) -> Result<Vec<Surveyed>> {
    survey_with(ws, false)
}

/// [`survey`], also measuring each loop's disk use when asked. Loops are independent
/// (each imports only its own branch), so the work is spread over the machine's cores,
/// each worker with its own opened origins.
pub fn survey_with(ws: &Workspace, disk: bool) -> Result<Vec<Surveyed>> {
    let ids = ws.loop_ids()?;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let chunk = ids.len().div_ceil(workers).max(1);
    let mut out: Vec<Surveyed> = std::thread::scope(|scope| {
        let handles: Vec<_> = ids
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    let mut origins = Origins::default();
                    part.iter()
                        .map(|id| survey_one(ws, id.clone(), &mut origins, disk))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a survey worker panicked"))
            .collect()
    });
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

fn survey_one(ws: &Workspace, id: String, origins: &mut Origins, disk: bool) -> Surveyed {
    let record = load(ws, &id);
    let status = match &record {
        Ok(rec) => check_repo(ws, rec)
            .and_then(|()| import_with(ws, rec, origins))
            .and_then(|()| status_with(ws, rec, origins)),
        Err(e) => Err(Error::failure(e.message.clone())),
    };
    let disk_bytes = disk.then(|| crate::fsutil::disk_usage(&ws.loop_dir(&id)));
    Surveyed {
        id,
        record,
        status,
        disk_bytes,
    }
}

/// The loop's registered repository must still be where its link points.
pub fn check_repo(ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    match &rec.repo {
        Some(name) if rec.kind == Kind::Code => crate::repos::check_link(ws, name).map(|_| ()),
        _ => Ok(()),
    }
}

/// git's lock files (`*.lock`) in a repository's git folder: `.git/` and everything below
/// it but the objects (whose own locks git cleans up itself), read without following links
/// and bounded, since the folder is the agent's.
pub fn git_lock_files(git_dir: &Path) -> Vec<PathBuf> {
    const MAX_ENTRIES: usize = 100_000;
    let mut found = Vec::new();
    let mut seen = 0;
    let mut pending = vec![git_dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                if path != git_dir.join("objects") {
                    pending.push(path);
                }
            } else if kind.is_file() && entry.file_name().as_encoded_bytes().ends_with(b".lock") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The git lock files of a loop's repositories that nothing can own any more, with the
/// loop's run lock held exclusively so that no run starts while they are removed.
pub struct StaleLocks {
    _hold: fsutil::Lock,
    pub files: Vec<PathBuf>,
}

impl StaleLocks {
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
    Ok(Some(StaleLocks { _hold: hold, files }))
}

/// Loops whose folder is gone while their notes branch remains (`rm` without
/// `--delete-branches`, or a folder deleted by hand).
pub fn removed_ids(ws: &Workspace) -> Result<Vec<String>> {
    let repo = objects::open_trusted(&ws.notes())
        .map_err(|e| Error::failure("cannot read the notes repository").with_source(e))?;
    let existing = ws.loop_ids()?;
    let mut ids: Vec<String> = objects::branches(&repo)
        .map_err(|e| Error::failure("cannot read the notes repository").with_source(e))?
        .into_iter()
        .filter_map(|(name, _)| name.strip_prefix("loop/").map(str::to_string))
        .filter(|id| !existing.contains(id))
        .collect();
    ids.sort();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branch(role: &'static str, ahead: usize, has_commits: bool) -> BranchStatus {
        BranchStatus {
            role,
            tip: Some("1".repeat(40)),
            against: Some("main".into()),
            ahead,
            behind: 0,
            has_commits,
        }
    }

    #[test]
    fn the_state_is_judged_from_the_branches() {
        // Nothing done yet: active.
        assert_eq!(
            judge(&[branch("code", 0, false), branch("notes", 0, false)]),
            State::Active
        );
        // Work the target lacks anywhere: active, whatever else is done.
        assert_eq!(
            judge(&[branch("code", 2, true), branch("notes", 0, true)]),
            State::Active
        );
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 1, true)]),
            State::Active
        );
        // Code committed and all of it in the base branch: merged.
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 0, false)]),
            State::Merged
        );
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 0, true)]),
            State::Merged
        );
        // Only notes (or knowledge) committed and all published: published.
        assert_eq!(
            judge(&[branch("code", 0, false), branch("notes", 0, true)]),
            State::Published
        );
        assert_eq!(
            judge(&[branch("notes", 0, false), branch("knowledge", 0, true)]),
            State::Published
        );
        assert_eq!(judge(&[branch("notes", 0, true)]), State::Published);
        // A pending knowledge branch keeps a distill loop active.
        assert_eq!(
            judge(&[branch("notes", 0, true), branch("knowledge", 3, true)]),
            State::Active
        );
    }

    #[test]
    fn a_clones_config_is_all_git_loops() {
        let c = clone_config("../../../context/repos/app", "loop/x-000001");
        assert!(c.contains("\turl = ../../../context/repos/app\n"));
        assert!(c.contains("[branch \"loop/x-000001\"]\n\tremote = origin\n"));
        // What would let the user's own git run the agent's commands is off.
        assert!(c.contains("fsmonitor = false"));
        assert!(c.contains("ignoreSubmodules = all"));
        assert!(c.contains("[submodule]\n\trecurse = false"));
        assert!(!c.contains("hooksPath"));
        assert!(!c.contains("include"));
        // It parses as git config: one value per key it sets.
        for line in c.lines().filter(|l| l.starts_with('\t')) {
            assert!(line.contains(" = "), "{line}");
        }
    }

    #[test]
    fn git_lock_files_are_found_below_the_git_folder_but_objects() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join(".git");
        for f in [
            "index.lock",
            "HEAD.lock",
            "refs/heads/loop/x.lock",
            "refs/heads/main",
            "objects/pack/tmp.lock",
            "config",
        ] {
            let p = git.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        // A link named like a lock is not followed nor taken for one.
        std::os::unix::fs::symlink("/etc/passwd", git.join("packed-refs.lock")).unwrap();
        let found: Vec<String> = git_lock_files(&git)
            .iter()
            .map(|p| p.strip_prefix(&git).unwrap().display().to_string())
            .collect();
        assert_eq!(
            found,
            vec!["HEAD.lock", "index.lock", "refs/heads/loop/x.lock"]
        );
    }

    #[test]
    fn a_grant_source_is_its_kind_and_inode() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        fs::write(&a, "x").unwrap();
        let first = GrantSource::of(&fs::symlink_metadata(&a).unwrap());
        assert!(!first.dir);
        // The same path holding another file is another source.
        fs::remove_file(&a).unwrap();
        fs::write(tmp.path().join("b"), "y").unwrap();
        fs::write(&a, "x").unwrap();
        let again = GrantSource::of(&fs::symlink_metadata(&a).unwrap());
        assert_ne!((first.dev, first.ino), (again.dev, again.ino));
        assert!(GrantSource::of(&fs::symlink_metadata(tmp.path()).unwrap()).dir);
    }

    #[test]
    fn records_round_trip_and_refuse_what_is_not_one() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("loop.toml");
        let rec = LoopRecord {
            id: "fix-abc123".into(),
            title: "fix it".into(),
            kind: Kind::Code,
            repo: Some("app".into()),
            base: Some("0".repeat(40)),
            base_branch: Some("main".into()),
            branch: "loop/fix-abc123".into(),
            notes_base: "1".repeat(40),
            knowledge_base: None,
            vault: "default".into(),
            sandbox: "default".into(),
            mode: "work".into(),
            network: "proxy".into(),
            created_by: "alice".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            state: State::Active,
            grants: vec![Grant {
                path: "/srv/data".into(),
                mode: "ro".into(),
                once: false,
                source: None,
            }],
            config: toml::Table::new(),
        };
        rec.write(&path).unwrap();
        assert_eq!(LoopRecord::read(&path).unwrap(), rec);
        assert!(rec.created_at().is_some());
        fs::write(&path, "id = 1\n").unwrap();
        assert!(matches!(
            LoopRecord::read(&path),
            Err(RecordError::Invalid { .. })
        ));
        fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(LoopRecord::read(&path).is_err());
    }

    #[test]
    fn repo_pairs_name_each_repository_and_its_origin() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let mut rec = LoopRecord::read_str_for_tests();
        let pairs = repo_pairs(&ws, &rec);
        let roles: Vec<&str> = pairs.iter().map(|p| p.role).collect();
        assert_eq!(roles, ["code", "notes"]);
        assert_eq!(pairs[0].clone, Path::new("/ws/loops/fix-abc123/workdir"));
        assert_eq!(pairs[0].origin, Path::new("/ws/context/repos/app"));
        assert_eq!(
            pairs[1].alternate,
            Path::new("/ws/loops/fix-abc123/context/.origins/notes/.git/objects")
        );
        rec.kind = Kind::Distill;
        rec.repo = None;
        let roles: Vec<&str> = repo_pairs(&ws, &rec).iter().map(|p| p.role).collect();
        assert_eq!(roles, ["notes", "knowledge"]);
        rec.kind = Kind::Scratch;
        let roles: Vec<&str> = repo_pairs(&ws, &rec).iter().map(|p| p.role).collect();
        assert_eq!(roles, ["notes"]);
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("Fix the Login bug!"), "fix-the-login-bug");
        assert_eq!(slugify(""), "loop");
        assert_eq!(slugify("日本語"), "loop");
        assert_eq!(slugify("../../etc/passwd"), "etc-passwd");
        assert_eq!(slugify("a/b\"c'd"), "a-b-c-d");
        assert_eq!(slugify(&"x".repeat(100)).len(), 32);
        assert_eq!(slugify("  trailing  "), "trailing");
    }

    #[test]
    fn the_built_in_limits_are_the_documented_ones() {
        use crate::config::{Config, Layer};
        assert_eq!(limits_from(&Config::defaults()), objects::Limits::default());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        fs::write(
            &file,
            "[import]\nmax_object_size = \"3G\"\nmax_pack_size = 1024\nread_timeout = 5\n",
        )
        .unwrap();
        let config = Config::load(&[(Layer::Operator, file.clone())], None).unwrap();
        let limits = limits_from(&config);
        assert_eq!(limits.max_object_size, 3 << 30);
        assert_eq!(limits.max_pack_size, 1024);
        assert_eq!(limits.read_timeout, std::time::Duration::from_secs(5));
        for bad in ["max_object_size = \"lots\"", "read_timeout = 0"] {
            fs::write(&file, format!("[import]\n{bad}\n")).unwrap();
            let err = Config::load(&[(Layer::Operator, file.clone())], None).unwrap_err();
            assert!(err.to_string().contains("import."), "{err}");
        }
        // A layer a sandbox can write never sets them.
        fs::write(&file, "[import]\nmax_object_size = \"100G\"\n").unwrap();
        let config = Config::load(&[(Layer::Personal, file.clone())], None).unwrap();
        assert_eq!(limits_from(&config), objects::Limits::default());
    }

    #[test]
    fn ids() {
        let id = new_id("fix");
        assert!(id.starts_with("fix-") && id.len() == 10, "{id}");
        assert!(is_id_like(&id));
        assert!(!is_id_like("../x"));
        assert!(!is_id_like(".new-x"));
    }
}
