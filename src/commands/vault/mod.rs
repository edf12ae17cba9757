use std::fs;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use zeroize::Zeroizing;

use crate::egress::sentinel::Binding as Bound;
use crate::error::{Context, Error, Result};
use crate::fsutil::Lock;
use crate::ui::Ui;
use crate::vault::store::Written;
use crate::vault::{
    self, names, Bad, Decision, Entry, EntryKind, EntryRef, Identity, Vault, VaultError,
};
use crate::workspace::Workspace;

mod args;
mod binding;
mod entry;
mod list;
mod recipients;
mod set;

pub use args::*;
use binding::*;
use entry::*;
use list::*;
use recipients::*;
use set::*;

pub fn run(ui: &mut Ui, args: VaultArgs) -> Result<u8> {
    vault::prepare(ui, &crate::commands::workspace()?)?;
    match args.action {
        VaultAction::Init { vault } => init(ui, &vault),
        VaultAction::List { vault, json } => list(ui, vault.as_deref(), json),
        VaultAction::Set {
            vault,
            kind,
            name,
            path,
            hosts,
            headers,
            unbound,
        } => {
            let binding = Binding::from_args(hosts.as_deref(), &headers, unbound)?;
            set(ui, &vault, kind, &name, path.as_deref(), binding)
        }
        VaultAction::Bind {
            vault,
            entry,
            hosts,
            headers,
            unbound,
        } => bind(
            ui,
            &vault,
            &entry,
            Binding::from_args(hosts.as_deref(), &headers, unbound)?,
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
            action,
            vault,
            recipient,
        } => {
            let (action, vault) = RecipientsAction::order(&action, &vault)?;
            recipients(ui, &vault, action, &recipient.join(" "))
        }
        VaultAction::Rekey { vault } => rekey(ui, &vault),
    }
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
    let ws = crate::commands::workspace()?;
    let id = init_vault(ui, &ws, name)?;
    writeln!(ui.out(), "{}", id.recipient())?;
    Ok(0)
}

fn vault_for_write(ui: &mut Ui, ws: &Workspace, name: &str) -> Result<Vault> {
    vault::open_for_write(ui, ws, name)
}
