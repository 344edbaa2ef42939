//! The training-side index: interned grams (rarest first), the sparse grams' postings in blocks
//! of 65,536 rows (each row stored as its 16 low bits), the dense grams' bitmaps, each row's
//! gram count, and the texts for exact matching.

use super::buf::Buf;
use super::cache::prefetch;
use super::dense::DenseGrams;
use super::error::{internal, invalid, Result};
use super::grams::{for_each_gram_key, Orders};
use super::memory::{hand_back_large_buffers, release_free_memory, written_zeros};
use super::sections::{bad, Problem, SectionsIn, SectionsOut};
use super::store::{PairTable, TextStore, Vocab, VocabBuilder};
use super::tiles::BLOCK_ROWS;

/// Largest number of rows (`u32::MAX` marks "no row").
pub const MAX_ROWS: usize = (u32::MAX - 1) as usize;

/// Largest number of distinct grams in one text, so sums of two sizes fit comfortably.
pub const MAX_GRAMS_PER_TEXT: usize = 1 << 30;

/// Fewest rows containing a gram for it to be stored as a bitmap, by default: 1/32 of the rows,
/// and at least this many.
const DENSE_MIN_DF: u64 = 64;

/// The dense threshold for `rows` rows: the one asked for, else the default; never below 1/64
/// of the rows (a bitmap then costs at most four times the postings it replaces).
fn dense_threshold(rows: usize, requested: Option<u64>) -> u64 {
    let rows = rows as u64;
    let default = rows.div_ceil(32).max(DENSE_MIN_DF);
    requested.unwrap_or(default).max(rows.div_ceil(64)).max(1)
}

/// The postings of one block of rows: sparse gram `g`'s rows are
/// `block_start + lows[offsets[g]..offsets[g + 1]]`, ascending.
#[derive(Debug, Default)]
pub struct PostingsBlock {
    offsets: Buf<u32>,
    lows: Buf<u16>,
}

impl PostingsBlock {
    /// The row offsets (within the block) of sparse gram `g`.
    #[inline]
    pub fn rows(&self, g: u32) -> &[u16] {
        let g = g as usize;
        match (self.offsets.get(g), self.offsets.get(g + 1)) {
            (Some(&lo), Some(&hi)) => self.lows.get(lo as usize..hi as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    fn heap_bytes(&self) -> usize {
        self.offsets.heap_bytes() + self.lows.heap_bytes()
    }
}

/// One side (sources or targets) of the training data. Gram ids ascend with document frequency
/// (ties by first appearance); ids below `dense.first()` (sparse grams) have postings, the
/// others are bitmaps (see `dense.rs`).
#[derive(Debug, Default)]
pub struct SideIndex {
    orders: Orders,
    /// Number of distinct grams of each row (sparse and dense).
    doc_lens: Buf<u32>,
    /// `doc_lens` capped at 65,535: the read-off looks a row's length up in half the bytes
    /// (u32 only for the rare rows at the cap).
    len_floors: Vec<u16>,
    /// Document frequency of each gram.
    dfs: Buf<u32>,
    blocks: Vec<PostingsBlock>,
    dense: DenseGrams,
    vocab: Vocab,
    texts: TextStore,
    empty_rows: Buf<u32>,
}

/// Each row's gram count capped at `u16::MAX` (a lower bound of it).
fn len_floors(doc_lens: &[u32]) -> Vec<u16> {
    doc_lens
        .iter()
        .map(|&n| u16::try_from(n).unwrap_or(u16::MAX))
        .collect()
}

/// One block of rows after the first pass: postings by first-appearance id, dense grams
/// included.
struct RawBlock {
    offsets: Vec<u32>,
    lows: Vec<u16>,
}

impl RawBlock {
    /// Counting sort of the block's (row, id) pairs into postings by id; `ids` holds each row's
    /// distinct ids, `lens` how many each row has, `grams` how many ids exist so far.
    fn from_rows(lens: &[u32], ids: &[u32], grams: usize) -> Result<Self> {
        // offsets[g] first counts gram g, then marks where its list ends; filling each list
        // from its end, rows taken last to first, leaves it at the list's start.
        let mut offsets: Vec<u32> = written_zeros(grams + 1);
        for &g in ids {
            if let Some(c) = offsets.get_mut(g as usize) {
                *c += 1;
            }
        }
        running_totals(&mut offsets);
        let mut lows = vec![0u16; ids.len()];
        let mut end = ids.len();
        for (row, &len) in lens.iter().enumerate().rev() {
            let start = end
                .checked_sub(len as usize)
                .ok_or_else(|| internal("row lengths exceed the ids"))?;
            for &g in ids.get(start..end).unwrap_or(&[]) {
                let c = offsets
                    .get_mut(g as usize)
                    .ok_or_else(|| internal("gram id out of range"))?;
                *c = c
                    .checked_sub(1)
                    .ok_or_else(|| internal("postings underflow"))?;
                let slot = lows
                    .get_mut(*c as usize)
                    .ok_or_else(|| internal("postings overflow"))?;
                *slot = row as u16;
            }
            end = start;
        }
        Ok(Self { offsets, lows })
    }

    fn rows(&self, old: u32) -> &[u16] {
        let g = old as usize;
        match (self.offsets.get(g), self.offsets.get(g + 1)) {
            (Some(&lo), Some(&hi)) => self.lows.get(lo as usize..hi as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The sparse grams' postings under the final ids (`order[new] = old` for new < `first`).
    fn renumbered(&self, order: &[u32], first: usize) -> PostingsBlock {
        let sparse = order.get(..first).unwrap_or(&[]);
        let total: usize = sparse.iter().map(|&old| self.rows(old).len()).sum();
        let mut offsets = Vec::with_capacity(first + 1);
        let mut lows = Vec::with_capacity(total);
        offsets.push(0);
        for &old in sparse {
            lows.extend_from_slice(self.rows(old));
            offsets.push(lows.len() as u32);
        }
        PostingsBlock {
            offsets: offsets.into(),
            lows: lows.into(),
        }
    }
}

/// Turns counts into running totals (each entry the sum of those up to and including it), the
/// middle step of a counting sort.
fn running_totals(counts: &mut [u32]) {
    let mut total = 0u32;
    for c in counts.iter_mut() {
        total += *c;
        *c = total;
    }
}

/// The ids `0..dfs.len()` by ascending document frequency `dfs[id]`, ties by id: a counting
/// sort by frequency (at most the number of rows), stable, in two passes over the ids.
fn by_frequency(dfs: &[u32]) -> Vec<u32> {
    let most = dfs.iter().copied().max().unwrap_or(0) as usize;
    // starts[d]: where the ids of frequency d begin, then the next free place among them.
    let mut starts: Vec<u32> = written_zeros(most + 2);
    for &d in dfs {
        if let Some(c) = starts.get_mut(d as usize + 1) {
            *c += 1;
        }
    }
    running_totals(&mut starts);
    let mut order = vec![0u32; dfs.len()];
    for (id, &d) in dfs.iter().enumerate() {
        if let Some(c) = starts.get_mut(d as usize) {
            if let Some(slot) = order.get_mut(*c as usize) {
                *slot = id as u32;
            }
            *c += 1;
        }
    }
    order
}

/// First pass over one block of rows: each row's distinct gram ids (interned into `vocab`,
/// gathered in `ids`, which the blocks share so its pages are met once), then the block's
/// postings by those ids.
fn intern_block<S: AsRef<str>>(
    texts: &[S],
    first_row: usize,
    orders: &Orders,
    vocab: &mut VocabBuilder,
    ids: &mut Vec<u32>,
    doc_lens: &mut Vec<u32>,
) -> Result<RawBlock> {
    ids.clear();
    let mut lens: Vec<u32> = Vec::with_capacity(texts.len());
    let mut bounds = Vec::new();
    let mut row_grams: Vec<(u64, usize, usize)> = Vec::new();
    for (offset, text) in texts.iter().enumerate() {
        let tag = (first_row + offset) as u32 + 1;
        let text = text.as_ref();
        row_grams.clear();
        for_each_gram_key(text, orders, &mut bounds, |key, lo, hi| {
            vocab.prefetch(key);
            row_grams.push((key, lo, hi));
        });
        let before = ids.len();
        for &(key, lo, hi) in &row_grams {
            // Only a gram without a short key is looked up by its text.
            let g = if key == 0 {
                text.get(lo..hi).unwrap_or("")
            } else {
                ""
            };
            let (id, seen) = vocab
                .intern(key, g, tag)
                .ok_or_else(|| invalid("too many distinct n-grams in the training data"))?;
            if !seen {
                ids.push(id);
            }
        }
        let len = ids.len() - before;
        if len > MAX_GRAMS_PER_TEXT {
            return Err(invalid("a training text has too many distinct n-grams"));
        }
        lens.push(len as u32);
    }
    doc_lens.extend_from_slice(&lens);
    RawBlock::from_rows(&lens, ids, vocab.len())
}

impl SideIndex {
    /// Builds the index of `texts` (already normalised) for the given orders; grams in at least
    /// `dense_min_df` rows are stored as bitmaps.
    pub fn build<S: AsRef<str> + Sync>(
        texts: &[S],
        orders: &Orders,
        dense_min_df: u64,
    ) -> Result<Self> {
        let rows = texts.len();
        if rows > MAX_ROWS {
            return Err(invalid(format!(
                "at most {MAX_ROWS} training rows are supported"
            )));
        }
        let (built, texts) = rayon::join(
            || Self::build_grams(texts, orders, dense_min_df),
            || TextStore::build(texts),
        );
        let mut side = built?;
        side.empty_rows = (0..rows as u32)
            .filter(|&d| texts.text(d).is_empty())
            .collect::<Vec<u32>>()
            .into();
        side.texts = texts;
        Ok(side)
    }

    /// Everything but the stored texts and the empty-row list.
    fn build_grams<S: AsRef<str> + Sync>(
        texts: &[S],
        orders: &Orders,
        dense_min_df: u64,
    ) -> Result<Self> {
        let rows = texts.len();
        let mut vocab = Vocab::builder();
        let mut doc_lens: Vec<u32> = Vec::with_capacity(rows);
        let mut raw = Vec::with_capacity(rows.div_ceil(BLOCK_ROWS));
        let mut ids: Vec<u32> = Vec::new();
        for (b, chunk) in texts.chunks(BLOCK_ROWS).enumerate() {
            if chunk.len() < BLOCK_ROWS {
                // The last, partial block: a buffer sized for a full one would keep all its
                // pages alongside every block's postings, at the build's peak.
                ids = Vec::new();
            }
            raw.push(intern_block(
                chunk,
                b * BLOCK_ROWS,
                orders,
                &mut vocab,
                &mut ids,
                &mut doc_lens,
            )?);
        }
        drop(ids);
        // Document frequencies from the blocks' list lengths (counted once per block by the
        // counting sort, instead of one more scattered increment per distinct gram of a row).
        let mut dfs: Vec<u32> = written_zeros(vocab.len());
        for block in &raw {
            for (df, ends) in dfs.iter_mut().zip(block.offsets.windows(2)) {
                *df += ends[1] - ends[0];
            }
        }
        // Final ids: ascending document frequency, ties by first appearance (deterministic).
        let order = by_frequency(&dfs);
        let first = order.partition_point(|&old| {
            u64::from(dfs.get(old as usize).copied().unwrap_or(0)) < dense_min_df
        });
        let mut new_of = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            if let Some(slot) = new_of.get_mut(old as usize) {
                *slot = new as u32;
            }
        }
        vocab.renumber(&new_of);
        drop(new_of);
        let vocab = vocab.finish();
        let dense_ids = order.get(first..).unwrap_or(&[]);
        let dense = DenseGrams::from_blocks(
            rows,
            first as u32,
            dense_ids
                .iter()
                .map(|&old| dfs.get(old as usize).copied().unwrap_or(0))
                .collect(),
            &raw.iter()
                .map(|block| {
                    dense_ids
                        .iter()
                        .map(|&old| block.rows(old))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
        )?;
        // One block at a time, each raw block freed once renumbered.
        let blocks: Vec<PostingsBlock> = raw
            .into_iter()
            .map(|block| block.renumbered(&order, first))
            .collect();
        let dfs: Vec<u32> = order
            .iter()
            .map(|&old| dfs.get(old as usize).copied().unwrap_or(0))
            .collect();
        Ok(Self {
            orders: orders.clone(),
            len_floors: len_floors(&doc_lens),
            doc_lens: doc_lens.into(),
            dfs: dfs.into(),
            blocks,
            dense,
            vocab,
            ..Self::default()
        })
    }

    /// Number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.doc_lens.len()
    }

    /// Number of distinct grams of row `d`.
    #[inline]
    pub fn doc_len(&self, d: u32) -> u64 {
        match self.len_floors.get(d as usize) {
            Some(&n) if n < u16::MAX => u64::from(n),
            _ => self.doc_lens.get(d as usize).map_or(0, |&n| u64::from(n)),
        }
    }

    /// Asks for the cache line holding row `d`'s gram count (see `doc_len`).
    #[inline]
    pub fn prefetch_len(&self, d: u32) {
        if let Some(n) = self.len_floors.get(d as usize) {
            prefetch(n);
        }
    }

    /// The postings blocks (block `b` holds rows `b·BLOCK_ROWS..`).
    #[inline]
    pub fn blocks(&self) -> &[PostingsBlock] {
        &self.blocks
    }

    /// Document frequency of gram `g`.
    #[inline]
    pub fn df(&self, g: u32) -> u64 {
        self.dfs.get(g as usize).map_or(0, |&d| u64::from(d))
    }

    /// The dense grams.
    #[inline]
    pub fn dense(&self) -> &DenseGrams {
        &self.dense
    }

    /// Calls `f` with each row containing gram `g`, ascending.
    #[inline]
    pub fn for_each_row(&self, g: u32, mut f: impl FnMut(u32)) {
        if self.dense.is_dense(g) {
            self.dense.for_each_row(g, f);
        } else {
            for (b, block) in self.blocks.iter().enumerate() {
                let base = (b * BLOCK_ROWS) as u32;
                for &low in block.rows(g) {
                    f(base + u32::from(low));
                }
            }
        }
    }

    /// The n-gram orders.
    #[inline]
    pub fn orders(&self) -> &Orders {
        &self.orders
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

    /// Whether the arrays are views into a stored index's map.
    #[cfg(test)]
    pub fn doc_lens_mapped(&self) -> bool {
        self.doc_lens.is_mapped()
    }

    /// Rows whose text is empty, ascending.
    pub fn empty_rows(&self) -> &[u32] {
        &self.empty_rows
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.doc_lens.heap_bytes()
            + self.len_floors.capacity() * 2
            + self.dfs.heap_bytes()
            + self.empty_rows.heap_bytes()
            + self
                .blocks
                .iter()
                .map(PostingsBlock::heap_bytes)
                .sum::<usize>()
            + self.dense.heap_bytes()
            + self.vocab.heap_bytes()
            + self.texts.heap_bytes()
    }

    /// The arrays to store (see `sections.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, p: &str) {
        out.put(format!("{p}.doc_lens"), &self.doc_lens);
        out.put(format!("{p}.dfs"), &self.dfs);
        out.put(format!("{p}.empty_rows"), &self.empty_rows);
        out.put_u64s(format!("{p}.blocks"), &[self.blocks.len() as u64]);
        for (b, block) in self.blocks.iter().enumerate() {
            out.put(format!("{p}.block{b}.offsets"), &block.offsets);
            out.put(format!("{p}.block{b}.lows"), &block.lows);
        }
        self.dense.to_sections(out, &format!("{p}.dense"));
        self.vocab.to_sections(out, &format!("{p}.vocab"));
        self.texts.to_sections(out, &format!("{p}.texts"));
    }

    /// The side from stored arrays, with the checks that keep every lookup in range.
    pub fn from_sections(
        sections: &SectionsIn,
        p: &str,
        orders: &Orders,
    ) -> std::result::Result<Self, Problem> {
        let [blocks] = sections.u64s(&format!("{p}.blocks"))?;
        let blocks = (0..blocks)
            .map(|b| {
                Ok(PostingsBlock {
                    offsets: sections.take(&format!("{p}.block{b}.offsets"))?,
                    lows: sections.take(&format!("{p}.block{b}.lows"))?,
                })
            })
            .collect::<std::result::Result<Vec<_>, Problem>>()?;
        let doc_lens: Buf<u32> = sections.take(&format!("{p}.doc_lens"))?;
        let side = Self {
            orders: orders.clone(),
            len_floors: len_floors(&doc_lens),
            doc_lens,
            dfs: sections.take(&format!("{p}.dfs"))?,
            empty_rows: sections.take(&format!("{p}.empty_rows"))?,
            blocks,
            dense: DenseGrams::from_sections(sections, &format!("{p}.dense"))?,
            vocab: Vocab::from_sections(sections, &format!("{p}.vocab"))?,
            texts: TextStore::from_sections(sections, &format!("{p}.texts"))?,
        };
        let rows = side.rows();
        let first = side.dense.first() as usize;
        let blocks_fit = side.blocks.len() == rows.div_ceil(BLOCK_ROWS)
            && side.blocks.iter().all(|b| {
                b.offsets.len() == first + 1
                    && b.offsets.windows(2).all(|w| w[0] <= w[1])
                    && b.offsets
                        .last()
                        .is_some_and(|&e| e as usize == b.lows.len())
            });
        let shaped = blocks_fit
            && first + side.dense.count() == side.vocab.len()
            && side.dfs.len() == side.vocab.len()
            && side.dense.rows() == rows
            && side.texts.rows() == rows
            && side.empty_rows.iter().all(|&d| (d as usize) < rows);
        if !shaped {
            return Err(bad(format!("{p}: arrays of inconsistent lengths")));
        }
        Ok(side)
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
        dense_min_df: Option<u64>,
    ) -> Result<Self> {
        if sources.len() != targets.len() {
            return Err(invalid(format!(
                "sources and targets must have the same length, got {} and {}",
                sources.len(),
                targets.len()
            )));
        }
        let min_df = dense_threshold(sources.len(), dense_min_df);
        // What the caller freed before (e.g. normalising the texts) goes back to the system
        // first, so the build's peak does not stack on it.
        hand_back_large_buffers();
        release_free_memory();
        // Both sides at once (interning a side is sequential); what the builds free goes back
        // to the system afterwards.
        let (src, tgt) = rayon::join(
            || SideIndex::build(sources, &orders, min_df),
            || SideIndex::build(targets, &orders, min_df),
        );
        let (src, tgt) = (src?, tgt?);
        release_free_memory();
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

    /// The arrays to store (see `sections.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>) {
        let orders: Vec<u64> = self.orders.as_slice().iter().map(|&n| n as u64).collect();
        out.put_u64s("orders", &orders);
        self.src.to_sections(out, "src");
        self.tgt.to_sections(out, "tgt");
        self.pairs.to_sections(out, "pairs");
    }

    /// The index from stored arrays.
    pub fn from_sections(sections: &SectionsIn) -> std::result::Result<Self, Problem> {
        let orders: Buf<u64> = sections.take("orders")?;
        let orders: Vec<i64> = orders.iter().map(|&n| n as i64).collect();
        let orders = Orders::new(&orders).map_err(|e| bad(format!("orders: {e}")))?;
        let src = SideIndex::from_sections(sections, "src", &orders)?;
        let tgt = SideIndex::from_sections(sections, "tgt", &orders)?;
        if src.rows() != tgt.rows() {
            return Err(bad("sources and targets of different lengths"));
        }
        let pairs = PairTable::from_sections(sections, "pairs", src.rows())?;
        Ok(Self {
            orders,
            src,
            tgt,
            pairs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_by_frequency_are_sorted_by_frequency_then_id() {
        for n in [0usize, 1, 2, 17, 1000] {
            let mut state = 0x2545_F491_4F6C_DD1Du64 ^ n as u64;
            let dfs: Vec<u32> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 40) as u32
                })
                .collect();
            let mut want: Vec<u32> = (0..n as u32).collect();
            want.sort_by_key(|&id| (dfs[id as usize], id));
            assert_eq!(by_frequency(&dfs), want, "{n} ids");
        }
    }
}
