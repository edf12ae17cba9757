//! Egress: what a sandbox in the `proxy` network mode may reach, and the proxy that
//! enforces it (DESIGN 4.5).
//!
//! - [`policy`]: pure: host canonicalisation, the allowlist matcher, the fixed denylist,
//!   address checks, the operator's pins and CIDRs; the baseline is `baseline.toml`;
//! - [`wire`]: pure parsers of what clients send (HTTP heads, SOCKS5, TLS ClientHello);
//! - [`http1`]: pure HTTP/1.x framing, so that every request on a connection is checked;
//! - [`proxy`]: the host side, one thread of the supervising `git-loop` per run;
//! - [`relay`]: the sandbox side: the handover of the proxy ports, `git-loop __connect`;
//! - [`sentinel`]: pure: the placeholders of bound vault entries, and where their values
//!   may go;
//! - [`intercept`]: the proxy's end of TLS toward hosts a vault entry is bound to, with a
//!   CA of the run's own, and the requests carried from there with hyper;
//! - [`fix`]: a refusal's fix worded as the command that applies it.
//!
//! [`policy_for`] assembles a run's policy from its sources: the baseline, the loop's
//! sandbox profile, the config's `network.allow_domains`, `--allow-domain`, and the
//! operator-only `network.hosts`, `network.allow_cidrs` (the only ways to widen what
//! addresses the proxy reaches) and `network.allow_raw_tcp` (which hosts and ports a
//! tunnel may carry other protocols than TLS and HTTP to).

pub mod fix;
pub mod http1;
pub mod intercept;
pub mod policy;
pub mod proxy;
pub mod relay;
pub mod sentinel;
pub mod wire;

use crate::config::{Config, SandboxProfile};
use crate::error::Result;
use policy::{Pattern, Policy};

/// Why the run's egress policy cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A `--allow-domain` that is not a pattern (why).
    #[error("--allow-domain: {0}")]
    AllowDomain(String),
    /// A pin of `[network.hosts]` that cannot be (why).
    #[error("the operator config's [network.hosts] is malformed")]
    Hosts(String),
}

/// The addresses `host` (canonical) stands for, as the proxy finds them: the operator's
/// pin if there is one, else the system's resolver (what the proxy asks too, from its
/// blocking pool). Resolution only: nothing is connected to.
pub fn resolve(policy: &Policy, host: &str) -> std::result::Result<Vec<std::net::IpAddr>, String> {
    use std::net::ToSocketAddrs;
    if let Some(ip) = policy.pinned(host) {
        return Ok(vec![ip]);
    }
    let found = (host, 443)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut ips: Vec<std::net::IpAddr> = Vec::new();
    for a in found {
        if !ips.contains(&a.ip()) {
            ips.push(a.ip());
        }
    }
    if ips.is_empty() {
        return Err(format!("cannot resolve {host}: no address"));
    }
    Ok(ips)
}

/// The policy of a run of a loop with sandbox profile `profile`, plus `extra` patterns
/// from the command line. The config's patterns and the profile's are already held to
/// their layer's rules (only names under a registrable domain outside the operator's).
pub fn policy_for(profile: &SandboxProfile, config: &Config, extra: &[String]) -> Result<Policy> {
    let mut policy = Policy::baseline();
    for pattern in &profile.allow_domains {
        policy.add(pattern.clone(), format!("profile {}", profile.name));
    }

    let settings = config.settings();
    if let Some(entry) = config.get("network.allow_domains") {
        let source = match entry.path {
            Some(p) => format!("config ({}, {})", entry.layer, p.display()),
            None => format!("config ({})", entry.layer),
        };
        for pattern in &settings.network.allow_domains {
            policy.add(pattern.clone(), source.clone());
        }
    }

    for raw in extra {
        let pattern = Pattern::parse(raw).map_err(PolicyError::AllowDomain)?;
        policy.add(pattern, "--allow-domain");
    }

    for (name, ip) in &settings.network.hosts {
        policy.pin(name, *ip).map_err(PolicyError::Hosts)?;
    }
    for cidr in &settings.network.allow_cidrs {
        policy.allow_cidr(*cidr);
    }
    // Operator-only (config::policy): carrying uninspected bytes is the machine owner's
    // decision, whatever a team or personal layer says.
    for raw in &settings.network.allow_raw_tcp {
        policy.allow_raw(raw.clone());
    }
    Ok(policy)
}
