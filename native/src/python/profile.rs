//! The direction check's trigram similarities.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use crate::profile;

/// Cosine similarity of the test texts' character-trigram profile to the training sources' and
/// to the training targets' (texts lowercased by the caller).
#[pyfunction]
fn side_similarities(
    py: Python<'_>,
    test: Vec<PyBackedStr>,
    sources: Vec<PyBackedStr>,
    targets: Vec<PyBackedStr>,
) -> (f64, f64) {
    py.detach(|| profile::side_similarities(&test, &sources, &targets))
}

/// Adds the profile functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(side_similarities, m)?)?;
    Ok(())
}
