//! `review ID`: one loop's proposals, branch by branch, with what needs a person's eye first.

use super::*;

pub(super) fn review_one(
    ui: &mut Ui,
    ws: &Workspace,
    p: &Proposals,
    args: &ReviewArgs,
) -> Result<u8> {
    let mut shown_any = false;
    let mut comments = Comments::load(ui, ws, &p.rec.id)?;
    comments.write_general(ui)?;
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
        if b.landed.is_some() {
            writeln!(
                ui.out(),
                "its changes are in {} already (merged by content: a squash or rebase merge made elsewhere)",
                shown(target)
            )?;
        }
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
            // Whatever the user's config says: comments are placed by these.
            "--src-prefix=a/",
            "--dst-prefix=b/",
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
        comments.write_diff(ui, pair.role, &text, !args.name_only && !args.stat)?;
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
        let names: Vec<String> = paths.iter().map(|s| shown(s).to_string()).collect();
        writeln!(
            ui.out(),
            "changed or untracked: {}",
            loops::abbreviated(&names)
        )?;
        if names.len() > loops::PATHS_SHOWN {
            ui.status(format!("every path: git loop review {} --json", p.rec.id))?;
        }
    }
    comments.write_rest(ui, ws)?;
    if !shown_any && comments.is_empty() {
        ui.status(format!("loop {} proposes nothing yet", p.rec.id))?;
    }
    Ok(0)
}

/// What a branch carries that needs a person's eye, before its diff: what publish and
/// merge refuse in red, what they ask `--accept-policy` for in yellow.
pub(super) fn write_attention(ui: &mut Ui, report: &gate::Report) -> Result<()> {
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
