//! Merging a code loop's branch into a branch of its repository (`merge`, and `pick` for
//! a fan-out's chosen loop): the gate first, then the merge of exactly the commit it
//! judged, with the loop's commits kept reachable for a squash.

use crate::error::Result;
use crate::fsutil::Lock;
use crate::gate;
use crate::git::cmd::Git;
use crate::loops::{self, Kind, LoopRecord};
use crate::publish::{self, MergeRequest, Outcome};
use crate::report::Report;
use crate::workspace::Workspace;

/// What a merge of a loop is asked to do.
#[derive(Debug, Clone, Default)]
pub struct MergeLoop {
    pub into: Option<String>,
    pub squash: bool,
    pub dry_run: bool,
    pub message: Option<String>,
    pub accept_policy: Vec<String>,
    /// The command line that does this again, for the gate's hints.
    pub retry: String,
}

/// Why a loop cannot be merged before anything is looked at.
#[derive(Debug, thiserror::Error)]
pub enum MergeLoopError {
    #[error("loop {0} has no code to merge")]
    NoCode(String),
    #[error("loop {0} started from a detached commit; which branch should it merge into?")]
    NoTarget(String),
    #[error("cannot check what loop {id} would merge")]
    Unchecked {
        id: String,
        target: String,
        origin: std::path::PathBuf,
        #[source]
        source: gate::GateError,
    },
}

/// Merges loop `rec`'s code branch into its base branch (or `into`): the branch imported,
/// every commit it carries checked by the gate (a refusal changes nothing), then the
/// merge of exactly what was checked. Notices go to `report`; the outcome and the target
/// are returned.
pub fn merge_loop(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    req: &MergeLoop,
    allow: &crate::guard::Allowlist,
) -> Result<(Outcome, String)> {
    let id = &rec.id;
    let (Kind::Code, Some(repo)) = (rec.kind, rec.repo.as_ref()) else {
        return Err(MergeLoopError::NoCode(id.clone()).into());
    };
    loops::check_repo(ws, rec)?;
    let target = match req.into.clone().or_else(|| rec.base_branch.clone()) {
        Some(t) => t,
        None => return Err(MergeLoopError::NoTarget(id.clone()).into()),
    };
    let origin = ws.repo_link(repo);
    // What the loop wrote is read before the workspace lock is taken.
    loops::import(ws, rec)?;
    crate::failpoint::hit("merge:imported");
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    let insp = gate::inspect(&origin, &rec.branch, &target, allow).map_err(|source| {
        MergeLoopError::Unchecked {
            id: id.clone(),
            target: target.clone(),
            origin: origin.clone(),
            source,
        }
    })?;
    let reports = [("code", &insp.report)];
    if let Some(e) = gate::refusal(
        report,
        "merge",
        id,
        &reports,
        &req.accept_policy,
        &req.retry,
    )? {
        return Err(e);
    }
    for a in gate::unused_acceptances(&reports, &req.accept_policy) {
        report.warn(&format!(
            "--accept-policy {a}: the branch carries no change to policy there"
        ))?;
    }
    if req.squash && !req.dry_run {
        // The loop's own commits stay reachable whatever happens to its branch later.
        Git::in_dir(&origin)
            .args([
                "update-ref",
                &format!("refs/git-loop/backup/{id}"),
                &insp.source.to_string(),
            ])
            .run()?;
    }
    let message = req.message.clone().unwrap_or_else(|| {
        if req.squash {
            format!("{} (loop {id}, squashed)", rec.title)
        } else {
            format!("Merge loop {id}: {}", rec.title)
        }
    });
    let merged = publish::merge(&MergeRequest {
        origin: &origin,
        source_branch: &rec.branch,
        target_branch: &target,
        message,
        squash: req.squash,
        dry_run: req.dry_run,
        journal: ws.checkout_journal(&format!("code-{repo}")),
        owner: publish::Owner::User,
        workspace: ws,
        union: Vec::new(),
        gated: Some((insp.source, insp.target)),
    })
    .map_err(|source| publish::MergeFailed {
        id: id.clone(),
        what: "merge",
        source,
    })?;
    for notice in &merged.notices {
        report.status(notice)?;
    }
    if req.squash && !req.dry_run && merged.outcome != Outcome::UpToDate {
        // What git cannot tell of a squash (the loop's commits are not in the target),
        // recorded where git keeps such facts: `rm` and `gc` take the loop as merged up
        // to this commit.
        Git::in_dir(&origin)
            .args([
                "update-ref",
                &crate::loops::squashed_ref(id),
                &insp.source.to_string(),
            ])
            .run()?;
    }
    Ok((merged.outcome, target))
}
