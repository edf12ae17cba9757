//! Named points between the steps of commands that must survive being killed (`new`,
//! `publish`, `merge`, `autocommit`, `rm`, `sync`, `vault set`, `run`), for the crash
//! tests.
//!
//! In a test build (`debug_assertions`), `GIT_LOOP_FAILPOINT=<name>` makes [`hit`] at that
//! point kill this process's whole process group with SIGKILL, as a closed terminal or the
//! OOM killer would: git children included, no destructor run. `<name>@<micros>` instead
//! arms a timer there that kills the group that many microseconds later, wherever the
//! command then is (typically inside a git child that is writing). In a release build
//! [`hit`] is empty and the variable is never read.

/// A step boundary called `name` (`"merge:after-update-ref"`).
#[inline]
pub fn hit(name: &str) {
    #[cfg(debug_assertions)]
    armed::hit(name);
    #[cfg(not(debug_assertions))]
    let _ = name;
}

/// Whether `GIT_LOOP_FAILPOINT` names `name` (a test build only): for a point where the
/// test wants a step left undone rather than the process group killed (`layer:gone`, the
/// sandbox's layer ending before it lays anything).
#[inline]
pub fn named(name: &str) -> bool {
    #[cfg(debug_assertions)]
    return std::env::var_os("GIT_LOOP_FAILPOINT").is_some_and(|v| v == name);
    #[cfg(not(debug_assertions))]
    {
        let _ = name;
        false
    }
}

#[cfg(debug_assertions)]
mod armed {
    use std::time::Duration;

    pub fn hit(name: &str) {
        let Some(wanted) = std::env::var_os("GIT_LOOP_FAILPOINT") else {
            return;
        };
        let wanted = wanted.to_string_lossy();
        let (point, delay) = match wanted.split_once('@') {
            Some((point, micros)) => (point, micros.parse::<u64>().ok()),
            None => (wanted.as_ref(), None),
        };
        if point != name {
            return;
        }
        match delay {
            None => kill_group(),
            Some(micros) => {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_micros(micros));
                    kill_group();
                });
            }
        }
    }

    fn kill_group() {
        // SAFETY: getpgrp, getpid and kill touch no memory.
        unsafe {
            if libc::getpgrp() == libc::getpid() {
                // The leader of its own group (the tests start it so): the group, children
                // included.
                libc::kill(0, libc::SIGKILL);
            }
            // Never the group of whatever started it.
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    // Each test runs in a process of its own (nextest), so the variable is this test's.
    #[test]
    fn a_named_point_is_the_one_the_variable_names() {
        std::env::remove_var("GIT_LOOP_FAILPOINT");
        assert!(!super::named("layer:gone"));
        std::env::set_var("GIT_LOOP_FAILPOINT", "layer:gone");
        assert!(super::named("layer:gone"));
        assert!(!super::named("layer:gone2"));
        assert!(!super::named("run:started"));
    }
}
