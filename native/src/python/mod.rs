//! PyO3 bindings: the `warehouse._native` extension module, typed by `warehouse/_native.pyi`.
//!
//! * `metrics`: cyzil BLEU and edit distance, sacrebleu-identical surface statistics;
//! * `ter`: sacrebleu-identical TER statistics;
//! * `profile`: the audit direction check's character-trigram similarities;
//! * `bootstrap`: resample sums over numpy arrays (buffers in, a caller-allocated buffer out);
//! * `retrieval`: the `RetrievalIndex` class, whose searches return Arrow-layout buffers
//!   (`columns`);
//! * `minhash`: the `MinHashIndex` class (the MinHash near-duplicate lens, `RetrievalIndex`'s
//!   audit interface);
//! * `substring`: the `SubstringIndex` class (suffix-array shards and the substring lens);
//! * `process`: the process's last word when DuckDB aborts it (`exit_on_abort`);
//! * `error`: the one mapping of native errors to Python exceptions (`ValueError`, and its
//!   subclass `IndexFileError` for stored indexes).
//!
//! Bindings take every tuning value as a required argument: defaults live in Python only.

mod bootstrap;
mod columns;
mod error;
mod metrics;
mod minhash;
mod process;
mod profile;
mod retrieval;
mod substring;
mod ter;

use pyo3::prelude::*;

/// The `warehouse._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", crate::VERSION)?;
    metrics::register(m)?;
    bootstrap::register(m)?;
    retrieval::register(m)?;
    substring::register(m)?;
    minhash::register(m)?;
    ter::register(m)?;
    profile::register(m)?;
    process::register(m)?;
    Ok(())
}
