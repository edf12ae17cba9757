use std::path::PathBuf;

use clap::Subcommand;

use crate::error::{Context, Error, Result};
use crate::hooks::{self, Installed};
use crate::ui::Ui;

/// Install or remove git loop's git hooks (the pre-commit secret guard).
///
/// In the knowledge, notes and personal repositories, and with --repo in a code
/// repository too. The hook lines sit between marker lines, so hooks you already have are
/// kept, and `core.hooksPath` is respected; uninstall removes exactly the marked block.
#[derive(Debug, clap::Args)]
pub struct HooksArgs {
    #[command(subcommand)]
    pub action: HooksAction,
}

#[derive(Debug, Subcommand)]
pub enum HooksAction {
    /// Add the hooks (or bring them up to date).
    Install {
        /// Also this code repository.
        #[arg(long, value_name = "PATH")]
        repo: Option<PathBuf>,
    },
    /// Remove git loop's lines from the hooks.
    Uninstall {
        /// Also this code repository.
        #[arg(long, value_name = "PATH")]
        repo: Option<PathBuf>,
    },
}

/// The hooks `hooks/` ships.
const SHIPPED: &[hooks::Hook] = &[hooks::PRE_COMMIT];

pub fn run(ui: &mut Ui, args: HooksArgs) -> Result<u8> {
    let ws = super::workspace()?;
    let (install, extra) = match args.action {
        HooksAction::Install { repo } => (true, repo),
        HooksAction::Uninstall { repo } => (false, repo),
    };
    let mut repos = vec![ws.knowledge(), ws.notes(), ws.personal()];
    if let Some(r) = extra {
        if !r.join(".git").exists() {
            return Err(Error::usage(format!(
                "{} is not a git repository's top folder",
                r.display()
            ))
            .hint("name the folder that holds .git"));
        }
        repos.push(r);
    }
    for repo in repos {
        for hook in SHIPPED {
            if install {
                let done = hooks::install(&repo, *hook)?;
                let what = match &done {
                    Installed::Created(_) => "installed",
                    Installed::Updated(_) => "updated",
                    Installed::Unchanged(_) => "up to date",
                };
                ui.status(format!("{what}: {}", done.path().display()))?;
            } else {
                let path = hooks::hooks_dir(&repo)?.join(hook.name);
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                match hooks::without_block(&text) {
                    Ok(Some(rest)) if rest == text => {}
                    Ok(Some(rest)) => {
                        crate::fsutil::write_atomic(&path, rest.as_bytes())?;
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                            .context(|| format!("cannot make {} executable", path.display()))?;
                        ui.status(format!("removed git loop's lines from {}", path.display()))?;
                    }
                    Ok(None) => {
                        std::fs::remove_file(&path)
                            .context(|| format!("cannot remove {}", path.display()))?;
                        ui.status(format!("removed {}", path.display()))?;
                    }
                    Err(e) => {
                        return Err(Error::failure(format!("cannot edit {}", path.display()))
                            .with_source(e)
                            .hint("remove the lines between the git-loop markers by hand"))
                    }
                }
            }
        }
    }
    Ok(0)
}
