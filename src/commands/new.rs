use std::path::PathBuf;

use crate::create::{self, NewLoop};
use crate::error::Result;
use crate::ui::Ui;

/// Create a loop: a branch `loop/<id>` and its own working tree of the repository you are
/// in, plus its own branch of the team's notes.
///
/// The loop starts from a commit (HEAD, or --base); uncommitted changes are not carried.
/// The repository is registered under the workspace's context/repos/ by its folder name.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// What the loop is for; its id is made from it (`fix-login-3f9a1c`).
    pub title: Option<String>,
    /// The repository to work on (default: the one the current folder is in).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// The commit, branch or tag to start from (default: HEAD).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// A loop without code: its working tree starts empty (outside a repository, `new`
    /// needs it).
    #[arg(long)]
    pub scratch: bool,
    /// The vault whose credentials the loop's sandbox receives.
    #[arg(long, value_name = "NAME")]
    pub vault: Option<String>,
    /// The sandbox profile (knowledge/.loopat/sandboxes/<name>/).
    #[arg(long, value_name = "NAME")]
    pub sandbox: Option<String>,
    /// A conversation transcript the loop continues: read-only inside at
    /// /loopat/context/chat/<id>/.
    #[arg(long, value_name = "FILE")]
    pub seed_chat: Option<PathBuf>,
    /// Make N loops (2 to 16) on the same base for the same task, under one group name
    /// (recorded in each loop.toml): run an agent in each, `git loop compare GROUP`, and
    /// `git loop pick ID` merges the best.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(2..=16))]
    pub fan_out: Option<u8>,
    /// Print the loop record as JSON (with --fan-out: an array of them).
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: NewArgs) -> Result<u8> {
    let ws = crate::workspace::Workspace::from_env()?;
    if let Some(title) = &args.title {
        // Refuse a bad title before the first write, even the workspace's creation.
        create::validate_title(title)?;
    }
    for (flag, name) in [("--vault", &args.vault), ("--sandbox", &args.sandbox)] {
        if let Some(name) = name {
            if !crate::loops::is_id_like(name) {
                return Err(
                    crate::Error::usage(format!("{flag} '{name}' is not a valid name"))
                        .hint("use letters, digits and '-'"),
                );
            }
        }
    }
    // Where there is no repository nothing is written, not even the workspace.
    create::check_repository(args.scratch, args.repo.as_deref())?;
    crate::init::ensure(&ws)?;
    super::finish_interrupted(ui, &ws)?;
    let config = super::load_new_config(ui, &ws, args.sandbox.as_deref())?;
    if let Some(name) = &args.vault {
        refuse_missing_vault(&ws, name)?;
    }
    if let Some(n) = args.fan_out {
        return fan_out(ui, &ws, &config, args, usize::from(n));
    }
    let spinner = ui.spinner("creating the loop: its branch, working tree and notes");
    let created = create::create(
        &ws,
        &NewLoop {
            title: args.title,
            repo: args.repo,
            base: args.base,
            scratch: args.scratch,
            seed_chat: args.seed_chat,
            vault: args.vault,
            sandbox: args.sandbox,
            include: include_rules(&config),
            ..NewLoop::with_settings(config.settings())
        },
    )?;
    for w in &created.warnings {
        ui.warn(w)?;
    }
    spinner.finish_and_clear();
    let rec = &created.record;
    if crate::agent::user_identity(&crate::agent::identity_repo(&ws, rec)).is_none() {
        let warning = crate::agent::AgentError::NoIdentity {
            consequence: "commits made in this loop will fail until you set one",
        };
        crate::report::Report::problem(ui, "", &warning.into())?;
    }
    run_setup(ui, rec, config.profile())?;
    if args.json {
        super::print_json(ui, &crate::loops::to_json(&ws, rec, None))?;
    } else {
        let from = match (&rec.repo, &rec.base) {
            (Some(repo), Some(base)) => format!(
                " from {repo} at {}{}",
                &base[..12.min(base.len())],
                rec.base_branch
                    .as_deref()
                    .map(|b| format!(" ({b})"))
                    .unwrap_or_default()
            ),
            _ => " (scratch)".to_string(),
        };
        ui.status(format!("created loop {} on {}{from}", rec.id, rec.branch))?;
        ui.status(format!("  workdir: {}", ws.loop_workdir(&rec.id).display()))?;
        writeln!(ui.out(), "{}", rec.id)?;
    }
    Ok(0)
}

/// `--vault NAME` must name a vault that exists (or `none`, or the `default` a run treats
/// as empty until it is made): a loop made with another would fail at every run.
fn refuse_missing_vault(ws: &crate::workspace::Workspace, name: &str) -> Result<()> {
    use crate::vault::{Vault, DEFAULT_VAULT, NO_VAULT};
    if name == NO_VAULT || name == DEFAULT_VAULT || Vault::at(ws, name)?.exists() {
        return Ok(());
    }
    let known = Vault::names(ws).map(|(names, _)| names).unwrap_or_default();
    let mut err = crate::Error::usage(format!("--vault {name}: there is no such vault"))
        .hint(format!("make it first: git loop vault init {name}"));
    if let Some(close) = crate::config::schema::did_you_mean(name, known.iter().map(String::as_str))
    {
        err = err.hint(format!("did you mean `{close}`?"));
    }
    Err(err.hint(if known.is_empty() {
        "there is no vault yet; `--vault none` makes a loop without credentials".to_string()
    } else {
        format!("the vaults: {}", known.join(", "))
    }))
}

/// `--fan-out N`: N loops on one base under one group name, each set up as one loop is.
fn fan_out(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    config: &crate::config::Config,
    args: NewArgs,
    n: usize,
) -> Result<u8> {
    let title = args.title.clone().unwrap_or_default();
    let group = crate::fanout::new_group_name(ws, &title)?;
    let mut made = Vec::new();
    for i in 0..n {
        let spinner = ui.spinner(format!("creating loop {} of {n} of group {group}", i + 1));
        let created = create::create(
            ws,
            &NewLoop {
                title: args.title.clone(),
                repo: args.repo.clone(),
                // The same spec for each, as the first resolved it: a branch stays the
                // loops' base branch.
                base: args.base.clone(),
                scratch: args.scratch,
                seed_chat: args.seed_chat.clone(),
                vault: args.vault.clone(),
                sandbox: args.sandbox.clone(),
                group: Some(group.clone()),
                include: include_rules(config),
                ..NewLoop::with_settings(config.settings())
            },
        );
        spinner.finish_and_clear();
        let created = created?;
        if i == 0 {
            for w in &created.warnings {
                ui.warn(w)?;
            }
        }
        run_setup(ui, &created.record, config.profile())?;
        made.push(created.record);
    }
    if made.iter().any(|r| r.base != made[0].base) {
        ui.warn(format!(
            "the base moved while the loops were made: their bases differ ({})",
            made.iter()
                .map(|r| r
                    .base
                    .as_deref()
                    .map(|b| &b[..12.min(b.len())])
                    .unwrap_or("-"))
                .collect::<Vec<_>>()
                .join(", ")
        ))?;
    }
    if args.json {
        let items: Vec<serde_json::Value> = made
            .iter()
            .map(|r| crate::loops::to_json(ws, r, None))
            .collect();
        return super::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    ui.status(format!(
        "created group {group}: {n} loops on {}",
        made[0]
            .base
            .as_deref()
            .map(|b| format!(
                "{}{}",
                &b[..12.min(b.len())],
                made[0]
                    .base_branch
                    .as_deref()
                    .map(|b| format!(" ({b})"))
                    .unwrap_or_default()
            ))
            .unwrap_or_else(|| "no code (scratch)".into())
    ))?;
    ui.status(format!(
        "run an agent in each (git loop agent {group} runs them one after another), then: git loop compare {group}"
    ))?;
    for r in &made {
        writeln!(ui.out(), "{}", r.id)?;
    }
    Ok(0)
}

/// The sandbox profile's `setup` command (`setup = "npm ci"` or an argument list), run
/// once in the new loop's sandbox. Its failure leaves the loop usable and says so.
fn run_setup(
    ui: &mut Ui,
    rec: &crate::loops::LoopRecord,
    profile: &crate::config::SandboxProfile,
) -> Result<()> {
    let Some(argv) = &profile.setup else {
        return Ok(());
    };
    ui.status(format!(
        "setup: running `{}` in the loop's sandbox...",
        argv.join(" ")
    ))?;
    let status = std::process::Command::new(std::env::current_exe()?)
        .args(["run", "-q", &rec.id, "--"])
        .args(argv)
        .stdin(std::process::Stdio::null())
        // stdout stays clean for `--json` and the printed id.
        .stdout(std::io::stderr())
        .status()?;
    if status.success() {
        ui.status("setup: done")?;
    } else {
        ui.warn(format!(
            "setup failed (exit {}); the loop is usable: run it again with `git loop run {} -- {}`",
            status.code().unwrap_or(-1),
            rec.id,
            argv.join(" ")
        ))?;
    }
    Ok(())
}

/// What `.worktreeinclude` may bring into the loop: the operator's bounds, and secrets
/// only where the profile asks and the operator allows (see `crate::include`).
fn include_rules(config: &crate::config::Config) -> crate::include::Rules {
    crate::include::Rules {
        profile_secrets: config.profile().include_secrets,
        ..crate::include::Rules::from_settings(config.settings())
    }
}
