//! Reading a configuration file (a layer, or a sandbox profile) against its schema.
//!
//! A file is read ([`read_text`]: the team and personal files and the profiles without
//! following a symlink, a regular file only, bounded), parsed as TOML, then walked key by
//! key ([`walk`]): every key must be one the schema knows, every value must be of its
//! key's type. The first problem found is reported with the file, the line (from the
//! spans of toml's own parser, [`line_of`]) and a did-you-mean.

use std::io::{self, Read};
use std::path::Path;

use toml::{Table, Value};

use super::schema::{self, did_you_mean};
use super::ConfigError;

/// Largest configuration file read: far more than any real one, and a bound on what a
/// planted file can make the host read.
pub const MAX_FILE: u64 = 1 << 20;

/// The text of a file; `None` when it does not exist. `confined`: the file is in a tree
/// a sandbox can write (knowledge, the personal tree), so it is read through
/// [`crate::confined::Tree`] from the folder that holds its `.loopat/` (the tree's root, a
/// path of the workspace's layout): no symlink is followed at any component below it, a
/// symlink or a FIFO standing there counts as absent, and at most [`MAX_FILE`] is read.
pub fn read_text(path: &Path, confined: bool) -> Result<Option<String>, ConfigError> {
    let err = |source: io::Error| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let bytes = if confined {
        let (root, rel) = confined_split(path);
        let tree = match crate::confined::Tree::open(root) {
            Ok(Some(tree)) => tree,
            Ok(None) => return Ok(None),
            Err(e) => return Err(err(io::Error::other(e.to_string()))),
        };
        match tree.read(rel, MAX_FILE) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            // A link or a FIFO where a config file should be is not one.
            Err(crate::confined::ConfinedError::Symlink(_))
            | Err(crate::confined::ConfinedError::NotRegular { .. }) => return Ok(None),
            Err(crate::confined::ConfinedError::TooLarge { .. }) => {
                return Err(ConfigError::TooLarge {
                    path: path.to_path_buf(),
                })
            }
            Err(e) => return Err(err(io::Error::other(e.to_string()))),
        }
    } else {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(err(e)),
        };
        let mut bytes = Vec::new();
        file.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(err)?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(ConfigError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        bytes
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ConfigError::Syntax {
            path: path.to_path_buf(),
            line: None,
            message: "it is not UTF-8 text".into(),
        })
}

/// A confined file's tree root and its path below it: the root is the folder holding the
/// path's last `.loopat` (every layer file and profile lives under one), else the file's
/// own folder.
pub fn confined_split(path: &Path) -> (&Path, &Path) {
    let mut root = path.parent().unwrap_or(Path::new("/"));
    for ancestor in path.ancestors().skip(1) {
        if ancestor.file_name().is_some_and(|n| n == ".loopat") {
            root = ancestor.parent().unwrap_or(Path::new("/"));
            break;
        }
    }
    (root, path.strip_prefix(root).unwrap_or(path))
}

/// Parses the text of `path` as a TOML table.
pub fn parse(path: &Path, text: &str) -> Result<Table, ConfigError> {
    text.parse::<Table>().map_err(|e| ConfigError::Syntax {
        path: path.to_path_buf(),
        line: e.span().map(|s| line_at(text, s.start)),
        message: super::policy::visible(e.message().trim()),
    })
}

/// One step of the way to a value: a key, or the index of an array entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Where a problem is: the key itself (unknown) or its value (bad).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Key,
    Value,
}

/// What is wrong with a table, before it is tied to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The dotted key, as `config get` names it.
    pub key: String,
    pub at: Vec<Seg>,
    pub part: Part,
    /// `None`: the key is unknown. Otherwise what is wrong with the value.
    pub message: Option<String>,
    pub suggestion: Option<String>,
}

/// What a walk needs to know of a schema.
pub struct Schema<'a> {
    /// Every dotted key that holds a value.
    pub keys: &'a [String],
    /// Whether a value suits a key: the reason if not.
    pub check: &'a dyn Fn(&str, &Value) -> Result<(), String>,
    /// The values of an enumerated key, for a did-you-mean.
    pub choices: &'a dyn Fn(&str) -> Vec<String>,
}

/// Every key of `table` that holds a value, with the value, once each is known and of
/// its type; the first problem otherwise.
pub fn walk<'t>(table: &'t Table, schema: &Schema) -> Result<Vec<(String, &'t Value)>, Problem> {
    let mut out = Vec::new();
    walk_in(table, "", &mut Vec::new(), schema, &mut out)?;
    Ok(out)
}

fn walk_in<'t>(
    table: &'t Table,
    prefix: &str,
    at: &mut Vec<Seg>,
    schema: &Schema,
    out: &mut Vec<(String, &'t Value)>,
) -> Result<(), Problem> {
    for (k, v) in table {
        at.push(Seg::Key(k.clone()));
        let key = schema::join(prefix, k);
        let plain = !k.is_empty() && !k.contains('.') && !k.chars().any(char::is_control);
        let section = format!("{key}.");
        if plain && schema.keys.contains(&key) {
            if let Err(message) = (schema.check)(&key, v) {
                return Err(bad_value(&key, v, at, message, schema));
            }
            out.push((key, v));
        } else if plain && schema.keys.iter().any(|k| k.starts_with(&section)) {
            match v {
                Value::Table(sub) => walk_in(sub, &key, at, schema, out)?,
                _ => {
                    return Err(Problem {
                        key: key.clone(),
                        at: at.clone(),
                        part: Part::Value,
                        message: Some(format!(
                            "{key} is a section: write [{key}] and its keys below it"
                        )),
                        suggestion: None,
                    })
                }
            }
        } else {
            let shown = super::policy::visible(&key);
            // Sections are candidates too: `[sandbx]` is a typo of `[sandbox]`.
            let mut names: Vec<&str> = schema.keys.iter().map(String::as_str).collect();
            names.extend(
                schema
                    .keys
                    .iter()
                    .filter_map(|k| k.rsplit_once('.').map(|(s, _)| s)),
            );
            return Err(Problem {
                suggestion: did_you_mean(&key, names).map(str::to_string),
                key: shown,
                at: at.clone(),
                part: Part::Key,
                message: None,
            });
        }
        at.pop();
    }
    Ok(())
}

/// The problem with a bad value, narrowed to the first bad entry of a list so its line
/// can be named, with a did-you-mean for an enumerated value.
fn bad_value(key: &str, v: &Value, at: &[Seg], message: String, schema: &Schema) -> Problem {
    let mut at = at.to_vec();
    let mut message = message;
    if let Value::Array(items) = v {
        for (i, item) in items.iter().enumerate() {
            if let Err(why) = (schema.check)(key, &Value::Array(vec![item.clone()])) {
                at.push(Seg::Index(i));
                message = why;
                break;
            }
        }
    }
    let choices = (schema.choices)(key);
    let suggestion = v
        .as_str()
        .and_then(|s| did_you_mean(s, choices.iter().map(String::as_str)))
        .map(str::to_string);
    Problem {
        key: key.to_string(),
        at,
        part: Part::Value,
        message: Some(message),
        suggestion,
    }
}

/// The 1-based line of byte `offset` of `text`.
pub fn line_at(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line of a key or of its value in `text`, found with toml's spans.
pub fn line_of(text: &str, at: &[Seg], part: Part) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut table = doc.get_ref();
    let mut found: Option<(std::ops::Range<usize>, &DeValue)> = None;
    for (i, seg) in at.iter().enumerate() {
        let last = i + 1 == at.len();
        match seg {
            Seg::Key(name) => {
                let (k, v) = table
                    .iter()
                    .find(|(k, _)| k.get_ref().as_ref() == name.as_str())?;
                let span = if last && part == Part::Key {
                    k.span()
                } else {
                    v.span()
                };
                found = Some((span, v.get_ref()));
            }
            Seg::Index(n) => {
                let Some((_, DeValue::Array(items))) = &found else {
                    return None;
                };
                let item = items.get(*n)?;
                found = Some((item.span(), item.get_ref()));
            }
        }
        if let (Some((_, DeValue::Table(sub))), false) = (&found, last) {
            table = sub;
        }
    }
    found.map(|(span, _)| line_at(text, span.start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_check(text: &str) -> Result<usize, (Problem, Option<usize>)> {
        let keys = schema::known_keys();
        let schema = Schema {
            keys,
            check: &schema::check_value,
            choices: &schema::choices,
        };
        let table: Table = text.parse().unwrap();
        walk(&table, &schema)
            .map(|leaves| leaves.len())
            .map_err(|p| {
                let line = line_of(text, &p.at, p.part);
                (p, line)
            })
    }

    #[test]
    fn every_key_and_value_is_checked() {
        assert_eq!(
            schema_check("[sandbox]\nmode = \"review\"\n[network]\nallow_domains = []\n"),
            Ok(2)
        );
        let (p, line) =
            schema_check("[agent]\ncommand = [\"x\"]\n\n[sandbox]\nbacknd = \"none\"\n")
                .unwrap_err();
        assert_eq!(
            (p.key.as_str(), p.part, line),
            ("sandbox.backnd", Part::Key, Some(5))
        );
        assert_eq!(p.suggestion.as_deref(), Some("sandbox.backend"));
        let (p, line) = schema_check("network.mode = \"proxxy\"\n").unwrap_err();
        assert_eq!(
            (p.key.as_str(), p.part, line),
            ("network.mode", Part::Value, Some(1))
        );
        assert_eq!(p.suggestion.as_deref(), Some("proxy"));
        let (p, line) = schema_check(
            "[network]\nallow_domains = [\n  \"ok.example\",\n  \"not a domain\",\n]\n",
        )
        .unwrap_err();
        assert_eq!((p.key.as_str(), line), ("network.allow_domains", Some(4)));
        let (p, line) =
            schema_check("[[mounts]]\npath = \"/a\"\n\n[[mounts]]\npath = \"/b\"\nmode = \"rx\"\n")
                .unwrap_err();
        assert_eq!((p.key.as_str(), line), ("mounts", Some(4)));
        let (p, _) = schema_check("sandbox = \"x\"\n").unwrap_err();
        assert!(p.message.unwrap().contains("is a section"));
        let (p, _) = schema_check("\"sandbox.backend\" = \"none\"\n").unwrap_err();
        assert_eq!(p.part, Part::Key);
    }
}
