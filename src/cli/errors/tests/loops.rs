//! A loop that cannot be found, read, imported, committed or removed.

use super::*;

#[test]
fn a_loop_that_cannot_be_had() {
    use crate::loops::{LoopError, RecordError};
    let e: Error = LoopError::Ambiguous {
        query: "fi".into(),
        ids: vec!["fix-1".into(), "fig-2".into()],
    }
    .into();
    assert_eq!(e.kind.exit_code(), 2);
    assert_eq!(
        e.hints,
        [
            "did you mean fix-1?",
            "did you mean fig-2?",
            "give more of the id"
        ]
    );
    let e: Error = LoopError::NotFound {
        query: "zz".into(),
        similar: vec!["azz-1".into()],
        any: true,
    }
    .into();
    assert_eq!(
        e.hints,
        ["did you mean azz-1?", "`git loop list` shows the loops"]
    );
    says(
        LoopError::NotFound {
            query: "zz".into(),
            similar: vec![],
            any: false,
        },
        2,
        "no loop 'zz'",
        "there are no loops yet",
    );
    says(
        LoopError::Removed {
            query: "fix-1".into(),
            folder: path("/ws/loops/fix-1"),
        },
        2,
        "no loop 'fix-1'",
        "its branch loop/fix-1 still exists, but its folder /ws/loops/fix-1 is gone",
    );
    let broken = || RecordError::Invalid {
        path: path("/ws/loops/fix-1/loop.toml"),
        message: "bad".into(),
    };
    says(
        LoopError::Broken {
            id: "fix-1".into(),
            source: broken(),
        },
        1,
        "loop fix-1 has a broken record",
        "fix the TOML in /ws/loops/fix-1/loop.toml by hand",
    );
    says(
        LoopError::NoRecord {
            id: "fix-1".into(),
            path: path("/ws/loops/fix-1/loop.toml"),
        },
        1,
        "loop fix-1 has no record (/ws/loops/fix-1/loop.toml is missing)",
        "git loop rm fix-1 --force",
    );
    says(
        LoopError::Unreadable {
            id: "fix-1".into(),
            source: RecordError::Read {
                path: path("/ws/loops/fix-1/loop.toml"),
                source: denied(),
            },
        },
        1,
        "cannot read the record of loop fix-1",
        "check that /ws/loops/fix-1/loop.toml is a readable file",
    );
}

#[test]
fn reading_committing_and_removing_loops() {
    use crate::autocommit::CommitError;
    use crate::git::objects::ImportError;
    use crate::loops::ReadError;
    use crate::removal::RemovalError;
    let import = |source| ReadError::Import {
        branch: "loop/fix-1".into(),
        id: "fix-1".into(),
        origin: path("/o"),
        git_dir: path("/ws/loops/fix-1/repo/.git"),
        source,
    };
    let id = gix::ObjectId::null(gix::hash::Kind::Sha1);
    says(
        import(ImportError::AlternatesTampered {
            repo: path("/r"),
            expected: path("/o"),
            reason: "x".into(),
        }),
        1,
        "cannot import loop/fix-1 of loop fix-1 into /o",
        "restore /ws/loops/fix-1/repo/.git/objects/info/alternates",
    );
    says(
        import(ImportError::HashMismatch {
            repo: path("/r"),
            expected: id,
            actual: id,
        }),
        1,
        "cannot import loop/fix-1 of loop fix-1 into /o",
        "holds a corrupt object",
    );
    says(
        import(ImportError::Unsafe {
            source: crate::confined::ConfinedError::Symlink(path("/r/x")),
        }),
        1,
        "cannot import loop/fix-1 of loop fix-1 into /o",
        "git loop rm --force fix-1",
    );
    let e: Error = import(ImportError::ObjectTooLarge {
        repo: path("/r"),
        id,
        size: (3 << 20) + 1,
        limit: 1 << 20,
    })
    .into();
    assert!(
        e.hints[0].contains("[import] max_object_size = \"4M\""),
        "{:?}",
        e.hints
    );
    assert!(
        e.hints[1].contains("drop the object from loop/fix-1"),
        "{:?}",
        e.hints
    );
    let e: Error = import(ImportError::PacksTooLarge {
        repo: path("/r"),
        size: 5 << 20,
        limit: 1 << 20,
    })
    .into();
    assert_eq!(e.hints.len(), 1);
    assert!(
        e.hints[0].contains("[import] max_pack_size = \"5M\""),
        "{:?}",
        e.hints
    );
    says(
        import(ImportError::MissingObject {
            repo: path("/r"),
            id,
        }),
        1,
        "cannot import loop/fix-1 of loop fix-1 into /o",
        "`git loop doctor` checks the workspace",
    );
    says(
        ReadError::Worktree(path("/w"), read_error()),
        1,
        "cannot read /w",
        "a sandbox can write /w",
    );
    says(
        ReadError::Personal(path("/p"), read_error()),
        1,
        "cannot read /p",
        "a sandbox can write the files of /p",
    );
    says(
        ReadError::Origin(path("/o"), read_error()),
        1,
        "cannot read /o",
        "git loop doctor",
    );
    says(
        ReadError::Branches {
            path: path("/w"),
            id: "fix-1".into(),
            source: read_error(),
        },
        1,
        "cannot read /w",
        "git loop shell fix-1",
    );
    says(
        RemovalError::Running("fix-1".into()),
        1,
        "loop fix-1 is running (a run, shell, agent or autocommit of it is live)",
        "wait for it to end",
    );
    says(
        RemovalError::NotRemoved(path("/ws/loops/fix-1"), denied()),
        1,
        "cannot remove /ws/loops/fix-1",
        "nothing was removed",
    );
    says(
        RemovalError::Journal {
            path: path("/j"),
            id: "fix-1".into(),
            source: serde_json::from_str::<u8>("x").unwrap_err(),
        },
        1,
        "/j is not a removal journal",
        "delete the branches loop/fix-1 by hand",
    );
    says(
        CommitError::InLoop {
            role: "code",
            id: "fix-1".into(),
            stderr: "no".into(),
        },
        1,
        "the commit in the code repository failed: no",
        "git loop shell fix-1",
    );
    says(
        CommitError::Busy {
            roles: vec!["code", "notes"],
            id: "fix-1".into(),
        },
        1,
        "the code and notes repository of loop fix-1 was not committed",
        "finish or abort what is in progress",
    );
    says(
        CommitError::PersonalBusy {
            why: "a merge is in progress".into(),
            dir: path("/p"),
        },
        1,
        "not committed, a merge is in progress",
        "finish or abort it in /p",
    );
    says(
        CommitError::Personal("no".into()),
        1,
        "the commit failed: no",
        "git status",
    );
}
