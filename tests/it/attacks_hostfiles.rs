//! Files the host reads or writes in folders a sandbox can write (DESIGN 4.0, ATTACKS 29):
//! each attack is planted from inside a real sandbox started by `git loop run`, then the
//! host command that touches the file runs; it must stay within a time and memory bound,
//! read no host file through a link, write none through one, and still do its work. Each
//! has its twin on an untouched loop.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::common::TestEnv;

/// A host command that takes longer than this is taken to be blocked.
const BOUND: Duration = Duration::from_secs(60);

/// The most a host command may hold in memory while it meets a planted file of 10 GB.
const MAX_RSS_KIB: u64 = 256 << 10;

/// A loop of a fresh workspace whose default vault holds the agent's login (so each run
/// approves the key in the agent's state file, `.claude/.claude.json`).
fn logged_in_loop(env: &TestEnv) -> String {
    let repo = env.repo("app");
    env.agent_login();
    env.new_loop(&repo, "state")
}

/// `sh -c SCRIPT` inside loop `id`'s sandbox; fails the test if it does not exit 0.
#[track_caller]
fn inside(env: &TestEnv, id: &str, script: &str) {
    let run = env
        .run_within(BOUND, ["run", id, "--", "sh", "-c", script])
        .run;
    assert_eq!(
        run.code, 0,
        "inside failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

fn state_file(env: &TestEnv, id: &str) -> std::path::PathBuf {
    env.loop_dir(id).join(".claude/.claude.json")
}

/// The key the suite logs in with, as the agent's state approves it (its last 20 characters).
fn approved(env: &TestEnv, id: &str) -> bool {
    let text = fs::read_to_string(state_file(env, id)).unwrap();
    let state: serde_json::Value = serde_json::from_str(&text).unwrap();
    state["customApiKeyResponses"]["approved"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v.as_str().is_some_and(|s| !s.is_empty())))
}

#[test]
fn a_ten_gigabyte_agent_state_is_not_read_whole_by_the_next_run() {
    let env = TestEnv::new();
    let id = logged_in_loop(&env);
    inside(
        &env,
        &id,
        &format!("truncate -s 10G /loopat/loop/{id}/.claude/.claude.json"),
    );
    assert_eq!(fs::metadata(state_file(&env, &id)).unwrap().len(), 10 << 30);
    let next = env.run_within(BOUND, ["run", id.as_str(), "--", "true"]);
    next.run.ok();
    assert!(
        next.max_rss_kib < MAX_RSS_KIB,
        "the run reached {} KiB reading the agent's state",
        next.max_rss_kib
    );
    // Set aside, and the key approved in fresh state.
    let aside = env.loop_dir(&id).join(".claude/.claude.json.unreadable");
    assert_eq!(fs::metadata(aside).unwrap().len(), 10 << 30);
    assert!(fs::metadata(state_file(&env, &id)).unwrap().len() < 1 << 20);
    assert!(approved(&env, &id));
}

#[test]
fn an_agent_state_linked_to_a_host_file_is_neither_read_nor_written_through() {
    let env = TestEnv::new();
    let id = logged_in_loop(&env);
    let secret = env.home.join(".ssh/id_ed25519");
    fs::create_dir_all(secret.parent().unwrap()).unwrap();
    let text = "{\"customApiKeyResponses\":{\"approved\":[\"host-secret-0123456789\"]}}\n";
    fs::write(&secret, text).unwrap();
    inside(
        &env,
        &id,
        &format!(
            "ln -sf {} /loopat/loop/{id}/.claude/.claude.json",
            secret.display()
        ),
    );
    env.run_within(BOUND, ["run", id.as_str(), "--", "true"])
        .run
        .ok();
    assert_eq!(fs::read_to_string(&secret).unwrap(), text);
    let state = state_file(&env, &id);
    assert!(!state.is_symlink(), "the planted link is still there");
    assert!(
        !fs::read_to_string(&state)
            .unwrap()
            .contains("host-secret-0123456789"),
        "the host file's content reached the agent's state"
    );
    assert!(approved(&env, &id));
}

#[test]
fn an_agent_state_of_its_own_keeps_its_keys_and_gets_the_approval() {
    let env = TestEnv::new();
    let id = logged_in_loop(&env);
    inside(
        &env,
        &id,
        &format!(
            "printf '{{\"theme\":\"dark\",\"numStartups\":7}}\\n' > /loopat/loop/{id}/.claude/.claude.json"
        ),
    );
    let next = env.run_within(BOUND, ["run", id.as_str(), "--", "true"]);
    next.run.ok();
    let state: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(state_file(&env, &id)).unwrap()).unwrap();
    assert_eq!(state["theme"], "dark");
    assert_eq!(state["numStartups"], 7);
    assert!(approved(&env, &id));
    assert!(!Path::new(&format!("{}.unreadable", state_file(&env, &id).display())).exists());
}

#[test]
fn an_agent_state_that_is_a_fifo_does_not_hang_the_next_run() {
    let env = TestEnv::new();
    let id = logged_in_loop(&env);
    inside(
        &env,
        &id,
        &format!("f=/loopat/loop/{id}/.claude/.claude.json; rm -f $f && mkfifo $f"),
    );
    env.run_within(BOUND, ["run", id.as_str(), "--", "true"])
        .run
        .ok();
    assert!(state_file(&env, &id).is_file());
    assert!(approved(&env, &id));
}
