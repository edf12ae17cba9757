use crate::egress::relay;
use crate::error::{Error, Result};
use crate::ui::Ui;

/// Inside a `proxy` sandbox only: ssh's ProxyCommand (GIT_SSH_COMMAND) through the
/// sandbox's SOCKS5 proxy.
#[derive(Debug, clap::Args)]
pub struct ConnectArgs {
    pub host: String,
    pub port: u16,
}

pub fn run_connect(_ui: &mut Ui, args: ConnectArgs) -> Result<u8> {
    // A process of git-loop's inside the sandbox: nothing else there reads or writes its memory.
    crate::sandbox::init::not_dumpable();
    relay::connect(&args.host, args.port).map_err(|e| {
        Error::failure(format!("cannot connect to {}:{}", args.host, args.port))
            .with_source(e)
            .hint("only the domains of the sandbox's allowlist are reachable (`git loop show ID --net`)")
    })?;
    Ok(0)
}
