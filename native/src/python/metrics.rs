//! cyzil-compatible BLEU and edit distance, and sacrebleu-identical surface statistics.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;

use super::error::invalid;
use crate::cyzil::{self, Bleu, EditDistance};
use crate::surface;

type Tokens = Vec<String>;

/// cyzil sentence BLEU: [precision, brevity penalty, bleu].
#[pyfunction]
fn bleu_sentence(reference: Tokens, candidate: Tokens, max_ngram: i64) -> PyResult<Bleu> {
    Ok(cyzil::bleu_sentence(&reference, &candidate, max_ngram)?)
}

/// cyzil corpus BLEU: [precision, brevity penalty, bleu].
#[pyfunction]
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

/// Per-segment BLEU statistics, chrF++ statistics and chrF++ sentence scores.
type SurfaceStats = (
    Vec<[u64; surface::BLEU_STATS]>,
    Vec<[u64; surface::CHRF_STATS]>,
    Vec<f64>,
);

/// sacrebleu-identical BLEU (13a) and chrF++ statistics of every segment, and each segment's
/// chrF++ sentence score: three lists.
#[pyfunction]
fn surface_stats(
    py: Python<'_>,
    hyps: Vec<PyBackedStr>,
    refs: Vec<Vec<PyBackedStr>>,
) -> PyResult<SurfaceStats> {
    if hyps.len() != refs.len() {
        return Err(invalid(format!(
            "hyps and refs must have the same length, got {} and {}",
            hyps.len(),
            refs.len()
        )));
    }
    if let Some(i) = refs.iter().position(Vec::is_empty) {
        return Err(invalid(format!(
            "segment {i} has no reference; each needs at least one"
        )));
    }
    let (bleu, chrf): (Vec<_>, Vec<_>) =
        py.detach(|| surface::segment_stats(&hyps, &refs).into_iter().unzip());
    let sentence = chrf.iter().map(surface::chrf_f_score).collect();
    Ok((bleu, chrf, sentence))
}

/// Adds the metric functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bleu_sentence, m)?)?;
    m.add_function(wrap_pyfunction!(bleu_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(bleu_points, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_sentence, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(edit_distance_points, m)?)?;
    m.add_function(wrap_pyfunction!(surface_stats, m)?)?;
    Ok(())
}
