//! Training-exposure retrieval: character n-gram Jaccard nearest neighbours of test sources,
//! references and (source, reference) pairs among training pairs (docs/exposure.md).
//!
//! Pure Rust; the Python binding lives in `python/retrieval.rs`.

mod audit;
#[cfg(target_arch = "x86_64")]
mod avx2;
mod buf;
mod cache;
mod counting;
mod dense;
mod error;
mod grams;
mod index;
mod memory;
mod pair;
mod persist;
mod planes;
mod score;
mod search;
mod store;
mod text;
mod uncached;

#[cfg(test)]
mod tests;

pub use audit::{with_threads, AuditRow, Hit, Mode, RetrievalIndex, TargetHit};
pub use counting::kernel_name;
pub use error::{Result, RetrievalError};
pub use grams::Orders;
pub use persist::{IndexInfo, PersistError, Problem, FORMAT_VERSION};
pub use score::Ratio;
pub use search::Stats;
pub use text::rows_from_joined;
