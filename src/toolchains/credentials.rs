//! Credential files anywhere under a bound toolchain folder (ATTACKS 45): `npm config set
//! -g` writes registry tokens to `$prefix/etc/npmrc`, `pip config --site` to
//! `$PYENV_ROOT/versions/<v>/pip.conf`, and any tool may leave a `.netrc` or a
//! `credentials.toml` in its folder. Each bound folder is searched by name ([`is_credential`])
//! and every match is covered with an empty read-only file over it.
//!
//! The search is bounded: [`DEPTH`] levels below the bound folder (the tools' own places
//! are at most 7 deep: `$NVM_DIR/versions/node/<v>/lib/node_modules/npm/npmrc`) and
//! [`ENTRIES`] entries; a folder with more entries within that depth cannot be shown to be
//! free of them, so its toolchain is left out with a warning, never bound unsearched.
//! Links are not followed into folders (a link inside leads where the sandbox has nothing,
//! or into a folder that is searched itself).
//!
//! Every run would pay for the search (a pyenv with ten interpreters has 75,000 entries
//! within that depth), so the host's disk keeps it in a cache
//! (`$XDG_CACHE_HOME/git-loop/toolchain-credentials`), valid while every folder it walked
//! still has the modification time it had: a file created, removed or renamed in any of
//! them changes that time, and the next run searches again. Checking costs one `stat` per
//! folder, not one read of each.
//!
//! What remains: the folders are bound read-only, so nothing inside a sandbox can add a
//! file there; a credential file the user writes on the host while a run is alive is not
//! covered until the next run starts. Deeper than [`DEPTH`] nothing is searched.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Files;

/// How deep below a bound folder credential files are searched.
pub const DEPTH: usize = 8;
/// The most entries searched below one bound folder.
pub const ENTRIES: usize = 300_000;

/// File names that hold credentials, wherever they are.
pub const NAMES: &[&str] = &[
    "npmrc",
    ".npmrc",
    "pip.conf",
    "pip.ini",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".git-credentials",
    ".pgpass",
    ".condarc",
    "credentials",
    "credentials.tfrc.json",
];

/// `credentials.<ext>` with one of these (not `credentials.py`: a library's source).
pub const CREDENTIAL_EXTENSIONS: &[&str] =
    &["toml", "json", "yml", "yaml", "ini", "cfg", "conf", "xml"];

/// Names that hold credentials in a folder of this name.
pub const IN_FOLDER: &[(&str, &str)] = &[
    (".docker", "config.json"),
    (".cargo", "config.toml"),
    (".cargo", "config"),
    (".bundle", "config"),
    (".m2", "settings.xml"),
    (".gradle", "gradle.properties"),
    ("gh", "hosts.yml"),
    ("composer", "auth.json"),
    (".composer", "auth.json"),
];

/// Whether the file at `path` is one of the credential files, by its name (and its
/// folder's).
pub fn is_credential(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if NAMES.contains(&name) {
        return true;
    }
    if let Some(ext) = name.strip_prefix("credentials.") {
        if CREDENTIAL_EXTENSIONS.contains(&ext) {
            return true;
        }
    }
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str());
    IN_FOLDER
        .iter()
        .any(|(f, n)| Some(*f) == folder && *n == name)
}

/// What a search of one folder found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan {
    /// The credential files (regular files or links), sorted.
    Found(Vec<PathBuf>),
    /// More than [`ENTRIES`] entries within [`DEPTH`]: not searched to the end.
    TooMany,
}

/// What a walk saw: the credential files, and each folder it listed with its
/// modification time and inode (for the cache).
pub(super) struct Walked {
    pub found: Vec<PathBuf>,
    pub folders: Vec<(PathBuf, Stamp)>,
}

/// A folder's identity and modification time, nanoseconds included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stamp {
    pub ino: u64,
    pub mtime: i64,
    pub mtime_nsec: i64,
}

/// Searches `root` through `files` (no link followed into a folder): `None` past the bound.
pub(super) fn walk<F: Files + ?Sized>(
    files: &F,
    root: &Path,
    stamp: &dyn Fn(&Path) -> Option<Stamp>,
) -> Option<Walked> {
    let mut out = Walked {
        found: Vec::new(),
        folders: Vec::new(),
    };
    let mut seen = 0usize;
    let mut pending = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = pending.pop() {
        if let Some(s) = stamp(&dir) {
            out.folders.push((dir.clone(), s));
        }
        for name in files.list(&dir) {
            seen += 1;
            if seen > ENTRIES {
                return None;
            }
            let path = dir.join(&name);
            let is_link = files.link(&path).is_some();
            match files.kind(&path) {
                Some(super::Kind::Dir) if !is_link && depth + 1 < DEPTH => {
                    pending.push((path, depth + 1));
                }
                Some(super::Kind::File) if is_credential(&path) => out.found.push(path),
                _ => {}
            }
        }
    }
    out.found.sort();
    out.folders.sort_by(|a, b| a.0.cmp(&b.0));
    Some(out)
}

/// [`walk`] without the cache's stamps: the credential files, `None` past the bound.
pub(super) fn walk_files<F: Files + ?Sized>(files: &F, root: &Path) -> Option<Vec<PathBuf>> {
    walk(files, root, &|_| None).map(|w| w.found)
}

/// The cache of searches on the host's disk: one line per folder walked (`d INO MTIME
/// NSEC PATH`) and per file found (`f PATH`), after a `root PATH` line, for each root.
pub(super) struct Cache {
    path: Option<PathBuf>,
    roots: Roots,
    changed: bool,
}

/// The largest cache file read: far more than any real one.
const MAX_CACHE: u64 = 64 << 20;

impl Cache {
    /// The cache of this host (`$XDG_CACHE_HOME/git-loop`, else `~/.cache/git-loop`).
    pub fn open() -> Cache {
        let path = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|h| h.join(".cache"))
            })
            .map(|c| c.join("git-loop/toolchain-credentials"));
        let mut cache = Cache {
            path,
            roots: BTreeMap::new(),
            changed: false,
        };
        if let Some(text) = cache.path.as_deref().and_then(read_small) {
            cache.roots = parse(&text);
        }
        cache
    }

    /// The search of `root`: the cached one while every folder it walked is unchanged,
    /// else a new walk of the disk.
    pub fn scan<F: Files + ?Sized>(&mut self, files: &F, root: &Path) -> Scan {
        if let Some((folders, found)) = self.roots.get(root) {
            if !folders.is_empty() && folders.iter().all(|(dir, s)| disk_stamp(dir) == Some(*s)) {
                return Scan::Found(found.clone());
            }
        }
        match walk(files, root, &disk_stamp) {
            Some(w) => {
                let found = w.found.clone();
                self.roots.insert(root.to_path_buf(), (w.folders, w.found));
                self.changed = true;
                Scan::Found(found)
            }
            None => Scan::TooMany,
        }
    }

    /// Writes the cache back if a search was new (atomically: another run may read it).
    pub fn save(&self) {
        let (true, Some(path)) = (self.changed, &self.path) else {
            return;
        };
        let mut text = String::new();
        for (root, (folders, found)) in &self.roots {
            let (Some(r), true) = (
                root.to_str(),
                folders.iter().all(|(d, _)| d.to_str().is_some()),
            ) else {
                continue;
            };
            if r.contains('\n') {
                continue;
            }
            text.push_str(&format!("root {r}\n"));
            for (dir, s) in folders {
                text.push_str(&format!(
                    "d {} {} {} {}\n",
                    s.ino,
                    s.mtime,
                    s.mtime_nsec,
                    dir.display()
                ));
            }
            for f in found {
                text.push_str(&format!("f {}\n", f.display()));
            }
        }
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        let written = std::fs::File::create(&tmp)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

fn disk_stamp(dir: &Path) -> Option<Stamp> {
    let m = std::fs::symlink_metadata(dir).ok()?;
    m.is_dir().then(|| Stamp {
        ino: m.ino(),
        mtime: m.mtime(),
        mtime_nsec: m.mtime_nsec(),
    })
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    f.take(MAX_CACHE).read_to_string(&mut text).ok()?;
    Some(text)
}

type Roots = BTreeMap<PathBuf, (Vec<(PathBuf, Stamp)>, Vec<PathBuf>)>;

/// The cache's text; a line it cannot read drops its root (searched again).
fn parse(text: &str) -> Roots {
    let mut roots = Roots::new();
    // The root being read and what its lines say so far, put in the map when the next root
    // starts: looking the root up in the map for each of its thousands of lines (comparing
    // paths component by component) and copying its path for each cost every start with
    // toolchains more than reading the lines did.
    type Entry = (Vec<(PathBuf, Stamp)>, Vec<PathBuf>);
    let mut current: Option<(PathBuf, Entry)> = None;
    let mut bad = Vec::new();
    let put = |roots: &mut Roots, current: Option<(PathBuf, Entry)>| {
        if let Some((root, (folders, found))) = current {
            let entry = roots.entry(root).or_default();
            entry.0.extend(folders);
            entry.1.extend(found);
        }
    };
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("root ") {
            put(&mut roots, current.take());
            current = Some((PathBuf::from(r), Entry::default()));
            continue;
        }
        let Some((root, entry)) = &mut current else {
            continue;
        };
        if let Some(f) = line.strip_prefix("f ") {
            entry.1.push(PathBuf::from(f));
        } else if let Some(d) = line.strip_prefix("d ") {
            let mut parts = d.splitn(4, ' ');
            let stamp = (|| {
                Some((
                    Stamp {
                        ino: parts.next()?.parse().ok()?,
                        mtime: parts.next()?.parse().ok()?,
                        mtime_nsec: parts.next()?.parse().ok()?,
                    },
                    PathBuf::from(parts.next()?),
                ))
            })();
            match stamp {
                Some((s, p)) => entry.0.push((p, s)),
                None => bad.push(root.clone()),
            }
        } else {
            bad.push(root.clone());
        }
    }
    put(&mut roots, current);
    for b in bad {
        roots.remove(&b);
    }
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_files_are_known_by_name_and_library_sources_are_not() {
        for p in [
            "/t/etc/npmrc",
            "/t/versions/3.12.1/pip.conf",
            "/t/.netrc",
            "/t/x/credentials",
            "/t/x/credentials.toml",
            "/t/x/credentials.tfrc.json",
            "/t/.docker/config.json",
            "/t/.cargo/config.toml",
            "/t/gh/hosts.yml",
            "/t/.yarnrc.yml",
        ] {
            assert!(is_credential(Path::new(p)), "{p}");
        }
        for p in [
            "/t/site-packages/botocore/credentials.py",
            "/t/__pycache__/credentials.cpython-311.pyc",
            "/t/config.json",
            "/t/x/config.toml",
            "/t/npmrc.js",
        ] {
            assert!(!is_credential(Path::new(p)), "{p}");
        }
    }

    #[test]
    fn the_cache_is_kept_while_no_folder_changed_and_searched_again_after() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("pyenv");
        std::fs::create_dir_all(root.join("versions/3.12.1/lib")).unwrap();
        std::fs::write(root.join("versions/3.12.1/lib/os.py"), "").unwrap();
        let mut cache = Cache {
            path: Some(tmp.path().join("cache/toolchain-credentials")),
            roots: BTreeMap::new(),
            changed: false,
        };
        let disk = super::super::Disk;
        assert_eq!(cache.scan(&disk, &root), Scan::Found(vec![]));
        cache.save();
        let text = std::fs::read_to_string(tmp.path().join("cache/toolchain-credentials")).unwrap();
        let mut again = Cache {
            path: Some(tmp.path().join("cache/toolchain-credentials")),
            roots: parse(&text),
            changed: false,
        };
        assert_eq!(again.roots.get(&root).unwrap().0.len(), 4);
        // A token written by `pip config --site` later: its folder changed, found.
        std::fs::write(root.join("versions/3.12.1/pip.conf"), "[global]\n").unwrap();
        assert_eq!(
            again.scan(&disk, &root),
            Scan::Found(vec![root.join("versions/3.12.1/pip.conf")])
        );
        assert!(again.changed);
    }

    #[test]
    fn the_cache_text_is_read_per_root_and_a_bad_line_drops_its_root() {
        let text = "root /a\nd 1 2 3 /a\nf /a/x/.netrc\nd 4 5 6 /a/x\nroot /b\nd 7 8 9 /b\nd zz /b/y\nroot /c\nroot /a\nd 10 11 12 /a/z\n";
        let roots = parse(text);
        let stamp = |ino, mtime, mtime_nsec| Stamp {
            ino,
            mtime,
            mtime_nsec,
        };
        let mut want = Roots::new();
        want.insert(
            PathBuf::from("/a"),
            (
                vec![
                    (PathBuf::from("/a"), stamp(1, 2, 3)),
                    (PathBuf::from("/a/x"), stamp(4, 5, 6)),
                    (PathBuf::from("/a/z"), stamp(10, 11, 12)),
                ],
                vec![PathBuf::from("/a/x/.netrc")],
            ),
        );
        // `/b` had a line that cannot be read: searched again. `/c` had none.
        want.insert(PathBuf::from("/c"), Default::default());
        assert_eq!(roots, want);
        // Lines before any root belong to none.
        assert!(parse("d 1 2 3 /x\nf /x/.netrc\n").is_empty());
    }
}
