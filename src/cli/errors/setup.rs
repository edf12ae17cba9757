//! What the person reads when the workspace, a loop, the configuration, hooks or the schedule
//! cannot be set up as asked.

use crate::create::NewError;
use crate::demo::DemoError;
use crate::error::Error;
use crate::hooks::HookError;
use crate::init::InitError;
use crate::repos::RepoError;
use crate::schedule::ScheduleError;
use crate::workspace::WorkspaceError;

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
            NewError::NotInRepository(_) => Error::usage(message)
                .hint("run it inside a repository, or name one: git loop new --repo PATH")
                .hint("for a loop without code (notes, research): git loop new --scratch"),
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
            NewError::TooLarge { found, .. } => Error::failure(message)
                .hint(format!(
                    "if the object is meant to be there, raise the limit: git loop config set --operator import.max_object_size {}",
                    crate::checkout::bound::raise_to(found.size)
                ))
                .hint("otherwise take it out of the trunk's history (git rm, or a revert, and publish)"),
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
            InitError::TooLarge { found, .. } => Error::failure(message).hint(format!(
                "if the object is meant to be there, raise the limit: git loop config set --operator import.max_object_size {}",
                crate::checkout::bound::raise_to(found.size)
            )),
            InitError::Bounded {
                exceeded, bounds, ..
            } => Error::failure(message).hint(crate::sync::bounded_hint(&exceeded, &bounds)),
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
            WorkspaceError::RelativeHome { here, .. } => {
                let err = Error::usage(message).hint(
                    "give the workspace folder as an absolute path (a relative one would name another workspace in every folder)",
                );
                match here {
                    Some(here) => err.hint(format!(
                        "from here that is: export GIT_LOOP_HOME={}",
                        crate::terminal::shown(&here.display().to_string())
                    )),
                    None => err,
                }
            }
            WorkspaceError::HomeNotAFolder(_) => Error::usage(message).hint(
                "point GIT_LOOP_HOME at the workspace folder (or at a path that does not exist yet, where one is made), or unset it for ~/.local/share/git-loop",
            ),
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

impl From<ScheduleError> for Error {
    fn from(e: ScheduleError) -> Error {
        let message = e.to_string();
        match e {
            ScheduleError::Timer { unit, .. } => Error::failure(message)
                .hint(format!("look with `systemctl --user status {unit}.timer`")),
            ScheduleError::Crontab { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("install cron (Debian: sudo apt-get install cron)"),
        }
    }
}
