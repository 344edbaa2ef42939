//! PyO3 bindings: the `warehouse._native` extension module.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use crate::bootstrap::{self, BootstrapError};
use crate::cyzil::{self, Bleu, CyzilError, EditDistance};
use crate::surface;

impl From<CyzilError> for PyErr {
    fn from(err: CyzilError) -> Self {
        PyValueError::new_err(err.to_string())
    }
}

impl From<BootstrapError> for PyErr {
    fn from(err: BootstrapError) -> Self {
        PyValueError::new_err(err.to_string())
    }
}

type Tokens = Vec<String>;

/// Native-endian 8-byte values of a bytes buffer (borrowed when aligned, else copied).
fn words<T: Copy>(bytes: &[u8], from: fn([u8; 8]) -> T) -> PyResult<std::borrow::Cow<'_, [T]>> {
    if bytes.len() % 8 != 0 {
        return Err(PyValueError::new_err(
            "buffer length is not a multiple of 8 bytes",
        ));
    }
    // SAFETY: i64 and f64 accept every bit pattern; `align_to` only yields aligned elements.
    let (head, body, tail) = unsafe { bytes.align_to::<T>() };
    if head.is_empty() && tail.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(body));
    }
    Ok(std::borrow::Cow::Owned(
        bytes
            .chunks_exact(8)
            .map(|c| from(c.try_into().expect("8-byte chunk")))
            .collect(),
    ))
}

fn to_bytes<T: Copy>(values: &[T], into: fn(T) -> [u8; 8]) -> Vec<u8> {
    values.iter().flat_map(|&v| into(v)).collect()
}

/// Per-resample sums of int64 statistic rows (raw native-endian buffers in and out).
#[pyfunction]
fn resample_sums_i64<'py>(
    py: Python<'py>,
    stats: &[u8],
    n_cols: usize,
    indices: &[u8],
    n_resamples: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let stats = words(stats, i64::from_ne_bytes)?;
    let indices = words(indices, i64::from_ne_bytes)?;
    let sums = py.detach(|| bootstrap::resample_sums(&stats, n_cols, &indices, n_resamples))?;
    Ok(PyBytes::new(py, &to_bytes(&sums, i64::to_ne_bytes)))
}

/// Per-resample sums of float64 statistic rows, added in index order.
#[pyfunction]
fn resample_sums_f64<'py>(
    py: Python<'py>,
    stats: &[u8],
    n_cols: usize,
    indices: &[u8],
    n_resamples: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let stats = words(stats, f64::from_ne_bytes)?;
    let indices = words(indices, i64::from_ne_bytes)?;
    let sums = py.detach(|| bootstrap::resample_sums(&stats, n_cols, &indices, n_resamples))?;
    Ok(PyBytes::new(py, &to_bytes(&sums, f64::to_ne_bytes)))
}

/// cyzil sentence BLEU: [precision, brevity penalty, bleu].
#[pyfunction]
#[pyo3(signature = (reference, candidate, max_ngram = 4))]
fn bleu_sentence(reference: Tokens, candidate: Tokens, max_ngram: i64) -> PyResult<Bleu> {
    Ok(cyzil::bleu_sentence(&reference, &candidate, max_ngram)?)
}

/// cyzil corpus BLEU: [precision, brevity penalty, bleu].
#[pyfunction]
#[pyo3(signature = (references, candidates, max_ngram = 4))]
fn bleu_corpus(
    py: Python<'_>,
    references: Vec<Tokens>,
    candidates: Vec<Tokens>,
    max_ngram: i64,
) -> PyResult<Bleu> {
    Ok(py.detach(|| cyzil::bleu_corpus(&references, &candidates, max_ngram))?)
}

/// cyzil sentence BLEU of every pair.
#[pyfunction]
#[pyo3(signature = (references, candidates, max_ngram = 4))]
fn bleu_points(
    py: Python<'_>,
    references: Vec<Tokens>,
    candidates: Vec<Tokens>,
    max_ngram: i64,
) -> PyResult<Vec<Bleu>> {
    Ok(py.detach(|| cyzil::bleu_points(&references, &candidates, max_ngram))?)
}

/// Token-level Levenshtein distance.
#[pyfunction]
fn edit_distance_sentence(a: Tokens, b: Tokens) -> usize {
    cyzil::edit_distance_sentence(&a, &b)
}

/// cyzil corpus edit distance: mean of [distance, distance / len(reference)].
#[pyfunction]
fn edit_distance_corpus(
    py: Python<'_>,
    references: Vec<Tokens>,
    candidates: Vec<Tokens>,
) -> PyResult<EditDistance> {
    Ok(py.detach(|| cyzil::edit_distance_corpus(&references, &candidates))?)
}

/// cyzil [distance, distance / len(reference)] of every pair.
#[pyfunction]
fn edit_distance_points(
    py: Python<'_>,
    references: Vec<Tokens>,
    candidates: Vec<Tokens>,
) -> PyResult<Vec<EditDistance>> {
    Ok(py.detach(|| cyzil::edit_distance_points(&references, &candidates))?)
}

/// sacrebleu-identical BLEU (13a) and chrF++ statistics of every segment, and each segment's
/// chrF++ sentence score: three lists.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn surface_stats(
    py: Python<'_>,
    hyps: Vec<PyBackedStr>,
    refs: Vec<Vec<PyBackedStr>>,
) -> PyResult<(
    Vec<[u64; surface::BLEU_STATS]>,
    Vec<[u64; surface::CHRF_STATS]>,
    Vec<f64>,
)> {
    if hyps.len() != refs.len() {
        return Err(PyValueError::new_err(format!(
            "hyps and refs must have the same length, got {} and {}",
            hyps.len(),
            refs.len()
        )));
    }
    if let Some(i) = refs.iter().position(Vec::is_empty) {
        return Err(PyValueError::new_err(format!(
            "segment {i} has no reference; each needs at least one"
        )));
    }
    let (bleu, chrf): (Vec<_>, Vec<_>) =
        py.detach(|| surface::segment_stats(&hyps, &refs).into_iter().unzip());
    let sentence = chrf.iter().map(surface::chrf_f_score).collect();
    Ok((bleu, chrf, sentence))
}

/// The `warehouse._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    m.add_function(wrap_pyfunction!(bleu_sentence, m)?)?;
    m.add_function(wrap_pyfunction!(bleu_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(bleu_points, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_sentence, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_points, m)?)?;
    crate::python_retrieval::register(m)?;
    m.add_function(wrap_pyfunction!(resample_sums_i64, m)?)?;
    m.add_function(wrap_pyfunction!(resample_sums_f64, m)?)?;
    m.add_function(wrap_pyfunction!(surface_stats, m)?)?;
    Ok(())
}
