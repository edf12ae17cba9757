//! The network a sandbox reaches through its proxy (issue 28): the names work needs (the
//! baseline's package registries and git hosts, the agent's API host, every name the
//! default sandbox profile and the config allow exactly) and every operator pin, resolved
//! as the proxy resolves them and judged by the proxy's own address checks. A name that
//! resolves to an address the proxy would refuse (a private mirror, split DNS, a
//! documentation range) is a problem, with the one command that allows every such
//! address. Resolution only: nothing is connected to. The baseline's other names (every
//! region of a cloud's LLM service) are left out: dozens of lookups would make `doctor`
//! slow wherever DNS is.

use std::net::IpAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::egress::policy::{Fix, Pattern, Policy, Rule};
use crate::error::Result;
use crate::values::NetMode;
use crate::workspace::Workspace;

use super::{finding, Finding, Level};

/// How long all the names together may take to resolve; a name without an answer by then
/// is said to be one.
const RESOLVE_BUDGET: Duration = Duration::from_secs(5);
/// Names resolved at once.
const AT_ONCE: usize = 8;

/// The baseline's groups whose names are checked.
const CHECKED_GROUPS: &[&str] = &["baseline (package registries)", "baseline (git hosting)"];
/// Names listed in one line before "and N more".
const LISTED: usize = 6;

/// What the proxy would do with one name.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Reached,
    /// Refused: the reason, and the addresses an operator's range would have to cover
    /// (none: nothing can allow it, as the denylist).
    Refused {
        reason: String,
        allow: Vec<IpAddr>,
    },
    /// No answer (no DNS here, an unknown name, or the budget spent).
    Unresolved(String),
}

pub(super) fn check_network(ws: &Workspace, config: &Config, out: &mut Vec<Finding>) -> Result<()> {
    let settings = config.settings();
    if settings.network.mode != NetMode::Proxy {
        out.push(finding(
            "network",
            Level::Info,
            format!(
                "sandboxes run with network {} (no proxy): the allowlist's names are not checked",
                settings.network.mode.name()
            ),
            None,
        ));
        return Ok(());
    }
    let mut config = config.clone();
    let profile = settings.sandbox.profile.clone();
    if let Err(e) = config.load_profile(ws, &profile) {
        out.push(finding(
            "network",
            Level::Problem,
            format!("the default sandbox profile '{profile}' cannot be read: {e}"),
            None,
        ));
        return Ok(());
    }
    let policy = crate::egress::policy_for(config.profile(), &config, &[])?;
    let agent = crate::agent::Profile::of(&settings.agent.command).api_hosts();
    let mut names: Vec<String> = policy
        .allowed()
        .iter()
        .filter(|a| {
            !a.source.starts_with("baseline") || CHECKED_GROUPS.contains(&a.source.as_str())
        })
        .filter_map(|a| match &a.pattern {
            Pattern::Exact(name) => Some(name.clone()),
            _ => None,
        })
        .chain(
            agent
                .split(',')
                .filter(|h| !h.is_empty())
                .map(str::to_string),
        )
        .chain(policy.hosts().keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    let verdicts = judge_all(&policy, &names);
    report(&policy, &verdicts, out);
    Ok(())
}

/// Each name resolved (in parallel, within [`RESOLVE_BUDGET`]) and judged.
fn judge_all(policy: &Policy, names: &[String]) -> Vec<(String, Verdict)> {
    let deadline = Instant::now() + RESOLVE_BUDGET;
    let shared = std::sync::Arc::new(policy.clone());
    let (tx, rx) = mpsc::channel::<(usize, Result<Vec<IpAddr>, String>)>();
    let mut results: Vec<Option<Result<Vec<IpAddr>, String>>> = vec![None; names.len()];
    let mut next = 0;
    let mut running = 0;
    let mut received = 0;
    while received < names.len() {
        while running < AT_ONCE && next < names.len() {
            let (tx, name, policy) = (tx.clone(), names[next].clone(), shared.clone());
            let i = next;
            // A lookup that does not answer is left behind when the budget is spent: the
            // system's resolver cannot be interrupted.
            let spawned = std::thread::Builder::new()
                .name("git-loop-resolve".into())
                .stack_size(256 * 1024)
                .spawn(move || {
                    let _ = tx.send((i, crate::egress::resolve(&policy, &name)));
                });
            if spawned.is_err() {
                results[i] = Some(Err(format!("cannot resolve {}: no thread", names[i])));
                received += 1;
            } else {
                running += 1;
            }
            next += 1;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, r)) => {
                results[i] = Some(r);
                running -= 1;
                received += 1;
            }
            Err(_) => break,
        }
    }
    names
        .iter()
        .zip(results)
        .map(|(name, r)| {
            let verdict = match r {
                None => Verdict::Unresolved(format!(
                    "{name}: no answer within {}s",
                    RESOLVE_BUDGET.as_secs()
                )),
                Some(Err(why)) => Verdict::Unresolved(why),
                Some(Ok(addrs)) => match policy.check_addrs(&addrs) {
                    Ok(()) => Verdict::Reached,
                    Err(r) => Verdict::Refused {
                        reason: r.reason.clone(),
                        allow: match (r.rule, r.fix) {
                            (Rule::Address, Some(Fix::AllowAddresses { addresses, .. })) => {
                                addresses
                            }
                            _ => Vec::new(),
                        },
                    },
                },
            };
            (name.clone(), verdict)
        })
        .collect()
}

fn listed(names: &[&str]) -> String {
    let mut text = names
        .iter()
        .take(LISTED)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED {
        text.push_str(&format!(" and {} more", names.len() - LISTED));
    }
    text
}

/// The findings: one problem for the names whose addresses an operator's range can allow
/// (with the one command that allows them all), one for those nothing allows, and what
/// resolves fine or not at all.
fn report(policy: &Policy, verdicts: &[(String, Verdict)], out: &mut Vec<Finding>) {
    let reached: Vec<&str> = verdicts
        .iter()
        .filter(|(_, v)| *v == Verdict::Reached)
        .map(|(n, _)| n.as_str())
        .collect();
    let unresolved: Vec<&str> = verdicts
        .iter()
        .filter(|(_, v)| matches!(v, Verdict::Unresolved(_)))
        .map(|(n, _)| n.as_str())
        .collect();
    let mut allowable: Vec<String> = Vec::new();
    let mut addresses: Vec<IpAddr> = Vec::new();
    let mut never: Vec<String> = Vec::new();
    for (name, v) in verdicts {
        if let Verdict::Refused { reason, allow } = v {
            if allow.is_empty() {
                never.push(format!("{name} ({reason})"));
            } else {
                allowable.push(format!("{name} ({reason})"));
                for a in allow {
                    if !addresses.contains(a) {
                        addresses.push(*a);
                    }
                }
            }
        }
    }
    if !allowable.is_empty() {
        out.push(finding(
            "network",
            Level::Problem,
            format!(
                "the proxy would refuse {} allowed name{} here: {}",
                allowable.len(),
                if allowable.len() == 1 { "" } else { "s" },
                allowable.join("; ")
            ),
            Some(crate::egress::fix::allow_addresses(policy, &addresses)),
        ));
    }
    if !never.is_empty() {
        out.push(finding(
            "network",
            Level::Problem,
            format!(
                "the proxy refuses {} allowed name{} here whatever is set: {}",
                never.len(),
                if never.len() == 1 { "" } else { "s" },
                never.join("; ")
            ),
            Some(
                "point the name elsewhere (DNS, or a pin in the operator config's [network.hosts])"
                    .into(),
            ),
        ));
    }
    if !reached.is_empty() {
        out.push(finding(
            "network",
            Level::Ok,
            format!(
                "{} allowed name{} to addresses the proxy reaches ({})",
                reached.len(),
                if reached.len() == 1 {
                    " resolves"
                } else {
                    "s resolve"
                },
                listed(&reached)
            ),
            None,
        ));
    }
    if !unresolved.is_empty() {
        out.push(finding(
            "network",
            Level::Info,
            format!(
                "{} allowed name{} not resolve here, so sandboxes cannot reach {} either: {}",
                unresolved.len(),
                if unresolved.len() == 1 {
                    " does"
                } else {
                    "s do"
                },
                if unresolved.len() == 1 { "it" } else { "them" },
                listed(&unresolved)
            ),
            None,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_judged_by_the_proxys_checks_and_the_fix_covers_them_all() {
        let mut policy = Policy::baseline();
        policy
            .pin("doc.test", "192.0.2.10".parse().unwrap())
            .unwrap();
        policy.pin("lan.test", "10.1.2.3".parse().unwrap()).unwrap();
        policy
            .pin("meta.test", "169.254.169.254".parse().unwrap())
            .unwrap();
        policy
            .pin("open.test", "127.0.0.1".parse().unwrap())
            .unwrap();
        policy.allow_cidr("127.0.0.0/8".parse().unwrap());
        let names: Vec<String> = ["doc.test", "lan.test", "meta.test", "open.test"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let verdicts = judge_all(&policy, &names);
        assert_eq!(verdicts[3].1, Verdict::Reached);
        assert!(matches!(&verdicts[2].1, Verdict::Refused { allow, .. } if allow.is_empty()));
        let mut out = Vec::new();
        report(&policy, &verdicts, &mut out);
        let problems: Vec<&Finding> = out.iter().filter(|f| f.level == Level::Problem).collect();
        assert_eq!(problems.len(), 2, "{out:?}");
        assert!(
            problems[0].message.contains(
                "doc.test (the name resolves to 192.0.2.10, a documentation (RFC 5737) address)"
            ),
            "{}",
            problems[0].message
        );
        assert_eq!(
            problems[0].fix.as_deref(),
            Some("git loop config set --operator network.allow_cidrs '[\"127.0.0.0/8\", \"192.0.2.10/32\", \"10.1.2.3/32\"]'")
        );
        assert!(
            problems[1].message.contains("meta.test"),
            "{}",
            problems[1].message
        );
        assert!(out
            .iter()
            .any(|f| f.level == Level::Ok && f.message.contains("open.test")));
    }
}
