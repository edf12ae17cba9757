//! The boundary where domain errors become what the person at the terminal reads: each
//! domain error's exit code and its `hint:` lines, in one place. Domain modules say what
//! went wrong (typed errors naming the path, loop or key at fault); only here is it
//! decided which next step to suggest, since a hint names commands and options of the
//! command line. A domain function that returns an [`Error`] converts its typed error
//! with `?` or `.into()`, which runs the conversion below.

mod config;
mod vault;

use crate::agent::AgentError;
use crate::autocommit::CommitError;
use crate::config::edit::EditError;
use crate::create::NewError;
use crate::demo::DemoError;
use crate::error::{Error, ErrorKind};
use crate::gate::{self, Refused};
use crate::git::objects::ImportError;
use crate::hooks::HookError;
use crate::init::InitError;
use crate::loops::{operator_config_shown, LoopError, ReadError};
use crate::pr::PrError;
use crate::repos::RepoError;
use crate::sandbox::SandboxError;
use crate::workspace::WorkspaceError;

impl From<LoopError> for Error {
    fn from(e: LoopError) -> Error {
        let message = e.to_string();
        match e {
            LoopError::Ambiguous { ids, .. } => ids
                .iter()
                .fold(Error::usage(message), |err, id| {
                    err.hint(format!("did you mean {id}?"))
                })
                .hint("give more of the id"),
            LoopError::NotFound {
                query: _,
                similar,
                any,
            } => similar
                .iter()
                .fold(Error::usage(message), |err, id| {
                    err.hint(format!("did you mean {id}?"))
                })
                .hint(if any {
                    "`git loop list` shows the loops"
                } else {
                    "there are no loops yet: `git loop new TITLE` makes one"
                }),
            LoopError::Removed { query, folder } => Error::usage(message)
                .hint(format!(
                    "its branch loop/{query} still exists, but its folder {} is gone (removed, or deleted by hand)",
                    folder.display()
                ))
                .hint("`git loop list --all` shows it; `git loop doctor` explains"),
            LoopError::Broken { id, source } => {
                let fix = format!("fix the TOML in {} by hand", source.path().display());
                Error::failure(message)
                    .with_source(source)
                    .hint(fix)
                    .hint(format!(
                        "or remove the loop with `git loop rm {id} --force` (its branches stay)"
                    ))
            }
            LoopError::NoRecord { id, .. } => Error::failure(message)
                .hint(format!("remove the folder with `git loop rm {id} --force`")),
            LoopError::Unreadable { source, .. } => {
                let fix = format!(
                    "check that {} is a readable file (`ls -l` it)",
                    source.path().display()
                );
                Error::failure(message).with_source(source).hint(fix)
            }
        }
    }
}

impl From<EditError> for Error {
    fn from(e: EditError) -> Error {
        // What was typed is wrong (exit 2); a layer's file that is not TOML is not.
        let err = match e {
            EditError::NotToml { .. } => Error::failure(e.to_string()),
            _ => Error::usage(e.to_string()),
        };
        let did_you_mean = |err: Error, close: Option<String>| match close {
            Some(close) => err.hint(format!("did you mean `{close}`?")),
            None => err,
        };
        match e {
            EditError::Section { keys, .. } => err.hint(format!("its keys: {}", keys.join(", "))),
            EditError::UnknownKey { close, keys, .. } => {
                did_you_mean(err, close).hint(format!("known keys: {}", keys.join(", ")))
            }
            EditError::Invalid {
                key,
                close,
                choices,
                default,
                ..
            } => {
                let err = did_you_mean(err, close);
                match default {
                    _ if !choices.is_empty() => {
                        err.hint(format!("{key} takes one of: {}", choices.join(", ")))
                    }
                    Some(default) => err.hint(format!("the default is {key} = {default}")),
                    None => err,
                }
            }
            EditError::NoProfile {
                path, close, known, ..
            } => did_you_mean(
                err.hint(format!("{} does not exist", path.display())),
                close,
            )
            .hint(format!("the profiles: {}", known.join(", "))),
            EditError::OperatorOnly { key, operator, .. } => err.hint(format!(
                "the operator config is {}: git loop config set --operator {key} VALUE",
                operator.display()
            )),
            EditError::WrongType { key, default, .. } => {
                err.hint(format!("the default is {key} = {default}"))
            }
            EditError::NotToml { path, .. } => {
                err.hint(format!("fix or remove {}", path.display()))
            }
        }
    }
}

impl From<NewError> for Error {
    fn from(e: NewError) -> Error {
        let message = e.to_string();
        match e {
            NewError::EmptyTitle => Error::usage(message)
                .hint("give the loop a title, e.g. `git loop new \"fix login\"`, or leave it out"),
            NewError::LongTitle(_) => {
                Error::usage(message).hint("use a short title; put the details in the loop's notes")
            }
            NewError::ControlInTitle => Error::usage(message).hint("use a one-line title"),
            NewError::NoSeedChat(_) => Error::usage(message)
                .hint("give the path of a conversation transcript (a text file)"),
            NewError::ScratchWithCode => {
                Error::usage(message).hint("drop --scratch to work on a repository")
            }
            NewError::NoRepository(_) => {
                Error::usage(message).hint("name an existing repository with --repo PATH")
            }
            NewError::Context { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("`git loop doctor` checks the workspace"),
            NewError::LoopRepository(_) => Error::usage(message)
                .hint("run `git loop new` in the original repository (see `git loop show ID`)"),
            NewError::NoCommits(_) => {
                Error::usage(message).hint("make a first commit, then run `git loop new` again")
            }
            NewError::NoBase { .. } => Error::usage(message)
                .hint("give a branch, tag or commit id that `git rev-parse` knows"),
            NewError::Staging { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("check that the workspace folder is writable"),
            NewError::NoFreeId => {
                Error::failure(message).hint("`git loop gc` removes finished loops")
            }
        }
    }
}

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
            SandboxError::UnknownMode { .. } => {
                Error::failure(message).hint("use --mode work or --mode review")
            }
            SandboxError::UnknownNet { .. } => unavailable
                .hint("run with --net proxy, --net none (loopback only) or --net host"),
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
            SandboxError::Missing(_) => {
                Error::failure(message).hint("`git loop doctor` checks the workspace")
            }
            SandboxError::GrantMoved(path) => Error::failure(message).hint(format!(
                "look at what is there now; if it is right, grant it again: git loop grant ID --ro|--rw {}",
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
            SandboxError::HostCommand { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("check the command's name and that it is installed"),
        }
    }
}

impl From<RepoError> for Error {
    fn from(e: RepoError) -> Error {
        let message = e.to_string();
        match e {
            RepoError::NotARepository { source, .. } => Error {
                source: Some(source),
                ..Error::usage(message)
            }
            .hint("run `git loop new` inside a repository, name one with --repo PATH,")
            .hint("or make a loop without code with `git loop new --scratch TITLE`"),
            RepoError::Bare(_) => Error::usage(message)
                .hint("clone it (`git clone BARE work`) and run `git loop new` in the clone"),
            RepoError::GitDirOutside { .. } => Error::usage(message)
                .hint("loops need the repository's `.git` folder inside its top-level folder"),
            RepoError::Missing { link, .. } => Error::failure(message)
                .hint("move the repository back, or point the link at its new place:")
                .hint(format!("ln -sfn NEW-PATH {}", link.display())),
        }
    }
}

impl From<InitError> for Error {
    fn from(e: InitError) -> Error {
        let message = e.to_string();
        let writable =
            "set GIT_LOOP_HOME to a folder you can write, or fix the folder's permissions";
        let access = "check the URL and your access to it, then run `git loop init` again";
        match e {
            InitError::OtherRemote { path, url, .. } => Error::failure(message).hint(format!(
                "to use {url} instead: git -C {} remote set-url {} {url}",
                path.display(),
                crate::sync::REMOTE
            )),
            InitError::NoPermission(_) | InitError::NotWritable(_) => {
                Error::failure(message).hint(writable)
            }
            InitError::NotARepository(_) => {
                Error::failure(message).hint("move it away, then run `git loop init` again")
            }
            InitError::Clone { source, .. } | InitError::Unreachable { source, .. } => {
                Error::failure(message).with_source(source).hint(access)
            }
        }
    }
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        let id = &r.id;
        let mut e = Error::failure(r.to_string()).hint("nothing was changed");
        if r.secrets {
            e = e
                .hint(format!(
                    "take the secret out of the branch's history inside the loop (`git loop shell {id}`, \
                     then `git rebase -i`): a later commit that deletes it still carries it"
                ))
                .hint(
                    "a false positive: add its exact value to the operator config: \
                     git loop config set --operator guard.allow '[\"VALUE\"]'",
                );
        }
        if r.unscannable {
            e = e.hint(format!(
                "gitlinks, nested .git folders and files too large to scan never land: take them \
                 out of the branch's history inside the loop (`git loop shell {id}`)"
            ));
        }
        if !r.unaccepted.is_empty() {
            let flags: Vec<String> = r
                .unaccepted
                .iter()
                .map(|p| format!("--accept-policy {}", gate::shell_word(p)))
                .collect();
            e = e.hint(format!("review it first: git loop review {id}"));
            e = e.hint(format!(
                "to {} it with these policy changes: {} {}",
                r.what,
                r.retry,
                flags.join(" ")
            ));
        }
        e
    }
}

impl From<PrError> for Error {
    fn from(e: PrError) -> Error {
        let message = e.to_string();
        match e {
            PrError::Detached(_) => Error::usage(message)
                .hint("merge it locally with `git loop merge ID --into BRANCH`"),
            PrError::NothingToPropose(_) => {
                Error::usage(message).hint("publish its notes with `git loop publish`")
            }
            PrError::NoRemote { repo, .. } => Error::failure(message).hint(format!(
                "add one: git -C {} remote add origin URL",
                repo.display()
            )),
            PrError::Push { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("check your access to the remote, then run `git loop pr` again"),
            PrError::Open { url, .. } => Error::failure(message)
                .hint(format!("the branch is pushed; open it by hand: {url}")),
        }
    }
}

/// A sandbox can write every tree these read: the hints say so.
impl From<ReadError> for Error {
    fn from(e: ReadError) -> Error {
        let message = e.to_string();
        let tampered = |id: &str| {
            format!(
                "a sandbox can write the loop's repositories: look at what is there with `git loop shell {id}`, or remove the loop with `git loop rm --force {id}`"
            )
        };
        match e {
            ReadError::Import {
                branch,
                id,
                git_dir,
                source,
                ..
            } => {
                let hints = match &source {
                    ImportError::HashMismatch { .. } => vec![
                        "the loop's repository holds a corrupt object; nothing of it reached the origin"
                            .to_string(),
                    ],
                    ImportError::AlternatesTampered { .. } => vec![format!(
                        "restore {}/objects/info/alternates or remove the loop",
                        git_dir.display()
                    )],
                    ImportError::ObjectTooLarge { size, .. } => vec![
                        format!(
                            "the host inflates no object larger than import.max_object_size; to let this one in, raise it in the operator config ({}): [import] max_object_size = \"{}M\"",
                            operator_config_shown(),
                            size.div_ceil(1 << 20)
                        ),
                        format!(
                            "or drop the object from {branch} inside the loop (`git loop shell {id}`); nothing of it reached the origin"
                        ),
                    ],
                    ImportError::PacksTooLarge { size, .. } => vec![format!(
                        "the host holds no more than import.max_pack_size of a loop's packs in memory; raise it in the operator config ({}): [import] max_pack_size = \"{}M\"",
                        operator_config_shown(),
                        size.div_ceil(1 << 20)
                    )],
                    ImportError::Unsafe { .. } | ImportError::TooLarge { .. } => vec![tampered(&id)],
                    _ => vec!["`git loop doctor` checks the workspace".to_string()],
                };
                hints
                    .into_iter()
                    .fold(Error::failure(message).with_source(source), Error::hint)
            }
            ReadError::Worktree(path, source) => {
                Error::failure(message).with_source(source).hint(format!(
                    "a sandbox can write {}: look at what is there, or remove the loop with `git loop rm --force`",
                    path.display()
                ))
            }
            ReadError::Personal(path, source) => {
                Error::failure(message).with_source(source).hint(format!(
                    "a sandbox can write the files of {}: look at what is there",
                    path.display()
                ))
            }
            ReadError::Origin(_, source) => Error::failure(message)
                .with_source(source)
                .hint("`git loop doctor` checks the workspace"),
            ReadError::Branches { id, source, .. } => {
                Error::failure(message).with_source(source).hint(tampered(&id))
            }
        }
    }
}

impl From<DemoError> for Error {
    fn from(e: DemoError) -> Error {
        let message = e.to_string();
        match e {
            DemoError::Unreadable(_, source) => Error::failure(message)
                .with_source(source)
                .hint("give a new folder: git loop demo --dir DIR"),
            DemoError::NotEmpty(_) => {
                Error::usage(message).hint("give a new or empty folder: git loop demo --dir DIR")
            }
            DemoError::Uncreatable(_, source) => Error::failure(message)
                .with_source(source)
                .hint("give a folder you can write to: git loop demo --dir DIR"),
            DemoError::Step { .. } => Error::failure(message)
                .hint("its message is above; `git loop doctor` checks the machine"),
        }
    }
}

impl From<CommitError> for Error {
    fn from(e: CommitError) -> Error {
        let err = Error::failure(e.to_string());
        match e {
            CommitError::InLoop { id, .. } => err.hint(format!("look with `git loop shell {id}`")),
            CommitError::Busy { id, .. } => err.hint(format!(
                "finish or abort what is in progress with `git loop shell {id}`"
            )),
            CommitError::PersonalBusy { dir, .. } => {
                err.hint(format!("finish or abort it in {}", dir.display()))
            }
            CommitError::Personal(_) => {
                err.hint("look with `git status` in the personal repository, or `git loop doctor`")
            }
        }
    }
}

impl From<WorkspaceError> for Error {
    fn from(e: WorkspaceError) -> Error {
        let message = e.to_string();
        match e {
            WorkspaceError::NoHome => Error::failure(message)
                .hint("set HOME, or set GIT_LOOP_HOME to the workspace folder"),
            WorkspaceError::NoUser => {
                Error::failure(message).hint("set GIT_LOOP_USER to your user name")
            }
            WorkspaceError::BadUser(_) => Error::usage(message)
                .hint("set GIT_LOOP_USER to a name of letters, digits, '.', '_' or '-'"),
        }
    }
}

impl From<HookError> for Error {
    fn from(e: HookError) -> Error {
        let message = e.to_string();
        match e {
            HookError::NoHooksFolder(_, source) => Error::failure(message)
                .with_source(source)
                .hint("is it a git repository? git loop doctor checks the workspace"),
            HookError::Symlink { hook, .. } => Error::failure(message).hint(format!(
                "add the line `git-loop hook {hook} \"$@\" || exit $?` to the script it points at"
            )),
            HookError::Markers { hook, source, .. } => {
                Error::failure(message).with_source(source).hint(format!(
                    "call `git-loop hook {hook} \"$@\"` from it yourself"
                ))
            }
        }
    }
}

impl From<AgentError> for Error {
    fn from(e: AgentError) -> Error {
        let err = Error::failure(e.to_string());
        match e {
            AgentError::NotInstalled(_) => err
                .hint("install it (Claude Code: npm install -g @anthropic-ai/claude-code; Codex: npm install -g @openai/codex)")
                .hint("or choose another agent: git loop config set agent.command '[\"codex\"]'"),
            AgentError::SharedFolder { .. } => err.hint(
                "install the agent in a folder of its own (npm install -g, or ~/.local/bin with its files in a folder of their own)",
            ),
        }
    }
}
