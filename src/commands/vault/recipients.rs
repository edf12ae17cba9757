//! `vault recipients` and `vault rekey`.

use super::*;

pub(super) fn recipients(
    ui: &mut Ui,
    name: &str,
    action: RecipientsAction,
    arg: &str,
) -> Result<u8> {
    names::vault_name(name)?;
    let given = match action {
        RecipientsAction::List if !arg.is_empty() => {
            return Err(Error::usage("`recipients list` takes no recipient")
                .hint(format!("git loop vault recipients {name} list")))
        }
        RecipientsAction::List => Vec::new(),
        _ => vault::recipients::parse_arg(arg)?,
    };
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    if action == RecipientsAction::List {
        for line in v.recipients()?.recipients() {
            writeln!(ui.out(), "{}", line.text)?;
        }
        return Ok(0);
    }
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
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
            .hint(format!("see them: git loop vault recipients {name} list")));
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
            "add the new recipient first: git loop vault recipients {name} add RECIPIENT"
        )));
    }
    v.write_recipients(&file)?;
    vault::commit(&ws, &format!("vault {name}: recipients changed"))?;
    match action {
        RecipientsAction::Add => ui.status(format!(
            "added {changed} recipient{} to vault '{name}'; to let {} decrypt the entries: git loop vault rekey {name}",
            if changed == 1 { "" } else { "s" },
            if changed == 1 { "it" } else { "them" },
        ))?,
        _ => {
            ui.status(format!(
                "removed {changed} recipient{} from vault '{name}'",
                if changed == 1 { "" } else { "s" }
            ))?;
            ui.warn(format!(
                "the entries stay readable with the removed identity until `git loop vault rekey {name}`, and in git history: rotate the credentials that matter"
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
    let recipients = v.recipients()?;
    let (count, links) = {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        v.rekey(&id)?
    };
    vault::commit(&ws, &format!("vault {name}: rekey"))?;
    let r = recipients.recipients().len();
    ui.status(format!(
        "re-encrypted {count} entr{} of vault '{name}' to {r} recipient{}",
        if count == 1 { "y" } else { "ies" },
        if r == 1 { "" } else { "s" }
    ))?;
    if links > 0 {
        ui.status(format!(
            "skipped {links} linked entr{} (rekey the vault they point into)",
            if links == 1 { "y" } else { "ies" }
        ))?;
    }
    if !id.recipients().iter().any(|mine| recipients.contains(mine)) {
        ui.warn(format!(
            "your identity is not a recipient of vault '{name}' any more: you can no longer decrypt it"
        ))?;
    }
    Ok(0)
}
