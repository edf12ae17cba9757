//! Recovery of the vaults (issue 29, items 1 and 2): what a killed `git loop vault` command
//! leaves, made here by hand with the exact names the writers use, and the next ordinary
//! command (or `doctor --fix`) repairing it and saying so once. Each leftover is judged by
//! its owner: a temp file by the pid in its name, a git lock file by `locks/vaults.lock`,
//! a journal of writes by its pid; a live owner's is left alone.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::common::{Run, TestEnv};

fn with_stdin(env: &TestEnv, args: &[&str], input: &[u8]) -> Run {
    let mut child = env
        .command()
        .current_dir(&env.root)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn vaults(env: &TestEnv) -> PathBuf {
    env.ws.join("vaults/tester")
}

/// The pid of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

/// The temp file a writer of pid `pid` makes for `name` (`tempname::for_writer`'s format:
/// `.<name>.tmp-<pid>-<8 hex>`).
fn temp_of(dir: &Path, name: &str, pid: u32) -> PathBuf {
    dir.join(format!(".{name}.tmp-{pid}-0badc0de"))
}

/// A workspace with the default vault (a variable and a file), and a loop that uses it.
fn setup() -> (TestEnv, String) {
    let env = TestEnv::new();
    env.run(["vault", "init"]).ok();
    with_stdin(
        &env,
        &["vault", "set", "default", "env", "TOKEN"],
        b"token-value",
    )
    .ok();
    with_stdin(
        &env,
        &["vault", "set", "default", "file", ".config/tool/key", "-"],
        b"key-value\n",
    )
    .ok();
    let id = env
        .run(["new", "--scratch", "recover"])
        .ok()
        .stdout
        .trim()
        .to_string();
    (env, id)
}

/// What a `vault set` killed between writing its temp file and renaming it leaves, in
/// every folder git-loop writes in the vaults' repository; returns the files.
fn leave_temp_files(env: &TestEnv, pid: u32) -> Vec<PathBuf> {
    let vault = vaults(env).join("default");
    let sealed = fs::read(vault.join("envs/TOKEN.age")).unwrap();
    let files = vec![
        temp_of(&vault.join("envs"), "TOKEN.age", pid),
        temp_of(&vault.join("mounts/home/.config/tool"), "key.age", pid),
        temp_of(&vault, "recipients.txt", pid),
        temp_of(&vaults(env), ".gitattributes", pid),
    ];
    for f in &files {
        fs::write(f, &sealed).unwrap();
    }
    files
}

/// Issue 29 item 1: a `vault set` killed after writing `envs/.NAME.age.tmp-<pid>-<hex>`
/// broke every vault command and run. Now the next command that touches the vaults (`vault
/// list`, `run`, `doctor --fix`) removes a dead writer's temp files, says so once, and
/// works; a live writer's is left alone and breaks nothing.
#[test]
fn a_killed_vault_set_s_temp_files_are_removed_by_the_next_command() {
    let (env, id) = setup();
    let pid = dead_pid();
    let live = temp_of(
        &vaults(&env).join("default/envs"),
        "LIVE.age",
        std::process::id(),
    );
    fs::write(&live, b"being written").unwrap();

    let files = leave_temp_files(&env, pid);
    let doctor = env.run(["doctor"]);
    for f in &files {
        doctor.stdout_has(&format!("{} (an unfinished write", f.display()));
    }
    assert!(
        files.iter().all(|f| f.exists()),
        "doctor without --fix only looks"
    );
    let list = env.run(["vault", "list"]).ok();
    list.stdout_has("TOKEN").stdout_has(".config/tool/key");
    for f in &files {
        list.stderr_has(&format!("removed {}", f.display()));
        assert!(!f.exists(), "{} is still there", f.display());
    }
    list.stderr_has(&format!("pid {pid}"));
    assert!(live.exists(), "a live writer's temp file is its own");
    let again = env.run(["vault", "list"]).ok();
    assert!(
        !again.stderr.contains("removed"),
        "said twice: {}",
        again.stderr
    );

    let files = leave_temp_files(&env, pid);
    let run = env.run(["run", &id, "--", "printenv", "TOKEN"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "token-value\n"),
        "{}",
        run.stderr
    );
    run.stderr_has("removed");
    assert!(files.iter().all(|f| !f.exists()));

    let files = leave_temp_files(&env, pid);
    env.run(["doctor", "--fix"]).stdout_has("removed");
    assert!(files.iter().all(|f| !f.exists()));
    assert!(live.exists());
    fs::remove_file(&live).unwrap();
    assert_eq!(env.git(&vaults(&env), ["status", "--porcelain"]), "");
}

/// The git lock files a killed command can leave in the vaults' repository.
fn leave_git_locks(env: &TestEnv) -> Vec<PathBuf> {
    let git = vaults(env).join(".git");
    let locks = vec![
        git.join("index.lock"),
        git.join("HEAD.lock"),
        git.join("AUTO_MERGE.lock"),
        git.join("refs/heads/main.lock"),
    ];
    for l in &locks {
        fs::write(l, b"").unwrap();
    }
    locks
}

/// Issue 29 item 2: with a stale `index.lock` (or `HEAD.lock`, `AUTO_MERGE.lock`, a ref
/// lock) in the vaults' repository, every `vault set` failed with git's raw message. They
/// are judged by `locks/vaults.lock`, which every git-loop command running git there
/// holds: free, they are a killed command's and the next `vault set` (or `doctor --fix`,
/// or `sync`) removes them; held, they are left to their owner and `doctor` says who.
#[test]
fn stale_git_locks_in_the_vaults_repository_are_cleared_by_their_owner_s_judge() {
    let remote = tempfile::tempdir().unwrap();
    let url = remote.path().join("vaults.git");
    let env = TestEnv::new();
    env.git(
        remote.path(),
        ["init", "-q", "--bare", "-b", "main", url.to_str().unwrap()],
    );
    env.run(["init", "--vaults", url.to_str().unwrap()]).ok();
    env.run(["vault", "init"]).ok();
    let locks = leave_git_locks(&env);
    let set = with_stdin(&env, &["vault", "set", "default", "env", "AFTER"], b"v").ok();
    set.stderr_has(&format!("removed the stale {}", locks[0].display()));
    assert!(locks.iter().all(|l| !l.exists()));
    assert!(env
        .git(&vaults(&env), ["ls-files"])
        .contains("default/envs/AFTER.age"));

    // Held by a live command: left alone, and said.
    let locks = leave_git_locks(&env);
    let holder = fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(env.ws.join("locks/vaults.lock"))
        .unwrap();
    holder.lock().unwrap();
    env.run(["doctor", "--fix"])
        .stdout_has("is held by a running git loop command");
    assert!(
        locks.iter().all(|l| l.exists()),
        "a live holder's lock files were removed"
    );
    drop(holder);
    env.run(["doctor"])
        .stdout_has(&format!("stale git lock file {}", locks[1].display()));
    env.run(["doctor", "--fix"]).stdout_has("removed the stale");
    assert!(locks.iter().all(|l| !l.exists()));

    // sync, which takes the same lock, clears them before it fetches.
    let locks = leave_git_locks(&env);
    fs::create_dir_all(vaults(&env).join(".git/refs/remotes/origin")).unwrap();
    let fetch_lock = vaults(&env).join(".git/refs/remotes/origin/main.lock");
    fs::write(&fetch_lock, b"").unwrap();
    env.run(["sync"])
        .ok()
        .stdout_has("vaults: pushed to origin/main");
    assert!(locks.iter().chain([&fetch_lock]).all(|l| !l.exists()));
}

/// A `vault set` killed after its entry was written and before it was committed (its
/// journal of writes names it): the next vault command commits exactly that path, says
/// so, and nothing stays uncommitted (it would never sync). A live command's journal is
/// its own.
#[test]
fn what_a_killed_vault_command_wrote_is_committed_by_the_next() {
    let (env, _id) = setup();
    let entry = vaults(&env).join("default/envs/KILLED.age");
    fs::copy(vaults(&env).join("default/envs/TOKEN.age"), &entry).unwrap();
    let stray = vaults(&env).join("default/envs/STRAY.age");
    fs::write(&stray, b"plaintext nobody wrote through git loop").unwrap();
    let pid = dead_pid();
    let journal = env
        .ws
        .join(format!("locks/vault-writes-{pid}-0badc0de.pending"));
    fs::write(&journal, "default/envs/KILLED.age\n").unwrap();
    let live = env.ws.join(format!(
        "locks/vault-writes-{}-0badc0de.pending",
        std::process::id()
    ));
    fs::write(&live, "default/envs/STRAY.age\n").unwrap();
    env.run(["doctor"])
        .stdout_has("an interrupted `git loop vault` command wrote default/envs/KILLED.age");
    env.run(["vault", "list"]).ok().stderr_has(
        "committed what an interrupted `git loop vault` command wrote (default/envs/KILLED.age)",
    );
    assert!(!journal.exists());
    assert!(live.exists(), "a live command's journal is its own");
    let tracked = env.git(&vaults(&env), ["ls-files"]);
    assert!(tracked.contains("default/envs/KILLED.age"), "{tracked}");
    assert!(
        !tracked.contains("STRAY"),
        "only the journal's paths are committed"
    );
    fs::remove_file(&live).unwrap();
    fs::remove_file(&stray).unwrap();
    assert_eq!(env.git(&vaults(&env), ["status", "--porcelain"]), "");
}
