//! N agents on one task (DESIGN 10): `new --fan-out N` makes N loops on one base with one
//! group name, recorded in each `loop.toml`; `compare` lays them side by side (the agent's
//! last run, commits, diff size, the profile's check run in each loop's sandbox);
//! `pick` merges one and removes the others, their branches kept.
//!
//! A group is named like a loop (`<slug>-<6 hex>`), and never the same as a loop's id.
//! A name given on the command line is a loop's before it is a group's, except that a
//! group's exact name wins over a loop's prefix.

use serde::Serialize;

use crate::error::Result;
use crate::git::cmd::Git;
use crate::loops::{self, LoopRecord, LoopStatus};
use crate::review::task::{self, Checked};
use crate::sandbox::events;
use crate::workspace::Workspace;

/// The most loops one fan-out makes.
pub const MAX_FAN_OUT: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum FanOutError {
    #[error("no loop or group '{0}'")]
    Unknown(String),
    #[error("'{query}' names more than one group")]
    Ambiguous { query: String, groups: Vec<String> },
    #[error("loop {0} is not one of a fan-out's loops")]
    NoGroup(String),
}

/// What a name on the command line means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Loop(String),
    /// A group and the ids of its loops, sorted.
    Group(String, Vec<String>),
}

/// Every group of the workspace with its loops' ids.
pub fn groups(ws: &Workspace) -> Result<Vec<(String, Vec<String>)>> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for id in ws.loop_ids()? {
        let Ok(rec) = loops::load(ws, &id) else {
            continue;
        };
        let Some(g) = rec.group else { continue };
        match out.iter_mut().find(|(name, _)| *name == g) {
            Some((_, ids)) => ids.push(id),
            None => out.push((g, vec![id])),
        }
    }
    for (_, ids) in &mut out {
        ids.sort();
    }
    out.sort();
    Ok(out)
}

/// A new group name for `title`: unused by any loop or group.
pub fn new_group_name(ws: &Workspace, title: &str) -> Result<String> {
    let slug = loops::slugify(title);
    let taken = groups(ws)?;
    let ids = ws.loop_ids()?;
    for _ in 0..64 {
        let name = loops::new_id(&slug);
        if !ids.contains(&name) && !taken.iter().any(|(g, _)| *g == name) {
            return Ok(name);
        }
    }
    Err(crate::Error::failure("cannot find an unused group name"))
}

/// What `query` names: a loop (its id, or a unique prefix of it), or a group (its exact
/// name, which wins over a loop's prefix, or a unique prefix of it).
pub fn resolve(ws: &Workspace, query: &str) -> Result<Target> {
    let all = groups(ws)?;
    let ids = ws.loop_ids()?;
    if ids.iter().any(|id| id == query) {
        return Ok(Target::Loop(query.to_string()));
    }
    if let Some((g, members)) = all.iter().find(|(g, _)| g == query) {
        return Ok(Target::Group(g.clone(), members.clone()));
    }
    match loops::resolve(ws, query) {
        Ok(id) => Ok(Target::Loop(id)),
        Err(e) => {
            let matches: Vec<&(String, Vec<String>)> = all
                .iter()
                .filter(|(g, _)| !query.is_empty() && g.starts_with(query))
                .collect();
            match matches.as_slice() {
                [(g, members)] => Ok(Target::Group(g.clone(), members.clone())),
                [] => Err(e),
                many => Err(FanOutError::Ambiguous {
                    query: query.to_string(),
                    groups: many.iter().map(|(g, _)| g.clone()).collect(),
                }
                .into()),
            }
        }
    }
}

/// A group's loops by name (see [`resolve`]); a loop's name is refused.
pub fn members(ws: &Workspace, query: &str) -> Result<(String, Vec<String>)> {
    match resolve(ws, query)? {
        Target::Group(g, members) => Ok((g, members)),
        Target::Loop(id) => {
            let rec = loops::load(ws, &id)?;
            match rec.group {
                Some(g) => {
                    let (_, members) = groups(ws)?
                        .into_iter()
                        .find(|(name, _)| *name == g)
                        .unwrap_or((g.clone(), vec![id]));
                    Ok((g, members))
                }
                None => Err(FanOutError::NoGroup(id).into()),
            }
        }
    }
}

/// What a loop's agent is doing or did, as `compare` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentState {
    /// `working`, `needs-input`, `done`, `exited` (from the agent's own hooks or its
    /// live session, see `crate::session::state`), `running` (a run of the loop is live
    /// and says no more), or `not-run`.
    pub state: String,
    /// The exit code, with `exited`.
    pub code: Option<i64>,
    /// When it got there (RFC 3339), when known.
    pub since: Option<String>,
}

impl AgentState {
    pub fn text(&self) -> String {
        match (self.state.as_str(), self.code) {
            ("exited", Some(0)) => "done".into(),
            ("exited", Some(c)) => format!("exited {c}"),
            ("not-run", _) => "not run".into(),
            (s, _) => s.to_string(),
        }
    }
}

/// Notes in loop `id`'s events that its agent's run (`git loop agent`) ended with `code`:
/// what an agent without hooks of its own (any other command) leaves to tell `compare`.
pub fn agent_ended(ws: &Workspace, id: &str, code: u8) {
    let _ = events::append(
        &ws.loop_events(id),
        "agent",
        serde_json::json!({ "code": code }),
    );
}

/// What loop `id`'s agent is doing or did: the newer of the state its hooks or its live
/// session recorded and the last end of `git loop agent` in its events; `running` when
/// neither says more and a run of the loop is live.
pub fn agent_state(ws: &Workspace, id: &str) -> AgentState {
    let hooks = crate::session::state::read(ws, id).and_then(|s| {
        s.state.map(|k| AgentState {
            state: k.as_str().to_string(),
            code: s.code.map(i64::from),
            since: Some(s.since),
        })
    });
    let ended = events::read(&ws.loop_events(id))
        .iter()
        .rev()
        .find(|e| e.get("kind").and_then(|k| k.as_str()) == Some("agent"))
        .map(|e| AgentState {
            state: "exited".into(),
            code: e.get("code").and_then(|c| c.as_i64()),
            since: e
                .get("ts")
                .and_then(|t| t.as_str())
                .map(|t| t.chars().take(40).collect()),
        });
    let newer = match (hooks, ended) {
        (Some(h), Some(e)) => Some(if e.since > h.since { e } else { h }),
        (h, e) => h.or(e),
    };
    let live = matches!(
        crate::fsutil::Lock::try_acquire(&ws.loop_run_lock(id)),
        Ok(None)
    );
    match newer {
        Some(s) if !(live && s.state == "exited") => s,
        _ if live => AgentState {
            state: "running".into(),
            code: None,
            since: None,
        },
        Some(s) => s,
        None => AgentState {
            state: "not-run".into(),
            code: None,
            since: None,
        },
    }
}

/// One row of `compare`.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub title: String,
    pub agent: AgentState,
    /// Commits ahead of the base branch.
    pub commits: usize,
    pub files: usize,
    pub insertions: usize,
    pub deletions: usize,
    /// Lines changed (insertions + deletions), and that against the smallest of the group.
    pub size: usize,
    pub size_vs_smallest: Option<f64>,
    /// The profile's check in this loop's sandbox; None when not run.
    pub check: Option<Checked>,
    /// Why the loop could not be judged.
    pub error: Option<String>,
}

/// `git diff --shortstat` read: files, insertions, deletions.
pub fn parse_shortstat(text: &str) -> (usize, usize, usize) {
    let mut out = (0, 0, 0);
    for part in text.trim().split(',') {
        let mut words = part.split_whitespace();
        let n: usize = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
        match words.next() {
            Some(w) if w.starts_with("file") => out.0 = n,
            Some(w) if w.starts_with("insertion") => out.1 = n,
            Some(w) if w.starts_with("deletion") => out.2 = n,
            _ => {}
        }
    }
    out
}

/// The rows of a group's loops, each imported and judged; `check` runs the profile's
/// check (when it names one) in each loop's sandbox, one after another.
pub fn compare(
    ws: &Workspace,
    ids: &[String],
    check: &dyn Fn(&LoopRecord) -> Option<Vec<String>>,
    run_checks: bool,
) -> Vec<Row> {
    let mut rows: Vec<Row> = ids
        .iter()
        .map(|id| {
            let mut row = Row {
                id: id.clone(),
                title: String::new(),
                agent: agent_state(ws, id),
                commits: 0,
                files: 0,
                insertions: 0,
                deletions: 0,
                size: 0,
                size_vs_smallest: None,
                check: None,
                error: None,
            };
            if let Err(e) = fill(ws, id, &mut row, check, run_checks) {
                row.error = Some(e.one_line());
            }
            row
        })
        .collect();
    let smallest = rows
        .iter()
        .filter(|r| r.error.is_none() && r.size > 0)
        .map(|r| r.size)
        .min();
    for r in &mut rows {
        if let (Some(s), true) = (smallest, r.size > 0) {
            r.size_vs_smallest = Some((r.size as f64 / s as f64 * 100.0).round() / 100.0);
        }
    }
    rows
}

fn fill(
    ws: &Workspace,
    id: &str,
    row: &mut Row,
    check: &dyn Fn(&LoopRecord) -> Option<Vec<String>>,
    run_checks: bool,
) -> Result<()> {
    let rec = loops::load(ws, id)?;
    row.title = rec.title.clone();
    loops::check_repo(ws, &rec)?;
    loops::import(ws, &rec)?;
    let status: LoopStatus = loops::status(ws, &rec)?;
    if let (Some(b), Some(repo)) = (status.branch("code"), &rec.repo) {
        row.commits = b.ahead;
        if let Some(target) = &b.against {
            let out = Git::in_dir(&ws.repo_link(repo))
                .args(["diff", "--no-ext-diff", "--no-textconv", "--shortstat"])
                .arg(format!("{target}...{}", rec.branch))
                .output()?;
            let (f, i, d) = parse_shortstat(&String::from_utf8_lossy(&out.stdout));
            row.files = f;
            row.insertions = i;
            row.deletions = d;
            row.size = i + d;
        }
    }
    if run_checks {
        if let Some(argv) = check(&rec) {
            row.check = Some(task::run_check(id, &argv)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortstat_is_read_whole() {
        assert_eq!(
            parse_shortstat(" 3 files changed, 10 insertions(+), 2 deletions(-)\n"),
            (3, 10, 2)
        );
        assert_eq!(
            parse_shortstat(" 1 file changed, 1 insertion(+)"),
            (1, 1, 0)
        );
        assert_eq!(
            parse_shortstat(" 1 file changed, 4 deletions(-)"),
            (1, 0, 4)
        );
        assert_eq!(parse_shortstat(""), (0, 0, 0));
    }

    #[test]
    fn an_agent_state_reads_as_a_word() {
        let state = |s: &str, code| AgentState {
            state: s.into(),
            code,
            since: None,
        };
        assert_eq!(state("running", None).text(), "running");
        assert_eq!(state("not-run", None).text(), "not run");
        assert_eq!(state("needs-input", None).text(), "needs-input");
        assert_eq!(state("exited", Some(0)).text(), "done");
        assert_eq!(state("exited", Some(3)).text(), "exited 3");
        assert_eq!(state("exited", None).text(), "exited");
    }
}
