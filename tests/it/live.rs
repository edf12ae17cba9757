//! Live sessions (DESIGN 10): `up`, `down`, commands that join the session, and the
//! confinement of a joined command, compared with a fresh one's and attacked through.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Run, TestEnv};

fn setup() -> (TestEnv, String) {
    let env = TestEnv::new();
    let repo = env.repo("app");
    let id = env.new_loop(&repo, "live loop");
    (env, id)
}

fn up(env: &TestEnv, id: &str) {
    env.run(["up", id]).ok().stderr_has("session is up");
    let list = env.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["session"], true, "{list}");
}

fn sh(env: &TestEnv, id: &str, script: &str) -> Run {
    env.run(["run", "-q", id, "--", "sh", "-c", script])
}

fn supervisor_pid(env: &TestEnv, id: &str) -> u32 {
    let text = fs::read_to_string(env.ws.join("locks/live").join(format!("{id}.pid"))).unwrap();
    text.trim().parse().unwrap()
}

fn alive(pid: u32) -> bool {
    // A zombie is no process any more.
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Every process below `root` (by the parent links in /proc).
fn descendants(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let after = stat.rsplit(')').next().unwrap_or("");
        let ppid: u32 = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        parents.push((pid, ppid));
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if f() {
            return true;
        }
        // Each look is a `git loop` process: looks too close together would take the
        // machine from what they wait for.
        std::thread::sleep(Duration::from_millis(100));
    }
    f()
}

fn events(env: &TestEnv, id: &str) -> Vec<serde_json::Value> {
    fs::read_to_string(env.loop_dir(id).join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What a process can see of its own confinement; the proxy's per-sandbox token masked.
const CONFINEMENT: &str = r#"grep -E '^(Seccomp|Seccomp_filters|NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status; cat /proc/self/cgroup; ulimit -a; env | sort | sed -E 's/gitloop:[0-9a-f]+@/gitloop:TOKEN@/'"#;

/// The attacks, each printing one line of its outcome, and the legitimate work beside them.
fn attacks(planted: &Path, port: u16) -> String {
    format!(
        r#"
cat {key} >/dev/null 2>&1 && echo "ssh: READ" || echo "ssh: refused"
touch /usr/pwned 2>/dev/null && echo "usr: WRITTEN" || echo "usr: refused"
unshare -U true 2>/dev/null && echo "userns: MADE" || echo "userns: refused"
mkdir -p /tmp/m && mount -t tmpfs none /tmp/m 2>/dev/null && echo "mount: MOUNTED" || echo "mount: refused"
python3 - <<'PY'
import ctypes, os, socket, fcntl, termios, pty
libc = ctypes.CDLL(None, use_errno=True)
init = [p for p in os.listdir('/proc') if p.isdigit() and open('/proc/%s/cmdline' % p, 'rb').read().split(b'\0')[1:2] == [b'__session']]
for p in init:
    r = libc.ptrace(16, int(p), 0, 0)
    print("ptrace init:", "ATTACHED" if r == 0 else "refused")
    # Its descriptors (the session's socket among them), its memory and environment.
    taken = []
    for fd in os.listdir('/proc/%s/fd' % p):
        try:
            os.close(os.open('/proc/%s/fd/%s' % (p, fd), os.O_RDONLY)); taken.append(fd)
        except OSError:
            pass
        try:
            s = socket.socket(fileno=os.open('/proc/%s/fd/%s' % (p, fd), os.O_PATH)); taken.append(fd)
        except OSError:
            pass
    for f in ('mem', 'environ'):
        try:
            open('/proc/%s/%s' % (p, f), 'rb').read(1); taken.append(f)
        except OSError:
            pass
    print("init fds:", "TAKEN %s" % taken if taken else "refused")
if not init:
    print("ptrace init: refused"); print("init fds: refused")
r = libc.ptrace(16, 1, 0, 0)
print("ptrace 1:", "ATTACHED" if r == 0 else "refused")
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", {port})); print("net: CONNECTED")
except OSError:
    print("net: refused")
m, sl = pty.openpty()
try:
    fcntl.ioctl(sl, termios.TIOCSTI, b'x'); print("tiocsti: PUSHED")
except OSError:
    print("tiocsti: refused")
PY
echo work > ok.txt && cat ok.txt && rm ok.txt
"#,
        key = planted.display()
    )
}

#[test]
fn a_joined_command_is_confined_exactly_as_a_fresh_one() {
    let (env, id) = setup();
    // A key of the host's, and a server on the host's loopback, outside the proxy.
    let ssh = env.home.join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), "PRIVATE KEY").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = attacks(&ssh.join("id_ed25519"), port);

    let fresh = sh(&env, &id, CONFINEMENT).ok().stdout.clone();
    let fresh_attacks = sh(&env, &id, &script).ok().stdout.clone();
    up(&env, &id);
    let joined = sh(&env, &id, CONFINEMENT).ok().stdout.clone();
    let joined_attacks = sh(&env, &id, &script).ok().stdout.clone();
    env.run(["down", &id]).ok();

    assert!(
        fresh.contains("NoNewPrivs:\t1") && fresh.contains("CapEff:\t0000000000000000"),
        "{fresh}"
    );
    assert_eq!(
        fresh, joined,
        "a joined command's confinement differs from a fresh one's"
    );
    assert!(fresh_attacks.contains("work\n"), "{fresh_attacks}");
    for line in joined_attacks.lines().filter(|l| l.contains(": ")) {
        assert!(
            line.ends_with("refused"),
            "through a joined command: {line}\n{joined_attacks}"
        );
    }
    // The same attacks, the same outcome; the legitimate work done in both.
    assert_eq!(fresh_attacks, joined_attacks);
    assert!(joined_attacks.contains("work\n"));
    assert!(!Path::new("/usr/pwned").exists());
}

#[test]
fn joined_commands_share_the_sessions_tmp_and_processes() {
    let (env, id) = setup();
    up(&env, &id);
    sh(&env, &id, "echo from-the-agent > /tmp/mark").ok();
    let mut sleeper = env
        .command()
        .args(["run", "-q", &id, "--", "sleep", "300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run = sh(&env, &id, "cat /tmp/mark; for i in $(seq 50); do ps -eo args | grep -qx 'sleep 300' && break; sleep 0.1; done; ps -eo args");
    run.ok()
        .stdout_has("from-the-agent")
        .stdout_has("sleep 300");
    // The exit code comes back; a fresh sandbox has its own /tmp.
    assert_eq!(sh(&env, &id, "exit 7").code, 7);
    // A signal to the joiner reaches the joined command.
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(sleeper.id() as i32, libc::SIGTERM) };
    let status = sleeper.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM));
    let evs = events(&env, &id);
    assert!(
        evs.iter()
            .any(|e| e["kind"] == "start" && e["joined"] == true),
        "{evs:?}"
    );
    assert!(
        evs.iter()
            .any(|e| e["kind"] == "exit" && e["joined"] == true && e["code"] == 7),
        "{evs:?}"
    );
    env.run(["down", &id]).ok().stderr_has("session is down");
    assert_eq!(sh(&env, &id, "test -e /tmp/mark").code, 1);
}

#[test]
fn the_supervisors_death_ends_the_sandbox_and_the_session_is_not_up() {
    let (env, id) = setup();
    up(&env, &id);
    env.run(["up", &id]).ok().stderr_has("already up");
    let sup = supervisor_pid(&env, &id);
    let inside = descendants(sup);
    assert!(
        inside.len() >= 3,
        "bwrap and the init below the supervisor: {inside:?}"
    );
    // SAFETY: a signal to the supervisor this test started.
    unsafe { libc::kill(sup as i32, libc::SIGKILL) };
    assert!(
        wait_until(Duration::from_secs(30), || inside
            .iter()
            .all(|p| !alive(*p))),
        "processes of the session outlived its supervisor"
    );
    let list = env.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["session"], false, "{list}");
    assert!(
        !env.run(["list"]).ok().stdout.contains(" up"),
        "a dead session is not up"
    );
    env.run(["down", &id]).ok().stderr_has("no session up");
    // A command runs in a fresh sandbox again, and a new session starts.
    sh(&env, &id, "true").ok();
    up(&env, &id);
    env.run(["down", &id]).ok();
}

#[test]
fn down_ends_everything_in_the_session() {
    let (env, id) = setup();
    up(&env, &id);
    let mut bg = env
        .command()
        .args(["run", "-q", &id, "--", "sh", "-c", "sleep 300 & sleep 300"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sup = supervisor_pid(&env, &id);
    assert!(wait_until(Duration::from_secs(30), || descendants(sup)
        .len()
        >= 6));
    let inside = descendants(sup);
    env.run(["down", &id]).ok();
    // A process whose memory is already gone (its command line empty) is still finishing its
    // exit in the kernel: give the last of them a moment, then none may be left.
    wait_until(Duration::from_secs(30), || {
        inside.iter().all(|p| !alive(*p))
    });
    let left: Vec<String> = inside
        .iter()
        .filter(|p| alive(**p))
        .map(|p| {
            let cmdline = fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
            format!("{p}: {}", cmdline.replace('\0', " "))
        })
        .collect();
    assert!(left.is_empty(), "left: {left:?}");
    assert_ne!(bg.wait().unwrap().code(), Some(0));
}

#[test]
fn a_time_limit_ends_a_run_with_an_exit_event() {
    let (env, id) = setup();
    for joined in [false, true] {
        if joined {
            up(&env, &id);
        }
        let run = env.run(["run", &id, "--timeout", "2", "--", "sleep", "60"]);
        assert_eq!(run.code, 124, "{}", run.stderr);
        assert!(
            run.stderr.contains("time limit (2s) ended it"),
            "{}",
            run.stderr
        );
        let evs = events(&env, &id);
        let last = evs.iter().rev().find(|e| e["kind"] == "exit").unwrap();
        assert_eq!(last["cause"], "timeout", "{last}");
        // Ended by the limit: not before it, and before the command's own end (the run's
        // span as recorded, not the time a loaded machine took to start its sandbox).
        let ran = last["duration_ms"].as_u64().unwrap();
        assert!((2000..60_000).contains(&ran), "{last}");
        assert_eq!(last["joined"] == true, joined, "{last}");
    }
    env.run(["down", &id]).ok();
    let bad = env.run(["run", &id, "--timeout", "0", "--", "true"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("no time at all"), "{}", bad.stderr);
}

#[test]
fn sandbox_options_cannot_change_a_sessions_sandbox() {
    let (env, id) = setup();
    up(&env, &id);
    env.run(["run", &id, "--net", "host", "--", "true"])
        .fails(2)
        .stderr_has("session is up")
        .stderr_has("git loop down");
    env.run(["down", &id]).ok();
    // Without a session, `down` says so and succeeds.
    env.run(["down", &id]).ok().stderr_has("no session up");
}

/// The agent's state as a sandbox writes it is read strictly, bounded and never through a
/// link: `list` shows only a word of the vocabulary, and a change reaches `watch`.
#[test]
fn the_agent_state_a_sandbox_writes_is_read_strictly() {
    let (env, id) = setup();
    up(&env, &id);
    let watched = env.root.join("watch.jsonl");
    let mut watch = env
        .command()
        .args(["watch", "--json", &id])
        .stdout(fs::File::create(&watched).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = format!("/loopat/loop/{id}/.claude/.git-loop-agent-state");
    sh(&env, &id, &format!("printf 'working\\n' > {file}")).ok();
    let state = |env: &TestEnv| env.run(["list", "--json"]).ok().json()[0]["agent"].clone();
    assert!(wait_until(Duration::from_secs(30), || state(&env)["state"]
        == "working"));
    // Escape sequences, an oversized file, a link to a host file, a FIFO: no state is
    // taken. Each is put in place whole (a rename), and each is waited for until the
    // session says it refused it: the refusal is written after the point where a state
    // would have been taken, so the state looked at then is the one that check left.
    let refusals = |env: &TestEnv| {
        events(env, &id)
            .into_iter()
            .filter(|e| e["kind"] == "violation" && e["action"] == "agent-state")
            .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    for (bad, why) in [
        (
            format!("printf 'done\\033[2J' > {file}.new && mv {file}.new {file}"),
            "it is not a word of the vocabulary",
        ),
        (
            format!("head -c 100000 /dev/zero | tr '\\0' d > {file}.new && mv {file}.new {file}"),
            "it holds more than a state's word",
        ),
        (
            format!("ln -s /etc/hostname {file}.new && mv -T {file}.new {file}"),
            "it is a symlink, never followed",
        ),
        (
            format!("rm {file} && mkfifo {file}"),
            "it is not a regular file",
        ),
    ] {
        let before = refusals(&env).len();
        sh(&env, &id, &bad).ok();
        assert!(
            wait_until(Duration::from_secs(30), || refusals(&env).len() > before),
            "the session did not refuse what {bad} left"
        );
        assert_eq!(refusals(&env)[before..], [why], "after {bad}");
        assert_eq!(state(&env)["state"], "working", "after {bad}");
    }
    env.run(["log", &id]).ok().stdout_has(&format!(
        "agent-state {file} refused: it is a symlink, never followed"
    ));
    sh(
        &env,
        &id,
        &format!("rm -f {file}; printf 'exited 3\\n' > {file}"),
    )
    .ok();
    assert!(wait_until(Duration::from_secs(30), || state(&env)["code"] == 3));
    assert!(wait_until(Duration::from_secs(30), || fs::read_to_string(
        &watched
    )
    .unwrap_or_default()
    .contains("\"code\":3")));
    env.run(["down", &id]).ok();
    let _ = watch.kill();
    let _ = watch.wait();
    let lines: Vec<serde_json::Value> = fs::read_to_string(&watched)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(lines.iter().any(|l| l["state"] == "working"), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l["state"] == "exited" && l["code"] == 3),
        "{lines:?}"
    );
    assert!(lines.iter().all(|l| l["id"] == id.as_str()));
}

/// `watch` says once that a loop it watches is removed: watching loops by id then ends with
/// exit code 0 once every one named is gone, and watching all loops goes on (the others
/// are still watched, and a loop made later would be). The states come as an agent's hook
/// writes them, from a sandboxed run, with no session up.
#[test]
fn watch_says_a_removed_loop_and_ends_once_every_named_one_is_gone() {
    let (env, id) = setup();
    let other = env.new_loop(&env.root.join("app"), "other loop");
    let watch = |args: &[&str], out: &Path| {
        env.command()
            .args(args)
            .stdout(fs::File::create(out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let (named_out, all_out) = (env.root.join("named.jsonl"), env.root.join("all.txt"));
    let mut named = watch(&["watch", "--json", &id], &named_out);
    let mut all = watch(&["watch"], &all_out);
    let text = |p: &Path| fs::read_to_string(p).unwrap_or_default();
    for loop_id in [&id, &other] {
        let file = format!("/loopat/loop/{loop_id}/.claude/.git-loop-agent-state");
        sh(&env, loop_id, &format!("printf 'done\\n' > {file}")).ok();
    }
    // Each watcher has seen its loops' states, so it has looked at them at least once.
    assert!(wait_until(Duration::from_secs(30), || text(&named_out)
        .contains("\"done\"")
        && text(&all_out)
            .lines()
            .filter(|l| l.ends_with("  done"))
            .count()
            == 2));

    env.run(["rm", &id]).ok();
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = named.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > until {
            let _ = named.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "{}",
        text(&named_out)
    );
    let lines: Vec<serde_json::Value> = text(&named_out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["id"], &last["state"]),
        (&id.as_str().into(), &"removed".into())
    );
    assert_eq!(lines.iter().filter(|l| l["state"] == "removed").count(), 1);

    // Watching all loops: the removed one is said once, the other is not, and it goes on.
    assert!(wait_until(Duration::from_secs(30), || text(&all_out)
        .contains(&format!("  {id}  removed"))));
    std::thread::sleep(Duration::from_millis(500));
    assert!(all.try_wait().unwrap().is_none(), "{}", text(&all_out));
    assert!(!text(&all_out).contains(&format!("  {other}  removed")));
    env.run(["rm", &other]).ok();
    assert!(wait_until(Duration::from_secs(30), || text(&all_out)
        .contains(&format!("  {other}  removed"))));
    assert!(all.try_wait().unwrap().is_none(), "{}", text(&all_out));
    let _ = all.kill();
    let _ = all.wait();
    assert_eq!(
        text(&all_out).matches("removed").count(),
        2,
        "{}",
        text(&all_out)
    );
}

/// A joined shell in a real terminal has a terminal of its own as its controlling one:
/// `tty` names a device, Ctrl-Z stops the foreground job and `fg` brings it back, Ctrl-C
/// ends that job only (the shell lives on), and the shell's exit code is `shell`'s.
#[test]
fn a_joined_shell_has_a_controlling_terminal_and_job_control() {
    use crate::common::terminal::Terminal;
    let (env, id) = setup();
    up(&env, &id);
    let dir = env.root.join("term");
    fs::create_dir_all(&dir).unwrap();
    let mut vars: Vec<(String, std::ffi::OsString)> = env
        .envs()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    vars.push(("SHELL".into(), "/bin/bash".into()));
    vars.push(("TERM".into(), "xterm-256color".into()));
    let term = Terminal::start(
        &dir,
        vars,
        &env.root,
        &[crate::common::BIN.to_string(), "shell".into(), id.clone()],
        (120, 40),
    );
    let t = Duration::from_secs(20);
    let none = |_: &str| {};
    term.wait_for(
        "the prompt",
        t,
        |s| s.contains("workdir#") || s.contains("workdir$"),
        none,
    );
    term.type_text("tty; echo shell=$$");
    term.press("Enter");
    let screen = term.wait_for(
        "tty",
        t,
        |s| s.lines().any(|l| l.starts_with("shell=")),
        none,
    );
    assert!(screen.contains("/dev/pts/"), "{screen}");
    let shell_pid = screen
        .lines()
        .find_map(|l| l.strip_prefix("shell="))
        .unwrap()
        .trim()
        .to_string();
    term.type_text("sleep 300");
    term.press("Enter");
    assert!(wait_until(Duration::from_secs(30), || {
        sh(&env, &id, "ps -eo args").stdout.contains("sleep 300")
    }));
    term.press("C-z");
    // Typed only at a prompt: a shell that takes the terminal back flushes what came before.
    let prompt = |s: &str| s.lines().last_non_empty().trim_end().ends_with('#');
    term.wait_for(
        "the job stopped",
        t,
        |s| s.contains("Stopped") && prompt(s),
        none,
    );
    term.type_text("fg");
    term.press("Enter");
    // `fg` prints the job's command line on a line of its own.
    term.wait_for(
        "the job back",
        t,
        |s| s.lines().any(|l| l.trim() == "sleep 300"),
        none,
    );
    assert!(wait_until(Duration::from_secs(30), || {
        sh(&env, &id, "ps -eo stat,args")
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with('S') && l.ends_with("sleep 300"))
    }));
    term.press("C-c");
    term.wait_for(
        "the prompt after Ctrl-C",
        t,
        |s| s.lines().any(|l| l.trim() == "sleep 300") && s.contains("^C") && prompt(s),
        none,
    );
    term.type_text("echo after=$$ jobs=$(jobs | wc -l)");
    term.press("Enter");
    let screen = term.wait_for(
        "the shell after Ctrl-C",
        t,
        |s| s.contains("jobs=0") || s.contains("jobs=1"),
        none,
    );
    assert!(
        screen.contains(&format!("after={shell_pid} jobs=0")),
        "{screen}"
    );
    assert!(!sh(&env, &id, "ps -eo args").stdout.contains("sleep 300"));
    term.type_text("exit 5");
    term.press("Enter");
    assert_eq!(term.wait_exit(t), 5);
    env.run(["down", &id]).ok();
}

trait LastNonEmpty<'a> {
    fn last_non_empty(self) -> &'a str;
}

impl<'a, I: DoubleEndedIterator<Item = &'a str>> LastNonEmpty<'a> for I {
    /// The last line with something on it (a screen's rows below the cursor are empty).
    fn last_non_empty(mut self) -> &'a str {
        self.rfind(|l| !l.trim().is_empty()).unwrap_or("")
    }
}

/// An agent of the operator's own (`agent.command`): `sleep` as its argument sleeps a
/// minute, anything else exits 3.
fn plain_agent(env: &TestEnv) {
    use std::os::unix::fs::PermissionsExt;
    let bin = env.root.join("agent-bin/busy-agent");
    fs::create_dir_all(bin.parent().unwrap()).unwrap();
    fs::write(
        &bin,
        "#!/bin/sh\n[ \"$1\" = sleep ] && exec sleep 60\nexit 3\n",
    )
    .unwrap();
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let config = env.home.join(".config/git-loop/config.toml");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        &config,
        format!("[agent]\ncommand = [{:?}]\n", bin.display().to_string()),
    )
    .unwrap();
}

/// The detached agent's end is its own: `exited` carries the code the agent's process
/// exited with (tmux keeps its status; no wrapper in between), with an exit event; and
/// `[limits] time` ends a detached agent with an exit event saying `cause: "timeout"`.
#[test]
fn a_detached_agents_exit_and_time_limit_are_its_own() {
    let (env, id) = setup();
    plain_agent(&env);
    let state = |env: &TestEnv| env.run(["list", "--json"]).ok().json()[0]["agent"].clone();
    env.run(["agent", &id, "--detach"]).ok();
    assert!(
        wait_until(Duration::from_secs(60), || state(&env)["state"] == "exited"),
        "{}",
        state(&env)
    );
    assert_eq!(state(&env)["code"], 3, "{}", state(&env));
    let ended = |env: &TestEnv| {
        events(env, &id)
            .into_iter()
            .rev()
            .find(|e| e["kind"] == "exit" && e["detached"] == true)
    };
    let last = ended(&env).expect("an exit event of the detached agent");
    assert_eq!(last["code"], 3, "{last}");
    assert!(last.get("cause").is_none(), "{last}");
    // The agent's session is gone: a new detached agent starts.
    env.run(["down", &id]).ok();

    env.write_profile("[limits]\ntime = \"2s\"\n");
    env.run(["agent", &id, "--detach", "--", "sleep"]).ok();
    // Within the agent's own 60 s: whatever the machine's load, only the limit ends it
    // sooner.
    assert!(
        wait_until(Duration::from_secs(60), || state(&env)["code"] == 124),
        "{}",
        state(&env)
    );
    let last = ended(&env).unwrap();
    assert_eq!(last["cause"], "timeout", "{last}");
    assert_eq!(last["code"], 124, "{last}");
    // Ended by the limit: not before it, and before the agent's own end. The span is the
    // supervisor's, from the agent's start, not a session's start under load.
    let ran = last["duration_ms"].as_u64().unwrap();
    assert!((2000..60_000).contains(&ran), "{last}");
    // Nothing of the agent is left in the session.
    assert!(!sh(&env, &id, "ps -eo args").stdout.contains("sleep 60"));
    env.run(["down", &id]).ok();
}

/// Notifications without a `notify.command`: `notify-send` (a stand-in on the host's PATH
/// recording its arguments) and a bell on every attached terminal, when the agent needs
/// input; nothing of either with `notify.enabled = false`.
#[test]
fn notifications_reach_the_desktop_and_the_attached_terminals_unless_turned_off() {
    use crate::common::terminal::Terminal;
    use std::os::unix::fs::PermissionsExt;
    let (env, id) = setup();
    plain_agent(&env);
    let stand_in = env.root.join("desktop/notify-send");
    let said = env.root.join("desktop/said");
    fs::create_dir_all(stand_in.parent().unwrap()).unwrap();
    fs::write(
        &stand_in,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s|' \"$a\"; done >> {}\necho >> {0}\n",
            said.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&stand_in, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        stand_in.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let state_file = format!("/loopat/loop/{id}/.claude/.git-loop-agent-state");
    let config = env.home.join(".config/git-loop/config.toml");
    let base = fs::read_to_string(&config).unwrap();

    for enabled in [true, false] {
        let earlier = events(&env, &id).len();
        fs::write(&config, format!("{base}\n[notify]\nenabled = {enabled}\n")).unwrap();
        let _ = fs::remove_file(&said);
        // The session starts with the stand-in on its PATH (the host's, never a shell's).
        let detach = env
            .command()
            .env("PATH", &path)
            .args(["agent", &id, "--detach", "--", "sleep"])
            .output()
            .unwrap();
        assert!(detach.status.success(), "{detach:?}");
        let dir = env.root.join(format!("term-{enabled}"));
        fs::create_dir_all(&dir).unwrap();
        let mut vars: Vec<(String, std::ffi::OsString)> = env
            .envs()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        vars.push(("TERM".into(), "xterm-256color".into()));
        let term = Terminal::start(
            &dir,
            vars,
            &env.root,
            &[crate::common::BIN.to_string(), "attach".into(), id.clone()],
            (100, 30),
        );
        assert!(wait_until(Duration::from_secs(30), || env
            .run(["list", "--json"])
            .ok()
            .json()[0]["agent"]["attached"]
            == 1));
        assert!(!term.rang());
        sh(
            &env,
            &id,
            &format!("printf 'needs-input\\n' > {state_file}"),
        )
        .ok();
        assert!(wait_until(Duration::from_secs(30), || env
            .run(["list", "--json"])
            .ok()
            .json()[0]["agent"]["state"]
            == "needs-input"));
        if enabled {
            assert!(
                wait_until(Duration::from_secs(30), || fs::read_to_string(&said)
                    .is_ok_and(|s| s.contains('\n'))),
                "notify-send was not run"
            );
            let line = fs::read_to_string(&said).unwrap();
            assert_eq!(line, format!("git loop: {id} needs-input|live loop|\n"));
            assert!(
                wait_until(Duration::from_secs(30), || term.rang()),
                "no bell on the attached terminal:\n{}",
                term.screen()
            );
            // The sandbox rewrites its state as fast as the session looks (forty changes):
            // the person is told at most every two seconds, one command at a time, and
            // of the latest state in the end.
            let started = Instant::now();
            sh(
                &env,
                &id,
                &format!(
                    "for i in $(seq 20); do printf 'done\\n' > {state_file}; sleep 0.12; printf 'needs-input\\n' > {state_file}; sleep 0.12; done; printf 'exited 5\\n' > {state_file}"
                ),
            )
            .ok();
            let last = format!("git loop: {id} exited 5|live loop|");
            assert!(
                wait_until(Duration::from_secs(30), || fs::read_to_string(&said)
                    .is_ok_and(|s| s.lines().last() == Some(last.as_str()))),
                "the last state was not told: {:?}",
                fs::read_to_string(&said)
            );
            let told = fs::read_to_string(&said).unwrap().lines().count() - 1;
            let bound = started.elapsed().as_secs() as usize / 2 + 1;
            assert!(
                (1..=bound).contains(&told),
                "{told} notifications for the flood, more than {bound}"
            );
        } else {
            // The session records the new state once it has told the person (or, as here,
            // decided not to): nothing can be started to tell them after that event.
            let told = || {
                events(&env, &id)[earlier..]
                    .iter()
                    .filter(|e| e["kind"] == "state" && e["state"] == "needs-input")
                    .map(|e| e["notified"].clone())
                    .collect::<Vec<_>>()
            };
            assert!(wait_until(Duration::from_secs(30), || !told().is_empty()));
            assert_eq!(told(), [serde_json::json!(false)]);
            assert!(
                !said.exists(),
                "notify-send ran with notify.enabled = false"
            );
            assert!(!term.rang(), "a bell with notify.enabled = false");
        }
        env.run(["down", &id]).ok();
    }
}

/// A session keeps the binary it started with; a git-loop installed at the same path since
/// (an upgrade: a new file renamed over the old) does not join it, says why and how to
/// start it again, and can still end it; the session then starts with the new binary.
#[test]
fn a_session_started_by_another_binary_is_not_joined() {
    use std::os::unix::fs::PermissionsExt;
    let (env, id) = setup();
    let installed = env.root.join("bin/git-loop");
    fs::create_dir_all(installed.parent().unwrap()).unwrap();
    fs::copy(crate::common::BIN, &installed).unwrap();
    fs::set_permissions(&installed, fs::Permissions::from_mode(0o755)).unwrap();
    let run_with = |bin: &Path, args: &[&str]| {
        let mut cmd = std::process::Command::new(bin);
        cmd.env_clear()
            .envs(env.envs())
            .args(args)
            .stdin(Stdio::null());
        cmd.output().unwrap()
    };
    assert!(run_with(&installed, &["up", &id]).status.success());
    assert_eq!(
        run_with(&installed, &["run", "-q", &id, "--", "true"])
            .status
            .code(),
        Some(0)
    );
    // The upgrade: a new file at the same path.
    let fresh = env.root.join("bin/git-loop.new");
    fs::copy(crate::common::BIN, &fresh).unwrap();
    fs::set_permissions(&fresh, fs::Permissions::from_mode(0o755)).unwrap();
    fs::rename(&fresh, &installed).unwrap();
    let refused = run_with(&installed, &["run", "-q", &id, "--", "true"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("another git-loop binary"), "{stderr}");
    assert!(
        stderr.contains(&format!("git loop down {id} && git loop up {id}")),
        "{stderr}"
    );
    let again = run_with(&installed, &["up", &id]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("another git-loop binary"));
    // Still up; ended by the new binary; started by it, joined by it.
    assert_eq!(env.run(["list", "--json"]).ok().json()[0]["session"], true);
    assert!(run_with(&installed, &["down", &id]).status.success());
    assert!(run_with(&installed, &["up", &id]).status.success());
    assert_eq!(
        run_with(&installed, &["run", "-q", &id, "--", "true"])
            .status
            .code(),
        Some(0)
    );
    assert!(run_with(&installed, &["down", &id]).status.success());
}
