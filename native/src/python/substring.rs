//! The substring lens as `warehouse._native.SubstringIndex`: suffix-array shards built and
//! stored one at a time, opened together, and asked about test segments; answers come back as
//! Arrow-layout column buffers (see `columns`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::columns::{nullable, uint64};
use super::error::invalid;
use super::retrieval::{at_least_one, Joined};
use crate::retrieval::{rows_from_joined, with_threads};
use crate::substring::{lens_of_segments, SuffixShard, FILE_VERSION, MAX_SHARD_BYTES};

/// Suffix-array shards of a corpus, in corpus order, each with the documents before it.
#[pyclass(frozen, name = "SubstringIndex", module = "warehouse._native")]
pub struct PySubstringIndex {
    shards: Vec<(SuffixShard, u64)>,
}

/// A list of non-negative counts as `usize`.
fn orders_of(orders: Vec<i64>) -> PyResult<Vec<usize>> {
    orders
        .into_iter()
        .map(|n| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| invalid(format!("word n-gram orders must be at least 1, got {n}")))
        })
        .collect()
}

#[pymethods]
impl PySubstringIndex {
    /// Builds the shard of `rows` newline-joined documents (normalised; whitespace is
    /// collapsed here) and stores it at `path` under `key`: dict(bytes, checksum, text_bytes,
    /// docs). Nothing of it stays in memory.
    #[staticmethod]
    #[pyo3(signature = (docs, rows, path, key, threads = None))]
    fn build_shard<'py>(
        py: Python<'py>,
        docs: Joined,
        rows: usize,
        path: PathBuf,
        key: &[u8],
        threads: Option<i64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let threads = at_least_one("threads", threads)?;
        let docs = docs.text("docs")?;
        let key = key.to_vec();
        let (bytes, shard) = py.detach(|| -> PyResult<(u64, SuffixShard)> {
            let rows = with_threads(threads, || rows_from_joined(docs, rows))??;
            let shard = SuffixShard::build(&rows)?;
            drop(rows);
            Ok((shard.save(&path, &key)?, shard))
        })?;
        let d = PyDict::new(py);
        d.set_item("bytes", bytes)?;
        d.set_item("checksum", shard.checksum())?;
        d.set_item("text_bytes", shard.text().len())?;
        d.set_item("docs", shard.docs())?;
        Ok(d)
    }

    /// One in-memory shard of `rows` newline-joined documents (normalised; whitespace is
    /// collapsed here).
    #[staticmethod]
    #[pyo3(signature = (docs, rows, threads = None))]
    fn from_joined(
        py: Python<'_>,
        docs: Joined,
        rows: usize,
        threads: Option<i64>,
    ) -> PyResult<Self> {
        let threads = at_least_one("threads", threads)?;
        let docs = docs.text("docs")?;
        let shard = py.detach(|| -> PyResult<SuffixShard> {
            let rows = with_threads(threads, || rows_from_joined(docs, rows))??;
            Ok(SuffixShard::build(&rows)?)
        })?;
        Ok(Self {
            shards: vec![(shard, 0)],
        })
    }

    /// The stored shards at `paths` (in corpus order) under their `keys`, memory-mapped after
    /// checking each one's checksum and positions.
    #[staticmethod]
    fn open(py: Python<'_>, paths: Vec<PathBuf>, keys: Vec<Vec<u8>>) -> PyResult<Self> {
        if paths.len() != keys.len() {
            return Err(invalid(format!(
                "{} shard paths but {} keys",
                paths.len(),
                keys.len()
            )));
        }
        let shards = py.detach(|| -> PyResult<Vec<(SuffixShard, u64)>> {
            let mut base = 0u64;
            let mut out = Vec::with_capacity(paths.len());
            for (path, key) in paths.iter().zip(&keys) {
                let shard = SuffixShard::load(path, key)?;
                let docs = shard.docs() as u64;
                out.push((shard, base));
                base += docs;
            }
            Ok(out)
        })?;
        Ok(Self { shards })
    }

    /// Documents over all shards.
    #[getter]
    fn docs(&self) -> u64 {
        self.shards.iter().map(|(s, _)| s.docs() as u64).sum()
    }

    /// Bytes of indexed text over all shards (documents and their end bytes).
    #[getter]
    fn text_bytes(&self) -> u64 {
        self.shards.iter().map(|(s, _)| s.text().len() as u64).sum()
    }

    /// Each shard's checksum (xxh3-64 of its arrays), in corpus order.
    #[getter]
    fn checksums(&self) -> Vec<u64> {
        self.shards.iter().map(|(s, _)| s.checksum()).collect()
    }

    /// The lens of `rows` newline-joined test segments (normalised; whitespace is collapsed
    /// here) for word n-gram `orders`: dict of column buffers `chars`, `longest`, `start`,
    /// `count` (uint64), `doc`, `offset` (int64, with `doc_valid`), and per order
    /// `found` and `total` (lists of uint64 buffers); with `hits`, also per order `hits`: one
    /// byte (0 or 1) per n-gram of every segment, segment after segment.
    #[pyo3(signature = (segments, rows, orders, threads = None, hits = false))]
    fn lens<'py>(
        &self,
        py: Python<'py>,
        segments: Joined,
        rows: usize,
        orders: Vec<i64>,
        threads: Option<i64>,
        hits: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let threads = at_least_one("threads", threads)?;
        let orders = orders_of(orders)?;
        let segments = segments.text("segments")?;
        let lenses = py.detach(|| -> PyResult<_> {
            let rows = with_threads(threads, || rows_from_joined(segments, rows))??;
            let texts: Vec<&str> = rows.iter().map(|r| r.as_ref()).collect();
            Ok(with_threads(threads, || {
                lens_of_segments(&self.shards, &texts, &orders)
            })??)
        })?;
        let d = PyDict::new(py);
        d.set_item("chars", uint64(py, lenses.iter().map(|l| l.chars))?)?;
        d.set_item("longest", uint64(py, lenses.iter().map(|l| l.longest))?)?;
        d.set_item("start", uint64(py, lenses.iter().map(|l| l.start))?)?;
        d.set_item("count", uint64(py, lenses.iter().map(|l| l.count))?)?;
        let place = |f: fn((u64, u64)) -> u64| {
            lenses
                .iter()
                .map(move |l| l.place.map(|p| i64::try_from(f(p)).unwrap_or(i64::MAX)))
        };
        let (doc, doc_valid) = nullable(py, place(|p| p.0), i64::to_ne_bytes)?;
        let (offset, _) = nullable(py, place(|p| p.1), i64::to_ne_bytes)?;
        d.set_item("doc", doc)?;
        d.set_item("offset", offset)?;
        d.set_item("doc_valid", doc_valid)?;
        let mut found = Vec::with_capacity(orders.len());
        let mut total = Vec::with_capacity(orders.len());
        for k in 0..orders.len() {
            found.push(uint64(
                py,
                lenses.iter().map(|l| l.grams.get(k).map_or(0, |g| g.0)),
            )?);
            total.push(uint64(
                py,
                lenses.iter().map(|l| l.grams.get(k).map_or(0, |g| g.1)),
            )?);
        }
        d.set_item("found", found)?;
        d.set_item("total", total)?;
        if hits {
            let flags: Vec<Bound<'py, PyBytes>> = (0..orders.len())
                .map(|k| {
                    let bytes: Vec<u8> = lenses
                        .iter()
                        .flat_map(|l| l.hits.get(k).into_iter().flatten().map(|&h| u8::from(h)))
                        .collect();
                    PyBytes::new(py, &bytes)
                })
                .collect();
            d.set_item("hits", flags)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "SubstringIndex(shards={}, docs={}, text_bytes={})",
            self.shards.len(),
            self.docs(),
            self.text_bytes()
        )
    }
}

/// Adds the substring classes and constants to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySubstringIndex>()?;
    m.add("SUFFIX_FORMAT_VERSION", FILE_VERSION)?;
    m.add("MAX_SHARD_BYTES", MAX_SHARD_BYTES)
}
