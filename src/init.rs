//! Creating the workspace (DESIGN.md section 2): the context repositories with their trunk,
//! the user's personal repository, and the folders of the layout. Idempotent: what exists
//! is left alone; every repository is assembled under a temporary name and renamed into
//! place, so an interrupted `init` never leaves a half-made repository behind.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};
use crate::fsutil::{self, Lock};
use crate::git::cmd::Git;
use crate::ui::Ui;
use crate::workspace::{Workspace, TRUNK};

/// Where the context repositories come from.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    pub knowledge: Option<String>,
    pub notes: Option<String>,
}

/// What `init` did, for its report.
#[derive(Debug, Default)]
pub struct Report {
    pub created: Vec<PathBuf>,
    pub existing: Vec<PathBuf>,
}

/// Makes sure the workspace exists; creates it quietly on first use.
pub fn ensure(ws: &Workspace) -> Result<()> {
    if ws.is_initialized() {
        return Ok(());
    }
    init(ws, &Sources::default()).map(|_| ())
}

pub fn init(ws: &Workspace, sources: &Sources) -> Result<Report> {
    let mut report = Report::default();
    for dir in ws.layout_dirs() {
        create_dir(&dir)?;
    }
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    type Scaffold<'a> = (
        PathBuf,
        Option<&'a String>,
        &'a [(&'a str, &'a str)],
        &'a str,
    );
    let scaffolds: [Scaffold; 3] = [
        (
            ws.knowledge(),
            sources.knowledge.as_ref(),
            &[(
                "README.md",
                "# Knowledge\n\nThe team's curated knowledge. Agents read it; people publish to it.\n",
            )],
            "knowledge: start",
        ),
        (
            ws.notes(),
            sources.notes.as_ref(),
            &[
                ("inbox.md", "# Inbox\n"),
                ("focus/.gitkeep", ""),
                ("memory/MEMORY.md", "# Memory\n\nOne line per topic file in this folder.\n"),
            ],
            "notes: start",
        ),
        (
            ws.personal(),
            None,
            &[("memory/MEMORY.md", "# Memory\n")],
            "personal: start",
        ),
    ];
    for (path, url, files, message) in scaffolds {
        if path.join(".git").exists() {
            if url.is_some() {
                report.existing.push(path.clone());
            }
            continue;
        }
        if path.exists()
            && fs::read_dir(&path)
                .map(|mut d| d.next().is_some())
                .unwrap_or(false)
        {
            return Err(Error::failure(format!(
                "{} exists and is not a git repository",
                path.display()
            ))
            .hint("move it away, then run `git loop init` again"));
        }
        match url {
            Some(url) => clone_into(url, &path)?,
            None => scaffold_repo(&path, files, message)?,
        }
        report.created.push(path);
    }
    // The personal config layer's folder (`.loopat/config.toml`), read-only in sandboxes.
    create_dir(&ws.personal().join(".loopat"))?;
    Ok(report)
}

fn create_dir(dir: &Path) -> Result<()> {
    match fs::create_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied || e.raw_os_error() == Some(30) => {
            Err(Error::failure(format!(
                "cannot create {}: permission denied",
                dir.display()
            ))
            .hint("set GIT_LOOP_HOME to a folder you can write, or fix the folder's permissions"))
        }
        Err(e) => Err(Error::failure(format!("cannot create {}", dir.display())).with_source(e)),
    }
    .and_then(|()| {
        // A folder that exists but is not writable fails later and half-way; find out now.
        let probe = dir.join(format!(".write-test-{}", std::process::id()));
        match fs::write(&probe, b"") {
            Ok(()) => {
                let _ = fs::remove_file(&probe);
                Ok(())
            }
            Err(_) => Err(
                Error::failure(format!("{} is not writable", dir.display())).hint(
                    "set GIT_LOOP_HOME to a folder you can write, or fix the folder's permissions",
                ),
            ),
        }
    })
}

fn staging_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.init-{}", std::process::id()))
}

/// Clones a team remote; the clone's checked-out branch is its trunk.
fn clone_into(url: &str, path: &Path) -> Result<()> {
    let tmp = staging_path(path);
    let _ = fsutil::remove_tree(&tmp);
    let result = Git::bare()
        .args(["clone", "--quiet", "--", url])
        .arg(&tmp)
        .run()
        .map_err(|e| {
            Error::failure(format!("cannot clone {url}"))
                .with_source(e)
                .hint("check the URL and your access to it, then run `git loop init` again")
        })
        .and_then(|()| {
            fs::rename(&tmp, path)
                .context(|| format!("cannot move the clone to {}", path.display()))
        });
    if result.is_err() {
        let _ = fsutil::remove_tree(&tmp);
    }
    result
}

/// A new repository on trunk with one commit holding `files`.
fn scaffold_repo(path: &Path, files: &[(&str, &str)], message: &str) -> Result<()> {
    let tmp = staging_path(path);
    let _ = fsutil::remove_tree(&tmp);
    let result = (|| -> Result<()> {
        Git::bare()
            .args(["init", "--quiet", "--template=", "--initial-branch", TRUNK])
            .arg(&tmp)
            .run()?;
        for (rel, text) in files {
            let file = tmp.join(rel);
            if let Some(dir) = file.parent() {
                fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
            }
            fs::write(&file, text).context(|| format!("cannot write {}", file.display()))?;
        }
        Git::in_dir(&tmp).args(["add", "--all"]).run()?;
        scaffold_identity(Git::in_dir(&tmp))
            .args(["commit", "--quiet", "--message", message])
            .run()?;
        fs::rename(&tmp, path).context(|| format!("cannot move {} into place", path.display()))
    })();
    if result.is_err() {
        let _ = fsutil::remove_tree(&tmp);
    }
    result
}

/// Commits that `git-loop` makes of its own scaffolding carry its name, not the user's.
pub fn scaffold_identity(git: Git) -> Git {
    git.env("GIT_AUTHOR_NAME", "git loop")
        .env("GIT_AUTHOR_EMAIL", "git-loop@localhost")
        .env("GIT_COMMITTER_NAME", "git loop")
        .env("GIT_COMMITTER_EMAIL", "git-loop@localhost")
}

/// One line per created or existing repository, for `init`'s report.
pub fn print_report(ui: &mut Ui, ws: &Workspace, report: &Report) -> Result<()> {
    for p in &report.created {
        ui.status(format!("created {}", p.display()))?;
    }
    for p in &report.existing {
        ui.warn(format!(
            "{} exists already; left as it is (the URL given was not cloned)",
            p.display()
        ))?;
    }
    writeln!(ui.out(), "{}", ws.root().display())?;
    Ok(())
}
