//! The training-side index: interned grams (rarest first), per-row gram lists and postings,
//! both in CSR layout, plus the texts for exact matching.

use hashbrown::HashMap;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use super::error::{internal, invalid, Result};
use super::grams::{for_each_gram, Orders};
use super::store::{PairTable, TextStore, Vocab};

/// Rows handled together by one parallel task while building.
const BUILD_CHUNK: usize = 2048;

/// Largest number of rows (`u32::MAX` marks "no row").
pub const MAX_ROWS: usize = (u32::MAX - 1) as usize;

/// Largest number of distinct grams in one text, so sums of two sizes fit comfortably.
pub const MAX_GRAMS_PER_TEXT: usize = 1 << 30;

/// One side (sources or targets) of the training data.
#[derive(Debug, Default)]
pub struct SideIndex {
    /// Row `d`'s gram ids are `doc_grams[doc_offsets[d]..doc_offsets[d + 1]]`, ascending.
    doc_offsets: Vec<u64>,
    doc_grams: Vec<u32>,
    /// Gram `g`'s rows are `postings[post_offsets[g]..post_offsets[g + 1]]`, ascending.
    post_offsets: Vec<u64>,
    postings: Vec<u32>,
    vocab: Vocab,
    texts: TextStore,
    empty_rows: Vec<u32>,
}

/// Per-thread accumulator of the first build pass.
struct CountPass<'a> {
    df: HashMap<&'a str, (u32, u32), FxBuildHasher>,
    lens: Vec<(usize, Vec<u32>)>,
}

impl CountPass<'_> {
    fn new() -> Self {
        Self {
            df: HashMap::with_hasher(FxBuildHasher),
            lens: Vec::new(),
        }
    }

    fn merge(mut self, mut other: Self) -> Self {
        if self.df.len() < other.df.len() {
            std::mem::swap(&mut self, &mut other);
        }
        for (gram, (df, _)) in other.df {
            self.df.entry(gram).or_insert((0, 0)).0 += df;
        }
        self.lens.append(&mut other.lens);
        self
    }
}

fn chunk_range(chunk: usize, rows: usize) -> (usize, usize) {
    let lo = chunk * BUILD_CHUNK;
    (lo, (lo + BUILD_CHUNK).min(rows))
}

fn prefix_sums(counts: impl Iterator<Item = u64>, len: usize) -> Vec<u64> {
    let mut offsets = Vec::with_capacity(len + 1);
    let mut total = 0u64;
    offsets.push(0);
    for c in counts {
        total += c;
        offsets.push(total);
    }
    offsets
}

impl SideIndex {
    /// Builds the index of `texts` (already normalised) for the given orders, in parallel.
    pub fn build<S: AsRef<str> + Sync>(texts: &[S], orders: &Orders) -> Result<Self> {
        let rows = texts.len();
        if rows > MAX_ROWS {
            return Err(invalid(format!(
                "at most {MAX_ROWS} training rows are supported"
            )));
        }
        let (grams, texts_store) = rayon::join(
            || Self::build_grams(texts, orders),
            || TextStore::build(texts),
        );
        let (doc_offsets, doc_grams, post_offsets, postings, vocab) = grams?;
        let empty_rows = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| t.as_ref().is_empty())
            .map(|(i, _)| i as u32)
            .collect();
        Ok(Self {
            doc_offsets,
            doc_grams,
            post_offsets,
            postings,
            vocab,
            texts: texts_store,
            empty_rows,
        })
    }

    #[allow(clippy::type_complexity)]
    fn build_grams<S: AsRef<str> + Sync>(
        texts: &[S],
        orders: &Orders,
    ) -> Result<(Vec<u64>, Vec<u32>, Vec<u64>, Vec<u32>, Vocab)> {
        let rows = texts.len();
        let chunks = rows.div_ceil(BUILD_CHUNK);

        // Pass 1: document frequency of every gram and the number of distinct grams per row.
        let mut pass = (0..chunks)
            .into_par_iter()
            .fold(CountPass::new, |mut acc, chunk| {
                let (lo, hi) = chunk_range(chunk, rows);
                let mut lens = Vec::with_capacity(hi - lo);
                let mut bounds = Vec::new();
                for (row, text) in texts.iter().enumerate().take(hi).skip(lo) {
                    let tag = row as u32 + 1;
                    let mut distinct = 0u32;
                    let df = &mut acc.df;
                    for_each_gram(text.as_ref(), orders, &mut bounds, |g| {
                        let e = df.entry(g).or_insert((0, 0));
                        if e.1 != tag {
                            e.1 = tag;
                            e.0 += 1;
                            distinct += 1;
                        }
                    });
                    lens.push(distinct);
                }
                acc.lens.push((chunk, lens));
                acc
            })
            .reduce(CountPass::new, CountPass::merge);
        pass.lens.sort_unstable_by_key(|(chunk, _)| *chunk);
        let lens: Vec<u32> = pass.lens.into_iter().flat_map(|(_, l)| l).collect();
        if lens.len() != rows {
            return Err(internal("row count mismatch after counting grams"));
        }
        if lens.iter().any(|&l| l as usize > MAX_GRAMS_PER_TEXT) {
            return Err(invalid("a training text has too many distinct n-grams"));
        }

        // Gram ids by ascending document frequency (ties by the gram itself): rarest first.
        let mut entries: Vec<(u32, &str)> =
            pass.df.into_iter().map(|(g, (df, _))| (df, g)).collect();
        entries.par_sort_unstable();
        if entries.len() > u32::MAX as usize {
            return Err(invalid("too many distinct n-grams in the training data"));
        }
        let gram_bytes = entries.iter().map(|(_, g)| g.len()).sum();
        let mut vocab = Vocab::with_capacity(entries.len(), gram_bytes);
        for (_, g) in &entries {
            vocab.push_new(g);
        }
        let post_offsets = prefix_sums(entries.iter().map(|(df, _)| u64::from(*df)), entries.len());
        drop(entries);

        // Pass 2: each row's sorted gram ids, written straight into the flat array.
        let doc_offsets = prefix_sums(lens.iter().map(|&l| u64::from(l)), rows);
        let total = usize::try_from(doc_offsets.last().copied().unwrap_or(0))
            .map_err(|_| invalid("the training data is too large for this platform"))?;
        let mut doc_grams = vec![0u32; total];
        let mut parts: Vec<(usize, &mut [u32])> = Vec::with_capacity(chunks);
        let mut rest = doc_grams.as_mut_slice();
        for chunk in 0..chunks {
            let (lo, hi) = chunk_range(chunk, rows);
            let len = (doc_offsets[hi] - doc_offsets[lo]) as usize;
            let (part, tail) = rest
                .split_at_mut_checked(len)
                .ok_or_else(|| internal("row offsets exceed the gram array"))?;
            parts.push((chunk, part));
            rest = tail;
        }
        parts
            .into_par_iter()
            .try_for_each(|(chunk, part)| -> Result<()> {
                let (lo, hi) = chunk_range(chunk, rows);
                let mut bounds = Vec::new();
                let mut ids: Vec<u32> = Vec::new();
                let mut at = 0usize;
                for (row, text) in texts.iter().enumerate().take(hi).skip(lo) {
                    ids.clear();
                    let mut missing = false;
                    for_each_gram(text.as_ref(), orders, &mut bounds, |g| match vocab.get(g) {
                        Some(id) => ids.push(id),
                        None => missing = true,
                    });
                    ids.sort_unstable();
                    ids.dedup();
                    if missing || ids.len() != lens[row] as usize {
                        return Err(internal("gram lists changed between build passes"));
                    }
                    let out = part
                        .get_mut(at..at + ids.len())
                        .ok_or_else(|| internal("gram list overflows its slot"))?;
                    out.copy_from_slice(&ids);
                    at += ids.len();
                }
                Ok(())
            })?;

        // Postings: rows ascending within each gram.
        let vocab_len = vocab.len();
        let mut cursor: Vec<u64> = post_offsets[..vocab_len].to_vec();
        let mut postings = vec![0u32; total];
        for row in 0..rows {
            let (lo, hi) = (doc_offsets[row] as usize, doc_offsets[row + 1] as usize);
            for &g in doc_grams.get(lo..hi).unwrap_or(&[]) {
                let c = cursor
                    .get_mut(g as usize)
                    .ok_or_else(|| internal("gram id out of range"))?;
                let slot = postings
                    .get_mut(*c as usize)
                    .ok_or_else(|| internal("postings overflow"))?;
                *slot = row as u32;
                *c += 1;
            }
        }
        Ok((doc_offsets, doc_grams, post_offsets, postings, vocab))
    }

    /// Number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.doc_offsets.len().saturating_sub(1)
    }

    /// The sorted gram ids of row `d`.
    #[inline]
    pub fn doc(&self, d: u32) -> &[u32] {
        let d = d as usize;
        match (self.doc_offsets.get(d), self.doc_offsets.get(d + 1)) {
            (Some(&lo), Some(&hi)) => self.doc_grams.get(lo as usize..hi as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Number of distinct grams of row `d`.
    #[inline]
    pub fn doc_len(&self, d: u32) -> u64 {
        let d = d as usize;
        match (self.doc_offsets.get(d), self.doc_offsets.get(d + 1)) {
            (Some(&lo), Some(&hi)) => hi - lo,
            _ => 0,
        }
    }

    /// The rows containing gram `g`, ascending.
    #[inline]
    pub fn postings(&self, g: u32) -> &[u32] {
        let g = g as usize;
        match (self.post_offsets.get(g), self.post_offsets.get(g + 1)) {
            (Some(&lo), Some(&hi)) => self.postings.get(lo as usize..hi as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Document frequency of gram `g`.
    #[inline]
    pub fn df(&self, g: u32) -> u64 {
        let g = g as usize;
        match (self.post_offsets.get(g), self.post_offsets.get(g + 1)) {
            (Some(&lo), Some(&hi)) => hi - lo,
            _ => 0,
        }
    }

    /// The gram vocabulary.
    #[inline]
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The stored texts.
    #[inline]
    pub fn texts(&self) -> &TextStore {
        &self.texts
    }

    /// Rows whose text is empty, ascending.
    pub fn empty_rows(&self) -> &[u32] {
        &self.empty_rows
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        (self.doc_offsets.capacity() + self.post_offsets.capacity()) * 8
            + (self.doc_grams.capacity() + self.postings.capacity() + self.empty_rows.capacity())
                * 4
            + self.vocab.heap_bytes()
            + self.texts.heap_bytes()
    }
}

/// Both training sides, aligned row by row, with the exact-pair table.
#[derive(Debug)]
pub struct TrainingIndex {
    pub(crate) orders: Orders,
    pub(crate) src: SideIndex,
    pub(crate) tgt: SideIndex,
    pub(crate) pairs: PairTable,
}

impl TrainingIndex {
    /// Builds the index of aligned, normalised training sources and targets.
    pub fn build<S: AsRef<str> + Sync>(
        sources: &[S],
        targets: &[S],
        orders: Orders,
    ) -> Result<Self> {
        if sources.len() != targets.len() {
            return Err(invalid(format!(
                "sources and targets must have the same length, got {} and {}",
                sources.len(),
                targets.len()
            )));
        }
        let (src, tgt) = rayon::join(
            || SideIndex::build(sources, &orders),
            || SideIndex::build(targets, &orders),
        );
        let (src, tgt) = (src?, tgt?);
        let pairs = PairTable::build(src.texts(), tgt.texts(), sources.len());
        Ok(Self {
            orders,
            src,
            tgt,
            pairs,
        })
    }

    /// Number of training rows.
    pub fn rows(&self) -> usize {
        self.src.rows()
    }

    /// The n-gram orders.
    pub fn orders(&self) -> &Orders {
        &self.orders
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.src.heap_bytes() + self.tgt.heap_bytes() + self.pairs.heap_bytes()
    }
}
