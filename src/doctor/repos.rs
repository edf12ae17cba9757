//! The workspace itself: its file system, the repositories it links to, its loops.

use crate::error::Result;
use crate::git::objects;
use crate::loops::{self, LoopRecord};
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

/// The workspace's file system: a read-only or full one makes every command that changes
/// the workspace fail, whatever else is found, and no fix can be applied. Returns whether
/// the workspace can be written.
pub(super) fn check_storage(ws: &Workspace, out: &mut Vec<Finding>) -> bool {
    use nix::sys::statvfs::{statvfs, FsFlags};
    let root = ws.root();
    let stat = statvfs(root).ok();
    let read_only = stat
        .as_ref()
        .is_some_and(|s| s.flags().contains(FsFlags::ST_RDONLY));
    // A write tells what statvfs may not (a read-only bind mount, a quota).
    let probe = ws
        .locks_dir()
        .join(format!(".doctor-probe-{}", std::process::id()));
    let written =
        std::fs::write(&probe, b"x").and_then(|()| std::fs::File::open(&probe)?.sync_all());
    let _ = std::fs::remove_file(&probe);
    let errno = written.as_ref().err().and_then(|e| e.raw_os_error());
    if read_only || errno == Some(libc::EROFS) {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("the workspace {} is on a read-only file system: every command that changes it fails, and nothing can be fixed now", root.display()),
            Some("remount it read-write (or set GIT_LOOP_HOME to a writable copy), then run `git loop doctor` again".into()),
        ));
        return false;
    }
    let free = stat.map(|s| s.blocks_available() * s.fragment_size());
    if errno == Some(libc::ENOSPC) || errno == Some(libc::EDQUOT) || free == Some(0) {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("the file system holding the workspace {} is full: commands that write to it fail, and nothing can be fixed now", root.display()),
            Some("free some space there, then run `git loop doctor` again".into()),
        ));
        return false;
    }
    if let Err(e) = written {
        out.push(finding(
            "storage",
            Level::Problem,
            format!("cannot write in {}: {e}", ws.locks_dir().display()),
            Some("check the folder's owner and permissions".into()),
        ));
        return false;
    }
    true
}

/// Registered repositories whose link no longer leads to them (the repository moved, or
/// the workspace was copied to another folder or machine): with `fix`, relinked to the
/// one found in the user's usual places by its remote URL or folder name.
pub(super) fn check_repos(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let places = crate::repos::usual_places();
    for name in ws.repo_names().unwrap_or_default() {
        let Err(e) = crate::repos::check_link(ws, &name) else {
            continue;
        };
        let link = ws.repo_link(&name);
        let manual = format!(
            "move the repository back, or `ln -sfn NEW-PATH {}`",
            link.display()
        );
        if !fix {
            out.push(finding(
                "repos",
                Level::Problem,
                e.message.clone(),
                Some(format!("`git loop doctor --fix` looks for it; or {manual}")),
            ));
            continue;
        }
        match crate::repos::find_moved(ws, &name, &places).and_then(|top| {
            crate::repos::relink(ws, &name, &top)
                .map(|()| top)
                .map_err(|e| e.one_line())
        }) {
            Ok(top) => out.push(finding(
                "repos",
                Level::Fixed,
                format!("repository '{name}' relinked to {}", top.display()),
                None,
            )),
            Err(why) => out.push(finding(
                "repos",
                Level::Problem,
                format!("{}; {why}", e.message),
                Some(manual),
            )),
        }
    }
}

pub(super) fn check_loops(ws: &Workspace, out: &mut Vec<Finding>) -> Result<()> {
    let notes = objects::open_trusted(&ws.notes()).ok();
    for id in ws.loop_ids()? {
        let rec = match loops::load(ws, &id) {
            Ok(rec) => rec,
            Err(e) => {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    e.one_line(),
                    Some(format!(
                        "fix {} by hand, or `git loop rm --force {id}`",
                        ws.loop_record(&id).display()
                    )),
                ));
                continue;
            }
        };
        check_grants(&rec, out);
        for pair in loops::repo_pairs(ws, &rec) {
            if !pair.clone.join(".git").is_dir() {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    format!(
                        "loop {id}: its {} repository {} is missing",
                        pair.role,
                        pair.clone.display()
                    ),
                    Some(format!(
                        "`git loop rm --force {id}` (its branches stay in the origins)"
                    )),
                ));
                continue;
            }
            if pair.role == "code"
                && crate::repos::check_link(ws, rec.repo.as_deref().unwrap_or("")).is_err()
            {
                continue; // reported by check_repos
            }
            let has_branch = objects::open_trusted(&pair.origin)
                .ok()
                .and_then(|r| objects::resolve_branch(&r, &rec.branch).ok().flatten())
                .is_some();
            if !has_branch {
                out.push(finding(
                    "loops",
                    Level::Problem,
                    format!(
                        "loop {id}: branch {} is missing in {}",
                        rec.branch,
                        pair.origin.display()
                    ),
                    Some(format!(
                        "`git loop list` imports it again from the loop's own repository {}",
                        pair.clone.display()
                    )),
                ));
            }
        }
    }
    if notes.is_some() {
        for id in loops::removed_ids(ws).unwrap_or_default() {
            out.push(finding(
                "loops",
                Level::Info,
                format!(
                    "branch {} has no loop folder (removed, or its folder deleted by hand)",
                    LoopRecord::branch_name(&id)
                ),
                Some(format!(
                    "nothing to do if it was removed on purpose; `git branch -d {}` in the origins deletes the branch once merged",
                    LoopRecord::branch_name(&id)
                )),
            ));
        }
    }
    Ok(())
}

/// Each grant of loop `rec` whose path is gone (runs go on without it) or is no longer
/// what was granted (runs refuse), with the command that removes it.
fn check_grants(rec: &loops::LoopRecord, out: &mut Vec<Finding>) {
    let id = &rec.id;
    for grant in &rec.grants {
        let path = grant.path.display();
        let revoke = format!("git loop grant {id} --revoke {path}");
        match std::fs::symlink_metadata(&grant.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => out.push(finding(
                "loops",
                Level::Problem,
                format!("loop {id}: the grant {path} is missing (runs go on without it)"),
                Some(revoke),
            )),
            Err(e) => out.push(finding(
                "loops",
                Level::Problem,
                format!("loop {id}: the grant {path} cannot be looked at: {e}"),
                Some(revoke),
            )),
            Ok(meta) => {
                let moved = grant
                    .source
                    .is_some_and(|was| !was.same(&loops::GrantSource::of(&meta)));
                if moved {
                    out.push(finding(
                        "loops",
                        Level::Problem,
                        format!(
                            "loop {id}: the grant {path} is not what was granted any more (runs refuse it)"
                        ),
                        Some(format!(
                            "{revoke}, or if what is there now is right: git loop grant {id} --{} {path}",
                            grant.mode
                        )),
                    ));
                }
            }
        }
    }
}
