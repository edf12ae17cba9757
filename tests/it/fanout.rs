//! N agents on one task (issue 33): `new --fan-out N` makes N loops on one base under one
//! group; three different scripted agents work in them (each run with its own operator
//! config, the operator's choice of agent); `compare` shows a row per loop with its
//! check; `pick` merges one and removes the others, their branches kept. And a loop whose
//! work landed by a squash or rebase merge made with plain git counts as merged.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{Run, TestEnv};
use crate::review_loop::{inside, script};

/// An operator config naming `agent` as the agent, in a file of its own.
fn agent_config(env: &TestEnv, name: &str, agent: &Path) -> PathBuf {
    let path = env.root.join(format!("{name}.toml"));
    fs::write(
        &path,
        format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    )
    .unwrap();
    path
}

/// `git loop ARGS` with the operator config at `config`.
fn with_config(env: &TestEnv, config: &Path, args: &[&str]) -> Run {
    let out = env
        .command()
        .current_dir(&env.root)
        .env("GIT_LOOP_CONFIG", config)
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Two loops of one group made by `new --fan-out 2 TOPIC`, whose agent (the user's config)
/// writes its loop's id to `who.txt` and commits it: the loops' ids and the group.
fn fan_out_marking(env: &TestEnv, repo: &Path, name: &str, topic: &str) -> (Vec<String>, String) {
    let agent = script(
        env,
        name,
        "echo \"$GIT_LOOP_ID\" > who.txt && git add . && git commit -qm mark\n",
    );
    let path = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(
        &path,
        format!("[agent]\ncommand = [{:?}]\n", agent.display().to_string()),
    )
    .unwrap();
    let ids: Vec<String> = env
        .run_in(repo, ["new", "--fan-out", "2", topic])
        .ok()
        .stdout
        .lines()
        .map(str::to_string)
        .collect();
    let group = fs::read_to_string(env.loop_dir(&ids[0]).join("loop.toml"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("group = \"")
                .map(|g| g.trim_end_matches('"').to_string())
        })
        .expect("the group is recorded");
    (ids, group)
}

#[test]
fn three_agents_on_one_task_are_compared_and_one_is_picked() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let new = env
        .run_in(&repo, ["new", "--fan-out", "3", "add a greeting"])
        .ok();
    let ids: Vec<String> = new.stdout.lines().map(str::to_string).collect();
    assert_eq!(ids.len(), 3, "{}", new.stdout);
    new.stderr_has("created group add-a-greeting-");
    let group = fs::read_to_string(env.loop_dir(&ids[0]).join("loop.toml"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("group = \"")
                .map(|g| g.trim_end_matches('"').to_string())
        })
        .expect("the group is recorded");
    let base = env.rev(&repo, "main").unwrap();
    for id in &ids {
        let record = fs::read_to_string(env.loop_dir(id).join("loop.toml")).unwrap();
        assert!(record.contains(&format!("group = \"{group}\"")), "{record}");
        assert!(record.contains(&format!("base = \"{base}\"")), "{record}");
    }
    // The team's check: a greeting that says hello.
    let profile = env.ws.join("context/knowledge/.loopat/sandboxes/default");
    fs::create_dir_all(&profile).unwrap();
    fs::write(
        profile.join("sandbox.toml"),
        "check = \"grep -q hello greeting.txt\"\n",
    )
    .unwrap();
    // Three different agents, each the operator's choice for one loop.
    let agents = [
        ("terse", "echo hello > greeting.txt && git add . && git commit -qm 'greet'\n"),
        (
            "verbose",
            "printf 'hello\\nand welcome\\nto the project\\n' > greeting.txt && git add . && git commit -qm 'greet warmly' && echo more > extra.txt && git add . && git commit -qm 'and more'\n",
        ),
        ("wrong", "echo goodbye > greeting.txt && git add . && git commit -qm 'bid farewell'\n"),
    ];
    for (id, (name, body)) in ids.iter().zip(agents) {
        let config = agent_config(&env, name, &script(&env, &format!("{name}.sh"), body));
        with_config(&env, &config, &["agent", id]).ok();
    }
    let compare = env.run(["compare", &group]).ok();
    let rows: Vec<&str> = compare
        .stdout
        .lines()
        .filter(|l| ids.iter().any(|id| l.starts_with(id.as_str())))
        .collect();
    assert_eq!(rows.len(), 3, "{}", compare.stdout);
    let row = |id: &str| *rows.iter().find(|r| r.starts_with(id)).unwrap();
    assert!(row(&ids[0]).contains("passed"), "{}", compare.stdout);
    assert!(row(&ids[1]).contains("passed"), "{}", compare.stdout);
    assert!(row(&ids[2]).contains("failed (1)"), "{}", compare.stdout);
    assert!(row(&ids[0]).contains("(smallest)"), "{}", compare.stdout);
    assert!(row(&ids[1]).contains("2 files +4 -0"), "{}", compare.stdout);
    let json = env.run(["compare", &group, "--json"]).ok().json();
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let of = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(of(&ids[1])["commits"], 2);
    assert_eq!(of(&ids[1])["size_vs_smallest"], 4.0);
    assert_eq!(of(&ids[2])["check"]["passed"], false);
    assert_eq!(of(&ids[0])["check"]["passed"], true);
    // Each loop's agent ran to its end.
    for r in rows {
        assert_eq!(r["agent"]["state"], "exited", "{r}");
        assert_eq!(r["agent"]["code"], 0, "{r}");
    }
    assert!(row(&ids[0]).contains(" done "), "{}", compare.stdout);
    // review GROUP: the loops one after another.
    let review = env.run(["review", &group]).ok();
    for id in &ids {
        review.stdout_has(&format!("=== loop {id}"));
    }
    review.stdout_has("+goodbye");
    // pick: the second merged; the others removed, their branches kept.
    let pick = env.run(["pick", &ids[1], "--remove-others"]).ok();
    pick.stdout_has("code: main");
    assert_eq!(
        env.git(&repo, ["show", "main:greeting.txt"]),
        "hello\nand welcome\nto the project\n"
    );
    for other in [&ids[0], &ids[2]] {
        assert!(!env.loop_dir(other).exists(), "{other} was not removed");
        assert!(
            env.rev(&repo, &format!("loop/{other}")).is_some(),
            "its branch is gone"
        );
    }
    assert!(env.loop_dir(&ids[1]).exists());
    let list = env.run(["list"]).ok();
    assert!(
        list.stdout.contains(&ids[1]) && list.stdout.contains("merged"),
        "{}",
        list.stdout
    );
}

/// `agent GROUP` runs the agent in each loop of the group, one after another; `pick`
/// without a terminal keeps the others and says how to remove them; a loop of no group
/// is not compared.
#[test]
fn a_group_runs_its_agents_in_turn_and_pick_keeps_the_rest_unless_told() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (ids, group) = fan_out_marking(&env, &repo, "mark.sh", "mark");
    let run = env.run(["agent", &group]).ok();
    for id in &ids {
        run.stderr_has(&format!("== loop {id}"));
        assert_eq!(
            env.git(&repo, ["show", &format!("loop/{id}:who.txt")])
                .trim(),
            id
        );
    }
    let json = env
        .run(["compare", &group, "--json", "--no-check"])
        .ok()
        .json();
    assert_eq!(json[0]["agent"]["state"], "exited", "{json}");
    assert_eq!(json[0]["agent"]["code"], 0);
    assert!(json[0]["agent"]["since"].is_string(), "{json}");
    assert_eq!(json[0]["check"], serde_json::Value::Null);
    // Uncommitted work in the other loop: picking one leaves it, and says so.
    inside(&env, &ids[1], "echo draft > draft.txt");
    env.run(["pick", &ids[0]])
        .ok()
        .stderr_has("the group's other loops are kept");
    assert!(env.loop_dir(&ids[1]).exists());
    let lone = env.new_loop(&repo, "alone");
    env.run(["compare", &lone])
        .fails(2)
        .stderr_has("is not one of a fan-out's loops");
    for n in ["1", "17"] {
        let bad = env.run_in(&repo, ["new", "--fan-out", n, "x"]);
        assert_eq!(bad.code, 2, "{}", bad.stderr);
        bad.stderr_has("is not in 2..=16");
    }
}

/// A loop whose work reached main by a GitHub-style squash merge (made here with plain
/// git) or a rebase merge counts as merged: `list` says so, `rm` removes it without
/// --force, `gc --merged` collects it.
#[test]
fn a_squash_or_rebase_merge_made_elsewhere_marks_the_loop_merged() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let squashed = env.new_loop(&repo, "squashed");
    inside(&env, &squashed, "echo one > one.txt && git add . && git commit -qm one && echo two > two.txt && git add . && git commit -qm two");
    let rebased = env.new_loop(&repo, "rebased");
    inside(&env, &rebased, "echo three > three.txt && git add . && git commit -qm three && echo four >> README.md && git commit -qam four");
    let open = env.new_loop(&repo, "open");
    inside(
        &env,
        &open,
        "echo five > five.txt && git add . && git commit -qm five",
    );
    let state = |id: &str| {
        let list = env.run(["list", "--json"]).ok().json();
        list.as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == id)
            .unwrap()["state"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(state(&squashed), "active");
    // The forge's squash merge: one commit on main with the loop's changes.
    env.git(
        &repo,
        ["merge", "-q", "--squash", &format!("loop/{squashed}")],
    );
    env.git(&repo, ["commit", "-q", "-m", "Squashed (#12)"]);
    // Other work lands on main after it.
    env.commit_file(&repo, "later.txt", "later\n", "later work");
    // The forge's rebase merge: the loop's commits replayed onto main.
    env.git(&repo, ["cherry-pick", &format!("main..loop/{rebased}")]);
    assert_eq!(state(&squashed), "merged");
    assert_eq!(state(&rebased), "merged");
    assert_eq!(state(&open), "active");
    let list = env.run(["list", "--json"]).ok().json();
    let landed: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["branches"][0]["landed"].as_str())
        .collect();
    assert_eq!(landed.len(), 2, "{list}");
    // review proposes nothing for them.
    let review = env.run(["review"]).ok();
    assert!(!review.stdout.contains(&squashed), "{}", review.stdout);
    review.stdout_has(&open);
    // rm without --force; gc --merged takes the other; the open one stays (rm deleting its
    // branch would lose its commit).
    env.run(["rm", &squashed]).ok();
    env.run(["gc", "--merged"])
        .ok()
        .stdout_has(&format!("removed {rebased} (merged)"));
    env.run(["rm", &open, "--delete-branches"]).fails(1);
    assert!(env.loop_dir(&open).exists());
}

/// `agent GROUP --detach`: each loop's agent starts in its own live session and they run
/// at once; each one's work lands on its own branch.
#[test]
fn a_groups_agents_start_detached_in_their_sessions_at_once() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let (ids, group) = fan_out_marking(&env, &repo, "detached.sh", "detached");
    let run = env.run(["agent", &group, "--detach"]).ok();
    for id in &ids {
        run.stderr_has(&format!("the agent runs in loop {id}'s session"));
    }
    let landed = || {
        let list = env.run(["list", "--json"]).ok().json();
        list.as_array()
            .unwrap()
            .iter()
            .filter(|l| l["branches"][0]["ahead"] == 1)
            .count()
            == 2
    };
    let start = std::time::Instant::now();
    while !landed() && start.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    for id in &ids {
        env.run(["down", id]).ok();
    }
    assert!(landed(), "the agents' commits did not land");
    for id in &ids {
        assert_eq!(
            env.git(&repo, ["show", &format!("loop/{id}:who.txt")])
                .trim(),
            id
        );
    }
}
