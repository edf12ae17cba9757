//! A comment's state at the loop's tip: open, outdated (its lines changed since) or
//! resolved; where its lines are now; and which commits say they answer it.
//!
//! Everything is read in the origins (the user's repository, the workspace's notes and
//! knowledge), after an import: git loop never runs git in a loop's own repository on
//! the host. The anchoring itself is [`super::anchor`].

use std::collections::HashMap;
use std::path::PathBuf;

use gix::ObjectId;
use serde::Serialize;

use super::anchor::{self, Found};
use super::comments::{Anchor, Role, Thread};
use crate::git::cmd::Git;
use crate::git::objects::{self, BoundedBlob};
use crate::workspace::Workspace;

/// The most of a file that is read to follow a comment's lines.
const MAX_BLOB: u64 = 8 << 20;
/// The most commits read for `Addresses-Comment:` trailers per anchor.
const MAX_TRAILER_COMMITS: usize = 500;
/// The trailer with which a commit says which comments it answers.
pub const TRAILER: &str = "Addresses-Comment";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Open,
    Outdated,
    Resolved,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Open => "open",
            State::Outdated => "outdated",
            State::Resolved => "resolved",
        }
    }
}

/// Where a comment's lines are at the tip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    pub path: String,
    pub start: usize,
    pub end: usize,
    /// The lines were cut and put elsewhere, or their file renamed.
    pub moved: bool,
}

impl Location {
    pub fn place(&self) -> String {
        super::comments::place(&self.path, self.start, self.end)
    }
}

/// A commit that names a comment in its `Addresses-Comment:` trailer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Addressing {
    pub commit: String,
    pub subject: String,
}

/// A comment as it stands.
#[derive(Debug, Clone)]
pub struct Judged {
    pub thread: Thread,
    pub state: State,
    /// Where its lines are now (where they were, when not `checked`); None for a
    /// comment on the whole loop, or one whose lines are gone.
    pub at: Option<Location>,
    /// Whether the loop's branch was there to judge against (it is not in a workspace
    /// that never had the loop).
    pub checked: bool,
    /// The tip it was judged at.
    pub tip: Option<String>,
    pub addressed: Vec<Addressing>,
}

impl Judged {
    pub fn id(&self) -> &str {
        &self.thread.comment.id
    }
}

/// The origin holding the branch a comment is on.
pub fn origin_of(ws: &Workspace, a: &Anchor) -> Option<PathBuf> {
    match a.role {
        Role::Code => a.repo.as_deref().map(|r| ws.repo_link(r)),
        Role::Notes => Some(ws.notes()),
        Role::Knowledge => Some(ws.knowledge()),
    }
}

/// The text of `path` at `commit`: None when there is no such commit, no such file (or
/// it is no regular file), or it is too large to follow.
pub fn blob_at(repo: &gix::Repository, commit: ObjectId, path: &str) -> Option<String> {
    let tree = repo.find_commit(commit).ok()?.tree().ok()?;
    let entry = tree.lookup_entry_by_path(path).ok()??;
    let mode = entry.mode();
    if !mode.is_blob() || mode.is_link() {
        return None;
    }
    match objects::read_blob_bounded(repo, entry.object_id(), MAX_BLOB).ok()? {
        BoundedBlob::Content(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        BoundedBlob::TooLarge(_) => None,
    }
}

/// An origin opened once, with the loop's tip in it.
struct Origin {
    dir: PathBuf,
    repo: gix::Repository,
    tip: Option<ObjectId>,
    /// Per anchor commit: trailers of the commits since it.
    trailers: HashMap<ObjectId, Vec<(String, String, Vec<String>)>>,
}

/// Judges every thread of loop `loop_id` at the loop's tips.
pub fn judge_all(ws: &Workspace, loop_id: &str, threads: Vec<Thread>) -> Vec<Judged> {
    let branch = crate::loops::LoopRecord::branch_name(loop_id);
    let mut origins: HashMap<PathBuf, Option<Origin>> = HashMap::new();
    threads
        .into_iter()
        .map(|thread| {
            let resolved = thread.resolved();
            let Some(anchor) = thread.comment.anchor.clone() else {
                return Judged {
                    state: if resolved {
                        State::Resolved
                    } else {
                        State::Open
                    },
                    at: None,
                    checked: true,
                    tip: None,
                    addressed: Vec::new(),
                    thread,
                };
            };
            let origin = origin_of(ws, &anchor).and_then(|dir| {
                origins
                    .entry(dir.clone())
                    .or_insert_with(|| {
                        let repo = objects::open_trusted(&dir).ok()?;
                        let tip = objects::resolve_branch(&repo, &branch).ok().flatten();
                        Some(Origin {
                            dir,
                            repo,
                            tip,
                            trailers: HashMap::new(),
                        })
                    })
                    .as_mut()
            });
            let Some(origin) = origin.filter(|o| o.tip.is_some()) else {
                return Judged {
                    state: if resolved {
                        State::Resolved
                    } else {
                        State::Open
                    },
                    at: anchor.path.clone().map(|path| Location {
                        path,
                        start: anchor.start,
                        end: anchor.end,
                        moved: false,
                    }),
                    checked: false,
                    tip: None,
                    addressed: Vec::new(),
                    thread,
                };
            };
            let tip = origin.tip.expect("filtered");
            let at = anchor
                .path
                .as_deref()
                .and_then(|path| locate(origin, &anchor, path, tip));
            let addressed = addressed(origin, &anchor, tip, &thread.comment.id);
            let state = match (resolved, &at) {
                (true, _) => State::Resolved,
                (false, Some(_)) => State::Open,
                // A comment on the loop as a whole has no lines to change.
                (false, None) if anchor.path.is_none() => State::Open,
                (false, None) => State::Outdated,
            };
            Judged {
                state,
                at,
                checked: true,
                tip: Some(tip.to_string()),
                addressed,
                thread,
            }
        })
        .collect()
}

/// Where the anchored lines are at `tip` (see [`anchor::follow`]); None when changed.
fn locate(origin: &Origin, a: &Anchor, was: &str, tip: ObjectId) -> Option<Location> {
    let anchor_commit = ObjectId::from_hex(a.commit.as_bytes()).ok();
    let (path, renamed) = match blob_at(&origin.repo, tip, was) {
        Some(_) => (was.to_string(), false),
        None => (renamed_to(origin, anchor_commit?, tip, was)?, true),
    };
    if a.whole_file() {
        return Some(Location {
            path,
            start: 0,
            end: 0,
            moved: renamed,
        });
    }
    let now = blob_at(&origin.repo, tip, &path)?;
    let then = anchor_commit.and_then(|c| blob_at(&origin.repo, c, was));
    let then_lines = then.as_deref().map(anchor::lines_of);
    let found = anchor::follow(
        &a.lines,
        a.start,
        then_lines.as_deref(),
        &anchor::lines_of(&now),
    );
    match found {
        Found::At { start, moved } => Some(Location {
            path,
            start,
            end: start + a.lines.len() - 1,
            moved: moved || renamed,
        }),
        Found::Changed => None,
    }
}

/// The path `path` was renamed to between `from` and `to`, as git's rename detection
/// finds it (in the origin, a repository git loop trusts).
fn renamed_to(origin: &Origin, from: ObjectId, to: ObjectId, path: &str) -> Option<String> {
    let out = Git::in_dir(&origin.dir)
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--name-status",
            "-M",
            "-z",
        ])
        .arg(from.to_string())
        .arg(to.to_string())
        .output()
        .ok()?;
    let fields: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let mut i = 0;
    while i < fields.len() {
        let status = fields[i];
        if status.starts_with(b"R") && i + 2 < fields.len() {
            if fields[i + 1] == path.as_bytes() {
                return String::from_utf8(fields[i + 2].to_vec()).ok();
            }
            i += 3;
        } else if status.starts_with(b"C") && i + 2 < fields.len() {
            i += 3;
        } else {
            i += 2;
        }
    }
    None
}

/// The commits since the comment's anchor that name it in their trailer.
fn addressed(origin: &mut Origin, a: &Anchor, tip: ObjectId, id: &str) -> Vec<Addressing> {
    let Ok(from) = ObjectId::from_hex(a.commit.as_bytes()) else {
        return Vec::new();
    };
    let dir = origin.dir.clone();
    let commits = origin
        .trailers
        .entry(from)
        .or_insert_with(|| trailers_since(&dir, from, tip));
    commits
        .iter()
        .filter(|(_, _, ids)| ids.iter().any(|i| i == id))
        .map(|(commit, subject, _)| Addressing {
            commit: commit.clone(),
            subject: subject.clone(),
        })
        .collect()
}

/// Each commit of `from..tip` (at most [`MAX_TRAILER_COMMITS`]): its short id, subject
/// and the comment ids its trailers name.
fn trailers_since(
    dir: &std::path::Path,
    from: ObjectId,
    tip: ObjectId,
) -> Vec<(String, String, Vec<String>)> {
    let format =
        format!("--format=%h%x00%s%x00%(trailers:key={TRAILER},valueonly,separator=%x2C)%x1e");
    let Ok(out) = Git::in_dir(dir)
        .args(["log", "--no-color", &format])
        .arg(format!("-n{MAX_TRAILER_COMMITS}"))
        .arg(format!("{from}..{tip}"))
        .output()
    else {
        return Vec::new();
    };
    parse_trailer_log(&String::from_utf8_lossy(&out.stdout))
}

/// Parses the log [`trailers_since`] asks for.
pub fn parse_trailer_log(text: &str) -> Vec<(String, String, Vec<String>)> {
    text.split('\x1e')
        .filter_map(|record| {
            let record = record.trim_start_matches('\n');
            let mut parts = record.splitn(3, '\0');
            let commit = parts.next()?.to_string();
            let subject = parts.next()?.to_string();
            let ids = parts
                .next()
                .unwrap_or("")
                .split([',', ' ', '\n'])
                .map(|s| s.trim().trim_start_matches('#').to_string())
                .filter(|s| super::comments::is_comment_id(s))
                .collect();
            (!commit.is_empty()).then_some((commit, subject, ids))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailers_name_the_comments_a_commit_answers() {
        let log = "abc1234\0fix the hash\0#3f9a1c,aaaaaa\x1e\ndef5678\0tidy\0\x1e\n0123456\0two\x003f9a1c bbbbbb\n\x1e";
        let parsed = parse_trailer_log(log);
        assert_eq!(
            parsed,
            vec![
                (
                    "abc1234".into(),
                    "fix the hash".into(),
                    vec!["3f9a1c".into(), "aaaaaa".into()]
                ),
                ("def5678".into(), "tidy".into(), vec![]),
                (
                    "0123456".into(),
                    "two".into(),
                    vec!["3f9a1c".into(), "bbbbbb".into()]
                ),
            ]
        );
        assert!(parse_trailer_log("").is_empty());
        // Something that is not an id is not taken for one.
        let parsed = parse_trailer_log("a\0s\0see above, #12\x1e");
        assert!(parsed[0].2.is_empty());
    }
}
