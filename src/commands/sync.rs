use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::sync::{self, Options, Role, State};
use crate::terminal::shown;
use crate::ui::Ui;
use crate::workspace::Workspace;

/// Share the workspace through git remotes: notes, knowledge, your personal repository
/// and your vaults.
///
/// For each of them that has a remote (`origin`, given by `git loop init --notes URL`,
/// `--knowledge`, `--personal`, `--vaults`): fetch its trunk, bring the local trunk up to
/// date (a fast-forward, or a merge commit when both moved and they merge cleanly), push
/// with the fetched trunk as the expected old value, and do it again if someone pushed
/// meanwhile. Both having changed the same lines changes nothing and says how to merge
/// by hand. The personal repository's uncommitted files are committed first, as
/// `autocommit` does. Vaults travel encrypted; the identity that opens them never does.
///
/// The review comments (`git loop comment`), on the notes repository's branch
/// git-loop/comments, are synced with the notes: both sides' comments, replies and
/// resolutions are kept.
///
/// Loops' branches (unpublished work) are pushed only with --loops.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// Fetch and say what would move; move no branch, push nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// Print JSON: one object per repository (repo, path, remote, trunk, state, local,
    /// remote_trunk, loops_pushed, loops_refused, notices, rounds).
    #[arg(long)]
    pub json: bool,
    /// Push the loops' branches of notes and knowledge too (`loop/*`).
    #[arg(long)]
    pub loops: bool,
}

pub fn run(ui: &mut Ui, args: SyncArgs) -> Result<u8> {
    let ws = super::workspace()?;
    // Before anything is fetched: what this machine accepted is pinned first.
    crate::vault::prepare(ui, &ws)?;
    let opts = Options {
        dry_run: args.dry_run,
        loops: args.loops,
        ..super::sync_options(ui, &ws)?
    };
    let mut reports = Vec::new();
    let mut failures: Vec<Error> = Vec::new();
    for role in sync::shared(&ws) {
        let spinner = (!args.json).then(|| ui.spinner(format!("{}: syncing", role.name())));
        let result = sync_locked(ui, &ws, role, &opts);
        if let Some(s) = spinner {
            s.finish_and_clear();
        }
        match result {
            Ok(report) => {
                if !args.json {
                    for notice in &report.notices {
                        ui.status(notice)?;
                    }
                    writeln!(ui.out(), "{}", sync::line(&report))?;
                }
                reports.push(report);
            }
            Err(e) => {
                if !args.json {
                    ui.warn(e.one_line())?;
                }
                failures.push(e);
            }
        }
    }
    if args.json {
        let value = serde_json::to_value(&reports)
            .map_err(|e| crate::Error::failure("cannot write JSON").with_source(e))?;
        super::print_json(ui, &value)?;
    }
    let offline: Vec<&sync::Report> = reports
        .iter()
        .filter(|r| matches!(r.state, State::Offline { .. }))
        .collect();
    let conflicts: Vec<&sync::Report> = reports
        .iter()
        .filter(|r| matches!(r.state, State::Conflict { .. }))
        .collect();
    if !args.json && !args.dry_run {
        summary(ui, &reports)?;
    }
    if let Some(r) = conflicts.first() {
        let mut err = Error::failure(format!(
            "{} cannot be synced: it and {}/{} changed the same lines",
            r.repo.name(),
            sync::REMOTE,
            shown(&r.trunk)
        ));
        for h in crate::cli::errors::conflict_hints(r) {
            err = err.hint(h);
        }
        return Err(err);
    }
    if let Some(e) = failures.into_iter().next() {
        return Err(e);
    }
    if !offline.is_empty() {
        let names: Vec<&str> = offline.iter().map(|r| r.repo.name()).collect();
        return Err(Error::failure(format!(
            "the remote of {} cannot be reached",
            names.join(", ")
        ))
        .hint("nothing was lost: what is local stays, and the next `git loop sync` pushes it"));
    }
    Ok(0)
}

/// Syncs one repository under the lock that guards its trunk (one lock at a time, so
/// no order between them can deadlock).
fn sync_locked(ui: &mut Ui, ws: &Workspace, role: Role, opts: &Options) -> Result<sync::Report> {
    let lock = match role {
        Role::Notes | Role::Knowledge => ws.workspace_lock(),
        // Only an autocommit commits there, under this lock.
        Role::Personal => ws.autocommit_lock(),
        Role::Vaults => ws.vaults_lock(),
    };
    let _lock = Lock::acquire(&lock)?;
    if role == Role::Vaults && !opts.dry_run {
        // Every git command there runs under the lock just taken: a lock file found there
        // now is a killed command's, and would fail the fetch.
        for line in crate::vault::recover::remove_stale_git_locks_under(ws, &_lock) {
            ui.status(line)?;
        }
    }
    if role == Role::Personal && !opts.dry_run && sync::remote_url(&role.path(ws)).is_some() {
        // What loops wrote there is committed first, checked as autocommit checks it: the
        // sync shares only commits.
        sync::finish_personal(ws)?;
        let config = super::load_config(ui, ws, None)?;
        let commit = crate::autocommit::Options {
            bounds: crate::autocommit::Bounds::of(config.settings()),
            dry_run: false,
        };
        crate::autocommit::commit_personal(ui, ws, &commit)?;
    }
    let mut report = sync::sync_one(ws, role, opts)?;
    if role == Role::Notes && !matches!(report.state, State::Offline { .. } | State::NoRemote) {
        // The review comments travel with the notes, on a branch of their own.
        let comments = sync::sync_comments(ws, opts)?;
        report.notices.extend(comments.line(opts.dry_run));
    }
    Ok(report)
}

/// One line: what moved, over all repositories.
fn summary(ui: &mut Ui, reports: &[sync::Report]) -> Result<()> {
    let mut pulled = 0;
    let mut pushed = 0;
    let mut loops = 0;
    for r in reports {
        if let State::Synced {
            pulled: p,
            pushed: q,
        } = &r.state
        {
            if *p != sync::Pulled::Nothing {
                pulled += 1;
            }
            if *q {
                pushed += 1;
            }
        }
        loops += r.loops_pushed.len();
    }
    let with_remote = reports
        .iter()
        .filter(|r| !matches!(r.state, State::NoRemote))
        .count();
    if with_remote == 0 {
        ui.status("nothing to sync: no repository of the workspace has a remote")?;
        ui.status("hint: git loop init --notes URL --knowledge URL --personal URL --vaults URL")?;
        return Ok(());
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut line = format!(
        "synced {with_remote} repositor{}: {pulled} took work from the remote, {pushed} pushed",
        if with_remote == 1 { "y" } else { "ies" }
    );
    if loops > 0 {
        line.push_str(&format!(
            ", {loops} loop branch{} pushed",
            plural(loops).replace('s', "es")
        ));
    }
    ui.status(line)?;
    Ok(())
}
