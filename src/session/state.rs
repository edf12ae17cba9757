//! What a loop's agent is doing: `working`, `needs-input`, `done`, `exited` (with its
//! code), with the time it changed and how many terminals are attached.
//!
//! The agent's own hooks (Claude Code's UserPromptSubmit, Notification and Stop; Codex's
//! `notify`, which git loop writes into their settings) write one word to
//! `/loopat/loop/<id>/.claude/.git-loop-agent-state` inside the sandbox. That file is in a
//! tree the sandbox writes, so the host reads at most [`MAX_INSIDE`] bytes of it, never
//! through a link, and takes only an exact word of the vocabulary: anything else is no
//! state. The session's supervisor turns what it reads (and the exits it sees itself) into
//! `locks/live/<id>.state`, a host-only file of its own that `list` and `watch` read.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::workspace::Workspace;

/// The state file inside, relative to the loop's `.claude/`.
pub const INSIDE_FILE: &str = ".git-loop-agent-state";
/// The most the host reads of the state file a sandbox writes.
pub const MAX_INSIDE: u64 = 32;

/// One agent state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Working,
    NeedsInput,
    Done,
    Exited,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Working => "working",
            Kind::NeedsInput => "needs-input",
            Kind::Done => "done",
            Kind::Exited => "exited",
        }
    }

    /// Whether a person is to be told (a notification, a bell).
    pub fn notifies(self) -> bool {
        !matches!(self, Kind::Working)
    }
}

/// The agent state of a loop, as `list --json` shows it (`agent: {state, since, attached}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentState {
    pub state: Option<Kind>,
    /// The exit code, with `exited`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u8>,
    /// When the state last changed (RFC 3339).
    pub since: String,
    /// Terminals attached to the session's agent.
    pub attached: u32,
}

impl AgentState {
    /// `needs-input`, `exited 3`: as a person reads it.
    pub fn label(&self) -> String {
        match (self.state, self.code) {
            (Some(Kind::Exited), Some(code)) => format!("exited {code}"),
            (Some(k), _) => k.as_str().to_string(),
            (None, _) => "-".to_string(),
        }
    }
}

/// The state a sandbox wrote, read strictly: `working`, `needs-input`, `done` or
/// `exited N` (N 0-255), with at most one newline after it; anything else is `None`.
pub fn parse_inside(bytes: &[u8]) -> Option<(Kind, Option<u8>)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    match text {
        "working" => Some((Kind::Working, None)),
        "needs-input" => Some((Kind::NeedsInput, None)),
        "done" => Some((Kind::Done, None)),
        _ => {
            let code = text.strip_prefix("exited ")?;
            if code.is_empty() || code.len() > 3 || !code.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((Kind::Exited, Some(code.parse::<u8>().ok()?)))
        }
    }
}

/// The state file a loop's sandbox writes, on the host.
pub fn inside_path(ws: &Workspace, id: &str) -> PathBuf {
    ws.loop_claude_dir(id).join(INSIDE_FILE)
}

/// The file inside the sandbox the hooks write.
pub fn inside_path_in_sandbox(id: &str) -> String {
    format!("/loopat/loop/{id}/.claude/{INSIDE_FILE}")
}

/// What stands at the state file a sandbox writes, as the host takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inside {
    /// A word of the vocabulary, with the file's modification time (which tells a new
    /// write of the same word).
    State((Kind, Option<u8>), std::time::SystemTime),
    /// Something that is no state, and why; told from the next such thing by what stands
    /// there (its inode and modification time), so each is refused once.
    Refused {
        why: &'static str,
        stamp: (u64, i64, i64),
    },
}

/// Looks at the state file a sandbox wrote: bounded, never through a link, a regular file
/// only. `None` when nothing is there.
pub fn look_inside(ws: &Workspace, id: &str) -> Option<Inside> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let path = inside_path(ws, id);
    let stamp = |m: &std::fs::Metadata| (m.ino(), m.mtime(), m.mtime_nsec());
    // Only to say why a file is refused: what is read is what `open_regular` opened.
    let seen = std::fs::symlink_metadata(&path).ok()?;
    let refused = |why, m: &std::fs::Metadata| {
        Some(Inside::Refused {
            why,
            stamp: stamp(m),
        })
    };
    if seen.file_type().is_symlink() {
        return refused("it is a symlink, never followed", &seen);
    }
    if !seen.is_file() {
        return refused("it is not a regular file", &seen);
    }
    // Replaced since it was looked at: the next look says what stands there then.
    let file = crate::fsutil::open_regular(&path).ok()??;
    let meta = file.metadata().ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_INSIDE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_INSIDE {
        return refused("it holds more than a state's word", &meta);
    }
    match parse_inside(&bytes) {
        Some(state) => Some(Inside::State(state, meta.modified().ok()?)),
        None => refused("it is not a word of the vocabulary", &meta),
    }
}

/// The state a sandbox wrote, when what stands there is one ([`look_inside`]); with its
/// file's modification time.
pub fn read_inside(
    ws: &Workspace,
    id: &str,
) -> Option<((Kind, Option<u8>), std::time::SystemTime)> {
    match look_inside(ws, id)? {
        Inside::State(state, mtime) => Some((state, mtime)),
        Inside::Refused { .. } => None,
    }
}

/// The host-only state of loop `id`'s session.
pub fn host_path(ws: &Workspace, id: &str) -> PathBuf {
    super::live_dir(ws).join(format!("{id}.state"))
}

/// Loop `id`'s agent state: the session's while one is up, else the last one a sandbox
/// wrote (with the file's time), else none.
pub fn read(ws: &Workspace, id: &str) -> Option<AgentState> {
    if super::is_up(ws, id) {
        let bytes = crate::fsutil::read_regular(&host_path(ws, id), 4096).ok()??;
        return serde_json::from_slice(&bytes).ok();
    }
    let ((state, code), mtime) = read_inside(ws, id)?;
    let since = time::OffsetDateTime::from(mtime)
        .format(&time::format_description::well_known::Rfc3339)
        .ok()?;
    Some(AgentState {
        state: Some(state),
        code,
        since,
        attached: 0,
    })
}

/// Writes the session's state (the supervisor only).
pub fn write(ws: &Workspace, id: &str, state: &AgentState) {
    if let Ok(text) = serde_json::to_vec(state) {
        let _ = crate::fsutil::write_atomic(&host_path(ws, id), &text);
    }
}

/// The hooks' shell command that writes `word` into the state file.
pub fn hook_command(id: &str, word: &str) -> String {
    format!("printf '%s\\n' {word} > {}", inside_path_in_sandbox(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_words_of_the_vocabulary_are_states() {
        assert_eq!(parse_inside(b"working\n"), Some((Kind::Working, None)));
        assert_eq!(parse_inside(b"needs-input"), Some((Kind::NeedsInput, None)));
        assert_eq!(parse_inside(b"done\n"), Some((Kind::Done, None)));
        assert_eq!(parse_inside(b"exited 0\n"), Some((Kind::Exited, Some(0))));
        assert_eq!(parse_inside(b"exited 255"), Some((Kind::Exited, Some(255))));
        for bad in [
            &b"working\n\n"[..],
            b"Working",
            b" working",
            b"exited 256",
            b"exited -1",
            b"exited ",
            b"exited 1 2",
            b"done\x1b[2J",
            b"\xffdone",
            b"",
        ] {
            assert_eq!(parse_inside(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_state_reads_as_a_person_would_say_it() {
        let s = AgentState {
            state: Some(Kind::Exited),
            code: Some(3),
            since: String::new(),
            attached: 0,
        };
        assert_eq!(s.label(), "exited 3");
        let none = AgentState { state: None, ..s };
        assert_eq!(none.label(), "-");
    }
}
