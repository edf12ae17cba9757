//! Ignored files by rule (DESIGN 10): `git loop new` copies the files of the user's working
//! tree that the repository's `.worktreeinclude` names (gitignore syntax, the file Claude
//! Code reads) and that git ignores, into the new loop's working tree.
//!
//! The user's own working tree is trusted (it is theirs, not a sandbox's), but what is
//! copied is bounded all the same: only regular files (a link is never followed nor
//! copied, and is named in a warning), each at most `include.max_file_size` and all
//! together at most `include.max_total_size`, every path relative and inside the tree. A
//! file the secret guard flags is refused with the way to keep that value in a vault bound
//! to its host (the sandbox then holds a placeholder only), unless the profile asks for
//! secrets *and* the operator config allows it (a profile arrives from the team's remote,
//! and a teammate's push must never send a person's secrets into a sandbox: DESIGN 4.0).
//!
//! [`plan`] decides everything and reads every file before `new` writes anything, so a
//! refusal leaves nothing made; [`copy`] then writes into the loop's staging folder, which
//! a failure removes whole.
//!
//! Which files git ignores comes from git itself (`ls-files --others --ignored
//! --exclude-standard --directory`, in the user's repository, which host-side git may read:
//! DESIGN 4.0 forbids it only in a loop's); which of them the rules name, from the
//! `ignore` crate's gitignore matcher, not a matcher of our own.

use std::path::{Component, Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::git::cmd::{Git, GitError};
use crate::guard::{self, Allowlist};

/// The rules' file, at the top of the repository.
pub const FILE: &str = ".worktreeinclude";
/// The largest `.worktreeinclude` read.
const MAX_RULES: u64 = 1 << 20;
/// The most entries looked at below folders that git ignores whole (a `node_modules/`).
const MAX_WALK: usize = 200_000;

/// Why the files `.worktreeinclude` names are not copied (`new` makes nothing then).
#[derive(Debug, thiserror::Error)]
pub enum IncludeError {
    #[error("cannot list the ignored files of the repository")]
    List(#[source] GitError),
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Rules {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{FILE}: {rel} is not a path inside the repository")]
    Outside { rel: String },
    #[error("the ignored folders of the repository hold more than {MAX_WALK} entries; {FILE} is not applied")]
    TooMany { dir: String },
    #[error("not copying {rel} into the loop: {} is more than include.max_file_size ({})", crate::fsutil::human_size(*.size), crate::fsutil::human_size(*.max))]
    TooBig { rel: String, size: u64, max: u64 },
    #[error("the files {FILE} names come to more than {} (include.max_total_size)", crate::fsutil::human_size(*.max))]
    TooMuch { max: u64, rules: PathBuf },
    #[error("not copying {first} into the loop: the secret guard flags {findings}")]
    Secret {
        first: String,
        findings: String,
        /// The profile asked for secrets, and the operator does not allow them.
        profile_asked: bool,
    },
    #[error("cannot copy {rel} into the loop: {} is not a folder in its checkout", .at.display())]
    NotAFolder { rel: String, at: PathBuf },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

type Result<T> = std::result::Result<T, IncludeError>;

/// What `new` may copy.
#[derive(Debug, Clone)]
pub struct Rules {
    pub max_file: u64,
    pub max_total: u64,
    /// The profile asks that flagged files be copied.
    pub profile_secrets: bool,
    /// The operator config lets it (`include.allow_secrets`).
    pub operator_secrets: bool,
    /// The operator's `guard.allow`.
    pub allow: Vec<String>,
}

impl Rules {
    pub fn from_settings(settings: &crate::config::Settings) -> Rules {
        Rules {
            max_file: settings.include.max_file_size.0,
            max_total: settings.include.max_total_size.0,
            profile_secrets: false,
            operator_secrets: settings.include.allow_secrets,
            allow: settings.guard.allow.clone(),
        }
    }

    fn secrets(&self) -> bool {
        self.profile_secrets && self.operator_secrets
    }
}

/// One file to copy, read whole.
#[derive(Debug)]
pub struct Planned {
    /// Relative to the top of the tree, `/`-separated.
    pub rel: String,
    pub mode: u32,
    pub content: Vec<u8>,
}

/// What [`plan`] found.
#[derive(Debug, Default)]
pub struct Plan {
    pub files: Vec<Planned>,
    /// Matched entries that are not copied (links, FIFOs), each with why.
    pub skipped: Vec<String>,
}

/// The files of the working tree at `top` to copy, read; a refusal is an error and
/// nothing is written.
pub fn plan(top: &Path, rules: &Rules) -> Result<Plan> {
    let Some(matcher) = read_rules(top)? else {
        return Ok(Plan::default());
    };
    let out = Git::in_dir(top)
        .args([
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ])
        .output()
        .map_err(IncludeError::List)?;
    let mut plan = Plan::default();
    let mut candidates = Vec::new();
    let mut walked = 0usize;
    for entry in out.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let Ok(entry) = std::str::from_utf8(entry) else {
            continue;
        };
        if let Some(dir) = entry.strip_suffix('/') {
            walk(
                top,
                dir,
                &matcher,
                &mut candidates,
                &mut plan.skipped,
                &mut walked,
            )?;
        } else if matcher
            .matched_path_or_any_parents(entry, false)
            .is_ignore()
        {
            candidates.push(entry.to_string());
        }
    }
    candidates.sort();
    let allow = Allowlist::with(rules.allow.iter().cloned());
    let mut total = 0u64;
    let mut flagged = Vec::new();
    for rel in candidates {
        if !is_inside(&rel) {
            return Err(IncludeError::Outside {
                rel: crate::terminal::visible(&rel).into_owned(),
            });
        }
        let Some(file) = read_file(top, &rel, rules.max_file, &mut plan.skipped)? else {
            continue;
        };
        total += file.content.len() as u64;
        if total > rules.max_total {
            return Err(IncludeError::TooMuch {
                max: rules.max_total,
                rules: top.join(FILE),
            });
        }
        let findings = guard::check_allowing(&rel, 0o100644, &file.content, &allow);
        if !findings.is_empty() && !rules.secrets() {
            flagged.push(findings);
        }
        plan.files.push(file);
    }
    if let Some(first) = flagged.first() {
        let all: Vec<String> = flagged.iter().flatten().map(|f| f.to_string()).collect();
        return Err(IncludeError::Secret {
            first: crate::terminal::visible(&first[0].path).into_owned(),
            findings: crate::terminal::visible(&all.join("; ")).into_owned(),
            profile_asked: rules.profile_secrets,
        });
    }
    Ok(plan)
}

/// The matcher of the rules at `top`, `None` when there is no rules file.
fn read_rules(top: &Path) -> Result<Option<Gitignore>> {
    let path = top.join(FILE);
    let text = match read_regular(&path, MAX_RULES) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(IncludeError::Read { path, source }),
    };
    let mut builder = GitignoreBuilder::new(top);
    for (n, line) in String::from_utf8_lossy(&text).lines().enumerate() {
        builder
            .add_line(Some(path.clone()), line)
            .map_err(|e| IncludeError::Rules {
                path: path.clone(),
                line: n + 1,
                message: e.to_string(),
            })?;
    }
    let matcher = builder.build().map_err(|e| IncludeError::Rules {
        path: path.clone(),
        line: 0,
        message: e.to_string(),
    })?;
    Ok(Some(matcher))
}

/// Whether `rel` is relative and stays inside the tree.
fn is_inside(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// The files below ignored folder `dir` that the rules name (folders are entered, never
/// links).
fn walk(
    top: &Path,
    dir: &str,
    matcher: &Gitignore,
    found: &mut Vec<String>,
    skipped: &mut Vec<String>,
    walked: &mut usize,
) -> Result<()> {
    let mut stack = vec![dir.to_string()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(top.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            *walked += 1;
            if *walked > MAX_WALK {
                return Err(IncludeError::TooMany {
                    dir: crate::terminal::visible(dir).into_owned(),
                });
            }
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            let child = format!("{rel}/{name}");
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let is_dir = kind.is_dir();
            let matched = matcher
                .matched_path_or_any_parents(&child, is_dir)
                .is_ignore();
            if is_dir {
                stack.push(child);
            } else if matched {
                if kind.is_file() {
                    found.push(child);
                } else {
                    skipped.push(format!(
                        "{}: not a regular file (a link is never followed)",
                        crate::terminal::visible(&child)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reads `rel` of `top` when it is a regular file no larger than `max`; a link or other
/// odd file is skipped with why. Opened without following a link at its last component,
/// and its folders checked not to be links.
fn read_file(
    top: &Path,
    rel: &str,
    max: u64,
    skipped: &mut Vec<String>,
) -> Result<Option<Planned>> {
    use std::os::unix::fs::MetadataExt;
    let shown = crate::terminal::visible(rel).into_owned();
    let mut at = top.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len() - 1] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            _ => {
                skipped.push(format!(
                    "{shown}: a folder on its way is a link, never followed"
                ));
                return Ok(None);
            }
        }
    }
    let path = top.join(rel);
    let meta = std::fs::symlink_metadata(&path).map_err(|source| IncludeError::Read {
        path: path.clone(),
        source,
    })?;
    if !meta.is_file() {
        skipped.push(format!(
            "{shown}: not a regular file (a link is never followed)"
        ));
        return Ok(None);
    }
    if meta.len() > max {
        return Err(IncludeError::TooBig {
            rel: shown,
            size: meta.len(),
            max,
        });
    }
    let content = read_regular(&path, max).map_err(|source| IncludeError::Read {
        path: path.clone(),
        source,
    })?;
    Ok(Some(Planned {
        rel: rel.to_string(),
        mode: meta.mode() & 0o777,
        content,
    }))
}

/// A regular file's bytes, at most `max`; never through a link, never blocking.
fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!(
            "larger than {}",
            crate::fsutil::human_size(max)
        )));
    }
    let mut out = Vec::new();
    file.take(max).read_to_end(&mut out)?;
    Ok(out)
}

/// Writes the planned files into the working tree at `dest` (a loop's fresh checkout):
/// folders made one at a time, never through a link; each file new (never over one the
/// checkout has).
pub fn copy(dest: &Path, plan: &Plan) -> Result<Vec<String>> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut copied = Vec::new();
    for file in &plan.files {
        let parts: Vec<&str> = file.rel.split('/').collect();
        let mut at: PathBuf = dest.to_path_buf();
        for part in &parts[..parts.len() - 1] {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(IncludeError::NotAFolder {
                        rel: crate::terminal::visible(&file.rel).into_owned(),
                        at,
                    })
                }
                Err(_) => std::fs::create_dir(&at).map_err(|source| IncludeError::Write {
                    path: at.clone(),
                    source,
                })?,
            }
        }
        let path = dest.join(&file.rel);
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(file.mode | 0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(&file.content).map(|()| f))
            .map_err(|source| IncludeError::Write {
                path: path.clone(),
                source,
            })?;
        let _ = out.flush();
        copied.push(file.rel.clone());
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_paths_inside_count() {
        assert!(is_inside(".env"));
        assert!(is_inside("config/local.json"));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./x"] {
            assert!(!is_inside(bad), "{bad}");
        }
    }
}
