//! The plan cache (issue 30, `sandbox::cache`): what a run needs that does not change
//! between runs and is dear to read (the git identity) is kept in `plans/<id>.json`,
//! used while every file it came from is as it was, and made anew when any input changes
//! (the identity's git config, the binary itself); what is read at every start (the
//! operator and team config, the profile, the toolchains in the home folder, the grants)
//! reaches the next run too; a forged or broken file is not read; the file is in no
//! sandbox's view; `--print-argv` is the same warm and cold.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// nvm with two node versions, 20 the default, in the test's HOME.
fn fake_nvm(env: &TestEnv) {
    let h = &env.home;
    write(&h.join(".nvm/nvm.sh"), "# nvm\n");
    for v in ["v18.19.0", "v20.11.1"] {
        write(&h.join(format!(".nvm/versions/node/{v}/bin/node")), "");
    }
    write(&h.join(".nvm/alias/default"), "20\n");
}

/// `git loop ARGS` with the identity left to the user's git config (the test
/// environment's `GIT_AUTHOR_*` and `GIT_COMMITTER_*` would win over any file).
fn git_loop(env: &TestEnv, args: &[&str]) -> String {
    let out = env
        .command()
        .current_dir(&env.root)
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn argv(env: &TestEnv, id: &str) -> String {
    git_loop(
        env,
        &["run", id, "--net", "none", "--print-argv", "--", "true"],
    )
}

/// What the sandbox's commands get of the cached answers: the author, the committer and
/// PATH (with the default node version of nvm), from a real run.
fn inside(env: &TestEnv, id: &str) -> String {
    let script = "echo \"$GIT_AUTHOR_NAME|$GIT_COMMITTER_NAME|$PATH\"";
    git_loop(
        env,
        &["run", "-q", id, "--net", "none", "--", "sh", "-c", script],
    )
}

/// The inode of the kept plan: a plan made anew is a new file (written beside and
/// renamed), a plan used is left as it was.
fn plan_inode(env: &TestEnv, id: &str) -> Option<u64> {
    fs::symlink_metadata(plan_path(env, id))
        .ok()
        .map(|m| m.ino())
}

fn plan_path(env: &TestEnv, id: &str) -> PathBuf {
    env.ws.join(format!("plans/{id}.json"))
}

/// A plan is kept only once every file it came from is older than the cache's racy window
/// (two seconds: a file changed twice within one tick of the file system's clock keeps
/// its times); the test waits that long where it needs a plan kept.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2100));
}

/// Runs until the plan is kept (the first run after a change makes it, or leaves it
/// unkept while a stamp is too young), then checks the next run uses it unchanged and
/// prints the same command line; returns that command line.
fn warm(env: &TestEnv, id: &str) -> String {
    settle();
    let mut made = argv(env, id);
    if plan_inode(env, id).is_none() {
        // The first run with shared toolchain caches makes the caches' missing folders,
        // which are then too young themselves.
        settle();
        made = argv(env, id);
    }
    let kept = plan_inode(env, id).expect("a plan is kept once its inputs are settled");
    let used = argv(env, id);
    assert_eq!(plan_inode(env, id), Some(kept), "the kept plan is used");
    assert_eq!(made, used, "the command line is the same warm and cold");
    used
}

#[test]
fn a_kept_plan_is_used_until_an_input_changes() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "cached");
    env.git(&repo, ["config", "user.name", "Tester"]);
    env.git(&repo, ["config", "user.email", "tester@example.com"]);
    fake_nvm(&env);
    let operator = env.home.join(".config/git-loop/config.toml");
    write(&operator, "[toolchains]\nenable = [\"nvm\"]\n");

    // Cold and warm: the same command line, the plan file kept and then used.
    warm(&env, &id);
    let now = inside(&env, &id);
    assert!(now.starts_with("Tester|Tester|"), "{now}");
    assert!(now.contains("v20.11.1"), "{now}");
    let plans = fs::symlink_metadata(env.ws.join("plans")).unwrap();
    assert!(plans.is_dir());
    assert_eq!(plans.mode() & 0o777, 0o700);

    // The identity's git config: the registered repository's own.
    env.git(&repo, ["config", "user.name", "Someone Else"]);
    let now = inside(&env, &id);
    assert!(now.starts_with("Someone Else|Someone Else|"), "{now}");
    warm(&env, &id);

    // The toolchains in the home folder: nvm's default version.
    write(&env.home.join(".nvm/alias/default"), "18\n");
    let now = inside(&env, &id);
    assert!(
        now.contains("v18.19.0") && !now.contains("v20.11.1"),
        "{now}"
    );
    let before = warm(&env, &id);

    // A credential file appearing in a bound toolchain folder: covered from the next run.
    write(
        &env.home.join(".nvm/versions/node/v18.19.0/.npmrc"),
        "//registry.npmjs.org/:_authToken=npm-secret-TOKEN\n",
    );
    let covered = argv(&env, &id);
    assert_ne!(covered, before, "the new credential file is covered");
    assert!(covered.contains("v18.19.0/.npmrc"), "{covered}");
    warm(&env, &id);

    // The team config: commits made inside carry the agent's name.
    let team = env.ws.join("context/knowledge/.loopat/config.toml");
    write(&team, "[agent]\nidentity = \"agent\"\n");
    let now = inside(&env, &id);
    assert!(!now.starts_with("Someone Else|"), "{now}");
    assert!(now.contains("|Someone Else|"), "{now}");
    fs::remove_file(&team).unwrap();
    warm(&env, &id);

    // The profile narrows the toolchains to none.
    let profile = env.write_profile("[toolchains]\nenable = []\n");
    let now = inside(&env, &id);
    assert!(!now.contains("v18.19.0"), "{now}");
    fs::remove_file(&profile).unwrap();
    warm(&env, &id);
    let now = inside(&env, &id);
    assert!(now.contains("v18.19.0"), "{now}");

    // The operator config.
    write(&operator, "[toolchains]\nenable = []\n");
    let now = inside(&env, &id);
    assert!(!now.contains("v18.19.0"), "{now}");
    write(&operator, "[toolchains]\nenable = [\"nvm\"]\n");
    warm(&env, &id);

    // The grants are the loop record's, read by every run.
    let granted = env.root.join("granted");
    fs::create_dir(&granted).unwrap();
    env.run(["grant", &id, "--ro", granted.to_str().unwrap()])
        .ok();
    let now = argv(&env, &id);
    assert!(now.contains(granted.to_str().unwrap()), "{now}");

    // The binary itself: a copy elsewhere (another build) makes its own plan.
    let kept = plan_inode(&env, &id);
    let copy = env.root.join("bin/git-loop");
    fs::create_dir_all(copy.parent().unwrap()).unwrap();
    fs::copy(crate::common::BIN, &copy).unwrap();
    let other = std::process::Command::new(&copy)
        .env_clear()
        .envs(env.envs())
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .current_dir(&env.root)
        .args(["run", &id, "--net", "none", "--print-argv", "--", "true"])
        .output()
        .unwrap();
    assert!(other.status.success());
    assert!(String::from_utf8_lossy(&other.stdout).contains(copy.to_str().unwrap()));
    assert_ne!(
        plan_inode(&env, &id),
        kept,
        "not the plan of the other binary"
    );
}

#[test]
fn a_forged_or_broken_plan_is_ignored_and_made_anew() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "forged");
    env.git(&repo, ["config", "user.name", "Tester"]);
    env.git(&repo, ["config", "user.email", "tester@example.com"]);
    let good = warm(&env, &id);
    let path = plan_path(&env, &id);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains("Tester"), "{text}");

    // Another identity under the old tag, as someone without the key would write it.
    let forged = text.replace("Tester", "Mallory");
    fs::write(&path, &forged).unwrap();
    let seen = inside(&env, &id);
    assert!(seen.starts_with("Tester|Tester|"), "{seen}");
    fs::write(&path, &forged).unwrap();
    let now = argv(&env, &id);
    assert_eq!(now, good);
    assert!(!now.contains("Mallory"));
    assert!(!fs::read_to_string(&path).unwrap().contains("Mallory"));

    // A new tag too, made with a key of the forger's own.
    let (_, body) = forged.split_once('\n').unwrap();
    fs::write(&path, format!("{}\n{body}", "ab".repeat(32))).unwrap();
    assert_eq!(argv(&env, &id), good);
    assert!(!fs::read_to_string(&path).unwrap().contains("Mallory"));

    // Garbage, empty, a folder, a link to a copy of a good plan.
    for broken in ["\u{1}garbage", ""] {
        fs::write(&path, broken).unwrap();
        assert_eq!(argv(&env, &id), good);
    }
    fs::remove_file(&path).unwrap();
    fs::create_dir(&path).unwrap();
    assert_eq!(argv(&env, &id), good);
    fs::remove_dir(&path).unwrap();
    argv(&env, &id);
    let copy = env.root.join("plan-copy");
    fs::copy(&path, &copy).unwrap();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&copy, &path).unwrap();
    assert_eq!(argv(&env, &id), good);
    assert!(!fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn the_kept_plan_is_in_no_sandboxs_view() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "unseen");
    warm(&env, &id);
    assert!(plan_path(&env, &id).is_file());
    // Everything the sandbox sees but the host's system folders (which hold no
    // workspace): no file of the plans is there, under any name it has on the host.
    let script = format!(
        "find / \\( -path /proc -o -path /sys -o -path /dev -o -path /usr -o -path /opt \\) -prune -o \\( -name '{id}.json' -o -name plans \\) -print 2>/dev/null; echo searched"
    );
    let run = env
        .run(["run", "-q", &id, "--net", "none", "--", "sh", "-c", &script])
        .ok();
    assert_eq!(run.stdout, "searched\n");
    // Its positive twin: the same search finds what the sandbox does see.
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--net",
            "none",
            "--",
            "sh",
            "-c",
            "find / \\( -path /proc -o -path /sys -o -path /dev -o -path /usr -o -path /opt \\) -prune -o -name README.md -print 2>/dev/null; true",
        ])
        .ok();
    assert!(
        run.stdout
            .contains(&format!("/loopat/loop/{id}/workdir/README.md")),
        "{}",
        run.stdout
    );
    // `rm` takes the loop's plan with it.
    env.run(["rm", &id]).ok();
    assert!(!plan_path(&env, &id).exists());
}

/// The walk of a loop's git folders for lock files a killed run left (issue 29) lists only
/// the folders changed since the last start, from stamps kept in `plans/<id>.locks.json`:
/// a lock file a sandbox leaves anywhere in them is still found and removed at the next
/// start, a forged walk is not read, and with nothing changed the kept walk is used as it
/// is.
#[test]
fn a_kept_walk_of_the_git_folders_still_finds_every_lock_a_sandbox_leaves() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "walked");
    let walk = env.ws.join(format!("plans/{id}.locks.json"));
    let run = |script: &str| {
        env.run(["run", &id, "--net", "none", "--", "sh", "-c", script])
            .ok()
    };
    // Kept once the folders are older than the racy window.
    settle();
    run("true");
    assert!(walk.is_file(), "the walk is kept");
    let kept = fs::symlink_metadata(&walk).unwrap().ino();
    // Its positive twin: nothing changed, the kept walk is used and left as it is.
    run("true");
    assert_eq!(fs::symlink_metadata(&walk).unwrap().ino(), kept);

    // Lock files left by the sandbox's own git folders, one in a folder the walk kept
    // (refs/heads/loop) and one in a folder made after it, in both repositories.
    let left = run(
        "mkdir -p .git/refs/heads/loop/deep && : > .git/refs/heads/loop/deep/x.lock && : > .git/index.lock && : > /loopat/context/notes/.git/refs/heads/y.lock",
    );
    assert!(
        !left.stderr.contains("removed what a killed run"),
        "{}",
        left.stderr
    );
    let next = run("true");
    next.stderr_has("removed what a killed run");
    for lock in [
        "workdir/.git/index.lock",
        "workdir/.git/refs/heads/loop/deep/x.lock",
        "context/notes/.git/refs/heads/y.lock",
    ] {
        next.stderr_has(lock);
        assert!(!env.loop_dir(&id).join(lock).exists(), "{lock} is removed");
    }

    // A walk forged to say a folder holds nothing, under the old tag: after a sandbox left
    // a lock file in refs/heads/loop, the folder's stamp in the walk is set to what the
    // folder is now (as someone who can write the workspace but has not the key would).
    // Not read: the lock file is found.
    settle();
    run("true");
    let text = fs::read_to_string(&walk).unwrap();
    run(": > .git/refs/heads/loop/z.lock");
    // Older than the racy window, so that the folder's new stamp would be taken as proof.
    settle();
    let (tag, body) = text.split_once('\n').unwrap();
    let mut v: serde_json::Value = serde_json::from_str(body).unwrap();
    let git = env.workdir(&id).join(".git");
    let m = fs::metadata(git.join("refs/heads/loop")).unwrap();
    let folder = &mut v["walks"][git.to_str().unwrap()]["folders"]["refs/heads/loop"];
    assert!(folder.is_object(), "{body}");
    folder["stamp"] = serde_json::json!({
        "dev": m.dev(), "ino": m.ino(), "size": m.size(),
        "mtime": [m.mtime(), m.mtime_nsec()], "ctime": [m.ctime(), m.ctime_nsec()],
    });
    fs::write(&walk, format!("{tag}\n{v}")).unwrap();
    run("true").stderr_has("refs/heads/loop/z.lock");
    assert!(!git.join("refs/heads/loop/z.lock").exists());
}
