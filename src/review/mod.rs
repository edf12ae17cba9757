//! The review loop (DESIGN 10): comments on a loop's proposal, anchored to the commit and
//! the lines they were made on, kept in git so that they travel with the team's notes and
//! outlive the loop; the agent given them back; what it answered read back.
//!
//! - [`comments`]: what a comment and its events are, as stored, checked and bounded;
//! - [`store`]: the notes repository's branch that holds them;
//! - [`anchor`]: where a comment's lines are at a later tip (pure);
//! - [`judge`]: a comment's state (open, outdated, resolved) at the loop's tip;
//! - [`hunks`]: the diff lines and hunks comments are shown beside (pure);
//! - [`show`]: how they are written to a terminal and to JSON;
//! - [`task`]: the task text that gives open comments (or a rebase's conflicts) to the
//!   agent, and the agent's answers read back.

pub mod address;
pub mod anchor;
pub mod comments;
pub mod hunks;
pub mod judge;
pub mod show;
pub mod store;
pub mod task;

use std::path::PathBuf;

use comments::{Anchor, Comment, Event, EventKind, Role, Thread};
use judge::Judged;
use store::{Committer, Loaded, Store, StoreError};

use crate::error::Result;
use crate::git::cmd::Git;
use crate::git::objects;
use crate::loops::{self, Kind, LoopRecord};
use crate::workspace::Workspace;

/// Why a comment cannot be made, found or answered.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{path} is not a file of {branch} (at {commit})")]
    NoSuchFile {
        path: String,
        branch: String,
        commit: String,
    },
    #[error("{path} is not a text file")]
    NotText { path: String },
    #[error("{path} has {lines} lines; there is no line {line}")]
    NoSuchLine {
        path: String,
        lines: usize,
        line: usize,
    },
    #[error("a comment is on at most {} lines; {start}-{end} is {}", comments::MAX_LINES, end + 1 - start)]
    TooManyLines { start: usize, end: usize },
    #[error("the comment is {len} bytes; at most {max} are kept", len = .0, max = comments::MAX_TEXT)]
    TooLong(usize),
    #[error("no comment text")]
    Empty,
    #[error("{branch} does not exist in {}", origin.display())]
    NoBranch { branch: String, origin: PathBuf },
    #[error("loop {loop_id} has no comment '{query}'")]
    NoComment {
        query: String,
        loop_id: String,
        known: Vec<String>,
    },
    #[error("'{query}' names more than one comment of loop {loop_id}")]
    Ambiguous {
        query: String,
        loop_id: String,
        ids: Vec<String>,
    },
    #[error("comment #{id} is already {state}")]
    Already { id: String, state: &'static str },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The branch a comment on loop `rec` is on: its code, else what it writes (knowledge
/// for a distill loop, notes for a scratch loop).
pub fn role_of(rec: &LoopRecord) -> Role {
    match rec.kind {
        Kind::Code => Role::Code,
        Kind::Distill => Role::Knowledge,
        Kind::Scratch => Role::Notes,
    }
}

fn role_name(role: Role) -> &'static str {
    role.as_str()
}

/// A comment to make on loop `rec`'s current proposal: on lines `start..=end` of `path`
/// (0 and 0: the whole file), or on the loop as a whole (no path).
#[derive(Debug, Clone)]
pub struct NewComment {
    pub path: Option<String>,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

fn check_text(text: &str) -> Result<(), ReviewError> {
    if text.trim().is_empty() {
        return Err(ReviewError::Empty);
    }
    if text.len() > comments::MAX_TEXT {
        return Err(ReviewError::TooLong(text.len()));
    }
    Ok(())
}

fn now() -> String {
    loops::now_rfc3339()
}

/// Records a comment on loop `rec`'s proposal as it is now (imported first): anchored to
/// the loop's tip, the file and the lines, with their text and the hunk they are in.
pub fn comment(ws: &Workspace, rec: &LoopRecord, req: &NewComment) -> Result<Comment> {
    check_text(&req.text)?;
    let anchor = Some(anchor(ws, rec, req.path.as_deref(), req.start, req.end)?);
    let c = Comment {
        id: comments::new_id(),
        loop_id: rec.id.clone(),
        author: ws.user().to_string(),
        created_at: now(),
        text: req.text.clone(),
        anchor,
    };
    c.check()
        .map_err(|e| crate::Error::failure(format!("cannot record the comment: {e}")))?;
    let _lock = crate::fsutil::Lock::acquire(&ws.comments_lock())?;
    let store = Store::open(ws).map_err(ReviewError::Store)?;
    store
        .add(
            &[(format!("{}/{}/comment.toml", c.loop_id, c.id), c.to_toml())],
            &format!("comment #{} on loop {}", c.id, c.loop_id),
            &Committer::of(ws),
        )
        .map_err(ReviewError::Store)?;
    Ok(c)
}

/// The anchor of a new comment: the loop's tip (after an import), and for a comment on a
/// file, the file there, the lines' text and the hunk of the proposal's diff that shows
/// them.
fn anchor(
    ws: &Workspace,
    rec: &LoopRecord,
    path: Option<&str>,
    start: usize,
    end: usize,
) -> Result<Anchor> {
    let role = role_of(rec);
    loops::check_repo(ws, rec)?;
    loops::import(ws, rec)?;
    let status = loops::status(ws, rec)?;
    let pair = loops::repo_pairs(ws, rec)
        .into_iter()
        .find(|p| p.role == role_name(role))
        .expect("every loop has the branch its role names");
    let repo = objects::open_trusted(&pair.origin).map_err(|e| {
        crate::Error::failure(format!("cannot read {}", pair.origin.display())).with_source(e)
    })?;
    let tip = objects::resolve_branch(&repo, &rec.branch)
        .ok()
        .flatten()
        .ok_or_else(|| ReviewError::NoBranch {
            branch: rec.branch.clone(),
            origin: pair.origin.clone(),
        })?;
    let repo_name = if role == Role::Code {
        rec.repo.clone()
    } else {
        None
    };
    let Some(path) = path else {
        return Ok(Anchor {
            role,
            repo: repo_name,
            commit: tip.to_string(),
            path: None,
            start: 0,
            end: 0,
            lines: Vec::new(),
            hunk: String::new(),
        });
    };
    if !comments::is_repo_path(path) {
        return Err(ReviewError::NoSuchFile {
            path: path.to_string(),
            branch: rec.branch.clone(),
            commit: short(&tip.to_string()),
        }
        .into());
    }
    let text = judge::blob_at(&repo, tip, path).ok_or_else(|| ReviewError::NoSuchFile {
        path: path.to_string(),
        branch: rec.branch.clone(),
        commit: short(&tip.to_string()),
    })?;
    if text.contains('\0') {
        return Err(ReviewError::NotText {
            path: path.to_string(),
        }
        .into());
    }
    let lines = anchor::lines_of(&text);
    let (start, end) = (start, end.max(start));
    if start > 0 {
        if end + 1 - start > comments::MAX_LINES {
            return Err(ReviewError::TooManyLines { start, end }.into());
        }
        let bad = if start > lines.len() { start } else { end };
        if end > lines.len() {
            return Err(ReviewError::NoSuchLine {
                path: path.to_string(),
                lines: lines.len(),
                line: bad,
            }
            .into());
        }
    }
    let against = status.branch(pair.role).and_then(|b| b.against.clone());
    let hunk = match (start, &against) {
        (0, _) => String::new(),
        (_, Some(target)) => {
            let diff = Git::in_dir(&pair.origin)
                .args([
                    "diff",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--no-color",
                    "--src-prefix=a/",
                    "--dst-prefix=b/",
                ])
                .arg(format!("{target}...{tip}"))
                .args(["--", path])
                .output()?
                .stdout;
            hunks::hunk_at(&diff, path, end)
                .unwrap_or_else(|| hunks::snippet(&lines, start, end, 3))
        }
        (_, None) => hunks::snippet(&lines, start, end, 3),
    };
    let hunk = clip(&hunk, comments::MAX_HUNK);
    Ok(Anchor {
        role,
        repo: repo_name,
        commit: tip.to_string(),
        path: Some(path.to_string()),
        start,
        end: if start == 0 { 0 } else { end },
        lines: if start == 0 {
            Vec::new()
        } else {
            lines[start - 1..end]
                .iter()
                .map(|s| s.to_string())
                .collect()
        },
        hunk,
    })
}

/// At most `max` bytes of `text`, cut at a line's end.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let end = text[..cut].rfind('\n').map_or(cut, |i| i + 1);
    text[..end].to_string()
}

fn short(id: &str) -> String {
    id[..id.len().min(12)].to_string()
}

/// The comments of loop `loop_id`.
pub fn load(ws: &Workspace, loop_id: &str) -> Result<Loaded> {
    let store = Store::open(ws).map_err(ReviewError::Store)?;
    Ok(store.threads(loop_id).map_err(ReviewError::Store)?)
}

/// The comments of loop `loop_id`, judged at the loop's branches as they are in the
/// origins (the caller imports a live loop first); what was skipped, named.
pub fn judged(ws: &Workspace, loop_id: &str) -> Result<(Vec<Judged>, Vec<String>)> {
    let loaded = load(ws, loop_id)?;
    Ok((
        judge::judge_all(ws, loop_id, loaded.threads),
        loaded.skipped,
    ))
}

/// The comment `query` names: its id, `#id`, or a unique prefix of it.
pub fn find<'a>(
    threads: &'a [Thread],
    loop_id: &str,
    query: &str,
) -> Result<&'a Thread, ReviewError> {
    let q = query.trim_start_matches('#');
    if let Some(t) = threads.iter().find(|t| t.comment.id == q) {
        return Ok(t);
    }
    let matches: Vec<&Thread> = if q.is_empty() {
        Vec::new()
    } else {
        threads
            .iter()
            .filter(|t| t.comment.id.starts_with(q))
            .collect()
    };
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(ReviewError::NoComment {
            query: query.to_string(),
            loop_id: loop_id.to_string(),
            known: threads
                .iter()
                .map(|t| t.comment.id.clone())
                .take(10)
                .collect(),
        }),
        many => Err(ReviewError::Ambiguous {
            query: query.to_string(),
            loop_id: loop_id.to_string(),
            ids: many.iter().map(|t| t.comment.id.clone()).collect(),
        }),
    }
}

/// Adds an event (a reply, a resolution, a reopening) to comment `comment_id` of loop
/// `loop_id`. A resolution of a resolved comment (or a reopening of an open one) is
/// refused: it would say nothing.
pub fn add_event(ws: &Workspace, thread: &Thread, kind: EventKind, text: &str) -> Result<Event> {
    add(ws, thread, kind, text, None)
}

/// [`add_event`] on behalf of the loop's agent (`agent` names it): a reply it wrote.
pub fn add_event_as(
    ws: &Workspace,
    thread: &Thread,
    kind: EventKind,
    text: &str,
    agent: &str,
) -> Result<Event> {
    add(ws, thread, kind, text, Some(agent))
}

fn add(
    ws: &Workspace,
    thread: &Thread,
    kind: EventKind,
    text: &str,
    agent: Option<&str>,
) -> Result<Event> {
    if kind == EventKind::Reply {
        check_text(text)?;
    } else if text.len() > comments::MAX_TEXT {
        return Err(ReviewError::TooLong(text.len()).into());
    }
    match (kind, thread.resolved()) {
        (EventKind::Resolve, true) => {
            return Err(ReviewError::Already {
                id: thread.comment.id.clone(),
                state: "resolved",
            }
            .into())
        }
        (EventKind::Reopen, false) => {
            return Err(ReviewError::Already {
                id: thread.comment.id.clone(),
                state: "open",
            }
            .into())
        }
        _ => {}
    }
    let e = Event {
        kind,
        author: agent.unwrap_or(ws.user()).to_string(),
        created_at: now(),
        text: text.to_string(),
        agent: agent.is_some(),
    };
    let c = &thread.comment;
    let what = match kind {
        EventKind::Reply => "reply to",
        EventKind::Resolve => "resolve",
        EventKind::Reopen => "reopen",
    };
    let _lock = crate::fsutil::Lock::acquire(&ws.comments_lock())?;
    let store = Store::open(ws).map_err(ReviewError::Store)?;
    store
        .add(
            &[(
                format!(
                    "{}/{}/{}",
                    c.loop_id,
                    c.id,
                    comments::event_file_name(std::time::SystemTime::now())
                ),
                e.to_toml(),
            )],
            &format!("{what} comment #{} on loop {}", c.id, c.loop_id),
            &Committer::of(ws),
        )
        .map_err(ReviewError::Store)?;
    Ok(e)
}

/// The loop a comment command means: a loop of the workspace (by id or unique prefix),
/// else a loop that has comments on the branch although it is not here (removed, or
/// another workspace's), by its id or a unique prefix of it.
pub fn resolve_loop(ws: &Workspace, query: &str) -> Result<(String, Option<LoopRecord>)> {
    match loops::resolve(ws, query) {
        Ok(id) => {
            let rec = loops::load(ws, &id)?;
            Ok((id, Some(rec)))
        }
        Err(e) => {
            let store = Store::open(ws).map_err(ReviewError::Store)?;
            let commented = store.loops().map_err(ReviewError::Store)?;
            if commented.iter().any(|l| l == query) {
                return Ok((query.to_string(), None));
            }
            let matches: Vec<&String> = commented
                .iter()
                .filter(|l| !query.is_empty() && l.starts_with(query))
                .collect();
            match matches.as_slice() {
                [one] => Ok(((*one).clone(), None)),
                _ => Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(id: &str) -> Thread {
        Thread {
            comment: Comment {
                id: id.into(),
                loop_id: "fix-abc123".into(),
                author: "a".into(),
                created_at: "2026-01-01T00:00:00Z".into(),
                text: "t".into(),
                anchor: None,
            },
            events: Vec::new(),
        }
    }

    #[test]
    fn a_comment_is_named_by_its_id_or_a_unique_prefix() {
        let threads = vec![thread("3f9a1c"), thread("3f0000"), thread("abcdef")];
        assert_eq!(find(&threads, "l", "#3f9a1c").unwrap().comment.id, "3f9a1c");
        assert_eq!(find(&threads, "l", "ab").unwrap().comment.id, "abcdef");
        assert!(matches!(
            find(&threads, "l", "3f"),
            Err(ReviewError::Ambiguous { ids, .. }) if ids.len() == 2
        ));
        assert!(matches!(
            find(&threads, "l", "ff"),
            Err(ReviewError::NoComment { known, .. }) if known.len() == 3
        ));
        assert!(matches!(
            find(&threads, "l", "#"),
            Err(ReviewError::NoComment { .. })
        ));
    }

    #[test]
    fn a_kept_hunk_is_cut_at_a_line() {
        assert_eq!(clip("abc\ndef\n", 100), "abc\ndef\n");
        assert_eq!(clip("abc\ndef\n", 6), "abc\n");
        assert_eq!(clip("abcdef", 3), "abc");
        assert_eq!(clip("é", 1), "");
    }
}
