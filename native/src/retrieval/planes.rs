//! Adding many bitmaps of one tile at once. Carry-save adders keep the tile's running counts as
//! bit planes (plane `j` holds bit `j` of each of the 512 rows' counts), so a dense gram costs a
//! few 512-bit logic operations whatever its rows; the planes reach the counters once per tile.
//!
//! Sixteen bitmaps go through a Harley–Seal tree of carry-save adders (15 adders for 16
//! inputs, each two three-input logic operations); what carries out of the fourth plane ripples
//! into the higher planes.

use super::cache::prefetch;
use super::dense::DenseGrams;
use super::tiles::{Lanes, PLANES, TILE_WORDS, ZERO};

/// One tile's counts as bit planes.
#[derive(Debug, Clone)]
pub struct Planes {
    lanes: [Lanes; PLANES],
    /// Planes below this may be non-zero.
    used: usize,
}

impl Default for Planes {
    fn default() -> Self {
        Self {
            lanes: [ZERO; PLANES],
            used: 0,
        }
    }
}

/// Sum and carry of three bit vectors.
#[inline(always)]
fn csa(a: &Lanes, b: &Lanes, c: &Lanes) -> (Lanes, Lanes) {
    let mut sum = ZERO;
    let mut carry = ZERO;
    for w in 0..TILE_WORDS {
        let (a, b, c) = (a[w], b[w], c[w]);
        sum[w] = a ^ b ^ c;
        carry[w] = (a & b) | (c & (a ^ b));
    }
    (sum, carry)
}

/// Adds `b` to `a` in place; returns the carry.
#[inline(always)]
fn half(a: &mut Lanes, b: &Lanes) -> Lanes {
    let mut carry = ZERO;
    for w in 0..TILE_WORDS {
        carry[w] = a[w] & b[w];
        a[w] ^= b[w];
    }
    carry
}

/// Adds two bit vectors to `plane` in place; returns the carry into the next plane.
#[inline(always)]
fn add_two(plane: &mut Lanes, a: &Lanes, b: &Lanes) -> Lanes {
    let (sum, carry) = csa(plane, a, b);
    *plane = sum;
    carry
}

/// Adds four lines to planes 0 and 1 of `low`; returns the carry of weight 4.
#[inline(always)]
fn add_four(low: &mut [Lanes; 4], l: &[&Lanes]) -> Lanes {
    let a = add_two(&mut low[0], l[0], l[1]);
    let b = add_two(&mut low[0], l[2], l[3]);
    add_two(&mut low[1], &a, &b)
}

/// Adds eight lines to planes 0 to 2 of `low`; returns the carry of weight 8.
#[inline(always)]
fn add_eight(low: &mut [Lanes; 4], l: &[&Lanes]) -> Lanes {
    let a = add_four(low, &l[..4]);
    let b = add_four(low, &l[4..8]);
    add_two(&mut low[2], &a, &b)
}

/// Adds sixteen lines to planes 0 to 3 of `low` (15 carry-save adders); returns the carry of
/// weight 16.
#[inline(always)]
fn add_sixteen(low: &mut [Lanes; 4], l: &[&Lanes; 16]) -> Lanes {
    let a = add_eight(low, &l[..8]);
    let b = add_eight(low, &l[8..]);
    add_two(&mut low[3], &a, &b)
}

#[inline(always)]
fn is_zero(a: &Lanes) -> bool {
    a.iter().fold(0, |x, &y| x | y) == 0
}

impl Planes {
    /// The planes (plane `j` weighs `2^j`); only the first `used()` may be non-zero.
    pub fn lanes(&self) -> &[Lanes] {
        self.lanes.get(..self.used).unwrap_or(&self.lanes)
    }

    /// Adds `carry` at plane `from`, rippling upwards.
    #[inline(always)]
    fn add_at(&mut self, from: usize, mut carry: Lanes) {
        for (j, plane) in self.lanes.iter_mut().enumerate().skip(from) {
            if is_zero(&carry) {
                return;
            }
            carry = half(plane, &carry);
            self.used = self.used.max(j + 1);
        }
    }

    /// The counts of tile `tile` over the dense grams `locals` (fewer than 2^16 of them).
    #[inline(always)]
    pub fn fill(&mut self, dense: &DenseGrams, tile: usize, locals: &[usize]) {
        self.lanes = [ZERO; PLANES];
        self.used = 0;
        // Planes 0 to 3 stay in registers; what carries out of them ripples into the rest.
        let mut low = [ZERO; 4];
        // The lines 16 grams ahead (the next tile's first ones near the end) are fetched early.
        let ahead = |i: usize| match locals.get(i + 16) {
            Some(&k) => dense.tile_line(tile, k),
            None => dense.tile_line(
                tile + 1,
                locals.get(i + 16 - locals.len()).copied().unwrap_or(0),
            ),
        };
        let mut batches = locals.chunks_exact(16);
        for (n, b) in (&mut batches).enumerate() {
            let Ok(b) = <&[usize; 16]>::try_from(b) else {
                continue;
            };
            for i in 0..16 {
                prefetch(ahead(16 * n + i));
            }
            let lines = b.map(|k| dense.tile_line(tile, k));
            let sixteens = add_sixteen(&mut low, &lines);
            self.add_at(4, sixteens);
        }
        let done = locals.len() - batches.remainder().len();
        for (i, &k) in batches.remainder().iter().enumerate() {
            prefetch(ahead(done + i));
            let mut carry = *dense.tile_line(tile, k);
            for plane in low.iter_mut() {
                carry = half(plane, &carry);
            }
            self.add_at(4, carry);
        }
        let [p0, p1, p2, p3, ..] = &mut self.lanes;
        [*p0, *p1, *p2, *p3] = low;
        self.used = self.used.max(4);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count of row `r` from the planes.
    fn count(p: &Planes, r: usize) -> u64 {
        p.lanes()
            .iter()
            .enumerate()
            .map(|(j, l)| ((l[r / 64] >> (r % 64)) & 1) << j)
            .sum()
    }

    #[test]
    fn planes_hold_each_rows_count() {
        // 600 grams over one tile: gram k covers the rows r with (r * 7 + k) % (k % 13 + 1) == 0,
        // so counts differ by row and reach the higher planes.
        let grams = 600;
        let mut lists: Vec<Vec<u16>> = Vec::new();
        for k in 0..grams {
            lists.push(
                (0..512u16)
                    .filter(|&r| (usize::from(r) * 7 + k) % (k % 13 + 1) == 0)
                    .collect(),
            );
        }
        let refs: Vec<&[u16]> = lists.iter().map(Vec::as_slice).collect();
        let df = lists.iter().map(|l| l.len() as u32).collect();
        let dense = DenseGrams::from_blocks(512, 0, df, &[refs]).unwrap();
        for take in [0usize, 1, 15, 16, 17, 33, 600] {
            let locals: Vec<usize> = (0..take).map(|k| (k * 37) % grams).collect();
            let mut p = Planes::default();
            p.fill(&dense, 0, &locals);
            for r in 0..512 {
                let want = locals
                    .iter()
                    .filter(|&&k| (r * 7 + k) % (k % 13 + 1) == 0)
                    .count() as u64;
                assert_eq!(count(&p, r), want, "{take} grams, row {r}");
            }
        }
    }
}
