use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::gate;
use crate::loops;
use crate::pr::{self, Target};
use crate::terminal::shown;
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
    let Target { origin, base, what } = pr::target(&ws, &rec)?;
    let allow = super::operator_guard_allowlist()?;
    // What the loop wrote is read before the workspace lock is taken.
    loops::import(&ws, &rec)?;
    let insp = {
        let _lock = Lock::acquire(&ws.workspace_lock())?;
        gate::inspect(&origin, &rec.branch, &base, &allow).map_err(|e| {
            Error::failure(format!("cannot check what loop {id} would propose"))
                .with_source(e)
                .hint(format!("is {base} a branch of {}?", origin.display()))
        })?
    };
    let retry = format!("git loop pr {id}");
    if let Some(e) = gate::refusal(ui.err(), "pr", &id, &[(what, &insp.report)], &[], &retry)? {
        return Err(e);
    }
    let (remote, url) = pr::push(&origin, &rec, &insp)?;
    ui.status(format!("pushed {} ({what}) to {remote}", rec.branch))?;
    let body = pr::body(&origin, &rec, &base, &insp);
    if pr::open(&origin, &url, &rec, &base, &body, args.draft)? {
        return Ok(0);
    }
    match pr::compare_url(&url, &base, &rec.branch) {
        Some(u) => writeln!(ui.out(), "{}", shown(&u))?,
        None => writeln!(
            ui.out(),
            "open a pull request from {} into {} on {}",
            shown(&rec.branch),
            shown(&base),
            shown(&url)
        )?,
    }
    Ok(0)
}
