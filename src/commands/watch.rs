//! `watch`: each change of the loops' agent states, as it happens.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::Result;
use crate::loops;
use crate::session::state::AgentState;
use crate::terminal::visible;
use crate::ui::Ui;

/// Print each change of the agent state of loops as it happens (until interrupted).
///
/// The states are working, needs-input, done and exited (with its code); they come from
/// the agents' own hooks and from the loop's live session. A change is printed within a
/// second of the agent's hook.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The loops to watch (ids or unique prefixes); all loops when none is given.
    pub ids: Vec<String>,
    /// One JSON object per line: {"id", "state", "code", "since", "attached"}.
    #[arg(long)]
    pub json: bool,
}

/// How often the states are looked at.
const POLL: Duration = Duration::from_millis(100);

pub fn run(ui: &mut Ui, args: WatchArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let fixed: Option<Vec<String>> = if args.ids.is_empty() {
        None
    } else {
        Some(
            args.ids
                .iter()
                .map(|q| loops::resolve(&ws, q))
                .collect::<Result<_>>()?,
        )
    };
    let mut last: HashMap<String, Option<AgentState>> = HashMap::new();
    let mut first = true;
    loop {
        let ids = match &fixed {
            Some(ids) => ids.clone(),
            None => ws.loop_ids()?,
        };
        for id in ids {
            let now = crate::session::state::read(&ws, &id);
            let before = last.get(&id).cloned().flatten();
            let changed = match (&before, &now) {
                (Some(b), Some(n)) => {
                    b.state != n.state || b.since != n.since || b.attached != n.attached
                }
                (None, Some(_)) => true,
                _ => false,
            };
            // The states as they stand are said once at the start, then each change.
            if changed || (first && now.is_some()) {
                let state = now.clone().expect("changed to a state");
                if args.json {
                    let mut v = serde_json::to_value(&state).unwrap_or_default();
                    v["id"] = id.clone().into();
                    writeln!(
                        ui.out(),
                        "{}",
                        serde_json::to_string(&v).unwrap_or_default()
                    )?;
                } else {
                    let mut line = format!("{}  {}  {}", state.since, visible(&id), state.label());
                    if state.attached > 0 {
                        line.push_str(&format!("  ({} attached)", state.attached));
                    }
                    writeln!(ui.out(), "{line}")?;
                }
                ui.out().flush()?;
            }
            last.insert(id, now);
        }
        first = false;
        std::thread::sleep(POLL);
    }
}
