//! Recipients: the public keys a vault's entries are encrypted to. `recipients.txt` holds
//! one per line (`age1…`, `ssh-ed25519 AAAA… comment`, `ssh-rsa AAAA… comment`); blank
//! lines and `#` comments are kept as they are. Two lines name the same recipient when
//! their canonical forms (the key without the ssh comment) are equal.

use std::path::Path;

use super::VaultError;

/// A parsed recipient.
#[derive(Clone)]
pub enum Recipient {
    X25519(age::x25519::Recipient),
    Ssh(age::ssh::Recipient),
}

impl Recipient {
    /// Parses one recipient; the error says why not, never repeating the input (it may be
    /// a secret pasted by mistake).
    pub fn parse(text: &str) -> Result<Recipient, String> {
        let text = text.trim();
        if text.starts_with("AGE-SECRET-KEY-") {
            return Err("that is a secret key (AGE-SECRET-KEY-…): give its public key, age1…, which `git loop vault init` prints".into());
        }
        if text.starts_with("-----BEGIN") {
            return Err("that is a private key: give the public key (the .pub file)".into());
        }
        if text.starts_with("age1") {
            return text
                .parse::<age::x25519::Recipient>()
                .map(Recipient::X25519)
                .map_err(|e| format!("not an age public key ({e})"));
        }
        if text.starts_with("ssh-") {
            use age::ssh::ParseRecipientKeyError as E;
            return text
                .parse::<age::ssh::Recipient>()
                .map(Recipient::Ssh)
                .map_err(|e| match e {
                    E::Unsupported(kind) => {
                        format!("ssh key type {kind} is not supported; use ssh-ed25519 or ssh-rsa")
                    }
                    E::RsaModulusTooSmall => "the ssh-rsa key is shorter than 2048 bits".into(),
                    E::RsaModulusTooLarge => "the ssh-rsa key is longer than 4096 bits".into(),
                    _ => "not a valid ssh-ed25519 or ssh-rsa public key".into(),
                });
        }
        Err(
            "it is neither an age public key (age1…) nor an ssh public key (ssh-ed25519 / ssh-rsa)"
                .into(),
        )
    }

    /// The key without an ssh comment, used to compare recipients.
    pub fn canonical(&self) -> String {
        match self {
            Recipient::X25519(r) => r.to_string(),
            Recipient::Ssh(r) => r.to_string(),
        }
    }

    pub fn as_age(&self) -> &dyn age::Recipient {
        match self {
            Recipient::X25519(r) => r,
            Recipient::Ssh(r) => r,
        }
    }
}

/// One recipient line of `recipients.txt`, as written and as parsed.
#[derive(Clone)]
pub struct Line {
    pub text: String,
    pub recipient: Recipient,
}

/// The recipients of a vault. `text` keeps comments and blank lines so that `add` and
/// `rm` change only the line they are about.
#[derive(Clone, Default)]
pub struct RecipientsFile {
    lines: Vec<String>,
    parsed: Vec<Line>,
}

impl RecipientsFile {
    /// Parses a `recipients.txt`; a bad line is an error naming its number.
    pub fn parse(text: &str, path: &Path) -> Result<RecipientsFile, VaultError> {
        let mut file = RecipientsFile::default();
        for (i, line) in text.lines().enumerate() {
            file.lines.push(line.to_string());
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let recipient =
                Recipient::parse(trimmed).map_err(|reason| VaultError::BadRecipientsFile {
                    path: path.to_path_buf(),
                    line: i + 1,
                    reason,
                })?;
            file.parsed.push(Line {
                text: trimmed.to_string(),
                recipient,
            });
        }
        Ok(file)
    }

    pub fn new(header: &str) -> RecipientsFile {
        RecipientsFile {
            lines: header.lines().map(str::to_string).collect(),
            parsed: Vec::new(),
        }
    }

    pub fn recipients(&self) -> &[Line] {
        &self.parsed
    }

    pub fn contains(&self, canonical: &str) -> bool {
        self.parsed
            .iter()
            .any(|l| l.recipient.canonical() == canonical)
    }

    /// Adds a recipient line; false when it is there already.
    pub fn add(&mut self, text: &str, recipient: Recipient) -> bool {
        if self.contains(&recipient.canonical()) {
            return false;
        }
        let text = text.trim().to_string();
        self.lines.push(text.clone());
        self.parsed.push(Line { text, recipient });
        true
    }

    /// Removes every line naming `canonical`; false when none did.
    pub fn remove(&mut self, canonical: &str) -> bool {
        let before = self.parsed.len();
        self.parsed.retain(|l| l.recipient.canonical() != canonical);
        self.lines.retain(|line| {
            let t = line.trim();
            t.is_empty()
                || t.starts_with('#')
                || Recipient::parse(t).map(|r| r.canonical()).as_deref() != Ok(canonical)
        });
        self.parsed.len() != before
    }

    pub fn to_text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}

/// The recipients an argument names: a recipient, or a file of them (a `.pub` file).
pub fn parse_arg(arg: &str) -> Result<Vec<(String, Recipient)>, VaultError> {
    let bad = |reason: String| -> VaultError {
        let what = if arg.is_empty() {
            "''".to_string()
        } else if arg.starts_with("AGE-SECRET-KEY-") || arg.starts_with("-----BEGIN") {
            "the argument".to_string()
        } else {
            let short: String = arg.chars().take(24).collect();
            format!(
                "'{}{}'",
                short.escape_debug(),
                if arg.chars().count() > 24 { "…" } else { "" }
            )
        };
        VaultError::BadRecipient { what, reason }
    };
    if arg.trim().is_empty() {
        return Err(bad("it is empty".into()));
    }
    match Recipient::parse(arg) {
        Ok(r) => Ok(vec![(arg.trim().to_string(), r)]),
        Err(reason) => {
            let path = Path::new(arg);
            if !path.is_file() {
                return Err(bad(reason));
            }
            let text = std::fs::read_to_string(path)
                .map_err(|e| bad(format!("cannot read the file: {e}")))?;
            let mut out = Vec::new();
            for line in text.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                out.push((line.to_string(), Recipient::parse(line).map_err(&bad)?));
            }
            if out.is_empty() {
                return Err(bad("the file holds no recipient".into()));
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SSH: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOtDYAOA9N4iQWaEBYarQ9P8yihZqcXv5xhsXrPhizcA";

    #[test]
    fn parses_age_and_ssh_keys() {
        let id = age::x25519::Identity::generate();
        let age = id.to_public().to_string();
        assert_eq!(Recipient::parse(&age).unwrap().canonical(), age);
        let with_comment = format!("{SSH} alice@laptop");
        assert_eq!(Recipient::parse(&with_comment).unwrap().canonical(), SSH);
    }

    #[test]
    fn refuses_secrets_and_junk_without_echoing_them() {
        let id = age::x25519::Identity::generate();
        use secrecy::ExposeSecret;
        let secret = id.to_string();
        let err = Recipient::parse(secret.expose_secret()).err().unwrap();
        assert!(err.contains("secret key"));
        assert!(!err.contains(&secret.expose_secret()[16..]));
        assert!(Recipient::parse("age1nope").is_err());
        assert!(Recipient::parse("ssh-dss AAAA").is_err());
        assert!(Recipient::parse("hello").is_err());
    }

    #[test]
    fn file_keeps_comments_and_removes_by_key() {
        let id = age::x25519::Identity::generate().to_public().to_string();
        let text = format!("# team\n{id}\n\n{SSH} bob@host\n");
        let mut file = RecipientsFile::parse(&text, Path::new("r.txt")).unwrap();
        assert_eq!(file.recipients().len(), 2);
        assert!(!file.add(SSH, Recipient::parse(SSH).unwrap()));
        assert!(file.remove(SSH));
        assert!(!file.remove(SSH));
        assert_eq!(file.to_text(), format!("# team\n{id}\n\n"));
        let bad = RecipientsFile::parse("# x\nnope\n", Path::new("r.txt"));
        assert!(matches!(
            bad,
            Err(VaultError::BadRecipientsFile { line: 2, .. })
        ));
    }

    #[test]
    fn an_argument_is_a_recipient_or_a_file_of_them() {
        let (one,) = (format!("{SSH} bob@host"),);
        let got = parse_arg(&format!("  {one} ")).unwrap();
        assert_eq!((got.len(), got[0].0.as_str()), (1, one.as_str()));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("keys.pub");
        let age = age::x25519::Identity::generate().to_public().to_string();
        std::fs::write(
            &file,
            format!(
                "# team

{age}
  {SSH} c  
"
            ),
        )
        .unwrap();
        let got = parse_arg(file.to_str().unwrap()).unwrap();
        let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, [age.as_str(), &format!("{SSH} c")]);
        assert_eq!(got[1].1.canonical(), SSH);
    }

    #[test]
    fn a_bad_argument_is_named_shortly_and_a_secret_never() {
        let what = |arg: &str| match parse_arg(arg) {
            Err(VaultError::BadRecipient { what, reason }) => (what, reason),
            other => panic!("{arg}: {:?}", other.map(|v| v.len())),
        };
        assert_eq!(what(""), ("''".to_string(), "it is empty".to_string()));
        assert_eq!(what("   ").1, "it is empty");
        assert_eq!(what("hello").0, "'hello'");
        let long = "x".repeat(30);
        assert_eq!(what(&long).0, format!("'{}…'", "x".repeat(24)));
        assert_eq!(what(&"y".repeat(24)).0, format!("'{}'", "y".repeat(24)));
        assert_eq!(what("a\tb").0, "'a\\tb'");
        assert_eq!(what("AGE-SECRET-KEY-1QQQ").0, "the argument");
        assert_eq!(
            what("-----BEGIN OPENSSH PRIVATE KEY-----").0,
            "the argument"
        );

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pub");
        std::fs::write(
            &empty,
            "# only a comment

",
        )
        .unwrap();
        assert_eq!(
            what(empty.to_str().unwrap()).1,
            "the file holds no recipient"
        );
        let junk = dir.path().join("junk.pub");
        std::fs::write(
            &junk,
            format!(
                "{SSH}
not a key
"
            ),
        )
        .unwrap();
        assert!(what(junk.to_str().unwrap()).0.starts_with("'/"));
    }
}
