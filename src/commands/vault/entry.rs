//! `vault get`, `vault edit` and `vault rm`: one entry at a time.

use super::*;

pub(super) fn get(ui: &mut Ui, name: &str, kind: Kind, entry: &str, force: bool) -> Result<u8> {
    names::vault_name(name)?;
    let entry = entry_ref(kind, entry)?;
    if std::io::stdout().is_terminal() && !force {
        return Err(
            Error::usage("refusing to print a secret on a terminal").hint(format!(
                "pipe it where it is needed (git loop vault get {name} {} {} | …), or pass --force",
                entry.kind.as_str(),
                entry.name
            )),
        );
    }
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    let found = existing(&v, &entry)?;
    let id = load_identity(ui, &ws)?;
    let (plain, _) = v.open_entry(&id, &found)?;
    ui.out_raw(&plain)?;
    if entry.kind == EntryKind::Env {
        ui.out_raw(b"\n")?;
    }
    Ok(0)
}

pub(super) fn edit(ui: &mut Ui, name: &str, text: &str) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    let entry = v.resolve(text)?;
    let found = v.find(&entry)?;
    let (before, hosts, sealed_before) = match &found {
        Some(e) => {
            let id = load_identity(ui, &ws)?;
            let sealed = v.ciphertext(e)?;
            let (plain, hosts) = v.open_entry(&id, e)?;
            (plain, hosts, Some(sealed))
        }
        None => (Zeroizing::new(Vec::new()), Default::default(), None),
    };
    let limit = entry.kind.limit();
    let file_name = Path::new(&entry.name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "entry".into());
    let after = {
        let copy = vault::edit::PrivateCopy::new(&file_name, &before)?;
        vault::edit::run_editor(copy.path())?;
        copy.read(limit)?
    };
    let Some(mut after) = after else {
        ui.status("the editor removed the file; nothing was changed")?;
        return Ok(0);
    };
    if entry.kind == EntryKind::Env && after.ends_with(b"\n") {
        // Editors end the last line with a newline; a variable's value does not.
        after.pop();
        if after.ends_with(b"\r") {
            after.pop();
        }
    }
    if after[..] == before[..] {
        ui.status(format!("{} unchanged", entry.label()))?;
        return Ok(0);
    }
    if found.is_none() && after.is_empty() {
        ui.status(format!("{} left empty; nothing stored", entry.label()))?;
        return Ok(0);
    }
    Vault::check_value(&entry, &after)?;
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    if let (Some(e), Some(sealed)) = (&found, &sealed_before) {
        if v.ciphertext(e).ok().as_ref() != Some(sealed) {
            return Err(Error::failure(format!(
                "{} of vault '{name}' changed while you edited it; your edit was not stored",
                entry.label()
            ))
            .hint(format!(
                "edit it again: git loop vault edit {name} {}",
                entry.label()
            )));
        }
    }
    // The binding stays what it was.
    v.write_bound(&entry, &after, &hosts)?;
    vault::commit(&ws, &v, &format!("vault {name}: edit {}", entry.label()))?;
    ui.status(format!("saved {} in vault '{name}'", entry.label()))?;
    Ok(0)
}

pub(super) fn rm(ui: &mut Ui, name: &str, text: &str) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    let entry = v.resolve(text)?;
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    v.remove(&entry)?;
    vault::commit(&ws, &v, &format!("vault {name}: rm {}", entry.label()))?;
    ui.status(format!("removed {} from vault '{name}'", entry.label()))?;
    Ok(0)
}
