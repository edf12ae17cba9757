//! `[filesystem] deny_create` (issue 34): names refused when a process inside makes them,
//! in any folder, by the supervisor in the sandbox's pid 1 (src/sandbox/creation.rs).
//! Every attempt is made from inside a sandbox started by `git loop run`, by a small
//! Python program making the very system calls (open, rename, link, symlink, mkdir), each
//! with its twin that must succeed, and the host's trees are checked afterwards.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{verdict, TestEnv};

fn setup() -> (TestEnv, String) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.commit_file(&repo, "README", "app\n", "add README");
    let id = env.new_loop(&repo, "creation rules");
    env.write_profile("[filesystem]\ndeny_create = [\"*.pem\", \".env*\", \"id_*\"]\n");
    (env, id)
}

/// Each `attempt(label, fn)` prints `OK label` or `REFUSED label: strerror`.
const PRELUDE: &str = r#"
import ctypes, os, sys
def attempt(label, f):
    try:
        f()
        print("OK", label)
    except OSError as e:
        print("REFUSED", label + ":", e.strerror)
def make(path, dir_fd=None):
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644, dir_fd=dir_fd))
"#;

/// Runs the Python `body` inside loop `id`; returns its stdout.
fn inside(env: &TestEnv, id: &str, body: &str) -> String {
    let program = format!("{PRELUDE}\n{body}");
    env.run([
        "run", "-q", id, "--net", "none", "--", "python3", "-c", &program,
    ])
    .ok()
    .stdout
}

#[track_caller]
fn verdicts(out: &str, expected: &[(&str, bool)]) {
    for (label, allowed) in expected {
        let line = verdict(out, label, *allowed);
        if !allowed {
            assert!(line.contains("Operation not permitted"), "{line}");
        }
    }
}

/// No file of the loop's trees (working tree, home) has a denied name.
#[track_caller]
fn none_made(env: &TestEnv, id: &str) {
    fn walk(dir: &Path, found: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".pem") || name.starts_with(".env") || name.starts_with("id_") {
                found.push(e.path().display().to_string());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&e.path(), found);
            }
        }
    }
    let mut found = Vec::new();
    walk(&env.loop_dir(id), &mut found);
    assert!(found.is_empty(), "made on the host: {found:?}");
}

#[test]
fn a_denied_name_cannot_be_made_by_open_rename_link_or_symlink_in_any_folder() {
    let (env, id) = setup();
    let out = inside(
        &env,
        &id,
        r#"
os.makedirs("deep/er", exist_ok=True)
home = os.path.expanduser("~")
attempt("open-here", lambda: make("key.pem"))
attempt("open-deep", lambda: make("deep/er/key.pem"))
attempt("open-home", lambda: make(home + "/key.pem"))
attempt("open-tmp", lambda: make("/tmp/key.pem"))
d = os.open("deep", os.O_RDONLY | os.O_DIRECTORY)
attempt("open-dirfd", lambda: make("key.pem", dir_fd=d))
attempt("open-env", lambda: make(".env.local"))
attempt("open-id", lambda: make(home + "/id_ed25519"))
libc = ctypes.CDLL(None, use_errno=True)
def creat(path):
    fd = libc.creat(path.encode(), 0o644)
    if fd < 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
    os.close(fd)
attempt("creat", lambda: creat("c.pem"))
make("a.txt")
attempt("rename", lambda: os.rename("a.txt", "b.pem"))
attempt("rename-deep", lambda: os.rename("a.txt", "deep/er/b.pem"))
attempt("link", lambda: os.link("a.txt", "l.pem"))
attempt("symlink", lambda: os.symlink("a.txt", "s.pem"))
attempt("mkdir", lambda: os.mkdir("d.pem"))
# A link named innocently pointing at a denied name: opening it to create follows it.
attempt("dangling-link-made", lambda: os.symlink("via.pem", "via.txt"))
attempt("create-through-link", lambda: make("via.txt"))
# An O_TMPFILE file given a name afterwards.
def tmpfile_link(name):
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        # linkat(AT_FDCWD, "/proc/self/fd/N", here, name, AT_SYMLINK_FOLLOW), as open(2) says
        os.link("/proc/self/fd/%d" % fd, name, dst_dir_fd=here, follow_symlinks=True)
    finally:
        os.close(fd)
        os.close(here)
attempt("tmpfile-link", lambda: tmpfile_link("t.pem"))
# The twins: the same calls making names no rule refuses.
attempt("twin-open", lambda: make("cert.txt"))
attempt("twin-open-deep", lambda: make("deep/er/cert.txt"))
attempt("twin-open-tmp", lambda: make("/tmp/cert.txt"))
attempt("twin-dirfd", lambda: make("cert.txt", dir_fd=d))
attempt("twin-creat", lambda: creat("c.txt"))
attempt("twin-rename", lambda: os.rename("a.txt", "b.txt"))
attempt("twin-link", lambda: os.link("b.txt", "l.txt"))
attempt("twin-symlink", lambda: os.symlink("b.txt", "s.txt"))
attempt("twin-mkdir", lambda: os.mkdir("d.txt"))
attempt("twin-tmpfile-link", lambda: tmpfile_link("t.txt"))
def through_link():
    os.symlink("target.txt", "via2.txt")
    make("via2.txt")
    assert os.path.exists("target.txt")
attempt("twin-create-through-link", through_link)
def write_read():
    with open("cert.txt", "w") as f:
        f.write("certified\n")
    assert open("cert.txt").read() == "certified\n"
attempt("twin-write-read", write_read)
os.write(1, b"")
"#,
    );
    verdicts(
        &out,
        &[
            ("open-here", false),
            ("open-deep", false),
            ("open-home", false),
            ("open-tmp", false),
            ("open-dirfd", false),
            ("open-env", false),
            ("open-id", false),
            ("creat", false),
            ("rename", false),
            ("rename-deep", false),
            ("link", false),
            ("symlink", false),
            ("mkdir", false),
            ("dangling-link-made", true),
            ("create-through-link", false),
            ("tmpfile-link", false),
            ("twin-open", true),
            ("twin-open-deep", true),
            ("twin-open-tmp", true),
            ("twin-dirfd", true),
            ("twin-creat", true),
            ("twin-rename", true),
            ("twin-link", true),
            ("twin-symlink", true),
            ("twin-mkdir", true),
            ("twin-tmpfile-link", true),
            ("twin-create-through-link", true),
            ("twin-write-read", true),
        ],
    );
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join("cert.txt")).unwrap(),
        "certified\n"
    );
    assert!(work.join("deep/er/cert.txt").is_file());
    assert!(work.join("t.txt").is_file() && work.join("b.txt").is_file());
    none_made(&env, &id);
}

/// What a person types: `mv`, `cp`, a shell's `>`; and what must keep working under the
/// supervisor (`> /dev/null`, `> /dev/stderr`, a build's many files).
#[test]
fn mv_to_a_denied_name_is_refused_and_ordinary_shell_work_is_not() {
    let (env, id) = setup();
    let script = r#"
try() { l=$1; shift; if err=$("$@" 2>&1 >/dev/null); then echo "OK $l"; else echo "REFUSED $l: $err"; fi; }
echo a > a.txt
try mv mv a.txt b.pem
try cp cp a.txt c.pem
try redirect sh -c 'echo x > k.pem'
try twin-mv mv a.txt b.txt
try twin-cp cp b.txt c.txt
try twin-redirect sh -c 'echo x > k.txt'
try twin-devnull sh -c 'echo x > /dev/null'
try twin-stderr sh -c 'echo to-stderr > /dev/stderr'
try twin-stdout sh -c 'echo to-stdout > /dev/stdout'
try twin-many sh -c 'mkdir -p out && for i in $(seq 1 200); do echo $i > out/f$i.o; done && test $(ls out | wc -l) = 200'
try twin-append sh -c 'echo 1 >> log.txt && echo 2 >> log.txt && test $(wc -l < log.txt) = 2'
try twin-fifo timeout 20 sh -c 'mkfifo p && { cat p > got.txt & } && echo through > p && wait && test "$(cat got.txt)" = through'
try twin-fifo-waits-alone timeout 20 sh -c 'mkfifo q && { echo x > q & } && touch other.txt && test "$(cat q)" = x && wait'
try twin-fifo-reader-first timeout 20 sh -c 'mkfifo r && { cat r > got2.txt & } && sleep 0.3 && timeout 10 sh -c "echo late > r" && wait && test "$(cat got2.txt)" = late'
"#;
    let run = env
        .run(["run", "-q", &id, "--net", "none", "--", "sh", "-c", script])
        .ok();
    let out = &run.stdout;
    for (label, allowed) in [
        ("mv", false),
        ("cp", false),
        ("redirect", false),
        ("twin-mv", true),
        ("twin-cp", true),
        ("twin-redirect", true),
        ("twin-devnull", true),
        ("twin-stderr", true),
        ("twin-stdout", true),
        ("twin-many", true),
        ("twin-append", true),
        ("twin-fifo", true),
        ("twin-fifo-waits-alone", true),
        ("twin-fifo-reader-first", true),
    ] {
        verdict(out, label, allowed);
    }
    let work = env.workdir(&id);
    assert_eq!(fs::read_to_string(work.join("b.txt")).unwrap(), "a\n");
    assert!(work.join("out/f200.o").is_file());
    none_made(&env, &id);
}

/// Each refusal is one `filesystem-write` violation in `git loop log`, with its path and
/// rule, and the run says how many there were.
/// A program written and run at once, as a build does (`cc -o t && ./t`), is never "Text
/// file busy": the supervisor that made the file for the writer lets go of its own copy
/// before the writer goes on. Many times over, with the machine busy, the copy kept a
/// moment too long showed.
#[test]
fn a_file_written_and_run_at_once_is_never_busy() {
    let (env, id) = setup();
    let script =
        "for i in $(seq 300); do cp /bin/true ./t$i && ./t$i || echo BUSY $i; done; echo END";
    let run = env
        .run(["run", "-q", &id, "--net", "none", "--", "sh", "-c", script])
        .ok();
    run.stdout_has("END");
    assert!(
        !run.stdout.contains("BUSY"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(env.workdir(&id).join("t300").is_file());
}

#[test]
fn each_refusal_is_one_event_in_the_log() {
    let (env, id) = setup();
    let program = format!(
        "{PRELUDE}\nattempt('one', lambda: make('one.pem'))\nattempt('two', lambda: os.mkdir('two.pem'))\nattempt('ok', lambda: make('fine.txt'))\n"
    );
    let run = env
        .run(["run", &id, "--net", "none", "--", "python3", "-c", &program])
        .ok();
    run.stderr_has("the filesystem policy refused 2 calls");
    let log = env.run(["log", &id]).ok();
    let lines: Vec<&str> = log
        .stdout
        .lines()
        .filter(|l| l.contains("filesystem-write"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", log.stdout);
    assert!(
        lines[0].contains("/one.pem") && lines[0].contains("deny_create: *.pem"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("/two.pem") && lines[1].contains("mkdir"),
        "{}",
        lines[1]
    );
    assert!(!lines.iter().any(|l| l.contains("fine.txt")));
    // The rules are shown with the view.
    let mounts = env.run(["show", &id, "--mounts"]).ok();
    mounts.stdout_has("**/*.pem");
    mounts.stdout_has("refused when made (deny_create: .env*)");
}

/// A run that tries many times records a bounded number of events, and says how many more.
#[test]
fn refusals_are_recorded_up_to_a_bound() {
    let (env, id) = setup();
    let program =
        format!("{PRELUDE}\nfor i in range(300):\n    attempt('x', lambda: make('k%d.pem' % i))\n");
    let run = env
        .run(["run", &id, "--net", "none", "--", "python3", "-c", &program])
        .ok();
    run.stderr_has("the filesystem policy refused 300 calls");
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap();
    let recorded = events
        .lines()
        .filter(|l| l.contains("\"filesystem-write\""))
        .count();
    assert_eq!(recorded, 200);
    assert!(events.contains("100 further refusals of this run are not recorded"));
}

/// The supervisor is pid 1's: killed from the host, the whole sandbox ends with it, and
/// nothing denied was made meanwhile. (That a filter whose listener is gone fails every
/// naming call with ENOSYS is the unit test
/// `creation::tests::without_a_listener_every_naming_call_fails`.)
#[test]
fn killing_the_supervisor_fails_closed() {
    let (env, id) = setup();
    let marker = format!("supervised-{}", std::process::id());
    let script = format!(
        "echo {marker} >/dev/null; while true; do echo x > k.pem 2>/dev/null; echo y > alive.txt; sleep 0.02; done"
    );
    let mut child = env
        .command()
        .args(["run", "-q", &id, "--net", "none", "--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let alive = env.workdir(&id).join("alive.txt");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !alive.exists() {
        assert!(Instant::now() < deadline, "the sandbox never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The sandbox's pid 1: `git-loop __init --deny-create ... -- sh -c <script>`.
    let init = fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            let cmd = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(&cmd);
            cmd.contains("__init") && cmd.contains("--deny-create") && cmd.contains(&marker)
        })
        .expect("the sandbox's pid 1");
    // SAFETY: kill with integer arguments, at a process this test started.
    assert_eq!(unsafe { libc::kill(init, libc::SIGKILL) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the sandbox outlived its supervisor"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    // Nothing runs inside any more: alive.txt stops changing.
    fs::remove_file(&alive).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(!alive.exists(), "a process of the sandbox still runs");
    none_made(&env, &id);
}

/// A pattern naming folders is refused with the file and the fix; deny_create without a
/// sandbox is refused (exit 3), never run unenforced.
#[test]
fn a_bad_creation_rule_is_refused() {
    let (env, id) = setup();
    env.write_profile("[filesystem]\ndeny_create = [\"certs/*.pem\"]\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("deny_create")
        .stderr_has("has a '/'");
    env.write_profile("[filesystem]\ndeny_create = [\"*.pem\"]\n");
    env.run(["run", &id, "--backend", "none", "--", "true"])
        .fails(3)
        .stderr_has("[filesystem]");
}

/// The time-of-check attack: a second thread flips the name in the caller's memory between
/// `race.txt` and `race.pem` while the call waits for the supervisor. The supervisor makes
/// the name it judged, from its own copy, so a `.pem` never appears; the twin (the flip
/// between two allowed names) makes files all along.
#[test]
fn a_name_changed_while_the_call_waits_is_not_what_is_made() {
    let (env, id) = setup();
    let out = inside(
        &env,
        &id,
        r#"
import threading
libc = ctypes.CDLL(None, use_errno=True)
def race(bad, rounds=1500):
    buf = ctypes.create_string_buffer(32)
    ctypes.memmove(buf, b"race.txt\0", 9)
    stop = []
    def flip():
        while not stop:
            ctypes.memmove(buf, bad, 9)
            ctypes.memmove(buf, b"race.txt\0", 9)
    # A daemon, and stopped however the rounds end: a call failing on the way ends the
    # script (and the test) instead of leaving the flipping thread to run for ever.
    t = threading.Thread(target=flip, daemon=True)
    t.start()
    made = 0
    try:
        for i in range(rounds):
            fd = libc.open(buf, os.O_CREAT | os.O_WRONLY, 0o644)
            if fd >= 0:
                libc.close(fd)
                made += 1
            src = ctypes.create_string_buffer(b"src.txt")
            make("src.txt")
            libc.rename(src, buf)
            for n in os.listdir("."):
                if n.startswith("race") or n == "src.txt":
                    os.unlink(n)
    finally:
        stop.append(1)
        t.join()
    return made
made = race(b"race.pem\0")
print("pem-made", [n for n in os.listdir(".") if n.endswith(".pem")])
print("allowed-made", made > 0)
twin = race(b"race.log\0", 300)
print("twin-made", twin == 300)
"#,
    );
    assert!(out.contains("pem-made []"), "{out}");
    assert!(out.contains("allowed-made True"), "{out}");
    assert!(out.contains("twin-made True"), "{out}");
    none_made(&env, &id);
}

/// The supervisor opens files with pid 1's rights, so nothing it opens for a process may
/// be pid 1's own: its memory, its listener, its report pipe (all of which a process
/// inside cannot open itself, pid 1 being non-dumpable). Reached by name, through a link
/// to `/proc/self`, or through `/proc/1/fd`: refused. The twin: a process's own
/// descriptors reached by name (`/dev/stdout`, `/proc/self/fd/N`) are its own.
#[test]
fn the_supervisor_never_opens_its_own_files_for_a_process() {
    let (env, id) = setup();
    let out = inside(
        &env,
        &id,
        r#"
flags = os.O_CREAT | os.O_RDWR
def opens(path):
    os.close(os.open(path, flags, 0o644))
attempt("init-mem", lambda: opens("/proc/1/mem"))
os.symlink("/proc/self/mem", "self-mem")
attempt("link-to-self-mem", lambda: opens("self-mem"))
os.symlink("/proc/self/environ", "self-env")
attempt("link-to-self-environ", lambda: os.close(os.open("self-env", os.O_CREAT | os.O_RDONLY)))
got = []
for n in range(3, 64):
    try:
        os.close(os.open("/proc/1/fd/%d" % n, flags, 0o644))
        got.append(n)
    except OSError:
        pass
print("init-fds-opened", got)
def own_fd():
    r, w = os.pipe()
    fd = os.open("/proc/self/fd/%d" % w, os.O_CREAT | os.O_WRONLY)
    os.write(fd, b"mine")
    os.close(fd)
    os.close(w)
    assert os.read(r, 4) == b"mine"
attempt("twin-own-fd", own_fd)
"#,
    );
    verdicts(
        &out,
        &[
            ("init-mem", false),
            ("link-to-self-mem", false),
            ("link-to-self-environ", false),
            ("twin-own-fd", true),
        ],
    );
    assert!(out.contains("init-fds-opened []"), "{out}");
}
