//! Why a configuration was refused: typed, so that callers can tell a file they could not read from
//! a file that is wrong; each message names the file (or origin), the key or line, and the cause.

use crate::input::InputError;
use std::path::PathBuf;

/// A configuration that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read: missing, not a regular file, over the size limit.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: InputError,
    },
    /// The file is not UTF-8 text.
    #[error("{}: not UTF-8 text: {source}", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
        /// Where the bad bytes are.
        source: std::string::FromUtf8Error,
    },
    /// The text does not parse into a configuration: YAML syntax, an unknown key, a value of the
    /// wrong type or out of its range (the message has the line).
    #[error("{origin}: {message}")]
    Syntax {
        /// The file, or what the text came from.
        origin: String,
        /// What is wrong, where, and what is allowed.
        message: String,
    },
    /// Every value is fine alone, but not together, or not on this machine (a name that refers to
    /// nothing, sizes over a product limit or the machine's memory, cores it does not have).
    #[error("{origin}: {message}")]
    Invalid {
        /// The file, or what the text came from.
        origin: String,
        /// The key path, the value and what is allowed.
        message: String,
    },
}
