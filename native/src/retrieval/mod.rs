//! Training-exposure retrieval: character n-gram Jaccard nearest neighbours of test sources,
//! references and (source, reference) pairs among training pairs (docs/exposure.md).
//!
//! Pure Rust; the Python binding lives in `python/retrieval.rs`.

mod audit;
mod buf;
mod cache;
mod counting;
mod dense;
mod error;
mod grams;
mod index;
mod kernels;
mod memory;
mod pair;
mod persist;
mod planes;
mod score;
mod search;
mod sections;
mod store;
mod text;
mod tiles;
mod uncached;

#[cfg(test)]
mod tests;

pub use audit::{with_threads, AuditRow, Hit, Mode, RetrievalIndex, Search, TargetHit};
pub use error::{Result, RetrievalError};
pub use grams::{for_each_gram, Orders};
pub use kernels::kernel_name;
pub use persist::IndexInfo;
pub use score::{Measure, Ratio};
pub use search::Stats;
pub use sections::{PersistError, Problem, FORMAT_VERSION};
pub use text::rows_from_joined;
