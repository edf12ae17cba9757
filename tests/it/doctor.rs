use std::fs;
use std::time::{Duration, SystemTime};

use crate::common::TestEnv;

fn age(path: &std::path::Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    let f = fs::File::options()
        .write(true)
        .open(path)
        .or_else(|_| fs::File::open(path))
        .unwrap();
    f.set_modified(old).unwrap();
}

#[test]
fn a_healthy_workspace() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.new_loop(&repo, "fine");
    let run = env.run(["doctor"]).ok();
    run.stdout_has("no problems found");
    let json = env.run(["doctor", "--json"]).ok().json();
    assert!(json.as_array().unwrap().iter().all(|f| f["level"] == "ok"));
}

#[test]
fn no_workspace_yet() {
    let env = TestEnv::new();
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("fix: git loop init"), "{}", run.stdout);
    assert!(!env.ws.exists(), "doctor only looks");
}

#[test]
fn leftovers_and_stale_locks_are_reported_and_fixed() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "x");
    let staging = env.ws.join("loops/.new-half-000000");
    fs::create_dir_all(staging.join("workdir")).unwrap();
    age(&staging);
    let lock = env.notes().join(".git/refs/heads/main.lock");
    fs::write(&lock, "").unwrap();
    age(&lock);
    let index_lock = repo.join(".git/index.lock");
    fs::write(&index_lock, "").unwrap();
    age(&index_lock);
    // A loop whose notes clone is gone, and one whose branch is missing.
    fs::remove_dir_all(env.loop_notes(&id)).unwrap();
    let id2 = env.new_loop(&repo, "y");
    fs::remove_file(repo.join(".git/refs/heads/loop").join(&id2)).unwrap();

    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1);
    for needle in [
        "interrupted `git loop new`",
        "main.lock",
        "index.lock",
        &format!("loop {id}: its notes repository"),
        &format!("loop {id2}: branch loop/{id2} is missing"),
    ] {
        assert!(
            run.stdout.contains(needle),
            "doctor did not report {needle:?}:\n{}",
            run.stdout
        );
    }
    assert_eq!(
        run.stdout.matches("fix:").count(),
        run.stdout.matches("problem").count() - 1,
        "{}",
        run.stdout
    );

    let fixed = env.run(["doctor", "--fix"]);
    assert!(fixed.stdout.contains("fixed"), "{}", fixed.stdout);
    assert!(!staging.exists() && !lock.exists() && !index_lock.exists());
    // The missing branch comes back with the next import.
    env.run(["list"]).ok();
    assert!(env.rev(&repo, &format!("loop/{id2}")).is_some());
}

#[test]
fn fresh_leftovers_are_left_alone() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    let staging = env.ws.join("loops/.new-busy-000000");
    fs::create_dir_all(&staging).unwrap();
    env.run(["doctor", "--fix"]).ok();
    assert!(staging.exists(), "a `new` in progress is not disturbed");
}
