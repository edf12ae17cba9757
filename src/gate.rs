//! The gate on the way out (DESIGN.md section 5): what a loop's branch carries into its
//! target, read in the origin (a repository git-loop trusts) with gix, and judged before
//! anything lands. `review` shows the judgement before the diff; `publish`, `merge` and
//! `pr` refuse on it, changing nothing.
//!
//! *Carried* means every commit reachable from the branch and not from the target, and in
//! each commit every entry that differs from all of its parents: for an ordinary commit,
//! what it changed; for a merge, only what the merge itself brought (the rest came from a
//! parent that is carried too, or that is already on the target). So a secret added in one
//! commit and deleted in a later one is still seen: it would land in the target's history.
//!
//! What is found, and what follows from it ([`Gate`]):
//! - refused, always: a gitlink (a nested repository's commit) or a path git refuses to
//!   check out (a nested `.git`), anything the secret guard flags (with its allowlist of
//!   false positives), and a blob too large to scan;
//! - refused unless the person names it with `--accept-policy PATH`: changes under
//!   `.loopat/` (team config, sandbox profiles, doctrine, skills, MCP servers), which widen
//!   or change what every later loop runs with, changes to what runs on a person's machine
//!   when the project is opened or built (the list of `sandbox/fspolicy.rs`: `.vscode/`,
//!   `.envrc`, `.github/workflows/`, ...), and symlinks added or re-pointed;
//! - shown only: mode changes (executable bits) and binary files.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use gix::bstr::{BString, ByteSlice, ByteVec};
use gix::ObjectId;
use serde_json::{json, Value};

use crate::error::Error;
use crate::git::objects::{self, BoundedBlob, GitReadError};
use crate::guard::{self, Allowlist};
use crate::terminal::shown;

const MODE_TREE: u32 = 0o040000;
const MODE_FILE: u32 = 0o100644;
const MODE_EXEC: u32 = 0o100755;
const MODE_LINK: u32 = 0o120000;
const MODE_GITLINK: u32 = 0o160000;

/// Blobs larger than this are not read: GitHub's own limit for one file, far beyond any
/// note or source file. One that size is refused as unscannable rather than let through.
pub const SCAN_LIMIT: u64 = 100 << 20;

/// git's test for binary content: a NUL byte in the first 8000 bytes.
const BINARY_PROBE: usize = 8000;

/// The folder of git loop's policy in a repository (team config, profiles, doctrine).
pub const POLICY_DIR: &str = ".loopat";

/// One entry of a tree: git's mode and its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Entry {
    pub mode: u32,
    pub id: ObjectId,
}

/// One path a carried commit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub commit: ObjectId,
    pub path: BString,
    /// The entry in the commit's first parent, if it had one there.
    pub old: Option<Entry>,
    /// The entry in the commit; None when the commit deleted the path.
    pub new: Option<Entry>,
}

/// Every change the commits reachable from `source` and not from `target` carry (see the
/// module header).
pub fn carried(
    repo: &gix::Repository,
    target: ObjectId,
    source: ObjectId,
) -> Result<Vec<Change>, GitReadError> {
    let mut out = Vec::new();
    for commit in objects::commits_between(repo, source, &[target])? {
        let parents = commit
            .parents
            .iter()
            .map(|p| objects::commit_tree(repo, *p).map(Some))
            .collect::<Result<Vec<_>, _>>()?;
        let mut found = Vec::new();
        diff_trees(
            repo,
            Some(commit.tree),
            &parents,
            &BString::default(),
            &mut found,
        )?;
        out.extend(found.into_iter().map(|(path, old, new)| Change {
            commit: commit.id,
            path,
            old,
            new,
        }));
    }
    Ok(out)
}

type Found = (BString, Option<Entry>, Option<Entry>);

/// The entries of `new` (a tree, or nothing) that differ from the same path in every one
/// of `olds`, and the paths every one of `olds` has and `new` lacks (deletions). With no
/// `olds` (a root commit), everything in `new` is new.
fn diff_trees(
    repo: &gix::Repository,
    new: Option<ObjectId>,
    olds: &[Option<ObjectId>],
    prefix: &BString,
    out: &mut Vec<Found>,
) -> Result<(), GitReadError> {
    let items = |tree: Option<ObjectId>| -> Result<HashMap<BString, Entry>, GitReadError> {
        Ok(match tree {
            Some(t) => objects::tree_items(repo, t)?
                .into_iter()
                .map(|i| {
                    (
                        i.name,
                        Entry {
                            mode: i.mode,
                            id: i.id,
                        },
                    )
                })
                .collect(),
            None => HashMap::new(),
        })
    };
    let new_items = items(new)?;
    let old_items = olds
        .iter()
        .map(|t| items(*t))
        .collect::<Result<Vec<_>, _>>()?;
    let join = |name: &BString| {
        let mut path = prefix.clone();
        if !path.is_empty() {
            path.push_byte(b'/');
        }
        path.push_str(name);
        path
    };
    let mut names: Vec<&BString> = new_items.keys().collect();
    names.sort();
    for name in names {
        let entry = new_items[name];
        if old_items.iter().any(|o| o.get(name) == Some(&entry)) {
            continue;
        }
        let path = join(name);
        if entry.mode == MODE_TREE {
            let sub_olds: Vec<Option<ObjectId>> = old_items
                .iter()
                .map(|o| o.get(name).filter(|e| e.mode == MODE_TREE).map(|e| e.id))
                .collect();
            diff_trees(repo, Some(entry.id), &sub_olds, &path, out)?;
        } else {
            let old = old_items
                .first()
                .and_then(|o| o.get(name))
                .filter(|e| e.mode != MODE_TREE)
                .copied();
            out.push((path, old, Some(entry)));
        }
    }
    // Deleted: in every parent, not in this commit.
    if let Some(first) = old_items.first() {
        let mut gone: Vec<&BString> = first
            .keys()
            .filter(|n| !new_items.contains_key(*n) && old_items.iter().all(|o| o.contains_key(*n)))
            .collect();
        gone.sort();
        for name in gone {
            let entry = first[name];
            let path = join(name);
            if entry.mode == MODE_TREE {
                let sub_olds: Vec<Option<ObjectId>> = old_items
                    .iter()
                    .map(|o| o.get(name).filter(|e| e.mode == MODE_TREE).map(|e| e.id))
                    .collect();
                diff_trees(repo, None, &sub_olds, &path, out)?;
            } else {
                out.push((path, Some(entry), None));
            }
        }
    }
    Ok(())
}

/// How a change touched a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum How {
    Added,
    Changed,
    Deleted,
}

impl How {
    fn of(change: &Change) -> How {
        match (&change.old, &change.new) {
            (_, None) => How::Deleted,
            (None, Some(_)) => How::Added,
            (Some(_), Some(_)) => How::Changed,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            How::Added => "added",
            How::Changed => "changed",
            How::Deleted => "deleted",
        }
    }
}

/// What about a path needs a person's eye.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Concern {
    /// A line the secret guard flags.
    Secret {
        line: Option<usize>,
        rule: &'static str,
    },
    /// A nested repository's commit (mode 160000).
    Gitlink { id: ObjectId },
    /// A path git refuses to check out: a nested `.git` (in any spelling git treats as
    /// one), `..`, and the like.
    ForbiddenPath { reason: String },
    /// A blob over [`SCAN_LIMIT`]: it cannot be scanned, so it is not let through.
    TooLarge { size: u64 },
    /// A change under `.loopat/`.
    Policy { what: &'static str, how: How },
    /// A symlink added or re-pointed, and where it points.
    Symlink { target: BString, how: How },
    /// An executable bit set or cleared (or a new executable file).
    Mode { old: Option<u32>, new: u32 },
    /// A file with binary content (its diff says only that it differs).
    Binary,
}

/// What the gate does about a concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Gate {
    /// publish, merge and pr refuse it whatever the flags.
    Refused,
    /// publish and merge refuse it unless the person names it with `--accept-policy`.
    NeedsAcceptance,
    /// Shown by review, never refused.
    Shown,
}

impl Concern {
    pub fn gate(&self) -> Gate {
        match self {
            Concern::Secret { .. }
            | Concern::Gitlink { .. }
            | Concern::ForbiddenPath { .. }
            | Concern::TooLarge { .. } => Gate::Refused,
            Concern::Policy { .. } | Concern::Symlink { .. } => Gate::NeedsAcceptance,
            Concern::Mode { .. } | Concern::Binary => Gate::Shown,
        }
    }

    /// A short name for the kind, the same in review's listing and in `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Concern::Secret { .. } => "secret",
            Concern::Gitlink { .. } => "gitlink",
            Concern::ForbiddenPath { .. } => "forbidden-path",
            Concern::TooLarge { .. } => "too-large",
            Concern::Policy { .. } => "policy",
            Concern::Symlink { .. } => "symlink",
            Concern::Mode { .. } => "mode",
            Concern::Binary => "binary",
        }
    }

    /// What it is, in words, with sandbox strings (a symlink's target) made visible.
    fn describe(&self) -> String {
        match self {
            Concern::Secret { rule, .. } => format!("looks like {rule}"),
            Concern::Gitlink { id } => {
                format!("a gitlink (nested repository at commit {})", short(id))
            }
            Concern::ForbiddenPath { reason } => {
                format!("a path git refuses to check out: {}", shown(reason))
            }
            Concern::TooLarge { size } => {
                format!("{size} bytes, too large to scan for secrets (the limit is {SCAN_LIMIT})")
            }
            Concern::Policy { what, how } => format!("{what}, {}", how.as_str()),
            Concern::Symlink { target, how } => {
                format!("symlink -> {}, {}", shown(target), how.as_str())
            }
            Concern::Mode {
                old: Some(old),
                new,
            } => format!("mode {old:o} -> {new:o}"),
            Concern::Mode { old: None, new } => format!("new file with mode {new:o}"),
            Concern::Binary => "binary file".to_string(),
        }
    }
}

/// One concern about one path, found in one carried commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub path: BString,
    pub commit: ObjectId,
    pub concern: Concern,
}

impl Item {
    /// `path` (with `:line` for a secret), made visible.
    pub fn location(&self) -> String {
        match &self.concern {
            Concern::Secret {
                line: Some(line), ..
            } => format!("{}:{line}", shown(&self.path)),
            _ => shown(&self.path).to_string(),
        }
    }

    /// One line for a terminal: where, what, which commit.
    pub fn line(&self) -> String {
        format!(
            "{:<8} {}  {} (commit {})",
            self.concern.kind(),
            self.location(),
            self.concern.describe(),
            short(&self.commit)
        )
    }

    pub fn to_json(&self) -> Value {
        let gate = match self.concern.gate() {
            Gate::Refused => "refused",
            Gate::NeedsAcceptance => "accept-policy",
            Gate::Shown => "shown",
        };
        let mut v = json!({
            "kind": self.concern.kind(),
            "path": self.path.to_str_lossy(),
            "commit": self.commit.to_string(),
            "gate": gate,
        });
        match &self.concern {
            Concern::Secret { line, rule } => {
                v["line"] = json!(line);
                v["rule"] = json!(rule);
            }
            Concern::Gitlink { id } => v["target"] = json!(id.to_string()),
            Concern::ForbiddenPath { reason } => v["reason"] = json!(reason),
            Concern::TooLarge { size } => v["size"] = json!(size),
            Concern::Policy { what, how } => {
                v["what"] = json!(what);
                v["change"] = json!(how.as_str());
            }
            Concern::Symlink { target, how } => {
                v["target"] = json!(target.to_str_lossy());
                v["change"] = json!(how.as_str());
            }
            Concern::Mode { old, new } => {
                v["old_mode"] = json!(old.map(|m| format!("{m:o}")));
                v["new_mode"] = json!(format!("{new:o}"));
            }
            Concern::Binary => {}
        }
        v
    }
}

fn short(id: &ObjectId) -> String {
    id.to_string()[..12].to_string()
}

/// What under `.loopat/` a path is, for a person.
pub fn policy_kind(path: &[u8]) -> Option<&'static str> {
    let rest = if path == POLICY_DIR.as_bytes() {
        b"".as_slice()
    } else {
        path.strip_prefix(POLICY_DIR.as_bytes())?
            .strip_prefix(b"/")?
    };
    Some(if rest == b"config.toml" {
        "team config"
    } else if rest.starts_with(b"sandboxes/") {
        "sandbox profile"
    } else if rest == b"claude/CLAUDE.md" {
        "team doctrine"
    } else if rest.starts_with(b"claude/skills/") || rest == b"claude/skills" {
        "team skill"
    } else if rest == b"claude/claude.json" {
        "MCP servers"
    } else if rest.starts_with(b"vaults/") {
        "vault"
    } else {
        "git loop policy (.loopat/)"
    })
}

/// Why git would refuse to check out `path` (a `.git` component in any spelling a
/// case-insensitive or NTFS/HFS+ file system takes for one, `..`), if it would.
fn forbidden_path(path: &[u8], leaf_is_link: bool) -> Option<String> {
    let options = gix::validate::path::component::Options {
        // Backslashes and colons are valid names where loops run.
        protect_windows: false,
        protect_hfs: true,
        protect_ntfs: true,
    };
    let parts: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
    for (i, part) in parts.iter().enumerate() {
        let leaf = (leaf_is_link && i + 1 == parts.len())
            .then_some(gix::validate::path::component::Mode::Symlink);
        if let Err(e) = gix::validate::path::component(part.as_bstr(), leaf, options) {
            return Some(format!("{:?}: {e}", part.as_bstr()));
        }
    }
    None
}

/// Everything the carried changes hold that needs a person's eye.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub items: Vec<Item>,
}

/// Judges `changes` (see [`Concern`]): reads each added or changed blob once, bounded by
/// [`SCAN_LIMIT`], and scans it with the secret guard's rules and `allow`.
pub fn judge(
    repo: &gix::Repository,
    changes: &[Change],
    allow: &Allowlist,
) -> Result<Report, GitReadError> {
    let mut items = Vec::new();
    let mut seen: HashSet<(BString, Concern)> = HashSet::new();
    let mut push = |path: &BString, commit: ObjectId, concern: Concern| {
        if seen.insert((path.clone(), concern.clone())) {
            items.push(Item {
                path: path.clone(),
                commit,
                concern,
            });
        }
    };
    let mut scanned: HashSet<(BString, ObjectId)> = HashSet::new();
    for change in changes {
        let how = How::of(change);
        let path = &change.path;
        if let Some(what) = policy_kind(path) {
            push(path, change.commit, Concern::Policy { what, how });
        } else if crate::sandbox::fspolicy::mandatory(path).is_some() {
            // What runs on a person's machine when the project is opened or built
            // (sandbox/fspolicy.rs): read-only inside by default, and a person's word
            // before it lands.
            push(
                path,
                change.commit,
                Concern::Policy {
                    what: "runs when the project is opened or built",
                    how,
                },
            );
        }
        let Some(new) = change.new else { continue };
        if let Some(reason) = forbidden_path(path, new.mode == MODE_LINK) {
            push(path, change.commit, Concern::ForbiddenPath { reason });
        }
        match new.mode {
            MODE_GITLINK => {
                push(path, change.commit, Concern::Gitlink { id: new.id });
                continue;
            }
            MODE_FILE | MODE_EXEC => {
                let old_mode = change.old.map(|o| o.mode);
                let flipped = matches!(
                    (old_mode, new.mode),
                    (Some(MODE_FILE), MODE_EXEC) | (Some(MODE_EXEC), MODE_FILE)
                );
                let new_exec = new.mode == MODE_EXEC && old_mode.is_none_or(|m| m != MODE_EXEC);
                if flipped || new_exec {
                    push(
                        path,
                        change.commit,
                        Concern::Mode {
                            old: old_mode.filter(|m| *m == MODE_FILE || *m == MODE_EXEC),
                            new: new.mode,
                        },
                    );
                }
            }
            _ => {}
        }
        if !scanned.insert((path.clone(), new.id)) {
            continue;
        }
        let content = match objects::read_blob_bounded(repo, new.id, SCAN_LIMIT)? {
            BoundedBlob::Content(c) => c,
            BoundedBlob::TooLarge(size) => {
                push(path, change.commit, Concern::TooLarge { size });
                continue;
            }
        };
        if new.mode == MODE_LINK {
            let unchanged = change.old.is_some_and(|o| o == new);
            if !unchanged {
                push(
                    path,
                    change.commit,
                    Concern::Symlink {
                        target: content.clone().into(),
                        how,
                    },
                );
            }
        } else if content[..content.len().min(BINARY_PROBE)].contains(&0) {
            push(path, change.commit, Concern::Binary);
        }
        for finding in guard::check_allowing(&path.to_str_lossy(), new.mode, &content, allow) {
            push(
                path,
                change.commit,
                Concern::Secret {
                    line: finding.line,
                    rule: finding.what,
                },
            );
        }
    }
    items.sort_by(|a, b| {
        (a.concern.gate(), &a.path, a.concern.kind()).cmp(&(
            b.concern.gate(),
            &b.path,
            b.concern.kind(),
        ))
    });
    Ok(Report { items })
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The items publish, merge and pr refuse: every [`Gate::Refused`] one, and the
    /// [`Gate::NeedsAcceptance`] ones no path of `accepted` covers (when `policy` applies:
    /// `pr` hands the branch to a forge's review and checks only what is always refused).
    pub fn blocking<'a>(&'a self, accepted: &[String], policy: bool) -> Vec<&'a Item> {
        self.items
            .iter()
            .filter(|i| match i.concern.gate() {
                Gate::Refused => true,
                Gate::NeedsAcceptance => policy && !covered(&i.path, accepted),
                Gate::Shown => false,
            })
            .collect()
    }

    pub fn to_json(&self) -> Value {
        Value::Array(self.items.iter().map(Item::to_json).collect())
    }
}

/// Does any `--accept-policy` name `path`?
fn covered(path: &[u8], accepted: &[String]) -> bool {
    accepted.iter().any(|a| covers(a, path))
}

/// Does `--accept-policy accepted` name `path`: the path itself, or a folder above it?
pub fn covers(accepted: &str, path: &[u8]) -> bool {
    let a = accepted.trim_start_matches("./").trim_end_matches('/');
    !a.is_empty()
        && (path == a.as_bytes()
            || path
                .strip_prefix(a.as_bytes())
                .is_some_and(|rest| rest.starts_with(b"/")))
}

/// Reading the branch or its target failed.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("branch {0} does not exist")]
    NoBranch(String),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: GitReadError,
    },
}

/// What a branch carries into a target, judged.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// The branch's commit that was judged: what lands must be this one.
    pub source: ObjectId,
    pub target: ObjectId,
    pub report: Report,
}

/// Reads what `source_branch` carries into `target_branch` in `origin` and judges it.
pub fn inspect(
    origin: &Path,
    source_branch: &str,
    target_branch: &str,
    allow: &Allowlist,
) -> Result<Inspection, GateError> {
    let read = |source| GateError::Read {
        path: origin.to_path_buf(),
        source,
    };
    let repo = objects::open_trusted(origin).map_err(read)?;
    let tip = |name: &str| -> Result<ObjectId, GateError> {
        objects::resolve_branch(&repo, name)
            .map_err(read)?
            .ok_or_else(|| GateError::NoBranch(name.to_string()))
    };
    let source = tip(source_branch)?;
    let target = tip(target_branch)?;
    let changes = carried(&repo, target, source).map_err(read)?;
    let report = judge(&repo, &changes, allow).map_err(read)?;
    Ok(Inspection {
        source,
        target,
        report,
    })
}

/// The refusal of `what` (`publish`, `merge`, `pr`) of loop `id` when any of `reports`
/// (one per branch: notes, knowledge, code) holds what blocks it. What is at stake is
/// reported first, one line each, so the person sees exactly what was refused.
/// `retry` is the command that would do it with the policy accepted (without the flags).
pub fn refusal(
    out: &mut dyn crate::report::Report,
    what: &str,
    id: &str,
    reports: &[(&str, &Report)],
    accepted: &[String],
    retry: &str,
) -> std::io::Result<Option<Error>> {
    let policy = what != "pr";
    let (mut refused, mut secrets, mut unscannable) = (0, false, false);
    let mut unaccepted: Vec<String> = Vec::new();
    for (role, report) in reports {
        for item in report.blocking(accepted, policy) {
            out.notice(&format!("  {role}: {}", item.line()))?;
            match item.concern {
                Concern::Policy { .. } | Concern::Symlink { .. } => {
                    let path = String::from_utf8_lossy(&item.path).into_owned();
                    if !unaccepted.contains(&path) {
                        unaccepted.push(path);
                    }
                }
                Concern::Secret { .. } => {
                    refused += 1;
                    secrets = true;
                }
                _ => {
                    refused += 1;
                    unscannable = true;
                }
            }
        }
    }
    if refused == 0 && unaccepted.is_empty() {
        return Ok(None);
    }
    Ok(Some(
        Refused {
            what: what.to_string(),
            id: id.to_string(),
            refused,
            secrets,
            unscannable,
            unaccepted,
            retry: retry.to_string(),
        }
        .into(),
    ))
}

/// A publish, merge or pr that the gate refused: how many things never land
/// (`refused`: secrets, and gitlinks, nested repositories and files too large to scan,
/// `unscannable`), and the policy changes not accepted (`unaccepted`, paths). `retry` is
/// the command that would do it with the policy accepted. The command layer says what to
/// do about each.
#[derive(Debug)]
pub struct Refused {
    pub what: String,
    pub id: String,
    pub refused: usize,
    pub secrets: bool,
    pub unscannable: bool,
    pub unaccepted: Vec<String>,
    pub retry: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut reasons = Vec::new();
        let refused = self.refused;
        if refused > 0 {
            reasons.push(format!(
                "{refused} thing{} that never land{}",
                if refused == 1 { "" } else { "s" },
                if refused == 1 { "s" } else { "" }
            ));
        }
        if !self.unaccepted.is_empty() {
            reasons.push(format!(
                "{} policy change{} (.loopat/, what runs when the project is opened, or a symlink) not accepted",
                self.unaccepted.len(),
                if self.unaccepted.len() == 1 { "" } else { "s" }
            ));
        }
        write!(
            f,
            "{} of loop {} refused: its branch carries {}",
            self.what,
            self.id,
            reasons.join(" and ")
        )
    }
}

impl std::error::Error for Refused {}

/// What loop `id` would publish could not be judged.
#[derive(Debug, thiserror::Error)]
#[error("cannot check what loop {id} would publish")]
pub struct Unchecked {
    pub id: String,
    #[source]
    pub source: GateError,
}

/// What a refusal was about, as the cause of an error that is reported on one line
/// (`autocommit --publish-notes` warns with it).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AtStake(String);

impl AtStake {
    /// From the lines [`refusal`] reported.
    pub fn from_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> AtStake {
        AtStake(
            lines
                .into_iter()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; "),
        )
    }
}

/// `s` quoted for a shell when it needs it (a hint the person may paste).
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The `--accept-policy PATH`s among `accepted` that cover no change needing acceptance in
/// any of `reports` (a typo, or a change that is no longer there).
pub fn unused_acceptances<'a>(
    reports: &[(&str, &Report)],
    accepted: &'a [String],
) -> Vec<&'a String> {
    accepted
        .iter()
        .filter(|a| {
            !reports.iter().any(|(_, r)| {
                r.items
                    .iter()
                    .any(|i| i.concern.gate() == Gate::NeedsAcceptance && covers(a, &i.path))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// `git ARGS` in `dir` with a fixed, isolated environment; stdout trimmed.
    fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
        let mut cmd = Command::new("git");
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "A")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "A")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .current_dir(dir)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        {
            use std::io::Write as _;
            let mut input = child.stdin.take().unwrap();
            input.write_all(stdin.unwrap_or_default()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    fn commit_all(dir: &Path, message: &str) {
        git(dir, &["add", "-A"], None);
        git(dir, &["commit", "-q", "--no-verify", "-m", message], None);
    }

    fn found(report: &Report) -> Vec<String> {
        report
            .items
            .iter()
            .map(|i| format!("{} {}", i.concern.kind(), i.location()))
            .collect()
    }

    /// A branch with a bit of everything, a merge of trunk into it, and a secret that a
    /// later commit deletes: what is carried is what its commits brought, not trunk's.
    #[test]
    fn what_a_branch_carries_is_judged_commit_by_commit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"], None);
        std::fs::write(dir.join("README.md"), "# demo\n").unwrap();
        std::fs::create_dir(dir.join("trunk")).unwrap();
        std::fs::write(dir.join("trunk/old.md"), "old\n").unwrap();
        commit_all(dir, "first");
        git(dir, &["checkout", "-q", "-b", "loop/x"], None);

        let token = format!("ghp_{}", "a".repeat(36));
        std::fs::write(dir.join("secret.txt"), format!("x\n{token}\n")).unwrap();
        std::fs::write(dir.join("run.sh"), "echo\n").unwrap();
        std::fs::set_permissions(
            dir.join("run.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();
        std::fs::create_dir(dir.join(".loopat")).unwrap();
        std::fs::write(dir.join(".loopat/config.toml"), "[network]\n").unwrap();
        std::fs::write(dir.join("bin.dat"), b"\x00\x01binary").unwrap();
        git(dir, &["add", "-A"], None);
        let head = git(dir, &["rev-parse", "HEAD"], None);
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{head},vendor/sub"),
            ],
            None,
        );
        git(dir, &["commit", "-q", "-m", "everything"], None);
        std::fs::remove_file(dir.join("secret.txt")).unwrap();
        std::fs::write(dir.join("README.md"), "# demo\nmore\n").unwrap();
        commit_all(dir, "take the secret out");

        // Trunk moves on (with a secret of its own, already there) and is merged in.
        git(dir, &["checkout", "-q", "main"], None);
        std::fs::write(dir.join("main.txt"), format!("{token}\n")).unwrap();
        std::fs::remove_file(dir.join("trunk/old.md")).unwrap();
        commit_all(dir, "trunk");
        git(dir, &["checkout", "-q", "loop/x"], None);
        git(dir, &["merge", "-q", "--no-edit", "main"], None);

        let repo = objects::open_trusted(dir).unwrap();
        let target = objects::resolve_branch(&repo, "main").unwrap().unwrap();
        let source = objects::resolve_branch(&repo, "loop/x").unwrap().unwrap();
        let changes = carried(&repo, target, source).unwrap();
        assert!(
            changes
                .iter()
                .all(|c| c.path != "main.txt" && c.path != "trunk/old.md"),
            "trunk's own changes are not carried: {changes:?}"
        );
        let report = judge(&repo, &changes, &Allowlist::builtin()).unwrap();
        assert_eq!(
            found(&report),
            [
                "secret secret.txt:2",
                "gitlink vendor/sub",
                "policy .loopat/config.toml",
                "symlink link",
                "binary bin.dat",
                "mode run.sh",
            ]
        );
        let link = report.items.iter().find(|i| i.path == "link").unwrap();
        assert_eq!(
            link.concern,
            Concern::Symlink {
                target: "/etc/passwd".into(),
                how: How::Added
            }
        );
        let blocking = |accepted: &[&str], policy: bool| {
            let accepted: Vec<String> = accepted.iter().map(|a| a.to_string()).collect();
            report
                .blocking(&accepted, policy)
                .iter()
                .map(|i| i.path.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            blocking(&[], true),
            ["secret.txt", "vendor/sub", ".loopat/config.toml", "link"]
        );
        assert_eq!(
            blocking(&[".loopat", "link"], true),
            ["secret.txt", "vendor/sub"]
        );
        assert_eq!(blocking(&[], false), ["secret.txt", "vendor/sub"]);

        // The allowlist lets a known false positive through.
        let allow = Allowlist::with([token.clone()]);
        let report = judge(&repo, &changes, &allow).unwrap();
        assert!(!found(&report).iter().any(|f| f.starts_with("secret")));

        // Deleting policy is a change to policy too.
        git(dir, &["rm", "-q", "-r", ".loopat"], None);
        git(dir, &["commit", "-q", "-m", "no policy"], None);
        let later = objects::resolve_branch(&repo, "loop/x").unwrap().unwrap();
        let changes = carried(&repo, source, later).unwrap();
        let report = judge(&repo, &changes, &Allowlist::builtin()).unwrap();
        assert_eq!(
            report.items[0].concern,
            Concern::Policy {
                what: "team config",
                how: How::Deleted
            }
        );
    }

    /// git will not make a tree with a nested `.git`, but a hand-made one can hold it.
    #[test]
    fn a_hand_made_nested_git_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"], None);
        git(dir, &["commit", "-q", "--allow-empty", "-m", "first"], None);
        let blob = git(dir, &["hash-object", "-w", "--stdin"], Some(b"[core]\n"));
        let inner = git(
            dir,
            &["mktree"],
            Some(format!("100644 blob {blob}\tconfig\n").as_bytes()),
        );
        let sub = git(
            dir,
            &["mktree"],
            Some(format!("040000 tree {inner}\t.Git\n").as_bytes()),
        );
        let top = git(
            dir,
            &["mktree"],
            Some(format!("040000 tree {sub}\tsub\n").as_bytes()),
        );
        let commit = git(
            dir,
            &["commit-tree", &top, "-p", "main", "-m", "nested"],
            None,
        );
        git(dir, &["update-ref", "refs/heads/loop/x", &commit], None);
        let repo = objects::open_trusted(dir).unwrap();
        let target = objects::resolve_branch(&repo, "main").unwrap().unwrap();
        let source = objects::resolve_branch(&repo, "loop/x").unwrap().unwrap();
        let report = judge(
            &repo,
            &carried(&repo, target, source).unwrap(),
            &Allowlist::builtin(),
        )
        .unwrap();
        assert_eq!(found(&report), ["forbidden-path sub/.Git/config"]);
        assert_eq!(report.blocking(&["sub".into()], true).len(), 1);
    }

    #[test]
    fn policy_paths_are_named() {
        assert_eq!(policy_kind(b".loopat/config.toml"), Some("team config"));
        assert_eq!(
            policy_kind(b".loopat/sandboxes/py/sandbox.toml"),
            Some("sandbox profile")
        );
        assert_eq!(
            policy_kind(b".loopat/claude/CLAUDE.md"),
            Some("team doctrine")
        );
        assert_eq!(
            policy_kind(b".loopat/claude/skills/x/SKILL.md"),
            Some("team skill")
        );
        assert_eq!(
            policy_kind(b".loopat/claude/claude.json"),
            Some("MCP servers")
        );
        assert_eq!(
            policy_kind(b".loopat/other"),
            Some("git loop policy (.loopat/)")
        );
        assert_eq!(policy_kind(b".loopat"), Some("git loop policy (.loopat/)"));
        assert_eq!(policy_kind(b"docs/.loopat/config.toml"), None);
        assert_eq!(policy_kind(b".loopatx/config.toml"), None);
    }

    #[test]
    fn nested_git_in_any_spelling_is_forbidden() {
        for bad in [
            ".git/config",
            "sub/.git/hooks/pre-commit",
            "sub/.GIT/config",
            "sub/.Git",
            "git~1/config",
            "a/../b",
        ] {
            assert!(forbidden_path(bad.as_bytes(), false).is_some(), "{bad}");
        }
        for good in [
            "src/main.rs",
            ".github/workflows/ci.yml",
            ".gitignore",
            "a.git/x",
        ] {
            assert_eq!(forbidden_path(good.as_bytes(), false), None, "{good}");
        }
    }

    #[test]
    fn accept_policy_names_a_path_or_a_folder_above_it() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(covered(
            b".loopat/config.toml",
            &a(&[".loopat/config.toml"])
        ));
        assert!(covered(
            b".loopat/claude/skills/x/SKILL.md",
            &a(&[".loopat/claude/"])
        ));
        assert!(covered(b"link", &a(&["./link"])));
        assert!(!covered(b".loopat/config.toml", &a(&[".loopat/config"])));
        assert!(!covered(b".loopat/config.toml", &a(&["", "/"])));
    }

    #[test]
    fn an_acceptance_is_unused_unless_it_covers_a_change_that_needs_one() {
        let item = |path: &str, concern: Concern| Item {
            path: path.into(),
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            concern,
        };
        let code = Report {
            items: vec![
                item(
                    ".loopat/config.toml",
                    Concern::Policy {
                        what: "config",
                        how: How::Changed,
                    },
                ),
                item(
                    "run.sh",
                    Concern::Mode {
                        old: None,
                        new: 0o100755,
                    },
                ),
            ],
        };
        let notes = Report {
            items: vec![item(
                "link",
                Concern::Symlink {
                    target: "x".into(),
                    how: How::Added,
                },
            )],
        };
        let accepted: Vec<String> = [".loopat/", "link", "run.sh", "elsewhere"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let reports = [("code", &code), ("notes", &notes)];
        // A shown concern (an executable bit) needs no acceptance: naming it is unused.
        assert_eq!(
            unused_acceptances(&reports, &accepted),
            ["run.sh", "elsewhere"]
        );
        assert_eq!(
            unused_acceptances(&reports[..1], &accepted),
            ["link", "run.sh", "elsewhere"]
        );
        assert!(unused_acceptances(&reports, &[]).is_empty());
    }

    #[test]
    fn hints_quote_what_a_shell_would_split() {
        assert_eq!(shell_word(".loopat/config.toml"), ".loopat/config.toml");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    /// A branch that changes one file in a folder where trunk keeps another (with a
    /// secret of trunk's own), makes it executable, and turns a file into a folder: only
    /// what changed is carried, as a change of the file that was there.
    #[test]
    fn a_change_inside_a_folder_is_that_files_change_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"], None);
        std::fs::create_dir(dir.join("dir")).unwrap();
        let token = format!("ghp_{}", "b".repeat(36));
        std::fs::write(dir.join("dir/a.txt"), format!("{token}\n")).unwrap();
        std::fs::write(dir.join("dir/b.sh"), "echo one\n").unwrap();
        std::fs::write(dir.join("x"), "a file\n").unwrap();
        commit_all(dir, "first");
        git(dir, &["checkout", "-q", "-b", "loop/x"], None);
        std::fs::write(dir.join("dir/b.sh"), "echo two\n").unwrap();
        std::fs::set_permissions(
            dir.join("dir/b.sh"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::remove_file(dir.join("x")).unwrap();
        std::fs::create_dir(dir.join("x")).unwrap();
        std::fs::write(dir.join("x/y"), "now a folder\n").unwrap();
        commit_all(dir, "change");

        let repo = objects::open_trusted(dir).unwrap();
        let target = objects::resolve_branch(&repo, "main").unwrap().unwrap();
        let source = objects::resolve_branch(&repo, "loop/x").unwrap().unwrap();
        let changes = carried(&repo, target, source).unwrap();
        let seen: Vec<(String, Option<u32>, Option<u32>, How)> = changes
            .iter()
            .map(|c| {
                (
                    c.path.to_string(),
                    c.old.map(|e| e.mode),
                    c.new.map(|e| e.mode),
                    How::of(c),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "dir/b.sh".to_string(),
                    Some(MODE_FILE),
                    Some(MODE_EXEC),
                    How::Changed
                ),
                ("x/y".to_string(), None, Some(MODE_FILE), How::Added),
            ]
        );
        let report = judge(&repo, &changes, &Allowlist::builtin()).unwrap();
        assert_eq!(
            report.items.iter().map(Item::line).collect::<Vec<_>>(),
            [format!(
                "mode     dir/b.sh  mode 100644 -> 100755 (commit {})",
                &source.to_string()[..12]
            )]
        );
    }

    /// Every concern as review's listing and `--json` show it.
    #[test]
    fn every_concern_reads_the_same_in_a_line_and_in_json() {
        let commit = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        let other = ObjectId::from_hex(b"fedcba9876543210fedcba9876543210fedcba98").unwrap();
        let item = |path: &str, concern: Concern| Item {
            path: path.into(),
            commit,
            concern,
        };
        let cases = [
            (
                item(
                    "a.env",
                    Concern::Secret {
                        line: Some(3),
                        rule: "a GitHub token",
                    },
                ),
                "secret   a.env:3  looks like a GitHub token (commit 0123456789ab)",
                json!({"kind": "secret", "path": "a.env", "commit": commit.to_string(),
                       "gate": "refused", "line": 3, "rule": "a GitHub token"}),
            ),
            (
                item("vendor/x", Concern::Gitlink { id: other }),
                "gitlink  vendor/x  a gitlink (nested repository at commit fedcba987654) (commit 0123456789ab)",
                json!({"kind": "gitlink", "path": "vendor/x", "commit": commit.to_string(),
                       "gate": "refused", "target": other.to_string()}),
            ),
            (
                item(
                    "s/.git/config",
                    Concern::ForbiddenPath {
                        reason: "bad\x1b[0m".into(),
                    },
                ),
                "forbidden-path s/.git/config  a path git refuses to check out: bad\\x1b[0m (commit 0123456789ab)",
                json!({"kind": "forbidden-path", "path": "s/.git/config",
                       "commit": commit.to_string(), "gate": "refused", "reason": "bad\x1b[0m"}),
            ),
            (
                item("big", Concern::TooLarge { size: 7 }),
                &*format!(
                    "too-large big  7 bytes, too large to scan for secrets (the limit is {SCAN_LIMIT}) (commit 0123456789ab)"
                ),
                json!({"kind": "too-large", "path": "big", "commit": commit.to_string(),
                       "gate": "refused", "size": 7}),
            ),
            (
                item(
                    ".loopat/config.toml",
                    Concern::Policy {
                        what: "team config",
                        how: How::Deleted,
                    },
                ),
                "policy   .loopat/config.toml  team config, deleted (commit 0123456789ab)",
                json!({"kind": "policy", "path": ".loopat/config.toml",
                       "commit": commit.to_string(), "gate": "accept-policy",
                       "what": "team config", "change": "deleted"}),
            ),
            (
                item(
                    "l",
                    Concern::Symlink {
                        target: "/etc".into(),
                        how: How::Changed,
                    },
                ),
                "symlink  l  symlink -> /etc, changed (commit 0123456789ab)",
                json!({"kind": "symlink", "path": "l", "commit": commit.to_string(),
                       "gate": "accept-policy", "target": "/etc", "change": "changed"}),
            ),
            (
                item(
                    "run",
                    Concern::Mode {
                        old: None,
                        new: MODE_EXEC,
                    },
                ),
                "mode     run  new file with mode 100755 (commit 0123456789ab)",
                json!({"kind": "mode", "path": "run", "commit": commit.to_string(),
                       "gate": "shown", "old_mode": null, "new_mode": "100755"}),
            ),
            (
                item("b.dat", Concern::Binary),
                "binary   b.dat  binary file (commit 0123456789ab)",
                json!({"kind": "binary", "path": "b.dat", "commit": commit.to_string(),
                       "gate": "shown"}),
            ),
        ];
        for (item, line, json) in &cases {
            assert_eq!(item.line(), *line);
            assert_eq!(item.to_json(), *json, "{line}");
        }
        assert_eq!(How::Added.as_str(), "added");
        let report = Report {
            items: cases.iter().map(|(i, _, _)| i.clone()).collect(),
        };
        assert!(!report.is_empty() && Report::default().is_empty());
        assert_eq!(
            report.to_json(),
            Value::Array(cases.iter().map(|(_, _, j)| j.clone()).collect())
        );
    }

    /// A symlink turned into an executable file is a new executable (its old mode was no
    /// file's); an executable whose content changes is not flagged again; a symlink named
    /// `.gitmodules` is a path git refuses, though the same name as a file is not.
    #[test]
    fn executables_and_links_are_judged_by_what_they_were() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        git(dir, &["init", "-q", "-b", "main"], None);
        std::os::unix::fs::symlink("/etc", dir.join("lnk")).unwrap();
        std::os::unix::fs::symlink("a", dir.join("ptr")).unwrap();
        std::fs::write(dir.join("tool"), "echo one\n").unwrap();
        std::fs::set_permissions(
            dir.join("tool"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        commit_all(dir, "first");
        git(dir, &["checkout", "-q", "-b", "loop/x"], None);
        std::fs::remove_file(dir.join("lnk")).unwrap();
        std::fs::write(dir.join("lnk"), "echo now a program\n").unwrap();
        std::fs::set_permissions(
            dir.join("lnk"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        std::fs::write(dir.join("tool"), "echo two\n").unwrap();
        std::fs::write(dir.join(".gitattributes"), "* text\n").unwrap();
        std::fs::remove_file(dir.join("ptr")).unwrap();
        std::os::unix::fs::symlink("b", dir.join("ptr")).unwrap();
        commit_all(dir, "change");
        // A symlink `.gitmodules` next to them: git will not stage one, a hand-made tree
        // holds it.
        let blob = git(dir, &["hash-object", "-w", "--stdin"], Some(b"/etc/passwd"));
        let mut listing = git(dir, &["ls-tree", "HEAD"], None);
        listing.push_str(&format!("\n120000 blob {blob}\t.gitmodules\n"));
        let tree = git(dir, &["mktree"], Some(listing.as_bytes()));
        let commit = git(
            dir,
            &["commit-tree", &tree, "-p", "HEAD", "-m", "link"],
            None,
        );
        git(dir, &["update-ref", "refs/heads/loop/x", &commit], None);

        let repo = objects::open_trusted(dir).unwrap();
        let target = objects::resolve_branch(&repo, "main").unwrap().unwrap();
        let source = objects::resolve_branch(&repo, "loop/x").unwrap().unwrap();
        let report = judge(
            &repo,
            &carried(&repo, target, source).unwrap(),
            &Allowlist::builtin(),
        )
        .unwrap();
        let what: Vec<String> = report
            .items
            .iter()
            .map(|i| format!("{} {}", i.location(), i.concern.describe()))
            .collect();
        assert_eq!(what.len(), 5, "{what:?}");
        assert!(
            what[0].starts_with(".gitmodules a path git refuses to check out"),
            "{what:?}"
        );
        // .gitmodules is also of what runs when the project is opened (fspolicy.rs).
        assert_eq!(
            what[1],
            ".gitmodules runs when the project is opened or built, added"
        );
        assert_eq!(what[2], ".gitmodules symlink -> /etc/passwd, added");
        assert_eq!(what[3], "ptr symlink -> b, changed");
        assert_eq!(what[4], "lnk new file with mode 100755");
    }

    #[test]
    fn only_the_leaf_of_a_path_is_judged_as_a_link() {
        assert!(forbidden_path(b"sub/.gitmodules", true).is_some());
        assert_eq!(forbidden_path(b"sub/.gitmodules", false), None);
        assert_eq!(forbidden_path(b".gitmodules/x", true), None);
        assert_eq!(forbidden_path(b"a/b/c", true), None);
        assert!(forbidden_path(b"a/.git/c", false).is_some());
    }

    /// What a refusal writes, says and hints, by what the reports hold.
    #[test]
    fn a_refusal_names_what_blocks_and_how_to_go_on() {
        let commit = ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        let item = |path: &str, concern: Concern| Item {
            path: path.into(),
            commit,
            concern,
        };
        let secret = item(
            "a.env",
            Concern::Secret {
                line: Some(1),
                rule: "a GitHub token",
            },
        );
        let gitlink = item("vendor/x", Concern::Gitlink { id: commit });
        let policy = item(
            ".loopat/config.toml",
            Concern::Policy {
                what: "team config",
                how: How::Changed,
            },
        );
        let link = item(
            "my link",
            Concern::Symlink {
                target: "/etc".into(),
                how: How::Added,
            },
        );
        let mode = item(
            "run",
            Concern::Mode {
                old: None,
                new: MODE_EXEC,
            },
        );
        let run = |what: &str, reports: &[(&str, &Report)], accepted: &[&str]| {
            let accepted: Vec<String> = accepted.iter().map(|a| a.to_string()).collect();
            let mut written = crate::report::Recorded::default();
            let e = refusal(
                &mut written,
                what,
                "x1",
                reports,
                &accepted,
                "git loop merge x1",
            )
            .unwrap();
            let lines = written.of(crate::report::Kind::Notice);
            assert_eq!(lines.len(), written.lines.len(), "only the lines at stake");
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            (text, e)
        };

        // Shown-only items and nothing at all: no refusal, nothing written.
        let shown = Report {
            items: vec![mode.clone()],
        };
        let (written, e) = run(
            "merge",
            &[("code", &shown), ("notes", &Report::default())],
            &[],
        );
        assert!(written.is_empty() && e.is_none());

        // Two refused things (a secret, a gitlink) and two policy changes.
        let code = Report {
            items: vec![
                secret.clone(),
                gitlink.clone(),
                policy.clone(),
                link.clone(),
                mode.clone(),
            ],
        };
        let notes = Report {
            items: vec![policy.clone()],
        };
        let (written, e) = run("merge", &[("code", &code), ("notes", &notes)], &[]);
        let e = e.expect("refused");
        assert_eq!(
            written.lines().collect::<Vec<_>>(),
            [
                format!("  code: {}", secret.line()),
                format!("  code: {}", gitlink.line()),
                format!("  code: {}", policy.line()),
                format!("  code: {}", link.line()),
                format!("  notes: {}", policy.line()),
            ]
        );
        assert_eq!(
            e.message,
            "merge of loop x1 refused: its branch carries 2 things that never land and \
             2 policy changes (.loopat/, what runs when the project is opened, or a symlink) not accepted"
        );
        assert_eq!(e.hints.len(), 6, "{:?}", e.hints);
        assert_eq!(e.hints[0], "nothing was changed");
        assert!(e.hints[1].contains("git loop shell x1") && e.hints[1].contains("rebase"));
        assert!(e.hints[2].contains("guard.allow"));
        assert!(e.hints[3].starts_with("gitlinks, nested .git folders"));
        assert_eq!(e.hints[4], "review it first: git loop review x1");
        assert_eq!(
            e.hints[5],
            "to merge it with these policy changes: git loop merge x1 \
             --accept-policy .loopat/config.toml --accept-policy 'my link'"
        );

        // With the policy accepted, only what never lands; one of it.
        let code = Report {
            items: vec![secret.clone(), policy.clone(), link.clone()],
        };
        let (written, e) = run("publish", &[("code", &code)], &[".loopat", "my link"]);
        let e = e.expect("refused");
        assert_eq!(written.lines().count(), 1);
        assert_eq!(
            e.message,
            "publish of loop x1 refused: its branch carries 1 thing that never lands"
        );
        assert_eq!(e.hints.len(), 3, "{:?}", e.hints);

        // Policy alone, not accepted: one change; a gitlink alone: no secret hints.
        // A merge of one item, which must be refused.
        let refused_alone = |item: &Item| {
            let report = Report {
                items: vec![item.clone()],
            };
            run("merge", &[("code", &report)], &[]).1.expect("refused")
        };
        let e = refused_alone(&link);
        assert_eq!(
            e.message,
            "merge of loop x1 refused: its branch carries 1 policy change (.loopat/, what runs when the project is opened, or a symlink) not accepted"
        );
        assert_eq!(e.hints.len(), 3, "{:?}", e.hints);
        let e = refused_alone(&gitlink);
        assert_eq!(e.hints.len(), 2, "{:?}", e.hints);
        assert!(e.hints[1].starts_with("gitlinks"));

        // A pull request is checked only for what never lands.
        let (written, e) = run(
            "pr",
            &[(
                "code",
                &Report {
                    items: vec![policy, link],
                },
            )],
            &[],
        );
        assert!(written.is_empty() && e.is_none());
        let (written, e) = run(
            "pr",
            &[(
                "code",
                &Report {
                    items: vec![secret],
                },
            )],
            &[],
        );
        assert_eq!(written.lines().count(), 1);
        assert!(e.unwrap().message.starts_with("pr of loop x1 refused"));
    }

    #[test]
    fn what_was_at_stake_is_one_line() {
        assert_eq!(
            AtStake::from_lines(["  code: a", "", "  notes: b"]).to_string(),
            "code: a; notes: b"
        );
    }
}
