//! The plan cache: what a run's plan needs that does not change from one run of a loop to
//! the next and costs a start the most to read — the user's git identity (gix opening a
//! repository and reading every config file git would) — read once and kept in
//! `plans/<id>.json` of the workspace, with what proves it current.
//!
//! The toolchains found in the home folder are not kept: what makes them current includes
//! every folder the search for credential files lists (tens of thousands in a real
//! `~/.rustup`), and a plan stamping each of them measured 16 MB, read and checked at
//! every start for more than the search's own cache costs (BENCHMARKS.md). The
//! configuration layers and the loop record are read at every start too (a few small
//! files, and the record holds the grants and the vault, which change between runs).
//!
//! What proves it current, all checked before anything of it is used:
//!
//! - a key: this binary (its path, inode, size and times), the whole environment but for
//!   the shell's own bookkeeping (`PWD`, `OLDPWD`, `SHLVL`, `_`), the workspace, the user,
//!   the loop's kind and repository, and the configuration values the answer is made
//!   from (`agent.identity`, `author`, `command`), which every run reads afresh;
//! - the stamp (device, inode, size, mode, modification and change times; or "absent") of
//!   every path the answer was read from or would have been read from had it existed:
//!   each git config file (includes and the files they name too), and which folder or
//!   link stands at the repository and its git folder. A stamp is taken with one `stat`
//!   per path; one differing, appearing or vanishing makes the whole plan stale, and a
//!   stale plan is made anew, never patched;
//! - an HMAC-SHA256 over the file's body, with a key of 32 random bytes in `plans/key`
//!   (mode 0600) made on first use: a file that was not written by git-loop with that key
//!   (forged, truncated, corrupted) is not read, and is replaced.
//!
//! A plan is not kept while any stamp it holds is younger than [`RACY`]: a file changed
//! twice within one tick of the file system's clock keeps its times, so a stamp taken
//! that soon after a change would not see the second one (git's "racy" index entries).
//!
//! `plans/` is host-side state, like `vaults/`: no sandbox mount reaches the workspace's
//! root (only folders below `loops/<id>/`, `context/` and `personal/` are bound, and a
//! grant may not hold the workspace), it is made 0700, and it is read without following
//! a link. Whatever fails on the way (an unreadable file, a full disk) costs the next run
//! a recomputation, never a stale answer.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::loops::LoopRecord;
use crate::workspace::Workspace;

/// The version of the file's format: a file of another is stale.
const FORMAT: u32 = 1;

/// The largest plan file read (a real one is a few KiB).
const MAX_FILE: u64 = 4 << 20;

/// How old every stamp must be for a plan to be kept (see the module's header). Two
/// seconds, as git takes it: the coarsest clock of a file system git-loop may meet.
pub const RACY: Duration = Duration::from_secs(2);

/// Variables of the shell's own bookkeeping, which change between commands of one shell
/// and which nothing cached depends on.
const VOLATILE: &[&str] = &["_", "PWD", "OLDPWD", "SHLVL"];

/// What is kept: the answers a plan is made from that do not change between runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stable {
    pub identity: Option<crate::agent::GitIdentity>,
}

impl Stable {
    /// Reads them afresh, and every path they came from.
    pub fn read(ws: &Workspace, rec: &LoopRecord, config: &Config) -> (Stable, Vec<Witness>) {
        let (identity, read) = crate::agent::git_identity_read(ws, rec, config.settings());
        let mut files = read.files;
        files.sort();
        files.dedup();
        let mut folders = read.folders;
        folders.sort();
        folders.dedup();
        let witnesses = files
            .into_iter()
            .map(|path| Witness::of(path, false))
            .chain(folders.into_iter().map(|path| Witness::of(path, true)))
            .collect();
        (Stable { identity }, witnesses)
    }
}

/// What is at a path, as far as a change to it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path`, links followed; `None` when nothing can be found there.
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// What stands at `path` itself, a link not followed: for a folder, which folder
    /// (not what it holds: a repository's working tree and git folder change with every
    /// commit); for a link or a file, its whole stamp.
    pub fn entry(path: &Path) -> Option<Stamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
        let whole = !m.is_dir();
        let time = |s: i64, ns: i64| if whole { (s, ns) } else { (0, 0) };
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            mode: m.mode(),
            size: if whole { m.size() } else { 0 },
            mtime: time(m.mtime(), m.mtime_nsec()),
            ctime: time(m.ctime(), m.ctime_nsec()),
        })
    }

    /// Is it younger than [`RACY`] at `now`?
    fn racy(&self, now: SystemTime) -> bool {
        let newest = self.mtime.max(self.ctime);
        let at = UNIX_EPOCH
            + Duration::new(
                newest.0.max(0) as u64,
                newest.1.clamp(0, 999_999_999) as u32,
            );
        now.duration_since(at).map_or(true, |age| age < RACY)
    }
}

/// One path and its stamp when the plan was made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Witness {
    path: PathBuf,
    /// Stamped by [`Stamp::entry`] rather than [`Stamp::of`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    entry: bool,
    stamp: Option<Stamp>,
}

impl Witness {
    fn of(path: PathBuf, entry: bool) -> Witness {
        Witness {
            stamp: Witness::stamp(&path, entry),
            entry,
            path,
        }
    }

    fn stamp(path: &Path, entry: bool) -> Option<Stamp> {
        match entry {
            true => Stamp::entry(path),
            false => Stamp::of(path),
        }
    }

    fn holds(&self) -> bool {
        Witness::stamp(&self.path, self.entry) == self.stamp
    }
}

/// The file's body, under its HMAC.
#[derive(Debug, Serialize, Deserialize)]
struct Body {
    format: u32,
    key: String,
    witnesses: Vec<Witness>,
    stable: Stable,
}

/// How a run came by its [`Stable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The kept plan was current and used.
    Kept,
    /// Read afresh and kept.
    Made,
    /// Read afresh and not kept (a stamp too young, or the folder cannot be written).
    NotKept,
}

/// The loop's stable answers: the kept ones when every proof holds, else read afresh
/// (and kept for the next run where they can be).
pub fn stable(ws: &Workspace, rec: &LoopRecord, config: &Config) -> (Stable, Outcome) {
    let key = key_of(ws, rec, config);
    let path = ws.loop_plan(&rec.id);
    let secret = read_secret(&ws.plans_key());
    if let Some(secret) = &secret {
        if let Some(stable) = load(&path, secret, &key) {
            return (stable, Outcome::Kept);
        }
    }
    let (stable, witnesses) = Stable::read(ws, rec, config);
    let now = SystemTime::now();
    if witnesses
        .iter()
        .any(|w| w.stamp.is_some_and(|s| s.racy(now)))
    {
        // Kept, it could hide a change made within the same tick; what an earlier run
        // kept is stale (it was not used) and goes.
        let _ = std::fs::remove_file(&path);
        return (stable, Outcome::NotKept);
    }
    let body = Body {
        format: FORMAT,
        key,
        witnesses,
        stable: stable.clone(),
    };
    let kept = secret
        .or_else(|| make_secret(ws))
        .and_then(|secret| save(&path, &secret, &body));
    match kept {
        Some(()) => (stable, Outcome::Made),
        None => (stable, Outcome::NotKept),
    }
}

/// The hash of everything besides the stamped files that the answers depend on.
fn key_of(ws: &Workspace, rec: &LoopRecord, config: &Config) -> String {
    let mut h = Sha256::new();
    let mut field = |name: &str, value: &[u8]| {
        h.update(name.as_bytes());
        h.update((value.len() as u64).to_le_bytes());
        h.update(value);
    };
    field("format", &FORMAT.to_le_bytes());
    field("version", env!("CARGO_PKG_VERSION").as_bytes());
    // This very binary: a new build (or an upgrade in place) makes every plan stale.
    let exe = std::env::current_exe().unwrap_or_default();
    field("exe", exe.as_os_str().as_encoded_bytes());
    field("exe-stamp", format!("{:?}", Stamp::of(&exe)).as_bytes());
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
        .filter(|(k, _)| !VOLATILE.iter().any(|v| k == v))
        .collect();
    vars.sort();
    for (k, v) in &vars {
        field("env", k.as_encoded_bytes());
        field("=", v.as_encoded_bytes());
    }
    field("root", ws.root().as_os_str().as_encoded_bytes());
    field("user", ws.user().as_bytes());
    field("loop", rec.id.as_bytes());
    field("kind", format!("{:?}", rec.kind).as_bytes());
    field("repo", format!("{:?}", rec.repo).as_bytes());
    let agent = &config.settings().agent;
    field(
        "config",
        format!(
            "{:?} {:?} {:?}",
            agent.identity, agent.author, agent.command
        )
        .as_bytes(),
    );
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A regular file at `path`, opened without following a link, read up to `max` bytes.
fn read_own(path: &Path, max: u64) -> Option<Vec<u8>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() || m.len() > max {
        return None;
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(max).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The HMAC key: 32 bytes, hex, in a file of the owner's only.
fn read_secret(path: &Path) -> Option<Vec<u8>> {
    let text = read_own(path, 128)?;
    let text = std::str::from_utf8(&text).ok()?.trim();
    let bytes: Option<Vec<u8>> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect();
    bytes.filter(|b| b.len() == 32)
}

/// Makes `plans/` (0700) and its key, unless another process just did.
fn make_secret(ws: &Workspace) -> Option<Vec<u8>> {
    use std::io::Write;
    let dir = ws.plans_dir();
    own_dir(&dir)?;
    let secret: [u8; 32] = rand::random();
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(ws.plans_key());
    match made {
        Ok(mut f) => {
            f.write_all(hex(&secret).as_bytes()).ok()?;
            f.sync_all().ok()?;
            Some(secret.to_vec())
        }
        Err(_) => read_secret(&ws.plans_key()),
    }
}

/// `dir` as a real folder of this user's, mode 0700 (made so when missing); `None` when
/// something else stands there.
fn own_dir(dir: &Path) -> Option<()> {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
    let m = std::fs::symlink_metadata(dir).ok()?;
    (m.is_dir() && m.uid() == nix::unistd::geteuid().as_raw() && m.mode() & 0o077 == 0)
        .then_some(())
}

fn mac(secret: &[u8], body: &[u8]) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any size");
    mac.update(body);
    mac
}

/// Writes `body` under its HMAC (first line), atomically but without waiting for the disk:
/// a plan torn or lost in a crash fails its HMAC and is made anew, so the two `fsync`s of
/// a durable write (2-5 ms here, on every start after the binary or a stamped file
/// changed) would buy nothing.
fn save(path: &Path, secret: &[u8], body: &impl Serialize) -> Option<()> {
    let file = signed(path, secret, body)?;
    crate::fsutil::write_replaceable(path, &file).ok()
}

/// `body` under its HMAC, in `path`'s folder made the owner's if it is not yet.
fn signed(path: &Path, secret: &[u8], body: &impl Serialize) -> Option<Vec<u8>> {
    own_dir(path.parent()?)?;
    let json = serde_json::to_vec(body).ok()?;
    let tag = hex(&mac(secret, &json).finalize().into_bytes());
    let mut file = Vec::with_capacity(json.len() + 65);
    file.extend_from_slice(tag.as_bytes());
    file.push(b'\n');
    file.extend_from_slice(&json);
    Some(file)
}

/// The body at `path` when the file is git-loop's: in a folder of the owner's only, not a
/// link, and its HMAC holds.
fn load_signed<T: serde::de::DeserializeOwned>(path: &Path, secret: &[u8]) -> Option<T> {
    let parent = path.parent()?;
    let m = std::fs::symlink_metadata(parent).ok()?;
    if !m.is_dir() || m.mode() & 0o077 != 0 {
        return None;
    }
    let file = read_own(path, MAX_FILE)?;
    let newline = file.iter().position(|&b| b == b'\n')?;
    let (tag, json) = (&file[..newline], &file[newline + 1..]);
    let tag: Option<Vec<u8>> = std::str::from_utf8(tag).ok().and_then(|t| {
        (0..t.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(t.get(i..i + 2)?, 16).ok())
            .collect()
    });
    mac(secret, json).verify_slice(&tag?).ok()?;
    serde_json::from_slice(json).ok()
}

/// The kept answers at `path`, when the file is git-loop's (its HMAC holds), was made for
/// `key`, and every stamp is as it was.
fn load(path: &Path, secret: &[u8], key: &str) -> Option<Stable> {
    let body: Body = load_signed(path, secret)?;
    if body.format != FORMAT || body.key != key {
        return None;
    }
    body.witnesses
        .iter()
        .all(Witness::holds)
        .then_some(body.stable)
}

/// What the last walk of a loop's git folders for lock files saw, kept beside its plan
/// (`plans/<id>.locks.json`, under the same HMAC): each folder without a lock file, with
/// its stamp, so that the next start lists only the folders that changed
/// ([`crate::loops::git_lock_files_since`]). A fresh loop's two git folders are sixteen
/// folders, each an open, two reads of its entries and a close, where a stat now does.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Walks {
    format: u32,
    walks: crate::loops::LockWalks,
}

/// The kept walks of loop `id`'s git folders; none when there is no such file or it is
/// not git-loop's.
pub fn lock_walks(ws: &Workspace, id: &str) -> crate::loops::LockWalks {
    load_kept::<Walks>(ws, &ws.loop_lock_walk(id))
        .filter(|w| w.format == FORMAT)
        .map(|w| w.walks)
        .unwrap_or_default()
}

/// Keeps `walks` for loop `id`'s next start when they differ from `before` (what
/// [`lock_walks`] gave); none kept removes the file. Failing costs the next start a full
/// walk, never a missed lock file (a kept folder is listed again once it changes).
pub fn keep_lock_walks(
    ws: &Workspace,
    id: &str,
    before: &crate::loops::LockWalks,
    walks: &crate::loops::LockWalks,
) {
    if walks == before {
        return;
    }
    let body = (!walks.is_empty()).then(|| Walks {
        format: FORMAT,
        walks: walks.clone(),
    });
    keep_kept(ws, &ws.loop_lock_walk(id), body.as_ref());
}

/// A kept answer at `path` (under `plans/`), read only when its HMAC holds.
fn load_kept<T: serde::de::DeserializeOwned>(ws: &Workspace, path: &Path) -> Option<T> {
    read_secret(&ws.plans_key()).and_then(|secret| load_signed::<T>(path, &secret))
}

/// Keeps `body` at `path` under the plans' HMAC, or removes the file for `None`. Written
/// after most runs of a loop in use: not waited for on the disk (a file lost or torn in a
/// crash fails its HMAC and costs the next start the full look).
fn keep_kept(ws: &Workspace, path: &Path, body: Option<&impl Serialize>) {
    let Some(body) = body else {
        let _ = std::fs::remove_file(path);
        return;
    };
    let _ = read_secret(&ws.plans_key())
        .or_else(|| make_secret(ws))
        .and_then(|secret| signed(path, &secret, body))
        .and_then(|file| crate::fsutil::write_replaceable(path, &file).ok());
}

/// The gitlinks of a loop's large indexes, with each index's stamp, by the tree's host
/// path: the answer of `git::objects::index_gitlinks_kept` kept for the next start, which
/// takes it only for an index whose stamp is still that one.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Gitlinks {
    format: u32,
    trees: std::collections::BTreeMap<PathBuf, crate::git::objects::KeptGitlinks>,
}

/// The kept gitlinks of loop `id`'s trees; none when there is no such file or it is not
/// git-loop's.
pub fn gitlinks(
    ws: &Workspace,
    id: &str,
) -> std::collections::BTreeMap<PathBuf, crate::git::objects::KeptGitlinks> {
    load_kept::<Gitlinks>(ws, &ws.loop_gitlinks(id))
        .filter(|g| g.format == FORMAT)
        .map(|g| g.trees)
        .unwrap_or_default()
}

/// Keeps `trees` for loop `id`'s next start when they differ from `before` (what
/// [`gitlinks`] gave, `None` when it was not asked); none kept removes the file. Failing
/// costs the next start a scan, never a wrong answer (a kept one is taken only for an
/// index whose stamp is the kept one).
pub fn keep_gitlinks(
    ws: &Workspace,
    id: &str,
    before: Option<&std::collections::BTreeMap<PathBuf, crate::git::objects::KeptGitlinks>>,
    trees: &std::collections::BTreeMap<PathBuf, crate::git::objects::KeptGitlinks>,
) {
    if before.map_or(trees.is_empty(), |b| b == trees) {
        return;
    }
    let body = (!trees.is_empty()).then(|| Gitlinks {
        format: FORMAT,
        trees: trees.clone(),
    });
    keep_kept(ws, &ws.loop_gitlinks(id), body.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(witnesses: Vec<Witness>) -> Body {
        Body {
            format: FORMAT,
            key: "k".into(),
            witnesses,
            stable: Stable { identity: None },
        }
    }

    #[test]
    fn a_plan_is_read_back_only_while_every_stamp_holds() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plans");
        own_dir(&dir).unwrap();
        let input = tmp.path().join("input");
        std::fs::write(&input, "one").unwrap();
        let absent = tmp.path().join("absent");
        let path = dir.join("l.json");
        let secret = [7u8; 32];
        let witnesses = vec![
            Witness::of(input.clone(), false),
            Witness::of(absent.clone(), false),
            Witness::of(tmp.path().to_path_buf(), true),
        ];
        save(&path, &secret, &body(witnesses)).unwrap();
        assert!(load(&path, &secret, "k").is_some());
        // Another key (another binary, environment, configuration) or another secret.
        assert!(load(&path, &secret, "other").is_none());
        assert!(load(&path, &[8u8; 32], "k").is_none());
        // A path that appears.
        std::fs::write(&absent, "").unwrap();
        assert!(load(&path, &secret, "k").is_none());
        std::fs::remove_file(&absent).unwrap();
        assert!(load(&path, &secret, "k").is_some());
        // A file replaced by another of the same size.
        std::fs::write(tmp.path().join("new"), "two").unwrap();
        std::fs::rename(tmp.path().join("new"), &input).unwrap();
        assert!(load(&path, &secret, "k").is_none());
    }

    #[test]
    fn a_forged_or_broken_file_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plans");
        own_dir(&dir).unwrap();
        let path = dir.join("l.json");
        let secret = [7u8; 32];
        save(&path, &secret, &body(Vec::new())).unwrap();
        let good = std::fs::read(&path).unwrap();
        // The body changed under a valid tag.
        let text = String::from_utf8(good.clone()).unwrap();
        let forged = text.replace(
            "\"identity\":null",
            "\"identity\":{\"author\":[\"x\",\"x@x\"],\"committer\":[\"x\",\"x@x\"]}",
        );
        assert_ne!(forged, text);
        std::fs::write(&path, &forged).unwrap();
        assert!(load(&path, &secret, "k").is_none());
        // A tag made with another key.
        let json = &good[good.iter().position(|&b| b == b'\n').unwrap() + 1..];
        let other = hex(&mac(&[9u8; 32], json).finalize().into_bytes());
        std::fs::write(&path, [other.as_bytes(), b"\n", json].concat()).unwrap();
        assert!(load(&path, &secret, "k").is_none());
        // Truncated, empty, garbage.
        for bytes in [&good[..good.len() / 2], &b""[..], &b"\xff\xfe\n{"[..]] {
            std::fs::write(&path, bytes).unwrap();
            assert!(load(&path, &secret, "k").is_none());
        }
        // A link to a good file is not followed.
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::write(&elsewhere, &good).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(load(&path, &secret, "k").is_none());
        // The good file itself, back in place.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &good).unwrap();
        assert!(load(&path, &secret, "k").is_some());
    }

    #[test]
    fn a_young_stamp_is_racy() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let stamp = Stamp::of(&f).unwrap();
        let now = SystemTime::now();
        assert!(stamp.racy(now));
        assert!(!stamp.racy(now + RACY + Duration::from_millis(10)));
    }

    #[test]
    fn a_kept_lock_walk_is_read_back_only_when_it_is_git_loops() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        std::fs::create_dir(ws.root()).unwrap();
        let git = tmp.path().join("repo/.git");
        std::fs::create_dir_all(git.join("refs/heads")).unwrap();
        let (found, walk) =
            crate::loops::git_lock_files_since(&git, &Default::default(), Some(Duration::ZERO));
        assert!(found.is_empty() && !walk.folders.is_empty());
        let walks: crate::loops::LockWalks = [(git.clone(), walk)].into();
        // Nothing kept yet.
        assert!(lock_walks(&ws, "l").is_empty());
        keep_lock_walks(&ws, "l", &Default::default(), &walks);
        assert_eq!(lock_walks(&ws, "l"), walks);
        // Another loop's is its own.
        assert!(lock_walks(&ws, "m").is_empty());
        // A file changed under its tag (a walk that would hide a folder) is not read, and a
        // tag of another key neither: the next start walks every folder.
        let path = ws.loop_lock_walk("l");
        let good = std::fs::read(&path).unwrap();
        let text = String::from_utf8(good.clone()).unwrap();
        let forged = text.replacen("\"ino\":", "\"ino\":1", 1);
        assert_ne!(forged, text);
        std::fs::write(&path, &forged).unwrap();
        assert!(lock_walks(&ws, "l").is_empty());
        let json = &good[good.iter().position(|&b| b == b'\n').unwrap() + 1..];
        let other = hex(&mac(&[9u8; 32], json).finalize().into_bytes());
        std::fs::write(&path, [other.as_bytes(), b"\n", json].concat()).unwrap();
        assert!(lock_walks(&ws, "l").is_empty());
        // The good file back; then no walk to keep removes it.
        std::fs::write(&path, &good).unwrap();
        assert_eq!(lock_walks(&ws, "l"), walks);
        keep_lock_walks(&ws, "l", &walks, &Default::default());
        assert!(!path.exists());
    }

    #[test]
    fn kept_gitlinks_are_read_back_only_when_they_are_git_loops() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        std::fs::create_dir(ws.root()).unwrap();
        let repo = tmp.path().join("repo");
        crate::testutil::init_repo(&repo);
        let keeping = crate::git::objects::Keeping {
            min_size: 0,
            settled: Duration::ZERO,
        };
        std::fs::write(repo.join("a.txt"), "a").unwrap();
        crate::testutil::git(&repo, &["add", "a.txt"]);
        let (_, keep) =
            crate::git::objects::index_gitlinks_kept(&repo, &Default::default(), &keeping, &|| {
                None
            })
            .unwrap();
        let trees: std::collections::BTreeMap<_, _> = [(repo.clone(), keep.unwrap())].into();
        // Nothing kept yet; kept, it is read back, and another loop's is its own.
        assert!(gitlinks(&ws, "l").is_empty());
        keep_gitlinks(&ws, "l", None, &trees);
        assert_eq!(gitlinks(&ws, "l"), trees);
        assert!(gitlinks(&ws, "m").is_empty());
        // A file changed under its tag (an answer that would hide a gitlink) is not read.
        let path = ws.loop_gitlinks("l");
        let good = std::fs::read(&path).unwrap();
        let text = String::from_utf8(good.clone()).unwrap();
        let forged = text.replacen("[]", "[\"x\"]", 1);
        assert_ne!(forged, text);
        std::fs::write(&path, &forged).unwrap();
        assert!(gitlinks(&ws, "l").is_empty());
        // The good file back; nothing to keep, asked or not, leaves or removes it.
        std::fs::write(&path, &good).unwrap();
        keep_gitlinks(&ws, "l", None, &Default::default());
        assert_eq!(gitlinks(&ws, "l"), trees);
        keep_gitlinks(&ws, "l", Some(&trees), &Default::default());
        assert!(!path.exists());
    }

    #[test]
    fn a_folder_others_can_enter_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plans");
        own_dir(&dir).unwrap();
        let path = dir.join("l.json");
        let secret = [7u8; 32];
        save(&path, &secret, &body(Vec::new())).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(load(&path, &secret, "k").is_none());
        assert!(own_dir(&dir).is_none());
    }
}
