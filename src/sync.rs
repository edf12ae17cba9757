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

use std::path::{Path, PathBuf};
use std::time::Duration;

use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::git::cmd::{Git, GitError};
use crate::git::objects;
use crate::publish::{self, MergeRequest, Outcome, Owner};
use crate::sandbox::task;
use crate::terminal::shown;
use crate::workspace::Workspace;

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
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Fetch and say what would move; move no branch, push nothing.
    pub dry_run: bool,
    /// Push the loops' branches (`loop/*`) of notes and knowledge too.
    pub loops: bool,
    /// Notes files merged as the union of both sides' lines (`publish.union`).
    pub union: Vec<String>,
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
}

/// The repositories of the workspace that exist (every one can be given a remote).
pub fn shared(ws: &Workspace) -> Vec<Role> {
    Role::ALL
        .into_iter()
        .filter(|r| r.path(ws).join(".git").is_dir())
        .collect()
}

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
fn git(dir: &Path) -> Git {
    // Run inside `.git`: git then finds the repository there and sets no working tree.
    let mut git = Git::in_dir(&dir.join(".git")).env("LC_ALL", "C");
    for setting in [
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "submodule.recurse=false",
        "fetch.recurseSubmodules=false",
        "fetch.writeCommitGraph=false",
        "gc.auto=0",
        "maintenance.auto=false",
    ] {
        git = git.arg("-c").arg(setting);
    }
    git
}

fn git_err(role: Role) -> impl Fn(GitError) -> SyncError {
    move |source| SyncError::Git {
        role: role.name(),
        source,
    }
}

fn tracking_ref(trunk: &str) -> String {
    format!("refs/remotes/{REMOTE}/{trunk}")
}

/// The trunk of a shared repository: the branch its checkout has.
pub fn trunk_of(dir: &Path) -> Option<String> {
    let repo = objects::open_trusted(dir).ok()?;
    objects::head_branch(&repo).ok().flatten()
}

fn resolve(dir: &Path, spec: &str) -> Result<Option<ObjectId>, objects::GitReadError> {
    let repo = objects::open_trusted(dir)?;
    objects::resolve_rev(&repo, spec)
}

fn ancestor(dir: &Path, a: ObjectId, b: ObjectId) -> Result<bool, objects::GitReadError> {
    let repo = objects::open_trusted(dir)?;
    objects::is_ancestor(&repo, a, b)
}

fn read_err(role: Role) -> impl Fn(objects::GitReadError) -> SyncError {
    move |e| SyncError::Other {
        role: role.name(),
        message: e.to_string(),
    }
}

/// Fetches the remote's trunk into `refs/remotes/origin/<trunk>`: its tip, or `None`
/// when the remote has no such branch yet (an empty remote). `Err(Ok(reason))`: the
/// remote cannot be reached.
fn fetch(role: Role, dir: &Path, trunk: &str) -> Result<Option<ObjectId>, FetchFailure> {
    let out = git(dir)
        .args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--prune",
            "--no-write-fetch-head",
        ])
        .arg(REMOTE)
        .arg(format!("+refs/heads/{trunk}:{}", tracking_ref(trunk)))
        .output_any()
        .map_err(|e| FetchFailure::Error(git_err(role)(e)))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("couldn't find remote ref") {
            // An empty remote, or one without this trunk: the push makes it.
            let _ = git(dir)
                .args(["update-ref", "-d"])
                .arg(tracking_ref(trunk))
                .run();
            return Ok(None);
        }
        return Err(FetchFailure::Offline(last_line(&stderr)));
    }
    resolve(dir, &tracking_ref(trunk)).map_err(|e| FetchFailure::Error(read_err(role)(e)))
}

enum FetchFailure {
    Offline(String),
    Error(SyncError),
}

fn last_line(text: &str) -> String {
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
enum Pushed {
    Done,
    /// The remote's trunk is no longer what was fetched: someone else pushed.
    Stale,
    Offline(String),
}

/// Pushes `new` to the remote's trunk, only if the remote's trunk is still `expected`.
fn push(
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

/// Syncs one repository (see the module header). The caller holds the lock that guards
/// its trunk: the workspace lock for notes and knowledge, the autocommit lock for the
/// personal repository, the vaults' lock for the vaults.
pub fn sync_one(ws: &Workspace, role: Role, opts: &Options) -> Result<Report, SyncError> {
    let dir = role.path(ws);
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
    let first_local = resolve(&dir, &format!("refs/heads/{trunk}")).map_err(read_err(role))?;
    let mut first_remote = None;
    for round in 1..=ROUNDS {
        report.rounds = round;
        let remote = match fetch(role, &dir, &trunk) {
            Ok(tip) => tip,
            Err(FetchFailure::Offline(reason)) => {
                report.state = State::Offline { reason };
                report.local = Move::of(first_local, first_local);
                return Ok(report);
            }
            Err(FetchFailure::Error(e)) => return Err(e),
        };
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

/// Finishes an update of the personal checkout that a killed sync left (see
/// [`personal`]); what it did, to be said.
pub fn finish_personal(ws: &Workspace) -> Result<Vec<String>, SyncError> {
    personal::finish(ws)
}

/// The personal repository: the merge and the checkout in a jail that sees only its tree.
///
/// The checkout is updated first and the branch moved after, each step idempotent, with a
/// journal (`locks/sync-personal.journal`: the old and new commits) written before and
/// removed after. Killed in between, the index and files already are the new commit's
/// while the branch is still at the old one: the next sync or autocommit (both hold the
/// autocommit lock) runs both steps again before anything else, so no commit made there
/// can revert what was merged.
mod personal {
    use super::*;

    const JOURNAL: &str = "sync-personal.journal";

    fn journal(ws: &Workspace) -> PathBuf {
        ws.locks_dir().join(JOURNAL)
    }

    fn in_jail(ws: &Workspace, args: &[&str]) -> Result<task::Output, SyncError> {
        let dir = ws.personal();
        task::jail(&task::Jail {
            tree: dir,
            inside: task::inside("personal"),
            command: task::git_argv(args),
            env: task::git_env(("git loop", "git-loop@localhost")),
            bound: task::Bound::DEFAULT,
        })
        .map_err(|e| SyncError::Other {
            role: "personal",
            message: e.one_line(),
        })
    }

    fn step(ws: &Workspace, args: &[&str]) -> Result<String, SyncError> {
        let out = in_jail(ws, args)?;
        if !out.success() {
            return Err(SyncError::Other {
                role: "personal",
                message: format!(
                    "`git {}` failed: {}",
                    args.join(" "),
                    last_line(&out.stderr_text())
                ),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The two idempotent steps: the checkout from `old` to `new`, then the branch.
    fn apply(ws: &Workspace, trunk: &str, old: ObjectId, new: ObjectId) -> Result<(), SyncError> {
        let (o, n) = (old.to_string(), new.to_string());
        step(ws, &["read-tree", "-m", "-u", &o, &n])?;
        crate::failpoint::hit("sync:personal-checkout");
        step(
            ws,
            &[
                "update-ref",
                "-m",
                "git loop sync",
                &format!("refs/heads/{trunk}"),
                &n,
                &o,
            ],
        )?;
        Ok(())
    }

    pub fn finish(ws: &Workspace) -> Result<Vec<String>, SyncError> {
        let path = journal(ws);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(Vec::new());
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [trunk, old, new] => ObjectId::from_hex(old.as_bytes())
                .ok()
                .zip(ObjectId::from_hex(new.as_bytes()).ok())
                .map(|(o, n)| (trunk.to_string(), o, n)),
            _ => None,
        };
        let Some((trunk, old, new)) = parsed else {
            let _ = std::fs::remove_file(&path);
            return Ok(vec![format!(
                "personal: removed an unreadable journal {}",
                path.display()
            )]);
        };
        let dir = ws.personal();
        let head =
            resolve(&dir, &format!("refs/heads/{trunk}")).map_err(read_err(Role::Personal))?;
        let note = if head == Some(new) {
            // Both steps were done; only the journal was left.
            None
        } else if head == Some(old) {
            apply(ws, &trunk, old, new)?;
            Some(format!(
                "personal: finished an interrupted sync ({trunk} moved to {})",
                &new.to_string()[..12]
            ))
        } else {
            return Err(SyncError::Other {
                role: "personal",
                message: format!(
                    "an interrupted sync left {} but {trunk} is neither where it was nor where it was going",
                    path.display()
                ),
            });
        };
        let _ = std::fs::remove_file(&path);
        Ok(note.into_iter().collect())
    }

    pub fn integrate(
        ws: &Workspace,
        dir: &Path,
        trunk: &str,
        local: ObjectId,
        remote: ObjectId,
        dry_run: bool,
    ) -> Result<(Pulled, ObjectId, Vec<String>), Integrate> {
        let failed = Integrate::Failed;
        let ff = ancestor(dir, local, remote).map_err(|e| failed(read_err(Role::Personal)(e)))?;
        let (pulled, new) = if ff {
            (Pulled::FastForward, remote)
        } else {
            let (l, r) = (local.to_string(), remote.to_string());
            let out = in_jail(
                ws,
                &[
                    "merge-tree",
                    "--write-tree",
                    "--name-only",
                    "--no-messages",
                    &l,
                    &r,
                ],
            )
            .map_err(failed)?;
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let mut lines = text.lines();
            let tree = lines.next().unwrap_or_default().trim().to_string();
            match out.code {
                Some(0) => {}
                Some(1) => {
                    return Err(Integrate::Conflict(
                        lines
                            .filter(|l| !l.is_empty())
                            .map(str::to_string)
                            .collect(),
                    ))
                }
                _ => {
                    return Err(failed(SyncError::Other {
                        role: "personal",
                        message: format!("the merge failed: {}", last_line(&out.stderr_text())),
                    }))
                }
            }
            let message = format!("Merge {REMOTE}/{trunk} into {trunk} (git loop sync)");
            let commit = step(
                ws,
                &["commit-tree", &tree, "-p", &l, "-p", &r, "-m", &message],
            )
            .map_err(failed)?;
            let new = ObjectId::from_hex(commit.trim().as_bytes()).map_err(|_| {
                failed(SyncError::Other {
                    role: "personal",
                    message: format!("unexpected output of commit-tree: {commit:?}"),
                })
            })?;
            (Pulled::Merge, new)
        };
        if dry_run {
            return Ok((pulled, new, Vec::new()));
        }
        // Refuses before anything moves when files here would be overwritten.
        let (o, n) = (local.to_string(), new.to_string());
        let check = in_jail(ws, &["read-tree", "-m", "-u", "-n", &o, &n]).map_err(failed)?;
        if !check.success() {
            return Err(failed(SyncError::Other {
                role: "personal",
                message: format!(
                    "files of the personal repository that are not committed would be overwritten: {}",
                    last_line(&check.stderr_text())
                ),
            }));
        }
        let path = journal(ws);
        crate::fsutil::write_atomic(&path, format!("{trunk} {local} {new}\n").as_bytes()).map_err(
            |e| {
                failed(SyncError::Other {
                    role: "personal",
                    message: format!("cannot write {}: {}", path.display(), e.one_line()),
                })
            },
        )?;
        apply(ws, trunk, local, new).map_err(failed)?;
        let _ = std::fs::remove_file(&path);
        Ok((pulled, new, Vec::new()))
    }
}

/// The one-line progress for a report, as `sync` prints it.
pub fn line(r: &Report) -> String {
    let name = r.repo.name();
    let short = |m: &Option<String>| {
        m.as_deref()
            .map(|s| s[..12.min(s.len())].to_string())
            .unwrap_or_else(|| "nothing".into())
    };
    match &r.state {
        State::NoRemote => format!("{name}: no remote (give it one: git loop init --{name} URL)"),
        State::UpToDate => format!("{name}: up to date with {REMOTE}/{}", r.trunk),
        State::Synced { pulled, pushed } => {
            let mut parts = Vec::new();
            match pulled {
                Pulled::Nothing => {}
                Pulled::FastForward => parts.push(format!(
                    "{} fast-forwarded {}..{}",
                    r.trunk,
                    short(&r.local.old),
                    short(&r.local.new)
                )),
                Pulled::Merge => parts.push(format!(
                    "{} merged with {REMOTE}/{} ({}..{})",
                    r.trunk,
                    r.trunk,
                    short(&r.local.old),
                    short(&r.local.new)
                )),
            }
            if *pushed {
                parts.push(format!(
                    "pushed to {REMOTE}/{} ({}..{})",
                    r.trunk,
                    short(&r.remote_trunk.old),
                    short(&r.remote_trunk.new)
                ));
            }
            if parts.is_empty() {
                parts.push(format!("up to date with {REMOTE}/{}", r.trunk));
            }
            format!("{name}: {}", parts.join(", "))
        }
        State::WouldSync { pulled, push } => {
            let mut parts = Vec::new();
            match pulled {
                Pulled::Nothing => {}
                Pulled::FastForward => parts.push(format!("{} would be fast-forwarded", r.trunk)),
                Pulled::Merge => parts.push(format!(
                    "{} would be merged with {REMOTE}/{}",
                    r.trunk, r.trunk
                )),
            }
            if *push {
                parts.push(format!("{REMOTE}/{} would be pushed", r.trunk));
            }
            format!("{name}: {}", parts.join(", "))
        }
        State::Offline { reason } => {
            format!("{name}: {REMOTE} cannot be reached ({reason}); nothing moved")
        }
        State::Conflict { paths } => format!(
            "{name}: {} and {REMOTE}/{} changed the same lines of {}; nothing moved",
            r.trunk,
            r.trunk,
            paths
                .iter()
                .map(|p| shown(p).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The user-facing error for a sync that could not be done.
pub fn to_error(e: SyncError) -> Error {
    let hint = match &e {
        SyncError::Busy { .. } => "nothing was lost; run `git loop sync` again in a moment",
        SyncError::Refused { .. } => {
            "the remote's rules refuse this push; ask its owner, or keep working locally"
        }
        _ => "`git loop doctor` checks the workspace",
    };
    Error::failure(e.to_string()).hint(hint)
}

/// How to resolve a conflict `sync` refused: by hand, in the repository, with git.
pub fn conflict_hints(r: &Report) -> Vec<String> {
    let dir = r.path.display();
    vec![
        "nothing was changed; merge by hand, then sync again:".to_string(),
        format!(
            "cd {dir} && git merge {REMOTE}/{}   (fix the files, `git add` them, `git commit`)",
            r.trunk
        ),
        "git loop sync".to_string(),
    ]
}
