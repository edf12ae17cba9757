//! The host canonicaliser and the allowlist matcher on arbitrary strings: no panics, and
//! the properties the proxy relies on.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/egress/policy.rs"]
mod policy;

use policy::{canonical_host, Cidr, Pattern, Policy, Rule};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The input is a host name, a pattern and an address range, split at NUL bytes.
    let mut parts = text.split('\0');
    let host = parts.next().unwrap_or_default();
    let pattern = parts.next().unwrap_or_default();
    let cidr = parts.next().unwrap_or_default();

    if let Ok(canon) = canonical_host(host) {
        // Canonical names are canonical: the same again, plain ASCII, never an address.
        assert_eq!(canonical_host(&canon).as_deref(), Ok(canon.as_str()));
        assert!(!canon.ends_with('.') && !canon.is_empty());
        assert!(canon
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b)));
        assert!(canon.parse::<std::net::IpAddr>().is_err());
        if let Ok(p) = Pattern::parse(pattern) {
            // A pattern reads back as itself, and admits only names that end like it.
            assert_eq!(Pattern::parse(&p.to_string()), Ok(p.clone()));
            if p.matches(&canon) {
                let tail = p.to_string();
                let tail = tail.rsplit('*').next().unwrap_or_default();
                assert!(canon.ends_with(tail.trim_start_matches('.')));
            }
        }
    }
    static BASELINE: std::sync::OnceLock<Policy> = std::sync::OnceLock::new();
    let policy = BASELINE.get_or_init(Policy::baseline);
    match policy.check_host(host) {
        Ok(canon) => assert!(policy.denied().iter().all(|d| !d.pattern.matches(&canon))),
        Err(r) => assert!(!r.reason.is_empty() || r.rule == Rule::Malformed),
    }
    if let Ok(c) = cidr.parse::<Cidr>() {
        assert_eq!(c.to_string().parse::<Cidr>(), Ok(c));
    }
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        let _ = policy.check_addr(ip);
    }
});
