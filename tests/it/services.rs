//! A live session's services and start hook (profile `[services.NAME]`, `start`; DESIGN
//! 10): real PostgreSQL and Redis started in the loop's session, reached by commands that
//! join it on the loop's loopback and through their unix sockets in the session's /tmp;
//! `down` stops them and the next `up` finds their data; a service that is not ready in
//! time fails `up` with its log, and nothing of the session is left.
//!
//! The ports inside are fixed: each session has a network namespace of its own, so no two
//! tests (nor the host) share them.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::common::netns::require;
use crate::common::TestEnv;

/// The folder of the installed PostgreSQL's server programs.
fn postgres_bin() -> PathBuf {
    let found = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .find(|b| b.join("postgres").is_file());
    found.unwrap_or_else(|| {
        panic!(
            "PostgreSQL is needed for this test: sudo apt-get install postgresql (or run .ci/run)"
        )
    })
}

fn supervisor_pid(env: &TestEnv, id: &str) -> u32 {
    let text = fs::read_to_string(env.ws.join("locks/live").join(format!("{id}.pid"))).unwrap();
    text.trim().parse().unwrap()
}

/// The processes whose command line names `needle` (the loop's own folders do).
fn processes_naming(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let zombie = fs::read_to_string(e.path().join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(true);
        if !zombie && String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

fn gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let alive = fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        if !alive {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn psql(env: &TestEnv, id: &str, host: &str, sql: &str) -> String {
    let run = env
        .run([
            "run", "-q", id, "--", "psql", "-X", "-A", "-t", "-h", host, "-U", "postgres", "-d",
            "postgres", "-c", sql,
        ])
        .ok();
    run.stdout.trim().to_string()
}

#[test]
fn postgres_runs_as_a_service_and_keeps_its_data_across_sessions() {
    require("psql", "postgresql-client");
    let bin = postgres_bin();
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "with a database");
    // PostgreSQL refuses to run as root, which the sandbox's user is where loops run as
    // root (CI): the profile's `uid` names another user inside.
    let b = bin.display();
    env.write_profile(&format!(
            r#"uid = 1000
[services.db]
command = ["sh", "-c", "test -d \"$HOME/pg\" || {b}/initdb -D \"$HOME/pg\" -U postgres -A trust >/dev/null && exec {b}/postgres -D \"$HOME/pg\" -k /tmp -h 127.0.0.1 -p 5432"]
ready = 5432
timeout = "90s"
"#
        ),
    );
    env.run(["up", &id]).ok().stderr_has("session is up");
    // On the loop's loopback, and through its socket in the session's /tmp.
    assert_eq!(
        psql(
            &env,
            &id,
            "127.0.0.1",
            "create table kept (x int); insert into kept values (42); select count(*) from kept"
        ),
        "CREATE TABLE\nINSERT 0 1\n1",
    );
    assert_eq!(psql(&env, &id, "/tmp", "select x from kept"), "42");
    env.run(["logs", &id, "db"])
        .ok()
        .stdout_has("database system is ready to accept connections");
    let home = env.loop_dir(&id).join("home/upper");
    let supervisor = supervisor_pid(&env, &id);
    let postgres = processes_naming("postgres")
        .into_iter()
        .filter(|p| under(*p, supervisor))
        .collect::<Vec<_>>();
    // The postmaster and its helpers (checkpointer, writers, ...).
    assert!(
        postgres.len() > 2,
        "no postgres under the session: {postgres:?}"
    );
    env.run(["down", &id]).ok().stderr_has("session is down");
    for pid in postgres.iter().chain([&supervisor]) {
        assert!(gone(*pid), "process {pid} outlived down");
    }
    // It was stopped, not killed: its shutdown is in its log.
    let log = env.run(["logs", &id, "db"]).ok().stdout;
    assert!(log.contains("database system is shut down"), "{log}");
    assert!(home.join("pg/PG_VERSION").is_file());

    env.run(["up", &id]).ok();
    assert_eq!(psql(&env, &id, "127.0.0.1", "select x from kept"), "42");
    env.run(["down", &id]).ok();
}

/// Whether `pid` descends from `root` (by the parent links in /proc).
fn under(pid: u32, root: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == root {
            return true;
        }
        let Ok(stat) = fs::read_to_string(format!("/proc/{p}/stat")) else {
            return false;
        };
        let Some(ppid) = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
        else {
            return false;
        };
        if ppid <= 1 {
            return false;
        }
        p = ppid;
    }
    false
}

#[test]
fn redis_runs_as_a_service_and_start_runs_after_it() {
    require("redis-server", "redis-server");
    require("redis-cli", "redis-tools");
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "with redis");
    env.write_profile(r#"start = "redis-cli -s /tmp/redis.sock set started yes && echo start ran"
[services.cache]
command = ["redis-server", "--port", "6379", "--bind", "127.0.0.1", "--unixsocket", "/tmp/redis.sock", "--save", "", "--appendonly", "no"]
ready = ["redis-cli", "-s", "/tmp/redis.sock", "ping"]
[services.web]
command = ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"]
ready = 8000
env = { PYTHONUNBUFFERED = "1" }
"#,
    );
    env.run(["up", &id]).ok();
    let run = env
        .run([
            "run", "-q", &id, "--", "sh", "-c",
            "redis-cli -p 6379 get started; redis-cli -s /tmp/redis.sock set k v >/dev/null; redis-cli -p 6379 get k; curl -s -o /dev/null -w '%{http_code}\\n' --noproxy '*' http://127.0.0.1:8000/",
        ])
        .ok();
    assert_eq!(run.stdout, "yes\nv\n200\n");
    env.run(["logs", &id, "start"]).ok().stdout_has("start ran");
    env.run(["logs", &id, "web"]).ok().stdout_has("GET / HTTP");
    // Started in the order the profile writes them (cache before web), stopped in reverse.
    let events = fs::read_to_string(env.loop_dir(&id).join("events.jsonl")).unwrap();
    let ready: Vec<&str> = events
        .lines()
        .filter(|l| l.contains("\"state\":\"ready\""))
        .map(|l| if l.contains("cache") { "cache" } else { "web" })
        .collect();
    assert_eq!(ready, ["cache", "web"]);
    let log = env.run(["log", &id]).ok().stdout;
    assert!(
        log.contains("cache ready") && log.contains("the profile's start ended with code 0"),
        "{log}"
    );
    env.run(["down", &id]).ok();
    let stopped: Vec<&str> = fs::read_to_string(env.loop_dir(&id).join("events.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"state\":\"stopped\""))
        .map(|l| if l.contains("cache") { "cache" } else { "web" })
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    assert_eq!(stopped, ["web", "cache"]);
}

fn session_is_down(env: &TestEnv, id: &str) {
    let list = env.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["session"], false, "{list}");
    assert!(processes_naming(&format!("__supervise {id}")).is_empty());
}

#[test]
fn a_service_not_ready_in_time_fails_up_with_its_log_and_leaves_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "slow service");
    env.write_profile(
        r#"[services.first]
command = ["sleep", "1000"]
[services.slow]
command = ["sh", "-c", "echo warming up; printf 'bad \\033[2J news\\n' >&2; exec sleep 1000"]
ready = 4999
timeout = "2s"
"#,
    );
    let run = env.run(["up", &id]).fails(1);
    run.stderr_has("service slow was not ready within 2 s");
    run.stderr_has("warming up");
    // What the sandbox wrote reaches the terminal with its control characters visible.
    assert!(!run.stderr.contains('\x1b'), "{}", run.stderr);
    run.stderr_has(&format!("hint: the whole log: git loop logs {id} slow"));
    session_is_down(&env, &id);
    let shown = env.run(["logs", &id, "slow"]).ok().stdout;
    assert!(shown.contains("bad ") && !shown.contains('\x1b'), "{shown}");

    // A service that ends before it is ready fails at once, with its code.
    env.write_profile("[services.broken]\ncommand = [\"sh\", \"-c\", \"echo no config >&2; exit 3\"]\nready = 4999\n",
    );
    let run = env.run(["up", &id]).fails(1);
    run.stderr_has("service broken exited (code 3) before it was ready");
    run.stderr_has("no config");
    session_is_down(&env, &id);

    // A start hook that fails is up's failure too.
    env.write_profile("start = \"echo seeding; exit 4\"\n");
    let run = env.run(["up", &id]).fails(1);
    run.stderr_has("the profile's start failed (exit code 4)");
    run.stderr_has("seeding");
    session_is_down(&env, &id);

    // The positive twin: a service with no readiness check comes up.
    env.write_profile("[services.idle]\ncommand = [\"sleep\", \"1000\"]\n");
    env.run(["up", &id]).ok();
    env.run(["down", &id]).ok();
    env.run(["logs", &id, "nosuch"])
        .fails(1)
        .stderr_has("has no log of nosuch");
}

#[test]
fn a_bad_services_table_is_refused_with_its_line() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "bad profile");
    for (body, says) in [
        ("[services.db]\nready = 5432\n", "missing field `command`"),
        (
            "[services.db]\ncommand = [\"x\"]\nready = 0\n",
            "ready takes a port",
        ),
        (
            "[services.start]\ncommand = [\"x\"]\n",
            "not start or teardown",
        ),
        (
            "[services.db]\ncommand = [\"x\"]\nwhen = 1\n",
            "unknown field `when`",
        ),
        ("uid = 0\n", "uid takes a user id"),
    ] {
        env.write_profile(body);
        env.run(["up", &id]).fails(1).stderr_has(says);
    }
}

#[test]
fn teardown_runs_in_the_sandbox_before_rm_and_only_force_gets_past_its_failure() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "torn down");
    let other = env.new_loop(&repo, "fails to tear down");
    env.write_profile("teardown = \"echo tearing down in $(pwd)\"\n");
    let run = env.run(["rm", &id]).ok();
    // It ran inside: the working tree at its path in the sandbox.
    run.stderr_has(&format!("tearing down in /loopat/loop/{id}/workdir"));
    assert!(!env.loop_dir(&id).exists());

    env.write_profile("teardown = [\"sh\", \"-c\", \"echo bucket busy; exit 5\"]\n");
    let run = env.run(["rm", &other]).fails(1);
    run.stderr_has("the profile's teardown failed (exit 5)");
    run.stderr_has("bucket busy");
    run.stderr_has(&format!("git loop rm --force {other}"));
    assert!(env.loop_dir(&other).join("loop.toml").is_file());
    let run = env.run(["rm", "--force", &other]).ok();
    run.stderr_has("the profile's teardown failed (exit 5); removing the loop anyway (--force)");
    assert!(!env.loop_dir(&other).exists());
}

/// `list` and `show` (human and `--json`) give an up session's services: name, state,
/// whether ready, and where the log is; one that ends by itself after it was ready is
/// `exited` with its code (and an event says so); none once the session is down.
#[test]
fn list_and_show_give_the_services_of_an_up_session() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "services shown");
    env.write_profile(
        r#"[services.web]
command = ["python3", "-m", "http.server", "8000", "--bind", "127.0.0.1"]
ready = 8000
[services.once]
command = ["sh", "-c", "while [ ! -e /tmp/stop-once ]; do sleep 0.05; done; exit 7"]
"#,
    );
    let services = |env: &TestEnv| env.run(["list", "--json"]).ok().json()[0]["services"].clone();
    assert_eq!(services(&env), serde_json::json!([]));
    env.run(["up", &id]).ok();
    let log = |name: &str| env.loop_dir(&id).join(format!("logs/{name}.log"));
    for got in [
        services(&env),
        env.run(["show", &id, "--json"]).ok().json()["services"].clone(),
    ] {
        let got = got.as_array().unwrap().clone();
        assert_eq!(got.len(), 2, "{got:?}");
        for (s, name) in got.iter().zip(["web", "once"]) {
            assert_eq!(s["name"], name, "{s}");
            assert_eq!(s["state"], "ready", "{s}");
            assert_eq!(s["ready"], true, "{s}");
            assert_eq!(s["log"], log(name).display().to_string(), "{s}");
            assert!(s.get("code").is_none(), "{s}");
        }
    }
    let show = env.run(["show", &id]).ok();
    show.stdout_has(&format!(
        "service:    web ready (log {})",
        log("web").display()
    ));
    show.stdout_has(&format!(
        "service:    once ready (log {})",
        log("once").display()
    ));
    let list = env.run(["list"]).ok();
    list.stdout_has("up · 2 services ready");
    list.stdout_has(&format!(
        "{id}: service web ready (log {})",
        log("web").display()
    ));

    // A service that ends by itself says so, with its code; the other stays ready.
    env.run(["run", "-q", &id, "--", "touch", "/tmp/stop-once"])
        .ok();
    let until = Instant::now() + Duration::from_secs(30);
    while services(&env)[1]["state"] != "exited" && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let got = services(&env);
    assert_eq!(got[1]["state"], "exited", "{got}");
    assert_eq!(got[1]["code"], 7, "{got}");
    assert_eq!(got[1]["ready"], false, "{got}");
    assert_eq!(got[0]["state"], "ready", "{got}");
    env.run(["list"]).ok().stdout_has("up · once exited 7");
    env.run(["show", &id])
        .ok()
        .stdout_has("service:    once exited 7");
    env.run(["log", &id]).ok().stdout_has("once exited");

    env.run(["down", &id]).ok();
    assert_eq!(services(&env), serde_json::json!([]));
    assert!(!env.run(["show", &id]).ok().stdout.contains("service:"));
    assert!(!env.run(["list"]).ok().stdout.contains(": service "));
}
