//! Vaults (DESIGN.md section 6): one user's credentials, encrypted with age to the
//! vault's recipients, kept in a git repository of their own (`vaults/<user>/`, outside
//! every sandbox's view, history included: DESIGN 4.0) and decrypted only in memory.
//!
//! How the pieces fit:
//! - [`names`] says which vault names, variable names and `$HOME` paths are valid, and
//!   [`layout`] what belongs where in a vault's folder (pure, both).
//! - [`identity`] loads or creates the user's age identity (X25519, or an ssh key). It
//!   lives on the host outside the workspace and never enters a sandbox.
//! - [`recipients`] parses recipients (`age1…`, `ssh-ed25519 …`, `ssh-rsa …`).
//! - [`crypto`] encrypts to a set of recipients and decrypts with an identity, in memory,
//!   and recognises an age file by its header; [`entryfmt`] is the plaintext inside: the
//!   entry's vault, kind and name, its binding, its value.
//! - [`pins`] keeps what the person accepted (whom a vault encrypts to, which older
//!   entries were theirs) on this machine, where no sync reaches.
//! - [`store`] is the layout on disk, read through a confined tree: listing entries (what
//!   is not as git-loop writes it is named and skipped), atomic writes of ciphertext,
//!   removal, rekey, and each entry checked to be what its name says when it is opened.
//! - [`delivery`] decrypts the vault a loop runs with, for the sandbox.
//! - [`ensure_repo`] makes the vaults' repository, [`commit`] records each change in it
//!   (exactly the paths written, each checked by the secret guard), [`migrate`] moves vaults
//!   from the personal repository, where they lived before, and [`recover`] removes what a
//!   killed command left there. [`prepare`] runs first in every command that touches them.
//!
//! Everything in the vaults' repository may have arrived through its remote (DESIGN 4.0):
//! it is read without following links, bounded, and never changes whom a vault encrypts to
//! without the person's word.
//!
//! Rules that hold everywhere: plaintext lives only in `Zeroizing` / `SecretString`
//! buffers and never in a file of the host (the temp file of an atomic write holds
//! ciphertext); every name is validated before anything is created; an operation that
//! changes several entries (rekey) decrypts and re-encrypts them all in memory before
//! the first write, so a failure half-way leaves the vault as it was. Every git command in
//! the vaults' repository runs under `locks/vaults.lock` ([`RepoLock`]), which is how a
//! git lock file left there is judged.

pub mod binding;
pub mod crypto;
pub mod delivery;
pub mod edit;
pub mod entryfmt;
pub mod identity;
pub mod layout;
pub mod migrate;
pub mod names;
pub mod pins;
pub mod recipients;
pub mod recover;
pub mod store;

use std::io;
use std::path::{Path, PathBuf};

pub use delivery::{open_for_run, open_with, Delivery};
pub use identity::Identity;
pub use migrate::migrate;
pub use store::{Bad, Decision, Entry, EntryKind, EntryRef, Vault};

use crate::confined::ConfinedError;
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
    #[error("{0}")]
    Confined(#[source] ConfinedError),
    /// An entry whose header names another vault, kind or name: copied or renamed.
    #[error("{entry} of vault '{vault}' ({}) was stored as {stored_as}: a copied or renamed entry is not delivered under another name", show(path))]
    Moved {
        vault: String,
        entry: String,
        path: PathBuf,
        stored_as: String,
    },
    /// An entry of the older format that this machine never pinned.
    #[error("{entry} of vault '{vault}' ({}) is in the older format (no name inside) and was not there when this machine pinned the vault: it is not trusted", show(path))]
    UnpinnedLegacy {
        vault: String,
        entry: String,
        path: PathBuf,
    },
    /// A change of recipients that arrived by sync waits for the person's decision.
    #[error("the recipients of vault '{0}' changed by sync and you have not accepted or refused that yet")]
    Undecided(String),
    /// A vault whose recipients were never accepted on this machine.
    #[error(
        "vault '{0}' arrived by sync and you have not accepted its recipients on this machine"
    )]
    NeverAccepted(String),
    #[error("{0} is a symlink; a vault entry is not written through a link to a folder")]
    WriteThroughLink(PathBuf),
    #[error(
        "{} does not belong in a vault: {}",
        show(path),
        crate::terminal::shown(why)
    )]
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
    /// The old vaults' folder holds something that is not git-loop's: nothing was moved.
    #[error("{}: {}", show(path), crate::terminal::shown(why))]
    NotMoved { path: PathBuf, why: String },
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

/// A path of the vaults for a message: every control character visible (names there may
/// have arrived by sync).
fn show(path: &Path) -> crate::terminal::Shown<'_> {
    crate::terminal::shown(path.as_os_str().as_encoded_bytes())
}

impl From<names::NameError> for VaultError {
    fn from(e: names::NameError) -> Self {
        VaultError::BadName {
            what: e.what,
            shown: e.shown,
            reason: e.reason,
        }
    }
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

/// Proof that `locks/vaults.lock` is held: every git command in the vaults' repository runs
/// under it (commits, the moves of a migration, sync), so while it is held no git-loop
/// command is writing there, and a git lock file found there is a killed one's.
/// (None: the caller's own hold of it, checked where it was taken:
/// `recover::remove_stale_git_locks_under`.)
pub struct RepoLock(#[allow(dead_code)] Option<Lock>);

/// Waits for the vaults' repository lock.
pub fn lock_repo(ws: &Workspace) -> Result<RepoLock> {
    Ok(RepoLock(Some(Lock::acquire(&ws.vaults_lock())?)))
}

/// Takes the vaults' repository lock only if nobody holds it.
pub fn try_lock_repo(ws: &Workspace) -> Result<Option<RepoLock>> {
    Ok(Lock::try_acquire(&ws.vaults_lock())?.map(|l| RepoLock(Some(l))))
}

/// The local config key that tells the secret guard's hook it runs in the vaults' repository.
pub const ROLE_KEY: &str = "loop.role";
pub const ROLE_VAULTS: &str = "vaults";

/// Makes the vaults' repository (`vaults/<user>/`) when it is missing: a git repository
/// of its own, which no sandbox ever sees and which can still sync through a remote, with
/// the attributes and the textconv that show entries in `git diff` as sizes, never values,
/// and the secret guard. Returns whether it was made now.
pub fn ensure_repo(ws: &Workspace) -> Result<bool> {
    if ws.vaults_dir().join(".git").is_dir() {
        return Ok(false);
    }
    let held = lock_repo(ws)?;
    ensure_repo_held(ws, &held)
}

fn ensure_repo_held(ws: &Workspace, held: &RepoLock) -> Result<bool> {
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
    configure(&repo)?;
    let _ = ensure_guard(ws);
    commit_paths(
        ws,
        held,
        &[PathBuf::from(".gitattributes")],
        "vaults: start",
    )?;
    Ok(true)
}

/// The repository's local config: the diff driver, and the role the guard's hook reads.
fn configure(repo: &Path) -> Result<()> {
    Git::in_dir(repo)
        .args([
            "config",
            "--local",
            &format!("diff.{DIFF_DRIVER}.textconv"),
            TEXTCONV_COMMAND,
        ])
        .run()?;
    Git::in_dir(repo)
        .args(["config", "--local", ROLE_KEY, ROLE_VAULTS])
        .run()?;
    Ok(())
}

/// The secret guard in the vaults' repository, as in the personal repositories: a commit
/// made there by hand is checked as git-loop checks its own (every file an age file, its
/// recipients or the repository's attributes, no key or token anywhere).
pub fn ensure_guard(ws: &Workspace) -> Result<Installed> {
    crate::hooks::install(&ws.vaults_dir(), crate::hooks::PRE_COMMIT)
}

/// A vaults' repository cloned from the person's remote: its attributes and diff driver
/// as [`ensure_repo`] makes them (a clone carries no config), the guard, committed if the
/// remote lacked the attributes.
pub fn adopt_clone(ws: &Workspace) -> Result<()> {
    let held = lock_repo(ws)?;
    let repo = ws.vaults_dir();
    let attributes = repo.join(".gitattributes");
    if crate::fsutil::read_regular(&attributes, GITATTRIBUTES.len() as u64)
        .ok()
        .flatten()
        .as_deref()
        != Some(GITATTRIBUTES.as_bytes())
    {
        crate::fsutil::write_atomic(&attributes, GITATTRIBUTES.as_bytes())?;
    }
    configure(&repo)?;
    ensure_guard(ws)?;
    commit_paths(
        ws,
        &held,
        &[PathBuf::from(".gitattributes")],
        "vaults: attributes",
    )
}

/// Records what `v` wrote and removed in the vaults' repository as one commit (nothing
/// when nothing changed).
pub fn commit(ws: &Workspace, v: &Vault, message: &str) -> Result<()> {
    let touched = v.touched();
    if touched.is_empty() {
        return Ok(());
    }
    let held = lock_repo(ws)?;
    commit_paths(ws, &held, &touched, message)?;
    v.forget_journal();
    Ok(())
}

/// Records `paths` (below the vaults' repository: what the caller wrote or removed, and
/// nothing else, never `git add --all`) as one commit. Each path must be a regular file or
/// gone; everything staged then is checked by the secret guard, every path (not only
/// those in a vault's folder: an identity planted at the top is refused as one), and a
/// finding unstages it and refuses the commit, so no plaintext reaches the history.
pub fn commit_paths(
    ws: &Workspace,
    held: &RepoLock,
    paths: &[PathBuf],
    message: &str,
) -> Result<()> {
    let repo = ws.vaults_dir();
    if !repo.join(".git").is_dir() {
        return Ok(());
    }
    // Nobody else runs git here now: a lock file is a killed command's.
    recover::remove_stale_git_locks(ws, held);
    let tree = crate::confined::Tree::open(&repo)
        .map_err(VaultError::Confined)?
        .ok_or_else(|| VaultError::io("cannot open", &repo, io::ErrorKind::NotFound.into()))?;
    let mut stage = Vec::new();
    for path in paths {
        match tree.kind(path).map_err(VaultError::Confined)? {
            None | Some(crate::confined::Kind::File) => stage.push(path.clone()),
            Some(_) => {
                return Err(VaultError::Unexpected {
                    path: repo.join(path),
                    why: "it is not a regular file; only files git-loop wrote are committed".into(),
                }
                .into())
            }
        }
    }
    if !stage.is_empty() {
        // update-index adds what is there and drops what was removed, path by path.
        Git::in_dir(&repo)
            .args(["update-index", "--add", "--remove", "--"])
            .args(&stage)
            .run()?;
    }
    crate::failpoint::hit("vault:staged");
    let staged = crate::guard::staged(&repo)?;
    let removed = Git::in_dir(&repo)
        .args(["diff", "--cached", "--name-only", "-z", "--diff-filter=D"])
        .read()?;
    if staged.is_empty() && removed.is_empty() {
        return Ok(());
    }
    let allow = crate::guard::Allowlist::builtin();
    for file in &staged {
        let content = if file.mode == crate::guard::MODE_GITLINK {
            Vec::new()
        } else {
            crate::guard::blob(&repo, &file.blob)?
        };
        if let Some(finding) =
            crate::guard::check_vaults_repo(&file.path, file.mode, &content, &allow)
                .into_iter()
                .next()
        {
            let _ = Git::in_dir(&repo)
                .args(["reset", "--quiet", "--"])
                .arg(&file.path)
                .run();
            return Err(VaultError::PlaintextInRepo {
                path: repo.join(&file.path),
                finding: finding.to_string(),
            }
            .into());
        }
    }
    crate::init::scaffold_identity(Git::in_dir(&repo))
        // The hook would run the same guard, in another process, on the same index.
        .args(["commit", "--quiet", "--no-verify", "-m", message])
        .run()?;
    Ok(())
}

/// What every command that touches the vaults does first, before it reads them: removes
/// what killed commands left there ([`recover`]), moves vaults from the personal repository
/// ([`migrate`]; a refusal is a warning, and the other vaults keep working), begins pinning
/// on a machine that has not ([`pins::start`]), and puts the secret guard in a repository
/// made by an earlier version.
pub fn prepare(report: &mut dyn Report, ws: &Workspace) -> Result<()> {
    for line in recover::leftovers(ws) {
        report.status(&line)?;
    }
    migrate::migrate_and_say(report, ws)?;
    if pins::start(ws)? {
        let (names, _) = Vault::names(ws)?;
        if !names.is_empty() {
            report.status(&format!(
                "pinned the recipients of {} on this machine ({}): a change that arrives by sync waits for your word",
                if names.len() == 1 { "your vault".to_string() } else { format!("your {} vaults", names.len()) },
                names.join(", ")
            ))?;
        }
    }
    let repo = ws.vaults_dir();
    if repo.join(".git").is_dir() && !repo.join(".git/hooks/pre-commit").exists() {
        if let Err(e) = (|| {
            configure(&repo)?;
            ensure_guard(ws)
        })() {
            report.problem(
                "the secret guard is not installed in the vaults' repository: ",
                &e,
            )?;
        }
    }
    Ok(())
}

/// What to say about a vault whose recipients are not the ones accepted here (None: they
/// are); a vault never accepted on this machine is an error, since nothing of it is used.
pub fn decision_warning(v: &Vault) -> std::result::Result<Option<String>, VaultError> {
    match v.decision()? {
        Decision::Accepted => Ok(None),
        Decision::New => Err(VaultError::NeverAccepted(v.name().to_string())),
        d => Ok(Some(describe_decision(v.name(), &d))),
    }
}

/// One line on a decision waiting for the person, with what to run.
pub fn describe_decision(name: &str, decision: &Decision) -> String {
    let keys = |list: &[String]| {
        list.iter()
            .map(|k| {
                let k = crate::terminal::visible(k);
                if k.chars().count() > 80 {
                    format!("{}…", k.chars().take(60).collect::<String>())
                } else {
                    k.into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let decide = format!(
        "decide with `git loop vault recipients accept {name}` or `git loop vault recipients refuse {name}`"
    );
    match decision {
        Decision::Accepted => format!("the recipients of vault '{name}' are the ones you accepted"),
        Decision::Changed { added, removed } => {
            let mut what = Vec::new();
            if !added.is_empty() {
                what.push(format!("added {}", keys(added)));
            }
            if !removed.is_empty() {
                what.push(format!("removed {}", keys(removed)));
            }
            format!(
                "the recipients of vault '{name}' changed by sync ({}) and are not used: entries are encrypted to the ones you accepted until you {decide}",
                what.join("; ")
            )
        }
        Decision::Unreadable(why) => format!(
            "the recipients file of vault '{name}' changed by sync and cannot be read ({}); entries are encrypted to the ones you accepted until you {decide}",
            crate::terminal::visible(why)
        ),
        Decision::New => format!(
            "vault '{name}' arrived by sync and its recipients were never accepted on this machine: nothing of it is used until you run `git loop vault recipients accept {name}`"
        ),
    }
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
    if ensure_repo(ws)? {
        report.status(&format!(
            "created the vaults' repository {} (outside every sandbox's view)",
            ws.vaults_dir().display()
        ))?;
    }
    {
        let _lock = Lock::acquire(&ws.vault_lock(name))?;
        if v.create(&[id.recipient().to_string()])? {
            report.status(&format!(
                "created vault '{name}' in {} for {}",
                v.dir().display(),
                id.recipient()
            ))?;
        } else {
            let listed = match v.accepted_recipients()? {
                Some(accepted) => accepted,
                None => v.recipients()?,
            };
            if !id.recipients().iter().any(|r| listed.contains(r)) {
                let warning = VaultError::NotAMember {
                    vault: name.to_string(),
                    recipient: id.recipient().to_string(),
                };
                report.problem("", &warning.into())?;
            }
        }
    }
    commit(ws, &v, &format!("vault {name}: init"))?;
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
        for e in v.entries().map(|l| l.entries).unwrap_or_default() {
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
    let entries = v.entries().map(|l| l.entries).unwrap_or_default();
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
