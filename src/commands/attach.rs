//! `attach`: the terminal on a live session's agent.

use crate::error::{Error, Result};
use crate::loops;
use crate::ui::Ui;

/// Put this terminal on the agent that runs detached in a loop's live session.
///
/// Several terminals can attach at once and see the same screen. Ctrl-b then d detaches
/// this terminal and leaves the agent running (tmux's keys: the session's terminal layer is
/// tmux, inside the sandbox).
#[derive(Debug, clap::Args)]
pub struct AttachArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
}

pub fn run(ui: &mut Ui, args: AttachArgs) -> Result<u8> {
    use std::io::IsTerminal;
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    if !std::io::stdin().is_terminal() {
        return Err(Error::usage("attach needs a terminal: stdin is not one")
            .hint(format!("run it in a terminal: git loop attach {id}")));
    }
    let Some(conn) = super::up::connect(&ws, &id)? else {
        return Err(
            Error::failure(format!("loop {id} has no session up")).hint(format!(
                "start the agent in one: git loop agent {id} --detach"
            )),
        );
    };
    let _ = ui;
    crate::session::join(
        conn,
        crate::session::wire::Exec {
            kind: "attach".into(),
            interactive: true,
            term: super::up::term(),
            ..Default::default()
        },
    )
}
