//! A workspace checkout against its HEAD, for doctor: what is staged or edited, and the rebuild of a stale index.

use super::*;

/// Compares the checkout `worktree` with its HEAD's tree, through gix, changing nothing:
/// paths whose index entry differs from HEAD (`staged`), and tracked paths whose file
/// differs from HEAD's content (`edited`). For doctor, in the workspace's own checkouts.
pub struct Comparison {
    pub staged: Vec<String>,
    pub edited: Vec<String>,
}

pub fn compare_with_head(worktree: &Path) -> Result<Comparison, CheckoutError> {
    let repo = objects::open_trusted(worktree).map_err(|source| CheckoutError::Read {
        path: worktree.to_path_buf(),
        source,
    })?;
    let head = repo
        .head_id()
        .map_err(|e| CheckoutError::Io {
            what: "read HEAD of",
            path: worktree.to_path_buf(),
            source: io::Error::other(e.to_string()),
        })?
        .detach();
    let head_tree = tree_entries(&repo, head)?;
    let index = read_index(&repo.index_path())?;
    let staged = index_differences(&index, &head_tree, usize::MAX);
    let tree = open_tree(worktree)?;
    let mut edited = Vec::new();
    for (path, (kind, id)) in &head_tree {
        use gix::objs::tree::EntryKind;
        if *kind == EntryKind::Commit {
            continue;
        }
        let same = match index.entry_by_path(path.as_ref()) {
            Some(entry) if entry.id == *id && entry.stage_raw() == 0 => {
                entry_matches_disk(&tree, &index, entry, path.as_ref())?
            }
            _ => {
                let want = match kind {
                    EntryKind::Link => Fingerprint::Link {
                        hash: id.to_string(),
                    },
                    _ => Fingerprint::File {
                        exec: *kind == EntryKind::BlobExecutable,
                        hash: id.to_string(),
                    },
                };
                fingerprint(&tree, path.as_ref())? == want
            }
        };
        if !same {
            edited.push(path.to_str_lossy().into_owned());
        }
    }
    Ok(Comparison {
        staged: staged
            .iter()
            .map(|p| p.to_str_lossy().into_owned())
            .collect(),
        edited,
    })
}

/// Rebuilds the index of a workspace checkout from its HEAD when only the index is stale:
/// every tracked file already holds HEAD's content, so nothing in the working tree is lost.
/// Refuses (changing nothing) otherwise.
pub fn rebuild_stale_index(worktree: &Path) -> Result<(), CheckoutError> {
    let cmp = compare_with_head(worktree)?;
    if !cmp.edited.is_empty() {
        return Err(CheckoutError::WouldOverwrite {
            worktree: worktree.to_path_buf(),
            paths: cmp.edited,
        });
    }
    let index = index_path(worktree)?;
    let files = Files::of(&index);
    let target = Target {
        origin: worktree.to_path_buf(),
        branch: String::new(),
        worktree: worktree.to_path_buf(),
        owner: Owner::Workspace,
    };
    let mut notices = Vec::new();
    lock_index(
        &target,
        &files,
        Path::new(""),
        &random_token(),
        &mut notices,
    )?;
    let rebuilt = (|| -> Result<(), CheckoutError> {
        let _ = fs::remove_file(&files.scratch);
        Git::in_dir(worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["read-tree", "HEAD"])
            .run()?;
        let _ = Git::in_dir(worktree)
            .env("GIT_INDEX_FILE", &files.scratch)
            .args(["update-index", "-q", "--refresh"])
            .output_any()?;
        replace_index(&files)
    })();
    files.clean();
    rebuilt
}
