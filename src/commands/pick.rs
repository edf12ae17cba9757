use std::io::IsTerminal;

use crate::error::{Error, Result};
use crate::fanout;
use crate::loops;
use crate::publish::code::{self, MergeLoop};
use crate::ui::Ui;

/// Pick one loop of a fan-out: merge it, and remove the group's other loops (their
/// branches kept).
///
/// The merge is `git loop merge ID`'s (the same checks, a fast-forward or a merge commit,
/// nothing changed on a refusal). Then the other loops of its group are removed when you
/// say so (asked on a terminal; --remove-others without asking), their branches `loop/<id>`
/// kept in the repositories; a loop with work that only its folder holds (uncommitted
/// changes, branches not imported) is kept and named.
#[derive(Debug, clap::Args)]
pub struct PickArgs {
    /// The loop to merge: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Remove the group's other loops without asking (their branches are kept).
    #[arg(
        long,
        visible_alias = "yes",
        short = 'y',
        conflicts_with = "keep_others"
    )]
    pub remove_others: bool,
    /// Keep the group's other loops.
    #[arg(long)]
    pub keep_others: bool,
    /// The branch to merge into (default: the branch the loop started from).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// One commit with the loop's changes instead of a merge.
    #[arg(long)]
    pub squash: bool,
    /// Let this change to policy land (as `git loop merge --accept-policy`).
    #[arg(long = "accept-policy", value_name = "PATH")]
    pub accept_policy: Vec<String>,
}

pub fn run(ui: &mut Ui, args: PickArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    let (group, members) = fanout::members(&ws, &id)?;
    let others: Vec<String> = members.into_iter().filter(|m| *m != id).collect();
    let allow = super::operator_guard_allowlist()?;
    let mut retry = format!("git loop pick {id}");
    if args.squash {
        retry.push_str(" --squash");
    }
    let (outcome, target) = code::merge_loop(
        ui,
        &ws,
        &rec,
        &MergeLoop {
            into: args.into.clone(),
            squash: args.squash,
            dry_run: false,
            message: None,
            accept_policy: args.accept_policy.clone(),
            retry,
        },
        &allow,
    )?;
    writeln!(
        ui.out(),
        "{}",
        crate::publish::gated::outcome_line("code", &target, &outcome, false)
    )?;
    ui.status(format!("picked {id} of group {group}"))?;
    if others.is_empty() || args.keep_others {
        return Ok(0);
    }
    let remove = if args.remove_others {
        true
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        ask(ui, &others)?
    } else {
        ui.status(format!(
            "the group's other loops are kept: {} (git loop pick {id} --remove-others removes them, their branches kept)",
            others.join(", ")
        ))?;
        false
    };
    if !remove {
        return Ok(0);
    }
    let mut kept = Vec::new();
    for other in &others {
        match remove_keeping_branches(ui, &ws, other) {
            Ok(()) => {}
            Err(e) => {
                ui.warn(format!("{other}: kept: {}", e.one_line()))?;
                kept.push(other.clone());
            }
        }
    }
    if !kept.is_empty() {
        return Err(Error::failure(format!(
            "{id} is merged, but {} of the group's other loops {} kept",
            kept.len(),
            if kept.len() == 1 { "is" } else { "are" }
        ))
        .hint("look at each one (git loop review ID), then git loop rm ID (--force to discard)"));
    }
    Ok(0)
}

/// Asks on the terminal whether to remove `others`.
fn ask(ui: &mut Ui, others: &[String]) -> Result<bool> {
    write!(
        ui.err(),
        "remove the group's other loops ({}), keeping their branches? [y/N] ",
        others.join(", ")
    )?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// Removes loop `id` with its branches kept, unless work would be lost that only its
/// folder holds (uncommitted changes, branches the origin lacks).
fn remove_keeping_branches(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str) -> Result<()> {
    let _run = crate::removal::hold(ws, id)?;
    let rec = loops::load(ws, id)?;
    loops::check_repo(ws, &rec)?;
    loops::import(ws, &rec)?;
    let lost = loops::local_only_work(ws, &rec)?;
    if !lost.is_empty() {
        return Err(Error::failure(format!(
            "it holds work its branches do not: {}",
            lost.join("; ")
        )));
    }
    crate::removal::remove_and_say(ui, ws, id, Some(&rec), false)
}
