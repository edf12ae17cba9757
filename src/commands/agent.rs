use crate::error::{Error, Result};
use crate::loops;
use crate::ui::Ui;

/// Run the configured agent (`agent.command`, default `claude`) in a loop's sandbox.
///
/// Before each run the prompt layers are written into the loop's `.claude/`: the built-in
/// doctrine, the team's, and this loop's facts. The agent's install folder is bound
/// read-only at the same path inside. Claude Code and Codex get a profile of their own:
/// no prompts inside the sandbox (`agent.permissions`), no self-update, no telemetry.
/// `git loop agent login` stores the agent's API key or token in a vault.
#[derive(Debug, clap::Args)]
#[command(
    trailing_var_arg = true,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct AgentArgs {
    #[command(subcommand)]
    pub action: Option<AgentAction>,
    /// The loop: its id, or a unique prefix of its id or title slug.
    #[arg(required = true)]
    pub id: Option<String>,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
    /// Print the exact bwrap command line instead of running it.
    #[arg(long)]
    pub print_argv: bool,
    /// Arguments for the agent (after `--`).
    #[arg(allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum AgentAction {
    /// Store the agent's API key or token in a vault, so every loop of that vault is
    /// logged in.
    ///
    /// The key is read from stdin (typed without echo on a terminal) and stored encrypted
    /// as the variable the agent reads: Claude Code ANTHROPIC_API_KEY, or
    /// CLAUDE_CODE_OAUTH_TOKEN for a token from `claude setup-token` (sk-ant-oat...);
    /// Codex OPENAI_API_KEY. The host's own agent login is never copied.
    ///
    /// The key is bound to the agent's API host (api.anthropic.com, api.openai.com): the
    /// sandbox gets a placeholder, and the proxy puts the key into HTTPS requests to that
    /// host only. --for names other hosts (a gateway), --unbound stores it unbound.
    Login(LoginArgs),
}

#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// The vault to store it in.
    #[arg(long, default_value = "default")]
    pub vault: String,
    /// The agent it is for (default: the one agent.command names).
    #[arg(long, value_parser = ["claude", "codex"])]
    pub agent: Option<String>,
    /// The hosts the key may go to (comma-separated), instead of the agent's API host.
    #[arg(
        long = "for",
        value_name = "HOST[,HOST...]",
        conflicts_with = "unbound"
    )]
    pub hosts: Option<String>,
    /// Store the key bound to no host: it goes into the sandbox as it is.
    #[arg(long)]
    pub unbound: bool,
}

pub fn run(ui: &mut Ui, args: AgentArgs) -> Result<u8> {
    if let Some(AgentAction::Login(login_args)) = args.action {
        return login(ui, login_args);
    }
    args.sandbox.check()?;
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, args.id.as_deref().unwrap_or_default())?;
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    let req = args.sandbox.request(Vec::new(), true, args.print_argv);
    crate::agent::run(ui, &ws, &rec, &config, req, args.args)
}

fn login(ui: &mut Ui, args: LoginArgs) -> Result<u8> {
    use crate::agent::Profile;
    crate::vault::names::vault_name(&args.vault)?;
    let ws = super::workspace()?;
    let config = super::load_config(ui, &ws, None)?;
    let profile = match &args.agent {
        Some(name) => Profile::of(std::slice::from_ref(name)),
        None => Profile::of(&config.settings().agent.command),
    };
    if profile == Profile::Plain {
        return Err(Error::usage(format!(
            "agent.command is {:?}, an agent git loop has no login for",
            config.settings().agent.command
        ))
        .hint("store the variable that agent reads yourself: printf %s KEY | git loop vault set VAULT env NAME")
        .hint("or name a known agent: git loop agent login --agent claude|codex"));
    }
    let hosts = match (&args.hosts, args.unbound) {
        (Some(list), _) => crate::vault::binding::parse_hosts(list).map_err(|why| {
            Error::usage(format!("--for: {why}"))
                .hint("give host names, *.example.com or name.*.example.com, separated by commas")
        })?,
        (None, true) => Default::default(),
        (None, false) => crate::vault::binding::parse_hosts(profile.api_hosts())
            .expect("the agents' API hosts are valid"),
    };
    if hosts.is_empty() && config.settings().vault.require_binding {
        return Err(Error::usage(
            "--unbound: vault.require_binding is set, so every entry must be bound to hosts",
        )
        .hint(format!(
            "drop --unbound to bind the key to {}",
            profile.api_hosts()
        )));
    }
    let key = crate::ui::read_secret(
        ui,
        &format!("API key or token for {} (not shown): ", profile.name()),
        crate::vault::MAX_ENV_BYTES,
    )
    .map_err(|e| Error::failure("cannot read the key from stdin").with_source(e))?;
    let text = std::str::from_utf8(&key)
        .map(str::trim)
        .unwrap_or_default()
        .to_string();
    let text = zeroize::Zeroizing::new(text);
    if text.is_empty() {
        return Err(
            Error::usage(format!("no key for {} on stdin", profile.name()))
                .hint("pipe it in: printf %s KEY | git loop agent login, or type it when asked"),
        );
    }
    let entry = crate::agent::login_entry(profile, &text)?;
    let variable = entry.name.clone();
    let v = crate::vault::open_for_write(ui, &ws, &args.vault)?;
    let replaced = crate::agent::store_login(&ws, &v, profile, &entry, &text, &hosts)?;
    for other in replaced {
        ui.status(format!(
            "removed {other} from vault '{}' (replaced by {variable})",
            args.vault
        ))?;
    }
    crate::vault::commit(
        &ws,
        &format!("vault {}: login for {}", args.vault, profile.name()),
    )?;
    ui.status(format!(
        "stored {variable} for {} in vault '{}'",
        profile.name(),
        args.vault
    ))?;
    if hosts.is_empty() {
        ui.warn(format!(
            "{variable} is unbound: the key itself goes into every sandbox of vault '{}'",
            args.vault
        ))?;
    } else {
        ui.status(format!(
            "{variable} is bound to {}: the sandbox gets a placeholder, and the proxy puts the key into HTTPS requests to {} only",
            hosts.hosts_text(),
            if hosts.hosts.len() == 1 { "it" } else { "them" }
        ))?;
    }
    crate::vault::say_scope(
        ui,
        &ws,
        &args.vault,
        &config.settings().vault.default,
        &format!("the login ({variable})"),
    )?;
    Ok(0)
}
