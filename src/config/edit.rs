//! Writing one layer (`git loop config set` and `unset`): what the person typed is read
//! as a value of the key's type, checked against the schema and against what the layer
//! may set ([`super::policy`]), all before anything is written; the file keeps its
//! comments and layout (toml_edit).

use std::path::Path;

use toml::{Table, Value};

use super::{check, policy, schema, Config, ConfigError, Layer, SandboxProfile};
use crate::error::{Error, Result};
use crate::fsutil;
use crate::sandbox::spec::NetMode;
use crate::workspace::Workspace;

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
        return Err(Error::usage(format!("{key} is a section, not a key"))
            .hint(format!("its keys: {}", inside.join(", "))));
    }
    let shown = policy::visible(key);
    let err = Error::usage(format!("unknown config key '{shown}'"));
    let names = schema::known_names();
    Err(
        match schema::did_you_mean(key, names.iter().map(String::as_str)) {
            Some(close) => err
                .hint(format!("did you mean `{close}`?"))
                .hint(format!("known keys: {}", keys.join(", "))),
            None => err.hint(format!("known keys: {}", keys.join(", "))),
        },
    )
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
        let mut err = Error::usage(format!("{key} = {shown} is not valid: {why}"));
        let choices = schema::choices(key);
        if let Some(close) = value
            .as_str()
            .and_then(|v| schema::did_you_mean(v, choices.iter().map(String::as_str)))
        {
            err = err.hint(format!("did you mean `{close}`?"));
        }
        if !choices.is_empty() {
            err = err.hint(format!("{key} takes one of: {}", choices.join(", ")));
        } else if let Some(default) = schema::default_of(key) {
            err = err.hint(format!("the default is {key} = {default}"));
        }
        return Err(err);
    }
    if key == "sandbox.profile" {
        let name = value.as_str().unwrap_or_default();
        match SandboxProfile::load(ws, name) {
            Ok(_) => {}
            Err(ConfigError::UnknownProfile { known, path, .. }) => {
                let mut err =
                    Error::usage(format!("{key} = {shown}: there is no such sandbox profile"))
                        .hint(format!("{} does not exist", path.display()));
                if let Some(close) = schema::did_you_mean(name, known.iter().map(String::as_str)) {
                    err = err.hint(format!("did you mean `{close}`?"));
                }
                return Err(err.hint(format!("the profiles: {}", known.join(", "))));
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
    Err(Error::usage(format!(
        "{key} = {} may only be set in the operator config, not the {layer} config: {}",
        first.shown, first.why
    ))
    .hint(format!(
        "the operator config is {}: git loop config set --operator {key} VALUE",
        operator.display()
    )))
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
            return Err(Error::usage(format!(
                "{key} takes {}, not '{}'",
                match expected.type_str() {
                    "array" => "an array",
                    "integer" => "an integer",
                    "boolean" => "a boolean",
                    "table" => "a table",
                    _ => "a value of another type",
                },
                raw.escape_debug()
            ))
            .hint(format!("the default is {key} = {expected}")));
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
