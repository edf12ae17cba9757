//! What the person reads when a loop's port cannot be forwarded, removed or read.

use crate::error::Error;
use crate::ports::PortError;

impl From<PortError> for Error {
    fn from(e: PortError) -> Error {
        let message = e.to_string();
        match e {
            PortError::OtherLoop { owner, .. } => Error::usage(message).hint(format!(
                "choose another --host, or leave --host out for a port of this loop's own (`git loop port {owner}` lists {owner}'s)"
            )),
            PortError::InUse { id, inside, .. } => Error::usage(message).hint(format!(
                "leave --host out: git loop port {id} {inside} picks a free one"
            )),
            PortError::NotForwarded { id, .. } => {
                Error::usage(message).hint(format!("`git loop port {id}` lists its ports"))
            }
            PortError::NoSession { id } => {
                Error::failure(message).hint(format!("start it: git loop up {id}"))
            }
            PortError::SessionEnded { id } => {
                Error::failure(message).hint(format!("start it again: git loop up {id}"))
            }
            PortError::NoAnswer { id } => Error::failure(message).hint(format!(
                "end it and start again: git loop down {id} && git loop up {id}"
            )),
            PortError::BadFile { path, .. } => Error::failure(message).hint(format!(
                "remove it to derive the ports again: rm {}",
                path.display()
            )),
            PortError::Listen { .. } | PortError::Exhausted { .. } | PortError::Refused { .. } => {
                Error::failure(message)
            }
        }
    }
}
