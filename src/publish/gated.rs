//! Publishing a loop's context branch (notes or knowledge) into its trunk through the
//! gate: exactly the commit the gate judged is merged, and a refusal changes nothing.

use std::path::Path;

use crate::error::{Error, Result};
use crate::gate;
use crate::git::objects;
use crate::loops;
use crate::publish::{self, MergeRequest, Outcome};
use crate::terminal::shown;

/// The trunk of a context repository (the branch its checkout has).
fn trunk_of(origin: &Path) -> Result<String> {
    let repo = objects::open_trusted(origin)
        .map_err(|e| Error::failure(format!("cannot read {}", origin.display())).with_source(e))?;
    objects::head_branch(&repo)
        .ok()
        .flatten()
        .ok_or_else(|| Error::failure(format!("{} has no trunk checked out", origin.display())))
}

/// What a loop's branch of `origin` carries into its trunk, judged by the gate.
pub fn gate_one(
    origin: &Path,
    rec: &loops::LoopRecord,
    allow: &crate::guard::Allowlist,
) -> Result<(String, gate::Inspection)> {
    let trunk = trunk_of(origin)?;
    let insp =
        gate::inspect(origin, &rec.branch, &trunk, allow).map_err(|source| gate::Unchecked {
            id: rec.id.clone(),
            source,
        })?;
    Ok((trunk, insp))
}

/// Publishes one of a loop's context branches (notes or knowledge) into its trunk, when
/// the gate lets it through with no policy accepted (what `autocommit --publish-notes`
/// does: a refusal says what is at stake in its cause).
#[allow(clippy::too_many_arguments)]
pub fn publish_one(
    ws: &crate::workspace::Workspace,
    origin: &std::path::Path,
    rec: &loops::LoopRecord,
    role: &str,
    union: &[String],
    message: Option<String>,
    dry_run: bool,
    allow: &crate::guard::Allowlist,
) -> Result<(String, publish::Merged)> {
    let (trunk, insp) = gate_one(origin, rec, allow)?;
    let mut stakes = crate::report::Recorded::default();
    let retry = format!("git loop publish {}", rec.id);
    if let Some(e) = gate::refusal(
        &mut stakes,
        "publish",
        &rec.id,
        &[(role, &insp.report)],
        &[],
        &retry,
    )? {
        let lines = stakes.of(crate::report::Kind::Notice);
        return Err(e.with_source(gate::AtStake::from_lines(lines)));
    }
    let merged = merge_gated(
        ws, origin, rec, role, &trunk, &insp, union, message, dry_run,
    )?;
    Ok((trunk, merged))
}

/// Merges exactly the commit the gate judged into trunk.
#[allow(clippy::too_many_arguments)]
pub fn merge_gated(
    ws: &crate::workspace::Workspace,
    origin: &Path,
    rec: &loops::LoopRecord,
    role: &str,
    trunk: &str,
    insp: &gate::Inspection,
    union: &[String],
    message: Option<String>,
    dry_run: bool,
) -> Result<publish::Merged> {
    let message =
        message.unwrap_or_else(|| format!("Publish {role} of loop {}: {}", rec.id, rec.title));
    let journal = ws.checkout_journal(role);
    Ok(publish::merge(&MergeRequest {
        origin,
        source_branch: &rec.branch,
        target_branch: trunk,
        message,
        squash: false,
        dry_run,
        journal,
        owner: publish::Owner::Workspace,
        workspace: ws,
        union: union.to_vec(),
        gated: Some((insp.source, insp.target)),
    })
    .map_err(|source| publish::MergeFailed {
        id: rec.id.clone(),
        what: "publish",
        source,
    })?)
}

/// One line saying what happened to `target` (the trunk or branch that received `what`).
pub fn outcome_line(what: &str, target: &str, outcome: &Outcome, dry_run: bool) -> String {
    let would = if dry_run { "would be " } else { "" };
    match outcome {
        Outcome::UpToDate => format!("{what}: nothing to do ({} already has it)", shown(target)),
        Outcome::FastForward { old, new } => {
            format!(
                "{what}: {} {would}fast-forwarded {}..{}",
                shown(target),
                short(old),
                short(new)
            )
        }
        Outcome::Merged { old, new } => {
            format!(
                "{what}: {} {would}merged {}..{}",
                shown(target),
                short(old),
                short(new)
            )
        }
    }
}

fn short(id: &gix::ObjectId) -> String {
    id.to_string()[..12].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_line_says_what_happened_or_would() {
        let old = gix::ObjectId::from_hex(b"0123456789abcdef0123456789abcdef01234567").unwrap();
        let new = gix::ObjectId::from_hex(b"fedcba9876543210fedcba9876543210fedcba98").unwrap();
        assert_eq!(
            outcome_line("notes", "main", &Outcome::UpToDate, false),
            "notes: nothing to do (main already has it)"
        );
        assert_eq!(
            outcome_line("notes", "main", &Outcome::FastForward { old, new }, false),
            "notes: main fast-forwarded 0123456789ab..fedcba987654"
        );
        assert_eq!(
            outcome_line("knowledge", "trunk", &Outcome::Merged { old, new }, true),
            "knowledge: trunk would be merged 0123456789ab..fedcba987654"
        );
        assert_eq!(
            outcome_line("code", "a\x1bb", &Outcome::FastForward { old, new }, true),
            "code: a\\x1bb would be fast-forwarded 0123456789ab..fedcba987654"
        );
    }

    #[test]
    fn the_trunk_is_the_branch_the_checkout_has() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("notes");
        crate::testutil::init_repo(&dir);
        crate::testutil::git(&dir, &["commit", "-q", "--allow-empty", "-m", "first"]);
        crate::testutil::git(&dir, &["switch", "-q", "-c", "trunk"]);
        assert_eq!(trunk_of(&dir).unwrap(), "trunk");
        crate::testutil::git(&dir, &["switch", "-q", "--detach"]);
        assert!(trunk_of(&dir)
            .unwrap_err()
            .message
            .ends_with("has no trunk checked out"));
        assert!(trunk_of(&tmp.path().join("none")).is_err());
    }
}
