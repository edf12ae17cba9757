//! Confined access to the trees a sandbox can write (DESIGN 4.0): every loop's folder, the
//! personal working tree, and the notes and knowledge repositories.
//!
//! What is in them is data. A [`Tree`] is one such tree, opened by its root, whose path is
//! the workspace's own (DESIGN section 2) and trusted; everything below the root is not.
//! Through a `Tree`:
//!
//! - no symlink is followed at any component of a path below the root (`openat2` with
//!   `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or a component-by-component `O_NOFOLLOW` walk
//!   where the kernel lacks `openat2`), and `..` never leaves the root;
//! - files are opened non-blocking and must be regular files (a FIFO, socket or device
//!   planted where a file is expected is refused, never waited on);
//! - what is read is bounded: a file larger than the caller's limit is refused before it
//!   is read (a sparse 10 GB file costs nothing);
//! - a folder or file handed on (to bwrap, as a bind source) is handed as the descriptor
//!   opened here, so what was checked is what is bound.
//!
//! Written by hand on `nix`'s system calls: the rule is stricter than what capability
//! libraries offer (they follow symlinks that stay beneath the root; here none is followed).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, ResolveFlag};
use nix::sys::stat::{FileStat, Mode, SFlag};

/// What went wrong reaching a path below a tree's root.
#[derive(Debug, thiserror::Error)]
pub enum ConfinedError {
    #[error("{0} is a symlink, and links are not followed in folders a sandbox can write")]
    Symlink(PathBuf),
    #[error("{path} is {kind}, not a regular file")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path} is not a folder")]
    NotDir { path: PathBuf },
    #[error("{path} holds {size} bytes, more than the {limit} read from such a file")]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("{path} holds more than {limit} entries, more than are read from such a folder")]
    TooMany { path: PathBuf, limit: usize },
    #[error("{0} is not a plain relative path")]
    BadPath(PathBuf),
    #[error("cannot {what} {path}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl ConfinedError {
    fn io(what: &'static str, path: PathBuf, errno: Errno) -> Self {
        ConfinedError::Io {
            what,
            path,
            source: io::Error::from(errno),
        }
    }
}

/// What a path below the root is, seen without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

fn kind_of(stat: &FileStat) -> Kind {
    match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    }
}

fn kind_name(stat: &FileStat) -> &'static str {
    match SFlag::from_bits_truncate(stat.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => "a folder",
        SFlag::S_IFIFO => "a FIFO",
        SFlag::S_IFSOCK => "a socket",
        SFlag::S_IFCHR | SFlag::S_IFBLK => "a device",
        SFlag::S_IFLNK => "a symlink",
        _ => "something else",
    }
}

/// An open folder of a sandbox-writable tree; paths are resolved below it only.
#[derive(Debug)]
pub struct Tree {
    dir: OwnedFd,
    path: PathBuf,
}

impl Tree {
    /// Opens the tree whose root is `root` (a path of the workspace's layout, trusted up to
    /// its last component, which must be a real folder). `Ok(None)` when it does not exist.
    pub fn open(root: &Path) -> Result<Option<Tree>, ConfinedError> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        match nix::fcntl::open(root, flags, Mode::empty()) {
            Ok(dir) => Ok(Some(Tree {
                dir,
                path: root.to_path_buf(),
            })),
            Err(Errno::ENOENT) => Ok(None),
            Err(Errno::ELOOP) => Err(ConfinedError::Symlink(root.to_path_buf())),
            Err(Errno::ENOTDIR) if root.is_symlink() => {
                Err(ConfinedError::Symlink(root.to_path_buf()))
            }
            Err(Errno::ENOTDIR) => Err(ConfinedError::NotDir {
                path: root.to_path_buf(),
            }),
            Err(e) => Err(ConfinedError::io("open", root.to_path_buf(), e)),
        }
    }

    /// The root's path, for messages and for the views that show it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open root folder: a bind source handed to bwrap (`--bind-fd`).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    fn show(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.path.clone()
        } else {
            self.path.join(rel)
        }
    }

    /// Opens `rel` below the root with `flags`, following no symlink at any component.
    fn open_at(&self, rel: &Path, flags: OFlag) -> Result<Option<OwnedFd>, ConfinedError> {
        let rel = plain(rel)?;
        let flags = flags | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        if rel.as_os_str().is_empty() {
            // The root itself, reopened with these flags.
            return nix::fcntl::openat(self.dir.as_fd(), ".", flags, Mode::empty())
                .map(Some)
                .map_err(|e| ConfinedError::io("open", self.show(rel), e));
        }
        let how = nix::fcntl::OpenHow::new().flags(flags).resolve(
            ResolveFlag::RESOLVE_BENEATH
                | ResolveFlag::RESOLVE_NO_SYMLINKS
                | ResolveFlag::RESOLVE_NO_MAGICLINKS,
        );
        let mut attempts = 0;
        let result = loop {
            match nix::fcntl::openat2(self.dir.as_fd(), rel, how) {
                // A rename elsewhere in the tree during the walk: the kernel asks for a retry.
                Err(Errno::EAGAIN) if attempts < 16 => attempts += 1,
                Err(Errno::ENOSYS) => break self.walk(rel, flags),
                other => break other,
            }
        };
        match result {
            // O_PATH with O_NOFOLLOW opens a trailing link itself rather than refusing it.
            Ok(fd)
                if flags.contains(OFlag::O_PATH)
                    && nix::sys::stat::fstat(&fd).is_ok_and(|s| kind_of(&s) == Kind::Symlink) =>
            {
                Err(ConfinedError::Symlink(self.show(rel)))
            }
            Ok(fd) => Ok(Some(fd)),
            Err(Errno::ENOENT) => Ok(None),
            // Either a component is not a folder, or the last one is a link that
            // O_DIRECTORY met before the link rule did.
            Err(Errno::ENOTDIR) => match self.kind(rel)? {
                Some(Kind::Symlink) => Err(ConfinedError::Symlink(self.show(rel))),
                Some(_) if flags.contains(OFlag::O_DIRECTORY) => Err(ConfinedError::NotDir {
                    path: self.show(rel),
                }),
                _ => Ok(None),
            },
            Err(Errno::ELOOP) => Err(ConfinedError::Symlink(self.show(rel))),
            Err(Errno::EXDEV) => Err(ConfinedError::BadPath(self.show(rel))),
            Err(e) => Err(ConfinedError::io("open", self.show(rel), e)),
        }
    }

    /// The same resolution as `openat2` gives, one component at a time, for kernels
    /// without it (before 5.6).
    fn walk(&self, rel: &Path, flags: OFlag) -> nix::Result<OwnedFd> {
        let parts: Vec<&OsStr> = rel.iter().collect();
        let mut dir: Option<OwnedFd> = None;
        for (i, part) in parts.iter().enumerate() {
            let at = dir.as_ref().map_or(self.dir.as_fd(), |d| d.as_fd());
            let last = i + 1 == parts.len();
            let step = if last {
                flags
            } else {
                OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
            };
            let fd = nix::fcntl::openat(at, *part, step, Mode::empty())?;
            if last {
                return Ok(fd);
            }
            dir = Some(fd);
        }
        Err(Errno::ENOENT)
    }

    /// What `rel` is, without following it; `Ok(None)` when it does not exist.
    pub fn kind(&self, rel: impl AsRef<Path>) -> Result<Option<Kind>, ConfinedError> {
        let rel = rel.as_ref();
        let (parent, name) = match split(rel)? {
            Some(parts) => parts,
            None => return Ok(Some(Kind::Dir)),
        };
        let dir = match self.open_at(parent, OFlag::O_PATH | OFlag::O_DIRECTORY) {
            Ok(Some(dir)) => dir,
            Ok(None) | Err(ConfinedError::NotDir { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        match nix::sys::stat::fstatat(&dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(kind_of(&stat))),
            Err(Errno::ENOENT) | Err(Errno::ENOTDIR) => Ok(None),
            Err(e) => Err(ConfinedError::io("look at", self.show(rel), e)),
        }
    }

    /// Opens the regular file `rel` for reading: never through a link, never blocking (a
    /// FIFO is refused, not waited on). `Ok(None)` when nothing is there.
    pub fn open_file(&self, rel: impl AsRef<Path>) -> Result<Option<File>, ConfinedError> {
        let rel = rel.as_ref();
        let Some(fd) = self.open_at(rel, OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY)?
        else {
            return Ok(None);
        };
        let stat = nix::sys::stat::fstat(&fd)
            .map_err(|e| ConfinedError::io("look at", self.show(rel), e))?;
        if kind_of(&stat) != Kind::File {
            return Err(ConfinedError::NotRegular {
                path: self.show(rel),
                kind: kind_name(&stat),
            });
        }
        // Reads of a regular file never block; the flag is dropped so callers see an
        // ordinary file.
        let _ = nix::fcntl::fcntl(&fd, nix::fcntl::FcntlArg::F_SETFL(OFlag::empty()));
        Ok(Some(File::from(fd)))
    }

    /// Reads the regular file `rel` whole, refusing one larger than `limit` bytes.
    pub fn read(
        &self,
        rel: impl AsRef<Path>,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, ConfinedError> {
        let rel = rel.as_ref();
        let Some(file) = self.open_file(rel)? else {
            return Ok(None);
        };
        read_bounded(file, &self.show(rel), limit).map(Some)
    }

    /// [`Tree::read`] as text; a file that is not UTF-8 is refused.
    pub fn read_text(
        &self,
        rel: impl AsRef<Path>,
        limit: u64,
    ) -> Result<Option<String>, ConfinedError> {
        let rel = rel.as_ref();
        match self.read(rel, limit)? {
            None => Ok(None),
            Some(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| ConfinedError::Io {
                    what: "read as text",
                    path: self.show(rel),
                    source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"),
                }),
        }
    }

    /// The folder `rel` as a tree of its own. `Ok(None)` when nothing is there.
    pub fn subtree(&self, rel: impl AsRef<Path>) -> Result<Option<Tree>, ConfinedError> {
        let rel = rel.as_ref();
        match self.open_at(rel, OFlag::O_RDONLY | OFlag::O_DIRECTORY) {
            Ok(Some(dir)) => Ok(Some(Tree {
                dir,
                path: self.show(rel),
            })),
            Ok(None) => Ok(None),
            // Something that is not a folder stands there.
            Err(ConfinedError::Io { source, .. })
                if source.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                Err(ConfinedError::NotDir {
                    path: self.show(rel),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// A path-only descriptor of `rel` (a file or a folder, never a link), for bwrap's
    /// `--bind-fd`. `Ok(None)` when nothing is there.
    pub fn path_fd(&self, rel: impl AsRef<Path>) -> Result<Option<OwnedFd>, ConfinedError> {
        self.open_at(rel.as_ref(), OFlag::O_PATH)
    }

    /// Makes `rel` a real folder if nothing is there (its parent must exist); a symlink or
    /// anything else standing there is an error, never created through.
    pub fn ensure_dir(&self, rel: impl AsRef<Path>) -> Result<(), ConfinedError> {
        let rel = rel.as_ref();
        let Some((parent, name)) = split(rel)? else {
            return Ok(());
        };
        let Some(dir) = self.open_at(parent, OFlag::O_PATH | OFlag::O_DIRECTORY)? else {
            return Err(ConfinedError::io("create", self.show(rel), Errno::ENOENT));
        };
        match nix::sys::stat::mkdirat(&dir, name, Mode::from_bits_truncate(0o755)) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(ConfinedError::io("create", self.show(rel), e)),
        }
        match self.kind(rel)? {
            Some(Kind::Dir) => Ok(()),
            Some(Kind::Symlink) => Err(ConfinedError::Symlink(self.show(rel))),
            _ => Err(ConfinedError::NotDir {
                path: self.show(rel),
            }),
        }
    }

    /// Replaces `rel` with `contents` atomically (a temp file made exclusively in the same
    /// folder, fsync, rename over whatever stands at `rel`, a planted link included: the
    /// link is replaced, never written through).
    pub fn write_atomic(
        &self,
        rel: impl AsRef<Path>,
        contents: &[u8],
        mode: u32,
    ) -> Result<(), ConfinedError> {
        let rel = rel.as_ref();
        let Some((parent, name)) = split(rel)? else {
            return Err(ConfinedError::BadPath(self.show(rel)));
        };
        let Some(dir) = self.open_at(parent, OFlag::O_RDONLY | OFlag::O_DIRECTORY)? else {
            return Err(ConfinedError::io("write", self.show(rel), Errno::ENOENT));
        };
        let tmp_name = crate::fsutil::temp_name(&name.to_string_lossy());
        let tmp = OsStr::new(&tmp_name);
        let fd = nix::fcntl::openat(
            &dir,
            tmp,
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(mode),
        )
        .map_err(|e| ConfinedError::io("write", self.show(rel), e))?;
        let mut file = File::from(fd);
        let written = file
            .write_all(contents)
            .and_then(|()| file.sync_all())
            .map_err(|source| ConfinedError::Io {
                what: "write",
                path: self.show(rel),
                source,
            })
            .and_then(|()| {
                crate::failpoint::hit("confined:written");
                nix::fcntl::renameat(&dir, tmp, &dir, name)
                    .map_err(|e| ConfinedError::io("write", self.show(rel), e))
            });
        if written.is_err() {
            let _ = nix::unistd::unlinkat(&dir, tmp, nix::unistd::UnlinkatFlags::NoRemoveDir);
            return written;
        }
        let _ = nix::unistd::fsync(&dir);
        Ok(())
    }

    /// Renames the file (or link) `rel` to `to` in the same folder, replacing what stands
    /// at `to`; a link is renamed itself, never followed.
    pub fn rename_file(&self, rel: impl AsRef<Path>, to: &OsStr) -> Result<(), ConfinedError> {
        let rel = rel.as_ref();
        let Some((parent, name)) = split(rel)? else {
            return Err(ConfinedError::BadPath(self.show(rel)));
        };
        if to.is_empty() || to.as_bytes().contains(&b'/') || to == "." || to == ".." {
            return Err(ConfinedError::BadPath(self.show(&parent.join(to))));
        }
        let Some(dir) = self.open_at(parent, OFlag::O_RDONLY | OFlag::O_DIRECTORY)? else {
            return Err(ConfinedError::io("rename", self.show(rel), Errno::ENOENT));
        };
        nix::fcntl::renameat(&dir, name, &dir, to)
            .map_err(|e| ConfinedError::io("rename", self.show(rel), e))
    }

    /// Removes the file (or link) `rel`; nothing there is no error.
    pub fn remove_file(&self, rel: impl AsRef<Path>) -> Result<(), ConfinedError> {
        let rel = rel.as_ref();
        let Some((parent, name)) = split(rel)? else {
            return Err(ConfinedError::BadPath(self.show(rel)));
        };
        let Some(dir) = self.open_at(parent, OFlag::O_PATH | OFlag::O_DIRECTORY)? else {
            return Ok(());
        };
        match nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(ConfinedError::io("remove", self.show(rel), e)),
        }
    }

    /// Removes the folder `rel` if it is empty: `Ok(false)` when something is still in it
    /// (or nothing is there), never following a link.
    pub fn remove_dir(&self, rel: impl AsRef<Path>) -> Result<bool, ConfinedError> {
        let rel = rel.as_ref();
        let Some((parent, name)) = split(rel)? else {
            return Err(ConfinedError::BadPath(self.show(rel)));
        };
        let Some(dir) = self.open_at(parent, OFlag::O_PATH | OFlag::O_DIRECTORY)? else {
            return Ok(false);
        };
        match nix::unistd::unlinkat(&dir, name, nix::unistd::UnlinkatFlags::RemoveDir) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT | Errno::ENOTEMPTY | Errno::EEXIST) => Ok(false),
            Err(e) => Err(ConfinedError::io("remove", self.show(rel), e)),
        }
    }

    /// The names in the folder `rel` (not `.` and `..`), sorted; `Ok(None)` when it does
    /// not exist.
    pub fn list(
        &self,
        rel: impl AsRef<Path>,
    ) -> Result<Option<Vec<std::ffi::OsString>>, ConfinedError> {
        let rel = rel.as_ref();
        let Some(dir) = self.open_at(rel, OFlag::O_RDONLY | OFlag::O_DIRECTORY)? else {
            return Ok(None);
        };
        let listing = nix::dir::Dir::from_fd(dir)
            .map_err(|e| ConfinedError::io("list", self.show(rel), e))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| ConfinedError::io("list", self.show(rel), e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(Some(names))
    }

    /// [`Tree::list`] with what each name is (seen without following it), for walks that
    /// would otherwise look at every entry once more.
    pub fn entries(
        &self,
        rel: impl AsRef<Path>,
    ) -> Result<Option<Vec<(std::ffi::OsString, Kind)>>, ConfinedError> {
        self.entries_at_most(rel, usize::MAX)
    }

    /// [`Tree::entries`] of a folder that may hold at most `limit` entries: one holding
    /// more is refused ([`ConfinedError::TooMany`]) as soon as the one past the limit is
    /// read, so a folder a sandbox filled with millions of names costs no more than
    /// `limit` of them.
    pub fn entries_at_most(
        &self,
        rel: impl AsRef<Path>,
        limit: usize,
    ) -> Result<Option<Vec<(std::ffi::OsString, Kind)>>, ConfinedError> {
        use nix::dir::Type;
        let rel = rel.as_ref();
        let Some(dir) = self.open_at(rel, OFlag::O_RDONLY | OFlag::O_DIRECTORY)? else {
            return Ok(None);
        };
        let mut listing = nix::dir::Dir::from_fd(dir)
            .map_err(|e| ConfinedError::io("list", self.show(rel), e))?;
        let mut typed = Vec::new();
        for entry in listing.iter() {
            let entry = entry.map_err(|e| ConfinedError::io("list", self.show(rel), e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                if typed.len() == limit {
                    return Err(ConfinedError::TooMany {
                        path: self.show(rel),
                        limit,
                    });
                }
                typed.push((name.to_owned(), entry.file_type()));
            }
        }
        let mut out = Vec::with_capacity(typed.len());
        for (name, kind) in typed {
            let kind = match kind {
                Some(Type::File) => Kind::File,
                Some(Type::Directory) => Kind::Dir,
                Some(Type::Symlink) => Kind::Symlink,
                Some(_) => Kind::Other,
                // Some file systems do not say in the listing: ask, still without following.
                None => match nix::sys::stat::fstatat(
                    listing.as_fd(),
                    name.as_os_str(),
                    nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
                ) {
                    Ok(stat) => kind_of(&stat),
                    Err(Errno::ENOENT) => continue,
                    Err(e) => return Err(ConfinedError::io("look at", self.show(rel), e)),
                },
            };
            out.push((name, kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Some(out))
    }
}

/// Reads at most `limit` bytes of `file`, refusing a longer one.
pub fn read_bounded(file: File, path: &Path, limit: u64) -> Result<Vec<u8>, ConfinedError> {
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > limit {
        return Err(ConfinedError::TooLarge {
            path: path.to_path_buf(),
            size,
            limit,
        });
    }
    let mut buf = Vec::with_capacity(size as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|source| ConfinedError::Io {
            what: "read",
            path: path.to_path_buf(),
            source,
        })?;
    if buf.len() as u64 > limit {
        return Err(ConfinedError::TooLarge {
            path: path.to_path_buf(),
            size: buf.len() as u64,
            limit,
        });
    }
    Ok(buf)
}

/// Whether `needle` (not empty) occurs in `file`, read once through a small buffer of its
/// own (no copy of the whole file is made: a start that asks this of a large index pays
/// neither its allocation nor its page faults), refused as [`read_bounded`] refuses a
/// file over `limit`.
pub fn contains_bounded(
    mut file: File,
    path: &Path,
    limit: u64,
    needle: &[u8],
) -> Result<bool, ConfinedError> {
    const CHUNK: usize = 64 << 10;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let too_large = |size| ConfinedError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
    };
    if size > limit {
        return Err(too_large(size));
    }
    let finder = memchr::memmem::Finder::new(needle);
    let keep = needle.len().saturating_sub(1);
    let mut buf = vec![0u8; keep + CHUNK];
    // `buf[..kept]` is the end of what was read before: an occurrence across two reads.
    let (mut kept, mut total) = (0usize, 0u64);
    loop {
        let n = match file.read(&mut buf[kept..]) {
            Ok(0) => return Ok(false),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ConfinedError::Io {
                    what: "read",
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        total += n as u64;
        if total > limit {
            return Err(too_large(total));
        }
        let end = kept + n;
        if finder.find(&buf[..end]).is_some() {
            return Ok(true);
        }
        kept = keep.min(end);
        buf.copy_within(end - kept..end, 0);
    }
}

/// `rel` checked to be plain: relative, no `..`, no `.` (an empty path is the root).
fn plain(rel: &Path) -> Result<&Path, ConfinedError> {
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(rel)
    } else {
        Err(ConfinedError::BadPath(rel.to_path_buf()))
    }
}

/// `rel` as its parent and last name; `None` for the root itself.
fn split(rel: &Path) -> Result<Option<(&Path, &OsStr)>, ConfinedError> {
    let rel = plain(rel)?;
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok(Some((parent, name))),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_bounded_search_finds_a_needle_anywhere_and_refuses_a_file_over_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let needle = [0u8, 0, 0xe0, 0];
        let search = |data: &[u8], limit: u64| {
            std::fs::write(&path, data).unwrap();
            contains_bounded(File::open(&path).unwrap(), &path, limit, &needle)
        };
        let chunk = 64 << 10;
        // At the start, across the first read's end (each split), at the very end, absent.
        for at in [0, chunk - 3, chunk - 2, chunk - 1, chunk, 3 * chunk + 5] {
            let mut data = vec![1u8; 4 * chunk];
            data[at..at + 4].copy_from_slice(&needle);
            assert!(search(&data, 1 << 20).unwrap(), "at {at}");
        }
        let mut data = vec![1u8; 2 * chunk];
        let end = data.len() - 4;
        data[end..].copy_from_slice(&needle);
        assert!(search(&data, 1 << 20).unwrap());
        assert!(!search(&vec![1u8; 3 * chunk + 7], 1 << 20).unwrap());
        assert!(!search(b"", 1 << 20).unwrap());
        assert!(!search(&needle[..3], 1 << 20).unwrap());
        // Three bytes at the end of one read and one more at the start of the next.
        let mut data = vec![1u8; 2 * chunk];
        data[chunk - 3..chunk + 1].copy_from_slice(&needle);
        assert!(search(&data, 1 << 20).unwrap());
        assert!(matches!(
            search(&[1u8; 100], 99),
            Err(ConfinedError::TooLarge {
                size: 100,
                limit: 99,
                ..
            })
        ));
        assert!(!search(&[1u8; 100], 100).unwrap());
        // A file that grows past its size as it is read (here one of /proc, whose size
        // says 0) is refused by what was read.
        let proc = Path::new("/proc/self/status");
        assert!(matches!(
            contains_bounded(File::open(proc).unwrap(), proc, 100, &needle),
            Err(ConfinedError::TooLarge { limit: 100, .. })
        ));
        // A read that fails is the error (a folder: EISDIR), never read again.
        assert!(matches!(
            contains_bounded(
                File::open(dir.path()).unwrap(),
                dir.path(),
                1 << 20,
                &needle
            ),
            Err(ConfinedError::Io { what: "read", .. })
        ));
    }

    fn tree() -> (tempfile::TempDir, Tree) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/file"), "inside").unwrap();
        std::fs::write(tmp.path().join("secret"), "outside").unwrap();
        let t = Tree::open(&root).unwrap().unwrap();
        (tmp, t)
    }

    #[test]
    fn reads_a_regular_file_below_the_root() {
        let (_tmp, t) = tree();
        assert_eq!(t.read("a/b/file", 100).unwrap().unwrap(), b"inside");
        assert!(t.read("a/b/missing", 100).unwrap().is_none());
        assert!(t.read("a/b/file/below-a-file", 100).unwrap().is_none());
        assert_eq!(t.kind("a").unwrap(), Some(Kind::Dir));
        assert_eq!(t.kind("a/b/file").unwrap(), Some(Kind::File));
        assert_eq!(t.kind("nothing").unwrap(), None);
    }

    #[test]
    fn a_folder_of_more_entries_than_its_limit_is_refused() {
        let (_tmp, t) = tree();
        for i in 0..5 {
            std::fs::write(t.path().join(format!("a/{i}")), "").unwrap();
        }
        // `b` and the five files.
        assert_eq!(t.entries_at_most("a", 6).unwrap().unwrap().len(), 6);
        assert!(matches!(
            t.entries_at_most("a", 5),
            Err(ConfinedError::TooMany { limit: 5, .. })
        ));
        assert_eq!(t.entries("a").unwrap().unwrap().len(), 6);
    }

    #[test]
    fn follows_no_symlink_at_any_component() {
        let (tmp, t) = tree();
        let root = t.path().to_path_buf();
        symlink(tmp.path().join("secret"), root.join("last")).unwrap();
        symlink(tmp.path(), root.join("mid")).unwrap();
        symlink("a", root.join("inner")).unwrap();
        for rel in ["last", "mid/secret", "inner/b/file"] {
            assert!(
                matches!(t.read(rel, 100), Err(ConfinedError::Symlink(_))),
                "{rel} was followed"
            );
        }
        assert_eq!(t.kind("last").unwrap(), Some(Kind::Symlink));
        assert!(matches!(t.subtree("mid"), Err(ConfinedError::Symlink(_))));
        assert!(matches!(t.path_fd("last"), Err(ConfinedError::Symlink(_))));
        for rel in ["../secret", "/etc/passwd", "a/../../secret"] {
            assert!(
                matches!(t.read(rel, 100), Err(ConfinedError::BadPath(_))),
                "{rel}"
            );
        }
        // A root that is itself a link is refused too.
        symlink(&root, tmp.path().join("root-link")).unwrap();
        assert!(matches!(
            Tree::open(&tmp.path().join("root-link")),
            Err(ConfinedError::Symlink(_))
        ));
    }

    #[test]
    fn the_walk_for_old_kernels_refuses_links_too() {
        let (tmp, t) = tree();
        symlink(tmp.path(), t.path().join("mid")).unwrap();
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        assert!(t.walk(Path::new("a/b/file"), flags).is_ok());
        assert_eq!(
            t.walk(Path::new("mid/secret"), flags).unwrap_err(),
            Errno::ENOTDIR
        );
        symlink(tmp.path().join("secret"), t.path().join("a/last")).unwrap();
        assert_eq!(
            t.walk(Path::new("a/last"), flags).unwrap_err(),
            Errno::ELOOP
        );
    }

    #[test]
    fn refuses_what_is_not_a_regular_file_without_blocking() {
        let (_tmp, t) = tree();
        let fifo = t.path().join("fifo");
        nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
        assert!(matches!(
            t.read("fifo", 100),
            Err(ConfinedError::NotRegular { kind: "a FIFO", .. })
        ));
        assert!(matches!(
            t.read("a", 100),
            Err(ConfinedError::NotRegular {
                kind: "a folder",
                ..
            })
        ));
        assert_eq!(t.kind("fifo").unwrap(), Some(Kind::Other));
    }

    #[test]
    fn bounds_what_it_reads() {
        let (_tmp, t) = tree();
        let f = File::create(t.path().join("sparse")).unwrap();
        f.set_len(10 << 30).unwrap();
        assert!(matches!(
            t.read("sparse", 1 << 20),
            Err(ConfinedError::TooLarge { size, .. }) if size == 10 << 30
        ));
        assert!(matches!(
            t.read("a/b/file", 3),
            Err(ConfinedError::TooLarge { .. })
        ));
    }

    #[test]
    fn writes_replace_a_planted_link_instead_of_following_it() {
        let (tmp, t) = tree();
        symlink(tmp.path().join("secret"), t.path().join("a/target")).unwrap();
        t.write_atomic("a/target", b"new", 0o644).unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("secret")).unwrap(),
            "outside"
        );
        assert_eq!(t.read("a/target", 10).unwrap().unwrap(), b"new");
        // Through a linked folder, nothing is written at all.
        symlink(tmp.path(), t.path().join("away")).unwrap();
        assert!(t.write_atomic("away/secret", b"x", 0o644).is_err());
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("secret")).unwrap(),
            "outside"
        );
        // No temp file is left behind.
        assert_eq!(
            t.list("a").unwrap().unwrap(),
            vec![std::ffi::OsString::from("b"), "target".into()]
        );
    }

    #[test]
    fn ensure_dir_makes_folders_and_refuses_links() {
        let (tmp, t) = tree();
        t.ensure_dir("a/new").unwrap();
        t.ensure_dir("a/new").unwrap();
        assert_eq!(t.kind("a/new").unwrap(), Some(Kind::Dir));
        symlink(tmp.path(), t.path().join("link")).unwrap();
        assert!(matches!(
            t.ensure_dir("link"),
            Err(ConfinedError::Symlink(_))
        ));
        assert!(t.ensure_dir("link/below").is_err());
        assert!(!tmp.path().join("below").exists());
    }
}
