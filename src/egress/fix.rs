//! What a refusal tells the one who meets it (issue 28): the exact command that would
//! allow it, where a setting can, and what the refusal means for an agent.
//!
//! A refusal carries its fix as data ([`Fix`], made where the policy decides); here it is
//! worded with what the run knows: the loop's id, and the lists the command must keep
//! (a `config set` of a list replaces it, so the command names what is there and the one
//! entry more). Each command is one a person can paste as it is, and after which the same
//! request goes through on the next run. The proxy's 403 bodies and violation events and
//! `git loop doctor` word them here.

use std::net::IpAddr;

use super::policy::{Fix, Pattern, Policy, Refusal, Rule};

/// The note under a refusal, by rule: what it means and who can change it.
pub fn note(refusal: &Refusal) -> &'static str {
    match refusal.rule {
        Rule::Allowlist => {
            "This is a decision of the sandbox's network policy, not a network fault: \
retrying, or reaching the host another way, will not work. If the task needs this host, say so \
and why; a person can allow it with the command above (or for one run with \
git loop run|agent ID --allow-domain NAME)."
        }
        Rule::Address => {
            "This is a decision of the sandbox's network policy, not a network fault: the host \
is allowed, but its name resolves to an address a sandbox may not reach by default (a private, \
documentation or other special-purpose range, as a private mirror or split DNS gives). \
--allow-domain changes nothing here; only the machine's operator can allow such a range, with \
the command above. If the task needs this host, say so and why."
        }
        Rule::Credential => {
            "This is a decision of the sandbox's network policy, not a network fault. The \
credential in this sandbox is a placeholder: git-loop's proxy puts the real value in only over \
HTTPS to the hosts and ports the vault entry is bound to, in the fields that carry credentials, \
and refuses it everywhere else. Use the credential with those hosts; if the task needs it \
elsewhere, say so and why (a person can bind it there with the command above)."
        }
        Rule::RawTcp => {
            "This is a decision of the sandbox's network policy, not a network fault: a tunnel \
carries TLS or HTTP, and other protocols only where the machine's operator allows them (the \
command above). If the task needs it, say so and why."
        }
        Rule::Denylist => {
            "This is a decision of the sandbox's network policy, not a network fault: the host \
or address is on the fixed denylist (cloud metadata, telemetry), which no setting lifts."
        }
        Rule::NumericHost => {
            "This is a decision of the sandbox's network policy, not a network fault: a sandbox \
reaches hosts by name only, never by address. Use the host's name (a machine's operator can pin \
a name to an address with [network.hosts] in the operator config)."
        }
        Rule::Credentials | Rule::Malformed | Rule::Mismatch | Rule::Unsupported => {
            "This is a decision of the sandbox's network policy, not a network fault: no \
setting allows this request as it is; it must name one host in every place it names one, and \
be HTTP, TLS or SOCKS5 as the proxy carries them."
        }
    }
}

/// The command that would allow `fix` under `policy`, for loop `loop_id` (`ID` when
/// none is known).
pub fn command(fix: &Fix, policy: &Policy, loop_id: &str) -> String {
    match fix {
        Fix::AllowDomain(name) => {
            // The config's list is what `network.allow_domains` holds now (its entries in
            // the policy are those from a config layer, all from the layer that set it
            // last); the loop's layer replaces it for this loop. A name that is not under a
            // registrable domain only the operator may allow: its layer's list then.
            let operator_only =
                crate::config::policy::registrable(&Pattern::Exact(name.clone())).is_err();
            let mut list: Vec<String> = policy
                .allowed()
                .iter()
                .filter(|a| {
                    a.source.starts_with("config")
                        && (!operator_only || a.source.starts_with("config (operator"))
                })
                .map(|a| a.pattern.to_string())
                .collect();
            list.push(name.clone());
            let layer = if operator_only {
                "--operator".to_string()
            } else if loop_id.is_empty() {
                "--loop ID".to_string()
            } else {
                format!("--loop {loop_id}")
            };
            format!(
                "git loop config set {layer} network.allow_domains '{}'",
                toml_list(&list)
            )
        }
        Fix::AllowAddresses { addresses, .. } => allow_addresses(policy, addresses),
        Fix::AllowRaw(target) => {
            let mut list: Vec<String> = policy
                .raw()
                .iter()
                .filter(|r| !r.source.starts_with("baseline"))
                .map(|r| format!("{}:{}", r.pattern, r.port))
                .collect();
            list.push(target.clone());
            format!(
                "git loop config set --operator network.allow_raw_tcp '{}'",
                toml_list(&list)
            )
        }
        Fix::Command(command) => command.clone(),
    }
}

/// The operator's command that lets `addresses` pass besides the ranges allowed now.
pub fn allow_addresses(policy: &Policy, addresses: &[IpAddr]) -> String {
    let mut list: Vec<String> = policy.cidrs().iter().map(ToString::to_string).collect();
    for ip in addresses {
        let one = single(*ip);
        if !list.contains(&one) {
            list.push(one);
        }
    }
    format!(
        "git loop config set --operator network.allow_cidrs '{}'",
        toml_list(&list)
    )
}

/// The range of exactly `ip`: its IPv4 form for an IPv4-mapped address, which the
/// operator's IPv4 ranges cover (policy.rs).
fn single(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(a) => format!("{a}/32"),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(v4) => format!("{v4}/32"),
            None => format!("{a}/128"),
        },
    }
}

/// `["a", "b"]`: host names, ranges and `host:port` need no escaping in TOML or in the
/// single quotes around it.
fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fix_is_a_command_that_keeps_what_is_there() {
        let mut policy = Policy::baseline();
        policy.add(
            Pattern::parse("kept.example").unwrap(),
            "config (operator, /x/config.toml)",
        );
        policy.add(Pattern::parse("once.example").unwrap(), "--allow-domain");
        policy.allow_cidr("127.0.0.0/8".parse().unwrap());
        policy.allow_raw(
            crate::egress::policy::RawAllowed::parse("git.example:22", "config (operator)")
                .unwrap(),
        );
        let word = |r: &Refusal| r.fix.as_ref().map(|f| command(f, &policy, "demo-1a2b3c"));
        let refused = policy.check_host("new.example").unwrap_err();
        assert_eq!(
            word(&refused).unwrap(),
            "git loop config set --loop demo-1a2b3c network.allow_domains '[\"kept.example\", \"new.example\"]'"
        );
        // A name only the operator may allow (a public suffix's own) goes to its layer.
        let refused = policy.check_host("github.io").unwrap_err();
        assert_eq!(
            word(&refused).unwrap(),
            "git loop config set --operator network.allow_domains '[\"kept.example\", \"github.io\"]'"
        );
        let refused = policy
            .check_addr("192.0.2.10".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            word(&refused).unwrap(),
            "git loop config set --operator network.allow_cidrs '[\"127.0.0.0/8\", \"192.0.2.10/32\"]'"
        );
        let mapped = policy
            .check_addr("::ffff:10.1.2.3".parse().unwrap())
            .unwrap_err();
        assert!(word(&mapped).unwrap().ends_with("\"10.1.2.3/32\"]'"));
        let raw = Refusal::new(Rule::RawTcp, "x").with_fix(Fix::AllowRaw("h.example:25".into()));
        assert_eq!(
            word(&raw).unwrap(),
            "git loop config set --operator network.allow_raw_tcp '[\"git.example:22\", \"h.example:25\"]'"
        );
        // Nothing allows the denylist.
        let denied = policy
            .check_addr("169.254.169.254".parse().unwrap())
            .unwrap_err();
        assert_eq!(word(&denied), None);
        assert!(note(&denied).contains("no setting lifts"));
        assert!(note(&refused).contains("--allow-domain changes nothing"));
    }
}
