//! What killed commands leave in the vaults, removed by the next command that touches them
//! (`vault::prepare`) and by `doctor --fix`, each judged by its owner, never by its age:
//!
//! - a temporary file of an atomic write (`vault set` killed between writing and renaming:
//!   `envs/.NAME.age.tmp-<pid>-<hex>`), anywhere git-loop writes in the repository, and
//!   the staging folder of a killed migration: named by `tempname`, stale when the pid it
//!   names is gone;
//! - a half-pinned staging folder beside the pins (`pins::sweep`), judged the same way;
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
    }
    said
}
