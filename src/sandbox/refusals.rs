//! The host's side of the refusals pid 1's supervisor reports (creation.rs): read from
//! the report pipe, bounded, each given the rule behind it from the host's own record of
//! the run's view ([`RuleMap`]) and appended to `events.jsonl` as a violation. Nothing the
//! supervisor wrote is taken but its known fields, each bounded; the supervisor runs
//! inside the sandbox, so its lines are read as the sandbox's.

/// One refusal, as the supervisor writes it and the host reads it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refusal {
    /// The call (`openat`, `rename`, ...).
    pub call: String,
    /// The name refused, as the caller gave it, made absolute where its folder is known.
    pub path: String,
    /// `deny_create: *.pem`, or why the call could not be judged; empty where the kernel
    /// refused (the host names the rule from the path: it knows the view).
    #[serde(default)]
    pub rule: String,
    /// `read` or `write` (a line without it is a write: a creation).
    #[serde(default)]
    pub access: String,
    /// The kernel's error (`Read-only file system`), where the kernel refused.
    #[serde(default)]
    pub error: String,
    /// Its number (0: the supervisor's own refusal).
    #[serde(default)]
    pub errno: i32,
    /// What a refused `rename` or `link` moved or linked.
    #[serde(default)]
    pub from: String,
}

/// At most this many refusals are reported per run by the supervisor (the host bounds
/// what it records again, never trusting this).
pub const MAX_REPORTED: usize = 1000;

/// Names the rule behind a refusal the kernel made, from the run's view (the host's
/// own record of it, never the sandbox's word): the paths the per-path policy covers,
/// then the mounts, the deepest place holding the path deciding.
#[derive(Debug, Clone, Default)]
pub struct RuleMap {
    /// (where, the rule; `None`: a writable place, where the kernel's error is all).
    places: Vec<(std::path::PathBuf, Option<String>)>,
}

impl RuleMap {
    pub fn of(spec: &super::spec::SandboxSpec) -> Self {
        Self::of_view(&spec.mounts, &spec.fs_policy)
    }

    /// The map of a view: its mounts in order (a later one at the same place replaces an
    /// earlier), then the per-path policy's covers.
    pub fn of_view(mounts: &[super::spec::Mount], fs_policy: &[super::fspolicy::Covered]) -> Self {
        use super::fspolicy::Deny;
        use super::spec::Mount;
        // A later one at a place replaces the earlier: each place's entry found by its path
        // (hashed, as `Path` compares: by components), not by a scan of the list, which
        // made this quadratic in the view's mounts, on every start.
        let mut places: Vec<Option<(std::path::PathBuf, Option<String>)>> = Vec::new();
        let mut at: std::collections::HashMap<std::path::PathBuf, usize> =
            std::collections::HashMap::new();
        let mut put = |inside: &std::path::Path, rule: Option<String>| {
            if let Some(before) = at.insert(inside.to_path_buf(), places.len()) {
                places[before] = None;
            }
            places.push(Some((inside.to_path_buf(), rule)));
        };
        for m in mounts {
            let (inside, rule) = match m {
                // The machine's secrets in /etc, covered with /dev/null.
                Mount::Bind { host, inside, .. } if host == std::path::Path::new("/dev/null") => {
                    (inside, Some(format!("hidden: {}", inside.display())))
                }
                Mount::Bind { inside, rw, .. } | Mount::Confined { inside, rw, .. } => (
                    inside,
                    (!rw).then(|| format!("read-only: {}", inside.display())),
                ),
                Mount::Tmpfs { inside, ro, .. } => (
                    inside,
                    ro.then(|| format!("read-only: {}", inside.display())),
                ),
                Mount::Unreadable { inside } => {
                    (inside, Some(format!("unreadable: {}", inside.display())))
                }
                Mount::RemountRo { inside } => {
                    (inside, Some(format!("read-only: {}", inside.display())))
                }
                Mount::OwnFile { inside, .. } => (
                    inside,
                    Some(format!("git-loop's own file: {}", inside.display())),
                ),
                Mount::Data { inside, .. } | Mount::Secret { inside } => {
                    (inside, Some(format!("read-only: {}", inside.display())))
                }
                Mount::Proc { inside } | Mount::Dev { inside } => (inside, None),
                Mount::Symlink { .. } => continue,
            };
            put(inside, rule);
        }
        for c in fs_policy {
            let rule = match c.deny {
                Deny::Pin => format!("{} (a folder above it, pinned)", c.rule),
                _ => c.rule.clone(),
            };
            put(&c.inside, Some(rule));
        }
        RuleMap {
            places: places.into_iter().flatten().collect(),
        }
    }

    /// The rule of the deepest place holding `path`, if that place has one.
    pub fn rule(&self, path: &str) -> Option<&str> {
        let path = std::path::Path::new(path);
        self.places
            .iter()
            .filter(|(p, _)| path.starts_with(p))
            .max_by_key(|(p, _)| p.components().count())
            .and_then(|(_, r)| r.as_deref())
    }
}

/// The host's side: reads the supervisor's lines from `from` (the read end of the report
/// pipe) and appends each as a violation event to `events`, at most `max` of them and
/// then one saying how many more there were, each field bounded and nothing but the
/// known fields taken, the rule of a kernel's refusal named by `rules`. Returns how many
/// refusals were read (recorded or not). Runs until the pipe's write ends are all closed.
pub fn record_refusals(
    from: std::fs::File,
    events: &std::path::Path,
    max: usize,
    rules: &RuleMap,
) -> u64 {
    use std::io::{BufRead, Read};
    let mut reader = std::io::BufReader::new(from);
    let mut line = Vec::new();
    let mut count = 0u64;
    loop {
        line.clear();
        // Bounded: a line longer than this is cut, and what is left of it is not JSON.
        match (&mut reader).take(16 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(r) = serde_json::from_slice::<Refusal>(&line) else {
            continue;
        };
        if r.errno == libc::EXDEV && rule_of(&r, rules).is_none() {
            continue; // a move across file systems, which tools do by copying
        }
        count += 1;
        if count > max as u64 {
            continue;
        }
        let _ = super::events::append(events, "violation", refusal_event(&r, rules));
    }
    if count > max as u64 {
        let more = count - max as u64;
        let reason = format!(
            "{more} further refusal{} of this run {} not recorded (at most {max} are; the supervisor inside reports at most {MAX_REPORTED})",
            if more == 1 { "" } else { "s" },
            if more == 1 { "is" } else { "are" },
        );
        let event = serde_json::json!({
            "action": "filesystem",
            "target": "",
            "dropped": more,
            "reason": reason,
        });
        let _ = super::events::append(events, "violation", event);
    }
    count
}

/// The rule behind a refusal: the supervisor's own, or the one of the place it names
/// (or, for a move, the place it moved from).
fn rule_of<'a>(r: &'a Refusal, rules: &'a RuleMap) -> Option<&'a str> {
    match r.rule.as_str() {
        "" => rules
            .rule(&r.path)
            .or_else(|| (!r.from.is_empty()).then(|| rules.rule(&r.from)).flatten()),
        given => Some(given),
    }
}

/// The violation event of one refusal.
fn refusal_event(r: &Refusal, rules: &RuleMap) -> serde_json::Value {
    let bound = |s: &str| s.chars().take(300).collect::<String>();
    let path = match r.from.as_str() {
        "" => bound(&r.path),
        from => format!("{} (from {})", bound(&r.path), bound(from)),
    };
    let rule = rule_of(r, rules).map(bound);
    let error = bound(&r.error);
    let call = bound(&r.call);
    let reason = match (&rule, error.is_empty()) {
        (Some(rule), true) => format!("[filesystem] {rule} ({call})"),
        (Some(rule), false) => format!("[filesystem] {rule} ({call}: {error})"),
        (None, _) => format!("[filesystem] {error} ({call})"),
    };
    let action = if r.access == "read" {
        "filesystem-read"
    } else {
        "filesystem-write"
    };
    serde_json::json!({
        "action": action,
        "target": path,
        "path": bound(&r.path),
        "rule": rule.unwrap_or_default(),
        "reason": reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule of a refusal the kernel made is the deepest place's holding it: a
    /// writable tree's cover, a read-only mount; none in a writable place.
    #[test]
    fn the_rule_is_the_deepest_places() {
        let rules = RuleMap {
            places: vec![
                ("/".into(), Some("read-only: /".into())),
                ("/usr".into(), Some("read-only: /usr".into())),
                ("/w".into(), None),
                (
                    "/w/.git/config".into(),
                    Some("read-only: /w/.git/config".into()),
                ),
                ("/w/.vscode".into(), Some("mandatory: .vscode/".into())),
            ],
        };
        assert_eq!(rules.rule("/usr/x"), Some("read-only: /usr"));
        assert_eq!(
            rules.rule("/w/.git/config"),
            Some("read-only: /w/.git/config")
        );
        assert_eq!(
            rules.rule("/w/.vscode/settings.json"),
            Some("mandatory: .vscode/")
        );
        assert_eq!(rules.rule("/w/a.txt"), None);
        assert_eq!(rules.rule("/w/.vscodex"), None);
        assert_eq!(rules.rule("/etc/x"), Some("read-only: /"));
    }

    /// Each kind of mount names its rule (or none, where the place is writable); a later
    /// mount at the same place replaces the earlier; the per-path policy's covers come
    /// last and win, a pinned folder's rule saying so.
    #[test]
    fn the_map_names_each_kind_of_place() {
        use crate::sandbox::fspolicy::{Covered, Deny};
        use crate::sandbox::spec::Mount;
        let p = |s: &str| std::path::PathBuf::from(s);
        let bind = |host: &str, inside: &str, rw: bool| Mount::Bind {
            host: p(host),
            inside: p(inside),
            rw,
            optional: false,
        };
        let mounts = vec![
            Mount::Tmpfs {
                inside: p("/"),
                size: None,
                ro: false,
            },
            bind("/usr", "/usr", false),
            bind("/dev/null", "/etc/shadow", false),
            bind("/srv", "/srv", true),
            bind("/srv", "/srv", false),
            Mount::Confined {
                root: p("/ws"),
                rel: p("w"),
                inside: p("/w"),
                rw: true,
                optional: false,
                expect: None,
            },
            Mount::Confined {
                root: p("/ws"),
                rel: p("o"),
                inside: p("/o"),
                rw: false,
                optional: false,
                expect: None,
            },
            Mount::OwnFile {
                root: p("/ws"),
                rel: p("w/.git/config"),
                inside: p("/w/.git/config"),
                content: String::new(),
            },
            Mount::Tmpfs {
                inside: p("/tmp"),
                size: None,
                ro: false,
            },
            Mount::Tmpfs {
                inside: p("/w/hidden"),
                size: None,
                ro: true,
            },
            Mount::Data {
                inside: p("/etc/resolv.conf"),
                content: String::new(),
            },
            Mount::Secret {
                inside: p("/home/u/.netrc"),
            },
            Mount::Proc { inside: p("/proc") },
            Mount::Dev { inside: p("/dev") },
            Mount::Symlink {
                target: p("usr/bin"),
                inside: p("/bin"),
            },
            Mount::RemountRo { inside: p("/") },
        ];
        let cover = |rel: &str, deny: Deny, rule: &str| Covered {
            root: p("/ws/w"),
            rel: p(rel),
            inside: p("/w").join(rel),
            dir: false,
            deny,
            rule: rule.into(),
        };
        let policy = vec![
            cover("keys", Deny::Write, "deny_write: keys"),
            cover(".github", Deny::Pin, "mandatory: .github/workflows/"),
            cover(".envrc", Deny::Absent, "mandatory: .envrc"),
        ];
        let rules = RuleMap::of_view(&mounts, &policy);
        for (path, rule) in [
            ("/usr/bin/env", Some("read-only: /usr")),
            ("/etc/shadow", Some("hidden: /etc/shadow")),
            ("/srv/x", Some("read-only: /srv")),
            ("/w/a.txt", None),
            ("/o/x", Some("read-only: /o")),
            (
                "/w/.git/config",
                Some("git-loop's own file: /w/.git/config"),
            ),
            ("/tmp/x", None),
            ("/w/hidden/x", Some("read-only: /w/hidden")),
            ("/etc/resolv.conf", Some("read-only: /etc/resolv.conf")),
            ("/home/u/.netrc", Some("read-only: /home/u/.netrc")),
            ("/proc/1/mem", None),
            ("/dev/null", None),
            ("/bin/sh", Some("read-only: /")),
            ("/etc/passwd", Some("read-only: /")),
            ("/w/keys/a.pem", Some("deny_write: keys")),
            (
                "/w/.github",
                Some("mandatory: .github/workflows/ (a folder above it, pinned)"),
            ),
            ("/w/.envrc", Some("mandatory: .envrc")),
        ] {
            assert_eq!(rules.rule(path), rule, "{path}");
        }
    }

    /// What the supervisor wrote, recorded: each refusal one event with its rule (its
    /// own, or the place's, or the place it moved from), a move across file systems with
    /// no rule on either side left out, a line that is not a refusal skipped, at most
    /// `max` kept and then one line with how many more.
    #[test]
    fn refusals_are_recorded_with_their_rules_and_bounded() {
        let tmp = tempfile::tempdir().unwrap();
        let rules = RuleMap {
            places: vec![
                ("/usr".into(), Some("read-only: /usr".into())),
                ("/w".into(), None),
                ("/w/keys".into(), Some("deny_write: keys".into())),
            ],
        };
        let line = |r: serde_json::Value| format!("{r}\n");
        let mut input = String::new();
        input.push_str(&line(serde_json::json!({
            "call": "openat", "path": "/w/a.pem", "rule": "deny_create: *.pem"
        })));
        input.push_str(&line(serde_json::json!({
            "call": "openat", "path": "/usr/x", "access": "write",
            "error": "Read-only file system", "errno": libc::EROFS
        })));
        input.push_str("not json\n");
        input.push_str(&format!("{}\n", "x".repeat(20_000)));
        input.push_str(&line(serde_json::json!({
            "call": "rename", "path": "/tmp/k", "from": "/w/a.txt",
            "error": "Invalid cross-device link", "errno": libc::EXDEV
        })));
        input.push_str(&line(serde_json::json!({
            "call": "rename", "path": "/tmp/k", "from": "/w/keys/k",
            "error": "Invalid cross-device link", "errno": libc::EXDEV
        })));
        input.push_str(&line(serde_json::json!({
            "call": "openat", "path": "/w/keys/s", "access": "read",
            "error": "Permission denied", "errno": libc::EACCES
        })));
        input.push_str(&line(serde_json::json!({
            "call": "unlinkat", "path": "/w/b", "error": "Busy", "errno": libc::EBUSY
        })));
        let from = tmp.path().join("in");
        std::fs::write(&from, &input).unwrap();
        let events = tmp.path().join("events.jsonl");
        let read = |max: usize, events: &std::path::Path| {
            let n = record_refusals(std::fs::File::open(&from).unwrap(), events, max, &rules);
            let text = std::fs::read_to_string(events).unwrap();
            let got: Vec<serde_json::Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            (n, got)
        };
        let (n, got) = read(10, &events);
        assert_eq!(n, 5);
        let shown: Vec<(String, String, String, String)> = got
            .iter()
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                assert_eq!(s("kind"), "violation");
                (s("action"), s("target"), s("rule"), s("reason"))
            })
            .collect();
        let row = |a: &str, t: &str, r: &str, why: &str| {
            (a.to_string(), t.to_string(), r.to_string(), why.to_string())
        };
        assert_eq!(
            shown,
            vec![
                row(
                    "filesystem-write",
                    "/w/a.pem",
                    "deny_create: *.pem",
                    "[filesystem] deny_create: *.pem (openat)"
                ),
                row(
                    "filesystem-write",
                    "/usr/x",
                    "read-only: /usr",
                    "[filesystem] read-only: /usr (openat: Read-only file system)"
                ),
                row(
                    "filesystem-write",
                    "/tmp/k (from /w/keys/k)",
                    "deny_write: keys",
                    "[filesystem] deny_write: keys (rename: Invalid cross-device link)"
                ),
                row(
                    "filesystem-read",
                    "/w/keys/s",
                    "deny_write: keys",
                    "[filesystem] deny_write: keys (openat: Permission denied)"
                ),
                row(
                    "filesystem-write",
                    "/w/b",
                    "",
                    "[filesystem] Busy (unlinkat)"
                ),
            ]
        );
        assert_eq!(got[2]["path"], "/tmp/k");
        // Bounded: three kept, then one line for the two more; one more says "is".
        for (max, more, text) in [
            (3, 2, "2 further refusals of this run are not recorded"),
            (4, 1, "1 further refusal of this run is not recorded"),
        ] {
            let events = tmp.path().join(format!("bounded-{max}.jsonl"));
            let (n, got) = read(max, &events);
            assert_eq!((n, got.len()), (5, max + 1));
            let last = &got[max];
            assert_eq!(last["dropped"], more);
            assert_eq!(last["action"], "filesystem");
            assert!(last["reason"].as_str().unwrap().starts_with(text), "{last}");
        }
        // Exactly as many as kept: no line about more.
        let events = tmp.path().join("exact.jsonl");
        let (n, got) = read(5, &events);
        assert_eq!((n, got.len()), (5, 5));
        assert!(got.iter().all(|e| e.get("dropped").is_none()));
        // Each field is bounded.
        let long = tmp.path().join("long");
        let path = format!("/w/{}", "p".repeat(1000));
        std::fs::write(
            &long,
            line(
                serde_json::json!({"call": "c".repeat(500), "path": path, "rule": "r".repeat(500)}),
            ),
        )
        .unwrap();
        let events = tmp.path().join("long.jsonl");
        record_refusals(std::fs::File::open(&long).unwrap(), &events, 5, &rules);
        let e: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&events).unwrap().trim()).unwrap();
        for k in ["target", "path", "rule"] {
            assert_eq!(e[k].as_str().unwrap().chars().count(), 300, "{k}");
        }
    }
}
