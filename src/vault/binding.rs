//! An entry's binding to hosts (issues 16 and 27): which hosts and ports may receive its
//! value, and which headers besides the common token headers carry it there
//! (`egress::sentinel::binding`). It is stored encrypted with the value, in the same age
//! file, so nobody who cannot decrypt the entry learns where it goes, and the two cannot
//! be separated or swapped.
//!
//! The plaintext of an entry is its value as it is, as before bindings existed, or an
//! envelope:
//!
//! ```text
//! \0git-loop-entry 1\n
//! for api.github.com,*.github.com,ghe.example:8443\n
//! header x-custom\n            (only when the binding names headers)
//! \n
//! <value>
//! ```
//!
//! The leading NUL byte cannot start a variable's value (a NUL is refused there), and a
//! file whose content happens to start with the envelope's first line is always stored in
//! an envelope, so no value is ever read as one it is not.

use zeroize::Zeroizing;

use crate::egress::sentinel::binding::{self as sentinel_binding, Binding};

const MAGIC: &[u8] = b"\0git-loop-entry 1\n";

/// Room the envelope may take beyond the value's own bound.
pub const MAX_HEADER: usize = 16 * 1024;

/// The hosts an entry is bound to, and the headers that carry it; no hosts is no binding.
pub type Hosts = Binding;

/// The plaintext stored for `value` with `binding` (none: the value as it is).
pub fn seal(value: &[u8], binding: &Binding) -> Zeroizing<Vec<u8>> {
    if binding.is_empty() && !value.starts_with(MAGIC) {
        return Zeroizing::new(value.to_vec());
    }
    let mut out = Zeroizing::new(Vec::with_capacity(value.len() + 128));
    out.extend_from_slice(MAGIC);
    if !binding.is_empty() {
        let list: Vec<String> = binding.hosts.iter().map(ToString::to_string).collect();
        out.extend_from_slice(format!("for {}\n", list.join(",")).as_bytes());
        if !binding.headers.is_empty() {
            out.extend_from_slice(format!("header {}\n", binding.headers.join(",")).as_bytes());
        }
    }
    out.push(b'\n');
    out.extend_from_slice(value);
    out
}

/// The value and the hosts of a stored plaintext.
pub fn open(plain: &[u8]) -> Result<(Zeroizing<Vec<u8>>, Hosts), String> {
    let Some(mut rest) = plain.strip_prefix(MAGIC) else {
        return Ok((Zeroizing::new(plain.to_vec()), Binding::default()));
    };
    let mut binding = Binding::default();
    loop {
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err("its header does not end".into());
        };
        let line =
            std::str::from_utf8(&rest[..end]).map_err(|_| "its header is not text".to_string())?;
        rest = &rest[end + 1..];
        if line.is_empty() {
            break;
        }
        match line.split_once(' ') {
            Some(("for", list)) => binding.hosts = sentinel_binding::parse_hosts(list)?,
            Some(("header", list)) => {
                binding.headers = sentinel_binding::parse_headers(&[list.to_string()])?
            }
            _ => {
                return Err(format!(
                    "its header has a line this version does not know ({:?}): a newer git-loop wrote it",
                    line.chars().take(40).collect::<String>()
                ))
            }
        }
    }
    if binding.hosts.is_empty() && !binding.headers.is_empty() {
        return Err("its header names headers but no host".into());
    }
    Ok((Zeroizing::new(rest.to_vec()), binding))
}

/// `HOST[:PORT][,HOST[:PORT]...]` as given to `--for`: host names and the allowlist's two
/// wildcard forms, each with a port or none (443); no headers named.
pub fn parse_hosts(list: &str) -> Result<Hosts, String> {
    Binding::parse(list, &[])
}

/// The hosts git-loop suggests for an entry by its name or its value's known prefix, as
/// `--for` takes them.
pub fn suggested(name: &str, value: Option<&[u8]>) -> Option<&'static str> {
    const GITHUB: &str = "github.com,*.github.com";
    match name {
        "GITHUB_TOKEN" | "GH_TOKEN" | "GH_ENTERPRISE_TOKEN" => return Some(GITHUB),
        "ANTHROPIC_API_KEY" | "CLAUDE_CODE_OAUTH_TOKEN" => return Some("api.anthropic.com"),
        "OPENAI_API_KEY" => return Some("api.openai.com"),
        "GITLAB_TOKEN" => return Some("gitlab.com"),
        "NPM_TOKEN" => return Some("registry.npmjs.org"),
        "HF_TOKEN" => return Some("huggingface.co,*.huggingface.co"),
        _ => {}
    }
    let value = value?;
    let prefix = crate::guard::token_prefix(value)?;
    Some(match prefix {
        b"ghp_" | b"gho_" | b"ghu_" | b"ghs_" | b"ghr_" | b"github_pat_" => GITHUB,
        b"sk-ant-" => "api.anthropic.com",
        b"glpat-" => "gitlab.com",
        b"npm_" => "registry.npmjs.org",
        b"hf_" => "huggingface.co,*.huggingface.co",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_binding_travels_with_its_value() {
        let binding = Binding::parse(
            "api.github.com, *.github.com,api.github.com,ghe.example:8443",
            &["X-Custom".into()],
        )
        .unwrap();
        assert_eq!(binding.hosts.len(), 3);
        let sealed = seal(b"ghp_x", &binding);
        assert!(sealed.starts_with(
            b"\0git-loop-entry 1\nfor api.github.com,*.github.com,ghe.example:8443\nheader x-custom\n\n"
        ));
        let (value, back) = open(&sealed).unwrap();
        assert_eq!(&value[..], b"ghp_x");
        assert_eq!(back, binding);
        // Without headers, the envelope is what earlier versions wrote and read.
        let plain = Binding::parse("api.github.com", &[]).unwrap();
        assert_eq!(
            &seal(b"v", &plain)[..],
            b"\0git-loop-entry 1\nfor api.github.com\n\nv"
        );
        // Unbound values are stored as they always were.
        assert_eq!(&seal(b"plain", &Binding::default())[..], b"plain");
        assert_eq!(open(b"plain").unwrap().1, Binding::default());
        // A file that starts like an envelope is wrapped, so it reads back as itself.
        let tricky = b"\0git-loop-entry 1\nfor evil.example\n\nx".to_vec();
        let (value, hosts) = open(&seal(&tricky, &Binding::default())).unwrap();
        assert_eq!((&value[..], hosts.is_empty()), (&tricky[..], true));
        assert!(open(b"\0git-loop-entry 1\nheader x-a\n\nx").is_err());
        assert!(open(b"\0git-loop-entry 1\nfor a.example\nheader Host\n\nx").is_err());
        assert!(open(b"\0git-loop-entry 1\nwho knows\n\nx").is_err());
        assert!(open(b"\0git-loop-entry 1\nfor a.example").is_err());
    }

    #[test]
    fn hosts_are_the_allowlists_forms() {
        assert!(parse_hosts("").is_err());
        assert!(parse_hosts("*").is_err());
        assert!(parse_hosts("127.0.0.1").is_err());
        assert!(parse_hosts("bedrock.*.amazonaws.com").is_ok());
    }

    #[test]
    fn known_tokens_get_suggestions() {
        assert_eq!(suggested("GH_TOKEN", None), Some("github.com,*.github.com"));
        assert_eq!(
            suggested("MY_TOKEN", Some(b"ghp_abc")),
            Some("github.com,*.github.com")
        );
        assert_eq!(suggested("MY_TOKEN", Some(b"zzz")), None);
    }
}
