//! What a loop's branches say: its state, its unfinished work, the survey of every loop.

use super::*;

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
    /// The commits ahead are in the target by content (a squash or rebase merge made
    /// elsewhere, see [`super::landed`]).
    pub landed: Option<super::landed::Landed>,
}

impl BranchStatus {
    /// Work on this branch that its target does not have.
    pub fn pending(&self) -> bool {
        self.ahead > 0 && self.landed.is_none()
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

pub(super) fn branch_status(
    pair: &RepoPair,
    branch: &str,
    against: Option<String>,
    start: Option<String>,
    origins: &mut Origins,
) -> Result<BranchStatus> {
    let err = |e: objects::GitReadError| Error::from(ReadError::Origin(pair.origin.clone(), e));
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
    // Commits ahead that the target gained by content (a forge's squash or rebase
    // merge): only a code branch, only with the target moved since.
    let landed = match (pair.role, tip, target) {
        ("code", Some(t), Some(b)) if ahead > 0 && behind > 0 => {
            super::landed::landed(&pair.origin, repo, start, t, b, behind)
        }
        _ => None,
    };
    Ok(BranchStatus {
        role: pair.role,
        tip: tip.map(|t| t.to_string()),
        against,
        ahead,
        behind,
        has_commits: tip.is_some() && tip != start,
        landed,
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
        .map_err(|source| ReadError::Branches {
            path: pair.clone.clone(),
            id: rec.id.clone(),
            source,
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
            found.push(format!(
                "{}: uncommitted changes ({})",
                pair.role,
                abbreviated(&changes)
            ));
        }
    }
    Ok(found)
}

/// How many paths a line names before it says how many more there are.
pub const PATHS_SHOWN: usize = 5;

/// `paths` for one line of text: the first [`PATHS_SHOWN`], then how many more (a loop may
/// hold a hundred thousand; `--json` lists them all).
pub fn abbreviated(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(PATHS_SHOWN).map(String::as_str).collect();
    let more = match paths.len().saturating_sub(PATHS_SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("{}{more}", shown.join(", "))
}

/// What removing loop `rec` would lose, each as a line: its uncommitted and unimported work
/// always; with `delete_branches` also the commits of each of its branches that are in
/// neither the branch's target nor a remote's copy of it (`pr` and `sync --loops` push
/// them). Kept branches lose nothing.
pub fn lost_by_removal(
    ws: &Workspace,
    rec: &LoopRecord,
    status: &LoopStatus,
    delete_branches: bool,
) -> Result<Vec<String>> {
    let mut lost = Vec::new();
    if delete_branches {
        for (pair, b) in repo_pairs(ws, rec)
            .iter()
            .filter_map(|pair| status.branch(pair.role).map(|b| (pair, b)))
        {
            if !b.pending() || on_a_remote(&pair.origin, b.tip.as_deref()) {
                continue;
            }
            lost.push(format!(
                "{}: {} commit{} on {} that {} in neither {} nor a remote, which --delete-branches deletes",
                b.role,
                b.ahead,
                if b.ahead == 1 { "" } else { "s" },
                rec.branch,
                if b.ahead == 1 { "is" } else { "are" },
                b.against.as_deref().unwrap_or("its base")
            ));
        }
    }
    lost.extend(local_only_work(ws, rec)?);
    Ok(lost)
}

/// What stays of loop `rec` after its removal without `--delete-branches`: each branch with
/// commits its target lacks, as a line.
pub fn kept_by_removal(ws: &Workspace, rec: &LoopRecord, status: &LoopStatus) -> Vec<String> {
    status
        .branches
        .iter()
        .filter(|b| b.pending())
        .map(|b| {
            let origin = repo_pairs(ws, rec)
                .into_iter()
                .find(|p| p.role == b.role)
                .map(|p| {
                    std::fs::canonicalize(&p.origin)
                        .unwrap_or(p.origin)
                        .display()
                        .to_string()
                })
                .unwrap_or_default();
            format!(
                "kept {} in {origin}, with {} commit{} not in {}",
                rec.branch,
                b.ahead,
                if b.ahead == 1 { "" } else { "s" },
                b.against.as_deref().unwrap_or("its base")
            )
        })
        .collect()
}

/// Whether `tip` is in a remote-tracking branch of `origin` (a repository the user trusts,
/// read through gix): pushed, it outlives the local branch.
fn on_a_remote(origin: &std::path::Path, tip: Option<&str>) -> bool {
    let Some(tip) = tip.and_then(|t| gix::ObjectId::from_hex(t.as_bytes()).ok()) else {
        return false;
    };
    let Ok(repo) = objects::open_trusted(origin) else {
        return false;
    };
    let Ok(refs) = repo.references() else {
        return false;
    };
    let Ok(remotes) = refs.prefixed("refs/remotes/") else {
        return false;
    };
    remotes.flatten().any(|mut r| {
        r.peel_to_id()
            .is_ok_and(|id| objects::is_ancestor(&repo, tip, id.detach()).unwrap_or(false))
    })
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

pub(super) fn survey_one(
    ws: &Workspace,
    id: String,
    origins: &mut Origins,
    disk: bool,
) -> Surveyed {
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
