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
/// second of the agent's hook. A loop that is removed is said once, as `removed`; watching
/// loops named by id ends (exit code 0) once every one of them is removed.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The loops to watch (ids or unique prefixes); all loops when none is given.
    pub ids: Vec<String>,
    /// One JSON object per line: {"id", "state", "code", "since", "attached"}; "state" is
    /// "removed" once a loop is removed.
    #[arg(long)]
    pub json: bool,
}

/// How often the states are looked at.
const POLL: Duration = Duration::from_millis(100);

pub fn run(ui: &mut Ui, args: WatchArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let mut fixed: Option<Vec<String>> = if args.ids.is_empty() {
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
            Some(ids) => ids.iter().filter(|id| ws.has_loop(id)).cloned().collect(),
            None => ws.loop_ids()?,
        };
        for id in gone(fixed.as_mut(), last.keys(), &ids) {
            last.remove(&id);
            say_removed(ui, &id, args.json)?;
        }
        if fixed.as_ref().is_some_and(|named| named.is_empty()) {
            return Ok(0);
        }
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

/// The loops watched until now that are gone (their folders renamed away by `rm`, or by
/// `gc`), sorted, to be said once and watched no more: of the loops `named`, those not
/// `present` now (and `named` keeps the others); of all loops, those `seen` before and
/// not listed now.
fn gone<'a>(
    named: Option<&mut Vec<String>>,
    seen: impl Iterator<Item = &'a String>,
    present: &[String],
) -> Vec<String> {
    let mut gone: Vec<String> = match named {
        Some(named) => {
            let gone = named
                .iter()
                .filter(|id| !present.contains(id))
                .cloned()
                .collect();
            named.retain(|id| present.contains(id));
            gone
        }
        None => seen.filter(|id| !present.contains(id)).cloned().collect(),
    };
    // A loop named twice (its id and a prefix of it) is said once.
    gone.sort();
    gone.dedup();
    gone
}

/// The line of a loop that was removed: `SINCE  ID  removed`, or its JSON object.
fn say_removed(ui: &mut Ui, id: &str, json: bool) -> Result<()> {
    let since = loops::now_rfc3339();
    match json {
        true => writeln!(
            ui.out(),
            "{}",
            serde_json::json!({"id": id, "state": "removed", "since": since, "attached": 0})
        )?,
        false => writeln!(ui.out(), "{since}  {}  removed", visible(id))?,
    }
    ui.out().flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_loop_is_gone_once_no_longer_there_and_said_once() {
        // Named loops: gone when not present, whether or not a state was seen; the
        // others stay named.
        let mut named = names(&["b", "a", "c"]);
        let seen = names(&["a"]);
        assert_eq!(
            gone(Some(&mut named), seen.iter(), &names(&["b"])),
            names(&["a", "c"])
        );
        assert_eq!(named, names(&["b"]));
        // Said once: the next look finds nothing more gone.
        assert!(gone(Some(&mut named), seen.iter(), &names(&["b"])).is_empty());
        assert_eq!(named, names(&["b"]));
        // All loops: those seen before and not listed now; a new one is not gone.
        let seen = names(&["z", "x", "y"]);
        assert_eq!(
            gone(None, seen.iter(), &names(&["y", "new"])),
            names(&["x", "z"])
        );
        assert!(gone(None, seen.iter(), &seen).is_empty());
        // Named twice, said once.
        let mut named = names(&["a", "b", "a"]);
        assert_eq!(
            gone(Some(&mut named), seen.iter(), &names(&["b"])),
            names(&["a"])
        );
        assert_eq!(named, names(&["b"]));
    }
}
