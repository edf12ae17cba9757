//! `show --net`: the egress policy of the loop's `proxy` runs.

use super::*;
use crate::egress::policy::{AddressClass, ADDRESS_CLASSES};

/// `show --net`: the egress policy of the loop's `proxy` runs.
pub(super) fn show_net(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    rec: &loops::LoopRecord,
    json: bool,
) -> Result<u8> {
    let config = crate::commands::load_sandbox_config(ui, ws, rec)?;
    let policy = crate::egress::policy_for(config.profile(), &config, &[])?;
    if json {
        let value = serde_json::json!({
            "network": rec.network,
            "allow": policy.allowed().iter().map(|a| serde_json::json!({"domain": a.pattern.to_string(), "source": a.source})).collect::<Vec<_>>(),
            "deny": policy.denied().iter().map(|d| serde_json::json!({"domain": d.pattern.to_string(), "why": d.why})).collect::<Vec<_>>(),
            "deny_addresses": policy.denied_addresses().iter().map(|(ip, why)| serde_json::json!({"address": ip.to_string(), "why": why})).collect::<Vec<_>>(),
            "hosts": policy.hosts().iter().map(|(n, ip)| (n.clone(), serde_json::json!(ip.to_string()))).collect::<serde_json::Map<_, _>>(),
            "allow_cidrs": policy.cidrs().iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            "refused_addresses": ADDRESS_CLASSES.iter().map(|c| serde_json::json!({"range": range_text(c), "class": c.name})).collect::<Vec<_>>(),
        });
        return crate::commands::print_json(ui, &value).map(|()| 0);
    }
    let out = ui.out();
    if rec.network != crate::values::NetMode::Proxy {
        writeln!(
            out,
            "loop {} runs with network {}; this is what `--net proxy` lets it reach:",
            rec.id, rec.network
        )?;
    }
    let allowed = policy.allowed();
    let w = allowed
        .iter()
        .map(|a| a.pattern.to_string().len())
        .max()
        .unwrap_or(0)
        .max(14);
    writeln!(
        out,
        "{BOLD}{:<w$}  FROM{RESET}",
        format!("ALLOWED ({})", allowed.len())
    )?;
    for a in allowed {
        writeln!(
            out,
            "{:<w$}  {}",
            shown(&a.pattern.to_string()),
            shown(&a.source.to_string())
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{BOLD}{:<w$}  WHY{RESET}",
        "DENIED (wins over every allow)"
    )?;
    for d in policy.denied() {
        writeln!(out, "{:<w$}  {}", d.pattern.to_string(), d.why)?;
    }
    for (ip, why) in policy.denied_addresses() {
        writeln!(out, "{:<w$}  {why} (address)", ip.to_string())?;
    }
    writeln!(out)?;
    for (name, ip) in policy.hosts() {
        writeln!(out, "pinned: {name} -> {ip} (operator [network.hosts])")?;
    }
    for c in policy.cidrs() {
        writeln!(out, "allowed range: {c} (operator allow_cidrs)")?;
    }
    writeln!(out)?;
    let w = ADDRESS_CLASSES
        .iter()
        .map(|c| range_text(c).len())
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "{BOLD}{:<w$}  REFUSED AT CONNECT TIME unless an allowed range covers it{RESET}",
        "ADDRESSES"
    )?;
    for c in ADDRESS_CLASSES {
        writeln!(out, "{:<w$}  {}", range_text(c), c.name)?;
    }
    writeln!(
        out,
        "An IPv6 address that holds an IPv4 one (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, \
         6to4 2002::/16, IPv4-compatible) is judged by the IPv4 address. IP addresses are never \
         a target: only host names. A range is allowed in the operator config: \
         git loop config set --operator network.allow_cidrs '[\"RANGE\"]' (keep the ranges listed above)."
    )?;
    Ok(0)
}

/// A class's range as `show --net` writes it.
fn range_text(c: &AddressClass) -> String {
    if c.outside {
        format!("not {}", c.range)
    } else {
        c.range.to_string()
    }
}
