//! The sandbox options `run`, `shell` and `agent` share, and their checks.

use crate::error::Result;

/// The sandbox options `run`, `shell` and `agent` share.
#[derive(Debug, Default, clap::Args)]
pub struct SandboxFlags {
    /// work: the loop's folders are writable; review: everything read-only but $HOME and /tmp.
    #[arg(long, value_enum)]
    pub mode: Option<crate::values::RunMode>,
    /// proxy: only the allowed domains, through git-loop's proxy (the default); host: the
    /// host's network; none: loopback only.
    #[arg(long, value_enum)]
    pub net: Option<crate::values::NetMode>,
    /// Let the proxy also reach this domain for this run (repeatable): a host name,
    /// *.example.com (its subdomains) or name.*.example.com (one label).
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    pub allow_domain: Vec<String>,
    /// auto: bwrap if the probe passes, else refuse; none: no sandbox at all.
    #[arg(long, value_enum)]
    pub backend: Option<crate::values::Backend>,
}

impl SandboxFlags {
    /// Refuses options that contradict each other, before anything else is looked at:
    /// `--allow-domain` widens the proxy's allowlist, and `--net host` or `--net none`
    /// has no proxy, so the domain would be silently ignored (or, with host, everything
    /// is reachable anyway).
    pub fn check(&self) -> Result<()> {
        use crate::values::NetMode;
        let (Some(net @ (NetMode::Host | NetMode::None)), Some(domain)) =
            (self.net, self.allow_domain.first())
        else {
            return Ok(());
        };
        let name = match net {
            NetMode::Host => "host",
            _ => "none",
        };
        Err(crate::Error::usage(format!(
            "--allow-domain {domain} has no effect with --net {name}: only the proxy (--net proxy) has an allowlist"
        ))
        .hint("drop --allow-domain, or use --net proxy (the default) to reach only the allowed domains"))
    }

    /// The sandbox request for `command` with these options.
    pub fn request(
        self,
        command: Vec<String>,
        interactive: bool,
        print_argv: bool,
    ) -> crate::sandbox::Request {
        crate::sandbox::Request {
            mode: self.mode,
            net: self.net,
            backend: self.backend,
            print_argv,
            command,
            interactive,
            ro_same_path: Vec::new(),
            allow_domains: self.allow_domain,
            agent_env: Vec::new(),
            session: None,
            timeout: None,
        }
    }
}
