//! PyO3 bindings: the `warehouse._native` extension module.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::cyzil::{self, Bleu, CyzilError, EditDistance};

impl From<CyzilError> for PyErr {
    fn from(err: CyzilError) -> Self {
        PyValueError::new_err(err.to_string())
    }
}

type Tokens = Vec<String>;

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
    Ok(())
}
