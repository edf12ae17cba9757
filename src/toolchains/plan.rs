//! What a sandbox gets of the toolchains found and chosen: mounts, PATH, variables, caches; and the report of `doctor`/`show`.

use super::*;

/// The parts of cargo's home that are its cache: shared read-write at the loop's
/// `CARGO_HOME`, with its lock files so the host's cargo and the loops' take turns.
pub(super) const CARGO_SHARED: &[&str] =
    &["registry", "git", ".package-cache", ".package-cache-mutate"];

/// What a run gets of the toolchains: mounts after the `$HOME` bind, PATH entries before
/// the sandbox's own, variables.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub enabled: Vec<Toolchain>,
    pub mounts: Vec<Mount>,
    pub path: Vec<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Enabled toolchains that are left out, and why.
    pub warnings: Vec<String>,
}

/// The mounts, PATH and variables for the toolchains of `choice` among `found`, with the
/// loop's `$HOME` at `home_inside`. Pure.
///
/// Order of the mounts: each toolchain's folders, read-only at their own paths; the
/// shared caches, read-write; then, over all of them, an empty read-only file on every
/// credential file a bound folder holds. The caller puts them after the `$HOME` bind, so
/// where the host's home has the path of the sandbox's `$HOME` (`/home/<user>`), the
/// toolchains are laid over the loop's `$HOME`, not hidden under it.
pub fn plan(host: &Host, found: &[Found], choice: &Choice, home_inside: &Path) -> Plan {
    let mut p = Plan::default();
    let mut same_path: Vec<PathBuf> = Vec::new();
    let mut caches: Vec<Cache> = Vec::new();
    let mut scanned: Vec<PathBuf> = Vec::new();
    for f in found.iter().filter(|f| choice.enable.admits(f.toolchain)) {
        if let Some(why) = &f.refused {
            p.warnings.push(format!(
                "the toolchain {} is left out of the sandbox: {why}",
                f.toolchain
            ));
            continue;
        }
        // Its folders are searched for credential files first: one that cannot be
        // searched to the end leaves the toolchain out, never bound unsearched.
        let mut found_here = Vec::new();
        let mut unsearched = None;
        for b in f.bind.iter().filter(|b| host.is_dir(b)) {
            match host.files.scan(b) {
                Scan::Found(files) => found_here.extend(files),
                Scan::TooMany => unsearched = Some(b.clone()),
            }
        }
        if let Some(b) = unsearched {
            p.warnings.push(format!(
                "the toolchain {} is left out of the sandbox: {} holds more than {} entries within {} levels, too many to search for credential files",
                f.toolchain,
                b.display(),
                super::credentials::ENTRIES,
                super::credentials::DEPTH
            ));
            continue;
        }
        scanned.extend(found_here);
        p.enabled.push(f.toolchain);
        for b in &f.bind {
            p.mounts.push(Mount::Bind {
                host: b.clone(),
                inside: b.clone(),
                rw: false,
                optional: false,
            });
            same_path.push(b.clone());
        }
        for (inside, content) in &f.data {
            p.mounts.push(Mount::Data {
                inside: inside.clone(),
                content: content.clone(),
            });
        }
        p.path.extend(f.path.iter().cloned());
        p.env.extend(f.env.iter().cloned());
        caches.extend(f.toolchain.caches());
    }
    caches.sort();
    caches.dedup();
    for cache in caches {
        let own = home_inside.join(loop_cache(cache));
        let (shared, var) = host_cache(host, cache);
        let refused = host.guard(&shared);
        let usable = choice.caches == Caches::Shared && host.is_dir(&shared);
        if choice.caches == Caches::Shared {
            if let Some(why) = &refused {
                p.warnings
                    .push(format!("the host's cache is not shared: {why}"));
            } else if !usable {
                p.warnings.push(format!(
                    "the host's cache {} is missing: this loop's is its own",
                    shared.display()
                ));
            }
        }
        let share = usable && refused.is_none();
        match cache {
            // CARGO_HOME is the loop's own either way (cargo writes its lock files and
            // its own tracking there); shared, the host's registry and git checkouts are
            // bound into it.
            Cache::Cargo => {
                if share {
                    for part in CARGO_SHARED {
                        let from = shared.join(part);
                        if host.files.kind(&from).is_some() {
                            p.mounts.push(Mount::Bind {
                                host: from,
                                inside: own.join(part),
                                rw: true,
                                optional: false,
                            });
                        }
                    }
                }
                p.env.push((var.into(), own.display().to_string()));
                p.path.push(own.join("bin"));
            }
            Cache::Pip | Cache::Npm => {
                let at = if share {
                    p.mounts.push(Mount::Bind {
                        host: shared.clone(),
                        inside: shared.clone(),
                        rw: true,
                        optional: false,
                    });
                    same_path.push(shared.clone());
                    shared
                } else {
                    own
                };
                p.env.push((var.into(), at.display().to_string()));
            }
        }
    }
    let mut covers = credential_files(host);
    covers.extend(scanned);
    let mut seen = std::collections::BTreeSet::new();
    covers.retain(|f| seen.insert(f.clone()));
    for file in covers {
        let bound = |p: &Path| same_path.iter().any(|b| p.starts_with(b));
        // A link is covered only where it leads inside (a bound folder): elsewhere it
        // leads to nothing inside, and bwrap could not follow it to cover it.
        let reachable = host.files.link(&file).is_none() || bound(&host.files.real(&file));
        if host.is_file(&file) && bound(&file) && reachable {
            // A regular file reads as empty; a link is covered where it leads (bwrap
            // follows it), by /dev/null, which reads as nothing either.
            p.mounts.push(if host.files.link(&file).is_some() {
                Mount::Bind {
                    host: "/dev/null".into(),
                    inside: file,
                    rw: false,
                    optional: false,
                }
            } else {
                Mount::Data {
                    inside: file,
                    content: String::new(),
                }
            });
        }
    }
    p
}

/// The host of this process: `$HOME`, the variables of [`VARS`], the real disk; the
/// workspace, the age identity and the operator config guarded.
pub fn host_from_env(workspace_root: &Path) -> Option<Host<'static>> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())?;
    let env = VARS
        .iter()
        .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
        .collect();
    let mut guarded = vec![Guarded {
        path: workspace_root.to_path_buf(),
        what: "the workspace",
        inside_too: true,
    }];
    if let Ok(paths) = crate::workspace::HostPaths::from_env() {
        guarded.push(Guarded {
            path: paths.identity,
            what: "the age identity",
            inside_too: false,
        });
        guarded.push(Guarded {
            path: paths.operator_config,
            what: "the operator config",
            inside_too: false,
        });
    }
    Some(Host {
        home,
        env,
        files: &Disk,
        guarded,
        reals: Default::default(),
    })
}

/// The toolchains part of a run of a loop on this host: what is found, chosen by the
/// config and the loop's profile.
pub fn for_run(
    ws: &crate::workspace::Workspace,
    config: &crate::config::Config,
    home_inside: &Path,
) -> Plan {
    let choice = config.toolchains();
    if choice.enable == Selection::Only(Vec::new()) {
        return Plan::default();
    }
    let Some(host) = host_from_env(ws.root()) else {
        return Plan::default();
    };
    plan(&host, &detect(&host), &choice, home_inside)
}

/// Before a run with shared caches: the host's cache folders that are missing are made
/// (empty folders in the user's home, which the tools would make themselves), so the run
/// shares them from the first download on. Only a run does this, never a command that
/// shows the sandbox.
pub fn make_shared_caches(ws: &crate::workspace::Workspace, config: &crate::config::Config) {
    let choice = config.toolchains();
    if choice.caches != Caches::Shared || choice.enable == Selection::Only(Vec::new()) {
        return;
    }
    let Some(host) = host_from_env(ws.root()) else {
        return;
    };
    let mut caches: Vec<Cache> = detect(&host)
        .iter()
        .filter(|f| choice.enable.admits(f.toolchain) && f.refused.is_none())
        .flat_map(|f| f.toolchain.caches().iter().copied())
        .collect();
    caches.sort();
    caches.dedup();
    for cache in caches {
        let (dir, _) = host_cache(&host, cache);
        let dir = match cache {
            Cache::Cargo => dir.join("registry"),
            _ => dir,
        };
        if host.guard(&dir).is_none() {
            let _ = std::fs::create_dir_all(&dir);
        }
    }
}

/// How `doctor` sees one toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Found, and in view of the profile's sandboxes.
    Enabled,
    /// Found, and left out by the operator config or the profile.
    NotEnabled,
    /// Found, and enabled, but it cannot be bound (it holds more than a toolchain).
    Refused,
    /// Enabled by name, not found.
    Missing,
    /// Nothing found, nothing asked for.
    Nothing,
}

/// One finding of `doctor` about the toolchains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub seen: Seen,
    pub message: String,
    pub fix: Option<String>,
}

/// Where detection looks for a toolchain, said when it is not there.
pub(super) fn looked(t: Toolchain) -> &'static str {
    match t {
        Toolchain::Rustup => "RUSTUP_HOME or ~/.rustup, CARGO_HOME or ~/.cargo",
        Toolchain::Pyenv => "PYENV_ROOT or ~/.pyenv",
        Toolchain::Nvm => "NVM_DIR or ~/.nvm",
        Toolchain::Mise => "MISE_DATA_DIR or ~/.local/share/mise",
        Toolchain::NpmPrefix => "npm_config_prefix, or prefix= in ~/.npmrc",
    }
}

/// What `doctor` says about the toolchains: one finding for each one found (with its
/// folders, whether sandboxes of `profile` see it and, if not, how to let them), and for
/// each one enabled by name but not found. `settings` is the operator's choice (the
/// merged settings), `choice` the profile's within it.
pub fn report(
    found: &[Found],
    settings: &Choice,
    choice: &Choice,
    profile: &str,
    profile_file: &Path,
) -> Vec<Report> {
    let mut out = Vec::new();
    for f in found {
        let folders = f
            .folders
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let at = format!("{} at {folders}", f.toolchain);
        let enabled = choice.enable.admits(f.toolchain);
        if let Some(why) = &f.refused {
            out.push(Report {
                seen: if enabled {
                    Seen::Refused
                } else {
                    Seen::NotEnabled
                },
                message: format!("{at}: never bound into a sandbox: {why}"),
                fix: Some("install it in a folder of its own".into()),
            });
        } else if enabled {
            let caches = match choice.caches {
                Caches::Loop => "package caches the loop's own",
                Caches::Shared => "package caches shared with the host",
            };
            let mut message =
                format!("{at}: in view, read-only, in sandboxes of profile '{profile}' ({caches})");
            if let Some(note) = &f.note {
                message.push_str(&format!("; {note}"));
            }
            out.push(Report {
                seen: Seen::Enabled,
                message,
                fix: None,
            });
        } else if !settings.enable.admits(f.toolchain) {
            let mut wanted = match &settings.enable {
                Selection::Only(list) => list.clone(),
                Selection::Detected => Vec::new(),
            };
            wanted.push(f.toolchain);
            out.push(Report {
                seen: Seen::NotEnabled,
                message: format!("{at}: not in sandboxes (the operator config does not enable it)"),
                fix: Some(format!(
                    "git loop config set --operator toolchains.enable '{}' (or detected: every one found)",
                    Selection::Only(wanted)
                )),
            });
        } else {
            out.push(Report {
                seen: Seen::NotEnabled,
                message: format!(
                    "{at}: not in sandboxes of profile '{profile}' (its [toolchains] enable leaves it out)"
                ),
                fix: Some(format!(
                    "add \"{}\" to [toolchains] enable in {}",
                    f.toolchain,
                    profile_file.display()
                )),
            });
        }
    }
    if let Selection::Only(list) = &choice.enable {
        for t in list
            .iter()
            .filter(|t| !found.iter().any(|f| f.toolchain == **t))
        {
            out.push(Report {
                seen: Seen::Missing,
                message: format!("{t} is enabled but not found ({})", looked(*t)),
                fix: None,
            });
        }
    }
    if out.is_empty() {
        out.push(Report {
            seen: Seen::Nothing,
            message: format!("none found in your home folder (looked for {})", names()),
            fix: None,
        });
    }
    out
}

/// [`report`] for this host, the config and the profile loaded in it.
pub fn report_for(ws: &crate::workspace::Workspace, config: &crate::config::Config) -> Vec<Report> {
    let found = host_from_env(ws.root())
        .map(|h| detect(&h))
        .unwrap_or_default();
    let t = &config.settings().toolchains;
    let settings = Choice {
        enable: t.enable.clone(),
        caches: t.caches,
    };
    let profile = config.profile();
    report(
        &found,
        &settings,
        &config.toolchains(),
        &profile.name,
        &ws.sandbox_profile(&profile.name),
    )
}
