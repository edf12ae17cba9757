//! Moving and deleting `refs/heads/<branch>` in a trusted repository, with compare-and-swap.

use super::*;

/// Set or create `refs/heads/<branch>` in a trusted repository with compare-and-swap semantics
/// (`expected`: None = must not exist). Used to create the loop branch in the origin at the base.
///
/// Creating a branch that already points at `new` succeeds, as re-running an interrupted setup
/// should.
pub fn update_branch(
    repo: &gix::Repository,
    branch: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    reflog_message: &str,
) -> Result<(), ImportError> {
    let name = branch_ref_name(branch)?;
    if !repo.objects.exists(&new) {
        return Err(ImportError::MissingObject {
            repo: repo.git_dir().to_owned(),
            id: new,
        });
    }
    compare_and_swap(repo, &name, expected, new, reflog_message)
}

/// Delete refs/heads/<branch> if it currently points at `expected`.
pub fn delete_branch(
    repo: &gix::Repository,
    branch: &str,
    expected: ObjectId,
) -> Result<(), ImportError> {
    use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
    let name = branch_ref_name(branch)?;
    let edit = RefEdit {
        change: Change::Delete {
            expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(expected)),
            log: RefLog::AndReference,
        },
        name: name.clone(),
        deref: false,
    };
    apply_ref_edit(repo, &name, Some(expected), None, edit)
}

pub(super) fn compare_and_swap(
    repo: &gix::Repository,
    name: &gix::refs::FullName,
    expected: Option<ObjectId>,
    new: ObjectId,
    reflog_message: &str,
) -> Result<(), ImportError> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: reflog_message.into(),
            },
            expected: match expected {
                Some(id) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(id)),
                None => PreviousValue::MustNotExist,
            },
            new: gix::refs::Target::Object(new),
        },
        name: name.clone(),
        // Updating through a symbolic ref would move whatever it points at, i.e. another ref.
        deref: false,
    };
    apply_ref_edit(repo, name, expected, Some(new), edit)
}

/// `updated_to` is the value the edit sets, if it sets one: finding the ref there after a failed
/// transaction means the edit itself went through (gix writes the ref before cleaning up packed
/// refs, which can still fail).
pub(super) fn apply_ref_edit(
    repo: &gix::Repository,
    name: &gix::refs::FullName,
    expected: Option<ObjectId>,
    updated_to: Option<ObjectId>,
    edit: gix::refs::transaction::RefEdit,
) -> Result<(), ImportError> {
    // The reflog needs an identity; a user without one configured must still be able to import.
    let fallback_time = gix::date::Time::now_local_or_utc().to_string();
    let fallback = gix::actor::SignatureRef {
        name: "git-loop".into(),
        email: "git-loop@localhost".into(),
        time: &fallback_time,
    };
    let committer = match repo.committer() {
        Some(Ok(committer)) => committer,
        _ => fallback,
    };
    match repo.edit_references_as([edit], Some(committer)) {
        Ok(_) => Ok(()),
        Err(source) => {
            // The transaction checks the expected value while holding the lock. Whatever kind of
            // error it reports, a ref that no longer has the expected value means we lost the race,
            // which callers handle differently from an I/O failure.
            let actual = direct_ref_target(repo, name);
            match actual {
                Ok(actual) if updated_to.is_some() && actual == updated_to => Ok(()),
                Ok(actual) if actual != expected => Err(ImportError::RefMoved {
                    repo: repo.git_dir().to_owned(),
                    name: name.as_bstr().to_string(),
                    expected,
                    actual,
                }),
                Err(ImportError::SymbolicRef { .. }) => Err(ImportError::SymbolicRef {
                    repo: repo.git_dir().to_owned(),
                    name: name.as_bstr().to_string(),
                }),
                _ => Err(ImportError::Git {
                    repo: repo.git_dir().to_owned(),
                    action: format!("could not update {name}"),
                    source,
                }),
            }
        }
    }
}

/// The object id a ref stores directly, without peeling: compare-and-swap compares stored values.
pub(super) fn direct_ref_target(
    repo: &gix::Repository,
    name: &gix::refs::FullName,
) -> Result<Option<ObjectId>, ImportError> {
    let Some(reference) = repo
        .try_find_reference(name)
        .map_err(import_git_err(repo, format!("could not read {name}")))?
    else {
        return Ok(None);
    };
    match reference.target().try_id() {
        Some(id) => Ok(Some(id.to_owned())),
        None => Err(ImportError::SymbolicRef {
            repo: repo.git_dir().to_owned(),
            name: name.as_bstr().to_string(),
        }),
    }
}
