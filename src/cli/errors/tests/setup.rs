//! What cannot be set up as asked: a loop, the workspace, hooks, the schedule, the configuration.

use std::io;

use super::*;

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
            NewError::NotInRepository(path("/r")),
            2,
            "git loop new --scratch",
        ),
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
