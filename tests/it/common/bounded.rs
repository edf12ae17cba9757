//! Running a command of ours with a bound on its time, measuring its peak memory: a host
//! command that blocks on what a sandbox planted fails the test instead of hanging it.

use std::ffi::OsStr;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::{Run, TestEnv};

/// What a bounded command did.
pub struct Measured {
    pub run: Run,
    /// Peak resident set of git-loop and of the descendants it waited for, in KiB
    /// (`ru_maxrss` of `wait4`).
    pub max_rss_kib: u64,
}

impl TestEnv {
    /// `git loop ARGS` in the test's root folder, killed (and the test failed) if it has not
    /// finished within `limit`.
    #[track_caller]
    pub fn run_within<I, S>(&self, limit: Duration, args: I) -> Measured
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<_> = args
            .into_iter()
            .map(|a| a.as_ref().to_os_string())
            .collect();
        // Waited for below with wait4, which std's wait would not give the rusage of.
        #[allow(clippy::zombie_processes)]
        let mut child = self
            .command()
            .current_dir(&self.root)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start git-loop");
        let pipe = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = r.read_to_end(&mut buf);
                String::from_utf8_lossy(&buf).into_owned()
            })
        };
        let stdout = pipe(Box::new(child.stdout.take().unwrap()));
        let stderr = pipe(Box::new(child.stderr.take().unwrap()));
        let pid = child.id() as libc::pid_t;
        let started = Instant::now();
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `pid` is our own child, not yet waited for; both pointers are valid.
            let got = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
            if got == pid {
                break;
            }
            assert!(
                got == 0,
                "wait4 failed: {}",
                std::io::Error::last_os_error()
            );
            if started.elapsed() > limit {
                let _ = child.kill();
                // SAFETY: as above; this time waiting for the killed child.
                unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
                let out = stdout.join().unwrap_or_default();
                let err = stderr.join().unwrap_or_default();
                panic!(
                    "git loop {args:?} did not finish within {limit:?} (killed)\nstdout:\n{out}\nstderr:\n{err}"
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        };
        Measured {
            run: Run {
                code,
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            },
            max_rss_kib: usage.ru_maxrss as u64,
        }
    }
}
