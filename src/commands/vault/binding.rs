//! `--for` and `--unbound`: what they ask of an entry's binding, and what is said about it.

use super::*;

/// What `--for` and `--unbound` ask of an entry's binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Binding {
    /// Keep what the entry has (none for a new entry).
    Keep,
    To(Bound),
    Unbound,
}

impl Binding {
    pub(super) fn from_args(
        hosts: Option<&str>,
        headers: &[String],
        unbound: bool,
    ) -> Result<Binding> {
        match (hosts, unbound) {
            (Some(list), _) => {
                let mut binding = vault::binding::parse_hosts(list).map_err(|why| {
                    Error::usage(format!("--for: {why}")).hint(
                        "give host names, *.example.com (its subdomains) or name.*.example.com (one label), each with :PORT for a port other than 443, separated by commas",
                    )
                })?;
                binding.headers = crate::egress::sentinel::binding::parse_headers(headers)
                    .map_err(|why| {
                        Error::usage(format!("--header: {why}")).hint(
                            "name a request header that carries the credential (X-Custom-Token); Authorization and the common token headers need no --header",
                        )
                    })?;
                Ok(Binding::To(binding))
            }
            (None, true) => Ok(Binding::Unbound),
            (None, false) => Ok(Binding::Keep),
        }
    }
}

/// The hosts an entry is bound to now (decrypting it), or none for a missing entry.
pub(super) fn current_hosts(
    ui: &mut Ui,
    ws: &Workspace,
    v: &Vault,
    entry: &EntryRef,
) -> Result<Bound> {
    let found = match v.find(entry) {
        Ok(found) => found,
        // Something that is not an entry stands where its file goes (a link): the new
        // value replaces it, never written through it.
        Err(VaultError::Unexpected { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    match found {
        Some(found) => {
            let id = load_identity(ui, ws)?;
            match v.open_entry(&id, &found) {
                Ok((_, hosts)) => Ok(hosts),
                // What stands there is refused as it is: the new value replaces it, with
                // no binding of its.
                Err(e @ (VaultError::Moved { .. } | VaultError::UnpinnedLegacy { .. })) => {
                    ui.warn(format!("replacing what was refused: {e}"))?;
                    Ok(Bound::default())
                }
                Err(e) => Err(e.into()),
            }
        }
        None => Ok(Bound::default()),
    }
}

/// Refuses an unbound entry under `vault.require_binding`.
pub(super) fn check_required(
    ui: &mut Ui,
    ws: &Workspace,
    vault: &str,
    entry: &EntryRef,
    hosts: &Bound,
    value: Option<&[u8]>,
) -> Result<()> {
    if !hosts.is_empty()
        || !crate::commands::load_config(ui, ws, None)?
            .settings()
            .vault
            .require_binding
    {
        return Ok(());
    }
    let suggested = vault::binding::suggested(&entry.name, value).unwrap_or("HOST");
    Err(Error::usage(format!(
        "{} would be bound to no host, and vault.require_binding is set",
        entry.label()
    ))
    .hint(format!(
        "bind it to the hosts that may receive it: --for {suggested}   (or git loop vault bind {vault} {} {suggested})",
        entry.label()
    )))
}

/// Says where an entry's value goes, and suggests a binding for a known unbound one.
pub(super) fn say_binding(
    ui: &mut Ui,
    vault: &str,
    entry: &EntryRef,
    hosts: &Bound,
    value: &[u8],
) -> Result<()> {
    if hosts.is_empty() {
        if let Some(suggested) = vault::binding::suggested(&entry.name, Some(value)) {
            ui.status(format!(
                "{} is unbound: its value goes into the sandbox as it is",
                entry.label()
            ))?;
            writeln!(
                ui.err(),
                "hint: bind it so that only its hosts receive it: git loop vault bind {vault} {} {suggested}",
                entry.label()
            )?;
        }
    } else {
        let headers = match hosts.headers.len() {
            0 => String::new(),
            _ => format!(" (also in {})", hosts.headers.join(", ")),
        };
        ui.status(format!(
            "{} is bound to {}: the sandbox gets a placeholder, and the proxy puts the value into the credential fields{headers} of HTTPS requests to {} only",
            entry.label(),
            hosts.hosts_text(),
            if hosts.hosts.len() == 1 { "it" } else { "them" }
        ))?;
    }
    Ok(())
}
