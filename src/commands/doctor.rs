use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::fsutil::{self, Lock};
use crate::git::objects;
use crate::loops::{self, LoopRecord};
use crate::ui::{Ui, GREEN, RED, RESET, YELLOW};
use crate::workspace::Workspace;

/// Check the workspace and say how to fix each problem found.
///
/// Looks for registered repositories that moved away, loops whose folder, record or
/// branch is missing, what a killed `new`, `rm`, `publish`, `merge` or `autocommit`
/// left, git lock files nothing can own any more, and a workspace on a full or read-only
/// file system. Exits 1 when a problem was found.
///
/// A workspace copied to another folder or machine works after `--fix`, which relinks
/// the registered repositories it finds in your usual places (the same remote URL, or
/// the same folder name) and says which it could not.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Apply the fixes that lose nothing: finish or undo what killed commands left (each
    /// result checked), remove git lock files whose owner is provably gone, and relink
    /// repositories that moved.
    #[arg(long)]
    pub fix: bool,
}

#[derive(Debug, Serialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Info,
    Problem,
    Fixed,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub level: Level,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn finding(check: &'static str, level: Level, message: String, fix: Option<String>) -> Finding {
    Finding {
        check,
        level,
        message,
        fix,
    }
}

pub fn run(ui: &mut Ui, args: DoctorArgs) -> Result<u8> {
    let ws = Workspace::from_env()?;
    let mut findings = Vec::new();
    if !ws.is_initialized() {
        findings.push(finding(
            "workspace",
            Level::Problem,
            format!("no workspace at {}", ws.root().display()),
            Some("git loop init".into()),
        ));
    } else {
        findings.push(finding(
            "workspace",
            Level::Ok,
            format!("workspace at {}", ws.root().display()),
            None,
        ));
        let writable = check_storage(&ws, &mut findings);
        let fix = args.fix && writable;
        check_repos(&ws, fix, &mut findings);
        check_loops(&ws, &mut findings)?;
        if writable {
            check_leftovers(&ws, fix, &mut findings)?;
            // Interrupted checkout updates before the lock files: their markers are theirs.
            check_interrupted(&ws, fix, &mut findings);
            check_locks(&ws, fix, &mut findings);
            check_loop_locks(&ws, fix, &mut findings);
        }
    }
    check_sandbox(&mut findings);
    if ws.is_initialized() {
        check_agent(ui, &ws, &mut findings)?;
        check_toolchains(&ws, &mut findings)?;
    }

    let problems = findings
        .iter()
        .filter(|f| f.level == Level::Problem)
        .count();
    if args.json {
        let v = serde_json::to_value(&findings).unwrap_or_default();
        super::print_json(ui, &v)?;
    } else {
        for f in &findings {
            let (mark, color) = match f.level {
                Level::Ok => ("ok", GREEN),
                Level::Info => ("info", ""),
                Level::Problem => ("problem", RED),
                Level::Fixed => ("fixed", YELLOW),
            };
            writeln!(
                ui.out(),
                "{color}{mark:<8}{RESET}{}: {}",
                f.check,
                crate::terminal::shown(&f.message)
            )?;
            if let Some(fix) = &f.fix {
                writeln!(ui.out(), "        fix: {}", crate::terminal::shown(fix))?;
            }
        }
        if problems == 0 {
            writeln!(ui.out(), "no problems found")?;
        } else {
            writeln!(
                ui.out(),
                "{problems} problem{} found",
                if problems == 1 { "" } else { "s" }
            )?;
        }
    }
    Ok(if problems == 0 { 0 } else { 1 })
}

/// Registered repositories whose link no longer leads to them (the repository moved, or
/// the workspace was copied to another folder or machine): with `fix`, relinked to the
/// one found in the user's usual places by its remote URL or folder name.
fn check_repos(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let places = crate::repos::usual_places();
    for name in ws.repo_names().unwrap_or_default() {
        let Err(e) = crate::repos::check_link(ws, &name) else {
            continue;
        };
        let link = ws.repo_link(&name);
        let manual = format!(
            "move the repository back, or `ln -sfn NEW-PATH {}`",
            link.display()
        );
        if !fix {
            out.push(finding(
                "repos",
                Level::Problem,
                e.message.clone(),
                Some(format!("`git loop doctor --fix` looks for it; or {manual}")),
            ));
            continue;
        }
        match crate::repos::find_moved(ws, &name, &places).and_then(|top| {
            crate::repos::relink(ws, &name, &top)
                .map(|()| top)
                .map_err(|e| e.one_line())
        }) {
            Ok(top) => out.push(finding(
                "repos",
                Level::Fixed,
                format!("repository '{name}' relinked to {}", top.display()),
                None,
            )),
            Err(why) => out.push(finding(
                "repos",
                Level::Problem,
                format!("{}; {why}", e.message),
                Some(manual),
            )),
        }
    }
}

fn check_loops(ws: &Workspace, out: &mut Vec<Finding>) -> Result<()> {
    let notes = objects::open_trusted(&ws.notes()).ok();
    for id in ws.loop_ids()? {
        let rec = match loops::load(ws, &id) {
            Ok(rec) => rec,
            Err(e) => {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    e.one_line(),
                    Some(format!(
                        "fix {} by hand, or `git loop rm --force {id}`",
                        ws.loop_record(&id).display()
                    )),
                ));
                continue;
            }
        };
        for pair in loops::repo_pairs(ws, &rec) {
            if !pair.clone.join(".git").is_dir() {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    format!(
                        "loop {id}: its {} repository {} is missing",
                        pair.role,
                        pair.clone.display()
                    ),
                    Some(format!(
                        "`git loop rm --force {id}` (its branches stay in the origins)"
                    )),
                ));
                continue;
            }
            if pair.role == "code"
                && crate::repos::check_link(ws, rec.repo.as_deref().unwrap_or("")).is_err()
            {
                continue; // reported by check_repos
            }
            let has_branch = objects::open_trusted(&pair.origin)
                .ok()
                .and_then(|r| objects::resolve_branch(&r, &rec.branch).ok().flatten())
                .is_some();
            if !has_branch {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    format!(
                        "loop {id}: branch {} is missing in {}",
                        rec.branch,
                        pair.origin.display()
                    ),
                    Some(format!(
                        "`git loop list` imports it again from the loop's own repository {}",
                        pair.clone.display()
                    )),
                ));
            }
        }
    }
    if notes.is_some() {
        for id in loops::removed_ids(ws).unwrap_or_default() {
            out.push(finding(
                "loops",
                Level::Info,
                format!(
                    "branch {} has no loop folder (removed, or its folder deleted by hand)",
                    LoopRecord::branch_name(&id)
                ),
                Some(format!(
                    "nothing to do if it was removed on purpose; `git branch -d {}` in the origins deletes the branch once merged",
                    LoopRecord::branch_name(&id)
                )),
            ));
        }
    }
    Ok(())
}

/// The workspace's file system: a read-only or full one makes every command that changes
/// the workspace fail, whatever else is found, and no fix can be applied. Returns whether
/// the workspace can be written.
fn check_storage(ws: &Workspace, out: &mut Vec<Finding>) -> bool {
    use nix::sys::statvfs::{statvfs, FsFlags};
    let root = ws.root();
    let stat = statvfs(root).ok();
    let read_only = stat
        .as_ref()
        .is_some_and(|s| s.flags().contains(FsFlags::ST_RDONLY));
    // A write tells what statvfs may not (a read-only bind mount, a quota).
    let probe = ws
        .locks_dir()
        .join(format!(".doctor-probe-{}", std::process::id()));
    let written =
        std::fs::write(&probe, b"x").and_then(|()| std::fs::File::open(&probe)?.sync_all());
    let _ = std::fs::remove_file(&probe);
    let errno = written.as_ref().err().and_then(|e| e.raw_os_error());
    if read_only || errno == Some(libc::EROFS) {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("the workspace {} is on a read-only file system: every command that changes it fails, and nothing can be fixed now", root.display()),
            Some("remount it read-write (or set GIT_LOOP_HOME to a writable copy), then run `git loop doctor` again".into()),
        ));
        return false;
    }
    let free = stat.map(|s| s.blocks_available() * s.fragment_size());
    if errno == Some(libc::ENOSPC) || errno == Some(libc::EDQUOT) || free == Some(0) {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("the file system holding the workspace {} is full: commands that write to it fail, and nothing can be fixed now", root.display()),
            Some("free some space there, then run `git loop doctor` again".into()),
        ));
        return false;
    }
    if let Err(e) = written {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("cannot write in {}: {e}", ws.locks_dir().display()),
            Some("check the folder's owner and permissions".into()),
        ));
        return false;
    }
    true
}

/// What a killed `new` or `rm` left, judged by its owner's lock (a `new` holds its id's
/// lock from before its staging folder exists; an `rm` holds the loop's run lock), never
/// by age: a live one's is left alone.
fn check_leftovers(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) -> Result<()> {
    if fix {
        for rolled in crate::create::roll_back_interrupted(ws)? {
            let what = if rolled.removed.is_empty() {
                "cleared its journal (the loop had been made)".to_string()
            } else {
                rolled.removed.join(", ")
            };
            out.push(finding(
                "leftovers",
                Level::Fixed,
                format!(
                    "rolled back the interrupted `git loop new` of {}: {what}",
                    rolled.id
                ),
                None,
            ));
        }
        for removed in crate::removal::finish(ws)? {
            let mut message = format!(
                "finished removing loop {} (an interrupted `git loop rm`)",
                removed.id
            );
            for b in &removed.branches {
                message.push_str(&format!("; {b}"));
            }
            out.push(finding("leftovers", Level::Fixed, message, None));
        }
        for temp in fsutil::sweep_dead_temp_files(&ws.locks_dir()) {
            out.push(finding(
                "leftovers",
                Level::Fixed,
                format!(
                    "removed {} (a killed command's unfinished write)",
                    temp.display()
                ),
                None,
            ));
        }
    }
    for (id, live) in crate::create::interrupted(ws) {
        out.push(if live {
            finding(
                "leftovers",
                Level::Info,
                format!("a `git loop new` of {id} is in progress"),
                None,
            )
        } else {
            finding(
                "leftovers",
                Level::Problem,
                format!(
                    "{} was left by an interrupted `git loop new` (with the branches it created)",
                    ws.loop_staging_dir(&id).display()
                ),
                Some("git loop doctor --fix (or the next `git loop new`)".into()),
            )
        });
    }
    for (id, live) in crate::removal::unfinished(ws) {
        out.push(if live {
            finding(
                "leftovers",
                Level::Info,
                format!("a `git loop rm` of {id} is in progress"),
                None,
            )
        } else {
            finding(
                "leftovers",
                Level::Problem,
                format!(
                    "the removal of loop {id} was interrupted ({} is left)",
                    ws.loop_removal_dir(&id).display()
                ),
                Some(format!("git loop doctor --fix (or `git loop rm {id}`)")),
            )
        });
    }
    for temp in fsutil::dead_temp_files(&ws.locks_dir()) {
        out.push(finding(
            "leftovers",
            Level::Problem,
            format!("{} is a killed command's unfinished write", temp.display()),
            Some("git loop doctor --fix".into()),
        ));
    }
    Ok(())
}

/// git's lock files, judged by who can own them, never by their age.
///
/// - notes and knowledge: only git-loop runs git there, holding the workspace lock; with
///   that lock held here, a lock file is a killed command's;
/// - the personal repository: only autocommit commits there, holding its own lock;
/// - the user's registered repositories: a lock file may be the user's own git at work,
///   so it is named, never removed, unless it is git-loop's own (the marker of a checkout
///   update, or its scratch index) and no git-loop command holds the workspace.
fn check_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let workspace = match Lock::try_acquire(&ws.workspace_lock()) {
        Ok(Some(hold)) => Some(hold),
        _ => {
            out.push(finding(
                "locks",
                Level::Info,
                format!(
                    "{} is held by a running git loop command; the lock files it owns were not judged",
                    ws.workspace_lock().display()
                ),
                None,
            ));
            None
        }
    };
    // Checkout updates still noted in a journal keep their marker: it keeps git off a
    // working tree that is not proven.
    let pending = crate::checkout::pending_indexes(&ws.locks_dir());
    let keeps = |lock: &Path| pending.iter().any(|index| index.parent() == lock.parent());
    if workspace.is_some() {
        for dir in [ws.notes(), ws.knowledge()] {
            for (lock, why) in
                crate::gitlocks::stale_in_workspace_repo(ws, &dir.join(".git"), &keeps)
            {
                stale_lock(out, fix, &lock, why);
            }
        }
    }
    if let Ok(Some(_autocommit)) = Lock::try_acquire(&ws.autocommit_lock()) {
        for lock in crate::loops::git_lock_files(&ws.personal().join(".git")) {
            stale_lock(out, fix, &lock, "no autocommit is running");
        }
    }
    for name in ws.repo_names().unwrap_or_default() {
        // Named by its real path: the user knows the repository, not the workspace's link.
        let top =
            std::fs::canonicalize(ws.repo_link(&name)).unwrap_or_else(|_| ws.repo_link(&name));
        let git_dir = top.join(".git");
        if !git_dir.is_dir() {
            continue;
        }
        for judged in crate::gitlocks::judge_user_repo(ws, &git_dir, workspace.is_some(), &keeps) {
            use crate::gitlocks::UserLock;
            match judged {
                UserLock::Stale(lock, why) => stale_lock(out, fix, &lock, why),
                UserLock::Busy(_) => {}
                UserLock::Foreign(lock) => out.push(finding(
                    "locks",
                    Level::Problem,
                    format!(
                        "git lock file {} in your repository {name}: a git command is running there, or one was killed",
                        lock.display()
                    ),
                    Some(format!(
                        "if no git command is running in {}, remove it: `rm {}` (doctor --fix leaves it: it may be your git's)",
                        top.display(),
                        lock.display()
                    )),
                )),
            }
        }
    }
}

fn stale_lock(out: &mut Vec<Finding>, fix: bool, lock: &Path, why: &str) {
    if fix {
        match std::fs::remove_file(lock) {
            Ok(()) => out.push(finding(
                "locks",
                Level::Fixed,
                format!("removed stale {} ({why})", lock.display()),
                None,
            )),
            Err(e) => out.push(finding(
                "locks",
                Level::Problem,
                format!("cannot remove stale {}: {e}", lock.display()),
                Some(format!("`rm {}`", lock.display())),
            )),
        }
    } else {
        out.push(finding(
            "locks",
            Level::Problem,
            format!("stale git lock file {} ({why})", lock.display()),
            Some(format!(
                "`git loop doctor --fix`, or `rm {}`",
                lock.display()
            )),
        ));
    }
}

/// git's lock files in the loops' own repositories, judged by their owner: while no run
/// of a loop is alive (its run lock is free), no git can hold them, whatever their age.
fn check_loop_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    for id in ws.loop_ids().unwrap_or_default() {
        let Ok(rec) = loops::load(ws, &id) else {
            continue;
        };
        let Ok(Some(stale)) = loops::stale_git_locks(ws, &rec) else {
            continue;
        };
        let failed = if fix { stale.remove() } else { Vec::new() };
        for lock in &stale.files {
            match failed.iter().find(|(p, _)| p == lock) {
                None if fix => out.push(finding(
                    "locks",
                    Level::Fixed,
                    format!("removed stale {} (no run of loop {id} is alive)", lock.display()),
                    None,
                )),
                found => out.push(finding(
                    "locks",
                    Level::Problem,
                    match found {
                        Some((_, e)) => format!("cannot remove stale {}: {e}", lock.display()),
                        None => format!(
                            "stale git lock file {} (no run of loop {id} is alive to hold it); until it goes, commits in that repository fail and autocommit skips it",
                            lock.display()
                        ),
                    },
                    Some("git loop doctor --fix".into()),
                )),
            }
        }
    }
}

/// What a real agent needs to work in a loop: the agent installed (and its version), a
/// git identity for the commits it makes, and a login in the vault new loops get.
fn check_agent(ui: &mut Ui, ws: &Workspace, out: &mut Vec<Finding>) -> Result<()> {
    let config = super::load_config(ui, ws, None)?;
    let settings = config.settings();
    let command = &settings.agent.command;
    let profile = crate::agent::Profile::of(command);
    match crate::agent::locate(&command[0]) {
        Ok((binary, _)) => {
            let version = agent_version(&binary);
            out.push(finding(
                "agent",
                Level::Ok,
                format!(
                    "{} at {}{}",
                    command[0],
                    binary.display(),
                    version.map(|v| format!(" ({v})")).unwrap_or_default()
                ),
                None,
            ));
        }
        Err(e) => out.push(finding(
            "agent",
            Level::Problem,
            e.one_line(),
            e.hints.first().cloned(),
        )),
    }
    match crate::agent::user_identity(&ws.notes()) {
        Some((name, email)) => out.push(finding(
            "identity",
            Level::Ok,
            format!("commits made in loops carry {name} <{email}>"),
            None,
        )),
        None => out.push(finding(
            "identity",
            Level::Problem,
            "you have no git identity: commits made in loops fail".into(),
            Some(crate::agent::IDENTITY_HINT.into()),
        )),
    }
    let wanted = profile.login_variables();
    if !wanted.is_empty() {
        let vault = &settings.vault.default;
        let (vars, _) = crate::vault::entry_names(ws, vault);
        match wanted.iter().find(|w| vars.iter().any(|v| v == *w)) {
            Some(found) => out.push(finding(
                "login",
                Level::Ok,
                format!("{} logs in with {found} from vault '{vault}'", profile.name()),
                None,
            )),
            None => out.push(finding(
                "login",
                Level::Problem,
                format!(
                    "{} has no login in vault '{vault}' ({} is not there): it cannot work in a loop",
                    profile.name(),
                    wanted.join(" or ")
                ),
                Some(format!("git loop agent login --vault {vault}")),
            )),
        }
    }
    Ok(())
}

/// The toolchains found in the user's home folder, one finding each, and which the
/// sandbox profile of new loops sees.
fn check_toolchains(ws: &Workspace, out: &mut Vec<Finding>) -> Result<()> {
    use crate::toolchains::Seen;
    // What layers may not set was said once already (`check_agent`).
    let mut config = super::read_config(ws, None)?;
    let name = config.settings().sandbox.profile.clone();
    if let Err(e) = config.load_profile(ws, &name) {
        let e = crate::Error::from(e);
        out.push(finding(
            "toolchains",
            Level::Problem,
            e.one_line(),
            e.hints.first().cloned(),
        ));
        return Ok(());
    }
    for r in crate::toolchains::report_for(ws, &config) {
        let level = match r.seen {
            Seen::Enabled | Seen::Nothing => Level::Ok,
            Seen::NotEnabled | Seen::Missing => Level::Info,
            Seen::Refused => Level::Problem,
        };
        out.push(finding("toolchains", level, r.message, r.fix));
    }
    Ok(())
}

/// `AGENT --version`'s first line, within a few seconds.
fn agent_version(binary: &Path) -> Option<String> {
    let mut child = std::process::Command::new(binary)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if child.try_wait().ok()?.is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut text = String::new();
    use std::io::Read;
    child.stdout.take()?.read_to_string(&mut text).ok()?;
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
}

/// The probe of DESIGN 4.3 plus what only a real attempt shows: bwrap's version, an
/// overlay in a user namespace under bwrap, and how limits would be enforced.
fn check_sandbox(out: &mut Vec<Finding>) {
    use crate::sandbox::{limits, probe, spawn, spec::Limits};
    let inputs = probe::Inputs::read();
    let quick = probe::quick(&inputs);
    let all_ok = quick.iter().all(|f| f.ok);
    for f in quick {
        out.push(finding(
            "sandbox",
            if f.ok { Level::Ok } else { Level::Problem },
            format!("{}: {}", f.check, f.detail),
            f.fix,
        ));
    }
    let Some(bwrap) = inputs.bwrap else { return };
    match std::process::Command::new(&bwrap).arg("--version").output() {
        Ok(o) if o.status.success() => out.push(finding(
            "sandbox",
            Level::Ok,
            String::from_utf8_lossy(&o.stdout).trim().to_string(),
            None,
        )),
        _ => out.push(finding(
            "sandbox",
            Level::Problem,
            format!("{} --version failed", bwrap.display()),
            Some("reinstall bubblewrap: sudo apt-get install --reinstall bubblewrap".into()),
        )),
    }
    if all_ok {
        let scratch = std::env::temp_dir().join(format!("git-loop-doctor-{}", std::process::id()));
        match spawn::trial(&bwrap, &scratch) {
            Ok(()) => out.push(finding("sandbox", Level::Ok, "a trial sandbox with an overlay $HOME started".into(), None)),
            Err(e) => out.push(finding(
                "sandbox",
                Level::Problem,
                format!("a trial sandbox failed: {e}"),
                Some("check unprivileged user namespaces and overlayfs (see the findings above); on Ubuntu see the AppArmor fix".into()),
            )),
        }
        let _ = fsutil::remove_tree(&scratch);
    }
    let limits = Limits::defaults();
    match limits::apply(&limits, &format!("git-loop-doctor-{}", std::process::id()), &limits::CgroupHost::read(), inputs.is_root) {
        Ok(applied) => {
            let level = if applied.enforcement == limits::Enforcement::None { Level::Problem } else { Level::Ok };
            out.push(finding("sandbox", level, format!("limits enforced with {}", applied.enforcement.as_str()), None));
            applied.sweep_killed();
            applied.cleanup();
        }
        Err(e) => out.push(finding(
            "sandbox",
            Level::Problem,
            e.to_string(),
            Some("delegate a cgroup (systemd-run --user --scope -p Delegate=yes), or set `[limits] enforce = \"best-effort\"` in the operator config".into()),
        )),
    }
}

/// Leftovers of a `publish`, `merge` or `autocommit` that was killed: journals of checkout
/// updates under `locks/`, finished or undone with `--fix`, each result checked before its
/// journal goes; and the workspace's own trunk checkouts, compared with their trunk.
fn check_interrupted(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    // Only while no git-loop command runs: a journal of a live command is not a leftover.
    let Ok(Some(_lock)) = Lock::try_acquire(&ws.workspace_lock()) else {
        return;
    };
    for path in crate::checkout::journals(&ws.locks_dir()) {
        if !fix {
            out.push(finding(
                "interrupted",
                Level::Problem,
                format!(
                    "a publish or merge was interrupted before its checkout was brought along ({})",
                    path.display()
                ),
                Some("git loop doctor --fix (or run the same publish or merge again)".into()),
            ));
            continue;
        }
        let mut notices = Vec::new();
        let result = crate::checkout::recover(&path, &mut notices);
        for n in notices {
            out.push(finding("interrupted", Level::Fixed, n, None));
        }
        match result {
            Ok(Some(done)) => {
                out.push(finding("interrupted", Level::Fixed, done.to_string(), None))
            }
            Ok(None) => {}
            Err(e) => {
                let fix = match &e {
                    crate::checkout::CheckoutError::Locked { path: lock, repo } => format!(
                        "if no git command is running in {}, remove it: `rm {}`; then `git loop doctor --fix`",
                        repo.display(),
                        lock.display()
                    ),
                    crate::checkout::CheckoutError::Unproven { worktree, journal, lock, .. } => format!(
                        "look at `git status` in {}; once it is as it should be, `rm {}`{}",
                        worktree.display(),
                        journal.display(),
                        if lock.exists() { format!(" and `rm {}`", lock.display()) } else { String::new() }
                    ),
                    _ => "look at `git status` in that checkout".into(),
                };
                out.push(finding(
                    "interrupted",
                    Level::Problem,
                    format!(
                        "cannot finish the checkout update noted in {}: {e}",
                        path.display()
                    ),
                    Some(fix),
                ));
            }
        }
    }
    // Legacy: an autocommit of an earlier version noted itself here.
    if let Ok(entries) = std::fs::read_dir(ws.locks_dir()) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = name
                .strip_prefix("autocommit-")
                .and_then(|r| r.strip_suffix(".pending"))
            else {
                continue;
            };
            if fix {
                let _ = std::fs::remove_file(entry.path());
                out.push(finding(
                    "interrupted",
                    Level::Fixed,
                    format!("cleared the interrupted autocommit {rest}"),
                    None,
                ));
            } else {
                out.push(finding(
                    "interrupted",
                    Level::Problem,
                    format!("an autocommit was interrupted ({})", entry.path().display()),
                    Some("git loop doctor --fix (or run `git loop autocommit` again)".into()),
                ));
            }
        }
    }
    let pending = crate::checkout::pending_indexes(&ws.locks_dir());
    for (role, dir) in [("notes", ws.notes()), ("knowledge", ws.knowledge())] {
        if !dir.join(".git").is_dir() || pending.iter().any(|i| i.starts_with(&dir)) {
            continue;
        }
        check_checkout(role, &dir, fix, out);
    }
}

/// A trunk checkout of the workspace compared with its trunk, through gix, changing
/// nothing: an index that alone is stale is rebuilt with `--fix` (every file already holds
/// trunk's content); files that differ are someone's edits, reported and never discarded.
fn check_checkout(role: &str, dir: &Path, fix: bool, out: &mut Vec<Finding>) {
    let shown = |paths: &[String]| {
        let mut s = paths.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        if paths.len() > 5 {
            s.push_str(&format!(" and {} more", paths.len() - 5));
        }
        s
    };
    match crate::checkout::compare_with_head(dir) {
        Err(e) => out.push(finding(
            "checkouts",
            Level::Problem,
            format!("cannot compare the {role} checkout {} with its trunk: {e}", dir.display()),
            Some("`git loop doctor` again once the error above is gone".into()),
        )),
        Ok(cmp) if !cmp.edited.is_empty() => out.push(finding(
            "checkouts",
            Level::Problem,
            format!(
                "the {role} checkout {} has files that differ from its trunk (edits made there by hand?): {}",
                dir.display(),
                shown(&cmp.edited)
            ),
            Some(format!(
                "make such edits in a loop; to drop them: `git -C {} checkout -- PATH` (doctor never discards them)",
                dir.display()
            )),
        )),
        Ok(cmp) if !cmp.staged.is_empty() => {
            if fix {
                match crate::checkout::rebuild_stale_index(dir) {
                    Ok(()) => out.push(finding(
                        "checkouts",
                        Level::Fixed,
                        format!("rebuilt the stale index of the {role} checkout {} from its trunk (every file already held trunk's content)", dir.display()),
                        None,
                    )),
                    Err(e) => out.push(finding(
                        "checkouts",
                        Level::Problem,
                        format!("cannot rebuild the index of the {role} checkout {}: {e}", dir.display()),
                        Some(format!("look at `git -C {} status`", dir.display())),
                    )),
                }
            } else {
                out.push(finding(
                    "checkouts",
                    Level::Problem,
                    format!(
                        "the index of the {role} checkout {} is stale (it differs from trunk at {}; the files themselves are trunk's)",
                        dir.display(),
                        shown(&cmp.staged)
                    ),
                    Some("git loop doctor --fix rebuilds it (no file is changed)".into()),
                ));
            }
        }
        Ok(_) => {}
    }
}
