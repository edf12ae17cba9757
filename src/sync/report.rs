//! What a sync says: its one line, its error, the way out of a conflict.

use super::*;

/// The one-line progress for a report, as `sync` prints it.
pub fn line(r: &Report) -> String {
    let name = r.repo.name();
    let short = |m: &Option<String>| {
        m.as_deref()
            .map(|s| s[..12.min(s.len())].to_string())
            .unwrap_or_else(|| "nothing".into())
    };
    match &r.state {
        State::NoRemote => format!("{name}: no remote (give it one: git loop init --{name} URL)"),
        State::UpToDate => format!("{name}: up to date with {REMOTE}/{}", r.trunk),
        State::Synced { pulled, pushed } => {
            let mut parts = Vec::new();
            match pulled {
                Pulled::Nothing => {}
                Pulled::FastForward => parts.push(format!(
                    "{} fast-forwarded {}..{}",
                    r.trunk,
                    short(&r.local.old),
                    short(&r.local.new)
                )),
                Pulled::Merge => parts.push(format!(
                    "{} merged with {REMOTE}/{} ({}..{})",
                    r.trunk,
                    r.trunk,
                    short(&r.local.old),
                    short(&r.local.new)
                )),
            }
            if *pushed {
                parts.push(format!(
                    "pushed to {REMOTE}/{} ({}..{})",
                    r.trunk,
                    short(&r.remote_trunk.old),
                    short(&r.remote_trunk.new)
                ));
            }
            if parts.is_empty() {
                parts.push(format!("up to date with {REMOTE}/{}", r.trunk));
            }
            format!("{name}: {}", parts.join(", "))
        }
        State::WouldSync { pulled, push } => {
            let mut parts = Vec::new();
            match pulled {
                Pulled::Nothing => {}
                Pulled::FastForward => parts.push(format!("{} would be fast-forwarded", r.trunk)),
                Pulled::Merge => parts.push(format!(
                    "{} would be merged with {REMOTE}/{}",
                    r.trunk, r.trunk
                )),
            }
            if *push {
                parts.push(format!("{REMOTE}/{} would be pushed", r.trunk));
            }
            format!("{name}: {}", parts.join(", "))
        }
        State::Offline { reason } => {
            format!("{name}: {REMOTE} cannot be reached ({reason}); nothing moved")
        }
        State::Conflict { paths } => format!(
            "{name}: {} and {REMOTE}/{} changed the same lines of {}; nothing moved",
            r.trunk,
            r.trunk,
            paths
                .iter()
                .map(|p| shown(p).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
