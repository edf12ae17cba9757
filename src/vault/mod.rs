//! Vaults (DESIGN.md section 6): one user's credentials, encrypted with age to the
//! vault's recipients, kept in the personal repository and decrypted only in memory.
//!
//! How the pieces fit:
//! - [`names`] says which vault names, variable names and `$HOME` paths are valid (pure).
//! - [`identity`] loads or creates the user's age identity (X25519, or an ssh key). It
//!   lives on the host outside the workspace and never enters a sandbox.
//! - [`recipients`] parses recipients (`age1…`, `ssh-ed25519 …`, `ssh-rsa …`).
//! - [`crypto`] encrypts to a set of recipients and decrypts with an identity, in memory,
//!   and recognises an age file by its header.
//! - [`store`] is the layout on disk: listing entries (symlinks resolved and confined to
//!   `personal/<user>/`), atomic writes of ciphertext, removal, rekey.
//! - [`delivery`] decrypts the vault a loop runs with, for the sandbox.
//! - [`setup_personal_repo`] installs the secret guard and the diff textconv.
//!
//! Rules that hold everywhere: plaintext lives only in `Zeroizing` / `SecretString`
//! buffers and never in a file of the host (the temp file of an atomic write holds
//! ciphertext); every name is validated before anything is created; an operation that
//! changes several entries (rekey) decrypts and re-encrypts them all in memory before
//! the first write, so a failure half-way leaves the vault as it was.

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

use crate::error::{Error, ErrorKind, Result};
use crate::git::cmd::Git;
use crate::workspace::Workspace;

/// The vault a loop uses unless it names another; it may be absent (no credentials).
pub const DEFAULT_VAULT: &str = "default";

/// A file entry's plaintext may not be larger than this: vault files are credentials and
/// config, and every one of them is held in memory at each run.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// A variable's value may not be larger than this: the kernel refuses a single
/// environment string over 128 KiB at exec, so a larger value could never be delivered.
pub const MAX_ENV_BYTES: usize = 64 * 1024;

/// The attribute that `setup_personal_repo` puts on vault files, and the diff driver.
pub const DIFF_DRIVER: &str = "git-loop-vault";
const GITATTRIBUTES_LINE: &str = ".loopat/vaults/** diff=git-loop-vault";
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
    #[error("the vault link {link} points outside {personal} (to {target})")]
    SymlinkEscape {
        link: PathBuf,
        target: PathBuf,
        personal: PathBuf,
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

/// The hint for each error is the same whichever command meets it (and `run` meets them
/// all through [`open_for_run`]), so it is attached here, once.
impl From<VaultError> for Error {
    fn from(err: VaultError) -> Self {
        use VaultError as V;
        let (kind, hints): (ErrorKind, Vec<String>) = match &err {
            V::BadName { what, .. } => (
                ErrorKind::Usage,
                vec![match *what {
                    "vault name" => {
                        "a vault name is letters, digits and '-' (at most 64), e.g. `work`".into()
                    }
                    "variable name" => {
                        "a variable name is letters, digits and '_', not starting with a digit, e.g. GITHUB_TOKEN".into()
                    }
                    _ => "a file entry is a path below $HOME without '..', e.g. .config/gh/hosts.yml"
                        .into(),
                }],
            ),
            V::NoVault(name) => (
                ErrorKind::Failure,
                vec![
                    format!("create it: git loop vault init {name}"),
                    "see the vaults there are: git loop vault list".into(),
                ],
            ),
            V::NoEntry { vault, .. } => (
                ErrorKind::Failure,
                vec![format!("see its entries: git loop vault list {vault}")],
            ),
            V::NoIdentity(_) => (
                ErrorKind::Failure,
                vec![
                    "restore your identity from its backup, or point GIT_LOOP_IDENTITY at it".into(),
                    "a new one (git loop vault init) cannot decrypt what was encrypted to the old one until a member adds it and runs rekey".into(),
                ],
            ),
            V::UnreadableIdentity { path, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "it must be a file you can read, mode 0600: chmod 600 {}",
                    path.display()
                )],
            ),
            V::IdentityInWorkspace(_) => (
                ErrorKind::Failure,
                vec!["move it out of the workspace (the usual place is $XDG_CONFIG_HOME/git-loop/identity.txt) and point GIT_LOOP_IDENTITY at it".into()],
            ),
            V::BadIdentity { .. } => (
                ErrorKind::Failure,
                vec![
                    "an identity is an age secret key (AGE-SECRET-KEY-1…) or an unencrypted ssh-ed25519 / ssh-rsa private key".into(),
                    "point GIT_LOOP_IDENTITY at one, or move this file away and run `git loop vault init` for a new one".into(),
                ],
            ),
            V::NotRecipient {
                vault,
                recipient,
                listed,
                ..
            } => {
                let mut hints = if *listed {
                    vec![format!(
                        "your recipient is listed but the entries were encrypted before: a member who can decrypt runs `git loop vault rekey {vault}`"
                    )]
                } else {
                    vec![
                        format!(
                            "ask a member who can decrypt it to run `git loop vault recipients {vault} add {recipient}` and then `git loop vault rekey {vault}`"
                        ),
                    ]
                };
                hints.push(
                    "or point GIT_LOOP_IDENTITY at the identity this vault was encrypted to".into(),
                );
                (ErrorKind::Failure, hints)
            }
            V::Corrupt {
                vault, entry, path, ..
            } => (
                ErrorKind::Failure,
                vec![format!(
                    "restore it from git history (`git checkout -- {}` in your personal repository), or store it again: git loop vault set {vault} {}",
                    path.display(),
                    entry.replacen(':', " ", 1)
                )],
            ),
            V::BadRecipient { .. } => (
                ErrorKind::Usage,
                vec![
                    "a recipient is an age public key (age1…) or an ssh public key (ssh-ed25519 AAAA… / ssh-rsa AAAA…), or a file holding them (~/.ssh/id_ed25519.pub)".into(),
                ],
            ),
            V::BadRecipientsFile { path, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "fix or remove that line of {} (one age1… or ssh-… key per line, # for comments)",
                    path.display()
                )],
            ),
            V::NoRecipients(vault) => (
                ErrorKind::Failure,
                vec![format!(
                    "add one: git loop vault recipients {vault} add RECIPIENT"
                )],
            ),
            V::TooLarge { .. } => (
                ErrorKind::Usage,
                vec!["vault entries are credentials and small config files; keep larger files elsewhere".into()],
            ),
            V::BadValue { .. } => (
                ErrorKind::Usage,
                vec!["store binary or multi-line data as a file entry: git loop vault set VAULT file REL PATH".into()],
            ),
            V::SymlinkEscape { .. } => (
                ErrorKind::Failure,
                vec!["a vault link may point only at entries of your own vaults; remove the link or point it there".into()],
            ),
            V::SymlinkLoop(_) => (
                ErrorKind::Failure,
                vec!["remove the link or point it at an entry (a file), not back at itself".into()],
            ),
            V::DanglingLink(_) => (
                ErrorKind::Failure,
                vec!["remove the link, or restore the entry it points at".into()],
            ),
            V::WriteThroughLink(_) => (
                ErrorKind::Failure,
                vec!["remove the link first; a vault folder link would write into another vault".into()],
            ),
            V::Unexpected { .. } => (
                ErrorKind::Failure,
                vec!["move the file out of the vault; only git loop vault writes there".into()],
            ),
            V::Io { .. } => (
                ErrorKind::Failure,
                vec!["check the path's permissions and free space".into()],
            ),
            V::Encrypt { vault, .. } => (
                ErrorKind::Failure,
                vec![format!(
                    "check the recipients: git loop vault recipients {vault} list"
                )],
            ),
        };
        let mut out = Error::new(kind, err.to_string());
        out.hints = hints;
        // The cause of an i/o error is the useful part ("Permission denied"); every other
        // variant has said everything in its message.
        if let V::Io { source, .. } | V::UnreadableIdentity { source, .. } = err {
            out = out.with_source(source);
        }
        out
    }
}

/// What [`setup_personal_repo`] did, for the command's report.
#[derive(Debug, Default)]
pub struct RepoSetup {
    pub hook: Option<crate::hooks::Installed>,
    /// Why the pre-commit guard could not be installed (a hook the user manages otherwise).
    pub hook_problem: Option<Error>,
    pub gitattributes_added: bool,
}

/// Installs, in the personal repository, the pre-commit secret guard, the attribute that
/// marks vault files and the textconv that shows them in `git diff` as sizes, never values.
/// Idempotent.
pub fn setup_personal_repo(ws: &Workspace) -> Result<RepoSetup> {
    let repo = ws.personal();
    let mut report = RepoSetup::default();
    match crate::hooks::install(&repo, crate::hooks::PRE_COMMIT) {
        Ok(done) => report.hook = Some(done),
        Err(e) => report.hook_problem = Some(e),
    }
    let attributes = ws.personal_gitattributes();
    let existing = match std::fs::read_to_string(&attributes) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(
                Error::failure(format!("cannot read {}", attributes.display())).with_source(e),
            )
        }
    };
    if !existing.lines().any(|l| l.trim() == GITATTRIBUTES_LINE) {
        let mut text = existing;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(GITATTRIBUTES_LINE);
        text.push('\n');
        crate::fsutil::write_atomic(&attributes, text.as_bytes())?;
        report.gitattributes_added = true;
    }
    // The personal repository is the user's own (trusted), and `git config` is the tool
    // that writes its config file correctly.
    Git::in_dir(&repo)
        .args([
            "config",
            "--local",
            &format!("diff.{DIFF_DRIVER}.textconv"),
            TEXTCONV_COMMAND,
        ])
        .run()
        .map_err(|e| {
            Error::failure(format!(
                "cannot set the vault textconv in {}",
                repo.display()
            ))
            .with_source(e)
            .hint("check that the personal repository is a git repository: git loop doctor")
        })?;
    Ok(report)
}
