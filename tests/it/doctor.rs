use std::fs;

use crate::common::{apply_fix, TestEnv};

/// (`doctor` runs in a network namespace of the test's own: what the machine's DNS answers
/// for the registries is not the workspace's health; see `TestEnv::run_in`.)
#[test]
fn a_healthy_workspace() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.new_loop(&repo, "fine");
    env.agent_login();
    let run = env.run(["doctor"]).ok();
    run.stdout_has("no problems found");
    let json = env.run(["doctor", "--json"]).ok().json();
    let findings = json.as_array().unwrap();
    // Nothing resolves there: the registries are named as unreachable, which is no
    // problem of the workspace's.
    // The person's git here has no global config: a bare repository's layout found from
    // a folder is advised against, with the command that sets it.
    assert!(
        findings.iter().all(|f| f["level"] == "ok"
            || (f["check"] == "network" && f["level"] == "info")
            || (f["check"] == "git" && f["level"] == "info")),
        "{json}"
    );
    run.stdout_has("fix: git config --global safe.bareRepository explicit");
    // (Set as advised it is an `ok` finding: the unit test of `check_git`'s finding.)
    // Every area was looked at, each with a finding of its own.
    for check in ["workspace", "sandbox", "agent", "identity", "login"] {
        assert!(
            findings.iter().any(|f| f["check"] == check),
            "doctor did not check {check}: {json}"
        );
    }
}

/// What keeps a real agent from working is a problem, each with its fix: the agent not
/// installed, no git identity for its commits, no login in the vault loops get.
#[test]
fn a_workspace_where_the_agent_cannot_work() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.new_loop(&repo, "agentless");
    // No login yet.
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    run.stdout_has("problem login: Claude Code has no login in vault 'default'")
        .stdout_has("fix: git loop agent login --vault default");
    // No identity: the user's git has none (no config, nothing in the environment).
    env.agent_login();
    let no_identity: Vec<(&str, std::ffi::OsString)> = env
        .envs()
        .into_iter()
        .filter(|(k, _)| !k.starts_with("GIT_AUTHOR") && !k.starts_with("GIT_COMMITTER"))
        .collect();
    let out = std::process::Command::new(crate::common::BIN)
        .env_clear()
        .envs(no_identity.iter().map(|(k, v)| (k, v)))
        .current_dir(&env.root)
        .arg("doctor")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("problem identity: you have no git identity"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: set yours: git config --global user.name"),
        "{stdout}"
    );
    // An agent that is not installed.
    let config = env.home.join(".config/git-loop/config.toml");
    fs::write(&config, "[agent]\ncommand = [\"no-such-agent-cli\"]\n").unwrap();
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    run.stdout_has("problem agent: the agent command 'no-such-agent-cli' is not installed");
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
    let lock = env.notes().join(".git/refs/heads/main.lock");
    fs::write(&lock, "").unwrap();
    let index_lock = repo.join(".git/index.lock");
    fs::write(&index_lock, "").unwrap();
    // A loop whose notes clone is gone, and one whose branch is missing.
    fs::remove_dir_all(env.loop_notes(&id)).unwrap();
    let id2 = env.new_loop(&repo, "y");
    fs::remove_file(repo.join(".git/refs/heads/loop").join(&id2)).unwrap();
    // Made a moment ago, by nobody alive: judged by their owner, not by their age.
    let staging = env.ws.join("loops/.new-half-000000");
    fs::create_dir_all(staging.join("workdir")).unwrap();

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
    // Every problem has its fix (and so has the advice about the person's git, an info).
    assert_eq!(
        run.stdout.matches("fix:").count() - 1,
        run.stdout.matches("problem").count() - 1,
        "{}",
        run.stdout
    );
    run.stdout_has("fix: git config --global safe.bareRepository explicit");

    let fixed = env.run(["doctor", "--fix"]);
    assert!(fixed.stdout.contains("fixed"), "{}", fixed.stdout);
    assert!(!staging.exists() && !lock.exists());
    // A lock file in the user's own repository may be the user's git at work: named
    // exactly, with how to remove it, and left alone.
    assert!(index_lock.exists(), "{}", fixed.stdout);
    assert!(
        fixed
            .stdout
            .lines()
            .any(|l| l.starts_with("problem") && l.contains(&index_lock.display().to_string())),
        "{}",
        fixed.stdout
    );
    assert!(
        fixed
            .stdout
            .contains(&format!("`rm {}`", index_lock.display())),
        "{}",
        fixed.stdout
    );
    // The missing branch comes back with the next import.
    env.run(["list"]).ok();
    assert!(env.rev(&repo, &format!("loop/{id2}")).is_some());
}

#[test]
fn a_new_in_progress_is_left_alone() {
    let env = TestEnv::new();
    env.run(["init"]).ok();
    env.agent_login();
    let staging = env.ws.join("loops/.new-busy-000000");
    fs::create_dir_all(&staging).unwrap();
    // Its `new` is alive: it holds the id's lock.
    let owner = fs::File::create(env.ws.join("locks/new-busy-000000.lock")).unwrap();
    owner.lock().unwrap();
    let run = env.run(["doctor", "--fix"]).ok();
    run.stdout_has("a `git loop new` of busy-000000 is in progress");
    assert!(staging.exists(), "a `new` in progress is not disturbed");
    env.run(["list"]).ok();
    assert!(staging.exists(), "a `new` in progress is not disturbed");
    // Once it is dead, the next command removes what it left.
    drop(owner);
    env.run(["list"]).ok();
    assert!(!staging.exists());
}

/// `doctor` resolves the names the sandboxes need (the registries, the git hosts, the
/// profile's and the config's names, the pins) as the proxy does, and judges them by the
/// proxy's checks: names the proxy would refuse are one problem with the one command that
/// allows every such address, and after that command they pass; a name on the denylist is
/// a problem no setting fixes. Names are pinned (the run is in a network namespace of the
/// test's own, so nothing else resolves and nothing is reached).
#[test]
fn doctor_judges_the_names_sandboxes_need_as_the_proxy_does() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.new_loop(&repo, "net");
    env.agent_login();
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        &config,
        "[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n[network.hosts]\n\
         \"registry.npmjs.org\" = \"203.0.113.80\"\n\"pypi.org\" = \"10.1.2.3\"\n\
         \"crates.io\" = \"127.0.0.1\"\n\"github.com\" = \"169.254.169.254\"\n\
         \"mirror.corp.test\" = \"100.64.1.2\"\n",
    )
    .unwrap();
    // The team's default sandbox profile allows the mirror.
    env.write_profile("[network]\nallow_domains = [\"mirror.corp.test\"]\n");
    let run = env.run(["doctor"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    run.stdout_has(
        "problem network: the proxy would refuse 3 allowed names here: \
         mirror.corp.test (the name resolves to 100.64.1.2, a shared (CGNAT, 100.64.0.0/10) address); \
         pypi.org (the name resolves to 10.1.2.3, a private (RFC 1918) address); \
         registry.npmjs.org (the name resolves to 203.0.113.80, a documentation (RFC 5737) address)\n\
         \x20       fix: git loop config set --operator network.allow_cidrs \
         '[\"127.0.0.0/8\", \"100.64.1.2/32\", \"10.1.2.3/32\", \"203.0.113.80/32\"]'\n",
    )
    .stdout_has("problem network: the proxy refuses 1 allowed name here whatever is set: github.com (169.254.169.254 is on the fixed denylist")
    .stdout_has("ok      network: 1 allowed name resolves to addresses the proxy reaches (crates.io)");
    apply_fix(&env, &run.stdout);
    let run = env.run(["doctor"]);
    assert!(!run.stdout.contains("would refuse"), "{}", run.stdout);
    run.stdout_has("ok      network: 4 allowed names resolve to addresses the proxy reaches (crates.io, mirror.corp.test, pypi.org, registry.npmjs.org)");
    let json = env.run(["doctor", "--json"]).json();
    let network: Vec<&serde_json::Value> = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["check"] == "network")
        .collect();
    assert!(
        network.iter().any(|f| f["level"] == "info"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("do not resolve here")),
        "{network:?}"
    );
}
