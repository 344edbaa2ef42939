//! The MinHash lens as `warehouse._native.MinHashIndex`: the same audit interface and result
//! buffers as `RetrievalIndex`, so the audit engine drives either.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyDict;

use super::retrieval::{at_least_one, audit_dict, Joined};
use crate::minhash::MinHashIndex;
use crate::retrieval::{rows_from_joined, with_threads, RetrievalError};

/// MinHash signatures and LSH bands over aligned, normalised training sources and targets.
#[pyclass(frozen, name = "MinHashIndex", module = "warehouse._native")]
pub struct PyMinHashIndex {
    inner: MinHashIndex,
}

#[pymethods]
impl PyMinHashIndex {
    /// Index of `rows` aligned training pairs given as two newline-joined strings (normalised;
    /// whitespace is collapsed here), with signatures of `bins` bins cut into `bands` bands.
    #[staticmethod]
    #[pyo3(signature = (sources, targets, rows, orders, bins, bands, threads = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_joined(
        py: Python<'_>,
        sources: Joined,
        targets: Joined,
        rows: usize,
        orders: Vec<i64>,
        bins: usize,
        bands: usize,
        threads: Option<i64>,
    ) -> PyResult<Self> {
        let threads = at_least_one("threads", threads)?;
        let (sources, targets) = (sources.text("sources")?, targets.text("targets")?);
        let inner = py.detach(|| -> Result<MinHashIndex, RetrievalError> {
            with_threads(threads, || {
                let src = rows_from_joined(sources, rows)?;
                let tgt = rows_from_joined(targets, rows)?;
                MinHashIndex::build(&src, &tgt, &orders, bins, bands)
            })?
        })?;
        Ok(Self { inner })
    }

    /// One xxh3-64 checksum of the index's signatures and exact texts (it names the index in
    /// an audit's signature).
    fn checksum(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.inner.checksum())
    }

    /// Number of training rows.
    #[getter]
    fn n_docs(&self) -> usize {
        self.inner.rows()
    }

    /// Source, target and pair hits of each test segment (normalised texts), as
    /// `RetrievalIndex.audit` gives them; `search` is accepted for the same interface.
    #[pyo3(signature = (sources, refs, search, threads = None))]
    fn audit<'py>(
        &self,
        py: Python<'py>,
        sources: Vec<PyBackedStr>,
        refs: Vec<Vec<PyBackedStr>>,
        search: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let _ = search;
        let threads = at_least_one("threads", threads)?;
        let (rows, stats) =
            py.detach(|| with_threads(threads, || self.inner.audit(&sources, &refs)))??;
        audit_dict(py, &rows, &stats)
    }

    fn __repr__(&self) -> String {
        format!("MinHashIndex(n_docs={})", self.inner.rows())
    }
}

/// Adds the MinHash class to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMinHashIndex>()
}
