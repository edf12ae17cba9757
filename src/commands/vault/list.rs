//! `vault list`: vaults, their recipients and entries, with the hosts each is bound to.

use super::*;

pub(super) fn list(ui: &mut Ui, only: Option<&str>, json: bool) -> Result<u8> {
    if let Some(name) = only {
        names::vault_name(name)?;
    }
    let ws = crate::commands::workspace()?;
    let names = match only {
        Some(name) => vec![name.to_string()],
        None => Vault::names(&ws)?,
    };
    let mut vaults = Vec::new();
    for name in &names {
        let v = Vault::open(&ws, name)?;
        let recipients: Vec<String> = v
            .recipients()?
            .recipients()
            .iter()
            .map(|l| l.text.clone())
            .collect();
        vaults.push((v, recipients));
    }
    // The bindings are encrypted with the values: reading them takes the identity. Without
    // one (or for an entry it cannot decrypt) a binding is shown as unknown.
    let id = Identity::load(&vault::identity_path(&ws)?).ok();
    let mut listed = Vec::new();
    for (v, recipients) in &vaults {
        let entries: Vec<(Entry, Option<Bound>)> = v
            .entries()?
            .into_iter()
            .map(|e| {
                let hosts = id
                    .as_ref()
                    .and_then(|id| v.open_entry(id, &e).ok())
                    .map(|(_, hosts)| hosts);
                (e, hosts)
            })
            .collect();
        listed.push((v, recipients, entries));
    }
    if json {
        let items: Vec<serde_json::Value> = listed
            .iter()
            .map(|(v, recipients, entries)| {
                serde_json::json!({
                    "name": v.name(),
                    "path": v.dir(),
                    "recipients": recipients,
                    "plaintext": entries.iter().filter(|(_, h)| h.as_ref().is_some_and(Bound::is_empty)).count(),
                    "entries": entries.iter().map(|(e, h)| entry_json(e, h.as_ref())).collect::<Vec<_>>(),
                })
            })
            .collect();
        return crate::commands::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    if listed.is_empty() {
        ui.status("no vaults yet: git loop vault init")?;
        return Ok(0);
    }
    for (v, recipients, entries) in &listed {
        let plaintext = entries
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(Bound::is_empty))
            .count();
        let bound = entries
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(|h| !h.is_empty()))
            .count();
        writeln!(
            ui.out(),
            "{}  ({plaintext} plaintext, {bound} bound)",
            v.name()
        )?;
        for r in recipients.iter() {
            writeln!(ui.out(), "  recipient  {r}")?;
        }
        let width = entries
            .iter()
            .map(|(e, _)| e.entry.name.len())
            .max()
            .unwrap_or(0);
        for (e, hosts) in entries.iter() {
            let link = e
                .link_target
                .as_ref()
                .map(|t| format!("  -> {}", t.display()))
                .unwrap_or_default();
            let binding = match hosts {
                None => "binding unknown (cannot decrypt)".to_string(),
                Some(h) if h.is_empty() => "plaintext".to_string(),
                Some(h) if h.headers.is_empty() => format!("for {}", h.hosts_text()),
                Some(h) => format!("for {} (also in {})", h.hosts_text(), h.headers.join(", ")),
            };
            writeln!(
                ui.out(),
                "  {:<4}  {:<width$}  {:>9}  {binding}{link}",
                e.entry.kind.as_str(),
                e.entry.name,
                crate::fsutil::human_size(e.size),
            )?;
        }
    }
    Ok(0)
}

pub(super) fn entry_json(e: &Entry, hosts: Option<&Bound>) -> serde_json::Value {
    serde_json::json!({
        "kind": e.entry.kind.as_str(),
        "name": e.entry.name,
        "size": e.size,
        "path": e.path,
        "link": e.link_target,
        "for": hosts.map(|h| h.hosts.iter().map(ToString::to_string).collect::<Vec<_>>()),
        "headers": hosts.map(|h| h.headers.clone()),
    })
}
