//! A fetch from a synced remote, bounded and quarantined (DESIGN 4.0, ATTACKS 43).
//!
//! Whoever can push to the remote chooses what the fetch brings, and git's `index-pack`
//! inflates every commit, tree and tag it receives whole in memory (blobs above
//! `core.bigFileThreshold` are streamed, nothing else is), as does `upload-pack` on the
//! serving side when the remote is a folder of this machine. So:
//!
//! 1. git fetches into a scratch repository of its own inside the repository's `.git`
//!    (its objects borrowed through `objects/info/alternates`, so only what is new comes),
//!    never into the repository itself: no ref of the repository moves and no object
//!    enters its store while the fetch runs, and a killed fetch leaves only the scratch
//!    folder, which the next fetch removes first;
//! 2. git and every process it starts (`index-pack`, a local `upload-pack`, `ssh`, the
//!    https helper) run under `RLIMIT_DATA` (the memory bound, [`Bounds::memory`]) and
//!    `RLIMIT_FSIZE` (the disk bound, `import.max_pack_size`): an object that inflates
//!    past the bound makes git fail its allocation, a pack past the disk bound is cut
//!    off by the kernel, and either is refused with what git said of its size;
//! 3. what arrived is judged by its headers (`checkout::bound::oversized_in_store`),
//!    without inflating anything: one object over `import.max_object_size` and nothing
//!    is taken;
//! 4. only then are its packs moved into the repository's store (the index last, which
//!    is what makes a pack visible to git) and the fetched ref set.
//!
//! Settings that keep git's own memory small whatever the repository's size: pack windows
//! of 16 MiB, a delta base cache of 16 MiB, one indexing thread.

use super::*;
use crate::checkout::bound;
use crate::git::cmd::Rlimit;

/// The scratch repository's folder, inside the repository's `.git`.
const SCRATCH: &str = "git-loop-incoming";
/// The ref the scratch repository fetches into.
const FETCHED: &str = "refs/fetched";

/// What one fetch may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// `import.max_object_size`: the largest object taken.
    pub max_object_size: u64,
    /// `import.max_pack_size`: the largest pack written (and so the disk a fetch takes).
    pub max_pack_size: u64,
}

impl Bounds {
    /// The memory each git process of a fetch may write to: an object of the largest
    /// size held with its delta base and the delta's result (three of them), plus room for
    /// git itself and its libraries.
    ///
    /// Enforced as `RLIMIT_DATA`, which counts the heap and private writable mappings
    /// (every allocation git makes for an object, large ones included) but not address
    /// space only reserved nor files mapped to be read: `RLIMIT_AS` counted both, so a
    /// credential helper that reserves gigabytes it never uses (a .NET or Node runtime)
    /// would have failed at start, and git's pack windows would have taken from the
    /// objects' room.
    pub fn memory(&self) -> u64 {
        self.max_object_size
            .saturating_mul(3)
            .saturating_add(MEMORY_SLACK)
    }

    pub(super) fn rlimits(&self) -> [Rlimit; 3] {
        [
            Rlimit {
                resource: libc::RLIMIT_DATA,
                value: self.memory(),
            },
            Rlimit {
                resource: libc::RLIMIT_FSIZE,
                value: self.max_pack_size,
            },
            Rlimit {
                resource: libc::RLIMIT_CORE,
                value: 0,
            },
        ]
    }
}

/// The memory a fetch's git needs beyond its objects (measured: git 2.47 fetching over
/// https maps about 90 MiB of libraries and arenas, most of it not writable).
pub const MEMORY_SLACK: u64 = 256 << 20;

/// Why a fetch stopped at its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exceeded {
    /// git could not allocate what an object needs: `tried` bytes, when it said so.
    Memory { tried: Option<u64> },
    /// The pack grew past `import.max_pack_size`.
    Disk,
}

/// Whether a failed fetch into the object folder `objects` stopped at its bounds: by what
/// git said, or by a pack it was writing cut off at the disk bound (the kernel kills
/// `index-pack` with SIGXFSZ, and fetch then says only that its output was invalid).
pub fn stopped_at_bounds(stderr: &str, objects: &Path, bounds: &Bounds) -> Option<Exceeded> {
    exceeded(stderr).or_else(|| {
        let cut_off = std::fs::read_dir(objects.join("pack"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.metadata().is_ok_and(|m| m.len() >= bounds.max_pack_size));
        cut_off.then_some(Exceeded::Disk)
    })
}

/// What git said when a fetch stopped at its bounds; `None` for any other failure.
fn exceeded(stderr: &str) -> Option<Exceeded> {
    if stderr.contains("Out of memory")
        || stderr.contains("malloc failed")
        || stderr.contains("mmap failed")
        || stderr.contains("Cannot allocate memory")
    {
        let tried = stderr.split("tried to allocate ").nth(1).and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()
        });
        // git allocates one byte more than an object's size, for a terminating NUL.
        return Some(Exceeded::Memory {
            tried: tried.map(|t| t.saturating_sub(1)),
        });
    }
    if stderr.contains("signal 25") || stderr.contains("File size limit exceeded") {
        return Some(Exceeded::Disk);
    }
    None
}

/// What the person reads of a fetch stopped at its bounds (the error's message).
pub fn bounded_message(remote: &str, exceeded: &Exceeded, bounds: &Bounds) -> String {
    let remote = shown(remote);
    match exceeded {
        Exceeded::Memory { tried: Some(size) } if *size > bounds.max_object_size => format!(
            "the remote {remote} sends an object of {size} bytes, over the limit of {} bytes (import.max_object_size); git was stopped at the fetch's memory bound of {} bytes before it held it, and nothing was taken",
            bounds.max_object_size,
            bounds.memory()
        ),
        Exceeded::Memory { .. } => format!(
            "the fetch from the remote {remote} needed more than its memory bound of {} bytes (3 × import.max_object_size of {} bytes, and 256 MiB); nothing was taken",
            bounds.memory(),
            bounds.max_object_size
        ),
        Exceeded::Disk => format!(
            "the remote {remote} sends a pack larger than the limit of {} bytes (import.max_pack_size); nothing was taken",
            bounds.max_pack_size
        ),
    }
}

/// The hint that lets what was refused in: the limit to raise, to a value that holds it.
pub fn bounded_hint(exceeded: &Exceeded, bounds: &Bounds) -> String {
    match exceeded {
        Exceeded::Disk => format!(
            "if the pack is meant to come, raise the limit above its size: git loop config set --operator import.max_pack_size {}",
            bound::raise_to(bounds.max_pack_size.saturating_mul(2))
        ),
        Exceeded::Memory { tried } => format!(
            "if the object is meant to be there, raise the limit: git loop config set --operator import.max_object_size {}",
            bound::raise_to(
                tried
                    .filter(|t| *t > bounds.max_object_size)
                    .unwrap_or(bounds.max_object_size.saturating_mul(2))
            )
        ),
    }
}

/// `git` (a fetch or a clone from a synced remote) run under `bounds`, with the settings
/// that keep git's own memory small and what arrives in one pack.
pub fn bounded(mut git: crate::git::cmd::Git, bounds: &Bounds) -> crate::git::cmd::Git {
    git = git.rlimits(&bounds.rlimits());
    for setting in [
        // Always a pack, never loose objects: one file to judge and to move.
        "fetch.unpackLimit=1",
        "transfer.unpackLimit=1",
        "core.packedGitWindowSize=16m",
        "core.packedGitLimit=128m",
        "core.deltaBaseCacheLimit=16m",
        "pack.threads=1",
    ] {
        git = git.arg("-c").arg(setting);
    }
    git
}

/// Fetches the remote's `trunk` into `into` (see the module header): its tip, or `None`
/// when the remote has no such branch (`into` is then removed).
pub(super) fn fetch(
    role: Role,
    dir: &Path,
    trunk: &str,
    into: &str,
    bounds: &Bounds,
) -> Result<Option<ObjectId>, FetchFailure> {
    let git_dir = dir.join(".git");
    let scratch = git_dir.join(SCRATCH);
    let other = |message: String| {
        FetchFailure::Error(SyncError::Other {
            role: role.name(),
            message,
        })
    };
    // The caller holds the lock that guards this repository's trunk: one found here is a
    // killed fetch's.
    crate::fsutil::remove_tree(&scratch)
        .map_err(|e| other(format!("cannot remove {}: {e}", scratch.display())))?;
    let result = fetch_into_scratch(role, dir, &scratch, trunk, into, bounds);
    let _ = crate::fsutil::remove_tree(&scratch);
    result
}

fn fetch_into_scratch(
    role: Role,
    dir: &Path,
    scratch: &Path,
    trunk: &str,
    into: &str,
    bounds: &Bounds,
) -> Result<Option<ObjectId>, FetchFailure> {
    let other = |message: String| {
        FetchFailure::Error(SyncError::Other {
            role: role.name(),
            message,
        })
    };
    let git_dir = dir.join(".git");
    let url = remote_url(dir).ok_or_else(|| other(format!("{REMOTE} has no URL")))?;
    // What the fetch tells the remote it has: the local branch and what was fetched last.
    let mut haves = Vec::new();
    for spec in [format!("refs/heads/{trunk}"), into.to_string()] {
        if let Some(id) = resolve(dir, &spec).map_err(|e| FetchFailure::Error(read_err(role)(e)))? {
            haves.push(id);
        }
    }
    make_scratch(&git_dir, scratch, &haves)
        .map_err(|e| other(format!("cannot make {}: {e}", scratch.display())))?;
    let cmd = bounded(git(dir).env("GIT_DIR", scratch), bounds)
        // The haves above are the scratch repository's own refs: git need not list every
        // ref of the repository it borrows from (a `for-each-ref` there on every fetch).
        .args(["-c", "core.alternateRefsCommand=true"]);
    let out = cmd
        .args([
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            // Only the refspec below: no opportunistic update of the remote-tracking refs
            // the remote's configuration names.
            "--refmap=",
        ])
        // The repository's remote, from its configuration (included); git runs in `.git`
        // as before, so a relative path is relative to the same folder.
        .arg(REMOTE)
        .arg(format!("+refs/heads/{trunk}:{FETCHED}"))
        .output_any()
        .map_err(|e| FetchFailure::Error(git_err(role)(e)))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("couldn't find remote ref") {
            // An empty remote, or one without this trunk: the push makes it.
            let _ = git(dir).args(["update-ref", "-d"]).arg(into).run();
            return Ok(None);
        }
        if let Some(exceeded) = stopped_at_bounds(&stderr, &scratch.join("objects"), bounds) {
            return Err(FetchFailure::Error(SyncError::Bounded {
                role: role.name(),
                remote: url,
                exceeded,
                bounds: *bounds,
            }));
        }
        if stderr.contains("fsck error") {
            // Refused by transfer.fsckObjects: the remote is reachable, what it holds is not
            // taken. git's first complaint names the object and what is wrong with it.
            let why = stderr
                .lines()
                .find(|l| l.starts_with("error: object") || l.contains("fsck error"))
                .unwrap_or("fsck error")
                .trim_start_matches("error: ")
                .to_string();
            return Err(other(format!(
                "the remote holds an object git refuses ({}); nothing was fetched or moved",
                shown(&why)
            )));
        }
        return Err(FetchFailure::Offline(last_line(&stderr)));
    }
    let tip = read_fetched(scratch).ok_or_else(|| {
        other(format!(
            "the fetch of {trunk} left no tip in {}",
            scratch.display()
        ))
    })?;
    let objects = scratch.join("objects");
    let read = |e: objects::GitReadError| FetchFailure::Error(read_err(role)(e));
    if let Some(found) =
        judged(scratch, &objects, tip, &git_dir, bounds.max_object_size).map_err(read)?
    {
        return Err(FetchFailure::Error(SyncError::TooLarge {
            role: role.name(),
            remote: url,
            found,
            limit: bounds.max_object_size,
        }));
    }
    take_objects(&objects, &git_dir.join("objects"))
        .map_err(|e| other(format!("cannot move the fetched objects in: {e}")))?;
    if resolve(dir, into).ok().flatten() == Some(tip) {
        // Nothing new (most syncs): no git started to set what is set.
        return Ok(Some(tip));
    }
    git(dir)
        .args(["update-ref"])
        .arg(into)
        .arg(tip.to_string())
        .run()
        .map_err(|e| FetchFailure::Error(git_err(role)(e)))?;
    Ok(Some(tip))
}

/// The first object in the quarantine over `limit`: commits, trees and tags by their
/// headers; a blob then by its path where the history names it.
fn judged(
    scratch: &Path,
    objects: &Path,
    tip: ObjectId,
    git_dir: &Path,
    limit: u64,
) -> Result<Option<bound::Oversized>, objects::GitReadError> {
    let Some(found) = bound::oversized_in_store(objects, limit)? else {
        return Ok(None);
    };
    if found.kind != "blob" {
        return Ok(Some(found));
    }
    // Every commit and tree that arrived fits: the history can be walked to name it.
    let named = objects::open_trusted(scratch).ok().and_then(|repo| {
        let main = objects::open_trusted(git_dir).ok()?;
        let hidden: Vec<ObjectId> = objects::branches(&main)
            .ok()?
            .into_iter()
            .map(|(_, id)| id)
            .collect();
        bound::oversized_since(&repo, tip, &hidden, limit)
            .ok()
            .flatten()
    });
    Ok(Some(named.unwrap_or(found)))
}

/// A bare repository at `scratch` that borrows the objects of `git_dir`, holds `haves` as
/// refs of its own (what the fetch negotiates from), and reads its
/// configuration (the workspace's own: the remote, its credentials and URL rewrites apply
/// as in a fetch of the repository itself), with its own `core.bare` and format.
fn make_scratch(git_dir: &Path, scratch: &Path, haves: &[ObjectId]) -> std::io::Result<()> {
    use std::fs;
    fs::create_dir_all(scratch.join("objects/pack"))?;
    fs::create_dir_all(scratch.join("objects/info"))?;
    fs::create_dir_all(scratch.join("refs/heads"))?;
    fs::write(scratch.join("HEAD"), "ref: refs/heads/main\n")?;
    let packed: String = haves
        .iter()
        .enumerate()
        .map(|(i, id)| format!("{id} refs/have/{i}\n"))
        .collect();
    fs::write(scratch.join("packed-refs"), packed)?;
    let config = std::path::absolute(git_dir.join("config"))?;
    fs::write(scratch.join("config"), scratch_config(&config)?)?;
    let store = std::path::absolute(git_dir.join("objects"))?;
    let mut line = store.into_os_string().into_encoded_bytes();
    if line.contains(&b'\n') {
        return Err(std::io::Error::other(
            "the repository's path holds a line break, which git's alternates cannot name",
        ));
    }
    line.push(b'\n');
    fs::write(scratch.join("objects/info/alternates"), line)
}

/// The scratch repository's config: the repository's own, included, then what makes it a
/// bare repository of the default format (git reads the format from this file alone).
fn scratch_config(included: &Path) -> std::io::Result<Vec<u8>> {
    let path = included.as_os_str().as_encoded_bytes();
    if path.contains(&b'\n') {
        return Err(std::io::Error::other(
            "the repository's path holds a line break, which git's config cannot name",
        ));
    }
    let mut text = b"[include]\n\tpath = \"".to_vec();
    for &b in path {
        if b == b'"' || b == b'\\' {
            text.push(b'\\');
        }
        text.push(b);
    }
    text.extend_from_slice(b"\"\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
    Ok(text)
}

fn read_fetched(scratch: &Path) -> Option<ObjectId> {
    let text = std::fs::read_to_string(scratch.join(FETCHED)).ok()?;
    ObjectId::from_hex(text.trim().as_bytes()).ok()
}

/// Moves the quarantine's packs (each one's index last) and any loose objects into `store`.
fn take_objects(from: &Path, store: &Path) -> std::io::Result<()> {
    use std::fs;
    let packs = from.join("pack");
    let mut names: Vec<std::path::PathBuf> = fs::read_dir(&packs)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .collect();
    names.sort();
    for pack in names {
        for ext in ["pack", "rev", "idx"] {
            let file = pack.with_extension(ext);
            if !file.exists() {
                continue;
            }
            let name = file.file_name().unwrap_or_default();
            let target = store.join("pack").join(name);
            if target.exists() {
                // The same pack (its name is its content's hash) is there already.
                continue;
            }
            fs::rename(&file, &target)?;
        }
    }
    for entry in fs::read_dir(from)?.flatten() {
        let name = entry.file_name();
        let fan = name.to_string_lossy();
        if fan.len() != 2 || !fan.bytes().all(|b| b.is_ascii_hexdigit()) {
            continue;
        }
        let target_dir = store.join(&name);
        fs::create_dir_all(&target_dir)?;
        for object in fs::read_dir(entry.path())?.flatten() {
            let target = target_dir.join(object.file_name());
            if !target.exists() {
                fs::rename(object.path(), target)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scratch_config_includes_the_repositorys_and_is_bare() {
        assert_eq!(
            String::from_utf8(scratch_config(Path::new("/ws/notes/.git/config")).unwrap())
                .unwrap(),
            "[include]\n\tpath = \"/ws/notes/.git/config\"\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        );
        assert_eq!(
            String::from_utf8(scratch_config(Path::new("/a \"b\\c/config")).unwrap()).unwrap(),
            "[include]\n\tpath = \"/a \\\"b\\\\c/config\"\n[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        );
        assert!(scratch_config(Path::new("/a\nb/config")).is_err());
    }

    #[test]
    fn what_git_says_at_its_bounds_is_told_apart() {
        assert_eq!(
            exceeded("fatal: Out of memory, malloc failed (tried to allocate 300000146 bytes)\nfatal: the remote end hung up unexpectedly"),
            Some(Exceeded::Memory {
                tried: Some(300000145)
            })
        );
        assert_eq!(
            exceeded("fatal: mmap failed: Cannot allocate memory"),
            Some(Exceeded::Memory { tried: None })
        );
        assert_eq!(
            exceeded("error: index-pack died of signal 25\nfatal: index-pack failed"),
            Some(Exceeded::Disk)
        );
        assert_eq!(
            exceeded("fatal: '/nowhere' does not appear to be a git repository"),
            None
        );
    }

    #[test]
    fn the_memory_bound_holds_three_objects_and_git() {
        let b = Bounds {
            max_object_size: 100 << 20,
            max_pack_size: 256 << 20,
        };
        assert_eq!(b.memory(), (300 << 20) + MEMORY_SLACK);
        let limits = b.rlimits();
        assert_eq!(limits[0].value, b.memory());
        assert_eq!(limits[1].value, 256 << 20);
        assert_eq!(limits[2].value, 0);
        let huge = Bounds {
            max_object_size: u64::MAX,
            ..b
        };
        assert_eq!(huge.memory(), u64::MAX);
    }
}
