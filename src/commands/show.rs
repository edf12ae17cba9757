use crate::error::Result;
use crate::loops;
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
}

pub fn run(ui: &mut Ui, args: ShowArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    if args.mounts {
        return show_mounts(ui, &ws, &rec, args.mode, args.json);
    }
    loops::check_repo(&ws, &rec)?;
    loops::import(&ws, &rec)?;
    let status = loops::status(&ws, &rec)?;
    if args.json {
        return super::print_json(ui, &loops::to_json(&ws, &rec, Some(&status))).map(|()| 0);
    }
    let out = ui.out();
    writeln!(out, "{BOLD}loop {}{RESET}  {}", rec.id, rec.title)?;
    writeln!(out, "state:      {}", status.state)?;
    writeln!(out, "kind:       {}", rec.kind)?;
    writeln!(out, "branch:     {}", rec.branch)?;
    if let Some(repo) = &rec.repo {
        let target = std::fs::read_link(ws.repo_link(repo)).unwrap_or_default();
        writeln!(out, "repo:       {repo} ({})", target.display())?;
    }
    if let Some(base) = &rec.base {
        let on = rec
            .base_branch
            .as_deref()
            .map(|b| format!(" on {b}"))
            .unwrap_or_default();
        writeln!(out, "base:       {base}{on}")?;
    }
    writeln!(out, "vault:      {}", rec.vault)?;
    writeln!(
        out,
        "sandbox:    {} (mode {}, network {})",
        rec.sandbox, rec.mode, rec.network
    )?;
    writeln!(
        out,
        "created:    {} by {} ({} ago)",
        rec.created_at,
        rec.created_by,
        loops::age(&rec)
    )?;
    writeln!(out, "folder:     {}", ws.loop_dir(&id).display())?;
    writeln!(out, "workdir:    {}", ws.loop_workdir(&id).display())?;
    for b in &status.branches {
        let against = b.against.as_deref().unwrap_or("its start");
        writeln!(
            out,
            "{:<11} {} ahead, {} behind {against}",
            format!("{}:", b.role),
            b.ahead,
            b.behind
        )?;
    }
    for g in &rec.grants {
        writeln!(out, "grant:      {} ({})", g.path.display(), g.mode)?;
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
    let config = super::load_config(ui, ws, Some(rec))?;
    let req = crate::sandbox::Request {
        mode,
        net: None,
        backend: None,
        print_argv: false,
        command: Vec::new(),
        interactive: false,
        ro_same_path: Vec::new(),
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
        writeln!(ui.out(), "{inside:<w0$}  {mode:<w2$}  {source}")?;
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
