//! What the person reads for a configuration file that cannot be read or holds what the
//! schema does not take.

use crate::config::{at, schema, ConfigError};
use crate::error::Error;

/// The user-facing error, with what to do about it.
impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Error {
        let mut hints = Vec::new();
        match &e {
            ConfigError::Read { path, .. } | ConfigError::TooLarge { path } => {
                hints.push(format!("fix or remove {}", path.display()))
            }
            ConfigError::Syntax { path, line, .. } => {
                hints.push(format!("fix the TOML at {}", at(path, line)))
            }
            ConfigError::UnknownKey {
                path,
                line,
                key,
                suggestion,
            } => {
                match suggestion {
                    Some(s) => hints.push(format!("did you mean `{s}`?")),
                    None => hints.push(format!("known keys: {}", schema::known_keys().join(", "))),
                }
                hints.push(format!("fix or remove `{key}` at {}", at(path, line)));
            }
            ConfigError::BadValue {
                path,
                line,
                key,
                suggestion,
                ..
            } => {
                if let Some(s) = suggestion {
                    hints.push(format!("did you mean `{s}`?"));
                }
                if let Some(default) = schema::default_of(key) {
                    hints.push(format!("the default is {key} = {default}"));
                }
                hints.push(format!("fix {key} at {}", at(path, line)));
            }
            ConfigError::UnknownProfile { known, .. } => {
                hints.push(format!(
                    "the profiles are the folders of knowledge/.loopat/sandboxes/ with a sandbox.toml: {}",
                    known.join(", ")
                ));
            }
        }
        let mut err = Error::failure(e.to_string());
        if matches!(e, ConfigError::Read { .. }) {
            err = err.with_source(e);
        }
        err.hints = hints;
        err
    }
}
