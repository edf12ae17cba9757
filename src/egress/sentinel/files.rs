//! The credentials inside a bound vault file (issue 16): what a placeholder stands for
//! when a whole file (`.netrc`, `.npmrc`, `hosts.yml`) is bound to hosts.

use std::ops::Range;

use memchr::memmem;

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

#[cfg(test)]
mod tests {
    use super::*;

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
