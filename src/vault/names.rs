//! Which names a vault accepts. Pure functions, checked before anything is written.
//!
//! - A vault name is a folder under `.loopat/vaults/` and the value of `--vault` and of
//!   `loop.toml`'s `vault`: letters, digits and `-`, the same rule `git loop new` applies.
//! - A variable name becomes an environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
//! - A file entry is a path below `$HOME` (`.config/gh/hosts.yml`): relative, with no
//!   empty, `.` or `..` component, no `.git` component (git refuses such paths) and no
//!   control character. A leading `.` is fine there, since most such files are dotfiles.
//!
//! No dependency beyond `std`: the vault fuzz target compiles this file by path.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// A name refused, with what it was meant to be and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    pub what: &'static str,
    /// The name as it may be shown (quoted, control characters escaped).
    pub shown: String,
    pub reason: &'static str,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} is not valid: {}",
            self.what, self.shown, self.reason
        )
    }
}

impl std::error::Error for NameError {}

/// Longest vault or variable name: a folder name, and far more than any real variable.
const MAX_NAME: usize = 64;
/// Longest `$HOME` path of a file entry, and of one of its components.
const MAX_REL: usize = 1024;
const MAX_COMPONENT: usize = 200;

/// Quotes a name for an error message, escaping control characters (a NUL, a newline) so
/// the message stays one line.
pub fn shown(name: &str) -> String {
    format!("'{}'", name.escape_debug())
}

fn bad(what: &'static str, name: &str, reason: &'static str) -> NameError {
    NameError {
        what,
        shown: shown(name),
        reason,
    }
}

/// Reasons shared by vault and variable names, in the order a person would want to hear
/// them.
fn common(what: &'static str, name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(bad(what, name, "it is empty"));
    }
    if name.contains('\0') {
        return Err(bad(what, name, "it contains a NUL byte"));
    }
    if name.contains('/') {
        return Err(bad(what, name, "it contains '/'"));
    }
    if name.contains("..") {
        return Err(bad(what, name, "it contains '..'"));
    }
    if name.starts_with('.') {
        return Err(bad(what, name, "it starts with '.'"));
    }
    if name.len() > MAX_NAME {
        return Err(bad(what, name, "it is longer than 64 characters"));
    }
    Ok(())
}

pub fn vault_name(name: &str) -> Result<(), NameError> {
    common("vault name", name)?;
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(bad(
            "vault name",
            name,
            "it may hold only letters, digits and '-'",
        ));
    }
    Ok(())
}

pub fn env_name(name: &str) -> Result<(), NameError> {
    common("variable name", name)?;
    let mut chars = name.chars();
    let first = chars.next().unwrap_or('0');
    if first.is_ascii_digit() {
        return Err(bad("variable name", name, "it starts with a digit"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad(
            "variable name",
            name,
            "it may hold only letters, digits and '_'",
        ));
    }
    Ok(())
}

/// A file entry's path below `$HOME`, normalised (no trailing `/`).
pub fn home_rel(rel: &str) -> Result<PathBuf, NameError> {
    const WHAT: &str = "file entry";
    if rel.is_empty() {
        return Err(bad(WHAT, rel, "it is empty"));
    }
    if rel.contains('\0') {
        return Err(bad(WHAT, rel, "it contains a NUL byte"));
    }
    if rel.starts_with('/') {
        return Err(bad(WHAT, rel, "it is absolute; give it relative to $HOME"));
    }
    if rel.len() > MAX_REL {
        return Err(bad(WHAT, rel, "it is longer than 1024 characters"));
    }
    // Split by hand: Path::components hides `a//b` and `a/./b`, which are refused too,
    // since they would name the same file as another spelling.
    for part in rel.split('/') {
        match part {
            "" => {
                return Err(bad(
                    WHAT,
                    rel,
                    "it has an empty component ('//' or a trailing '/')",
                ))
            }
            "." => return Err(bad(WHAT, rel, "it has a '.' component")),
            ".." => return Err(bad(WHAT, rel, "it contains '..'")),
            p if p.eq_ignore_ascii_case(".git") => {
                return Err(bad(WHAT, rel, "it has a '.git' component"))
            }
            p if p.len() > MAX_COMPONENT => {
                return Err(bad(WHAT, rel, "a component is longer than 200 characters"))
            }
            p if p.chars().any(char::is_control) => {
                return Err(bad(WHAT, rel, "it contains a control character"))
            }
            _ => {}
        }
    }
    let path = PathBuf::from(rel);
    debug_assert!(path.components().all(|c| matches!(c, Component::Normal(_))));
    Ok(path)
}

/// The `$HOME` path of an entry found on disk (`mounts/home/<rel>.age`), or why not.
pub fn home_rel_of(path: &Path) -> Result<PathBuf, NameError> {
    let text = path.to_str().ok_or_else(|| NameError {
        what: "file entry",
        shown: shown(&path.to_string_lossy()),
        reason: "it is not valid UTF-8",
    })?;
    home_rel(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<impl std::fmt::Debug, NameError>) -> String {
        match r {
            Err(NameError { reason, .. }) => reason.to_string(),
            other => panic!("expected a bad name, got {other:?}"),
        }
    }

    #[test]
    fn vault_names() {
        for ok in ["default", "work", "a-b-2", "X"] {
            vault_name(ok).unwrap();
        }
        assert_eq!(reason(vault_name("")), "it is empty");
        assert_eq!(reason(vault_name("a/b")), "it contains '/'");
        assert_eq!(reason(vault_name("..")), "it contains '..'");
        assert_eq!(reason(vault_name("a..b")), "it contains '..'");
        assert_eq!(reason(vault_name("a\0b")), "it contains a NUL byte");
        assert_eq!(reason(vault_name(".hidden")), "it starts with '.'");
        assert_eq!(
            reason(vault_name("a_b")),
            "it may hold only letters, digits and '-'"
        );
        assert!(reason(vault_name(&"a".repeat(65))).contains("64"));
    }

    #[test]
    fn env_names() {
        for ok in ["GITHUB_TOKEN", "_x", "a1", "AWS_SECRET_ACCESS_KEY"] {
            env_name(ok).unwrap();
        }
        assert_eq!(reason(env_name("")), "it is empty");
        assert_eq!(reason(env_name("1A")), "it starts with a digit");
        assert_eq!(
            reason(env_name("A-B")),
            "it may hold only letters, digits and '_'"
        );
        assert_eq!(reason(env_name("A/B")), "it contains '/'");
        assert_eq!(reason(env_name("A\0")), "it contains a NUL byte");
        assert_eq!(reason(env_name(".A")), "it starts with '.'");
        assert_eq!(
            reason(env_name("A=B")),
            "it may hold only letters, digits and '_'"
        );
    }

    #[test]
    fn home_paths() {
        assert_eq!(
            home_rel(".config/gh/hosts.yml").unwrap(),
            PathBuf::from(".config/gh/hosts.yml")
        );
        home_rel(".netrc").unwrap();
        assert_eq!(reason(home_rel("")), "it is empty");
        assert_eq!(reason(home_rel("../x")), "it contains '..'");
        assert_eq!(reason(home_rel("a/../../x")), "it contains '..'");
        assert!(reason(home_rel("/etc/passwd")).contains("absolute"));
        assert!(reason(home_rel("a//b")).contains("empty component"));
        assert!(reason(home_rel("a/")).contains("empty component"));
        assert!(reason(home_rel("./a")).contains("'.'"));
        assert_eq!(reason(home_rel("a\0b")), "it contains a NUL byte");
        assert!(reason(home_rel("a\nb")).contains("control"));
        assert!(reason(home_rel(".git/config")).contains(".git"));
        assert!(reason(home_rel("x/.GIT/hooks")).contains(".git"));
        home_rel(".gitconfig").unwrap();
    }

    #[test]
    fn shown_names_stay_on_one_line() {
        assert_eq!(shown("a\nb\0"), "'a\\nb\\0'");
    }
}
