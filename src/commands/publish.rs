use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::git::objects;
use crate::loops::{self, Kind};
use crate::publish::{self, MergeRequest, Outcome};
use crate::ui::Ui;

/// Publish a loop's notes (and, for a distill loop, its knowledge) into trunk.
///
/// A fast-forward when possible, otherwise a merge commit made without checking trunk
/// out. Trunk moves only by compare-and-swap. A conflict changes nothing and says how
/// to resolve it. The origins' checkouts of trunk are brought up to date.
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
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    loops::import(&ws, &rec)?;
    for (role, origin) in roles {
        let (trunk, outcome) =
            publish_one(&ws, &origin, &rec, role, args.message.clone(), args.dry_run)?;
        report(ui, role, &trunk, &outcome, args.dry_run)?;
    }
    Ok(0)
}

/// Publishes one of a loop's context branches (notes or knowledge) into its trunk.
pub fn publish_one(
    ws: &crate::workspace::Workspace,
    origin: &std::path::Path,
    rec: &loops::LoopRecord,
    role: &str,
    message: Option<String>,
    dry_run: bool,
) -> Result<(String, Outcome)> {
    let repo = objects::open_trusted(origin)
        .map_err(|e| Error::failure(format!("cannot read {}", origin.display())).with_source(e))?;
    let trunk = objects::head_branch(&repo)
        .ok()
        .flatten()
        .ok_or_else(|| Error::failure(format!("{} has no trunk checked out", origin.display())))?;
    let message =
        message.unwrap_or_else(|| format!("Publish {role} of loop {}: {}", rec.id, rec.title));
    let journal = ws.checkout_journal(role);
    let outcome = publish::merge(&MergeRequest {
        origin,
        source_branch: &rec.branch,
        target_branch: &trunk,
        message,
        squash: false,
        dry_run,
        journal: Some(journal),
    })
    .map_err(|e| publish::to_error(e, &rec.id, "publish"))?;
    Ok((trunk, outcome))
}

/// One line saying what happened to `target` (the trunk or branch that received `what`).
pub fn report(
    ui: &mut Ui,
    what: &str,
    target: &str,
    outcome: &Outcome,
    dry_run: bool,
) -> Result<()> {
    let would = if dry_run { "would be " } else { "" };
    let line = match outcome {
        Outcome::UpToDate => format!("{what}: nothing to do ({target} already has it)"),
        Outcome::FastForward { old, new } => {
            format!(
                "{what}: {target} {would}fast-forwarded {}..{}",
                short(old),
                short(new)
            )
        }
        Outcome::Merged { old, new } => {
            format!(
                "{what}: {target} {would}merged {}..{}",
                short(old),
                short(new)
            )
        }
    };
    writeln!(ui.out(), "{line}")?;
    Ok(())
}

fn short(id: &gix::ObjectId) -> String {
    id.to_string()[..12].to_string()
}
