//! Review comments as they are stored: one folder per comment on the notes repository's
//! branch `git-loop/comments` (see [`super::store`]), `<loop id>/<comment id>/`, holding
//! `comment.toml` (what was said, where, by whom) and one file per later event (a reply,
//! a resolution, a reopening), each written once and never changed. Two workspaces that
//! add to the same branch therefore never touch the same file, and their branches merge
//! as the union of their files.
//!
//! Everything here is read from a branch that teammates push to (DESIGN 4.0): parsed as
//! data, every field checked and bounded, shown escaped, never a path on the host.

use serde::{Deserialize, Serialize};

/// The longest comment or reply, in bytes.
pub const MAX_TEXT: usize = 64 << 10;
/// The most lines one comment may be anchored to.
pub const MAX_LINES: usize = 200;
/// The most of a hunk a comment keeps for showing where it was made.
pub const MAX_HUNK: usize = 16 << 10;
/// The most one stored file may hold (a comment with its lines and hunk).
pub const MAX_FILE: u64 = 512 << 10;

/// Which of a loop's branches a comment is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Code,
    Notes,
    Knowledge,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Code => "code",
            Role::Notes => "notes",
            Role::Knowledge => "knowledge",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "code" => Some(Role::Code),
            "notes" => Some(Role::Notes),
            "knowledge" => Some(Role::Knowledge),
            _ => None,
        }
    }
}

/// Where a comment was made: a commit of the loop's branch, and a file and lines of it as
/// they were then (`start` 0: the whole file; no path: the loop as a whole).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub role: Role,
    /// The registered repository (`context/repos/<name>`) of a code comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The loop's tip the comment was made on.
    pub commit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// First and last line, 1-based; 0 and 0 for a comment on the whole file.
    pub start: usize,
    pub end: usize,
    /// The text of lines `start..=end` at `commit`.
    #[serde(default)]
    pub lines: Vec<String>,
    /// The diff hunk (or the lines around) as shown when the comment was made.
    #[serde(default)]
    pub hunk: String,
}

impl Anchor {
    /// `path:12`, `path:12-14`, `path`, or `the loop`.
    pub fn place(&self) -> String {
        match &self.path {
            Some(path) => place(path, self.start, self.end),
            None => "the loop".into(),
        }
    }

    /// On a file as a whole.
    pub fn whole_file(&self) -> bool {
        self.path.is_some() && self.start == 0
    }
}

/// `path:12`, `path:12-14`, or `path` for a whole file.
pub fn place(path: &str, start: usize, end: usize) -> String {
    match (start, end) {
        (0, _) => path.to_string(),
        (s, e) if s == e => format!("{path}:{s}"),
        (s, e) => format!("{path}:{s}-{e}"),
    }
}

/// `comment.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Comment {
    pub id: String,
    #[serde(rename = "loop")]
    pub loop_id: String,
    pub author: String,
    pub created_at: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
}

/// What happened to a comment after it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Reply,
    Resolve,
    Reopen,
}

/// One event file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub kind: EventKind,
    pub author: String,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Written by git loop from the agent's answer (a reply file it wrote in its run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
}

/// A comment and its events, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub comment: Comment,
    pub events: Vec<Event>,
}

impl Thread {
    /// Resolved by its last resolution or reopening.
    pub fn resolved(&self) -> bool {
        self.events
            .iter()
            .rev()
            .find(|e| e.kind != EventKind::Reply)
            .is_some_and(|e| e.kind == EventKind::Resolve)
    }

    pub fn replies(&self) -> impl Iterator<Item = &Event> {
        self.events.iter().filter(|e| e.kind == EventKind::Reply)
    }
}

/// Why a stored file is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("not TOML of a comment: {0}")]
    Parse(String),
    #[error("{0}")]
    Field(String),
}

/// A comment id: hexadecimal, 6 to 16 digits (git loop makes 6).
pub fn is_comment_id(s: &str) -> bool {
    (6..=16).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// A fresh comment id.
pub fn new_id() -> String {
    format!("{:06x}", rand::random::<u32>() & 0x00ff_ffff)
}

/// The name of an event file: when, in nanoseconds since 1970 (20 digits, so that the
/// names sort as the times do: a thread's events are in the order of their names), then
/// a random part, so that two never share one.
pub fn event_file_name(now: std::time::SystemTime) -> String {
    let nanos = now
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{nanos:020}-{:08x}.toml", rand::random::<u32>())
}

fn check_text(what: &str, text: &str, max: usize) -> Result<(), Invalid> {
    if text.len() > max {
        return Err(Invalid::Field(format!(
            "{what} is {} bytes, more than {max}",
            text.len()
        )));
    }
    Ok(())
}

fn check_time(text: &str) -> Result<(), Invalid> {
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .map(|_| ())
        .map_err(|_| Invalid::Field("created_at is not an RFC 3339 time".into()))
}

/// A path inside a repository as a comment names it: relative, no `.` or `..`
/// component, no NUL, at most 4096 bytes.
pub fn is_repo_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 4096
        && !path.starts_with('/')
        && !path.contains('\0')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Comment {
    /// Parses and checks `comment.toml` found at `<loop>/<id>/`.
    pub fn parse(text: &str, loop_id: &str, id: &str) -> Result<Comment, Invalid> {
        let c: Comment = toml::from_str(text).map_err(|e| Invalid::Parse(e.message().into()))?;
        if c.id != id || c.loop_id != loop_id {
            return Err(Invalid::Field(
                "its id or loop is not the folder it is in".into(),
            ));
        }
        c.check()?;
        Ok(c)
    }

    /// Every field within its bounds.
    pub fn check(&self) -> Result<(), Invalid> {
        if !is_comment_id(&self.id) || !crate::loops::is_id_like(&self.loop_id) {
            return Err(Invalid::Field("a malformed id".into()));
        }
        check_text("the author", &self.author, 200)?;
        check_time(&self.created_at)?;
        check_text("the text", &self.text, MAX_TEXT)?;
        if let Some(a) = &self.anchor {
            if a.path.as_deref().is_some_and(|p| !is_repo_path(p)) {
                return Err(Invalid::Field(
                    "its path is not a path in a repository".into(),
                ));
            }
            if a.commit.len() != 40 || !a.commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Invalid::Field("its commit is not a commit id".into()));
            }
            if a.repo
                .as_deref()
                .is_some_and(|r| !crate::loops::is_id_like(r) && !r.is_empty())
            {
                return Err(Invalid::Field("its repository name is malformed".into()));
            }
            let whole = a.start == 0 && a.end == 0 && a.lines.is_empty();
            let ranged = a.path.is_some()
                && (a.start >= 1
                    && a.end >= a.start
                    && a.end - a.start < MAX_LINES
                    && a.lines.len() == a.end - a.start + 1);
            if !whole && !ranged {
                return Err(Invalid::Field("its lines do not match its range".into()));
            }
            check_text(
                "the anchored lines",
                &a.lines.concat(),
                MAX_FILE as usize / 2,
            )?;
            check_text("the hunk", &a.hunk, MAX_HUNK)?;
        }
        Ok(())
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a comment serialises")
    }
}

impl Event {
    pub fn parse(text: &str) -> Result<Event, Invalid> {
        let e: Event = toml::from_str(text).map_err(|e| Invalid::Parse(e.message().into()))?;
        check_text("the author", &e.author, 200)?;
        check_time(&e.created_at)?;
        check_text("the text", &e.text, MAX_TEXT)?;
        Ok(e)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("an event serialises")
    }
}

/// A comment's text from the command line, a file or the editor: trailing white space
/// and, from the editor, `#` lines dropped; empty is none.
pub fn clean_text(raw: &str, strip_comments: bool) -> String {
    let lines: Vec<&str> = raw
        .lines()
        .filter(|l| !(strip_comments && l.starts_with('#')))
        .map(str::trim_end)
        .collect();
    lines.join("\n").trim_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment() -> Comment {
        Comment {
            id: "3f9a1c".into(),
            loop_id: "fix-abc123".into(),
            author: "alice".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            text: "check the hash".into(),
            anchor: Some(Anchor {
                role: Role::Code,
                repo: Some("app".into()),
                commit: "a".repeat(40),
                path: Some("src/lib.rs".into()),
                start: 2,
                end: 3,
                lines: vec!["x".into(), "y".into()],
                hunk: "@@ -1 +1,3 @@\n".into(),
            }),
        }
    }

    #[test]
    fn a_comment_round_trips_and_is_checked_against_its_folder() {
        let c = comment();
        let text = c.to_toml();
        assert_eq!(Comment::parse(&text, "fix-abc123", "3f9a1c").unwrap(), c);
        assert!(Comment::parse(&text, "other-abc123", "3f9a1c").is_err());
        assert!(Comment::parse(&text, "fix-abc123", "3f9a1d").is_err());
        assert!(Comment::parse("id = 1", "fix-abc123", "3f9a1c").is_err());
    }

    fn a_place(c: &Comment) -> String {
        c.anchor.as_ref().unwrap().place()
    }

    #[test]
    fn every_field_is_bounded() {
        let bad = |f: &dyn Fn(&mut Comment)| {
            let mut c = comment();
            f(&mut c);
            c.check().unwrap_err()
        };
        bad(&|c| c.id = "XYZ".into());
        bad(&|c| c.loop_id = "../x".into());
        bad(&|c| c.created_at = "yesterday".into());
        bad(&|c| c.text = "x".repeat(MAX_TEXT + 1));
        bad(&|c| c.author = "x".repeat(201));
        for path in ["", "/etc/passwd", "a/../b", "a//b", "./a", "a\0b"] {
            bad(&|c| c.anchor.as_mut().unwrap().path = Some(path.into()));
        }
        bad(&|c| c.anchor.as_mut().unwrap().commit = "zz".into());
        bad(&|c| c.anchor.as_mut().unwrap().end = 1);
        bad(&|c| c.anchor.as_mut().unwrap().lines.push("z".into()));
        bad(&|c| c.anchor.as_mut().unwrap().hunk = "h".repeat(MAX_HUNK + 1));
        bad(&|c| c.anchor.as_mut().unwrap().repo = Some("a/b".into()));
        let mut c = comment();
        let a = c.anchor.as_mut().unwrap();
        a.start = 0;
        a.end = 0;
        a.lines.clear();
        c.check().unwrap();
        assert_eq!(a_place(&c), "src/lib.rs");
        c.anchor.as_mut().unwrap().path = None;
        c.check().unwrap();
        assert_eq!(a_place(&c), "the loop");
        c.anchor.as_mut().unwrap().start = 1;
        c.check().unwrap_err();
        let mut c = comment();
        c.text = "x".repeat(MAX_TEXT);
        c.check().unwrap();
    }

    #[test]
    fn a_thread_is_resolved_by_its_last_resolution() {
        let ev = |kind| Event {
            kind,
            author: "bob".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            text: String::new(),
            agent: false,
        };
        let mut t = Thread {
            comment: comment(),
            events: vec![],
        };
        assert!(!t.resolved());
        t.events.push(ev(EventKind::Resolve));
        t.events.push(ev(EventKind::Reply));
        assert!(t.resolved());
        t.events.push(ev(EventKind::Reopen));
        assert!(!t.resolved());
        assert_eq!(t.replies().count(), 1);
        let text = ev(EventKind::Reply).to_toml();
        assert_eq!(Event::parse(&text).unwrap(), ev(EventKind::Reply));
        assert!(Event::parse("kind = \"delete\"").is_err());
    }

    #[test]
    fn ids_and_names() {
        assert!(is_comment_id(&new_id()));
        assert!(!is_comment_id("3f9a1"));
        assert!(!is_comment_id("3F9A1C"));
        assert!(!is_comment_id("3f9a1g"));
        let at = std::time::UNIX_EPOCH + std::time::Duration::new(1_767_225_600, 5);
        let name = event_file_name(at);
        assert!(name.starts_with("01767225600000000005-"), "{name}");
        assert!(name.ends_with(".toml") && name.len() == 34, "{name}");
        assert_ne!(name, event_file_name(at));
        assert!(event_file_name(at) < event_file_name(at + std::time::Duration::from_nanos(1)));
        assert_eq!(place("a.rs", 0, 0), "a.rs");
        assert_eq!(place("a.rs", 3, 3), "a.rs:3");
        assert_eq!(place("a.rs", 3, 5), "a.rs:3-5");
        assert_eq!(Role::parse("code"), Some(Role::Code));
        assert_eq!(Role::parse("x"), None);
    }

    #[test]
    fn text_from_an_editor_drops_its_comment_lines() {
        assert_eq!(
            clean_text("\nfix this  \n# a template line\nand that\n\n", true),
            "fix this\nand that"
        );
        assert_eq!(clean_text("# kept\n", false), "# kept");
        assert_eq!(clean_text("  \n\n", true), "");
    }
}
