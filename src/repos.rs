//! Registering the user's code repositories under `context/repos/<name>`.
//!
//! The link points at the repository's top-level folder (of the main worktree, when `new`
//! runs in a linked worktree), so a loop's relative paths `context/repos/<name>/.git/...`
//! reach its objects and refs both on the host and in the sandbox.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::workspace::Workspace;

/// A repository `new` was asked to work on.
#[derive(Debug)]
pub struct Found {
    /// Its top-level folder.
    pub top: PathBuf,
    pub repo: gix::Repository,
}

/// Is `path` in a git repository (any kind, bare ones too)?
pub fn is_inside_a_repository(path: &Path) -> bool {
    gix::discover(path).is_ok()
}

/// Finds the repository at or above `path`, refusing what a loop cannot start from.
pub fn discover(path: &Path) -> Result<Found> {
    let repo = gix::discover(path).map_err(|e| {
        Error::usage(format!("{} is not in a git repository", path.display()))
            .with_source(e)
            .hint("run `git loop new` inside a repository, name one with --repo PATH,")
            .hint("or make a loop without code with `git loop new --scratch TITLE`")
    })?;
    if repo.is_bare() {
        return Err(Error::usage(format!(
            "{} is a bare repository; a loop needs one with a working tree",
            repo.git_dir().display()
        ))
        .hint("clone it (`git clone BARE work`) and run `git loop new` in the clone"));
    }
    let common = repo.common_dir().to_path_buf();
    let top = if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf)
    } else {
        None
    };
    let Some(top) = top else {
        return Err(Error::usage(format!(
            "{} keeps its git folder outside its working tree ({})",
            repo.workdir().unwrap_or(path).display(),
            common.display()
        ))
        .hint("loops need the repository's `.git` folder inside its top-level folder"));
    };
    let top = fs::canonicalize(&top).unwrap_or(top);
    Ok(Found { top, repo })
}

/// Registers `top` and returns its name: an existing link to the same folder is reused;
/// otherwise the folder's name, made unique with `-2`, `-3`, ... Call under the workspace lock.
pub fn register(ws: &Workspace, top: &Path) -> Result<String> {
    let base = sanitize(
        &top.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    for n in 1.. {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let link = ws.repo_link(&name);
        match fs::read_link(&link) {
            Ok(target) => {
                let same =
                    fs::canonicalize(&link).map(|t| t == top).unwrap_or(false) || target == top;
                if same {
                    return Ok(name);
                }
            }
            Err(_) if link.symlink_metadata().is_ok() => continue,
            Err(_) => {
                std::os::unix::fs::symlink(top, &link).map_err(|e| {
                    Error::failure(format!(
                        "cannot register {} as {}",
                        top.display(),
                        link.display()
                    ))
                    .with_source(e)
                })?;
                return Ok(name);
            }
        }
    }
    unreachable!("the loop above returns")
}

/// A folder name made safe as a path component and a git URL part.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() {
        "repo".into()
    } else {
        s
    }
}

/// Is the registered repository still where its link points?
pub fn check_link(ws: &Workspace, name: &str) -> Result<PathBuf> {
    let link = ws.repo_link(name);
    let target = fs::read_link(&link).unwrap_or_default();
    if link.join(".git").is_dir() {
        return Ok(target);
    }
    Err(Error::failure(format!(
        "repository '{name}' is missing: {} points at {}, which is not a git repository any more",
        link.display(),
        target.display()
    ))
    .hint("move the repository back, or point the link at its new place:")
    .hint(format!("ln -sfn NEW-PATH {}", link.display())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sanitize() {
        assert_eq!(super::sanitize("my repo"), "my-repo");
        assert_eq!(super::sanitize(".hidden"), "hidden");
        assert_eq!(super::sanitize("ünï"), "-n-");
        assert_eq!(super::sanitize(""), "repo");
    }
}
