//! What the person reads when the gate refuses a branch, or a pull request cannot be opened.

use crate::error::Error;
use crate::gate::{self, Refused, Unchecked};
use crate::pr::PrError;

impl From<Refused> for Error {
    fn from(r: Refused) -> Error {
        let id = &r.id;
        let mut e = Error::failure(r.to_string()).hint("nothing was changed");
        if r.secrets {
            e = e
                .hint(format!(
                    "take the secret out of the branch's history inside the loop (`git loop shell {id}`, \
                     then `git rebase -i`): a later commit that deletes it still carries it"
                ))
                .hint(
                    "a false positive: add its exact value to the operator config: \
                     git loop config set --operator guard.allow '[\"VALUE\"]'",
                );
        }
        if r.unscannable {
            e = e.hint(format!(
                "gitlinks, nested .git folders and files too large to scan never land: take them \
                 out of the branch's history inside the loop (`git loop shell {id}`)"
            ));
        }
        if !r.unaccepted.is_empty() {
            let flags: Vec<String> = r
                .unaccepted
                .iter()
                .map(|p| format!("--accept-policy {}", gate::shell_word(p)))
                .collect();
            e = e.hint(format!("review it first: git loop review {id}"));
            e = e.hint(format!(
                "to {} it with these policy changes: {} {}",
                r.what,
                r.retry,
                flags.join(" ")
            ));
        }
        e
    }
}

impl From<Unchecked> for Error {
    fn from(e: Unchecked) -> Error {
        let message = e.to_string();
        Error::failure(message)
            .with_source(e.source)
            .hint("`git loop doctor` checks the workspace")
    }
}

impl From<PrError> for Error {
    fn from(e: PrError) -> Error {
        let message = e.to_string();
        match e {
            PrError::Detached(_) => Error::usage(message)
                .hint("merge it locally with `git loop merge ID --into BRANCH`"),
            PrError::NothingToPropose(_) => {
                Error::usage(message).hint("publish its notes with `git loop publish`")
            }
            PrError::NoRemote { repo, .. } => Error::failure(message).hint(format!(
                "add one: git -C {} remote add origin URL",
                repo.display()
            )),
            PrError::Push { source, .. } => Error::failure(message)
                .with_source(source)
                .hint("check your access to the remote, then run `git loop pr` again"),
            PrError::Unchecked {
                base,
                origin,
                source,
                ..
            } => Error::failure(message)
                .with_source(source)
                .hint(format!("is {base} a branch of {}?", origin.display())),
            PrError::Open { url, .. } => Error::failure(message)
                .hint(format!("the branch is pushed; open it by hand: {url}")),
        }
    }
}
