use crate::create::{self, NewLoop};
use crate::error::Result;
use crate::ui::Ui;

/// Start a distill loop: the agent condenses the team's notes and memory into knowledge.
///
/// The loop gets its own clone of knowledge on loop/<id> (writable, its working folder),
/// the notes read-only, and the distill doctrine. Its result is reviewed with
/// `git loop review` and delivered with `git loop publish --knowledge` or `git loop pr`.
#[derive(Debug, clap::Args)]
pub struct DistillArgs {
    /// What to distill (the loop's title).
    #[arg(default_value = "distill notes into knowledge")]
    pub title: String,
    /// Create the loop only; do not start the agent.
    #[arg(long)]
    pub no_agent: bool,
    /// Open a pull request against the knowledge remote at the end.
    #[arg(long)]
    pub pr: bool,
    /// Print the loop record as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(ui: &mut Ui, args: DistillArgs) -> Result<u8> {
    let ws = super::workspace()?;
    create::validate_title(&args.title)?;
    let config = super::load_new_config(ui, &ws, None)?;
    // The agent must be there before a loop is made for it: a distill loop left behind
    // by an agent that could not start is a loop nobody asked for.
    if !args.no_agent {
        crate::agent::locate(&config.settings().agent.command[0]).map_err(|e| {
            e.hint(
                "or make the loop only, for an agent you start later: git loop distill --no-agent",
            )
        })?;
        let settings = config.settings();
        crate::agent::check_login(
            &ws,
            &settings.vault.default,
            None,
            crate::agent::Profile::of(&settings.agent.command),
        )?;
    }
    let created = create::create(
        &ws,
        &NewLoop {
            title: Some(args.title.clone()),
            distill: true,
            ..NewLoop::with_settings(config.settings())
        },
    )?;
    let rec = created.record;
    if args.json {
        super::print_json(ui, &crate::loops::to_json(&ws, &rec, None))?;
    } else {
        ui.status(format!("created distill loop {} on {}", rec.id, rec.branch))?;
        writeln!(ui.out(), "{}", rec.id)?;
    }
    let mut code = 0;
    if !args.no_agent {
        crate::loops::check_repo(&ws, &rec)?;
        let config = super::load_sandbox_config(ui, &ws, &rec)?;
        let req = super::SandboxFlags::default().request(Vec::new(), true, false);
        code = crate::agent::run(ui, &ws, &rec, &config, req, Vec::new())?;
    }
    if args.pr && code == 0 {
        // As the agent left it.
        let rec = crate::loops::load(&ws, &rec.id)?;
        let allow = super::operator_guard_allowlist()?;
        crate::pr::propose(ui, &ws, &rec, &allow, false)?;
    }
    Ok(code)
}
