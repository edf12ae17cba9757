//! `git loop review`: what loops propose, before anything is published or merged.

use crate::error::Result;
use crate::gate::{self, Gate};
use crate::git::cmd::Git;
use crate::loops;
use crate::proposals::{self, Proposals};
use crate::terminal::{self, shown};
use crate::ui::{Ui, BOLD, RED, RESET, YELLOW};
use crate::workspace::Workspace;

mod comments;
mod one;

use comments::Comments;
use one::*;

/// Show what loops propose: commits ahead of their targets and uncommitted changes.
///
/// Without ID: every loop with proposals. With ID: for each of its branches, what needs a
/// person's eye (changes under .loopat/, symlinks, gitlinks, executable bits, what the
/// secret guard flags, binary files: what publish and merge refuse or ask about), then the
/// commits, a stat and a unified diff against its target (read in the origins, after an
/// import), and the loop's uncommitted changes (read by git inside the loop's sandbox, in
/// review mode: nothing a loop repository configures ever runs on the host). Control
/// characters in what the loop wrote are shown as escapes (\r, \x1b, \u{202e}); long
/// output goes through your pager.
///
/// Review comments (`git loop comment`) are shown beside the line they are on, marked
/// open, outdated (their lines changed since) or resolved, with the agent's replies and
/// the commits that name them (`Addresses-Comment:`); then what changed on the branch
/// since the comments.
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// The loop: its id, or a unique prefix of its id or title slug; or a fan-out's group
    /// (`new --fan-out`), whose loops are shown one after another.
    pub id: Option<String>,
    /// Only the diffstat.
    #[arg(long, conflicts_with = "name_only")]
    pub stat: bool,
    /// Only the names of changed files.
    #[arg(long)]
    pub name_only: bool,
    /// Print JSON: {id, code: {ahead, files, attention}, notes: {...}, knowledge: {...},
    /// uncommitted: [paths], comments: [as `git loop comment ID --list --json`]}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: ReviewArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let allow = super::operator_guard_allowlist()?;
    match &args.id {
        None => review_all(ui, &ws, &args, &allow),
        Some(q) => {
            let id = match crate::fanout::resolve(&ws, q)? {
                crate::fanout::Target::Loop(id) => id,
                crate::fanout::Target::Group(group, ids) => {
                    return review_group(ui, &ws, &args, &allow, &group, &ids)
                }
            };
            let rec = loops::load(&ws, &id)?;
            let p = proposals::gather(&ws, rec, &allow)?;
            if args.json {
                let mut v = p.to_json();
                let (judged, _) = crate::review::judged(&ws, &p.rec.id)?;
                let items: Vec<crate::review::show::CommentJson> =
                    judged.iter().map(Into::into).collect();
                v["comments"] = serde_json::to_value(items).unwrap_or_default();
                return super::print_json(ui, &v).map(|()| 0);
            }
            ui.page()?;
            review_one(ui, &ws, &p, &args)
        }
    }
}

/// A fan-out's loops, one after another.
fn review_group(
    ui: &mut Ui,
    ws: &Workspace,
    args: &ReviewArgs,
    allow: &crate::guard::Allowlist,
    group: &str,
    ids: &[String],
) -> Result<u8> {
    let mut all = Vec::new();
    for id in ids {
        let rec = loops::load(ws, id)?;
        all.push(proposals::gather(ws, rec, allow)?);
    }
    if args.json {
        let items: Vec<serde_json::Value> = all.iter().map(Proposals::to_json).collect();
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    ui.page()?;
    for (i, p) in all.iter().enumerate() {
        writeln!(
            ui.out(),
            "{BOLD}=== loop {} ({} of {} of group {}): {}{RESET}",
            shown(&p.rec.id),
            i + 1,
            all.len(),
            shown(group),
            shown(&p.rec.title)
        )?;
        review_one(ui, ws, p, args)?;
    }
    Ok(0)
}

fn review_all(
    ui: &mut Ui,
    ws: &Workspace,
    args: &ReviewArgs,
    allow: &crate::guard::Allowlist,
) -> Result<u8> {
    let mut all = Vec::new();
    for id in ws.loop_ids()? {
        let rec = match loops::load(ws, &id) {
            Ok(r) => r,
            Err(e) => {
                ui.warn(format!("{id}: {}", e.one_line()))?;
                continue;
            }
        };
        match proposals::gather(ws, rec, allow) {
            Ok(p) if p.any() => all.push(p),
            Ok(_) => {}
            Err(e) => ui.warn(format!("{id}: {}", e.one_line()))?,
        }
    }
    if args.json {
        let items: Vec<serde_json::Value> = all.iter().map(Proposals::to_json).collect();
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    if all.is_empty() {
        ui.status("no loop proposes anything")?;
        return Ok(0);
    }
    for p in &all {
        let mut parts = Vec::new();
        for b in &p.status.branches {
            if b.ahead > 0 {
                let n = p
                    .files
                    .iter()
                    .find(|(r, _)| *r == b.role)
                    .map(|(_, f)| f.len())
                    .unwrap_or(0);
                parts.push(format!("{} +{} ({n} files)", b.role, b.ahead));
            }
        }
        let dirty: usize = p.uncommitted.iter().map(|(_, v)| v.len()).sum();
        if dirty > 0 {
            parts.push(format!("{dirty} uncommitted"));
        }
        let eye: usize = p.attention.iter().map(|(_, r)| r.items.len()).sum();
        if eye > 0 {
            parts.push(format!("{eye} to check"));
        }
        writeln!(
            ui.out(),
            "{BOLD}{}{RESET}  {}  {}",
            shown(&p.rec.id),
            parts.join(", "),
            shown(&p.rec.title)
        )?;
    }
    Ok(0)
}
