//! Credential sentinels (issue 16), pure: what stands in for a bound vault entry inside
//! the sandbox, and what the proxy does when it meets one in a request.
//!
//! A vault entry bound to hosts (`vault set V env NAME --for HOST`) never enters the
//! sandbox. Inside, its variable (or the token in its file) holds a *placeholder* made for
//! this run: the same length and the same kinds of characters as the value, keeping a
//! known token prefix (`sk-ant-api03-`, `ghp_`), so tools that check a token's format take
//! it. The value stays in the host-side proxy's memory. The proxy ends TLS toward the
//! hosts an entry is bound to (intercept.rs) and puts the value where the placeholder is:
//! in header values, inside `Authorization: Basic` credentials (git over HTTPS sends a
//! token as a password), and where a credential travels in a target's query or a bounded
//! body of the content types tokens travel in (form and JSON): as the whole value of a
//! field whose name says it holds one (`token`, `client_secret`, `api_key`, `password`).
//! Nowhere else: a placeholder in a path, or inside the text of a JSON body (an agent's
//! conversation with its model, an issue's description), stays a placeholder, so that no
//! bound host can be made to store the value where it shows it back (an error message
//! that quotes the path, a model that reads its context, a public gist). A placeholder
//! toward any other host, in anything the proxy can read, is refused and named in a
//! violation event; the value itself is never named anywhere.
//!
//! Matching is exact bytes (`memchr::memmem`). A placeholder is built from characters
//! that need no escaping in a URL, a header or a JSON string, so it travels as it is; the
//! value is escaped for where it goes (percent-encoding in a target or a form, JSON
//! escapes in JSON), and a value that cannot stand in a header (a control character) is
//! not put in one.

use std::ops::Range;

use base64::Engine;
use memchr::memmem;
use zeroize::Zeroizing;

use super::policy::Pattern;

/// A request body larger than this is not rewritten (a placeholder in it stays what it
/// is); it is still searched for placeholders as it streams.
pub const MAX_BODY: usize = 1024 * 1024;

/// Fewest random characters a placeholder has, whatever the value's length: fewer could
/// turn up in a request by chance.
const MIN_RANDOM: usize = 16;

/// One bound entry's stand-in for this run.
pub struct Sentinel {
    /// `env:NAME` or `file:REL`: what events and refusals name.
    pub entry: String,
    /// What the sandbox holds instead of the value.
    pub placeholder: String,
    value: Zeroizing<String>,
    /// The hosts that may receive the value.
    pub hosts: Vec<Pattern>,
}

impl std::fmt::Debug for Sentinel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sentinel")
            .field("entry", &self.entry)
            .field("placeholder", &self.placeholder)
            .field("hosts", &self.hosts)
            .finish_non_exhaustive()
    }
}

impl Sentinel {
    /// A sentinel for `value` with a fresh placeholder.
    pub fn new(entry: impl Into<String>, value: &str, hosts: Vec<Pattern>) -> Sentinel {
        Sentinel {
            entry: entry.into(),
            placeholder: placeholder(value),
            value: Zeroizing::new(value.to_string()),
            hosts,
        }
    }

    /// May `host` (canonical) receive the value?
    pub fn bound_to(&self, host: &str) -> bool {
        self.hosts.iter().any(|p| p.matches(host))
    }

    /// The hosts, as `vault list` writes them.
    pub fn hosts_text(&self) -> String {
        hosts_text(&self.hosts)
    }
}

/// `a.example, *.b.example`.
pub fn hosts_text(hosts: &[Pattern]) -> String {
    hosts
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
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

/// The parts of a vault file that stand for credentials, for a bound file entry: tokens of
/// a known format (`ghp_…`, `sk-ant-…`, `npm_…`), the value after a key such as
/// `password`, `token`, `secret` or `_authToken` (`.netrc`, `.npmrc`, `hosts.yml`,
/// `.pypirc`), the password of a `scheme://user:password@host` URL (`.git-credentials`),
/// or, for a file that is one word, the whole of it. Empty when the file holds none of
/// these; such a file cannot be bound.
pub fn file_secrets(content: &[u8]) -> Vec<Range<usize>> {
    let mut spans = crate::guard::token_spans(content);
    spans.extend(keyed_values(content));
    spans.extend(url_passwords(content));
    if spans.is_empty() {
        let start = content
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(0);
        let end = content
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |e| e + 1);
        let word = &content[start..end.max(start)];
        if word.len() >= 8 && !word.iter().any(|b| b.is_ascii_whitespace() || *b < 0x20) {
            spans.push(start..end);
        }
    }
    // Longest first, then drop what another span covers.
    spans.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in spans {
        if r.is_empty() || std::str::from_utf8(&content[r.clone()]).is_err() {
            continue;
        }
        match out.last() {
            Some(last) if r.start < last.end => {}
            _ => out.push(r),
        }
    }
    out
}

const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "token",
    "secret",
    "authtoken",
    "apikey",
    "api_key",
    "api-key",
    "oauth_token",
    "access_token",
    "refresh_token",
    "client_secret",
];

fn word_byte(b: u8) -> bool {
    !(b.is_ascii_whitespace() || b"=:\"',;{}[]()<>".contains(&b))
}

/// Values that follow a key naming a secret: `password X`, `token: X`, `_authToken=X`,
/// `"token": "X"`.
fn keyed_values(content: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < content.len() {
        if !word_byte(content[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < content.len() && word_byte(content[i]) {
            i += 1;
        }
        let key = String::from_utf8_lossy(&content[start..i]).to_ascii_lowercase();
        let key = key
            .rsplit(['/', '.'])
            .next()
            .unwrap_or("")
            .trim_start_matches('_');
        if !SECRET_KEYS.contains(&key) {
            continue;
        }
        // Separators on the same line: spaces, `=`, `:`, quotes.
        let mut j = i;
        while j < content.len() && b" \t=:\"'".contains(&content[j]) {
            j += 1;
        }
        let vstart = j;
        while j < content.len() && word_byte(content[j]) {
            j += 1;
        }
        if j > vstart && j - vstart >= 4 {
            out.push(vstart..j);
        }
        i = j.max(i);
    }
    out
}

/// The password of `scheme://user:password@host`.
fn url_passwords(content: &[u8]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for at in memmem::find_iter(content, b"://") {
        let rest = &content[at + 3..];
        let end = rest
            .iter()
            .position(|b| b.is_ascii_whitespace() || b"/\"'".contains(b))
            .unwrap_or(rest.len());
        let auth = &rest[..end];
        let Some(atsign) = auth.iter().rposition(|&b| b == b'@') else {
            continue;
        };
        let Some(colon) = auth[..atsign].iter().position(|&b| b == b':') else {
            continue;
        };
        if atsign > colon + 1 {
            let base = at + 3;
            out.push(base + colon + 1..base + atsign);
        }
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
}

/// The sentinels of one run.
#[derive(Debug, Default)]
pub struct Sentinels {
    list: Vec<Sentinel>,
    finders: Vec<memmem::Finder<'static>>,
    longest: usize,
}

impl Sentinels {
    pub fn new(list: Vec<Sentinel>) -> Sentinels {
        let finders = list
            .iter()
            .map(|s| memmem::Finder::new(s.placeholder.as_bytes()).into_owned())
            .collect();
        let longest = list.iter().map(|s| s.placeholder.len()).max().unwrap_or(0);
        Sentinels {
            list,
            finders,
            longest,
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

    /// Is any entry bound to `host`? Then the proxy ends TLS toward it.
    pub fn any_bound_to(&self, host: &str) -> bool {
        self.list.iter().any(|s| s.bound_to(host))
    }

    /// Longest placeholder: what a streaming search keeps between chunks, plus one.
    pub fn longest(&self) -> usize {
        self.longest
    }

    fn misplaced(s: &Sentinel) -> Misplaced {
        Misplaced {
            entry: s.entry.clone(),
            hosts: s.hosts_text(),
        }
    }

    /// The first placeholder in `bytes` that may not go to `host` (`None`: a host no entry
    /// is bound to, or plain HTTP, where no value is ever put in).
    pub fn misplaced_in(&self, host: Option<&str>, bytes: &[u8]) -> Option<Misplaced> {
        if bytes.len() < MIN_RANDOM {
            return None;
        }
        self.list
            .iter()
            .zip(&self.finders)
            .find(|(s, f)| !host.is_some_and(|h| s.bound_to(h)) && f.find(bytes).is_some())
            .map(|(s, _)| Sentinels::misplaced(s))
    }

    /// [`Sentinels::misplaced_in`] for a header value, looking inside `Basic` credentials
    /// as well.
    pub fn misplaced_in_header(&self, host: Option<&str>, value: &[u8]) -> Option<Misplaced> {
        self.misplaced_in(host, value)
            .or_else(|| basic(value).and_then(|decoded| self.misplaced_in(host, &decoded)))
    }

    /// `bytes` toward `host` with the placeholders of the entries bound to it replaced by
    /// their values; `Ok(None)` when there is nothing to replace. A placeholder of an entry
    /// not bound to `host` is an error.
    pub fn substitute(
        &self,
        host: &str,
        bytes: &[u8],
        encoding: Encoding,
    ) -> Result<Option<Vec<u8>>, Misplaced> {
        if let Some(m) = self.misplaced_in(Some(host), bytes) {
            return Err(m);
        }
        let mut out: Option<Vec<u8>> = None;
        for (s, f) in self.list.iter().zip(&self.finders) {
            if !s.bound_to(host) {
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
        Ok(out)
    }

    /// A header value toward `host`: [`Sentinels::substitute`], and inside `Basic`
    /// credentials, which are decoded, substituted and encoded again.
    pub fn substitute_header(
        &self,
        host: &str,
        value: &[u8],
    ) -> Result<Option<Vec<u8>>, Misplaced> {
        if let Some(decoded) = basic(value) {
            if let Some(new) = self.substitute(host, &decoded, Encoding::Header)? {
                let encoded = base64::engine::general_purpose::STANDARD.encode(&new[..]);
                return Ok(Some(format!("Basic {encoded}").into_bytes()));
            }
        }
        self.substitute(host, value, Encoding::Header)
    }

    /// `bytes` from a server with every value of this run replaced by its placeholder, so
    /// a server that echoes a credential back does not hand it to the sandbox; `None` when
    /// there is none.
    pub fn mask(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let mut out: Option<Vec<u8>> = None;
        for s in &self.list {
            let current = out.as_deref().unwrap_or(bytes);
            let value = s.value.as_bytes();
            if value.is_empty() || memmem::find(current, value).is_none() {
                continue;
            }
            let mut next = Vec::with_capacity(current.len());
            let mut last = 0;
            for at in memmem::find_iter(current, value) {
                next.extend_from_slice(&current[last..at]);
                next.extend_from_slice(s.placeholder.as_bytes());
                last = at + value.len();
            }
            next.extend_from_slice(&current[last..]);
            out = Some(next);
        }
        out
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
        host: Option<&str>,
        piece: &[u8],
    ) -> Option<Misplaced> {
        if sentinels.is_empty() || piece.is_empty() {
            return None;
        }
        let keep = sentinels.longest().saturating_sub(1);
        let found = if self.carry.is_empty() {
            sentinels.misplaced_in(host, piece)
        } else {
            // Only the seam needs the joined search; the piece itself is searched alone.
            let seam = piece.len().min(keep);
            let mut joined = Vec::with_capacity(self.carry.len() + seam);
            joined.extend_from_slice(&self.carry);
            joined.extend_from_slice(&piece[..seam]);
            sentinels
                .misplaced_in(host, &joined)
                .or_else(|| sentinels.misplaced_in(host, piece))
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

    fn pat(p: &str) -> Pattern {
        Pattern::parse(p).unwrap()
    }

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
            vec![pat("github.com"), pat("*.github.com")],
        );
        let ant = Sentinel::new(
            "env:ANTHROPIC_API_KEY",
            "sk-ant-api03-real\"value/with+odd=chars",
            vec![pat("api.anthropic.com")],
        );
        let (p1, p2) = (gh.placeholder.clone(), ant.placeholder.clone());
        (Sentinels::new(vec![gh, ant]), p1, p2)
    }

    #[test]
    fn values_go_to_their_hosts_only() {
        let (s, gh, ant) = sentinels();
        let header = format!("Bearer {gh}");
        assert_eq!(
            s.substitute_header("api.github.com", header.as_bytes())
                .unwrap()
                .unwrap(),
            b"Bearer ghp_realvalue0123456789abcdefABCDEF0123"
        );
        assert_eq!(
            s.substitute_header("api.github.com", b"Bearer x").unwrap(),
            None
        );
        let m = s
            .substitute_header("evil.example", header.as_bytes())
            .unwrap_err();
        assert_eq!(m.entry, "env:GITHUB_TOKEN");
        assert_eq!(m.hosts, "github.com, *.github.com");
        // Another entry's placeholder toward a bound host is refused too.
        let both = format!("{gh} {ant}");
        assert_eq!(
            s.substitute("github.com", both.as_bytes(), Encoding::Header)
                .unwrap_err()
                .entry,
            "env:ANTHROPIC_API_KEY"
        );
        // Plain HTTP: every placeholder is misplaced.
        assert!(s.misplaced_in(None, header.as_bytes()).is_some());
        assert!(s
            .misplaced_in(None, b"nothing here at all, really")
            .is_none());
    }

    #[test]
    fn basic_credentials_are_opened() {
        let (s, gh, _) = sentinels();
        let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
        let header = format!("Basic {}", b64(&format!("x-access-token:{gh}")));
        let out = s
            .substitute_header("github.com", header.as_bytes())
            .unwrap()
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "Basic {}",
                b64("x-access-token:ghp_realvalue0123456789abcdefABCDEF0123")
            )
        );
        assert!(s
            .misplaced_in_header(Some("gitlab.com"), header.as_bytes())
            .is_some());
        assert!(s
            .misplaced_in_header(Some("github.com"), header.as_bytes())
            .is_none());
    }

    #[test]
    fn values_are_escaped_for_where_they_go() {
        let (s, _, ant) = sentinels();
        let form = format!("key={ant}&x=1");
        // Not in a field that carries no credential, nor inside a longer value.
        let text = format!("text={ant}&q=a{ant}");
        assert_eq!(
            s.substitute("api.anthropic.com", text.as_bytes(), Encoding::Percent),
            Ok(None)
        );
        let chat = format!("{{\"content\": \"{ant}\", \"text\": \"say {ant}\"}}");
        assert_eq!(
            s.substitute("api.anthropic.com", chat.as_bytes(), Encoding::Json),
            Ok(None)
        );
        let nested = format!("{{\"auth\": {{\"api_key\" : \"{ant}\"}}}}");
        let out = s
            .substitute("api.anthropic.com", nested.as_bytes(), Encoding::Json)
            .unwrap()
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            parsed["auth"]["api_key"],
            "sk-ant-api03-real\"value/with+odd=chars"
        );
        assert_eq!(
            s.substitute("api.anthropic.com", form.as_bytes(), Encoding::Percent)
                .unwrap()
                .unwrap(),
            b"key=sk-ant-api03-real%22value%2Fwith%2Bodd%3Dchars&x=1"
        );
        let json = format!("{{\"key\":\"{ant}\"}}");
        let out = s
            .substitute("api.anthropic.com", json.as_bytes(), Encoding::Json)
            .unwrap()
            .unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(parsed["key"], "sk-ant-api03-real\"value/with+odd=chars");
        let bad = Sentinels::new(vec![Sentinel::new(
            "env:X",
            "line\r\nInjected: yes",
            vec![pat("a.example")],
        )]);
        let p = bad.iter().next().unwrap().placeholder.clone();
        assert_eq!(
            bad.substitute("a.example", p.as_bytes(), Encoding::Header),
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
    }

    #[test]
    fn a_stream_is_searched_across_its_pieces() {
        let (s, gh, _) = sentinels();
        let body = format!("{}{gh}{}", "a".repeat(5000), "b".repeat(5000));
        for cut in [1, 7, 4096, 5003, 5010, 5039, 5040] {
            let mut search = StreamSearch::default();
            let mut found = None;
            for piece in body.as_bytes().chunks(cut) {
                found = found.or(search.feed(&s, Some("evil.example"), piece));
            }
            assert_eq!(
                found.map(|m| m.entry).as_deref(),
                Some("env:GITHUB_TOKEN"),
                "{cut}"
            );
            let mut search = StreamSearch::default();
            for piece in body.as_bytes().chunks(cut) {
                assert_eq!(search.feed(&s, Some("api.github.com"), piece), None);
            }
        }
    }

    #[test]
    fn the_secrets_of_a_file_are_found() {
        let show = |text: &str| -> Vec<String> {
            file_secrets(text.as_bytes())
                .into_iter()
                .map(|r| text[r].to_string())
                .collect()
        };
        assert_eq!(
            show("machine github.com login x password s3cr3tpass\n"),
            ["s3cr3tpass"]
        );
        assert_eq!(
            show("github.com:\n    oauth_token: gho_abcdefghijklmnopqrstuvwxyz0123456789\n    user: me\n"),
            ["gho_abcdefghijklmnopqrstuvwxyz0123456789"]
        );
        assert_eq!(
            show("//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789\n"),
            ["npm_abcdefghijklmnopqrstuvwxyz0123456789"]
        );
        assert_eq!(
            show("https://me:tok3nvalue99@github.com\n"),
            ["tok3nvalue99"]
        );
        assert_eq!(show("  justonelongtoken123  \n"), ["justonelongtoken123"]);
        assert!(show("[core]\n\teditor = vim\n").is_empty());
    }
}
