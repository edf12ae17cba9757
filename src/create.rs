//! Creating a loop (DESIGN.md section 3).
//!
//! A loop's repositories are shared clones made by hand rather than by `git clone
//! --shared`: `git init`, an `objects/info/alternates` with a *relative* path to the
//! origin's objects, `origin` as a relative URL, the refs written directly, then one
//! checkout. Relative paths keep the workspace portable and resolve the same way inside
//! the sandbox, whose layout mirrors the workspace; skipping clone's transport makes `new`
//! cost about what `git worktree add` costs.
//!
//! Everything is assembled in `loops/.new-<id>/` and renamed into place last, after the
//! origin branches exist; any failure removes the staging folder and the branches it
//! created, so a failed `new` leaves nothing half-made. A killed one cannot clean up after
//! itself: it holds `locks/new-<id>.lock` from the moment it reserves its id, and writes
//! each branch to its journal (`locks/new-<id>.pending`) before creating it, so whoever
//! takes that lock and finds a staging folder or a journal knows the `new` is dead and
//! removes exactly what it made ([`roll_back_interrupted`]: the next `new`, `rm`, `list`
//! or `doctor --fix`).

use std::fs;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::config::Settings;
use crate::error::{Context, Error, Result};
use crate::failpoint;
use crate::fsutil::{self, Lock};
use crate::git::cmd::Git;
use crate::git::objects;
use crate::loops::{self, Kind, LoopRecord, State};
use crate::repos;
use crate::values::{NetMode, RunMode};
use crate::workspace::Workspace;

pub const MAX_TITLE: usize = 200;

/// What the user asked `new` for.
#[derive(Debug)]
pub struct NewLoop {
    pub title: Option<String>,
    pub repo: Option<PathBuf>,
    pub base: Option<String>,
    pub scratch: bool,
    /// A distill loop: no code, its own clone of knowledge (DESIGN 5).
    pub distill: bool,
    pub vault: Option<String>,
    pub sandbox: Option<String>,
    /// A conversation transcript the loop continues (`--seed-chat`).
    pub seed_chat: Option<PathBuf>,
    pub mode: RunMode,
    pub network: NetMode,
    pub vault_default: String,
    pub sandbox_default: String,
    /// The largest object a context checkout may write (`import.max_object_size`).
    pub max_object_size: u64,
    /// The fan-out group the loop is one of.
    pub group: Option<String>,
    /// What of the user's ignored files `.worktreeinclude` may bring along.
    pub include: crate::include::Rules,
}

impl NewLoop {
    /// A request with nothing chosen but what the configuration says.
    pub fn with_settings(settings: &Settings) -> NewLoop {
        NewLoop {
            title: None,
            repo: None,
            base: None,
            scratch: false,
            distill: false,
            vault: None,
            sandbox: None,
            seed_chat: None,
            mode: settings.sandbox.mode,
            network: settings.network.mode,
            vault_default: settings.vault.default.clone(),
            sandbox_default: settings.sandbox.profile.clone(),
            max_object_size: settings.import.max_object_size.0,
            group: None,
            include: crate::include::Rules::from_settings(settings),
        }
    }
}

impl Default for NewLoop {
    fn default() -> NewLoop {
        NewLoop::with_settings(&Settings::defaults())
    }
}

/// The result, with what the user should be told.
pub struct Created {
    pub record: LoopRecord,
    pub warnings: Vec<String>,
}

/// Why `new` refuses, or cannot make, a loop.
#[derive(Debug, thiserror::Error)]
pub enum NewError {
    #[error("the title is empty")]
    EmptyTitle,
    #[error("the title is {0} characters long; at most {MAX_TITLE} are allowed")]
    LongTitle(usize),
    #[error("the title holds control characters (a newline, a tab, ...)")]
    ControlInTitle,
    #[error("--seed-chat {}: no such file", .0.display())]
    NoSeedChat(PathBuf),
    #[error("--scratch makes a loop without code; it takes no --repo or --base")]
    ScratchWithCode,
    #[error("{} does not exist", .0.display())]
    NoRepository(PathBuf),
    /// `new` where no repository is, and no --scratch asked for a loop without code.
    #[error("{} is not in a git repository", .0.display())]
    NotInRepository(PathBuf),
    /// The notes or knowledge repository of the workspace cannot be opened.
    #[error("cannot read the {which} repository")]
    Context {
        which: &'static str,
        #[source]
        source: objects::GitReadError,
    },
    #[error("{} is a loop's own repository", .0.display())]
    LoopRepository(PathBuf),
    #[error("{} has no commits yet", .0.display())]
    NoCommits(PathBuf),
    #[error("--base {spec} names no commit in {}", top.display())]
    NoBase { spec: String, top: PathBuf },
    #[error("cannot create {}", path.display())]
    Staging {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot find an unused loop id")]
    NoFreeId,
    /// The trunk of a context repository holds an object over `import.max_object_size`,
    /// which its checkout would inflate.
    #[error("the {which} trunk holds {} {} of {} bytes{}{}, over the limit of {limit} bytes (import.max_object_size); no loop was made", found.kind, found.id, found.size, if found.path.is_empty() { String::new() } else { format!(" ({})", crate::terminal::shown(&found.path)) }, remote.as_ref().map(|r| format!(", from the remote {}", crate::terminal::shown(r))).unwrap_or_default())]
    TooLarge {
        which: &'static str,
        remote: Option<String>,
        found: crate::checkout::bound::Oversized,
        limit: u64,
    },
}

/// Refuses a context repository whose trunk `tip` holds an object its checkout would
/// inflate past `limit` (ATTACKS 43): judged by the objects' headers, nothing inflated.
fn refuse_oversized(
    ws: &Workspace,
    which: &'static str,
    repo: &gix::Repository,
    tip: ObjectId,
    limit: u64,
) -> Result<()> {
    let found = crate::checkout::bound::oversized_in_tree(repo, tip, limit)
        .map_err(|source| NewError::Context { which, source })?;
    match found {
        None => Ok(()),
        Some(found) => {
            let dir = if which == "notes" {
                ws.notes()
            } else {
                ws.knowledge()
            };
            Err(NewError::TooLarge {
                which,
                remote: crate::sync::remote_url(&dir),
                found,
                limit,
            }
            .into())
        }
    }
}

pub fn validate_title(title: &str) -> Result<()> {
    if title.trim().is_empty() {
        return Err(NewError::EmptyTitle.into());
    }
    if title.chars().count() > MAX_TITLE {
        return Err(NewError::LongTitle(title.chars().count()).into());
    }
    if title.chars().any(char::is_control) {
        return Err(NewError::ControlInTitle.into());
    }
    Ok(())
}

/// Refuses, before anything is written, a loop on code where there is no repository: run
/// outside one, with neither --repo nor --scratch.
pub fn check_repository(scratch: bool, repo: Option<&std::path::Path>) -> Result<()> {
    if scratch || repo.is_some() {
        return Ok(());
    }
    let here = std::env::current_dir().context(|| "cannot read the current folder")?;
    if repos::is_inside_a_repository(&here) {
        Ok(())
    } else {
        Err(NewError::NotInRepository(here).into())
    }
}

pub fn create(ws: &Workspace, req: &NewLoop) -> Result<Created> {
    let title = req.title.clone().unwrap_or_default();
    if req.title.is_some() {
        validate_title(&title)?;
    }
    let mut warnings = Vec::new();

    // Everything that can be refused is checked before anything is written.
    if let Some(chat) = &req.seed_chat {
        if !chat.is_file() {
            return Err(NewError::NoSeedChat(chat.clone()).into());
        }
    }
    let code = if req.scratch || req.distill {
        if req.repo.is_some() || req.base.is_some() {
            return Err(NewError::ScratchWithCode.into());
        }
        None
    } else {
        let start = match &req.repo {
            Some(p) => p.clone(),
            None => std::env::current_dir().context(|| "cannot read the current folder")?,
        };
        if req.repo.is_some() && !start.exists() {
            return Err(NewError::NoRepository(start).into());
        }
        if req.repo.is_none() && !repos::is_inside_a_repository(&start) {
            // Outside any repository there is no code to work on: a loop without code is
            // asked for with --scratch, never made by accident.
            return Err(NewError::NotInRepository(start).into());
        }
        let found = repos::discover(&start)?;
        refuse_loop_repository(ws, &found.top)?;
        Some(prepare_code(found, req.base.as_deref())?)
    };
    // The ignored files to bring along, read whole: a refusal leaves nothing made.
    let included = match &code {
        Some(c) => crate::include::plan(&c.top, &req.include)?,
        None => crate::include::Plan::default(),
    };
    for why in &included.skipped {
        warnings.push(format!("{} names {why}: not copied", crate::include::FILE));
    }

    // Started now, read after the checkout: it overlaps with our own work.
    let status = match &code {
        Some(c) => Some(
            Git::in_dir(&c.top)
                .args(["status", "--porcelain", "--ignore-submodules=all"])
                .spawn()?,
        ),
        None => None,
    };

    crate::init::ensure(ws)?;
    let notes_origin = objects::open_trusted(&ws.notes()).map_err(|source| NewError::Context {
        which: "notes",
        source,
    })?;
    let notes_trunk = objects::head_branch(&notes_origin)
        .ok()
        .flatten()
        .ok_or_else(|| Error::failure("the notes repository has no trunk checked out"))?;
    let notes_base = objects::resolve_branch(&notes_origin, &notes_trunk)
        .ok()
        .flatten()
        .ok_or_else(|| Error::failure(format!("the notes trunk {notes_trunk} has no commit")))?;

    refuse_oversized(ws, "notes", &notes_origin, notes_base, req.max_object_size)?;
    let knowledge = if req.distill {
        let repo = objects::open_trusted(&ws.knowledge()).map_err(|source| NewError::Context {
            which: "knowledge",
            source,
        })?;
        let trunk = objects::head_branch(&repo)
            .ok()
            .flatten()
            .ok_or_else(|| Error::failure("the knowledge repository has no trunk checked out"))?;
        let base = objects::resolve_branch(&repo, &trunk)
            .ok()
            .flatten()
            .ok_or_else(|| Error::failure(format!("the knowledge trunk {trunk} has no commit")))?;
        refuse_oversized(ws, "knowledge", &repo, base, req.max_object_size)?;
        Some((repo, base))
    } else {
        None
    };
    let slug = loops::slugify(&title);
    let (id, _owner, repo_name) = {
        let _lock = Lock::acquire(&ws.workspace_lock())?;
        let repo_name = match &code {
            Some(c) => Some(repos::register(ws, &c.top)?),
            None => None,
        };
        let (id, owner) = reserve_id(ws, &slug, code.as_ref().map(|c| &c.repo), &notes_origin)?;
        (id, owner, repo_name)
    };
    failpoint::hit("new:reserved");
    let staging = ws.loop_staging_dir(&id);
    let branch = LoopRecord::branch_name(&id);

    let mut made = Made::new(ws.new_journal(&id), &id);
    let result = (|| -> Result<LoopRecord> {
        let workdir = staging.join("workdir");
        match (&code, &repo_name) {
            (Some(c), Some(name)) => {
                let remote_branches = objects::branches(&c.repo).unwrap_or_default();
                make_clone(
                    &workdir,
                    &Workspace::rel_objects_from_workdir(name),
                    &Workspace::rel_repo_from_workdir(name),
                    &branch,
                    c.base,
                    &remote_branches,
                )?;
            }
            _ => fs::create_dir_all(&workdir)
                .context(|| format!("cannot create {}", workdir.display()))?,
        }
        failpoint::hit("new:workdir-cloned");
        let copied = crate::include::copy(&workdir, &included)?;
        failpoint::hit("new:included");
        context_clone(&staging, "notes", &notes_origin, &branch, notes_base)?;
        failpoint::hit("new:notes-cloned");
        if let Some((repo, base)) = &knowledge {
            context_clone(&staging, "knowledge", repo, &branch, *base)?;
        }
        if let Some(chat) = &req.seed_chat {
            let dir = staging.join("chat");
            fs::create_dir_all(&dir).context(|| format!("cannot create {}", dir.display()))?;
            let name = chat
                .file_name()
                .map(|n| n.to_owned())
                .unwrap_or_else(|| "chat.md".into());
            fs::copy(chat, dir.join(name)).context(|| format!("cannot copy {}", chat.display()))?;
        }
        for dir in [".claude", "home/upper", "home/work", "home/merged"] {
            let d = staging.join(dir);
            fs::create_dir_all(&d).context(|| format!("cannot create {}", d.display()))?;
        }
        let record = LoopRecord {
            id: id.clone(),
            title: title.clone(),
            kind: if code.is_some() {
                Kind::Code
            } else if req.distill {
                Kind::Distill
            } else {
                Kind::Scratch
            },
            repo: repo_name.clone(),
            base: code.as_ref().map(|c| c.base.to_string()),
            base_branch: code.as_ref().and_then(|c| c.base_branch.clone()),
            branch: branch.clone(),
            notes_base: notes_base.to_string(),
            knowledge_base: knowledge.as_ref().map(|(_, base)| base.to_string()),
            vault: req
                .vault
                .clone()
                .unwrap_or_else(|| req.vault_default.clone()),
            sandbox: req
                .sandbox
                .clone()
                .unwrap_or_else(|| req.sandbox_default.clone()),
            mode: req.mode,
            network: req.network,
            created_by: ws.user().to_string(),
            created_at: crate::values::Timestamp::now(),
            state: State::Active,
            grants: Vec::new(),
            config: toml::Table::new(),
            group: req.group.clone(),
            included: copied,
        };
        record.write(&staging.join("loop.toml"))?;
        failpoint::hit("new:record-written");

        // The origins get the loop's branch at its base now, so `git branch` in the
        // user's repository shows the loop from the start. Each is in the journal before
        // it exists.
        if let Some(c) = &code {
            made.intend(&c.top, c.base)?;
            objects::update_branch(&c.repo, &branch, None, c.base, "git loop new").map_err(
                |e| {
                    Error::failure(format!("cannot create {branch} in {}", c.top.display()))
                        .with_source(e)
                },
            )?;
            failpoint::hit("new:code-branch");
        }
        made.intend(&ws.notes(), notes_base)?;
        objects::update_branch(&notes_origin, &branch, None, notes_base, "git loop new").map_err(
            |e| {
                Error::failure(format!("cannot create {branch} in the notes repository"))
                    .with_source(e)
            },
        )?;
        failpoint::hit("new:notes-branch");
        if let Some((repo, base)) = &knowledge {
            made.intend(&ws.knowledge(), *base)?;
            objects::update_branch(repo, &branch, None, *base, "git loop distill").map_err(
                |e| {
                    Error::failure(format!(
                        "cannot create {branch} in the knowledge repository"
                    ))
                    .with_source(e)
                },
            )?;
        }

        fs::rename(&staging, ws.loop_dir(&id))
            .context(|| format!("cannot move {} into place", staging.display()))?;
        failpoint::hit("new:renamed");
        Ok(record)
    })();

    let record = match result {
        Ok(r) => r,
        Err(e) => {
            made.undo();
            let _ = fsutil::remove_tree(&staging);
            let _ = fs::remove_file(ws.new_journal(&id));
            let _ = fs::remove_file(ws.new_lock(&id));
            return Err(e);
        }
    };
    // The loop is in place: nothing is to be rolled back any more.
    let _ = fs::remove_file(ws.new_journal(&id));
    let _ = fs::remove_file(ws.new_lock(&id));

    if let (Some(status), Some(c)) = (status, &code) {
        if let Ok(out) = status.wait_read() {
            if !out.trim().is_empty() {
                warnings.push(format!(
                    "{} has uncommitted changes; they were not carried into the loop, which starts from commit {}",
                    c.top.display(),
                    &c.base.to_string()[..12]
                ));
            }
        }
    }
    Ok(Created { record, warnings })
}

/// `new` must not treat a loop's own repository as a user repository: host-side git
/// would then run in a repository the agent controls.
fn refuse_loop_repository(ws: &Workspace, top: &Path) -> Result<()> {
    let loops = fs::canonicalize(ws.loops_dir()).unwrap_or_else(|_| ws.loops_dir());
    if top.starts_with(&loops) {
        return Err(NewError::LoopRepository(top.to_path_buf()).into());
    }
    Ok(())
}

struct Code {
    top: PathBuf,
    repo: gix::Repository,
    base: ObjectId,
    base_branch: Option<String>,
}

fn prepare_code(found: repos::Found, base: Option<&str>) -> Result<Code> {
    let repo = found.repo;
    let head_branch = objects::head_branch(&repo).ok().flatten();
    let head = repo.head_id().ok().map(|id| id.detach());
    let (base_id, base_branch) = match base {
        None => match head {
            Some(id) => (id, head_branch),
            None => return Err(NewError::NoCommits(found.top.clone()).into()),
        },
        Some(spec) => {
            let id = objects::resolve_rev(&repo, spec)
                .ok()
                .flatten()
                .ok_or_else(|| NewError::NoBase {
                    spec: spec.to_string(),
                    top: found.top.clone(),
                })?;
            let is_branch = objects::resolve_branch(&repo, spec)
                .ok()
                .flatten()
                .is_some()
                && !spec.starts_with("refs/");
            (
                id,
                if is_branch {
                    Some(spec.to_string())
                } else {
                    head_branch
                },
            )
        }
    };
    Ok(Code {
        top: found.top,
        repo,
        base: base_id,
        base_branch,
    })
}

/// Picks an unused id and reserves it by creating its staging folder (under the workspace
/// lock), holding the id's `new` lock from before the folder exists.
fn reserve_id(
    ws: &Workspace,
    slug: &str,
    code: Option<&gix::Repository>,
    notes: &gix::Repository,
) -> Result<(String, Lock)> {
    for _ in 0..64 {
        let id = loops::new_id(slug);
        let branch = LoopRecord::branch_name(&id);
        let taken = ws.loop_dir(&id).exists()
            || ws.loop_removal_dir(&id).exists()
            || ws.new_journal(&id).exists()
            || objects::resolve_branch(notes, &branch)
                .ok()
                .flatten()
                .is_some()
            || code.is_some_and(|r| objects::resolve_branch(r, &branch).ok().flatten().is_some());
        if taken {
            continue;
        }
        let Some(owner) = Lock::try_acquire(&ws.new_lock(&id))? else {
            continue;
        };
        match fs::create_dir(ws.loop_staging_dir(&id)) {
            Ok(()) => return Ok((id, owner)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(NewError::Staging {
                    path: ws.loop_staging_dir(&id),
                    source: e,
                }
                .into())
            }
        }
    }
    Err(NewError::NoFreeId.into())
}

/// A branch `new` created in an origin, at the commit it was created at.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MadeBranch {
    origin: PathBuf,
    tip: String,
}

/// `locks/new-<id>.pending`: the branches a `new` created (each written before it is).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    branch: String,
    branches: Vec<MadeBranch>,
}

/// Branches created in origins, to delete again if `new` fails or dies later.
struct Made {
    path: PathBuf,
    journal: Journal,
}

impl Made {
    fn new(path: PathBuf, id: &str) -> Made {
        Made {
            path,
            journal: Journal {
                branch: LoopRecord::branch_name(id),
                branches: Vec::new(),
            },
        }
    }

    /// Notes, before it exists, that `new` makes the loop's branch in `origin` at `tip`.
    fn intend(&mut self, origin: &Path, tip: ObjectId) -> Result<()> {
        self.journal.branches.push(MadeBranch {
            origin: origin.to_path_buf(),
            tip: tip.to_string(),
        });
        let text = serde_json::to_vec_pretty(&self.journal).unwrap_or_default();
        fsutil::write_atomic(&self.path, &text)
    }

    fn undo(&self) -> Vec<String> {
        undo_branches(&self.journal)
    }
}

/// Deletes the branches the journal names, each only if it is still where `new` put it
/// (nothing else ever had it). Says what was deleted.
fn undo_branches(journal: &Journal) -> Vec<String> {
    let mut said = Vec::new();
    for made in &journal.branches {
        let Ok(tip) = ObjectId::from_hex(made.tip.as_bytes()) else {
            continue;
        };
        let Ok(repo) = objects::open_trusted(&made.origin) else {
            continue;
        };
        if objects::resolve_branch(&repo, &journal.branch)
            .ok()
            .flatten()
            == Some(tip)
            && objects::delete_branch(&repo, &journal.branch, tip).is_ok()
        {
            said.push(format!(
                "deleted {} in {}",
                journal.branch,
                made.origin.display()
            ));
        }
    }
    said
}

/// What [`roll_back_interrupted`] did about one dead `new`.
pub struct RolledBack {
    pub id: String,
    /// The staging folder removed, and the branches deleted.
    pub removed: Vec<String>,
}

/// The `new`s a kill interrupted (a staging folder or a journal whose `new` lock is free):
/// the loop folder in place means it had finished, and only its journal goes; otherwise
/// its staging folder and exactly the branches its journal names are removed. A `new` in
/// progress is left alone.
pub fn roll_back_interrupted(ws: &Workspace) -> Result<Vec<RolledBack>> {
    let mut done = Vec::new();
    for id in interrupted_ids(ws) {
        let Some(_dead) = Lock::try_acquire(&ws.new_lock(&id))? else {
            continue;
        };
        let journal_path = ws.new_journal(&id);
        let staging = ws.loop_staging_dir(&id);
        let mut removed = Vec::new();
        if !ws.loop_dir(&id).exists() {
            if let Ok(text) = fs::read(&journal_path) {
                if let Ok(journal) = serde_json::from_slice::<Journal>(&text) {
                    removed.extend(undo_branches(&journal));
                }
            }
            if staging.exists() {
                fsutil::remove_tree(&staging).map_err(|e| {
                    Error::failure(format!("cannot remove {}", staging.display())).with_source(e)
                })?;
                removed.insert(0, format!("removed {}", staging.display()));
            }
        }
        let _ = fs::remove_file(&journal_path);
        let _ = fs::remove_file(ws.new_lock(&id));
        done.push(RolledBack { id, removed });
    }
    Ok(done)
}

/// Ids of `new`s that left a staging folder or a journal, dead or alive.
fn interrupted_ids(ws: &Workspace) -> Vec<String> {
    let mut ids: Vec<String> = ws
        .staging_leftovers()
        .unwrap_or_default()
        .iter()
        .filter_map(|p| {
            p.file_name()?
                .to_str()?
                .strip_prefix(crate::workspace::STAGING_PREFIX)
                .map(str::to_string)
        })
        .collect();
    if let Ok(entries) = fs::read_dir(ws.locks_dir()) {
        for e in entries.flatten() {
            let name = e.file_name();
            if let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("new-")?.strip_suffix(".pending"))
            {
                if loops::is_id_like(id) {
                    ids.push(id.to_string());
                }
            }
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

/// `new`s that left something behind, and whether each is still running (for `doctor`).
pub fn interrupted(ws: &Workspace) -> Vec<(String, bool)> {
    interrupted_ids(ws)
        .into_iter()
        .map(|id| {
            let live = matches!(Lock::try_acquire(&ws.new_lock(&id)), Ok(None));
            (id, live)
        })
        .collect()
}

/// The loop's clone of a context origin (`notes`, `knowledge`) at `context/<role>`, which
/// reaches its origin through the `context/.origins/<role>` link (see workspace.rs).
fn context_clone(
    staging: &Path,
    role: &str,
    origin: &gix::Repository,
    branch: &str,
    base: ObjectId,
) -> Result<()> {
    let origins = staging.join("context/.origins");
    fs::create_dir_all(&origins).context(|| format!("cannot create {}", origins.display()))?;
    std::os::unix::fs::symlink(Workspace::origin_link_target(role), origins.join(role))
        .context(|| format!("cannot create {}", origins.join(role).display()))?;
    let origin_branches = objects::branches(origin).unwrap_or_default();
    make_clone(
        &staging.join("context").join(role),
        &Workspace::rel_objects_from_context_clone(role),
        &Workspace::rel_origin_from_context_clone(role),
        branch,
        base,
        &origin_branches,
    )
}

/// Makes `dir` a shared clone of an origin on `branch` at `base` and checks it out.
fn make_clone(
    dir: &Path,
    rel_objects: &str,
    rel_url: &str,
    branch: &str,
    base: ObjectId,
    origin_branches: &[(String, ObjectId)],
) -> Result<()> {
    Git::bare()
        .args(["init", "--quiet", "--template=", "--initial-branch"])
        .arg(branch)
        .arg(dir)
        .run()?;
    let git_dir = dir.join(".git");
    let info = git_dir.join("objects/info");
    fs::create_dir_all(&info).context(|| format!("cannot create {}", info.display()))?;
    fs::write(info.join("alternates"), format!("{rel_objects}\n"))
        .context(|| format!("cannot write {}", info.join("alternates").display()))?;
    // The whole config is git-loop's (every run rewrites it, see `loops::clone_config`);
    // `hooks/` stays empty and `commondir` names the clone itself; `info/` is the agent's.
    fs::write(git_dir.join("config"), loops::clone_config(rel_url, branch))
        .context(|| "cannot write the clone's config")?;
    fs::write(git_dir.join("commondir"), ".\n").context(|| "cannot write the clone's commondir")?;
    for folder in ["hooks", "info"] {
        fs::create_dir_all(git_dir.join(folder))
            .context(|| format!("cannot create {}", git_dir.join(folder).display()))?;
    }
    // All refs in one packed-refs file: one write instead of a file per branch.
    let mut refs: Vec<(String, ObjectId)> = origin_branches
        .iter()
        .filter(|(name, _)| !name.starts_with("loop/"))
        .map(|(name, id)| (format!("refs/remotes/origin/{name}"), *id))
        .collect();
    refs.push((format!("refs/heads/{branch}"), base));
    refs.sort();
    let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
    for (name, id) in refs {
        packed.push_str(&format!("{id} {name}\n"));
    }
    fs::write(git_dir.join("packed-refs"), packed).context(|| "cannot write packed-refs")?;
    Git::in_dir(dir)
        .args(["reset", "--hard", "--quiet"])
        .run()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_line_of_bounded_length() {
        assert!(validate_title("fix the login bug").is_ok());
        assert!(validate_title(&"x".repeat(MAX_TITLE)).is_ok());
        for bad in ["", "   ", "two\nlines", "tab\there", "esc\u{1b}[2J"] {
            let e = validate_title(bad).unwrap_err();
            assert_eq!(e.kind.exit_code(), 2, "{bad:?}");
            assert!(!e.hints.is_empty());
        }
        assert!(validate_title(&"x".repeat(MAX_TITLE + 1)).is_err());
    }

    use crate::testutil::{git, git_output};

    /// A workspace with an origin repository holding `main` (one commit) and `loop/<id>`
    /// at `main` for each id, as a `new` would have made them; returns the workspace,
    /// the origin and main's commit.
    fn fixture(ids: &[&str]) -> (tempfile::TempDir, Workspace, PathBuf, ObjectId) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = Workspace::at(root.join("ws"), "alice".into());
        fs::create_dir_all(ws.loops_dir()).unwrap();
        fs::create_dir_all(ws.locks_dir()).unwrap();
        let origin = root.join("origin");
        fs::create_dir(&origin).unwrap();
        git(&origin, &["init", "-q", "-b", "main"]);
        fs::write(origin.join("a"), "a\n").unwrap();
        git(&origin, &["add", "a"]);
        git(
            &origin,
            &[
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@example.com",
                "commit",
                "-q",
                "-m",
                "a",
            ],
        );
        let tip = ObjectId::from_hex(git(&origin, &["rev-parse", "main"]).as_bytes()).unwrap();
        for id in ids {
            git(&origin, &["branch", &LoopRecord::branch_name(id), "main"]);
        }
        (tmp, ws, origin, tip)
    }

    /// What a `new` of `id` left when killed after making its branch in `origin`.
    fn killed_new(ws: &Workspace, id: &str, origin: &Path, tip: ObjectId) {
        let mut made = Made::new(ws.new_journal(id), id);
        made.intend(origin, tip).unwrap();
        fs::create_dir_all(ws.loop_staging_dir(id).join("context")).unwrap();
    }

    fn branch(origin: &Path, id: &str) -> bool {
        let name = format!("refs/heads/{}", LoopRecord::branch_name(id));
        git_output(origin, &["rev-parse", "-q", "--verify", &name])
            .status
            .success()
    }

    #[test]
    fn a_killed_new_is_rolled_back_to_exactly_what_it_made() {
        let (_tmp, ws, origin, tip) = fixture(&["dead-1", "moved-2"]);
        killed_new(&ws, "dead-1", &origin, tip);
        killed_new(&ws, "moved-2", &origin, tip);
        // Someone moved moved-2's branch since: it is no longer only `new`'s.
        fs::write(origin.join("b"), "b\n").unwrap();
        git(
            &origin,
            &["switch", "-q", &LoopRecord::branch_name("moved-2")],
        );
        git(&origin, &["add", "b"]);
        git(
            &origin,
            &[
                "-c",
                "user.name=A",
                "-c",
                "user.email=a@example.com",
                "commit",
                "-q",
                "-m",
                "b",
            ],
        );
        git(&origin, &["switch", "-q", "main"]);

        assert_eq!(
            interrupted(&ws),
            [
                ("dead-1".to_string(), false),
                ("moved-2".to_string(), false)
            ]
        );
        let done = roll_back_interrupted(&ws).unwrap();
        let said: Vec<(&str, &Vec<String>)> =
            done.iter().map(|r| (r.id.as_str(), &r.removed)).collect();
        assert_eq!(said.len(), 2);
        assert_eq!(said[0].0, "dead-1");
        assert_eq!(
            said[0].1,
            &vec![
                format!("removed {}", ws.loop_staging_dir("dead-1").display()),
                format!(
                    "deleted {} in {}",
                    LoopRecord::branch_name("dead-1"),
                    origin.display()
                ),
            ]
        );
        assert_eq!(
            said[1].1,
            &vec![format!(
                "removed {}",
                ws.loop_staging_dir("moved-2").display()
            )]
        );
        assert!(!branch(&origin, "dead-1"));
        assert!(branch(&origin, "moved-2"), "a branch moved since is kept");
        for id in ["dead-1", "moved-2"] {
            assert!(!ws.loop_staging_dir(id).exists() && !ws.new_journal(id).exists());
        }
        assert!(interrupted(&ws).is_empty());
        assert!(roll_back_interrupted(&ws).unwrap().is_empty());
    }

    #[test]
    fn a_new_that_runs_is_left_alone_and_a_finished_one_loses_only_its_journal() {
        let (_tmp, ws, origin, tip) = fixture(&["live-1", "done-2"]);
        killed_new(&ws, "live-1", &origin, tip);
        let _running = Lock::acquire(&ws.new_lock("live-1")).unwrap();
        let mut made = Made::new(ws.new_journal("done-2"), "done-2");
        made.intend(&origin, tip).unwrap();
        fs::create_dir_all(ws.loop_dir("done-2")).unwrap();

        assert_eq!(
            interrupted(&ws),
            [("done-2".to_string(), false), ("live-1".to_string(), true)]
        );
        let done = roll_back_interrupted(&ws).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!((done[0].id.as_str(), done[0].removed.len()), ("done-2", 0));
        assert!(!ws.new_journal("done-2").exists());
        assert!(
            ws.loop_dir("done-2").exists() && branch(&origin, "done-2"),
            "a finished loop stays"
        );
        assert!(ws.loop_staging_dir("live-1").exists() && ws.new_journal("live-1").exists());
        assert!(branch(&origin, "live-1"));
    }

    #[test]
    fn only_names_of_new_journals_and_staging_folders_count_as_interrupted() {
        let (_tmp, ws, _origin, _tip) = fixture(&[]);
        for name in [
            "new-ok-1.pending",
            "new-.hidden.pending",
            "new-a/b.pending",
            "run-x.lock",
            "new-y.lock",
        ] {
            let path = ws.locks_dir().join(name);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).unwrap();
            }
            fs::write(path, b"{}").unwrap();
        }
        fs::create_dir_all(ws.loop_staging_dir("st-2")).unwrap();
        fs::create_dir_all(ws.loop_dir("plain-3")).unwrap();
        assert_eq!(interrupted_ids(&ws), ["ok-1", "st-2"]);
    }

    #[test]
    fn a_base_names_the_commit_and_keeps_the_branch_it_was_given() {
        let (_tmp, _ws, origin, tip) = fixture(&[]);
        git(&origin, &["tag", "v1"]);
        git(&origin, &["branch", "topic"]);
        let found = |o: &Path| repos::Found {
            top: o.to_path_buf(),
            repo: objects::open_trusted(o).unwrap(),
        };
        let code = prepare_code(found(&origin), None).unwrap();
        assert_eq!(
            (code.base, code.base_branch.as_deref()),
            (tip, Some("main"))
        );
        let code = prepare_code(found(&origin), Some("topic")).unwrap();
        assert_eq!(
            (code.base, code.base_branch.as_deref()),
            (tip, Some("topic"))
        );
        let code = prepare_code(found(&origin), Some("v1")).unwrap();
        assert_eq!(
            code.base_branch.as_deref(),
            Some("main"),
            "a tag: the branch checked out"
        );
        let code = prepare_code(found(&origin), Some("refs/heads/topic")).unwrap();
        assert_eq!(code.base_branch.as_deref(), Some("main"));
        let err = prepare_code(found(&origin), Some("nope")).err().unwrap();
        assert_eq!(err.kind.exit_code(), 2);
        assert!(
            err.one_line().contains("--base nope names no commit"),
            "{}",
            err.one_line()
        );

        let empty = origin.parent().unwrap().join("empty");
        fs::create_dir(&empty).unwrap();
        git(&empty, &["init", "-q", "-b", "main"]);
        let err = prepare_code(found(&empty), None).err().unwrap();
        assert!(
            err.one_line().ends_with("has no commits yet"),
            "{}",
            err.one_line()
        );
    }

    #[test]
    fn a_clone_gets_git_loops_config_and_every_origin_branch_but_the_loops() {
        let (_tmp, ws, origin, tip) = fixture(&["other-1"]);
        let dir = ws.root().join("clone");
        let branches = objects::branches(&objects::open_trusted(&origin).unwrap()).unwrap();
        let objects_dir = origin.join(".git/objects");
        make_clone(
            &dir,
            objects_dir.to_str().unwrap(),
            origin.to_str().unwrap(),
            "loop/mine-2",
            tip,
            &branches,
        )
        .unwrap();
        let git_dir = dir.join(".git");
        assert_eq!(
            fs::read_to_string(git_dir.join("packed-refs")).unwrap(),
            format!(
                "# pack-refs with: peeled fully-peeled sorted \n{tip} refs/heads/loop/mine-2\n{tip} refs/remotes/origin/main\n"
            )
        );
        assert_eq!(
            fs::read_to_string(git_dir.join("config")).unwrap(),
            loops::clone_config(origin.to_str().unwrap(), "loop/mine-2")
        );
        assert_eq!(
            fs::read_to_string(git_dir.join("commondir")).unwrap(),
            ".\n"
        );
        assert_eq!(fs::read_dir(git_dir.join("hooks")).unwrap().count(), 0);
        assert_eq!(
            fs::read_to_string(dir.join("a")).unwrap(),
            "a\n",
            "checked out"
        );
        assert_eq!(git(&dir, &["rev-parse", "HEAD"]), tip.to_string());
    }
}
