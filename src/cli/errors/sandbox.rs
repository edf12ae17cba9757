//! What the person reads when a sandbox, its network policy or its agent cannot be had.

use crate::agent::AgentError;
use crate::egress::PolicyError;
use crate::error::{Error, ErrorKind};
use crate::sandbox::SandboxError;

impl From<SandboxError> for Error {
    fn from(e: SandboxError) -> Error {
        let message = e.to_string();
        let unavailable = Error::new(ErrorKind::SandboxUnavailable, message.clone());
        match e {
            SandboxError::Unavailable { fixes, auto, .. } => {
                let err = fixes.iter().fold(unavailable, |err, (check, fix)| {
                    err.hint(format!("{check}: {fix}"))
                });
                if auto {
                    err.hint("`git loop doctor` checks everything; `--backend none` runs on the host with no sandbox at all")
                } else {
                    err
                }
            }
            SandboxError::Unbound {
                vault, suggested, ..
            } => suggested.iter().fold(Error::failure(message), |err, (kind, name, hosts)| {
                err.hint(format!(
                    "bind it to the hosts that may receive it: git loop vault bind {vault} {kind}:{name} {hosts}"
                ))
            }),
            SandboxError::UpstreamCa(_) => Error::failure(message).hint(
                "point it at a PEM file of CA certificates, or set it to \"\" in the operator config",
            ),
            SandboxError::Certificates(_) => unavailable.hint(
                "run again; if it persists, report it (the proxy could not make its certificates)",
            ),
            SandboxError::Replaced(_) => unavailable.hint("run the command again"),
            SandboxError::Confined { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("a sandbox may have put a link or something else there: `git loop doctor` checks the workspace"),
            SandboxError::FsUnsupported { profile, .. } => unavailable.hint(format!(
                "remove deny_create from [filesystem] in {profile}, or run on Linux 5.14 or later with seccomp user notification (deny_write and deny_read cover the paths that exist when a run starts)"
            )),
            SandboxError::FsPolicy { profile, .. } => {
                Error::failure(message).hint(format!("change [filesystem] in {profile}"))
            }
            SandboxError::NestedGitNotAllowed { profile } => Error::failure(message).hint(format!(
                "remove \"**/.git\" from allow_write in {profile}, or let the team's profiles have nested repositories: git loop config set --operator sandbox.allow_nested_git true"
            )),
            SandboxError::FsWithoutSandbox => {
                unavailable.hint("run with the sandbox (drop --backend none)")
            }
            SandboxError::Missing(_) => {
                Error::failure(message).hint("`git loop doctor` checks the workspace")
            }
            SandboxError::GrantMoved(path) => Error::failure(message).hint(format!(
                "it was moved, replaced, or deleted and made again: look at what is there now; if it is right, grant it again (git loop grant ID --ro|--rw {}), else remove the grant (git loop grant ID --revoke {})",
                path.display(),
                path.display()
            )),
            SandboxError::LoopRepository {
                git_dir, source, ..
            } => Error::failure(message).with_source(source).hint(format!(
                "look at {} (a sandbox may have replaced it)",
                git_dir.display()
            )),
            SandboxError::FilesOnHost(_) => Error::failure(message).hint(
                "run with the sandbox (drop --backend none), or use a vault without file entries",
            ),
            SandboxError::Limits(source) => unavailable
                .with_source(source)
                .hint("run as a user with a delegated cgroup (systemd-run --user --scope -p Delegate=yes git loop ...)")
                .hint("or set `[limits] enforce = \"best-effort\"` in the operator config to run without caps"),
            SandboxError::TaskTimedOut { .. } => Error::failure(message).hint("something in the repository made git wait (a hook that never returns, a FIFO where a file should be): look with `git loop shell ID`, or `git loop doctor`"),
            SandboxError::NoBwrapForGit => unavailable
                .hint("install bubblewrap (Debian and Ubuntu: sudo apt-get install bubblewrap)"),
            SandboxError::HostCommand { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("check the command's name and that it is installed"),
        }
    }
}

impl From<PolicyError> for Error {
    fn from(e: PolicyError) -> Error {
        let message = e.to_string();
        match e {
            PolicyError::AllowDomain(_) => Error::usage(message).hint(
                "give a host name, *.example.com (its subdomains) or name.*.example.com (one label)",
            ),
            PolicyError::Hosts(why) => Error::failure(message).hint(why),
        }
    }
}

impl From<AgentError> for Error {
    fn from(e: AgentError) -> Error {
        let err = Error::failure(e.to_string());
        match e {
            AgentError::NotInstalled(_) => err
                .hint("install it (Claude Code: npm install -g @anthropic-ai/claude-code; Codex: npm install -g @openai/codex)")
                .hint("or choose another agent: git loop config set --operator agent.command '[\"codex\"]'"),
            AgentError::NoIdentity { .. } => err.hint(
                "set yours: git config --global user.name \"Your Name\" && git config --global user.email you@example.com",
            ),
            AgentError::SharedFolder { .. } => err.hint(
                "install the agent in a folder of its own (npm install -g, or ~/.local/bin with its files in a folder of their own)",
            ),
            AgentError::NotLoggedIn { vault, id, .. } => {
                let vault = if vault == crate::vault::DEFAULT_VAULT {
                    String::new()
                } else {
                    format!(" --vault {vault}")
                };
                let err = err.hint(format!(
                    "log it in: printf %s \"$KEY\" | git loop agent login{vault}"
                ));
                match id {
                    Some(id) => err.hint(format!(
                        "or start it anyway, to log in some other way: git loop agent {id} --no-login"
                    )),
                    None => err.hint("or make the loop only: git loop distill --no-agent"),
                }
            }
        }
    }
}
