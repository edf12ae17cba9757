//! The import (DESIGN 4.1): a loop's branch reaches its origin only as verified objects and
//! one compare-and-swap ref update, and nothing the loop repository configures runs.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// Writes a loose object file named `name` holding `content` (zlib of `blob N\0...`),
/// which need not hash to `name`: the corrupt object an attacker would plant.
fn plant_loose(git_dir: &Path, name: &str, kind: &str, content: &[u8]) {
    let mut raw = format!("{kind} {}\0", content.len()).into_bytes();
    raw.extend_from_slice(content);
    let path = git_dir.join("objects").join(&name[..2]).join(&name[2..]);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&path);
    let mut child = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys,zlib; sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&raw).unwrap();
    let out = child.wait_with_output().unwrap();
    fs::write(path, out.stdout).unwrap();
}

fn object_path(git_dir: &Path, id: &str) -> PathBuf {
    git_dir.join("objects").join(&id[..2]).join(&id[2..])
}

#[test]
fn a_corrupt_object_is_refused_and_the_origin_stays_clean() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "corrupt");
    let wd = env.workdir(&id);
    env.commit_file(&wd, "secret.txt", "honest content\n", "work");
    let blob = env
        .git(&wd, ["rev-parse", "HEAD:secret.txt"])
        .trim()
        .to_string();
    let before = env.refs(&repo);
    // The blob's file now holds other content: its name no longer matches.
    plant_loose(&wd.join(".git"), &blob, "blob", b"evil content\n");

    env.run(["show", &id])
        .fails(1)
        .stderr_has("corrupt")
        .stderr_has("nothing of it reached the origin");
    assert_eq!(env.refs(&repo), before, "no origin ref moved");
    assert!(
        !object_path(&repo.join(".git"), &blob).exists(),
        "the corrupt object was not written"
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    let list = env.run(["list"]).ok();
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with(&id) && l.contains("error")),
        "{}",
        list.stdout
    );
}

#[test]
fn import_copies_only_missing_objects_and_moves_only_the_loop_branch() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "import");
    let wd = env.workdir(&id);
    // The agent commits, amends, branches, and rebases in its own repository.
    env.commit_file(&wd, "a.c", "int a;\n", "a");
    env.git(&wd, ["commit", "-q", "--amend", "-m", "a, amended"]);
    env.git(&wd, ["branch", "experiment"]);
    env.git(&wd, ["tag", "mine"]);
    env.commit_file(&wd, "b/c/d.c", "int d;\n", "nested");
    let tip = env.rev(&wd, "HEAD").unwrap();
    let before = env.refs(&repo);
    let objects_before = env.git(&repo, ["count-objects", "-v"]);

    env.run(["show", &id]).ok();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")).unwrap(), tip);
    let after = env.refs(&repo);
    for line in before
        .lines()
        .filter(|l| !l.starts_with(&format!("refs/heads/loop/{id} ")))
    {
        assert!(after.contains(line), "{line} changed");
    }
    assert!(
        !after.contains("experiment") && !after.contains("refs/tags/mine"),
        "only loop/<id> is imported"
    );
    env.git(&repo, ["fsck", "--strict", "--no-dangling"]);
    assert_ne!(env.git(&repo, ["count-objects", "-v"]), objects_before);
    // A second import has nothing to do.
    let objects_mid = env.git(&repo, ["count-objects", "-v"]);
    env.run(["show", &id]).ok();
    assert_eq!(env.git(&repo, ["count-objects", "-v"]), objects_mid);

    // A rewritten history (reset to the base) is imported as well: the branch is the loop's.
    env.git(&wd, ["reset", "-q", "--hard", "HEAD~2"]);
    env.run(["list"]).ok();
    assert_eq!(env.rev(&repo, &format!("loop/{id}")), env.rev(&wd, "HEAD"));
}

#[test]
fn tampered_alternates_are_refused() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let other = env.repo("private");
    env.commit_file(&other, "secret.txt", "private\n", "private work");
    let id = env.new_loop(&repo, "alt");
    let wd = env.workdir(&id);
    fs::write(
        wd.join(".git/objects/info/alternates"),
        format!("{}\n", other.join(".git/objects").display()),
    )
    .unwrap();
    let private_head = env.rev(&other, "HEAD").unwrap();
    fs::create_dir_all(wd.join(".git/refs/heads/loop")).unwrap();
    fs::write(
        wd.join(".git/refs/heads/loop").join(&id),
        format!("{private_head}\n"),
    )
    .unwrap();
    env.run(["show", &id]).fails(1).stderr_has("alternates");
    assert!(
        env.git_out(&repo, ["cat-file", "-e", &private_head]).code != 0,
        "no object of another repository reached the origin"
    );
}

#[test]
fn planted_hooks_and_config_never_run_on_the_host() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "planted");
    let wd = env.workdir(&id);
    let marker = env.root.join("PWNED");
    let cmd = format!("touch {}", marker.display());
    for dir in [wd.clone(), env.loop_notes(&id)] {
        let git_dir = dir.join(".git");
        fs::create_dir_all(git_dir.join("hooks")).unwrap();
        for hook in [
            "pre-commit",
            "post-checkout",
            "post-merge",
            "reference-transaction",
            "pre-push",
            "post-index-change",
            "fsmonitor-watchman",
        ] {
            let h = git_dir.join("hooks").join(hook);
            fs::write(&h, format!("#!/bin/sh\n{cmd}\n")).unwrap();
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&h, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut config = fs::OpenOptions::new()
            .append(true)
            .open(git_dir.join("config"))
            .unwrap();
        write!(
            config,
            "[core]\n\tfsmonitor = {cmd}\n\tpager = {cmd}\n\thooksPath = hooks\n\tsshCommand = {cmd}\n\teditor = {cmd}\n[diff]\n\texternal = {cmd}\n[filter \"evil\"]\n\tclean = {cmd}\n\tsmudge = {cmd}\n\tprocess = {cmd}\n\trequired = true\n[include]\n\tpath = /etc/passwd\n"
        )
        .unwrap();
        fs::write(dir.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
        fs::write(dir.join("dirty.c"), "modified\n").unwrap();
    }
    assert!(!marker.exists());
    env.run(["list"]).ok();
    env.run(["list", "--json"]).ok();
    env.run(["show", &id]).ok();
    env.run(["show", &id, "--json"]).ok();
    env.run(["rm", &id])
        .fails(1)
        .stderr_has("uncommitted changes");
    env.run(["gc"]).ok();
    env.run(["doctor"]);
    env.run(["rm", &id, "--force"]).ok();
    assert!(!marker.exists(), "a planted command ran on the host");
}
