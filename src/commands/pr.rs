use crate::error::Result;
use crate::loops;
use crate::ui::Ui;

/// Push a loop's branch to the remote and open a pull request.
///
/// Code loops push loop/<id> to the remote of the repository they came from; distill loops
/// push their knowledge branch to the knowledge remote ("distilling notes into knowledge
/// via pull request"). With `gh` or `glab` installed and logged in, the pull request is
/// opened; otherwise the compare URL is printed.
///
/// First, every commit the branch carries is scanned with the secret guard's rules, and a
/// gitlink or a nested .git is refused: a refusal says what and where, and pushes nothing.
#[derive(Debug, clap::Args)]
pub struct PrArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Open the pull request as a draft.
    #[arg(long)]
    pub draft: bool,
}

pub fn run(ui: &mut Ui, args: PrArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let allow = super::operator_guard_allowlist()?;
    crate::pr::propose(ui, &ws, &rec, &allow, args.draft)?;
    Ok(0)
}
