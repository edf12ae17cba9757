//! What a loop's sandbox receives from its vault: decrypted in memory, handed over as
//! environment variables and as file contents for memfds. Nothing here touches the disk
//! except to read ciphertext.

use std::fmt;
use std::path::{Path, PathBuf};

use secrecy::SecretString;
use zeroize::Zeroizing;

use super::identity::Identity;
use super::store::{EntryKind, Vault};
use super::{VaultError, DEFAULT_VAULT};
use crate::egress::sentinel::{self, Sentinel};
use crate::error::Result;
use crate::workspace::{HostPaths, Workspace};

/// The decrypted contents of one vault, as the sandbox receives them. Values are wiped
/// from memory when dropped, and `Debug` shows names and sizes only.
///
/// An entry bound to hosts reaches the sandbox as a placeholder made for this run (in its
/// variable, or in place of each credential in its file); its value goes to the proxy
/// alone, in `sentinels`.
#[derive(Default)]
pub struct Delivery {
    /// `(NAME, value or placeholder)` for each `envs/<NAME>.age`, sorted by name.
    pub env: Vec<(String, SecretString)>,
    /// `(path relative to $HOME, contents)` for each `mounts/home/<rel>.age`, sorted; a
    /// bound file's credentials replaced by placeholders.
    pub files: Vec<(PathBuf, Zeroizing<Vec<u8>>)>,
    /// The bound entries' values and placeholders, for the proxy.
    pub sentinels: Vec<Sentinel>,
    /// The entries delivered in plaintext (unbound), by label (`env:NAME`).
    pub plaintext: Vec<String>,
    /// The entries delivered as placeholders (bound), by label.
    pub bound: Vec<String>,
    /// What the run should say: entries skipped (not as git-loop writes them, or refused as
    /// they are: copied or renamed from elsewhere, older and never pinned here), and a
    /// change of recipients that arrived by sync and waits for the person's word.
    pub warnings: Vec<String>,
}

impl Delivery {
    pub fn is_empty(&self) -> bool {
        self.env.is_empty() && self.files.is_empty()
    }
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let env: Vec<&str> = self.env.iter().map(|(n, _)| n.as_str()).collect();
        let files: Vec<String> = self
            .files
            .iter()
            .map(|(p, c)| format!("{} ({} bytes)", p.display(), c.len()))
            .collect();
        f.debug_struct("Delivery")
            .field("env", &env)
            .field("files", &files)
            .finish()
    }
}

/// Decrypts the selected vault of the workspace's user in memory. A missing vault named
/// "default" yields an empty Delivery (a loop without credentials); any other missing
/// vault is an error with a hint.
pub fn open_for_run(ws: &Workspace, vault: &str) -> Result<Delivery> {
    let identity = HostPaths::from_env()?.identity;
    open_with(ws, vault, &identity)
}

/// [`open_for_run`] with the identity file given. The identity is read only when the
/// vault has entries, so a loop without credentials needs none.
pub fn open_with(ws: &Workspace, vault: &str, identity: &Path) -> Result<Delivery> {
    if vault == super::NO_VAULT {
        return Ok(Delivery::default());
    }
    let v = Vault::at(ws, vault)?;
    if !v.exists() {
        if vault == DEFAULT_VAULT {
            return Ok(Delivery::default());
        }
        return Err(VaultError::NoVault(vault.to_string()).into());
    }
    let v = Vault::open(ws, vault)?;
    let mut delivery = Delivery::default();
    if let Some(warning) = super::decision_warning(&v)? {
        delivery.warnings.push(warning);
    }
    let listing = v.entries()?;
    for bad in &listing.bad {
        delivery
            .warnings
            .push(format!("vault '{vault}': skipped {bad}"));
    }
    let entries = listing.entries;
    if entries.is_empty() {
        return Ok(delivery);
    }
    super::identity::check_location(identity, ws.root())?;
    let identity = Identity::load(identity)?;
    for entry in &entries {
        // An entry that is not what its name says is skipped, and said: the rest of the
        // vault still reaches the loop. One the person's own identity cannot open (damaged,
        // or not encrypted to it) stops the run, as it always did: running without it would
        // hide a fault of the person's own vault.
        let opened = match v.unseal(&identity, entry) {
            Ok(opened) => opened,
            Err(e @ (VaultError::Moved { .. } | VaultError::UnpinnedLegacy { .. })) => {
                delivery.warnings.push(format!("skipped: {e}"));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let (plain, hosts) = (opened.value, opened.hosts);
        let label = entry.entry.label();
        if hosts.is_empty() {
            delivery.plaintext.push(label.clone());
        } else {
            delivery.bound.push(label.clone());
        }
        match entry.entry.kind {
            EntryKind::Env => {
                Vault::check_value(&entry.entry, &plain)?;
                // check_value has made sure it is UTF-8; the copy goes straight into a
                // SecretString and `plain` is wiped when it drops.
                let text = Zeroizing::new(String::from_utf8_lossy(&plain).into_owned());
                let inside = if hosts.is_empty() {
                    text.to_string()
                } else {
                    let s = Sentinel::new(label, &text, hosts).in_vault(vault);
                    let placeholder = s.placeholder.clone();
                    delivery.sentinels.push(s);
                    placeholder
                };
                delivery
                    .env
                    .push((entry.entry.name.clone(), SecretString::from(inside)));
            }
            EntryKind::File if hosts.is_empty() => delivery
                .files
                .push((PathBuf::from(&entry.entry.name), plain)),
            EntryKind::File => {
                let spans = sentinel::file_secrets(&plain);
                // A file edited into one with nothing to bind since it was stored: its
                // plaintext must not go in, and there is nothing to stand in for it.
                if spans.is_empty() {
                    return Err(VaultError::NotBindable(label).into());
                }
                let mut inside = Zeroizing::new(Vec::with_capacity(plain.len()));
                let mut last = 0;
                for span in spans {
                    inside.extend_from_slice(&plain[last..span.start]);
                    let secret = String::from_utf8_lossy(&plain[span.clone()]);
                    let s = Sentinel::new(label.clone(), &secret, hosts.clone()).in_vault(vault);
                    inside.extend_from_slice(s.placeholder.as_bytes());
                    delivery.sentinels.push(s);
                    last = span.end;
                }
                inside.extend_from_slice(&plain[last..]);
                delivery
                    .files
                    .push((PathBuf::from(&entry.entry.name), inside));
            }
        }
    }
    Ok(delivery)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vault::store::EntryRef;
    use secrecy::ExposeSecret;
    use std::fs;

    fn ws(tmp: &Path) -> Workspace {
        let ws = Workspace::at(tmp.join("ws"), "alice".into());
        fs::create_dir_all(ws.vaults_dir()).unwrap();
        ws
    }

    #[test]
    fn missing_default_vault_is_empty_and_needs_no_identity() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = ws(tmp.path());
        let d = open_with(&ws, "default", &tmp.path().join("no-identity")).unwrap();
        assert!(d.is_empty());
        let err = open_with(&ws, "work", &tmp.path().join("no-identity")).unwrap_err();
        assert_eq!(err.message, "vault 'work' does not exist");
        assert!(err
            .hints
            .iter()
            .any(|h| h.contains("git loop vault init work")));
        let err = open_with(&ws, "../x", &tmp.path().join("no-identity")).unwrap_err();
        assert_eq!(err.kind, crate::ErrorKind::Usage);
    }

    #[test]
    fn delivers_env_and_files_in_memory() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = ws(tmp.path());
        let id_path = tmp.path().join("id.txt");
        let (id, _) = crate::vault::identity::ensure(&id_path).unwrap();
        let v = Vault::at(&ws, "work").unwrap();
        v.create(&[id.recipient().to_string()]).unwrap();
        v.write(&EntryRef::env("B_TOKEN").unwrap(), b"bbb").unwrap();
        v.write(&EntryRef::env("A_TOKEN").unwrap(), b"aaa").unwrap();
        v.write(&EntryRef::file(".aws/credentials").unwrap(), b"[default]\n")
            .unwrap();
        let d = open_with(&ws, "work", &id_path).unwrap();
        let env: Vec<(&str, &str)> = d
            .env
            .iter()
            .map(|(n, v)| (n.as_str(), v.expose_secret()))
            .collect();
        assert_eq!(env, [("A_TOKEN", "aaa"), ("B_TOKEN", "bbb")]);
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.files[0].0, PathBuf::from(".aws/credentials"));
        assert_eq!(&d.files[0].1[..], b"[default]\n");
        let shown = format!("{d:?}");
        assert!(
            !shown.contains("aaa") && shown.contains("A_TOKEN"),
            "{shown}"
        );
    }

    #[test]
    fn a_stranger_identity_stops_the_run_and_a_link_is_skipped_and_said() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = ws(tmp.path());
        let id_path = tmp.path().join("id.txt");
        let (id, _) = crate::vault::identity::ensure(&id_path).unwrap();
        let v = Vault::at(&ws, "work").unwrap();
        v.create(&[id.recipient().to_string()]).unwrap();
        v.write(&EntryRef::env("T").unwrap(), b"t").unwrap();

        let stranger = tmp.path().join("stranger.txt");
        crate::vault::identity::ensure(&stranger).unwrap();
        let err = open_with(&ws, "work", &stranger).unwrap_err();
        assert!(err.message.contains("vault 'work'"), "{}", err.message);
        assert!(err.hints.iter().any(|h| h.contains("recipients work add")));
        assert!(err.hints.iter().any(|h| h.contains("rekey work")));

        let target = tmp.path().join("elsewhere.age");
        fs::write(&target, b"x").unwrap();
        let link = ws.vault_env("work", "OUT");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let d = open_with(&ws, "work", &id_path).unwrap();
        assert_eq!(d.env.len(), 1, "the vault's own entry still goes in");
        assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
        assert!(
            d.warnings[0].contains(&link.display().to_string())
                && d.warnings[0].contains("symlink"),
            "{:?}",
            d.warnings
        );
    }

    #[test]
    fn a_vault_never_accepted_here_is_not_delivered() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = ws(tmp.path());
        let id_path = tmp.path().join("id.txt");
        let (id, _) = crate::vault::identity::ensure(&id_path).unwrap();
        let v = Vault::at(&ws, "work").unwrap();
        v.create(&[id.recipient().to_string()]).unwrap();
        v.write(&EntryRef::env("T").unwrap(), b"t").unwrap();
        fs::remove_file(ws.vault_pins_dir().join("work.recipients")).unwrap();
        let err = open_with(&ws, "work", &id_path).unwrap_err();
        assert!(err.message.contains("arrived by sync"), "{}", err.message);
        assert!(err
            .hints
            .iter()
            .any(|h| h.contains("git loop vault recipients accept work")));
    }
}
