//! One shard of the substring index: the text of a run of documents, each followed by the byte
//! 0xFF (which UTF-8 never contains, so no match crosses a document boundary), and its suffix
//! array; built in memory or memory-mapped from a stored file (`file.rs`).

use std::mem::ManuallyDrop;
use std::ops::Range;

use libsais::SuffixArrayConstruction;
use memmap2::Mmap;

use super::error::{invalid, Result};

/// The byte that ends every document in a shard's text.
pub const END: u8 = 0xFF;

/// The largest shard text (documents and their end bytes): positions are 32-bit and the suffix
/// array builder takes signed 32-bit ones.
pub const MAX_SHARD_BYTES: usize = i32::MAX as usize;

/// Where a shard's arrays live.
enum Store {
    Heap {
        text: Vec<u8>,
        sa: Vec<u32>,
    },
    /// A stored file: the text at `text`, the suffix array at `sa` (4-byte aligned, checked by
    /// `file::load`).
    Mapped {
        map: Mmap,
        text: Range<usize>,
        sa: Range<usize>,
    },
}

/// A shard: its text, the suffix array of that text, and where each document starts in it.
pub struct SuffixShard {
    store: Store,
    starts: Vec<u64>,
    checksum: u64,
}

/// A vector of non-negative `i32` as the same values typed `u32`, without copying.
fn into_unsigned(v: Vec<i32>) -> Vec<u32> {
    let mut v = ManuallyDrop::new(v);
    // SAFETY: i32 and u32 have the same size and alignment, so the allocation's layout is the
    // same; every value is a position (non-negative), which reads the same as u32; the original
    // vector is never dropped.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<u32>(), v.len(), v.capacity()) }
}

impl SuffixShard {
    /// The shard of `docs` (UTF-8 texts without newlines, words separated by single spaces).
    pub fn build<S: AsRef<str>>(docs: &[S]) -> Result<Self> {
        if let Some(i) = docs.iter().position(|d| d.as_ref().contains('\n')) {
            return Err(invalid(format!("document {i} contains a newline")));
        }
        let size = docs.iter().map(|d| d.as_ref().len() + 1).sum::<usize>();
        if size > MAX_SHARD_BYTES {
            return Err(invalid(format!(
                "a shard holds at most {MAX_SHARD_BYTES} bytes of text, got {size}: use smaller shards"
            )));
        }
        let mut text = Vec::with_capacity(size);
        let mut starts = Vec::with_capacity(docs.len());
        for doc in docs {
            starts.push(text.len() as u64);
            text.extend_from_slice(doc.as_ref().as_bytes());
            text.push(END);
        }
        let sa = if text.is_empty() {
            Vec::new()
        } else {
            let sa = SuffixArrayConstruction::for_text(&text)
                .in_owned_buffer32()
                .single_threaded()
                .run()
                .map_err(|e| invalid(format!("suffix array construction failed: {e}")))?
                .into_vec();
            into_unsigned(sa)
        };
        let checksum = super::file::checksum_of(&starts, &text, &sa);
        Ok(Self {
            store: Store::Heap { text, sa },
            starts,
            checksum,
        })
    }

    /// A shard over a stored file's arrays (validated by the caller).
    pub(crate) fn mapped(
        map: Mmap,
        text: Range<usize>,
        sa: Range<usize>,
        starts: Vec<u64>,
        checksum: u64,
    ) -> Self {
        Self {
            store: Store::Mapped { map, text, sa },
            starts,
            checksum,
        }
    }

    /// The shard's text: its documents, each followed by `END`.
    pub fn text(&self) -> &[u8] {
        match &self.store {
            Store::Heap { text, .. } => text,
            Store::Mapped { map, text, .. } => &map[text.clone()],
        }
    }

    /// The suffix array: every position of the text, in the order of the suffixes starting there.
    pub fn suffix_array(&self) -> &[u32] {
        match &self.store {
            Store::Heap { sa, .. } => sa,
            Store::Mapped { map, sa, .. } => {
                let bytes = &map[sa.clone()];
                // SAFETY: `file::load` checked that the range lies in the map, starts 4-byte
                // aligned and holds whole u32 values; the map is read-only and lives as long
                // as `self`; every bit pattern is a valid u32.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u32>(), bytes.len() / 4) }
            }
        }
    }

    /// Where each document starts in the text.
    pub fn starts(&self) -> &[u64] {
        &self.starts
    }

    /// The number of documents.
    pub fn docs(&self) -> usize {
        self.starts.len()
    }

    /// The xxh3-64 checksum of the shard's arrays, as stored.
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Whether the arrays are a view into a memory-mapped file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.store, Store::Mapped { .. })
    }

    /// The rows of the suffix array whose suffixes start with `pattern`.
    pub fn range(&self, pattern: &[u8]) -> Range<usize> {
        let (text, sa) = (self.text(), self.suffix_array());
        let head = |s: u32| {
            let s = s as usize;
            let end = text.len().min(s + pattern.len());
            text.get(s..end).unwrap_or_default()
        };
        let lo = sa.partition_point(|&s| head(s) < pattern);
        let hi = lo + sa[lo..].partition_point(|&s| head(s) <= pattern);
        lo..hi
    }

    /// The rows of `rows` (whose suffixes share their first `depth` bytes) whose byte at
    /// `depth` is `byte`.
    pub fn narrow(&self, rows: Range<usize>, depth: usize, byte: u8) -> Range<usize> {
        let (text, sa) = (self.text(), self.suffix_array());
        let key = |s: u32| text.get(s as usize + depth).map_or(-1, |&b| i16::from(b));
        let within = &sa[rows.clone()];
        let lo = within.partition_point(|&s| key(s) < i16::from(byte));
        let hi = lo + within[lo..].partition_point(|&s| key(s) <= i16::from(byte));
        rows.start + lo..rows.start + hi
    }

    /// The document holding text position `pos`, and `pos` as a character offset within it.
    pub fn locate(&self, pos: usize) -> (usize, usize) {
        let doc = self
            .starts
            .partition_point(|&s| s as usize <= pos)
            .saturating_sub(1);
        let start = self.starts.get(doc).map_or(0, |&s| s as usize);
        let chars = self
            .text()
            .get(start..pos)
            .unwrap_or_default()
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        (doc, chars)
    }
}
