//! The attack battery, "Processes and kernel" (ATTACKS.md items 11-18): every attack is
//! really attempted from inside a sandbox started by `git loop run`, and each test asserts
//! that it failed and that nothing on the host changed. Raw system calls are made with
//! python3's ctypes where no shell tool reaches them. Each attack has its positive twin
//! where one exists: what ordinary work needs (a compiler, fork and threads, a pty, local
//! sockets, `pip install --user`, background jobs that finish in time) still works.
//!
//! Nothing here runs an attack on the host: the host side only reads `/proc`, creates
//! listeners and files under the test's own folders, and starts or kills `git-loop`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::common::{Run, TestEnv, BIN};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// A test workspace with one code loop.
fn setup() -> (TestEnv, String) {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "kernel attacks");
    (env, id)
}

/// `git loop run ID -- sh -c SCRIPT`.
fn sh(env: &TestEnv, id: &str, script: &str) -> Run {
    env.run(["run", id, "--", "sh", "-c", script])
}

/// `git loop run ID -- python3 -c CODE ARGS...`.
fn py(env: &TestEnv, id: &str, code: &str, args: &[&str]) -> Run {
    let mut argv = vec!["run", id, "--", "python3", "-c", code];
    argv.extend_from_slice(args);
    env.run(argv)
}

/// A string no other test (or earlier run) uses.
fn nonce() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Polls `f` every 50 ms until it is true or `limit` passed; returns its last answer.
fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every live process of the host with its command line (NULs as spaces). Zombies have
/// an empty command line and so never match a needle.
fn host_cmdlines() -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        if let Ok(bytes) = fs::read(entry.path().join("cmdline")) {
            let text: Vec<u8> = bytes
                .into_iter()
                .map(|b| if b == 0 { b' ' } else { b })
                .collect();
            out.push((pid, String::from_utf8_lossy(&text).into_owned()));
        }
    }
    out
}

/// Host processes whose command line contains any of `needles`.
fn host_procs_with(needles: &[String]) -> Vec<(u32, String)> {
    host_cmdlines()
        .into_iter()
        .filter(|(_, c)| needles.iter().any(|n| c.contains(n.as_str())))
        .collect()
}

/// Host processes whose command line starts with `marker` (a process inside named with
/// `exec -a`, not the git-loop or bwrap whose arguments mention it).
fn host_procs_named(marker: &str) -> Vec<(u32, String)> {
    host_cmdlines()
        .into_iter()
        .filter(|(_, c)| c.starts_with(marker))
        .collect()
}

/// Numeric entries of the host's /proc.
fn host_pid_count() -> usize {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
        })
        .count()
}

/// Mount points of the host (this test's mount namespace) at or below `root`.
fn host_mounts_under(root: &Path) -> Vec<String> {
    let root = root.to_str().unwrap();
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| {
            l.split(' ')
                .nth(4)
                .is_some_and(|mp| mp == root || mp.starts_with(&format!("{root}/")))
        })
        .map(str::to_string)
        .collect()
}

/// Cgroup folders under /sys/fs/cgroup (v1 or v2, a few levels deep) whose name contains
/// `needle`.
fn cgroups_named(needle: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(PathBuf::from("/sys/fs/cgroup"), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name().to_string_lossy().contains(needle) {
                out.push(entry.path());
            }
            if depth < 6 {
                stack.push((entry.path(), depth + 1));
            }
        }
    }
    out
}

/// Removes, when dropped, the empty cgroups whose name contains the needle: a test that
/// finds cgroups left behind by git-loop does not leave them on the machine itself.
struct SweepCgroups(String);

impl Drop for SweepCgroups {
    fn drop(&mut self) {
        for dir in cgroups_named(&self.0) {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// The host answers: a process starts and a `git-loop` command works.
#[track_caller]
fn host_answers(env: &TestEnv) {
    let st = Command::new("true")
        .status()
        .expect("start true on the host");
    assert!(st.success());
    env.run(["list"]).ok();
}

#[track_caller]
fn assert_no_escape(run: &Run) {
    let escaped: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains("ESCAPED"))
        .collect();
    assert!(
        escaped.is_empty(),
        "attacks succeeded inside the sandbox: {escaped:?}\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
}

/// A `git loop run` started in the background, with its output in files.
struct Live {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Live {
    fn spawn(mut cmd: Command, dir: &Path, name: &str) -> Live {
        let out = dir.join(format!("{name}.stdout"));
        let err = dir.join(format!("{name}.stderr"));
        cmd.stdin(Stdio::null())
            .stdout(fs::File::create(&out).unwrap())
            .stderr(fs::File::create(&err).unwrap());
        let child = cmd.spawn().expect("start git-loop");
        Live { child, out, err }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn output(&self) -> (String, String) {
        (
            fs::read_to_string(&self.out).unwrap_or_default(),
            fs::read_to_string(&self.err).unwrap_or_default(),
        )
    }

    /// Waits for the run to end (at most `limit`, then kills it and fails).
    #[track_caller]
    fn finish(&mut self, limit: Duration) -> Run {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                let (o, e) = self.output();
                panic!("the run did not end within {limit:?}\nstdout:\n{o}\nstderr:\n{e}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let (stdout, stderr) = self.output();
        Run {
            code: status.code().unwrap_or(-1),
            stdout,
            stderr,
        }
    }

    /// Waits until the sandbox created `file` (a host path), failing if the run ends first.
    #[track_caller]
    fn wait_for_file(&mut self, file: &Path) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !file.exists() {
            if !self.running() || Instant::now() > deadline {
                let (o, e) = self.output();
                panic!(
                    "the sandbox never got ready ({} missing)\nstdout:\n{o}\nstderr:\n{e}",
                    file.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `body`, then `.ready` in the workdir, then wait (bounded) until the host creates `.go`.
fn held(body: &str) -> String {
    format!(
        "{body}\n: > .ready\ni=0\nwhile [ ! -e .go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
    )
}

/// `git loop run ID -- sh -c SCRIPT` as a command to spawn.
fn run_cmd(env: &TestEnv, id: &str, script: &str) -> Command {
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .args(["run", id, "--", "sh", "-c", script]);
    cmd
}

/// Python prelude: `sc(label, name, *args)` makes a raw system call and prints
/// `SYSCALL label: ret=R errno=E`. A `clone` that succeeds exits in the child at once.
const PY_SYSCALLS: &str = r#"
import ctypes, errno, os, platform, sys
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_NR = {
    "x86_64": dict(mount=165, umount2=166, pivot_root=155, chroot=161, unshare=272,
                   setns=308, clone=56, clone3=435, open_tree=428, move_mount=429,
                   fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
                   ptrace=101, process_vm_readv=310, process_vm_writev=311, add_key=248,
                   request_key=249, keyctl=250, io_uring_setup=425, bpf=321),
    "aarch64": dict(mount=40, umount2=39, pivot_root=41, chroot=51, unshare=97,
                    setns=268, clone=220, clone3=435, open_tree=428, move_mount=429,
                    fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442,
                    ptrace=117, process_vm_readv=270, process_vm_writev=271, add_key=217,
                    request_key=218, keyctl=219, io_uring_setup=425, bpf=280),
}[platform.machine()]

def sc(label, name, *args):
    ctypes.set_errno(0)
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    r = _libc.syscall(ctypes.c_long(_NR[name]), *conv)
    e = ctypes.get_errno()
    if r == 0 and name == "clone":
        os._exit(0)
    print("SYSCALL %s: ret=%d errno=%s" % (label, r, errno.errorcode.get(e, e) if r < 0 else "-"), flush=True)
    return r
"#;

fn syscall_line<'a>(run: &'a Run, label: &str) -> &'a str {
    let prefix = format!("SYSCALL {label}: ");
    run.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| {
            panic!(
                "no result for {label}\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            )
        })
}

/// The system call `label` failed with one of `errnos`.
#[track_caller]
fn assert_refused(run: &Run, label: &str, errnos: &[&str]) {
    let line = syscall_line(run, label);
    assert!(
        errnos
            .iter()
            .any(|e| line.ends_with(&format!("ret=-1 errno={e}"))),
        "{label} was not refused with {errnos:?}: {line}\nstdout:\n{}",
        run.stdout
    );
}

/// The system call `label` failed, whatever the errno.
#[track_caller]
fn assert_failed(run: &Run, label: &str) {
    let line = syscall_line(run, label);
    assert!(
        line.contains("ret=-1 errno="),
        "{label} succeeded: {line}\nstdout:\n{}",
        run.stdout
    );
}

// ---------------------------------------------------------------------------------------
// 11. Namespaces and mounts
// ---------------------------------------------------------------------------------------

#[test]
fn namespaces_cannot_be_created_or_entered() {
    let (env, id) = setup();
    let tools = sh(
        &env,
        &id,
        "unshare -U true && echo ESCAPED:unshare-U
         unshare -m true && echo ESCAPED:unshare-m
         unshare -r true && echo ESCAPED:unshare-r
         unshare -r -m sh -c 'mount -t tmpfs none /loopat/context/knowledge' && echo ESCAPED:unshare-r-mount
         unshare -p -f true && echo ESCAPED:unshare-p
         unshare -n true && echo ESCAPED:unshare-n
         nsenter -t 1 -a true && echo ESCAPED:nsenter
         echo END",
    );
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert_no_escape(&tools);
    tools.stdout_has("END");
    assert!(
        tools.stderr.contains("Operation not permitted"),
        "{}",
        tools.stderr
    );

    let code = format!(
        "{PY_SYSCALLS}{}",
        r#"
# os.unshare (Python >= 3.12) or libc's unshare(3) otherwise
try:
    if hasattr(os, "unshare"):
        os.unshare(os.CLONE_NEWUSER)
    elif _libc.unshare(0x10000000) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    print("ESCAPED: python unshare(CLONE_NEWUSER)")
except OSError as e:
    print("PY unshare:", errno.errorcode.get(e.errno, e.errno))
flags = dict(user=0x10000000, mnt=0x00020000, pid=0x20000000, net=0x40000000,
             uts=0x04000000, ipc=0x08000000, cgroup=0x02000000, time=0x00000080)
for name, flag in flags.items():
    sc("unshare-" + name, "unshare", flag)
for name in ("user", "mnt", "pid", "net"):
    sc("clone-" + name, "clone", flags[name] | 17, 0, 0, 0, 0)
sc("clone3", "clone3", 0, 0)
n = 0
try:
    os.close(os.open("/proc/1/ns/mnt", os.O_RDONLY))
    print("PID1-NS opened")
except PermissionError:
    print("PID1-NS refused")
# The first process after pid 1: the command itself in a fresh sandbox, a live
# session's init (not dumpable: its namespaces do not even open) in a joined one.
first = min(int(p) for p in os.listdir("/proc") if p.isdigit() and p != "1")
for who in ("self", str(first)):
    for ns in sorted(os.listdir("/proc/%s/ns" % who)):
        try:
            fd = os.open("/proc/%s/ns/%s" % (who, ns), os.O_RDONLY)
        except PermissionError:
            print("NS-OPEN refused %s/%s" % (who, ns))
            continue
        sc("setns-%s-%s" % (who, ns), "setns", fd, 0)
        os.close(fd)
        n += 1
print("SETNS-TRIED", n)
# positive twin: fork, threads and reading one's own namespaces work
pid = os.fork()
if pid == 0:
    os._exit(7)
print("FORK", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
import threading
box = []
t = threading.Thread(target=lambda: box.append("ran"))
t.start(); t.join()
print("THREAD", box[0])
print("NS", os.readlink("/proc/self/ns/user").split(":")[0])
"#
    );
    let run = py(&env, &id, &code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    run.stdout_has("PY unshare: EPERM");
    for ns in ["user", "mnt", "pid", "net", "uts", "ipc", "cgroup", "time"] {
        assert_refused(&run, &format!("unshare-{ns}"), &["EPERM"]);
    }
    // clone(2) with namespace flags: refused by the kernel (no capabilities; user
    // namespaces disabled by bwrap: ENOSPC), never a new namespace.
    for ns in ["user", "mnt", "pid", "net"] {
        assert_failed(&run, &format!("clone-{ns}"));
    }
    assert_refused(&run, "clone3", &["ENOSYS"]);
    // Pid 1 (git-loop's init, not dumpable) does not even show its namespaces.
    run.stdout_has("PID1-NS refused");
    let setns: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("SYSCALL setns-"))
        .collect();
    assert!(
        setns.len() >= 8,
        "too few namespaces tried:\n{}",
        run.stdout
    );
    for line in setns {
        assert!(
            line.ends_with("ret=-1 errno=EPERM"),
            "setns not refused: {line}"
        );
    }
    run.stdout_has("FORK 7");
    run.stdout_has("THREAD ran");
    run.stdout_has("NS user");

    // Nothing on the host: no mount appeared under the test's folders, knowledge is clean.
    assert_eq!(host_mounts_under(&env.root), Vec::<String>::new());
    assert_eq!(
        env.git(&env.ws.join("context/knowledge"), ["status", "--porcelain"]),
        ""
    );
}

#[test]
fn mounts_cannot_be_added_moved_or_undone() {
    let (env, id) = setup();
    let knowledge = env.ws.join("context/knowledge");
    let before = env.refs(&knowledge);
    let tools = sh(
        &env,
        &id,
        "mkdir -p /tmp/mnt
         mount -t tmpfs none /tmp/mnt && echo ESCAPED:mount-tmpfs
         mount --bind /tmp/mnt /loopat/context/knowledge && echo ESCAPED:mount-bind
         mount -o remount,rw /loopat/context/knowledge && echo ESCAPED:remount-rw
         mount -o remount,rw /usr && echo ESCAPED:remount-usr
         umount /loopat/context/knowledge && echo ESCAPED:umount
         umount -l /loopat/context/knowledge && echo ESCAPED:umount-lazy
         umount -l /loopat/context/personal/.loopat/vaults && echo ESCAPED:umount-vaults
         echo pwned > /loopat/context/knowledge/pwned && echo ESCAPED:knowledge-written
         echo END",
    );
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert_no_escape(&tools);
    tools.stdout_has("END");

    let code = format!(
        "{PY_SYSCALLS}{}",
        r#"
os.makedirs("/tmp/mnt", exist_ok=True)
K = b"/loopat/context/knowledge"
sc("mount-tmpfs", "mount", b"none", b"/tmp/mnt", b"tmpfs", 0, None)
sc("mount-tmpfs-over-knowledge", "mount", b"none", K, b"tmpfs", 0, None)
sc("mount-bind", "mount", b"/tmp/mnt", K, None, 0x1000, None)
sc("mount-remount-rw", "mount", None, K, None, 0x20 | 0x1000, None)
sc("umount2", "umount2", K, 0)
sc("umount2-detach", "umount2", K, 2)
sc("umount2-vaults", "umount2", b"/loopat/context/personal/.loopat/vaults", 2)
sc("pivot_root", "pivot_root", b"/tmp", b"/tmp/mnt")
sc("pivot_root-dot", "pivot_root", b".", b".")
sc("chroot", "chroot", b"/tmp")
sc("open_tree", "open_tree", -100, K, 1 | 0x8000)
sc("move_mount", "move_mount", -100, K, -100, b"/tmp/mnt", 0)
sc("move_mount-empty", "move_mount", -1, b"", -100, b"/tmp/mnt", 4)
sc("fsopen", "fsopen", b"tmpfs", 0)
sc("fspick", "fspick", -100, K, 0)
sc("fsconfig", "fsconfig", 3, 6, None, None, 0)
sc("fsmount", "fsmount", 3, 0, 0)
attr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)  # clear MOUNT_ATTR_RDONLY
sc("mount_setattr", "mount_setattr", -100, K, 0x8000, attr, 32)
try:
    open("/loopat/context/knowledge/pwned", "w").write("x")
    print("ESCAPED: knowledge written")
except OSError as e:
    print("WRITE", errno.errorcode.get(e.errno, e.errno))
"#
    );
    let run = py(&env, &id, &code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    for label in [
        "mount-tmpfs",
        "mount-tmpfs-over-knowledge",
        "mount-bind",
        "mount-remount-rw",
        "umount2",
        "umount2-detach",
        "umount2-vaults",
        "pivot_root",
        "pivot_root-dot",
        "chroot",
        "open_tree",
        "move_mount",
        "move_mount-empty",
        "fsopen",
        "fspick",
        "fsconfig",
        "fsmount",
        "mount_setattr",
    ] {
        assert_refused(&run, label, &["EPERM"]);
    }
    run.stdout_has("WRITE EROFS");

    // Nothing on the host changed.
    assert!(!knowledge.join("pwned").exists());
    assert_eq!(env.git(&knowledge, ["status", "--porcelain"]), "");
    assert_eq!(env.refs(&knowledge), before);
    assert_eq!(host_mounts_under(&env.root), Vec::<String>::new());
}

/// Positive twin of 11: the system compiler builds and runs a program.
#[test]
fn ordinary_work_builds_and_runs_with_the_system_compiler() {
    let (env, id) = setup();
    let run = sh(
        &env,
        &id,
        r#"printf '#include <stdio.h>\nint main(void) { puts("hello from the sandbox"); return 0; }\n' > /tmp/h.c \
           && cc -o /tmp/h /tmp/h.c && /tmp/h \
           && cc -O2 -o hello /tmp/h.c && ./hello"#,
    )
    .ok();
    assert_eq!(
        run.stdout,
        "hello from the sandbox\nhello from the sandbox\n"
    );
    // The build landed in the loop's workdir on the host, and nowhere else.
    assert!(env.workdir(&id).join("hello").is_file());
}

// ---------------------------------------------------------------------------------------
// 12. Other processes
// ---------------------------------------------------------------------------------------

#[test]
fn other_processes_cannot_be_traced_or_read() {
    let (env, id) = setup();
    let tools = sh(
        &env,
        &id,
        "strace -f true >/dev/null 2>&1 && echo ESCAPED:strace
         gdb -nx -batch -p 1 -ex 'info registers' >/dev/null 2>&1 && echo ESCAPED:gdb
         echo END",
    );
    assert_eq!(tools.code, 0, "{}", tools.stderr);
    assert_no_escape(&tools);
    tools.stdout_has("END");

    let code = format!(
        "{PY_SYSCALLS}{}",
        r#"
import subprocess
child = subprocess.Popen(["sleep", "30"])
buf = ctypes.create_string_buffer(64)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = iovec(ctypes.cast(buf, ctypes.c_void_p), 64)
for who, pid in (("pid1", 1), ("sibling", child.pid), ("self", os.getpid())):
    sc("ptrace-attach-" + who, "ptrace", 16, pid, 0, 0)
    sc("ptrace-seize-" + who, "ptrace", 0x4206, pid, 0, 0)
    sc("process_vm_readv-" + who, "process_vm_readv", pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    sc("process_vm_writev-" + who, "process_vm_writev", pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
sc("ptrace-traceme", "ptrace", 0, 0, 0, 0)
child.kill(); child.wait()
# Every process inside, the sandbox's own init included, is as confined as we are.
for p in sorted(os.listdir("/proc")):
    if p.isdigit():
        try:
            st = dict(l.split(":", 1) for l in open("/proc/%s/status" % p).read().splitlines() if ":" in l)
        except OSError:
            continue
        print("STATUS", p, st["Name"].strip(), st["CapEff"].strip(), st["NoNewPrivs"].strip(), st["Seccomp"].strip())
"#
    );
    let run = py(&env, &id, &code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for who in ["pid1", "sibling", "self"] {
        for call in [
            "ptrace-attach",
            "ptrace-seize",
            "process_vm_readv",
            "process_vm_writev",
        ] {
            assert_refused(&run, &format!("{call}-{who}"), &["EPERM"]);
        }
    }
    assert_refused(&run, "ptrace-traceme", &["EPERM"]);
    let statuses: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("STATUS "))
        .collect();
    assert!(statuses.len() >= 2, "{}", run.stdout);
    for line in statuses {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &f[3..],
            &["0000000000000000", "1", "2"],
            "a process inside has capabilities, may gain privileges or runs without seccomp: {line}"
        );
    }
}

#[test]
fn proc_shows_only_the_sandboxs_own_processes() {
    let (env, id) = setup();
    let n = nonce();
    // A host process with a unique name the sandbox must not see.
    let marker = format!("glk-hostproc-{n}");
    let mut host_proc = Command::new("sleep")
        .arg0(&marker)
        .arg("120")
        .spawn()
        .expect("start a host process");
    struct KillOnDrop<'a>(&'a mut Child);
    impl Drop for KillOnDrop<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _guard = KillOnDrop(&mut host_proc);
    assert!(wait_until(Duration::from_secs(10), || !host_procs_with(
        std::slice::from_ref(&marker)
    )
    .is_empty()));

    // The marker is split in the code, so the sandbox's own argv does not contain it.
    let (a, b) = marker.split_at(6);
    let code = format!(
        r#"
import os
needle = ("{a}" + "{b}").encode()
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("PIDS", len(pids))
for p in pids:
    try:
        comm = open("/proc/%s/comm" % p).read().strip()
        cmd = open("/proc/%s/cmdline" % p, "rb").read()
    except OSError:
        continue
    print("COMM", p, comm)
    if needle in cmd:
        print("ESCAPED: host process visible as pid", p)
"#
    );
    let host_count = host_pid_count();
    let run = py(&env, &id, &code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    let inside: usize = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("PIDS "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", run.stdout));
    // Only the sandbox's init and the command: a handful, far fewer than on the host.
    assert!(
        inside <= 5,
        "too many processes visible inside:\n{}",
        run.stdout
    );
    assert!(
        inside < host_count,
        "inside {inside}, host {host_count}:\n{}",
        run.stdout
    );
    let comms: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("COMM "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(!comms.is_empty(), "{}", run.stdout);
    for comm in &comms {
        assert!(
            ["git-loop", "python3"].contains(comm),
            "a process that is not the sandbox's is visible inside: {comm}\n{}",
            run.stdout
        );
    }
}

// ---------------------------------------------------------------------------------------
// 13. Host secrets in the environment
// ---------------------------------------------------------------------------------------

fn host_secrets(n: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GITHUB_TOKEN", format!("ghp_glk{n}github")),
        ("GH_TOKEN", format!("gho_glk{n}gh")),
        ("AWS_ACCESS_KEY_ID", format!("AKIAGLK{n}")),
        ("AWS_SECRET_ACCESS_KEY", format!("glk{n}awssecret")),
        ("AWS_SESSION_TOKEN", format!("glk{n}awssession")),
        ("SSH_AUTH_SOCK", format!("/tmp/ssh-glk{n}/agent.42")),
        ("ANTHROPIC_API_KEY", format!("sk-ant-glk{n}")),
        ("OPENAI_API_KEY", format!("sk-glk{n}openai")),
        ("NPM_TOKEN", format!("npm_glk{n}")),
        ("DOCKER_HOST", format!("unix:///tmp/glk{n}/docker.sock")),
        ("MY_SERVICE_PASSWORD", format!("hunter2glk{n}")),
    ]
}

#[test]
fn host_secrets_stay_out_of_the_sandboxs_environment() {
    let (env, id) = setup();
    let n = nonce();
    let secrets = host_secrets(&n);
    let mut cmd = env.command();
    cmd.current_dir(&env.root)
        .envs(secrets.iter().map(|(k, v)| (*k, v.as_str())))
        .env("TERM", "xterm-256color")
        .env("LANG", "C.UTF-8")
        .env("COLORTERM", "truecolor")
        .args([
            "run",
            &id,
            "--",
            "sh",
            "-c",
            "echo ENV-BEGIN; env; echo ENV-END
             for f in /proc/[0-9]*/environ; do echo \"PROC $f\"; tr '\\0' '\\n' < \"$f\"; done
             echo PID1; tr '\\0' '\\n' < /proc/1/environ || echo PID1-REFUSED",
        ]);
    let out = cmd.output().expect("start git-loop");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
    .ok();
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap_or_default();
    for (name, value) in &secrets {
        for (what, text) in [
            ("the sandbox", &run.stdout),
            ("git-loop's messages", &run.stderr),
            ("events.jsonl", &events),
        ] {
            assert!(
                !text.contains(value.as_str()),
                "{name}'s value reached {what}:\n{text}"
            );
            assert!(
                !text.contains(&format!("{name}=")),
                "{name} reached {what}:\n{text}"
            );
        }
    }
    // The sandbox read every process's environment but pid 1's, git-loop's init, which
    // is not dumpable (see no_process_inside_opens_the_memory_of_pid_1).
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("PROC /proc/") && l != "PROC /proc/1/environ"),
        "{}",
        run.stdout
    );
    run.stdout_has("PID1\nPID1-REFUSED");
    // Positive twin: the allowlisted variables and the loop's own do pass.
    for expected in [
        "TERM=xterm-256color".to_string(),
        "LANG=C.UTF-8".to_string(),
        "COLORTERM=truecolor".to_string(),
        "TZ=UTC".to_string(),
        "LC_ALL=C".to_string(),
        "HOME=/home/tester".to_string(),
        "USER=tester".to_string(),
        format!("GIT_LOOP_ID={id}"),
        "PATH=/usr/local/bin:".to_string(),
    ] {
        run.stdout_has(&expected);
    }
}

// ---------------------------------------------------------------------------------------
// 14. Inherited file descriptors
// ---------------------------------------------------------------------------------------

#[test]
fn descriptors_inherited_by_git_loop_do_not_reach_the_sandbox() {
    let (env, id) = setup();
    let n = nonce();
    let secret_file = env.root.join(format!("fd-secret-{n}"));
    let host_file = env.root.join(format!("fd-writable-{n}"));
    let secret = format!("glk-fd-secret-{n}");
    fs::write(&secret_file, &secret).unwrap();

    let script = held(
        r#"echo LS-BEGIN; ls -l /proc/self/fd; echo LS-END
if cat <&7; then echo ESCAPED:read-fd7; fi
if echo pwned >&9; then echo ESCAPED:write-fd9; fi
for fd in 3 4 5 6 7 8 9; do
  if (: <&$fd) 2>/dev/null || (: >&$fd) 2>/dev/null; then echo "ESCAPED:fd-$fd-open"; fi
done
python3 -c '
import os
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
print("PYFDS", [fd for fd in range(3, 4096) if is_open(fd)])
for p in sorted(os.listdir("/proc")):
    if p.isdigit():
        try:
            fds = os.listdir("/proc/%s/fd" % p)
        except OSError:
            continue
        for fd in fds:
            try:
                print("FD", p, fd, os.readlink("/proc/%s/fd/%s" % (p, fd)))
            except OSError:
                pass
'"#,
    );
    // sh opens fd 7 (read) and fd 9 (append) without close-on-exec, then becomes git-loop.
    let mut cmd = Command::new("sh");
    cmd.env_clear()
        .envs(env.envs())
        .current_dir(&env.root)
        .arg("-c")
        .arg(r#"exec 7<"$1" 9>>"$2"; shift 2; exec "$@""#)
        .arg("sh")
        .arg(&secret_file)
        .arg(&host_file)
        .arg(BIN)
        .args(["run", &id, "--", "sh", "-c", &script]);
    let mut live = Live::spawn(cmd, &env.root, "fds");
    let wd = env.workdir(&id);
    live.wait_for_file(&wd.join(".ready"));
    // The attack is real: git-loop itself holds both descriptors while the sandbox runs.
    let pid = live.pid();
    assert_eq!(
        fs::read_link(format!("/proc/{pid}/exe")).unwrap(),
        fs::canonicalize(BIN).unwrap()
    );
    assert_eq!(
        fs::read_link(format!("/proc/{pid}/fd/7")).unwrap(),
        secret_file
    );
    assert_eq!(
        fs::read_link(format!("/proc/{pid}/fd/9")).unwrap(),
        host_file
    );
    fs::write(wd.join(".go"), "").unwrap();
    let run = live.finish(Duration::from_secs(60));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);

    let ls: Vec<&str> = run
        .stdout
        .split("LS-BEGIN\n")
        .nth(1)
        .and_then(|s| s.split("LS-END").next())
        .unwrap_or_else(|| panic!("{}", run.stdout))
        .lines()
        .filter(|l| l.contains(" -> "))
        .collect();
    for line in &ls {
        let fd: u32 = line
            .split(" -> ")
            .next()
            .and_then(|l| l.split_whitespace().last())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("cannot read {line}"));
        let target = line.split(" -> ").nth(1).unwrap();
        // Only 0, 1, 2 and the folder `ls` itself opened to list /proc/self/fd.
        assert!(
            fd <= 2 || target.starts_with("/proc/"),
            "an unexpected descriptor inside: {line}"
        );
    }
    run.stdout_has("PYFDS []");
    for line in run.stdout.lines().filter(|l| l.starts_with("FD ")) {
        assert!(
            !line.contains(&format!("fd-secret-{n}"))
                && !line.contains(&format!("fd-writable-{n}")),
            "a process inside holds git-loop's descriptor: {line}"
        );
    }
    assert!(!run.stdout.contains(&secret), "{}", run.stdout);
    // Nothing on the host changed.
    assert_eq!(fs::read_to_string(&host_file).unwrap(), "");
    assert_eq!(fs::read_to_string(&secret_file).unwrap(), secret);
}

// ---------------------------------------------------------------------------------------
// 14b. Host unix sockets
// ---------------------------------------------------------------------------------------

/// Removes a path when dropped (a socket under the host's /tmp).
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

#[test]
fn no_host_unix_socket_is_reachable() {
    use std::os::linux::net::SocketAddrExt;
    let (env, id) = setup();
    let n = nonce();

    // Listening sockets on the host: under its /tmp, the test's root, the host HOME, the
    // workspace root, and an abstract one.
    let tmp_sock = PathBuf::from(format!("/tmp/glk-{n}.sock"));
    let _cleanup = RemoveOnDrop(tmp_sock.clone());
    fs::create_dir_all(env.home.join(".ssh")).unwrap();
    let paths = [
        tmp_sock.clone(),
        env.root.join("agent.sock"),
        env.home.join(".ssh/agent.sock"),
        env.ws.join("docker.sock"),
    ];
    let listeners: Vec<UnixListener> = paths
        .iter()
        .map(|p| UnixListener::bind(p).unwrap())
        .collect();
    let abstract_name = format!("glk-abstract-{n}");
    let abstract_addr =
        std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
    let abstract_listener = UnixListener::bind_addr(&abstract_addr).unwrap();

    let code = r#"
import errno, os, socket, sys, threading
for p in sys.argv[1:-1]:
    print("EXISTS" if os.path.lexists(p) else "ABSENT", p)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p)
        print("ESCAPED: connected to", p)
    except OSError as e:
        print("REFUSED", p, errno.errorcode.get(e.errno, e.errno))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0" + sys.argv[-1])
    print("ESCAPED: connected to the abstract socket")
except OSError as e:
    print("ABSTRACT", errno.errorcode.get(e.errno, e.errno))
# Positive twin: sockets made inside work, on a path and abstract.
for addr in ("/tmp/own.sock", "\0own-abstract"):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(addr); srv.listen(1)
    def serve():
        c, _ = srv.accept(); c.sendall(c.recv(10).upper()); c.close()
    t = threading.Thread(target=serve); t.start()
    cl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); cl.connect(addr)
    cl.sendall(b"ping"); print("OWN", repr(addr[:5]), cl.recv(10).decode()); t.join()
a, b = socket.socketpair(); a.sendall(b"pair"); print("PAIR", b.recv(4).decode())
"#;
    let mut args: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    args.push(&abstract_name);
    let run = py(&env, &id, code, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    for p in &paths {
        run.stdout_has(&format!("ABSENT {}", p.display()));
        run.stdout_has(&format!("REFUSED {} ENOENT", p.display()));
    }
    run.stdout_has("ABSTRACT ECONNREFUSED");
    run.stdout_has("OWN '/tmp/' PING");
    run.stdout_has("OWN '\\x00own-' PING");
    run.stdout_has("PAIR pair");

    // No socket anywhere in the sandbox's view, and no /run or /var.
    let find = sh(
        &env,
        &id,
        "echo FIND-BEGIN; find / -path /proc -prune -o -type s -print 2>/dev/null; echo FIND-END
         for d in /run /var /var/run /run/user; do [ -e $d ] && echo \"ESCAPED:$d exists\"; done
         echo END",
    );
    assert_no_escape(&find);
    find.stdout_has("END");
    let found = find
        .stdout
        .split("FIND-BEGIN\n")
        .nth(1)
        .and_then(|s| s.split("FIND-END").next())
        .unwrap_or_else(|| panic!("{}", find.stdout));
    assert_eq!(found, "", "sockets visible inside:\n{found}");

    // Nothing connected to the host's listeners.
    for l in listeners.iter().chain(std::iter::once(&abstract_listener)) {
        l.set_nonblocking(true).unwrap();
        let got = l.accept();
        assert!(
            matches!(&got, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "a host socket got a connection: {got:?}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 14c. Secrets in command lines on the host
// ---------------------------------------------------------------------------------------

#[test]
fn secrets_never_appear_in_a_host_command_line_during_a_run() {
    let (env, id) = setup();
    let n = nonce();
    let secrets = host_secrets(&n);
    let mut cmd = run_cmd(&env, &id, &held("echo started"));
    cmd.envs(secrets.iter().map(|(k, v)| (*k, v.as_str())));
    let mut live = Live::spawn(cmd, &env.root, "argv");
    let wd = env.workdir(&id);
    live.wait_for_file(&wd.join(".ready"));

    // While the run is live: every command line on the host.
    let all = host_cmdlines();
    let ours: Vec<&(u32, String)> = all
        .iter()
        .filter(|(_, c)| c.contains(&id) && (c.contains("bwrap") || c.contains("git-loop")))
        .collect();
    assert!(
        ours.iter().any(|(_, c)| c.contains("bwrap")),
        "the run's bwrap is not visible on the host; the scan proves nothing:\n{ours:?}"
    );
    for (pid, cmdline) in &all {
        for (name, value) in &secrets {
            assert!(
                !cmdline.contains(value.as_str()),
                "{name}'s value is in the command line of pid {pid}: {cmdline}"
            );
        }
    }
    // bwrap's environment (readable by the same user) is the sanitized one.
    for (pid, cmdline) in &ours {
        if !cmdline.contains("bwrap") {
            continue;
        }
        let environ =
            String::from_utf8_lossy(&fs::read(format!("/proc/{pid}/environ")).unwrap_or_default())
                .into_owned();
        for (name, value) in &secrets {
            assert!(
                !environ.contains(value.as_str()),
                "{name} is in bwrap's environment (pid {pid})"
            );
        }
    }
    fs::write(wd.join(".go"), "").unwrap();
    live.finish(Duration::from_secs(60))
        .ok()
        .stdout_has("started");
}

// ---------------------------------------------------------------------------------------
// 15. TIOCSTI
// ---------------------------------------------------------------------------------------

/// Makes a fresh pty the controlling terminal of a new session and pushes "x" into it
/// with TIOCSTI; prints `CTTY-STI ok|ERRNO` and what the pty's reader then gets.
const PY_PTY_STI: &str = r#"
import errno, fcntl, os, pty, select, termios
m, s = pty.openpty()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    try:
        fcntl.ioctl(s, termios.TIOCSTI, b"x")
        res = "ok"
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    os.write(w, res.encode())
    os._exit(0)
os.close(w)
os.waitpid(pid, 0)
print("CTTY-STI", os.read(r, 100).decode(), flush=True)
os.write(m, b"typed\n")
print("READ", repr(os.read(s, 100)) if select.select([s], [], [], 10)[0] else None, flush=True)
"#;

#[test]
fn tiocsti_cannot_push_characters_into_a_terminal() {
    let (env, id) = setup();
    let code = format!(
        "{}{PY_PTY_STI}",
        r#"
import errno, fcntl, os, pty, struct, termios
def attempt(label, fd, req=termios.TIOCSTI, arg=b"x"):
    try:
        fcntl.ioctl(fd, req, arg)
        print("ESCAPED:", label, "ok", flush=True)
    except OSError as e:
        print(label, errno.errorcode.get(e.errno, e.errno), flush=True)
try:
    fd = os.open("/dev/tty", os.O_RDWR)
    attempt("DEVTTY-STI", fd)
except OSError as e:
    print("DEVTTY", errno.errorcode.get(e.errno, e.errno))
for fd in (0, 1, 2):
    attempt("STD%d-STI" % fd, fd)
pm, ps = pty.openpty()
attempt("PTY-SLAVE-STI", ps)
attempt("PTY-MASTER-STI", pm)
attempt("PTY-TIOCLINUX", ps, getattr(termios, "TIOCLINUX", 0x541C), b"\x06")
# Positive twin: ordinary terminal work on a pty.
fcntl.ioctl(ps, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
print("WINSZ", struct.unpack("HHHH", fcntl.ioctl(ps, termios.TIOCGWINSZ, b"\0" * 8))[:2])
print("ISATTY", os.isatty(ps))
"#
    );
    let run = py(&env, &id, &code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    // --new-session: no controlling terminal at all.
    run.stdout_has("DEVTTY ENXIO");
    for fd in 0..3 {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!("STD{fd}-STI "))),
            "{}",
            run.stdout
        );
    }
    // seccomp refuses TIOCSTI and TIOCLINUX, even on a pty that is our own controlling
    // terminal (where the kernel itself would allow it, see the host control below).
    run.stdout_has("PTY-SLAVE-STI EPERM");
    run.stdout_has("PTY-MASTER-STI EPERM");
    run.stdout_has("PTY-TIOCLINUX EPERM");
    run.stdout_has("CTTY-STI EPERM");
    run.stdout_has("READ b'typed\\n'");
    run.stdout_has("WINSZ (40, 100)");
    run.stdout_has("ISATTY True");

    // Host control (a fresh pty only, never the caller's terminal): where the kernel
    // allows TIOCSTI on one's own terminal, the same code injects there, so the refusal
    // inside is the sandbox's doing.
    let legacy = fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "1".into());
    let host = Command::new("python3")
        .arg("-c")
        .arg(PY_PTY_STI)
        .stdin(Stdio::null())
        .output()
        .expect("run python3 on the host");
    let host_out = String::from_utf8_lossy(&host.stdout);
    if legacy == "1" {
        assert!(
            host_out.contains("CTTY-STI ok") && host_out.contains("READ b'xtyped\\n'"),
            "host control did not inject:\n{host_out}\n{}",
            String::from_utf8_lossy(&host.stderr)
        );
    }
}

// ---------------------------------------------------------------------------------------
// 16. Privilege: setuid, devices, keyrings
// ---------------------------------------------------------------------------------------

const CAPS_C: &str = r#"#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    char l[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (fgets(l, sizeof l, f))
        if (!strncmp(l, "Cap", 3) || !strncmp(l, "NoNewPrivs", 10)) fputs(l, stdout);
    printf("euid=%d\n", (int)geteuid());
    return 0;
}
"#;

#[test]
fn setuid_binaries_devices_and_keyrings_gain_nothing() {
    let (env, id) = setup();
    let n = nonce();
    let script = format!(
        r#"grep -E '^(NoNewPrivs|Cap(Inh|Prm|Eff|Bnd|Amb)|Seccomp):' /proc/self/status
su -c 'touch /tmp/su-ran' root && echo ESCAPED:su
su nobody -s /bin/sh -c 'touch /tmp/su-ran2' && echo ESCAPED:su-nobody
if command -v sudo >/dev/null; then sudo -n touch /tmp/sudo-ran && echo ESCAPED:sudo; fi
mkdir -p /tmp/mnt; mount -t tmpfs none /tmp/mnt && echo ESCAPED:mount
mknod /tmp/mem c 1 1 && echo ESCAPED:mknod-mem
mknod /tmp/null c 1 3 && echo ESCAPED:mknod-null
mknod /tmp/vda b 254 0 && echo ESCAPED:mknod-block
for f in su-ran su-ran2 sudo-ran mem null vda; do [ -e /tmp/$f ] && echo "ESCAPED:/tmp/$f exists"; done
cat > /tmp/caps.c <<'EOF'
{CAPS_C}EOF
cc -o /tmp/caps /tmp/caps.c || echo CC-FAILED
for d in /tmp "$HOME"; do
  cp /tmp/caps "$d/caps-suid"
  if chmod 4755 "$d/caps-suid"; then echo "ESCAPED:chmod-4755 $d"; else echo "SUID-REFUSED $d"; fi
  echo "SUID-RUN $d" && "$d/caps-suid"
done
echo SYSTEM-SETUID-BEGIN
for b in /usr/bin/su /usr/bin/mount /usr/bin/passwd /usr/bin/newgrp; do [ -u "$b" ] && echo "$b"; done
echo SYSTEM-SETUID-END
mkfifo /tmp/fifo && echo MKFIFO-OK
chmod 600 /tmp/fifo && echo CHMOD-OK
echo END"#
    );
    let run = sh(&env, &id, &script);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    run.stdout_has("END");
    for line in [
        "NoNewPrivs:\t1",
        "CapInh:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapEff:\t0000000000000000",
        "CapBnd:\t0000000000000000",
        "CapAmb:\t0000000000000000",
        "Seccomp:\t2",
    ] {
        run.stdout_has(line);
    }
    assert!(!run.stdout.contains("CC-FAILED"), "{}", run.stderr);
    // Setting the setuid bit is refused (seccomp), and the program of our own, run from
    // /tmp and $HOME, gains no capability.
    assert_eq!(
        run.stdout.matches("SUID-REFUSED ").count(),
        2,
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let suid_runs = run.stdout.matches("SUID-RUN ").count();
    assert_eq!(suid_runs, 2, "{}\n{}", run.stdout, run.stderr);
    for cap in ["CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let lines: Vec<&str> = run
            .stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{cap}:")))
            .collect();
        assert!(lines.len() >= 3, "{}\nSTDERR:\n{}", run.stdout, run.stderr);
        for l in lines {
            assert!(l.ends_with("0000000000000000"), "capability gained: {l}");
        }
    }
    // The host's setuid binaries are there (su failed above despite its setuid bit).
    let system: &str = run
        .stdout
        .split("SYSTEM-SETUID-BEGIN\n")
        .nth(1)
        .and_then(|s| s.split("SYSTEM-SETUID-END").next())
        .unwrap();
    assert!(system.contains("/usr/bin/su"), "{}", run.stdout);
    run.stdout_has("MKFIFO-OK");
    run.stdout_has("CHMOD-OK");

    // Kernel keyrings: no key can be added, requested or looked up.
    let desc = format!("glk-key-{n}");
    let code = format!(
        "{PY_SYSCALLS}{}",
        r#"
desc = sys.argv[1].encode()
sc("add_key-process", "add_key", b"user", desc, b"payload", 7, -2)
sc("add_key-user", "add_key", b"user", desc, b"payload", 7, -4)
sc("add_key-session", "add_key", b"keyring", desc, None, 0, -3)
sc("request_key", "request_key", b"user", desc, None, 0)
sc("keyctl-get-user", "keyctl", 0, -4, 0)
sc("keyctl-join-session", "keyctl", 1, desc)
sc("io_uring_setup", "io_uring_setup", 8, ctypes.create_string_buffer(128))
sc("bpf", "bpf", 0, ctypes.create_string_buffer(128), 128)
"#
    );
    let keys = py(&env, &id, &code, &[&desc]);
    assert_eq!(keys.code, 0, "{}\n{}", keys.stdout, keys.stderr);
    for label in [
        "add_key-process",
        "add_key-user",
        "add_key-session",
        "request_key",
        "keyctl-get-user",
        "keyctl-join-session",
        "io_uring_setup",
        "bpf",
    ] {
        assert_refused(&keys, label, &["EPERM"]);
    }
    // Nothing on the host: no key with that description, no device in the workdir.
    let host_keys = fs::read_to_string("/proc/keys").unwrap_or_default();
    assert!(!host_keys.contains(&desc), "{host_keys}");
    let upper = env.loop_dir(&id).join("home/upper/caps-suid");
    assert!(
        upper.is_file(),
        "the copy in $HOME persists in the loop's upper layer"
    );
}

/// A setuid or setgid file made inside must not end up on the host with that bit: any
/// other host user could run it as the loop's user (as root when git-loop runs as root).
#[test]
fn setuid_files_made_inside_do_not_reach_the_host() {
    let (env, id) = setup();
    let run = sh(
        &env,
        &id,
        "for d in . /loopat/context/notes /loopat/loop/$GIT_LOOP_ID/.claude \"$HOME\"; do
           cp /bin/true \"$d/planted-suid\" && chmod 4755 \"$d/planted-suid\"
           cp /bin/true \"$d/planted-sgid\" && chmod 2755 \"$d/planted-sgid\"
           python3 -c 'import os,sys; os.close(os.open(sys.argv[1], os.O_CREAT|os.O_WRONLY, 0o4755))' \"$d/planted-open\"
           install -m 4755 /bin/true \"$d/planted-install\"
           cp -p /usr/bin/su \"$d/planted-cp-p\"
           python3 -c 'import os,sys; open(sys.argv[1], \"w\").close(); os.chmod(sys.argv[1], 0o6755)' \"$d/planted-pychmod\"
           cp /bin/true \"$d/planted-fcap\"
           python3 -c 'import os,sys; os.setxattr(sys.argv[1], \"security.capability\", bytes.fromhex(\"0100000280000000000000000000000000000000\"))' \"$d/planted-fcap\"
           mkdir -m 2775 \"$d/planted-sgid-dir\"
           touch \"$d/planted-sgid-dir/f\" && chmod 2755 \"$d/planted-sgid-dir/f\"
         done
         echo END",
    )
    .ok();
    run.stdout_has("END");
    // File capabilities are as good as a setuid bit: none was written.
    let fcaps = Command::new("python3")
        .arg("-c")
        .arg(
            r#"
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(root, f)
        try:
            os.getxattr(p, "security.capability", follow_symlinks=False)
            print(p)
        except OSError:
            pass
"#,
        )
        .arg(env.loop_dir(&id))
        .output()
        .expect("python3 on the host");
    assert!(fcaps.status.success());
    assert_eq!(
        String::from_utf8_lossy(&fcaps.stdout),
        "",
        "files with capabilities made in the sandbox are on the host"
    );
    let mut planted = Vec::new();
    let mut stack = vec![env.loop_dir(&id)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            } else if meta.permissions().mode() & 0o6000 != 0 {
                planted.push(format!(
                    "{:o} {}",
                    meta.permissions().mode(),
                    entry.path().display()
                ));
            }
        }
    }
    assert!(
        planted.is_empty(),
        "setuid/setgid files made in the sandbox are on the host:\n{}",
        planted.join("\n")
    );
}

/// The sandbox's processes have no capability, but where git-loop runs as root their uid
/// is the host's root uid, which is all the kernel asks for to write most of /proc/sys:
/// `kernel.core_pattern` or `kernel.modprobe` name programs the kernel runs as root on
/// the host. Every tunable must be read-only inside. Only opened for writing, never
/// written, so the test is harmless even where the sandbox fails it.
#[test]
fn kernel_tunables_in_proc_sys_are_read_only() {
    let (env, id) = setup();
    let before = fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    let code = r#"
import errno, os
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
          "/proc/sys/kernel/sysrq", "/proc/sys/kernel/panic", "/proc/sys/kernel/printk",
          "/proc/sys/kernel/randomize_va_space", "/proc/sys/fs/suid_dumpable",
          "/proc/sys/vm/drop_caches", "/proc/sys/vm/overcommit_memory",
          "/proc/sysrq-trigger"):
    try:
        fd = os.open(p, os.O_WRONLY)
        os.close(fd)  # never written
        print("ESCAPED: writable", p)
    except OSError as e:
        print("REFUSED", p, errno.errorcode.get(e.errno, e.errno))
print("END")
"#;
    let run = py(&env, &id, code, &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    run.stdout_has("END");
    assert_no_escape(&run);
    assert_eq!(
        fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap(),
        before
    );
}

#[test]
fn kernel_interfaces_and_devices_are_out_of_reach() {
    let (env, id) = setup();
    let hostname = fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let run = sh(
        &env,
        &id,
        "[ -e /sys ] && echo ESCAPED:sys-exists
         [ -e /sys/fs/cgroup ] && echo ESCAPED:cgroupfs-visible
         for d in mem kmem port kmsg vda sda nvme0 loop-control fuse net/tun kvm; do
           [ -e /dev/$d ] && echo \"ESCAPED:/dev/$d exists\"
         done
         echo BLOCK-BEGIN; find /dev -type b 2>/dev/null; echo BLOCK-END
         dmesg >/dev/null 2>&1 && echo ESCAPED:dmesg
         head -c 16 /proc/kcore >/dev/null 2>&1 && echo ESCAPED:kcore
         hostname glk-pwned 2>/dev/null && echo ESCAPED:hostname
         echo \"HOSTNAME $(hostname)\"
         # Positive twin: the devices programs need work.
         head -c 4 /dev/urandom | wc -c
         echo x > /dev/null && echo DEVNULL-OK
         echo END",
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    run.stdout_has("END");
    run.stdout_has("BLOCK-BEGIN\nBLOCK-END");
    run.stdout_has("HOSTNAME loop\n");
    run.stdout_has("4\nDEVNULL-OK");
    assert_eq!(
        fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        hostname
    );
}

#[test]
fn process_limits_and_priorities_cannot_be_raised() {
    let (env, id) = setup();
    let run = sh(
        &env,
        &id,
        "echo \"CORE $(ulimit -c)\"
         echo \"NOFILE $(ulimit -Hn)\"
         (ulimit -Hn 1048576) 2>/dev/null && echo ESCAPED:nofile-raised
         (ulimit -Hc unlimited) 2>/dev/null && echo ESCAPED:core-raised
         (echo -1000 > /proc/self/oom_score_adj) 2>/dev/null && echo ESCAPED:oom-unkillable
         python3 -c '
import os
try:
    os.setpriority(os.PRIO_PROCESS, 0, -10)
    print(\"ESCAPED: negative nice\")
except OSError as e:
    print(\"NICE refused\", e.errno)
'
         # Positive twin: lowering one's own priority and limits works.
         (ulimit -Sn 256 && echo \"LOWERED $(ulimit -Sn)\")
         echo 500 > /proc/self/oom_score_adj && echo OOM-RAISED
         echo BASE $(cut -d\" \" -f19 /proc/self/stat)
         nice -n 5 sh -c 'echo NICE $(cut -d\" \" -f19 /proc/self/stat)'
         echo END",
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_no_escape(&run);
    run.stdout_has("END");
    run.stdout_has("CORE 0\n");
    let nofile: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("NOFILE "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(nofile <= 4096, "NOFILE hard limit {nofile}");
    run.stdout_has("NICE refused");
    run.stdout_has("LOWERED 256");
    run.stdout_has("OOM-RAISED");
    // Five above where the sandbox started (which is where its caller runs: a niced
    // caller gives a niced sandbox).
    let field = |name: &str| -> i64 {
        run.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(name))
            .find_map(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name}in {}", run.stdout))
    };
    assert_eq!(
        field("NICE "),
        (field("BASE ") + 5).min(19),
        "{}",
        run.stdout
    );
}

/// The filter is for x86_64 system calls; the same calls through the 32-bit entry
/// (`int $0x80`, other numbers) must not slip past it.
#[cfg(target_arch = "x86_64")]
#[test]
fn thirty_two_bit_system_calls_do_not_bypass_the_filter() {
    let (env, id) = setup();
    let c = r#"#include <stdio.h>
#include <unistd.h>
static long sys32(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile ("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
    return ret;
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("START %d\n", (int)getpid());
    printf("I386 getpid %ld\n", sys32(20, 0, 0, 0));
    printf("I386 keyctl %ld\n", sys32(288, 0, -4, 0));       /* KEYCTL_GET_KEYRING_ID */
    printf("I386 ptrace-traceme %ld\n", sys32(26, 0, 0, 0)); /* PTRACE_TRACEME */
    printf("I386 personality %ld\n", sys32(136, 0xffffffffL, 0, 0));
    printf("I386 unshare-uts %ld\n", sys32(310, 0x04000000, 0, 0));
    puts("DONE");
    return 0;
}
"#;
    // The attack's power: on the host, outside any sandbox, the 32-bit entry works on
    // this kernel (a harmless getpid through it returns the pid).
    let dir = env.root.join("i386");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("i386.c"), c).unwrap();
    let cc = Command::new("cc")
        .args(["-o", "i386", "i386.c"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(cc.success(), "cc failed on the host");
    let host = Command::new(dir.join("i386")).output().unwrap();
    let host_out = String::from_utf8_lossy(&host.stdout).into_owned();
    let host_pid: i64 = host_out
        .lines()
        .find_map(|l| l.strip_prefix("START "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        host_out.contains(&format!("I386 getpid {host_pid}\n")),
        "this kernel has no 32-bit entry, so the test proves nothing:\n{host_out}"
    );
    // Inside: the filter allows no 32-bit system call at all, so the first one, even a
    // getpid, kills the process with SIGSYS before it returns (128 + 31); nothing of the
    // 32-bit calls runs. Twin: the same program's 64-bit calls (getpid, write) ran.
    let script = format!(
        "cat > /tmp/i386.c <<'EOF'\n{c}EOF\ncc -o /tmp/i386 /tmp/i386.c || exit 99\n/tmp/i386\necho \"RC $?\""
    );
    let run = sh(&env, &id, &script);
    assert_ne!(run.code, 99, "cc failed:\n{}", run.stderr);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("START ")),
        "the program's 64-bit calls did not run:\n{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("I386 "),
        "a 32-bit system call returned inside the sandbox:\n{}",
        run.stdout
    );
    run.stdout_has(&format!("RC {}\n", 128 + libc::SIGSYS));
}

/// Sockets that reach past the namespaces: `AF_VSOCK` talks to the hypervisor's services
/// whatever the network namespace, `AF_NETLINK` to the kernel's configuration interfaces.
/// Both are refused with EAFNOSUPPORT in every network mode; the families work leaves
/// alone (unix, IPv4, IPv6) still do, in the same sandbox.
#[test]
fn vsock_and_netlink_sockets_cannot_be_made() {
    let (env, id) = setup();
    let code = r#"
import errno, socket, sys
def attempt(label, family, kind, proto=0):
    try:
        s = socket.socket(family, kind, proto)
        s.close()
        print("SOCKET %s: made" % label)
    except OSError as e:
        print("SOCKET %s: refused %s" % (label, errno.errorcode.get(e.errno, e.errno)))
attempt("vsock-stream", socket.AF_VSOCK, socket.SOCK_STREAM)
attempt("vsock-dgram", socket.AF_VSOCK, socket.SOCK_DGRAM)
attempt("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
attempt("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9)
attempt("netlink-uevent", socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
try:
    socket.socketpair(socket.AF_NETLINK, socket.SOCK_RAW)
    print("SOCKET netlink-pair: made")
except OSError as e:
    print("SOCKET netlink-pair: refused %s" % errno.errorcode.get(e.errno, e.errno))
attempt("unix", socket.AF_UNIX, socket.SOCK_STREAM)
attempt("inet", socket.AF_INET, socket.SOCK_STREAM)
attempt("inet6", socket.AF_INET6, socket.SOCK_DGRAM)
"#;
    // The attack's power: on the host, outside any sandbox, the same calls make netlink
    // sockets (and vsock ones where the kernel has the family).
    let host = std::process::Command::new("python3")
        .args(["-c", code])
        .output()
        .unwrap();
    let host = String::from_utf8_lossy(&host.stdout).into_owned();
    assert!(
        host.contains("SOCKET netlink-route: made"),
        "the host itself cannot make a netlink socket, so the test proves nothing:\n{host}"
    );
    for net in ["none", "proxy", "host"] {
        let run = env.run(["run", "--net", net, &id, "--", "python3", "-c", code]);
        assert_eq!(run.code, 0, "{net}: {}\n{}", run.stdout, run.stderr);
        for label in [
            "vsock-stream",
            "vsock-dgram",
            "netlink-route",
            "netlink-audit",
            "netlink-uevent",
        ] {
            run.stdout_has(&format!("SOCKET {label}: refused EAFNOSUPPORT\n"));
        }
        // socketpair knows only unix sockets: refused before or by the filter.
        assert!(
            run.stdout.contains("SOCKET netlink-pair: refused"),
            "{net}: {}",
            run.stdout
        );
        for label in ["unix", "inet", "inet6"] {
            run.stdout_has(&format!("SOCKET {label}: made\n"));
        }
    }
}

/// With `--net host` the sandbox shares the host's network namespace, and abstract unix
/// sockets (X11's `@/tmp/.X11-unix/X0`, D-Bus, container shims) belong to it: reachable
/// unless something else scopes them. ATTACKS 14b: no host unix socket, in any mode.
#[test]
fn abstract_host_sockets_stay_unreachable_with_host_network() {
    use std::os::linux::net::SocketAddrExt;
    let (env, id) = setup();
    let name = format!("glk-abstract-host-{}", nonce());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    let code = r#"
import errno, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0" + sys.argv[1])
    print("ESCAPED: connected to the host's abstract socket")
except OSError as e:
    print("REFUSED", errno.errorcode.get(e.errno, e.errno))
"#;
    let run = env.run([
        "run", &id, "--net", "host", "--", "python3", "-c", code, &name,
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    listener.set_nonblocking(true).unwrap();
    let got = listener.accept();
    assert_no_escape(&run);
    assert!(
        matches!(&got, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the host's abstract socket got a connection from the sandbox"
    );
}

// ---------------------------------------------------------------------------------------
// 17. Fork bomb, memory bomb, /tmp
// ---------------------------------------------------------------------------------------

#[test]
fn a_fork_bomb_stays_inside_its_pids_limit() {
    let (env, id) = setup();
    env.write_profile("[limits]\npids = 64\n");
    let n = nonce();
    // The marker is assembled by the shell, so only the bomb's processes carry it.
    let marker = format!("glkbomb-{n}");
    let script = format!(
        r#"M=glkbomb; timeout 5 sh -c "b(){{ b|b& }}; b; exec sleep 30 # $M-{n}"; echo "timeout rc=$?"; echo alive"#
    );
    let mut live = Live::spawn(run_cmd(&env, &id, &script), &env.root, "bomb");
    let needles = [marker.clone()];
    let mut max_seen = 0;
    let mut answered = false;
    let deadline = Instant::now() + Duration::from_secs(90);
    while live.running() {
        let count = host_procs_with(&needles).len();
        max_seen = max_seen.max(count);
        if count > 0 && !answered {
            // The host keeps answering while the bomb runs.
            host_answers(&env);
            answered = true;
        }
        assert!(Instant::now() < deadline, "the bomb's run did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    let run = live.finish(Duration::from_secs(5));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    // Either the bomb ran until `timeout` ended it (124), or the bomb's first shell met
    // the limit itself and gave up ("Cannot fork", 2): both are the limit holding, and
    // which comes first is a matter of timing on a loaded machine.
    assert!(
        run.stdout.contains("timeout rc=124") || run.stdout.contains("timeout rc=2\n"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    run.stdout_has("alive");
    // The limit bit: forks failed inside.
    assert!(
        run.stderr.to_lowercase().contains("fork"),
        "no fork ever failed, the limit did not bind:\n{}",
        run.stderr
    );
    assert!(
        max_seen <= 64,
        "{max_seen} bomb processes on the host, more than the limit of 64"
    );
    // Afterwards: no bomb process left, and the host answers.
    assert!(
        wait_until(Duration::from_secs(10), || host_procs_with(&needles)
            .is_empty()),
        "bomb processes survived the run: {:?}",
        host_procs_with(&needles)
    );
    host_answers(&env);
}

#[test]
fn a_memory_bomb_is_contained_by_the_memory_limit() {
    let (env, id) = setup();
    env.write_profile("[limits]\nmemory = \"256M\"\n");
    let bomb = py(
        &env,
        &id,
        r#"
chunks = []
for i in range(32):
    chunks.append(b"\x01" * (64 << 20))
    print("chunk", i + 1, flush=True)
print("ALLOCATED 2 GiB")
"#,
        &[],
    );
    assert_ne!(bomb.code, 0, "{}\n{}", bomb.stdout, bomb.stderr);
    assert!(!bomb.stdout.contains("ALLOCATED"), "{}", bomb.stdout);
    let chunks = bomb.stdout.matches("chunk ").count();
    assert!(chunks < 8, "{chunks} chunks of 64 MiB under a 256M limit");
    host_answers(&env);
    // Positive twin: within the limit, memory is there.
    py(
        &env,
        &id,
        "x = b'\\x01' * (64 << 20); print('OK', len(x) >> 20)",
        &[],
    )
    .ok()
    .stdout_has("OK 64");
}

#[test]
fn filling_tmp_is_bounded() {
    let (env, id) = setup();
    env.write_profile("[limits]\nmemory = \"256M\"\n");
    // Positive twin first: /tmp is a finite tmpfs, and 100 MiB fit.
    let ok = sh(
        &env,
        &id,
        "df -B1 --output=size /tmp | tail -1
         dd if=/dev/zero of=/tmp/fill bs=1M count=100 2>/dev/null && echo DD100-OK
         du -sm /tmp/fill",
    )
    .ok();
    ok.stdout_has("DD100-OK");
    let size: u64 = ok
        .stdout
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", ok.stdout));
    assert!(
        size > 0 && size <= 4 << 30,
        "/tmp is {size} bytes: not bounded"
    );
    // Filling it: writes stop (ENOSPC, or the writer is killed at the memory limit).
    let fill = py(
        &env,
        &id,
        r#"
import errno
block = b"\0" * (16 << 20)
written = 0
try:
    with open("/tmp/fill", "wb") as f:
        while written < (1 << 30):
            f.write(block); f.flush()
            written += len(block)
            print("WROTE", written >> 20, flush=True)
    print("FILLED 1 GiB")
except OSError as e:
    print("STOPPED", errno.errorcode.get(e.errno, e.errno), written >> 20)
"#,
        &[],
    );
    assert!(
        !fill.stdout.contains("FILLED"),
        "1 GiB went into /tmp under a 256M limit:\n{}",
        fill.stdout
    );
    let most = fill
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("WROTE "))
        .filter_map(|s| s.trim().parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    assert!(
        most <= 256,
        "{most} MiB written into /tmp under a 256M limit"
    );
    host_answers(&env);
    // The next run gets a fresh, empty /tmp.
    assert_eq!(sh(&env, &id, "ls -A /tmp | wc -l").ok().stdout.trim(), "0");
}

// ---------------------------------------------------------------------------------------
// 18. Surviving the run
// ---------------------------------------------------------------------------------------

#[test]
fn background_processes_die_when_the_run_returns() {
    let (env, id) = setup();
    let n = nonce();
    let markers: Vec<String> = ["A", "B", "C", "D"]
        .iter()
        .map(|k| format!("glkbg{k}-{n}"))
        .collect();
    // Four ways to linger: `&`, setsid, nohup, a double fork with setsid. The markers are
    // assembled by the shell so only the lingering processes carry them.
    let script = format!(
        r#"M=glkbg
bash -c "exec -a ${{M}}A-{n} sleep 300" &
setsid -f bash -c "exec -a ${{M}}B-{n} sleep 300"
nohup bash -c "exec -a ${{M}}C-{n} sleep 300" >/dev/null 2>&1 &
python3 -c '
import os, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("bash", ["bash", "-c", "exec -a %sD-%s sleep 300" % (sys.argv[1], sys.argv[2])])
    os._exit(0)
' "$M" {n}
i=0
while [ "$(grep -la "${{M}}[ABCD]-{n}" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo "STARTED $(grep -la "${{M}}[ABCD]-{n}" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)""#
    );
    let run = sh(&env, &id, &script);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let started: usize = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("STARTED "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        started >= 4,
        "the background processes did not all start:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    // `git loop run` has returned: none of them is left on the host.
    let left = host_procs_with(&markers);
    let gone = left.is_empty()
        || wait_until(Duration::from_secs(5), || {
            host_procs_with(&markers).is_empty()
        });
    assert!(
        gone,
        "background processes outlived the run: {:?}",
        host_procs_with(&markers)
    );
    // And the run's cgroups are gone.
    assert_eq!(
        cgroups_named(&format!("git-loop-{id}-")),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn killing_git_loop_kills_the_sandbox() {
    let (env, id) = setup();
    let _sweep = SweepCgroups(format!("git-loop-{id}-"));
    let n = nonce();
    let markers: Vec<String> = ["A", "B", "C"]
        .iter()
        .map(|k| format!("glkkill{k}-{n}"))
        .collect();
    let script = format!(
        r#"M=glkkill
bash -c "exec -a ${{M}}A-{n} sleep 300" &
setsid -f bash -c "exec -a ${{M}}B-{n} sleep 300"
exec bash -c "exec -a ${{M}}C-{n} sleep 300""#
    );
    let mut live = Live::spawn(run_cmd(&env, &id, &script), &env.root, "killed");
    let all_up = wait_until(Duration::from_secs(60), || {
        let procs = host_procs_with(&markers);
        markers
            .iter()
            .all(|m| procs.iter().any(|(_, c)| c.starts_with(m.as_str())))
            || !live.running()
    });
    assert!(
        all_up && live.running(),
        "the sandbox's processes never all started: {:?}\n{:?}",
        host_procs_with(&markers),
        live.output()
    );
    // SIGKILL: git-loop gets no chance to clean up.
    live.child.kill().unwrap();
    live.child.wait().unwrap();
    if env.joined() {
        // In a live session the killed joiner's command ends with it (A and C, its process
        // group), while what left the group (B, `setsid`) is the session's, as a dev
        // server started by a run is: it lives until the session ends.
        assert!(
            wait_until(Duration::from_secs(10), || {
                let procs = host_procs_with(&markers);
                procs.len() == 1 && procs[0].1.starts_with(markers[1].as_str())
            }),
            "{:?}",
            host_procs_with(&markers)
        );
        env.run(["down", &id]).ok();
    }
    assert!(
        wait_until(Duration::from_secs(10), || host_procs_with(&markers)
            .is_empty()),
        "sandboxed processes outlived a killed git-loop: {:?}",
        host_procs_with(&markers)
    );
    // No bwrap of this loop is left either, and the loop still works.
    assert!(
        wait_until(Duration::from_secs(10), || host_cmdlines()
            .iter()
            .all(|(_, c)| !(c.contains("bwrap") && c.contains(&id)))),
        "a bwrap of the loop survived"
    );
    sh(&env, &id, "echo still-works")
        .ok()
        .stdout_has("still-works");
    // The killed run's cgroups do not stay behind on the host (at the latest, the loop's
    // next run clears them).
    assert_eq!(
        cgroups_named(&format!("git-loop-{id}-")),
        Vec::<PathBuf>::new(),
        "cgroups of the killed run are left on the host"
    );
}

/// The events of a loop, parsed.
fn loop_events(env: &TestEnv, id: &str) -> Vec<serde_json::Value> {
    fs::read_to_string(env.loop_dir(id).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// ATTACKS 34: whatever started the run dying (SIGKILL to the `git` front-end, as an
/// editor or a supervising script sends) ends the sandbox: git-loop notices its parent
/// is gone, kills the sandbox, imports and records the end.
#[test]
fn killing_the_git_front_end_ends_the_sandbox() {
    let (env, id) = setup();
    let _sweep = SweepCgroups(format!("git-loop-{id}-"));
    let n = nonce();
    let marker = format!("glkfront-{n}");
    // `git loop` finds git-loop on PATH, as for a user.
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let git_loop = |args: &[&str]| {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .envs(env.envs())
            .env("PATH", &path)
            .current_dir(&env.root)
            .arg("loop")
            .args(args);
        cmd
    };
    // Positive twin: through the front-end, a run works and returns its code.
    let twin = git_loop(&["run", &id, "--", "sh", "-c", "echo via-git; exit 7"])
        .output()
        .unwrap();
    assert_eq!(twin.status.code(), Some(7), "{twin:?}");
    assert!(String::from_utf8_lossy(&twin.stdout).contains("via-git"));

    let script = format!(
        "echo x > {f}; bash -c 'exec -a {marker} sleep 300' & exec bash -c 'exec -a {marker}b sleep 300'",
        f = "committed-before-the-kill.txt"
    );
    let mut live = Live::spawn(
        git_loop(&["run", &id, "--", "sh", "-c", &script]),
        &env.root,
        "front",
    );
    let up = wait_until(Duration::from_secs(60), || {
        host_procs_named(&marker).len() >= 2 || !live.running()
    });
    assert!(
        up && live.running(),
        "the sandbox never started: {:?}",
        live.output()
    );
    let git_loop_pids: Vec<u32> = host_cmdlines()
        .into_iter()
        .filter(|(_, c)| c.contains("git-loop") && c.contains(&id) && c.contains("run"))
        .map(|(p, _)| p)
        .collect();
    assert!(!git_loop_pids.is_empty(), "no git-loop process under git");
    // The front-end is `live.child`: SIGKILL it, as a supervisor would.
    live.child.kill().unwrap();
    live.child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(15), || host_procs_named(&marker)
            .is_empty()),
        "the sandbox outlived its git front-end: {:?}",
        host_procs_named(&marker)
    );
    assert!(
        wait_until(Duration::from_secs(15), || git_loop_pids
            .iter()
            .all(|p| !Path::new(&format!("/proc/{p}")).exists())),
        "git-loop outlived its git front-end"
    );
    // It recorded the end, with the signal that ended it.
    let events = loop_events(&env, &id);
    let last = events.last().unwrap();
    assert_eq!(last["kind"], "exit", "{events:?}");
    assert_eq!(last["signal"], "HUP", "{last}");
    assert_eq!(last["code"], 129, "{last}");
}

/// A TERM, HUP or INT sent to git-loop during a run ends the sandbox and writes the exit
/// event with the signal; the run exits with 128 + the signal.
#[test]
fn a_signal_to_git_loop_ends_the_run_and_is_recorded() {
    let (env, id) = setup();
    let _sweep = SweepCgroups(format!("git-loop-{id}-"));
    for (sig, name, number) in [
        (libc::SIGTERM, "TERM", 15),
        (libc::SIGHUP, "HUP", 1),
        (libc::SIGINT, "INT", 2),
    ] {
        let marker = format!("glksig{name}-{}", nonce());
        let script = format!("exec bash -c 'exec -a {marker} sleep 300'");
        let mut live = Live::spawn(run_cmd(&env, &id, &script), &env.root, name);
        let up = wait_until(Duration::from_secs(60), || {
            !host_procs_named(&marker).is_empty() || !live.running()
        });
        assert!(
            up && live.running(),
            "{name}: never started: {:?}",
            live.output()
        );
        // SAFETY: a plain kill of our own child.
        unsafe { libc::kill(live.pid() as i32, sig) };
        let run = live.finish(Duration::from_secs(30));
        assert_eq!(run.code, 128 + number, "{name}: {run:?}");
        run.stderr_has(&format!("git-loop: SIG{name} ended the run"));
        assert!(
            wait_until(Duration::from_secs(10), || host_procs_named(&marker)
                .is_empty()),
            "{name}: the sandbox outlived the run"
        );
        let events = loop_events(&env, &id);
        // Joined: the command's exit, before the session's own end.
        let last = if env.joined() {
            events.iter().rev().find(|e| e["joined"] == true).unwrap()
        } else {
            events.last().unwrap()
        };
        assert_eq!(last["kind"], "exit", "{name}: {events:?}");
        assert_eq!(last["signal"], name, "{last}");
    }
    // `git loop log` says how the run ended.
    env.run(["log", &id])
        .ok()
        .stdout_has("(ended by SIGINT to git-loop)");
}

/// Positive twin of 18: a run's clean-up of killed runs' cgroups never takes a live run
/// for a dead one, whatever the binary is called (a live run's supervisor is named by its
/// pid and start time, not by its command name).
#[test]
fn concurrent_runs_leave_each_other_alone_under_any_binary_name() {
    let (env, id) = setup();
    let _sweep = SweepCgroups(format!("git-loop-{id}-"));
    let renamed = env.root.join("gl-renamed");
    fs::copy(BIN, &renamed).unwrap();
    let n = nonce();
    let mut cmd = Command::new(&renamed);
    cmd.env_clear()
        .envs(env.envs())
        .current_dir(&env.root)
        .args(["run", &id, "--", "sh", "-c"])
        .arg(format!("touch started-{n}; sleep 2; echo survived-{n}"));
    let mut first = Live::spawn(cmd, &env.root, "first");
    let started = env.workdir(&id).join(format!("started-{n}"));
    assert!(
        wait_until(Duration::from_secs(30), || started.exists()
            || !first.running()),
        "{:?}",
        first.output()
    );
    // A second run, from a binary of the same name, sweeps while the first one runs.
    let second = Command::new(&renamed)
        .env_clear()
        .envs(env.envs())
        .current_dir(&env.root)
        .args(["run", "-q", &id, "--", "true"])
        .output()
        .unwrap();
    assert!(second.status.success(), "{second:?}");
    let run = first.finish(Duration::from_secs(30));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("survived-{n}")),
        "{}",
        run.stdout
    );
}

/// Positive twin of 18: a background job that ends before the command does its work.
#[test]
fn a_background_job_that_finishes_in_time_works() {
    let (env, id) = setup();
    sh(
        &env,
        &id,
        "(sleep 0.2; echo bg-done > bgfile) & (echo second > bg2) & wait; cat bgfile bg2",
    )
    .ok()
    .stdout_has("bg-done\nsecond");
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join("bgfile")).unwrap(),
        "bg-done\n"
    );
}

// ---------------------------------------------------------------------------------------
// Positive twin: what the agent installs in $HOME persists for the loop's next runs
// ---------------------------------------------------------------------------------------

#[test]
fn pip_install_user_persists_in_the_loops_home() {
    let (env, id) = setup();
    let install = sh(
        &env,
        &id,
        r#"mkdir -p /tmp/pkg/glkpkg
printf 'VALUE = 42\n' > /tmp/pkg/glkpkg/__init__.py
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "glkpkg"\nversion = "0.1"\n' > /tmp/pkg/pyproject.toml
cd /tmp && python3 -m pip install -q --user --no-index --no-build-isolation --break-system-packages /tmp/pkg"#,
    );
    assert_eq!(install.code, 0, "{}\n{}", install.stdout, install.stderr);
    // The next run (a fresh /tmp, a new sandbox) imports it from $HOME.
    sh(
        &env,
        &id,
        "cd /tmp && python3 -c 'import glkpkg; print(\"VALUE\", glkpkg.VALUE, glkpkg.__file__)'",
    )
    .ok()
    .stdout_has("VALUE 42 /home/tester/.local/lib/python3");
    // On the host it lives in the loop's upper layer, not in the user's HOME.
    assert!(env.loop_dir(&id).join("home/upper/.local/lib").is_dir());
    assert!(!env.home.join(".local/lib").exists());
    // Another loop does not see it.
    let repo = env.root.join("app");
    let other = env.new_loop(&repo, "other loop");
    let run = sh(&env, &other, "cd /tmp && python3 -c 'import glkpkg'");
    assert_ne!(run.code, 0, "another loop sees this loop's $HOME");
}

/// Pid 1 of the sandbox is git-loop's init, which is not dumpable: no process inside
/// opens its memory (to read or write), its descriptors or its environment, as every
/// ptrace-mode check fails against it. The twin: a process still reads its own
/// `/proc/self/mem` (some runtimes do), its children's, and `ps` lists every process.
#[test]
fn no_process_inside_opens_the_memory_of_pid_1() {
    let (env, id) = setup();
    let code = r#"
import os, subprocess, sys
def tryopen(path, flags):
    try:
        os.close(os.open(path, flags))
        return "opened"
    except PermissionError:
        return "refused"
print("rw", tryopen("/proc/1/mem", os.O_RDWR))
print("ro", tryopen("/proc/1/mem", os.O_RDONLY))
print("task", tryopen("/proc/1/task/1/mem", os.O_RDWR))
print("environ", tryopen("/proc/1/environ", os.O_RDONLY))
print("fd", tryopen("/proc/1/fd/0", os.O_RDONLY))
fd = os.open("/proc/self/mem", os.O_RDONLY)
print("self", len(os.pread(fd, 4, id(fd))) == 4)
child = subprocess.Popen(["sleep", "5"])
print("child", tryopen("/proc/%d/mem" % child.pid, os.O_RDWR))
child.kill()
print(subprocess.run(["ps", "-eo", "pid=,comm="], capture_output=True, text=True).stdout)
"#;
    let run = py(&env, &id, code, &[]).ok();
    for line in [
        "rw refused",
        "ro refused",
        "task refused",
        "environ refused",
        "fd refused",
        "self True",
        "child opened",
    ] {
        run.stdout_has(line);
    }
    // ps still sees pid 1 (git-loop's init) and the command.
    let ps: Vec<&str> = run.stdout.lines().map(str::trim).collect();
    assert!(ps.iter().any(|l| l.starts_with("1 ")), "{}", run.stdout);
    assert!(ps.iter().any(|l| l.ends_with("python3")), "{}", run.stdout);
}

/// Pid 1 keeps CAP_SYS_PTRACE (permitted only, raised in its supervisor's thread around
/// the open of a caller's own /proc entries: src/sandbox/caps.rs). Nothing of it reaches
/// the command: the command and its descendants have every capability set empty; pid 1
/// still cannot be opened or traced; and no process can make pid 1 open another
/// process's memory for it (an `O_CREAT` open goes to the supervisor, which opens as the
/// caller could: a non-dumpable sibling's `/proc/PID/mem` by path, by a folder
/// descriptor and through `/proc/self/fd/N/...` fails as it would for the caller). The
/// twins: the non-dumpable sibling opens its own memory, and the command its own.
#[test]
fn no_process_inside_holds_a_capability_nor_makes_pid_1_its_deputy() {
    let (env, id) = setup();
    let code = r#"
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def caps(text):
    return sorted(l.split(":")[0] + "=" + l.split(":")[1].strip() for l in text.splitlines() if l.startswith("Cap"))
print("self", caps(open("/proc/self/status").read()))
deep = subprocess.run(["sh", "-c", "sh -c 'cat /proc/self/status'"], capture_output=True, text=True).stdout
print("descendant", caps(deep))
print("pid1", caps(open("/proc/1/status").read()))
print("pid1-threads", sorted(set(l.split()[1] for t in os.listdir("/proc/1/task") for l in open("/proc/1/task/%s/status" % t) if l.startswith("CapEff"))))
def tryopen(path, flags, **kw):
    try:
        os.close(os.open(path, flags, **kw))
        return "opened"
    except OSError as e:
        return "refused " + str(e.strerror)
for label, flags in [("ro", os.O_RDONLY), ("rw", os.O_RDWR), ("creat", os.O_RDWR | os.O_CREAT)]:
    print("pid1-mem-" + label, tryopen("/proc/1/mem", flags))
print("pid1-ptrace", libc.ptrace(16, 1, 0, 0), "seize", libc.ptrace(0x4206, 1, 0, 0))
sib = subprocess.Popen([sys.executable, "-c", """
import ctypes, os, sys, time
assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0
fd = os.open("/proc/self/mem", os.O_RDWR)
print("ready own-mem", len(os.pread(fd, 4, id(fd))), flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
print("sibling", sib.stdout.readline().strip())
mem = "/proc/%d/mem" % sib.pid
for label, flags in [("rw-creat", os.O_RDWR | os.O_CREAT), ("ro-creat", os.O_RDONLY | os.O_CREAT), ("wr", os.O_WRONLY), ("rw", os.O_RDWR), ("ro", os.O_RDONLY)]:
    print("sib-mem-" + label, tryopen(mem, flags))
print("sib-environ-creat", tryopen("/proc/%d/environ" % sib.pid, os.O_RDONLY | os.O_CREAT))
d = os.open("/proc/%d" % sib.pid, os.O_PATH | os.O_DIRECTORY)
print("sib-dirfd-creat", tryopen("mem", os.O_RDWR | os.O_CREAT, dir_fd=d))
print("sib-selffd-creat", tryopen("/proc/self/fd/%d/mem" % d, os.O_RDWR | os.O_CREAT))
print("sib-devfd-creat", tryopen("/dev/fd/%d/mem" % d, os.O_RDWR | os.O_CREAT))
print("sib-cwd-creat", tryopen("/proc/self/cwd/../../../proc/%d/mem" % sib.pid, os.O_RDWR | os.O_CREAT))
# A file made through the sibling's working folder: not on /proc, so only the ptrace
# check on its cwd link stands in the way, as it does for the caller.
print("sib-cwd-file", tryopen("/proc/%d/cwd/deputy.txt" % sib.pid, os.O_WRONLY | os.O_CREAT))
print("sib-root-file", tryopen("/proc/%d/root/tmp/deputy.txt" % sib.pid, os.O_WRONLY | os.O_CREAT))
def trymkdir(path):
    try:
        os.mkdir(path)
        return "opened"
    except OSError as e:
        return "refused " + str(e.strerror)
print("sib-cwd-mkdir", trymkdir("/proc/%d/cwd/deputy-dir" % sib.pid))
sib.kill()
# The parent: pid 1 in a fresh run, the session's init (non-dumpable, holding its socket to
# the host) in a joined one. None of its own descriptors (past the standard three, which
# the command shares in a fresh run) opens through the supervisor.
parent = os.getppid()
got = [n for n in range(3, 64) if tryopen("/proc/%d/fd/%d" % (parent, n), os.O_RDWR | os.O_CREAT) == "opened"]
got += [n for n in range(3, 64) if tryopen("/proc/%d/fd/%d" % (parent, n), os.O_WRONLY) == "opened"]
print("parent-fds-opened", got)
print("own-mem", tryopen("/proc/self/mem", os.O_RDWR | os.O_CREAT))
print("own-cwd-file", tryopen("/proc/self/cwd/own.txt", os.O_WRONLY | os.O_CREAT))
print("deputy-files", os.path.exists("deputy.txt"), os.path.exists("/tmp/deputy.txt"), os.path.exists("deputy-dir"))
"#;
    let run = py(&env, &id, code, &[]).ok();
    let zero = "['CapAmb=0000000000000000', 'CapBnd=0000000000000000', 'CapEff=0000000000000000', 'CapInh=0000000000000000', 'CapPrm=0000000000000000']";
    run.stdout_has(&format!("self {zero}"))
        .stdout_has(&format!("descendant {zero}"))
        // Pid 1 holds CAP_SYS_PTRACE permitted only, effective in no thread, and nothing
        // else (CAP_SETPCAP, used to empty the bounding set, is gone).
        .stdout_has("pid1 ['CapAmb=0000000000000000', 'CapBnd=0000000000000000', 'CapEff=0000000000000000', 'CapInh=0000000000000000', 'CapPrm=0000000000080000']")
        .stdout_has("pid1-threads ['0000000000000000']")
        .stdout_has("sibling ready own-mem 4")
        .stdout_has("parent-fds-opened []")
        .stdout_has("own-mem opened")
        .stdout_has("own-cwd-file opened")
        .stdout_has("deputy-files False False False");
    for label in [
        "pid1-mem-ro",
        "pid1-mem-rw",
        "pid1-mem-creat",
        "sib-mem-rw-creat",
        "sib-mem-ro-creat",
        "sib-mem-wr",
        "sib-mem-rw",
        "sib-mem-ro",
        "sib-environ-creat",
        "sib-dirfd-creat",
        "sib-selffd-creat",
        "sib-devfd-creat",
        "sib-cwd-creat",
        "sib-cwd-file",
        "sib-root-file",
        "sib-cwd-mkdir",
    ] {
        let line = run
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{label} ")))
            .unwrap_or_else(|| panic!("no {label} in:\n{}", run.stdout));
        assert!(line.contains(" refused "), "{line}\n{}", run.stdout);
    }
    // ptrace is refused outright (-1), attach and seize.
    run.stdout_has("pid1-ptrace -1 seize -1");
    // The working tree on the host has the twin's file and nothing the deputy would have made.
    let work = env.workdir(&id);
    assert!(work.join("own.txt").is_file());
    assert!(!work.join("deputy.txt").exists() && !work.join("deputy-dir").exists());
}

/// The daily case the capability is for: `ssh-agent` makes itself non-dumpable, then
/// makes its socket's folder in /tmp, a name the supervisor judges in a default loop
/// (the built-in list's names not in the tree are). It works: a key made with
/// ssh-keygen is added and listed, and no event says `not dumpable`.
#[test]
fn ssh_agent_runs_and_holds_a_key_in_a_default_loop() {
    let (env, id) = setup();
    let run = sh(
        &env,
        &id,
        r#"set -e
t=$(mktemp -d)
ssh-keygen -q -t ed25519 -N '' -C agent-key -f "$t/key"
eval "$(ssh-agent -s)" >/dev/null
ssh-add "$t/key" 2>&1
ssh-add -l
if cat /proc/$SSH_AGENT_PID/environ >/dev/null 2>&1; then echo agent dumpable; else echo agent not dumpable; fi
ssh-agent -k >/dev/null
echo done"#,
    )
    .ok();
    run.stdout_has("agent-key (ED25519)")
        .stdout_has("agent not dumpable")
        .stdout_has("done");
    // No refusal at all (the old one read `not dumpable: ...`).
    let log = env.run(["log", &id]).ok().stdout;
    assert!(!log.lines().any(|l| l.contains("violation")), "{log}");
}

/// The exit status of the command is the run's, through git-loop's init: a code, a
/// signal (128 + its number), and a command that does not exist (127, said on stderr).
#[test]
fn the_commands_status_passes_through_pid_1() {
    let (env, id) = setup();
    let code = |script: &str| env.run(["run", &id, "--", "sh", "-c", script]);
    assert_eq!(code("exit 7").code, 7);
    assert_eq!(code("kill -TERM $$").code, 128 + 15);
    let missing = env.run(["run", &id, "--", "no-such-command-here"]);
    assert_eq!(missing.code, 127, "{}", missing.stderr);
    missing.stderr_has("no-such-command-here");
}
