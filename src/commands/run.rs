use crate::error::{Error, Result};
use crate::loops;
use crate::sandbox;
use crate::ui::Ui;

/// Run a command in a loop's sandbox.
///
/// The command starts in /loopat/loop/<id>/workdir and sees exactly the loop's view (see
/// `git loop show ID --mounts`). Its exit code is git loop's. Afterwards the loop's
/// branches are imported into their origins.
#[derive(Debug, clap::Args)]
#[command(trailing_var_arg = true)]
pub struct RunArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    #[command(flatten)]
    pub sandbox: super::SandboxFlags,
    /// Print the bwrap command line that builds the sandbox instead of running it (a run
    /// makes the binds below a folder bound by path itself, once bwrap's are made: the same view).
    #[arg(long)]
    pub print_argv: bool,
    /// End the command after this long (90s, 5m, 1h30m; a number is seconds): it exits
    /// with 124 and its exit event says `cause: "timeout"`.
    #[arg(long, value_name = "DURATION", value_parser = crate::session::timer::parse)]
    pub timeout: Option<std::time::Duration>,
    /// The command and its arguments (after `--`).
    #[arg(required = true, allow_hyphen_values = true, value_name = "CMD", value_hint = clap::ValueHint::CommandWithArguments)]
    pub command: Vec<String>,
}

pub fn run(ui: &mut Ui, args: RunArgs) -> Result<u8> {
    args.sandbox.check()?;
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    // A live session: the command joins it, and reads nothing else (its sandbox is made).
    if !args.print_argv {
        if let Some(conn) = super::up::connect(&ws, &id)? {
            super::up::refuse_options(&id, &args.sandbox)?;
            return super::up::joined(
                ui,
                &ws,
                &id,
                conn,
                crate::session::wire::Exec {
                    kind: "run".into(),
                    argv: args.command,
                    timeout_ms: args.timeout.map(|t| t.as_millis() as u64),
                    term: super::up::term(),
                    ..Default::default()
                },
            );
        }
    }
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_sandbox_config(ui, &ws, &rec)?;
    if args.command.is_empty() {
        return Err(Error::usage("no command given").hint("git loop run ID -- CMD [ARGS...]"));
    }
    let mut req = args.sandbox.request(args.command, false, args.print_argv);
    req.timeout = args.timeout.or(config.profile().time);
    sandbox::run(ui, &ws, &rec, &config, &req)
}
