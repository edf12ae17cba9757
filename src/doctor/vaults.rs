//! The vaults: what killed commands left in their repository (judged by its owner, as
//! `vault::recover` judges it), vaults still in the personal repository, the secret guard,
//! and each vault as the person would want to hear about it: recipients changed by sync and
//! waiting for a decision, a vault never accepted here, entries skipped because they are not
//! as git-loop writes them. Nothing here decrypts anything.

use crate::vault::{self, recover, Decision, Vault};
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

const CHECK: &str = "vaults";

pub(super) fn check_vaults(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    leftovers(ws, fix, out);
    git_locks(ws, fix, out);
    legacy(ws, fix, out);
    guard(ws, fix, out);
    each_vault(ws, out);
}

fn leftovers(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    if fix {
        let mut said = recover::remove_dead_writes(ws);
        said.extend(vault::pins::sweep(ws));
        for line in said {
            out.push(finding(CHECK, Level::Fixed, line, None));
        }
        return;
    }
    for left in recover::dead_writes(ws) {
        out.push(finding(
            CHECK,
            Level::Problem,
            format!("{} is left in the vaults", left.describe()),
            Some("git loop doctor --fix (or any `git loop vault` command)".into()),
        ));
    }
}

fn git_locks(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let git_dir = ws.vaults_dir().join(".git");
    if !git_dir.is_dir() {
        return;
    }
    match vault::try_lock_repo(ws) {
        Ok(Some(held)) if fix => {
            let mut said = recover::remove_stale_git_locks(ws, &held);
            said.extend(recover::finish_journals(ws, &held));
            for line in said {
                let level = if line.starts_with("cannot") {
                    Level::Problem
                } else {
                    Level::Fixed
                };
                out.push(finding(CHECK, level, line, None));
            }
        }
        Ok(Some(_held)) => {
            for (journal, paths) in recover::dead_journals(ws) {
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    format!(
                        "an interrupted `git loop vault` command wrote {} and did not commit it ({})",
                        paths
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        journal.display()
                    ),
                    Some("git loop doctor --fix (or any `git loop vault` command) commits it".into()),
                ));
            }
            for lock in crate::gitlocks::stale_in_vaults_repo(&git_dir) {
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    format!(
                        "stale git lock file {} (no git-loop command holds {}); until it goes, vault commands and sync fail there",
                        lock.display(),
                        ws.vaults_lock().display()
                    ),
                    Some("git loop doctor --fix (or any `git loop vault` command)".into()),
                ));
            }
        }
        _ => {
            if !crate::gitlocks::stale_in_vaults_repo(&git_dir).is_empty() {
                let holder = std::fs::read_to_string(ws.vaults_lock()).unwrap_or_default();
                out.push(finding(
                    CHECK,
                    Level::Info,
                    format!(
                        "{} is held by a running git loop command{}; the lock files in {} are its own",
                        ws.vaults_lock().display(),
                        match holder.trim() {
                            "" => String::new(),
                            pid => format!(" (pid {pid})"),
                        },
                        git_dir.display()
                    ),
                    None,
                ));
            }
        }
    }
}

fn legacy(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let there = |p: &std::path::Path| std::fs::symlink_metadata(p).ok();
    match there(&ws.personal().join(".loopat")) {
        None => return,
        // A real folder without the old vaults' folder: nothing to move.
        Some(m) if m.is_dir() && there(&ws.legacy_vaults_dir()).is_none() => return,
        // The old folder, or something other than a folder where `.loopat` goes (which
        // a move refuses): said, and moved (or refused) with --fix.
        Some(_) => {}
    }
    if fix {
        match vault::migrate(ws) {
            Ok(moved) if moved.is_empty() => {}
            Ok(moved) => out.push(finding(
                CHECK,
                Level::Fixed,
                format!(
                    "moved {} from {} to {}",
                    moved.join(", "),
                    ws.legacy_vaults_dir().display(),
                    ws.vaults_dir().display()
                ),
                None,
            )),
            Err(e) => out.push(finding(
                CHECK,
                Level::Problem,
                format!(
                    "the vaults in the personal repository were not moved: {}",
                    e.one_line()
                ),
                e.hints.first().cloned(),
            )),
        }
        return;
    }
    out.push(finding(
        CHECK,
        Level::Problem,
        format!(
            "{} is still there: vaults there are not used until they are moved to {}",
            ws.legacy_vaults_dir().display(),
            ws.vaults_dir().display()
        ),
        Some(
            "git loop doctor --fix (or any `git loop vault` command), which says what it refuses"
                .into(),
        ),
    ));
}

fn guard(ws: &Workspace, fix: bool, out: &mut Vec<Finding>) {
    let repo = ws.vaults_dir();
    if !repo.join(".git").is_dir() {
        return;
    }
    let installed = crate::hooks::hooks_dir(&repo)
        .ok()
        .and_then(|dir| {
            crate::fsutil::read_regular(&dir.join("pre-commit"), 1 << 20)
                .ok()
                .flatten()
        })
        .is_some_and(|text| {
            String::from_utf8_lossy(&text)
                .contains(crate::hooks::block(crate::hooks::PRE_COMMIT.script))
        });
    if installed {
        return;
    }
    if fix {
        match vault::ensure_guard(ws) {
            Ok(done) => out.push(finding(
                CHECK,
                Level::Fixed,
                format!("installed the secret guard in {}", done.path().display()),
                None,
            )),
            Err(e) => out.push(finding(
                CHECK,
                Level::Problem,
                e.one_line(),
                e.hints.first().cloned(),
            )),
        }
    } else {
        out.push(finding(
            CHECK,
            Level::Problem,
            format!("the vaults' repository {} has no secret guard: a commit made there by hand is not checked", repo.display()),
            Some("git loop doctor --fix (or any `git loop vault` command)".into()),
        ));
    }
}

fn each_vault(ws: &Workspace, out: &mut Vec<Finding>) {
    let (names, skipped) = match Vault::names(ws) {
        Ok(found) => found,
        Err(e) => {
            out.push(finding(
                CHECK,
                Level::Problem,
                format!("cannot read the vaults: {e}"),
                None,
            ));
            return;
        }
    };
    let remove_hint = |path: &std::path::Path| {
        format!(
            "remove it (`rm -r {}`) and commit that in {}, or restore it from that repository's history",
            path.display(),
            ws.vaults_dir().display()
        )
    };
    for bad in &skipped {
        out.push(finding(
            CHECK,
            Level::Problem,
            format!("skipped {bad}"),
            Some(remove_hint(&bad.path)),
        ));
    }
    let started = vault::pins::Pins::of(ws).started();
    if !started && !names.is_empty() {
        out.push(finding(
            CHECK,
            Level::Info,
            format!(
                "the recipients of your vaults are not pinned on this machine yet: the next vault command pins them as they are ({})",
                ws.vault_pins_dir().display()
            ),
            None,
        ));
    }
    let mut fine = Vec::new();
    for name in names {
        let v = match Vault::open_to_look(ws, &name) {
            Ok(v) => v,
            Err(e) => {
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    format!("vault '{name}': {e}"),
                    None,
                ));
                continue;
            }
        };
        let mut ok = true;
        match v.decision() {
            Ok(Decision::Accepted) => {}
            Ok(Decision::New) if !started => {}
            Ok(d) => {
                ok = false;
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    vault::describe_decision(&name, &d),
                    Some(match d {
                        Decision::New => format!("git loop vault recipients list {name}, then git loop vault recipients accept {name}"),
                        _ => format!("git loop vault list {name}, then git loop vault recipients accept {name} (or refuse {name})"),
                    }),
                ));
            }
            Err(e) => {
                ok = false;
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    format!("vault '{name}': {e}"),
                    None,
                ));
            }
        }
        match v.entries() {
            Ok(listing) => {
                for bad in &listing.bad {
                    ok = false;
                    out.push(finding(
                        CHECK,
                        Level::Problem,
                        format!("vault '{name}': skipped {bad}"),
                        Some(remove_hint(&bad.path)),
                    ));
                }
            }
            Err(e) => {
                ok = false;
                out.push(finding(
                    CHECK,
                    Level::Problem,
                    format!("vault '{name}': {e}"),
                    None,
                ));
            }
        }
        if ok {
            fine.push(name);
        }
    }
    if !fine.is_empty() {
        out.push(finding(
            CHECK,
            Level::Ok,
            format!(
                "vault{} {}: the recipients you accepted, every entry as git-loop writes it",
                if fine.len() == 1 { "" } else { "s" },
                fine.join(", ")
            ),
            None,
        ));
    }
}
