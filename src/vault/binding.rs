//! An entry's binding to hosts (issues 16 and 27): which hosts and ports may receive its
//! value, and which headers besides the common token headers carry it there
//! (`egress::sentinel::binding`). It is stored encrypted with the value, in the entry's
//! header inside the same age file (`entryfmt.rs`), so nobody who cannot decrypt the entry
//! learns where it goes, and the two cannot be separated or swapped.

use crate::egress::sentinel::binding::Binding;

/// The hosts an entry is bound to, and the headers that carry it; no hosts is no binding.
pub type Hosts = Binding;

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
