//! Each domain error as the person reads it: its exit code (DESIGN.md section 8) and the
//! hint that says what to do, one case per way a domain call can fail.

use std::io;
use std::path::PathBuf;

use crate::error::Error;

/// `e` exits with `exit`, its message is `message`, and a hint contains `hint`.
#[track_caller]
fn says(e: impl Into<Error>, exit: u8, message: &str, hint: &str) {
    let e: Error = e.into();
    assert_eq!(e.kind.exit_code(), exit, "{}", e.one_line());
    assert_eq!(e.message, message);
    assert!(
        e.hints.iter().any(|h| h.contains(hint)),
        "no hint with {hint:?} in {:?}",
        e.hints
    );
}

fn path(p: &str) -> PathBuf {
    PathBuf::from(p)
}

fn denied() -> io::Error {
    io::Error::from(io::ErrorKind::PermissionDenied)
}

fn read_error() -> crate::git::objects::GitReadError {
    crate::git::objects::GitReadError::RefNotFound {
        repo: path("/r"),
        name: "main".into(),
    }
}

fn git_failed() -> crate::git::cmd::GitError {
    crate::git::cmd::GitError::Failed {
        argv: "git clone".into(),
        stderr: "fatal".into(),
    }
}

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

#[test]
fn a_sandbox_that_cannot_be_had() {
    use crate::agent::AgentError;
    use crate::egress::PolicyError;
    use crate::sandbox::SandboxError;
    let e: Error = SandboxError::Unavailable {
        check: "userns".into(),
        detail: "off".into(),
        fixes: vec![("userns".into(), "sysctl x=1".into())],
        auto: true,
    }
    .into();
    assert_eq!(e.kind.exit_code(), 3);
    assert_eq!(e.hints[0], "userns: sysctl x=1");
    assert!(e.hints[1].contains("--backend none"));
    let e: Error = SandboxError::Unavailable {
        check: "userns".into(),
        detail: "off".into(),
        fixes: vec![],
        auto: false,
    }
    .into();
    assert!(e.hints.is_empty(), "{:?}", e.hints);
    says(
        SandboxError::UnknownMode {
            id: "fix-1".into(),
            mode: "wrk".into(),
        },
        1,
        "loop fix-1 has an unknown mode 'wrk'",
        "--mode work",
    );
    says(
        SandboxError::UnknownNet {
            id: "fix-1".into(),
            net: "proxxy".into(),
        },
        3,
        "network mode 'proxxy' of loop fix-1 is not available",
        "--net proxy",
    );
    let e: Error = SandboxError::Unbound {
        vault: "work".into(),
        labels: vec!["env:GH_TOKEN".into(), "env:X".into()],
        suggested: vec![
            ("env".into(), "GH_TOKEN".into(), "api.github.com".into()),
            ("env".into(), "X".into(), "HOST".into()),
        ],
    }
    .into();
    assert_eq!(e.kind.exit_code(), 1);
    assert_eq!(e.hints.len(), 2);
    assert!(e.hints[0].ends_with("git loop vault bind work env:GH_TOKEN api.github.com"));
    says(
        SandboxError::UpstreamCa("no file".into()),
        1,
        "network.upstream_ca: no file",
        "PEM file",
    );
    says(
        SandboxError::Certificates("rcgen".into()),
        3,
        "rcgen",
        "run again",
    );
    says(
        SandboxError::Replaced(path("/bin/git-loop")),
        3,
        "the git-loop binary /bin/git-loop was replaced while it ran",
        "run the command again",
    );
    says(
        SandboxError::Missing(path("/x")),
        1,
        "/x is missing",
        "git loop doctor",
    );
    says(
        SandboxError::GrantMoved(path("/g")),
        1,
        "the grant /g is not what was granted any more (it was moved or replaced)",
        "git loop grant ID --ro|--rw /g",
    );
    says(
        SandboxError::Confined {
            path: path("/c"),
            source: crate::confined::ConfinedError::Symlink(path("/c")),
        },
        1,
        "cannot give the sandbox /c",
        "a sandbox may have put a link",
    );
    says(
        SandboxError::LoopRepository {
            role: "code",
            id: "fix-1".into(),
            git_dir: path("/l/.git"),
            source: crate::confined::ConfinedError::NotDir {
                path: path("/l/.git"),
            },
        },
        1,
        "the code repository of loop fix-1 cannot be used",
        "look at /l/.git",
    );
    says(
        SandboxError::FilesOnHost("work".into()),
        1,
        "vault work has files, which only the sandbox can deliver without writing them to disk",
        "drop --backend none",
    );
    says(
        SandboxError::Limits(crate::sandbox::limits::LimitError::Unenforceable(
            "v1".into(),
        )),
        3,
        "the sandbox's limits cannot be enforced here",
        "best-effort",
    );
    says(
        SandboxError::HostCommand {
            program: "nope".into(),
            source: denied(),
        },
        1,
        "cannot run nope",
        "installed",
    );
    says(
        SandboxError::TaskTimedOut {
            what: "git status".into(),
            seconds: 300,
        },
        1,
        "git status did not finish within 300 s and was stopped",
        "a hook that never returns",
    );
    says(
        SandboxError::NoBwrapForGit,
        3,
        "bwrap is needed to run git in a folder a sandbox can write",
        "apt-get install bubblewrap",
    );
    says(
        PolicyError::AllowDomain("bad".into()),
        2,
        "--allow-domain: bad",
        "*.example.com",
    );
    says(
        PolicyError::Hosts("x is not a name".into()),
        1,
        "the operator config's [network.hosts] is malformed",
        "x is not a name",
    );
    says(
        AgentError::NotInstalled("claude".into()),
        1,
        "the agent command 'claude' is not installed (not on PATH)",
        "npm install -g @anthropic-ai/claude-code",
    );
    says(
        AgentError::NoIdentity {
            consequence: "commits fail",
        },
        1,
        "you have no git identity: commits fail",
        "git config --global user.name",
    );
    says(
        AgentError::SharedFolder {
            binary: path("/usr/bin/claude"),
            folder: path("/usr/bin"),
            what: "/usr".into(),
        },
        1,
        "the agent /usr/bin/claude is installed in /usr/bin, which is (or holds) /usr: binding it would show the sandbox more than the agent",
        "a folder of its own",
    );
}

#[test]
fn what_cannot_be_set_up() {
    use crate::create::NewError;
    use crate::demo::DemoError;
    use crate::hooks::{HookError, MarkerError};
    use crate::init::InitError;
    use crate::repos::RepoError;
    use crate::schedule::ScheduleError;
    use crate::workspace::WorkspaceError;
    for (e, exit, hint) in [
        (NewError::EmptyTitle, 2, "give the loop a title"),
        (NewError::LongTitle(300), 2, "use a short title"),
        (NewError::ControlInTitle, 2, "use a one-line title"),
        (
            NewError::NoSeedChat(path("/c")),
            2,
            "conversation transcript",
        ),
        (NewError::ScratchWithCode, 2, "drop --scratch"),
        (NewError::NoRepository(path("/r")), 2, "--repo PATH"),
        (
            NewError::LoopRepository(path("/l")),
            2,
            "the original repository",
        ),
        (NewError::NoCommits(path("/r")), 2, "make a first commit"),
        (
            NewError::NoBase {
                spec: "v9".into(),
                top: path("/r"),
            },
            2,
            "git rev-parse",
        ),
        (
            NewError::Staging {
                path: path("/s"),
                source: denied(),
            },
            1,
            "writable",
        ),
        (NewError::NoFreeId, 1, "git loop gc"),
    ] {
        let message = e.to_string();
        says(e, exit, &message, hint);
    }
    says(
        RepoError::Bare(path("/r.git")),
        2,
        "/r.git is a bare repository; a loop needs one with a working tree",
        "git clone BARE work",
    );
    says(
        RepoError::GitDirOutside {
            workdir: path("/w"),
            common: path("/g"),
        },
        2,
        "/w keeps its git folder outside its working tree (/g)",
        "`.git` folder inside",
    );
    says(
        RepoError::Missing {
            name: "app".into(),
            link: path("/ws/repos/app"),
            target: path("/gone"),
        },
        1,
        "repository 'app' is missing: /ws/repos/app points at /gone, which is not a git repository any more",
        "ln -sfn NEW-PATH /ws/repos/app",
    );
    says(
        InitError::OtherRemote {
            path: path("/n"),
            have: "a".into(),
            url: "b".into(),
        },
        1,
        "/n has the remote a already",
        "git -C /n remote set-url origin b",
    );
    says(
        InitError::NoPermission(path("/d")),
        1,
        "cannot create /d: permission denied",
        "GIT_LOOP_HOME",
    );
    says(
        InitError::NotWritable(path("/d")),
        1,
        "/d is not writable",
        "GIT_LOOP_HOME",
    );
    says(
        InitError::NotARepository(path("/d")),
        1,
        "/d exists and is not a git repository",
        "move it away",
    );
    says(
        InitError::Clone {
            url: "u".into(),
            source: git_failed(),
        },
        1,
        "cannot clone u",
        "check the URL",
    );
    says(
        InitError::Unreachable {
            url: "u".into(),
            source: git_failed(),
        },
        1,
        "cannot reach u",
        "check the URL",
    );
    says(WorkspaceError::NoHome, 1, "HOME is not set", "set HOME");
    says(
        WorkspaceError::NoUser,
        1,
        "cannot tell who the user is",
        "GIT_LOOP_USER",
    );
    says(
        WorkspaceError::BadUser("a/b".into()),
        2,
        "user name 'a/b' cannot name a folder",
        "letters, digits",
    );
    says(
        HookError::NoHooksFolder(path("/r"), git_failed()),
        1,
        "cannot find the hooks folder of /r",
        "is it a git repository?",
    );
    says(
        HookError::Symlink {
            hook: "pre-commit",
            path: path("/h"),
        },
        1,
        "the pre-commit hook /h is a symlink, managed elsewhere",
        "git-loop hook pre-commit",
    );
    says(
        HookError::Markers {
            hook: "pre-commit",
            path: path("/h"),
            source: MarkerError::Unterminated,
        },
        1,
        "cannot add git loop's lines to /h",
        "from it yourself",
    );
    says(
        DemoError::Unreadable(path("/d"), denied()),
        1,
        "cannot read /d",
        "give a new folder",
    );
    says(
        DemoError::NotEmpty(path("/d")),
        2,
        "/d is not empty, and the demo removes its folder at the end",
        "new or empty folder",
    );
    says(
        DemoError::Uncreatable(path("/d"), denied()),
        1,
        "cannot create /d",
        "a folder you can write to",
    );
    says(
        DemoError::Step {
            args: "new x".into(),
            status: "exit status: 1".into(),
        },
        1,
        "git loop new x failed in the demo (exit status: 1)",
        "its message is above",
    );
    says(
        ScheduleError::Timer {
            unit: "git-loop-autocommit",
            stderr: "no".into(),
        },
        1,
        "systemd would not start git-loop-autocommit.timer: no",
        "systemctl --user status git-loop-autocommit.timer",
    );
    says(
        ScheduleError::Crontab {
            command: "crontab".into(),
            source: denied(),
        },
        1,
        "cannot run `crontab -l`",
        "install cron",
    );
}

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
fn what_config_set_does_not_take() {
    use crate::config::edit::EditError;
    use crate::config::Layer;
    says(
        EditError::Section {
            key: "network".into(),
            keys: vec!["network.mode".into(), "network.hosts".into()],
        },
        2,
        "network is a section, not a key",
        "its keys: network.mode, network.hosts",
    );
    let e: Error = EditError::UnknownKey {
        shown: "netwrk.mode".into(),
        close: Some("network.mode".into()),
        keys: vec!["network.mode".into()],
    }
    .into();
    assert_eq!(e.kind.exit_code(), 2);
    assert_eq!(
        e.hints,
        ["did you mean `network.mode`?", "known keys: network.mode"]
    );
    let invalid = |choices: Vec<String>, default: Option<toml::Value>| EditError::Invalid {
        key: "network.mode".into(),
        shown: "\"proxxy\"".into(),
        why: "unknown".into(),
        close: Some("proxy".into()),
        choices,
        default,
    };
    let e: Error = invalid(
        vec!["host".into(), "proxy".into()],
        Some(toml::Value::from("proxy")),
    )
    .into();
    assert_eq!(
        e.hints,
        [
            "did you mean `proxy`?",
            "network.mode takes one of: host, proxy"
        ]
    );
    let e: Error = invalid(vec![], Some(toml::Value::from("proxy"))).into();
    assert_eq!(
        e.hints,
        [
            "did you mean `proxy`?",
            "the default is network.mode = \"proxy\""
        ]
    );
    let e: Error = invalid(vec![], None).into();
    assert_eq!(e.hints, ["did you mean `proxy`?"]);
    says(
        EditError::NoProfile {
            key: "sandbox.profile".into(),
            shown: "\"x\"".into(),
            path: path("/k/x/sandbox.toml"),
            close: None,
            known: vec!["default".into()],
        },
        2,
        "sandbox.profile = \"x\": there is no such sandbox profile",
        "the profiles: default",
    );
    says(
        EditError::OperatorOnly {
            key: "network.mode".into(),
            shown: "\"host\"".into(),
            why: "it widens".into(),
            layer: Layer::Team,
            operator: path("/etc/op.toml"),
        },
        2,
        "network.mode = \"host\" may only be set in the operator config, not the team config: it widens",
        "git loop config set --operator network.mode VALUE",
    );
    says(
        EditError::WrongType {
            key: "limits.pids".into(),
            wants: "an integer",
            raw: "many".into(),
            default: toml::Value::from(512),
        },
        2,
        "limits.pids takes an integer, not 'many'",
        "the default is limits.pids = 512",
    );
    says(
        EditError::NotToml {
            path: path("/c.toml"),
            message: "bad".into(),
        },
        1,
        "/c.toml is not valid TOML: bad",
        "fix or remove /c.toml",
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
        super::conflict_hints(&conflict),
        [
            "nothing was changed; merge by hand, then sync again:",
            "cd /ws/context/notes && git merge origin/main   (fix the files, `git add` them, `git commit`)",
            "git loop sync",
        ]
    );
}

#[test]
fn a_folder_outside_any_repository_keeps_its_cause() {
    use crate::repos::RepoError;
    let e: Error = RepoError::NotARepository {
        path: path("/tmp/x"),
        source: Box::new(io::Error::other("no .git above")),
    }
    .into();
    assert_eq!(e.kind.exit_code(), 2);
    assert_eq!(
        e.one_line(),
        "/tmp/x is not in a git repository: no .git above"
    );
    assert!(e.hints[1].contains("git loop new --scratch TITLE"));
}
