//! Toolchains under the user's home folder (rustup and cargo, pyenv, nvm, mise, a home npm
//! prefix), made visible inside a loop's sandbox: read-only at their own paths, with PATH
//! and the tools' variables set, never their credential files; their package caches the
//! loop's own, or the host's where the operator lets them be shared.
//!
//! How the pieces fit:
//!
//! - [`detect`] looks at a [`Host`] (the home folder, the variables the tools read, and a
//!   [`Files`] view of the disk that tests build by hand) and says what is installed where
//!   ([`Found`]). It is pure over that description.
//! - Which toolchains a loop sees is the operator's and the profile's choice
//!   ([`resolve`]): the operator config's `[toolchains] enable` names what sandboxes may
//!   see at all (`"detected"`: whatever is found), and the sandbox profile's
//!   `[toolchains] enable` picks among those (absent: all of them). Binding a folder of
//!   the user's home is a widening of what a sandbox sees, so it is the machine owner's
//!   call alone (DESIGN 4.0, `config::policy`): a team profile, pushed by a teammate or
//!   written by a distill loop, may narrow the operator's list and never extend it. The
//!   same holds for `caches = "shared"`, which binds host folders read-write, and through
//!   which a loop's downloads reach other loops' builds and the user's own builds on the
//!   host.
//! - [`plan`] turns what is found and chosen into mounts, PATH entries and variables for
//!   the sandbox's spec (`sandbox::spec`), so `show --mounts` lists them and argv tests
//!   compare them. Pure as well; [`for_run`] is the thin layer that reads the real host.
//!
//! What is bound: rustup's `RUSTUP_HOME` and only the `bin/` of `CARGO_HOME` (the rest of
//! it holds `credentials.toml`, a `config.toml` that may hold registry tokens, and the
//! download cache); pyenv's, nvm's and mise's folders; the npm prefix folder, never the
//! `.npmrc` that names it (it holds registry tokens). Any credential file that a bound
//! folder still holds ([`credential_files`]) is covered with an empty read-only file.
//! No folder that is (or holds) the home folder, or that holds the workspace, the age
//! identity or the operator config, is ever bound ([`Host::guard`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use toml::Value;

use crate::sandbox::spec::Mount;

/// A kind of toolchain git loop knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Toolchain {
    /// rustup and cargo (`RUSTUP_HOME`, `CARGO_HOME`).
    #[serde(rename = "rustup")]
    Rustup,
    /// pyenv (`PYENV_ROOT`).
    #[serde(rename = "pyenv")]
    Pyenv,
    /// nvm (`NVM_DIR`), with the default node version on PATH.
    #[serde(rename = "nvm")]
    Nvm,
    /// mise (`MISE_DATA_DIR`), through its shims.
    #[serde(rename = "mise")]
    Mise,
    /// npm's global prefix in the home folder (`prefix=` of `~/.npmrc`).
    #[serde(rename = "npm-prefix")]
    NpmPrefix,
}

impl Toolchain {
    pub const ALL: [Toolchain; 5] = [
        Toolchain::Rustup,
        Toolchain::Pyenv,
        Toolchain::Nvm,
        Toolchain::Mise,
        Toolchain::NpmPrefix,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Toolchain::Rustup => "rustup",
            Toolchain::Pyenv => "pyenv",
            Toolchain::Nvm => "nvm",
            Toolchain::Mise => "mise",
            Toolchain::NpmPrefix => "npm-prefix",
        }
    }

    pub fn parse(s: &str) -> Option<Toolchain> {
        Toolchain::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The package caches the toolchain's tools fill.
    fn caches(self) -> &'static [Cache] {
        match self {
            Toolchain::Rustup => &[Cache::Cargo],
            Toolchain::Pyenv => &[Cache::Pip],
            Toolchain::Nvm | Toolchain::NpmPrefix => &[Cache::Npm],
            Toolchain::Mise => &[Cache::Pip, Cache::Npm],
        }
    }
}

impl fmt::Display for Toolchain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn names() -> String {
    Toolchain::ALL.map(Toolchain::name).join(", ")
}

impl<'de> Deserialize<'de> for Toolchain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Toolchain, D::Error> {
        let s = String::deserialize(d)?;
        Toolchain::parse(&s).ok_or_else(|| {
            let close = crate::config::schema::did_you_mean(&s, Toolchain::ALL.map(|t| t.name()));
            D::Error::custom(format!(
                "'{}' is not a toolchain git loop knows{} (the toolchains: {})",
                s.escape_debug(),
                close
                    .map(|c| format!("; did you mean '{c}'?"))
                    .unwrap_or_default(),
                names()
            ))
        })
    }
}

/// `toolchains.enable`: which toolchains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// Every one found on the host.
    Detected,
    /// These (when found).
    Only(Vec<Toolchain>),
}

impl Selection {
    pub fn admits(&self, t: Toolchain) -> bool {
        match self {
            Selection::Detected => true,
            Selection::Only(list) => list.contains(&t),
        }
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selection::Detected => f.write_str("\"detected\""),
            Selection::Only(list) => write!(
                f,
                "[{}]",
                list.iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Selection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Selection, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "detected" => Ok(Selection::Detected),
            Value::Array(items) => {
                let mut list = Vec::new();
                for item in items {
                    let t =
                        Toolchain::deserialize(item).map_err(|e| D::Error::custom(e.message()))?;
                    if !list.contains(&t) {
                        list.push(t);
                    }
                }
                Ok(Selection::Only(list))
            }
            _ => Err(D::Error::custom(format!(
                "toolchains.enable takes \"detected\" or a list of toolchains ({})",
                names()
            ))),
        }
    }
}

/// `toolchains.caches`: whose package caches a loop's tools fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Caches {
    /// The loop's own, in its `$HOME`: nothing one loop downloads reaches another.
    Loop,
    /// The host's cache folders, read-write (operator only): downloads are shared, and so
    /// is whatever a loop puts there.
    Shared,
}

impl Caches {
    pub fn as_str(self) -> &'static str {
        match self {
            Caches::Loop => "loop",
            Caches::Shared => "shared",
        }
    }
}

/// A package cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Cache {
    /// cargo's registry and git checkouts.
    Cargo,
    Pip,
    Npm,
}

/// What a run uses: the toolchains it may see and whose caches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub enable: Selection,
    pub caches: Caches,
}

/// What the profile asked for and may not have, with why (the profile reports it with its
/// file and line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Entry `index` of the profile's `enable` list.
    Entry { index: usize, toolchain: Toolchain },
    /// `enable = "detected"` where the operator named a list: narrowed to that list.
    Detected,
    /// `caches = "shared"`.
    Shared,
}

/// Only the operator config may widen what a sandbox sees.
pub const OPERATOR_ONLY: &str = "only the operator config may show sandboxes the host's toolchains; a sandbox profile picks among those its toolchains.enable names";
pub const SHARED_ONLY: &str = "only the operator config may share the host's package caches with sandboxes (what one loop puts there reaches other loops' builds and the host's)";

/// The operator's (merged settings') choice narrowed by the profile's; what the profile
/// asked beyond it.
pub fn resolve(
    settings: &Choice,
    profile_enable: Option<&Selection>,
    profile_caches: Option<Caches>,
) -> (Choice, Vec<Refused>) {
    let mut refused = Vec::new();
    let enable = match (profile_enable, &settings.enable) {
        (None, ceiling) => ceiling.clone(),
        (Some(Selection::Detected), ceiling) => {
            if *ceiling != Selection::Detected {
                refused.push(Refused::Detected);
            }
            ceiling.clone()
        }
        (Some(Selection::Only(list)), ceiling) => {
            let mut kept = Vec::new();
            for (index, t) in list.iter().enumerate() {
                if ceiling.admits(*t) {
                    kept.push(*t);
                } else {
                    refused.push(Refused::Entry {
                        index,
                        toolchain: *t,
                    });
                }
            }
            Selection::Only(kept)
        }
    };
    let caches = match profile_caches {
        Some(Caches::Shared) if settings.caches != Caches::Shared => {
            refused.push(Refused::Shared);
            settings.caches
        }
        Some(c) => c,
        None => settings.caches,
    };
    (Choice { enable, caches }, refused)
}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
}

/// The disk, as far as detection looks at it. [`Disk`] is the real one; tests build their
/// own.
pub trait Files {
    /// What is at `path`, links followed.
    fn kind(&self, path: &Path) -> Option<Kind>;
    /// The text of a small file.
    fn read(&self, path: &Path) -> Option<String>;
    /// The names in a folder, sorted.
    fn list(&self, path: &Path) -> Vec<String>;
    /// Where a symlink points, as written.
    fn link(&self, path: &Path) -> Option<PathBuf>;
    /// `path` with every link resolved (itself when it cannot be).
    fn real(&self, path: &Path) -> PathBuf;
}

/// The most of a tool's small file (an `.npmrc`, nvm's alias, mise's config) read.
const MAX_READ: u64 = 256 << 10;

/// The host's own disk. What it reads is the user's home, which no sandbox writes (a
/// shared cache is bound, never read).
pub struct Disk;

impl Files for Disk {
    fn kind(&self, path: &Path) -> Option<Kind> {
        let m = std::fs::metadata(path).ok()?;
        if m.is_dir() {
            Some(Kind::Dir)
        } else if m.is_file() {
            Some(Kind::File)
        } else {
            None
        }
    }
    fn read(&self, path: &Path) -> Option<String> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        // Links are followed (dotfiles are often links), but only a regular file is read,
        // opened without blocking: a folder the user granted a loop read-write could hold
        // a FIFO where a tool's file should be.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .ok()?;
        if !f.metadata().ok()?.is_file() {
            return None;
        }
        let mut text = String::new();
        f.take(MAX_READ).read_to_string(&mut text).ok()?;
        Some(text)
    }
    fn list(&self, path: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }
    fn link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }
    fn real(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// The variables detection reads from the host's environment.
pub const VARS: &[&str] = &[
    "RUSTUP_HOME",
    "CARGO_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "MISE_DATA_DIR",
    "MISE_CONFIG_DIR",
    "MISE_GLOBAL_CONFIG_FILE",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
    "NPM_CONFIG_USERCONFIG",
    "npm_config_userconfig",
    "NPM_CONFIG_CACHE",
    "npm_config_cache",
    "PIP_CACHE_DIR",
];

/// A path that no bound folder may be or hold.
#[derive(Debug, Clone)]
pub struct Guarded {
    pub path: PathBuf,
    pub what: &'static str,
    /// A folder inside it is refused too (the workspace: a sandbox writes there).
    pub inside_too: bool,
}

/// The host as detection sees it.
pub struct Host<'a> {
    /// The user's home folder.
    pub home: PathBuf,
    /// The variables of [`VARS`] that are set.
    pub env: BTreeMap<String, String>,
    pub files: &'a dyn Files,
    /// Besides the home folder (which no bound folder may be or hold).
    pub guarded: Vec<Guarded>,
}

/// One toolchain found on the host, and what binding it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub toolchain: Toolchain,
    /// Where it is, as `doctor` says.
    pub folders: Vec<PathBuf>,
    /// Folders and files bound read-only at their own paths.
    pub bind: Vec<PathBuf>,
    /// Folders put on PATH, in order, before the sandbox's own.
    pub path: Vec<PathBuf>,
    /// Variables set inside.
    pub env: Vec<(String, String)>,
    /// Files of git loop's own inside: (path inside, content).
    pub data: Vec<(PathBuf, String)>,
    /// Something the user should know (no default version...).
    pub note: Option<String>,
    /// Why it cannot be bound; then nothing of it is.
    pub refused: Option<String>,
}

impl Found {
    fn new(toolchain: Toolchain) -> Found {
        Found {
            toolchain,
            folders: Vec::new(),
            bind: Vec::new(),
            path: Vec::new(),
            env: Vec::new(),
            data: Vec::new(),
            note: None,
            refused: None,
        }
    }

    fn set(&mut self, name: &str, value: &Path) {
        self.env.push((name.into(), value.display().to_string()));
    }
}

/// Where git loop's own files for a toolchain live inside: on the sandbox's fresh root,
/// beside the relay binary.
pub const DATA_INSIDE: &str = "/loopat/.git-loop/toolchains";

/// Folders that the sandbox sees anyway: nothing to bind there.
const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/etc"];

fn is_system(path: &Path) -> bool {
    SYSTEM.iter().any(|s| path.starts_with(s))
}

impl Host<'_> {
    /// An absolute path from a variable, if it is set to one.
    fn var(&self, name: &str) -> Option<PathBuf> {
        self.env
            .get(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    }

    fn var_or(&self, name: &str, default: &str) -> PathBuf {
        self.var(name).unwrap_or_else(|| self.home.join(default))
    }

    fn is_dir(&self, p: &Path) -> bool {
        self.files.kind(p) == Some(Kind::Dir)
    }

    fn is_file(&self, p: &Path) -> bool {
        self.files.kind(p) == Some(Kind::File)
    }

    /// `CARGO_HOME`, else `~/.cargo`.
    fn cargo_home(&self) -> PathBuf {
        self.var_or("CARGO_HOME", ".cargo")
    }

    /// npm's user config: `NPM_CONFIG_USERCONFIG`, else `~/.npmrc`.
    fn npmrc(&self) -> PathBuf {
        self.var("npm_config_userconfig")
            .or_else(|| self.var("NPM_CONFIG_USERCONFIG"))
            .unwrap_or_else(|| self.home.join(".npmrc"))
    }

    /// Why binding `folder` would show the sandbox more than a toolchain, if it would.
    pub fn guard(&self, folder: &Path) -> Option<String> {
        let real = self.files.real(folder);
        let home = self.files.real(&self.home);
        if real == home || home.starts_with(&real) {
            return Some(format!(
                "{} is (or holds) the home folder {}",
                folder.display(),
                self.home.display()
            ));
        }
        for g in &self.guarded {
            let path = self.files.real(&g.path);
            if path.starts_with(&real) || (g.inside_too && real.starts_with(&path)) {
                return Some(format!(
                    "{} holds or is inside {} ({})",
                    folder.display(),
                    g.what,
                    g.path.display()
                ));
            }
        }
        None
    }
}

/// Every toolchain found on the host, in [`Toolchain::ALL`]'s order.
pub fn detect(host: &Host) -> Vec<Found> {
    let mut out: Vec<Found> = [
        rustup(host),
        pyenv(host),
        nvm(host),
        mise(host),
        npm_prefix(host),
    ]
    .into_iter()
    .flatten()
    .collect();
    for f in &mut out {
        f.refused = f.bind.iter().find_map(|b| host.guard(b));
    }
    out
}

/// rustup's `RUSTUP_HOME` (toolchains) and the `bin/` of `CARGO_HOME` (rustup's proxies,
/// `cargo install`ed tools). `CARGO_HOME` itself is the loop's own (see [`plan`]).
fn rustup(host: &Host) -> Option<Found> {
    let rustup_home = host.var_or("RUSTUP_HOME", ".rustup");
    let cargo_home = host.cargo_home();
    let cargo_bin = cargo_home.join("bin");
    let (has_rustup, has_bin) = (host.is_dir(&rustup_home), host.is_dir(&cargo_bin));
    if !has_rustup && !has_bin {
        return None;
    }
    let mut f = Found::new(Toolchain::Rustup);
    if has_rustup {
        f.folders.push(rustup_home.clone());
        f.bind.push(rustup_home.clone());
        f.set("RUSTUP_HOME", &rustup_home);
    }
    if has_bin {
        f.folders.push(cargo_home);
        f.bind.push(cargo_bin.clone());
        f.path.push(cargo_bin);
    }
    Some(f)
}

fn pyenv(host: &Host) -> Option<Found> {
    let root = host.var_or("PYENV_ROOT", ".pyenv");
    let installed =
        host.is_file(&root.join("bin/pyenv")) || host.is_file(&root.join("libexec/pyenv"));
    if !host.is_dir(&root) || !installed {
        return None;
    }
    let mut f = Found::new(Toolchain::Pyenv);
    f.folders.push(root.clone());
    f.bind.push(root.clone());
    for sub in ["shims", "bin"] {
        if host.is_dir(&root.join(sub)) {
            f.path.push(root.join(sub));
        }
    }
    f.set("PYENV_ROOT", &root);
    Some(f)
}

fn nvm(host: &Host) -> Option<Found> {
    let dir = host.var_or("NVM_DIR", ".nvm");
    let versions = dir.join("versions/node");
    if !host.is_file(&dir.join("nvm.sh")) && !host.is_dir(&versions) {
        return None;
    }
    let mut f = Found::new(Toolchain::Nvm);
    f.folders.push(dir.clone());
    f.bind.push(dir.clone());
    f.set("NVM_DIR", &dir);
    match nvm_default(host, &dir) {
        Some(version) => {
            let bin = versions.join(&version).join("bin");
            f.set("NVM_BIN", &bin);
            f.path.push(bin);
        }
        None => {
            f.note = Some(format!(
            "no default node version ({} names no installed version): `nvm alias default VERSION`",
            dir.join("alias/default").display()
        ))
        }
    }
    Some(f)
}

/// The installed version nvm's `alias/default` names (`v20.11.0`, `20`, `lts/iron`,
/// `lts/*`, `node`), following aliases as nvm does, at most a few deep.
pub fn nvm_default(host: &Host, dir: &Path) -> Option<String> {
    let mut installed: Vec<(Vec<u64>, String)> = host
        .files
        .list(&dir.join("versions/node"))
        .into_iter()
        .filter_map(|name| Some((version_key(name.strip_prefix('v')?)?, name)))
        .collect();
    installed.sort();
    let mut alias = "default".to_string();
    for _ in 0..8 {
        let text = host.files.read(&dir.join("alias").join(&alias))?;
        let wanted = text.lines().next()?.trim().to_string();
        match wanted.as_str() {
            "node" | "stable" => return installed.last().map(|(_, n)| n.clone()),
            "system" | "" => return None,
            _ => {}
        }
        let bare = wanted.strip_prefix('v').unwrap_or(&wanted);
        if let Some(key) = version_key(bare) {
            // A whole version, or its leading numbers: the newest installed that fits.
            if let Some((_, name)) = installed
                .iter()
                .rev()
                .find(|(k, _)| k.len() >= key.len() && k[..key.len()] == key[..])
            {
                return Some(name.clone());
            }
            return None;
        }
        // Another alias (`lts/iron`, `lts/*`), a file under alias/.
        if wanted.contains("..") || wanted.starts_with('/') {
            return None;
        }
        alias = wanted;
    }
    None
}

/// `20.11.0` as numbers; `None` for anything else.
fn version_key(s: &str) -> Option<Vec<u64>> {
    s.split('.').map(|p| p.parse().ok()).collect()
}

/// mise: its data folder (installs, shims), the mise binary its shims link to, and the
/// `[tools]` of its global config (nothing else of it: its `[env]` may hold secrets).
fn mise(host: &Host) -> Option<Found> {
    let data = host.var("MISE_DATA_DIR").unwrap_or_else(|| {
        host.var("XDG_DATA_HOME")
            .unwrap_or_else(|| host.home.join(".local/share"))
            .join("mise")
    });
    if !host.is_dir(&data) {
        return None;
    }
    let mut f = Found::new(Toolchain::Mise);
    f.folders.push(data.clone());
    f.bind.push(data.clone());
    f.set("MISE_DATA_DIR", &data);
    let shims = data.join("shims");
    if host.is_dir(&shims) {
        f.path.push(shims.clone());
    }
    // The shims are links to the binary they were made by.
    let binary = host
        .files
        .list(&shims)
        .iter()
        .find_map(|name| host.files.link(&shims.join(name)))
        .map(|target| shims.join(target))
        .or_else(|| Some(host.home.join(".local/bin/mise")))
        .filter(|b| b.file_name().is_some_and(|n| n == "mise") && host.is_file(b));
    if let Some(binary) = binary {
        if !is_system(&binary) {
            f.bind.push(binary.clone());
        }
        if let Some(dir) = binary.parent() {
            f.path.push(dir.to_path_buf());
        }
    }
    let config = host.var("MISE_GLOBAL_CONFIG_FILE").unwrap_or_else(|| {
        host.var("MISE_CONFIG_DIR")
            .unwrap_or_else(|| {
                host.var("XDG_CONFIG_HOME")
                    .unwrap_or_else(|| host.home.join(".config"))
                    .join("mise")
            })
            .join("config.toml")
    });
    if let Some(tools) = host
        .files
        .read(&config)
        .and_then(|text| text.parse::<toml::Table>().ok())
        .and_then(|mut t| t.remove("tools"))
        .filter(Value::is_table)
    {
        let mut table = toml::Table::new();
        table.insert("tools".into(), tools);
        let inside = Path::new(DATA_INSIDE).join("mise/config.toml");
        f.data.push((
            inside.clone(),
            format!(
                "# The [tools] of {} (git loop copies nothing else of it).\n{table}",
                config.display()
            ),
        ));
        f.set("MISE_GLOBAL_CONFIG_FILE", &inside);
    }
    Some(f)
}

/// A home npm prefix: `npm_config_prefix`, else `prefix=` of the user's `.npmrc`. The
/// `.npmrc` itself is never bound (it holds registry tokens).
fn npm_prefix(host: &Host) -> Option<Found> {
    let prefix = host
        .var("npm_config_prefix")
        .or_else(|| host.var("NPM_CONFIG_PREFIX"))
        .or_else(|| npmrc_value(host, "prefix"))?;
    if is_system(&prefix) || !host.is_dir(&prefix) {
        return None;
    }
    let mut f = Found::new(Toolchain::NpmPrefix);
    f.folders.push(prefix.clone());
    f.bind.push(prefix.clone());
    f.path.push(prefix.join("bin"));
    f.set("npm_config_prefix", &prefix);
    Some(f)
}

/// An absolute path set by `key = value` in the user's `.npmrc` (`~/` and `${HOME}`
/// expanded, as npm does).
fn npmrc_value(host: &Host, key: &str) -> Option<PathBuf> {
    let text = host.files.read(&host.npmrc())?;
    let raw = text.lines().find_map(|line| {
        let line = line.trim();
        if line.starts_with(';') || line.starts_with('#') {
            return None;
        }
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })?;
    let home = host.home.display().to_string();
    let expanded = if let Some(rest) = raw.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        raw.replace("${HOME}", &home).replace("$HOME", &home)
    };
    Some(PathBuf::from(expanded)).filter(|p| p.is_absolute())
}

/// Files that hold credentials of the tools, wherever a bound folder might hold them.
pub fn credential_files(host: &Host) -> Vec<PathBuf> {
    let cargo = host.cargo_home();
    let mut files = vec![
        cargo.join("credentials.toml"),
        cargo.join("credentials"),
        host.npmrc(),
        host.home.join(".npmrc"),
        host.home.join(".pypirc"),
        host.home.join(".netrc"),
        host.home.join(".git-credentials"),
        host.home.join(".config/pip/pip.conf"),
        host.home.join(".pip/pip.conf"),
    ];
    files.dedup();
    files
}

/// The host folder of a cache (for `caches = "shared"`), and the variable that points the
/// tool at it.
fn host_cache(host: &Host, cache: Cache) -> (PathBuf, &'static str) {
    let xdg_cache = host
        .var("XDG_CACHE_HOME")
        .unwrap_or_else(|| host.home.join(".cache"));
    match cache {
        Cache::Cargo => (host.cargo_home(), "CARGO_HOME"),
        Cache::Pip => (
            host.var("PIP_CACHE_DIR")
                .unwrap_or_else(|| xdg_cache.join("pip")),
            "PIP_CACHE_DIR",
        ),
        Cache::Npm => (
            host.var("npm_config_cache")
                .or_else(|| host.var("NPM_CONFIG_CACHE"))
                .or_else(|| npmrc_value(host, "cache"))
                .unwrap_or_else(|| host.home.join(".npm")),
            "npm_config_cache",
        ),
    }
}

/// Where a loop's own cache is, below its `$HOME` inside.
fn loop_cache(cache: Cache) -> &'static str {
    match cache {
        Cache::Cargo => ".cache/cargo",
        Cache::Pip => ".cache/pip",
        Cache::Npm => ".npm",
    }
}

/// The parts of cargo's home that are its cache: shared read-write at the loop's
/// `CARGO_HOME`, with its lock files so the host's cargo and the loops' take turns.
const CARGO_SHARED: &[&str] = &["registry", "git", ".package-cache", ".package-cache-mutate"];

/// What a run gets of the toolchains: mounts after the `$HOME` bind, PATH entries before
/// the sandbox's own, variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub enabled: Vec<Toolchain>,
    pub mounts: Vec<Mount>,
    pub path: Vec<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Enabled toolchains that are left out, and why.
    pub warnings: Vec<String>,
}

/// The mounts, PATH and variables for the toolchains of `choice` among `found`, with the
/// loop's `$HOME` at `home_inside`. Pure.
///
/// Order of the mounts: each toolchain's folders, read-only at their own paths; the
/// shared caches, read-write; then, over all of them, an empty read-only file on every
/// credential file a bound folder holds. The caller puts them after the `$HOME` bind, so
/// where the host's home has the path of the sandbox's `$HOME` (`/home/<user>`), the
/// toolchains are laid over the loop's `$HOME`, not hidden under it.
pub fn plan(host: &Host, found: &[Found], choice: &Choice, home_inside: &Path) -> Plan {
    let mut p = Plan::default();
    let mut same_path: Vec<PathBuf> = Vec::new();
    let mut caches: Vec<Cache> = Vec::new();
    for f in found.iter().filter(|f| choice.enable.admits(f.toolchain)) {
        if let Some(why) = &f.refused {
            p.warnings.push(format!(
                "the toolchain {} is left out of the sandbox: {why}",
                f.toolchain
            ));
            continue;
        }
        p.enabled.push(f.toolchain);
        for b in &f.bind {
            p.mounts.push(Mount::Bind {
                host: b.clone(),
                inside: b.clone(),
                rw: false,
                optional: false,
            });
            same_path.push(b.clone());
        }
        for (inside, content) in &f.data {
            p.mounts.push(Mount::Data {
                inside: inside.clone(),
                content: content.clone(),
            });
        }
        p.path.extend(f.path.iter().cloned());
        p.env.extend(f.env.iter().cloned());
        caches.extend(f.toolchain.caches());
    }
    caches.sort();
    caches.dedup();
    for cache in caches {
        let own = home_inside.join(loop_cache(cache));
        let (shared, var) = host_cache(host, cache);
        let refused = host.guard(&shared);
        let usable = choice.caches == Caches::Shared && host.is_dir(&shared);
        if choice.caches == Caches::Shared {
            if let Some(why) = &refused {
                p.warnings
                    .push(format!("the host's cache is not shared: {why}"));
            } else if !usable {
                p.warnings.push(format!(
                    "the host's cache {} is missing: this loop's is its own",
                    shared.display()
                ));
            }
        }
        let share = usable && refused.is_none();
        match cache {
            // CARGO_HOME is the loop's own either way (cargo writes its lock files and
            // its own tracking there); shared, the host's registry and git checkouts are
            // bound into it.
            Cache::Cargo => {
                if share {
                    for part in CARGO_SHARED {
                        let from = shared.join(part);
                        if host.files.kind(&from).is_some() {
                            p.mounts.push(Mount::Bind {
                                host: from,
                                inside: own.join(part),
                                rw: true,
                                optional: false,
                            });
                        }
                    }
                }
                p.env.push((var.into(), own.display().to_string()));
                p.path.push(own.join("bin"));
            }
            Cache::Pip | Cache::Npm => {
                let at = if share {
                    p.mounts.push(Mount::Bind {
                        host: shared.clone(),
                        inside: shared.clone(),
                        rw: true,
                        optional: false,
                    });
                    same_path.push(shared.clone());
                    shared
                } else {
                    own
                };
                p.env.push((var.into(), at.display().to_string()));
            }
        }
    }
    for file in credential_files(host) {
        if host.is_file(&file) && same_path.iter().any(|b| file.starts_with(b)) {
            // A regular file reads as empty; a link is covered where it leads (bwrap
            // follows it), by /dev/null, which reads as nothing either.
            p.mounts.push(if host.files.link(&file).is_some() {
                Mount::Bind {
                    host: "/dev/null".into(),
                    inside: file,
                    rw: false,
                    optional: false,
                }
            } else {
                Mount::Data {
                    inside: file,
                    content: String::new(),
                }
            });
        }
    }
    p
}

/// The host of this process: `$HOME`, the variables of [`VARS`], the real disk; the
/// workspace, the age identity and the operator config guarded.
pub fn host_from_env(workspace_root: &Path) -> Option<Host<'static>> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())?;
    let env = VARS
        .iter()
        .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
        .collect();
    let mut guarded = vec![Guarded {
        path: workspace_root.to_path_buf(),
        what: "the workspace",
        inside_too: true,
    }];
    if let Ok(paths) = crate::workspace::HostPaths::from_env() {
        guarded.push(Guarded {
            path: paths.identity,
            what: "the age identity",
            inside_too: false,
        });
        guarded.push(Guarded {
            path: paths.operator_config,
            what: "the operator config",
            inside_too: false,
        });
    }
    Some(Host {
        home,
        env,
        files: &Disk,
        guarded,
    })
}

/// The toolchains part of a run of a loop on this host: what is found, chosen by the
/// config and the loop's profile.
pub fn for_run(
    ws: &crate::workspace::Workspace,
    config: &crate::config::Config,
    home_inside: &Path,
) -> Plan {
    let choice = config.toolchains();
    if choice.enable == Selection::Only(Vec::new()) {
        return Plan::default();
    }
    let Some(host) = host_from_env(ws.root()) else {
        return Plan::default();
    };
    plan(&host, &detect(&host), &choice, home_inside)
}

/// Before a run with shared caches: the host's cache folders that are missing are made
/// (empty folders in the user's home, which the tools would make themselves), so the run
/// shares them from the first download on. Only a run does this, never a command that
/// shows the sandbox.
pub fn make_shared_caches(ws: &crate::workspace::Workspace, config: &crate::config::Config) {
    let choice = config.toolchains();
    if choice.caches != Caches::Shared || choice.enable == Selection::Only(Vec::new()) {
        return;
    }
    let Some(host) = host_from_env(ws.root()) else {
        return;
    };
    let mut caches: Vec<Cache> = detect(&host)
        .iter()
        .filter(|f| choice.enable.admits(f.toolchain) && f.refused.is_none())
        .flat_map(|f| f.toolchain.caches().iter().copied())
        .collect();
    caches.sort();
    caches.dedup();
    for cache in caches {
        let (dir, _) = host_cache(&host, cache);
        let dir = match cache {
            Cache::Cargo => dir.join("registry"),
            _ => dir,
        };
        if host.guard(&dir).is_none() {
            let _ = std::fs::create_dir_all(&dir);
        }
    }
}

/// How `doctor` sees one toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Found, and in view of the profile's sandboxes.
    Enabled,
    /// Found, and left out by the operator config or the profile.
    NotEnabled,
    /// Found, and enabled, but it cannot be bound (it holds more than a toolchain).
    Refused,
    /// Enabled by name, not found.
    Missing,
    /// Nothing found, nothing asked for.
    Nothing,
}

/// One finding of `doctor` about the toolchains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub seen: Seen,
    pub message: String,
    pub fix: Option<String>,
}

/// Where detection looks for a toolchain, said when it is not there.
fn looked(t: Toolchain) -> &'static str {
    match t {
        Toolchain::Rustup => "RUSTUP_HOME or ~/.rustup, CARGO_HOME or ~/.cargo",
        Toolchain::Pyenv => "PYENV_ROOT or ~/.pyenv",
        Toolchain::Nvm => "NVM_DIR or ~/.nvm",
        Toolchain::Mise => "MISE_DATA_DIR or ~/.local/share/mise",
        Toolchain::NpmPrefix => "npm_config_prefix, or prefix= in ~/.npmrc",
    }
}

/// What `doctor` says about the toolchains: one finding for each one found (with its
/// folders, whether sandboxes of `profile` see it and, if not, how to let them), and for
/// each one enabled by name but not found. `settings` is the operator's choice (the
/// merged settings), `choice` the profile's within it.
pub fn report(
    found: &[Found],
    settings: &Choice,
    choice: &Choice,
    profile: &str,
    profile_file: &Path,
) -> Vec<Report> {
    let mut out = Vec::new();
    for f in found {
        let folders = f
            .folders
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let at = format!("{} at {folders}", f.toolchain);
        let enabled = choice.enable.admits(f.toolchain);
        if let Some(why) = &f.refused {
            out.push(Report {
                seen: if enabled {
                    Seen::Refused
                } else {
                    Seen::NotEnabled
                },
                message: format!("{at}: never bound into a sandbox: {why}"),
                fix: Some("install it in a folder of its own".into()),
            });
        } else if enabled {
            let caches = match choice.caches {
                Caches::Loop => "package caches the loop's own",
                Caches::Shared => "package caches shared with the host",
            };
            let mut message =
                format!("{at}: in view, read-only, in sandboxes of profile '{profile}' ({caches})");
            if let Some(note) = &f.note {
                message.push_str(&format!("; {note}"));
            }
            out.push(Report {
                seen: Seen::Enabled,
                message,
                fix: None,
            });
        } else if !settings.enable.admits(f.toolchain) {
            let mut wanted = match &settings.enable {
                Selection::Only(list) => list.clone(),
                Selection::Detected => Vec::new(),
            };
            wanted.push(f.toolchain);
            out.push(Report {
                seen: Seen::NotEnabled,
                message: format!("{at}: not in sandboxes (the operator config does not enable it)"),
                fix: Some(format!(
                    "git loop config set --operator toolchains.enable '{}' (or detected: every one found)",
                    Selection::Only(wanted)
                )),
            });
        } else {
            out.push(Report {
                seen: Seen::NotEnabled,
                message: format!(
                    "{at}: not in sandboxes of profile '{profile}' (its [toolchains] enable leaves it out)"
                ),
                fix: Some(format!(
                    "add \"{}\" to [toolchains] enable in {}",
                    f.toolchain,
                    profile_file.display()
                )),
            });
        }
    }
    if let Selection::Only(list) = &choice.enable {
        for t in list
            .iter()
            .filter(|t| !found.iter().any(|f| f.toolchain == **t))
        {
            out.push(Report {
                seen: Seen::Missing,
                message: format!("{t} is enabled but not found ({})", looked(*t)),
                fix: None,
            });
        }
    }
    if out.is_empty() {
        out.push(Report {
            seen: Seen::Nothing,
            message: format!("none found in your home folder (looked for {})", names()),
            fix: None,
        });
    }
    out
}

/// [`report`] for this host, the config and the profile loaded in it.
pub fn report_for(ws: &crate::workspace::Workspace, config: &crate::config::Config) -> Vec<Report> {
    let found = host_from_env(ws.root())
        .map(|h| detect(&h))
        .unwrap_or_default();
    let t = &config.settings().toolchains;
    let settings = Choice {
        enable: t.enable.clone(),
        caches: t.caches,
    };
    let profile = config.profile();
    report(
        &found,
        &settings,
        &config.toolchains(),
        &profile.name,
        &ws.sandbox_profile(&profile.name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A disk described by hand: folders, files with their text, links.
    #[derive(Default)]
    struct Fake {
        entries: BTreeMap<PathBuf, Entry>,
    }

    enum Entry {
        Dir,
        File(String),
        Link(PathBuf),
    }

    impl Fake {
        fn dir(mut self, p: &str) -> Fake {
            for a in Path::new(p).ancestors() {
                self.entries.entry(a.to_path_buf()).or_insert(Entry::Dir);
            }
            self
        }
        fn file(mut self, p: &str, text: &str) -> Fake {
            let path = PathBuf::from(p);
            self = self.dir(path.parent().unwrap().to_str().unwrap());
            self.entries.insert(path, Entry::File(text.into()));
            self
        }
        fn link(mut self, p: &str, target: &str) -> Fake {
            let path = PathBuf::from(p);
            self = self.dir(path.parent().unwrap().to_str().unwrap());
            self.entries.insert(path, Entry::Link(target.into()));
            self
        }
        fn resolve(&self, p: &Path) -> Option<&Entry> {
            match self.entries.get(p)? {
                Entry::Link(t) => self.resolve(&p.parent()?.join(t)),
                e => Some(e),
            }
        }
    }

    impl Files for Fake {
        fn kind(&self, p: &Path) -> Option<Kind> {
            match self.resolve(p)? {
                Entry::Dir => Some(Kind::Dir),
                Entry::File(_) => Some(Kind::File),
                Entry::Link(_) => None,
            }
        }
        fn read(&self, p: &Path) -> Option<String> {
            match self.resolve(p)? {
                Entry::File(t) => Some(t.clone()),
                _ => None,
            }
        }
        fn list(&self, p: &Path) -> Vec<String> {
            self.entries
                .keys()
                .filter(|k| k.parent() == Some(p))
                .filter_map(|k| k.file_name()?.to_str().map(String::from))
                .collect()
        }
        fn link(&self, p: &Path) -> Option<PathBuf> {
            match self.entries.get(p)? {
                Entry::Link(t) => Some(t.clone()),
                _ => None,
            }
        }
        fn real(&self, p: &Path) -> PathBuf {
            p.to_path_buf()
        }
    }

    fn host<'a>(files: &'a Fake, env: &[(&str, &str)]) -> Host<'a> {
        Host {
            home: "/home/alice".into(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            files,
            guarded: vec![Guarded {
                path: "/home/alice/.local/share/git-loop".into(),
                what: "the workspace",
                inside_too: true,
            }],
        }
    }

    fn everything() -> Fake {
        Fake::default()
            .dir("/home/alice/.rustup/toolchains/stable-x86_64-unknown-linux-gnu")
            .file("/home/alice/.cargo/bin/cargo", "")
            .file("/home/alice/.cargo/credentials.toml", "token = \"s3cret\"")
            .file("/home/alice/.pyenv/bin/pyenv", "")
            .dir("/home/alice/.pyenv/shims")
            .file("/home/alice/.nvm/nvm.sh", "")
            .dir("/home/alice/.nvm/versions/node/v18.19.0/bin")
            .dir("/home/alice/.nvm/versions/node/v20.9.0/bin")
            .dir("/home/alice/.nvm/versions/node/v20.11.1/bin")
            .file("/home/alice/.nvm/alias/default", "lts/iron\n")
            .file("/home/alice/.nvm/alias/lts/iron", "v20.11.1\n")
            .file("/home/alice/.local/bin/mise", "")
            .link(
                "/home/alice/.local/share/mise/shims/node",
                "/home/alice/.local/bin/mise",
            )
            .file(
                "/home/alice/.config/mise/config.toml",
                "[tools]\nnode = \"20\"\n[env]\nGITHUB_TOKEN = \"ghp_s3cret\"\n",
            )
            .file(
                "/home/alice/.npmrc",
                "; mine\nprefix = ~/.npm-global\n//registry.npmjs.org/:_authToken=npm_s3cret\n",
            )
            .dir("/home/alice/.npm-global/bin")
    }

    #[test]
    fn the_usual_folders_are_found() {
        let files = everything();
        let found = detect(&host(&files, &[]));
        let kinds: Vec<_> = found.iter().map(|f| f.toolchain).collect();
        assert_eq!(kinds, Toolchain::ALL.to_vec());
        let by = |t| found.iter().find(|f| f.toolchain == t).unwrap();
        let rustup = by(Toolchain::Rustup);
        assert_eq!(
            rustup.bind,
            vec![
                PathBuf::from("/home/alice/.rustup"),
                PathBuf::from("/home/alice/.cargo/bin")
            ]
        );
        assert_eq!(
            rustup.env,
            vec![("RUSTUP_HOME".into(), "/home/alice/.rustup".into())]
        );
        let pyenv = by(Toolchain::Pyenv);
        assert_eq!(
            pyenv.path,
            vec![
                PathBuf::from("/home/alice/.pyenv/shims"),
                PathBuf::from("/home/alice/.pyenv/bin")
            ]
        );
        let nvm = by(Toolchain::Nvm);
        assert_eq!(
            nvm.path,
            vec![PathBuf::from("/home/alice/.nvm/versions/node/v20.11.1/bin")]
        );
        let mise = by(Toolchain::Mise);
        assert_eq!(
            mise.bind,
            vec![
                PathBuf::from("/home/alice/.local/share/mise"),
                PathBuf::from("/home/alice/.local/bin/mise")
            ]
        );
        // Of mise's config only its [tools]: its [env] may hold secrets.
        let (_, config) = &mise.data[0];
        assert!(config.contains("node = \"20\""), "{config}");
        assert!(!config.contains("s3cret"), "{config}");
        let npm = by(Toolchain::NpmPrefix);
        assert_eq!(npm.bind, vec![PathBuf::from("/home/alice/.npm-global")]);
        assert_eq!(
            npm.env,
            vec![("npm_config_prefix".into(), "/home/alice/.npm-global".into())]
        );
        assert!(found.iter().all(|f| f.refused.is_none()));
    }

    #[test]
    fn variables_point_detection_elsewhere() {
        let files = Fake::default()
            .dir("/opt/rust/rustup/toolchains")
            .file("/opt/rust/cargo/bin/cargo", "")
            .file("/srv/py/libexec/pyenv", "")
            .dir("/home/alice/.rustup");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/opt/rust/rustup"),
                ("CARGO_HOME", "/opt/rust/cargo"),
                ("PYENV_ROOT", "/srv/py"),
                // Relative values are not paths a tool would use.
                ("NVM_DIR", "nvm"),
            ],
        );
        let found = detect(&h);
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].bind,
            vec![
                PathBuf::from("/opt/rust/rustup"),
                PathBuf::from("/opt/rust/cargo/bin")
            ]
        );
        assert_eq!(found[1].folders, vec![PathBuf::from("/srv/py")]);
        assert!(detect(&host(&Fake::default(), &[])).is_empty());
    }

    #[test]
    fn nvm_follows_its_aliases() {
        let base = || {
            Fake::default()
                .dir("/n/versions/node/v18.19.0")
                .dir("/n/versions/node/v20.9.0")
                .dir("/n/versions/node/v20.11.1")
        };
        let default_of = |files: Fake| nvm_default(&host(&files, &[]), Path::new("/n"));
        assert_eq!(
            default_of(base().file("/n/alias/default", "18\n")).as_deref(),
            Some("v18.19.0")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "v20.9.0")).as_deref(),
            Some("v20.9.0")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "20")).as_deref(),
            Some("v20.11.1")
        );
        assert_eq!(
            default_of(base().file("/n/alias/default", "node")).as_deref(),
            Some("v20.11.1")
        );
        assert_eq!(
            default_of(
                base()
                    .file("/n/alias/default", "lts/*")
                    .file("/n/alias/lts/*", "lts/hydrogen")
                    .file("/n/alias/lts/hydrogen", "v18.19.0")
            )
            .as_deref(),
            Some("v18.19.0")
        );
        assert_eq!(default_of(base().file("/n/alias/default", "21")), None);
        assert_eq!(default_of(base().file("/n/alias/default", "system")), None);
        assert_eq!(
            default_of(base().file("/n/alias/default", "../../etc/x")),
            None
        );
        assert_eq!(default_of(base()), None);
        // Aliases that loop end.
        assert_eq!(
            default_of(
                base()
                    .file("/n/alias/default", "a")
                    .file("/n/alias/a", "default")
            ),
            None
        );
    }

    #[test]
    fn folders_that_hold_more_than_a_toolchain_are_refused() {
        let files = Fake::default()
            .file("/home/alice/.npmrc", "prefix=${HOME}\n")
            .dir("/home/alice/.local/share/git-loop/loops")
            .file("/home/alice/.local/share/git-loop/.pyenv/bin/pyenv", "");
        let found = detect(&host(
            &files,
            &[("PYENV_ROOT", "/home/alice/.local/share/git-loop/.pyenv")],
        ));
        assert_eq!(found.len(), 2);
        assert!(found[0].refused.as_ref().unwrap().contains("the workspace"));
        assert!(found[1].refused.as_ref().unwrap().contains("home folder"));
        let choice = Choice {
            enable: Selection::Detected,
            caches: Caches::Loop,
        };
        let p = plan(
            &host(&files, &[]),
            &found,
            &choice,
            Path::new("/home/alice"),
        );
        assert!(p.mounts.is_empty() && p.enabled.is_empty());
        assert_eq!(p.warnings.len(), 2);
        // The npm prefix `/` holds the home folder too.
        let files = Fake::default().file("/home/alice/.npmrc", "prefix=/\n");
        assert!(detect(&host(&files, &[]))[0].refused.is_some());
    }

    fn binds(p: &Plan) -> Vec<(String, String, bool)> {
        p.mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Bind {
                    host, inside, rw, ..
                } => Some((
                    host.display().to_string(),
                    inside.display().to_string(),
                    *rw,
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_plan_binds_read_only_and_keeps_caches_in_the_loop() {
        let files = everything();
        let h = host(&files, &[]);
        let choice = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::NpmPrefix]),
            caches: Caches::Loop,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        assert_eq!(p.enabled, vec![Toolchain::Rustup, Toolchain::NpmPrefix]);
        let ro = |p: &str| (p.to_string(), p.to_string(), false);
        assert_eq!(
            binds(&p),
            vec![
                ro("/home/alice/.rustup"),
                ro("/home/alice/.cargo/bin"),
                ro("/home/alice/.npm-global"),
            ]
        );
        assert_eq!(
            p.path,
            vec![
                PathBuf::from("/home/alice/.cargo/bin"),
                PathBuf::from("/home/alice/.npm-global/bin"),
                PathBuf::from("/home/alice/.cache/cargo/bin"),
            ]
        );
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["CARGO_HOME"], "/home/alice/.cache/cargo");
        assert_eq!(env["RUSTUP_HOME"], "/home/alice/.rustup");
        assert_eq!(env["npm_config_cache"], "/home/alice/.npm");
        assert_eq!(env["npm_config_prefix"], "/home/alice/.npm-global");
        assert!(!env.contains_key("PIP_CACHE_DIR") && !env.contains_key("PYENV_ROOT"));
        // Neither the cargo home's credentials nor the .npmrc is in view: nothing to cover.
        assert!(!binds(&p).iter().any(|(h, _, _)| h == "/dev/null"));
    }

    #[test]
    fn credential_files_a_bound_folder_holds_are_covered() {
        // One folder for both rustup and cargo: its credentials are in view, covered.
        let files = Fake::default()
            .dir("/home/alice/.rust/toolchains")
            .file("/home/alice/.rust/bin/cargo", "")
            .file("/home/alice/.rust/credentials.toml", "token")
            .file("/home/alice/.rust/credentials", "token")
            .file(
                "/home/alice/.npm-global/npmrc",
                "prefix=/home/alice/.npm-global\n_authToken=x\n",
            )
            .dir("/home/alice/.npm-global/bin");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/home/alice/.rust"),
                ("CARGO_HOME", "/home/alice/.rust"),
                ("NPM_CONFIG_USERCONFIG", "/home/alice/.npm-global/npmrc"),
            ],
        );
        let choice = Choice {
            enable: Selection::Detected,
            caches: Caches::Loop,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        let covers: Vec<String> = p
            .mounts
            .iter()
            .filter_map(|m| match m {
                Mount::Data { inside, content } if content.is_empty() => {
                    Some(inside.display().to_string())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            covers,
            vec![
                "/home/alice/.rust/credentials.toml",
                "/home/alice/.rust/credentials",
                "/home/alice/.npm-global/npmrc"
            ]
        );
        // Covers come last, over what they cover.
        let last_bind = p
            .mounts
            .iter()
            .rposition(|m| matches!(m, Mount::Bind { .. }))
            .unwrap();
        let first_cover = p
            .mounts
            .iter()
            .position(|m| matches!(m, Mount::Data { .. }))
            .unwrap();
        assert!(last_bind < first_cover);
        // A credential file that is a link is covered where it leads.
        let files = Fake::default()
            .dir("/home/alice/.rust/toolchains")
            .file("/home/alice/.rust/creds/real.toml", "token")
            .link("/home/alice/.rust/credentials.toml", "creds/real.toml");
        let h = host(
            &files,
            &[
                ("RUSTUP_HOME", "/home/alice/.rust"),
                ("CARGO_HOME", "/home/alice/.rust"),
            ],
        );
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/alice"));
        assert_eq!(
            binds(&p).last().unwrap(),
            &(
                "/dev/null".to_string(),
                "/home/alice/.rust/credentials.toml".to_string(),
                false
            )
        );
    }

    #[test]
    fn shared_caches_bind_the_hosts_folders_read_write() {
        let files = everything()
            .dir("/home/alice/.cargo/registry")
            .file("/home/alice/.cargo/.package-cache", "")
            .dir("/home/alice/.cache/pip")
            .dir("/home/alice/.npm");
        let h = host(&files, &[]);
        let choice = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::Pyenv, Toolchain::Nvm]),
            caches: Caches::Shared,
        };
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/tester"));
        let rw: Vec<_> = binds(&p).into_iter().filter(|b| b.2).collect();
        assert_eq!(
            rw,
            vec![
                (
                    "/home/alice/.cargo/registry".into(),
                    "/home/tester/.cache/cargo/registry".into(),
                    true
                ),
                (
                    "/home/alice/.cargo/.package-cache".into(),
                    "/home/tester/.cache/cargo/.package-cache".into(),
                    true
                ),
                (
                    "/home/alice/.cache/pip".into(),
                    "/home/alice/.cache/pip".into(),
                    true
                ),
                ("/home/alice/.npm".into(), "/home/alice/.npm".into(), true),
            ]
        );
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["CARGO_HOME"], "/home/tester/.cache/cargo");
        assert_eq!(env["PIP_CACHE_DIR"], "/home/alice/.cache/pip");
        assert_eq!(env["npm_config_cache"], "/home/alice/.npm");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // A cache folder the host lacks stays the loop's own, and says so.
        let files = everything();
        let h = host(&files, &[]);
        let p = plan(&h, &detect(&h), &choice, Path::new("/home/tester"));
        assert!(binds(&p).iter().all(|b| !b.2));
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        let env: BTreeMap<_, _> = p.env.iter().cloned().collect();
        assert_eq!(env["PIP_CACHE_DIR"], "/home/tester/.cache/pip");
    }

    #[test]
    fn the_profile_picks_among_what_the_operator_enables() {
        use Toolchain::*;
        let op = |enable: Selection, caches: Caches| Choice { enable, caches };
        let only = |l: &[Toolchain]| Selection::Only(l.to_vec());
        // Nothing from the operator: the profile's list is refused entry by entry.
        let (c, refused) = resolve(
            &op(only(&[]), Caches::Loop),
            Some(&only(&[Rustup, Pyenv])),
            Some(Caches::Shared),
        );
        assert_eq!(c, op(only(&[]), Caches::Loop));
        assert_eq!(
            refused,
            vec![
                Refused::Entry {
                    index: 0,
                    toolchain: Rustup
                },
                Refused::Entry {
                    index: 1,
                    toolchain: Pyenv
                },
                Refused::Shared
            ]
        );
        // The operator's "detected" admits any list; no profile choice takes the operator's.
        let (c, refused) = resolve(
            &op(Selection::Detected, Caches::Shared),
            Some(&only(&[Nvm])),
            None,
        );
        assert_eq!(c, op(only(&[Nvm]), Caches::Shared));
        assert!(refused.is_empty());
        let (c, _) = resolve(
            &op(Selection::Detected, Caches::Shared),
            None,
            Some(Caches::Loop),
        );
        assert_eq!(c, op(Selection::Detected, Caches::Loop));
        // "detected" in a profile is narrowed to the operator's list.
        let (c, refused) = resolve(
            &op(only(&[Mise]), Caches::Loop),
            Some(&Selection::Detected),
            None,
        );
        assert_eq!(c.enable, only(&[Mise]));
        assert_eq!(refused, vec![Refused::Detected]);
    }

    #[test]
    fn doctor_says_what_is_found_and_what_sandboxes_see() {
        let files = everything();
        let h = host(&files, &[]);
        let found = detect(&h);
        let settings = Choice {
            enable: Selection::Only(vec![Toolchain::Rustup, Toolchain::Pyenv, Toolchain::Nvm]),
            caches: Caches::Loop,
        };
        let (choice, _) = resolve(
            &settings,
            Some(&Selection::Only(vec![Toolchain::Rustup, Toolchain::Nvm])),
            None,
        );
        let r = report(
            &found,
            &settings,
            &choice,
            "rust",
            Path::new("/k/sandbox.toml"),
        );
        let seen: Vec<_> = r.iter().map(|r| r.seen).collect();
        assert_eq!(
            seen,
            vec![
                Seen::Enabled,
                Seen::NotEnabled,
                Seen::Enabled,
                Seen::NotEnabled,
                Seen::NotEnabled
            ]
        );
        assert_eq!(
            r[0].message,
            "rustup at /home/alice/.rustup, /home/alice/.cargo: in view, read-only, in sandboxes of profile 'rust' (package caches the loop's own)"
        );
        assert_eq!(
            r[1].fix.as_deref(),
            Some("add \"pyenv\" to [toolchains] enable in /k/sandbox.toml")
        );
        assert_eq!(
            r[3].fix.as_deref(),
            Some("git loop config set --operator toolchains.enable '[\"rustup\", \"pyenv\", \"nvm\", \"mise\"]' (or detected: every one found)")
        );
        let nothing = report(&[], &settings, &choice, "rust", Path::new("/k"));
        assert_eq!(
            nothing.iter().map(|r| r.seen).collect::<Vec<_>>(),
            vec![Seen::Missing, Seen::Missing]
        );
        let none = Choice {
            enable: Selection::Only(Vec::new()),
            caches: Caches::Loop,
        };
        assert_eq!(
            report(&[], &none, &none, "default", Path::new("/k"))[0].seen,
            Seen::Nothing
        );
    }

    #[test]
    fn a_selection_reads_detected_or_a_list() {
        let read = |v: Value| Selection::deserialize(v).map_err(|e| e.to_string());
        assert_eq!(
            read(Value::String("detected".into())),
            Ok(Selection::Detected)
        );
        assert_eq!(
            read(Value::Array(vec![
                Value::String("npm-prefix".into()),
                Value::String("rustup".into())
            ])),
            Ok(Selection::Only(vec![
                Toolchain::NpmPrefix,
                Toolchain::Rustup
            ]))
        );
        let err = read(Value::Array(vec![Value::String("rustp".into())])).unwrap_err();
        assert!(err.contains("did you mean 'rustup'"), "{err}");
        assert!(read(Value::String("all".into())).is_err());
    }
}
