//! How a run is recorded in its loop's `events.jsonl`: its start, and its exit whatever
//! ends it.
//!
//! A run that ends while its supervisor lives records the cause the supervisor saw
//! ([`Cause`]): the command's own exit, a signal sent to `git-loop` (and by whom), the end
//! of `git-loop`'s parent (the front end that started it), or a signal that killed the
//! sandbox. A supervisor killed outright (SIGKILL to the run's whole process group)
//! records nothing; so every start leaves a mark in `loops/<id>/running/` until its exit
//! is recorded, and the next command that looks at the loop ([`settle`]: `log`, `list`,
//! `show`, the next run, `doctor --fix`) records each mark it finds as an exit with cause `unknown` and
//! the time it was found. A mark is judged only while no run of the loop is alive (the
//! loop's run lock is free: every live run holds it shared), so a live run's is never
//! taken for a dead one's.

use std::path::Path;

use serde::Serialize;

use super::events;
use crate::error::Result;
use crate::fsutil::Lock;
use crate::values::{Backend, RunMode};
use crate::workspace::Workspace;

/// The `start` event of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartEvent {
    /// The run's id, which its exit names too.
    pub run: String,
    pub backend: Backend,
    pub mode: RunMode,
    /// The network mode, `host` on the host.
    pub net: String,
    /// How the limits are enforced (a sandbox's; filled in when they are applied).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limits: Option<String>,
    pub command: Vec<String>,
    /// The allowlist's size, in the proxy mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domains: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub toolchains: Vec<String>,
}

/// The `exit` event of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExitEvent {
    pub run: String,
    pub backend: Backend,
    /// The run's exit code (none when nobody saw it end).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(flatten)]
    pub cause: Cause,
}

/// What ended a run, as far as anyone saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "kebab-case")]
pub enum Cause {
    /// The command ended by itself; its code is the run's.
    Exit,
    /// A signal sent to `git-loop` (by `from`, when the kernel says who), which then
    /// ended the sandbox.
    Signal {
        signal: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        from: Option<i32>,
    },
    /// `git-loop`'s parent (the front end that started it, `git` for `git loop run`)
    /// ended; the kernel's `signal` to `git-loop` (its parent-death signal) made it end
    /// the sandbox.
    ParentEnded { parent: i32, signal: String },
    /// The sandbox's bwrap was killed by `signal`, sent by someone else.
    SandboxKilled { signal: String },
    /// The command never started (bwrap, or the command on the host, could not be
    /// started): why.
    NotStarted { error: String },
    /// The run's time limit (`run --timeout`, `[limits] time`) ended it.
    Timeout { limit: String },
    /// Nobody saw the run end (its supervisor was killed with it): found, with no exit
    /// recorded and no run of the loop alive, at `found_at`.
    Unknown { found_at: String },
}

impl Cause {
    /// How the run ended, for the closing status line; `None` for a command's own exit.
    pub fn said(&self) -> Option<String> {
        match self {
            Cause::Exit | Cause::Unknown { .. } | Cause::NotStarted { .. } => None,
            Cause::Signal { signal, .. } => Some(format!("git-loop: SIG{signal} ended the run")),
            Cause::ParentEnded { parent, .. } => Some(format!(
                "git-loop: its parent (pid {parent}, the front end) ended, and with it the run"
            )),
            Cause::SandboxKilled { signal } => {
                Some(format!("git-loop: the sandbox was killed by SIG{signal}"))
            }
            Cause::Timeout { limit } => {
                Some(format!("git-loop: the run's time limit ({limit}) ended it"))
            }
        }
    }
}

/// Appends `start` to the loop's events and marks the run as started and not ended.
pub fn started(ws: &Workspace, id: &str, start: &StartEvent) {
    let _ = events::append(&ws.loop_events(id), "start", to_value(start));
    let dir = ws.loop_running(id);
    // Best effort, as the events are: a run is never refused for its record.
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(&start.run), b"");
}

/// Appends `exit` to the loop's events and removes the run's mark.
pub fn ended(ws: &Workspace, id: &str, exit: &ExitEvent) {
    let _ = events::append(&ws.loop_events(id), "exit", to_value(exit));
    let _ = std::fs::remove_file(ws.loop_running(id).join(&exit.run));
}

fn to_value(event: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(event).unwrap_or_default()
}

/// Records every run of loop `id` that started and whose end nobody recorded as ended,
/// cause unknown, found now: only while no run of the loop is alive (the run lock is
/// taken exclusively for the judging, and nothing is done when it cannot be). Costs a
/// look at an empty folder when there is nothing to record.
pub fn settle(ws: &Workspace, id: &str) -> Result<()> {
    if unended(ws, id).is_empty() {
        return Ok(());
    }
    if let Some(hold) = Lock::try_acquire(&ws.loop_run_lock(id))? {
        settle_held(ws, id, &hold);
    }
    Ok(())
}

/// [`settle`], with the loop's run lock held exclusively by `_hold`; how many runs it
/// recorded.
pub fn settle_held(ws: &Workspace, id: &str, _hold: &Lock) -> usize {
    let found_at = crate::loops::now_rfc3339();
    let runs = unended(ws, id);
    let count = runs.len();
    for run in runs {
        ended(
            ws,
            id,
            &ExitEvent {
                backend: backend_of(&ws.loop_events(id), &run),
                run,
                code: None,
                duration_ms: None,
                cause: Cause::Unknown {
                    found_at: found_at.clone(),
                },
            },
        );
    }
    count
}

/// The runs marked as started and not ended, by id (names that are not a run's id are
/// not git-loop's and are left alone).
pub fn unended(ws: &Workspace, id: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(ws.loop_running(id)) else {
        return Vec::new();
    };
    let mut runs: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| is_run_id(name))
        .collect();
    runs.sort();
    runs
}

/// A run's id: 16 lowercase hex digits.
fn is_run_id(name: &str) -> bool {
    name.len() == 16 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The backend of run `run`, from its start event; a sandbox's when it cannot be found.
fn backend_of(events: &Path, run: &str) -> Backend {
    events::read(events)
        .iter()
        .rev()
        .find(|e| e["kind"] == "start" && e["run"] == run)
        .and_then(|e| e["backend"].as_str().and_then(Backend::from_name))
        .unwrap_or(Backend::Bwrap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::RunMode;

    fn start(run: &str, backend: Backend) -> StartEvent {
        StartEvent {
            run: run.into(),
            backend,
            mode: RunMode::Work,
            net: "none".into(),
            limits: Some("cgroup v2".into()),
            command: vec!["true".into()],
            domains: None,
            toolchains: Vec::new(),
        }
    }

    #[test]
    fn events_are_written_as_before_with_the_run_and_its_cause() {
        assert_eq!(
            to_value(&start("00112233445566ff", Backend::Bwrap)),
            serde_json::json!({"run": "00112233445566ff", "backend": "bwrap", "mode": "work",
                "net": "none", "limits": "cgroup v2", "command": ["true"]})
        );
        let exit = |cause| ExitEvent {
            run: "r".into(),
            backend: Backend::Bwrap,
            code: Some(129),
            duration_ms: Some(5),
            cause,
        };
        assert_eq!(
            to_value(&exit(Cause::ParentEnded {
                parent: 42,
                signal: "HUP".into()
            })),
            serde_json::json!({"run": "r", "backend": "bwrap", "code": 129, "duration_ms": 5,
                "cause": "parent-ended", "parent": 42, "signal": "HUP"})
        );
        assert_eq!(
            to_value(&exit(Cause::Signal {
                signal: "TERM".into(),
                from: None
            })),
            serde_json::json!({"run": "r", "backend": "bwrap", "code": 129, "duration_ms": 5,
                "cause": "signal", "signal": "TERM"})
        );
        assert_eq!(to_value(&exit(Cause::Exit))["cause"], "exit");
    }

    #[test]
    fn an_unended_run_is_recorded_once_and_only_while_no_run_lives() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().to_path_buf(), "alice".into());
        let id = "fix-abc123";
        std::fs::create_dir_all(ws.loop_dir(id)).unwrap();
        std::fs::create_dir_all(ws.locks_dir()).unwrap();
        let none = start("0123456789abcdef", Backend::None);
        started(&ws, id, &none);
        started(&ws, id, &start("fedcba9876543210", Backend::Bwrap));
        // A name that is not a run's is not git-loop's.
        std::fs::write(ws.loop_running(id).join("notes.txt"), "").unwrap();
        // A live run holds the run lock shared: nothing is judged.
        let live = Lock::acquire_shared(&ws.loop_run_lock(id)).unwrap();
        settle(&ws, id).unwrap();
        assert_eq!(unended(&ws, id).len(), 2);
        drop(live);
        settle(&ws, id).unwrap();
        settle(&ws, id).unwrap();
        assert!(unended(&ws, id).is_empty());
        let exits: Vec<serde_json::Value> = events::read(&ws.loop_events(id))
            .into_iter()
            .filter(|e| e["kind"] == "exit")
            .collect();
        assert_eq!(exits.len(), 2, "{exits:?}");
        assert_eq!(exits[0]["run"], "0123456789abcdef");
        assert_eq!(exits[0]["backend"], "none");
        assert_eq!(exits[1]["backend"], "bwrap");
        for e in &exits {
            assert_eq!(e["cause"], "unknown");
            assert_eq!(e["found_at"], e["ts"]);
            assert!(e.get("code").is_none());
        }
        assert!(ws.loop_running(id).join("notes.txt").exists());
    }
}
