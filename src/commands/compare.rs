use crate::error::Result;
use crate::fanout::{self, Row};
use crate::terminal::visible;
use crate::ui::{Ui, BOLD, GREEN, RED, RESET};

/// Compare the loops of a fan-out (`git loop new --fan-out N`) side by side.
///
/// For each loop: its agent's state (working, needs-input, done, exited N, from the
/// agent's hooks or its live session, or the end of its last `git loop agent`), its commits
/// ahead of the base, its diff stat, the sandbox profile's `check` run in that loop's
/// sandbox (one loop after another), and its size against the smallest. `git loop review
/// GROUP` shows their diffs one after another; `git loop pick ID` merges one.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The group (or any loop of it): its name, or a unique prefix of it.
    pub group: String,
    /// Do not run the check.
    #[arg(long)]
    pub no_check: bool,
    /// Print a JSON array, one object per loop (id, title, agent, commits, files,
    /// insertions, deletions, size, size_vs_smallest, check, error).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: CompareArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let (group, ids) = fanout::members(&ws, &args.group)?;
    let mut profiles = Vec::new();
    for id in &ids {
        let check = match crate::loops::load(&ws, id) {
            Ok(rec) => super::load_sandbox_config(ui, &ws, &rec)?
                .profile()
                .check
                .clone(),
            Err(_) => None,
        };
        profiles.push((id.clone(), check));
    }
    let check = |rec: &crate::loops::LoopRecord| {
        profiles
            .iter()
            .find(|(id, _)| *id == rec.id)
            .and_then(|(_, c)| c.clone())
    };
    let spinner = (!args.json).then(|| {
        ui.spinner(format!(
            "comparing the {} loops of {group}{}",
            ids.len(),
            if args.no_check {
                ""
            } else {
                " (running each one's check)"
            }
        ))
    });
    let rows = fanout::compare(&ws, &ids, &check, !args.no_check);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    if args.json {
        let value = serde_json::to_value(&rows)
            .map_err(|e| crate::Error::failure("cannot write JSON").with_source(e))?;
        return super::print_json(ui, &value).map(|()| 0);
    }
    writeln!(
        ui.out(),
        "{BOLD}group {}: {} loops{RESET}",
        visible(&group),
        rows.len()
    )?;
    table(ui, &rows)?;
    for r in &rows {
        if let Some(e) = &r.error {
            ui.warn(format!("{}: {}", r.id, visible(e)))?;
        }
    }
    if rows.iter().all(|r| r.check.is_none()) && !args.no_check {
        ui.status("the sandbox profile names no check: set `check` in its sandbox.toml to compare results")?;
    }
    ui.status(format!(
        "git loop review {group} shows the diffs; git loop pick ID merges one"
    ))?;
    Ok(0)
}

fn table(ui: &mut Ui, rows: &[Row]) -> Result<()> {
    let mut cells: Vec<[String; 7]> = vec![[
        "LOOP".into(),
        "AGENT".into(),
        "COMMITS".into(),
        "DIFF".into(),
        "CHECK".into(),
        "SIZE".into(),
        "TITLE".into(),
    ]];
    for r in rows {
        let check = match &r.check {
            None if r.error.is_some() => "?".to_string(),
            None => "-".to_string(),
            Some(c) if c.passed => "passed".into(),
            Some(c) => match c.code {
                Some(code) => format!("failed ({code})"),
                None => "failed".into(),
            },
        };
        let size = match r.size_vs_smallest {
            Some(x) if (x - 1.0).abs() < f64::EPSILON => format!("{} (smallest)", r.size),
            Some(x) => format!("{} ({x:.2}x)", r.size),
            None => r.size.to_string(),
        };
        cells.push([
            r.id.clone(),
            r.agent.text(),
            if r.error.is_some() {
                "?".into()
            } else {
                r.commits.to_string()
            },
            format!("{} files +{} -{}", r.files, r.insertions, r.deletions),
            check,
            size,
            visible(&r.title).into_owned(),
        ]);
    }
    let widths: Vec<usize> = (0..6)
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, row) in cells.iter().enumerate() {
        let mut line = String::new();
        for (c, w) in widths.iter().enumerate() {
            let cell = format!("{:<w$}  ", row[c]);
            let color = match (i, c) {
                (0, _) => BOLD,
                (_, 4) if row[4] == "passed" => GREEN,
                (_, 4) if row[4].starts_with("failed") => RED,
                _ => "",
            };
            if color.is_empty() {
                line.push_str(&cell);
            } else {
                line.push_str(&format!("{color}{cell}{RESET}"));
            }
        }
        line.push_str(&row[6]);
        writeln!(ui.out(), "{}", line.trim_end())?;
    }
    Ok(())
}
