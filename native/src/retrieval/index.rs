//! The training-side index: interned grams (rarest first), per-row gram lists and postings,
//! both in CSR layout, plus the texts for exact matching.

use hashbrown::HashMap;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use super::buf::Buf;
use super::dense::{words_for, DenseGrams};
use super::error::{internal, invalid, Result};
use super::grams::{for_each_gram, Orders};
use super::persist::{bad, Problem, SectionsIn, SectionsOut};
use super::store::{PairTable, TextStore, Vocab};

/// Fewest rows per block of the first build pass.
const MIN_BLOCK: usize = 4096;

/// Largest number of rows (`u32::MAX` marks "no row").
pub const MAX_ROWS: usize = (u32::MAX - 1) as usize;

/// Largest number of distinct grams in one text, so sums of two sizes fit comfortably.
pub const MAX_GRAMS_PER_TEXT: usize = 1 << 30;

/// Fewest rows containing a gram for it to be stored as a bitmap, by default: 1/32 of the rows
/// (a bitmap is then no larger than the postings list it replaces), and at least this many.
const DENSE_MIN_DF: u64 = 64;

/// The dense threshold for `rows` rows: the one asked for, else the default; never below 1/64
/// of the rows (a bitmap then costs at most twice the postings it replaces, and each row's
/// bitset stays short).
fn dense_threshold(rows: usize, requested: Option<u64>) -> u64 {
    let rows = rows as u64;
    let default = rows.div_ceil(32).max(DENSE_MIN_DF);
    requested.unwrap_or(default).max(rows.div_ceil(64)).max(1)
}

/// One side (sources or targets) of the training data. Gram ids ascend with document frequency;
/// ids below `dense.first()` (sparse grams) have postings lists and appear in the rows' sparse
/// lists, the others are bitmaps (see `dense.rs`).
#[derive(Debug, Default)]
pub struct SideIndex {
    /// Row `d`'s sparse gram ids are `doc_grams[doc_offsets[d]..doc_offsets[d + 1]]`, ascending.
    doc_offsets: Buf<u64>,
    doc_grams: Buf<u32>,
    /// Number of distinct grams of each row (sparse and dense).
    doc_lens: Buf<u32>,
    /// Sparse gram `g`'s rows are `postings[post_offsets[g]..post_offsets[g + 1]]`, ascending.
    post_offsets: Buf<u64>,
    postings: Buf<u32>,
    dense: DenseGrams,
    vocab: Vocab,
    texts: TextStore,
    empty_rows: Buf<u32>,
}

/// A gram as a hash-map key: short grams compare byte by byte inline rather than through a
/// library call.
#[derive(Clone, Copy)]
struct Gram<'a>(&'a str);

impl PartialEq for Gram<'_> {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
    }
}

impl Eq for Gram<'_> {}

impl std::hash::Hash for Gram<'_> {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(self.0.as_bytes());
    }
}

/// First build pass over one block of rows: block-local gram ids, their document frequencies
/// and each row's distinct local ids.
struct BlockPass<'a> {
    /// Grams of up to 7 bytes, packed into an integer key (see `short_key`).
    short: HashMap<u64, u32, FxBuildHasher>,
    /// Longer grams.
    long: HashMap<Gram<'a>, u32, FxBuildHasher>,
    /// Each local id's gram (its first occurrence).
    grams: Vec<&'a str>,
    df: Vec<u32>,
    last: Vec<u32>,
    ids: Vec<u32>,
    lens: Vec<u32>,
    /// Per row, how many of its (sorted, global) ids are sparse; filled by the second pass.
    sparse: Vec<u32>,
}

impl<'a> BlockPass<'a> {
    fn run<S: AsRef<str>>(texts: &'a [S], lo: usize, orders: &Orders) -> Self {
        // Upper bound of the gram occurrences, reserved (not touched) to avoid regrowing.
        let occurrences: usize = texts
            .iter()
            .map(|t| t.as_ref().len() * orders.as_slice().len())
            .sum();
        let mut pass = BlockPass {
            short: HashMap::with_hasher(FxBuildHasher),
            long: HashMap::with_hasher(FxBuildHasher),
            grams: Vec::new(),
            df: Vec::new(),
            last: Vec::new(),
            ids: Vec::with_capacity(occurrences),
            lens: Vec::with_capacity(texts.len()),
            sparse: Vec::with_capacity(texts.len()),
        };
        let mut bounds = Vec::new();
        for (offset, text) in texts.iter().enumerate() {
            let tag = (lo + offset) as u32 + 1;
            let before = pass.ids.len();
            let BlockPass {
                short,
                long,
                grams,
                df,
                last,
                ids,
                ..
            } = &mut pass;
            let text = text.as_ref();
            for_each_gram(text, orders, &mut bounds, |g| {
                let next = df.len() as u32;
                let id = match short_key(text, g) {
                    Some(key) => *short.entry(key).or_insert(next),
                    None => *long.entry(Gram(g)).or_insert(next),
                };
                if id == next {
                    grams.push(g);
                    df.push(0);
                    last.push(0);
                }
                if let (Some(seen), Some(count)) =
                    (last.get_mut(id as usize), df.get_mut(id as usize))
                {
                    if *seen != tag {
                        *seen = tag;
                        *count += 1;
                        ids.push(id);
                    }
                }
            });
            pass.lens.push((pass.ids.len() - before) as u32);
        }
        pass.last = Vec::new();
        pass.short = HashMap::default();
        pass.long = HashMap::default();
        pass
    }
}

/// A gram of at most 7 bytes as an integer: its bytes (little-endian) and its length in the top
/// byte, so different grams never share a key. `gram` is a slice of `text`.
#[inline]
fn short_key(text: &str, gram: &str) -> Option<u64> {
    let len = gram.len();
    if len > 7 {
        return None;
    }
    let at = (gram.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    debug_assert_eq!(text.as_bytes().get(at..at + len), Some(gram.as_bytes()));
    let mut word = [0u8; 8];
    match text.as_bytes().get(at..at + 8) {
        // Eight bytes are readable from the gram's start: one load, then mask.
        Some(bytes) => word.copy_from_slice(bytes),
        None => word.get_mut(..len)?.copy_from_slice(gram.as_bytes()),
    }
    let mask = (1u64 << (8 * len)) - 1;
    Some((u64::from_le_bytes(word) & mask) | ((len as u64) << 56))
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

/// Pass 1, one block of rows per task: grams are hashed once, into block-local ids.
fn first_pass<'a, S: AsRef<str> + Sync>(texts: &'a [S], orders: &Orders) -> Vec<BlockPass<'a>> {
    let rows = texts.len();
    let blocks = (rayon::current_num_threads() * 2).clamp(1, rows.div_ceil(MIN_BLOCK).max(1));
    let block_rows = rows.div_ceil(blocks).max(1);
    texts
        .par_chunks(block_rows)
        .enumerate()
        .map(|(b, chunk)| BlockPass::run(chunk, b * block_rows, orders))
        .collect()
}

/// The grams of every block under global ids.
struct GlobalGrams {
    /// The grams by id: ascending document frequency, ties by the gram.
    vocab: Vocab,
    /// Each gram's document frequency, by id.
    dfs: Vec<u32>,
    /// Per block, the global id of each block-local id.
    to_global: Vec<Vec<u32>>,
}

/// Global ids: merges the blocks' grams, then numbers them by ascending document frequency
/// (ties by the gram, so ids are deterministic): rarest first.
fn number_grams(passes: &[BlockPass<'_>]) -> Result<GlobalGrams> {
    let (grams, mut to_global) = merge_blocks(passes);
    if grams.len() >= u32::MAX as usize {
        return Err(invalid("too many distinct n-grams in the training data"));
    }
    let mut order: Vec<u32> = (0..grams.len() as u32).collect();
    order.par_sort_unstable_by_key(|&i| grams.get(i as usize).map(|&(g, df)| (df, g)));
    let mut rank = vec![0u32; grams.len()];
    let gram_bytes = grams.iter().map(|(g, _)| g.len()).sum();
    let mut vocab = Vocab::builder(grams.len(), gram_bytes);
    let mut dfs: Vec<u32> = Vec::with_capacity(grams.len());
    for (new_id, &old) in order.iter().enumerate() {
        if let (Some(r), Some(&(g, df))) = (rank.get_mut(old as usize), grams.get(old as usize)) {
            *r = new_id as u32;
            vocab.push_new(g);
            dfs.push(df);
        }
    }
    drop(order);
    drop(grams);
    for map in &mut to_global {
        for id in map.iter_mut() {
            *id = rank.get(*id as usize).copied().unwrap_or(u32::MAX);
        }
    }
    Ok(GlobalGrams {
        vocab: vocab.finish(),
        dfs,
        to_global,
    })
}

/// The distinct grams of all blocks (in order of first appearance) with their summed document
/// frequencies, and per block the merged id of each block-local id.
fn merge_blocks<'a>(passes: &[BlockPass<'a>]) -> (Vec<(&'a str, u32)>, Vec<Vec<u32>>) {
    let mut global: HashMap<Gram<'a>, u32, FxBuildHasher> = HashMap::with_hasher(FxBuildHasher);
    let mut grams: Vec<(&'a str, u32)> = Vec::new();
    let mut to_global: Vec<Vec<u32>> = Vec::with_capacity(passes.len());
    for pass in passes {
        let mut map = vec![0u32; pass.df.len()];
        for (lid, &g) in pass.grams.iter().enumerate() {
            let next = grams.len() as u32;
            let id = *global.entry(Gram(g)).or_insert(next);
            if id == next {
                grams.push((g, 0));
            }
            if let (Some(entry), Some(&df)) = (grams.get_mut(id as usize), pass.df.get(lid)) {
                entry.1 += df;
            }
            if let Some(slot) = map.get_mut(lid) {
                *slot = id;
            }
        }
        to_global.push(map);
    }
    (grams, to_global)
}

/// Pass 2: each row's ids mapped to global ids in place, its sparse ones (below `first`)
/// moved to the front and sorted; `pass.sparse` records how many.
fn split_sparse(passes: &mut [BlockPass<'_>], to_global: &[Vec<u32>], first: u32) {
    passes
        .par_iter_mut()
        .zip(to_global.par_iter())
        .for_each(|(pass, map)| {
            let mut at = 0usize;
            for len in pass.lens.iter_mut() {
                let n = *len as usize;
                if let Some(ids) = pass.ids.get_mut(at..at + n) {
                    pass.sparse.push(sparse_first(ids, map, first) as u32);
                }
                at += n;
            }
        });
}

/// Maps one row's block-local `ids` to global ids and moves the sparse ones (below `first`) to
/// the front, sorted (the dense ones, which go to a bitset, follow); returns how many are
/// sparse.
fn sparse_first(ids: &mut [u32], map: &[u32], first: u32) -> usize {
    let mut sparse = 0usize;
    for i in 0..ids.len() {
        let id = ids.get(i).map_or(u32::MAX, |&l| {
            map.get(l as usize).copied().unwrap_or(u32::MAX)
        });
        if let Some(slot) = ids.get_mut(i) {
            *slot = id;
        }
        if id < first {
            ids.swap(i, sparse);
            sparse += 1;
        }
    }
    if let Some(low) = ids.get_mut(..sparse) {
        low.sort_unstable();
    }
    sparse
}

/// Every row's sparse gram list (CSR) and dense-gram bitset.
struct RowLists {
    /// Row `d`'s sparse grams are `doc_grams[doc_offsets[d]..doc_offsets[d + 1]]`.
    doc_offsets: Vec<u64>,
    doc_grams: Vec<u32>,
    /// `row_words` words per row: bit `g - first` is set for each of its dense grams `g`.
    by_row: Vec<u64>,
}

/// The rows' sparse lists and dense bitsets from the passes (after `split_sparse`), each block
/// written in parallel into its own slice of the arrays.
fn row_lists(
    passes: &[BlockPass<'_>],
    rows: usize,
    row_words: usize,
    first: u32,
) -> Result<RowLists> {
    let sparse_lens = passes.iter().flat_map(|p| p.sparse.iter().copied());
    let doc_offsets = prefix_sums(sparse_lens.map(u64::from), rows);
    let total = usize::try_from(doc_offsets.last().copied().unwrap_or(0))
        .map_err(|_| invalid("the training data is too large for this platform"))?;
    let mut doc_grams = vec![0u32; total];
    let mut by_row = vec![0u64; rows * row_words];
    let mut parts: Vec<(&mut [u32], &mut [u64], &BlockPass<'_>)> = Vec::with_capacity(passes.len());
    let (mut rest, mut rest_rows) = (doc_grams.as_mut_slice(), by_row.as_mut_slice());
    for pass in passes {
        let sparse_total: usize = pass.sparse.iter().map(|&n| n as usize).sum();
        let (part, tail) = rest
            .split_at_mut_checked(sparse_total)
            .ok_or_else(|| internal("row offsets exceed the gram array"))?;
        let (bits, bits_tail) = rest_rows
            .split_at_mut_checked(pass.lens.len() * row_words)
            .ok_or_else(|| internal("row bitsets exceed their array"))?;
        parts.push((part, bits, pass));
        rest = tail;
        rest_rows = bits_tail;
    }
    parts
        .into_par_iter()
        .try_for_each(|(part, bits, pass)| write_block_rows(pass, part, bits, row_words, first))?;
    Ok(RowLists {
        doc_offsets,
        doc_grams,
        by_row,
    })
}

/// Writes one block's rows: their sparse grams, one after the other, into `part`, and their
/// dense grams into their bitsets of `row_words` words in `bits`.
fn write_block_rows(
    pass: &BlockPass<'_>,
    part: &mut [u32],
    bits: &mut [u64],
    row_words: usize,
    first: u32,
) -> Result<()> {
    let (mut at, mut out) = (0usize, 0usize);
    for (row, (&len, &sparse)) in pass.lens.iter().zip(&pass.sparse).enumerate() {
        let (len, sparse) = (len as usize, sparse as usize);
        let ids = pass
            .ids
            .get(at..at + len)
            .ok_or_else(|| internal("gram list overflows its slot"))?;
        let (low, high) = ids.split_at(sparse);
        part.get_mut(out..out + sparse)
            .ok_or_else(|| internal("sparse list overflows its slot"))?
            .copy_from_slice(low);
        let row_bits = bits
            .get_mut(row * row_words..(row + 1) * row_words)
            .ok_or_else(|| internal("row bitset out of range"))?;
        for &g in high {
            let k = (g - first) as usize;
            if let Some(w) = row_bits.get_mut(k / 64) {
                *w |= 1 << (k % 64);
            }
        }
        at += len;
        out += sparse;
    }
    Ok(())
}

/// Postings of the sparse grams (offsets and rows, rows ascending within each gram) from the
/// rows' sparse lists; `sparse_dfs` holds each sparse gram's document frequency.
fn sparse_postings(
    doc_offsets: &[u64],
    doc_grams: &[u32],
    sparse_dfs: &[u32],
) -> Result<(Vec<u64>, Vec<u32>)> {
    let grams = sparse_dfs.len();
    let post_offsets = prefix_sums(sparse_dfs.iter().map(|&d| u64::from(d)), grams);
    let mut cursor: Vec<u64> = post_offsets.get(..grams).unwrap_or(&[]).to_vec();
    let mut postings = vec![0u32; doc_grams.len()];
    for (row, bounds) in doc_offsets.windows(2).enumerate() {
        let &[lo, hi] = bounds else { continue };
        for &g in doc_grams.get(lo as usize..hi as usize).unwrap_or(&[]) {
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
    Ok((post_offsets, postings))
}

impl SideIndex {
    /// Builds the index of `texts` (already normalised) for the given orders, in parallel; grams
    /// in at least `dense_min_df` rows are stored as bitmaps.
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
            .collect::<Vec<_>>()
            .into();
        side.texts = texts;
        Ok(side)
    }

    /// Everything but the stored texts and the empty-row list: the grams numbered rarest first,
    /// each row's sparse gram list and dense-gram bitset, and the sparse grams' postings.
    fn build_grams<S: AsRef<str> + Sync>(
        texts: &[S],
        orders: &Orders,
        dense_min_df: u64,
    ) -> Result<Self> {
        let rows = texts.len();
        let mut passes = first_pass(texts, orders);
        let GlobalGrams {
            vocab,
            dfs,
            to_global,
        } = number_grams(&passes)?;
        let first_dense = dfs.partition_point(|&df| u64::from(df) < dense_min_df);
        let row_words = words_for(dfs.len() - first_dense);
        let first = first_dense as u32;
        split_sparse(&mut passes, &to_global, first);
        drop(to_global);
        let doc_lens: Vec<u32> = passes.iter().flat_map(|p| p.lens.iter().copied()).collect();
        if doc_lens.iter().any(|&n| n as usize > MAX_GRAMS_PER_TEXT) {
            return Err(invalid("a training text has too many distinct n-grams"));
        }
        let RowLists {
            doc_offsets,
            doc_grams,
            by_row,
        } = row_lists(&passes, rows, row_words, first)?;
        drop(passes);
        let dense_dfs = dfs.get(first_dense..).unwrap_or(&[]).to_vec();
        let dense = DenseGrams::from_rows(rows, first, dense_dfs, by_row, row_words);
        let sparse_dfs = dfs.get(..first_dense).unwrap_or(&[]);
        let (post_offsets, postings) = sparse_postings(&doc_offsets, &doc_grams, sparse_dfs)?;
        Ok(Self {
            doc_offsets: doc_offsets.into(),
            doc_grams: doc_grams.into(),
            doc_lens: doc_lens.into(),
            post_offsets: post_offsets.into(),
            postings: postings.into(),
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

    /// The sorted sparse gram ids of row `d`.
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
        self.doc_lens.get(d as usize).map_or(0, |&n| u64::from(n))
    }

    /// The rows containing sparse gram `g`, ascending (empty for a dense gram).
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
        if self.dense.is_dense(g) {
            return self.dense.df(g);
        }
        let g = g as usize;
        match (self.post_offsets.get(g), self.post_offsets.get(g + 1)) {
            (Some(&lo), Some(&hi)) => hi - lo,
            _ => 0,
        }
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
            for &d in self.postings(g) {
                f(d);
            }
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
        self.doc_offsets.heap_bytes()
            + self.post_offsets.heap_bytes()
            + self.doc_lens.heap_bytes()
            + self.doc_grams.heap_bytes()
            + self.postings.heap_bytes()
            + self.empty_rows.heap_bytes()
            + self.dense.heap_bytes()
            + self.vocab.heap_bytes()
            + self.texts.heap_bytes()
    }

    /// The arrays to store (see `persist.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, p: &str) {
        out.put(format!("{p}.doc_offsets"), &self.doc_offsets);
        out.put(format!("{p}.doc_grams"), &self.doc_grams);
        out.put(format!("{p}.doc_lens"), &self.doc_lens);
        out.put(format!("{p}.post_offsets"), &self.post_offsets);
        out.put(format!("{p}.postings"), &self.postings);
        out.put(format!("{p}.empty_rows"), &self.empty_rows);
        self.dense.to_sections(out, &format!("{p}.dense"));
        self.vocab.to_sections(out, &format!("{p}.vocab"));
        self.texts.to_sections(out, &format!("{p}.texts"));
    }

    /// The side from stored arrays, with the checks that keep every lookup in range.
    pub fn from_sections(sections: &SectionsIn, p: &str) -> std::result::Result<Self, Problem> {
        let side = Self {
            doc_offsets: sections.take(&format!("{p}.doc_offsets"))?,
            doc_grams: sections.take(&format!("{p}.doc_grams"))?,
            doc_lens: sections.take(&format!("{p}.doc_lens"))?,
            post_offsets: sections.take(&format!("{p}.post_offsets"))?,
            postings: sections.take(&format!("{p}.postings"))?,
            empty_rows: sections.take(&format!("{p}.empty_rows"))?,
            dense: DenseGrams::from_sections(sections, &format!("{p}.dense"))?,
            vocab: Vocab::from_sections(sections, &format!("{p}.vocab"))?,
            texts: TextStore::from_sections(sections, &format!("{p}.texts"))?,
        };
        let rows = side.rows();
        let ends = |offsets: &[u64], items: usize| offsets.last() == Some(&(items as u64));
        let shaped = side.doc_offsets.len() == rows + 1
            && ends(&side.doc_offsets, side.doc_grams.len())
            && side.post_offsets.len() == side.dense.first() as usize + 1
            && ends(&side.post_offsets, side.postings.len())
            && side.dense.first() as usize + side.dense.count() == side.vocab.len()
            && side.dense.rows() == rows
            && side.texts.rows() == rows;
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
        // One side after the other (each is built in parallel): only one side's build buffers
        // are alive at a time, and what they free goes back to the system before the next.
        let src = SideIndex::build(sources, &orders, min_df)?;
        release_free_memory();
        let tgt = SideIndex::build(targets, &orders, min_df)?;
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

    /// The arrays to store (see `persist.rs`).
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
        let src = SideIndex::from_sections(sections, "src")?;
        let tgt = SideIndex::from_sections(sections, "tgt")?;
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

/// Returns the allocator's freed memory to the system (glibc keeps it otherwise, and the build
/// frees a lot of short-lived buffers).
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim only releases free heap pages; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}
