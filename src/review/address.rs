//! `agent --address-review`: the loop's open comments given to its agent, and its answers
//! taken back (see [`super::task`] for how they are given and answered).

use super::judge::{Judged, State};
use super::task::{self, Given};
use super::{comments::EventKind, hunks};
use crate::error::Result;
use crate::git::cmd::Git;
use crate::loops::{self, LoopRecord};
use crate::workspace::Workspace;

/// The task written for the agent and the comments it names.
pub struct Prepared {
    pub task: String,
    /// The ids of the comments given.
    pub given: Vec<String>,
}

/// Why there is nothing to give the agent.
#[derive(Debug, thiserror::Error)]
#[error("loop {id} has no open review comments ({outdated} outdated, {resolved} resolved)")]
pub struct NothingOpen {
    pub id: String,
    pub outdated: usize,
    pub resolved: usize,
}

/// Imports the loop, judges its comments at its tip and writes the task of the open ones
/// (each with the hunk its lines are in now, or the lines around them) into the loop's
/// `.claude/`.
pub fn prepare(ws: &Workspace, rec: &LoopRecord) -> Result<Prepared> {
    loops::check_repo(ws, rec)?;
    loops::import(ws, rec)?;
    let status = loops::status(ws, rec)?;
    let (judged, _) = super::judged(ws, &rec.id)?;
    let open: Vec<&Judged> = judged.iter().filter(|j| j.state == State::Open).collect();
    if open.is_empty() {
        let count = |s| judged.iter().filter(|j| j.state == s).count();
        return Err(NothingOpen {
            id: rec.id.clone(),
            outdated: count(State::Outdated),
            resolved: count(State::Resolved),
        }
        .into());
    }
    let given: Vec<Given> = open
        .iter()
        .map(|j| Given {
            judged: j,
            context: context(ws, &status, j),
        })
        .collect();
    let text = task::address_review(rec, &given);
    task::write_task(ws, &rec.id, &text)?;
    Ok(Prepared {
        task: text,
        given: open.iter().map(|j| j.id().to_string()).collect(),
    })
}

/// The hunk of the proposal's diff that shows a comment's lines now, else the lines with
/// a few around them.
fn context(ws: &Workspace, status: &loops::LoopStatus, j: &Judged) -> String {
    let (Some(at), Some(a)) = (&j.at, &j.thread.comment.anchor) else {
        return String::new();
    };
    if at.start == 0 {
        return String::new();
    }
    let Some(origin) = super::judge::origin_of(ws, a) else {
        return String::new();
    };
    let against = status
        .branch(a.role.as_str())
        .and_then(|b| b.against.clone());
    if let (Some(target), Some(tip)) = (against, &j.tip) {
        let diff = Git::in_dir(&origin)
            .args([
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
                "--src-prefix=a/",
                "--dst-prefix=b/",
            ])
            .arg(format!("{target}...{tip}"))
            .args(["--", &at.path])
            .output();
        if let Some(h) = diff
            .ok()
            .and_then(|d| hunks::hunk_at(&d.stdout, &at.path, at.end))
        {
            return h;
        }
    }
    let text = crate::git::objects::open_trusted(&origin)
        .ok()
        .zip(
            j.tip
                .as_deref()
                .and_then(|t| gix::ObjectId::from_hex(t.as_bytes()).ok()),
        )
        .and_then(|(repo, tip)| super::judge::blob_at(&repo, tip, &at.path));
    match text {
        Some(text) => super::clip(
            &hunks::snippet(&super::anchor::lines_of(&text), at.start, at.end, 3),
            super::comments::MAX_HUNK,
        ),
        None => String::new(),
    }
}

/// What the agent did with the comments it was given.
#[derive(Debug, Default)]
pub struct Answered {
    /// Comment id and the commits that name it.
    pub committed: Vec<(String, Vec<String>)>,
    pub replied: Vec<String>,
    pub unanswered: Vec<String>,
    /// What of its replies was left out, and why.
    pub notes: Vec<String>,
}

/// After the agent's run: its branch imported, its replies recorded as replies of the
/// agent (then removed from its folder), and for each comment given what answered it.
pub fn finish(ws: &Workspace, rec: &LoopRecord, given: &[String], agent: &str) -> Result<Answered> {
    let mut answered = Answered::default();
    if let Err(e) = loops::import(ws, rec) {
        answered.notes.push(format!(
            "the agent's branch could not be imported: {}",
            e.one_line()
        ));
    }
    let (replies, notes) = task::take_replies(ws, &rec.id, given);
    answered.notes.extend(notes);
    let loaded = super::load(ws, &rec.id)?;
    for (id, text) in &replies {
        let thread = super::find(&loaded.threads, &rec.id, id)?;
        super::add_event_as(ws, thread, EventKind::Reply, text, agent)?;
        answered.replied.push(id.clone());
    }
    let (judged, _) = super::judged(ws, &rec.id)?;
    for id in given {
        let commits: Vec<String> = judged
            .iter()
            .find(|j| j.id() == id)
            .map(|j| j.addressed.iter().map(|a| a.commit.clone()).collect())
            .unwrap_or_default();
        if !commits.is_empty() {
            answered.committed.push((id.clone(), commits));
        } else if !answered.replied.contains(id) {
            answered.unanswered.push(id.clone());
        }
    }
    Ok(answered)
}
