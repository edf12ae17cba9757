use crate::error::Result;
use crate::init::{self, Sources};
use crate::ui::Ui;
use crate::workspace::Workspace;

/// Create the workspace: context repositories, your personal repository, the loop folders.
///
/// Idempotent: what exists is left alone. Any other command creates the workspace on
/// first use; `init` is the explicit form and can clone the team's remotes.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Clone the team's knowledge repository from this URL.
    #[arg(long, value_name = "URL")]
    pub knowledge: Option<String>,
    /// Clone the team's notes repository from this URL.
    #[arg(long, value_name = "URL")]
    pub notes: Option<String>,
}

pub fn run(ui: &mut Ui, args: InitArgs) -> Result<u8> {
    let ws = Workspace::from_env()?;
    let report = init::init(
        &ws,
        &Sources {
            knowledge: args.knowledge,
            notes: args.notes,
        },
    )?;
    init::print_report(ui, &ws, &report)?;
    Ok(0)
}
