//! Sharing a workspace through git remotes (DESIGN.md section 9): the team's notes and
//! knowledge, the person's own repository and vaults each may have a remote (`origin`),
//! and `sync` (or a publish) brings the local trunk and the remote's together: fetch, a
//! fast-forward or a merge commit made without touching any checkout until it is proven
//! clean, then a push whose expected old value is the remote trunk just fetched. Someone
//! else pushing in between makes the push fail; the whole round is done again, a bounded
//! number of times. Git is the engine and the forge the server; git-loop adds none.
//!
//! Who runs git where (DESIGN 4.0): notes, knowledge and the vaults are folders no
//! sandbox can write, so git runs there on the host, with the settings that keep it from
//! running anything a fetched tree could name. The personal repository's files are
//! written by every loop's sandbox: its `.git` is not (sandboxes never see it), so fetch
//! and push run on the host against the `.git` alone, with no working tree, and what
//! reads or writes the files (the merge's attributes, the checkout) runs in a jail that
//! sees only that tree (`crate::sandbox::task::jail`).
//!
//! Here: the rounds of a sync. `quarantine.rs` fetches (bounded, into a scratch
//! repository, judged before anything is moved in), `remote.rs` pushes, `personal.rs` merges the personal repository in its jail, `report.rs` says what happened.

use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;
use serde::Serialize;

use crate::error::Result;
use crate::git::cmd::{Git, GitError};
use crate::git::objects;
use crate::publish::{self, MergeRequest, Outcome, Owner};
use crate::sandbox::task;
use crate::terminal::shown;
use crate::workspace::Workspace;

mod comments;
mod personal;
mod quarantine;
mod remote;
mod report;

pub use comments::{sync_comments, CommentsSync};
pub use quarantine::{
    bounded, bounded_hint, bounded_message, stopped_at_bounds, Bounds, Exceeded, MEMORY_SLACK,
};
pub use remote::*;
pub use report::*;

/// The remote every shared repository is synced with.
pub const REMOTE: &str = "origin";

/// How many rounds (fetch, merge, push) a sync tries before saying the remote is busy.
const ROUNDS: u32 = 12;

/// One of the workspace's repositories that can have a remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Knowledge,
    Notes,
    Personal,
    Vaults,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Knowledge, Role::Notes, Role::Personal, Role::Vaults];

    pub fn name(self) -> &'static str {
        match self {
            Role::Knowledge => "knowledge",
            Role::Notes => "notes",
            Role::Personal => "personal",
            Role::Vaults => "vaults",
        }
    }

    pub fn path(self, ws: &Workspace) -> PathBuf {
        match self {
            Role::Knowledge => ws.knowledge(),
            Role::Notes => ws.notes(),
            Role::Personal => ws.personal(),
            Role::Vaults => ws.vaults_dir(),
        }
    }

    /// The journal of an update of this repository's checkout in progress.
    fn journal(self, ws: &Workspace) -> PathBuf {
        ws.checkout_journal(self.name())
    }
}

/// What a sync should do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Fetch and say what would move; move no branch, push nothing.
    pub dry_run: bool,
    /// Push the loops' branches (`loop/*`) of notes and knowledge too.
    pub loops: bool,
    /// Notes files merged as the union of both sides' lines (`publish.union`).
    pub union: Vec<String>,
    /// The largest object taken from a remote (`import.max_object_size`): a fetched trunk
    /// that brings a larger one is refused before anything of it is inflated.
    pub max_object_size: u64,
    /// The largest pack a fetch may write (`import.max_pack_size`), see [`Bounds`].
    pub max_pack_size: u64,
}

impl Options {
    /// What one fetch from the remote may cost (`quarantine`).
    pub fn bounds(&self) -> Bounds {
        Bounds {
            max_object_size: self.max_object_size,
            max_pack_size: self.max_pack_size,
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            dry_run: false,
            loops: false,
            union: Vec::new(),
            max_object_size: crate::git::objects::Limits::DEFAULT_MAX_OBJECT_SIZE,
            max_pack_size: crate::git::objects::Limits::DEFAULT_MAX_PACK_SIZE,
        }
    }
}

/// How one repository's sync went, for the report and `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub repo: Role,
    pub path: PathBuf,
    /// The remote's URL; none when the repository has no remote.
    pub remote: Option<String>,
    pub trunk: String,
    pub state: State,
    /// The local trunk before and after.
    pub local: Move,
    /// The remote trunk before and after (after = before when nothing was pushed).
    pub remote_trunk: Move,
    /// `loop/*` branches pushed (with `--loops`).
    pub loops_pushed: Vec<String>,
    /// `loop/*` branches the remote refused (someone else's work under the same name).
    pub loops_refused: Vec<String>,
    /// What was repaired on the way (an interrupted update finished, a stale lock).
    pub notices: Vec<String>,
    /// How many rounds it took (more than one: someone else pushed meanwhile).
    pub rounds: u32,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Move {
    pub old: Option<String>,
    pub new: Option<String>,
}

impl Move {
    fn of(old: Option<ObjectId>, new: Option<ObjectId>) -> Move {
        Move {
            old: old.map(|o| o.to_string()),
            new: new.map(|o| o.to_string()),
        }
    }

    pub fn moved(&self) -> bool {
        self.old != self.new
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum State {
    /// No remote: nothing to do.
    NoRemote,
    /// Both trunks were the same.
    UpToDate,
    /// Done: the local trunk took the remote's work and/or the remote took the local's.
    Synced { pulled: Pulled, pushed: bool },
    /// `--dry-run`: what would happen.
    WouldSync { pulled: Pulled, push: bool },
    /// The remote could not be reached; nothing moved.
    Offline { reason: String },
    /// Both changed the same files differently; nothing moved.
    Conflict { paths: Vec<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pulled {
    Nothing,
    FastForward,
    Merge,
}

/// A sync that could not be done (as opposed to one that found the remote offline or a
/// conflict, which are outcomes the report says).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error("{role}: {source}")]
    Git {
        role: &'static str,
        #[source]
        source: GitError,
    },
    #[error("{role}: the remote's {trunk} kept moving while this sync ran ({rounds} rounds)")]
    Busy {
        role: &'static str,
        trunk: String,
        rounds: u32,
    },
    #[error("{role}: the remote refused the push: {why}")]
    Refused { role: &'static str, why: String },
    #[error("{role}: {message}")]
    Other { role: &'static str, message: String },
    /// The remote's trunk brings an object over `import.max_object_size`.
    #[error("{role}: the remote {} holds {} {} of {} bytes{}, over the limit of {limit} bytes (import.max_object_size); nothing was taken", shown(remote), found.kind, found.id, found.size, if found.path.is_empty() { String::new() } else { format!(" ({})", shown(&found.path)) })]
    TooLarge {
        role: &'static str,
        remote: String,
        found: crate::checkout::bound::Oversized,
        limit: u64,
    },
    /// A fetch stopped at its memory or disk bound (`quarantine`): nothing was taken.
    #[error("{role}: {}", quarantine::bounded_message(remote, exceeded, bounds))]
    Bounded {
        role: &'static str,
        remote: String,
        exceeded: Exceeded,
        bounds: Bounds,
    },
    /// A killed command's checkout update that cannot be finished or undone.
    #[error("{role}: an interrupted update of its checkout cannot be finished: {source}")]
    Interrupted {
        role: &'static str,
        source: Box<crate::checkout::CheckoutError>,
    },
}

/// The repositories of the workspace that exist (every one can be given a remote).
pub fn shared(ws: &Workspace) -> Vec<Role> {
    Role::ALL
        .into_iter()
        .filter(|r| {
            let dir = r.path(ws);
            // A link there is not one of the workspace's repositories: `sync_one` names it.
            std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_symlink())
                || std::fs::symlink_metadata(dir.join(".git"))
                    .is_ok_and(|m| m.is_dir() || m.is_symlink())
        })
        .collect()
}

/// The repository's folder and its `.git` must be folders of the workspace's, never links
/// (DESIGN 4.0: what git-loop keeps is not followed): git would run wherever a link led.
fn refuse_links(role: Role, dir: &Path) -> Result<(), SyncError> {
    for path in [dir.to_path_buf(), dir.join(".git")] {
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_symlink()) {
            return Err(SyncError::Other {
                role: role.name(),
                message: format!(
                    "{} is a link, where git-loop keeps a folder of its own; nothing was synced",
                    shown(&path.display().to_string())
                ),
            });
        }
    }
    Ok(())
}

/// Syncs one repository (see the module header). The caller holds the lock that guards
/// its trunk: the workspace lock for notes and knowledge, the autocommit lock for the
/// personal repository, the vaults' lock for the vaults.
pub fn sync_one(ws: &Workspace, role: Role, opts: &Options) -> Result<Report, SyncError> {
    let result = sync_rounds(ws, role, opts);
    if opts.dry_run {
        if let Some(trunk) = trunk_of(&role.path(ws)) {
            let _ = git(&role.path(ws))
                .args(["update-ref", "-d"])
                .arg(dry_run_ref(&trunk))
                .run();
        }
    }
    result
}

fn sync_rounds(ws: &Workspace, role: Role, opts: &Options) -> Result<Report, SyncError> {
    let dir = role.path(ws);
    refuse_links(role, &dir)?;
    let trunk = trunk_of(&dir).ok_or_else(|| SyncError::Other {
        role: role.name(),
        message: format!("{} has no branch checked out", dir.display()),
    })?;
    let mut report = Report {
        repo: role,
        path: dir.clone(),
        remote: remote_url(&dir),
        trunk: trunk.clone(),
        state: State::NoRemote,
        local: Move::default(),
        remote_trunk: Move::default(),
        loops_pushed: Vec::new(),
        loops_refused: Vec::new(),
        notices: Vec::new(),
        rounds: 0,
    };
    if report.remote.is_none() {
        return Ok(report);
    }
    if !opts.dry_run && role == Role::Personal {
        report.notices.extend(finish_personal(ws)?);
    }
    if role != Role::Personal {
        report
            .notices
            .extend(finish_checkout(ws, role, opts.dry_run)?);
    }
    let first_local = resolve(&dir, &format!("refs/heads/{trunk}")).map_err(read_err(role))?;
    let mut first_remote = None;
    for round in 1..=ROUNDS {
        report.rounds = round;
        let into = if opts.dry_run {
            dry_run_ref(&trunk)
        } else {
            tracking_ref(&trunk)
        };
        let remote = match quarantine::fetch(role, &dir, &trunk, &into, &opts.bounds()) {
            Ok(tip) => tip,
            Err(FetchFailure::Offline(reason)) => {
                report.state = State::Offline { reason };
                report.local = Move::of(first_local, first_local);
                return Ok(report);
            }
            Err(FetchFailure::Error(e)) => return Err(e),
        };
        crate::failpoint::hit("sync:fetched");
        if round == 1 {
            first_remote = remote;
        }
        let local = resolve(&dir, &format!("refs/heads/{trunk}")).map_err(read_err(role))?;
        let Some(local) = local else {
            return Err(SyncError::Other {
                role: role.name(),
                message: format!("{trunk} has no commit"),
            });
        };
        let (pulled, new) = match remote {
            None => (Pulled::Nothing, local),
            Some(remote) => match integrate(ws, role, &dir, &trunk, local, remote, opts) {
                Ok((pulled, new, notices)) => {
                    report.notices.extend(notices);
                    (pulled, new)
                }
                Err(Integrate::Conflict(paths)) => {
                    report.state = State::Conflict { paths };
                    report.local = Move::of(first_local, Some(local));
                    report.remote_trunk = Move::of(remote.into(), remote.into());
                    return Ok(report);
                }
                Err(Integrate::Failed(e)) => return Err(e),
            },
        };
        let must_push = remote != Some(new);
        report.local = Move::of(first_local, Some(new));
        if opts.dry_run {
            report.remote_trunk = Move::of(remote, if must_push { Some(new) } else { remote });
            report.state = if pulled == Pulled::Nothing && !must_push {
                State::UpToDate
            } else {
                State::WouldSync {
                    pulled,
                    push: must_push,
                }
            };
            return Ok(report);
        }
        if must_push {
            match push(role, &dir, &trunk, new, remote)? {
                Pushed::Done => {}
                Pushed::Stale => {
                    // Someone pushed since the fetch: what they pushed is fetched and
                    // merged in the next round. A pause, growing and jittered, lets two
                    // machines that keep colliding fall out of step.
                    std::thread::sleep(backoff(round));
                    continue;
                }
                Pushed::Offline(reason) => {
                    report.state = State::Offline { reason };
                    report.remote_trunk = Move::of(remote, remote);
                    return Ok(report);
                }
            }
        }
        report.remote_trunk = Move::of(first_remote, Some(new));
        report.state = if first_local == Some(new) && first_remote == Some(new) {
            State::UpToDate
        } else {
            State::Synced {
                pulled: if first_local == Some(new) {
                    Pulled::Nothing
                } else {
                    pulled
                },
                pushed: must_push,
            }
        };
        if opts.loops && matches!(role, Role::Notes | Role::Knowledge) {
            push_loops(role, &dir, &mut report)?;
        }
        return Ok(report);
    }
    Err(SyncError::Busy {
        role: role.name(),
        trunk,
        rounds: ROUNDS,
    })
}

fn backoff(round: u32) -> Duration {
    let base = 20u64 << round.min(6);
    let jitter = u64::from(std::process::id()).wrapping_mul(2654435761)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::from(d.subsec_nanos()))
            .unwrap_or(0);
    Duration::from_millis(base / 2 + jitter % base.max(1))
}

/// Pushes the loops' branches; one the remote refuses (someone else's work under the same
/// name, moved differently) is named, never forced.
fn push_loops(role: Role, dir: &Path, report: &mut Report) -> Result<(), SyncError> {
    let repo = objects::open_trusted(dir).map_err(read_err(role))?;
    let branches: Vec<String> = objects::branches(&repo)
        .map_err(read_err(role))?
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| n.starts_with("loop/"))
        .collect();
    if branches.is_empty() {
        return Ok(());
    }
    let mut git = git(dir).args(["push", "--porcelain", "--no-verify", REMOTE]);
    for b in &branches {
        git = git.arg(format!("refs/heads/{b}:refs/heads/{b}"));
    }
    let out = git.output_any().map_err(git_err(role))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(flag), Some(refs)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Some(name) = refs
            .split(':')
            .next()
            .and_then(|r| r.strip_prefix("refs/heads/"))
        else {
            continue;
        };
        match flag {
            "!" => report.loops_refused.push(name.to_string()),
            "=" => {}
            _ => report.loops_pushed.push(name.to_string()),
        }
    }
    if !out.status.success() && report.loops_refused.is_empty() {
        return Err(SyncError::Other {
            role: role.name(),
            message: format!(
                "pushing the loops' branches failed: {}",
                last_line(&String::from_utf8_lossy(&out.stderr))
            ),
        });
    }
    Ok(())
}

enum Integrate {
    Conflict(Vec<String>),
    Failed(SyncError),
}

/// Brings the remote's trunk into the local one: `(how, the new local tip, notices)`.
fn integrate(
    ws: &Workspace,
    role: Role,
    dir: &Path,
    trunk: &str,
    local: ObjectId,
    remote: ObjectId,
    opts: &Options,
) -> Result<(Pulled, ObjectId, Vec<String>), Integrate> {
    let failed = |e: SyncError| Integrate::Failed(e);
    if ancestor(dir, remote, local).map_err(|e| failed(read_err(role)(e)))? {
        return Ok((Pulled::Nothing, local, Vec::new()));
    }
    // Something is to be taken: what it brings is judged before anything inflates it.
    refuse_oversized(role, dir, remote, local, opts.max_object_size).map_err(failed)?;
    if role == Role::Personal {
        return personal::integrate(ws, dir, trunk, local, remote, opts.dry_run);
    }
    let source = format!("{REMOTE}/{trunk}");
    let merged = publish::merge(&MergeRequest {
        origin: dir,
        source_branch: &source,
        target_branch: trunk,
        message: format!("Merge {REMOTE}/{trunk} into {trunk} (git loop sync)"),
        squash: false,
        dry_run: opts.dry_run,
        journal: role.journal(ws),
        owner: Owner::Workspace,
        workspace: ws,
        union: if role == Role::Notes {
            opts.union.clone()
        } else {
            Vec::new()
        },
        gated: Some((remote, local)),
    });
    match merged {
        Ok(m) => {
            let (pulled, new) = match m.outcome {
                Outcome::UpToDate => (Pulled::Nothing, local),
                Outcome::FastForward { new, .. } => (Pulled::FastForward, new),
                Outcome::Merged { new, .. } => (Pulled::Merge, new),
            };
            Ok((pulled, new, m.notices))
        }
        Err(publish::MergeError::Conflict { paths, .. }) => Err(Integrate::Conflict(paths)),
        Err(e) => Err(failed(SyncError::Other {
            role: role.name(),
            message: crate::error::Error::failure("the merge failed")
                .with_source(e)
                .one_line(),
        })),
    }
}

/// Refuses a fetched branch that brings an object larger than `limit` (ATTACKS 43): each
/// object `remote` has and `local` (when there is one) lacks is judged by its header, before
/// any merge or checkout inflates it. The fetch judged what it brought already
/// (`quarantine`); this also judges what an earlier fetch took under a larger limit.
fn refuse_oversized(
    role: Role,
    dir: &Path,
    remote: ObjectId,
    local: impl Into<Option<ObjectId>>,
    limit: u64,
) -> Result<(), SyncError> {
    let repo = objects::open_trusted(dir).map_err(read_err(role))?;
    let hidden: Vec<ObjectId> = local.into().into_iter().collect();
    match crate::checkout::bound::oversized_since(&repo, remote, &hidden, limit) {
        Ok(None) => Ok(()),
        Ok(Some(found)) => Err(SyncError::TooLarge {
            role: role.name(),
            remote: remote_url(dir).unwrap_or_default(),
            found,
            limit,
        }),
        Err(e) => Err(read_err(role)(e)),
    }
}

/// What a killed command left in the checkout of notes, knowledge or the vaults, finished
/// or undone before the sync looks at its trunk, as publish and merge do (`crate::checkout`
/// and its journal): a fetch that brings nothing new must not say "up to date" of a
/// checkout that a killed sync left half-written. The git locks a killed command left in
/// notes and knowledge (judged by the workspace lock, which the caller holds) go first. A
/// dry run changes nothing: it says that an update is pending.
fn finish_checkout(ws: &Workspace, role: Role, dry_run: bool) -> Result<Vec<String>, SyncError> {
    let journal = role.journal(ws);
    if dry_run {
        return Ok(if journal.exists() {
            vec![format!(
                "{}: an interrupted update of its checkout is pending ({}); the next sync finishes it",
                role.name(),
                journal.display()
            )]
        } else {
            Vec::new()
        });
    }
    let mut notices = Vec::new();
    if matches!(role, Role::Notes | Role::Knowledge) {
        notices.extend(crate::gitlocks::remove_stale_in_workspace_repo(
            ws,
            &role.path(ws).join(".git"),
        ));
    }
    match crate::checkout::recover(&journal, &mut notices) {
        Ok(Some(done)) => notices.push(done.to_string()),
        Ok(None) => {}
        Err(e) => {
            return Err(SyncError::Interrupted {
                role: role.name(),
                source: Box::new(e),
            })
        }
    }
    Ok(notices)
}

/// Finishes an update of the personal checkout that a killed sync left (see
/// [`personal`]); what it did, to be said.
pub fn finish_personal(ws: &Workspace) -> Result<Vec<String>, SyncError> {
    personal::finish(ws)
}
