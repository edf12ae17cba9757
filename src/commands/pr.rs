use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::gate;
use crate::git::cmd::Git;
use crate::loops::{self, Kind};
use crate::sandbox::probe::which;
use crate::terminal::shown;
use crate::ui::Ui;

/// Push a loop's branch to the remote and open a pull request.
///
/// Code loops push loop/<id> to the remote of the repository they came from; distill loops
/// push their knowledge branch to the knowledge remote ("distilling notes into knowledge
/// via pull request"). With `gh` or `glab` installed and logged in, the pull request is
/// opened; otherwise the compare URL is printed.
///
/// First, every commit the branch carries is scanned with the secret guard's rules, and a
/// gitlink or a nested .git is refused: a refusal says what and where, and pushes nothing.
#[derive(Debug, clap::Args)]
pub struct PrArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Open the pull request as a draft.
    #[arg(long)]
    pub draft: bool,
}

pub fn run(ui: &mut Ui, args: PrArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let (origin, base, what) = match (rec.kind, &rec.repo) {
        (Kind::Code, Some(repo)) => {
            loops::check_repo(&ws, &rec)?;
            let base = rec.base_branch.clone().ok_or_else(|| {
                Error::usage(format!("loop {id} started from a detached commit; no branch to open a pull request against"))
                    .hint("merge it locally with `git loop merge ID --into BRANCH`")
            })?;
            (ws.repo_link(repo), base, "code")
        }
        (Kind::Distill, _) => {
            let repo = crate::git::objects::open_trusted(&ws.knowledge()).map_err(|e| {
                Error::failure("cannot read the knowledge repository").with_source(e)
            })?;
            let trunk = crate::git::objects::head_branch(&repo)
                .ok()
                .flatten()
                .unwrap_or_else(|| "main".into());
            (ws.knowledge(), trunk, "knowledge")
        }
        _ => {
            return Err(Error::usage(format!(
                "loop {id} has no code or knowledge branch to propose"
            ))
            .hint("publish its notes with `git loop publish`"))
        }
    };
    let allow = super::operator_guard_allowlist()?;
    // What the loop wrote is read before the workspace lock is taken.
    loops::import(&ws, &rec)?;
    let insp = {
        let _lock = Lock::acquire(&ws.workspace_lock())?;
        gate::inspect(&origin, &rec.branch, &base, &allow).map_err(|e| {
            Error::failure(format!("cannot check what loop {id} would propose"))
                .with_source(e)
                .hint(format!("is {base} a branch of {}?", origin.display()))
        })?
    };
    let retry = format!("git loop pr {id}");
    if let Some(e) = gate::refusal(ui.err(), "pr", &id, &[(what, &insp.report)], &[], &retry)? {
        return Err(e);
    }
    let remote = Git::in_dir(&origin).args(["remote"]).read()?;
    let remote = remote
        .lines()
        .find(|r| *r == "origin")
        .or_else(|| remote.lines().next())
        .map(str::to_string)
        .ok_or_else(|| {
            // The user's own repository, not the workspace's link to it.
            let real = std::fs::canonicalize(&origin).unwrap_or_else(|_| origin.clone());
            Error::failure(format!(
                "{} has no remote to push {} to",
                real.display(),
                rec.branch
            ))
            .hint(format!(
                "add one: git -C {} remote add origin URL",
                real.display()
            ))
        })?;
    // Pushed by the user's own git in their repository: their credentials and hooks apply.
    // The commit pushed is the one scanned, whatever the branch says by now.
    Git::in_dir(&origin)
        .args(["push", "--quiet", &remote])
        .arg(format!("{}:refs/heads/{}", insp.source, rec.branch))
        .run()
        .map_err(|e| {
            Error::failure(format!("cannot push {} to {remote}", rec.branch))
                .with_source(e)
                .hint("check your access to the remote, then run `git loop pr` again")
        })?;
    ui.status(format!("pushed {} ({what}) to {remote}", rec.branch))?;
    let url = Git::in_dir(&origin)
        .args(["remote", "get-url", &remote])
        .read()?
        .trim()
        .to_string();
    let title = if rec.kind == Kind::Distill {
        format!("Distill notes into knowledge: {}", rec.title)
    } else {
        rec.title.clone()
    };
    let body = pr_body(&origin, &rec, &base, &insp);
    let path = std::env::var("PATH").unwrap_or_default();
    let tool = if url.contains("gitlab") {
        ["glab", "gh"]
    } else {
        ["gh", "glab"]
    };
    for t in tool {
        if which(t, &path).is_none() || !logged_in(t, &origin) {
            continue;
        }
        let mut cmd = Command::new(t);
        cmd.current_dir(&origin).stdin(Stdio::null());
        if t == "gh" {
            cmd.args([
                "pr",
                "create",
                "--head",
                &rec.branch,
                "--base",
                &base,
                "--title",
                &title,
                "--body",
                &body,
            ]);
        } else {
            cmd.args([
                "mr",
                "create",
                "--source-branch",
                &rec.branch,
                "--target-branch",
                &base,
                "--title",
                &title,
                "--description",
                &body,
                "--yes",
            ]);
        }
        if args.draft {
            cmd.arg("--draft");
        }
        let status = cmd
            .status()
            .map_err(|e| Error::failure(format!("cannot run {t}")).with_source(e))?;
        if !status.success() {
            return Err(
                Error::failure(format!("{t} could not open the pull request")).hint(format!(
                    "the branch is pushed; open it by hand: {}",
                    compare_url(&url, &base, &rec.branch).unwrap_or(url.clone())
                )),
            );
        }
        return Ok(0);
    }
    match compare_url(&url, &base, &rec.branch) {
        Some(u) => writeln!(ui.out(), "{}", shown(&u))?,
        None => writeln!(
            ui.out(),
            "open a pull request from {} into {} on {}",
            shown(&rec.branch),
            shown(&base),
            shown(&url)
        )?,
    }
    Ok(0)
}

/// The pull request's description: where it comes from, its commits, what it changes, and
/// what the review says needs a person's eye.
fn pr_body(
    origin: &std::path::Path,
    rec: &crate::loops::LoopRecord,
    base: &str,
    insp: &gate::Inspection,
) -> String {
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

fn logged_in(tool: &str, dir: &std::path::Path) -> bool {
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
