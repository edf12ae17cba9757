//! `vault edit`: the user's editor on a plaintext copy that never reaches a disk.
//!
//! The copy lives in a fresh folder, mode 0700, on a tmpfs (`$XDG_RUNTIME_DIR`, else
//! `/dev/shm`), named after the entry so the editor picks its syntax. Editors write swap
//! and backup files next to the file they edit, so the whole folder is removed when the
//! edit ends, whichever way it ends (the guard's `Drop`). Where no tmpfs can be had, the
//! edit is refused rather than done on a disk.

use std::fs;
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use zeroize::Zeroizing;

use crate::error::{Context, Error, Result};
use crate::vault::VaultError;

/// A private folder on a tmpfs holding one plaintext file; removed on drop.
pub struct PrivateCopy {
    dir: PathBuf,
    file: PathBuf,
}

impl PrivateCopy {
    /// A new folder with `name` in it holding `contents`, mode 0600.
    pub fn new(name: &str, contents: &[u8]) -> Result<PrivateCopy> {
        let base = private_tmpfs()?;
        let dir = base.join(format!(
            "git-loop-edit-{}-{:016x}",
            std::process::id(),
            rand::random::<u64>()
        ));
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .context(|| format!("cannot create {}", dir.display()))?;
        let copy = PrivateCopy {
            file: dir.join(name),
            dir,
        };
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&copy.file)
            .context(|| format!("cannot create {}", copy.file.display()))?;
        f.write_all(contents)
            .context(|| format!("cannot write {}", copy.file.display()))?;
        Ok(copy)
    }

    pub fn path(&self) -> &Path {
        &self.file
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file's contents now, refused past `limit` bytes.
    pub fn read(&self, limit: usize) -> Result<Option<Zeroizing<Vec<u8>>>> {
        let f = match fs::File::open(&self.file) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(
                    Error::failure(format!("cannot read {}", self.file.display())).with_source(e),
                )
            }
        };
        let mut bytes = Zeroizing::new(Vec::with_capacity(limit + 1));
        f.take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .context(|| format!("cannot read {}", self.file.display()))?;
        Ok(Some(bytes))
    }
}

impl Drop for PrivateCopy {
    fn drop(&mut self) {
        // The pages of a tmpfs file are freed on removal; overwriting first keeps the
        // plaintext out of them even if something still holds the file open.
        if let Ok(meta) = fs::metadata(&self.file) {
            if let Ok(mut f) = fs::OpenOptions::new().write(true).open(&self.file) {
                let _ = f.write_all(&vec![0; meta.len() as usize]);
                let _ = f.sync_all();
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A folder on a tmpfs that only this user can write: `$XDG_RUNTIME_DIR`, else
/// `/dev/shm`.
fn private_tmpfs() -> Result<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("XDG_RUNTIME_DIR") {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            candidates.push(p);
        }
    }
    candidates.push(PathBuf::from("/dev/shm"));
    for dir in candidates {
        let is_tmpfs = nix::sys::statfs::statfs(&dir)
            .map(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
            .unwrap_or(false);
        if is_tmpfs {
            return Ok(dir);
        }
    }
    Err(VaultError::NoTmpfs.into())
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`, split on white space (a
/// command with arguments, such as `code --wait`, works; no shell is involved).
pub fn editor_command() -> Vec<String> {
    let from = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let text = from("VISUAL")
        .or_else(|| from("EDITOR"))
        .unwrap_or_else(|| "vi".to_string());
    text.split_whitespace().map(str::to_string).collect()
}

/// Runs the editor on `file` and waits. Ctrl-C goes to the editor (which handles it)
/// while this process ignores it, so an interrupt cannot skip the copy's removal; git
/// does the same around its editor.
pub fn run_editor(file: &Path) -> Result<()> {
    use nix::sys::signal::{signal, SigHandler, Signal};
    let argv = editor_command();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .arg(file)
        .spawn()
        .map_err(|source| VaultError::EditorStart {
            command: argv.join(" "),
            source,
        })?;
    // SAFETY: installing SIG_IGN (and restoring the previous disposition) runs no code
    // in a signal handler; the child was spawned before, so it keeps the default.
    let previous = unsafe { signal(Signal::SIGINT, SigHandler::SigIgn) }.ok();
    let status = child.wait();
    if let Some(previous) = previous {
        // SAFETY: as above; `previous` is the disposition that was installed before.
        let _ = unsafe { signal(Signal::SIGINT, previous) };
    }
    let status = status.context(|| format!("cannot wait for the editor `{}`", argv.join(" ")))?;
    if !status.success() {
        return Err(VaultError::EditorFailed {
            command: argv.join(" "),
            status: status.to_string(),
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_is_private_and_removed() {
        let copy = PrivateCopy::new("TOKEN", b"secret").unwrap();
        use std::os::unix::fs::PermissionsExt;
        let dir = copy.dir().to_path_buf();
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(copy.path()).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(&copy.read(100).unwrap().unwrap()[..], b"secret");
        fs::write(dir.join(".TOKEN.swp"), b"x").unwrap();
        drop(copy);
        assert!(!dir.exists());
    }
}
