use std::fs;

use crate::common::TestEnv;

/// Writes `knowledge/.loopat/sandboxes/NAME/sandbox.toml`.
fn write_profile(env: &TestEnv, name: &str, body: &str) -> std::path::PathBuf {
    let path = env
        .ws
        .join("context/knowledge/.loopat/sandboxes")
        .join(name)
        .join("sandbox.toml");
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, body).unwrap();
    path
}

#[test]
fn layers_and_origins() {
    let env = TestEnv::new();
    env.run(["config", "get", "sandbox.profile"])
        .ok()
        .stdout_has("default");
    for name in ["ops", "mine"] {
        write_profile(&env, name, "");
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

    env.run([
        "config",
        "set",
        "--team",
        "agent.command",
        "[\"codex\", \"--full-auto\"]",
    ])
    .ok();
    let list = env.run(["config", "list", "--show-origin"]).ok();
    list.stdout_has("team:")
        .stdout_has("agent.command=[\"codex\", \"--full-auto\"]");
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
