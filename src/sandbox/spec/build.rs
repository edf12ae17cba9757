//! The spec of one run, built from the loop, its configuration and the host: which path becomes which mount, the environment, the network.

use super::*;

/// What the caller chose for this run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub mode: RunMode,
    pub net: NetMode,
    pub limits: Limits,
    pub command: Vec<String>,
    /// Extra read-only folders at the same path inside (the agent's install folder).
    pub ro_same_path: Vec<PathBuf>,
    /// Operator mounts `(host, inside, rw)`.
    pub operator_mounts: Vec<(PathBuf, PathBuf, bool)>,
    /// The loop was seeded with a chat transcript (`loops/<id>/chat/` exists).
    pub chat_seeded: bool,
    /// The files of the loop's vault, relative to `$HOME` (names only: the contents reach
    /// the spawner, never the spec).
    pub vault_files: Vec<PathBuf>,
    /// Put the sandbox in a new session (no controlling terminal, so no TIOCSTI into the
    /// caller's terminal); off for interactive commands, where seccomp refuses TIOCSTI.
    pub new_session: bool,
    /// With `net` `Proxy`: the binary for ssh's ProxyCommand, the run's token and the
    /// allowlist size.
    pub egress: Option<Egress>,
    /// `$HOME` is an overlay (see [`Home`]; [`crate::sandbox::home_needs_overlay`]).
    pub home_overlay: bool,
    /// Whose names commits made inside carry (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`); `None`
    /// when the user has no git identity.
    pub identity: Option<crate::agent::GitIdentity>,
    /// What a known agent's profile adds to the environment (`git loop agent` only).
    pub agent_env: Vec<(String, String)>,
    /// The toolchains of the user's home the run sees (see `crate::toolchains`).
    pub toolchains: crate::toolchains::Plan,
    /// The run's CA, with the proxy mode and bound vault entries.
    pub trust: Option<Trust>,
    /// The `git-loop` binary, to be the sandbox's pid 1 (see `sandbox/init.rs`); `None`
    /// leaves bwrap's own init.
    pub init_exe: Option<PathBuf>,
    /// The paths the profile's `[filesystem]` and the built-in list cover (see
    /// `sandbox/fspolicy.rs`), found when the run starts.
    pub fs_cover: Vec<crate::sandbox::fspolicy::Covered>,
    /// `[filesystem] deny_create`: names the sandbox's pid 1 refuses at creation time.
    pub deny_create: Vec<String>,
    /// Whether the kernel has the supervisor of calls (`sandbox/creation.rs`), which then
    /// watches every run's writes (and reads where a rule denies reading) to report the
    /// refusals.
    pub supervisor: bool,
    /// Whether a `.git` made in the loop's writable trees is refused (unless the profile's
    /// `allow_write` names `fspolicy::NESTED_GIT`).
    pub nested_git: bool,
}

/// The per-path policy (see `sandbox/fspolicy.rs`), last of the view so nothing covers
/// it: a path denied writing bound read-only onto itself by descriptor; one denied
/// reading covered by `/dev/null` (a file: it does not open, `/dev/null` is on a `nodev`
/// mount inside) or an empty read-only tmpfs (a folder); a folder of the built-in list
/// that was not there, made empty by the run and bound read-only by descriptor; the
/// folder holding one, pinned: bound onto itself, or, where pid 1's supervisor sees every
/// rename (`pinned_by_init`), left as it is and its renames refused there, so that a
/// rename across it is not refused by the kernel as one across mounts (EXDEV: `git mv`).
pub(super) fn fs_policy_mounts(
    m: &mut Vec<Mount>,
    cover: &[crate::sandbox::fspolicy::Covered],
    writable: bool,
    pinned_by_init: bool,
) {
    use crate::sandbox::fspolicy::Deny;
    for c in cover {
        // Where nothing is writable (review mode) nothing can be made or renamed away.
        if !writable && matches!(c.deny, Deny::Create | Deny::Pin | Deny::Absent) {
            continue;
        }
        m.push(match (c.deny, c.dir) {
            (Deny::Write, _) => Mount::confined(&c.root, &c.rel, &c.inside, false, true),
            (Deny::Pin, _) if pinned_by_init => continue,
            (Deny::Pin, _) => Mount::confined(&c.root, &c.rel, &c.inside, writable, true),
            (Deny::Create, _) => Mount::confined(&c.root, &c.rel, &c.inside, false, true),
            (Deny::Read, false) => Mount::ro("/dev/null", &c.inside),
            // Refused when made, by pid 1's supervisor: nothing there to lay a mount on.
            (Deny::Made | Deny::Absent, _) => continue,
            (Deny::Read, true) => Mount::Unreadable {
                inside: c.inside.clone(),
            },
        });
    }
}

/// The grants of a loop, at the same paths inside: each bound by the descriptor of what
/// was granted, found again without following links (a grant whose source changed kind or
/// inode is refused at run time); parents before children, so a read-only grant inside a
/// read-write one is never covered by it; and every folder between a grant and a grant
/// nested in it pinned as a mount point of its own, so no rename inside can move the
/// nested grant's source away while its path keeps a decoy.
pub(super) fn grant_mounts(m: &mut Vec<Mount>, grants: &[crate::loops::Grant], writable: bool) {
    let mut sorted: Vec<&crate::loops::Grant> = grants.iter().collect();
    sorted.sort_by_key(|g| (g.path.components().count(), g.path.clone()));
    let mut pinned: Vec<PathBuf> = Vec::new();
    for (i, grant) in sorted.iter().enumerate() {
        let rw = grant.mode == "rw" && writable;
        // The nearest grant this one lies in, if any: pin the folders between.
        if let Some(outer) = sorted[..i]
            .iter()
            .rev()
            .find(|o| grant.path.starts_with(&o.path) && o.path != grant.path)
        {
            let outer_rw = outer.mode == "rw" && writable;
            let mut between = Vec::new();
            let mut dir = grant.path.parent();
            while let Some(d) = dir {
                if d == outer.path {
                    break;
                }
                between.push(d.to_path_buf());
                dir = d.parent();
            }
            for d in between.into_iter().rev() {
                if pinned.contains(&d) {
                    continue;
                }
                m.push(Mount::confined("/", rel_to_root(&d), &d, outer_rw, false));
                pinned.push(d);
            }
        }
        m.push(Mount::Confined {
            root: PathBuf::from("/"),
            rel: rel_to_root(&grant.path),
            inside: grant.path.clone(),
            rw,
            optional: false,
            expect: grant.source,
        });
    }
}

/// An absolute path as a path below `/`.
pub(super) fn rel_to_root(path: &Path) -> PathBuf {
    path.strip_prefix("/").unwrap_or(path).to_path_buf()
}

/// The team's prompt layer below the knowledge repository's root (DESIGN 4.6).
pub const TEAM_CLAUDE: &str = ".loopat/claude";

/// The team's skills below the knowledge repository's root.
pub const TEAM_SKILLS: &str = ".loopat/claude/skills";

/// What git reads from a repository's git folder as configuration rather than data, held
/// by git-loop in a loop's repositories and read-only inside: `config` (hooks path,
/// fsmonitor, pager, filters, `include`), `hooks/`, and `commondir`, which would otherwise
/// let a planted file point git at a config folder of the agent's making.
pub(super) fn protect_git(
    m: &mut Vec<Mount>,
    ws: &Workspace,
    rec: &LoopRecord,
    pair: &RepoPair,
    rw: bool,
) {
    let id = &rec.id;
    let inside = repo_inside(id, pair.role).join(".git");
    let rel = pair
        .clone
        .strip_prefix(ws.loop_dir(id))
        .expect("a loop's repositories are in its folder")
        .join(".git");
    m.push(Mount::confined(ws.loop_dir(id), &rel, &inside, rw, false));
    m.push(Mount::OwnFile {
        root: ws.loop_dir(id),
        rel: rel.join("config"),
        inside: inside.join("config"),
        content: pair.clone_config(&rec.branch),
    });
    m.push(Mount::OwnFile {
        root: ws.loop_dir(id),
        rel: rel.join("commondir"),
        inside: inside.join("commondir"),
        content: ".\n".into(),
    });
    m.push(Mount::confined(
        ws.loop_dir(id),
        rel.join("hooks"),
        inside.join("hooks"),
        false,
        false,
    ));
}

/// Whether pid 1's supervisor keeps the pinned folders from being renamed (so they need
/// no mount of their own): where the kernel has it and git-loop's init runs.
fn pinned_by_init(opts: &RunOptions) -> bool {
    opts.supervisor && opts.init_exe.is_some()
}

/// What the supervisor in pid 1 watches (see `sandbox/creation.rs`): nothing without it
/// or without git-loop's init; the writes of every run otherwise (a refusal by a
/// read-only place or a rule is reported, the ordinary writes cost one answer each); and
/// every open where a rule denies reading, since a filter cannot tell a read of a denied
/// path from any other (BENCHMARKS.md has the cost of both).
fn watch(opts: &RunOptions, repos: Vec<PathBuf>) -> crate::sandbox::creation::Watch {
    use crate::sandbox::fspolicy::Deny;
    if !opts.supervisor || opts.init_exe.is_none() {
        return Default::default();
    }
    let read = || opts.fs_cover.iter().filter(|c| c.deny == Deny::Read);
    crate::sandbox::creation::Watch {
        writes: true,
        reads: read().next().is_some(),
        read_dirs: read().filter(|c| c.dir).map(|c| c.inside.clone()).collect(),
        pins: opts
            .fs_cover
            .iter()
            .filter(|c| c.deny == Deny::Pin && opts.mode.writable())
            .map(|c| (c.inside.clone(), c.rule.clone()))
            .collect(),
        names: opts
            .fs_cover
            .iter()
            .filter(|c| c.deny == Deny::Made)
            .filter_map(|c| {
                let name = c.inside.file_name()?.to_string_lossy().into_owned();
                Some((name, c.rule.clone()))
            })
            .collect(),
        places: opts
            .fs_cover
            .iter()
            .filter(|c| c.deny == Deny::Absent && opts.mode.writable())
            .map(|c| (c.inside.clone(), c.rule.clone()))
            .collect(),
        covers: opts
            .fs_cover
            .iter()
            .filter(|c| matches!(c.deny, Deny::Write | Deny::Read | Deny::Create))
            .map(|c| c.inside.clone())
            .collect(),
        repos,
    }
}

/// The roots of the loop's trees a person works in with git and the sandbox may write
/// (the working tree, notes, a distill loop's knowledge, the personal tree), below which
/// no `.git` is made while `opts.nested_git` (see `fspolicy::NESTED_GIT`).
fn nested_git_roots(rec: &LoopRecord, opts: &RunOptions) -> Vec<PathBuf> {
    if !opts.nested_git || !opts.mode.writable() {
        return Vec::new();
    }
    let ctx = Path::new(LOOPAT).join("context");
    let mut roots = vec![repo_inside(&rec.id, "code"), ctx.join("personal")];
    roots.push(if rec.kind == Kind::Distill {
        repo_inside(&rec.id, "knowledge")
    } else {
        repo_inside(&rec.id, "notes")
    });
    roots
}

impl SandboxSpec {
    /// Whether pid 1 supervises calls: a `deny_create` rule, or refusals to watch.
    pub fn supervised(&self) -> bool {
        self.init.is_some()
            && (!self.deny_create.is_empty()
                || self.watch.writes
                || self.watch.reads
                || !self.watch.names.is_empty()
                || !self.watch.places.is_empty()
                || !self.watch.repos.is_empty()
                || !self.watch.pins.is_empty())
    }

    /// The sandbox of loop `rec` (DESIGN 4.1). Pure: reads nothing but its arguments.
    pub fn for_loop(
        ws: &Workspace,
        rec: &LoopRecord,
        host: &HostView,
        opts: &RunOptions,
    ) -> SandboxSpec {
        let id = &rec.id;
        let loopat = Path::new(LOOPAT);
        let loop_inside = loopat.join("loop").join(id);
        let workdir_inside = repo_inside(id, "code");
        let ctx = loopat.join("context");
        let w = opts.mode.writable();
        let mut m = Vec::new();

        m.extend(system_mounts(host, opts.limits.tmp_bytes));

        // Without a network of its own the sandbox has no name server either.
        if opts.net != NetMode::Host {
            m.push(Mount::Data {
                inside: "/etc/resolv.conf".into(),
                content: RESOLV_CONF.into(),
            });
        }
        let egress = opts.egress.clone().filter(|_| opts.net == NetMode::Proxy);
        // The one binary of git-loop's inside: pid 1 and, in the proxy mode, ssh's relay.
        let exe = opts.init_exe.as_ref().or(egress.as_ref().map(|e| &e.exe));
        if let Some(exe) = exe {
            m.push(Mount::ro(exe, crate::egress::relay::RELAY_EXE));
        }
        let trust = opts.trust.as_ref().filter(|_| egress.is_some());
        if let Some(t) = trust {
            m.push(Mount::Data {
                inside: CA_BUNDLE.into(),
                content: t.bundle.clone(),
            });
            m.push(Mount::Data {
                inside: CA_CERT.into(),
                content: t.ca_pem.clone(),
            });
            for file in &t.system_files {
                m.push(Mount::Data {
                    inside: file.clone(),
                    content: t.bundle.clone(),
                });
            }
        }

        // Context: the origins are read-only. The code origin sits where the workdir's
        // relative alternates and remote URL point; the context origins under
        // `.origins/`, where the context clones' relative paths point.
        let distill = rec.kind == Kind::Distill;
        if distill {
            m.push(Mount::bind(ws.loop_knowledge(id), ctx.join("knowledge"), w));
            m.push(Mount::ro(ws.knowledge(), ctx.join(".origins/knowledge")));
        } else {
            m.push(Mount::ro(ws.knowledge(), ctx.join("knowledge")));
        }
        // Notes are the distill loop's input: read-only there.
        m.push(Mount::bind(
            ws.loop_notes(id),
            ctx.join("notes"),
            w && !distill,
        ));
        m.push(Mount::ro(ws.notes(), ctx.join(".origins/notes")));
        // Of the registered repository only its git folder: its working tree, with
        // untracked and ignored files such as `.env`, stays out of view.
        if let (Kind::Code, Some(name)) = (rec.kind, &rec.repo) {
            m.push(Mount::ro(
                ws.repo_link(name).join(".git"),
                ctx.join("repos").join(name).join(".git"),
            ));
        }

        // The chat this loop continues, if it was seeded with one.
        if opts.chat_seeded {
            m.push(Mount::ro(ws.loop_chat_dir(id), ctx.join("chat").join(id)));
        }

        // Personal: files rw; its git folder hidden under an empty read-only tmpfs (its
        // history is git-loop's to keep, and held the vaults once), its `.loopat` (config)
        // ro, each a mount point the agent cannot rename away. The vaults live in a
        // repository of their own that no sandbox sees.
        let personal_inside = ctx.join("personal");
        m.push(Mount::bind(ws.personal(), &personal_inside, w));
        m.push(Mount::Tmpfs {
            inside: personal_inside.join(".git"),
            size: Some(4096),
            ro: true,
        });
        m.push(Mount::confined(
            ws.personal(),
            ".loopat",
            personal_inside.join(".loopat"),
            false,
            false,
        ));

        // The loop itself.
        m.push(Mount::bind(ws.loop_workdir(id), &workdir_inside, w));
        // Each of the loop's repositories: its git folder pinned (a mount point cannot be
        // renamed or replaced), and what the user's own git on the host reads from it as
        // instructions is git-loop's and read-only inside (DESIGN 4.0).
        for pair in crate::loops::repo_pairs(ws, rec) {
            let writable = w && !(distill && pair.role == "notes");
            protect_git(&mut m, ws, rec, &pair, writable);
        }
        let claude_inside = loop_inside.join(".claude");
        m.push(Mount::bind(ws.loop_claude_dir(id), &claude_inside, w));
        // The generated doctrine and the team's skills are read-only over the rw folder;
        // both sit in folders a sandbox can write, so neither is reached through a link.
        m.push(Mount::confined(
            ws.loop_dir(id),
            ".claude/CLAUDE.md",
            claude_inside.join("CLAUDE.md"),
            false,
            true,
        ));
        m.push(Mount::confined(
            ws.knowledge(),
            TEAM_SKILLS,
            claude_inside.join("skills"),
            false,
            true,
        ));

        // $HOME: the loop's persistent layer, writable in every mode.
        let home_inside = PathBuf::from("/home").join(ws.user());
        let home = Home {
            lower: ws.home_skel(),
            upper: ws.loop_home_upper(id),
            work: ws.loop_home_work(id),
            merged: ws.loop_home_merged(id),
            overlay: opts.home_overlay,
        };
        m.push(Mount::bind(home.bound(), &home_inside, true));
        for rel in &opts.vault_files {
            m.push(Mount::Secret {
                inside: home_inside.join(rel),
            });
        }
        // The toolchains, over `$HOME` (see the module's header); a shared cache is
        // writable in work mode only.
        for t in &opts.toolchains.mounts {
            m.push(match t {
                Mount::Bind {
                    host,
                    inside,
                    rw,
                    optional,
                } => Mount::Bind {
                    host: host.clone(),
                    inside: inside.clone(),
                    rw: *rw && w,
                    optional: *optional,
                },
                other => other.clone(),
            });
        }

        for dir in &opts.ro_same_path {
            m.push(Mount::ro(dir, dir));
        }
        for (hostp, inside, rw) in &opts.operator_mounts {
            m.push(Mount::bind(hostp, inside, *rw && w));
        }
        grant_mounts(&mut m, &rec.grants, w);
        fs_policy_mounts(&mut m, &opts.fs_cover, w, pinned_by_init(opts));

        m.push(Mount::RemountRo {
            inside: PathBuf::from("/"),
        });

        let mut env = BTreeMap::new();
        for (k, v) in &host.env {
            if passes_in(k) {
                env.insert(k.clone(), v.clone());
            }
        }
        env.insert("HOME".into(), home_inside.display().to_string());
        env.insert("USER".into(), ws.user().to_string());
        env.insert("LOGNAME".into(), ws.user().to_string());
        let mut path: Vec<String> = opts
            .toolchains
            .path
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        path.push(SANDBOX_PATH.into());
        env.insert("PATH".into(), path.join(":"));
        env.insert("TMPDIR".into(), "/tmp".into());
        env.insert(
            "CLAUDE_CONFIG_DIR".into(),
            claude_inside.display().to_string(),
        );
        env.insert("GIT_LOOP_ID".into(), id.clone());
        env.insert("GIT_LOOP_MODE".into(), opts.mode.name().into());
        env.entry("TERM".into()).or_insert_with(|| "dumb".into());
        if let Some(e) = &egress {
            env.extend(crate::egress::relay::environment(&e.token));
        }
        if trust.is_some() {
            for var in CA_VARIABLES {
                env.insert((*var).into(), CA_BUNDLE.into());
            }
            env.insert("NODE_EXTRA_CA_CERTS".into(), CA_CERT.into());
        }
        env.extend(opts.toolchains.env.iter().cloned());
        // Commits made inside carry the user's identity, kept in step with their git on
        // every run; the environment wins over any config the agent writes.
        if let Some(id) = &opts.identity {
            for (key, value) in [
                ("GIT_AUTHOR_NAME", &id.author.0),
                ("GIT_AUTHOR_EMAIL", &id.author.1),
                ("GIT_COMMITTER_NAME", &id.committer.0),
                ("GIT_COMMITTER_EMAIL", &id.committer.1),
            ] {
                env.insert(key.into(), value.clone());
            }
        }
        env.extend(opts.agent_env.iter().cloned());

        SandboxSpec {
            loop_id: id.clone(),
            mounts: m,
            home,
            home_inside,
            env,
            cwd: if distill {
                ctx.join("knowledge")
            } else {
                workdir_inside
            },
            net: opts.net,
            netns: NetNamespace::of(opts.net),
            landlock: LandlockScopes::ALL,
            mode: opts.mode,
            limits: opts.limits,
            hostname: "loop".into(),
            uid: None,
            new_session: opts.new_session,
            command: opts.command.clone(),
            fs_policy: if w {
                opts.fs_cover.clone()
            } else {
                opts.fs_cover
                    .iter()
                    .filter(|c| {
                        !matches!(
                            c.deny,
                            crate::sandbox::fspolicy::Deny::Create
                                | crate::sandbox::fspolicy::Deny::Pin
                                | crate::sandbox::fspolicy::Deny::Absent
                        )
                    })
                    .cloned()
                    .collect()
            },
            deny_create: opts.deny_create.clone(),
            watch: watch(opts, nested_git_roots(rec, opts)),
            init: opts
                .init_exe
                .as_ref()
                .map(|_| PathBuf::from(crate::egress::relay::RELAY_EXE)),
            egress,
            toolchains: opts
                .toolchains
                .enabled
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
            warnings: opts.toolchains.warnings.clone(),
        }
    }

    /// The view as a table: (inside, host source, mode), for `show --mounts`.
    pub fn view(&self) -> Vec<(String, String, String)> {
        let mut rows = vec![("/".to_string(), "fresh tmpfs".to_string(), "ro".to_string())];
        for m in &self.mounts {
            let row = match m {
                Mount::Bind {
                    host,
                    inside,
                    rw,
                    optional,
                } => {
                    let mut mode = if *rw { "rw" } else { "ro" }.to_string();
                    if *optional {
                        mode.push_str(" (if present)");
                    }
                    if inside == &self.home_inside {
                        let (upper, lower) = (self.home.upper.display(), self.home.lower.display());
                        let source = if self.home.overlay {
                            format!("overlay: {upper} over {lower}")
                        } else {
                            format!("{upper} ({lower} is empty)")
                        };
                        (inside.display().to_string(), source, "rw".into())
                    } else {
                        (
                            inside.display().to_string(),
                            host.display().to_string(),
                            mode,
                        )
                    }
                }
                Mount::Symlink { target, inside } => (
                    inside.display().to_string(),
                    format!("-> {}", target.display()),
                    "symlink".into(),
                ),
                Mount::Tmpfs { inside, .. } if inside.ends_with("personal/.git") => (
                    inside.display().to_string(),
                    "empty tmpfs (the personal history is git-loop's)".into(),
                    "ro".into(),
                ),
                Mount::Tmpfs { inside, .. } => (
                    inside.display().to_string(),
                    "fresh tmpfs".into(),
                    "rw".into(),
                ),
                Mount::Unreadable { inside } => (
                    inside.display().to_string(),
                    "empty tmpfs, unreadable".into(),
                    "none".into(),
                ),
                Mount::RemountRo { .. } => continue,
                Mount::Proc { inside } => (
                    inside.display().to_string(),
                    "new proc (own pid namespace)".into(),
                    "rw".into(),
                ),
                Mount::Dev { inside } => (
                    inside.display().to_string(),
                    "minimal /dev".into(),
                    "rw".into(),
                ),
                Mount::Data { inside, .. } if inside.as_path() == Path::new("/etc/resolv.conf") => {
                    (
                        inside.display().to_string(),
                        "git-loop: no name server (the proxy resolves)".into(),
                        "ro (over a file)".into(),
                    )
                }
                Mount::Data { inside, .. }
                    if inside.as_path() == Path::new(CA_CERT)
                        || inside.as_path() == Path::new(CA_BUNDLE)
                        || SYSTEM_BUNDLES
                            .iter()
                            .any(|b| inside.as_path() == Path::new(b)) =>
                {
                    (
                        inside.display().to_string(),
                        "git-loop: trusted certificates with this run's CA (bound vault entries)"
                            .into(),
                        "ro".into(),
                    )
                }
                Mount::Data { inside, content } if content.is_empty() => (
                    inside.display().to_string(),
                    "empty (a credential file, kept out)".into(),
                    "ro (over a file)".into(),
                ),
                Mount::Data { inside, .. } => (
                    inside.display().to_string(),
                    "git-loop".into(),
                    "ro (over a file)".into(),
                ),
                Mount::Secret { inside } => (
                    inside.display().to_string(),
                    "vault file, decrypted in memory".into(),
                    "ro 0600".into(),
                ),
                Mount::Confined {
                    root,
                    rel,
                    inside,
                    rw,
                    optional,
                    ..
                } => {
                    let mut mode = if *rw { "rw" } else { "ro" }.to_string();
                    if *optional {
                        mode.push_str(" (if present)");
                    }
                    mode.push_str(", no links followed");
                    (
                        inside.display().to_string(),
                        root.join(rel).display().to_string(),
                        mode,
                    )
                }
                Mount::OwnFile {
                    root, rel, inside, ..
                } => (
                    inside.display().to_string(),
                    format!("{} (git-loop's)", root.join(rel).display()),
                    "ro".into(),
                ),
            };
            rows.push(row);
        }
        // The per-path policy's covers say which rule laid them.
        for c in &self.fs_policy {
            use crate::sandbox::fspolicy::Deny;
            let inside = c.inside.display().to_string();
            let Some(row) = rows.iter_mut().rev().find(|r| r.0 == inside) else {
                continue;
            };
            let host = c.root.join(&c.rel).display().to_string();
            (row.1, row.2) = match c.deny {
                Deny::Read => (format!("hidden ({})", c.rule), "none".into()),
                Deny::Write => (format!("{host} ({})", c.rule), "ro".into()),
                Deny::Create => (format!("{host}, made empty ({})", c.rule), "ro".into()),
                Deny::Pin => (format!("{host} (pinned: {})", c.rule), row.2.clone()),
                Deny::Made | Deny::Absent => continue,
            };
        }
        for (inside, rule) in &self.watch.pins {
            let inside = inside.display().to_string();
            if rows.iter().any(|r| r.0 == inside) {
                continue;
            }
            rows.push((
                inside,
                format!("pinned: {rule} (renames refused by pid 1)"),
                "rw".into(),
            ));
        }
        for c in self
            .fs_policy
            .iter()
            .filter(|c| c.deny == crate::sandbox::fspolicy::Deny::Made)
        {
            let name = c.inside.file_name().unwrap_or_default().to_string_lossy();
            rows.push((
                format!("**/{name}"),
                format!("refused when made ({})", c.rule),
                "none".into(),
            ));
        }
        // Names of the built-in list refused when made where they are not (creation.rs).
        for (inside, rule) in &self.watch.places {
            rows.push((
                inside.display().to_string(),
                format!("refused when made ({rule})"),
                "none".into(),
            ));
        }
        // Names refused when made, in every folder (see sandbox/creation.rs).
        for p in &self.deny_create {
            rows.push((
                format!("**/{p}"),
                format!("refused when made (deny_create: {p})"),
                "none".into(),
            ));
        }
        rows
    }
}
