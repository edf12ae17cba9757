//! How review comments are shown: a thread beside the diff line it is on, the comments no
//! line of the diff shows (with the hunk they were made on), what changed since the
//! comments, and the JSON form. Every string from the comments' branch or a loop is
//! written with its control characters made visible (`crate::terminal`).

use std::io::{self, Write};

use serde::Serialize;

use super::comments::{EventKind, Role};
use super::hunks;
use super::judge::{Addressing, Judged, Location, State};
use crate::terminal::{self, visible};
use crate::ui::{BOLD, DIM, GREEN, RESET, YELLOW};

/// The bar before each line of a thread.
const BAR: &str = "    \u{2502} ";

fn state_color(s: State) -> &'static str {
    match s {
        State::Open => YELLOW,
        State::Outdated => DIM,
        State::Resolved => GREEN,
    }
}

/// One comment with its replies and the commits that answer it.
pub fn write_thread(out: &mut dyn Write, j: &Judged) -> io::Result<()> {
    let c = &j.thread.comment;
    let file_anchor = c.anchor.as_ref().filter(|a| a.path.is_some());
    let place = match (&j.at, file_anchor) {
        (Some(at), _) if at.moved => format!(
            " \u{b7} {} (was {})",
            visible(&at.place()),
            visible(&file_anchor.map(|a| a.place()).unwrap_or_default())
        ),
        (Some(at), _) => format!(" \u{b7} {}", visible(&at.place())),
        (None, Some(a)) => format!(" \u{b7} was {}", visible(&a.place())),
        (None, None) => String::new(),
    };
    let unchecked = if j.checked {
        ""
    } else {
        " (not checked: the loop's branch is not in this workspace)"
    };
    writeln!(
        out,
        "{BAR}{BOLD}#{}{RESET} {}{}{RESET}{unchecked} \u{b7} {} \u{b7} {}{place}",
        visible(&c.id),
        state_color(j.state),
        j.state.as_str(),
        visible(&c.author),
        visible(&c.created_at),
    )?;
    for line in c.text.lines() {
        writeln!(out, "{BAR}  {}", visible(line))?;
    }
    for e in &j.thread.events {
        let who = if e.agent && e.author == "agent" {
            "the agent".to_string()
        } else if e.agent {
            format!("{} (the agent)", visible(&e.author))
        } else {
            visible(&e.author).into_owned()
        };
        match e.kind {
            EventKind::Reply => {
                let mut lines = e.text.lines();
                writeln!(
                    out,
                    "{BAR}  \u{21b3} {who}: {}",
                    visible(lines.next().unwrap_or_default())
                )?;
                for line in lines {
                    writeln!(out, "{BAR}    {}", visible(line))?;
                }
            }
            EventKind::Resolve => writeln!(out, "{BAR}  \u{21b3} resolved by {who}")?,
            EventKind::Reopen => writeln!(out, "{BAR}  \u{21b3} reopened by {who}")?,
        }
    }
    for a in &j.addressed {
        writeln!(
            out,
            "{BAR}  \u{21b3} addressed by {} {}",
            visible(&a.commit),
            visible(&a.subject)
        )?;
    }
    Ok(())
}

/// Writes `diff` (git's `--stat --patch` output for one of the loop's branches) with
/// each comment after the line its lines end on; returns the ids of the comments written.
pub fn write_diff_with_comments(
    out: &mut dyn Write,
    diff: &[u8],
    judged: &[&Judged],
) -> io::Result<Vec<String>> {
    let numbers = hunks::new_lines(diff);
    let mut placed = Vec::new();
    terminal::write_diff_with(out, diff, &mut |out, index| {
        let Some(Some((path, line))) = numbers.get(index) else {
            return Ok(());
        };
        for j in judged {
            if j.at
                .as_ref()
                .is_some_and(|at| at.path == *path && at.start > 0 && at.end == *line)
            {
                write_thread(out, j)?;
                placed.push(j.id().to_string());
            }
        }
        Ok(())
    })?;
    Ok(placed)
}

/// The comments no line of the diff showed: each with the hunk it was made on (an
/// outdated one), or where its lines are now.
pub fn write_unplaced(out: &mut dyn Write, judged: &[&Judged]) -> io::Result<()> {
    for j in judged {
        writeln!(out)?;
        if let Some(a) = j
            .thread
            .comment
            .anchor
            .as_ref()
            .filter(|a| a.path.is_some())
        {
            if j.state == State::Outdated || !j.checked {
                writeln!(
                    out,
                    "{DIM}{} as it was at {} when the comment was made:{RESET}",
                    visible(&a.place()),
                    short(&a.commit)
                )?;
                terminal::write_diff(out, a.hunk.as_bytes())?;
            } else if let Some(at) = &j.at {
                writeln!(
                    out,
                    "{DIM}{} (no change of the branch shows it):{RESET}",
                    visible(&at.place())
                )?;
                if !a.whole_file() {
                    let lines: Vec<String> =
                        a.lines.iter().map(|l| visible(l).into_owned()).collect();
                    for (i, l) in lines.iter().enumerate() {
                        writeln!(out, "{:>6} {l}", at.start + i)?;
                    }
                }
            }
        }
        write_thread(out, j)?;
    }
    Ok(())
}

/// What changed on the branch since `from` (the oldest comment still open): the commits
/// and a stat, read in the origin.
pub fn write_since(
    out: &mut dyn Write,
    origin: &std::path::Path,
    from: &str,
    tip: &str,
) -> crate::error::Result<()> {
    use crate::git::cmd::Git;
    let range = format!("{from}..{tip}");
    let log = Git::in_dir(origin)
        .args([
            "log",
            "--no-color",
            "--format=%h%x00%s",
            "-n",
            "200",
            &range,
        ])
        .output()?
        .stdout;
    let count = log.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
    writeln!(
        out,
        "{BOLD}== since the comments (made at {}): {count} commit{}{RESET}",
        short(from),
        if count == 1 { "" } else { "s" }
    )?;
    for line in log.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        terminal::write_log_line(out, line)?;
    }
    let stat = Git::in_dir(origin)
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--stat",
        ])
        .arg(from)
        .arg(tip)
        .output()?
        .stdout;
    terminal::write_diff(out, &stat)?;
    Ok(())
}

fn short(id: &str) -> String {
    visible(&id[..id.len().min(12)]).into_owned()
}

/// `comment --list --json` and `review --json`'s comments: one object per comment.
#[derive(Debug, Serialize)]
pub struct CommentJson {
    pub id: String,
    #[serde(rename = "loop")]
    pub loop_id: String,
    pub author: String,
    pub created_at: String,
    pub text: String,
    pub state: State,
    /// Whether the loop's branch was there to judge the comment against.
    pub checked: bool,
    pub role: Option<Role>,
    /// Where it was made: the commit, path and lines.
    pub anchor: Option<AnchorJson>,
    /// Where its lines are now.
    pub at: Option<Location>,
    pub events: Vec<EventJson>,
    pub addressed_by: Vec<Addressing>,
}

#[derive(Debug, Serialize)]
pub struct AnchorJson {
    pub commit: String,
    /// None: a comment on the loop as a whole.
    pub path: Option<String>,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Serialize)]
pub struct EventJson {
    pub kind: EventKind,
    pub author: String,
    pub created_at: String,
    pub text: String,
    pub agent: bool,
}

impl From<&Judged> for CommentJson {
    fn from(j: &Judged) -> CommentJson {
        let c = &j.thread.comment;
        CommentJson {
            id: c.id.clone(),
            loop_id: c.loop_id.clone(),
            author: c.author.clone(),
            created_at: c.created_at.clone(),
            text: c.text.clone(),
            state: j.state,
            checked: j.checked,
            role: c.anchor.as_ref().map(|a| a.role),
            anchor: c.anchor.as_ref().map(|a| AnchorJson {
                commit: a.commit.clone(),
                path: a.path.clone(),
                start: a.start,
                end: a.end,
            }),
            at: j.at.clone(),
            events: j
                .thread
                .events
                .iter()
                .map(|e| EventJson {
                    kind: e.kind,
                    author: e.author.clone(),
                    created_at: e.created_at.clone(),
                    text: e.text.clone(),
                    agent: e.agent,
                })
                .collect(),
            addressed_by: j.addressed.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::comments::{Anchor, Comment, Event, Thread};
    use super::*;

    fn judged(state: State, at: Option<Location>) -> Judged {
        Judged {
            thread: Thread {
                comment: Comment {
                    id: "3f9a1c".into(),
                    loop_id: "fix-abc123".into(),
                    author: "alice".into(),
                    created_at: "2026-01-01T00:00:00Z".into(),
                    text: "check\x1b[2J the hash\nsecond line".into(),
                    anchor: Some(Anchor {
                        role: Role::Code,
                        repo: Some("app".into()),
                        commit: "a".repeat(40),
                        path: Some("main.c".into()),
                        start: 2,
                        end: 2,
                        lines: vec!["int B;".into()],
                        hunk: "@@ -1,2 +1,2 @@\n int a;\n+int B;\n".into(),
                    }),
                },
                events: vec![Event {
                    kind: EventKind::Reply,
                    author: "alice".into(),
                    created_at: "2026-01-02T00:00:00Z".into(),
                    text: "done \u{202e}here".into(),
                    agent: true,
                }],
            },
            state,
            at,
            checked: true,
            tip: None,
            addressed: vec![Addressing {
                commit: "abc1234".into(),
                subject: "fix".into(),
            }],
        }
    }

    fn at(line: usize) -> Option<Location> {
        Some(Location {
            path: "main.c".into(),
            start: line,
            end: line,
            moved: false,
        })
    }

    #[test]
    fn a_comment_is_written_after_the_line_it_is_on_and_escaped() {
        let diff = b"diff --git a/main.c b/main.c\n--- a/main.c\n+++ b/main.c\n@@ -1,2 +1,3 @@\n int a;\n+int B;\n int c;\n";
        let j = judged(State::Open, at(2));
        let mut out = Vec::new();
        let placed = write_diff_with_comments(&mut out, diff, &[&j]).unwrap();
        assert_eq!(placed, ["3f9a1c"]);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let after = lines.iter().position(|l| l.contains("+int B;")).unwrap();
        assert!(lines[after + 1].contains("#3f9a1c"), "{text}");
        assert!(lines[after + 1].contains("open"), "{text}");
        assert!(text.contains("check\\x1b[2J the hash"), "{text}");
        assert!(text.contains("done \\u{202e}here"), "{text}");
        assert!(text.contains("alice (the agent)"), "{text}");
        assert!(text.contains("addressed by abc1234 fix"), "{text}");
        assert!(!text.contains("\x1b[2J"), "{text}");
        // A comment on a line no hunk shows is not placed.
        let j = judged(State::Open, at(9));
        let mut out = Vec::new();
        assert!(write_diff_with_comments(&mut out, diff, &[&j])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn an_outdated_comment_shows_the_hunk_it_was_made_on() {
        let j = judged(State::Outdated, None);
        let mut out = Vec::new();
        write_unplaced(&mut out, &[&j]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("main.c:2 as it was at aaaaaaaaaaaa"),
            "{text}"
        );
        assert!(text.contains("+int B;"), "{text}");
        assert!(text.contains("outdated"), "{text}");
        assert!(text.contains("was main.c:2"), "{text}");
        let j = judged(State::Open, at(5));
        let mut out = Vec::new();
        write_unplaced(&mut out, &[&j]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("     5 int B;"), "{text}");
    }

    #[test]
    fn the_json_form_keeps_the_exact_text() {
        let j = judged(State::Resolved, at(2));
        let v = serde_json::to_value(CommentJson::from(&j)).unwrap();
        assert_eq!(v["state"], "resolved");
        assert_eq!(v["text"], "check\x1b[2J the hash\nsecond line");
        assert_eq!(v["anchor"]["path"], "main.c");
        assert_eq!(v["at"]["start"], 2);
        assert_eq!(v["events"][0]["agent"], true);
        assert_eq!(v["addressed_by"][0]["commit"], "abc1234");
    }
}
