//! The loop record (`loops/<id>/loop.toml`) and how a loop is found, imported and judged.
//!
//! The record holds only what git cannot tell: who made the loop, from which base, with
//! which vault and profile. Whether a loop has unpublished notes, unmerged code or is
//! merged is read from the branches every time (after an import), so the record can
//! never disagree with the repositories.
//!
//! Here: the record, ids and how a loop is found. `import.rs` brings a loop's branches into
//! their origins, `status.rs` judges them, `locks.rs` judges git's lock files in a loop's
//! repository.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fsutil;
use crate::git::objects::{self, ImportError};
use crate::values::{NetMode, RunMode, Timestamp};
use crate::workspace::Workspace;

mod import;
pub mod landed;
mod locks;
mod status;

pub use import::*;
pub use locks::*;
pub use status::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Code,
    Scratch,
    Distill,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Code => "code",
            Kind::Scratch => "scratch",
            Kind::Distill => "distill",
        })
    }
}

/// What a loop is, as judged from git (plus `Removed` for a loop folder that is gone
/// while its branch remains).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Active,
    Published,
    Merged,
    Removed,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Active => "active",
            State::Published => "published",
            State::Merged => "merged",
            State::Removed => "removed",
        })
    }
}

/// An extra mount granted to one loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub path: PathBuf,
    /// `ro` or `rw`.
    pub mode: String,
    /// For the next run only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// What `path` was when it was granted: every run binds only that (re-resolved
    /// without following links), and refuses when a sandbox or anyone else put something
    /// else there. Absent in grants recorded by earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<GrantSource>,
}

/// A granted path's identity: its kind, its inode, and when it was made. The inode number
/// alone does not tell a folder deleted and made again at once from the original (ext4
/// and tmpfs hand the freed number out again); its creation time (statx's `btime`) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantSource {
    pub dir: bool,
    pub dev: u64,
    pub ino: u64,
    /// Its creation time, in nanoseconds since the epoch, where the file system keeps one.
    /// Absent in grants recorded by earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub born_ns: Option<i64>,
}

impl GrantSource {
    pub fn of(meta: &fs::Metadata) -> GrantSource {
        use std::os::unix::fs::MetadataExt;
        GrantSource {
            dir: meta.is_dir(),
            dev: meta.dev(),
            ino: meta.ino(),
            born_ns: meta
                .created()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .and_then(|d| i64::try_from(d.as_nanos()).ok()),
        }
    }

    /// The identity of what `fd` is (an `O_PATH` descriptor will do).
    pub fn of_fd(fd: std::os::fd::BorrowedFd) -> std::io::Result<GrantSource> {
        use std::os::fd::AsRawFd;
        // SAFETY: statx writes the struct it is given; the empty path with AT_EMPTY_PATH
        // names the descriptor itself.
        let stx = unsafe {
            let mut stx: libc::statx = std::mem::zeroed();
            let rc = libc::statx(
                fd.as_raw_fd(),
                c"".as_ptr(),
                libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW,
                libc::STATX_TYPE | libc::STATX_INO | libc::STATX_BTIME,
                &mut stx,
            );
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            stx
        };
        let born_ns = (stx.stx_mask & libc::STATX_BTIME != 0)
            .then(|| stx.stx_btime.tv_sec * 1_000_000_000 + i64::from(stx.stx_btime.tv_nsec));
        Ok(GrantSource {
            dir: u32::from(stx.stx_mode) & libc::S_IFMT == libc::S_IFDIR,
            dev: libc::makedev(stx.stx_dev_major, stx.stx_dev_minor),
            ino: stx.stx_ino,
            born_ns,
        })
    }

    /// Whether `now` is what was granted: the same kind and inode, and, where the grant
    /// recorded one, the same creation time (a file system that no longer says when it
    /// was made is not the one granted).
    pub fn same(&self, now: &GrantSource) -> bool {
        let born = match (self.born_ns, now.born_ns) {
            (Some(a), Some(b)) => a == b,
            (Some(_), None) => false,
            (None, _) => true,
        };
        self.dir == now.dir && self.dev == now.dev && self.ino == now.ino && born
    }
}

/// `loop.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopRecord {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    /// The registered repository's name under `context/repos/` (none for scratch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// The commit the code branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The branch the loop's work is meant to go back into (`merge`'s default target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_branch: Option<String>,
    pub branch: String,
    /// The notes trunk commit the notes branch started from.
    pub notes_base: String,
    /// The knowledge trunk commit a distill loop's knowledge branch started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knowledge_base: Option<String>,
    pub vault: String,
    pub sandbox: String,
    pub mode: RunMode,
    pub network: NetMode,
    pub created_by: String,
    pub created_at: Timestamp,
    /// Kept for readers of the record; the state shown is always derived from git.
    pub state: State,
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// The loop's own config layer.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub config: toml::Table,
    /// The fan-out this loop is one of (`new --fan-out N`): loops made together on one
    /// base for one task, compared and one picked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The ignored files `new` copied from the user's working tree by `.worktreeinclude`
    /// (`crate::include`), relative to the working tree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub included: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path} is not a valid loop record: {message}")]
    Invalid { path: PathBuf, message: String },
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl RecordError {
    /// The record's path.
    pub fn path(&self) -> &Path {
        match self {
            RecordError::Invalid { path, .. } | RecordError::Read { path, .. } => path,
        }
    }
}

impl LoopRecord {
    #[cfg(test)]
    pub(crate) fn read_str_for_tests() -> LoopRecord {
        toml::from_str(
            "id = \"fix-abc123\"\ntitle = \"fix\"\nkind = \"code\"\nrepo = \"app\"\nbranch = \"loop/fix-abc123\"\n\
             notes_base = \"1111111111111111111111111111111111111111\"\nvault = \"default\"\nsandbox = \"default\"\n\
             mode = \"work\"\nnetwork = \"proxy\"\ncreated_by = \"alice\"\ncreated_at = \"2026-01-01T00:00:00Z\"\nstate = \"active\"\n",
        )
        .unwrap()
    }

    pub fn branch_name(id: &str) -> String {
        format!("loop/{id}")
    }

    pub fn read(path: &Path) -> Result<LoopRecord, RecordError> {
        let bytes = fs::read(path).map_err(|source| RecordError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| RecordError::Invalid {
            path: path.to_path_buf(),
            message: format!(
                "it is not UTF-8 text (an undecodable byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        })?;
        toml::from_str(&text).map_err(|e| RecordError::Invalid {
            path: path.to_path_buf(),
            message: invalid_field(&text, &e),
        })
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        let text = toml::to_string(self)
            .map_err(|e| Error::failure("cannot serialize the loop record").with_source(e))?;
        fsutil::write_atomic(path, text.as_bytes())
    }
}

/// What is wrong in a record's text, naming the field where toml's error points at one
/// (`mode: unknown variant ...`), with its control characters made visible.
fn invalid_field(text: &str, e: &toml::de::Error) -> String {
    let message = crate::terminal::visible(e.message()).into_owned();
    let key = e.span().and_then(|span| {
        let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        let (key, _) = text[line_start..span.start].split_once('=')?;
        let key = key.trim();
        (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            .then_some(key)
    });
    match key {
        Some(key) => format!("{key}: {message}"),
        None => message,
    }
}

/// Reads a loop's record; each way it can be broken is a [`LoopError`] (the command
/// layer says what to do about it).
pub fn load(ws: &Workspace, id: &str) -> Result<LoopRecord> {
    let path = ws.loop_record(id);
    LoopRecord::read(&path).map_err(|source| {
        let id = id.to_string();
        match source {
            RecordError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                LoopError::NoRecord { id, path }
            }
            RecordError::Invalid { .. } => LoopError::Broken { id, source },
            RecordError::Read { .. } => LoopError::Unreadable { id, source },
        }
        .into()
    })
}

/// Why the loop a user named cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    #[error("'{query}' names more than one loop")]
    Ambiguous { query: String, ids: Vec<String> },
    /// No loop by that name; `similar` are ids containing it, `any` whether there are loops.
    #[error("no loop '{query}'")]
    NotFound {
        query: String,
        similar: Vec<String>,
        any: bool,
    },
    /// Its branch is there but not its folder (`folder`): removed, or deleted by hand.
    #[error("no loop '{query}'")]
    Removed { query: String, folder: PathBuf },
    #[error("loop {id} has a broken record")]
    Broken {
        id: String,
        #[source]
        source: RecordError,
    },
    #[error("loop {id} has no record ({} is missing)", path.display())]
    NoRecord { id: String, path: PathBuf },
    #[error("cannot read the record of loop {id}")]
    Unreadable {
        id: String,
        #[source]
        source: RecordError,
    },
}

/// Lowercase ASCII, `-` between words, at most 32 characters; `loop` when nothing is left.
pub fn slugify(title: &str) -> String {
    let mut slug = String::new();
    let mut dash = false;
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            if dash && !slug.is_empty() {
                slug.push('-');
            }
            dash = false;
            slug.push(c.to_ascii_lowercase());
            if slug.len() >= 32 {
                break;
            }
        } else {
            dash = true;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "loop".to_string()
    } else {
        slug.to_string()
    }
}

/// `<slug>-<6 hex>`.
pub fn new_id(slug: &str) -> String {
    let n: u32 = rand::random::<u32>() & 0x00ff_ffff;
    format!("{slug}-{n:06x}")
}

/// Does `s` look like an id this tool made? Used to refuse path tricks in arguments.
pub fn is_id_like(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('.')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Finds the loop a user means by `query`: an exact id, or a unique prefix of an id or of
/// a slug. Unknown or ambiguous: an error listing candidates.
pub fn resolve(ws: &Workspace, query: &str) -> Result<String> {
    let ids = ws.loop_ids()?;
    if ids.iter().any(|id| id == query) {
        return Ok(query.to_string());
    }
    if !query.is_empty() && is_id_like(query) {
        let matches: Vec<&String> = ids.iter().filter(|id| id.starts_with(query)).collect();
        match matches.as_slice() {
            [one] => return Ok((*one).clone()),
            [] => {}
            many => {
                return Err(LoopError::Ambiguous {
                    query: query.to_string(),
                    ids: many.iter().take(10).map(|id| id.to_string()).collect(),
                }
                .into());
            }
        }
    }
    // A branch without a folder: the loop was removed, or its folder deleted by hand.
    if is_id_like(query) && removed_branch_exists(ws, query) {
        return Err(LoopError::Removed {
            query: query.to_string(),
            folder: ws.loop_dir(query),
        }
        .into());
    }
    let similar = ids
        .iter()
        .filter(|id| query.len() >= 2 && id.contains(query))
        .take(5)
        .cloned()
        .collect();
    Err(LoopError::NotFound {
        query: query.to_string(),
        similar,
        any: !ids.is_empty(),
    }
    .into())
}

fn removed_branch_exists(ws: &Workspace, id: &str) -> bool {
    let branch = LoopRecord::branch_name(id);
    objects::open_trusted(&ws.notes())
        .ok()
        .and_then(|repo| objects::resolve_branch(&repo, &branch).ok().flatten())
        .is_some()
}

/// The JSON form of a loop (DESIGN section 8).
pub fn to_json(ws: &Workspace, rec: &LoopRecord, status: Option<&LoopStatus>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "id": rec.id,
        "title": rec.title,
        "kind": rec.kind,
        "state": status.map(|s| s.state).unwrap_or(rec.state),
        "branch": rec.branch,
        "repo": rec.repo,
        "base": rec.base,
        "base_branch": rec.base_branch,
        "vault": rec.vault,
        "sandbox": rec.sandbox,
        "mode": rec.mode,
        "network": rec.network,
        "created_by": rec.created_by,
        "created_at": rec.created_at,
        "path": ws.loop_dir(&rec.id),
        "workdir": ws.loop_workdir(&rec.id),
        "grants": rec.grants,
        "group": rec.group,
        "included": rec.included,
    });
    if let Some(status) = status {
        v["branches"] = serde_json::to_value(&status.branches).unwrap_or_default();
    }
    v
}

/// Now, as RFC 3339 in UTC.
pub fn now_rfc3339() -> String {
    Timestamp::now().to_string()
}

/// `3d`, `5h`, `12m` ago.
pub fn age(rec: &LoopRecord) -> String {
    let secs = (time::OffsetDateTime::now_utc() - rec.created_at.0)
        .whole_seconds()
        .max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// Loops whose folder is gone while their notes branch remains (`rm` without
/// `--delete-branches`, or a folder deleted by hand).
pub fn removed_ids(ws: &Workspace) -> Result<Vec<String>> {
    let repo = objects::open_trusted(&ws.notes())
        .map_err(|e| Error::failure("cannot read the notes repository").with_source(e))?;
    let existing = ws.loop_ids()?;
    let mut ids: Vec<String> = objects::branches(&repo)
        .map_err(|e| Error::failure("cannot read the notes repository").with_source(e))?
        .into_iter()
        .filter_map(|(name, _)| name.strip_prefix("loop/").map(str::to_string))
        .filter(|id| !existing.contains(id))
        .collect();
    ids.sort();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branch(role: &'static str, ahead: usize, has_commits: bool) -> BranchStatus {
        BranchStatus {
            role,
            tip: Some("1".repeat(40)),
            against: Some("main".into()),
            ahead,
            behind: 0,
            has_commits,
            landed: None,
        }
    }

    #[test]
    fn the_state_is_judged_from_the_branches() {
        // Nothing done yet: active.
        assert_eq!(
            judge(&[branch("code", 0, false), branch("notes", 0, false)]),
            State::Active
        );
        // Work the target lacks anywhere: active, whatever else is done.
        assert_eq!(
            judge(&[branch("code", 2, true), branch("notes", 0, true)]),
            State::Active
        );
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 1, true)]),
            State::Active
        );
        // Code committed and all of it in the base branch: merged.
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 0, false)]),
            State::Merged
        );
        assert_eq!(
            judge(&[branch("code", 0, true), branch("notes", 0, true)]),
            State::Merged
        );
        // Only notes (or knowledge) committed and all published: published.
        assert_eq!(
            judge(&[branch("code", 0, false), branch("notes", 0, true)]),
            State::Published
        );
        assert_eq!(
            judge(&[branch("notes", 0, false), branch("knowledge", 0, true)]),
            State::Published
        );
        assert_eq!(judge(&[branch("notes", 0, true)]), State::Published);
        // Commits ahead whose changes the base has by content (a forge's squash merge):
        // merged.
        let mut squashed = branch("code", 2, true);
        squashed.landed = Some(landed::Landed::Tree);
        assert!(!squashed.pending());
        assert_eq!(
            judge(&[squashed.clone(), branch("notes", 0, false)]),
            State::Merged
        );
        // ... unless the notes still wait.
        assert_eq!(judge(&[squashed, branch("notes", 1, true)]), State::Active);
        // A pending knowledge branch keeps a distill loop active.
        assert_eq!(
            judge(&[branch("notes", 0, true), branch("knowledge", 3, true)]),
            State::Active
        );
    }

    #[test]
    fn a_clones_config_is_all_git_loops() {
        let c = clone_config("../../../context/repos/app", "loop/x-000001");
        assert!(c.contains("\turl = ../../../context/repos/app\n"));
        assert!(c.contains("[branch \"loop/x-000001\"]\n\tremote = origin\n"));
        // What would let the user's own git run the agent's commands is off.
        assert!(c.contains("fsmonitor = false"));
        assert!(c.contains("[diff]\n\tignoreSubmodules = dirty\n\tsubmodule = short\n"));
        assert!(c.contains("[status]\n\tsubmoduleSummary = false"));
        assert!(c.contains("[submodule]\n\trecurse = false"));
        assert!(c.contains("[fetch]\n\trecurseSubmodules = false"));
        assert!(c.contains("[push]\n\trecurseSubmodules = no"));
        assert!(!c.contains("hooksPath"));
        assert!(!c.contains("include"));
        // It parses as git config: one value per key it sets.
        for line in c.lines().filter(|l| l.starts_with('\t')) {
            assert!(line.contains(" = "), "{line}");
        }
    }

    #[test]
    fn git_lock_files_are_found_below_the_git_folder_but_objects() {
        let tmp = tempfile::tempdir().unwrap();
        let git = tmp.path().join(".git");
        for f in [
            "index.lock",
            "HEAD.lock",
            "refs/heads/loop/x.lock",
            "refs/heads/main",
            "objects/pack/tmp.lock",
            "config",
        ] {
            let p = git.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "").unwrap();
        }
        // A link named like a lock is not followed nor taken for one.
        std::os::unix::fs::symlink("/etc/passwd", git.join("packed-refs.lock")).unwrap();
        let found: Vec<String> = git_lock_files(&git)
            .iter()
            .map(|p| p.strip_prefix(&git).unwrap().display().to_string())
            .collect();
        assert_eq!(
            found,
            vec!["HEAD.lock", "index.lock", "refs/heads/loop/x.lock"]
        );
        // A git folder that is itself a link is not walked: what it points at is not the
        // loop's.
        let link = tmp.path().join("linked.git");
        std::os::unix::fs::symlink(&git, &link).unwrap();
        assert!(git_lock_files(&link).is_empty());
    }

    #[test]
    fn a_grant_source_is_its_kind_and_inode() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        fs::write(&a, "x").unwrap();
        let first = GrantSource::of(&fs::symlink_metadata(&a).unwrap());
        assert!(!first.dir);
        // The same path holding another file is another source (the first one kept
        // under another name, so its inode number cannot be given to the second).
        fs::rename(&a, tmp.path().join("b")).unwrap();
        fs::write(&a, "x").unwrap();
        let again = GrantSource::of(&fs::symlink_metadata(&a).unwrap());
        assert_ne!((first.dev, first.ino), (again.dev, again.ino));
        assert!(GrantSource::of(&fs::symlink_metadata(tmp.path()).unwrap()).dir);
    }

    #[test]
    fn a_folder_made_again_with_the_same_inode_number_is_not_the_grant() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        fs::create_dir(&dir).unwrap();
        let granted = GrantSource::of(&fs::symlink_metadata(&dir).unwrap());
        let by_fd =
            GrantSource::of_fd(std::os::fd::AsFd::as_fd(&fs::File::open(&dir).unwrap())).unwrap();
        assert_eq!(
            granted, by_fd,
            "the path's and the descriptor's identity agree"
        );
        assert!(granted.same(&by_fd));
        assert!(
            granted.born_ns.is_some(),
            "the test's file system keeps creation times"
        );
        // Deleted and made again: whether or not the number comes back, it is not the grant.
        fs::remove_dir(&dir).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        fs::create_dir(&dir).unwrap();
        let again = GrantSource::of(&fs::symlink_metadata(&dir).unwrap());
        assert!(!granted.same(&again));
        // The same number reused: the creation time alone tells them apart.
        let reused = GrantSource {
            born_ns: again.born_ns,
            ..granted
        };
        assert!(!granted.same(&reused));
        // A grant recorded before creation times were: its kind and inode decide.
        let old = GrantSource {
            born_ns: None,
            ..granted
        };
        assert!(old.same(&by_fd));
        assert!(!granted.same(&old), "a source that lost its creation time");
    }

    #[test]
    fn records_round_trip_and_refuse_what_is_not_one() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("loop.toml");
        let rec = LoopRecord {
            id: "fix-abc123".into(),
            title: "fix it".into(),
            kind: Kind::Code,
            repo: Some("app".into()),
            base: Some("0".repeat(40)),
            base_branch: Some("main".into()),
            branch: "loop/fix-abc123".into(),
            notes_base: "1".repeat(40),
            knowledge_base: None,
            vault: "default".into(),
            sandbox: "default".into(),
            mode: RunMode::Work,
            network: NetMode::Proxy,
            created_by: "alice".into(),
            created_at: Timestamp::parse("2026-01-01T00:00:00Z").unwrap(),
            state: State::Active,
            grants: vec![Grant {
                path: "/srv/data".into(),
                mode: "ro".into(),
                once: false,
                source: None,
            }],
            config: toml::Table::new(),
            group: Some("fix-def456".into()),
            included: Vec::new(),
        };
        rec.write(&path).unwrap();
        assert_eq!(LoopRecord::read(&path).unwrap(), rec);
        // The file keeps the names and the time as text.
        let text = fs::read_to_string(&path).unwrap();
        for line in [
            "mode = \"work\"",
            "network = \"proxy\"",
            "created_at = \"2026-01-01T00:00:00Z\"",
        ] {
            assert!(text.lines().any(|l| l == line), "{line}: {text}");
        }
        fs::write(&path, "id = 1\n").unwrap();
        assert!(matches!(
            LoopRecord::read(&path),
            Err(RecordError::Invalid { .. })
        ));
        fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(LoopRecord::read(&path).is_err());
    }

    /// A field that does not read as its type is named, with the file, when the record
    /// is read; nothing reads it as a string later.
    #[test]
    fn a_record_field_that_does_not_parse_is_named_with_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("loop.toml");
        let good = toml::to_string(&LoopRecord::read_str_for_tests()).unwrap();
        for (field, bad, says) in [
            (
                "mode",
                "\"wrok\"",
                "mode: unknown variant `wrok`, expected one of `work`, `review`, `plan`",
            ),
            (
                "network",
                "\"open\"",
                "network: unknown variant `open`, expected one of `host`, `none`, `proxy`",
            ),
            (
                "created_at",
                "\"yesterday\"",
                "created_at: `yesterday` is not an RFC 3339 time",
            ),
            (
                "mode",
                "\"\\u001b[2Jwork\"",
                "mode: unknown variant `\\x1b[2Jwork`",
            ),
        ] {
            let text: String = good
                .lines()
                .map(|l| match l.starts_with(&format!("{field} = ")) {
                    true => format!("{field} = {bad}\n"),
                    false => format!("{l}\n"),
                })
                .collect();
            fs::write(&path, text).unwrap();
            let err = LoopRecord::read(&path).unwrap_err();
            let RecordError::Invalid {
                path: named,
                message,
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!(named, &path);
            assert!(message.starts_with(says), "{message}");
            assert!(
                err.to_string().starts_with(&format!(
                    "{} is not a valid loop record: {field}: ",
                    path.display()
                )),
                "{err}"
            );
        }
    }

    #[test]
    fn repo_pairs_name_each_repository_and_its_origin() {
        let ws = Workspace::at("/ws".into(), "alice".into());
        let mut rec = LoopRecord::read_str_for_tests();
        let pairs = repo_pairs(&ws, &rec);
        let roles: Vec<&str> = pairs.iter().map(|p| p.role).collect();
        assert_eq!(roles, ["code", "notes"]);
        assert_eq!(pairs[0].clone, Path::new("/ws/loops/fix-abc123/workdir"));
        assert_eq!(pairs[0].origin, Path::new("/ws/context/repos/app"));
        assert_eq!(
            pairs[1].alternate,
            Path::new("/ws/loops/fix-abc123/context/.origins/notes/.git/objects")
        );
        rec.kind = Kind::Distill;
        rec.repo = None;
        let roles: Vec<&str> = repo_pairs(&ws, &rec).iter().map(|p| p.role).collect();
        assert_eq!(roles, ["notes", "knowledge"]);
        rec.kind = Kind::Scratch;
        let roles: Vec<&str> = repo_pairs(&ws, &rec).iter().map(|p| p.role).collect();
        assert_eq!(roles, ["notes"]);
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("Fix the Login bug!"), "fix-the-login-bug");
        assert_eq!(slugify(""), "loop");
        assert_eq!(slugify("日本語"), "loop");
        assert_eq!(slugify("../../etc/passwd"), "etc-passwd");
        assert_eq!(slugify("a/b\"c'd"), "a-b-c-d");
        assert_eq!(slugify(&"x".repeat(100)).len(), 32);
        assert_eq!(slugify("  trailing  "), "trailing");
    }

    #[test]
    fn the_built_in_limits_are_the_documented_ones() {
        use crate::config::{Config, Layer};
        assert_eq!(limits_from(&Config::defaults()), objects::Limits::default());
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        fs::write(
            &file,
            "[import]\nmax_object_size = \"3G\"\nmax_pack_size = 1024\nread_timeout = 5\n",
        )
        .unwrap();
        let config = Config::load(&[(Layer::Operator, file.clone())], None).unwrap();
        let limits = limits_from(&config);
        assert_eq!(limits.max_object_size, 3 << 30);
        assert_eq!(limits.max_pack_size, 1024);
        assert_eq!(limits.read_timeout, std::time::Duration::from_secs(5));
        for bad in ["max_object_size = \"lots\"", "read_timeout = 0"] {
            fs::write(&file, format!("[import]\n{bad}\n")).unwrap();
            let err = Config::load(&[(Layer::Operator, file.clone())], None).unwrap_err();
            assert!(err.to_string().contains("import."), "{err}");
        }
        // A layer a sandbox can write never sets them.
        fs::write(&file, "[import]\nmax_object_size = \"100G\"\n").unwrap();
        let config = Config::load(&[(Layer::Personal, file.clone())], None).unwrap();
        assert_eq!(limits_from(&config), objects::Limits::default());
        // A run's whole stack (what `know_limits` is given): the operator's bound, never
        // the personal layer's above it.
        let operator = dir.path().join("operator.toml");
        fs::write(&operator, "[import]\nmax_object_size = \"3G\"\n").unwrap();
        let config = Config::load(
            &[(Layer::Operator, operator), (Layer::Personal, file.clone())],
            None,
        )
        .unwrap();
        assert_eq!(limits_from(&config).max_object_size, 3 << 30);
    }

    #[test]
    fn ids() {
        let id = new_id("fix");
        assert!(id.starts_with("fix-") && id.len() == 10, "{id}");
        assert!(is_id_like(&id));
        assert!(!is_id_like("../x"));
        assert!(!is_id_like(".new-x"));
    }
}
