//! The error type of the substring lens.

use std::fmt;
use std::path::PathBuf;

/// Why a substring-lens call failed: a bad argument (`ValueError` in Python), or a shard file
/// that cannot be read or written (`IndexFileError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubstringError {
    /// The caller passed something the definitions do not allow.
    InvalidArgument(String),
    /// A stored shard that cannot be used (missing, truncated, corrupted, foreign, another key),
    /// or that cannot be written.
    File { path: PathBuf, problem: String },
}

impl fmt::Display for SubstringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(msg) => write!(f, "{msg}"),
            Self::File { path, problem } => {
                write!(f, "suffix-array shard {}: {problem}", path.display())
            }
        }
    }
}

impl std::error::Error for SubstringError {}

/// Result alias of the substring lens.
pub type Result<T> = std::result::Result<T, SubstringError>;

pub(crate) fn invalid(msg: impl Into<String>) -> SubstringError {
    SubstringError::InvalidArgument(msg.into())
}

pub(crate) fn file_problem(path: &std::path::Path, problem: impl Into<String>) -> SubstringError {
    SubstringError::File {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}
