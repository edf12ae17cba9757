use crate::error::Result;
use crate::loops;
use crate::terminal::shown;
use crate::ui::{Ui, BOLD, RESET};

/// Show one loop: its record, its folders, and where its branches stand.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Print the loop record as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the sandbox's view instead: every path inside, its host source, its mode.
    #[arg(long)]
    pub mounts: bool,
    /// With --mounts: the view in this mode.
    #[arg(long, value_enum, requires = "mounts")]
    pub mode: Option<crate::sandbox::spec::RunMode>,
    /// Print what the proxy network mode lets this loop reach instead: the allowlist with
    /// where each entry comes from, the denylist, and the operator's pins and ranges.
    #[arg(long, conflicts_with = "mounts")]
    pub net: bool,
}

pub fn run(ui: &mut Ui, args: ShowArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    if args.mounts {
        return show_mounts(ui, &ws, &rec, args.mode, args.json);
    }
    if args.net {
        return show_net(ui, &ws, &rec, args.json);
    }
    loops::check_repo(&ws, &rec)?;
    loops::import(&ws, &rec)?;
    let status = loops::status(&ws, &rec)?;
    if args.json {
        let mut record = loops::to_json(&ws, &rec, Some(&status));
        let (vars, files) = crate::vault::entry_names(&ws, &rec.vault);
        let bindings = crate::vault::entry_bindings(&ws, &rec.vault);
        let plaintext: Vec<&str> = bindings
            .iter()
            .filter(|(_, h)| h.as_ref().is_some_and(Vec::is_empty))
            .map(|(l, _)| l.as_str())
            .collect();
        let bound: serde_json::Map<String, serde_json::Value> = bindings
            .iter()
            .filter_map(|(l, h)| {
                let h = h.as_ref().filter(|h| !h.is_empty())?;
                Some((
                    l.clone(),
                    serde_json::json!(h.iter().map(ToString::to_string).collect::<Vec<_>>()),
                ))
            })
            .collect();
        record["receives"] = serde_json::json!({"variables": vars, "files": files,
            "plaintext": plaintext, "bound": bound});
        return super::print_json(ui, &record).map(|()| 0);
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
            .filter(|(_, h)| h.as_ref().is_some_and(Vec::is_empty))
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
                    crate::egress::sentinel::hosts_text(h)
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
        shown(&rec.mode),
        shown(&rec.network)
    )?;
    writeln!(
        out,
        "created:    {} by {} ({} ago)",
        shown(&rec.created_at),
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
    Ok(0)
}

fn show_mounts(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    rec: &loops::LoopRecord,
    mode: Option<crate::sandbox::spec::RunMode>,
    json: bool,
) -> Result<u8> {
    let config = super::load_sandbox_config(ui, ws, rec)?;
    let req = crate::sandbox::Request {
        mode,
        net: None,
        backend: None,
        print_argv: false,
        command: Vec::new(),
        interactive: false,
        ro_same_path: Vec::new(),
        allow_domains: Vec::new(),
        agent_env: Vec::new(),
    };
    let spec = crate::sandbox::spec_for(
        ws,
        rec,
        &config,
        &req,
        crate::sandbox::vault_file_names(ws, &rec.vault),
    )?;
    let rows = spec.view();
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(inside, source, mode)| serde_json::json!({"inside": inside, "source": source, "mode": mode}))
            .collect();
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(6);
    let w2 = rows.iter().map(|r| r.2.len()).max().unwrap_or(0).max(4);
    writeln!(
        ui.out(),
        "{BOLD}{:<w0$}  {:<w2$}  SOURCE{RESET}",
        "INSIDE",
        "MODE"
    )?;
    for (inside, source, mode) in rows {
        writeln!(
            ui.out(),
            "{:<w0$}  {:<w2$}  {}",
            shown(&inside),
            shown(&mode),
            shown(&source)
        )?;
    }
    writeln!(
        ui.out(),
        "cwd {} · network {} · mode {} · nothing else of the host exists inside",
        spec.cwd.display(),
        spec.net.as_str(),
        spec.mode.as_str()
    )?;
    Ok(0)
}

/// `show --net`: the egress policy of the loop's `proxy` runs.
fn show_net(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    rec: &loops::LoopRecord,
    json: bool,
) -> Result<u8> {
    let config = super::load_sandbox_config(ui, ws, rec)?;
    let policy = crate::egress::policy_for(config.profile(), &config, &[])?;
    if json {
        let value = serde_json::json!({
            "network": rec.network,
            "allow": policy.allowed().iter().map(|a| serde_json::json!({"domain": a.pattern.to_string(), "source": a.source})).collect::<Vec<_>>(),
            "deny": policy.denied().iter().map(|d| serde_json::json!({"domain": d.pattern.to_string(), "why": d.why})).collect::<Vec<_>>(),
            "deny_addresses": policy.denied_addresses().iter().map(|(ip, why)| serde_json::json!({"address": ip.to_string(), "why": why})).collect::<Vec<_>>(),
            "hosts": policy.hosts().iter().map(|(n, ip)| (n.clone(), serde_json::json!(ip.to_string()))).collect::<serde_json::Map<_, _>>(),
            "allow_cidrs": policy.cidrs().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
        });
        return super::print_json(ui, &value).map(|()| 0);
    }
    let out = ui.out();
    if rec.network != "proxy" {
        writeln!(
            out,
            "loop {} runs with network {}; this is what `--net proxy` lets it reach:",
            rec.id, rec.network
        )?;
    }
    let allowed = policy.allowed();
    let w = allowed
        .iter()
        .map(|a| a.pattern.to_string().len())
        .max()
        .unwrap_or(0)
        .max(14);
    writeln!(
        out,
        "{BOLD}{:<w$}  FROM{RESET}",
        format!("ALLOWED ({})", allowed.len())
    )?;
    for a in allowed {
        writeln!(
            out,
            "{:<w$}  {}",
            shown(&a.pattern.to_string()),
            shown(&a.source.to_string())
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{BOLD}{:<w$}  WHY{RESET}",
        "DENIED (wins over every allow)"
    )?;
    for d in policy.denied() {
        writeln!(out, "{:<w$}  {}", d.pattern.to_string(), d.why)?;
    }
    for (ip, why) in policy.denied_addresses() {
        writeln!(out, "{:<w$}  {why} (address)", ip.to_string())?;
    }
    writeln!(out)?;
    for (name, ip) in policy.hosts() {
        writeln!(out, "pinned: {name} -> {ip} (operator [network.hosts])")?;
    }
    for c in policy.cidrs() {
        writeln!(out, "allowed range: {c} (operator allow_cidrs)")?;
    }
    writeln!(
        out,
        "Refused at connect time unless an allowed range covers them: loopback, private (RFC 1918), \
         link-local, CGNAT, unique local, multicast and unspecified addresses, in IPv4-mapped forms too. \
         IP addresses are never a target: only host names."
    )?;
    Ok(0)
}
