//! Small edges of the workspace (issue 29): each bad input is one clear error with its hint
//! and leaves nothing made; each leftover, made by hand under the name its writer uses, is
//! repaired by the next ordinary command.

use std::fs;

use crate::common::TestEnv;

#[test]
fn a_vault_that_does_not_exist_is_refused_before_the_loop_is_made() {
    let env = TestEnv::new();
    env.run(["new", "--scratch", "--vault", "nosuchvault", "x"])
        .fails(2)
        .stderr_has("error: --vault nosuchvault: there is no such vault")
        .stderr_has("hint: make it first: git loop vault init nosuchvault");
    assert!(env.loop_entries().is_empty(), "{:?}", env.loop_entries());
    // The positive twins: no vault at all, and the default before it is made.
    for vault in ["none", "default"] {
        let id = env
            .run(["new", "--scratch", "--vault", vault, "y"])
            .ok()
            .stdout
            .trim()
            .to_string();
        env.run(["run", &id, "--", "true"]).ok();
    }
}

#[test]
fn git_loop_home_must_be_an_absolute_folder() {
    let env = TestEnv::new();
    let here = env.root.join("user-repo");
    fs::create_dir_all(&here).unwrap();
    let mut cmd = env.command();
    let out = cmd
        .current_dir(&here)
        .env("GIT_LOOP_HOME", "ws-here")
        .args(["list"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: GIT_LOOP_HOME=ws-here is a relative path"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "hint: from here that is: export GIT_LOOP_HOME={}",
            here.join("ws-here").display()
        )),
        "{stderr}"
    );
    assert_eq!(fs::read_dir(&here).unwrap().count(), 0, "nothing made here");

    let file = env.root.join("a-file");
    fs::write(&file, "").unwrap();
    let out = env
        .command()
        .env("GIT_LOOP_HOME", &file)
        .args(["list"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: GIT_LOOP_HOME={} is not a folder",
            file.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: point GIT_LOOP_HOME at the workspace folder"),
        "{stderr}"
    );
}

#[test]
fn a_broken_operator_config_is_one_error_not_one_per_loop() {
    let env = TestEnv::new();
    for title in ["a", "b", "c"] {
        env.run(["new", "--scratch", title]).ok();
    }
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(&config, "[sandbox]\nmode = \"work\"\nbroken = [\n").unwrap();
    let run = env.run(["list"]).fails(1);
    run.stderr_has(&format!("error: {}:3: not valid TOML", config.display()))
        .stderr_has(&format!("hint: fix the TOML at {}:3", config.display()));
    assert_eq!(
        run.stderr.matches("not valid TOML").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    fs::remove_file(&config).unwrap();
    env.run(["list"]).ok();
}

#[test]
fn lock_files_of_removed_loops_go() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "locks");
    let keep = env.new_loop(&repo, "kept");
    env.run(["list"]).ok();
    let locks = env.ws.join("locks");
    assert!(locks.join(format!("import-{id}.lock")).is_file());
    env.run(["rm", &id]).ok();
    for name in [format!("import-{id}.lock"), format!("run-{id}.lock")] {
        assert!(!locks.join(&name).exists(), "{name} stayed");
    }
    // What earlier versions left, one per loop ever made: doctor --fix clears them, and
    // keeps those of the loop that is still there.
    for name in [
        "import-gone-123456.lock",
        "run-gone-123456.lock",
        "new-gone-654321.lock",
    ] {
        fs::write(locks.join(name), "").unwrap();
    }
    env.run(["doctor"])
        .stdout_has("3 lock files of loops that are gone in");
    env.run(["doctor", "--fix"])
        .stdout_has("removed 3 lock files of loops that are gone");
    for name in [
        "import-gone-123456.lock",
        "run-gone-123456.lock",
        "new-gone-654321.lock",
    ] {
        assert!(!locks.join(name).exists(), "{name} stayed");
    }
    assert!(locks.join(format!("import-{keep}.lock")).is_file());
    env.run(["list"]).ok();
}
