//! One run of a command in a loop's sandbox, from the spec to the exit: the supervisor's side.

use super::*;

/// Runs `req.command` in the loop's sandbox; returns the command's exit code.
pub fn run(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
) -> Result<u8> {
    let requested = req.backend.unwrap_or(config.settings().sandbox.backend);
    let inputs = probe::Inputs::read();
    let backend = select_backend(requested, &probe::quick(&inputs))?;
    // Held for the whole run: the git lock files in the loop's repositories are this
    // run's to own while it lives (see `loops::stale_git_locks`).
    let _run_lock = crate::fsutil::Lock::acquire_shared(&ws.loop_run_lock(&rec.id))?;
    // Vaults still in the personal tree (where they lived before) would be in view.
    crate::vault::migrate_and_say(report, ws)?;
    // The vault is decrypted in memory; its files go to bwrap by descriptor, its variables
    // by environment (see spawn.rs), and neither is written anywhere.
    let mut delivery = crate::vault::open_for_run(ws, &rec.vault)?;
    if config.settings().vault.require_binding && !delivery.plaintext.is_empty() {
        return Err(unbound_refused(&rec.vault, &delivery.plaintext));
    }
    let vault_files: Vec<PathBuf> = delivery.files.iter().map(|(rel, _)| rel.clone()).collect();
    crate::toolchains::make_shared_caches(ws, config);
    let net = req
        .net
        .or_else(|| NetMode::parse(&rec.network))
        .unwrap_or(NetMode::None);
    // Bound entries: the proxy ends TLS toward their hosts with a CA of this run's, made
    // here (its key stays in this process) and trusted inside.
    let tls = if delivery.sentinels.is_empty() || net != NetMode::Proxy || backend == Backend::None
    {
        None
    } else {
        Some(std::sync::Arc::new(run_ca(rec, config.settings())?))
    };
    let trust = tls.as_ref().map(|t| trust_of(t.ca_pem()));
    let (spec, policy) = spec_and_policy(ws, rec, config, req, vault_files, trust)?;
    for warning in &spec.warnings {
        report.warn(warning)?;
    }
    if !delivery.sentinels.is_empty() && tls.is_none() {
        report.warn(&format!(
            "vault {}'s bound entries ({}) get their placeholders only: their values go out through the proxy alone, which this run does not have (--net proxy)",
            rec.vault,
            delivery.bound.join(", ")
        ))?;
    }
    if let Some(policy) = &policy {
        for s in &delivery.sentinels {
            if !s.binding.hosts.iter().any(|h| {
                policy
                    .allowed()
                    .iter()
                    .any(|a| patterns_meet(&a.pattern, &h.pattern))
            }) {
                report.warn(&format!(
                    "{} is bound to {}, which this run's allowlist does not admit",
                    s.entry,
                    s.hosts_text()
                ))?;
            }
        }
    }
    let vault_label = if delivery.is_empty() {
        "no vault".to_string()
    } else if delivery.bound.is_empty() {
        format!(
            "vault {} ({} plaintext)",
            rec.vault,
            delivery.plaintext.len()
        )
    } else {
        format!(
            "vault {} ({} plaintext, {} bound)",
            rec.vault,
            delivery.plaintext.len(),
            delivery.bound.len()
        )
    };
    if backend == Backend::None {
        if !delivery.files.is_empty() {
            return Err(SandboxError::FilesOnHost(rec.vault.clone()).into());
        }
        return run_on_host(report, ws, rec, &spec, req, &delivery.env);
    }
    let bwrap_path = inputs.bwrap.clone().expect("the probe found bwrap");
    let seccomp_fds = seccomp::fds().map_err(|e| {
        Error::new(
            ErrorKind::SandboxUnavailable,
            "cannot build the seccomp filter",
        )
        .with_source(e)
    })?;
    let mut keep: Vec<std::os::fd::OwnedFd> = seccomp_fds;
    let mut fds = bwrap::Fds {
        seccomp: keep.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect(),
        ..Default::default()
    };
    // Bind sources below trees a sandbox can write are opened here, following no link,
    // and bwrap binds the descriptors (DESIGN 4.0); git-loop's own files there are
    // written first.
    ensure_dirs(ws, &rec.id)?;
    prepare_repos(report, ws, rec)?;
    let mut left_out = Vec::new();
    for m in &spec.mounts {
        if let Some(fd) = confined_fd(m, &mut left_out)? {
            fds.files.insert(
                m.inside().to_path_buf(),
                std::os::fd::AsRawFd::as_raw_fd(&fd),
            );
            keep.push(fd);
        }
    }
    for m in &spec.mounts {
        if let spec::Mount::Data { inside, content } = m {
            // Over a regular file only (see `Mount::Data`); the view has the host's /etc.
            // Below /loopat/ it is a file of git-loop's own on the sandbox's fresh root,
            // where nothing of the host is.
            let over_file = std::fs::symlink_metadata(inside).is_ok_and(|m| m.is_file());
            if over_file || inside.starts_with(spec::LOOPAT) {
                let fd = data_fd(content).map_err(|e| {
                    Error::failure(format!("cannot hand {} to the sandbox", inside.display()))
                        .with_source(e)
                })?;
                fds.files
                    .insert(inside.clone(), std::os::fd::AsRawFd::as_raw_fd(&fd));
                keep.push(fd);
            }
        }
    }
    // The proxy's channel: the spawner hands the proxy ports it made in the sandbox's
    // network namespace over it (its end never reaches the sandbox).
    let mut channel = None;
    let mut spawner_end = None;
    if spec.net == NetMode::Proxy {
        let (host_end, sandbox_end) = std::os::unix::net::UnixStream::pair().map_err(|e| {
            Error::new(
                ErrorKind::SandboxUnavailable,
                "cannot set up the network proxy",
            )
            .with_source(e)
        })?;
        spawner_end = Some(std::os::fd::OwnedFd::from(sandbox_end));
        channel = Some(host_end);
    }
    for (rel, contents) in &delivery.files {
        let fd = seccomp::memfd("git-loop-vault")
            .and_then(|fd| {
                let mut f = std::fs::File::from(fd);
                use std::io::{Seek, Write};
                f.write_all(contents)?;
                f.seek(std::io::SeekFrom::Start(0))?;
                Ok(std::os::fd::OwnedFd::from(f))
            })
            .map_err(|e| {
                Error::failure("cannot hand a vault file to the sandbox").with_source(e)
            })?;
        fds.files.insert(
            spec.home_inside.join(rel),
            std::os::fd::AsRawFd::as_raw_fd(&fd),
        );
        keep.push(fd);
    }
    let argv = bwrap::argv(&bwrap_path.to_string_lossy(), &spec, &fds);
    if req.print_argv {
        report.result(&bwrap::display(&argv))?;
        return Ok(0);
    }
    // Ready before the sandbox starts; dropped (and so stopped) on every early return.
    let proxy = match (channel, &spec.egress, policy) {
        (Some(channel), Some(egress), Some(policy)) => {
            let sentinels = match &tls {
                Some(_) => {
                    crate::egress::sentinel::Sentinels::new(std::mem::take(&mut delivery.sentinels))
                }
                None => Default::default(),
            };
            let setup = crate::egress::proxy::Setup {
                policy,
                token: egress.token.clone(),
                events: ws.loop_events(&rec.id),
                sentinels,
                tls: tls.clone(),
                loop_id: rec.id.clone(),
                notice: report.live_warnings(),
            };
            Some(
                crate::egress::proxy::Proxy::start(channel, setup).map_err(|e| {
                    Error::new(
                        ErrorKind::SandboxUnavailable,
                        "cannot start the network proxy",
                    )
                    .with_source(e)
                })?,
            )
        }
        _ => None,
    };
    let cgroup_name = limits::run_cgroup_name(&rec.id);
    let applied = limits::apply(
        &spec.limits,
        &cgroup_name,
        &limits::CgroupHost::read(),
        inputs.is_root,
    )
    .map_err(SandboxError::Limits)?;
    let net_label = match &spec.egress {
        Some(e) => format!("proxy ({} domains)", e.domains),
        None => spec.net.as_str().to_string(),
    };
    let mut status = format!(
        "git-loop: sandbox bwrap · net {} · {} · mode {}",
        net_label,
        vault_label,
        spec.mode.as_str()
    );
    if !spec.toolchains.is_empty() {
        status.push_str(&format!(" · toolchains {}", spec.toolchains.join(", ")));
    }
    if applied.enforcement == limits::Enforcement::None {
        status.push_str(" · NO LIMITS (best-effort)");
    }
    report.status(&status)?;
    let events = ws.loop_events(&rec.id);
    let mut start = json!({"backend": "bwrap", "mode": spec.mode.as_str(), "net": spec.net.as_str(),
               "limits": applied.enforcement.as_str(), "command": spec.command});
    if let Some(e) = &spec.egress {
        start["domains"] = json!(e.domains);
    }
    if !spec.toolchains.is_empty() {
        start["toolchains"] = json!(spec.toolchains);
    }
    let _ = events::append(&events, "start", start);
    let started = Instant::now();
    let result = spawn::run(
        &spec,
        &argv,
        &keep,
        spawner_end.as_ref(),
        &applied,
        ws.root(),
        &delivery.env,
        // The sandbox takes milliseconds to set itself up, which this process would spend
        // waiting: the sweep of killed runs' cgroups is done then.
        || applied.sweep_killed(),
    );
    drop(spawner_end);
    // Nothing of the sandbox runs past this point; the kernel's teardown of its
    // namespaces overlaps with the work below, and `cleanup` waits for its end, so no
    // process of the run is left when `run` returns.
    applied.kill();
    // Letting the spawner's mount namespace go now tears it down alongside the sandbox's.
    let result = result.map(|ended| {
        drop(ended.namespace);
        (ended.status, ended.signal)
    });
    drop(delivery);
    let refused = proxy.map(|p| p.stop().refusals.load(std::sync::atomic::Ordering::Relaxed));
    drop(keep);
    let outcome = (|| {
        if let Some(n @ 1..) = refused {
            report.status(&format!(
                "git-loop: the network policy refused {n} connection{} (`git loop log {}` lists them)",
                if n == 1 { "" } else { "s" },
                rec.id
            ))?;
        }
        let (status, signal) = result.map_err(|e| {
            Error::new(ErrorKind::SandboxUnavailable, "the sandbox failed to start").with_source(e)
        })?;
        if let Some(sig) = signal {
            report.status(&format!("git-loop: SIG{} ended the run", signal_name(sig)))?;
        }
        finish(report, ws, rec, status, signal, started, "bwrap")
    })();
    applied.cleanup();
    outcome
}

pub(super) fn finish(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    status: std::process::ExitStatus,
    signal: Option<i32>,
    started: Instant,
    backend: &str,
) -> Result<u8> {
    // A signal to git-loop that ended the run is the run's end, as for a shell's child.
    let code = match (signal, status.code(), status.signal()) {
        (Some(sig), _, _) | (None, None, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
        (None, Some(c), _) => c.clamp(0, 255) as u8,
        _ => 1,
    };
    let mut exit = json!({"backend": backend, "code": code, "duration_ms": started.elapsed().as_millis() as u64});
    if let Some(sig) = signal {
        exit["signal"] = json!(signal_name(sig));
    }
    let _ = events::append(&ws.loop_events(&rec.id), "exit", exit);
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
    Ok(code)
}

/// `TERM` for SIGTERM and so on, as `kill -l` names them.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().trim_start_matches("SIG").to_string())
        .unwrap_or_else(|_| sig.to_string())
}

/// `--backend none`: the loop's folders and a sanitized environment, no isolation.
pub(super) fn run_on_host(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    spec: &SandboxSpec,
    req: &Request,
    secret_env: &[(String, secrecy::SecretString)],
) -> Result<u8> {
    // Never silenced, not even by --quiet: the user must always see that nothing isolates this run.
    report.notice(&format!(
        "git-loop: NO SANDBOX (--backend none) · running on the host · mode {}",
        spec.mode.as_str()
    ))?;
    if req.print_argv {
        report.result(&bwrap::display(
            &spec.command.iter().map(Into::into).collect::<Vec<_>>(),
        ))?;
        return Ok(0);
    }
    ensure_dirs(ws, &rec.id)?;
    let mut env = spec.env.clone();
    // On the host there is no proxy (and whatever listens on its 127.0.0.1:3128 must not
    // get the token): the proxy variables go.
    for (name, _) in crate::egress::relay::environment("") {
        env.remove(&name);
    }
    // Paths below the sandbox's `$HOME` (a toolchain's cache, PATH entries) are the
    // loop's `$HOME` layer on the host.
    let upper = ws.loop_home_upper(&rec.id);
    // Files that exist only on the sandbox's own root (a toolchain's config of
    // git-loop's making) are not on the host.
    env.retain(|_, value| !value.starts_with(spec::LOOPAT));
    for value in env.values_mut() {
        let parts: Vec<String> = value
            .split(':')
            .map(
                |part| match std::path::Path::new(part).strip_prefix(&spec.home_inside) {
                    Ok(rest) => upper.join(rest).display().to_string(),
                    Err(_) => part.to_string(),
                },
            )
            .collect();
        *value = parts.join(":");
    }
    env.insert("HOME".into(), upper.display().to_string());
    env.insert(
        "CLAUDE_CONFIG_DIR".into(),
        ws.loop_claude_dir(&rec.id).display().to_string(),
    );
    let cwd = if rec.kind == loops::Kind::Distill {
        ws.loop_knowledge(&rec.id)
    } else {
        ws.loop_workdir(&rec.id)
    };
    let _ = events::append(
        &ws.loop_events(&rec.id),
        "start",
        json!({"backend": "none", "mode": spec.mode.as_str(), "net": "host", "command": spec.command}),
    );
    let started = Instant::now();
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| Error::usage("no command to run"))?;
    let status = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(&env)
        .envs(secret_env.iter().map(|(k, v)| {
            use secrecy::ExposeSecret;
            (k.as_str(), v.expose_secret())
        }))
        .current_dir(&cwd)
        .status()
        .map_err(|source| SandboxError::HostCommand {
            program: program.to_string(),
            source,
        })?;
    finish(report, ws, rec, status, None, started, "none")
}
