//! Dense grams and whole-side counting.
//!
//! A gram present in many rows is stored as a bitmap over the rows (one bit per row) instead of
//! a postings list, and each row keeps a bitset of its dense grams. With the threshold at 1/32 of
//! the rows a bitmap is never larger than the list it replaces, so the index does not grow; on
//! natural text most postings belong to a few hundred such grams.
//!
//! Bitmaps make it cheap to count, for one query, how many of its grams every row contains: the
//! counts are kept bit-sliced (plane `p` holds bit `p` of every row's count) and the query's
//! bitmaps are added with carry-save adders, 512 rows at a time. That is the exact search's
//! fallback when pruning cannot help (the best similarity is low, so nearly every row stays a
//! candidate); the counts are exact intersections, so nothing needs verifying afterwards.

use rayon::prelude::*;

use super::buf::{Buf, Plain};
use super::persist::{bad, Problem, SectionsIn, SectionsOut};

/// 64-bit words per tile.
pub const TILE_WORDS: usize = 8;
/// Rows per tile.
pub const TILE_ROWS: usize = TILE_WORDS * 64;
/// Most bit planes a count can need (counts stay below 2^15, see `search::MAX_COUNTED_GRAMS`).
pub const MAX_PLANES: usize = 16;

/// One tile's worth of bits: bit `b` of word `w` is row `64·w + b` of the tile.
pub type Lanes = [u64; TILE_WORDS];

/// No bits set.
pub const ZERO: Lanes = [0; TILE_WORDS];

/// One tile of one gram's bitmap, aligned to a cache line so a tile is read in one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Line(Lanes);

// SAFETY: a `Line` is eight `u64`s (64 bytes, alignment 64): no padding, any bit pattern.
unsafe impl Plain for Line {}

/// The dense grams of one side: ids `first..first + count` (the most frequent).
#[derive(Debug, Default)]
pub struct DenseGrams {
    first: u32,
    count: usize,
    rows: usize,
    /// Tile-major bitmaps: tile `t`, dense gram `k`: `cols[t·count + k]` (one cache line).
    cols: Buf<Line>,
    /// Words per row bitset.
    row_words: usize,
    /// Row `d`'s dense grams (bit `k` = gram `first + k`): `by_row[d·row_words..][..row_words]`.
    by_row: Buf<u64>,
    df: Buf<u32>,
}

/// Words of a bitset over `bits` bits.
pub fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

impl DenseGrams {
    /// Builds the bitmaps of `rows` rows from their dense-gram bitsets (`row_words` words each).
    pub fn from_rows(
        rows: usize,
        first: u32,
        df: Vec<u32>,
        by_row: Vec<u64>,
        row_words: usize,
    ) -> Self {
        let count = df.len();
        let tiles = rows.div_ceil(TILE_ROWS);
        let mut cols = vec![Line::default(); tiles * count];
        if count > 0 {
            cols.par_chunks_mut(count)
                .enumerate()
                .for_each(|(tile, block)| {
                    let lo = tile * TILE_ROWS;
                    for row in lo..(lo + TILE_ROWS).min(rows) {
                        let lane = (row - lo) / 64;
                        let bit = 1u64 << (row % 64);
                        let bits = by_row
                            .get(row * row_words..(row + 1) * row_words)
                            .unwrap_or(&[]);
                        for (wi, &word) in bits.iter().enumerate() {
                            let mut w = word;
                            while w != 0 {
                                let k = wi * 64 + w.trailing_zeros() as usize;
                                w &= w - 1;
                                if let Some(x) = block.get_mut(k).and_then(|l| l.0.get_mut(lane)) {
                                    *x |= bit;
                                }
                            }
                        }
                    }
                });
        }
        Self {
            first,
            count,
            rows,
            cols: cols.into(),
            row_words,
            by_row: by_row.into(),
            df: df.into(),
        }
    }

    /// The arrays to store (see `persist.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, p: &str) {
        let shape = [self.first as usize, self.count, self.rows, self.row_words];
        out.put_u64s(format!("{p}.shape"), &shape.map(|n| n as u64));
        out.put(format!("{p}.cols"), &self.cols);
        out.put(format!("{p}.by_row"), &self.by_row);
        out.put(format!("{p}.df"), &self.df);
    }

    /// The dense grams from stored arrays.
    pub fn from_sections(sections: &SectionsIn, p: &str) -> Result<Self, Problem> {
        let [first, count, rows, row_words] = sections.u64s(&format!("{p}.shape"))?;
        let dense = Self {
            first: u32::try_from(first).map_err(|_| bad(format!("{p}: first dense id")))?,
            count: count as usize,
            rows: rows as usize,
            cols: sections.take(&format!("{p}.cols"))?,
            row_words: row_words as usize,
            by_row: sections.take(&format!("{p}.by_row"))?,
            df: sections.take(&format!("{p}.df"))?,
        };
        let shaped = dense.row_words == words_for(dense.count)
            && dense.df.len() == dense.count
            && Some(dense.cols.len()) == dense.tiles().checked_mul(dense.count)
            && Some(dense.by_row.len()) == dense.rows.checked_mul(dense.row_words);
        if !shaped {
            return Err(bad(format!("{p}: arrays of inconsistent lengths")));
        }
        Ok(dense)
    }

    /// First dense gram id (every id at or above it is dense).
    #[inline]
    pub fn first(&self) -> u32 {
        self.first
    }

    /// Number of dense grams.
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    /// Number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of tiles.
    #[inline]
    pub fn tiles(&self) -> usize {
        self.rows.div_ceil(TILE_ROWS)
    }

    /// Whether gram `g` is dense.
    #[inline]
    pub fn is_dense(&self, g: u32) -> bool {
        g >= self.first
    }

    /// Document frequency of dense gram `g`.
    #[inline]
    pub fn df(&self, g: u32) -> u64 {
        self.df
            .get(g.wrapping_sub(self.first) as usize)
            .map_or(0, |&d| u64::from(d))
    }

    /// Whether row `d` contains dense gram `g`.
    #[inline]
    pub fn contains(&self, g: u32, d: u32) -> bool {
        let (k, d) = (g.wrapping_sub(self.first) as usize, d as usize);
        let line = self.cols.get((d / TILE_ROWS) * self.count + k);
        line.and_then(|l| l.0.get((d % TILE_ROWS) / 64))
            .is_some_and(|w| (w >> (d % 64)) & 1 == 1)
    }

    /// Row `d`'s dense-gram bitset.
    #[inline]
    pub fn row(&self, d: u32) -> &[u64] {
        let d = d as usize;
        self.by_row
            .get(d * self.row_words..(d + 1) * self.row_words)
            .unwrap_or(&[])
    }

    /// Calls `f` with each row containing dense gram `g`, ascending.
    pub fn for_each_row(&self, g: u32, mut f: impl FnMut(u32)) {
        let k = g.wrapping_sub(self.first) as usize;
        if k >= self.count {
            return;
        }
        for tile in 0..self.tiles() {
            let Some(line) = self.cols.get(tile * self.count + k) else {
                return;
            };
            for (lane, &word) in line.0.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    f((tile * TILE_ROWS + lane * 64) as u32 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
        }
    }

    #[inline]
    fn tile_col(&self, tile: usize, k: usize) -> Lanes {
        self.cols.get(tile * self.count + k).map_or(ZERO, |l| l.0)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.cols.heap_bytes() + self.by_row.heap_bytes() + self.df.heap_bytes()
    }
}

/// Number of set bits of `a & b`.
#[inline]
pub fn and_count(a: &[u64], b: &[u64]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| u64::from((x & y).count_ones()))
        .sum()
}

/// Per-row counts of one query's grams over every row of a side, bit-sliced per tile.
#[derive(Debug, Default)]
pub struct Counts {
    /// Tile `t`, plane `p`: `planes[(t·depth + p)·TILE_WORDS..][..TILE_WORDS]`.
    planes: Vec<u64>,
    /// Highest count in each tile.
    tile_max: Vec<u32>,
    depth: usize,
    /// The first row with the highest count, and that count.
    pub top: Option<(u32, u64)>,
    /// Whether the counts are those of the current query (see `invalidate`).
    valid: bool,
}

#[inline(always)]
fn csa(a: Lanes, b: Lanes, c: Lanes) -> (Lanes, Lanes) {
    let (mut sum, mut carry) = (ZERO, ZERO);
    for i in 0..TILE_WORDS {
        let u = a[i] ^ b[i];
        sum[i] = u ^ c[i];
        carry[i] = (a[i] & b[i]) | (u & c[i]);
    }
    (sum, carry)
}

/// Adds `x` (weight 2^`from`) to the planes `from..depth`.
#[inline(always)]
fn ripple(acc: &mut [Lanes; MAX_PLANES], mut x: Lanes, from: usize, depth: usize) {
    for plane in acc.iter_mut().take(depth).skip(from) {
        let mut any = 0u64;
        for i in 0..TILE_WORDS {
            let carry = plane[i] & x[i];
            plane[i] ^= x[i];
            x[i] = carry;
            any |= carry;
        }
        if any == 0 {
            return;
        }
    }
}

/// Adds the dense grams `locals` (indices among the dense grams) of one tile to `acc`.
#[inline(always)]
fn add_tile(
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
    acc: &mut [Lanes; MAX_PLANES],
    depth: usize,
) {
    let mut chunks = locals.chunks_exact(16);
    let col = |k: &usize| dense.tile_col(tile, *k);
    for chunk in &mut chunks {
        let i = |n: usize| chunk.get(n).map_or(ZERO, col);
        let [ones, twos, fours, eights] = [acc[0], acc[1], acc[2], acc[3]];
        let (o, ta) = csa(ones, i(0), i(1));
        let (o, tb) = csa(o, i(2), i(3));
        let (t, fa) = csa(twos, ta, tb);
        let (o, ta) = csa(o, i(4), i(5));
        let (o, tb) = csa(o, i(6), i(7));
        let (t, fb) = csa(t, ta, tb);
        let (f, ea) = csa(fours, fa, fb);
        let (o, ta) = csa(o, i(8), i(9));
        let (o, tb) = csa(o, i(10), i(11));
        let (t, fa) = csa(t, ta, tb);
        let (o, ta) = csa(o, i(12), i(13));
        let (o, tb) = csa(o, i(14), i(15));
        let (t, fb) = csa(t, ta, tb);
        let (f, eb) = csa(f, fa, fb);
        let (e, sixteens) = csa(eights, ea, eb);
        [acc[0], acc[1], acc[2], acc[3]] = [o, t, f, e];
        ripple(acc, sixteens, 4, depth);
    }
    for k in chunks.remainder() {
        ripple(acc, col(k), 0, depth);
    }
}

/// Counts every tile; returns nothing, fills `counts`.
#[inline(always)]
fn count_tiles_body(dense: &DenseGrams, locals: &[usize], counts: &mut Counts) {
    let depth = counts.depth;
    for tile in 0..counts.tile_max.len() {
        let base = tile * depth * TILE_WORDS;
        let mut acc = [ZERO; MAX_PLANES];
        for (p, plane) in acc.iter_mut().enumerate().take(depth) {
            if let Some(s) = counts
                .planes
                .get(base + p * TILE_WORDS..base + (p + 1) * TILE_WORDS)
            {
                plane.copy_from_slice(s);
            }
        }
        add_tile(dense, tile, locals, &mut acc, depth);
        // Highest count of the tile, top plane down.
        let mut alive = [u64::MAX; TILE_WORDS];
        let mut max = 0u32;
        for p in (0..depth).rev() {
            let mut any = 0;
            for i in 0..TILE_WORDS {
                any |= acc[p][i] & alive[i];
            }
            if any != 0 {
                for i in 0..TILE_WORDS {
                    alive[i] &= acc[p][i];
                }
                max |= 1 << p;
            }
        }
        if let Some(m) = counts.tile_max.get_mut(tile) {
            *m = max;
        }
        if max > 0 && counts.top.is_none_or(|(_, c)| u64::from(max) > c) {
            let lane = alive.iter().position(|&w| w != 0).unwrap_or(0);
            let bit = alive.get(lane).map_or(0, |w| w.trailing_zeros());
            counts.top = Some(((tile * TILE_ROWS + lane * 64) as u32 + bit, u64::from(max)));
        }
        for (p, plane) in acc.iter().enumerate().take(depth) {
            if let Some(s) = counts
                .planes
                .get_mut(base + p * TILE_WORDS..base + (p + 1) * TILE_WORDS)
            {
                s.copy_from_slice(plane);
            }
        }
    }
}

/// `count_tiles_body` compiled for AVX2 (the carry-save adders on eight words vectorise).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn count_tiles_avx2(dense: &DenseGrams, locals: &[usize], counts: &mut Counts) {
    count_tiles_body(dense, locals, counts);
}

fn count_tiles(dense: &DenseGrams, locals: &[usize], counts: &mut Counts) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { count_tiles_avx2(dense, locals, counts) };
        return;
    }
    count_tiles_body(dense, locals, counts);
}

impl Counts {
    /// Counts, for every row, how many of the grams are in it: the rows of each sparse gram's
    /// postings list, plus the dense grams `dense_ids`. `total` bounds every count.
    pub fn compute<'a>(
        &mut self,
        dense: &DenseGrams,
        sparse: impl Iterator<Item = &'a [u32]>,
        dense_ids: &[u32],
        total: usize,
        locals: &mut Vec<usize>,
    ) {
        let depth = (usize::BITS - total.max(1).leading_zeros()) as usize;
        self.depth = depth.min(MAX_PLANES);
        let tiles = dense.tiles();
        self.planes.clear();
        self.planes.resize(tiles * self.depth * TILE_WORDS, 0);
        self.tile_max.clear();
        self.tile_max.resize(tiles, 0);
        self.top = None;
        self.valid = true;
        for postings in sparse {
            for &d in postings {
                self.increment(d);
            }
        }
        locals.clear();
        locals.extend(
            dense_ids
                .iter()
                .map(|&g| g.wrapping_sub(dense.first()) as usize),
        );
        count_tiles(dense, locals, self);
    }

    #[inline]
    fn increment(&mut self, d: u32) {
        let d = d as usize;
        let (tile, lane, bit) = (d / TILE_ROWS, (d % TILE_ROWS) / 64, 1u64 << (d % 64));
        for p in 0..self.depth {
            let Some(w) = self
                .planes
                .get_mut((tile * self.depth + p) * TILE_WORDS + lane)
            else {
                return;
            };
            let had = *w & bit;
            *w ^= bit;
            if had == 0 {
                return;
            }
        }
    }

    /// Whether these are the counts of the current query.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Marks the counts as stale (kept as a buffer for the next query).
    pub fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Number of tiles.
    pub fn tiles(&self) -> usize {
        self.tile_max.len()
    }

    /// Highest count in tile `tile`.
    #[inline]
    pub fn tile_max(&self, tile: usize) -> u64 {
        self.tile_max.get(tile).map_or(0, |&m| u64::from(m))
    }

    /// The count of row `d`.
    #[inline]
    pub fn count(&self, d: u32) -> u64 {
        let d = d as usize;
        let (tile, lane, bit) = (d / TILE_ROWS, (d % TILE_ROWS) / 64, d % 64);
        (0..self.depth)
            .map(|p| {
                self.planes
                    .get((tile * self.depth + p) * TILE_WORDS + lane)
                    .map_or(0, |w| ((w >> bit) & 1) << p)
            })
            .sum()
    }

    /// Rows of tile `tile` whose count is at least `at_least`, as a bitmask per word.
    pub fn at_least(&self, tile: usize, at_least: u64) -> Lanes {
        if at_least >= 1 << self.depth {
            return ZERO;
        }
        let base = tile * self.depth * TILE_WORDS;
        let (mut greater, mut equal) = (ZERO, [u64::MAX; TILE_WORDS]);
        for p in (0..self.depth).rev() {
            let Some(plane) = self
                .planes
                .get(base + p * TILE_WORDS..base + (p + 1) * TILE_WORDS)
            else {
                return ZERO;
            };
            if (at_least >> p) & 1 == 1 {
                for i in 0..TILE_WORDS {
                    equal[i] &= plane[i];
                }
            } else {
                for i in 0..TILE_WORDS {
                    greater[i] |= equal[i] & plane[i];
                }
            }
        }
        let mut out = ZERO;
        for i in 0..TILE_WORDS {
            out[i] = greater[i] | equal[i];
        }
        out
    }
}

/// Calls `f` with each row whose bit is set in `mask` (tile `tile`), ascending; stops when `f`
/// returns false.
#[inline]
pub fn for_each_masked(tile: usize, mask: &Lanes, mut f: impl FnMut(u32) -> bool) {
    for (lane, &word) in mask.iter().enumerate() {
        let mut w = word;
        while w != 0 {
            if !f((tile * TILE_ROWS + lane * 64) as u32 + w.trailing_zeros()) {
                return;
            }
            w &= w - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams_of(rows: &[Vec<usize>], count: usize) -> DenseGrams {
        let row_words = words_for(count);
        let mut by_row = vec![0u64; rows.len() * row_words];
        let mut df = vec![0u32; count];
        for (d, gs) in rows.iter().enumerate() {
            for &k in gs {
                by_row[d * row_words + k / 64] |= 1 << (k % 64);
                df[k] += 1;
            }
        }
        DenseGrams::from_rows(rows.len(), 10, df, by_row, row_words)
    }

    #[test]
    fn bit_sliced_counts_equal_plain_counts() {
        // 1300 rows (three tiles, the last partial), 40 dense grams, a pseudo-random pattern.
        let count = 40;
        let rows: Vec<Vec<usize>> = (0..1300usize)
            .map(|d| {
                (0..count)
                    .filter(|k| (d * 7 + k * 13 + d * k) % 5 < 2)
                    .collect()
            })
            .collect();
        let dense = grams_of(&rows, count);
        let query: Vec<u32> = (0..count as u32)
            .filter(|k| k % 3 != 1)
            .map(|k| k + 10)
            .collect();
        let sparse: Vec<u32> = vec![0, 5, 700, 1299];
        let mut counts = Counts::default();
        counts.compute(
            &dense,
            [sparse.as_slice(), &sparse[1..3]].into_iter(),
            &query,
            query.len() + 2,
            &mut Vec::new(),
        );
        let mut top = (0u32, 0u64);
        for (d, gs) in rows.iter().enumerate() {
            let want = gs
                .iter()
                .filter(|&&k| query.contains(&(k as u32 + 10)))
                .count() as u64
                + sparse.iter().filter(|&&s| s == d as u32).count() as u64
                + sparse[1..3].iter().filter(|&&s| s == d as u32).count() as u64;
            assert_eq!(counts.count(d as u32), want, "row {d}");
            if want > top.1 {
                top = (d as u32, want);
            }
            for k in [0usize, 10, 39] {
                assert_eq!(dense.contains(k as u32 + 10, d as u32), gs.contains(&k));
            }
            for t in [1u64, want, want + 1] {
                let mask = counts.at_least(d / TILE_ROWS, t);
                let bit = (mask[(d % TILE_ROWS) / 64] >> (d % 64)) & 1;
                assert_eq!(bit == 1, want >= t, "row {d} at least {t}");
            }
        }
        assert_eq!(counts.top, Some(top));
        let mut seen = Vec::new();
        dense.for_each_row(13, |d| seen.push(d as usize));
        let want: Vec<usize> = (0..rows.len()).filter(|&d| rows[d].contains(&3)).collect();
        assert_eq!(seen, want);
    }
}
