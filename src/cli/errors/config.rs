//! What the person reads for a configuration file that cannot be read or holds what the
//! schema does not take, and for what `config set` and `unset` do not take.

use crate::config::edit::EditError;
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

impl From<EditError> for Error {
    fn from(e: EditError) -> Error {
        // What was typed is wrong (exit 2); a layer's file that is not TOML is not.
        let err = match e {
            EditError::NotToml { .. } => Error::failure(e.to_string()),
            _ => Error::usage(e.to_string()),
        };
        let did_you_mean = |err: Error, close: Option<String>| match close {
            Some(close) => err.hint(format!("did you mean `{close}`?")),
            None => err,
        };
        match e {
            EditError::Section { keys, .. } => err.hint(format!("its keys: {}", keys.join(", "))),
            EditError::UnknownKey { close, keys, .. } => {
                did_you_mean(err, close).hint(format!("known keys: {}", keys.join(", ")))
            }
            EditError::Invalid {
                key,
                close,
                choices,
                default,
                ..
            } => {
                let err = did_you_mean(err, close);
                match default {
                    _ if !choices.is_empty() => {
                        err.hint(format!("{key} takes one of: {}", choices.join(", ")))
                    }
                    Some(default) => err.hint(format!("the default is {key} = {default}")),
                    None => err,
                }
            }
            EditError::NoProfile {
                path, close, known, ..
            } => did_you_mean(
                err.hint(format!("{} does not exist", path.display())),
                close,
            )
            .hint(format!("the profiles: {}", known.join(", "))),
            EditError::OperatorOnly { key, operator, .. } => err.hint(format!(
                "the operator config is {}: git loop config set --operator {key} VALUE",
                operator.display()
            )),
            EditError::WrongType { key, default, .. } => {
                err.hint(format!("the default is {key} = {default}"))
            }
            EditError::NotToml { path, .. } => {
                err.hint(format!("fix or remove {}", path.display()))
            }
        }
    }
}
