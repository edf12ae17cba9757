//! The one place that starts `git`.
//!
//! gix does the reads and the imports; git is still used where it is the better tool and
//! the repository is trusted: cloning the team's remotes (any transport, the user's
//! credentials), checking out a working tree (the user's filters and LFS apply as in any
//! checkout), and committing the workspace's own scaffolding. Never in a loop repository
//! that a sandbox has seen: the agent could have planted hooks or config there.
//!
//! The environment is cleared to an allowlist so that a variable such as `GIT_DIR` or
//! `GIT_INDEX_FILE` inherited from a hook can never redirect a command to another
//! repository, and every error carries the argv that failed.

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use crate::error::Error;

/// Host variables a git command keeps: what it needs to find its config, the user's
/// identity and credentials, and a locale.
const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TERM",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_AUTH_SOCK",
    "SSH_ASKPASS",
    "EMAIL",
];

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot start `{argv}`")]
    Spawn {
        argv: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{argv}` failed: {stderr}")]
    Failed { argv: String, stderr: String },
}

/// A git invocation being built.
pub struct Git {
    cmd: Command,
    argv: Vec<OsString>,
    outlive_parent: bool,
}

/// A resource limit a git command and every process it starts run under (`setrlimit`,
/// inherited across fork and exec): soft and hard, lowered to the current hard limit where
/// that is lower already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rlimit {
    pub resource: libc::__rlimit_resource_t,
    pub value: u64,
}

impl Git {
    /// `git -C dir ...`
    pub fn in_dir(dir: &Path) -> Git {
        let mut git = Git::bare();
        git.cmd.current_dir(dir);
        git.argv.push(format!("-C {}", dir.display()).into());
        git
    }

    /// `git ...` in the current directory.
    pub fn bare() -> Git {
        let mut cmd = Command::new("git");
        cmd.env_clear();
        for key in PASSED_ENV {
            if let Some(value) = std::env::var_os(key) {
                cmd.env(key, value);
            }
        }
        // Never ask on a terminal the user may not be watching; a clone that needs a
        // password fails and says so.
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        // A read (`status`) never takes the index's lock to save what it refreshed: a kill
        // of git-loop would leave that lock in the user's repository, indistinguishable
        // from the user's own git at work.
        cmd.env("GIT_OPTIONAL_LOCKS", "0");
        cmd.stdin(Stdio::null());
        Git {
            cmd,
            argv: vec!["git".into()],
            outlive_parent: false,
        }
    }

    /// Lets this git finish whatever happens to git-loop: it does not die with it, and runs
    /// in a process group of its own, so a kill of git-loop's group (a closed terminal, a
    /// `kill -9 -PGID`) does not reach it either. For a short command whose half-done
    /// state could not be told from the user's own git at work: `update-ref`, whose lock
    /// files (`refs/heads/<branch>.lock`, `HEAD.lock`) hold nothing that names their owner.
    pub fn outlive_parent(mut self) -> Git {
        self.outlive_parent = true;
        self.cmd.process_group(0);
        self
    }

    /// git dies with git-loop, unless asked otherwise: a git left writing a checkout or an
    /// index after git-loop was killed would race the recovery of what it was doing.
    fn die_with_parent(&mut self) {
        if self.outlive_parent {
            return;
        }
        let parent = std::process::id();
        // SAFETY: the closure only makes async-signal-safe system calls (prctl, getppid,
        // _exit) on plain integers, as pre_exec requires.
        unsafe {
            self.cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // git-loop died before the line above: nothing would ever signal this one.
                if libc::getppid() as u32 != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }

    /// Runs git, and every process it starts, under `limits`. A limit that cannot be set
    /// fails the start of the command with the system's reason: git never runs unbounded
    /// when it was meant to be bounded.
    pub fn rlimits(mut self, limits: &[Rlimit]) -> Git {
        let limits = limits.to_vec();
        // SAFETY: the closure makes only async-signal-safe system calls (getrlimit,
        // setrlimit) on values allocated before the fork, as pre_exec requires.
        unsafe {
            self.cmd.pre_exec(move || {
                for limit in &limits {
                    let mut current = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    if libc::getrlimit(limit.resource, &mut current) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let value = limit.value.min(current.rlim_max);
                    let wanted = libc::rlimit {
                        rlim_cur: value,
                        rlim_max: value,
                    };
                    if libc::setrlimit(limit.resource, &wanted) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        self
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Git {
        self.argv.push(arg.as_ref().to_owned());
        self.cmd.arg(arg);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Git
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        for a in args {
            self = self.arg(a);
        }
        self
    }

    /// Sets a variable for this command only (commit identity and dates).
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Git {
        self.cmd.env(key, value);
        self
    }

    fn argv_string(&self) -> String {
        self.argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs to completion; a non-zero exit is an error carrying git's stderr.
    pub fn output(mut self) -> Result<Output, GitError> {
        self.die_with_parent();
        let argv = self.argv_string();
        let out = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|source| GitError::Spawn {
                argv: argv.clone(),
                source,
            })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            let stderr = if stderr.is_empty() {
                format!("exit status {}", out.status)
            } else {
                stderr
            };
            return Err(GitError::Failed { argv, stderr });
        }
        Ok(out)
    }

    /// Runs to completion whatever the exit status, for commands whose status is an
    /// answer (`merge-tree` exits 1 on conflicts).
    pub fn output_any(mut self) -> Result<Output, GitError> {
        self.die_with_parent();
        let argv = self.argv_string();
        self.cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|source| GitError::Spawn { argv, source })
    }

    /// Runs to completion with `input` on its stdin (paths for `--stdin` modes), whatever
    /// the exit status.
    pub fn output_with_input(mut self, input: &[u8]) -> Result<Output, GitError> {
        use std::io::Write;
        self.die_with_parent();
        let argv = self.argv_string();
        let spawn_err = |source| GitError::Spawn {
            argv: argv.clone(),
            source,
        };
        let mut child = self
            .cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_err)?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let input = input.to_vec();
        // Written from a thread: git may fill its stdout before it has read all its input.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().map_err(spawn_err)?;
        let _ = writer.join();
        Ok(out)
    }

    /// Runs to completion, returning stdout as text.
    pub fn read(self) -> Result<String, GitError> {
        let out = self.output()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs to completion, discarding stdout.
    pub fn run(self) -> Result<(), GitError> {
        self.output().map(|_| ())
    }

    /// Starts the command and returns at once, for work that can overlap with ours.
    pub fn spawn(mut self) -> Result<Running, GitError> {
        self.die_with_parent();
        let argv = self.argv_string();
        let child = self
            .cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| GitError::Spawn {
                argv: argv.clone(),
                source,
            })?;
        Ok(Running { child, argv })
    }
}

/// A git command started by [`Git::spawn`].
pub struct Running {
    child: Child,
    argv: String,
}

impl Running {
    pub fn wait_read(self) -> Result<String, GitError> {
        let out = self
            .child
            .wait_with_output()
            .map_err(|source| GitError::Spawn {
                argv: self.argv.clone(),
                source,
            })?;
        if !out.status.success() {
            return Err(GitError::Failed {
                argv: self.argv,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl From<GitError> for Error {
    fn from(err: GitError) -> Self {
        Error::failure("git failed").with_source(err)
    }
}
