use crate::error::Result;
use crate::loops;
use crate::sandbox::spec::{NetMode, RunMode};
use crate::sandbox::{self, Backend, Request};
use crate::ui::Ui;

/// Open an interactive shell ($SHELL, else bash) in a loop's sandbox.
///
/// The shell keeps your terminal (job control and resizing work); pushing characters into
/// it (TIOCSTI) is refused by the sandbox's seccomp filter.
#[derive(Debug, clap::Args)]
pub struct ShellArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    #[arg(long, value_enum)]
    pub mode: Option<RunMode>,
    #[arg(long, value_enum)]
    pub net: Option<NetMode>,
    /// Let the proxy also reach this domain for this run (repeatable): a host name,
    /// *.example.com (its subdomains) or name.*.example.com (one label).
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    #[arg(long, value_enum)]
    pub backend: Option<Backend>,
}

pub fn run(ui: &mut Ui, args: ShellArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let rec = loops::load(&ws, &id)?;
    loops::check_repo(&ws, &rec)?;
    let config = super::load_config(ui, &ws, Some(&rec))?;
    // Only a shell the sandbox has: /bin/sh-like paths under /usr exist inside.
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| s.starts_with("/usr/") || s.starts_with("/bin/"))
        .unwrap_or_else(|| "/bin/bash".into());
    sandbox::run(
        ui,
        &ws,
        &rec,
        &config,
        &Request {
            mode: args.mode,
            net: args.net,
            backend: args.backend,
            print_argv: false,
            command: vec![shell],
            interactive: true,
            ro_same_path: Vec::new(),
            allow_domains: args.allow_domain,
        },
    )
}
