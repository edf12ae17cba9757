//! `run`, `shell`, `agent`, `log`, `show --mounts`, and failing closed (the demo: demo.rs).

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::common::{Run, TestEnv};

/// `git loop run -q ID -- sh -c SCRIPT`.
fn sh(env: &TestEnv, id: &str, script: &str) -> Run {
    env.run(["run", "-q", id, "--", "sh", "-c", script])
}

fn setup() -> (TestEnv, String) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "sandboxed");
    (env, id)
}

#[test]
fn run_passes_io_and_the_exit_code_and_imports_afterwards() {
    let (env, id) = setup();
    let run = env.run([
        "run",
        &id,
        "--",
        "sh",
        "-c",
        "pwd; echo out; echo err >&2; exit 7",
    ]);
    assert_eq!(run.code, 7, "{}", run.stderr);
    assert_eq!(run.stdout, format!("/loopat/loop/{id}/workdir\nout\n"));
    assert!(
        run.stderr
            .starts_with("git-loop: sandbox bwrap · net proxy ("),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("mode work"), "{}", run.stderr);
    assert!(run.stderr.contains("err\n"));

    // -q drops the status line for bwrap.
    let quiet = env.run(["run", "-q", &id, "--", "true"]).ok();
    assert_eq!(quiet.stderr, "");

    // Work committed inside reaches the origin when the run ends.
    let script = "echo x > new.c && git add new.c && git commit -qm inside && git rev-parse HEAD";
    let run = env.run(["run", "-q", &id, "--", "sh", "-c", script]).ok();
    let tip = run.stdout.trim();
    assert_eq!(
        env.rev(&env.root.join("app"), &format!("loop/{id}"))
            .unwrap(),
        tip
    );

    let log = env.run(["log", &id, "--json"]).ok().json();
    let events = log.as_array().unwrap();
    assert_eq!(events.len(), 6);
    assert_eq!(events[0]["kind"], "start");
    assert_eq!(events[0]["backend"], "bwrap");
    assert_eq!(events[0]["mode"], "work");
    assert_eq!(events[0]["net"], "proxy");
    assert_eq!(events[1]["kind"], "exit");
    assert_eq!(events[1]["code"], 7);
    env.run(["log", &id]).ok().stdout_has("code 7 after");
}

#[test]
fn review_mode_reads_but_changes_nothing() {
    let (env, id) = setup();
    let run = env.run(["run", &id, "--mode", "review", "--", "sh", "-c",
        "cat main.c >/dev/null && echo read; touch x 2>/dev/null || echo ro-workdir; touch /loopat/context/notes/x 2>/dev/null || echo ro-notes; touch ~/ok && echo home-rw; touch /tmp/ok && echo tmp-rw"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "read\nro-workdir\nro-notes\nhome-rw\ntmp-rw\n");
    assert!(run.stderr.contains("mode review"));
    assert!(!env.workdir(&id).join("x").exists());
}

/// The interface names of a `/proc/net/dev` listing.
fn interfaces(dev: &str) -> Vec<&str> {
    dev.lines()
        .skip(2)
        .map(|l| l.split(':').next().unwrap().trim())
        .collect()
}

#[test]
fn net_none_has_loopback_only_and_net_host_shares() {
    let (env, id) = setup();
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--net",
            "none",
            "--",
            "cat",
            "/proc/net/dev",
        ])
        .ok();
    assert_eq!(interfaces(&run.stdout), vec!["lo"]);
    let host_ifaces = fs::read_to_string("/proc/net/dev").unwrap().lines().count();
    let run = env
        .run(["run", &id, "--net", "host", "--", "cat", "/proc/net/dev"])
        .ok();
    assert_eq!(run.stdout.lines().count(), host_ifaces);
    run.stderr_has("net host");
}

#[test]
fn net_proxy_has_loopback_only_with_the_two_proxy_ports_listening() {
    let (env, id) = setup();
    // The spawner made this namespace: the loopback is up (with 127.0.0.1 and ::1), no
    // other interface exists, and the only sockets are the proxy's two listeners.
    let run = sh(&env, &id, "cat /proc/net/dev; echo TCP; cat /proc/net/tcp /proc/net/tcp6; echo UP; cat /proc/net/if_inet6")
        .ok();
    let (dev, rest) = run.stdout.split_once("TCP\n").unwrap();
    assert_eq!(interfaces(dev), vec!["lo"]);
    let (tcp, up) = rest.split_once("UP\n").unwrap();
    let mut sockets: Vec<(String, String)> = tcp
        .lines()
        .filter(|l| !l.trim_start().starts_with("sl"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[1].to_string(), f[3].to_string())
        })
        .collect();
    sockets.sort();
    // 127.0.0.1:1080 and 127.0.0.1:3128, both listening (state 0A).
    assert_eq!(
        sockets,
        vec![
            ("0100007F:0438".to_string(), "0A".to_string()),
            ("0100007F:0C38".to_string(), "0A".to_string()),
        ],
        "{}",
        run.stdout
    );
    // ::1 is there only once the loopback is up.
    assert!(
        up.lines()
            .any(|l| l.starts_with("00000000000000000000000000000001") && l.ends_with("lo")),
        "lo is not up: {up}"
    );
    // Connections in it (the proxy's hop to the command included) are not paced, whatever
    // the host's default congestion control; the host's own setting is left as it was.
    let host_cc = fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap();
    env.run([
        "run",
        "-q",
        &id,
        "--",
        "cat",
        "/proc/sys/net/ipv4/tcp_congestion_control",
    ])
    .ok()
    .stdout_has("reno");
    assert_eq!(
        fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap(),
        host_cc
    );
}

#[test]
fn home_persists_across_runs_of_a_loop_and_not_across_loops() {
    let (env, id) = setup();
    sh(&env, &id, "echo kept > ~/.state").ok();
    env.run(["run", "-q", &id, "--", "cat", "/home/tester/.state"])
        .ok()
        .stdout_has("kept");
    sh(&env, &id, "echo again >> ~/.state").ok();
    assert_eq!(
        fs::read_to_string(env.loop_dir(&id).join("home/upper/.state")).unwrap(),
        "kept\nagain\n"
    );
    // With an empty sandbox-home-skel/ there is nothing to lay under the loop's own
    // layer: it is $HOME itself, and no overlay was ever mounted on it.
    assert!(!env.loop_dir(&id).join("home/work/work").exists());
    let row = env.run(["show", &id, "--mounts"]).ok();
    let home = row
        .stdout
        .lines()
        .find(|l| l.starts_with("/home/tester "))
        .unwrap();
    assert!(
        home.contains("home/upper (") && home.contains("sandbox-home-skel is empty)"),
        "{home}"
    );
    let other = env.new_loop(&env.root.join("app"), "other");
    let run = sh(&env, &other, "test -e ~/.state && echo leak || echo clean").ok();
    assert_eq!(run.stdout, "clean\n");
}

#[test]
fn home_is_an_overlay_of_the_skeleton_and_stays_one() {
    let (env, id) = setup();
    let skel = env.ws.join("sandbox-home-skel");
    fs::write(skel.join(".profile"), "from the skeleton\n").unwrap();
    fs::write(skel.join(".gone"), "deleted inside\n").unwrap();
    let run = sh(
        &env,
        &id,
        "cat ~/.profile && rm ~/.gone && echo mine > ~/.state",
    )
    .ok();
    assert_eq!(run.stdout, "from the skeleton\n");
    // The skeleton is the lower layer: nothing inside changes it.
    assert_eq!(
        fs::read_to_string(skel.join(".gone")).unwrap(),
        "deleted inside\n"
    );
    let upper = env.loop_dir(&id).join("home/upper");
    assert_eq!(fs::read_to_string(upper.join(".state")).unwrap(), "mine\n");
    assert!(!upper.join(".profile").exists());
    // The overlay is volatile (not synced as the sandbox ends); the marker it leaves is
    // cleared by the next run, which mounts it again.
    let marker = env.loop_dir(&id).join("home/work/work/incompat/volatile");
    assert!(fs::symlink_metadata(&marker).is_ok(), "no volatile overlay");
    let row = env.run(["show", &id, "--mounts"]).ok();
    assert!(row.stdout.contains("overlay: "), "{}", row.stdout);
    // The overlay is mounted only in git-loop's own namespace: the host folder stays empty.
    assert_eq!(
        fs::read_dir(env.loop_dir(&id).join("home/merged"))
            .unwrap()
            .count(),
        0
    );

    // With the skeleton emptied, this loop's $HOME stays an overlay: its upper layer
    // holds the whiteout of ~/.gone, which only an overlay reads as "deleted".
    fs::remove_file(skel.join(".profile")).unwrap();
    fs::remove_file(skel.join(".gone")).unwrap();
    let run = sh(
        &env,
        &id,
        "ls -A ~; test -e ~/.gone && echo visible || echo gone",
    )
    .ok();
    assert_eq!(run.stdout, ".state\ngone\n");
    // A loop whose $HOME never was an overlay gets its own layer bound directly.
    let other = env.new_loop(&env.root.join("app"), "other");
    env.run(["run", "-q", &other, "--", "true"]).ok();
    assert!(!env.loop_dir(&other).join("home/work/work").exists());
}

#[test]
fn print_argv_prints_and_runs_nothing() {
    let (env, id) = setup();
    let run = env
        .run(["run", &id, "--print-argv", "--", "touch", "/loopat/loop/x"])
        .ok();
    // The default network mode keeps the network namespace the spawner made for the
    // proxy, and bwrap runs the command itself.
    assert!(
        run.stdout
            .contains("bwrap --unshare-all --unshare-user --share-net --disable-userns"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "--chdir /loopat/loop/{id}/workdir -- /loopat/.git-loop/git-loop __init --watch-writes "
        )) && run.stdout.contains(" --report-fd ")
            && run.stdout.ends_with(" -- touch /loopat/loop/x\n"),
        "{}",
        run.stdout
    );
    let none = env
        .run([
            "run",
            &id,
            "--net",
            "none",
            "--print-argv",
            "--",
            "touch",
            "/loopat/loop/x",
        ])
        .ok();
    assert!(
        none.stdout.contains(&format!(
            "--chdir /loopat/loop/{id}/workdir -- /loopat/.git-loop/git-loop __init --watch-writes "
        )) && none.stdout.ends_with(" -- touch /loopat/loop/x\n"),
        "{}",
        none.stdout
    );
    assert!(
        none.stdout
            .contains("bwrap --unshare-all --unshare-user --disable-userns"),
        "{}",
        none.stdout
    );
    assert!(!env.ws.join(format!("loops/{id}/events.jsonl")).exists());
}

#[test]
fn without_bwrap_the_run_refuses_with_exit_3() {
    let (env, id) = setup();
    let empty = env.root.join("empty-bin");
    fs::create_dir(&empty).unwrap();
    // git must stay reachable for the rest of git-loop; only bwrap is missing.
    std::os::unix::fs::symlink(which("git"), empty.join("git")).unwrap();
    for backend in [None, Some("auto"), Some("bwrap")] {
        let mut cmd = env.command();
        cmd.env("PATH", &empty)
            .current_dir(&env.root)
            .args(["run", &id]);
        if let Some(b) = backend {
            cmd.args(["--backend", b]);
        }
        let out = cmd.args(["--", "true"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        assert!(
            stderr.contains("error: the sandbox is unavailable: bwrap"),
            "{stderr}"
        );
        assert!(
            stderr.contains("hint: bwrap: sudo apt-get install bubblewrap"),
            "{stderr}"
        );
        if backend != Some("bwrap") {
            assert!(stderr.contains("--backend none"), "{stderr}");
        }
    }
    assert!(
        !env.ws.join(format!("loops/{id}/events.jsonl")).exists(),
        "nothing ran"
    );
}

#[test]
fn backend_none_runs_on_the_host_and_always_says_so() {
    let (env, id) = setup();
    let run = env
        .command()
        .current_dir(&env.root)
        .env("GITHUB_TOKEN", "ghp_hostsecret")
        .args([
            "run",
            "-q",
            &id,
            "--backend",
            "none",
            "--",
            "sh",
            "-c",
            "pwd; env",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("NO SANDBOX (--backend none)"),
        "the warning survives -q: {stderr}"
    );
    assert!(
        stdout.starts_with(&format!("{}\n", env.workdir(&id).display())),
        "{stdout}"
    );
    assert!(
        !stdout.contains("ghp_hostsecret"),
        "the environment is sanitized even without a sandbox"
    );
    let log = env.run(["log", &id, "--json"]).ok().json();
    assert_eq!(log[0]["backend"], "none");
}

#[test]
fn profile_limits_are_read_and_core_dumps_are_off() {
    let (env, id) = setup();
    let profile = env.write_profile("[limits]\nmemory = \"lots\"\n");
    env.run(["run", &id, "--", "true"])
        .fails(1)
        .stderr_has("is not a size");
    fs::write(&profile, "[limits]\npids = 100\nmemory = \"512M\"\n").unwrap();
    let run = sh(
        &env,
        &id,
        "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null; ulimit -c",
    )
    .ok();
    assert!(
        run.stdout.ends_with("0\n"),
        "core dumps are off: {}",
        run.stdout
    );
}

#[test]
fn show_mounts_lists_the_view() {
    let (env, id) = setup();
    let run = env.run(["show", &id, "--mounts"]).ok();
    for (inside, mode) in [
        (format!("/loopat/loop/{id}/workdir"), "rw"),
        ("/loopat/context/knowledge".to_string(), "ro"),
        ("/loopat/context/notes".to_string(), "rw"),
        ("/loopat/context/repos/app/.git".to_string(), "ro"),
        (format!("/loopat/loop/{id}/workdir/.git/config"), "ro"),
        (format!("/loopat/loop/{id}/workdir/.git/hooks"), "ro,"),
        ("/".to_string(), "ro"),
        ("/loopat/context/personal/.git".to_string(), "ro"),
        ("/loopat/context/personal/.loopat".to_string(), "ro,"),
        ("/home/tester".to_string(), "rw"),
        ("/usr".to_string(), "ro"),
        ("/tmp".to_string(), "rw"),
    ] {
        assert!(
            run.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{inside} "))
                    && l.split_whitespace().nth(1) == Some(mode)),
            "{inside} {mode} missing:\n{}",
            run.stdout
        );
    }
    let review = env
        .run(["show", &id, "--mounts", "--mode", "review", "--json"])
        .ok()
        .json();
    let workdir = review
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["inside"] == format!("/loopat/loop/{id}/workdir"))
        .unwrap();
    assert_eq!(workdir["mode"], "ro");
    // The origin's working tree is not part of the view, only its git folder.
    assert!(!run
        .stdout
        .lines()
        .any(|l| l.starts_with("/loopat/context/repos/app ")));
}

#[test]
fn agent_writes_the_prompt_layers_and_runs_the_configured_command() {
    let (env, id) = setup();
    // A stand-in agent installed outside the system folders: its folder is bound read-only.
    let bin = env.root.join("agent-bin");
    fs::create_dir(&bin).unwrap();
    let agent = bin.join("fake-agent");
    fs::write(&agent, "#!/bin/sh\necho \"agent args: $*\"\necho \"config: $CLAUDE_CONFIG_DIR\"\nhead -n 1 \"$CLAUDE_CONFIG_DIR/CLAUDE.md\"\ngrep -- '- loop id' \"$CLAUDE_CONFIG_DIR/CLAUDE.md\"\ngrep -c 'Team rule' \"$CLAUDE_CONFIG_DIR/CLAUDE.md\"\ncat \"$CLAUDE_CONFIG_DIR/settings.json\"\necho tamper > \"$CLAUDE_CONFIG_DIR/CLAUDE.md\" 2>/dev/null || echo doctrine-ro\n").unwrap();
    fs::set_permissions(&agent, fs::Permissions::from_mode(0o755)).unwrap();
    let team = env.ws.join("context/knowledge/.loopat/claude/CLAUDE.md");
    fs::create_dir_all(team.parent().unwrap()).unwrap();
    fs::write(&team, "Team rule: write tests first.\n").unwrap();
    env.run([
        "config",
        "set",
        "--operator",
        "agent.command",
        &format!("[\"{}\", \"--fixed\"]", agent.display()),
    ])
    .ok();
    let run = env.run(["agent", &id, "--", "--extra"]).ok();
    run.stdout_has("agent args: --fixed --extra")
        .stdout_has(&format!("config: /loopat/loop/{id}/.claude"))
        .stdout_has("# Working in a git loop")
        .stdout_has(&format!("- loop id: {id}"))
        .stdout_has("\"autoMemoryDirectory\": \"/loopat/context/personal/memory\"")
        .stdout_has("doctrine-ro");
    assert!(
        run.stdout.contains("\n1\n"),
        "the team layer is in: {}",
        run.stdout
    );

    env.run([
        "config",
        "set",
        "--operator",
        "agent.command",
        "[\"no-such-agent-binary\"]",
    ])
    .ok();
    env.run(["agent", &id])
        .fails(1)
        .stderr_has("'no-such-agent-binary' is not installed")
        .stderr_has("agent.command");
}

fn which(name: &str) -> std::path::PathBuf {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .map(|d| std::path::Path::new(d).join(name))
        .find(|p| p.is_file())
        .unwrap()
}

/// `git loop shell` in a real terminal: the shell is interactive, job control works, and
/// the terminal's size reaches it.
#[test]
fn shell_has_a_working_terminal() {
    let (env, id) = setup();
    let driver = r#"
import os, pty, sys, time, select, struct, fcntl, termios
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "shell", sys.argv[2]])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
out = b""
def pump(seconds):
    global out
    end = time.time() + seconds
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            out += chunk
    return True
pump(2)
os.write(fd, b"sleep 30 &\n")
pump(1)
os.write(fd, b"jobs; echo SIZE-$(stty size); echo TTY-$(tty); kill %1; exit\n")
pump(10)
os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
"#;
    let mut cmd = std::process::Command::new("python3");
    cmd.env_clear()
        .envs(env.envs())
        .env("SHELL", "/bin/bash")
        .current_dir(&env.root);
    let out = cmd
        .args(["-c", driver, crate::common::BIN, &id])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Running") && text.contains("sleep 30"),
        "job control: {text}"
    );
    assert!(text.contains("SIZE-33 101"), "terminal size: {text}");
    assert!(
        text.contains("TTY-/dev/") && !text.contains("not a tty"),
        "a terminal inside: {text}"
    );
    assert!(!text.contains("no job control"), "{text}");
}

#[test]
fn grants_add_a_host_path_and_once_grants_are_spent() {
    let (env, id) = setup();
    let shared = env.root.join("shared");
    fs::create_dir(&shared).unwrap();
    fs::write(shared.join("data.txt"), "data\n").unwrap();
    let inside = shared.display().to_string();
    env.run(["grant", &id, "--ro", &inside]).ok();
    env.run(["show", &id, "--mounts"]).ok().stdout_has(&inside);
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--",
            "sh",
            "-c",
            &format!("cat {inside}/data.txt; touch {inside}/x 2>/dev/null || echo ro"),
        ])
        .ok();
    assert_eq!(run.stdout, "data\nro\n");
    env.run(["grant", &id, "--revoke", &inside]).ok();
    env.run(["grant", &id, "--rw", &inside, "--once"]).ok();
    env.run(["run", "-q", &id, "--", "touch", &format!("{inside}/made")])
        .ok();
    assert!(shared.join("made").exists());
    let run = env
        .run([
            "run",
            "-q",
            &id,
            "--",
            "sh",
            "-c",
            &format!("test -e {inside} && echo visible || echo gone"),
        ])
        .ok();
    assert_eq!(run.stdout, "gone\n");
    // The workspace itself, or the folder of the identity, cannot be granted.
    env.run(["grant", &id, "--rw", env.ws.to_str().unwrap()])
        .fails(2)
        .stderr_has("workspace");
    env.run(["grant", &id, "--ro", env.root.to_str().unwrap()])
        .fails(2);
    env.run(["grant", &id, "--ro", "/nonexistent"])
        .fails(2)
        .stderr_has("does not exist");
}

#[test]
fn the_profiles_setup_runs_once_in_the_new_loops_sandbox() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.run(["init"]).ok();
    let profile = env.write_profile("setup = \"pwd > setup.out; echo installing\"\n");
    let run = env.run_in(&repo, ["new", "with setup"]).ok();
    let id = run.stdout.trim().to_string();
    run.stderr_has("setup: running")
        .stderr_has("installing")
        .stderr_has("setup: done");
    assert_eq!(
        fs::read_to_string(env.workdir(&id).join("setup.out")).unwrap(),
        format!("/loopat/loop/{id}/workdir\n")
    );
    fs::write(&profile, "setup = [\"false\"]\n").unwrap();
    let run = env.run_in(&repo, ["new", "failing setup", "--json"]).ok();
    run.stderr_has("setup failed (exit 1); the loop is usable");
    assert!(env.loop_dir(run.json()["id"].as_str().unwrap()).is_dir());
}

#[test]
fn a_seeded_chat_is_read_only_inside() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let chat = env.root.join("chat.md");
    fs::write(&chat, "user: fix the login bug\n").unwrap();
    let id = env
        .run_in(
            &repo,
            ["new", "continue", "--seed-chat", chat.to_str().unwrap()],
        )
        .ok()
        .stdout
        .trim()
        .to_string();
    let run = env.run(["run", "-q", &id, "--net", "none", "--", "sh", "-c",
        &format!("cat /loopat/context/chat/{id}/chat.md; echo x >> /loopat/context/chat/{id}/chat.md 2>/dev/null || echo ro")]).ok();
    assert_eq!(run.stdout, "user: fix the login bug\nro\n");
    env.run(["show", &id, "--mounts"])
        .ok()
        .stdout_has(&format!("/loopat/context/chat/{id}"));
    env.run_in(&repo, ["new", "x", "--seed-chat", "/nonexistent"])
        .fails(2)
        .stderr_has("no such file");
}

#[test]
fn the_sandbox_may_run_on_every_cpu_its_caller_may() {
    // git-loop starts bwrap on its own CPU (spawn.rs, `StartHere`): the sandbox must get
    // the whole mask back, never stay pinned to that one CPU.
    let (env, id) = setup();
    let allowed = |status: &str| {
        status
            .lines()
            .find(|l| l.starts_with("Cpus_allowed_list:"))
            .map(|l| l.split_whitespace().nth(1).unwrap_or_default().to_string())
            .expect("Cpus_allowed_list in /proc/<pid>/status")
    };
    let ours = allowed(&fs::read_to_string("/proc/self/status").unwrap());
    let run = sh(&env, &id, "cat /proc/self/status").ok();
    assert_eq!(allowed(&run.stdout), ours, "{}", run.stdout);
}

/// Every mount of the view stands once: a mount laid below a folder bwrap binds (the loop
/// repository's pinned `.git` and the read-only config, hooks and commondir inside it),
/// which reaches the sandbox by propagation once bwrap has made its own, is not left a
/// second time, hidden below another; and once the command runs nothing propagates into
/// the view any more (no laid mount is a shared mount or a slave of one). Twin: the laid
/// mounts are where the view says, the read-only ones refuse a write, and the working
/// tree and `.git` take one.
#[test]
fn each_mount_of_the_view_stands_once() {
    let (env, id) = setup();
    let run = sh(
        &env,
        &id,
        "cat /proc/self/mountinfo; \
         echo x >> .git/config 2>/dev/null && echo CONFIG-WRITTEN; \
         echo x > new.txt && echo tree-written; \
         echo x > .git/scratch && echo git-written",
    )
    .ok();
    let points: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let twice: Vec<&&str> = points.iter().filter(|p| !seen.insert(**p)).collect();
    assert!(twice.is_empty(), "mounted twice: {twice:?}\n{}", run.stdout);
    let workdir = format!("/loopat/loop/{id}/workdir");
    for laid in [".git", ".git/config", ".git/hooks", ".git/commondir"] {
        let at = format!("{workdir}/{laid}");
        let line = run
            .stdout
            .lines()
            .find(|l| l.split(' ').nth(4) == Some(at.as_str()));
        let Some(line) = line else {
            panic!("{at} missing:\n{}", run.stdout)
        };
        // The optional fields, between the mount options and ` - `.
        let optional = line.split(" - ").next().unwrap_or_default();
        assert!(
            !optional.contains("shared:") && !optional.contains("master:"),
            "{at} still takes or gives mounts: {line}"
        );
    }
    assert!(!run.stdout.contains("CONFIG-WRITTEN"), "{}", run.stdout);
    assert!(run.stdout.contains("tree-written"), "{}", run.stdout);
    assert!(run.stdout.contains("git-written"), "{}", run.stdout);
}

/// The process that lays the mounts bwrap does not make (src/sandbox/spawn.rs, `Layer`)
/// ending before it lays anything (killed, as the test build's `layer:gone` has it): the
/// sandbox's init finds its channel closed and runs nothing, the run ends at once (it used
/// to wait for ever on a copy of the channel the run held) with the sandbox's exit code 3
/// and one line naming what happened, and the log says the run never started. Twin: the
/// same run without it writes its file.
#[test]
fn a_layer_gone_before_it_lays_runs_nothing_and_says_so() {
    let (env, id) = setup();
    let wd = env.workdir(&id);
    let started = std::time::Instant::now();
    let out = env
        .command()
        .current_dir(&wd)
        .args(["run", "-q", &id, "--", "sh", "-c", "echo ran > ran.txt"])
        .env("GIT_LOOP_FAILPOINT", "layer:gone")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the run waited {:?}",
        started.elapsed()
    );
    assert!(
        stderr.contains("error: the sandbox failed to start")
            && stderr.contains("the process laying its mounts was killed"),
        "{stderr}"
    );
    assert!(!wd.join("ran.txt").exists(), "the command ran: {stderr}");
    let log = env.run(["log", &id]).ok();
    assert!(log.stdout.contains("did not start"), "{}", log.stdout);

    env.run(["run", "-q", &id, "--", "sh", "-c", "echo ran > ran.txt"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(wd.join("ran.txt")).unwrap(),
        "ran\n"
    );
}
