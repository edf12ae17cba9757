//! The filesystem policy's matcher on arbitrary strings: no panics, the same answers as a
//! plain table-driven matcher written from the documented meaning, and the
//! properties the covers and the gate rely on: empty components (`a//b`, a leading or
//! trailing `/`) mean nothing, `**` matches any number of components, `*` exactly one,
//! a path of the built-in list is flagged at any depth, and `..` never passes.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/sandbox/fspolicy.rs"]
mod fspolicy;

use fspolicy::{check_pattern, component_matches, glob_matches, mandatory, MANDATORY};

fn parts(s: &str) -> Vec<&str> {
    s.split('/').filter(|c| !c.is_empty()).collect()
}

/// `*` any run of bytes, `?` one byte, else the byte itself: the documented meaning,
/// as a table of which prefixes match which (no backtracking to share a bug with).
fn naive_component(pat: &[u8], name: &[u8]) -> bool {
    // m[i][j]: pat[..i] matches name[..j].
    let mut m = vec![vec![false; name.len() + 1]; pat.len() + 1];
    m[0][0] = true;
    for i in 1..=pat.len() {
        for j in 0..=name.len() {
            m[i][j] = match pat[i - 1] {
                b'*' => m[i - 1][j] || (j > 0 && m[i][j - 1]),
                b'?' => j > 0 && m[i - 1][j - 1],
                c => j > 0 && name[j - 1] == c && m[i - 1][j - 1],
            };
        }
    }
    m[pat.len()][name.len()]
}

/// `**` any number of components, else one component by [`naive_component`]; the same
/// table over components.
fn naive_parts(pat: &[&str], path: &[&str]) -> bool {
    let mut m = vec![vec![false; path.len() + 1]; pat.len() + 1];
    m[0][0] = true;
    for i in 1..=pat.len() {
        for j in 0..=path.len() {
            m[i][j] = if pat[i - 1] == "**" {
                m[i - 1][j] || (j > 0 && m[i][j - 1])
            } else {
                j > 0
                    && m[i - 1][j - 1]
                    && naive_component(pat[i - 1].as_bytes(), path[j - 1].as_bytes())
            };
        }
    }
    m[pat.len()][path.len()]
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The input is a pattern and a path, split at a NUL byte.
    let mut split = text.splitn(2, '\0');
    let pattern = split.next().unwrap_or_default();
    let path = split.next().unwrap_or_default();
    let refused = check_pattern(pattern).is_err();
    let (pp, sp) = (parts(pattern), parts(path));

    let matched = glob_matches(pattern.as_bytes(), path.as_bytes());
    // The documented meaning, where the reference can afford it.
    if pattern.len() <= 256 && path.len() <= 256 {
        assert_eq!(matched, naive_parts(&pp, &sp), "{pattern:?} {path:?}");
    }
    // Empty components mean nothing, on either side.
    let (pn, sn) = (pp.join("/"), sp.join("/"));
    assert_eq!(
        matched,
        glob_matches(format!("/{pn}//").as_bytes(), format!("//{sn}/").as_bytes()),
        "{pattern:?} {path:?}"
    );
    // `**` in front reaches the same path one folder down; `/**` behind reaches below it.
    if matched {
        assert!(glob_matches(
            format!("**/{pn}").as_bytes(),
            format!("x/{sn}").as_bytes()
        ));
        assert!(glob_matches(
            format!("{pn}/**").as_bytes(),
            format!("{sn}/below").as_bytes()
        ));
    }
    // `**/**` is `**`.
    if pp.contains(&"**") {
        let doubled: Vec<&str> = pp
            .iter()
            .map(|c| if *c == "**" { "**/**" } else { c })
            .collect();
        let doubled = doubled.join("/");
        assert_eq!(
            matched,
            glob_matches(doubled.as_bytes(), sn.as_bytes()),
            "{pattern:?} {path:?}"
        );
    }
    // Without a wildcard a pattern names exactly its own components.
    if !pattern.contains(['*', '?']) {
        assert_eq!(matched, pp == sp, "{pattern:?} {path:?}");
    }
    // `**` names every path; a path names itself; `*` in place of a component matches it.
    assert!(glob_matches(b"**", path.as_bytes()));
    if !path.contains(['*', '?']) {
        assert!(glob_matches(path.as_bytes(), path.as_bytes()));
        for i in 0..sp.len() {
            let mut starred = sp.clone();
            starred[i] = "*";
            assert!(glob_matches(starred.join("/").as_bytes(), path.as_bytes()));
        }
    }
    if let [one] = sp.as_slice() {
        assert!(component_matches(b"*", one.as_bytes()));
        assert!(glob_matches(b"*", path.as_bytes()));
    }
    if sp.len() > 1 {
        assert!(!glob_matches(b"*", path.as_bytes()));
    }
    // A pattern that climbs out is refused, `~/` or not.
    if pattern
        .strip_prefix("~/")
        .unwrap_or(pattern)
        .split('/')
        .any(|c| c == "..")
        || pattern.is_empty()
    {
        assert!(refused, "{pattern:?}");
    }
    // A path the built-in list flags is under one of its entries, and only such a path;
    // the same below any folder, and whatever its empty components.
    let flagged = mandatory(path.as_bytes());
    if let Some(entry) = flagged {
        assert!(MANDATORY.contains(&entry));
        let e = parts(entry);
        assert!(sp.windows(e.len()).any(|w| w == e.as_slice()), "{path:?} {entry:?}");
        assert!(mandatory(format!("deep/er/{sn}").as_bytes()).is_some());
    }
    assert_eq!(flagged, mandatory(format!("/{sn}//").as_bytes()), "{path:?}");
    for entry in MANDATORY {
        let rel = entry.trim_end_matches('/');
        assert_eq!(mandatory(rel.as_bytes()), Some(*entry));
        if entry.ends_with('/') {
            // (another entry may come first in the list, below it)
            assert!(mandatory(format!("{rel}/{sn}").as_bytes()).is_some());
        }
    }
});
