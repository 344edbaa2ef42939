//! The training-side index: interned grams (rarest first), per-row gram lists and postings,
//! both in CSR layout, plus the texts for exact matching.

use hashbrown::HashMap;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use super::dense::{DenseGrams, TILE_ROWS};
use super::error::{internal, invalid, Result};
use super::grams::{for_each_gram, Orders};
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
/// ids below `dense.first()` (sparse grams) have postings lists, the others are bitmaps (see
/// `dense.rs`).
#[derive(Debug, Default)]
pub struct SideIndex {
    orders: Orders,
    /// Number of distinct grams of each row (sparse and dense).
    doc_lens: Vec<u32>,
    /// Sparse gram `g`'s rows are `postings[post_offsets[g]..post_offsets[g + 1]]`, ascending.
    post_offsets: Vec<u64>,
    postings: Vec<u32>,
    dense: DenseGrams,
    vocab: Vocab,
    texts: TextStore,
    empty_rows: Vec<u32>,
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

/// An open-addressing table from short-gram keys (see `short_key`; never 0) to block-local ids,
/// with the last row (tag) that counted each gram. One entry is 16 bytes, so a lookup touches one
/// cache line, and a row's lookups are prefetched before they are made.
struct ShortTable {
    entries: Vec<ShortEntry>,
    len: usize,
    shift: u32,
}

#[derive(Clone, Copy, Default)]
struct ShortEntry {
    key: u64,
    id: u32,
    tag: u32,
}

impl ShortTable {
    fn new() -> Self {
        Self::with_bits(14)
    }

    fn with_bits(bits: u32) -> Self {
        Self {
            entries: vec![ShortEntry::default(); 1 << bits],
            len: 0,
            shift: 64 - bits,
        }
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline(always)]
    fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Some(e) = self.entries.get(self.slot(key)) {
            // SAFETY: prefetching is a hint; the address is that of a live entry.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    (e as *const ShortEntry).cast::<i8>(),
                );
            }
        }
    }

    /// The entry of `key`, inserted with id `next` when missing (then `true`).
    #[inline(always)]
    fn entry(&mut self, key: u64, next: u32) -> (&mut ShortEntry, bool) {
        if 2 * (self.len + 1) > self.entries.len() {
            self.grow();
        }
        let mask = self.entries.len() - 1;
        let mut i = self.slot(key);
        loop {
            let k = self.entries.get(i).map_or(0, |e| e.key);
            if k == key || k == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        let fresh = self.entries.get(i).is_some_and(|e| e.key == 0);
        if fresh {
            self.len += 1;
        }
        let e = &mut self.entries[i & mask];
        if fresh {
            *e = ShortEntry {
                key,
                id: next,
                tag: 0,
            };
        }
        (e, fresh)
    }

    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let mut bigger = Self::with_bits(bits);
        let mask = bigger.entries.len() - 1;
        for e in self.entries.iter().filter(|e| e.key != 0) {
            let mut i = bigger.slot(e.key);
            while bigger.entries.get(i).is_some_and(|x| x.key != 0) {
                i = (i + 1) & mask;
            }
            if let Some(slot) = bigger.entries.get_mut(i) {
                *slot = *e;
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }
}

/// First build pass over one block of rows: block-local gram ids, their document frequencies
/// and each row's distinct local ids.
struct BlockPass<'a> {
    /// Longer grams (over 7 bytes).
    long: HashMap<Gram<'a>, (u32, u32), FxBuildHasher>,
    /// Each local id's gram (its first occurrence).
    grams: Vec<&'a str>,
    df: Vec<u32>,
    ids: Vec<u32>,
    lens: Vec<u32>,
}

impl<'a> BlockPass<'a> {
    fn run<S: AsRef<str>>(texts: &'a [S], lo: usize, orders: &Orders) -> Self {
        // Upper bound of the gram occurrences, reserved (not touched) to avoid regrowing.
        let occurrences: usize = texts
            .iter()
            .map(|t| t.as_ref().len() * orders.as_slice().len())
            .sum();
        let mut pass = BlockPass {
            long: HashMap::with_hasher(FxBuildHasher),
            grams: Vec::new(),
            df: Vec::new(),
            ids: Vec::with_capacity(occurrences),
            lens: Vec::with_capacity(texts.len()),
        };
        let mut short = ShortTable::new();
        let mut bounds = Vec::new();
        let mut row_grams: Vec<(&'a str, u64)> = Vec::new();
        for (offset, text) in texts.iter().enumerate() {
            let tag = (lo + offset) as u32 + 1;
            let before = pass.ids.len();
            let text = text.as_ref();
            row_grams.clear();
            for_each_gram(text, orders, &mut bounds, |g| {
                let key = short_key(text, g).unwrap_or(0);
                short.prefetch(key);
                row_grams.push((g, key));
            });
            let BlockPass {
                long,
                grams,
                df,
                ids,
                ..
            } = &mut pass;
            for &(g, key) in &row_grams {
                let next = df.len() as u32;
                let (id, seen, fresh) = if key != 0 {
                    let (e, fresh) = short.entry(key, next);
                    let seen = e.tag == tag;
                    e.tag = tag;
                    (e.id, seen, fresh)
                } else {
                    let e = long.entry(Gram(g)).or_insert((next, 0));
                    let seen = e.1 == tag;
                    e.1 = tag;
                    (e.0, seen, e.0 == next)
                };
                if fresh {
                    grams.push(g);
                    df.push(0);
                }
                if !seen {
                    if let Some(count) = df.get_mut(id as usize) {
                        *count += 1;
                    }
                    ids.push(id);
                }
            }
            pass.lens.push((pass.ids.len() - before) as u32);
        }
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
    // Whole tiles per block, so that each block fills its own tiles of the dense bitmaps.
    let block_rows = rows.div_ceil(blocks).max(1).next_multiple_of(TILE_ROWS);
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
    // Ties by first appearance in the texts (the merged order), which does not depend on how
    // the rows were split into blocks.
    order.par_sort_unstable_by_key(|&i| grams.get(i as usize).map(|&(_, df)| (df, i)));
    let mut rank = vec![0u32; grams.len()];
    let gram_bytes = grams.iter().map(|(g, _)| g.len()).sum();
    let mut vocab = Vocab::with_capacity(grams.len(), gram_bytes);
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
        vocab,
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

/// Pass 2: each row's block-local ids mapped to global ids, in place.
fn globalize(passes: &mut [BlockPass<'_>], to_global: &[Vec<u32>]) {
    passes
        .par_iter_mut()
        .zip(to_global.par_iter())
        .for_each(|(pass, map)| {
            for id in pass.ids.iter_mut() {
                *id = map.get(*id as usize).copied().unwrap_or(u32::MAX);
            }
        });
}

/// Postings of the sparse grams (ids below `first`; offsets and rows, rows ascending within
/// each gram) from the rows' global ids; `sparse_dfs` holds each sparse gram's document
/// frequency.
fn sparse_postings(
    passes: &[BlockPass<'_>],
    sparse_dfs: &[u32],
    first: u32,
) -> Result<(Vec<u64>, Vec<u32>)> {
    let grams = sparse_dfs.len();
    let post_offsets = prefix_sums(sparse_dfs.iter().map(|&d| u64::from(d)), grams);
    let total = usize::try_from(post_offsets.last().copied().unwrap_or(0))
        .map_err(|_| invalid("the training data is too large for this platform"))?;
    let mut cursor: Vec<u64> = post_offsets.get(..grams).unwrap_or(&[]).to_vec();
    let mut postings = vec![0u32; total];
    let mut row = 0u32;
    for pass in passes {
        let mut at = 0usize;
        for &len in &pass.lens {
            let ids = pass.ids.get(at..at + len as usize).unwrap_or(&[]);
            for &g in ids.iter().filter(|&&g| g < first) {
                let c = cursor
                    .get_mut(g as usize)
                    .ok_or_else(|| internal("gram id out of range"))?;
                let slot = postings
                    .get_mut(*c as usize)
                    .ok_or_else(|| internal("postings overflow"))?;
                *slot = row;
                *c += 1;
            }
            at += len as usize;
            row += 1;
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
            .collect();
        side.texts = texts;
        Ok(side)
    }

    /// Everything but the stored texts and the empty-row list: the grams numbered rarest first,
    /// each row's gram count, the sparse grams' postings and the dense grams' bitmaps.
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
        let first = first_dense as u32;
        globalize(&mut passes, &to_global);
        drop(to_global);
        let doc_lens: Vec<u32> = passes.iter().flat_map(|p| p.lens.iter().copied()).collect();
        if doc_lens.iter().any(|&n| n as usize > MAX_GRAMS_PER_TEXT) {
            return Err(invalid("a training text has too many distinct n-grams"));
        }
        let dense_dfs = dfs.get(first_dense..).unwrap_or(&[]).to_vec();
        let sparse_dfs = dfs.get(..first_dense).unwrap_or(&[]);
        let blocks: Vec<(&[u32], &[u32])> = passes
            .iter()
            .map(|p| (p.lens.as_slice(), p.ids.as_slice()))
            .collect();
        let (postings, dense) = rayon::join(
            || sparse_postings(&passes, sparse_dfs, first),
            || DenseGrams::from_blocks(rows, first, dense_dfs, &blocks),
        );
        let (post_offsets, postings) = postings?;
        let dense = dense?;
        drop(blocks);
        drop(passes);
        Ok(Self {
            orders: orders.clone(),
            doc_lens,
            post_offsets,
            postings,
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

    /// Rows whose text is empty, ascending.
    pub fn empty_rows(&self) -> &[u32] {
        &self.empty_rows
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.post_offsets.capacity() * 8
            + (self.doc_lens.capacity() + self.postings.capacity() + self.empty_rows.capacity()) * 4
            + self.dense.heap_bytes()
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
