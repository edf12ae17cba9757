//! Doing what a [`RunPlan`] says, and nothing it does not: the supervisor's side of one
//! run, from the loop's run lock to the recorded exit.
//!
//! A sandboxed run, in this order, each step a function of its own:
//!
//! 1. [`hold_loop`]: the loop's run lock, held shared for the whole run as every live run
//!    holds it. Taken exclusively first where it can be: no run of the loop is alive
//!    then, so git's lock files in the loop's repositories are a killed run's (removed,
//!    said in one line) and runs whose exit nobody recorded are recorded
//!    ([`record::settle_held`]). Before anything of this run exists, so nothing of it can
//!    own what is removed.
//! 2. [`prepare_host`]: the loop's folders and its repositories' git folders, made ready
//!    (what a fresh sandbox needs on the host).
//! 3. [`hand_over`]: the plan's descriptors, opened in its order (without following a
//!    link below their roots; git-loop's own files written first), the vault's files
//!    from memory, then the seccomp programs ([`seccomp_fds`]), then the proxy's channel.
//!    All before the proxy and the cgroups, so a descriptor that cannot be had refuses the
//!    run before anything needs undoing.
//! 4. [`start_proxy`], in the proxy mode: it must be ready before the sandbox starts,
//!    since the spawner hands it the listeners it makes in the sandbox's network.
//! 5. The limits ([`super::limits::apply`]): the run's cgroups, made before the fork so
//!    the child joins them before it makes any namespace.
//! 6. The status line and the start event ([`record::started`]): said and recorded
//!    only once everything that could refuse the run has been done.
//! 7. [`super::spawn::run`]: bwrap starts and is waited for; killed runs' cgroups are
//!    swept meanwhile.
//! 8. The teardown ([`tear_down`]), in this order: whatever is left in the run's cgroups
//!    is killed (nothing of the sandbox runs past this point); the spawner's mount
//!    namespace is let go (its teardown overlaps the sandbox's); the vault's values are
//!    dropped; the proxy stops; the descriptors close; the exit is recorded, once-grants
//!    spent and the loop's branches imported ([`finish`]); last, the cgroups are waited
//!    for and removed, which waits on the kernel's teardown of the sandbox, so it is
//!    overlapped with everything before it.
//!
//! A run that joins a sandbox that is already up needs steps 1, 3's seccomp programs and
//! vault, 5, 6, 7 and 8 but not 2, 3's mounts or 4. A host run (`--backend none`,
//! [`on_host`]): 1, the loop's folders, the start event, the command, [`finish`].

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::Instant;

use secrecy::SecretString;

use super::plan::{Descriptor, OnHost, ProxyPlan, RunPlan, Sandboxed};
use super::record::{self, Cause, ExitEvent};
use super::setup::{confined_fd, data_fd, ensure_dirs, make_places, prepare_repos, Roots};
use super::spawn::EndedBy;
use super::spec::SandboxSpec;
use super::{bwrap, limits, seccomp, signal_name, SandboxError};
use crate::egress::intercept::Tls;
use crate::error::{Error, ErrorKind, Result};
use crate::fsutil::Lock;
use crate::loops::{self, LoopRecord};
use crate::report::Report;
use crate::vault::Delivery;
use crate::workspace::Workspace;

/// Runs `plan`, with the vault's values from `delivery` and the run's CA `tls` (which
/// the plan never holds); returns the command's exit code.
pub fn execute(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    plan: &RunPlan,
    delivery: Delivery,
    tls: Option<Arc<Tls>>,
) -> Result<u8> {
    let _hold = hold_loop(report, ws, rec)?;
    match &plan.how {
        super::plan::How::Host(host) => on_host(report, ws, rec, plan, host, &delivery.env),
        super::plan::How::Sandbox(sandboxed) => {
            in_sandbox(report, ws, rec, plan, sandboxed, delivery, tls)
        }
    }
}

/// Step 1: the loop's run lock, shared; see the module's header.
pub fn hold_loop(report: &mut dyn Report, ws: &Workspace, rec: &LoopRecord) -> Result<Lock> {
    // Only the folders changed since the last start's walk are listed (`cache.rs`).
    let before = super::cache::lock_walks(ws, &rec.id);
    let Some((stale, walks)) =
        loops::stale_git_locks_since(ws, rec, &before, Some(super::cache::RACY))?
    else {
        // A run of the loop is alive: the lock files are its own.
        return Lock::acquire_shared(&ws.loop_run_lock(&rec.id));
    };
    super::cache::keep_lock_walks(ws, &rec.id, &before, &walks);
    record::settle_held(ws, &rec.id, stale.hold());
    let failed = stale.remove();
    for (path, e) in &failed {
        report.warn(&format!("cannot remove the stale {}: {e}", path.display()))?;
    }
    let removed: Vec<String> = stale
        .files
        .iter()
        .filter(|f| !failed.iter().any(|(p, _)| p == *f))
        .map(|f| {
            f.strip_prefix(ws.loop_dir(&rec.id))
                .unwrap_or(f)
                .display()
                .to_string()
        })
        .collect();
    if !removed.is_empty() {
        report.status(&format!(
            "git-loop: removed what a killed run of loop {} left in its repositories (no run of the loop is alive to own it): {}",
            rec.id,
            removed.join(", ")
        ))?;
    }
    stale.share()
}

/// Step 2: the loop's folders, and its repositories' git folders ready (see
/// [`prepare_repos`]).
pub fn prepare_host(report: &mut dyn Report, ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    ensure_dirs(ws, &rec.id)?;
    prepare_repos(report, ws, rec)
}

/// What bwrap is handed: the descriptors (kept open until the sandbox has ended), their
/// numbers as its argv names them, and the proxy's channel.
pub struct Handed {
    pub keep: Vec<OwnedFd>,
    pub fds: bwrap::Fds,
    /// The proxy's end of its channel and the spawner's (which never reaches the sandbox).
    pub channel: Option<(std::os::unix::net::UnixStream, OwnedFd)>,
    /// Why sources were left out of the view (a link, a FIFO), to be said before the run.
    pub left_out: Vec<String>,
    /// The read end of the creation supervisor's report pipe (`[filesystem] deny_create`).
    pub report: Option<std::fs::File>,
}

/// Step 3: the descriptors of `sandboxed` ([`open_descriptors`]), the seccomp programs
/// ([`seccomp_fds`]) and the proxy's channel.
pub fn hand_over(
    loop_id: &str,
    spec: &SandboxSpec,
    sandboxed: &Sandboxed,
    delivery: &Delivery,
) -> Result<Handed> {
    let (mut keep, mut fds, left_out) = open_descriptors(loop_id, spec, sandboxed, delivery)?;
    for fd in seccomp_fds()? {
        fds.seccomp.push(fd.as_raw_fd());
        keep.push(fd);
    }
    // The creation supervisor's refusals come back on a pipe of their own (its write end
    // reaches init through bwrap, like every descriptor kept).
    let report = match spec.supervised() {
        false => None,
        true => {
            let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| {
                Error::new(
                    ErrorKind::SandboxUnavailable,
                    "cannot set up the creation supervisor",
                )
                .with_source(std::io::Error::from(e))
            })?;
            fds.report = Some(write.as_raw_fd());
            keep.push(write);
            Some(std::fs::File::from(read))
        }
    };
    let channel = match sandboxed.proxy {
        Some(_) => {
            let (host_end, sandbox_end) = std::os::unix::net::UnixStream::pair().map_err(|e| {
                Error::new(
                    ErrorKind::SandboxUnavailable,
                    "cannot set up the network proxy",
                )
                .with_source(e)
            })?;
            Some((host_end, OwnedFd::from(sandbox_end)))
        }
        None => None,
    };
    Ok(Handed {
        keep,
        fds,
        channel,
        left_out,
        report,
    })
}

/// The plan's descriptors, opened in its order, with the vault's files from `delivery`:
/// what a fresh sandbox mounts. The descriptors to keep open until the sandbox has ended,
/// and their numbers by path inside, and why optional sources were left out. The folders of
/// the built-in list a run needs and does not find are made first (`make_places`).
pub fn open_descriptors(
    loop_id: &str,
    spec: &SandboxSpec,
    sandboxed: &Sandboxed,
    delivery: &Delivery,
) -> Result<(Vec<OwnedFd>, bwrap::Fds, Vec<String>)> {
    let mut keep = Vec::new();
    let mut fds = bwrap::Fds::default();
    let mut left_out = make_places(&spec.fs_policy);
    let mut roots = Roots::default();
    for d in &sandboxed.descriptors {
        let fd = match d {
            Descriptor::Mount(m) => confined_fd(m, loop_id, &mut left_out, &mut roots)?,
            Descriptor::Data {
                inside,
                content,
                over_file,
            } => {
                // Over a regular file only (the view has the host's /etc).
                let fits =
                    !over_file || std::fs::symlink_metadata(inside).is_ok_and(|m| m.is_file());
                match fits {
                    true => Some(data_fd("git-loop-data", content.as_bytes()).map_err(|e| {
                        Error::failure(format!("cannot hand {} to the sandbox", inside.display()))
                            .with_source(e)
                    })?),
                    false => None,
                }
            }
            Descriptor::VaultFile { rel, .. } => {
                let cannot = || {
                    Error::failure(format!(
                        "cannot hand the vault file {} to the sandbox",
                        rel.display()
                    ))
                };
                let (_, contents) = delivery
                    .files
                    .iter()
                    .find(|(r, _)| r == rel)
                    .ok_or_else(cannot)?;
                Some(data_fd("git-loop-vault", contents).map_err(|e| cannot().with_source(e))?)
            }
        };
        if let Some(fd) = fd {
            fds.files.insert(d.inside().to_path_buf(), fd.as_raw_fd());
            keep.push(fd);
        }
    }
    Ok((keep, fds, left_out))
}

/// The mounts the spawner lays itself ([`bwrap::Laid`]), taken out of what bwrap is
/// handed: each with its descriptor where it is a descriptor mount (which then never
/// reaches bwrap nor the sandbox). A bind by path is laid only where its place on the host
/// is there without a link below its carrier (bwrap would make a missing one). None where
/// the spawner cannot ([`super::spawn::can_lay`]), nor without git-loop's init in the
/// sandbox: init asks for them and holds the command until they are laid (spawn.rs,
/// `Layer`), which bwrap's own init would not.
pub fn lay_aside(
    spec: &SandboxSpec,
    bwrap: &std::path::Path,
    handed: &mut Handed,
) -> Vec<(Option<OwnedFd>, bwrap::Laid)> {
    use super::spec::Mount;
    if spec.init.is_none() || !super::spawn::can_lay(bwrap) {
        return Vec::new();
    }
    let planned = bwrap::laid(&spec.mounts, |m, carrier, rel| match m {
        Mount::Confined { inside, .. } | Mount::OwnFile { inside, .. } => {
            handed.fds.files.contains_key(inside)
        }
        // The place and each folder on the way to it below the carrier.
        Mount::Bind { .. } => {
            let mut at = carrier.to_path_buf();
            rel.components().all(|c| {
                at.push(c);
                std::fs::symlink_metadata(&at).is_ok_and(|m| !m.file_type().is_symlink())
            })
        }
        _ => false,
    });
    let mut laid = Vec::new();
    for l in planned {
        if l.source.is_some() {
            handed.fds.laid.insert(l.inside.clone());
            laid.push((None, l));
            continue;
        }
        let fd = handed.fds.files.get(&l.inside).copied();
        let at = fd.and_then(|fd| handed.keep.iter().position(|k| k.as_raw_fd() == fd));
        let Some(at) = at else { continue };
        handed.fds.laid.insert(l.inside.clone());
        laid.push((Some(handed.keep.swap_remove(at)), l));
    }
    laid
}

/// What the sandbox's init checks of a laid mount (init.rs): the file or folder the layer
/// will lay there, by device and inode: the descriptor's, or a bind's source as the layer
/// opens it (links followed). `None` for an optional source that is absent, which the
/// layer leaves out as bwrap would; a source otherwise unreadable is checked against no
/// file (the layer fails on it too, and nothing runs).
fn laid_check(fd: Option<&OwnedFd>, l: &bwrap::Laid) -> Option<super::creation::LaidCheck> {
    use std::os::unix::fs::MetadataExt;
    let found = match (fd, &l.source) {
        (Some(fd), _) => nix::sys::stat::fstat(fd)
            .map(|st| (st.st_dev, st.st_ino))
            .map_err(std::io::Error::from),
        (None, Some((source, optional))) => match std::fs::metadata(source) {
            Err(e) if *optional && e.kind() == std::io::ErrorKind::NotFound => return None,
            found => found.map(|m| (m.dev(), m.ino())),
        },
        (None, None) => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
    };
    let (dev, ino) = found
        .map(|(d, ino)| ((libc::major(d), libc::minor(d)), ino))
        .unwrap_or(((u32::MAX, u32::MAX), 0));
    Some(super::creation::LaidCheck {
        inside: l.inside.clone(),
        rw: l.rw,
        dev,
        ino,
    })
}

/// The seccomp programs, one descriptor each, for bwrap to apply last.
pub fn seccomp_fds() -> Result<Vec<OwnedFd>> {
    seccomp::fds().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot build the seccomp filter",
        )
        .with_source(e)
    })
}

/// Step 4: the run's proxy on `channel`; it ends TLS toward the bound entries' hosts with
/// `tls` when the plan says so, with the sentinels taken from `delivery`. What it says while
/// the run goes on (its first failure toward a host) goes to `notice`.
pub fn start_proxy(
    ws: &Workspace,
    rec: &LoopRecord,
    proxy: &ProxyPlan,
    channel: std::os::unix::net::UnixStream,
    delivery: &mut Delivery,
    tls: Option<Arc<Tls>>,
    notice: Option<crate::report::LiveWarnings>,
) -> Result<crate::egress::proxy::Proxy> {
    let (sentinels, tls) = match (proxy.intercept, tls) {
        (true, Some(tls)) => (
            crate::egress::sentinel::Sentinels::new(std::mem::take(&mut delivery.sentinels)),
            Some(tls),
        ),
        _ => Default::default(),
    };
    let setup = crate::egress::proxy::Setup {
        policy: proxy.policy.clone(),
        token: proxy.token.clone(),
        events: ws.loop_events(&rec.id),
        sentinels,
        tls,
        loop_id: rec.id.clone(),
        notice,
    };
    crate::egress::proxy::Proxy::start(channel, setup).map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot start the network proxy",
        )
        .with_source(e)
    })
}

fn in_sandbox(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    plan: &RunPlan,
    sandboxed: &Sandboxed,
    mut delivery: Delivery,
    tls: Option<Arc<Tls>>,
) -> Result<u8> {
    prepare_host(report, ws, rec)?;
    let mut handed = hand_over(&rec.id, &plan.spec, sandboxed, &delivery)?;
    for why in &handed.left_out {
        report.warn(why)?;
    }
    let laid = lay_aside(&plan.spec, &sandboxed.bwrap, &mut handed);
    // The channel on which the sandbox's init asks for the laid mounts (spawn.rs, `Layer`):
    // its end reaches init through bwrap; the other stays here, for the layer.
    let layer = if laid.is_empty() {
        None
    } else {
        let (init_end, layer_end) = std::os::unix::net::UnixStream::pair().map_err(|e| {
            Error::new(ErrorKind::SandboxUnavailable, "cannot start the sandbox").with_source(e)
        })?;
        let init_end = OwnedFd::from(init_end);
        handed.fds.layer = Some((
            init_end.as_raw_fd(),
            laid.iter()
                .filter_map(|(fd, l)| laid_check(fd.as_ref(), l))
                .collect(),
        ));
        handed.keep.push(init_end);
        Some(OwnedFd::from(layer_end))
    };
    let argv = bwrap::argv(&sandboxed.bwrap.to_string_lossy(), &plan.spec, &handed.fds);
    let (channel, spawner_end) = match handed.channel {
        Some((host, spawner)) => (Some(host), Some(spawner)),
        None => (None, None),
    };
    // Dropped (and so stopped) on every early return.
    let proxy = match (channel, &sandboxed.proxy) {
        (Some(channel), Some(p)) => Some(start_proxy(
            ws,
            rec,
            p,
            channel,
            &mut delivery,
            tls,
            report.live_warnings(),
        )?),
        _ => None,
    };
    // Refusals of the creation supervisor, recorded as they come (see creation.rs).
    let refusals = handed.report.map(|from| {
        let events = ws.loop_events(&rec.id);
        let rules = super::refusals::RuleMap::of(&plan.spec);
        std::thread::spawn(move || {
            super::refusals::record_refusals(from, &events, MAX_RECORDED_REFUSALS, &rules)
        })
    });
    let applied = limits::apply(
        &plan.spec.limits,
        &limits::run_cgroup_name(&rec.id),
        &limits::CgroupHost::read(),
        super::probe::is_root(),
    )
    .map_err(SandboxError::Limits)?;
    report.status(&sandboxed.status(&applied.enforcement))?;
    let mut start = plan.start.clone();
    start.limits = Some(applied.enforcement.as_str().to_string());
    record::started(ws, &rec.id, &start);
    crate::failpoint::hit("run:started");
    let started = Instant::now();
    // `--timeout`: ends the sandbox from a thread of its own (see `crate::session::timer`).
    let timer = plan.timeout.map(crate::session::timer::Timer::arm);
    let ended = super::spawn::run(
        &plan.spec,
        &argv,
        &handed.keep,
        &plan.inherit_fds,
        spawner_end.as_ref(),
        &applied,
        ws.root(),
        &delivery.env,
        &laid,
        layer,
        // The sandbox takes milliseconds to set itself up, which this process would spend
        // waiting: the sweep of killed runs' cgroups is done then.
        || applied.sweep_killed(),
    );
    drop(spawner_end);
    // Whether the time limit ended it: stopped now, so it cannot fire past this point.
    let timed_out = match (timer.map(|t| t.stop()), plan.timeout) {
        (Some(true), Some(limit)) => Some(limit),
        _ => None,
    };
    tear_down(TearDown {
        timed_out,
        report,
        ws,
        rec,
        run: &plan.start.run,
        applied,
        ended,
        delivery,
        proxy,
        keep: handed.keep,
        refusals,
        started,
    })
}

/// At most this many of a run's creation refusals are recorded in `events.jsonl`.
pub const MAX_RECORDED_REFUSALS: usize = 200;

/// What is left of a run when bwrap has returned.
struct TearDown<'a> {
    /// The time limit that ended the run, if one did.
    timed_out: Option<std::time::Duration>,
    report: &'a mut dyn Report,
    ws: &'a Workspace,
    rec: &'a LoopRecord,
    run: &'a str,
    applied: limits::Applied,
    ended: std::result::Result<super::spawn::Ended, super::spawn::SpawnError>,
    delivery: Delivery,
    proxy: Option<crate::egress::proxy::Proxy>,
    keep: Vec<OwnedFd>,
    /// The thread recording the creation supervisor's refusals; it ends when the last
    /// write end of their pipe closes.
    refusals: Option<std::thread::JoinHandle<u64>>,
    started: Instant,
}

/// Step 8, in the order the module's header gives.
fn tear_down(t: TearDown<'_>) -> Result<u8> {
    let TearDown {
        timed_out,
        report,
        ws,
        rec,
        run,
        applied,
        ended,
        delivery,
        proxy,
        keep,
        refusals,
        started,
    } = t;
    // Nothing of the sandbox runs past this point; the kernel's teardown of its
    // namespaces overlaps with the work below, and `cleanup` waits for its end, so no
    // process of the run is left when the run returns.
    applied.kill();
    // Letting the spawner's mount namespace go now tears it down alongside the sandbox's.
    let ended = ended.map(|ended| {
        drop(ended.namespace);
        (ended.status, ended.by)
    });
    drop(delivery);
    let refused = proxy.map(|p| p.stop().refusals.load(std::sync::atomic::Ordering::Relaxed));
    drop(keep);
    let created = refusals.and_then(|t| t.join().ok());
    let outcome = (|| {
        if let Some(n @ 1..) = refused {
            report.status(&format!(
                "git-loop: the network policy refused {n} connection{} (`git loop log {}` lists them)",
                if n == 1 { "" } else { "s" },
                rec.id
            ))?;
        }
        if let Some(n @ 1..) = created {
            report.status(&format!(
                "git-loop: the filesystem policy refused {n} call{} (`git loop log {}` lists them)",
                if n == 1 { "" } else { "s" },
                rec.id
            ))?;
        }
        let (status, by) = ended.map_err(|e| {
            let e = Error::new(ErrorKind::SandboxUnavailable, "the sandbox failed to start")
                .with_source(e);
            not_started(ws, rec, run, crate::values::Backend::Bwrap, &e);
            e
        })?;
        let (cause, code) = match timed_out {
            Some(limit) => (
                Cause::Timeout {
                    limit: crate::session::timer::human(limit),
                },
                crate::session::timer::TIMED_OUT,
            ),
            _ => (cause(by.as_ref(), status), exit_code(by.as_ref(), status)),
        };
        if let Some(line) = cause.said() {
            report.status(&line)?;
        }
        finish(
            report,
            ws,
            rec,
            Ended {
                run,
                backend: crate::values::Backend::Bwrap,
                code,
                cause,
                started,
            },
        )
    })();
    applied.cleanup();
    outcome
}

/// Records that run `run` never started, with why.
fn not_started(
    ws: &Workspace,
    rec: &LoopRecord,
    run: &str,
    backend: crate::values::Backend,
    e: &Error,
) {
    record::ended(
        ws,
        &rec.id,
        &ExitEvent {
            run: run.to_string(),
            backend,
            code: None,
            duration_ms: None,
            cause: Cause::NotStarted {
                error: e.one_line(),
            },
        },
    );
}

/// How a run ended, as its supervisor saw it.
pub struct Ended<'a> {
    pub run: &'a str,
    pub backend: crate::values::Backend,
    pub code: u8,
    pub cause: Cause,
    pub started: Instant,
}

/// What ended a run: a signal to `git-loop` (`by`, from its handler) or its parent's end,
/// else what bwrap's `status` says.
pub fn cause(by: Option<&EndedBy>, status: std::process::ExitStatus) -> Cause {
    match (by, status.signal()) {
        (
            Some(EndedBy {
                parent_ended: Some(parent),
                signal,
                ..
            }),
            _,
        ) => Cause::ParentEnded {
            parent: *parent,
            signal: signal_name(*signal),
        },
        (Some(by), _) => Cause::Signal {
            signal: signal_name(by.signal),
            from: by.from,
        },
        (None, Some(sig)) => Cause::SandboxKilled {
            signal: signal_name(sig),
        },
        (None, None) => Cause::Exit,
    }
}

/// The run's exit code: 128 + the signal that ended it (to `git-loop`, as for a shell's
/// child, or to bwrap), else bwrap's, which is the command's.
pub fn exit_code(by: Option<&EndedBy>, status: std::process::ExitStatus) -> u8 {
    match (by.map(|b| b.signal), status.code(), status.signal()) {
        (Some(sig), _, _) | (None, None, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
        (None, Some(c), _) => c.clamp(0, 255) as u8,
        _ => 1,
    }
}

/// After the command: the exit recorded, once-grants spent, the loop's branches imported.
pub fn finish(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    ended: Ended<'_>,
) -> Result<u8> {
    record::ended(
        ws,
        &rec.id,
        &ExitEvent {
            run: ended.run.to_string(),
            backend: ended.backend,
            code: Some(ended.code),
            duration_ms: Some(ended.started.elapsed().as_millis() as u64),
            cause: ended.cause,
        },
    );
    crate::failpoint::hit("run:exit-recorded");
    // Grants for one run are spent. (No workspace lock: `autocommit` holds it while its
    // sandboxed commits run, and the record is replaced atomically.)
    if rec.grants.iter().any(|g| g.once) {
        if let Ok(mut fresh) = loops::load(ws, &rec.id) {
            fresh.grants.retain(|g| !g.once);
            let _ = fresh.write(&ws.loop_record(&rec.id));
        }
    }
    // What the run committed reaches the origins now; a failure here is reported but
    // does not hide the command's own exit code.
    if let Err(e) = loops::import(ws, rec) {
        report.problem("", &e)?;
    }
    Ok(ended.code)
}

/// `--backend none`: the command on the host, as `host` says.
pub fn on_host(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    plan: &RunPlan,
    host: &OnHost,
    secret_env: &[(String, SecretString)],
) -> Result<u8> {
    ensure_dirs(ws, &rec.id)?;
    let (program, args) = host
        .command
        .split_first()
        .ok_or_else(|| Error::usage("no command to run"))?;
    record::started(ws, &rec.id, &plan.start);
    let started = Instant::now();
    let status = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(&host.env)
        .envs(secret_env.iter().map(|(k, v)| {
            use secrecy::ExposeSecret;
            (k.as_str(), v.expose_secret())
        }))
        .current_dir(&host.cwd)
        .status();
    let status = match status {
        Ok(status) => status,
        Err(source) => {
            let e = SandboxError::HostCommand {
                program: program.to_string(),
                source,
            }
            .into();
            not_started(ws, rec, &plan.start.run, crate::values::Backend::None, &e);
            return Err(e);
        }
    };
    let cause = cause(None, status);
    finish(
        report,
        ws,
        rec,
        Ended {
            run: &plan.start.run,
            backend: crate::values::Backend::None,
            code: exit_code(None, status),
            cause,
            started,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::ExitStatus;

    /// What init is told to find at a laid mount's path: the file the host's descriptor
    /// holds, or a bind's source (links followed); an optional source that is absent is
    /// not laid, so not checked; any other unreadable source is checked against no file.
    #[test]
    fn init_checks_each_laid_mount_against_what_the_host_lays() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink(&file, dir.path().join("link")).unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let id = (
            (libc::major(meta.dev()), libc::minor(meta.dev())),
            meta.ino(),
        );
        let laid = |source: Option<(&str, bool)>| bwrap::Laid {
            inside: "/in/w/.git/config".into(),
            rw: false,
            carrier: dir.path().into(),
            rel: "config".into(),
            source: source.map(|(p, optional)| (dir.path().join(p), optional)),
        };
        let of = |c: crate::sandbox::creation::LaidCheck| ((c.dev, c.ino), c.inside, c.rw);
        let fd = OwnedFd::from(std::fs::File::open(&file).unwrap());
        let want = (id, std::path::PathBuf::from("/in/w/.git/config"), false);
        assert_eq!(
            laid_check(Some(&fd), &laid(None)).map(of),
            Some(want.clone())
        );
        assert_eq!(
            laid_check(None, &laid(Some(("link", false)))).map(of),
            Some(want)
        );
        assert!(laid_check(None, &laid(Some(("absent", true)))).is_none());
        let none = laid_check(None, &laid(Some(("absent", false)))).unwrap();
        assert_eq!((none.dev, none.ino), ((u32::MAX, u32::MAX), 0));
    }

    fn by(signal: i32, from: Option<i32>, parent_ended: Option<i32>) -> EndedBy {
        EndedBy {
            signal,
            from,
            parent_ended,
        }
    }

    #[test]
    fn the_cause_is_what_the_supervisor_saw() {
        let exited = ExitStatus::from_raw(7 << 8);
        let killed = ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(cause(None, exited), Cause::Exit);
        assert_eq!(exit_code(None, exited), 7);
        // bwrap killed from elsewhere.
        assert_eq!(
            cause(None, killed),
            Cause::SandboxKilled {
                signal: "KILL".into()
            }
        );
        assert_eq!(exit_code(None, killed), 137);
        // A TERM to git-loop, which then killed bwrap itself.
        let term = by(libc::SIGTERM, Some(4242), None);
        assert_eq!(
            cause(Some(&term), killed),
            Cause::Signal {
                signal: "TERM".into(),
                from: Some(4242)
            }
        );
        assert_eq!(exit_code(Some(&term), killed), 143);
        // The front end's end: the kernel's HUP, and the parent named, not the HUP.
        let front = by(libc::SIGHUP, Some(99), Some(99));
        assert_eq!(
            cause(Some(&front), killed),
            Cause::ParentEnded {
                parent: 99,
                signal: "HUP".into()
            }
        );
        assert_eq!(exit_code(Some(&front), killed), 129);
        // A HUP from a hung-up terminal (the kernel's, no sender) is a signal.
        assert_eq!(
            cause(Some(&by(libc::SIGHUP, None, None)), killed),
            Cause::Signal {
                signal: "HUP".into(),
                from: None
            }
        );
    }
}
