//! The sandbox's pid 1: `git-loop __init -- COMMAND...`, started by bwrap with
//! `--as-pid-1` in place of bwrap's own init.
//!
//! Why not bwrap's: its init is bwrap itself, a process that exec'd a readable binary, so
//! the kernel keeps it dumpable, and every process inside (same uid, same Landlock domain)
//! passes the ptrace access check against it: `/proc/1/mem` opens read-write, and
//! `/proc/1/fd/*` and `/proc/1/environ` open too. bwrap has no option that changes this,
//! and `PR_SET_DUMPABLE` does not survive an exec, so pid 1 must be a process that sets it
//! itself and then never execs: this one. Non-dumpable, it fails every ptrace-mode check
//! made by a process without `CAP_SYS_PTRACE` (no process inside has a capability), which
//! closes all of those files at once rather than one bind mount per file. What it costs is
//! one exec of this binary per run (BENCHMARKS.md, "Sandbox start").
//!
//! Its capabilities: bwrap grants it `CAP_SYS_PTRACE` and `CAP_SETPCAP` of the sandbox's
//! user namespace; before anything else it empties every set but `CAP_SYS_PTRACE`
//! permitted, which only the supervisor's thread raises, around the open of a caller's
//! /proc entries, and the command's process drops between fork and exec (caps.rs). Holding
//! a capability the others lack is one more reason their ptrace checks against it fail.
//!
//! What it does is what bwrap's init did: start the command as its only child, reap every
//! orphan the pid namespace hands it, and end with the command's status when the command
//! ends (`128 + signal` when a signal ended it), which ends the namespace and every process
//! left in it.
//!
//! With `--deny-create PATTERN`s, `--watch-writes` or `--watch-reads` it is also the
//! supervisor of the calls that make names, write or read (creation.rs): the command's
//! process installs the notify filter between fork and exec and sends init the
//! listener; init answers those calls from a thread of its own and reports refusals on
//! `--report-fd`. If that thread ever stops, init ends, and the sandbox with it. Without
//! a supervisor it keeps no capability at all.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use super::{caps, creation};

/// The hidden subcommand bwrap runs as pid 1.
pub const ARG: &str = "__init";

/// Makes this process non-dumpable: nothing without `CAP_SYS_PTRACE` opens its
/// `/proc/PID/mem`, `fd/`, `environ`, nor attaches to it. Every process of git-loop's
/// inside a sandbox calls it first thing.
pub fn not_dumpable() {
    // SAFETY: prctl with integer arguments touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

/// Asks for the laid mounts on `laying`'s descriptor: the channel, close-on-exec, to wait
/// on with [`wait_for_laid`].
fn ask_for_laid(laying: &creation::Laying) -> Result<std::fs::File, String> {
    use std::io::Write;
    // SAFETY: a descriptor bwrap passed on, init's alone; owned (and closed) here.
    let mut channel = unsafe {
        libc::fcntl(laying.0, libc::F_SETFD, libc::FD_CLOEXEC);
        std::fs::File::from_raw_fd(laying.0)
    };
    channel
        .write_all(LAY)
        .map_err(|e| format!("cannot ask for its mounts: {e}"))?;
    Ok(channel)
}

/// Waits on `channel` for the word that the laid mounts are there (anything else, or the
/// channel closed, and nothing runs); then checks that each of `laid` stands at its path
/// (no link followed), the root of a mount of the file or folder the host laid (device
/// and inode), read-only where it is not writable. Nothing of the sandbox has run yet, so
/// nothing inside can have moved them; this is the check that what the layer laid on the
/// host's side reached the sandbox where bwrap's binds show it.
fn wait_for_laid(mut channel: std::fs::File, laid: &[creation::LaidCheck]) -> Result<(), String> {
    use std::io::Read;
    let mut word = [0u8; 1];
    channel
        .read_exact(&mut word)
        .map_err(|e| format!("was not given its mounts: {e}"))?;
    drop(channel);
    if word != *LAID {
        return Err("was not given its mounts".into());
    }
    for creation::LaidCheck {
        inside,
        rw,
        dev,
        ino,
    } in laid
    {
        let at = CString::new(inside.as_os_str().as_bytes())
            .map_err(|_| format!("cannot check {}", inside.display()))?;
        let not = |what: &str| format!("found {} {what}", inside.display());
        // SAFETY: statx and statvfs write the zeroed local structs they are given.
        unsafe {
            let mut st: libc::statx = std::mem::zeroed();
            if libc::statx(
                libc::AT_FDCWD,
                at.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW | libc::AT_NO_AUTOMOUNT,
                libc::STATX_BASIC_STATS,
                &mut st,
            ) != 0
            {
                return Err(not(&format!(
                    "missing ({})",
                    std::io::Error::last_os_error()
                )));
            }
            // A kernel that does not say (before 5.8) leaves the bit clear: refused.
            if st.stx_attributes & libc::STATX_ATTR_MOUNT_ROOT as u64 == 0 {
                return Err(not("not mounted"));
            }
            if (st.stx_dev_major, st.stx_dev_minor) != *dev || st.stx_ino != *ino {
                return Err(not("holding another file"));
            }
            let mut vfs: libc::statvfs = std::mem::zeroed();
            if libc::statvfs(at.as_ptr(), &mut vfs) != 0 {
                return Err(not(&format!(
                    "unreadable ({})",
                    std::io::Error::last_os_error()
                )));
            }
            if !rw && vfs.f_flag & libc::ST_RDONLY == 0 {
                return Err(not("writable"));
            }
        }
    }
    Ok(())
}

/// What init sends on its `--laid-fd` once bwrap has made its mounts, and the answer once
/// the laid ones are there (spawn.rs).
pub const LAY: &[u8; 1] = b"l";
pub const LAID: &[u8; 1] = b"L";

/// `git-loop __init -- COMMAND...`: never returns.
pub fn main(args: &[OsString]) -> ! {
    not_dumpable();
    let (patterns, watch, report_fd, laying) = creation::parse_init_args(args);
    // Before anything else, the mounts laid once bwrap has made its own (bwrap.rs, `Laid`)
    // are asked for; they are laid while init sets itself up, and waited for before the
    // command starts.
    let laid_channel = laying.as_ref().map(|laying| {
        ask_for_laid(laying).unwrap_or_else(|why| {
            eprintln!("git-loop: the sandbox's init {why}");
            std::process::exit(1);
        })
    });
    let supervises = !patterns.is_empty()
        || watch.writes
        || watch.reads
        || !watch.names.is_empty()
        || !watch.pins.is_empty();
    // Before any other thread: every capability bwrap granted is dropped from every set,
    // but CAP_SYS_PTRACE kept permitted for the supervisor (caps.rs).
    if let Err(why) = caps::settle(supervises) {
        eprintln!("git-loop: the sandbox's init {why}");
        std::process::exit(1);
    }
    not_dumpable();
    // The report pipe is init's alone: never inherited by the command, never waited on.
    let report = report_fd.map(|fd| {
        // SAFETY: fcntl on a descriptor bwrap passed on; init owns it from here.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            let fl = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
            std::fs::File::from_raw_fd(fd)
        }
    });
    // Prepared before the fork: the child only makes system calls on it.
    let supervised = supervises.then(|| {
        let program = creation::program(watch.sent());
        let pair = std::os::unix::net::UnixStream::pair().unwrap_or_else(|e| {
            eprintln!("git-loop: cannot set up the creation supervisor: {e}");
            std::process::exit(1);
        });
        (program, OwnedFd::from(pair.0), OwnedFd::from(pair.1))
    });
    let fprog = supervised.as_ref().map(|(p, _, _)| libc::sock_fprog {
        len: p.len() as u16,
        filter: p.as_ptr() as *mut libc::sock_filter,
    });
    let child_end = supervised.as_ref().map_or(-1, |(_, _, c)| c.as_raw_fd());
    // The supervisor's thread starts before the command does: once the command runs, a
    // limit on processes (`[limits] pids`) may leave no room for a thread, and every
    // call the command sends would then wait forever. It waits for the listener the
    // command's process sends; the forked child below makes only system calls on memory
    // prepared before the fork, so the second thread does not trouble it.
    let (supervised, child_end_owned) = match supervised {
        Some((program, init_end, child_end_fd)) => {
            let started = std::thread::Builder::new()
                .name("supervisor".into())
                .spawn(move || {
                    let listener = creation::receive_listener(&init_end).unwrap_or_else(|e| {
                        // The command runs with no one to answer: its calls would wait
                        // or fail; ended rather than left so (pid 1 ends, and with it
                        // every process inside).
                        eprintln!(
                            "git-loop: the creation supervisor did not get its listener: {e}"
                        );
                        std::process::exit(1);
                    });
                    drop(init_end);
                    let supervisor = creation::Supervisor::new(listener, patterns, watch, report);
                    let why = supervisor.serve();
                    // Fail closed: pid 1 ends, and the kernel ends every process inside.
                    eprintln!("git-loop: the creation supervisor stopped: {why}");
                    std::process::exit(1);
                });
            if started.is_err() {
                eprintln!("git-loop: cannot start the creation supervisor");
                std::process::exit(1);
            }
            (Some(program), Some(child_end_fd))
        }
        None => (None, None),
    };
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
    // Asked before the fork: the child only makes system calls.
    let killable = creation::killable_wait();
    if let (Some(channel), Some((_, laid))) = (laid_channel, &laying) {
        if let Err(why) = wait_for_laid(channel, laid) {
            eprintln!("git-loop: the sandbox's init {why}");
            std::process::exit(1);
        }
    }
    // SAFETY: fork while the only other thread (the supervisor's) waits for its
    // listener; the child only makes system calls on data prepared above before it
    // execs or exits (glibc keeps its allocator usable across fork for the error paths).
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
            // No capability in any set: the one init keeps is init's alone.
            let errno = caps::drop_in_child();
            if errno != 0 {
                let msg = format!(
                    "git-loop: cannot drop the capabilities of the command: {}\n",
                    std::io::Error::from_raw_os_error(errno)
                );
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(126);
            }
            // The creation filter, last before exec: nothing of the command runs without
            // it, and a filter that cannot be had ends the run here.
            if let Some(fprog) = &fprog {
                let errno = creation::install_and_send(fprog, child_end, killable);
                if errno != 0 {
                    let msg = format!(
                        "git-loop: cannot install the creation filter: {}\n",
                        std::io::Error::from_raw_os_error(errno)
                    );
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                    libc::_exit(126);
                }
            }
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
    // init reads nothing: its standard input, the command's now, becomes /dev/null, so
    // that no path reaching init's own descriptors (`/proc/1/fd/0`, a link to
    // `/proc/self/fd/0` opened by the supervisor as init) opens again, for writing, a
    // file the command was handed to read.
    if let Ok(null) = std::fs::File::open("/dev/null") {
        // SAFETY: dup2 onto init's own standard input.
        unsafe { libc::dup2(null.as_raw_fd(), 0) };
    }
    // The child has its copy; the supervisor's receive ends if the child ends unsent.
    drop(child_end_owned);
    // The filter program lives until here: the child used it before its exec.
    drop(supervised);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    /// init's side of the channel, as bwrap hands it over, and the layer's side.
    fn channel() -> (creation::Laying, UnixStream) {
        let (init, layer) = UnixStream::pair().unwrap();
        (
            (std::os::fd::IntoRawFd::into_raw_fd(init), Vec::new()),
            layer,
        )
    }

    /// The command starts only on the layer's word that the mounts are laid, and only
    /// once each stands where it should: a mount's root, read-only unless writable.
    #[test]
    fn init_waits_for_the_word_and_checks_each_laid_mount() {
        let run_with =
            |answer: Option<&[u8]>, laid: &[(&str, bool)], change: fn(&mut creation::LaidCheck)| {
                let (laying, mut layer) = channel();
                let asked = ask_for_laid(&laying).unwrap();
                let mut word = [0u8; 1];
                layer.read_exact(&mut word).unwrap();
                assert_eq!(&word, LAY);
                if let Some(answer) = answer {
                    layer.write_all(answer).unwrap();
                }
                drop(layer);
                let laid: Vec<creation::LaidCheck> = laid
                    .iter()
                    .map(|(p, rw)| {
                        // What the host laid: the file or folder found there (or none).
                        let (dev, ino) = std::fs::symlink_metadata(p)
                            .map(|m| {
                                use std::os::unix::fs::MetadataExt;
                                let d = m.dev();
                                ((libc::major(d), libc::minor(d)), m.ino())
                            })
                            .unwrap_or(((0, 0), 0));
                        let mut check = creation::LaidCheck {
                            inside: p.into(),
                            rw: *rw,
                            dev,
                            ino,
                        };
                        change(&mut check);
                        check
                    })
                    .collect();
                wait_for_laid(asked, &laid)
            };
        let run = |answer: Option<&[u8]>, laid: &[(&str, bool)]| run_with(answer, laid, |_| {});
        // No word (the layer failed or never ran), or another word: nothing runs.
        assert!(run(None, &[])
            .unwrap_err()
            .contains("was not given its mounts"));
        assert!(run(Some(b"x"), &[])
            .unwrap_err()
            .contains("was not given its mounts"));
        // The word, and a path that is no mount's root, or missing.
        let plain = tempfile::tempdir().unwrap();
        let plain = plain.path().to_str().unwrap();
        assert!(run(Some(LAID), &[(plain, true)])
            .unwrap_err()
            .contains("not mounted"));
        assert!(run(Some(LAID), &[("/nonexistent/x", true)])
            .unwrap_err()
            .contains("missing"));
        // A link to a mount's root is no mount at the path: it is not followed.
        let links = tempfile::tempdir().unwrap();
        let link = links.path().join("proc");
        std::os::unix::fs::symlink("/proc", &link).unwrap();
        assert!(run(Some(LAID), &[(link.to_str().unwrap(), true)])
            .unwrap_err()
            .contains("not mounted"));
        // A writable mount where a read-only one should stand.
        assert!(run(Some(LAID), &[("/proc", false)])
            .unwrap_err()
            .contains("writable"));
        // A mount's root that is not what the host laid.
        assert!(run_with(Some(LAID), &[("/proc", true)], |c| c.ino += 1)
            .unwrap_err()
            .contains("holding another file"));
        // Twin: the word, and the mount's root the host laid, which may be writable.
        assert_eq!(run(Some(LAID), &[("/proc", true)]), Ok(()));
    }
}
