//! Proposing a loop's branch upstream: where it goes (the code's repository and base
//! branch, or the knowledge repository's trunk), the push of the commit the gate checked,
//! the pull request opened with `gh` or `glab` when they are logged in, its description,
//! and the forge's compare page otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::gate;
use crate::git::cmd::Git;
use crate::loops::{self, Kind, LoopRecord};
use crate::sandbox::probe::which;
use crate::terminal::shown;
use crate::workspace::Workspace;

/// Where a loop's proposal goes.
pub struct Target {
    /// The repository the branch is pushed from (the workspace's link to it).
    pub origin: PathBuf,
    /// The branch the pull request asks to merge into.
    pub base: String,
    /// "code" or "knowledge".
    pub what: &'static str,
}

/// Why a pull request cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum PrError {
    #[error("loop {0} started from a detached commit; no branch to open a pull request against")]
    Detached(String),
    #[error("loop {0} has no code or knowledge branch to propose")]
    NothingToPropose(String),
    /// The user's repository (`repo`, as they know it) has no remote.
    #[error("{} has no remote to push {branch} to", repo.display())]
    NoRemote { repo: PathBuf, branch: String },
    #[error("cannot push {branch} to {remote}")]
    Push {
        branch: String,
        remote: String,
        #[source]
        source: crate::git::cmd::GitError,
    },
    /// What the branch would propose against `base` of `origin` could not be judged.
    #[error("cannot check what loop {id} would propose")]
    Unchecked {
        id: String,
        base: String,
        origin: PathBuf,
        #[source]
        source: gate::GateError,
    },
    /// The forge's tool (`tool`) failed; the branch is pushed, `url` is where to open it.
    #[error("{tool} could not open the pull request")]
    Open { tool: String, url: String },
}

/// Proposes loop `rec`'s branch: checked by the gate (`allow`: the operator's guard
/// allowlist), pushed to the remote, and the pull request opened with `gh` or `glab`
/// when one is logged in; otherwise the compare URL is the result. What the gate refused
/// is written to `report` line by line before the error.
pub fn propose(
    report: &mut dyn crate::report::Report,
    ws: &Workspace,
    rec: &LoopRecord,
    allow: &crate::guard::Allowlist,
    draft: bool,
) -> Result<()> {
    let id = &rec.id;
    let Target { origin, base, what } = target(ws, rec)?;
    // What the loop wrote is read before the workspace lock is taken.
    loops::import(ws, rec)?;
    let insp = {
        let _lock = crate::fsutil::Lock::acquire(&ws.workspace_lock())?;
        gate::inspect(&origin, &rec.branch, &base, allow).map_err(|source| PrError::Unchecked {
            id: id.clone(),
            base: base.clone(),
            origin: origin.clone(),
            source,
        })?
    };
    let retry = format!("git loop pr {id}");
    if let Some(e) = gate::refusal(report, "pr", id, &[(what, &insp.report)], &[], &retry)? {
        return Err(e);
    }
    let (remote, url) = push(&origin, rec, &insp)?;
    report.status(&format!("pushed {} ({what}) to {remote}", rec.branch))?;
    let body = body(&origin, rec, &base, &insp);
    if open(&origin, &url, rec, &base, &body, draft)? {
        return Ok(());
    }
    report.result(&match compare_url(&url, &base, &rec.branch) {
        Some(u) => shown(&u).to_string(),
        None => format!(
            "open a pull request from {} into {} on {}",
            shown(&rec.branch),
            shown(&base),
            shown(&url)
        ),
    })?;
    Ok(())
}

/// The repository and base branch of `rec`'s proposal: its code against the branch it
/// started from, or a distill loop's knowledge against the knowledge trunk.
pub fn target(ws: &Workspace, rec: &LoopRecord) -> Result<Target> {
    let id = &rec.id;
    match (rec.kind, &rec.repo) {
        (Kind::Code, Some(repo)) => {
            loops::check_repo(ws, rec)?;
            let base = rec
                .base_branch
                .clone()
                .ok_or_else(|| PrError::Detached(id.clone()))?;
            Ok(Target {
                origin: ws.repo_link(repo),
                base,
                what: "code",
            })
        }
        (Kind::Distill, _) => {
            let repo = crate::git::objects::open_trusted(&ws.knowledge()).map_err(|e| {
                Error::failure("cannot read the knowledge repository").with_source(e)
            })?;
            let trunk = crate::git::objects::head_branch(&repo)
                .ok()
                .flatten()
                .unwrap_or_else(|| "main".into());
            Ok(Target {
                origin: ws.knowledge(),
                base: trunk,
                what: "knowledge",
            })
        }
        _ => Err(PrError::NothingToPropose(id.clone()).into()),
    }
}

/// Pushes the commit the gate checked (`insp.source`, whatever the branch says by now) to
/// `rec`'s branch on the origin's remote (`origin`, else its first), with the user's own
/// git in their repository: their credentials and hooks apply. Returns the remote's name
/// and URL.
pub fn push(origin: &Path, rec: &LoopRecord, insp: &gate::Inspection) -> Result<(String, String)> {
    let remote = Git::in_dir(origin).args(["remote"]).read()?;
    let remote = remote
        .lines()
        .find(|r| *r == "origin")
        .or_else(|| remote.lines().next())
        .map(str::to_string)
        .ok_or_else(|| {
            // The user's own repository, not the workspace's link to it.
            let real = std::fs::canonicalize(origin).unwrap_or_else(|_| origin.to_path_buf());
            PrError::NoRemote {
                repo: real,
                branch: rec.branch.clone(),
            }
        })?;
    Git::in_dir(origin)
        .args(["push", "--quiet", &remote])
        .arg(format!("{}:refs/heads/{}", insp.source, rec.branch))
        .run()
        .map_err(|source| PrError::Push {
            branch: rec.branch.clone(),
            remote: remote.clone(),
            source,
        })?;
    let url = Git::in_dir(origin)
        .args(["remote", "get-url", &remote])
        .read()?
        .trim()
        .to_string();
    Ok((remote, url))
}

/// The pull request's title.
pub fn title(rec: &LoopRecord) -> String {
    if rec.kind == Kind::Distill {
        format!("Distill notes into knowledge: {}", rec.title)
    } else {
        rec.title.clone()
    }
}

/// Opens the pull request with `gh` or `glab` (the forge's own first), whichever is
/// installed and logged in; `Ok(false)` when neither is, and the caller shows the compare
/// page. A tool that fails is an error whose hint is the page to open by hand.
pub fn open(
    origin: &Path,
    url: &str,
    rec: &LoopRecord,
    base: &str,
    body: &str,
    draft: bool,
) -> Result<bool> {
    let title = title(rec);
    let path = std::env::var("PATH").unwrap_or_default();
    let tools = if url.contains("gitlab") {
        ["glab", "gh"]
    } else {
        ["gh", "glab"]
    };
    for t in tools {
        if which(t, &path).is_none() || !logged_in(t, origin) {
            continue;
        }
        let mut cmd = Command::new(t);
        cmd.current_dir(origin).stdin(Stdio::null());
        if t == "gh" {
            cmd.args([
                "pr",
                "create",
                "--head",
                &rec.branch,
                "--base",
                base,
                "--title",
                &title,
                "--body",
                body,
            ]);
        } else {
            cmd.args([
                "mr",
                "create",
                "--source-branch",
                &rec.branch,
                "--target-branch",
                base,
                "--title",
                &title,
                "--description",
                body,
                "--yes",
            ]);
        }
        if draft {
            cmd.arg("--draft");
        }
        let status = cmd
            .status()
            .map_err(|e| Error::failure(format!("cannot run {t}")).with_source(e))?;
        if !status.success() {
            return Err(PrError::Open {
                tool: t.to_string(),
                url: compare_url(url, base, &rec.branch).unwrap_or(url.to_string()),
            }
            .into());
        }
        return Ok(true);
    }
    Ok(false)
}

/// The pull request's description: where it comes from, its commits, what it changes, and
/// what the review says needs a person's eye.
pub fn body(origin: &Path, rec: &LoopRecord, base: &str, insp: &gate::Inspection) -> String {
    let range = format!("{base}..{}", insp.source);
    let mut body = format!(
        "From git loop `{}` (`{}`): {}\n",
        rec.id, rec.branch, rec.title
    );
    if let Ok(log) = Git::in_dir(origin)
        .args(["log", "--no-color", "--format=- %h %s", &range])
        .read()
    {
        if !log.trim().is_empty() {
            body.push_str("\n## Commits\n\n");
            body.push_str(&log);
        }
    }
    if let Ok(stat) = Git::in_dir(origin)
        .args(["diff", "--no-color", "--no-ext-diff", "--stat"])
        .arg(format!("{base}...{}", insp.source))
        .read()
    {
        if !stat.trim().is_empty() {
            body.push_str("\n## Changes\n\n```\n");
            body.push_str(&stat);
            body.push_str("```\n");
        }
    }
    if !insp.report.items.is_empty() {
        body.push_str("\n## Needs a person's eye\n\n");
        for item in &insp.report.items {
            body.push_str(&format!("- {}\n", item.line()));
        }
    }
    body
}

fn logged_in(tool: &str, dir: &Path) -> bool {
    Command::new(tool)
        .args(["auth", "status"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The forge's page for opening a pull request, from the remote URL (https or scp-like ssh).
pub fn compare_url(remote: &str, base: &str, branch: &str) -> Option<String> {
    let trimmed = remote.trim_end_matches('/').trim_end_matches(".git");
    let (host, path) = if let Some(rest) = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
    {
        let rest = rest.rsplit_once('@').map(|(_, r)| r).unwrap_or(rest);
        rest.split_once('/')?
    } else if let Some(rest) = trimmed.strip_prefix("ssh://") {
        let rest = rest.rsplit_once('@').map(|(_, r)| r).unwrap_or(rest);
        let (host, path) = rest.split_once('/')?;
        (host.split(':').next()?, path)
    } else {
        let (user_host, path) = trimmed.split_once(':')?;
        (
            user_host
                .rsplit_once('@')
                .map(|(_, h)| h)
                .unwrap_or(user_host),
            path,
        )
    };
    if host.contains("gitlab") {
        Some(format!("https://{host}/{path}/-/merge_requests/new?merge_request%5Bsource_branch%5D={branch}&merge_request%5Btarget_branch%5D={base}"))
    } else if host.contains('.') {
        Some(format!(
            "https://{host}/{path}/compare/{base}...{branch}?expand=1"
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::compare_url;

    #[test]
    fn compare_urls() {
        assert_eq!(
            compare_url("git@github.com:o/r.git", "main", "loop/x-1").unwrap(),
            "https://github.com/o/r/compare/main...loop/x-1?expand=1"
        );
        assert_eq!(
            compare_url("https://github.com/o/r", "main", "loop/x-1").unwrap(),
            "https://github.com/o/r/compare/main...loop/x-1?expand=1"
        );
        assert!(compare_url("https://gitlab.com/g/p.git", "main", "loop/x")
            .unwrap()
            .contains("/-/merge_requests/new"));
        assert_eq!(compare_url("/srv/git/r.git", "main", "loop/x"), None);
    }
}
