//! A vault on disk (DESIGN.md section 6), in the vaults' repository:
//!
//! ```text
//! vaults/<user>/<vault>/
//!   recipients.txt          age recipients, one per line
//!   envs/<NAME>.age         -> environment variable NAME
//!   mounts/home/<rel>.age   -> file $HOME/<rel> (folders mirrored)
//! ```
//!
//! What is there arrives through the vaults' remote as much as from this machine (DESIGN
//! 4.0), so every path is opened below the repository's root through a confined [`Tree`]:
//! no link is followed at any component, files must be regular and are read bounded. A
//! name that is not as git-loop writes it (`layout.rs`: a link, a FIFO, a name with control
//! characters, a file where a folder goes) is a [`Bad`] entry: named, escaped, and skipped,
//! never fatal for the rest of the vault or for other vaults.
//!
//! Each entry's age file holds its vault, kind and name in front of its value
//! (`entryfmt.rs`), checked when it is opened: a file copied or renamed into another vault
//! or name is refused there. An entry of the older format (no name inside) is opened only
//! if this machine pinned it when it first pinned the vault (`pins.rs`); `rekey` rewrites
//! those with their names. Which recipients a write encrypts to is the pinned set, never a
//! recipients.txt that arrived by sync and was not accepted.
//!
//! Writes replace an entry's file atomically (a temp file in the same folder, holding
//! ciphertext only, then a rename, all below the confined root); folders are made without
//! following a link. Every path is noted before it is written or removed
//! ([`Vault::touched`], and a journal under `locks/` that names this process): the commit
//! stages exactly those, and if the command is killed before it commits, the next command
//! commits them (`recover.rs`).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use super::crypto::{self, DecryptFailure};
use super::entryfmt::{self, Format, StoredAs};
use super::identity::Identity;
use super::layout::{self, Class, Node, Top};
use super::names;
use super::pins::{self, Pins};
use super::recipients::{Recipient, RecipientsFile};
use super::{VaultError, MAX_ENV_BYTES, MAX_FILE_BYTES};
use crate::confined::{Kind, Tree};
use crate::terminal::shown;
use crate::workspace::Workspace;

/// No entry's ciphertext is larger than this (1 MiB of plaintext, armored, with a header
/// for many recipients); a larger file is refused before it is read into memory.
const MAX_CIPHERTEXT_BYTES: u64 = 2 * 1024 * 1024;

/// A recipients file is public keys, one a line.
const MAX_RECIPIENTS_BYTES: u64 = 256 * 1024;

/// The most names one vault's walk looks at (a vault holds credentials: tens, not
/// thousands); the rest of a larger tree is one bad entry, not a stall.
const MAX_NAMES: usize = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Env,
    File,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Env => "env",
            EntryKind::File => "file",
        }
    }

    pub fn limit(self) -> usize {
        match self {
            EntryKind::Env => MAX_ENV_BYTES,
            EntryKind::File => MAX_FILE_BYTES,
        }
    }

    fn stored(self) -> entryfmt::Kind {
        match self {
            EntryKind::Env => entryfmt::Kind::Env,
            EntryKind::File => entryfmt::Kind::File,
        }
    }
}

/// An entry by kind and name (`env:GITHUB_TOKEN`, `file:.config/gh/hosts.yml`), validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRef {
    pub kind: EntryKind,
    /// The variable name, or the path below `$HOME`.
    pub name: String,
}

impl EntryRef {
    pub fn env(name: &str) -> Result<EntryRef, VaultError> {
        names::env_name(name)?;
        Ok(EntryRef {
            kind: EntryKind::Env,
            name: name.to_string(),
        })
    }

    pub fn file(rel: &str) -> Result<EntryRef, VaultError> {
        let rel = names::home_rel(rel)?;
        Ok(EntryRef {
            kind: EntryKind::File,
            name: rel.to_string_lossy().into_owned(),
        })
    }

    /// `env:NAME` or `file:REL`; None for a bare name (resolved against the vault).
    pub fn parse_prefixed(text: &str) -> Option<Result<EntryRef, VaultError>> {
        if let Some(name) = text.strip_prefix("env:") {
            Some(EntryRef::env(name))
        } else {
            text.strip_prefix("file:").map(EntryRef::file)
        }
    }

    /// How commands and messages name the entry.
    pub fn label(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.name)
    }

    /// The entry's file below its vault's folder.
    fn rel_in_vault(&self) -> PathBuf {
        match self.kind {
            EntryKind::Env => {
                Path::new(layout::ENVS).join(format!("{}{}", self.name, layout::SUFFIX))
            }
            EntryKind::File => {
                let mut name = OsString::from(&self.name);
                name.push(layout::SUFFIX);
                Path::new(layout::MOUNTS).join(layout::HOME).join(name)
            }
        }
    }
}

/// An entry found in a vault.
#[derive(Debug, Clone)]
pub struct Entry {
    pub entry: EntryRef,
    /// The `.age` file, for messages.
    pub path: PathBuf,
    /// The same, below the vaults' repository.
    rel: PathBuf,
    /// Size of the ciphertext.
    pub size: u64,
}

/// Something in a vault's folder, or in the vaults' folder, that is not as git-loop writes
/// it: never read, never followed, named with its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bad {
    pub path: PathBuf,
    pub why: String,
}

impl fmt::Display for Bad {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            shown(self.path.as_os_str().as_encoded_bytes()),
            shown(&self.why)
        )
    }
}

/// A vault's entries, and what was skipped.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Envs first, each group sorted.
    pub entries: Vec<Entry>,
    pub bad: Vec<Bad>,
}

/// An entry opened: its value, its hosts, and whether it is of the older format.
pub struct Opened {
    pub value: Zeroizing<Vec<u8>>,
    pub hosts: super::binding::Hosts,
    /// No name inside (an earlier git-loop wrote it); pinned on this machine, so trusted.
    pub legacy: bool,
}

/// What a write did, for the command's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
    /// A link stood where the entry's file goes; the file replaced it (nothing was written
    /// through it).
    ReplacedLink,
}

/// Whether the recipients in the repository are the ones the person accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// recipients.txt names the recipients pinned on this machine.
    Accepted,
    /// recipients.txt changed since it was accepted (by sync): the added and removed
    /// recipients, by their lines. Not used: writes encrypt to the pinned ones.
    Changed {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// recipients.txt cannot be read as recipients any more: why. Not used.
    Unreadable(String),
    /// The vault was never accepted on this machine (it arrived by sync): nothing of it is
    /// delivered or written to until it is.
    New,
}

impl Decision {
    pub fn is_accepted(&self) -> bool {
        *self == Decision::Accepted
    }
}

/// What `rekey` did.
#[derive(Debug, Default)]
pub struct Rekeyed {
    pub count: usize,
    /// Of those, entries of the older format now written with their names.
    pub upgraded: usize,
    /// Entries it left as they were, with why (refused as they are, or not entries).
    pub skipped: Vec<String>,
}

/// One vault of the workspace's user.
pub struct Vault {
    name: String,
    /// `vaults/<user>/`: every path is opened below it.
    root: PathBuf,
    dir: PathBuf,
    pins: Pins,
    /// Paths below `root` written or removed, for the commit.
    touched: RefCell<BTreeSet<PathBuf>>,
    /// Where `touched` is noted for a command that dies before it commits.
    journal: PathBuf,
}

impl Vault {
    /// The vault `name`, which must exist as a real folder.
    pub fn open(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        Vault::existing(Vault::at(ws, name)?)
    }

    /// [`Vault::open`] for a command that only looks (`doctor` without `--fix`): pinning
    /// does not begin here, so a machine that has not pinned yet reads every vault as never
    /// accepted.
    pub fn open_to_look(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        Vault::existing(Vault::at_unpinned(ws, name)?)
    }

    fn existing(vault: Vault) -> Result<Vault, VaultError> {
        let name = vault.name.clone();
        let name = name.as_str();
        match vault.tree()?.kind(name).map_err(VaultError::Confined)? {
            Some(Kind::Dir) => Ok(vault),
            None => Err(VaultError::NoVault(name.to_string())),
            Some(kind) => Err(VaultError::Unexpected {
                path: vault.dir.clone(),
                why: format!(
                    "{}, where the vault's folder is expected (links are not followed in the vaults)",
                    kind_text(kind)
                ),
            }),
        }
    }

    /// The vault `name`, existing or not; the name is validated. Pinning begins here on a
    /// machine where it has not (`pins::start`), whichever command comes first.
    pub fn at(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        pins::start(ws)?;
        Vault::at_unpinned(ws, name)
    }

    /// [`Vault::at`] without beginning to pin (for `pins::start` itself).
    fn at_unpinned(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        names::vault_name(name)?;
        if name == super::NO_VAULT {
            return Err(VaultError::BadName {
                what: "vault name",
                shown: format!("'{name}'"),
                reason: "it is reserved: a loop with vault none gets no vault at all",
            });
        }
        Ok(Vault {
            name: name.to_string(),
            root: ws.vaults_dir(),
            dir: ws.vault_dir(name),
            pins: Pins::of(ws),
            touched: RefCell::new(BTreeSet::new()),
            journal: super::recover::new_journal(ws),
        })
    }

    /// The vaults' repository, confined.
    fn tree(&self) -> Result<Tree, VaultError> {
        Tree::open(&self.root)
            .map_err(VaultError::Confined)?
            .ok_or_else(|| VaultError::NoVault(self.name.clone()))
    }

    /// Whether anything stands where the vault's folder goes.
    pub fn exists(&self) -> bool {
        Tree::open(&self.root)
            .ok()
            .flatten()
            .is_some_and(|t| t.kind(&self.name).ok().flatten().is_some())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn recipients_path(&self) -> PathBuf {
        self.dir.join(layout::RECIPIENTS)
    }

    fn rel(&self, below: impl AsRef<Path>) -> PathBuf {
        Path::new(&self.name).join(below)
    }

    /// The paths below the vaults' repository this vault wrote or removed, for the commit.
    pub fn touched(&self) -> Vec<PathBuf> {
        self.touched.borrow().iter().cloned().collect()
    }

    /// Notes `rel` as written by this command, before it is written: in memory for the
    /// commit, and in the journal for the next command should this one be killed first.
    fn note(&self, rel: &Path) -> Result<(), VaultError> {
        if !self.touched.borrow_mut().insert(rel.to_path_buf()) {
            return Ok(());
        }
        super::recover::write_journal(&self.journal, &self.touched())
    }

    /// The journal of this vault's writes, once they are committed.
    pub(super) fn forget_journal(&self) {
        let _ = std::fs::remove_file(&self.journal);
    }

    /// Creates the vault with `recipients`, accepted at once (the person's word); an
    /// existing vault is left alone (false).
    pub fn create(&self, recipients: &[String]) -> Result<bool, VaultError> {
        if self.exists() {
            return Ok(false);
        }
        let mut file = RecipientsFile::new(&format!(
            "# Recipients of the vault '{}': age1… or ssh-ed25519/ssh-rsa public keys, one per line.\n\
             # After changing them: git loop vault rekey {}",
            self.name, self.name
        ));
        for r in recipients {
            let parsed = Recipient::parse(r).map_err(|reason| VaultError::BadRecipient {
                what: "your identity's public key".into(),
                reason,
            })?;
            file.add(r, parsed);
        }
        let tree = self.tree()?;
        tree.ensure_dir(&self.name).map_err(VaultError::Confined)?;
        self.put_recipients(&tree, &file.to_text())?;
        self.pins.set_recipients(&self.name, &file.to_text())?;
        Ok(true)
    }

    /// The names of the user's vaults, sorted, and what in the vaults' folder is not a vault
    /// (a link where a vault's folder goes, a name that cannot be one).
    pub fn names(ws: &Workspace) -> Result<(Vec<String>, Vec<Bad>), VaultError> {
        let root = ws.vaults_dir();
        let Some(tree) = Tree::open(&root).map_err(VaultError::Confined)? else {
            return Ok((Vec::new(), Vec::new()));
        };
        let listing = tree
            .entries("")
            .map_err(VaultError::Confined)?
            .unwrap_or_default();
        let mut names = Vec::new();
        let mut bad = Vec::new();
        for (name, kind) in listing.iter().take(MAX_NAMES) {
            match layout::classify_top(name, node(*kind), false) {
                Top::Vault(v) => names.push(v.to_string()),
                Top::Repository | Top::Temp => {}
                Top::Bad(why) => bad.push(Bad {
                    path: root.join(name),
                    why,
                }),
            }
        }
        if listing.len() > MAX_NAMES {
            bad.push(Bad {
                path: root.clone(),
                why: format!("it holds more than {MAX_NAMES} names; the rest were not read"),
            });
        }
        names.sort();
        Ok((names, bad))
    }

    /// The recipients as the repository's recipients.txt names them (which may have arrived
    /// by sync: see [`Vault::decision`]).
    pub fn recipients(&self) -> Result<RecipientsFile, VaultError> {
        let rel = self.rel(layout::RECIPIENTS);
        let text = self
            .tree()?
            .read_text(&rel, MAX_RECIPIENTS_BYTES)
            .map_err(VaultError::Confined)?
            .unwrap_or_default();
        RecipientsFile::parse(&text, &self.recipients_path())
    }

    /// The recipients the person accepted on this machine; None: never accepted here.
    pub fn accepted_recipients(&self) -> Result<Option<RecipientsFile>, VaultError> {
        let path = self.pins.dir().join(format!("{}.recipients", self.name));
        self.pins
            .recipients(&self.name)?
            .map(|text| RecipientsFile::parse(&text, &path))
            .transpose()
    }

    /// Whether the repository's recipients are the accepted ones.
    pub fn decision(&self) -> Result<Decision, VaultError> {
        let Some(pinned) = self.accepted_recipients()? else {
            return Ok(Decision::New);
        };
        let now = match self.recipients() {
            Ok(now) => now,
            Err(e) => return Ok(Decision::Unreadable(e.to_string())),
        };
        let set = |f: &RecipientsFile| -> HashSet<String> {
            f.recipients()
                .iter()
                .map(|l| l.recipient.canonical())
                .collect()
        };
        let (was, is) = (set(&pinned), set(&now));
        if was == is {
            return Ok(Decision::Accepted);
        }
        let added = now
            .recipients()
            .iter()
            .filter(|l| !was.contains(&l.recipient.canonical()))
            .map(|l| l.text.clone())
            .collect();
        let removed = pinned
            .recipients()
            .iter()
            .filter(|l| !is.contains(&l.recipient.canonical()))
            .map(|l| l.text.clone())
            .collect();
        Ok(Decision::Changed { added, removed })
    }

    /// The person changes the recipients (`recipients add|rm`): the repository's file and
    /// the pin together. Refused while a change that arrived by sync waits for a decision.
    pub fn write_recipients(&self, file: &RecipientsFile) -> Result<(), VaultError> {
        if !self.decision()?.is_accepted() {
            return Err(VaultError::Undecided(self.name.clone()));
        }
        self.put_recipients(&self.tree()?, &file.to_text())?;
        self.pins.set_recipients(&self.name, &file.to_text())
    }

    fn put_recipients(&self, tree: &Tree, text: &str) -> Result<(), VaultError> {
        let rel = self.rel(layout::RECIPIENTS);
        self.note(&rel)?;
        tree.write_atomic(&rel, text.as_bytes(), 0o644)
            .map_err(VaultError::Confined)?;
        Ok(())
    }

    /// The person accepts the vault's recipients as the repository names them now (and, for
    /// a vault never accepted here, its entries of the older format as they are). Returns
    /// the decision it settled.
    pub fn accept(&self) -> Result<Decision, VaultError> {
        let decision = self.decision()?;
        if let Decision::Unreadable(_) = decision {
            // Parsing again gives the error with its line.
            self.recipients()?;
        }
        let now = self.recipients()?;
        if now.recipients().is_empty() {
            return Err(VaultError::NoRecipients(self.name.clone()));
        }
        if decision == Decision::New {
            self.pin_legacy_as_found(&self.pins)?;
        }
        self.pins.set_recipients(&self.name, &now.to_text())?;
        Ok(decision)
    }

    /// The person refuses a change of recipients that arrived by sync: the accepted
    /// recipients.txt is put back in the repository (and the next sync pushes it).
    pub fn refuse(&self) -> Result<Decision, VaultError> {
        let decision = self.decision()?;
        match &decision {
            Decision::Accepted => Ok(decision),
            Decision::New => Err(VaultError::NeverAccepted(self.name.clone())),
            Decision::Changed { .. } | Decision::Unreadable(_) => {
                let text = self
                    .pins
                    .recipients(&self.name)?
                    .ok_or_else(|| VaultError::NeverAccepted(self.name.clone()))?;
                self.put_recipients(&self.tree()?, &text)?;
                Ok(decision)
            }
        }
    }

    /// Pins this vault as it is found (its recipients.txt, and every entry's file as a
    /// possible older entry) into `into`: the first sight of `pins::start`.
    pub(super) fn pin_as_found(&self, into: &Pins) -> Result<(), VaultError> {
        if let Ok(now) = self.recipients() {
            into.set_recipients(&self.name, &now.to_text())?;
        }
        self.pin_legacy_as_found(into)
    }

    fn pin_legacy_as_found(&self, into: &Pins) -> Result<(), VaultError> {
        let mut keys = into.legacy(&self.name)?;
        for e in self.entries()?.entries {
            if let Ok(sealed) = self.ciphertext(&e) {
                keys.insert(pins::legacy_key(&e.entry.label(), &sealed));
            }
        }
        into.set_legacy(&self.name, &keys)
    }

    /// The `.age` file an entry lives in.
    pub fn path_of(&self, entry: &EntryRef) -> PathBuf {
        self.dir.join(entry.rel_in_vault())
    }

    /// Every entry, envs first, each group sorted, and what was skipped. Only a vault that
    /// cannot be read at all is an error.
    pub fn entries(&self) -> Result<Listing, VaultError> {
        let tree = self.tree()?;
        let mut listing = Listing::default();
        let mut budget = MAX_NAMES;
        let mut path = Vec::new();
        self.walk(&tree, &mut path, &mut budget, &mut listing)?;
        // The walk met `envs` before `mounts`; within each, names were sorted.
        Ok(listing)
    }

    fn walk(
        &self,
        tree: &Tree,
        path: &mut Vec<OsString>,
        budget: &mut usize,
        out: &mut Listing,
    ) -> Result<(), VaultError> {
        let here: PathBuf = std::iter::once(OsStr::new(&self.name))
            .chain(path.iter().map(OsString::as_os_str))
            .collect();
        let children = match tree.entries(&here) {
            Ok(Some(c)) => c,
            Ok(None) if path.is_empty() => return Err(VaultError::NoVault(self.name.clone())),
            Ok(None) => return Ok(()),
            Err(e) if path.is_empty() => return Err(VaultError::Confined(e)),
            Err(e) => {
                out.bad.push(Bad {
                    path: self.root.join(&here),
                    why: e.to_string(),
                });
                return Ok(());
            }
        };
        for (name, kind) in children {
            if *budget == 0 {
                out.bad.push(Bad {
                    path: self.root.join(&here),
                    why: format!(
                        "the vault holds more than {MAX_NAMES} names; the rest were not read"
                    ),
                });
                return Ok(());
            }
            *budget -= 1;
            path.push(name);
            let parts: Vec<&OsStr> = path.iter().map(OsString::as_os_str).collect();
            let rel = here.join(parts.last().expect("just pushed"));
            match layout::classify(&parts, node(kind)) {
                Class::Folder => self.walk(tree, path, budget, out)?,
                Class::Env(name) => self.found(tree, rel, EntryKind::Env, name, out),
                Class::File(name) => self.found(tree, rel, EntryKind::File, name, out),
                Class::Recipients | Class::Temp | Class::Foreign => {}
                Class::Bad(why) => out.bad.push(Bad {
                    path: self.root.join(&rel),
                    why,
                }),
            }
            path.pop();
        }
        Ok(())
    }

    fn found(&self, tree: &Tree, rel: PathBuf, kind: EntryKind, name: String, out: &mut Listing) {
        let path = self.root.join(&rel);
        let size = tree
            .open_file(&rel)
            .map_err(|e| e.to_string())
            .and_then(|f| match f {
                Some(f) => f.metadata().map(|m| m.len()).map_err(|e| e.to_string()),
                None => Err("it went away while it was read".into()),
            });
        match size {
            Ok(size) if size > MAX_CIPHERTEXT_BYTES => out.bad.push(Bad {
                path,
                why: "it is larger than any vault entry can be".into(),
            }),
            Ok(size) => out.entries.push(Entry {
                entry: EntryRef { kind, name },
                path,
                rel,
                size,
            }),
            Err(why) => out.bad.push(Bad { path, why }),
        }
    }

    /// Finds an entry by `env:NAME`, `file:REL` or a bare name (an existing variable, then
    /// an existing file; a new one is a variable if the name can be one).
    pub fn resolve(&self, text: &str) -> Result<EntryRef, VaultError> {
        if let Some(r) = EntryRef::parse_prefixed(text) {
            return r;
        }
        let entries = self.entries()?.entries;
        for kind in [EntryKind::Env, EntryKind::File] {
            if let Some(e) = entries
                .iter()
                .find(|e| e.entry.kind == kind && e.entry.name == text)
            {
                return Ok(e.entry.clone());
            }
        }
        if names::env_name(text).is_ok() {
            EntryRef::env(text)
        } else {
            EntryRef::file(text)
        }
    }

    /// The entry if it is there as git-loop writes it. One that is there otherwise (a
    /// link where its file goes) is an error naming it.
    pub fn find(&self, entry: &EntryRef) -> Result<Option<Entry>, VaultError> {
        let listing = self.entries()?;
        if let Some(found) = listing.entries.into_iter().find(|e| &e.entry == entry) {
            return Ok(Some(found));
        }
        let path = self.path_of(entry);
        if let Some(bad) = listing.bad.into_iter().find(|b| b.path == path) {
            return Err(VaultError::Unexpected {
                path: bad.path,
                why: bad.why,
            });
        }
        Ok(None)
    }

    /// Reads an entry's ciphertext, bounded, never through a link.
    pub fn ciphertext(&self, entry: &Entry) -> Result<Vec<u8>, VaultError> {
        match self.tree()?.read(&entry.rel, MAX_CIPHERTEXT_BYTES) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(VaultError::io(
                "cannot read",
                &entry.path,
                io::ErrorKind::NotFound.into(),
            )),
            Err(crate::confined::ConfinedError::TooLarge { .. }) => {
                Err(self.corrupt(entry, "it is larger than any vault entry can be"))
            }
            Err(e) => Err(VaultError::Confined(e)),
        }
    }

    /// Decrypts an entry in memory and checks that it is this entry: its value and the
    /// hosts it is bound to (none: unbound).
    pub fn open_entry(
        &self,
        identity: &Identity,
        entry: &Entry,
    ) -> Result<(Zeroizing<Vec<u8>>, super::binding::Hosts), VaultError> {
        self.unseal(identity, entry).map(|o| (o.value, o.hosts))
    }

    /// [`Vault::open_entry`], saying whether the entry is of the older format.
    ///
    /// An entry of the current format names its vault, kind and name inside the encryption,
    /// and must name this one: an age file copied or renamed (through the vaults' remote,
    /// say) into another vault or name is refused, since delivering it there would hand a
    /// credential to loops it was never meant for, or under a name that changes what it
    /// does. An entry of the older format names nothing, so the same copy would pass: it
    /// is opened only when this machine pinned exactly that file under exactly that name
    /// (when it first pinned the vault, or when the person accepted a vault that arrived
    /// by sync). An older entry that is not pinned is refused, whatever it decrypts to:
    /// accepting it would be the downgrade that undoes the check, and `vault rekey` on the
    /// machine that pinned it (or storing the value again) is the way to keep it.
    pub fn unseal(&self, identity: &Identity, entry: &Entry) -> Result<Opened, VaultError> {
        let sealed = self.ciphertext(entry)?;
        let plain = self.decrypt_bytes(identity, entry, &sealed)?;
        let decoded = entryfmt::decode(&plain).map_err(|why| self.corrupt(entry, &why))?;
        let hosts = if decoded.hosts.is_empty() {
            super::binding::Hosts::default()
        } else {
            let headers: Vec<String> = decoded.headers.iter().map(|h| h.to_string()).collect();
            crate::egress::sentinel::binding::Binding::parse(&decoded.hosts.join(","), &headers)
                .map_err(|why| self.corrupt(entry, &format!("its binding is not valid: {why}")))?
        };
        let legacy = match decoded.format {
            Format::Named(stored) => {
                let kind = entry.entry.kind.stored();
                if stored.vault != self.name
                    || stored.kind != kind
                    || stored.name != entry.entry.name
                {
                    return Err(VaultError::Moved {
                        vault: self.name.clone(),
                        entry: entry.entry.label(),
                        path: entry.path.clone(),
                        stored_as: format!(
                            "{}:{} of vault '{}'",
                            stored.kind.word(),
                            shown(stored.name),
                            shown(stored.vault)
                        ),
                    });
                }
                false
            }
            Format::Legacy => {
                let key = pins::legacy_key(&entry.entry.label(), &sealed);
                if !self.pins.legacy(&self.name)?.contains(&key) {
                    return Err(VaultError::UnpinnedLegacy {
                        vault: self.name.clone(),
                        entry: entry.entry.label(),
                        path: entry.path.clone(),
                    });
                }
                true
            }
        };
        let mut value = Zeroizing::new(Vec::with_capacity(decoded.value.len()));
        value.extend_from_slice(decoded.value);
        Ok(Opened {
            value,
            hosts,
            legacy,
        })
    }

    fn decrypt_bytes(
        &self,
        identity: &Identity,
        entry: &Entry,
        sealed: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, VaultError> {
        let limit = entry.entry.kind.limit() + entryfmt::MAX_HEADER;
        crypto::decrypt(identity, sealed, limit).map_err(|f| match f {
            DecryptFailure::NotRecipient => {
                let accepted = |r: Option<RecipientsFile>| {
                    r.is_some_and(|r| identity.recipients().iter().any(|mine| r.contains(mine)))
                };
                VaultError::NotRecipient {
                    vault: self.name.clone(),
                    entry: entry.entry.label(),
                    identity: identity.path().to_path_buf(),
                    recipient: identity.recipient().to_string(),
                    listed: accepted(self.accepted_recipients().ok().flatten()),
                }
            }
            DecryptFailure::Corrupt(reason) => self.corrupt(entry, &reason),
            DecryptFailure::TooLarge => self.corrupt(entry, "its plaintext is over the size bound"),
        })
    }

    fn corrupt(&self, entry: &Entry, reason: &str) -> VaultError {
        VaultError::Corrupt {
            vault: self.name.clone(),
            entry: entry.entry.label(),
            path: entry.path.clone(),
            reason: reason.to_string(),
        }
    }

    /// The recipients writes encrypt to: the accepted ones, which must not be empty. A
    /// vault never accepted here is not written to.
    fn encryption_recipients(&self) -> Result<Vec<Recipient>, VaultError> {
        let Some(file) = self.accepted_recipients()? else {
            return Err(VaultError::NeverAccepted(self.name.clone()));
        };
        let list: Vec<Recipient> = file
            .recipients()
            .iter()
            .map(|l| l.recipient.clone())
            .collect();
        if list.is_empty() {
            return Err(VaultError::NoRecipients(self.name.clone()));
        }
        Ok(list)
    }

    /// How many recipients a write encrypts to now.
    pub fn encryption_count(&self) -> Result<usize, VaultError> {
        self.encryption_recipients().map(|r| r.len())
    }

    fn encrypt(&self, recipients: &[Recipient], plaintext: &[u8]) -> Result<Vec<u8>, VaultError> {
        crypto::encrypt(recipients, plaintext).map_err(|reason| VaultError::Encrypt {
            vault: self.name.clone(),
            reason,
        })
    }

    /// The plaintext stored for `entry` of this vault: its names, its hosts, its value.
    fn seal(
        &self,
        entry: &EntryRef,
        value: &[u8],
        binding: &super::binding::Hosts,
    ) -> Zeroizing<Vec<u8>> {
        let hosts: Vec<String> = binding.hosts.iter().map(ToString::to_string).collect();
        let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
        let headers: Vec<&str> = binding.headers.iter().map(String::as_str).collect();
        let mut out = Zeroizing::new(Vec::new());
        entryfmt::encode(
            &mut out,
            StoredAs {
                vault: &self.name,
                kind: entry.kind.stored(),
                name: &entry.name,
            },
            &hosts,
            &headers,
            value,
        );
        out
    }

    /// Checks a value against the bounds of its kind.
    pub fn check_value(entry: &EntryRef, value: &[u8]) -> Result<(), VaultError> {
        let limit = entry.kind.limit();
        if value.len() > limit {
            return Err(VaultError::TooLarge {
                what: entry.label(),
                limit,
            });
        }
        if entry.kind == EntryKind::Env {
            if value.contains(&0) {
                return Err(VaultError::BadValue {
                    what: entry.label(),
                    reason: "an environment variable cannot hold a NUL byte",
                });
            }
            if std::str::from_utf8(value).is_err() {
                return Err(VaultError::BadValue {
                    what: entry.label(),
                    reason: "it is not UTF-8 text",
                });
            }
        }
        Ok(())
    }

    /// Encrypts `value` to the vault's accepted recipients and stores it as `entry`, unbound.
    pub fn write(&self, entry: &EntryRef, value: &[u8]) -> Result<Written, VaultError> {
        self.write_bound(entry, value, &super::binding::Hosts::default())
    }

    /// Encrypts `value` with its names and its binding to `hosts` (none: unbound) and
    /// stores it as `entry`. A bound file must hold something a placeholder can stand for.
    pub fn write_bound(
        &self,
        entry: &EntryRef,
        value: &[u8],
        hosts: &super::binding::Hosts,
    ) -> Result<Written, VaultError> {
        Vault::check_value(entry, value)?;
        Vault::check_bindable(entry, value, hosts)?;
        let recipients = self.encryption_recipients()?;
        let sealed = self.encrypt(&recipients, &self.seal(entry, value, hosts))?;
        self.store(entry, &sealed)
    }

    /// A bound file must hold a credential the sandbox can be given a placeholder for
    /// (`egress::sentinel::file_secrets`).
    pub fn check_bindable(
        entry: &EntryRef,
        value: &[u8],
        hosts: &super::binding::Hosts,
    ) -> Result<(), VaultError> {
        if entry.kind == EntryKind::File
            && !hosts.is_empty()
            && crate::egress::sentinel::file_secrets(value).is_empty()
        {
            return Err(VaultError::NotBindable(entry.label()));
        }
        Ok(())
    }

    /// Writes ciphertext into place: folders made as needed (never through a link), then
    /// an atomic replace of the file.
    fn store(&self, entry: &EntryRef, sealed: &[u8]) -> Result<Written, VaultError> {
        let tree = self.tree()?;
        let rel = self.rel(entry.rel_in_vault());
        self.make_folders(&tree, rel.parent().unwrap_or(Path::new(&self.name)))?;
        let written = match tree.kind(&rel).map_err(VaultError::Confined)? {
            Some(Kind::Symlink) => Written::ReplacedLink,
            Some(Kind::File) => Written::Replaced,
            Some(kind) => {
                return Err(VaultError::Unexpected {
                    path: self.root.join(&rel),
                    why: format!("{}, where an entry's file goes", kind_text(kind)),
                })
            }
            None => Written::Created,
        };
        self.note(&rel)?;
        crate::failpoint::hit("vault:noted");
        tree.write_atomic(&rel, sealed, 0o644)
            .map_err(VaultError::Confined)?;
        crate::failpoint::hit("vault:stored");
        Ok(written)
    }

    /// Creates the folders from the vault down to `dir` (below the repository), refusing
    /// any that is a link or not a folder.
    fn make_folders(&self, tree: &Tree, dir: &Path) -> Result<(), VaultError> {
        match tree.kind(&self.name).map_err(VaultError::Confined)? {
            Some(Kind::Dir) => {}
            None => return Err(VaultError::NoVault(self.name.clone())),
            Some(Kind::Symlink) => return Err(VaultError::WriteThroughLink(self.dir.clone())),
            Some(kind) => {
                return Err(VaultError::Unexpected {
                    path: self.dir.clone(),
                    why: format!("{}, where the vault's folder is expected", kind_text(kind)),
                })
            }
        }
        let mut current = PathBuf::from(&self.name);
        for part in dir
            .strip_prefix(&self.name)
            .unwrap_or(Path::new(""))
            .components()
        {
            current.push(part);
            match tree.kind(&current).map_err(VaultError::Confined)? {
                Some(Kind::Dir) => {}
                None => tree.ensure_dir(&current).map_err(VaultError::Confined)?,
                Some(Kind::Symlink) => {
                    return Err(VaultError::WriteThroughLink(self.root.join(&current)))
                }
                Some(kind) => {
                    return Err(VaultError::Unexpected {
                        path: self.root.join(&current),
                        why: format!("{}, where a folder of entries goes", kind_text(kind)),
                    })
                }
            }
        }
        Ok(())
    }

    /// Removes an entry (or whatever stands where its file goes, a link included, never
    /// followed) and the folders it leaves empty.
    pub fn remove(&self, entry: &EntryRef) -> Result<(), VaultError> {
        let tree = self.tree()?;
        let rel = self.rel(entry.rel_in_vault());
        match tree.kind(&rel).map_err(VaultError::Confined)? {
            Some(Kind::Dir) | None => {
                return Err(VaultError::NoEntry {
                    vault: self.name.clone(),
                    entry: entry.label(),
                })
            }
            Some(_) => {}
        }
        self.note(&rel)?;
        tree.remove_file(&rel).map_err(VaultError::Confined)?;
        let keep = [
            self.rel(layout::ENVS),
            self.rel(Path::new(layout::MOUNTS).join(layout::HOME)),
        ];
        let mut dir = rel.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if keep.contains(&d) || !d.starts_with(&self.name) || d == Path::new(&self.name) {
                break;
            }
            if !tree.remove_dir(&d).unwrap_or(false) {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(())
    }

    /// Re-encrypts every entry of this vault to its accepted recipients, each with its
    /// names (older entries are rewritten in the current format). Everything is decrypted
    /// and re-encrypted in memory first; the files are written only when all of that
    /// worked. An entry refused as it is (a copy from elsewhere, an older entry this machine
    /// never pinned) is left as it is and named: rewriting it would launder it.
    pub fn rekey(&self, identity: &Identity) -> Result<Rekeyed, VaultError> {
        let recipients = self.encryption_recipients()?;
        let listing = self.entries()?;
        let mut out = Rekeyed::default();
        let mut sealed = Vec::new();
        for entry in &listing.entries {
            match self.unseal(identity, entry) {
                Ok(opened) => {
                    let plain = self.seal(&entry.entry, &opened.value, &opened.hosts);
                    sealed.push((entry.entry.clone(), self.encrypt(&recipients, &plain)?));
                    out.upgraded += usize::from(opened.legacy);
                }
                Err(e @ (VaultError::Moved { .. } | VaultError::UnpinnedLegacy { .. })) => {
                    out.skipped.push(e.to_string())
                }
                Err(e) => return Err(e),
            }
        }
        out.skipped
            .extend(listing.bad.iter().map(|b| format!("skipped {b}")));
        for (entry, bytes) in &sealed {
            self.store(entry, bytes)?;
        }
        out.count = sealed.len();
        // Every older entry this machine trusted is in the current format now.
        self.pins.set_legacy(&self.name, &BTreeSet::new())?;
        Ok(out)
    }
}

fn node(kind: Kind) -> Node {
    match kind {
        Kind::Dir => Node::Dir,
        Kind::File => Node::File,
        Kind::Symlink => Node::Symlink,
        Kind::Other => Node::Other,
    }
}

fn kind_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Dir => "it is a folder",
        Kind::File => "it is a file",
        Kind::Symlink => "it is a symlink",
        Kind::Other => "it is a FIFO, socket or device",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    struct Setup {
        _tmp: tempfile::TempDir,
        ws: Workspace,
        id: Identity,
    }

    fn setup() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        fs::create_dir_all(ws.vaults_dir()).unwrap();
        let id = super::super::identity::ensure(&tmp.path().join("id.txt"))
            .unwrap()
            .0;
        Setup { _tmp: tmp, ws, id }
    }

    fn vault(s: &Setup, name: &str) -> Vault {
        let v = Vault::at(&s.ws, name).unwrap();
        v.create(&[s.id.recipient().to_string()]).unwrap();
        v
    }

    fn labels(l: &Listing) -> Vec<String> {
        l.entries.iter().map(|e| e.entry.label()).collect()
    }

    #[test]
    fn write_list_decrypt_remove() {
        let s = setup();
        let v = vault(&s, "default");
        let token = EntryRef::env("TOKEN").unwrap();
        let hosts = EntryRef::file(".config/gh/hosts.yml").unwrap();
        assert_eq!(v.write(&token, b"t0k").unwrap(), Written::Created);
        assert_eq!(v.write(&token, b"t1k").unwrap(), Written::Replaced);
        v.write(&hosts, b"github.com: {}\n").unwrap();
        let listing = v.entries().unwrap();
        assert_eq!(labels(&listing), ["env:TOKEN", "file:.config/gh/hosts.yml"]);
        assert!(listing.bad.is_empty());
        let opened = v.unseal(&s.id, &listing.entries[0]).unwrap();
        assert_eq!((&opened.value[..], opened.legacy), (&b"t1k"[..], false));
        assert_eq!(v.resolve("TOKEN").unwrap(), token);
        assert_eq!(v.resolve(".config/gh/hosts.yml").unwrap(), hosts);
        v.remove(&hosts).unwrap();
        assert!(!s.ws.vault_home_dir("default").join(".config").exists());
        assert!(matches!(v.remove(&hosts), Err(VaultError::NoEntry { .. })));
        let touched: Vec<String> = v
            .touched()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            touched,
            [
                "default/envs/TOKEN.age",
                "default/mounts/home/.config/gh/hosts.yml.age",
                "default/recipients.txt"
            ]
        );
    }

    #[test]
    fn bounds_are_checked_before_writing() {
        let s = setup();
        let v = vault(&s, "default");
        let big = vec![b'x'; MAX_FILE_BYTES + 1];
        let file = EntryRef::file("big").unwrap();
        assert!(matches!(
            v.write(&file, &big),
            Err(VaultError::TooLarge { .. })
        ));
        let env = EntryRef::env("E").unwrap();
        assert!(matches!(
            v.write(&env, b"a\0b"),
            Err(VaultError::BadValue { .. })
        ));
        assert!(v.entries().unwrap().entries.is_empty());
    }

    #[test]
    fn links_are_never_followed_and_each_is_named_and_skipped() {
        let s = setup();
        let a = vault(&s, "a");
        let b = vault(&s, "b");
        a.write(&EntryRef::env("SHARED").unwrap(), b"v").unwrap();
        b.write(&EntryRef::env("OWN").unwrap(), b"mine").unwrap();
        let link = s.ws.vault_env("b", "SHARED");
        symlink("../../a/envs/SHARED.age", &link).unwrap();
        let outside = s.ws.root().join("outside.age");
        fs::write(&outside, b"x").unwrap();
        symlink(&outside, s.ws.vault_env("b", "ESCAPE")).unwrap();
        let home = s.ws.vault_home_dir("b");
        fs::create_dir_all(&home).unwrap();
        symlink(".", home.join("again")).unwrap();
        let listing = b.entries().unwrap();
        assert_eq!(
            labels(&listing),
            ["env:OWN"],
            "the vault's own entry still works"
        );
        let bad: Vec<&Path> = listing.bad.iter().map(|b| b.path.as_path()).collect();
        assert_eq!(
            bad,
            [
                s.ws.vault_env("b", "ESCAPE").as_path(),
                link.as_path(),
                home.join("again").as_path()
            ]
        );
        assert!(listing
            .bad
            .iter()
            .all(|b| b.why.starts_with("it is a symlink")));
        assert!(matches!(
            b.find(&EntryRef::env("SHARED").unwrap()),
            Err(VaultError::Unexpected { .. })
        ));
        // Writes never go through a linked folder; a linked entry is replaced, not written
        // through.
        assert!(matches!(
            b.write(&EntryRef::file("again/x").unwrap(), b"x"),
            Err(VaultError::WriteThroughLink(_))
        ));
        assert_eq!(
            b.write(&EntryRef::env("ESCAPE").unwrap(), b"new").unwrap(),
            Written::ReplacedLink
        );
        assert_eq!(fs::read(&outside).unwrap(), b"x");
        // A vault's folder that is a link is no vault.
        symlink("a", s.ws.vault_dir("c")).unwrap();
        let (names, bad) = Vault::names(&s.ws).unwrap();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].why.starts_with("it is a symlink"), "{}", bad[0]);
        assert!(matches!(
            Vault::open(&s.ws, "c"),
            Err(VaultError::Unexpected { .. })
        ));
    }

    #[test]
    fn a_copy_into_another_vault_or_name_is_refused() {
        let s = setup();
        let a = vault(&s, "a");
        let b = vault(&s, "b");
        a.write(&EntryRef::env("TOKEN").unwrap(), b"secret")
            .unwrap();
        fs::create_dir_all(s.ws.vault_envs_dir("b")).unwrap();
        fs::copy(s.ws.vault_env("a", "TOKEN"), s.ws.vault_env("b", "TOKEN")).unwrap();
        fs::copy(s.ws.vault_env("a", "TOKEN"), s.ws.vault_env("a", "OTHER")).unwrap();
        let copied = b.find(&EntryRef::env("TOKEN").unwrap()).unwrap().unwrap();
        match b.unseal(&s.id, &copied) {
            Err(e @ VaultError::Moved { .. }) => {
                assert!(e.to_string().contains("env:TOKEN of vault 'a'"), "{e}")
            }
            other => panic!("{:?}", other.err()),
        }
        let renamed = a.find(&EntryRef::env("OTHER").unwrap()).unwrap().unwrap();
        assert!(matches!(
            a.unseal(&s.id, &renamed),
            Err(VaultError::Moved { .. })
        ));
        // Rekey leaves them as they are, and names them.
        let done = a.rekey(&s.id).unwrap();
        assert_eq!(
            (done.count, done.skipped.len()),
            (1, 1),
            "{:?}",
            done.skipped
        );
    }

    #[test]
    fn an_older_entry_is_trusted_only_where_it_was_pinned() {
        let s = setup();
        let a = vault(&s, "a");
        let b = vault(&s, "b");
        // An entry as an earlier git-loop wrote it: the value alone.
        let recipients = a.encryption_recipients().unwrap();
        let old = crypto::encrypt(&recipients, b"old value").unwrap();
        fs::create_dir_all(s.ws.vault_envs_dir("a")).unwrap();
        fs::create_dir_all(s.ws.vault_envs_dir("b")).unwrap();
        fs::write(s.ws.vault_env("a", "OLD"), &old).unwrap();
        let entry = a.find(&EntryRef::env("OLD").unwrap()).unwrap().unwrap();
        assert!(matches!(
            a.unseal(&s.id, &entry),
            Err(VaultError::UnpinnedLegacy { .. })
        ));
        // Pinned as found (what `pins::start` does on first sight): trusted there only.
        a.pin_as_found(&a.pins).unwrap();
        let opened = a.unseal(&s.id, &entry).unwrap();
        assert_eq!(
            (&opened.value[..], opened.legacy),
            (&b"old value"[..], true)
        );
        fs::write(s.ws.vault_env("b", "OLD"), &old).unwrap();
        fs::write(s.ws.vault_env("a", "RENAMED"), &old).unwrap();
        let copy = b.find(&EntryRef::env("OLD").unwrap()).unwrap().unwrap();
        assert!(matches!(
            b.unseal(&s.id, &copy),
            Err(VaultError::UnpinnedLegacy { .. })
        ));
        let renamed = a.find(&EntryRef::env("RENAMED").unwrap()).unwrap().unwrap();
        assert!(matches!(
            a.unseal(&s.id, &renamed),
            Err(VaultError::UnpinnedLegacy { .. })
        ));
        // Rekey writes the pinned one with its names and leaves the other alone.
        fs::remove_file(s.ws.vault_env("a", "RENAMED")).unwrap();
        let done = a.rekey(&s.id).unwrap();
        assert_eq!((done.count, done.upgraded), (1, 1));
        let entry = a.find(&EntryRef::env("OLD").unwrap()).unwrap().unwrap();
        assert!(!a.unseal(&s.id, &entry).unwrap().legacy);
        assert!(a.pins.legacy("a").unwrap().is_empty());
    }

    #[test]
    fn recipients_that_arrive_are_not_used_until_accepted() {
        let s = setup();
        let tmp = tempfile::tempdir().unwrap();
        let eve = super::super::identity::ensure(&tmp.path().join("eve.txt"))
            .unwrap()
            .0;
        let v = vault(&s, "team");
        assert_eq!(v.decision().unwrap(), Decision::Accepted);
        // What a sync brings: recipients.txt with Eve in it.
        let path = s.ws.vault_recipients("team");
        let mut text = fs::read_to_string(&path).unwrap();
        text.push_str(eve.recipient());
        text.push('\n');
        fs::write(&path, &text).unwrap();
        assert_eq!(
            v.decision().unwrap(),
            Decision::Changed {
                added: vec![eve.recipient().to_string()],
                removed: vec![]
            }
        );
        let e = EntryRef::env("K").unwrap();
        v.write(&e, b"v").unwrap();
        let entry = v.find(&e).unwrap().unwrap();
        assert!(matches!(
            v.unseal(&eve, &entry),
            Err(VaultError::NotRecipient { .. })
        ));
        assert_eq!(v.rekey(&s.id).unwrap().count, 1);
        assert!(
            v.unseal(&eve, &entry).is_err(),
            "rekey used the accepted set"
        );
        assert!(matches!(
            v.write_recipients(&v.recipients().unwrap()),
            Err(VaultError::Undecided(_))
        ));
        // Refused: the accepted file is back.
        v.refuse().unwrap();
        assert_eq!(v.decision().unwrap(), Decision::Accepted);
        assert!(!fs::read_to_string(&path).unwrap().contains(eve.recipient()));
        // Accepted: used from then on.
        fs::write(&path, &text).unwrap();
        v.accept().unwrap();
        v.write(&e, b"v2").unwrap();
        assert_eq!(&v.unseal(&eve, &entry).unwrap().value[..], b"v2");
        // A recipients file that cannot be read is a decision to make, not a failure.
        fs::write(&path, "nope\n").unwrap();
        assert!(matches!(v.decision().unwrap(), Decision::Unreadable(_)));
        v.refuse().unwrap();
        assert_eq!(v.decision().unwrap(), Decision::Accepted);
    }

    #[test]
    fn a_vault_that_arrived_is_not_written_until_accepted() {
        let s = setup();
        let v = vault(&s, "mine");
        // As a sync would bring it: a folder with recipients, no pin.
        let arrived = s.ws.vault_dir("arrived");
        fs::create_dir_all(&arrived).unwrap();
        fs::copy(
            s.ws.vault_recipients("mine"),
            arrived.join("recipients.txt"),
        )
        .unwrap();
        let a = Vault::open(&s.ws, "arrived").unwrap();
        assert_eq!(a.decision().unwrap(), Decision::New);
        let e = EntryRef::env("X").unwrap();
        assert!(matches!(
            a.write(&e, b"x"),
            Err(VaultError::NeverAccepted(_))
        ));
        assert!(matches!(a.refuse(), Err(VaultError::NeverAccepted(_))));
        assert_eq!(a.accept().unwrap(), Decision::New);
        a.write(&e, b"x").unwrap();
        assert_eq!(v.decision().unwrap(), Decision::Accepted);
    }
}
