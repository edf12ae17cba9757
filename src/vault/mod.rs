//! Vaults (DESIGN.md section 6): one user's credentials, encrypted with age to the
//! vault's recipients, kept in a git repository of their own (`vaults/<user>/`, outside
//! every sandbox's view, history included: DESIGN 4.0) and decrypted only in memory.
//!
//! How the pieces fit:
//! - [`names`] says which vault names, variable names and `$HOME` paths are valid (pure).
//! - [`identity`] loads or creates the user's age identity (X25519, or an ssh key). It
//!   lives on the host outside the workspace and never enters a sandbox.
//! - [`recipients`] parses recipients (`age1…`, `ssh-ed25519 …`, `ssh-rsa …`).
//! - [`crypto`] encrypts to a set of recipients and decrypts with an identity, in memory,
//!   and recognises an age file by its header.
//! - [`store`] is the layout on disk: listing entries (symlinks resolved and confined to
//!   `vaults/<user>/`), atomic writes of ciphertext, removal, rekey.
//! - [`delivery`] decrypts the vault a loop runs with, for the sandbox.
//! - [`ensure_repo`] makes the vaults' repository, [`commit`] records each change in it,
//!   and [`migrate`] moves vaults from the personal repository, where they lived before.
//!
//! Rules that hold everywhere: plaintext lives only in `Zeroizing` / `SecretString`
//! buffers and never in a file of the host (the temp file of an atomic write holds
//! ciphertext); every name is validated before anything is created; an operation that
//! changes several entries (rekey) decrypts and re-encrypts them all in memory before
//! the first write, so a failure half-way leaves the vault as it was.

pub mod binding;
pub mod crypto;
pub mod delivery;
pub mod edit;
pub mod identity;
pub mod names;
pub mod recipients;
pub mod store;

use std::io;
use std::path::PathBuf;

pub use delivery::{open_for_run, open_with, Delivery};
pub use identity::Identity;
pub use store::{Entry, EntryKind, EntryRef, Vault};

use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::git::cmd::Git;
use crate::hooks::Installed;
use crate::report::Report;
use crate::workspace::Workspace;

/// The vault a loop uses unless it names another; it may be absent (no credentials).
pub const DEFAULT_VAULT: &str = "default";

/// The vault name that means none: a loop made with `--vault none` (or `vault.default =
/// "none"`) gets no credentials, whatever vaults there are.
pub const NO_VAULT: &str = "none";

/// A file entry's plaintext may not be larger than this: vault files are credentials and
/// config, and every one of them is held in memory at each run.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// A variable's value may not be larger than this: the kernel refuses a single
/// environment string over 128 KiB at exec, so a larger value could never be delivered.
pub const MAX_ENV_BYTES: usize = 64 * 1024;

/// The attribute that [`ensure_repo`] puts on vault entries, and the diff driver.
pub const DIFF_DRIVER: &str = "git-loop-vault";
const GITATTRIBUTES: &str = "# Vault entries show in `git diff` as sizes, never values.\n*/envs/** diff=git-loop-vault\n*/mounts/** diff=git-loop-vault\n";
/// Run by git (through `sh -c`) with the temp file of a blob appended.
const TEXTCONV_COMMAND: &str = "git-loop hook textconv-vault";

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("{what} {shown} is not valid: {reason}")]
    BadName {
        what: &'static str,
        /// The name as it may be shown (quoted, control characters escaped).
        shown: String,
        reason: &'static str,
    },
    #[error("vault '{0}' does not exist")]
    NoVault(String),
    #[error("vault '{vault}' has no entry {entry}")]
    NoEntry { vault: String, entry: String },
    #[error("no identity at {0}")]
    NoIdentity(PathBuf),
    #[error("cannot read the identity {path}")]
    UnreadableIdentity {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "the identity {0} is inside the workspace, where a sandbox or a commit could reach it"
    )]
    IdentityInWorkspace(PathBuf),
    #[error("{path} is not a usable age or ssh identity: {reason}")]
    BadIdentity { path: PathBuf, reason: String },
    #[error("your identity ({identity}) is not a recipient of {entry} in vault '{vault}'")]
    NotRecipient {
        vault: String,
        entry: String,
        identity: PathBuf,
        /// Your own recipient, to hand to a member who can decrypt the vault.
        recipient: String,
        /// Whether `recipients.txt` lists it already (then only a rekey is missing).
        listed: bool,
    },
    #[error("cannot decrypt {entry} of vault '{vault}' ({path}): {reason}")]
    Corrupt {
        vault: String,
        entry: String,
        path: PathBuf,
        reason: String,
    },
    #[error("{what} is not a valid recipient: {reason}")]
    BadRecipient { what: String, reason: String },
    #[error("{path} line {line} is not a valid recipient: {reason}")]
    BadRecipientsFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("vault '{0}' has no recipients")]
    NoRecipients(String),
    #[error("{what} is larger than {limit} bytes, the most a vault entry of its kind may hold")]
    TooLarge { what: String, limit: usize },
    #[error("{what} is not a valid value: {reason}")]
    BadValue { what: String, reason: &'static str },
    #[error("{0} cannot be bound to hosts: it holds no credential git loop can find to stand a placeholder for")]
    NotBindable(String),
    #[error("the vault link {link} points outside {vaults} (to {target})")]
    SymlinkEscape {
        link: PathBuf,
        target: PathBuf,
        vaults: PathBuf,
    },
    #[error("the vault link {0} is part of a symlink loop")]
    SymlinkLoop(PathBuf),
    #[error("the vault link {0} points at nothing")]
    DanglingLink(PathBuf),
    #[error("{0} is a symlink; a vault entry is not written through a link to a folder")]
    WriteThroughLink(PathBuf),
    #[error("{path} does not belong in a vault: {why}")]
    Unexpected { path: PathBuf, why: String },
    #[error("{what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// A file in the vaults' repository that looks like a secret in plaintext.
    #[error("not committing {} to the vaults' repository: {finding}", path.display())]
    PlaintextInRepo { path: PathBuf, finding: String },
    /// A vault both in the old place (`legacy`) and in the vaults' repository (`target`).
    #[error("vault {name} exists both in {} and in {}", legacy.display(), target.display())]
    InBothPlaces {
        name: String,
        legacy: PathBuf,
        target: PathBuf,
    },
    /// The old vaults' folder, emptied, cannot be removed.
    #[error("cannot remove {}", .0.display())]
    LegacyLeft(PathBuf, #[source] io::Error),
    /// A vault that exists, which your identity cannot open (a warning at `vault init`).
    #[error("vault '{vault}' exists and your identity is not one of its recipients")]
    NotAMember { vault: String, recipient: String },
    #[error("no tmpfs for the plaintext copy: neither $XDG_RUNTIME_DIR nor /dev/shm is one")]
    NoTmpfs,
    #[error("cannot start the editor `{command}`")]
    EditorStart {
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("the editor `{command}` failed ({status}); nothing was changed")]
    EditorFailed { command: String, status: String },
    #[error("cannot encrypt for vault '{vault}': {reason}")]
    Encrypt { vault: String, reason: String },
}

impl VaultError {
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        VaultError::Io {
            what,
            path: path.into(),
            source,
        }
    }
}

/// Makes the vaults' repository (`vaults/<user>/`) when it is missing: a git repository
/// of its own, which no sandbox ever sees and which can still sync through a remote, with
/// the attributes and the textconv that show entries in `git diff` as sizes, never values.
/// Returns whether it was made now.
pub fn ensure_repo(ws: &Workspace) -> Result<bool> {
    let repo = ws.vaults_dir();
    if repo.join(".git").is_dir() {
        return Ok(false);
    }
    std::fs::create_dir_all(&repo)
        .map_err(|e| Error::failure(format!("cannot create {}", repo.display())).with_source(e))?;
    // The repository is git-loop's and no sandbox can write it: git runs here on the host.
    Git::bare()
        .args(["init", "--quiet", "--template=", "--initial-branch", "main"])
        .arg(&repo)
        .run()?;
    crate::fsutil::write_atomic(&repo.join(".gitattributes"), GITATTRIBUTES.as_bytes())?;
    Git::in_dir(&repo)
        .args([
            "config",
            "--local",
            &format!("diff.{DIFF_DRIVER}.textconv"),
            TEXTCONV_COMMAND,
        ])
        .run()?;
    commit(ws, "vaults: start")?;
    Ok(true)
}

/// A vaults' repository cloned from the person's remote: its attributes and diff driver
/// as [`ensure_repo`] makes them (a clone carries no config), committed if the remote
/// lacked the attributes.
pub fn adopt_clone(ws: &Workspace) -> Result<()> {
    let repo = ws.vaults_dir();
    let attributes = repo.join(".gitattributes");
    if std::fs::read_to_string(&attributes).ok().as_deref() != Some(GITATTRIBUTES) {
        crate::fsutil::write_atomic(&attributes, GITATTRIBUTES.as_bytes())?;
    }
    Git::in_dir(&repo)
        .args([
            "config",
            "--local",
            &format!("diff.{DIFF_DRIVER}.textconv"),
            TEXTCONV_COMMAND,
        ])
        .run()?;
    commit(ws, "vaults: attributes")
}

/// Records what changed in the vaults' repository as one commit (nothing when nothing
/// changed). Every file committed is checked first: entries must be age files, so no
/// plaintext ever reaches the history.
pub fn commit(ws: &Workspace, message: &str) -> Result<()> {
    let repo = ws.vaults_dir();
    if !repo.join(".git").is_dir() {
        return Ok(());
    }
    Git::in_dir(&repo).args(["add", "--all"]).run()?;
    let staged = Git::in_dir(&repo)
        .args(["diff", "--cached", "--name-only", "-z", "--no-renames"])
        .read()?;
    if staged.is_empty() {
        return Ok(());
    }
    // The repository's own files (its attributes) are git-loop's; what is in a vault's
    // folder must be an age file or its recipients.
    for path in staged.split('\0').filter(|p| p.contains('/')) {
        let full = repo.join(path);
        let Ok(Some(bytes)) = crate::fsutil::read_regular(&full) else {
            continue;
        };
        let as_in_personal = format!("{}{path}", crate::guard::VAULTS_PREFIX);
        if let Some(finding) = crate::guard::check(&as_in_personal, 0o100644, &bytes)
            .into_iter()
            .next()
        {
            let _ = Git::in_dir(&repo).args(["reset", "--quiet"]).run();
            return Err(VaultError::PlaintextInRepo {
                path: full,
                finding: finding.to_string(),
            }
            .into());
        }
    }
    crate::init::scaffold_identity(Git::in_dir(&repo))
        .args(["commit", "--quiet", "--no-verify", "-m", message])
        .run()?;
    Ok(())
}

/// Moves vaults from `personal/<user>/.loopat/vaults/`, where they lived before, into the
/// vaults' repository, and commits them there; the personal repository's next commit
/// records them gone. Returns the names moved (empty when there was nothing to move). A
/// vault that exists in both places is an error, and nothing is moved.
pub fn migrate(ws: &Workspace) -> Result<Vec<String>> {
    let legacy = ws.legacy_vaults_dir();
    if std::fs::symlink_metadata(&legacy).is_err() {
        return Ok(Vec::new());
    }
    let _lock = crate::fsutil::Lock::acquire(&ws.vaults_lock())?;
    let listing = match std::fs::read_dir(&legacy) {
        Ok(listing) => listing,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::failure(format!("cannot read {}", legacy.display())).with_source(e))
        }
    };
    let mut names: Vec<std::ffi::OsString> = listing.flatten().map(|e| e.file_name()).collect();
    names.sort();
    let target = ws.vaults_dir();
    for name in &names {
        if std::fs::symlink_metadata(target.join(name)).is_ok() {
            return Err(VaultError::InBothPlaces {
                name: name.to_string_lossy().into_owned(),
                legacy: legacy.clone(),
                target: target.clone(),
            }
            .into());
        }
    }
    if !names.is_empty() {
        ensure_repo(ws)?;
    }
    let mut moved = Vec::new();
    for name in names {
        std::fs::rename(legacy.join(&name), target.join(&name)).map_err(|e| {
            Error::failure(format!(
                "cannot move {} to {}",
                legacy.join(&name).display(),
                target.display()
            ))
            .with_source(e)
        })?;
        moved.push(name.to_string_lossy().into_owned());
    }
    std::fs::remove_dir(&legacy).map_err(|e| VaultError::LegacyLeft(legacy.clone(), e))?;
    if !moved.is_empty() {
        commit(
            ws,
            &format!("vaults: moved from personal/{}/.loopat/vaults", ws.user()),
        )?;
    }
    Ok(moved)
}

/// [`migrate`], saying once what moved.
pub fn migrate_and_say(report: &mut dyn Report, ws: &Workspace) -> Result<()> {
    let moved = migrate(ws)?;
    if !moved.is_empty() {
        report.status(&format!(
            "moved {} vault{} ({}) from {} to {}, a repository of their own that no sandbox sees",
            moved.len(),
            if moved.len() == 1 { "" } else { "s" },
            moved.join(", "),
            ws.legacy_vaults_dir().display(),
            ws.vaults_dir().display()
        ))?;
    }
    Ok(())
}

/// The identity's path, checked to be outside the workspace.
pub fn identity_path(ws: &Workspace) -> Result<PathBuf> {
    let path = crate::workspace::HostPaths::from_env()?.identity;
    identity::check_location(&path, ws.root())?;
    Ok(path)
}

fn warn_loose(report: &mut dyn Report, id: &Identity) -> Result<()> {
    if id.loose_mode {
        report.warn(&format!(
            "your identity {} can be read by others: chmod 600 it",
            id.path().display()
        ))?;
    }
    Ok(())
}

/// Creates the identity and the vault when missing, and the personal repository's guard.
pub fn init(report: &mut dyn Report, ws: &Workspace, name: &str) -> Result<Identity> {
    let path = identity_path(ws)?;
    let (id, created) = identity::ensure(&path)?;
    if created {
        report.status(&format!(
            "created your identity {} (back it up: it is the only key to your vaults)",
            path.display()
        ))?;
    }
    warn_loose(report, &id)?;
    let v = Vault::at(ws, name)?;
    {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        if v.create(&[id.recipient().to_string()])? {
            report.status(&format!(
                "created vault '{name}' in {} for {}",
                v.dir().display(),
                id.recipient()
            ))?;
        } else {
            let listed = v.recipients()?;
            if !id.recipients().iter().any(|r| listed.contains(r)) {
                let warning = VaultError::NotAMember {
                    vault: name.to_string(),
                    recipient: id.recipient().to_string(),
                };
                report.problem("", &warning.into())?;
            }
        }
    }
    if ensure_repo(ws)? {
        report.status(&format!(
            "created the vaults' repository {} (outside every sandbox's view)",
            ws.vaults_dir().display()
        ))?;
    }
    commit(ws, &format!("vault {name}: init"))?;
    // The personal repository keeps its secret guard: plaintext that looks like a vault
    // entry, a private key or a token never enters its history either.
    match crate::hooks::install(&ws.personal(), crate::hooks::PRE_COMMIT) {
        Ok(Installed::Created(p)) | Ok(Installed::Updated(p)) => {
            report.status(&format!("installed the secret guard in {}", p.display()))?
        }
        Ok(_) => {}
        Err(problem) => {
            report.problem("the pre-commit secret guard is not installed: ", &problem)?;
        }
    }
    Ok(id)
}

/// The vault to write to: an existing one, or `default`, created on first use.
pub fn open_for_write(report: &mut dyn Report, ws: &Workspace, name: &str) -> Result<Vault> {
    let v = Vault::at(ws, name)?;
    if !v.exists() && name == DEFAULT_VAULT {
        init(report, ws, name)?;
    }
    Ok(Vault::open(ws, name)?)
}

/// The loops whose runs get vault `name` (their record names it), sorted.
pub fn loops_using(ws: &Workspace, name: &str) -> Vec<String> {
    ws.loop_ids()
        .unwrap_or_default()
        .into_iter()
        .filter(|id| crate::loops::load(ws, id).is_ok_and(|r| r.vault == name))
        .collect()
}

/// What a loop with vault `name` receives, by name only (nothing is decrypted): its
/// variables and its `$HOME` files.
pub fn entry_names(ws: &Workspace, name: &str) -> (Vec<String>, Vec<String>) {
    let mut vars = Vec::new();
    let mut files = Vec::new();
    if name == NO_VAULT {
        return (vars, files);
    }
    if let Ok(v) = Vault::open(ws, name) {
        for e in v.entries().unwrap_or_default() {
            match e.entry.kind {
                EntryKind::Env => vars.push(e.entry.name),
                EntryKind::File => files.push(e.entry.name),
            }
        }
    }
    (vars, files)
}

/// The hosts each entry of vault `name` is bound to, by label (`env:NAME`): `None` where
/// the binding cannot be read (it is encrypted with the value, and the identity is missing
/// or not a recipient), an empty list for an unbound entry.
pub fn entry_bindings(ws: &Workspace, name: &str) -> Vec<(String, Option<binding::Hosts>)> {
    if name == NO_VAULT {
        return Vec::new();
    }
    let Ok(v) = Vault::open(ws, name) else {
        return Vec::new();
    };
    let entries = v.entries().unwrap_or_default();
    let id = identity_path(ws).ok().and_then(|p| Identity::load(&p).ok());
    entries
        .into_iter()
        .map(|e| {
            let hosts = id
                .as_ref()
                .and_then(|id| v.open_entry(id, &e).ok())
                .map(|(_, hosts)| hosts);
            (e.entry.label(), hosts)
        })
        .collect()
}

/// Says who gets an entry just stored in vault `name`: the loops that use it, new loops
/// when it is the default, and that it goes to whatever runs in them.
pub fn say_scope(
    report: &mut dyn Report,
    ws: &Workspace,
    name: &str,
    default: &str,
    label: &str,
) -> Result<()> {
    let users = loops_using(ws, name);
    let loops = if users.is_empty() {
        "no loop yet".to_string()
    } else {
        format!(
            "loop{} {}",
            if users.len() == 1 { "" } else { "s" },
            users.join(", ")
        )
    };
    let new = if name == default {
        format!(" and every new loop (vault.default is '{default}')")
    } else {
        format!(" (new loops get it with `git loop new --vault {name}`)")
    };
    report.status(&format!("{label} goes to {loops}{new}"))?;
    if name == default {
        report.warn(&format!(
            "every loop with vault '{name}' gets {label}, whatever runs there (an untrusted project's install scripts too); keep what only some loops need in a vault of its own (git loop vault init NAME, git loop new --vault NAME)"
        ))?;
    }
    Ok(())
}
