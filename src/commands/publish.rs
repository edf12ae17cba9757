use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::gate;
use crate::loops::{self, Kind};
use crate::publish::gated;
use crate::sync;
use crate::terminal::shown;
use crate::ui::Ui;

/// Publish a loop's notes (and, for a distill loop, its knowledge) into trunk.
///
/// A fast-forward when possible, otherwise a merge commit made without checking trunk
/// out. Trunk moves only by compare-and-swap. A conflict changes nothing and says how
/// to resolve it. The origins' checkouts of trunk are brought up to date.
///
/// When the repository has a remote, the publish lands on the remote's trunk too: fetch,
/// merge, push with the remote's trunk as the expected old value, a lost race retried.
/// With the remote unreachable the publish stays here and the next `git loop sync` pushes
/// it; --local keeps it here.
///
/// First, every commit the branch carries is checked (what `git loop review ID` lists
/// before the diff): a secret, a gitlink or a nested .git is refused; a change under
/// .loopat/ or a symlink is refused unless named with --accept-policy. A refusal says what
/// is at stake and changes nothing.
#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Publish the notes branch (the default).
    #[arg(long)]
    pub notes: bool,
    /// Publish the knowledge branch of a distill loop.
    #[arg(long)]
    pub knowledge: bool,
    /// Say what would happen, change nothing.
    #[arg(long, short = 'n')]
    pub dry_run: bool,
    /// The merge commit's message.
    #[arg(long, short = 'm', value_name = "M")]
    pub message: Option<String>,
    /// Let this change to policy land: a path under .loopat/ or a symlink that the branch
    /// adds or changes, or a folder above them (repeatable). `git loop review ID` lists
    /// them; without this, publish refuses a branch that carries any.
    #[arg(long = "accept-policy", value_name = "PATH")]
    pub accept_policy: Vec<String>,
    /// Keep the publish on this machine: do not push to the repository's remote (the next
    /// `git loop sync` does).
    #[arg(long)]
    pub local: bool,
}

pub fn run(ui: &mut Ui, args: PublishArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    if args.knowledge && rec.kind != Kind::Distill {
        return Err(Error::usage(format!(
            "loop {id} is not a distill loop; it has no knowledge branch"
        ))
        .hint("`git loop distill` makes a loop that writes knowledge"));
    }
    let mut roles = Vec::new();
    if args.notes || !args.knowledge {
        roles.push(("notes", ws.notes()));
    }
    if args.knowledge {
        roles.push(("knowledge", ws.knowledge()));
    }
    let allow = super::operator_guard_allowlist()?;
    // What the loop wrote is read before the workspace lock is taken, so a loop that makes
    // reading slow holds up no one else's publish.
    loops::import(&ws, &rec)?;
    crate::failpoint::hit("publish:imported");
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    // Every branch is judged before any of them lands: a refusal changes nothing.
    let mut gated = Vec::new();
    for (role, origin) in &roles {
        gated.push((*role, origin, gated::gate_one(origin, &rec, &allow)?));
    }
    let reports: Vec<(&str, &gate::Report)> = gated
        .iter()
        .map(|(role, _, (_, insp))| (*role, &insp.report))
        .collect();
    let retry = format!(
        "git loop publish {id}{}{}",
        if args.notes && args.knowledge {
            " --notes"
        } else {
            ""
        },
        if args.knowledge { " --knowledge" } else { "" }
    );
    if let Some(e) = gate::refusal(ui, "publish", &id, &reports, &args.accept_policy, &retry)? {
        return Err(e);
    }
    super::warn_unused_acceptance(ui, &reports, &args.accept_policy)?;
    let sync_opts = super::sync_options(ui, &ws)?;
    let union = sync_opts.union.clone();
    for (role, origin, (trunk, insp)) in &gated {
        let merged = gated::merge_gated(
            &ws,
            origin,
            &rec,
            role,
            trunk,
            insp,
            &union,
            args.message.clone(),
            args.dry_run,
        )?;
        for notice in &merged.notices {
            ui.status(notice)?;
        }
        writeln!(
            ui.out(),
            "{}",
            gated::outcome_line(role, trunk, &merged.outcome, args.dry_run)
        )?;
        if !args.dry_run && !args.local {
            to_remote(ui, &ws, role, &sync_opts)?;
        }
    }
    Ok(0)
}

/// Brings a publish to the remote's trunk, when the repository has a remote: fetch,
/// merge, push with the remote's trunk as the expected old value, a lost race retried
/// (the sync engine). The caller holds the workspace lock. Unreachable: the publish stays
/// local and the next `git loop sync` pushes it. A conflict with the remote's trunk: the
/// local publish stands, nothing else moved, and the error says how to resolve it.
fn to_remote(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    role: &str,
    opts: &sync::Options,
) -> Result<()> {
    let role = match role {
        "knowledge" => sync::Role::Knowledge,
        _ => sync::Role::Notes,
    };
    if sync::remote_url(&role.path(ws)).is_none() {
        return Ok(());
    }
    let report = sync::sync_one(ws, role, opts)?;
    for notice in &report.notices {
        ui.status(notice)?;
    }
    match &report.state {
        sync::State::Offline { reason } => ui.status(format!(
            "{}: {} cannot be reached ({}); published here, the next `git loop sync` pushes it",
            role.name(),
            sync::REMOTE,
            shown(reason)
        ))?,
        sync::State::Conflict { paths } => {
            let mut err = Error::failure(format!(
                "{}: published here, but {}/{} changed the same lines of {}",
                role.name(),
                sync::REMOTE,
                shown(&report.trunk),
                paths
                    .iter()
                    .map(|p| shown(p).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            for h in crate::cli::errors::conflict_hints(&report) {
                err = err.hint(h);
            }
            return Err(err);
        }
        _ => ui.status(sync::line(&report))?,
    }
    Ok(())
}
