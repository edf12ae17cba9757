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

/// Whether loop branch `tip`, `behind` commits behind `target`, landed there by content.
pub fn landed(origin: &Path, tip: ObjectId, target: ObjectId, behind: usize) -> Option<Landed> {
    if behind == 0 || behind > MAX_BEHIND {
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

/// `git cherry` output where every commit of the branch has its patch upstream (`- `),
/// and there is at least one.
pub fn all_upstream(cherry: &str) -> bool {
    let lines: Vec<&str> = cherry.lines().filter(|l| !l.trim().is_empty()).collect();
    !lines.is_empty() && lines.iter().all(|l| l.starts_with("- "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_commit_must_be_upstream() {
        assert!(all_upstream("- abc\n- def\n"));
        assert!(!all_upstream("- abc\n+ def\n"));
        assert!(!all_upstream(""));
        assert!(!all_upstream("+ abc\n"));
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "T")
            .env("GIT_AUTHOR_EMAIL", "t@e")
            .env("GIT_COMMITTER_NAME", "T")
            .env("GIT_COMMITTER_EMAIL", "t@e")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn id(dir: &Path, rev: &str) -> ObjectId {
        ObjectId::from_hex(git(dir, &["rev-parse", rev]).as_bytes()).unwrap()
    }

    /// main and a branch `loop` of two commits, as a repository a loop came from.
    fn repo() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        git(d, &["init", "-q", "-b", "main"]);
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
        assert_eq!(landed(d, id(d, "loop"), id(d, "main"), 1), None);
        // Squashed, then more work on main.
        git(d, &["merge", "-q", "--squash", "loop"]);
        git(d, &["commit", "-qm", "squashed"]);
        std::fs::write(d.join("d.txt"), "d\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "later"]);
        assert_eq!(
            landed(d, id(d, "loop"), id(d, "main"), 3),
            Some(Landed::Tree)
        );
        // Bounded: too far behind is not looked at, and nothing behind is not landed.
        assert_eq!(
            landed(d, id(d, "loop"), id(d, "main"), MAX_BEHIND + 1),
            None
        );
        assert_eq!(landed(d, id(d, "loop"), id(d, "main"), 0), None);
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
        assert_eq!(
            landed(d, id(d, "loop"), id(d, "main"), 3),
            Some(Landed::Patches)
        );
        // One commit of two landed: not landed.
        let tmp = repo();
        let d = tmp.path();
        git(d, &["cherry-pick", "-x", "loop~1"]);
        assert_eq!(landed(d, id(d, "loop"), id(d, "main"), 1), None);
    }
}
