//! The one mapping of native errors to Python exceptions.
//!
//! Every kernel error type converts to `PyErr` here, and arguments a binding rejects before
//! calling a kernel are `ArgumentError`s: all of them raise `ValueError` with the error's message;
//! a stored index that cannot be read or written raises `IndexFileError`, a `ValueError`.

use std::fmt;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::PyErr;

use crate::bootstrap::BootstrapError;
use crate::cyzil::CyzilError;
use crate::retrieval::{PersistError, RetrievalError};
use crate::substring::SubstringError;
use crate::ter::TerError;

create_exception!(
    warehouse._native,
    IndexFileError,
    PyValueError,
    "A stored index file that cannot be used (missing, truncated, corrupted, foreign, or stored \
     under another key), or that cannot be written."
);

/// An argument a binding rejects itself (a shape, a range) before any kernel runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError(pub String);

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An `ArgumentError` as the `PyErr` bindings return.
pub fn invalid(msg: impl Into<String>) -> PyErr {
    ArgumentError(msg.into()).into()
}

/// The Python exception of every native error: `ValueError(message)`.
fn value_error(err: impl fmt::Display) -> PyErr {
    PyValueError::new_err(err.to_string())
}

impl From<ArgumentError> for PyErr {
    fn from(err: ArgumentError) -> Self {
        value_error(err)
    }
}

impl From<BootstrapError> for PyErr {
    fn from(err: BootstrapError) -> Self {
        value_error(err)
    }
}

impl From<CyzilError> for PyErr {
    fn from(err: CyzilError) -> Self {
        value_error(err)
    }
}

impl From<RetrievalError> for PyErr {
    fn from(err: RetrievalError) -> Self {
        value_error(err)
    }
}

impl From<TerError> for PyErr {
    fn from(err: TerError) -> Self {
        value_error(err)
    }
}

impl From<PersistError> for PyErr {
    fn from(err: PersistError) -> Self {
        IndexFileError::new_err(err.to_string())
    }
}

impl From<SubstringError> for PyErr {
    fn from(err: SubstringError) -> Self {
        match err {
            SubstringError::InvalidArgument(_) => value_error(err),
            SubstringError::File { .. } => IndexFileError::new_err(err.to_string()),
        }
    }
}
