//! Every filesystem refusal is an event (issue 34): a write to a read-only place (the
//! system's folders, `.git/config`, a `deny_write` path) and a read of a `deny_read`
//! path, refused by the kernel inside a sandbox started by `git loop run`, each appear
//! once in `git loop log` with the path as the sandbox names it and the rule that refused
//! it; ordinary work makes none; a run that tries again and again records a bounded
//! number and one line saying how many more there were. The supervisor that sees them is
//! src/sandbox/creation.rs.

use std::fs;

use crate::common::TestEnv;
use crate::fspolicy::{setup, write_profile};

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
{body}
"#
    );
    env.run([
        "run", "-q", id, "--net", "none", "--", "python3", "-c", &program,
    ])
    .ok()
    .stdout
}

#[track_caller]
fn verdict(out: &str, label: &str, allowed: bool) {
    let line = out
        .lines()
        .find(|l| {
            l.split(':')
                .next()
                .unwrap_or("")
                .ends_with(&format!(" {label}"))
        })
        .unwrap_or_else(|| panic!("no verdict for {label}:\n{out}"));
    assert_eq!(line.starts_with("OK "), allowed, "{label}: {line}\n{out}");
}

/// The lines of `git loop log` that are filesystem refusals.
fn refusals(env: &TestEnv, id: &str) -> Vec<String> {
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
    ]);
    write_profile(
        &env,
        "[filesystem]\ndeny_write = [\"locked.txt\"]\ndeny_read = [\"secret.txt\"]\n",
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
    one_line(&lines, &["filesystem-write", "/usr/bin/env", "unlink"]);
    assert_eq!(lines.len(), 6, "{}", lines.join("\n"));
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
