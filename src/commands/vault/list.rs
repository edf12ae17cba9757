//! `vault list`: vaults, their recipients and entries, with the hosts each is bound to, and
//! what waits for the person (recipients changed by sync) or was skipped (what is not as
//! git-loop writes it). One vault that cannot be read is said and skipped; the others are
//! listed.

use super::*;

/// One entry as listed.
struct Listed {
    entry: Entry,
    /// None: the binding cannot be read (no identity, or not a recipient).
    hosts: Option<Bound>,
    legacy: bool,
    /// Why it is not delivered as it is (copied or renamed, an older entry not pinned).
    refused: Option<String>,
}

struct ListedVault {
    v: Vault,
    decision: Decision,
    recipients: Vec<String>,
    entries: Vec<Listed>,
    bad: Vec<Bad>,
}

pub(super) fn list(ui: &mut Ui, only: Option<&str>, json: bool) -> Result<u8> {
    if let Some(name) = only {
        names::vault_name(name)?;
    }
    let ws = crate::commands::workspace()?;
    let (names, skipped) = match only {
        Some(name) => (vec![name.to_string()], Vec::new()),
        None => Vault::names(&ws)?,
    };
    for bad in &skipped {
        ui.warn(format!("skipped {bad}"))?;
    }
    // The bindings are encrypted with the values: reading them takes the identity. Without
    // one (or for an entry it cannot decrypt) a binding is shown as unknown.
    let id = Identity::load(&vault::identity_path(&ws)?).ok();
    let mut listed = Vec::new();
    for name in &names {
        match list_one(&ws, name, id.as_ref()) {
            Ok(one) => listed.push(one),
            Err(e) if only.is_none() => {
                ui.warn(format!("skipped vault '{name}': {}", e.one_line()))?
            }
            Err(e) => return Err(e),
        }
    }
    for one in &listed {
        if !one.decision.is_accepted() {
            ui.warn(vault::describe_decision(one.v.name(), &one.decision))?;
        }
        for bad in &one.bad {
            ui.warn(format!("vault '{}': skipped {bad}", one.v.name()))?;
        }
    }
    if json {
        let items: Vec<serde_json::Value> = listed.iter().map(vault_json).collect();
        return crate::commands::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    if listed.is_empty() {
        ui.status("no vaults yet: git loop vault init")?;
        return Ok(0);
    }
    for one in &listed {
        print_vault(ui, one)?;
    }
    Ok(0)
}

fn list_one(ws: &Workspace, name: &str, id: Option<&Identity>) -> Result<ListedVault> {
    let v = Vault::open(ws, name)?;
    let decision = v.decision()?;
    let recipients: Vec<String> = match v.recipients() {
        Ok(r) => r.recipients().iter().map(|l| l.text.clone()).collect(),
        Err(_) => Vec::new(),
    };
    let listing = v.entries()?;
    let entries = listing
        .entries
        .into_iter()
        .map(|entry| {
            let mut listed = Listed {
                entry,
                hosts: None,
                legacy: false,
                refused: None,
            };
            if let Some(id) = id {
                match v.unseal(id, &listed.entry) {
                    Ok(opened) => {
                        listed.hosts = Some(opened.hosts);
                        listed.legacy = opened.legacy;
                    }
                    Err(e @ (VaultError::Moved { .. } | VaultError::UnpinnedLegacy { .. })) => {
                        listed.refused = Some(e.to_string())
                    }
                    Err(_) => {}
                }
            }
            listed
        })
        .collect();
    Ok(ListedVault {
        v,
        decision,
        recipients,
        entries,
        bad: listing.bad,
    })
}

fn print_vault(ui: &mut Ui, one: &ListedVault) -> Result<()> {
    let plaintext = one
        .entries
        .iter()
        .filter(|e| e.hosts.as_ref().is_some_and(Bound::is_empty))
        .count();
    let bound = one
        .entries
        .iter()
        .filter(|e| e.hosts.as_ref().is_some_and(|h| !h.is_empty()))
        .count();
    let state = match &one.decision {
        Decision::New => format!(
            ", not accepted on this machine: git loop vault recipients accept {}",
            one.v.name()
        ),
        Decision::Changed { .. } | Decision::Unreadable(_) => {
            ", recipients changed by sync: not used until you decide".into()
        }
        Decision::Accepted => String::new(),
    };
    writeln!(
        ui.out(),
        "{}  ({plaintext} plaintext, {bound} bound{state})",
        one.v.name()
    )?;
    let (added, removed) = match &one.decision {
        Decision::Changed { added, removed } => (added.clone(), removed.clone()),
        _ => (Vec::new(), Vec::new()),
    };
    for r in &one.recipients {
        let note = if added.contains(r) {
            "  (arrived by sync, not accepted: not encrypted to)"
        } else {
            ""
        };
        writeln!(ui.out(), "  recipient  {}{note}", shown(r))?;
    }
    for r in &removed {
        writeln!(
            ui.out(),
            "  recipient  {}  (removed by sync, not accepted: still encrypted to)",
            shown(r)
        )?;
    }
    let width = one
        .entries
        .iter()
        .map(|e| e.entry.entry.name.len())
        .max()
        .unwrap_or(0);
    for e in &one.entries {
        let binding = match (&e.refused, &e.hosts) {
            (Some(_), _) => "refused (not delivered)".to_string(),
            (None, None) => "binding unknown (cannot decrypt)".to_string(),
            (None, Some(h)) if h.is_empty() => "plaintext".to_string(),
            (None, Some(h)) if h.headers.is_empty() => format!("for {}", h.hosts_text()),
            (None, Some(h)) => format!("for {} (also in {})", h.hosts_text(), h.headers.join(", ")),
        };
        let older = if e.legacy {
            format!("  (older format: git loop vault rekey {})", one.v.name())
        } else {
            String::new()
        };
        writeln!(
            ui.out(),
            "  {:<4}  {:<width$}  {:>9}  {binding}{older}",
            e.entry.entry.kind.as_str(),
            e.entry.entry.name,
            crate::fsutil::human_size(e.entry.size),
        )?;
    }
    for e in &one.entries {
        if let Some(why) = &e.refused {
            ui.warn(format!("refused: {why}"))?;
        }
    }
    Ok(())
}

fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::terminal::visible(text)
}

fn vault_json(one: &ListedVault) -> serde_json::Value {
    let changed = match &one.decision {
        Decision::Changed { added, removed } => {
            serde_json::json!({"added": added, "removed": removed})
        }
        Decision::Unreadable(why) => serde_json::json!({"unreadable": why}),
        _ => serde_json::Value::Null,
    };
    serde_json::json!({
        "name": one.v.name(),
        "path": one.v.dir(),
        "accepted": one.decision != Decision::New,
        "recipients": one.recipients,
        "recipients_changed": changed,
        "plaintext": one.entries.iter().filter(|e| e.hosts.as_ref().is_some_and(Bound::is_empty)).count(),
        "entries": one.entries.iter().map(|e| entry_json(&e.entry, e.hosts.as_ref(), e.legacy, e.refused.as_deref())).collect::<Vec<_>>(),
        "skipped": one.bad.iter().map(|b| serde_json::json!({"path": b.path, "why": b.why})).collect::<Vec<_>>(),
    })
}

fn entry_json(
    e: &Entry,
    hosts: Option<&Bound>,
    legacy: bool,
    refused: Option<&str>,
) -> serde_json::Value {
    serde_json::json!({
        "kind": e.entry.kind.as_str(),
        "name": e.entry.name,
        "size": e.size,
        "path": e.path,
        "for": hosts.map(|h| h.hosts.iter().map(ToString::to_string).collect::<Vec<_>>()),
        "headers": hosts.map(|h| h.headers.clone()),
        "older_format": legacy,
        "refused": refused,
    })
}
