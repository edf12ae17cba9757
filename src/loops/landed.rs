//! A loop whose code reached its base branch by content rather than by its commits: a
//! squash merge or a rebase merge done on a forge (or by hand), after which the loop's own
//! commits are not in the base branch although everything they change is.
//!
//! Two ways to tell, both read in the origin (the user's repository, where git loop runs
//! git already to merge) and bounded to the commits the base branch gained since the
//! loop's branch left it (at most [`MAX_BEHIND`]):
//!
//! - by tree: merging the loop's branch into the base branch changes nothing (`git
//!   merge-tree` gives the base's own tree). A squash merge, and a rebase merge, even with
//!   other work landed after it;
//! - by patch: every commit of the loop has a commit of the same patch id in the base
//!   (`git cherry`). A rebase merge whose lines later changed again.
//!
//! Both cost a git process, and most loops that are behind their base are simply not
//! merged: first, in-process, the files the loop changed since its start are compared
//! with the base's. When the base still has one of them as it was at the loop's start,
//! the base lacks that change, and neither way can find the loop landed: nothing is run.

use std::path::Path;

use gix::ObjectId;
use serde::Serialize;

use crate::git::cmd::Git;

/// The most commits of the base branch looked at.
pub const MAX_BEHIND: usize = 5000;

/// How a loop's code is in its base branch although its commits are not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Landed {
    /// Merging the branch into the base changes nothing.
    Tree,
    /// Each of its commits has its patch in the base.
    Patches,
}

/// Whether loop branch `tip`, started at `start`, `behind` commits behind `target`,
/// landed there by content.
pub fn landed(
    origin: &Path,
    repo: &gix::Repository,
    start: Option<ObjectId>,
    tip: ObjectId,
    target: ObjectId,
    behind: usize,
) -> Option<Landed> {
    if behind == 0 || behind > MAX_BEHIND {
        return None;
    }
    if start.is_some_and(|s| target_lacks_a_change(repo, s, tip, target).unwrap_or(false)) {
        return None;
    }
    if merges_to_itself(origin, tip, target) {
        return Some(Landed::Tree);
    }
    let out = Git::in_dir(origin)
        .arg("cherry")
        .arg(target.to_string())
        .arg(tip.to_string())
        .output()
        .ok()?;
    all_upstream(&String::from_utf8_lossy(&out.stdout)).then_some(Landed::Patches)
}

/// Does merging `tip` into `target` give `target`'s own tree?
fn merges_to_itself(origin: &Path, tip: ObjectId, target: ObjectId) -> bool {
    let Ok(out) = Git::in_dir(origin)
        .args(["merge-tree", "--write-tree", "--no-messages"])
        .arg(target.to_string())
        .arg(tip.to_string())
        .output_any()
    else {
        return false;
    };
    if !out.status.success() {
        return false;
    }
    let first = out.stdout.split(|&b| b == b'\n').next().unwrap_or_default();
    let Ok(merged) = ObjectId::from_hex(first.trim_ascii()) else {
        return false;
    };
    let Ok(repo) = crate::git::objects::open_trusted(origin) else {
        return false;
    };
    crate::git::objects::commit_tree(&repo, target).is_ok_and(|tree| tree == merged)
}

/// The most changed paths compared in-process.
const MAX_CHANGED: usize = 10_000;

/// Does `target` still have, at some path the loop changed between `start` and `tip`,
/// what `start` had there? None when it cannot be told (too many changes, an object
/// missing).
fn target_lacks_a_change(
    repo: &gix::Repository,
    start: ObjectId,
    tip: ObjectId,
    target: ObjectId,
) -> Option<bool> {
    use crate::git::objects;
    let tree = |c| objects::commit_tree(repo, c).ok();
    let (start_tree, tip_tree, target_tree) = (tree(start)?, tree(tip)?, tree(target)?);
    let mut changed = Vec::new();
    changed_paths(repo, Some(start_tree), Some(tip_tree), "", &mut changed)?;
    for path in changed {
        if entry(repo, target_tree, &path) == entry(repo, start_tree, &path) {
            return Some(true);
        }
    }
    Some(false)
}

/// The paths of the files (and links, gitlinks) whose entries differ between trees `a`
/// and `b` (None: no tree), recursing only into folders whose trees differ.
fn changed_paths(
    repo: &gix::Repository,
    a: Option<ObjectId>,
    b: Option<ObjectId>,
    prefix: &str,
    out: &mut Vec<String>,
) -> Option<()> {
    use crate::git::objects;
    const TREE: u32 = 0o040000;
    let items = |t: Option<ObjectId>| -> Option<Vec<objects::TreeItem>> {
        match t {
            Some(t) => objects::tree_items(repo, t).ok(),
            None => Some(Vec::new()),
        }
    };
    let (a, b) = (items(a)?, items(b)?);
    let mut names: Vec<&gix::bstr::BStr> =
        a.iter().chain(b.iter()).map(|i| i.name.as_ref()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let find = |list: &[objects::TreeItem]| {
            list.iter().find(|i| i.name == name).map(|i| (i.mode, i.id))
        };
        let (x, y) = (find(&a), find(&b));
        if x == y {
            continue;
        }
        let path = format!("{prefix}{name}");
        let sub = |e: Option<(u32, ObjectId)>| e.filter(|(m, _)| *m == TREE).map(|(_, id)| id);
        let (tx, ty) = (sub(x), sub(y));
        if tx.is_some() || ty.is_some() {
            changed_paths(repo, tx, ty, &format!("{path}/"), out)?;
        }
        // A file on either side (or a file that became a folder) changed too.
        if x.is_some_and(|(m, _)| m != TREE) || y.is_some_and(|(m, _)| m != TREE) {
            out.push(path);
        }
        if out.len() > MAX_CHANGED {
            return None;
        }
    }
    Some(())
}

/// The entry (mode and object) at `path` of `tree`, if any.
fn entry(repo: &gix::Repository, tree: ObjectId, path: &str) -> Option<(u32, ObjectId)> {
    let tree = repo.find_tree(tree).ok()?;
    let e = tree.lookup_entry_by_path(path).ok()??;
    Some((u32::from(e.mode().kind() as u16), e.object_id()))
}

/// `git cherry` output where every commit of the branch has its patch upstream (`- `),
/// and there is at least one.
pub fn all_upstream(cherry: &str) -> bool {
    let lines: Vec<&str> = cherry.lines().filter(|l| !l.trim().is_empty()).collect();
    !lines.is_empty() && lines.iter().all(|l| l.starts_with("- "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{git, init_repo};

    #[test]
    fn every_commit_must_be_upstream() {
        assert!(all_upstream("- abc\n- def\n"));
        assert!(!all_upstream("- abc\n+ def\n"));
        assert!(!all_upstream(""));
        assert!(!all_upstream("+ abc\n"));
    }

    fn id(dir: &Path, rev: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", rev]).as_bytes()).unwrap()
    }

    /// [`landed`] of branch `branch`, started at the first commit, against main.
    fn landed_in(d: &Path, branch: &str, behind: usize) -> Option<Landed> {
        let repo = crate::git::objects::open_trusted(d).unwrap();
        let first = git(d, &["rev-list", "--max-parents=0", "main"]);
        let start = ObjectId::from_hex(first.as_bytes()).unwrap();
        landed(d, &repo, Some(start), id(d, branch), id(d, "main"), behind)
    }

    #[test]
    fn the_paths_a_loop_changed_are_found_in_folders_too() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        init_repo(d);
        std::fs::create_dir_all(d.join("src/deep")).unwrap();
        for f in ["src/a.rs", "src/deep/b.rs", "top.txt"] {
            std::fs::write(d.join(f), f).unwrap();
        }
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "first"]);
        std::fs::write(d.join("src/deep/b.rs"), "changed").unwrap();
        std::fs::remove_file(d.join("top.txt")).unwrap();
        std::fs::create_dir_all(d.join("new")).unwrap();
        std::fs::write(d.join("new/c.rs"), "c").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "second"]);
        let repo = crate::git::objects::open_trusted(d).unwrap();
        let tree = |r: &str| crate::git::objects::commit_tree(&repo, id(d, r)).unwrap();
        let mut out = Vec::new();
        changed_paths(
            &repo,
            Some(tree("main~1")),
            Some(tree("main")),
            "",
            &mut out,
        )
        .unwrap();
        out.sort();
        assert_eq!(out, ["new/c.rs", "src/deep/b.rs", "top.txt"]);
        assert_eq!(entry(&repo, tree("main"), "top.txt"), None);
        assert!(entry(&repo, tree("main~1"), "top.txt").is_some());
        // Nothing changed: nothing found.
        let mut none = Vec::new();
        changed_paths(&repo, Some(tree("main")), Some(tree("main")), "", &mut none).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn the_base_lacking_one_change_is_seen_without_git() {
        let tmp = repo();
        let d = tmp.path();
        let repo = crate::git::objects::open_trusted(d).unwrap();
        let start = id(d, "main");
        std::fs::write(d.join("c.txt"), "c\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "other work"]);
        assert_eq!(
            target_lacks_a_change(&repo, start, id(d, "loop"), id(d, "main")),
            Some(true)
        );
        git(d, &["merge", "-q", "--squash", "loop"]);
        git(d, &["commit", "-qm", "squashed"]);
        let repo = crate::git::objects::open_trusted(d).unwrap();
        assert_eq!(
            target_lacks_a_change(&repo, start, id(d, "loop"), id(d, "main")),
            Some(false)
        );
    }

    /// main and a branch `loop` of two commits, as a repository a loop came from.
    fn repo() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        init_repo(d);
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "first"]);
        git(d, &["checkout", "-qb", "loop"]);
        std::fs::write(d.join("b.txt"), "b\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "add b"]);
        std::fs::write(d.join("a.txt"), "a2\n").unwrap();
        git(d, &["commit", "-qam", "change a"]);
        git(d, &["checkout", "-q", "main"]);
        tmp
    }

    #[test]
    fn a_squash_merge_is_found_by_tree_and_a_rebase_merge_too() {
        let tmp = repo();
        let d = tmp.path();
        // Nothing landed yet: main moved with other work only.
        std::fs::write(d.join("c.txt"), "c\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "other work"]);
        assert_eq!(landed_in(d, "loop", 1), None);
        // Squashed, then more work on main.
        git(d, &["merge", "-q", "--squash", "loop"]);
        git(d, &["commit", "-qm", "squashed"]);
        std::fs::write(d.join("d.txt"), "d\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "later"]);
        assert_eq!(landed_in(d, "loop", 3), Some(Landed::Tree));
        // Bounded: too far behind is not looked at, and nothing behind is not landed.
        assert_eq!(landed_in(d, "loop", MAX_BEHIND + 1), None);
        assert_eq!(landed_in(d, "loop", 0), None);
    }

    #[test]
    fn a_rebase_merge_whose_lines_changed_again_is_found_by_patch() {
        let tmp = repo();
        let d = tmp.path();
        git(d, &["cherry-pick", "-x", "main..loop"]);
        // a.txt changed again on main: merging the loop now changes a.txt back (or
        // conflicts), but each of its commits is in main by patch.
        std::fs::write(d.join("a.txt"), "a3\n").unwrap();
        git(d, &["commit", "-qam", "a again"]);
        assert!(!merges_to_itself(d, id(d, "loop"), id(d, "main")));
        assert_eq!(landed_in(d, "loop", 3), Some(Landed::Patches));
        // One commit of two landed: not landed.
        let tmp = repo();
        let d = tmp.path();
        git(d, &["cherry-pick", "-x", "loop~1"]);
        assert_eq!(landed_in(d, "loop", 1), None);
    }
}
