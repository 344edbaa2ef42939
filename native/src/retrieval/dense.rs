//! Dense grams: a gram present in many rows is stored as a bitmap over the rows (one bit per
//! row) instead of a postings list.
//!
//! The bitmaps are gram-major: each dense gram's bitmap is one run of cache lines, one line per
//! tile of 512 rows (`tiles.rs`). Counting a query's dense grams for every row (`counting.rs`)
//! sums one line per gram and tile into bit planes (`kernels/`) and adds the planes to the
//! tile's 512 counters; tile after tile, each gram's lines are read in order, so the line a gram
//! needs next is the one after the line it reads now, and is fetched then (tile-major lines, a
//! tile's lines side by side, were 7–9% slower on the real corpus). With the threshold at 1/64
//! of the rows a bitmap costs at most four times the list it replaces, and summing it costs far
//! less than adding that list one row at a time.

use rayon::prelude::*;

use super::buf::Buf;
use super::error::{internal, Result};
use super::sections::{bad, Problem, SectionsIn, SectionsOut};
use super::tiles::{Lanes, Line, BLOCK_ROWS, TILE_ROWS, ZERO};

/// The dense grams of one side: ids `first..first + count` (the most frequent).
#[derive(Debug, Default)]
pub struct DenseGrams {
    first: u32,
    count: usize,
    rows: usize,
    /// Dense gram `k`, tile `t`: `bitmaps[k·tiles + t]` (one cache line).
    bitmaps: Buf<Line>,
    df: Buf<u32>,
}

impl DenseGrams {
    /// Builds the bitmaps of `rows` rows from the postings of each block of `BLOCK_ROWS` rows:
    /// `blocks[b][k]` holds the rows (offsets in block `b`) of dense gram `first + k`.
    pub fn from_blocks(
        rows: usize,
        first: u32,
        df: Vec<u32>,
        blocks: &[Vec<&[u16]>],
    ) -> Result<Self> {
        let count = df.len();
        let tiles = rows.div_ceil(TILE_ROWS);
        let mut bitmaps = vec![Line::default(); tiles * count];
        if count > 0 {
            if blocks.len() != tiles.div_ceil(BLOCK_ROWS / TILE_ROWS) {
                return Err(internal("dense bitmaps and postings blocks disagree"));
            }
            // Each gram's bitmap is its own slice of `bitmaps`.
            let each = bitmaps.par_chunks_mut(tiles).enumerate();
            each.for_each(|(k, bitmap)| {
                for (b, grams) in blocks.iter().enumerate() {
                    for &low in grams.get(k).copied().unwrap_or_default() {
                        let row = b * BLOCK_ROWS + usize::from(low);
                        let (tile, lane) = (row / TILE_ROWS, (row % TILE_ROWS) / 64);
                        if let Some(word) = bitmap.get_mut(tile).and_then(|l| l.0.get_mut(lane)) {
                            *word |= 1 << (row % 64);
                        }
                    }
                }
            });
        }
        Ok(Self {
            first,
            count,
            rows,
            bitmaps: bitmaps.into(),
            df: df.into(),
        })
    }

    /// The arrays to store (see `sections.rs`).
    pub fn to_sections<'a>(&'a self, out: &mut SectionsOut<'a>, p: &str) {
        let shape = [u64::from(self.first), self.count as u64, self.rows as u64];
        out.put_u64s(format!("{p}.shape"), &shape);
        out.put(format!("{p}.bitmaps"), &self.bitmaps);
        out.put(format!("{p}.df"), &self.df);
    }

    /// The dense grams from stored arrays.
    pub fn from_sections(sections: &SectionsIn, p: &str) -> std::result::Result<Self, Problem> {
        let [first, count, rows] = sections.u64s(&format!("{p}.shape"))?;
        let dense = Self {
            first: u32::try_from(first).map_err(|_| bad(format!("{p}: first dense id")))?,
            count: usize::try_from(count).map_err(|_| bad(format!("{p}: dense grams")))?,
            rows: usize::try_from(rows).map_err(|_| bad(format!("{p}: rows")))?,
            bitmaps: sections.take(&format!("{p}.bitmaps"))?,
            df: sections.take(&format!("{p}.df"))?,
        };
        let shaped = dense.df.len() == dense.count
            && Some(dense.bitmaps.len()) == dense.tiles().checked_mul(dense.count);
        if !shaped {
            return Err(bad(format!("{p}: arrays of inconsistent lengths")));
        }
        Ok(dense)
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
        for (tile, line) in self.bitmap(k).iter().enumerate() {
            for (lane, &word) in line.0.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    f((tile * TILE_ROWS + lane * 64) as u32 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
        }
    }

    /// The bitmap of dense gram number `k` (among the dense grams), one line per tile (empty
    /// out of range).
    #[inline]
    pub fn bitmap(&self, k: usize) -> &[Line] {
        let tiles = self.tiles();
        if k >= self.count {
            return &[];
        }
        self.bitmaps.get(k * tiles..(k + 1) * tiles).unwrap_or(&[])
    }

    /// The bitmap of dense gram number `k` over tile `tile`'s rows (all zero out of range).
    #[inline]
    pub fn tile_line(&self, tile: usize, k: usize) -> &Lanes {
        self.line(tile, k).map_or(&ZERO, |l| &l.0)
    }

    /// The line of dense gram number `k` for tile `tile` (`None` out of range).
    #[inline]
    pub fn line(&self, tile: usize, k: usize) -> Option<&Line> {
        self.bitmap(k).get(tile)
    }

    /// Line `at` of all bitmaps, gram after gram: gram `k`'s line for tile `t` is line
    /// `k · tiles() + t` (`None` past the last gram). One bounds check, for the hot loop.
    #[inline]
    pub fn line_at(&self, at: usize) -> Option<&Line> {
        self.bitmaps.get(at)
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.bitmaps.heap_bytes() + self.df.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps_hold_each_rows_dense_grams() {
        // 70,000 rows: two postings blocks, the second partial; 3 dense grams.
        let rows = 70_000usize;
        let has = |d: usize, k: usize| (d * 7 + k * 13 + d * k) % 5 < 2;
        let lists: Vec<Vec<Vec<u16>>> = (0..2)
            .map(|b| {
                (0..3)
                    .map(|k| {
                        (b * BLOCK_ROWS..((b + 1) * BLOCK_ROWS).min(rows))
                            .filter(|&d| has(d, k))
                            .map(|d| (d - b * BLOCK_ROWS) as u16)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let blocks: Vec<Vec<&[u16]>> = lists
            .iter()
            .map(|b| b.iter().map(Vec::as_slice).collect())
            .collect();
        let df = (0..3)
            .map(|k| (0..rows).filter(|&d| has(d, k)).count() as u32)
            .collect();
        let dense = DenseGrams::from_blocks(rows, 10, df, &blocks).unwrap();
        for k in 0..3u32 {
            let mut seen = Vec::new();
            dense.for_each_row(10 + k, |d| seen.push(d as usize));
            let want: Vec<usize> = (0..rows).filter(|&d| has(d, k as usize)).collect();
            assert_eq!(seen, want, "gram {k}");
            assert_eq!(dense.df(10 + k), want.len() as u64);
        }
        assert_eq!(dense.tile_line(999, 0), &ZERO);
    }
}
