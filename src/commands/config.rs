use std::path::PathBuf;

use clap::Subcommand;

use crate::config::{self, Layer};
use crate::error::{Error, Result};
use crate::loops;
use crate::ui::Ui;
use crate::workspace::HostPaths;

/// Read and write the layered configuration.
///
/// Layers, later wins: built-in defaults < operator ($XDG_CONFIG_HOME/git-loop/config.toml,
/// or $GIT_LOOP_CONFIG) < team (knowledge/.loopat/config.toml) < personal
/// (personal/<user>/.loopat/config.toml) < loop (the [config] table of loop.toml).
/// Only the operator layer may add host mounts or widen the network.
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

pub fn run(ui: &mut Ui, args: ConfigArgs) -> Result<u8> {
    let ws = super::workspace()?;
    match args.action {
        ConfigAction::Get {
            key,
            r#loop,
            show_origin,
        } => {
            let rec = match r#loop {
                Some(q) => Some(loops::load(&ws, &loops::resolve(&ws, &q)?)?),
                None => None,
            };
            let cfg = super::load_config(ui, &ws, rec.as_ref())?;
            match cfg.get(&key) {
                Some(entry) => {
                    let origin = if show_origin {
                        format!("{}\t", origin_of(entry.layer, entry.path))
                    } else {
                        String::new()
                    };
                    writeln!(ui.out(), "{origin}{}", display_value(entry.value))?;
                    Ok(0)
                }
                None if config::known_key(&key) => Ok(1),
                None => Err(unknown_key(&key)),
            }
        }
        ConfigAction::List {
            r#loop,
            show_origin,
            json,
        } => {
            let rec = match r#loop {
                Some(q) => Some(loops::load(&ws, &loops::resolve(&ws, &q)?)?),
                None => None,
            };
            let cfg = super::load_config(ui, &ws, rec.as_ref())?;
            if json {
                let items: Vec<serde_json::Value> = cfg
                    .list()
                    .iter()
                    .map(|e| {
                        serde_json::json!({
                            "key": e.key,
                            "value": serde_json::to_value(e.value).unwrap_or_default(),
                            "layer": e.layer.to_string(),
                            "path": e.path,
                        })
                    })
                    .collect();
                return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
            }
            for e in cfg.list() {
                let origin = if show_origin {
                    format!("{}\t", origin_of(e.layer, e.path))
                } else {
                    String::new()
                };
                writeln!(ui.out(), "{origin}{}={}", e.key, display_value(e.value))?;
            }
            Ok(0)
        }
        ConfigAction::Set { key, value, target } => {
            if !config::known_key(&key) {
                return Err(unknown_key(&key));
            }
            let (layer, path) = target_file(&ws, &target)?;
            refuse_widening(layer, &key)?;
            let value = config::parse_value(&key, &value)?;
            if let Some(q) = &target.r#loop {
                let id = loops::resolve(&ws, q)?;
                let mut rec = loops::load(&ws, &id)?;
                set_in_table(&mut rec.config, &key, &value)?;
                rec.write(&path)?;
            } else {
                config::set_in_file(&path, &key, value)?;
            }
            ui.status(format!(
                "set {key} in the {layer} config ({})",
                path.display()
            ))?;
            if layer == Layer::Team {
                ui.status("commit it in the knowledge repository to share it with the team")?;
            }
            Ok(0)
        }
        ConfigAction::Unset { key, target } => {
            if !config::known_key(&key) {
                return Err(unknown_key(&key));
            }
            let (layer, path) = target_file(&ws, &target)?;
            let removed = if let Some(q) = &target.r#loop {
                let id = loops::resolve(&ws, q)?;
                let mut rec = loops::load(&ws, &id)?;
                let removed = remove_from_table(&mut rec.config, &key);
                if removed {
                    rec.write(&path)?;
                }
                removed
            } else {
                config::unset_in_file(&path, &key)?
            };
            if !removed {
                ui.status(format!("{key} was not set in the {layer} config"))?;
            }
            Ok(0)
        }
    }
}

fn target_file(ws: &crate::workspace::Workspace, t: &Target) -> Result<(Layer, PathBuf)> {
    if t.operator {
        return Ok((Layer::Operator, HostPaths::from_env()?.operator_config));
    }
    if t.team {
        return Ok((Layer::Team, ws.team_config()));
    }
    if let Some(q) = &t.r#loop {
        let id = loops::resolve(ws, q)?;
        return Ok((Layer::Loop, ws.loop_record(&id)));
    }
    Ok((Layer::Personal, ws.personal_config()))
}

fn refuse_widening(layer: Layer, key: &str) -> Result<()> {
    if layer != Layer::Operator && config::OPERATOR_ONLY.contains(&key) {
        return Err(Error::usage(format!(
            "{key} may only be set in the operator config, not the {layer} config"
        ))
        .hint(format!("git loop config set --operator {key} VALUE")));
    }
    Ok(())
}

fn unknown_key(key: &str) -> Error {
    Error::usage(format!("unknown config key '{key}'"))
        .hint(format!("known keys: {}", config::known_keys().join(", ")))
}

fn origin_of(layer: Layer, path: Option<&std::path::Path>) -> String {
    match path {
        Some(p) => format!("{layer}:{}", p.display()),
        None => layer.to_string(),
    }
}

fn display_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn set_in_table(table: &mut toml::Table, key: &str, value: &toml_edit::Value) -> Result<()> {
    let parsed: toml::Value = value
        .to_string()
        .trim()
        .parse::<toml::Value>()
        .or_else(|_| toml::from_str::<toml::Table>(&format!("v = {value}")).map(|t| t["v"].clone()))
        .map_err(|e| Error::failure("cannot store the value").with_source(e))?;
    let mut parts = key.split('.').peekable();
    let mut current = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            current.insert(part.to_string(), parsed);
            return Ok(());
        }
        current = current
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .ok_or_else(|| {
                Error::failure(format!("{key}: a value stands where a table is needed"))
            })?;
    }
    Ok(())
}

fn remove_from_table(table: &mut toml::Table, key: &str) -> bool {
    match key.split_once('.') {
        None => table.remove(key).is_some(),
        Some((head, rest)) => table
            .get_mut(head)
            .and_then(toml::Value::as_table_mut)
            .is_some_and(|t| remove_from_table(t, rest)),
    }
}
