//! The error type of the retrieval engine.

use std::fmt;

/// Why a retrieval call failed; the Python binding turns every variant into `ValueError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetrievalError {
    /// The caller passed something the definitions do not allow.
    InvalidArgument(String),
    /// An internal consistency check failed (a bug, reported instead of panicking).
    Internal(String),
}

impl fmt::Display for RetrievalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArgument(msg) => write!(f, "{msg}"),
            Self::Internal(msg) => write!(f, "internal retrieval error: {msg}"),
        }
    }
}

impl std::error::Error for RetrievalError {}

/// Result alias of the retrieval engine.
pub type Result<T> = std::result::Result<T, RetrievalError>;

pub(crate) fn invalid(msg: impl Into<String>) -> RetrievalError {
    RetrievalError::InvalidArgument(msg.into())
}

pub(crate) fn internal(msg: impl Into<String>) -> RetrievalError {
    RetrievalError::Internal(msg.into())
}
