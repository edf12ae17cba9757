//! The secret guard (DESIGN.md sections 6 and 7): what a commit in a workspace repository
//! must never contain.
//!
//! - Under `.loopat/vaults/`, every file is an age file, apart from each vault's
//!   `recipients.txt` (public keys) and symlinks between entries. Anything else there is
//!   plaintext that was meant to be encrypted.
//! - Anywhere, nothing that looks like a private key (`-----BEGIN … PRIVATE KEY-----`,
//!   `AGE-SECRET-KEY-1…`) or a well-known token format (GitHub, AWS, Slack, Anthropic,
//!   OpenAI, GitLab, Google, Stripe, npm, Hugging Face).
//!
//! A match whose exact text is on the [`Allowlist`] is not a finding: the built-in
//! placeholders that documentation and tests use (AWS's `AKIAIOSFODNN7EXAMPLE`), and the
//! values the operator config lists under `guard.allow` for false positives. Only the
//! operator may add to it: a value in a file that an agent can write would let that agent
//! take a real secret out.
//!
//! [`check`] is pure and does the deciding; [`staged`] reads what is staged for a commit
//! (the pre-commit hook) through `git`, and never says more about a finding than its kind
//! and line: the report must not repeat the secret.

use std::path::Path;

use crate::git::cmd::{Git, GitError};
use crate::vault::crypto;

/// The folder whose files must be age files.
pub const VAULTS_PREFIX: &str = ".loopat/vaults/";

/// git's mode of a symlink blob.
pub const MODE_SYMLINK: u32 = 0o120000;
/// git's mode of a submodule (a commit, no content to scan).
pub const MODE_GITLINK: u32 = 0o160000;

/// One reason to refuse a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: String,
    /// 1-based line of the match, when the finding is in the content.
    pub line: Option<usize>,
    pub what: &'static str,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path, self.what),
            None => write!(f, "{}: {}", self.path, self.what),
        }
    }
}

/// A token format: a fixed prefix, then at least `min` (and, when set, at most `max`)
/// characters of its alphabet.
struct Token {
    what: &'static str,
    prefix: &'static [u8],
    alphabet: fn(u8) -> bool,
    min: usize,
    max: Option<usize>,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn upper_alnum(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn word_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}
fn alnum_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}
fn letters(b: u8) -> bool {
    b.is_ascii_alphabetic()
}

/// Longer prefixes first: `sk-ant-` must be named before `sk-` catches it.
const TOKENS: &[Token] = &[
    Token {
        what: "an age secret key",
        prefix: b"AGE-SECRET-KEY-1",
        alphabet: upper_alnum,
        min: 50,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"github_pat_",
        alphabet: word,
        min: 22,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"ghp_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"gho_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"ghu_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"ghs_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "a GitHub token",
        prefix: b"ghr_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "an AWS access key id",
        prefix: b"AKIA",
        alphabet: upper_alnum,
        min: 16,
        max: Some(16),
    },
    Token {
        what: "an AWS access key id",
        prefix: b"ASIA",
        alphabet: upper_alnum,
        min: 16,
        max: Some(16),
    },
    Token {
        what: "a Slack token",
        prefix: b"xoxb-",
        alphabet: alnum_dash,
        min: 10,
        max: None,
    },
    Token {
        what: "a Slack token",
        prefix: b"xoxa-",
        alphabet: alnum_dash,
        min: 10,
        max: None,
    },
    Token {
        what: "a Slack token",
        prefix: b"xoxp-",
        alphabet: alnum_dash,
        min: 10,
        max: None,
    },
    Token {
        what: "a Slack token",
        prefix: b"xoxr-",
        alphabet: alnum_dash,
        min: 10,
        max: None,
    },
    Token {
        what: "a Slack token",
        prefix: b"xoxs-",
        alphabet: alnum_dash,
        min: 10,
        max: None,
    },
    Token {
        what: "an Anthropic API key",
        prefix: b"sk-ant-",
        alphabet: word_dash,
        min: 20,
        max: None,
    },
    Token {
        what: "an OpenAI API key",
        prefix: b"sk-",
        alphabet: word_dash,
        min: 20,
        max: None,
    },
    Token {
        what: "a GitLab token",
        prefix: b"glpat-",
        alphabet: word_dash,
        min: 20,
        max: None,
    },
    Token {
        what: "a Google API key",
        prefix: b"AIza",
        alphabet: word_dash,
        min: 35,
        max: Some(35),
    },
    Token {
        what: "a Stripe secret key",
        prefix: b"sk_live_",
        alphabet: alnum,
        min: 20,
        max: None,
    },
    Token {
        what: "a Stripe secret key",
        prefix: b"rk_live_",
        alphabet: alnum,
        min: 20,
        max: None,
    },
    Token {
        what: "an npm token",
        prefix: b"npm_",
        alphabet: alnum,
        min: 36,
        max: None,
    },
    Token {
        what: "a Hugging Face token",
        prefix: b"hf_",
        alphabet: letters,
        min: 30,
        max: None,
    },
];

/// Placeholder values published in documentation, which look like secrets and are not.
const BUILTIN_ALLOWED: &[&str] = &["AKIAIOSFODNN7EXAMPLE"];

/// Exact texts that match a rule and are known not to be secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowlist {
    values: Vec<String>,
}

impl Default for Allowlist {
    fn default() -> Self {
        Allowlist::builtin()
    }
}

impl Allowlist {
    /// The built-in placeholders only.
    pub fn builtin() -> Self {
        Allowlist {
            values: BUILTIN_ALLOWED.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// The built-in placeholders and `extra` (the operator's `guard.allow`).
    pub fn with(extra: impl IntoIterator<Item = String>) -> Self {
        let mut list = Allowlist::builtin();
        list.values
            .extend(extra.into_iter().filter(|v| !v.is_empty()));
        list
    }

    fn allows(&self, matched: &[u8]) -> bool {
        self.values.iter().any(|v| v.as_bytes() == matched)
    }
}

/// Decides whether a staged file may be committed. `mode` is git's file mode.
pub fn check(path: &str, mode: u32, content: &[u8]) -> Vec<Finding> {
    check_allowing(path, mode, content, &Allowlist::builtin())
}

/// [`check`] with an allowlist of false positives.
pub fn check_allowing(path: &str, mode: u32, content: &[u8], allow: &Allowlist) -> Vec<Finding> {
    if mode == MODE_GITLINK {
        return Vec::new();
    }
    if let Some(rest) = path.strip_prefix(VAULTS_PREFIX) {
        if mode == MODE_SYMLINK {
            return Vec::new();
        }
        let is_recipients = matches!(rest.split_once('/'), Some((_, "recipients.txt")));
        if !is_recipients {
            if crypto::is_age_file(content) {
                // Ciphertext: a chance match in it means nothing.
                return Vec::new();
            }
            return vec![Finding {
                path: path.to_string(),
                line: None,
                what: "not an age file, but it is under .loopat/vaults/ (plaintext in a vault?)",
            }];
        }
    }
    scan_allowing(path, content, allow)
}

/// Decides whether a file staged in the vaults' repository (`vaults/<user>/`) may be
/// committed. Every path is judged, at the repository's top as in a vault's folder: the
/// repository holds files only (a link or a gitlink has no place there); below a vault's
/// folder every file is an age file but its `recipients.txt`; nothing anywhere may look
/// like a private key or a token (an identity planted at the top is refused as one).
pub fn check_vaults_repo(path: &str, mode: u32, content: &[u8], allow: &Allowlist) -> Vec<Finding> {
    if mode == MODE_SYMLINK || mode == MODE_GITLINK {
        return vec![Finding {
            path: path.to_string(),
            line: None,
            what:
                "a link or a nested repository, in the vaults' repository, which holds files only",
        }];
    }
    if path.contains('/') {
        let as_vault = format!("{VAULTS_PREFIX}{path}");
        return check_allowing(&as_vault, mode, content, allow)
            .into_iter()
            .map(|f| Finding {
                path: path.to_string(),
                ..f
            })
            .collect();
    }
    scan_allowing(path, content, allow)
}

/// Whether the repository at `dir` is a vaults' repository (git-loop marks its own with
/// `loop.role = vaults` in its local config).
pub fn is_vaults_repo(dir: &Path) -> bool {
    hook_git(dir)
        .args(["config", "--local", "--get", crate::vault::ROLE_KEY])
        .read()
        .is_ok_and(|v| v.trim() == crate::vault::ROLE_VAULTS)
}

/// Every private key or token in `content`, one finding per match.
pub fn scan(path: &str, content: &[u8]) -> Vec<Finding> {
    scan_allowing(path, content, &Allowlist::builtin())
}

/// [`scan`] with an allowlist of false positives.
pub fn scan_allowing(path: &str, content: &[u8], allow: &Allowlist) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < content.len() {
        let b = content[i];
        if b == b'\n' {
            line += 1;
            i += 1;
            continue;
        }
        let boundary = i == 0 || !word_dash(content[i - 1]);
        if boundary {
            if let Some((what, len)) = match_at(&content[i..]) {
                if allow.allows(&content[i..i + len]) {
                    i += len;
                    continue;
                }
                out.push(Finding {
                    path: path.to_string(),
                    line: Some(line),
                    what,
                });
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Where the tokens of a known format are in `content` (byte ranges; private keys are not
/// tokens here): the parts of a vault file that a binding stands in for
/// (`crate::egress::sentinel`).
pub fn token_spans(content: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < content.len() {
        let boundary = i == 0 || !word_dash(content[i - 1]);
        if boundary && private_key_header(&content[i..]).is_none() {
            if let Some((_, len)) = match_at(&content[i..]) {
                out.push(i..i + len);
                i += len;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The known token prefix `value` starts with (`sk-ant-`, `ghp_`, ...), if any.
pub fn token_prefix(value: &[u8]) -> Option<&'static [u8]> {
    TOKENS
        .iter()
        .find(|t| value.starts_with(t.prefix))
        .map(|t| t.prefix)
}

/// A secret starting at the first byte of `s`: what it is and how long.
fn match_at(s: &[u8]) -> Option<(&'static str, usize)> {
    if let Some(len) = private_key_header(s) {
        return Some(("a private key", len));
    }
    for t in TOKENS {
        if !s.starts_with(t.prefix) {
            continue;
        }
        let body = s[t.prefix.len()..]
            .iter()
            .take_while(|&&b| (t.alphabet)(b))
            .count();
        if body >= t.min && t.max.is_none_or(|max| body <= max) {
            return Some((t.what, t.prefix.len() + body));
        }
    }
    None
}

/// `-----BEGIN <LABEL> PRIVATE KEY-----` (also `… PRIVATE KEY BLOCK-----` of PGP), where
/// the label is upper-case words: RSA, EC, OPENSSH, ENCRYPTED, DSA, or none.
fn private_key_header(s: &[u8]) -> Option<usize> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    if !s.starts_with(BEGIN) {
        return None;
    }
    let rest = &s[BEGIN.len()..];
    let label_len = rest
        .iter()
        .take(64)
        .take_while(|&&b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
        .count();
    let label = &rest[..label_len];
    let tail = &rest[label_len..];
    let is_key = (label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK"))
        && tail.starts_with(b"-----");
    is_key.then_some(BEGIN.len() + label_len + 5)
}

/// One file staged for commit.
#[derive(Debug, Clone)]
pub struct Staged {
    pub path: String,
    pub mode: u32,
    pub blob: String,
}

/// The variables git sets for a hook that say which repository and which index the
/// commit is made from (`git commit -a` and `git commit PATH` use a temporary index).
const HOOK_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
];

/// A git command in `dir` that sees what the running hook sees. git's own hook
/// environment is passed on on purpose: without `GIT_INDEX_FILE` a partial commit would
/// be checked against the wrong index.
fn hook_git(dir: &Path) -> Git {
    let mut git = Git::in_dir(dir);
    for key in HOOK_ENV {
        if let Some(v) = std::env::var_os(key) {
            git = git.env(key, v);
        }
    }
    git
}

/// Files staged for the commit being made in `dir` (added, copied, modified, changed
/// type; not deleted). The repository is the user's own, so asking git is safe, and git
/// is the tool that knows which index a hook must read.
pub fn staged(dir: &Path) -> Result<Vec<Staged>, GitError> {
    let raw = hook_git(dir)
        .args([
            "diff",
            "--cached",
            "--raw",
            "--no-abbrev",
            "-z",
            "--no-renames",
            "--diff-filter=ACMT",
            "--no-ext-diff",
        ])
        .output()?
        .stdout;
    Ok(parse_raw(&raw))
}

/// Parses `git diff --raw -z --no-renames`: `:oldmode newmode oldsha newsha status\0path\0`.
pub fn parse_raw(raw: &[u8]) -> Vec<Staged> {
    let mut out = Vec::new();
    let mut fields = raw.split(|&b| b == 0);
    while let Some(meta) = fields.next() {
        if meta.is_empty() {
            continue;
        }
        let Some(path) = fields.next() else { break };
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        if parts.len() < 5 {
            continue;
        }
        let mode = u32::from_str_radix(parts[1], 8).unwrap_or(0);
        out.push(Staged {
            path: String::from_utf8_lossy(path).into_owned(),
            mode,
            blob: parts[3].to_string(),
        });
    }
    out
}

/// The content of a staged blob.
pub fn blob(dir: &Path, id: &str) -> Result<Vec<u8>, GitError> {
    Ok(hook_git(dir)
        .args(["cat-file", "blob", id])
        .output()?
        .stdout)
}

/// Checks everything staged in `dir` (by [`check_vaults_repo`] in a vaults' repository).
pub fn check_staged(dir: &Path, allow: &Allowlist) -> Result<Vec<Finding>, GitError> {
    let vaults = is_vaults_repo(dir);
    let mut findings = Vec::new();
    for file in staged(dir)? {
        if vaults {
            let content = if file.mode == MODE_GITLINK {
                Vec::new()
            } else {
                blob(dir, &file.blob)?
            };
            findings.extend(check_vaults_repo(&file.path, file.mode, &content, allow));
            continue;
        }
        if file.mode == MODE_GITLINK {
            continue;
        }
        let content = blob(dir, &file.blob)?;
        findings.extend(check_allowing(&file.path, file.mode, &content, allow));
    }
    Ok(findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: u32 = 0o100644;

    fn whats(path: &str, content: &str) -> Vec<&'static str> {
        check(path, FILE, content.as_bytes())
            .into_iter()
            .map(|f| f.what)
            .collect()
    }

    #[test]
    fn every_path_of_the_vaults_repository_is_judged() {
        let allow = Allowlist::builtin();
        let age = b"age-encryption.org/v1\n-> X25519 abc\n";
        let check = |path: &str, mode, content: &[u8]| {
            check_vaults_repo(path, mode, content, &allow)
                .into_iter()
                .map(|f| (f.path, f.what))
                .collect::<Vec<_>>()
        };
        assert!(check("work/envs/T.age", FILE, age).is_empty());
        assert!(check("work/recipients.txt", FILE, b"age1abc\n").is_empty());
        assert!(check(".gitattributes", FILE, b"*/envs/** diff=x\n").is_empty());
        let plain = check("work/envs/T.age", FILE, b"ghp_plaintext");
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].0, "work/envs/T.age", "named as in the repository");
        let key = format!("# key\nAGE-SECRET-KEY-1{}\n", "Q".repeat(58));
        assert_eq!(check("identity.txt", FILE, key.as_bytes()).len(), 1);
        assert_eq!(
            check(
                "id_ed25519",
                FILE,
                b"-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----\n"
            )
            .len(),
            1
        );
        assert_eq!(
            check("work/envs/T.age", MODE_SYMLINK, b"/home/u/.ssh/id").len(),
            1
        );
        assert_eq!(check("link", MODE_SYMLINK, b"/home/u/.ssh").len(), 1);
        assert_eq!(check("work", MODE_GITLINK, b"").len(), 1);
    }

    #[test]
    fn a_finding_names_its_path_line_and_kind_only() {
        let f = |line| Finding {
            path: "a/b.txt".into(),
            line,
            what: "a GitHub token",
        };
        assert_eq!(f(Some(3)).to_string(), "a/b.txt:3: a GitHub token");
        assert_eq!(f(None).to_string(), "a/b.txt: a GitHub token");
    }

    #[test]
    fn each_token_body_is_its_alphabet_only() {
        // (prefix, a character of its alphabet, one outside it, how many make a token)
        let cases: &[(&str, char, char, usize)] = &[
            ("ghp_", 'a', '_', 36),
            ("npm_", '7', '-', 36),
            ("sk_live_", 'Z', '-', 20),
            ("github_pat_", '_', '-', 22),
            ("xoxb-", '-', '_', 10),
            ("xoxp-", 'q', '_', 10),
            ("hf_", 'x', '1', 30),
            ("AKIA", 'Q', 'q', 16),
            ("AGE-SECRET-KEY-1", '9', 'a', 50),
            ("glpat-", '-', '.', 20),
        ];
        for &(prefix, inside, outside, n) in cases {
            let token = format!("{prefix}{}", inside.to_string().repeat(n));
            let spans = token_spans(format!("x {token} y").as_bytes());
            assert_eq!(spans, vec![2..2 + token.len()], "{token}");
            assert_eq!(scan("f", token.as_bytes()).len(), 1, "{token}");
            // One character outside the alphabet ends the body before it is long enough.
            let cut = format!(
                "{prefix}{}{outside}{}",
                inside.to_string().repeat(n / 2),
                inside.to_string().repeat(n)
            );
            assert!(scan("f", cut.as_bytes()).is_empty(), "{cut}");
            assert!(token_spans(cut.as_bytes()).is_empty(), "{cut}");
        }
    }

    #[test]
    fn plaintext_under_vaults_is_refused_age_files_pass() {
        assert_eq!(
            whats(".loopat/vaults/default/envs/TOKEN.age", "hunter2"),
            ["not an age file, but it is under .loopat/vaults/ (plaintext in a vault?)"]
        );
        assert!(whats(
            ".loopat/vaults/default/envs/TOKEN.age",
            "age-encryption.org/v1\n-> X25519 abc\n"
        )
        .is_empty());
        assert!(whats(
            ".loopat/vaults/default/mounts/home/.netrc.age",
            "-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n-----END AGE ENCRYPTED FILE-----\n"
        )
        .is_empty());
        assert!(whats(".loopat/vaults/default/recipients.txt", "age1xyz\n").is_empty());
        // A secret key pasted into recipients.txt is still caught.
        let key = format!("AGE-SECRET-KEY-1{}", "Q".repeat(58));
        assert_eq!(
            whats(".loopat/vaults/default/recipients.txt", &key),
            ["an age secret key"]
        );
        assert!(check(".loopat/vaults/default/envs/A.age", MODE_SYMLINK, b"B.age").is_empty());
        // recipients.txt only at a vault's top.
        assert_eq!(
            whats(".loopat/vaults/default/mounts/home/recipients.txt", "x").len(),
            1
        );
    }

    #[test]
    fn private_keys_anywhere() {
        for header in [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----BEGIN PRIVATE KEY-----",
            "-----BEGIN EC PRIVATE KEY-----",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----",
        ] {
            let text = format!("notes\n\n{header}\nMIIE...\n");
            let found = check("memory/keys.md", FILE, text.as_bytes());
            assert_eq!(found.len(), 1, "{header}");
            assert_eq!(found[0].line, Some(3));
            assert_eq!(found[0].what, "a private key");
        }
        assert!(whats("a", "-----BEGIN PUBLIC KEY-----").is_empty());
        assert!(whats("a", "-----BEGIN CERTIFICATE-----").is_empty());
        // Prose about the format is not a key.
        assert!(whats(
            "a",
            "a line like -----BEGIN ... PRIVATE KEY----- is refused"
        )
        .is_empty());
    }

    #[test]
    fn token_formats() {
        let cases = [
            (format!("ghp_{}", "a".repeat(36)), "a GitHub token"),
            (format!("github_pat_{}", "A1_".repeat(20)), "a GitHub token"),
            ("AKIAQ3EGTNCS7LB4XY2Z".to_string(), "an AWS access key id"),
            ("xoxb-1234567890-abcdef".to_string(), "a Slack token"),
            (
                format!("sk-ant-api03-{}", "x".repeat(40)),
                "an Anthropic API key",
            ),
            (format!("sk-proj-{}", "Y".repeat(40)), "an OpenAI API key"),
            (format!("glpat-{}", "z".repeat(20)), "a GitLab token"),
            (format!("AIza{}", "b".repeat(35)), "a Google API key"),
            (format!("hf_{}", "c".repeat(34)), "a Hugging Face token"),
        ];
        for (token, what) in &cases {
            let text = format!("export TOKEN={token}\n");
            assert_eq!(whats("notes.md", &text), [*what], "{token}");
        }
    }

    #[test]
    fn the_allowlist_names_exact_values() {
        // AWS's documentation placeholder is built in; a real-looking one is not.
        assert!(whats("docs.md", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE").is_empty());
        let other = "AKIAQ3EGTNCS7LB4XY2Z";
        assert_eq!(whats("notes.md", other), ["an AWS access key id"]);
        let allow = Allowlist::with([other.to_string()]);
        assert!(check_allowing("notes.md", FILE, other.as_bytes(), &allow).is_empty());
        // Only the exact value: a longer token that contains it is still a finding.
        let token = format!("ghp_{}", "a".repeat(36));
        let allow = Allowlist::with([format!("ghp_{}", "a".repeat(30))]);
        assert_eq!(check_allowing("f", FILE, token.as_bytes(), &allow).len(), 1);
        // The allowlist does not reach into a vault: plaintext there is refused anyway.
        let allow = Allowlist::with(["hunter2".to_string()]);
        assert_eq!(
            check_allowing(".loopat/vaults/v/envs/X.age", FILE, b"hunter2", &allow).len(),
            1
        );
    }

    #[test]
    fn ordinary_text_passes() {
        for text in [
            "a task-list and a disk-space report",
            "ghp_short",
            "AKIA is a prefix; AKIAshort",
            "AKIAIOSFODNN7EXAMPLEXX is too long for an AWS key id",
            "sk-ant-short",
            "mask-the-very-long-component-names-here-ok",
            "AGE-SECRET-KEY-1 is how an age secret key starts",
        ] {
            assert!(whats("notes.md", text).is_empty(), "{text}");
        }
    }

    #[test]
    fn binary_content_is_scanned_by_bytes() {
        let mut content = vec![0u8, 159, 146, 150, b'\n'];
        content.extend_from_slice(format!("ghp_{}", "a".repeat(36)).as_bytes());
        let found = check("bin", FILE, &content);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].line, Some(2));
    }

    #[test]
    fn findings_do_not_repeat_the_secret() {
        let token = format!("ghp_{}", "s".repeat(36));
        let found = check("f", FILE, token.as_bytes());
        assert!(!found[0].to_string().contains(&token));
    }

    #[test]
    fn parses_raw_diff_output() {
        let raw = b":000000 100644 0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 A\0a b.txt\0:100644 120000 2222222222222222222222222222222222222222 3333333333333333333333333333333333333333 T\0.loopat/vaults/v/envs/X.age\0";
        let staged = parse_raw(raw);
        assert_eq!(staged.len(), 2);
        assert_eq!(staged[0].path, "a b.txt");
        assert_eq!(staged[0].mode, 0o100644);
        assert_eq!(staged[0].blob, "1".repeat(40));
        assert_eq!(staged[1].mode, MODE_SYMLINK);
    }

    #[test]
    fn a_raw_line_with_fewer_fields_is_skipped() {
        let raw = b":100644 100644 1111 A\0short.txt\0:000000 100644 0000000000000000000000000000000000000000 1111111111111111111111111111111111111111 A\0ok.txt\0";
        let staged = parse_raw(raw);
        assert_eq!(staged.len(), 1);
        assert_eq!(staged[0].path, "ok.txt");
    }

    #[test]
    fn token_spans_are_each_token_at_a_word_boundary_and_never_a_private_key() {
        let ghp = format!("ghp_{}", "a".repeat(36));
        let slack = format!("xoxb-{}", "1".repeat(12));
        let text = format!("{ghp} and {slack}\nx{ghp}\n-----BEGIN RSA PRIVATE KEY-----\n");
        let start = ghp.len() + 5;
        assert_eq!(
            token_spans(text.as_bytes()),
            vec![0..ghp.len(), start..start + slack.len()]
        );
        assert!(token_spans(b"").is_empty());
        assert!(token_spans(b"-----BEGIN OPENSSH PRIVATE KEY-----").is_empty());
        // Found by scan, but not a span a binding stands in for.
        assert_eq!(scan("k", b"-----BEGIN OPENSSH PRIVATE KEY-----").len(), 1);
    }

    #[test]
    fn the_known_prefix_of_a_value_is_its_longest_format() {
        assert_eq!(token_prefix(b"sk-ant-api03-xyz"), Some(&b"sk-ant-"[..]));
        assert_eq!(token_prefix(b"sk-proj-xyz"), Some(&b"sk-"[..]));
        assert_eq!(token_prefix(b"ghp_abc"), Some(&b"ghp_"[..]));
        assert_eq!(token_prefix(b"hello"), None);
        assert_eq!(token_prefix(b""), None);
    }

    #[test]
    fn what_is_staged_is_read_from_the_index_and_checked_but_a_gitlink() {
        use crate::testutil::git;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"]);
        let token = format!("ghp_{}", "b".repeat(36));
        std::fs::write(dir.join("leak.txt"), format!("one\n{token}\n")).unwrap();
        std::fs::write(dir.join("fine.txt"), "nothing here\n").unwrap();
        git(dir, &["add", "leak.txt", "fine.txt"]);
        let sub = "1234567890123456789012345678901234567890";
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{sub},sub"),
            ],
        );

        let staged = staged(dir).unwrap();
        let mut paths: Vec<(&str, u32)> =
            staged.iter().map(|s| (s.path.as_str(), s.mode)).collect();
        paths.sort();
        assert_eq!(
            paths,
            [
                ("fine.txt", FILE),
                ("leak.txt", FILE),
                ("sub", MODE_GITLINK)
            ]
        );
        let leak = staged.iter().find(|s| s.path == "leak.txt").unwrap();
        assert_eq!(
            blob(dir, &leak.blob).unwrap(),
            format!("one\n{token}\n").as_bytes()
        );

        let found = check_staged(dir, &Allowlist::builtin()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].to_string(), "leak.txt:2: a GitHub token");
        assert!(check_staged(dir, &Allowlist::with([token]))
            .unwrap()
            .is_empty());
    }
}
