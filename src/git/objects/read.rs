//! Reads of trusted repositories (the user's, the origins) through gix: refs, commits, trees, bounded blobs.

use super::*;

/// Open a repository we trust (the user's own repo / an origin) for reads and writes of objects and refs.
///
/// The user's configuration applies (it provides the reflog identity, lock timeouts, …). gix never
/// runs hooks or other configured programs for the operations in this module.
pub fn open_trusted(path: &Path) -> Result<gix::Repository, GitReadError> {
    gix::open_opts(path, gix::open::Options::default()).map_err(|source| GitReadError::Open {
        path: path.to_owned(),
        source,
    })
}

pub(super) fn full_ref_name(name: &str) -> Result<gix::refs::FullName, GitReadError> {
    let full = if name.starts_with("refs/") {
        name.to_owned()
    } else {
        format!("refs/heads/{name}")
    };
    gix::refs::FullName::try_from(full).map_err(|err| GitReadError::InvalidRefName {
        name: name.to_owned(),
        reason: err.to_string(),
    })
}

/// Loop branches are always local branches; accepting full names here would let a caller's mistake
/// move a tag or a remote-tracking ref in the origin.
pub(super) fn branch_ref_name(branch: &str) -> Result<gix::refs::FullName, ImportError> {
    let invalid = |reason: String| ImportError::InvalidBranchName {
        name: branch.to_owned(),
        reason,
    };
    if branch.starts_with("refs/") {
        return Err(invalid(
            "expected a branch name without the refs/heads/ prefix".into(),
        ));
    }
    gix::refs::FullName::try_from(format!("refs/heads/{branch}"))
        .map_err(|err| invalid(err.to_string()))
}

/// `refs/heads/<branch>` (or a full ref name) peeled to a commit id; Ok(None) when the ref does not exist.
pub fn resolve_branch(
    repo: &gix::Repository,
    name: &str,
) -> Result<Option<ObjectId>, GitReadError> {
    let full = full_ref_name(name)?;
    let Some(mut reference) = repo.try_find_reference(&full).map_err(git_read_err(
        repo,
        format!("could not read reference {full}"),
    ))?
    else {
        return Ok(None);
    };
    let commit = reference.peel_to_commit().map_err(git_read_err(
        repo,
        format!("could not peel {full} to a commit"),
    ))?;
    Ok(Some(commit.id))
}

/// Resolve any revision spec a user may type (`HEAD`, `main`, `v1.0`, `abc123`, `HEAD~2`) to a commit id. Ok(None) if it doesn't resolve.
///
/// A spec that names something other than a commit (a tree, a blob, a tag of either) also yields
/// `None`; failures to read objects the spec did resolve to are errors.
pub fn resolve_rev(repo: &gix::Repository, spec: &str) -> Result<Option<ObjectId>, GitReadError> {
    // gix reports unknown names, ambiguous prefixes and syntax errors alike as errors; to a caller
    // asking "what does the user mean", all of them mean "nothing".
    let Ok(id) = repo.rev_parse_single(spec) else {
        return Ok(None);
    };
    let id = id.detach();
    let object = repo
        .find_object(id)
        .map_err(|source| GitReadError::Decode {
            repo: repo.git_dir().to_owned(),
            id,
            source,
        })?;
    let peeled = object
        .peel_tags_to_end()
        .map_err(|source| GitReadError::Decode {
            repo: repo.git_dir().to_owned(),
            id,
            source,
        })?;
    Ok((peeled.kind == gix::objs::Kind::Commit).then_some(peeled.id))
}

/// Name of the branch HEAD points to (e.g. "main"), None when detached or unborn.
pub fn head_branch(repo: &gix::Repository) -> Result<Option<String>, GitReadError> {
    let head = repo
        .head()
        .map_err(git_read_err(repo, "could not read HEAD"))?;
    Ok(match head.kind {
        gix::head::Kind::Symbolic(reference) => reference
            .name
            .as_bstr()
            .strip_prefix(b"refs/heads/")
            .map(|short| short.to_str_lossy().into_owned()),
        gix::head::Kind::Unborn(_) | gix::head::Kind::Detached { .. } => None,
    })
}

/// All local branch names with their tips.
///
/// Tips are fully peeled object ids; a branch pointing at an annotated tag reports the tag's target.
pub fn branches(repo: &gix::Repository) -> Result<Vec<(String, ObjectId)>, GitReadError> {
    let platform = repo
        .references()
        .map_err(git_read_err(repo, "could not list references"))?;
    let iter = platform
        .local_branches()
        .map_err(git_read_err(repo, "could not list local branches"))?;
    let mut out = Vec::new();
    for reference in iter {
        let mut reference =
            reference.map_err(git_read_err(repo, "could not read a local branch"))?;
        let full = reference.name().as_bstr().to_owned();
        let id = reference
            .peel_to_id()
            .map_err(git_read_err(repo, format!("could not peel {full}")))?
            .detach();
        let short = full.strip_prefix(b"refs/heads/").unwrap_or(full.as_slice());
        out.push((short.to_str_lossy().into_owned(), id));
    }
    Ok(out)
}

/// Number of commits reachable from `tip` but not from any of `bases`.
pub fn count_ahead(
    repo: &gix::Repository,
    tip: ObjectId,
    bases: &[ObjectId],
    use_commit_graph: bool,
) -> Result<usize, GitReadError> {
    // A loop without commits of its own: nothing to walk.
    if bases.contains(&tip) {
        return Ok(0);
    }
    let walk = repo
        .rev_walk([tip])
        .with_hidden(bases.iter().copied())
        .use_commit_graph(use_commit_graph)
        .all()
        .map_err(git_read_err(
            repo,
            format!("could not walk history from {tip}"),
        ))?;
    let mut count = 0;
    for info in walk {
        info.map_err(git_read_err(
            repo,
            format!("could not walk history from {tip}"),
        ))?;
        count += 1;
    }
    Ok(count)
}

/// Is `ancestor` reachable from `descendant` (equal counts as yes)?
pub fn is_ancestor(
    repo: &gix::Repository,
    ancestor: ObjectId,
    descendant: ObjectId,
) -> Result<bool, GitReadError> {
    if ancestor == descendant {
        return Ok(true);
    }
    // `ancestor` is hidden by `descendant` exactly when it is reachable from it; otherwise it is the
    // first commit the walk yields, so one step answers the question.
    let mut walk = repo
        .rev_walk([ancestor])
        .with_hidden([descendant])
        .all()
        .map_err(git_read_err(
            repo,
            format!("could not walk history from {ancestor}"),
        ))?;
    match walk.next() {
        None => Ok(true),
        Some(Ok(_)) => Ok(false),
        Some(Err(source)) => Err(git_read_err(
            repo,
            format!("could not walk history from {ancestor}"),
        )(source)),
    }
}

/// One commit of a range, as the gate on the way out reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeCommit {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
}

/// Every commit reachable from `tip` but not from any of `hidden` (what a branch carries
/// into a target), with its tree and parents, newest first.
pub fn commits_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
) -> Result<Vec<RangeCommit>, GitReadError> {
    let walk = repo
        .rev_walk([tip])
        .with_hidden(hidden.iter().copied())
        .all()
        .map_err(git_read_err(
            repo,
            format!("could not walk history from {tip}"),
        ))?;
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for info in walk {
        let info = info.map_err(git_read_err(
            repo,
            format!("could not walk history from {tip}"),
        ))?;
        let commit = repo
            .objects
            .find_commit(&info.id, &mut buf)
            .map_err(|source| GitReadError::Decode {
                repo: repo.git_dir().to_owned(),
                id: info.id,
                source,
            })?;
        out.push(RangeCommit {
            id: info.id,
            tree: commit.tree(),
            parents: commit.parents().collect(),
        });
    }
    Ok(out)
}

/// The tree of a commit.
pub fn commit_tree(repo: &gix::Repository, id: ObjectId) -> Result<ObjectId, GitReadError> {
    let mut buf = Vec::new();
    let commit =
        repo.objects
            .find_commit(&id, &mut buf)
            .map_err(|source| GitReadError::Decode {
                repo: repo.git_dir().to_owned(),
                id,
                source,
            })?;
    Ok(commit.tree())
}

/// One entry of a tree: its name, git's mode (`0o100644`, `0o100755`, `0o120000`,
/// `0o160000`, `0o040000`) and object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeItem {
    pub name: BString,
    pub mode: u32,
    pub id: ObjectId,
}

/// The entries of one tree (not recursive), in the tree's order.
pub fn tree_items(repo: &gix::Repository, tree: ObjectId) -> Result<Vec<TreeItem>, GitReadError> {
    let mut buf = Vec::new();
    let decoded =
        repo.objects
            .find_tree(&tree, &mut buf)
            .map_err(|source| GitReadError::Decode {
                repo: repo.git_dir().to_owned(),
                id: tree,
                source,
            })?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| TreeItem {
            name: e.filename.to_owned(),
            mode: u32::from(e.mode.kind() as u16),
            id: e.oid.to_owned(),
        })
        .collect())
}

/// A blob read with a bound on what is inflated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundedBlob {
    Content(Vec<u8>),
    /// Larger than the bound: its size, read from the object's header without inflating it.
    TooLarge(u64),
}

/// The content of blob `id`, or only its size when that is over `limit` bytes.
pub fn read_blob_bounded(
    repo: &gix::Repository,
    id: ObjectId,
    limit: u64,
) -> Result<BoundedBlob, GitReadError> {
    let missing = || GitReadError::ObjectMissing {
        repo: repo.git_dir().to_owned(),
        id,
    };
    let decode = |source| GitReadError::Decode {
        repo: repo.git_dir().to_owned(),
        id,
        source,
    };
    let header = repo.objects.try_header(&id).map_err(decode)?;
    let size = header.ok_or_else(missing)?.size;
    if size > limit {
        return Ok(BoundedBlob::TooLarge(size));
    }
    let mut buf = Vec::new();
    let blob = repo.objects.find_blob(&id, &mut buf).map_err(decode)?;
    Ok(BoundedBlob::Content(blob.data.to_vec()))
}
