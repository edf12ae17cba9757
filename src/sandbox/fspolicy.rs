//! Per-path policy inside the writable roots (DESIGN 10): a profile's `[filesystem]`
//! `deny_read` and `deny_write`, and the built-in list of files that run on a person's
//! machine when they open or build the project ([`MANDATORY`]), read-only unless the
//! profile's `allow_write` names them.
//!
//! Enforced by the kernel through the view bwrap builds: each path a rule names that
//! exists when the run starts is covered there — read-only bound onto itself for
//! `deny_write` (by descriptor, opened without following links), `/dev/null` (on a
//! `nodev` mount inside, so it does not even open) over a file and an empty read-only
//! tmpfs of mode 000 over a folder for `deny_read` (listing it or looking into it fails,
//! where an empty folder would pass for content: `Mount::Unreadable`). Globs are expanded when the run starts, bounded
//! ([`MAX_MATCHES`], [`MAX_VISITED`]); a literal path (and a glob's part before its
//! first wildcard) is followed through the links on its way while they stay in the
//! tree, and the place they lead to is covered (a write
//! through `.claude -> dotfiles/claude` reaches `dotfiles/claude/commands`). A folder of
//! the built-in list that is not there is made, empty, and bound read-only
//! ([`Deny::Create`]), and every folder above a covered path is pinned ([`Deny::Pin`]):
//! a mount point cannot be renamed, so no folder can be moved away with its cover and
//! made again without it (where pid 1's supervisor sees every rename, it refuses those
//! renames itself and no mount is laid, so a move across the folder is no move across
//! mounts: creation.rs). Any other path made later is not covered by a
//! mount: a *file* of the list absent at start (`.envrc`, `.mcp.json`, ...), and a link of
//! the list leading out of the tree that could be replaced by what it stands for, are
//! refused when made in their folder ([`Deny::Absent`]), the target of a link of the
//! list pointing at nothing in every folder ([`Deny::Made`]), and a name pattern refused
//! at creation time is `deny_create`; all by a supervisor of the calls that make names
//! (creation.rs) where the kernel has one, a run refused where it has not ([`unsupported`],
//! [`unenforced`]). Names of the list below the root (`web/.envrc`) are not refused. What
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
    ".bash_profile",
    ".zshrc",
    ".zprofile",
    ".profile",
    ".ripgreprc",
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

/// What `allow_write` names to let a loop make a repository inside its trees (`git init
/// sub`, `git clone URL vendor/x`, `git worktree add wt`): the name `.git`, a folder or a
/// file, made at or below the root of a tree a person works in with git (the working
/// tree, notes, a distill loop's knowledge, the personal tree). Refused otherwise when
/// made, by pid 1's supervisor (creation.rs), as a person's own git would read such a
/// repository's config and run what it names (`core.fsmonitor`): `git status` after a
/// `cd` into it (a prompt showing git's state does that on `cd`), and `git add -A` at the
/// root for a gitlink to it, which no key of the root's config can stop
/// (`loops::clone_config`).
pub const NESTED_GIT: &str = "**/.git";

/// Whether the profile lets the loop make a repository in its trees ([`NESTED_GIT`]).
pub fn nested_git_allowed(fs: &Filesystem) -> bool {
    fs.allow_write
        .iter()
        .any(|a| a.trim_end_matches('/') == NESTED_GIT)
}

/// Why a run that refuses [`NESTED_GIT`] cannot be run here (no supervisor: `why`),
/// `None` where it can: where the profile allows it, where nothing is writable
/// (`writable` false: review mode), or where the supervisor is there.
pub fn nested_git_unenforced(
    fs: &Filesystem,
    writable: bool,
    no_supervisor: Option<&str>,
) -> Option<String> {
    let why = no_supervisor?;
    if !writable || nested_git_allowed(fs) {
        return None;
    }
    Some(format!(
        "nothing here can keep a process inside from making a repository (a `.git`) in the loop's trees, whose config a person's own git would run ({why}); name \"{NESTED_GIT}\" in [filesystem] allow_write, or run on Linux 5.14 or later"
    ))
}

/// What a person's git reads as instructions in a nested repository's git folder: read-only
/// (or refused when made) in each one found behind a gitlink when a run starts
/// ([`nested_cover`]).
const NESTED_GIT_PARTS: &[&str] = &["config", "config.worktree", "commondir", "hooks"];

/// The longest `.git` file ([`nested_cover`] reads): `gitdir: ` and a path.
pub const MAX_GITDIR_FILE: u64 = 4096;

/// What a run keeps of the nested repositories already in tree `work` behind a gitlink
/// (`gitlinks`, from its index): the person's git at the root enters such a repository
/// (`git add -A`), so what it reads there as instructions must not be the loop's to write.
/// For each gitlink whose `.git` is a folder: its [`NESTED_GIT_PARTS`], read-only where
/// they are ([`Deny::Write`]) and refused when made where they are not ([`Deny::Absent`]);
/// where it is a file (`gitdir: ...`): the file read-only, and the parts of the git folder
/// it names, where that is in the tree. A part that is a link is refused when made again,
/// and what it leads to in the tree is read-only. Nothing where the profile lets the loop
/// make repositories ([`nested_git_allowed`]), nor for a gitlink whose `.git` is a link or
/// absent (nothing for git to enter, and no `.git` can be made during a run).
/// `read_git_file` reads a `.git` file (a path relative to the tree's root) without
/// following links, at most [`MAX_GITDIR_FILE`] bytes: the caller's, so that this file
/// needs nothing but std (it is fuzzed and mutation-tested on its own).
pub fn nested_cover(
    fs: &Filesystem,
    work: &Tree,
    gitlinks: &[String],
    read_git_file: &dyn Fn(&Path) -> Option<String>,
) -> Vec<Covered> {
    let looks = Looks::default();
    let mut out = Vec::new();
    if nested_git_allowed(fs) {
        return out;
    }
    for link in gitlinks {
        let rel = Path::new(link);
        if check_pattern(link).is_err() || rel.is_absolute() || has_glob(link) {
            continue;
        }
        let git = rel.join(".git");
        let rule = format!("nested repository: {link}/.git (behind a gitlink)");
        let folder = match looks.at(&work.host.join(&git)) {
            Some(Look::Dir) => git,
            Some(Look::Other) => {
                out.push(covered(work, &git, false, Deny::Write, &rule));
                match gitdir_of(work, &git, read_git_file) {
                    Some(folder) if looks.at(&work.host.join(&folder)) == Some(Look::Dir) => {
                        // The folder it names, and each above it, is renamed by nothing:
                        // another made under its name would be the repository.
                        // The root's own `.git` is bound already, its config read-only
                        // inside it, which a bind of it laid later would cover.
                        for above in folder.ancestors() {
                            if !above.as_os_str().is_empty() && above != Path::new(".git") {
                                out.push(covered(work, above, true, Deny::Pin, &rule));
                            }
                        }
                        folder
                    }
                    _ => continue,
                }
            }
            _ => continue,
        };
        for part in NESTED_GIT_PARTS {
            let at = folder.join(part);
            match looks.at(&work.host.join(&at)) {
                Some(Look::Dir) => out.push(covered(work, &at, true, Deny::Write, &rule)),
                Some(Look::Other) => out.push(covered(work, &at, false, Deny::Write, &rule)),
                Some(Look::Link) => {
                    out.push(covered(work, &at, false, Deny::Absent, &rule));
                    if let Some(real) = resolve_seen(work, &at, &looks) {
                        if let Some(dir) = looks.kind(&work.host.join(&real)) {
                            if !real.as_os_str().is_empty() {
                                out.push(covered(work, &real, dir, Deny::Write, &rule));
                            }
                        }
                    }
                }
                None => out.push(covered(work, &at, false, Deny::Absent, &rule)),
            }
        }
    }
    out
}

fn covered(tree: &Tree, rel: &Path, dir: bool, deny: Deny, rule: &str) -> Covered {
    Covered {
        root: tree.host.clone(),
        rel: rel.to_path_buf(),
        inside: tree.inside.join(rel),
        dir,
        deny,
        rule: rule.to_string(),
    }
}

/// The git folder a `.git` file at `git` (below the tree's root) names, below the root,
/// where it is in the tree: read by `read` (without following links, bounded).
fn gitdir_of(tree: &Tree, git: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Option<PathBuf> {
    let text = read(git)?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let named = Path::new(named);
    let rel = if named.is_absolute() {
        named
            .strip_prefix(&tree.inside)
            .or_else(|_| named.strip_prefix(&tree.host))
            .ok()?
            .to_path_buf()
    } else {
        git.parent()?.join(named)
    };
    // `..` taken away as the kernel would walk it, staying in the tree.
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir if !out.pop() => return None,
            _ => {}
        }
    }
    resolve_seen(tree, &out, &Looks::default()).filter(|p| !p.as_os_str().is_empty())
}

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
    /// A file of the list reached through a link that points at nothing there
    /// (`.envrc -> .envrc.local`): no mount covers what is not there, and a write through
    /// the link would make its target, which the gate would not see as the list's. So the
    /// target's name is refused when made, in every folder, by pid 1's supervisor
    /// (creation.rs); a run on a kernel without it is refused.
    Made,
    /// A file of the list that is not there when the run starts (`.envrc`, `.bashrc`),
    /// or what stands in the way of one and could be replaced by it (a link leading out
    /// of the tree, a file where a folder of the way should be): no mount covers what is
    /// not there, so pid 1's supervisor refuses making this name in this folder
    /// (creation.rs, `Watch::places`); a run on a kernel without it is refused
    /// ([`unenforced`]).
    Absent,
}

impl Deny {
    /// The stronger of two rules for one path comes first.
    fn rank(self) -> u8 {
        match self {
            Deny::Read => 0,
            Deny::Write => 1,
            Deny::Create => 2,
            Deny::Pin => 3,
            Deny::Made => 4,
            Deny::Absent => 5,
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

/// What of `cover` only pid 1's supervisor can keep (a name refused when made: the
/// target of a link of the list pointing at nothing, a file of the list not there), and
/// so what a sandbox without it must refuse to run, never run uncovered; `no_supervisor`
/// says why there is none. `None` where nothing is left unenforced.
pub fn unenforced(cover: &[Covered], no_supervisor: Option<&str>) -> Option<String> {
    let why = no_supervisor?;
    if let Some(c) = cover.iter().find(|c| c.deny == Deny::Made) {
        return Some(format!(
            "{} points at {}, which is not there, and nothing here can keep a write through it from making it ({why}); remove the link, or name it in allow_write",
            c.rule,
            c.rel.display()
        ));
    }
    let absent: Vec<String> = cover
        .iter()
        .filter(|c| c.deny == Deny::Absent)
        .map(|c| c.rel.display().to_string())
        .collect();
    if absent.is_empty() {
        return None;
    }
    Some(format!(
        "{} of the built-in list {} not in the working tree, and nothing here can keep a process inside from making {} ({why}); name {} in [filesystem] allow_write (review and merge still flag a change to them), or run on Linux 5.14 or later",
        absent.join(", "),
        if absent.len() == 1 { "is" } else { "are" },
        if absent.len() == 1 { "it" } else { "them" },
        if absent.len() == 1 { "it" } else { "them" },
    ))
}

/// The first part of `rel` (itself included) that is a link, or, on the way to it,
/// another file than a folder: what a process inside could replace by the entry `rel`
/// stands for. `None` where the way is clear or something on it is absent.
fn first_blocked(tree: &Tree, rel: &Path, looks: &Looks) -> Option<PathBuf> {
    let parts = rel.components().count();
    let mut at = PathBuf::new();
    for (i, c) in rel.components().enumerate() {
        at.push(c);
        match looks.at(&tree.host.join(&at))? {
            Look::Link => return Some(at),
            Look::Other if i + 1 < parts => return Some(at),
            _ => {}
        }
    }
    None
}

/// The paths the rules cover when a run starts: the profile's `deny_read` and
/// `deny_write` in `work` (the working tree: relative patterns) and `home` (`~/`
/// patterns; absolute ones inside either), and the built-in list in `work` less what
/// `allow_write` names. Looks at the host's trees without following links; a link that
/// matches is not covered (its target is, where a rule names it).
pub fn cover(fs: &Filesystem, work: &Tree, home: &Tree) -> Result<Vec<Covered>, PolicyError> {
    let looks = Looks::default();
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
            let rule = format!("{key}: {pattern}");
            let bounds = (MAX_MATCHES, MAX_VISITED);
            for (rel, dir) in expand(tree, &rel, key, pattern, bounds, &looks)? {
                pin_folders_above(&mut out, tree, &rel, &rule);
                out.push(Covered {
                    inside: tree.inside.join(&rel),
                    root: tree.host.clone(),
                    rel,
                    dir,
                    deny,
                    rule: rule.clone(),
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
        // Where a link stands on the way (`.claude -> dotfiles/claude`, `.codex -> decoy`),
        // the place it leads to in the tree is what a write through it reaches, and that
        // is covered. A link leading out of the tree or round in a circle leads to nothing
        // here to cover (writes through it fail or land outside the working tree).
        let Some(real) = resolve_seen(work, Path::new(rel), &looks) else {
            // But the link itself can be replaced by what it stands for (`rm .vscode &&
            // mkdir .vscode`): the first link on the way is refused when made again.
            if let Some(at) = first_blocked(work, Path::new(rel), &looks) {
                pin_folders_above(&mut out, work, &at, &format!("mandatory: {entry}"));
                out.push(Covered {
                    root: work.host.clone(),
                    inside: work.inside.join(&at),
                    rel: at,
                    dir: false,
                    deny: Deny::Absent,
                    rule: format!("mandatory: {entry}"),
                });
            }
            continue;
        };
        if real.as_os_str().is_empty() {
            return Err(PolicyError::Bad {
                key: "mandatory",
                message: format!(
                    "{entry} is a link to the working tree itself: remove it, or name it in allow_write"
                ),
            });
        }
        let rule = if real == Path::new(rel) {
            format!("mandatory: {entry}")
        } else {
            format!("mandatory: {entry} through a link")
        };
        let cover = |rel: &Path, dir: bool, deny: Deny| Covered {
            root: work.host.clone(),
            rel: rel.into(),
            inside: work.inside.join(rel),
            dir,
            deny,
            rule: rule.clone(),
        };
        // The folders holding one of the list (`.github` for `.github/workflows/`) are
        // pinned where they are real folders. Where one is another file, nothing is laid
        // below it (bwrap could not make a mount point there).
        let parents_ok = real.ancestors().skip(1).all(|p| {
            p.as_os_str().is_empty()
                || !matches!(looks.at(&work.host.join(p)), Some(Look::Link | Look::Other))
        });
        if parents_ok {
            pin_folders_above(&mut out, work, &real, &rule);
        } else if let Some(at) = first_blocked(work, &real, &looks) {
            // A file where a folder of the way should be (`.github` a file): replaced by
            // a folder, the entry could be made below it uncovered; so it is refused when
            // made again.
            pin_folders_above(&mut out, work, &at, &rule);
            out.push(cover(&at, false, Deny::Absent));
        }
        match looks.kind(&work.host.join(&real)) {
            Some(dir) => out.push(cover(&real, dir, Deny::Write)),
            // Absent (resolve followed every link): a folder is made, empty, read-only.
            None if entry.ends_with('/') && parents_ok => {
                out.push(cover(&real, true, Deny::Create))
            }
            // A file reached through a link that leads nowhere: its target's name is
            // refused when made.
            None if real != Path::new(rel) && real.file_name().is_some() => {
                out.push(cover(&real, false, Deny::Made))
            }
            // A file of the list that is not there: its name is refused when made in
            // its folder.
            None if !entry.ends_with('/') => out.push(cover(&real, false, Deny::Absent)),
            None => {}
        }
    }
    Ok(settle(out))
}

/// The covers of [`cover`] with `more` (of [`nested_cover`]), settled together.
pub fn with_nested(mut cover: Vec<Covered>, more: Vec<Covered>) -> Vec<Covered> {
    cover.extend(more);
    settle(cover)
}

/// Covers in the order they are laid, each path once: a path two rules name gets the
/// stricter (unreadable before read-only before pinned); parents before children; nothing
/// below an unreadable folder, no pin below a read-only folder.
fn settle(mut out: Vec<Covered>) -> Vec<Covered> {
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
    // Nor is a folder pinned below a read-only one: nothing there can be renamed, and a
    // pin (bound read-write) would open it again.
    let read_only: Vec<PathBuf> = out
        .iter()
        .filter(|c| c.dir && matches!(c.deny, Deny::Write | Deny::Create))
        .map(|c| c.inside.clone())
        .collect();
    out.retain(|c| {
        c.deny != Deny::Pin
            || !read_only
                .iter()
                .any(|r| c.inside.starts_with(r) && c.inside != *r)
    });
    out
}

/// Pins every folder between the tree's root and a covered path, each bound onto itself
/// as it is, so that none can be renamed away (taking the cover with it) and made again
/// without it: `mv config c2 && mkdir config && echo x > config/prod.toml` fails at the
/// `mv` (EBUSY: a mount point). `.git` is left as it is: it is bound already, with
/// git-loop's own files read-only inside it, which a bind of it made later would cover.
fn pin_folders_above(out: &mut Vec<Covered>, tree: &Tree, rel: &Path, rule: &str) {
    for above in rel.ancestors().skip(1) {
        if above.as_os_str().is_empty() || above.starts_with(".git") {
            continue;
        }
        out.push(Covered {
            root: tree.host.clone(),
            rel: above.to_path_buf(),
            inside: tree.inside.join(above),
            dir: true,
            deny: Deny::Pin,
            rule: rule.to_string(),
        });
    }
}

/// At most this many links are followed to resolve one path (as the kernel's 40).
const MAX_LINKS: usize = 40;

/// `rel` below the tree's root with each link on the way followed as a process inside
/// follows it (a relative target from the link's folder, an absolute one from the root
/// inside), spelled without links: the place a write to `rel` reaches. `None` where a
/// link leads out of the tree or round in a circle. The parts from the first absent one
/// on are kept as written.
#[cfg(test)]
fn resolve(tree: &Tree, rel: &Path) -> Option<PathBuf> {
    resolve_seen(tree, rel, &Looks::default())
}

/// [`resolve`], looking at each path through `looks`.
fn resolve_seen(tree: &Tree, rel: &Path, looks: &Looks) -> Option<PathBuf> {
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    let push = |todo: &mut Vec<std::ffi::OsString>, p: &Path| {
        for c in p.components().rev() {
            match c {
                Component::Normal(n) => todo.push(n.to_os_string()),
                Component::ParentDir => todo.push("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    };
    push(&mut todo, rel);
    let mut real = PathBuf::new();
    let mut links = 0;
    while let Some(part) = todo.pop() {
        if part == ".." {
            if !real.pop() {
                return None;
            }
            continue;
        }
        let next = real.join(&part);
        if looks.at(&tree.host.join(&next)) != Some(Look::Link) {
            real = next;
            continue;
        }
        links += 1;
        if links > MAX_LINKS {
            return None;
        }
        let target = std::fs::read_link(tree.host.join(&next)).ok()?;
        if target.is_absolute() {
            real = PathBuf::new();
            push(&mut todo, target.strip_prefix(&tree.inside).ok()?);
        } else {
            push(&mut todo, &target);
        }
    }
    Some(real)
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

/// What stands at a path, not following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Dir,
    Link,
    Other,
}

/// The paths [`cover`] looks at, each looked at once per run (one `lstat`): the built-in
/// list has `.claude` and `.github` on the way to several of its entries, and each entry
/// was looked at on its way and again for what it is, which made 40 of a start's system
/// calls (BENCHMARKS.md). Nothing is kept past the run's planning.
#[derive(Default)]
struct Looks(std::cell::RefCell<std::collections::HashMap<PathBuf, Option<Look>>>);

impl Looks {
    fn at(&self, path: &Path) -> Option<Look> {
        if let Some(look) = self.0.borrow().get(path) {
            return *look;
        }
        let look = std::fs::symlink_metadata(path).ok().map(|m| {
            let t = m.file_type();
            if t.is_symlink() {
                Look::Link
            } else if t.is_dir() {
                Look::Dir
            } else {
                Look::Other
            }
        });
        self.0.borrow_mut().insert(path.to_path_buf(), look);
        look
    }

    /// Whether `path` is a folder (`Some(true)`), another file but a link
    /// (`Some(false)`), or absent or a link (`None`).
    fn kind(&self, path: &Path) -> Option<bool> {
        match self.at(path)? {
            Look::Link => None,
            look => Some(look == Look::Dir),
        }
    }
}

/// The existing paths below `tree` that `rel` names (itself, or its glob's matches).
fn expand(
    tree: &Tree,
    rel: &str,
    key: &'static str,
    pattern: &str,
    // ([`MAX_MATCHES`], [`MAX_VISITED`]), given so a test can reach them with a small tree.
    (max_matches, max_visited): (usize, usize),
    looks: &Looks,
) -> Result<Vec<(PathBuf, bool)>, PolicyError> {
    if rel.is_empty() {
        return Err(PolicyError::Bad {
            key,
            message: format!("{pattern:?} names the whole tree"),
        });
    }
    if !has_glob(rel) {
        // Through the links on the way, as for the built-in list.
        let Some(real) = resolve_seen(tree, Path::new(rel), looks) else {
            return Ok(Vec::new());
        };
        if real.as_os_str().is_empty() {
            return Err(PolicyError::Bad {
                key,
                message: format!("{pattern:?} is a link to the whole tree"),
            });
        }
        return Ok(looks
            .kind(&tree.host.join(&real))
            .map(|dir| vec![(real, dir)])
            .unwrap_or_default());
    }
    // The part before the first wildcard is followed through the links on its way, as a
    // literal path is (`keys/*.pem` with `keys -> vault/keys` names `vault/keys/*.pem`).
    let given: Vec<&str> = rel.split('/').filter(|c| !c.is_empty()).collect();
    let fixed = given.iter().take_while(|c| !has_glob(c)).count();
    let Some(real) = resolve_seen(tree, Path::new(&given[..fixed].join("/")), looks) else {
        return Ok(Vec::new());
    };
    let mut rewritten: Vec<u8> = real.as_os_str().as_encoded_bytes().to_vec();
    for part in &given[fixed..] {
        if !rewritten.is_empty() {
            rewritten.push(b'/');
        }
        rewritten.extend_from_slice(part.as_bytes());
    }
    let pat: &[u8] = &rewritten;
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
            if visited > max_visited {
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
                if found.len() > max_matches {
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
    fn a_link_of_the_list_pointing_at_nothing_has_its_target_refused_when_made() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().join("w");
        let h = tmp.path().join("h");
        std::fs::create_dir_all(w.join("conf")).unwrap();
        std::fs::create_dir_all(&h).unwrap();
        std::os::unix::fs::symlink(".envrc.local", w.join(".envrc")).unwrap();
        std::os::unix::fs::symlink("conf/mcp.json", w.join(".mcp.json")).unwrap();
        // A folder entry through a link leading nowhere is made, as any absent folder.
        std::os::unix::fs::symlink("ide", w.join(".idea")).unwrap();
        let got = cover(
            &Filesystem::default(),
            &tree(&w, "/in/w"),
            &tree(&h, "/home/u"),
        )
        .unwrap();
        let made: Vec<(String, String)> = got
            .iter()
            .filter(|c| c.deny == Deny::Made)
            .map(|c| (c.inside.display().to_string(), c.rule.clone()))
            .collect();
        assert_eq!(
            made,
            vec![
                (
                    "/in/w/.envrc.local".into(),
                    "mandatory: .envrc through a link".into()
                ),
                (
                    "/in/w/conf/mcp.json".into(),
                    "mandatory: .mcp.json through a link".into()
                ),
            ]
        );
        assert!(got
            .iter()
            .any(|c| c.inside == Path::new("/in/w/ide") && c.deny == Deny::Create));
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
        // The files of the list that are not there are refused when made, each in its
        // place; `.envrc` is there (covered read-only), `.github/` allowed.
        let absent: Vec<(String, &str)> = got
            .iter()
            .filter(|c| c.deny == Deny::Absent)
            .map(|c| (c.inside.display().to_string(), c.rule.as_str()))
            .collect();
        let files = MANDATORY
            .iter()
            .filter(|e| !e.ends_with('/') && !e.starts_with(".git/") && **e != ".envrc");
        let mut expected: Vec<(String, String)> = files
            .map(|e| (format!("/in/w/{e}"), format!("mandatory: {e}")))
            .collect();
        expected.sort();
        assert_eq!(
            absent,
            expected
                .iter()
                .map(|(a, b)| (a.clone(), b.as_str()))
                .collect::<Vec<_>>()
        );
        let shown: Vec<(String, Deny, bool)> = got
            .iter()
            .filter(|c| c.deny != Deny::Absent)
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
        let envrc = got.iter().find(|c| c.rel == Path::new(".envrc")).unwrap();
        assert_eq!(
            (envrc.deny, envrc.rule.as_str()),
            (Deny::Write, "mandatory: .envrc")
        );
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

    #[test]
    fn links_on_the_way_lead_the_cover_to_where_a_write_lands_and_folders_above_are_pinned() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().join("w");
        let h = tmp.path().join("h");
        for d in [
            "dotfiles/claude/commands",
            "decoy",
            "conf/deep",
            ".git/x",
            "h",
        ] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        std::fs::create_dir_all(&h).unwrap();
        std::fs::write(w.join("conf/deep/prod.toml"), "x").unwrap();
        std::fs::write(w.join(".git/x/y"), "x").unwrap();
        symlink("dotfiles/claude", w.join(".claude")).unwrap();
        symlink("/in/w/decoy", w.join(".codex")).unwrap();
        symlink("../../outside", w.join(".idea")).unwrap();
        symlink(".husky2", w.join(".husky")).unwrap();
        symlink(".husky", w.join(".husky2")).unwrap();
        symlink("conf/../conf", w.join("cfg")).unwrap();
        let fs = Filesystem {
            deny_write: vec!["cfg/deep/prod.toml".into(), ".git/x/y".into()],
            allow_write: vec![".github/".into(), ".vscode/".into()],
            ..Filesystem::default()
        };
        let got = cover(&fs, &tree(&w, "/in/w"), &tree(&h, "/home/u")).unwrap();
        // A link of the list leading out of the tree or round in a circle covers nothing,
        // but is refused when made again (`rm .idea && mkdir .idea`).
        let blocked: Vec<(String, &str)> = got
            .iter()
            .filter(|c| {
                c.deny == Deny::Absent
                    && c.rel
                        .to_str()
                        .is_some_and(|r| r.starts_with(".idea") || r.starts_with(".husky"))
            })
            .map(|c| (c.rel.display().to_string(), c.rule.as_str()))
            .collect();
        assert_eq!(
            blocked,
            vec![
                (".husky".into(), "mandatory: .husky/"),
                (".idea".into(), "mandatory: .idea/")
            ]
        );
        let shown: Vec<(String, Deny, &str)> = got
            .iter()
            .filter(|c| c.deny != Deny::Absent)
            .map(|c| (c.rel.display().to_string(), c.deny, c.rule.as_str()))
            .collect();
        let through = "mandatory: .claude/commands/ through a link";
        assert_eq!(
            shown,
            vec![
                ("conf".into(), Deny::Pin, "deny_write: cfg/deep/prod.toml"),
                (
                    "decoy".into(),
                    Deny::Write,
                    "mandatory: .codex/ through a link"
                ),
                ("dotfiles".into(), Deny::Pin, through),
                (
                    "conf/deep".into(),
                    Deny::Pin,
                    "deny_write: cfg/deep/prod.toml"
                ),
                ("dotfiles/claude".into(), Deny::Pin, through),
                (".git/x/y".into(), Deny::Write, "deny_write: .git/x/y"),
                (
                    "conf/deep/prod.toml".into(),
                    Deny::Write,
                    "deny_write: cfg/deep/prod.toml"
                ),
                (
                    "dotfiles/claude/agents".into(),
                    Deny::Create,
                    "mandatory: .claude/agents/ through a link"
                ),
                ("dotfiles/claude/commands".into(), Deny::Write, through),
            ]
        );
        // A link to the whole tree cannot be covered without covering everything: refused.
        std::fs::remove_file(w.join(".codex")).unwrap();
        symlink(".", w.join(".codex")).unwrap();
        assert!(matches!(
            cover(&fs, &tree(&w, "/in/w"), &tree(&h, "/home/u")),
            Err(PolicyError::Bad { .. })
        ));
        symlink(".", w.join("top")).unwrap();
        let whole = Filesystem {
            deny_read: vec!["top".into()],
            allow_write: vec![".codex/".into()],
            ..Filesystem::default()
        };
        assert!(cover(&whole, &tree(&w, "/in/w"), &tree(&h, "/home/u")).is_err());
    }

    #[test]
    fn what_a_nested_repository_behind_a_gitlink_holds_is_read_only() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().join("w");
        for d in ["sub/.git/hooks", ".git/modules/mod", "mod", "gone", "esc"] {
            std::fs::create_dir_all(w.join(d)).unwrap();
        }
        std::fs::write(w.join("sub/.git/config"), "").unwrap();
        std::os::unix::fs::symlink("../../cfg", w.join("sub/.git/commondir")).unwrap();
        std::fs::write(w.join("cfg"), "").unwrap();
        std::fs::write(w.join("mod/.git"), "gitdir: ../.git/modules/mod\n").unwrap();
        std::fs::write(w.join(".git/modules/mod/config"), "").unwrap();
        std::fs::write(w.join("esc/.git"), "gitdir: /elsewhere/x\n").unwrap();
        let t = tree(&w, "/in/w");
        let links: Vec<String> = ["sub", "mod", "gone", "esc", "../x", "*"]
            .map(String::from)
            .to_vec();
        let read = |rel: &Path| std::fs::read_to_string(w.join(rel)).ok();
        let got = nested_cover(&Filesystem::default(), &t, &links, &read);
        let mut shown: Vec<(String, Deny)> = got
            .iter()
            .map(|c| (c.rel.display().to_string(), c.deny))
            .collect();
        shown.sort_by(|a, b| a.0.cmp(&b.0));
        let want: Vec<(String, Deny)> = [
            (".git/modules", Deny::Pin),
            (".git/modules/mod", Deny::Pin),
            (".git/modules/mod/commondir", Deny::Absent),
            (".git/modules/mod/config", Deny::Write),
            (".git/modules/mod/config.worktree", Deny::Absent),
            (".git/modules/mod/hooks", Deny::Absent),
            ("cfg", Deny::Write),
            ("esc/.git", Deny::Write),
            ("mod/.git", Deny::Write),
            ("sub/.git/commondir", Deny::Absent),
            ("sub/.git/config", Deny::Write),
            ("sub/.git/config.worktree", Deny::Absent),
            ("sub/.git/hooks", Deny::Write),
        ]
        .map(|(p, d)| (p.to_string(), d))
        .to_vec();
        assert_eq!(shown, want);
        let hooks = got
            .iter()
            .find(|c| c.rel == Path::new("sub/.git/hooks"))
            .unwrap();
        assert!(hooks.dir);
        assert_eq!(hooks.rule, "nested repository: sub/.git (behind a gitlink)");
        assert_eq!(hooks.inside, Path::new("/in/w/sub/.git/hooks"));
        // Settled with the rest: each path once, parents first.
        let settled = with_nested(Vec::new(), got.clone());
        assert_eq!(settled.len(), got.len());
        assert_eq!(settled[0].rel, Path::new("cfg"));
        // Where the profile lets the loop make repositories, nothing.
        let allowed = Filesystem {
            allow_write: vec!["**/.git".into()],
            ..Filesystem::default()
        };
        assert!(nested_cover(&allowed, &t, &links, &read).is_empty());
    }

    #[test]
    fn a_nested_repository_is_allowed_only_by_its_own_spelling() {
        let with = |allow: &[&str]| Filesystem {
            allow_write: allow.iter().map(|a| a.to_string()).collect(),
            ..Filesystem::default()
        };
        assert!(nested_git_allowed(&with(&["**/.git"])));
        assert!(nested_git_allowed(&with(&[".vscode/", "**/.git/"])));
        for other in [&[][..], &[".git"], &["**"], &["*/.git"], &[".git/config"]] {
            assert!(!nested_git_allowed(&with(other)), "{other:?}");
        }
        let why = Some("no notify");
        let refused = nested_git_unenforced(&with(&[]), true, why).unwrap();
        assert!(
            refused.contains("(no notify)")
                && refused.contains("\"**/.git\" in [filesystem] allow_write"),
            "{refused}"
        );
        assert_eq!(nested_git_unenforced(&with(&["**/.git"]), true, why), None);
        assert_eq!(nested_git_unenforced(&with(&[]), false, why), None);
        assert_eq!(nested_git_unenforced(&with(&[]), true, None), None);
        // Not an entry of the built-in list: nothing of it is lifted by this spelling.
        let w = tempfile::tempdir().unwrap();
        let h = tempfile::tempdir().unwrap();
        let all = cover(&with(&[]), &tree(w.path(), "/in/w"), &tree(h.path(), "/h")).unwrap();
        let nested = cover(
            &with(&["**/.git"]),
            &tree(w.path(), "/in/w"),
            &tree(h.path(), "/h"),
        )
        .unwrap();
        assert_eq!(all, nested);
    }

    #[test]
    fn trailing_stars_match_nothing_and_a_clean_profile_is_empty() {
        assert!(glob_matches(b"secrets/**", b"secrets"));
        assert!(glob_matches(b"secrets/**/**", b"secrets"));
        assert!(!glob_matches(b"secrets/**/x", b"secrets"));
        assert!(component_matches(b"abc*", b"abc"));
        assert!(component_matches(b"a**", b"a"));
        assert!(!component_matches(b"a*?", b"a"));
        assert!(Filesystem::default().is_empty());
        for one in [
            Filesystem {
                deny_read: vec!["x".into()],
                ..Filesystem::default()
            },
            Filesystem {
                deny_write: vec!["x".into()],
                ..Filesystem::default()
            },
            Filesystem {
                allow_write: vec![".vscode/".into()],
                ..Filesystem::default()
            },
            Filesystem {
                deny_create: vec!["*.pem".into()],
                ..Filesystem::default()
            },
        ] {
            assert!(!one.is_empty(), "{one:?}");
        }
        let why = Some("no supervisor");
        assert_eq!(unsupported(&Filesystem::default(), why), None);
        assert_eq!(
            unsupported(
                &Filesystem {
                    deny_read: vec!["x".into()],
                    ..Filesystem::default()
                },
                why
            ),
            None
        );
    }

    #[test]
    fn a_chain_of_links_is_followed_as_far_as_the_kernel_follows_it() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path();
        std::fs::create_dir(w.join("real")).unwrap();
        symlink("real", w.join("l0")).unwrap();
        for i in 1..=MAX_LINKS {
            symlink(format!("l{}", i - 1), w.join(format!("l{i}"))).unwrap();
        }
        let t = tree(w, "/in/w");
        let last = format!("l{}", MAX_LINKS - 1);
        assert_eq!(
            resolve(&t, Path::new(&last)),
            Some(PathBuf::from("real")),
            "{MAX_LINKS} links"
        );
        assert_eq!(resolve(&t, Path::new(&format!("l{MAX_LINKS}"))), None);
        assert_eq!(
            resolve(&t, Path::new("l0/../real/x")),
            Some(PathBuf::from("real/x"))
        );
        assert_eq!(resolve(&t, Path::new("real/../../x")), None);
    }

    #[test]
    fn a_glob_looks_only_as_deep_as_it_can_match_and_within_its_bounds() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path();
        // Three entries on the way to where `a/o*` can match, eleven below them where it
        // cannot.
        std::fs::create_dir_all(w.join("a/k.d/keep/keep")).unwrap();
        std::fs::write(w.join("a/one"), "").unwrap();
        for i in 0..10 {
            std::fs::write(w.join(format!("a/k.d/deep{i}")), "").unwrap();
        }
        let t = tree(w, "/in/w");
        let got = |pat: &str, bounds| expand(&t, pat, "deny_write", pat, bounds, &Looks::default());
        // `a`, `a/k.d` and `a/one` looked at, nothing below `a/k.d`: within a bound of three.
        let shallow = got("a/o*", (1, 3)).unwrap();
        assert_eq!(shallow, vec![(PathBuf::from("a/one"), false)]);
        assert!(matches!(
            got("a/o*", (1, 2)),
            Err(PolicyError::TooLarge { .. })
        ));
        assert!(matches!(
            got("a/o*", (0, 3)),
            Err(PolicyError::TooMany { .. })
        ));
        // A folder that matches is not looked into either.
        assert_eq!(got("a/*", (2, 3)).unwrap().len(), 2);
        // `**` goes below what it matched: both `keep`s.
        let deep = got("**/keep", (10, 100)).unwrap();
        assert_eq!(
            deep,
            vec![
                (PathBuf::from("a/k.d/keep"), true),
                (PathBuf::from("a/k.d/keep/keep"), true)
            ]
        );
    }

    #[test]
    fn the_fixed_part_of_a_glob_is_followed_through_links() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path();
        std::fs::create_dir_all(w.join("vault/keys")).unwrap();
        std::fs::write(w.join("vault/keys/a.pem"), "").unwrap();
        std::fs::write(w.join("vault/keys/b.txt"), "").unwrap();
        symlink("vault/keys", w.join("keys")).unwrap();
        symlink("/elsewhere", w.join("out")).unwrap();
        let t = tree(w, "/in/w");
        let got = |pat: &str| {
            expand(
                &t,
                pat,
                "deny_read",
                pat,
                (MAX_MATCHES, MAX_VISITED),
                &Looks::default(),
            )
        };
        let pem = vec![(PathBuf::from("vault/keys/a.pem"), false)];
        assert_eq!(got("keys/*.pem").unwrap(), pem);
        assert_eq!(got("./keys/*.pem").unwrap(), pem);
        assert_eq!(got("*/keys/*.pem").unwrap(), pem);
        assert_eq!(got("vault/keys/*.pem").unwrap(), pem);
        assert_eq!(got("out/*.pem").unwrap(), vec![]);
    }

    #[test]
    fn what_stands_in_the_way_of_the_list_is_refused_when_made_and_needs_the_supervisor() {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().join("w");
        let h = tmp.path().join("h");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::create_dir_all(&h).unwrap();
        // A file where the folder `.github` of `.github/workflows/` should be: nothing
        // can be laid below it, so it is refused when made again (a folder in its place).
        std::fs::write(w.join(".github"), "x").unwrap();
        let every = |fs: &Filesystem| cover(fs, &tree(&w, "/in/w"), &tree(&h, "/home/u")).unwrap();
        let got = every(&Filesystem::default());
        let github: Vec<(&Path, Deny, &str)> = got
            .iter()
            .filter(|c| c.rel.starts_with(".github"))
            .map(|c| (c.rel.as_path(), c.deny, c.rule.as_str()))
            .collect();
        assert_eq!(
            github,
            vec![(
                Path::new(".github"),
                Deny::Absent,
                "mandatory: .github/workflows/"
            )]
        );
        assert!(got
            .iter()
            .any(|c| c.rel == Path::new(".envrc") && c.deny == Deny::Absent));
        // Named in allow_write: not refused.
        let allowed = every(&Filesystem {
            allow_write: vec![".envrc".into(), ".github/".into()],
            ..Filesystem::default()
        });
        assert!(!allowed
            .iter()
            .any(|c| c.rel == Path::new(".envrc") || c.rel.starts_with(".github")));
        // What stands in the way is a link anywhere, or a file before the end; a file at
        // the end is the entry itself, and nothing absent blocks.
        std::fs::create_dir_all(w.join("d/e")).unwrap();
        std::fs::write(w.join("d/f"), "x").unwrap();
        std::os::unix::fs::symlink("nowhere", w.join("d/l")).unwrap();
        let t = tree(&w, "/in/w");
        let blocked = |rel: &str| first_blocked(&t, Path::new(rel), &Looks::default());
        assert_eq!(blocked("d/f"), None);
        assert_eq!(blocked("d/f/x"), Some(PathBuf::from("d/f")));
        assert_eq!(blocked("d/l"), Some(PathBuf::from("d/l")));
        assert_eq!(blocked("d/l/x"), Some(PathBuf::from("d/l")));
        assert_eq!(blocked("d/e/x"), None);
        assert_eq!(blocked("d/absent/f"), None);
        // Without the supervisor a run needing it is refused, naming what and how.
        let why = unenforced(&got, Some("no notify")).unwrap();
        assert!(
            why.contains(".envrc") && why.contains("(no notify)"),
            "{why}"
        );
        assert!(why.contains("allow_write") && why.contains("5.14"), "{why}");
        assert_eq!(unenforced(&got, None), None);
        let one = [got
            .iter()
            .find(|c| c.rel == Path::new(".envrc"))
            .unwrap()
            .clone()];
        assert!(unenforced(&one, Some("x"))
            .unwrap()
            .starts_with(".envrc of the built-in list is not"));
        let written: Vec<Covered> = got
            .iter()
            .filter(|c| c.deny != Deny::Absent)
            .cloned()
            .collect();
        assert_eq!(unenforced(&written, Some("no notify")), None);
        let made = Covered {
            deny: Deny::Made,
            ..one[0].clone()
        };
        assert!(unenforced(&[made], Some("x"))
            .unwrap()
            .contains("points at"));
    }
}
