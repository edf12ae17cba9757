//! What is installed where: the toolchains found under a described host (pure over that description).

use super::*;

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
    /// The credential files below folder `root` (see `credentials`), searched within the
    /// bounds of that module.
    fn scan(&self, root: &Path) -> super::credentials::Scan {
        match super::credentials::walk_files(self, root) {
            Some(found) => super::credentials::Scan::Found(found),
            None => super::credentials::Scan::TooMany,
        }
    }
}

/// The most of a tool's small file (an `.npmrc`, nvm's alias, mise's config) read.
pub(super) const MAX_READ: u64 = 256 << 10;

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
    fn scan(&self, root: &Path) -> super::credentials::Scan {
        // One cache per process, read once, written back after a new search.
        static CACHE: std::sync::Mutex<Option<super::credentials::Cache>> =
            std::sync::Mutex::new(None);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        let cache = cache.get_or_insert_with(super::credentials::Cache::open);
        let scan = cache.scan(self, root);
        cache.save();
        scan
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
    /// The home folder and each of `guarded` with every link resolved, found once for this
    /// host (see [`Host::guard`]).
    pub reals: std::cell::OnceCell<(PathBuf, Vec<PathBuf>)>,
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
pub(super) const SYSTEM: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/etc"];

pub(super) fn is_system(path: &Path) -> bool {
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

    pub(super) fn is_dir(&self, p: &Path) -> bool {
        self.files.kind(p) == Some(Kind::Dir)
    }

    pub(super) fn is_file(&self, p: &Path) -> bool {
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
        // Resolved once per host, not once per folder judged: each resolution reads every
        // link on the way, and a run judges each toolchain's folders twice (for the shared
        // caches and for the binds), which made 120 of a start's system calls with two
        // toolchains. A host lives for one command's look at the toolchains.
        let (home, guarded) = self.reals.get_or_init(|| {
            (
                self.files.real(&self.home),
                self.guarded
                    .iter()
                    .map(|g| self.files.real(&g.path))
                    .collect(),
            )
        });
        if real == *home || home.starts_with(&real) {
            return Some(format!(
                "{} is (or holds) the home folder {}",
                folder.display(),
                self.home.display()
            ));
        }
        for (g, path) in self.guarded.iter().zip(guarded) {
            if path.starts_with(&real) || (g.inside_too && real.starts_with(path)) {
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
pub(super) fn rustup(host: &Host) -> Option<Found> {
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

pub(super) fn pyenv(host: &Host) -> Option<Found> {
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

pub(super) fn nvm(host: &Host) -> Option<Found> {
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
pub(super) fn version_key(s: &str) -> Option<Vec<u64>> {
    s.split('.').map(|p| p.parse().ok()).collect()
}

/// mise: its data folder (installs, shims), the mise binary its shims link to, and the
/// `[tools]` of its global config (nothing else of it: its `[env]` may hold secrets).
pub(super) fn mise(host: &Host) -> Option<Found> {
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
pub(super) fn npm_prefix(host: &Host) -> Option<Found> {
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
pub(super) fn npmrc_value(host: &Host, key: &str) -> Option<PathBuf> {
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
pub(super) fn host_cache(host: &Host, cache: Cache) -> (PathBuf, &'static str) {
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
pub(super) fn loop_cache(cache: Cache) -> &'static str {
    match cache {
        Cache::Cargo => ".cache/cargo",
        Cache::Pip => ".cache/pip",
        Cache::Npm => ".npm",
    }
}
