//! The one capability the sandbox's pid 1 keeps: `CAP_SYS_PTRACE` in the sandbox's own
//! user namespace, so that its supervisor (creation.rs) can read the path a
//! non-dumpable process passes (`/proc/TID/mem`) and open that process's working folder
//! and descriptors (`/proc/TID/cwd`, `/proc/TID/fd/N`) as the process itself could.
//!
//! Why. A process that made itself non-dumpable (`ssh-agent`, `gpg-agent`, any
//! `prctl(PR_SET_DUMPABLE, 0)`, an exec of a file it cannot read) fails every ptrace
//! access check made by a process without `CAP_SYS_PTRACE` in the user namespace its
//! memory was made in, the same uid or not. Without it the supervisor could only refuse
//! such a process's judged calls (`eval $(ssh-agent)` failed in every run that judges a
//! name) and leave its other calls to the kernel unreported.
//!
//! What else was weighed: `process_vm_readv` and `pidfd_getfd` make the same check;
//! asking the caller for the bytes (a shared page) would trust what the caller says;
//! making every process dumpable again (a filter refusing `PR_SET_DUMPABLE`) would break
//! what those programs protect (another process inside could then read an agent's keys).
//! The capability is the kernel's own answer, and held as below it gives the command
//! nothing.
//!
//! How it is held. bwrap grants it with `--cap-add` (with `CAP_SETPCAP`, which is what
//! emptying the bounding set takes); it is the namespace's capability, worth nothing
//! outside it. bwrap 0.8 unprivileged (not setuid) takes `--cap-add` after
//! `--cap-drop ALL` from any user, and puts what it adds in every set of the process it
//! execs, the bounding and ambient ones included, so they survive that exec whatever the
//! uid inside (`--uid 1000` as well as 0). [`settle`], first thing in pid 1 before any other thread exists, empties
//! the bounding, ambient and inheritable sets, gives up `CAP_SETPCAP`, and keeps
//! `CAP_SYS_PTRACE` *permitted only*: no thread of pid 1 has an effective capability.
//! Capabilities are a thread's own, so [`as_tracer`] raises it in the calling thread
//! only, around one open of a caller's /proc entry (the access check is made at open:
//! the descriptor then reads as any other), where that open failed without it
//! ([`tracing_if_refused`]: a dumpable caller's never needs it), and lowers it before
//! returning; if it cannot
//! be lowered, pid 1 aborts, and the sandbox ends. Everything pid 1 does *for* a caller
//! (opens, `mkdir`, `rename`, ...) therefore runs with no effective capability: the
//! kernel's checks are the caller's. The command's process drops it from every set
//! between fork and exec ([`drop_in_child`]); commands joined into a live session are
//! forked by that process's descendants, so they start with none as well.
//!
//! Where it cannot be had (a setuid bwrap, which refuses `--cap-add` from anyone but
//! root; a bwrap that did not grant it), pid 1 holds nothing and the supervisor refuses
//! a non-dumpable process's judged calls, as it says in their event.
//!
//! Hand-written with libc: capget/capset are two system calls, and [`drop_in_child`] runs
//! in a forked child, where only system calls on memory prepared before the fork are
//! sound.

use std::sync::atomic::{AtomicBool, Ordering};

const CAP_SETPCAP: u32 = 8;
const CAP_SYS_PTRACE: u32 = 19;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct Header {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Data {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Whether this process holds `CAP_SYS_PTRACE` (permitted) for [`as_tracer`].
static HELD: AtomicBool = AtomicBool::new(false);

fn bit(cap: u32) -> (usize, u32) {
    ((cap / 32) as usize, 1 << (cap % 32))
}

/// The calling thread's sets.
fn get() -> Option<[Data; 2]> {
    let mut hdr = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget fills the header and the two words it is given.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) };
    (r == 0).then_some(data)
}

/// Sets the calling thread's sets (only this thread's: capset with pid 0); the errno.
fn set(data: &[Data; 2]) -> Result<(), i32> {
    let mut hdr = Header {
        version: VERSION_3,
        pid: 0,
    };
    // SAFETY: capset reads the header and the two words it is given.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

fn has(data: &[Data; 2], cap: u32) -> bool {
    let (w, b) = bit(cap);
    data[w].permitted & b != 0
}

/// In pid 1, before any other thread: every set emptied but `CAP_SYS_PTRACE` in the
/// permitted one, kept where `keep` (the supervisor runs), where it was granted, and
/// where the bounding set could be emptied (else the command could have it back). Returns
/// whether it is held; `Err` where a capability could not be dropped (pid 1 then ends:
/// it never runs a command with more than it should).
pub fn settle(keep: bool) -> Result<bool, String> {
    let Some(mut now) = get() else {
        return Err(format!(
            "cannot read its capabilities: {}",
            std::io::Error::last_os_error()
        ));
    };
    let granted = has(&now, CAP_SYS_PTRACE);
    if has(&now, CAP_SETPCAP) {
        // Effective as bwrap left it (it may not be, with uid 0 inside): needed to empty
        // the bounding set.
        for d in &mut now {
            d.effective = d.permitted;
        }
        set(&now).map_err(|e| format!("cannot use its capabilities: errno {e}"))?;
        // Every capability this kernel knows, up to the first it does not (EINVAL).
        for cap in 0..64 {
            // SAFETY: prctl with integer arguments.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(format!("cannot empty its bounding set: {e}"));
            }
        }
    }
    // SAFETY: prctl with integer arguments. Where ambient capabilities are unknown
    // (before 4.3), there are none to clear.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let bounded = bounding_empty();
    let kept = keep && granted && bounded;
    let mut next = [Data::default(); 2];
    if kept {
        let (w, b) = bit(CAP_SYS_PTRACE);
        next[w].permitted = b;
    }
    set(&next).map_err(|e| format!("cannot drop its capabilities: errno {e}"))?;
    HELD.store(kept, Ordering::SeqCst);
    Ok(kept)
}

/// Whether the calling thread's bounding set is empty.
fn bounding_empty() -> bool {
    (0..64).all(|cap| {
        // SAFETY: prctl with integer arguments; -1 (EINVAL) past the last capability.
        unsafe { libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) <= 0 }
    })
}

/// Whether this process holds `CAP_SYS_PTRACE` for [`as_tracer`].
pub fn held() -> bool {
    HELD.load(Ordering::SeqCst)
}

/// `f` with `CAP_SYS_PTRACE` effective in this thread only, lowered before returning.
/// For opening a caller's own /proc entry and nothing else: `f` must open exactly one
/// such entry (`/proc/TID/mem`, `cwd`, `fd/N`, or read that link), never a path the caller
/// chose. Where it is not held, `f` runs as it is (and fails as it did).
pub fn as_tracer<T>(f: impl FnOnce() -> T) -> T {
    if !held() {
        return f();
    }
    let (w, b) = bit(CAP_SYS_PTRACE);
    let mut raised = [Data::default(); 2];
    raised[w].permitted = b;
    raised[w].effective = b;
    let lowered = {
        let mut d = raised;
        d[w].effective = 0;
        d
    };
    if set(&raised).is_err() {
        return f();
    }
    let out = f();
    if set(&lowered).is_err() {
        // Never go on with a capability effective: everything else this thread does is
        // done for a caller. Pid 1 ends, and the sandbox with it.
        eprintln!("git-loop: cannot lower the supervisor's capability");
        std::process::abort();
    }
    out
}

/// A refusal an open of a caller's /proc entry gets from the ptrace check.
pub trait Refusal {
    fn refused(&self) -> bool;
}

impl Refusal for i32 {
    fn refused(&self) -> bool {
        matches!(*self, libc::EACCES | libc::EPERM)
    }
}

impl Refusal for std::io::Error {
    fn refused(&self) -> bool {
        self.raw_os_error().is_some_and(|e| e.refused())
    }
}

/// `f` as it is, and again with [`as_tracer`] only where the ptrace check refused it (a
/// non-dumpable caller): a dumpable caller's entries open without the capability, so it
/// is raised only where it is needed, and the common call costs nothing more.
pub fn tracing_if_refused<T, E: Refusal>(f: impl Fn() -> Result<T, E>) -> Result<T, E> {
    match f() {
        Err(e) if e.refused() && held() => as_tracer(f),
        done => done,
    }
}

/// In the command's process between fork and exec: every set emptied (bounding and
/// ambient are already, by [`settle`]). Returns 0 or the errno. Only system calls on
/// stack memory: sound in a forked child.
///
/// # Safety
/// Called in a forked child of pid 1, before exec.
pub unsafe fn drop_in_child() -> i32 {
    let mut hdr = Header {
        version: VERSION_3,
        pid: 0,
    };
    let none = [Data::default(); 2];
    // SAFETY: capset reads the header and the two words it is given.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut hdr, none.as_ptr()) };
    if r != 0 {
        return *unsafe { libc::__errno_location() };
    }
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_maps_to_its_word_and_bit() {
        assert_eq!(bit(CAP_SYS_PTRACE), (0, 1 << 19));
        assert_eq!(bit(CAP_SETPCAP), (0, 1 << 8));
        assert_eq!(bit(40), (1, 1 << 8));
    }

    #[test]
    fn only_the_ptrace_checks_refusals_are_tried_again() {
        assert!(libc::EACCES.refused() && libc::EPERM.refused());
        assert!(!libc::ENOENT.refused() && !libc::EBADF.refused());
        assert!(std::io::Error::from_raw_os_error(libc::EACCES).refused());
        assert!(!std::io::Error::other("no errno").refused());
    }

    /// A set of this thread as the kernel shows it (`CapPrm`, `CapEff`, ...), not as
    /// [`get`] reads it.
    fn shown(set: &str) -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{set}:\t")))
            .unwrap();
        u64::from_str_radix(line.trim(), 16).unwrap()
    }

    fn effective_ptrace() -> bool {
        shown("CapEff") & (1 << CAP_SYS_PTRACE) != 0
    }

    /// `tracing_if_refused`'s tries of a function failing with `errno`.
    fn tries_of(errno: i32) -> u32 {
        let tries = std::cell::Cell::new(0);
        let _: Result<(), i32> = tracing_if_refused(|| {
            tries.set(tries.get() + 1);
            Err(errno)
        });
        tries.get()
    }

    /// What pid 1 does, in a thread of its own (capabilities are a thread's): where the
    /// thread has what bwrap grants (root, here), only CAP_SYS_PTRACE permitted is left,
    /// raised around `as_tracer`'s function only, and the forked command's drop empties it;
    /// where it has not, nothing is held and nothing is raised.
    #[test]
    fn a_settled_thread_keeps_ptrace_permitted_only_and_raises_it_only_around_an_open() {
        std::thread::spawn(|| {
            let wanted = (1 << CAP_SYS_PTRACE) | (1 << CAP_SETPCAP);
            let granted = shown("CapPrm") & wanted == wanted;
            assert_eq!(settle(true), Ok(granted));
            assert_eq!(held(), granted);
            let expected = if granted { 1 << CAP_SYS_PTRACE } else { 0 };
            assert_eq!(shown("CapPrm"), expected);
            assert_eq!(shown("CapEff") | shown("CapInh") | shown("CapAmb"), 0);
            assert!(shown("CapBnd") == 0 || !granted);
            // SAFETY: prctl with integer arguments.
            let ambient = unsafe {
                libc::prctl(
                    libc::PR_CAP_AMBIENT,
                    libc::PR_CAP_AMBIENT_IS_SET,
                    CAP_SYS_PTRACE,
                    0,
                    0,
                )
            };
            assert!(ambient <= 0);
            assert_eq!(as_tracer(effective_ptrace), granted);
            assert!(!effective_ptrace());
            // A refusal is tried again as a tracer, once, only where held.
            let tries = std::cell::Cell::new(0);
            let r: Result<bool, i32> = tracing_if_refused(|| {
                tries.set(tries.get() + 1);
                if effective_ptrace() {
                    Ok(true)
                } else {
                    Err(libc::EACCES)
                }
            });
            assert_eq!(r, if granted { Ok(true) } else { Err(libc::EACCES) });
            assert_eq!(tries.get(), if granted { 2 } else { 1 });
            assert!(!effective_ptrace());
            // Any other failure is the function's own: tried once.
            assert_eq!(tries_of(libc::ENOENT), 1);
            // The command's process: nothing left.
            // SAFETY: capset and prctl on this thread only.
            assert_eq!(unsafe { drop_in_child() }, 0);
            assert_eq!(shown("CapPrm") | shown("CapEff"), 0);
            HELD.store(false, Ordering::SeqCst);
            // Not held: a refusal is tried once.
            assert_eq!(tries_of(libc::EACCES), 1);
        })
        .join()
        .unwrap();
        without_setpcap_nothing_is_kept();
    }

    /// A thread without CAP_SETPCAP (bwrap granting CAP_SYS_PTRACE alone) cannot empty its
    /// bounding set, so it keeps nothing. Run after the test above, in the same test: the
    /// two set the process's [`HELD`].
    fn without_setpcap_nothing_is_kept() {
        std::thread::spawn(|| {
            let mut d = get().expect("capget");
            let (w, b) = bit(CAP_SETPCAP);
            d[w].permitted &= !b;
            d[w].effective &= !b;
            d[w].inheritable &= !b;
            set(&d).unwrap();
            let had_bounding = !bounding_empty();
            assert_eq!(settle(true), Ok(false));
            assert!(!held());
            assert_eq!(shown("CapPrm"), 0);
            // Where the bounding set was not empty, it could not be emptied.
            assert_eq!(!bounding_empty(), had_bounding);
        })
        .join()
        .unwrap();
    }
}
