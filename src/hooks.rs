//! The git hooks `git loop` ships (`hooks/` in the source tree, built in): each is a thin
//! shell shim that calls `git-loop hook <name>`, installed between marker lines
//!
//! ```text
//! # >>> git-loop >>>
//! …
//! # <<< git-loop <<<
//! ```
//!
//! so that a hook the user already has keeps working: the block is inserted right after
//! the shebang (it runs first, before a user's `exit 0` could skip it), replaced in place
//! on an update, and removed alone on uninstall. The block does not `exec`, which would
//! end the script before the user's own lines. The marker handling is pure string
//! functions; [`install`] does the file work and finds the hooks folder the way git does
//! (`core.hooksPath`, worktrees).

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::git::cmd::Git;

pub const BEGIN: &str = "# >>> git-loop >>>";
pub const END: &str = "# <<< git-loop <<<";

/// A hook shipped in `hooks/`.
#[derive(Debug, Clone, Copy)]
pub struct Hook {
    pub name: &'static str,
    /// The whole shipped file: a shebang and the marker block.
    pub script: &'static str,
}

pub const PRE_COMMIT: Hook = Hook {
    name: "pre-commit",
    script: include_str!("../hooks/pre-commit"),
};

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    Created(PathBuf),
    /// The block was added to, or updated in, an existing hook.
    Updated(PathBuf),
    Unchanged(PathBuf),
}

impl Installed {
    pub fn path(&self) -> &Path {
        match self {
            Installed::Created(p) | Installed::Updated(p) | Installed::Unchanged(p) => p,
        }
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum MarkerError {
    #[error("it is a {0} script, not a shell script")]
    NotShell(String),
    #[error("it has a '{BEGIN}' line without its '{END}'")]
    Unterminated,
}

/// The marker block of a shipped hook script (markers included, newline-terminated).
pub fn block(script: &str) -> &str {
    let start = script.find(BEGIN).unwrap_or(0);
    let end = script
        .find(END)
        .map(|i| i + END.len())
        .unwrap_or(script.len());
    let end = if script[end..].starts_with('\n') {
        end + 1
    } else {
        end
    };
    &script[start..end]
}

/// The hook file with `block` in it: a new file is `#!/bin/sh` + block; an existing
/// one keeps every line outside the markers, and gets the block after its shebang (or
/// in place of the old block).
pub fn with_block(existing: Option<&str>, block: &str) -> Result<String, MarkerError> {
    let existing = existing.unwrap_or("");
    if existing.trim().is_empty() {
        return Ok(format!("#!/bin/sh\n{block}"));
    }
    let mut lines: Vec<&str> = existing.split_inclusive('\n').collect();
    if let Some(first) = lines.first() {
        if let Some(interpreter) = first.strip_prefix("#!") {
            let program = interpreter_name(interpreter);
            if !matches!(program.as_str(), "sh" | "bash" | "dash" | "zsh" | "ksh") {
                return Err(MarkerError::NotShell(program));
            }
        }
    }
    let begin = lines.iter().position(|l| l.trim_end() == BEGIN);
    match begin {
        Some(b) => {
            let end = lines[b..]
                .iter()
                .position(|l| l.trim_end() == END)
                .map(|i| b + i)
                .ok_or(MarkerError::Unterminated)?;
            lines.splice(b..=end, [block]);
        }
        None => {
            let at = usize::from(lines.first().is_some_and(|l| l.starts_with("#!")));
            if at == 1 && !lines[0].ends_with('\n') {
                // A shebang with no newline after it.
                let mut out = format!("{}\n{block}", lines[0]);
                out.extend(lines[1..].iter().copied());
                return Ok(out);
            }
            lines.insert(at, block);
        }
    }
    Ok(lines.concat())
}

/// The hook file without the block; None when nothing but a shebang would be left (the
/// file was ours alone).
pub fn without_block(existing: &str) -> Result<Option<String>, MarkerError> {
    let mut lines: Vec<&str> = existing.split_inclusive('\n').collect();
    let Some(b) = lines.iter().position(|l| l.trim_end() == BEGIN) else {
        return Ok(Some(existing.to_string()));
    };
    let end = lines[b..]
        .iter()
        .position(|l| l.trim_end() == END)
        .map(|i| b + i)
        .ok_or(MarkerError::Unterminated)?;
    lines.drain(b..=end);
    let rest = lines.concat();
    let meaningful = rest
        .lines()
        .enumerate()
        .any(|(i, l)| !(l.trim().is_empty() || (i == 0 && l.starts_with("#!"))));
    Ok(meaningful.then_some(rest))
}

/// `/usr/bin/env bash` → `bash`, `/bin/sh -e` → `sh`.
fn interpreter_name(interpreter: &str) -> String {
    let mut words = interpreter.split_whitespace();
    let first = words.next().unwrap_or("");
    let base = first.rsplit('/').next().unwrap_or(first);
    let program = if base == "env" {
        words.find(|w| !w.starts_with('-')).unwrap_or("")
    } else {
        base
    };
    program.to_string()
}

/// The folder git runs `repo`'s hooks from: `core.hooksPath` when set, else the hooks
/// folder of the repository's (common) git dir. `repo` is one the user trusts (their
/// personal or a context repository), so asking git is safe.
/// Why git loop's lines cannot be put into a repository's hook.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("cannot find the hooks folder of {}", .0.display())]
    NoHooksFolder(PathBuf, #[source] crate::git::cmd::GitError),
    #[error("the {hook} hook {} is a symlink, managed elsewhere", path.display())]
    Symlink { hook: &'static str, path: PathBuf },
    /// The hook's file holds git loop's markers in a way they cannot be updated.
    #[error("cannot add git loop's lines to {}", path.display())]
    Markers {
        hook: &'static str,
        path: PathBuf,
        #[source]
        source: MarkerError,
    },
}

pub fn hooks_dir(repo: &Path) -> Result<PathBuf> {
    let out = Git::in_dir(repo)
        .args(["rev-parse", "--git-path", "hooks"])
        .read()
        .map_err(|e| HookError::NoHooksFolder(repo.to_path_buf(), e))?;
    let path = PathBuf::from(out.trim_end_matches('\n'));
    Ok(if path.is_absolute() {
        path
    } else {
        repo.join(path)
    })
}

/// Installs (or updates) `hook` in `repo`, keeping the user's own hook lines.
pub fn install(repo: &Path, hook: Hook) -> Result<Installed> {
    let dir = hooks_dir(repo)?;
    let path = dir.join(hook.name);
    let existing = match fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(HookError::Symlink {
                hook: hook.name,
                path,
            }
            .into())
        }
        Ok(_) => {
            Some(fs::read_to_string(&path).context(|| format!("cannot read {}", path.display()))?)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Error::failure(format!("cannot read {}", path.display())).with_source(e))
        }
    };
    let text = with_block(existing.as_deref(), block(hook.script)).map_err(|source| {
        HookError::Markers {
            hook: hook.name,
            path: path.clone(),
            source,
        }
    })?;
    let result = match &existing {
        Some(old) if *old == text => return Ok(Installed::Unchanged(path)),
        Some(_) => Installed::Updated(path.clone()),
        None => Installed::Created(path.clone()),
    };
    fs::create_dir_all(&dir).context(|| format!("cannot create {}", dir.display()))?;
    let mode = fs::metadata(&path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o755)
        | 0o111;
    crate::fsutil::write_atomic(&path, text.as_bytes())?;
    fs::set_permissions(&path, fs::Permissions::from_mode(mode))
        .context(|| format!("cannot make {} executable", path.display()))?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str =
        "# >>> git-loop >>>\ngit-loop hook pre-commit \"$@\" || exit $?\n# <<< git-loop <<<\n";

    #[test]
    fn the_shipped_block_is_found() {
        let b = block(PRE_COMMIT.script);
        assert!(
            b.starts_with(BEGIN) && b.ends_with(&format!("{END}\n")),
            "{b}"
        );
        assert!(b.contains("git-loop hook pre-commit"));
        assert!(PRE_COMMIT.script.starts_with("#!/bin/sh\n"));
    }

    #[test]
    fn new_hook() {
        assert_eq!(
            with_block(None, BLOCK).unwrap(),
            format!("#!/bin/sh\n{BLOCK}")
        );
        assert_eq!(
            with_block(Some(""), BLOCK).unwrap(),
            format!("#!/bin/sh\n{BLOCK}")
        );
    }

    #[test]
    fn keeps_the_users_lines_and_runs_first() {
        let user = "#!/bin/bash\nset -e\nmake lint\nexit 0\n";
        let out = with_block(Some(user), BLOCK).unwrap();
        assert_eq!(
            out,
            format!("#!/bin/bash\n{BLOCK}set -e\nmake lint\nexit 0\n")
        );
        // Idempotent.
        assert_eq!(with_block(Some(&out), BLOCK).unwrap(), out);
        // An update replaces the block in place.
        let newer = BLOCK.replace("|| exit $?", "|| exit 1");
        let updated = with_block(Some(&out), &newer).unwrap();
        assert_eq!(
            updated,
            format!("#!/bin/bash\n{newer}set -e\nmake lint\nexit 0\n")
        );
        // Removal gives the user's file back.
        assert_eq!(without_block(&updated).unwrap().as_deref(), Some(user));
    }

    #[test]
    fn no_shebang_and_env_shebang() {
        assert_eq!(
            with_block(Some("echo hi\n"), BLOCK).unwrap(),
            format!("{BLOCK}echo hi\n")
        );
        let env = "#!/usr/bin/env bash\necho hi\n";
        assert!(with_block(Some(env), BLOCK).is_ok());
        assert_eq!(
            with_block(Some("#!/bin/sh"), BLOCK).unwrap(),
            format!("#!/bin/sh\n{BLOCK}")
        );
    }

    #[test]
    fn refuses_other_languages_and_broken_markers() {
        assert_eq!(
            with_block(Some("#!/usr/bin/env python3\nprint(1)\n"), BLOCK),
            Err(MarkerError::NotShell("python3".into()))
        );
        assert_eq!(
            with_block(Some("#!/bin/sh\n# >>> git-loop >>>\necho\n"), BLOCK),
            Err(MarkerError::Unterminated)
        );
    }

    #[test]
    fn removing_our_only_block_leaves_nothing() {
        let ours = with_block(None, BLOCK).unwrap();
        assert_eq!(without_block(&ours).unwrap(), None);
        assert_eq!(
            without_block("#!/bin/sh\necho hi\n").unwrap().as_deref(),
            Some("#!/bin/sh\necho hi\n")
        );
    }
}
