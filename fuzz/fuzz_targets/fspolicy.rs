//! The filesystem policy's matcher on arbitrary strings: no panics, and the properties the
//! covers and the gate rely on.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/sandbox/fspolicy.rs"]
mod fspolicy;

use fspolicy::{check_pattern, component_matches, glob_matches, mandatory, MANDATORY};

fn parts(s: &str) -> Vec<&str> {
    s.split('/').filter(|c| !c.is_empty()).collect()
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The input is a pattern and a path, split at a NUL byte.
    let mut split = text.splitn(2, '\0');
    let pattern = split.next().unwrap_or_default();
    let path = split.next().unwrap_or_default();
    let _ = check_pattern(pattern);

    let matched = glob_matches(pattern.as_bytes(), path.as_bytes());
    // Without a wildcard a pattern names exactly its own components.
    if !pattern.contains(['*', '?']) {
        assert_eq!(matched, parts(pattern) == parts(path), "{pattern:?} {path:?}");
    }
    // `**` names every path; a path names itself.
    assert!(glob_matches(b"**", path.as_bytes()));
    if !path.contains(['*', '?']) {
        assert!(glob_matches(path.as_bytes(), path.as_bytes()));
    }
    // A component pattern of `*` matches any one component, and only one.
    if let [one] = parts(path).as_slice() {
        assert!(component_matches(b"*", one.as_bytes()));
        assert!(glob_matches(b"*", path.as_bytes()));
    }
    if parts(path).len() > 1 {
        assert!(!glob_matches(b"*", path.as_bytes()));
    }
    // A path the built-in list flags is under one of its entries, and only such a path.
    if let Some(entry) = mandatory(path.as_bytes()) {
        assert!(MANDATORY.contains(&entry));
        let e = parts(entry);
        let p = parts(path);
        assert!(p.windows(e.len()).any(|w| w == e.as_slice()), "{path:?} {entry:?}");
    }
});
