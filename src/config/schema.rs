//! The schema of the configuration: every key, its type, as serde types.
//!
//! One schema serves every reader. [`Settings`] is what the merged layers deserialize
//! into and what commands read (`settings.network.mode`, never a string key). A single
//! key is checked by deserializing the built-in defaults with that one key replaced
//! ([`check_value`]), so `config set` and the reader of a layer's file judge a value by
//! the same rules. The dotted keys themselves are the leaves of `defaults.toml`, which
//! lists every key ([`known_keys`]).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use toml::{Table, Value};

use crate::choice::Choice;
use crate::egress::policy::{Cidr, Pattern, RawAllowed};
use crate::values::Backend;
use crate::values::{NetMode, RunMode};

pub const DEFAULTS: &str = include_str!("defaults.toml");

/// Keys whose value is a table with free keys of its own (a map), not a section.
pub const MAPS: &[&str] = &["network.hosts"];

/// The effective configuration, all layers merged.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub sandbox: SandboxSettings,
    pub network: NetworkSettings,
    pub agent: AgentSettings,
    pub vault: VaultSettings,
    pub limits: LimitSettings,
    pub guard: GuardSettings,
    pub mounts: Vec<MountSpec>,
    pub toolchains: ToolchainSettings,
    pub import: ImportSettings,
    pub publish: PublishSettings,
    pub notify: NotifySettings,
    pub autocommit: AutocommitSettings,
    pub include: IncludeSettings,
    pub ports: PortSettings,
}

/// `[include]`: what `new` copies of the ignored files `.worktreeinclude` names
/// (`crate::include`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IncludeSettings {
    /// A larger file is refused (and `new` with it).
    pub max_file_size: Size,
    /// The most that is copied in all.
    pub max_total_size: Size,
    /// Whether a profile's `include_secrets = true` is honoured. Operator config only: a
    /// profile comes from the team's remote.
    pub allow_secrets: bool,
}

/// `[ports]`: where a live session's forwarded ports listen on the host (`crate::ports`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSettings {
    /// Loopback unless the operator config says otherwise (operator only).
    pub address: IpAddr,
}

/// `[notify]`: what a live session does when its agent needs input, is done or exited.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    pub enabled: bool,
    /// A program the host runs with the loop's id, title and state as its arguments (never
    /// through a shell); empty: `notify-send` where it exists. Operator config only.
    pub command: Vec<String>,
}

/// `[autocommit]`: how much new, untracked content `autocommit` takes into a commit
/// (`crate::autocommit::Bounds`, which they become).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutocommitSettings {
    /// A new untracked file larger than this is left out, with a notice.
    pub max_file_size: Size,
    /// A folder with more new untracked files than this is left out whole, with a notice.
    pub max_new_files_per_folder: usize,
}

/// `[publish]`: how a loop's notes merge into trunk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishSettings {
    /// gitattributes patterns of notes files that only ever get lines appended, merged as
    /// the union of both sides' lines (`crate::publish`).
    #[serde(deserialize_with = "attribute_patterns")]
    pub union: Vec<String>,
}

/// `[import]`: bounds on what the host reads from a loop's repository and fetches from
/// the team's remotes (operator only; see `crate::git::untrusted::Limits` and
/// `crate::sync::Bounds`, which they become).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportSettings {
    /// The largest object inflated from a loop's store or taken from a remote.
    pub max_object_size: Size,
    /// The most of a loop's packs held in memory at once; the largest pack a fetch writes.
    pub max_pack_size: Size,
    /// Seconds one read of a loop's worktree and repository may take.
    pub read_timeout: std::num::NonZeroU64,
}

/// `[toolchains]`: which toolchains of the user's home sandboxes may see, and whose
/// package caches they fill (see `crate::toolchains`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolchainSettings {
    pub enable: crate::toolchains::Selection,
    pub caches: crate::toolchains::Caches,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSettings {
    pub backend: Backend,
    #[serde(deserialize_with = "name")]
    pub profile: String,
    pub mode: RunMode,
    /// Whether a profile's `allow_write = ["**/.git"]` (nested repositories in a loop's
    /// trees) is honoured. Operator config only: a profile comes from the team's remote,
    /// and a nested repository's config is a program a person's git on the host runs.
    pub allow_nested_git: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSettings {
    pub mode: NetMode,
    #[serde(deserialize_with = "patterns")]
    pub allow_domains: Vec<Pattern>,
    #[serde(deserialize_with = "cidrs")]
    pub allow_cidrs: Vec<Cidr>,
    #[serde(deserialize_with = "hosts")]
    pub hosts: BTreeMap<String, IpAddr>,
    /// `host:port` targets a tunnel may carry other protocols than TLS and HTTP to.
    #[serde(deserialize_with = "raw_targets")]
    pub allow_raw_tcp: Vec<RawAllowed>,
    /// A PEM file of CA certificates the proxy trusts besides the host's store when it
    /// speaks TLS to a server for a bound vault entry; empty for none.
    #[serde(deserialize_with = "absolute_or_empty")]
    pub upstream_ca: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardSettings {
    /// Exact values the secret guard lets through (its false positives).
    pub allow: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    #[serde(deserialize_with = "command")]
    pub command: Vec<String>,
    /// Whether a known agent asks before it acts inside the sandbox.
    pub permissions: AgentPermissions,
    /// Whose identity the commits made inside carry.
    pub identity: CommitIdentity,
    /// The author of commits made inside with `identity = "agent"`: "Name <email>"; empty
    /// for the agent's own (Claude, Codex, or "agent").
    #[serde(deserialize_with = "person")]
    pub author: String,
}

/// Whether a known agent asks before it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentPermissions {
    /// The sandbox is the boundary: the agent runs its tools without asking.
    Sandbox,
    /// The agent asks as it would outside a sandbox.
    Ask,
}

/// Whose identity commits made inside carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommitIdentity {
    /// The user's, as their git gives it for the repository: author and committer.
    User,
    /// The agent as author (`agent.author`), the user as committer.
    Agent,
}

/// "Name <email>", or empty.
fn person<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.is_empty() || parse_person(&s).is_some() {
        Ok(s)
    } else {
        Err(D::Error::custom(format!(
            "'{}' is not \"Name <email>\"",
            s.escape_debug()
        )))
    }
}

/// `Name <email>` as its two parts.
pub fn parse_person(s: &str) -> Option<(String, String)> {
    let (name, rest) = s.split_once('<')?;
    let email = rest.strip_suffix('>')?;
    let name = name.trim();
    if name.is_empty()
        || email.is_empty()
        || email.contains(['<', '>', '\n'])
        || name.contains('\n')
    {
        return None;
    }
    Some((name.to_string(), email.to_string()))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VaultSettings {
    /// The vault a new loop uses; "none" for no vault.
    #[serde(deserialize_with = "name")]
    pub default: String,
    /// Every entry a run gets must be bound to hosts (`vault set --for`): an unbound one
    /// is an error.
    pub require_binding: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    pub enforce: Enforce,
}

/// Whether a run may go without caps where they cannot be enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforce {
    /// Refuse to run where pids and memory cannot be capped.
    Strict,
    /// Run uncapped there, and say so in the status line.
    BestEffort,
}

impl crate::choice::Choice for Enforce {
    const ALL: &'static [Self] = &[Enforce::Strict, Enforce::BestEffort];
    fn name(self) -> &'static str {
        match self {
            Enforce::Strict => "strict",
            Enforce::BestEffort => "best-effort",
        }
    }
}

/// One operator `[[mounts]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MountSpec {
    #[serde(deserialize_with = "absolute")]
    pub path: PathBuf,
    #[serde(default, deserialize_with = "absolute_opt")]
    pub inside: Option<PathBuf>,
    #[serde(default)]
    pub mode: MountMode,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MountMode {
    #[default]
    Ro,
    Rw,
}

/// A size in bytes: a number, or text such as "512M" or "8 GiB". K, M, G and T are
/// powers of 1024 with or without `i` and `B`, as in systemd and docker (parse-size's
/// binary mode), so "512M" means what it meant before sizes had a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size(pub u64);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        match Value::deserialize(d)? {
            Value::Integer(n) if n >= 0 => Ok(Size(n as u64)),
            Value::String(s) => parse_size::Config::new()
                .with_binary()
                .parse_size(s.trim())
                .map(Size)
                .map_err(|_| {
                    D::Error::custom(format!(
                        "\"{}\" is not a size: write it like \"8G\", \"512M\" or a number of bytes",
                        s.escape_debug()
                    ))
                }),
            other => Err(D::Error::custom(format!(
                "{other} is not a size: write it like \"8G\", \"512M\" or a number of bytes"
            ))),
        }
    }
}

/// A profile or vault name: letters, digits and `-` (the rule of `new --sandbox`), so a
/// name can never lead out of the folder it names.
fn name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if crate::loops::is_id_like(&s) {
        Ok(s)
    } else {
        Err(D::Error::custom(format!(
            "'{}' is not a valid name: use letters, digits and '-'",
            s.escape_debug()
        )))
    }
}

fn patterns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Pattern>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|raw| Pattern::parse(raw).map_err(D::Error::custom))
        .collect()
}

fn raw_targets<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RawAllowed>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|raw| RawAllowed::parse(raw, "operator allow_raw_tcp").map_err(D::Error::custom))
        .collect()
}

fn cidrs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Cidr>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|raw| raw.parse().map_err(D::Error::custom))
        .collect()
}

fn hosts<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, IpAddr>, D::Error> {
    let raw = BTreeMap::<String, String>::deserialize(d)?;
    let mut out = BTreeMap::new();
    for (name, addr) in raw {
        crate::egress::policy::canonical_host(&name)
            .map_err(|r| D::Error::custom(format!("'{}': {}", name.escape_debug(), r.reason)))?;
        let ip: IpAddr = addr.trim().parse().map_err(|_| {
            D::Error::custom(format!(
                "'{}' needs an IP address, not '{}'",
                name.escape_debug(),
                addr.escape_debug()
            ))
        })?;
        out.insert(name, ip);
    }
    Ok(out)
}

/// gitattributes patterns: one word each, as a line of a gitattributes file takes them.
fn attribute_patterns<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let patterns = Vec::<String>::deserialize(d)?;
    for p in &patterns {
        if p.is_empty()
            || p.starts_with('#')
            || p.starts_with('!')
            || p.chars().any(char::is_whitespace)
        {
            return Err(D::Error::custom(format!(
                "'{}' is not a gitattributes pattern: give paths or patterns without spaces, like \"inbox.md\"",
                p.escape_debug()
            )));
        }
    }
    Ok(patterns)
}

fn command<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let argv = Vec::<String>::deserialize(d)?;
    if argv.first().is_none_or(|p| p.is_empty()) {
        return Err(D::Error::custom(
            "the command is empty: give the program and its arguments, like [\"claude\"]",
        ));
    }
    Ok(argv)
}

fn absolute<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    let p = PathBuf::deserialize(d)?;
    if p.is_absolute() {
        Ok(p)
    } else {
        Err(D::Error::custom(format!(
            "'{}' is not an absolute path",
            p.display()
        )))
    }
}

fn absolute_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    absolute(d).map(Some)
}

/// An absolute path, or "" for none.
fn absolute_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    let s = String::deserialize(d)?;
    if s.is_empty() {
        return Ok(None);
    }
    let p = PathBuf::from(&s);
    if p.is_absolute() {
        Ok(Some(p))
    } else {
        Err(D::Error::custom(format!(
            "'{}' is not an absolute path",
            s.escape_debug()
        )))
    }
}

/// The built-in defaults as a table (parsed once: every command reads them).
pub fn defaults() -> &'static Table {
    static DEFAULTS_TABLE: OnceLock<Table> = OnceLock::new();
    DEFAULTS_TABLE.get_or_init(|| {
        DEFAULTS
            .parse()
            .expect("built-in defaults.toml is valid TOML")
    })
}

impl Settings {
    /// The typed values of a merged table (every key present: the defaults are under it).
    pub fn from_table(table: Table) -> Result<Settings, String> {
        Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| e.message().to_string())
    }

    pub fn defaults() -> Settings {
        Settings::from_table(defaults().clone()).expect("built-in defaults.toml fits the schema")
    }
}

/// Every dotted key, sorted.
pub fn known_keys() -> &'static [String] {
    static KEYS: OnceLock<Vec<String>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = Vec::new();
        leaves(defaults(), "", &mut keys);
        keys.sort();
        keys
    })
}

/// Every dotted key and every section (`sandbox`, `network`), for a did-you-mean.
pub fn known_names() -> Vec<String> {
    let mut names = known_keys().to_vec();
    let sections: Vec<String> = names
        .iter()
        .filter_map(|k| k.rsplit_once('.').map(|(s, _)| s.to_string()))
        .collect();
    names.extend(sections);
    names.sort();
    names.dedup();
    names
}

pub fn is_known(key: &str) -> bool {
    known_keys().iter().any(|k| k == key)
}

/// Is `key` a section (a table of keys) rather than a key of its own?
pub fn is_section(key: &str) -> bool {
    let prefix = format!("{key}.");
    !is_known(key) && known_keys().iter().any(|k| k.starts_with(&prefix))
}

fn leaves(table: &Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in table {
        let key = join(prefix, k);
        match v {
            Value::Table(sub) if !MAPS.contains(&key.as_str()) => leaves(sub, &key, out),
            _ => out.push(key),
        }
    }
}

pub fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

/// The values an enumerated key takes, for a did-you-mean.
pub fn choices(key: &str) -> Vec<String> {
    fn names<T: Choice>() -> Vec<String> {
        T::names().into_iter().map(String::from).collect()
    }
    match key {
        "sandbox.backend" => names::<Backend>(),
        "sandbox.mode" => names::<RunMode>(),
        "network.mode" => names::<NetMode>(),
        "limits.enforce" => names::<Enforce>(),
        "toolchains.caches" => names::<crate::toolchains::Caches>(),
        _ => Vec::new(),
    }
}

/// The built-in default of a key.
pub fn default_of(key: &str) -> Option<Value> {
    lookup(defaults(), key).cloned()
}

/// Whether `value` is a valid value of `key` (a known key): the reason if not.
pub fn check_value(key: &str, value: &Value) -> Result<(), String> {
    let mut table = defaults().clone();
    set(&mut table, key, value.clone());
    Settings::from_table(table).map(|_| ())
}

/// The value at a dotted key of a table.
pub fn lookup<'a>(table: &'a Table, key: &str) -> Option<&'a Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// Sets a dotted key of a table, making the sections on the way.
pub fn set(table: &mut Table, key: &str, value: Value) {
    match key.split_once('.') {
        None => {
            table.insert(key.to_string(), value);
        }
        Some((head, rest)) => {
            let sub = table
                .entry(head.to_string())
                .or_insert_with(|| Value::Table(Table::new()));
            if !sub.is_table() {
                *sub = Value::Table(Table::new());
            }
            set(sub.as_table_mut().expect("made a table above"), rest, value);
        }
    }
}

/// Removes a dotted key of a table; true if it was there.
pub fn remove(table: &mut Table, key: &str) -> bool {
    match key.split_once('.') {
        None => table.remove(key).is_some(),
        Some((head, rest)) => table
            .get_mut(head)
            .and_then(Value::as_table_mut)
            .is_some_and(|t| remove(t, rest)),
    }
}

/// The closest of `candidates` to `word`, if one is close enough to be a typo of it.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_fit_the_schema_and_name_every_key() {
        let s = Settings::defaults();
        assert_eq!(s.sandbox.backend, Backend::Auto);
        assert_eq!(s.network.mode, NetMode::Proxy);
        assert_eq!(s.limits.enforce, Enforce::Strict);
        let keys = known_keys();
        for k in [
            "mounts",
            "network.hosts",
            "network.allow_cidrs",
            "sandbox.backend",
            "limits.enforce",
        ] {
            assert!(keys.contains(&k.to_string()), "{k} in {keys:?}");
        }
        assert!(is_section("network") && !is_section("network.hosts"));
    }

    #[test]
    fn values_are_checked_by_the_schema() {
        let s = |v: &str| Value::String(v.into());
        assert!(check_value("sandbox.backend", &s("none")).is_ok());
        let why = check_value("sandbox.backend", &s("nonee")).unwrap_err();
        assert!(why.contains("nonee"), "{why}");
        assert!(check_value("network.mode", &s("proxxy")).is_err());
        assert!(check_value("sandbox.profile", &s("../x")).is_err());
        assert!(check_value("agent.command", &Value::Array(vec![])).is_err());
        assert!(check_value(
            "network.allow_domains",
            &Value::Array(vec![s("not a domain")])
        )
        .is_err());
        let mut hosts = Table::new();
        hosts.insert("a.test".into(), s("127.0.0.1"));
        assert!(check_value("network.hosts", &Value::Table(hosts.clone())).is_ok());
        hosts.insert("b.test".into(), s("nowhere"));
        assert!(check_value("network.hosts", &Value::Table(hosts)).is_err());
        let mount: Value =
            toml::from_str::<Table>("m = [{ path = \"/x\", mode = \"rx\" }]").unwrap()["m"].clone();
        assert!(check_value("mounts", &mount).is_err());
    }

    #[test]
    fn sizes_are_binary_as_before() {
        let size = |t: &str| Size::deserialize(Value::String(t.into())).map(|s| s.0);
        assert_eq!(size("512M").unwrap(), 512 << 20);
        assert_eq!(size("8 GiB").unwrap(), 8 << 30);
        assert_eq!(size("1024").unwrap(), 1024);
        assert!(size("lots")
            .unwrap_err()
            .to_string()
            .contains("is not a size"));
    }

    #[test]
    fn typos_find_their_key() {
        let keys = known_keys();
        assert_eq!(
            did_you_mean("sandbox.backnd", keys.iter().map(String::as_str)),
            Some("sandbox.backend")
        );
        assert_eq!(
            did_you_mean("proxxy", ["host", "none", "proxy"]),
            Some("proxy")
        );
        assert_eq!(
            did_you_mean("nonee", ["auto", "bwrap", "none"]),
            Some("none")
        );
        assert_eq!(did_you_mean("zzzzzzzz", ["auto", "bwrap", "none"]), None);
    }
}
