//! Egress: what a sandbox in the `proxy` network mode may reach, and the proxy that
//! enforces it (DESIGN 4.5).
//!
//! - [`policy`]: pure: host canonicalisation, the allowlist matcher, the fixed denylist,
//!   address checks, the operator's pins and CIDRs; the baseline is `baseline.toml`;
//! - [`wire`]: pure parsers of what clients send (HTTP heads, SOCKS5, TLS ClientHello);
//! - [`http1`]: pure HTTP/1.x framing, so that every request on a connection is checked;
//! - [`proxy`]: the host side, one thread of the supervising `git-loop` per run;
//! - [`relay`]: the sandbox side: the handover of the proxy ports, `git-loop __connect`.
//!
//! [`policy_for`] assembles a run's policy from its sources: the baseline, the loop's
//! sandbox profile, the config's `network.allow_domains`, `--allow-domain`, and the
//! operator-only `network.hosts`, `network.allow_cidrs` (the only ways to widen what
//! addresses the proxy reaches) and `network.allow_raw_tcp` (which hosts and ports a
//! tunnel may carry other protocols than TLS and HTTP to).

pub mod http1;
pub mod policy;
pub mod proxy;
pub mod relay;
pub mod wire;

use std::net::IpAddr;

use crate::config::{Config, Layer};
use crate::error::{Error, Result};
use crate::workspace::Workspace;
use policy::{Cidr, Pattern, Policy, RawAllowed};

/// The policy of a run of a loop with sandbox profile `profile`, plus `extra` patterns
/// from the command line.
pub fn policy_for(
    ws: &Workspace,
    profile: &str,
    config: &Config,
    extra: &[String],
) -> Result<Policy> {
    let mut policy = Policy::baseline();

    let path = ws.sandbox_profile(profile);
    let table = crate::config::read_table(&path).map_err(|e| {
        Error::failure(format!("cannot read sandbox profile '{profile}'"))
            .with_source(e)
            .hint(format!("fix {}", path.display()))
    })?;
    let profile_list = table.get("network").and_then(|n| n.get("allow_domains"));
    for pattern in patterns(profile_list, || {
        format!("{} [network] allow_domains", path.display())
    })? {
        policy.add(pattern, format!("profile {profile}"));
    }

    if let Some(entry) = config.get("network.allow_domains") {
        let source = match entry.path {
            Some(p) => format!("config ({}, {})", entry.layer, p.display()),
            None => format!("config ({})", entry.layer),
        };
        for pattern in patterns(Some(entry.value), || {
            format!("network.allow_domains in {source}")
        })? {
            policy.add(pattern, source.clone());
        }
    }

    for raw in extra {
        let pattern = Pattern::parse(raw).map_err(|why| {
            Error::usage(format!("--allow-domain: {why}"))
                .hint("give a host name, *.example.com (its subdomains) or name.*.example.com (one label)")
        })?;
        policy.add(pattern, "--allow-domain");
    }

    let operator = |what: &str| {
        Error::failure(format!("the operator config's {what} is malformed"))
            .hint("write [network.hosts] \"name.example\" = \"10.1.2.3\" and [network] allow_cidrs = [\"10.1.0.0/16\"]")
    };
    if let Some(entry) = config.get("network.hosts") {
        let table = entry
            .value
            .as_table()
            .ok_or_else(|| operator("[network.hosts]"))?;
        for (name, addr) in table {
            let ip: IpAddr = addr.as_str().and_then(|a| a.parse().ok()).ok_or_else(|| {
                operator("[network.hosts]").hint(format!("'{name}' needs an IP address"))
            })?;
            policy
                .pin(name, ip)
                .map_err(|why| operator("[network.hosts]").hint(why))?;
        }
    }
    if let Some(entry) = config.get("network.allow_cidrs") {
        let list = entry
            .value
            .as_array()
            .ok_or_else(|| operator("allow_cidrs"))?;
        for c in list {
            let cidr: Cidr = c
                .as_str()
                .ok_or_else(|| operator("allow_cidrs"))?
                .parse()
                .map_err(|why: String| operator("allow_cidrs").hint(why))?;
            policy.allow_cidr(cidr);
        }
    }
    // Read from the operator's file alone: carrying uninspected bytes is the machine
    // owner's decision, whatever a team or personal layer says.
    let operator_raw = config
        .layers()
        .iter()
        .filter(|l| l.layer == Layer::Operator)
        .find_map(|l| l.table.get("network")?.get("allow_raw_tcp"));
    if let Some(value) = operator_raw {
        let raw_hint = "write [network] allow_raw_tcp = [\"git.example.com:22\"] (host:port)";
        let list = value
            .as_array()
            .ok_or_else(|| operator("allow_raw_tcp").hint(raw_hint))?;
        for v in list {
            let raw = v
                .as_str()
                .ok_or_else(|| operator("allow_raw_tcp").hint(raw_hint))
                .and_then(|s| {
                    RawAllowed::parse(s, "operator allow_raw_tcp")
                        .map_err(|why| operator("allow_raw_tcp").hint(why))
                })?;
            policy.allow_raw(raw);
        }
    }
    Ok(policy)
}

fn patterns(value: Option<&toml::Value>, place: impl Fn() -> String) -> Result<Vec<Pattern>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let list = value.as_array().ok_or_else(|| {
        Error::failure(format!("{} is not a list", place()))
            .hint("write allow_domains = [\"example.com\", \"*.example.org\"]")
    })?;
    list.iter()
        .map(|v| {
            let raw = v.as_str().unwrap_or_default();
            Pattern::parse(raw).map_err(|why| {
                Error::failure(format!("{}: {why}", place()))
                    .hint("give a host name, *.example.com (its subdomains) or name.*.example.com (one label)")
            })
        })
        .collect()
}
