use std::io::IsTerminal;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::git::cmd::Git;
use crate::git::objects;
use crate::loops::{self, LoopRecord, LoopStatus};
use crate::ui::{Ui, BOLD, RESET};
use crate::workspace::Workspace;

/// Show what loops propose: commits ahead of their targets and uncommitted changes.
///
/// Without ID: every loop with proposals. With ID: the commits, a stat and a unified
/// diff of each of its branches against its target (read in the origins, after an
/// import), and the loop's uncommitted changes (read by git inside the loop's sandbox, in
/// review mode: nothing a loop repository configures ever runs on the host).
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: Option<String>,
    /// Only the diffstat.
    #[arg(long, conflicts_with = "name_only")]
    pub stat: bool,
    /// Only the names of changed files.
    #[arg(long)]
    pub name_only: bool,
    /// Print JSON: {id, code: {ahead, files}, notes: {...}, knowledge: {...}, uncommitted: [paths]}.
    #[arg(long)]
    pub json: bool,
}

/// One loop's proposals.
struct Proposals {
    rec: LoopRecord,
    status: LoopStatus,
    /// Per role: files changed on the branch against its target.
    files: Vec<(&'static str, Vec<String>)>,
    /// Per role: uncommitted paths in the loop's own clone.
    uncommitted: Vec<(&'static str, Vec<String>)>,
}

impl Proposals {
    fn any(&self) -> bool {
        self.status.branches.iter().any(|b| b.ahead > 0)
            || self.uncommitted.iter().any(|(_, p)| !p.is_empty())
    }

    fn to_json(&self) -> Value {
        let mut v = json!({"id": self.rec.id, "title": self.rec.title});
        for role in ["code", "notes", "knowledge"] {
            v[role] = match self.status.branch(role) {
                Some(b) => json!({
                    "ahead": b.ahead,
                    "against": b.against,
                    "files": self.files.iter().find(|(r, _)| *r == role).map(|(_, f)| f.clone()).unwrap_or_default(),
                }),
                None => Value::Null,
            };
        }
        let uncommitted: Vec<String> = self
            .uncommitted
            .iter()
            .flat_map(|(role, paths)| paths.iter().map(move |p| format!("{role}:{p}")))
            .collect();
        v["uncommitted"] = json!(uncommitted);
        v
    }
}

fn gather(ws: &Workspace, rec: LoopRecord) -> Result<Proposals> {
    loops::check_repo(ws, &rec)?;
    loops::import(ws, &rec)?;
    let status = loops::status(ws, &rec)?;
    let mut files = Vec::new();
    let mut uncommitted = Vec::new();
    for pair in loops::repo_pairs(ws, &rec) {
        let b = status.branch(pair.role);
        if let (Some(b), Some(target)) = (b, b.and_then(|b| b.against.clone())) {
            if b.ahead > 0 {
                let names = Git::in_dir(&pair.origin)
                    .args(["diff", "--no-ext-diff", "--name-only"])
                    .arg(format!("{target}...{}", rec.branch))
                    .read()?;
                files.push((pair.role, names.lines().map(str::to_string).collect()));
            }
        }
        if pair.clone.join(".git").is_dir() {
            let changes = objects::worktree_changes(&pair.clone).map_err(|e| {
                Error::failure(format!("cannot read {}", pair.clone.display())).with_source(e)
            })?;
            uncommitted.push((pair.role, changes));
        }
    }
    Ok(Proposals {
        rec,
        status,
        files,
        uncommitted,
    })
}

pub fn run(ui: &mut Ui, args: ReviewArgs) -> Result<u8> {
    let ws = super::workspace()?;
    match &args.id {
        None => review_all(ui, &ws, &args),
        Some(q) => {
            let id = loops::resolve(&ws, q)?;
            let rec = loops::load(&ws, &id)?;
            let p = gather(&ws, rec)?;
            if args.json {
                return super::print_json(ui, &p.to_json()).map(|()| 0);
            }
            review_one(ui, &ws, &p, &args)
        }
    }
}

fn review_all(ui: &mut Ui, ws: &Workspace, args: &ReviewArgs) -> Result<u8> {
    let mut all = Vec::new();
    for id in ws.loop_ids()? {
        let rec = match loops::load(ws, &id) {
            Ok(r) => r,
            Err(e) => {
                ui.warn(format!("{id}: {}", e.one_line()))?;
                continue;
            }
        };
        match gather(ws, rec) {
            Ok(p) if p.any() => all.push(p),
            Ok(_) => {}
            Err(e) => ui.warn(format!("{id}: {}", e.one_line()))?,
        }
    }
    if args.json {
        let items: Vec<Value> = all.iter().map(Proposals::to_json).collect();
        return super::print_json(ui, &Value::Array(items)).map(|()| 0);
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
        writeln!(
            ui.out(),
            "{BOLD}{}{RESET}  {}  {}",
            p.rec.id,
            parts.join(", "),
            p.rec.title
        )?;
    }
    Ok(0)
}

fn review_one(ui: &mut Ui, ws: &Workspace, p: &Proposals, args: &ReviewArgs) -> Result<u8> {
    let color = if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        "--color=always"
    } else {
        "--color=never"
    };
    let mut shown = false;
    for pair in loops::repo_pairs(ws, &p.rec) {
        let Some(b) = p.status.branch(pair.role) else {
            continue;
        };
        let Some(target) = &b.against else { continue };
        if b.ahead == 0 {
            continue;
        }
        shown = true;
        writeln!(
            ui.out(),
            "{BOLD}== {}: {} is {} commit{} ahead of {target}{RESET}",
            pair.role,
            p.rec.branch,
            b.ahead,
            if b.ahead == 1 { "" } else { "s" }
        )?;
        let range = format!("{target}..{}", p.rec.branch);
        let log = Git::in_dir(&pair.origin)
            .args(["log", "--oneline", color, &range])
            .read()?;
        write!(ui.out(), "{log}")?;
        let mut diff = Git::in_dir(&pair.origin).args(["diff", "--no-ext-diff", color]);
        diff = if args.name_only {
            diff.arg("--name-only")
        } else if args.stat {
            diff.arg("--stat")
        } else {
            diff.args(["--stat", "--patch"])
        };
        let text = diff.arg(format!("{target}...{}", p.rec.branch)).read()?;
        write!(ui.out(), "{text}")?;
    }
    let inside = |role: &str| {
        crate::sandbox::spec::repo_inside(&p.rec.id, role)
            .display()
            .to_string()
    };
    for (role, paths) in &p.uncommitted {
        if paths.is_empty() {
            continue;
        }
        shown = true;
        writeln!(
            ui.out(),
            "{BOLD}== {role}: {} uncommitted{RESET}",
            paths.len()
        )?;
        ui.out().flush()?;
        // Read by git inside the loop's sandbox, read-only: its config and hooks are the
        // agent's and run nowhere else.
        let dir = inside(role);
        let mut git_args: Vec<String> = vec![
            "git".into(),
            "-C".into(),
            dir,
            "-c".into(),
            "core.pager=cat".into(),
        ];
        git_args.extend(["diff".into(), color.into(), "HEAD".into()]);
        git_args.push(
            if args.name_only {
                "--name-status"
            } else if args.stat {
                "--stat"
            } else {
                "--patch-with-stat"
            }
            .into(),
        );
        let status = Command::new(std::env::current_exe()?)
            .args([
                "run", "-q", "--mode", "review", "--net", "none", &p.rec.id, "--",
            ])
            .args(&git_args)
            .stdin(Stdio::null())
            .status()?;
        if !status.success() {
            ui.warn(format!(
                "could not read the uncommitted changes of {role} in the sandbox"
            ))?;
        }
        let untracked: Vec<&String> = paths.iter().collect();
        writeln!(
            ui.out(),
            "changed or untracked: {}",
            untracked
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if !shown {
        ui.status(format!("loop {} proposes nothing yet", p.rec.id))?;
    }
    Ok(0)
}
