//! The vault's readers of what arrives through a synced remote, on arbitrary bytes: the
//! decoder of an entry's plaintext (its header naming its vault, kind and name, and its
//! binding), and the layout judgments that the listing of the vaults' repository and the
//! migration from the personal repository make of every name they meet. None may panic,
//! and what each accepts must be what it promises: an entry only where git-loop writes
//! one, under a name the name rules accept, and a header that reads back as it was sealed.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../src/tempname.rs"]
mod tempname;

#[allow(dead_code)]
#[path = "../../src/vault/names.rs"]
mod names;

#[allow(dead_code)]
#[path = "../../src/vault/entryfmt.rs"]
mod entryfmt;

#[allow(dead_code)]
#[path = "../../src/vault/layout.rs"]
mod layout;

use entryfmt::{Format, Kind, StoredAs};
use layout::{Class, Node, Top};

fn decode(data: &[u8]) {
    let Ok(d) = entryfmt::decode(data) else {
        return;
    };
    assert!(data.ends_with(d.value), "the value is what follows the header");
    for h in d.hosts.iter().chain(&d.headers) {
        assert!(!h.is_empty() && !h.contains(',') && h.trim() == *h);
    }
    if let Format::Named(stored) = d.format {
        assert!(!stored.vault.is_empty() && !stored.name.is_empty());
        assert!(!stored.vault.chars().chain(stored.name.chars()).any(char::is_control));
        // Sealed again, it reads back as itself.
        let mut again = Vec::new();
        entryfmt::encode(&mut again, stored, &d.hosts, &d.headers, d.value);
        let back = entryfmt::decode(&again).expect("what encode writes decodes");
        assert_eq!(back, d);
    }
}

/// A sealed entry, whatever its names and value, reads back as itself.
fn round_trip(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = text.splitn(4, '\u{1f}');
    let (Some(vault), Some(name), Some(hosts), value) =
        (parts.next(), parts.next(), parts.next(), parts.next().unwrap_or(""))
    else {
        return;
    };
    if [vault, name, hosts]
        .iter()
        .any(|s| s.is_empty() || s.chars().any(char::is_control))
    {
        return;
    }
    let hosts: Vec<&str> = hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    let kind = if name.starts_with('.') { Kind::File } else { Kind::Env };
    let stored = StoredAs { vault, kind, name };
    let mut sealed = Vec::new();
    entryfmt::encode(&mut sealed, stored, &hosts, &[], value.as_bytes());
    let d = entryfmt::decode(&sealed).expect("what encode writes decodes");
    assert_eq!(d.format, Format::Named(stored));
    assert_eq!(d.hosts, hosts);
    assert_eq!(d.value, value.as_bytes());
}

fn node_of(b: u8) -> Node {
    match b % 4 {
        0 => Node::Dir,
        1 => Node::File,
        2 => Node::Symlink,
        _ => Node::Other,
    }
}

/// Every judgment of a name below a vault's folder, and of one at the top.
fn judge(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let node = node_of(selector);
    let parts: Vec<&OsStr> = rest
        .split(|&b| b == b'/')
        .take(64)
        .map(OsStr::from_bytes)
        .collect();
    let texts: Vec<&str> = parts.iter().filter_map(|p| p.to_str()).collect();
    match layout::classify(&parts, node) {
        Class::Env(name) => {
            assert_eq!(node, Node::File);
            assert!(names::env_name(&name).is_ok());
            assert_eq!(texts, ["envs", &format!("{name}.age")]);
        }
        Class::File(rel) => {
            assert_eq!(node, Node::File);
            assert!(names::home_rel(&rel).is_ok());
            assert_eq!(&texts[..2], ["mounts", "home"]);
            assert_eq!(format!("{rel}.age"), texts[2..].join("/"));
            assert!(!rel.split('/').any(|c| c == ".." || c.eq_ignore_ascii_case(".git")));
        }
        Class::Recipients => {
            assert_eq!((node, texts.as_slice()), (Node::File, &["recipients.txt"][..]))
        }
        Class::Folder => {
            assert_eq!(node, Node::Dir);
            assert!(texts.len() == parts.len());
        }
        Class::Temp => {
            assert_eq!(node, Node::File);
            assert!(tempname::writer_of(texts.last().unwrap()).is_some());
        }
        Class::Foreign => assert_eq!(parts.len(), 1),
        Class::Bad(why) => assert!(!why.is_empty()),
    }
    if let Some(first) = parts.first() {
        for legacy in [false, true] {
            match layout::classify_top(first, node, legacy) {
                Top::Vault(v) => {
                    assert_eq!(node, Node::Dir);
                    assert!(names::vault_name(v).is_ok() && v != "none");
                }
                Top::Repository => assert!(!legacy),
                Top::Temp => assert!(matches!(node, Node::Dir | Node::File)),
                Top::Bad(why) => assert!(!why.is_empty()),
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    decode(data);
    round_trip(data);
    judge(data);
});
