//! What the person decided about their vaults, kept on this machine only: whom each vault
//! encrypts to, and which entries of the older format (no name inside, see `entryfmt.rs`)
//! were theirs.
//!
//! The vaults' repository syncs through a remote that others may be able to push to
//! (DESIGN 4.0): a recipient added there, or an entry copied or renamed there, arrives as
//! data. So the recipient set a vault encrypts to is pinned here, outside the repository:
//!
//! ```text
//! vaults/.pinned/<user>/       (in the workspace, beside vaults/<user>/; mode 0700)
//!   <vault>.recipients         the recipients.txt the person accepted, as it was
//!   <vault>.legacy             "<sha256 of the age file> <kind>:<name>" per older entry
//! ```
//!
//! It is never synced (no repository holds it), never in any sandbox's view (`vaults/` is
//! bound nowhere), and it travels with the workspace when the workspace is copied. A vault
//! with no pin here arrived by sync (or was made by hand) and is not used until the person
//! accepts it; a recipients.txt that differs from its pin is shown and not used until the
//! person accepts or refuses the change (`git loop vault recipients accept|refuse VAULT`).
//! `vault init` and `vault recipients add|rm` change the pin at once: they are the
//! person's word.
//!
//! The first git-loop that pins finds the vaults as they are on this machine and pins them
//! all ([`start`], before any sync of that command): what was there had been delivered all
//! along, so trusting it on first sight changes nothing, while everything that arrives
//! afterwards needs the person's word. The folder is made under a temporary name and
//! renamed into place, so a killed start leaves no half-pinned state.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::VaultError;
use crate::workspace::Workspace;

/// A pin file is a few lines; anything larger was not written by git-loop.
const MAX_PIN_BYTES: usize = 1024 * 1024;

/// The pins of one person's vaults.
#[derive(Debug, Clone)]
pub struct Pins {
    dir: PathBuf,
}

impl Pins {
    pub fn of(ws: &Workspace) -> Pins {
        Pins {
            dir: ws.vault_pins_dir(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Has pinning begun on this machine (see [`start`])?
    pub fn started(&self) -> bool {
        fs::symlink_metadata(&self.dir).is_ok_and(|m| m.is_dir())
    }

    fn file(&self, vault: &str, what: &str) -> PathBuf {
        self.dir.join(format!("{vault}.{what}"))
    }

    fn read(&self, vault: &str, what: &str) -> Result<Option<String>, VaultError> {
        let path = self.file(vault, what);
        match crate::fsutil::read_regular(&path, MAX_PIN_BYTES as u64) {
            Ok(Some(bytes)) => String::from_utf8(bytes).map(Some).map_err(|_| {
                VaultError::io("cannot read", &path, io::ErrorKind::InvalidData.into())
            }),
            Err(e) if e.kind() == io::ErrorKind::FileTooLarge => Err(VaultError::io(
                "cannot read",
                &path,
                io::Error::other("it is larger than a pin can be"),
            )),
            Ok(None) => Ok(None),
            Err(e) => Err(VaultError::io("cannot read", &path, e)),
        }
    }

    fn write(&self, vault: &str, what: &str, text: &str) -> Result<(), VaultError> {
        make_private_dir(&self.dir)?;
        let path = self.file(vault, what);
        crate::fsutil::write_atomic(&path, text.as_bytes())
            .map_err(|e| VaultError::io("cannot write", &path, io::Error::other(e.one_line())))
    }

    /// The recipients.txt the person accepted for `vault`, or None: never accepted here.
    pub fn recipients(&self, vault: &str) -> Result<Option<String>, VaultError> {
        self.read(vault, "recipients")
    }

    pub fn set_recipients(&self, vault: &str, text: &str) -> Result<(), VaultError> {
        self.write(vault, "recipients", text)
    }

    /// The entries of the older format accepted for `vault` ([`legacy_key`]s).
    pub fn legacy(&self, vault: &str) -> Result<BTreeSet<String>, VaultError> {
        Ok(self
            .read(vault, "legacy")?
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect())
    }

    pub fn set_legacy(&self, vault: &str, keys: &BTreeSet<String>) -> Result<(), VaultError> {
        let mut text = format!(
            "# Entries of vault '{vault}' in the older format (no name inside) that were yours when\n# git-loop first pinned this vault; `git loop vault rekey {vault}` rewrites them.\n"
        );
        for k in keys {
            text.push_str(k);
            text.push('\n');
        }
        self.write(vault, "legacy", &text)
    }
}

/// How an entry of the older format is pinned: the hash of its age file and its label, so
/// that the same file under another name or in another vault is not it.
pub fn legacy_key(label: &str, sealed: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(sealed);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex} {label}")
}

/// A folder only its owner can enter, made without following a link standing there.
fn make_private_dir(dir: &Path) -> Result<(), VaultError> {
    match fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => {
            return Err(VaultError::Unexpected {
                path: dir.to_path_buf(),
                why: "it is not a folder, where git-loop keeps what you accepted".into(),
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(VaultError::io("cannot read", dir, e)),
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| VaultError::io("cannot create", dir, e))
}

/// Begins pinning on this machine when it has not begun: every vault as it stands now is
/// pinned (its recipients, and every entry's file as a possible older entry). Returns
/// whether it began now. Called before anything of the command reads or syncs the vaults.
pub fn start(ws: &Workspace) -> Result<bool, VaultError> {
    let pins = Pins::of(ws);
    if pins.started() {
        return Ok(false);
    }
    // The vaults still in the personal repository are the person's as much as the others
    // on first sight (a refusal is said by `vault::prepare`, which every command that
    // syncs or reads the vaults runs).
    let _ = super::migrate::migrate(ws);
    let parent = pins.dir.parent().unwrap_or(Path::new("."));
    make_private_dir(parent)?;
    let user = ws.user();
    let staging = Pins {
        dir: parent.join(crate::fsutil::temp_name(user)),
    };
    let result = (|| {
        make_private_dir(&staging.dir)?;
        let (names, _) = super::Vault::names(ws)?;
        for name in names {
            let v = super::Vault::open_to_look(ws, &name)?;
            v.pin_as_found(&staging)?;
        }
        Ok::<(), VaultError>(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&staging.dir);
        return Err(e);
    }
    match fs::rename(&staging.dir, &pins.dir) {
        Ok(()) => Ok(true),
        // Another command began at the same moment: its pins are as good as these.
        Err(_) if pins.started() => {
            let _ = fs::remove_dir_all(&staging.dir);
            Ok(false)
        }
        Err(e) => {
            let _ = fs::remove_dir_all(&staging.dir);
            Err(VaultError::io("cannot create", &pins.dir, e))
        }
    }
}

/// Removes what a killed [`start`] left (its staging folder, named by its writer) when
/// that writer is gone. Says what it removed.
pub fn sweep(ws: &Workspace) -> Vec<String> {
    let pins = Pins::of(ws);
    let Some(parent) = pins.dir.parent() else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(pid) = crate::fsutil::dead_writer(name) else {
            continue;
        };
        let path = entry.path();
        if crate::fsutil::remove_tree(&path).is_ok() {
            said.push(format!(
                "removed {} (left by a killed git-loop command, pid {pid})",
                crate::terminal::shown(path.as_os_str().as_encoded_bytes())
            ));
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_legacy_key_is_bound_to_the_bytes_and_the_name() {
        let a = legacy_key("env:T", b"age bytes");
        assert_eq!(a.len(), 64 + 1 + 5);
        assert_ne!(a, legacy_key("env:U", b"age bytes"));
        assert_ne!(a, legacy_key("env:T", b"other bytes"));
    }

    #[test]
    fn pins_are_read_back_and_kept_apart_per_vault() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        let pins = Pins::of(&ws);
        assert!(!pins.started());
        assert_eq!(pins.recipients("work").unwrap(), None);
        pins.set_recipients("work", "age1x\n").unwrap();
        assert!(pins.started());
        assert_eq!(pins.recipients("work").unwrap().as_deref(), Some("age1x\n"));
        assert_eq!(pins.recipients("other").unwrap(), None);
        let keys: BTreeSet<String> = [legacy_key("env:T", b"x")].into();
        pins.set_legacy("work", &keys).unwrap();
        assert_eq!(pins.legacy("work").unwrap(), keys);
        assert!(pins.legacy("other").unwrap().is_empty());
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(pins.dir()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_killed_start_s_staging_folder_goes_only_when_its_writer_is_gone() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        let parent = ws.vault_pins_dir().parent().unwrap().to_path_buf();
        let dead = parent.join(".alice.tmp-4194305-0badc0de");
        let live = parent.join(crate::fsutil::temp_name("alice"));
        fs::create_dir_all(dead.join("inside")).unwrap();
        fs::create_dir_all(&live).unwrap();
        let said = sweep(&ws);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("pid 4194305"));
        assert!(!dead.exists() && live.exists());
    }
}
