use std::path::Path;
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::git::cmd::Git;
use crate::loops::{self, LoopRecord};
use crate::ui::Ui;
use crate::workspace::Workspace;

/// Commit every dirty repository of the named loops (inside each loop's sandbox) and the
/// personal repository.
///
/// A repository in the middle of a merge or rebase, or with a live index.lock, is skipped
/// and reported. Files the secret guard rejects are never committed. Holds the workspace
/// lock; imports afterwards.
#[derive(Debug, clap::Args)]
pub struct AutocommitArgs {
    /// Loops to commit (ids or unique prefixes).
    #[arg(conflicts_with = "all")]
    pub ids: Vec<String>,
    /// Every loop.
    #[arg(long)]
    pub all: bool,
    /// Then publish the notes branches that merge cleanly.
    #[arg(long)]
    pub publish_notes: bool,
}

/// Why a repository is left alone this time.
fn busy(git_dir: &Path) -> Option<&'static str> {
    let checks: [(&str, &'static str); 6] = [
        ("MERGE_HEAD", "a merge is in progress"),
        ("rebase-merge", "a rebase is in progress"),
        ("rebase-apply", "a rebase or am is in progress"),
        ("CHERRY_PICK_HEAD", "a cherry-pick is in progress"),
        ("REVERT_HEAD", "a revert is in progress"),
        (
            "index.lock",
            "index.lock exists (a git command of a live run of the loop holds it)",
        ),
    ];
    checks
        .into_iter()
        .find(|(name, _)| git_dir.join(name).symlink_metadata().is_ok())
        .map(|(_, why)| why)
}

/// The commit message: how many paths, then each.
fn message(paths: &[String]) -> String {
    let mut m = format!(
        "autocommit: {} changed path{}\n\n",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" }
    );
    for p in paths.iter().take(200) {
        m.push_str(&format!("- {p}\n"));
    }
    if paths.len() > 200 {
        m.push_str(&format!("- ... and {} more\n", paths.len() - 200));
    }
    m
}

/// Paths whose content the secret guard rejects (read from the host confined: no link
/// followed, nothing waited on, and no more than the gate scans; the files are the agent's).
fn rejected(dir: &Path, paths: &[String]) -> Vec<(String, String)> {
    use crate::confined::{ConfinedError, Tree};
    let Ok(Some(tree)) = Tree::open(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in paths {
        let bytes = match tree.read(p, crate::gate::SCAN_LIMIT) {
            Ok(Some(bytes)) => bytes,
            // Too large to scan is too large to let through, as on the way out.
            Err(ConfinedError::TooLarge { size, .. }) => {
                out.push((
                    p.clone(),
                    format!("{size} bytes, too large to scan for secrets"),
                ));
                continue;
            }
            _ => continue,
        };
        if let Some(finding) = crate::guard::check(p, 0o100644, &bytes).into_iter().next() {
            out.push((p.clone(), finding.to_string()));
        }
    }
    out
}

pub fn run(ui: &mut Ui, args: AutocommitArgs) -> Result<u8> {
    let ws = super::workspace()?;
    if !args.all && args.ids.is_empty() {
        return Err(
            Error::usage("name the loops to commit, or --all").hint("git loop autocommit --all")
        );
    }
    let ids = if args.all {
        ws.loop_ids()?
    } else {
        args.ids
            .iter()
            .map(|q| loops::resolve(&ws, q))
            .collect::<Result<Vec<_>>>()?
    };
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    let mut failures = 0;
    for id in &ids {
        let rec = match loops::load(&ws, id) {
            Ok(r) => r,
            Err(e) => {
                ui.warn(format!("{id}: skipped: {}", e.one_line()))?;
                continue;
            }
        };
        if let Err(e) = commit_loop(ui, &ws, &rec) {
            failures += 1;
            ui.warn(format!("{id}: {}", e.one_line()))?;
        }
    }
    commit_personal(ui, &ws)?;
    if args.publish_notes {
        for id in &ids {
            let Ok(rec) = loops::load(&ws, id) else {
                continue;
            };
            match super::publish::publish_one(&ws, &ws.notes(), &rec, "notes", None, false) {
                Ok((trunk, outcome)) => {
                    if outcome != crate::publish::Outcome::UpToDate {
                        super::publish::report(
                            ui,
                            &format!("{id} notes"),
                            &trunk,
                            &outcome,
                            false,
                        )?;
                    }
                }
                Err(e) => ui.warn(format!("{id}: notes not published: {}", e.one_line()))?,
            }
        }
    }
    if failures > 0 {
        // Never a quiet success: cron's log keeps this line, and the exit status tells.
        return Err(Error::failure(format!(
            "{failures} loop{} could not be committed",
            if failures == 1 { "" } else { "s" }
        ))
        .hint("the warnings above say why for each; the rest was committed"));
    }
    Ok(0)
}

fn commit_loop(ui: &mut Ui, ws: &Workspace, rec: &LoopRecord) -> Result<()> {
    loops::check_repo(ws, rec)?;
    // A git lock file that no live run of the loop can own is a leftover of a killed git
    // (a run or an earlier autocommit killed mid-commit): removed, and said so.
    if let Some(stale) = loops::stale_git_locks(ws, rec)? {
        for (path, e) in stale.remove() {
            ui.warn(format!("cannot remove the stale {}: {e}", path.display()))?;
        }
        for path in &stale.files {
            ui.status(format!(
                "{}: removed the stale {} (no run of the loop is alive to own it)",
                rec.id,
                path.display()
            ))?;
        }
    }
    let mut skipped = Vec::new();
    for pair in loops::repo_pairs(ws, rec) {
        let git_dir = pair.clone_git_dir();
        if !git_dir.is_dir() {
            continue;
        }
        if let Some(why) = busy(&git_dir) {
            ui.warn(format!("{} {}: not committed, {why}", rec.id, pair.role))?;
            skipped.push(pair.role);
            continue;
        }
        let changes = loops::worktree_changes(&pair)?;
        if changes.is_empty() {
            continue;
        }
        let refused = rejected(&pair.clone, &changes);
        for (path, why) in &refused {
            ui.warn(format!(
                "{} {}: not committing {path}: {why}",
                rec.id, pair.role
            ))?;
        }
        let paths: Vec<String> = changes
            .iter()
            .filter(|p| !refused.iter().any(|(r, _)| r == *p))
            .cloned()
            .collect();
        if paths.is_empty() {
            continue;
        }
        let inside = crate::sandbox::spec::repo_inside(&rec.id, pair.role)
            .display()
            .to_string();
        // git runs inside the loop's sandbox: the repository's hooks and config are the
        // agent's. Paths and the message are arguments, never part of a shell string.
        let script = "d=$1; m=$2; shift 2; \
                      git -C \"$d\" add -A -- \"$@\" && \
                      git -C \"$d\" -c user.name='git loop' -c user.email=git-loop@localhost commit -q -m \"$m\" -- \"$@\"";
        let status = Command::new(std::env::current_exe()?)
            .args([
                "run",
                "-q",
                "--net",
                "none",
                &rec.id,
                "--",
                "sh",
                "-c",
                script,
                "autocommit",
                &inside,
            ])
            .arg(message(&paths))
            .args(paths.iter().map(|p| format!(":(literal){p}")))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(Error::failure(format!(
                "the commit in the {} repository failed (exit {})",
                pair.role,
                status.code().unwrap_or(-1)
            ))
            .hint(format!("look with `git loop shell {}`", rec.id)));
        }
        ui.status(format!(
            "{} {}: committed {} path{}",
            rec.id,
            pair.role,
            paths.len(),
            if paths.len() == 1 { "" } else { "s" }
        ))?;
    }
    // Imported whether or not anything was committed now: the agent may have committed
    // itself since the last import.
    loops::import(ws, rec)?;
    if !skipped.is_empty() {
        return Err(Error::failure(format!(
            "the {} repository of loop {} was not committed",
            skipped.join(" and "),
            rec.id
        ))
        .hint(format!(
            "finish or abort what is in progress with `git loop shell {}`",
            rec.id
        )));
    }
    Ok(())
}

/// The personal repository is the user's own: git runs on the host, with its hooks (the
/// secret guard among them).
fn commit_personal(ui: &mut Ui, ws: &Workspace) -> Result<()> {
    let dir = ws.personal();
    if busy(&dir.join(".git")).is_some() {
        ui.status("personal: skipped, a git operation is in progress")?;
        return Ok(());
    }
    let status = Git::in_dir(&dir)
        .args(["status", "--porcelain", "-z", "--untracked-files=all"])
        .read()?;
    let mut paths: Vec<String> = status
        .split('\0')
        .filter(|e| e.len() > 3)
        .map(|e| e[3..].to_string())
        .collect();
    paths.retain(|p| !p.is_empty());
    // Renames in -z output are followed by the old path as its own entry; harmless here.
    if paths.is_empty() {
        return Ok(());
    }
    let refused = rejected(&dir, &paths);
    for (path, why) in &refused {
        ui.warn(format!("personal: not committing {path}: {why}"))?;
    }
    let paths: Vec<String> = paths
        .into_iter()
        .filter(|p| !refused.iter().any(|(r, _)| r == p))
        .collect();
    if paths.is_empty() {
        return Ok(());
    }
    let literal: Vec<String> = paths.iter().map(|p| format!(":(literal){p}")).collect();
    Git::in_dir(&dir)
        .args(["add", "-A", "--"])
        .args(&literal)
        .run()?;
    crate::init::scaffold_identity(Git::in_dir(&dir))
        .args(["commit", "-q", "-m", &message(&paths), "--"])
        .args(&literal)
        .run()?;
    ui.status(format!(
        "personal: committed {} path{}",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" }
    ))?;
    Ok(())
}
