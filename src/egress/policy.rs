//! The egress policy of the `proxy` network mode (DESIGN 4.5), as data and pure functions:
//! no socket, no file, no clock. The proxy asks it two questions, in this order:
//!
//! 1. [`Policy::check_host`] before anything is resolved: is this host name, spelled as the
//!    client spelled it, one the sandbox may reach? It is canonicalised first
//!    ([`canonical_host`]: case, trailing dot, IDNA), so no spelling of a name is matched
//!    as another; a numeric host (an IP address in any spelling) is refused outright; the
//!    fixed denylist is consulted before the allowlist, so it wins over every allow.
//! 2. [`Policy::check_addr`] for every address the name resolves to (or is pinned to),
//!    right before the proxy dials that exact address: loopback, private, link-local,
//!    CGNAT, ULA, multicast and unspecified addresses, in their IPv4-mapped forms too, are
//!    refused unless an operator `allow_cidrs` entry covers them (DNS rebinding); the
//!    denylisted addresses are refused even then.
//!
//! Only two wildcard forms exist, one `*` per pattern, always a whole label:
//! `*.example.com` admits any depth of subdomain but never the apex, and
//! `bedrock.*.amazonaws.com` admits exactly one label in place of the `*`.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::Deserialize;

/// The built-in allowlist and denylist (one data file, shown by `git loop show ID --net`).
pub const BASELINE: &str = include_str!("baseline.toml");

/// Longest host name the proxy reads (DNS allows 253).
const MAX_NAME: usize = 253;

/// Which rule refused a connection: named in the 403 body, the SOCKS reply's event, and
/// the violation event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The client did not present this run's token.
    Credentials,
    /// A request the proxy cannot read, or a host that is not a host name.
    Malformed,
    /// An IP address as the target, in any spelling.
    NumericHost,
    /// On the fixed denylist (cloud metadata, telemetry): wins over every allow.
    Denylist,
    /// Not on this sandbox's allowlist.
    Allowlist,
    /// The name resolves to an address the sandbox may not reach.
    Address,
    /// The CONNECT target, the Host header and the TLS SNI do not name the same host.
    Mismatch,
    /// A kind of request the proxy does not carry (SOCKS BIND and UDP, `https://` URIs).
    Unsupported,
    /// A tunnel whose first bytes are neither TLS nor HTTP, to a host and port the
    /// operator did not allow raw TCP (`allow_raw_tcp`).
    RawTcp,
    /// The placeholder of a bound vault entry toward a host it is not bound to, or over
    /// plain HTTP (sentinel.rs).
    Credential,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Credentials => "credentials",
            Rule::Malformed => "malformed",
            Rule::NumericHost => "numeric-host",
            Rule::Denylist => "denylist",
            Rule::Allowlist => "allowlist",
            Rule::Address => "address",
            Rule::Mismatch => "host-mismatch",
            Rule::Unsupported => "unsupported",
            Rule::RawTcp => "raw-tcp",
            Rule::Credential => "credential",
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub rule: Rule,
    pub reason: String,
    /// The vault entry whose placeholder was met (`env:NAME`), for [`Rule::Credential`].
    pub entry: Option<String>,
    /// What would allow it, where a setting can (none: nothing may, such as the
    /// denylist, or the request itself must change).
    pub fix: Option<Fix>,
}

impl Refusal {
    pub fn new(rule: Rule, reason: impl Into<String>) -> Refusal {
        Refusal {
            rule,
            reason: reason.into(),
            entry: None,
            fix: None,
        }
    }

    pub fn with_fix(mut self, fix: Fix) -> Refusal {
        self.fix = Some(fix);
        self
    }
}

/// What would allow a refused connection, as data: the proxy words it as the exact
/// command with what it knows of the run (proxy/fix.rs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// The host on the loop's allowlist (`network.allow_domains`, or `--allow-domain`).
    AllowDomain(String),
    /// These addresses in the operator's `allow_cidrs`; `class` is the range of the class
    /// they are in, for a person who wants all of it.
    AllowAddresses {
        addresses: Vec<IpAddr>,
        class: Option<Cidr>,
    },
    /// Raw TCP to `host:port` (the operator's `allow_raw_tcp`).
    AllowRaw(String),
    /// A command worded already (binding a vault entry to the host).
    Command(String),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (rule: {})", self.reason, self.rule.as_str())
    }
}

/// The one spelling of a host name that is matched and dialed: lower case, no trailing
/// dot, Punycode for non-ASCII labels (UTS 46 mapping, so full-width letters and digits
/// become ASCII first). Refuses IP addresses in every spelling the WHATWG URL standard
/// and `inet_aton` accept (`127.1`, `0x7f.0.0.1`, `2130706433`, `0177.0.0.1`,
/// `[::1]`, `::ffff:127.0.0.1`), percent-encoding, and anything that is not a host name.
pub fn canonical_host(raw: &str) -> Result<String, Refusal> {
    let malformed = |why: &str| Refusal::new(Rule::Malformed, format!("{} is {why}", shown(raw)));
    if raw.is_empty() {
        return Err(Refusal::new(Rule::Malformed, "the host is empty"));
    }
    if raw.len() > 4 * MAX_NAME {
        return Err(malformed("too long for a host name"));
    }
    if raw.starts_with('[') || raw.contains(':') {
        let inner = raw.trim_start_matches('[').trim_end_matches(']');
        return Err(match inner.parse::<Ipv6Addr>() {
            Ok(a) => Refusal::new(
                Rule::NumericHost,
                format!(
                    "{} is the IPv6 address {a}; the proxy reaches host names only",
                    shown(raw)
                ),
            ),
            Err(_) => malformed("not a host name (a port or an IPv6 address where a name belongs)"),
        });
    }
    if raw.contains('%') {
        return Err(malformed("percent-encoded; send the host name itself"));
    }
    if raw
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '*')
    {
        return Err(malformed("not a host name"));
    }
    // UTS 46 before the numeric check: "１２７.０.０.１" maps to the address it looks like.
    let ascii = idna::domain_to_ascii_cow(raw.as_bytes(), idna::AsciiDenyList::URL)
        .map_err(|_| malformed("not a valid internationalised host name"))?;
    let mut name = ascii.into_owned();
    if name.ends_with('.') {
        name.pop();
    }
    if name.is_empty() {
        return Err(malformed("not a host name"));
    }
    if let Some(addr) = numeric_host(&name) {
        let what = match addr {
            Some(a) => format!("the IPv4 address {a}"),
            None => "an IPv4 address in a numeric spelling".to_string(),
        };
        return Err(Refusal::new(
            Rule::NumericHost,
            format!(
                "{} is {what}; the proxy reaches host names only",
                shown(raw)
            ),
        ));
    }
    if name.len() > MAX_NAME {
        return Err(malformed("too long for a host name"));
    }
    for label in name.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(malformed("not a host name (an empty or overlong label)"));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        {
            return Err(malformed("not a host name"));
        }
    }
    Ok(name)
}

/// A host as it may appear in a message: quoted, clipped, control characters escaped.
fn shown(raw: &str) -> String {
    let clipped: String = raw.chars().take(120).collect();
    let mut s = format!("{clipped:?}");
    if raw.chars().count() > 120 {
        s.push('…');
    }
    s
}

/// `Some` when `name` (already lower case ASCII) is an IPv4 address by the WHATWG URL
/// rule "the last label is a number": all digits, or `0x` and hex digits. The inner value
/// is the address when the whole name parses as one (`inet_aton`'s forms), for messages.
fn numeric_host(name: &str) -> Option<Option<Ipv4Addr>> {
    let last = name.rsplit('.').next().unwrap_or(name);
    let is_number = !last.is_empty()
        && (last.bytes().all(|b| b.is_ascii_digit())
            || last
                .strip_prefix("0x")
                .is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit())));
    if !is_number {
        return None;
    }
    Some(parse_ipv4_loose(name))
}

/// `inet_aton`: one to four parts, each decimal, `0x` hex or `0` octal; the last part
/// fills the remaining bytes.
fn parse_ipv4_loose(name: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = name.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        let n = if let Some(h) = p.strip_prefix("0x") {
            if h.is_empty() {
                0
            } else {
                u64::from_str_radix(h, 16).ok()?
            }
        } else if p.len() > 1 && p.starts_with('0') {
            u64::from_str_radix(&p[1..], 8).ok()?
        } else {
            p.parse::<u64>().ok()?
        };
        nums.push(n);
    }
    let (last, init) = nums.split_last()?;
    if init.iter().any(|&n| n > 255) || *last >= 1u64 << (8 * (5 - nums.len())) {
        return None;
    }
    let mut value = *last;
    for (i, n) in init.iter().enumerate() {
        value |= n << (8 * (3 - i));
    }
    Some(Ipv4Addr::from(value as u32))
}

/// A domain pattern of the allowlist or the denylist.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pattern {
    /// One host name.
    Exact(String),
    /// `*.suffix`: any name ending in `.suffix`, at any depth; never `suffix` itself.
    Subdomains(String),
    /// `prefix.*.suffix`: exactly one label between them.
    OneLabel { prefix: String, suffix: String },
}

impl Pattern {
    /// Reads a pattern as written in a profile, a config file or on the command line.
    pub fn parse(raw: &str) -> Result<Pattern, String> {
        let text = raw.trim();
        let text = text.strip_suffix('.').unwrap_or(text);
        let canon = |part: &str| -> Result<String, String> {
            canonical_host(part).map_err(|r| match r.rule {
                Rule::NumericHost => format!("'{raw}' is an IP address; allow host names only (the operator's allow_cidrs covers addresses)"),
                _ => format!("'{raw}' is not a host name or pattern"),
            })
        };
        match text.matches('*').count() {
            0 => canon(text).map(Pattern::Exact),
            1 => {
                let labels: Vec<&str> = text.split('.').collect();
                let Some(star) = labels.iter().position(|l| *l == "*") else {
                    return Err(format!(
                        "'{raw}': a * stands for whole labels (write *.example.com or name.*.example.com)"
                    ));
                };
                if star == labels.len() - 1 {
                    return Err(format!("'{raw}': the * cannot be the last label"));
                }
                let suffix = canon(&labels[star + 1..].join("."))?;
                if star == 0 {
                    Ok(Pattern::Subdomains(suffix))
                } else {
                    let prefix = canon(&labels[..star].join("."))?;
                    Ok(Pattern::OneLabel { prefix, suffix })
                }
            }
            _ => Err(format!(
                "'{raw}' has more than one *; a pattern has at most one"
            )),
        }
    }

    /// Does this pattern admit `host` (a canonical host name)?
    pub fn matches(&self, host: &str) -> bool {
        match self {
            Pattern::Exact(name) => host == name,
            Pattern::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .and_then(|rest| rest.strip_suffix('.'))
                .is_some_and(|sub| !sub.is_empty()),
            Pattern::OneLabel { prefix, suffix } => host
                .strip_prefix(prefix.as_str())
                .and_then(|rest| rest.strip_prefix('.'))
                .and_then(|rest| rest.strip_suffix(suffix.as_str()))
                .and_then(|rest| rest.strip_suffix('.'))
                .is_some_and(|label| !label.is_empty() && !label.contains('.')),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Exact(name) => f.write_str(name),
            Pattern::Subdomains(suffix) => write!(f, "*.{suffix}"),
            Pattern::OneLabel { prefix, suffix } => write!(f, "{prefix}.*.{suffix}"),
        }
    }
}

/// An address range of the operator's `allow_cidrs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Cidr, String> {
        let bad =
            || format!("'{s}' is not an address range (write it like 10.1.0.0/16 or fd00::/8)");
        let (addr, prefix) = match s.trim().split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s.trim(), None),
        };
        let net: IpAddr = addr.parse().map_err(|_| bad())?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse::<u8>().map_err(|_| bad())?
            }
            Some(_) => return Err(bad()),
            None => max,
        };
        if prefix > max {
            return Err(bad());
        }
        Ok(Cidr { net, prefix })
    }
}

impl Cidr {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

/// The IPv4 address an IPv6 address stands for, in the forms that reach an IPv4 host:
/// IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), the well-known NAT64 prefix (`64:ff9b::a.b.c.d`, RFC 6052) and 6to4
/// (`2002:AABB:CCDD::/48`, RFC 3056: the IPv4 address is bits 16 to 47). A translator or
/// a 6to4 relay turns each into a packet to that IPv4 address, so each is judged by it.
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    let tail = v4(s[6], s[7]);
    let zero = |r: std::ops::Range<usize>| s[r].iter().all(|&x| x == 0);
    if zero(0..5) && s[5] == 0xffff {
        return Some(tail);
    }
    if zero(0..4) && s[4] == 0xffff && s[5] == 0 {
        return Some(tail);
    }
    if s[0] == 0x64 && s[1] == 0xff9b && zero(2..6) {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(v4(s[1], s[2]));
    }
    // `::` and `::1` are IPv6's own unspecified and loopback addresses.
    if zero(0..6) && u32::from(tail) > 1 {
        return Some(tail);
    }
    None
}

/// Why an address is one a sandbox may not reach by default, if it is one. The classes
/// follow IANA's IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and later
/// entries): every block there that is not globally reachable is refused, plus multicast
/// and, for IPv6, everything outside global unicast (2000::/3), where nothing a sandbox
/// needs lives. An IPv6 address that embeds an IPv4 address (see [`embedded_ipv4`]) is
/// judged by the IPv4 address; Teredo (2001::/32) embeds one obfuscated, behind a relay
/// of its own choosing, and is refused outright with the rest of 2001::/23.
pub fn special_address(ip: IpAddr) -> Option<String> {
    address_class(ip).map(|(class, _)| class)
}

/// One class of addresses refused by default: where it is, and its name.
#[derive(Debug, Clone, Copy)]
pub struct AddressClass {
    pub range: Cidr,
    /// The class is every address *outside* `range` (IPv6 outside global unicast).
    pub outside: bool,
    pub name: &'static str,
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Cidr {
    Cidr {
        net: IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        prefix,
    }
}

const fn v6(segments: [u16; 8], prefix: u8) -> Cidr {
    let [a, b, c, d, e, f, g, h] = segments;
    Cidr {
        net: IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)),
        prefix,
    }
}

const fn class(range: Cidr, name: &'static str) -> AddressClass {
    AddressClass {
        range,
        outside: false,
        name,
    }
}

/// Every class of addresses a sandbox may not reach unless the operator allows a range
/// (`allow_cidrs`), in the order they are judged (the first that holds an address names
/// it). `show --net` lists this table; [`special_address`] reads it.
pub const ADDRESS_CLASSES: &[AddressClass] = &[
    class(v4(0, 0, 0, 0, 8), "\"this network\" (0.0.0.0/8)"),
    class(v4(127, 0, 0, 0, 8), "loopback"),
    class(v4(10, 0, 0, 0, 8), "private (RFC 1918)"),
    class(v4(172, 16, 0, 0, 12), "private (RFC 1918)"),
    class(v4(192, 168, 0, 0, 16), "private (RFC 1918)"),
    class(v4(169, 254, 0, 0, 16), "link-local"),
    class(v4(100, 64, 0, 0, 10), "shared (CGNAT, 100.64.0.0/10)"),
    class(
        v4(192, 0, 0, 0, 24),
        "IETF protocol assignments (192.0.0.0/24)",
    ),
    class(v4(192, 0, 2, 0, 24), "documentation (RFC 5737)"),
    class(v4(198, 51, 100, 0, 24), "documentation (RFC 5737)"),
    class(v4(203, 0, 113, 0, 24), "documentation (RFC 5737)"),
    class(
        v4(192, 88, 99, 0, 24),
        "6to4 relay anycast (deprecated, 192.88.99.0/24)",
    ),
    class(v4(198, 18, 0, 0, 15), "benchmarking (198.18.0.0/15)"),
    class(v4(224, 0, 0, 0, 4), "multicast"),
    class(v4(255, 255, 255, 255, 32), "limited broadcast"),
    class(v4(240, 0, 0, 0, 4), "reserved (240.0.0.0/4)"),
    class(v6([0; 8], 128), "unspecified"),
    class(v6([0, 0, 0, 0, 0, 0, 0, 1], 128), "loopback"),
    class(
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        "local-use IPv4/IPv6 translation (64:ff9b:1::/48)",
    ),
    class(
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        "unique local (ULA, fc00::/7)",
    ),
    class(v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10), "link-local"),
    class(v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), "site-local"),
    class(v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8), "multicast"),
    AddressClass {
        range: v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3),
        outside: true,
        name: "outside global unicast (2000::/3)",
    },
    class(
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
        "IETF protocol assignments (2001::/23, Teredo included)",
    ),
    class(
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        "documentation (2001:db8::/32)",
    ),
    class(
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        "documentation (3fff::/20)",
    ),
];

fn class_of(ip: IpAddr) -> Option<&'static AddressClass> {
    ADDRESS_CLASSES
        .iter()
        .find(|c| c.range.contains(ip) != c.outside && c.range.net.is_ipv4() == ip.is_ipv4())
}

/// [`special_address`] with the range of its class (none for a class that is not one
/// range).
pub fn address_class(ip: IpAddr) -> Option<(String, Option<Cidr>)> {
    let range = |c: &AddressClass| (!c.outside).then_some(c.range);
    match ip {
        IpAddr::V4(_) => class_of(ip).map(|c| (c.name.to_string(), range(c))),
        IpAddr::V6(a) => {
            if let Some(v4) = embedded_ipv4(a) {
                // The range that holds it is the IPv4 one, in its IPv4 form: the
                // operator's range covers the IPv4-mapped form only (see check_addr).
                return class_of(IpAddr::V4(v4))
                    .map(|c| (format!("{} (IPv4 in IPv6)", c.name), None));
            }
            class_of(ip).map(|c| (c.name.to_string(), range(c)))
        }
    }
}

/// An allowlist entry and where it came from (for `show --net`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    pub pattern: Pattern,
    pub source: String,
}

/// A denylist entry and why it is there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    pub pattern: Pattern,
    pub why: String,
}

/// A host and port to which a tunnel may carry bytes that are neither TLS nor HTTP (ssh
/// to a git host): `allow_raw_tcp` of the operator config, and the baseline's `[[raw]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawAllowed {
    pub pattern: Pattern,
    pub port: u16,
    pub source: String,
}

impl RawAllowed {
    /// Reads `host:port` (the host an exact name or a pattern).
    pub fn parse(raw: &str, source: impl Into<String>) -> Result<RawAllowed, String> {
        let (host, port) = raw
            .trim()
            .rsplit_once(':')
            .ok_or_else(|| format!("'{raw}' needs a port (write host:port, like github.com:22)"))?;
        let port = match port.parse::<u16>() {
            Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()) => p,
            _ => return Err(format!("'{raw}': '{port}' is not a port")),
        };
        Ok(RawAllowed {
            pattern: Pattern::parse(host)?,
            port,
            source: source.into(),
        })
    }
}

impl fmt::Display for RawAllowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.pattern, self.port)
    }
}

#[derive(Debug, Deserialize)]
struct BaselineFile {
    allow: Vec<AllowGroup>,
    deny: Vec<DenyGroup>,
    raw: Vec<RawGroup>,
}

#[derive(Debug, Deserialize)]
struct AllowGroup {
    group: String,
    domains: Vec<String>,
    /// Each domain holding `{region}` stands for one exact name per region.
    #[serde(default)]
    regions: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct RawGroup {
    why: String,
    targets: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct DenyGroup {
    why: String,
    domains: Vec<String>,
    #[serde(default)]
    addresses: Vec<String>,
}

/// Everything the proxy of one run enforces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    allow: Vec<Allowed>,
    deny: Vec<Denied>,
    deny_addresses: Vec<(IpAddr, String)>,
    hosts: BTreeMap<String, IpAddr>,
    cidrs: Vec<Cidr>,
    raw: Vec<RawAllowed>,
}

impl Policy {
    /// The built-in baseline: its allowlist (each entry's source names its group) and the
    /// fixed denylist.
    pub fn baseline() -> Policy {
        let file: BaselineFile =
            toml::from_str(BASELINE).expect("the built-in baseline.toml is valid");
        let mut policy = Policy::default();
        for group in file.allow {
            for d in group.domains {
                let names = match d.contains("{region}") {
                    true => group
                        .regions
                        .iter()
                        .map(|r| d.replace("{region}", r))
                        .collect(),
                    false => vec![d],
                };
                for name in names {
                    let pattern = Pattern::parse(&name).expect("the built-in allowlist is valid");
                    policy.add(pattern, format!("baseline ({})", group.group));
                }
            }
        }
        for group in file.raw {
            for t in group.targets {
                let raw = RawAllowed::parse(&t, format!("baseline ({})", group.why))
                    .expect("the built-in raw TCP targets are valid");
                policy.raw.push(raw);
            }
        }
        for group in file.deny {
            for d in group.domains {
                policy.deny.push(Denied {
                    pattern: Pattern::parse(&d).expect("the built-in denylist is valid"),
                    why: group.why.clone(),
                });
            }
            for a in group.addresses {
                let ip = a
                    .parse()
                    .expect("the built-in denylist's addresses are valid");
                policy.deny_addresses.push((ip, group.why.clone()));
            }
        }
        policy
    }

    /// Adds an allowlist entry; one already there keeps its first source.
    pub fn add(&mut self, pattern: Pattern, source: impl Into<String>) {
        if !self.allow.iter().any(|a| a.pattern == pattern) {
            self.allow.push(Allowed {
                pattern,
                source: source.into(),
            });
        }
    }

    /// Operator `[network.hosts]`: `name` resolves to `addr`, like /etc/hosts.
    pub fn pin(&mut self, name: &str, addr: IpAddr) -> Result<(), String> {
        let name =
            canonical_host(name).map_err(|r| format!("[network.hosts] '{name}': {}", r.reason))?;
        self.hosts.insert(name, addr);
        Ok(())
    }

    /// Operator `allow_cidrs`: addresses in `cidr` pass the connect-time check.
    pub fn allow_cidr(&mut self, cidr: Cidr) {
        self.cidrs.push(cidr);
    }

    /// Operator `allow_raw_tcp`: tunnels to `raw` may carry what is neither TLS nor HTTP.
    pub fn allow_raw(&mut self, raw: RawAllowed) {
        if !self
            .raw
            .iter()
            .any(|r| r.pattern == raw.pattern && r.port == raw.port)
        {
            self.raw.push(raw);
        }
    }

    /// May a tunnel to `host` (canonical) and `port` carry bytes that are neither TLS nor
    /// HTTP? The host must pass [`Policy::check_host`] as well: this widens what a tunnel
    /// may carry, never where it goes.
    pub fn raw_allowed(&self, host: &str, port: u16) -> bool {
        self.raw
            .iter()
            .any(|r| r.port == port && r.pattern.matches(host))
    }

    pub fn raw(&self) -> &[RawAllowed] {
        &self.raw
    }

    pub fn allowed(&self) -> &[Allowed] {
        &self.allow
    }

    pub fn denied(&self) -> &[Denied] {
        &self.deny
    }

    pub fn denied_addresses(&self) -> &[(IpAddr, String)] {
        &self.deny_addresses
    }

    pub fn hosts(&self) -> &BTreeMap<String, IpAddr> {
        &self.hosts
    }

    pub fn cidrs(&self) -> &[Cidr] {
        &self.cidrs
    }

    /// The first question: may a client name this host? Returns its canonical name.
    pub fn check_host(&self, raw: &str) -> Result<String, Refusal> {
        let host = canonical_host(raw)?;
        if let Some(d) = self.deny.iter().find(|d| d.pattern.matches(&host)) {
            return Err(Refusal::new(
                Rule::Denylist,
                format!("{host} is on the fixed denylist ({}: {})", d.why, d.pattern),
            ));
        }
        if !self.allow.iter().any(|a| a.pattern.matches(&host)) {
            return Err(Refusal::new(
                Rule::Allowlist,
                format!("{host} is not on this sandbox's allowlist"),
            )
            .with_fix(Fix::AllowDomain(host)));
        }
        Ok(host)
    }

    /// The operator's pin for a canonical host name, if any.
    pub fn pinned(&self, host: &str) -> Option<IpAddr> {
        self.hosts.get(host).copied()
    }

    /// The second question for every address a name resolves to: refused as a whole if
    /// any address is (a name that resolves to a local address at all is a rebinding
    /// attempt). The refusal is the denylist's if any address is on it (nothing allows
    /// that), else the first one's, with a fix that names every address refused, so that
    /// applying it once is enough.
    pub fn check_addrs(&self, addrs: &[IpAddr]) -> Result<(), Refusal> {
        let refusals: Vec<Refusal> = addrs
            .iter()
            .filter_map(|ip| self.check_addr(*ip).err())
            .collect();
        if let Some(d) = refusals.iter().find(|r| r.rule == Rule::Denylist) {
            return Err(d.clone());
        }
        let mut all = refusals.into_iter();
        let Some(mut first) = all.next() else {
            return Ok(());
        };
        for r in all {
            if let (
                Some(Fix::AllowAddresses { addresses, .. }),
                Some(Fix::AllowAddresses {
                    addresses: more, ..
                }),
            ) = (first.fix.as_mut(), r.fix)
            {
                addresses.extend(more);
            }
        }
        Err(first)
    }

    /// The second question, for each address right before it is dialed.
    pub fn check_addr(&self, ip: IpAddr) -> Result<(), Refusal> {
        let v4 = match ip {
            IpAddr::V6(a) => embedded_ipv4(a).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        let forms = std::iter::once(ip).chain(v4);
        for form in forms.clone() {
            if let Some((_, why)) = self.deny_addresses.iter().find(|(d, _)| *d == form) {
                return Err(Refusal::new(
                    Rule::Denylist,
                    format!("{ip} is on the fixed denylist ({why})"),
                ));
            }
        }
        if let Some(class) = special_address(ip) {
            // An operator's range covers an address, and the IPv4-mapped form of one
            // (the same host); not a 6to4 or NAT64 form, which a relay or translator
            // elsewhere turns into a packet to that IPv4 address on its own network.
            let mapped = match ip {
                IpAddr::V6(a) => a.to_ipv4_mapped().map(IpAddr::V4),
                IpAddr::V4(_) => None,
            };
            let covered = std::iter::once(ip)
                .chain(mapped)
                .any(|f| self.cidrs.iter().any(|c| c.contains(f)));
            if !covered {
                let range = address_class(ip).and_then(|(_, r)| r);
                return Err(Refusal::new(
                    Rule::Address,
                    format!("the name resolves to {ip}, a {class} address"),
                )
                .with_fix(Fix::AllowAddresses {
                    addresses: vec![ip],
                    class: range,
                }));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str]) -> Policy {
        let mut p = Policy::baseline();
        for a in allow {
            p.add(Pattern::parse(a).unwrap(), "test");
        }
        p
    }

    fn rule(r: Result<String, Refusal>) -> Option<Rule> {
        r.err().map(|e| e.rule)
    }

    #[test]
    fn each_rule_has_its_own_name_and_a_refusal_says_its_reason_and_rule() {
        // The names are what the 403 body, the SOCKS event and the violation log carry.
        let rules = [
            (Rule::Credentials, "credentials"),
            (Rule::Malformed, "malformed"),
            (Rule::NumericHost, "numeric-host"),
            (Rule::Denylist, "denylist"),
            (Rule::Allowlist, "allowlist"),
            (Rule::Address, "address"),
            (Rule::Mismatch, "host-mismatch"),
            (Rule::Unsupported, "unsupported"),
            (Rule::RawTcp, "raw-tcp"),
        ];
        for (rule, name) in rules {
            assert_eq!(rule.as_str(), name);
        }
        let r = Refusal::new(
            Rule::Allowlist,
            "evil.test is not on this sandbox's allowlist",
        );
        assert_eq!(
            r.to_string(),
            "evil.test is not on this sandbox's allowlist (rule: allowlist)"
        );
    }

    #[test]
    fn canonical_names_fold_case_dots_and_unicode() {
        for (raw, want) in [
            ("Example.COM", "example.com"),
            ("example.com.", "example.com"),
            ("EXAMPLE.com.", "example.com"),
            ("ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"),
            ("bücher.example", "xn--bcher-kva.example"),
            ("BÜCHER.example.", "xn--bcher-kva.example"),
            ("xn--bcher-kva.example", "xn--bcher-kva.example"),
            ("_acme.example.com", "_acme.example.com"),
            ("1.2.3.4.example.com", "1.2.3.4.example.com"),
        ] {
            assert_eq!(canonical_host(raw).as_deref(), Ok(want), "{raw}");
        }
    }

    #[test]
    fn numeric_hosts_are_refused_in_every_spelling() {
        for raw in [
            "127.0.0.1",
            "127.1",
            "127.0.1",
            "0x7f.0.0.1",
            "0x7F.1",
            "0x7f000001",
            "2130706433",
            "017700000001",
            "0177.0.0.1",
            "0.0.0.0",
            "0",
            "0x0",
            "127.0.0.1.",
            "１２７.０.０.１",
            "999.1.1.1",
            "1.2.3.4",
            "169.254.169.254",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[0:0:0:0:0:ffff:7f00:1]",
            "[fd00:ec2::254]",
            "::1",
            "[::]",
        ] {
            let got = canonical_host(raw);
            assert_eq!(rule(got.clone()), Some(Rule::NumericHost), "{raw}: {got:?}");
        }
        assert!(canonical_host("127.1")
            .unwrap_err()
            .reason
            .contains("127.0.0.1"));
        assert!(canonical_host("0x7f.0.0.1")
            .unwrap_err()
            .reason
            .contains("127.0.0.1"));
        assert!(canonical_host("2130706433")
            .unwrap_err()
            .reason
            .contains("127.0.0.1"));
        assert!(canonical_host("0177.0.0.1")
            .unwrap_err()
            .reason
            .contains("127.0.0.1"));
    }

    #[test]
    fn a_spelling_longer_than_four_names_is_refused_before_it_is_mapped() {
        // Soft hyphens (U+00AD, two bytes each) map to nothing: a raw spelling can be far
        // longer than the name it stands for. Up to 4 * 253 bytes are mapped; more are not.
        let padded = |total: usize| {
            let hyphens = (total - 8 - 40) / 2;
            let letters = total - 8 - 2 * hyphens;
            let raw = format!(
                "{}{}.example",
                "\u{ad}".repeat(hyphens),
                "a".repeat(letters)
            );
            assert_eq!(raw.len(), total);
            (raw, format!("{}.example", "a".repeat(letters)))
        };
        for total in [300, 4 * MAX_NAME] {
            let (raw, name) = padded(total);
            assert_eq!(canonical_host(&raw), Ok(name), "{total} bytes");
        }
        let (raw, _) = padded(4 * MAX_NAME + 1);
        let refusal = canonical_host(&raw).unwrap_err();
        assert_eq!(refusal.rule, Rule::Malformed);
        assert!(
            refusal.reason.ends_with("is too long for a host name"),
            "{refusal}"
        );
    }

    #[test]
    fn a_name_is_at_most_253_bytes_and_a_label_at_most_63() {
        let label = "a".repeat(63);
        // 4 labels of 63 and 3 dots: 255 bytes; cut to 253 and 254.
        let long = [label.as_str(); 4].join(".");
        assert_eq!(canonical_host(&long[..253]).as_deref(), Ok(&long[..253]));
        assert_eq!(
            canonical_host(&format!("{}.", &long[..253])).as_deref(),
            Ok(&long[..253])
        );
        let refusal = canonical_host(&long[..254]).unwrap_err();
        assert!(
            refusal.reason.ends_with("is too long for a host name"),
            "{refusal}"
        );
        assert_eq!(
            canonical_host(&format!("{label}.example")).map(|n| n.len()),
            Ok(71)
        );
        let refusal = canonical_host(&format!("{label}a.example")).unwrap_err();
        assert!(
            refusal.reason.contains("an empty or overlong label"),
            "{refusal}"
        );
    }

    #[test]
    fn a_host_in_a_message_is_quoted_escaped_and_clipped_at_120_characters() {
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        let at = "é".repeat(120);
        assert_eq!(shown(&at), format!("\"{at}\""));
        assert_eq!(shown(&format!("{at}x")), format!("\"{at}\"…"));
        let refusal = canonical_host(&format!("{}:1", "b".repeat(200))).unwrap_err();
        assert!(
            refusal
                .reason
                .starts_with(&format!("\"{}\"… is not a host name", "b".repeat(120))),
            "{refusal}"
        );
    }

    #[test]
    fn inet_aton_spellings_read_as_the_address_they_reach() {
        for (raw, want) in [
            ("1.2.3.4", Some("1.2.3.4")),
            ("1.2.3.255", Some("1.2.3.255")),
            ("1.2.3.256", None),
            ("1.2.65535", Some("1.2.255.255")),
            ("1.2.65536", None),
            ("1.16777215", Some("1.255.255.255")),
            ("1.16777216", None),
            ("4294967295", Some("255.255.255.255")),
            ("4294967296", None),
            ("255.1", Some("255.0.0.1")),
            ("256.1", None),
            ("1.256.1", None),
            ("0x7f.1", Some("127.0.0.1")),
            ("0x10.0x", Some("16.0.0.0")),
            ("0x", Some("0.0.0.0")),
            ("0x1g", None),
            ("010.0", Some("8.0.0.0")),
            ("0", Some("0.0.0.0")),
            ("08", None),
            ("1.2.3.4.0", None),
            ("1.2.3.4.5", None),
            ("1.2.3.4.5.0", None),
            ("", None),
            ("1..2", None),
        ] {
            assert_eq!(
                parse_ipv4_loose(raw),
                want.map(|a| a.parse().unwrap()),
                "{raw:?}"
            );
        }
        // Five numbers: numeric by its last label, but no address; refused all the same.
        let refusal = canonical_host("1.2.3.4.0").unwrap_err();
        assert_eq!(refusal.rule, Rule::NumericHost);
        assert_eq!(
            refusal.reason,
            "\"1.2.3.4.0\" is an IPv4 address in a numeric spelling; the proxy reaches host names only"
        );
        assert_eq!(numeric_host("a.0x1f"), Some(None));
        assert_eq!(numeric_host("a.0x"), Some(None));
        assert_eq!(numeric_host("a.0xg"), None);
        assert_eq!(numeric_host("a.1b"), None);
        assert_eq!(numeric_host("a.b"), None);
        assert_eq!(numeric_host("7"), Some(Some("0.0.0.7".parse().unwrap())));
    }

    #[test]
    fn spaces_controls_and_stars_are_named_as_no_host_name() {
        // Refused before the IDNA mapping, which would call them a bad international name.
        for raw in [
            "a b.example",
            "a\u{7f}b.example",
            "a\u{a0}b.example",
            "a*b.example",
        ] {
            let refusal = canonical_host(raw).unwrap_err();
            assert_eq!(refusal.rule, Rule::Malformed, "{raw:?}");
            assert_eq!(
                refusal.reason,
                format!("{raw:?} is not a host name"),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn what_is_not_a_host_name_is_refused() {
        for raw in [
            "",
            "allowed.example:443.evil.test",
            "allowed.example%2eevil.test",
            "%31%32%37.0.0.1",
            "a..b",
            ".",
            "..",
            "a b.example",
            "a\nb.example",
            "a/b.example",
            "a@b.example",
            "*.example.com",
            "[example.com]",
            "[::1",
            "exa mple.com",
        ] {
            let got = canonical_host(raw);
            assert!(
                matches!(rule(got.clone()), Some(Rule::Malformed | Rule::NumericHost)),
                "{raw:?}: {got:?}"
            );
        }
        assert_eq!(
            canonical_host(&"a".repeat(64)).unwrap_err().rule,
            Rule::Malformed
        );
    }

    #[test]
    fn wildcards_admit_exactly_their_form() {
        let sub = Pattern::parse("*.github.com").unwrap();
        for host in ["api.github.com", "a.b.github.com", "codeload.github.com"] {
            assert!(sub.matches(host), "{host}");
        }
        for host in [
            "github.com",
            "evilgithub.com",
            "github.com.evil.test",
            "api.github.com.evil.test",
            "githubxcom",
            "api-github.com",
        ] {
            assert!(!sub.matches(host), "{host}");
        }
        let one = Pattern::parse("bedrock.*.amazonaws.com").unwrap();
        assert!(one.matches("bedrock.us-east-1.amazonaws.com"));
        for host in [
            "bedrock.amazonaws.com",
            "bedrock.a.b.amazonaws.com",
            "xbedrock.us-east-1.amazonaws.com",
            "bedrock.us-east-1.amazonaws.com.evil.test",
            "bedrock-runtime.us-east-1.amazonaws.com",
            "s3.us-east-1.amazonaws.com",
        ] {
            assert!(!one.matches(host), "{host}");
        }
        let exact = Pattern::parse("GitHub.com.").unwrap();
        assert_eq!(exact, Pattern::Exact("github.com".into()));
        assert!(!exact.matches("api.github.com"));
    }

    #[test]
    fn patterns_are_parsed_strictly() {
        assert_eq!(
            Pattern::parse("*.Example.COM").unwrap().to_string(),
            "*.example.com"
        );
        assert_eq!(
            Pattern::parse("bedrock.*.AmazonAWS.com.")
                .unwrap()
                .to_string(),
            "bedrock.*.amazonaws.com"
        );
        assert_eq!(
            Pattern::parse("*.internal").unwrap().to_string(),
            "*.internal"
        );
        assert_eq!(
            Pattern::parse(" BedRock.*.amazonaws.com ").unwrap(),
            Pattern::OneLabel {
                prefix: "bedrock".into(),
                suffix: "amazonaws.com".into()
            }
        );
        for (bad, why) in [
            ("*", "the * cannot be the last label"),
            ("*.*.example.com", "has more than one *"),
            ("a*.example.com", "a * stands for whole labels"),
            ("example.*", "the * cannot be the last label"),
            ("api.*", "the * cannot be the last label"),
            ("127.0.0.1", "is an IP address"),
            ("*.127.0.0.1", "is an IP address"),
            ("[::1]", "is an IP address"),
            ("10.0.0.0/8", "is not a host name or pattern"),
            ("exa mple.com", "is not a host name or pattern"),
            ("a b.*.example", "is not a host name or pattern"),
            ("", "is not a host name or pattern"),
            ("a..b", "is not a host name or pattern"),
        ] {
            let err = Pattern::parse(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(Pattern::parse("127.0.0.1")
            .unwrap_err()
            .contains("allow_cidrs"));
    }

    #[test]
    fn smuggled_spellings_match_only_their_canonical_host() {
        let p = policy(&["allowed.example"]);
        assert_eq!(
            p.check_host("ALLOWED.example.").as_deref(),
            Ok("allowed.example")
        );
        for raw in [
            "allowed.example:443.evil.test",
            "allowed.example.evil.test",
            "evil.test",
            "allowed.example@evil.test",
            "allowed.example%00.evil.test",
            "allowed.example\0.evil.test",
        ] {
            assert!(p.check_host(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn the_denylist_wins_over_every_allow() {
        let p = policy(&[
            "metadata.google.internal",
            "*.google.internal",
            "*.anthropic.com",
        ]);
        for raw in [
            "metadata.google.internal",
            "METADATA.GOOGLE.INTERNAL.",
            "metadata",
            "statsig.anthropic.com",
        ] {
            assert_eq!(rule(p.check_host(raw)), Some(Rule::Denylist), "{raw}");
        }
        assert_eq!(
            p.check_host("api.anthropic.com").as_deref(),
            Ok("api.anthropic.com")
        );
        assert_eq!(rule(p.check_host("evil.test")), Some(Rule::Allowlist));
    }

    #[test]
    fn the_baseline_has_the_usual_hosts() {
        let p = Policy::baseline();
        for host in [
            "api.anthropic.com",
            "api.openai.com",
            "github.com",
            "api.github.com",
            "objects.githubusercontent.com",
            "registry.npmjs.org",
            "pypi.org",
            "files.pythonhosted.org",
            "index.crates.io",
            "proxy.golang.org",
            "bedrock-runtime.us-west-2.amazonaws.com",
        ] {
            assert!(p.check_host(host).is_ok(), "{host}");
        }
        assert!(p.check_host("example.com").is_err());
    }

    /// Every allowlist entry of the baseline, and why nobody but its provider can make a
    /// name it admits: a name anyone can register (an S3 bucket, a Pages site, a
    /// customer's subdomain) under an allowed pattern would be a way out for anything.
    #[test]
    fn every_baseline_entry_admits_only_names_its_provider_owns() {
        const EXACT: &str = "an exact host name of the provider's own domain";
        let table: &[(&str, &str)] = &[
            ("api.anthropic.com", EXACT),
            ("claude.ai", EXACT),
            ("console.anthropic.com", EXACT),
            ("platform.claude.com", EXACT),
            ("api.openai.com", EXACT),
            ("auth.openai.com", EXACT),
            ("chatgpt.com", EXACT),
            ("generativelanguage.googleapis.com", EXACT),
            ("oauth2.googleapis.com", EXACT),
            ("api.mistral.ai", EXACT),
            ("api.groq.com", EXACT),
            ("api.deepseek.com", EXACT),
            ("api.x.ai", EXACT),
            ("openrouter.ai", EXACT),
            ("github.com", EXACT),
            ("*.github.com", "GitHub's zone: user sites are under github.io, user files under githubusercontent.com; no user picks a name under github.com"),
            ("*.githubusercontent.com", "GitHub's zone for the content it serves; the names (raw., objects., avatars., ...) are GitHub's, the paths are the users'"),
            ("ghcr.io", EXACT),
            ("gitlab.com", EXACT),
            ("*.gitlab.com", "GitLab's zone: user sites are under gitlab.io, never gitlab.com"),
            ("bitbucket.org", EXACT),
            ("api.bitbucket.org", EXACT),
            ("altssh.bitbucket.org", "ssh over port 443; exact, since user sites once lived under bitbucket.org (now bitbucket.io)"),
            ("codeberg.org", EXACT),
            ("*.sr.ht", "sourcehut's zone (git., hg., meta., ...): user sites are under srht.site"),
            ("crates.io", EXACT),
            ("*.crates.io", "the crates.io team's zone (index., static.); crates are paths, not names"),
            ("static.rust-lang.org", EXACT),
            ("pypi.org", EXACT),
            ("files.pythonhosted.org", EXACT),
            ("registry.npmjs.org", EXACT),
            ("registry.yarnpkg.com", EXACT),
            ("npm.pkg.github.com", EXACT),
            ("proxy.golang.org", EXACT),
            ("sum.golang.org", EXACT),
            ("rubygems.org", EXACT),
            ("index.rubygems.org", EXACT),
            ("repo.maven.apache.org", EXACT),
            ("repo1.maven.org", EXACT),
            ("plugins.gradle.org", EXACT),
            ("services.gradle.org", EXACT),
            ("api.nuget.org", EXACT),
            ("packagist.org", EXACT),
            ("repo.packagist.org", EXACT),
            ("hex.pm", EXACT),
            ("repo.hex.pm", EXACT),
        ];
        let p = Policy::baseline();
        let mut listed: Vec<String> = table.iter().map(|(e, _)| e.to_string()).collect();
        for entry in p.allowed() {
            let text = entry.pattern.to_string();
            if let Some((service, rest)) = text.split_once('.') {
                // AWS endpoints, one exact name per region: `<service>.<region>.amazonaws.com`
                // is AWS's; a bucket's name is `<bucket>.s3[-.]....amazonaws.com`.
                if let Some(region) = rest.strip_suffix(".amazonaws.com") {
                    assert!(["bedrock", "bedrock-runtime"].contains(&service), "{text}");
                    let shape = region.split('-').collect::<Vec<_>>();
                    assert!(
                        matches!(shape.as_slice(), [area, .., n] if area.len() == 2 && n.parse::<u8>().is_ok()),
                        "{text}: not a region"
                    );
                    assert!(matches!(entry.pattern, Pattern::Exact(_)), "{text}");
                    listed.push(text);
                    continue;
                }
            }
            assert!(
                table.iter().any(|(e, _)| *e == text),
                "{text} is in the baseline without a reason here"
            );
            let why = table.iter().find(|(e, _)| *e == text).unwrap().1;
            match entry.pattern {
                Pattern::Exact(_) => {}
                Pattern::Subdomains(_) => assert_ne!(why, EXACT, "{text}"),
                Pattern::OneLabel { .. } => panic!("{text}: a one-label wildcard in the baseline"),
            }
        }
        let mut baseline: Vec<String> = p.allowed().iter().map(|a| a.pattern.to_string()).collect();
        baseline.sort();
        listed.sort();
        assert_eq!(
            baseline, listed,
            "the table lists an entry the baseline does not have"
        );
        // The names anyone could claim under the old one-label wildcards.
        for host in [
            "bedrock.s3.amazonaws.com",
            "bedrock-runtime.s3.amazonaws.com",
            "bedrock.s3-website-us-east-1.amazonaws.com",
            "bedrock-runtime.execute-api.amazonaws.com",
            "someone.bitbucket.org",
        ] {
            assert_eq!(rule(p.check_host(host)), Some(Rule::Allowlist), "{host}");
        }
        for host in [
            "bedrock-runtime.us-east-1.amazonaws.com",
            "bedrock.eu-central-1.amazonaws.com",
        ] {
            assert!(p.check_host(host).is_ok(), "{host}");
        }
    }

    #[test]
    fn raw_tcp_is_allowed_to_the_git_hosts_ssh_ports_only() {
        let mut p = Policy::baseline();
        for (host, port) in [
            ("github.com", 22),
            ("ssh.github.com", 443),
            ("gitlab.com", 22),
            ("git.sr.ht", 22),
        ] {
            assert!(p.raw_allowed(host, port), "{host}:{port}");
            assert!(
                p.check_host(host).is_ok(),
                "{host} is raw-allowed but not allowed"
            );
        }
        for (host, port) in [
            ("github.com", 443),
            ("github.com", 2222),
            ("api.github.com", 22),
            ("evil.test", 22),
        ] {
            assert!(!p.raw_allowed(host, port), "{host}:{port}");
        }
        for r in p.raw() {
            let host = match &r.pattern {
                Pattern::Exact(h) => h.clone(),
                other => panic!("{other}: a wildcard raw target in the baseline"),
            };
            assert!(p.check_host(&host).is_ok(), "{host}");
        }
        p.allow_raw(RawAllowed::parse("*.git.example:2222", "operator").unwrap());
        assert!(p.raw_allowed("a.git.example", 2222));
        assert!(!p.raw_allowed("git.example", 2222));
        for bad in [
            "github.com",
            "github.com:",
            "github.com:0",
            "github.com:ssh",
            ":22",
            "10.0.0.1:22",
            "github.com:+22",
        ] {
            assert!(RawAllowed::parse(bad, "t").is_err(), "{bad}");
        }
    }

    /// IANA's IPv4 and IPv6 Special-Purpose Address Registries, entry by entry (address
    /// block, and whether the registry calls it globally reachable), with a sample address
    /// of each and the proxy's verdict. Where the proxy is stricter than "not globally
    /// reachable", the row says why; translated forms are judged by the IPv4 they embed.
    #[test]
    fn special_purpose_registries_are_refused_where_not_globally_reachable() {
        // (block, registry "Globally Reachable", sample addresses, refused)
        let table: &[(&str, &str, &[&str], bool)] = &[
            // IPv4 (iana-ipv4-special-registry)
            (
                "0.0.0.0/8",
                "False",
                &["0.0.0.0", "0.1.2.3", "0.255.255.255"],
                true,
            ),
            ("10.0.0.0/8", "False", &["10.0.0.1", "10.255.255.254"], true),
            (
                "100.64.0.0/10",
                "False",
                &["100.64.0.1", "100.127.255.254"],
                true,
            ),
            (
                "127.0.0.0/8",
                "False",
                &["127.0.0.1", "127.255.255.254"],
                true,
            ),
            (
                "169.254.0.0/16",
                "False",
                &["169.254.0.1", "169.254.255.254"],
                true,
            ),
            (
                "172.16.0.0/12",
                "False",
                &["172.16.0.1", "172.31.255.254"],
                true,
            ),
            (
                "192.0.0.0/24",
                "False",
                &["192.0.0.1", "192.0.0.8", "192.0.0.170", "192.0.0.171"],
                true,
            ),
            // 192.0.0.9/32 (PCP anycast) and 192.0.0.10/32 (TURN anycast) are "True";
            // refused with the rest of their /24, nothing a sandbox needs lives there.
            (
                "192.0.0.9/32, 192.0.0.10/32",
                "True",
                &["192.0.0.9", "192.0.0.10"],
                true,
            ),
            ("192.0.2.0/24", "False", &["192.0.2.1", "192.0.2.254"], true),
            ("192.31.196.0/24", "True", &["192.31.196.1"], false),
            ("192.52.193.0/24", "True", &["192.52.193.1"], false),
            ("192.88.99.0/24", "False", &["192.88.99.1"], true),
            (
                "192.168.0.0/16",
                "False",
                &["192.168.0.1", "192.168.255.254"],
                true,
            ),
            ("192.175.48.0/24", "True", &["192.175.48.1"], false),
            (
                "198.18.0.0/15",
                "False",
                &["198.18.0.1", "198.19.255.254"],
                true,
            ),
            ("198.51.100.0/24", "False", &["198.51.100.1"], true),
            ("203.0.113.0/24", "False", &["203.0.113.1"], true),
            (
                "240.0.0.0/4",
                "False",
                &["240.0.0.1", "255.255.255.254"],
                true,
            ),
            ("255.255.255.255/32", "False", &["255.255.255.255"], true),
            // Not in the registry, refused too: multicast (224.0.0.0/4).
            ("224.0.0.0/4", "-", &["224.0.0.1", "239.255.255.255"], true),
            // IPv6 (iana-ipv6-special-registry)
            ("::1/128", "False", &["::1"], true),
            ("::/128", "False", &["::"], true),
            (
                "::ffff:0:0/96",
                "False",
                &["::ffff:10.0.0.1", "::ffff:198.18.0.1"],
                true,
            ),
            (
                "::ffff:0:0/96 (public IPv4)",
                "by the IPv4",
                &["::ffff:93.184.215.14"],
                false,
            ),
            ("64:ff9b::/96", "True", &["64:ff9b::5db8:d70e"], false),
            (
                "64:ff9b::/96 (special IPv4)",
                "by the IPv4",
                &["64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b::c000:201"],
                true,
            ),
            (
                "64:ff9b:1::/48",
                "False",
                &["64:ff9b:1::1", "64:ff9b:1:ffff::5db8:d70e"],
                true,
            ),
            ("100::/64", "False", &["100::1"], true),
            ("100:0:0:1::/64", "False", &["100:0:0:1::1"], true),
            ("2001::/23", "False", &["2001:1ff::1"], true),
            (
                "2001::/32 (Teredo)",
                "N/A",
                &["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1"],
                true,
            ),
            // Sub-blocks of 2001::/23 the registry calls "True" (anycast, AMT, AS112,
            // ORCHIDv2, Drone Remote ID): refused with the /23.
            (
                "2001:1::1/128 .. 2001:30::/28",
                "True",
                &[
                    "2001:1::1",
                    "2001:1::2",
                    "2001:3::1",
                    "2001:4:112::1",
                    "2001:20::1",
                    "2001:30::1",
                ],
                true,
            ),
            ("2001:2::/48", "False", &["2001:2::1"], true),
            ("2001:10::/28", "False", &["2001:10::1"], true),
            (
                "2001:db8::/32",
                "False",
                &["2001:db8::1", "2001:db8:ffff::1"],
                true,
            ),
            (
                "2002::/16 (special IPv4)",
                "N/A",
                &[
                    "2002:7f00:1::1",
                    "2002:c0a8:101::1",
                    "2002:a9fe:a9fe::1",
                    "2002:c612::1",
                ],
                true,
            ),
            (
                "2002::/16 (public IPv4)",
                "N/A",
                &["2002:5db8:d70e::1"],
                false,
            ),
            ("2620:4f:8000::/48", "True", &["2620:4f:8000::1"], false),
            ("3fff::/20", "False", &["3fff::1", "3fff:fff::1"], true),
            ("5f00::/16", "False", &["5f00::1"], true),
            ("fc00::/7", "False", &["fc00::1", "fd12:3456::1"], true),
            ("fe80::/10", "False", &["fe80::1", "febf::1"], true),
            // Not in the registry, refused too: site-local, multicast, and everything
            // outside global unicast 2000::/3.
            (
                "fec0::/10, ff00::/8, outside 2000::/3",
                "-",
                &["fec0::1", "ff02::1", "4000::1", "e000::1"],
                true,
            ),
            // Ordinary global unicast, for contrast.
            (
                "global unicast",
                "True",
                &[
                    "93.184.215.14",
                    "2606:4700::1",
                    "2a00:1450::1",
                    "3fff:1000::1",
                ],
                false,
            ),
        ];
        let p = Policy::baseline();
        for (block, global, samples, refused) in table {
            for a in *samples {
                let ip: IpAddr = a.parse().unwrap();
                let got = p.check_addr(ip);
                assert_eq!(
                    got.is_err(),
                    *refused,
                    "{a} in {block} (globally reachable: {global}): {got:?}"
                );
                if let Err(r) = got {
                    assert!(matches!(r.rule, Rule::Address | Rule::Denylist), "{a}: {r}");
                }
            }
        }
        // The operator's ranges still widen explicitly, a mapped form with its IPv4;
        // a 6to4 or NAT64 form is reached through a relay elsewhere, never through them.
        let mut p = Policy::baseline();
        p.allow_cidr("198.18.0.0/15".parse().unwrap());
        p.allow_cidr("127.0.0.0/8".parse().unwrap());
        for a in ["198.18.0.1", "::ffff:198.18.0.1", "127.0.0.1"] {
            assert_eq!(p.check_addr(a.parse().unwrap()), Ok(()), "{a}");
        }
        for a in [
            "2002:c612::1",
            "64:ff9b::c612:1",
            "2002:7f00:1::1",
            "192.0.2.1",
        ] {
            assert!(p.check_addr(a.parse().unwrap()).is_err(), "{a}");
        }
    }

    #[test]
    fn local_addresses_are_refused_at_connect_time() {
        let p = Policy::baseline();
        for a in [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.1.1",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:0:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            let got = p.check_addr(ip);
            assert_eq!(
                got.clone().err().map(|r| r.rule),
                Some(Rule::Address),
                "{a}: {got:?}"
            );
        }
        for a in [
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1",
            "::ffff:93.184.215.14",
        ] {
            assert_eq!(p.check_addr(a.parse().unwrap()), Ok(()), "{a}");
        }
    }

    #[test]
    fn metadata_addresses_stay_refused_whatever_the_cidrs_allow() {
        let mut p = Policy::baseline();
        for c in ["169.254.0.0/16", "fd00::/8", "0.0.0.0/0", "::/0"] {
            p.allow_cidr(c.parse().unwrap());
        }
        for a in [
            "169.254.169.254",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "100.100.100.200",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert_eq!(
                p.check_addr(ip).err().map(|r| r.rule),
                Some(Rule::Denylist),
                "{a}"
            );
        }
        assert_eq!(p.check_addr("169.254.1.1".parse().unwrap()), Ok(()));
    }

    #[test]
    fn allow_cidrs_open_exactly_their_range() {
        let mut p = Policy::baseline();
        p.allow_cidr("127.0.0.0/8".parse().unwrap());
        p.allow_cidr("10.1.0.0/16".parse().unwrap());
        for a in ["127.0.0.1", "127.255.0.1", "10.1.200.3", "::ffff:127.0.0.1"] {
            assert_eq!(p.check_addr(a.parse().unwrap()), Ok(()), "{a}");
        }
        for a in ["10.2.0.1", "192.168.0.1", "::1"] {
            assert!(p.check_addr(a.parse().unwrap()).is_err(), "{a}");
        }
        for bad in ["10.0.0.0/33", "10.0.0.0/", "ten/8", "::/129", "10.0.0.0/+8"] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
        assert_eq!(
            "10.1.0.0/16".parse::<Cidr>().unwrap().to_string(),
            "10.1.0.0/16"
        );
        assert!("fd00::1"
            .parse::<Cidr>()
            .unwrap()
            .contains("fd00::1".parse().unwrap()));
    }

    #[test]
    fn a_range_contains_exactly_the_addresses_under_its_prefix() {
        let within =
            |cidr: &str, ip: &str| cidr.parse::<Cidr>().unwrap().contains(ip.parse().unwrap());
        for (cidr, inside, outside) in [
            ("10.1.0.0/16", "10.1.255.255", "10.0.255.255"),
            ("10.1.2.3/32", "10.1.2.3", "10.1.2.2"),
            ("10.1.2.3", "10.1.2.3", "10.1.2.4"),
            ("0.0.0.0/0", "255.255.255.255", "::"),
            ("128.0.0.0/1", "200.0.0.1", "127.255.255.255"),
            ("fd00::/8", "fdff:ffff::1", "fc00::1"),
            ("fd00::/8", "fd00::", "fe00::"),
            ("2001:db8::/32", "2001:db8:ffff::1", "2001:db9::1"),
            ("2001:db8::1/128", "2001:db8::1", "2001:db8::2"),
            ("::/0", "ffff::1", "0.0.0.0"),
            ("8000::/1", "8000::1", "7fff::1"),
        ] {
            assert!(within(cidr, inside), "{inside} in {cidr}");
            assert!(!within(cidr, outside), "{outside} not in {cidr}");
        }
        assert_eq!("fd00::/8".parse::<Cidr>().unwrap().to_string(), "fd00::/8");
        assert_eq!(
            "10.1.2.3".parse::<Cidr>().unwrap().to_string(),
            "10.1.2.3/32"
        );
        assert_eq!("::1".parse::<Cidr>().unwrap().to_string(), "::1/128");
        assert!(" 10.0.0.0/8 ".parse::<Cidr>().is_ok());
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "10.0.0.0/-1",
            "10.0.0.0/8/8",
            "10.0.0.0/256",
        ] {
            assert!(bad.parse::<Cidr>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_ipv4_address_an_ipv6_form_reaches_is_read_from_exactly_its_forms() {
        for (v6, want) in [
            ("::ffff:1.2.3.4", Some("1.2.3.4")),
            ("::ffff:0:1.2.3.4", Some("1.2.3.4")),
            ("::1.2.3.4", Some("1.2.3.4")),
            ("::2", Some("0.0.0.2")),
            ("64:ff9b::1.2.3.4", Some("1.2.3.4")),
            ("2002:102:304::1", Some("1.2.3.4")),
            ("2002:a9fe:a9fe:ffff::", Some("169.254.169.254")),
            ("::", None),
            ("::1", None),
            ("1::ffff:1.2.3.4", None),
            ("::1:ffff:1.2.3.4", None),
            ("::5:0:1.2.3.4", None),
            ("::ffff:5:1.2.3.4", None),
            ("1::ffff:0:1.2.3.4", None),
            ("1::1.2.3.4", None),
            ("::1:0:0:1.2.3.4", None),
            ("64:ff9b:1::1.2.3.4", None),
            ("64:ff9a::1.2.3.4", None),
            ("65:ff9b::1.2.3.4", None),
            ("2003:102:304::1", None),
            ("2606:4700::1", None),
        ] {
            assert_eq!(
                embedded_ipv4(v6.parse().unwrap()),
                want.map(|a| a.parse().unwrap()),
                "{v6}"
            );
        }
    }

    #[test]
    fn each_special_address_is_named_by_its_own_class() {
        for (a, class) in [
            ("0.1.2.3", "\"this network\" (0.0.0.0/8)"),
            ("127.0.0.1", "loopback"),
            ("10.0.0.1", "private (RFC 1918)"),
            ("172.16.0.1", "private (RFC 1918)"),
            ("192.168.0.1", "private (RFC 1918)"),
            ("169.254.0.1", "link-local"),
            ("100.64.0.1", "shared (CGNAT, 100.64.0.0/10)"),
            ("192.0.0.1", "IETF protocol assignments (192.0.0.0/24)"),
            ("192.0.2.1", "documentation (RFC 5737)"),
            ("198.51.100.1", "documentation (RFC 5737)"),
            ("203.0.113.1", "documentation (RFC 5737)"),
            (
                "192.88.99.1",
                "6to4 relay anycast (deprecated, 192.88.99.0/24)",
            ),
            ("198.18.0.1", "benchmarking (198.18.0.0/15)"),
            ("198.19.0.1", "benchmarking (198.18.0.0/15)"),
            ("224.0.0.1", "multicast"),
            ("239.0.0.1", "multicast"),
            ("255.255.255.255", "limited broadcast"),
            ("255.255.255.254", "reserved (240.0.0.0/4)"),
            ("240.0.0.1", "reserved (240.0.0.0/4)"),
            ("::ffff:10.0.0.1", "private (RFC 1918) (IPv4 in IPv6)"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            (
                "64:ff9b:1::1",
                "local-use IPv4/IPv6 translation (64:ff9b:1::/48)",
            ),
            ("fc00::1", "unique local (ULA, fc00::/7)"),
            ("fdff::1", "unique local (ULA, fc00::/7)"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fec0::1", "site-local"),
            ("feff::1", "site-local"),
            ("ff00::1", "multicast"),
            ("100::1", "outside global unicast (2000::/3)"),
            ("4000::1", "outside global unicast (2000::/3)"),
            ("64:1::1", "outside global unicast (2000::/3)"),
            (
                "2001::1",
                "IETF protocol assignments (2001::/23, Teredo included)",
            ),
            (
                "2001:1ff::1",
                "IETF protocol assignments (2001::/23, Teredo included)",
            ),
            ("2001:db8::1", "documentation (2001:db8::/32)"),
            ("3fff::1", "documentation (3fff::/20)"),
            ("3fff:fff::1", "documentation (3fff::/20)"),
            (
                "64:ff9b::1:1",
                "\"this network\" (0.0.0.0/8) (IPv4 in IPv6)",
            ),
        ] {
            assert_eq!(
                special_address(a.parse().unwrap()).as_deref(),
                Some(class),
                "{a}"
            );
        }
        for a in [
            "172.15.0.1",
            "172.32.0.1",
            "100.63.0.1",
            "100.128.0.1",
            "192.0.1.1",
            "192.88.98.1",
            "198.17.0.1",
            "198.20.0.1",
            "223.255.255.255",
            "2001:200::1",
            "2001:db9::1",
            "3fff:1000::1",
            "2000::1",
            "3ffe::1",
        ] {
            assert_eq!(special_address(a.parse().unwrap()), None, "{a}");
        }
        let refusal = Policy::baseline()
            .check_addr("255.255.255.255".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            refusal.reason,
            "the name resolves to 255.255.255.255, a limited broadcast address"
        );
    }

    #[test]
    fn a_raw_target_reads_back_as_written_and_keeps_its_first_source() {
        let raw = RawAllowed::parse(" GitHub.com:22 ", "operator").unwrap();
        assert_eq!(raw.to_string(), "github.com:22");
        assert_eq!(raw.source, "operator");
        let sub = RawAllowed::parse("*.git.example:2222", "t").unwrap();
        assert_eq!(sub.to_string(), "*.git.example:2222");
        for (bad, why) in [
            ("github.com", "needs a port"),
            ("github.com:0", "is not a port"),
            ("github.com:+22", "is not a port"),
            ("github.com:65536", "is not a port"),
            ("127.0.0.1:22", "is an IP address"),
        ] {
            let err = RawAllowed::parse(bad, "t").unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let mut p = Policy::default();
        p.allow_raw(raw.clone());
        p.allow_raw(RawAllowed::parse("github.com:22", "again").unwrap());
        p.allow_raw(RawAllowed::parse("github.com:443", "other port").unwrap());
        let seen: Vec<String> = p
            .raw()
            .iter()
            .map(|r| format!("{r} {}", r.source))
            .collect();
        assert_eq!(
            seen,
            ["github.com:22 operator", "github.com:443 other port"]
        );
        assert!(p.raw_allowed("github.com", 22) && p.raw_allowed("github.com", 443));
        assert!(!p.raw_allowed("github.com", 2222) && !p.raw_allowed("gitlab.com", 22));
        // Allowlist entries likewise keep their first source.
        p.add(Pattern::parse("a.example").unwrap(), "first");
        p.add(Pattern::parse("A.example.").unwrap(), "second");
        assert_eq!(p.allowed().len(), 1);
        assert_eq!(p.allowed()[0].source, "first");
    }

    #[test]
    fn the_policy_shows_what_it_holds() {
        // What `git loop show ID --net` lists.
        let mut p = Policy::baseline();
        assert!(p
            .denied()
            .iter()
            .any(|d| d.pattern == Pattern::Exact("metadata.google.internal".into())));
        assert!(p
            .denied_addresses()
            .iter()
            .any(|(a, _)| *a == "169.254.169.254".parse::<IpAddr>().unwrap()));
        assert!(p.hosts().is_empty() && p.cidrs().is_empty());
        p.pin("registry.internal", "10.1.2.3".parse().unwrap())
            .unwrap();
        p.allow_cidr("10.1.0.0/16".parse().unwrap());
        assert_eq!(
            p.hosts().iter().collect::<Vec<_>>(),
            [(
                &"registry.internal".to_string(),
                &"10.1.2.3".parse::<IpAddr>().unwrap()
            )]
        );
        assert_eq!(p.cidrs(), ["10.1.0.0/16".parse::<Cidr>().unwrap()]);
    }

    #[test]
    fn pins_are_canonical_names() {
        let mut p = Policy::baseline();
        p.pin("Registry.Internal.", "10.1.2.3".parse().unwrap())
            .unwrap();
        assert_eq!(
            p.pinned("registry.internal"),
            Some("10.1.2.3".parse().unwrap())
        );
        assert!(p.pin("10.0.0.1", "10.0.0.1".parse().unwrap()).is_err());
    }
}
