//! Writing one layer (`git loop config set` and `unset`): what the person typed is read
//! as a value of the key's type, checked against the schema and against what the layer
//! may set ([`super::policy`]), all before anything is written; the file keeps its
//! comments and layout (toml_edit).

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::{check, policy, schema, Config, ConfigError, Layer, SandboxProfile};
use crate::error::{Error, Result};
use crate::fsutil;
use crate::values::NetMode;
use crate::workspace::Workspace;

/// Why what the person typed for `config set` or `unset` is not taken, or why a layer's
/// file cannot be edited.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A section (`network`), where a key was wanted; `keys` are its keys.
    #[error("{key} is a section, not a key")]
    Section { key: String, keys: Vec<String> },
    /// `shown` is the key as typed, made visible; `close` the closest known name.
    #[error("unknown config key '{shown}'")]
    UnknownKey {
        shown: String,
        close: Option<String>,
        keys: Vec<String>,
    },
    /// A value the schema does not take; `choices` of an enumerated key, or its default.
    #[error("{key} = {shown} is not valid: {why}")]
    Invalid {
        key: String,
        shown: String,
        why: String,
        close: Option<String>,
        choices: Vec<String>,
        default: Option<Value>,
    },
    /// A sandbox profile that does not exist (`path`); `known` the profiles there are.
    #[error("{key} = {shown}: there is no such sandbox profile")]
    NoProfile {
        key: String,
        shown: String,
        path: PathBuf,
        close: Option<String>,
        known: Vec<String>,
    },
    /// What only the operator config (`operator`) may set.
    #[error(
        "{key} = {shown} may only be set in the operator config, not the {layer} config: {why}"
    )]
    OperatorOnly {
        key: String,
        shown: String,
        why: String,
        layer: Layer,
        operator: PathBuf,
    },
    /// A value of another type than the key's (`wants`: "an array", ...).
    #[error("{key} takes {wants}, not '{}'", raw.escape_debug())]
    WrongType {
        key: String,
        wants: &'static str,
        raw: String,
        default: Value,
    },
    /// The layer's file itself is not TOML.
    #[error("{} is not valid TOML: {message}", path.display())]
    NotToml { path: PathBuf, message: String },
}

/// A key `config` knows, or a usage error with the closest one.
pub fn known(key: &str) -> Result<()> {
    if schema::is_known(key) {
        return Ok(());
    }
    let keys = schema::known_keys();
    if schema::is_section(key) {
        let prefix = format!("{key}.");
        let inside: Vec<&str> = keys
            .iter()
            .filter(|k| k.starts_with(&prefix))
            .map(String::as_str)
            .collect();
        return Err(EditError::Section {
            key: key.to_string(),
            keys: inside.into_iter().map(String::from).collect(),
        }
        .into());
    }
    let names = schema::known_names();
    Err(EditError::UnknownKey {
        shown: policy::visible(key).to_string(),
        close: schema::did_you_mean(key, names.iter().map(String::as_str)).map(String::from),
        keys: keys.to_vec(),
    }
    .into())
}

/// What `config set KEY RAW` would write into `layer`: a value of the key's type that the
/// schema takes (a profile must exist) and that the layer may set; otherwise a usage
/// error saying why, with the closest valid value or the way to the operator config.
pub fn checked_value(
    ws: &Workspace,
    layer: Layer,
    operator: &Path,
    key: &str,
    raw: &str,
) -> Result<Value> {
    let value = parse_value(key, raw)?;
    check_value(ws, key, &value)?;
    refuse_widening(layer, operator, key, &value)?;
    Ok(value)
}

/// A value the schema takes for `key`, or a usage error saying why, with the closest
/// valid value. A profile must exist.
fn check_value(ws: &crate::workspace::Workspace, key: &str, value: &toml::Value) -> Result<()> {
    let shown = policy::show(value);
    if let Err(why) = schema::check_value(key, value) {
        let choices = schema::choices(key);
        let close = value
            .as_str()
            .and_then(|v| schema::did_you_mean(v, choices.iter().map(String::as_str)))
            .map(String::from);
        return Err(EditError::Invalid {
            key: key.to_string(),
            shown,
            why,
            close,
            choices,
            default: schema::default_of(key),
        }
        .into());
    }
    if key == "sandbox.profile" {
        let name = value.as_str().unwrap_or_default();
        match SandboxProfile::load(ws, name) {
            Ok(_) => {}
            Err(ConfigError::UnknownProfile { known, path, .. }) => {
                return Err(EditError::NoProfile {
                    key: key.to_string(),
                    shown,
                    path,
                    close: schema::did_you_mean(name, known.iter().map(String::as_str))
                        .map(String::from),
                    known,
                }
                .into());
            }
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
}

/// Refuses what only the operator layer may set (see [`policy`]): a usage error naming
/// the operator config.
fn refuse_widening(layer: Layer, operator: &Path, key: &str, value: &Value) -> Result<()> {
    let ceiling = if layer == Layer::Operator {
        NetMode::Host
    } else {
        Config::load(&[(Layer::Operator, operator.to_path_buf())], None)?.ceiling()
    };
    let refused = policy::refusals(layer, key, value, ceiling);
    let Some(first) = refused.first() else {
        return Ok(());
    };
    Err(EditError::OperatorOnly {
        key: key.to_string(),
        shown: first.shown.clone(),
        why: first.why.clone(),
        layer,
        operator: operator.to_path_buf(),
    }
    .into())
}

/// Parses what the user typed for `key`: TOML when the default is not a string (`["codex"]`,
/// `true`, `5`, `{ "a.test" = "127.0.0.1" }`), else the text itself.
pub fn parse_value(key: &str, raw: &str) -> Result<Value> {
    let expected = schema::default_of(key);
    let parsed: Option<Value> = toml::from_str::<Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"));
    let value = match (&expected, parsed) {
        (Some(Value::String(_)), _) | (_, None) => Value::String(raw.to_string()),
        (_, Some(v)) => v,
    };
    if let Some(expected) = &expected {
        // A key may take a word as well as its default's type (`toolchains.enable =
        // "detected"` or a list): the schema says.
        let word = value.is_str() && schema::check_value(key, &value).is_ok();
        if expected.type_str() != value.type_str() && !word {
            return Err(EditError::WrongType {
                key: key.to_string(),
                wants: match expected.type_str() {
                    "array" => "an array",
                    "integer" => "an integer",
                    "boolean" => "a boolean",
                    "table" => "a table",
                    _ => "a value of another type",
                },
                raw: raw.to_string(),
                default: expected.clone(),
            }
            .into());
        }
    }
    Ok(value)
}

/// A TOML value as `toml_edit` writes it into a file.
fn edit_value(value: &Value) -> Result<toml_edit::Value> {
    value
        .to_string()
        .parse::<toml_edit::Value>()
        .map_err(|e| Error::failure("cannot write the value").with_source(e))
}

/// Sets `key` in the TOML file at `path`, keeping its comments and layout. `confined`:
/// the file is in a tree a sandbox can write (see [`check::read_text`]).
pub fn set_in_file(path: &Path, key: &str, value: &Value, confined: bool) -> Result<()> {
    let value = edit_value(value)?;
    let text = check::read_text(path, confined)?.unwrap_or_default();
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::from(EditError::NotToml {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })
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
    write_file(path, &doc.to_string(), confined)
}

/// Writes a layer's file atomically; `confined` as for [`check::read_text`]: in a tree a
/// sandbox can write, no folder on the way is followed if it is a link, and folders
/// missing on the way are made as real folders.
fn write_file(path: &Path, text: &str, confined: bool) -> Result<()> {
    if !confined {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::failure(format!("cannot create {}", dir.display())).with_source(e)
            })?;
        }
        return fsutil::write_atomic(path, text.as_bytes());
    }
    let (root, rel) = check::confined_split(path);
    let fail = |e: crate::confined::ConfinedError| {
        Error::failure(format!("cannot write {}", path.display())).with_source(e)
    };
    let tree = crate::confined::Tree::open(root)
        .map_err(fail)?
        .ok_or_else(|| Error::failure(format!("{} is missing", root.display())))?;
    let mut dir = std::path::PathBuf::new();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        dir.push(part);
        tree.ensure_dir(&dir).map_err(fail)?;
    }
    tree.write_atomic(rel, text.as_bytes(), 0o644).map_err(fail)
}

/// Removes `key` from the TOML file at `path`; true if it was there.
pub fn unset_in_file(path: &Path, key: &str, confined: bool) -> Result<bool> {
    let Some(text) = check::read_text(path, confined)? else {
        return Ok(false);
    };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        Error::from(EditError::NotToml {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })
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
        write_file(path, &doc.to_string(), confined)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn file(text: &str) -> PathBuf {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("config.toml");
        std::fs::write(&path, text).unwrap();
        path
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
        assert!(
            parse_value("network.hosts", "{ \"a.test\" = \"127.0.0.1\" }")
                .unwrap()
                .is_table()
        );
    }

    #[test]
    fn set_keeps_comments() {
        let path = file("# mine\n[agent]\n# which agent\ncommand = [\"claude\"]\n");
        set_in_file(
            &path,
            "agent.command",
            &parse_value("agent.command", "[\"codex\"]").unwrap(),
            true,
        )
        .unwrap();
        set_in_file(
            &path,
            "sandbox.mode",
            &parse_value("sandbox.mode", "review").unwrap(),
            true,
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("# mine") && text.contains("# which agent"),
            "{text}"
        );
        assert!(text.contains("command = [\"codex\"]"), "{text}");
        assert!(text.contains("[sandbox]\nmode = \"review\""), "{text}");
        assert!(unset_in_file(&path, "sandbox.mode", true).unwrap());
        assert!(!unset_in_file(&path, "sandbox.mode", true).unwrap());
    }
}
