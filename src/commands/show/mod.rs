//! `git loop show`: one loop, its record, folders and branches; `--mounts` and `--net` its sandbox.

use crate::error::Result;
use crate::loops;
use crate::terminal::shown;
use crate::ui::{Ui, BOLD, RESET};

mod mounts;
mod net;

use mounts::*;
use net::*;

/// Show one loop: its record, its folders, and where its branches stand.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Print the loop record as JSON, with what it receives, its forwarded ports
    /// (`ports: [{inside, host, url}]`, see `git loop port`) and, while its session is up,
    /// its services (`services: [{name, state, ready, code, since, log}]`).
    #[arg(long)]
    pub json: bool,
    /// Print the sandbox's view instead: every path inside, its host source, its mode.
    #[arg(long)]
    pub mounts: bool,
    /// With --mounts: the view in this mode.
    #[arg(long, value_enum, requires = "mounts")]
    pub mode: Option<crate::values::RunMode>,
    /// Print what the proxy network mode lets this loop reach instead: the allowlist with
    /// where each entry comes from, the denylist, and the operator's pins and ranges.
    #[arg(long, conflicts_with = "mounts")]
    pub net: bool,
}

pub fn run(ui: &mut Ui, args: ShowArgs) -> Result<u8> {
    let ws = crate::commands::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    // A run killed with its supervisor is recorded as ended (see `git loop log`).
    crate::sandbox::record::settle(&ws, &id)?;
    if args.mounts {
        return show_mounts(ui, &ws, &rec, args.mode, args.json);
    }
    if args.net {
        return show_net(ui, &ws, &rec, args.json);
    }
    loops::check_repo(&ws, &rec)?;
    loops::import(&ws, &rec)?;
    let status = loops::status(&ws, &rec)?;
    let address = crate::commands::read_config(&ws, Some(&rec))?
        .settings()
        .ports
        .address;
    if args.json {
        let mut record = loops::to_json(&ws, &rec, Some(&status));
        let (vars, files) = crate::vault::entry_names(&ws, &rec.vault);
        let bindings = crate::vault::entry_bindings(&ws, &rec.vault);
        let plaintext: Vec<&str> = bindings
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(|h| h.is_empty()))
            .map(|(l, _)| l.as_str())
            .collect();
        let bound: serde_json::Map<String, serde_json::Value> = bindings
            .iter()
            .filter_map(|(l, h)| {
                let h = h.as_ref().filter(|h| !h.is_empty())?;
                Some((
                    l.clone(),
                    serde_json::json!(h.hosts.iter().map(ToString::to_string).collect::<Vec<_>>()),
                ))
            })
            .collect();
        record["receives"] = serde_json::json!({"variables": vars, "files": files,
            "plaintext": plaintext, "bound": bound});
        record["ports"] =
            serde_json::to_value(crate::ports::listed(&ws, &id, address)).unwrap_or_default();
        record["services"] =
            serde_json::to_value(crate::session::services::listed(&ws, &id)).unwrap_or_default();
        return crate::commands::print_json(ui, &record).map(|()| 0);
    }
    // The record and the branches are the loop's own words (its title, the names it
    // gave): every one is shown with its control characters visible.
    let out = ui.out();
    writeln!(
        out,
        "{BOLD}loop {}{RESET}  {}",
        shown(&rec.id),
        shown(&rec.title)
    )?;
    writeln!(out, "state:      {}", status.state)?;
    writeln!(out, "kind:       {}", rec.kind)?;
    writeln!(out, "branch:     {}", shown(&rec.branch))?;
    if let Some(repo) = &rec.repo {
        let target = std::fs::read_link(ws.repo_link(repo)).unwrap_or_default();
        writeln!(
            out,
            "repo:       {} ({})",
            shown(repo),
            shown(target.as_os_str().as_encoded_bytes())
        )?;
    }
    if let Some(base) = &rec.base {
        let on = rec
            .base_branch
            .as_deref()
            .map(|b| format!(" on {}", shown(b)))
            .unwrap_or_default();
        writeln!(out, "base:       {}{on}", shown(base))?;
    }
    writeln!(out, "vault:      {}", shown(&rec.vault))?;
    for p in crate::ports::listed(&ws, &id, address) {
        writeln!(out, "port:       {} at {}", p.inside, p.url)?;
    }
    for s in crate::session::services::listed(&ws, &id) {
        writeln!(
            out,
            "service:    {} {} (log {})",
            shown(&s.name),
            s.label(),
            shown(s.log.as_os_str().as_encoded_bytes())
        )?;
    }
    // What the loop receives, by name only: never a value.
    let (vars, files) = crate::vault::entry_names(&ws, &rec.vault);
    if !vars.is_empty() || !files.is_empty() {
        let mut parts = Vec::new();
        if !vars.is_empty() {
            parts.push(format!("variables {}", vars.join(", ")));
        }
        if !files.is_empty() {
            parts.push(format!("$HOME files {}", files.join(", ")));
        }
        writeln!(out, "receives:   {}", shown(&parts.join("; ")))?;
        // Where each value may go: bound entries are placeholders inside.
        let bindings = crate::vault::entry_bindings(&ws, &rec.vault);
        let plaintext: Vec<&str> = bindings
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(|h| h.is_empty()))
            .map(|(l, _)| l.as_str())
            .collect();
        let unknown = bindings.iter().filter(|(_, h)| h.is_none()).count();
        writeln!(
            out,
            "plaintext:  {} entr{}{}",
            plaintext.len(),
            if plaintext.len() == 1 { "y" } else { "ies" },
            if plaintext.is_empty() {
                String::new()
            } else {
                format!(" ({})", shown(&plaintext.join(", ")))
            }
        )?;
        for (label, hosts) in &bindings {
            if let Some(h) = hosts.as_ref().filter(|h| !h.is_empty()) {
                writeln!(
                    out,
                    "bound:      {} for {} (a placeholder inside)",
                    shown(label),
                    h.hosts_text()
                )?;
            }
        }
        if unknown > 0 {
            writeln!(
                out,
                "bindings:   {unknown} unknown (your identity cannot decrypt them)"
            )?;
        }
    }
    writeln!(
        out,
        "sandbox:    {} (mode {}, network {})",
        shown(&rec.sandbox),
        rec.mode,
        rec.network
    )?;
    writeln!(
        out,
        "created:    {} by {} ({} ago)",
        rec.created_at,
        shown(&rec.created_by),
        loops::age(&rec)
    )?;
    writeln!(
        out,
        "folder:     {}",
        shown(ws.loop_dir(&id).as_os_str().as_encoded_bytes())
    )?;
    writeln!(
        out,
        "workdir:    {}",
        shown(ws.loop_workdir(&id).as_os_str().as_encoded_bytes())
    )?;
    for b in &status.branches {
        let against = b.against.as_deref().unwrap_or("its start");
        writeln!(
            out,
            "{:<11} {} ahead, {} behind {}",
            format!("{}:", b.role),
            b.ahead,
            b.behind,
            shown(against)
        )?;
    }
    for g in &rec.grants {
        writeln!(
            out,
            "grant:      {} ({})",
            shown(g.path.as_os_str().as_encoded_bytes()),
            shown(&g.mode)
        )?;
    }
    for f in &rec.included {
        writeln!(out, "included:   {}", shown(f))?;
    }
    Ok(0)
}
