//! What the person reads when `new` does not copy the files `.worktreeinclude` names.

use crate::error::Error;
use crate::include::{IncludeError, FILE};

impl From<IncludeError> for Error {
    fn from(e: IncludeError) -> Error {
        let message = e.to_string();
        match e {
            IncludeError::List(source) => Error::failure(message).with_source(source),
            IncludeError::Read { source, .. } | IncludeError::Write { source, .. } => {
                Error::failure(message).with_source(source)
            }
            IncludeError::Rules { .. } => Error::failure(message)
                .hint(format!("the rules of {FILE} are in gitignore's syntax")),
            IncludeError::Outside { .. } | IncludeError::NotAFolder { .. } => {
                Error::failure(message).hint(format!("take the entry out of {FILE}"))
            }
            IncludeError::TooMany { dir } => Error::failure(message).hint(format!(
                "remove {FILE}, or the ignored files no loop needs (under {dir})"
            )),
            IncludeError::TooBig { .. } => Error::failure(message)
                .hint(format!("drop it from {FILE}"))
                .hint("or raise the bound: git loop config set --operator include.max_file_size 50M"),
            IncludeError::TooMuch { rules, .. } => Error::failure(message)
                .hint(format!("name fewer in {}", rules.display()))
                .hint("or raise the bound: git loop config set --operator include.max_total_size 500M"),
            IncludeError::Secret { profile_asked, .. } => {
                let e = Error::failure(message)
                    .hint(
                        "keep such a value in a vault, bound to the host it is for, and the sandbox gets a placeholder that only requests to that host turn into the value: git loop vault set VAULT env NAME --for HOST",
                    )
                    .hint(format!("then drop the file from {FILE}"));
                if profile_asked {
                    e.hint("the profile's include_secrets = true is honoured only where the operator config says so: git loop config set --operator include.allow_secrets true")
                } else {
                    e.hint("or copy it anyway: include_secrets = true in the loop's sandbox profile, where the operator config sets include.allow_secrets = true")
                }
            }
        }
    }
}
