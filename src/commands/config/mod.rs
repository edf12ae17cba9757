//! `git loop config`: get, list, set and unset across the layers.

use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::config::{self, edit, schema, Layer};
use crate::error::Result;
use crate::loops;
use crate::ui::Ui;
use crate::workspace::{HostPaths, Workspace};

/// Read and write the layered configuration.
///
/// Layers, later wins: built-in defaults < operator ($XDG_CONFIG_HOME/git-loop/config.toml,
/// or $GIT_LOOP_CONFIG) < team (knowledge/.loopat/config.toml) < personal
/// (personal/<user>/.loopat/config.toml) < loop (the [config] table of loop.toml).
/// Only the operator layer may widen what a sandbox reaches: the host network, address
/// ranges and pins, host mounts, no sandbox, limits on a best-effort basis, and domains
/// that are not under a registrable domain (`*.com`); the other layers may narrow.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the value of KEY (e.g. sandbox.backend).
    Get {
        key: String,
        /// Read as the loop ID sees it.
        #[arg(long, value_name = "ID")]
        r#loop: Option<String>,
        /// Also say which layer the value comes from.
        #[arg(long)]
        show_origin: bool,
    },
    /// Set KEY to VALUE in one layer (default: personal).
    Set {
        key: String,
        /// TOML for lists and numbers (`["codex"]`), plain text for strings.
        value: String,
        #[command(flatten)]
        target: Target,
    },
    /// Remove KEY from one layer (default: personal).
    Unset {
        key: String,
        #[command(flatten)]
        target: Target,
    },
    /// Print every key with its value.
    List {
        /// Read as the loop ID sees it.
        #[arg(long, value_name = "ID")]
        r#loop: Option<String>,
        /// Also say which layer and file each value comes from.
        #[arg(long)]
        show_origin: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Which layer `set` and `unset` write.
#[derive(Debug, clap::Args)]
#[group(multiple = false)]
pub struct Target {
    /// The operator layer (this machine's owner).
    #[arg(long)]
    pub operator: bool,
    /// The team layer, in the knowledge repository (commit and share it yourself).
    #[arg(long)]
    pub team: bool,
    /// The personal layer (the default).
    #[arg(long)]
    pub personal: bool,
    /// The layer of one loop.
    #[arg(long, value_name = "ID")]
    pub r#loop: Option<String>,
}

mod read;
mod write;

pub fn run(ui: &mut Ui, args: ConfigArgs) -> Result<u8> {
    let ws = super::workspace()?;
    match args.action {
        ConfigAction::Get {
            key,
            r#loop,
            show_origin,
        } => read::get(ui, &ws, &key, r#loop.as_deref(), show_origin),
        ConfigAction::List {
            r#loop,
            show_origin,
            json,
        } => read::list(ui, &ws, r#loop.as_deref(), show_origin, json),
        ConfigAction::Set { key, value, target } => write::set(ui, &ws, &key, &value, &target),
        ConfigAction::Unset { key, target } => write::unset(ui, &ws, &key, &target),
    }
}
