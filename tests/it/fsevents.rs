//! Every filesystem refusal is an event (issue 34): a write to a read-only place (the
//! system's folders, `.git/config`, a `deny_write` path) and a read of a `deny_read`
//! path, refused by the kernel inside a sandbox started by `git loop run`, each appear
//! once in `git loop log` with the path as the sandbox names it and the rule that refused
//! it; ordinary work makes none; a run that tries again and again records a bounded
//! number and one line saying how many more there were. The supervisor that sees them is
//! src/sandbox/creation.rs.

use std::fs;

use crate::common::{verdict, TestEnv};
use crate::fspolicy::setup;

/// Runs the Python `body` inside loop `id` (with `attempt(label, f)` printing `OK label`
/// or `REFUSED label: why`); returns its stdout.
fn inside(env: &TestEnv, id: &str, body: &str) -> String {
    let program = format!(
        r#"
import os, sys
def attempt(label, f):
    try:
        f()
        print("OK", label)
    except OSError as e:
        print("REFUSED", label + ":", e.strerror)
def write(path):
    with open(path, "a") as f:
        f.write("x\n")
def read(path):
    with open(path) as f:
        f.read()
def on_fd(path, f, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        f(fd)
    finally:
        os.close(fd)
{body}
"#
    );
    env.run([
        "run", "-q", id, "--net", "none", "--", "python3", "-c", &program,
    ])
    .ok()
    .stdout
}

/// A loop whose tree has `locked.txt` and `stamped.txt`, which `deny_write` covers, and
/// `notes.txt`, which it may change.
fn two_locked_files() -> (TestEnv, String) {
    let (env, _repo, id) = setup(&[
        ("locked.txt", "locked\n"),
        ("stamped.txt", "stamped\n"),
        ("notes.txt", "notes\n"),
    ]);
    env.write_profile("[filesystem]\ndeny_write = [\"locked.txt\", \"stamped.txt\"]\n");
    (env, id)
}

/// The lines of `git loop log` that are filesystem refusals.
pub(crate) fn refusals(env: &TestEnv, id: &str) -> Vec<String> {
    env.run(["log", id])
        .ok()
        .stdout
        .lines()
        .filter(|l| l.contains("violation") && l.contains("filesystem"))
        .map(str::to_string)
        .collect()
}

#[track_caller]
fn one_line(lines: &[String], needles: &[&str]) {
    let found: Vec<&String> = lines
        .iter()
        .filter(|l| needles.iter().all(|n| l.contains(n)))
        .collect();
    assert_eq!(found.len(), 1, "{needles:?} in:\n{}", lines.join("\n"));
}

#[test]
fn each_refused_write_and_read_is_one_event_with_its_rule() {
    let (env, _repo, id) = setup(&[
        ("locked.txt", "locked\n"),
        ("secret.txt", "hunter2\n"),
        ("notes.txt", "notes\n"),
        ("private/a.txt", "a\n"),
    ]);
    env.write_profile(
        "[filesystem]\ndeny_write = [\"locked.txt\"]\ndeny_read = [\"secret.txt\", \"private/\"]\n",
    );
    let work = env.workdir(&id);
    let config_before = fs::read(work.join(".git/config")).ok();
    let out = inside(
        &env,
        &id,
        r#"
attempt("git-config", lambda: write(".git/config"))
attempt("usr", lambda: write("/usr/x"))
attempt("locked", lambda: write("locked.txt"))
attempt("secret", lambda: read("secret.txt"))
attempt("private", lambda: read("private/a.txt"))
attempt("absent", lambda: read("nothere.txt"))
attempt("shadow", lambda: read("/etc/shadow"))
attempt("usr-mkdir", lambda: os.mkdir("/usr/d"))
attempt("usr-unlink", lambda: os.unlink("/usr/bin/env"))
attempt("notes", lambda: write("notes.txt"))
attempt("readme", lambda: read("locked.txt"))
attempt("new", lambda: write("new.txt"))
"#,
    );
    for (label, allowed) in [
        ("git-config", false),
        ("usr", false),
        ("locked", false),
        ("secret", false),
        ("private", false),
        ("absent", false),
        ("shadow", false),
        ("usr-mkdir", false),
        ("usr-unlink", false),
        ("notes", true),
        ("readme", true),
        ("new", true),
    ] {
        verdict(&out, label, allowed);
    }
    let lines = refusals(&env, &id);
    one_line(&lines, &["filesystem-write", "/.git/config", "own file"]);
    one_line(&lines, &["filesystem-write", "/usr/x", "read-only: /usr"]);
    one_line(
        &lines,
        &["filesystem-write", "/locked.txt", "deny_write: locked.txt"],
    );
    one_line(
        &lines,
        &["filesystem-read", "/secret.txt", "deny_read: secret.txt"],
    );
    one_line(&lines, &["filesystem-write", "/usr/d", "mkdir"]);
    one_line(
        &lines,
        &["filesystem-read", "/private/a.txt", "deny_read: private/"],
    );
    one_line(
        &lines,
        &["filesystem-read", "/etc/shadow", "hidden: /etc/shadow"],
    );
    one_line(&lines, &["filesystem-write", "/usr/bin/env", "unlink"]);
    // A file that is not there is no refusal.
    assert!(!lines.iter().any(|l| l.contains("nothere")));
    assert_eq!(lines.len(), 8, "{}", lines.join("\n"));
    // Nothing of the host changed.
    assert_eq!(
        fs::read_to_string(work.join("locked.txt")).unwrap(),
        "locked\n"
    );
    assert_eq!(fs::read(work.join(".git/config")).ok(), config_before);
    assert!(!std::path::Path::new("/usr/x").exists());
    assert_eq!(
        fs::read_to_string(work.join("notes.txt")).unwrap(),
        "notes\nx\n"
    );
}

/// Ordinary work (files written, renamed, linked, their modes and times changed, folders
/// made and removed, git committing) is done as asked and records no refusal.
#[test]
fn ordinary_work_records_no_refusal() {
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    let script = "set -e
echo a > a.txt; echo b >> a.txt; mkdir -p d/e; mv a.txt d/e/b.txt; ln -s e/b.txt d/l
ln d/e/b.txt d/hard; chmod 600 d/e/b.txt; truncate -s 1 d/hard; touch -d @0 d/e/b.txt
test \"$(stat -c %a d/e/b.txt)\" = 600; test \"$(stat -c %Y d/e/b.txt)\" = 0
test \"$(cat d/l)\" = a; rm -r d; echo x > /tmp/t; rm /tmp/t
git add README && git commit -q -m edit --allow-empty && echo done";
    let run = env
        .run(["run", "-q", &id, "--net", "none", "--", "sh", "-c", script])
        .ok();
    assert!(run.stdout.contains("done"), "{}{}", run.stdout, run.stderr);
    assert!(!env.workdir(&id).join("d").exists());
    let lines = refusals(&env, &id);
    assert!(lines.is_empty(), "{}", lines.join("\n"));
}

/// A loop writing a read-only path ten thousand times records at most the bound, then one
/// line saying how many more were not recorded.
#[test]
fn a_flood_of_refusals_is_bounded() {
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    let out = inside(
        &env,
        &id,
        r#"
n = 0
for i in range(10000):
    try:
        os.close(os.open("/usr/x", os.O_WRONLY | os.O_CREAT, 0o644))
    except OSError:
        n += 1
print("refused", n)
"#,
    );
    assert!(out.contains("refused 10000"), "{out}");
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap();
    let recorded = events
        .lines()
        .filter(|l| l.contains("\"filesystem-write\""))
        .count();
    assert_eq!(recorded, 200);
    let lines = refusals(&env, &id);
    assert_eq!(lines.len(), 201, "{}", lines.last().unwrap());
    one_line(&lines, &["further refusals of this run are not recorded"]);
}

/// A link at a path of the built-in list pointing at nothing (`.envrc -> missing`): the
/// run starts, and nothing can be written through the link nor made where it points, in
/// any way, while a neighbour can be; each refusal is an event.
#[test]
fn a_dangling_link_on_the_list_stays_denied() {
    let (env, repo, _) = setup(&[("README", "app\n")]);
    std::os::unix::fs::symlink("missing", repo.join(".envrc")).unwrap();
    env.git(&repo, ["add", "-A"]);
    env.git(&repo, ["commit", "-q", "-m", "envrc link"]);
    let id = env.new_loop(&repo, "dangling");
    let out = inside(
        &env,
        &id,
        r#"
attempt("through-link", lambda: write(".envrc"))
attempt("target", lambda: write("missing"))
attempt("target-mkdir", lambda: os.mkdir("missing"))
def renamed():
    write("tmp.txt")
    os.rename("tmp.txt", "missing")
attempt("target-rename", renamed)
attempt("target-symlink", lambda: os.symlink("README", "missing"))
attempt("neighbour", lambda: write("other.txt"))
def in_sub():
    os.mkdir("sub")
    os.chdir("sub")
    write("/proc/self/cwd/in-sub.txt")
    os.chdir("..")
attempt("proc-self-cwd", in_sub)
"#,
    );
    for (label, allowed) in [
        ("through-link", false),
        ("target", false),
        ("target-mkdir", false),
        ("target-rename", false),
        ("target-symlink", false),
        ("neighbour", true),
        ("proc-self-cwd", true),
    ] {
        verdict(&out, label, allowed);
    }
    let work = env.workdir(&id);
    assert_eq!(fs::read_to_string(work.join("other.txt")).unwrap(), "x\n");
    // /proc/self/cwd is the caller's working folder, not pid 1's.
    assert_eq!(
        fs::read_to_string(work.join("sub/in-sub.txt")).unwrap(),
        "x\n"
    );
    assert!(fs::symlink_metadata(work.join("missing")).is_err());
    assert_eq!(
        fs::read_link(work.join(".envrc")).unwrap(),
        std::path::Path::new("missing")
    );
    let lines = refusals(&env, &id);
    assert_eq!(lines.len(), 5, "{}", lines.join("\n"));
    assert!(
        lines.iter().all(|l| l.contains("mandatory: .envrc")),
        "{}",
        lines.join("\n")
    );
    env.run(["show", &id, "--mounts"])
        .ok()
        .stdout_has("**/missing")
        .stdout_has("refused when made (mandatory: .envrc through a link)");
}

/// A folder above a covered path is pinned: nothing renames it away with its cover (to
/// make it again without one). Pid 1 refuses that rename, as a mount point would
/// (EBUSY), with an event; a pin is no mount of its own, so moves across it work as
/// anywhere: an editor's save in the folder, a bare rename out of it, `mv`, `git mv`
/// into it. (Where the kernel has no supervisor, a pin is a mount point of its own and
/// such moves get EXDEV: `mv` copies, `git mv` fails.)
#[test]
fn a_pinned_folder_cannot_be_moved_and_moves_across_it_work() {
    let (env, _repo, id) = setup(&[
        (".github/workflows/ci.yml", "on: push\n"),
        (".github/CODEOWNERS", "* @a\n"),
        ("notes.md", "notes\n"),
    ]);
    let out = inside(
        &env,
        &id,
        r#"
import ctypes, subprocess
def save():
    with open(".github/.CODEOWNERS.swp", "w") as f:
        f.write("* @b\n")
    os.rename(".github/.CODEOWNERS.swp", ".github/CODEOWNERS")
attempt("editor-save", save)
attempt("rename-out", lambda: os.rename(".github/CODEOWNERS", "CODEOWNERS"))
def run(*argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise OSError(0, r.stderr.strip())
attempt("git-mv", lambda: run("git", "mv", "notes.md", ".github/notes.md"))
attempt("mv-back", lambda: run("mv", "CODEOWNERS", ".github/CODEOWNERS"))
attempt("tmp-in", lambda: (write("/tmp/t.txt"), run("mv", "/tmp/t.txt", "t.txt")))
attempt("move-pinned", lambda: os.rename(".github", "gh2"))
attempt("move-pinned-slash", lambda: os.rename("./.github/", "gh3"))
os.mkdir("other")
def exchange():
    libc = ctypes.CDLL(None, use_errno=True)
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    if libc.renameat2(AT_FDCWD, b"other", AT_FDCWD, b".github", RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
attempt("exchange-pinned", exchange)
attempt("move-cover", lambda: os.rename(".github/workflows", "wf"))
"#,
    );
    for (label, allowed) in [
        ("editor-save", true),
        ("rename-out", true),
        ("git-mv", true),
        ("mv-back", true),
        ("tmp-in", true),
        ("move-pinned", false),
        ("move-pinned-slash", false),
        ("exchange-pinned", false),
        ("move-cover", false),
    ] {
        verdict(&out, label, allowed);
    }
    assert!(
        out.contains("REFUSED move-pinned: Device or resource busy"),
        "{out}"
    );
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join(".github/CODEOWNERS")).unwrap(),
        "* @b\n"
    );
    assert!(work.join(".github/notes.md").is_file());
    assert!(work.join(".github/workflows/ci.yml").is_file());
    assert!(!work.join("gh2").exists() && !work.join("gh3").exists());
    assert_eq!(fs::read_to_string(work.join("t.txt")).unwrap(), "x\n");
    let lines = refusals(&env, &id);
    let pinned = lines
        .iter()
        .filter(|l| l.contains("(a folder above it, pinned)") && l.contains("/.github"))
        .count();
    assert_eq!(pinned, 3, "{}", lines.join("\n"));
    one_line(
        &lines,
        &[
            "/wf (from ",
            "/.github/workflows)",
            "mandatory: .github/workflows/",
        ],
    );
    assert_eq!(lines.len(), 4, "{}", lines.join("\n"));
    env.run(["show", &id, "--mounts"])
        .ok()
        .stdout_has("renames refused by pid 1");
}

/// A process that made itself non-dumpable (as ssh-agent does) is read, judged and acted
/// for by pid 1 as any other (pid 1 raises CAP_SYS_PTRACE to open its /proc entries:
/// src/sandbox/caps.rs): its ordinary writes and names work, relative to its working
/// folder, a folder descriptor and its own descriptors (`/dev/stderr`, an `O_TMPFILE` file
/// named through `/proc/self/fd`, `fchmod`); a `deny_create` name and a
/// file of the built-in list not in the tree are refused with their ordinary rule; its
/// writes to read-only places are refused by the kernel and each is an event. No event
/// says `not dumpable`.
#[test]
fn a_non_dumpable_process_is_judged_and_its_refusals_are_events() {
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    env.write_profile("[filesystem]\ndeny_create = [\"*.pem\"]\n");
    let work = env.workdir(&id);
    let config_before = fs::read(work.join(".git/config")).ok();
    let body = r#"
import ctypes
assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE
def append(path):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"y\n")
    os.close(fd)
def own_stderr():
    fd = os.open("/dev/stderr", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"to stderr\n")
    os.close(fd)
attempt("append", lambda: append("README"))
attempt("cert", lambda: write("cert.txt"))
attempt("mkdir", lambda: os.mkdir("sub"))
attempt("deep", lambda: write("sub/deep.txt"))
attempt("rename", lambda: os.rename("cert.txt", "cert2.txt"))
attempt("stderr", own_stderr)
def at_dirfd():
    d = os.open("sub", os.O_RDONLY | os.O_DIRECTORY)
    os.close(os.open("by-dirfd.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))
    os.close(d)
def tmpfile_named():
    fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600)
    os.write(fd, b"tmp\n")
    here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    os.link("/proc/self/fd/%d" % fd, "from-tmpfile.txt", dst_dir_fd=here, follow_symlinks=True)
    os.close(fd)
    os.close(here)
def on_fd(path, f):
    fd = os.open(path, os.O_RDONLY)
    try:
        f(fd)
    finally:
        os.close(fd)
attempt("dirfd", at_dirfd)
attempt("tmpfile", tmpfile_named)
attempt("fchmod-own", lambda: on_fd("README", lambda fd: os.fchmod(fd, 0o600)))
attempt("fchmod-usr", lambda: on_fd("/usr/bin/env", lambda fd: os.fchmod(fd, 0o700)))
attempt("pem", lambda: write("key.pem"))
attempt("envrc", lambda: write(".envrc"))
attempt("usr", lambda: write("/usr/x"))
attempt("git-config", lambda: append(".git/config"))
"#;
    let out = inside(&env, &id, body);
    for (label, allowed) in [
        ("append", true),
        ("cert", true),
        ("mkdir", true),
        ("deep", true),
        ("rename", true),
        ("stderr", true),
        ("dirfd", true),
        ("tmpfile", true),
        ("fchmod-own", true),
        ("fchmod-usr", false),
        ("pem", false),
        ("envrc", false),
        ("usr", false),
        ("git-config", false),
    ] {
        verdict(&out, label, allowed);
    }
    assert!(out.contains("REFUSED usr: Read-only file system"), "{out}");
    let lines = refusals(&env, &id);
    one_line(
        &lines,
        &["filesystem-write", "/key.pem", "deny_create: *.pem"],
    );
    one_line(&lines, &["filesystem-write", "/.envrc", "mandatory"]);
    one_line(&lines, &["filesystem-write", "/usr/x", "read-only: /usr"]);
    one_line(&lines, &["filesystem-write", "/.git/config", "own file"]);
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/usr/bin/env",
            "read-only: /usr",
            "(fchmod",
        ],
    );
    assert_eq!(lines.len(), 5, "{}", lines.join("\n"));
    let log = env.run(["log", &id]).ok().stdout;
    assert!(!log.contains("not dumpable"), "{log}");
    // On the host: what was allowed, nothing else.
    assert_eq!(fs::read_to_string(work.join("README")).unwrap(), "app\ny\n");
    assert!(work.join("cert2.txt").is_file() && work.join("sub/deep.txt").is_file());
    assert!(work.join("sub/by-dirfd.txt").is_file());
    assert_eq!(
        fs::read_to_string(work.join("from-tmpfile.txt")).unwrap(),
        "tmp\n"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(work.join("README"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(!work.join("key.pem").exists() && !work.join(".envrc").exists());
    assert_eq!(fs::read(work.join(".git/config")).ok(), config_before);
    assert!(!std::path::Path::new("/usr/x").exists());
}

/// Where pid 1 cannot have CAP_SYS_PTRACE (a setuid bwrap takes `--cap-add` from root
/// only, so it is not asked), pid 1 and the command hold no capability, and a
/// non-dumpable process is refused as before: a name it makes, with an event saying why
/// and naming the setuid bwrap; its other writes are left to the kernel. The twin: a
/// dumpable process makes the same name there.
#[test]
fn without_the_capability_a_non_dumpable_process_is_refused_and_told_why() {
    use std::os::unix::fs::PermissionsExt;
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    // A setuid copy of bwrap first on PATH (its owner running it runs it unprivileged).
    let path = std::env::var("PATH").unwrap();
    let bwrap = std::env::split_paths(&path)
        .map(|d| d.join("bwrap"))
        .find(|f| f.is_file())
        .expect("bwrap on PATH");
    let dir = env.root.join("setuid-bwrap");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(&bwrap, dir.join("bwrap")).unwrap();
    fs::set_permissions(dir.join("bwrap"), fs::Permissions::from_mode(0o4755)).unwrap();
    let program = r#"
import ctypes, os, sys
caps = sorted(l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap"))
print("caps", caps, sorted(l.split()[1] for l in open("/proc/1/status") if l.startswith("Cap")))
try:
    open("twin.txt", "w").close()
    print("OK twin")
except OSError as e:
    print("REFUSED twin:", e.strerror)
assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0
for label, path, flags in [("cert", "cert.txt", os.O_WRONLY | os.O_CREAT), ("usr", "/usr/bin/env", os.O_WRONLY | os.O_APPEND)]:
    try:
        os.close(os.open(path, flags))
        print("OK", label)
    except OSError as e:
        print("REFUSED", label + ":", e.strerror)
"#;
    let run = env
        .command()
        .env("PATH", format!("{}:{path}", dir.display()))
        .current_dir(&env.root)
        .args([
            "run", "-q", &id, "--net", "none", "--", "python3", "-c", program,
        ])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    let zero = "0000000000000000";
    assert!(
        out.contains(&format!("caps {:?} {:?}", [zero; 5], [zero; 5]).replace('"', "'")),
        "{out}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    verdict(&out, "twin", true);
    verdict(&out, "cert", false);
    assert!(verdict(&out, "usr", false).contains("Read-only file system"));
    let lines = refusals(&env, &id);
    one_line(
        &lines,
        &[
            "filesystem-write",
            "not dumpable, and pid 1 holds no CAP_SYS_PTRACE (a setuid bwrap)",
            "allow_write naming them lifts it",
        ],
    );
    // Its write to /usr was the kernel's to refuse, unseen.
    assert_eq!(lines.len(), 1, "{}", lines.join("\n"));
    let work = env.workdir(&id);
    assert!(work.join("twin.txt").is_file() && !work.join("cert.txt").exists());
}

/// A file of the built-in list that is not in the working tree when the run starts
/// (`.envrc`, `.bashrc`, `.mcp.json`, ...) cannot be made there during the run: not by
/// `open`, `rename`, `link`, `symlink`, `mkdir` or `mknod`, by any path reaching the tree's
/// root (`sub/..`, `/proc/self/cwd`, its absolute path, a folder descriptor, a link
/// pointing there); each refusal is one event naming the rule. The twins: names that
/// are not the list's, a folder of the list that stands in already (`mkdir -p .vscode`),
/// the same names below the root (the gate flags those: gate.rs), and the names the
/// profile's `allow_write` gives.
#[test]
fn a_file_of_the_list_not_there_cannot_be_made() {
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    let work = env.workdir(&id);
    let body = format!(
        r#"
import stat
os.mkdir("sub")
def excl(path):
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
def renamed():
    write("tmp.txt")
    os.rename("tmp.txt", ".mcp.json")
def at_dirfd():
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(os.open(".gitconfig", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=d))
    finally:
        os.close(d)
def through_link():
    os.symlink("../.envrc", "sub/l")
    write("sub/l")
attempt("open", lambda: write(".envrc"))
attempt("excl", lambda: excl(".bashrc"))
attempt("rename", renamed)
attempt("link", lambda: os.link("README", ".gitmodules"))
attempt("symlink", lambda: os.symlink("README", ".profile"))
attempt("mkdir", lambda: os.mkdir(".zshrc"))
attempt("mknod", lambda: os.mknod(".ripgreprc", stat.S_IFIFO | 0o644))
attempt("dotdot", lambda: write("sub/../.envrc"))
attempt("proc-cwd", lambda: write("/proc/self/cwd/.envrc"))
attempt("absolute", lambda: write("/loopat/loop/{id}/workdir/.pre-commit-config.yaml"))
attempt("dirfd", at_dirfd)
attempt("through-link", through_link)
attempt("neighbour", lambda: write(".envrc.example"))
attempt("nested", lambda: write("sub/.envrc"))
attempt("vscode", lambda: os.makedirs(".vscode", exist_ok=True))
attempt("rename-neighbour", lambda: os.rename("tmp.txt", "moved.txt"))
"#
    );
    let out = inside(&env, &id, &body);
    for (label, allowed) in [
        ("open", false),
        ("excl", false),
        ("rename", false),
        ("link", false),
        ("symlink", false),
        ("mkdir", false),
        ("mknod", false),
        ("dotdot", false),
        ("proc-cwd", false),
        ("absolute", false),
        ("dirfd", false),
        ("through-link", false),
        ("neighbour", true),
        ("nested", true),
        ("vscode", true),
        ("rename-neighbour", true),
    ] {
        verdict(&out, label, allowed);
    }
    assert!(
        out.contains("REFUSED open: Operation not permitted"),
        "{out}"
    );
    for name in [
        ".envrc",
        ".bashrc",
        ".mcp.json",
        ".gitmodules",
        ".profile",
        ".zshrc",
        ".ripgreprc",
        ".pre-commit-config.yaml",
        ".gitconfig",
    ] {
        assert!(
            fs::symlink_metadata(work.join(name)).is_err(),
            "{name} was made"
        );
    }
    assert!(work.join("sub/.envrc").is_file() && work.join("moved.txt").is_file());
    let lines = refusals(&env, &id);
    for (call, path, rule) in [
        ("(open", "/.bashrc", "mandatory: .bashrc"),
        ("(rename", "/.mcp.json", "mandatory: .mcp.json"),
        ("(link", "/.gitmodules", "mandatory: .gitmodules"),
        ("(symlink", "/.profile", "mandatory: .profile"),
        ("(mkdir", "/.zshrc", "mandatory: .zshrc"),
        ("(mknod", "/.ripgreprc", "mandatory: .ripgreprc"),
        ("(open", "/.gitconfig", "mandatory: .gitconfig"),
        (
            "(open",
            "/.pre-commit-config.yaml",
            "mandatory: .pre-commit-config.yaml",
        ),
    ] {
        one_line(
            &lines,
            &["filesystem-write", &format!("workdir{path} "), rule, call],
        );
    }
    // `.envrc`: by name, through `sub/..`, `/proc/self/cwd` and the link.
    let envrc = lines
        .iter()
        .filter(|l| l.contains("workdir/.envrc ") && l.contains("mandatory: .envrc"))
        .count();
    assert_eq!(envrc, 4, "{}", lines.join("\n"));
    assert_eq!(lines.len(), 12, "{}", lines.join("\n"));
    env.run(["show", &id, "--mounts"])
        .ok()
        .stdout_has(&format!("/loopat/loop/{id}/workdir/.envrc"))
        .stdout_has("refused when made (mandatory: .envrc)");
    // With the profile's word, `.envrc` is made; `.bashrc` still is not.
    env.write_profile("[filesystem]\nallow_write = [\".envrc\"]\n");
    let out = inside(
        &env,
        &id,
        "attempt(\"envrc\", lambda: write(\".envrc\"))\nattempt(\"bashrc\", lambda: write(\".bashrc\"))\n",
    );
    verdict(&out, "envrc", true);
    verdict(&out, "bashrc", false);
    assert_eq!(fs::read_to_string(work.join(".envrc")).unwrap(), "x\n");
    assert!(!work.join(".bashrc").exists());
}

/// The calls that change a file without writing it are events too when refused: on a
/// descriptor (`fchmod`, `fchown`, `fsetxattr`, `fremovexattr`, done on the caller's very
/// open file), its extended attributes by path, and its times where a per-path rule
/// covers it (once a file a run: a read-only mount's refused times are ordinary work,
/// git's on the origin's objects at each commit, and are not recorded). The twins: the
/// same calls on the loop's own files work and record nothing.
#[test]
fn changes_by_descriptor_attributes_and_times_are_events() {
    let (env, id) = two_locked_files();
    let out = inside(
        &env,
        &id,
        r#"
import subprocess
attempt("fchmod-usr", lambda: on_fd("/usr/bin/env", lambda fd: os.fchmod(fd, 0o700)))
attempt("fchown-locked", lambda: on_fd("locked.txt", lambda fd: os.fchown(fd, os.getuid(), os.getgid())))
attempt("fsetxattr-locked", lambda: on_fd("locked.txt", lambda fd: os.setxattr(fd, "user.x", b"1")))
attempt("setxattr-locked", lambda: os.setxattr("locked.txt", "user.y", b"1"))
attempt("removexattr-locked", lambda: os.removexattr("locked.txt", "user.z"))
attempt("times-locked", lambda: os.utime("locked.txt", (0, 0)))
attempt("times-locked-again", lambda: os.utime("locked.txt"))
attempt("futimens-stamped", lambda: on_fd("stamped.txt", lambda fd: os.utime(fd, (5, 5))))
attempt("times-usr", lambda: os.utime("/usr/bin/env"))
attempt("fchmod-own", lambda: on_fd("notes.txt", lambda fd: os.fchmod(fd, 0o600)))
attempt("ftruncate-own", lambda: on_fd("notes.txt", lambda fd: os.ftruncate(fd, 3), os.O_RDWR))
attempt("setxattr-own", lambda: os.setxattr("notes.txt", "user.k", b"v"))
attempt("fsetxattr-own", lambda: on_fd("notes.txt", lambda fd: os.setxattr(fd, "user.f", b"w")))
attempt("removexattr-own", lambda: os.removexattr("notes.txt", "user.k"))
attempt("times-own", lambda: os.utime("notes.txt", (7, 7)))
attempt("futimens-own", lambda: on_fd("notes.txt", lambda fd: os.utime(fd, (9, 9))))
def check():
    st = os.stat("notes.txt")
    assert (oct(st.st_mode & 0o777), st.st_size, int(st.st_mtime)) == ("0o600", 3, 9), st
    assert os.getxattr("notes.txt", "user.f") == b"w"
    assert "user.k" not in os.listxattr("notes.txt")
attempt("own-changed", check)
def commit():
    r = subprocess.run(["sh", "-c", "echo more >> notes.txt && git add notes.txt && git commit -q -m n && git commit -q --allow-empty -m again"], capture_output=True, text=True)
    if r.returncode:
        raise OSError(0, r.stderr)
attempt("commit", commit)
"#,
    );
    for (label, allowed) in [
        ("fchmod-usr", false),
        ("fchown-locked", false),
        ("fsetxattr-locked", false),
        ("setxattr-locked", false),
        ("removexattr-locked", false),
        ("times-locked", false),
        ("times-locked-again", false),
        ("futimens-stamped", false),
        ("times-usr", false),
        ("fchmod-own", true),
        ("ftruncate-own", true),
        ("setxattr-own", true),
        ("fsetxattr-own", true),
        ("removexattr-own", true),
        ("times-own", true),
        ("futimens-own", true),
        ("own-changed", true),
        ("commit", true),
    ] {
        verdict(&out, label, allowed);
    }
    let lines = refusals(&env, &id);
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/usr/bin/env",
            "read-only: /usr",
            "(fchmod",
        ],
    );
    for (call, file) in [
        ("(fchown", "/locked.txt"),
        ("(fsetxattr", "/locked.txt"),
        ("(setxattr", "/locked.txt"),
        ("(removexattr", "/locked.txt"),
        ("(utimensat", "/locked.txt"),
        ("(utimensat", "/stamped.txt"),
    ] {
        let rule = format!("deny_write: {}", &file[1..]);
        one_line(&lines, &["filesystem-write", file, &rule, call]);
    }
    assert_eq!(lines.len(), 7, "{}", lines.join("\n"));
    let work = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(work.join("locked.txt")).unwrap(),
        "locked\n"
    );
    use std::os::unix::fs::MetadataExt;
    assert_ne!(fs::metadata(work.join("stamped.txt")).unwrap().mtime(), 5);
}

/// `setxattrat` and `removexattrat` (Linux 6.13, called by number: no libc wraps them
/// yet) are done by pid 1 as the `setxattr` family is, so a refused one is an event:
/// by path from the working folder, from a folder descriptor without following the link
/// (`AT_SYMLINK_NOFOLLOW`) and on a descriptor itself (`AT_EMPTY_PATH`). The twins: a
/// `user.*` attribute set on a file of the tree each way works and reads back, a larger
/// `struct xattr_args` with zeros past its fields is taken, one removed is gone, and
/// none records a refusal; an `O_PATH` descriptor is refused (EBADF) as the kernel
/// refuses it.
#[test]
fn attributes_set_from_a_folder_are_events() {
    let (env, id) = two_locked_files();
    let out = inside(
        &env,
        &id,
        r#"
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
AT_FDCWD, NOFOLLOW, EMPTY = -100, 0x100, 0x1000
def check(r):
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def setat(dfd, path, flags, name, value, usize=16):
    buf = ctypes.create_string_buffer(value, len(value))
    raw = struct.pack("QII", ctypes.addressof(buf), len(value), 0) + bytes(usize - 16)
    args = ctypes.create_string_buffer(raw, len(raw))
    check(libc.syscall(463, ctypes.c_long(dfd), path, ctypes.c_uint(flags), name, args, ctypes.c_size_t(usize)))
def removeat(dfd, path, flags, name):
    check(libc.syscall(466, ctypes.c_long(dfd), path, ctypes.c_uint(flags), name))
attempt("setat-locked", lambda: setat(AT_FDCWD, b"locked.txt", 0, b"user.a", b"1"))
attempt("setat-fd-stamped", lambda: on_fd("stamped.txt", lambda fd: setat(fd, b"", EMPTY, b"user.b", b"2")))
attempt("removeat-locked", lambda: removeat(AT_FDCWD, b"locked.txt", 0, b"user.c"))
attempt("setat-usr", lambda: on_fd("/usr", lambda fd: setat(fd, b"bin/env", NOFOLLOW, b"user.d", b"3")))
attempt("setat-own", lambda: setat(AT_FDCWD, b"notes.txt", 0, b"user.k", b"value"))
attempt("setat-own-fd", lambda: on_fd("notes.txt", lambda fd: setat(fd, None, EMPTY, b"user.f", b"fd", usize=24)))
os.mkdir("sub")
os.symlink("../notes.txt", "sub/l")
attempt("setat-own-link", lambda: on_fd("sub", lambda fd: setat(fd, b"l", 0, b"user.l", b"via link")))
attempt("removeat-own", lambda: removeat(AT_FDCWD, b"notes.txt", 0, b"user.k"))
attempt("setat-opath", lambda: on_fd("notes.txt", lambda fd: setat(fd, b"", EMPTY, b"user.p", b"p"), os.O_PATH))
def check_own():
    got = {n: os.getxattr("notes.txt", n) for n in os.listxattr("notes.txt")}
    assert got == {"user.f": b"fd", "user.l": b"via link"}, got
attempt("own-read-back", check_own)
"#,
    );
    for (label, allowed) in [
        ("setat-locked", false),
        ("setat-fd-stamped", false),
        ("removeat-locked", false),
        ("setat-usr", false),
        ("setat-own", true),
        ("setat-own-fd", true),
        ("setat-own-link", true),
        ("removeat-own", true),
        ("setat-opath", false),
        ("own-read-back", true),
    ] {
        verdict(&out, label, allowed);
    }
    assert!(
        out.contains("REFUSED setat-locked: Read-only file system")
            && out.contains("REFUSED setat-opath: Bad file descriptor"),
        "{out}"
    );
    let lines = refusals(&env, &id);
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/locked.txt",
            "deny_write: locked.txt",
            "(setxattrat",
        ],
    );
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/stamped.txt",
            "deny_write: stamped.txt",
            "(setxattrat",
        ],
    );
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/locked.txt",
            "deny_write: locked.txt",
            "(removexattrat",
        ],
    );
    one_line(
        &lines,
        &[
            "filesystem-write",
            "/usr/bin/env",
            "read-only: /usr",
            "(setxattrat",
        ],
    );
    assert_eq!(lines.len(), 4, "{}", lines.join("\n"));
    // On the host: the tree's file has what was set, the covered ones nothing.
    let work = env.workdir(&id);
    let listed = |name: &str| {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import os, sys; print(sorted(os.listxattr(sys.argv[1])))",
            ])
            .arg(work.join(name))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(listed("notes.txt"), "['user.f', 'user.l']");
    assert_eq!(listed("locked.txt"), "[]");
    assert_eq!(listed("stamped.txt"), "[]");
}

/// A folder `deny_read` covers refuses being listed and looked into, rather than listing
/// as empty (which a program takes for content: `git add -A` recorded its files as
/// deleted): `ls`, `find`, `opendir`, `stat`, `access`, `readlink`, `getxattrat`,
/// `listxattr`, `statfs`, `cd`, running a program and an open of a name in it each fail
/// with EACCES and are one `filesystem-read` event naming the rule,
/// once per call and path a run, so a tool going over the tree again and again (git at
/// each command) makes no more of them. The twins: the folder itself can be seen, its
/// neighbours list and stat, `git add -A` and commits leave its files alone.
#[test]
fn a_denied_folder_refuses_listing_and_lookups_with_one_event_each() {
    let (env, _repo, id) = setup(&[
        ("private/a.txt", "a\n"),
        ("private/sub/b.txt", "b\n"),
        ("open/c.txt", "c\n"),
    ]);
    env.write_profile("[filesystem]\ndeny_read = [\"private/\"]\n");
    let out = inside(
        &env,
        &id,
        r#"
import subprocess
def run(*argv):
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode:
        raise OSError(0, r.stderr.strip())
def accessible(path):
    if not os.access(path, os.R_OK):
        raise PermissionError(13, "Permission denied")
def expect(cond):
    if not cond:
        raise OSError(0, "unexpected")
attempt("listdir", lambda: os.listdir("private"))
attempt("listdir-sub", lambda: os.listdir("private/sub"))
attempt("stat-inside", lambda: os.stat("private/a.txt"))
attempt("lstat-deeper", lambda: os.lstat("private/sub/b.txt"))
attempt("access-inside", lambda: accessible("private/a.txt"))
attempt("readlink-inside", lambda: os.readlink("private/l"))
attempt("chdir", lambda: os.chdir("private"))
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def getxattrat(path, name):
    buf = ctypes.create_string_buffer(64)
    raw = struct.pack("QII", ctypes.addressof(buf), 64, 0)
    args = ctypes.create_string_buffer(raw, len(raw))
    if libc.syscall(464, ctypes.c_long(-100), path, ctypes.c_uint(0), name, args, ctypes.c_size_t(16)) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
attempt("getxattrat-inside", lambda: getxattrat(b"private/a.txt", b"user.x"))
attempt("listxattr-inside", lambda: os.listxattr("private/sub"))
attempt("run-inside", lambda: subprocess.run(["private/run.sh"]))
attempt("statvfs-inside", lambda: os.statvfs("private/sub/b.txt"))
attempt("read-inside", lambda: read("private/a.txt"))
attempt("ls-inside", lambda: run("ls", "private/a.txt"))
attempt("find", lambda: run("find", "private"))
attempt("stat-again", lambda: os.stat("private/a.txt"))
attempt("stat-folder", lambda: expect(os.stat("private").st_mode & 0o777 == 0))
attempt("list-neighbour", lambda: expect(os.listdir("open") == ["c.txt"]))
attempt("stat-neighbour", lambda: os.stat("open/c.txt"))
attempt("find-neighbour", lambda: run("find", "open"))
attempt("ls-root", lambda: run("ls", "-la"))
def commits():
    for i in range(5):
        write("open/c.txt")
        run("git", "add", "-A")
        run("git", "commit", "-q", "-m", "work %d" % i)
    out = subprocess.run(["git", "show", "--stat", "--format=", "HEAD~4..HEAD"], capture_output=True, text=True).stdout
    expect("private" not in out and "open/c.txt" in out)
attempt("commits", commits)
"#,
    );
    for (label, allowed) in [
        ("listdir", false),
        ("listdir-sub", false),
        ("stat-inside", false),
        ("lstat-deeper", false),
        ("access-inside", false),
        ("readlink-inside", false),
        ("getxattrat-inside", false),
        ("listxattr-inside", false),
        ("run-inside", false),
        ("statvfs-inside", false),
        ("chdir", false),
        ("read-inside", false),
        ("ls-inside", false),
        ("find", false),
        ("stat-again", false),
        ("stat-folder", true),
        ("list-neighbour", true),
        ("stat-neighbour", true),
        ("find-neighbour", true),
        ("ls-root", true),
        ("commits", true),
    ] {
        let line = verdict(&out, label, allowed);
        if !allowed {
            assert!(line.contains("Permission denied"), "{line}");
        }
    }
    let lines = refusals(&env, &id);
    let work = format!("/loopat/loop/{id}/workdir");
    for (call, path) in [
        ("(openat", "private "),
        ("(openat", "private/sub "),
        ("(newfstatat", "private/a.txt "),
        ("(newfstatat", "private/sub/b.txt "),
        ("access", "private/a.txt "),
        ("(readlink", "private/l "),
        ("(chdir", "private "),
        ("(openat", "private/a.txt "),
        ("(statx", "private/a.txt "),
        ("(getxattrat", "private/a.txt "),
        ("(listxattr", "private/sub "),
        ("(execve", "private/run.sh "),
        ("(statfs", "private/sub/b.txt "),
        // git's look at the folder below it, once for five commits.
        ("(newfstatat", "private/sub "),
    ] {
        one_line(
            &lines,
            &[
                "filesystem-read",
                &format!("{work}/{path}"),
                "deny_read: private/",
                call,
            ],
        );
    }
    // `find` opened the folder as `os.listdir` did, `stat-again` and five commits
    // looked again at what was looked at: nothing more.
    assert_eq!(lines.len(), 14, "{}", lines.join("\n"));
    // Nothing of the host changed, and no commit touched the folder.
    let tree = env.workdir(&id);
    assert_eq!(
        fs::read_to_string(tree.join("private/a.txt")).unwrap(),
        "a\n"
    );
    let log = env.git(&tree, ["log", "--stat", "--format=", "-5"]);
    assert!(!log.contains("private"), "{log}");
}

/// Refusals on /proc are events where pid 1 can do the call with the caller's rights: a
/// file of the caller's own process or of none (`/proc/sys`, read-only), opened for
/// writing or its mode changed; `/proc/self` named as the caller's, never as pid 1's. The
/// twins: the caller's own files that may be written are, and record nothing.
#[test]
fn proc_refusals_are_events_named_as_the_callers() {
    let (env, _repo, id) = setup(&[("README", "app\n")]);
    let out = inside(
        &env,
        &id,
        r#"
def wronly(path, flags=os.O_WRONLY):
    os.close(os.open(path, flags))
attempt("open-sys", lambda: wronly("/proc/sys/kernel/hostname"))
attempt("chmod-sys", lambda: os.chmod("/proc/sys/kernel/hostname", 0o666))
attempt("chmod-own-status", lambda: os.chmod("/proc/self/status", 0o777))
attempt("open-own-environ", lambda: wronly("/proc/self/environ", os.O_RDWR))
def comm():
    with open("/proc/self/comm", "w") as f:
        f.write("renamed")
    with open("/proc/self/comm") as f:
        if f.read().strip() != "renamed":
            raise OSError(0, "not renamed")
attempt("own-comm", comm)
def oom():
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("500")
attempt("own-oom", oom)
attempt("dev-null", lambda: wronly("/dev/null"))
r, w = os.pipe()
attempt("fchmod-pipe", lambda: os.fchmod(w, 0o600))
print("pid", os.getpid())
"#,
    );
    for (label, allowed) in [
        ("open-sys", false),
        ("chmod-sys", false),
        ("chmod-own-status", false),
        ("open-own-environ", false),
        ("own-comm", true),
        ("own-oom", true),
        ("dev-null", true),
        ("fchmod-pipe", true),
    ] {
        verdict(&out, label, allowed);
    }
    let pid = out
        .lines()
        .find_map(|l| l.strip_prefix("pid "))
        .expect("the caller's pid");
    let lines = refusals(&env, &id);
    one_line(
        &lines,
        &[
            "/proc/sys/kernel/hostname",
            "read-only: /proc/sys",
            "(openat",
        ],
    );
    one_line(
        &lines,
        &[
            "/proc/sys/kernel/hostname",
            "read-only: /proc/sys",
            "(chmod",
        ],
    );
    one_line(
        &lines,
        &[&format!("/proc/{pid}/status"), "Operation not permitted"],
    );
    one_line(
        &lines,
        &[&format!("/proc/{pid}/environ"), "Permission denied"],
    );
    assert!(!lines.iter().any(|l| l.contains("/proc/1/")), "{lines:?}");
    assert_eq!(lines.len(), 4, "{}", lines.join("\n"));
}
