//! The process's last word on an abort (`process::exit_on_abort`).

use pyo3::prelude::*;

use crate::process;

/// From now on, an abort of this process (SIGABRT) writes `message` to stderr and exits with
/// `code` (the first message given stays).
#[pyfunction]
fn exit_on_abort(message: &str, code: i32) -> PyResult<()> {
    process::exit_on_abort(message, code).map_err(pyo3::exceptions::PyOSError::new_err)
}

/// Adds the process functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(exit_on_abort, m)?)?;
    Ok(())
}
