//! The portable kernels of the counting search, without SIMD intrinsics: a tile's dense bitmaps
//! added to its counters (one at a time, or through the bit planes of `planes.rs`), and the
//! "count at least" masks. The SIMD kernels fall back on them.

use std::ops::AddAssign;

use crate::retrieval::dense::DenseGrams;
use crate::retrieval::planes::Planes;
use crate::retrieval::tiles::TILE_WORDS;

/// The arithmetic of a per-row counter that the portable kernels use (every `Counter` has it).
pub trait Tally: Copy + From<u8> + Into<u64> + AddAssign {}

impl<T: Copy + From<u8> + Into<u64> + AddAssign> Tally for T {}

/// Adds bit `i` of `word` to `counts[i]` (64 counters).
#[inline(always)]
pub fn add_word<T: Tally>(counts: &mut [T], word: u64) {
    for (i, c) in counts.iter_mut().take(64).enumerate() {
        *c += T::from(((word >> i) & 1) as u8);
    }
}

/// `Counter::at_least_mask`: bit `i` set when `chunk[i] >= at_least` (64 counters).
pub fn at_least_scalar<T: Tally>(chunk: &[T], at_least: u64) -> u64 {
    let mut mask = 0u64;
    for (i, &c) in chunk.iter().take(64).enumerate() {
        let count: u64 = c.into();
        mask |= u64::from(count >= at_least) << i;
    }
    mask
}

/// `Counter::add_dense` one bitmap at a time.
pub fn add_dense_portable<T: Tally>(
    block: &mut [T],
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
) {
    for &k in locals {
        let line = dense.tile_line(tile, k);
        for (lane, chunk) in block.chunks_mut(64).enumerate().take(TILE_WORDS) {
            if let Some(&word) = line.get(lane) {
                if word != 0 {
                    add_word(chunk, word);
                }
            }
        }
    }
}

/// `Counter::add_dense` through bit planes (`planes.rs`; the planes of a query's counts all fit
/// `T`).
pub fn add_dense_by_planes<T: Tally>(
    block: &mut [T],
    dense: &DenseGrams,
    tile: usize,
    locals: &[usize],
) {
    let mut planes = Planes::default();
    planes.fill(dense, tile, locals);
    let mut w = T::from(1);
    for (j, plane) in planes.lanes().iter().enumerate() {
        if j > 0 {
            w += w; // plane j weighs 2^j
        }
        for (chunk, &word) in block.chunks_mut(64).zip(plane.iter()) {
            let mut bits = word;
            while bits != 0 {
                if let Some(c) = chunk.get_mut(bits.trailing_zeros() as usize) {
                    *c += w;
                }
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_word_adds_each_bit_to_its_counter() {
        let mut c = vec![0u16; 64];
        add_word(&mut c, (1 << 0) | (1 << 5) | (1 << 63));
        add_word(&mut c, 1 << 5);
        assert_eq!(c[0], 1);
        assert_eq!(c[5], 2);
        assert_eq!(c[63], 1);
        assert_eq!(c.iter().map(|&x| u64::from(x)).sum::<u64>(), 4);
    }
}
