//! The sandbox's pid 1: `git-loop __init -- COMMAND...`, started by bwrap with
//! `--as-pid-1` in place of bwrap's own init.
//!
//! Why not bwrap's: its init is bwrap itself, a process that exec'd a readable binary, so
//! the kernel keeps it dumpable, and every process inside (same uid, same Landlock domain)
//! passes the ptrace access check against it: `/proc/1/mem` opens read-write, and
//! `/proc/1/fd/*` and `/proc/1/environ` open too. bwrap has no option that changes this,
//! and `PR_SET_DUMPABLE` does not survive an exec, so pid 1 must be a process that sets it
//! itself and then never execs: this one. Non-dumpable, it fails every ptrace-mode check
//! made by a process without `CAP_SYS_PTRACE` (the sandbox has no capability), which closes
//! all of those files at once rather than one bind mount per file. What it costs is one
//! exec of this binary per run (BENCHMARKS.md, "Sandbox start").
//!
//! What it does is what bwrap's init did: start the command as its only child, reap every
//! orphan the pid namespace hands it, and end with the command's status when the command
//! ends (`128 + signal` when a signal ended it), which ends the namespace and every process
//! left in it.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

/// The hidden subcommand bwrap runs as pid 1.
pub const ARG: &str = "__init";

/// Makes this process non-dumpable: nothing without `CAP_SYS_PTRACE` opens its
/// `/proc/PID/mem`, `fd/`, `environ`, nor attaches to it. Every process of git-loop's
/// inside a sandbox calls it first thing.
pub fn not_dumpable() {
    // SAFETY: prctl with integer arguments touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

/// `git-loop __init -- COMMAND...`: never returns.
pub fn main(args: &[OsString]) -> ! {
    not_dumpable();
    let command: Vec<CString> = args
        .iter()
        .skip_while(|a| a.as_bytes() != b"--")
        .skip(1)
        .filter_map(|a| CString::new(a.as_bytes()).ok())
        .collect();
    if command.is_empty() {
        eprintln!("git-loop: __init needs a command after --");
        std::process::exit(2);
    }
    let mut argv: Vec<*const libc::c_char> = command.iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: fork in a single-threaded process; the child only makes system calls on
    // data prepared above before it execs or exits.
    let child = unsafe { libc::fork() };
    if child < 0 {
        eprintln!(
            "git-loop: cannot start {}: {}",
            command[0].to_string_lossy(),
            std::io::Error::last_os_error()
        );
        std::process::exit(1);
    }
    if child == 0 {
        // SAFETY: system calls on prepared data, then exec or _exit.
        unsafe {
            // The command starts as bwrap would have started it: default signal
            // dispositions (main() ignores SIGPIPE), an empty mask, killed with its parent.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            libc::execvp(argv[0], argv.as_ptr());
            let err = std::io::Error::last_os_error();
            let msg = format!(
                "git-loop: cannot run {}: {err}\n",
                command[0].to_string_lossy()
            );
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(if err.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
        }
    }
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes the status it is given.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == child {
            let code = if libc::WIFEXITED(status) {
                libc::WEXITSTATUS(status)
            } else if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                continue;
            };
            std::process::exit(code);
        }
        if pid < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // No child left: cannot happen before the command ended.
            std::process::exit(1);
        }
    }
}
