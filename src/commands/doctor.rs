use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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
/// branch is missing, folders left by an interrupted `new`, and stale lock files.
/// Exits 1 when a problem was found.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Apply the fixes that lose nothing (leftover folders of an interrupted `new`,
    /// stale git lock files).
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

/// Git lock files older than this belong to no live git command.
const STALE_AFTER: Duration = Duration::from_secs(60);

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
        check_repos(&ws, &mut findings);
        check_loops(&ws, &mut findings)?;
        check_leftovers(&ws, args.fix, &mut findings)?;
        check_locks(&ws, args.fix, &mut findings);
        check_loop_locks(&ws, args.fix, &mut findings);
        check_interrupted(&ws, args.fix, &mut findings);
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

fn check_repos(ws: &Workspace, out: &mut Vec<Finding>) {
    for name in ws.repo_names().unwrap_or_default() {
        if let Err(e) = crate::repos::check_link(ws, &name) {
            out.push(finding(
                "repos",
                Level::Problem,
                e.message.clone(),
                Some(format!(
                    "move the repository back, or `ln -sfn NEW-PATH {}`",
                    ws.repo_link(&name).display()
                )),
            ));
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

fn check_leftovers(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) -> Result<()> {
    // `new` holds no lock while it assembles a loop; a leftover is one whose creator is
    // gone, which its age tells.
    for dir in ws.staging_leftovers()? {
        if !is_stale(&dir) {
            continue;
        }
        if fix && fsutil::remove_tree(&dir).is_ok() {
            out.push(finding(
                "leftovers",
                Level::Fixed,
                format!("removed {}", dir.display()),
                None,
            ));
        } else {
            out.push(finding(
                "leftovers",
                Level::Problem,
                format!(
                    "{} was left by an interrupted `git loop new`",
                    dir.display()
                ),
                Some("git loop doctor --fix".into()),
            ));
        }
    }
    Ok(())
}

fn check_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    if let Ok(None) = Lock::try_acquire(&ws.workspace_lock()) {
        out.push(finding(
            "locks",
            Level::Info,
            format!(
                "{} is held by a running git loop command",
                ws.workspace_lock().display()
            ),
            None,
        ));
    }
    let mut git_dirs = vec![
        ws.knowledge().join(".git"),
        ws.notes().join(".git"),
        ws.personal().join(".git"),
    ];
    for name in ws.repo_names().unwrap_or_default() {
        git_dirs.push(ws.repo_link(&name).join(".git"));
    }
    for git_dir in git_dirs {
        let mut locks = Vec::new();
        find_git_locks(&git_dir, &mut locks);
        for lock in locks {
            if !is_stale(&lock) {
                continue;
            }
            if fix && std::fs::remove_file(&lock).is_ok() {
                out.push(finding(
                    "locks",
                    Level::Fixed,
                    format!("removed stale {}", lock.display()),
                    None,
                ));
            } else {
                out.push(finding(
                    "locks",
                    Level::Problem,
                    format!(
                        "stale git lock file {} (no git command holds it)",
                        lock.display()
                    ),
                    Some(format!(
                        "`rm {}`, or `git loop doctor --fix`",
                        lock.display()
                    )),
                ));
            }
        }
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

/// The lock files git leaves when killed: index, HEAD, config, packed-refs and refs.
fn find_git_locks(git_dir: &Path, out: &mut Vec<PathBuf>) {
    for name in [
        "index.lock",
        "HEAD.lock",
        "config.lock",
        "packed-refs.lock",
        "shallow.lock",
    ] {
        let p = git_dir.join(name);
        if p.exists() {
            out.push(p);
        }
    }
    let mut stack = vec![git_dir.join("refs")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                out.push(p);
            }
        }
    }
}

fn is_stale(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age >= STALE_AFTER)
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

/// Leftovers of a `publish`, `merge` or `autocommit` that was killed: journals under
/// `locks/`, and the workspace's own trunk checkouts left half-updated.
fn check_interrupted(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    // Only while no git-loop command runs: a journal of a live command is not a leftover.
    let Ok(Some(_lock)) = Lock::try_acquire(&ws.workspace_lock()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(ws.locks_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".pending") {
            continue;
        }
        if name.starts_with("checkout-") {
            if fix {
                match crate::publish::recover(&path) {
                    Ok(_) => out.push(finding(
                        "interrupted",
                        Level::Fixed,
                        format!("finished the checkout update noted in {}", path.display()),
                        None,
                    )),
                    Err(e) => out.push(finding(
                        "interrupted",
                        Level::Problem,
                        format!(
                            "cannot finish the checkout update noted in {}: {e}",
                            path.display()
                        ),
                        Some("look at `git status` in that checkout".into()),
                    )),
                }
            } else {
                out.push(finding(
                    "interrupted",
                    Level::Problem,
                    format!(
                        "a publish or merge was interrupted before its checkout followed ({})",
                        path.display()
                    ),
                    Some("git loop doctor --fix (or run the same publish or merge again)".into()),
                ));
            }
        } else if let Some(rest) = name.strip_prefix("autocommit-") {
            if fix {
                let _ = std::fs::remove_file(&path);
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
                    format!("an autocommit was interrupted ({})", path.display()),
                    Some("git loop doctor --fix (or run `git loop autocommit` again)".into()),
                ));
            }
        }
    }
    for (role, dir) in [("notes", ws.notes()), ("knowledge", ws.knowledge())] {
        if !dir.join(".git").is_dir() || crate::publish::checkout_is_clean(&dir) {
            continue;
        }
        if fix && crate::publish::repair_checkout(&dir).is_ok() {
            out.push(finding(
                "checkouts",
                Level::Fixed,
                format!(
                    "restored the {role} checkout {} to its trunk",
                    dir.display()
                ),
                None,
            ));
        } else {
            out.push(finding(
                "checkouts",
                Level::Problem,
                format!("the {role} checkout {} differs from its trunk (a half-updated checkout, or edits made there)", dir.display()),
                Some("git loop doctor --fix restores it to trunk (changes made there by hand are discarded; make them in a loop)".into()),
            ));
        }
    }
}
