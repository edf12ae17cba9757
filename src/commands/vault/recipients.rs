//! `vault recipients` and `vault rekey`.

use super::*;

pub(super) fn recipients(
    ui: &mut Ui,
    name: &str,
    action: RecipientsAction,
    arg: &str,
) -> Result<u8> {
    names::vault_name(name)?;
    let takes_none = matches!(
        action,
        RecipientsAction::List | RecipientsAction::Accept | RecipientsAction::Refuse
    );
    let given = match action {
        _ if takes_none && !arg.is_empty() => {
            let word = format!("{action:?}").to_lowercase();
            return Err(
                Error::usage(format!("`recipients {word}` takes no recipient"))
                    .hint(format!("git loop vault recipients {word} {name}")),
            );
        }
        _ if takes_none => Vec::new(),
        _ => vault::recipients::parse_arg(arg)?,
    };
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    match action {
        RecipientsAction::List => list(ui, &v),
        RecipientsAction::Accept => accept(ui, &ws, &v),
        RecipientsAction::Refuse => refuse(ui, &ws, &v),
        RecipientsAction::Add | RecipientsAction::Rm => change(ui, &ws, &v, action, given),
    }
}

fn list(ui: &mut Ui, v: &Vault) -> Result<u8> {
    let decision = v.decision()?;
    let (added, removed) = match &decision {
        Decision::Changed { added, removed } => (added.clone(), removed.clone()),
        _ => (Vec::new(), Vec::new()),
    };
    if let Ok(file) = v.recipients() {
        for line in file.recipients() {
            let note = if added.contains(&line.text) {
                "  (arrived by sync, not accepted)"
            } else {
                ""
            };
            writeln!(ui.out(), "{}{note}", crate::terminal::visible(&line.text))?;
        }
    }
    for line in &removed {
        writeln!(
            ui.out(),
            "{}  (removed by sync, not accepted: still encrypted to)",
            crate::terminal::visible(line)
        )?;
    }
    if !decision.is_accepted() {
        ui.warn(vault::describe_decision(v.name(), &decision))?;
    }
    Ok(0)
}

/// The person's own change: recipients.txt and the pin at once.
fn change(
    ui: &mut Ui,
    ws: &Workspace,
    v: &Vault,
    action: RecipientsAction,
    given: Vec<(String, vault::recipients::Recipient)>,
) -> Result<u8> {
    let name = v.name();
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    match v.decision()? {
        Decision::Accepted => {}
        Decision::New => return Err(VaultError::NeverAccepted(name.to_string()).into()),
        _ => return Err(VaultError::Undecided(name.to_string()).into()),
    }
    let mut file = v.recipients()?;
    let mut changed = 0;
    for (text, r) in given {
        let canonical = r.canonical();
        let done = match action {
            RecipientsAction::Add => file.add(&text, r),
            _ => file.remove(&canonical),
        };
        if done {
            changed += 1;
        } else if action == RecipientsAction::Add {
            ui.status(format!(
                "{canonical} is a recipient of vault '{name}' already"
            ))?;
        } else {
            return Err(Error::failure(format!(
                "{canonical} is not a recipient of vault '{name}'"
            ))
            .hint(format!("see them: git loop vault recipients list {name}")));
        }
    }
    if changed == 0 {
        return Ok(0);
    }
    if file.recipients().is_empty() {
        return Err(Error::failure(format!(
            "refusing to remove the last recipient of vault '{name}': nobody could decrypt it"
        ))
        .hint(format!(
            "add the new recipient first: git loop vault recipients add {name} RECIPIENT"
        )));
    }
    v.write_recipients(&file)?;
    vault::commit(ws, v, &format!("vault {name}: recipients changed"))?;
    let plural = if changed == 1 { "" } else { "s" };
    match action {
        RecipientsAction::Add => ui.status(format!(
            "added {changed} recipient{plural} to vault '{name}' (accepted on this machine: new entries are encrypted to {} at once); to let {} decrypt the entries stored before: git loop vault rekey {name}",
            if changed == 1 { "it" } else { "them" },
            if changed == 1 { "it" } else { "them" },
        ))?,
        _ => {
            ui.status(format!(
                "removed {changed} recipient{plural} from vault '{name}'"
            ))?;
            ui.warn(format!(
                "the entries stay readable with the removed identity until `git loop vault rekey {name}`, and in git history: rotate the credentials that matter"
            ))?;
        }
    }
    Ok(0)
}

fn accept(ui: &mut Ui, ws: &Workspace, v: &Vault) -> Result<u8> {
    let name = v.name();
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    let settled = v.accept()?;
    let count = v.encryption_count()?;
    match settled {
        Decision::Accepted => ui.status(format!(
            "the recipients of vault '{name}' are the ones you accepted already ({count})"
        ))?,
        Decision::New => ui.status(format!(
            "accepted vault '{name}' on this machine: its {count} recipient{} and its entries as they are now",
            if count == 1 { "" } else { "s" }
        ))?,
        Decision::Changed { added, removed } => {
            let mut what = Vec::new();
            if !added.is_empty() {
                what.push(format!("added {}", added.join(", ")));
            }
            if !removed.is_empty() {
                what.push(format!("removed {}", removed.join(", ")));
            }
            ui.status(format!(
                "accepted the recipients of vault '{name}' as recipients.txt names them ({}): new entries are encrypted to these {count}",
                what.join("; ")
            ))?;
            if !added.is_empty() {
                ui.status(format!(
                    "entries stored before stay readable by the ones you accepted earlier only, until `git loop vault rekey {name}`"
                ))?;
            }
            if !removed.is_empty() {
                ui.warn(format!(
                    "the entries stay readable with the removed identities until `git loop vault rekey {name}`, and in git history: rotate the credentials that matter"
                ))?;
            }
        }
        Decision::Unreadable(_) => unreachable!("accepting an unreadable file is an error"),
    }
    Ok(0)
}

fn refuse(ui: &mut Ui, ws: &Workspace, v: &Vault) -> Result<u8> {
    let name = v.name();
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    match v.refuse()? {
        Decision::Accepted => ui.status(format!(
            "the recipients of vault '{name}' are the ones you accepted: nothing to refuse"
        ))?,
        _ => {
            vault::commit(
                ws,
                v,
                &format!(
                    "vault {name}: recipients put back (a change that arrived by sync was refused)"
                ),
            )?;
            ui.status(format!(
                "put back the recipients of vault '{name}' you accepted ({}); the next `git loop sync` pushes them",
                v.encryption_count()?
            ))?;
        }
    }
    Ok(0)
}

pub(super) fn rekey(ui: &mut Ui, name: &str) -> Result<u8> {
    names::vault_name(name)?;
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    let id = load_identity(ui, &ws)?;
    // Rekey encrypts to the recipients accepted here, never to ones that arrived by sync.
    if let Some(warning) = vault::decision_warning(&v)? {
        ui.warn(warning)?;
    }
    let done = {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        v.rekey(&id)?
    };
    vault::commit(&ws, &v, &format!("vault {name}: rekey"))?;
    let accepted = v.accepted_recipients()?.unwrap_or_default();
    let r = accepted.recipients().len();
    ui.status(format!(
        "re-encrypted {} entr{} of vault '{name}' to the {r} recipient{} you accepted{}",
        done.count,
        if done.count == 1 { "y" } else { "ies" },
        if r == 1 { "" } else { "s" },
        if done.upgraded > 0 {
            format!(
                " ({} written by an earlier git-loop, now with their names inside)",
                done.upgraded
            )
        } else {
            String::new()
        }
    ))?;
    for skipped in &done.skipped {
        ui.warn(format!("left as it is: {skipped}"))?;
    }
    if !id.recipients().iter().any(|mine| accepted.contains(mine)) {
        ui.warn(format!(
            "your identity is not a recipient of vault '{name}' any more: you can no longer decrypt it"
        ))?;
    }
    Ok(0)
}
