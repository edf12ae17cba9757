//! The user's age identity: `$XDG_CONFIG_HOME/git-loop/identity.txt` (`GIT_LOOP_IDENTITY`
//! overrides), on the host, outside the workspace, never in a sandbox.
//!
//! Two kinds are accepted: an age identity file (`AGE-SECRET-KEY-1…` lines, as
//! `age-keygen` writes them; what `vault init` creates) and an unencrypted OpenSSH
//! `ssh-ed25519` or `ssh-rsa` private key. A passphrase-protected ssh key is refused
//! rather than prompted for: a loop's start must not stop at a prompt.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::prelude::{Engine, BASE64_STANDARD};
use secrecy::ExposeSecret;
use zeroize::Zeroizing;

use super::VaultError;

/// An identity file is a few lines; anything much larger is not one.
const MAX_IDENTITY_BYTES: u64 = 64 * 1024;

enum Keys {
    X25519(Vec<age::x25519::Identity>),
    Ssh(age::ssh::Identity),
}

/// A loaded identity and the recipients (public keys) it answers to.
pub struct Identity {
    path: PathBuf,
    keys: Keys,
    recipients: Vec<String>,
    /// Readable by group or others: worth a warning, as ssh gives.
    pub loose_mode: bool,
}

impl Identity {
    /// Loads the identity at `path`. A missing file, an unreadable one and one that holds
    /// no usable key are three different errors.
    pub fn load(path: &Path) -> Result<Identity, VaultError> {
        let text = read_secret_file(path)?;
        let loose_mode = fs::metadata(path)
            .map(|m| m.mode() & 0o077 != 0)
            .unwrap_or(false);
        let bad = |reason: &str| VaultError::BadIdentity {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        };
        let (keys, recipients) = if text.trim_start().starts_with("-----BEGIN") {
            let key = age::ssh::Identity::from_buffer(io::Cursor::new(text.as_bytes()), None)
                .map_err(|_| bad("the private key cannot be parsed"))?;
            match &key {
                age::ssh::Identity::Unencrypted(_) => {}
                age::ssh::Identity::Encrypted(_) => {
                    return Err(bad("the ssh key is protected by a passphrase"))
                }
                age::ssh::Identity::Unsupported(_) => {
                    return Err(bad(
                        "this kind of ssh key is not supported (use ssh-ed25519 or ssh-rsa)",
                    ))
                }
            }
            let recipient = ssh_recipient(&text, path).ok_or_else(|| {
                bad("its public key cannot be found: keep it beside it as <key>.pub")
            })?;
            (Keys::Ssh(key), vec![recipient])
        } else {
            let mut keys = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                match line.parse::<age::x25519::Identity>() {
                    Ok(key) => keys.push(key),
                    // Only the line number: the line may be most of a secret key.
                    Err(_) => {
                        return Err(VaultError::BadIdentity {
                            path: path.to_path_buf(),
                            reason: format!("line {} is not an age secret key", i + 1),
                        })
                    }
                }
            }
            if keys.is_empty() {
                return Err(bad("it holds no key"));
            }
            let recipients = keys.iter().map(|k| k.to_public().to_string()).collect();
            (Keys::X25519(keys), recipients)
        };
        Ok(Identity {
            path: path.to_path_buf(),
            keys,
            recipients,
            loose_mode,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The recipient to encrypt to for this identity (the first, if the file has several).
    pub fn recipient(&self) -> &str {
        &self.recipients[0]
    }

    /// Every recipient this identity can decrypt for, in canonical form.
    pub fn recipients(&self) -> &[String] {
        &self.recipients
    }

    /// The keys, as the age crate wants them.
    pub fn as_age(&self) -> Vec<&dyn age::Identity> {
        match &self.keys {
            Keys::X25519(keys) => keys.iter().map(|k| k as &dyn age::Identity).collect(),
            Keys::Ssh(key) => vec![key as &dyn age::Identity],
        }
    }
}

/// The recipient (public key) of an ssh private key: read from the key itself when it is
/// in OpenSSH's format (the public key is stored there in the clear), else from the
/// `.pub` file beside it (older PEM keys).
fn ssh_recipient(text: &str, path: &Path) -> Option<String> {
    let recipient = match openssh_public_key(text) {
        Some(blob) => {
            let (kind, _) = ssh_string(&blob)?;
            format!(
                "{} {}",
                std::str::from_utf8(kind).ok()?,
                BASE64_STANDARD.encode(&blob)
            )
        }
        None => {
            let mut public = path.as_os_str().to_owned();
            public.push(".pub");
            fs::read_to_string(public).ok()?.trim().to_string()
        }
    };
    // Canonical form (no comment), and only kinds the age crate can encrypt to.
    super::recipients::Recipient::parse(&recipient)
        .ok()
        .map(|r| r.canonical())
}

/// The public key blob of an `openssh-key-v1` private key.
fn openssh_public_key(text: &str) -> Option<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN OPENSSH PRIVATE KEY-----";
    let body: Zeroizing<String> = Zeroizing::new(
        text.lines()
            .skip_while(|l| l.trim() != BEGIN)
            .skip(1)
            .take_while(|l| !l.starts_with("-----END"))
            .map(str::trim)
            .collect(),
    );
    // The decoded key holds the private half too: wiped on drop.
    let bytes = Zeroizing::new(BASE64_STANDARD.decode(body.as_bytes()).ok()?);
    let rest = bytes.strip_prefix(b"openssh-key-v1\0")?;
    let (_cipher, rest) = ssh_string(rest)?;
    let (_kdf, rest) = ssh_string(rest)?;
    let (_kdf_options, rest) = ssh_string(rest)?;
    let count = u32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
    if count != 1 {
        return None;
    }
    let (public, _) = ssh_string(&rest[4..])?;
    Some(public.to_vec())
}

/// One SSH wire-format string: a big-endian u32 length, then that many bytes.
fn ssh_string(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let body = bytes.get(4..4 + len)?;
    Some((body, &bytes[4 + len..]))
}

/// Refuses an identity kept inside the workspace `root`: every sandbox sees parts of the
/// workspace and the personal repository is committed and pushed.
pub fn check_location(path: &Path, root: &Path) -> Result<(), VaultError> {
    let real = |p: &Path| fs::canonicalize(p).ok();
    let id = real(path).or_else(|| {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty())?;
        Some(real(parent)?.join(path.file_name()?))
    });
    match (id, real(root)) {
        (Some(id), Some(root)) if id.starts_with(&root) => {
            Err(VaultError::IdentityInWorkspace(path.to_path_buf()))
        }
        _ => Ok(()),
    }
}

/// Loads the identity at `path`, creating a new X25519 one first when there is none.
/// Returns whether it was created.
pub fn ensure(path: &Path) -> Result<(Identity, bool), VaultError> {
    match Identity::load(path) {
        Ok(id) => Ok((id, false)),
        Err(VaultError::NoIdentity(_)) => {
            let created = create(path)?;
            Ok((Identity::load(path)?, created))
        }
        Err(e) => Err(e),
    }
}

/// Writes a new identity at `path`, mode 0600 from the first byte. It is written under a
/// temporary name and hard-linked into place, so that a concurrent creator's identity is
/// never overwritten (the loser keeps the winner's). Returns false if one appeared.
fn create(path: &Path) -> Result<bool, VaultError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| VaultError::io("cannot create", dir, e))?;
    let key = age::x25519::Identity::generate();
    let now = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let text = Zeroizing::new(format!(
        "# created: {now}\n# public key: {}\n{}\n",
        key.to_public(),
        key.to_string().expose_secret()
    ));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(crate::fsutil::temp_name(&name));
    let result = (|| -> io::Result<bool> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        let linked = match fs::hard_link(&tmp, path) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(e),
        };
        fs::File::open(dir)?.sync_all()?;
        Ok(linked)
    })();
    let _ = fs::remove_file(&tmp);
    result.map_err(|e| VaultError::io("cannot create the identity", path, e))
}

/// Reads a small secret file into a buffer that is wiped when dropped.
fn read_secret_file(path: &Path) -> Result<Zeroizing<String>, VaultError> {
    let unreadable = |source| VaultError::UnreadableIdentity {
        path: path.to_path_buf(),
        source,
    };
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(VaultError::NoIdentity(path.to_path_buf()))
        }
        Err(e) => return Err(unreadable(e)),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if meta.is_dir() {
        return Err(unreadable(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a folder",
        )));
    }
    if meta.len() > MAX_IDENTITY_BYTES {
        return Err(VaultError::BadIdentity {
            path: path.to_path_buf(),
            reason: "it is far larger than an identity".into(),
        });
    }
    // Room for the whole file up front: a growing buffer would leave copies behind.
    let mut bytes = Zeroizing::new(Vec::with_capacity(MAX_IDENTITY_BYTES as usize + 1));
    file.take(MAX_IDENTITY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    match std::str::from_utf8(&bytes) {
        Ok(text) => Ok(Zeroizing::new(text.to_string())),
        Err(_) => Err(VaultError::BadIdentity {
            path: path.to_path_buf(),
            reason: "it is not text".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_with_mode_0600_and_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("conf/git-loop/identity.txt");
        let (id, created) = ensure(&path).unwrap();
        assert!(created);
        assert!(id.recipient().starts_with("age1"));
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert!(!id.loose_mode);
        let (again, created) = ensure(&path).unwrap();
        assert!(!created);
        assert_eq!(again.recipient(), id.recipient());
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("identity.txt")]);
    }

    #[test]
    fn an_identity_inside_the_workspace_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        fs::create_dir_all(ws.join("personal/me")).unwrap();
        assert!(matches!(
            check_location(&ws.join("personal/me/id.txt"), &ws),
            Err(VaultError::IdentityInWorkspace(_))
        ));
        check_location(&tmp.path().join("id.txt"), &ws).unwrap();
        check_location(&tmp.path().join("no/such/id.txt"), &ws).unwrap();
    }

    #[test]
    fn missing_unreadable_and_bad_identities() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("none.txt");
        assert!(matches!(
            Identity::load(&missing),
            Err(VaultError::NoIdentity(_))
        ));
        assert!(matches!(
            Identity::load(tmp.path()),
            Err(VaultError::UnreadableIdentity { .. })
        ));
        let junk = tmp.path().join("junk.txt");
        fs::write(&junk, "AGE-SECRET-KEY-1NOTREALLY\n").unwrap();
        let err = Identity::load(&junk).err().unwrap().to_string();
        assert!(err.contains("line 1"), "{err}");
        assert!(!err.contains("NOTREALLY"), "{err}");
        let empty = tmp.path().join("empty.txt");
        fs::write(&empty, "# nothing\n").unwrap();
        assert!(matches!(
            Identity::load(&empty),
            Err(VaultError::BadIdentity { .. })
        ));
    }
}
