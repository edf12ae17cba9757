use std::fs;

use crate::common::TestEnv;

#[test]
fn layers_and_origins() {
    let env = TestEnv::new();
    env.run(["config", "get", "sandbox.profile"])
        .ok()
        .stdout_has("default");
    for name in ["ops", "mine"] {
        env.write_sandbox_profile(name, "");
    }
    env.run(["config", "set", "--operator", "sandbox.profile", "ops"])
        .ok();
    let operator = env.home.join(".config/git-loop/config.toml");
    assert!(fs::read_to_string(&operator)
        .unwrap()
        .contains("profile = \"ops\""));
    env.run(["config", "get", "sandbox.profile", "--show-origin"])
        .ok()
        .stdout_has(&format!("operator:{}\tops", operator.display()));

    env.run(["config", "set", "sandbox.profile", "mine"]).ok();
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    env.run(["config", "get", "sandbox.profile", "--show-origin"])
        .ok()
        .stdout_has(&format!("personal:{}\tmine", personal.display()));

    env.run(["config", "set", "--team", "agent.permissions", "ask"])
        .ok();
    let list = env.run(["config", "list", "--show-origin"]).ok();
    list.stdout_has("team:").stdout_has("agent.permissions=ask");
    list.stdout_has("default\tsandbox.mode=work");

    let repo = env.repo("app");
    let id = env.new_loop(&repo, "cfg");
    env.run(["config", "set", "--loop", &id, "sandbox.mode", "review"])
        .ok();
    env.run([
        "config",
        "get",
        "sandbox.mode",
        "--loop",
        &id,
        "--show-origin",
    ])
    .ok()
    .stdout_has("loop:")
    .stdout_has("review");
    env.run(["config", "get", "sandbox.mode"])
        .ok()
        .stdout_has("work");
    env.run(["show", &id]).ok();

    env.run(["config", "unset", "sandbox.profile"]).ok();
    env.run(["config", "get", "sandbox.profile"])
        .ok()
        .stdout_has("ops");
    let json = env.run(["config", "list", "--json"]).ok().json();
    assert!(json
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["key"] == "sandbox.profile" && e["layer"] == "operator"));
}

/// Turning the sandbox off is the machine owner's decision: a personal or team file (which
/// an agent might write) cannot do it.
#[test]
fn only_the_operator_may_turn_the_sandbox_off() {
    let env = TestEnv::new();
    env.run(["config", "set", "sandbox.backend", "none"])
        .fails(2)
        .stderr_has("only be set in the operator config");
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    fs::write(&personal, "[sandbox]\nbackend = \"none\"\n").unwrap();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "still sandboxed");
    let run = env.run(["run", &id, "--", "true"]).ok();
    run.stderr_has("git-loop: sandbox bwrap")
        .stderr_has("ignored");
    env.run(["config", "set", "--operator", "sandbox.backend", "none"])
        .ok();
    env.run(["run", &id, "--", "true"])
        .ok()
        .stderr_has("NO SANDBOX");
}

#[test]
fn only_the_operator_may_widen() {
    let env = TestEnv::new();
    env.run(["config", "set", "network.allow_cidrs", "[\"10.0.0.0/8\"]"])
        .fails(2)
        .stderr_has("only be set in the operator config");
    env.run(["config", "set", "--team", "mounts", "[]"])
        .fails(2);
    env.run([
        "config",
        "set",
        "--operator",
        "network.allow_cidrs",
        "[\"10.1.0.0/16\"]",
    ])
    .ok();
    // A personal file that widens anyway is ignored, with a warning.
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    fs::create_dir_all(personal.parent().unwrap()).unwrap();
    fs::write(&personal, "[network]\nallow_cidrs = [\"0.0.0.0/0\"]\n").unwrap();
    let run = env
        .run(["config", "get", "network.allow_cidrs", "--show-origin"])
        .ok();
    run.stdout_has("operator:")
        .stdout_has("10.1.0.0/16")
        .stderr_has("ignored");
}

#[test]
fn bad_config_input() {
    let env = TestEnv::new();
    env.run(["config", "set", "no.such.key", "1"])
        .fails(2)
        .stderr_has("unknown config key")
        .stderr_has("sandbox.backend");
    env.run(["config", "set", "agent.command", "claude"])
        .fails(2)
        .stderr_has("agent.command takes an array");
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    fs::create_dir_all(personal.parent().unwrap()).unwrap();
    fs::write(&personal, "[sandbox\n").unwrap();
    env.run(["config", "list"])
        .fails(1)
        .stderr_has("not valid TOML")
        .stderr_has(&personal.display().to_string());
}

/// The typos: each refused with the closest valid word, exit 2, and no file
/// written or changed.
#[test]
fn typos_are_refused_with_a_did_you_mean_and_nothing_is_written() {
    let env = TestEnv::new();
    let operator = env.home.join(".config/git-loop/config.toml");
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    env.run(["config", "set", "--operator", "sandbox.backend", "nonee"])
        .fails(2)
        .stderr_has("sandbox.backend = \"nonee\" is not valid")
        .stderr_has("hint: did you mean `none`?");
    assert!(!operator.exists(), "the operator config was written");
    env.run(["config", "set", "network.mode", "proxxy"])
        .fails(2)
        .stderr_has("hint: did you mean `proxy`?");
    assert!(!personal.exists(), "the personal config was written");

    // An existing file stays as it was, byte for byte.
    let before = "# mine\n[agent]\ncommand = [\"claude\"]\n";
    fs::create_dir_all(personal.parent().unwrap()).unwrap();
    fs::write(&personal, before).unwrap();
    env.run(["config", "set", "sandbox.backnd", "bwrap"])
        .fails(2)
        .stderr_has("unknown config key 'sandbox.backnd'")
        .stderr_has("hint: did you mean `sandbox.backend`?");
    env.run(["config", "set", "sandbox.mode", "reviw"])
        .fails(2)
        .stderr_has("hint: did you mean `review`?");
    env.run(["config", "set", "agent.command", "[]"])
        .fails(2)
        .stderr_has("the command is empty");
    env.run(["config", "get", "netwrk.mode"])
        .fails(2)
        .stderr_has("hint: did you mean `network.mode`?");
    assert_eq!(fs::read_to_string(&personal).unwrap(), before);

    // The loop layer too: its record is not touched.
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "typos");
    let record = env.loop_dir(&id).join("loop.toml");
    let before = fs::read_to_string(&record).unwrap();
    env.run(["config", "set", "--loop", &id, "network.mode", "nonee"])
        .fails(2)
        .stderr_has("hint: did you mean `none`?");
    assert_eq!(fs::read_to_string(&record).unwrap(), before);

    // What was refused never reached a run: the sandbox and the proxy as before.
    env.run(["run", &id, "--", "true"])
        .ok()
        .stderr_has("git-loop: sandbox bwrap · net proxy (");

    // The same words spelt right are taken.
    env.run(["config", "set", "--operator", "sandbox.backend", "none"])
        .ok();
    env.run(["config", "set", "network.mode", "none"]).ok();
    env.run(["config", "get", "network.mode", "--show-origin"])
        .ok()
        .stdout_has(&format!("personal:{}\tnone", personal.display()));
}

/// An unknown key or a bad value in any layer's file is an error naming the file and the
/// line, with the fix; nothing runs with the rest of the file.
#[test]
fn a_bad_key_in_any_layer_names_the_file_and_the_line() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "bad keys");
    let operator = env.home.join(".config/git-loop/config.toml");
    let team = env.ws.join("context/knowledge/.loopat/config.toml");
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    for path in [&operator, &team, &personal] {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            path,
            "# a comment\n[sandbox]\nmode = \"work\"\nbacknd = \"bwrap\"\n",
        )
        .unwrap();
        for args in [
            vec!["config", "list"],
            vec!["run", id.as_str(), "--", "true"],
        ] {
            env.run(&args)
                .fails(1)
                .stderr_has(&format!(
                    "error: {}:4: unknown key sandbox.backnd",
                    path.display()
                ))
                .stderr_has("hint: did you mean `sandbox.backend`?");
        }
        fs::write(path, "[network]\n\nmode = \"proxxy\"\n").unwrap();
        env.run(["config", "list"])
            .fails(1)
            .stderr_has(&format!(
                "error: {}:3: bad value for network.mode",
                path.display()
            ))
            .stderr_has("hint: did you mean `proxy`?");
        fs::remove_file(path).unwrap();
        env.run(["config", "list"]).ok();
    }

    // The loop layer: the [config] table of loop.toml.
    let record = env.loop_dir(&id).join("loop.toml");
    let text = fs::read_to_string(&record).unwrap();
    fs::write(
        &record,
        format!("{text}\n[config.sandbox]\nprofle = \"default\"\n"),
    )
    .unwrap();
    let line = fs::read_to_string(&record)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("profle"))
        .unwrap()
        + 1;
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has(&format!(
            "error: {}:{line}: unknown key sandbox.profle",
            record.display()
        ))
        .stderr_has("hint: did you mean `sandbox.profile`?");
    fs::write(&record, &text).unwrap();

    // A sandbox profile.
    let profile = env.write_sandbox_profile("default", "[limits]\npids = 64\nmemroy = \"1G\"\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has(&format!("error: {}:", profile.display()))
        .stderr_has("unknown field `memroy`");
    env.write_sandbox_profile("default", "\nsetpu = \"make\"\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has(&format!(
            "error: {}:2: unknown key setpu",
            profile.display()
        ))
        .stderr_has("hint: did you mean `setup`?");
    env.write_sandbox_profile("default", "[limits]\npids = 64\n");
    env.run(["run", &id, "--", "true"]).ok();
}

/// `new --sandbox` names a profile the team has, or nothing is made; a loop whose
/// profile is gone does not run with the defaults.
#[test]
fn an_unknown_sandbox_profile_is_an_error() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.run(["init"]).ok();
    env.write_sandbox_profile("node", "[limits]\npids = 512\n");
    let nothing_left = || {
        assert_eq!(
            env.loop_entries(),
            Vec::<String>::new(),
            "loops/ is not empty"
        );
        for dir in [&repo, &env.notes()] {
            assert!(
                !env.refs(dir).contains("refs/heads/loop/"),
                "a branch was left in {}",
                dir.display()
            );
        }
    };
    env.run_in(&repo, ["new", "x", "--sandbox", "no-such-profile"])
        .fails(2)
        .stderr_has("--sandbox no-such-profile: there is no such sandbox profile")
        .stderr_has("hint: the profiles: default, node");
    nothing_left();
    env.run_in(&repo, ["new", "x", "--sandbox", "nod"])
        .fails(2)
        .stderr_has("hint: did you mean `node`?");
    nothing_left();
    env.run(["new", "--scratch", "x", "--sandbox", "no-such-profile"])
        .fails(2);
    nothing_left();
    // A profile named by the config must exist too; the error says which layer named it.
    env.run(["config", "set", "sandbox.profile", "nodejs"])
        .fails(2)
        .stderr_has("there is no such sandbox profile")
        .stderr_has("hint: did you mean `node`?");
    let personal = env.ws.join("personal/tester/.loopat/config.toml");
    fs::write(&personal, "[sandbox]\nprofile = \"gone\"\n").unwrap();
    env.run_in(&repo, ["new", "x"])
        .fails(1)
        .stderr_has("sandbox.profile = \"gone\" (from the personal config")
        .stderr_has(&personal.display().to_string());
    nothing_left();
    fs::remove_file(&personal).unwrap();

    // A profile that exists is used.
    let id = env
        .run_in(&repo, ["new", "node work", "--sandbox", "node"])
        .ok()
        .stdout
        .trim()
        .to_string();
    let record = fs::read_to_string(env.loop_dir(&id).join("loop.toml")).unwrap();
    assert!(record.contains("sandbox = \"node\""), "{record}");
    env.run(["run", &id, "--", "true"]).ok();

    // Gone from knowledge: the loop's runs refuse and say how to get it back.
    fs::remove_dir_all(env.ws.join("context/knowledge/.loopat/sandboxes/node")).unwrap();
    for args in [
        vec!["run", id.as_str(), "--", "true"],
        vec!["show", id.as_str(), "--mounts"],
        vec!["show", id.as_str(), "--net"],
    ] {
        env.run(&args)
            .fails(1)
            .stderr_has(&format!(
                "loop {id} uses the sandbox profile 'node', which is gone"
            ))
            .stderr_has(
                "hint: restore .loopat/sandboxes/node/sandbox.toml in the knowledge repository",
            );
    }
    // The loop itself is still there to look at.
    env.run(["show", &id]).ok();
}
