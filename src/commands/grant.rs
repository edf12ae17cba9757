use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::fsutil::Lock;
use crate::loops::{self, Grant};
use crate::ui::Ui;

/// Grant a loop's sandbox one more host folder or file, at the same path inside.
///
/// Recorded in the loop's loop.toml (or, with --once, for its next run only), shown by
/// `git loop show ID --mounts`, removed with --revoke. Review mode keeps it read-only.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["ro", "rw", "revoke"])))]
pub struct GrantArgs {
    /// The loop: its id, or a unique prefix of its id or title slug.
    pub id: String,
    /// Grant PATH read-only.
    #[arg(long, value_name = "PATH")]
    pub ro: Option<PathBuf>,
    /// Grant PATH read-write.
    #[arg(long, value_name = "PATH")]
    pub rw: Option<PathBuf>,
    /// For the next run only.
    #[arg(long)]
    pub once: bool,
    /// Remove the grant of PATH.
    #[arg(long, value_name = "PATH")]
    pub revoke: Option<PathBuf>,
}

pub fn run(ui: &mut Ui, args: GrantArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let id = loops::resolve(&ws, &args.id)?;
    let _lock = Lock::acquire(&ws.workspace_lock())?;
    let mut rec = loops::load(&ws, &id)?;
    if let Some(path) = args.revoke {
        let before = rec.grants.len();
        rec.grants.retain(|g| g.path != path);
        if rec.grants.len() == before {
            return Err(
                Error::usage(format!("loop {id} has no grant of {}", path.display()))
                    .hint(format!("`git loop show {id} --mounts` lists its grants")),
            );
        }
        rec.write(&ws.loop_record(&id))?;
        ui.status(format!("revoked {}", path.display()))?;
        return Ok(0);
    }
    let (path, mode) = match (args.ro, args.rw) {
        (Some(p), None) => (p, "ro"),
        (None, Some(p)) => (p, "rw"),
        _ => return Err(Error::usage("give one of --ro PATH or --rw PATH")),
    };
    let path = std::fs::canonicalize(&path).map_err(|e| {
        Error::usage(format!("{} does not exist", path.display()))
            .with_source(e)
            .hint("grant an existing folder or file")
    })?;
    // The workspace itself is laid out by the sandbox's own rules; granting a part of it
    // (another loop, the vaults, an origin read-write) would undo them.
    let root = std::fs::canonicalize(ws.root()).unwrap_or_else(|_| ws.root().to_path_buf());
    if path.starts_with(&root) || root.starts_with(&path) {
        return Err(Error::usage(format!("{} is (or holds) the workspace", path.display()))
            .hint("the loop already sees what it may of the workspace; see `git loop show ID --mounts`"));
    }
    let config_home = crate::workspace::HostPaths::from_env()?;
    if let Some(dir) = config_home.identity.parent() {
        if path.starts_with(dir) || dir.starts_with(&path) {
            return Err(
                Error::usage(format!("{} holds the age identity", path.display()))
                    .hint("the identity never enters a sandbox"),
            );
        }
    }
    let meta = std::fs::symlink_metadata(&path)
        .map_err(|e| Error::usage(format!("{} cannot be read", path.display())).with_source(e))?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(
            Error::usage(format!("{} is neither a folder nor a file", path.display()))
                .hint("grant a folder or a regular file"),
        );
    }
    rec.grants.retain(|g| g.path != path);
    rec.grants.push(Grant {
        path: path.clone(),
        mode: mode.into(),
        once: args.once,
        source: Some(crate::loops::GrantSource::of(&meta)),
    });
    rec.write(&ws.loop_record(&id))?;
    let when = if args.once { " for the next run" } else { "" };
    ui.status(format!("granted {} ({mode}){when}", path.display()))?;
    Ok(0)
}
