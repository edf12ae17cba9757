//! What killed commands leave in the vaults, removed by the next command that touches them
//! (`vault::prepare`) and by `doctor --fix`, each judged by its owner, never by its age:
//!
//! - a temporary file of an atomic write (`vault set` killed between writing and renaming:
//!   `envs/.NAME.age.tmp-<pid>-<hex>`), anywhere git-loop writes in the repository, and
//!   the staging folder of a killed migration: named by `tempname`, stale when the pid it
//!   names is gone;
//! - a half-pinned staging folder beside the pins (`pins::sweep`), judged the same way;
//! - a journal of the paths a `git loop vault` command wrote (`locks/vault-writes-<pid>-
//!   <hex>.pending`, written before each write): its writer gone, those paths (and only
//!   those) are committed, so a kill between a write and its commit loses nothing and
//!   leaves nothing uncommitted;
//! - git's lock files in the vaults' repository (`index.lock`, `HEAD.lock`,
//!   `AUTO_MERGE.lock`, ref locks) and git-loop's checkout scratch files there: every
//!   git-loop command that runs git there holds `locks/vaults.lock`, so when that lock is
//!   free (or held by the caller) no process can own them; a sync's interrupted checkout
//!   update is finished or undone first, from its journal.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::layout::{self, Class, Node, Top};
use super::{try_lock_repo, RepoLock};
use crate::confined::{Kind, Tree};
use crate::terminal::shown;
use crate::workspace::Workspace;

/// A temporary file or staging folder in the vaults whose writer is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub path: PathBuf,
    /// Below the vaults' repository.
    rel: PathBuf,
    pub pid: i32,
    pub dir: bool,
}

impl Leftover {
    pub fn describe(&self) -> String {
        format!(
            "{} (an unfinished write of a killed git-loop command, pid {})",
            shown(self.path.as_os_str().as_encoded_bytes()),
            self.pid
        )
    }
}

/// Every temporary file or staging folder in the vaults' repository whose writer is gone:
/// at its top, in each vault's folder and in every folder of entries (real folders only;
/// nothing is followed).
pub fn dead_writes(ws: &Workspace) -> Vec<Leftover> {
    let root = ws.vaults_dir();
    let Ok(Some(tree)) = Tree::open(&root) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let Ok(Some(top)) = tree.entries("") else {
        return out;
    };
    for (name, kind) in top {
        let node = node(kind);
        match layout::classify_top(&name, node, false) {
            Top::Temp => note(&root, Path::new(&name), node, &mut out),
            Top::Vault(_) => {
                let mut path = Vec::new();
                walk(&tree, &root, &name, &mut path, &mut out);
            }
            _ => {}
        }
    }
    out
}

fn walk(
    tree: &Tree,
    root: &Path,
    vault: &OsStr,
    path: &mut Vec<OsString>,
    out: &mut Vec<Leftover>,
) {
    let here: PathBuf = std::iter::once(vault)
        .chain(path.iter().map(OsString::as_os_str))
        .collect();
    let Ok(Some(children)) = tree.entries(&here) else {
        return;
    };
    for (name, kind) in children {
        path.push(name);
        let parts: Vec<&OsStr> = path.iter().map(OsString::as_os_str).collect();
        let rel = here.join(parts.last().expect("just pushed"));
        match layout::classify(&parts, node(kind)) {
            Class::Temp => note(root, &rel, Node::File, out),
            Class::Folder => walk(tree, root, vault, path, out),
            _ => {}
        }
        path.pop();
    }
}

fn note(root: &Path, rel: &Path, node: Node, out: &mut Vec<Leftover>) {
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    if let Some(pid) = crate::fsutil::dead_writer(&name) {
        out.push(Leftover {
            path: root.join(rel),
            rel: rel.to_path_buf(),
            pid,
            dir: node == Node::Dir,
        });
    }
}

fn node(kind: Kind) -> Node {
    match kind {
        Kind::Dir => Node::Dir,
        Kind::File => Node::File,
        Kind::Symlink => Node::Symlink,
        Kind::Other => Node::Other,
    }
}

/// Removes [`dead_writes`]; says what it removed.
pub fn remove_dead_writes(ws: &Workspace) -> Vec<String> {
    let root = ws.vaults_dir();
    let Ok(Some(tree)) = Tree::open(&root) else {
        return Vec::new();
    };
    dead_writes(ws)
        .into_iter()
        .filter(|l| {
            if l.dir {
                // A staging folder of a killed migration, at the repository's top (its
                // name was judged there): nothing in it was committed or is in use.
                crate::fsutil::remove_tree(&l.path).is_ok()
            } else {
                tree.remove_file(&l.rel).is_ok()
            }
        })
        .map(|l| format!("removed {}", l.describe()))
        .collect()
}

/// git's lock files and git-loop's checkout scratch files in the vaults' repository, for a
/// caller that holds the vaults' lock: no git-loop command is running git there. A checkout
/// update noted in its journal is finished or undone first (its marker is its own).
pub fn remove_stale_git_locks(ws: &Workspace, _held: &RepoLock) -> Vec<String> {
    let git_dir = ws.vaults_dir().join(".git");
    if !git_dir.is_dir() {
        return Vec::new();
    }
    let mut said = Vec::new();
    let journal = ws.checkout_journal(crate::sync::Role::Vaults.name());
    let recovered = crate::checkout::recover(&journal, &mut said);
    match recovered {
        Ok(Some(done)) => said.push(done.to_string()),
        Ok(None) => {}
        // Left for `doctor`, which names it; its marker keeps git off the checkout.
        Err(_) => return said,
    }
    for lock in crate::gitlocks::stale_in_vaults_repo(&git_dir) {
        if std::fs::remove_file(&lock).is_ok() {
            said.push(format!(
                "removed the stale {} (left by a killed command; no git-loop command holds {})",
                shown(lock.as_os_str().as_encoded_bytes()),
                ws.vaults_lock().display()
            ));
        }
    }
    said
}

/// [`remove_stale_git_locks`] for a caller that holds `held`, which must be the vaults'
/// lock (`sync` takes it as it takes each repository's); any other lock judges nothing.
pub fn remove_stale_git_locks_under(ws: &Workspace, held: &crate::fsutil::Lock) -> Vec<String> {
    if held.path() != ws.vaults_lock() {
        return Vec::new();
    }
    remove_stale_git_locks(ws, &RepoLock(None))
}

const JOURNAL_PREFIX: &str = "vault-writes-";
const JOURNAL_SUFFIX: &str = ".pending";

/// The journal a new `Vault` of this process notes its writes in (nothing is created yet).
pub(super) fn new_journal(ws: &Workspace) -> PathBuf {
    ws.locks_dir().join(format!(
        "{JOURNAL_PREFIX}{}-{:08x}{JOURNAL_SUFFIX}",
        std::process::id(),
        rand::random::<u32>()
    ))
}

/// The pid a journal's name gives, if it is one.
fn journal_writer(name: &str) -> Option<i32> {
    let rest = name
        .strip_prefix(JOURNAL_PREFIX)?
        .strip_suffix(JOURNAL_SUFFIX)?;
    let (pid, hex) = rest.split_once('-')?;
    let ok = hex.len() == 8 && hex.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| pid.parse::<i32>().ok())
        .flatten()
        .filter(|p| *p > 0)
}

/// Notes `paths` (below the vaults' repository) as written by this process.
pub(super) fn write_journal(journal: &Path, paths: &[PathBuf]) -> Result<(), super::VaultError> {
    let mut text = String::new();
    for p in paths {
        text.push_str(&p.to_string_lossy());
        text.push('\n');
    }
    if let Some(dir) = journal.parent() {
        std::fs::create_dir_all(dir).map_err(|e| super::VaultError::io("cannot create", dir, e))?;
    }
    crate::fsutil::write_atomic(journal, text.as_bytes()).map_err(|e| {
        super::VaultError::io("cannot write", journal, std::io::Error::other(e.one_line()))
    })
}

/// The journals of `git loop vault` commands that died before they committed, with the
/// paths each names.
pub fn dead_journals(ws: &Workspace) -> Vec<(PathBuf, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(ws.locks_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(journal_writer) else {
            continue;
        };
        if !crate::fsutil::writer_gone(pid) {
            continue;
        }
        let paths = crate::fsutil::read_regular(&entry.path(), 1 << 20)
            .ok()
            .flatten()
            .map(|bytes| {
                String::from_utf8_lossy(&bytes)
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from)
                    .filter(|p| {
                        p.components()
                            .all(|c| matches!(c, std::path::Component::Normal(_)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push((entry.path(), paths));
    }
    out.sort();
    out
}

/// Commits what killed `git loop vault` commands wrote and did not commit (exactly the
/// paths their journals name, checked by the guard as every vault commit is), then
/// removes the journals. Says what it did.
pub fn finish_journals(ws: &Workspace, held: &RepoLock) -> Vec<String> {
    let mut said = Vec::new();
    for (journal, paths) in dead_journals(ws) {
        let shown_paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        match super::commit_paths(
            ws,
            held,
            &paths,
            "vaults: what an interrupted git loop vault command wrote",
        ) {
            Ok(()) => {
                let _ = std::fs::remove_file(&journal);
                said.push(format!(
                    "committed what an interrupted `git loop vault` command wrote ({})",
                    shown(shown_paths.join(", ").as_bytes())
                ));
            }
            Err(e) => said.push(format!(
                "cannot commit what an interrupted `git loop vault` command wrote ({}): {}",
                shown(shown_paths.join(", ").as_bytes()),
                e.one_line()
            )),
        }
    }
    said
}

/// Everything above that can be judged now: dead writers' files always, git's lock files
/// when the vaults' lock is free. Says what it removed.
pub fn leftovers(ws: &Workspace) -> Vec<String> {
    let mut said = remove_dead_writes(ws);
    said.extend(super::pins::sweep(ws));
    said.extend(
        crate::fsutil::sweep_dead_temp_files(&ws.vault_pins_dir())
            .into_iter()
            .map(|p| {
                format!(
                    "removed {} (an unfinished write of a killed git-loop command)",
                    p.display()
                )
            }),
    );
    if let Ok(Some(held)) = try_lock_repo(ws) {
        said.extend(remove_stale_git_locks(ws, &held));
        said.extend(finish_journals(ws, &held));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_names_its_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        let mine = new_journal(&ws);
        let name = mine.file_name().unwrap().to_str().unwrap();
        assert_eq!(journal_writer(name), Some(std::process::id() as i32));
        assert_eq!(journal_writer("vault-writes-12-0badc0de.pending"), Some(12));
        assert_eq!(journal_writer("vault-writes-12-0badc0de"), None);
        assert_eq!(journal_writer("vault-writes-x-0badc0de.pending"), None);
        assert_eq!(journal_writer("checkout-notes.pending"), None);
        // Only a dead writer's journal is finished.
        write_journal(&mine, &[PathBuf::from("v/envs/A.age")]).unwrap();
        let dead = ws.locks_dir().join("vault-writes-4194305-0badc0de.pending");
        std::fs::write(&dead, "v/envs/B.age\n../escape\n/abs\n").unwrap();
        let found = dead_journals(&ws);
        assert_eq!(found, [(dead, vec![PathBuf::from("v/envs/B.age")])]);
    }
}
