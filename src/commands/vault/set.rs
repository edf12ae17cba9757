//! `vault set` and `vault bind`: a value read and checked before the first write, then stored with its binding.

use super::*;

pub(super) fn set(
    ui: &mut Ui,
    name: &str,
    kind: Kind,
    entry: &str,
    path: Option<&Path>,
    binding: Binding,
) -> Result<u8> {
    names::vault_name(name)?;
    let entry = entry_ref(kind, entry)?;
    // Everything is read and checked before the first write.
    let value = match (kind, path) {
        (Kind::Env, Some(_)) => {
            return Err(
                Error::usage("an env entry takes its value from stdin, not a PATH").hint(format!(
                    "printf %s VALUE | git loop vault set {name} env {}",
                    entry.name
                )),
            )
        }
        (Kind::Env, None) => read_env_value(ui, &entry)?,
        (Kind::File, None) => {
            return Err(
                Error::usage("a file entry needs the PATH of the file to store").hint(format!(
                    "git loop vault set {name} file {} PATH   (`-` reads stdin)",
                    entry.name
                )),
            )
        }
        (Kind::File, Some(p)) => read_file_value(&entry, p)?,
    };
    Vault::check_value(&entry, &value)?;
    if let Binding::To(hosts) = &binding {
        Vault::check_bindable(&entry, &value, hosts)?;
    }
    let ws = crate::commands::workspace()?;
    let v = vault_for_write(ui, &ws, name)?;
    // Writes encrypt to the recipients accepted here; a change that arrived by sync is said.
    if let Some(warning) = vault::decision_warning(&v)? {
        ui.warn(warning)?;
    }
    let count = v.encryption_count()?;
    let hosts = match binding {
        Binding::To(hosts) => hosts,
        Binding::Unbound => Bound::default(),
        Binding::Keep => current_hosts(ui, &ws, &v, &entry)?,
    };
    check_required(ui, &ws, name, &entry, &hosts, Some(&value))?;
    let written = {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        v.write_bound(&entry, &value, &hosts)?
    };
    vault::commit(&ws, &v, &format!("vault {name}: set {}", entry.label()))?;
    let default = crate::commands::load_config(ui, &ws, None)?
        .settings()
        .vault
        .default
        .clone();
    let how = match written {
        Written::Created => "stored",
        Written::Replaced => "replaced",
        Written::ReplacedLink => "replaced the link with a value of its own:",
    };
    ui.status(format!(
        "{how} {} in vault '{name}' (encrypted to {count} recipient{})",
        entry.label(),
        if count == 1 { "" } else { "s" }
    ))?;
    say_binding(ui, name, &entry, &hosts, &value)?;
    vault::say_scope(ui, &ws, name, &default, &entry.label())?;
    Ok(0)
}

pub(super) fn bind(ui: &mut Ui, name: &str, text: &str, binding: Binding) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = crate::commands::workspace()?;
    let v = Vault::open(&ws, name)?;
    let entry = v.resolve(text)?;
    let found = existing(&v, &entry)?;
    let id = load_identity(ui, &ws)?;
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    let sealed = v.ciphertext(&found)?;
    let (value, before) = v.open_entry(&id, &found)?;
    let hosts = match binding {
        Binding::To(hosts) => hosts,
        _ => Bound::default(),
    };
    check_required(ui, &ws, name, &entry, &hosts, Some(&value))?;
    if hosts == before {
        ui.status(format!("{} is bound as asked already", entry.label()))?;
        return Ok(0);
    }
    if v.ciphertext(&found)? != sealed {
        return Err(Error::failure(format!(
            "{} of vault '{name}' changed while it was read; nothing was changed",
            entry.label()
        ))
        .hint("run the command again"));
    }
    v.write_bound(&entry, &value, &hosts)?;
    vault::commit(&ws, &v, &format!("vault {name}: bind {}", entry.label()))?;
    say_binding(ui, name, &entry, &hosts, &value)?;
    if hosts.is_empty() {
        ui.status(format!(
            "{} is bound to no host now: its value goes into the sandbox as it is",
            entry.label()
        ))?;
    }
    Ok(0)
}

/// A variable's value from stdin: typed without echo on a terminal, else everything
/// piped in, less one trailing newline (`echo` adds one).
pub(super) fn read_env_value(ui: &mut Ui, entry: &EntryRef) -> Result<Zeroizing<Vec<u8>>> {
    let value = crate::ui::read_secret(
        ui,
        &format!("value of {} (not shown): ", entry.name),
        entry.kind.limit(),
    )
    .context(|| "cannot read the value from stdin")?;
    if value.is_empty() {
        return Err(
            Error::usage(format!("no value for {} on stdin", entry.label())).hint(format!(
                "pipe it in: printf %s VALUE | git loop vault set VAULT env {}",
                entry.name
            )),
        );
    }
    Ok(value)
}

pub(super) fn read_file_value(entry: &EntryRef, path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let limit = entry.kind.limit();
    let mut bytes = Zeroizing::new(Vec::new());
    if path == Path::new("-") {
        bytes.reserve_exact(limit + 1);
        std::io::stdin()
            .lock()
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .context(|| "cannot read the file from stdin")?;
        return Ok(bytes);
    }
    let file = fs::File::open(path).map_err(|e| {
        Error::usage(format!("cannot read {}", path.display()))
            .with_source(e)
            .hint("give the path of a file you can read, or `-` for stdin")
    })?;
    let meta = file
        .metadata()
        .context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        return Err(Error::usage(format!("{} is not a file", path.display()))
            .hint("a file entry stores one file; store each file of a folder as its own entry"));
    }
    if meta.len() > limit as u64 {
        return Err(VaultError::TooLarge {
            what: format!("{} ({})", entry.label(), path.display()),
            limit,
        }
        .into());
    }
    bytes.reserve_exact(meta.len() as usize + 1);
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes)
}

/// Finds an existing entry; its absence is an error naming the vault.
pub(super) fn existing(v: &Vault, entry: &EntryRef) -> Result<Entry> {
    v.find(entry)?.ok_or_else(|| {
        VaultError::NoEntry {
            vault: v.name().to_string(),
            entry: entry.label(),
        }
        .into()
    })
}
