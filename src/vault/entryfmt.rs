//! The plaintext of a vault entry, as it is sealed inside its age file: a versioned header
//! that names the entry, then its value.
//!
//! ```text
//! \0git-loop-entry 2\n
//! vault work\n
//! env GITHUB_TOKEN\n            (or: file .config/gh/hosts.yml)
//! for api.github.com,*.github.com\n   (only for an entry bound to hosts)
//! header x-custom\n                   (only when its binding names headers)
//! \n
//! <value>
//! ```
//!
//! The header is inside the encryption, so it is authenticated with the value: a file copied
//! or renamed into another vault or name still says where it was stored, and the reader
//! refuses it there (`store::Vault::open_entry`). Nobody who cannot decrypt an entry learns
//! its binding either.
//!
//! Older entries have no header of this version: the value as it is (before bindings), or
//! the first envelope (`\0git-loop-entry 1\n`, a binding and no name). They are read as
//! [`Format::Legacy`], and the reader decides whether to trust them (see `store.rs`). The
//! leading NUL cannot start a variable's value (a NUL is refused there), and every entry is
//! written with the header now, so a file whose content starts like one is never misread.
//!
//! Pure and without dependencies beyond `std`: the vault fuzz target compiles this file by
//! path, and no value is copied here (the caller copies it into memory that is wiped).

const PREFIX: &[u8] = b"\0git-loop-entry ";
const V1: &[u8] = b"\0git-loop-entry 1\n";
const V2: &[u8] = b"\0git-loop-entry 2\n";

/// Room the header may take beyond the value's own bound.
pub const MAX_HEADER: usize = 16 * 1024;

/// What kind of entry a header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Env,
    File,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Env => "env",
            Kind::File => "file",
        }
    }
}

/// Where an entry was stored, as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredAs<'a> {
    pub vault: &'a str,
    pub kind: Kind,
    pub name: &'a str,
}

/// Which format a plaintext is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format<'a> {
    /// Written by an earlier version: no name inside.
    Legacy,
    /// The current header, naming the entry.
    Named(StoredAs<'a>),
}

/// A decoded plaintext: borrowed from it, nothing copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<'a> {
    pub format: Format<'a>,
    /// The hosts of the entry's binding as written (`for` split at commas, trimmed); empty
    /// when it is bound to none.
    pub hosts: Vec<&'a str>,
    /// The headers besides the common token headers that carry its value (`header`, split
    /// at commas, trimmed); only with hosts.
    pub headers: Vec<&'a str>,
    pub value: &'a [u8],
}

/// Writes the plaintext of an entry into `out` (which the caller wipes): the header naming
/// it, its hosts (none: unbound) and the headers that carry it (only with hosts), then the
/// value. The names must hold no newline (vault, variable, header and `$HOME` names never
/// do: `names.rs`, `egress::sentinel::binding`).
pub fn encode(
    out: &mut Vec<u8>,
    stored: StoredAs<'_>,
    hosts: &[&str],
    headers: &[&str],
    value: &[u8],
) {
    out.reserve(V2.len() + stored.vault.len() + stored.name.len() + 64 + value.len());
    out.extend_from_slice(V2);
    out.extend_from_slice(b"vault ");
    out.extend_from_slice(stored.vault.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(stored.kind.word().as_bytes());
    out.push(b' ');
    out.extend_from_slice(stored.name.as_bytes());
    out.push(b'\n');
    if !hosts.is_empty() {
        out.extend_from_slice(b"for ");
        out.extend_from_slice(hosts.join(",").as_bytes());
        out.push(b'\n');
        if !headers.is_empty() {
            out.extend_from_slice(b"header ");
            out.extend_from_slice(headers.join(",").as_bytes());
            out.push(b'\n');
        }
    }
    out.push(b'\n');
    out.extend_from_slice(value);
}

/// Reads a plaintext back. An error says why it cannot be one (without repeating more than
/// the start of an unknown line).
pub fn decode(plain: &[u8]) -> Result<Decoded<'_>, String> {
    if !plain.starts_with(PREFIX) {
        return Ok(Decoded {
            format: Format::Legacy,
            hosts: Vec::new(),
            headers: Vec::new(),
            value: plain,
        });
    }
    let (version, mut rest) = if let Some(rest) = plain.strip_prefix(V2) {
        (2, rest)
    } else if let Some(rest) = plain.strip_prefix(V1) {
        (1, rest)
    } else {
        return Err(
            "its header is of a version this git-loop does not know: a newer git-loop wrote it"
                .into(),
        );
    };
    let mut vault = None;
    let mut kind_name = None;
    let mut hosts = None;
    let mut headers = None;
    let mut header_len = 0usize;
    loop {
        let Some(end) = rest.iter().position(|&b| b == b'\n') else {
            return Err("its header does not end".into());
        };
        header_len += end + 1;
        if header_len > MAX_HEADER {
            return Err("its header is too long".into());
        }
        let line =
            std::str::from_utf8(&rest[..end]).map_err(|_| "its header is not text".to_string())?;
        rest = &rest[end + 1..];
        if line.is_empty() {
            break;
        }
        if line.chars().any(char::is_control) {
            return Err("its header holds a control character".into());
        }
        let (key, text) = line.split_once(' ').unwrap_or((line, ""));
        let slot_taken = |taken: bool| -> Result<(), String> {
            if taken {
                Err(format!("its header names {key} twice"))
            } else {
                Ok(())
            }
        };
        match (version, key) {
            (_, "for") => {
                slot_taken(hosts.is_some())?;
                let list: Vec<&str> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if list.is_empty() {
                    return Err("its header binds it to no host".into());
                }
                hosts = Some(list);
            }
            (_, "header") => {
                slot_taken(headers.is_some())?;
                let list: Vec<&str> = text
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if list.is_empty() {
                    return Err("its header names no header".into());
                }
                headers = Some(list);
            }
            (2, "vault") => {
                slot_taken(vault.is_some())?;
                vault = Some(text);
            }
            (2, "env") | (2, "file") => {
                slot_taken(kind_name.is_some())?;
                let kind = if key == "env" { Kind::Env } else { Kind::File };
                kind_name = Some((kind, text));
            }
            _ => {
                return Err(format!(
                    "its header has a line this version does not know ({:?}): a newer git-loop wrote it",
                    line.chars().take(40).collect::<String>()
                ))
            }
        }
    }
    let format = if version == 1 {
        Format::Legacy
    } else {
        match (vault, kind_name) {
            (Some(vault), Some((kind, name))) if !vault.is_empty() && !name.is_empty() => {
                Format::Named(StoredAs { vault, kind, name })
            }
            _ => return Err("its header does not name its vault and entry".into()),
        }
    };
    if hosts.is_none() && headers.is_some() {
        return Err("its header names headers but no host".into());
    }
    Ok(Decoded {
        format,
        hosts: hosts.unwrap_or_default(),
        headers: headers.unwrap_or_default(),
        value: rest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(stored: StoredAs<'_>, hosts: &[&str], value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(&mut out, stored, hosts, &[], value);
        out
    }

    const WORK_TOKEN: StoredAs<'static> = StoredAs {
        vault: "work",
        kind: Kind::Env,
        name: "GITHUB_TOKEN",
    };

    #[test]
    fn a_named_entry_reads_back_as_itself() {
        let plain = sealed(WORK_TOKEN, &["api.github.com", "*.github.com"], b"ghp_x");
        assert!(plain.starts_with(b"\0git-loop-entry 2\nvault work\nenv GITHUB_TOKEN\n"));
        let d = decode(&plain).unwrap();
        assert_eq!(d.format, Format::Named(WORK_TOKEN));
        assert_eq!(d.hosts, ["api.github.com", "*.github.com"]);
        assert_eq!(d.value, b"ghp_x");
        let file = StoredAs {
            vault: "default",
            kind: Kind::File,
            name: ".config/gh/hosts.yml",
        };
        // A value that starts like a header is only ever the value.
        let tricky = b"\0git-loop-entry 2\nvault evil\nenv X\n\nrest";
        let plain = sealed(file, &[], tricky);
        let d = decode(&plain).unwrap();
        assert_eq!(
            (d.format, d.hosts.len(), d.value),
            (Format::Named(file), 0, &tricky[..])
        );
    }

    #[test]
    fn headers_travel_with_the_hosts() {
        let mut plain = Vec::new();
        encode(
            &mut plain,
            WORK_TOKEN,
            &["api.github.com", "ghe.example:8443"],
            &["x-custom", "x-other"],
            b"v",
        );
        assert!(
            plain.ends_with(b"for api.github.com,ghe.example:8443\nheader x-custom,x-other\n\nv")
        );
        let d = decode(&plain).unwrap();
        assert_eq!(d.hosts, ["api.github.com", "ghe.example:8443"]);
        assert_eq!(
            (d.headers, d.value),
            (vec!["x-custom", "x-other"], &b"v"[..])
        );
        // Without hosts, headers are not written: nothing would carry the value.
        let mut plain = Vec::new();
        encode(&mut plain, WORK_TOKEN, &[], &["x-custom"], b"v");
        assert!(decode(&plain).unwrap().headers.is_empty());
    }

    #[test]
    fn older_plaintexts_are_legacy() {
        let d = decode(b"plain value").unwrap();
        assert_eq!((d.format, d.value), (Format::Legacy, &b"plain value"[..]));
        let d = decode(b"\0git-loop-entry 1\nfor a.example\n\nv").unwrap();
        assert_eq!(
            (d.format, d.hosts, d.value),
            (Format::Legacy, vec!["a.example"], &b"v"[..])
        );
        let d = decode(b"\0git-loop-entry 1\n\nv").unwrap();
        assert_eq!(
            (d.format, d.hosts.len(), d.value),
            (Format::Legacy, 0, &b"v"[..])
        );
        assert_eq!(decode(b"").unwrap().format, Format::Legacy);
    }

    #[test]
    fn bad_headers_are_refused() {
        for (plain, why) in [
            (&b"\0git-loop-entry 3\n\nv"[..], "newer"),
            (b"\0git-loop-entry 2\nvault w\nenv X", "does not end"),
            (b"\0git-loop-entry 2\nvault w\n\nv", "does not name"),
            (b"\0git-loop-entry 2\nenv X\n\nv", "does not name"),
            (b"\0git-loop-entry 2\nvault \nenv X\n\nv", "does not name"),
            (b"\0git-loop-entry 2\nvault w\nenv X\nvault v\n\nv", "twice"),
            (b"\0git-loop-entry 2\nvault w\nenv X\nfile Y\n\nv", "twice"),
            (b"\0git-loop-entry 2\nvault w\nenv X\nfor \n\nv", "no host"),
            (
                b"\0git-loop-entry 2\nvault w\nenv X\nheader x-a\n\nv",
                "but no host",
            ),
            (
                b"\0git-loop-entry 2\nvault w\nenv X\nfor a.example\nheader \n\nv",
                "names no header",
            ),
            (
                b"\0git-loop-entry 2\nvault w\nenv X\nwho knows\n\nv",
                "does not know",
            ),
            (b"\0git-loop-entry 1\nvault w\n\nv", "does not know"),
            (b"\0git-loop-entry 2\nvault w\x1b\nenv X\n\nv", "control"),
            (b"\0git-loop-entry 2\nvault \xff\nenv X\n\nv", "not text"),
        ] {
            let err = decode(plain).unwrap_err();
            assert!(err.contains(why), "{plain:?}: {err}");
        }
        let mut long = b"\0git-loop-entry 2\nvault w\nenv X\nfor ".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_HEADER));
        long.extend_from_slice(b"\n\nv");
        assert!(decode(&long).unwrap_err().contains("too long"));
    }
}
