//! Adding many bitmaps of one tile at once. Carry-save adders keep the tile's running counts as
//! bit planes (plane `j` holds bit `j` of each of the 512 rows' counts), so a dense gram costs a
//! few 512-bit logic operations whatever its rows; the planes reach the counters once per tile.
//!
//! Sixteen bitmaps go through a Harley–Seal tree of carry-save adders (15 adders for 16
//! inputs, each two three-input logic operations); what carries out of the fourth plane ripples
//! into the higher planes.

use super::dense::{DenseGrams, Lanes, TILE_WORDS, ZERO};

/// Bit planes kept: counts up to 2^16 − 1 (the caller adds fewer bitmaps than that).
pub const PLANES: usize = 16;

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

/// Asks for the cache line of `line` ahead of its use (bitmap lines of one tile are scattered
/// over the tile's block, and a query's dense grams are read once per tile).
#[inline(always)]
fn prefetch(line: &Lanes) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86_64 CPU, and a prefetch never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = line;
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
        let (mut ones, mut twos, mut fours, mut eights) = (ZERO, ZERO, ZERO, ZERO);
        // The lines 16 grams ahead (the next tile's first ones near the end) are fetched early.
        let ahead = |i: usize| match locals.get(i + 16) {
            Some(&k) => dense.tile_line(tile, k),
            None => dense.tile_line(tile + 1, locals.get(i + 16 - locals.len()).copied().unwrap_or(0)),
        };
        let mut batches = locals.chunks_exact(16);
        for (n, b) in (&mut batches).enumerate() {
            let Ok(b) = <&[usize; 16]>::try_from(b) else {
                continue;
            };
            for i in 0..16 {
                prefetch(ahead(16 * n + i));
            }
            let l = |i: usize| dense.tile_line(tile, b[i]);
            let (o, ta) = csa(&ones, l(0), l(1));
            let (o, tb) = csa(&o, l(2), l(3));
            let (t, fa) = csa(&twos, &ta, &tb);
            let (o, ta) = csa(&o, l(4), l(5));
            let (o, tb) = csa(&o, l(6), l(7));
            let (t, fb) = csa(&t, &ta, &tb);
            let (f, ea) = csa(&fours, &fa, &fb);
            let (o, ta) = csa(&o, l(8), l(9));
            let (o, tb) = csa(&o, l(10), l(11));
            let (t, fa) = csa(&t, &ta, &tb);
            let (o, ta) = csa(&o, l(12), l(13));
            let (o, tb) = csa(&o, l(14), l(15));
            let (t, fb) = csa(&t, &ta, &tb);
            let (f, eb) = csa(&f, &fa, &fb);
            let (e, sixteens) = csa(&eights, &ea, &eb);
            (ones, twos, fours, eights) = (o, t, f, e);
            self.add_at(4, sixteens);
        }
        let done = locals.len() - batches.remainder().len();
        for (i, &k) in batches.remainder().iter().enumerate() {
            prefetch(ahead(done + i));
            let c = half(&mut ones, dense.tile_line(tile, k));
            let c = half(&mut twos, &c);
            let c = half(&mut fours, &c);
            let c = half(&mut eights, &c);
            self.add_at(4, c);
        }
        let [p0, p1, p2, p3, ..] = &mut self.lanes;
        (*p0, *p1, *p2, *p3) = (ones, twos, fours, eights);
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
