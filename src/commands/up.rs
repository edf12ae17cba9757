//! `up`, `down`, and the hidden `__supervise` and `__session` of live sessions (see
//! `crate::session`).

use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::process::CommandExt;

use crate::error::{Error, Result};
use crate::loops;
use crate::session;
use crate::ui::Ui;

/// Start a loop's live session: its sandbox stays up until `git loop down`.
///
/// While the session is up, `run`, `shell`, `agent` and `attach` of the loop join it: they
/// see the same view, the same /tmp and each other's processes, with exactly the
/// confinement of a fresh sandbox. Returns once the session is up. Its supervisor runs
/// detached from the terminal (its output goes to loops/ID/session.log); if it dies, the
/// sandbox ends with it.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
}

/// End a loop's live session and everything that runs in it.
#[derive(Debug, clap::Args)]
pub struct DownArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
}

#[derive(Debug, clap::Args)]
pub struct SuperviseArgs {
    pub id: String,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
    /// The pipe `up` waits on.
    #[arg(long)]
    pub ready_fd: Option<i32>,
}

#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    pub fd: i32,
}

pub fn up(ui: &mut Ui, args: UpArgs) -> Result<u8> {
    args.sandbox.check()?;
    if args.sandbox.backend == Some(crate::values::Backend::None) {
        return Err(
            Error::usage("a live session is a sandbox: --backend none has none")
                .hint("drop --backend none"),
        );
    }
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    if session::is_up(&ws, &id) {
        if !session::same_binary(&ws, &id) {
            ui.warn(format!(
                "loop {id}'s session is already up, started by another git-loop binary (an upgrade?): commands of this one do not join it; git loop down {id} && git loop up {id} starts it with this one"
            ))?;
            return Ok(0);
        }
        ui.status(format!("loop {id}'s session is already up"))?;
        return Ok(0);
    }
    // The profile is read here first, so that a mistake in it (its services, its ports) is
    // this command's error with its line, not a line of the supervisor's log; what a layer
    // may not set is said once, by the supervisor, whose start this command relays.
    super::read_sandbox_config(&ws, &rec)?;
    start(ui, &ws, &id, &args.sandbox)?;
    ui.status(format!(
        "loop {id}'s session is up: run, shell and agent join it (git loop down {id} ends it)"
    ))?;
    tell_ports(ui, &ws, &id)?;
    Ok(0)
}

/// The ports the session forwards, and those it could not.
pub fn tell_ports(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str) -> Result<()> {
    let live = crate::ports::read_live(ws, id).unwrap_or_default();
    for l in &live.ports {
        ui.status(format!("port {} is at {}", l.inside, l.url))?;
    }
    for (inside, why) in &live.failed {
        ui.warn(format!(
            "port {inside} is not forwarded: {why} (git loop port {id} {inside} --host PORT picks another)"
        ))?;
    }
    Ok(())
}

/// Starts the supervisor of loop `id`'s session, detached, and waits until the session is
/// up (or says why not).
pub fn start(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    id: &str,
    flags: &super::SandboxFlags,
) -> Result<()> {
    use std::io::Read;
    session::ensure_live_dir(ws).map_err(|e| {
        e.hint(format!(
            "remove it: rm -rf {}",
            session::live_dir(ws).display()
        ))
    })?;
    let log_path = session::log_path(ws, id);
    let log = open_log(&log_path)?;
    let (read_end, write_end) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| Error::failure("cannot start the session").with_source(e))?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::failure("cannot find the git-loop binary").with_source(e))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("__supervise").arg(id);
    if let Some(m) = flags.mode {
        cmd.arg("--mode").arg(crate::choice::Choice::name(m));
    }
    if let Some(n) = flags.net {
        cmd.arg("--net").arg(crate::choice::Choice::name(n));
    }
    if let Some(b) = flags.backend {
        cmd.arg("--backend").arg(crate::choice::Choice::name(b));
    }
    for d in &flags.allow_domain {
        cmd.arg(format!("--allow-domain={d}"));
    }
    let ready = write_end.as_raw_fd();
    cmd.arg("--ready-fd").arg(ready.to_string());
    cmd.stdin(std::process::Stdio::null())
        .stdout(
            log.try_clone()
                .map_err(|e| Error::failure("cannot start the session").with_source(e))?,
        )
        .stderr(log);
    // SAFETY: only system calls between fork and exec. Detached from this process and
    // its terminal: a second fork (the supervisor is not our child, so nothing waits for
    // it or takes it down with us) and a session of its own. The grandchild waits for the
    // middle process to be gone, so the parent it notes at start is the one it keeps.
    unsafe {
        cmd.pre_exec(move || {
            let middle = libc::getpid();
            match libc::fork() {
                -1 => return Err(std::io::Error::last_os_error()),
                0 => {}
                _ => libc::_exit(0),
            }
            while libc::getppid() == middle {
                libc::usleep(500);
            }
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // No signal blocked: a process that joined another session before (the
            // agents of a fan-out's group, detached one after another) has the forwarded
            // signals blocked, and a supervisor that inherited that would never end.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::fcntl(ready, libc::F_SETFD, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut middle = cmd
        .spawn()
        .map_err(|e| Error::failure("cannot start the session's supervisor").with_source(e))?;
    let _ = middle.wait();
    drop(write_end);
    let mut said = String::new();
    let _ = std::fs::File::from(read_end)
        .take(256 << 10)
        .read_to_string(&mut said);
    if said.trim() == "ok" {
        relay_start(ui, &log_path)?;
        return Ok(());
    }
    // A service or the start hook failed: the supervisor takes the session down; `up`
    // returns once nothing of it is left.
    if let Some(why) = said.strip_prefix("error\n") {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while session::is_up(ws, id) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let (what, hint) = why.split_once("\nhint: ").unwrap_or((why, ""));
        let mut err = Error::failure(format!("loop {id}'s session did not come up: {what}"));
        if !hint.is_empty() {
            err = err.hint(hint.to_string());
        }
        return Err(err);
    }
    let tail = log_tail(&log_path);
    let last = tail
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .to_string();
    Err(Error::failure(format!(
        "loop {id}'s session did not come up: {}",
        crate::terminal::visible_lines(&last)
    ))
    .hint(format!("its log: {}", log_path.display())))
}

/// What the supervisor said while it made the sandbox (the layers' warnings, the sandbox's
/// status line): the user of `up` sees them, as the user of a fresh run does.
fn relay_start(ui: &mut Ui, log_path: &std::path::Path) -> Result<()> {
    use std::io::Read;
    // Its start, bounded: what the sandbox prints later follows in the same file.
    let mut bytes = Vec::new();
    if let Ok(Some(file)) = crate::fsutil::open_regular(log_path) {
        let _ = file.take(LOG_TAIL).read_to_end(&mut bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match line.strip_prefix("warning: ") {
            Some(rest) => ui.warn(rest)?,
            None => ui.status(line)?,
        }
    }
    Ok(())
}

/// The end of the supervisor's log: what the sandbox printed is in it, so it can be any
/// size; only its last [`LOG_TAIL`] bytes are read.
fn log_tail(path: &std::path::Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(Some(mut file)) = crate::fsutil::open_regular(path) else {
        return String::new();
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if file
        .seek(SeekFrom::Start(size.saturating_sub(LOG_TAIL)))
        .is_err()
    {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(LOG_TAIL).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The most of the supervisor's log read to say why a session did not come up.
const LOG_TAIL: u64 = 64 << 10;

/// The supervisor's log, `loops/<id>/session.log`: truncated at each start, never opened
/// through a link.
fn open_log(path: &std::path::Path) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::failure(format!("cannot write {}", path.display())).with_source(e))
}

pub fn down(ui: &mut Ui, args: DownArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let ended = session::down(&ws, &id, std::time::Duration::from_secs(30)).map_err(|e| {
        e.hint(format!(
            "its log: {}",
            session::log_path(&ws, &id).display()
        ))
    })?;
    if ended {
        ui.status(format!("loop {id}'s session is down"))?;
    } else {
        ui.status(format!("loop {id} has no session up"))?;
    }
    Ok(0)
}

pub fn supervise(ui: &mut Ui, args: SuperviseArgs) -> Result<u8> {
    // SAFETY: `up` handed this descriptor to this process for it alone.
    let ready = args
        .ready_fd
        .map(|fd| unsafe { std::fs::File::from_raw_fd(fd) });
    let ws = super::workspace()?;
    let rec = loops::load(&ws, &args.id)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    let req = args.sandbox.request(Vec::new(), false, false);
    session::supervisor::supervise(ui, &ws, &rec, &config, req, ready)
}

pub fn session_init(_ui: &mut Ui, args: SessionArgs) -> Result<u8> {
    Ok(session::init::run(args.fd))
}

/// A connection to loop `id`'s live session, `None` when none is up.
/// Refused when the session was started by another git-loop binary (one installed at the
/// same path since, an upgrade): it keeps the binary it started with, and a command of
/// this one may not speak its language.
pub fn connect(ws: &crate::workspace::Workspace, id: &str) -> Result<Option<std::os::fd::OwnedFd>> {
    let conn = session::connect(ws, id).map_err(|e| {
        e.hint(format!(
            "end it and start again: git loop down {id} && git loop up {id}"
        ))
    })?;
    if conn.is_some() && !session::same_binary(ws, id) {
        return Err(Error::failure(format!(
            "loop {id}'s session was started by another git-loop binary (replaced since: an upgrade?); this one does not join it"
        ))
        .hint(format!(
            "end it and start it again with this one: git loop down {id} && git loop up {id}"
        )));
    }
    Ok(conn)
}

/// Runs `exec` in loop `id`'s live session over `conn` (see [`session::join`]), then
/// imports what it committed into the origins, as a fresh run does, saying what the
/// import found. Returns the command's exit code.
pub fn joined(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    id: &str,
    conn: std::os::fd::OwnedFd,
    exec: session::wire::Exec,
) -> Result<u8> {
    ui.status(format!("git-loop: joined loop {id}'s live session"))?;
    let code = session::join(conn, exec)?;
    let rec = loops::load(ws, id)?;
    if let Err(e) = loops::import(ws, &rec) {
        crate::report::Report::problem(ui, "", &e)?;
    }
    Ok(code)
}

/// The refusal of sandbox options for a command that joins a live session, whose sandbox
/// is already made.
pub fn refuse_options(id: &str, flags: &super::SandboxFlags) -> Result<()> {
    let given = flags.mode.is_some()
        || flags.net.is_some()
        || flags.backend.is_some()
        || !flags.allow_domain.is_empty();
    if given {
        return Err(Error::usage(format!(
            "loop {id}'s session is up: its sandbox is made, and --mode, --net, --backend and --allow-domain cannot change it"
        ))
        .hint(format!("drop them to join the session, or end it first: git loop down {id}")));
    }
    Ok(())
}

/// The command line's `TERM`, for a joined command on a terminal.
pub fn term() -> Option<String> {
    std::env::var("TERM")
        .ok()
        .filter(|t| t.len() < 64 && t.bytes().all(|b| b.is_ascii_graphic()))
}
