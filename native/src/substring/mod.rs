//! The exact-substring lens (docs/exposure.md, "Substring lens"): a suffix array over the
//! normalised text of training documents, and per test segment the longest substring it shares
//! with any document, how often the whole segment occurs, and which of its word n-grams occur.
//!
//! A corpus is indexed in shards (`SuffixShard`), each one a contiguous run of documents whose
//! text fits a suffix array of 32-bit positions; `lens` answers a segment over all shards at once
//! and equals the answer of one index over the whole corpus.
//!
//! Pure Rust; the Python binding lives in `python/substring.rs`.

mod error;
mod file;
mod lens;
mod shard;

#[cfg(test)]
mod tests;

pub use error::{Result, SubstringError};
pub use file::FILE_VERSION;
pub use lens::{lens_of_segments, SegmentLens};
pub use shard::{SuffixShard, MAX_SHARD_BYTES};
