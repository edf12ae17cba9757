//! The attack battery, ATTACKS.md item 36: widening the sandbox through the team or
//! personal config layer, or through a team sandbox profile (a file in the knowledge
//! repository that a distill loop or any teammate's push can change).
//!
//! Each attack writes the widening into the layer's file, makes a new loop and runs a
//! real sandbox with `git loop run`; the test checks the widening did not happen, that the
//! run said so in one warning line naming the file, the key and why, and that nothing on
//! the host was reached. Each has a positive twin: the same key in the operator config
//! takes effect, and what the team layer may set (narrowing, a domain under a registrable
//! domain) works. Every name the proxy could dial is pinned to 127.0.0.1 by the operator
//! config; every server is the test's own, on 127.0.0.1.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::common::{Run, TestEnv};

fn operator(env: &TestEnv) -> PathBuf {
    env.home.join(".config/git-loop/config.toml")
}

fn team(env: &TestEnv) -> PathBuf {
    env.ws.join("context/knowledge/.loopat/config.toml")
}

fn write(path: &Path, body: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

/// A workspace with a code repository, and the operator config `body`.
fn setup(operator_config: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::battery(module_path!());
    let repo = env.repo("app");
    env.run(["init"]).ok();
    write(&operator(&env), operator_config);
    (env, repo)
}

/// Asserts `run` warned exactly once that `key` in `file` is ignored, naming why.
#[track_caller]
fn warned_once(run: &Run, file: &Path, key: &str, why: &str) {
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| {
            l.starts_with(&format!("warning: {}:", file.display()))
                && l.contains(&format!(" {key} = "))
        })
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one warning for {key} in {}:\n{}",
        file.display(),
        run.stderr
    );
    let line = lines[0];
    assert!(
        line.contains("is ignored: ") && line.contains(why),
        "the warning says why: {line}"
    );
}

/// The interfaces of a `/proc/net/dev` listing, after a `NS <link>` line.
fn interfaces(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("Inter-"))
        .skip(2)
        .map(|l| l.split(':').next().unwrap().trim().to_string())
        .collect()
}

const NET_PROBE: &str = "echo NS $(readlink /proc/self/ns/net); cat /proc/net/dev";

fn host_net_ns() -> String {
    fs::read_link("/proc/self/ns/net")
        .unwrap()
        .display()
        .to_string()
}

fn sandbox_net_ns(run: &Run) -> String {
    run.stdout
        .lines()
        .find_map(|l| l.strip_prefix("NS "))
        .unwrap_or_else(|| panic!("no NS line:\n{}", run.stdout))
        .to_string()
}

#[test]
fn attack_36_the_team_layer_cannot_give_a_loop_the_host_network() {
    let (env, repo) = setup("");
    let team = team(&env);
    write(
        &team,
        "# published by a distill loop\n[network]\nmode = \"host\"\n",
    );
    let made = env.run_in(&repo, ["new", "widened"]).ok();
    warned_once(
        &made,
        &team,
        "network.mode",
        "only the operator config may give a sandbox the host's network",
    );
    let id = made.stdout.trim().to_string();
    let record = fs::read_to_string(env.loop_dir(&id).join("loop.toml")).unwrap();
    assert!(record.contains("network = \"proxy\""), "{record}");

    let run = env.run(["run", &id, "--", "sh", "-c", NET_PROBE]).ok();
    warned_once(&run, &team, "network.mode", "host's network");
    run.stderr_has("git-loop: sandbox bwrap · net proxy (");
    assert_eq!(interfaces(&run.stdout), vec!["lo"], "{}", run.stdout);
    assert_ne!(sandbox_net_ns(&run), host_net_ns());
    // `config list --show-origin` shows it where it was written, with why.
    env.run(["config", "list", "--show-origin"])
        .ok()
        .stdout_has(&format!("team:{}:3\tnetwork.mode=\"host\"\t(ignored: only the operator config may give a sandbox the host's network)", team.display()))
        .stdout_has("default\tnetwork.mode=proxy");
    // And `config set` refuses it in the team, personal and loop layers.
    for target in [
        vec!["--team"],
        vec!["--personal"],
        vec!["--loop", id.as_str()],
    ] {
        let mut args = vec!["config", "set"];
        args.extend(target);
        args.extend(["network.mode", "host"]);
        env.run(&args)
            .fails(2)
            .stderr_has("may only be set in the operator config")
            .stderr_has(&format!(
                "hint: the operator config is {}",
                operator(&env).display()
            ));
    }
    assert_eq!(
        fs::read_to_string(&team).unwrap(),
        "# published by a distill loop\n[network]\nmode = \"host\"\n"
    );
}

#[test]
fn the_operator_may_give_a_loop_the_host_network() {
    let (env, repo) = setup("[network]\nmode = \"host\"\n");
    let id = env.new_loop(&repo, "host network");
    let run = env.run(["run", &id, "--", "sh", "-c", NET_PROBE]).ok();
    run.stderr_has("git-loop: sandbox bwrap · net host");
    assert!(!run.stderr.contains("warning:"), "{}", run.stderr);
    assert_eq!(sandbox_net_ns(&run), host_net_ns());
    let host = fs::read_to_string("/proc/net/dev").unwrap();
    assert_eq!(
        interfaces(&run.stdout).len(),
        interfaces(&host).len(),
        "{}",
        run.stdout
    );
}

#[test]
fn the_team_layer_may_narrow_the_network() {
    let (env, repo) = setup("[network]\nmode = \"host\"\n");
    write(&team(&env), "[network]\nmode = \"none\"\n");
    let made = env.run_in(&repo, ["new", "narrowed"]).ok();
    assert!(!made.stderr.contains("warning:"), "{}", made.stderr);
    let id = made.stdout.trim().to_string();
    let run = env.run(["run", &id, "--", "sh", "-c", NET_PROBE]).ok();
    run.stderr_has("git-loop: sandbox bwrap · net none");
    assert_eq!(interfaces(&run.stdout), vec!["lo"]);
    assert_ne!(sandbox_net_ns(&run), host_net_ns());

    // Under an operator's `none`, the team may not widen to the proxy either.
    write(&operator(&env), "[network]\nmode = \"none\"\n");
    write(&team(&env), "[network]\nmode = \"proxy\"\n");
    let made = env.run_in(&repo, ["new", "still none"]).ok();
    warned_once(
        &made,
        &team(&env),
        "network.mode",
        "the operator config's network mode is none",
    );
    let record = fs::read_to_string(env.loop_dir(made.stdout.trim()).join("loop.toml")).unwrap();
    assert!(record.contains("network = \"none\""), "{record}");
}

/// A server on 127.0.0.1 that answers every request with its name and counts the
/// connections it gets.
struct Web {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Web {
    fn start() -> Web {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let seen = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                seen.fetch_add(1, Ordering::SeqCst);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let body = "reached\n";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Web { port, connections }
    }

    fn seen(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Operator config pinning `names` to 127.0.0.1 and allowing that range, plus `extra`.
fn pinned(names: &[&str], extra: &str) -> String {
    let mut s = format!("{extra}\n[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n[network.hosts]\n");
    for n in names {
        s.push_str(&format!("\"{n}\" = \"127.0.0.1\"\n"));
    }
    s
}

/// `curl` inside the loop's sandbox, through the proxy: `NAME CODE BODY` per name.
fn fetch(env: &TestEnv, id: &str, port: u16, names: &[&str]) -> Run {
    let script = "for n in \"$@\"; do code=$(curl -s -o /tmp/body -w '%{http_code}' http://$n:$PORT/); echo \"$n $code $(cat /tmp/body)\"; done";
    let mut args = vec!["run", id, "--", "env"];
    let port = format!("PORT={port}");
    args.extend([port.as_str(), "sh", "-c", script, "sh"]);
    args.extend_from_slice(names);
    env.run(&args)
}

fn violations(env: &TestEnv, id: &str) -> Vec<serde_json::Value> {
    fs::read_to_string(env.loop_dir(id).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "violation")
        .collect()
}

#[test]
fn attack_36_the_team_layer_cannot_allow_a_public_suffix() {
    let names = ["something.com", "api.example.com", "shop.co.uk"];
    let (env, repo) = setup(&pinned(&names, ""));
    let web = Web::start();
    let team = team(&env);
    write(
        &team,
        "[network]\nallow_domains = [\"*.com\", \"*.example.com\"]\n",
    );
    let profile = env.profile_path("default");
    write(&profile, "[network]\nallow_domains = [\"*.co.uk\"]\n");
    let id = env.new_loop(&repo, "domains");

    let run = fetch(&env, &id, web.port, &["something.com", "shop.co.uk"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    warned_once(
        &run,
        &team,
        "network.allow_domains",
        "*.com is not under a registrable domain",
    );
    warned_once(
        &run,
        &profile,
        "network.allow_domains",
        "*.co.uk is not under a registrable domain",
    );
    run.stdout_has("something.com 403 ")
        .stdout_has("shop.co.uk 403 ");
    assert!(!run.stdout.contains("reached"), "{}", run.stdout);
    assert_eq!(web.seen(), 0, "the server was reached");
    for target in ["something.com", "shop.co.uk"] {
        let target = format!("{target}:{}", web.port);
        assert!(
            violations(&env, &id)
                .iter()
                .any(|v| v["target"] == target.as_str() && v["rule"] == "allowlist"),
            "no violation event for {target}: {:?}",
            violations(&env, &id)
        );
    }
    // `show --net` does not list them either.
    let show = env.run(["show", &id, "--net"]).ok();
    assert!(
        !show.stdout.lines().any(|l| l.starts_with("*.com ")),
        "{}",
        show.stdout
    );
    assert!(
        !show.stdout.lines().any(|l| l.starts_with("*.co.uk ")),
        "{}",
        show.stdout
    );

    // Positive twin: the entry under a registrable domain, from the same file, works.
    let run = fetch(&env, &id, web.port, &["api.example.com"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout_has("api.example.com 200 reached\n");
    assert_eq!(web.seen(), 1);

    // `config set` refuses the public suffix in the team layer, and takes the other.
    env.run([
        "config",
        "set",
        "--team",
        "network.allow_domains",
        "[\"*.co.uk\"]",
    ])
    .fails(2)
    .stderr_has("*.co.uk is not under a registrable domain");
    env.run([
        "config",
        "set",
        "--team",
        "network.allow_domains",
        "[\"*.example.co.uk\"]",
    ])
    .ok();
}

#[test]
fn the_operator_may_allow_a_public_suffix() {
    let names = ["something.com"];
    let (env, repo) = setup(&pinned(&names, ""));
    let web = Web::start();
    let text = fs::read_to_string(operator(&env)).unwrap();
    write(
        &operator(&env),
        &text.replace("[network]\n", "[network]\nallow_domains = [\"*.com\"]\n"),
    );
    let id = env.new_loop(&repo, "operator domains");
    let run = fetch(&env, &id, web.port, &["something.com"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("warning:"), "{}", run.stderr);
    run.stdout_has("something.com 200 reached\n");
    assert_eq!(web.seen(), 1);
}

/// Runs `git loop run ID -- true` where no cgroup can be written and rlimits do not bind
/// (root), so a run's limits cannot be enforced: every cgroup hierarchy is remounted
/// read-only in a mount namespace of the test's own. As another user, a user namespace
/// makes the test root there.
fn run_where_limits_cannot_be_enforced(env: &TestEnv, id: &str) -> Run {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = Command::new("unshare");
    if !root {
        cmd.args(["--user", "--map-root-user"]);
    }
    cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "for m in $(awk '$3 == \"cgroup\" || $3 == \"cgroup2\" {print $2}' /proc/self/mounts); do \
               mount -o remount,bind,ro \"$m\" || exit 99; \
             done; exec \"$@\"",
        )
        .args(["sh", crate::common::BIN, "run", id, "--", "true"])
        .env_clear()
        .envs(env.envs())
        .current_dir(&env.root);
    let out = cmd.output().expect("start unshare");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_ne!(
        run.code, 99,
        "cannot remount the cgroups read-only:\n{}",
        run.stderr
    );
    run
}

#[test]
fn attack_36_a_team_profile_cannot_make_limits_best_effort() {
    let (env, repo) = setup("");
    let id = env.new_loop(&repo, "limits");
    // Without any best effort, such a machine refuses the run (the baseline).
    run_where_limits_cannot_be_enforced(&env, &id)
        .fails(3)
        .stderr_has("the sandbox's limits cannot be enforced here");

    let profile = env.profile_path("default");
    for body in [
        "limits = \"best-effort\"\n",
        "[limits]\npids = 256\nenforce = \"best-effort\"\n",
    ] {
        write(&profile, body);
        let run = run_where_limits_cannot_be_enforced(&env, &id);
        let key = if body.starts_with("limits") {
            "limits"
        } else {
            "limits.enforce"
        };
        warned_once(
            &run,
            &profile,
            key,
            "only the operator config may let a sandbox run without enforced limits",
        );
        run.fails(3)
            .stderr_has("the sandbox's limits cannot be enforced here")
            .stderr_has("hint: or set `[limits] enforce = \"best-effort\"` in the operator config");
    }
    // The team config is held to the same rule.
    fs::remove_file(&profile).unwrap();
    let team = team(&env);
    write(&team, "[limits]\nenforce = \"best-effort\"\n");
    let run = run_where_limits_cannot_be_enforced(&env, &id);
    warned_once(&run, &team, "limits.enforce", "without enforced limits");
    run.fails(3);
    env.run(["config", "set", "--team", "limits.enforce", "best-effort"])
        .fails(2)
        .stderr_has("may only be set in the operator config");
    // Nothing ran: no start event was recorded.
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap_or_default();
    assert!(!events.contains("\"start\""), "{events}");
}

#[test]
fn the_operator_may_make_limits_best_effort_and_the_team_may_narrow_it_back() {
    let (env, repo) = setup("[limits]\nenforce = \"best-effort\"\n");
    let id = env.new_loop(&repo, "limits");
    let run = run_where_limits_cannot_be_enforced(&env, &id).ok();
    run.stderr_has("· NO LIMITS (best-effort)");
    let log = env.run(["log", &id, "--json"]).ok().json();
    assert_eq!(log[0]["limits"], "none", "{log}");
    // Where the limits can be enforced, they are, best effort or not.
    let run = env.run(["run", &id, "--", "true"]).ok();
    assert!(!run.stderr.contains("NO LIMITS"), "{}", run.stderr);

    // A team profile (or the team config) that asks for strict limits narrows it back.
    let profile = env.profile_path("default");
    write(&profile, "[limits]\nenforce = \"strict\"\n");
    run_where_limits_cannot_be_enforced(&env, &id)
        .fails(3)
        .stderr_has("the sandbox's limits cannot be enforced here");
    fs::remove_file(&profile).unwrap();
    write(&team(&env), "[limits]\nenforce = \"strict\"\n");
    let run = run_where_limits_cannot_be_enforced(&env, &id);
    assert!(!run.stderr.contains("warning:"), "{}", run.stderr);
    run.fails(3);
}

#[test]
fn attack_36_other_layers_cannot_add_mounts_ranges_pins_or_turn_the_sandbox_off() {
    let (env, repo) = setup("");
    let secret = env.root.join("host-secret");
    fs::create_dir_all(&secret).unwrap();
    fs::write(secret.join("key"), "SECRET-ON-THE-HOST\n").unwrap();
    let team = team(&env);
    write(
        &team,
        &format!(
            "[sandbox]\nbackend = \"none\"\n\n[network]\nallow_cidrs = [\"0.0.0.0/0\"]\n\n[network.hosts]\n\"evil.test\" = \"127.0.0.1\"\n\n[[mounts]]\npath = \"{}\"\nmode = \"rw\"\n",
            secret.display()
        ),
    );
    let id = env.new_loop(&repo, "more of the host");
    let run = env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        &format!("cat {}/key 2>&1; echo done", secret.display()),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stderr_has("git-loop: sandbox bwrap · net proxy (");
    assert!(!run.stdout.contains("SECRET-ON-THE-HOST"), "{}", run.stdout);
    for (key, why) in [
        (
            "sandbox.backend",
            "only the operator config may turn the sandbox off",
        ),
        (
            "network.allow_cidrs",
            "only the operator config may widen the addresses",
        ),
        (
            "network.hosts",
            "only the operator config may widen the addresses",
        ),
        ("mounts", "only the operator config may add host mounts"),
    ] {
        warned_once(&run, &team, key, why);
    }
    let show = env.run(["show", &id, "--net"]).ok();
    assert!(!show.stdout.contains("evil.test"), "{}", show.stdout);
    assert!(!show.stdout.contains("0.0.0.0/0"), "{}", show.stdout);

    // Positive twin: the operator's mount is there.
    write(
        &operator(&env),
        &format!("[[mounts]]\npath = \"{}\"\n", secret.display()),
    );
    fs::remove_file(&team).unwrap();
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--",
            "cat",
            &format!("{}/key", secret.display()),
        ])
        .ok();
    assert_eq!(run.stdout, "SECRET-ON-THE-HOST\n");
}
