//! Reading git repositories and moving objects between them without running git.
//!
//! git-loop keeps two kinds of repositories apart:
//!
//! * **Trusted** ones — the user's own repository, the origin every loop is cloned from. They are
//!   opened with [`open_trusted`] and may be written: objects land in their object database and
//!   `refs/heads/<branch>` is moved with compare-and-swap transactions ([`update_branch`],
//!   [`delete_branch`]).
//! * **Untrusted** ones — a loop's repository, a *shared clone* whose `objects/info/alternates`
//!   names the origin's object directory. A sandboxed agent can write anything into it: its
//!   config, hooks, alternates, refs, loose objects whose content does not match their name,
//!   packs with lying indices, symlinks pointing anywhere on the host.
//!
//! The single rule that makes this safe is that **nothing here runs a program**. We never spawn
//! `git` in a loop repository (it would honour `core.fsmonitor`, `core.hooksPath`, filter drivers,
//! `core.pager`, `diff.external`, …), and gix is never pointed at one either: its repository
//! machinery opens files by path (a FIFO planted there would block the host), reads refs whole and
//! maps the index. A loop's repository is read by [`super::untrusted`] instead, through a confined
//! view of its folder that follows no link, waits on nothing and bounds every read, with objects
//! inflated only up to the operator's limit ([`Limits`]). The one operation that carries data
//! *out* of a loop, [`import_branch`], trusts nothing it reads:
//!
//! 1. the loop's alternates must still name exactly the origin's object directory, so a tampered
//!    repository can't make the host look at other repositories on disk;
//! 2. objects are read from the loop's *own* object store only (loose files and packs below
//!    `<loop>/objects`, never through alternates, never through symlinks), an object larger than
//!    [`Limits::max_object_size`] is refused by its header before it is inflated, and packs are
//!    held in memory only up to [`Limits::max_pack_size`];
//! 3. every object is re-hashed and must hash to its name, commits/trees/tags must decode and trees
//!    must pass the checks `git fsck` applies to names and modes, and each reference must point at
//!    an object of the kind the referrer claims;
//! 4. objects are written into the origin children-first, so the origin never holds an object whose
//!    descendants are missing — the walk relies on "if the origin has it, it has everything below
//!    it", and an interrupted import must not break that for the next one;
//! 5. only then is `refs/heads/<branch>` moved, with a compare-and-swap against the value seen at
//!    the start, and no other reference is touched.
//!
//! Objects over the limit are refused rather than streamed into the origin: what an import lets
//! in is then read whole by review and the gate on the way out, pushed to forges that refuse
//! files over 100 MiB, and a delta in a pack can only be resolved in memory anyway; one bound,
//! checked before anything is inflated, keeps every one of those paths within it.
//!
//! Here by job: `read.rs` (reads of trusted repositories), `refs.rs` (compare-and-swap of
//! their branches), `import.rs` (the steps above), `error.rs` (what goes wrong, said for the
//! user). A loop's repository itself is read only by [`super::untrusted`].

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gix::bstr::{BString, ByteSlice};
use gix::objs::{Exists as _, FindExt as _, FindHeader as _, Write as _};
use gix::ObjectId;

pub use super::untrusted::{
    gitlinks, index_gitlinks, index_gitlinks_kept, loop_branches, within, worktree_changes,
    worktree_status, Keeping, KeptGitlinks, Limits, Untracked, WorktreeStatus,
};
use super::untrusted::{LoopRepo, MAX_ALTERNATES_FILE_SIZE};
use crate::confined::ConfinedError;

mod error;
mod import;
mod read;
mod refs;

pub use error::*;
pub use import::*;
pub use read::*;
pub use refs::*;

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    const DATE: &str = "1700000000 +0000";

    fn git_command(dir: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_AUTHOR_DATE", DATE)
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_COMMITTER_DATE", DATE)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES");
        cmd
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = git_command(dir, args).output().expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?} in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("utf8")
            .trim_end()
            .to_owned()
    }

    fn oid(hex: &str) -> ObjectId {
        ObjectId::from_hex(hex.trim().as_bytes()).expect("valid hex")
    }

    fn write(path: &Path, content: &str) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, content).unwrap();
    }

    fn commit_all(dir: &Path, message: &str) -> ObjectId {
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", message]);
        oid(&git(dir, &["rev-parse", "HEAD"]))
    }

    /// An origin with two commits on main, plus a loop repository created the way git-loop does:
    /// `git init`, relative alternates to the origin's objects, `refs/heads/loop/x` at the base.
    struct Fixture {
        _tmp: tempfile::TempDir,
        origin: PathBuf,
        loop_dir: PathBuf,
        base: ObjectId,
        first: ObjectId,
    }

    impl Fixture {
        fn origin_git(&self) -> PathBuf {
            self.origin.join(".git")
        }
        fn loop_git(&self) -> PathBuf {
            self.loop_dir.join(".git")
        }
        fn origin_objects(&self) -> PathBuf {
            self.origin.join(".git/objects")
        }
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let origin = tmp.path().join("origin");
        fs::create_dir(&origin).unwrap();
        git(&origin, &["init", "-q", "-b", "main"]);
        write(&origin.join("README.md"), "hello\n");
        write(&origin.join("src/lib.rs"), "pub fn a() {}\n");
        let first = commit_all(&origin, "first");
        write(&origin.join("src/lib.rs"), "pub fn a() {}\npub fn b() {}\n");
        write(&origin.join("docs/guide.md"), "guide\n");
        let base = commit_all(&origin, "second");

        let loop_dir = tmp.path().join("loops").join("x");
        fs::create_dir_all(&loop_dir).unwrap();
        git(&loop_dir, &["init", "-q", "-b", "loop/x"]);
        // loops/x/.git/objects -> ../../../../origin/.git/objects
        write(
            &loop_dir.join(".git/objects/info/alternates"),
            "../../../../origin/.git/objects\n",
        );
        git(
            &loop_dir,
            &["update-ref", "refs/heads/loop/x", &base.to_string()],
        );
        git(&loop_dir, &["reset", "-q", "--hard"]);

        let origin_repo = open_trusted(&origin).unwrap();
        update_branch(
            &origin_repo,
            "loop/x",
            None,
            base,
            "git-loop: create loop x",
        )
        .unwrap();

        Fixture {
            _tmp: tmp,
            origin,
            loop_dir,
            base,
            first,
        }
    }

    fn all_refs(dir: &Path) -> String {
        git(dir, &["for-each-ref", "--format=%(refname) %(objectname)"])
    }

    fn loose_object_count(git_dir: &Path) -> usize {
        let mut count = 0;
        for entry in fs::read_dir(git_dir.join("objects")).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name();
            if name.len() == 2 && entry.file_type().unwrap().is_dir() {
                count += fs::read_dir(entry.path()).unwrap().count();
            }
        }
        count
    }

    fn assert_fsck_clean(dir: &Path) {
        let output = git_command(dir, &["fsck", "--strict", "--no-progress"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "fsck failed: {stderr}");
        assert!(!stderr.contains("error"), "fsck reported errors: {stderr}");
    }

    #[test]
    fn import_copies_exactly_the_missing_objects_and_moves_only_the_branch() {
        let fx = fixture();
        write(&fx.loop_dir.join("src/new.rs"), "pub fn new() {}\n");
        write(&fx.loop_dir.join("deep/a/b/c.txt"), "deep\n");
        let middle = commit_all(&fx.loop_dir, "loop work 1");
        write(&fx.loop_dir.join("src/lib.rs"), "changed\n");
        fs::remove_file(fx.loop_dir.join("docs/guide.md")).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("README.md", fx.loop_dir.join("link")).unwrap();
        let tip = commit_all(&fx.loop_dir, "loop work 2");

        let expected_new = git(
            &fx.loop_dir,
            &[
                "rev-list",
                "--objects",
                &tip.to_string(),
                "--not",
                &fx.base.to_string(),
            ],
        )
        .lines()
        .count();
        assert_eq!(
            loose_object_count(&fx.loop_git()),
            expected_new,
            "the loop holds exactly its new objects"
        );
        let refs_before = all_refs(&fx.origin);

        let outcome = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            outcome,
            ImportOutcome {
                old: Some(fx.base),
                new: Some(tip),
                objects_copied: expected_new
            }
        );

        let refs_after = all_refs(&fx.origin);
        let changed: Vec<_> = refs_after
            .lines()
            .filter(|line| !refs_before.lines().any(|b| b == *line))
            .collect();
        assert_eq!(changed, vec![format!("refs/heads/loop/x {tip}")]);
        assert_eq!(refs_before.lines().count(), refs_after.lines().count());
        assert_fsck_clean(&fx.origin);
        assert!(git(&fx.origin, &["cat-file", "-p", &tip.to_string()]).contains("loop work 2"));
        assert_eq!(
            git(&fx.origin, &["rev-parse", "loop/x~1"]),
            middle.to_string()
        );
        assert_eq!(git(&fx.origin, &["show", "loop/x:deep/a/b/c.txt"]), "deep");

        let again = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            again,
            ImportOutcome {
                old: Some(tip),
                new: Some(tip),
                objects_copied: 0
            }
        );

        // A missing loop branch changes nothing.
        let none = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/none",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            none,
            ImportOutcome {
                old: None,
                new: None,
                objects_copied: 0
            }
        );
        assert_eq!(all_refs(&fx.origin), refs_after);
    }

    #[test]
    fn import_reads_packed_objects_and_packed_refs() {
        let fx = fixture();
        write(&fx.loop_dir.join("packed.txt"), "in a pack\n");
        let tip = commit_all(&fx.loop_dir, "packed work");
        // -l: like git gc, pack only the loop's own objects, not the origin's.
        git(&fx.loop_dir, &["repack", "-a", "-d", "-l", "-q"]);
        git(&fx.loop_dir, &["prune-packed"]);
        git(&fx.loop_dir, &["pack-refs", "--all"]);
        assert_eq!(loose_object_count(&fx.loop_git()), 0);
        assert!(!fx.loop_git().join("refs/heads/loop/x").exists());

        let outcome = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(outcome.new, Some(tip));
        assert_eq!(outcome.objects_copied, 3, "commit, root tree, blob");
        assert_fsck_clean(&fx.origin);
        assert_eq!(git(&fx.origin, &["show", "loop/x:packed.txt"]), "in a pack");
    }

    #[test]
    fn corrupt_loose_object_is_refused_and_the_ref_stays() {
        let fx = fixture();
        write(&fx.loop_dir.join("secret.txt"), "real content\n");
        let tip = commit_all(&fx.loop_dir, "work");
        let blob = oid(&git(&fx.loop_dir, &["rev-parse", "HEAD:secret.txt"]));
        let other = {
            let mut cmd = git_command(&fx.loop_dir, &["hash-object", "-w", "--stdin"]);
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"other content\n")
                .unwrap();
            let out = child.wait_with_output().unwrap();
            oid(&String::from_utf8(out.stdout).unwrap())
        };
        let path_of = |id: &ObjectId| {
            let hex = id.to_string();
            fx.loop_git()
                .join("objects")
                .join(&hex[..2])
                .join(&hex[2..])
        };
        fs::remove_file(path_of(&blob)).unwrap();
        fs::copy(path_of(&other), path_of(&blob)).unwrap();

        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        match err {
            ImportError::HashMismatch {
                expected, actual, ..
            } => {
                assert_eq!(expected, blob);
                assert_eq!(actual, other);
            }
            other => panic!("expected HashMismatch, got {other:?}"),
        }
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );
        assert!(
            !git_command(&fx.origin, &["cat-file", "-e", &tip.to_string()])
                .status()
                .unwrap()
                .success()
        );
        assert!(
            !git_command(&fx.origin, &["cat-file", "-e", &blob.to_string()])
                .status()
                .unwrap()
                .success()
        );
        assert_fsck_clean(&fx.origin);
    }

    #[test]
    fn garbage_and_symlinked_loose_objects_are_refused() {
        let fx = fixture();
        write(&fx.loop_dir.join("a.txt"), "aaa\n");
        commit_all(&fx.loop_dir, "work");
        let blob = oid(&git(&fx.loop_dir, &["rev-parse", "HEAD:a.txt"])).to_string();
        let path = fx
            .loop_git()
            .join("objects")
            .join(&blob[..2])
            .join(&blob[2..]);

        fs::remove_file(&path).unwrap();
        fs::write(&path, b"not zlib at all").unwrap();
        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(matches!(err, ImportError::Corrupt { .. }), "{err:?}");

        #[cfg(unix)]
        {
            fs::remove_file(&path).unwrap();
            let outside = fx.origin.join("README.md");
            std::os::unix::fs::symlink(&outside, &path).unwrap();
            let err = import_branch(
                &fx.loop_git(),
                &fx.origin_git(),
                &fx.origin_objects(),
                "loop/x",
                &Limits::default(),
            )
            .unwrap_err();
            assert!(
                matches!(
                    err,
                    ImportError::Unsafe {
                        source: ConfinedError::Symlink(_)
                    }
                ),
                "{err:?}"
            );
        }
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );
        assert_fsck_clean(&fx.origin);
    }

    #[test]
    fn trees_with_dot_git_entries_are_refused() {
        let fx = fixture();
        let blob = oid(&git(&fx.origin, &["rev-parse", "HEAD:README.md"]));
        let tree_input = format!("100644 blob {blob}\t.git\n");
        let mut cmd = git_command(&fx.loop_dir, &["mktree"]);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(tree_input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let tree = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let commit = git(
            &fx.loop_dir,
            &[
                "commit-tree",
                &tree,
                "-p",
                &fx.base.to_string(),
                "-m",
                "evil",
            ],
        );
        git(&fx.loop_dir, &["update-ref", "refs/heads/loop/x", &commit]);

        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::MalformedObject { .. }),
            "{err:?}"
        );
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );
    }

    fn hash_object(dir: &Path, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut cmd = git_command(dir, args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?} failed");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    #[test]
    fn objects_of_the_wrong_kind_are_refused() {
        let fx = fixture();
        // A commit whose "tree" is a blob the origin already has.
        let blob = git(&fx.origin, &["rev-parse", "HEAD:README.md"]);
        let commit = hash_object(
            &fx.loop_dir,
            &[
                "hash-object",
                "-t",
                "commit",
                "--literally",
                "-w",
                "--stdin",
            ],
            &format!(
                "tree {blob}\nparent {}\nauthor A <a@example.com> 1700000000 +0000\n\
                 committer A <a@example.com> 1700000000 +0000\n\nevil\n",
                fx.base
            ),
        );
        git(&fx.loop_dir, &["update-ref", "refs/heads/loop/x", &commit]);
        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::MalformedObject { .. }),
            "{err:?}"
        );
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );
    }

    /// A gitlink names a commit of another repository: the import copies the tree that
    /// holds it and never looks for that commit (the gate is what refuses gitlinks).
    #[test]
    fn a_gitlinks_commit_is_not_looked_for() {
        let fx = fixture();
        git(
            &fx.loop_dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                "160000,1234567890123456789012345678901234567890,sub",
            ],
        );
        git(&fx.loop_dir, &["commit", "-q", "-m", "sub"]);
        let tip = oid(&git(&fx.loop_dir, &["rev-parse", "HEAD"]));
        import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            tip.to_string()
        );
    }

    #[test]
    fn a_branch_pointing_at_a_tag_is_refused() {
        let fx = fixture();
        write(&fx.loop_dir.join("t.txt"), "tagged\n");
        commit_all(&fx.loop_dir, "tagged work");
        git(&fx.loop_dir, &["tag", "-a", "t", "-m", "a tag"]);
        let tag = oid(&git(&fx.loop_dir, &["rev-parse", "refs/tags/t"]));
        // git refuses to put a tag on a branch (and fsck flags it); an agent writing the file
        // directly does not ask.
        fs::write(fx.loop_git().join("refs/heads/loop/x"), format!("{tag}\n")).unwrap();

        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::MalformedObject { id, .. } if id == tag),
            "{err:?}"
        );
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );
        assert_fsck_clean(&fx.origin);
    }

    #[test]
    fn update_and_delete_branch_are_compare_and_swap() {
        let fx = fixture();
        let repo = open_trusted(&fx.origin).unwrap();

        update_branch(&repo, "loop/y", None, fx.first, "create").unwrap();
        assert_eq!(resolve_branch(&repo, "loop/y").unwrap(), Some(fx.first));
        // Re-creating at the same value is idempotent; at another value it is a lost race.
        update_branch(&repo, "loop/y", None, fx.first, "create again").unwrap();
        let err = update_branch(&repo, "loop/y", None, fx.base, "create").unwrap_err();
        assert!(
            matches!(err, ImportError::RefMoved { actual: Some(a), .. } if a == fx.first),
            "{err:?}"
        );

        let err = update_branch(&repo, "loop/y", Some(fx.base), fx.base, "move").unwrap_err();
        match err {
            ImportError::RefMoved {
                expected,
                actual,
                name,
                ..
            } => {
                assert_eq!(expected, Some(fx.base));
                assert_eq!(actual, Some(fx.first));
                assert_eq!(name, "refs/heads/loop/y");
            }
            other => panic!("expected RefMoved, got {other:?}"),
        }
        assert_eq!(resolve_branch(&repo, "loop/y").unwrap(), Some(fx.first));

        update_branch(&repo, "loop/y", Some(fx.first), fx.base, "move").unwrap();
        assert_eq!(
            git(&fx.origin, &["rev-parse", "loop/y"]),
            fx.base.to_string()
        );

        let err = update_branch(&repo, "loop/z", Some(fx.base), fx.first, "move").unwrap_err();
        assert!(
            matches!(err, ImportError::RefMoved { actual: None, .. }),
            "{err:?}"
        );

        let err = delete_branch(&repo, "loop/y", fx.first).unwrap_err();
        assert!(matches!(err, ImportError::RefMoved { .. }), "{err:?}");
        delete_branch(&repo, "loop/y", fx.base).unwrap();
        assert_eq!(resolve_branch(&repo, "loop/y").unwrap(), None);

        let missing = oid("1234567890123456789012345678901234567890");
        assert!(matches!(
            update_branch(&repo, "loop/w", None, missing, "x"),
            Err(ImportError::MissingObject { .. })
        ));
        assert!(matches!(
            update_branch(&repo, "refs/tags/v1", None, fx.base, "x"),
            Err(ImportError::InvalidBranchName { .. })
        ));
        assert!(matches!(
            update_branch(&repo, "bad..name", None, fx.base, "x"),
            Err(ImportError::InvalidBranchName { .. })
        ));
        assert_fsck_clean(&fx.origin);
    }

    #[test]
    fn tampered_alternates_are_refused() {
        let fx = fixture();
        write(&fx.loop_dir.join("x.txt"), "x\n");
        commit_all(&fx.loop_dir, "work");
        let alternates = fx.loop_git().join("objects/info/alternates");

        let elsewhere = fx._tmp.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        git(&elsewhere, &["init", "-q"]);
        fs::write(
            &alternates,
            format!("{}\n", elsewhere.join(".git/objects").display()),
        )
        .unwrap();
        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::AlternatesTampered { .. }),
            "{err:?}"
        );

        fs::write(
            &alternates,
            format!(
                "../../../../origin/.git/objects\n{}\n",
                elsewhere.join(".git/objects").display()
            ),
        )
        .unwrap();
        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::AlternatesTampered { .. }),
            "{err:?}"
        );

        fs::remove_file(&alternates).unwrap();
        let err = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap_err();
        assert!(
            matches!(err, ImportError::AlternatesTampered { .. }),
            "{err:?}"
        );

        // An absolute path to the right place is as good as the relative one.
        fs::write(&alternates, format!("{}\n", fx.origin_objects().display())).unwrap();
        import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            git(&fx.loop_dir, &["rev-parse", "HEAD"])
        );
    }

    #[test]
    fn history_queries() {
        let fx = fixture();
        git(
            &fx.origin,
            &["tag", "-a", "v1.0", "-m", "release", &fx.first.to_string()],
        );
        git(
            &fx.origin,
            &["tag", "tree-tag", &format!("{}^{{tree}}", fx.base)],
        );
        let repo = open_trusted(&fx.origin).unwrap();

        assert_eq!(count_ahead(&repo, fx.base, &[fx.first], true).unwrap(), 1);
        assert_eq!(count_ahead(&repo, fx.base, &[], true).unwrap(), 2);
        assert_eq!(count_ahead(&repo, fx.base, &[], false).unwrap(), 2);
        assert_eq!(count_ahead(&repo, fx.first, &[fx.base], true).unwrap(), 0);
        assert_eq!(count_ahead(&repo, fx.base, &[fx.base], true).unwrap(), 0);

        assert!(is_ancestor(&repo, fx.first, fx.base).unwrap());
        assert!(!is_ancestor(&repo, fx.base, fx.first).unwrap());
        assert!(is_ancestor(&repo, fx.base, fx.base).unwrap());

        assert_eq!(resolve_rev(&repo, "HEAD").unwrap(), Some(fx.base));
        assert_eq!(resolve_rev(&repo, "main").unwrap(), Some(fx.base));
        assert_eq!(resolve_rev(&repo, "HEAD~1").unwrap(), Some(fx.first));
        assert_eq!(resolve_rev(&repo, "v1.0").unwrap(), Some(fx.first));
        assert_eq!(
            resolve_rev(&repo, &fx.base.to_string()[..7]).unwrap(),
            Some(fx.base)
        );
        assert_eq!(resolve_rev(&repo, "no-such-thing").unwrap(), None);
        assert_eq!(resolve_rev(&repo, "tree-tag").unwrap(), None);

        assert_eq!(resolve_branch(&repo, "main").unwrap(), Some(fx.base));
        assert_eq!(
            resolve_branch(&repo, "refs/heads/main").unwrap(),
            Some(fx.base)
        );
        assert_eq!(
            resolve_branch(&repo, "refs/tags/v1.0").unwrap(),
            Some(fx.first)
        );
        assert_eq!(resolve_branch(&repo, "nope").unwrap(), None);
        assert!(resolve_branch(&repo, "bad..name").is_err());

        assert_eq!(head_branch(&repo).unwrap().as_deref(), Some("main"));
        assert_eq!(
            branches(&repo).unwrap(),
            vec![("loop/x".to_owned(), fx.base), ("main".to_owned(), fx.base)]
        );

        git(&fx.origin, &["checkout", "-q", "--detach", "HEAD"]);
        let repo = open_trusted(&fx.origin).unwrap();
        assert_eq!(head_branch(&repo).unwrap(), None);

        let unborn = fx._tmp.path().join("unborn");
        fs::create_dir(&unborn).unwrap();
        git(&unborn, &["init", "-q", "-b", "trunk"]);
        let repo = open_trusted(&unborn).unwrap();
        assert_eq!(head_branch(&repo).unwrap(), None);
        assert_eq!(resolve_rev(&repo, "HEAD").unwrap(), None);
        assert_eq!(branches(&repo).unwrap(), vec![]);
        assert_eq!(changes(&unborn), Vec::<String>::new());
        assert_eq!(
            loop_branches(&unborn.join(".git"), repo.object_hash(), &Limits::default()).unwrap(),
            vec![]
        );

        // The loop, read confined, names its branches as git does.
        git(&fx.loop_dir, &["branch", "side", &fx.first.to_string()]);
        git(&fx.loop_dir, &["pack-refs", "--all"]);
        git(&fx.loop_dir, &["branch", "later"]);
        assert_eq!(
            loop_branches(&fx.loop_git(), gix::hash::Kind::Sha1, &Limits::default()).unwrap(),
            vec![
                ("later".to_owned(), fx.base),
                ("loop/x".to_owned(), fx.base),
                ("side".to_owned(), fx.first)
            ]
        );
    }

    #[test]
    fn errors_can_cross_threads() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<GitReadError>();
        assert_send_sync::<ImportError>();
    }

    /// The changes of a standalone repository, which is its own origin.
    fn changes(dir: &Path) -> Vec<String> {
        let origin = open_trusted(dir).unwrap();
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        worktree_changes(dir, &origin, &Limits::default(), &interrupt).unwrap()
    }

    fn loop_changes(fx: &Fixture) -> Vec<String> {
        let origin = open_trusted(&fx.origin).unwrap();
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        worktree_changes(&fx.loop_dir, &origin, &Limits::default(), &interrupt).unwrap()
    }

    #[test]
    fn worktree_changes_reports_what_git_status_would() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("wt");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        write(&dir.join(".gitignore"), "*.log\nignored_dir/\n");
        write(&dir.join("a.txt"), "alpha\n");
        write(&dir.join("c.txt"), "gamma\n");
        write(&dir.join("dir/b.txt"), "beta\n");
        write(&dir.join("dir/sub/d.txt"), "delta\n");
        #[cfg(unix)]
        std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
        commit_all(&dir, "initial");
        assert_eq!(changes(&dir), Vec::<String>::new());

        // Ignored files and directories are not reported, neither at the top nor below.
        write(&dir.join("x.log"), "log\n");
        write(&dir.join("dir/y.log"), "log\n");
        write(&dir.join("ignored_dir/y.txt"), "ignored\n");
        write(&dir.join(".git/info/exclude"), "excluded.txt\n");
        write(&dir.join("excluded.txt"), "excluded\n");
        assert_eq!(changes(&dir), Vec::<String>::new());

        write(&dir.join("a.txt"), "ALPHA\n"); // same size
        fs::remove_file(dir.join("dir/b.txt")).unwrap();
        write(&dir.join("new.txt"), "new\n");
        write(&dir.join("newdir/deeper/n.txt"), "n\n");
        write(&dir.join("c.txt"), "gamma, staged\n");
        git(&dir, &["add", "c.txt"]);
        assert_eq!(
            changes(&dir),
            vec![
                "a.txt",
                "c.txt",
                "dir/b.txt",
                "new.txt",
                "newdir/deeper/n.txt"
            ]
        );

        // Staged and then reverted in the worktree: still a change against HEAD.
        git(&dir, &["checkout", "-q", "--", "."]);
        fs::remove_file(dir.join("new.txt")).unwrap();
        fs::remove_dir_all(dir.join("newdir")).unwrap();
        assert_eq!(changes(&dir), vec!["c.txt"]);
        git(&dir, &["reset", "-q", "--hard"]);
        assert_eq!(changes(&dir), Vec::<String>::new());

        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::remove_file(dir.join("link")).unwrap();
            std::os::unix::fs::symlink("c.txt", dir.join("link")).unwrap();
            assert_eq!(changes(&dir), vec!["link"]);
            git(&dir, &["reset", "-q", "--hard"]);

            let mut perms = fs::metadata(dir.join("a.txt")).unwrap().permissions();
            perms.set_mode(0o755);
            fs::set_permissions(dir.join("a.txt"), perms).unwrap();
            assert_eq!(changes(&dir), vec!["a.txt"]);
            git(&dir, &["reset", "-q", "--hard"]);

            // A directory replaced by a symlink to elsewhere: its files are gone, the link is new.
            fs::remove_dir_all(dir.join("dir")).unwrap();
            std::os::unix::fs::symlink(tmp.path(), dir.join("dir")).unwrap();
            assert_eq!(changes(&dir), vec!["dir", "dir/b.txt", "dir/sub/d.txt"]);
            fs::remove_file(dir.join("dir")).unwrap();
            git(&dir, &["reset", "-q", "--hard"]);
            assert_eq!(changes(&dir), Vec::<String>::new());
        }

        // Nested repositories are reported as a whole.
        let nested = dir.join("nested");
        fs::create_dir(&nested).unwrap();
        git(&nested, &["init", "-q"]);
        write(&nested.join("inner.txt"), "inner\n");
        assert_eq!(changes(&dir), vec!["nested"]);
    }

    #[test]
    fn worktree_status_tells_untracked_files_with_their_sizes_and_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("wt");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        write(&dir.join(".gitignore"), "ignored/\n");
        write(&dir.join("src/a.rs"), "a\n");
        commit_all(&dir, "initial");
        write(&dir.join("src/a.rs"), "changed\n");
        write(&dir.join("src/new.rs"), "new file\n");
        write(&dir.join("node_modules/pkg/lib/x.js"), "xx\n");
        write(&dir.join("node_modules/pkg/y.js"), "y\n");
        write(&dir.join("top.bin"), "12345");
        write(&dir.join("ignored/z"), "z\n");
        write(&dir.join("staged.txt"), "s\n");
        git(&dir, &["add", "staged.txt"]);
        let origin = crate::git::objects::open_trusted(&dir).unwrap();
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        let status = worktree_status(&dir, &origin, &Limits::default(), &interrupt).unwrap();
        assert_eq!(
            status.changed,
            [
                "node_modules/pkg/lib/x.js",
                "node_modules/pkg/y.js",
                "src/a.rs",
                "src/new.rs",
                "staged.txt",
                "top.bin"
            ]
        );
        let untracked = |path: &str, size: u64, folder: &str| Untracked {
            path: path.into(),
            size,
            folder: folder.into(),
        };
        assert_eq!(
            status.untracked,
            [
                untracked("node_modules/pkg/lib/x.js", 3, "node_modules"),
                untracked("node_modules/pkg/y.js", 2, "node_modules"),
                untracked("src/new.rs", 9, "src"),
                untracked("top.bin", 5, ""),
            ]
        );
    }

    #[test]
    fn worktree_changes_survive_a_racily_clean_index() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("wt");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        for i in 0..200 {
            write(
                &dir.join(format!("d{}/f{i}.txt", i % 7)),
                &format!("file {i}\n"),
            );
        }
        commit_all(&dir, "many");
        assert_eq!(changes(&dir), Vec::<String>::new());
        write(&dir.join("d3/f3.txt"), "FILE 3\n");
        assert_eq!(changes(&dir), vec!["d3/f3.txt"]);
    }

    fn unique_marker() -> PathBuf {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        std::env::temp_dir().join(format!("git-loop-marker-{}-{nanos}", std::process::id()))
    }

    #[test]
    fn nothing_the_loop_configures_is_executed() {
        let fx = fixture();
        let marker = unique_marker();
        let touch = format!("touch {}", marker.display());

        write(&fx.loop_dir.join(".gitattributes"), "* filter=x\n");
        write(&fx.loop_dir.join("work.txt"), "work\n");
        commit_all(&fx.loop_dir, "work");

        // Configured only now: from here on, running git in the loop would create the marker.
        let hooks = fx._tmp.path().join("evil-hooks");
        fs::create_dir(&hooks).unwrap();
        for hook in [
            "pre-commit",
            "post-checkout",
            "reference-transaction",
            "post-index-change",
            "pre-auto-gc",
        ] {
            let path = hooks.join(hook);
            fs::write(&path, format!("#!/bin/sh\n{touch}\n")).unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        // Were core.worktree honoured, the worktree would be this empty directory instead.
        let decoy = fx._tmp.path().join("decoy");
        fs::create_dir(&decoy).unwrap();
        let config = fx.loop_git().join("config");
        let mut text = fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "[core]\n\tfsmonitor = {touch}\n\thooksPath = {hooks}\n\tpager = {touch}\n\tworktree = {decoy}\n\
             [filter \"x\"]\n\tclean = {touch}; cat\n\tsmudge = {touch}; cat\n\tprocess = {touch}\n\trequired = true\n\
             [diff]\n\texternal = {touch}\n[core]\n\tuseReplaceRefs = true\n",
            hooks = hooks.display(),
            decoy = decoy.display(),
        ));
        fs::write(&config, text).unwrap();
        write(&fx.loop_dir.join("work.txt"), "modified\n");
        write(&fx.loop_dir.join("untracked.txt"), "untracked\n");

        let outcome = import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            &Limits::default(),
        )
        .unwrap();
        assert!(outcome.objects_copied > 0);
        assert_eq!(loop_changes(&fx), vec!["untracked.txt", "work.txt"]);
        assert_eq!(
            loop_branches(&fx.loop_git(), gix::hash::Kind::Sha1, &Limits::default()).unwrap(),
            vec![("loop/x".to_owned(), outcome.new.unwrap())]
        );

        assert!(
            !marker.exists(),
            "something configured by the loop was executed"
        );
        assert_fsck_clean(&fx.origin);

        // Control: the same repository does run the configured commands when git is used in it.
        let worktree = format!("core.worktree={}", fx.loop_dir.display());
        let _ = git_command(&fx.loop_dir, &["-c", &worktree, "status", "--porcelain"]).output();
        assert!(
            marker.exists(),
            "the control run of git should have run the configured commands"
        );
        fs::remove_file(&marker).unwrap();
    }

    fn small_limits(max_object_size: u64, max_pack_size: u64) -> Limits {
        Limits {
            max_object_size,
            max_pack_size,
            ..Limits::default()
        }
    }

    fn import_with(fx: &Fixture, limits: &Limits) -> Result<ImportOutcome, ImportError> {
        import_branch(
            &fx.loop_git(),
            &fx.origin_git(),
            &fx.origin_objects(),
            "loop/x",
            limits,
        )
    }

    #[test]
    fn objects_over_the_limit_are_refused_by_their_header_loose_and_packed() {
        let fx = fixture();
        // 3 MiB that compress to a few KiB: the shape of a zip bomb, at test scale.
        fs::write(fx.loop_dir.join("big.bin"), vec![0u8; 3 << 20]).unwrap();
        commit_all(&fx.loop_dir, "big");
        let blob = oid(&git(&fx.loop_dir, &["rev-parse", "HEAD:big.bin"]));
        let limits = small_limits(1 << 20, 64 << 20);

        let err = import_with(&fx, &limits).unwrap_err();
        match err {
            ImportError::ObjectTooLarge {
                id, size, limit, ..
            } => {
                assert_eq!((id, size, limit), (blob, 3 << 20, 1 << 20));
            }
            other => panic!("expected ObjectTooLarge, got {other:?}"),
        }
        let shown = import_with(&fx, &limits).unwrap_err().to_string();
        assert!(
            shown.contains(&blob.to_string())
                && shown.contains("3.0 MiB")
                && shown.contains("1.0 MiB"),
            "{shown}"
        );
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );

        // The same object in a pack: its size comes from the pack entry's header.
        git(&fx.loop_dir, &["repack", "-a", "-d", "-l", "-q"]);
        assert_eq!(loose_object_count(&fx.loop_git()), 0);
        let err = import_with(&fx, &limits).unwrap_err();
        assert!(
            matches!(err, ImportError::ObjectTooLarge { id, size, .. } if id == blob && size == 3 << 20),
            "{err:?}"
        );

        // Packs held in memory are bounded too.
        let err = import_with(&fx, &small_limits(16 << 20, 1 << 10)).unwrap_err();
        assert!(matches!(err, ImportError::PacksTooLarge { .. }), "{err:?}");
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            fx.base.to_string()
        );

        // Under a limit that admits it, the same branch imports whole.
        let outcome = import_with(&fx, &Limits::default()).unwrap();
        assert_eq!(
            outcome.new.unwrap().to_string(),
            git(&fx.loop_dir, &["rev-parse", "HEAD"])
        );
        assert_fsck_clean(&fx.origin);
    }

    #[test]
    fn a_chain_of_large_commits_is_read_again_rather_than_held() {
        let fx = fixture();
        // Two commits whose messages are 40 MiB each: more than is held for writing at once,
        // so the older one is read (and verified) again when its turn comes.
        for n in 0..2 {
            let message = format!("{}{n}\n", "x".repeat(40 << 20));
            fs::write(fx._tmp.path().join("msg"), message).unwrap();
            write(&fx.loop_dir.join(format!("f{n}.txt")), &format!("f{n}\n"));
            git(&fx.loop_dir, &["add", "-A"]);
            git(
                &fx.loop_dir,
                &[
                    "commit",
                    "-q",
                    "-F",
                    &fx._tmp.path().join("msg").display().to_string(),
                ],
            );
        }
        let outcome = import_with(&fx, &Limits::default()).unwrap();
        assert_eq!(outcome.objects_copied, 6);
        assert_eq!(
            git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
            git(&fx.loop_dir, &["rev-parse", "HEAD"])
        );
        assert_fsck_clean(&fx.origin);
    }

    /// Runs `f` with a bound, so that a read that blocks fails the test instead of hanging it.
    fn bounded<T: Send + 'static>(
        f: impl FnOnce() -> Result<T, GitReadError> + Send + 'static,
    ) -> Result<T, GitReadError> {
        within(
            std::time::Duration::from_secs(20),
            Path::new("test"),
            move |_| f(),
        )
    }

    fn mkfifo(path: &Path) {
        let _ = fs::remove_file(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    }

    /// A loop with one commit in a pack and one in loose objects, none of them in the origin
    /// yet: an import reads both kinds. Returns the fixture and the two object files.
    fn loop_with_pack_and_loose() -> (Fixture, String, String) {
        let fx = fixture();
        write(&fx.loop_dir.join("a.txt"), "a\n");
        commit_all(&fx.loop_dir, "work");
        git(&fx.loop_dir, &["repack", "-a", "-d", "-l", "-q"]);
        write(&fx.loop_dir.join("b.txt"), "b\n");
        commit_all(&fx.loop_dir, "more");
        let blob = git(&fx.loop_dir, &["rev-parse", "HEAD:b.txt"]);
        let loose = format!(".git/objects/{}/{}", &blob[..2], &blob[2..]);
        let pack = fs::read_dir(fx.loop_git().join("objects/pack"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.ends_with(".pack"))
            .unwrap();
        (fx, loose, format!(".git/objects/pack/{pack}"))
    }

    /// Everything the host reads of a loop: its import, its branches, its worktree.
    fn read_all(
        fx: &Fixture,
    ) -> impl FnOnce() -> Result<(), GitReadError> + Send + Clone + 'static {
        let loop_dir = fx.loop_dir.clone();
        let origin_dir = fx.origin.clone();
        move || {
            let origin = open_trusted(&origin_dir)?;
            import_branch_into(
                &loop_dir.join(".git"),
                &origin,
                &origin_dir.join(".git/objects"),
                "loop/x",
                &Limits::default(),
            )?;
            loop_branches(
                &loop_dir.join(".git"),
                origin.object_hash(),
                &Limits::default(),
            )?;
            let interrupt = std::sync::atomic::AtomicBool::new(false);
            worktree_changes(&loop_dir, &origin, &Limits::default(), &interrupt)?;
            Ok(())
        }
    }

    #[test]
    fn fifos_where_git_keeps_files_are_refused_not_waited_on() {
        for which in [
            ".git/index",
            ".git/HEAD",
            ".git/packed-refs",
            ".git/refs/heads/loop/x",
            ".git/objects/info/alternates",
            "loose object",
            "pack",
            ".git/info/exclude",
            ".gitignore",
        ] {
            let (fx, loose, pack) = loop_with_pack_and_loose();
            let rel = match which {
                "loose object" => loose.as_str(),
                "pack" => pack.as_str(),
                other => other,
            };
            if rel == ".git/packed-refs" {
                // Read only where a loose ref is missing: make it so.
                git(&fx.loop_dir, &["pack-refs", "--all"]);
            }
            let path = fx.loop_dir.join(rel);
            let saved = fs::read(&path).ok();
            mkfifo(&path);
            let err = bounded(read_all(&fx)).expect_err(rel);
            let shown = err.to_string();
            assert!(
                !matches!(err, GitReadError::TimedOut { .. }),
                "{rel}: the read blocked"
            );
            assert!(
                shown.contains(&path.display().to_string()) && shown.contains("FIFO"),
                "{rel}: the error does not name the path and what it is: {shown}"
            );
            // What the import reads stops it; the worktree's files only stop what reads them.
            let import_reads_it = !matches!(
                rel,
                ".git/index" | ".git/HEAD" | ".git/info/exclude" | ".gitignore"
            );
            if import_reads_it {
                assert_eq!(
                    git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
                    fx.base.to_string(),
                    "{rel}"
                );
            }
            // The same repository with the file back is read as before.
            fs::remove_file(&path).unwrap();
            if let Some(content) = saved {
                fs::write(&path, content).unwrap();
            }
            bounded(read_all(&fx)).unwrap_or_else(|e| panic!("after {rel}: {e}"));
            assert_eq!(
                git(&fx.origin, &["rev-parse", "refs/heads/loop/x"]),
                git(&fx.loop_dir, &["rev-parse", "HEAD"])
            );
        }
    }

    #[test]
    fn a_tree_repeating_itself_is_not_expanded() {
        let fx = fixture();
        // Six levels of 64 names for the same folder: 64^6 paths, were the tree expanded.
        let mut tree = hash_object(
            &fx.loop_dir,
            &["mktree"],
            &format!(
                "100644 blob {}\tf\n",
                hash_object(&fx.loop_dir, &["hash-object", "-w", "--stdin"], "f\n")
            ),
        );
        for _ in 0..6 {
            let listing: String = (0..64)
                .map(|n| format!("040000 tree {tree}\td{n:02}\n"))
                .collect();
            tree = hash_object(&fx.loop_dir, &["mktree"], &listing);
        }
        let commit = hash_object(&fx.loop_dir, &["commit-tree", &tree, "-m", "bomb"], "");
        git(&fx.loop_dir, &["update-ref", "refs/heads/loop/x", &commit]);
        let started = std::time::Instant::now();
        let changes = loop_changes(&fx);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        // HEAD's 64 folders are missing from the index (reported as folders), and the
        // index's files from HEAD.
        assert!(changes.contains(&"d00".to_owned()) && changes.contains(&"d63".to_owned()));
        assert!(changes.contains(&"README.md".to_owned()), "{changes:?}");
        assert!(changes.len() < 100, "{}", changes.len());
    }

    #[test]
    fn ignore_rules_are_git_s() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("wt");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        write(
            &dir.join(".gitignore"),
            "*.log\nbuild/\n!keep.log\n/top-only.txt\n",
        );
        write(&dir.join("sub/.gitignore"), "!again.log\nlocal.txt\n");
        write(&dir.join("build/tracked.txt"), "t\n");
        write(&dir.join("sub/deep/.gitignore"), "*.txt\n!wanted.txt\n");
        write(&dir.join("src/a.c"), "a\n");
        git(&dir, &["add", "-A"]);
        git(&dir, &["add", "-f", "build/tracked.txt"]);
        git(&dir, &["commit", "-q", "-m", "initial"]);
        for (path, text) in [
            ("x.log", "x"),
            ("keep.log", "k"),
            ("sub/again.log", "a"),
            ("sub/other.log", "o"),
            ("sub/local.txt", "l"),
            ("local.txt", "l"),
            ("top-only.txt", "t"),
            ("sub/top-only.txt", "t"),
            ("build/new.txt", "n"),
            ("build/inner/n.txt", "n"),
            ("sub/deep/a.txt", "a"),
            ("sub/deep/wanted.txt", "w"),
            ("sub/deep/more/b.txt", "b"),
            ("sub/deep/more/wanted.txt", "w"),
            ("src/b.c", "b"),
        ] {
            write(&dir.join(path), text);
        }
        write(&dir.join(".git/info/exclude"), "src/b.c\n");
        let out = git_command(
            &dir,
            &["status", "--porcelain", "-z", "--untracked-files=all"],
        )
        .output()
        .unwrap();
        let mut expected: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .filter(|e| e.len() > 3)
            .map(|e| String::from_utf8_lossy(&e[3..]).into_owned())
            .collect();
        expected.sort();
        assert_eq!(changes(&dir), expected);
    }

    #[test]
    fn a_split_index_is_named_not_misread() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("wt");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        write(&dir.join("a.txt"), "a\n");
        commit_all(&dir, "a");
        git(&dir, &["update-index", "--split-index"]);
        let origin = open_trusted(&dir).unwrap();
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        let err = worktree_changes(&dir, &origin, &Limits::default(), &interrupt).unwrap_err();
        assert!(err.to_string().contains("split index"), "{err}");
    }
}
