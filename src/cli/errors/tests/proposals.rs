//! Proposals and syncs that cannot be made.

use super::*;

#[test]
fn proposals_that_cannot_be_made() {
    use crate::gate::{GateError, Unchecked};
    use crate::pr::PrError;
    says(
        PrError::Detached("fix-1".into()),
        2,
        "loop fix-1 started from a detached commit; no branch to open a pull request against",
        "git loop merge ID --into BRANCH",
    );
    says(
        PrError::NothingToPropose("fix-1".into()),
        2,
        "loop fix-1 has no code or knowledge branch to propose",
        "git loop publish",
    );
    says(
        PrError::NoRemote {
            repo: path("/r"),
            branch: "loop/fix-1".into(),
        },
        1,
        "/r has no remote to push loop/fix-1 to",
        "git -C /r remote add origin URL",
    );
    says(
        PrError::Push {
            branch: "loop/fix-1".into(),
            remote: "origin".into(),
            source: git_failed(),
        },
        1,
        "cannot push loop/fix-1 to origin",
        "check your access",
    );
    says(
        PrError::Unchecked {
            id: "fix-1".into(),
            base: "main".into(),
            origin: path("/r"),
            source: GateError::NoBranch("main".into()),
        },
        1,
        "cannot check what loop fix-1 would propose",
        "is main a branch of /r?",
    );
    says(
        PrError::Open {
            tool: "gh".into(),
            url: "https://x/compare".into(),
        },
        1,
        "gh could not open the pull request",
        "open it by hand: https://x/compare",
    );
    says(
        Unchecked {
            id: "fix-1".into(),
            source: GateError::NoBranch("main".into()),
        },
        1,
        "cannot check what loop fix-1 would publish",
        "git loop doctor",
    );
}

#[test]
fn a_sync_that_cannot_be_done() {
    use crate::sync::{Move, Report, Role, State, SyncError};
    says(
        SyncError::Busy {
            role: "notes",
            trunk: "main".into(),
            rounds: 5,
        },
        1,
        "notes: the remote's main kept moving while this sync ran (5 rounds)",
        "nothing was lost; run `git loop sync` again in a moment",
    );
    says(
        SyncError::Refused {
            role: "notes",
            why: "protected".into(),
        },
        1,
        "notes: the remote refused the push: protected",
        "the remote's rules refuse this push",
    );
    says(
        SyncError::Other {
            role: "notes",
            message: "odd".into(),
        },
        1,
        "notes: odd",
        "`git loop doctor` checks the workspace",
    );
    let conflict = Report {
        repo: Role::Notes,
        path: path("/ws/context/notes"),
        remote: Some("u".into()),
        trunk: "main".into(),
        state: State::Conflict {
            paths: vec!["a".into()],
        },
        local: Move::default(),
        remote_trunk: Move::default(),
        loops_pushed: vec![],
        loops_refused: vec![],
        notices: vec![],
        rounds: 1,
    };
    assert_eq!(
        crate::cli::errors::conflict_hints(&conflict),
        [
            "nothing was changed; merge by hand, then sync again:",
            "cd /ws/context/notes && git merge origin/main   (fix the files, `git add` them, `git commit`)",
            "git loop sync",
        ]
    );
}
