//! The retrieval engine as `warehouse._native.RetrievalIndex`. Searches return their columns as
//! Arrow-layout buffers (see `columns`), one dict per side.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyDict};

use super::columns::{bitmap, float64, nullable, uint64};
use super::error::{invalid, IndexFileError};
use crate::retrieval::{
    kernel_name, rows_from_joined, with_threads, AuditRow, Hit, Measure, Mode, RetrievalError,
    RetrievalIndex, Search, Stats, FORMAT_VERSION,
};

/// Newline-joined texts as a `str`, or as UTF-8 `bytes` (which spare Python a wide copy of
/// text with characters beyond Latin-1).
#[derive(FromPyObject)]
pub(super) enum Joined {
    Str(PyBackedStr),
    Bytes(PyBackedBytes),
}

impl Joined {
    /// The texts, checked to be UTF-8 when given as bytes.
    pub(super) fn text(&self, name: &str) -> PyResult<&str> {
        match self {
            Self::Str(s) => Ok(s),
            Self::Bytes(b) => {
                std::str::from_utf8(b).map_err(|e| invalid(format!("{name} is not UTF-8: {e}")))
            }
        }
    }
}

/// An optional argument that must be a positive integer.
pub(super) fn at_least_one<T: TryFrom<i64>>(name: &str, value: Option<i64>) -> PyResult<Option<T>> {
    value
        .map(|v| {
            (v >= 1)
                .then(|| T::try_from(v).ok())
                .flatten()
                .ok_or_else(|| invalid(format!("{name} must be at least 1, got {v}")))
        })
        .transpose()
}

/// A count argument that must not be negative.
fn count(name: &str, value: i64) -> PyResult<usize> {
    usize::try_from(value).map_err(|_| invalid(format!("{name} must be at least 1, got {value}")))
}

/// The search an object describes (`warehouse.exposure.config.SearchSettings`: its `mode`,
/// `rare_grams`, `shortlist` and `measure`) and the thread count of a search call.
fn search_args(
    search: &Bound<'_, PyAny>,
    threads: Option<i64>,
) -> PyResult<(Search, Option<usize>)> {
    let field = |name: &str| {
        search.getattr(name).map_err(|_| {
            invalid(format!(
                "search settings need mode, rare_grams, shortlist and measure; {name} is missing"
            ))
        })
    };
    let mode: PyBackedStr = field("mode")?.extract()?;
    let mode = Mode::parse(
        &mode,
        count("rare_grams", field("rare_grams")?.extract()?)?,
        count("shortlist", field("shortlist")?.extract()?)?,
    )?;
    let measure: PyBackedStr = field("measure")?.extract()?;
    let measure = Measure::parse(&measure).ok_or_else(|| {
        invalid(format!(
            "measure must be 'jaccard' or 'containment', got {:?}",
            &*measure
        ))
    })?;
    Ok((Search { mode, measure }, at_least_one("threads", threads)?))
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

/// One side's hits as buffers: `exposure` (float64) and the exact ratio behind it, `num` over
/// `den` (uint64, unreduced), `nn` (int64) with its validity bitmap `nn_valid`, and `exact`
/// (bitmap).
fn hit_columns<'py, 'a>(
    py: Python<'py>,
    hits: impl ExactSizeIterator<Item = &'a Hit> + Clone,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "exposure",
        float64(py, hits.clone().map(|h| h.score.to_f64()))?,
    )?;
    d.set_item("num", uint64(py, hits.clone().map(|h| h.score.num))?)?;
    d.set_item("den", uint64(py, hits.clone().map(|h| h.score.den))?)?;
    let (nn, nn_valid) = nullable(
        py,
        hits.clone().map(|h| h.row.map(i64::from)),
        i64::to_ne_bytes,
    )?;
    d.set_item("nn", nn)?;
    d.set_item("nn_valid", nn_valid)?;
    d.set_item("exact", bitmap(py, hits.map(|h| h.exact))?)?;
    Ok(d)
}

/// Adds the reference that reached each target hit to `d`: `ref_idx` (int32) and its validity
/// bitmap `ref_idx_valid`.
fn add_ref_idx(
    d: &Bound<'_, PyDict>,
    ref_idx: impl ExactSizeIterator<Item = Option<u32>> + Clone,
) -> PyResult<()> {
    if let Some(r) = ref_idx
        .clone()
        .flatten()
        .find(|&r| i32::try_from(r).is_err())
    {
        return Err(invalid(format!(
            "reference index {r} does not fit in int32"
        )));
    }
    let as_i32 = |r: u32| i32::try_from(r).unwrap_or(i32::MAX);
    let (values, valid) = nullable(d.py(), ref_idx.map(|r| r.map(as_i32)), i32::to_ne_bytes)?;
    d.set_item("ref_idx", values)?;
    d.set_item("ref_idx_valid", valid)?;
    Ok(())
}

/// An audit's rows as `RetrievalIndex.audit` returns them: dict(source, target, pair, stats),
/// each side a dict of column buffers.
pub(super) fn audit_dict<'py>(
    py: Python<'py>,
    rows: &[AuditRow],
    stats: &Stats,
) -> PyResult<Bound<'py, PyDict>> {
    let target = hit_columns(py, rows.iter().map(|r| &r.target.hit))?;
    add_ref_idx(&target, rows.iter().map(|r| r.target.ref_idx))?;
    let d = PyDict::new(py);
    d.set_item("source", hit_columns(py, rows.iter().map(|r| &r.source))?)?;
    d.set_item("target", target)?;
    d.set_item("pair", hit_columns(py, rows.iter().map(|r| &r.pair))?)?;
    d.set_item("stats", stats_dict(py, stats)?)?;
    Ok(d)
}

/// N-gram index over aligned, normalised training sources and targets for exposure audits.
#[pyclass(frozen, name = "RetrievalIndex", module = "warehouse._native")]
pub struct PyRetrievalIndex {
    inner: RetrievalIndex,
}

#[pymethods]
impl PyRetrievalIndex {
    #[new]
    #[pyo3(signature = (sources, targets, orders, threads = None, dense_min_df = None))]
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
        let inner = py.detach(|| {
            RetrievalIndex::build_with(&sources, &targets, &orders, threads, dense_min_df)
        })?;
        Ok(Self { inner })
    }

    /// Index of `rows` aligned training pairs given as two newline-joined strings (`str`, or
    /// UTF-8 `bytes`) of texts already normalised except for whitespace, which is collapsed here
    /// as Python's `" ".join(text.split())` would.
    #[staticmethod]
    #[pyo3(signature = (sources, targets, rows, orders, threads = None, dense_min_df = None))]
    fn from_joined(
        py: Python<'_>,
        sources: Joined,
        targets: Joined,
        rows: usize,
        orders: Vec<i64>,
        threads: Option<i64>,
        dense_min_df: Option<i64>,
    ) -> PyResult<Self> {
        let threads = at_least_one("threads", threads)?;
        let dense_min_df = at_least_one("dense_min_df", dense_min_df)?;
        let (sources, targets) = (sources.text("sources")?, targets.text("targets")?);
        let inner = py.detach(|| -> Result<RetrievalIndex, RetrievalError> {
            let (src, tgt) = with_threads(threads, || {
                rayon::join(
                    || rows_from_joined(sources, rows),
                    || rows_from_joined(targets, rows),
                )
            })?;
            RetrievalIndex::build_with(&src?, &tgt?, &orders, threads, dense_min_df)
        })?;
        Ok(Self { inner })
    }

    /// Stores the index at `path` under `key` with `meta` (written to a temporary file, then
    /// renamed); returns the file's length in bytes.
    fn save(&self, py: Python<'_>, path: PathBuf, key: &[u8], meta: &[u8]) -> PyResult<u64> {
        let (key, meta) = (key.to_vec(), meta.to_vec());
        Ok(py.detach(|| self.inner.save(&path, &key, &meta))?)
    }

    /// The index stored at `path` under `key`, memory-mapped after checking every checksum.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf, key: &[u8]) -> PyResult<Self> {
        let key = key.to_vec();
        let (inner, _meta) = py.detach(|| RetrievalIndex::load(&path, &key))?;
        Ok(Self { inner })
    }

    /// One xxh3-64 checksum of the index's arrays, the same whether built or loaded (it names
    /// the index in an audit's signature).
    fn checksum(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.inner.checksum())
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

    /// Source, target and pair exposure of each test segment (normalised texts):
    /// dict(source, target, pair, stats), each side a dict of column buffers.
    #[pyo3(signature = (sources, refs, search, threads = None))]
    fn audit<'py>(
        &self,
        py: Python<'py>,
        sources: Vec<PyBackedStr>,
        refs: Vec<Vec<PyBackedStr>>,
        search: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (search, threads) = search_args(search, threads)?;
        let (rows, stats) = py.detach(|| self.inner.audit(&sources, &refs, search, threads))?;
        audit_dict(py, &rows, &stats)
    }

    /// Source exposure of each query: the column buffers (exposure, nn, nn_valid, exact) and
    /// stats.
    #[pyo3(signature = (queries, search, threads = None))]
    fn search_source<'py>(
        &self,
        py: Python<'py>,
        queries: Vec<PyBackedStr>,
        search: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (search, threads) = search_args(search, threads)?;
        let (hits, stats) = py.detach(|| self.inner.search_source(&queries, search, threads))?;
        let d = hit_columns(py, hits.iter())?;
        d.set_item("stats", stats_dict(py, &stats)?)?;
        Ok(d)
    }

    /// Target exposure of each query's references: the column buffers (exposure, nn, nn_valid,
    /// ref_idx, ref_idx_valid, exact) and stats.
    #[pyo3(signature = (refs, search, threads = None))]
    fn search_target<'py>(
        &self,
        py: Python<'py>,
        refs: Vec<Vec<PyBackedStr>>,
        search: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (search, threads) = search_args(search, threads)?;
        let (hits, stats) = py.detach(|| self.inner.search_target(&refs, search, threads))?;
        let d = hit_columns(py, hits.iter().map(|h| &h.hit))?;
        add_ref_idx(&d, hits.iter().map(|h| h.ref_idx))?;
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

/// The key, metadata, format version and length of the index stored at `path`, read from its
/// header and metadata alone: dict(key, meta, format_version, bytes).
#[pyfunction]
fn stored_index_info<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let info = py.detach(|| RetrievalIndex::info(&path))?;
    let d = PyDict::new(py);
    d.set_item("key", PyBytes::new(py, &info.key))?;
    d.set_item("meta", PyBytes::new(py, &info.meta))?;
    d.set_item("format_version", info.version)?;
    d.set_item("bytes", info.bytes)?;
    Ok(d)
}

/// The kernel the exact search counts with on this CPU: "avx512", "avx2" or "portable".
#[pyfunction]
fn search_kernel() -> &'static str {
    kernel_name()
}

/// Adds the retrieval classes, functions and constants to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRetrievalIndex>()?;
    m.add_function(wrap_pyfunction!(stored_index_info, m)?)?;
    m.add_function(wrap_pyfunction!(search_kernel, m)?)?;
    m.add("INDEX_FORMAT_VERSION", FORMAT_VERSION)?;
    m.add("IndexFileError", m.py().get_type::<IndexFileError>())
}
