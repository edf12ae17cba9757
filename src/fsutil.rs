//! File-system helpers that must not be done half: atomic writes and the workspace lock.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Context, Error, Result};

/// Which file or folder this is and when it last changed: its device, inode, size and
/// modification and change times, from one `stat`. Any write to a file, and creating,
/// removing or renaming an entry of a folder, sets its change time to the clock's, and no
/// process can set a change time back (`utimensat` sets it to now), so a stamp taken once
/// its last change was older than the file system's coarsest tick ([`ChangeStamp::since`])
/// still being the stamp proves the same content (a file) or the same names for the same
/// files (a folder).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChangeStamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: i64,
    pub(crate) mtime: (i64, i64),
    pub(crate) ctime: (i64, i64),
}

impl ChangeStamp {
    pub fn of(stat: &nix::sys::stat::FileStat) -> ChangeStamp {
        ChangeStamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size,
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
        }
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.size.max(0) as u64
    }

    /// Changed at `before` or later: a change made within the same tick of the file
    /// system's clock would keep these times, so such a stamp proves nothing.
    pub fn since(&self, before: std::time::SystemTime) -> bool {
        let (s, ns) = self.mtime.max(self.ctime);
        let at = std::time::UNIX_EPOCH
            + std::time::Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
        at >= before
    }
}

/// Writes `contents` to `path` so that a reader sees either the old file or the new one,
/// never a part: temp file in the same folder, fsync, rename, fsync of the folder.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    replace(path, contents, true)
}

/// [`write_atomic`] without waiting for the disk: for a cache whose file is checked before
/// any use (an HMAC) and whose loss or tearing in a crash costs only its recomputation,
/// written often enough (a loop's kept walk of its git folders, after each run that
/// changed them) that two `fsync`s each time would cost a start more than it saves.
pub fn write_replaceable(path: &Path, contents: &[u8]) -> Result<()> {
    replace(path, contents, false)
}

fn replace(path: &Path, contents: &[u8], durable: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Some folders written here are also writable by a sandboxed agent (a loop's
    // `.claude/`): the temp name gets a random part and is created exclusively without
    // following links, so nothing planted there can redirect the write.
    let tmp = dir.join(temp_name(&name));
    let result = (|| -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&tmp)?;
        f.write_all(contents)?;
        if durable {
            f.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        if durable {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.context(|| format!("cannot write {}", path.display()))
}

/// The name of this process's temporary file for a file `name`: [`crate::tempname`]'s one
/// format, which the judges of leftovers read back.
pub fn temp_name(name: &str) -> String {
    crate::tempname::for_writer(name, std::process::id(), rand::random::<u32>())
}

/// Whether the process `pid` is gone, which proves a writer named by it dead: no such
/// process, or one that has exited and waits only for its parent to collect its status (a
/// zombie, whose parent may be slow to do so, or never).
pub fn writer_gone(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only asks whether the process exists.
    if (unsafe { libc::kill(pid, 0) }) == -1 {
        return io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    }
    is_zombie(pid)
}

/// A file the kernel composes (under `/proc`), read whole: its size says 0, so
/// `read_to_string` would ask for it (a `statx` and an `lseek`) and grow its buffer from 32
/// bytes, one read per doubling; these fit in a page or two. Not valid UTF-8 is an error,
/// as `read_to_string` has it.
///
/// Only for what the kernel writes: a path outside `/proc`, with a `..`, or through one of
/// its links into a process's files (`root`, `cwd`, `fd`, `exe`, `map_files`, which can
/// lead into a tree a sandbox writes) is refused (`InvalidInput`) without being opened;
/// files of those trees are read with the confined open (`crate::confined`).
pub fn read_proc(path: impl AsRef<Path>) -> io::Result<String> {
    use std::path::Component;
    let path = path.as_ref();
    let mut parts = path.components();
    let under_proc = parts.next() == Some(Component::RootDir)
        && parts.next() == Some(Component::Normal("proc".as_ref()))
        && parts.all(|c| match c {
            Component::Normal(name) => {
                !["root", "cwd", "fd", "exe", "map_files"].contains(&name.to_str().unwrap_or(""))
            }
            _ => false,
        });
    if !under_proc {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file the kernel composes", path.display()),
        ));
    }
    read_whole(fs::File::open(path)?)
}

/// The rest of `file` as text, in page-sized reads ([`read_proc`]).
fn read_whole(mut file: impl io::Read) -> io::Result<String> {
    let mut text = Vec::new();
    let mut page = [0u8; 4096];
    loop {
        match file.read(&mut page) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&page[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    String::from_utf8(text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Whether `pid` has exited and not been collected by its parent (state `Z` in
/// `/proc/PID/stat`).
fn is_zombie(pid: i32) -> bool {
    fs::read(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| proc_stat_field(&stat, 3) == Some(b"Z".as_slice()))
}

/// Field `n` of a `/proc/PID/stat` line, numbered as proc(5) numbers them (3 the state,
/// 39 the CPU last run on), for `n` past the command's name: counted after the name's
/// last `)`, since a name may hold spaces and parentheses. Allocates nothing: the
/// sandbox's layer calls it between its fork and `_exit`.
pub fn proc_stat_field(stat: &[u8], n: usize) -> Option<&[u8]> {
    let after = stat.iter().rposition(|&b| b == b')')? + 1;
    stat[after..]
        .split(|&b| b == b' ' || b == b'\n')
        .filter(|f| !f.is_empty())
        .nth(n.checked_sub(3)?)
}

/// The writer's pid when `name` is a temporary name of [`temp_name`] whose writer is gone.
pub fn dead_writer(name: &str) -> Option<i32> {
    crate::tempname::writer_of(name).filter(|pid| writer_gone(*pid))
}

/// Removes the temp files [`write_atomic`] left in `dir` when its writer was killed between
/// creating and renaming them (`.<name>.tmp-<pid>-<hex>`): only those whose writer's pid is
/// gone, which proves the writer dead. Returns what was removed.
pub fn sweep_dead_temp_files(dir: &Path) -> Vec<PathBuf> {
    dead_temp_files(dir)
        .into_iter()
        .filter(|p| fs::remove_file(p).is_ok())
        .collect()
}

/// The temp files of [`write_atomic`] in `dir` whose writer is dead (see
/// [`sweep_dead_temp_files`]).
pub fn dead_temp_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if dead_writer(name).is_some() {
            out.push(entry.path());
        }
    }
    out.sort();
    out
}

/// An exclusive `flock` on a file under `locks/`; released when dropped, and by the kernel
/// if the process dies, so a lock can never be left held by a dead process.
pub struct Lock {
    file: File,
    path: PathBuf,
}

impl Lock {
    /// Waits for the lock. The holder's pid is written into the file for `doctor`.
    pub fn acquire(path: &Path) -> Result<Lock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .context(|| format!("cannot open lock {}", path.display()))?;
        file.lock()
            .context(|| format!("cannot lock {}", path.display()))?;
        let lock = Lock {
            file,
            path: path.to_path_buf(),
        };
        lock.record_holder();
        Ok(lock)
    }

    /// Waits for a shared hold on the lock: many shared holders at once, none while
    /// someone holds it exclusively ([`Lock::try_acquire`]).
    pub fn acquire_shared(path: &Path) -> Result<Lock> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .context(|| format!("cannot open lock {}", path.display()))?;
        file.lock_shared()
            .context(|| format!("cannot lock {}", path.display()))?;
        Ok(Lock {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Takes the lock only if nobody holds it (a lock file that does not exist yet is
    /// held by nobody: it is created). `Ok(None)` means another process holds it.
    pub fn try_acquire(path: &Path) -> Result<Option<Lock>> {
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
        {
            Ok(f) => f,
            Err(e) => {
                return Err(
                    Error::failure(format!("cannot open lock {}", path.display())).with_source(e),
                )
            }
        };
        match file.try_lock() {
            Ok(()) => Ok(Some(Lock {
                file,
                path: path.to_path_buf(),
            })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(Error::failure(format!("cannot lock {}", path.display())).with_source(e))
            }
        }
    }

    /// The same lock, held shared from now on (by `flock`'s conversion, which is not
    /// atomic: another process may take the lock exclusively in between, and this waits
    /// for it to let go).
    pub fn share(self) -> Result<Lock> {
        self.file
            .lock_shared()
            .context(|| format!("cannot lock {}", self.path.display()))?;
        Ok(self)
    }

    fn record_holder(&self) {
        let mut f = &self.file;
        let _ = f.set_len(0);
        let _ = writeln!(f, "{}", std::process::id());
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

/// Reads a file only if it is a regular file at exactly this path (never through a
/// symlink at it, never waiting on a FIFO): for files in folders a sandboxed agent can
/// write. `Ok(None)` if absent or not a regular file. At most `limit` bytes: a larger file
/// is refused before it is read (`ErrorKind::FileTooLarge`), so a sparse file of gigabytes
/// planted there costs nothing.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    match crate::confined::read_bounded(file, path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e @ crate::confined::ConfinedError::TooLarge { .. }) => {
            Err(io::Error::new(io::ErrorKind::FileTooLarge, e.to_string()))
        }
        Err(crate::confined::ConfinedError::Io { source, .. }) => Err(source),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}

/// Opens a regular file for reading without following a symlink at its path, or None.
pub fn open_regular(path: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) if f.metadata()?.is_file() => Ok(Some(f)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ELOOP) => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Makes `path` a real folder: a symlink or file standing there (planted by an agent in
/// a folder it can write) is removed first, and nothing is created through a link.
pub fn ensure_real_dir(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => fs::remove_file(path)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir(path)
}

/// Bytes used by the files below `path` (symlinks counted as themselves, never followed).
pub fn disk_usage(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(root) = fs::symlink_metadata(path) else {
        return 0;
    };
    let mut total = root.blocks() * 512;
    if !root.is_dir() {
        return total;
    }
    // Each entry is stat-ed relative to its open folder (DirEntry::metadata, which does
    // not follow links), not by its full path: loops hold many small files and the
    // kernel's path walk per file would cost more than the stat itself.
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            total += meta.blocks() * 512;
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    total
}

/// `1.2 MiB` style sizes for tables.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Removes a folder tree, making read-only folders writable first (a loop's repositories
/// can hold read-only pack files and folders an agent chmod-ed).
pub fn remove_tree(path: &Path) -> io::Result<()> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            make_writable(path);
            fs::remove_dir_all(path)
        }
    }
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            let mode = meta.permissions().mode();
            let _ = fs::set_permissions(&p, fs::Permissions::from_mode(mode | 0o700));
            if let Ok(entries) = fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_kernel_file_is_read_whole_over_several_pages() {
        // Its size says 0; read whole, as the kernel composes it.
        let filesystems = super::read_proc("/proc/filesystems").unwrap();
        assert_eq!(
            filesystems,
            std::fs::read_to_string("/proc/filesystems").unwrap()
        );
        assert!(filesystems.contains("\tproc\n"), "{filesystems}");
        // Past the first page: this process's memory map, a score of lines per mapping.
        let smaps = super::read_proc("/proc/self/smaps").unwrap();
        assert!(smaps.len() > 4096, "{} bytes", smaps.len());
        assert!(smaps.ends_with("\n") && smaps.contains("\nRss:"), "{smaps}");
        // Missing, a folder, or not text: an error, as `read_to_string` gives.
        let kind = |p: &str| super::read_proc(p).unwrap_err().kind();
        assert_eq!(kind("/proc/sys/no-such-file"), std::io::ErrorKind::NotFound);
        assert_eq!(kind("/proc/sys"), std::io::ErrorKind::IsADirectory);
        let not_text: &[u8] = &[0x66, 0xff, 0x6f];
        assert_eq!(
            super::read_whole(not_text).unwrap_err().kind(),
            std::io::ErrorKind::InvalidData
        );
        // Nothing but what the kernel composes: a file elsewhere, a way out of /proc, a
        // link into a process's files (a sandbox's tree, for a sandboxed process).
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "text\n").unwrap();
        for refused in [
            file.to_str().unwrap(),
            "proc/self/status",
            "/proc/../etc/hostname",
            "/proc/self/root/etc/hostname",
            "/proc/self/cwd/file",
            "/proc/self/fd/0",
            "/proc/self/exe",
        ] {
            assert_eq!(kind(refused), std::io::ErrorKind::InvalidInput, "{refused}");
        }
        assert!(super::read_proc("/proc/self/fdinfo/0").is_ok());
        assert!(super::read_proc("/proc/self/status")
            .unwrap()
            .contains("\nUmask:"));
    }

    #[test]
    fn a_field_of_a_proc_stat_line_is_counted_past_the_name() {
        let line = b"12 (a b) c) Z 1 2 3\n";
        assert_eq!(super::proc_stat_field(line, 3), Some(b"Z".as_slice()));
        assert_eq!(super::proc_stat_field(line, 4), Some(b"1".as_slice()));
        // The last field, without the line's end.
        assert_eq!(super::proc_stat_field(line, 6), Some(b"3".as_slice()));
        assert_eq!(super::proc_stat_field(line, 7), None);
        // The pid and the name are not fields it counts.
        assert_eq!(super::proc_stat_field(line, 2), None);
        assert_eq!(super::proc_stat_field(b"no name here", 3), None);
        // This process runs: its state is not a zombie's.
        let own = std::fs::read(format!("/proc/{}/stat", std::process::id())).unwrap();
        assert_ne!(super::proc_stat_field(&own, 3), Some(b"Z".as_slice()));
        assert!(!super::is_zombie(std::process::id() as i32));
    }
    #[test]
    fn a_temp_name_of_this_process_is_not_a_dead_writers() {
        let mine = super::temp_name("checkout-notes.pending");
        assert_eq!(
            crate::tempname::writer_of(&mine),
            Some(std::process::id() as i32)
        );
        assert_eq!(super::dead_writer(&mine), None);
        assert_eq!(super::dead_writer("checkout-notes.pending"), None);
        // No process has pid 2^22 + 1 (pid_max is at most 2^22).
        assert_eq!(
            super::dead_writer(".x.tmp-4194305-0badc0de"),
            Some(4_194_305)
        );
    }

    /// A writer that has exited and whose parent has not collected it yet (a zombie) is
    /// dead: its temp files are a killed writer's, not a live one's.
    #[test]
    fn a_writer_that_exited_uncollected_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !super::is_zombie(pid) {
            assert!(std::time::Instant::now() < deadline, "true never exited");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(super::writer_gone(pid));
        assert!(!super::writer_gone(std::process::id() as i32));
        child.wait().unwrap();
    }
}
