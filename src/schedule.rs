//! The schedule that runs `git loop autocommit --all --quiet` (and `git loop sync` with
//! `--sync`): a systemd user timer where systemd runs the user's session, otherwise one
//! crontab entry marked with a comment, so an install is idempotent and an uninstall
//! removes exactly it. `GIT_LOOP_CRONTAB` and `GIT_LOOP_SYSTEMCTL` name other commands.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;

use crate::error::{Error, Result};

/// Which scheduler holds the entry.
pub enum Scheduler {
    /// A systemd user timer, through this `systemctl`.
    Systemd(String),
    Cron,
}

impl Scheduler {
    /// systemd where it runs the user's session (or a systemctl is named), cron elsewhere.
    pub fn find() -> Scheduler {
        match systemctl() {
            Some(cmd) => Scheduler::Systemd(cmd),
            None => Scheduler::Cron,
        }
    }
}

/// What an install made: the crontab line, or the timer's file and its interval.
pub enum Installed {
    Timer { path: PathBuf, every: String },
    Line(String),
}

/// What `status` found.
#[derive(Debug, Serialize)]
pub struct Status {
    pub installed: bool,
    pub scheduler: &'static str,
    /// The crontab line, or the timer's file.
    pub entry: Option<String>,
    /// systemd's word for the timer ("active", ...); for cron, whether the line is there.
    pub active: Option<serde_json::Value>,
}

/// Why the schedule cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("systemd would not start {unit}.timer: {stderr}")]
    Timer { unit: &'static str, stderr: String },
    #[error("cannot run `{command} -l`")]
    Crontab {
        command: String,
        #[source]
        source: std::io::Error,
    },
}

/// Adds (or replaces) the entry for the workspace at `home`, run by `exe`, on the crontab
/// `schedule` (see [`parse_every`]).
pub fn install(
    scheduler: &Scheduler,
    schedule: &str,
    home: &Path,
    exe: &Path,
    sync: bool,
) -> Result<Installed> {
    let (home, exe) = (home.display().to_string(), exe.display().to_string());
    match scheduler {
        Scheduler::Systemd(cmd) => {
            let (dir, service_path, timer_path) = unit_paths()?;
            let every = every_span(schedule);
            let (service, timer) = units(&every, &home, &exe, sync);
            std::fs::create_dir_all(&dir).map_err(|e| {
                Error::failure(format!("cannot create {}", dir.display())).with_source(e)
            })?;
            crate::fsutil::write_atomic(&service_path, service.as_bytes())?;
            crate::fsutil::write_atomic(&timer_path, timer.as_bytes())?;
            systemctl_run(cmd, &["daemon-reload"])?;
            let out = systemctl_run(cmd, &["enable", "--now", &format!("{UNIT}.timer")])?;
            if !out.status.success() {
                return Err(ScheduleError::Timer {
                    unit: UNIT,
                    stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
                }
                .into());
            }
            Ok(Installed::Timer {
                path: timer_path,
                every,
            })
        }
        Scheduler::Cron => {
            let current = read_crontab()?;
            let mut next = without_entry(&current);
            let line = entry(schedule, &home, &exe, sync);
            next.push_str(&line);
            next.push('\n');
            write_crontab(&next)?;
            Ok(Installed::Line(line))
        }
    }
}

/// Removes the entry; whether there was one.
pub fn uninstall(scheduler: &Scheduler) -> Result<bool> {
    match scheduler {
        Scheduler::Systemd(cmd) => {
            let (_, service_path, timer_path) = unit_paths()?;
            if !timer_path.exists() && !service_path.exists() {
                return Ok(false);
            }
            let _ = systemctl_run(cmd, &["disable", "--now", &format!("{UNIT}.timer")]);
            let _ = std::fs::remove_file(&timer_path);
            let _ = std::fs::remove_file(&service_path);
            systemctl_run(cmd, &["daemon-reload"])?;
            Ok(true)
        }
        Scheduler::Cron => {
            let current = read_crontab()?;
            let next = without_entry(&current);
            if next == current {
                return Ok(false);
            }
            write_crontab(&next)?;
            Ok(true)
        }
    }
}

/// Whether the entry is there, and what runs it.
pub fn status(scheduler: &Scheduler) -> Result<Status> {
    match scheduler {
        Scheduler::Systemd(cmd) => {
            let (_, _, timer_path) = unit_paths()?;
            if !timer_path.exists() {
                return Ok(Status {
                    installed: false,
                    scheduler: "systemd",
                    entry: None,
                    active: None,
                });
            }
            let out = systemctl_run(cmd, &["is-active", &format!("{UNIT}.timer")])?;
            let active = String::from_utf8_lossy(&out.stdout).trim().to_string();
            Ok(Status {
                installed: true,
                scheduler: "systemd",
                entry: Some(timer_path.display().to_string()),
                active: Some(active.into()),
            })
        }
        Scheduler::Cron => {
            let current = read_crontab()?;
            let line = current.lines().find(|l| l.ends_with(MARKER));
            Ok(Status {
                installed: line.is_some(),
                scheduler: "cron",
                entry: line.map(str::to_string),
                active: Some(line.is_some().into()),
            })
        }
    }
}

/// The systemd user folder, the service's file and the timer's.
fn unit_paths() -> Result<(PathBuf, PathBuf, PathBuf)> {
    let dir = crate::workspace::HostPaths::systemd_user_dir()?;
    let service = dir.join(format!("{UNIT}.service"));
    let timer = dir.join(format!("{UNIT}.timer"));
    Ok((dir, service, timer))
}

pub const UNIT: &str = "git-loop-autocommit";

const MARKER: &str = "# git-loop autocommit";

/// The crontab schedule for `5m`, `1h`, ...
pub fn parse_every(s: &str) -> std::result::Result<String, String> {
    let bad = || format!("'{s}' is not an interval like 5m or 1h (1m-59m, 1h-23h)");
    let (num, unit) = s.split_at(s.len().saturating_sub(1));
    let n: u32 = num.parse().map_err(|_| bad())?;
    match (unit, n) {
        ("m", 1) => Ok("* * * * *".into()),
        ("m", 2..=59) => Ok(format!("*/{n} * * * *")),
        ("h", 1) => Ok("0 * * * *".into()),
        ("h", 2..=23) => Ok(format!("0 */{n} * * *")),
        _ => Err(bad()),
    }
}

fn crontab_command() -> String {
    std::env::var("GIT_LOOP_CRONTAB")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "crontab".into())
}

fn read_crontab() -> Result<String> {
    let cmd = crontab_command();
    let out = Command::new(&cmd)
        .arg("-l")
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ScheduleError::Crontab {
            command: cmd.clone(),
            source,
        })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    // `crontab -l` fails when the user has no crontab yet: that is an empty one.
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("no crontab") {
        return Ok(String::new());
    }
    Err(Error::failure(format!("`{cmd} -l` failed: {}", err.trim())))
}

fn write_crontab(text: &str) -> Result<()> {
    let cmd = crontab_command();
    let mut child = Command::new(&cmd)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::failure(format!("cannot run `{cmd} -`")).with_source(e))?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(Error::failure(format!(
            "`{cmd} -` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// The crontab without our entry (pure: install and uninstall are built on it).
pub fn without_entry(crontab: &str) -> String {
    let mut out: String = crontab
        .lines()
        .filter(|l| !l.ends_with(MARKER))
        .map(|l| format!("{l}\n"))
        .collect();
    if out.trim().is_empty() {
        out.clear();
    }
    out
}

/// Our entry: the schedule, the workspace it works on, the binary, the marker. With
/// `sync`, a sync follows the autocommit whether or not every loop could be committed.
pub fn entry(schedule: &str, home: &str, exe: &str, sync: bool) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let env = format!("GIT_LOOP_HOME={}", quote(home));
    let exe = quote(exe);
    let then = if sync {
        format!("; {env} {exe} sync --quiet")
    } else {
        String::new()
    };
    format!("{schedule} {env} {exe} autocommit --all --quiet{then} {MARKER}")
}

/// The systemctl to use, when systemd runs the user's session (or one is named).
fn systemctl() -> Option<String> {
    if let Some(cmd) = std::env::var("GIT_LOOP_SYSTEMCTL")
        .ok()
        .filter(|s| !s.is_empty())
    {
        return Some(cmd);
    }
    if std::env::var_os("GIT_LOOP_CRONTAB").is_some() {
        return None;
    }
    let out = Command::new("systemctl")
        .args(["--user", "is-system-running"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let state = String::from_utf8_lossy(&out.stdout);
    matches!(state.trim(), "running" | "degraded" | "starting").then(|| "systemctl".to_string())
}

fn systemctl_run(cmd: &str, args: &[&str]) -> Result<std::process::Output> {
    Command::new(cmd)
        .arg("--user")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::failure(format!("cannot run `{cmd} --user {}`", args.join(" "))).with_source(e)
        })
}

/// The timer and service units (pure).
pub fn units(every: &str, home: &str, exe: &str, sync: bool) -> (String, String) {
    let quote = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    // `-`: a failed autocommit (one loop that could not be committed) does not stop the
    // sync; the journal keeps both outputs.
    let (what, dash, then) = if sync {
        (
            "commit what loops left uncommitted, then sync",
            "-",
            format!("ExecStart={} sync --quiet\n", quote(exe)),
        )
    } else {
        ("commit what loops left uncommitted", "", String::new())
    };
    let service = format!(
        "[Unit]\nDescription=git loop: {what}\n\n[Service]\nType=oneshot\nEnvironment={}\nExecStart={dash}{} autocommit --all --quiet\n{then}",
        quote(&format!("GIT_LOOP_HOME={home}")),
        quote(exe)
    );
    let timer = format!(
        "[Unit]\nDescription=git loop autocommit every {every}\n\n[Timer]\nOnBootSec={every}\nOnUnitActiveSec={every}\n\n[Install]\nWantedBy=timers.target\n"
    );
    (service, timer)
}

/// `*/5 * * * *` back to `5min` for systemd (the schedule is one `parse_every` made).
fn every_span(schedule: &str) -> String {
    let field = schedule.split_whitespace().collect::<Vec<_>>();
    match field.as_slice() {
        ["*", "*", "*", "*", "*"] => "1min".into(),
        ["0", "*", "*", "*", "*"] => "1h".into(),
        ["0", h, "*", "*", "*"] => format!("{}h", h.trim_start_matches("*/")),
        [m, "*", "*", "*", "*"] => format!("{}min", m.trim_start_matches("*/")),
        _ => "5min".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn systemd_units() {
        let (service, timer) = units(
            &every_span("*/10 * * * *"),
            "/home/u/my ws",
            "/usr/bin/git-loop",
            false,
        );
        assert!(!service.contains("sync"), "{service}");
        assert!(
            service.contains("Environment=\"GIT_LOOP_HOME=/home/u/my ws\""),
            "{service}"
        );
        assert!(
            service.contains("ExecStart=\"/usr/bin/git-loop\" autocommit --all --quiet"),
            "{service}"
        );
        assert!(
            timer.contains("OnUnitActiveSec=10min") && timer.contains("WantedBy=timers.target"),
            "{timer}"
        );
        assert_eq!(every_span("0 */2 * * *"), "2h");
        assert_eq!(every_span("0 * * * *"), "1h");
        assert_eq!(every_span("* * * * *"), "1min");
        let (service, _) = units("5min", "/ws", "/usr/bin/git-loop", true);
        assert!(
            service.contains(
                "ExecStart=-\"/usr/bin/git-loop\" autocommit --all --quiet\nExecStart=\"/usr/bin/git-loop\" sync --quiet\n"
            ),
            "{service}"
        );
    }

    #[test]
    fn schedules() {
        assert_eq!(parse_every("5m").unwrap(), "*/5 * * * *");
        assert_eq!(parse_every("1m").unwrap(), "* * * * *");
        assert_eq!(parse_every("2h").unwrap(), "0 */2 * * *");
        assert!(parse_every("0m").is_err());
        assert!(parse_every("90m").is_err());
        assert!(parse_every("5").is_err());
    }

    #[test]
    fn the_entry_is_replaced_and_removed_alone() {
        let mine = "MAILTO=me\n0 3 * * * backup.sh\n";
        let line = entry("*/5 * * * *", "/home/u/ws it's", "/bin/git-loop", false);
        assert!(!line.contains("sync"), "{line}");
        let synced = entry("*/5 * * * *", "/ws", "/bin/git-loop", true);
        assert_eq!(
            synced,
            "*/5 * * * * GIT_LOOP_HOME='/ws' '/bin/git-loop' autocommit --all --quiet; GIT_LOOP_HOME='/ws' '/bin/git-loop' sync --quiet # git-loop autocommit"
        );
        assert_eq!(without_entry(&format!("{synced}\n")), "");
        assert!(
            line.contains("GIT_LOOP_HOME='/home/u/ws it'\\''s'"),
            "{line}"
        );
        let installed = format!("{}{line}\n", without_entry(mine));
        let twice = format!("{}{line}\n", without_entry(&installed));
        assert_eq!(installed, twice);
        assert_eq!(without_entry(&twice), mine);
        assert_eq!(without_entry(&format!("{line}\n")), "");
    }
}
