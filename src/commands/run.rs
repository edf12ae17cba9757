use crate::error::{Error, Result};
use crate::loops;
use crate::sandbox::spec::{NetMode, RunMode};
use crate::sandbox::{self, Backend, Request};
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
    /// work: the loop's folders are writable; review: everything read-only but $HOME and /tmp.
    #[arg(long, value_enum)]
    pub mode: Option<RunMode>,
    /// proxy: only the allowed domains, through git-loop's proxy (the default); host: the
    /// host's network; none: loopback only.
    #[arg(long, value_enum)]
    pub net: Option<NetMode>,
    /// Let the proxy also reach this domain for this run (repeatable): a host name,
    /// *.example.com (its subdomains) or name.*.example.com (one label).
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// auto: bwrap if the probe passes, else refuse; none: no sandbox at all.
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
    /// Print the exact bwrap command line instead of running it.
    #[arg(long)]
    pub print_argv: bool,
    /// The command and its arguments (after `--`).
    #[arg(required = true, allow_hyphen_values = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(ui: &mut Ui, args: RunArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_config(ui, &ws, Some(&rec))?;
    if args.command.is_empty() {
        return Err(Error::usage("no command given").hint("git loop run ID -- CMD [ARGS...]"));
    }
    sandbox::run(
        ui,
        &ws,
        &rec,
        &config,
        &Request {
            mode: args.mode,
            net: args.net,
            backend: args.backend,
            print_argv: args.print_argv,
            command: args.command,
            interactive: false,
            ro_same_path: Vec::new(),
            allow_domains: args.allow_domain,
        },
    )
}
