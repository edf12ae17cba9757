//! age encryption and decryption in memory, and recognising an age file by its header.
//!
//! Entries are written in age's binary format; armored files (`age -a`) are read too.
//! Decryption writes into a buffer allocated once at its final size, so that no
//! reallocation leaves a copy of the plaintext in freed memory, and is wiped on drop.

use std::io::{Read, Write};

use zeroize::Zeroizing;

use super::identity::Identity;
use super::recipients::Recipient;

/// The first line of a binary age file.
pub const AGE_MAGIC: &[u8] = b"age-encryption.org/v1\n";
/// The first line of an armored age file.
pub const ARMOR_BEGIN: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";

/// Why an entry could not be decrypted.
#[derive(Debug)]
pub enum DecryptFailure {
    /// None of the identity's keys is a recipient.
    NotRecipient,
    /// The file is not an age file, or it is damaged.
    Corrupt(String),
    /// The plaintext is larger than `limit`.
    TooLarge,
}

/// Encrypts `plaintext` to every recipient.
pub fn encrypt(recipients: &[Recipient], plaintext: &[u8]) -> Result<Vec<u8>, String> {
    let encryptor = age::Encryptor::with_recipients(recipients.iter().map(|r| r.as_age()))
        .map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(plaintext.len() + 256 + 200 * recipients.len());
    let mut writer = encryptor.wrap_output(&mut out).map_err(|e| e.to_string())?;
    writer.write_all(plaintext).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Decrypts `ciphertext` (binary or armored) with `identity`; a plaintext larger than
/// `limit` bytes is refused.
pub fn decrypt(
    identity: &Identity,
    ciphertext: &[u8],
    limit: usize,
) -> Result<Zeroizing<Vec<u8>>, DecryptFailure> {
    if !is_age_file(ciphertext) {
        return Err(DecryptFailure::Corrupt("it is not an age file".into()));
    }
    let reader = age::armor::ArmoredReader::new(ciphertext);
    let decryptor = age::Decryptor::new_buffered(reader).map_err(corrupt)?;
    if decryptor.is_scrypt() {
        return Err(DecryptFailure::Corrupt(
            "it is encrypted with a passphrase, not to recipients".into(),
        ));
    }
    let mut stream = decryptor
        .decrypt(identity.as_age().into_iter())
        .map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => DecryptFailure::NotRecipient,
            other => corrupt(other),
        })?;
    // The plaintext is never longer than the ciphertext: one allocation suffices.
    let capacity = ciphertext.len().min(limit) + 1;
    let mut plain = Zeroizing::new(Vec::with_capacity(capacity));
    (&mut stream)
        .take(limit as u64 + 1)
        .read_to_end(&mut plain)
        // Reading from memory cannot fail but for a chunk that does not authenticate.
        .map_err(|_| DecryptFailure::Corrupt("it is damaged".into()))?;
    if plain.len() > limit {
        return Err(DecryptFailure::TooLarge);
    }
    Ok(plain)
}

fn corrupt(e: age::DecryptError) -> DecryptFailure {
    DecryptFailure::Corrupt(match e {
        age::DecryptError::InvalidHeader => {
            "it is not an age file, or its header is damaged".into()
        }
        age::DecryptError::InvalidMac
        | age::DecryptError::DecryptionFailed
        | age::DecryptError::Io(_) => "it is damaged".into(),
        other => other.to_string(),
    })
}

/// Does `bytes` start like an age file (binary or armored)?
pub fn is_age_file(bytes: &[u8]) -> bool {
    bytes.starts_with(AGE_MAGIC) || trim_start(bytes).starts_with(ARMOR_BEGIN)
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// The stanza kinds of the recipients a vault can have.
const RECIPIENT_STANZAS: &[&[u8]] = &[b"X25519", b"ssh-ed25519", b"ssh-rsa"];

/// What the header of an age file says without decrypting: how many recipient stanzas
/// (one per recipient the file was encrypted to). None when it is not a readable age
/// header.
pub fn recipient_count(bytes: &[u8]) -> Option<usize> {
    if !is_age_file(bytes) {
        return None;
    }
    // The armor is base64 of the binary file; the header is at its start, so a few KiB
    // of the decoded stream are enough.
    let mut header = Vec::new();
    age::armor::ArmoredReader::new(bytes)
        .take(64 * 1024)
        .read_to_end(&mut header)
        .ok()?;
    let text = header.split(|&b| b == b'\n');
    let mut count = 0;
    for line in text.skip(1) {
        if line.starts_with(b"---") {
            return Some(count);
        }
        // age adds a "grease" stanza of a random kind to some headers; only the kinds
        // that name a recipient count.
        if let Some(stanza) = line.strip_prefix(b"-> ") {
            let kind = stanza.split(|&b| b == b' ').next().unwrap_or_default();
            if RECIPIENT_STANZAS.contains(&kind) {
                count += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn identity(dir: &std::path::Path, name: &str) -> Identity {
        let path = dir.join(name);
        super::super::identity::ensure(&path).unwrap().0
    }

    #[test]
    fn round_trip_to_several_recipients() {
        let tmp = tempfile::tempdir().unwrap();
        let a = identity(tmp.path(), "a.txt");
        let b = identity(tmp.path(), "b.txt");
        let c = identity(tmp.path(), "c.txt");
        let to: Vec<Recipient> = [&a, &b]
            .iter()
            .map(|i| Recipient::parse(i.recipient()).unwrap())
            .collect();
        let sealed = encrypt(&to, b"s3cret value").unwrap();
        assert!(is_age_file(&sealed));
        assert_eq!(recipient_count(&sealed), Some(2));
        assert_eq!(&decrypt(&a, &sealed, 100).unwrap()[..], b"s3cret value");
        assert_eq!(&decrypt(&b, &sealed, 100).unwrap()[..], b"s3cret value");
        assert!(matches!(
            decrypt(&c, &sealed, 100),
            Err(DecryptFailure::NotRecipient)
        ));
        assert!(matches!(
            decrypt(&a, &sealed, 4),
            Err(DecryptFailure::TooLarge)
        ));
    }

    #[test]
    fn ssh_identity_decrypts_what_its_public_key_received() {
        let tmp = tempfile::tempdir().unwrap();
        let key = tmp.path().join("id_ed25519");
        let ok = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "t", "-f"])
            .arg(&key)
            .status()
            .expect("ssh-keygen (openssh-client) is needed by this test");
        assert!(ok.success());
        let id = Identity::load(&key).unwrap();
        let public = fs::read_to_string(key.with_extension("pub")).unwrap();
        assert!(
            public.starts_with(id.recipient()),
            "{public} vs {}",
            id.recipient()
        );
        let sealed = encrypt(&[Recipient::parse(&public).unwrap()], b"x").unwrap();
        assert_eq!(&decrypt(&id, &sealed, 10).unwrap()[..], b"x");
    }

    #[test]
    fn corrupt_and_foreign_files() {
        let tmp = tempfile::tempdir().unwrap();
        let a = identity(tmp.path(), "a.txt");
        assert!(matches!(
            decrypt(&a, b"plain text", 100),
            Err(DecryptFailure::Corrupt(_))
        ));
        let mut sealed = encrypt(&[Recipient::parse(a.recipient()).unwrap()], b"v").unwrap();
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        assert!(matches!(
            decrypt(&a, &sealed, 100),
            Err(DecryptFailure::Corrupt(_))
        ));
        assert!(!is_age_file(b"-----BEGIN OPENSSH PRIVATE KEY-----"));
        assert!(is_age_file(b"\n-----BEGIN AGE ENCRYPTED FILE-----\n"));
        assert_eq!(recipient_count(b"hello"), None);
    }
}
