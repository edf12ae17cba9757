//! Per-path policy inside the writable roots (DESIGN 10): a profile's `[filesystem]`
//! `deny_read` and `deny_write`, and the built-in list of files that run on a person's
//! machine when they open or build the project ([`MANDATORY`]), read-only unless the
//! profile's `allow_write` names them.
//!
//! Enforced by the kernel through the view bwrap builds: each path a rule names that
//! exists when the run starts is covered there — read-only bound onto itself for
//! `deny_write` (by descriptor, opened without following links), `/dev/null` (on a
//! `nodev` mount inside, so it does not even open) over a file and an empty read-only
//! tmpfs over a folder for `deny_read`. Globs are expanded when the run starts, bounded
//! ([`MAX_MATCHES`], [`MAX_VISITED`]). A folder of the built-in list that is not there is
//! made, empty, and bound read-only ([`Deny::Create`]), and the folder holding a nested
//! one is pinned ([`Deny::Pin`]). Any other path made later is not covered by a
//! mount: a *file* of the list absent at start (`.envrc`, `.mcp.json`, ...) can be made,
//! and a name pattern refused at creation time is `deny_create`, enforced by a supervisor of
//! the calls that make names (creation.rs) where the kernel has one, refused where it has
//! not ([`unsupported`]). What
//! remains is caught on the way out: `review` flags a branch that changes a path of the list, and
//! `merge` and `publish` refuse it without `--accept-policy` (gate.rs).
//!
//! The matcher is hand-written (a few lines: `*`, `?` and `**` over path components) so
//! its exact meaning is this file's, and it is fuzzed (`fuzz/fuzz_targets/fspolicy.rs`).

use std::path::{Component, Path, PathBuf};

/// What runs on a person's machine when they open or build the project, relative to the
/// working tree; a trailing `/` marks a folder. `.git/hooks/` and `.git/config` are
/// read-only in every loop already (they are git-loop's own files there).
pub const MANDATORY: &[&str] = &[
    ".bashrc",
    ".zshrc",
    ".profile",
    ".gitconfig",
    ".gitmodules",
    ".mcp.json",
    ".vscode/",
    ".idea/",
    ".claude/commands/",
    ".claude/agents/",
    ".codex/",
    ".git/hooks/",
    ".git/config",
    ".envrc",
    ".husky/",
    ".github/workflows/",
    ".pre-commit-config.yaml",
];

/// At most this many paths are covered per rule; a glob matching more is refused.
pub const MAX_MATCHES: usize = 256;
/// At most this many entries are looked at to expand one glob.
pub const MAX_VISITED: usize = 50_000;

/// A profile's `[filesystem]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Filesystem {
    pub deny_read: Vec<String>,
    pub deny_write: Vec<String>,
    /// Entries of [`MANDATORY`] the profile lets the loop write.
    pub allow_write: Vec<String>,
    /// Name patterns refused at creation time, in every folder (see creation.rs).
    pub deny_create: Vec<String>,
}

impl Filesystem {
    pub fn is_empty(&self) -> bool {
        self.deny_read.is_empty()
            && self.deny_write.is_empty()
            && self.allow_write.is_empty()
            && self.deny_create.is_empty()
    }
}

/// Why a pattern of `[filesystem]` is not one.
pub fn check_pattern(p: &str) -> Result<(), String> {
    if p.is_empty() {
        return Err("an empty path".into());
    }
    if p.contains('\0') {
        return Err(format!("{p:?} has a NUL byte"));
    }
    let rel = p.strip_prefix("~/").unwrap_or(p);
    if Path::new(rel)
        .components()
        .any(|c| matches!(c, Component::ParentDir))
    {
        return Err(format!(
            "{p:?} climbs out with '..': name paths in the working tree, ~/ or absolute"
        ));
    }
    Ok(())
}

/// Whether `pattern` (components separated by `/`; `*` and `?` within one component,
/// `**` for any number of components) matches `path` (a relative path, `/`-separated).
pub fn glob_matches(pattern: &[u8], path: &[u8]) -> bool {
    let pat: Vec<&[u8]> = split(pattern);
    let parts: Vec<&[u8]> = split(path);
    match_parts(&pat, &parts)
}

fn split(s: &[u8]) -> Vec<&[u8]> {
    s.split(|&b| b == b'/').filter(|c| !c.is_empty()).collect()
}

fn match_parts(pat: &[&[u8]], parts: &[&[u8]]) -> bool {
    // Iterative over `**` with backtracking on the last one seen: linear in practice and
    // never exponential (each `**` retries from one saved point).
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < parts.len() {
        if p < pat.len() && pat[p] == b"**" {
            star = Some((p, s));
            p += 1;
        } else if p < pat.len() && component_matches(pat[p], parts[s]) {
            p += 1;
            s += 1;
        } else if let Some((sp, ss)) = star {
            p = sp + 1;
            s = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    while p < pat.len() && pat[p] == b"**" {
        p += 1;
    }
    p == pat.len()
}

/// `*` and `?` within one component. Unlike a shell, `*` matches a leading `.` too
/// (`*.pem` names `.pem`): a policy errs on covering more.
pub fn component_matches(pat: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pat.len() && (pat[p] == b'?' || (pat[p] != b'*' && pat[p] == name[n])) {
            p += 1;
            n += 1;
        } else if p < pat.len() && pat[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

fn has_glob(p: &str) -> bool {
    p.contains(['*', '?'])
}

/// The entry of [`MANDATORY`] a path of a branch (relative to its root) falls under:
/// the entry's components anywhere in the path, the whole rest of it for a file entry.
/// Used by the gate, which flags such a change for a person's eye.
pub fn mandatory(path: &[u8]) -> Option<&'static str> {
    let parts = split(path);
    MANDATORY.iter().copied().find(|entry| {
        let dir = entry.ends_with('/');
        let e = split(entry.as_bytes());
        (0..parts.len()).any(|start| {
            let rest = &parts[start..];
            rest.len() >= e.len() && rest[..e.len()] == e[..] && (dir || rest.len() == e.len())
        })
    })
}

/// What a rule does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Deny {
    /// Unreadable (and so unwritable).
    Read,
    /// Read-only.
    Write,
    /// A folder of the built-in list that is not there: the run makes it, empty, and
    /// binds it read-only (`make_places` in setup.rs), so nothing can be made in it (git does not see empty folders).
    Create,
    /// The folder holding a folder of the list (`.github` for `.github/workflows/`),
    /// made where it is not there and bound onto itself as it is, so it cannot be renamed
    /// away and made again without the cover.
    Pin,
}

impl Deny {
    /// The stronger of two rules for one path comes first.
    fn rank(self) -> u8 {
        match self {
            Deny::Read => 0,
            Deny::Write => 1,
            Deny::Create => 2,
            Deny::Pin => 3,
        }
    }
}

/// One path covered when the run starts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Covered {
    /// The tree's root on the host, and the path below it.
    pub root: PathBuf,
    pub rel: PathBuf,
    /// Where it is inside.
    pub inside: PathBuf,
    pub dir: bool,
    pub deny: Deny,
    /// The rule, as written (`mandatory: .vscode/` for the built-in list).
    pub rule: String,
}

/// A tree rules apply in: its root on the host and inside.
#[derive(Debug, Clone)]
pub struct Tree {
    pub host: PathBuf,
    pub inside: PathBuf,
}

/// Why the rules cannot be applied.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("[filesystem] {key}: {pattern:?} matches more than {MAX_MATCHES} paths")]
    TooMany { key: &'static str, pattern: String },
    #[error(
        "[filesystem] {key}: {pattern:?} would need more than {MAX_VISITED} entries looked at"
    )]
    TooLarge { key: &'static str, pattern: String },
    #[error("[filesystem] {key}: {pattern:?} is outside the loop's working tree and $HOME")]
    Outside { key: &'static str, pattern: String },
    #[error("[filesystem] {key}: {message}")]
    Bad { key: &'static str, message: String },
}

/// What the profile asks that this backend cannot enforce, if anything: `deny_create`
/// where the backend has no creation supervisor (`no_supervisor` says why not).
pub fn unsupported(fs: &Filesystem, no_supervisor: Option<&str>) -> Option<String> {
    match no_supervisor {
        Some(why) if !fs.deny_create.is_empty() => Some(format!(
            "[filesystem] deny_create ({}) needs names refused at creation time, which the bwrap backend does not enforce here: {why}",
            fs.deny_create.join(", ")
        )),
        _ => None,
    }
}

/// The paths the rules cover when a run starts: the profile's `deny_read` and
/// `deny_write` in `work` (the working tree: relative patterns) and `home` (`~/`
/// patterns; absolute ones inside either), and the built-in list in `work` less what
/// `allow_write` names. Looks at the host's trees without following links; a link that
/// matches is not covered (its target is, where a rule names it).
pub fn cover(fs: &Filesystem, work: &Tree, home: &Tree) -> Result<Vec<Covered>, PolicyError> {
    let mut out: Vec<Covered> = Vec::new();
    for (key, deny, list) in [
        ("deny_read", Deny::Read, &fs.deny_read),
        ("deny_write", Deny::Write, &fs.deny_write),
    ] {
        for pattern in list {
            check_pattern(pattern).map_err(|message| PolicyError::Bad { key, message })?;
            let (tree, rel) = locate(pattern, work, home).ok_or_else(|| PolicyError::Outside {
                key,
                pattern: pattern.clone(),
            })?;
            for (rel, dir) in expand(tree, &rel, key, pattern)? {
                out.push(Covered {
                    inside: tree.inside.join(&rel),
                    root: tree.host.clone(),
                    rel,
                    dir,
                    deny,
                    rule: format!("{key}: {pattern}"),
                });
            }
        }
    }
    for entry in MANDATORY {
        let rel = entry.trim_end_matches('/');
        if rel.starts_with(".git/") {
            continue; // git-loop's own files, read-only in every loop
        }
        let allowed = fs.allow_write.iter().any(|a| {
            let a = a.trim_start_matches("./").trim_end_matches('/');
            Path::new(rel).starts_with(a)
        });
        if allowed {
            continue;
        }
        let rule = format!("mandatory: {entry}");
        let path = work.host.join(rel);
        let cover = |rel: &Path, dir: bool, deny: Deny| Covered {
            root: work.host.clone(),
            rel: rel.into(),
            inside: work.inside.join(rel),
            dir,
            deny,
            rule: rule.clone(),
        };
        // A folder of the list inside another (`.github/workflows/`): the one holding it
        // is pinned where it is a real folder. Where it is a link, or another file,
        // nothing is laid below it (bwrap would follow the link).
        let parent = Path::new(rel)
            .parent()
            .filter(|p| !p.as_os_str().is_empty());
        let parent_ok = match parent {
            None => true,
            Some(p) => match std::fs::symlink_metadata(work.host.join(p)) {
                Ok(meta) if !meta.is_dir() => false,
                // A real folder, or none yet (the run makes it: `make_places` in setup.rs).
                _ => {
                    out.push(cover(p, true, Deny::Pin));
                    true
                }
            },
        };
        match kind(&path) {
            Some(dir) => out.push(cover(Path::new(rel), dir, Deny::Write)),
            None if entry.ends_with('/')
                && parent_ok
                && std::fs::symlink_metadata(&path).is_err() =>
            {
                out.push(cover(Path::new(rel), true, Deny::Create))
            }
            None => {}
        }
    }
    // A path two rules name gets the stricter (unreadable before read-only before
    // pinned); parents before children.
    out.sort_by_key(|c| {
        (
            c.inside.components().count(),
            c.inside.clone(),
            c.deny.rank(),
        )
    });
    out.dedup_by(|later, kept| later.inside == kept.inside);
    // Nothing below an unreadable folder needs its own cover (it is not there).
    let unreadable: Vec<PathBuf> = out
        .iter()
        .filter(|c| c.deny == Deny::Read && c.dir)
        .map(|c| c.inside.clone())
        .collect();
    out.retain(|c| {
        !unreadable
            .iter()
            .any(|u| c.inside.starts_with(u) && c.inside != *u)
    });
    Ok(out)
}

/// The tree a pattern is in and the pattern relative to it.
fn locate<'a>(pattern: &str, work: &'a Tree, home: &'a Tree) -> Option<(&'a Tree, String)> {
    let trimmed = pattern.trim_end_matches('/');
    if let Some(rest) = trimmed.strip_prefix("~/") {
        return Some((home, rest.to_string()));
    }
    if Path::new(trimmed).is_absolute() {
        for tree in [work, home] {
            if let Ok(rest) = Path::new(trimmed).strip_prefix(&tree.inside) {
                return Some((tree, rest.to_string_lossy().into_owned()));
            }
        }
        return None;
    }
    Some((work, trimmed.trim_start_matches("./").to_string()))
}

/// Whether `path` is a folder (`Some(true)`), another file but a link (`Some(false)`),
/// or absent or a link (`None`).
fn kind(path: &Path) -> Option<bool> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if meta.file_type().is_symlink() {
        return None;
    }
    Some(meta.is_dir())
}

/// The existing paths below `tree` that `rel` names (itself, or its glob's matches).
fn expand(
    tree: &Tree,
    rel: &str,
    key: &'static str,
    pattern: &str,
) -> Result<Vec<(PathBuf, bool)>, PolicyError> {
    if rel.is_empty() {
        return Err(PolicyError::Bad {
            key,
            message: format!("{pattern:?} names the whole tree"),
        });
    }
    if !has_glob(rel) {
        return Ok(kind(&tree.host.join(rel))
            .map(|dir| vec![(PathBuf::from(rel), dir)])
            .unwrap_or_default());
    }
    let pat = rel.as_bytes();
    let pat_parts = split(pat);
    let deep = pat_parts.iter().any(|p| *p == b"**");
    let max_depth = if deep { usize::MAX } else { pat_parts.len() };
    let into_git = pat_parts.first().is_some_and(|p| *p == b".git");
    let mut found = Vec::new();
    let mut visited = 0usize;
    let mut stack: Vec<(PathBuf, usize)> = vec![(PathBuf::new(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(tree.host.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MAX_VISITED {
                return Err(PolicyError::TooLarge {
                    key,
                    pattern: pattern.to_string(),
                });
            }
            let rel = dir.join(entry.file_name());
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_symlink() {
                continue;
            }
            let bytes = rel.as_os_str().as_encoded_bytes();
            if glob_matches(pat, bytes) {
                found.push((rel.clone(), ft.is_dir()));
                if found.len() > MAX_MATCHES {
                    return Err(PolicyError::TooMany {
                        key,
                        pattern: pattern.to_string(),
                    });
                }
                if !deep {
                    continue;
                }
            }
            let skip_git = depth == 0 && entry.file_name() == ".git" && !into_git;
            if ft.is_dir() && depth + 1 < max_depth && !skip_git {
                stack.push((rel, depth + 1));
            }
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_within_and_across_components() {
        assert!(glob_matches(b"*.pem", b"cert.pem"));
        assert!(!glob_matches(b"*.pem", b"keys/cert.pem"));
        assert!(glob_matches(b"**/*.pem", b"keys/deep/cert.pem"));
        assert!(glob_matches(b"**/*.pem", b"cert.pem"));
        assert!(glob_matches(b"secrets/**", b"secrets/a/b"));
        assert!(glob_matches(b".env*", b".env.local"));
        assert!(glob_matches(b"id_?sa", b"id_rsa"));
        assert!(!glob_matches(b"id_?sa", b"id_ed25519"));
        assert!(glob_matches(b"a/**/b/*.txt", b"a/x/y/b/c.txt"));
        assert!(!glob_matches(b"a/**/b/*.txt", b"a/x/y/c/c.txt"));
        assert!(glob_matches(b"config.json", b"config.json"));
        assert!(!glob_matches(b"config.json", b"config.jsonx"));
        assert!(component_matches(b"*a*b*c", b"xxaxxbxxc"));
        assert!(!component_matches(b"*a*b*c", b"xxaxxcxxb"));
    }

    #[test]
    fn the_list_names_what_runs_when_the_project_is_opened_at_any_depth() {
        assert_eq!(mandatory(b".vscode/settings.json"), Some(".vscode/"));
        assert_eq!(mandatory(b".vscode"), Some(".vscode/"));
        assert_eq!(mandatory(b"web/.envrc"), Some(".envrc"));
        assert_eq!(
            mandatory(b".github/workflows/ci.yml"),
            Some(".github/workflows/")
        );
        assert_eq!(mandatory(b".claude/agents/x.md"), Some(".claude/agents/"));
        assert_eq!(mandatory(b".github/CODEOWNERS"), None);
        assert_eq!(mandatory(b".claude/settings.json"), None);
        assert_eq!(mandatory(b".envrc.example"), None);
        assert_eq!(mandatory(b"src/vscode/x"), None);
        assert_eq!(mandatory(b"docs/.bashrc/notes"), None);
    }

    fn tree(root: &Path, inside: &str) -> Tree {
        Tree {
            host: root.to_path_buf(),
            inside: inside.into(),
        }
    }

    #[test]
    fn rules_cover_what_exists_and_the_list_less_what_the_profile_allows() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().join("w");
        let h = tmp.path().join("h");
        for d in [
            ".vscode",
            "keys/deep",
            "secrets",
            ".github/workflows",
            ".git",
        ] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        for f in [
            "keys/a.pem",
            "keys/deep/b.pem",
            "keys/c.txt",
            ".envrc",
            ".git/x.pem",
        ] {
            std::fs::write(w.join(f), "x").unwrap();
        }
        std::fs::create_dir_all(h.join(".aws")).unwrap();
        std::os::unix::fs::symlink("keys/a.pem", w.join("link.pem")).unwrap();
        let fs = Filesystem {
            deny_read: vec!["secrets/".into(), "~/.aws".into(), "**/*.pem".into()],
            deny_write: vec!["keys".into(), "/in/w/keys/c.txt".into(), "absent".into()],
            allow_write: vec![".github/".into()],
            deny_create: vec![],
        };
        let got = cover(&fs, &tree(&w, "/in/w"), &tree(&h, "/home/u")).unwrap();
        let shown: Vec<(String, Deny, bool)> = got
            .iter()
            .map(|c| (c.inside.display().to_string(), c.deny, c.dir))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("/home/u/.aws".into(), Deny::Read, true),
                ("/in/w/.claude".into(), Deny::Pin, true),
                ("/in/w/.codex".into(), Deny::Create, true),
                ("/in/w/.envrc".into(), Deny::Write, false),
                ("/in/w/.husky".into(), Deny::Create, true),
                ("/in/w/.idea".into(), Deny::Create, true),
                ("/in/w/.vscode".into(), Deny::Write, true),
                ("/in/w/keys".into(), Deny::Write, true),
                ("/in/w/secrets".into(), Deny::Read, true),
                ("/in/w/.claude/agents".into(), Deny::Create, true),
                ("/in/w/.claude/commands".into(), Deny::Create, true),
                ("/in/w/keys/a.pem".into(), Deny::Read, false),
                ("/in/w/keys/c.txt".into(), Deny::Write, false),
                ("/in/w/keys/deep/b.pem".into(), Deny::Read, false),
            ]
        );
        assert_eq!(got[3].rule, "mandatory: .envrc");
        // Outside both trees, or climbing out: refused.
        let outside = Filesystem {
            deny_read: vec!["/etc/passwd".into()],
            ..Filesystem::default()
        };
        assert!(matches!(
            cover(&outside, &tree(&w, "/in/w"), &tree(&h, "/home/u")),
            Err(PolicyError::Outside { .. })
        ));
        assert!(check_pattern("../x").is_err() && check_pattern("~/../x").is_err());
        let pem = Filesystem {
            deny_create: vec!["*.pem".into()],
            ..Filesystem::default()
        };
        // A backend without the supervisor refuses; with it, nothing is left unenforced.
        assert!(unsupported(&pem, Some("no notify")).is_some_and(|w| w.contains("no notify")));
        assert!(unsupported(&pem, None).is_none());
        assert!(unsupported(&Filesystem::default(), Some("no notify")).is_none());
    }
}
