use crate::error::Result;
use crate::init::{self, Sources};
use crate::ui::Ui;
use crate::workspace::Workspace;

/// Create the workspace: context repositories, your personal repository, the loop folders.
///
/// Idempotent: what exists is left alone. Any other command creates the workspace on
/// first use; `init` is the explicit form and can clone the team's remotes and your own.
///
/// A URL for a repository that does not exist yet clones it (an empty remote gets the
/// first commit, which `git loop sync` pushes). For one that exists without a remote, the
/// URL becomes its remote (`origin`); one that `init` made and nothing changed since is
/// replaced by the clone when the remote has commits. One with another remote is refused.
/// On a second machine, `init` with the same URLs gets the same notes, knowledge,
/// personal memory and vaults; the vaults stay encrypted, and the identity that opens
/// them is carried by you, never by a remote.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Clone the team's knowledge repository from this URL.
    #[arg(long, value_name = "URL")]
    pub knowledge: Option<String>,
    /// Clone the team's notes repository from this URL.
    #[arg(long, value_name = "URL")]
    pub notes: Option<String>,
    /// Your personal repository's remote (memory and config, shared by your machines).
    #[arg(long, value_name = "URL")]
    pub personal: Option<String>,
    /// Your vaults' remote (encrypted entries only).
    #[arg(long, value_name = "URL")]
    pub vaults: Option<String>,
}

pub fn run(ui: &mut Ui, args: InitArgs) -> Result<u8> {
    let ws = Workspace::from_env()?;
    let report = init::init(
        &ws,
        &Sources {
            knowledge: args.knowledge,
            notes: args.notes,
            personal: args.personal,
            vaults: args.vaults,
        },
    )?;
    for p in &report.created {
        ui.status(format!("created {}", p.display()))?;
    }
    for (p, url) in &report.cloned {
        ui.status(format!("cloned {url} into {}", p.display()))?;
    }
    for (p, url) in &report.remote_set {
        ui.status(format!(
            "{}: its remote is now {url}; `git loop sync` shares it",
            p.display()
        ))?;
    }
    for p in &report.existing {
        ui.status(format!("{}: has this remote already", p.display()))?;
    }
    writeln!(ui.out(), "{}", ws.root().display())?;
    Ok(0)
}
