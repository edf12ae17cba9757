//! Where a bound entry's value may go (issue 27): the hosts and ports of its binding, and
//! the request fields that carry it there.
//!
//! A binding names hosts in the allowlist's forms, each with a port or none
//! (`api.example.com`, `api.example.com:8443`, `*.example.com`); without a port it is
//! HTTPS's default port, 443, and no other. On a request to such a host and port, the
//! value goes into the fields that carry credentials and nowhere else: `Authorization`
//! (inside `Basic` credentials too), the common token headers ([`TOKEN_HEADERS`]), the
//! headers the binding names itself (`--header X-Custom`, `--header Cookie`), and the
//! credential fields of a query or a form or JSON body (sentinel.rs). A placeholder in any
//! other header (`User-Agent`, `Cookie` unless named, `X-Anything`) goes on as it is.

use std::fmt;

use crate::egress::policy::Pattern;

/// The port a binding's host means when it names none: HTTPS's.
pub const DEFAULT_PORT: u16 = 443;

/// Headers that carry a credential on their own, whatever the binding names: where APIs
/// expect a token (Anthropic's `x-api-key`, Azure's `api-key`, Supabase's `apikey`,
/// GitLab's `private-token` and `job-token`, Google's `x-goog-api-key`, HashiCorp
/// Vault's `x-vault-token`).
pub const TOKEN_HEADERS: &[&str] = &[
    "authorization",
    "x-api-key",
    "api-key",
    "apikey",
    "x-auth-token",
    "x-access-token",
    "private-token",
    "job-token",
    "x-goog-api-key",
    "x-vault-token",
];

/// Headers a binding may not name: they describe the connection or the proxy, never a
/// credential for the server (and some the proxy drops).
const NOT_NAMEABLE: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-connection",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "content-type",
    "content-encoding",
    "accept-encoding",
    "http2-settings",
];

/// One host of a binding, with its port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundHost {
    pub pattern: Pattern,
    /// `None`: [`DEFAULT_PORT`].
    pub port: Option<u16>,
}

impl BoundHost {
    /// `HOST` or `HOST:PORT`, the host in the allowlist's forms.
    pub fn parse(raw: &str) -> Result<BoundHost, String> {
        let raw = raw.trim();
        let (host, port) = match raw.rsplit_once(':') {
            Some((h, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                let port = p
                    .parse::<u16>()
                    .ok()
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("'{raw}': {p} is not a port (1-65535)"))?;
                (h, Some(port))
            }
            Some((_, p)) => return Err(format!("'{raw}': {p:?} is not a port")),
            _ => (raw, None),
        };
        let pattern = Pattern::parse(host)?;
        // `host:443` is the host alone: one spelling for one binding.
        Ok(BoundHost {
            pattern,
            port: port.filter(|&p| p != DEFAULT_PORT),
        })
    }

    /// May `host` (canonical) on `port` receive the value?
    pub fn matches(&self, host: &str, port: u16) -> bool {
        self.port.unwrap_or(DEFAULT_PORT) == port && self.pattern.matches(host)
    }
}

impl fmt::Display for BoundHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}:{p}", self.pattern),
            None => write!(f, "{}", self.pattern),
        }
    }
}

/// An entry's binding: the hosts (with ports) that may receive its value, and the header
/// names besides [`TOKEN_HEADERS`] that carry it. No hosts: unbound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    pub hosts: Vec<BoundHost>,
    /// Lower case, as HTTP/2 writes them.
    pub headers: Vec<String>,
}

impl Binding {
    /// A binding to `hosts` (`--for`), with the header names of `headers` (`--header`,
    /// each a name or a comma-separated list).
    pub fn parse(hosts: &str, headers: &[String]) -> Result<Binding, String> {
        Ok(Binding {
            hosts: parse_hosts(hosts)?,
            headers: parse_headers(headers)?,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// May `host` (canonical) on `port` receive the value?
    pub fn bound_to(&self, host: &str, port: u16) -> bool {
        self.hosts.iter().any(|h| h.matches(host, port))
    }

    /// Does the binding name `host`, on any port? Then the proxy ends TLS toward it, so
    /// that a placeholder sent to one of its other ports is seen and refused.
    pub fn names_host(&self, host: &str) -> bool {
        self.hosts.iter().any(|h| h.pattern.matches(host))
    }

    /// Does the header `name` (any case) carry this entry's value?
    pub fn carries(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        TOKEN_HEADERS.contains(&name.as_str()) || self.headers.contains(&name)
    }

    /// `a.example, b.example:8443`.
    pub fn hosts_text(&self) -> String {
        self.hosts
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The binding with `host:port` added (the host as it is: a name, never widened to a
    /// pattern).
    pub fn with_host(&self, host: &str, port: u16) -> Binding {
        let mut out = self.clone();
        if !out.bound_to(host, port) {
            out.hosts.push(BoundHost {
                pattern: Pattern::Exact(host.to_string()),
                port: (port != DEFAULT_PORT).then_some(port),
            });
        }
        out
    }

    /// The arguments `git loop vault bind VAULT ENTRY` takes for this binding, quoted for
    /// a shell where they need it.
    pub fn bind_args(&self) -> String {
        let hosts: Vec<String> = self.hosts.iter().map(ToString::to_string).collect();
        let mut out = shell_word(&hosts.join(","));
        for h in &self.headers {
            out.push_str(" --header ");
            out.push_str(&shell_word(h));
        }
        out
    }
}

/// `HOST[:PORT][,HOST[:PORT]...]` as given to `--for`: host names and the allowlist's two
/// wildcard forms, each with a port or none (443).
pub fn parse_hosts(list: &str) -> Result<Vec<BoundHost>, String> {
    let mut out: Vec<BoundHost> = Vec::new();
    for raw in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let h = BoundHost::parse(raw)?;
        if !out.contains(&h) {
            out.push(h);
        }
    }
    if out.is_empty() {
        return Err("no host given".into());
    }
    Ok(out)
}

/// Header names as given to `--header` (each a name or a comma-separated list), lower
/// case; the common token headers need not be named.
pub fn parse_headers(given: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for name in given
        .iter()
        .flat_map(|g| g.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        // RFC 9110's token characters.
        let token = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token || name.len() > 100 {
            return Err(format!("'{name}' is not a header name"));
        }
        let lower = name.to_ascii_lowercase();
        if NOT_NAMEABLE.contains(&lower.as_str()) {
            return Err(format!(
                "{name} describes the request or the connection, not a credential"
            ));
        }
        if !out.contains(&lower) {
            out.push(lower);
        }
    }
    Ok(out)
}

/// `word` as one shell word: as it is when it holds only characters no shell reads,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.,:/@%+=".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_without_a_port_is_port_443_only() {
        let b = Binding::parse("api.example.com, *.example.org:8443", &[]).unwrap();
        assert!(b.bound_to("api.example.com", 443));
        assert!(!b.bound_to("api.example.com", 8443));
        assert!(!b.bound_to("api.example.com", 80));
        assert!(b.bound_to("a.example.org", 8443));
        assert!(!b.bound_to("a.example.org", 443));
        assert!(!b.bound_to("example.org", 8443));
        assert!(b.names_host("api.example.com") && b.names_host("x.example.org"));
        assert_eq!(b.hosts_text(), "api.example.com, *.example.org:8443");
        // `:443` is the host alone; duplicates go.
        let same = Binding::parse("api.example.com:443,api.example.com", &[]).unwrap();
        assert_eq!(same.hosts.len(), 1);
        assert_eq!(same.hosts_text(), "api.example.com");
    }

    #[test]
    fn bad_hosts_and_ports_are_refused() {
        for bad in [
            "",
            "*",
            "127.0.0.1",
            "a.example:0",
            "a.example:65536",
            "a.example:x",
            "a.example:",
            "[::1]:443",
            "a.*.*.b",
        ] {
            assert!(parse_hosts(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_headers_and_named_ones_carry_the_value() {
        let b = Binding::parse("a.example", &["X-Custom, Cookie".into()]).unwrap();
        assert_eq!(b.headers, ["x-custom", "cookie"]);
        for h in [
            "Authorization",
            "x-api-key",
            "Private-Token",
            "X-Goog-Api-Key",
            "X-Custom",
            "cookie",
        ] {
            assert!(b.carries(h), "{h}");
        }
        for h in ["User-Agent", "X-Other", "Referer", "Accept"] {
            assert!(!b.carries(h), "{h}");
        }
        let plain = Binding::parse("a.example", &[]).unwrap();
        assert!(!plain.carries("Cookie") && !plain.carries("x-custom"));
        for bad in [
            "Host",
            "Proxy-Authorization",
            "bad name",
            "a:b",
            "Content-Length",
        ] {
            assert!(parse_headers(&[bad.to_string()]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_fix_adds_exactly_the_host_and_port_met() {
        let b = Binding::parse("api.example.com", &["X-Key".into()]).unwrap();
        let wider = b.with_host("api.example.com", 8443);
        assert_eq!(
            wider.bind_args(),
            "api.example.com,api.example.com:8443 --header x-key"
        );
        assert_eq!(b.with_host("api.example.com", 443), b);
        let other = Binding::parse("*.example.com", &[]).unwrap();
        assert_eq!(
            other.with_host("evil.test", 443).bind_args(),
            "'*.example.com,evil.test'"
        );
    }
}
