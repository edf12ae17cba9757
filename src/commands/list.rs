use crate::error::Result;
use crate::fsutil;
use crate::loops::{self, State};
use crate::terminal::visible;
use crate::ui::{Ui, BOLD, DIM, GREEN, RESET, YELLOW};

/// List the loops with their state, age, commits ahead/behind and disk use.
///
/// Each loop's branches are imported into their origins first, so the counts are those
/// of the work as it stands.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Also list removed loops whose branches remain.
    #[arg(long)]
    pub all: bool,
    /// Print a JSON array of loop records, each with `session` (whether it is up), `agent`
    /// (`{state, since, attached}`), `ports` (`[{inside, host, url}]`, see `git loop port`)
    /// and, while the session is up, `services` (`[{name, state, ready, code, since, log}]`).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: ListArgs) -> Result<u8> {
    let ws = super::workspace()?;
    super::finish_interrupted(ui, &ws)?;
    // The layers every loop shares are read once: a broken file is one error naming its
    // line, not a status error (and a warning) repeated for every loop.
    let config = super::read_config(&ws, None)?;
    let address = config.settings().ports.address;
    let surveyed = loops::survey_with(&ws, true)?;
    // Runs killed with their supervisor are recorded as ended (see `git loop log`); a
    // loop whose run lock cannot be had is left for its own `log` or `run` to say why.
    for s in &surveyed {
        let _ = crate::sandbox::record::settle(&ws, &s.id);
    }
    let removed = if args.all {
        loops::removed_ids(&ws)?
    } else {
        Vec::new()
    };

    if args.json {
        let mut items = Vec::new();
        for s in &surveyed {
            match &s.record {
                Ok(rec) => {
                    let mut v = loops::to_json(&ws, rec, s.status.as_ref().ok());
                    v["disk_bytes"] = s.disk_bytes.unwrap_or(0).into();
                    v["session"] = crate::session::is_up(&ws, &rec.id).into();
                    v["ports"] = serde_json::to_value(crate::ports::listed(&ws, &rec.id, address))
                        .unwrap_or_default();
                    v["agent"] = serde_json::to_value(crate::session::state::read(&ws, &rec.id))
                        .unwrap_or_default();
                    v["services"] =
                        serde_json::to_value(crate::session::services::listed(&ws, &rec.id))
                            .unwrap_or_default();
                    if let Err(e) = &s.status {
                        v["error"] = e.one_line().into();
                    }
                    items.push(v);
                }
                Err(e) => items.push(serde_json::json!({
                    "id": s.id, "state": "broken", "path": ws.loop_dir(&s.id), "error": e.one_line(),
                })),
            }
        }
        for id in &removed {
            items.push(serde_json::json!({
                "id": id, "state": State::Removed, "branch": loops::LoopRecord::branch_name(id),
                "path": ws.loop_dir(id),
            }));
        }
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }

    let mut rows = vec![[
        "ID".to_string(),
        "STATE".into(),
        "AGENT".into(),
        "AGE".into(),
        "CODE".into(),
        "NOTES".into(),
        "DISK".into(),
        "TITLE".into(),
    ]];
    let mut problems = Vec::new();
    for s in &surveyed {
        let disk = fsutil::human_size(s.disk_bytes.unwrap_or(0));
        match (&s.record, &s.status) {
            (Ok(rec), Ok(status)) => {
                let code = status
                    .branch("code")
                    .map(|b| format!("+{} -{}", b.ahead, b.behind))
                    .unwrap_or_else(|| "-".into());
                let notes = status
                    .branch("notes")
                    .map(|b| format!("+{}", b.ahead))
                    .unwrap_or_else(|| "-".into());
                rows.push([
                    s.id.clone(),
                    status.state.to_string(),
                    agent_cell(&ws, &rec.id),
                    loops::age(rec),
                    code,
                    notes,
                    disk,
                    rec.title.clone(),
                ]);
            }
            (Ok(rec), Err(e)) => {
                rows.push([
                    s.id.clone(),
                    "error".into(),
                    agent_cell(&ws, &rec.id),
                    loops::age(rec),
                    "?".into(),
                    "?".into(),
                    disk,
                    rec.title.clone(),
                ]);
                problems.push((s.id.clone(), e));
            }
            (Err(e), _) => {
                rows.push([
                    s.id.clone(),
                    "broken".into(),
                    "-".into(),
                    "?".into(),
                    "?".into(),
                    "?".into(),
                    disk,
                    String::new(),
                ]);
                problems.push((s.id.clone(), e));
            }
        }
    }
    for id in &removed {
        rows.push([
            id.clone(),
            "removed".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            String::new(),
        ]);
    }
    if rows.len() == 1 {
        ui.status("no loops yet: `git loop new TITLE` in a repository makes one")?;
        return Ok(0);
    }
    // Titles (and any folder name under loops/) are shown with their control characters
    // visible, measured as shown.
    for row in rows.iter_mut() {
        for cell in row.iter_mut() {
            if let std::borrow::Cow::Owned(v) = visible(cell.as_str()) {
                *cell = v;
            }
        }
    }
    let widths: Vec<usize> = (0..7)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for c in 0..7 {
            let cell = format!("{:<w$}  ", row[c], w = widths[c]);
            let color = match (i, c, row[1].as_str()) {
                (0, _, _) => BOLD,
                (_, 1, "active") => GREEN,
                (_, 1, "merged" | "published") => DIM,
                (_, 1, _) => YELLOW,
                _ => "",
            };
            if color.is_empty() {
                line.push_str(&cell);
            } else {
                line.push_str(&format!("{color}{cell}{RESET}"));
            }
        }
        line.push_str(&row[7]);
        writeln!(ui.out(), "{}", line.trim_end())?;
    }
    // Each up loop's services, with where their logs are.
    for s in &surveyed {
        for svc in crate::session::services::listed(&ws, &s.id) {
            writeln!(
                ui.out(),
                "{}: service {} {} (log {})",
                visible(&s.id),
                visible(&svc.name),
                svc.label(),
                svc.log.display()
            )?;
        }
    }
    for (id, e) in problems {
        crate::report::Report::problem(ui, &format!("{id}: "), e)?;
    }
    Ok(0)
}

/// The AGENT column: the session (`up`), the host ports it forwards, its services that are
/// not ready, the agent's state and who is attached:
/// `up · :22777 · db starting · needs-input · 2 attached`; `-` for none.
fn agent_cell(ws: &crate::workspace::Workspace, id: &str) -> String {
    let mut parts = Vec::new();
    if crate::session::is_up(ws, id) {
        parts.push("up".to_string());
        let live = crate::ports::read_live(ws, id).unwrap_or_default();
        if !live.ports.is_empty() {
            let hosts: Vec<String> = live.ports.iter().map(|p| format!(":{}", p.host)).collect();
            parts.push(hosts.join(" "));
        }
        let services = crate::session::services::listed(ws, id);
        let waiting: Vec<String> = services
            .iter()
            .filter(|s| !s.ready)
            .map(|s| format!("{} {}", s.name, s.label()))
            .collect();
        if !waiting.is_empty() {
            parts.push(waiting.join(" "));
        } else if !services.is_empty() {
            parts.push(format!("{} services ready", services.len()));
        }
    }
    if let Some(state) = crate::session::state::read(ws, id) {
        if state.state.is_some() {
            parts.push(state.label());
        }
        if state.attached > 0 {
            parts.push(format!("{} attached", state.attached));
        }
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" · ")
    }
}
