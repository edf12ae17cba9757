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
}

pub fn run(ui: &mut Ui, args: ShowArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
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
