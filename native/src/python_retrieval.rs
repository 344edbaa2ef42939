//! PyO3 binding of the retrieval engine: `warehouse._native.RetrievalIndex`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyDict;

use crate::retrieval::{
    rows_from_joined, with_threads, Hit, Mode, RetrievalError, RetrievalIndex, Stats,
};

fn to_py_err(e: RetrievalError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// An optional argument that must be a positive integer.
fn at_least_one<T: TryFrom<i64>>(name: &str, value: Option<i64>) -> PyResult<Option<T>> {
    value
        .map(|v| {
            (v >= 1)
                .then(|| T::try_from(v).ok())
                .flatten()
                .ok_or_else(|| PyValueError::new_err(format!("{name} must be at least 1, got {v}")))
        })
        .transpose()
}

/// The search mode and thread count of a search call.
fn search_args(
    mode: &str,
    rare_grams: i64,
    shortlist: i64,
    threads: Option<i64>,
) -> PyResult<(Mode, Option<usize>)> {
    Ok((
        mode_arg(mode, rare_grams, shortlist)?,
        at_least_one("threads", threads)?,
    ))
}

fn mode_arg(mode: &str, rare_grams: i64, shortlist: i64) -> PyResult<Mode> {
    let count = |name: &str, v: i64| {
        usize::try_from(v)
            .map_err(|_| PyValueError::new_err(format!("{name} must be at least 1, got {v}")))
    };
    Mode::parse(
        mode,
        count("rare_grams", rare_grams)?,
        count("shortlist", shortlist)?,
    )
    .map_err(to_py_err)
}

fn stats_dict<'py>(py: Python<'py>, stats: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("postings_visited", stats.postings_visited)?;
    d.set_item("postings_total", stats.postings_total)?;
    d.set_item("candidates_verified", stats.candidates_verified)?;
    d.set_item("searches_counted", stats.searches_counted)?;
    d.set_item("pairs_counted", stats.pairs_counted)?;
    Ok(d)
}

/// Columns of one side's hits, added to `d` under `prefix` ("" for single-side searches).
fn hit_columns<'a>(
    d: &Bound<'_, PyDict>,
    prefix: &str,
    hits: impl Iterator<Item = &'a Hit> + Clone,
) -> PyResult<()> {
    let exposure: Vec<f64> = hits.clone().map(|h| h.score.to_f64()).collect();
    let nn: Vec<Option<u32>> = hits.clone().map(|h| h.row).collect();
    let exact: Vec<bool> = hits.map(|h| h.exact).collect();
    let (e, n, x) = if prefix.is_empty() {
        ("exposure".to_owned(), "nn".to_owned(), "exact".to_owned())
    } else {
        (
            format!("{prefix}_exposure"),
            format!("{prefix}_nn"),
            format!("{prefix}_exact"),
        )
    };
    d.set_item(e, exposure)?;
    d.set_item(n, nn)?;
    d.set_item(x, exact)?;
    Ok(())
}

/// N-gram index over aligned, normalised training sources and targets for exposure audits.
#[pyclass(frozen, name = "RetrievalIndex", module = "warehouse._native")]
pub struct PyRetrievalIndex {
    inner: RetrievalIndex,
}

#[pymethods]
impl PyRetrievalIndex {
    #[new]
    #[pyo3(signature = (sources, targets, orders = vec![3, 4, 5], threads = None, dense_min_df = None))]
    fn new(
        py: Python<'_>,
        sources: Vec<PyBackedStr>,
        targets: Vec<PyBackedStr>,
        orders: Vec<i64>,
        threads: Option<i64>,
        dense_min_df: Option<i64>,
    ) -> PyResult<Self> {
        let threads = at_least_one("threads", threads)?;
        let dense_min_df = at_least_one("dense_min_df", dense_min_df)?;
        let inner = py
            .detach(|| {
                RetrievalIndex::build_with(&sources, &targets, &orders, threads, dense_min_df)
            })
            .map_err(to_py_err)?;
        Ok(Self { inner })
    }

    /// Index of `rows` aligned training pairs given as two newline-joined strings of texts
    /// already normalised except for whitespace, which is collapsed here as Python's
    /// `" ".join(text.split())` would.
    #[staticmethod]
    #[pyo3(signature = (sources, targets, rows, orders = vec![3, 4, 5], threads = None, dense_min_df = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_joined(
        py: Python<'_>,
        sources: PyBackedStr,
        targets: PyBackedStr,
        rows: usize,
        orders: Vec<i64>,
        threads: Option<i64>,
        dense_min_df: Option<i64>,
    ) -> PyResult<Self> {
        let threads = at_least_one("threads", threads)?;
        let dense_min_df = at_least_one("dense_min_df", dense_min_df)?;
        let inner = py
            .detach(|| -> Result<RetrievalIndex, RetrievalError> {
                let (src, tgt) = with_threads(threads, || {
                    rayon::join(
                        || rows_from_joined(&sources, rows),
                        || rows_from_joined(&targets, rows),
                    )
                })?;
                RetrievalIndex::build_with(&src?, &tgt?, &orders, threads, dense_min_df)
            })
            .map_err(to_py_err)?;
        Ok(Self { inner })
    }

    /// Number of training rows.
    #[getter]
    fn n_docs(&self) -> usize {
        self.inner.rows()
    }

    /// The n-gram orders (ascending, deduplicated).
    #[getter]
    fn orders(&self) -> Vec<usize> {
        self.inner.orders().to_vec()
    }

    /// Approximate heap size of the index in bytes.
    #[getter]
    fn heap_bytes(&self) -> usize {
        self.inner.heap_bytes()
    }

    /// Source, target and pair exposure of each test segment (normalised texts).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (sources, refs, mode = "exact", rare_grams = 8, shortlist = 64, threads = None))]
    fn audit<'py>(
        &self,
        py: Python<'py>,
        sources: Vec<PyBackedStr>,
        refs: Vec<Vec<PyBackedStr>>,
        mode: &str,
        rare_grams: i64,
        shortlist: i64,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (mode, threads) = search_args(mode, rare_grams, shortlist, threads)?;
        let (rows, stats) = py
            .detach(|| self.inner.audit(&sources, &refs, mode, threads))
            .map_err(to_py_err)?;
        let d = PyDict::new(py);
        hit_columns(&d, "source", rows.iter().map(|r| &r.source))?;
        hit_columns(&d, "target", rows.iter().map(|r| &r.target.hit))?;
        let ref_idx: Vec<Option<u32>> = rows.iter().map(|r| r.target.ref_idx).collect();
        d.set_item("target_ref_idx", ref_idx)?;
        hit_columns(&d, "pair", rows.iter().map(|r| &r.pair))?;
        d.set_item("stats", stats_dict(py, &stats)?)?;
        Ok(d)
    }

    /// Source exposure of each query: dict(exposure, nn, exact, stats).
    #[pyo3(signature = (queries, mode = "exact", rare_grams = 8, shortlist = 64, threads = None))]
    fn search_source<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<PyBackedStr>,
        mode: &str,
        rare_grams: i64,
        shortlist: i64,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (mode, threads) = search_args(mode, rare_grams, shortlist, threads)?;
        let (hits, stats) = py
            .detach(|| self.inner.search_source(&queries, mode, threads))
            .map_err(to_py_err)?;
        let d = PyDict::new(py);
        hit_columns(&d, "", hits.iter())?;
        d.set_item("stats", stats_dict(py, &stats)?)?;
        Ok(d)
    }

    /// Target exposure of each query's references: dict(exposure, nn, ref_idx, exact, stats).
    #[pyo3(signature = (refs, mode = "exact", rare_grams = 8, shortlist = 64, threads = None))]
    fn search_target<'py>(
        &self,
        py: Python<'py>,
        refs: Vec<Vec<PyBackedStr>>,
        mode: &str,
        rare_grams: i64,
        shortlist: i64,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (mode, threads) = search_args(mode, rare_grams, shortlist, threads)?;
        let (hits, stats) = py
            .detach(|| self.inner.search_target(&refs, mode, threads))
            .map_err(to_py_err)?;
        let d = PyDict::new(py);
        hit_columns(&d, "", hits.iter().map(|h| &h.hit))?;
        let ref_idx: Vec<Option<u32>> = hits.iter().map(|h| h.ref_idx).collect();
        d.set_item("ref_idx", ref_idx)?;
        d.set_item("stats", stats_dict(py, &stats)?)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "RetrievalIndex(n_docs={}, orders={:?})",
            self.inner.rows(),
            self.inner.orders()
        )
    }
}

/// Adds the retrieval classes to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRetrievalIndex>()
}
