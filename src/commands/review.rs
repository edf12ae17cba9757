use crate::error::Result;
use crate::gate::{self, Gate};
use crate::git::cmd::Git;
use crate::loops;
use crate::proposals::{self, Proposals};
use crate::terminal::{self, shown};
use crate::ui::{Ui, BOLD, RED, RESET, YELLOW};
use crate::workspace::Workspace;

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
    /// Print JSON: {id, code: {ahead, files, attention}, notes: {...}, knowledge: {...},
    /// uncommitted: [paths]}.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: ReviewArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let allow = super::operator_guard_allowlist()?;
    match &args.id {
        None => review_all(ui, &ws, &args, &allow),
        Some(q) => {
            let id = loops::resolve(&ws, q)?;
            let rec = loops::load(&ws, &id)?;
            let p = proposals::gather(&ws, rec, &allow)?;
            if args.json {
                return super::print_json(ui, &p.to_json()).map(|()| 0);
            }
            ui.page()?;
            review_one(ui, &ws, &p, &args)
        }
    }
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

fn review_one(ui: &mut Ui, ws: &Workspace, p: &Proposals, args: &ReviewArgs) -> Result<u8> {
    let mut shown_any = false;
    for pair in loops::repo_pairs(ws, &p.rec) {
        let Some(b) = p.status.branch(pair.role) else {
            continue;
        };
        let Some(target) = &b.against else { continue };
        if b.ahead == 0 {
            continue;
        }
        shown_any = true;
        writeln!(
            ui.out(),
            "{BOLD}== {}: {} is {} commit{} ahead of {}{RESET}",
            pair.role,
            shown(&p.rec.branch),
            b.ahead,
            if b.ahead == 1 { "" } else { "s" },
            shown(target)
        )?;
        if let Some(report) = p.report(pair.role).filter(|r| !r.is_empty()) {
            write_attention(ui, report)?;
        }
        // git in the origin (a repository the user trusts), with no colour of its own:
        // what it prints is made visible and coloured here.
        let range = format!("{target}..{}", p.rec.branch);
        let log = Git::in_dir(&pair.origin)
            .args(["log", "--no-color", "--format=%h%x00%s", &range])
            .output()?
            .stdout;
        for line in log.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            terminal::write_log_line(ui.out(), line)?;
        }
        let mut diff = Git::in_dir(&pair.origin).args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
        ]);
        diff = if args.name_only {
            diff.arg("--name-only")
        } else if args.stat {
            diff.arg("--stat")
        } else {
            diff.args(["--stat", "--patch"])
        };
        let text = diff
            .arg(format!("{target}...{}", p.rec.branch))
            .output()?
            .stdout;
        terminal::write_diff(ui.out(), &text)?;
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
        shown_any = true;
        writeln!(
            ui.out(),
            "{BOLD}== {role}: {} uncommitted{RESET}",
            paths.len()
        )?;
        // Read by git inside the loop's sandbox, read-only: its config and hooks are the
        // agent's and run nowhere else. Its output is the agent's too: it is read here
        // and shown like any other content from the loop.
        let dir = inside(role);
        let mut git_args: Vec<String> = vec![
            "git".into(),
            "-C".into(),
            dir,
            "-c".into(),
            "core.pager=cat".into(),
        ];
        git_args.extend([
            "diff".into(),
            "--no-color".into(),
            "--no-ext-diff".into(),
            "HEAD".into(),
        ]);
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
        // In the loop's own sandbox, read-only, within a time bound: the repository's
        // config and hooks are the agent's, and a FIFO there must not hang the review.
        let out = crate::sandbox::task::in_loop(
            &p.rec.id,
            "review",
            &git_args,
            crate::sandbox::task::Bound::DEFAULT,
        )?;
        terminal::write_diff(ui.out(), &out.stdout)?;
        if !out.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stderr = stderr.trim();
            ui.warn(format!(
                "could not read the uncommitted changes of {role} in the sandbox{}{}",
                if stderr.is_empty() { "" } else { ": " },
                stderr
            ))?;
        }
        writeln!(
            ui.out(),
            "changed or untracked: {}",
            paths
                .iter()
                .map(|s| shown(s).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if !shown_any {
        ui.status(format!("loop {} proposes nothing yet", p.rec.id))?;
    }
    Ok(0)
}

/// What a branch carries that needs a person's eye, before its diff: what publish and
/// merge refuse in red, what they ask `--accept-policy` for in yellow.
fn write_attention(ui: &mut Ui, report: &gate::Report) -> Result<()> {
    let count = |g: Gate| {
        report
            .items
            .iter()
            .filter(|i| i.concern.gate() == g)
            .count()
    };
    let (refused, asked) = (count(Gate::Refused), count(Gate::NeedsAcceptance));
    let mut what = Vec::new();
    if refused > 0 {
        what.push(format!("{refused} that publish and merge refuse"));
    }
    if asked > 0 {
        what.push(format!("{asked} that need --accept-policy"));
    }
    let summary = if what.is_empty() {
        String::new()
    } else {
        format!(" ({})", what.join(", "))
    };
    writeln!(ui.out(), "{YELLOW}needs a person's eye{summary}:{RESET}")?;
    for item in &report.items {
        let color = match item.concern.gate() {
            Gate::Refused => RED,
            Gate::NeedsAcceptance => YELLOW,
            Gate::Shown => "",
        };
        if color.is_empty() {
            writeln!(ui.out(), "  {}", item.line())?;
        } else {
            writeln!(ui.out(), "  {color}{}{RESET}", item.line())?;
        }
    }
    Ok(())
}
