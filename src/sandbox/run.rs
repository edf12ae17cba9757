//! One run of a command in a loop's sandbox: what is read, the plan made of it
//! (`plan.rs`), and its execution (`execute.rs`).

use super::execute::execute;
use super::plan::{plan, Choices, How, Inputs, VaultView};
use super::{probe, Request};
use crate::config::Config;
use crate::error::Result;
use crate::loops::LoopRecord;
use crate::report::Report;
use crate::workspace::Workspace;

/// Runs `req.command` in the loop's sandbox; returns the command's exit code. With
/// `req.print_argv`, prints the plan's command line instead and runs nothing.
pub fn run(
    report: &mut dyn Report,
    ws: &Workspace,
    rec: &LoopRecord,
    config: &Config,
    req: &Request,
) -> Result<u8> {
    crate::loops::know_limits(config);
    let probed = probe::Inputs::read();
    let choices = Choices::make(req, rec, config, &probe::quick(&probed))?;
    // Vaults still in the personal tree (where they lived before) would be in view; what a
    // killed vault command left is cleared, and a change of recipients that arrived by
    // sync is judged, before the vault is read.
    crate::vault::prepare(report, ws)?;
    // The vault is decrypted in memory; its files go to bwrap by descriptor, its variables
    // by environment (see spawn.rs), and neither is written anywhere. The plan sees its
    // entries by name only.
    let mut delivery = crate::vault::open_for_run(ws, &rec.vault)?;
    for warning in &delivery.warnings {
        report.warn(warning)?;
    }
    // What the loop's agent asks at its start about the key it is given, and Codex's login
    // (see `crate::agent::ready_for_run`).
    crate::agent::ready_for_run(ws, rec, config, &mut delivery)?;
    let read = Inputs::read(
        ws,
        rec,
        config,
        &choices,
        VaultView::of(&rec.vault, &delivery),
        probed.bwrap,
    )?;
    let plan = plan(ws, rec, config, req, &choices, &read.inputs)?;
    for warning in &plan.warnings {
        report.warn(warning)?;
    }
    if let How::Host(host) = &plan.how {
        // Never silenced, not even by --quiet: nothing isolates this run.
        report.notice(&host.notice)?;
    }
    if req.print_argv {
        report.result(&plan.printed_argv())?;
        return Ok(0);
    }
    execute(report, ws, rec, &plan, delivery, read.tls)
}

/// `TERM` for SIGTERM and so on, as `kill -l` names them.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().trim_start_matches("SIG").to_string())
        .unwrap_or_else(|_| sig.to_string())
}
