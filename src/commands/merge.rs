use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::gate;
use crate::git::cmd::Git;
use crate::loops::{self, Kind};
use crate::publish::{self, MergeRequest};
use crate::ui::Ui;

/// Merge a code loop's branch into the repository's base branch (or --into).
///
/// The same rules as publish: a fast-forward or a merge commit made without a checkout,
/// the branch moved by compare-and-swap, and a refusal (changing nothing) when the branch
/// is checked out with local changes the merge would overwrite.
///
/// First, every commit the branch carries is checked (what `git loop review ID` lists
/// before the diff): a secret, a gitlink or a nested .git is refused; a change under
/// .loopat/ or a symlink is refused unless named with --accept-policy. A refusal says what
/// is at stake and changes nothing.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// The branch to merge into (default: the branch the loop started from).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// One commit with the loop's changes instead of a merge (the original commits stay
    /// reachable from refs/git-loop/backup/<id>).
    #[arg(long)]
    pub squash: bool,
    /// Say what would happen, change nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// The commit message.
    #[arg(long, short = 'm', value_name = "M")]
    pub message: Option<String>,
    /// Let this change to policy land: a path under .loopat/ or a symlink that the branch
    /// adds or changes, or a folder above them (repeatable). `git loop review ID` lists
    /// them; without this, merge refuses a branch that carries any.
    #[arg(long = "accept-policy", value_name = "PATH")]
    pub accept_policy: Vec<String>,
}

pub fn run(ui: &mut Ui, args: MergeArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let (Kind::Code, Some(repo)) = (rec.kind, rec.repo.as_ref()) else {
        return Err(Error::usage(format!("loop {id} has no code to merge"))
            .hint("`git loop publish` publishes its notes"));
    };
    loops::check_repo(&ws, &rec)?;
    let target = match args.into.clone().or_else(|| rec.base_branch.clone()) {
        Some(t) => t,
        None => {
            return Err(Error::usage(format!(
                "loop {id} started from a detached commit; which branch should it merge into?"
            ))
            .hint(format!("git loop merge {id} --into BRANCH")))
        }
    };
    let origin = ws.repo_link(repo);
    let allow = super::operator_guard_allowlist()?;
    // What the loop wrote is read before the workspace lock is taken.
    loops::import(&ws, &rec)?;
    crate::failpoint::hit("merge:imported");
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    let insp = gate::inspect(&origin, &rec.branch, &target, &allow).map_err(|e| {
        Error::failure(format!("cannot check what loop {id} would merge"))
            .with_source(e)
            .hint(format!("is {} a branch of {}?", target, origin.display()))
    })?;
    let reports = [("code", &insp.report)];
    let mut retry = format!("git loop merge {id}");
    if let Some(into) = &args.into {
        retry.push_str(&format!(" --into {into}"));
    }
    if args.squash {
        retry.push_str(" --squash");
    }
    if let Some(e) = gate::refusal(ui, "merge", &id, &reports, &args.accept_policy, &retry)? {
        return Err(e);
    }
    super::warn_unused_acceptance(ui, &reports, &args.accept_policy)?;
    if args.squash && !args.dry_run {
        // The loop's own commits stay reachable whatever happens to its branch later.
        Git::in_dir(&origin)
            .args([
                "update-ref",
                &format!("refs/git-loop/backup/{id}"),
                &insp.source.to_string(),
            ])
            .run()?;
    }
    let message = args.message.unwrap_or_else(|| {
        if args.squash {
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
        squash: args.squash,
        dry_run: args.dry_run,
        journal: ws.checkout_journal(&format!("code-{repo}")),
        owner: publish::Owner::User,
        workspace: &ws,
        union: Vec::new(),
        gated: Some((insp.source, insp.target)),
    })
    .map_err(|source| publish::MergeFailed {
        id: id.clone(),
        what: "merge",
        source,
    })?;
    for notice in &merged.notices {
        ui.status(notice)?;
    }
    if args.squash && !args.dry_run && merged.outcome != publish::Outcome::UpToDate {
        // What git cannot tell of a squash (the loop's commits are not in the target),
        // recorded where git keeps such facts: `rm` and `gc` take the loop as merged up
        // to this commit.
        Git::in_dir(&origin)
            .args([
                "update-ref",
                &crate::loops::squashed_ref(&id),
                &insp.source.to_string(),
            ])
            .run()?;
    }
    writeln!(
        ui.out(),
        "{}",
        crate::publish::gated::outcome_line("code", &target, &merged.outcome, args.dry_run)
    )?;
    if !args.squash && matches!(merged.outcome, publish::Outcome::Merged { .. }) {
        // Not a fast-forward: the target moved since the loop began.
        ui.status(format!(
            "{target} had moved since loop {id} began, so this is a merge commit; `git loop rebase {id}` before merging makes it a fast-forward"
        ))?;
    }
    Ok(0)
}
