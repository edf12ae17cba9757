//! The host: the sandbox's prerequisites, the agent, its login, the toolchains.

use std::path::Path;
use std::time::Duration;

use crate::config::Config;
use crate::error::Result;
use crate::fsutil;
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

/// The probe of DESIGN 4.3 plus what only a real attempt shows: bwrap's version, an
/// overlay in a user namespace under bwrap, and how limits would be enforced.
pub(super) fn check_sandbox(out: &mut Vec<Finding>) {
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

/// What a real agent needs to work in a loop: the agent installed (and its version), a
/// git identity for the commits it makes, and a login in the vault new loops get.
pub(super) fn check_agent(ws: &Workspace, config: &Config, out: &mut Vec<Finding>) -> Result<()> {
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
        None => {
            let e = crate::Error::from(crate::agent::AgentError::NoIdentity {
                consequence: "commits made in loops fail",
            });
            out.push(finding(
                "identity",
                Level::Problem,
                e.one_line(),
                e.hints.first().cloned(),
            ))
        }
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
pub(super) fn check_toolchains(
    ws: &Workspace,
    config: &Config,
    out: &mut Vec<Finding>,
) -> Result<()> {
    use crate::toolchains::Seen;
    let mut config = config.clone();
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

/// What the person's own git finds from the folder it runs in: a bare repository's layout
/// (`HEAD`, `objects/`, `refs/`, `config`) is a repository to git unless
/// `safe.bareRepository` is `explicit`, and a loop can lay one out in its trees out of
/// names no rule can refuse; its config would then run when the person runs git there.
/// Read from the system and global config only (run in `/`), which is where git reads
/// this key from.
pub(super) fn check_git(out: &mut Vec<Finding>) {
    let value = crate::git::cmd::Git::in_dir(Path::new("/"))
        .args(["config", "--get", "safe.bareRepository"])
        .output_any()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    out.push(bare_repository_finding(value.as_deref()));
}

/// The finding for `safe.bareRepository`'s value (`None`: git could not be asked).
fn bare_repository_finding(value: Option<&str>) -> Finding {
    match value {
        Some(v) if v.eq_ignore_ascii_case("explicit") => finding(
            "git",
            Level::Ok,
            "safe.bareRepository = explicit: your git uses a bare repository only when named".into(),
            None,
        ),
        Some(v) => finding(
            "git",
            Level::Info,
            format!(
                "safe.bareRepository is {}: your git takes a folder laid out as a bare repository (HEAD, objects/, refs/, config) for one when run in it, and a loop can lay one out in its trees, whose config your git would then run",
                if v.is_empty() { "not set".to_string() } else { format!("{v:?}") }
            ),
            Some("git config --global safe.bareRepository explicit".into()),
        ),
        None => finding(
            "git",
            Level::Info,
            "git could not be asked for safe.bareRepository".into(),
            Some("git config --global safe.bareRepository explicit".into()),
        ),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_repository_found_from_a_folder_is_advised_against() {
        let explicit = bare_repository_finding(Some("Explicit"));
        assert_eq!((explicit.level, explicit.fix), (Level::Ok, None));
        for value in [Some(""), Some("all"), None] {
            let f = bare_repository_finding(value);
            assert_eq!(f.level, Level::Info, "{value:?}");
            assert_eq!(
                f.fix.as_deref(),
                Some("git config --global safe.bareRepository explicit")
            );
        }
        assert!(bare_repository_finding(Some(""))
            .message
            .starts_with("safe.bareRepository is not set"));
        assert!(bare_repository_finding(Some("all"))
            .message
            .starts_with("safe.bareRepository is \"all\""));
    }
}
