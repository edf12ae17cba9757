//! Caps on the whole process tree of a run (DESIGN 4.2): a cgroup where one can be made
//! (v2 with `pids` and `memory` enabled for a delegated subtree, or the v1 `pids` and
//! `memory` hierarchies where they are writable), otherwise rlimits. What cannot be
//! enforced is refused, unless the operator config asked for best effort; the choice is a value
//! (`Enforcement`) that the status line and the run's events report.
//!
//! The cgroup is made by the parent before the sandbox starts; the child joins it (writes
//! `0` to `cgroup.procs`) before it execs bwrap, so every process of the run is inside from
//! the first fork. When bwrap returns, the parent kills whatever is left at once
//! ([`Applied::kill`]), does its own work after the run while the kernel tears the
//! sandbox down, then waits for the cgroup to be empty and removes it
//! ([`Applied::cleanup`]).

use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::spec::Limits;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Enforcement {
    CgroupV2,
    CgroupV1,
    /// RLIMIT_NPROC and RLIMIT_AS: per user and per process, so only approximate.
    Rlimits,
    /// Nothing caps pids and memory (only with `best-effort`).
    None,
}

impl Enforcement {
    pub fn as_str(&self) -> &'static str {
        match self {
            Enforcement::CgroupV2 => "cgroup v2",
            Enforcement::CgroupV1 => "cgroup v1",
            Enforcement::Rlimits => "rlimits",
            Enforcement::None => "none",
        }
    }
}

/// The limits of one run, ready for the child to apply.
#[derive(Debug)]
pub struct Applied {
    pub enforcement: Enforcement,
    /// Folders of the run's cgroups, removed by [`Applied::cleanup`].
    pub dirs: Vec<PathBuf>,
    /// Files the child writes `0` into to join the run's cgroups.
    pub procs: Vec<CString>,
    /// `(resource, value)` pairs the child sets as soft and hard limit.
    pub rlimits: Vec<(libc::__rlimit_resource_t, u64)>,
    /// Where this run made its cgroups, which is where other runs make theirs: swept of
    /// killed runs' leftovers while this one runs.
    parents: Vec<PathBuf>,
    /// The run's cgroup folders, open and locked while the run lives (see
    /// [`run_cgroup_name`]).
    held: Vec<fs::File>,
}

#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    #[error("cannot cap the sandbox's processes and memory: {0}")]
    Unenforceable(String),
}

/// Where the controllers live, read from /proc.
#[derive(Debug, Default, Clone)]
pub struct CgroupHost {
    /// The v2 folder of this process, if the unified hierarchy has controllers there.
    pub v2: Option<PathBuf>,
    /// The v1 `pids` and `memory` folders of this process.
    pub v1_pids: Option<PathBuf>,
    pub v1_memory: Option<PathBuf>,
}

impl CgroupHost {
    pub fn read() -> CgroupHost {
        let cgroups = crate::fsutil::read_proc("/proc/self/cgroup").unwrap_or_default();
        // The kernel composes /proc/self/mountinfo anew on every read, which costs more
        // than the rest of a run's cgroup set-up: where the hierarchies are mounted where
        // systemd mounts them (checked with statfs), that is all there is to know.
        if let Some(mounts) = Mounts::conventional(&cgroups) {
            return resolve(&cgroups, &mounts);
        }
        let mountinfo = crate::fsutil::read_proc("/proc/self/mountinfo").unwrap_or_default();
        parse(&cgroups, &mountinfo)
    }
}

/// The lines of /proc/self/cgroup: (controllers, path), controllers empty for v2.
fn memberships(cgroups: &str) -> impl Iterator<Item = (&str, &str)> {
    cgroups.lines().filter_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _hierarchy = parts.next()?;
        Some((parts.next()?, parts.next()?))
    })
}

/// Where the cgroup hierarchies are mounted: the v2 one, and each v1 one with its
/// controllers (comma-separated).
#[derive(Debug, Default, PartialEq)]
struct Mounts {
    v2: Option<PathBuf>,
    v1: Vec<(String, PathBuf)>,
}

impl Mounts {
    fn from_mountinfo(mountinfo: &str) -> Mounts {
        let mut mounts = Mounts::default();
        for line in mountinfo.lines() {
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let mount_point = left.split(' ').nth(4).unwrap_or_default();
            let mut r = right.split(' ');
            let fstype = r.next().unwrap_or_default();
            let _source = r.next();
            let opts = r.next().unwrap_or_default();
            match fstype {
                "cgroup2" => mounts.v2 = Some(PathBuf::from(mount_point)),
                "cgroup" => mounts
                    .v1
                    .push((opts.to_string(), PathBuf::from(mount_point))),
                _ => {}
            }
        }
        mounts
    }

    /// systemd's layout: v2 at /sys/fs/cgroup (or /sys/fs/cgroup/unified beside v1), each
    /// v1 hierarchy this process is in at /sys/fs/cgroup/<its controllers>. `None` where
    /// any of them is not a cgroup file system there.
    fn conventional(cgroups: &str) -> Option<Mounts> {
        use nix::sys::statfs::{statfs, CGROUP2_SUPER_MAGIC, CGROUP_SUPER_MAGIC};
        Mounts::conventional_with(cgroups, |path, v2| {
            let magic = if v2 {
                CGROUP2_SUPER_MAGIC
            } else {
                CGROUP_SUPER_MAGIC
            };
            statfs(path).is_ok_and(|s| s.filesystem_type() == magic)
        })
    }

    /// [`Mounts::conventional`] with `is_cgroup(path, v2)` telling what is mounted where.
    fn conventional_with(cgroups: &str, is_cgroup: impl Fn(&Path, bool) -> bool) -> Option<Mounts> {
        let mut mounts = Mounts::default();
        let root = Path::new("/sys/fs/cgroup");
        for (controllers, _) in memberships(cgroups) {
            if controllers.is_empty() {
                let unified = root.join("unified");
                mounts.v2 = if is_cgroup(root, true) {
                    Some(root.to_path_buf())
                } else if is_cgroup(&unified, true) {
                    Some(unified)
                } else {
                    return None;
                };
            } else if controllers.split(',').any(|c| c == "pids" || c == "memory") {
                let mount = root.join(controllers);
                if !is_cgroup(&mount, false) {
                    return None;
                }
                mounts.v1.push((controllers.to_string(), mount));
            }
        }
        Some(mounts)
    }
}

/// Pure part of [`CgroupHost::read`].
pub fn parse(cgroups: &str, mountinfo: &str) -> CgroupHost {
    resolve(cgroups, &Mounts::from_mountinfo(mountinfo))
}

/// This process's folders in the hierarchies of `mounts`.
fn resolve(cgroups: &str, mounts: &Mounts) -> CgroupHost {
    let mut host = CgroupHost::default();
    for (controllers, path) in memberships(cgroups) {
        let rel = path.trim_start_matches('/');
        if controllers.is_empty() {
            if let Some(m) = &mounts.v2 {
                host.v2 = Some(m.join(rel));
            }
            continue;
        }
        for c in controllers.split(',') {
            let mount = mounts
                .v1
                .iter()
                .find(|(opts, _)| opts.split(',').any(|o| o == c))
                .map(|(_, m)| m.join(rel));
            match c {
                "pids" => host.v1_pids = mount,
                "memory" => host.v1_memory = mount,
                _ => {}
            }
        }
    }
    host
}

/// Makes the run's cgroups (or picks rlimits) for `limits`.
pub fn apply(
    limits: &Limits,
    name: &str,
    host: &CgroupHost,
    is_root: bool,
) -> Result<Applied, LimitError> {
    let mut base = Applied {
        enforcement: Enforcement::None,
        dirs: Vec::new(),
        procs: Vec::new(),
        rlimits: vec![(libc::RLIMIT_CORE, 0), (libc::RLIMIT_NOFILE, limits.nofile)],
        parents: Vec::new(),
        held: Vec::new(),
    };
    if let Some(dir) = &host.v2 {
        let _making = Coordinator::share(dir);
        if let Some((cg, held)) = try_v2(dir, name, limits) {
            base.parents = vec![dir.clone()];
            base.held = held;
            base.enforcement = Enforcement::CgroupV2;
            base.procs.push(join_file(&cg, "cgroup.procs"));
            base.dirs.push(cg);
            return Ok(base);
        }
    }
    if let (Some(pids), Some(memory)) = (&host.v1_pids, &host.v1_memory) {
        let _making = Coordinator::share(pids);
        if let Some((p, m, held)) = try_v1(pids, memory, name, limits) {
            base.parents = vec![pids.clone(), memory.clone()];
            base.held = held;
            base.enforcement = Enforcement::CgroupV1;
            // v1's `tasks` with "0" moves the writing thread alone, which the kernel does
            // without the global threadgroup lock (and its RCU grace period, ~10 ms per
            // run); the child is single-threaded, so that is the whole process.
            base.procs.push(join_file(&p, "tasks"));
            base.procs.push(join_file(&m, "tasks"));
            base.dirs.push(p);
            base.dirs.push(m);
            return Ok(base);
        }
    }
    // RLIMIT_NPROC does not bind root (the kernel exempts uid 0), so it caps nothing there.
    if !is_root {
        base.enforcement = Enforcement::Rlimits;
        base.rlimits.push((libc::RLIMIT_NPROC, limits.pids));
        base.rlimits.push((libc::RLIMIT_AS, limits.memory_bytes));
        return Ok(base);
    }
    if limits.best_effort {
        return Ok(base);
    }
    Err(LimitError::Unenforceable(
        "no writable cgroup (v2 with pids and memory delegated, or v1 pids and memory) and rlimits do not bind root".into(),
    ))
}

/// The name of a run's cgroups: `git-loop-<loop id>-<pid>-flock`. The run holds an
/// exclusive `flock` on each of them while it lives ([`Applied`] keeps the folders open),
/// which the kernel drops when the process dies, however it dies. So a cgroup of this
/// name that nobody holds belongs to a dead run, whatever its binary was called, however
/// pids are reused, and from whichever pid namespace it was made. A run makes and locks
/// its cgroups under a shared lock on the folder it makes the first one in (the
/// [`Coordinator`]), and a sweep judges them under the exclusive one, so a sweep never
/// sees a cgroup between its making and its locking.
pub fn run_cgroup_name(id: &str) -> String {
    format!("git-loop-{id}-{}-flock", std::process::id())
}

/// An `flock` on the folder runs make their cgroups in, held while alive; see
/// [`run_cgroup_name`].
struct Coordinator {
    _lock: Option<fs::File>,
}

impl Coordinator {
    /// Waits for the shared lock (a sweep holds the exclusive one only while it judges).
    fn share(parent: &Path) -> Coordinator {
        Coordinator {
            _lock: fs::File::open(parent)
                .ok()
                .filter(|f| f.lock_shared().is_ok()),
        }
    }

    /// The exclusive lock, if nobody is making or judging cgroups right now.
    fn try_exclusive(parent: &Path) -> Option<Coordinator> {
        let f = fs::File::open(parent).ok()?;
        f.try_lock().ok()?;
        Some(Coordinator { _lock: Some(f) })
    }
}

/// Whether the run that made the cgroup `dir` is alive, under the coordinator's exclusive
/// lock. `None`: not a run's cgroup. A dead run's lock is taken and returned with the
/// answer, and kept while its cgroup is removed.
fn run_alive(dir: &Path) -> Option<(bool, Option<fs::File>)> {
    let name = dir.file_name()?.to_str()?;
    let rest = name.strip_prefix("git-loop-")?;
    if rest.ends_with("-flock") {
        let folder = fs::File::open(dir).ok()?;
        return Some(match folder.try_lock() {
            Ok(()) => (false, Some(folder)),
            Err(_) => (true, None),
        });
    }
    // A name of an older version, `git-loop-<id>-<pid>`: alive if that pid is a git-loop.
    let pid: u32 = rest.rsplit_once('-')?.1.parse().ok()?;
    let comm = crate::fsutil::read_proc(format!("/proc/{pid}/comm"));
    Some((comm.is_ok_and(|c| c.trim_end() == "git-loop"), None))
}

/// Removes the cgroups of runs whose `git-loop` died without cleaning up (SIGKILL): those
/// whose lock nobody holds (see [`run_cgroup_name`]). Skipped when another run is making
/// its cgroups or sweeping right now: a later sweep does it.
fn sweep(coordinator: &Path, parents: &[PathBuf]) {
    let mut dead = Vec::new();
    {
        let Some(_judging) = Coordinator::try_exclusive(coordinator) else {
            return;
        };
        for parent in parents {
            let Ok(entries) = fs::read_dir(parent) else {
                continue;
            };
            for entry in entries.flatten() {
                if let Some((false, held)) = run_alive(&entry.path()) {
                    dead.push((entry.path(), held));
                }
            }
        }
    }
    for (dir, _held) in dead {
        remove_stale(&dir);
    }
}

/// Removes a dead run's cgroup. Its last processes may still be exiting (or be zombies
/// not yet reaped by init) for a moment after its git-loop was killed: kill what is left
/// and give them up to half a second. Only ever paid after a killed run.
fn remove_stale(dir: &Path) {
    for _ in 0..250 {
        if fs::remove_dir(dir).is_ok() {
            return;
        }
        let tasks = fs::read_to_string(dir.join("tasks"))
            .or_else(|_| fs::read_to_string(dir.join("cgroup.procs")))
            .unwrap_or_default();
        if tasks.trim().is_empty() && !dir.exists() {
            return;
        }
        for pid in tasks.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            // SAFETY: kill has no memory effects; only members of the dead run's cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Opens and locks the run's fresh cgroup folders (under the [`Coordinator`]'s shared
/// lock, so no sweep looks at them before). `None` if any cannot be held: a cgroup nobody
/// holds would be taken for a dead run's.
fn hold(dirs: &[&Path]) -> Option<Vec<fs::File>> {
    dirs.iter()
        .map(|d| {
            let f = fs::File::open(d).ok()?;
            f.try_lock().ok()?;
            Some(f)
        })
        .collect()
}

fn join_file(dir: &Path, name: &str) -> CString {
    CString::new(dir.join(name).into_os_string().into_encoded_bytes())
        .expect("no NUL in cgroup paths")
}

fn try_v2(parent: &Path, name: &str, limits: &Limits) -> Option<(PathBuf, Vec<fs::File>)> {
    let controllers = fs::read_to_string(parent.join("cgroup.controllers")).ok()?;
    if !(controllers.split_whitespace().any(|c| c == "pids")
        && controllers.split_whitespace().any(|c| c == "memory"))
    {
        return None;
    }
    let dir = parent.join(name);
    fs::create_dir(&dir).ok()?;
    let ok = fs::write(dir.join("pids.max"), limits.pids.to_string()).is_ok()
        && fs::write(dir.join("memory.max"), limits.memory_bytes.to_string()).is_ok();
    let held = if ok { hold(&[&dir]) } else { None };
    if let Some(held) = held {
        let _ = fs::write(dir.join("memory.swap.max"), "0");
        Some((dir, held))
    } else {
        let _ = fs::remove_dir(&dir);
        None
    }
}

fn try_v1(
    pids_parent: &Path,
    mem_parent: &Path,
    name: &str,
    limits: &Limits,
) -> Option<(PathBuf, PathBuf, Vec<fs::File>)> {
    let p = pids_parent.join(name);
    let m = mem_parent.join(name);
    let made_p = fs::create_dir(&p).is_ok();
    let made_m = made_p && fs::create_dir(&m).is_ok();
    let ok = made_m
        && fs::write(p.join("pids.max"), limits.pids.to_string()).is_ok()
        && fs::write(
            m.join("memory.limit_in_bytes"),
            limits.memory_bytes.to_string(),
        )
        .is_ok();
    let held = if ok { hold(&[&p, &m]) } else { None };
    if let Some(held) = held {
        // Swap would let a memory bomb outgrow the cap; absent without swap accounting.
        let _ = fs::write(
            m.join("memory.memsw.limit_in_bytes"),
            limits.memory_bytes.to_string(),
        );
        Some((p, m, held))
    } else {
        let _ = fs::remove_dir(&p);
        let _ = fs::remove_dir(&m);
        None
    }
}

impl Applied {
    /// Kills every process left in the run's cgroups, until a reading finds none it has
    /// not killed yet (a fork whose parent has a SIGKILL pending fails, so the set cannot
    /// grow behind the last reading). Afterwards no process of the run executes another
    /// instruction of its own, though the kernel may take a moment to tear them down.
    pub fn kill(&self) {
        // v1's `pids` and `memory` cgroups of a run hold the same processes (the child
        // joins both before exec and every descendant inherits both), so reading the
        // first is enough here; `cleanup` removes every folder, and kills through all of
        // them while one is not empty.
        if let Some(dir) = self.dirs.first() {
            kill_in(dir);
        }
    }

    /// Removes the cgroups killed runs left behind (see [`run_cgroup_name`]).
    pub fn sweep_killed(&self) {
        if let Some(coordinator) = self.dirs.first().and_then(|d| d.parent()) {
            sweep(coordinator, &self.parents);
        }
    }

    /// Waits until the run's cgroups are empty (after [`Applied::kill`], only the
    /// kernel's teardown of the sandbox's namespaces is left) and removes them, killing
    /// what any of them still holds while one is not.
    pub fn cleanup(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        for dir in &self.dirs {
            while fs::remove_dir(dir).is_err() && dir.exists() {
                if std::time::Instant::now() > deadline {
                    // Left for the next run's sweep; its processes are all killed.
                    break;
                }
                for dir in &self.dirs {
                    kill_in(dir);
                }
                wait_for_exits(dir, deadline);
            }
        }
    }
}

/// Waits until a process `dir` holds ends (or `deadline`): on descriptors of its
/// processes (pidfds), which wake this process once, when one has ended, rather than
/// polling; a sleep of 0.1 ms where pidfds are not available. What is left after
/// [`Applied::kill`] is the sandbox's init, tearing its namespaces down, so each wait is
/// on a process already killed.
fn wait_for_exits(dir: &Path, deadline: std::time::Instant) {
    let fallback = || std::thread::sleep(std::time::Duration::from_micros(100));
    let listed = |dir: &Path| -> Vec<i32> {
        fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    };
    let mut fds: Vec<(i32, std::os::fd::OwnedFd)> = Vec::new();
    for pid in listed(dir) {
        // SAFETY: pidfd_open takes two integers and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            continue;
        }
        // SAFETY: a descriptor just returned to us and owned by nobody else.
        fds.push((pid, unsafe {
            std::os::fd::FromRawFd::from_raw_fd(fd as i32)
        }));
    }
    // A pid that ended and was reused between the reading and pidfd_open names another
    // process, outside the cgroup: only those still listed are waited on.
    let still = listed(dir);
    fds.retain(|(pid, _)| still.contains(pid));
    if fds.is_empty() {
        return fallback();
    }
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|(_, fd)| libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(fd),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let mut poll = |timeout: libc::c_int| {
        // SAFETY: poll reads and writes the array whose length it is given.
        unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, timeout) }
    };
    // One that has ended already (a zombie, or an error) would end no wait: the kernel
    // is given the moment it needs as before.
    if poll(0) != 0 {
        return fallback();
    }
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    if poll(left.as_millis().clamp(1, 100) as libc::c_int) < 0 {
        fallback();
    }
}

/// Kills the processes of one cgroup (see [`Applied::kill`]).
fn kill_in(dir: &Path) {
    if fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    let mut killed: Vec<i32> = Vec::new();
    for _ in 0..1000 {
        let procs = fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let fresh: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .filter(|pid| !killed.contains(pid))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for pid in fresh {
            // SAFETY: kill has no memory effects; only members of this run's cgroup are
            // listed.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed.push(pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID_CGROUP: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/a/b\n0::/\n";
    const HYBRID_MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
31 30 0:27 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
32 30 0:28 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
33 30 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_v1_and_v2_folders() {
        let host = parse(HYBRID_CGROUP, HYBRID_MOUNTS);
        assert_eq!(host.v1_pids, Some(PathBuf::from("/sys/fs/cgroup/pids/")));
        assert_eq!(
            host.v1_memory,
            Some(PathBuf::from("/sys/fs/cgroup/memory/a/b"))
        );
        assert_eq!(host.v2, Some(PathBuf::from("/sys/fs/cgroup/unified/")));
        let v2only = parse(
            "0::/user.slice/u.service\n",
            "40 1 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        );
        assert_eq!(
            v2only.v2,
            Some(PathBuf::from("/sys/fs/cgroup/user.slice/u.service"))
        );
        assert!(v2only.v1_pids.is_none());
    }

    #[test]
    fn a_run_holds_its_cgroups_while_it_lives() {
        let tmp = tempfile::tempdir().unwrap();
        let name = run_cgroup_name("fix-login-3f9a1c");
        assert_eq!(
            name,
            format!("git-loop-fix-login-3f9a1c-{}-flock", std::process::id())
        );
        let dir = tmp.path().join(&name);
        fs::create_dir(&dir).unwrap();
        let held = hold(&[&dir]).unwrap();
        assert_eq!(held.len(), 1);
        assert!(matches!(run_alive(&dir), Some((true, None))));
        drop(held);
        let (alive, lock) = run_alive(&dir).unwrap();
        assert!(!alive && lock.is_some());
        // While one sweep holds it, another sees it held.
        assert!(matches!(run_alive(&dir), Some((true, None))));
        drop(lock);
        // Names of older versions: alive only if the pid is a git-loop (a test binary
        // is not).
        let old = tmp
            .path()
            .join(format!("git-loop-fix-{}", std::process::id()));
        assert!(matches!(run_alive(&old), Some((false, None))));
        assert!(run_alive(&tmp.path().join("git-loop-doctor")).is_none());
        assert!(run_alive(&tmp.path().join("system.slice")).is_none());
    }

    #[test]
    fn a_sweep_waits_for_no_run_that_is_making_its_cgroups() {
        let tmp = tempfile::tempdir().unwrap();
        let parent = tmp.path().to_path_buf();
        let dead = parent.join("git-loop-gone-1-flock");
        fs::create_dir(&dead).unwrap();
        {
            // A run between making its cgroup and locking it: the sweep passes.
            let _making = Coordinator::share(&parent);
            let fresh = parent.join(run_cgroup_name("fresh"));
            fs::create_dir(&fresh).unwrap();
            sweep(&parent, std::slice::from_ref(&parent));
            assert!(fresh.exists() && dead.exists());
            fs::remove_dir(&fresh).unwrap();
        }
        sweep(&parent, std::slice::from_ref(&parent));
        assert!(!dead.exists());
    }

    #[test]
    fn the_conventional_layout_is_read_as_mountinfo_says() {
        // systemd's hybrid layout, as the fixtures above describe it.
        let hybrid = |path: &Path, v2: bool| {
            let p = path.to_str().unwrap();
            if v2 {
                p == "/sys/fs/cgroup/unified"
            } else {
                p == "/sys/fs/cgroup/pids" || p == "/sys/fs/cgroup/memory"
            }
        };
        let fast = Mounts::conventional_with(HYBRID_CGROUP, hybrid).unwrap();
        assert_eq!(
            format!("{:?}", resolve(HYBRID_CGROUP, &fast)),
            format!("{:?}", parse(HYBRID_CGROUP, HYBRID_MOUNTS))
        );
        // Pure v2 at /sys/fs/cgroup.
        let v2 = Mounts::conventional_with("0::/user.slice/u.service\n", |p, v2| {
            v2 && p == Path::new("/sys/fs/cgroup")
        })
        .unwrap();
        assert_eq!(
            resolve("0::/user.slice/u.service\n", &v2).v2,
            Some(PathBuf::from("/sys/fs/cgroup/user.slice/u.service"))
        );
        // A hierarchy anywhere else: mountinfo is read.
        assert!(Mounts::conventional_with(HYBRID_CGROUP, |p, v2| !v2 && hybrid(p, v2)).is_none());
        assert!(Mounts::conventional_with(HYBRID_CGROUP, |p, v2| v2 && hybrid(p, v2)).is_none());
        // And this machine, whatever its layout: the fast answer, where there is one, is
        // mountinfo's.
        let cgroups = fs::read_to_string("/proc/self/cgroup").unwrap();
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap();
        if let Some(fast) = Mounts::conventional(&cgroups) {
            assert_eq!(
                format!("{:?}", resolve(&cgroups, &fast)),
                format!("{:?}", parse(&cgroups, &mountinfo))
            );
        }
    }

    #[test]
    fn refuses_rather_than_runs_uncapped() {
        let none = CgroupHost::default();
        let limits = Limits::defaults();
        assert!(matches!(
            apply(&limits, "x", &none, true),
            Err(LimitError::Unenforceable(_))
        ));
        let best = Limits {
            best_effort: true,
            ..limits
        };
        assert_eq!(
            apply(&best, "x", &none, true).unwrap().enforcement,
            Enforcement::None
        );
        let user = apply(&limits, "x", &none, false).unwrap();
        assert_eq!(user.enforcement, Enforcement::Rlimits);
        assert!(user
            .rlimits
            .iter()
            .any(|(r, v)| *r == libc::RLIMIT_NPROC && *v == 4096));
        assert!(user
            .rlimits
            .iter()
            .any(|(r, v)| *r == libc::RLIMIT_CORE && *v == 0));
    }
}
