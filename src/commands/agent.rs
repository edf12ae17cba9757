use crate::error::Result;
use crate::loops;
use crate::sandbox;
use crate::ui::Ui;

/// Run the configured agent (`agent.command`, default `claude`) in a loop's sandbox.
///
/// Before each run the prompt layers are written into the loop's `.claude/`: the built-in
/// doctrine, the team's, and this loop's facts. The agent's install folder is bound
/// read-only at the same path inside.
#[derive(Debug, clap::Args)]
#[command(trailing_var_arg = true)]
pub struct AgentArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
    /// Print the exact bwrap command line instead of running it.
    #[arg(long)]
    pub print_argv: bool,
    /// Arguments for the agent (after `--`).
    #[arg(allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

pub fn run(ui: &mut Ui, args: AgentArgs) -> Result<u8> {
    args.sandbox.check()?;
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    // The schema refuses an empty command wherever it is set.
    let (program, rest) = config
        .settings()
        .agent
        .command
        .split_first()
        .expect("agent.command is never empty");
    let (binary, folder) = crate::agent::locate(program)?;
    let profile = crate::agent::Profile::of(&config.settings().agent.command);
    let mut argv = vec![binary.display().to_string()];
    argv.extend(rest.iter().cloned());
    argv.extend(args.args);
    let mut req = args.sandbox.request(argv, true, args.print_argv);
    req.ro_same_path = folder.into_iter().collect();
    let home_inside = std::path::Path::new("/home").join(ws.user());
    req.agent_env = profile.env(config.settings().agent.permissions, &home_inside);
    let spec = sandbox::spec_for(&ws, &rec, &config, &req, Vec::new())?;
    for warning in crate::agent::write_layers(&ws, &rec, &spec, profile, config.settings())? {
        ui.warn(warning)?;
    }
    if !spec.env.contains_key("GIT_AUTHOR_EMAIL") {
        ui.warn("you have no git identity: the agent's commits will fail")?;
        writeln!(ui.err(), "hint: {}", crate::agent::IDENTITY_HINT)?;
    }
    sandbox::run(ui, &ws, &rec, &config, &req)
}
