//! Which layer may set what (DESIGN 4.0, ATTACKS 36): policy that widens what a sandbox
//! reaches comes from the operator layer only.
//!
//! The team layer (`knowledge/.loopat/config.toml`, and the sandbox profiles beside it)
//! is written by teammates' pushes and by distill loops; the personal and loop layers
//! live in folders an agent's work reaches. Any of them may narrow anything. None of them
//! may set:
//!
//! - `network.mode = "host"`, or any network mode wider than the operator's own
//!   (`none` < `proxy` < `host`);
//! - `network.allow_cidrs`, `[network.hosts]`, `network.upstream_ca` or `[[mounts]]`, at
//!   all;
//! - `vault.require_binding = false` (true is anyone's to set);
//! - `sandbox.backend = "none"`;
//! - `limits.enforce = "best-effort"` (in a profile: `limits = "best-effort"` or
//!   `[limits] enforce = "best-effort"`);
//! - an `allow_domains` entry that is not under a registrable domain (`*`, `*.com`,
//!   `*.co.uk`): [`registrable`] asks the public suffix list (the `psl` crate);
//! - `[import]`, the bounds on what the host reads from a loop's repository;
//! - `toolchains.enable` (other than `[]`), which binds folders of the user's home, and
//!   `toolchains.caches = "shared"`, which binds the host's caches read-write: a sandbox
//!   profile picks among the toolchains the operator enables (`crate::toolchains`);
//! - `ports.address` other than a loopback address: a live session's forwarded ports
//!   listen there, so another address would open a loop's servers to the network;
//! - `agent.command`, at all: its program is looked up on the host, probed there with
//!   `--version` by `doctor`, and its install folder is bound into every agent sandbox,
//!   so a layer a teammate or a sandbox writes would pick a host program and a host
//!   folder (ATTACKS 40).
//!
//! The rule behind the list: only the operator layer names a program the host runs or a
//! host path that becomes a bind source. The keys that do are `agent.command`,
//! `[[mounts]]`, `network.upstream_ca` and `toolchains.*`; every other key holds a name
//! resolved inside the workspace (`sandbox.profile`, `vault.default`), a pattern, a
//! mode or a bound. A sandbox profile (`config::profile`) names no host path: its
//! `setup` runs inside the loop's sandbox, looked up on the sandbox's PATH.
//!
//! [`refusals`] is pure: `config set` turns a refusal into a usage error, the reader of a
//! file drops what is refused and keeps it for one warning per run and for
//! `config list --show-origin`.

use toml::Value;

use super::Layer;
use crate::egress::policy::Pattern;
use crate::values::NetMode;

/// One thing a layer may not set: the key, the refused value (or list entry) as it may
/// be shown, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub key: String,
    pub shown: String,
    /// For a list: the index of the refused entry, which alone is dropped.
    pub entry: Option<usize>,
    pub why: String,
}

/// Why only the operator may listen elsewhere than on loopback.
pub const PORTS_ADDRESS: &str =
    "only the operator config may open a loop's ports on an address other than loopback";

/// How far a network mode reaches, for comparing.
fn reach(mode: NetMode) -> u8 {
    match mode {
        NetMode::None => 0,
        NetMode::Proxy => 1,
        NetMode::Host => 2,
    }
}

/// What of `key = value` (a value of the key's type) `layer` may not set. `ceiling` is the
/// network mode of the operator layer (its own, else the built-in default).
pub fn refusals(layer: Layer, key: &str, value: &Value, ceiling: NetMode) -> Vec<Refusal> {
    if matches!(layer, Layer::Default | Layer::Operator) {
        return Vec::new();
    }
    let whole = |why: &str| {
        vec![Refusal {
            key: key.to_string(),
            shown: show(value),
            entry: None,
            why: why.to_string(),
        }]
    };
    match key {
        "mounts" => whole("only the operator config may add host mounts"),
        "notify.command" if value.as_array().is_some_and(|a| !a.is_empty()) => {
            whole("only the operator config may name a program the host runs")
        }
        "network.allow_cidrs" | "network.hosts" => {
            whole("only the operator config may widen the addresses the proxy reaches")
        }
        "network.allow_raw_tcp" => {
            whole("only the operator config may let a tunnel carry uninspected bytes")
        }
        "network.upstream_ca" => {
            whole("only the operator config may choose which servers the proxy trusts")
        }
        "vault.require_binding" if value.as_bool() == Some(false) => {
            whole("only the operator config may let unbound vault entries into sandboxes")
        }
        "ports.address"
            if value
                .as_str()
                .and_then(|a| a.parse::<std::net::IpAddr>().ok())
                .is_some_and(|a| !a.is_loopback()) =>
        {
            whole(PORTS_ADDRESS)
        }
        "guard.allow" => whole("only the operator config may let a value past the secret guard"),
        "sandbox.allow_nested_git" if value.as_bool() == Some(true) => {
            whole("only the operator config may let a team's profile have nested repositories made in a loop")
        }
        "include.allow_secrets" if value.as_bool() == Some(true) => {
            whole("only the operator config may let secrets of your working tree into a sandbox")
        }
        // Raising them from a synced layer would let a teammate's push fill the disk.
        "include.max_file_size" | "include.max_total_size" => {
            whole("only the operator config sets how much new copies into a loop")
        }
        "agent.command" => whole(AGENT_COMMAND),
        // Lowering one would be harmless, but imports read the operator's alone.
        "import.max_object_size" | "import.max_pack_size" | "import.read_timeout" => {
            whole("only the operator config sets what the host reads from a loop's repository")
        }
        "sandbox.backend" if value.as_str() == Some("none") => {
            whole("only the operator config may turn the sandbox off")
        }
        "limits.enforce" if value.as_str() == Some("best-effort") => whole(BEST_EFFORT),
        // Narrowing to none is anyone's to choose; any list would have to be judged
        // against the operator's, which the profile does (`toolchains::resolve`).
        "toolchains.enable" if value.as_array().is_some_and(|a| a.is_empty()) => Vec::new(),
        "toolchains.enable" => whole(crate::toolchains::OPERATOR_ONLY),
        "toolchains.caches" if value.as_str() == Some("shared") => {
            whole(crate::toolchains::SHARED_ONLY)
        }
        "network.mode" => {
            let Some(mode) = value.as_str().and_then(NetMode::from_name) else {
                return Vec::new();
            };
            if mode == NetMode::Host {
                whole("only the operator config may give a sandbox the host's network")
            } else if reach(mode) > reach(ceiling) {
                whole(&format!(
                    "the operator config's network mode is {}, which other layers may only narrow",
                    ceiling.name()
                ))
            } else {
                Vec::new()
            }
        }
        "network.allow_domains" => domain_refusals(key, value),
        _ => Vec::new(),
    }
}

pub const AGENT_COMMAND: &str = "only the operator config names the agent's program: the host looks it up, runs its --version for doctor and binds its install folder into sandboxes";

pub const BEST_EFFORT: &str =
    "only the operator config may let a sandbox run without enforced limits";

/// The entries of an `allow_domains` list that are not under a registrable domain.
pub fn domain_refusals(key: &str, value: &Value) -> Vec<Refusal> {
    let Some(list) = value.as_array() else {
        return Vec::new();
    };
    list.iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let raw = v.as_str()?;
            let pattern = Pattern::parse(raw).ok()?;
            let why = registrable(&pattern).err()?;
            Some(Refusal {
                key: key.to_string(),
                shown: format!("\"{}\"", visible(raw)),
                entry: Some(i),
                why,
            })
        })
        .collect()
}

/// Whether a pattern admits only names under one registrable domain: its fixed part (the
/// whole name, or what follows the `*`) must be a registrable domain or below one, never
/// a public suffix such as `com` or `co.uk`, where anyone can register names.
///
/// For `name.*.suffix` only `suffix` is judged: a public suffix one label below a
/// registrable domain (as `s3.amazonaws.com` is) is not caught, since the list cannot be
/// asked for the suffixes below a name.
pub fn registrable(pattern: &Pattern) -> Result<(), String> {
    let fixed = match pattern {
        Pattern::Exact(name) => name,
        Pattern::Subdomains(suffix) | Pattern::OneLabel { suffix, .. } => suffix,
    };
    if psl::domain(fixed.as_bytes()).is_some() {
        return Ok(());
    }
    Err(format!(
        "{pattern} is not under a registrable domain ({fixed} is a public suffix, where anyone can register names); only the operator config may allow it"
    ))
}

/// A value as a person wrote it, on one line, control characters made visible (the
/// value may come from a file an agent wrote, and goes to a terminal).
pub fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("\"{}\"", visible(s)),
        other => visible(&other.to_string()),
    }
}

/// Control characters as escapes (`\u{1b}`), the rest as it is.
pub fn visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::String(v.into())
    }

    fn list(items: &[&str]) -> Value {
        Value::Array(items.iter().map(|i| s(i)).collect())
    }

    #[test]
    fn the_operator_may_set_anything() {
        for layer in [Layer::Default, Layer::Operator] {
            assert!(refusals(layer, "network.mode", &s("host"), NetMode::None).is_empty());
            assert!(refusals(
                layer,
                "network.allow_domains",
                &list(&["*"]),
                NetMode::Proxy
            )
            .is_empty());
            assert!(refusals(layer, "mounts", &Value::Array(vec![]), NetMode::Proxy).is_empty());
        }
    }

    #[test]
    fn other_layers_may_only_narrow() {
        for layer in [Layer::Team, Layer::Personal, Layer::Loop] {
            let refused =
                |key: &str, value: Value| !refusals(layer, key, &value, NetMode::Proxy).is_empty();
            assert!(refused("network.mode", s("host")));
            assert!(!refused("network.mode", s("proxy")));
            assert!(!refused("network.mode", s("none")));
            assert!(refused("sandbox.backend", s("none")));
            assert!(!refused("sandbox.backend", s("bwrap")));
            assert!(refused("limits.enforce", s("best-effort")));
            assert!(!refused("limits.enforce", s("strict")));
            assert!(refused("mounts", Value::Array(vec![])));
            assert!(refused("network.allow_cidrs", list(&["10.0.0.0/8"])));
            assert!(refused("network.hosts", Value::Table(Default::default())));
            assert!(refused("network.upstream_ca", s("/etc/ca.pem")));
            assert!(refused("vault.require_binding", Value::Boolean(false)));
            assert!(!refused("vault.require_binding", Value::Boolean(true)));
            assert!(refused("agent.command", list(&["codex"])));
            assert!(refused(
                "agent.command",
                list(&["/tmp/x/evil", "--version"])
            ));
            assert!(!refused("agent.permissions", s("ask")));
            assert!(!refused("agent.identity", s("agent")));
            // A program the host runs: the operator's alone; turning notifications off
            // or keeping the default is anyone's.
            assert!(refused("notify.command", list(&["/tmp/x"])));
            assert!(!refused("notify.command", list(&[])));
            assert!(!refused("notify.enabled", Value::Boolean(false)));
            assert!(refused("toolchains.enable", s("detected")));
            assert!(refused("toolchains.enable", list(&["rustup"])));
            assert!(!refused("toolchains.enable", list(&[])));
            assert!(refused("toolchains.caches", s("shared")));
            assert!(!refused("toolchains.caches", s("loop")));
            // Under a ceiling of `none`, the proxy widens.
            assert!(!refusals(layer, "network.mode", &s("proxy"), NetMode::None).is_empty());
            assert!(refusals(layer, "network.mode", &s("none"), NetMode::None).is_empty());
        }
    }

    #[test]
    fn allowed_domains_must_be_under_a_registrable_domain() {
        let entries = list(&[
            "*",
            "*.com",
            "*.co.uk",
            "co.uk",
            "x.*.com",
            "*.example.com",
            "api.example.com",
            "bedrock.*.amazonaws.com",
            "*.example.co.uk",
            "allowed.test",
            "*.github.io",
        ]);
        let refused: Vec<usize> = refusals(
            Layer::Team,
            "network.allow_domains",
            &entries,
            NetMode::Proxy,
        )
        .iter()
        .filter_map(|r| r.entry)
        .collect();
        // `*` alone is not a pattern at all (the schema refuses it before this).
        assert_eq!(refused, vec![1, 2, 3, 4, 10]);
    }
}
