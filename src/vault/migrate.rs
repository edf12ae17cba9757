//! Moving vaults from `personal/<user>/.loopat/vaults/`, where an earlier git-loop kept
//! them, into the vaults' repository.
//!
//! The personal tree is written by every loop's sandbox and by whoever can push to the
//! personal remote (DESIGN 4.0), so the old folder is data, not a place to follow: it is
//! opened through a confined tree (no link followed at any component, `.loopat` and
//! `.loopat/vaults` included), every name is judged by `layout.rs` before anything moves,
//! and only what git-loop itself would have written there is taken: `recipients.txt`
//! (parsed as recipients), `envs/<NAME>.age` and `mounts/home/<rel>.age` (age files), and
//! their folders. Anything else (a link, a FIFO, a nested repository, a plaintext file, a
//! name git-loop never writes) refuses the whole move with its path, and nothing moves.
//!
//! Nothing is renamed out of the personal tree: the files are read (bounded) and written
//! anew into the repository, so an open descriptor into the old folder cannot reach what
//! was moved. Each vault is written into a staging folder of the repository (named by
//! `tempname`, judged by its writer) and renamed into place; then exactly those paths are
//! committed, and only then is the old copy removed. A kill at any step is finished by the
//! next command: a staging folder of a dead writer is removed (`recover.rs`), and a vault
//! found in both places with the same files is committed and its old copy removed.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::layout::{self, Class, Node, Top};
use super::recipients::RecipientsFile;
use super::{commit_paths, crypto, ensure_repo_held, lock_repo, VaultError};
use crate::confined::{Kind, Tree};
use crate::error::Result;
use crate::report::Report;
use crate::terminal::shown;
use crate::workspace::Workspace;

/// The most names the old folder may hold, and the most bytes its files may: a vault is a
/// few credentials.
const MAX_NAMES: usize = 10_000;
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// One file: an entry's largest ciphertext, or a recipients file.
const MAX_FILE: u64 = 2 * 1024 * 1024;

/// One vault of the old folder, read and checked.
#[derive(Debug, Default)]
struct Found {
    name: String,
    /// Folders below the vault's, parents first.
    dirs: Vec<PathBuf>,
    /// Files below the vault's folder, with their bytes.
    files: Vec<(PathBuf, Vec<u8>)>,
    /// Temporary files of dead writers (not moved; removed with the old copy).
    leftovers: Vec<PathBuf>,
}

/// What the old folder holds, or why it is not moved (the first thing refused).
fn survey(old: &Tree) -> std::result::Result<Survey, VaultError> {
    let refuse = |rel: &Path, why: String| VaultError::NotMoved {
        path: old.path().join(rel),
        why,
    };
    let top = old
        .entries("")
        .map_err(VaultError::Confined)?
        .unwrap_or_default();
    let mut budget = Budget::default();
    let mut vaults = Vec::new();
    let mut empty = Vec::new();
    let mut leftovers = Vec::new();
    for (name, kind) in top {
        budget.name(old, Path::new(&name))?;
        match layout::classify_top(&name, node(kind), true) {
            Top::Vault(v) => {
                let mut found = Found {
                    name: v.to_string(),
                    ..Found::default()
                };
                let mut path = Vec::new();
                walk(old, &mut found, &mut path, &mut budget)?;
                // An empty folder (a submodule's, which git leaves empty, or what a
                // removed vault left) holds nothing to move: it goes with the old folder.
                if found.files.is_empty() && found.leftovers.is_empty() {
                    empty.push(found);
                    continue;
                }
                // git-loop makes every vault with its recipients: files without them are
                // not a vault of git-loop's.
                if !found
                    .files
                    .iter()
                    .any(|(rel, _)| rel == Path::new(layout::RECIPIENTS))
                {
                    return Err(refuse(
                        Path::new(&name),
                        "it has no recipients.txt: git-loop never made it (a submodule, or a stray folder?)"
                            .into(),
                    ));
                }
                vaults.push(found);
            }
            Top::Temp
                if kind == Kind::File
                    && crate::fsutil::dead_writer(&name.to_string_lossy()).is_some() =>
            {
                leftovers.push(PathBuf::from(&name))
            }
            Top::Temp => {
                return Err(refuse(
                    Path::new(&name),
                    "a write is in progress there".into(),
                ))
            }
            Top::Repository => unreachable!("the old folder has no repository files"),
            Top::Bad(why) => return Err(refuse(Path::new(&name), why)),
        }
    }
    Ok(Survey {
        vaults,
        empty,
        leftovers,
    })
}

/// What the old folder holds.
struct Survey {
    vaults: Vec<Found>,
    /// Folders with nothing in them but folders.
    empty: Vec<Found>,
    /// Temporary files of dead writers at its top.
    leftovers: Vec<PathBuf>,
}

#[derive(Default)]
struct Budget {
    names: usize,
    bytes: u64,
}

impl Budget {
    fn name(&mut self, old: &Tree, rel: &Path) -> std::result::Result<(), VaultError> {
        self.names += 1;
        if self.names > MAX_NAMES {
            return Err(VaultError::NotMoved {
                path: old.path().join(rel),
                why: format!("the old vaults' folder holds more than {MAX_NAMES} names"),
            });
        }
        Ok(())
    }
}

fn walk(
    old: &Tree,
    found: &mut Found,
    path: &mut Vec<OsString>,
    budget: &mut Budget,
) -> std::result::Result<(), VaultError> {
    let here: PathBuf = std::iter::once(OsStr::new(&found.name))
        .chain(path.iter().map(OsString::as_os_str))
        .collect();
    let children = old
        .entries(&here)
        .map_err(VaultError::Confined)?
        .unwrap_or_default();
    for (name, kind) in children {
        path.push(name);
        let parts: Vec<&OsStr> = path.iter().map(OsString::as_os_str).collect();
        let below: PathBuf = parts.iter().collect();
        let rel = here.join(parts.last().expect("just pushed"));
        budget.name(old, &rel)?;
        let refuse = |why: String| VaultError::NotMoved {
            path: old.path().join(&rel),
            why,
        };
        match layout::classify(&parts, node(kind)) {
            Class::Folder => {
                found.dirs.push(below);
                walk(old, found, path, budget)?;
            }
            class @ (Class::Recipients | Class::Env(_) | Class::File(_)) => {
                let bytes = old
                    .read(&rel, MAX_FILE)
                    .map_err(VaultError::Confined)?
                    .ok_or_else(|| refuse("it went away while it was read".into()))?;
                budget.bytes += bytes.len() as u64;
                if budget.bytes > MAX_BYTES {
                    return Err(refuse(format!(
                        "the old vaults hold more than {} MiB",
                        MAX_BYTES >> 20
                    )));
                }
                if class == Class::Recipients {
                    let text =
                        std::str::from_utf8(&bytes).map_err(|_| refuse("it is not text".into()))?;
                    RecipientsFile::parse(text, &old.path().join(&rel))?;
                } else if !crypto::is_age_file(&bytes) {
                    return Err(refuse(
                        "it is not an age file (plaintext where an entry goes?)".into(),
                    ));
                }
                found.files.push((below, bytes));
            }
            Class::Temp
                if crate::fsutil::dead_writer(&parts.last().expect("pushed").to_string_lossy())
                    .is_some() =>
            {
                found.leftovers.push(below)
            }
            Class::Temp => return Err(refuse("a write is in progress there".into())),
            Class::Foreign => {
                return Err(refuse(
                    "it is not git-loop's: a vault holds recipients.txt, envs/ and mounts/ only"
                        .into(),
                ))
            }
            Class::Bad(why) => return Err(refuse(why)),
        }
        path.pop();
    }
    Ok(())
}

fn node(kind: Kind) -> Node {
    match kind {
        Kind::Dir => Node::Dir,
        Kind::File => Node::File,
        Kind::Symlink => Node::Symlink,
        Kind::Other => Node::Other,
    }
}

/// The old vaults' folder, opened without following a link at `.loopat` or at `vaults`;
/// None when there is none.
fn open_old(ws: &Workspace) -> std::result::Result<Option<Tree>, VaultError> {
    let Some(personal) = Tree::open(&ws.personal()).map_err(VaultError::Confined)? else {
        return Ok(None);
    };
    for rel in [".loopat", ".loopat/vaults"] {
        match personal.kind(rel).map_err(VaultError::Confined)? {
            None => return Ok(None),
            Some(Kind::Dir) => {}
            Some(kind) => {
                return Err(VaultError::NotMoved {
                    path: ws.personal().join(rel),
                    why: format!(
                    "it is {}, where git-loop's folder is expected (links are not followed there)",
                    match kind {
                        Kind::Symlink => "a symlink",
                        Kind::File => "a file",
                        _ => "a FIFO, socket or device",
                    }
                ),
                })
            }
        }
    }
    personal
        .subtree(".loopat/vaults")
        .map_err(VaultError::Confined)
}

/// Moves the vaults of the old folder into the vaults' repository and commits them there;
/// the personal repository's next commit records them gone. Returns the names moved (empty
/// when there was nothing to move). A refusal moves nothing.
pub fn migrate(ws: &Workspace) -> Result<Vec<String>> {
    let Some(old) = open_old(ws)? else {
        return Ok(Vec::new());
    };
    let Survey {
        vaults,
        empty,
        leftovers,
    } = survey(&old)?;
    let held = lock_repo(ws)?;
    let mut resumed = Vec::new();
    if !vaults.is_empty() {
        ensure_repo_held(ws, &held)?;
        let repo = Tree::open(&ws.vaults_dir())
            .map_err(VaultError::Confined)?
            .ok_or_else(|| VaultError::NoVault(ws.vaults_dir().display().to_string()))?;
        for v in &vaults {
            match repo.kind(&v.name).map_err(VaultError::Confined)? {
                None => {}
                Some(Kind::Dir) if same_files(&repo, v) => resumed.push(v.name.clone()),
                Some(_) => {
                    return Err(VaultError::InBothPlaces {
                        name: v.name.clone(),
                        legacy: old.path().to_path_buf(),
                        target: ws.vaults_dir(),
                    }
                    .into())
                }
            }
        }
        let mut paths = Vec::new();
        for v in &vaults {
            if !resumed.contains(&v.name) {
                write_vault(&repo, v)?;
            }
            paths.extend(v.files.iter().map(|(rel, _)| Path::new(&v.name).join(rel)));
        }
        commit_paths(
            ws,
            &held,
            &paths,
            &format!("vaults: moved from personal/{}/.loopat/vaults", ws.user()),
        )?;
    }
    remove_old(ws, &old, vaults.iter().chain(&empty), &leftovers)?;
    Ok(vaults.into_iter().map(|v| v.name).collect())
}

/// Whether the repository's vault holds exactly the files found in the old folder (a move
/// killed after its rename: only the old copy is left to remove).
fn same_files(repo: &Tree, v: &Found) -> bool {
    v.files.iter().all(|(rel, bytes)| {
        repo.read(Path::new(&v.name).join(rel), MAX_FILE)
            .ok()
            .flatten()
            .is_some_and(|b| &b == bytes)
    })
}

/// Writes one vault into a staging folder of the repository, then renames it into place.
fn write_vault(repo: &Tree, v: &Found) -> std::result::Result<(), VaultError> {
    let staging = PathBuf::from(crate::fsutil::temp_name(&v.name));
    let result = (|| {
        repo.ensure_dir(&staging).map_err(VaultError::Confined)?;
        for dir in &v.dirs {
            repo.ensure_dir(staging.join(dir))
                .map_err(VaultError::Confined)?;
        }
        for (rel, bytes) in &v.files {
            repo.write_atomic(staging.join(rel), bytes, 0o644)
                .map_err(VaultError::Confined)?;
        }
        // By the open folder, never by a path: the names are the vaults repository's.
        repo.rename_file(&staging, std::ffi::OsStr::new(&v.name))
            .map_err(VaultError::Confined)
    })();
    if result.is_err() {
        let _ = crate::fsutil::remove_tree(&repo.path().join(&staging));
    }
    result
}

/// Removes the old copy: the files that were moved (and dead writers' temp files), then the
/// folders, deepest first, then the old vaults' folder itself. Something that appeared
/// there meanwhile stays, and is said.
fn remove_old<'a>(
    ws: &Workspace,
    old: &Tree,
    vaults: impl Iterator<Item = &'a Found>,
    leftovers: &[PathBuf],
) -> std::result::Result<(), VaultError> {
    for v in vaults {
        let base = Path::new(&v.name);
        for rel in v.files.iter().map(|(rel, _)| rel).chain(&v.leftovers) {
            old.remove_file(base.join(rel))
                .map_err(VaultError::Confined)?;
        }
        for dir in v.dirs.iter().rev() {
            old.remove_dir(base.join(dir))
                .map_err(VaultError::Confined)?;
        }
        old.remove_dir(base).map_err(VaultError::Confined)?;
    }
    for rel in leftovers {
        old.remove_file(rel).map_err(VaultError::Confined)?;
    }
    let personal = Tree::open(&ws.personal())
        .map_err(VaultError::Confined)?
        .ok_or_else(|| VaultError::NoVault(ws.personal().display().to_string()))?;
    if !personal
        .remove_dir(".loopat/vaults")
        .map_err(VaultError::Confined)?
    {
        return Err(VaultError::LegacyLeft(
            ws.legacy_vaults_dir(),
            std::io::Error::other("it is not empty: something was written there meanwhile"),
        ));
    }
    Ok(())
}

/// [`migrate`], saying once what moved; a refusal is a warning (the vaults there are not
/// used until it is fixed, and every other vault keeps working).
pub fn migrate_and_say(report: &mut dyn Report, ws: &Workspace) -> Result<()> {
    match migrate(ws) {
        Ok(moved) if moved.is_empty() => Ok(()),
        Ok(moved) => {
            report.status(&format!(
                "moved {} vault{} ({}) from {} to {}, a repository of their own that no sandbox sees",
                moved.len(),
                if moved.len() == 1 { "" } else { "s" },
                moved.join(", "),
                ws.legacy_vaults_dir().display(),
                ws.vaults_dir().display()
            ))?;
            Ok(())
        }
        Err(e) => {
            report.problem(
                &format!(
                    "the vaults in {} were not moved: ",
                    shown(ws.legacy_vaults_dir().as_os_str().as_encoded_bytes())
                ),
                &e,
            )?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    struct Setup {
        _tmp: tempfile::TempDir,
        ws: Workspace,
        recipient: String,
        host: PathBuf,
    }

    /// A workspace whose personal tree has the old vaults' folder with vault `old` (a
    /// recipients file and an age file), and a host folder with a key in it.
    fn setup() -> Setup {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path().join("ws"), "alice".into());
        let (id, _) = crate::vault::identity::ensure(&tmp.path().join("id.txt")).unwrap();
        let recipient = id.recipient().to_string();
        let old = ws.legacy_vaults_dir().join("old");
        fs::create_dir_all(old.join("envs")).unwrap();
        fs::write(old.join("recipients.txt"), format!("{recipient}\n")).unwrap();
        let to = [crate::vault::recipients::Recipient::parse(&recipient).unwrap()];
        fs::write(
            old.join("envs/TOKEN.age"),
            crypto::encrypt(&to, b"value").unwrap(),
        )
        .unwrap();
        let host = tmp.path().join("host-ssh");
        fs::create_dir_all(&host).unwrap();
        fs::write(
            host.join("id_ed25519"),
            "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        )
        .unwrap();
        Setup {
            _tmp: tmp,
            ws,
            recipient,
            host,
        }
    }

    fn refused(s: &Setup) -> (PathBuf, String) {
        match migrate(&s.ws) {
            Err(e) => {
                let line = e.one_line();
                let path = line.split(": ").next().unwrap().into();
                (path, line)
            }
            Ok(moved) => panic!("moved {moved:?}"),
        }
    }

    #[test]
    fn a_real_old_folder_is_moved_committed_and_removed() {
        let s = setup();
        assert_eq!(migrate(&s.ws).unwrap(), ["old"]);
        let moved = s.ws.vault_dir("old");
        assert_eq!(
            fs::read_to_string(moved.join("recipients.txt")).unwrap(),
            format!("{}\n", s.recipient)
        );
        assert!(moved.join("envs/TOKEN.age").is_file());
        assert!(!s.ws.legacy_vaults_dir().exists());
        let tracked = Git::in_dir(&s.ws.vaults_dir())
            .args(["ls-files"])
            .read()
            .unwrap();
        assert!(tracked.contains("old/envs/TOKEN.age"), "{tracked}");
        assert!(migrate(&s.ws).unwrap().is_empty(), "nothing left to move");
    }

    use crate::git::cmd::Git;

    #[test]
    fn links_where_git_loop_keeps_its_own_move_nothing() {
        type Plant = Box<dyn Fn(&Setup)>;
        let cases: Vec<(&str, Plant)> = vec![
            (
                ".loopat/vaults",
                Box::new(|s: &Setup| {
                    fs::remove_dir_all(s.ws.legacy_vaults_dir()).unwrap();
                    symlink(&s.host, s.ws.legacy_vaults_dir()).unwrap();
                }),
            ),
            (
                ".loopat",
                Box::new(|s: &Setup| {
                    fs::remove_dir_all(s.ws.personal().join(".loopat")).unwrap();
                    symlink(&s.host, s.ws.personal().join(".loopat")).unwrap();
                }),
            ),
            (
                ".loopat/vaults/work",
                Box::new(|s: &Setup| {
                    symlink(&s.host, s.ws.legacy_vaults_dir().join("work")).unwrap()
                }),
            ),
            (
                ".loopat/vaults/old/envs/KEY.age",
                Box::new(|s: &Setup| {
                    symlink(
                        s.host.join("id_ed25519"),
                        s.ws.legacy_vaults_dir().join("old/envs/KEY.age"),
                    )
                    .unwrap()
                }),
            ),
            (
                ".loopat/vaults/old/mounts",
                Box::new(|s: &Setup| {
                    symlink(&s.host, s.ws.legacy_vaults_dir().join("old/mounts")).unwrap()
                }),
            ),
            (
                ".loopat/vaults/old/envs/PLAIN.age",
                Box::new(|s: &Setup| {
                    fs::write(s.ws.legacy_vaults_dir().join("old/envs/PLAIN.age"), "x").unwrap()
                }),
            ),
            (
                ".loopat/vaults/old/README",
                Box::new(|s: &Setup| {
                    fs::write(s.ws.legacy_vaults_dir().join("old/README"), "x").unwrap()
                }),
            ),
            (
                ".loopat/vaults/identity.txt",
                Box::new(|s: &Setup| {
                    fs::write(s.ws.legacy_vaults_dir().join("identity.txt"), "x").unwrap()
                }),
            ),
            (
                ".loopat/vaults/stray",
                Box::new(|s: &Setup| {
                    fs::create_dir_all(s.ws.legacy_vaults_dir().join("stray/envs")).unwrap();
                    fs::write(
                        s.ws.legacy_vaults_dir().join("stray/envs/A.age"),
                        "age-encryption.org/v1\n",
                    )
                    .unwrap();
                }),
            ),
        ];
        for (rel, plant) in cases {
            let s = setup();
            plant(&s);
            let (path, line) = refused(&s);
            assert_eq!(path, s.ws.personal().join(rel), "{line}");
            assert!(!s.ws.vaults_dir().join("old").exists(), "{rel}: moved");
            assert!(
                s.host.join("id_ed25519").is_file(),
                "{rel}: the host file moved"
            );
            assert_eq!(fs::read_dir(&s.host).unwrap().count(), 1, "{rel}");
        }
    }

    #[test]
    fn a_move_killed_after_its_rename_is_finished_and_an_empty_folder_goes() {
        let s = setup();
        // What a move killed before its commit and removal leaves: the vault in both.
        let target = s.ws.vault_dir("old");
        fs::create_dir_all(target.join("envs")).unwrap();
        for rel in ["recipients.txt", "envs/TOKEN.age"] {
            fs::copy(
                s.ws.legacy_vaults_dir().join("old").join(rel),
                target.join(rel),
            )
            .unwrap();
        }
        crate::vault::ensure_repo(&s.ws).unwrap();
        fs::create_dir_all(s.ws.legacy_vaults_dir().join("empty/mounts/home")).unwrap();
        assert_eq!(migrate(&s.ws).unwrap(), ["old"]);
        assert!(!s.ws.legacy_vaults_dir().exists());
        let tracked = Git::in_dir(&s.ws.vaults_dir())
            .args(["ls-files"])
            .read()
            .unwrap();
        assert!(
            tracked.contains("old/envs/TOKEN.age"),
            "committed: {tracked}"
        );
        // Different files in both places: refused.
        let s = setup();
        fs::create_dir_all(s.ws.vault_dir("old")).unwrap();
        fs::write(s.ws.vault_dir("old").join("recipients.txt"), "other\n").unwrap();
        assert!(matches!(
            migrate(&s.ws).unwrap_err().message.as_str(),
            m if m.contains("exists both in")
        ));
    }
}
