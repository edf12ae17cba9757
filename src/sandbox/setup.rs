//! What a run sets up on the host before the sandbox starts: the loop's folders, the
//! files bound by descriptor (opened without following links), the grants checked, the
//! repositories made ready.

use super::{fspolicy, seccomp, spec};
use crate::error::{Error, Result};
use crate::loops::{self, LoopRecord};
use crate::report::Report;
use crate::workspace::Workspace;

/// Folders a run needs on the host (they may be missing in loops made by older versions).
pub(super) fn ensure_dirs(ws: &Workspace, id: &str) -> Result<()> {
    let mkdir = |dir: &std::path::Path| {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))
    };
    for dir in [
        ws.loop_home_upper(id),
        ws.loop_home_work(id),
        ws.loop_home_merged(id),
        ws.loop_claude_dir(id),
        ws.home_skel(),
    ] {
        mkdir(&dir)?;
    }
    // In folders the agent can write, a planted symlink must never make us create (or
    // bind) something elsewhere on the host: real folders only, one level at a time.
    let real = |dir: &std::path::Path| {
        crate::fsutil::ensure_real_dir(dir)
            .map_err(|e| Error::failure(format!("cannot create {}", dir.display())).with_source(e))
    };
    real(&ws.personal().join(".loopat"))?;
    // The mount point of the team's skills, made here because bwrap cannot make it in a
    // read-only `.claude` (review mode). Looked at without following a link: knowledge
    // holds what teammates pushed.
    let team_skills = crate::confined::Tree::open(&ws.knowledge())
        .ok()
        .flatten()
        .and_then(|t| t.kind(spec::TEAM_SKILLS).ok().flatten());
    if team_skills == Some(crate::confined::Kind::Dir) {
        real(&ws.loop_claude_dir(id).join("skills"))?;
    }
    Ok(())
}

/// The roots of one run's descriptors, each opened once ([`crate::confined::Tree::open`]):
/// a fresh loop's twenty descriptors below its own folder opened that folder, walking its
/// whole path, twenty times. Every descriptor below one root is then opened below the same
/// folder. Kept only while the descriptors are opened.
#[derive(Default)]
pub(super) struct Roots(Vec<(std::path::PathBuf, crate::confined::Tree)>);

impl Roots {
    fn open(
        &mut self,
        root: &std::path::Path,
    ) -> std::result::Result<Option<&crate::confined::Tree>, crate::confined::ConfinedError> {
        let at = match self.0.iter().position(|(r, _)| r == root) {
            Some(at) => at,
            None => match crate::confined::Tree::open(root)? {
                Some(tree) => {
                    self.0.push((root.to_path_buf(), tree));
                    self.0.len() - 1
                }
                None => return Ok(None),
            },
        };
        Ok(Some(&self.0[at].1))
    }
}

/// The descriptor of a `Confined` or `OwnFile` mount (writing an `OwnFile` first); `None`
/// for other mounts and for an optional one that is absent, or that is something it may
/// not be (a link, a FIFO: then why goes to `left_out`).
pub(super) fn confined_fd(
    m: &spec::Mount,
    loop_id: &str,
    left_out: &mut Vec<String>,
    roots: &mut Roots,
) -> Result<Option<std::os::fd::OwnedFd>> {
    let cannot =
        |root: &std::path::Path, rel: &std::path::Path, e: crate::confined::ConfinedError| {
            Error::from(super::SandboxError::Confined {
                path: root.join(rel),
                source: e,
            })
        };
    match m {
        spec::Mount::Confined {
            root,
            rel,
            optional,
            expect,
            ..
        } => {
            let fd = roots.open(root).and_then(|t| match t {
                Some(t) => t.path_fd(rel),
                None => Ok(None),
            });
            let fd = match fd {
                Err(e) if *optional => {
                    left_out.push(format!(
                        "{} is left out of the sandbox: {e}",
                        root.join(rel).display()
                    ));
                    None
                }
                other => other.map_err(|e| cannot(root, rel, e))?,
            };
            match fd {
                Some(fd) => {
                    if let Some(expect) = expect {
                        check_grant_source(&fd, expect, &root.join(rel))?;
                    }
                    Ok(Some(fd))
                }
                None if *optional => Ok(None),
                // A grant whose path is gone: the run goes on without it, and says how
                // to remove it (nothing else of the view depends on a grant).
                None if expect.is_some() => {
                    let path = root.join(rel);
                    left_out.push(format!(
                        "the grant {} is missing, so this run goes on without it; `git loop grant {loop_id} --revoke {}` removes it",
                        path.display(),
                        path.display()
                    ));
                    Ok(None)
                }
                None => Err(super::SandboxError::Missing(root.join(rel)).into()),
            }
        }
        spec::Mount::OwnFile {
            root, rel, content, ..
        } => {
            let tree = roots
                .open(root)
                .map_err(|e| cannot(root, rel, e))?
                .ok_or_else(|| Error::failure(format!("{} is missing", root.display())))?;
            if let Some(fd) = already_own(tree, rel, content.as_bytes()) {
                return Ok(Some(fd));
            }
            tree.write_atomic(rel, content.as_bytes(), 0o644)
                .and_then(|()| tree.path_fd(rel))
                .map_err(|e| cannot(root, rel, e))
        }
        _ => Ok(None),
    }
}

/// The file `rel` when it already is exactly what an `OwnFile` mount writes: a regular
/// file (never through a link), with one name (no other name a sandbox could write it
/// through), mode 0644 and `content`. It is bound as it is, by the descriptor that read
/// it; anything else is written anew. Rewriting it on every start cost a write, an fsync
/// and a rename per file, four files per loop.
pub(super) fn already_own(
    tree: &crate::confined::Tree,
    rel: &std::path::Path,
    content: &[u8],
) -> Option<std::os::fd::OwnedFd> {
    use std::io::Read;
    let file = tree.open_file(rel).ok()??;
    let stat = nix::sys::stat::fstat(&file).ok()?;
    if stat.st_nlink != 1
        || stat.st_mode & 0o7777 != 0o644
        || stat.st_size as usize != content.len()
    {
        return None;
    }
    let mut read = Vec::with_capacity(content.len());
    (&file)
        .take(content.len() as u64 + 1)
        .read_to_end(&mut read)
        .ok()?;
    (read == content).then(|| std::os::fd::OwnedFd::from(file))
}

/// A grant binds what was granted or nothing: a source that is now another folder or file
/// (moved, replaced, swapped for a decoy, deleted and made again) refuses the run.
pub(super) fn check_grant_source(
    fd: &std::os::fd::OwnedFd,
    expect: &loops::GrantSource,
    path: &std::path::Path,
) -> Result<()> {
    let now = loops::GrantSource::of_fd(std::os::fd::AsFd::as_fd(fd)).map_err(|e| {
        Error::failure(format!("cannot look at the grant {}", path.display())).with_source(e)
    })?;
    if !expect.same(&now) {
        return Err(super::SandboxError::GrantMoved(path.to_path_buf()).into());
    }
    Ok(())
}

/// Readies the loop's repositories for a run: each git folder a real folder with its
/// `hooks/` (empty: hooks an agent left there before they were read-only are removed,
/// and said so) and `info/`.
pub(super) fn prepare_repos(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
) -> Result<()> {
    use crate::confined::{Kind, Tree};
    let loop_dir = ws.loop_dir(&rec.id);
    let tree = Tree::open(&loop_dir)
        .map_err(|e| Error::failure(format!("cannot open {}", loop_dir.display())).with_source(e))?
        .ok_or_else(|| Error::failure(format!("{} is missing", loop_dir.display())))?;
    for pair in loops::repo_pairs(ws, rec) {
        let git = pair
            .clone
            .strip_prefix(&loop_dir)
            .expect("a loop's repositories are in its folder")
            .join(".git");
        let bad = |source: crate::confined::ConfinedError| {
            Error::from(super::SandboxError::LoopRepository {
                role: pair.role,
                id: rec.id.clone(),
                git_dir: pair.clone_git_dir(),
                source,
            })
        };
        match tree.kind(&git).map_err(bad)? {
            Some(Kind::Dir) => {}
            _ => {
                return Err(bad(crate::confined::ConfinedError::NotDir {
                    path: pair.clone_git_dir(),
                }))
            }
        }
        for folder in ["hooks", "info"] {
            tree.ensure_dir(git.join(folder)).map_err(bad)?;
        }
        let hooks = git.join("hooks");
        for name in tree.list(&hooks).map_err(bad)?.unwrap_or_default() {
            if name.as_encoded_bytes().ends_with(b".sample") {
                continue;
            }
            let path = hooks.join(&name);
            let removed = match tree.kind(&path).map_err(bad)? {
                Some(Kind::Dir) => crate::fsutil::remove_tree(&loop_dir.join(&path)).is_ok(),
                _ => tree.remove_file(&path).is_ok(),
            };
            if removed {
                report.warn(&format!(
                    "removed {} from loop {}: a loop's hooks are git-loop's, and none runs",
                    loop_dir.join(&path).display(),
                    rec.id
                ))?;
            }
        }
    }
    Ok(())
}

/// A descriptor bwrap reads `content` from (`--ro-bind-data`): a memfd named `name`,
/// never a file on disk.
pub(super) fn data_fd(name: &str, content: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::{Seek, Write};
    let mut f = std::fs::File::from(seccomp::memfd(name)?);
    f.write_all(content)?;
    f.seek(std::io::SeekFrom::Start(0))?;
    Ok(std::os::fd::OwnedFd::from(f))
}

/// Makes the folders the covers need and do not find (`Deny::Create`, `Deny::Pin`),
/// empty, in the working tree, one level at a time and following no link (DESIGN 4.0:
/// the tree is one a sandbox writes), so that each is bound by descriptor like every other
/// cover rather than left to bwrap to make through whatever stands there. What cannot be
/// made is said (and its cover is then left out by the spawner, which says so too).
pub(super) fn make_places(cover: &[fspolicy::Covered]) -> Vec<String> {
    use fspolicy::Deny;
    use std::path::PathBuf;
    let mut said = Vec::new();
    for c in cover {
        if !matches!(c.deny, Deny::Create | Deny::Pin) {
            continue;
        }
        let tree = match crate::confined::Tree::open(&c.root) {
            Ok(Some(tree)) => tree,
            Ok(None) => continue,
            Err(e) => {
                said.push(format!(
                    "cannot make {}: {e}",
                    c.root.join(&c.rel).display()
                ));
                continue;
            }
        };
        let mut at = PathBuf::new();
        for part in c.rel.components() {
            at.push(part);
            if let Err(e) = tree.ensure_dir(&at) {
                said.push(format!(
                    "cannot make {} ({}): {e}",
                    c.root.join(&c.rel).display(),
                    c.rule
                ));
                break;
            }
        }
    }
    said
}
