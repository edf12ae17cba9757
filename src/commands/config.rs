use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::config::{self, edit, schema, Layer};
use crate::error::Result;
use crate::loops;
use crate::ui::Ui;
use crate::workspace::HostPaths;

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

pub fn run(ui: &mut Ui, args: ConfigArgs) -> Result<u8> {
    let ws = super::workspace()?;
    match args.action {
        ConfigAction::Get {
            key,
            r#loop,
            show_origin,
        } => {
            edit::known(&key)?;
            let rec = match r#loop {
                Some(q) => Some(loops::load(&ws, &loops::resolve(&ws, &q)?)?),
                None => None,
            };
            let cfg = super::load_config(ui, &ws, rec.as_ref())?;
            let Some(entry) = cfg.get(&key) else {
                return Ok(1);
            };
            let origin = if show_origin {
                format!("{}\t", origin_of(entry.layer, entry.path, None))
            } else {
                String::new()
            };
            writeln!(ui.out(), "{origin}{}", display_value(entry.value))?;
            Ok(0)
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
                let mut items: Vec<serde_json::Value> = cfg
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
                if show_origin {
                    items.extend(cfg.ignored.iter().map(|i| {
                        serde_json::json!({
                            "key": i.key,
                            "value": i.shown,
                            "layer": i.layer.to_string(),
                            "path": i.path,
                            "line": i.line,
                            "ignored": i.why,
                        })
                    }));
                }
                return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
            }
            for e in cfg.list() {
                let origin = if show_origin {
                    format!("{}\t", origin_of(e.layer, e.path, None))
                } else {
                    String::new()
                };
                writeln!(ui.out(), "{origin}{}={}", e.key, display_value(e.value))?;
            }
            // What a layer set but may not: shown where it was written, with why.
            if show_origin {
                for i in &cfg.ignored {
                    writeln!(
                        ui.out(),
                        "{}\t{}={}\t(ignored: {})",
                        origin_of(i.layer, Some(&i.path), i.line),
                        i.key,
                        i.shown,
                        i.why
                    )?;
                }
            }
            Ok(0)
        }
        ConfigAction::Set { key, value, target } => {
            edit::known(&key)?;
            let (layer, path) = target_file(&ws, &target)?;
            let operator = HostPaths::from_env()?.operator_config;
            // Everything is checked before anything is written.
            let value = edit::checked_value(&ws, layer, &operator, &key, &value)?;
            if let Some(q) = &target.r#loop {
                let id = loops::resolve(&ws, q)?;
                let mut rec = loops::load(&ws, &id)?;
                schema::set(&mut rec.config, &key, value);
                rec.write(&path)?;
            } else {
                edit::set_in_file(&path, &key, &value, layer != Layer::Operator)?;
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
            edit::known(&key)?;
            let (layer, path) = target_file(&ws, &target)?;
            let removed = if let Some(q) = &target.r#loop {
                let id = loops::resolve(&ws, q)?;
                let mut rec = loops::load(&ws, &id)?;
                let removed = schema::remove(&mut rec.config, &key);
                if removed {
                    rec.write(&path)?;
                }
                removed
            } else {
                edit::unset_in_file(&path, &key, layer != Layer::Operator)?
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

fn origin_of(layer: Layer, path: Option<&Path>, line: Option<usize>) -> String {
    match (path, line) {
        (Some(p), Some(n)) => format!("{layer}:{}:{n}", p.display()),
        (Some(p), None) => format!("{layer}:{}", p.display()),
        _ => layer.to_string(),
    }
}

/// A value as `config get` prints it: strings bare, the rest as TOML on one line.
fn display_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => config::policy::visible(s),
        toml::Value::Table(t) if t.is_empty() => "{}".into(),
        toml::Value::Table(t) => {
            let items: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {v}", toml::Value::String(k.clone())))
                .collect();
            config::policy::visible(&format!("{{ {} }}", items.join(", ")))
        }
        other => config::policy::visible(&other.to_string()),
    }
}
