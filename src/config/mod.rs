//! Layered configuration (DESIGN.md section 8): built-in defaults < operator < team <
//! personal < loop, later wins key by key.
//!
//! - [`schema`]: every key and its type (serde); the built-in defaults are
//!   `defaults.toml`, compiled in; commands read the typed [`schema::Settings`];
//! - [`check`]: reading one file against a schema, with file, line and did-you-mean;
//! - [`policy`]: which layer may set what. Only the operator layer (the machine owner's
//!   file, outside the workspace) may widen what a sandbox reaches: what another layer
//!   may not set is dropped as it is read and kept in [`Config::ignored`], for one
//!   warning per run and for `config list --show-origin`, because a team or personal
//!   repository (and so an agent that can write to one) must never grant itself more of
//!   the host;
//! - [`profile`]: the team's sandbox profiles, read in one place.
//!
//! Each layer is checked whole before anything is merged: an unknown key or a bad value
//! in any file is an error naming the file and the line, never a value silently left out.

pub mod check;
pub mod edit;
pub mod policy;
pub mod profile;
pub mod schema;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::values::NetMode;
use check::{Part, Problem, Seg};
pub use profile::SandboxProfile;
pub use schema::Settings;

/// The layers, in the order they apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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

/// `path:line`, or the path alone.
pub(crate) fn at(path: &Path, line: &Option<usize>) -> String {
    match line {
        Some(n) => format!("{}:{n}", path.display()),
        None => path.display().to_string(),
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
    #[error(
        "{path} is larger than {} bytes; it cannot be a configuration file",
        check::MAX_FILE
    )]
    TooLarge { path: PathBuf },
    #[error("{}: not valid TOML: {message}", at(path, line))]
    Syntax {
        path: PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error("{}: unknown key {key}", at(path, line))]
    UnknownKey {
        path: PathBuf,
        line: Option<usize>,
        key: String,
        suggestion: Option<String>,
    },
    #[error("{}: bad value for {key}: {message}", at(path, line))]
    BadValue {
        path: PathBuf,
        line: Option<usize>,
        key: String,
        message: String,
        suggestion: Option<String>,
    },
    #[error("there is no sandbox profile '{name}' ({} does not exist)", path.display())]
    UnknownProfile {
        name: String,
        path: PathBuf,
        known: Vec<String>,
    },
}

impl ConfigError {
    /// The problem of a table read from `path` (whose text, if known, gives the line).
    fn from_problem(path: &Path, text: Option<&str>, prefix: &[Seg], p: Problem) -> ConfigError {
        let mut full = prefix.to_vec();
        full.extend(p.at);
        let line = text.and_then(|t| check::line_of(t, &full, p.part));
        let path = path.to_path_buf();
        match p.message {
            None => ConfigError::UnknownKey {
                path,
                line,
                key: p.key,
                suggestion: p.suggestion,
            },
            // The message may quote the file (`unknown variant ...`), which a sandbox may
            // have written: control characters are made visible before a terminal sees it.
            Some(message) => ConfigError::BadValue {
                path,
                line,
                key: p.key,
                message: policy::visible(&message),
                suggestion: p.suggestion,
            },
        }
    }
}

/// A setting a layer may not make, dropped as it was read (see [`policy`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub layer: Layer,
    pub path: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    /// The value, or the list entry, as written (escaped).
    pub shown: String,
    pub why: String,
}

impl Ignored {
    /// The line that says how the machine's owner sets it where it is allowed, for a key
    /// of the config layers (a profile's own keys have no `config set`).
    pub fn hint(&self) -> Option<String> {
        schema::is_known(&self.key).then(|| {
            format!(
                "only the operator config may set it: git loop config set --operator {} VALUE",
                self.key
            )
        })
    }

    /// The one line a run warns with: the file, the key and why.
    pub fn warning(&self) -> String {
        format!(
            "{}: {} = {} ({} layer) is ignored: {}",
            at(&self.path, &self.line),
            self.key,
            self.shown,
            self.layer,
            self.why
        )
    }
}

/// One layer as loaded: where it came from and what of it applies.
#[derive(Debug, Clone)]
pub struct LayerData {
    pub layer: Layer,
    pub path: Option<PathBuf>,
    pub table: Table,
}

/// All layers, lowest first, and the typed settings they make.
#[derive(Debug, Clone)]
pub struct Config {
    layers: Vec<LayerData>,
    /// What layers set but may not, in layer order; for warnings and `--show-origin`.
    pub ignored: Vec<Ignored>,
    settings: Settings,
    profile: Option<SandboxProfile>,
    /// The operator layer's network mode (or the default's): other layers may only
    /// narrow it.
    ceiling: NetMode,
}

/// A value with where it came from.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub key: String,
    pub value: &'a Value,
    pub layer: Layer,
    pub path: Option<&'a Path>,
}

/// The keys a layer's table sets, each checked against the schema of the layers.
fn layer_keys(table: &Table) -> std::result::Result<Vec<String>, Problem> {
    let walked = check::walk(
        table,
        &check::Schema {
            keys: schema::known_keys(),
            check: &schema::check_value,
            choices: &schema::choices,
        },
    )?;
    Ok(walked.into_iter().map(|(key, _)| key).collect())
}

impl Config {
    /// Builds the stack. `files` are the non-default layers for this command, in any
    /// order (a missing file is an empty layer); `loop_layer` is the `[config]` table of a
    /// loop's record (`loop.toml`), if any.
    pub fn load(
        files: &[(Layer, PathBuf)],
        loop_layer: Option<(PathBuf, Table)>,
    ) -> std::result::Result<Self, ConfigError> {
        Config::build(files, None, loop_layer)
    }

    /// The built-in defaults and an operator layer given as text, named `name` in
    /// messages: for `git loop demo`, whose pinned names must not touch the user's own
    /// operator config. Read by the same rules as the operator's file.
    pub fn with_operator_text(name: &Path, text: &str) -> std::result::Result<Self, ConfigError> {
        Config::build(&[], Some((name, text)), None)
    }

    fn build(
        files: &[(Layer, PathBuf)],
        operator_text: Option<(&Path, &str)>,
        loop_layer: Option<(PathBuf, Table)>,
    ) -> std::result::Result<Self, ConfigError> {
        // Each layer that is not the default: its data, the keys it sets, the text of its
        // file (for the lines of what is ignored) and where its keys sit in that text.
        struct Read {
            data: LayerData,
            keys: Vec<String>,
            text: Option<String>,
            prefix: Vec<Seg>,
        }
        let mut read = Vec::new();
        let given =
            operator_text.map(|(path, text)| (Layer::Operator, path.to_path_buf(), Some(text)));
        let files = files
            .iter()
            .map(|(layer, path)| (*layer, path.clone(), None))
            .chain(given);
        for (layer, ref path, given) in files {
            let layer = &layer;
            // The operator's file is the machine owner's, outside the workspace (and may
            // be a symlink into their dotfiles); the others are in trees a sandbox writes.
            let text = match given {
                Some(text) => Some(text.to_string()),
                None => check::read_text(path, *layer != Layer::Operator)?,
            };
            let table = match &text {
                Some(t) => check::parse(path, t)?,
                None => Table::new(),
            };
            let keys = layer_keys(&table)
                .map_err(|p| ConfigError::from_problem(path, text.as_deref(), &[], p))?;
            read.push(Read {
                data: LayerData {
                    layer: *layer,
                    path: Some(path.clone()),
                    table,
                },
                keys,
                text,
                prefix: Vec::new(),
            });
        }
        if let Some((path, table)) = loop_layer {
            let prefix = vec![Seg::Key("config".into())];
            // The record was read whole by its own reader; its text is read again only
            // for a line to name.
            let text = || check::read_text(&path, true).ok().flatten();
            let keys = layer_keys(&table)
                .map_err(|p| ConfigError::from_problem(&path, text().as_deref(), &prefix, p))?;
            read.push(Read {
                text: if keys.is_empty() { None } else { text() },
                data: LayerData {
                    layer: Layer::Loop,
                    path: Some(path),
                    table,
                },
                keys,
                prefix,
            });
        }
        read.sort_by_key(|r| r.data.layer);

        // The operator's network mode bounds the others'.
        let ceiling = read
            .iter()
            .filter(|r| r.data.layer == Layer::Operator)
            .find_map(|r| schema::lookup(&r.data.table, "network.mode"))
            .or_else(|| schema::lookup(schema::defaults(), "network.mode"))
            .and_then(Value::as_str)
            .and_then(NetMode::from_name)
            .unwrap_or(NetMode::Proxy);
        let mut ignored = Vec::new();
        for r in read.iter_mut().filter(|r| r.data.layer != Layer::Operator) {
            let refused: Vec<(String, policy::Refusal)> = r
                .keys
                .iter()
                .flat_map(|key| {
                    let value = schema::lookup(&r.data.table, key).expect("a key it sets");
                    policy::refusals(r.data.layer, key, value, ceiling)
                        .into_iter()
                        .map(move |refusal| (key.clone(), refusal))
                })
                .collect();
            let path = r.data.path.clone().unwrap_or_default();
            // Entries of a list go from the last, so the indexes stay right.
            let mut dropped = Vec::new();
            for (key, refusal) in refused.iter().rev() {
                let mut segs = r.prefix.clone();
                segs.extend(key.split('.').map(|k| Seg::Key(k.to_string())));
                if let Some(i) = refusal.entry {
                    segs.push(Seg::Index(i));
                }
                let line = r
                    .text
                    .as_deref()
                    .and_then(|t| check::line_of(t, &segs, Part::Value));
                drop_refused(&mut r.data.table, key, refusal.entry);
                dropped.push(Ignored {
                    layer: r.data.layer,
                    path: path.clone(),
                    line,
                    key: key.clone(),
                    shown: refusal.shown.clone(),
                    why: refusal.why.clone(),
                });
            }
            ignored.extend(dropped.into_iter().rev());
        }
        // In the order of the files, so the warnings read like them (the sort is stable:
        // entries of one line keep their order).
        ignored.sort_by(|a, b| (a.layer, &a.path, a.line).cmp(&(b.layer, &b.path, b.line)));

        let mut merged = schema::defaults().clone();
        for r in &read {
            for key in &r.keys {
                if let Some(value) = schema::lookup(&r.data.table, key) {
                    schema::set(&mut merged, key, value.clone());
                }
            }
        }
        // Each value was checked alone; together they cannot fail, but say where if so.
        let settings = Settings::from_table(merged).map_err(|message| ConfigError::BadValue {
            path: read
                .last()
                .and_then(|r| r.data.path.clone())
                .unwrap_or_default(),
            line: None,
            key: "the merged configuration".into(),
            message,
            suggestion: None,
        })?;
        let mut layers = vec![LayerData {
            layer: Layer::Default,
            path: None,
            table: schema::defaults().clone(),
        }];
        layers.extend(read.into_iter().map(|r| r.data));
        Ok(Config {
            layers,
            ignored,
            settings,
            profile: None,
            ceiling,
        })
    }

    /// The built-in defaults alone.
    pub fn defaults() -> Config {
        Config::load(&[], None).expect("the built-in defaults load")
    }

    /// The typed values, all layers merged.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Reads the sandbox profile `name` (see [`SandboxProfile::load`]); what it may not set
    /// joins [`Config::ignored`].
    pub fn load_profile(
        &mut self,
        ws: &crate::workspace::Workspace,
        name: &str,
    ) -> std::result::Result<(), ConfigError> {
        let profile = SandboxProfile::load(ws, name)?;
        self.ignored.extend(profile.ignored.iter().cloned());
        self.ignored
            .extend(profile.toolchain_refusals(&self.settings_toolchains()));
        self.profile = Some(profile);
        Ok(())
    }

    /// The profile [`Config::load_profile`] read. A command that builds a sandbox loads
    /// its loop's profile first; there is no fall-back to the defaults, which is how an
    /// unknown profile name used to run with them.
    pub fn profile(&self) -> &SandboxProfile {
        self.profile
            .as_ref()
            .expect("the command loaded the loop's sandbox profile (load_profile)")
    }

    /// The toolchains of the merged settings, where only the operator may enable any
    /// (`policy`), before the profile narrows them.
    fn settings_toolchains(&self) -> crate::toolchains::Choice {
        let t = &self.settings.toolchains;
        crate::toolchains::Choice {
            enable: t.enable.clone(),
            caches: t.caches,
        }
    }

    /// The toolchains a run of the loaded profile sees: the settings' narrowed by the
    /// profile's `[toolchains]` (what it may not have was reported when it was loaded).
    pub fn toolchains(&self) -> crate::toolchains::Choice {
        let settings = self.settings_toolchains();
        match &self.profile {
            Some(p) => crate::toolchains::resolve(&settings, p.toolchains.as_ref(), p.caches).0,
            None => settings,
        }
    }

    /// The network mode above which the layers after the operator's may not go.
    pub fn ceiling(&self) -> NetMode {
        self.ceiling
    }

    /// The winning value of a dotted key, with its layer.
    pub fn get(&self, key: &str) -> Option<Entry<'_>> {
        self.layers.iter().rev().find_map(|data| {
            schema::lookup(&data.table, key).map(|value| Entry {
                key: key.to_string(),
                value,
                layer: data.layer,
                path: data.path.as_deref(),
            })
        })
    }

    /// Every key with its winning value, sorted by key.
    pub fn list(&self) -> Vec<Entry<'_>> {
        schema::known_keys()
            .iter()
            .filter_map(|k| self.get(k))
            .collect()
    }

    pub fn layers(&self) -> &[LayerData] {
        &self.layers
    }
}

/// Drops a refused key, or one refused entry of its list.
fn drop_refused(table: &mut Table, key: &str, entry: Option<usize>) {
    let Some(i) = entry else {
        schema::remove(table, key);
        return;
    };
    let (parent, last) = key.rsplit_once('.').unwrap_or(("", key));
    let mut holder = Some(table);
    for part in parent.split('.').filter(|p| !p.is_empty()) {
        holder = holder.and_then(|t| match t.get_mut(part) {
            Some(Value::Table(sub)) => Some(sub),
            _ => None,
        });
    }
    if let Some(Value::Array(items)) = holder.and_then(|h| h.get_mut(last)) {
        if i < items.len() {
            items.remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn layer(layer: Layer, text: &str) -> (Layer, PathBuf) {
        let dir = tempfile::tempdir().unwrap().keep();
        let path = dir.join("config.toml");
        std::fs::write(&path, text).unwrap();
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
        let s = config.settings();
        assert_eq!(s.sandbox.profile, "mine");
        assert_eq!(s.sandbox.mode, crate::values::RunMode::Review);
    }

    #[test]
    fn only_the_operator_may_widen() {
        let files = vec![
            layer(
                Layer::Team,
                "[network]\nmode = \"host\"\nallow_cidrs = [\"10.0.0.0/8\"]\nallow_domains = [\"*.com\", \"*.example.com\"]\n",
            ),
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
        let s = config.settings();
        assert_eq!(s.network.allow_cidrs.len(), 1);
        assert_eq!(s.network.mode, NetMode::Proxy);
        assert_eq!(
            s.network
                .allow_domains
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>(),
            vec!["*.example.com"]
        );
        assert!(s.mounts.is_empty());
        let ignored: Vec<_> = config
            .ignored
            .iter()
            .map(|i| (i.layer, i.key.as_str(), i.shown.as_str(), i.line))
            .collect();
        assert_eq!(
            ignored,
            vec![
                (Layer::Team, "network.mode", "\"host\"", Some(2)),
                (
                    Layer::Team,
                    "network.allow_cidrs",
                    "[\"10.0.0.0/8\"]",
                    Some(3)
                ),
                (Layer::Team, "network.allow_domains", "\"*.com\"", Some(4)),
                (Layer::Loop, "mounts", "[{ path = \"/\" }]", None),
            ]
        );
    }

    #[test]
    fn a_bad_file_names_its_line() {
        let files = vec![layer(
            Layer::Team,
            "[agent]\ncommand = [\"x\"]\n[sandbox]\nbacknd = \"none\"\n",
        )];
        let err = Config::load(&files, None).unwrap_err();
        assert!(
            matches!(&err, ConfigError::UnknownKey { line: Some(4), key, suggestion: Some(s), .. }
                if key == "sandbox.backnd" && s == "sandbox.backend"),
            "{err:?}"
        );
        assert!(
            err.to_string()
                .ends_with("config.toml:4: unknown key sandbox.backnd"),
            "{err}"
        );
        // What the file says reaches a terminal with its control characters visible.
        for text in [
            "[sandbox]\nbackend = \"x\\u001b]0;PWNED\\u0007\"\n",
            "[sandbox]\n\"back\\u001b[2Kend\" = 1\n",
        ] {
            let files = vec![layer(Layer::Team, text)];
            let err = Error::from(Config::load(&files, None).unwrap_err());
            let shown = format!("{} {}", err.one_line(), err.hints.join(" "));
            assert!(
                !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
                "{shown}"
            );
            assert!(shown.contains("\\u{1b}"), "{shown}");
        }
    }
}
