//! sacrebleu-identical TER statistics.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::error::invalid;
use crate::ter;

/// `text` lowercased `times` times as Python's `str.lower` does: ASCII text here, any other
/// text by Python itself (its Unicode database and special cases: `İ`, final `ς`, ...).
fn lowered(text: &Bound<'_, PyString>, times: usize) -> PyResult<String> {
    let s = text.to_str()?;
    if s.is_ascii() {
        return Ok(s.to_ascii_lowercase());
    }
    let mut out = text.clone();
    for _ in 0..times {
        out = out
            .call_method0(intern!(text.py(), "lower"))?
            .cast_into::<PyString>()?;
    }
    Ok(out.to_str()?.to_owned())
}

/// TER statistics `[edits, average reference length]` of every segment, equal to sacrebleu's
/// `TER()._extract_corpus_statistics`; `None` references are skipped, as sacrebleu skips them in
/// reference streams, and each segment needs at least one other.
#[pyfunction]
fn ter_stats(
    py: Python<'_>,
    hyps: Vec<Bound<'_, PyString>>,
    refs: Vec<Vec<Option<Bound<'_, PyString>>>>,
) -> PyResult<Vec<[f64; 2]>> {
    if hyps.len() != refs.len() {
        return Err(invalid(format!(
            "hyps and refs must have the same length, got {} and {}",
            hyps.len(),
            refs.len()
        )));
    }
    let hyps = hyps
        .iter()
        .map(|h| lowered(h, 1))
        .collect::<PyResult<Vec<String>>>()?;
    // sacrebleu preprocesses references twice (when caching them and when extracting them).
    let refs = refs
        .iter()
        .map(|rs| rs.iter().flatten().map(|r| lowered(r, 2)).collect())
        .collect::<PyResult<Vec<Vec<String>>>>()?;
    Ok(py.detach(|| ter::corpus_stats(&hyps, &refs))?)
}

/// Adds the TER functions to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(ter_stats, m)?)?;
    Ok(())
}
