//! The supervisor of a live session: `git-loop __supervise ID`, a host process that `up`
//! starts detached. It holds the session's lock, runs the sandbox (with the loop's proxy
//! in the proxy mode) on its main thread, and relays joined commands between the host's
//! socket and the session's init (see the module header of `session`).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::services::Phase;
use super::state::{AgentState, Kind};
use super::wire::{self, Exec, Facts, Message};
use crate::error::{Error, Result};
use crate::loops::LoopRecord;
use crate::sandbox::events;
use crate::workspace::Workspace;

/// The agent's command line and what its profile adds to the environment.
type AgentLine = (Vec<String>, Vec<(String, String)>);

/// What the threads of a supervisor share.
struct Shared {
    /// The supervisor's end of the socketpair with the session's init.
    init: OwnedFd,
    /// Joined commands waiting for their start and exit, by number.
    waiting: Mutex<HashMap<u64, Sender<Message>>>,
    next: AtomicU64,
    /// `up`'s end of the readiness pipe, until the init says it is ready.
    ready: Mutex<Option<std::fs::File>>,
    ws: Workspace,
    rec: LoopRecord,
    facts: Facts,
    /// The agent's command line and environment (`agent.command` and its profile), when
    /// the agent is installed.
    agent: Option<AgentLine>,
    /// The host's tmux (under /usr, so in the view), for the detached agent.
    tmux: Option<String>,
    /// The host's script(1) (under /usr, so in the view), for a joined shell's terminal.
    script: Option<String>,
    /// The agent's state, as `list` and `watch` read it from `locks/live/<id>.state`.
    state: Mutex<AgentState>,
    /// The events written of the agent's state ([`set_state`]) and of refused state files
    /// ([`watch_inside`]): each bounded per session, since what the sandbox writes decides
    /// how many there are.
    recorded: [Recorded; 2],
    /// The latest state to tell the person, for [`notifier`] (a newer one replaces it).
    notice: Mutex<Option<String>>,
    notice_ready: Condvar,
    /// The stdout of each attached terminal (by joined command), for the bell.
    attached: Mutex<Vec<(u64, OwnedFd)>>,
    notify: crate::config::schema::NotifySettings,
    /// The profile's `[limits] time`, for the session's agent.
    agent_time: Option<Duration>,
    /// The profile's services and `start` hook (see `session::services`).
    services: Vec<crate::config::profile::Service>,
    start: Option<Vec<String>>,
    /// The services started, in order: name, number and where their end is told.
    running: Mutex<Vec<(String, u64, Receiver<Message>)>>,
    /// The services' states, as `list` and `show` read them from `locks/live/<id>.services`.
    service_states: Mutex<Vec<super::services::ServiceState>>,
    /// The loop's forwarded ports (`crate::ports`).
    ports: Arc<super::forward::Forwarding>,
}

/// Runs the session of `rec` until `down`, the end of its init, or a signal; `ready` is
/// the pipe `up` waits on (one line: `ok`). Returns the exit code.
pub fn supervise(
    report: &mut dyn crate::report::Report,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &crate::config::Config,
    mut req: crate::sandbox::Request,
    ready: Option<std::fs::File>,
) -> Result<u8> {
    super::ensure_live_dir(ws)?;
    let lock = take_lock(ws, &rec.id)?;
    let _ = std::fs::write(
        super::pid_path(ws, &rec.id),
        format!("{}\n", std::process::id()),
    );
    // The binary the session runs: this process's, which must also be the one at the path
    // bound into the sandbox (replaced in between: refused, started again by the user).
    let identity = super::binary_identity()
        .ok_or_else(|| Error::failure("cannot identify the git-loop binary"))?;
    let at_path = std::env::current_exe().ok().and_then(|p| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p)
            .ok()
            .map(|m| format!("{}:{}", m.dev(), m.ino()))
    });
    if at_path.as_deref() != Some(identity.as_str()) {
        // `up` shows this line, with the log's place as its hint.
        return Err(Error::failure(
            "the git-loop binary was replaced while the session started: start it again",
        ));
    }
    let _ = std::fs::write(super::exe_path(ws, &rec.id), format!("{identity}\n"));
    let sock_path = super::socket_path(ws, &rec.id);
    let listener = listen(&sock_path)?;
    let (ours, theirs) = wire::pair()
        .map_err(|e| Error::failure("cannot make the session's socketpair").with_source(e))?;
    // The session's view has the agent's install folder, so `agent` can join it; its
    // prompt layers are written as before an agent's run.
    let mut agent = None;
    if let Ok((profile, argv, folder, env)) = crate::agent::command_for(ws, config, Vec::new()) {
        let mut as_agent = req.clone();
        as_agent.command = argv.clone();
        as_agent.agent_env = env.clone();
        as_agent.ro_same_path.extend(folder.clone());
        crate::agent::prepare(report, ws, rec, config, &as_agent, profile)?;
        req.ro_same_path.extend(folder);
        agent = Some((argv, env));
    }
    let tmux = crate::sandbox::probe::which("tmux", "/usr/bin:/bin")
        .map(|p| p.display().to_string())
        .filter(|p| p.starts_with("/usr/"));
    req.command = vec![
        crate::egress::relay::RELAY_EXE.to_string(),
        "__session".into(),
        theirs.as_raw_fd().to_string(),
    ];
    req.session = Some(crate::sandbox::SessionStart {
        inherit_fds: vec![theirs.as_raw_fd()],
    });
    let script = crate::sandbox::probe::which("script", "/usr/bin:/bin")
        .map(|p| p.display().to_string())
        .filter(|p| p.starts_with("/usr/"));
    let ports = super::forward::Forwarding::new(
        ws,
        &rec.id,
        config.settings().ports.address,
        ours.as_raw_fd(),
    );
    let shared = Arc::new(Shared {
        ports: Arc::clone(&ports),
        init: ours,
        waiting: Mutex::default(),
        next: AtomicU64::new(1),
        ready: Mutex::new(ready),
        ws: ws.clone(),
        rec: rec.clone(),
        facts: Facts {
            supervisor_pid: std::process::id(),
            started: crate::loops::now_rfc3339(),
            net: req
                .net
                .map(|n| crate::choice::Choice::name(n).to_string())
                .unwrap_or_else(|| rec.network.to_string()),
            mode: req
                .mode
                .map(|m| crate::choice::Choice::name(m).to_string())
                .unwrap_or_else(|| rec.mode.to_string()),
        },
        agent,
        tmux,
        script,
        state: Mutex::new(AgentState {
            state: None,
            code: None,
            since: crate::loops::now_rfc3339(),
            attached: 0,
        }),
        attached: Mutex::default(),
        recorded: Default::default(),
        notice: Mutex::default(),
        notice_ready: Condvar::new(),
        notify: config.settings().notify.clone(),
        agent_time: config.profile().time,
        services: config.profile().services.clone(),
        start: config.profile().start.clone(),
        running: Mutex::default(),
        service_states: Mutex::default(),
    });
    write_state(&shared);
    // No service of an earlier session is this one's.
    super::services::write_states(ws, &rec.id, &[]);
    // Listening before the sandbox starts: a connection made meanwhile waits in the
    // backlog, and its dial in the init's queue.
    ports.start(&config.profile().ports);
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || watch_inside(&shared));
    }
    if shared.notify.enabled {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || notifier(&shared));
    }
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || from_init(&shared));
    }
    {
        let shared = Arc::clone(&shared);
        std::thread::spawn(move || accept(listener, &shared));
    }
    let _ = events::append(&ws.loop_events(&rec.id), "session", json!({"state": "up"}));
    // On this thread: bwrap's parent-death signal follows the thread that started it.
    let result = crate::sandbox::run(report, ws, rec, config, &req);
    ports.close_all();
    drop(theirs);
    let _ = std::fs::remove_file(&sock_path);
    let _ = events::append(
        &ws.loop_events(&rec.id),
        "session",
        json!({"state": "down"}),
    );
    // Held until this process exits (the kernel lets it go then): `down` returns only when
    // no process of the session, the supervisor included, is left.
    std::mem::forget(lock);
    result
}

/// The session's lock, or the refusal when another supervisor holds it. A look by
/// `is_up` holds it shared for an instant, so a held lock is tried again for a moment.
fn take_lock(ws: &Workspace, id: &str) -> Result<crate::fsutil::Lock> {
    let path = super::lock_path(ws, id);
    for _ in 0..50 {
        if let Some(lock) = crate::fsutil::Lock::try_acquire(&path)? {
            return Ok(lock);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err(Error::failure(format!(
        "loop {id}'s session is already up (`git loop down {id}` ends it)"
    )))
}

fn listen(path: &std::path::Path) -> Result<OwnedFd> {
    use nix::sys::socket::{self, AddressFamily, SockFlag, SockType, UnixAddr};
    let failed = |e: nix::Error| {
        Error::failure(format!("cannot listen on {}", path.display())).with_source(e)
    };
    // A socket left by a supervisor that died: ours now that we hold the lock.
    let _ = std::fs::remove_file(path);
    let sock = socket::socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(failed)?;
    let addr = UnixAddr::new(path).map_err(failed)?;
    socket::bind(sock.as_raw_fd(), &addr).map_err(failed)?;
    socket::listen(&sock, socket::Backlog::new(64).map_err(failed)?).map_err(failed)?;
    Ok(sock)
}

/// What the init says: readiness, and the start and end of joined commands.
fn from_init(shared: &Arc<Shared>) {
    loop {
        let (msg, fds) = match wire::recv(shared.init.as_raw_fd()) {
            Ok(Some(got)) => got,
            Ok(None) | Err(_) => break,
        };
        match msg {
            Message::Dialed { id, error } => shared.ports.dialed(id, error, fds),
            Message::Ready => {
                // The services start on a thread of their own: their starts and ends are
                // messages this loop delivers.
                let shared = Arc::clone(shared);
                std::thread::spawn(move || {
                    let outcome = bring_up(&shared);
                    if let Some(mut pipe) = shared.ready.lock().expect("not poisoned").take() {
                        use std::io::Write;
                        let _ = match &outcome {
                            Ok(()) => writeln!(pipe, "ok"),
                            Err(why) => write!(pipe, "error\n{why}"),
                        };
                    }
                    match outcome {
                        Ok(()) => shed_start_up_code(),
                        // Nothing of a session that did not come up is left running.
                        Err(_) => {
                            stop_services(&shared);
                            // SAFETY: a signal to this very process.
                            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
                        }
                    }
                });
            }
            Message::Started { id, .. } | Message::Exit { id, .. } => {
                let to = shared
                    .waiting
                    .lock()
                    .expect("not poisoned")
                    .get(&id)
                    .cloned();
                if let Some(to) = to {
                    let _ = to.send(msg);
                }
            }
            _ => {}
        }
    }
    // The init is gone: nothing can join any more; the sandbox ends with it.
    for (_, to) in shared.waiting.lock().expect("not poisoned").drain() {
        let _ = to.send(Message::Exit {
            id: 0,
            code: 1,
            signal: None,
            cause: Some("session-ended".into()),
        });
    }
}

fn accept(listener: OwnedFd, shared: &Arc<Shared>) {
    loop {
        let conn = match nix::sys::socket::accept4(
            listener.as_raw_fd(),
            nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        ) {
            // SAFETY: accept just made this descriptor.
            Ok(fd) => unsafe { OwnedFd::from_raw_fd(fd) },
            Err(nix::Error::EINTR | nix::Error::ECONNABORTED) => continue,
            Err(_) => return,
        };
        // Only this user: the folder is 0700, and the peer's uid is checked besides.
        // SAFETY: getuid cannot fail.
        if wire::peer_uid(&conn) != Some(unsafe { libc::getuid() }) {
            continue;
        }
        let shared = Arc::clone(shared);
        std::thread::spawn(move || serve(conn, &shared));
    }
}

/// One connection: a joined command, a query, or `down`.
fn serve(conn: OwnedFd, shared: &Arc<Shared>) {
    let Ok(Some((msg, fds))) = wire::recv(conn.as_raw_fd()) else {
        return;
    };
    match msg {
        Message::Exec(exec) => {
            let code = run_joined(shared, &conn, exec, fds);
            let _ = code;
        }
        Message::Query => {
            let _ = wire::send(conn.as_raw_fd(), &Message::Facts(shared.facts.clone()), &[]);
        }
        Message::Forward { inside, host } => {
            let error = match fds.into_iter().next() {
                Some(fd) => shared.ports.add(inside, host, fd).err(),
                None => Some("no listener came with the request".into()),
            };
            let _ = wire::send(conn.as_raw_fd(), &Message::Forwarded { error }, &[]);
        }
        Message::Unforward { inside } => {
            shared.ports.remove(inside);
            let _ = wire::send(conn.as_raw_fd(), &Message::Forwarded { error: None }, &[]);
        }
        Message::Down => {
            stop_services(shared);
            // The main thread's run ends the sandbox on TERM, and cleans up after it.
            // SAFETY: a signal to this very process.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        }
        _ => {}
    }
}

/// Runs `exec` in the session for the joiner at `conn`; returns its exit code once the
/// joiner has it.
fn run_joined(
    shared: &Arc<Shared>,
    conn: &OwnedFd,
    mut exec: Exec,
    fds: Vec<OwnedFd>,
) -> Option<u8> {
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    if let Err(why) = expand(shared, &mut exec) {
        let _ = wire::send(
            conn.as_raw_fd(),
            &Message::Started {
                id,
                pid: None,
                error: Some(why),
            },
            &[],
        );
        return None;
    }
    if exec.kind == "shell"
        && fds
            .first()
            .is_some_and(|f| nix::unistd::isatty(f).unwrap_or(false))
    {
        exec.argv = with_terminal(shared, std::mem::take(&mut exec.argv));
    }
    let (tx, rx) = channel();
    shared.waiting.lock().expect("not poisoned").insert(id, tx);
    let events = shared.ws.loop_events(&shared.rec.id);
    let started = Instant::now();
    let timeout = exec.timeout_ms.map(Duration::from_millis);
    let kind = exec.kind.clone();
    let command = exec.argv.clone();
    exec.timeout_ms = None;
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    // An attached terminal gets the bell of notifications.
    let bell = (kind == "attach")
        .then(|| fds.get(1).and_then(|f| f.try_clone().ok()))
        .flatten();
    let sent = wire::send(shared.init.as_raw_fd(), &Message::Spawn { id, exec }, &raw);
    drop(fds);
    if sent.is_err() {
        shared.waiting.lock().expect("not poisoned").remove(&id);
        let _ = wire::send(
            conn.as_raw_fd(),
            &Message::Started {
                id,
                pid: None,
                error: Some("the loop's session is ending".into()),
            },
            &[],
        );
        return None;
    }
    if kind == "attach" {
        if let Some(out) = bell {
            shared
                .attached
                .lock()
                .expect("not poisoned")
                .push((id, out));
        }
        write_state(shared);
    }
    let _ = events::append(
        &events,
        "start",
        json!({"joined": true, "kind": kind, "command": command}),
    );
    // What the joiner sends from now on: signals for the command; its end (the joiner was
    // killed, its terminal closed) ends the command, as a fresh run ends with its parent.
    // The last signal the joiner forwarded: a command it ended was ended by a signal to
    // `git-loop`, as a fresh run's is.
    let forwarded = Arc::new(std::sync::atomic::AtomicI32::new(0));
    {
        let shared = Arc::clone(shared);
        let forwarded = Arc::clone(&forwarded);
        let conn = conn.as_raw_fd();
        let dup = nix::unistd::dup(unsafe { std::os::fd::BorrowedFd::borrow_raw(conn) });
        std::thread::spawn(move || {
            let Ok(conn) = dup else { return };
            loop {
                match wire::recv(conn.as_raw_fd()) {
                    Ok(Some((Message::Signal { signal, .. }, _))) => {
                        if signal != libc::SIGWINCH {
                            forwarded.store(signal, Ordering::Relaxed);
                        }
                        let _ = wire::send(
                            shared.init.as_raw_fd(),
                            &Message::Signal { id, signal },
                            &[],
                        );
                    }
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => {
                        let _ = wire::send(
                            shared.init.as_raw_fd(),
                            &Message::Signal {
                                id,
                                signal: libc::SIGKILL,
                            },
                            &[],
                        );
                        return;
                    }
                }
            }
        });
    }
    let deadline = timeout.map(|t| started + t);
    let mut cause = None;
    let exit = loop {
        let msg = match deadline {
            Some(d) if cause.is_none() => {
                match rx.recv_timeout(d.saturating_duration_since(Instant::now())) {
                    Ok(m) => m,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        cause = Some("timeout".to_string());
                        let _ = wire::send(
                            shared.init.as_raw_fd(),
                            &Message::Signal {
                                id,
                                signal: libc::SIGKILL,
                            },
                            &[],
                        );
                        continue;
                    }
                    Err(_) => break None,
                }
            }
            _ => match rx.recv() {
                Ok(m) => m,
                Err(_) => break None,
            },
        };
        match msg {
            Message::Started { error: Some(_), .. } => {
                let _ = wire::send(conn.as_raw_fd(), &msg, &[]);
            }
            Message::Exit { .. } => break Some(msg),
            _ => {}
        }
    };
    shared.waiting.lock().expect("not poisoned").remove(&id);
    let Some(Message::Exit {
        code,
        signal,
        cause: ended,
        ..
    }) = exit
    else {
        return None;
    };
    let cause = cause.or(ended).or_else(|| {
        signal
            .filter(|s| *s == forwarded.load(Ordering::Relaxed))
            .map(|_| "signal".to_string())
    });
    let code = if cause.as_deref() == Some("timeout") {
        super::timer::TIMED_OUT
    } else {
        code
    };
    let mut event = json!({"joined": true, "kind": kind, "code": code, "duration_ms": started.elapsed().as_millis() as u64});
    // `signal` is the signal to `git-loop` that ended the run (as in a fresh run's
    // events); a command that died of another signal has it as `exit_signal`.
    if let Some(sig) = signal {
        let field = if cause.as_deref() == Some("signal") {
            "signal"
        } else {
            "exit_signal"
        };
        event[field] = json!(crate::sandbox::signal_name(sig));
    }
    if let Some(cause) = &cause {
        event["cause"] = json!(cause);
    }
    let _ = events::append(&events, "exit", event);
    if kind == "attach" {
        shared
            .attached
            .lock()
            .expect("not poisoned")
            .retain(|(i, _)| *i != id);
        write_state(shared);
    }
    if kind == "agent" {
        set_state(shared, Kind::Exited, Some(code));
    }
    if kind == "agent-detach" && code == 0 {
        let shared = Arc::clone(shared);
        std::thread::spawn(move || follow_agent(&shared));
    }
    let _ = wire::send(
        conn.as_raw_fd(),
        &Message::Exit {
            id,
            code,
            signal,
            cause,
        },
        &[],
    );
    // What the command committed reaches the origins, as after a run: a joiner that waits
    // for its command (`run`, `shell`, `agent`) imports itself and says what the import
    // found; for the others the supervisor does, after the joiner has its answer.
    if !matches!(kind.as_str(), "run" | "shell" | "agent") {
        let _ = crate::loops::import(&shared.ws, &shared.rec);
    }
    // The import's code is not the idle session's either.
    if shared.waiting.lock().expect("not poisoned").is_empty() {
        shed_start_up_code();
    }
    Some(code)
}

/// What a joiner's kind of command runs in the session: `run` and `shell` as given; the
/// agent with its command line and profile; the detached agent and `attach` through the
/// session's tmux.
///
/// tmux, not a terminal layer of git-loop's own: several clients on one screen, detaching
/// and reattaching, resizing, scrollback and a terminal state kept right across all of
/// them is what tmux has done well for years, and its server lives inside the sandbox
/// (its socket in the session's private /tmp), so it is confined like everything else there.
fn expand(shared: &Shared, exec: &mut Exec) -> std::result::Result<(), String> {
    let no_agent = || {
        "the agent (agent.command) is not installed on this host; the session has none".to_string()
    };
    let tmux = || {
        shared
            .tmux
            .clone()
            .ok_or_else(|| "tmux is not installed on this host (apt-get install tmux)".to_string())
    };
    let with_tmux = |rest: &[&str]| -> std::result::Result<Vec<String>, String> {
        let mut line = vec![tmux()?, "-S".into(), super::TMUX_SOCKET.into()];
        line.extend(rest.iter().map(|s| s.to_string()));
        Ok(line)
    };
    let args = std::mem::take(&mut exec.argv);
    match exec.kind.as_str() {
        "run" | "shell" => exec.argv = args,
        "agent" => {
            let (argv, mut env) = shared.agent.clone().ok_or_else(no_agent)?;
            env.extend(crate::agent::stop_state_env(&args));
            exec.argv = argv.into_iter().chain(args).collect();
            exec.env = env;
            exec.interactive = true;
            exec.timeout_ms = exec
                .timeout_ms
                .or(shared.agent_time.map(|t| t.as_millis() as u64));
        }
        "agent-detach" => {
            let (argv, env) = shared.agent.clone().ok_or_else(no_agent)?;
            // The pane stays when the agent ends (its status is tmux's to tell) and tmux
            // itself signals the end: the follower (`follow_agent`) waits for that.
            let mut line = with_tmux(&[
                "-f",
                "/dev/null",
                "start-server",
                ";",
                "set-option",
                "-g",
                "remain-on-exit",
                "on",
                ";",
                "set-hook",
                "-g",
                "pane-died",
                &format!("wait-for -S {AGENT_ENDED}"),
                ";",
                "new-session",
                "-d",
                "-s",
                super::TMUX_TARGET,
                "-x",
                "160",
                "-y",
                "48",
            ])?;
            for (k, v) in env.into_iter().chain(crate::agent::stop_state_env(&args)) {
                line.push("-e".into());
                line.push(format!("{k}={v}"));
            }
            // Through env(1): tmux runs a command of several words as it is, never
            // through a shell (one word it would give to `sh -c`); env execs the agent, so
            // the pane's process, and the status tmux keeps of it, are the agent's own.
            line.extend(["--".into(), "env".into(), "--".into()]);
            line.extend(argv);
            line.extend(args);
            exec.argv = line;
        }
        "agent-running" => exec.argv = with_tmux(&["has-session", "-t", super::TMUX_TARGET])?,
        "attach" => {
            exec.argv = with_tmux(&["attach-session", "-t", super::TMUX_TARGET])?;
            exec.interactive = true;
        }
        other => return Err(format!("no such kind of command: {other}")),
    }
    Ok(())
}

/// A joined shell on a terminal gets a terminal of its own inside the session, with it
/// as its controlling terminal: job control (Ctrl-Z, `fg`), Ctrl-C to the foreground job
/// only, and `tty` naming a device, as in a fresh sandbox. The joiner's terminal cannot be
/// it (it is the controlling terminal of the user's session on the host, and a terminal
/// has one session), so util-linux's script(1) makes a pseudo-terminal, puts the joiner's
/// terminal in raw mode and relays between them, and passes window sizes on (the joiner
/// forwards SIGWINCH to it): a well-kept tool rather than a relay of our own. Without
/// script the shell runs as before, on the joiner's terminal without job control.
fn with_terminal(shared: &Shared, argv: Vec<String>) -> Vec<String> {
    let Some(script) = &shared.script else {
        return argv;
    };
    // script runs its command with `$SHELL -c`: each word quoted, nothing of it a shell's.
    let line = argv
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    vec![
        script.clone(),
        "--quiet".into(),
        "--return".into(),
        "--command".into(),
        format!("exec {line}"),
        "/dev/null".into(),
    ]
}

/// The tmux channel the session's tmux signals when the agent's pane dies.
const AGENT_ENDED: &str = "git-loop-agent-ended";

/// Follows the detached agent from its start to its end: waits for its pane to die (tmux
/// signals it), reads the agent's own exit status from tmux, ends its tmux session, and
/// records the end: the state `exited` with the agent's code, an exit event, the import
/// of what it committed. `[limits] time` is enforced here: at the deadline the agent's
/// process group gets SIGTERM (SIGKILL 5 s later), the code is 124 and the exit event
/// says `cause: "timeout"`.
fn follow_agent(shared: &Arc<Shared>) {
    let started = Instant::now();
    let tmux = |rest: &[&str]| -> Vec<String> {
        let mut line = vec![
            shared.tmux.clone().unwrap_or_default(),
            "-S".into(),
            super::TMUX_SOCKET.into(),
        ];
        line.extend(rest.iter().map(|s| s.to_string()));
        line
    };
    let pane_pid = tmux(&[
        "display-message",
        "-p",
        "-t",
        super::TMUX_TARGET,
        "#{pane_pid}",
    ]);
    // The pane's process: asked again for a moment while tmux is still making the pane
    // (a time limit must never be lost because the first look came too early).
    let look = {
        let shared = Arc::clone(shared);
        move || {
            for _ in 0..50 {
                match inside(&shared, pane_pid.clone()) {
                    None => return None,
                    Some((_, out)) => {
                        if let Ok(pid) = out.trim().parse::<u32>() {
                            return Some(pid);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            None
        }
    };
    let pane = look();
    let timed_out = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let timer = match shared.agent_time {
        Some(limit) => {
            let shared = Arc::clone(shared);
            let timed_out = Arc::clone(&timed_out);
            Some(super::timer::Timer::arm_with(limit, move || {
                let Some(pid) = pane.or_else(look) else {
                    return;
                };
                timed_out.store(true, Ordering::Relaxed);
                // The pane's process leads its process group (tmux makes it so).
                let group = format!("-{pid}");
                inside(
                    &shared,
                    vec!["kill".into(), "-TERM".into(), "--".into(), group.clone()],
                );
                std::thread::sleep(Duration::from_secs(5));
                inside(
                    &shared,
                    vec!["kill".into(), "-KILL".into(), "--".into(), group],
                );
            }))
        }
        _ => None,
    };
    let dead_status = tmux(&[
        "display-message",
        "-p",
        "-t",
        super::TMUX_TARGET,
        "#{pane_dead_status} #{pane_dead_signal}",
    ]);
    let reap = tmux(&["run-shell", "true"]);
    // tmux's signal, and every 2 s a look at the pane's status: tmux 3.3 does not always
    // mark a pane dead (nor run its hook) when its program ends, while the status of the
    // program it reaped is there either way.
    let (tx, rx) = channel();
    {
        let shared = Arc::clone(shared);
        let wait = tmux(&["wait-for", AGENT_ENDED]);
        std::thread::spawn(move || {
            let _ = tx.send(inside(&shared, wait).is_some());
        });
    }
    // Once tmux signalled, its status is there; a few looks more at most.
    let mut signalled = 0;
    let status = loop {
        if signalled == 0 {
            match rx.recv_timeout(Duration::from_secs(2)) {
                Ok(true) => signalled = 1,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                // The session ended first: its end is the agent's.
                Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
            }
        } else if signalled > 20 {
            break String::new();
        } else {
            signalled += 1;
            std::thread::sleep(Duration::from_millis(100));
        }
        match inside(shared, dead_status.clone()) {
            None => return,
            Some((_, out)) if !out.trim().is_empty() => break out,
            // No word from tmux: it may have missed the agent's end. Debian's tmux writes
            // the utmp record of a new pane through libutempter, which sets SIGCHLD to its
            // default while it waits for its helper: an agent that ends then (one that
            // ends at once) is never reaped, its pane never dead, its hook never run. A
            // job of tmux's own brings a SIGCHLD, on which tmux reaps every child that
            // ended (the agent's too), so the next look has the agent's status.
            Some(_) if signalled == 0 => {
                if inside(shared, reap.clone()).is_none() {
                    return;
                }
                match inside(shared, dead_status.clone()) {
                    None => return,
                    Some((_, out)) if !out.trim().is_empty() => break out,
                    Some(_) => {}
                }
            }
            Some(_) => {}
        }
    };
    let fired =
        timer.map(super::timer::Timer::stop).unwrap_or(false) || timed_out.load(Ordering::Relaxed);
    inside(shared, tmux(&["kill-session", "-t", super::TMUX_TARGET]));
    // What tmux says is read strictly: a number, or nothing.
    let mut words = status.split_whitespace();
    let (code, signal) = match (
        words.next().and_then(|w| w.parse::<i32>().ok()),
        words.next().and_then(|w| w.parse::<i32>().ok()),
    ) {
        (Some(c), _) => (c.clamp(0, 255) as u8, None),
        (None, Some(sig)) => ((128 + sig).clamp(0, 255) as u8, Some(sig)),
        // Only a signal number: tmux prints an empty status first.
        _ => match status.trim().parse::<i32>() {
            Ok(sig) => ((128 + sig).clamp(0, 255) as u8, Some(sig)),
            Err(_) => (1, None),
        },
    };
    let code = if fired { super::timer::TIMED_OUT } else { code };
    let mut event = json!({
        "joined": true,
        "kind": "agent",
        "detached": true,
        "code": code,
        "duration_ms": started.elapsed().as_millis() as u64,
    });
    if let Some(sig) = signal {
        event["exit_signal"] = json!(crate::sandbox::signal_name(sig));
    }
    if fired {
        event["cause"] = json!("timeout");
    }
    let _ = events::append(&shared.ws.loop_events(&shared.rec.id), "exit", event);
    set_state(shared, Kind::Exited, Some(code));
    let _ = crate::loops::import(&shared.ws, &shared.rec);
}

/// Runs `argv` in the session for the supervisor itself (stdin and stderr /dev/null);
/// its exit code and the first 4 KiB of its output, or `None` when the session ended.
fn inside(shared: &Shared, argv: Vec<String>) -> Option<(u8, String)> {
    use std::io::Read;
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok()?;
    let null = std::fs::File::open("/dev/null").ok()?;
    let (tx, rx) = channel();
    shared.waiting.lock().expect("not poisoned").insert(id, tx);
    let exec = Exec {
        kind: "supervisor".into(),
        argv,
        ..Default::default()
    };
    let sent = wire::send(
        shared.init.as_raw_fd(),
        &Message::Spawn { id, exec },
        &[null.as_raw_fd(), write.as_raw_fd(), null.as_raw_fd()],
    );
    drop(write);
    let mut out = String::new();
    if sent.is_ok() {
        let _ = std::fs::File::from(read)
            .take(4096)
            .read_to_string(&mut out);
    }
    let code = sent.ok().and_then(|_| loop {
        match rx.recv() {
            Ok(Message::Exit { cause: Some(_), .. }) | Err(_) => break None,
            Ok(Message::Exit { code, .. }) => break Some(code),
            Ok(_) => continue,
        }
    });
    shared.waiting.lock().expect("not poisoned").remove(&id);
    code.map(|c| (c, out))
}

/// Records the agent's new state, tells `list` and `watch` (the state file), and the
/// person (notifications) when it is one to tell; then the loop's events, last (what reads
/// them knows that everything before was done).
fn set_state(shared: &Arc<Shared>, kind: Kind, code: Option<u8>) {
    {
        let mut s = shared.state.lock().expect("not poisoned");
        s.state = Some(kind);
        s.code = code;
        s.since = crate::loops::now_rfc3339();
    }
    write_state(shared);
    let told = kind.notifies() && shared.notify.enabled;
    if told {
        let label = shared.state.lock().expect("not poisoned").label();
        *shared.notice.lock().expect("not poisoned") = Some(label);
        shared.notice_ready.notify_one();
    }
    let mut event = json!({"state": kind.as_str(), "notified": told});
    if let Some(code) = code {
        event["code"] = json!(code);
    }
    record(shared, STATES, "state", event);
}

/// Which of [`Shared::recorded`] counts an event.
const STATES: usize = 0;
const REFUSED_STATES: usize = 1;
/// Events of each kind written per session: an agent that rewrites its state file as fast
/// as it is looked at cannot fill the disk with them.
const MAX_RECORDED: u64 = 10_000;

/// Appends `event` to the loop's events unless [`MAX_RECORDED`] of its kind were written
/// in this session; the last one says so.
fn record(shared: &Shared, which: usize, kind: &str, mut event: serde_json::Value) {
    let Some(last) = shared.recorded[which].next(MAX_RECORDED) else {
        return;
    };
    if last {
        event["more"] = json!("further events of this kind in this session are not recorded");
    }
    let _ = events::append(&shared.ws.loop_events(&shared.rec.id), kind, event);
}

/// How many events of one kind a session wrote.
#[derive(Default)]
struct Recorded(AtomicU64);

impl Recorded {
    /// Counts one more: `None` when `max` were written already, else whether it is the
    /// last that may be.
    fn next(&self, max: u64) -> Option<bool> {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        (n < max).then_some(n + 1 == max)
    }
}

/// Writes the state file, with the count of attached terminals.
fn write_state(shared: &Shared) {
    let attached = shared.attached.lock().expect("not poisoned").len() as u32;
    let mut s = shared.state.lock().expect("not poisoned");
    s.attached = attached;
    super::state::write(&shared.ws, &shared.rec.id, &s);
}

/// What the hooks inside write, looked at every 100 ms (see `session::state`): a new write
/// (a new time or a new word) is a change of state; something new there that is no state
/// (a link, a FIFO, an oversized file, a word not of the vocabulary) is refused, once, as
/// a violation event.
fn watch_inside(shared: &Arc<Shared>) {
    use super::state::Inside;
    let mut last = super::state::look_inside(&shared.ws, &shared.rec.id);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = super::state::look_inside(&shared.ws, &shared.rec.id);
        if now != last {
            match &now {
                Some(Inside::State((kind, code), _)) => set_state(shared, *kind, *code),
                Some(Inside::Refused { why, .. }) => record(
                    shared,
                    REFUSED_STATES,
                    "violation",
                    json!({
                        "action": "agent-state",
                        "target": super::state::inside_path_in_sandbox(&shared.rec.id),
                        "reason": why,
                    }),
                ),
                None => {}
            }
        }
        last = now;
    }
}

/// The shortest time between two notifications of a session: an agent that rewrites its
/// state file as fast as it is looked at gets the person told at most this often, of its
/// latest state.
const NOTIFY_INTERVAL: Duration = Duration::from_secs(2);
/// The longest a notification's command may run; it is ended then.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(10);

/// Tells the person each state [`set_state`] leaves in [`Shared::notice`], one at a time
/// and at most every [`NOTIFY_INTERVAL`]: states that came meanwhile are replaced by the
/// latest, so however often the sandbox changes its state the host runs one command at a
/// time, and a bounded number of them.
fn notifier(shared: &Arc<Shared>) {
    loop {
        let label = {
            let mut pending = shared.notice.lock().expect("not poisoned");
            loop {
                if let Some(label) = pending.take() {
                    break label;
                }
                pending = shared.notice_ready.wait(pending).expect("not poisoned");
            }
        };
        notify(shared, &label);
        std::thread::sleep(NOTIFY_INTERVAL);
    }
}

/// Tells the person: the operator's `notify.command` with the loop's id, title and state
/// as arguments (never through a shell), else `notify-send` where it exists; and a bell on
/// every attached terminal. The command is waited for, at most [`NOTIFY_TIMEOUT`].
fn notify(shared: &Shared, label: &str) {
    for (_, out) in shared.attached.lock().expect("not poisoned").iter() {
        let _ = nix::unistd::write(out, b"\x07");
    }
    let id = shared.rec.id.clone();
    let title = shared.rec.title.clone();
    let mut cmd = match shared.notify.command.split_first() {
        Some((program, rest)) => {
            let mut c = std::process::Command::new(program);
            c.args(rest).args([&id, &title, &label.to_string()]);
            c
        }
        None => {
            let Some(send) = crate::sandbox::probe::which(
                "notify-send",
                &std::env::var("PATH").unwrap_or_default(),
            ) else {
                return;
            };
            let mut c = std::process::Command::new(send);
            c.args([
                format!("git loop: {id} {label}"),
                crate::terminal::visible(&title).into_owned(),
            ]);
            c
        }
    };
    cmd.stdin(std::process::Stdio::null());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("git-loop: cannot notify: {e}");
            return;
        }
    };
    let until = Instant::now() + NOTIFY_TIMEOUT;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() >= until {
            eprintln!("git-loop: the notification command ran past {NOTIFY_TIMEOUT:?}: ended");
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lets go of the pages of program code the start touched (reading the config layers, the
/// vault, building the spec), which an idle supervisor never runs again: most of its
/// resident memory is those pages, mapped from the binary. Only executable mappings of
/// files are dropped, which are never written: whatever runs later is read back from the
/// file (the page cache) as it is needed.
fn shed_start_up_code() {
    let Ok(maps) = crate::fsutil::read_proc("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        let mut fields = line.split_whitespace();
        let (Some(range), Some(perms), Some(_), Some(_), Some(inode)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        if perms != "r-xp" || inode == "0" {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        // SAFETY: a read-only, executable, file-backed private mapping of this process:
        // its pages are the file's, never modified, and fault back in from it.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
    }
}

/// Starts `exec` in the session with `stdio`; its number and where its start and end are
/// told, or why it could not start.
fn spawn_inside(
    shared: &Shared,
    exec: Exec,
    stdio: &[RawFd],
) -> std::result::Result<(u64, Receiver<Message>), String> {
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = channel();
    shared.waiting.lock().expect("not poisoned").insert(id, tx);
    let forget = || {
        shared.waiting.lock().expect("not poisoned").remove(&id);
    };
    if wire::send(shared.init.as_raw_fd(), &Message::Spawn { id, exec }, stdio).is_err() {
        forget();
        return Err("the loop's session is ending".into());
    }
    match rx.recv() {
        Ok(Message::Started { error: None, .. }) => Ok((id, rx)),
        Ok(Message::Started {
            error: Some(why), ..
        }) => {
            forget();
            Err(why)
        }
        _ => {
            forget();
            Err("the loop's session ended".into())
        }
    }
}

/// Whether something listens on `port` of the session's loopback (the init looks).
fn probe(shared: &Shared, port: u16) -> bool {
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = channel();
    shared.waiting.lock().expect("not poisoned").insert(id, tx);
    let sent = wire::send(shared.init.as_raw_fd(), &Message::Probe { id, port }, &[]).is_ok();
    let answer = sent
        .then(|| rx.recv_timeout(Duration::from_secs(5)).ok())
        .flatten();
    shared.waiting.lock().expect("not poisoned").remove(&id);
    matches!(answer, Some(Message::Exit { code: 0, .. }))
}

/// Starts the profile's services in order, each until it is ready, then runs `start`;
/// the error (for `up`) names what failed, with the tail of its log.
fn bring_up(shared: &Arc<Shared>) -> std::result::Result<(), String> {
    use super::services::{failure, open_bounded_log, settle, START};
    use crate::config::profile::Ready;
    let (ws, id) = (&shared.ws, shared.rec.id.as_str());
    let null = std::fs::File::open("/dev/null").map_err(|e| e.to_string())?;
    for svc in &shared.services {
        let (log, copied) = open_bounded_log(ws, id, &svc.name).map_err(|e| e.to_string())?;
        let exec = Exec {
            kind: "service".into(),
            argv: svc.command.clone(),
            env: svc.env.clone(),
            ..Exec::default()
        };
        let fds = [null.as_raw_fd(), log.as_raw_fd(), log.as_raw_fd()];
        let (num, rx) = spawn_inside(shared, exec, &fds)
            .map_err(|why| format!("service {} did not start: {why}", svc.name))?;
        set_service(shared, &svc.name, Phase::Starting, None);
        let _ = events::append(
            &ws.loop_events(id),
            "service",
            json!({"name": svc.name, "state": "started"}),
        );
        let until = Instant::now() + svc.timeout;
        let ended = |code: u8| {
            failure(
                ws,
                id,
                &svc.name,
                &format!(
                    "service {} exited (code {code}) before it was ready",
                    svc.name
                ),
            )
        };
        loop {
            if let Ok(Message::Exit { code, .. }) = rx.try_recv() {
                shared.waiting.lock().expect("not poisoned").remove(&num);
                set_service(shared, &svc.name, Phase::Exited, Some(code));
                settle(log, &copied);
                return Err(ended(code));
            }
            let ready = match &svc.ready {
                Ready::Started => true,
                Ready::Port(port) => probe(shared, *port),
                Ready::Command(argv) => {
                    let exec = Exec {
                        kind: "ready".into(),
                        argv: argv.clone(),
                        env: svc.env.clone(),
                        ..Exec::default()
                    };
                    match spawn_inside(shared, exec, &fds) {
                        Ok((check, crx)) => {
                            let left = until.saturating_duration_since(Instant::now());
                            let answer = crx.recv_timeout(left.max(Duration::from_millis(100)));
                            shared.waiting.lock().expect("not poisoned").remove(&check);
                            match answer {
                                Ok(Message::Exit { code, .. }) => code == 0,
                                _ => {
                                    let _ = wire::send(
                                        shared.init.as_raw_fd(),
                                        &Message::Signal {
                                            id: check,
                                            signal: libc::SIGKILL,
                                        },
                                        &[],
                                    );
                                    false
                                }
                            }
                        }
                        Err(_) => false,
                    }
                }
            };
            if ready {
                break;
            }
            if Instant::now() >= until {
                shared
                    .running
                    .lock()
                    .expect("not poisoned")
                    .push((svc.name.clone(), num, rx));
                return Err(failure(
                    ws,
                    id,
                    &svc.name,
                    &format!(
                        "service {} was not ready within {} s",
                        svc.name,
                        svc.timeout.as_secs()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        set_service(shared, &svc.name, Phase::Ready, None);
        let _ = events::append(
            &ws.loop_events(id),
            "service",
            json!({"name": svc.name, "state": "ready"}),
        );
        watch_service(shared, &svc.name, num, rx);
    }
    if let Some(start) = &shared.start {
        let (log, copied) = open_bounded_log(ws, id, START).map_err(|e| e.to_string())?;
        let exec = Exec {
            kind: "start".into(),
            argv: start.clone(),
            ..Exec::default()
        };
        let fds = [null.as_raw_fd(), log.as_raw_fd(), log.as_raw_fd()];
        let (num, rx) = spawn_inside(shared, exec, &fds)
            .map_err(|why| format!("the profile's start did not start: {why}"))?;
        let code = match rx.recv() {
            Ok(Message::Exit { code, .. }) => code,
            _ => 1,
        };
        shared.waiting.lock().expect("not poisoned").remove(&num);
        let _ = events::append(
            &ws.loop_events(id),
            "hook",
            json!({"hook": "start", "code": code}),
        );
        if code != 0 {
            settle(log, &copied);
            return Err(failure(
                ws,
                id,
                START,
                &format!("the profile's start failed (exit code {code})"),
            ));
        }
    }
    Ok(())
}

/// Records service `name`'s new state, for `list` and `show`.
fn set_service(shared: &Shared, name: &str, state: Phase, code: Option<u8>) {
    let mut states = shared.service_states.lock().expect("not poisoned");
    let now = crate::loops::now_rfc3339();
    match states.iter_mut().find(|s| s.name == name) {
        Some(s) => {
            s.state = state;
            s.ready = state == Phase::Ready;
            s.code = code;
            s.since = now;
        }
        None => states.push(super::services::ServiceState {
            name: name.to_string(),
            state,
            ready: state == Phase::Ready,
            code,
            since: now,
            log: super::services::log_path(&shared.ws, &shared.rec.id, name),
        }),
    }
    super::services::write_states(&shared.ws, &shared.rec.id, &states);
}

/// Keeps ready service `name` (command `num`) among the running ones, and watches for its
/// end: one that ends by itself, not asked by `down`, is recorded as `exited` with its
/// code (and an event says so). Its messages go on to the receiver `down` waits on.
fn watch_service(shared: &Arc<Shared>, name: &str, num: u64, rx: Receiver<Message>) {
    let (tx, forwarded) = std::sync::mpsc::channel();
    shared
        .running
        .lock()
        .expect("not poisoned")
        .push((name.to_string(), num, forwarded));
    let shared = Arc::clone(shared);
    let name = name.to_string();
    std::thread::spawn(move || {
        // Ends when `down` lets go of the command (its sender is dropped then).
        for msg in rx {
            if let Message::Exit { code, .. } = &msg {
                let asked = shared
                    .service_states
                    .lock()
                    .expect("not poisoned")
                    .iter()
                    .any(|s| s.name == name && s.state == Phase::Stopping);
                if !asked {
                    set_service(&shared, &name, Phase::Exited, Some(*code));
                    let _ = events::append(
                        &shared.ws.loop_events(&shared.rec.id),
                        "service",
                        json!({"name": name, "state": "exited", "code": code}),
                    );
                }
            }
            if tx.send(msg).is_err() {
                return;
            }
        }
    });
}

/// Stops the running services in the reverse order of their start: TERM to each one's
/// own process, KILL to its group after [`super::services::STOP_GRACE`].
fn stop_services(shared: &Shared) {
    let running = std::mem::take(&mut *shared.running.lock().expect("not poisoned"));
    for (name, num, rx) in running.into_iter().rev() {
        let signal = |id, signal, stop: bool| {
            let msg = if stop {
                Message::Stop { id, signal }
            } else {
                Message::Signal { id, signal }
            };
            let _ = wire::send(shared.init.as_raw_fd(), &msg, &[]);
        };
        {
            let mut states = shared.service_states.lock().expect("not poisoned");
            if let Some(s) = states.iter_mut().find(|s| s.name == name) {
                // One that ended by itself keeps saying so.
                if s.state != Phase::Exited {
                    s.state = Phase::Stopping;
                    s.ready = false;
                    s.since = crate::loops::now_rfc3339();
                }
            }
            super::services::write_states(&shared.ws, &shared.rec.id, &states);
        }
        signal(num, libc::SIGTERM, true);
        let ended = loop {
            match rx.recv_timeout(super::services::STOP_GRACE) {
                Ok(Message::Exit { .. }) => break true,
                Ok(_) => continue,
                Err(_) => break false,
            }
        };
        if !ended {
            signal(num, libc::SIGKILL, false);
        }
        shared.waiting.lock().expect("not poisoned").remove(&num);
        let _ = events::append(
            &shared.ws.loop_events(&shared.rec.id),
            "service",
            json!({"name": name, "state": "stopped", "killed": !ended}),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::Recorded;

    #[test]
    fn events_of_a_kind_are_counted_up_to_their_bound_and_the_last_says_so() {
        let r = Recorded::default();
        let taken: Vec<Option<bool>> = (0..5).map(|_| r.next(3)).collect();
        assert_eq!(taken, [Some(false), Some(false), Some(true), None, None]);
    }
}
