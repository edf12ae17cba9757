//! Layered configuration (DESIGN.md section 8): built-in defaults < operator < team <
//! personal < loop, later wins. Each layer is a TOML table; values merge key by key.
//!
//! Only the operator layer (the machine owner's file, outside the workspace) may add host
//! mounts or widen what the network reaches: those keys in any other layer are ignored with
//! a warning, because a team or personal repository (and so an agent that can write to one)
//! must never be able to grant itself more of the host.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::fsutil;

const DEFAULTS: &str = include_str!("defaults.toml");

/// Keys that only the operator layer may set.
/// `sandbox.backend` is among them: running without a sandbox is the machine owner's
/// decision (or the user's, per command, with `--backend none`), never a file's that a
/// repository or an agent could write.
pub const OPERATOR_ONLY: &[&str] = &[
    // Exact values the secret guard lets through (false positives): in any other layer
    // they would let an agent take a real secret out.
    "guard.allow",
    // Bounds on host-side reads of loops' repositories: raising them from a layer a
    // sandbox can write would let an agent exhaust the host.
    "import.max_object_size",
    "import.max_pack_size",
    "import.read_timeout",
    "mounts",
    "network.allow_cidrs",
    "network.hosts",
    "sandbox.backend",
];

/// The layers, in the order they apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Layer {
    Default,
    Operator,
    Team,
    Personal,
    Loop,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::Default => "default",
            Layer::Operator => "operator",
            Layer::Team => "team",
            Layer::Personal => "personal",
            Layer::Loop => "loop",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
}

/// One layer as loaded: where it came from and what it says.
#[derive(Debug, Clone)]
pub struct LayerData {
    pub layer: Layer,
    pub path: Option<PathBuf>,
    pub table: Table,
}

/// All layers, lowest first.
#[derive(Debug, Clone)]
pub struct Config {
    layers: Vec<LayerData>,
    /// Keys ignored because a layer may not set them; for warnings.
    pub ignored: Vec<(Layer, PathBuf, String)>,
}

/// A value with where it came from.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub key: String,
    pub value: &'a Value,
    pub layer: Layer,
    pub path: Option<&'a Path>,
}

pub fn defaults() -> Table {
    DEFAULTS
        .parse()
        .expect("built-in defaults.toml is valid TOML")
}

/// Reads a TOML file; a missing file is an empty table.
pub fn read_table(path: &Path) -> Result<Table, ConfigError> {
    match fs::read_to_string(path) {
        Ok(text) => text.parse::<Table>().map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Table::new()),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

impl Config {
    /// Builds the stack. `files` are the non-default layers that exist for this command,
    /// in any order; `loop_layer` is the `[config]` table of a loop's record, if any.
    pub fn load(files: &[(Layer, PathBuf)], loop_layer: Option<(PathBuf, Table)>) -> Result<Self> {
        let mut layers = vec![LayerData {
            layer: Layer::Default,
            path: None,
            table: defaults(),
        }];
        for (layer, path) in files {
            let table = read_table(path).map_err(|e| {
                Error::failure("cannot load the configuration")
                    .with_source(e)
                    .hint(format!("fix or remove {}", path.display()))
            })?;
            layers.push(LayerData {
                layer: *layer,
                path: Some(path.clone()),
                table,
            });
        }
        if let Some((path, table)) = loop_layer {
            layers.push(LayerData {
                layer: Layer::Loop,
                path: Some(path),
                table,
            });
        }
        layers.sort_by_key(|l| l.layer);
        let mut ignored = Vec::new();
        for data in layers.iter_mut() {
            if matches!(data.layer, Layer::Default | Layer::Operator) {
                continue;
            }
            for key in OPERATOR_ONLY {
                if remove_key(&mut data.table, key) {
                    ignored.push((
                        data.layer,
                        data.path.clone().unwrap_or_default(),
                        key.to_string(),
                    ));
                }
            }
        }
        Ok(Config { layers, ignored })
    }

    /// The winning value of a dotted key.
    pub fn get(&self, key: &str) -> Option<Entry<'_>> {
        self.layers.iter().rev().find_map(|data| {
            lookup(&data.table, key).map(|value| Entry {
                key: key.to_string(),
                value,
                layer: data.layer,
                path: data.path.as_deref(),
            })
        })
    }

    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|e| e.value.as_str())
    }

    /// Every leaf key with its winning value, sorted by key.
    pub fn list(&self) -> Vec<Entry<'_>> {
        let mut keys = Vec::new();
        for data in &self.layers {
            leaf_keys(&data.table, "", &mut keys);
        }
        keys.sort();
        keys.dedup();
        keys.iter().filter_map(|k| self.get(k)).collect()
    }

    pub fn layers(&self) -> &[LayerData] {
        &self.layers
    }
}

fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

fn remove_key(table: &mut Table, key: &str) -> bool {
    match key.split_once('.') {
        None => table.remove(key).is_some(),
        Some((head, rest)) => match table.get_mut(head).and_then(Value::as_table_mut) {
            Some(sub) => remove_key(sub, rest),
            None => false,
        },
    }
}

fn leaf_keys(table: &Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            Value::Table(sub) if !OPERATOR_ONLY.contains(&key.as_str()) => {
                leaf_keys(sub, &key, out)
            }
            _ => out.push(key),
        }
    }
}

/// Is `key` one that `config set` accepts?
pub fn known_key(key: &str) -> bool {
    OPERATOR_ONLY.contains(&key) || lookup(&defaults(), key).is_some_and(|v| !v.is_table())
}

pub fn known_keys() -> Vec<String> {
    let mut keys = Vec::new();
    leaf_keys(&defaults(), "", &mut keys);
    keys.extend(OPERATOR_ONLY.iter().map(|k| k.to_string()));
    keys.sort();
    keys
}

/// Parses what the user typed for `key`: TOML when it parses as TOML of the default's
/// type (`["codex"]`, `true`, `5`), else a plain string.
pub fn parse_value(key: &str, raw: &str) -> Result<toml_edit::Value> {
    let defaults = defaults();
    let expected = lookup(&defaults, key);
    let parsed: Option<toml_edit::Value> = raw.parse().ok();
    let value = match (expected, parsed) {
        (Some(Value::String(_)), _) | (None, None) => toml_edit::Value::from(raw),
        (_, Some(v)) => v,
        (Some(_), None) => toml_edit::Value::from(raw),
    };
    if let Some(expected) = expected {
        let same_type = matches!(
            (expected, &value),
            (Value::String(_), toml_edit::Value::String(_))
                | (Value::Integer(_), toml_edit::Value::Integer(_))
                | (Value::Boolean(_), toml_edit::Value::Boolean(_))
                | (Value::Array(_), toml_edit::Value::Array(_))
                | (Value::Float(_), toml_edit::Value::Float(_))
        );
        if !same_type {
            return Err(Error::usage(format!(
                "{key} takes {}, not '{raw}'",
                match expected.type_str() {
                    "array" => "an array",
                    "integer" => "an integer",
                    other =>
                        if other == "boolean" {
                            "a boolean"
                        } else {
                            "a value of another type"
                        },
                }
            ))
            .hint(format!("the default is {key} = {expected}")));
        }
    }
    Ok(value)
}

/// Sets `key` in the TOML file at `path`, keeping its comments and layout.
pub fn set_in_file(path: &Path, key: &str, value: toml_edit::Value) -> Result<()> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(Error::failure(format!("cannot read {}", path.display())).with_source(e))
        }
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::failure(format!(
            "{} is not valid TOML: {}",
            path.display(),
            e.message()
        ))
        .hint(format!("fix or remove {}", path.display()))
    })?;
    let parts: Vec<&str> = key.split('.').collect();
    let (last, heads) = parts.split_last().expect("split yields one part");
    let mut item = doc.as_item_mut();
    for head in heads {
        let table = item.as_table_like_mut().ok_or_else(|| {
            Error::failure(format!(
                "{} holds a value where {key} needs a table",
                path.display()
            ))
        })?;
        if table.get(head).is_none() {
            table.insert(head, toml_edit::Item::Table(toml_edit::Table::new()));
        }
        item = table.get_mut(head).expect("inserted above");
    }
    let table = item.as_table_like_mut().ok_or_else(|| {
        Error::failure(format!(
            "{} holds a value where {key} needs a table",
            path.display()
        ))
    })?;
    match table.get_mut(last) {
        // Replacing the item in place keeps the key and the comment above it.
        Some(item) => *item = toml_edit::Item::Value(value),
        None => {
            table.insert(last, toml_edit::Item::Value(value));
        }
    }
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| {
            Error::failure(format!("cannot create {}", dir.display())).with_source(e)
        })?;
    }
    fsutil::write_atomic(path, doc.to_string().as_bytes())
}

/// Removes `key` from the TOML file at `path`; true if it was there.
pub fn unset_in_file(path: &Path, key: &str) -> Result<bool> {
    let Ok(text) = fs::read_to_string(path) else {
        return Ok(false);
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::failure(format!(
            "{} is not valid TOML: {}",
            path.display(),
            e.message()
        ))
    })?;
    let parts: Vec<&str> = key.split('.').collect();
    let (last, heads) = parts.split_last().expect("split yields one part");
    let mut item = doc.as_item_mut();
    for head in heads {
        match item.as_table_like_mut().and_then(|t| t.get_mut(head)) {
            Some(next) => item = next,
            None => return Ok(false),
        }
    }
    let removed = item
        .as_table_like_mut()
        .and_then(|t| t.remove(last))
        .is_some();
    if removed {
        fsutil::write_atomic(path, doc.to_string().as_bytes())?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(layer: Layer, text: &str) -> (Layer, PathBuf) {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("config.toml");
        fs::write(&path, text).unwrap();
        (layer, path)
    }

    #[test]
    fn later_layers_win_key_by_key() {
        let files = vec![
            layer(Layer::Personal, "[sandbox]\nprofile = \"mine\"\n"),
            layer(
                Layer::Operator,
                "[sandbox]\nprofile = \"ops\"\nmode = \"review\"\n",
            ),
        ];
        let config = Config::load(&files, None).unwrap();
        let profile = config.get("sandbox.profile").unwrap();
        assert_eq!(profile.value.as_str(), Some("mine"));
        assert_eq!(profile.layer, Layer::Personal);
        let mode = config.get("sandbox.mode").unwrap();
        assert_eq!(mode.value.as_str(), Some("review"));
        assert_eq!(mode.layer, Layer::Operator);
        assert_eq!(config.get("agent.command").unwrap().layer, Layer::Default);
    }

    #[test]
    fn only_the_operator_may_widen() {
        let files = vec![
            layer(Layer::Team, "[network]\nallow_cidrs = [\"10.0.0.0/8\"]\n"),
            layer(
                Layer::Operator,
                "[network]\nallow_cidrs = [\"10.1.0.0/16\"]\n",
            ),
        ];
        let config = Config::load(
            &files,
            Some((
                PathBuf::from("loop.toml"),
                "[[mounts]]\npath = \"/\"\n".parse().unwrap(),
            )),
        )
        .unwrap();
        let cidrs = config.get("network.allow_cidrs").unwrap();
        assert_eq!(cidrs.layer, Layer::Operator);
        assert_eq!(
            cidrs.value.as_array().unwrap()[0].as_str(),
            Some("10.1.0.0/16")
        );
        assert!(config.get("mounts").is_none());
        let ignored: Vec<_> = config
            .ignored
            .iter()
            .map(|(l, _, k)| (*l, k.as_str()))
            .collect();
        assert_eq!(
            ignored,
            vec![
                (Layer::Team, "network.allow_cidrs"),
                (Layer::Loop, "mounts")
            ]
        );
    }

    #[test]
    fn values_keep_the_default_type() {
        assert_eq!(
            parse_value("sandbox.backend", "none").unwrap().as_str(),
            Some("none")
        );
        assert!(parse_value("agent.command", "[\"codex\", \"--x\"]")
            .unwrap()
            .is_array());
        assert!(parse_value("agent.command", "codex").is_err());
    }

    #[test]
    fn set_keeps_comments() {
        let (_, path) = layer(
            Layer::Personal,
            "# mine\n[agent]\n# which agent\ncommand = [\"claude\"]\n",
        );
        set_in_file(
            &path,
            "agent.command",
            parse_value("agent.command", "[\"codex\"]").unwrap(),
        )
        .unwrap();
        set_in_file(
            &path,
            "sandbox.mode",
            parse_value("sandbox.mode", "review").unwrap(),
        )
        .unwrap();
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("# mine") && text.contains("# which agent"),
            "{text}"
        );
        assert!(text.contains("command = [\"codex\"]"), "{text}");
        assert!(text.contains("[sandbox]\nmode = \"review\""), "{text}");
        assert!(unset_in_file(&path, "sandbox.mode").unwrap());
        assert!(!unset_in_file(&path, "sandbox.mode").unwrap());
    }
}
