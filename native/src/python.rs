//! PyO3 bindings: the `warehouse._native` extension module.

use pyo3::prelude::*;

/// The `warehouse._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    crate::python_retrieval::register(m)?;
    Ok(())
}
