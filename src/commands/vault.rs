use std::fs;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use zeroize::Zeroizing;

use crate::egress::policy::Pattern;
use crate::error::{Context, Error, Result};
use crate::fsutil::Lock;
use crate::ui::Ui;
use crate::vault::recipients::Recipient;
use crate::vault::store::Written;
use crate::vault::{self, names, Entry, EntryKind, EntryRef, Identity, Vault, VaultError};
use crate::workspace::Workspace;

/// Manage vaults: credentials encrypted with age, given to a loop's sandbox.
///
/// A vault lives in the vaults' repository (vaults/<user>/<vault>/ in the workspace):
/// envs/<NAME>.age become environment variables, mounts/home/<rel>.age become files
/// $HOME/<rel>, all encrypted to the recipients in recipients.txt. Your identity (the key
/// that decrypts) is $XDG_CONFIG_HOME/git-loop/identity.txt, or $GIT_LOOP_IDENTITY; an
/// unencrypted ssh-ed25519 or ssh-rsa private key works too. Values are decrypted in
/// memory only, at a loop's start.
///
/// An entry bound to hosts (`set ... --for HOST`, or `bind`) never enters the sandbox:
/// inside, it is a placeholder made for each run, and the network proxy puts the value in
/// only over HTTPS to those hosts, refusing the placeholder anywhere else.
#[derive(Debug, clap::Args)]
pub struct VaultArgs {
    #[command(subcommand)]
    pub action: VaultAction,
}

/// What kind of entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// An environment variable (envs/<NAME>.age).
    Env,
    /// A file below $HOME (mounts/home/<rel>.age).
    File,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RecipientsAction {
    /// Print the recipients.
    List,
    /// Add a recipient (then rekey, so it can decrypt the entries).
    Add,
    /// Remove a recipient (then rekey, so it can no longer decrypt them).
    Rm,
}

#[derive(Debug, Subcommand)]
pub enum VaultAction {
    /// Create your identity (when missing) and a vault, and install the secret guard and
    /// the vault diff in your personal repository. Prints your recipient (public key).
    Init {
        /// The vault to create.
        #[arg(default_value = "default")]
        vault: String,
    },
    /// List vaults with their recipients and entries: names, sizes and the hosts each is
    /// bound to, never values (reading the bindings needs your identity).
    List {
        /// Only this vault.
        vault: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Store a value: `set VAULT env NAME` reads it from stdin (without echo on a
    /// terminal); `set VAULT file REL PATH` stores the file PATH (`-`: stdin) as $HOME/REL.
    /// An entry that exists keeps the hosts it is bound to unless --for or --unbound says
    /// otherwise.
    Set {
        /// The vault (`default` is created on first use).
        vault: String,
        /// env or file.
        kind: Kind,
        /// The variable name, or the path below $HOME.
        name: String,
        /// For a file: the file to store (`-` for stdin).
        path: Option<PathBuf>,
        /// Bind the entry to these hosts (comma-separated; `*.example.com` and
        /// `name.*.example.com` as in the allowlist): the sandbox gets a placeholder, and
        /// the proxy puts the value into HTTPS requests to these hosts only.
        #[arg(
            long = "for",
            value_name = "HOST[,HOST...]",
            conflicts_with = "unbound"
        )]
        hosts: Option<String>,
        /// Store the entry bound to no host: its value goes into the sandbox as it is.
        #[arg(long)]
        unbound: bool,
    },
    /// Bind an existing entry to the hosts that may receive it (or, with --unbound, to
    /// none), keeping its value. ENTRY is env:NAME, file:REL, or a bare name.
    Bind {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
        /// The hosts, comma-separated (`*.example.com` and `name.*.example.com` as in the
        /// allowlist).
        #[arg(value_name = "HOST[,HOST...]", required_unless_present = "unbound")]
        hosts: Option<String>,
        /// Bind the entry to no host: its value goes into the sandbox as it is.
        #[arg(long, conflicts_with = "hosts")]
        unbound: bool,
    },
    /// Print a value on stdout (refused on a terminal unless --force).
    Get {
        /// The vault.
        vault: String,
        /// env or file.
        kind: Kind,
        /// The variable name, or the path below $HOME.
        name: String,
        /// Print even when stdout is a terminal.
        #[arg(long)]
        force: bool,
    },
    /// Edit an entry with $EDITOR on a copy in a private tmpfs folder, removed afterwards;
    /// re-encrypted when saved. ENTRY is env:NAME, file:REL, or a bare name.
    Edit {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
    },
    /// Remove an entry (env:NAME, file:REL, or a bare name).
    Rm {
        /// The vault.
        vault: String,
        /// The entry: env:NAME, file:REL, or a bare name.
        entry: String,
    },
    /// List, add or remove the vault's recipients (age1…, ssh-ed25519 …, ssh-rsa …, or a
    /// .pub file).
    Recipients {
        /// The vault.
        vault: String,
        /// list, add or rm.
        action: RecipientsAction,
        /// The recipient; an ssh key may be given as its words or quoted.
        recipient: Vec<String>,
    },
    /// Re-encrypt every entry to the current recipients.
    Rekey {
        /// The vault.
        vault: String,
    },
}

pub fn run(ui: &mut Ui, args: VaultArgs) -> Result<u8> {
    vault::migrate_and_say(ui, &super::workspace()?)?;
    match args.action {
        VaultAction::Init { vault } => init(ui, &vault),
        VaultAction::List { vault, json } => list(ui, vault.as_deref(), json),
        VaultAction::Set {
            vault,
            kind,
            name,
            path,
            hosts,
            unbound,
        } => {
            let binding = Binding::from_args(hosts.as_deref(), unbound)?;
            set(ui, &vault, kind, &name, path.as_deref(), binding)
        }
        VaultAction::Bind {
            vault,
            entry,
            hosts,
            unbound,
        } => bind(
            ui,
            &vault,
            &entry,
            Binding::from_args(hosts.as_deref(), unbound)?,
        ),
        VaultAction::Get {
            vault,
            kind,
            name,
            force,
        } => get(ui, &vault, kind, &name, force),
        VaultAction::Edit { vault, entry } => edit(ui, &vault, &entry),
        VaultAction::Rm { vault, entry } => rm(ui, &vault, &entry),
        VaultAction::Recipients {
            vault,
            action,
            recipient,
        } => recipients(ui, &vault, action, &recipient.join(" ")),
        VaultAction::Rekey { vault } => rekey(ui, &vault),
    }
}

/// What `--for` and `--unbound` ask of an entry's binding.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Binding {
    /// Keep what the entry has (none for a new entry).
    Keep,
    To(Vec<Pattern>),
    Unbound,
}

impl Binding {
    fn from_args(hosts: Option<&str>, unbound: bool) -> Result<Binding> {
        match (hosts, unbound) {
            (Some(list), _) => vault::binding::parse_hosts(list).map(Binding::To).map_err(|why| {
                Error::usage(format!("--for: {why}")).hint(
                    "give host names, *.example.com (its subdomains) or name.*.example.com (one label), separated by commas",
                )
            }),
            (None, true) => Ok(Binding::Unbound),
            (None, false) => Ok(Binding::Keep),
        }
    }
}

/// The hosts an entry is bound to now (decrypting it), or none for a missing entry.
fn current_hosts(ui: &mut Ui, ws: &Workspace, v: &Vault, entry: &EntryRef) -> Result<Vec<Pattern>> {
    match v.find(entry)? {
        Some(found) => {
            let id = load_identity(ui, ws)?;
            Ok(v.open_entry(&id, &found)?.1)
        }
        None => Ok(Vec::new()),
    }
}

/// Refuses an unbound entry under `vault.require_binding`.
fn check_required(
    ui: &mut Ui,
    ws: &Workspace,
    vault: &str,
    entry: &EntryRef,
    hosts: &[Pattern],
    value: Option<&[u8]>,
) -> Result<()> {
    if !hosts.is_empty()
        || !super::load_config(ui, ws, None)?
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
fn say_binding(
    ui: &mut Ui,
    vault: &str,
    entry: &EntryRef,
    hosts: &[Pattern],
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
        ui.status(format!(
            "{} is bound to {}: the sandbox gets a placeholder, and the proxy puts the value into HTTPS requests to {} only",
            entry.label(),
            crate::egress::sentinel::hosts_text(hosts),
            if hosts.len() == 1 { "it" } else { "them" }
        ))?;
    }
    Ok(())
}

fn entry_ref(kind: Kind, name: &str) -> Result<EntryRef> {
    Ok(match kind {
        Kind::Env => EntryRef::env(name)?,
        Kind::File => EntryRef::file(name)?,
    })
}

fn load_identity(ui: &mut Ui, ws: &Workspace) -> Result<Identity> {
    let id = Identity::load(&vault::identity_path(ws)?)?;
    if id.loose_mode {
        ui.warn(format!(
            "your identity {} can be read by others: chmod 600 it",
            id.path().display()
        ))?;
    }
    Ok(id)
}

fn init_vault(ui: &mut Ui, ws: &Workspace, name: &str) -> Result<Identity> {
    vault::init(ui, ws, name)
}

fn init(ui: &mut Ui, name: &str) -> Result<u8> {
    names::vault_name(name)?;
    let ws = super::workspace()?;
    let id = init_vault(ui, &ws, name)?;
    writeln!(ui.out(), "{}", id.recipient())?;
    Ok(0)
}

fn vault_for_write(ui: &mut Ui, ws: &Workspace, name: &str) -> Result<Vault> {
    vault::open_for_write(ui, ws, name)
}

fn list(ui: &mut Ui, only: Option<&str>, json: bool) -> Result<u8> {
    if let Some(name) = only {
        names::vault_name(name)?;
    }
    let ws = super::workspace()?;
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
        let entries: Vec<(Entry, Option<Vec<Pattern>>)> = v
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
                    "plaintext": entries.iter().filter(|(_, h)| h.as_ref().is_some_and(Vec::is_empty)).count(),
                    "entries": entries.iter().map(|(e, h)| entry_json(e, h.as_deref())).collect::<Vec<_>>(),
                })
            })
            .collect();
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    if listed.is_empty() {
        ui.status("no vaults yet: git loop vault init")?;
        return Ok(0);
    }
    for (v, recipients, entries) in &listed {
        let plaintext = entries
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(Vec::is_empty))
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
                Some(h) => format!("for {}", crate::egress::sentinel::hosts_text(h)),
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

fn entry_json(e: &Entry, hosts: Option<&[Pattern]>) -> serde_json::Value {
    serde_json::json!({
        "kind": e.entry.kind.as_str(),
        "name": e.entry.name,
        "size": e.size,
        "path": e.path,
        "link": e.link_target,
        "for": hosts.map(|h| h.iter().map(ToString::to_string).collect::<Vec<_>>()),
    })
}

fn set(
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
    let ws = super::workspace()?;
    let v = vault_for_write(ui, &ws, name)?;
    let count = v.recipients()?.recipients().len();
    let hosts = match binding {
        Binding::To(hosts) => hosts,
        Binding::Unbound => Vec::new(),
        Binding::Keep => current_hosts(ui, &ws, &v, &entry)?,
    };
    check_required(ui, &ws, name, &entry, &hosts, Some(&value))?;
    let written = {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        v.write_bound(&entry, &value, &hosts)?
    };
    vault::commit(&ws, &format!("vault {name}: set {}", entry.label()))?;
    let default = super::load_config(ui, &ws, None)?
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

fn bind(ui: &mut Ui, name: &str, text: &str, binding: Binding) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = super::workspace()?;
    let v = Vault::open(&ws, name)?;
    let entry = v.resolve(text)?;
    let found = existing(&v, &entry)?;
    let id = load_identity(ui, &ws)?;
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    let sealed = v.ciphertext(&found)?;
    let (value, before) = v.open_entry(&id, &found)?;
    let hosts = match binding {
        Binding::To(hosts) => hosts,
        _ => Vec::new(),
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
    vault::commit(&ws, &format!("vault {name}: bind {}", entry.label()))?;
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
fn read_env_value(ui: &mut Ui, entry: &EntryRef) -> Result<Zeroizing<Vec<u8>>> {
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

fn read_file_value(entry: &EntryRef, path: &Path) -> Result<Zeroizing<Vec<u8>>> {
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
fn existing(v: &Vault, entry: &EntryRef) -> Result<Entry> {
    v.find(entry)?.ok_or_else(|| {
        VaultError::NoEntry {
            vault: v.name().to_string(),
            entry: entry.label(),
        }
        .into()
    })
}

fn get(ui: &mut Ui, name: &str, kind: Kind, entry: &str, force: bool) -> Result<u8> {
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
    let ws = super::workspace()?;
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

fn edit(ui: &mut Ui, name: &str, text: &str) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = super::workspace()?;
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
        None => (Zeroizing::new(Vec::new()), Vec::new(), None),
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
    vault::commit(&ws, &format!("vault {name}: edit {}", entry.label()))?;
    ui.status(format!("saved {} in vault '{name}'", entry.label()))?;
    Ok(0)
}

fn rm(ui: &mut Ui, name: &str, text: &str) -> Result<u8> {
    names::vault_name(name)?;
    if let Some(r) = EntryRef::parse_prefixed(text) {
        r?;
    }
    let ws = super::workspace()?;
    let v = Vault::open(&ws, name)?;
    let entry = v.resolve(text)?;
    let _lock = Lock::acquire(&ws.vault_lock(name))?;
    v.remove(&entry)?;
    vault::commit(&ws, &format!("vault {name}: rm {}", entry.label()))?;
    ui.status(format!("removed {} from vault '{name}'", entry.label()))?;
    Ok(0)
}

/// The recipients an argument names: a recipient, or a file of them (a `.pub` file).
fn parse_recipients_arg(arg: &str) -> Result<Vec<(String, Recipient)>> {
    let bad = |reason: String| -> Error {
        let what = if arg.is_empty() {
            "''".to_string()
        } else if arg.starts_with("AGE-SECRET-KEY-") || arg.starts_with("-----BEGIN") {
            "the argument".to_string()
        } else {
            let short: String = arg.chars().take(24).collect();
            format!(
                "'{}{}'",
                short.escape_debug(),
                if arg.chars().count() > 24 { "…" } else { "" }
            )
        };
        VaultError::BadRecipient { what, reason }.into()
    };
    if arg.trim().is_empty() {
        return Err(bad("it is empty".into()));
    }
    match Recipient::parse(arg) {
        Ok(r) => Ok(vec![(arg.trim().to_string(), r)]),
        Err(reason) => {
            let path = Path::new(arg);
            if !path.is_file() {
                return Err(bad(reason));
            }
            let text =
                fs::read_to_string(path).map_err(|e| bad(format!("cannot read the file: {e}")))?;
            let mut out = Vec::new();
            for line in text.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                out.push((line.to_string(), Recipient::parse(line).map_err(&bad)?));
            }
            if out.is_empty() {
                return Err(bad("the file holds no recipient".into()));
            }
            Ok(out)
        }
    }
}

fn recipients(ui: &mut Ui, name: &str, action: RecipientsAction, arg: &str) -> Result<u8> {
    names::vault_name(name)?;
    let given = match action {
        RecipientsAction::List if !arg.is_empty() => {
            return Err(Error::usage("`recipients list` takes no recipient")
                .hint(format!("git loop vault recipients {name} list")))
        }
        RecipientsAction::List => Vec::new(),
        _ => parse_recipients_arg(arg)?,
    };
    let ws = super::workspace()?;
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

fn rekey(ui: &mut Ui, name: &str) -> Result<u8> {
    names::vault_name(name)?;
    let ws = super::workspace()?;
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
