//! A vault on disk (DESIGN.md section 6):
//!
//! ```text
//! vaults/<user>/<vault>/
//!   recipients.txt          age recipients, one per line
//!   envs/<NAME>.age         -> environment variable NAME
//!   mounts/home/<rel>.age   -> file $HOME/<rel> (folders mirrored)
//! ```
//!
//! Listing walks `envs/` and `mounts/home/`. A symlink may stand for an entry or a folder
//! and point at other entries of the same user's vaults; its real path must stay inside
//! `vaults/<user>/` (else the walk refuses, naming the link), a loop is refused, and a
//! folder reached twice is a loop too. Writes never follow a symlinked folder (that would
//! write into another vault) and replace an entry's file atomically (temp file in the same
//! folder holding ciphertext only, then rename).

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use super::crypto::{self, DecryptFailure};
use super::identity::Identity;
use super::names;
use super::recipients::{Recipient, RecipientsFile};
use super::{VaultError, MAX_ENV_BYTES, MAX_FILE_BYTES};
use crate::workspace::Workspace;

/// No entry's ciphertext is larger than this (1 MiB of plaintext, armored, with a header
/// for many recipients); a larger file is refused before it is read into memory.
const MAX_CIPHERTEXT_BYTES: u64 = 2 * 1024 * 1024;

/// ELOOP: the kernel's answer when resolving a path meets too many symlinks.
const ELOOP: i32 = 40;

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
}

/// An entry found in a vault.
#[derive(Debug, Clone)]
pub struct Entry {
    pub entry: EntryRef,
    /// The `.age` file (or the link standing for it) inside the vault.
    pub path: PathBuf,
    /// Where a symlinked entry really is.
    pub link_target: Option<PathBuf>,
    /// Size of the ciphertext.
    pub size: u64,
}

/// What a write did, for the command's report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
    /// The entry was a symlink to another entry; it is now a file of its own.
    ReplacedLink,
}

/// One vault of the workspace's user.
pub struct Vault {
    name: String,
    dir: PathBuf,
    envs: PathBuf,
    home: PathBuf,
    recipients_path: PathBuf,
    /// `vaults/<user>/`, resolved: every symlink must stay inside it.
    root: PathBuf,
}

impl Vault {
    /// The vault `name`, which must exist.
    pub fn open(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        let vault = Vault::at(ws, name)?;
        if !vault.exists() {
            return Err(VaultError::NoVault(name.to_string()));
        }
        // The vault folder itself may be a link (one vault standing for another).
        vault.confine(&vault.dir)?;
        Ok(vault)
    }

    /// The vault `name`, existing or not; the name is validated.
    pub fn at(ws: &Workspace, name: &str) -> Result<Vault, VaultError> {
        names::vault_name(name)?;
        if name == super::NO_VAULT {
            return Err(VaultError::BadName {
                what: "vault name",
                shown: format!("'{name}'"),
                reason: "it is reserved: a loop with vault none gets no vault at all",
            });
        }
        let root = fs::canonicalize(ws.vaults_dir()).unwrap_or_else(|_| ws.vaults_dir());
        Ok(Vault {
            name: name.to_string(),
            dir: ws.vault_dir(name),
            envs: ws.vault_envs_dir(name),
            home: ws.vault_home_dir(name),
            recipients_path: ws.vault_recipients(name),
            root,
        })
    }

    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn recipients_path(&self) -> &Path {
        &self.recipients_path
    }

    /// Creates the vault with `recipients`; an existing vault is left alone (false).
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
        fs::create_dir_all(&self.dir).map_err(|e| VaultError::io("cannot create", &self.dir, e))?;
        crate::fsutil::write_atomic(&self.recipients_path, file.to_text().as_bytes()).map_err(
            |e| {
                VaultError::io(
                    "cannot write",
                    &self.recipients_path,
                    io::Error::other(e.one_line()),
                )
            },
        )?;
        Ok(true)
    }

    /// The names of the user's vaults, sorted.
    pub fn names(ws: &Workspace) -> Result<Vec<String>, VaultError> {
        let dir = ws.vaults_dir();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(VaultError::io("cannot read", dir, e)),
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| names::vault_name(n).is_ok())
            .collect();
        out.sort();
        Ok(out)
    }

    pub fn recipients(&self) -> Result<RecipientsFile, VaultError> {
        let text = match fs::read_to_string(&self.recipients_path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(VaultError::io("cannot read", &self.recipients_path, e)),
        };
        RecipientsFile::parse(&text, &self.recipients_path)
    }

    pub fn write_recipients(&self, file: &RecipientsFile) -> Result<(), VaultError> {
        crate::fsutil::write_atomic(&self.recipients_path, file.to_text().as_bytes()).map_err(|e| {
            VaultError::io(
                "cannot write",
                &self.recipients_path,
                io::Error::other(e.one_line()),
            )
        })
    }

    /// The `.age` file an entry lives in.
    pub fn path_of(&self, entry: &EntryRef) -> PathBuf {
        match entry.kind {
            EntryKind::Env => self.envs.join(format!("{}.age", entry.name)),
            EntryKind::File => {
                let mut name = std::ffi::OsString::from(&entry.name);
                name.push(".age");
                self.home.join(name)
            }
        }
    }

    /// Every entry, envs first, each group sorted. Links are resolved and confined.
    pub fn entries(&self) -> Result<Vec<Entry>, VaultError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        if let Ok(real) = fs::canonicalize(&self.dir) {
            seen.insert(real);
        }
        self.walk(
            &self.envs,
            EntryKind::Env,
            Path::new(""),
            &mut seen,
            &mut out,
        )?;
        self.walk(
            &self.home,
            EntryKind::File,
            Path::new(""),
            &mut seen,
            &mut out,
        )?;
        Ok(out)
    }

    /// Finds an entry by `env:NAME`, `file:REL` or a bare name (an existing variable, then
    /// an existing file; a new one is a variable if the name can be one).
    pub fn resolve(&self, text: &str) -> Result<EntryRef, VaultError> {
        if let Some(r) = EntryRef::parse_prefixed(text) {
            return r;
        }
        let entries = self.entries()?;
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

    /// The entry if it exists (links resolved and confined).
    pub fn find(&self, entry: &EntryRef) -> Result<Option<Entry>, VaultError> {
        Ok(self.entries()?.into_iter().find(|e| &e.entry == entry))
    }

    /// Reads an entry's ciphertext, bounded.
    pub fn ciphertext(&self, entry: &Entry) -> Result<Vec<u8>, VaultError> {
        let path = &entry.path;
        let file = fs::File::open(path).map_err(|e| VaultError::io("cannot read", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| VaultError::io("cannot read", path, e))?
            .len();
        if len > MAX_CIPHERTEXT_BYTES {
            return Err(self.corrupt(entry, "it is larger than any vault entry can be"));
        }
        let mut bytes = Vec::with_capacity(len as usize);
        file.take(MAX_CIPHERTEXT_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| VaultError::io("cannot read", path, e))?;
        Ok(bytes)
    }

    /// Decrypts an entry in memory: its value and the hosts it is bound to (none: unbound).
    pub fn open_entry(
        &self,
        identity: &Identity,
        entry: &Entry,
    ) -> Result<(Zeroizing<Vec<u8>>, super::binding::Hosts), VaultError> {
        let plain = self.decrypt(identity, entry)?;
        super::binding::open(&plain).map_err(|why| self.corrupt(entry, &why))
    }

    /// Decrypts an entry's stored plaintext in memory (the value, or the value in its
    /// binding's envelope: see `binding.rs`).
    pub fn decrypt(
        &self,
        identity: &Identity,
        entry: &Entry,
    ) -> Result<Zeroizing<Vec<u8>>, VaultError> {
        let sealed = self.ciphertext(entry)?;
        self.decrypt_bytes(identity, entry, &sealed)
    }

    fn decrypt_bytes(
        &self,
        identity: &Identity,
        entry: &Entry,
        sealed: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, VaultError> {
        let limit = entry.entry.kind.limit() + super::binding::MAX_HEADER;
        crypto::decrypt(identity, sealed, limit).map_err(|f| match f {
            DecryptFailure::NotRecipient => {
                let listed = self
                    .recipients()
                    .map(|r| identity.recipients().iter().any(|mine| r.contains(mine)))
                    .unwrap_or(false);
                VaultError::NotRecipient {
                    vault: self.name.clone(),
                    entry: entry.entry.label(),
                    identity: identity.path().to_path_buf(),
                    recipient: identity.recipient().to_string(),
                    listed,
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

    /// The parsed recipients, which must not be empty.
    fn encryption_recipients(&self) -> Result<Vec<Recipient>, VaultError> {
        let file = self.recipients()?;
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

    fn encrypt(&self, recipients: &[Recipient], plaintext: &[u8]) -> Result<Vec<u8>, VaultError> {
        crypto::encrypt(recipients, plaintext).map_err(|reason| VaultError::Encrypt {
            vault: self.name.clone(),
            reason,
        })
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

    /// Encrypts `value` to the vault's recipients and stores it as `entry`, unbound.
    pub fn write(&self, entry: &EntryRef, value: &[u8]) -> Result<Written, VaultError> {
        self.write_bound(entry, value, &super::binding::Hosts::default())
    }

    /// Encrypts `value` with its binding to `hosts` (none: unbound) and stores it as
    /// `entry`. A bound file must hold something a placeholder can stand for.
    pub fn write_bound(
        &self,
        entry: &EntryRef,
        value: &[u8],
        hosts: &super::binding::Hosts,
    ) -> Result<Written, VaultError> {
        Vault::check_value(entry, value)?;
        Vault::check_bindable(entry, value, hosts)?;
        let recipients = self.encryption_recipients()?;
        let sealed = self.encrypt(&recipients, &super::binding::seal(value, hosts))?;
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
        let path = self.path_of(entry);
        let parent = path.parent().unwrap_or(&self.dir);
        self.make_folders(parent)?;
        let written = match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => Written::ReplacedLink,
            Ok(m) if m.is_dir() => {
                return Err(VaultError::Unexpected {
                    path,
                    why: "it is a folder where an entry's file goes".into(),
                })
            }
            Ok(_) => Written::Replaced,
            Err(_) => Written::Created,
        };
        crate::fsutil::write_atomic(&path, sealed)
            .map_err(|e| VaultError::io("cannot write", &path, io::Error::other(e.one_line())))?;
        Ok(written)
    }

    /// Creates the folders from the vault down to `dir`, refusing any that is a symlink.
    fn make_folders(&self, dir: &Path) -> Result<(), VaultError> {
        let rel = dir.strip_prefix(&self.dir).unwrap_or(Path::new(""));
        let mut current = self.dir.clone();
        if !current.exists() {
            return Err(VaultError::NoVault(self.name.clone()));
        }
        if fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(VaultError::WriteThroughLink(current));
        }
        for part in rel.components() {
            current.push(part);
            match fs::symlink_metadata(&current) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(VaultError::WriteThroughLink(current))
                }
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(VaultError::Unexpected {
                        path: current,
                        why: "it is a file where a folder of entries goes".into(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir(&current)
                        .map_err(|e| VaultError::io("cannot create", &current, e))?;
                }
                Err(e) => return Err(VaultError::io("cannot read", current, e)),
            }
        }
        Ok(())
    }

    /// Removes an entry (the link, for a linked one) and the folders it leaves empty.
    pub fn remove(&self, entry: &EntryRef) -> Result<(), VaultError> {
        let path = self.path_of(entry);
        match fs::symlink_metadata(&path) {
            Ok(m) if !m.is_dir() => {}
            _ => {
                return Err(VaultError::NoEntry {
                    vault: self.name.clone(),
                    entry: entry.label(),
                })
            }
        }
        fs::remove_file(&path).map_err(|e| VaultError::io("cannot remove", &path, e))?;
        let mut dir = path.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            if d == self.home || d == self.envs || !d.starts_with(&self.dir) {
                break;
            }
            if fs::remove_dir(&d).is_err() {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        Ok(())
    }

    /// Re-encrypts every entry of this vault to its current recipients. Everything is
    /// decrypted and re-encrypted in memory first; the files are written only when all of
    /// that worked. Linked entries belong to the vault they point into and are skipped.
    /// Returns (re-encrypted, skipped links).
    pub fn rekey(&self, identity: &Identity) -> Result<(usize, usize), VaultError> {
        let recipients = self.encryption_recipients()?;
        let entries = self.entries()?;
        let mut sealed = Vec::new();
        let mut links = 0;
        for entry in &entries {
            if entry.link_target.is_some() {
                links += 1;
                continue;
            }
            let plain = self.decrypt(identity, entry)?;
            sealed.push((entry.entry.clone(), self.encrypt(&recipients, &plain)?));
        }
        for (entry, bytes) in &sealed {
            self.store(entry, bytes)?;
        }
        Ok((sealed.len(), links))
    }

    /// Resolves a symlink inside the vault and checks that it stays inside
    /// `vaults/<user>/`.
    fn confine(&self, link: &Path) -> Result<PathBuf, VaultError> {
        match fs::canonicalize(link) {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(real) => Err(VaultError::SymlinkEscape {
                link: link.to_path_buf(),
                target: real,
                vaults: self.root.clone(),
            }),
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                Err(VaultError::SymlinkLoop(link.to_path_buf()))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                Err(VaultError::DanglingLink(link.to_path_buf()))
            }
            Err(e) => Err(VaultError::io("cannot resolve", link, e)),
        }
    }

    fn walk(
        &self,
        dir: &Path,
        kind: EntryKind,
        rel: &Path,
        seen: &mut HashSet<PathBuf>,
        out: &mut Vec<Entry>,
    ) -> Result<(), VaultError> {
        let listing = match fs::read_dir(dir) {
            Ok(l) => l,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(VaultError::io("cannot read", dir, e)),
        };
        let mut children: Vec<_> = listing
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(|e| VaultError::io("cannot read", dir, e))?;
        children.sort();
        for path in children {
            let name = path.file_name().unwrap_or_default().to_os_string();
            if is_temp_name(&name.to_string_lossy()) {
                continue;
            }
            let lmeta =
                fs::symlink_metadata(&path).map_err(|e| VaultError::io("cannot read", &path, e))?;
            let (meta, link_target) = if lmeta.file_type().is_symlink() {
                let real = self.confine(&path)?;
                let meta =
                    fs::metadata(&real).map_err(|e| VaultError::io("cannot read", &real, e))?;
                (meta, Some(real))
            } else {
                (lmeta, None)
            };
            if meta.is_dir() {
                if kind == EntryKind::Env {
                    return Err(VaultError::Unexpected {
                        path,
                        why: "envs/ holds one NAME.age file per variable, no folders".into(),
                    });
                }
                let real = link_target
                    .clone()
                    .or_else(|| fs::canonicalize(&path).ok())
                    .unwrap_or_else(|| path.clone());
                // A folder reached twice (a link to an ancestor, or two links to one
                // folder) would list entries twice or forever.
                if !seen.insert(real) {
                    return Err(VaultError::SymlinkLoop(path));
                }
                self.walk(&path, kind, &rel.join(&name), seen, out)?;
                continue;
            }
            if !meta.is_file() {
                return Err(VaultError::Unexpected {
                    path,
                    why: "it is neither a file nor a folder".into(),
                });
            }
            let text = name.to_string_lossy();
            let Some(stem) = text.strip_suffix(".age") else {
                return Err(VaultError::Unexpected {
                    path,
                    why: "entries are NAME.age files".into(),
                });
            };
            let named = match kind {
                EntryKind::Env => EntryRef::env(stem),
                EntryKind::File => names::home_rel_of(&rel.join(stem)).map(|rel| EntryRef {
                    kind,
                    name: rel.to_string_lossy().into_owned(),
                }),
            };
            // A bad name found on disk is not a usage error: say which file it is.
            let entry = named.map_err(|e| VaultError::Unexpected {
                path: path.clone(),
                why: e.to_string(),
            })?;
            out.push(Entry {
                entry,
                size: meta.len(),
                path,
                link_target,
            });
        }
        Ok(())
    }
}

/// The temp files of `fsutil::write_atomic` (`.<name>.tmp-<pid>`), left only by a crash.
fn is_temp_name(name: &str) -> bool {
    name.starts_with('.')
        && name
            .rsplit_once(".tmp-")
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn write_list_decrypt_remove() {
        let s = setup();
        let v = vault(&s, "default");
        let token = EntryRef::env("TOKEN").unwrap();
        let hosts = EntryRef::file(".config/gh/hosts.yml").unwrap();
        assert_eq!(v.write(&token, b"t0k").unwrap(), Written::Created);
        assert_eq!(v.write(&token, b"t1k").unwrap(), Written::Replaced);
        v.write(&hosts, b"github.com: {}\n").unwrap();
        let entries = v.entries().unwrap();
        let labels: Vec<String> = entries.iter().map(|e| e.entry.label()).collect();
        assert_eq!(labels, ["env:TOKEN", "file:.config/gh/hosts.yml"]);
        assert_eq!(&v.decrypt(&s.id, &entries[0]).unwrap()[..], b"t1k");
        assert_eq!(v.resolve("TOKEN").unwrap(), token);
        assert_eq!(v.resolve(".config/gh/hosts.yml").unwrap(), hosts);
        v.remove(&hosts).unwrap();
        assert!(!s.ws.vault_home_dir("default").join(".config").exists());
        assert!(matches!(v.remove(&hosts), Err(VaultError::NoEntry { .. })));
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
        assert!(v.entries().unwrap().is_empty());
    }

    #[test]
    fn links_inside_personal_are_followed_others_refused() {
        let s = setup();
        let a = vault(&s, "a");
        let b = vault(&s, "b");
        a.write(&EntryRef::env("SHARED").unwrap(), b"v").unwrap();
        fs::create_dir_all(s.ws.vault_envs_dir("b")).unwrap();
        let link = s.ws.vault_env("b", "SHARED");
        symlink("../../a/envs/SHARED.age", &link).unwrap();
        let entries = b.entries().unwrap();
        assert_eq!(entries.len(), 1);
        assert!(entries[0].link_target.is_some());
        assert_eq!(&b.decrypt(&s.id, &entries[0]).unwrap()[..], b"v");

        let outside = s.ws.root().join("outside.age");
        fs::write(&outside, b"x").unwrap();
        let escape = s.ws.vault_env("b", "ESCAPE");
        symlink(&outside, &escape).unwrap();
        match b.entries() {
            Err(VaultError::SymlinkEscape { link, .. }) => assert_eq!(link, escape),
            other => panic!("{other:?}"),
        }
        fs::remove_file(&escape).unwrap();

        let l1 = s.ws.vault_env("b", "L1");
        let l2 = s.ws.vault_env("b", "L2");
        symlink("L2.age", &l1).unwrap();
        symlink("L1.age", &l2).unwrap();
        assert!(matches!(b.entries(), Err(VaultError::SymlinkLoop(_))));
        fs::remove_file(&l1).unwrap();
        fs::remove_file(&l2).unwrap();

        // A folder link back to an ancestor.
        let home = s.ws.vault_home_dir("b");
        fs::create_dir_all(&home).unwrap();
        symlink(".", home.join("again")).unwrap();
        assert!(matches!(b.entries(), Err(VaultError::SymlinkLoop(_))));
        // Writes never go through a linked folder.
        assert!(matches!(
            b.write(&EntryRef::file("again/x").unwrap(), b"x"),
            Err(VaultError::WriteThroughLink(_))
        ));
    }

    #[test]
    fn rekey_drops_a_removed_recipient() {
        let s = setup();
        let tmp = tempfile::tempdir().unwrap();
        let bob = super::super::identity::ensure(&tmp.path().join("bob.txt"))
            .unwrap()
            .0;
        let v = vault(&s, "team");
        let mut r = v.recipients().unwrap();
        r.add(bob.recipient(), Recipient::parse(bob.recipient()).unwrap());
        v.write_recipients(&r).unwrap();
        let e = EntryRef::env("K").unwrap();
        v.write(&e, b"v").unwrap();
        let entry = v.find(&e).unwrap().unwrap();
        assert_eq!(&v.decrypt(&bob, &entry).unwrap()[..], b"v");
        r.remove(bob.recipient());
        v.write_recipients(&r).unwrap();
        assert_eq!(v.rekey(&s.id).unwrap(), (1, 0));
        match v.decrypt(&bob, &entry) {
            Err(VaultError::NotRecipient { vault, listed, .. }) => {
                assert_eq!(vault, "team");
                assert!(!listed);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn temp_names() {
        assert!(is_temp_name(".TOKEN.age.tmp-123"));
        assert!(!is_temp_name(".netrc.age"));
        assert!(!is_temp_name("TOKEN.age"));
    }
}
