//! The host's reading of what pid 1's supervisor reports (src/sandbox/refusals.rs): the
//! lines come from inside the sandbox, so any bytes at all. No panics, and what is
//! recorded holds whatever they are: at most `max` refusals and then one line with how
//! many more, each event one JSON line of a known action, its fields bounded, its rule
//! the supervisor's own or the one the host's map names for its path (never the
//! sandbox's word for a kernel's refusal), and the count returned the refusals read.
#![no_main]

use libfuzzer_sys::fuzz_target;

use serde::Serialize;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
#[path = "../../src/sandbox/fspolicy.rs"]
mod fspolicy;

#[allow(dead_code)]
#[path = "../../src/sandbox/events.rs"]
mod events;

#[allow(dead_code)]
#[path = "../../src/sandbox/spec/mount.rs"]
mod mount;

#[allow(dead_code)]
#[path = "../../src/sandbox/refusals.rs"]
mod refusals;

/// What refusals.rs and mount.rs name of the rest of git-loop, as small as they use it.
#[allow(dead_code)]
mod spec {
    pub use crate::mount::Mount;
    pub struct SandboxSpec {
        pub mounts: Vec<Mount>,
        pub fs_policy: Vec<crate::fspolicy::Covered>,
    }
}
#[allow(dead_code)]
mod loops {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
    pub struct GrantSource;
    pub fn now_rfc3339() -> String {
        "2026-01-01T00:00:00Z".into()
    }
}
#[allow(dead_code)]
mod fsutil {
    pub fn open_regular(p: &std::path::Path) -> std::io::Result<Option<std::fs::File>> {
        std::fs::File::open(p).map(Some)
    }
}

fuzz_target!(|data: &[u8]| {
    use mount::Mount;
    let Some((&max, input)) = data.split_first() else {
        return;
    };
    let max = (max % 8) as usize;
    let p = |s: &str| PathBuf::from(s);
    let mounts = vec![
        Mount::Tmpfs {
            inside: p("/"),
            size: None,
            ro: false,
        },
        Mount::Bind {
            host: p("/usr"),
            inside: p("/usr"),
            rw: false,
            optional: false,
        },
        Mount::Bind {
            host: p("/dev/null"),
            inside: p("/etc/shadow"),
            rw: false,
            optional: false,
        },
        Mount::Bind {
            host: p("/ws/w"),
            inside: p("/w"),
            rw: true,
            optional: false,
        },
        Mount::RemountRo { inside: p("/") },
    ];
    let policy = vec![fspolicy::Covered {
        root: p("/ws/w"),
        rel: p("keys"),
        inside: p("/w/keys"),
        dir: true,
        deny: fspolicy::Deny::Write,
        rule: "deny_write: keys".into(),
    }];
    let rules = refusals::RuleMap::of_view(&mounts, &policy);
    let dir = tempfile_dir();
    let from = dir.join("in");
    let events = dir.join("events.jsonl");
    let _ = std::fs::remove_file(&events);
    // A line starting with `{` is written as it is; any other is made a refusal the
    // kernel made (no rule of its own) of the path `PATH[ FROM]`, so the rules the host
    // names are reached: with no line as it is, each event's rule is then the map's.
    let mut text = Vec::new();
    let mut expected: Option<Vec<String>> = Some(Vec::new());
    for l in input.split(|b| *b == b'\n') {
        if l.first() == Some(&b'{') {
            text.extend_from_slice(l);
            expected = None;
        } else {
            let l = String::from_utf8_lossy(l);
            let (path, moved) = l.split_once(' ').unwrap_or((&l, ""));
            let line = serde_json::json!({
                "call": "openat", "path": path, "from": moved,
                "error": "Read-only file system", "errno": 30
            });
            text.extend_from_slice(line.to_string().as_bytes());
            if let Some(e) = expected.as_mut() {
                let rule = rules
                    .rule(path)
                    .or_else(|| (!moved.is_empty()).then(|| rules.rule(moved)).flatten())
                    .unwrap_or_default();
                e.push(rule.chars().take(300).collect());
            }
        }
        text.push(b'\n');
    }
    std::fs::write(&from, &text).unwrap();
    let count =
        refusals::record_refusals(std::fs::File::open(&from).unwrap(), &events, max, &rules);
    let text = std::fs::read_to_string(&events).unwrap_or_default();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each event one JSON line"))
        .collect();
    let kept = (count as usize).min(max);
    let dropped = count as usize - kept;
    assert_eq!(lines.len(), kept + usize::from(dropped > 0), "{text}");
    for (i, e) in lines.iter().enumerate() {
        assert_eq!(e["kind"], "violation");
        let action = e["action"].as_str().unwrap();
        if i == kept {
            assert_eq!(
                (action, e["dropped"].as_u64()),
                ("filesystem", Some(dropped as u64))
            );
            continue;
        }
        assert!(
            matches!(action, "filesystem-write" | "filesystem-read"),
            "{e}"
        );
        for k in ["path", "rule"] {
            assert!(e[k].as_str().unwrap().chars().count() <= 300, "{e}");
        }
        assert!(
            e["reason"].as_str().unwrap().starts_with("[filesystem] "),
            "{e}"
        );
        if let Some(expected) = &expected {
            assert_eq!(e["rule"].as_str().unwrap(), expected[i], "{e}");
        }
    }
    // The map itself: the deepest place decides, a path below /w/keys is the rule's.
    if let Ok(s) = std::str::from_utf8(input) {
        let below = format!("/w/keys/{}", s.replace('\0', ""));
        if !s.split('/').any(|c| c == ".." || c == ".") && !s.starts_with('/') {
            assert_eq!(rules.rule(&below), Some("deny_write: keys"), "{below}");
        }
    }
});

/// One folder per fuzzing process, made once.
fn tempfile_dir() -> &'static Path {
    use std::sync::OnceLock;
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("fuzz-refusals-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}
