//! Dense grams: a gram present in many rows is stored as a bitmap over the rows (one bit per
//! row) instead of a postings list.
//!
//! The bitmaps are tile-major: for each tile of 512 rows, the tile's bits of every dense gram,
//! one cache line per gram. Counting a query's dense grams for every row (`counting.rs`) adds
//! one line per gram and tile to the tile's 512 counters, 32 rows per instruction. With the
//! threshold at 1/64 of the rows a bitmap costs at most twice the list it replaces, and adding
//! it costs about as much as adding that list one row at a time.

use rayon::prelude::*;

use super::error::{internal, Result};

/// 64-bit words per tile.
pub const TILE_WORDS: usize = 8;
/// Rows per tile.
pub const TILE_ROWS: usize = TILE_WORDS * 64;

/// One tile's worth of bits: bit `b` of word `w` is row `64·w + b` of the tile.
pub type Lanes = [u64; TILE_WORDS];

/// No bits set.
pub const ZERO: Lanes = [0; TILE_WORDS];

/// One tile of one gram's bitmap, aligned to a cache line so a tile is read in one line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
pub struct Line(pub Lanes);

/// The dense grams of one side: ids `first..first + count` (the most frequent).
#[derive(Debug, Default)]
pub struct DenseGrams {
    first: u32,
    count: usize,
    rows: usize,
    /// Tile-major bitmaps: tile `t`, dense gram `k`: `cols[t·count + k]` (one cache line).
    cols: Vec<Line>,
    df: Vec<u32>,
}

impl DenseGrams {
    /// Builds the bitmaps of `rows` rows from consecutive blocks of rows, each a whole number of
    /// tiles (but the last): per block, each row's gram count and the rows' global gram ids one
    /// row after the other. Ids at or above `first` are the dense ones.
    pub fn from_blocks(
        rows: usize,
        first: u32,
        df: Vec<u32>,
        blocks: &[(&[u32], &[u32])],
    ) -> Result<Self> {
        let count = df.len();
        let tiles = rows.div_ceil(TILE_ROWS);
        let mut cols = vec![Line::default(); tiles * count];
        if count > 0 {
            // Each block's tiles are its own slice of `cols`.
            let mut parts = Vec::with_capacity(blocks.len());
            let mut rest = cols.as_mut_slice();
            for &(lens, ids) in blocks {
                let block_tiles = lens.len().div_ceil(TILE_ROWS);
                let (part, tail) = rest
                    .split_at_mut_checked((block_tiles * count).min(rest.len()))
                    .ok_or_else(|| internal("dense bitmaps out of range"))?;
                parts.push((part, lens, ids));
                rest = tail;
            }
            parts.into_par_iter().for_each(|(part, lens, ids)| {
                let mut at = 0usize;
                for (row, &len) in lens.iter().enumerate() {
                    let (tile, lane, bit) = (row / TILE_ROWS, (row % TILE_ROWS) / 64, row % 64);
                    for &g in ids.get(at..at + len as usize).unwrap_or(&[]) {
                        if g < first {
                            continue;
                        }
                        let k = (g - first) as usize;
                        if let Some(word) = part
                            .get_mut(tile * count + k)
                            .and_then(|l| l.0.get_mut(lane))
                        {
                            *word |= 1 << bit;
                        }
                    }
                    at += len as usize;
                }
            });
        }
        Ok(Self {
            first,
            count,
            rows,
            cols,
            df,
        })
    }

    /// First dense gram id (every id at or above it is dense).
    #[inline]
    pub fn first(&self) -> u32 {
        self.first
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

    /// Calls `f` with each row containing dense gram `g`, ascending.
    pub fn for_each_row(&self, g: u32, mut f: impl FnMut(u32)) {
        let k = g.wrapping_sub(self.first) as usize;
        if k >= self.count {
            return;
        }
        for tile in 0..self.tiles() {
            for (lane, &word) in self.tile_line(tile, k).iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    f((tile * TILE_ROWS + lane * 64) as u32 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
        }
    }

    /// The bitmap of dense gram number `k` (among the dense grams) over tile `tile`'s rows
    /// (all zero out of range).
    #[inline]
    pub fn tile_line(&self, tile: usize, k: usize) -> &Lanes {
        self.cols.get(tile * self.count + k).map_or(&ZERO, |l| &l.0)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.cols.capacity() * std::mem::size_of::<Line>() + self.df.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps_hold_each_rows_dense_grams() {
        // 1300 rows in two blocks (a whole tile, then the rest), ids 10.. dense.
        let first = 10u32;
        let count = 40usize;
        let rows: Vec<Vec<u32>> = (0..1300usize)
            .map(|d| {
                (0..count + 10)
                    .filter(|k| (d * 7 + k * 13 + d * k) % 5 < 2)
                    .map(|k| k as u32)
                    .collect()
            })
            .collect();
        let mut df = vec![0u32; count];
        for gs in &rows {
            for &g in gs.iter().filter(|&&g| g >= first) {
                df[(g - first) as usize] += 1;
            }
        }
        let flat = |range: std::ops::Range<usize>| {
            let lens: Vec<u32> = rows[range.clone()].iter().map(|g| g.len() as u32).collect();
            let ids: Vec<u32> = rows[range].iter().flatten().copied().collect();
            (lens, ids)
        };
        let (a, b) = (flat(0..TILE_ROWS), flat(TILE_ROWS..rows.len()));
        let dense =
            DenseGrams::from_blocks(rows.len(), first, df.clone(), &[(&a.0, &a.1), (&b.0, &b.1)])
                .unwrap();
        for g in first..first + count as u32 {
            let mut seen = Vec::new();
            dense.for_each_row(g, |d| seen.push(d as usize));
            let want: Vec<usize> = (0..rows.len()).filter(|&d| rows[d].contains(&g)).collect();
            assert_eq!(seen, want, "gram {g}");
            assert_eq!(dense.df(g), want.len() as u64);
        }
        assert_eq!(dense.tile_line(99, 0), &ZERO);
    }
}
