//! The training-side index: interned grams (rarest first), per-row gram lists and postings,
//! both in CSR layout, plus the texts for exact matching.

use hashbrown::HashMap;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use super::error::{internal, invalid, Result};
use super::grams::{for_each_gram, Orders};
use super::store::{PairTable, TextStore, Vocab};

/// Fewest rows per block of the first build pass.
const MIN_BLOCK: usize = 4096;

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
    /// Row sizes, saturated at `u16::MAX` (a compact, cache-friendly copy of the offsets).
    doc_lens: Vec<u16>,
    /// Gram `g`'s rows are `postings[post_offsets[g]..post_offsets[g + 1]]`, ascending.
    post_offsets: Vec<u64>,
    postings: Vec<u32>,
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

/// First build pass over one block of rows: block-local gram ids, their document frequencies
/// and each row's distinct local ids.
struct BlockPass<'a> {
    local: HashMap<Gram<'a>, u32, FxBuildHasher>,
    df: Vec<u32>,
    last: Vec<u32>,
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
            local: HashMap::with_hasher(FxBuildHasher),
            df: Vec::new(),
            last: Vec::new(),
            ids: Vec::with_capacity(occurrences),
            lens: Vec::with_capacity(texts.len()),
        };
        let mut bounds = Vec::new();
        for (offset, text) in texts.iter().enumerate() {
            let tag = (lo + offset) as u32 + 1;
            let before = pass.ids.len();
            let BlockPass {
                local,
                df,
                last,
                ids,
                ..
            } = &mut pass;
            for_each_gram(text.as_ref(), orders, &mut bounds, |g| {
                let next = df.len() as u32;
                let id = *local.entry(Gram(g)).or_insert(next);
                if id == next {
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
        pass
    }
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
        let doc_lens = doc_offsets
            .windows(2)
            .map(|w| u16::try_from(w[1] - w[0]).unwrap_or(u16::MAX))
            .collect();
        Ok(Self {
            doc_offsets,
            doc_grams,
            doc_lens,
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
        // Pass 1, one block of rows per task: grams are hashed once, into block-local ids.
        let blocks = (rayon::current_num_threads() * 2).clamp(1, rows.div_ceil(MIN_BLOCK).max(1));
        let block_rows = rows.div_ceil(blocks).max(1);
        let passes: Vec<BlockPass<'_>> = texts
            .par_chunks(block_rows)
            .enumerate()
            .map(|(b, chunk)| BlockPass::run(chunk, b * block_rows, orders))
            .collect();

        // Global ids: merge the blocks' grams, then number them by ascending document
        // frequency (ties by the gram, so ids are deterministic): rarest first.
        let mut global: HashMap<Gram<'_>, u32, FxBuildHasher> = HashMap::with_hasher(FxBuildHasher);
        let mut grams: Vec<(&str, u32)> = Vec::new();
        let mut to_global: Vec<Vec<u32>> = Vec::with_capacity(passes.len());
        for pass in &passes {
            let mut map = vec![0u32; pass.df.len()];
            for (&Gram(g), &lid) in &pass.local {
                let next = grams.len() as u32;
                let id = *global.entry(Gram(g)).or_insert(next);
                if id == next {
                    grams.push((g, 0));
                }
                if let (Some(entry), Some(&df)) =
                    (grams.get_mut(id as usize), pass.df.get(lid as usize))
                {
                    entry.1 += df;
                }
                if let Some(slot) = map.get_mut(lid as usize) {
                    *slot = id;
                }
            }
            to_global.push(map);
        }
        drop(global);
        if grams.len() >= u32::MAX as usize {
            return Err(invalid("too many distinct n-grams in the training data"));
        }
        let mut order: Vec<u32> = (0..grams.len() as u32).collect();
        order.par_sort_unstable_by_key(|&i| grams.get(i as usize).map(|&(g, df)| (df, g)));
        let mut rank = vec![0u32; grams.len()];
        let gram_bytes = grams.iter().map(|(g, _)| g.len()).sum();
        let mut vocab = Vocab::with_capacity(grams.len(), gram_bytes);
        let mut dfs = Vec::with_capacity(grams.len());
        for (new_id, &old) in order.iter().enumerate() {
            if let (Some(r), Some(&(g, df))) = (rank.get_mut(old as usize), grams.get(old as usize))
            {
                *r = new_id as u32;
                vocab.push_new(g);
                dfs.push(u64::from(df));
            }
        }
        drop(order);
        drop(grams);
        for map in &mut to_global {
            for id in map.iter_mut() {
                *id = rank.get(*id as usize).copied().unwrap_or(u32::MAX);
            }
        }
        drop(rank);
        let post_offsets = prefix_sums(dfs.into_iter(), vocab.len());

        // Pass 2: each row's ids mapped to global ids and sorted, straight into the flat array.
        let lens = passes.iter().flat_map(|p| p.lens.iter().copied());
        let doc_offsets = prefix_sums(lens.map(u64::from), rows);
        if doc_offsets
            .windows(2)
            .any(|w| (w[1] - w[0]) as usize > MAX_GRAMS_PER_TEXT)
        {
            return Err(invalid("a training text has too many distinct n-grams"));
        }
        let total = usize::try_from(doc_offsets.last().copied().unwrap_or(0))
            .map_err(|_| invalid("the training data is too large for this platform"))?;
        let mut doc_grams = vec![0u32; total];
        let mut parts: Vec<(&mut [u32], BlockPass<'_>, Vec<u32>)> =
            Vec::with_capacity(passes.len());
        let mut rest = doc_grams.as_mut_slice();
        for (pass, map) in passes.into_iter().zip(to_global) {
            let (part, tail) = rest
                .split_at_mut_checked(pass.ids.len())
                .ok_or_else(|| internal("row offsets exceed the gram array"))?;
            parts.push((part, pass, map));
            rest = tail;
        }
        parts
            .into_par_iter()
            .try_for_each(|(part, pass, map)| -> Result<()> {
                let mut at = 0usize;
                for &len in &pass.lens {
                    let len = len as usize;
                    let (Some(out), Some(local)) =
                        (part.get_mut(at..at + len), pass.ids.get(at..at + len))
                    else {
                        return Err(internal("gram list overflows its slot"));
                    };
                    for (o, &lid) in out.iter_mut().zip(local) {
                        *o = map.get(lid as usize).copied().unwrap_or(u32::MAX);
                    }
                    out.sort_unstable();
                    at += len;
                }
                Ok(())
            })?;

        // Postings: rows ascending within each gram.
        let vocab_len = vocab.len();
        let mut cursor: Vec<u64> = post_offsets.get(..vocab_len).unwrap_or(&[]).to_vec();
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
        match self.doc_lens.get(d) {
            Some(&len) if len < u16::MAX => return u64::from(len),
            None => return 0,
            Some(_) => {}
        }
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
            + self.doc_lens.capacity() * 2
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
