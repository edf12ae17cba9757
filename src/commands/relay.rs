use std::ffi::OsString;

use crate::egress::relay;
use crate::error::{Error, ErrorKind, Result};
use crate::ui::Ui;

/// Inside a `proxy` sandbox only: hand the proxy ports to git-loop, then run CMD.
/// git-loop starts this itself as the sandbox's first process.
#[derive(Debug, clap::Args)]
#[command(trailing_var_arg = true)]
pub struct RelayArgs {
    /// The inherited descriptor of the channel to git-loop's proxy.
    #[arg(long)]
    pub fd: i32,
    /// The command to run once the proxy is ready.
    #[arg(required = true, allow_hyphen_values = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

pub fn run(ui: &mut Ui, args: RelayArgs) -> Result<u8> {
    let err = relay::relay(args.fd, &args.command);
    // Like a shell: 127 for a command that does not exist, 126 for one that cannot run;
    // a proxy that cannot be set up is the sandbox being unavailable (3).
    let (code, hint) = match &err {
        relay::RelayError::Exec { source, .. } => (
            if source.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            },
            "check the command's name and that it is installed in the sandbox",
        ),
        _ => (
            ErrorKind::SandboxUnavailable.exit_code(),
            "`git loop run ID --net none` runs without the network proxy",
        ),
    };
    let mut line = err.to_string();
    if let Some(cause) = std::error::Error::source(&err) {
        line.push_str(&format!(": {cause}"));
    }
    writeln!(ui.err(), "error: {line}")?;
    writeln!(ui.err(), "hint: {hint}")?;
    Ok(code)
}

/// Inside a `proxy` sandbox only: ssh's ProxyCommand (GIT_SSH_COMMAND) through the
/// sandbox's SOCKS5 proxy.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    pub host: String,
    pub port: u16,
}

pub fn run_connect(_ui: &mut Ui, args: ConnectArgs) -> Result<u8> {
    relay::connect(&args.host, args.port).map_err(|e| {
        Error::failure(format!("cannot connect to {}:{}", args.host, args.port))
            .with_source(e)
            .hint("only the domains of the sandbox's allowlist are reachable (`git loop show ID --net`)")
    })?;
    Ok(0)
}
