//! A sandbox, its network policy or its agent that cannot be had.

use super::*;

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
        SandboxError::FsUnsupported {
            why: "no deny_create".into(),
            profile: "/p/sandbox.toml".into(),
        },
        3,
        "no deny_create",
        "remove deny_create from [filesystem] in /p/sandbox.toml",
    );
    says(
        SandboxError::FsPolicy {
            message: "[filesystem] deny_read: too many".into(),
            profile: "/p/sandbox.toml".into(),
        },
        1,
        "[filesystem] deny_read: too many",
        "change [filesystem] in /p/sandbox.toml",
    );
    says(
        SandboxError::FsWithoutSandbox,
        3,
        "the profile's [filesystem] rules need a sandbox; --backend none enforces none",
        "drop --backend none",
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
    says(
        AgentError::NotLoggedIn {
            agent: "Claude Code",
            vault: "work".into(),
            variables: "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN".into(),
            id: Some("fix-1a2b3c".into()),
        },
        1,
        "Claude Code is not logged in: vault 'work' holds no ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN",
        "printf %s \"$KEY\" | git loop agent login --vault work",
    );
}
