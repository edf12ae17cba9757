//! Sandbox profiles (DESIGN 1 and 4.2): `knowledge/.loopat/sandboxes/<name>/sandbox.toml`,
//! the team's named toolchain and policy sets, read here and nowhere else.
//!
//! ```toml
//! setup = "npm ci"            # or ["npm", "ci"]: run once in a new loop's sandbox
//! check = "npm test"          # or a list: what says a loop's work is sound (`rebase --agent`, `compare`)
//! limits = { pids = 512, memory = "8G" }   # or [limits] below; sizes as in schema::Size
//! [network]
//! allow_domains = ["registry.example.com", "*.example.org"]
//! [toolchains]
//! enable = ["rustup", "pyenv"]   # or "detected"; absent: what the operator enables
//! caches = "loop"                # or "shared", where the operator shares them
//! ```
//!
//! A profile lives in the team's knowledge repository, so it is held to the team layer's
//! rules ([`super::policy`]): it may narrow, never widen. `limits = "best-effort"` (or
//! `enforce = "best-effort"`) and `allow_domains` entries that are not under a registrable
//! domain are dropped as the profile is read and reported as [`Ignored`]. Its
//! `[toolchains]` picks among the toolchains the operator config enables, and asks for
//! shared caches only where the operator shares them ([`SandboxProfile::toolchain_refusals`],
//! judged once the operator's settings are known).
//!
//! `default` is built in: without a file of its own it is the empty profile. Any other
//! name must have its `sandbox.toml`; an unknown name is an error, never the defaults.

use std::path::PathBuf;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use toml::{Table, Value};

use super::check::{self, Part, Seg};
use super::policy;
use super::schema::{Enforce, Size};
use super::{ConfigError, Ignored, Layer};
use crate::egress::policy::Pattern;
use crate::toolchains::{Caches, Choice, Refused, Selection};
use crate::workspace::Workspace;

pub const BUILTIN: &str = "default";

/// A sandbox profile as the sandbox uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxProfile {
    pub name: String,
    /// Its `sandbox.toml`; `None` for the built-in default.
    pub path: Option<PathBuf>,
    /// The argv of `setup` (a string runs as `sh -c STRING`).
    pub setup: Option<Vec<String>>,
    /// The argv of `check` (the same forms): run in a loop's sandbox to say whether its
    /// work is sound, by `rebase --agent` after a resolution and by `compare`.
    pub check: Option<Vec<String>>,
    pub pids: Option<u64>,
    pub memory: Option<u64>,
    /// `Some(Strict)` narrows an operator's best effort back; best effort itself is the
    /// operator's alone.
    pub enforce: Option<Enforce>,
    /// `[limits] time`: a run (or a live session's agent) is ended after it.
    pub time: Option<std::time::Duration>,
    pub allow_domains: Vec<Pattern>,
    /// `[toolchains] enable`, if set.
    pub toolchains: Option<Selection>,
    /// `[toolchains] caches`, if set.
    pub caches: Option<Caches>,
    /// `[filesystem]`: per-path policy inside the writable roots.
    pub filesystem: crate::sandbox::fspolicy::Filesystem,
    /// What the profile set but may not.
    pub ignored: Vec<Ignored>,
    /// The profile's text, for the lines of what its `[toolchains]` may not have.
    text: String,
}

/// The file as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    #[serde(default)]
    setup: Option<Setup>,
    #[serde(default)]
    check: Option<Setup>,
    #[serde(default)]
    limits: Option<LimitsField>,
    #[serde(default)]
    network: Option<ProfileNetwork>,
    #[serde(default)]
    toolchains: Option<ProfileToolchains>,
    #[serde(default)]
    filesystem: Option<ProfileFilesystem>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFilesystem {
    #[serde(default, deserialize_with = "fs_paths")]
    deny_read: Vec<String>,
    #[serde(default, deserialize_with = "fs_paths")]
    deny_write: Vec<String>,
    #[serde(default, deserialize_with = "fs_paths")]
    allow_write: Vec<String>,
    #[serde(default, deserialize_with = "fs_paths")]
    deny_create: Vec<String>,
}

fn fs_paths<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let raw = Vec::<String>::deserialize(d)?;
    for r in &raw {
        crate::sandbox::fspolicy::check_pattern(r).map_err(D::Error::custom)?;
    }
    Ok(raw)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileToolchains {
    enable: Option<Selection>,
    caches: Option<Caches>,
}

#[derive(Debug)]
struct Setup(Vec<String>);

impl<'de> Deserialize<'de> for Setup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Setup, D::Error> {
        let bad = || {
            D::Error::custom("expected a command line (\"npm ci\") or a list ([\"npm\", \"ci\"])")
        };
        match Value::deserialize(d)? {
            Value::String(cmd) => Ok(Setup(vec!["sh".into(), "-c".into(), cmd])),
            Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(bad()),
                })
                .collect::<Result<_, _>>()
                .map(Setup),
            _ => Err(bad()),
        }
    }
}

#[derive(Debug)]
enum LimitsField {
    BestEffort,
    Table(LimitsTable),
}

impl<'de> Deserialize<'de> for LimitsField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LimitsField, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "best-effort" => Ok(LimitsField::BestEffort),
            Value::Table(t) => LimitsTable::deserialize(Value::Table(t))
                .map(LimitsField::Table)
                .map_err(|e| D::Error::custom(e.message())),
            _ => Err(D::Error::custom(
                "limits takes \"best-effort\" or a table: [limits] pids = 512, memory = \"8G\"",
            )),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitsTable {
    pids: Option<u64>,
    memory: Option<Size>,
    enforce: Option<Enforce>,
    time: Option<TimeLimit>,
}

/// `[limits] time = "30m"`: a duration as `run --timeout` takes it.
#[derive(Debug)]
struct TimeLimit(std::time::Duration);

impl<'de> Deserialize<'de> for TimeLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TimeLimit, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => crate::session::timer::parse(&s)
                .map(TimeLimit)
                .map_err(D::Error::custom),
            Value::Integer(n) if n > 0 => Ok(TimeLimit(std::time::Duration::from_secs(n as u64))),
            _ => Err(D::Error::custom(
                "time takes a duration: \"90s\", \"30m\", \"1h30m\" (or seconds)",
            )),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileNetwork {
    #[serde(default, deserialize_with = "domains")]
    allow_domains: Vec<String>,
}

fn domains<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let raw = Vec::<String>::deserialize(d)?;
    for r in &raw {
        Pattern::parse(r).map_err(D::Error::custom)?;
    }
    Ok(raw)
}

/// The keys of a profile that hold a value.
fn keys() -> Vec<String> {
    [
        "setup",
        "check",
        "limits",
        "network.allow_domains",
        "toolchains.enable",
        "toolchains.caches",
        "filesystem.deny_read",
        "filesystem.deny_write",
        "filesystem.allow_write",
        "filesystem.deny_create",
    ]
    .map(String::from)
    .to_vec()
}

/// Whether `value` suits profile key `key`.
fn check_value(key: &str, value: &Value) -> Result<(), String> {
    let mut table = Table::new();
    super::schema::set(&mut table, key, value.clone());
    ProfileFile::deserialize(Value::Table(table))
        .map(|_| ())
        .map_err(|e| e.message().to_string())
}

impl SandboxProfile {
    /// The built-in `default` profile when the team has not written one.
    pub fn builtin() -> SandboxProfile {
        SandboxProfile {
            name: BUILTIN.into(),
            path: None,
            setup: None,
            check: None,
            pids: None,
            memory: None,
            enforce: None,
            time: None,
            allow_domains: Vec::new(),
            toolchains: None,
            caches: None,
            filesystem: Default::default(),
            ignored: Vec::new(),
            text: String::new(),
        }
    }

    /// Reads profile `name` of the workspace's knowledge repository.
    pub fn load(ws: &Workspace, name: &str) -> Result<SandboxProfile, ConfigError> {
        let path = ws.sandbox_profile(name);
        let unknown = || ConfigError::UnknownProfile {
            name: policy::visible(name),
            path: path.clone(),
            known: names(ws),
        };
        if !crate::loops::is_id_like(name) {
            return Err(unknown());
        }
        // knowledge/ is a tree a sandbox (a distill loop, a teammate's push) writes.
        let Some(text) = check::read_text(&path, true)? else {
            return if name == BUILTIN {
                Ok(SandboxProfile::builtin())
            } else {
                Err(unknown())
            };
        };
        SandboxProfile::parse(name, path, &text)
    }

    /// A profile from the text of its file.
    pub fn parse(name: &str, path: PathBuf, text: &str) -> Result<SandboxProfile, ConfigError> {
        let table = check::parse(&path, text)?;
        let keys = keys();
        check::walk(
            &table,
            &check::Schema {
                keys: &keys,
                check: &check_value,
                choices: &|key| match key {
                    "limits" => vec!["best-effort".into()],
                    "toolchains.caches" => vec!["loop".into(), "shared".into()],
                    _ => Vec::new(),
                },
            },
        )
        .map_err(|p| ConfigError::from_problem(&path, Some(text), &[], p))?;
        let file = ProfileFile::deserialize(Value::Table(table.clone())).map_err(|e| {
            ConfigError::BadValue {
                path: path.clone(),
                line: None,
                key: "the profile".into(),
                message: policy::visible(e.message()),
                suggestion: None,
            }
        })?;

        let mut ignored = Vec::new();
        let mut ignore = |key: &str, at: Vec<Seg>, shown: String, why: String| {
            ignored.push(Ignored {
                layer: Layer::Team,
                path: path.clone(),
                line: check::line_of(text, &at, Part::Value),
                key: key.to_string(),
                shown,
                why,
            })
        };
        let seg = |k: &str| Seg::Key(k.to_string());
        let (mut pids, mut memory, mut enforce, mut time) = (None, None, None, None);
        match file.limits {
            Some(LimitsField::BestEffort) => ignore(
                "limits",
                vec![seg("limits")],
                "\"best-effort\"".into(),
                policy::BEST_EFFORT.into(),
            ),
            Some(LimitsField::Table(t)) => {
                pids = t.pids;
                memory = t.memory.map(|m| m.0);
                time = t.time.map(|t| t.0);
                match t.enforce {
                    Some(Enforce::BestEffort) => ignore(
                        "limits.enforce",
                        vec![seg("limits"), seg("enforce")],
                        "\"best-effort\"".into(),
                        policy::BEST_EFFORT.into(),
                    ),
                    other => enforce = other,
                }
            }
            None => {}
        }
        let raw_domains = file.network.map(|n| n.allow_domains).unwrap_or_default();
        let value = Value::Array(raw_domains.iter().cloned().map(Value::String).collect());
        let refused = policy::domain_refusals("network.allow_domains", &value);
        for r in &refused {
            let i = r.entry.expect("domain refusals are per entry");
            ignore(
                &r.key,
                vec![seg("network"), seg("allow_domains"), Seg::Index(i)],
                r.shown.clone(),
                r.why.clone(),
            );
        }
        let allow_domains = raw_domains
            .iter()
            .enumerate()
            .filter(|(i, _)| !refused.iter().any(|r| r.entry == Some(*i)))
            .map(|(_, raw)| Pattern::parse(raw).expect("checked by the schema"))
            .collect();
        let (toolchains, caches) = file
            .toolchains
            .map(|t| (t.enable, t.caches))
            .unwrap_or_default();
        Ok(SandboxProfile {
            name: name.to_string(),
            setup: file.setup.map(|s| s.0).filter(|argv| !argv.is_empty()),
            check: file.check.map(|s| s.0).filter(|argv| !argv.is_empty()),
            pids,
            memory,
            enforce,
            time,
            allow_domains,
            toolchains,
            caches,
            filesystem: file
                .filesystem
                .map(|f| crate::sandbox::fspolicy::Filesystem {
                    deny_read: f.deny_read,
                    deny_write: f.deny_write,
                    allow_write: f.allow_write,
                    deny_create: f.deny_create,
                })
                .unwrap_or_default(),
            ignored,
            path: Some(path),
            text: text.to_string(),
        })
    }

    /// What of its `[toolchains]` the profile may not have under the operator's `choice`
    /// (the merged settings, where only the operator may enable and share): one
    /// [`Ignored`] each, with its line.
    pub fn toolchain_refusals(&self, choice: &Choice) -> Vec<Ignored> {
        let (_, refused) =
            crate::toolchains::resolve(choice, self.toolchains.as_ref(), self.caches);
        let seg = |k: &str| Seg::Key(k.to_string());
        refused
            .into_iter()
            .map(|r| {
                let (at, key, shown, why) = match r {
                    Refused::Entry { index, toolchain } => (
                        vec![seg("toolchains"), seg("enable"), Seg::Index(index)],
                        "toolchains.enable",
                        format!("\"{toolchain}\""),
                        format!(
                            "{}; the operator config enables {}",
                            crate::toolchains::OPERATOR_ONLY,
                            choice.enable
                        ),
                    ),
                    Refused::Detected => (
                        vec![seg("toolchains"), seg("enable")],
                        "toolchains.enable",
                        "\"detected\"".to_string(),
                        format!(
                            "{}: only {} of what is detected",
                            crate::toolchains::OPERATOR_ONLY,
                            choice.enable
                        ),
                    ),
                    Refused::Shared => (
                        vec![seg("toolchains"), seg("caches")],
                        "toolchains.caches",
                        "\"shared\"".to_string(),
                        crate::toolchains::SHARED_ONLY.to_string(),
                    ),
                };
                Ignored {
                    layer: Layer::Team,
                    path: self.path.clone().unwrap_or_default(),
                    line: check::line_of(&self.text, &at, Part::Value),
                    key: key.into(),
                    shown,
                    why,
                }
            })
            .collect()
    }
}

/// The profiles the workspace has: `default` and every folder of
/// `knowledge/.loopat/sandboxes/` with a `sandbox.toml`, sorted.
///
/// The knowledge repository is filled by teammates' pushes: it is listed through
/// [`crate::confined::Tree`], so a `.loopat` or `sandboxes` that is a link lists nothing
/// (never a host folder's names).
pub fn names(ws: &Workspace) -> Vec<String> {
    use crate::confined::{Kind, Tree};
    let mut names = vec![BUILTIN.to_string()];
    let (root, all) = (ws.knowledge(), ws.sandbox_profiles());
    let Ok(rel) = all.strip_prefix(&root) else {
        return names;
    };
    let tree = Tree::open(&root).ok().flatten();
    let entries = tree
        .as_ref()
        .and_then(|t| t.entries(rel).ok().flatten())
        .unwrap_or_default();
    for (name, kind) in entries {
        let name = name.to_string_lossy().into_owned();
        let has_file = kind == Kind::Dir
            && tree.as_ref().is_some_and(|t| {
                matches!(
                    t.kind(rel.join(&name).join("sandbox.toml")),
                    Ok(Some(Kind::File))
                )
            });
        if crate::loops::is_id_like(&name) && has_file && name != BUILTIN {
            names.push(name);
        }
    }
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SandboxProfile, ConfigError> {
        SandboxProfile::parse("p", PathBuf::from("/k/sandbox.toml"), text)
    }

    #[test]
    fn the_profile_names_follow_no_link_a_push_planted() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "u".into());
        let outside = tmp.path().join("outside");
        for dir in [outside.join("hostname"), ws.sandbox_profile("good")] {
            let dir = if dir.ends_with("sandbox.toml") {
                dir.parent().unwrap().to_path_buf()
            } else {
                dir
            };
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("sandbox.toml"), "").unwrap();
        }
        // A profile folder that is a link, and one whose file is a link.
        std::os::unix::fs::symlink(
            outside.join("hostname"),
            ws.sandbox_profiles().join("linked"),
        )
        .unwrap();
        std::fs::create_dir_all(ws.sandbox_profiles().join("filelink")).unwrap();
        std::os::unix::fs::symlink(
            outside.join("hostname/sandbox.toml"),
            ws.sandbox_profile("filelink"),
        )
        .unwrap();
        assert_eq!(names(&ws), vec!["default".to_string(), "good".into()]);
        // The whole folder of profiles a link to a host folder: nothing of it is listed.
        let sandboxes = ws.sandbox_profiles();
        std::fs::remove_dir_all(&sandboxes).unwrap();
        std::os::unix::fs::symlink(&outside, &sandboxes).unwrap();
        assert_eq!(names(&ws), vec!["default".to_string()]);
    }

    #[test]
    fn a_profile_is_read_whole() {
        let p = parse(
            "setup = \"npm ci\"\n[limits]\npids = 100\nmemory = \"512M\"\n[network]\nallow_domains = [\"registry.example.com\"]\n",
        )
        .unwrap();
        assert_eq!(
            p.setup,
            Some(vec!["sh".into(), "-c".into(), "npm ci".into()])
        );
        assert_eq!((p.pids, p.memory), (Some(100), Some(512 << 20)));
        assert_eq!(p.allow_domains.len(), 1);
        assert!(p.ignored.is_empty());
        let p = parse("setup = [\"make\", \"deps\"]\nlimits = { memory = 1048576 }\n").unwrap();
        assert_eq!(p.setup, Some(vec!["make".into(), "deps".into()]));
        assert_eq!(p.check, None);
        let c = parse("check = \"make test\"\n").unwrap();
        assert_eq!(
            c.check,
            Some(vec!["sh".into(), "-c".into(), "make test".into()])
        );
        let c = parse("check = [\"cargo\", \"test\"]\n").unwrap();
        assert_eq!(c.check, Some(vec!["cargo".into(), "test".into()]));
        assert!(parse("check = 3\n").is_err());
        assert_eq!(p.memory, Some(1 << 20));
    }

    #[test]
    fn a_profile_may_not_widen() {
        let p = parse("limits = \"best-effort\"\n").unwrap();
        assert_eq!(p.enforce, None);
        assert_eq!(p.ignored[0].key, "limits");
        assert_eq!(p.ignored[0].line, Some(1));
        let p = parse("[limits]\npids = 9\nenforce = \"best-effort\"\n[network]\nallow_domains = [\"ok.example.com\", \"*.com\"]\n").unwrap();
        assert_eq!((p.pids, p.enforce), (Some(9), None));
        let keys: Vec<_> = p.ignored.iter().map(|i| (i.key.as_str(), i.line)).collect();
        assert_eq!(
            keys,
            vec![
                ("limits.enforce", Some(3)),
                ("network.allow_domains", Some(5))
            ]
        );
        assert_eq!(p.allow_domains.len(), 1);
        let p = parse("[limits]\nenforce = \"strict\"\n").unwrap();
        assert_eq!(p.enforce, Some(Enforce::Strict));
    }

    #[test]
    fn a_profiles_toolchains_pick_among_the_operators() {
        use crate::toolchains::{Caches, Choice, Selection, Toolchain};
        let p = parse(
            "[toolchains]\nenable = [\n  \"rustup\",\n  \"pyenv\",\n]\ncaches = \"shared\"\n",
        )
        .unwrap();
        assert_eq!(
            p.toolchains,
            Some(Selection::Only(vec![Toolchain::Rustup, Toolchain::Pyenv]))
        );
        assert_eq!(p.caches, Some(Caches::Shared));
        let operator = Choice {
            enable: Selection::Only(vec![Toolchain::Pyenv]),
            caches: Caches::Loop,
        };
        let refused: Vec<_> = p
            .toolchain_refusals(&operator)
            .into_iter()
            .map(|i| (i.key, i.shown, i.line))
            .collect();
        assert_eq!(
            refused,
            vec![
                ("toolchains.enable".into(), "\"rustup\"".into(), Some(3)),
                ("toolchains.caches".into(), "\"shared\"".into(), Some(6)),
            ]
        );
        let everything = Choice {
            enable: Selection::Detected,
            caches: Caches::Shared,
        };
        assert!(p.toolchain_refusals(&everything).is_empty());
        let err = parse("[toolchains]\nenable = [\"rustp\"]\n").unwrap_err();
        assert!(err.to_string().contains("did you mean 'rustup'"), "{err}");
        let err = parse("[toolchains]\ncaches = \"share\"\n").unwrap_err();
        assert!(
            matches!(&err, ConfigError::BadValue { suggestion: Some(s), .. } if s == "shared"),
            "{err:?}"
        );
    }

    #[test]
    fn a_bad_profile_names_its_line() {
        let err = parse("setup = \"x\"\n[limits]\npid = 5\n").unwrap_err();
        assert!(err.to_string().contains("/k/sandbox.toml:2"), "{err}");
        let err = parse("\n\nsetpu = \"x\"\n").unwrap_err();
        assert!(
            matches!(&err, ConfigError::UnknownKey { line: Some(3), suggestion: Some(s), .. } if s == "setup"),
            "{err:?}"
        );
        let err = parse("[limits]\nmemory = \"lots\"\n").unwrap_err();
        assert!(err.to_string().contains("is not a size"), "{err}");
        let err = parse("limits = \"best-efort\"\n").unwrap_err();
        assert!(
            matches!(&err, ConfigError::BadValue { suggestion: Some(s), .. } if s == "best-effort"),
            "{err:?}"
        );
    }
}
