//! The personal repository: the merge and the checkout in a jail that sees only its tree.
//!
//! The checkout is updated first and the branch moved after, each step idempotent, with a
//! journal (`locks/sync-personal.journal`: the old and new commits) written before and
//! removed after. Killed in between, the index and files already are the new commit's
//! while the branch is still at the old one: the next sync or autocommit (both hold the
//! autocommit lock) runs both steps again before anything else, so no commit made there
//! can revert what was merged.

use super::*;

const JOURNAL: &str = "sync-personal.journal";

fn journal(ws: &Workspace) -> PathBuf {
    ws.locks_dir().join(JOURNAL)
}

fn in_jail(ws: &Workspace, args: &[&str]) -> Result<task::Output, SyncError> {
    let dir = ws.personal();
    task::jail(&task::Jail {
        tree: dir,
        inside: task::inside("personal"),
        command: task::git_argv(args),
        env: task::git_env(("git loop", "git-loop@localhost")),
        bound: task::Bound::DEFAULT,
    })
    .map_err(|e| SyncError::Other {
        role: "personal",
        message: e.one_line(),
    })
}

fn step(ws: &Workspace, args: &[&str]) -> Result<String, SyncError> {
    let out = in_jail(ws, args)?;
    if !out.success() {
        return Err(SyncError::Other {
            role: "personal",
            message: format!(
                "`git {}` failed: {}",
                args.join(" "),
                last_line(&out.stderr_text())
            ),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The two idempotent steps: the checkout from `old` to `new`, then the branch.
fn apply(ws: &Workspace, trunk: &str, old: ObjectId, new: ObjectId) -> Result<(), SyncError> {
    let (o, n) = (old.to_string(), new.to_string());
    step(ws, &["read-tree", "-m", "-u", &o, &n])?;
    crate::failpoint::hit("sync:personal-checkout");
    step(
        ws,
        &[
            "update-ref",
            "-m",
            "git loop sync",
            &format!("refs/heads/{trunk}"),
            &n,
            &o,
        ],
    )?;
    Ok(())
}

pub fn finish(ws: &Workspace) -> Result<Vec<String>, SyncError> {
    let path = journal(ws);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Vec::new());
    };
    let fields: Vec<&str> = text.split_whitespace().collect();
    let parsed = match fields.as_slice() {
        [trunk, old, new] => ObjectId::from_hex(old.as_bytes())
            .ok()
            .zip(ObjectId::from_hex(new.as_bytes()).ok())
            .map(|(o, n)| (trunk.to_string(), o, n)),
        _ => None,
    };
    let Some((trunk, old, new)) = parsed else {
        let _ = std::fs::remove_file(&path);
        return Ok(vec![format!(
            "personal: removed an unreadable journal {}",
            path.display()
        )]);
    };
    let dir = ws.personal();
    let head = resolve(&dir, &format!("refs/heads/{trunk}")).map_err(read_err(Role::Personal))?;
    let note = if head == Some(new) {
        // Both steps were done; only the journal was left.
        None
    } else if head == Some(old) {
        apply(ws, &trunk, old, new)?;
        Some(format!(
            "personal: finished an interrupted sync ({trunk} moved to {})",
            &new.to_string()[..12]
        ))
    } else {
        return Err(SyncError::Other {
            role: "personal",
            message: format!(
                "an interrupted sync left {} but {trunk} is neither where it was nor where it was going",
                path.display()
            ),
        });
    };
    let _ = std::fs::remove_file(&path);
    Ok(note.into_iter().collect())
}

pub fn integrate(
    ws: &Workspace,
    dir: &Path,
    trunk: &str,
    local: ObjectId,
    remote: ObjectId,
    dry_run: bool,
) -> Result<(Pulled, ObjectId, Vec<String>), Integrate> {
    let failed = Integrate::Failed;
    let ff = ancestor(dir, local, remote).map_err(|e| failed(read_err(Role::Personal)(e)))?;
    let (pulled, new) = if ff {
        (Pulled::FastForward, remote)
    } else {
        let (l, r) = (local.to_string(), remote.to_string());
        let out = in_jail(
            ws,
            &[
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                &l,
                &r,
            ],
        )
        .map_err(failed)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let tree = lines.next().unwrap_or_default().trim().to_string();
        match out.code {
            Some(0) => {}
            Some(1) => {
                return Err(Integrate::Conflict(
                    lines
                        .filter(|l| !l.is_empty())
                        .map(str::to_string)
                        .collect(),
                ))
            }
            _ => {
                return Err(failed(SyncError::Other {
                    role: "personal",
                    message: format!("the merge failed: {}", last_line(&out.stderr_text())),
                }))
            }
        }
        let message = format!("Merge {REMOTE}/{trunk} into {trunk} (git loop sync)");
        let commit = step(
            ws,
            &["commit-tree", &tree, "-p", &l, "-p", &r, "-m", &message],
        )
        .map_err(failed)?;
        let new = ObjectId::from_hex(commit.trim().as_bytes()).map_err(|_| {
            failed(SyncError::Other {
                role: "personal",
                message: format!("unexpected output of commit-tree: {commit:?}"),
            })
        })?;
        (Pulled::Merge, new)
    };
    if dry_run {
        return Ok((pulled, new, Vec::new()));
    }
    // Refuses before anything moves when files here would be overwritten.
    let (o, n) = (local.to_string(), new.to_string());
    let check = in_jail(ws, &["read-tree", "-m", "-u", "-n", &o, &n]).map_err(failed)?;
    if !check.success() {
        return Err(failed(SyncError::Other {
            role: "personal",
            message: format!(
                "files of the personal repository that are not committed would be overwritten: {}",
                last_line(&check.stderr_text())
            ),
        }));
    }
    let path = journal(ws);
    crate::fsutil::write_atomic(&path, format!("{trunk} {local} {new}\n").as_bytes()).map_err(
        |e| {
            failed(SyncError::Other {
                role: "personal",
                message: format!("cannot write {}: {}", path.display(), e.one_line()),
            })
        },
    )?;
    apply(ws, trunk, local, new).map_err(failed)?;
    let _ = std::fs::remove_file(&path);
    Ok((pulled, new, Vec::new()))
}
