//! The host's side of the refusals pid 1's supervisor reports (creation.rs): read from
//! the report pipe, bounded, each given the rule behind it from the host's own record of
//! the run's view ([`RuleMap`]) and appended to `events.jsonl` as a violation. Nothing the
//! supervisor wrote is taken but its known fields, each bounded; the supervisor runs
//! inside the sandbox, so its lines are read as the sandbox's.

use super::creation::{Refusal, MAX_REPORTED};

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
        use super::fspolicy::Deny;
        use super::spec::Mount;
        let mut places = Vec::new();
        for m in &spec.mounts {
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
            places.retain(|(p, _)| p != inside);
            places.push((inside.clone(), rule));
        }
        for c in &spec.fs_policy {
            let rule = match c.deny {
                Deny::Pin => format!("{} (a folder above it, pinned)", c.rule),
                _ => c.rule.clone(),
            };
            places.retain(|(p, _)| p != &c.inside);
            places.push((c.inside.clone(), Some(rule)));
        }
        RuleMap { places }
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
}
