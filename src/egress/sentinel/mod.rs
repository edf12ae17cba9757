//! Credential sentinels (issues 16 and 27), pure: what stands in for a bound vault entry
//! inside the sandbox, and what the proxy does when it meets one in a request or its value
//! in an answer.
//!
//! A vault entry bound to hosts (`vault set V env NAME --for HOST[:PORT]`) never enters
//! the sandbox. Inside, its variable (or the token in its file) holds a *placeholder* made
//! for this run: the same length and the same kinds of characters as the value, keeping a
//! known token prefix (`sk-ant-api03-`, `ghp_`), so tools that check a token's format take
//! it. The value stays in the host-side proxy's memory. The proxy ends TLS toward the
//! hosts an entry is bound to (intercept.rs) and puts the value where the placeholder is,
//! in the fields that carry credentials to those hosts and ports only ([`binding`]):
//! `Authorization` (inside `Basic` credentials too: git over HTTPS sends a token as a
//! password), the common token headers and the headers the binding names, and where a
//! credential travels in a target's query or a bounded body of the content types tokens
//! travel in (form and JSON): as the whole value of a field whose name says it holds one
//! (`token`, `client_secret`, `api_key`, `password`). Nowhere else: a placeholder in a
//! path, in `User-Agent` or another header, or inside the text of a JSON body (an agent's
//! conversation with its model, an issue's description), stays a placeholder, so that no
//! bound host can be made to store the value where it shows it back (an error message
//! that quotes the path, a model that reads its context, a public gist). A placeholder
//! toward any other host or port, in anything the proxy can read, is refused and named in
//! a violation event with the command that would bind it there; the value itself is
//! never named anywhere.
//!
//! What comes back is masked ([`mask`]): every form of every value of the run in the
//! answer's headers and body becomes the placeholder's same form.
//!
//! Matching is exact bytes (`memchr::memmem`). A placeholder is built from characters
//! that need no escaping in a URL, a header or a JSON string, so it travels as it is; the
//! value is escaped for where it goes (percent-encoding in a target or a form, JSON
//! escapes in JSON), and a value that cannot stand in a header (a control character) is
//! not put in one.

pub mod binding;
mod files;
pub mod mask;

use std::sync::Arc;

use base64::Engine;
use memchr::memmem;
use zeroize::Zeroizing;

pub use binding::{Binding, BoundHost};
pub use files::file_secrets;

/// A request body larger than this is not rewritten (a placeholder in it stays what it
/// is); it is still searched for placeholders as it streams.
pub const MAX_BODY: usize = 1024 * 1024;

/// Fewest random characters a placeholder has, whatever the value's length: fewer could
/// turn up in a request by chance.
const MIN_RANDOM: usize = 16;

/// Where a request goes, for the question whether a value may go there: a host
/// (canonical) and port over TLS that the proxy ends, or `None` (plain HTTP, a name to
/// look up), where no value ever goes.
pub type Toward<'a> = Option<(&'a str, u16)>;

/// One bound entry's stand-in for this run.
pub struct Sentinel {
    /// `env:NAME` or `file:REL`: what events and refusals name.
    pub entry: String,
    /// The vault the entry is in, for the command that would bind it elsewhere.
    pub vault: String,
    /// What the sandbox holds instead of the value.
    pub placeholder: String,
    value: Zeroizing<String>,
    /// Where the value may go.
    pub binding: Binding,
}

impl std::fmt::Debug for Sentinel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sentinel")
            .field("entry", &self.entry)
            .field("vault", &self.vault)
            .field("placeholder", &self.placeholder)
            .field("binding", &self.binding)
            .finish_non_exhaustive()
    }
}

impl Sentinel {
    /// A sentinel for `value` with a fresh placeholder.
    pub fn new(entry: impl Into<String>, value: &str, binding: Binding) -> Sentinel {
        Sentinel {
            entry: entry.into(),
            vault: String::new(),
            placeholder: placeholder(value),
            value: Zeroizing::new(value.to_string()),
            binding,
        }
    }

    /// The sentinel of an entry of vault `vault`.
    pub fn in_vault(mut self, vault: &str) -> Sentinel {
        self.vault = vault.to_string();
        self
    }

    /// May `host` (canonical) on `port` receive the value?
    pub fn bound_to(&self, host: &str, port: u16) -> bool {
        self.binding.bound_to(host, port)
    }

    /// The hosts, as `vault list` writes them.
    pub fn hosts_text(&self) -> String {
        self.binding.hosts_text()
    }

    /// The command that binds the entry to `host:port` besides its hosts.
    pub fn bind_command(&self, host: &str, port: u16) -> String {
        let vault = if self.vault.is_empty() {
            "VAULT"
        } else {
            &self.vault
        };
        format!(
            "git loop vault bind {vault} {} {}",
            self.entry,
            self.binding.with_host(host, port).bind_args()
        )
    }
}

/// A placeholder shaped like `value`: a known token prefix kept (with a short version
/// segment after it, as in `sk-ant-api03-`), then each character replaced by a random one
/// of its kind (digit, lower case, upper case), `-`, `_` and `.` kept where they are, and
/// any other character replaced by a random letter or digit; at least [`MIN_RANDOM`]
/// random characters (a short value gets a longer placeholder).
pub fn placeholder(value: &str) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let bytes = value.as_bytes();
    let mut keep = crate::guard::token_prefix(bytes).map_or(0, <[u8]>::len);
    if keep > 0 {
        // A version segment right after the prefix (`api03-`, `oat01-`, `proj-`).
        let rest = &bytes[keep..];
        if let Some(end) = rest.iter().position(|&b| b == b'-' || b == b'_') {
            if end <= 6 && rest[..end].iter().all(u8::is_ascii_alphanumeric) {
                keep += end + 1;
            }
        }
    }
    let mut out = String::with_capacity(value.len().max(MIN_RANDOM));
    out.push_str(&value[..keep]);
    let mut random = 0;
    const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for c in value[keep..].chars() {
        let r = match c {
            '0'..='9' => (b'0' + rng.random_range(0..10)) as char,
            'a'..='z' => (b'a' + rng.random_range(0..26)) as char,
            'A'..='Z' => (b'A' + rng.random_range(0..26)) as char,
            '-' | '_' | '.' => {
                out.push(c);
                continue;
            }
            _ => ALNUM[rng.random_range(0..ALNUM.len())] as char,
        };
        out.push(r);
        random += 1;
    }
    while random < MIN_RANDOM {
        out.push(ALNUM[rng.random_range(0..ALNUM.len())] as char);
        random += 1;
    }
    out
}

/// How a value is written where a placeholder stood, and which placeholders are replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// A header value: every placeholder, the value as it is, unless it holds a byte a
    /// header cannot carry (then the placeholder stays).
    Header,
    /// A request target or a form body: the whole value of a credential field
    /// (`?token=…&`), percent-encoded where it must be.
    Percent,
    /// A JSON body: the whole string value of a credential member (`"token": "…"`),
    /// escaped.
    Json,
}

/// Does a field of this name carry a credential?
fn credential_field(name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passwd",
        "key",
        "auth",
        "credential",
    ]
    .iter()
    .any(|w| name.contains(w))
}

/// Is the placeholder at `at..end` of `bytes` the whole value of a credential field?
fn in_credential_field(bytes: &[u8], at: usize, end: usize, encoding: Encoding) -> bool {
    match encoding {
        Encoding::Header => true,
        Encoding::Percent => {
            if !matches!(bytes.get(end), None | Some(b'&') | Some(b'#') | Some(b';')) {
                return false;
            }
            let Some(eq) = at.checked_sub(1).filter(|&i| bytes[i] == b'=') else {
                return false;
            };
            let start = bytes[..eq]
                .iter()
                .rposition(|&b| b == b'&' || b == b'?' || b == b';')
                .map_or(0, |i| i + 1);
            credential_field(&bytes[start..eq])
        }
        Encoding::Json => {
            if at == 0 || bytes[at - 1] != b'"' || bytes.get(end) != Some(&b'"') {
                return false;
            }
            // Back from the opening quote: `:`, then the member's name in quotes.
            let mut i = at - 1;
            let skip_ws = |i: &mut usize| {
                while *i > 0 && bytes[*i - 1].is_ascii_whitespace() {
                    *i -= 1;
                }
            };
            skip_ws(&mut i);
            if i == 0 || bytes[i - 1] != b':' {
                return false;
            }
            i -= 1;
            skip_ws(&mut i);
            if i == 0 || bytes[i - 1] != b'"' {
                return false;
            }
            let close = i - 1;
            let Some(open) = bytes[..close].iter().rposition(|&b| b == b'"') else {
                return false;
            };
            credential_field(&bytes[open + 1..close])
        }
    }
}

/// A placeholder met where its value may not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misplaced {
    pub entry: String,
    pub hosts: String,
    /// The command that binds the entry there (none where no value ever goes: plain
    /// HTTP, a name to look up).
    pub fix: Option<String>,
}

/// The sentinels of one run.
#[derive(Debug, Default)]
pub struct Sentinels {
    list: Vec<Sentinel>,
    finders: Vec<memmem::Finder<'static>>,
    longest: usize,
    forms: Arc<mask::Forms>,
}

impl Sentinels {
    pub fn new(list: Vec<Sentinel>) -> Sentinels {
        let finders = list
            .iter()
            .map(|s| memmem::Finder::new(s.placeholder.as_bytes()).into_owned())
            .collect();
        let longest = list.iter().map(|s| s.placeholder.len()).max().unwrap_or(0);
        let pairs: Vec<(&[u8], &[u8])> = list
            .iter()
            .map(|s| (s.value.as_bytes(), s.placeholder.as_bytes()))
            .collect();
        let forms = Arc::new(mask::Forms::new(&pairs));
        Sentinels {
            list,
            finders,
            longest,
            forms,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Sentinel> {
        self.list.iter()
    }

    /// Does any binding name `host`, on any port? Then the proxy ends TLS toward it.
    pub fn any_bound_to(&self, host: &str) -> bool {
        self.list.iter().any(|s| s.binding.names_host(host))
    }

    /// Longest placeholder: what a streaming search keeps between chunks, plus one.
    pub fn longest(&self) -> usize {
        self.longest
    }

    /// Every form of every value, for masking what servers answer.
    pub fn forms(&self) -> &Arc<mask::Forms> {
        &self.forms
    }

    fn misplaced(s: &Sentinel, toward: Toward) -> Misplaced {
        Misplaced {
            entry: s.entry.clone(),
            hosts: s.hosts_text(),
            fix: toward.map(|(host, port)| s.bind_command(host, port)),
        }
    }

    /// The first placeholder in `bytes` that may not go `toward` (`None`: plain HTTP or a
    /// name, where no value is ever put in).
    pub fn misplaced_in(&self, toward: Toward, bytes: &[u8]) -> Option<Misplaced> {
        if bytes.len() < MIN_RANDOM {
            return None;
        }
        self.list
            .iter()
            .zip(&self.finders)
            .find(|(s, f)| {
                !toward.is_some_and(|(h, p)| s.bound_to(h, p)) && f.find(bytes).is_some()
            })
            .map(|(s, _)| Sentinels::misplaced(s, toward))
    }

    /// [`Sentinels::misplaced_in`] for a header value, looking inside `Basic` credentials
    /// as well.
    pub fn misplaced_in_header(&self, toward: Toward, value: &[u8]) -> Option<Misplaced> {
        self.misplaced_in(toward, value)
            .or_else(|| basic(value).and_then(|decoded| self.misplaced_in(toward, &decoded)))
    }

    /// `bytes` (a query, a form or JSON body) toward `host:port` with the placeholders of
    /// entries bound there replaced by their values where they stand in a credential
    /// field; `Ok(None)` when there is nothing to replace. A placeholder of an entry not
    /// bound there is an error.
    pub fn substitute(
        &self,
        host: &str,
        port: u16,
        bytes: &[u8],
        encoding: Encoding,
    ) -> Result<Option<Vec<u8>>, Misplaced> {
        if let Some(m) = self.misplaced_in(Some((host, port)), bytes) {
            return Err(m);
        }
        Ok(self.replace(bytes, encoding, |s| s.bound_to(host, port)))
    }

    /// Every placeholder in `bytes` of the sentinels `chosen` picks, where it stands in a
    /// credential field for `encoding`, replaced by its value.
    fn replace(
        &self,
        bytes: &[u8],
        encoding: Encoding,
        chosen: impl Fn(&Sentinel) -> bool,
    ) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        for (s, f) in self.list.iter().zip(&self.finders) {
            if !chosen(s) {
                continue;
            }
            let current = out.as_deref().unwrap_or(bytes);
            let len = s.placeholder.len();
            let places: Vec<usize> = f
                .find_iter(current)
                .filter(|&at| in_credential_field(current, at, at + len, encoding))
                .collect();
            if places.is_empty() {
                continue;
            }
            let Some(value) = encode(&s.value, encoding) else {
                continue;
            };
            let mut next = Vec::with_capacity(current.len() + value.len());
            let mut last = 0;
            for at in places {
                next.extend_from_slice(&current[last..at]);
                next.extend_from_slice(&value);
                last = at + len;
            }
            next.extend_from_slice(&current[last..]);
            out = Some(next);
        }
        out
    }

    /// The header `name: value` toward `host:port`: the placeholders of entries bound there
    /// replaced by their values when the header carries credentials for them
    /// ([`Binding::carries`]), inside `Basic` credentials too (decoded, replaced, encoded
    /// again); in any other header a placeholder stays what it is. A placeholder of an
    /// entry not bound there, in any header, is an error.
    pub fn substitute_header(
        &self,
        host: &str,
        port: u16,
        name: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, Misplaced> {
        if let Some(m) = self.misplaced_in_header(Some((host, port)), value) {
            return Err(m);
        }
        let carries = |s: &Sentinel| s.bound_to(host, port) && s.binding.carries(name);
        if !self.list.iter().any(carries) {
            return Ok(None);
        }
        if let Some(decoded) = basic(value) {
            if let Some(new) = self.replace(&decoded, Encoding::Header, carries) {
                let encoded = base64::engine::general_purpose::STANDARD.encode(&new[..]);
                return Ok(Some(format!("Basic {encoded}").into_bytes()));
            }
        }
        Ok(self.replace(value, Encoding::Header, carries))
    }

    /// `bytes` from a server with every form of every value of this run replaced by the
    /// placeholder's (mask.rs), so a server that echoes a credential back does not hand it
    /// to the sandbox; `None` when there is none.
    pub fn mask(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        self.forms.mask(bytes)
    }

    /// The entry of which some form of the value is in `bytes`, if any.
    pub fn value_in(&self, bytes: &[u8]) -> Option<&Sentinel> {
        self.forms.find(bytes).map(|i| &self.list[i])
    }
}

/// The decoded credentials of an `Authorization: Basic` value.
fn basic(value: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .map(Zeroizing::new)
}

fn encode(value: &str, encoding: Encoding) -> Option<Zeroizing<Vec<u8>>> {
    let bytes = value.as_bytes();
    Some(Zeroizing::new(match encoding {
        Encoding::Header => {
            if bytes.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
                return None;
            }
            bytes.to_vec()
        }
        Encoding::Percent => {
            let mut out = Vec::with_capacity(bytes.len());
            for &b in bytes {
                if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                    out.push(b);
                } else {
                    out.extend_from_slice(format!("%{b:02X}").as_bytes());
                }
            }
            out
        }
        Encoding::Json => {
            let quoted = serde_json::to_string(value).ok()?;
            quoted.as_bytes()[1..quoted.len() - 1].to_vec()
        }
    }))
}

/// A search for misplaced placeholders in a stream that arrives in pieces: the end of each
/// piece is kept to be searched with the start of the next.
#[derive(Debug, Default)]
pub struct StreamSearch {
    carry: Vec<u8>,
}

impl StreamSearch {
    /// Searches the next piece; the first misplaced placeholder, if any.
    pub fn feed(
        &mut self,
        sentinels: &Sentinels,
        toward: Toward,
        piece: &[u8],
    ) -> Option<Misplaced> {
        if sentinels.is_empty() || piece.is_empty() {
            return None;
        }
        let keep = sentinels.longest().saturating_sub(1);
        let found = if self.carry.is_empty() {
            sentinels.misplaced_in(toward, piece)
        } else {
            // Only the seam needs the joined search; the piece itself is searched alone.
            let seam = piece.len().min(keep);
            let mut joined = Vec::with_capacity(self.carry.len() + seam);
            joined.extend_from_slice(&self.carry);
            joined.extend_from_slice(&piece[..seam]);
            sentinels
                .misplaced_in(toward, &joined)
                .or_else(|| sentinels.misplaced_in(toward, piece))
        };
        // What the next piece's seam is searched with: the last `keep` bytes so far.
        if piece.len() >= keep {
            self.carry.clear();
            self.carry.extend_from_slice(&piece[piece.len() - keep..]);
        } else {
            self.carry.extend_from_slice(piece);
            let extra = self.carry.len().saturating_sub(keep);
            self.carry.drain(..extra);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_keep_the_shape_and_the_known_prefix() {
        for value in [
            "sk-ant-api03-AbCdEf0123456789_xyz-ABCDEFGHIJ",
            "sk-ant-oat01-zzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            "ghp_0123456789abcdefABCDEF0123456789abcd",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            let p = placeholder(value);
            assert_eq!(p.len(), value.len(), "{value} -> {p}");
            assert_ne!(p, value);
            let prefix = crate::guard::token_prefix(value.as_bytes()).unwrap();
            assert!(p.as_bytes().starts_with(prefix), "{value} -> {p}");
            for (a, b) in value.chars().zip(p.chars()) {
                assert_eq!(a.is_ascii_digit(), b.is_ascii_digit(), "{value} -> {p}");
                assert_eq!(
                    a.is_ascii_lowercase(),
                    b.is_ascii_lowercase(),
                    "{value} -> {p}"
                );
                assert_eq!(
                    a.is_ascii_uppercase(),
                    b.is_ascii_uppercase(),
                    "{value} -> {p}"
                );
            }
            // The guard still takes it for a token, as tools that check formats do.
            assert!(!crate::guard::token_spans(p.as_bytes()).is_empty(), "{p}");
        }
        assert!(placeholder("sk-ant-api03-AAAA").starts_with("sk-ant-api03-"));
        // Short values get a longer placeholder; others keep no prefix.
        let p = placeholder("hunter2");
        assert!(p.len() >= MIN_RANDOM, "{p}");
        let p = placeholder("a/b+c=d e");
        assert!(p.bytes().all(|b| b.is_ascii_alphanumeric()), "{p}");
        // Two runs never share one.
        assert_ne!(
            placeholder("ghp_0123456789abcdefABCDEF0123456789abcd"),
            placeholder("ghp_0123456789abcdefABCDEF0123456789abcd")
        );
    }

    fn sentinels() -> (Sentinels, String, String) {
        let gh = Sentinel::new(
            "env:GITHUB_TOKEN",
            "ghp_realvalue0123456789abcdefABCDEF0123",
            Binding::parse("github.com,*.github.com", &[]).unwrap(),
        )
        .in_vault("default");
        let ant = Sentinel::new(
            "env:ANTHROPIC_API_KEY",
            "sk-ant-api03-real\"value/with+odd=chars",
            Binding::parse("api.anthropic.com", &["X-Custom".into()]).unwrap(),
        )
        .in_vault("work");
        let (p1, p2) = (gh.placeholder.clone(), ant.placeholder.clone());
        (Sentinels::new(vec![gh, ant]), p1, p2)
    }

    #[test]
    fn values_go_to_their_hosts_and_ports_only() {
        let (s, gh, ant) = sentinels();
        let header = format!("Bearer {gh}");
        assert_eq!(
            s.substitute_header("api.github.com", 443, "Authorization", header.as_bytes())
                .unwrap()
                .unwrap(),
            b"Bearer ghp_realvalue0123456789abcdefABCDEF0123"
        );
        assert_eq!(
            s.substitute_header("api.github.com", 443, "Authorization", b"Bearer x")
                .unwrap(),
            None
        );
        let m = s
            .substitute_header("evil.example", 443, "Authorization", header.as_bytes())
            .unwrap_err();
        assert_eq!(m.entry, "env:GITHUB_TOKEN");
        assert_eq!(m.hosts, "github.com, *.github.com");
        assert_eq!(
            m.fix.as_deref(),
            Some("git loop vault bind default env:GITHUB_TOKEN 'github.com,*.github.com,evil.example'")
        );
        // Another port of a bound host is another host.
        let m = s
            .substitute_header("api.github.com", 8443, "Authorization", header.as_bytes())
            .unwrap_err();
        assert_eq!(
            m.fix.as_deref(),
            Some("git loop vault bind default env:GITHUB_TOKEN 'github.com,*.github.com,api.github.com:8443'")
        );
        // Another entry's placeholder toward a bound host is refused too, in any header.
        let both = format!("{gh} {ant}");
        let m = s
            .substitute_header("github.com", 443, "User-Agent", both.as_bytes())
            .unwrap_err();
        assert_eq!(m.entry, "env:ANTHROPIC_API_KEY");
        assert_eq!(
            m.fix.as_deref(),
            Some("git loop vault bind work env:ANTHROPIC_API_KEY api.anthropic.com,github.com --header x-custom")
        );
        // Plain HTTP: every placeholder is misplaced, and no binding is the fix.
        let m = s.misplaced_in(None, header.as_bytes()).unwrap();
        assert_eq!(m.fix, None);
        assert!(s
            .misplaced_in(None, b"nothing here at all, really")
            .is_none());
    }

    #[test]
    fn only_credential_fields_receive_the_value() {
        let (s, gh, ant) = sentinels();
        let value = "ghp_realvalue0123456789abcdefABCDEF0123";
        for name in [
            "Authorization",
            "X-Api-Key",
            "private-token",
            "X-Goog-Api-Key",
        ] {
            let got = s
                .substitute_header("github.com", 443, name, format!("token {gh}").as_bytes())
                .unwrap()
                .unwrap();
            assert_eq!(got, format!("token {value}").as_bytes(), "{name}");
        }
        for name in [
            "User-Agent",
            "Cookie",
            "X-Custom",
            "Referer",
            "X-Forwarded-For",
        ] {
            assert_eq!(
                s.substitute_header("github.com", 443, name, format!("a {gh}").as_bytes()),
                Ok(None),
                "{name}"
            );
        }
        // A header an entry names is a credential field for that entry only.
        let got = s
            .substitute_header("api.anthropic.com", 443, "x-custom", ant.as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(got, b"sk-ant-api03-real\"value/with+odd=chars");
    }

    #[test]
    fn basic_credentials_are_opened() {
        let (s, gh, _) = sentinels();
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let header = format!("Basic {}", b64(&format!("x-access-token:{gh}")));
        let out = s
            .substitute_header("github.com", 443, "authorization", header.as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "Basic {}",
                b64("x-access-token:ghp_realvalue0123456789abcdefABCDEF0123")
            )
        );
        // Not in a header that carries no credential.
        assert_eq!(
            s.substitute_header("github.com", 443, "x-note", header.as_bytes()),
            Ok(None)
        );
        assert!(s
            .misplaced_in_header(Some(("gitlab.com", 443)), header.as_bytes())
            .is_some());
        assert!(s
            .misplaced_in_header(Some(("github.com", 443)), header.as_bytes())
            .is_none());
    }

    #[test]
    fn values_are_escaped_for_where_they_go() {
        let (s, _, ant) = sentinels();
        let host = "api.anthropic.com";
        let form = format!("key={ant}&x=1");
        // Not in a field that carries no credential, nor inside a longer value.
        let text = format!("text={ant}&q=a{ant}");
        assert_eq!(
            s.substitute(host, 443, text.as_bytes(), Encoding::Percent),
            Ok(None)
        );
        let chat = format!("{{\"content\": \"{ant}\", \"text\": \"say {ant}\"}}");
        assert_eq!(
            s.substitute(host, 443, chat.as_bytes(), Encoding::Json),
            Ok(None)
        );
        let nested = format!("{{\"auth\": {{\"api_key\" : \"{ant}\"}}}}");
        let out = s
            .substitute(host, 443, nested.as_bytes(), Encoding::Json)
            .unwrap()
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            parsed["auth"]["api_key"],
            "sk-ant-api03-real\"value/with+odd=chars"
        );
        assert_eq!(
            s.substitute(host, 443, form.as_bytes(), Encoding::Percent)
                .unwrap()
                .unwrap(),
            b"key=sk-ant-api03-real%22value%2Fwith%2Bodd%3Dchars&x=1"
        );
        // The same field toward another port of the host is refused.
        assert!(s
            .substitute(host, 444, form.as_bytes(), Encoding::Percent)
            .is_err());
        let json = format!("{{\"key\":\"{ant}\"}}");
        let out = s
            .substitute(host, 443, json.as_bytes(), Encoding::Json)
            .unwrap()
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(parsed["key"], "sk-ant-api03-real\"value/with+odd=chars");
        let bad = Sentinels::new(vec![Sentinel::new(
            "env:X",
            "line\r\nInjected: yes",
            Binding::parse("a.example", &[]).unwrap(),
        )]);
        let p = bad.iter().next().unwrap().placeholder.clone();
        assert_eq!(
            bad.substitute_header("a.example", 443, "authorization", p.as_bytes()),
            Ok(None)
        );
    }

    #[test]
    fn values_coming_back_are_masked() {
        let (s, gh, _) = sentinels();
        let echoed = b"you sent ghp_realvalue0123456789abcdefABCDEF0123!";
        assert_eq!(
            String::from_utf8(s.mask(echoed).unwrap()).unwrap(),
            format!("you sent {gh}!")
        );
        assert_eq!(s.mask(b"nothing"), None);
        assert_eq!(
            s.value_in(b"https://x/?t=ghp_realvalue0123456789abcdefABCDEF0123")
                .map(|s| s.entry.as_str()),
            Some("env:GITHUB_TOKEN")
        );
        assert!(s.value_in(gh.as_bytes()).is_none());
    }

    #[test]
    fn a_stream_is_searched_across_its_pieces() {
        let (s, gh, _) = sentinels();
        let body = format!("{}{gh}{}", "a".repeat(5000), "b".repeat(5000));
        for cut in [1, 7, 4096, 5003, 5010, 5039, 5040] {
            let mut search = StreamSearch::default();
            let mut found = None;
            for piece in body.as_bytes().chunks(cut) {
                found = found.or(search.feed(&s, Some(("evil.example", 443)), piece));
            }
            assert_eq!(
                found.map(|m| m.entry).as_deref(),
                Some("env:GITHUB_TOKEN"),
                "{cut}"
            );
            let mut search = StreamSearch::default();
            for piece in body.as_bytes().chunks(cut) {
                assert_eq!(search.feed(&s, Some(("api.github.com", 443)), piece), None);
            }
        }
    }
}
