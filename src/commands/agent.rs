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
///
/// Given a fan-out's group (`git loop new --fan-out N`), the agent runs in each of its
/// loops: with --detach in each one's live session, all at once; else one after another.
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
    /// Print the bwrap command line that builds the sandbox instead of running it (a run
    /// makes the binds below a folder bound by path itself, once bwrap's are made: the same view).
    #[arg(long)]
    pub print_argv: bool,
    /// Start the agent in the loop's live session (starting the session if needed) and
    /// return: it keeps running with nobody attached. `git loop attach ID` shows it;
    /// Ctrl-b then d detaches again (tmux's keys).
    #[arg(long, conflicts_with = "print_argv")]
    pub detach: bool,
    /// Give the agent the loop's open review comments (`git loop comment`), each with its
    /// file, lines and hunk, to answer with a commit (trailer `Addresses-Comment: ID`) or a
    /// reply; the agent runs once (Claude Code --print, Codex exec, any other command with
    /// the task as its last argument), and its replies are recorded.
    #[arg(long, conflicts_with_all = ["print_argv", "detach"])]
    pub address_review: bool,
    /// Start a known agent that has no login in the loop's vault (it then asks for one
    /// itself).
    #[arg(long)]
    pub no_login: bool,
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
    let query = args.id.clone().unwrap_or_default();
    let ids = match crate::fanout::resolve(&ws, &query)? {
        crate::fanout::Target::Loop(id) => return one(ui, &ws, &id, args),
        crate::fanout::Target::Group(_, ids) => ids,
    };
    // A group: with --detach each loop's agent starts in its live session and they all
    // run at once; without, one after another in this terminal.
    let n = ids.len();
    let mut worst = 0;
    let mut failed = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        ui.status(format!("== loop {id} ({} of {n} of group {query})", i + 1))?;
        let each = AgentArgs {
            action: None,
            id: Some(id.clone()),
            sandbox: super::SandboxFlags {
                mode: args.sandbox.mode,
                net: args.sandbox.net,
                allow_domain: args.sandbox.allow_domain.clone(),
                backend: args.sandbox.backend,
            },
            print_argv: args.print_argv,
            detach: args.detach,
            address_review: args.address_review,
            no_login: args.no_login,
            args: args.args.clone(),
        };
        match one(ui, &ws, id, each) {
            Ok(code) => worst = worst.max(code),
            Err(e) => {
                crate::report::Report::problem(ui, &format!("{id}: "), &e)?;
                failed.push(id.clone());
            }
        }
    }
    if !failed.is_empty() {
        return Err(Error::failure(format!(
            "the agent could not run in {} of the group's loops: {}",
            failed.len(),
            failed.join(", ")
        ))
        .hint("run it in each of them: git loop agent ID"));
    }
    Ok(worst)
}

/// The agent in one loop: detached in its session, given its review, joined to its
/// session, or in a sandbox of its own.
fn one(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str, args: AgentArgs) -> Result<u8> {
    if !args.print_argv {
        let rec = loops::load(ws, id)?;
        let config = super::load_config(ui, ws, Some(&rec))?;
        let profile = crate::agent::Profile::of(&config.settings().agent.command);
        refuse_unkept_permissions(profile, config.settings().agent.permissions)?;
        if !args.no_login {
            // Not logged in, a known agent would open on its own login, in a live session
            // too.
            crate::agent::check_login(ws, &rec.vault, Some(id), profile)?;
        }
    }
    if args.detach {
        return detach(ui, ws, id, args);
    }
    if args.address_review {
        return address_review(ui, ws, id, args);
    }
    if !args.print_argv {
        if let Some(conn) = super::up::connect(ws, id)? {
            super::up::refuse_options(id, &args.sandbox)?;
            return super::up::joined(
                ui,
                ws,
                id,
                conn,
                crate::session::wire::Exec {
                    kind: "agent".into(),
                    argv: args.args,
                    interactive: true,
                    term: super::up::term(),
                    ..Default::default()
                },
            );
        }
    }
    let rec = loops::load(ws, id)?;
    loops::check_repo(ws, &rec)?;
    let config = super::load_sandbox_config(ui, ws, &rec)?;
    let req = args.sandbox.request(Vec::new(), true, args.print_argv);
    let code = crate::agent::run(ui, ws, &rec, &config, req, args.args)?;
    if !args.print_argv {
        crate::fanout::agent_ended(ws, id, code);
    }
    Ok(code)
}

/// `agent.permissions = "ask"` is a promise that the agent asks before its tools run. Codex
/// keeps it only with its own sandbox on, and its own sandbox (bubblewrap in bubblewrap)
/// cannot run inside the loop's; with it off, Codex's `on-request` asks before nothing.
/// Refused rather than run with the promise silently broken.
fn refuse_unkept_permissions(
    profile: crate::agent::Profile,
    permissions: crate::config::schema::AgentPermissions,
) -> Result<()> {
    if profile == crate::agent::Profile::Codex
        && permissions == crate::config::schema::AgentPermissions::Ask
    {
        return Err(Error::failure(
            "agent.permissions = \"ask\" cannot be kept for Codex: inside the loop's sandbox Codex's own sandbox cannot run, and without it Codex asks before no command",
        )
        .hint("let the loop's sandbox be the boundary: git loop config set agent.permissions sandbox")
        .hint("or use an agent that asks inside the sandbox (Claude Code): git loop config set --operator agent.command claude"));
    }
    Ok(())
}

/// `agent --detach`: the agent in the loop's session, in its tmux, with nobody attached.
fn detach(ui: &mut Ui, ws: &crate::workspace::Workspace, id: &str, args: AgentArgs) -> Result<u8> {
    use crate::session::wire::Exec;
    let conn = match super::up::connect(ws, id)? {
        Some(conn) => {
            super::up::refuse_options(id, &args.sandbox)?;
            conn
        }
        None => {
            let rec = loops::load(ws, id)?;
            loops::check_repo(ws, &rec)?;
            super::up::start(ui, ws, id, &args.sandbox)?;
            ui.status(format!(
                "loop {id}'s session is up (git loop down {id} ends it)"
            ))?;
            super::up::connect(ws, id)?
                .ok_or_else(|| Error::failure(format!("loop {id}'s session ended as it started")))?
        }
    };
    let null = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| Error::failure("cannot open /dev/null").with_source(e))?;
    let quiet = std::os::fd::AsRawFd::as_raw_fd(&null);
    let running = Exec {
        kind: "agent-running".into(),
        ..Default::default()
    };
    if crate::session::join_with(conn, running, [quiet, quiet, quiet])? == 0 {
        return Err(
            Error::failure(format!("loop {id}'s agent already runs in its session"))
                .hint(format!("attach to it: git loop attach {id}")),
        );
    }
    let conn = super::up::connect(ws, id)?
        .ok_or_else(|| Error::failure(format!("loop {id}'s session ended")))?;
    let start = Exec {
        kind: "agent-detach".into(),
        argv: args.args,
        term: super::up::term(),
        ..Default::default()
    };
    let code = crate::session::join_with(conn, start, [quiet, 1, 2])?;
    if code != 0 {
        return Err(Error::failure(format!(
            "the agent did not start in loop {id}'s session (exit {code})"
        ))
        .hint(format!(
            "see {}",
            crate::session::log_path(ws, id).display()
        )));
    }
    ui.status(format!(
        "the agent runs in loop {id}'s session: git loop attach {id} shows it (Ctrl-b d detaches)"
    ))?;
    Ok(0)
}

/// `--address-review`: the open comments given as the agent's task, its answers taken.
/// It runs once, in the loop's live session when one is up (as `agent` joins it), else in
/// a sandbox of its own.
fn address_review(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    id: &str,
    args: AgentArgs,
) -> Result<u8> {
    use crate::review::{address, task};
    let rec = &loops::load(ws, id)?;
    loops::check_repo(ws, rec)?;
    let config = &super::load_sandbox_config(ui, ws, rec)?;
    let prepared = address::prepare(ws, rec)?;
    ui.status(format!(
        "giving the agent {} open comment{}: {}",
        prepared.given.len(),
        if prepared.given.len() == 1 { "" } else { "s" },
        prepared
            .given
            .iter()
            .map(|id| format!("#{id}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    let command = &config.settings().agent.command;
    let profile = crate::agent::Profile::of(command);
    let mut argv = args.args.clone();
    argv.extend(task::task_args(profile, command, &rec.id, &prepared.task));
    let code = match super::up::connect(ws, id)? {
        Some(conn) => {
            super::up::refuse_options(id, &args.sandbox)?;
            super::up::joined(
                ui,
                ws,
                id,
                conn,
                crate::session::wire::Exec {
                    kind: "agent".into(),
                    argv,
                    interactive: true,
                    term: super::up::term(),
                    ..Default::default()
                },
            )?
        }
        None => {
            let req = args.sandbox.request(Vec::new(), true, false);
            crate::agent::run(ui, ws, rec, config, req, argv)?
        }
    };
    crate::fanout::agent_ended(ws, id, code);
    let agent = match profile {
        crate::agent::Profile::Plain => "agent",
        known => known.name(),
    };
    let answered = address::finish(ws, rec, &prepared.given, agent)?;
    for note in &answered.notes {
        ui.warn(note)?;
    }
    for (id, commits) in &answered.committed {
        ui.status(format!("#{id}: addressed by {}", commits.join(", ")))?;
    }
    for id in &answered.replied {
        ui.status(format!("#{id}: the agent replied"))?;
    }
    for id in &answered.unanswered {
        ui.warn(format!(
            "#{id}: the agent neither committed for it nor replied"
        ))?;
    }
    ui.status(format!("see what changed: git loop review {}", rec.id))?;
    Ok(code)
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
        &v,
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
