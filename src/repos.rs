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

/// Why a repository cannot be a loop's origin, or cannot be found.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("{} is not in a git repository", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{} is a bare repository; a loop needs one with a working tree", .0.display())]
    Bare(PathBuf),
    #[error("{} keeps its git folder outside its working tree ({})", workdir.display(), common.display())]
    GitDirOutside { workdir: PathBuf, common: PathBuf },
    /// A registered repository's link (`link`) whose target moved away.
    #[error("repository '{name}' is missing: {} points at {}, which is not a git repository any more", link.display(), target.display())]
    Missing {
        name: String,
        link: PathBuf,
        target: PathBuf,
    },
}

/// Finds the repository at or above `path`, refusing what a loop cannot start from.
pub fn discover(path: &Path) -> Result<Found> {
    let repo = gix::discover(path).map_err(|e| RepoError::NotARepository {
        path: path.to_path_buf(),
        source: Box::new(e),
    })?;
    if repo.is_bare() {
        return Err(RepoError::Bare(repo.git_dir().to_path_buf()).into());
    }
    let common = repo.common_dir().to_path_buf();
    let top = if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf)
    } else {
        None
    };
    let Some(top) = top else {
        return Err(RepoError::GitDirOutside {
            workdir: repo.workdir().unwrap_or(path).to_path_buf(),
            common,
        }
        .into());
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
                    record_remote(ws, &name, top);
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
                record_remote(ws, &name, top);
                return Ok(name);
            }
        }
    }
    unreachable!("the loop above returns")
}

/// Where the remote URL of a registered repository is kept (`doctor --fix` finds the
/// repository by it after the workspace or the repository moved). A dot-file: not a name.
fn remote_record(ws: &Workspace, name: &str) -> PathBuf {
    ws.repos_dir().join(format!(".{name}.remote"))
}

/// The repository's `origin` URL, without credentials a URL can carry.
fn origin_url(top: &Path) -> Option<String> {
    let repo = gix::open(top).ok()?;
    let url = repo
        .config_snapshot()
        .string("remote.origin.url")?
        .to_string();
    Some(without_credentials(&url)).filter(|u| !u.is_empty())
}

/// `https://user:token@host/x` is `https://host/x`: a token never lands in the workspace.
fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if path.is_empty() && !rest.contains('/') {
                format!("{scheme}://{host}")
            } else {
                format!("{scheme}://{host}/{path}")
            }
        }
        None => url.to_string(),
    }
}

/// Notes the repository's remote URL next to its link (best effort: only a later relink
/// needs it, and one without it still matches by folder name).
fn record_remote(ws: &Workspace, name: &str, top: &Path) {
    if let Some(url) = origin_url(top) {
        let path = remote_record(ws, name);
        if fs::read_to_string(&path).ok().as_deref() != Some(url.as_str()) {
            let _ = crate::fsutil::write_atomic(&path, url.as_bytes());
        }
    }
}

/// The folders where people keep their repositories, searched by `doctor --fix` for one
/// that moved: the home folder and its usual children.
pub fn usual_places() -> Vec<PathBuf> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let mut out = vec![home.clone()];
    for child in [
        "src",
        "source",
        "code",
        "Code",
        "projects",
        "Projects",
        "work",
        "git",
        "repos",
        "dev",
        "workspace",
        "Documents",
    ] {
        out.push(home.join(child));
    }
    out
}

/// How a candidate for a moved repository matches what was registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Match {
    Name,
    Remote,
    Both,
}

/// Where the registered repository `name` is now, if it can be told: a repository with a
/// working tree in one of `places` (or one level below) that has the registered remote
/// URL, or the folder name the link pointed at and no other remote. `Err`: what was
/// looked for and why nothing (or too much) was found.
pub fn find_moved(ws: &Workspace, name: &str, places: &[PathBuf]) -> Result<PathBuf, String> {
    let link = ws.repo_link(name);
    let old = fs::read_link(&link).unwrap_or_default();
    let folder = old.file_name().map(|n| n.to_os_string());
    let remote = fs::read_to_string(remote_record(ws, name))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    let mut found: Vec<(Match, PathBuf)> = Vec::new();
    let mut consider = |dir: PathBuf| {
        if !dir.join(".git").is_dir() {
            return;
        }
        let url = origin_url(&dir);
        let same_name = folder.as_deref() == dir.file_name();
        let same_remote = remote.is_some() && url == remote;
        let m = match (same_name, same_remote) {
            (true, true) => Match::Both,
            (false, true) => Match::Remote,
            // A folder of the same name that has another remote is another project.
            (true, false) if remote.is_none() || url.is_none() => Match::Name,
            _ => return,
        };
        let dir = fs::canonicalize(&dir).unwrap_or(dir);
        if !found.iter().any(|(_, d)| *d == dir) {
            found.push((m, dir));
        }
    };
    for place in places {
        let Ok(entries) = fs::read_dir(place) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') || !path.is_dir() {
                continue;
            }
            consider(path.clone());
        }
    }
    let looked = format!(
        "looked for {} under {}",
        match (&folder, &remote) {
            (Some(f), Some(r)) => format!(
                "a repository named {} or with the remote {r}",
                f.to_string_lossy()
            ),
            (Some(f), None) => format!("a repository named {}", f.to_string_lossy()),
            (None, Some(r)) => format!("a repository with the remote {r}"),
            (None, None) => "the repository".to_string(),
        },
        places
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let Some(best) = found.iter().map(|(m, _)| *m).max() else {
        return Err(format!("{looked}: none found"));
    };
    let best: Vec<&PathBuf> = found
        .iter()
        .filter(|(m, _)| *m == best)
        .map(|(_, d)| d)
        .collect();
    match best.as_slice() {
        [one] => Ok((*one).clone()),
        many => Err(format!(
            "{looked}: {} match ({})",
            many.len(),
            many.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Points the link of `name` at `top`, replacing the old link in one rename.
pub fn relink(ws: &Workspace, name: &str, top: &Path) -> Result<()> {
    let link = ws.repo_link(name);
    let tmp = ws
        .repos_dir()
        .join(format!(".{name}.relink-{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    std::os::unix::fs::symlink(top, &tmp)
        .and_then(|()| fs::rename(&tmp, &link))
        .map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::failure(format!(
                "cannot point {} at {}",
                link.display(),
                top.display()
            ))
            .with_source(e)
        })?;
    record_remote(ws, name, top);
    Ok(())
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
    Err(RepoError::Missing {
        name: name.to_string(),
        link: link.to_path_buf(),
        target,
    }
    .into())
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

    #[test]
    fn credentials_never_recorded() {
        use super::without_credentials as w;
        assert_eq!(
            w("https://u:tok@example.com/a/b.git"),
            "https://example.com/a/b.git"
        );
        assert_eq!(w("https://example.com/a.git"), "https://example.com/a.git");
        assert_eq!(w("ssh://git@host:22/x"), "ssh://host:22/x");
        assert_eq!(w("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(w("/srv/git/r.git"), "/srv/git/r.git");
    }
}
