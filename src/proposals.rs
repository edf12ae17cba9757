//! What a loop proposes, read for review: commits ahead of their targets, the files they
//! change, what needs a person's eye, and uncommitted changes.

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::gate;
use crate::git::cmd::Git;
use crate::loops::{self, LoopRecord, LoopStatus};
use crate::workspace::Workspace;

/// One loop's proposals.
pub struct Proposals {
    pub rec: LoopRecord,
    pub status: LoopStatus,
    /// Per role: files changed on the branch against its target.
    pub files: Vec<(&'static str, Vec<String>)>,
    /// Per role: what the branch carries that needs a person's eye.
    pub attention: Vec<(&'static str, gate::Report)>,
    /// Per role: uncommitted paths in the loop's own clone.
    pub uncommitted: Vec<(&'static str, Vec<String>)>,
}

impl Proposals {
    /// Commits ahead of a target, or uncommitted changes.
    pub fn any(&self) -> bool {
        self.status.branches.iter().any(|b| b.pending())
            || self.uncommitted.iter().any(|(_, p)| !p.is_empty())
    }

    /// What needs a person's eye on the branch of `role`.
    pub fn report(&self, role: &str) -> Option<&gate::Report> {
        self.attention
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, report)| report)
    }

    /// The `--json` form of `git loop review ID`.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"id": self.rec.id, "title": self.rec.title});
        for role in ["code", "notes", "knowledge"] {
            v[role] = match self.status.branch(role) {
                Some(b) => json!({
                    "ahead": b.ahead,
                    "against": b.against,
                    "files": self.files.iter().find(|(r, _)| *r == role).map(|(_, f)| f.clone()).unwrap_or_default(),
                    "attention": self.report(role).map(gate::Report::to_json).unwrap_or_else(|| json!([])),
                }),
                None => Value::Null,
            };
        }
        let uncommitted: Vec<String> = self
            .uncommitted
            .iter()
            .flat_map(|(role, paths)| paths.iter().map(move |p| format!("{role}:{p}")))
            .collect();
        v["uncommitted"] = json!(uncommitted);
        v
    }
}

/// Imports what the loop wrote, then reads what it proposes: per branch ahead of its
/// target, the files it changes and what needs a person's eye (the gate's report); per
/// clone, its uncommitted paths (read as data, never by git on the host).
pub fn gather(
    ws: &Workspace,
    rec: LoopRecord,
    allow: &crate::guard::Allowlist,
) -> Result<Proposals> {
    loops::check_repo(ws, &rec)?;
    loops::import(ws, &rec)?;
    let status = loops::status(ws, &rec)?;
    let mut files = Vec::new();
    let mut attention = Vec::new();
    let mut uncommitted = Vec::new();
    for pair in loops::repo_pairs(ws, &rec) {
        let b = status.branch(pair.role);
        if let (Some(b), Some(target)) = (b, b.and_then(|b| b.against.clone())) {
            if b.ahead > 0 {
                // NUL-separated: the exact names, not git's quoting of unusual ones.
                let names = Git::in_dir(&pair.origin)
                    .args(["diff", "--no-ext-diff", "--name-only", "-z"])
                    .arg(format!("{target}...{}", rec.branch))
                    .output()?
                    .stdout;
                files.push((
                    pair.role,
                    names
                        .split(|&b| b == 0)
                        .filter(|n| !n.is_empty())
                        .map(|n| String::from_utf8_lossy(n).into_owned())
                        .collect(),
                ));
                let insp =
                    gate::inspect(&pair.origin, &rec.branch, &target, allow).map_err(|e| {
                        Error::failure(format!("cannot check what loop {} proposes", rec.id))
                            .with_source(e)
                    })?;
                attention.push((pair.role, insp.report));
            }
        }
        if pair.clone.join(".git").is_dir() {
            let changes = loops::worktree_changes(&pair)?;
            uncommitted.push((pair.role, changes));
        }
    }
    Ok(Proposals {
        rec,
        status,
        files,
        attention,
        uncommitted,
    })
}
