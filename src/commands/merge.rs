use crate::error::Result;
use crate::loops;
use crate::publish::{self, code, code::MergeLoop};
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
    let allow = super::operator_guard_allowlist()?;
    let mut retry = format!("git loop merge {id}");
    if let Some(into) = &args.into {
        retry.push_str(&format!(" --into {into}"));
    }
    if args.squash {
        retry.push_str(" --squash");
    }
    let (outcome, target) = code::merge_loop(
        ui,
        &ws,
        &rec,
        &MergeLoop {
            into: args.into,
            squash: args.squash,
            dry_run: args.dry_run,
            message: args.message,
            accept_policy: args.accept_policy,
            retry,
        },
        &allow,
    )?;
    writeln!(
        ui.out(),
        "{}",
        crate::publish::gated::outcome_line("code", &target, &outcome, args.dry_run)
    )?;
    if !args.squash && matches!(outcome, publish::Outcome::Merged { .. }) {
        // Not a fast-forward: the target moved since the loop began.
        ui.status(format!(
            "{target} had moved since loop {id} began, so this is a merge commit; `git loop rebase {id}` before merging makes it a fast-forward"
        ))?;
    }
    Ok(0)
}
